"""The exact calculus of piecewise exponential-polynomials (dpverify.engine.continuous.piecewise).

Everything here is checked against something independent of the module: the
explicit formulas evaluated directly in mpmath, mpmath.quad on those formulas
(split at the breakpoints, compared to 1e-12), and textbook closed forms, which
the exact sympy reading must reproduce *exactly* and the certified interval
reading must enclose.
"""
from __future__ import annotations

import bisect
from fractions import Fraction

import mpmath
import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpverify.engine.continuous import piecewise as pw
from dpverify.engine.program.backend import IntervalBackend, SympyBackend
from dpverify.engine.continuous.noisy import Noise

from .helpers import encloses, frac, lo_hi, mid

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
POINTWISE = settings(SETTINGS, max_examples=100)  # cheap: more examples
IV = IntervalBackend(50)
EXACT = SympyBackend()
TOL = mpmath.mpf(10) ** -12

rationals = st.fractions(min_value=-3, max_value=3, max_denominator=8)
scales = st.fractions(min_value=Fraction(1, 4), max_value=4, max_denominator=8)
points = st.fractions(min_value=-6, max_value=6, max_denominator=16)


# -- independent helpers ---------------------------------------------------------------------

def close(x, value) -> bool:
    with mpmath.workdps(30):
        return abs(mid(x) - value) < TOL * max(1, abs(value))


def direct(f: pw.Piecewise, t) -> mpmath.mpf:
    """f(t) from its explicit formula: the piece is the number of cuts <= t (cuts belong to the right)."""
    t = frac(t) if isinstance(t, Fraction) else mpmath.mpf(t)
    terms = f.pieces[bisect.bisect_right([frac(c) for c in f.cuts], t)]
    total = mpmath.mpf(0)
    for (rate, degree), c in terms.items():
        if hasattr(c, "_mpi_"):
            c = mid(c)
        elif isinstance(c, sympy.Basic):
            c = mpmath.mpf(str(sympy.N(c, 40)))
        else:
            c = frac(Fraction(c))
        total += c * t ** degree * mpmath.exp(frac(rate) * t)
    return total


def quad(fn, lo, hi, cuts=()) -> mpmath.mpf:
    """mpmath.quad of fn over (lo, hi), split at every breakpoint inside."""
    lo = -mpmath.inf if lo is None else frac(lo) if isinstance(lo, Fraction) else mpmath.mpf(lo)
    hi = mpmath.inf if hi is None else frac(hi) if isinstance(hi, Fraction) else mpmath.mpf(hi)
    if lo >= hi:
        return mpmath.mpf(0)
    inner = sorted(x for x in {frac(Fraction(c)) for c in cuts} if lo < x < hi)
    return mpmath.quad(fn, [lo, *inner, hi])


def laplace_pdf(mu: Fraction, b: Fraction):
    return lambda x: mpmath.exp(-abs(x - frac(mu)) / frac(b)) / (2 * frac(b))


def laplace_cdf(mu: Fraction, b: Fraction):
    def cdf(x):
        z = (x - frac(mu)) / frac(b)
        return mpmath.exp(z) / 2 if z < 0 else 1 - mpmath.exp(-z) / 2
    return cdf


def exponential_pdf(mu: Fraction, b: Fraction):
    return lambda x: mpmath.exp(-(x - frac(mu)) / frac(b)) / frac(b) if x >= frac(mu) else mpmath.mpf(0)


def hand_laplace(mu: Fraction, b: Fraction, backend) -> pw.Piecewise:
    """The Laplace density written out by hand: e^((x-mu)/b)/2b left of mu, e^(-(x-mu)/b)/2b right."""
    c = backend.num(Fraction(1) / (2 * b))
    return pw.Piecewise((mu,), ({(1 / b, 0): c * backend.exp(-mu / b)}, {(-1 / b, 0): c * backend.exp(mu / b)}))


def identity_power(degree: int, backend) -> pw.Piecewise:
    """t -> t^degree on the whole line."""
    return pw.Piecewise((), ({(Fraction(0), degree): backend.num(1)},))


# -- random integrable piecewise functions ---------------------------------------------------

RATES = [Fraction(r) for r in ("-2", "-1", "-1/2", "-1/3", "0", "1/3", "1/2", "1", "2")]


@st.composite
def integrable(draw, backend=IV) -> pw.Piecewise:
    """A random piecewise exponential-polynomial that is integrable over the real line."""
    cuts = tuple(sorted(draw(st.sets(st.fractions(min_value=-3, max_value=3, max_denominator=4),
                                     min_size=1, max_size=3))))
    pieces = []
    for index in range(len(cuts) + 1):
        if index == 0:
            allowed = [r for r in RATES if r > 0]
        elif index == len(cuts):
            allowed = [r for r in RATES if r < 0]
        else:
            allowed = RATES
        keys = draw(st.sets(st.tuples(st.sampled_from(allowed), st.integers(0, 2)), max_size=3))
        pieces.append({key: backend.num(draw(st.fractions(min_value=-3, max_value=3, max_denominator=6)))
                       for key in keys})
    return pw.Piecewise(cuts, tuple(pieces))


# -- pointwise algebra -----------------------------------------------------------------------

@POINTWISE
@given(f=integrable(), g=integrable(), t=points)
def test_add_subtract_multiply_agree_with_direct_evaluation(f, g, t) -> None:
    with mpmath.workdps(30):
        ft, gt = direct(f, t), direct(g, t)
        assert close(pw.evaluate(f, t, IV), ft)
        assert close(pw.evaluate(pw.add(f, g), t, IV), ft + gt)
        assert close(pw.evaluate(pw.subtract(f, g), t, IV), ft - gt)
        assert close(pw.evaluate(pw.multiply(f, g), t, IV), ft * gt)


@POINTWISE
@given(f=integrable(), s=rationals, t=points)
def test_shift_is_composition_with_a_translation(f, s, t) -> None:
    with mpmath.workdps(30):
        assert close(pw.evaluate(pw.shift(f, s, IV), t, IV), direct(f, t + s))


@POINTWISE
@given(f=integrable(), lo=st.none() | rationals, hi=st.none() | rationals, t=points)
def test_restrict_keeps_the_interval_and_zeroes_the_rest(f, lo, hi, t) -> None:
    # A cut belongs to the piece on its right: the restriction to (lo, hi) keeps [lo, hi).
    inside = (lo is None or t >= lo) and (hi is None or t < hi)
    with mpmath.workdps(30):
        value = pw.evaluate(pw.restrict(f, lo, hi), t, IV)
        if inside:
            assert close(value, direct(f, t))
        else:
            assert IV.is_zero(value)


@POINTWISE
@given(f=integrable(), cuts=st.sets(rationals, max_size=3), t=points)
def test_refining_the_cuts_does_not_change_the_function(f, cuts, t) -> None:
    finer = tuple(sorted(set(f.cuts) | cuts))
    g = pw.refine(f, finer)
    assert g.cuts == finer
    with mpmath.workdps(30):
        assert close(pw.evaluate(g, t, IV), direct(f, t))


# -- integrals against quadrature ------------------------------------------------------------

@SETTINGS
@given(f=integrable(), t=points)
def test_antiderivative_matches_quadrature(f, t) -> None:
    h, total = pw.antiderivative(f, IV)
    with mpmath.workdps(30):
        fn = lambda x: direct(f, x)  # noqa: E731
        assert close(total, quad(fn, None, None, f.cuts))
        assert close(pw.integral(f, IV), quad(fn, None, None, f.cuts))
        assert close(pw.evaluate(h, t, IV), quad(fn, None, t, f.cuts))


@SETTINGS
@given(f=integrable(), lo=st.none() | rationals, width=st.none() | scales, x=points)
def test_window_integral_matches_quadrature(f, lo, width, x) -> None:
    hi = None if width is None else (width if lo is None else lo + width)
    w = pw.window_integral(f, lo, hi, IV)
    with mpmath.workdps(30):
        expected = quad(lambda y: direct(f, y), None if lo is None else x + lo, None if hi is None else x + hi,
                        f.cuts)
        assert close(pw.evaluate(w, x, IV), expected)


def test_a_non_integrable_function_is_refused() -> None:
    with pytest.raises(ArithmeticError):
        pw.integral(pw.constant(IV.num(1)), IV)
    growing = pw.Piecewise((Fraction(0),), ({(Fraction(1), 0): IV.num(1)}, {(Fraction(1), 0): IV.num(1)}))
    with pytest.raises(ArithmeticError):
        pw.integral(growing, IV)


# -- densities -------------------------------------------------------------------------------

@SETTINGS
@given(mu=rationals, b=scales, kind=st.sampled_from(["laplace", "exponential"]), t=points)
def test_noise_densities_are_the_textbook_ones_and_integrate_to_one(mu, b, kind, t) -> None:
    f = Noise(kind, mu, b).density(IV)
    expected = (laplace_pdf if kind == "laplace" else exponential_pdf)(mu, b)
    with mpmath.workdps(30):
        assert close(pw.evaluate(f, t, IV), expected(mpmath.mpf(t.numerator) / t.denominator))
    total = pw.integral(f, IV)
    assert encloses(total, 1)
    assert lo_hi(total)[1] - lo_hi(total)[0] < mpmath.mpf(10) ** -40


@SETTINGS
@given(mu=rationals, b=scales, t=points)
def test_laplace_antiderivative_is_its_cdf(mu, b, t) -> None:
    h, _ = pw.antiderivative(hand_laplace(mu, b, IV), IV)
    with mpmath.workdps(30):
        assert close(pw.evaluate(h, t, IV), laplace_cdf(mu, b)(frac(t)))


@pytest.mark.parametrize("mu, b", [(Fraction(0), Fraction(1)), (Fraction(3, 2), Fraction(1, 3)),
                                   (Fraction(-2), Fraction(5, 2))])
def test_densities_integrate_to_exactly_one_in_sympy(mu, b) -> None:
    for kind in ("laplace", "exponential"):
        assert sympy.simplify(pw.integral(Noise(kind, mu, b).density(EXACT), EXACT) - 1) == 0
    assert sympy.simplify(pw.integral(hand_laplace(mu, b, EXACT), EXACT) - 1) == 0


@pytest.mark.parametrize("mu, b", [(Fraction(0), Fraction(1)), (Fraction(1, 2), Fraction(2, 3)),
                                   (Fraction(-3), Fraction(2))])
def test_moments_exactly(mu, b) -> None:
    """E[X] and E[X^2]: Laplace mu, mu^2 + 2b^2; exponential mu + b, (mu + b)^2 + b^2 (polynomial terms)."""
    moments = {"laplace": (mu, mu ** 2 + 2 * b ** 2), "exponential": (mu + b, (mu + b) ** 2 + b ** 2)}
    for kind, (first, second) in moments.items():
        f = Noise(kind, mu, b).density(EXACT)
        for degree, expected in ((1, first), (2, second)):
            got = pw.integral(pw.multiply(f, identity_power(degree, EXACT)), EXACT)
            assert sympy.simplify(got - sympy.Rational(expected.numerator, expected.denominator)) == 0, (kind, degree)
            got_iv = pw.integral(pw.multiply(Noise(kind, mu, b).density(IV), identity_power(degree, IV)), IV)
            assert encloses(got_iv, sympy.Rational(expected.numerator, expected.denominator))


# -- closed forms of comparisons --------------------------------------------------------------

def tail_of_difference(f_x: pw.Piecewise, f_y: pw.Piecewise, t: Fraction, backend):
    """P[Y - X > t] = integral f_X(x) P[Y > x + t] dx, with the inner probability a window integral."""
    return pw.integral(pw.multiply(f_x, pw.window_integral(f_y, t, None, backend)), backend)


def laplace_difference_tail(t: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    """P[Y - X > t] for X, Y iid Laplace(b): (2 + t/b) e^(-t/b)/4 for t >= 0, and 1 minus that at -t."""
    if t >= 0:
        return (2 + t / b) * sympy.exp(-t / b) / 4
    return 1 - laplace_difference_tail(-t, b)


@pytest.mark.parametrize("t, b", [(Fraction(0), Fraction(1)), (Fraction(1), Fraction(1)),
                                  (Fraction(3, 2), Fraction(1, 2)), (Fraction(5), Fraction(2)),
                                  (Fraction(-2), Fraction(3, 4))])
def test_difference_of_two_laplace_values_exactly(t, b) -> None:
    mu = Fraction(1, 3)  # a common centre changes nothing
    expected = laplace_difference_tail(sympy.Rational(t.numerator, t.denominator),
                                       sympy.Rational(b.numerator, b.denominator))
    got = tail_of_difference(Noise("laplace", mu, b).density(EXACT), Noise("laplace", mu, b).density(EXACT),
                             t, EXACT)
    assert sympy.simplify(got - expected) == 0
    assert encloses(tail_of_difference(Noise("laplace", mu, b).density(IV), Noise("laplace", mu, b).density(IV),
                                       t, IV), expected)


@SETTINGS
@given(t=rationals, b=scales, mu=rationals)
def test_difference_of_two_laplace_values_in_intervals(t, b, mu) -> None:
    expected = laplace_difference_tail(sympy.Rational(t.numerator, t.denominator),
                                       sympy.Rational(b.numerator, b.denominator))
    got = tail_of_difference(Noise("laplace", mu, b).density(IV), Noise("laplace", mu, b).density(IV), t, IV)
    assert encloses(got, expected)


@SETTINGS
@given(b1=scales, b2=scales, mu=rationals)
def test_race_of_two_exponential_values(b1, b2, mu) -> None:
    """P[X > Y] = b1/(b1 + b2) for X ~ mu + Exp(b1), Y ~ mu + Exp(b2) (rates 1/b1, 1/b2); exactly."""
    expected = b1 / (b1 + b2)
    got = tail_of_difference(Noise("exponential", mu, b2).density(IV), Noise("exponential", mu, b1).density(IV),
                             Fraction(0), IV)
    assert encloses(got, sympy.Rational(expected.numerator, expected.denominator))


def test_race_of_two_exponential_values_exactly() -> None:
    got = tail_of_difference(Noise("exponential", Fraction(0), Fraction(1, 2)).density(EXACT),
                             Noise("exponential", Fraction(0), Fraction(3)).density(EXACT), Fraction(0), EXACT)
    assert sympy.simplify(got - sympy.Rational(6, 7)) == 0


@SETTINGS
@given(b1=scales, b2=scales, mu1=rationals, mu2=rationals, t=rationals)
def test_laplace_comparisons_of_different_scales_match_quadrature(b1, b2, mu1, mu2, t) -> None:
    """P[Y - X > t] for independent Laplace values of any centres and scales, against mpmath.quad."""
    got = tail_of_difference(Noise("laplace", mu1, b1).density(IV), Noise("laplace", mu2, b2).density(IV), t, IV)
    fx, Fy = laplace_pdf(mu1, b1), laplace_cdf(mu2, b2)
    with mpmath.workdps(30):
        expected = quad(lambda x: fx(x) * (1 - Fy(x + frac(t))), None, None, (mu1, mu2 - t))
        assert close(got, expected)


@SETTINGS
@given(mu=rationals, b=scales, lo=rationals, width=scales)
def test_probability_of_an_interval(mu, b, lo, width) -> None:
    """P[lo < X < hi] = F(hi) - F(lo), through restrict and integral."""
    hi = lo + width
    for kind in ("laplace", "exponential"):
        got = pw.integral(pw.restrict(Noise(kind, mu, b).density(IV), lo, hi), IV)
        pdf = (laplace_pdf if kind == "laplace" else exponential_pdf)(mu, b)
        with mpmath.workdps(30):
            assert close(got, quad(pdf, lo, hi, (mu,)))


# -- correlation: the density of a difference -----------------------------------------------------

@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mu=st.fractions(min_value=-3, max_value=3, max_denominator=4),
       nu=st.fractions(min_value=-3, max_value=3, max_denominator=4),
       b=st.sampled_from([Fraction(1, 2), Fraction(1), Fraction(3, 2)]),
       c=st.sampled_from([Fraction(1, 3), Fraction(1), Fraction(2)]),
       kinds=st.sampled_from([("laplace", "laplace"), ("laplace", "exponential"), ("exponential", "laplace")]),
       g=st.fractions(min_value=-6, max_value=6, max_denominator=8))
def test_correlate_is_the_density_of_a_difference(mu, nu, b, c, kinds, g) -> None:
    """correlate(a, b)(g) = int a(r) b(r + g) dr, against quadrature split at every kink."""
    backend = IntervalBackend(30)
    first, second = Noise(kinds[0], mu, b), Noise(kinds[1], nu, c)
    h = pw.correlate(first.density(backend), second.density(backend), backend)
    assert abs(mpmath.mpf(pw.integral(h, backend).mid) - 1) < mpmath.mpf(10) ** -25
    with mpmath.workdps(40):
        def dens(noise, x):
            z = x - frac(noise.centre)
            s = frac(noise.scale)
            if noise.kind == "laplace":
                return mpmath.exp(-abs(z) / s) / (2 * s)
            return mpmath.exp(-z / s) / s if z >= 0 else mpmath.mpf(0)
        kinks = sorted({frac(mu), frac(nu) - frac(g)})
        expected = mpmath.quad(lambda r: dens(first, r) * dens(second, r + frac(g)), [-mpmath.inf, *kinks, mpmath.inf])
        got = pw.evaluate(h, g, backend)
        assert abs(mpmath.mpf(got.mid) - expected) < mpmath.mpf(10) ** -12
