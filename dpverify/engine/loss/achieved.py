"""The achieved epsilon of an (eps, delta) claim: the smallest eps' whose hockey-stick divergence is at
most the claimed delta, found by bisection (the divergence decreases in eps').

These are figures shown next to a verdict, never the verdict itself: each is a certified upper bound
of the smallest eps' (its bisection keeps ``hi`` where the divergence is certified at most delta).
Two sources of the divergence: a loss table of discrete laws (:class:`~dpverify.engine.loss.pairs.LossTable`)
and the analytic delta(eps) of a Gaussian release (:mod:`dpverify.engine.continuous.gaussian_delta`).
"""
from __future__ import annotations

import math
from typing import Any, Optional

import mpmath

from ..decide.decimals import DIGITS
from ..continuous.gaussian_delta import gaussian_delta
from .pairs import LossTable

LOSS_TABLE_STEPS = 140
"""Bisection steps over a loss table (from [0, its largest loss])."""

SMALLEST_EPSILON_UP_TO = 2 ** 20
"""The achieved epsilon of a Gaussian release is searched up to this value (beyond it: not reported)."""
SMALLEST_EPSILON_STEPS = 160
"""Bisection steps for it: enough for the printed digits unless it is far below 1."""


def of_losses(losses: LossTable, delta_iv: Any) -> Any:
    """The smallest eps' >= 0 whose largest divergence over the table's pairs is at most ``delta_iv``
    (an interval); math.inf when none up to about 10^6 is (an output possible under one dataset only
    with a probability above delta)."""
    ctx = losses.ctx
    if losses.hockey_stick(ctx.mpf(0))[0].b <= delta_iv.a:
        return ctx.mpf(0)
    top, _ = losses.max_loss()
    if top == math.inf:
        hi = ctx.mpf(1)
        while losses.hockey_stick(hi)[0].a > delta_iv.b and hi.a < 1e6:
            hi *= 2
        if losses.hockey_stick(hi)[0].a > delta_iv.b:
            return math.inf
    else:
        hi = ctx.mpf(top.b)
    lo = ctx.mpf(0)
    for _ in range(LOSS_TABLE_STEPS):
        mid = (lo + hi) / 2
        if losses.hockey_stick(mid)[0].b <= delta_iv.a:
            hi = mid
        else:
            lo = mid
    return hi


def of_gaussian(ctx: Any, distance: Any, delta_iv: Any) -> Optional[Any]:
    """The smallest eps' >= 0 with delta(eps') <= delta for a Gaussian release whose centres are
    ``distance`` standard deviations apart; None when it is beyond SMALLEST_EPSILON_UP_TO.

    The bisection below (:func:`_of_gaussian`) decides each step with a certified evaluation of
    delta(eps').  Run first with each step decided by a plain high-precision evaluation instead (about a
    hundred times cheaper), it takes the same steps unless a midpoint falls within the enclosures' width
    of the root; its result is returned only when a certified evaluation confirms delta(hi) <= delta, so
    it is the same certified upper bound; otherwise the certified bisection runs."""
    guide = _Guide(ctx, distance, delta_iv)
    found = _of_gaussian(ctx, distance, delta_iv, guide.satisfied)
    if found is not None and not guide.failed and _certified(ctx, ctx.mpf(distance.b), delta_iv)(found):
        return found
    return _of_gaussian(ctx, distance, delta_iv, _certified(ctx, ctx.mpf(distance.b), delta_iv))


def _certified(ctx: Any, distance: Any, delta_iv: Any) -> Any:
    return lambda eps: gaussian_delta(ctx, distance, eps).b <= delta_iv.a


class _Guide:
    """delta(eps') <= delta decided by a plain evaluation in a private mpmath context (not a certificate)."""

    def __init__(self, ctx: Any, distance: Any, delta_iv: Any) -> None:
        self.mp = mpmath.MPContext()
        self.mp.dps = ctx.dps + 30
        mp = self.mp
        self.distance = mp.mpf(ctx.mpf(distance.b).a)
        self.target = mp.mpf(delta_iv.a)
        self.failed = False

    def satisfied(self, eps: Any) -> bool:
        mp = self.mp
        try:
            e = mp.mpf(eps.a)
            d = self.distance
            value = mp.ncdf(d / 2 - e / d) - mp.exp(e) * mp.ncdf(-d / 2 - e / d)
            return bool(max(value, 0) <= self.target)
        except Exception:  # noqa: BLE001 -- any trouble: the certified bisection decides
            self.failed = True
            return False


def _of_gaussian(ctx: Any, distance: Any, delta_iv: Any, satisfied: Any) -> Optional[Any]:
    distance = ctx.mpf(distance.b)  # delta increases in the distance: its upper end keeps hi an upper bound
    lo, hi = ctx.mpf(0), ctx.mpf(1)
    while not satisfied(hi):
        if hi.a >= SMALLEST_EPSILON_UP_TO:
            return None
        lo, hi = hi, hi * 2
    if satisfied(lo):
        return lo
    for _ in range(SMALLEST_EPSILON_STEPS):
        if hi.b - lo.a <= hi.b * ctx.mpf(10) ** -DIGITS:
            break
        mid = ctx.mpf(((lo + hi) / 2).mid)
        if satisfied(mid):
            hi = mid
        else:
            lo = mid
    return hi
