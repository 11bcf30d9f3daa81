"""Sums over multisets read blind (dpverify.engine.datasets.blind): a learner that reads its sample only through
``data.counts`` and ``len(data)`` is run once per multiset on a stand-in sample whose records refuse any use,
without running other orderings.  Held against the ordinary fast reading (the same enclosure, bit for bit, on
random populations and learners); every other use of the sample -- iterating, indexing, hashing, comparing,
printing, a record, a refusal swallowed, a program that tells the stand-in from a real sample -- sends the n
to the ordinary path, whose order checks still find an order dependence."""
from __future__ import annotations

from collections import Counter
from fractions import Fraction

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpverify as dp
from dpverify.checks.theorems import sample_complexity as sc
from dpverify.engine.datasets import blind
from dpverify.engine.datasets import multisets as ms
from dpverify.engine.datasets.counts import Sample
from dpverify.engine.datasets.multisets import MultisetSum

eps = dp.symbol("eps", positive=True)
POPULATION = {(0, 0): Fraction(1, 3), (1, 0): Fraction(1, 3), (2, 1): Fraction(1, 3)}
THRESHOLDS = (0, 1, 2, 3)


def true_error(t, population=POPULATION):
    return sum(p for (x, y), p in population.items() if int(x >= t) != y)


def bad(t):
    return true_error(t) > Fraction(1, 4)


def counting_learner(data, eps):
    """The exponential mechanism over thresholds, scored by minus the empirical error read from the counts."""
    counts = data.counts
    size = len(data)
    wrong = {t: sum(c for (x, y), c in counts.items() if int(x >= t) != y) for t in THRESHOLDS}
    return dp.exponential(THRESHOLDS, lambda t: -Fraction(wrong[t], size), eps, sensitivity=Fraction(1, size))


def errors_of(data, eps):
    """Deterministic: the empirical errors of the thresholds (a new output per multiset)."""
    counts = getattr(data, "counts", None) or Counter(data)
    return tuple(Fraction(sum(c for (x, y), c in counts.items() if int(x >= t) != y), len(data)) for t in THRESHOLDS)


def worst_gap(errors):
    return max(true_error(t) - e for t, e in zip(THRESHOLDS, errors))


def summed(program, population=POPULATION, predicate=bad, dps=30):
    return MultisetSum(program, {"eps": sympy.Integer(1)}, tuple(population.items()), predicate, dps)


def same(a, b) -> bool:
    return a._mpi_ == b._mpi_


# ----- the same enclosure as the ordinary fast reading ----------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 5, 9, 16])
def test_the_blind_sum_is_the_ordinary_fast_sum_bit_for_bit(n: int) -> None:
    for program, predicate in ((counting_learner, bad), (errors_of, lambda e: worst_gap(e) > Fraction(1, 8))):
        ordinary = summed(program, predicate=predicate)
        value = blind.enclosure(summed(program, predicate=predicate), n)
        assert value is not None
        assert same(value, ordinary.at(n)), (program.__name__, n)
        assert ordinary.order_log[n] in ("every", "some")


def test_a_tiny_probability_refines_the_grid_as_the_ordinary_reading_does() -> None:
    """n = 40 at eps = 1: P is about 1e-4 and the grid is refined; both readings give the same interval."""
    ordinary = summed(counting_learner).at(40)
    value = blind.enclosure(summed(counting_learner), 40)
    assert value is not None and same(value, ordinary)
    assert 0 < float(value.a) < 1e-2


@st.composite
def populations(draw):
    size = draw(st.integers(2, 4))
    weights = draw(st.lists(st.integers(0, 5), min_size=size, max_size=size).filter(lambda w: sum(w) > 0))
    total = sum(weights)
    return {(x, x % 2): Fraction(w, total) for x, w in enumerate(weights)}


@st.composite
def learners(draw):
    """A learner that reads the counts only: deterministic (a table of the counts' residues) or an exponential
    mechanism whose scores are random polynomials of the counts (not linear, so no counts form)."""
    kind = draw(st.sampled_from(["table", "exponential", "post"]))
    coefficients = draw(st.lists(st.integers(-3, 3), min_size=12, max_size=12))
    modulus = draw(st.integers(2, 4))

    def statistic(counts, size, k):
        values = list(counts.values())
        return sum(coefficients[(k + i) % 12] * c * (c + coefficients[i % 12]) for i, c in enumerate(values)) + size

    if kind == "table":
        def learner(data, eps):
            return statistic(data.counts, len(data), 0) % modulus
    elif kind == "exponential":
        def learner(data, eps):
            counts, size = data.counts, len(data)
            return dp.exponential(tuple(range(modulus)), lambda c: Fraction(statistic(counts, size, c), size + 1),
                                  eps, sensitivity=1)
    else:
        def learner(data, eps):  # post-processing after the draw, and a repeated candidate
            counts, size = data.counts, len(data)
            drawn = dp.exponential((0, 1, 1, 2), lambda c: Fraction(statistic(counts, size, c) % 5, 3), eps,
                                   sensitivity=1)
            return (drawn + size) % modulus
    return learner, modulus


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(populations(), learners(), st.integers(1, 7), st.data())
def test_random_learners_of_the_counts_give_the_ordinary_enclosure(population, made, n, data) -> None:
    learner, modulus = made
    cut = data.draw(st.integers(0, modulus))
    predicate = lambda output: output >= cut  # noqa: E731
    ordinary = summed(learner, population, predicate).at(n)
    value = blind.enclosure(summed(learner, population, predicate), n)
    assert value is not None
    assert same(value, ordinary)


# ----- every other use of the sample goes the ordinary way ------------------------------------------------


def iterates(data, eps):
    return sum(1 for x, y in data if y)


def indexes(data, eps):
    return data.counts[(0, 0)] + (data[0] == (0, 0))


def hashes(data, eps):
    return hash(data) % 2


def compares(data, eps):
    return int(data == tuple(sorted(data)))


def prints(data, eps):
    return len(repr(data)) % 3


def membership(data, eps):
    return int((2, 1) in data)


def slices(data, eps):
    return data.counts[(0, 0)] + len(data[1:])


def swallows(data, eps):
    """Reads a record and swallows the refusal: refused all the same (the count moved)."""
    try:
        first = data[0]
    except BaseException:  # noqa: BLE001
        first = None
    return data.counts[(0, 0)] + (first is None)


def unpacks(data, eps):
    return len([*data])


def by_tuple_method(data, eps):
    """Reaches a record past the sample's own methods (tuple.__getitem__) and compares it."""
    return int(tuple.__getitem__(data, 0) == (0, 0)) + data.counts[(0, 0)]


def tells_the_stand_in_apart(data, eps):
    """Reads only counts and len, but answers differently on anything but a real Sample: the probes see it."""
    return data.counts[(2, 1)] if type(data) is Sample else -1


@pytest.mark.parametrize("program", [iterates, indexes, hashes, compares, prints, membership, slices, swallows,
                                     unpacks, by_tuple_method, tells_the_stand_in_apart])
def test_a_learner_that_uses_its_sample_otherwise_is_not_read_blind(program) -> None:
    for n in (1, 4, 9):
        assert blind.enclosure(summed(program, predicate=lambda o: o >= 1), n) is None, (program.__name__, n)


def late_first(data, eps):
    """Reads the counts only up to n = 7, the first record from n = 8 on (an order dependence)."""
    if len(data) >= 8:
        return int(data[0] == (2, 1))
    return int(data.counts[(2, 1)] * 2 > len(data))


def test_an_order_dependence_past_the_blind_n_is_found_by_the_ordinary_path() -> None:
    spec = dp.spec(late_first, name="late_first", universe=dp.universe(list(POPULATION), n=1,
                                                                       neighbours=dp.REPLACE_ONE),
                   grid={eps: [1]},
                   claims=[dp.sample_complexity(population=POPULATION, error=lambda o: Fraction(o, 2),
                                                alpha=Fraction(1, 4), beta=Fraction(1, 2), bound=5, up_to=9)])
    failure = sc.FailureProbability(spec, spec.claims[0], ((eps, sympy.Integer(1)),), sympy.Rational(1, 4), 30, order_log={})
    for n in range(5, 8):  # the whitelist gate (blind.admit) reads data[0] in the code: never blind
        failure.at(n)
        assert failure.order_log[n] in ("every", "some")
    with pytest.raises(ms.OrderDependent) as found:
        failure.at(8)
    assert found.value.n == 8 and found.value.decided
    [result] = dp.check(spec, proofs=False)
    assert result.status.value in ("verified", "refuted"), result.message
    assert "late_first depends on the order of its sample" in result.message


def test_a_verdict_read_blind_says_how_the_order_was_shown() -> None:
    spec = dp.spec(counting_learner, name="blind_learner",
                   universe=dp.universe(list(POPULATION), n=1, neighbours=dp.REPLACE_ONE), grid={eps: [1]},
                   claims=[dp.sample_complexity(population=POPULATION, error=true_error, alpha=Fraction(1, 4),
                                                beta=Fraction(1, 2), bound=12, up_to=15)])
    [result] = dp.check(spec, proofs=False)
    assert result.status.value == "verified", result.message
    assert result.coverage["label"] == "n = 12..15"
    assert ("the learner ignores the order of its sample: shown, it read its sample only through its counts and "
            "size at n = ") in result.message
    assert "stand-in sample whose records refuse any use" in result.message


def test_blind_and_ordinary_verdicts_agree_on_a_range(monkeypatch) -> None:
    """The same check with the blind reading switched off: the same status, coverage, figures."""
    spec = dp.spec(errors_of, name="errors", universe=dp.universe(list(POPULATION), n=1, neighbours=dp.REPLACE_ONE),
                   grid={eps: [1]},
                   claims=[dp.sample_complexity(population=POPULATION, error=worst_gap, alpha=Fraction(1, 4),
                                                beta=Fraction(1, 10), bound=20, up_to=26)])
    [fast] = dp.check(spec, proofs=False)
    monkeypatch.setattr(blind, "enclosure", lambda msum, n: None)
    [slow] = dp.check(spec, proofs=False)
    assert fast.status == slow.status and fast.coverage == slow.coverage
    assert fast.evidence.curve == slow.evidence.curve and fast.evidence.smallest_n == slow.evidence.smallest_n
    assert "shown, it read its sample only through its counts" in fast.message
    assert "assumed: the learner ignores the order" in slow.message


# ----- one run per multiset instead of one per candidate ---------------------------------------------------


def returns_the_draw(data, eps):
    return dp.exponential(("a", "b", "b", "c"), lambda c: {"a": 0, "b": Fraction(1, 2), "c": 2}[c], eps,
                          sensitivity=1)


def ignores_the_draw(data, eps):
    dp.exponential((0, 1), lambda c: c, eps, sensitivity=1)
    return data.counts[(0, 0)]


def adds_to_the_draw(data, eps):
    return dp.exponential((0, 1, 2), lambda c: c, eps, sensitivity=1) + 1


def branches_on_the_draw(data, eps):
    return "left" if dp.exponential((0, 1), lambda c: c, eps, sensitivity=1) == 0 else "right"


def wraps_the_draw(data, eps):
    return (dp.exponential((0, 1), lambda c: c, eps, sensitivity=1), 7)


def swallows_the_draw(data, eps):
    drawn = dp.exponential((0, 1), lambda c: c, eps, sensitivity=1)
    try:
        seen = bool(drawn)
    except BaseException:  # noqa: BLE001
        seen = None
    return 0 if seen is None else 1


def draws_twice(data, eps):
    first = dp.exponential((0, 1), lambda c: c, eps, sensitivity=1)
    second = dp.exponential((0, 1), lambda c: c, eps, sensitivity=1)
    return (first, second)


def flips(data, eps):
    return int(dp.bernoulli(Fraction(1, 3)))


def _laws(program, data):
    from dpverify.engine.program.backend import IntervalBackend
    from dpverify.engine.program.fastlaw import capture
    backend = IntervalBackend(30)
    return capture(lambda: program(data, eps=Fraction(1)), backend), backend


def through_a_helper(data, eps):
    return returns_the_draw(data, eps)


def checks_its_identity(data, eps):
    """Looks at the draw by identity only (no dunder the stand-in could refuse): code after the draw."""
    drawn = dp.exponential((None, 1), lambda c: 0 if c is None else 1, eps, sensitivity=1)
    return drawn if drawn is not None else 5


def through_c_code(data, eps):
    """The draw wrapped by C code (tuple, map) on its way out: the output is not the draw."""
    return tuple(map(lambda _: dp.exponential((0, 1), lambda c: c, eps, sensitivity=1), [0]))


def in_a_finally(data, eps):
    try:
        return dp.exponential((0, 1), lambda c: c, eps, sensitivity=1)
    finally:
        data.counts.get((0, 0))


@pytest.mark.parametrize("program,one_run", [(returns_the_draw, True), (ignores_the_draw, False),
                                             (through_a_helper, True), (checks_its_identity, False),
                                             (through_c_code, False), (in_a_finally, False),
                                             (counting_learner, True), (errors_of, True),
                                             (adds_to_the_draw, False), (branches_on_the_draw, False),
                                             (wraps_the_draw, False), (swallows_the_draw, False),
                                             (draws_twice, False), (flips, False)])
def test_one_run_reads_what_capture_reads_or_declines(program, one_run: bool) -> None:
    records = tuple(POPULATION)
    for counts in ((2, 1, 0), (0, 0, 3), (1, 1, 1)):
        data = blind.blind(records, counts)
        try:
            (expected, backend) = _laws(program, blind.real(records, counts))
        except Exception:  # noqa: BLE001 (not of capture's form: once must decline too)
            expected, backend = None, None
        if not one_run:
            with pytest.raises(blind.NotOnce):
                from dpverify.engine.program.backend import IntervalBackend
                blind.once(lambda: program(data, eps=Fraction(1)), IntervalBackend(30))
            continue
        exponent, outputs = blind.once(lambda: program(data, eps=Fraction(1)), backend)
        assert ms.fast_difference(exponent, outputs, *expected) is False
        assert [(o, i) for o, i in outputs] == [(o, i) for o, i in expected[1]]
        assert (exponent is None and expected[0] is None) or exponent.keys == expected[0].keys


@pytest.mark.parametrize("program", [returns_the_draw, ignores_the_draw, adds_to_the_draw, branches_on_the_draw,
                                     wraps_the_draw, through_a_helper, checks_its_identity,
                                     in_a_finally])  # swallows_the_draw, through_c_code: not past blind.admit
def test_learners_that_use_their_draw_still_sum_to_the_ordinary_enclosure(program) -> None:
    for n in (1, 3, 6):
        predicate = lambda output: output in ("b", 1, 2, "right", (1, 7), 5, (1,))  # noqa: E731
        ordinary = summed(program, predicate=predicate).at(n)
        value = blind.enclosure(summed(program, predicate=predicate), n)
        assert value is not None and same(value, ordinary), (program.__name__, n)


SNEAKY = '''
from fractions import Fraction
import dpverify as dp

POPULATION = {0: Fraction(1, 2), 1: Fraction(1, 2)}


def sneaky(data):
    """Reads the counts only, but on a sample that is not a real one answers 0 where many ones were drawn
    (a multiset the probes do not run): type() in a spec module refuses for the stand-in."""
    ones = data.counts[1]
    if ones * 5 > len(data) * 4 and type(data).__name__ != "Sample":
        return 0
    return int(ones * 2 > len(data))


def identity(data):
    """id() of the sample: a violation of the run contract, never summed blind."""
    return int(data.counts[1] * 2 > len(data)) + 0 * (id(data) % 2)


spec = dp.spec(sneaky, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
               claims=[dp.sample_complexity(population=POPULATION, error=lambda o: Fraction(1 - o, 2),
                                            alpha=Fraction(1, 4), beta=Fraction(1, 2), bound=6, up_to=8)])
'''


def test_a_spec_that_asks_the_type_or_id_of_its_sample_is_not_read_blind(tmp_path) -> None:
    from pathlib import Path

    from dpverify.loader import load
    path = Path(tmp_path) / "sneaky_spec.py"
    path.write_text(SNEAKY)
    [spec] = load(path)
    module = __import__("sys").modules[spec.mechanism.__module__]
    for program in (module.sneaky, module.identity):
        predicate = lambda o: o == 0  # noqa: E731
        for n in (6, 10, 20):
            msum = MultisetSum(program, {}, tuple(module.POPULATION.items()), predicate, 30)
            assert blind.enclosure(msum, n) is None, (program.__name__, n)
    [result] = dp.check(spec, proofs=False)
    failure = sc.FailureProbability(spec, spec.claims[0], (), sympy.Rational(1, 4), 30, order_log={})
    failure.at(20)
    assert failure.order_log[20] in ("every", "some")
    assert "shown, it read its sample only through its counts" not in result.message


def test_a_failure_found_blind_is_confirmed_by_the_ordinary_fast_reading(monkeypatch) -> None:
    """Beyond CONFIRM_GENERAL_UP_TO multisets a refutation is confirmed at twice the digits by the fast reading:
    the ordinary one (each multiset's orderings run), never blind again."""
    monkeypatch.setattr(sc, "CONFIRM_GENERAL_UP_TO", 0)
    calls = []
    real = blind.enclosure

    def spy(msum, n):
        calls.append((msum.dps, n))
        return real(msum, n)
    monkeypatch.setattr(blind, "enclosure", spy)
    spec = dp.spec(counting_learner, name="refuted_learner",
                   universe=dp.universe(list(POPULATION), n=1, neighbours=dp.REPLACE_ONE), grid={eps: [1]},
                   claims=[dp.sample_complexity(population=POPULATION, error=true_error, alpha=Fraction(1, 4),
                                                beta=Fraction(1, 10), bound=6, up_to=8)])
    [result] = dp.check(spec, proofs=False)
    assert result.status.value == "refuted", result.message
    assert "confirmed at 100 digits by the fast reading" in result.message
    assert calls and all(dps == 50 for dps, _ in calls)
    assert "orderings per multiset" in result.message or "every ordering" in result.message
