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

OpenDP's randomized response (``make_randomized_response_bool``) is audited in
tests/test_audit_statistical.py, not here: its samplers cannot be seeded (``unseeded=True``), so
its numbers are not reproducible, and opendp is not (yet) a dependency; there it is consistent
with the spec, and its 2*eps misuse refuted.
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
