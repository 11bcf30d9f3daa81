"""Report sections of the audits of implementations: the statistical audit of a black box
(``dp.black_box``: samples against the spec's exact law), conformance of an implementation
decided exactly (``conforms``, with its tolerance), and the floating-point check
(``float_private``).

A statistical audit shows what it rests on: every tested cell with the spec's exact probability,
the count k/n and the Clopper-Pearson interval at the Bonferroni-corrected level, plotted; for
privacy the lower confidence bound on the code's ε against the claimed ε and the spec's own.
A ``private`` claim about a black box gets this section, not the exact privacy one
(:func:`sampled` tells them apart; :mod:`.sections` asks it first).
"""
from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from typing import Any, Optional

from ..dsl.claims import Claim
from ..evidence import ConformanceEvidence, FloatEvidence, SampledCell, StatisticalEvidence
from ..results import ClaimResult, PointResult
from . import plots
from .blocks import Block, Figure, Heading, Pairs, Paragraph, Table
from .section_parts import (MAX_ROWS, Context, boxed, compare, params, point_messages, section, short, to_float,
                            witness_box)


def sampled(claim: ClaimResult) -> bool:
    """Whether the claim was decided by sampling a black box (its points carry statistical evidence)."""
    return any(isinstance(p.evidence, StatisticalEvidence) for p in claim.points)


# ----- statistical audit ---------------------------------------------------------------------

def statistical(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """Per point: the witness (if refuted), the sampling budget in one line, the tested cells as a table
    and a plot; for privacy the code's ε bound against the claimed and the spec's."""
    out: list[Block] = []
    for index, p in enumerate(claim.points):
        ev = p.evidence
        if not isinstance(ev, StatisticalEvidence):
            continue
        privacy = ev.claimed_epsilon is not None
        if boxed(p):
            out.append(_privacy_witness(p, ev, ctx) if privacy else
                       _cdf_witness(p, ev, ctx) if ev.ks else _law_witness(p, ev, ctx))
        if not ev.tests:  # refused before sampling (its message says why)
            continue
        out += [Heading(f"Samples at {params(p)}" if p.params else "Samples"), Paragraph(budget(ev), "Sampling")]
        out += (_epsilon_cells(claim, p, ev, index, ctx) if privacy else
                _cdf_tests(claim, ev, index, ctx) if ev.ks else _law_cells(claim, ev, index, ctx))
    return out + point_messages(claim, ctx)


def budget(ev: StatisticalEvidence) -> str:
    """The samples, seed, error probability and number of tests, in one line."""
    seeded = f"seed {ev.seed}" if ev.reproducible else f"seed {ev.seed}, but the code is unseeded: not reproducible"
    level = f" ({short(ev.level, 4)} per test, Bonferroni)" if ev.level is not None else ""
    return (f"{ev.samples:,} samples per dataset and run ({seeded}); overall error probability "
            f"{ev.error_probability} over {ev.tests} tests{level}; a rejection counts only when a re-run with "
            f"fresh seeds rejects it again.")


def _interval(cell: SampledCell, prime: bool = False) -> tuple[float, float]:
    bounds = cell.interval_prime if prime else cell.interval
    low, high = (to_float(b) for b in bounds) if bounds and len(bounds) == 2 else (None, None)
    return (low if low is not None else math.nan, high if high is not None else math.nan)


def _law_cells(claim: ClaimResult, ev: StatisticalEvidence, index: int, ctx: Context) -> list[Block]:
    """Conformance: each tested output's exact probability, count and interval, and their plot."""
    cells, n = ev.sampled or [], ev.samples
    if not cells or n <= 0:
        return []
    rows = []
    for c in cells[:MAX_ROWS]:
        low, high = _interval(c)
        exact = to_float(c.spec_probability)
        inside = "yes" if exact is not None and low <= exact <= high else "no"
        rows.append((c.dataset, c.output, short(c.spec_probability), f"{c.count:,} / {n:,}", f"{c.count / n:.6f}",
                     f"[{short(c.interval[0], 6)}, {short(c.interval[1], 6)}]", inside))
    shown = min(len(cells), MAX_ROWS)
    more = (f" (the first {shown} of the {ev.tests} tests, in the order made; the audit stops at a rejection)"
            if shown < ev.tests else "")
    out: list[Block] = [Table(("dataset", "output o", "spec's P(o) (exact)", "count k / n", "frequency",
                               "Clopper-Pearson interval", "P(o) inside"), tuple(rows), (2, 3, 4, 5),
                              f"Each tested output{more}: its exact probability under the spec, its frequency in "
                              f"the samples, and the two-sided Clopper-Pearson interval at the per-test level "
                              f"{short(ev.level, 4)}. A test rejects when the exact probability is outside.")]
    points = [(f"{c.dataset} → {c.output}", c.count / n, *_interval(c), to_float(c.spec_probability) or 0.0)
              for c in cells if c.interval]
    if points:
        name = ctx.name(claim.claim_id, f"frequencies-{index}")
        shown = "" if len(points) <= plots.MAX_BARS else f" (the first {plots.MAX_BARS} of {len(points)})"
        out.append(Figure(plots.sampled_frequencies(points, name),
                          f"Empirical frequencies with their Clopper-Pearson intervals (bars) against the spec's "
                          f"exact probabilities (diamonds){shown}.", name))
    return out


def _loss(cell: SampledCell) -> Optional[float]:
    """The spec's exact loss ln P(o|X) / P(o|X') at a cell (display only), infinite where P(o|X') = 0."""
    p, q = to_float(cell.spec_probability), to_float(cell.spec_probability_prime)
    if p is None or q is None or p <= 0:
        return None
    return math.inf if q <= 0 else math.log(p / q)


def _epsilon_cells(claim: ClaimResult, p: PointResult, ev: StatisticalEvidence, index: int,
                   ctx: Context) -> list[Block]:
    """Privacy: the lower confidence bound on the code's ε against the claimed ε and the spec's, the
    cells it was computed at (table and plot)."""
    n = ev.samples
    bound = ev.epsilon_lower_bound
    facts = [("claimed ε", short(ev.claimed_epsilon)),
             ("code's ε (lower confidence bound)",
              f"≥ {short(bound, 6)}: the one-sided interval [{short(bound, 6)}, ∞) at error probability "
              f"{ev.error_probability} ({compare(bound, ev.claimed_epsilon) or '?'} the claimed ε)"
              if bound is not None else "–")]
    if ev.claimed_delta not in (None, "0"):
        facts.append(("claimed δ", short(ev.claimed_delta)))
    if ev.delta_lower_bound is not None:
        facts.append(("code's δ at the claimed ε (lower confidence bound)",
                      f"≥ {short(ev.delta_lower_bound, 6)}: max over the events of P(S|X) lower bound − e^ε "
                      f"P(S|X') upper bound"))
    if ev.spec_epsilon is not None:
        facts.append(("spec's ε (largest exact loss over the universe)", short(ev.spec_epsilon, 6)))
    out: list[Block] = [Pairs(tuple(facts))]
    cells = ev.sampled or []
    if not cells or n <= 0:
        return out
    rows = []
    for c in cells[:MAX_ROWS]:
        loss = _loss(c)
        rows.append((c.dataset, c.dataset_prime or "–", c.output, f"{c.count:,} / {n:,}",
                     f"{(c.count_prime or 0):,} / {n:,}", short(c.interval[0], 6),
                     short(c.interval_prime[1], 6) if c.interval_prime else "–",
                     short(c.epsilon_lower_bound, 6),
                     "–" if loss is None else ("∞" if math.isinf(loss) else f"{loss:.6g}")))
    out.append(Table(("X", "X'", "event S", "k under X", "k' under X'", "P(S|X) ≥", "P(S|X') ≤", "code's ε ≥",
                      "spec's loss"), tuple(rows), (3, 4, 5, 6, 7, 8),
                     f"The events tested (single outputs, sets of outputs ordered by likelihood ratio, or "
                     f"half-lines of a real output), chosen from the spec's exact law by their power before "
                     f"any sample, sampled on X and X': one-sided Clopper-Pearson bounds at the per-test "
                     f"level {short(ev.level, 4)} give the lower confidence bound "
                     f"ln((P(S|X) lower − δ) / P(S|X') upper) on the code's ε."))
    marks = [(f"{c.dataset}, {c.dataset_prime}, {c.output}", to_float(c.epsilon_lower_bound) or -math.inf, _loss(c))
             for c in cells]
    name = ctx.name(claim.claim_id, f"epsilon-bounds-{index}")
    out.append(Figure(plots.epsilon_bounds(marks, to_float(ev.claimed_epsilon), name),
                      "Per tested cell: the lower confidence bound on the code's privacy loss (its interval runs "
                      "up, the arrow) against the spec's exact loss (diamond) and the claimed ε (dashed).", name))
    return out


def _cdf_tests(claim: ClaimResult, ev: StatisticalEvidence, index: int, ctx: Context) -> list[Block]:
    """Real outputs: each dataset's (coordinate's) Kolmogorov-Smirnov statistic against its DKW-Massart
    threshold, and the empirical CDFs against the exact ones with the DKW band."""
    tests = ev.ks or []
    rows = [(t.dataset, "–" if t.coordinate is None else str(t.coordinate), short(t.statistic, 6),
             short(t.threshold, 6), short(t.at, 6),
             "yes" if (to_float(t.statistic) or 0.0) > (to_float(t.threshold) or math.inf) else "no")
            for t in tests[:MAX_ROWS]]
    out: list[Block] = [Table(("dataset", "coordinate", "sup |F_n − F|", "DKW threshold", "at x", "above"),
                              tuple(rows), (2, 3, 4),
                              f"Per dataset (and coordinate of a vector output: its marginal), the largest gap "
                              f"between the samples' CDF F_n and the spec's exact CDF F, against the DKW-Massart "
                              f"threshold t with 2·exp(−2nt²) = {short(ev.level, 4)} (the per-test level): "
                              f"distribution-free and exact for every n.")]
    panels = [(f"{t.dataset}" + ("" if t.coordinate is None else f", v{t.coordinate}"),
               [(float(x), float(e), float(f)) for x, e, f in t.curve], to_float(t.threshold) or 0.0)
              for t in tests if t.curve]
    if panels:
        name = ctx.name(claim.claim_id, f"cdf-{index}")
        out.append(Figure(plots.sampled_cdf(panels, name),
                          "Empirical CDF of the samples (steps) against the spec's exact CDF (line) with the "
                          "DKW-Massart band (shaded); a test rejects where the steps leave the band"
                          + (f" (the first 6 of {len(panels)})" if len(panels) > 6 else "") + ".", name))
    return out


def _cdf_witness(p: PointResult, ev: StatisticalEvidence, ctx: Context) -> Block:
    """A refuted conformance of real outputs: the dataset, the KS statistic against the DKW threshold."""
    w = p.witness
    assert w is not None
    items = (("dataset", repr(w.x)), ("where", str(w.output)), ("sup |F_n − F|", w.p), ("DKW threshold", w.p_prime))
    verdict = (f"the samples' CDF is {short(w.p, 6)} away from the spec's exact CDF, above the DKW-Massart "
               f"threshold {short(w.p_prime, 6)}" + _rerun(ev))
    return witness_box(p, ctx, items, verdict)


def _law_witness(p: PointResult, ev: StatisticalEvidence, ctx: Context) -> Block:
    """A refuted conformance: the dataset, the output, its frequency against its exact probability."""
    w = p.witness
    assert w is not None
    cell = ev.worst
    items = [("dataset", repr(w.x)), ("output o", repr(w.output)), ("frequency k/n", w.p),
             ("spec's P(o) (exact)", w.p_prime)]
    verdict = ""
    if cell is not None and len(cell.interval) == 2:
        items.append((f"Clopper-Pearson interval (level {short(ev.level, 4)})",
                      f"[{cell.interval[0]}, {cell.interval[1]}]"))
        verdict = (f"the spec's P(o) = {short(w.p_prime)} lies outside [{short(cell.interval[0], 6)}, "
                   f"{short(cell.interval[1], 6)}]" + _rerun(ev))
    elif w.p_prime == "0":
        verdict = "the spec gives this output probability 0: one sample of it is impossible under the spec" + _rerun(ev)
    return witness_box(p, ctx, tuple(items), verdict)


def _privacy_witness(p: PointResult, ev: StatisticalEvidence, ctx: Context) -> Block:
    """A refuted privacy claim: the cell, both frequencies, the bounds and the code's ε bound."""
    w = p.witness
    assert w is not None
    cell = ev.worst
    items = [("X", repr(w.x)), ("X'", repr(w.x_prime)), ("output o", repr(w.output)),
             ("frequency under X", w.p), ("frequency under X'", w.p_prime)]
    if cell is not None:
        items += [("P(o|X) ≥", cell.interval[0]),
                  ("P(o|X') ≤", cell.interval_prime[1] if cell.interval_prime else "–")]
    items.append(("code's ε ≥", ev.epsilon_lower_bound or "–"))
    verdict = (f"code's ε ≥ {short(ev.epsilon_lower_bound, 6)} {compare(ev.epsilon_lower_bound, ev.claimed_epsilon)} "
               f"claimed ε = {short(ev.claimed_epsilon)} at error probability {ev.error_probability}" + _rerun(ev))
    return witness_box(p, ctx, tuple(items), verdict)


def _rerun(ev: StatisticalEvidence) -> str:
    return "; the re-run with fresh seeds agrees" if ev.confirmed else ""


# ----- conformance -----------------------------------------------------------------------------

@section("conforms")
def conforms(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """A black box's conformance is statistical; an implementation's is exact: the tolerance against the
    largest difference found, and the witness of a refutation (dataset, output, both probabilities)."""
    if sampled(claim):
        return statistical(claim, decl, ctx)
    out: list[Block] = []
    rows = []
    for p in claim.points:
        ev = p.evidence if isinstance(p.evidence, ConformanceEvidence) else ConformanceEvidence()
        tolerance = ev.tolerance or str(getattr(decl, "tolerance", "0"))
        if boxed(p) and p.witness is not None:
            out.append(_conforms_witness(p, tolerance, ctx))
        if ev.largest_difference is not None:
            at = ev.largest_at or ["–", "–"]
            rows.append((params(p), p.status.value, short(tolerance), short(ev.largest_difference), at[0], at[1]))
    if rows:
        out.append(Table(("parameters", "status", "tolerance t", "largest |P_impl(o|X) − P_spec(o|X)|", "dataset X",
                          "output o"), tuple(rows), (2, 3),
                         "The largest certified difference between the implementation's and the spec's output "
                         "probabilities over every dataset and output (an upper end; on a refutation, the "
                         "witness's difference), against the tolerance."))
    return out + point_messages(claim, ctx)


def _conforms_witness(p: PointResult, tolerance: str, ctx: Context) -> Block:
    w = p.witness
    assert w is not None
    items: list[tuple[str, str]] = [("dataset", repr(w.x)), ("output o", repr(w.output)),
                                    ("P(o) under the implementation", w.p), ("P(o) under the spec program", w.p_prime)]
    verdict = ""
    try:
        difference = format(abs(Decimal(w.p) - Decimal(w.p_prime)), "e")
        items.append(("difference", difference))
        verdict = (f"|difference| = {short(difference)} {compare(difference, _decimal(tolerance))} "
                   f"tolerance {short(tolerance)}")
    except InvalidOperation:
        pass
    return witness_box(p, ctx, tuple(items), verdict)


def _decimal(value: str) -> str:
    """A tolerance as a decimal string ("0" stays "0"; a ratio "1/2**50" as its value), for compare()."""
    try:
        return str(Decimal(value))
    except InvalidOperation:
        number = to_float(value)
        return repr(number) if number is not None else value


# ----- floating point --------------------------------------------------------------------------

@section("float_private")
def float_private(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """The witness output as a double (decimal and hex) with its grid index; for a finite image the exact
    ε of the doubles and the pair's counts per output."""
    out: list[Block] = []
    for p in claim.points:
        ev = p.evidence
        if not isinstance(ev, FloatEvidence):
            continue
        if boxed(p):
            out.append(_float_witness(p, ev, ctx))
        facts = [("grid of uniforms", f"{ev.grid_points:,} points"), ("neighbouring value pairs", f"{ev.value_pairs:,}"),
                 ("sampler evaluations", f"{ev.evaluations:,}")]
        if ev.candidates_tried is not None:
            facts.append(("candidate outputs unreachable from the neighbour",
                          f"{ev.unreachable_candidates or 0:,} of {ev.candidates_tried:,}"))
        if ev.output_counts:  # in full: the exact ε of doubles may differ from the claimed in the 12th digit
            facts += [(label, value) for label, value in (("exact ε of the doubles", ev.achieved_epsilon),
                                                          ("claimed ε", ev.claimed_epsilon)) if value is not None]
        out += [Heading(f"Grid at {params(p)}" if p.params else "Grid"), Pairs(tuple(facts))]
        out += _counts_table(ev)
    return out + point_messages(claim, ctx)


def _double(value: Any) -> tuple[str, str]:
    """A double as (decimal repr, hex); a value that is not a number is shown as it is."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return repr(value), "–"
    return repr(number), number.hex()


def _float_witness(p: PointResult, ev: FloatEvidence, ctx: Context) -> Block:
    w = p.witness
    assert w is not None
    decimal, hexa = _double(w.output)
    items = [("X", repr(w.x)), ("X'", repr(w.x_prime)), ("output y (decimal)", decimal), ("output y (hex)", hexa)]
    if ev.witness_k is not None:
        items.append(("grid index k for X", f"{ev.witness_k:,}"))
    items += [("P(y | X)", w.p), ("P(y | X')", w.p_prime)]
    if w.p_prime == "0":
        verdict = (f"no grid index k' among the {ev.grid_points:,} uniforms gives y from X': the privacy loss is "
                   f"infinite")
    else:
        verdict = (f"exact ε of the doubles {short(ev.achieved_epsilon)} "
                   f"{compare(ev.achieved_epsilon, ev.claimed_epsilon)} claimed ε = {short(ev.claimed_epsilon)}")
    return witness_box(p, ctx, tuple(items), verdict)


def _counts_table(ev: FloatEvidence) -> list[Block]:
    """A finite image: the pair's counts per output, the first rows, the exact ratio of each."""
    if not ev.output_counts or not ev.counts_of:
        return []
    q, q_prime = ev.counts_of
    rows = []
    for y, count, count_prime in ev.output_counts[:MAX_ROWS]:
        ratio = "∞" if count_prime == 0 else ("0" if count == 0 else f"{count / count_prime:.13g}")
        decimal, hexa = _double(y)
        mark = " (largest loss)" if hexa == ev.epsilon_output_hex else ""
        rows.append((decimal + mark, hexa, f"{count:,}", f"{count_prime:,}", ratio))
    return [Table(("output y", "hex", f"uniforms giving y from q = {q}", f"from q' = {q_prime}", "ratio"),
                  tuple(rows), (2, 3, 4),
                  f"Exact counts, among the {ev.grid_points:,} grid points, of the uniforms giving each output, for "
                  f"the pair of query values where the loss is largest (the first {len(rows)} outputs by value).")]


__all__ = ["budget", "conforms", "float_private", "sampled", "statistical"]
