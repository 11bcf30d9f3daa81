"""diffprivlib's mechanisms, audited exactly where their code allows and by sampling where it does not.

diffprivlib (IBM, 0.6.6) draws every uniform from ``random_state``, and its
``check_random_state(seed, secure=True)`` returns a ``random.SystemRandom`` instance unchanged.
``dp.implementation(fn, rng="system_random")`` passes a SystemRandom subclass whose ``random()``
is the engine's exact uniform on the 2^53-point grid (dpverify/dsl/generators.py), so the
library's own code, floats included, runs inside the engine unmodified:

* **Binary** (randomized response): ``unif_rv = random() * (np.exp(eps) + 1)``, flipped when
  ``unif_rv > np.exp(eps) + delta``: one scaled uniform compared with a float -- an exact count of
  grid points, computed with numpy's own float64 arithmetic.
* **Exponential**: ``rand <= cumulative_probabilities`` (a numpy array) is a sequence of exact
  comparisons of one uniform, then ``np.argmax``: exact.
* **Geometric** (``np.log(sgn * unif_rv)``) and **Laplace** (``log(1 - u) * cos(pi u)``, four
  uniforms) compute logarithms and cosines of uniforms, which the exact audit cannot follow (it
  refuses them with file and line): they are black boxes, built with
  ``random_state=np.random.RandomState(...)`` from the audit's seed (reproducible), sampled and
  tested against the spec's exact law (Geometric: exact binomial tests per output, the infinite
  tails pooled; Laplace, whose outputs are floats: Kolmogorov-Smirnov against the exact CDF).

Findings (exact, reproducible; witnesses in ``dpverify check --json``):

* **diffprivlib's Binary mechanism is not exactly eps-DP.**  At eps = 1/2, 1 and 2 the keep
  probability is #{k : (k/2^53)(fl(e^eps) + 1) <= fl(e^eps)} / 2^53, whose odds exceed e^eps:
  the achieved epsilon is eps + 5.9e-16, eps + 6.5e-16 and eps + 8.8e-16 (eps = 1: odds
  2.718281828459047002... > e = 2.718281828459045235..., witness X = (0,), X' = (1,), output 0):
  float rounding, as in textbook randomized response (spec/audits/textbook_numpy.py).  Its law
  is within 2^-50 of the spec's (exact conformance refuted, within 2^-50 verified) and it is
  eps * (1 + 2^-40)-DP (verified).
* **Exponential** (``monotonic=False``, sensitivity 1): within 2^-50 of ``dp.exponential``'s
  law (exactly: refuted by ~1e-16, rounding) and eps-DP, verified -- not tight on this universe,
  so the rounding does not cross the bound.
* **Geometric** and **Laplace** (sensitivity 1): consistent with the laws of ``dp.geometric``
  (a = e^eps) and ``dp.laplace`` (scale 1/eps) and with eps-DP (5,000 samples per dataset, seed 0,
  error probability 1e-9).  Sampling cannot see what the exact audit sees in Binary: a
  consistent verdict bounds the code's deviation, it does not prove the law.
* MISUSES, refuted: Binary with 2*eps where eps is claimed (exactly), and Geometric with
  sensitivity=1 on a sum whose sensitivity is 2 (by sampling, at error probability 1e-9).
"""
from fractions import Fraction

import numpy as np
from sympy import Rational

import dpverify as dp

try:
    from diffprivlib.mechanisms import Binary, Exponential, Geometric, Laplace
except ImportError as err:
    raise dp.SpecError(f"spec/audits/diffprivlib_mechanisms.py audits diffprivlib, which does not import ({err})",
                       "install the audit extra: pip install -e '.[audit]' (diffprivlib 0.6.6 with "
                       "scikit-learn < 1.9; the dev install includes it)") from None

eps = dp.symbol("eps", positive=True)
SLACK = 1 + Rational(1, 2 ** 40)
"""eps * SLACK: the level float code reaches, its probabilities rounded to doubles."""
ROUNDING = Fraction(1, 2 ** 50)
"""A tolerance for ``conforms``: every output probability within 2^-50 of the spec's (rounding, not a bug)."""
BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)
TRIT = dp.universe([0, 1, 2], n=1, neighbours=dp.REPLACE_ONE)
SAMPLES = 5_000
"""Runs per dataset of the sampled (black-box) mechanisms."""


def random_state(seed):
    """A numpy RandomState from the audit's seed (RandomState(int) takes only 32 bits; MT19937 any)."""
    return np.random.RandomState(np.random.MT19937(seed))


# -- Binary: randomized response, exact ----------------------------------------------------------

def rr(data, eps):
    """The spec: keep the bit with probability e^eps/(1 + e^eps)."""
    return dp.randomized_response(data[0], eps)


def diffprivlib_binary(data, eps, rng):
    """diffprivlib's Binary mechanism on the bit, its uniforms drawn from rng."""
    mechanism = Binary(epsilon=float(eps), value0="0", value1="1", random_state=rng)
    return int(mechanism.randomise(str(data[0])))


def diffprivlib_binary_double_eps(data, eps, rng):
    """MISUSE: the mechanism built with epsilon=2*eps, eps claimed."""
    mechanism = Binary(epsilon=float(2 * eps), value0="0", value1="1", random_state=rng)
    return int(mechanism.randomise(str(data[0])))


RR_GRID = {eps: [Fraction(1, 2), 1, 2]}

binary = dp.spec(
    dp.implementation(diffprivlib_binary, rng="system_random"), universe=BIT, grid=RR_GRID,
    claims=[dp.conforms(rr, id="exact_law", expect="refuted"),
            dp.conforms(rr, tolerance=ROUNDING, id="law_up_to_rounding"),
            dp.private(eps, id="float_rounding", expect="refuted"),
            dp.private(eps * SLACK, id="private_up_to_rounding")],
    doc="diffprivlib Binary, exactly: its law is the spec's up to float rounding (~1e-16), and the odds "
        "exceed e^eps (achieved eps + 6e-16 to 9e-16): eps-DP refuted, eps*(1+2^-40)-DP verified.")

binary_double_eps = dp.spec(
    dp.implementation(diffprivlib_binary_double_eps, rng="system_random"), universe=BIT, grid=RR_GRID,
    claims=[dp.private(eps, expect="refuted"), dp.conforms(rr, tolerance=ROUNDING, expect="refuted")],
    doc="MISUSE: diffprivlib Binary built with 2*eps, claimed eps: refuted exactly.")


# -- Exponential: exact, through the array comparison ------------------------------------------

CANDIDATES = (0, 1, 2)
RECORDS = dp.universe(CANDIDATES, n=2, neighbours=dp.REPLACE_ONE)


def em(data, eps):
    """The spec: y with probability proportional to exp(eps * count(y) / 2) (Delta = 1)."""
    return dp.exponential(CANDIDATES, lambda y: sum(1 for x in data if x == y), eps, sensitivity=1)


def diffprivlib_exponential(data, eps, rng):
    """diffprivlib's Exponential mechanism, utility = the count of each candidate, sensitivity 1."""
    utility = [sum(1 for x in data if x == y) for y in CANDIDATES]
    mechanism = Exponential(epsilon=float(eps), sensitivity=1, utility=utility, random_state=rng)
    return CANDIDATES[mechanism.randomise()]


exponential = dp.spec(
    dp.implementation(diffprivlib_exponential, rng="system_random"), universe=RECORDS,
    grid={eps: [Fraction(1, 2), 1]},
    claims=[dp.conforms(em, id="exact_law", expect="refuted"),
            dp.conforms(em, tolerance=ROUNDING, id="law_up_to_rounding"),
            dp.private(eps)],
    doc="diffprivlib Exponential, exactly: the spec's law up to rounding (~1e-16), eps-DP.")


# -- Geometric: np.log of a uniform, so sampled -------------------------------------------------

def noisy_count(data, eps):
    """The spec: the bit plus two-sided geometric noise, a = e^eps (spec/geometric.py)."""
    return dp.geometric(sum(data), dp.exp(eps))


def noisy_trit(data, eps):
    """The spec for a record in {0, 1, 2} (sensitivity 2): a = e^(eps/2)."""
    return dp.geometric(sum(data), dp.exp(eps / 2))


def diffprivlib_geometric(data, eps, seed):
    """diffprivlib's Geometric mechanism, sensitivity 1, on the bit."""
    return Geometric(epsilon=eps, sensitivity=1, random_state=random_state(seed)).randomise(sum(data))


def diffprivlib_geometric_wrong_sensitivity(data, eps, seed):
    """MISUSE: sensitivity=1 on a record in {0, 1, 2}, whose sensitivity is 2 (a 2*eps mechanism)."""
    return Geometric(epsilon=eps, sensitivity=1, random_state=random_state(seed)).randomise(sum(data))


geometric = dp.spec(
    dp.black_box(diffprivlib_geometric, spec_program=noisy_count, samples=SAMPLES, seed_argument="seed"),
    universe=BIT, grid={eps: [1]},
    claims=[dp.conforms(noisy_count), dp.private(eps)],
    doc="diffprivlib Geometric, sampled (np.log of a uniform): consistent with the two-sided geometric "
        "law and with eps-DP.")

geometric_wrong_sensitivity = dp.spec(
    dp.black_box(diffprivlib_geometric_wrong_sensitivity, spec_program=noisy_trit, samples=SAMPLES,
                 seed_argument="seed"),
    universe=TRIT, grid={eps: [1]},
    claims=[dp.conforms(noisy_trit, expect="refuted"), dp.private(eps, expect="refuted")],
    doc="MISUSE: diffprivlib Geometric with sensitivity 1 where it is 2: refuted at error probability 1e-9.")


# -- Laplace: logarithms and cosines of four uniforms, so sampled; float outputs -----------------

def noisy_bit(data, eps):
    """The spec: the bit plus Lap(1/eps)."""
    return dp.laplace(sum(data), 1 / eps)


def diffprivlib_laplace(data, eps, seed):
    """diffprivlib's Laplace mechanism, sensitivity 1, on the bit."""
    return Laplace(epsilon=eps, delta=0.0, sensitivity=1, random_state=random_state(seed)).randomise(sum(data))


laplace = dp.spec(
    dp.black_box(diffprivlib_laplace, spec_program=noisy_bit, samples=SAMPLES, seed_argument="seed"),
    universe=BIT, grid={eps: [1]},
    claims=[dp.conforms(noisy_bit), dp.private(eps)],
    doc="diffprivlib Laplace, sampled (log and cos of uniforms; float outputs): consistent with Lap(1/eps) "
        "by Kolmogorov-Smirnov against the exact CDF, and with eps-DP.")
