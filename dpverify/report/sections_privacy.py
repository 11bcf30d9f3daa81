"""Report sections of the claims about a mechanism's output laws: privacy (also private
prediction) and same distribution."""
from __future__ import annotations

import math
from decimal import Context as Decimals
from decimal import Decimal, InvalidOperation
from typing import Optional

from ..evidence import DivergenceEvidence, PredictionEvidence, PrivacyEvidence, privacy_view
from ..results import ClaimResult, PointResult
from ..dsl.claims import Claim
from . import plots, plots_divergence
from .blocks import Block, Code, Figure, Heading, Table
from .section_parts import (MAX_ROWS, Context, boxed, compare, params, point_messages, section, short, source_of,
                            to_float, witness_box, witness_items)


# ----- privacy -------------------------------------------------------------------------------

@section("private", "private_prediction")
def privacy(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """Claimed vs achieved epsilon per point, their plot, the loss distribution, witnesses."""
    levels = [privacy_view(p.evidence) for p in claim.points]
    with_delta = any(e.claimed_delta not in (None, "0") and to_float(e.claimed_delta) != 0 for e in levels)
    headers = ["parameters", "status", "claimed ε", "achieved ε", "claimed − achieved"]
    headers += ["claimed δ", "achieved δ"] if with_delta else []
    rows = []
    for p, e in zip(claim.points, levels):
        row = [params(p), p.status.value, short(e.claimed_epsilon),
               (">= " if e.achieved_is_lower_bound else "") + short(e.achieved_epsilon), _slack(e)]
        rows.append(tuple(row + ([short(e.claimed_delta), short(e.achieved_delta)] if with_delta else [])))
    out: list[Block] = [Table(tuple(headers), tuple(rows), numeric=tuple(range(2, len(headers))),
                              caption="Claimed and achieved ε at each grid point (10 significant digits; "
                                      "40 in report.json). Achieved ε is the exact largest privacy loss "
                                      "over every neighbouring pair of the universe.")]
    marks = [(c, to_float(e.achieved_epsilon) if e.achieved_epsilon != "inf" else math.inf, p.status.value)
             for p, e in zip(claim.points, levels)
             if (c := to_float(e.claimed_epsilon)) is not None and e.achieved_epsilon]
    marks = [(c, a, s) for c, a, s in marks if a is not None]
    if marks:
        name = ctx.name(claim.claim_id, "epsilon")
        out.append(Figure(plots.epsilon_plot(marks, name), "Achieved ε against claimed ε; points on or "
                          "below the dashed diagonal hold, the gap below it is slack.", name))
    panels = [(params(p), e.loss_histogram, to_float(e.claimed_epsilon))
              for p, e in zip(claim.points, levels) if e.loss_histogram]
    if panels:
        name = ctx.name(claim.claim_id, "loss")
        out.append(Figure(plots.loss_histograms(panels, name),
                          "Privacy-loss distribution: for every ordered neighbouring pair (X, X'), its largest "
                          "loss max over o of ln P(o|X) − ln P(o|X'); the dashed line is the claimed ε.", name))
    by_query = [(params(p), str(q), short(e)) for p in claim.points
                if isinstance(p.evidence, PredictionEvidence) and p.evidence.achieved_by_point
                for q, e in p.evidence.achieved_by_point.items()]
    if by_query:
        out.append(Table(("parameters", "query point", "achieved ε"), tuple(by_query), (2,),
                         "Private prediction: the achieved ε at each query point."))
    for index, p in enumerate(claim.points):
        if boxed(p):
            out += _privacy_witness(claim, p, index, ctx)
    return out + point_messages(claim, ctx)


def _slack(e: PrivacyEvidence) -> str:
    if e.claimed_epsilon is None or e.achieved_epsilon is None:
        return "–"
    if e.achieved_epsilon == "inf":
        return "−∞"
    if e.achieved_epsilon == e.claimed_epsilon:
        return "0 (tight)"
    try:
        return f"{float(Decimal(e.claimed_epsilon) - Decimal(e.achieved_epsilon)):.3g}"
    except InvalidOperation:
        return "–"


def _privacy_witness(claim: ClaimResult, p: PointResult, index: int, ctx: Context) -> list[Block]:
    """The witness box (moved first in the section by the page), then the plots and laws behind it."""
    w = p.witness
    assert w is not None
    levels = privacy_view(p.evidence)
    event = levels.claimed_delta not in (None, "0") and to_float(levels.claimed_delta) != 0
    labels = ("X", "X'", "event S", "P(S | X)", "P(S | X')") if event else ("X", "X'", "output o", "P(o | X)",
                                                                             "P(o | X')")
    out: list[Block] = [witness_box(p, ctx, witness_items(w, labels), _verdict(p, levels))]
    curves = levels.density_curves
    if curves is not None and curves.v:
        name = ctx.name(claim.claim_id, f"density-{index}")
        out += [Heading(f"Both densities around the witness at {params(p)}"),
                Figure(plots.density_witness(curves, to_float(levels.claimed_epsilon), name),
                       f"The densities of {curves.slot} under X = {w.x!r} and X' = {w.x_prime!r} around "
                       f"v = {curves.at:g} (top), and their log ratio against the claimed ε (bottom).", name)]
    laws = levels.witness_laws
    if laws is not None and laws.outputs:
        outputs = [str(o) for o in laws.outputs]
        probs = [to_float(v) or 0.0 for v in laws.p]
        probs_prime = [to_float(v) or 0.0 for v in laws.p_prime]
        name = ctx.name(claim.claim_id, f"witness-{index}")
        out += [Heading(f"Both output laws of the witness pair at {params(p)}"),
                Figure(plots.witness_laws(outputs, probs, probs_prime, name),
                       f"The two output distributions of the witness pair X = {w.x!r}, "
                       f"X' = {w.x_prime!r}, side by side.", name)]
        rows = tuple((o, a, b) for o, a, b in zip(outputs, laws.p, laws.p_prime))
        caption = "Both laws, exactly as certified" + (
            f" (the first {MAX_ROWS} of {len(rows)} outputs; all in report.json)" if len(rows) > MAX_ROWS else "")
        out.append(Table(("output o", "P(o | X)", "P(o | X')"), rows[:MAX_ROWS], (1, 2), caption))
    return out


def _verdict(p: PointResult, levels: PrivacyEvidence) -> str:
    """The witness against the bound that was claimed: the ratio against e^ε, or (with δ) the excess
    P(S|X) − e^ε P(S|X') against δ.  Display only (10 digits): the check decided, certified."""
    w = p.witness
    assert w is not None
    try:
        eps = Decimal(levels.claimed_epsilon) if levels.claimed_epsilon is not None else None
        bound = Decimals(prec=40).exp(eps) if eps is not None else None
        delta = Decimal(levels.claimed_delta) if levels.claimed_delta is not None else Decimal(0)
        first, second = Decimal(w.p), Decimal(w.p_prime)
    except InvalidOperation:
        return ""
    if eps is None or bound is None:
        return ""
    claimed = f"(claimed: ε = {short(levels.claimed_epsilon)}" + (f", δ = {short(levels.claimed_delta)})"
                                                                 if delta else ")")
    if delta:
        excess = first - bound * second
        return (f"P(S | X) − e^ε · P(S | X') = {short(str(excess))} {compare(str(excess), str(delta))} "
                f"δ = {short(levels.claimed_delta)} {claimed}")
    if second == 0:
        if first <= 0:
            return ""
        quantity = "the density" if w.quantity == "density" else "the probability"
        return (f"{quantity} is 0 under X' and not under X: the ratio is infinite, above e^ε = {short(str(bound))} "
                f"{claimed}")
    ratio = Decimal(w.ratio) if w.ratio is not None else first / second
    return f"ratio {short(str(ratio))} {compare(str(ratio), str(bound))} e^ε = {short(str(bound))} {claimed}"


# ----- same distribution ---------------------------------------------------------------------

@section("same_distribution")
def same_distribution(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """The other program's source, and the dataset and output where the laws differ."""
    out: list[Block] = []
    other = getattr(decl, "other", None)
    code = source_of(other) if other is not None else None
    if code is not None:
        out += [Heading(f"The other program: {getattr(other, '__name__', 'other')}"), Code(code, "python")]
    for p in claim.points:
        if boxed(p) and p.witness is not None:
            items = witness_items(p.witness, ("dataset", "dataset", "output o", "P(o) under the mechanism",
                                              "P(o) under the other program"))
            out.append(witness_box(p, ctx, (items[0], *items[2:])))
    return out + point_messages(claim, ctx)


# ----- Rényi DP and zCDP -----------------------------------------------------------------------

@section("renyi", "zcdp")
def divergence(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """Claimed vs achieved divergence per point, the worst pair's D_α curve, the largest pairs, witnesses."""
    points = [(p, p.evidence) for p in claim.points if isinstance(p.evidence, DivergenceEvidence)]
    if not points:
        return point_messages(claim, ctx)
    zcdp = claim.kind == "zcdp"
    rows = tuple((params(p), p.status.value, short(e.claimed), (">= " if e.lower_bound else "") + short(e.achieved),
                  short(e.alpha) if e.alpha and e.alpha != "1+" else (e.alpha or "–"), e.tightness or "–",
                  " → ".join(e.pair or []) or "–") for p, e in points)
    out: list[Block] = [Table(("parameters", "status", "claimed ρ" if zcdp else "claimed ε",
                               "achieved sup D_α/α" if zcdp else "achieved D_α", "order α", "achieved / claimed",
                               "worst pair"), rows, (2, 3, 5),
                              "Claimed and achieved values at each grid point (40 digits in report.json): the exact "
                              "Rényi divergence of every ordered neighbouring pair"
                              + (", its supremum over orders certified (the largest value found is shown, at its "
                                 "order; α = 1+ is the limit at 1, the KL divergence)." if zcdp else "."))]
    panels = [(params(p), e.curve, to_float(e.claimed), to_float(e.alpha) if not zcdp else None, claim.kind,
               p.status.value) for p, e in points if e.curve is not None]
    if panels:
        name = ctx.name(claim.claim_id, "renyi")
        out.append(Figure(plots_divergence.renyi_curves(panels, name),
                          "D_α of the worst neighbouring pair against the order α"
                          + (", with the claimed ρα (dashed)." if zcdp else ", with the claimed ε at the claim's order."),
                          name))
    p, e = points[0]
    if e.per_pair:
        out.append(Table(("X", "X'", "D_α/α (largest found)" if zcdp else "D_α"),
                         tuple((v.x, v.x_prime, v.value) for v in e.per_pair), (2,),
                         f"The largest pairs at {params(p) or 'the only point'} ({e.pairs} ordered pairs of distinct laws)."))
    for p, _ in points:
        if boxed(p) and p.witness is not None:
            out.append(witness_box(p, ctx, witness_items(p.witness, ("X", "X'", "order", "D_α(X ‖ X')",
                                                                    "claimed bound at this order"))))
    return out + point_messages(claim, ctx)
