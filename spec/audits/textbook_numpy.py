"""Textbook numpy implementations, audited exactly against the catalogue's spec programs.

Each implementation is plain code taking an injected ``numpy.random.Generator`` (``rng``; one
takes a ``random.Random``);
``dp.implementation(fn)`` runs it unmodified inside the engine with an instrumented
generator (see ``dpverify/dsl/generators.py``), so its exact law -- the law of the code as
written, floats included -- is compared with the spec program's (``dp.conforms``) and
checked for privacy (``dp.private``).

Findings (exact, reproducible; the witnesses are in ``dpverify check --json``):

* **Randomized response computed in floats is not eps-DP.**  ``keep = e^eps/(1 + e^eps)``
  computed with ``math.exp`` is a float; ``rng.random() < keep`` then keeps with probability
  ceil(keep * 2^53) / 2^53, whose odds exceed e^eps by about 1e-16 at eps = 1/2 and 1
  (Mironov-style: the real-valued proof does not cover the code).  Its law differs from the
  spec's by about 1e-17 (``conforms`` refuted, as it must be: exact means exact; within a
  tolerance of 2^-50 it is verified).  What the code does satisfy is eps * (1 + 2^-40)-DP,
  claimed and verified below.
* The exponential mechanism sampled by inverse CDF over float weights also has a law other
  than the spec's (rounding, ~1e-17), but it is eps-DP: it is far from tight, so rounding does
  not cross the bound.  (At eps = 2 textbook randomized response happens to round the safe way.)
* Noise methods (``rng.laplace``) are read as the ideal real laws, so report noisy max with
  ``rng.laplace`` *conforms exactly* to the spec program; whether numpy's floating-point
  Laplace sampler realises that law is the floating-point check's question, not this one's.

The broken variants carry ``expect="refuted"``: randomized response with 2*eps,
the exponential mechanism without its factor 2, report noisy max with the wrong scale and
the one releasing the noisy maximum value.

The exponential mechanism by the Gumbel trick (``rng.gumbel``) cannot be decided exactly: the
exact audit refuses ``rng.gumbel()`` with its file and line, and its claims fall back to the
statistical audit (the same code run with a real seeded ``numpy.random.Generator``, 5,000 samples
per dataset; its verdicts are ``consistent`` or ``refuted`` at error probability 1e-9, never
``verified``).  The textbook version is consistent with the spec's exact law and with eps-DP; the
one with Gumbel noise of scale 1/2 (an exponential mechanism at 2*eps) is refuted on both counts.
"""
import math
from fractions import Fraction

import numpy as np
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)
SLACK = 1 + Rational(1, 2 ** 40)
"""eps * SLACK: the level float code reaches, its probabilities rounded to doubles."""
ROUNDING = Fraction(1, 2 ** 50)
"""A tolerance for ``conforms``: every output probability within 2^-50 of the spec's (rounding, not a bug)."""
BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)


# -- randomized response ---------------------------------------------------------------------

def rr(data, eps):
    """The spec: keep the bit with probability e^eps/(1 + e^eps)."""
    return dp.randomized_response(data[0], eps)


def textbook_rr(data, eps, rng):
    """Keep the bit if a uniform falls below e^eps/(1 + e^eps), computed in floats."""
    keep = math.exp(eps) / (1 + math.exp(eps))
    return data[0] if rng.random() < keep else 1 - data[0]


def rr_double_eps(data, eps, rng):
    """BROKEN: e^(2 eps) where e^eps belongs (a 2*eps mechanism claimed as eps)."""
    keep = math.exp(2 * eps) / (1 + math.exp(2 * eps))
    return data[0] if rng.random() < keep else 1 - data[0]


def rr_half_eps(data, eps, rng):
    """BROKEN (utility, not privacy): e^(eps/2), a more private mechanism than the spec."""
    keep = math.exp(eps / 2) / (1 + math.exp(eps / 2))
    return data[0] if rng.random() < keep else 1 - data[0]


RR_GRID = {eps: [Fraction(1, 2), 1]}

randomized_response = dp.spec(
    dp.implementation(textbook_rr), universe=BIT, grid=RR_GRID,
    claims=[dp.conforms(rr, id="exact_law", expect="refuted"),
            dp.conforms(rr, tolerance=ROUNDING, id="law_up_to_rounding"),
            dp.private(eps, id="float_rounding", expect="refuted"),
            dp.private(eps * SLACK, id="private_up_to_rounding")],
    doc="Textbook randomized response in floats: the law differs from the spec by rounding (~1e-17), "
        "and the odds exceed e^eps by ~1e-16: eps-DP refuted, eps*(1+2^-40)-DP verified.")

randomized_response_double_eps = dp.spec(
    dp.implementation(rr_double_eps), universe=BIT, grid=RR_GRID,
    claims=[dp.private(eps, expect="refuted"), dp.conforms(rr, tolerance=ROUNDING, expect="refuted")],
    doc="Randomized response with 2*eps in place of eps: not eps-DP.")

randomized_response_half_eps = dp.spec(
    dp.implementation(rr_half_eps), universe=BIT, grid=RR_GRID,
    claims=[dp.conforms(rr, expect="refuted"), dp.private(eps)],
    doc="Randomized response with eps/2: private, but not the mechanism specified (conforms refuted).")


# -- report noisy max ------------------------------------------------------------------------

ANSWERS = dp.answers([0, 1], 3, neighbours=dp.linf_one)


def rnm_laplace(q, eps):
    """The spec: the first index of the largest q_i + Lap(2/eps)."""
    best, best_value = 0, dp.laplace(q[0], 2 / eps)
    for i in range(1, len(q)):
        x = dp.laplace(q[i], 2 / eps)
        if x > best_value:
            best, best_value = i, x
    return best


def textbook_noisy_max(q, eps, rng):
    """numpy's way: add a Laplace vector, take the argmax."""
    noisy = np.asarray(q) + rng.laplace(0, 2 / eps, size=len(q))
    return int(np.argmax(noisy))


def noisy_max_wrong_scale(q, eps, rng):
    """BROKEN: scale 1/eps, too little noise for answers that all move (2*eps)."""
    noisy = np.asarray(q) + rng.laplace(0, 1 / eps, size=len(q))
    return int(np.argmax(noisy))


def noisy_max_value(q, eps, rng):
    """BROKEN: releases the noisy maximum itself (Ding et al. Alg. 7)."""
    noisy = np.asarray(q) + rng.laplace(0, 2 / eps, size=len(q))
    return noisy[int(np.argmax(noisy))]


NM_GRID = {eps: [Fraction(1, 2), 1]}

noisy_max = dp.spec(
    dp.implementation(textbook_noisy_max), universe=ANSWERS, grid=NM_GRID,
    claims=[dp.conforms(rnm_laplace), dp.private(eps)],
    doc="Report noisy max with rng.laplace(scale=2/eps) and np.argmax: the spec's law exactly, eps-DP.")

noisy_max_scale = dp.spec(
    dp.implementation(noisy_max_wrong_scale), universe=ANSWERS, grid=NM_GRID,
    claims=[dp.conforms(rnm_laplace, expect="refuted"), dp.private(eps, expect="refuted")],
    doc="Report noisy max with scale 1/eps: not eps-DP for answers that all move by 1.")

noisy_max_release_value = dp.spec(
    dp.implementation(noisy_max_value), universe=ANSWERS, grid=NM_GRID,
    claims=[dp.private(eps, expect="refuted")],
    doc="Report noisy max releasing the noisy maximum: 3*eps/2 here, not eps.")


# -- the exponential mechanism by inverse CDF -------------------------------------------------

CANDIDATES = (0, 1, 2)
RECORDS = dp.universe(CANDIDATES, n=2, neighbours=dp.REPLACE_ONE)


def em(data, eps):
    """The spec: y with probability proportional to exp(eps * count(y) / 2) (Delta = 1)."""
    return dp.exponential(CANDIDATES, lambda y: sum(1 for x in data if x == y), eps, sensitivity=1)


def inverse_cdf(weights, rng):
    """The first index whose cumulative weight exceeds a uniform times the total."""
    u = rng.random() * sum(weights)
    running = 0.0
    for i, w in enumerate(weights):
        running += w
        if u < running:
            return i
    return len(weights) - 1


def em_inverse_cdf(data, eps, rng):
    """Textbook: weights exp(eps * score / 2) in floats, sampled by inverse CDF."""
    scores = [sum(1 for x in data if x == y) for y in CANDIDATES]
    return CANDIDATES[inverse_cdf([math.exp(eps * s / 2) for s in scores], rng)]


def em_no_half(data, eps, rng):
    """BROKEN: exp(eps * score), the factor 1/2 (1/(2 Delta)) forgotten: 2*eps-DP."""
    scores = [sum(1 for x in data if x == y) for y in CANDIDATES]
    return CANDIDATES[inverse_cdf([math.exp(eps * s) for s in scores], rng)]


def em_random_choices(data, eps, rng):
    """The standard library's way (``rng`` a ``random.Random``): ``choices`` with float weights."""
    scores = [sum(1 for x in data if x == y) for y in CANDIDATES]
    return rng.choices(CANDIDATES, weights=[math.exp(eps * s / 2) for s in scores])[0]


EM_GRID = {eps: [Fraction(1, 2), 1]}

exponential_mechanism = dp.spec(
    dp.implementation(em_inverse_cdf), universe=RECORDS, grid=EM_GRID,
    claims=[dp.conforms(em, id="exact_law", expect="refuted"),
            dp.conforms(em, tolerance=ROUNDING, id="law_up_to_rounding"),
            dp.private(eps)],
    doc="The exponential mechanism by inverse CDF over float weights: the law is the spec's up to "
        "rounding (conforms refuted by ~1e-17), and eps-DP (not tight, so rounding does not matter).")

exponential_mechanism_random = dp.spec(
    dp.implementation(em_random_choices, rng="random"), universe=RECORDS, grid=EM_GRID,
    claims=[dp.conforms(em, tolerance=ROUNDING), dp.private(eps)],
    doc="The exponential mechanism with random.Random.choices over float weights: within 2^-50 of the "
        "spec's law, eps-DP.")

exponential_mechanism_no_half = dp.spec(
    dp.implementation(em_no_half), universe=RECORDS, grid=EM_GRID,
    claims=[dp.private(eps, expect="refuted"), dp.conforms(em, tolerance=ROUNDING, expect="refuted")],
    doc="The exponential mechanism without the factor 2: 2*eps-DP, claimed eps.")


# -- the exponential mechanism by the Gumbel trick: decided by the statistical audit ------------

GUMBEL_SAMPLES = 5_000
"""Runs per dataset of the fallback's statistical audit: enough to refute scale 1/2 at eps = 2."""


def em_gumbel(data, eps, rng):
    """Textbook: the argmax of eps * score / 2 plus standard Gumbel noise (exactly the spec's law in reals)."""
    scores = [sum(1 for x in data if x == y) for y in CANDIDATES]
    return CANDIDATES[int(np.argmax([eps * s / 2 + rng.gumbel() for s in scores]))]


def em_gumbel_half_scale(data, eps, rng):
    """BROKEN: Gumbel noise of scale 1/2, i.e. the exponential mechanism at 2*eps."""
    scores = [sum(1 for x in data if x == y) for y in CANDIDATES]
    return CANDIDATES[int(np.argmax([eps * s / 2 + rng.gumbel(scale=0.5) for s in scores]))]


exponential_mechanism_gumbel = dp.spec(
    dp.implementation(em_gumbel, samples=GUMBEL_SAMPLES), universe=RECORDS, grid=EM_GRID,
    claims=[dp.conforms(em), dp.private(eps)],
    doc="The exponential mechanism by the Gumbel-max trick: rng.gumbel() is beyond the exact audit, so both "
        "claims fall back to sampling: consistent with the spec's exact law and with eps-DP.")

exponential_mechanism_gumbel_half_scale = dp.spec(
    dp.implementation(em_gumbel_half_scale, samples=GUMBEL_SAMPLES), universe=RECORDS, grid={eps: [2]},
    claims=[dp.conforms(em, expect="refuted"), dp.private(eps, expect="refuted")],
    doc="The Gumbel trick with noise of scale 1/2 (a 2*eps mechanism): refuted by the statistical audit.")


# -- the noisy histogram ---------------------------------------------------------------------

HISTOGRAMS = dp.answers([0, 1], 2, neighbours=dp.l1_one)


def noisy_hist(q, eps):
    """The spec: every bin plus independent Lap(1/eps)."""
    return tuple(dp.laplace(c, 1 / eps) for c in q)


def textbook_histogram(q, eps, rng):
    """numpy's way: the histogram plus a Laplace vector of scale 1/eps."""
    return np.asarray(q) + rng.laplace(0.0, 1 / eps, size=len(q))


def histogram_eps_scale(q, eps, rng):
    """BROKEN: scale eps where 1/eps belongs (Ding et al. Alg. 10)."""
    return np.asarray(q) + rng.laplace(0.0, eps, size=len(q))


histogram = dp.spec(
    dp.implementation(textbook_histogram), universe=HISTOGRAMS, grid={eps: [Fraction(1, 2), 1]},
    claims=[dp.private(eps)],
    doc="The noisy histogram with rng.laplace(scale=1/eps): eps-DP.")

histogram_wrong_scale = dp.spec(
    dp.implementation(histogram_eps_scale), universe=HISTOGRAMS, grid={eps: [Fraction(1, 2)]},
    claims=[dp.private(eps, expect="refuted")],
    doc="The noisy histogram with scale eps: 1/eps-DP, claimed eps (broken for eps < 1).")
