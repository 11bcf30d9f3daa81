"""A private PAC learner for thresholds via the exponential mechanism, catalogue entry 4.

Mechanism: the finite class H of thresholds on the line {0, 1, 2, 3},
h_t(x) = 1 if x >= t else 0 for t in {0, ..., 4} (|H| = 5); the data are n
labelled examples (x, y) with y in {0, 1}; the score of h is minus its
empirical error, u(X, h) = -(1/n) #{i : h(x_i) != y_i}; output h_t with the
exponential mechanism with parameter eps and Delta = 1/n.
Source: Kasiviswanathan, Lee, Nissim, Raskhodnikova and Smith, "What can we
learn privately?" (FOCS 2008), as presented in the lecture notes on the
exponential mechanism and private PAC learning.

Claims checked here: eps-DP under replace-one neighbours, for every dataset
size n = 1, ..., 4 (multisets, since the learner ignores the order of its
examples; the sensitivity 1/n is computed from each dataset's own size).  The sensitivity 1/n of
the empirical error is what makes the claim hold: replacing one example
changes each hypothesis' error count by at most 1, i.e. its empirical error by
at most 1/n (the mutants in tests/test_mutants.py that under-state it are
refuted).  The catalogue's utility bound (sample complexity
n >= max{4 ln(2|H|/beta)/(eps alpha), 2 ln(2|H|/beta)/alpha^2}) is not a
claim kind dpverify offers yet, so it is not stated in this file.
"""
from fractions import Fraction

from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)
GRID = {eps: [Rational(1, 2), 1, 2]}

POINTS = (0, 1, 2, 3)
THRESHOLDS = (0, 1, 2, 3, 4)
SIZES = range(1, 5)


def predict(t, x):
    """The threshold hypothesis h_t(x) = 1 if x >= t else 0."""
    return 1 if x >= t else 0


def empirical_error(data, t):
    """The fraction of examples (x, y) in the data that h_t labels wrongly (a Fraction)."""
    return Fraction(sum(1 for x, y in data if predict(t, x) != y), len(data))


def threshold_learner(data, eps):
    """Exponential mechanism over thresholds, score -empirical error, sensitivity 1/n."""
    return dp.exponential(THRESHOLDS, lambda t: -empirical_error(data, t), eps,
                          sensitivity=Fraction(1, len(data)))


learner = dp.spec(
    threshold_learner,
    universe=dp.universe(dp.labelled(xs=POINTS, labels=[0, 1]), n=SIZES, neighbours=dp.REPLACE_ONE,
                         symmetric=True),
    grid=GRID,
    claims=[dp.private(eps)],
)
