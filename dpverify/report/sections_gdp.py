"""Gaussian DP (``gdp`` claims): claimed against achieved mu per point, the tightness, and the witness
point of a refutation (eps, delta_T(eps) against G_mu(eps)).

A family module like :mod:`.sections_profile`: it registers its section with ``@section`` and is
imported by :mod:`.sections`.
"""
from __future__ import annotations

from typing import Optional

from ..dsl.claims import Claim
from ..evidence import GdpEvidence
from ..results import ClaimResult
from .blocks import Block, Table
from .section_parts import Context, boxed, params, point_messages, section, short, witness_box, witness_items

METHODS = {"gaussian": "exact: √T·D of the Gaussian releases",
           "lattice": "δ_T against G_μ on an ε grid (exact loss distribution)",
           "multinomial": "δ_T against G_μ on an ε grid (exact loss distribution)",
           "laplace": "δ_T against G_μ on an ε grid (certified bounds)",
           "discrete": "δ_T against G_μ on an ε grid (certified bounds)",
           "subsampledgaussian": "δ_T against G_μ on an ε grid (certified bounds)"}


@section("gdp")
def gdp(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """Per point: T, the claimed and achieved mu (">=" a certified lower bound), achieved / claimed, how,
    the worst pair, and the witness eps with delta_T and G_mu there."""
    points = [(p, p.evidence) for p in claim.points if isinstance(p.evidence, GdpEvidence) and p.evidence.claimed]
    if not points:
        return point_messages(claim, ctx)
    rows = tuple((params(p), p.status.value, str(e.times), short(e.claimed),
                  (">= " if e.lower_bound else "") + short(e.achieved), e.tightness or "–",
                  METHODS.get(e.method or "", "–"), " → ".join(e.pair or []) or "–",
                  "–" if e.witness_epsilon is None else
                  f"ε = {short(e.witness_epsilon)}: δ_T ≥ {short(e.witness_delta)} > G_μ = {short(e.witness_bound)}")
                 for p, e in points)
    out: list[Block] = [Table(("parameters", "status", "T", "claimed μ", "achieved μ", "achieved / claimed", "how",
                               "worst pair", "witness"), rows, (3, 4, 5),
                              "The T-fold composition's Gaussian-DP level: exact for Gaussian releases, else a certified "
                              "lower bound (no smaller μ holds at the binding ε of the grid); 40 digits in report.json.")]
    for p, _ in points:
        if boxed(p) and p.witness is not None:
            out.append(witness_box(p, ctx, witness_items(p.witness)))
    return out + point_messages(claim, ctx)
