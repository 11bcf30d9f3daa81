"""Black boxes: code drawing from its own seeded generator, audited by sampling against the spec's exact law.

``dp.black_box(fn)`` declares code the engine cannot follow (here: numpy code that builds its own
``np.random.default_rng(seed)``, as a deployed service would; a library's sampler in Rust is the
same case).  ``dpverify check`` runs it ``samples`` times per dataset with reproducible seeds and
tests the samples against the exact law of the spec program (computed by the engine):

* ``dp.conforms(rr)``: per dataset and output an exact binomial test (Clopper-Pearson) of the
  output's frequency against its exact probability, Bonferroni-corrected over all of them;
* ``dp.private(eps)``: the spec's exact table names the (X, X', output) cells of highest loss, and
  the Clopper-Pearson bounds on the code's two probabilities give a lower confidence bound on
  the code's epsilon -- no samples spent choosing an event.

Verdicts: ``consistent`` (no evidence against the claim at overall error probability 1e-9; not a
proof) or ``refuted`` at that error probability, confirmed by a re-run with fresh seeds.

Findings (seed 0, 20,000 samples per dataset and run):

* Textbook randomized response with its own generator is consistent with the spec's law and
  with eps-DP at eps = 1/2 and 1.
* Randomized response with 2*eps is refuted on both: its keep frequency (about 0.73 at eps = 1/2)
  lies far outside the spec's 0.6225 interval, and the lower confidence bound on its epsilon
  (about 0.9 at eps = 1/2) exceeds eps.

Further black boxes, each with its own ``np.random.default_rng(seed)`` (same findings at seed 0):

* Noisy sum with numpy Laplace noise (continuous outputs): consistent with ``dp.laplace(sum, 1/eps)``
  (Kolmogorov-Smirnov against the exact CDF, DKW-Massart thresholds) and with eps-DP (half-line
  events chosen from the exact CDFs); the sensitivity-2 query (twice the sum, noise for 1) and the
  scale eps instead of 1/eps are refuted on both.
* Noisy sum with two-sided geometric noise built from two numpy geometrics (infinite integer
  support): consistent with ``dp.geometric(sum, e^eps)`` -- the spec's tails beyond the centres
  are lumped exact cells, never enumerated -- and with eps-DP; with e^(2 eps) refuted on both.
* Randomized response that leaks its bit with probability 1/20, claimed (eps, 1/20)-DP:
  consistent (the events include the spec's delta witness); leaking with probability 3/20 is
  refuted at (eps, 1/20).

Libraries are audited in their own files: OpenDP (whose samplers cannot be seeded:
``unseeded=True``) in spec/audits/opendp_mechanisms.py, diffprivlib in
spec/audits/diffprivlib_mechanisms.py.
"""
import math
from fractions import Fraction

import numpy as np

import dpverify as dp

eps = dp.symbol("eps", positive=True)
BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)
GRID = {eps: [Fraction(1, 2), 1]}


def rr(data, eps):
    """The spec: keep the bit with probability e^eps/(1 + e^eps)."""
    return dp.randomized_response(data[0], eps)


def seeded_rr(data, eps, seed):
    """Textbook randomized response drawing from a generator it builds from a seed."""
    rng = np.random.default_rng(seed)
    keep = math.exp(eps) / (1 + math.exp(eps))
    return data[0] if rng.random() < keep else 1 - data[0]


def seeded_rr_double_eps(data, eps, seed):
    """BROKEN: e^(2 eps) where e^eps belongs (a 2*eps mechanism claimed as eps)."""
    rng = np.random.default_rng(seed)
    keep = math.exp(2 * eps) / (1 + math.exp(2 * eps))
    return data[0] if rng.random() < keep else 1 - data[0]


randomized_response = dp.spec(
    dp.black_box(seeded_rr, spec_program=rr), universe=BIT, grid=GRID,
    claims=[dp.conforms(rr), dp.private(eps)],
    doc="Textbook randomized response with its own seeded generator, sampled: consistent with the spec's law "
        "and with eps-DP.")

randomized_response_double_eps = dp.spec(
    dp.black_box(seeded_rr_double_eps, spec_program=rr), universe=BIT, grid=GRID,
    claims=[dp.conforms(rr, expect="refuted"), dp.private(eps, expect="refuted")],
    doc="Randomized response with 2*eps, sampled: refuted on conformance and on eps-DP at error probability 1e-9.")


# -- continuous outputs: a noisy sum with numpy Laplace noise -------------------------------------

PAIRS = dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE)
HALF = {eps: [Fraction(1, 2)]}


def noisy_sum(data, eps):
    """The spec: the sum (sensitivity 1) plus Laplace noise of scale 1/eps."""
    return dp.laplace(sum(data), 1 / eps)


def seeded_laplace(data, eps, seed):
    """Textbook numpy Laplace mechanism."""
    return float(sum(data) + np.random.default_rng(seed).laplace(0.0, 1 / eps))


def seeded_laplace_sensitivity_2(data, eps, seed):
    """BROKEN: a query of sensitivity 2 (twice the sum) with the noise of sensitivity 1."""
    return float(2 * sum(data) + np.random.default_rng(seed).laplace(0.0, 1 / eps))


def seeded_laplace_scale_eps(data, eps, seed):
    """BROKEN: scale eps where 1/eps belongs."""
    return float(sum(data) + np.random.default_rng(seed).laplace(0.0, eps))


def _laplace_spec(code, expect):
    return dp.spec(dp.black_box(code, spec_program=noisy_sum, samples=4_000), universe=PAIRS, grid=HALF,
                   claims=[dp.conforms(noisy_sum, expect=expect), dp.private(eps, expect=expect)],
                   doc=code.__doc__)


laplace_numpy = _laplace_spec(seeded_laplace, None)
laplace_numpy_sensitivity_2 = _laplace_spec(seeded_laplace_sensitivity_2, "refuted")
laplace_numpy_scale_eps = _laplace_spec(seeded_laplace_scale_eps, "refuted")


# -- infinite discrete support: two-sided geometric noise ------------------------------------------

def geometric_sum(data, eps):
    """The spec: the sum plus two-sided geometric noise, P(k) proportional to e^(-eps |k|)."""
    return dp.geometric(sum(data), dp.exp(eps))


def seeded_geometric(data, eps, seed):
    """Two-sided geometric noise as the difference of two numpy geometric draws."""
    rng = np.random.default_rng(seed)
    p = 1 - math.exp(-eps)
    return sum(data) + int(rng.geometric(p) - rng.geometric(p))


def seeded_geometric_double_eps(data, eps, seed):
    """BROKEN: e^(-2 eps |k|), noise for 2 eps."""
    rng = np.random.default_rng(seed)
    p = 1 - math.exp(-2 * eps)
    return sum(data) + int(rng.geometric(p) - rng.geometric(p))


geometric_numpy = dp.spec(
    dp.black_box(seeded_geometric, spec_program=geometric_sum, samples=8_000), universe=PAIRS, grid=HALF,
    claims=[dp.conforms(geometric_sum), dp.private(eps)], doc=seeded_geometric.__doc__)

geometric_numpy_double_eps = dp.spec(
    dp.black_box(seeded_geometric_double_eps, spec_program=geometric_sum, samples=8_000), universe=PAIRS,
    grid=HALF, claims=[dp.conforms(geometric_sum, expect="refuted"), dp.private(eps, expect="refuted")],
    doc=seeded_geometric_double_eps.__doc__)


# -- (eps, delta): randomized response that sometimes leaks -------------------------------------

def leaky_rr(data, eps):
    """The spec, (eps, 1/20)-DP: with probability 1/20 the bit itself (tagged), else randomized response."""
    return ("leak", data[0]) if dp.bernoulli(Fraction(1, 20)) else ("rr", dp.randomized_response(data[0], eps))


def _leaking(leak):
    def code(data, eps, seed):
        rng = np.random.default_rng(seed)
        if rng.random() < leak:
            return ("leak", data[0])
        keep = math.exp(eps) / (1 + math.exp(eps))
        return ("rr", data[0] if rng.random() < keep else 1 - data[0])
    return code


seeded_leaky_rr = _leaking(0.05)
seeded_leaky_rr.__name__ = "seeded_leaky_rr"
seeded_leaky_rr_three_times = _leaking(0.15)
seeded_leaky_rr_three_times.__name__ = "seeded_leaky_rr_three_times"

leaky_randomized_response = dp.spec(
    dp.black_box(seeded_leaky_rr, spec_program=leaky_rr, samples=8_000), universe=BIT, grid=HALF,
    claims=[dp.conforms(leaky_rr), dp.private(eps, Fraction(1, 20))],
    doc="Randomized response leaking its bit with probability 1/20: consistent with (eps, 1/20)-DP.")

leaky_randomized_response_three_times = dp.spec(
    dp.black_box(seeded_leaky_rr_three_times, spec_program=leaky_rr, samples=8_000), universe=BIT, grid=HALF,
    claims=[dp.private(eps, Fraction(1, 20), expect="refuted")],
    doc="BROKEN: leaks with probability 3/20, claimed (eps, 1/20)-DP: refuted.")
