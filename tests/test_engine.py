"""Golden numbers and extremes of the exact engine, computed independently by hand."""
from fractions import Fraction

import mpmath
import pytest
import sympy

import dpverify as dp
from dpverify.engine.program.backend import IntervalBackend, SympyBackend, exact_sign
from dpverify.engine.datasets.datasets import enumerate_datasets, estimate, neighbour_pairs
from dpverify.engine.program.reading import distribution
from dpverify.errors import SpecError

from .helpers import eps, statuses


def law(program, data=(), backend=None, **params):
    return distribution(program, data, params, backend or SympyBackend())


def test_randomized_response_at_ln3_keeps_with_probability_three_quarters() -> None:
    result = law(lambda d, eps: dp.randomized_response(d[0], eps), (1,), eps=sympy.log(3))
    assert result == {1: sympy.Rational(3, 4), 0: sympy.Rational(1, 4)}


def test_exponential_mechanism_weights() -> None:
    def em(d, eps):
        return dp.exponential(["a", "b"], lambda y: {"a": 1, "b": 0}[y], eps, sensitivity=1)
    result = law(em, eps=sympy.Integer(2))  # weights e^1 : e^0
    assert exact_sign(result["a"] - sympy.E / (1 + sympy.E)) == 0


def test_clamped_geometric_masses_match_the_infinite_sums() -> None:
    a, value, lower, upper = sympy.Integer(3), 1, 0, 3
    result = law(lambda d: dp.geometric(value, a, lower=lower, upper=upper))
    c = (a - 1) / (a + 1)
    assert result[1] == c and result[2] == c / 3
    # P(output = 0) = P(Z <= -1) = sum_{k>=1} c 3^-k = c/2
    assert sympy.simplify(result[0] - c / 2) == 0
    # P(output = 3) = P(Z >= 2) = sum_{k>=2} c 3^-k = c/6
    assert sympy.simplify(result[3] - c / 6) == 0
    assert sympy.simplify(sum(result.values()) - 1) == 0


def test_unclamped_geometric_lumps_its_tails_exactly() -> None:
    def noisy(d, eps):
        return dp.geometric(sum(d), dp.exp(eps))
    spec = dp.spec(noisy, universe=dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE),
                   grid={eps: [1]}, claims=[dp.private(eps), dp.private(eps * Fraction(9, 10))])
    results = dp.check(spec)
    assert [r.status.value for r in results] == ["proved", "refuted"]
    assert results[0].evidence.achieved_epsilon.startswith("1.000000000000000000000000000000")


def test_computing_with_a_lumped_tail_is_refused() -> None:
    def parity(d, eps):
        return dp.geometric(sum(d), dp.exp(eps)) % 2
    spec = dp.spec(parity, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                   grid={eps: [1]}, claims=[dp.private(eps)])
    [result] = dp.check(spec)
    assert result.status.value == "error" and "clamp" in result.message


def test_rejection_loop_is_its_fixed_point() -> None:
    def attempt():
        y = dp.uniform(["a", "b", "c"])
        accept = dp.bernoulli({"a": Fraction(1), "b": Fraction(1, 2), "c": Fraction(0)}[y])
        return y if accept else dp.REJECTED
    result = law(lambda d: dp.repeat_until_accepted(attempt))
    assert result == {"a": sympy.Rational(2, 3), "b": sympy.Rational(1, 3)}


def test_a_loop_that_never_accepts_is_an_error() -> None:
    with pytest.raises(SpecError, match="never accepts"):
        law(lambda d: dp.repeat_until_accepted(lambda: dp.REJECTED))


def test_subset_is_uniform_over_positions() -> None:
    result = law(lambda d: dp.subset(d, 2), (0, 0, 1))
    assert result == {(0, 0): sympy.Rational(1, 3), (0, 1): sympy.Rational(2, 3)}


def test_interval_backend_brackets_the_exact_value() -> None:
    backend = IntervalBackend(30)
    result = law(lambda d, eps: dp.randomized_response(d[0], eps), (0,), backend, eps=sympy.Integer(1))
    with mpmath.workdps(60):
        exact = mpmath.e / (1 + mpmath.e)
        assert result[0].a <= exact <= result[0].b
        assert result[0].delta < mpmath.mpf(10) ** -28


def test_neighbour_relations_count_pairs() -> None:
    # replace-one: 3 pairs of size 1, 9*2*2/2 of size 2; add/remove: 9*2 removals, 3 of them repeated
    for rel, expected in ((dp.REPLACE_ONE, 3 + 18), (dp.ADD_REMOVE, 18 - 3)):
        universe = dp.universe([0, 1, 2], n=range(1, 3), neighbours=rel)
        datasets = enumerate_datasets(universe)
        left, _ = neighbour_pairs(universe, datasets)
        assert len(left) == expected
        assert estimate(universe).pairs >= len(left)


def test_label_only_changes_one_label() -> None:
    universe = dp.universe(dp.labelled([0, 1], [0, 1]), n=2, neighbours=dp.LABEL_ONLY)
    datasets = enumerate_datasets(universe)
    left, right = neighbour_pairs(universe, datasets)
    for i, j in zip(left, right):
        x, y = datasets[i], datasets[j]
        assert [a[0] for a in x] == [b[0] for b in y]
        assert sum(a != b for a, b in zip(x, y)) == 1
    assert len(left) == 16 * 2 // 2


def test_eps_zero_mechanism_and_infinite_loss() -> None:
    def release(d, eps):
        return d[0]  # no noise at all: infinitely private-loss
    spec = dp.spec(release, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                   grid={eps: [5]}, claims=[dp.private(eps)])
    [result] = dp.check(spec)
    assert result.status.value == "refuted" and result.evidence.achieved_epsilon == "inf"
    assert result.witness.p_prime.startswith("0.0") and result.witness.ratio == "inf"


def test_a_constant_mechanism_achieves_zero() -> None:
    def constant(d, eps):
        return dp.uniform([0, 1])
    spec = dp.spec(constant, universe=dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE),
                   grid={eps: [1]}, claims=[dp.private(eps)])
    [result] = dp.check(spec)
    assert result.status.value == "proved" and float(result.evidence.achieved_epsilon) == 0


def test_approximate_dp_hockey_stick() -> None:
    # Output the bit with probability 1/10, else a constant: a (0, 1/10)-DP mechanism, not pure DP.
    def leaky(d, eps):
        return d[0] if dp.bernoulli(Fraction(1, 10)) else "nothing"
    universe = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)
    good = dp.spec(leaky, universe=universe, grid={eps: [1]},
                   claims=[dp.private(eps, Fraction(1, 10)), dp.private(eps, Fraction(9, 100))])
    held, broken = dp.check(good)
    assert held.status.value == "verified"
    assert held.evidence.achieved_delta.startswith("0.1000000000000000000000000000")
    assert broken.status.value == "refuted" and broken.witness is not None


def test_tight_claim_is_verified_and_a_hair_less_is_refuted() -> None:
    from .helpers import rr_spec
    assert statuses(rr_spec(Fraction(1))) == ["proved"]
    assert statuses(rr_spec(Fraction(10 ** 30 - 1, 10 ** 30))) == ["refuted"]


def test_a_user_supplied_relation_matches_the_built_in_one() -> None:
    def one_replaced(x, y):
        return len(x) == len(y) and sum(a != b for a, b in zip(x, y)) == 1

    def em(data, eps):
        return dp.exponential([0, 1, 2], lambda y: data.count(y), eps, sensitivity=1)
    achieved = []
    for relation in (dp.REPLACE_ONE, one_replaced):
        spec = dp.spec(em, universe=dp.universe([0, 1, 2], n=2, neighbours=relation),
                       grid={eps: [1]}, claims=[dp.private(eps)])
        [result] = dp.check(spec)
        assert result.status.value == "proved"
        achieved.append(result.evidence.achieved_epsilon)
    assert achieved[0] == achieved[1]


def test_integer_parameters_arrive_as_ints() -> None:
    m = dp.symbol("m", integer=True, positive=True)

    def sampled(data, eps, m):
        return dp.randomized_response(dp.subset(data, m)[0], eps)
    spec = dp.spec(sampled, universe=dp.universe([0, 1], n=3, neighbours=dp.REPLACE_ONE),
                   grid={eps: [1], m: [1, 2]},
                   claims=[dp.private(dp.log(1 + m / 3 * (dp.exp(eps) - 1)))])
    assert [r.status.value for r in dp.check(spec)] == ["proved", "proved"]


def test_an_inexact_float_in_a_program_is_refused() -> None:
    def third(data, eps):
        return dp.bernoulli(1 / 3)
    spec = dp.spec(third, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                   grid={eps: [1]}, claims=[dp.private(eps)])
    [result] = dp.check(spec)
    assert result.status.value == "error" and "Fraction(1, 3)" in result.message


@pytest.mark.parametrize("precision", [10, 0, 10**6, "fifty"])
def test_dp_check_validates_its_precision_as_the_cli_does(precision) -> None:
    from dpverify.options import OptionError
    spec = dp.spec(lambda data, eps: dp.randomized_response(data[0], eps),
                   universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE), grid={eps: [1]},
                   claims=[dp.private(eps)])
    with pytest.raises(OptionError, match="precision"):
        dp.check(spec, precision=precision)
    assert [r.status.value for r in dp.check(spec, precision=30)] == ["proved"]
