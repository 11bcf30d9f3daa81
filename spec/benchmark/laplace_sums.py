"""The Laplace mechanism and the sum mechanisms of the benchmark (DP-Sniper, CheckDP, ShadowDP).

* ``laplace_mechanism`` -- a scalar answer a plus Lap(1/eps); neighbours
  |a - a'| <= 1.  DP-Sniper ``LaplaceMechanism`` (wrapper
  ``laplace_mechanism``); Dwork et al. (TCC 2006).  Claimed eps; true:
  exactly eps.  CORRECT.
* ``laplace_parallel`` -- n independent releases a + Lap(1/eps) of the same
  scalar.  DP-Sniper ``LaplaceParallel`` (n = 20, eps = 0.005; no claim in
  the artifact).  True: exactly n*eps by composition, tight because when
  all n samples lie on one side of both centres the density ratio is
  e^(n eps).  Claims: n*eps holds, and (n - 1)*eps is refuted (tightness).
* ``partial_sum`` -- sum_i q_i + Lap(1/eps) under one-differ neighbours
  (one entry moves by at most 1: L1 distance <= 1).  CheckDP/ShadowDP
  ``partialsum``, DP-Finder ``sum``.  Claimed eps; true: exactly eps.
  CORRECT.
* ``bad_partial_sum`` -- sum_i q_i + Lap(1/(2 eps)).  CheckDP
  ``badpartialsum``.  Claimed eps; true: exactly 2*eps.  BROKEN.

Instances: the scalar mechanisms take a in {0, 1, 2} (DP-Sniper's pairs
(1, 0) and (1, 2)); DP-Sniper's own LaplaceParallel instance n = 20,
eps = 1/200 is used as it is (20 released values are cheap: the loss
factorises).  The sums take m = 3 entries in {0, 1} under ``dp.l1_one``.

Not here: PrefixSum (ShadowDP ``prefixsum``, DP-Sniper ``PrefixSum``) and
SmartSum / BadSmartSum (CheckDP) add noisy values to each other
(s = s + q_i + Lap), which the engine does not support: only exact shifts of
a noisy value are allowed.
"""
from fractions import Fraction

import dpverify as dp

eps = dp.symbol("eps", positive=True)
SCALAR = dp.answers([0, 1, 2], 1, neighbours=dp.linf_one)
SUMS = dp.answers([0, 1], 3, neighbours=dp.l1_one)
N_PARALLEL = 20


def laplace_mechanism(q, eps):
    """The scalar answer plus Lap(1/eps)."""
    return (dp.laplace(q[0], 1 / eps),)


def laplace_parallel(q, eps):
    """N_PARALLEL independent releases of the scalar answer plus Lap(1/eps)."""
    return tuple(dp.laplace(q[0], 1 / eps) for _ in range(N_PARALLEL))


def partial_sum(q, eps):
    """The sum of the entries plus Lap(1/eps)."""
    return (dp.laplace(sum(q), 1 / eps),)


def bad_partial_sum(q, eps):
    """The sum of the entries plus Lap(1/(2 eps)): half the scale that eps needs."""
    return (dp.laplace(sum(q), 1 / (2 * eps)),)


laplace = dp.spec(
    laplace_mechanism,
    universe=SCALAR,
    grid={eps: [Fraction(1, 2), 1]},
    claims=[dp.private(eps)],
    doc="a + Lap(1/eps) with |a - a'| <= 1 (DP-Sniper LaplaceMechanism): eps-DP, tight.",
)

parallel = dp.spec(
    laplace_parallel,
    universe=SCALAR,
    grid={eps: [Fraction(1, 200)]},
    claims=[dp.private(N_PARALLEL * eps, id="n_eps"),
            dp.private((N_PARALLEL - 1) * eps, id="below_n_eps", expect="refuted")],
    doc="20 independent a + Lap(1/eps) (DP-Sniper LaplaceParallel, eps = 0.005): exactly 20*eps = 0.1.",
)

sum_correct = dp.spec(
    partial_sum,
    universe=SUMS,
    grid={eps: [Fraction(1, 2), 1]},
    claims=[dp.private(eps)],
    doc="sum(q) + Lap(1/eps) under one-differ neighbours (CheckDP/ShadowDP partialsum): eps-DP.",
)

sum_broken = dp.spec(
    bad_partial_sum,
    universe=SUMS,
    grid={eps: [Fraction(1, 2), 1]},
    claims=[dp.private(eps, expect="refuted"), dp.private(2 * eps, id="true_level")],
    doc="sum(q) + Lap(1/(2 eps)) (CheckDP badpartialsum): claimed eps, true 2*eps.",
)
