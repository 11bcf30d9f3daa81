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
        "*rr::private?eps=1/2? PROVED*",
        "*halved::private?eps=1? FAILED*",
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
    assert pytester.runpytest().ret == 5  # no tests collected from a directory that is not a spec directory
    pytester.runpytest("rr.py").assert_outcomes(passed=2, failed=1)


def test_expected_refutations_pass_and_unexpected_holds_fail(pytester) -> None:
    pytester.mkdir("spec")
    body = SPEC.replace("claims=[dp.private(eps / 2)]", "claims=[dp.private(eps / 2, expect='refuted')]")
    body = body.replace("claims=[dp.private(eps)]", "claims=[dp.private(eps, expect='refuted')]")
    pytester.path.joinpath("spec", "rr.py").write_text(body)
    result = pytester.runpytest("spec")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*expected refuted, got proved*"])


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
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines([
        "*both.py::rr::private?eps=1? PROVED*",
        "*both.py::branchy::private?eps=1? VERIFIED*",
        "*both.py::halved::private?eps=1? REFUTED (as expected)*",
        "*= dpverify verdicts =*",
        "4 claim points: 2 proved, 1 verified, 1 refuted",
        "proved  * spec/both.py::rr::private (2 points)",
        "verified  * spec/both.py::branchy::private[[]eps=1[]]",
        "refuted (as expected)  spec/both.py::halved::private[[]eps=1[]]",
    ])
    assert "PASSED" not in result.stdout.str()
    quiet = pytester.runpytest("spec", "-q")
    quiet.stdout.fnmatch_lines(["4 claim points: 2 proved, 1 verified, 1 refuted"])
    assert "spec/both.py::rr::private" not in quiet.stdout.str()  # -q: the counts only


def test_a_failing_claim_keeps_the_failed_word_and_is_listed_with_its_verdict(pytester) -> None:
    pytester.mkdir("spec")
    pytester.path.joinpath("spec", "rr.py").write_text(SPEC)
    result = pytester.runpytest("spec", "-v", "-rf")
    result.stdout.fnmatch_lines(["*halved::private?eps=1? FAILED*", "refuted  spec/rr.py::halved::private[[]eps=1[]]",
                                 "FAILED spec/rr.py::halved::private[[]eps=1[]] - *"])


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
