"""Certified bounds on delta(eps) of composed Laplace releases (and of any discrete pairs), by a
discretised loss distribution.

A Laplace(b) value centred at mu against one centred at nu, t = |mu - nu| / b apart, has under P
the privacy loss l(v) = (|v - nu| - |v - mu|) / b in [-t, t], with (for -t <= y < t)

    P(l <= y) = e^(-(t - y)/2) / 2,

an atom e^(-t)/2 at -t, an atom 1/2 at t, a density in between.  On a grid of step h, moving every
loss up to the next grid point (``upper``) or down to the previous one (``lower``) gives two lattice
distributions; delta(eps) = E_P[(1 - e^(eps - L))_+] is non-decreasing in the total loss L, so by the
coupling that rounds each component, the rounded-up composition's delta bounds the true one from
above and the rounded-down one from below.  The grid masses are intervals, turned into integers at
2^-BITS (ceiling for the upper bound, floor for the lower: the coefficients are non-negative, so the
product of larger polynomials is larger), and each product is exact integer arithmetic (one Python
integer per polynomial, by Kronecker substitution), rounded back to 2^-BITS in the bound's direction.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

BITS = 160
"""Bits of the integer masses (2^-BITS resolution)."""
MAX_COEFFICIENTS = 100_000
"""The longest composed polynomial computed (a counted budget)."""


class TooLong(Exception):
    """The composed polynomial would exceed MAX_COEFFICIENTS (the reason is the message)."""


@dataclass
class Bounds:
    """Certified lower and upper ends of delta(eps) (intervals' .a and .b)."""

    lower: Any
    upper: Any


def laplace_grid(ctx: Any, steps: int, h: Any, up: bool) -> dict[int, Any]:
    """The loss distribution of one Laplace value t = steps * h scales apart (h > 0 exact, given as an
    interval), rounded up (``up``) or down to the grid h Z: {grid index: mass interval}."""
    def below(i: int) -> Any:  # P(l < i h) for -steps < i <= steps (= P(l <= i h) for i < steps)
        return ctx.exp(-(steps - i) * h / 2) / 2
    c = {i: below(i) for i in range(-steps, steps + 1)}  # c[-steps] = e^-t/2 = P(l <= -t), c[steps] = 1/2
    masses: dict[int, Any] = {}
    if up:  # the cell (g_{i-1}, g_i] goes to g_i; the atom e^-t/2 at -t stays
        masses[-steps] = c[-steps]
        for i in range(-steps + 1, steps):
            masses[i] = c[i] - c[i - 1]
        masses[steps] = 1 - c[steps - 1]
    else:  # the cell [g_i, g_{i+1}) goes to g_i (nothing is below -t); the atom 1/2 at t stays
        for i in range(-steps, steps):
            masses[i] = c[i + 1] - (c[i] if i > -steps else 0)
        masses[steps] = ctx.mpf(1) / 2
    return {i: ctx.mpf([max(m.a, 0), max(m.b, 0)]) for i, m in masses.items()}


def _integers(masses: dict[int, Any], up: bool) -> tuple[int, list[int]]:
    """(lowest index, integer masses at 2^-BITS: ceilings when ``up``, floors otherwise)."""
    first, last = min(masses), max(masses)
    scale = 2 ** BITS
    out = []
    for i in range(first, last + 1):
        m = masses.get(i)
        if m is None:
            out.append(0)
        elif up:
            out.append(int(math.ceil(m.b * scale)))
        else:
            out.append(int(math.floor(m.a * scale)))
    return first, out


def _pack(coeffs: Sequence[int], size: int) -> int:
    """The non-negative integers ``coeffs`` as one integer, ``size`` bytes each (lowest first)."""
    return int.from_bytes(b"".join(c.to_bytes(size, "little") for c in coeffs), "little")


def _unpack(value: int, size: int, count: int) -> list[int]:
    data = value.to_bytes(size * count, "little")
    return [int.from_bytes(data[k * size:(k + 1) * size], "little") for k in range(count)]


def product(parts: Sequence[tuple[int, list[int]]], up: bool) -> tuple[int, list[int]]:
    """The product of polynomials with integer coefficients at 2^-BITS (lowest index, coefficients),
    kept at 2^-BITS after each multiplication by rounding up (``up``) or down: (lowest index, coefficients)."""
    first, coeffs = parts[0]
    for other_first, other in parts[1:]:
        size = (sum(coeffs) * sum(other)).bit_length() // 8 + 1  # bytes per coefficient of the product
        exact = _unpack(_pack(coeffs, size) * _pack(other, size), size, len(coeffs) + len(other) - 1)
        coeffs = [-((-c) >> BITS) if up else c >> BITS for c in exact]
        first += other_first
    return first, coeffs


@dataclass
class Discretised:
    """The rounded-down and rounded-up composed loss distributions on the grid h Z: (lowest index,
    integer coefficients at 2^-BITS) each."""

    h: Any
    lower: tuple[int, list[int]]
    upper: tuple[int, list[int]]


def discretise(ctx: Any, steps: Sequence[int], h: Any) -> Discretised:
    """The composition of Laplace values steps[i] * h scales apart (one entry per released value and
    repetition; h > 0 exact, given as an interval), rounded down and up to the grid h Z."""
    ends = []
    for up in (False, True):
        counts = {n: steps.count(n) for n in sorted(set(steps))}
        ends.append(product([_power(_integers(laplace_grid(ctx, n, h, up), up), k, up) for n, k in counts.items()], up))
    return Discretised(h, ends[0], ends[1])


def _power(part: tuple[int, list[int]], times: int, up: bool) -> tuple[int, list[int]]:
    """``part`` to the power ``times`` by repeated squaring (rounded at 2^-BITS after each product)."""
    result = None
    while times:
        if times & 1:
            result = part if result is None else product([result, part], up)
        times >>= 1
        if times:
            part = product([part, part], up)
    return result


def _ceil(ctx: Any, x: Any) -> int:
    """The least integer >= every point of the interval x."""
    i = math.ceil(float(x.b))
    while not ctx.mpf(i) >= x.b:
        i += 1
    return i


def _floor(ctx: Any, x: Any) -> int:
    """The greatest integer <= every point of the interval x."""
    i = math.floor(float(x.a))
    while not ctx.mpf(i) <= x.a:
        i -= 1
    return i


def discretise_atoms(ctx: Any, parts: Sequence[tuple[Sequence[Any], Sequence[Any], int]], h: Any) -> Discretised:
    """The composition of discrete pairs given by their finite losses and P-masses (intervals), each run
    ``runs`` times (``parts``: (losses, masses, runs)), every loss rounded down and up to the grid h Z
    (h > 0, an interval); :class:`TooLong` beyond MAX_COEFFICIENTS coefficients."""
    spans = []
    for losses, _, runs in parts:
        if losses:
            spans.append((_ceil(ctx, max(losses, key=lambda v: float(v.b)) / h)
                          - _floor(ctx, min(losses, key=lambda v: float(v.a)) / h) + 1) * runs)
    if sum(spans) > MAX_COEFFICIENTS:
        raise TooLong(f"the composed loss distribution on a grid of step {float(h.b):.3g} has about {sum(spans):,} "
                      f"points (more than {MAX_COEFFICIENTS:,})")
    ends = []
    for up in (False, True):
        polys = []
        for losses, masses, runs in parts:
            if not losses:  # every output of this part has an infinite loss: no finite composition
                polys = [(0, [0])]
                break
            grid: dict[int, Any] = {}
            for loss, mass in zip(losses, masses):
                i = _ceil(ctx, loss / h) if up else _floor(ctx, loss / h)
                grid[i] = grid.get(i, ctx.mpf(0)) + mass
            polys.append(_power(_integers(grid, up), runs, up))
        ends.append(product(polys, up) if polys else (0, [2 ** BITS]))
    return Discretised(h, ends[0], ends[1])


def delta_bounds(ctx: Any, found: Discretised, eps: Any) -> Bounds:
    """Certified lower and upper bounds on delta(eps) (``eps`` an interval)."""
    ends = []
    for up, (first, coeffs) in ((False, found.lower), (True, found.upper)):
        total = ctx.mpf(0)
        for offset, c in enumerate(coeffs):
            if c == 0:
                continue
            excess = 1 - ctx.exp(eps - (first + offset) * found.h)
            if excess.b <= 0:
                continue
            total += c * ctx.mpf([max(excess.a, 0), max(excess.b, 0)])
        value = total / ctx.mpf(2) ** BITS
        ends.append(value.b if up else value.a)
    return Bounds(ctx.mpf(ends[0]), ctx.mpf(ends[1]))
