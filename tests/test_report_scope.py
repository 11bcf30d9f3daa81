"""Every verdict's scope, on every surface (issue 23, DESIGN.md "Verdicts"): the table, the summary, the
``--json`` document, the pytest items and the reports say which datasets and which parameter values a
``proved`` / ``verified`` / ``consistent`` is about; nothing checked on a finite universe reads as a
statement about all datasets, and no holding verdict goes without its scope."""
from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from rich.console import Console

from dpverify.checks import Options
from dpverify.evidence import PrivacyEvidence, SensitivityEvidence
from dpverify.report import terminal
from dpverify.report.json_report import document
from dpverify.report.model import Settings
from dpverify.report.scope import claim_short, counts, point_scope, spec_sentence
from dpverify.report.site import render
from dpverify.results import ClaimResult, PointResult, SpecReport, Status, universe_text
from dpverify.runner import check_paths, exit_code

REPO = Path(__file__).resolve().parent.parent

UNIVERSE = {"label": "n = 3 over {0, 1/2, 1}, replace-one", "short": "n=3"}
EVERY_PAIR = {"scope": "universe", "note": "every neighbouring pair of the universe"}
LISTED = {"scope": "listed pairs", "pairs": 1, "datasets": 2, "name": "one", "note": "only the listed pairs"}
PROOF = "proved for every eps > 0 (other parameters fixed): 2 distinct polynomial constraints"
UNIVERSE_KINDS = ("private", "zcdp", "renyi", "gdp", "profile", "same_distribution", "conforms", "accuracy",
                  "probability", "stability", "private_prediction", "calibrated")


def _point(status: Status, params: dict | None = None, message: str = "", coverage: dict | None = None,
           evidence=None) -> PointResult:
    return PointResult(params if params is not None else {"eps": "1/2"}, status, message, coverage=coverage,
                       evidence=evidence or PrivacyEvidence())


# ----- the scope of one point ----------------------------------------------------------------------

@pytest.mark.parametrize("kind", UNIVERSE_KINDS)
@pytest.mark.parametrize("status", [Status.PROVED, Status.VERIFIED, Status.CONSISTENT])
@pytest.mark.parametrize("coverage", [EVERY_PAIR, LISTED])
def test_a_verdict_on_a_finite_universe_never_reads_as_all_datasets(kind, status, coverage) -> None:
    scope = point_scope(_point(status, message=PROOF), kind, UNIVERSE, coverage)
    assert scope is not None and scope.label and scope.short  # never missing
    assert scope.all_datasets is False
    assert "all datasets" not in scope.label and "all datasets" not in scope.short
    if coverage is LISTED:
        assert "listed pairs" in scope.label and "listed pairs" in scope.short
    else:
        assert scope.label.startswith(("universe n = 3 over {0, 1/2, 1}, replace-one",
                                       "sampled on universe n = 3 over {0, 1/2, 1}, replace-one"))
        assert "universe n=3" in scope.short


def test_proved_on_the_universe_names_every_eps_and_the_fixed_parameters() -> None:
    scope = point_scope(_point(Status.PROVED, {"eps": "1", "t": "4"}, PROOF), "private", UNIVERSE, EVERY_PAIR)
    assert scope.label == "universe n = 3 over {0, 1/2, 1}, replace-one; every ε > 0 (t = 4 fixed)"
    assert scope.short == "universe n=3, every ε" and scope.parameters == "every value, others fixed"
    alone = point_scope(_point(Status.PROVED, {"rho": "1/10"}, "proved for every rho > 0: D_alpha / alpha ..."),
                        "zcdp", UNIVERSE, EVERY_PAIR)
    assert alone.label.endswith("; every ρ > 0") and alone.parameters == "every value"


def test_verified_names_the_grid_point() -> None:
    scope = point_scope(_point(Status.VERIFIED, {"eps": "1/2"}), "private", UNIVERSE, EVERY_PAIR)
    assert scope.label == "universe n = 3 over {0, 1/2, 1}, replace-one; grid point ε = 1/2"
    assert (scope.short, scope.parameters) == ("universe n=3, grid", "grid point")
    bare = point_scope(_point(Status.VERIFIED, {}), "accuracy", UNIVERSE, EVERY_PAIR)
    assert (bare.short, bare.parameters) == ("universe n=3", "none")


def test_a_proof_for_every_dataset_reads_all_datasets() -> None:
    label = "all datasets over {0, 1}, every size n >= 1, every eps"
    scope = point_scope(_point(Status.PROVED, coverage={"scope": "all datasets", "label": label}), "private",
                        UNIVERSE, EVERY_PAIR)
    assert (scope.kind, scope.all_datasets, scope.label) == ("all datasets", True, label)
    assert scope.short == "all datasets, every ε" and scope.parameters == "every value"
    at_grid = point_scope(_point(Status.PROVED, coverage={
        "scope": "all datasets", "label": "all datasets over [0, 1], every size n >= 2, the parameters at this point"}),
        "private", UNIVERSE, EVERY_PAIR)
    assert at_grid.short == "all datasets, grid" and at_grid.parameters == "grid point"  # not "every ε"


@pytest.mark.parametrize("status", [Status.REFUTED, Status.UNKNOWN, Status.ERROR])
def test_a_verdict_that_does_not_hold_has_no_scope(status) -> None:
    """Not even when a check left an "all datasets" coverage on it."""
    point = _point(status, coverage={"scope": "all datasets", "label": "all datasets over {0, 1}, every eps"})
    assert point_scope(point, "private", UNIVERSE, EVERY_PAIR) is None


def test_formulas_sensitivities_and_n_ranges() -> None:
    formula = point_scope(_point(Status.PROVED, {}), "identity", None, None)
    assert formula.kind == "formula" and not formula.all_datasets and "every value of its symbols" in formula.label
    derived = point_scope(_point(Status.PROVED, {}, evidence=SensitivityEvidence(n_min=2, relation="replace-one")),
                          "sensitivity", UNIVERSE, EVERY_PAIR)
    assert derived.all_datasets and derived.label == ("all datasets over the query's record domain, every n >= 2 "
                                                      "(replace-one)")
    measured = point_scope(_point(Status.VERIFIED, {}), "sensitivity", UNIVERSE, EVERY_PAIR)
    assert not measured.all_datasets and measured.kind == "universe"
    n_range = {"scope": "n range", "from": 3, "to": 40, "label": "n = 3..40", "note": "checked for n = 3..40"}
    sample = point_scope(_point(Status.VERIFIED, {"q": "0"}, coverage=n_range), "sample_complexity", UNIVERSE,
                         EVERY_PAIR)
    assert (sample.kind, sample.short, sample.all_datasets) == ("n range", "n = 3..40", False)
    assert sample.label == "n = 3..40; grid point q = 0"


def test_the_universe_text() -> None:
    import dpverify as dp
    from fractions import Fraction
    assert universe_text(dp.universe([0, Fraction(1, 2), 1], n=3, neighbours=dp.REPLACE_ONE)) == UNIVERSE
    assert universe_text(dp.universe(range(10), n=range(1, 3), neighbours=dp.ADD_REMOVE)) == {
        "label": "n = 1..2 over {0, 1, 2, 3, 4, 5, ... (10 records)}, add/remove-one", "short": "n=1..2"}
    listed = universe_text(dp.pairs([((0, 1), (1, 1))], neighbours=dp.linf_one, name="one pair"))
    assert listed == {"label": "1 listed pairs (one pair) of 2 datasets, linf_one", "short": "1 listed pairs"}
    assert universe_text(None) is None


def test_a_claim_and_a_spec_say_their_scope() -> None:
    spec = SpecReport("s.py", "s", coverage=EVERY_PAIR, universe=UNIVERSE)
    claim = ClaimResult("s.py", "s", "private", "private", "eps-DP",
                        [_point(Status.PROVED, {"eps": "1"}, PROOF), _point(Status.VERIFIED, {"eps": "2"})])
    spec.claims.append(claim)
    assert claim_short(spec, claim) == "universe n=3, every ε; universe n=3, grid"
    sentence = spec_sentence(spec)
    assert sentence.startswith("Scope: 2 claim points on the declared universe only (n = 3 over {0, 1/2, 1}, "
                               "replace-one), not all datasets")
    assert "all datasets of every size" not in sentence
    found = counts([spec])
    assert (found.all_datasets, found.universe_every, found.universe_grid) == (0, 1, 1)


# ----- every surface, end to end ---------------------------------------------------------------------

SPEC = textwrap.dedent('''
    from sympy import Rational
    import dpverify as dp
    eps = dp.symbol("eps", positive=True)

    def branchy(data, eps):  # branches on the data: no proof for every dataset, a proof on the universe
        if data[0] == 1:
            return dp.randomized_response(1, eps)
        return dp.randomized_response(0, eps)

    def on_grid(data, eps):  # control flow on eps: no proof for every eps, a grid verdict
        return dp.randomized_response(data[0], eps if eps < 5 else eps / 2)

    BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)
    universe_only = dp.spec(branchy, name="universe_only", universe=BIT, grid={eps: [Rational(1, 2), 1]},
                            claims=[dp.private(eps), dp.private(eps / 2, id="half", expect="refuted")])
    grid_only = dp.spec(on_grid, name="grid_only", universe=BIT, grid={eps: [1]}, claims=[dp.private(eps)])
''')


@pytest.fixture(scope="module")
def spec_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scope") / "spec" / "scoped.py"
    path.parent.mkdir()
    path.write_text(SPEC)
    return path


@pytest.fixture(scope="module")
def checked(spec_file: Path):
    return check_paths([str(spec_file)], Options(), keep_specs=True)


def test_json_gives_every_holding_point_its_scope(checked) -> None:
    doc = document(checked)
    points = {(s["name"], c["id"], p["params"]["eps"]): p for s in doc["specs"] for c in s["claims"]
              for p in c["points"]}
    proved = points[("universe_only", "private", "1")]
    assert proved["status"] == "proved", proved["message"]
    assert proved["scope"] == {"kind": "universe", "all_datasets": False, "parameters": "every value",
                               "label": "universe n = 1 over {0, 1}, replace-one; every ε > 0",
                               "short": "universe n=1, every ε"}
    assert proved["coverage"] is None  # kept as it was
    grid = points[("grid_only", "private", "1")]
    assert grid["status"] == "verified" and grid["scope"]["label"].endswith("; grid point ε = 1")
    assert points[("universe_only", "half", "1")]["scope"] is None  # refuted: the witness is what counts
    assert doc["schema_version"] == "1.1"


def test_the_table_and_the_summary_show_the_scope(checked) -> None:
    out = io.StringIO()
    terminal.render(checked, Console(file=out, width=200))
    text = out.getvalue()
    rows = [line for line in text.splitlines() if "scoped.py::" in line]
    assert len(rows) == 5
    for row in rows:
        assert "all datasets" not in row
        if " proved " in row:
            assert "universe n=1, every ε" in row
        if " verified " in row:
            assert "universe n=1, grid" in row
    assert "scope of the 3 claim points that hold: 0 for all datasets, 2 on a finite universe for every value " \
           "of a parameter, 1 on a finite universe at grid points" in text
    assert "the declared finite universe only" in text  # the legend


def test_the_reports_show_the_scope(checked) -> None:
    files = render(checked, Settings(precision=50), exit_code(checked))
    page, md = files["scoped.universe_only.html"], files["scoped.universe_only.md"]
    assert '<span class="badge proved">proved</span> <span class="scope">[universe n=1, every ε]</span>' in page
    assert '<p class="scope-line">Scope: 2 claim points on the declared universe only (n = 1 over {0, 1}, ' \
           'replace-one), not all datasets' in page
    assert '<dt>scope</dt><dd class="scope">universe n = 1 over {0, 1}, replace-one; every ε &gt; 0</dd>' in page
    assert "**proved** \\[universe n=1, every ε\\]" in md
    assert "all datasets of every size" not in page + md
    assert "\\[universe n=1, grid\\]" in files["index.md"]
    assert ("Scope of the 3 claim points that hold: 0 for all datasets, 2 on a finite universe for every value of "
            "a parameter, 1 on a finite universe at grid points.") in files["index.md"]
    report_json = json.loads(files["report.json"])
    assert all(p["scope"] is None or p["scope"]["all_datasets"] is False
               for s in report_json["specs"] for c in s["claims"] for p in c["points"])


def test_a_structural_proof_shows_all_datasets_and_its_steps() -> None:
    """The reports render what a proof for every dataset records: its coverage and its steps."""
    steps = ["Delta(n) = 1/n derived for every n >= 1", "Laplace calibration: scale 1/(n eps) gives eps-DP"]
    evidence = PrivacyEvidence(claimed_epsilon="1", achieved_epsilon="1")
    evidence.proof_steps = steps  # the field a structural proof sets (dpverify.evidence)
    point = _point(Status.PROVED, {"eps": "1"}, "proved for every dataset", evidence=evidence, coverage={
        "scope": "all datasets", "label": "all datasets over [0, 1], every size n >= 1, every eps"})
    spec = SpecReport("mean.py", "mean", coverage=EVERY_PAIR, universe=UNIVERSE)
    spec.claims.append(ClaimResult("mean.py", "mean", "private", "private", "eps-DP", [point]))
    from dpverify.results import Report
    files = render(Report([spec]), Settings(precision=50), 0)
    page = files["mean.html"]
    assert '<span class="scope">[all datasets, every ε]</span>' in page
    assert "Scope: 1 claim point for all datasets of every size." in page
    assert "<h4>Proof for every dataset</h4>" in page and "<dt>step 2</dt><dd>Laplace calibration" in page
    assert "Proof for every dataset" in files["mean.md"]
    assert document(Report([spec]))["specs"][0]["claims"][0]["points"][0]["scope"]["all_datasets"] is True


def test_pytest_items_carry_the_scope(spec_file: Path) -> None:
    junit = spec_file.parent.parent / "junit.xml"
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v", "spec",
                          f"--junitxml={junit}"], capture_output=True, text=True, cwd=spec_file.parent.parent,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "universe_only::private[eps_1] PROVED [universe n=1, every ε]" in run.stdout
    assert "grid_only::private[eps_1] VERIFIED [universe n=1, grid]" in run.stdout
    assert "all datasets" not in run.stdout
    xml = junit.read_text()
    assert 'name="dpverify_scope_label" value="universe n = 1 over {0, 1}, replace-one; every ε &gt; 0"' in xml
    assert 'name="dpverify_all_datasets" value="False"' in xml


# ----- the committed catalogue report ------------------------------------------------------------------

def test_the_catalogue_report_scopes_every_holding_point() -> None:
    """reports/report.json: every point that holds has a scope with a label; only a check's "all datasets"
    coverage or a derived sensitivity reads as all datasets (a finite universe never does)."""
    doc = json.loads((REPO / "reports" / "report.json").read_text(encoding="utf-8"))
    if doc.get("schema_version") == "1.0":
        pytest.skip("reports/ predates scopes: regenerate it (dpverify report spec/ --out reports/)")
    seen = 0
    for s in doc["specs"]:
        for c in s["claims"]:
            for p in c["points"]:
                if p["status"] not in ("proved", "verified", "consistent"):
                    assert p["scope"] is None
                    continue
                seen += 1
                scope = p["scope"]
                assert scope and scope["label"] and scope["short"], (s["name"], c["id"], p["params"])
                cover = (p["coverage"] or {}).get("scope")
                if scope["all_datasets"]:
                    assert cover == "all datasets" or (c["kind"] == "sensitivity" and p["status"] == "proved"), \
                        (s["name"], c["id"], scope)
                else:
                    assert "all datasets" not in scope["label"] + scope["short"], (s["name"], c["id"], scope)
                if cover is None and (s["coverage"] or {}).get("scope") == "universe" and c["kind"] in UNIVERSE_KINDS:
                    assert scope["label"].startswith(("universe n", "sampled on universe n")), scope
    assert seen > 300
