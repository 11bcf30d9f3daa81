"""The certified Phi of :mod:`dpverify.engine.continuous.gaussian_delta`: arb's erfc (the fast path) against the
series in mpmath intervals (the reference, :func:`phi_series`) and against mpmath's ncdf at more digits."""
from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.engine.continuous.gaussian_delta import _phi_arb, gaussian_delta, phi, phi_series
from dpverify.engine.program.backend import IntervalBackend


def _ends(value) -> tuple:
    """The interval's two ends as exact mpf values (mpmath.mpf of an end would round it to mp.prec)."""
    return tuple(mpmath.mp.make_mpf(end) for end in value._mpi_)


def _reference(x: Fraction, dps: int):
    with mpmath.workdps(dps + 40):
        return mpmath.ncdf(mpmath.mpf(x.numerator) / x.denominator)


@settings(max_examples=60, deadline=None)
@given(x=st.fractions(min_value=-60, max_value=60, max_denominator=10 ** 6), dps=st.sampled_from([15, 30, 50, 120]))
def test_the_arb_phi_encloses_the_cdf_and_meets_the_series_enclosure(x, dps) -> None:
    ctx = IntervalBackend(dps).ctx
    point = ctx.mpf(x.numerator) / x.denominator  # an interval when x is not a binary number
    fast, slow = phi(ctx, point), phi_series(ctx, point)
    assert _phi_arb(ctx, point) is not None  # the fast path answered
    lo, hi = _ends(fast)
    slo, shi = _ends(slow)
    truth = _reference(x, dps)
    with mpmath.workdps(dps + 40):
        assert lo <= truth <= hi
        assert 0 <= lo <= hi <= 1
        assert lo <= shi and slo <= hi  # the two enclosures overlap (both hold the value)
        # never looser than the series by more than a few ulps of the context
        assert (hi - lo) <= (shi - slo) + 8 * mpmath.mpf(2) ** -ctx.prec * max(abs(truth), mpmath.mpf(2) ** -ctx.prec)


@settings(max_examples=30, deadline=None)
@given(a=st.fractions(min_value=-20, max_value=20, max_denominator=1000),
       width=st.fractions(min_value=0, max_value=3, max_denominator=1000))
def test_an_interval_argument_is_enclosed_at_both_ends(a, width) -> None:
    ctx = IntervalBackend(40).ctx
    b = a + width
    arg = ctx.mpf([ctx.mpf(a.numerator) / a.denominator, ctx.mpf(b.numerator) / b.denominator])
    lo, hi = _ends(phi(ctx, arg))
    with mpmath.workdps(80):
        assert lo <= _reference(a, 40) and _reference(b, 40) <= hi
    slo, shi = _ends(phi_series(ctx, arg))
    assert lo <= shi and slo <= hi


def test_exact_values_stay_exact_and_the_tails_keep_their_digits() -> None:
    ctx = IntervalBackend(50).ctx
    half = phi(ctx, ctx.mpf(0))
    assert half.a == half.b == ctx.mpf(0.5).a
    lo, hi = _ends(phi(ctx, ctx.mpf(-40)))
    truth = _reference(Fraction(-40), 50)
    assert lo <= truth <= hi and hi - lo < mpmath.mpf(10) ** -45 * truth  # ~1e-350, relative digits kept
    lo, hi = _ends(phi(ctx, ctx.mpf(40)))
    assert lo <= 1 <= hi + mpmath.mpf(10) ** -300


def test_a_non_finite_end_falls_back_to_the_series() -> None:
    ctx = IntervalBackend(30).ctx
    arg = ctx.mpf([ctx.mpf(1), mpmath.inf])
    assert _phi_arb(ctx, arg) is None
    assert phi(ctx, arg).a <= mpmath.ncdf(1)


@pytest.mark.parametrize("distance, eps", [(Fraction(1), Fraction(1)), (Fraction(1, 10), Fraction(1, 100)),
                                           (Fraction(7), Fraction(3)), (Fraction(1, 2), Fraction(5))])
def test_the_analytic_delta_encloses_the_closed_form(distance, eps) -> None:
    ctx = IntervalBackend(50).ctx
    d, e = ctx.mpf(distance.numerator) / distance.denominator, ctx.mpf(eps.numerator) / eps.denominator
    lo, hi = _ends(gaussian_delta(ctx, d, e))
    with mpmath.workdps(100):
        D, E = mpmath.mpf(distance.numerator) / distance.denominator, mpmath.mpf(eps.numerator) / eps.denominator
        truth = mpmath.ncdf(D / 2 - E / D) - mpmath.exp(E) * mpmath.ncdf(-D / 2 - E / D)
        assert lo <= truth <= hi
        assert hi - lo < mpmath.mpf(10) ** -40 * max(truth, mpmath.mpf(10) ** -60)
