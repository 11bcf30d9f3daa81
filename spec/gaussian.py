"""The Gaussian mechanism: q(X) + N(0, sigma^2) with the classical calibration.

For a query with L2 sensitivity Delta and 0 < eps < 1, sigma = Delta sqrt(2 ln(1.25/delta))/eps
gives (eps, delta)-DP (Dwork and Roth, "The Algorithmic Foundations of Differential
Privacy", Theorem A.1).  The exact privacy curve of a Gaussian release whose centres are
D = ||q(X) - q(X')||_2 / sigma apart is delta(eps) = Phi(D/2 - eps/D) - e^eps Phi(-D/2 - eps/D)
(Balle and Wang, "Improving the Gaussian mechanism", ICML 2018, Theorem 8); dpverify
evaluates it in certified interval arithmetic for every neighbouring pair and reports
the achieved delta next to the claimed one (the classical calibration is loose).

Instance: a histogram of 2 bins with counts in {0, 1, 2}, add/remove one record
(||q - q'||_1 <= 1, so Delta_2 = 1).  Claims:

* ``classical`` -- (eps, delta)-DP with delta = 10^-5 (verified; achieved delta far below);
* ``half_sigma`` (mutant, expected refuted) -- the same claim with sigma halved;
* ``pure`` (expected refuted) -- no Gaussian release is eps-DP for any finite eps: the
  density ratio grows without bound in the tails, shown by a witness value.
"""
import sympy

import dpverify as dp

eps = dp.symbol("eps", positive=True)
DELTA = sympy.Rational(1, 10 ** 5)


def sigma(eps):
    return sympy.sqrt(2 * sympy.log(sympy.Rational(5, 4) / DELTA)) / eps


def gaussian_histogram(q, eps):
    """Each count plus N(0, sigma^2), sigma the classical calibration for (eps, 10^-5)."""
    return tuple(dp.gaussian(c, sigma(eps)) for c in q)


def half_sigma_histogram(q, eps):
    """Mutant: half the classical sigma."""
    return tuple(dp.gaussian(c, sigma(eps) / 2) for c in q)


UNIVERSE = dp.answers([0, 1, 2], 2, neighbours=dp.l1_one)
GRID = {eps: [sympy.Rational(1, 2), sympy.Rational(9, 10)]}

gaussian_mechanism = dp.spec(
    gaussian_histogram, name="gaussian_mechanism", universe=UNIVERSE, grid=GRID,
    doc="q(X) + N(0, sigma^2), sigma = sqrt(2 ln(1.25/delta))/eps, is (eps, delta)-DP for eps < 1.",
    claims=[dp.private(eps, DELTA, id="classical"), dp.private(eps, id="pure", expect="refuted")],
)

gaussian_half_sigma = dp.spec(
    half_sigma_histogram, name="gaussian_half_sigma", universe=UNIVERSE, grid=GRID,
    doc="Mutant: sigma halved; the (eps, 10^-5) claim must be refuted.",
    claims=[dp.private(eps, DELTA, id="classical", expect="refuted")],
)
