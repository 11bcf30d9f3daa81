"""The sums over multisets by the counts form (dpverify.engine.datasets.counts): a learner whose score is a linear
query of the sample is traced once on a sealed sample; its exact weights are grouped by exponent vector,
or the sum is enclosed in float64 interval arithmetic.  Held against the per-multiset readings (the
independent path of before), against exact sympy values, on random small populations and scores; programs
that read the sample outside the score, or behave differently on a sealed sample, fall back."""
import itertools
import math
import time
from fractions import Fraction

import mpmath
import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sympy import Rational

import dpverify as dp
from dpverify.checks.theorems.sample_complexity import FailureProbability
from dpverify.engine.datasets import counts as by_counts
from dpverify.engine.datasets.counts import grouped, injective
from dpverify.engine.datasets.multisets import MultisetSum, OrderDependent, multisets, weighted

eps = dp.symbol("eps", positive=True)
XS, THRESHOLDS = (0, 1, 2, 3), (0, 1, 2, 3, 4)
POPULATION = {(x, int(x >= 2)): Fraction(1, 4) for x in XS}
ALPHA = Fraction(1, 4)
error = dp.mean(lambda rec, t: int(int(rec[0] >= t) != rec[1]), domain=list(POPULATION))


def learner(data, eps):
    """The private threshold learner: the exponential mechanism, score minus the empirical error (dp.mean)."""
    return dp.exponential(THRESHOLDS, (-error).on(data), eps, neighbours=dp.REPLACE_ONE)


def true_error(t, population=POPULATION):
    return sum(p for (x, y), p in population.items() if int(x >= t) != y)


def bad(t):
    return true_error(t) > ALPHA


def summed(program, population=POPULATION, predicate=bad, dps=30, **kwargs):
    return MultisetSum(program, {"eps": sympy.Integer(1)}, tuple(population.items()), predicate, dps, **kwargs)


def overlap(a, b) -> bool:
    return a.a <= b.b and b.a <= a.b


def relative_width(x) -> float:
    return float(((x.b - x.a) / x.b).a) if x.b else 0.0


def exact_failure(population, n, program_scores, eps_=1) -> sympy.Expr:
    """sum over sequences of prod p * sum_bad e^(eps u/(2 Delta)) / sum e^(...), exactly (Delta = 1/n)."""
    total = sympy.Integer(0)
    for sample in itertools.product(list(population), repeat=n):
        weight = sympy.prod([sympy.Rational(population[r]) for r in sample])
        scores = program_scores(sample)
        w = {t: sympy.exp(sympy.Rational(eps_) * sympy.Rational(s) * n / 2) for t, s in scores.items()}
        total += weight * sum(v for t, v in w.items() if bad(t)) / sum(w.values())
    return total


def contains(enclosure, exact: sympy.Expr, digits: int = 80) -> bool:
    with mpmath.workdps(digits):
        value = mpmath.mpf(str(sympy.N(exact, digits)))
        slack = abs(value) * mpmath.mpf(10) ** (5 - digits)
        return mpmath.mpf(enclosure.a) <= value + slack and value - slack <= mpmath.mpf(enclosure.b)


def test_grouped_and_float_sums_agree_with_the_multiset_reading_and_the_exact_value(monkeypatch) -> None:
    for n in (1, 3, 10, 16):
        old = summed(learner, counts=False)
        new = summed(learner)
        assert new.at(n).a == old.at(n).a and new.at(n).b == old.at(n).b or overlap(new.at(n), old.at(n))
        assert new.paths[n] == "grouped" and old.paths[n] == "multisets"
        assert relative_width(new.at(n)) < 1e-25
        monkeypatch.setattr(by_counts, "GROUP_LIMIT", 0)
        floating = summed(learner)
        assert floating.at(n) is not None and floating.paths[n] == "float"
        assert overlap(floating.at(n), old.at(n)) and relative_width(floating.at(n)) < 1e-12, n
        monkeypatch.undo()

    def scores(sample):
        return {t: -Fraction(sum(int(int(x >= t) != y) for x, y in sample), len(sample)) for t in THRESHOLDS}
    exact = exact_failure(POPULATION, 3, scores)
    assert contains(summed(learner).at(3), exact)
    monkeypatch.setattr(by_counts, "GROUP_LIMIT", 0)
    assert contains(summed(learner).at(3), exact)


def test_the_check_verifies_with_the_counts_form_and_refutes_only_by_the_multiset_reading() -> None:
    def spec_with(bound):
        return dp.spec(learner, universe=dp.universe(list(POPULATION), n=1, neighbours=dp.REPLACE_ONE),
                       grid={eps: [1]},
                       claims=[dp.sample_complexity(population=POPULATION, error=true_error, alpha=ALPHA,
                                                    beta=Fraction(1, 4), bound=bound)])
    [held] = dp.check(spec_with(40))
    assert held.status.value == "verified" and held.evidence.n_bound == 40, held.message
    [refuted] = dp.check(spec_with(3))
    assert refuted.status.value == "refuted" and "confirmed" in refuted.message


def test_a_float_enclosure_that_cannot_decide_is_read_again_precisely(monkeypatch) -> None:
    monkeypatch.setattr(by_counts, "GROUP_LIMIT", 0)
    at_12 = summed(learner).at(12)
    text = mpmath.nstr(mpmath.mpf(at_12.mid.a), 25)
    beta = Fraction(text)  # inside the float enclosure
    with mpmath.workdps(60):
        assert mpmath.mpf(at_12.a) < mpmath.mpf(text) < mpmath.mpf(at_12.b)
    spec = dp.spec(learner, universe=dp.universe(list(POPULATION), n=1, neighbours=dp.REPLACE_ONE),
                   grid={eps: [1]}, claims=[dp.sample_complexity(population=POPULATION, error=true_error,
                                                                 alpha=ALPHA, beta=beta, bound=12)])
    [result] = dp.check(spec)
    precise = summed(learner, counts=False, dps=50).at(12)
    with mpmath.workdps(60):
        expected = "verified" if mpmath.mpf(precise.b) <= mpmath.mpf(text) else "refuted"
    assert result.status.value == expected, result.message


# ----- random small populations, scores and bad sets -----------------------------------------------

RECORDS = [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(RECORDS), min_size=1, max_size=5, unique=True).flatmap(
           lambda recs: st.tuples(
               st.just(recs),
               st.lists(st.integers(0, 3), min_size=len(recs), max_size=len(recs)).filter(lambda ws: sum(ws) > 0),
               st.lists(st.lists(st.integers(-2, 2), min_size=3, max_size=3), min_size=len(recs),
                        max_size=len(recs)),
               st.sets(st.integers(0, 2)),
               st.integers(1, 7), st.sampled_from([Rational(1, 3), 1, 3]), st.booleans(), st.booleans())))
def test_random_linear_scores_agree_with_the_multiset_reading(case) -> None:
    records, raw, table, chosen, n, eps_value, mean, float_path = case
    population = {r: Fraction(w, sum(raw)) for r, w in zip(records, raw)}
    term = {r: row for r, row in zip(records, table)}
    make = dp.mean if mean else dp.total
    query = make(lambda rec, y: term.get(rec, [0, 0, 0])[y], domain=records)

    def program(data, eps):
        return dp.exponential((0, 1, 2), query.on(data), eps, sensitivity=Fraction(7, 2))

    def predicate(y):
        return y in chosen

    values = {"eps": sympy.sympify(eps_value)}
    old = MultisetSum(program, values, tuple(population.items()), predicate, 30, counts=False)
    limit = 0 if float_path else by_counts.GROUP_LIMIT
    original, by_counts.GROUP_LIMIT = by_counts.GROUP_LIMIT, limit
    try:
        new = MultisetSum(program, values, tuple(population.items()), predicate, 30)
        value = new.at(n)
    finally:
        by_counts.GROUP_LIMIT = original
    assert new.paths[n] == ("float" if float_path else "grouped")
    assert overlap(value, old.at(n)), (value, old.at(n))
    assert relative_width(value) < (1e-12 if float_path else 1e-25) or value.b < 1e-40


def test_records_the_score_cannot_tell_apart_are_merged_and_groups_are_counted_exactly() -> None:
    # labels on x = 0 are never wrong for these thresholds' scores below: records (0, 0) and (0, 1) merge
    population = {(0, 0): Fraction(1, 4), (0, 1): Fraction(1, 4), (1, 0): Fraction(1, 4), (1, 1): Fraction(1, 4)}
    score = dp.count(lambda rec, t: int(rec[0] >= 1 and rec[1] != (t % 2)), domain=list(population))

    def program(data, eps):
        return dp.exponential(THRESHOLDS, (-score).on(data), eps, sensitivity=1)

    total = summed(program, population, lambda t: t == 0)
    old = summed(program, population, lambda t: t == 0, counts=False)
    assert overlap(total.at(12), old.at(12))
    assert total.groups[12] < multisets(tuple(population), 12)  # grouped by exponent vector, not per multiset
    assert injective([(0, 1), (1, 0)]) and not injective([(0, 1), (0, 2), (0, 3)])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.integers(-2, 2), min_size=2, max_size=2), min_size=1, max_size=4),
       st.lists(st.integers(1, 3), min_size=4, max_size=4), st.integers(0, 6))
def test_the_grouping_sums_the_multinomial_weights_of_each_exponent_vector(rows, numerators, n) -> None:
    rows = [tuple(r) for r in rows]
    numerators = numerators[:len(rows)]
    groups = grouped(rows, numerators, n)
    expected: dict = {}
    for counts, weight in weighted(n, numerators, list(range(n, -1, -1))):
        key = tuple(sum(c * row[t] for c, row in zip(counts, rows)) for t in range(2))
        expected[key] = expected.get(key, 0) + weight
    assert groups == expected


# ----- programs that are not of the form fall back -------------------------------------------------


def reads_a_record(data, eps):
    shift = 1 if data[0][0] == 0 else 0
    return dp.exponential(THRESHOLDS, (-error).on(data), eps + shift, neighbours=dp.REPLACE_ONE)


def reads_counts(data, eps):
    counts = data.counts if hasattr(data, "counts") else {}
    return dp.exponential(THRESHOLDS, (-error).on(data), eps * (1 + len(counts)), neighbours=dp.REPLACE_ONE)


def swallows(data, eps):
    try:
        first = data[0] == (0, 0)
    except BaseException:  # noqa: BLE001 (the mutant swallows the refusal)
        first = False
    return dp.exponential(THRESHOLDS, (-error).on(data), eps * (2 if first else 1), neighbours=dp.REPLACE_ONE)


def first_record_repeated(data, eps):
    return dp.exponential(THRESHOLDS, (-error).on(data[:1] * len(data)), eps, neighbours=dp.REPLACE_ONE)


def by_type(data, eps):
    """Behaves differently on anything but real records: only the comparison with real runs catches it."""
    factor = 1 if all(type(r) is tuple for r in data) else 3
    return dp.exponential(THRESHOLDS, (-error).on(data), eps * factor, neighbours=dp.REPLACE_ONE)


def opaque_score(data, eps):
    errors = {t: sum(int(int(x >= t) != y) for x, y in data) for t in THRESHOLDS}
    return dp.exponential(THRESHOLDS, lambda t: -Fraction(errors[t], len(data)), eps,
                          sensitivity=Fraction(1, len(data)))


@pytest.mark.parametrize("program", [reads_a_record, reads_counts, swallows, first_record_repeated, by_type,
                                     opaque_score])
def test_programs_not_of_the_counts_form_are_summed_per_multiset(program) -> None:
    for n in (2, 4):  # (at n = 1 the first record repeated is the whole sample)
        # the order check off (an order log that says n was checked): the counts form alone is tested here
        new, old = summed(program, order_log={n: "some"}), summed(program, counts=False, order_log={n: "some"})
        new.at(n)
        assert new.paths[n] == "multisets", (program.__name__, new.paths)
        assert (new.at(n).a, new.at(n).b) == (old.at(n).a, old.at(n).b)
    if program in (reads_a_record, swallows, first_record_repeated):  # these read the sample in order
        with pytest.raises(OrderDependent):
            summed(program).at(4)
    else:
        summed(program).at(4)


def test_the_form_is_refused_when_a_sealed_run_differs_from_real_ones() -> None:
    # by_type's sealed run is well formed; the comparison with the fast reading of real samples refuses it
    backend = summed(by_type).backend
    sealed = by_counts.trace(by_type, {"eps": 1}, tuple(POPULATION), 4, bad, backend)
    assert sealed is None
    assert by_counts.trace(learner, {"eps": 1}, tuple(POPULATION), 4, bad, backend) is not None


@pytest.mark.slow
def test_n_400_on_the_four_point_domain_in_seconds() -> None:
    start = time.perf_counter()
    value = summed(learner, dps=50).at(400)
    seconds = time.perf_counter() - start
    # the per-multiset fast reading's enclosure (bench/README.md, 10.8 M multisets, 208 s) lies inside
    with mpmath.workdps(60):
        before = mpmath.mpf("1.756463060621589447106482660743832082653e-38")
        assert value.a <= before <= value.b
    assert relative_width(value) < 1e-12 and seconds < 30
    assert multisets(tuple(POPULATION), 400) == math.comb(403, 3)


def test_the_work_limit_counts_a_count_vector_of_the_counts_form_as_one_unit() -> None:
    from dpverify.checks import Workspace, check_point
    from dpverify.options import Options

    def spec_of(program):
        return dp.spec(program, universe=dp.universe(list(POPULATION), n=1, neighbours=dp.REPLACE_ONE),
                       grid={eps: [1]}, claims=[dp.sample_complexity(population=POPULATION, error=true_error,
                                                                     alpha=ALPHA, beta=Fraction(1, 4), bound=30)])

    def run(program, max_work):
        spec = spec_of(program)
        return check_point(spec, spec.claims[0], spec.points[0], Workspace(Options.validated(max_work=max_work)))

    work = multisets(tuple(POPULATION), 30)  # 5,456
    assert run(learner, work).status.value == "verified"  # one unit per count vector
    refused = run(opaque_score, work)  # ten per run of the program per multiset
    assert refused.status.value == "error" and "--max-work" in refused.message and "5,456" in refused.message
    assert run(learner, work - 1).status.value == "error"
