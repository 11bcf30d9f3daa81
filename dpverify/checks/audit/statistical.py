"""The statistical audit of a black box (``dp.black_box``): samples against the spec's exact law.

Conformance (``dp.conforms(spec_program)``), discrete outputs: on every dataset of the universe
the code runs ``samples`` times; each output the spec gives a positive probability (each lumped
tail of unbounded integer noise, each pool of outputs too rare for the sample count:
:mod:`.statistical_cells`) gets an exact two-sided binomial test (the cell's exact probability
against its count's Clopper-Pearson interval) at error probability ``error / tests`` (Bonferroni
over every dataset and cell), read sequentially (:mod:`.sequential`: looks after n/16 ... n draws, the
test's error probability spent over them, so a clear deviation stops the sampling early).  An output the spec gives probability 0 is impossible under it:
seen once, it refutes (exactly).  Continuous outputs: :mod:`.statistical_continuous`.

Privacy (``dp.private(eps)`` and ``dp.private(eps, delta)``): no samples are spent choosing an
event; the spec program's exact law names the events and pairs (:mod:`.statistical_privacy`).

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
from ...engine.decide.decimals import decimal
from ...engine.continuous.density_cells import has_densities
from ...engine.program.work import params
from ...errors import SpecError
from ...evidence import SampledCell, StatisticalEvidence
from ...results import PointResult, Status, Witness
from ..workspace import Workspace
from . import clopper_pearson as cp
from . import continuous
from . import privacy as statistical_privacy
from .cells import Cell, KeyMap, cells
from .sequential import look_level, looks, may_reject

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
                                    "exact binomial (discrete) or DKW (continuous) tests against the spec's exact "
                                    "law, Bonferroni-corrected (discrete: sequential, read at n/16, n/8, n/4, n/2 "
                                    "and n draws with each test's error probability spent over its looks); a "
                                    "rejection re-run with fresh seeds")
        if isinstance(claim, Conforms):
            if claim.tolerance != 0:
                result.message = "a statistical audit tests the exact law: claim dp.conforms(spec_program) without a tolerance"
                return result
            table = ws.table(spec, claim.other, point)
            if has_densities(table):
                return continuous.conforms(spec, table, box, claim, point, ws, result)
            return _conforms(spec, box, claim, point, ws, result)
        assert isinstance(claim, Private)
        return _private(spec, box, claim, point, ws, result)


class _Stream:
    """One (dataset, run)'s draws, read as far as a look asks and no further; the counts kept per look."""

    def __init__(self, draws: Any, n: int) -> None:
        self.draws, self.n, self.taken, self.counts = draws, n, 0, Counter()
        self.at: dict[int, Counter] = {}

    def upto(self, m: int) -> Counter:
        for size in looks(self.n):
            if size > m:
                break
            if size not in self.at:
                while self.taken < size:
                    self.counts[next(self.draws)] += 1
                    self.taken += 1
                self.at[size] = Counter(self.counts)
        return self.at[m]


def _counts(spec: Spec, box: BlackBox, point: Point, ws: Workspace, index: int, run: int,
            m: Optional[int] = None) -> Counter:
    """The outputs of the first ``m`` (a look's count; default all ``samples``) draws of ``box`` on dataset
    ``index`` in ``run`` (0, or 1 for the re-run); each draw made once per run, whatever look asks."""
    key = ("black-box-stream", id(spec), point, index, run)
    if key not in ws.memo:
        datasets, _, _ = ws.datasets(spec)
        ws.memo[key] = _Stream(box.draws(datasets[index], params(point), run, index), box.samples)
    return ws.memo[key].upto(box.samples if m is None else m)


def _bounds(weight: Any) -> tuple[float, float]:
    """A certified probability interval as doubles rounded outwards."""
    return (max(0.0, math.nextafter(float(weight.a), -math.inf)),
            min(1.0, math.nextafter(float(weight.b), math.inf)))


def _conforms(spec: Spec, box: BlackBox, claim: Conforms, point: Point, ws: Workspace,
              result: PointResult) -> PointResult:
    table = ws.discrete_table(spec, claim.other, point, "conforms")
    n, ev = box.samples, result.evidence
    laws = [cells(table.laws[table.law_of[i]], n) for i in range(len(table.datasets))]
    keys = KeyMap(o for law in table.laws for o in law if law[o].b > 0)
    tests = sum(len(law) for law in laws)
    level = float(box.error) / tests
    ev.tests, ev.datasets, ev.level, ev.sampled = tests, len(table.datasets), repr(level), []
    largest: Optional[tuple[float, int, Cell]] = None
    for i, data in enumerate(table.datasets):
        law = table.laws[table.law_of[i]]
        for m in looks(n):  # sequential: a clear deviation stops the sampling at an early look
            counts, impossible = keys.counts(_counts(spec, box, point, ws, i, 0, m))
            impossible += sorted((o for o in counts if not (o in law and law[o].b > 0)), key=repr)
            if impossible:
                return _impossible(spec, box, claim, point, ws, result, i, impossible[0], keys, m)
            at = look_level(level, m, n)
            for j, cell in enumerate(laws[i]):
                lo, hi = _bounds(cell.weight)
                k = sum(counts.get(o, 0) for o in cell.keys)
                if m == n:
                    deviation = max(abs(k / n - lo), abs(k / n - hi))
                    if largest is None or deviation > largest[0]:
                        largest = (deviation, i, cell)
                    if len(ev.sampled) < SAMPLED_CELLS:
                        ev.sampled.append(_cell(data, cell, k, n, at))
                elif not may_reject(m, k, lo, hi, at):
                    continue
                side = cp.outside(m, k, lo, hi, at)
                if side:
                    if m < n:  # the cells of this dataset as tested at this look, the rejected one last (all
                        # counts of the evidence then out of the look's m draws: ev.samples = m)
                        ev.sampled = [_cell(data, c, sum(counts.get(o, 0) for o in c.keys), m, at)
                                      for c in laws[i][:j + 1]][-SAMPLED_CELLS:]
                    return _deviates(spec, box, claim, point, ws, result, i, cell, k, side, level, keys, m)
    assert largest is not None
    deviation, i, cell = largest
    counts, _ = keys.counts(_counts(spec, box, point, ws, i, 0))
    ev.worst = _cell(table.datasets[i], cell, sum(counts.get(o, 0) for o in cell.keys), n, look_level(level, n, n))
    ev.largest_deviation = repr(deviation)
    name = getattr(claim.other, "__name__", "the spec program")
    result.status = Status.CONSISTENT
    result.message = (f"consistent with {name}'s exact law on all {len(table.datasets):,} datasets: {n:,} samples "
                      f"each ({box.seeded}), no rejection among {tests} exact binomial tests (sequential, "
                      f"{len(looks(n))} looks) at overall error probability {box.error}; largest |frequency - probability| {deviation:.3g} "
                      f"(dataset {table.datasets[i]!r}, output {cell.label}: {ev.worst.count}/{n} against "
                      f"{ev.worst.spec_probability[:12]}, interval [{ev.worst.interval[0][:10]}, "
                      f"{ev.worst.interval[1][:10]}])")
    return result


def _cell(data: tuple, cell: Cell, k: int, n: int, level: float) -> SampledCell:
    lo, hi = cp.interval(n, k, level)
    return SampledCell(repr(data), cell.label, k, [repr(lo), repr(hi)], decimal(cell.weight),
                       outputs=[repr(o) for o in cell.keys[:50]] if len(cell.keys) > 1 else None)


def _impossible(spec: Spec, box: BlackBox, claim: Conforms, point: Point, ws: Workspace, result: PointResult,
                index: int, output: Any, keys: KeyMap, m: Optional[int] = None) -> PointResult:
    """An output the spec never gives, seen in the first ``m`` draws: refuted when the re-run with fresh
    seeds produces it again (read look by look, stopping at the first look that has it)."""
    data = ws.datasets(spec)[0][index]
    m = box.samples if m is None else m
    first = _mapped(_counts(spec, box, point, ws, index, 0, m), keys)
    again, m2 = 0, box.samples
    for m2 in looks(box.samples):
        again = _mapped(_counts(spec, box, point, ws, index, 1, m2), keys).get(output, 0)
        if again:
            break
    name = getattr(claim.other, "__name__", "the spec program")
    seen = f"{first[output]} of {m:,} samples"
    result.evidence.samples = m
    result.evidence.worst = SampledCell(repr(data), repr(output), first[output], [], "0")
    result.evidence.confirmed = again > 0
    if not again:
        result.message = (f"on dataset {data!r} the code gave {output!r} ({seen}), impossible under {name}, "
                          f"but the re-run with fresh seeds did not reproduce it: not reported as a refutation")
        return result
    result.status = Status.REFUTED
    result.witness = Witness(data, data, output, f"{first[output]}/{m}", "0", quantity="frequency")
    result.message = (f"on dataset {data!r} the code gives {output!r} ({seen}; {again} of {m2:,} in the re-run "
                      f"with fresh seeds), an output {name} gives probability 0: impossible under the spec (exact, "
                      f"error probability 0)")
    return result


def _mapped(counts: Counter, keys: KeyMap) -> Counter:
    """Sampled counts by the spec's keys (tails gather their integers); values no key holds stay as they are."""
    mapped, missing = keys.counts(counts)
    for value in missing:
        mapped[value] += counts[value]
    return mapped


def _deviates(spec: Spec, box: BlackBox, claim: Conforms, point: Point, ws: Workspace, result: PointResult,
              index: int, cell: Cell, k: int, side: int, level: float, keys: KeyMap,
              m: Optional[int] = None) -> PointResult:
    """A rejected binomial test (``k`` of the first ``m`` draws, at its look's share of the per-test
    ``level``), reported when the re-run with fresh seeds rejects it the same way at one of its own looks
    (the same spending: the re-run reads no further than it must)."""
    data, n = ws.datasets(spec)[0][index], box.samples
    m = n if m is None else m
    lo, hi = _bounds(cell.weight)
    at = look_level(level, m, n)
    k2, m2, confirmed = 0, n, False
    for m2 in looks(n):
        again, _ = keys.counts(_counts(spec, box, point, ws, index, 1, m2))
        k2 = sum(again.get(o, 0) for o in cell.keys)
        if cp.outside(m2, k2, lo, hi, look_level(level, m2, n)) == side:
            confirmed = True
            break
    ev = result.evidence
    ev.samples = m
    ev.worst = _cell(data, cell, k, m, at)
    ev.largest_deviation = repr(max(abs(k / m - lo), abs(k / m - hi)))
    ev.confirmed = confirmed
    name = getattr(claim.other, "__name__", "the spec program")
    stopped = "" if m == n else f", a sequential test's look after {m:,} of the {n:,} samples"
    found = (f"on dataset {data!r}, output {cell.label} came {k}/{m:,} times against probability "
             f"{decimal(cell.weight)[:12]} under {name} (interval [{ev.worst.interval[0][:10]}, "
             f"{ev.worst.interval[1][:10]}] at error {at:.3g} at this look{stopped}; {ev.tests} tests, "
             f"each at most {level:.3g} over its looks)")
    if not ev.confirmed:
        result.message = f"{found}, but the re-run with fresh seeds ({k2}/{m2:,}) did not confirm it"
        return result
    result.status = Status.REFUTED
    result.witness = Witness(data, data, cell.keys[0] if len(cell.keys) == 1 else cell.label, f"{k}/{m}",
                             decimal(cell.weight), quantity="frequency")
    result.message = (f"{found}; the re-run with fresh seeds agrees ({k2}/{m2:,}): refuted at overall error "
                      f"probability {box.error}")
    return result


def _private(spec: Spec, box: BlackBox, claim: Private, point: Point, ws: Workspace,
             result: PointResult) -> PointResult:
    if box.spec_program is None:
        raise SpecError(f"private(...) about {box!r} needs the spec program whose exact law picks the pairs and "
                        "events to test",
                        f"pass it: dp.black_box({box.__name__}, spec_program=<the spec's mechanism>)",
                        file=box.fn.__code__.co_filename, line=box.fn.__code__.co_firstlineno)
    eps = substitute(claim.epsilon, point, "epsilon")
    delta = substitute(claim.delta, point, "delta") if claim.delta != 0 else 0
    result.evidence.claimed_epsilon, result.evidence.claimed_delta = decimal(eps), decimal(delta) if delta else "0"
    table = ws.table(spec, box.spec_program, point)
    pairs = tuple(ws.datasets(spec)[1:])
    if has_densities(table):
        return continuous.private(spec, table, pairs, box, claim, eps, delta, point, ws, result)
    if len(pairs[0]) == 0:
        raise SpecError(f"the universe of spec {spec.name!r} has no neighbouring pair with an output to test",
                        "use a universe with neighbouring datasets")
    return statistical_privacy.private(table, pairs, box, claim, eps, delta,
                                       lambda index, run, m=None: _counts(spec, box, point, ws, index, run, m),
                                       result)


__all__ = ["StatisticalCheck"]
