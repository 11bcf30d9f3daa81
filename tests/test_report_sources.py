"""The report's comparison of sources (report/sections_sources.py): every profile claim that names its
source is drawn, per composition, against the exact delta_T(eps) in one plot and one table, an
under-report marked; claims without a source keep their own comparison table; pages without sourced
claims get no such section."""
import textwrap
from fractions import Fraction

import pytest
import sympy

import dpverify as dp
from dpverify.evidence import ProfileRow
from dpverify.options import Options
from dpverify.report.blocks import Figure, Heading, Table
from dpverify.report.model import Settings, build
from dpverify.report.sections_accounting import ratio
from dpverify.report.site import render
from dpverify.runner import check_paths

SPEC = textwrap.dedent('''
    from fractions import Fraction

    import sympy

    import dpverify as dp

    KEEP = Fraction(3, 4)  # randomized response with eps0 = ln 3
    BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)
    EXACT = sympy.Rational(9, 16) - sympy.E / 16  # delta_2(1), see delta_2 in the test


    def rr(data):
        bit = data[0]
        return dp.categorical({bit: KEEP, 1 - bit: 1 - KEEP})


    rr_sources = dp.spec(rr, name="rr_sources", universe=BIT, claims=[
        dp.profile(at=[1], delta=EXACT * sympy.Rational(3, 2), times=2, source="accountant A", id="a_T2"),
        dp.profile(at=[1, 2], delta=[EXACT * sympy.Rational(9, 10), 1], times=2, source="accountant B", id="b_T2"),
        dp.profile(at=[1], delta=Fraction(1, 2), times=3, source="accountant A", id="a_T3"),
        dp.profile(at=[1], delta=Fraction(1, 2), times=2, id="unsourced")])

    plain = dp.spec(rr, name="plain", universe=BIT, claims=[dp.profile(at=[1], delta=Fraction(1, 2), times=2)])
    ''')


def delta_2(eps: sympy.Expr) -> sympy.Expr:
    """delta_2(eps) of randomized response with keep probability 3/4, by hand: the composed losses are
    2 ln 3 (mass 9/16 against 1/16), 0 (6/16 against 6/16) and -2 ln 3 (1/16 against 9/16); for
    0 <= eps < 2 ln 3 only the first counts."""
    return sympy.Rational(9, 16) - sympy.exp(eps) * sympy.Rational(1, 16)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("specs") / "sources.py"
    path.write_text(SPEC)
    return check_paths([str(path)], Options())


@pytest.fixture(scope="module")
def pages(report):
    return {p.name: p for p in build(report, Settings(precision=50), 1).pages}


@pytest.fixture(scope="module")
def page_and_report(pages, report):
    return pages["rr_sources"], report


def test_one_plot_and_table_per_composition(page_and_report):
    page, _ = page_and_report
    headings = [b.text for b in page.sources if isinstance(b, Heading)]
    assert headings == ["2-fold", "3-fold"]
    tables = [b for b in page.sources if isinstance(b, Table)]
    two = tables[0]
    assert [row[0] for row in two.rows] == ["accountant A", "accountant B", "accountant B"]
    by = {(row[0], row[1]): row for row in two.rows}
    assert by[("accountant A", "1")][5] == "slack" and by[("accountant A", "1")][4] == "1.5"
    assert by[("accountant B", "1")][5] == "under-report" and by[("accountant B", "1")][4] == "0.9"
    assert by[("accountant B", "2")][5] == "slack"
    assert float(by[("accountant A", "1")][2]) == pytest.approx(float(delta_2(sympy.Integer(1))), rel=1e-9)
    assert "unsourced" not in repr(page.sources)
    figures = [b for b in page.sources if isinstance(b, Figure)]
    assert len(figures) == 2
    svg = figures[0].svg
    assert "accountant A" in svg and "accountant B" in svg and "under-report (violation)" in svg
    assert "under-report" not in figures[1].svg  # the 3-fold source holds


def test_claims_keep_their_own_table_only_without_a_source(page_and_report):
    page, _ = page_and_report
    views = {c.id: c for c in page.claims}
    own = [b for b in views["unsourced"].blocks if isinstance(b, Table) and "ratio" in b.headers]
    assert len(own) == 1
    assert not [b for b in views["a_T2"].blocks if isinstance(b, Table) and "ratio" in b.headers]
    assert views["b_T2"].status == "refuted" and views["a_T2"].status == "verified"


def test_rendered_pages_carry_the_section_and_its_figures(page_and_report):
    _, report = page_and_report
    files = render(report, Settings(precision=50), 1)
    md = files["sources.rr_sources.md"]
    assert "## Reported against exact" in md
    assert md.index("## Reported against exact") < md.index("### a\\_T2")
    html = files["sources.rr_sources.html"]
    assert 'id="sources"' in html
    assert [k for k in files if k.startswith("figures/") and "sources-T2" in k]


def test_a_page_without_sources_has_no_section(pages, report):
    assert pages["plain"].sources == []
    files = render(report, Settings(precision=50), 1)
    plain = [v for k, v in files.items() if k.startswith("sources.plain")]
    assert plain and not any("Reported against exact" in v for v in plain)


def test_a_ratio_near_one_keeps_its_sign():
    """4 digits would print 1 for both 1 + 2e-7 (slack) and 1 - 2e-7 (an under-report)."""
    assert ratio(ProfileRow("1", "1.0000002", achieved="1")) == "1 + 2e-07"
    assert ratio(ProfileRow("1", "0.9999998", achieved="1")) == "1 − 2e-07"
    assert ratio(ProfileRow("1", "1", achieved="1")) == "1"
    assert ratio(ProfileRow("1", "3", achieved="2")) == "1.5"


def test_source_must_be_a_name():
    with pytest.raises(dp.SpecError, match="not a name"):
        dp.profile(at=[1], delta=Fraction(1, 2), source="  ")
    assert dp.profile(at=[1], delta=Fraction(1, 2), source="paper, Thm 3").source == "paper, Thm 3"


def test_a_reported_float_reads_as_the_float():
    """An accountant's answer is claimed as the float's exact binary value; the statement prints the float's
    shortest repr (which names that value exactly), not a 40-digit fraction; other rationals stay as they are."""
    reported = Fraction(2.7320101108370499e-09)
    claim = dp.profile(at=[1], delta=sympy.Rational(reported.numerator, reported.denominator), times=10)
    assert claim.describe() == "10-fold: delta(1) <= 2.73201011083705e-09"
    assert dp.profile(at=[sympy.Rational(1, 3)], delta=sympy.Rational(1, 10)).describe() == "delta(1/3) <= 1/10"
