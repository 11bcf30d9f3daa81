"""Hypothesis strategies over a universe, for property tests of users' own code.

A spec's universe says which datasets a claim quantifies over and which of them are neighbours; the
same universe can drive ``hypothesis`` tests of code that is not a spec (a clamp-and-sum, a
library's query)::

    from hypothesis import given
    from dpverify import strategies

    @given(strategies.neighbouring_pairs(U))
    def test_sensitivity(pair):
        x, x_prime = pair
        assert abs(clamped_sum(x) - clamped_sum(x_prime)) <= 1

Every strategy draws only what the engine considers (``engine/datasets/datasets.py``): datasets are tuples of
the universe's records at its sizes, multisets in the records' order when the universe is symmetric,
and pairs are neighbours under its relation.  Pairs are built, not filtered: a dataset, then one of
its neighbours (one position replaced, one record added, one label changed, every answer moved by at
most one), in either order.  Examples shrink towards the smallest size, the first records and the
first position.  A custom relation other than ``dp.l1_one`` and ``dp.linf_one`` cannot be inverted,
so its pairs are the engine's own list (:func:`~dpverify.engine.datasets.datasets.neighbour_pairs`), computed
once per strategy and refused above :data:`CUSTOM_PAIR_LIMIT` relation calls.

``hypothesis`` is imported here only: ``import dpverify`` does not load it.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, Optional

import numpy as np
import sympy
from hypothesis import strategies as st

from .dsl.spec import Spec
from .dsl.universe import (ADD_REMOVE, LABEL_ONLY, REPLACE_ONE, Neighbours, PairSet, Relation, Universe, l1_one,
                           linf_one)
from .dsl.universe import universe as make_universe
from .engine.datasets.datasets import enumerate_datasets, estimate, neighbour_pairs, require_pairs
from .errors import SpecError

__all__ = ["CUSTOM_PAIR_LIMIT", "datasets", "grid_points", "neighbouring_pairs", "universes"]

CUSTOM_PAIR_LIMIT = 500_000
"""Most relation calls spent listing a custom relation's pairs (one per two datasets)."""

Pair = tuple[tuple, tuple]


def datasets(universe: Universe) -> st.SearchStrategy[tuple]:
    """Datasets of ``universe``: tuples of its records at one of its sizes (sorted in the records' order
    when it is symmetric), exactly the set :func:`~dpverify.engine.datasets.datasets.enumerate_datasets` lists."""
    _require_universe(universe, "datasets")
    if isinstance(universe, PairSet):  # the listed datasets only
        return st.sampled_from(universe.datasets())
    return st.sampled_from(universe.sizes).flatmap(lambda k: _indices(universe, k)).map(
        lambda idx: _canonical(universe, idx))


def neighbouring_pairs(universe: Universe) -> st.SearchStrategy[Pair]:
    """Ordered pairs (x, x') of neighbouring datasets of ``universe``; both orders of every unordered pair
    the engine checks (:func:`~dpverify.engine.datasets.datasets.neighbour_pairs`) are reached, and nothing else."""
    _require_universe(universe, "neighbouring_pairs")
    rel = universe.neighbours
    r = len(universe.records)
    if isinstance(universe, PairSet):  # the listed pairs only
        base = st.sampled_from(universe.pairs)
    elif rel is ADD_REMOVE:
        base = _add_remove(universe)
    elif rel is REPLACE_ONE:  # any other record: no r x r table for a large record domain
        base = _one_position(universe, range(r if r > 1 else 0),
                             lambda i: st.integers(0, r - 2).map(lambda d: d + (d >= i)))
    elif rel is LABEL_ONLY or (rel is l1_one and _unit_steps(universe)):
        moves = _moves(universe)
        base = _one_position(universe, [i for i in range(r) if moves[i]], lambda i: st.sampled_from(moves[i]))
    elif rel is linf_one and not universe.symmetric:
        base = _every_position(universe, _moves(universe))
    else:
        base = _listed(universe)
    return st.tuples(base, st.booleans()).map(lambda drawn: drawn[0][::-1] if drawn[1] else drawn[0])


def universes(records: Sequence[Hashable] = (0, 1, 2), max_n: int = 3,
              neighbours: Sequence[Relation] = (REPLACE_ONE, ADD_REMOVE),
              symmetric: Optional[bool] = None) -> st.SearchStrategy[Universe]:
    """Small universes that have a neighbouring pair: a sub-list of ``records`` (kept in their order),
    sizes ``lo..hi`` within ``0..max_n``, one relation of ``neighbours`` (built-in, ``dp.l1_one`` or
    ``dp.linf_one``; ``dp.LABEL_ONLY`` needs records ``(x, y)``, e.g. ``dp.labelled``), multisets or
    sequences (both unless ``symmetric`` is given).  Shrinks towards the first relation, fewer records
    and smaller sizes."""
    records = tuple(records)
    relations = tuple(neighbours)
    if isinstance(max_n, bool) or not isinstance(max_n, int) or max_n < 1:
        raise SpecError(f"universes(max_n={max_n!r}) needs an int of at least 1",
                        "use max_n=3 (sizes 0..3)")
    if not relations:
        raise SpecError("universes(neighbours=()) has no relation to draw", "use neighbours=(dp.REPLACE_ONE,)")
    seeds = {rel: _seeds(records, rel) for rel in relations}
    kinds = st.booleans() if symmetric is None else st.just(bool(symmetric))

    @st.composite
    def draw(draw: Callable[[st.SearchStrategy[Any]], Any]) -> Universe:
        rel = draw(st.sampled_from(relations))
        seed = draw(st.sampled_from(seeds[rel]))
        extra = draw(st.sets(st.sampled_from(range(len(records)))))
        chosen = tuple(records[i] for i in sorted(extra | set(seed)))
        step = 1 if rel is ADD_REMOVE else 0
        lo = draw(st.integers(0, max_n - step))
        hi = draw(st.integers(max(lo + step, 1), max_n))
        return make_universe(chosen, range(lo, hi + 1), neighbours=rel, symmetric=draw(kinds))

    return draw()


def _seeds(records: tuple, rel: Relation) -> list[tuple[int, int]]:
    """Records (by index, one or two) whose presence gives a universe of ``rel`` a neighbouring pair
    (with a size of at least 1): any record for add/remove, two records one position can move between
    for the others."""
    if not (isinstance(rel, Neighbours) or rel in (l1_one, linf_one)):
        raise SpecError(f"universes() cannot draw universes for the relation {rel!r}",
                        "use dp.REPLACE_ONE, dp.ADD_REMOVE, dp.LABEL_ONLY, dp.l1_one or dp.linf_one")
    if rel is ADD_REMOVE:
        return [(i, i) for i in range(len(records))]
    moves = _moves(make_universe(records, 1, neighbours=rel))  # validates the records for the relation
    seeds = [(i, j) for i, targets in enumerate(moves) for j in targets if i < j]
    if not seeds:
        raise SpecError(f"no two of the records {records!r} are neighbours under {_name(rel)}",
                        "give records that the relation relates, e.g. records=(0, 1, 2)")
    return seeds


def grid_points(spec: Spec) -> st.SearchStrategy[dict[str, sympy.Expr]]:
    """The points of a spec's grid as ``{name: exact value}``, the keyword arguments its mechanism takes."""
    if not isinstance(spec, Spec):
        raise SpecError(f"grid_points() takes a spec, got {type(spec).__name__}", "pass the dp.spec(...) object")
    return st.sampled_from(spec.points).map(lambda point: {sym.name: value for sym, value in point})


def _require_universe(universe: Any, what: str) -> None:
    if not isinstance(universe, Universe):
        raise SpecError(f"{what}() takes a universe, got {type(universe).__name__}",
                        "pass dp.universe(...) (or a spec's .universe)")


def _name(rel: Relation) -> str:
    return rel.value if isinstance(rel, Neighbours) else getattr(rel, "__name__", "the relation")


def _unit_steps(universe: Universe) -> bool:
    """Whether dp.l1_one's pairs are exactly one position moved by 1: integer records (a fractional
    record lets two positions move), in ascending order when the universe is symmetric (the engine
    compares multisets sorted in the records' order, which must then be the numeric order)."""
    records = universe.records
    integers = all(isinstance(r, int) and not isinstance(r, bool) for r in records)
    return integers and (not universe.symmetric or list(records) == sorted(records))


def _indices(universe: Universe, k: int) -> st.SearchStrategy[list[int]]:
    return st.lists(st.integers(0, len(universe.records) - 1), min_size=k, max_size=k)


def _records(universe: Universe, indices: Sequence[int]) -> tuple:
    return tuple(universe.records[i] for i in indices)


def _canonical(universe: Universe, indices: list[int]) -> tuple:
    return _records(universe, sorted(indices) if universe.symmetric else indices)


def _moves(universe: Universe) -> list[list[int]]:
    """For each record (by index), the records (by index) one position may change it into."""
    records, rel = universe.records, universe.neighbours
    if rel is REPLACE_ONE:
        return [[j for j in range(len(records)) if j != i] for i in range(len(records))]
    if rel is LABEL_ONLY:
        return [[j for j, (x2, y2) in enumerate(records) if x2 == x and y2 != y] for x, y in records]
    return [[j for j, s in enumerate(records) if s != r and _related(rel, r, s)] for r in records]


def _related(rel: Callable[[tuple, tuple], bool], r: Hashable, s: Hashable) -> bool:
    """Whether one-record answer vectors (r,) and (s,) are neighbours under dp.l1_one or dp.linf_one."""
    try:
        return bool(rel((r,), (s,)) or rel((s,), (r,)))
    except TypeError as exc:
        raise SpecError(f"the relation {_name(rel)} compares numbers, but the records {r!r} and {s!r} "
                        f"are not ({exc})", "use numeric records, e.g. dp.answers([0, 1, 2], m)") from None


def _no_pairs(universe: Universe) -> None:
    """Refuse a universe without neighbouring pairs, with the engine's error."""
    require_pairs(universe, np.zeros(0, dtype=np.int64))


def _with_movable(universe: Universe, movable: Sequence[int]) -> st.SearchStrategy[tuple[list[int], int]]:
    """A dataset (records by index) and a position holding a ``movable`` record; shrinks towards the
    smallest size, position 0 and the first records.  Refuses a universe where nothing can move."""
    sizes = [k for k in universe.sizes if k >= 1]
    if not movable or not sizes:
        _no_pairs(universe)

    @st.composite
    def draw(draw: Callable[[st.SearchStrategy[Any]], Any]) -> tuple[list[int], int]:
        k = draw(st.sampled_from(sizes))
        pos = draw(st.integers(0, k - 1))
        data = draw(_indices(universe, k))
        data[pos] = draw(st.sampled_from(movable))
        return data, pos

    return draw()


def _one_position(universe: Universe, movable: Sequence[int],
                  target: Callable[[int], st.SearchStrategy[int]]) -> st.SearchStrategy[Pair]:
    """A dataset, a position holding a ``movable`` record, and the dataset with that record moved to a
    ``target`` of it (records by index)."""
    start = _with_movable(universe, movable)

    @st.composite
    def draw(draw: Callable[[st.SearchStrategy[Any]], Any]) -> Pair:
        data, pos = draw(start)
        other = list(data)
        other[pos] = draw(target(data[pos]))
        return _canonical(universe, data), _canonical(universe, other)

    return draw()


def _every_position(universe: Universe, moves: list[list[int]]) -> st.SearchStrategy[Pair]:
    """dp.linf_one on sequences: one position that moves, every other one that may (first: stays)."""
    start = _with_movable(universe, [i for i, targets in enumerate(moves) if targets])

    @st.composite
    def draw(draw: Callable[[st.SearchStrategy[Any]], Any]) -> Pair:
        data, pos = draw(start)
        other = [draw(st.sampled_from(moves[r])) if q == pos else draw(st.sampled_from([r, *moves[r]]))
                 for q, r in enumerate(data)]
        return _records(universe, data), _records(universe, other)

    return draw()


def _add_remove(universe: Universe) -> st.SearchStrategy[Pair]:
    """A dataset and the same with one record inserted (its size + 1 is a size of the universe)."""
    sizes = [k for k in universe.sizes if k + 1 in universe.sizes]
    if not sizes:
        _no_pairs(universe)

    @st.composite
    def draw(draw: Callable[[st.SearchStrategy[Any]], Any]) -> Pair:
        k = draw(st.sampled_from(sizes))
        data = draw(_indices(universe, k))
        pos = draw(st.integers(0, k))
        record = draw(st.integers(0, len(universe.records) - 1))
        return _canonical(universe, data), _canonical(universe, data[:pos] + [record] + data[pos:])

    return draw()


def _listed(universe: Universe) -> st.SearchStrategy[Pair]:
    """A custom relation: the engine's own pairs, listed once when the strategy is first drawn from."""
    calls = estimate(universe).pairs
    if calls > CUSTOM_PAIR_LIMIT:
        file, line = universe.origin or (None, None)
        raise SpecError(f"listing the pairs of the universe ({universe.describe()}) would call its relation "
                        f"{calls:,} times (limit {CUSTOM_PAIR_LIMIT:,}), and a custom relation cannot be "
                        "inverted to build a neighbour directly",
                        "test on a smaller universe (fewer records or sizes), or use a built-in relation",
                        file=file, line=line)

    def pairs() -> st.SearchStrategy[Pair]:
        data = enumerate_datasets(universe)
        left, right = neighbour_pairs(universe, data)
        require_pairs(universe, left)
        return st.sampled_from([(data[i], data[j]) for i, j in zip(left.tolist(), right.tolist())])

    return st.deferred(pairs)
