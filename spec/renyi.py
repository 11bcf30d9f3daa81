"""Rényi DP and zero-concentrated DP, decided exactly: randomized response, Laplace, Gaussian.

Rényi DP of order alpha > 1 (Mironov, "Rényi differential privacy", CSF 2017) bounds
D_alpha(M(X) || M(X')) = 1/(alpha - 1) ln sum_o P(o|X)^alpha P(o|X')^(1 - alpha) over ordered
neighbours; rho-zCDP (Bun and Steinke, TCC 2016) bounds D_alpha <= rho alpha for every alpha > 1.
dpverify computes the divergences exactly: finite sums for discrete laws, closed forms for
released Laplace and Gaussian values (centres' distances derived from the program), and the
supremum of D_alpha / alpha certified over every order.

* ``randomized_response`` -- D_2 = ln(2 cosh(eps) - 1) exactly (tight, decided by sympy), proved for
  every eps > 0 (sum_o P^2/Q is a rational function of w = e^eps, the claim a polynomial inequality in w
  decided by exact real-root isolation); eps-DP implies (eps^2/2)-zCDP (Bun and Steinke, Proposition
  3.3); mis-stated bounds are refuted with the pair and the order.
* ``geometric_renyi`` -- a count plus two-sided geometric noise (a = e^eps, Delta = 1): its loss is +-eps
  like randomized response's, so D_2 = ln(2 cosh(eps) - 1) again, and D_3 <= eps (D_alpha <= D_oo): both
  proved for every eps.  The mis-stated D_2 <= eps - ln(5/4) holds at the grid's eps = 1/2 and 1 but not
  for every eps: refuted at a counterexample eps off the grid, found by root isolation and re-confirmed on
  both laws recomputed there.
* ``laplace_renyi`` -- q(X) + Lap(Delta/eps) with Delta derived: D_2 is Mironov's closed form at
  t = Delta/b = eps, proved for every eps; a bound eps^2/4 is too small.
* ``gaussian_zcdp`` -- a count plus N(0, sigma^2) with sigma = 1/sqrt(2 rho) is rho-zCDP (proved for
  every rho > 0); and with sigma a parameter, rho = Delta^2/(2 sigma^2) is proved while the
  mis-stated Delta^2/(4 sigma^2) is refuted.
"""
import sympy
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)


def randomized_response(data, eps):
    """Report the one record's bit, kept with probability e^eps/(1 + e^eps)."""
    return dp.randomized_response(data[0], eps)


randomized_response_renyi = dp.spec(
    randomized_response,
    name="randomized_response_renyi",
    universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
    grid={eps: [Rational(1, 2), 1, 2]},
    doc="Randomized response: exact Rényi divergences and zCDP.",
    claims=[dp.renyi(2, sympy.log(2 * sympy.cosh(eps) - 1), id="renyi2_exact"),
            dp.renyi(2, eps, id="renyi2_below_eps"),
            dp.renyi(2, eps ** 2 / 4, id="renyi2_too_small", expect="refuted"),
            dp.zcdp(eps ** 2 / 2, id="zcdp_from_pure"),
            dp.zcdp(eps ** 2 / 8, id="zcdp_too_small", expect="refuted")],
)


def geometric_count(data, eps):
    """The number of ones plus two-sided geometric noise, a = e^eps (Delta = 1)."""
    return dp.geometric(sum(data), dp.exp(eps))


geometric_renyi = dp.spec(
    geometric_count,
    name="geometric_renyi",
    universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
    grid={eps: [Rational(1, 2), 1]},
    doc="The geometric mechanism: D_2 in closed form and D_3 <= eps for every eps; a bound true on the grid only.",
    claims=[dp.renyi(2, sympy.log(2 * sympy.cosh(eps) - 1), id="renyi2_exact"),
            dp.renyi(3, eps, id="renyi3_below_eps"),
            dp.renyi(2, eps - sympy.log(Rational(5, 4)), id="renyi2_off_grid", expect="refuted")],
)


# ----- Laplace: q(X) + Lap(Delta/eps), Delta derived from the query -------------------------

mean_of_bits = dp.mean(lambda v: v, domain=dp.interval(0, 1))


def noisy_mean(data, eps):
    """The mean of two bits plus Laplace noise of scale Delta/eps (Delta = 1/2, derived)."""
    return dp.laplace_mechanism(mean_of_bits, data, eps, neighbours=dp.REPLACE_ONE)


def laplace_d2(t):
    """Mironov's D_2 of Laplace laws whose centres are t scales apart."""
    return sympy.log(Rational(2, 3) * sympy.exp(t) + Rational(1, 3) * sympy.exp(-2 * t))


laplace_renyi = dp.spec(
    noisy_mean,
    name="laplace_renyi",
    universe=dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE),
    grid={eps: [Rational(1, 2), 1]},
    doc="The Laplace mechanism's exact D_2, and its zCDP level from pure DP.",
    claims=[dp.renyi(2, laplace_d2(eps), id="renyi2_closed_form"),
            dp.renyi(2, eps ** 2 / 4, id="renyi2_too_small", expect="refuted"),
            dp.zcdp(eps ** 2 / 2, id="zcdp_from_pure")],
)


# ----- Gaussian: a count plus N(0, sigma^2) -----------------------------------------------------

rho = dp.symbol("rho", positive=True)
sigma = dp.symbol("sigma", positive=True)


def gaussian_count(data, rho):
    """The number of ones plus N(0, sigma^2), sigma = Delta/sqrt(2 rho) for the count's Delta = 1."""
    return dp.gaussian(sum(data), 1 / dp.sqrt(2 * rho))


def gaussian_sigma(data, sigma):
    """The number of ones plus N(0, sigma^2)."""
    return dp.gaussian(sum(data), sigma)


COUNT_UNIVERSE = dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE)

gaussian_zcdp = dp.spec(
    gaussian_count,
    name="gaussian_zcdp",
    universe=COUNT_UNIVERSE,
    grid={rho: [Rational(1, 10), Rational(1, 2)]},
    doc="sigma = Delta/sqrt(2 rho) gives rho-zCDP, and D_2 = 2 rho.",
    claims=[dp.zcdp(rho, id="zcdp"), dp.renyi(2, 2 * rho, id="renyi2")],
)

gaussian_rho = dp.spec(
    gaussian_sigma,
    name="gaussian_rho",
    universe=COUNT_UNIVERSE,
    grid={sigma: [1, 2]},
    doc="rho = Delta^2/(2 sigma^2) is the Gaussian's zCDP level; Delta^2/(4 sigma^2) is mis-stated.",
    claims=[dp.zcdp(1 / (2 * sigma ** 2), id="zcdp"),
            dp.zcdp(1 / (4 * sigma ** 2), id="zcdp_half", expect="refuted")],
)
