"""Report sections of the audits of implementations: the statistical audit of a black box (tested
cells against the spec's exact law, the code's ε bound against the claimed), conformance with a
tolerance (largest difference, the witness first) and the floating-point check (the witness as a
double, the exact counts of a finite image).  Numbers are read back from the typed evidence, so a
section that shows another cell, another interval or another level fails."""
from __future__ import annotations

import math
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from dpverify.checks import Options
from dpverify.evidence import ConformanceEvidence, FloatEvidence, StatisticalEvidence
from dpverify.report import plots, sections
from dpverify.report.blocks import Figure, Pairs, Paragraph, Table, WitnessBox
from dpverify.report.model import Settings
from dpverify.report.section_parts import Context, short
from dpverify.report.site import render, write
from dpverify.results import Report, Status
from dpverify.runner import check_paths, exit_code

REPO = Path(__file__).resolve().parent.parent
BLACK_BOX = str(REPO / "spec/audits/black_box.py")
FLOATING = str(REPO / "spec/audits/floating_point.py")

IMPLEMENTATION = textwrap.dedent('''
    import math
    from fractions import Fraction
    import dpverify as dp

    eps = dp.symbol("eps", positive=True)
    BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)
    ROUNDING = Fraction(1, 2 ** 50)

    def rr(data, eps):
        return dp.randomized_response(data[0], eps)

    def textbook_rr(data, eps, rng):
        keep = math.exp(eps) / (1 + math.exp(eps))
        return data[0] if rng.random() < keep else 1 - data[0]

    def rr_double_eps(data, eps, rng):
        keep = math.exp(2 * eps) / (1 + math.exp(2 * eps))
        return data[0] if rng.random() < keep else 1 - data[0]

    rounding = dp.spec(dp.implementation(textbook_rr), universe=BIT, grid={eps: [Fraction(1, 2)]},
                       claims=[dp.conforms(rr, tolerance=ROUNDING, id="rounding"),
                               dp.conforms(rr, id="exact", expect="refuted")])
    double_eps = dp.spec(dp.implementation(rr_double_eps), universe=BIT, grid={eps: [Fraction(1, 2)]},
                         claims=[dp.conforms(rr, tolerance=ROUNDING, id="rounding", expect="refuted")])
''')


def _claim(report: Report, spec: str, claim: str) -> Any:
    for s in report.specs:
        if s.name == spec:
            return next(c for c in s.claims if c.claim_id == claim)
    raise AssertionError(f"no spec {spec}")


def _blocks(claim: Any) -> list[Any]:
    return sections.blocks_for(claim, None, Context("t", lambda text: text))


@pytest.fixture(scope="module")
def audits() -> Report:
    return check_paths([BLACK_BOX, FLOATING], Options())


@pytest.fixture(scope="module")
def implementation(tmp_path_factory: pytest.TempPathFactory) -> Report:
    path = tmp_path_factory.mktemp("impl") / "impl.py"
    path.write_text(IMPLEMENTATION)
    return check_paths([str(path)], Options())


# ----- statistical audit -----------------------------------------------------------------------

def test_conformance_table_shows_every_tested_cell_with_its_interval(audits: Report) -> None:
    claim = _claim(audits, "seeded_rr", "conforms")
    blocks = _blocks(claim)
    tables = [b for b in blocks if isinstance(b, Table)]
    assert len(tables) == len(claim.points) == 2  # a table per grid point
    for p, table in zip(claim.points, tables):
        ev = p.evidence
        assert isinstance(ev, StatisticalEvidence) and p.status is Status.CONSISTENT
        assert ev.sampled and len(ev.sampled) == ev.tests == 4  # two datasets, two outputs each
        assert float(ev.level) == pytest.approx(1e-9 / 4)
        assert len(table.rows) == 4
        for cell, row in zip(ev.sampled, table.rows):
            assert row[0] == cell.dataset and row[1] == cell.output
            assert row[2] == short(cell.spec_probability)
            assert row[3] == f"{cell.count:,} / 20,000"
            assert row[5] == f"[{short(cell.interval[0], 6)}, {short(cell.interval[1], 6)}]"
            low, high = map(float, cell.interval)
            assert low <= float(cell.spec_probability) <= high and row[6] == "yes"  # consistent: all inside
    sampling = [b.text for b in blocks if isinstance(b, Paragraph) and b.label == "Sampling"]
    assert sampling and sampling[0].startswith("20,000 samples per dataset and run (seed 0); overall error "
                                               "probability 1/1000000000 over 4 tests (2.5e-10 per test")


def test_the_frequency_plot_gets_the_evidence_numbers(audits: Report, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[tuple]] = []
    real = plots.sampled_frequencies
    monkeypatch.setattr(plots, "sampled_frequencies", lambda cells, key: seen.append(list(cells)) or real(cells, key))
    claim = _claim(audits, "seeded_rr", "conforms")
    figures = [b for b in _blocks(claim) if isinstance(b, Figure)]
    assert len(figures) == 2 and all(f.svg.startswith("<svg") for f in figures)
    for p, cells in zip(claim.points, seen):
        expected = [(f"{c.dataset} → {c.output}", c.count / 20000, float(c.interval[0]), float(c.interval[1]),
                     float(c.spec_probability)) for c in p.evidence.sampled]
        assert [c[0] for c in cells] == [e[0] for e in expected]
        assert [c[1:] for c in cells] == [pytest.approx(e[1:]) for e in expected]


def test_refuted_conformance_shows_the_rejected_cell_first(audits: Report) -> None:
    claim = _claim(audits, "seeded_rr_double_eps", "conforms")
    blocks = _blocks(claim)
    boxes = [b for b in blocks if isinstance(b, WitnessBox)]
    assert len(boxes) == 2
    for p, box in zip(claim.points, boxes):
        ev = p.evidence
        items = dict(box.items)
        # the sequential test stopped at a look: k of the first ev.samples draws (of the 20,000 budgeted)
        assert items["frequency k/n"] == f"{ev.worst.count}/{ev.samples}" and ev.samples <= 20000
        assert items["spec's P(o) (exact)"] == ev.worst.spec_probability
        assert "lies outside" in box.verdict and "re-run with fresh seeds agrees" in box.verdict
        low, high = map(float, ev.worst.interval)
        assert not low <= float(ev.worst.spec_probability) <= high
    rows = [row for b in blocks if isinstance(b, Table) for row in b.rows]
    assert rows and rows[-1][6] == "no"  # the audit stopped at the rejected test, shown last


def test_statistical_privacy_shows_the_code_epsilon_bound_against_the_claim(audits: Report) -> None:
    for spec, status, sign in (("seeded_rr", Status.CONSISTENT, "<"),
                               ("seeded_rr_double_eps", Status.REFUTED, ">")):
        claim = _claim(audits, spec, "private")
        blocks = _blocks(claim)
        # a black box's private claim gets the statistical section, not the exact privacy table
        assert not any(isinstance(b, Table) and "achieved ε" in b.headers for b in blocks)
        pairs = [dict(b.items) for b in blocks if isinstance(b, Pairs) and "claimed ε" in dict(b.items)]
        tables = [b for b in blocks if isinstance(b, Table)]
        assert len(pairs) == len(tables) == 2
        for p, facts, table in zip(claim.points, pairs, tables):
            ev = p.evidence
            assert p.status is status and ev.epsilon_lower_bound is not None
            assert facts["claimed ε"] == short(ev.claimed_epsilon)
            bound = facts["code's ε (lower confidence bound)"]
            assert bound.startswith(f"≥ {short(ev.epsilon_lower_bound, 6)}") and f"({sign} the claimed ε)" in bound
            spec_eps = float(facts["spec's ε (largest exact loss over the universe)"])
            assert spec_eps == pytest.approx(float(ev.claimed_epsilon))  # rr is exactly eps-DP
            assert [row[7] for row in table.rows] == [short(c.epsilon_lower_bound, 6) for c in ev.sampled]
            assert max(float(c.epsilon_lower_bound) for c in ev.sampled) == float(ev.epsilon_lower_bound)
            assert len(table.rows) == ev.tests // 2
        if status is Status.REFUTED:
            box = next(b for b in blocks if isinstance(b, WitnessBox))
            assert dict(box.items)["code's ε ≥"] == claim.points[0].evidence.epsilon_lower_bound
            assert box.verdict.startswith("code's ε ≥ ") and " > claimed ε = 0.5" in box.verdict


def test_epsilon_bound_plot_is_deterministic_and_marks_infinite_loss() -> None:
    cells = [("(0,), (1,), 0", 0.9, 0.5), ("(1,), (0,), 1", -math.inf, math.inf), ("x", 0.2, None)]
    first = plots.epsilon_bounds(cells, 0.5, "k")
    assert first == plots.epsilon_bounds(cells, 0.5, "k") and first.startswith("<svg")
    assert "claimed ε" in first and "exact loss" in first
    assert plots.sampled_frequencies([("a → 1", 0.5, 0.4, 0.6, 0.55)], "f") != \
        plots.sampled_frequencies([("a → 1", 0.5, 0.4, 0.6, 0.45)], "f")  # the exact law is drawn


# ----- floating point --------------------------------------------------------------------------

def test_float_witness_is_a_double_with_its_grid_index(audits: Report) -> None:
    claim = _claim(audits, "textbook_laplace", "numpy_laplace")
    p = claim.points[0]
    ev = p.evidence
    assert isinstance(ev, FloatEvidence) and p.status is Status.REFUTED
    box = next(b for b in _blocks(claim) if isinstance(b, WitnessBox))
    items = dict(box.items)
    y = float(p.witness.output)
    assert items["output y (decimal)"] == repr(y) and items["output y (hex)"] == y.hex() == ev.witness_output_hex
    assert items["grid index k for X"] == f"{ev.witness_k:,}"
    assert items["P(y | X')"] == "0"
    assert box.verdict == (f"no grid index k' among the {ev.grid_points:,} uniforms gives y from X': the privacy "
                           "loss is infinite")


def test_finite_image_shows_the_exact_epsilon_and_the_counts(audits: Report) -> None:
    claim = _claim(audits, "exact_integer_geometric", "eps_plus_2^-38")
    p = claim.points[0]
    ev = p.evidence
    assert isinstance(ev, FloatEvidence) and p.status is Status.VERIFIED and ev.output_counts
    blocks = _blocks(claim)
    facts = dict(next(b for b in blocks if isinstance(b, Pairs)).items)
    assert facts["exact ε of the doubles"] == ev.achieved_epsilon  # in full: 1.0000000000020...
    assert ev.achieved_epsilon.startswith("1.00000000000204")
    table = next(b for b in blocks if isinstance(b, Table))
    assert len(table.rows) == len(ev.output_counts) == 11
    for (y, count, count_prime), row in zip(ev.output_counts, table.rows):
        assert row[1] == float(y).hex() and row[2] == f"{count:,}" and row[3] == f"{count_prime:,}"
    largest = [row for row in table.rows if "(largest loss)" in row[0]]
    assert [row[1] for row in largest] == [ev.epsilon_output_hex]
    ratio = max(c / cp for _, c, cp in ev.output_counts)
    assert math.log(ratio) == pytest.approx(float(ev.achieved_epsilon), rel=1e-12)


# ----- conformance (exact) ---------------------------------------------------------------------

def test_conforms_with_tolerance_shows_the_largest_difference(implementation: Report) -> None:
    claim = _claim(implementation, "textbook_rr", "rounding")
    p = claim.points[0]
    ev = p.evidence
    assert isinstance(ev, ConformanceEvidence) and p.status is Status.VERIFIED
    assert 0 < float(ev.largest_difference) < 2 ** -50 and float(ev.tolerance) == 2 ** -50
    table = next(b for b in _blocks(claim) if isinstance(b, Table))
    assert table.rows == (("eps=1/2", "verified", short(ev.tolerance), short(ev.largest_difference), *ev.largest_at),)


def test_refuted_conformance_witness_names_both_probabilities(implementation: Report) -> None:
    for spec, claim_id, above in (("rr_double_eps", "rounding", "> tolerance 8.881784197e-16"),
                                  ("textbook_rr", "exact", "> tolerance 0")):
        claim = _claim(implementation, spec, claim_id)
        blocks = _blocks(claim)
        assert isinstance(blocks[0], WitnessBox)
        items = dict(blocks[0].items)
        w = claim.points[0].witness
        assert items["P(o) under the implementation"] == w.p and items["P(o) under the spec program"] == w.p_prime
        assert float(items["difference"]) == pytest.approx(abs(float(w.p) - float(w.p_prime)))
        assert blocks[0].verdict.endswith(above), blocks[0].verdict


# ----- whole pages -----------------------------------------------------------------------------

def test_audit_pages_are_the_same_bytes_across_two_runs(tmp_path: Path) -> None:
    path = tmp_path / "impl.py"
    path.write_text(IMPLEMENTATION)
    files = []
    for _ in range(2):
        report = check_paths([BLACK_BOX, str(path)], Options())
        files.append(render(report, Settings(precision=50), exit_code(report)))
    assert files[0] == files[1]
    page = files[0]["black_box.seeded_rr.md"]
    assert page.count("figures/black_box.seeded_rr-conforms-frequencies-") >= 2
    assert "figures/black_box.seeded_rr-private-epsilon-bounds-0.svg" in page
    svgs = [name for name in files[0] if name.endswith(".svg") and "frequencies" in name]
    assert svgs and all(re.search(r"<svg\b", files[0][name]) for name in svgs)


def test_audit_tables_fit_and_witnesses_come_first(tmp_path: Path) -> None:
    from . import test_report_browser as browser
    if browser.CHROMIUM is None:
        pytest.skip(browser.MISSING) if not browser.REQUIRED else pytest.fail(browser.MISSING)
    path = tmp_path / "impl.py"
    path.write_text(IMPLEMENTATION)
    report = check_paths([BLACK_BOX, FLOATING, str(path)], Options())
    out = tmp_path / "site"
    write(report, out, Settings(precision=50), exit_code(report))
    pages = sorted(p for p in out.glob("*.html") if p.name != "index.html")
    measured = browser.measure(pages, tmp_path)
    assert len(measured) == len(pages) * len(browser.WIDTHS)
    overflowing = [(m["page"], m["width"], t) for m in measured for t in m["tables"]
                   if t["scroll"] > t["client"] or t["width"] > t["parent"] + 0.5]
    assert not overflowing, f"tables wider than their box: {overflowing}"
    assert not [(m["page"], m["width"]) for m in measured if m["pageScroll"] > 0], "a page scrolls sideways"
    refuted = [(m["page"], m["width"], r) for m in measured for r in m["refuted"]]
    assert len({(page, r["claim"]) for page, _, r in refuted}) >= 6
    late = [(page, width, r) for page, width, r in refuted if r["offset"] is None or r["offset"] >= browser.HEIGHT]
    assert not late, f"witnesses below the first screen of their section: {late}"


REFUSED = textwrap.dedent('''
    import math
    from fractions import Fraction
    import numpy as np
    import dpverify as dp

    eps = dp.symbol("eps", positive=True)

    def rr(data, eps):
        return dp.randomized_response(data[0], eps)

    def seeded_rr(data, eps, seed):
        rng = np.random.default_rng(seed)
        keep = math.exp(eps) / (1 + math.exp(eps))
        return data[0] if rng.random() < keep else 1 - data[0]

    refused = dp.spec(dp.black_box(seeded_rr, spec_program=rr, samples=1000),
                      universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE), grid={eps: [1]},
                      claims=[dp.conforms(rr, tolerance=Fraction(1, 100), id="within")])
''')


def test_a_refused_audit_states_no_sampling_budget(tmp_path: Path) -> None:
    path = tmp_path / "refused.py"
    path.write_text(REFUSED)
    claim = _claim(check_paths([str(path)], Options()), "seeded_rr", "within")
    p = claim.points[0]
    assert p.status is Status.UNKNOWN and isinstance(p.evidence, StatisticalEvidence) and p.evidence.tests == 0
    blocks = _blocks(claim)
    assert not [b for b in blocks if isinstance(b, (Paragraph, Table, Figure))]  # nothing was sampled


def test_a_long_audit_records_its_first_cells_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from dpverify.checks.audit import statistical
    monkeypatch.setattr(statistical, "SAMPLED_CELLS", 3)
    claim = _claim(check_paths([BLACK_BOX], Options()), "seeded_rr", "conforms")
    ev = claim.points[0].evidence
    assert ev.tests == 4 and len(ev.sampled) == 3 and claim.points[0].status is Status.CONSISTENT
    table = next(b for b in _blocks(claim) if isinstance(b, Table))
    assert len(table.rows) == 3 and "(the first 3 of the 4 tests, in the order made" in table.caption
