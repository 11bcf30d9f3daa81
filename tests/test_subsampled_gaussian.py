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
from dpverify.engine.program.backend import IntervalBackend
from dpverify.engine.pld.gaussian_mixture import compose, one_step, subsampled_bounds
from dpverify.engine.pld.gaussian_tight import one_step_tight
from dpverify.errors import SpecError
from dpverify.report.section_parts import witness_items

RATE, DISTANCE = mpmath.mpf(1) / 100, mpmath.mpf(1)


def _densities():
    p = lambda x: (1 - RATE) * mpmath.npdf(x) + RATE * mpmath.npdf(x, DISTANCE)  # noqa: E731
    return p, mpmath.npdf


def _cut(level):
    """The output where the first direction's loss ln(P/Q) equals ``level`` (None below ln(1 - q))."""
    excess = mpmath.exp(level) - (1 - RATE)
    return None if excess <= 0 else (mpmath.log(excess / RATE) + DISTANCE ** 2 / 2) / DISTANCE


CUTS = [-mpmath.inf, -8, -4, -2, 0, 1, 2, 4, 8, mpmath.inf]


def _pieces(*kinks):
    """CUTS with the integrand's kinks added (the quadrature is only accurate between kinks)."""
    return sorted(set(CUTS) | {k for k in kinks if k is not None})


def _one_fold(eps):
    """max over both directions of the integral of (P - e^eps Q)_+, at 50 digits: P - e^eps Q over the
    outputs where it is positive (x > cut(eps), resp. x < cut(-eps)), by quadrature."""
    with mpmath.workdps(50):
        p, q = _densities()
        e = mpmath.exp(eps)
        up, down = _cut(eps), _cut(-eps)
        added = mpmath.quad(lambda x: p(x) - e * q(x), [k for k in _pieces(up) if k >= up])
        removed = 0 if down is None else mpmath.quad(lambda x: q(x) - e * p(x), [k for k in _pieces(down) if k <= down])
        return max(added, removed)


def _two_fold(eps):
    """delta_2(eps) = max over directions of E_P[h(eps - L(X))], h the one-step divergence (closed form in
    Phi, exact for every real level), at 50 digits."""
    with mpmath.workdps(50):
        p, q = _densities()

        def added(level):  # E_P[(1 - e^(level - L))_+], P the mixture: the outputs above cut(level)
            x = _cut(level)
            if x is None:
                return 1 - mpmath.exp(level)
            above = lambda m: 1 - mpmath.ncdf(x - m)  # noqa: E731
            return (1 - RATE) * above(0) + RATE * above(DISTANCE) - mpmath.exp(level) * above(0)

        def removed(level):  # E_Q[(1 - e^(level + L))_+]: the outputs below cut(-level)
            x = _cut(-level)
            if x is None:
                return mpmath.mpf(0)
            return mpmath.ncdf(x) - mpmath.exp(level) * ((1 - RATE) * mpmath.ncdf(x) + RATE * mpmath.ncdf(x - DISTANCE))

        loss = lambda x: mpmath.log(p(x) / q(x))  # noqa: E731
        edge = mpmath.log(1 - RATE)  # where the inner divergences change form
        return max(mpmath.quad(lambda x: p(x) * added(eps - loss(x)), _pieces(_cut(eps - edge))),
                   mpmath.quad(lambda x: q(x) * removed(eps + loss(x)), _pieces(_cut(-edge - eps))))


def _bracket(times, grid, eps, step=one_step):
    ctx = IntervalBackend(20).ctx
    h = ctx.mpf(1) / grid[0]
    found = compose(step(ctx, ctx.mpf(RATE), ctx.mpf(DISTANCE), h, *grid[1:]), times, h)
    bounds = subsampled_bounds(ctx, found, ctx.mpf(eps))
    return mpmath.mpf(bounds.lower.a), mpmath.mpf(bounds.upper.b)


@pytest.mark.parametrize("step", [one_step, one_step_tight])
@pytest.mark.parametrize("times,eps", [(1, "0.05"), (1, "0.5"), (2, "0"), (2, "0.25")])
def test_bracket_contains_the_integral_and_narrows(times, eps, step):
    reference = (_one_fold if times == 1 else _two_fold)(mpmath.mpf(eps))
    widths = []
    for grid in ((500, 0.05, 6.0), (2000, 0.02, 7.0)):
        lower, upper = _bracket(times, grid, eps, step)
        assert lower <= reference <= upper, (grid, lower, reference, upper)
        widths.append(upper - lower)
    assert widths[1] < widths[0] / 2


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


def test_undecided_claims_are_decided_on_the_finer_grid(monkeypatch):
    """delta(1/2) = 2.2146e-7 (the quadrature); the first grid's bracket [2.2032e-7, 2.2240e-7] holds neither
    2.22e-7 nor 2.21e-7, the refined one [2.2107e-7, 2.2193e-7] decides both.  (The grid route only: the
    certified closed form / Mellin route is switched off, as when it is beyond its budget.)"""
    from dpverify.checks.composition import mixture
    from dpverify.engine.pld.gaussian_mellin import Unreached

    def unreached(*args, **kwargs):
        raise Unreached("switched off")
    monkeypatch.setattr(mixture, "certified_delta", unreached)
    claims = [dp.profile(at=[Rational(1, 2)], delta=Rational(222, 10 ** 9), id="above"),
              dp.profile(at=[Rational(1, 2)], delta=Rational(221, 10 ** 9), id="below")]
    spec = dp.spec(_dpsgd(Rational(1, 100)), universe=ADD_REMOVE, grid={SIGMA: [1]}, claims=claims)
    found = dp.check(spec)
    assert [p.status.value for p in found] == ["verified", "refuted"]
    assert all(p.evidence.grid == 2000 for p in found)


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


# --- Gaussian DP -------------------------------------------------------------------------------------


def _rr_mu(e0):
    """The least mu for which randomized response at e0 is mu-GDP, independently: bisection on
    max over a fine eps grid of delta_RR(eps) - G_mu(eps), delta_RR(eps) = (e^e0 - e^eps)/(1 + e^e0)."""
    with mpmath.workdps(30):
        e0 = mpmath.mpf(e0)
        grid = [e0 * k / 400 for k in range(401)]

        def excess(mu):
            g = lambda e: mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)  # noqa: E731
            return max((mpmath.exp(e0) - mpmath.exp(e)) / (1 + mpmath.exp(e0)) - g(e) for e in grid)
        low, high = mpmath.mpf("0.01"), mpmath.mpf(10)
        for _ in range(60):
            mid = (low + high) / 2
            low, high = (low, mid) if excess(mid) <= 0 else (mid, high)
        return high


def test_gdp_of_randomized_response_against_the_closed_form():
    e0 = Rational(1, 2)
    mu = _rr_mu(0.5)
    above, below = (Rational(int(mu * 10 ** 6 * f), 10 ** 6) for f in (1.01, 0.99))
    eps = dp.symbol("eps", positive=True)
    spec = dp.spec(lambda data, eps: dp.randomized_response(data[0], eps),
                   universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE), grid={eps: [e0]},
                   claims=[dp.gdp(above, id="above"), dp.gdp(below, id="below")])
    assert _status(spec) == [("above", "verified"), ("below", "refuted")]
    refuted = dp.check(spec)[1]
    assert refuted.witness is not None and "confirmed" in refuted.message
    labels = dict(witness_items(refuted.witness))  # the report's witness: what the two numbers are
    assert "P(o | X)" not in labels and labels["G_μ(ε), the Gaussian bound"] == refuted.witness.p_prime


def test_gdp_of_gaussians_exact_and_composed():
    def count(data, sigma):
        return dp.gaussian(sum(data), sigma)
    spec = dp.spec(count, universe=dp.universe([0, 1], n=range(1, 3), neighbours=dp.ADD_REMOVE),
                   grid={SIGMA: [Rational(3, 2)]},
                   claims=[dp.gdp(1 / SIGMA, id="exact"), dp.gdp(Rational(99, 100) / SIGMA, id="one_percent_low"),
                           dp.gdp(3 / SIGMA, times=9, id="composed"), dp.gdp(2 / SIGMA, times=9, id="no_sqrt")])
    assert _status(spec) == [("exact", "proved"), ("one_percent_low", "refuted"), ("composed", "proved"),
                             ("no_sqrt", "refuted")]


def test_gdp_of_the_subsampled_gaussian_is_not_claimed_without_a_certificate():
    """One subsampled step's delta(eps) decays like q Phi(-eps): it is not 1/10-GDP (refuted where G_(1/10)
    is far below the certified lower bound); at mu = 1 the upper bound's leaked tails keep it unknown."""
    spec = dp.spec(_dpsgd(Rational(1, 100)), universe=ADD_REMOVE, grid={SIGMA: [1]},
                   claims=[dp.gdp(1), dp.gdp(Rational(1, 10))])
    found = dp.check(spec)
    assert [p.status.value for p in found] == ["unknown", "refuted"]
    assert "staircase" in found[0].message and found[1].witness is not None


@pytest.mark.parametrize("call,fix", [(lambda: dp.gdp(0), "positive mu"), (lambda: dp.gdp(1, times=0), "times=100"),
                                      (lambda: dp.gdp(0.5), "Rational")])
def test_invalid_gdp_names_the_fix(call, fix):
    with pytest.raises(SpecError) as info:
        call()
    assert fix in str(info.value)


def test_the_rate_is_kept_exact():
    """The Gaussian route reads the rate exactly: the float 0.01's binary value, which nsimplify read as
    1/100 (a delta computed for 1/100 is below the float mechanism's: an accountant's answer between the
    two would have been verified)."""
    from fractions import Fraction

    import sympy

    from dpverify.checks.composition.mixture import _centres
    from dpverify.checks.composition.routes import two_point_mixture
    from dpverify.engine.continuous.noisy import FULL, Density, Factor, Noise
    keep = sympy.Rational(Fraction(0.01).numerator, Fraction(0.01).denominator)

    def plain(centre):
        return Factor(Noise("gaussian", Fraction(centre), Fraction(1)), Fraction(0), FULL)
    single = {0: Density([(sympy.Integer(1), (plain(0),))])}
    mixed = {0: Density([(1 - keep, (plain(0),)), (keep, (plain(1),))])}
    rate, distance, added = two_point_mixture(mixed, single, _centres)
    assert rate == keep and rate != sympy.Rational(1, 100) and distance == 1 and added
