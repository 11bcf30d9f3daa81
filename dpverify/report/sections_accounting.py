"""Claimed against exact, as a ratio: the comparison table of ``profile`` claims (an accountant's report).

A ``profile`` claim states a delta at each eps -- in ``spec/accounting/`` the number an accountant
reported.  This table divides it by the exact delta_T(eps) and says per row what that means: a ratio
of at least 1 is slack (the claim holds with that margin), below 1 an under-report (the reported
delta is smaller than the exact one: a violation).  Where the exact value is only enclosed (Laplace
releases) the row compares with both ends and says "undecided" when the claim falls between them.
Appended to the profile section by :func:`.sections.blocks_for`; other kinds of claims get nothing, nor
do claims that name their source (the page compares those in :mod:`.sections_sources`).
"""
from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Optional

from ..dsl.claims import Claim
from ..evidence import ProfileEvidence, ProfileRow
from ..results import ClaimResult
from .blocks import Block, Table
from .section_parts import Context, params, short


def comparison(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """The reported (claimed) delta, the exact delta and their ratio, per point and eps of a profile claim
    -- unless the claim names its source, whose rows the page's comparison of sources already shows
    (:mod:`.sections_sources`)."""
    if getattr(decl, "source", None) is not None:
        return []
    rows = tuple((params(p), str(p.evidence.times), short(r.epsilon), short(exact_of(r)), short(r.claimed),
                  ratio(r), verdict(r))
                 for p in claim.points if isinstance(p.evidence, ProfileEvidence) for r in p.evidence.rows or [])
    if claim.kind != "profile" or not rows:
        return []
    return [Table(("parameters", "T", "ε", "exact δ_T(ε)", "claimed (reported) δ", "ratio", "verdict"), rows,
                  (1, 2, 3, 4, 5),
                  "The claimed δ — in spec/accounting/ an accountant's reported δ — against the exact δ_T(ε): "
                  "a ratio of at least 1 is slack, below 1 an under-report (a violation). Enclosed values "
                  "show their upper end; the ratio is taken to the end that decides.")]


def _number(text: Optional[str]) -> Optional[Decimal]:
    try:
        return Decimal(text) if text is not None else None
    except InvalidOperation:
        return None


def _bounds(row: ProfileRow) -> tuple[Optional[Decimal], Optional[Decimal]]:
    """The exact delta's lower and upper ends (equal when it is exact)."""
    if row.achieved is not None:
        value = _number(row.achieved)
        return value, value
    return _number(row.achieved_lower), _number(row.achieved_upper)


def exact_of(row: ProfileRow) -> Optional[str]:
    """The exact delta as a decimal string, or the upper end of its enclosure."""
    return row.achieved if row.achieved is not None else row.achieved_upper


def verdict(row: ProfileRow) -> str:
    """'slack' when the claim is at least the exact delta (its upper end), 'under-report' when it is below
    the exact delta (its lower end), 'undecided' in between or when a value is missing."""
    low, high = _bounds(row)
    claimed = _number(row.claimed)
    if claimed is None or low is None or high is None:
        return "undecided"
    if claimed >= high:
        return "holds" if claimed == high else "slack"
    return "under-report" if claimed < low else "undecided"


def ratio(row: ProfileRow) -> str:
    """claimed / exact to 4 significant digits (to the upper end for slack, the lower for an under-report);
    within 5e-4 of 1 as "1 + r" or "1 − r"."""
    low, high = _bounds(row)
    claimed = _number(row.claimed)
    if claimed is None or low is None or high is None:
        return "–"
    base = low if claimed < low else high
    if base == 0:
        return "–" if claimed == 0 else "∞"
    value = claimed / base
    if value != 1 and abs(value - 1) < Decimal("0.0005"):  # "1" would hide an under-report or a sliver of slack
        return f"1 {'+' if value > 1 else '−'} {float(abs(value - 1)):.2g}"
    return f"{float(value):.4g}"


__all__ = ["comparison", "exact_of", "ratio", "verdict"]
