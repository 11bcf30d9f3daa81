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

Claims checked here: eps-DP of each mechanism under replace-one neighbours.
Universe: multisets of n = 4 records from the domain (the mechanisms ignore
record order).  The sensitivities above are exercised through the privacy
claim: the mutant in tests/test_mutants.py that states Delta = 1 for the
median score is refuted at every grid point of this universe (on smaller ones,
e.g. n = 2, the under-stated sensitivity happens to go unnoticed).
The accuracy statements of the catalogue (P[u <= OPT - (2 Delta/eps)(ln(|Y|/|Y*|)
+ t)] <= e^-t and the weaker |Y| exp(-eps t / (2 Delta)) form) are not claim
kinds dpverify offers yet (only ``private`` and ``same_distribution`` exist),
so they are not stated in this file.
"""
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)
GRID = {eps: [Rational(1, 2), 1, 2]}

DOMAIN = (0, 1, 2, 3, 4)
"""Record domain and, for both scores, the candidate set Y."""


def count(data, y):
    """How many records equal y (sensitivity 1 under replace-one)."""
    return sum(1 for x in data if x == y)


def balance(data, y):
    """-|#records below y - #records above y| (sensitivity 2 under replace-one)."""
    below = sum(1 for x in data if x < y)
    above = sum(1 for x in data if x > y)
    return -abs(below - above)


def most_frequent(data, eps):
    """Exponential mechanism over the domain with score = count of y in the data, Delta = 1."""
    return dp.exponential(DOMAIN, lambda y: count(data, y), eps, sensitivity=1)


def median(data, eps):
    """Exponential mechanism over the domain with the balance score, Delta = 2."""
    return dp.exponential(DOMAIN, lambda y: balance(data, y), eps, sensitivity=2)


most_frequent_spec = dp.spec(
    most_frequent,
    universe=dp.universe(DOMAIN, n=4, neighbours=dp.REPLACE_ONE, symmetric=True),
    grid=GRID,
    claims=[dp.private(eps)],
)

median_spec = dp.spec(
    median,
    universe=dp.universe(DOMAIN, n=4, neighbours=dp.REPLACE_ONE, symmetric=True),
    grid=GRID,
    claims=[dp.private(eps)],
)
