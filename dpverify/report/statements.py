"""A claim's statement with its formulas typeset (the claims tables and each claim's header).

A claim describes itself in text (``describe()``), built from ``str()`` of its sympy
fields (``2*eps-DP``, ``sensitivity of mean(t) = 1/m``).  Printed as it is, that
text shows sympy's syntax, and Markdown escaping makes it worse (``2\\*eps``).  Here
the description is cut at the places where a field's expression is printed, and
those places are typeset: MathML for HTML, LaTeX for Markdown (:mod:`.maths`).  This
needs nothing from a new kind of claim.  Formula claims (identity, inequality) are
typeset whole from their two sides, as their description is shortened.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Optional

import sympy

from ..dsl.claims import Claim
from . import maths


@dataclasses.dataclass(frozen=True)
class Part:
    """Text (``latex`` empty) or a typeset formula."""

    text: str
    latex: str = ""
    mathml: str = ""


def _formulas(decl: Claim) -> dict[str, sympy.Basic]:
    """The claim's compound sympy fields by the text ``describe()`` prints for them."""
    out: dict[str, sympy.Basic] = {}
    for f in dataclasses.fields(decl):
        value = getattr(decl, f.name, None)
        if isinstance(value, sympy.Basic) and not value.is_Atom and not isinstance(value, sympy.logic.boolalg.Boolean):
            out[str(value)] = value
    return out


def statement(description: str, decl: Optional[Claim], kind: str) -> tuple[Part, ...]:
    """The statement as parts; plain text when the declaration is unknown or prints no formula."""
    if decl is None:
        return _text(description)
    if kind in ("identity", "inequality") and hasattr(decl, "lhs") and hasattr(decl, "rhs"):
        relation = "=" if kind == "identity" else ("<" if getattr(decl, "strict", False) else "<=")
        return (Part(description, maths.relation_latex(decl.lhs, relation, decl.rhs),
                     maths.relation_mathml(decl.lhs, relation, decl.rhs)),)
    found = _formulas(decl)
    if not found:
        return _text(description)
    pattern = re.compile("|".join(re.escape(t) for t in sorted(found, key=len, reverse=True)))
    slots: list[tuple[str, str, bool]] = []

    def slot(match: re.Match[str]) -> str:
        expr = found[match.group(0)]
        grouped = isinstance(expr, sympy.Add)  # a sum next to text reads as one value: (ε/2 + 1)-DP
        latex = rf"\left({maths.latex(expr)}\right)" if grouped else maths.latex(expr)
        inner = maths.mathml(expr, grouped=grouped).removeprefix("<math>").removesuffix("</math>")
        slots.append((f"<mrow>{inner}</mrow>", latex, grouped, match.group(0)))  # type: ignore[arg-type]
        return f"\x00{len(slots) - 1}\x00"
    return _text(pattern.sub(slot, description), slots)


def _text(text: str, slots: list[tuple[str, str, bool]] = ()) -> tuple[Part, ...]:  # type: ignore[assignment]
    """A description typeset: its formulas written as text (``eps``, ``P[u <= OPT - t]``, ``e^(eps/4)``)
    and its sympy fields (``slots``, marked ``\\x00k\\x00`` in ``text``) read together as formulas
    (Greek letters, ≤ ≥, raised exponents, fractions: :func:`.maths.prose`); English words stay text."""
    out = []
    for piece, is_formula in maths.prose(text):
        if is_formula:
            mathml, latex = maths.text_formula(piece, slots)
            out.append(Part(_plain(piece, slots), latex, mathml))
        else:
            out.append(Part(piece))
    return tuple(out)


def _plain(piece: str, slots: list[tuple[str, str, bool]]) -> str:
    """The piece as the description wrote it (each slot's text as ``describe()`` printed it)."""
    return re.sub("\x00(\\d+)\x00", lambda m: slots[int(m.group(1))][3], piece)  # type: ignore[misc]


__all__ = ["Part", "statement"]
