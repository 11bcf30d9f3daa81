"""Privacy amplification by subsampling without replacement, catalogue entry 13.

Mechanism: draw a uniformly random subset of m of the n records, then run an
eps-DP mechanism (under replace-one) on it.
Claim: the composition is ln(1 + (m/n)(e^eps - 1))-DP under replace-one
neighbours (the replaced record is in the subset with probability m/n).
Source: the notes on stable and private prediction; Balle, Barthe and Gaboardi,
"Privacy amplification by subsampling: tight analyses via couplings and
divergences" (NeurIPS 2018): sampling without replacement under the
substitution (replace-one) relation.

Three eps-DP inner mechanisms:

* randomized response on the single sampled record (m = 1 of n = 3, records
  in {0, 1}): the bound is attained exactly, so the claim is tight;
* randomized response on the parity of the number of ones in the subset
  (m = 2 of n = 4): changing one record of the subset flips the parity at most;
  this bound is attained exactly too;
* the exponential mechanism choosing the most frequent item of the subset
  (m = 2 of n = 4, items in {0, 1, 2}, Delta = 1).

All of them ignore the order of the records (the subset is uniform), so the
universes are multisets.
"""
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)
GRID = {eps: [Rational(1, 2), 1, 2]}


def amplified(m, n):
    """ln(1 + (m/n)(e^eps - 1)), the epsilon claimed for an eps-DP mechanism run on m of n records."""
    return dp.log(1 + Rational(m, n) * (dp.exp(eps) - 1))


def rr_on_sampled_record(data, eps):
    """Randomized response on one record drawn uniformly from the data (m = 1)."""
    (record,) = dp.subset(data, 1)
    return dp.randomized_response(record, eps)


def rr_on_subset_parity(data, eps):
    """Randomized response on the parity of the number of ones in a random 2-subset."""
    sample = dp.subset(data, 2)
    return dp.randomized_response(sum(sample) % 2, eps)


def em_on_subset(data, eps):
    """Exponential mechanism (score = count, Delta = 1) for the most frequent item of a random 2-subset."""
    sample = dp.subset(data, 2)
    return dp.exponential((0, 1, 2), lambda y: sum(1 for x in sample if x == y), eps, sensitivity=1)


sampled_record = dp.spec(
    rr_on_sampled_record,
    universe=dp.universe([0, 1], n=3, neighbours=dp.REPLACE_ONE, symmetric=True),
    grid=GRID,
    claims=[dp.private(amplified(1, 3))],
)

subset_parity = dp.spec(
    rr_on_subset_parity,
    universe=dp.universe([0, 1], n=4, neighbours=dp.REPLACE_ONE, symmetric=True),
    grid=GRID,
    claims=[dp.private(amplified(2, 4))],
)

subset_most_frequent = dp.spec(
    em_on_subset,
    universe=dp.universe([0, 1, 2], n=4, neighbours=dp.REPLACE_ONE, symmetric=True),
    grid=GRID,
    claims=[dp.private(amplified(2, 4))],
)
