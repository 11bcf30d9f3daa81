"""Sampling the exponential mechanism by rejection, catalogue entry 3.

Mechanism: to sample the exponential mechanism over a finite candidate set Y
(target pi(y) = exp(eps u(X, y)/(2 Delta)) / sum_y' exp(eps u(X, y')/(2 Delta))),
propose y uniformly from Y and accept it with probability pi(y); repeat until
a proposal is accepted.  Each round accepts y with probability pi(y)/|Y|, so
a round accepts with probability 1/|Y| and the accepted value has law
(pi(y)/|Y|) / (1/|Y|) = pi(y).
Source: the lecture notes on the exponential mechanism (sampling it without
computing more than one target probability per round).

Score: the most frequent item, u(X, y) = #{i : x_i = y} over records and
candidates {0, 1, 2}, Delta = 1; n = 3 records (multisets: order is ignored).

Claims checked here: the sampler's output law equals the exponential
mechanism's exactly on every dataset (``same_distribution``), and hence the
sampler is eps-DP like the mechanism.  The expected number of proposals
(|Y|) is a statement about the running time, which dpverify's rejection loop
(analysed as its fixed point) does not expose; it is not stated here.
"""
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)
GRID = {eps: [Rational(1, 2), 1, 2]}

CANDIDATES = (0, 1, 2)
UNIVERSE = dp.universe(CANDIDATES, n=3, neighbours=dp.REPLACE_ONE, symmetric=True)


def count(data, y):
    """How many records equal y (sensitivity 1)."""
    return sum(1 for x in data if x == y)


def target_probability(data, y, eps, sensitivity=1):
    """pi(y) = exp(eps u(y)/(2 Delta)) / sum_y' exp(eps u(y')/(2 Delta)), computed exactly."""
    weights = {c: dp.exp(eps * count(data, c) / (2 * sensitivity)) for c in CANDIDATES}
    return weights[y] / sum(weights.values())


def exponential_mechanism_direct(data, eps):
    """The exponential mechanism, sampled directly by the primitive."""
    return dp.exponential(CANDIDATES, lambda y: count(data, y), eps, sensitivity=1)


def rejection_sampler(data, eps):
    """Propose y uniformly, accept with probability pi(y), repeat until accepted."""
    def attempt():
        y = dp.uniform(CANDIDATES)
        return y if dp.bernoulli(target_probability(data, y, eps)) else dp.REJECTED
    return dp.repeat_until_accepted(attempt)


sampler = dp.spec(
    rejection_sampler,
    universe=UNIVERSE,
    grid=GRID,
    claims=[dp.same_distribution(exponential_mechanism_direct, id="is_exponential_mechanism"),
            dp.private(eps)],
)
