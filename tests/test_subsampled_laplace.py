"""The Poisson-subsampled Laplace's certified delta_T(eps) (T = 1, 2) against mpmath quadrature at 30 digits,
and the route: accountants' answers decided, mis-stated ones refuted."""
from fractions import Fraction

import mpmath
import pytest

import dpverify as dp
from dpverify.engine.pld.laplace_mixture import Unreached, certified_delta

mpmath.mp.dps = 30


def densities(q, t, added):
    p0 = lambda x: mpmath.exp(-abs(x)) / 2
    mix = lambda x: (1 - q) * p0(x) + q * mpmath.exp(-abs(x - t)) / 2
    return (mix, p0) if added else (p0, mix)


def quad_delta1(q, t, eps, added):
    """int (p - e^eps q)_+ over the line: the sign changes once, at a root found numerically (no closed form)."""
    p, r = densities(q, t, added)
    f = lambda x: p(x) - mpmath.exp(eps) * r(x)
    cuts = [-mpmath.inf, 0, t, mpmath.inf]
    if f(mpmath.mpf(0) + mpmath.mpf(10) ** -25) * f(t - mpmath.mpf(10) ** -25) < 0:
        cuts.insert(2, mpmath.findroot(f, (mpmath.mpf(0) + mpmath.mpf(10) ** -25, t - mpmath.mpf(10) ** -25),
                                       solver="anderson"))
    return sum(max(mpmath.quad(f, [a, b]), 0) for a, b in zip(cuts, cuts[1:]))


def loss(q, t, added, x):
    p, r = densities(q, t, added)
    return mpmath.log(p(x) / r(x))


def quad_delta2(q, t, eps, added):
    """E_P[delta_1(eps - L(x1))] by nested quadrature: the outer split where the inner threshold meets 0 or t
    (found by findroot), the inner by quad_delta1's numerical root."""
    p, _ = densities(q, t, added)
    lo, hi = sorted([loss(q, t, added, -1), loss(q, t, added, t + 1)])

    def inner(x1):
        y = eps - loss(q, t, added, x1)
        if y >= hi:
            return mpmath.mpf(0)
        if y < lo:
            return 1 - mpmath.exp(y)
        return quad_delta1(q, t, y, added)
    cuts = [mpmath.mpf(0), t]
    for edge in (lo, hi):
        g = lambda x: eps - loss(q, t, added, x) - edge
        if g(mpmath.mpf(10) ** -20) * g(t - mpmath.mpf(10) ** -20) < 0:
            cuts.insert(1, mpmath.findroot(g, (mpmath.mpf(10) ** -20, t - mpmath.mpf(10) ** -20), solver="anderson"))
    cuts = sorted(cuts)
    middle = sum(mpmath.quad(lambda x: p(x) * inner(x), [a, b]) for a, b in zip(cuts, cuts[1:]))
    return mpmath.quad(p, [-mpmath.inf, 0]) * inner(-1) + mpmath.quad(p, [t, mpmath.inf]) * inner(t + 1) + middle


def _contains(ball, value, tol):
    return abs(mpmath.mpf(ball.mid().str(40, radius=False)) - value) <= tol + mpmath.mpf(ball.rad().str(5, radius=False))


@pytest.mark.parametrize("added", [True, False])
@pytest.mark.parametrize("q, t, eps", [(Fraction(1, 10), Fraction(1), Fraction(1, 20)),
                                       (Fraction(3, 10), Fraction(2), Fraction(1, 5))])
def test_one_step_matches_quadrature(q, t, eps, added):
    ball = certified_delta(q, t, 1, eps, added)
    exact = quad_delta1(mpmath.mpf(q.numerator) / q.denominator, mpmath.mpf(t.numerator) / t.denominator,
                        mpmath.mpf(eps.numerator) / eps.denominator, added)
    assert float(ball.rad()) < 1e-30 * max(float(ball.mid()), 1e-300) + 1e-40
    assert _contains(ball, exact, mpmath.mpf(10) ** -25)


@pytest.mark.parametrize("added", [True, False])
def test_two_steps_matches_nested_quadrature(added):
    q, t, eps = Fraction(3, 10), Fraction(2), Fraction(1, 2)
    ball = certified_delta(q, t, 2, eps, added)
    exact = quad_delta2(mpmath.mpf(3) / 10, mpmath.mpf(2), mpmath.mpf(1) / 2, added)
    assert exact > 0 and float(ball.rad()) < 1e-25 * float(ball.mid())
    assert _contains(ball, exact, mpmath.mpf(10) ** -18)


def test_beyond_two_steps_is_unreached():
    with pytest.raises(Unreached):
        certified_delta(Fraction(1, 10), Fraction(1), 5, Fraction(1), True)


def _spec(claims, rate=Fraction(1, 10)):
    def release(data):
        kept = [r for r in data if dp.bernoulli(rate)]
        return dp.laplace(sum(kept), 1)
    return dp.spec(release, name="sl", universe=dp.universe([1], n=range(0, 2), neighbours=dp.ADD_REMOVE),
                   claims=claims)


@pytest.mark.parametrize("added", [True, False])
@pytest.mark.parametrize("times, eps", [(1, Fraction(1, 20)), (2, Fraction(1, 10))])
def test_lattice_bracket_contains_the_certified_value(times, eps, added):
    """The T >= 3 bounds, run at T = 1 and 2, hold the certified value, and are second order (narrow)."""
    from mpmath import iv
    from dpverify.engine.pld.laplace_mixture_bounds import bounds, discretised
    iv.dps = 30
    q, t = Fraction(3, 10), Fraction(2)
    found = bounds(iv, discretised(iv, iv.mpf(3) / 10, iv.mpf(2), added, times, 400), iv.mpf(eps.numerator) / eps.denominator)
    exact = certified_delta(q, t, times, eps, added)
    assert found.lower.a <= mpmath.mpf(exact.lower().str(40, radius=False))
    assert mpmath.mpf(exact.upper().str(40, radius=False)) <= found.upper.b
    assert found.upper.b - found.lower.a < 2e-3 * found.upper.b


def test_lattice_bracket_is_zero_above_the_largest_loss():
    from mpmath import iv
    from dpverify.engine.pld.laplace_mixture_bounds import bounds, discretised, top_loss
    iv.dps = 30
    q, t = iv.mpf(1) / 10, iv.mpf(1)
    top = 3 * top_loss(iv, q, t, True)
    found = bounds(iv, discretised(iv, q, t, True, 3, 100), top + iv.mpf(10) ** -10)
    assert found.upper.b == 0


def test_route_decides_and_refutes():
    """T = 1 and 2 certified, T = 10 between the lattice bounds (the default interval's PLD answer 9.257618e-5 is
    above the refined bracket's upper end 9.2576118e-5); a delta 1e-17 below the exact one is refuted, 1e-17 above
    holds (the table's precision, about 20 digits); the halved answers are refuted."""
    exact_1 = Fraction(13121830885831265437, 10 ** 21)  # delta_1(1/10) to 20 digits, rounded down
    claims = [dp.profile(at=[Fraction(1, 10)], delta=exact_1 + Fraction(1, 10 ** 17), times=1, id="up"),
              dp.profile(at=[Fraction(1, 10)], delta=exact_1 - Fraction(1, 10 ** 17), times=1, id="below",
                         expect="refuted"),
              dp.profile(at=[Fraction(1, 5)], delta=Fraction(3429565, 10 ** 9), times=2, id="halved2",
                         expect="refuted"),
              dp.profile(at=[Fraction(1)], delta=Fraction(9257618001, 10 ** 14), times=10, id="pld10"),
              dp.profile(at=[Fraction(1)], delta=Fraction(4628809, 10 ** 11), times=10, id="halved10", expect="refuted"),
              dp.profile(at=[Fraction(1)], delta=Fraction(9257560, 10 ** 11), times=10, id="below10",
                         expect="refuted")]
    found = dp.check(_spec(claims))
    assert [p.status.value for p in found] == ["verified", "refuted", "refuted", "verified", "refuted", "refuted"]


def test_the_rate_is_kept_exact():
    """The route reads the rate exactly (the float 0.1's binary value, not the 1/10 nsimplify would give)."""
    import sympy
    from dpverify.checks.composition.laplace_mixture import _centres
    from dpverify.checks.composition.routes import two_point_mixture
    from dpverify.engine.continuous.noisy import FULL, Density, Factor, Noise
    keep = sympy.Rational(Fraction(0.1).numerator, Fraction(0.1).denominator)

    def plain(centre):
        return Factor(Noise("laplace", Fraction(centre), Fraction(1)), Fraction(0), FULL)
    single = {0: Density([(sympy.Integer(1), (plain(0),))])}
    mixed = {0: Density([(1 - keep, (plain(0),)), (keep, (plain(1),))])}
    rate, distance, added = two_point_mixture(mixed, single, _centres)
    assert rate == keep and rate != sympy.Rational(1, 10) and distance == 1 and added


def test_the_midpoint_rule_would_not_be_a_lower_bound():
    """The mutant the lattice bound avoids: each centred cell's exact P-mass at its midpoint (the Laplace grid's
    rule, sound there by symmetry) overshoots the certified delta here (the merged losses lie below the
    midpoints), while the route's lower bound stays below it."""
    from mpmath import iv
    from dpverify.engine.pld.bounds import Discretised, _integers
    from dpverify.engine.pld.laplace_mixture_bounds import Run, bounds, discretised
    iv.dps = 30

    class Midpoint(Run):
        def lower(self):
            out = {0: self.atoms[0][1], self.n: self.atoms[1][1]}
            for k in range(0, self.n + 1, 2):
                a, b = max(k - 1, 0), min(k + 1, self.n)
                p_mass, _ = self.masses(self.point(a), self.point(b), (a == 0, b == self.n))
                out[k] = out.get(k, iv.mpf(0)) + iv.mpf(max(p_mass.a, 0))
            return out
    q, t, eps, n = iv.mpf(3) / 10, iv.mpf(2), iv.mpf(1) / 20, 10
    run = Midpoint(iv, q, t, False, n)
    mutant = Discretised(run.h, _integers(run.lower(), False), _integers(run.upper(), True))
    exact = certified_delta(Fraction(3, 10), Fraction(2), 1, Fraction(1, 20), False)
    upper_exact = mpmath.mpf(exact.upper().str(40, radius=False))
    assert bounds(iv, (mutant, run.origin), eps).lower.a > upper_exact
    assert bounds(iv, discretised(iv, q, t, False, 1, n), eps).lower.a < upper_exact


@pytest.mark.parametrize("q, t, eps", [(Fraction(1, 100), Fraction(1, 2), Fraction(0)), (Fraction(1, 2), Fraction(3), Fraction(1)),
                                       (Fraction(9, 10), Fraction(1), Fraction(1, 3)), (Fraction(1, 10), Fraction(5), Fraction(2)),
                                       (Fraction(1, 5), Fraction(1), Fraction(-1, 10))])
@pytest.mark.parametrize("n", [6, 50])
def test_lattice_bracket_sweep(q, t, eps, n):
    """Coarse and finer lattices, other rates, distances and eps (0 and negative included), both directions, T = 1
    and 2: the bracket always holds the certified value."""
    from mpmath import iv
    from dpverify.engine.pld.laplace_mixture_bounds import bounds, discretised
    iv.dps = 30
    for added in (True, False):
        for times in (1, 2):
            found = bounds(iv, discretised(iv, iv.mpf(q.numerator) / q.denominator, iv.mpf(t.numerator) / t.denominator,
                                           added, times, n), iv.mpf(eps.numerator) / eps.denominator)
            exact = certified_delta(q, t, times, eps, added)
            assert found.lower.a <= mpmath.mpf(exact.lower().str(40, radius=False)) + mpmath.mpf(10) ** -35
            assert mpmath.mpf(exact.upper().str(40, radius=False)) <= found.upper.b + mpmath.mpf(10) ** -35


def test_mixtures_on_both_sides_are_unknown_not_verified():
    """Two records: {1} against {1, 2} has a mixture on both sides, outside the route: unknown (a generous delta
    must not be verified by a misread shape)."""
    def release(data):
        kept = [r for r in data if dp.bernoulli(Fraction(1, 10))]
        return dp.laplace(sum(kept), 1)
    spec = dp.spec(release, name="two", universe=dp.universe([1, 2], n=range(0, 3), neighbours=dp.ADD_REMOVE),
                   claims=[dp.profile(at=[Fraction(1, 10)], delta=Fraction(1, 2), times=1, id="loose")])
    found = dp.check(spec)
    assert [p.status.value for p in found] == ["unknown"] and "subsampling" in found[0].message
