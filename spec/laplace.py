"""The Laplace distribution and mechanism, catalogue entry 6.

Laplace noise with scale b > 0 has density p(x) = (1/(2b)) e^(-|x|/b) on the
real line; the mechanism releases q(X) + Lap(Delta/eps).  Source: Dwork,
McSherry, Nissim and Smith, "Calibrating noise to sensitivity in private data
analysis" (TCC 2006); Dwork and Roth, "The Algorithmic Foundations of
Differential Privacy" (2014), Fact 3.7.

Claims in this file so far:

* ``laplace_tail`` -- the tail identity P[|Lap(b)| > t] = e^(-t/b) for every
  b > 0 and t >= 0.  By symmetry of the density the tail is twice the upper
  one, so the claim is stated as the identity
  2 * Integral_t^oo (1/(2b)) e^(-x/b) dx = e^(-t/b),
  with the integral left unevaluated in the spec: the check evaluates it with
  sympy and proves the identity for all b and t.

* ``mean_sensitivity`` -- the mean of m values in [0, 1] has sensitivity 1/m
  (derived, for both relations);
* ``laplace_mechanism`` -- the mean of m = 3 values in {0, 1/2, 1} released
  with Lap(Delta/eps), Delta = 1/m derived from the query by
  ``dp.laplace_mechanism`` (not typed in), is eps-DP: the loss sup_v ln(p_X(v)/p_X'(v)) is derived
  from the densities for every neighbouring pair (|q - q'|/b, at most
  (1/m)/(1/(m eps)) = eps) and proved for every eps; claiming eps/2 is refuted
  with a witness value v.
"""
import sympy

import dpverify as dp

b = dp.symbol("b", positive=True)
t = dp.symbol("t", nonnegative=True)
x = sympy.Symbol("x", real=True)  # integration variable


def density(value, scale):
    """The Laplace density (1/(2 scale)) e^(-|value|/scale)."""
    return sympy.exp(-sympy.Abs(value) / scale) / (2 * scale)


def two_sided_tail(threshold, scale):
    """P[|Lap(scale)| > threshold] = 2 * integral of the density over (threshold, oo), unevaluated."""
    return 2 * sympy.Integral(density(x, scale), (x, threshold, sympy.oo))


laplace_tail = dp.spec(
    name="laplace_tail",
    doc="P[|Lap(b)| > t] = e^(-t/b) for all b > 0 and t >= 0.",
    claims=[dp.identity(two_sided_tail(t, b), sympy.exp(-t / b), id="tail")],
)


# ----- the sensitivity of a mean of values in [0, 1] (derived) ---------------------------

m = dp.symbol("m", integer=True, positive=True)

mean_of_unit_values = dp.mean(lambda v: v, domain=dp.interval(0, 1))
"""q(X) = (1/m) sum_i x_i for m real records x_i in [0, 1]."""

mean_sensitivity = dp.spec(
    name="mean_sensitivity",
    doc=("The mean of m values in [0, 1] has sensitivity 1/m, the Delta of q(X) + Lap(Delta/eps): "
         "derived from the range [0, 1] of the record term (sympy maximisation over the interval). "
         "Replace-one: one value moves by at most 1, the mean by 1/m.  Add/remove (X of size m, "
         "X' = X minus v, m >= 2): q(X) - q(X') = (v - mean of the others)/m, again at most 1/m."),
    claims=[dp.sensitivity(mean_of_unit_values, 1 / m, n=m, neighbours=dp.REPLACE_ONE, id="mean_replace_one"),
            dp.sensitivity(mean_of_unit_values, 1 / m, n=m, neighbours=dp.ADD_REMOVE, id="mean_add_remove")],
)


# ----- the mechanism: q(X) + Lap(Delta/eps) ---------------------------------------------------

eps = dp.symbol("eps", positive=True)
VALUES = (0, sympy.Rational(1, 2), 1)


def noisy_mean(data, eps):
    """The mean of the records plus Laplace noise of scale Delta/eps, Delta = 1/m derived from the query."""
    return dp.laplace_mechanism(mean_of_unit_values, data, eps, neighbours=dp.REPLACE_ONE)


laplace_mechanism = dp.spec(
    noisy_mean,
    name="laplace_mechanism",
    doc="q(X) + Lap(Delta/eps) with q the mean of m = 3 values in [0, 1] (Delta = 1/m) is eps-DP.",
    universe=dp.universe(VALUES, n=3, neighbours=dp.REPLACE_ONE),
    grid={eps: [sympy.Rational(1, 2), 1]},
    claims=[dp.private(eps, id="eps_dp"), dp.private(eps / 2, id="half_eps", expect="refuted")],
)
