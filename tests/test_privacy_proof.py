"""Privacy proved for every eps with z3, and counterexamples off the grid confirmed numerically."""
from fractions import Fraction

import re

import mpmath
import sympy

import dpverify as dp
from dpverify.checks.privacy.level import e_to
from dpverify.engine.program.symbolic import basis, rational_function

from .helpers import eps, rr_spec

BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)


def leaky_rr(data, eps):
    """With probability 1/10 release the bit, otherwise randomized response with eps."""
    if dp.bernoulli(Fraction(1, 10)):
        return data[0]
    return dp.randomized_response(data[0], eps)


def test_a_correct_mechanism_is_proved_for_every_eps() -> None:
    def rr(data, eps):
        return dp.randomized_response(data[0], eps)
    spec = dp.spec(rr, universe=BIT, grid={eps: [1]}, claims=[dp.private(eps)])
    [result] = dp.check(spec)
    assert result.status.value == "proved"
    assert "every eps" in result.message and "no violation" in result.message


def test_a_claim_true_on_the_grid_but_false_for_small_eps_is_refuted() -> None:
    # Loss = ln((1/10 + e^eps) / (9/10)) <= 2 eps exactly when eps >= ln((1 + sqrt(1.36)) / 1.8) ~ 0.185.
    spec = dp.spec(leaky_rr, universe=BIT, grid={eps: [1, 2]}, claims=[dp.private(2 * eps)])
    results = dp.check(spec)
    assert [r.status.value for r in results] == ["refuted", "refuted"]
    message = results[0].message
    assert "holds at this grid point" in message and "found by" in message
    found = float(message.split("eps = ")[1].split(" ")[0])
    assert 0 < found < 0.1856
    assert results[0].witness is not None
    assert "> e^(2*eps) P(o|X') = " in message and "e^eps" not in message  # the claimed bound, by name


def test_grid_failures_still_refute_before_any_proof() -> None:
    spec = dp.spec(leaky_rr, universe=BIT, grid={eps: [Fraction(1, 10)]}, claims=[dp.private(2 * eps)])
    [result] = dp.check(spec)
    assert result.status.value == "refuted" and "found by" not in result.message


def test_rational_function_reading_of_an_exponential_mechanism_weight() -> None:
    weight = sympy.exp(eps / 2) / (sympy.exp(eps / 2) + sympy.exp(-eps / 3) + 1)
    base = basis([weight], [eps])
    assert base.scale[eps] == 6
    num, den = rational_function(weight, base)
    w = base.variables[eps]
    assert sympy.simplify(num.as_expr() / den.as_expr() - w ** 5 / (w ** 5 + w ** 2 + 1)) == 0


def test_a_non_exponential_dependence_is_reported_unknown_not_proved() -> None:
    def odd(data, eps):
        p = 1 / (2 + eps) if data[0] else 1 - 1 / (2 + eps)
        return dp.bernoulli(p)
    spec = dp.spec(odd, universe=BIT, grid={eps: [3]}, claims=[dp.private(eps)])
    [result] = dp.check(spec)
    assert result.status.value == "verified"
    assert "no proof for all eps" in result.message


def test_same_distribution_is_proved_for_every_eps_or_refuted_off_the_grid() -> None:
    def rr(data, eps):
        return dp.randomized_response(data[0], eps)

    def lookalike(data, eps):
        """Keeps the bit with probability (3w + 2)/(4w + 4), w = e^eps: equal to RR only at w = 2."""
        w = dp.exp(eps)
        keep = dp.bernoulli((3 * w + 2) / (4 * w + 4))
        return data[0] if keep else 1 - data[0]

    def rr_by_hand(data, eps):
        keep = dp.bernoulli(dp.exp(eps) / (1 + dp.exp(eps)))
        return data[0] if keep else 1 - data[0]
    spec = dp.spec(rr, universe=BIT, grid={eps: [sympy.log(2)]},
                   claims=[dp.same_distribution(rr_by_hand), dp.same_distribution(lookalike)])
    same, different = dp.check(spec)
    assert same.status.value == "proved" and "rational functions" in same.message
    assert different.status.value == "refuted" and "eps = " in different.message


def test_control_flow_on_a_symbolic_parameter_gives_no_proof_but_a_grid_verdict() -> None:
    def branchy(data, eps):
        return dp.randomized_response(data[0], eps if eps < 5 else eps / 2)
    spec = dp.spec(branchy, universe=BIT, grid={eps: [1]}, claims=[dp.private(eps)])
    [result] = dp.check(spec)
    assert result.status.value == "verified" and "symbolic" in result.message


def printed_after(text: str, message: str) -> mpmath.mpf:
    """The number the message prints right after ``text``."""
    found = re.search(re.escape(text) + r"(\d[\d.e+-]*)", message)
    assert found, (text, message)
    with mpmath.workdps(50):
        return mpmath.mpf(found.group(1))


def test_a_refuted_claim_names_the_bound_it_claimed() -> None:
    """Randomized response claimed at eps/4 (eps = 1): the ratio e is compared with e^(eps/4) = e^(1/4),
    named as the claim writes it, never as a generic e^eps."""
    [result] = dp.check(rr_spec(Fraction(1, 4)), proofs=False)
    assert result.status.value == "refuted", result.message
    assert "e^eps" not in result.message
    with mpmath.workdps(50):
        assert abs(printed_after("> e^(eps/4) = ", result.message) - mpmath.exp(mpmath.mpf(1) / 4)) < \
            mpmath.mpf(10) ** -35
        assert abs(printed_after("ratio ", result.message) - mpmath.e) < mpmath.mpf(10) ** -35


def test_a_refuted_delta_claim_names_the_bound_it_claimed() -> None:
    """(eps/4, 1/100) for randomized response at eps = 1: delta(1/4) = (e - e^(1/4)) / (1 + e) ~ 0.386."""
    def rr(data, eps):
        return dp.randomized_response(data[0], eps)
    [result] = dp.check(dp.spec(rr, universe=BIT, grid={eps: [1]}, claims=[dp.private(eps / 4, Fraction(1, 100))]))
    assert result.status.value == "refuted", result.message
    assert "e^eps" not in result.message
    with mpmath.workdps(50):
        true = (mpmath.e - mpmath.exp(mpmath.mpf(1) / 4)) / (1 + mpmath.e)
        assert abs(printed_after("P(S|X) - e^(eps/4) P(S|X') = ", result.message) - true) < mpmath.mpf(10) ** -35


def test_the_bound_is_written_with_the_claims_own_expression() -> None:
    assert [e_to(e) for e in (eps, 2 * eps, eps / 4, sympy.Integer(1), sympy.Rational(1, 2))] == \
        ["e^eps", "e^(2*eps)", "e^(eps/4)", "e^1", "e^(1/2)"]


def _two_bits(data, a, b):
    return (dp.randomized_response(data[0], a), dp.randomized_response(data[1], b))


def test_two_parameters_are_proved_and_refuted_with_z3() -> None:
    """Two continuous parameters give polynomials in two variables: z3's nonlinear arithmetic
    decides them (one variable uses root isolation and never loads z3)."""
    a, b = dp.symbol("a", positive=True), dp.symbol("b", positive=True)
    spec = dp.spec(_two_bits, universe=dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE),
                   grid={a: [1], b: [2]}, claims=[dp.private(a + b, id="sum"), dp.private(2 * a, id="twice_a")])
    proved, refuted = dp.check(spec)
    assert proved.status.value == "proved" and "z3 nonlinear real arithmetic" in proved.message
    # holds at a = 1, b = 2 (loss max(a, b) = 2), fails wherever b > 2a: found off the grid
    assert refuted.status.value == "refuted" and "found by" in refuted.message, refuted.message
