"""The statistical audit of a black box (``dp.black_box``): samples against the spec's exact law.

Conformance (``dp.conforms(spec_program)``): on every dataset of the universe the code runs
``samples`` times; for each output the spec gives a positive probability, an exact two-sided
binomial test (the output's exact probability against its count's Clopper-Pearson interval) at
error probability ``error / tests`` (Bonferroni over every dataset and output).  An output the
spec gives probability 0 is impossible under it: seen once, it refutes (exactly).

Privacy (``dp.private(eps)``): no samples are spent choosing an event.  The spec program's exact
table names the cells (X, X', o) of highest privacy loss; the code is sampled on X and X', and
the one-sided Clopper-Pearson bounds (P(o|X) from below, P(o|X') from above, each at
``error / (2 cells)``) give a lower confidence bound on the code's epsilon.

A rejection is reported ``refuted`` only when an independent re-run with fresh seeds (run 1,
the statistical counterpart of the exact checks' recomputation) rejects the same test at the
same level; otherwise ``unknown``, saying so.  With no rejection the claim is ``consistent``:
the samples give no evidence against it at the stated error probability -- never ``verified``.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Any, Optional

from ...dsl.black_box import BlackBox
from ...dsl.claims import Claim, Conforms, Private
from ...dsl.params import Point, point_label, substitute
from ...dsl.spec import Spec
from ...engine.decimals import decimal
from ...engine.work import params
from ...errors import SpecError
from ...evidence import SampledCell, StatisticalEvidence
from ...results import PointResult, Status, Witness
from ..workspace import Workspace
from . import clopper_pearson as cp


SAMPLED_CELLS = 100
"""The most tested cells a conformance audit records with their intervals in its evidence (for the report)."""


class StatisticalCheck:
    """Claims about a :class:`~dpverify.dsl.black_box.BlackBox` mechanism (``black_box`` checks only
    take specs whose mechanism is one; see :func:`dpverify.checks.check_point`)."""

    kind = "statistical"
    black_box = True

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, (Conforms, Private))

    def run(self, spec: Spec, claim: Claim, point: Point, ws: Workspace) -> PointResult:
        box = spec.mechanism
        assert isinstance(box, BlackBox)
        evidence = StatisticalEvidence(samples=box.samples, seed=box.seed, error_probability=str(box.error),
                                       reproducible=box.kind != "unseeded")
        result = PointResult(point_label(point), Status.UNKNOWN, "", evidence=evidence,
                             method=f"statistical audit: {box.samples:,} samples per dataset ({box.seeded}), "
                                    "exact binomial tests against the spec's exact law, Bonferroni-corrected; "
                                    "a rejection re-run with fresh seeds")
        if isinstance(claim, Conforms):
            if claim.tolerance != 0:
                result.message = "a statistical audit tests the exact law: claim dp.conforms(spec_program) without a tolerance"
                return result
            return _conforms(spec, box, claim, point, ws, result)
        assert isinstance(claim, Private)
        if claim.delta != 0:
            result.message = "the statistical audit of a black box decides pure DP only (delta = 0) in this version"
            return result
        return _private(spec, box, claim, point, ws, result)


def _counts(spec: Spec, box: BlackBox, point: Point, ws: Workspace, index: int, run: int) -> Counter:
    """The outputs of ``box`` on dataset ``index`` in ``run`` (0, or 1 for the re-run), sampled once per run."""
    key = ("black-box-samples", id(spec), point, index, run)
    if key not in ws.memo:
        datasets, _, _ = ws.datasets(spec)
        ws.memo[key] = box.sample(datasets[index], params(point), run, index)
    return ws.memo[key]


def _bounds(weight: Any) -> tuple[float, float]:
    """A certified probability interval as doubles rounded outwards."""
    return (max(0.0, math.nextafter(float(weight.a), -math.inf)),
            min(1.0, math.nextafter(float(weight.b), math.inf)))


def _conforms(spec: Spec, box: BlackBox, claim: Conforms, point: Point, ws: Workspace,
              result: PointResult) -> PointResult:
    table = ws.discrete_table(spec, claim.other, point, "conforms")
    laws = [table.laws[table.law_of[i]] for i in range(len(table.datasets))]
    tests = sum(1 for law in laws for w in law.values() if w.b > 0)
    level = float(box.error) / tests
    n, ev = box.samples, result.evidence
    ev.tests, ev.datasets, ev.level, ev.sampled = tests, len(table.datasets), repr(level), []
    largest: Optional[tuple[float, int, Any]] = None
    for i, data in enumerate(table.datasets):
        counts = _counts(spec, box, point, ws, i, 0)
        impossible = sorted((o for o in counts if o not in laws[i] or not laws[i][o].b > 0), key=repr)
        if impossible:
            return _impossible(spec, box, claim, point, ws, result, i, impossible[0], counts)
        for o in sorted(laws[i], key=repr):
            lo, hi = _bounds(laws[i][o])
            k = counts.get(o, 0)
            deviation = max(abs(k / n - lo), abs(k / n - hi))
            if largest is None or deviation > largest[0]:
                largest = (deviation, i, o)
            if len(ev.sampled) < SAMPLED_CELLS:
                ev.sampled.append(_cell(data, o, k, n, level, laws[i][o]))
            side = cp.outside(n, k, lo, hi, level)
            if side:
                return _deviates(spec, box, claim, point, ws, result, i, o, side, level)
    assert largest is not None
    deviation, i, o = largest
    ev.worst = _cell(table.datasets[i], o, _counts(spec, box, point, ws, i, 0).get(o, 0), n, level, laws[i][o])
    ev.largest_deviation = repr(deviation)
    name = getattr(claim.other, "__name__", "the spec program")
    result.status = Status.CONSISTENT
    result.message = (f"consistent with {name}'s exact law on all {len(table.datasets):,} datasets: {n:,} samples "
                      f"each ({box.seeded}), no rejection among {tests} exact binomial tests at overall error "
                      f"probability {box.error}; largest |frequency - probability| {deviation:.3g} "
                      f"(dataset {table.datasets[i]!r}, output {o!r}: {ev.worst.count}/{n} against "
                      f"{ev.worst.spec_probability[:12]}, interval [{ev.worst.interval[0][:10]}, "
                      f"{ev.worst.interval[1][:10]}])")
    return result


def _cell(data: tuple, output: Any, k: int, n: int, level: float, weight: Any) -> SampledCell:
    lo, hi = cp.interval(n, k, level)
    return SampledCell(repr(data), repr(output), k, [repr(lo), repr(hi)], decimal(weight))


def _impossible(spec: Spec, box: BlackBox, claim: Conforms, point: Point, ws: Workspace, result: PointResult,
                index: int, output: Any, counts: Counter) -> PointResult:
    """An output the spec never gives: refuted when the re-run with fresh seeds produces it again."""
    data = ws.datasets(spec)[0][index]
    again = _counts(spec, box, point, ws, index, 1).get(output, 0)
    name = getattr(claim.other, "__name__", "the spec program")
    seen = f"{counts[output]} of {box.samples:,} samples"
    result.evidence.worst = SampledCell(repr(data), repr(output), counts[output], [], "0")
    result.evidence.confirmed = again > 0
    if not again:
        result.message = (f"on dataset {data!r} the code gave {output!r} ({seen}), impossible under {name}, "
                          f"but the re-run with fresh seeds did not reproduce it: not reported as a refutation")
        return result
    result.status = Status.REFUTED
    result.witness = Witness(data, data, output, f"{counts[output]}/{box.samples}", "0", quantity="frequency")
    result.message = (f"on dataset {data!r} the code gives {output!r} ({seen}; {again} in the re-run with fresh "
                      f"seeds), an output {name} gives probability 0: impossible under the spec (exact, "
                      f"error probability 0)")
    return result


def _deviates(spec: Spec, box: BlackBox, claim: Conforms, point: Point, ws: Workspace, result: PointResult,
              index: int, output: Any, side: int, level: float) -> PointResult:
    """A rejected binomial test, reported when the re-run with fresh seeds rejects it the same way."""
    table = ws.discrete_table(spec, claim.other, point, "conforms")
    data, weight, n = table.datasets[index], table.laws[table.law_of[index]][output], box.samples
    lo, hi = _bounds(weight)
    k = _counts(spec, box, point, ws, index, 0).get(output, 0)
    k2 = _counts(spec, box, point, ws, index, 1).get(output, 0)
    ev = result.evidence
    ev.worst = _cell(data, output, k, n, level, weight)
    ev.largest_deviation = repr(max(abs(k / n - lo), abs(k / n - hi)))
    ev.confirmed = cp.outside(n, k2, lo, hi, level) == side
    name = getattr(claim.other, "__name__", "the spec program")
    found = (f"on dataset {data!r}, output {output!r} came {k}/{n:,} times against probability "
             f"{decimal(weight)[:12]} under {name} (interval [{ev.worst.interval[0][:10]}, "
             f"{ev.worst.interval[1][:10]}] at error {level:.3g} per test, {ev.tests} tests)")
    if not ev.confirmed:
        result.message = f"{found}, but the re-run with fresh seeds ({k2}/{n:,}) did not confirm it"
        return result
    result.status = Status.REFUTED
    result.witness = Witness(data, data, output, f"{k}/{n}", decimal(weight), quantity="frequency")
    result.message = (f"{found}; the re-run with fresh seeds agrees ({k2}/{n:,}): refuted at overall error "
                      f"probability {box.error}")
    return result


def _private(spec: Spec, box: BlackBox, claim: Private, point: Point, ws: Workspace,
             result: PointResult) -> PointResult:
    if box.spec_program is None:
        raise SpecError(f"private(...) about {box!r} needs the spec program whose exact law picks the pair and "
                        "output to test",
                        f"pass it: dp.black_box({box.__name__}, spec_program=<the spec's mechanism>)",
                        file=box.fn.__code__.co_filename, line=box.fn.__code__.co_firstlineno)
    eps = substitute(claim.epsilon, point, "epsilon")
    claimed = float(eps)
    ev, n = result.evidence, box.samples
    ev.claimed_epsilon, ev.claimed_delta = decimal(eps), "0"
    table = ws.discrete_table(spec, box.spec_program, point, "private")
    cells = _top_cells(table, *ws.datasets(spec)[1:], box.cells)
    if not cells:
        raise SpecError(f"the universe of spec {spec.name!r} has no neighbouring pair with an output to test",
                        "use a universe with neighbouring datasets")
    ev.tests, ev.datasets = 2 * len(cells), len(table.datasets)
    level = float(box.error) / (2 * len(cells))
    ev.level, ev.spec_epsilon = repr(level), repr(cells[0][3])
    bounds = [(_epsilon_bound(spec, box, point, ws, cell, 0, level), cell) for cell in cells]
    ev.sampled = [_privacy_cell(table, cell, _counts(spec, box, point, ws, cell[0], 0).get(cell[2], 0),
                                _counts(spec, box, point, ws, cell[1], 0).get(cell[2], 0), p_lo, q_hi, bound)
                  for (bound, p_lo, q_hi), cell in bounds]
    (best, p_lo, q_hi), cell = max(bounds, key=lambda b: b[0][0])
    i, j, o, _ = cell
    ev.epsilon_lower_bound = repr(best)
    ev.worst = _privacy_cell(table, cell, _counts(spec, box, point, ws, i, 0).get(o, 0),
                             _counts(spec, box, point, ws, j, 0).get(o, 0), p_lo, q_hi, best)
    data, prime = table.datasets[i], table.datasets[j]
    where = (f"X = {data!r}, X' = {prime!r}, output {o!r}: {ev.worst.count}/{n:,} against "
             f"{ev.worst.count_prime}/{n:,}")
    if not best > claimed * (1 + 1e-12) + 1e-12:
        result.status = Status.CONSISTENT
        result.message = (f"consistent with {claim.describe()}: the lower confidence bound on the code's epsilon "
                          f"is {best:.6g} <= {claimed:.6g} at overall error probability {box.error} "
                          f"({len(cells)} highest-loss cells of {box.spec_program.__name__}'s exact law, "
                          f"{n:,} samples per dataset, {box.seeded}; largest at {where})")
        return result
    again, _, _ = _epsilon_bound(spec, box, point, ws, cell, 1, level)
    ev.confirmed = again > claimed * (1 + 1e-12) + 1e-12
    found = (f"the code's epsilon is at least {best:.6g} > {claimed:.6g} at {where} "
             f"(Clopper-Pearson bounds P(o|X) >= {p_lo:.6g}, P(o|X') <= {q_hi:.6g})")
    if not ev.confirmed:
        result.message = f"{found}, but the re-run with fresh seeds gave {again:.6g}: not confirmed"
        return result
    result.status = Status.REFUTED
    result.witness = Witness(data, prime, o, f"{ev.worst.count}/{n}", f"{ev.worst.count_prime}/{n}",
                             quantity="frequency")
    result.message = (f"{found}; the re-run with fresh seeds agrees ({again:.6g}): refuted at overall error "
                      f"probability {box.error}")
    return result


def _top_cells(table: Any, left: Any, right: Any, count: int) -> list[tuple[int, int, Any, float]]:
    """The ``count`` cells (X, X', o) of highest loss ln P(o|X)/P(o|X') in the spec's exact table, one
    per distinct (law, law, output), in a deterministic order."""
    best: dict[tuple[int, int, Any], tuple[float, int, int]] = {}
    for a, b in zip(left.tolist(), right.tolist()):
        for i, j in ((a, b), (b, a)):
            law, law_prime = table.laws[table.law_of[i]], table.laws[table.law_of[j]]
            for o, w in law.items():
                p, q = float(w.mid), float(law_prime[o].mid) if o in law_prime else 0.0
                if p <= 0:
                    continue
                loss = math.inf if q <= 0 else math.log(p / q)
                key = (table.law_of[i], table.law_of[j], o)
                if key not in best:
                    best[key] = (loss, i, j)
    ranked = sorted(best.items(), key=lambda item: (-item[1][0], item[1][1], item[1][2], repr(item[0][2])))
    return [(i, j, key[2], loss) for key, (loss, i, j) in ranked[:count]]


def _epsilon_bound(spec: Spec, box: BlackBox, point: Point, ws: Workspace, cell: tuple, run: int,
                   level: float) -> tuple[float, float, float]:
    """(ln(p_lo / q_hi), p_lo, q_hi): the lower confidence bound on the loss of the cell in ``run``."""
    i, j, o, _ = cell
    n = box.samples
    p_lo = cp.lower_bound(n, _counts(spec, box, point, ws, i, run).get(o, 0), level)
    q_hi = cp.upper_bound(n, _counts(spec, box, point, ws, j, run).get(o, 0), level)
    return (math.log(p_lo / q_hi) if p_lo > 0 else -math.inf), p_lo, q_hi


def _privacy_cell(table: Any, cell: tuple, k: int, k_prime: int, p_lo: float, q_hi: float,
                  bound: float) -> SampledCell:
    i, j, o, _ = cell
    law, law_prime = table.laws[table.law_of[i]], table.laws[table.law_of[j]]
    return SampledCell(repr(table.datasets[i]), repr(o), k, [repr(p_lo), "1"], decimal(law[o]),
                       repr(table.datasets[j]), k_prime, ["0", repr(q_hi)],
                       decimal(law_prime[o]) if o in law_prime else "0", repr(bound))


__all__ = ["StatisticalCheck"]
