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

Exact curves beside the theorems (``dp.profile``, decided on the exact privacy loss distribution
of the T-fold composition, a polynomial power in w = e^eps): for randomized response composed
T = 1000 times, advanced composition's delta' at its eps' holds against the exact delta(eps'),
basic composition's T eps is exact (delta(T eps) = 0), and two mis-statements are refuted with
the exact value -- a delta 1000 times too small, and the theorem without its drift term
T eps (e^eps - 1), which fails at eps = 1/10 (exact delta about 0.0087 > 1/1000).

Gaussian composition (``gaussian_composed``): T = 100 runs of the Gaussian mechanism with
sensitivity 1 and sigma are rho-zCDP with rho = T / (2 sigma^2) (Bun and Steinke 2016), hence
(rho + 2 sqrt(rho ln(1/delta)), delta)-DP; the exact delta of the composition (one Gaussian at
distance sqrt(T) / sigma, certified Phi) holds the conversion, and refutes it without its factor 2.

Laplace composition (``laplace_composed``): T = 100 runs of the Laplace mechanism with eps0 = 1/10 (a bit
plus Laplace noise of scale 10).  delta_100 lies between certified bounds of its loss distribution (the
continuous part of each run's loss cell by cell at midpoints and split to the cells' ends: second order,
about 0.3% wide here).  Advanced composition holds (delta_100 in [6.713e-7, 6.734e-7] against 1/1000),
and so does it without its drift term for Laplace (in [8.70e-5, 8.72e-5]); with sqrt(T ln(1/delta)) in
place of sqrt(2 T ln(1/delta)) it is refuted (delta_100 >= 3.659e-3).
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


T = 1000


def one_rr(data, eps):
    """One randomized response of the bit: the profile claims compose it T times."""
    return dp.randomized_response(data[0], eps)


def advanced_eps(rounds, drift=True):
    """Advanced composition's eps' for ``rounds`` eps-DP mechanisms at delta' = DELTA."""
    return sqrt(2 * rounds * log(1 / DELTA)) * eps + (rounds * eps * (dp.exp(eps) - 1) if drift else 0)


advanced_exact = dp.spec(
    one_rr,
    name="advanced_exact",
    universe=BIT,
    grid={eps: [Rational(1, 100), Rational(1, 50)]},
    claims=[dp.profile(at=[advanced_eps(T)], delta=DELTA, times=T, id="advanced_composition_1000"),
            dp.profile(at=[T * eps], delta=0, times=T, id="basic_composition_1000"),
            dp.profile(at=[advanced_eps(T)], delta=DELTA / 1000, times=T, id="delta_too_small",
                       expect="refuted")],
)

advanced_drift = dp.spec(
    one_rr,
    name="advanced_drift",
    universe=BIT,
    grid={eps: [Rational(1, 10)]},
    claims=[dp.profile(at=[advanced_eps(T)], delta=DELTA, times=T, id="advanced_composition_1000"),
            dp.profile(at=[advanced_eps(T, drift=False)], delta=DELTA, times=T, id="without_drift",
                       expect="refuted")],
)


GAUSS_T = 100
GAUSS_DELTA = Rational(1, 10 ** 5)
sigma = dp.symbol("sigma", positive=True)


def gaussian_count(data, sigma):
    """The bit released with Gaussian noise of standard deviation sigma (sensitivity 1)."""
    return dp.gaussian(data[0], sigma)


def zcdp_eps(factor):
    """rho + factor sqrt(rho ln(1/delta)) for rho = GAUSS_T / (2 sigma^2)."""
    rho = GAUSS_T / (2 * sigma ** 2)
    return rho + factor * sqrt(rho * log(1 / GAUSS_DELTA))


gaussian_composed = dp.spec(
    gaussian_count,
    name="gaussian_composed",
    universe=BIT,
    grid={sigma: [10, 20]},
    claims=[dp.profile(at=[zcdp_eps(2)], delta=GAUSS_DELTA, times=GAUSS_T, id="zcdp_conversion"),
            dp.profile(at=[zcdp_eps(1)], delta=GAUSS_DELTA, times=GAUSS_T, id="without_factor_2",
                       expect="refuted")],
)


LAPLACE_T = 100
EPS0 = Rational(1, 10)


def laplace_bit(data):
    """The bit plus Laplace noise of scale 1/EPS0 (sensitivity 1): EPS0-DP."""
    return dp.laplace(data[0], 1 / EPS0)


def laplace_advanced(factor=2, drift=True):
    """Advanced composition's eps' for LAPLACE_T EPS0-DP runs at delta' = DELTA (``factor`` under the root)."""
    return sqrt(factor * LAPLACE_T * log(1 / DELTA)) * EPS0 + (LAPLACE_T * EPS0 * (dp.exp(EPS0) - 1) if drift else 0)


laplace_composed = dp.spec(
    laplace_bit,
    name="laplace_composed",
    universe=BIT,
    claims=[dp.profile(at=[laplace_advanced()], delta=DELTA, times=LAPLACE_T, id="advanced_composition_100"),
            dp.profile(at=[laplace_advanced(drift=False)], delta=DELTA, times=LAPLACE_T, id="without_drift"),
            dp.profile(at=[laplace_advanced(factor=1, drift=False)], delta=DELTA, times=LAPLACE_T,
                       id="without_factor_2", expect="refuted")],
)
