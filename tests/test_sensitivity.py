"""Sensitivity: derived formulas in n, their mutants, the measured fallback, and the derived Delta
that an exponential mechanism takes when its ``sensitivity=`` is omitted.

Every mutant below (a claim off by a factor, off by one in n, stated for the
wrong neighbour relation) must come back ``refuted`` with a pair of datasets
that are neighbours and whose recomputed query values differ by more than the
claim.  The property test pins the derivation to brute force: for random small
record domains and random record terms, the derived Delta(n) equals the exact
max |q(X) - q(X')| over all neighbouring pairs of size n.
"""
from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpverify as dp
from dpverify.checks import Workspace, check_point
from dpverify.engine.decide.eventually import compare, piecewise
from dpverify.dsl.queries import Finite
from dpverify.engine.sensitivity.derive import N, NotDerivable, derive
from dpverify.loader import load

SPEC_DIR = Path(__file__).resolve().parent.parent / "spec"
n = dp.symbol("n", integer=True, positive=True)
eps = dp.symbol("eps", positive=True)


def learner_module():
    spec = next(s for s in load(SPEC_DIR / "em_private_learner.py") if s.name == "threshold_learner")
    return spec, spec.mechanism.__globals__


def em_module():
    return {s.name: s for s in load(SPEC_DIR / "exponential_mechanism.py")}


def run(spec: dp.Spec, claim_id: str):
    claim = next(c for c in spec.claims if c.id == claim_id)
    return check_point(spec, claim, (), Workspace())


def with_claims(spec: dp.Spec, *claims) -> dp.Spec:
    return dp.spec(spec.mechanism, universe=spec.universe, grid={eps: [1]}, claims=list(claims))


def assert_refuted_with_pair(result, relation=dp.REPLACE_ONE) -> None:
    assert result.status.value == "refuted", result.message
    w = result.witness
    gone, new = Counter(w.x) - Counter(w.x_prime), Counter(w.x_prime) - Counter(w.x)
    if relation is dp.ADD_REMOVE:
        assert len(w.x) == len(w.x_prime) + 1 and sum(gone.values()) == 1 and not new, (w.x, w.x_prime)
    else:
        assert sum(gone.values()) == sum(new.values()) == 1, (w.x, w.x_prime)
    assert "confirmed" in result.message
    change = abs(Fraction(w.p) - Fraction(w.p_prime))
    assert change > Fraction(result.evidence.claimed_at_n), result.message


# ----- the catalogue's claims -----------------------------------------------------------

def test_empirical_error_is_proved_one_over_n_and_the_learner_uses_it() -> None:
    spec, _ = learner_module()
    result = run(spec, "error_sensitivity")
    assert result.status.value == "proved", result.message
    assert result.evidence.derived == "1/n"
    assert "agrees with exact enumeration of the universe at n = 1, 2, 3, 4" in result.message
    assert "threshold_learner omits sensitivity= and takes" in result.message


def test_exponential_mechanism_scores_are_proved() -> None:
    specs = em_module()
    assert run(specs["most_frequent"], "count_sensitivity").status.value == "proved"
    balance = run(specs["median"], "balance_sensitivity")
    assert balance.status.value == "proved", balance.message
    assert balance.evidence.derived == "Piecewise((1, Eq(n, 1)), (2, True))"


def test_mean_of_unit_values_is_one_over_m_under_both_relations() -> None:
    (spec,) = [s for s in load(SPEC_DIR / "laplace.py") if s.name == "mean_sensitivity"]
    for claim in spec.claims:
        result = check_point(spec, claim, (), Workspace())
        assert result.status.value == "proved" and result.evidence.derived == "1/m", result.message


# ----- mutants --------------------------------------------------------------------------

@pytest.mark.parametrize("claimed", [1 / (2 * n), 1 / (n + 1), Fraction(1, 2) / n + Fraction(1, 4)],
                         ids=["halved", "off_by_one", "affine"])
def test_understated_learner_sensitivity_is_refuted(claimed) -> None:
    spec, g = learner_module()
    mutant = with_claims(spec, dp.sensitivity(g["empirical_error"], claimed, n=n, candidates=g["THRESHOLDS"]))
    assert_refuted_with_pair(run(mutant, "sensitivity"))


def test_sensitivity_for_the_wrong_relation_is_refuted() -> None:
    """The balance score moves by 1 under add/remove but by 2 under replace-one (n >= 2)."""
    specs = em_module()
    g = specs["median"].mechanism.__globals__
    claim = dp.sensitivity(g["balance"], 1, n=n, candidates=g["DOMAIN"], n_min=2, neighbours=dp.REPLACE_ONE)
    holds = dp.sensitivity(g["balance"], 1, n=n, candidates=g["DOMAIN"], neighbours=dp.ADD_REMOVE, id="ok")
    mutant = with_claims(specs["median"], claim, holds)
    result = run(mutant, "sensitivity")
    assert_refuted_with_pair(result)
    assert result.evidence.n == 2
    assert run(mutant, "ok").status.value == "proved"


def test_label_only_sensitivity_claimed_for_replace_one_is_refuted() -> None:
    """A sum of features cannot change when only a label does (0), but it can under replace-one."""
    features = dp.total(lambda rec: rec[0], domain=dp.labelled([0, 1, 2], [0, 1]))
    spec = dp.spec(name="features", claims=[
        dp.sensitivity(features, 0, neighbours=dp.LABEL_ONLY, id="label"),
        dp.sensitivity(features, 0, neighbours=dp.REPLACE_ONE, id="replace")])
    assert run(spec, "label").status.value == "proved"
    assert_refuted_with_pair(run(spec, "replace"))


def test_understated_mean_over_an_interval_is_refuted_both_ways() -> None:
    m = dp.symbol("m", integer=True, positive=True)
    q = dp.mean(lambda v: v, domain=dp.interval(0, 1))
    spec = dp.spec(name="mean", claims=[
        dp.sensitivity(q, 1 / (2 * m), n=m, neighbours=dp.REPLACE_ONE, id="replace"),
        dp.sensitivity(q, 1 / (m + 1), n=m, neighbours=dp.ADD_REMOVE, id="add_remove")])
    assert_refuted_with_pair(run(spec, "replace"))
    assert_refuted_with_pair(run(spec, "add_remove"), dp.ADD_REMOVE)


def test_every_refutation_is_built_in_one_place_with_its_evidence() -> None:
    """The three ways a sensitivity claim is refuted -- the derivation's pair, a measured pair, an
    ``equals=`` claim above the true value -- all end in checks/sensitivity/refute.py: the evidence
    gives n and the claim at n, with the exact value (derived, loose) or the pair's change (measured)."""
    package = Path(dp.__file__).parent / "checks" / "sensitivity"
    for path in package.glob("*.py"):
        text = path.read_text()
        if path.name != "refute.py":
            assert "Status.REFUTED" not in text and "Witness(" not in text, path.name
    spec, g = learner_module()
    derived = run(with_claims(spec, dp.sensitivity(g["empirical_error"], 1 / (2 * n), n=n,
                                                   candidates=g["THRESHOLDS"])), "sensitivity")
    assert_refuted_with_pair(derived)
    assert (derived.evidence.n, derived.evidence.exact, derived.evidence.claimed_at_n,
            derived.evidence.change) == (1, "1", "1/2", None)
    distinct = dp.query(lambda data: len(set(data)))
    measured = run(dp.spec(lambda data, eps: 0, universe=dp.universe([0, 1, 2], n=3, neighbours=dp.REPLACE_ONE),
                           grid={eps: [1]}, claims=[dp.sensitivity(distinct, Fraction(1, 2))]), "sensitivity")
    assert_refuted_with_pair(measured)
    assert (measured.evidence.n, measured.evidence.exact, measured.evidence.claimed_at_n,
            measured.evidence.change) == (3, None, "1/2", "1")
    count = dp.count(lambda r: r == 1, domain=[0, 1, 2])
    loose = run(dp.spec(name="count", claims=[dp.sensitivity(count, 2, neighbours=dp.REPLACE_ONE)]), "sensitivity")
    assert loose.status.value == "refuted" and loose.message.startswith("the sensitivity at n = 1 is 1, not the "
                                                                        "claimed 2: X="), loose.message
    assert (loose.evidence.n, loose.evidence.exact, loose.evidence.claimed_at_n, loose.evidence.change) == \
        (1, "1", "2", None)


def test_loose_claim_is_proved_and_flagged() -> None:
    spec, g = learner_module()
    mutant = with_claims(spec, dp.sensitivity(g["empirical_error"], at_most=2 / n, candidates=g["THRESHOLDS"]))
    result = run(mutant, "sensitivity")
    assert result.status.value == "proved" and "loose: exact value 1/n" in result.message
    assert result.evidence.loose == {"n": 1, "claimed": "2", "exact": "1"}


def test_a_claim_below_n_min_is_an_error_naming_the_fix() -> None:
    q = dp.mean(lambda v: v, domain=dp.interval(0, 1))
    spec = dp.spec(name="mean", claims=[dp.sensitivity(q, 1 / n, neighbours=dp.ADD_REMOVE, n_min=1)])
    result = run(spec, "sensitivity")
    assert result.status.value == "error" and "n_min=2" in result.message


@pytest.mark.parametrize("build, message", [
    (lambda: dp.sensitivity(lambda data: 0, 1), "is not a query"),
    (lambda: dp.sensitivity(dp.count(lambda r, y: r == y), 1), "needs candidates="),
    (lambda: dp.sensitivity(dp.count(lambda r: r), 1, candidates=[0]), "only for scores"),
    (lambda: dp.sensitivity(dp.count(lambda r: r), eps / n, n=n), "a function of n=n only"),
    (lambda: dp.sensitivity(dp.count(lambda r: r), -1), "is negative"),
    (lambda: dp.sensitivity(dp.count(lambda r: r), 1, n_min=0), "n_min=0"),
    (lambda: dp.mean(lambda r: r, domain=[0, 1]) + dp.mean(lambda r: r, domain=[0, 2]), "different domains"),
], ids=["not_a_query", "no_candidates", "candidates_for_a_query", "other_symbol", "negative", "n_min", "domains"])
def test_malformed_sensitivity_claims_name_the_fix(build, message) -> None:
    with pytest.raises(dp.SpecError, match="fix:") as info:
        build()
    assert message in str(info.value)


# ----- not derivable: enumeration and z3 ------------------------------------------------

def test_a_max_plus_a_mean_is_measured_by_enumeration_and_z3() -> None:
    """Delta(n) = 1 + 1/n (drop the only 1): not decomposable, so verified at finitely many n."""
    bits = dp.max_of(lambda v: v, domain=[0, 1]) + dp.mean(lambda v: v, domain=[0, 1])
    universe = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)
    spec = dp.spec(lambda data, eps: 0, universe=universe, grid={eps: [1]}, claims=[
        dp.sensitivity(bits, 1 + 1 / n, id="right"),
        dp.sensitivity(bits, 3 - n, id="wrong_beyond_the_universe"),
        dp.sensitivity(bits, at_most=2, id="loose")])
    right = run(spec, "right")
    assert right.status.value == "verified" and "not proved for every n" in right.message
    assert "z3 over symbolic datasets" in right.message and "2, 3, 4, 5, 6, 7, 8" in right.message
    wrong = run(spec, "wrong_beyond_the_universe")  # holds at the universe's n = 1; z3 breaks n = 2
    assert_refuted_with_pair(wrong)
    assert wrong.evidence.n == 2 and "z3" in wrong.message
    assert "loose" in run(spec, "loose").message


def test_a_plain_function_is_enumerated_only() -> None:
    distinct = dp.query(lambda data: len(set(data)))
    spec = dp.spec(lambda data, eps: 0, universe=dp.universe([0, 1, 2], n=3, neighbours=dp.REPLACE_ONE),
                   grid={eps: [1]}, claims=[dp.sensitivity(distinct, 1, id="one"),
                                            dp.sensitivity(distinct, Fraction(1, 2), id="half")])
    one = run(spec, "one")
    assert one.status.value == "verified" and "z3 not applicable" in one.message
    assert_refuted_with_pair(run(spec, "half"))


def test_an_interval_query_that_is_not_derivable_is_unknown() -> None:
    q = dp.query(lambda data: max(data) - min(data), domain=dp.interval(0, 1))
    result = run(dp.spec(name="spread", claims=[dp.sensitivity(q, 1, neighbours=dp.REPLACE_ONE)]), "sensitivity")
    assert result.status.value == "unknown" and "not finite" in result.message


# ----- the exponential mechanism without sensitivity= ----------------------------------

def test_derived_and_stated_sensitivity_give_the_same_mechanism() -> None:
    spec, g = learner_module()
    score, thresholds = g["score"], g["THRESHOLDS"]

    def stated(data, eps):
        return dp.exponential(thresholds, score.on(data), eps, sensitivity=Fraction(1, len(data)))
    from dpverify.engine.program.backend import SympyBackend
    from dpverify.engine.program.reading import distribution
    for data in [((0, 1),), ((0, 1), (3, 0), (2, 1))]:
        assert distribution(spec.mechanism, data, {"eps": 1}, SympyBackend()) == \
            distribution(stated, data, {"eps": 1}, SympyBackend())


def test_runtime_delta_is_per_size_or_the_supremum_under_add_remove() -> None:
    """Replace-one compares one size, so Delta(len(data)); add/remove needs one Delta for all sizes."""
    from dpverify.engine.sensitivity.derive import runtime_sensitivity
    share = dp.mean(lambda r, y: int(r == y), domain=[0, 1, 2])
    assert runtime_sensitivity(share, (0, 1), dp.REPLACE_ONE, 5)[0] == sympy.Rational(1, 5)
    value, note = runtime_sensitivity(share, (0, 1), dp.ADD_REMOVE, 5)
    assert value == sympy.Rational(1, 2) and "sup over n >= 2" in note


@pytest.mark.parametrize("score, extra, message", [
    (lambda data: (lambda t: t), {"neighbours": dp.REPLACE_ONE}, "is a plain function"),
    (lambda data: dp.count(lambda x, y: x == y, domain=[0, 1]), {"neighbours": dp.REPLACE_ONE}, "score.on(data)"),
    (lambda data: dp.count(lambda x, y: x == y, domain=[0, 1]).on(data), {}, "neighbours=dp.REPLACE_ONE"),
    (lambda data: dp.count(lambda x, y: x == y).on(data), {"neighbours": dp.REPLACE_ONE}, "domain="),
], ids=["lambda", "unbound", "no_relation", "no_domain"])
def test_omitted_sensitivity_without_a_derivable_score_says_how_to_fix_it(score, extra, message) -> None:
    def mech(data, eps):
        return dp.exponential([0, 1], score(data), eps, **extra)
    spec = dp.spec(mech, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE), grid={eps: [1]},
                   claims=[dp.private(eps)])
    [result] = dp.check(spec)
    assert result.status.value == "error" and message in result.message and "fix:" in result.message


# ----- exact forms in n -------------------------------------------------------------------

def test_eventual_forms_are_exact() -> None:
    assert piecewise(sympy.Max(1, 3 - N), N, 1) == sympy.Piecewise((2, sympy.Eq(N, 1)), (1, True))
    tight = compare(sympy.Piecewise((1, sympy.Eq(N, 1)), (2, True)), sympy.Max(1, sympy.Min(2, N)), N, 1)
    assert tight.below is None and tight.above is None
    assert compare(1 / N - sympy.Rational(1, 100), 1 / N, N, 1).below == 1
    touching = compare(1 / N + (N - 200) ** 2 / N ** 4, 1 / N, N, 1)  # equal at n = 200 only
    assert touching.below is None and touching.above == 1 and not touching.tail_identity


# ----- property: derivation == brute force ----------------------------------------------

def brute_force(query, records, relation, size, candidates=(None,)) -> Fraction:
    """max |q(X) - q(X')| over every neighbouring pair of sequences of the given size, by definition."""
    best = Fraction(0)
    for data in itertools.product(records, repeat=size):
        for pos in range(size):
            if relation is dp.ADD_REMOVE:
                others = [data[:pos] + data[pos + 1:]]
            else:
                others = [data[:pos] + (r,) + data[pos + 1:] for r in records
                          if r != data[pos] and (relation is dp.REPLACE_ONE or r[0] == data[pos][0])]
            for other, h in itertools.product(others, candidates):
                args = () if h is None else (h,)
                best = max(best, abs(Fraction(query(data, *args)) - Fraction(query(other, *args))))
    return best


values = st.integers(-3, 3)
FORMS = ["count", "total", "mean", "max_of", "min_of", "abs_total", "total_minus_mean", "scaled_abs_mean",
         "abs_mixed", "score_mean", "score_abs"]


def build(form: str, table: dict, other: dict, shift: int):
    t, u = table.__getitem__, other.__getitem__

    def pick(r, h):
        return t(r) if h == 0 else u(r)
    return {
        "count": lambda: dp.count(lambda r: t(r) > 0),
        "total": lambda: dp.total(t),
        "mean": lambda: dp.mean(t),
        "max_of": lambda: dp.max_of(t),
        "min_of": lambda: -dp.min_of(t) * 2,
        "abs_total": lambda: abs(dp.total(t) + shift),
        "total_minus_mean": lambda: dp.total(t) - dp.mean(u),
        "scaled_abs_mean": lambda: -abs(dp.mean(t) + shift) / 2,
        "abs_mixed": lambda: abs(dp.total(t) - dp.mean(u) + shift),
        "score_mean": lambda: dp.mean(pick) + dp.count(lambda r, h: r == h),
        "score_abs": lambda: -abs(dp.count(lambda r, h: t(r) > h) - dp.count(lambda r, h: u(r) < h)),
    }[form]()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), form=st.sampled_from(FORMS),
       relation=st.sampled_from([dp.REPLACE_ONE, dp.ADD_REMOVE, dp.LABEL_ONLY]), shift=st.integers(-2, 2))
def test_derived_sensitivity_equals_the_enumerated_maximum(data, form, relation, shift) -> None:
    if relation is dp.LABEL_ONLY:
        records = dp.labelled(range(data.draw(st.integers(1, 2))), range(data.draw(st.integers(2, 3))))
    else:
        records = tuple(range(data.draw(st.integers(1, 4))))
    table = {r: data.draw(values) for r in records}
    other = {r: data.draw(values) for r in records}
    query = build(form, table, other, shift)
    candidates = (0, 1) if query.is_score else (None,)
    try:
        d = derive(query, relation, Finite(records), candidates)
    except NotDerivable as err:  # the one documented gap: |q| with a mean part under add/remove
        assert form in ("scaled_abs_mean", "abs_mixed") and relation is dp.ADD_REMOVE, err
        return
    for size in range(d.n_min, 4):
        assert d.value(size) == brute_force(query, records, relation, size, candidates), \
            (form, relation, size, d.expr)
