"""renyi(alpha, eps) of discrete mechanisms proved for every eps, or refuted at a counterexample eps off the
grid (dpverify.checks.divergence.discrete_proof): randomized response and the geometric mechanism, whose
D_alpha is checked against an independent mpmath sum; claims that hold on the grid only are refuted with a
witness re-confirmed there; claims outside the algebra keep their grid verdict with the reason."""
from __future__ import annotations

import mpmath
import pytest
import sympy
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)
ONE_BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)


def rr(data, eps):
    return dp.randomized_response(data[0], eps)


def geometric(data, eps):
    return dp.geometric(sum(data), dp.exp(eps))


def check(program, claim, grid):
    (result,) = dp.check(dp.spec(program, universe=ONE_BIT, grid={eps: grid}, claims=[claim]))
    return result


def rr_divergence(alpha: int, e: mpmath.mpf) -> mpmath.mpf:
    """D_alpha of randomized response: the two-output sum in mpmath."""
    p = mpmath.exp(e) / (1 + mpmath.exp(e))
    return mpmath.log(p ** alpha * (1 - p) ** (1 - alpha) + (1 - p) ** alpha * p ** (1 - alpha)) / (alpha - 1)


def geometric_divergence(alpha: int, e: mpmath.mpf) -> mpmath.mpf:
    """D_alpha of Z + 1 against Z, Z two-sided geometric (a = e^eps): the sum over k in [-400, 400]."""
    a = mpmath.exp(e)

    def pmf(k):
        return (a - 1) / (a + 1) * a ** (-abs(k))
    total = mpmath.fsum(pmf(k - 1) ** alpha * pmf(k) ** (1 - alpha) for k in range(-400, 401))
    return mpmath.log(total) / (alpha - 1)


@pytest.mark.parametrize("program", [rr, geometric])
@pytest.mark.parametrize("alpha", [2, 3, 5])
def test_the_bound_d_alpha_at_most_eps_is_proved(program, alpha):
    result = check(program, dp.renyi(alpha, eps), [Rational(1, 2)])
    assert result.status.value == "proved" and "exact real-root isolation" in result.message


def test_geometric_d2_is_randomized_response_s_closed_form():
    with mpmath.workdps(40):
        for e in (mpmath.mpf("0.3"), mpmath.mpf(2)):
            assert abs(geometric_divergence(2, e) - mpmath.log(2 * mpmath.cosh(e) - 1)) < 1e-30
            assert abs(rr_divergence(2, e) - mpmath.log(2 * mpmath.cosh(e) - 1)) < 1e-30
    result = check(geometric, dp.renyi(2, sympy.log(2 * sympy.cosh(eps) - 1)), [1])
    assert result.status.value == "proved"


@pytest.mark.parametrize("program, reference", [(rr, rr_divergence), (geometric, geometric_divergence)])
def test_a_bound_true_on_the_grid_only_is_refuted_off_it(program, reference):
    """D_2 <= eps - ln(5/4) holds at eps = 1/2 and 1 but fails for small and large eps: the proof finds an
    exact counterexample eps* = ln w*, and the witness's divergence there agrees with mpmath."""
    claim = dp.renyi(2, eps - sympy.log(Rational(5, 4)))
    (result,) = dp.check(dp.spec(program, universe=ONE_BIT, grid={eps: [Rational(1, 2), 1]}, claims=[claim]),
                         proofs=False)[:1]
    assert result.status.value == "verified"  # the grid alone cannot see it
    result = check(program, claim, [Rational(1, 2)])
    assert result.status.value == "refuted" and "off the grid" in result.message
    witness = result.witness
    assert witness.output.startswith("order alpha = 2 at eps = log(")
    at = sympy.sympify(witness.output.split("at eps = ")[1].split(" = ")[0])
    with mpmath.workdps(40):
        e = mpmath.mpf(sympy.N(at, 45))
        exact = reference(2, e)
        assert exact > e - mpmath.log(mpmath.mpf(5) / 4)
        assert abs(mpmath.mpf(witness.p) - exact) < 1e-30


def test_orders_and_bounds_outside_the_algebra_keep_the_grid_verdict():
    fractional = check(rr, dp.renyi(Rational(3, 2), eps), [1])
    assert fractional.status.value == "verified" and "integer orders" in fractional.message
    squared = check(rr, dp.renyi(2, eps ** 2), [1])
    assert squared.status.value == "verified" and "no proof for all eps" in squared.message
