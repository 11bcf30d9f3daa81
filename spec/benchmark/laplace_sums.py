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

* ``prefix_sum`` -- every prefix sum s_k = sum_{i <= k} (q_i + Lap(1/eps)).
  ShadowDP ``prefixsum``, DP-Sniper ``PrefixSum``.  The released sums are an
  invertible linear map of independent Laplace values, so their density is
  exact (the engine works in the coordinates w = A^-1 y).  Claimed eps under
  one-differ neighbours (ShadowDP): true exactly eps.  Under the
  all-differ (ell_inf) pairs DP-Sniper runs it with, the true level is
  exactly m*eps (every noise term's centre moves): ``prefix_sum_all_differ``
  claims m*eps (holds) and eps (refuted).
* ``smart_sum`` -- the two-level counter (Chan, Shi and Song 2011) in
  CheckDP's form with blocks of M = 2: inside a block next = next + q_i +
  Lap(1/eps), at a block's end next = (exact block sum) + q_i + Lap(1/eps);
  every next is released.  CheckDP ``smartsum``: claimed 2*eps (each entry
  enters at most two noisy releases).  CORRECT.
* ``bad_smart_sum`` -- the same without noise at block ends: the block's
  exact sum is released.  CheckDP ``badsmartsum``: claimed 2*eps; true
  infinite (the output's support moves with q).  BROKEN.

Instances: m = 3 entries for the prefix sums, m = 4 for the smart sums
(two blocks), entries in {0, 1}.
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


def prefix_sum(q, eps):
    """Every prefix sum of the noisy entries q_i + Lap(1/eps)."""
    running, out = 0, []
    for answer in q:
        running = running + dp.laplace(answer, 1 / eps)
        out.append(running)
    return tuple(out)


def smart_sum(q, eps):
    """CheckDP's SmartSum with blocks of 2: running noisy sums inside a block, a fresh noisy block sum at its end."""
    return _smart_sum(q, eps, noisy_block_ends=True)


def _smart_sum(q, eps, noisy_block_ends):
    block, total, released = 2, 0, []
    current = 0
    for i, answer in enumerate(q):
        if (i + 1) % block == 0:
            current = total + answer + (dp.laplace(0, 1 / eps) if noisy_block_ends else 0)
            total = 0
        else:
            current = current + dp.laplace(answer, 1 / eps)
            total = total + answer
        released.append(current)
    return tuple(released)


def bad_smart_sum(q, eps):
    """CheckDP's BadSmartSum: no noise at block ends, so the block's exact sum is released."""
    return _smart_sum(q, eps, noisy_block_ends=False)


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

prefix_one_differ = dp.spec(
    prefix_sum,
    universe=SUMS,
    grid={eps: [Fraction(1, 2), 1]},
    claims=[dp.private(eps)],
    doc="All prefix sums of q_i + Lap(1/eps) under one-differ neighbours (ShadowDP prefixsum): eps-DP.",
)

prefix_all_differ = dp.spec(
    prefix_sum,
    name="prefix_sum_all_differ",
    universe=dp.answers([0, 1], 3, neighbours=dp.linf_one),
    grid={eps: [Fraction(1, 2)]},
    claims=[dp.private(eps, expect="refuted"), dp.private(3 * eps, id="true_level")],
    doc="The prefix sums under DP-Sniper's all-differ pairs: exactly m*eps = 3*eps, so eps is refuted.",
)

smart = dp.spec(
    smart_sum,
    universe=dp.answers([0, 1], 4, neighbours=dp.l1_one),
    grid={eps: [Fraction(1, 2)]},
    claims=[dp.private(2 * eps)],
    doc="CheckDP smartsum (blocks of 2, m = 4): claimed 2*eps.",
)

smart_broken = dp.spec(
    bad_smart_sum,
    universe=dp.answers([0, 1], 4, neighbours=dp.l1_one),
    grid={eps: [Fraction(1, 2)]},
    claims=[dp.private(2 * eps, expect="refuted")],
    doc="CheckDP badsmartsum: the exact block sums are released; claimed 2*eps, true infinite.",
)
