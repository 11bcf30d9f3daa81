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

* ``noisy_hist_threshold`` -- the thresholded histogram: a bin is released
  only when its noisy count v_i exceeds a public threshold tau = 1, and as
  None otherwise (the shape of stability-based histograms, here over a fixed
  domain).  Post-processing of the noisy histogram, so eps-DP with Lap(1/eps);
  the released values are restricted to (tau, oo), the others are integrated
  out exactly.  Claimed eps: tight.  Its mutant with noise only on the
  released bins' comparison -- comparing the noisy count but releasing the
  exact count -- is infinitely bad: ``noisy_hist_threshold_exact_release``.

* ``noisy_hist_above`` -- only which bins' noisy counts exceed tau = 1 (a
  tuple of booleans).  Each probability is 1/2 e^((q-1) eps) or
  1 - 1/2 e^((1-q) eps), a rational function of e^eps, so the claim eps is
  proved for every eps, not only on the grid.

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


def noisy_hist_threshold(q, eps):
    """Every bin's noisy count, released when it exceeds the threshold 1 (None otherwise)."""
    out = []
    for c in q:
        v = dp.laplace(c, 1 / eps)
        out.append(v if v > 1 else None)
    return tuple(out)


def noisy_hist_above(q, eps):
    """Which bins' noisy counts (Lap(1/eps)) exceed the threshold 1."""
    return tuple(dp.laplace(c, 1 / eps) > 1 for c in q)


def noisy_hist_threshold_exact_release(q, eps):
    """Mutant: the noisy count decides, but the exact count is released."""
    return tuple(c if dp.laplace(c, 1 / eps) > 1 else None for c in q)


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

histogram_threshold = dp.spec(
    noisy_hist_threshold,
    universe=UNIVERSE,
    grid={eps: [Fraction(1, 2), 1]},
    claims=[dp.private(eps)],
    doc="Thresholded noisy histogram (release v_i only when v_i > 1): eps-DP, tight.",
)

histogram_threshold_exact_release = dp.spec(
    noisy_hist_threshold_exact_release,
    universe=UNIVERSE,
    grid={eps: [Fraction(1, 2)]},
    claims=[dp.private(eps, expect="refuted")],
    doc="Mutant: the noisy count is compared, the exact count released: not eps-DP for any eps.",
)

histogram_above = dp.spec(
    noisy_hist_above,
    universe=UNIVERSE,
    grid={eps: [Fraction(1, 2), 1]},
    claims=[dp.private(eps)],
    doc="Which bins of the noisy histogram exceed 1: eps-DP, proved for every eps.",
)
