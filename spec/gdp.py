"""Gaussian differential privacy (Dong, Roth and Su, "Gaussian differential privacy", JRSS B 2022).

A mechanism is mu-GDP when distinguishing neighbouring datasets from its output is at least as hard
as telling N(0, 1) from N(mu, 1): for every eps >= 0,
delta(eps) <= Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (their Corollary 2.13).

* ``gaussian`` -- a count (sensitivity Delta = 1) released with N(0, sigma^2) noise is exactly
  (Delta/sigma)-GDP (Theorem 2.7): ``exact_mu`` is proved for every sigma > 0; ``mu_too_small`` (the
  folklore 1/(2 sigma)) refuted; composed 16 times it is (4/sigma)-GDP (Corollary 3.3, mu sqrt(T)):
  ``composed`` proved, ``composed_as_one`` (forgetting the sqrt(T)) refuted.
* ``randomized_response`` -- randomized response at eps0 = 1/2 is a discrete mechanism: its
  profile is compared with G_mu on a grid of eps (both non-increasing, so delta(e_k) <= G(e_(k+1))
  covers the gaps; beyond the largest loss nothing leaks).  It is 1-GDP (verified) and not 1/4-GDP
  (refuted at an eps of the grid).
"""
from sympy import Rational

import dpverify as dp

sigma = dp.symbol("sigma", positive=True)
eps = dp.symbol("eps", positive=True)
COUNTS = dp.universe([0, 1], n=range(1, 3), neighbours=dp.ADD_REMOVE)


def noisy_count(data, sigma):
    """The number of ones, with Gaussian noise of scale sigma."""
    return dp.gaussian(sum(data), sigma)


gaussian = dp.spec(
    noisy_count,
    universe=COUNTS,
    grid={sigma: [1, 2]},
    claims=[dp.gdp(1 / sigma, id="exact_mu"),
            dp.gdp(1 / (2 * sigma), id="mu_too_small", expect="refuted"),
            dp.gdp(4 / sigma, times=16, id="composed"),
            dp.gdp(1 / sigma, times=16, id="composed_as_one", expect="refuted")],
)


def rr(data, eps):
    """Randomized response on the single record."""
    return dp.randomized_response(data[0], eps)


randomized_response = dp.spec(
    rr,
    universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
    grid={eps: [Rational(1, 2)]},
    claims=[dp.gdp(1, id="one"),
            dp.gdp(Rational(1, 4), id="quarter", expect="refuted")],
)
