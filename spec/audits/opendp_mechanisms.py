"""OpenDP's mechanisms (Rust samplers), audited by sampling against the catalogue's exact laws.

OpenDP draws its noise from the operating system's entropy, so its measurements cannot be seeded
and the exact audit cannot reach them: each is a ``dp.black_box(..., unseeded=True)``, sampled
as it is, its numbers not reproducible bit for bit.  Verdicts are stable all the same: a correct
mechanism is rejected with probability at most 1e-9 (the error probability, Bonferroni over every
test of a claim), and a misuse is refuted only when a re-run with fresh samples confirms it.

* ``dp.conforms(spec)``: per dataset and output an exact binomial test of the output's frequency
  against the spec's exact probability (discrete outputs: OpenDP's Laplace and geometric noise on
  integers are the discrete Laplace, i.e. the two-sided geometric of ``dp.geometric``);
* ``dp.private(eps)``: the spec's exact law names the (X, X', event) cells of highest loss, and
  Clopper-Pearson bounds on OpenDP's two frequencies bound its epsilon from below.

Mechanisms and the parameter that makes each eps-DP (OpenDP's own privacy maps say eps at d_in = 1,
rounded up by an ulp for randomized response):

* ``make_laplace`` / ``make_geometric`` on ``atom_domain(T=int)``, scale 1/eps: a count of
  bits (sensitivity 1) plus two-sided geometric noise with a = e^eps (spec/geometric.py);
* ``make_randomized_response_bool(p)``, p = e^eps/(1 + e^eps) (spec/randomized_response.py) and
  ``make_randomized_response((0, 1, 2), p)``, p = e^eps/(e^eps + 2) (``dp.randomized_response``
  over three values);
* ``make_noisy_max`` with ``max_divergence()`` and scale 2/eps on ``linf_distance``: report noisy
  max with exponential noise (spec/benchmark/noisy_max.py ``rnm_exponential``).

Findings (samples as declared below; not reproducible, stable at error probability 1e-9): every
mechanism is consistent with its spec's law and with eps-DP.  The misuse -- ``make_laplace`` with
scale eps where 1/eps belongs, at eps = 1/2 -- is refuted on both claims.
"""
import math
from fractions import Fraction
from functools import cache

import dpverify as dp

try:
    import opendp.prelude as dp_
except ImportError:
    raise dp.SpecError("spec/audits/opendp_mechanisms.py audits OpenDP, which is not installed",
                       "install the audit extra: pip install -e '.[audit]' (the dev install includes it)") from None

dp_.enable_features("contrib")

eps = dp.symbol("eps", positive=True)
GRID = {eps: [1]}
SAMPLES = 2_000
BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)
THREE = dp.universe([0, 1, 2], n=1, neighbours=dp.REPLACE_ONE)
ANSWERS = dp.answers([0, 1], 3, neighbours=dp.linf_one)
INTEGERS = dp_.atom_domain(T=int), dp_.absolute_distance(T=int)
VECTORS = dp_.vector_domain(dp_.atom_domain(T=int)), dp_.linf_distance(T=int), dp_.max_divergence()


def black_box(fn, spec_program):
    return dp.black_box(fn, spec_program=spec_program, samples=SAMPLES, unseeded=True)


@cache
def measurement(make, *args, **kwargs):
    """One OpenDP measurement per parameter value, built once (a call then costs ~60 us)."""
    return make(*args, **kwargs)


# -- the specs (the catalogue's programs) -------------------------------------------------------

def noisy_count(data, eps):
    """The count of ones plus two-sided geometric noise, a = e^eps (spec/geometric.py)."""
    return dp.geometric(sum(data), dp.exp(eps))


def rr(data, eps):
    """Warner's randomized response on a bit."""
    return dp.randomized_response(data[0], eps)


def rr_three(data, eps):
    """Randomized response over three values: keep with probability e^eps/(e^eps + 2)."""
    return dp.randomized_response(data[0], eps, values=(0, 1, 2))


def rnm_exponential(q, eps):
    """Report noisy max with Exp(2/eps) noise, the first index of the largest noisy answer."""
    best, best_value = 0, dp.exponential_noise(q[0], 2 / eps)
    for i in range(1, len(q)):
        x = dp.exponential_noise(q[i], 2 / eps)
        if x > best_value:
            best, best_value = i, x
    return best


# -- OpenDP ------------------------------------------------------------------------------------

def opendp_laplace(data, eps):
    """make_laplace on integers (the discrete Laplace), scale 1/eps, on the count of ones."""
    return measurement(dp_.m.make_laplace, *INTEGERS, scale=1 / eps)(sum(data))


def opendp_geometric(data, eps):
    """make_geometric on integers, scale 1/eps, on the count of ones."""
    return measurement(dp_.m.make_geometric, *INTEGERS, scale=1 / eps)(sum(data))


def opendp_rr_bool(data, eps):
    """make_randomized_response_bool with p = e^eps/(1 + e^eps)."""
    keep = math.exp(eps) / (1 + math.exp(eps))
    return int(measurement(dp_.m.make_randomized_response_bool, keep)(bool(data[0])))


def opendp_rr_three(data, eps):
    """make_randomized_response over [0, 1, 2] with p = e^eps/(e^eps + 2)."""
    keep = math.exp(eps) / (math.exp(eps) + 2)
    return measurement(dp_.m.make_randomized_response, (0, 1, 2), keep)(data[0])


def opendp_noisy_max(q, eps):
    """make_noisy_max (exponential noise under max_divergence) with scale 2/eps."""
    return measurement(dp_.m.make_noisy_max, *VECTORS, scale=2 / eps)(list(q))


def opendp_laplace_eps_scale(data, eps):
    """MISUSE: scale eps where 1/eps belongs (4x too little noise at eps = 1/2)."""
    return measurement(dp_.m.make_laplace, *INTEGERS, scale=eps)(sum(data))


laplace = dp.spec(
    black_box(opendp_laplace, noisy_count), universe=BIT, grid=GRID,
    claims=[dp.conforms(noisy_count), dp.private(eps)],
    doc="OpenDP make_laplace on integers, scale 1/eps: consistent with the two-sided geometric law and eps-DP.")

geometric = dp.spec(
    black_box(opendp_geometric, noisy_count), universe=BIT, grid=GRID,
    claims=[dp.conforms(noisy_count), dp.private(eps)],
    doc="OpenDP make_geometric on integers, scale 1/eps: consistent with the two-sided geometric law and eps-DP.")

randomized_response = dp.spec(
    black_box(opendp_rr_bool, rr), universe=BIT, grid=GRID,
    claims=[dp.conforms(rr), dp.private(eps)],
    doc="OpenDP make_randomized_response_bool: consistent with Warner's law and eps-DP.")

randomized_response_three = dp.spec(
    black_box(opendp_rr_three, rr_three), universe=THREE, grid=GRID,
    claims=[dp.conforms(rr_three), dp.private(eps)],
    doc="OpenDP make_randomized_response over three values: consistent with the k-ary law and eps-DP.")

noisy_max = dp.spec(
    black_box(opendp_noisy_max, rnm_exponential), universe=ANSWERS, grid=GRID,
    claims=[dp.conforms(rnm_exponential), dp.private(eps)],
    doc="OpenDP make_noisy_max (max_divergence, scale 2/eps): consistent with report noisy max with "
        "exponential noise and eps-DP.")

laplace_eps_scale = dp.spec(
    black_box(opendp_laplace_eps_scale, noisy_count), universe=BIT, grid={eps: [Fraction(1, 2)]},
    claims=[dp.conforms(noisy_count, expect="refuted"), dp.private(eps, expect="refuted")],
    doc="MISUSE: make_laplace with scale eps where 1/eps belongs: 2-DP at eps = 1/2, refuted on both claims.")
