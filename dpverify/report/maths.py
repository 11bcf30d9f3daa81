"""Formulas typeset for the pages: MathML for HTML, LaTeX for Markdown.

HTML pages carry presentation MathML (sympy's printer), which Chromium, Firefox and
Safari render natively: no script, no font file, no network.  sympy's MathML
writer does not escape the text of its nodes (a symbol named ``a<b>`` would become
markup), so :func:`mathml` walks the printer's DOM and serialises it itself,
escaping every text node and attribute.

Markdown pages carry LaTeX from ``sympy.latex``.  Inline formulas are written as
GitHub's ``$`...`$``: GitHub typesets them, and any other renderer shows a code
span, so nothing in a symbol name can become markup or break a table cell.
"""
from __future__ import annotations

import html
import re
from typing import Any, Optional
from xml.dom.minidom import Element, Node

import sympy
from sympy.printing.mathml import MathMLPresentationPrinter

_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#x[0-9A-Fa-f]+);")
RELATIONS = {"=": ("=", "="), "<=": (r"\leq", "≤"), "<": (r"<", "<"), ">=": (r"\geq", "≥"), ">": (r">", ">")}


def _text(data: str) -> str:
    """A text node of sympy's printer as escaped XML: its entity references (``&InvisibleTimes;``)
    become characters first, then ``& < >`` are escaped."""
    return html.escape(_ENTITY.sub(lambda m: html.unescape(m.group(0)), data), quote=False)


def _serialise(node: Node) -> str:
    if node.nodeType == Node.TEXT_NODE:
        return _text(node.data)  # type: ignore[attr-defined]
    if not isinstance(node, Element):
        return ""
    attrs = "".join(f' {k}="{html.escape(v)}"' for k, v in sorted(node.attributes.items()))
    inner = "".join(_serialise(child) for child in node.childNodes)
    return f"<{node.tagName}{attrs}>{inner}</{node.tagName}>"


def _node(expr: Any) -> str:
    """The MathML of one expression (without the ``<math>`` element)."""
    return _serialise(MathMLPresentationPrinter()._print(sympy.sympify(expr)))


def mathml(expr: Any, display: bool = False, grouped: bool = False) -> str:
    """``expr`` as a ``<math>`` element (``display="block"`` when ``display``; in parentheses
    when ``grouped``)."""
    opening = '<math display="block">' if display else "<math>"
    inner = f"<mo>(</mo>{_node(expr)}<mo>)</mo>" if grouped else _node(expr)
    return f"{opening}{inner}</math>"


def _pieces(expr: Any) -> list[tuple[str, Any]]:
    """A sum as (operator, term) pieces, so a long formula can wrap between its terms."""
    expr = sympy.sympify(expr)
    if not isinstance(expr, sympy.Add):
        return [("", expr)]
    out = []
    for index, term in enumerate(expr.as_ordered_terms()):
        negative = term.could_extract_minus_sign()
        op = "−" if negative else ("+" if index else "")
        out.append((op, -term if negative else term))
    return out


def relation_mathml(lhs: Any, relation: str, rhs: Any) -> str:
    """``lhs relation rhs`` as inline MathML: one ``<math>`` per term, so a line may break between
    terms (MathML itself does not break lines), joined by spaces."""
    symbol = RELATIONS[relation][1]
    chunks = []
    for side, expr in enumerate((lhs, rhs)):
        for index, (op, term) in enumerate(_pieces(expr)):
            lead = symbol if side == 1 and index == 0 else ""
            ops = "".join(f"<mo>{html.escape(o)}</mo>" for o in (lead, op) if o)
            chunks.append(f"<math>{ops}{_node(term)}</math>")
    return " ".join(chunks)


def latex(expr: Any) -> str:
    return sympy.latex(sympy.sympify(expr))


def relation_latex(lhs: Any, relation: str, rhs: Any) -> str:
    return f"{latex(lhs)} {RELATIONS[relation][0]} {latex(rhs)}"


def inline_markdown(tex: str) -> str:
    """LaTeX as GitHub's inline math ``$`...`$``: a code span elsewhere, so it stays inert.  A
    ``|`` would end a table cell even inside a code span: it is written ``\\vert``; the fence is
    longer than any backtick run inside."""
    tex = tex.replace("|", r"\vert ").replace("\n", " ").strip()
    longest = max((len(run) for run in re.findall(r"`+", tex)), default=0)
    tick = "`" * (longest + 1)
    pad = " " if tex.startswith("`") or tex.endswith("`") else ""
    return f"${tick}{pad}{tex}{pad}{tick}$"


def parse(text: str) -> Optional[sympy.Expr]:
    """A formula written by a check as a string (a derived Δ), or None when it is not one."""
    names = {name: sympy.Symbol(name) for name in ("N", "S", "Q", "O", "C", "E", "I")}
    try:
        return sympy.sympify(text, locals=names)
    except (sympy.SympifyError, SyntaxError, TypeError, ValueError, AttributeError):
        return None


__all__ = ["RELATIONS", "inline_markdown", "latex", "mathml", "parse", "relation_latex", "relation_mathml"]
