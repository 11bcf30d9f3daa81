"""What a report shows for each kind of claim: one function per kind, returning blocks.

Every claim gets a common header from :mod:`.model` (status, method, message);
the function registered for its kind with ``@section("kind")`` (from
:mod:`.section_parts`) adds the details (:mod:`.sections_privacy`: privacy,
private prediction, same distribution; :mod:`.sections_theorems`: sensitivity,
formulas, sample complexity; :mod:`.sections_audits`: audits of implementations).
A kind with no function gets :func:`generic` (points, witnesses, scalar figures),
so a new kind of claim always renders;
giving it its own section is one function returning :mod:`.blocks`, decorated
with ``@section("kind")``, in a family module imported below.  No template changes.

The family modules import only :mod:`.section_parts`; this module imports them
(which registers their sections), so the imports run one way.
"""
from __future__ import annotations

from typing import Optional

from ..dsl.claims import Claim
from ..results import ClaimResult
from . import sections_accounting, sections_audits, sections_gdp, sections_privacy, sections_profile, sections_replay, sections_theorems
from .blocks import Block, Heading, Pairs, Table
from .section_parts import SECTIONS, Context, boxed, params, section, witness_box, witness_items

FAMILIES = (sections_audits, sections_gdp, sections_privacy, sections_profile, sections_replay, sections_theorems)  # imported for their @section registrations


def blocks_for(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """The detail blocks of one claim; an unknown kind falls back to :func:`generic`.  A claim decided by
    sampling a black box gets the statistical audit's section whatever its kind (``private`` too)."""
    if sections_audits.sampled(claim):
        return sections_audits.statistical(claim, decl, ctx)
    return SECTIONS.get(claim.kind, generic)(claim, decl, ctx) + sections_accounting.comparison(claim, decl, ctx)


def generic(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """A kind this module does not know: each point's status, method and message (or its witness),
    and its scalar figures."""
    rows = tuple((params(p), p.status.value, p.method or "–", "see the witness" if boxed(p) else ctx.text(p.message))
                 for p in claim.points)
    out: list[Block] = [Table(("parameters", "status", "method", "message"), rows)]
    for p in claim.points:
        if p.witness is not None:
            out += ([witness_box(p, ctx, witness_items(p.witness))] if boxed(p)
                    else [Heading(f"Witness at {params(p)}"), Pairs(witness_items(p.witness))])
        scalars = tuple((str(k), str(v)) for k, v in sorted(p.evidence.figures().items(), key=lambda kv: str(kv[0]))
                        if isinstance(v, (str, int, float)))
        if scalars:
            out += [Heading(f"Figures at {params(p)}"), Pairs(scalars)]
    return out


__all__ = ["FAMILIES", "SECTIONS", "blocks_for", "generic", "section"]
