"""Report sections of the claims about queries and theorems: sensitivity (the derivation as
LaTeX), formulas (statement and counterexample), sample complexity (the bound's n next to the
smallest n that works)."""
from __future__ import annotations

from typing import Optional

import sympy

from ..dsl.claims import Claim
from ..evidence import SampleComplexityEvidence, SensitivityEvidence
from ..results import ClaimResult, PointResult
from . import maths, plots
from .blocks import Block, Figure, Heading, Math, Pairs, Paragraph, Table
from .section_parts import (Context, boxed, compare, math_block, params, point_messages, section, short, to_float,
                            witness_box, witness_items)


# ----- sensitivity ---------------------------------------------------------------------------

@section("sensitivity")
def sensitivity(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """The claimed and derived sensitivity and each derivation step, as LaTeX."""
    out: list[Block] = []
    for p in claim.points:
        ev = p.evidence if isinstance(p.evidence, SensitivityEvidence) else SensitivityEvidence()
        claimed = getattr(decl, "bound", None) if decl is not None else None
        if claimed is not None or ev.claimed is not None:  # the claim's own expression, else the check's text
            exact = getattr(decl, "exact", True)
            out.append(math_block(claimed if claimed is not None else ev.claimed,
                                  "claimed Δ" if exact else "claimed Δ (an upper bound)"))
        if ev.derived is not None:
            out.append(math_block(ev.derived, "derived Δ"))
        facts = [(k, str(v)) for k, v in (("relation", ev.relation), ("n_min", ev.n_min)) if v is not None]
        if facts:
            out.append(Pairs(tuple(facts)))
        steps = ev.steps or []
        if steps:
            out.append(Heading("Derivation"))
            for text, expr in steps:
                out.append(math_block(expr, str(text)))
        if ev.loose:
            loose = ev.loose
            out.append(Paragraph(f"At n = {loose.get('n')} the claim gives {loose.get('claimed')}, the exact "
                                 f"sensitivity is {loose.get('exact')}.", "Loose"))
        if ev.enumerated:
            rows = tuple((str(k), str(v)) for k, v in sorted(ev.enumerated.items(), key=lambda kv: int(kv[0])))
            out.append(Table(("n", "Δ(n) by enumeration"), rows, (0, 1), "Measured sensitivity"))
        if boxed(p) and p.witness is not None:
            items = witness_items(p.witness, ("X", "X'", "candidate", "q(X)", "q(X')"))
            extra = tuple((k, str(v)) for k, v in (("n", ev.n), ("claimed Δ at n", ev.claimed_at_n),
                                                   ("exact Δ at n", ev.exact), ("change", ev.change))
                          if v is not None)
            out.append(witness_box(p, ctx, items + extra, _change(p.witness.p, p.witness.p_prime, ev),
                                   _counterexample(p)))
    return out + point_messages(claim, ctx)


def _counterexample(p: PointResult) -> str:
    return f"Counterexample at {params(p)}" if p.params else "Counterexample"


def _change(value: str, value_prime: str, ev: SensitivityEvidence) -> str:
    """|q(X) − q(X')| against the claimed Δ at the witness's n, when sympy compares them exactly."""
    claimed = maths.parse(ev.claimed_at_n) if ev.claimed_at_n is not None else None
    first, second = maths.parse(value), maths.parse(value_prime)
    if claimed is None or first is None or second is None:
        return ""
    change = sympy.Abs(first - second)
    above = sympy.simplify(change - claimed).is_positive
    return f"|q(X) − q(X')| = {change} > {claimed}, the claimed Δ at n = {ev.n}" if above else ""


# ----- formulas ------------------------------------------------------------------------------

@section("identity", "inequality")
def formula(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """The statement's conditions (``where``), and the counterexample when it is refuted."""
    out: list[Block] = []
    where = getattr(decl, "where", ()) if decl is not None else ()
    if where:  # the statement itself is typeset in the claim's header
        out.append(Math(r",\quad ".join(maths.latex(c) for c in where), ", ".join(str(c) for c in where),
                        _display("<math><mo>,</mo><mspace width=\"1em\"></mspace></math>".join(
                            maths.mathml(c) for c in where)), "where"))
    for p in claim.points:
        w = p.witness
        if boxed(p) and w is not None:
            values = w.x if isinstance(w.x, dict) else {}
            items = tuple((str(k), str(v)) for k, v in sorted(values.items(), key=lambda kv: str(kv[0])))
            sides = (("left-hand side", w.p), ("right-hand side", w.p_prime))
            sign = compare(w.p, w.p_prime)
            claimed = {"identity": "=", "inequality": "<" if getattr(decl, "strict", False) else "≤"}.get(claim.kind)
            verdict = (f"left-hand side {sign} right-hand side here (claimed: {claimed})"
                       if sign and claimed else "")
            out.append(witness_box(p, ctx, items + sides, verdict, _counterexample(p)))
    return out + point_messages(claim, ctx)


def _display(inline: str) -> str:
    """Inline ``<math>`` pieces as one displayed formula that may wrap between its terms."""
    return f'<span class="display-math">{inline}</span>'


# ----- sample complexity ---------------------------------------------------------------------

@section("sample_complexity")
def sample_complexity(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """The bound's n next to the smallest n that works and the n checked (a verdict covers those only),
    and the failure probability against n."""
    rows, panels = [], []
    for p in claim.points:
        f = p.evidence if isinstance(p.evidence, SampleComplexityEvidence) else SampleComplexityEvidence()
        checked = p.coverage["label"].removeprefix("n = ") if p.coverage else "–"  # a verdict covers these n only
        rows.append((params(p), p.status.value, str(f.n_bound if f.n_bound is not None else "–"),
                     str(f.smallest_n or "–"), checked, short(f.failure_at_bound), short(f.beta)))
        curve = f.curve
        beta = to_float(f.beta)
        if isinstance(curve, dict) and curve and beta is not None:
            points = {int(n): v for n, v in ((n, to_float(v)) for n, v in curve.items()) if v is not None}
            panels.append((params(p), points, beta, f.n_bound, f.smallest_n))
    out: list[Block] = [Table(("parameters", "status", "bound's n", "smallest n that works", "checked for n",
                               "P[failure] at the bound's n", "β"), tuple(rows), (2, 3, 5, 6),
                              "Exact failure probabilities over every multiset of the sample.  The claim states "
                              "every n ≥ the bound; a verdict that holds covers the n checked only, not shown "
                              "beyond.")]
    if panels:
        name = ctx.name(claim.claim_id, "failure")
        out.append(Figure(plots.failure_curves(panels, name), "Failure probability against the sample size n; "
                          "the guarantee holds where the curve is below the dashed β.", name))
    for p in claim.points:
        w = p.witness
        if boxed(p) and w is not None:
            items = (("n", repr(w.x)), ("event", str(w.output)), ("P[event]", w.p), ("β", w.p_prime))
            sign = compare(w.p, w.p_prime)
            verdict = f"P[event] = {short(w.p)} {sign} β = {short(w.p_prime)} at n = {w.x!r}" if sign else ""
            out.append(witness_box(p, ctx, items, verdict, _counterexample(p)))
    return out + point_messages(claim, ctx)
