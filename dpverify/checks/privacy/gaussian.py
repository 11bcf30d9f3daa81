"""Gaussian releases: (eps, delta) claims decided by the analytic delta(eps) of Balle and Wang.

The numbers come from :mod:`dpverify.engine.continuous.gaussian_delta` (Phi and delta(eps) in certified
intervals, the centres' scaled distance D); delta(eps) increases in D, so the worst neighbouring
pair decides.  Neighbours whose releases differ in their discrete part (the skeleton around the
noisy values) have disjoint supports: delta = 1, whatever the noise.
"""
from __future__ import annotations

from typing import Any

import sympy

from ...dsl.params import Point
from ...engine.loss.achieved import of_gaussian
from ...engine.program.backend import IntervalBackend, exact_sign
from ...engine.continuous.gaussian_delta import centre_distance, event_probabilities, gaussian_delta, release
from ...engine.program.reading import distribution
from .level import Level
from ...results import PointResult, Status, Witness
from ..witness import confirm_delta
from ...engine.decide.decimals import decimal
from ...engine.program.work import params


def check_gaussian_delta(program: Any, point: Point, level: Level, table: Any, left: Any, right: Any,
                         result: PointResult, scope: str) -> PointResult:
    """(eps, delta) of Gaussian releases: the worst pair's analytic delta(eps).  Two datasets whose
    outputs differ in their discrete part have disjoint supports: their divergence is 1."""
    backend = table.backend
    ctx = backend.ctx
    eps_iv, delta_iv = backend.num(level.eps), backend.num(level.delta)
    result.method = "analytic Gaussian delta(eps) (Balle and Wang 2018), certified intervals"
    worst, pair, disjoint = None, None, None
    for i, j in zip(left.tolist(), right.tolist()):
        (ka, ga), (kb, gb) = release(table.laws[table.law_of[i]], backend), release(table.laws[table.law_of[j]],
                                                                                   backend)
        if ka != kb:
            disjoint = disjoint or (table.datasets[i], table.datasets[j])
            continue
        if len(ga) != len(gb) or any(a[2] != b[2] for a, b in zip(ga, gb)):
            result.message = "the two laws release Gaussian values with different scales; not supported"
            return result
        distance = centre_distance((ga, gb), backend)
        if worst is None or distance.b > worst.b:
            worst, pair = distance, (table.datasets[i], table.datasets[j])
    if disjoint is not None:
        return _disjoint(program, point, level.delta, disjoint, table, result, scope)
    value = gaussian_delta(ctx, worst, eps_iv) if worst is not None else ctx.mpf(0)
    result.evidence.achieved_delta = decimal(value)
    if worst is not None:
        achieved = of_gaussian(ctx, worst, delta_iv)
        result.evidence.achieved_epsilon = decimal(achieved) if achieved is not None else None
    if value.b <= delta_iv.a:
        result.status = Status.VERIFIED
        where = f" (X={pair[0]!r}, X'={pair[1]!r})" if pair is not None else ""
        result.message = (f"holds on all {scope}: the largest scaled distance of centres is "
                          f"{decimal(worst if worst is not None else 0)}{where}, delta(eps) = {result.evidence.achieved_delta}")
        return result
    if not value.a > delta_iv.b:
        result.message = f"delta(eps) = {result.evidence.achieved_delta} is too close to the claimed delta to decide"
        return result
    return _refute_gaussian(program, point, level, pair, table, result)


def _refute_gaussian(program: Any, point: Point, level: Level, pair: tuple, table: Any,
                     result: PointResult) -> PointResult:
    """Confirm delta(eps) > delta on laws recomputed at twice the precision; the witness is the event
    S where the loss exceeds eps, with its two probabilities."""
    fresh = IntervalBackend(2 * table.backend.dps)
    ctx = fresh.ctx
    releases = [release(distribution(program, data, params(point), fresh, table.windows), fresh) for data in pair]
    distance = centre_distance((releases[0][1], releases[1][1]), fresh)
    inside, outside = event_probabilities(ctx, distance, fresh.num(level.eps))
    if releases[0][0] != releases[1][0]:
        result.message = (f"X={pair[0]!r} and X'={pair[1]!r} release the same output skeleton at "
                          f"{table.backend.dps} digits but not at {fresh.dps} digits (internal inconsistency)")
        return result
    event = f"the event S where the privacy loss exceeds {level.eps_text}"
    return confirm_delta(result, pair, event, f"on {event}", (inside, outside, inside - fresh.exp(level.eps) * outside),
                         fresh.num(level.delta), decimal(level.delta), level.e_eps, (table.backend.dps, fresh.dps))


def _disjoint(program: Any, point: Point, delta: sympy.Expr, pair: tuple, table: Any, result: PointResult,
              scope: str) -> PointResult:
    """Neighbours whose releases differ in their discrete part: S = X's output has P(S|X) = 1 and
    P(S|X') = 0, so delta(eps) = 1 for every eps."""
    result.evidence.achieved_delta, result.evidence.achieved_epsilon = decimal(1), "inf"
    at_least_one = exact_sign(delta - 1)
    if at_least_one is None:
        result.message = f"cannot decide whether the claimed delta {delta} is at least 1 (a pair has delta(eps) = 1)"
        return result
    if at_least_one >= 0:
        result.status = Status.VERIFIED
        result.message = f"holds on all {scope}: a claimed delta >= 1 holds for every mechanism"
        return result
    fresh = IntervalBackend(2 * table.backend.dps)
    outputs = [release(distribution(program, data, params(point), fresh, table.windows), fresh)[0] for data in pair]
    if outputs[0] == outputs[1]:
        result.message = (f"X={pair[0]!r} and X'={pair[1]!r} release different outputs at {table.backend.dps} digits "
                          f"but the same at {fresh.dps} digits (internal inconsistency)")
        return result
    result.status = Status.REFUTED
    result.witness = Witness(pair[0], pair[1], [outputs[0]], "1", "0")
    result.message = (f"X={pair[0]!r} and X'={pair[1]!r} are neighbours whose releases differ outside the noise "
                      f"({outputs[0]!r} against {outputs[1]!r}): for S = {{{outputs[0]!r}}}, P(S|X) = 1 and "
                      f"P(S|X') = 0, so delta(eps) = 1 > delta = {decimal(delta)}; confirmed at {fresh.dps} digits")
    return result
