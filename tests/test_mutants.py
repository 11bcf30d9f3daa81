"""Mutants: deliberately broken variants of the catalogue specs.

Every mutant below is a small, plausible mistake (a missing factor 2 in the
exponential mechanism, noise scale too small, a sensitivity off by a factor, an
off-by-one in a recursion, a sampler that accepts with the wrong probability, a
claim with too small an amplification factor...).  Each must come back
``refuted`` at some grid point with a witness a reader can check by hand; and
every correct spec in ``spec/`` must be ``verified`` at every point.

Mutants reuse the spec files' own helpers (loaded with :func:`dpverify.loader.load`,
as ``dpverify check`` does) so that each differs from its correct spec in the
one place the mistake is.
"""
from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace

import pytest
from sympy import Rational

import dpverify as dp
from dpverify.checks import Workspace, check_point
from dpverify.evidence import PrivacyEvidence
from dpverify.options import Options
from dpverify.loader import load


SPEC_DIR = Path(__file__).resolve().parent.parent / "spec"
CATALOGUE = ("randomized_response", "exponential_mechanism", "em_private_learner", "geometric",
             "em_label_hamming", "rejection_sampler", "subsampling")

eps = dp.symbol("eps", positive=True)
GRID = {eps: [Rational(1, 2), 1, 2]}


@functools.lru_cache(maxsize=None)
def specs_of(stem: str) -> tuple[dp.Spec, ...]:
    return tuple(load(SPEC_DIR / f"{stem}.py"))


def spec_named(stem: str, name: str) -> dp.Spec:
    return next(s for s in specs_of(stem) if s.name == name)


def module(stem: str) -> SimpleNamespace:
    """The namespace of a loaded spec file (its helpers and constants)."""
    return SimpleNamespace(**specs_of(stem)[0].mechanism.__globals__)


# ----- randomized response --------------------------------------------------------------

def rr_too_little_noise() -> dp.Spec:
    """Keeps the bit with probability e^(2 eps)/(1 + e^(2 eps)) but claims eps."""
    def rr_double(data, eps):
        return dp.randomized_response(data[0], 2 * eps)
    return dp.spec(rr_double, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                   grid=GRID, claims=[dp.private(eps)])


def rr_claim_halved() -> dp.Spec:
    """The correct mechanism, claiming eps/2 (the claim drops a factor 2)."""
    correct = spec_named("randomized_response", "randomized_response")
    return dp.spec(correct.mechanism, universe=correct.universe, grid=GRID, claims=[dp.private(eps / 2)])


def rr_flips_only_positive_labels() -> dp.Spec:
    """Label flipping that randomizes +1 labels only (a -1 label is always reported as it is)."""
    def label_flipping_one_sided(data, eps):
        return tuple((x, dp.randomized_response(y, eps, values=(-1, 1)) if y == 1 else y) for x, y in data)
    return dp.spec(label_flipping_one_sided,
                   universe=dp.universe(dp.labelled(xs=[0, 1], labels=[-1, 1]), n=2,
                                        neighbours=dp.LABEL_ONLY),
                   grid=GRID, claims=[dp.private(eps)])


# ----- exponential mechanism ------------------------------------------------------------

def em_missing_factor_two() -> dp.Spec:
    """Most frequent item with weights exp(eps u / Delta): the 2 in 2*Delta is missing."""
    em = module("exponential_mechanism")

    def most_frequent_no_two(data, eps):
        weights = {y: dp.exp(eps * em.count(data, y)) for y in em.DOMAIN}
        total = sum(weights.values())
        return dp.categorical({y: w / total for y, w in weights.items()})
    correct = spec_named("exponential_mechanism", "most_frequent")
    return dp.spec(most_frequent_no_two, universe=correct.universe, grid=GRID, claims=[dp.private(eps)])


def em_median_sensitivity_one() -> dp.Spec:
    """The median-like score has sensitivity 2; this mutant states Delta = 1."""
    em = module("exponential_mechanism")

    def median_delta_one(data, eps):
        return dp.exponential(em.DOMAIN, lambda y: em.balance(data, y), eps, sensitivity=1)
    correct = spec_named("exponential_mechanism", "median")
    return dp.spec(median_delta_one, universe=correct.universe, grid=GRID, claims=[dp.private(eps)])


# ----- private learner ------------------------------------------------------------------

def learner_sensitivity_halved() -> dp.Spec:
    """Empirical-error score with Delta = 1/(2n) instead of 1/n."""
    pl = module("em_private_learner")

    def learner_half_delta(data, eps):
        return dp.exponential(pl.THRESHOLDS, lambda t: -pl.empirical_error(data, t), eps,
                              sensitivity=Fraction(1, 2 * len(data)))
    correct = spec_named("em_private_learner", "threshold_learner")
    return dp.spec(learner_half_delta, universe=correct.universe, grid=GRID, claims=[dp.private(eps)])


def learner_error_count_score() -> dp.Spec:
    """Score = minus the number of errors (not the fraction) with Delta still 1/n: off by n."""
    pl = module("em_private_learner")

    def learner_counts(data, eps):
        return dp.exponential(pl.THRESHOLDS, lambda t: -len(data) * pl.empirical_error(data, t), eps,
                              sensitivity=Fraction(1, len(data)))
    correct = spec_named("em_private_learner", "threshold_learner")
    return dp.spec(learner_counts, universe=correct.universe, grid=GRID, claims=[dp.private(eps)])


# ----- geometric ------------------------------------------------------------------------

def geometric_noise_too_small() -> dp.Spec:
    """Count with a = e^(2 eps): the noise scale is half what eps-DP needs."""
    def noisy_count_small(data, eps):
        return dp.geometric(sum(data), dp.exp(2 * eps))
    correct = spec_named("geometric", "noisy_count")
    return dp.spec(noisy_count_small, universe=correct.universe, grid=GRID, claims=[dp.private(eps)])


def geometric_sensitivity_ignored() -> dp.Spec:
    """Sum of records in {0, 1, 2} (Delta = 2) with a = e^eps, as if Delta were 1."""
    def noisy_sum_delta_one(data, eps):
        return dp.geometric(sum(data), dp.exp(eps))
    correct = spec_named("geometric", "noisy_sum")
    return dp.spec(noisy_sum_delta_one, universe=correct.universe, grid=GRID, claims=[dp.private(eps)])


def geometric_clamped_sensitivity_ignored() -> dp.Spec:
    """The clamped sum with a = e^eps: clamping does not rescue too little noise."""
    def clamped_sum_delta_one(data, eps):
        return dp.geometric(sum(data), dp.exp(eps), lower=0, upper=3)
    correct = spec_named("geometric", "clamped_sum")
    return dp.spec(clamped_sum_delta_one, universe=correct.universe, grid=GRID, claims=[dp.private(eps)])


# ----- label-private relabelling --------------------------------------------------------

def hamming_recursion_off_by_one() -> dp.Spec:
    """The level recursion uses log(n - i) instead of log(n - i + 1) (weights renormalised)."""
    lh = module("em_label_hamming")

    def two_step_off_by_one(data, eps):
        n = len(data)
        logs = [-n * dp.log(1 + dp.exp(eps / 2))]
        for i in range(1, n + 1):
            # log(n - i) is -inf at i = n; the author "fixed" it with max(., 1)
            logs.append(dp.log(max(n - i, 1)) - dp.log(i) + eps / 2 + logs[i - 1])
        weights = [dp.exp(v) for v in logs]
        total = sum(weights)
        i = dp.categorical({k: w / total for k, w in enumerate(weights)})
        return lh.relabel(data, dp.uniform(lh.labelings_at_level(data, i)))
    correct = spec_named("em_label_hamming", "direct")
    return dp.spec(correct.mechanism, universe=correct.universe, grid=GRID,
                   claims=[dp.same_distribution(two_step_off_by_one)])


def hamming_first_labeling_at_level() -> dp.Spec:
    """The two-step sampler returns the first labeling at its level instead of a uniform one."""
    lh = module("em_label_hamming")

    def two_step_first(data, eps):
        i = dp.categorical(lh.level_probabilities_by_recursion(len(data), eps))
        return lh.relabel(data, lh.labelings_at_level(data, i)[0])
    correct = spec_named("em_label_hamming", "direct")
    return dp.spec(two_step_first, universe=correct.universe, grid=GRID, claims=[dp.private(eps)])


def hamming_level_without_half() -> dp.Spec:
    """Closed-form level law with e^(eps i) instead of e^(eps i/2) (the factor 2 dropped)."""
    lh = module("em_label_hamming")

    def two_step_no_half(data, eps):
        n = len(data)
        total = (1 + dp.exp(eps)) ** n
        i = dp.categorical({k: math.comb(n, k) * dp.exp(eps * k) / total for k in range(n + 1)})
        return lh.relabel(data, dp.uniform(lh.labelings_at_level(data, i)))
    correct = spec_named("em_label_hamming", "two_step_sampler")
    return dp.spec(correct.mechanism, universe=correct.universe, grid=GRID,
                   claims=[dp.same_distribution(two_step_no_half)])


# ----- rejection sampler ----------------------------------------------------------------

def rejection_missing_factor_two() -> dp.Spec:
    """Accepts y with exp(eps u(y)/Delta)/sum (the target without the 2)."""
    rs = module("rejection_sampler")

    def sampler_no_two(data, eps):
        def attempt():
            y = dp.uniform(rs.CANDIDATES)
            return y if dp.bernoulli(rs.target_probability(data, y, 2 * eps)) else dp.REJECTED
        return dp.repeat_until_accepted(attempt)
    correct = spec_named("rejection_sampler", "rejection_sampler")
    return dp.spec(sampler_no_two, universe=correct.universe, grid=GRID,
                   claims=[dp.same_distribution(rs.exponential_mechanism_direct)])


def rejection_accepts_complement() -> dp.Spec:
    """Accepts with probability 1 - pi(y) instead of pi(y)."""
    rs = module("rejection_sampler")

    def sampler_complement(data, eps):
        def attempt():
            y = dp.uniform(rs.CANDIDATES)
            return y if dp.bernoulli(1 - rs.target_probability(data, y, eps)) else dp.REJECTED
        return dp.repeat_until_accepted(attempt)
    correct = spec_named("rejection_sampler", "rejection_sampler")
    return dp.spec(sampler_complement, universe=correct.universe, grid=GRID,
                   claims=[dp.same_distribution(rs.exponential_mechanism_direct)])


def rejection_proposes_from_data() -> dp.Spec:
    """Proposes a uniformly random record of the data instead of a uniform candidate."""
    rs = module("rejection_sampler")

    def sampler_from_data(data, eps):
        def attempt():
            y = dp.uniform(data)
            return y if dp.bernoulli(rs.target_probability(data, y, eps)) else dp.REJECTED
        return dp.repeat_until_accepted(attempt)
    correct = spec_named("rejection_sampler", "rejection_sampler")
    return dp.spec(sampler_from_data, universe=correct.universe, grid=GRID,
                   claims=[dp.same_distribution(rs.exponential_mechanism_direct)])


# ----- subsampling ----------------------------------------------------------------------

def subsampling_fraction_too_small() -> dp.Spec:
    """Claims ln(1 + (m/(n+1))(e^eps - 1)): m/n replaced by a smaller fraction."""
    correct = spec_named("subsampling", "rr_on_sampled_record")
    return dp.spec(correct.mechanism, universe=correct.universe, grid=GRID,
                   claims=[dp.private(dp.log(1 + Rational(1, 4) * (dp.exp(eps) - 1)))])


def subsampling_linear_claim() -> dp.Spec:
    """Claims (m/n) eps, the first-order approximation, which is smaller than the true bound."""
    correct = spec_named("subsampling", "rr_on_subset_parity")
    return dp.spec(correct.mechanism, universe=correct.universe, grid=GRID,
                   claims=[dp.private(Rational(2, 4) * eps)])


def subsampling_without_sampling() -> dp.Spec:
    """Runs randomized response on the first two records (no random subset), claiming amplification."""
    def rr_on_prefix_parity(data, eps):
        return dp.randomized_response(sum(data[:2]) % 2, eps)
    correct = spec_named("subsampling", "rr_on_subset_parity")
    return dp.spec(rr_on_prefix_parity,
                   universe=dp.universe([0, 1], n=4, neighbours=dp.REPLACE_ONE),
                   grid=GRID, claims=[dp.private(correct.claims[0].epsilon)])


MUTANTS: dict[str, tuple[str, Callable[[], dp.Spec]]] = {
    f.__name__: (stem, f) for stem, f in [
        ("randomized_response", rr_too_little_noise),
        ("randomized_response", rr_claim_halved),
        ("randomized_response", rr_flips_only_positive_labels),
        ("exponential_mechanism", em_missing_factor_two),
        ("exponential_mechanism", em_median_sensitivity_one),
        ("em_private_learner", learner_sensitivity_halved),
        ("em_private_learner", learner_error_count_score),
        ("geometric", geometric_noise_too_small),
        ("geometric", geometric_sensitivity_ignored),
        ("geometric", geometric_clamped_sensitivity_ignored),
        ("em_label_hamming", hamming_recursion_off_by_one),
        ("em_label_hamming", hamming_first_labeling_at_level),
        ("em_label_hamming", hamming_level_without_half),
        ("rejection_sampler", rejection_missing_factor_two),
        ("rejection_sampler", rejection_accepts_complement),
        ("rejection_sampler", rejection_proposes_from_data),
        ("subsampling", subsampling_fraction_too_small),
        ("subsampling", subsampling_linear_claim),
        ("subsampling", subsampling_without_sampling),
    ]
}


@pytest.mark.parametrize("name", list(MUTANTS))
def test_mutant_is_refuted_with_a_witness(name: str) -> None:
    _, build = MUTANTS[name]
    results = dp.check(build())
    assert not [r for r in results if r.status.value in ("error", "unknown")], \
        [(r.params, r.status.value, r.message) for r in results]
    refuted = [r for r in results if r.status.value == "refuted"]
    assert refuted, f"{name} was not refuted: {[(r.params, r.status.value, r.message) for r in results]}"
    for r in refuted:
        w = r.witness
        assert w is not None, r.message
        for attribute in ("x", "x_prime", "output", "p", "p_prime"):
            assert getattr(w, attribute) is not None, (attribute, r.message)
        p, p_prime = float(w.p), float(w.p_prime)
        if isinstance(r.evidence, PrivacyEvidence):  # privacy: the witness breaks P(o|X) <= e^eps P(o|X')
            assert p > math.exp(float(r.evidence.claimed_epsilon)) * p_prime, r.message
        else:  # same distribution: one dataset, two different probabilities of one output
            assert w.x == w.x_prime and p != p_prime, r.message


def test_every_catalogue_spec_has_two_mutants() -> None:
    per_spec = {stem: sum(1 for s, _ in MUTANTS.values() if s == stem) for stem in CATALOGUE}
    assert all(count >= 2 for count in per_spec.values()), per_spec


@pytest.mark.parametrize("stem", CATALOGUE)
def test_correct_spec_is_verified_everywhere(stem: str) -> None:
    """Every claim of the catalogue holds at every point, except the mis-stated ones kept beside a
    theorem on purpose (``expect="refuted"``, e.g. "rate q gives q eps"), which must be refuted."""
    ws = Workspace(Options())
    for spec in specs_of(stem):
        results = [(claim, check_point(spec, claim, point, ws)) for claim in spec.claims
                   for point in spec.points_for(claim)]
        assert results
        bad = [(spec.name, claim.id, r.params, r.status.value, r.message) for claim, r in results
               if (r.status.value != claim.expect if claim.expect else not r.status.holds)]
        assert not bad, bad


def test_privacy_witness_is_a_neighbouring_pair() -> None:
    """A refuted privacy claim names two datasets that differ in exactly one record."""
    (result,) = [r for r in dp.check(geometric_noise_too_small()) if r.params == {"eps": "1"}]
    w = result.witness
    assert result.status.value == "refuted"
    removed, added = Counter(w.x) - Counter(w.x_prime), Counter(w.x_prime) - Counter(w.x)
    assert sum(removed.values()) == sum(added.values()) == 1, (w.x, w.x_prime)
    assert float(w.p) > math.exp(1) * float(w.p_prime)
