"""The Poisson-subsampled Gaussian (one DP-SGD step) composed T times: certified bounds, the profile claim.

References are computed independently of dpverify's code, by mpmath at 50 digits: for T = 1 the
quadrature of the hockey-stick divergence of the two densities (both directions), for T = 2 the
quadrature over the first step's output of the one-step divergence at eps - L(x), in closed form
with mpmath's ncdf.
"""
from __future__ import annotations

import mpmath
import pytest
from sympy import Rational

import dpverify as dp
from dpverify.engine.backend import IntervalBackend
from dpverify.engine.pld_gaussian_mixture import compose, one_step, subsampled_bounds
from dpverify.errors import SpecError

RATE, DISTANCE = mpmath.mpf(1) / 100, mpmath.mpf(1)


def _densities():
    p = lambda x: (1 - RATE) * mpmath.npdf(x) + RATE * mpmath.npdf(x, DISTANCE)  # noqa: E731
    return p, mpmath.npdf


def _one_fold(eps):
    """max over both directions of the integral of (P - e^eps Q)_+, at 50 digits."""
    with mpmath.workdps(50):
        p, q = _densities()
        cuts = [-mpmath.inf, -8, -4, -2, 0, 1, 2, 4, 8, mpmath.inf]
        e = mpmath.exp(eps)
        return max(mpmath.quad(lambda x: max(p(x) - e * q(x), 0), cuts),
                   mpmath.quad(lambda x: max(q(x) - e * p(x), 0), cuts))


def _two_fold(eps):
    """delta_2(eps) = max over directions of E_P[h(eps - L(X))], h the one-step divergence (closed form in
    Phi, exact for every real level), at 50 digits."""
    with mpmath.workdps(50):
        p, q = _densities()

        def cut(level):  # the output where the loss of the first direction is level (None below ln(1 - q))
            excess = mpmath.exp(level) - (1 - RATE)
            return None if excess <= 0 else (mpmath.log(excess / RATE) + DISTANCE ** 2 / 2) / DISTANCE

        def added(level):  # E_P[(1 - e^(level - L))_+], P the mixture: the outputs above cut(level)
            x = cut(level)
            if x is None:
                return 1 - mpmath.exp(level)
            above = lambda m: 1 - mpmath.ncdf(x - m)  # noqa: E731
            return (1 - RATE) * above(0) + RATE * above(DISTANCE) - mpmath.exp(level) * above(0)

        def removed(level):  # E_Q[(1 - e^(level + L))_+]: the outputs below cut(-level)
            x = cut(-level)
            if x is None:
                return mpmath.mpf(0)
            return mpmath.ncdf(x) - mpmath.exp(level) * ((1 - RATE) * mpmath.ncdf(x) + RATE * mpmath.ncdf(x - DISTANCE))

        loss = lambda x: mpmath.log(p(x) / q(x))  # noqa: E731
        cuts = [-mpmath.inf, -8, -4, -2, 0, 1, 2, 4, 8, mpmath.inf]
        return max(mpmath.quad(lambda x: p(x) * added(eps - loss(x)), cuts),
                   mpmath.quad(lambda x: q(x) * removed(eps + loss(x)), cuts))


def _bracket(times, grid, eps):
    ctx = IntervalBackend(20).ctx
    h = ctx.mpf(1) / grid[0]
    found = compose(one_step(ctx, ctx.mpf(RATE), ctx.mpf(DISTANCE), h, *grid[1:]), times, h)
    bounds = subsampled_bounds(ctx, found, ctx.mpf(eps))
    return mpmath.mpf(bounds.lower.a), mpmath.mpf(bounds.upper.b)


@pytest.mark.parametrize("times,eps", [(1, "0.05"), (1, "0.5"), (2, "0"), (2, "0.25")])
def test_bracket_contains_the_integral_and_narrows(times, eps):
    reference = (_one_fold if times == 1 else _two_fold)(mpmath.mpf(eps))
    widths = []
    for grid in ((500, 0.05, 6.0), (4000, 0.01, 8.0)):
        lower, upper = _bracket(times, grid, eps)
        assert lower <= reference <= upper, (grid, lower, reference, upper)
        widths.append(upper - lower)
    assert widths[1] < widths[0] / 3


def _dpsgd(rate):
    def step(data, sigma):
        kept = [r for r in data if dp.bernoulli(rate)]
        return dp.gaussian(sum(kept), sigma)
    return step


SIGMA = dp.symbol("sigma", positive=True)
ADD_REMOVE = dp.universe([1], n=range(0, 2), neighbours=dp.ADD_REMOVE)


def _status(spec):
    return [(c.id, p.status.value) for c, p in zip(spec.claims, dp.check(spec))]


def test_claims_verified_and_mutants_refuted():
    claims = [dp.profile(at=[Rational(1, 2)], delta=Rational(1, 10 ** 6), id="above"),
              dp.profile(at=[Rational(1, 2)], delta=Rational(1, 10 ** 7), id="below")]
    spec = dp.spec(_dpsgd(Rational(1, 100)), universe=ADD_REMOVE, grid={SIGMA: [1]}, claims=claims)
    assert _status(spec) == [("above", "verified"), ("below", "refuted")]
    point = dp.check(spec)[1]
    assert point.witness is not None and "confirmed" in point.message
    # the mutant: ten times the rate under the same claim (its delta(1/2) is about 2e-4)
    mutant = dp.spec(_dpsgd(Rational(1, 10)), universe=ADD_REMOVE, grid={SIGMA: [1]}, claims=claims[:1])
    assert _status(mutant) == [("above", "refuted")]
    # less noise: the same rate with sigma = 1/2 leaks more than the claim
    louder = dp.spec(_dpsgd(Rational(1, 100)), universe=ADD_REMOVE, grid={SIGMA: [Rational(1, 2)]}, claims=claims[:1])
    assert _status(louder) == [("above", "refuted")]


def test_other_mixtures_are_unknown_with_the_reason():
    def two_scales(data, sigma):
        kept = [r for r in data if dp.bernoulli(Rational(1, 2))]
        return dp.gaussian(0, sigma) if kept else dp.gaussian(0, 2 * sigma)
    spec = dp.spec(two_scales, universe=ADD_REMOVE, grid={SIGMA: [1]},
                   claims=[dp.profile(at=[1], delta=Rational(1, 10))])
    point = dp.check(spec)[0]
    assert point.status.value == "unknown"
    assert "subsampling" in point.message


def test_invalid_declaration_names_the_fix():
    with pytest.raises(SpecError) as info:
        dp.spec(_dpsgd(Rational(1, 100)), universe=ADD_REMOVE, grid={SIGMA: [1]},
                claims=[dp.profile(at=[Rational(1, 2)], delta=2, times=10)])
    assert "between 0 and 1" in str(info.value) or "[0, 1]" in str(info.value)
