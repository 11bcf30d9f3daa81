"""Report noisy max, the benchmark family of the DP testers (StatDP, DP-Sniper, CheckDP, DP-Finder).

Input: a vector q = (q_1..q_m) of query answers; neighbours move every answer
by at most 1 (||q - q'||_inf <= 1, "ALL_DIFFER" in StatDP/CheckDP,
``component_wise_neighborhood`` in DP-Sniper).  Each mechanism adds
independent noise of scale 2/eps to every answer and reports the argmax
(first index on ties, a null event for continuous noise):

* ``rnm_laplace`` -- noise Lap(2/eps), returns the index.  Ding et al.
  (CCS'18, "Detecting violations of differential privacy") Alg. 5; StatDP
  ``noisy_max_v1a``, DP-Sniper ``ReportNoisyMax1``, CheckDP/ShadowDP
  ``noisymax``, DP-Finder ``reportNoisyMax``.  Claimed eps; true: eps-DP
  (Dwork and Roth 2014, Claim 3.9, with scale 2/eps covering ell_inf
  changes).  CORRECT.
* ``rnm_exponential`` -- noise Exp(2/eps) (one-sided, mean 2/eps), returns
  the index.  Ding et al. Alg. 6; StatDP ``noisy_max_v2a``, DP-Sniper
  ``ReportNoisyMax2``, DP-Finder ``expMech``.  Claimed eps; true: eps-DP
  (it is the permute-and-flip mechanism, Ding et al. 2021).  CORRECT.
* ``rnm_laplace_value`` -- noise Lap(2/eps), returns the noisy maximum
  itself (not the index).  Ding et al. Alg. 7; StatDP ``noisy_max_v1b``,
  DP-Sniper ``ReportNoisyMax3``, CheckDP ``badnoisymax``.  Claimed eps;
  true: exactly m*eps/2 (upper bound: post-processing of m coordinates of
  cost eps/2 each; lower bound: q = 0^m against 1^m, the density of the max
  behaves like e^(m eps x/2) in the left tail).  BROKEN for m >= 3.
* ``rnm_exponential_value`` -- noise Exp(2/eps), returns the noisy maximum.
  Ding et al. Alg. 8; StatDP ``noisy_max_v2b``, DP-Sniper
  ``ReportNoisyMax4``.  Claimed eps; true: infinite (the output's support
  [max_i q_i, oo) moves with max q).  BROKEN for every m.

Instance: m = 3 answers.  The broken variants take answers in {0, 1}
(8 vectors): m = 3 is the smallest m at which the Laplace value variant
breaks (m*eps/2 > eps iff m >= 3), and the pair 0^3 / 1^3 that attains
m*eps/2 is in the universe; the exponential value variant breaks already
on 0^3 / (0, 0, 1).  The correct ones take answers in {0, 1, 2}
(27 vectors), so that pairs such as (1, 1, 1) / (0, 2, 2) -- one answer
down, the others up -- are present: there the exponential version attains
exactly eps (the bound is tight), the Laplace version about 0.81-0.85*eps.

Known limitation: a returned value that was also compared (the value
variants) can be refuted with a witness but not verified -- the engine
reports ``unknown`` for the true level 3*eps/2 of ``rnm_laplace_value``, so
that claim is left out.  The refutation's witness (0^3 / 1^3 at the
output -1) attains exactly the ratio e^(3*eps/2).
"""
from fractions import Fraction

import dpverify as dp

eps = dp.symbol("eps", positive=True)
GRID = {eps: [Fraction(1, 2), 1]}
M = 3
CORRECT = dp.answers([0, 1, 2], M, neighbours=dp.linf_one)
BROKEN = dp.answers([0, 1], M, neighbours=dp.linf_one)


def noisy_max(q, draw):
    """(i, v): the first index i of the largest noisy answer v = draw(q_i), drawn in order."""
    best, best_value = 0, draw(q[0])
    for i in range(1, len(q)):
        x = draw(q[i])
        if x > best_value:
            best, best_value = i, x
    return best, best_value


def rnm_laplace(q, eps):
    """Index of the largest q_i + Lap(2/eps) (first index on ties)."""
    return noisy_max(q, lambda answer: dp.laplace(answer, 2 / eps))[0]


def rnm_exponential(q, eps):
    """Index of the largest q_i + Exp(2/eps), one-sided exponential noise of mean 2/eps."""
    return noisy_max(q, lambda answer: dp.exponential_noise(answer, 2 / eps))[0]


def rnm_laplace_value(q, eps):
    """The largest q_i + Lap(2/eps) itself, the index withheld (the broken variant)."""
    return (noisy_max(q, lambda answer: dp.laplace(answer, 2 / eps))[1],)


def rnm_exponential_value(q, eps):
    """The largest q_i + Exp(2/eps) itself (the broken variant)."""
    return (noisy_max(q, lambda answer: dp.exponential_noise(answer, 2 / eps))[1],)


noisy_max_laplace = dp.spec(
    rnm_laplace,
    universe=CORRECT,
    grid=GRID,
    claims=[dp.private(eps)],
    doc="Report noisy max with Lap(2/eps), index only (Ding et al. Alg. 5, StatDP noisy_max_v1a, "
        "DP-Sniper ReportNoisyMax1): eps-DP.",
)

noisy_max_exponential = dp.spec(
    rnm_exponential,
    universe=CORRECT,
    grid=GRID,
    claims=[dp.private(eps)],
    doc="Report noisy max with Exp(2/eps), index only (Ding et al. Alg. 6, StatDP noisy_max_v2a, "
        "DP-Sniper ReportNoisyMax2): eps-DP.",
)

noisy_max_laplace_value = dp.spec(
    rnm_laplace_value,
    universe=BROKEN,
    grid=GRID,
    claims=[dp.private(eps, expect="refuted"), dp.private(M * eps / 2, id="true_level")],
    doc="Report noisy max with Lap(2/eps), returning the noisy value (Ding et al. Alg. 7, StatDP "
        "noisy_max_v1b, DP-Sniper ReportNoisyMax3): claimed eps, true m*eps/2 = 3*eps/2 here.",
)

noisy_max_exponential_value = dp.spec(
    rnm_exponential_value,
    universe=BROKEN,
    grid=GRID,
    claims=[dp.private(eps, expect="refuted")],
    doc="Report noisy max with Exp(2/eps), returning the noisy value (Ding et al. Alg. 8, StatDP "
        "noisy_max_v2b, DP-Sniper ReportNoisyMax4): claimed eps, true infinite.",
)
