"""The exponential mechanism (McSherry and Talwar 2007), catalogue entry 2.

Mechanism: finite candidates Y, a score u(X, y) with global sensitivity Delta;
output y with probability proportional to exp(eps * u(X, y) / (2 * Delta)).
Source: McSherry and Talwar, "Mechanism design via differential privacy"
(FOCS 2007); the lecture notes on the exponential mechanism and private PAC
learning.

Two scores over a small record domain {0, 1, 2, 3, 4}:

* most frequent item: u(X, y) = #{i : x_i = y}.  Replacing one record lowers
  one count by 1 and raises another by 1, so every u(., y) moves by at most 1:
  Delta = 1.
* median-like choice: u(X, y) = -|#{x_i < y} - #{x_i > y}|.  Replacing a
  record that lies below y by one above y lowers the first count by 1 and
  raises the second by 1, so the difference moves by 2 (and never more):
  Delta = 2.  (The single-sided score -|#{x_i <= y} - n/2| has Delta = 1.)

Both scores are written per record (``dp.count``), so their sensitivities are
derived rather than assumed: for the count, the indicator [x = y] ranges over
{0, 1}, so Delta(n) = 1 for every n >= 1; for the balance score,
|#below - #above| is the absolute value of a count-like sum whose record term
takes the values +1, 0, -1, and the derivation (the sum of the other n - 1
records at its extremes) gives Delta(1) = 1 and Delta(n) = 2 for every n >= 2.
Both mechanisms omit ``sensitivity=`` and use the derived value.

Claims checked here: eps-DP of each mechanism under replace-one neighbours,
and the derived sensitivity of each score (claimed as 1, and as 2 for n >= 2).
Universe: multisets of n = 4 records from the domain (the mechanisms ignore
record order).  The mutant in tests/test_mutants.py that states Delta = 1 for
the median score is refuted at every grid point of this universe (on smaller
ones, e.g. n = 2, the under-stated sensitivity happens to go unnoticed by the
privacy check; the sensitivity claim catches it at every n >= 2).
Accuracy (the utility theorem), for each score with its Delta and every t in
the grid: P[u(X, Y) <= OPT(X) - (2 Delta/eps)(ln(|Y|/|Y*|) + t)] <= e^-t, where
Y* is the set of optimal candidates, and the weaker form
P[u(X, Y) <= OPT(X) - t] <= |Y| exp(-eps t/(2 Delta)); both decided exactly on
every dataset, with the worst slack reported.
"""
from sympy import Rational, exp, log

import dpverify as dp

eps = dp.symbol("eps", positive=True)
n = dp.symbol("n", integer=True, positive=True)
t = dp.symbol("t", positive=True)
GRID = {eps: [Rational(1, 2), 1, 2], t: [Rational(1, 2), 1, 2, 4]}

DOMAIN = (0, 1, 2, 3, 4)
"""Record domain and, for both scores, the candidate set Y."""

count = dp.count(lambda x, y: x == y, domain=DOMAIN)
"""u(X, y) = #{i : x_i = y}; ``count(data, y)`` is an int (sensitivity 1 under replace-one)."""

balance = -abs(dp.count(lambda x, y: x < y, domain=DOMAIN) - dp.count(lambda x, y: x > y, domain=DOMAIN))
"""u(X, y) = -|#records below y - #records above y| (sensitivity 2 under replace-one, n >= 2)."""


def most_frequent(data, eps):
    """Exponential mechanism over the domain with score = count of y in the data, Delta derived (1)."""
    return dp.exponential(DOMAIN, count.on(data), eps, neighbours=dp.REPLACE_ONE)


def median(data, eps):
    """Exponential mechanism over the domain with the balance score, Delta derived (2)."""
    return dp.exponential(DOMAIN, balance.on(data), eps, neighbours=dp.REPLACE_ONE)


def utility_gap(score, delta):
    """The bad event of the utility theorem: u(X, Y) <= OPT(X) - (2 Delta/eps)(ln(|Y|/|Y*|) + t)."""
    def bad(data, y, eps, t):
        utilities = [score(data, c) for c in DOMAIN]
        best = max(utilities)
        optimal = utilities.count(best)
        return score(data, y) <= best - 2 * delta / eps * (log(Rational(len(DOMAIN), optimal)) + t)
    bad.__name__ = f"u <= OPT - (2*{delta}/eps)(ln(|Y|/|Y*|) + t)"
    return bad


def utility_below(score):
    """The bad event of the weak form: u(X, Y) <= OPT(X) - t."""
    def bad(data, y, t):
        return score(data, y) <= max(score(data, c) for c in DOMAIN) - t
    bad.__name__ = "u <= OPT - t"
    return bad


def accuracy_claims(score, delta):
    return [dp.accuracy(utility_gap(score, delta), exp(-t), id="utility"),
            dp.accuracy(utility_below(score), len(DOMAIN) * exp(-eps * t / (2 * delta)), id="utility_weak")]


most_frequent_spec = dp.spec(
    most_frequent,
    universe=dp.universe(DOMAIN, n=4, neighbours=dp.REPLACE_ONE, symmetric=True),
    grid=GRID,
    claims=[dp.private(eps), dp.sensitivity(count, 1, n=n, candidates=DOMAIN, id="count_sensitivity"),
            *accuracy_claims(count, 1)],
)

median_spec = dp.spec(
    median,
    universe=dp.universe(DOMAIN, n=4, neighbours=dp.REPLACE_ONE, symmetric=True),
    grid=GRID,
    claims=[dp.private(eps),
            dp.sensitivity(balance, 2, n=n, n_min=2, candidates=DOMAIN, id="balance_sensitivity"),
            *accuracy_claims(balance, 2)],
)
