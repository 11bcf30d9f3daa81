"""The CLI contract: `dpverify check ... --json` and the exit codes 0 / 1 / 2."""
import json
import re
import textwrap

from click.testing import CliRunner

from dpverify.cli import main

SPEC = textwrap.dedent("""
    from sympy import Rational
    import dpverify as dp
    eps = dp.symbol("eps", positive=True)

    def rr(data, eps):
        return dp.randomized_response(data[0], eps)

    s = dp.spec(rr, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                grid={eps: [Rational(1, 2), 1]}, claims=[dp.private(CLAIM)])
""")


def run(tmp_path, monkeypatch, claim: str, *args: str):
    (tmp_path / "rr.py").write_text(SPEC.replace("CLAIM", claim))
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(main, ["check", "rr.py", "--json", *args])


def significant_digits(text: str) -> int:
    mantissa = text.split("e")[0].replace("-", "").replace(".", "").lstrip("0")
    return len(mantissa)


def test_holding_claim_exits_0_with_the_documented_schema(tmp_path, monkeypatch) -> None:
    result = run(tmp_path, monkeypatch, "eps")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert {"dpverify", "specs", "summary"} <= set(doc)  # the keys of the first contract, still there
    assert set(doc) == {"dpverify", "schema_version", "exit_code", "specs", "summary", "totals"}
    assert doc["schema_version"] == "1.1" and doc["exit_code"] == 0
    assert doc["summary"] == {"proved": 1, "verified": 0, "refuted": 0, "unknown": 0, "error": 0, "consistent": 0}
    spec = doc["specs"][0]
    assert spec["path"] == "rr.py" and spec["name"] == "rr"
    claim = spec["claims"][0]
    assert claim["kind"] == "private" and claim["status"] == "proved" and claim["id"] == "private"
    for point in claim["points"]:
        assert {"params", "claimed_epsilon", "claimed_delta", "achieved_epsilon", "achieved_delta",
                "witness"} <= set(point)
        assert point["witness"] is None
        assert significant_digits(point["achieved_epsilon"]) >= 30
        # randomized response is tight: the achieved epsilon equals the claim exactly
        assert point["achieved_epsilon"] == point["claimed_epsilon"]
    assert [p["params"] for p in claim["points"]] == [{"eps": "1/2"}, {"eps": "1"}]


def test_refuted_claim_exits_1_with_a_witness(tmp_path, monkeypatch) -> None:
    result = run(tmp_path, monkeypatch, "eps / 2")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.output)
    assert doc["summary"]["refuted"] == 1
    point = doc["specs"][0]["claims"][0]["points"][1]
    assert point["status"] == "refuted"
    w = point["witness"]
    assert {w["output"]} <= {0, 1} and w["x"] != w["x_prime"]
    # P(keep) = e/(1+e) for eps = 1; the ratio is e > e^(1/2)
    assert w["p"].startswith("0.731058578630004879251")
    assert w["p_prime"].startswith("0.268941421369995120748")
    assert re.match(r"2\.71828182845904523536028747135266249775", w["ratio"])


def test_filters_select_one_point(tmp_path, monkeypatch) -> None:
    result = run(tmp_path, monkeypatch, "eps", "--claim", "private", "--point", "eps=1")
    doc = json.loads(result.output)
    assert [p["params"] for p in doc["specs"][0]["claims"][0]["points"]] == [{"eps": "1"}]


def test_spec_error_exits_2_and_is_reported_in_json(tmp_path, monkeypatch) -> None:
    result = run(tmp_path, monkeypatch, "undefined_name")
    assert result.exit_code == 2
    doc = json.loads(result.output)
    assert doc["summary"]["error"] == 1
    assert "rr.py:10" in doc["specs"][0]["error"]


def test_table_output_names_the_replay_command(tmp_path, monkeypatch) -> None:
    (tmp_path / "rr.py").write_text(SPEC.replace("CLAIM", "eps / 2"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "rr.py"])
    assert result.exit_code == 1
    assert "refuted" in result.output
    assert "replay: dpverify check rr.py --spec rr --claim private --point eps=1/2" in result.output


def test_a_claim_expected_to_be_refuted_is_green_only_when_refuted(tmp_path, monkeypatch) -> None:
    result = run(tmp_path, monkeypatch, "eps / 2, expect='refuted'")
    assert result.exit_code == 0, result.output
    claim = json.loads(result.output)["specs"][0]["claims"][0]
    assert claim["status"] == "refuted" and claim["expect"] == "refuted" and claim["as_expected"]
    result = run(tmp_path, monkeypatch, "eps, expect='refuted'")
    assert result.exit_code == 1
    claim = json.loads(result.output)["specs"][0]["claims"][0]
    assert claim["status"] == "proved" and not claim["as_expected"]


def test_parallel_workers_give_the_same_report_in_the_same_order() -> None:
    """--jobs 2 checks files in worker processes; apart from timings the JSON must not change."""
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent / "spec"
    paths = [str(root / "randomized_response.py"), str(root / "geometric.py"), str(root / "sq_learner.py")]

    def run(jobs: str) -> dict:
        result = CliRunner().invoke(main, ["check", *paths, "--json", "--jobs", jobs])
        assert result.exit_code == 0, result.output
        document = json.loads(result.output)
        for spec in document["specs"]:
            for claim in spec["claims"]:
                for point in claim["points"]:
                    point.pop("seconds")
        return document

    sequential, parallel = run("1"), run("2")
    assert [s["name"] for s in sequential["specs"]] == [s["name"] for s in parallel["specs"]]
    assert sequential == parallel


# Bad values refused by the CLI and (for the options it has) the pytest plugin, with the same words:
# (CLI flag, value, words of the message).  tests/test_pytest_plugin.py runs the plugin's share.
BAD_OPTIONS = [
    ("--precision", "10", "10 is out of range: give 15 to 10000 significant digits"),
    ("--precision", "10001", "10001 is out of range: give 15 to 10000 significant digits"),
    ("--precision", "many", "'many' is not a whole number"),
    ("--max-work", "0", "0 is out of range: give a limit of at least 1"),
    ("--jobs", "0", "0 is out of range: give at least 1 worker process"),
    ("--point", "eps", "'eps' is not NAME=VALUE: write e.g. --point eps=1/2"),
]


def test_bad_option_values_are_usage_errors_naming_the_option_and_the_range(tmp_path, monkeypatch) -> None:
    (tmp_path / "rr.py").write_text(SPEC.replace("CLAIM", "eps"))
    monkeypatch.chdir(tmp_path)
    for command in ("check", "report"):
        for flag, value, words in BAD_OPTIONS:
            out = ["--out", "site"] if command == "report" else []
            result = CliRunner().invoke(main, [command, "rr.py", *out, flag, value])
            assert result.exit_code == 2, (command, flag, value, result.output)
            assert f"{flag} {words}" in " ".join(result.output.split()), result.output
            assert "Traceback" not in result.output
    assert not (tmp_path / "site").exists()  # refused before anything ran


def test_report_takes_the_selection_and_work_options_of_check(tmp_path, monkeypatch) -> None:
    """One option set: the report covers only the selected claim and point, checked as asked."""
    (tmp_path / "rr.py").write_text(SPEC.replace("CLAIM", "eps), dp.private(eps / 2, id='halved'"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["report", "rr.py", "--out", "site", "--claim", "private", "--point", "eps=1",
                                       "--precision", "30", "--no-proofs", "--max-work", "1000", "--jobs", "1",
                                       "-q"])
    assert result.exit_code == 0, result.output  # the refuted claim 'halved' is not selected
    doc = json.loads((tmp_path / "site" / "report.json").read_text())
    claims = doc["specs"][0]["claims"]
    assert [c["id"] for c in claims] == ["private"]
    assert [p["params"] for p in claims[0]["points"]] == [{"eps": "1"}]
    assert claims[0]["status"] == "verified"  # --no-proofs: the grid check only
    assert doc["report"]["precision"] == 30 and doc["report"]["proofs"] is False
    everything = CliRunner().invoke(main, ["report", "rr.py", "--out", "all"])
    assert everything.exit_code == 1, everything.output  # without a selection 'halved' is refuted
    assert {c["id"] for c in json.loads((tmp_path / "all" / "report.json").read_text())["specs"][0]["claims"]} == \
        {"private", "halved"}


def test_the_shared_options_are_the_same_on_check_and_report() -> None:
    from dpverify.cli import check, report
    shared = {p.name for p in check.params} - {"as_json"}
    assert shared <= {p.name for p in report.params}
    assert {"precision", "max_work", "proofs", "spec_filter", "claim_filter", "point_values", "jobs", "verbose",
            "quiet"} <= shared


def test_verbose_logs_how_each_point_was_decided_and_quiet_logs_nothing(tmp_path) -> None:
    """-v: one INFO line per point on stderr (from the worker processes too); stdout stays the JSON."""
    import subprocess
    import sys
    (tmp_path / "rr.py").write_text(SPEC.replace("CLAIM", "eps"))

    def run(*flags: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "dpverify.cli", "check", "rr.py", "--json", "--no-proofs", *flags],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300)
    verbose, quiet, default = run("-v"), run("-q"), run()
    for done in (verbose, quiet, default):
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["summary"]["verified"] == 1
    lines = [line for line in verbose.stderr.splitlines() if line.startswith("dpverify: INFO")]
    assert len(lines) == 2 and "rr:private [eps=1/2] verified, decided by exact enumeration" in lines[0], verbose.stderr
    assert quiet.stderr == ""  # -q: no progress, no log
    assert "dpverify: INFO" not in default.stderr and "claim points to check" in default.stderr  # progress only


def test_quiet_hides_the_progress_bar(tmp_path, monkeypatch) -> None:
    import rich.progress

    (tmp_path / "rr.py").write_text(SPEC.replace("CLAIM", "eps"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich then takes stderr for a terminal (and so does the CLI)
    bars = []
    real = rich.progress.Progress  # imported by the CLI only where a bar is shown
    monkeypatch.setattr(rich.progress, "Progress", lambda *a, **k: bars.append(1) or real(*a, **k))
    assert CliRunner().invoke(main, ["check", "rr.py", "-q"]).exit_code == 0
    assert bars == []
    assert CliRunner().invoke(main, ["check", "rr.py"]).exit_code == 0
    assert bars == [1]  # the test sees a bar where there is one


THREE = SPEC.replace("CLAIM", "eps), dp.private(eps / 2, id='half', expect='refuted'), dp.private(eps / 3, id='third'")


def test_the_summary_counts_claims_and_points_with_expected_refutations_apart(tmp_path, monkeypatch) -> None:
    (tmp_path / "rr.py").write_text(THREE)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "rr.py"])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    problem = lines.index("NOT AS EXPECTED: 1 claim refuted unexpectedly (each listed above)")
    claims = lines.index("3 claims in 1 file: 1 refuted unexpectedly, 1 proved, 1 refuted as expected")
    points = lines.index("6 claim points: 2 refuted unexpectedly, 2 proved, 2 refuted as expected")
    assert problem < claims < points == len(lines) - 1  # the failure first, the counts last
    assert sum("rr.py::rr" in line for line in lines) == 6  # rows name file and spec
    # only the expected refutation: it holds, said as such, exit 0
    (tmp_path / "rr.py").write_text(THREE.replace(", dp.private(eps / 3, id='third')", ""))
    result = CliRunner().invoke(main, ["check", "rr.py"])
    assert result.exit_code == 0, result.output
    assert "NOT AS EXPECTED" not in result.output
    assert result.output.splitlines()[-2:] == ["2 claims in 1 file: 1 proved, 1 refuted as expected",
                                               "4 claim points: 2 proved, 2 refuted as expected"]


def test_a_claim_expected_refuted_that_holds_is_said_first(tmp_path, monkeypatch) -> None:
    result = run(tmp_path, monkeypatch, "eps, expect='refuted'")
    assert result.exit_code == 1
    table = CliRunner().invoke(main, ["check", "rr.py"])
    assert "NOT AS EXPECTED: 1 claim not refuted (expected refuted)" in table.output, table.output
    assert table.output.splitlines()[-2] == "1 claim in 1 file: 1 not refuted (expected refuted)"
    doc = json.loads(result.output)
    assert doc["totals"]["claims"]["expected_refuted_but_not"] == 1 and doc["exit_code"] == 1


def test_progress_in_a_log_is_a_line_per_file_with_the_total_known_first(tmp_path) -> None:
    """No terminal (a CI log): progress lines on stderr, the total of points before any file is done,
    one line per file with its counts and seconds; stdout stays the JSON document; -q: nothing."""
    import subprocess
    import sys
    (tmp_path / "a.py").write_text(THREE)
    (tmp_path / "b.py").write_text(SPEC.replace("CLAIM", "eps"))
    (tmp_path / "c_broken.py").write_text("import dpverify as dp\ns = dp.spec(undefined_name)\n")

    def check(*flags: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "dpverify", "check", ".", "--no-cache", "--jobs", "2", *flags],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300)
    done = check("--json")
    assert done.returncode == 2, done.stderr
    assert json.loads(done.stdout)["totals"]["points"]["total"] == 8
    lines = done.stderr.splitlines()
    assert lines[0] == "dpverify: loading 3 spec files", lines
    planned = next(i for i, line in enumerate(lines) if "claim points to check" in line)
    assert re.fullmatch(r"dpverify: loaded 3 spec files in [0-9.]+ s: 8 claim points to check"
                        r"( with 2 worker processes)?", lines[planned]), lines[planned]
    per_file = {}
    for line in lines:
        found = re.fullmatch(r"dpverify: \[(\d)/3 files(, (\d+)/8 points)?, \d+:\d\d(, ~\d+:\d\d left)?\] "
                             r"(\S+): (.*) \(([0-9.]+) s\)", line)
        if found:
            per_file[found.group(5)] = (found.group(6), lines.index(line))
    assert set(per_file) == {"a.py", "b.py", "c_broken.py"}, lines
    assert per_file["a.py"][0] == "6 points: 2 refuted unexpectedly, 2 proved, 2 refuted as expected"
    assert per_file["b.py"][0] == "2 points: 2 proved"
    assert per_file["c_broken.py"][0].startswith("ERROR: c_broken.py:2: the spec does not import")
    assert per_file["a.py"][1] > planned and per_file["b.py"][1] > planned  # the total came first
    table = check()
    assert table.returncode == 2 and "claim points to check" in table.stderr  # also with the table
    assert "dpverify:" not in table.stdout
    quiet = check("--json", "-q")
    assert quiet.returncode == 2 and quiet.stderr == "", quiet.stderr


def test_a_silent_log_gets_a_heartbeat() -> None:
    """After HEARTBEAT seconds without a line, a line says what is still being checked (or loaded)."""
    import io
    import time

    from dpverify.report.progress import Lines
    now = [100.0]
    stream = io.StringIO()
    lines = Lines(stream, clock=lambda: now[0], heartbeat=5.0, jobs=2)
    lines.loading("a.py", 0, 2)
    lines.loading("slow.py", 1, 2)
    now[0] += 6
    lines.tick()
    assert stream.getvalue().splitlines()[-1] == "dpverify: [0/2 files, 0:06] still loading a.py (6 s), slow.py (6 s)"
    lines.loaded("a.py", 4)
    lines.loaded("slow.py", 30)
    lines.planned([("a.py", 4), ("slow.py", 30)])
    lines.started("a.py")
    lines.started("slow.py")
    for _ in range(4):
        lines.point("a.py", "rr:private")
    lines.finished("a.py", [], 1.0)
    written = len(stream.getvalue().splitlines())
    now[0] += 4
    lines.tick()  # 4 s of silence: nothing yet
    assert len(stream.getvalue().splitlines()) == written
    now[0] += 2
    lines.point("slow.py", "s:c")
    lines.tick()
    last = stream.getvalue().splitlines()[-1]
    assert last.startswith("dpverify: [1/2 files, 5/34 points, 0:12, ~") and \
        last.endswith("still checking slow.py (1/30 points, 6 s)"), last
    # loading in this process (a filtered run): a thread keeps the log alive while this process is busy
    stream = io.StringIO()
    busy = Lines(stream, heartbeat=0.2)
    busy.loading("spec/accounting/slow.py", 0, 1, here=True)
    time.sleep(1.5)
    busy.close()
    assert "still loading spec/accounting/slow.py" in stream.getvalue(), stream.getvalue()
    # this process busy importing libraries while workers load: the same thread, stopped before it forks again
    stream = io.StringIO()
    importing = Lines(stream, heartbeat=0.2)
    importing.busy("importing the libraries the spec files use")
    time.sleep(1.5)
    importing.busy(None)
    assert importing._thread is None
    assert "still importing the libraries the spec files use" in stream.getvalue(), stream.getvalue()
