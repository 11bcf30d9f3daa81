"""Certified bounds on delta(eps) of composed Laplace releases (and of any discrete pairs), by a
discretised loss distribution.

A Laplace(b) value centred at mu against one centred at nu, t = |mu - nu| / b apart, has under P
the privacy loss l(v) = (|v - nu| - |v - mu|) / b in [-t, t]: an atom 1/2 at t, an atom e^(-t)/2 at
-t and the density e^(-(t - y)/2)/4 in between.  Written as a tilt, P(dy) = e^(y/2) nu(dy) and
Q(dy) = e^(-y/2) nu(dy) with the symmetric measure

    nu = (e^(-t/2)/2) (delta_t + delta_(-t) + Lebesgue on (-t, t) / 2),

so the T-fold composition has P_T(ds) = e^(s/2) nu^(*T)(ds) and

    delta_T(eps) = integral of F(s) = (e^(s/2) - e^(eps - s/2))_+ against nu^(*T),

F convex.  Convex order is kept by mixtures and by convolution, and on a cell [a, a + w] the point
at its midpoint is below the uniform law, which is below the two ends with half the mass each.  So
(``discretise``, on the grid h Z with cells of width 2h across (-t, t)) replacing each cell's
Lebesgue part by its midpoint gives a lower bound of delta_T(eps) for every eps and T, and by its
two ends an upper bound (the trapezoid rule): second order in h, the bracket's width does not grow
with T as rounding every loss up and down (first order: T h apart) does.  Each grid point's P-mass
is e^(y/2) times its nu-mass, h/2 e^((y - t)/2) per cell.

The grid masses are intervals, turned into integers at 2^-BITS (ceiling for the upper bound, floor
for the lower: the coefficients are non-negative, so the product of larger polynomials is larger),
and each product is exact integer arithmetic (one Python integer per polynomial, by Kronecker
substitution), rounded back to 2^-BITS in the bound's direction.  Discrete pairs
(:func:`discretise_atoms`) round every loss down and up to the grid instead: delta(eps) =
E_P[(1 - e^(eps - L))_+] is non-decreasing in the total loss, so by the coupling that rounds each
component, the rounded-up composition's delta bounds the true one from above and the rounded-down
one from below.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from flint import fmpz_poly
from mpmath.libmp import from_int, fzero, round_ceiling, round_floor
from mpmath.libmp.libmpi import mpi_add, mpi_div, mpi_mul

from .budget import HOW, product_cost, scaled

BITS = 160
"""Bits of the integer masses (2^-BITS resolution)."""
MAX_COEFFICIENTS = 100_000
"""The longest composed polynomial computed (a counted budget)."""


MAX_PRODUCT_WORK = 1_000_000_000
"""The most digit operations of one composition's integer products (both bounds), estimated before the
first product by :func:`composition_cost` from the polynomials' lengths (Karatsuba's n^1.585 on 30-bit
digits: about 7e7 a second here; scaled by --max-work).  Tails trimmed during the products only shorten
them, so the estimate is an upper one."""


def _product_words(length_a: int, length_b: int) -> tuple[float, float]:
    """The 30-bit digits of both packed operands of one product (coefficients below 2^(BITS + 1) each)."""
    size = (2 * BITS + 2 + max(length_a, length_b).bit_length()) // 8 + 1  # bytes per packed coefficient
    return length_a * size * 8 / 30, length_b * size * 8 / 30


def composition_cost(parts: Sequence[tuple[int, int]]) -> float:
    """An upper estimate of the digit operations of composing polynomials of the given lengths, each to its
    power (``parts``: (length, runs)), then multiplied together -- for one bound; stops once far above
    the budget."""
    total, limit, lengths = 0.0, 2 * scaled(MAX_PRODUCT_WORK), []
    for length, runs in parts:
        result, base, n = 0, length, runs
        while n and total <= limit:
            if n & 1:
                if result:
                    total += product_cost(*_product_words(result, base))
                result = base if not result else result + base - 1
            n >>= 1
            if n:
                total += product_cost(*_product_words(base, base))
                base = 2 * base - 1
        lengths.append(result)
    length = lengths[0] if lengths else 1
    for other in lengths[1:]:
        if total > limit:
            break
        total += product_cost(*_product_words(length, other))
        length += other - 1
    return total


def check_cost(parts: Sequence[tuple[int, int]], what: str) -> None:
    """:class:`TooLong` when composing ``parts`` (both bounds) is estimated above MAX_PRODUCT_WORK."""
    work = 2 * composition_cost(parts)
    if work > scaled(MAX_PRODUCT_WORK):
        raise TooLong(f"composing {what} needs about {work:.3g} digit operations of integer products (more than the "
                      f"budget of {scaled(MAX_PRODUCT_WORK):.3g}; {HOW})")


class TooLong(Exception):
    """The composed polynomial would exceed MAX_COEFFICIENTS (the reason is the message)."""


@dataclass
class Bounds:
    """Certified lower and upper ends of delta(eps) (intervals' .a and .b)."""

    lower: Any
    upper: Any


def laplace_grid(ctx: Any, steps: int, h: Any, up: bool) -> dict[int, Any]:
    """The loss distribution of one Laplace value t = steps * h scales apart (h > 0 exact, given as an
    interval) on the grid h Z: the atoms 1/2 at t and e^(-t)/2 at -t, and each cell [a, b] of width 2h
    across (-t, t) with its exact P-mass at its midpoint (the cell's mean of e^(-L) is exactly e^(-mid):
    Jensen, a lower bound) or, ``up``, split between its two ends keeping its P- and Q-masses (a
    mean-preserving spread of e^(-L): an upper bound).  {grid index: P-mass interval}."""
    if steps % 2:
        raise ValueError(f"laplace_grid: {steps} steps do not make cells of width 2h across (-t, t)")
    t = steps * h
    masses: dict[int, Any] = {-steps: ctx.exp(-t) / 2, steps: ctx.mpf(1) / 2}

    def add(i: int, m: Any) -> None:
        masses[i] = masses.get(i, ctx.mpf(0)) + m
    for a in range(-steps, steps, 2):
        b = a + 2
        p_mass = (ctx.exp((b * h - t) / 2) - ctx.exp((a * h - t) / 2)) / 2  # the density e^((y - t)/2)/4 on [a h, b h]
        if not up:
            add(a + 1, p_mass)
            continue
        q_mass = (ctx.exp(-(a * h + t) / 2) - ctx.exp(-(b * h + t) / 2)) / 2  # e^(-y) times it
        at_a = (q_mass - p_mass * ctx.exp(-b * h)) / (ctx.exp(-a * h) - ctx.exp(-b * h))
        at_a = ctx.mpf([max(at_a.a, 0), min(at_a.b, p_mass.b)])
        add(a, at_a)
        add(b, ctx.mpf([max((p_mass - at_a).a, 0), (p_mass - ctx.mpf(at_a.a)).b]))
    return {i: ctx.mpf([max(m.a, 0), max(m.b, 0)]) for i, m in masses.items()}


def _integers(masses: dict[int, Any], up: bool) -> tuple[int, list[int], int]:
    """(lowest index, integer masses at 2^-BITS: ceilings when ``up``, floors otherwise, no mass at +inf)."""
    first, last = min(masses), max(masses)
    out = []
    for i in range(first, last + 1):
        m = masses.get(i)
        out.append(0 if m is None else fixed(m, up))
    return first, out, 0


def fixed(value: Any, up: bool) -> int:
    """The ceiling (``up``) of the interval's upper end, or the floor of its lower end, in units of
    2^-BITS: exact, from the endpoint's binary mantissa and exponent (no float in between)."""
    sign, man, exp, _ = value._mpi_[1 if up else 0]
    man = -man if sign else man
    shift = exp + BITS
    if shift >= 0:
        return man << shift
    return -((-man) >> -shift) if up else man >> -shift


def _pack(coeffs: Sequence[int], size: int) -> int:
    """The non-negative integers ``coeffs`` as one integer, ``size`` bytes each (lowest first)."""
    return int.from_bytes(b"".join(c.to_bytes(size, "little") for c in coeffs), "little")


def _unpack(value: int, size: int, count: int) -> list[int]:
    data = value.to_bytes(size * count, "little")
    return [int.from_bytes(data[k * size:(k + 1) * size], "little") for k in range(count)]


def _exact_product(a: list[int], b: list[int]) -> list[int]:
    """The coefficients of the product of two polynomials with non-negative integer coefficients, exactly
    (FLINT's fmpz_poly: 10 to 20 times faster than one Python integer product of the packed coefficients,
    :func:`_packed_product`, which gives the same list), len(a) + len(b) - 1 of them."""
    out = [int(c) for c in (fmpz_poly(a) * fmpz_poly(b)).coeffs()]
    return out + [0] * (len(a) + len(b) - 1 - len(out))  # fmpz_poly drops the zero leading coefficients


def _packed_product(a: list[int], b: list[int]) -> list[int]:
    """:func:`_exact_product` by one Python integer product (Kronecker substitution): the reference."""
    size = (sum(a) * sum(b)).bit_length() // 8 + 1  # bytes per coefficient of the product
    return _unpack(_pack(a, size) * _pack(b, size), size, len(a) + len(b) - 1)


TAIL = 2 ** (BITS - 64)
"""Tail mass (in units of 2^-BITS, i.e. 2^-64) moved after each product: the far left tail of the
rounded-up bound up to the first kept point, its far right tail to +inf (counted as fully leaking); the
rounded-down bound's far left tail dropped, its far right tail moved down to the last kept point.
Each move is in the direction of its bound, so the bounds stay bounds."""


def _trim(first: int, coeffs: list[int], overflow: int, up: bool) -> tuple[int, list[int], int]:
    left, cum = 0, 0
    while left < len(coeffs) - 1 and cum + coeffs[left] <= TAIL:
        cum += coeffs[left]
        left += 1
    coeffs = coeffs[left:]
    if up and cum:
        coeffs[0] += cum
    right, cum = len(coeffs), 0
    while right > 1 and cum + coeffs[right - 1] <= TAIL:
        cum += coeffs[right - 1]
        right -= 1
    coeffs = coeffs[:right]
    if up:
        overflow += cum
    elif cum:
        coeffs[-1] += cum
    return first + left, coeffs, overflow


def product(parts: Sequence[tuple[int, list[int], int]], up: bool) -> tuple[int, list[int], int]:
    """The product of polynomials with integer coefficients at 2^-BITS (lowest index, coefficients, mass at
    +inf), kept at 2^-BITS after each multiplication by rounding up (``up``) or down, tails trimmed."""
    first, coeffs, overflow = parts[0]
    for other_first, other, other_overflow in parts[1:]:
        mine, theirs = sum(coeffs), sum(other)
        exact = _exact_product(coeffs, other)
        coeffs = [-((-c) >> BITS) if up else c >> BITS for c in exact]
        leak = overflow * (theirs + other_overflow) + mine * other_overflow  # a run at +inf makes the sum +inf
        overflow = -((-leak) >> BITS)
        first, coeffs, overflow = _trim(first + other_first, coeffs, overflow, up)
    return first, coeffs, overflow


@dataclass
class Discretised:
    """The rounded-down and rounded-up composed loss distributions on the grid h Z: (lowest index,
    integer coefficients at 2^-BITS) each."""

    h: Any
    lower: tuple[int, list[int], int]
    upper: tuple[int, list[int], int]
    sums: dict = field(default_factory=dict, compare=False, repr=False)  # suffix sums per bound


def discretise(ctx: Any, steps: Any, h: Any) -> Discretised:
    """The composition of Laplace values steps[i] * h scales apart (one entry per released value and
    repetition, or a dict {steps: how many runs}; h > 0 exact, given as an interval), bounded below and above on the grid h Z (cells'
    midpoints and ends, :func:`laplace_grid`; an odd step count -- cells of width 2h would not tile
    (-t, t) -- halves the grid's step first); :class:`TooLong` beyond MAX_COEFFICIENTS grid points."""
    counts = dict(steps) if isinstance(steps, dict) else {n: list(steps).count(n) for n in set(steps)}
    counts = {n: counts[n] for n in sorted(counts)}
    if any(n % 2 for n in counts):
        counts, h = {2 * n: k for n, k in counts.items()}, h / 2
    points = sum((2 * n + 1) * k for n, k in counts.items())
    if points > scaled(MAX_COEFFICIENTS):
        raise TooLong(f"the composed loss distribution has about {points:,} grid points "
                      f"(more than the budget of {int(scaled(MAX_COEFFICIENTS)):,}; {HOW})")
    check_cost([(2 * n + 1, k) for n, k in counts.items()], "the discretised Laplace loss distributions")
    ends = []
    for up in (False, True):
        ends.append(product([_power(_integers(laplace_grid(ctx, n, h, up), up), k, up) for n, k in counts.items()], up))
    return Discretised(h, ends[0], ends[1])


def _power(part: tuple[int, list[int], int], times: int, up: bool) -> tuple[int, list[int], int]:
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
                          - _floor(ctx, min(losses, key=lambda v: float(v.a)) / h) + 1, runs))
    points = sum(span * runs for span, runs in spans)
    if points > scaled(MAX_COEFFICIENTS):
        raise TooLong(f"the composed loss distribution on a grid of step {float(h.b):.3g} has about {points:,} "
                      f"points (more than the budget of {int(scaled(MAX_COEFFICIENTS)):,}; {HOW})")
    check_cost(spans, "the discrete losses rounded to the grid")
    ends = []
    for up in (False, True):
        polys = []
        for losses, masses, runs in parts:
            if not losses:  # every output of this part has an infinite loss: no finite composition
                polys = [(0, [0], 0)]
                break
            grid: dict[int, Any] = {}
            for loss, mass in zip(losses, masses):
                i = _ceil(ctx, loss / h) if up else _floor(ctx, loss / h)
                grid[i] = grid.get(i, ctx.mpf(0)) + mass
            polys.append(_power(_integers(grid, up), runs, up))
        ends.append(product(polys, up))
    return Discretised(h, ends[0], ends[1])


def _suffix_sums(ctx: Any, found: Discretised, up: bool) -> tuple[list, list]:
    """(S_p, S_q): S_p[i] = sum_{j >= i} c_j and S_q[i] = sum_{j >= i} c_j e^(-l_j) over the coefficients
    of one bound (intervals, l_j its grid losses), so that delta(eps) is one difference per eps."""
    key = (up, ctx.prec)
    if key not in found.sums:
        first, coeffs, _ = found.upper if up else found.lower
        ratio = ctx.exp(-found.h)._mpi_
        back = ctx.exp(-(first + len(coeffs) - 1) * found.h)._mpi_
        # raw libmpi operations: those of the interval context's operators (an int operand rounded outward to
        # the precision), same order and precision -- the same enclosures without the objects' overhead
        prec, zero = ctx.prec, (fzero, fzero)
        s_p, s_q = [zero] * (len(coeffs) + 1), [zero] * (len(coeffs) + 1)
        for j in range(len(coeffs) - 1, -1, -1):
            c = coeffs[j]
            c = (from_int(c, prec, round_floor), from_int(c, prec, round_ceiling))
            s_p[j] = mpi_add(s_p[j + 1], c, prec)
            s_q[j] = mpi_add(s_q[j + 1], mpi_mul(c, back, prec), prec)
            back = mpi_div(back, ratio, prec)
        make = ctx.make_mpf
        found.sums[key] = ([make(v) for v in s_p], [make(v) for v in s_q])
    return found.sums[key]


def delta_bounds(ctx: Any, found: Discretised, eps: Any) -> Bounds:
    """Certified lower and upper bounds on delta(eps) (``eps`` an interval): the grid losses certified
    above eps by the suffix sums, S_p - e^eps S_q (exact in intervals), the few whose interval meets
    eps term by term with their excess clipped at 0."""
    ends = []
    e_eps = ctx.exp(eps)
    for up, (first, coeffs, overflow) in ((False, found.lower), (True, found.upper)):
        s_p, s_q = _suffix_sums(ctx, found, up)
        above = min(max(_ceil(ctx, eps / found.h) - first, 0), len(coeffs))  # losses certainly >= eps from here
        while above > 0 and ((first + above - 1) * found.h).a > eps.b:
            above -= 1
        while above < len(coeffs) and not ((first + above) * found.h).a > eps.b:
            above += 1
        total = s_p[above] - e_eps * s_q[above] + overflow  # mass at +inf leaks fully
        offset = above - 1
        while offset >= 0 and ((first + offset) * found.h).b > eps.a:  # losses not separated from eps
            excess = 1 - ctx.exp(eps - (first + offset) * found.h)
            total += coeffs[offset] * ctx.mpf([max(excess.a, 0), max(excess.b, 0)])
            offset -= 1
        value = total / ctx.mpf(2) ** BITS
        ends.append(value.b if up else value.a)
    return Bounds(ctx.mpf(ends[0]), ctx.mpf(ends[1]))
