"""The Poisson-subsampled Gaussian certified by the Mellin inversion (engine/pld/gaussian_mellin.py).

Checked against what does not share its code: the grid brackets of engine/pld/gaussian_tight.py (the
value must lie inside), the one-step hockey-stick divergence by mpmath quadrature of the two densities,
dp_accounting's PLD accountant on a fine grid (an independent discretisation, to its own accuracy), and
the same value from a second plan (another line Re s = a and step h: the balls must overlap).  Mutants:
a strip reaching the pole, a halved accountant answer, a claim inside the ball (unknown, not verified).
"""
from __future__ import annotations

import time
from fractions import Fraction

import mpmath
import pytest
from sympy import Rational

import dpverify as dp
from dpverify.checks.composition import mixture
from dpverify.engine.pld import gaussian_mellin as mellin
from dpverify.engine.program.backend import IntervalBackend
from dpverify.engine.pld.gaussian_mixture import compose, subsampled_bounds
from dpverify.engine.pld.gaussian_tight import one_step_tight

Q, D = Fraction(1, 100), Fraction(1)


def _bracket(times: int, eps: float, grid=(500, 0.05, 6.0)) -> tuple[float, float]:
    """The worse direction's certified grid bracket (second order), the route used before the Mellin one."""
    ctx = IntervalBackend(20).ctx
    h = ctx.mpf(1) / grid[0]
    found = compose(one_step_tight(ctx, ctx.mpf(float(Q)), ctx.mpf(float(D)), h, *grid[1:]), times, h)
    bounds = subsampled_bounds(ctx, found, ctx.mpf(eps))
    return float(bounds.lower.a), float(bounds.upper.b)


def _worse(times: int, eps: Fraction, digits: int = 12) -> tuple[float, float, float]:
    both = [mellin.certified_delta(Q, D, times, eps, added, digits) for added in (True, False)]
    top = max(both, key=lambda c: c.upper)
    return float(top.lower), float(top.upper), top.digits


def _quadrature(eps: float, added: bool) -> mpmath.mpf:
    """int (P - e^eps Q)_+ over the outputs, P, Q the two densities in the direction, at 40 digits."""
    with mpmath.workdps(40):
        q, d = mpmath.mpf(Q.numerator) / Q.denominator, mpmath.mpf(int(D))
        mix = lambda x: (1 - q) * mpmath.npdf(x) + q * mpmath.npdf(x, d)  # noqa: E731
        p, base = (mix, mpmath.npdf) if added else (mpmath.npdf, mix)
        e = mpmath.exp(eps)
        level = eps if added else -eps  # the cut where ln(mix / npdf) = level
        excess = mpmath.exp(level) - (1 - q)
        if excess <= 0:
            return mpmath.mpf(0)
        cut = (mpmath.log(excess / q) + d * d / 2) / d
        pieces = [-mpmath.inf, -8, -2, 0, 2, 8, mpmath.inf]
        side = [x for x in sorted(set(pieces) | {cut}) if (x >= cut if added else x <= cut)]
        return mpmath.quad(lambda x: p(x) - e * base(x), side)


@pytest.mark.parametrize("eps", [Fraction(0), Fraction(1, 20), Fraction(1, 2), Fraction(1)])
@pytest.mark.parametrize("added", [True, False])
def test_one_step_closed_form_against_quadrature(eps, added):
    value = mellin.one_step(Q, D, eps, added)
    reference = _quadrature(float(eps), added)
    assert abs(float(value.mid()) - float(reference)) <= 1e-25 + 1e-20 * float(reference)
    assert float(value.rad()) <= 1e-20 * max(float(reference), 1e-30) + 1e-30


def test_t1_inside_the_grid_bracket():
    lower, upper, digits = _worse(1, Fraction(1))
    low, high = _bracket(1, 1.0)
    assert low <= lower <= upper <= high and digits > 12


@pytest.mark.parametrize("times,bracket", [(100, (6.659357e-7, 6.691691e-7)), (1000, (2.605812e-3, 2.622264e-3))])
def test_mellin_inside_the_old_brackets_to_ten_digits(times, bracket):
    """The brackets measured by the grid route (bench/README.md, grid (1000, 0.03, 7)), rounded outwards."""
    start = time.perf_counter()
    lower, upper, digits = _worse(times, Fraction(1))
    seconds = time.perf_counter() - start
    assert bracket[0] <= lower <= upper <= bracket[1]
    assert digits >= 10, (digits, seconds)


def test_a_second_plan_agrees():
    first = mellin.mellin_delta(Q, D, 1000, Fraction(1), True)
    plan = first.plan
    other = mellin.Plan(plan.a - 1, plan.d - 1, plan.h / 2 ** 0.5, plan.eps, plan.reference, plan.nodes, plan.extra + 4)
    second = mellin.mellin_delta(Q, D, 1000, Fraction(1), True, plan=other)
    assert second.a != first.a and second.h != first.h
    assert first.value.overlaps(second.value) and first.digits > 10 and second.digits > 10


def test_against_dp_accounting_on_a_fine_grid():
    accounting = pytest.importorskip("dp_accounting")
    from dp_accounting import dp_event
    from dp_accounting.pld import PLDAccountant
    acc = PLDAccountant(accounting.NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=1e-4)
    acc.compose(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)), 1000)
    theirs = acc.get_delta(1.0)
    lower, upper, _ = _worse(1000, Fraction(1))
    assert abs(theirs - upper) < 1e-3 * upper  # its pessimistic discretisation, to its own accuracy


def test_strip_reaching_the_pole_is_unreached():
    plan = mellin.mellin_delta(Q, D, 1000, Fraction(1), True).plan
    bad = mellin.Plan(plan.a, plan.a - 1, plan.h, plan.eps, plan.reference, plan.nodes, plan.extra)
    with pytest.raises(mellin.Unreached):
        mellin.mellin_delta(Q, D, 1000, Fraction(1), True, plan=bad)


def test_budget_is_counted(monkeypatch):
    monkeypatch.setattr(mellin, "MAX_NODES", 10)
    with pytest.raises(mellin.Unreached):
        mellin.mellin_delta(Q, D, 1000, Fraction(1), True)


def test_removed_direction_is_zero_beyond_its_largest_loss():
    # the removed direction's loss is at most -ln(1 - q) = 0.01005 per step: 10 steps stay below eps = 1/2
    assert mellin.certified_delta(Q, D, 10, Fraction(1, 2), False).upper == 0


# --- the profile claim on the DP-SGD step ---------------------------------------------------------------

SIGMA = dp.symbol("sigma", positive=True)
ADD_REMOVE = dp.universe([1], n=range(0, 2), neighbours=dp.ADD_REMOVE)


def _step(data, sigma):
    kept = [r for r in data if dp.bernoulli(Rational(1, 100))]
    return dp.gaussian(sum(kept), sigma)


def _exact(x: float) -> Rational:
    f = Fraction(x)
    return Rational(f.numerator, f.denominator)


def test_profile_claims_at_1000_steps():
    """A halved accountant answer is refuted (confirmed afresh); its own answer verified (slack); a claim
    inside the certified ball, even at twice the digits (the route's refinement), is unknown, not verified."""
    lower, upper, _ = _worse(1000, Fraction(1), 2 * mixture.CERTIFIED_DIGITS)
    middle = Fraction(lower) + (Fraction(upper) - Fraction(lower)) / 2
    reported = 2.6124968e-3  # dp_accounting's PLDAccountant, get_delta(1.0) (bench/README.md)
    claims = [dp.profile(at=[1], delta=_exact(reported), times=1000, id="accountant"),
              dp.profile(at=[1], delta=_exact(reported / 2), times=1000, id="halved"),
              dp.profile(at=[1], delta=Rational(middle.numerator, middle.denominator), times=1000, id="inside")]
    spec = dp.spec(_step, universe=ADD_REMOVE, grid={SIGMA: [1]}, claims=claims)
    found = dp.check(spec)
    assert [p.status.value for p in found] == ["verified", "refuted", "unknown"]
    assert found[1].witness is not None and "confirmed" in found[1].message
    assert found[0].evidence.digits >= mixture.CERTIFIED_DIGITS and found[0].evidence.grid is None
    assert "not separated" in found[2].message


def test_grid_fallback_when_the_mellin_route_is_unreached(monkeypatch):
    """Beyond the Mellin budget the route answers with the grid's bracket: a loose claim still verified,
    a claim inside the bracket unknown (never decided from a guess)."""
    monkeypatch.setattr(mellin, "MAX_NODES", 0)
    claims = [dp.profile(at=[1], delta=Rational(1, 10 ** 7), times=10, id="loose"),
              dp.profile(at=[1], delta=Rational(294, 10 ** 10), times=10, id="inside")]  # exact 2.93995e-8
    spec = dp.spec(_step, universe=ADD_REMOVE, grid={SIGMA: [1]}, claims=claims)
    found = dp.check(spec)
    assert [p.status.value for p in found] == ["verified", "unknown"]
    assert found[0].evidence.grid is not None and found[0].evidence.digits is None
    assert mixture.SubsampledGaussian.method.startswith("Poisson-subsampled Gaussian")


def test_irrational_noise_scale_is_enclosed_not_rounded():
    """sigma = sqrt(2): the distance 1/sqrt(2) enters as a certified enclosure; claims 1e-6 relative either
    side of the quadrature of the two densities are decided both ways."""
    from sympy import sqrt
    with mpmath.workdps(40):
        q, d = mpmath.mpf(1) / 100, 1 / mpmath.sqrt(2)
        mix = lambda x: (1 - q) * mpmath.npdf(x) + q * mpmath.npdf(x, d)  # noqa: E731
        cut = (mpmath.log((mpmath.e - (1 - q)) / q) + d * d / 2) / d
        reference = mpmath.quad(lambda x: mix(x) - mpmath.e * mpmath.npdf(x), [cut, cut + 4, cut + 12, mpmath.inf])
    above, below = (Rational(int(reference * 10 ** 30 * f), 10 ** 30) for f in (1 + 1e-6, 1 - 1e-6))
    spec = dp.spec(_step, universe=ADD_REMOVE, grid={SIGMA: [sqrt(2)]},
                   claims=[dp.profile(at=[1], delta=above, id="above"), dp.profile(at=[1], delta=below, id="below")])
    assert [p.status.value for p in dp.check(spec)] == ["verified", "refuted"]


@pytest.mark.parametrize("added", [True, False])
def test_moment_bound_lies_above_the_certified_value(added):
    value = mellin.certified_delta(Q, D, 1000, Fraction(1), added)
    for a in (2, 4, 8):
        assert mellin.chernoff(Q, D, 1000, Fraction(1), added, Fraction(a)) >= value.upper


def test_far_below_pair_skipped_and_verdict_unchanged():
    """T = 100, eps = 1: the removed direction's moment bound (8e-14) is far below the added one's 6.67e-7:
    it is certified as [0, bound] without its Mellin inversion; the claims are decided as before."""
    claims = [dp.profile(at=[1], delta=Rational(668, 10 ** 9), times=100, id="above"),
              dp.profile(at=[1], delta=Rational(667, 10 ** 9), times=100, id="below")]
    spec = dp.spec(_step, universe=ADD_REMOVE, grid={SIGMA: [1]}, claims=claims)
    found = dp.check(spec)
    assert [p.status.value for p in found] == ["verified", "refuted"]
    assert found[0].evidence.digits >= mixture.CERTIFIED_DIGITS


def test_refinement_beyond_the_budget_keeps_the_certified_ball(monkeypatch):
    """T = 100: a claim inside the first ball asks for twice the digits, beyond the node budget (lowered
    here to 200 nodes): the route keeps its first ball (unknown, the claim inside it), never falls back to
    the wider grid."""
    monkeypatch.setattr(mellin, "MAX_NODES", 200)
    value = mellin.certified_delta(Q, D, 100, Fraction(1), True, mixture.CERTIFIED_DIGITS)
    middle = value.lower + (value.upper - value.lower) / 2
    spec = dp.spec(_step, universe=ADD_REMOVE, grid={SIGMA: [1]},
                   claims=[dp.profile(at=[1], delta=Rational(middle.numerator, middle.denominator), times=100)])
    point = dp.check(spec)[0]
    assert point.status.value == "unknown" and point.evidence.grid is None
    assert point.evidence.digits >= mixture.CERTIFIED_DIGITS


@pytest.mark.parametrize("q,d,times,eps", [(Fraction(1, 10), Fraction(2), 100, Fraction(3)),
                                           (Fraction(1, 2), Fraction(1, 4), 50, Fraction(1, 4)),
                                           (Fraction(1, 100), Fraction(1), 1000, Fraction(6))])
def test_other_rates_and_distances_inside_the_grid_bracket(q, d, times, eps, monkeypatch):
    """Away from the DP-SGD example (a saddle near a = 1 made the planner fail with a ValueError before: it
    must plan or answer Unreached, never raise anything else); delta down to 1.6e-19.  The reference grid
    bracket is composed beyond the checker's grid budgets (a test's oracle, not a route: budgets raised)."""
    from dpverify.engine.pld import budget as pld_budget
    monkeypatch.setattr(pld_budget, "FACTOR", 1000.0)
    both = [mellin.certified_delta(q, d, times, eps, added, 8) for added in (True, False)]
    top = max(both, key=lambda c: c.upper)
    ctx = IntervalBackend(20).ctx
    h = ctx.mpf(1) / 500
    found = compose(one_step_tight(ctx, ctx.mpf(q.numerator) / q.denominator, ctx.mpf(d.numerator) / d.denominator,
                                   h, 0.05, 6.0), times, h)
    bounds = subsampled_bounds(ctx, found, ctx.mpf(eps.numerator) / eps.denominator)
    assert float(bounds.lower.a) <= float(top.lower) <= float(top.upper) <= float(bounds.upper.b)
    assert top.digits >= 8
