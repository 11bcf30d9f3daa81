"""Second-order certified bounds for one Poisson-subsampled Gaussian step (see
:mod:`dpverify.engine.pld.gaussian_mixture` for the pair, its loss L and the rounded bounds).

Both bounds here move mass in a way whose error is second order in the cell's width, instead of a
whole grid step per composed step:

* upper: each cell's mass is split between the grid points at its ends so that its Q-mass is kept
  ("connect the dots", Doroshenko et al. 2022): with u = e^(-L), delta(eps) = E_P[(1 - e^eps u)_+] is
  convex in u, so by Jensen the split pair has a larger delta at every real eps -- it dominates the
  step, and domination (of tradeoff curves) survives composition (Dong, Roth and Su 2019);
* lower: each cell is merged into one output (a post-processing: a smaller delta at every eps, also
  after composition), whose loss ln(P(cell)/Q(cell)) is certified and rounded down to the grid;
  the cells are chosen (in floats; only their masses are certified) so that the merged loss lies
  just above a grid point (just below, for the other direction), so the rounding costs almost nothing.
"""
from __future__ import annotations

import math
from typing import Any

from ..continuous.gaussian_delta import phi
from .bounds import _floor
from .gaussian_mixture import Polynomial, _boundaries, _cdfs, _clip, _polynomial, check_composable

MARGIN = 1e-9
"""How far past a grid point a merged cell's loss is aimed (floats choose the cells)."""


def _below(x: float) -> float:
    return 0.0 if x == -math.inf else 0.5 * math.erfc(-x / math.sqrt(2))


def _between(a: float, b: float) -> float:
    """Phi(b) - Phi(a) in floats, from the nearer tail."""
    if a >= 0:
        return 0.5 * (math.erfc(a / math.sqrt(2)) - math.erfc(b / math.sqrt(2)))
    return _below(b) - _below(a)


def _cells(q: float, d: float, h: float, dx: float, tail: float, sign: int) -> list[float]:
    """Output boundaries from -inf to d + tail whose cells' merged losses ln(P(cell)/Q(cell)) lie just above
    (``sign`` +1) or just below (-1) grid points, each cell at least ``dx`` wide."""
    def ratio(a: float, b: float) -> float:
        base = _between(a, b)
        return math.inf if base <= 0 else (1 - q) + q * _between(a - d, b - d) / base

    top = d + tail
    out = [-math.inf]
    while out[-1] < top:
        a = out[-1]
        start = (-8.0 if a == -math.inf else a + dx)
        here = math.log(ratio(a, start))
        target = (math.floor(here / h) + 1) * h + sign * MARGIN if sign > 0 else math.ceil(here / h) * h - MARGIN
        if target < here:
            target += h
        low, high = start, start + dx
        while high < top and math.log(ratio(a, high)) < target:
            low, high = high, high + 2 * (high - a if a > -math.inf else 1.0)
        if high >= top:
            out.append(top)
            break
        for _ in range(60):
            mid = (low + high) / 2
            low, high = (mid, high) if math.log(ratio(a, mid)) < target else (low, mid)
        out.append(high)
    return out


def _merged(ctx: Any, q: Any, distance: Any, h: Any, xs: list[float], second: bool) -> Polynomial:
    """The lower polynomial of one direction from the cells between ``xs``: each merged, its certified loss
    rounded down; the outputs beyond the last boundary dropped."""
    below = [ctx.mpf(0) if x == -math.inf else phi(ctx, ctx.mpf(x)) for x in xs]
    shifted = [ctx.mpf(0) if x == -math.inf else phi(ctx, ctx.mpf(x) - distance) for x in xs]
    masses: dict[int, Any] = {}
    for k in range(1, len(xs)):
        mq = below[k] - below[k - 1]
        mp = (1 - q) * mq + q * (shifted[k] - shifted[k - 1])
        if not (mq.a > 0 and mp.a > 0):
            continue  # a cell of no certified mass: dropped (a lower bound)
        mass, loss = (mq, ctx.log(mq / mp)) if second else (mp, ctx.log(mp / mq))
        i = _floor(ctx, loss / h)
        masses[i] = masses.get(i, ctx.mpf(0)) + _clip(mass, ctx)
    return _polynomial(masses, ctx.mpf(0), False)


def _split(ctx: Any, cdf: list, qcdf: list, indices: list[int], h: Any) -> Polynomial:
    """The upper polynomial: each cell's P-mass split between its ends keeping its Q-mass; the mass at or
    below the first boundary moved up to it, the mass above the last to +inf."""
    masses: dict[int, Any] = {indices[0]: _clip(cdf[0], ctx)}
    for k in range(1, len(indices)):
        m, mq = cdf[k] - cdf[k - 1], qcdf[k] - qcdf[k - 1]
        lo, hi = indices[k - 1], indices[k]
        a, b = ctx.exp(-lo * h), ctx.exp(-hi * h)
        upper = _clip((m * a - mq) / (a - b), ctx)
        masses[hi] = masses.get(hi, ctx.mpf(0)) + upper
        masses[lo] = masses.get(lo, ctx.mpf(0)) + _clip(m - upper, ctx)
    return _polynomial(masses, _clip(1 - cdf[-1], ctx), True)


def one_step_tight(ctx: Any, rate: Any, distance: Any, h: Any, dx: float, tail: float,
                   times: int = 0) -> list[tuple[Polynomial, Polynomial]]:
    """As :func:`dpverify.engine.pld.gaussian_mixture.one_step`, with the second-order bounds above; with
    ``times``, refused (:class:`TooLong`) before any certified Phi when composing that many steps of the
    grid's span is beyond the budget."""
    indices = _boundaries(ctx, rate, distance, h, dx, tail)
    if times:
        check_composable(indices[-1] - indices[0] + 1, times)
    added, removed = _cdfs(ctx, rate, distance, h, indices)
    q_added = [1 - r for r in removed]  # Q(L <= i h) = Phi(x(i h)) under N(0, 1)
    negated = [-i for i in reversed(indices)]
    q_removed = [1 - a for a in reversed(added)]  # the mixture's P(-L <= -i h) = P(L >= i h)
    qf, d, hf = float(rate.mid), float(distance.mid), float(h.mid)
    out = []
    for second, cdf, qcdf, grid in ((False, added, q_added, indices),
                                    (True, list(reversed(removed)), q_removed, negated)):
        xs = _cells(qf, d, hf, dx, tail, -1 if second else 1)
        out.append((_merged(ctx, rate, distance, h, xs, second), _split(ctx, cdf, qcdf, grid, h)))
    return out
