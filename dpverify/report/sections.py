"""What a report shows for each kind of claim: one function per kind, returning blocks.

Every claim gets a common header from :mod:`.model` (status, method, message);
the function registered for its kind with ``@section("kind")`` adds the details
(:mod:`.sections_privacy`: privacy, private prediction, same distribution;
:mod:`.sections_theorems`: sensitivity, formulas, sample complexity).  A kind
with no function gets :func:`generic` (points, witnesses, scalar figures), so a
new kind of claim always renders; giving it its own section is one function
returning :mod:`.blocks`, decorated with ``@section("kind")``, in either module
or a new one imported at the bottom of this one.  No template changes.
"""
from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

import sympy

from ..results import ClaimResult, PointResult, Witness
from ..dsl.claims import Claim
from . import plots
from .blocks import Block, Heading, Math, Pairs, Table

MAX_ROWS = 60  # rows of a law shown in a page; report.json has them all


@dataclass(frozen=True)
class Context:
    """What a section builder needs besides the results: the page's slug (figure names and
    SVG id salts derive from it) and the text filter (timings removed unless asked for)."""

    slug: str
    text: Callable[[str], str]
    used: set[str] = field(default_factory=set)

    def name(self, claim_id: str, suffix: str) -> str:
        """A file-safe name for a figure, unique on the page."""
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{self.slug}-{claim_id}-{suffix}")
        name, k = base, 2
        while name in self.used:
            name, k = f"{base}-{k}", k + 1
        self.used.add(name)
        return name


Builder = Callable[[ClaimResult, Optional[Claim], Context], list[Block]]
SECTIONS: dict[str, Builder] = {}


def section(*kinds: str) -> Callable[[Builder], Builder]:
    """Register a builder for claims of the given kinds."""
    def register(fn: Builder) -> Builder:
        for kind in kinds:
            SECTIONS[kind] = fn
        return fn
    return register


def blocks_for(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """The detail blocks of one claim; an unknown kind falls back to :func:`generic`."""
    return SECTIONS.get(claim.kind, generic)(claim, decl, ctx)


# ----- shared pieces -------------------------------------------------------------------------

def short(value: Optional[str], digits: int = 10) -> str:
    """A decimal string shortened for a table cell (the full value is in report.json)."""
    if value is None:
        return "–"
    if value == "inf":
        return "∞"
    try:
        return f"{float(value):.{digits}g}"
    except ValueError:
        return value


def params(point: PointResult) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.params.items()) or "–"


def to_float(value: Optional[str]) -> Optional[float]:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def point_messages(claim: ClaimResult, ctx: Context) -> list[Block]:
    """Each grid point's message, when the claim has more than one point."""
    if len(claim.points) < 2:
        return []
    return [Heading("Messages per grid point"),
            Pairs(tuple((params(p), ctx.text(p.message)) for p in claim.points))]


def witness_pairs(w: Witness, labels: tuple[str, ...] = ("X", "X'", "output o", "P(o | X)", "P(o | X')")) -> Pairs:
    if w.quantity == "density" and labels[3] == "P(o | X)":
        labels = (*labels[:3], "density at o under X", "density at o under X'")
    items = [(labels[0], repr(w.x)), (labels[1], repr(w.x_prime)), (labels[2], repr(w.output)),
             (labels[3], w.p), (labels[4], w.p_prime)]
    if w.ratio is not None:
        items.append(("ratio", w.ratio))
    return Pairs(tuple(items))


def math_block(expr: Any, label: str, key: str) -> Block:
    """A formula as LaTeX (sympy.latex), typeset to SVG when mathtext can; strings are parsed first."""
    if isinstance(expr, str):
        try:
            expr = sympy.sympify(expr, locals={name: sympy.Symbol(name) for name in ("N", "S", "Q", "O", "C")})
        except (sympy.SympifyError, SyntaxError, TypeError, ValueError):
            return Pairs(((label or "expression", expr),))
    latex = sympy.latex(expr)
    return Math(latex, sympy.pretty(expr, use_unicode=True), plots.math_svg(latex, key), label)


def source_of(fn: Any) -> Optional[str]:
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return None


# ----- anything else -------------------------------------------------------------------------

def generic(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """A kind this module does not know: each point's status, method and message, its witness,
    and its scalar figures."""
    rows = tuple((params(p), p.status.value, p.method or "–", ctx.text(p.message)) for p in claim.points)
    out: list[Block] = [Table(("parameters", "status", "method", "message"), rows)]
    for p in claim.points:
        if p.witness is not None:
            out += [Heading(f"Witness at {params(p)}"), witness_pairs(p.witness)]
        scalars = tuple((str(k), str(v)) for k, v in sorted(p.evidence.figures().items(), key=lambda kv: str(kv[0]))
                        if isinstance(v, (str, int, float)))
        if scalars:
            out += [Heading(f"Figures at {params(p)}"), Pairs(scalars)]
    return out


# The sections of the known kinds register themselves on import.
from . import sections_privacy, sections_theorems  # noqa: E402,F401

__all__ = ["MAX_ROWS", "Context", "SECTIONS", "blocks_for", "generic", "math_block", "params", "point_messages",
           "section", "short", "source_of", "to_float", "witness_pairs"]
