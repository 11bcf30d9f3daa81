"""The events a statistical privacy audit tests, chosen from the spec's exact law before any sample.

A black box's ``private(eps, delta)`` claim is tested on a few events S (sets of outputs) for a
few ordered neighbouring pairs (X, X'): the code is refuted on S when the Clopper-Pearson lower
bound on P(S|X) minus e^eps times the upper bound on P(S|X') exceeds delta.  Which events? For
each ordered pair of distinct laws the candidates are

* each single output o (the cells of highest loss: the old audit);
* the prefixes of the outputs ordered by the likelihood ratio P(o|X) / P(o|X'), the largest
  first -- among them the Neyman-Pearson event {o : P(o|X) > e^eps P(o|X')}, which attains the
  spec's exact delta at eps (its delta witness).

Samples, not tests, are the cost: every event tested lies on the two datasets of the best one
(both directions), so the audit samples two datasets (and two more in the confirming re-run).
Each candidate is scored by its expected power at the sample count, from the spec's exact law:
the gap P(S|X) - e^eps P(S|X') - delta in units of the sum of the two one-sided bounds' margins,
(sqrt(P(S|X)(1 - P(S|X))) + e^eps sqrt(P(S|X')(1 - P(S|X')))) / sqrt(n) (each probability is
bounded on its own, so their margins add).  The ``count`` best on the
best pair are tested (Bonferroni over all of them): a violation spread over many low-probability outputs is
found on the event that gathers it, with no sample spent looking for it.  Where the spec program
is the correct mechanism the score ranks events by how close they come to the claimed bound (a
heuristic: the code's own law is unknown); the test itself is valid whatever was chosen, as the
choice reads no sample.

Scores are doubles from the certified laws' midpoints: they only choose; no verdict reads them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Event:
    """A tested event: datasets ``i`` (X) and ``j`` (X') by index in the table, the law keys it
    gathers (largest likelihood ratio first), the spec's P(S|X), P(S|X') as doubles, its score."""

    i: int
    j: int
    keys: tuple
    p: float
    q: float
    score: float

    @property
    def loss(self) -> float:
        """The spec's ln P(S|X) / P(S|X') (infinite where P(S|X') = 0)."""
        return math.inf if self.q <= 0 else math.log(self.p / self.q) if self.p > 0 else -math.inf


def score(p: float, q: float, factor: float, delta: float, n: int) -> float:
    """The gap P(S|X) - e^eps P(S|X') - delta in units of the two bounds' summed standard errors at n samples."""
    spread = (math.sqrt(max(p * (1 - p), 0.0)) + factor * math.sqrt(max(q * (1 - q), 0.0))) / math.sqrt(n)
    gap = p - factor * q - delta
    return gap / max(spread, 1e-300)


def choose(table: Any, left: Any, right: Any, eps: float, delta: float, n: int, count: int) -> list[Event]:
    """The ``count`` events of highest score over every ordered neighbouring pair of distinct laws,
    one per distinct (law, law, keys), in a deterministic order."""
    factor = math.exp(eps)
    done: set[tuple[int, int]] = set()
    best: dict[tuple, Event] = {}
    for a, b in zip(left.tolist(), right.tolist()):
        for i, j in ((a, b), (b, a)):
            li, lj = table.law_of[i], table.law_of[j]
            if li == lj or (li, lj) in done:
                continue
            done.add((li, lj))
            for event in _candidates(table.laws[li], table.laws[lj], i, j, factor, delta, n, count):
                best.setdefault((li, lj, event.keys), event)
    events = sorted(best.values(), key=lambda e: (-e.score, -e.loss, e.i, e.j, len(e.keys), repr(e.keys)))
    if not events:
        return []
    pair = {events[0].i, events[0].j}  # the samples are the cost: every event on the best pair's two datasets
    return [e for e in events if {e.i, e.j} == pair][:count]


def largest_loss(table: Any, left: Any, right: Any) -> float:
    """The spec's largest single-output loss ln P(o|X) / P(o|X') over the neighbouring pairs (a double)."""
    best = -math.inf
    for a, b in zip(left.tolist(), right.tolist()):
        for i, j in ((a, b), (b, a)):
            law, law_prime = table.laws[table.law_of[i]], table.laws[table.law_of[j]]
            for o, w in law.items():
                p = float(w.mid)
                q = float(law_prime[o].mid) if o in law_prime else 0.0
                if p > 0:
                    best = max(best, math.inf if q <= 0 else math.log(p / q))
    return best


def _candidates(law: dict, law_prime: dict, i: int, j: int, factor: float, delta: float, n: int,
                count: int) -> list[Event]:
    """The single outputs and the ``count`` best likelihood-ratio prefixes of one ordered pair of laws."""
    rows = []
    for o, w in law.items():
        p = float(w.mid)
        if p <= 0:
            continue
        q = float(law_prime[o].mid) if o in law_prime else 0.0
        rows.append((math.inf if q <= 0 else p / q, p, q, repr(o), o))
    rows.sort(key=lambda r: (-r[0], -r[1], r[3]))
    out = [Event(i, j, (o,), p, q, score(p, q, factor, delta, n)) for _, p, q, _, o in rows]
    prefixes, p_sum, q_sum = [], 0.0, 0.0
    for k, (_, p, q, _, _) in enumerate(rows[:-1]):  # every prefix but the whole support (gap <= 0 there)
        p_sum, q_sum = min(p_sum + p, 1.0), min(q_sum + q, 1.0)
        if k:
            prefixes.append((score(p_sum, q_sum, factor, delta, n), k + 1, p_sum, q_sum))
    prefixes.sort(key=lambda t: (-t[0], t[1]))
    out += [Event(i, j, tuple(r[4] for r in rows[:size]), p_sum, q_sum, value)
            for value, size, p_sum, q_sum in prefixes[:count]]
    return out


__all__ = ["Event", "choose", "largest_loss", "score"]
