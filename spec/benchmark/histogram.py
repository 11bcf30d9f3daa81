"""The noisy histogram, correct and with the wrong scale (Ding et al. CCS'18, Algs. 9 and 10).

Input: a histogram q = (q_1..q_m) of counts; neighbouring databases differ
in one record, so the histograms are at L1 distance at most 1 (one bin moves
by at most 1: "ONE_DIFFER" in StatDP/DP-Sniper, ``dp.l1_one`` here).  Both
mechanisms release the whole noisy vector (v_1..v_m), v_i = q_i + Lap(b),
as DP-Sniper does (StatDP releases only v_1, a post-processing):

* ``noisy_hist`` -- b = 1/eps.  Ding et al. Alg. 9; StatDP ``histogram``,
  DP-Sniper ``NoisyHist1``.  Claimed eps; true: exactly eps (the Laplace
  mechanism with L1 sensitivity 1).  CORRECT.
* ``noisy_hist_eps_scale`` -- b = eps instead of 1/eps.  Ding et al.
  Alg. 10; StatDP ``histogram_eps``, DP-Sniper ``NoisyHist2``.  Claimed eps;
  true: exactly 1/eps (sensitivity over scale), so it violates its claim
  iff eps < 1 (at StatDP's eps = 1.5 it is 0.667-DP and the claim holds).
  BROKEN for eps < 1.

Instance: m = 3 bins with counts in {0, 1} (8 histograms).  The correct
histogram is checked at eps = 1/2 and 1; the wrong-scale one only at
eps = 1/3 and 1/2, where 1/eps > eps (at eps = 1 it is exactly 1-DP and
the expected refutation would rightly not happen).  Its second claim is the
true level 1/eps, which holds with equality.
"""
from fractions import Fraction

import dpverify as dp

eps = dp.symbol("eps", positive=True)
UNIVERSE = dp.answers([0, 1], 3, neighbours=dp.l1_one)


def noisy_hist(q, eps):
    """Every bin plus independent Lap(1/eps)."""
    return tuple(dp.laplace(c, 1 / eps) for c in q)


def noisy_hist_eps_scale(q, eps):
    """Every bin plus independent Lap(eps): the scale eps where 1/eps was meant."""
    return tuple(dp.laplace(c, eps) for c in q)


histogram = dp.spec(
    noisy_hist,
    universe=UNIVERSE,
    grid={eps: [Fraction(1, 2), 1]},
    claims=[dp.private(eps)],
    doc="Noisy histogram with Lap(1/eps) per bin (Ding et al. Alg. 9, StatDP histogram, "
        "DP-Sniper NoisyHist1): eps-DP, tight.",
)

histogram_eps_scale = dp.spec(
    noisy_hist_eps_scale,
    universe=UNIVERSE,
    grid={eps: [Fraction(1, 3), Fraction(1, 2)]},
    claims=[dp.private(eps, expect="refuted"), dp.private(1 / eps, id="true_level")],
    doc="Noisy histogram with Lap(eps) per bin (Ding et al. Alg. 10, StatDP histogram_eps, "
        "DP-Sniper NoisyHist2): claimed eps, true 1/eps; broken for eps < 1.",
)
