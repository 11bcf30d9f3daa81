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
    assert doc["schema_version"] == "1.0" and doc["exit_code"] == 0
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
