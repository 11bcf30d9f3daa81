"""The two-sided geometric mechanism (Ghosh, Roughgarden and Sundararajan 2009), catalogue entry 8.

Mechanism: an integer query q with sensitivity Delta, plus two-sided geometric
noise Z with parameter a > 1, P(Z = k) = ((a - 1)/(a + 1)) a^-|k| for every
integer k, where a = e^(eps/Delta), i.e. e^eps = a^Delta.  Optionally the
noisy answer is clamped into [0, b] (post-processing).
Source: Ghosh, Roughgarden and Sundararajan, "Universally utility-maximizing
privacy mechanisms" (STOC 2009); the lecture notes on statistical-query
learning with Laplace and geometric noise.

Claims checked here, under replace-one neighbours:

* count of ones over records in {0, 1} (Delta = 1) with a = e^eps: eps-DP;
* sum of records in {0, 1, 2} (Delta = 2) with a = e^(eps/2): eps-DP;
* both again with the output clamped into [0, b]: still eps-DP.

The unclamped outputs are returned as they are: the engine lumps each infinite
tail beyond the centres seen into one output carrying its exact mass, so every
integer output is covered.

The statements about the pmf itself are formula claims (spec ``geometric_pmf``),
proved for every a > 1 and all integers k, j:

* it sums to 1: sum_{k in Z} ((a - 1)/(a + 1)) a^-|k| = 1, since splitting the
  sum at 0 gives ((a - 1)/(a + 1)) (1 + 2 sum_{k>=1} a^-k)
  = ((a - 1)/(a + 1)) (1 + 2/(a - 1)) = 1 (a geometric series, a > 1);
* the shift bound P(k + j)/P(k) = a^(|k| - |k + j|) <= a^|j|, by the triangle
  inequality |k| <= |k + j| + |j| and a > 1 -- the fact behind eps-DP with
  e^eps = a^Delta.
"""
from sympy import Abs, Rational, Sum, oo

import dpverify as dp

eps = dp.symbol("eps", positive=True)
GRID = {eps: [Rational(1, 2), 1, 2]}

N = 3


def noisy_count(data, eps):
    """Number of ones in the data plus two-sided geometric noise with a = e^eps (Delta = 1)."""
    return dp.geometric(sum(data), dp.exp(eps))


def noisy_sum(data, eps):
    """Sum of records in {0, 1, 2} plus geometric noise with a = e^(eps/2) (Delta = 2)."""
    return dp.geometric(sum(data), dp.exp(eps / 2))


def clamped_count(data, eps):
    """The noisy count with a = e^eps, clamped into [0, n]."""
    return dp.geometric(sum(data), dp.exp(eps), lower=0, upper=len(data))


def clamped_sum(data, eps):
    """The noisy sum with a = e^(eps/2), clamped into [0, 3] (narrower than the range 0..2n)."""
    return dp.geometric(sum(data), dp.exp(eps / 2), lower=0, upper=3)


count = dp.spec(
    noisy_count,
    universe=dp.universe([0, 1], n=N, neighbours=dp.REPLACE_ONE, symmetric=True),
    grid=GRID,
    claims=[dp.private(eps)],
)

sum_sensitivity_2 = dp.spec(
    noisy_sum,
    universe=dp.universe([0, 1, 2], n=N, neighbours=dp.REPLACE_ONE, symmetric=True),
    grid=GRID,
    claims=[dp.private(eps)],
)

count_clamped = dp.spec(
    clamped_count,
    universe=dp.universe([0, 1], n=N, neighbours=dp.REPLACE_ONE, symmetric=True),
    grid=GRID,
    claims=[dp.private(eps)],
)

sum_clamped = dp.spec(
    clamped_sum,
    universe=dp.universe([0, 1, 2], n=N, neighbours=dp.REPLACE_ONE, symmetric=True),
    grid=GRID,
    claims=[dp.private(eps)],
)


a = dp.symbol("a", positive=True)
k = dp.symbol("k", integer=True)
j = dp.symbol("j", integer=True)


def pmf(value):
    """P(Z = value) = ((a - 1)/(a + 1)) a^-|value| of two-sided geometric noise with parameter a."""
    return (a - 1) / (a + 1) * a ** -Abs(value)


geometric_pmf = dp.spec(
    name="geometric_pmf",
    doc="The two-sided geometric pmf sums to 1 and satisfies the shift bound, for every a > 1.",
    claims=[
        dp.identity(Sum(pmf(k), (k, -oo, oo)), 1, where=[a > 1], id="sums_to_one"),
        dp.inequality(pmf(k + j) / pmf(k), a ** Abs(j), where=[a > 1], id="shift_bound"),
    ],
)
