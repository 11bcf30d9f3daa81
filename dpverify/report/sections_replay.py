"""Report section of the grey-box replay (``calibrated``): the trace of the failing (or worst) pair.

Per grid point: a refutation's witness box (the pair, the seed, the violating call and its values),
the budget in one line, the spec's noise calls with their derived sensitivities, and the replayed
pair's noise draws side by side -- call #, site, method, the value fed into it on X and on X', its
scale, the code's cost against the spec's -- with the first data-dependent call if the two runs'
sequences of calls differ.
"""
from __future__ import annotations

from typing import Optional

from ..dsl.claims import Claim
from ..evidence import ReplayEvidence, ReplayTrace
from ..results import ClaimResult, PointResult
from .blocks import Block, Heading, Pairs, Paragraph, Table
from .section_parts import MAX_ROWS, Context, boxed, params, point_messages, section, witness_box


@section("calibrated")
def calibrated(claim: ClaimResult, decl: Optional[Claim], ctx: Context) -> list[Block]:
    """Per point: the witness (if refuted), the budget, the spec's calls and the replayed pair's trace."""
    out: list[Block] = []
    for p in claim.points:
        ev = p.evidence
        if not isinstance(ev, ReplayEvidence):
            continue
        if boxed(p):
            out.append(_witness(p, ev, ctx))
        if ev.search is None:  # decided before any replay (its message says why)
            continue
        out += [Heading(f"Replay at {params(p)}" if p.params else "Replay"), Paragraph(budget(ev), "Budget")]
        out += _spec_calls(ev)
        if ev.trace is not None:
            out += trace_blocks(ev.trace, "failing" if boxed(p) else "worst")
        if ev.first_divergence is not None and (ev.trace is None or ev.trace.divergence is None):
            out += divergence_blocks(ev.first_divergence)
        if ev.problems:
            out.append(Pairs(tuple((f"not compared ({i + 1})", text) for i, text in enumerate(ev.problems))))
    return out + point_messages(claim, ctx)


def budget(ev: ReplayEvidence) -> str:
    """Pairs run, seeds, how the pairs were chosen, in one line."""
    seeds = ", ".join(map(str, ev.seeds or []))
    how = ("every neighbouring pair of the universe" if ev.search == "enumeration"
           else "a hypothesis search (derandomised, shrinking a violating pair)")
    return (f"{ev.pairs_run:,} of {ev.pairs_in_universe:,} neighbouring pairs ({how}) x seeds {seeds}; "
            f"runs with different control flow: {ev.divergences:,}. Randomness is sampled, not enumerated: "
            f"a pass is consistent, never verified.")


def _spec_calls(ev: ReplayEvidence) -> list[Block]:
    if not ev.spec_calls:
        return []
    rows = tuple((c["call"], c["site"], c["kind"], c["delta"], c["scale"], c["spec_cost"]) for c in ev.spec_calls)
    totals = "; ".join(f"{group}: {value}" for group, value in (ev.spec_totals or {}).items())
    return [Table(("call #", "spec's site", "kind", "Δ (derived)", "scale", "Δ / scale"), rows, (0, 3, 4, 5),
                  "The spec program's noise calls, in order: the sensitivity Δ of each centre over the universe's "
                  "neighbouring pairs, derived by the engine" + (f"; largest total cost over a pair: {totals}"
                                                                 if totals else "") + ".")]


def trace_blocks(trace: ReplayTrace, which: str) -> list[Block]:
    """The pair's noise draws as a table, and its control-flow divergence."""
    rows = tuple((str(c.index), c.site, c.method, c.value or "–", c.value_prime or "–", c.scale or "–",
                  f"{c.cost or '–'} vs {c.spec_cost or '–'}" + (" ✗" if c.violation else ""), c.note or "")
                 for c in trace.calls[:MAX_ROWS])
    totals = "; ".join(f"{group} total {code} vs {spec}" + (" ✗" if group == trace.total_violation else "")
                       for group, (code, spec) in (trace.totals or {}).items())
    out: list[Block] = [Table(("call #", "site", "method", "value on X", "value on X'", "scale", "cost vs spec",
                               "note"), rows, (0, 3, 4, 5),
                              f"The {which} pair X = {trace.x}, X' = {trace.x_prime} replayed with seed {trace.seed}: "
                              "each noise draw with the value fed into it (its loc plus what the noise is added "
                              "to), its scale, and the code's cost |value(X) − value(X')| / scale against the "
                              "spec's Δ / scale" + (f"; {totals}" if totals else "") + ".")]
    return out + divergence_blocks(trace)


def divergence_blocks(trace: ReplayTrace) -> list[Block]:
    """Where the two runs' sequences of calls first differ (data-dependent control flow), if they do."""
    if not trace.divergence:
        return []
    d = trace.divergence
    return [Pairs((("control flow diverges at call", d["index"]), ("pair", f"X = {trace.x}, X' = {trace.x_prime}, "
                                                                          f"seed {trace.seed}"),
                   ("on X", f"{d['method']} at {d['site']}"), ("on X'", f"{d['method_prime']} at {d['site_prime']}")))]


def _witness(p: PointResult, ev: ReplayEvidence, ctx: Context) -> Block:
    w = p.witness
    assert w is not None
    trace = ev.trace
    items = [("X", repr(w.x)), ("X'", repr(w.x_prime)), ("seed", str(trace.seed) if trace else "?"),
             ("where", str(w.output)), ("on X", w.p), ("on X'", w.p_prime)]
    row = next((c for c in trace.calls if c.violation), None) if trace else None
    if row is not None:
        items += [("scale", row.scale or "–"), ("cost |value(X) − value(X')| / scale", row.cost or "–"),
                  ("spec's Δ / scale", row.spec_cost or "–")]
    elif trace is not None and trace.total_violation:
        code, spec = (trace.totals or {}).get(trace.total_violation, ["–", "–"])
        items += [("total cost", code), ("spec's largest total", spec)]
    if trace is not None and trace.divergence:
        d = trace.divergence
        items.append(("control flow diverges at call", f"{d['index']}: {d['method']} at {d['site']} on X, "
                                                       f"{d['method_prime']} at {d['site_prime']} on X'"))
    verdict = "re-run independently with the same seed and recomputed exactly" if ev.confirmed else ""
    return witness_box(p, ctx, tuple(items), verdict)


__all__ = ["budget", "calibrated", "divergence_blocks", "trace_blocks"]
