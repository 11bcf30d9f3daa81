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
examples), and the sensitivity of the empirical error, Delta(n) = 1/n for
every n >= 1 (derived, not assumed): the error is a mean of the record term
[h(x) != y], which takes the values 0 and 1 over the labelled records, and
replacing one example moves a mean of n terms by at most (1 - 0)/n.  The
learner omits ``sensitivity=`` and uses exactly this derived value,
Delta(len(data)), at run time; the mutants in tests/test_mutants.py that
under-state it (1/(2n)) or score the error count with Delta = 1/n are refuted,
and so are the sensitivity mutants in tests/test_sensitivity.py.  The
catalogue's utility bound (sample complexity
n >= max{4 ln(2|H|/beta)/(eps alpha), 2 ln(2|H|/beta)/alpha^2}) is not a
claim kind dpverify offers yet, so it is not stated in this file.
"""
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)
n = dp.symbol("n", integer=True, positive=True)
GRID = {eps: [Rational(1, 2), 1, 2]}

POINTS = (0, 1, 2, 3)
THRESHOLDS = (0, 1, 2, 3, 4)
SIZES = range(1, 5)
RECORDS = dp.labelled(xs=POINTS, labels=[0, 1])


def predict(t, x):
    """The threshold hypothesis h_t(x) = 1 if x >= t else 0."""
    return 1 if x >= t else 0


empirical_error = dp.mean(lambda rec, t: int(predict(t, rec[0]) != rec[1]), domain=RECORDS)
"""err(X, h_t) = (1/n) #{i : h_t(x_i) != y_i}; ``empirical_error(data, t)`` is a Fraction."""

score = -empirical_error
"""u(X, h_t) = -err(X, h_t), the learner's score."""


def threshold_learner(data, eps):
    """Exponential mechanism over thresholds, score -empirical error, sensitivity derived (1/n)."""
    return dp.exponential(THRESHOLDS, score.on(data), eps, neighbours=dp.REPLACE_ONE)


learner = dp.spec(
    threshold_learner,
    universe=dp.universe(RECORDS, n=SIZES, neighbours=dp.REPLACE_ONE, symmetric=True),
    grid=GRID,
    claims=[dp.private(eps),
            dp.sensitivity(empirical_error, 1 / n, candidates=THRESHOLDS, id="error_sensitivity")],
)
