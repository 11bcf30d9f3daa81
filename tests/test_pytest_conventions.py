"""Issue 22, item 4: claim items follow pytest's conventions -- --lf, --ff and --sw rerun the claim
points that failed, -k takes every item's id, a spec folder under any name given on the command
line is collected, and a claim declared ``expect="refuted"`` is a strict xfail.

Driven with pytester: two runs in the same directory share pytest's cache (.pytest_cache), as two
runs of a CI job or a developer's terminal do.  The specs are randomized response on one bit, a
few milliseconds per point.
"""
from __future__ import annotations

import textwrap

import pytest

# 5 points of a claim that holds, 3 of a claim that does not (eps/2-DP): 8 items, 3 failing
RR = textwrap.dedent("""
    from sympy import Rational
    import dpverify as dp
    eps = dp.symbol("eps", positive=True)
    BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)

    def rr(data, eps):
        return dp.randomized_response(data[0], eps)

    good = dp.spec(rr, universe=BIT, grid={eps: [Rational(1, 2), 1, 2, 3, 4]}, claims=[dp.private(eps)])
    bad = dp.spec(rr, name="halved", universe=BIT, grid={eps: [1, 2, 3]}, claims=[dp.private(eps / 2)])
""")
HOLDS = RR.replace("eps / 2", "eps")  # 8 items, all pass
BROKEN = "import dpverify as dp\nx = dp.universe([], n=1, neighbours=dp.REPLACE_ONE)\n"  # a load error, 1 item
TWO_PARAMETERS = textwrap.dedent("""
    from sympy import Rational, sqrt
    import dpverify as dp
    eps = dp.symbol("eps", positive=True)
    t = dp.symbol("t", positive=True)
    BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)

    def rr(data, eps, t):
        return dp.randomized_response(data[0], eps)

    both = dp.spec(rr, name="two params", universe=BIT, grid={t: [1, 4], eps: [Rational(1, 2), 1 + sqrt(2)]},
                   claims=[dp.private(eps)])
""")


def _write(pytester, files: dict[str, str]) -> None:
    pytester.path.joinpath("pytest.ini").write_text("[pytest]\n")
    for name, text in files.items():
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _ran(result) -> list[tuple[str, str]]:
    """(node id, outcome) of each item's call, in the order they ran."""
    return [(r.nodeid, r.outcome) for r in result.reprec.getreports("pytest_runtest_logreport") if r.when == "call"]


HALVED = [f"spec/c_bad.py::halved::private[eps_{e}]" for e in (1, 2, 3)]


# -- --lf, --ff, --sw ------------------------------------------------------------------------------

def test_last_failed_reruns_only_the_failed_claim_points(pytester) -> None:
    """The user's report: after `3 failed, 22 passed`, --lf ran all 25 again."""
    _write(pytester, {"spec/a_ok.py": HOLDS, "spec/c_bad.py": RR, "spec/d_ok.py": HOLDS, "spec/e_ok.py": HOLDS[:-1]
                      + "\nmore = dp.spec(rr, name='more', universe=BIT, grid={eps: [1]}, claims=[dp.private(eps)])\n"})
    first = pytester.runpytest("spec")
    first.assert_outcomes(passed=30, failed=3)
    again = pytester.runpytest("spec", "--lf")
    again.assert_outcomes(failed=3, deselected=5)  # the failing file's passing points; the others are skipped
    again.stdout.fnmatch_lines(["run-last-failure: rerun previous 3 failures (skipped 3 files)"])
    assert [nodeid for nodeid, _ in _ran(again)] == HALVED
    assert again.ret == pytest.ExitCode.TESTS_FAILED
    # fixed: --lf reruns the three, they pass, and the next --lf has no failures to rerun
    pytester.path.joinpath("spec", "c_bad.py").write_text(HOLDS)
    pytester.runpytest("spec", "--lf").assert_outcomes(passed=3, deselected=5)
    fixed = pytester.runpytest("spec", "--lf")
    fixed.assert_outcomes(passed=33)
    fixed.stdout.fnmatch_lines(["run-last-failure: no previously failed tests, not deselecting items."])


def test_last_failed_with_a_spec_that_does_not_load_reruns_it_and_the_real_failures(pytester) -> None:
    """The user's report: with a load failure present, --lf deselected the refuted claims."""
    _write(pytester, {"spec/a_ok.py": HOLDS, "spec/b_broken.py": BROKEN, "spec/c_bad.py": RR, "spec/z_ok.py": HOLDS})
    pytester.runpytest("spec").assert_outcomes(passed=21, failed=4)
    again = pytester.runpytest("spec", "--lf")
    again.assert_outcomes(failed=4, deselected=5)
    assert [nodeid for nodeid, _ in _ran(again)] == ["spec/b_broken.py::load", *HALVED]
    again.stdout.fnmatch_lines(["run-last-failure: rerun previous 4 failures (skipped 2 files)"])


def test_failed_first_runs_the_failed_claim_points_first_then_the_rest(pytester) -> None:
    _write(pytester, {"spec/a_ok.py": HOLDS, "spec/c_bad.py": RR})
    pytester.runpytest("spec").assert_outcomes(passed=13, failed=3)
    again = pytester.runpytest("spec", "--ff")
    again.assert_outcomes(passed=13, failed=3)
    ran = _ran(again)
    assert [nodeid for nodeid, _ in ran[:3]] == HALVED and {o for _, o in ran[3:]} == {"passed"}
    again.stdout.fnmatch_lines(["run-last-failure: rerun previous 3 failures first"])


def test_stepwise_stops_at_a_failed_claim_point_and_resumes_there(pytester) -> None:
    _write(pytester, {"spec/a_ok.py": HOLDS, "spec/c_bad.py": RR})
    first = pytester.runpytest("spec", "--sw")
    first.assert_outcomes(passed=13, failed=1)  # a_ok.py's 8, c_bad.py's 5 good points, then halved at eps=1
    assert _ran(first)[-1] == (HALVED[0], "failed")
    second = pytester.runpytest("spec", "--sw")
    second.assert_outcomes(failed=1, deselected=13)
    second.stdout.fnmatch_lines(["stepwise: skipping 13 already passed items*"])
    assert _ran(second) == [(HALVED[0], "failed")]
    # the claim fixed (eps/2 -> eps): stepwise goes on from it to the end
    pytester.path.joinpath("spec", "c_bad.py").write_text(HOLDS)
    third = pytester.runpytest("spec", "--sw")
    third.assert_outcomes(passed=3, deselected=13)
    assert [nodeid for nodeid, _ in _ran(third)] == HALVED


def test_node_ids_are_the_same_in_every_process(pytester) -> None:
    """--lf and --sw match the previous run's node ids: they must not depend on hashing or order
    of discovery (two processes with different hash seeds list the same ids)."""
    _write(pytester, {"spec/rr.py": RR, "spec/two.py": TWO_PARAMETERS})
    listings = []
    for seed in ("1", "2"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("PYTHONHASHSEED", seed)
            done = pytester.runpytest_subprocess("spec", "--collect-only", "-q", "-p", "no:cacheprovider")
        listings.append([line for line in done.stdout.lines if line.startswith("spec/")])
    assert listings[0] == listings[1] and len(listings[0]) == 12, listings
    assert "spec/two.py::two_params::private[eps_1/2-t_1]" in listings[0]
    assert "spec/two.py::two_params::private[eps_1+sqrt(2)-t_4]" in listings[0]


# -- -k ----------------------------------------------------------------------------------------------

def test_k_takes_the_parameters_of_a_point(pytester) -> None:
    """`-k 'eps=1'` was a syntax error of -k's grammar; the ids now read eps_1."""
    _write(pytester, {"spec/rr.py": RR})
    exact = pytester.runpytest("spec", "-k", "eps_1]")
    exact.assert_outcomes(passed=1, failed=1, deselected=6)
    assert sorted(n for n, _ in _ran(exact)) == ["spec/rr.py::halved::private[eps_1]", "spec/rr.py::rr::private[eps_1]"]
    prefix = pytester.runpytest("spec", "-k", "eps_1")  # -k matches substrings: eps_1/2 as well
    prefix.assert_outcomes(passed=2, failed=1, deselected=5)
    combined = pytester.runpytest("spec", "-k", "halved and not eps_3")
    combined.assert_outcomes(failed=2, deselected=6)
    assert combined.ret == pytest.ExitCode.TESTS_FAILED


def test_every_item_name_is_a_k_expression(pytester) -> None:
    """Each item's name (``private[eps_1/2-t_4]``) parses as a -k identifier: all of them or-ed
    together select every item (a character -k refuses would be a usage error, exit 4)."""
    _write(pytester, {"spec/rr.py": RR, "spec/two.py": TWO_PARAMETERS.replace("1 + sqrt(2)", "Rational(3, 2)")})
    listed = pytester.runpytest("spec", "--collect-only", "-q", "-p", "no:cacheprovider")
    ids = [line for line in listed.stdout.lines if line.startswith("spec/")]
    assert len(ids) == 12 and not any("=" in i or "," in i for i in ids), ids
    names = [i.rsplit("::", 1)[1] for i in ids]
    expression = " or ".join(names)
    picked = pytester.runpytest("spec", "--collect-only", "-q", "-p", "no:cacheprovider", "-k", expression)
    assert picked.ret == pytest.ExitCode.OK, picked.stderr.str()
    assert [line for line in picked.stdout.lines if line.startswith("spec/")] == ids
    one = pytester.runpytest("spec", "-p", "no:cacheprovider", "-k", "two_params and eps_3/2-t_4")
    assert [n for n, _ in _ran(one)] == ["spec/two.py::two_params::private[eps_3/2-t_4]"]


# -- a spec folder under any name --------------------------------------------------------------------

MECHANISMS = {
    "mechanisms/rr.py": RR,
    "mechanisms/sub/ok.py": HOLDS,
    "mechanisms/helpers.py": "import dpverify as dp\n\nBIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)\n",
    "mechanisms/test_helpers.py": "def test_helper():\n    assert True\n",  # a test module: stays pytest's
    "tests/test_unit.py": "def test_unit():\n    assert True\n",
    "tests/util.py": "X = 1\n",
}


def test_a_spec_folder_given_on_the_command_line_is_collected_whatever_its_name(pytester) -> None:
    """`pytest mechanisms/` collected nothing and exited 5 with no hint."""
    _write(pytester, MECHANISMS)
    result = pytester.runpytest("mechanisms", "tests", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=15, failed=3)  # 5 + 8 claim points, 2 tests; halved refuted
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    ran = dict(_ran(result))
    assert ran["mechanisms/rr.py::halved::private[eps_1]"] == "failed"
    assert ran["mechanisms/test_helpers.py::test_helper"] == "passed" and ran["tests/test_unit.py::test_unit"] == "passed"
    assert not any(n.startswith("mechanisms/helpers.py") for n in ran)  # declares no spec: not a spec file
    # a subfolder, a file, and testpaths name it too
    pytester.runpytest("mechanisms/sub", "-p", "no:cacheprovider").assert_outcomes(passed=8)
    pytester.runpytest("mechanisms/rr.py", "-p", "no:cacheprovider").assert_outcomes(passed=5, failed=3)
    pytester.path.joinpath("pytest.ini").write_text("[pytest]\ntestpaths = mechanisms tests\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=15, failed=3)


def test_a_bare_pytest_names_the_spec_files_it_would_pass_over(pytester) -> None:
    """Without arguments (nor testpaths) pytest is not asked for a folder's specs: the files are named
    with the fix, as before, never passed over in silence; --dpverify-dir still makes the folder one."""
    _write(pytester, MECHANISMS)
    bare = pytester.runpytest("-p", "no:cacheprovider")
    assert bare.ret == pytest.ExitCode.INTERRUPTED, bare.stdout.str()
    bare.stdout.fnmatch_lines(["*mechanisms/rr.py declares dpverify specs, but its folder is not a spec folder*",
                               "fix: name the folder on the command line (`pytest mechanisms`, or in testpaths)*"])
    for name in ("mechanisms/helpers.py", "mechanisms/test_helpers.py"):  # a spec folder holds spec files only
        pytester.path.joinpath(name).unlink()
    named = pytester.runpytest("-p", "no:cacheprovider", "--dpverify-dir", "mechanisms")
    named.assert_outcomes(passed=14, failed=3)


def test_a_spec_file_in_a_folder_pytest_does_not_enter_is_named(pytester) -> None:
    """As in spec folders (issue 21, item 2): what `dpverify check mechanisms` checks, `pytest
    mechanisms` checks, or names the file it cannot take."""
    _write(pytester, {**MECHANISMS, "mechanisms/.drafts/rr.py": RR})
    result = pytester.runpytest("mechanisms", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()
    result.stdout.fnmatch_lines(["*mechanisms/.drafts/rr.py is a spec file that `dpverify check` checks, but pytest did "
                                 "not collect it: pytest does not enter mechanisms/.drafts (norecursedirs '.*')*"])


# -- expect="refuted": a strict xfail ----------------------------------------------------------------

EXPECTED = textwrap.dedent("""
    import dpverify as dp
    eps = dp.symbol("eps", positive=True)
    BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)

    def rr(data, eps):
        return dp.randomized_response(data[0], eps)

    holds = dp.spec(rr, universe=BIT, grid={eps: [1]}, claims=[dp.private(eps)])
    known = dp.spec(rr, name="known", universe=BIT, grid={eps: [1, 2]},
                    claims=[dp.private(eps / 2, id="half", expect="refuted")])
""")


def test_a_claim_refuted_as_expected_is_an_xfail_with_its_witness_as_reason(pytester) -> None:
    _write(pytester, {"spec/rr.py": EXPECTED})
    result = pytester.runpytest("spec", "-rx", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, xfailed=2)
    assert result.ret == pytest.ExitCode.OK  # every claim as expected
    result.stdout.fnmatch_lines([
        "XFAIL spec/rr.py::known::half[[]eps_1[]] - refuted as expected: X=(0,) and X'=(1,) are neighbours; "
        "P(o=0|X) = 0.73105857... and P(o|X') = 0.26894142..., ratio 2.71828182... > e^(eps/2) = 1.64872127...*",
        "*1 passed, 2 xfailed*"])
    reports = [r for r in result.reprec.getreports("pytest_runtest_logreport") if r.when == "call"]
    assert [(r.outcome, hasattr(r, "wasxfail")) for r in reports] == [("passed", False), ("skipped", True), ("skipped", True)]
    result.stdout.fnmatch_lines(["3 claim points: 1 proved, 2 refuted",
                                 "refuted (as expected) *spec/rr.py::known::half (2 points)"])
    verbose = pytester.runpytest("spec", "-v", "-p", "no:cacheprovider")
    verbose.stdout.fnmatch_lines(["spec/rr.py::known::half[[]eps_2[]] XFAIL*"])


def test_an_expected_refutation_that_holds_fails_as_a_strict_xpass(pytester) -> None:
    _write(pytester, {"spec/rr.py": EXPECTED.replace("dp.private(eps / 2, id=", "dp.private(eps, id=")})
    result = pytester.runpytest("spec", "-rf", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["proved (expected refuted) [[]*every*[]] *spec/rr.py::known::half (2 points)",
                                 "FAILED spec/rr.py::known::half[[]eps_1[]] - [[]XPASS(strict)[]] expected refuted*"])
    assert "xfailed" not in result.stdout.str() and "xpassed" not in result.stdout.str()


def test_xfailed_claims_and_last_failed(pytester) -> None:
    """An xfail is not a failure to rerun: --lf after a run whose only non-passes are expected
    refutations has nothing to rerun, as for pytest's own xfails."""
    _write(pytester, {"spec/rr.py": EXPECTED})
    pytester.runpytest("spec").assert_outcomes(passed=1, xfailed=2)
    again = pytester.runpytest("spec", "--lf")
    again.assert_outcomes(passed=1, xfailed=2)
    again.stdout.fnmatch_lines(["run-last-failure: no previously failed tests, not deselecting items."])
