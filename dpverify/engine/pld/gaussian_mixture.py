"""Certified bounds on delta(eps) of the Poisson-subsampled Gaussian (one DP-SGD step) composed T times.

With the noise scaled to 1 and the centres D standard deviations apart, the dominating pair of one
step is P = (1 - q) N(0, 1) + q N(D, 1) against Q = N(0, 1) (a record added) and Q against P (a
record removed).  The privacy loss of the first direction is

    L(x) = ln(1 - q + q e^(D x - D^2/2)),   increasing in x, from ln(1 - q) to +inf,

with inverse x(y) = (ln((e^y - (1 - q)) / q) + D^2/2) / D, so its law under P is
P(L <= y) = (1 - q) Phi(x(y)) + q Phi(x(y) - D); the second direction's loss is -L under N(0, 1):
P(-L <= y) = Phi(-x(-y)).  Both are evaluated with the certified Phi of
:mod:`dpverify.engine.continuous.gaussian_delta` at the grid's boundaries, which makes every cell's mass a
certified interval.  Each cell's mass is moved to its top grid point (the pessimistic distribution)
or its bottom one (the optimistic one), as in :mod:`dpverify.engine.pld.bounds`, whose integer
products compose them: delta_T(eps) is non-decreasing in the total loss, so the two compositions
bracket it.  Far from the bulk the cells are wider (still ending on grid points): less work, and
still a rounding in each bound's direction.  The tails beyond the last boundary go to +inf (the
pessimistic bound, counted as fully leaking) or are dropped (the optimistic one).  These bounds are a
grid step apart per composed step; :mod:`dpverify.engine.pld.gaussian_tight` gives second-order ones
on the same cells, composed by :func:`compose` here.
"""
from __future__ import annotations

import math
from typing import Any

from ..continuous.gaussian_delta import phi
from .budget import HOW, scaled
from .bounds import MAX_COEFFICIENTS, Bounds, Discretised, TooLong, _power, check_cost, delta_bounds, fixed

MAX_BOUNDARIES = 12_000
"""The most grid boundaries of one step (a counted budget, on the float-chosen boundaries before any of
their certified Phi evaluations: about four per boundary, 0.5 ms each at 20 digits)."""


def _inverse(ctx: Any, q: Any, distance: Any, y: Any) -> Any:
    """x(y), or None where e^y <= 1 - q (no output has a loss that low); :class:`TooLong` when the
    precision cannot tell (a grid point within it of ln(1 - q))."""
    excess = ctx.exp(y) - (1 - q)
    if excess.b <= 0:
        return None
    if not excess.a > 0:
        raise TooLong("a grid point of the loss is too close to ln(1 - q) for the working precision")
    return (ctx.log(excess / q) + distance * distance / 2) / distance


def _boundaries(ctx: Any, q: Any, distance: Any, h: Any, dx: float, tail: float) -> list[int]:
    """Grid indices of the cell boundaries of the first direction's loss, from below ln(1 - q) to
    L(D + tail): consecutive boundaries one grid step apart, or the outputs x(y) ``dx`` apart where the
    grid is finer than that (``dx`` doubling at each boundary beyond D + min(6, tail - 2)).  The outputs
    beyond D + tail (P-mass about Phi(-tail)) form the tails: moved to +inf by the upper bound (fully
    leaking), dropped by the lower one.  Where the boundaries lie is chosen in floats: only the masses
    between them need certifying."""
    qf, d, hf = float(q.mid), float(distance.mid), float(h.mid)

    def loss(x: float) -> float:
        return math.log1p(-qf + qf * math.exp(min(d * x - d * d / 2, 700.0)))

    def inverse(y: float) -> float:  # -inf below ln(1 - q)
        if math.expm1(y) + qf <= 0:
            return -math.inf
        return (math.log(math.expm1(y) + qf) - math.log(qf) + d * d / 2) / d

    low = math.floor(float(ctx.log(1 - q).a) / float(h.b)) - 1  # one point below ln(1 - q)
    top = math.ceil(loss(d + tail) / hf)
    out, step = [low, low + 1], dx
    while out[-1] < top:
        x = inverse(out[-1] * hf)
        if x > d + min(6.0, tail - 2):
            step *= 2
        out.append(min(max(out[-1] + 1, math.ceil(loss(x + step) / hf)), top))
        if len(out) > scaled(MAX_BOUNDARIES):
            raise TooLong(f"one subsampled Gaussian step needs more than {int(scaled(MAX_BOUNDARIES)):,} cell boundaries "
                          f"(a budget; {HOW})")
    return out


def _cdfs(ctx: Any, q: Any, distance: Any, h: Any, indices: list[int]) -> tuple[list, list]:
    """(P(L <= i h) under the mixture, P(-L <= -i h) under N(0, 1)) at the grid indices, certified."""
    added, removed = [], []
    for i in indices:
        x = _inverse(ctx, q, distance, i * h)
        if x is None:
            added.append(ctx.mpf(0))
            removed.append(ctx.mpf(1))  # P(-L <= -i h) = P(L >= i h) = 1 below ln(1 - q)
            continue
        below = phi(ctx, x)
        added.append((1 - q) * below + q * phi(ctx, x - distance))
        removed.append(1 - below)  # P(L >= y) = P(x >= x(y))
    return added, removed


def _clip(m: Any, ctx: Any) -> Any:
    return ctx.mpf([max(m.a, 0), max(m.b, 0)])


def _polynomial(masses: dict[int, Any], tail: Any, up: bool) -> tuple[int, list[int], int]:
    """(lowest index, integer masses at 2^-BITS, mass at +inf) in the bound's direction."""
    first, last = min(masses), max(masses)
    coeffs = [0] * (last - first + 1)
    for i, m in masses.items():  # exact from the endpoints' mantissas: a float would round 2^160 m
        coeffs[i - first] = fixed(m, up)  # to 53 bits, possibly down for an upper bound
    overflow = fixed(tail, True) if up else 0
    return first, coeffs, overflow


def _one_step(ctx: Any, cdf: list, indices: list[int], up: bool) -> tuple[dict, Any]:
    """Cell masses of one step at the cells' tops (``up``) or bottoms, and the mass above the last boundary.
    ``cdf[k]`` = P(loss <= indices[k] h), non-decreasing, from (about) 0 to (about) 1."""
    masses: dict[int, Any] = {}
    below = cdf[0]  # the mass at or below the first boundary: moved up to it, or dropped
    if up:
        masses[indices[0]] = _clip(below, ctx)
    for k in range(1, len(indices)):
        cell = _clip(cdf[k] - cdf[k - 1], ctx)
        target = indices[k] if up else indices[k - 1]
        masses[target] = masses.get(target, ctx.mpf(0)) + cell
    return masses, _clip(1 - cdf[-1], ctx)


Polynomial = tuple[int, list[int], int]
"""(lowest grid index, integer masses at 2^-BITS, mass at +inf), as in :mod:`dpverify.engine.pld.bounds`."""


def one_step(ctx: Any, rate: Any, distance: Any, h: Any, dx: float, tail: float) -> list[tuple[Polynomial, Polynomial]]:
    """One Poisson-subsampled Gaussian step (``rate`` q, centres ``distance`` standard deviations apart;
    intervals) on the loss grid h Z (h an interval; cells at least ``dx`` apart in the output, see
    :func:`_boundaries`), rounded down and up: [(down, up) of the mixture against N(0, 1), (down, up) of
    N(0, 1) against the mixture].  :class:`TooLong` beyond the budget."""
    indices = _boundaries(ctx, rate, distance, h, dx, tail)
    added, removed = _cdfs(ctx, rate, distance, h, indices)
    # the second direction's loss is -L: its boundaries are -i, its cdf there P(-L <= -i h) = P(L >= i h)
    negated = [-i for i in reversed(indices)]
    out = []
    for cdf, grid in ((added, indices), (list(reversed(removed)), negated)):
        ends = []
        for up in (False, True):
            masses, tail = _one_step(ctx, cdf, grid, up)
            ends.append(_polynomial(masses, tail, up))
        out.append((ends[0], ends[1]))
    return out


def check_composable(length: int, times: int) -> None:
    """:class:`TooLong` when ``times`` steps of ``length`` grid points exceed the coefficients' or the products'
    budget (checked on the float-chosen boundaries, before any certified Phi, and again before composing)."""
    if (length - 1) * times + 1 > scaled(MAX_COEFFICIENTS):
        raise TooLong(f"{times:,} subsampled Gaussian steps of {length:,} grid points each exceed the budget of "
                      f"{int(scaled(MAX_COEFFICIENTS)):,} coefficients ({HOW})")
    check_cost([(length, times)], f"{times:,} subsampled Gaussian steps of {length:,} grid points")


def compose(steps: list[tuple[Polynomial, Polynomial]], times: int, h: Any) -> list[Discretised]:
    """The ``times``-fold compositions of :func:`one_step`'s polynomials, each bound in its direction
    (:class:`TooLong` beyond the coefficients' or the products' budget, estimated before any product)."""
    for down, up in steps:
        check_composable(max(len(down[1]), len(up[1])), times)
    return [Discretised(h, _power(down, times, False), _power(up, times, True)) for down, up in steps]


def subsampled_bounds(ctx: Any, found: list[Discretised], eps: Any) -> Bounds:
    """Certified bounds on delta_T(eps) of the worse direction (the larger of each end)."""
    both = [delta_bounds(ctx, d, eps) for d in found]
    lower = max((b.lower for b in both), key=lambda v: float(v.a))
    upper = max((b.upper for b in both), key=lambda v: float(v.b))
    return Bounds(lower, upper)
