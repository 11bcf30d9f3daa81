"""Composed Laplace releases between second-order certified bounds (engine/pld/bounds.py): each cell of the
loss's continuous part at its midpoint (Jensen in e^-L: lower) or split to its ends keeping both masses
(a mean-preserving spread: upper).  Checked against a 50-digit quadrature of two releases, against the
first-order bounds that round every loss down and up (an independent construction: the two brackets must
meet), for second-order convergence, for exact integer conversion, and on claims at T = 100 and 1000."""
from __future__ import annotations

import math

import mpmath
import pytest
from sympy import Rational

import dpverify as dp
from dpverify.engine.pld import bounds as pld_bounds
from dpverify.engine.program.backend import IntervalBackend
from dpverify.engine.pld.bounds import delta_bounds, discretise, laplace_grid
from tests.test_composition import _laplace_two_fold


def rounded(ctx, steps, h, up):
    """The first-order construction: every loss of one release rounded up or down to the grid h Z (the CDF
    P(l < y) = e^(-(t - y)/2)/2 on (-t, t], atoms e^-t/2 at -t and 1/2 at t)."""
    c = {i: ctx.exp(-(steps - i) * h / 2) / 2 for i in range(-steps, steps + 1)}
    masses = {}
    if up:
        masses[-steps] = c[-steps]
        for i in range(-steps + 1, steps):
            masses[i] = c[i] - c[i - 1]
        masses[steps] = 1 - c[steps - 1]
    else:
        for i in range(-steps, steps):
            masses[i] = c[i + 1] - (c[i] if i > -steps else 0)
        masses[steps] = ctx.mpf(1) / 2
    return {i: ctx.mpf([max(m.a, 0), max(m.b, 0)]) for i, m in masses.items()}


def composed(ctx, grid_of, steps, h, times):
    ends = []
    for up in (False, True):
        part = pld_bounds._integers(grid_of(ctx, steps, h, up), up)
        ends.append(pld_bounds._power(part, times, up))
    return pld_bounds.Discretised(h, ends[0], ends[1])


@pytest.mark.parametrize("grid", [8, 32])
def test_two_releases_bracket_the_quadrature(grid):
    ctx = IntervalBackend(30).ctx
    found = discretise(ctx, [grid, grid], ctx.mpf(1) / grid)
    for at in (Rational(0), Rational(1, 2), Rational(3, 2)):
        bounds = delta_bounds(ctx, found, ctx.mpf(at.p) / at.q)
        reference = _laplace_two_fold(1, mpmath.mpf(at.p) / at.q)
        assert bounds.lower.a <= reference <= bounds.upper.b
        assert bounds.upper.b - bounds.lower.a < 1.0 / grid ** 2


@pytest.mark.parametrize("times, at", [(10, 3), (50, 15), (200, 80)])
def test_second_order_bounds_meet_the_first_order_ones(times, at):
    """Both constructions bound the same delta_T: their brackets must intersect, and the second-order one at
    16 points per unit is narrower than the rounding at 64."""
    ctx = IntervalBackend(30).ctx
    eps = ctx.mpf(at)
    tight = delta_bounds(ctx, composed(ctx, laplace_grid, 16, ctx.mpf(1) / 16, times), eps)
    first = delta_bounds(ctx, composed(ctx, rounded, 64, ctx.mpf(1) / 64, times), eps)
    assert tight.lower.a <= first.upper.b and first.lower.a <= tight.upper.b
    assert tight.upper.b - tight.lower.a < first.upper.b - first.lower.a


def test_the_width_falls_with_the_square_of_the_step():
    ctx = IntervalBackend(30).ctx
    widths = []
    for grid in (8, 16, 32):
        b = delta_bounds(ctx, discretise(ctx, [grid] * 40, ctx.mpf(1) / grid), ctx.mpf(12))
        widths.append(float(b.upper.b - b.lower.a))
    assert widths[0] / widths[1] > 3 and widths[1] / widths[2] > 3


def test_one_release_keeps_its_masses_exactly():
    """Each run's P-mass is 1 and its Q-mass (sum of P-mass e^-l) is 1 on both constructions; at 2^-BITS the
    upper masses are ceilings (total >= 1) and the lower ones floors (total <= 1), with no float in between."""
    ctx = IntervalBackend(50).ctx
    h = ctx.mpf(1) / 8
    for up in (False, True):
        grid = laplace_grid(ctx, 8, h, up)
        total = sum(grid.values(), ctx.mpf(0))
        q_total = sum((m * ctx.exp(-i * h) for i, m in grid.items()), ctx.mpf(0))
        assert total.a <= 1 <= total.b and q_total.a <= 1 <= q_total.b
        assert float(total.b - total.a) < 1e-45
        _, coeffs, _ = pld_bounds._integers(grid, up)
        assert (sum(coeffs) >= 2 ** pld_bounds.BITS) if up else (sum(coeffs) <= 2 ** pld_bounds.BITS)
    x = ctx.mpf(1) / 3
    assert pld_bounds.fixed(x, True) - pld_bounds.fixed(x, False) == 1  # one unit apart: exact ceiling and floor
    assert pld_bounds.fixed(x, False) == (2 ** pld_bounds.BITS) // 3


def laplace_sum(data):
    return dp.laplace(sum(data), 1)


ADD_REMOVE = dp.universe([1], n=range(0, 2), neighbours=dp.ADD_REMOVE)


@pytest.mark.parametrize("times, at, holds, too_small", [(100, 60, Rational(1, 1000), Rational(9, 10 ** 4)),
                                                         (1000, 500, Rational(1, 10 ** 7), Rational(4, 10 ** 8))])
def test_long_compositions_are_decided(times, at, holds, too_small):
    """T = 100 and 1000 are decided between certified bounds (the width is in the evidence); a delta below the
    lower bound is refuted with the bound re-confirmed at twice the precision."""
    spec = dp.spec(laplace_sum, universe=ADD_REMOVE,
                   claims=[dp.profile(at=[at], delta=holds, times=times, id="holds"),
                           dp.profile(at=[at], delta=too_small, times=times, id="too_small")])
    verified, refuted = dp.check(spec)
    assert verified.status.value == "verified" and refuted.status.value == "refuted"
    row = verified.evidence.rows[0]
    lower, upper = float(row.achieved_lower), float(row.achieved_upper)
    assert 0 < lower < upper < float(holds) and (upper - lower) / upper < 0.2
    assert float(too_small) < float(refuted.witness.p)
    assert "confirmed" in refuted.message


def test_an_odd_step_count_halves_the_step():
    """Cells of width 2h tile (-t, t) only for an even count: an odd one is refused by the grid and halved
    by discretise, whose bounds still bracket the quadrature."""
    ctx = IntervalBackend(30).ctx
    with pytest.raises(ValueError):
        laplace_grid(ctx, 7, ctx.mpf(1) / 7, True)
    found = discretise(ctx, [7, 7], ctx.mpf(1) / 7)
    assert found.h.b < ctx.mpf(1) / 7
    bounds = delta_bounds(ctx, found, ctx.mpf(1) / 2)
    assert bounds.lower.a <= _laplace_two_fold(1, mpmath.mpf(1) / 2) <= bounds.upper.b
