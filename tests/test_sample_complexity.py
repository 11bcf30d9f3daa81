"""Sample-complexity claims: the exact failure probability at the bound's n, and mutants refuted."""
from fractions import Fraction

import sympy
from sympy import Rational, log

import dpverify as dp
from dpverify.checks.sample_complexity import FailureProbability, multisets

eps = dp.symbol("eps", positive=True)
alpha = dp.symbol("alpha", positive=True)
beta = dp.symbol("beta", positive=True)
XS, THRESHOLDS, TARGET = (0, 1, 2), (0, 1, 2, 3), 2
POPULATION = {(x, int(x >= TARGET)): Fraction(1, 3) for x in XS}
H = len(THRESHOLDS)
GRID = {eps: [1], alpha: [Rational(1, 4)], beta: [Rational(1, 4)]}


def learner(data, eps):
    errors = {t: sum(int(x >= t) != y for x, y in data) for t in THRESHOLDS}
    return dp.exponential(THRESHOLDS, lambda t: -Fraction(errors[t], len(data)), eps,
                          sensitivity=Fraction(1, len(data)))


def true_error(t):
    return sum(p for (x, y), p in POPULATION.items() if int(x >= t) != y)


def spec_with(bound):
    return dp.spec(learner, universe=dp.universe(list(POPULATION), n=1, neighbours=dp.REPLACE_ONE),
                   grid=GRID, claims=[dp.sample_complexity(population=POPULATION, error=true_error,
                                                           alpha=alpha, beta=beta, bound=bound)])


def test_the_failure_probability_matches_a_brute_force_over_sequences() -> None:
    spec = spec_with(1)
    failure = FailureProbability(spec, spec.claims[0], spec.points[0], Rational(1, 4), 40)
    import itertools
    import math
    for n in (1, 2, 3):
        brute = 0.0
        for sample in itertools.product(list(POPULATION), repeat=n):
            scores = [-sum(int(x >= t) != y for x, y in sample) / n for t in THRESHOLDS]
            weights = [math.exp(1 * s / (2 / n)) for s in scores]
            brute += (1 / 3) ** n * sum(w for t, w in zip(THRESHOLDS, weights) if true_error(t) > 0.25) / sum(weights)
        assert abs(float(failure.at(n).mid) - brute) < 1e-12
        assert multisets(failure.records, n) == math.comb(n + 2, 2)


def test_the_catalogue_bound_holds_and_reports_the_smallest_n() -> None:
    bound = sympy.Max(4 * log(2 * H / beta) / (eps * alpha), 2 * log(2 * H / beta) / alpha ** 2)
    [result] = dp.check(spec_with(bound))
    assert result.status.value == "verified"
    assert result.figures["n_bound"] == 111
    assert result.figures["holds_down_to"] < 111  # the default run scans the top of the range only


def test_a_bound_that_asks_for_too_few_samples_is_refuted() -> None:
    # alpha and alpha^2 swapped in the second term, and the first term dropped: n = 2 ln(2|H|/beta) alpha^2.
    [result] = dp.check(spec_with(2 * log(2 * H / beta) * alpha ** 2))
    assert result.status.value == "refuted"
    assert "confirmed" in result.message and result.witness is not None
