"""The statistical audit of a black box whose outputs are real numbers (or tuples of them).

Conformance: on each dataset (and each coordinate of a vector output: its marginal, which is all
this tests of a vector -- the messages say so) the Kolmogorov-Smirnov statistic D = sup |F_n - F|
of the samples against the spec's exact CDF F (:mod:`.statistical_cdf`), rejected when D exceeds
the DKW-Massart threshold t = sqrt(ln(2 / level) / (2 n)): P(D > t) <= 2 exp(-2 n t^2) = level
for every n (finite-sample, distribution-free, no asymptotics), level = error / tests
(Bonferroni).  D is searched in doubles; a rejection reads F certified at the sample point that
attains it (D >= r/n - F(x_r) and D >= F(x_r) - (r-1)/n for the r-th smallest sample x_r), and
counts only when the re-run with fresh seeds rejects too.

Privacy: the events are half-lines {v_k > t} and {v_k < t} of one released value, the threshold
t chosen from the spec's exact CDFs on both datasets by the same expected power as discrete
events (:func:`.statistical_events.score`) over a grid of quantiles -- for Laplace noise this
finds the tail beyond both centres, where the loss is the largest.  They are bounded with
Clopper-Pearson exactly as discrete events (:func:`.statistical_privacy.decide`).
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Optional

from ...dsl.black_box import BlackBox
from ...dsl.claims import Conforms, Private
from ...dsl.params import Point
from ...dsl.spec import Spec
from ...engine.program.work import params
from ...evidence import CdfTest
from ...results import PointResult, Status, Witness
from ..workspace import Workspace
from .cdf import Cdf, Uncovered, marginals
from .events import score
from .privacy import Tested, decide

CURVE = 81
"""Points of each empirical/exact CDF pair kept for the report's plot."""
QUANTILES = 64
"""Thresholds tried per released value and pair when choosing a half-line event."""


def dkw_threshold(n: int, level: float) -> float:
    """The t with 2 exp(-2 n t^2) = level: P(sup |F_n - F| > t) <= level (DKW with Massart's constant)."""
    return math.sqrt(math.log(2 / level) / (2 * n))


def _samples(spec: Spec, box: BlackBox, point: Point, ws: Workspace, index: int, run: int) -> list:
    """The raw outputs of ``box`` on dataset ``index`` in ``run``, sampled once per run (memoised)."""
    key = ("black-box-samples", id(spec), point, index, run)
    if key not in ws.memo:
        ws.memo[key] = box.sample(ws.datasets(spec)[0][index], params(point), run, index)
    return [value for value, k in ws.memo[key].items() for _ in range(k)]


def _coordinates(values: list, width: int, vector: bool) -> Optional[list[list[float]]]:
    """The samples per coordinate as sorted doubles, or None when one is not a real (tuple) of that width."""
    out: list[list[float]] = [[] for _ in range(width)]
    for value in values:
        parts = value if vector else (value,)
        if not isinstance(parts, tuple) or len(parts) != width:
            return None
        for k, part in enumerate(parts):
            if isinstance(part, bool) or not isinstance(part, (int, float)) or not math.isfinite(part):
                return None
            out[k].append(float(part))
    return [sorted(c) for c in out]


def _laws(table: Any) -> tuple[list[list[Cdf]], bool]:
    """Per law of the table, its marginal CDFs; and whether outputs are tuples."""
    cdfs = [marginals(law, table.backend) for law in table.laws]
    vector = any(isinstance(key, tuple) for law in table.laws for key in law)
    return cdfs, vector


def _ks(xs: list[float], cdf: Cdf) -> tuple[float, int]:
    """sup |F_n - F| searched in doubles, and the rank (1-based) where it is attained."""
    n, best, at = len(xs), -1.0, 1
    for r, x in enumerate(xs, 1):
        f = cdf.floats(x)
        d = max(r / n - f, f - (r - 1) / n)
        if d > best:
            best, at = d, r
    return best, at


def _certified_ks(xs: list[float], cdf: Cdf, at: int) -> float:
    """A certified lower bound on sup |F_n - F| from the r-th smallest sample."""
    lo, hi = cdf.certified(xs[at - 1])
    return max(at / len(xs) - hi, lo - (at - 1) / len(xs))


def _curve(xs: list[float], cdf: Cdf) -> list[list[str]]:
    n = len(xs)
    ranks = sorted({max(1, min(n, round(n * k / (CURVE - 1)))) for k in range(CURVE)})
    return [[repr(xs[r - 1]), repr(r / n), repr(cdf.floats(xs[r - 1]))] for r in ranks]


def conforms(spec: Spec, table: Any, box: BlackBox, claim: Conforms, point: Point, ws: Workspace,
             result: PointResult) -> PointResult:
    """Kolmogorov-Smirnov against the exact CDF per dataset and coordinate, DKW-Massart thresholds."""
    try:
        cdfs, vector = _laws(table)
    except Uncovered as why:
        result.message = f"the spec's exact law of its noisy output is beyond this audit: {why}"
        return result
    n, ev = box.samples, result.evidence
    width = len(cdfs[0])
    tests = len(table.datasets) * width
    level = float(box.error) / tests
    t = dkw_threshold(n, level)
    ev.tests, ev.datasets, ev.level, ev.ks = tests, len(table.datasets), repr(level), []
    name = getattr(claim.other, "__name__", "the spec program")
    largest: Optional[tuple[float, int, int, float]] = None
    for i, data in enumerate(table.datasets):
        columns = _coordinates(_samples(spec, box, point, ws, i, 0), width, vector)
        if columns is None:
            return _shape(spec, box, point, ws, result, i, width, vector, name)
        for k, xs in enumerate(columns):
            cdf = cdfs[table.law_of[i]][k]
            d, at = _ks(xs, cdf)
            ev.ks.append(CdfTest(repr(data), k if vector else None, repr(d), repr(t), repr(xs[at - 1]),
                                 _curve(xs, cdf)))
            if largest is None or d > largest[0]:
                largest = (d, i, k, xs[at - 1])
            if d > t and _certified_ks(xs, cdf, at) > t:
                return _rejected(spec, box, point, ws, result, i, k, d, t, xs[at - 1], cdf, width, vector, name)
    assert largest is not None
    d, i, k, x = largest
    ev.largest_deviation = repr(d)
    marginal = " (vector outputs: each coordinate's marginal law tested, not their joint law)" if vector else ""
    result.status = Status.CONSISTENT
    result.message = (f"consistent with {name}'s exact law on all {len(table.datasets):,} datasets{marginal}: "
                      f"{n:,} samples each ({box.seeded}), no Kolmogorov-Smirnov statistic above the DKW-Massart "
                      f"threshold {t:.4g} among {tests} tests at overall error probability {box.error}; the "
                      f"largest sup|F_n - F| is {d:.4g} (dataset {table.datasets[i]!r}"
                      f"{f', coordinate {k}' if vector else ''}, at {x:.6g})")
    return result


def _rejected(spec: Spec, box: BlackBox, point: Point, ws: Workspace, result: PointResult, i: int, k: int,
              d: float, t: float, x: float, cdf: Cdf, width: int, vector: bool, name: str) -> PointResult:
    """A rejected KS test, reported when the re-run with fresh seeds rejects it too."""
    data, ev = ws.datasets(spec)[0][i], result.evidence
    again = _coordinates(_samples(spec, box, point, ws, i, 1), width, vector)
    d2 = -1.0
    if again is not None:
        d2, at2 = _ks(again[k], cdf)
        d2 = _certified_ks(again[k], cdf, at2)
    ev.largest_deviation, ev.confirmed = repr(d), d2 > t
    where = f"dataset {data!r}{f', coordinate {k}' if vector else ''}"
    lo, hi = cdf.certified(x)
    found = (f"on {where} the samples' CDF is {d:.4g} away from {name}'s exact CDF (at {x:.6g}, where the exact "
             f"CDF is {(lo + hi) / 2:.6g}), above the DKW-Massart threshold {t:.4g} at error {float(ev.level):.3g} "
             f"per test ({ev.tests} tests)")
    if not ev.confirmed:
        result.message = f"{found}, but the re-run with fresh seeds ({d2:.4g}) did not confirm it"
        return result
    result.status = Status.REFUTED
    result.witness = Witness(data, data, f"F({x:.6g})", f"{d:.6g}", f"{t:.6g}", quantity="sup |F_n - F| vs threshold")
    result.message = (f"{found}; the re-run with fresh seeds agrees ({d2:.4g}): refuted at overall error "
                      f"probability {box.error}")
    return result


def _shape(spec: Spec, box: BlackBox, point: Point, ws: Workspace, result: PointResult, i: int, width: int,
           vector: bool, name: str) -> PointResult:
    """A sample that is not a real (tuple) of the spec's width: impossible under the spec."""
    data = ws.datasets(spec)[0][i]
    wanted = f"a tuple of {width} reals" if vector else "a real number"
    bad = next(v for v in _samples(spec, box, point, ws, i, 0) if _coordinates([v], width, vector) is None)
    again = _coordinates(_samples(spec, box, point, ws, i, 1), width, vector) is None
    result.evidence.confirmed = again
    found = f"on dataset {data!r} the code gave {bad!r}, not {wanted} as {name} releases"
    if not again:
        result.message = f"{found}, but the re-run with fresh seeds did not: not reported as a refutation"
        return result
    result.status = Status.REFUTED
    result.witness = Witness(data, data, bad, "seen", "0", quantity="frequency")
    result.message = f"{found} (again in the re-run with fresh seeds): impossible under the spec (exact)"
    return result


# -- privacy ---------------------------------------------------------------------------------------

def private(spec: Spec, table: Any, pairs: tuple, box: BlackBox, claim: Private, eps: Any, delta: Any,
            point: Point, ws: Workspace, result: PointResult) -> PointResult:
    """Half-line events on one released value, chosen from the exact CDFs, bounded by Clopper-Pearson."""
    try:
        cdfs, vector = _laws(table)
    except Uncovered as why:
        result.message = f"the spec's exact law of its noisy output is beyond this audit: {why}"
        return result
    claimed, slack, n = float(eps), float(delta), box.samples
    width = len(cdfs[0])
    events = _events(table, pairs, cdfs, claimed, slack, n, box.cells)
    if not events:
        result.message = "the universe has no neighbouring pair with different laws under the spec: nothing to test"
        return result

    def count(event: Tested, index: int, run: int) -> int:
        columns = _coordinates(_samples(spec, box, point, ws, index, run), width, vector)
        if columns is None:
            return 0  # counted as outside the event: only makes a refutation harder
        k, side, at = event.keys
        xs = columns[k]
        return sum(1 for x in xs if (x > at if side > 0 else x < at))

    return decide(events, count, table.datasets, box, claim, claimed, slack, result,
                  spec_loss=None, what=f"{len(events)} half-line events chosen from "
                  f"{box.spec_program.__name__}'s exact CDFs by their power at {n:,} samples")


def _events(table: Any, pairs: tuple, cdfs: list, eps: float, delta: float, n: int, count: int) -> list[Tested]:
    factor = math.exp(eps)
    found: dict[tuple, Tested] = {}
    quantiles: dict[tuple[int, int], list[float]] = {}  # per (law, coordinate), computed once
    left, right = pairs
    for a, b in zip(left.tolist(), right.tolist()):
        for i, j in ((a, b), (b, a)):
            li, lj = table.law_of[i], table.law_of[j]
            if li == lj:
                continue
            for k, (f, g) in enumerate(zip(cdfs[li], cdfs[lj])):
                for m, cdf in ((li, f), (lj, g)):
                    if (m, k) not in quantiles:
                        quantiles[(m, k)] = _quantiles(cdf)
                for at in sorted(set(quantiles[(li, k)]) | set(quantiles[(lj, k)])):
                    for side in (1, -1):
                        p = 1 - f.floats(at) if side > 0 else f.floats(at)
                        q = 1 - g.floats(at) if side > 0 else g.floats(at)
                        key = (li, lj, k, side, at)
                        if key not in found:
                            found[key] = Tested(i, j, (k, side, at), p, q, score(p, q, factor, delta, n),
                                                _label(k, side, at, len(cdfs[li]) > 1))
    events = sorted(found.values(), key=lambda e: (-e.score, e.i, e.j, e.keys))
    if not events:
        return []
    pair = {events[0].i, events[0].j}
    chosen = [e for e in events if {e.i, e.j} == pair][:count]
    return [replace(e, spec_p=_mass(cdfs[table.law_of[e.i]][e.keys[0]], e.keys),
                    spec_q=_mass(cdfs[table.law_of[e.j]][e.keys[0]], e.keys)) for e in chosen]


def _mass(cdf: Cdf, keys: tuple) -> str:
    """The spec's exact probability of the half-line (certified; its midpoint as a decimal string)."""
    _, side, at = keys
    lo, hi = cdf.certified(at)
    return repr((2 - lo - hi) / 2 if side > 0 else (lo + hi) / 2)


def _quantiles(cdf: Cdf) -> list[float]:
    """The law's quantiles at 1/QUANTILES, 2/QUANTILES, ... (bisection on the double CDF), rounded to 6
    significant digits: the thresholds of half-line events."""
    out = []
    for m in range(1, QUANTILES):
        u = m / QUANTILES
        lo, hi = -1.0, 1.0
        while cdf.floats(lo) > u and lo > -1e12:
            lo *= 2
        while cdf.floats(hi) < u and hi < 1e12:
            hi *= 2
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if cdf.floats(mid) < u else (lo, mid)
        out.append(float(f"{(lo + hi) / 2:.6g}"))
    return out


def _label(k: int, side: int, at: float, vector: bool) -> str:
    value = f"v{k}" if vector else "v"
    return f"{value} {'>' if side > 0 else '<'} {at:.6g}"


__all__ = ["conforms", "dkw_threshold", "private"]
