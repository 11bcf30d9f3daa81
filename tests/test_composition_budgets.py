"""Compositions far out of reach end ``unknown`` at once, by counted budgets estimated before the work
(issue 21): the exact lattice power, the multinomial terms, the integer products of the discretised
distributions, the subsampled Gaussian's grid and the subsampled Laplace lattice.  Each case ran for
minutes (or crashed) before; here the verdict, the budget named in the reason and the work actually done
(counted, never timed) are asserted."""
from __future__ import annotations

import mpmath
import pytest
from sympy import Rational as R

import dpverify as dp
from dpverify.engine.pld import lattice as pld, atoms as pld_atoms, bounds as pld_bounds, gaussian_mixture as pld_gaussian_mixture, gaussian_tight as pld_gaussian_tight

BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)
ADD = dp.universe([1], n=range(0, 2), neighbours=dp.ADD_REMOVE)


@pytest.fixture
def counted(monkeypatch):
    """Counts of the expensive steps: products of lattice terms, multinomial terms built, integer products of
    discretised distributions, certified Phi evaluations of the subsampled Gaussian grid."""
    counts = {"lattice": 0, "terms": 0, "products": 0, "phi": 0}
    multiply, terms, product = pld._multiply, pld_atoms.composed_terms, pld_bounds.product

    def _multiply(a, b):
        counts["lattice"] += len(a) * len(b)
        return multiply(a, b)

    def _terms(parts, backend):
        counts["terms"] += pld_atoms.count(parts)
        return terms(parts, backend)

    def _product(parts, up):
        counts["products"] += 1
        return product(parts, up)

    def _phi(module):
        original = module.phi

        def phi(ctx, x):
            counts["phi"] += 1
            return original(ctx, x)
        monkeypatch.setattr(module, "phi", phi)
    monkeypatch.setattr(pld, "_multiply", _multiply)
    monkeypatch.setattr(pld_atoms, "composed_terms", _terms)
    monkeypatch.setattr("dpverify.checks.composition.routes.composed_terms", _terms)
    monkeypatch.setattr(pld_bounds, "product", _product)
    _phi(pld_gaussian_mixture)
    _phi(pld_gaussian_tight)
    return counts


def _rr(data):
    return dp.randomized_response(data[0], R(1, 2))


def _poisson_rr(data):
    kept = [r for r in data if dp.bernoulli(R(1, 10))]
    return dp.randomized_response(1 if kept else 0, R(1, 2))


def _laplace(data):
    return dp.laplace(data[0], 1)


def _subsampled_gaussian(data):
    kept = [r for r in data if dp.bernoulli(R(1, 2))]
    return dp.gaussian(sum(kept), R(1, 10))


def _subsampled_laplace(data):
    kept = [r for r in data if dp.bernoulli(R(1, 10))]
    return dp.laplace(sum(kept), 1)


def _one(spec):
    (result,) = dp.check(spec)
    return result


@pytest.mark.parametrize("times", [10 ** 6, 10 ** 9, 10 ** 30])
def test_randomized_response_composed_beyond_every_budget_is_unknown_before_any_product(counted, times):
    """Before: the lattice power ran for minutes (T = 10^4 and up).  Now every route is refused on its estimate."""
    result = _one(dp.spec(_rr, universe=BIT, claims=[dp.profile(at=[times // 20], delta=R(1, 10), times=times)]))
    assert result.status.value == "unknown", result.message
    assert "exact lattice" in result.message and "multinomial" in result.message and "--max-work" in result.message
    assert counted["lattice"] == 0 and counted["terms"] == 0 and counted["products"] == 0


def test_the_lattice_estimate_bounds_the_products_it_counts(counted):
    """power_work is an upper estimate: the products of T = 1000 are at most it (and it binds T = 10^6)."""
    terms = {(1, 1): 1, (-1, 0): 1}
    pld.power(terms, 1000)
    assert 0 < counted["lattice"] <= pld.power_work(terms, 1000) <= pld.MAX_WORK
    assert pld.power_work(terms, 10 ** 6) > pld.MAX_WORK


def test_the_budgets_scale_with_max_work(counted):
    """--max-work scales the composition budgets: a hundredth of the default refuses T = 1000 too."""
    spec = dp.spec(_rr, universe=BIT, claims=[dp.profile(at=[50], delta=R(1, 10), times=1000)])
    from dpverify.checks import Workspace, check_point
    from dpverify.options import Options
    ws = Workspace(Options.validated(50, max_work=500_000))
    (small,) = [check_point(spec, claim, point, ws) for claim in spec.claims for point in spec.points_for(claim)]
    assert small.status.value == "unknown" and "--max-work" in small.message, small.message
    assert counted["lattice"] == 0
    (default,) = dp.check(spec)
    assert default.status.value == "refuted", default.message


def _binomial_delta(p_up: mpmath.mpf, l_up, l_down, times: int, eps) -> mpmath.mpf:
    """delta_T(eps) of a two-loss pair (P-mass p_up at loss l_up, the rest at l_down), summed in mpmath."""
    total = mpmath.mpf(0)
    for k in range(times + 1):
        loss = k * l_up + (times - k) * l_down
        if loss > eps:
            total += mpmath.binomial(times, k) * p_up ** k * (1 - p_up) ** (times - k) * (1 - mpmath.exp(eps - loss))
    return total


def test_poisson_randomized_response_at_ten_thousand_runs_is_decided_and_right(counted):
    """Before: the multinomial's exact coefficients took minutes at T = 10^4.  Now its 10,001 terms per pair
    are decided, and agree with a binomial sum in mpmath."""
    times, at = 10 ** 4, 50
    result = _one(dp.spec(_poisson_rr, universe=ADD, claims=[dp.profile(at=[at], delta=R(1, 10), times=times)]))
    assert result.status.value == "verified", result.message
    assert counted["terms"] <= 2 * (times + 1) * 3  # the table, a curve and no confirmation: a few passes at most
    with mpmath.workdps(40):
        q, e = mpmath.mpf(1) / 10, mpmath.exp(mpmath.mpf(1) / 2)
        keep_one = e / (1 + e)  # P(output 1 | kept); P(output 1 | not kept) = 1/(1 + e)
        a = q * keep_one + (1 - q) / (1 + e)  # the mixture's mass on output 1; Q's is 1/(1 + e)
        b = 1 / (1 + e)
        l1, l0 = mpmath.log(a / b), mpmath.log((1 - a) / (1 - b))
        exact = max(_binomial_delta(a, l1, l0, times, at), _binomial_delta(b, -l1, -l0, times, at))
    row = result.evidence.rows[0]
    achieved = float(row.achieved or row.achieved_upper)
    assert achieved == pytest.approx(float(exact), rel=1e-9)


def test_a_billion_laplace_runs_are_refused_by_their_grid_points_not_a_memory_error(counted):
    """Before: a list of 10^9 distances (MemoryError).  Now T runs of one distance are one count."""
    result = _one(dp.spec(_laplace, universe=BIT, claims=[dp.profile(at=[10 ** 5], delta=R(1, 10), times=10 ** 9)]))
    assert result.status.value == "unknown" and "grid points" in result.message and "--max-work" in result.message
    assert counted["products"] == 0


def test_laplace_runs_beyond_the_products_budget_are_refused_by_its_estimate(counted):
    """T = 1000 took 26 s of integer products (and stays decided: test_laplace_composition); T = 2000 is refused
    on the estimate of its digit operations, before any product."""
    assert 2 * pld_bounds.composition_cost([(33, 2000)]) > pld_bounds.MAX_PRODUCT_WORK
    result = _one(dp.spec(_laplace, universe=BIT, claims=[dp.profile(at=[60], delta=R(1, 10), times=2000)]))
    assert result.status.value == "unknown" and "digit operations" in result.message, result.message
    assert counted["products"] == 0


def test_a_laplace_profile_whose_delta_is_exactly_zero_is_verified(counted):
    """delta_T(eps) = 0 exactly for eps >= T t (every run's loss is at most t): the discretised upper bound leaks
    its trimmed tail, so only this exact argument verifies delta = 0."""
    result = _one(dp.spec(_laplace, universe=BIT, claims=[dp.profile(at=[100], delta=0, times=100)]))
    assert result.status.value == "verified", result.message
    below = _one(dp.spec(_laplace, universe=BIT, claims=[dp.profile(at=[99], delta=0, times=100)]))
    assert below.status.value != "verified", below.message  # delta_100(99) = 2^-100 (1 - 1/e) > 0: never verified


def test_subsampled_gaussian_at_half_rate_and_tiny_sigma_is_refused_before_its_grid(counted):
    """Before: q = 1/2, sigma = 1/10, T = 100 ran for minutes (certified Phi at 40,000 boundaries, then a
    5.5-million-coefficient product).  Now the grid's span is checked on the float boundaries first."""
    result = _one(dp.spec(_subsampled_gaussian, universe=ADD,
                          claims=[dp.profile(at=[100], delta=R(1, 1000), times=100)]))
    assert result.status.value == "unknown" and "coefficients" in result.message, result.message
    assert counted["phi"] == 0 and counted["products"] == 0


@pytest.mark.parametrize("times", [10 ** 6, 10 ** 30])
def test_subsampled_laplace_beyond_its_lattice_is_unknown_not_a_crash(counted, times):
    """Before: an OverflowError (zero lattice steps per run).  Now the lattice's budget is named."""
    result = _one(dp.spec(_subsampled_laplace, universe=ADD,
                          claims=[dp.profile(at=[1000], delta=R(1, 1000), times=times)]))
    assert result.status.value == "unknown" and "coefficients" in result.message, result.message
    assert counted["products"] == 0


# --- the Mellin route of the Poisson-subsampled Gaussian (engine/pld/gaussian_mellin.py) -----------------------

@pytest.fixture
def evaluations(monkeypatch):
    """Every Mellin budget made during the test (one per route, one per confirmation): their counted integrand
    evaluations (charged whether computed or remembered from an earlier test: independent of the order)."""
    from dpverify.engine.pld import gaussian_mellin as mellin
    made = []
    init = mellin.Budget.__init__

    def _init(self, limit=None):
        init(self, limit)
        made.append(self)
    monkeypatch.setattr(mellin.Budget, "__init__", _init)
    return made


def _dpsgd(rate, sigma):
    def step(data):
        kept = [r for r in data if dp.bernoulli(rate)]
        return dp.gaussian(sum(kept), sigma)
    return step


def _spent(budgets) -> int:
    return max((b.spent for b in budgets), default=0)


def test_dpsgd_at_10_to_the_30_steps_is_refused_by_its_plan(counted, evaluations):
    """Before: over a minute (the moment bound m(a)^T turned into a Fraction of 2^(10^28); then ~10^28 bits of
    working precision planned).  Now the plan's node count refuses it, then the grid's coefficients."""
    from dpverify.engine.pld import gaussian_mellin as mellin
    result = _one(dp.spec(_dpsgd(R(1, 100), 1), universe=ADD,
                          claims=[dp.profile(at=[1], delta=R(1, 10), times=10 ** 30)]))
    assert result.status.value == "unknown", result.message
    assert "nodes of the trapezoid sum" in result.message and "coefficients" in result.message
    assert "--max-work" in result.message
    assert _spent(evaluations) <= 20 * (mellin.EVAL_LIMIT + mellin.OVERSHOOT)
    assert counted["phi"] == 0 and counted["products"] == 0


def test_a_tiny_rate_and_noise_scale_is_refused_by_the_planners_first_moment(counted, evaluations):
    """q = 10^-4, sigma = 1/1000 (D = 1000), T = 10.  Before: over a minute (183 planner moments of up to 200,000
    evaluations each, every one a non-finite ball).  Now each integral is capped at EVAL_LIMIT evaluations and the
    first non-finite planner moment ends the route; the grid is refused on its float boundaries."""
    from dpverify.engine.pld import gaussian_mellin as mellin
    result = _one(dp.spec(_dpsgd(R(1, 10 ** 4), R(1, 1000)), universe=ADD,
                          claims=[dp.profile(at=[1], delta=R(1, 10), times=10)]))
    assert result.status.value == "unknown", result.message
    assert "was not established by the planner's integral" in result.message and "--max-work" in result.message
    assert _spent(evaluations) <= 4 * (mellin.EVAL_LIMIT + mellin.OVERSHOOT)
    assert counted["phi"] == 0 and counted["products"] == 0


def test_gdp_of_dpsgd_at_a_hundred_steps_ends_on_the_evaluation_budget(counted, evaluations):
    """Before: over a minute (every eps of the grid planned and summed; T = 10 took 42 s to end unknown).  Now the
    route's integrand evaluations are counted against MAX_EVALUATIONS: the claim ends unknown naming it."""
    from dpverify.engine.pld import gaussian_mellin as mellin
    result = _one(dp.spec(_dpsgd(R(1, 100), 1), universe=ADD, claims=[dp.gdp(1, times=100)]))
    assert result.status.value == "unknown", result.message
    assert "integrand evaluations" in result.message and "--max-work" in result.message
    assert 0 < _spent(evaluations) <= mellin.MAX_EVALUATIONS
    assert counted["products"] == 0


def test_half_rate_and_huge_noise_at_a_billion_steps_is_refused_by_its_envelope(counted, evaluations):
    """q = 1/2, sigma = 10^6, T = 10^9 took 24 s: the envelope of the omitted nodes walked in tiny steps (D = 10^-6
    makes |m(a + it)| barely below 1).  Now its points and the route's evaluations are counted."""
    from dpverify.engine.pld import gaussian_mellin as mellin
    result = _one(dp.spec(_dpsgd(R(1, 2), 10 ** 6), universe=ADD,
                          claims=[dp.profile(at=[1], delta=R(1, 10), times=10 ** 9)]))
    assert result.status.value == "unknown", result.message
    assert "the Mellin route" in result.message and "--max-work" in result.message
    assert _spent(evaluations) <= mellin.MAX_EVALUATIONS
    assert counted["phi"] == 0 and counted["products"] == 0


def test_the_mellin_budget_is_never_exceeded_and_scales(evaluations):
    """A budget admits an integral only when its cap fits: a tiny budget refuses T = 100 at once, naming itself."""
    from fractions import Fraction

    from dpverify.engine.pld import gaussian_mellin as mellin
    small = mellin.Budget(3 * (mellin.EVAL_LIMIT + mellin.OVERSHOOT))
    with pytest.raises(mellin.Unreached, match="integrand evaluations"):
        mellin.certified_delta(Fraction(1, 100), Fraction(1), 100, Fraction(1), True, 8, budget=small)
    assert 0 < small.spent <= small.limit
