"""Gaussian releases: the analytic delta(eps) of Balle and Wang, in certified intervals.

A Gaussian release whose centres are D standard deviations apart (D the
scaled L2 distance of the centres) has exactly
delta(eps) = Phi(D/2 - eps/D) - e^eps Phi(-D/2 - eps/D) (Balle and Wang,
"Improving the Gaussian mechanism", ICML 2018, Theorem 8), increasing in D;
the worst neighbouring pair decides.  Phi is evaluated by the Taylor series of
erf with its remainder bounded, in interval arithmetic.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import sympy

from ..dsl.params import Point
from ..engine.backend import IntervalBackend
from ..engine.density_ratio import Candidate
from ..engine.reading import distribution
from .density_cells import normalise
from .result import PointResult, Status, Witness
from .workspace import decimal, params


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
    """The standard normal cdf in interval arithmetic: 1/2 + erf(x/sqrt 2)/2 by its Taylor series.

    Phi is increasing, so an interval argument is handled by its two ends (evaluating the
    series on the interval itself would multiply its width by the series' large terms).
    """
    x = ctx.mpf(x)
    if x.a == x.b:
        return _phi_point(ctx, x)
    return ctx.mpf([_phi_point(ctx, ctx.mpf(x.a)).a, _phi_point(ctx, ctx.mpf(x.b)).b])


def _phi_point(ctx: Any, x: Any) -> Any:
    """Phi at a point: the series of erf alternates with terms that decrease once n > x^2, so
    the first omitted term bounds the error; it is added to the enclosure.  The working
    precision grows with x^2, as the terms grow to about e^(x^2/2) before they cancel.
    """
    saved = ctx.prec
    ctx.dps = ctx.dps + int(float(abs(x).b) ** 2) + 20
    try:
        z = x / ctx.sqrt(2)
        z2 = z * z
        term = z
        total = ctx.mpf(0)
        n = 0
        while True:
            total += term / (2 * n + 1)
            n += 1
            term = -term * z2 / n
            if n > float(z2.b) + 2 and abs(term / (2 * n + 1)).b < ctx.mpf(10) ** (-(ctx.dps + 5)):
                break
        error = abs(term / (2 * n + 1)).b
        erf = 2 * (total + ctx.mpf([-error, error])) / ctx.sqrt(ctx.pi)
        value = (1 + erf) / 2
    finally:
        ctx.prec = saved
    return +value


def gaussian_delta(ctx: Any, distance: Any, eps: Any) -> Any:
    """delta(eps) of a Gaussian release whose centres are ``distance`` standard deviations apart."""
    if distance.b == 0:
        return ctx.mpf(0)
    return phi(ctx, distance / 2 - eps / distance) - ctx.exp(eps) * phi(ctx, -distance / 2 - eps / distance)


def _smallest_epsilon(ctx: Any, distance: Any, delta_iv: Any) -> Any:
    """The smallest eps' with delta(eps') <= delta (delta(eps) decreases in eps), by bisection."""
    lo, hi = ctx.mpf(0), ctx.mpf(1)
    while gaussian_delta(ctx, distance, hi).a > delta_iv.b and hi.a < 1e4:
        lo, hi = hi, hi * 2
    for _ in range(60):
        mid = (lo + hi) / 2
        if gaussian_delta(ctx, distance, ctx.mpf(mid.mid)).b <= delta_iv.a:
            hi = ctx.mpf(mid.mid)
        else:
            lo = ctx.mpf(mid.mid)
    return hi


def check_gaussian_delta(program: Any, point: Point, eps: sympy.Expr, delta: sympy.Expr, table: Any, left: Any,
                    right: Any, result: PointResult, scope: str) -> PointResult:
    backend = table.backend
    ctx = backend.ctx
    eps_iv, delta_iv = backend.num(eps), backend.num(delta)
    result.method = "analytic Gaussian delta(eps) (Balle and Wang 2018), certified intervals"
    worst, pair = None, None
    for i, j in zip(left.tolist(), right.tolist()):
        (_, wa), = table.laws[table.law_of[i]].items()
        (_, wb), = table.laws[table.law_of[j]].items()
        ga, gb = normalise(wa, backend).slots, normalise(wb, backend).slots
        if len(ga) != len(gb) or any(a[2] != b[2] for a, b in zip(ga, gb)):
            result.message = "the two laws release Gaussian values with different scales; not supported"
            return result
        squared = ctx.mpf(0)
        for a, b in zip(ga, gb):
            d = (backend.num(a[1]) - backend.num(b[1])) / backend.num(a[2])
            squared += d * d
        distance = ctx.sqrt(squared)
        if worst is None or distance.b > worst.b:
            worst, pair = distance, (table.datasets[i], table.datasets[j])
    value = gaussian_delta(ctx, worst, eps_iv) if worst is not None else ctx.mpf(0)
    result.achieved_delta = decimal(value)
    if worst is not None:
        result.achieved_epsilon = decimal(_smallest_epsilon(ctx, worst, delta_iv))
    if value.b <= delta_iv.a:
        result.status = Status.VERIFIED
        result.message = (f"holds on all {scope}: the largest scaled distance of centres is {decimal(worst)} "
                          f"(X={pair[0]!r}, X'={pair[1]!r}), delta(eps) = {result.achieved_delta}")
        return result
    fresh = IntervalBackend(2 * backend.dps)
    laws = [distribution(program, data, params(point), fresh, table.windows) for data in pair]
    slots = [normalise(next(iter(law.values())), fresh).slots for law in laws]
    squared = fresh.ctx.mpf(0)
    for a, b in zip(*slots):
        d = (fresh.num(a[1]) - fresh.num(b[1])) / fresh.num(a[2])
        squared += d * d
    confirm = gaussian_delta(fresh.ctx, fresh.ctx.sqrt(squared), fresh.num(eps))
    if value.a > delta_iv.b and confirm.a > fresh.num(delta).b:
        result.status = Status.REFUTED
        result.witness = Witness(pair[0], pair[1], "the event where the privacy loss exceeds eps",
                                 result.achieved_delta, decimal(delta))
        result.message = (f"X={pair[0]!r} and X'={pair[1]!r}: the Gaussian release's delta(eps) = "
                          f"{result.achieved_delta} > delta = {decimal(delta)}; confirmed at {2 * backend.dps} digits")
        return result
    result.message = f"delta(eps) = {result.achieved_delta} is too close to the claimed delta to decide"
    return result


def gaussian_beyond(g: tuple, h: tuple, bound: Any, backend: Any) -> Candidate:
    mu, nu, sigma = g[1], h[1], g[2]
    s = float(sympy.N(sigma, 30))
    # ln ratio = (mu - nu)(2v - mu - nu)/(2 sigma^2) > ln bound
    target = float(backend.log(bound).b) + 1
    v = (float(mu) + float(nu)) / 2 + target * s * s / (float(mu) - float(nu))
    v = Fraction(math.ceil(v) + 1) if mu > nu else Fraction(math.floor(v) - 1)
    return Candidate(v, v)
