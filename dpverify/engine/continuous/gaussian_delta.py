"""Gaussian releases in certified intervals: Phi, the analytic delta(eps), and the centres' distance.

A Gaussian release whose centres are D standard deviations apart (D the
scaled L2 distance of the centres) has exactly
delta(eps) = Phi(D/2 - eps/D) - e^eps Phi(-D/2 - eps/D) (Balle and Wang,
"Improving the Gaussian mechanism", ICML 2018, Theorem 8), increasing in D.
Phi is evaluated by arb's rigorous erfc (python-flint balls, :func:`phi`); the
Taylor series of erf, or far in the tails the asymptotic series of erfc, each
with its remainder bounded in mpmath intervals (:func:`phi_series`), is the
slower reference the tests compare it with.  The privacy check (:mod:`dpverify.checks.privacy.gaussian`)
compares these numbers with the claim.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional

import flint
import sympy
from flint import arb
from mpmath.libmp import from_man_exp, round_ceiling, round_floor

from .density_cells import normalise
from .density_ratio import Candidate


def all_gaussian(table: Any) -> bool:
    """Every law of the table releases one output whose released values are all Gaussian."""
    for law in table.laws:
        for weight in law.values():
            normal = normalise(weight, table.backend)
            if normal.constant is None or not normal.slots:
                return False
            if not all(isinstance(s, tuple) and s[0] == "gaussian" for s in normal.slots):
                return False
    return all(len(law) == 1 for law in table.laws)


def phi(ctx: Any, x: Any) -> Any:
    """The standard normal cdf in interval arithmetic: an enclosure of Phi over the interval ``x``.

    Phi is increasing, so Phi(x) lies in [Phi(x.a), Phi(x.b)]: each end is evaluated by arb's
    rigorous erfc (python-flint, a ball with a proved radius) at the context's precision plus
    guard bits, widened outward by a few more ulps, and rounded outward to the context
    (:func:`_phi_arb`).  The series of :func:`phi_series` (erf's Taylor series, or erfc's asymptotic
    one, with their remainders bounded in mpmath intervals) gives the same enclosure up to its
    last digits, 10 to 1000 times slower; it is kept as the reference the tests compare with, and
    answers where arb cannot (an end that is not a finite number).
    """
    x = ctx.mpf(x)
    found = _phi_arb(ctx, x)
    return found if found is not None else phi_series(ctx, x)


GUARD_BITS = 40
"""Bits of arb's working precision beyond the interval context's."""
WIDEN_BITS = 10
"""The arb result is widened outward by 2^-(context bits + WIDEN_BITS) of its magnitude before rounding
(belt and braces: arb's radius is already proved); an exact result is kept exact."""


def _to_arb(end: tuple) -> Any:
    """An mpmath mpf value tuple as an exact arb (None for inf or nan)."""
    sign, man, exp, bc = end
    if not man:
        return None if exp else arb(0)  # a zero mantissa with an exponent: inf or nan
    return arb((-man if sign else man, exp))


def _phi_end(z: Any, root2: Any) -> Any:
    """Phi at the exact arb point ``z`` (``root2`` a ball around sqrt 2), from the nearer tail (no
    cancellation far out)."""
    t = z / root2
    if z < 0:
        return (-t).erfc() / 2
    return 1 - t.erfc() / 2


def _phi_arb(ctx: Any, x: Any) -> Optional[Any]:
    """[Phi(x.a), Phi(x.b)] through arb at ctx.prec + GUARD_BITS, rounded outward to ``ctx``; None when an
    end is not finite or arb could not bound a value."""
    lo_end, hi_end = x._mpi_
    bits = ctx.prec + GUARD_BITS
    with flint.ctx.workprec(bits):
        lo, hi = _to_arb(lo_end), _to_arb(hi_end)
        if lo is None or hi is None or not (lo.is_exact() and hi.is_exact()):
            return None
        root2 = arb(2).sqrt()
        low = _phi_end(lo, root2)
        high = low if lo_end == hi_end else _phi_end(hi, root2)
        if not (low.is_finite() and high.is_finite()):
            return None
        slack = arb(2) ** -(ctx.prec + WIDEN_BITS)  # none for a result arb proved exact (Phi(0) = 1/2)
        bottom = low.lower() if low.rad() == 0 else (low.lower() - low.abs_upper() * slack).lower()
        top = high.upper() if high.rad() == 0 else (high.upper() + high.abs_upper() * slack).upper()
        bottom = max(bottom, arb(0)) if bottom < 0 else bottom  # Phi >= 0 and <= 1
        top = min(top, arb(1)) if top > 1 else top
        a = _to_mpf(bottom, ctx.prec, round_floor)
        b = _to_mpf(top, ctx.prec, round_ceiling)
    return ctx.make_mpf((a, b))


def _to_mpf(point: Any, prec: int, rounding: str) -> tuple:
    """An exact arb point (a ball of radius 0) as an mpmath value tuple, rounded to ``prec`` bits in the
    direction ``rounding``."""
    man, exp = point.mid().man_exp()
    return from_man_exp(int(man), int(exp), prec, rounding)


def phi_series(ctx: Any, x: Any) -> Any:
    """The standard normal cdf in interval arithmetic by series (see :func:`_phi_point`); the reference
    of :func:`phi`.

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


def centre_distance(pair_slots: tuple, backend: Any) -> Any:
    """The L2 distance of the two releases' centres, each coordinate in its own standard deviations."""
    squared = backend.ctx.mpf(0)
    for a, b in zip(*pair_slots):
        d = (backend.num(a[1]) - backend.num(b[1])) / backend.num(a[2])
        squared += d * d
    return backend.ctx.sqrt(squared)


def release(law: dict, backend: Any) -> tuple[Any, list]:
    """(output skeleton, Gaussian slots) of a law that releases one output."""
    (output, weight), = law.items()
    return output, normalise(weight, backend).slots


def gaussian_beyond(g: tuple, h: tuple, bound: Any, backend: Any) -> Candidate:
    """A point v where the density ratio of two Gaussian slots ("gaussian", centre, sigma) of one scale
    exceeds ``bound``: the log ratio is linear in v, so v is past its crossing, rounded outwards."""
    mu, nu, sigma = g[1], h[1], g[2]
    s = float(sympy.N(sigma, 30))
    # ln ratio = (mu - nu)(2v - mu - nu)/(2 sigma^2) > ln bound
    target = float(backend.log(bound).b) + 1
    v = (float(mu) + float(nu)) / 2 + target * s * s / (float(mu) - float(nu))
    v = Fraction(math.ceil(v) + 1) if mu > nu else Fraction(math.floor(v) - 1)
    return Candidate(v, v)
