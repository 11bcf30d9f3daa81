"""dpverify.strategies draws exactly what the engine enumerates (engine/datasets/datasets.py), and helps find bugs.

On tiny universes of every relation (built-in, dp.l1_one, dp.linf_one, a custom one; sequences and
multisets) the set of drawn datasets equals ``enumerate_datasets`` and the set of drawn pairs equals
``neighbour_pairs`` in both orders: nothing outside, nothing missed.  Property tests written with
the strategies then check relations on larger universes, find a mutant's sensitivity bug and shrink it
to the smallest pair, and run over many drawn universes.
"""
from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import sympy
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

import dpverify as dp
from dpverify import strategies
from dpverify.engine.datasets.datasets import enumerate_datasets, neighbour_pairs

QUIET = settings(derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))


def drawn(strategy: st.SearchStrategy, examples: int = 600) -> set:
    """Every value ``strategy`` produced over ``examples`` derandomised examples."""
    seen: set = set()

    @settings(QUIET, max_examples=examples)
    @given(strategy)
    def collect(value: object) -> None:
        seen.add(value)

    collect()
    return seen


def engine_pairs(universe: dp.Universe) -> set:
    """The engine's neighbouring pairs, in both orders."""
    data = enumerate_datasets(universe)
    left, right = neighbour_pairs(universe, data)
    pairs = {(data[i], data[j]) for i, j in zip(left.tolist(), right.tolist())}
    return pairs | {(b, a) for a, b in pairs}


def prefix(x: tuple, x_prime: tuple) -> bool:
    """A one-directional custom relation: x' is x with one record appended."""
    return len(x_prime) == len(x) + 1 and x_prime[:len(x)] == x


TINY = {
    "replace-one": dp.universe([0, 1, 2], range(0, 3), neighbours=dp.REPLACE_ONE),
    "replace-one multisets": dp.universe([0, 1, 2], range(0, 4), neighbours=dp.REPLACE_ONE, symmetric=True),
    "add/remove": dp.universe([0, 1], range(0, 4), neighbours=dp.ADD_REMOVE),
    "add/remove multisets": dp.universe([0, 1, 2], range(1, 4), neighbours=dp.ADD_REMOVE, symmetric=True),
    "label-only": dp.universe(dp.labelled([0, 1], [0, 1, 2]), range(1, 3), neighbours=dp.LABEL_ONLY),
    "label-only multisets": dp.universe(dp.labelled([0, 1], [0, 1]), 2, neighbours=dp.LABEL_ONLY,
                                        symmetric=True),
    "l1": dp.answers([0, 1, 2], 2, neighbours=dp.l1_one),
    "l1 multisets": dp.universe([0, 1, 2], range(1, 4), neighbours=dp.l1_one, symmetric=True),
    "l1 multisets, unsorted records": dp.universe([2, 0, 1], 2, neighbours=dp.l1_one, symmetric=True),
    "l1 fractional": dp.answers([0, 0.5, 1], 2, neighbours=dp.l1_one),
    "linf": dp.answers([0, 1, 2], 2),
    "linf multisets": dp.universe([0, 1, 2], 2, neighbours=dp.linf_one, symmetric=True),
    "custom": dp.universe([0, 1], range(0, 3), neighbours=prefix),
}


@pytest.mark.parametrize("name", TINY)
def test_drawn_datasets_are_exactly_the_engines(name: str) -> None:
    universe = TINY[name]
    assert drawn(strategies.datasets(universe)) == set(enumerate_datasets(universe))


@pytest.mark.parametrize("name", TINY)
def test_drawn_pairs_are_exactly_the_engines_in_both_orders(name: str) -> None:
    universe = TINY[name]
    expected = engine_pairs(universe)
    assert drawn(strategies.neighbouring_pairs(universe), examples=1500) == expected, name


@settings(QUIET, max_examples=200)
@given(strategies.neighbouring_pairs(dp.universe(range(10), range(0, 8), neighbours=dp.ADD_REMOVE)))
def test_add_remove_pairs_differ_by_one_record(pair: tuple) -> None:
    small, large = sorted(pair, key=len)
    assert len(large) == len(small) + 1
    assert any(large[:i] + large[i + 1:] == small for i in range(len(large)))


@settings(QUIET, max_examples=200)
@given(strategies.neighbouring_pairs(dp.universe(range(10), range(0, 8), neighbours=dp.REPLACE_ONE)))
def test_replace_one_pairs_differ_in_one_position(pair: tuple) -> None:
    x, x_prime = pair
    assert len(x) == len(x_prime) >= 1
    assert sum(a != b for a, b in zip(x, x_prime)) == 1


@settings(QUIET, max_examples=200)
@given(strategies.neighbouring_pairs(dp.universe(dp.labelled(range(5), ["a", "b", "c"]), 6, neighbours=dp.LABEL_ONLY,
                                                 symmetric=True)))
def test_label_only_multiset_pairs_change_one_label(pair: tuple) -> None:
    x, x_prime = pair
    assert sorted(x) == list(x) and sorted(x_prime) == list(x_prime)  # canonical: records' order
    gone, came = Counter(x) - Counter(x_prime), Counter(x_prime) - Counter(x)
    assert sum(gone.values()) == sum(came.values()) == 1  # one record changed
    (before,), (after,) = gone, came
    assert before[0] == after[0] and before[1] != after[1]  # only its label


@settings(QUIET, max_examples=200)
@given(strategies.neighbouring_pairs(dp.answers(range(5), 6)))
def test_linf_pairs_move_every_answer_by_at_most_one(pair: tuple) -> None:
    x, x_prime = pair
    assert x != x_prime and dp.linf_one(x, x_prime)


def clamped_sum(data: tuple, lo: int = 0, hi: int = 1) -> int:
    return sum(min(max(v, lo), hi) for v in data)


def clamped_above(data: tuple, hi: int = 1) -> int:
    """A mutant: forgets the lower clamp, so a negative record moves the sum by more than 1."""
    return sum(min(v, hi) for v in data)


ADD_REMOVE = dp.universe(range(-3, 10), range(0, 6), neighbours=dp.ADD_REMOVE)


@settings(QUIET, max_examples=300)
@given(strategies.neighbouring_pairs(ADD_REMOVE))
def test_clamped_sum_has_sensitivity_one(pair: tuple) -> None:
    x, x_prime = pair
    assert abs(clamped_sum(x) - clamped_sum(x_prime)) <= 1


def test_the_mutants_bug_is_found_and_shrunk_to_the_smallest_pair() -> None:
    def broken(pair: tuple) -> bool:
        return abs(clamped_above(pair[0]) - clamped_above(pair[1])) > 1

    witness = find(strategies.neighbouring_pairs(ADD_REMOVE), broken, settings=settings(QUIET, max_examples=500))
    assert witness == ((), (-3,))  # the smallest datasets, the first record


def test_pairs_shrink_to_small_datasets_and_first_records() -> None:
    replace = dp.universe(range(10), range(0, 6), neighbours=dp.REPLACE_ONE)
    assert find(strategies.neighbouring_pairs(replace), lambda p: True) == ((0,), (1,))
    labels = dp.universe(dp.labelled(["a", "b"], [0, 1]), range(2, 4), neighbours=dp.LABEL_ONLY)
    assert find(strategies.neighbouring_pairs(labels), lambda p: True) == (
        (("a", 0), ("a", 0)), (("a", 1), ("a", 0)))
    assert find(strategies.datasets(replace), lambda d: True) == ()


@settings(QUIET, max_examples=150)
@given(st.data())
def test_pairs_of_drawn_universes_are_the_engines(data: st.DataObject) -> None:
    universe = data.draw(strategies.universes(
        records=(0, 1, 2), max_n=3,
        neighbours=(dp.REPLACE_ONE, dp.ADD_REMOVE, dp.l1_one, dp.linf_one)))
    assert max(universe.sizes) <= 3 and universe.records
    pairs = engine_pairs(universe)
    assert pairs  # every drawn universe has a neighbouring pair
    assert data.draw(strategies.neighbouring_pairs(universe)) in pairs
    assert data.draw(strategies.datasets(universe)) in set(enumerate_datasets(universe))


def test_universes_reach_every_relation_kind_and_labelled_records() -> None:
    seen = drawn(strategies.universes(records=dp.labelled([0, 1], [0, 1]), max_n=2,
                                      neighbours=(dp.LABEL_ONLY, dp.ADD_REMOVE)), examples=300)
    assert {(u.neighbours, u.symmetric) for u in seen} == {
        (rel, sym) for rel in (dp.LABEL_ONLY, dp.ADD_REMOVE) for sym in (False, True)}
    assert all(engine_pairs(u) for u in seen)


def test_grid_points_are_the_specs_points() -> None:
    eps = dp.symbol("eps", positive=True)
    spec = dp.spec(lambda data, eps: dp.randomized_response(data[0], eps),
                   universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                   grid={eps: [1, sympy.Rational(1, 2)]}, claims=[dp.private(eps)])
    assert drawn(strategies.grid_points(spec).map(lambda p: tuple(p.items())), 50) == {
        (("eps", 1),), (("eps", sympy.Rational(1, 2)),)}


def test_bad_input_is_one_clear_error() -> None:
    with pytest.raises(dp.SpecError, match="takes a universe"):
        strategies.datasets([0, 1])
    with pytest.raises(dp.SpecError, match="no pair of neighbouring datasets"):
        strategies.neighbouring_pairs(dp.universe([0], 2, neighbours=dp.REPLACE_ONE))
    with pytest.raises(dp.SpecError, match="no pair of neighbouring datasets"):
        strategies.neighbouring_pairs(dp.answers([0, 5], 2, neighbours=dp.l1_one))
    with pytest.raises(dp.SpecError, match="limit"):
        strategies.neighbouring_pairs(dp.universe(range(10), 6, neighbours=prefix))
    with pytest.raises(dp.SpecError, match="max_n"):
        strategies.universes(max_n=0)
    with pytest.raises(dp.SpecError, match="no two of the records"):
        strategies.universes(records=(0, 5), neighbours=(dp.l1_one,))


def test_import_dpverify_does_not_import_hypothesis() -> None:
    code = ("import sys, dpverify; assert 'hypothesis' not in sys.modules; "
            "from dpverify import strategies; assert 'hypothesis' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_the_documented_example_runs_and_catches_a_missing_clamp() -> None:
    """The example of docs/how-to/property-tests.md (it was the README's section of that name)."""
    page = Path(__file__).resolve().parent.parent / "docs" / "how-to" / "property-tests.md"
    section = page.read_text()
    code = section.split("```python\n")[1].split("```")[0]
    namespace: dict = {}
    exec(compile(code, str(page), "exec"), namespace)
    namespace["test_clamped_sum_sensitivity"]()  # holds
    exec(compile(code.replace("min(max(v, lo), hi)", "v"), str(page), "exec"), namespace)
    with pytest.raises(AssertionError):
        namespace["test_clamped_sum_sensitivity"]()
    witness = find(strategies.neighbouring_pairs(namespace["U"]), lambda p: abs(sum(p[0]) - sum(p[1])) > 10,
                   settings=settings(QUIET, max_examples=500))
    assert witness == ((), (11,)) and "`pair=((), (11,))`" in section


def test_dp_strategies_is_there_without_importing_it_first() -> None:
    """`import dpverify as dp; dp.strategies` works (imported on first use), and a misspelt name is
    still the AttributeError the loader turns into a "did you mean" message."""
    import subprocess
    import sys
    code = ("import sys, dpverify as dp; assert 'hypothesis' not in sys.modules; "
            "assert dp.strategies.datasets is not None and 'hypothesis' in sys.modules\n"
            "try:\n    dp.strategie\nexcept AttributeError as e:\n    assert e.name == 'strategie' and e.obj is dp\n"
            "else:\n    raise SystemExit('no AttributeError')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
