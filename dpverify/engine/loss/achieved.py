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
    ``distance`` standard deviations apart; None when it is beyond SMALLEST_EPSILON_UP_TO."""
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
