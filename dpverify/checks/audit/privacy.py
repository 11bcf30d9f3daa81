"""``private(eps, delta)`` about a black box with discrete outputs: Clopper-Pearson bounds on chosen events.

No samples are spent choosing: :func:`.statistical_events.choose` picks ``box.cells`` events
(single outputs, likelihood-ratio prefixes, the spec's Neyman-Pearson delta-witness event) from
the spec program's exact law, by their expected power at the sample count.  The code is sampled
on each event's X and X'; one-sided Clopper-Pearson bounds at ``error / (2 events)`` give, with
overall error probability ``error``, a lower confidence bound P(S|X)_lo - e^eps P(S|X')_hi on the
code's delta at eps, and ln((P(S|X)_lo - delta) / P(S|X')_hi) on its epsilon at delta.  The claim
is refuted when the first exceeds delta and an independent re-run with fresh seeds agrees.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

from ...dsl.black_box import BlackBox
from ...dsl.claims import Private
from ...engine.decide.decimals import decimal
from ...evidence import SampledCell
from ...results import PointResult, Status, Witness
from . import clopper_pearson as cp
from .cells import KeyMap
from .events import choose, largest_loss
from .sequential import look_level, looks

MARGIN = 1e-12
"""Relative slack on e^eps (a double) and delta in a refutation: only clear excesses count."""


def event_label(keys: tuple) -> Any:
    """The witness output of an event: the output itself, or the set's description."""
    if len(keys) == 1:
        return keys[0]
    shown = ", ".join(repr(k) for k in keys[:6])
    return f"one of {len(keys)} outputs {{{shown}{', ...' if len(keys) > 6 else ''}}}"


def bounds(n: int, k: int, k_prime: int, level: float, eps: float, delta: float) -> tuple[float, float, float, float]:
    """(P(S|X) lower, P(S|X') upper, the delta bound P_lo - e^eps Q_hi, the epsilon bound at delta)."""
    p_lo, q_hi = cp.lower_bound(n, k, level), cp.upper_bound(n, k_prime, level)
    gap = p_lo - math.exp(eps) * (1 + MARGIN) * q_hi
    bound = math.log((p_lo - delta) / q_hi) if p_lo > delta else -math.inf
    return p_lo, q_hi, gap, bound


@dataclass(frozen=True)
class Tested:
    """One event to test: datasets ``i`` (X) and ``j`` (X') by index, what the event is (``keys``: law
    keys, or a half-line), the spec's P(S|X) and P(S|X') as doubles (``p``, ``q``), its score, its
    label, and the spec's exact probabilities as decimal strings (for the evidence)."""

    i: int
    j: int
    keys: tuple
    p: float
    q: float
    score: float
    output: Any  # the witness's output: the output itself, or a description of the event
    spec_p: str = ""
    spec_q: str = ""

    @property
    def label(self) -> str:
        return self.output if isinstance(self.output, str) and len(self.keys) != 1 else repr(self.output)


def private(table: Any, pairs: tuple, box: BlackBox, claim: Private, eps: Any, delta: Any,
            counts: Callable[..., Counter], result: PointResult) -> PointResult:
    """Discrete outputs: ``counts(index, run, m)``: the first ``m`` draws on dataset ``index`` in ``run`` (0,
    or 1 to confirm), read at the sequential looks."""
    claimed, slack = float(eps), float(delta)
    chosen = choose(table, *pairs, claimed, slack, box.samples, box.cells)
    events = [Tested(e.i, e.j, e.keys, e.p, e.q, e.score, event_label(e.keys),
                     decimal(_mass(table.laws[table.law_of[e.i]], e.keys)),
                     decimal(_mass(table.laws[table.law_of[e.j]], e.keys))) for e in chosen]
    if not events:
        result.message = "the universe has no neighbouring pair with different laws under the spec: nothing to test"
        return result
    keys = KeyMap(o for law in table.laws for o in law)

    def count(event: Tested, index: int, run: int, m: int) -> int:
        mapped, _ = keys.counts(counts(index, run, m))
        return sum(mapped.get(o, 0) for o in event.keys)

    return decide(events, count, table.datasets, box, claim, claimed, slack, result, largest_loss(table, *pairs),
                  f"{len(events)} events chosen from {box.spec_program.__name__}'s exact law by their power at "
                  f"{box.samples:,} samples", sequential=True)


def decide(events: list[Tested], count: Callable[..., int], datasets: list, box: BlackBox,
           claim: Private, claimed: float, slack: float, result: PointResult, spec_loss: Optional[float],
           what: str, sequential: bool = False) -> PointResult:
    """Bound every event's P(S|X) - e^eps P(S|X') from below at ``error / (2 events)`` per bound; refuted
    when the largest exceeds delta and the re-run with fresh seeds agrees.  ``sequential``: ``count(event,
    index, run, m)`` counts in the first ``m`` draws, and the bounds are read at the looks of
    :mod:`.sequential`, each bound's level spent over them (the first look whose bound exceeds delta
    stops the sampling); else ``count(event, index, run)`` counts in all of them, read once."""
    n, ev = box.samples, result.evidence
    level = float(box.error) / (2 * len(events))
    ev.tests, ev.datasets, ev.level = 2 * len(events), len(datasets), repr(level)
    if spec_loss is not None:
        ev.spec_epsilon = repr(spec_loss)
    sizes = looks(n) if sequential else [n]

    def counted(event: Tested, index: int, run: int, m: int) -> int:
        return count(event, index, run, m) if sequential else count(event, index, run)

    def spent(m: int) -> float:
        return look_level(level, m, n) if sequential else level

    factor = math.exp(claimed) * (1 + MARGIN)
    for m in sizes:
        pairs = [(counted(event, event.i, 0, m), counted(event, event.j, 0, m), event) for event in events]
        if m < n and not any(k - factor * kp > slack * (1 + MARGIN) * m for k, kp, _ in pairs):
            continue  # no bound can exceed delta here: P_lo <= k/m and Q_hi >= k'/m (a screen, no test)
        tested = [(bounds(m, k, kp, spent(m), claimed, slack), k, kp, event) for k, kp, event in pairs]
        if m == n or max(t[0][2] for t in tested) > slack * (1 + MARGIN):
            break
    ev.samples = m
    ev.sampled = [_cell(datasets, e, k, kp, b) for b, k, kp, e in tested]
    (p_lo, q_hi, gap, bound), k, k_prime, event = max(tested, key=lambda t: (t[0][2], t[0][3]))
    ev.epsilon_lower_bound, ev.delta_lower_bound = repr(bound), repr(gap)
    ev.worst = _cell(datasets, event, k, k_prime, (p_lo, q_hi, gap, bound))
    data, prime = datasets[event.i], datasets[event.j]
    where = f"X = {data!r}, X' = {prime!r}, event {event.label}: {k}/{m:,} against {k_prime}/{m:,}"
    at_delta = f" at delta = {slack:.6g}" if slack else ""
    if not gap > slack * (1 + MARGIN):
        result.status = Status.CONSISTENT
        result.message = (f"consistent with {claim.describe()}: the lower confidence bound on the code's epsilon"
                          f"{at_delta} is {bound:.6g} <= {claimed:.6g} (on its delta at eps: {gap:.3g} <= "
                          f"{slack:.6g}) at overall error probability {box.error} ({what}, {box.seeded}; "
                          f"largest at {where})")
        return result
    again = None
    for m2 in sizes:
        again = bounds(m2, counted(event, event.i, 1, m2), counted(event, event.j, 1, m2), spent(m2), claimed, slack)
        if again[2] > slack * (1 + MARGIN):
            break
    assert again is not None
    ev.confirmed = again[2] > slack * (1 + MARGIN)
    stopped = "" if m == n else f"; a sequential test's look after {m:,} of the {n:,} samples"
    found = (f"the code's epsilon{at_delta} is at least {bound:.6g} > {claimed:.6g} (its delta at eps at least "
             f"{gap:.6g} > {slack:.6g}) at {where} (Clopper-Pearson bounds P(S|X) >= {p_lo:.6g}, "
             f"P(S|X') <= {q_hi:.6g}; {what}{stopped})")
    if not ev.confirmed:
        result.message = f"{found}, but the re-run with fresh seeds gave {again[3]:.6g}: not confirmed"
        return result
    result.status = Status.REFUTED
    result.witness = Witness(data, prime, event.output, f"{k}/{m}", f"{k_prime}/{m}", quantity="frequency")
    result.message = (f"{found}; the re-run with fresh seeds agrees ({again[3]:.6g}): refuted at overall error "
                      f"probability {box.error}")
    return result


def _cell(datasets: list, event: Tested, k: int, k_prime: int, found: tuple) -> SampledCell:
    p_lo, q_hi, gap, bound = found
    return SampledCell(repr(datasets[event.i]), event.label, k, [repr(p_lo), "1"], event.spec_p,
                       repr(datasets[event.j]), k_prime, ["0", repr(q_hi)], event.spec_q, repr(bound),
                       delta_lower_bound=repr(gap), outputs=[repr(o) for o in event.keys[:50]]
                       if event.spec_p and len(event.keys) > 1 else None)


def _mass(law: dict, keys: tuple) -> Any:
    """The exact (certified) mass of the outputs ``keys`` under ``law`` (0 when it gives none)."""
    found = [law[o] for o in keys if o in law]
    if not found:
        return 0
    total = found[0]
    for w in found[1:]:
        total = total + w
    return total


__all__ = ["Tested", "bounds", "decide", "event_label", "private"]
