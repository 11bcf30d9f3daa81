"""Gaussian releases: the analytic delta(eps) of Balle and Wang, in certified intervals.

A Gaussian release whose centres are D standard deviations apart (D the
scaled L2 distance of the centres) has exactly
delta(eps) = Phi(D/2 - eps/D) - e^eps Phi(-D/2 - eps/D) (Balle and Wang,
"Improving the Gaussian mechanism", ICML 2018, Theorem 8), increasing in D;
the worst neighbouring pair decides.  Phi is evaluated by the Taylor series of
erf, or far in the tails by the asymptotic series of erfc, each with its
remainder bounded, in interval arithmetic.  Neighbours whose releases differ
in their discrete part (the skeleton around the noisy values) have disjoint
supports: delta = 1, whatever the noise.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional

import sympy

from ...dsl.params import Point
from ...engine.backend import IntervalBackend, exact_sign
from ...engine.density_ratio import Candidate
from ...engine.reading import distribution
from ...engine.density_cells import normalise
from ...results import PointResult, Status, Witness
from ..witness import number, refuted_delta
from ...engine.decimals import DIGITS, decimal
from ...engine.work import params


def all_gaussian(table: Any) -> bool:
    for law in table.laws:
        for weight in law.values():
            normal = normalise(weight, table.backend)
            if normal.constant is None or not normal.slots:
                return False
            if not all(isinstance(s, tuple) and s[0] == "gaussian" for s in normal.slots):
                return False
    return all(len(law) == 1 for law in table.laws)


def phi(ctx: Any, x: Any) -> Any:
    """The standard normal cdf in interval arithmetic (see :func:`_phi_point`).

    An interval argument is not fed to the series (that would multiply its width by the
    series' large terms): Phi at its midpoint m, widened by its radius r times the largest
    density on it, which Phi's mean-value form bounds: |Phi(t) - Phi(m)| <= r max phi.
    """
    x = ctx.mpf(x)
    if x.a == x.b:
        return _phi_point(ctx, x)
    m = ctx.mpf(x.mid)
    radius = max(abs(x.b - m).b, abs(m - x.a).b)
    nearest = 0 if x.a <= 0 <= x.b else min(abs(x.a).a, abs(x.b).a)
    slope = (ctx.exp(-ctx.mpf(nearest) ** 2 / 2) / ctx.sqrt(2 * ctx.pi)).b
    return _phi_point(ctx, m) + ctx.mpf([-radius * slope, radius * slope])


def _phi_point(ctx: Any, x: Any) -> Any:
    """Phi at a point: by the asymptotic series of erfc far in the tails (where the Taylor
    series would need about x^2 extra digits), else by the Taylor series of erf."""
    z2 = x * x / 2
    if float(z2.a) > (ctx.dps + 10) * math.log(10) + 10:
        tail = _erfc_asymptotic(ctx, abs(x) / ctx.sqrt(2))
        if tail is not None:
            return tail / 2 if x.b < 0 else 1 - tail / 2
    return _phi_taylor(ctx, x)


def _phi_taylor(ctx: Any, x: Any) -> Any:
    """1/2 + erf(x/sqrt 2)/2: the series of erf alternates with terms that decrease once
    n > x^2, so the first omitted term bounds the error; it is added to the enclosure.  The
    working precision grows with x^2, as the terms grow to about e^(x^2/2) before they cancel.
    """
    saved = ctx.prec
    ctx.dps = ctx.dps + int(float(abs(x).b) ** 2) + 20
    try:
        z = x / ctx.sqrt(2)
        z2 = z * z
        term = z
        total = ctx.mpf(0)
        n = 0
        decreasing_from = float(z2.b) + 2
        tolerance = ctx.mpf(10) ** (-(ctx.dps + 5))
        while True:
            total += term / (2 * n + 1)
            n += 1
            term = -term * z2 / n
            if n > decreasing_from and abs(term / (2 * n + 1)).b < tolerance:
                break
        error = abs(term / (2 * n + 1)).b
        erf = 2 * (total + ctx.mpf([-error, error])) / ctx.sqrt(ctx.pi)
        value = (1 + erf) / 2
    finally:
        ctx.prec = saved
    return +value


def _erfc_asymptotic(ctx: Any, z: Any) -> Optional[Any]:
    """erfc(z) for a large z > 0: e^(-z^2)/(z sqrt pi) * sum_m (-1)^m (2m-1)!!/(2z^2)^m, truncated
    where a term falls below the working precision.  For real z > 0 the remainder is bounded in
    magnitude by the first neglected term (DLMF 7.12.1 and the remark after it), which is added
    to the enclosure.  None when the terms stop decreasing first (z too small for the series).
    """
    saved = ctx.prec
    ctx.dps = ctx.dps + 10
    try:
        two_z2 = 2 * z * z
        tolerance = ctx.mpf(10) ** (-(ctx.dps + 5))
        total, term, m = ctx.mpf(0), ctx.mpf(1), 0
        while True:
            total += term
            m += 1
            if 2 * m - 1 >= float(two_z2.a):
                return None  # the terms grow from here: no enclosure this way
            term = -term * (2 * m - 1) / two_z2
            if abs(term).b < tolerance:
                break
        error = abs(term).b
        value = ctx.exp(-z * z) / (z * ctx.sqrt(ctx.pi)) * (total + ctx.mpf([-error, error]))
    finally:
        ctx.prec = saved
    return +value


def gaussian_delta(ctx: Any, distance: Any, eps: Any) -> Any:
    """delta(eps) of a Gaussian release whose centres are ``distance`` standard deviations apart.

    delta is increasing in the distance, so an interval distance is handled by its two ends
    (an end at 0 gives 0; the formula divides by the distance).
    """
    if distance.a == distance.b:
        return _delta_point(ctx, distance, eps)
    return ctx.mpf([_delta_point(ctx, ctx.mpf(distance.a), eps).a, _delta_point(ctx, ctx.mpf(distance.b), eps).b])


def _delta_point(ctx: Any, distance: Any, eps: Any) -> Any:
    if distance.b <= 0:
        return ctx.mpf(0)
    inside, outside = event_probabilities(ctx, distance, eps)
    value = inside - ctx.exp(eps) * outside
    return ctx.mpf([max(value.a, 0), max(value.b, 0)])


def event_probabilities(ctx: Any, distance: Any, eps: Any) -> tuple[Any, Any]:
    """(P(S|X), P(S|X')) for S the event where the privacy loss exceeds eps: Phi(D/2 - eps/D) and
    Phi(-D/2 - eps/D), so that delta(eps) = P(S|X) - e^eps P(S|X')."""
    return phi(ctx, distance / 2 - eps / distance), phi(ctx, -distance / 2 - eps / distance)


SMALLEST_EPSILON_UP_TO = 2 ** 20
"""The achieved epsilon of a Gaussian release is searched up to this value (beyond it: not reported)."""
SMALLEST_EPSILON_STEPS = 160
"""Bisection steps for it: enough for the printed digits unless it is far below 1."""


def _smallest_epsilon(ctx: Any, distance: Any, delta_iv: Any) -> Optional[Any]:
    """The smallest eps' >= 0 with delta(eps') <= delta (delta(eps) decreases in eps), by bisection
    (a certified upper bound, a figure); None when it is beyond SMALLEST_EPSILON_UP_TO."""
    distance = ctx.mpf(distance.b)  # delta increases in the distance: its upper end keeps hi an upper bound
    lo, hi = ctx.mpf(0), ctx.mpf(1)
    while not gaussian_delta(ctx, distance, hi).b <= delta_iv.a:
        if hi.a >= SMALLEST_EPSILON_UP_TO:
            return None
        lo, hi = hi, hi * 2
    if gaussian_delta(ctx, distance, lo).b <= delta_iv.a:
        return lo
    for _ in range(SMALLEST_EPSILON_STEPS):
        if hi.b - lo.a <= hi.b * ctx.mpf(10) ** -DIGITS:
            break
        mid = ctx.mpf(((lo + hi) / 2).mid)
        if gaussian_delta(ctx, distance, mid).b <= delta_iv.a:
            hi = mid
        else:
            lo = mid
    return hi


def _distance(pair_slots: tuple, backend: Any) -> Any:
    """The L2 distance of the two releases' centres, each coordinate in its own standard deviations."""
    squared = backend.ctx.mpf(0)
    for a, b in zip(*pair_slots):
        d = (backend.num(a[1]) - backend.num(b[1])) / backend.num(a[2])
        squared += d * d
    return backend.ctx.sqrt(squared)


def _release(law: dict, backend: Any) -> tuple[Any, list]:
    """(output skeleton, Gaussian slots) of a law that releases one output."""
    (output, weight), = law.items()
    return output, normalise(weight, backend).slots


def check_gaussian_delta(program: Any, point: Point, eps: sympy.Expr, delta: sympy.Expr, table: Any, left: Any,
                         right: Any, result: PointResult, scope: str) -> PointResult:
    """(eps, delta) of Gaussian releases: the worst pair's analytic delta(eps).  Two datasets whose
    outputs differ in their discrete part have disjoint supports: their divergence is 1."""
    backend = table.backend
    ctx = backend.ctx
    eps_iv, delta_iv = backend.num(eps), backend.num(delta)
    result.method = "analytic Gaussian delta(eps) (Balle and Wang 2018), certified intervals"
    worst, pair, disjoint = None, None, None
    for i, j in zip(left.tolist(), right.tolist()):
        (ka, ga), (kb, gb) = _release(table.laws[table.law_of[i]], backend), _release(table.laws[table.law_of[j]],
                                                                                     backend)
        if ka != kb:
            disjoint = disjoint or (table.datasets[i], table.datasets[j])
            continue
        if len(ga) != len(gb) or any(a[2] != b[2] for a, b in zip(ga, gb)):
            result.message = "the two laws release Gaussian values with different scales; not supported"
            return result
        distance = _distance((ga, gb), backend)
        if worst is None or distance.b > worst.b:
            worst, pair = distance, (table.datasets[i], table.datasets[j])
    if disjoint is not None:
        return _disjoint(program, point, delta, disjoint, table, result, scope)
    value = gaussian_delta(ctx, worst, eps_iv) if worst is not None else ctx.mpf(0)
    result.evidence.achieved_delta = decimal(value)
    if worst is not None:
        achieved = _smallest_epsilon(ctx, worst, delta_iv)
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
    return _refute_gaussian(program, point, eps, delta, pair, table, result)


def _refute_gaussian(program: Any, point: Point, eps: sympy.Expr, delta: sympy.Expr, pair: tuple, table: Any,
                     result: PointResult) -> PointResult:
    """Confirm delta(eps) > delta on laws recomputed at twice the precision; the witness is the event
    S where the loss exceeds eps, with its two probabilities."""
    fresh = IntervalBackend(2 * table.backend.dps)
    ctx = fresh.ctx
    releases = [_release(distribution(program, data, params(point), fresh, table.windows), fresh) for data in pair]
    distance = _distance((releases[0][1], releases[1][1]), fresh)
    inside, outside = event_probabilities(ctx, distance, fresh.num(eps))
    excess = inside - fresh.exp(eps) * outside
    shown = [number(inside), number(outside), number(excess)]
    if releases[0][0] != releases[1][0] or not excess.a > fresh.num(delta).b or None in shown:
        result.message = (f"a violation found at {table.backend.dps} digits (X={pair[0]!r}, X'={pair[1]!r}) was not "
                          f"confirmed at {fresh.dps} digits")
        return result
    return refuted_delta(result, pair, "the event S where the privacy loss exceeds eps",
                         "on the event S where the privacy loss exceeds eps", shown, decimal(delta),
                         f"confirmed at {fresh.dps} digits")


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
    outputs = [_release(distribution(program, data, params(point), fresh, table.windows), fresh)[0] for data in pair]
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


def gaussian_beyond(g: tuple, h: tuple, bound: Any, backend: Any) -> Candidate:
    mu, nu, sigma = g[1], h[1], g[2]
    s = float(sympy.N(sigma, 30))
    # ln ratio = (mu - nu)(2v - mu - nu)/(2 sigma^2) > ln bound
    target = float(backend.log(bound).b) + 1
    v = (float(mu) + float(nu)) / 2 + target * s * s / (float(mu) - float(nu))
    v = Fraction(math.ceil(v) + 1) if mu > nu else Fraction(math.floor(v) - 1)
    return Candidate(v, v)
