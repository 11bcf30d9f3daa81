"""The pieces every report section is built from, and the registry of sections by claim kind.

The families of sections (:mod:`.sections_privacy`, :mod:`.sections_theorems`)
import from here and register their builders with ``@section("kind")``;
:mod:`.sections` imports them all, so no module imports back up (no cycle).
"""
from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Optional

from ..dsl.claims import Claim
from ..results import ClaimResult, PointResult, Status, Witness
from . import maths
from .blocks import Block, Heading, Math, Pairs, WitnessBox

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


def compare(a: Optional[str], b: Optional[str]) -> str:
    """">", "=" or "<" between two decimal strings as printed (display only), "" if either is not one."""
    try:
        x, y = Decimal(a or ""), Decimal(b or "")
    except InvalidOperation:
        return ""
    return ">" if x > y else ("=" if x == y else "<")


def boxed(point: PointResult) -> bool:
    """Whether the point's witness gets a :class:`WitnessBox` (which then says its message)."""
    return point.status == Status.REFUTED and point.witness is not None


def point_messages(claim: ClaimResult, ctx: Context) -> list[Block]:
    """Each grid point's message, when the claim has more than one point; a point whose witness
    box already says its message is left out (each sentence is said once)."""
    if len(claim.points) < 2:
        return []
    rest = tuple((params(p), ctx.text(p.message)) for p in claim.points if not boxed(p))
    return [Heading("Messages per grid point"), Pairs(rest, prose=True)] if rest else []


def density_at(output: Any) -> str:
    """A density witness's output as a reader says it: ``'v0' at v0=-1`` is "density at v = -1"
    (the value of the one released noisy value), several values read "density at (v0, v1) = (…)"."""
    match = re.fullmatch(r"(.*?) at (v\d+ ?=.*)", str(output))  # "density of ... at v0 = -1" (or v0=-1)
    if match is None:
        return f"density at {output}"
    values = [[s.strip() for s in part.split("=", 1)] for part in match.group(2).split(", ")]
    if len(values) == 1:
        return f"density at v = {values[0][1]}"
    return f"density at ({', '.join(n for n, _ in values)}) = ({', '.join(v for _, v in values)})"


def witness_items(w: Witness, labels: tuple[str, ...] = (),
                  ) -> tuple[tuple[str, str], ...]:
    """The witness as label: value lines (its numbers in full, as certified); ``labels`` overrides the
    five (X, X', output, p, p') that the witness's quantity gives."""
    labels = labels or ("X", "X'", "output o" if w.quantity != "gdp" else "where", *w.labels())
    output = repr(w.output)
    if w.quantity == "density":
        labels = (labels[0], labels[1], "where", "density under X", "density under X'")
        output = density_at(w.output)
    items = [(labels[0], repr(w.x)), (labels[1], repr(w.x_prime))]
    items += [(labels[2], output)] if w.output is not None else []
    items += [(labels[3], w.p), (labels[4], w.p_prime)]
    if w.ratio is not None:
        items.append(("ratio", w.ratio))
    return tuple(items)


def witness_box(p: PointResult, ctx: Context, items: tuple[tuple[str, str], ...], verdict: str = "",
                title: str = "") -> WitnessBox:
    """The box that opens a refuted claim's section, carrying the point's message."""
    title = title or (f"Witness at {params(p)}" if p.params else "Witness")
    return WitnessBox(title, items, verdict, ctx.text(p.message))


def math_block(expr: Any, label: str) -> Block:
    """A formula as LaTeX and MathML; a string is parsed first (and shown as text if it is not
    a formula)."""
    if isinstance(expr, str):
        parsed = maths.parse(expr)
        if parsed is None:
            return Pairs(((label or "expression", expr),))
        expr = parsed
    return Math(maths.latex(expr), str(expr), maths.mathml(expr, display=True), label)


def source_of(fn: Any) -> Optional[str]:
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return None


__all__ = ["MAX_ROWS", "Builder", "Context", "SECTIONS", "boxed", "compare", "density_at", "math_block", "params",
           "point_messages", "section", "short", "source_of", "to_float", "witness_box", "witness_items"]
