"""Privacy profiles of compositions (``profile`` claims): claimed against achieved delta(eps) per point,
and the plot of the worst pair's achieved curve delta_T(eps) against eps with the claimed points.

A family module like :mod:`.sections_privacy`: it registers its section with ``@section`` and is
imported by :mod:`.sections`.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

import matplotlib

from ..dsl.claims import Claim
from ..evidence import ProfileEvidence
from ..results import ClaimResult
from .blocks import Block, Figure, Table
from .profile_text import achieved
from .plots import _BASE_RC, COLOURS, _figure, delta_against_epsilon, steady
from .section_parts import Context, boxed, params, point_messages, section, short, to_float, witness_box, witness_items

METHODS = {"lattice": "exact (polynomial power on a lattice of losses)",
           "multinomial": "exact (multinomial over the distinct losses)",
           "gaussian": "closed form at distance √T·D",
           "laplace": "certified bounds (discretised loss distribution)",
           "discrete": "certified bounds (discretised loss distribution)"}


@section("profile")
def profile(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """Per point and claimed eps: the claimed and achieved delta_T(eps); the achieved curves; witnesses."""
    points = [(p, p.evidence) for p in claim.points if isinstance(p.evidence, ProfileEvidence) and p.evidence.rows]
    if not points:
        return point_messages(claim, ctx)
    rows = tuple((params(p), p.status.value, str(e.times), short(r.epsilon), short(r.claimed), achieved(r),
                  METHODS.get(e.method or "", "–"), " → ".join(e.pair or []) or "–")
                 for p, e in points for r in e.rows)
    out: list[Block] = [Table(("parameters", "status", "T", "ε", "claimed δ", "achieved δ_T(ε)", "how", "worst pair"),
                              rows, (3, 4, 5),
                              "The T-fold composition's hockey-stick divergence at each claimed ε, for the worst "
                              "ordered neighbouring pair (40 digits in report.json).")]
    panels = [(params(p), e) for p, e in points if e.curve]
    if panels:
        name = ctx.name(claim.claim_id, "profile")
        out.append(Figure(curves(panels, [p.status.value for p, e in points if e.curve], name),
                          "δ_T(ε) of the worst pair against ε (upper ends of certified enclosures), with the "
                          "claimed (ε, δ) points.", name))
    for p, _ in points:
        if boxed(p) and p.witness is not None:
            event = ("X", "X'", "event S", "P(S | X)", "P(S | X')") if p.witness.quantity == "probability" else ()
            out.append(witness_box(p, ctx, witness_items(p.witness, event)))
    return out + point_messages(claim, ctx)


def curves(panels: Sequence[tuple[str, ProfileEvidence]], statuses: Sequence[str], key: str) -> str:
    """One line per grid point (its achieved curve) and its claimed points as markers."""
    with matplotlib.rc_context(_BASE_RC):
        fig = _figure(4.6, 3.4)
        ax = fig.add_subplot()
        for index, ((label, evidence), status) in enumerate(zip(panels, statuses)):
            colour = f"C{index % 10}"
            curve = evidence.curve or {}
            shown = [(steady(x), steady(y)) for x, y in zip(curve.get("epsilon", []), curve.get("delta", [])) if y]
            ax.plot([x for x, _ in shown], [y for _, y in shown], color=colour, linewidth=1.2,
                    label=f"{label}: achieved δ_{evidence.times}(ε)")
            marks = [(steady(to_float(r.epsilon)), steady(to_float(r.claimed))) for r in evidence.rows or []]
            marks = [(x, y) for x, y in marks if x is not None and y]
            if marks:
                ax.scatter([x for x, _ in marks], [y for _, y in marks], color=COLOURS.get(status, "#555555"),
                           marker="x", zorder=3, label=f"{label}: claimed")
        return delta_against_epsilon(fig, ax, "δ(ε) (log scale; zeros not drawn)", key)


__all__ = ["curves", "profile"]
