"""Issue 10, class 12 and the gate half of class 9: a CI gate cannot pass by accident.

A filter or a path that selects nothing is a usage error (exit 2) naming what matched
nothing and what exists; spec code that exits, at import or while it is checked, is an
error for that spec (exit 2) while the other specs are still checked, in the CLI (one
worker and two) and in the pytest plugin; node ids and replay commands run back.
"""
from __future__ import annotations

import json
import shlex
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from dpverify.cli import main

GOOD = textwrap.dedent("""
    from sympy import Rational
    import dpverify as dp
    eps = dp.symbol("eps", positive=True)

    def rr(data, eps):
        return dp.randomized_response(data[0], eps)

    s = dp.spec(rr, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                grid={eps: [Rational(1, 2), 1]}, claims=[dp.private(eps)])
""")

# A mechanism whose body ends the run in one way or another (line 7 of the file is the body).
EXITING = textwrap.dedent("""
    import os, sys
    import dpverify as dp
    eps = dp.symbol("eps", positive=True)

    def quits(data, eps):
        BODY
        return dp.randomized_response(data[0], eps)

    s = dp.spec(quits, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                grid={eps: [1]}, claims=[dp.private(eps)])
""")

BODIES = {
    "sys.exit(0)": "sys.exit(0)",
    "raise SystemExit": "raise SystemExit('done')",
    "a BaseException subclass": "raise type('Boom', (BaseException,), {})('boom')",
    "os._exit(0)": "os._exit(0)",
}


def cli(tmp_path, monkeypatch, *args: str):
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(main, ["check", "--no-proofs", *args])


def cli_process(tmp_path, *args: str) -> tuple[int, str]:
    """The CLI in its own process: spec code that ends the process must not end the test run."""
    done = subprocess.run([sys.executable, "-m", "dpverify.cli", "check", "--no-proofs", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    return done.returncode, done.stdout if "--json" in args else done.stdout + done.stderr  # progress: stderr


# -- class 12: nothing selected is a usage error ------------------------------------------------

USAGE = {
    "--claim typo": (["rr.py", "--claim", "privat"], ["--claim 'privat' matches no claim",
                                                      "did you mean 'private'?", "claim ids: private"]),
    "--point value typo": (["rr.py", "--point", "eps=3"], ["--point eps=3 matches no grid point",
                                                          "values of eps: 1, 1/2"]),
    "--point name typo": (["rr.py", "--point", "epz=1"], ["no selected claim has a parameter 'epz'",
                                                         "parameters: eps"]),
    "--spec typo": (["rr.py", "--spec", "r"], ["--spec 'r' matches no spec", "spec names: rr"]),
    "--spec given a directory": (["rr.py", "--spec", "sub/"], ["--spec 'sub/' matches no spec", "not a path",
                                                              "spec names: rr"]),
    "--spec given a file": (["rr.py", "--spec", "rr.py"], ["not a path", "spec names: rr"]),
    "empty directory": (["empty"], ["empty: no spec files in this directory"]),
    "directory of private modules": (["sub"], ["sub: no spec files"]),
    "an empty directory beside a spec": (["rr.py", "empty"], ["empty: no spec files"]),
    "a non-spec path": (["notes.txt"], ["notes.txt is not a spec file"]),
}


@pytest.mark.parametrize("case", sorted(USAGE))
@pytest.mark.parametrize("as_json", [False, True])
def test_nothing_selected_is_a_usage_error(case: str, as_json: bool, tmp_path, monkeypatch) -> None:
    args, words = USAGE[case]
    (tmp_path / "rr.py").write_text(GOOD)
    (tmp_path / "empty").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "_helper.py").write_text("X = 1\n")
    (tmp_path / "notes.txt").write_text("not a spec\n")
    result = cli(tmp_path, monkeypatch, *args, *(["--json"] if as_json else []))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.output.startswith("error: "), result.output
    for word in words:
        assert word in result.output, result.output
    assert "no claims checked" not in result.output


def test_filters_that_select_nothing_together_are_a_usage_error(tmp_path, monkeypatch) -> None:
    """t=0 is a grid value (of spec x) and eps=1 one (of spec rr), but no point has both."""
    (tmp_path / "rr.py").write_text(GOOD)
    (tmp_path / "x.py").write_text(GOOD.replace("def rr(data, eps)", "def x(data, eps, t)").replace("(rr,", "(x,")
                                   .replace("grid={eps: [Rational(1, 2), 1]}", "grid={eps: [Rational(1, 2)], t: [0]}")
                                   .replace('eps = dp.symbol("eps", positive=True)',
                                            'eps = dp.symbol("eps", positive=True)\nt = dp.symbol("t")'))
    result = cli(tmp_path, monkeypatch, ".", "--point", "t=0", "--point", "eps=1")
    assert result.exit_code == 2, result.output
    assert "nothing to check" in result.output and "--point eps=1/2 --point t=0" in result.output


def test_filters_that_match_still_run(tmp_path, monkeypatch) -> None:
    """The usage errors do not touch a selection that matches: eps=0.5 names the point 1/2."""
    (tmp_path / "rr.py").write_text(GOOD)
    result = cli(tmp_path, monkeypatch, "rr.py", "--json", "--spec", "rr", "--claim", "private", "--point", "eps=0.5")
    assert result.exit_code == 0, result.output
    points = json.loads(result.output)["specs"][0]["claims"][0]["points"]
    assert [p["params"] for p in points] == [{"eps": "1/2"}]


# -- class 9, gate half: spec code that exits is an error for that spec, the others still run ----

def _statuses(output: str) -> dict[str, str]:
    doc = json.loads(output)
    return {s["path"]: s.get("error") or s["claims"][0]["status"] for s in doc["specs"]}


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("body", sorted(BODIES))
def test_an_exit_at_import_is_an_error_beside_a_good_spec(body: str, jobs: str, tmp_path, monkeypatch) -> None:
    (tmp_path / "a_good.py").write_text(GOOD)
    (tmp_path / "b_exits.py").write_text("import os, sys\n" + BODIES[body] + "\n")
    (tmp_path / "c_good.py").write_text(GOOD)
    if body == "os._exit(0)":
        code, output = cli_process(tmp_path, ".", "--json", "--jobs", jobs)
    else:
        result = cli(tmp_path, monkeypatch, ".", "--json", "--jobs", jobs)
        code, output = result.exit_code, result.output
    assert code == 2, output
    statuses = _statuses(output)
    assert statuses["a_good.py"] == "verified" and statuses["c_good.py"] == "verified"
    assert "b_exits.py:2" in statuses["b_exits.py"], statuses


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("body", sorted(BODIES))
def test_a_mechanism_that_exits_is_an_error_beside_a_good_spec(body: str, jobs: str, tmp_path, monkeypatch) -> None:
    (tmp_path / "a_good.py").write_text(GOOD)
    (tmp_path / "b_exits.py").write_text(EXITING.replace("BODY", BODIES[body]))
    (tmp_path / "c_good.py").write_text(GOOD)
    if body == "os._exit(0)":
        code, output = cli_process(tmp_path, ".", "--json", "--jobs", jobs)
    else:
        result = cli(tmp_path, monkeypatch, ".", "--json", "--jobs", jobs)
        code, output = result.exit_code, result.output
    assert code == 2, output
    doc = json.loads(output)
    assert doc["summary"]["error"] >= 1 and doc["summary"]["verified"] == 2, doc["summary"]
    statuses = _statuses(output)
    assert statuses["a_good.py"] == "verified" and statuses["c_good.py"] == "verified"
    bad = next(s for s in doc["specs"] if s["path"] == "b_exits.py")
    message = bad.get("error") or bad["claims"][0]["message"]
    assert "b_exits.py" in message and "fix" in message, message


def test_the_table_names_the_spec_whose_mechanism_exits(tmp_path, monkeypatch) -> None:
    (tmp_path / "a_good.py").write_text(GOOD)
    (tmp_path / "b_exits.py").write_text(EXITING.replace("BODY", "sys.exit(0)"))
    result = cli(tmp_path, monkeypatch, ".", "--jobs", "1")
    assert result.exit_code == 2
    assert "b_exits.py:7" in result.output, result.output
    assert "1 error, 1 verified" in result.output


def test_what_spec_code_prints_does_not_break_the_json(tmp_path, monkeypatch) -> None:
    chatty = GOOD.replace("def rr(data, eps):\n", "print('importing')\n\ndef rr(data, eps):\n    print('running')\n")
    (tmp_path / "chatty.py").write_text(chatty)
    for jobs in ("1", "2"):
        result = CliRunner().invoke(main, ["check", "--no-proofs", str(tmp_path), str(tmp_path / "chatty.py"),
                                           "--json", "--jobs", jobs])
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)
        assert len(doc["specs"]) == 1  # the file given twice is checked once


# -- replay commands run back -------------------------------------------------------------------

def test_the_replay_command_reruns_exactly_that_check(tmp_path, monkeypatch) -> None:
    """A path with a space, a spec name with a space and non-default options survive the shell."""
    refuted = GOOD.replace("dp.private(eps)", "dp.private(eps / 2)").replace("grid=", "name='rr halved', grid=")
    (tmp_path / "my specs").mkdir()
    (tmp_path / "my specs" / "rr.py").write_text(refuted)
    result = cli(tmp_path, monkeypatch, "my specs", "--precision", "30")
    assert result.exit_code == 1, result.output
    replays = [line.split("replay: ", 1)[1] for line in result.output.splitlines() if "replay: " in line]
    assert len(replays) == 2
    for replay, eps in zip(replays, ["1/2", "1"]):
        words = shlex.split(replay)
        assert words[:2] == ["dpverify", "check"] and "--precision" in words and "--no-proofs" in words
        again = CliRunner().invoke(main, [*words[1:], "--json"])
        assert again.exit_code == 1, again.output
        doc = json.loads(again.output)
        assert [(s["name"], c["id"], p["params"], p["status"]) for s in doc["specs"] for c in s["claims"]
                for p in c["points"]] == [("rr halved", "private", {"eps": eps}, "refuted")]


# -- the pytest plugin ---------------------------------------------------------------------------

AWKWARD = textwrap.dedent("""
    from sympy import Rational, sqrt
    import dpverify as dp
    eps = dp.symbol("eps", positive=True)

    def rr(data, eps):
        return dp.randomized_response(data[0], eps)

    s = dp.spec(rr, name="rr::v2 [copy/1]", universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                grid={eps: [Rational(1, 2), 1 + sqrt(2)]}, claims=[dp.private(eps, id="pure DP [eps]")])
""")


def test_a_point_written_as_a_node_id_shows_it_selects_that_point(tmp_path, monkeypatch) -> None:
    (tmp_path / "awkward.py").write_text(AWKWARD)
    result = cli(tmp_path, monkeypatch, "awkward.py", "--json", "--spec", "rr::v2 [copy/1]", "--claim", "pure DP [eps]",
                 "--point", "eps=1+sqrt(2)")
    assert result.exit_code == 0, result.output
    points = json.loads(result.output)["specs"][0]["claims"][0]["points"]
    assert [p["params"] for p in points] == [{"eps": "1 + sqrt(2)"}]


def test_printed_node_ids_can_be_run_back(pytester) -> None:
    pytester.mkdir("spec")
    pytester.path.joinpath("spec", "rr.py").write_text(GOOD)
    pytester.path.joinpath("spec", "awkward.py").write_text(AWKWARD)
    listed = pytester.runpytest("spec", "--collect-only", "-q")
    ids = [line for line in listed.stdout.lines if line.startswith("spec/")]
    assert len(ids) == 4, listed.stdout.lines
    assert "spec/rr.py::rr::private[eps_1/2]" in ids
    for node_id in ids:
        assert " " not in node_id and node_id.count("[") == 1, node_id
    awkward = [i for i in ids if i.startswith("spec/awkward.py")]
    pytester.runpytest(awkward[-1]).assert_outcomes(passed=1)  # one id selects its one item
    pytester.runpytest(*ids).assert_outcomes(passed=4)  # and every id one (a missing one is an error)
    pytester.runpytest("spec/rr.py::rr").assert_outcomes(passed=2)


def test_a_spec_file_named_on_the_command_line_is_collected_wherever_it_lives(pytester) -> None:
    pytester.mkdir("claims")
    pytester.path.joinpath("claims", "rr.py").write_text(GOOD)
    pytester.runpytest("claims/rr.py").assert_outcomes(passed=2)
    pytester.runpytest("claims/rr.py::rr::private[eps_1]").assert_outcomes(passed=1)
    # not a spec directory, but given on the command line: collected (a bare `pytest` names the file instead)
    pytester.runpytest("claims").assert_outcomes(passed=2)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(pytester.path / "claims")
        outside = pytester.runpytest()
    assert outside.ret == pytest.ExitCode.INTERRUPTED and "rr.py declares dpverify specs" in outside.stdout.str()
    pytester.runpytest("claims", "--dpverify-dir", "claims").assert_outcomes(passed=2)


def test_a_spec_file_named_in_a_spec_directory_is_imported_once(pytester) -> None:
    """Not also as a test module: its import side effects happen once, like under `pytest spec/`."""
    pytester.mkdir("spec")
    log = pytester.path / "imports.log"
    counting = f"with open({str(log)!r}, 'a') as f:\n    f.write('x')\n" + GOOD
    pytester.path.joinpath("spec", "rr.py").write_text(counting)
    pytester.runpytest("spec/rr.py").assert_outcomes(passed=2)
    assert log.read_text() == "x"


def test_a_project_checked_out_under_a_directory_named_spec_is_not_all_specs(pytester) -> None:
    project = pytester.mkdir("spec") / "project"
    project.mkdir()
    project.joinpath("pytest.ini").write_text("[pytest]\n")
    project.joinpath("helpers.py").write_text("X = 1\n")
    project.joinpath("test_a.py").write_text("def test_a():\n    assert True\n")
    project.joinpath("spec").mkdir()
    project.joinpath("spec", "rr.py").write_text(GOOD)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project)
        pytester.runpytest().assert_outcomes(passed=3)


def test_spec_code_that_exits_fails_its_items_and_the_session_goes_on(pytester) -> None:
    """In a subprocess: on the baseline os._exit(0) would end this very test run."""
    pytester.mkdir("spec")
    pytester.path.joinpath("spec", "a_good.py").write_text(GOOD)
    pytester.path.joinpath("spec", "b_import.py").write_text("import sys\nsys.exit(0)\n")
    pytester.path.joinpath("spec", "b_os_import.py").write_text("import os\nos._exit(0)\n")
    for name, body in BODIES.items():
        stem = "c_" + "".join(ch for ch in name if ch.isalnum())
        pytester.path.joinpath("spec", f"{stem}.py").write_text(EXITING.replace("BODY", body))
    pytester.path.joinpath("spec", "z_good.py").write_text(GOOD)
    result = pytester.runpytest_subprocess("spec", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, failed=2 + len(BODIES))
    result.stdout.fnmatch_lines(["*b_import.py:2: the spec file exits while it is imported*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
