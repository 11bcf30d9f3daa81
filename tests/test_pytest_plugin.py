"""The pytest plugin, driven with pytester: one item per claim and point, witnesses on failure,
verdicts in the verbose lines and a summary section, options validated as in the CLI."""
import textwrap

import pytest

from .test_cli import BAD_OPTIONS

SPEC = textwrap.dedent("""
    from sympy import Rational
    import dpverify as dp
    eps = dp.symbol("eps", positive=True)

    def rr(data, eps):
        return dp.randomized_response(data[0], eps)

    good = dp.spec(rr, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                   grid={eps: [Rational(1, 2), 1]}, claims=[dp.private(eps)])
    bad = dp.spec(rr, name="halved", universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                  grid={eps: [1]}, claims=[dp.private(eps / 2)])
""")


def test_claims_become_items_and_refutations_show_witnesses(pytester) -> None:
    pytester.mkdir("spec")
    pytester.path.joinpath("spec", "rr.py").write_text(SPEC)
    result = pytester.runpytest("spec", "-v")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*rr::private?eps_1/2? PROVED*",
        "*halved::private?eps_1? FAILED*",
        "*refuted: halved:private*",
        "*P(output|X)  = 0.7310585786300048792511592418218362743651*",
        "*claimed epsilon 0.5000000000000000000000000000000000000000, achieved epsilon 1.000000000000000000000000000000000000000*",
        "*replay: dpverify check spec/rr.py --spec halved --claim private --point eps=1*",
    ])
    assert "Traceback" not in result.stdout.str()


def test_a_broken_spec_file_fails_with_its_location(pytester) -> None:
    pytester.mkdir("spec")
    pytester.path.joinpath("spec", "broken.py").write_text("import dpverify as dp\nx = dp.universe([], n=1, neighbours=dp.REPLACE_ONE)\n")
    result = pytester.runpytest("spec")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*spec/broken.py:2: the universe has no records*"])


def test_files_outside_spec_directories_are_collected_only_when_named(pytester) -> None:
    pytester.path.joinpath("rr.py").write_text(SPEC)
    # a bare `pytest` in a directory that is not a spec directory: its spec file is not checked, and the
    # run says so (given on the command line, the directory is collected: tests/test_pytest_conventions.py)
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()
    result.stdout.fnmatch_lines(["*rr.py declares dpverify specs, but its folder is not a spec folder*",
                                 "*fix: name the folder on the command line (`pytest .`, or in testpaths), "
                                 "run `pytest --dpverify-dir*"])
    pytester.runpytest("rr.py").assert_outcomes(passed=2, failed=1)


def test_expected_refutations_xfail_and_unexpected_holds_fail_as_strict_xpasses(pytester) -> None:
    pytester.mkdir("spec")
    body = SPEC.replace("claims=[dp.private(eps / 2)]", "claims=[dp.private(eps / 2, expect='refuted')]")
    body = body.replace("claims=[dp.private(eps)]", "claims=[dp.private(eps, expect='refuted')]")
    pytester.path.joinpath("spec", "rr.py").write_text(body)
    result = pytester.runpytest("spec", "-rxf")
    result.assert_outcomes(xfailed=1, failed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*[[]XPASS(strict)[]] expected refuted, got proved [[]*every*[]]*",  # with its scope
                                 "XFAIL spec/rr.py::halved::private[[]eps_1[]] - refuted as expected: X=(0,) and X'=(1,)*",
                                 "FAILED spec/rr.py::rr::private[[]eps_1/2[]] - [[]XPASS(strict)[]]*"])


def test_a_density_witness_is_labelled_a_density(pytester) -> None:
    """A released Laplace value's witness holds densities, not probabilities: the failure says so."""
    pytester.mkdir("spec")
    pytester.path.joinpath("spec", "lap.py").write_text(textwrap.dedent("""
        from sympy import Rational
        import dpverify as dp
        eps = dp.symbol("eps", positive=True)

        def lap(data, eps):
            return dp.laplace(data[0], 1 / eps)

        halved = dp.spec(lap, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                         grid={eps: [1]}, claims=[dp.private(eps / 2)])
    """))
    result = pytester.runpytest("spec")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*density at the output under X  = *"])
    assert "P(output|X)" not in result.stdout.str()


BOTH = textwrap.dedent("""
    import dpverify as dp
    eps = dp.symbol("eps", positive=True)
    BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)

    def rr(data, eps):
        return dp.randomized_response(data[0], eps)

    def branchy(data, eps):  # control flow on eps: no proof for every eps, a grid verdict
        return dp.randomized_response(data[0], eps if eps < 5 else eps / 2)

    proved = dp.spec(rr, universe=BIT, grid={eps: [1, 2]}, claims=[dp.private(eps)])
    verified = dp.spec(branchy, universe=BIT, grid={eps: [1]}, claims=[dp.private(eps)])
    refuted = dp.spec(rr, name="halved", universe=BIT, grid={eps: [1]},
                       claims=[dp.private(eps / 2, expect="refuted")])
""")


def test_the_verdicts_are_shown_not_just_passed(pytester) -> None:
    """proved and verified both pass; -v names which, and the summary section lists each claim."""
    pytester.mkdir("spec")
    pytester.path.joinpath("spec", "both.py").write_text(BOTH)
    result = pytester.runpytest("spec", "-v")
    result.assert_outcomes(passed=3, xfailed=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([
        "*both.py::rr::private?eps_1? PROVED [[]*every ε[]]*",  # with its scope
        "*both.py::branchy::private?eps_1? VERIFIED [[]*grid[]]*",
        "*both.py::halved::private?eps_1? XFAIL*",
        "*= dpverify verdicts =*",
        "4 claim points: 2 proved, 1 verified, 1 refuted",
        "proved [[]*every ε[]] *spec/both.py::rr::private (2 points)",
        "verified [[]*grid[]] *spec/both.py::branchy::private[[]eps_1[]]",
        "refuted (as expected) *spec/both.py::halved::private[[]eps_1[]]",
    ])
    assert "PASSED" not in result.stdout.str()
    quiet = pytester.runpytest("spec", "-q")
    quiet.stdout.fnmatch_lines(["4 claim points: 2 proved, 1 verified, 1 refuted"])
    assert "spec/both.py::rr::private" not in quiet.stdout.str()  # -q: the counts only


def test_a_failing_claim_keeps_the_failed_word_and_is_listed_with_its_verdict(pytester) -> None:
    pytester.mkdir("spec")
    pytester.path.joinpath("spec", "rr.py").write_text(SPEC)
    result = pytester.runpytest("spec", "-v", "-rf")
    result.stdout.fnmatch_lines(["*halved::private?eps_1? FAILED*", "refuted *spec/rr.py::halved::private[[]eps_1[]]",
                                 "FAILED spec/rr.py::halved::private[[]eps_1[]] - *"])


PLUGIN_FLAGS = {"--precision": "--dpverify-precision", "--max-work": "--dpverify-max-work"}


@pytest.mark.parametrize("flag,value,words", [bad for bad in BAD_OPTIONS if bad[0] in PLUGIN_FLAGS])
def test_bad_option_values_are_refused_as_by_the_cli(pytester, flag: str, value: str, words: str) -> None:
    """The values the CLI refuses (tests/test_cli.py::BAD_OPTIONS), refused with the same words."""
    pytester.mkdir("spec")
    pytester.path.joinpath("spec", "rr.py").write_text(SPEC)
    result = pytester.runpytest("spec", f"{PLUGIN_FLAGS[flag]}={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"{PLUGIN_FLAGS[flag]} {words}" in result.stderr.str(), result.stderr.str()


def test_good_option_values_reach_the_checks(pytester) -> None:
    pytester.mkdir("spec")
    pytester.path.joinpath("spec", "rr.py").write_text(SPEC)
    result = pytester.runpytest("spec", "--dpverify-precision", "30", "--dpverify-max-work", "1000")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*replay: dpverify check spec/rr.py * --precision 30 --max-work 1000*"])


def test_a_failing_sensitivity_claim_shows_the_derived_against_the_claimed_delta(pytester) -> None:
    """The plugin renders the typed evidence of each kind: a sensitivity claim its Delta."""
    pytester.mkdir("spec")
    pytester.path.joinpath("spec", "mean.py").write_text(textwrap.dedent("""
        from sympy import Rational
        import dpverify as dp
        n = dp.symbol("n", positive=True, integer=True)
        mean = dp.mean(lambda r: r, domain=[0, 1])

        def release(data):
            return mean(data)

        s = dp.spec(release, universe=dp.universe([0, 1], n=[1, 2], neighbours=dp.REPLACE_ONE),
                    claims=[dp.sensitivity(mean, equals=Rational(1, 2) / n)])
    """))
    result = pytester.runpytest("spec")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*claimed Delta 1/(2*n), derived Delta 1/n*"])


def test_a_test_file_that_fails_to_collect_is_reported_by_pytest_not_a_plugin_crash(pytester) -> None:
    """A collection error (a CollectReport, which has no user_properties) reaches pytest's own
    error report; the plugin's verdict bookkeeping leaves it alone."""
    pytester.makepyfile(test_broken="import no_such_module_anywhere\n\ndef test_x():\n    pass\n")
    result = pytester.runpytest("-v")
    assert result.ret == pytest.ExitCode.INTERRUPTED  # "Interrupted: 1 error during collection"
    result.stdout.fnmatch_lines(["*ModuleNotFoundError: No module named 'no_such_module_anywhere'*"])
    assert "AttributeError" not in result.stdout.str() + result.stderr.str()


# -- issue 21, item 2: spec files that pytest's own collector would take ------------------------
# Every spec file `dpverify check spec/` checks is checked by `pytest spec/`, or the run fails naming
# the file, why and the fix.  On the baseline a spec named like a test module (test_*.py, *_test.py,
# or whatever python_files says) was imported by pytest as a test module without tests: its refuted
# claim went unchecked and `pytest spec/` exited 0.

def _spec_folder(pytester, files: dict[str, str], ini: str = "") -> None:
    pytester.path.joinpath("pytest.ini").write_text("[pytest]\n" + ini)
    for name, text in files.items():
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.mark.parametrize("name,ini", [
    ("spec/test_rr.py", ""),
    ("spec/rr_test.py", ""),
    ("spec/sub/test_rr.py", ""),
    ("spec/pkg/test_rr.py", ""),  # a package: spec/pkg/__init__.py below
    ("spec/check_rr.py", "python_files = check_*.py\n"),
    ("spec/rr.py", "python_files = *.py\n"),
])
def test_a_spec_named_like_a_test_module_is_checked_as_a_spec(pytester, name: str, ini: str) -> None:
    _spec_folder(pytester, {name: SPEC, "spec/pkg/__init__.py": "", "spec/_helper.py": "X = 1\n"}, ini)
    result = pytester.runpytest("spec", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)  # baseline: "no tests ran" or 0 failed, exit 0
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"FAILED {name}::halved::private[[]eps_1[]]*"])
    named = pytester.runpytest(name, "-p", "no:cacheprovider")  # named on the command line: the same
    named.assert_outcomes(passed=2, failed=1)


def test_a_spec_named_like_a_test_module_in_a_dpverify_dir_is_checked(pytester) -> None:
    _spec_folder(pytester, {"claims/test_rr.py": SPEC})
    result = pytester.runpytest("claims", "--dpverify-dir=claims", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)


@pytest.mark.parametrize("layout,args,words", [
    ({"spec/.hidden/rr.py": SPEC}, [], ["*spec/.hidden/rr.py is a spec file that `dpverify check` checks, but pytest "
                                        "did not collect it: pytest does not enter spec/.hidden (norecursedirs '.*')*",
                                        "fix: rename the directory*"]),
    ({"spec/build/rr.py": SPEC}, [], ["*spec/build/rr.py is a spec file*norecursedirs 'build'*"]),
    ({"spec/rr.py": SPEC, "spec/conftest.py": "collect_ignore = ['rr.py']\n"}, [],
     ["*spec/rr.py is a spec file*ignored by a conftest.py*", "fix: stop ignoring it*--deselect spec/rr.py*"]),
    ({"spec/rr.py": SPEC}, ["--ignore=spec/rr.py"], ["*spec/rr.py is ignored by --ignore*"]),
    ({"spec/venv/rr.py": SPEC, "spec/venv/pyvenv.cfg": ""}, [], ["*spec/venv looks like a virtualenv*"]),
])
def test_a_spec_file_pytest_does_not_collect_fails_the_run_naming_it(pytester, layout, args, words) -> None:
    _spec_folder(pytester, {"spec/ok.py": SPEC.replace("eps / 2", "eps"), **layout})
    result = pytester.runpytest("spec", "-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()  # "1 error during collection"
    result.stdout.fnmatch_lines(["*ERROR collecting*", *words])
    going_on = pytester.runpytest("spec", "-p", "no:cacheprovider", "--continue-on-collection-errors", *args)
    assert going_on.ret == pytest.ExitCode.TESTS_FAILED
    going_on.assert_outcomes(passed=3, errors=1)


def test_a_spec_file_with_pytest_tests_fails_collection(pytester) -> None:
    _spec_folder(pytester, {"spec/test_rr.py": SPEC + "\n\ndef test_helper():\n    assert True\n"})
    result = pytester.runpytest("spec", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*spec/test_rr.py declares dpverify specs and also defines pytest tests (test_helper)*",
                                 "fix: move the tests into a test module outside the spec directory*"])


@pytest.mark.parametrize("files,named", [
    ({"claims/test_rr.py": SPEC}, "claims/test_rr.py"),  # named like a test module, outside spec directories
    ({"claims/rr.py": SPEC.replace("import dpverify as dp", "from helper import dp"),
      "claims/helper.py": "import dpverify as dp\n"}, "claims/rr.py"),  # no dpverify import the plugin can see
])
def test_a_named_file_pytest_takes_as_a_test_module_fails_when_it_declares_specs(pytester, files, named) -> None:
    _spec_folder(pytester, {**files, "tests/test_ok.py": "def test_ok():\n    pass\n"})
    result = pytester.runpytest(named, "tests", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()  # baseline: 1 passed, exit 0
    result.stdout.fnmatch_lines([f"*{named} declares dpverify specs (rr, halved) but pytest collected it as a test module*"])


def test_a_test_module_outside_spec_directories_keeps_its_tests(pytester) -> None:
    """Specs at module level of a real test module (tests/ of a project) are its fixtures."""
    _spec_folder(pytester, {"tests/test_uses_specs.py": SPEC + "\n\ndef test_names():\n    assert bad.name\n"})
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


CONFTEST_HIDING = {  # what a conftest.py adds to every item, and the outcomes then
    "skip mark": ("        item.add_marker(pytest.mark.skip(reason='slow'))\n", dict(errors=3)),  # at setup
    "xfail mark": ("        item.add_marker(pytest.mark.xfail(reason='known'))\n", dict(passed=2, failed=1)),
}


@pytest.mark.parametrize("how", sorted(CONFTEST_HIDING))
def test_a_conftest_cannot_skip_or_xfail_a_claim_point(pytester, how: str) -> None:
    conftest = ("import pytest\n\ndef pytest_collection_modifyitems(items):\n    for item in items:\n"
                + CONFTEST_HIDING[how][0])
    _spec_folder(pytester, {"spec/rr.py": SPEC, "spec/conftest.py": conftest})
    result = pytester.runpytest("spec", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # baseline: 3 skipped, or 2 xpassed and 1 xfailed: exit 0
    result.assert_outcomes(**CONFTEST_HIDING[how][1])
    result.stdout.fnmatch_lines(["*a claim point cannot be skipped or xfailed*"])


def test_claim_points_dropped_by_a_hook_fail_but_deselected_ones_do_not(pytester) -> None:
    conftest = "def pytest_collection_modifyitems(items):\n    items[:] = [i for i in items if 'halved' not in i.nodeid]\n"
    _spec_folder(pytester, {"spec/rr.py": SPEC, "spec/conftest.py": conftest})
    result = pytester.runpytest("spec", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*1 claim point(s) of spec/rr.py were removed from the run*"])
    pytester.path.joinpath("spec", "conftest.py").unlink()
    deselected = pytester.runpytest("spec", "-p", "no:cacheprovider", "-k", "not halved")
    deselected.assert_outcomes(passed=2, deselected=1)
    assert deselected.ret == pytest.ExitCode.OK


def test_narrower_arguments_and_last_failed_are_not_missing_files(pytester) -> None:
    """`pytest spec/a.py` checks a.py only; --lf skips the files without failures: neither is an error."""
    _spec_folder(pytester, {"spec/a.py": SPEC, "spec/test_b.py": SPEC.replace("eps / 2", "eps"),
                            "spec/.hidden/c.py": SPEC})
    pytester.runpytest("spec/a.py").assert_outcomes(passed=2, failed=1)
    pytester.runpytest("spec/test_b.py::halved").assert_outcomes(passed=1)
    pytester.runpytest("spec/a.py", "spec/test_b.py").assert_outcomes(passed=5, failed=1)
    pytester.path.joinpath("spec", ".hidden", "c.py").unlink()
    pytester.runpytest("spec")
    again = pytester.runpytest("spec", "--lf")
    again.assert_outcomes(failed=1, deselected=2)  # a.py's passing points; test_b.py is not even loaded
    again.stdout.fnmatch_lines(["run-last-failure: rerun previous 1 failure (skipped 1 file)"])
