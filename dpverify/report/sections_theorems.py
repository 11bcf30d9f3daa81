"""Report sections of the claims about queries and theorems: sensitivity (the derivation as
LaTeX), formulas (statement and counterexample), sample complexity (the bound's n next to the
smallest n that works)."""
from __future__ import annotations

from typing import Optional

import sympy

from ..evidence import SampleComplexityEvidence, SensitivityEvidence
from ..results import ClaimResult, Status
from ..dsl.claims import Claim
from . import plots
from .blocks import Block, Figure, Heading, Math, Pairs, Paragraph, Table
from .sections import Context, math_block, params, point_messages, section, short, to_float, witness_pairs


# ----- sensitivity ---------------------------------------------------------------------------

@section("sensitivity")
def sensitivity(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """The claimed and derived sensitivity and each derivation step, as LaTeX."""
    out: list[Block] = []
    for index, p in enumerate(claim.points):
        ev = p.evidence if isinstance(p.evidence, SensitivityEvidence) else SensitivityEvidence()
        key = ctx.name(claim.claim_id, f"math-{index}")
        claimed = getattr(decl, "equals", None) if decl is not None else ev.claimed
        if claimed is not None:
            out.append(math_block(claimed, "claimed Δ", f"{key}-claimed"))
        if ev.derived is not None:
            out.append(math_block(ev.derived, "derived Δ", f"{key}-derived"))
        facts = [(k, str(v)) for k, v in (("relation", ev.relation), ("n_min", ev.n_min)) if v is not None]
        if facts:
            out.append(Pairs(tuple(facts)))
        steps = ev.steps or []
        if steps:
            out.append(Heading("Derivation"))
            for step, (text, expr) in enumerate(steps):
                out.append(math_block(expr, str(text), f"{key}-step{step}"))
        if ev.loose:
            loose = ev.loose
            out.append(Paragraph(f"At n = {loose.get('n')} the claim gives {loose.get('claimed')}, the exact "
                                 f"sensitivity is {loose.get('exact')}.", "Loose"))
        if ev.enumerated:
            rows = tuple((str(k), str(v)) for k, v in sorted(ev.enumerated.items(), key=lambda kv: int(kv[0])))
            out.append(Table(("n", "Δ(n) by enumeration"), rows, (0, 1), "Measured sensitivity"))
        if p.status == Status.REFUTED and p.witness is not None:
            out.append(Heading("Counterexample"))
            out.append(witness_pairs(p.witness, ("X", "X'", "candidate", "q(X)", "q(X')")))
            extra = [(k, str(v)) for k, v in (("n", ev.n), ("claimed_at_n", ev.claimed_at_n), ("exact", ev.exact),
                                               ("change", ev.change)) if v is not None]
            if extra:
                out.append(Pairs(tuple(extra)))
    return out + point_messages(claim, ctx)


# ----- formulas ------------------------------------------------------------------------------

_RELATION = {"identity": "=", "inequality": r"\leq"}


@section("identity", "inequality")
def formula(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """The statement with its conditions, and the counterexample when it is refuted."""
    out: list[Block] = []
    if decl is not None and hasattr(decl, "lhs"):
        rel = r"<" if getattr(decl, "strict", False) else _RELATION.get(claim.kind, "=")
        key = ctx.name(claim.claim_id, "statement")
        latex = f"{sympy.latex(decl.lhs)} {rel} {sympy.latex(decl.rhs)}"
        text = f"{decl.lhs} {'=' if rel == '=' else ('<' if rel == '<' else '<=')} {decl.rhs}"
        out.append(Math(latex, text, plots.math_svg(latex, key), "formula"))
        where = getattr(decl, "where", ())
        if where:
            latex = r",\quad ".join(sympy.latex(c) for c in where)
            out.append(Math(latex, ", ".join(str(c) for c in where),
                            plots.math_svg(latex, f"{key}-where"), "where"))
    for p in claim.points:
        w = p.witness
        if p.status == Status.REFUTED and w is not None:
            out.append(Heading("Counterexample"))
            values = w.x if isinstance(w.x, dict) else {}
            rows = tuple((str(k), str(v)) for k, v in sorted(values.items(), key=lambda kv: str(kv[0])))
            if rows:
                out.append(Table(("symbol", "value"), rows, (1,)))
            out.append(Pairs((("left-hand side", w.p), ("right-hand side", w.p_prime))))
    return out + point_messages(claim, ctx)


# ----- sample complexity ---------------------------------------------------------------------

@section("sample_complexity")
def sample_complexity(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """The bound's n next to the smallest n that works, and the failure probability against n."""
    rows, panels = [], []
    for p in claim.points:
        f = p.evidence if isinstance(p.evidence, SampleComplexityEvidence) else SampleComplexityEvidence()
        rows.append((params(p), p.status.value, str(f.n_bound if f.n_bound is not None else "–"),
                     str(f.smallest_n or "–"), short(f.failure_at_bound), short(f.beta)))
        curve = f.curve
        beta = to_float(f.beta)
        if isinstance(curve, dict) and curve and beta is not None:
            points = {int(n): v for n, v in ((n, to_float(v)) for n, v in curve.items()) if v is not None}
            panels.append((params(p), points, beta, f.n_bound, f.smallest_n))
    out: list[Block] = [Table(("parameters", "status", "bound's n", "smallest n that works",
                               "P[failure] at the bound's n", "β"), tuple(rows), (2, 3, 4, 5),
                              "Exact failure probabilities over every multiset of the sample.")]
    if panels:
        name = ctx.name(claim.claim_id, "failure")
        out.append(Figure(plots.failure_curves(panels, name), "Failure probability against the sample size n; "
                          "the guarantee holds where the curve is below the dashed β.", name))
    for p in claim.points:
        if p.status == Status.REFUTED and p.witness is not None:
            out += [Heading(f"Counterexample at {params(p)}"),
                    Pairs((("n", repr(p.witness.x)), ("event", str(p.witness.output)),
                           ("P[event]", p.witness.p), ("β", p.witness.p_prime)))]
    return out + point_messages(claim, ctx)
