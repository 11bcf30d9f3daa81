"""Accuracy, stability and private-prediction claims: correct statements hold, mutants are refuted."""
from fractions import Fraction

import sympy
from sympy import Rational

import dpverify as dp

from .helpers import eps

t = dp.symbol("t", positive=True)
ITEMS = (0, 1, 2)
UNIVERSE = dp.universe(ITEMS, n=3, neighbours=dp.REPLACE_ONE, symmetric=True)


def most_frequent(data, eps):
    return dp.exponential(ITEMS, lambda y: data.count(y), eps, sensitivity=1)


def gap_event(factor):
    """u(X, Y) <= OPT - factor * (2/eps) (ln(|Y|/|Y*|) + t): the utility theorem's bad event."""
    def bad(data, y, eps, t):
        counts = [data.count(c) for c in ITEMS]
        best = max(counts)
        optimal = counts.count(best)
        return data.count(y) <= best - factor * 2 / eps * (sympy.log(Rational(len(ITEMS), optimal)) + t)
    return bad


def weak_event(data, y, t):
    return data.count(y) <= max(data.count(c) for c in ITEMS) - t


def spec_with(*claims):
    return dp.spec(most_frequent, universe=UNIVERSE, grid={eps: [Rational(1, 2), 2], t: [Rational(1, 2), 2]},
                   claims=list(claims))


def statuses(spec):
    return [r.status.value for r in dp.check(spec)]


def test_the_utility_theorem_holds_in_both_forms() -> None:
    spec = spec_with(dp.accuracy(gap_event(1), sympy.exp(-t)),
                     dp.accuracy(weak_event, len(ITEMS) * sympy.exp(-eps * t / 2)))
    results = dp.check(spec)
    assert {r.status.value for r in results} == {"verified"}
    assert all("slack" in r.message for r in results)


def test_utility_mutants_are_refuted() -> None:
    for claim in (dp.accuracy(gap_event(Rational(1, 4)), sympy.exp(-t)),   # a dropped factor 4 in the gap
                  dp.accuracy(weak_event, sympy.exp(-eps * t))):         # |Y| and the 2 dropped
        results = dp.check(spec_with(claim))
        assert "refuted" in [r.status.value for r in results]
        refuted = next(r for r in results if r.status.value == "refuted")
        assert refuted.witness is not None and "confirmed" in refuted.message


def test_probability_at_least() -> None:
    def mode_is_output(data, y):
        return data.count(y) == max(data.count(c) for c in ITEMS)
    good = spec_with(dp.probability(mode_is_output, at_least=Rational(1, 3)))
    assert set(statuses(good)) == {"verified"}
    bad = spec_with(dp.probability(mode_is_output, at_least=Rational(99, 100)))
    assert "refuted" in statuses(bad)


# ---- stability and private prediction, on a small stable learner ----------------------------

XS = (0, 1)
LEARNER_UNIVERSE = dp.universe(dp.labelled(XS, [0, 1]), n=2, neighbours=dp.REPLACE_ONE, symmetric=True)


def learner(data, eps):
    """Exponential mechanism over thresholds t in 0..2, scored by minus the errors on one random record."""
    sample = dp.subset(data, 1)
    return dp.exponential((0, 1, 2), lambda th: -sum(int(x >= th) != y for x, y in sample), eps, sensitivity=1)


def predict(th, x):
    return int(x >= th)


def flipped(th, x, p):
    label = int(x >= th)
    return 1 - label if dp.bernoulli(p) else label


def test_stability_holds_and_a_too_small_gamma_is_refuted() -> None:
    gamma = Rational(1, 2) + dp.exp(eps) - 1
    good = dp.spec(learner, universe=LEARNER_UNIVERSE, grid={eps: [Rational(1, 2)]},
                   claims=[dp.stability(gamma, predict=predict, points=XS)])
    [result] = dp.check(good)
    assert result.status.value == "verified" and "achieved gamma" in result.message
    achieved = float(result.evidence.achieved_gamma)
    tight = dp.spec(learner, universe=LEARNER_UNIVERSE, grid={eps: [Rational(1, 2)]},
                    claims=[dp.stability(Fraction(achieved).limit_denominator(1000) - Rational(1, 1000),
                                         predict=predict, points=XS)])
    [refuted] = dp.check(tight)
    assert refuted.status.value == "refuted" and refuted.witness is not None


def test_private_prediction_holds_and_a_mutant_bound_is_refuted() -> None:
    p = dp.symbol("p", positive=True)
    gamma = Rational(1, 2) + dp.exp(eps) - 1
    grid = {eps: [Rational(1, 2)], p: [Rational(1, 4)]}
    good = dp.spec(learner, universe=LEARNER_UNIVERSE, grid=grid,
                   claims=[dp.private_prediction(dp.log(1 + gamma / p), predict=flipped, points=XS)])
    [held] = dp.check(good)
    assert held.status.holds and "achieved" in held.message
    below = Fraction(held.evidence.achieved_epsilon).limit_denominator(10 ** 6) - Rational(1, 10 ** 4)
    mutant = dp.spec(learner, universe=LEARNER_UNIVERSE, grid=grid,
                     claims=[dp.private_prediction(below, predict=flipped, points=XS)])
    [refuted] = dp.check(mutant)
    assert refuted.status.value == "refuted" and refuted.witness is not None
