"""Statements are typeset whole: a claim's description (its sympy fields and the formulas its author
wrote as text, such as an accuracy event's name) reads with Greek letters, ≤ ≥, raised exponents and
fractions -- MathML in HTML, LaTeX in Markdown -- and no ASCII operator or ``eps`` is left beside them."""
from __future__ import annotations

import re

import sympy

import dpverify as dp
from dpverify.report import html as html_writer
from dpverify.report import maths
from dpverify.report import markdown as markdown_writer
from dpverify.report.statements import statement

eps = dp.symbol("eps", positive=True)
t = dp.symbol("t", positive=True)


def _event(data, output, t):  # an accuracy event named as the paper writes it
    return False


_event.__name__ = "u <= OPT - (2*1/eps)(ln(|Y|/|Y*|) + t)"

CLAIMS = [dp.private(eps), dp.private(eps / 2), dp.private(4 * eps), dp.private(eps / 2 + 1),
          dp.private(eps, delta=sympy.Rational(1, 1000)), dp.accuracy(_event, sympy.exp(-t)),
          dp.accuracy(_event, 5 * sympy.exp(-eps * t / 4))]
BARE_EPS = re.compile(r"(?<![A-Za-z\\])eps")  # eps, not the eps inside \varepsilon
ASCII = re.compile(r"<=|>=|\*|\^|\beps\b|\bdelta\b")


def _html(parts) -> str:
    return "".join(p.mathml if p.mathml else str(html_writer.prose(p.text)) for p in parts)


def _visible(markup: str) -> str:
    """What a reader sees: the text nodes (tags removed)."""
    return re.sub(r"<[^>]+>", "", markup)


def test_every_statement_is_typeset_in_html_and_markdown() -> None:
    for claim in CLAIMS:
        parts = statement(claim.describe(), claim, claim.kind)
        page = _html(parts)
        assert not ASCII.search(_visible(page)), (claim.describe(), _visible(page))
        assert "ε" in _visible(page), page
        md = str(markdown_writer.statement(parts))
        outside = re.sub(r"\$`[^`]*`\$", "", md)  # text outside the formulas
        assert not ASCII.search(outside.replace("\\", "")), (claim.describe(), md)
        formulas = re.findall(r"\$`([^`]*)`\$", md)
        assert formulas and all(not BARE_EPS.search(f) and "<=" not in f and "*" not in f.replace("^{*}", "") for f in formulas), md


def test_the_accuracy_event_reads_as_one_formula() -> None:
    claim = CLAIMS[5]
    parts = statement(claim.describe(), claim, claim.kind)
    formulas = [p for p in parts if p.latex]
    assert len(formulas) == 1, parts  # P[...] <= e^{-t}: the event and its bound in one formula
    tex = formulas[0].latex
    assert r"\leq" in tex and r"\varepsilon" in tex and r"\frac{1}{\varepsilon}" in tex and r"\ln" in tex
    assert "e^{- t}" in tex
    ml = formulas[0].mathml
    assert "<mo>≤</mo>" in ml and "<mi>ε</mi>" in ml and "<mfrac>" in ml and "<msup>" in ml and "<mo>−</mo>" in ml


def test_exponents_in_messages_are_raised_and_quoted_outputs_untouched() -> None:
    html = str(html_writer.prose("ratio 1.6 > e^(eps/2) = 1.28 at o='eps' <x>"))
    assert "e<sup>ε/2</sup>" in html and "o=&#39;eps&#39;" in html and "&lt;x&gt;" in html and "^" not in html
    md = str(markdown_writer.prose("delta <= e^eps"))
    assert md.startswith("δ ≤ e<sup>ε</sup>")


def test_greek_symbols_in_sympy_formulas() -> None:
    rho, delta = sympy.symbols("rho delta", positive=True)
    expr = sympy.exp(eps / 4) * delta / rho + sympy.Symbol("eps_0")
    tex, ml = maths.latex(expr), maths.mathml(expr)
    assert r"\varepsilon" in tex and r"\delta" in tex and r"\rho" in tex and not BARE_EPS.search(tex)
    assert "eps" not in ml and "ε" in ml and "δ" in ml and "ρ" in ml and "ⅇ" not in ml


def test_hyphenated_words_stay_text() -> None:
    assert maths.prose("eps-DP") == [("eps", True), ("-DP", False)]
    assert maths.prose("sensitivity of x") == [("sensitivity of ", False), ("x", True)]
