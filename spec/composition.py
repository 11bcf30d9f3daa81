"""Composition of differential privacy, checked exactly on randomized response (catalogue 15).

* Sequential composition: k runs of an eps-DP mechanism on the same data are
  (k eps)-DP -- for k-fold randomized response of one bit this is tight.
* Parallel composition: eps-DP mechanisms on disjoint parts of the data (here
  each record is its own part) are eps-DP together: the maximum, not the sum.
* Advanced composition (Dwork, Rothblum, Vadhan 2010): k-fold composition of
  eps-DP mechanisms is (eps', delta')-DP with
  eps' = sqrt(2 k ln(1/delta')) eps + k eps (e^eps - 1).  Checked by the exact
  hockey-stick divergence of the composed output laws; the report gives the
  exact delta at eps' next to the formula's delta', and the smallest eps that
  achieves delta'.  The formula only beats k*eps for many rounds, so the
  interesting case is k = 20: there the mechanism reports the number of
  rounds that said 1, a sufficient statistic of the k answers (given the count,
  the order carries no information about the bit), so its divergence equals
  that of the full transcript -- and its law is binomial, written exactly.
"""
from math import comb

from sympy import Rational, log, sqrt

import dpverify as dp

eps = dp.symbol("eps", positive=True)
K = 4
ROUNDS = 20
DELTA = Rational(1, 1000)
BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)


def k_fold_rr(data, eps):
    """K independent randomized responses of the one record's bit."""
    return tuple(dp.randomized_response(data[0], eps) for _ in range(K))


def many_rounds_count(data, eps):
    """The number of 1s among ROUNDS randomized responses of the bit (binomial, exactly)."""
    keep = dp.exp(eps) / (1 + dp.exp(eps))
    p_one = keep if data[0] == 1 else 1 - keep
    return dp.categorical({j: comb(ROUNDS, j) * p_one ** j * (1 - p_one) ** (ROUNDS - j)
                           for j in range(ROUNDS + 1)})


def per_record_rr(data, eps):
    """Randomized response applied to each record separately (disjoint parts)."""
    return tuple(dp.randomized_response(r, eps) for r in data)


sequential = dp.spec(
    k_fold_rr,
    name="sequential",
    universe=BIT,
    grid={eps: [Rational(1, 10), Rational(1, 2), 1]},
    claims=[dp.private(K * eps, id="sum_of_eps"),
            dp.private((K - 1) * eps, id="one_fewer", expect="refuted")],
)

parallel = dp.spec(
    per_record_rr,
    name="parallel",
    universe=dp.universe([0, 1], n=3, neighbours=dp.REPLACE_ONE),
    grid={eps: [Rational(1, 2), 1]},
    claims=[dp.private(eps, id="max_of_eps")],
)

advanced = dp.spec(
    many_rounds_count,
    name="advanced",
    universe=BIT,
    grid={eps: [Rational(1, 100), Rational(1, 50)]},
    claims=[dp.private(sqrt(2 * ROUNDS * log(1 / DELTA)) * eps + ROUNDS * eps * (dp.exp(eps) - 1), DELTA,
                       id="advanced_composition"),
            dp.private(ROUNDS * eps, id="basic_composition")],
)
