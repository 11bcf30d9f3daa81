"""The work guard's counts: datasets and neighbouring pairs by formula, equal to what enumeration finds.

The guard refuses a universe before enumerating it, from :func:`dpverify.engine.datasets.datasets.estimate`;
an over-count refused runs under the limit (13.7 M pairs counted for 4.8 M multiset pairs).  Here the
formulas are held against the enumeration of random small universes of every kind (sequences and
multisets, one size or a range, replace-one, add/remove, label-only), and the guard is shown to
accept a run whose exact work is under the limit and to refuse one over it before any enumeration.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpverify as dp
from dpverify.engine.datasets.datasets import enumerate_datasets, estimate, neighbour_pairs
from dpverify.engine.datasets.symmetry import orderings, permutations
from dpverify.engine.program.work import guard
from dpverify.errors import EnumerationTooLarge
from dpverify.options import Options


@st.composite
def universes(draw):
    """A random small universe of any built-in kind."""
    relation = draw(st.sampled_from([dp.REPLACE_ONE, dp.ADD_REMOVE, dp.LABEL_ONLY]))
    symmetric = draw(st.booleans())
    if relation is dp.LABEL_ONLY:  # records (x, y) with 1..3 labels per x
        xs = draw(st.integers(1, 3))
        records = [(x, y) for x in range(xs) for y in range(draw(st.integers(1, 3)))]
    else:
        records = list(range(draw(st.integers(1, 4))))
    low = draw(st.integers(0, 2))
    high = draw(st.integers(low + (relation is dp.ADD_REMOVE), 4 if symmetric else 3))
    # with few records, sequences stay small enough to enumerate
    high = min(high, low + 2) if len(records) > 3 and not symmetric else high
    sizes = range(low, high + 1) if draw(st.booleans()) or relation is dp.ADD_REMOVE else low
    return dp.universe(records, n=sizes, neighbours=relation, symmetric=symmetric)


@settings(max_examples=150, deadline=None)
@given(universes())
def test_the_estimate_is_the_enumerated_count(universe) -> None:
    datasets = enumerate_datasets(universe)
    left, _ = neighbour_pairs(universe, datasets)
    size = estimate(universe)
    assert size.exact
    assert size.datasets == len(datasets)
    assert size.pairs == len(left), universe.describe()


@settings(max_examples=40, deadline=None)
@given(universes())
def test_orderings_are_the_sequences_the_symmetry_check_runs(universe) -> None:
    if not universe.symmetric:
        assert orderings(universe) == 0
        return
    runs = sum(sum(1 for _ in permutations(data)) for data in enumerate_datasets(universe))
    assert orderings(universe) == runs


@pytest.mark.parametrize("symmetric", [False, True])
def test_a_custom_relation_counts_every_pair_it_is_asked_about(symmetric) -> None:
    universe = dp.universe([0, 1, 2], n=range(1, 3), neighbours=lambda x, y: len(x) == len(y), symmetric=symmetric)
    datasets = enumerate_datasets(universe)
    left, _ = neighbour_pairs(universe, datasets)
    size = estimate(universe)
    assert not size.exact and size.datasets == len(datasets)
    assert size.pairs == math.comb(len(datasets), 2) >= len(left)


def test_the_multiset_pair_counts_are_the_closed_forms() -> None:
    # 10 records, n = 12: C(20, 11) * C(10, 2) replace-one pairs (the old guard counted (r + n - 1)/r times
    # as many), and r * C(r + n - 1, n) add/remove pairs between sizes n and n + 1
    replace = dp.universe(range(10), n=12, neighbours=dp.REPLACE_ONE, symmetric=True)
    assert estimate(replace).pairs == math.comb(20, 11) * 45
    add = dp.universe(range(10), n=range(12, 14), neighbours=dp.ADD_REMOVE, symmetric=True)
    assert estimate(add).pairs == 10 * math.comb(21, 12)


def _spec(universe):
    return dp.spec(lambda data, eps: dp.randomized_response(data[0] % 2, eps), universe=universe,
                   grid={dp.symbol("eps", positive=True): [1]}, claims=[dp.private(1)])


def test_a_run_under_the_limit_is_not_refused_and_one_over_it_is_before_enumerating(monkeypatch) -> None:
    universe = dp.universe(range(10), n=12, neighbours=dp.REPLACE_ONE, symmetric=True)
    spec = _spec(universe)
    size = estimate(universe)
    work = (size.datasets + size.pairs + orderings(universe)) * 2  # two outputs
    old_pairs = math.comb(21, 12) * 12 * 9 // 2  # the old formula's count
    assert (size.datasets + old_pairs + orderings(universe)) * 2 > work  # the old guard counted more

    def never(*args, **kwargs):
        raise AssertionError("enumerated before refusing")

    monkeypatch.setattr("dpverify.engine.datasets.datasets.enumerate_datasets", never)
    guard(spec, spec.mechanism, spec.points[0], Options.validated(max_work=work))  # exactly at the limit: runs
    with pytest.raises(EnumerationTooLarge) as refused:
        guard(spec, spec.mechanism, spec.points[0], Options.validated(max_work=work - 1))
    assert "--max-work" in refused.value.fix
    assert (refused.value.file, refused.value.line) == universe.origin and universe.origin[0] == __file__


@st.composite
def answer_universes(draw):
    """Sequences of integer answers (any order, gaps, negatives) under dp.linf_one or dp.l1_one, one size or a range."""
    records = draw(st.lists(st.integers(-3, 4), min_size=1, max_size=4, unique=True))
    low = draw(st.integers(0, 3))
    high = draw(st.integers(low, min(4, low + 2)))
    relation = draw(st.sampled_from([dp.linf_one, dp.l1_one]))
    return dp.universe(records, n=range(low, high + 1) if high > low else low, neighbours=relation)


@settings(max_examples=150, deadline=None)
@given(answer_universes())
def test_integer_answer_pairs_are_counted_and_listed_exactly(universe) -> None:
    """linf_one/l1_one on integer sequences: the pairs listed by index arithmetic are the ones the relation
    itself relates when asked about every pair (the reference), and the guard's count is their number."""
    from dpverify.engine.datasets.datasets import _custom_pairs

    datasets = enumerate_datasets(universe)
    left, right = neighbour_pairs(universe, datasets)
    expected = sorted(_custom_pairs(universe.neighbours, datasets))  # asks universe.neighbours on every pair
    assert list(zip(left.tolist(), right.tolist())) == expected
    size = estimate(universe)
    assert size.exact and size.datasets == len(datasets) and size.pairs == len(expected)


def test_noisy_max_over_answers_at_m_8_passes_the_default_guard_and_m_9_does_not(monkeypatch) -> None:
    """{0,1,2}^8 under ell_inf: 6,561 vectors and (7^8 - 3^8)/2 = 2,879,120 pairs (not the C(6561, 2) = 21.5 M
    pairs a custom relation is asked about), so (6,561 + 2,879,120) x 8 outputs is under the default 5e7; m = 9
    is (19,683 + 20,166,962) x 9 = 1.8e8, refused before any enumeration."""
    from fractions import Fraction

    def rnm(q, eps):
        best, value = 0, dp.laplace(q[0], 2 / eps)
        for i in range(1, len(q)):
            x = dp.laplace(q[i], 2 / eps)
            if x > value:
                best, value = i, x
        return best

    def never(*args, **kwargs):
        raise AssertionError("enumerated before refusing")

    monkeypatch.setattr("dpverify.engine.datasets.datasets.enumerate_datasets", never)
    eps = dp.symbol("eps", positive=True)
    for m, accepted in ((8, True), (9, False)):
        universe = dp.answers([0, 1, 2], m)
        assert estimate(universe) == type(estimate(universe))(3 ** m, (7 ** m - 3 ** m) // 2)
        spec = dp.spec(rnm, universe=universe, grid={eps: [Fraction(1)]}, claims=[dp.private(eps)])
        if accepted:
            guard(spec, spec.mechanism, spec.points[0], Options.validated())
        else:
            with pytest.raises(EnumerationTooLarge, match="20,166,962 neighbouring pairs"):
                guard(spec, spec.mechanism, spec.points[0], Options.validated())
