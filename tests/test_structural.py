"""Structural proofs for every dataset of every size (issue 23, capability 1).

The catalogue's calibrated mechanisms gain ``proved [all datasets ...]``; mutants whose structure does
not prove their claim for every dataset keep the exact path's verdict (refuted, or verified on the
universe only); the structural bound is cross-checked against the exact engine's achieved eps.
"""
from __future__ import annotations

import importlib.util
from fractions import Fraction
from pathlib import Path

import pytest
import sympy
from hypothesis import HealthCheck, given, settings, strategies as st

import dpverify as dp
from dpverify.engine.sensitivity.derivable import N
from dpverify.engine.structural import NotStructural, at_most, cost_of
from dpverify.results import Status

ROOT = Path(__file__).resolve().parent.parent / "spec"
eps = dp.symbol("eps", positive=True)


def _module(relative: str):
    spec = importlib.util.spec_from_file_location("structural_" + relative.replace("/", "_")[:-3], ROOT / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _all_datasets(result) -> bool:
    return result.status == Status.PROVED and bool(result.coverage) and result.coverage["scope"] == "all datasets"


def _check(mechanism, universe, claims, grid=None):
    return dp.check(dp.spec(mechanism, universe=universe, grid=grid or {eps: [Fraction(1, 2), 1]}, claims=claims))


# ----- the catalogue -------------------------------------------------------------------------------------

CATALOGUE = [
    ("geometric.py", "count", "all datasets over {0, 1}, every size n >= 1, every eps"),
    ("geometric.py", "sum_sensitivity_2", "all datasets over {0, 1, 2}, every size n >= 1, every eps"),
    ("geometric.py", "count_clamped", "all datasets over {0, 1}, every size n >= 1, every eps"),
    ("geometric.py", "sum_clamped", "all datasets over {0, 1, 2}, every size n >= 1, every eps"),
    ("laplace.py", "laplace_mechanism", "all datasets over [0, 1], every size n >= 1, every eps"),
    ("exponential_mechanism.py", "most_frequent_spec", "all datasets over {0, 1, 2, 3, 4}, every size n >= 1, every eps"),
    ("exponential_mechanism.py", "median_spec", "all datasets over {0, 1, 2, 3, 4}, every size n >= 1, every eps"),
    ("composition.py", "sequential", "all datasets over {0, 1}, every size n >= 1, every eps"),
    ("benchmark/histogram.py", "histogram", "all answer vectors of length 3 at L1 distance <= 1, every eps"),
]


@pytest.mark.parametrize("path, name, label", CATALOGUE)
def test_the_catalogues_calibrated_mechanisms_are_proved_for_every_dataset(path, name, label) -> None:
    spec = getattr(_module(path), name)
    results = dp.check(spec)
    private = [r for r in results if r.params and r.evidence.__class__.__name__ == "PrivacyEvidence"
               and r.coverage is not None]
    assert private, [(r.status, r.message[:80]) for r in results]
    for r in private:
        assert _all_datasets(r), r.message
        assert r.coverage["label"] == label
        assert r.evidence.proof_steps and any("sensitivity" in s or "randomized response" in s or "rate" in s
                                              for s in r.evidence.proof_steps)
        assert "proved for every" in r.message
    refuted = [r for r in results if r.status == Status.REFUTED]
    assert all(r.coverage is None for r in refuted)


def test_geometric_message_says_what_was_proved_in_words() -> None:
    [result, *_] = dp.check(_module("geometric.py").count)
    assert result.status == Status.PROVED
    assert "every dataset of every size n >= 1 over {0, 1} under replace-one and every eps" in result.message
    assert "sensitivity Delta(n) = 1" in result.message and "cost Delta ln a = eps" in result.message
    assert result.evidence.figures()["proof_steps"][-1].startswith("the claimed eps is eps")


def test_the_catalogues_expected_refutations_stay_refuted() -> None:
    laplace = dp.check(_module("laplace.py").laplace_mechanism)
    assert [r.status for r in laplace][-2:] == [Status.REFUTED, Status.REFUTED]  # eps/2
    hist = _module("benchmark/histogram.py")
    [a, b, c, d] = dp.check(hist.histogram_eps_scale)
    assert a.status == b.status == Status.REFUTED  # claimed eps, true 1/eps
    assert _all_datasets(c) and _all_datasets(d)  # the true level 1/eps, for every eps
    seq = dp.check(_module("composition.py").sequential)
    assert [r.status for r in seq[3:]] == [Status.REFUTED] * 3  # (K - 1) eps


def test_gaussian_pure_and_classical_claims_get_no_structural_proof() -> None:
    for r in dp.check(_module("gaussian.py").gaussian_mechanism):
        assert r.coverage is None


# ----- mutants: never proved for every dataset ----------------------------------------------------------

BITS = dp.universe([0, 1], n=3, neighbours=dp.REPLACE_ONE)
TRITS = dp.universe([0, 1, 2], n=3, neighbours=dp.REPLACE_ONE)


def scale_eps_over_2(data, eps):
    return dp.laplace(sum(data), eps / 2)


def a_doubled(data, eps):
    return dp.geometric(sum(data), dp.exp(2 * eps))


def sum_of_trits_with_a_for_bits(data, eps):
    return dp.geometric(sum(data), dp.exp(eps))


def noise_on_the_first_record(data, eps):
    return dp.geometric(data[0], dp.exp(eps))


def mean_scaled_with_the_universes_n(data, eps):
    return dp.laplace(Fraction(1) * sum(data) / len(data), 1 / (3 * eps))  # Delta = 1/n: eps-DP only for n >= 3


def branch_on_the_size(data, eps):
    if len(data) == 3:
        return dp.laplace(sum(data), 1 / eps)
    return dp.laplace(sum(data), 1 / (3 * eps))


def branch_on_the_data(data, eps):
    if sum(data) > 1:
        return dp.laplace(sum(data), 1 / eps)
    return dp.laplace(sum(data), 1 / eps)


def swallows_the_refusal(data, eps):
    try:
        big = sum(data) > 1
    except Exception:  # noqa: BLE001
        big = False
    return dp.laplace(sum(data), 1 / eps) if big else dp.laplace(sum(data), 1 / eps)


def two_releases(data, eps):
    return dp.laplace(sum(data), 1 / eps), dp.geometric(sum(data), dp.exp(eps))


def releases_the_count(data, eps):
    return dp.laplace(sum(data), 1 / eps), sum(data)


_SEEN: list = []


def hidden_state(data, eps):
    _SEEN.append(1)
    return dp.laplace(sum(data), len(_SEEN) / eps)


COUNTER = 0


def hidden_counter(data, eps):
    global COUNTER
    COUNTER += 1
    return dp.laplace(sum(data), 1 / eps)


SCORE = dp.count(lambda x, y: x == y, domain=(0, 1, 2))


def understated_score(data, eps):
    return dp.exponential((0, 1, 2), SCORE.on(data), eps, sensitivity=Fraction(1, 2))


def mechanism_for_replace_one_on_add_remove(data, eps):
    return dp.laplace_mechanism(dp.mean(lambda v: v, domain=[0, 1]), data, eps, neighbours=dp.REPLACE_ONE)


MUTANTS = [
    (scale_eps_over_2, BITS, eps, {eps: [2]}),  # holds at eps = 2 (verified there), not for every eps
    (a_doubled, BITS, eps, None),
    (sum_of_trits_with_a_for_bits, TRITS, eps, None),
    (noise_on_the_first_record, BITS, eps, None),
    (mean_scaled_with_the_universes_n, BITS, eps, None),  # verified on n = 3, false at n = 1
    (branch_on_the_size, BITS, eps, None),
    (branch_on_the_data, BITS, eps, None),
    (swallows_the_refusal, BITS, eps, None),
    (two_releases, BITS, eps, None),  # two eps costs claimed eps
    (releases_the_count, BITS, eps, None),
    (hidden_state, BITS, eps, None),
    (hidden_counter, BITS, eps, None),
    (understated_score, dp.universe([0, 1, 2], n=2, neighbours=dp.REPLACE_ONE), eps, None),
    (mechanism_for_replace_one_on_add_remove, dp.universe([0, 1], n=range(1, 4), neighbours=dp.ADD_REMOVE), eps,
     None),
]


@pytest.mark.parametrize("mechanism, universe, claim, grid", MUTANTS, ids=[m[0].__name__ for m in MUTANTS])
def test_mutants_are_never_proved_for_every_dataset(mechanism, universe, claim, grid) -> None:
    for r in _check(mechanism, universe, [dp.private(claim)], grid):
        assert not (r.coverage and r.coverage.get("scope") == "all datasets"), r.message
        assert r.status != Status.ERROR, r.message
        assert getattr(r.evidence, "proof_steps", None) is None


def test_structural_reading_refuses_what_it_cannot_bound() -> None:
    for mechanism in (noise_on_the_first_record, branch_on_the_size, branch_on_the_data, swallows_the_refusal,
                      releases_the_count, hidden_state, hidden_counter):
        with pytest.raises(NotStructural):
            cost_of(mechanism, BITS, {"eps": eps})


def test_a_mean_scaled_with_the_universes_n_is_eps_dp_from_n_3_only() -> None:
    [r] = _check(mean_scaled_with_the_universes_n, BITS, [dp.private(eps)], {eps: [1]})
    assert r.status.holds and r.coverage is None  # true on n = 3 (every eps there); not for every size
    cost = cost_of(mean_scaled_with_the_universes_n, BITS, {"eps": eps})
    assert sympy.simplify(cost.eps - 3 * eps / N) == 0
    assert at_most(cost.eps, eps, cost.n_min)[0] is False
    assert at_most(cost.eps, 3 * eps, cost.n_min)[0] is True


def test_the_sum_divided_by_a_constant_is_eps_dp_for_every_size() -> None:
    """sum(data)/3 with Lap(1/(3 eps)): Delta = 1/3 at every n, so eps-DP for every size (proved, correctly)."""
    def sum_over_3(data, eps):
        return dp.laplace(Fraction(1, 3) * sum(data), 1 / (3 * eps))
    for r in _check(sum_over_3, BITS, [dp.private(eps)]):
        assert _all_datasets(r)


def test_composition_costs_add() -> None:
    results = _check(two_releases, BITS, [dp.private(2 * eps, id="two"), dp.private(eps, id="one")])
    assert [_all_datasets(r) for r in results[:2]] == [True, True]
    assert [r.status for r in results[2:]] == [Status.REFUTED, Status.REFUTED]
    assert "total cost 2*eps" in results[0].message


def test_add_remove_derives_the_sensitivity_for_every_size() -> None:
    universe = dp.universe([0, 1], n=range(1, 4), neighbours=dp.ADD_REMOVE)

    def noisy_sum(data, eps):
        return dp.laplace(sum(data), 1 / eps)

    def noisy_size(data, eps):
        return dp.geometric(len(data), dp.exp(eps))  # len(data) differs by 1 between neighbours

    for mechanism in (noisy_sum, noisy_size):
        for r in _check(mechanism, universe, [dp.private(eps)]):
            assert _all_datasets(r) and "every size n >= 0" in r.coverage["label"], r.message


# ----- the second check: the structural bound must dominate the exact achieved eps --------------------------

def test_a_structural_bound_below_the_exact_achieved_eps_is_an_internal_inconsistency(monkeypatch) -> None:
    import dpverify.checks.privacy.structural as structural
    from dpverify.engine.structural import Cost

    def too_small(program, universe, params):
        return Cost(eps / 10, 1, "{0, 1}", ["a broken lemma: cost eps/10"])

    monkeypatch.setattr(structural, "cost_of", too_small)

    def noisy_count(data, eps):
        return dp.geometric(sum(data), dp.exp(eps))

    results = _check(noisy_count, BITS, [dp.private(eps), dp.private(eps / 2, id="half")])
    for r in results[:2]:
        assert r.status == Status.UNKNOWN and "internal inconsistency" in r.message and r.coverage is None
    for r in results[2:]:  # exact refutation contradicted by the "proof": the certified refutation stands
        assert r.status == Status.REFUTED and r.witness is not None and r.coverage is None
        assert "internal inconsistency" in r.message and "structural reading disagreed" in r.message


# ----- property: the structural verdict against the exact engine on small universes -----------------------

@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(top=st.integers(1, 3), geometric=st.booleans(), factor=st.fractions(Fraction(1, 4), 3, max_denominator=4),
       claim=st.fractions(Fraction(1, 4), 4, max_denominator=4), n=st.integers(1, 2))
def test_structural_bound_dominates_the_exact_achieved_eps(top, geometric, factor, claim, n) -> None:
    """Noise calibrated with a random factor on the sum of records in {0..top}: the structural cost
    (top * factor * eps) dominates the exact achieved eps, and a claim below the achieved eps is never
    proved for every dataset."""
    def mechanism(data, eps):
        if geometric:
            return dp.geometric(sum(data), dp.exp(factor * eps))
        return dp.laplace(sum(data), 1 / (factor * eps))

    universe = dp.universe(list(range(top + 1)), n=n, neighbours=dp.REPLACE_ONE, symmetric=True)
    cost = cost_of(mechanism, universe, {"eps": eps})
    assert sympy.simplify(cost.eps - top * factor * eps) == 0
    point = Fraction(1, 2)
    [r] = _check(mechanism, universe, [dp.private(claim * eps)], {eps: [point]})
    achieved = sympy.Rational(r.evidence.achieved_epsilon)
    assert cost.eps.subs(eps, point) >= achieved - sympy.Rational(1, 10 ** 20)
    if _all_datasets(r):
        assert claim >= top * factor
        assert achieved <= claim * point + sympy.Rational(1, 10 ** 20)
    else:
        assert claim < top * factor


def test_a_score_bound_to_the_generic_dataset_and_called_by_the_program_is_refused() -> None:
    """A term that ignores its record gives the same value on the generic record as on one record:
    the program may not compute with it (the structural run would see a one-record dataset)."""
    flat = dp.total(lambda x, y: y, domain=(0, 1))

    def peeks(data, eps):
        bound = flat.on(data)
        scale = 1 / eps if bound(1) == 1 else 1 / (5 * eps)
        return dp.laplace(sum(data), scale)

    with pytest.raises(NotStructural, match="evaluates a score"):
        cost_of(peeks, BITS, {"eps": eps})

    def picks(data, eps):
        return dp.exponential((0, 1), SCORE2.on(data), eps, neighbours=dp.REPLACE_ONE)

    assert cost_of(picks, BITS, {"eps": eps}).eps == eps


SCORE2 = dp.count(lambda x, y: x == y, domain=(0, 1))


# ----- comparisons of noisy values: every path read, adaptive composition -------------------------------

def adaptive_second_release(data, eps):
    first = dp.laplace(sum(data), 1 / eps)
    if first > 1:
        return first, dp.geometric(sum(data), dp.exp(eps))
    return first, None


def test_branching_on_noise_is_adaptive_composition_over_every_path() -> None:
    cost = cost_of(adaptive_second_release, BITS, {"eps": eps})
    assert sympy.simplify(cost.eps - 2 * eps) == 0
    assert any("path T: total 2*eps" in s for s in cost.steps) and any("path F: total eps" in s for s in cost.steps)
    results = _check(adaptive_second_release, BITS, [dp.private(2 * eps, id="two"), dp.private(eps, id="one")],
                     {eps: [1]})
    assert _all_datasets(results[0]) and "adaptive composition over the 2 paths" in results[0].message
    assert not _all_datasets(results[1]) and results[1].status == Status.REFUTED


def test_the_thresholded_histograms_are_proved_for_every_answer_vector() -> None:
    hist = _module("benchmark/histogram.py")
    for spec in (hist.histogram_threshold, hist.histogram_above):
        for r in dp.check(spec):
            assert _all_datasets(r), r.message
            assert "adaptive composition over the 8 paths" in r.message
    [r] = dp.check(hist.histogram_threshold_exact_release)
    assert r.status == Status.REFUTED and r.coverage is None


def test_unbounded_comparisons_of_noise_and_reading_a_noisy_number_are_refused() -> None:
    def spins(data, eps):
        x = dp.laplace(sum(data), 1 / eps)
        while dp.laplace(0, 1) > 0:
            pass
        return x

    with pytest.raises(NotStructural, match="comparisons of noisy values on one path"):
        cost_of(spins, BITS, {"eps": eps})

    def indexes(data, eps):
        return (0, 1, 2)[int(dp.laplace(sum(data), 1 / eps))]

    with pytest.raises(NotStructural, match="converts to int"):
        cost_of(indexes, BITS, {"eps": eps})

    def compares_with_the_data(data, eps):
        return dp.laplace(sum(data), 1 / eps) > sum(data)

    with pytest.raises(NotStructural, match="compares a noisy value with a value computed from the data"):
        cost_of(compares_with_the_data, BITS, {"eps": eps})


# ----- sum(<term> for x in data) ----------------------------------------------------------------------------

def squares(data, eps):
    return dp.geometric(sum(x * x for x in data), dp.exp(eps / 4))  # t(x) = x^2 over {0, 1, 2}: Delta 4


def positives(data, eps):
    k = 1
    return dp.laplace(sum(k for x in data if x > 0), 1 / eps)  # a count: Delta 1


def test_a_sum_of_a_term_over_the_records_is_the_total_of_that_term() -> None:
    assert cost_of(squares, TRITS, {"eps": eps}).eps == eps
    assert cost_of(positives, TRITS, {"eps": eps}).eps == eps
    for r in _check(squares, TRITS, [dp.private(eps)]):
        assert _all_datasets(r), r.message
    for r in _check(squares, TRITS, [dp.private(eps / 2)]):
        assert r.status == Status.REFUTED


def test_a_loop_over_the_records_or_a_noisy_term_is_refused() -> None:
    def loops(data, eps):
        total = 0
        for x in data:
            total += x
        return dp.laplace(total, 1 / eps)

    def noisy_term(data, eps):
        return dp.laplace(sum(dp.laplace(x, 1 / eps) for x in data), 1 / eps)

    def term_with_eps(data, eps):
        return dp.laplace(sum(x * eps for x in data), 1)

    for mechanism, words in ((loops, "iterates over the dataset"), (noisy_term, "not an exact number|draws noise|captures|global"),
                             (term_with_eps, "not an exact number|captures")):
        with pytest.raises(NotStructural, match=words):
            cost_of(mechanism, TRITS, {"eps": eps})


# ----- probes that would tell the generic run from a real one ------------------------------------------------

def _probing(probe):
    def mechanism(data, eps):
        scale = 1 / (100 * eps) if probe(data, eps) else 1 / eps  # a real run: 1/eps; a fooled reading: 1/(100 eps)
        return dp.laplace(sum(data), scale)
    return mechanism


PROBES = {
    "isinstance of the data": lambda data, eps: not isinstance(data, tuple),
    "isinstance of eps": lambda data, eps: not isinstance(eps, (int, Fraction, sympy.Basic)),
    "isinstance of the size": lambda data, eps: not isinstance(len(data), int),
    "type of eps": lambda data, eps: type(eps).__name__ == "Sym",
    "text of eps": lambda data, eps: str(eps).startswith("Sym"),
    "repr of the data": lambda data, eps: "every" in repr(data),
    "an attribute of eps": lambda data, eps: hasattr(eps, "expr"),
    "a format of the size": lambda data, eps: f"{len(data)}" == "n",
}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_a_program_that_probes_the_reading_is_not_proved_for_every_dataset(name) -> None:
    with pytest.raises(NotStructural):
        cost_of(_probing(PROBES[name]), BITS, {"eps": eps})


def test_geometric_noise_needs_an_integer_centre_for_every_dataset() -> None:
    def halves(data, eps):
        return dp.geometric(sum(data), dp.exp(eps))

    with pytest.raises(NotStructural, match="not an integer on the record"):
        cost_of(halves, dp.universe([0, Fraction(1, 2)], n=2, neighbours=dp.REPLACE_ONE), {"eps": eps})

    def halved(data, eps):
        return dp.geometric(Fraction(1, 2) * sum(data), dp.exp(eps / 2))

    with pytest.raises(NotStructural, match="not shown to be an integer"):
        cost_of(halved, dp.universe([0, 2], n=2, neighbours=dp.REPLACE_ONE), {"eps": eps})

    def scaled_by_the_size(data, eps):  # n sum(data) is an integer: read, at cost n eps
        return dp.geometric(sum(data) * len(data), dp.exp(eps))

    assert cost_of(scaled_by_the_size, BITS, {"eps": eps}).eps == N * eps


# ----- q(data) and q.on(data) through views of the queries -----------------------------------------------

MEAN = dp.mean(lambda v: v, domain=dp.interval(0, 1))
ONES = dp.count(lambda v: v == 1, domain=(0, 1))


def test_a_query_called_on_the_data_is_its_derived_sensitivity() -> None:
    def noisy_mean(data, eps):
        return dp.laplace(MEAN(data), 1 / (len(data) * eps))

    def noisy_difference(data, eps):
        return dp.geometric((ONES - 0)(data), dp.exp(eps))

    def built_inside(data, eps):
        agree = dp.count(lambda x, y: x == y, domain=(0, 1))
        return dp.exponential((0, 1), (2 * agree + 1).on(data), 2 * eps, neighbours=dp.REPLACE_ONE)

    for mechanism, domain in ((noisy_mean, "[0, 1]"), (noisy_difference, "{0, 1}"), (built_inside, "{0, 1}")):
        cost = cost_of(mechanism, BITS, {"eps": eps})
        assert cost.eps == (2 * eps if mechanism is built_inside else eps) and cost.domain == domain, mechanism
    for r in _check(noisy_mean, BITS, [dp.private(eps)]):
        assert _all_datasets(r) and "all datasets over [0, 1]" in r.coverage["label"], r.message

    def probes_the_query(data, eps):
        scale = 1 / eps if isinstance(MEAN, dp.Query) else 1 / (9 * eps)
        return dp.laplace(MEAN(data), scale / len(data))

    def peeks_at_the_score(data, eps):
        bound = ONES.on(data)
        return dp.laplace(sum(data), 1 / eps if len(bound.data) > 2 else 1 / (9 * eps))

    for mechanism in (probes_the_query, peeks_at_the_score):
        with pytest.raises(NotStructural):
            cost_of(mechanism, BITS, {"eps": eps})


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(shape=st.sampled_from(["two noises", "branch", "exponential", "rr", "mean"]),
       f1=st.fractions(Fraction(1, 2), 2, max_denominator=2), f2=st.fractions(Fraction(1, 2), 2, max_denominator=2),
       claim=st.fractions(Fraction(1, 2), 4, max_denominator=4))
def test_random_structured_programs_against_the_exact_engine(shape, f1, f2, claim) -> None:
    """Compositions, branches on noise, the exponential mechanism, randomized response and a mean, with random
    calibration factors: the structural bound dominates the exact achieved eps at the grid point, and a point
    proved for every dataset is never one the exact engine refutes (nor one whose claim is below the bound)."""
    score = dp.count(lambda x, y: x == y, domain=(0, 1))

    def mechanism(data, eps):
        if shape == "two noises":
            return dp.laplace(sum(data), 1 / (f1 * eps)), dp.geometric(sum(data), dp.exp(f2 * eps))
        if shape == "branch":
            first = dp.laplace(sum(data), 1 / (f1 * eps))
            return (first, dp.laplace(sum(data), 1 / (f2 * eps))) if first > 1 else (first, None)
        if shape == "exponential":
            return dp.exponential((0, 1), score.on(data), f1 * eps, neighbours=dp.REPLACE_ONE)
        if shape == "rr":
            return dp.randomized_response(data[0], f1 * eps), dp.randomized_response(data[0], f2 * eps)
        return dp.laplace(Fraction(1) * sum(data) / len(data), 1 / (len(data) * f1 * eps))

    universe = dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE)
    cost = cost_of(mechanism, universe, {"eps": eps})
    expected = {"two noises": f1 + f2, "branch": f1 + f2, "exponential": f1, "rr": f1 + f2, "mean": f1}[shape]
    assert sympy.simplify(cost.eps - expected * eps) == 0
    [r] = _check(mechanism, universe, [dp.private(claim * eps)], {eps: [Fraction(1, 2)]})
    assert r.status in (Status.PROVED, Status.VERIFIED, Status.REFUTED), r.message
    achieved = sympy.Rational(r.evidence.achieved_epsilon)
    assert cost.eps.subs(eps, Fraction(1, 2)) >= achieved - sympy.Rational(1, 10 ** 20)
    if _all_datasets(r):
        assert claim >= expected
    elif r.status.holds:
        assert claim < expected  # holds on the universe, not shown for every dataset by the structure


def test_the_json_document_carries_the_scope_and_the_proof_steps() -> None:
    import json

    from click.testing import CliRunner

    from dpverify.cli import main
    result = CliRunner().invoke(main, ["check", str(ROOT / "geometric.py"), "--json", "--no-cache", "--claim", "private"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    points = [p for s in document["specs"] for c in s["claims"] for p in c["points"] if c["kind"] == "private"]
    assert len(points) == 12
    for p in points:
        assert p["status"] == "proved"
        assert p["coverage"]["scope"] == "all datasets"
        assert p["coverage"]["label"].startswith("all datasets over {0, 1")
        assert p["figures"]["proof_steps"][-1].startswith("the claimed eps is eps")

    result = CliRunner().invoke(main, ["check", str(ROOT / "geometric.py"), "--json", "--no-cache", "--no-proofs",
                                       "--claim", "private"])
    assert result.exit_code == 0, result.output  # without proofs nothing is upgraded
    document = json.loads(result.output)
    assert all(p["coverage"] is None and p["status"] == "verified"
               for s in document["specs"] for c in s["claims"] for p in c["points"])


def test_hashing_a_noisy_value_is_refused_as_in_every_reading() -> None:
    def hashes(data, eps):
        noisy = dp.laplace(sum(data), 1 / eps)
        return dp.laplace(sum(data), 1 / eps if hash(noisy) % 2 else 1 / (9 * eps))

    with pytest.raises(NotStructural, match="hashes"):
        cost_of(hashes, BITS, {"eps": eps})


def test_an_output_that_follows_a_parameter_gets_no_structural_proof() -> None:
    """As in the symbolic reading: the exact readings see the output at one eps only."""
    def tagged(data, eps):
        return dp.randomized_response(data[0], eps), 3 * eps

    with pytest.raises(NotStructural, match="computed from a parameter"):
        cost_of(tagged, BITS, {"eps": eps})

    def sized(data, eps):  # n is the same on replace-one neighbours: releasing it is free
        return dp.randomized_response(data[0], eps), len(data)

    assert cost_of(sized, BITS, {"eps": eps}).eps == eps
