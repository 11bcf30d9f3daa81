"""Sample-complexity claims: the exact failure probability at the bound's n, and mutants refuted; the fast
reading of the failure probability (dpverify.engine.program.fastlaw) against the general interval reading, against
exact sympy values, and on random small populations; the multiset sums in the engine
(dpverify.engine.datasets.multisets), which know nothing of claims, split over the program's worker pool."""
import itertools
import math
import os
from fractions import Fraction

import mpmath
import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sympy import Rational, log

import dpverify as dp
from dpverify.checks.theorems.sample_complexity import FailureProbability
from dpverify.engine.datasets import multisets as ms
from dpverify.engine.execution import pool
from dpverify.engine.datasets.multisets import MultisetSum, multisets
from dpverify.engine.program.fastlaw import ExpAtoms, Exponent, Unsupported, capture, rational

eps = dp.symbol("eps", positive=True)
alpha = dp.symbol("alpha", positive=True)
beta = dp.symbol("beta", positive=True)
XS, THRESHOLDS, TARGET = (0, 1, 2), (0, 1, 2, 3), 2
POPULATION = {(x, int(x >= TARGET)): Fraction(1, 3) for x in XS}
H = len(THRESHOLDS)
GRID = {eps: [1], alpha: [Rational(1, 4)], beta: [Rational(1, 4)]}


def learner(data, eps):
    errors = {t: sum(int(x >= t) != y for x, y in data) for t in THRESHOLDS}
    return dp.exponential(THRESHOLDS, lambda t: -Fraction(errors[t], len(data)), eps,
                          sensitivity=Fraction(1, len(data)))


def true_error(t):
    return sum(p for (x, y), p in POPULATION.items() if int(x >= t) != y)


def spec_with(bound):
    return dp.spec(learner, universe=dp.universe(list(POPULATION), n=1, neighbours=dp.REPLACE_ONE),
                   grid=GRID, claims=[dp.sample_complexity(population=POPULATION, error=true_error,
                                                           alpha=alpha, beta=beta, bound=bound)])


def test_the_failure_probability_matches_a_brute_force_over_sequences() -> None:
    spec = spec_with(1)
    failure = FailureProbability(spec, spec.claims[0], spec.points[0], Rational(1, 4), 40)
    for n in (1, 2, 3):
        brute = 0.0
        for sample in itertools.product(list(POPULATION), repeat=n):
            scores = [-sum(int(x >= t) != y for x, y in sample) / n for t in THRESHOLDS]
            weights = [math.exp(1 * s / (2 / n)) for s in scores]
            brute += (1 / 3) ** n * sum(w for t, w in zip(THRESHOLDS, weights) if true_error(t) > 0.25) / sum(weights)
        assert abs(float(failure.at(n).mid) - brute) < 1e-12
        assert multisets(failure.records, n) == math.comb(n + 2, 2)


def test_the_catalogue_bound_holds_and_reports_the_smallest_n() -> None:
    bound = sympy.Max(4 * log(2 * H / beta) / (eps * alpha), 2 * log(2 * H / beta) / alpha ** 2)
    [result] = dp.check(spec_with(bound))
    assert result.status.value == "verified"
    assert result.evidence.n_bound == 111
    assert result.evidence.holds_down_to < 111  # the default run scans the top of the range only
    # the claim states every n >= 111: the verdict covers the n the work limit allowed, and says so
    assert result.coverage["from"] == 111 and result.coverage["to"] == result.evidence.checked_up_to > 111
    assert f"checked for n = 111..{result.coverage['to']}; not shown beyond" in result.message


def test_a_bound_that_asks_for_too_few_samples_is_refuted() -> None:
    # alpha and alpha^2 swapped in the second term, and the first term dropped: n = 2 ln(2|H|/beta) alpha^2.
    [result] = dp.check(spec_with(2 * log(2 * H / beta) * alpha ** 2))
    assert result.status.value == "refuted"
    assert "confirmed" in result.message and result.witness is not None


# ----- the fast reading (dpverify.engine.program.fastlaw) against the general interval reading and exact values --

def both(spec, n, dps=30, alpha_=Rational(1, 4)):
    """The fast and the general enclosure of the failure probability at n, and the fast reader."""
    fast = FailureProbability(spec, spec.claims[0], spec.points[0], alpha_, dps)
    slow = FailureProbability(spec, spec.claims[0], spec.points[0], alpha_, dps, fast=False)
    return fast.at(n), slow.at(n), fast


def overlap(a, b) -> bool:
    return a.a <= b.b and b.a <= a.b


def exact_failure(population: dict, learner_scores, eps_, n: int, bad) -> sympy.Expr:
    """The failure probability as an exact sympy expression, summed over sequences (no multisets)."""
    total = sympy.Integer(0)
    for sample in itertools.product(list(population), repeat=n):
        weight = sympy.Integer(1)
        for record in sample:
            weight *= sympy.Rational(population[record])
        scores, sens = learner_scores(sample)
        weights = {t: sympy.exp(sympy.Rational(eps_) * sympy.Rational(s) / (2 * sympy.Rational(sens)))
                   for t, s in scores.items()}
        total += weight * sum(w for t, w in weights.items() if bad(t)) / sum(weights.values())
    return total


def contains(enclosure, exact: sympy.Expr, digits: int = 80) -> bool:
    """Whether [a, b] meets [v - slack, v + slack], where v is exact evaluated to ``digits`` digits (so that
    interval holds exact): False proves that the enclosure misses the exact value.  The slack is far below
    the enclosures' widths, so an enclosure that is off by more than its width is caught."""
    with mpmath.workdps(digits):
        value = mpmath.mpf(str(sympy.N(exact, digits)))
        slack = abs(value) * mpmath.mpf(10) ** (5 - digits) + mpmath.mpf(10) ** -digits
        return mpmath.mpf(enclosure.a) <= value + slack and value - slack <= mpmath.mpf(enclosure.b)


def test_the_fast_reading_agrees_with_the_interval_reading_and_needs_no_fallback() -> None:
    spec = spec_with(1)
    for n in range(1, 9):
        fast, slow, reader = both(spec, n)
        assert overlap(fast, slow), n
        assert fast.delta <= slow.delta  # at least as tight
        assert abs(float(fast.mid) - float(slow.mid)) < 1e-25
    assert reader.fallbacks == 0  # every run is one exponential draw with rational exponents


def test_exponents_too_spread_for_one_grid_are_rounded_per_run(monkeypatch) -> None:
    monkeypatch.setattr(ExpAtoms, "SPREAD", 8)
    spec = spec_with(1)
    for n in (3, 7):
        fast, slow, reader = both(spec, n)
        assert overlap(fast, slow) and abs(float(fast.mid) - float(slow.mid)) < 1e-25
        assert reader.fallbacks == 0


def test_the_fast_enclosure_contains_the_exact_value() -> None:
    spec = spec_with(1)

    def scores(sample):
        n = len(sample)
        return {t: -Fraction(sum(int(x >= t) != y for x, y in sample), n) for t in THRESHOLDS}, Fraction(1, n)
    for n in (1, 2, 3, 4):
        exact = exact_failure(POPULATION, scores, 1, n, lambda t: true_error(t) > Rational(1, 4))
        fast, slow, _ = both(spec, n, dps=20)
        assert contains(fast, exact) and contains(slow, exact), n


def test_a_deterministic_mechanism_is_summed_exactly() -> None:
    def count_of_ones(data):
        return sum(y for _, y in data)
    spec = dp.spec(count_of_ones, universe=dp.universe(list(POPULATION), n=1, neighbours=dp.REPLACE_ONE),
                   grid=GRID, claims=[dp.sample_complexity(population=POPULATION, error=lambda k: Fraction(k, 5),
                                                           alpha=alpha, beta=beta, bound=1)])
    fast, slow, reader = both(spec, 5)
    # P[#ones > 5/4 ... i.e. error k/5 > 1/4, k >= 2] with P[one] = 1/3, exactly:
    exact = sum(sympy.binomial(5, k) * Rational(1, 3) ** k * Rational(2, 3) ** (5 - k) for k in range(2, 6))
    assert contains(fast, exact) and overlap(fast, slow) and reader.fallbacks == 0


def two_draws(data, eps):
    """Not of the fast form: a fair coin, then the exponential mechanism (or the constant 2)."""
    if dp.bernoulli(Fraction(1, 2)):
        return 2
    return learner(data, eps)


def irrational_eps(data, eps):
    """Not of the fast form: the exponent eps*ln(2)/... is not rational."""
    errors = {t: sum(int(x >= t) != y for x, y in data) for t in THRESHOLDS}
    return dp.exponential(THRESHOLDS, lambda t: -Fraction(errors[t], len(data)), eps * dp.log(2),
                          sensitivity=Fraction(1, len(data)))


def swallowing(data, eps):
    """Tries two draws and hides the refusal of the second: must still be refused."""
    first = learner(data, eps)
    try:
        learner(data, eps)
    except BaseException:  # noqa: BLE001 -- the point of the test
        pass
    return first


@pytest.mark.parametrize("program", [two_draws, irrational_eps, swallowing])
def test_runs_not_of_the_fast_form_fall_back_to_the_interval_reading(program) -> None:
    spec = dp.spec(program, universe=dp.universe(list(POPULATION), n=1, neighbours=dp.REPLACE_ONE),
                   grid=GRID, claims=[dp.sample_complexity(population=POPULATION, error=true_error,
                                                           alpha=alpha, beta=beta, bound=1)])
    for n in (1, 3):
        fast, slow, reader = both(spec, n)
        assert overlap(fast, slow)
        assert abs(float(fast.mid) - float(slow.mid)) < 1e-25
        assert reader.fallbacks == multisets(reader.records, n)


def test_capture_refuses_what_it_cannot_read() -> None:
    from dpverify.engine.program.backend import IntervalBackend
    backend = IntervalBackend(20)
    data = ((0, 0), (2, 1))
    assert capture(lambda: learner(data, Fraction(1)), backend)[0] is not None
    assert capture(lambda: "constant", backend) == (None, [("constant", None)])
    for program in (lambda: two_draws(data, Fraction(1)), lambda: swallowing(data, Fraction(1)),
                    lambda: dp.laplace(0, 1), lambda: learner(data, backend.num(Rational(1, 3)))):
        with pytest.raises(Unsupported):
            capture(program, backend)
    # an mpmath interval is a rational only when it is a single binary point
    assert rational(backend.num(Rational(1, 2))) == Fraction(1, 2)
    assert rational(backend.num(Rational(1, 3))) is None and rational(0.5) is None


def test_the_multiset_weights_sum_to_one_exactly_and_cover_every_count_vector() -> None:
    for numerators, n in (([1, 1, 1], 7), ([1, 2, 0, 3], 6), ([5], 4), ([2, 3], 9)):
        vectors = dict(ms.weighted(n, numerators, list(range(n, -1, -1))))
        assert sum(vectors.values()) == sum(numerators) ** n
        expected = {c for c in ms.compositions(n, len(numerators))
                    if all(a or not k for a, k in zip(numerators, c))}
        assert set(vectors) == expected
        for counts, weight in vectors.items():
            assert weight == math.factorial(n) * math.prod(a ** k / Fraction(math.factorial(k))
                                                           for a, k in zip(numerators, counts))


def test_forked_workers_give_the_same_enclosure(monkeypatch) -> None:
    spec = spec_with(1)
    monkeypatch.setattr(ms, "PARALLEL_FROM", 1)
    calls = []

    def counted(fn, items, workers):
        items = list(items)
        calls.append((len(items), workers))
        return pool.parallel_map(fn, items, workers)
    monkeypatch.setattr(ms, "parallel_map", counted)
    one = FailureProbability(spec, spec.claims[0], spec.points[0], Rational(1, 4), 30).at(12)
    assert calls == []
    two = FailureProbability(spec, spec.claims[0], spec.points[0], Rational(1, 4), 30, workers=2).at(12)
    assert calls and all(chunks > 2 and workers == 2 for chunks, workers in calls)  # the sums went to the pool
    assert (one.a, one.b) == (two.a, two.b)


def test_a_failing_worker_makes_the_sum_redo_in_process(monkeypatch) -> None:
    """A worker that raises (here: every forked worker) costs nothing but time: the sum is redone in this
    process, with the same enclosure (and there a spec error is reported properly)."""
    spec = spec_with(1)
    monkeypatch.setattr(ms, "PARALLEL_FROM", 1)
    parent = os.getpid()
    chunk = MultisetSum._chunk

    def fails_in_a_worker(self, *args):
        if os.getpid() != parent:
            raise RuntimeError("broken worker")
        return chunk(self, *args)
    monkeypatch.setattr(MultisetSum, "_chunk", fails_in_a_worker)
    two = FailureProbability(spec, spec.claims[0], spec.points[0], Rational(1, 4), 30, workers=2).at(6)
    one = FailureProbability(spec, spec.claims[0], spec.points[0], Rational(1, 4), 30).at(6)
    assert (one.a, one.b) == (two.a, two.b)


def test_the_engine_sum_needs_no_claim() -> None:
    """dpverify.engine.datasets.multisets takes a program, a population and a predicate on outputs: the same
    enclosure as the check's failure probability, whose only addition is deciding error > alpha."""
    spec = spec_with(1)
    population = tuple(POPULATION.items())
    engine = MultisetSum(learner, {"eps": sympy.Integer(1)}, population, lambda t: true_error(t) > Fraction(1, 4), 30)
    check = FailureProbability(spec, spec.claims[0], spec.points[0], Rational(1, 4), 30)
    for n in (1, 4, 7):
        assert (engine.at(n).a, engine.at(n).b) == (check.at(n).a, check.at(n).b)
    tight = MultisetSum(learner, {"eps": sympy.Integer(1)}, population, lambda t: true_error(t) > Fraction(1, 3), 30)
    assert tight.at(4).b < engine.at(4).a  # the predicate is what is summed: fewer bad outputs, less probability


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(-60, 60), min_size=1, max_size=6, unique=True).flatmap(
           lambda xs: st.tuples(st.just(xs), st.sets(st.integers(0, len(xs) - 1)),
                                st.integers(1, 9), st.sampled_from([12, 40, 100]))))
def test_shares_of_exponentials_enclose_the_true_share(case) -> None:
    exponents, chosen, denominator, bits = case
    atoms = ExpAtoms(bits, 2 * bits)
    # warm the per-factor grid with other exponents first, so that it is moved down (rebased) at times
    warm = Exponent([((1, denominator), x, 1) for x in (0, 30)], (Fraction(1, denominator), [0, 30]))
    atoms.probability(warm, [0])
    enclosures = [atoms.atom(((1, denominator), x, 1), lambda x=x: Fraction(x, denominator)) for x in exponents]
    exponent = Exponent([((1, denominator), x, 1) for x in exponents], (Fraction(1, denominator), exponents))
    with mpmath.workprec(4 * bits + 200):
        weights = [mpmath.exp(mpmath.mpf(x) / denominator) for x in exponents]
        true = sum((weights[i] for i in chosen), mpmath.mpf(0)) / sum(weights)
        for q_lo, q_hi in (atoms.share(enclosures, sorted(chosen)), atoms.probability(exponent, sorted(chosen))):
            assert q_lo <= true * 2 ** (2 * bits) <= q_hi
            assert q_hi - q_lo <= 2 + (true * 2 ** (2 * bits)) * len(exponents) * 2 ** (6 - bits)


RECORD_POOL = [(0, 0), (1, 0), (1, 1), (2, 1), (3, 0), (3, 1)]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(RECORD_POOL), min_size=1, max_size=4, unique=True).flatmap(
           lambda recs: st.tuples(st.just(recs), st.lists(st.integers(0, 4), min_size=len(recs), max_size=len(recs))
                                  .filter(lambda ws: sum(ws) > 0),
                                  st.integers(1, 4), st.sampled_from([Rational(1, 2), 1, 3]),
                                  st.sampled_from([Rational(1, 100), Rational(1, 5), Rational(1, 2)]))))
def test_the_fast_reading_on_random_small_populations(case) -> None:
    records, raw, n, eps_value, alpha_value = case
    population = {r: Fraction(w, sum(raw)) for r, w in zip(records, raw)}

    def err(t):
        return sum(p for (x, y), p in population.items() if int(x >= t) != y)
    spec = dp.spec(learner, universe=dp.universe(list(population), n=1, neighbours=dp.REPLACE_ONE),
                   grid={eps: [eps_value], alpha: [alpha_value], beta: [Rational(1, 4)]},
                   claims=[dp.sample_complexity(population=population, error=err, alpha=alpha, beta=beta, bound=1)])
    fast, slow, reader = both(spec, n, dps=20, alpha_=alpha_value)
    assert overlap(fast, slow) and reader.fallbacks == 0

    def scores(sample):
        return ({t: -Fraction(sum(int(x >= t) != y for x, y in sample), len(sample)) for t in THRESHOLDS},
                Fraction(1, len(sample)))
    exact = exact_failure(population, scores, eps_value, n, lambda t: err(t) > alpha_value)
    assert contains(fast, exact)


@pytest.mark.parametrize("bad_beta", [1, Rational(3, 2)])
def test_a_beta_of_one_or_more_is_an_error_not_a_vacuous_verdict(bad_beta) -> None:
    """P[error > alpha] <= beta holds for every mechanism when beta >= 1: such a claim says nothing,
    and was verified before beta was range-checked like delta."""
    spec = dp.spec(learner, universe=dp.universe(list(POPULATION), n=1, neighbours=dp.REPLACE_ONE),
                   grid={eps: [1], alpha: [Rational(1, 4)], beta: [bad_beta]},
                   claims=[dp.sample_complexity(population=POPULATION, error=true_error,
                                                alpha=alpha, beta=beta, bound=1)])
    [result] = dp.check(spec, proofs=False)
    assert result.status.value == "error" and "outside [0, 1)" in result.message, result.message
