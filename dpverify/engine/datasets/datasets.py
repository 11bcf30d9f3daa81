"""Datasets of a finite universe and their neighbouring pairs.

Datasets are tuples of records.  For a mechanism declared symmetric they are
multisets, represented as tuples sorted by the records' order in the universe.
Pairs come back unordered (i < j) as two integer arrays; the privacy loss is
evaluated in both directions.  A user relation is closed under symmetry (x, x'
are neighbours when rel(x, x') or rel(x', x)), and one that relates no pair is
an error: a claim over no pairs would hold vacuously.  :func:`estimate` counts datasets and pairs with
exact formulas, so a universe too large to enumerate is refused before any work, and one under the
limit is not.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from fractions import Fraction
from dataclasses import dataclass

import numpy as np

from ...dsl.universe import Neighbours, PairSet, Universe, l1_one, linf_one
from ...errors import SpecError, line_in
from ..program import contract


@dataclass(frozen=True)
class Size:
    """How many datasets a universe has and how many unordered neighbouring pairs.

    ``pairs`` is exact for the built-in relations; for a custom relation it is the number of
    unordered pairs of datasets the relation is asked about (an upper bound on its pairs, and
    exactly the work of finding them), and ``exact`` is False.
    """

    datasets: int
    pairs: int
    exact: bool = True


def _count(records: int, k: int, symmetric: bool) -> int:
    """Datasets of size k: r^k sequences, or C(r + k - 1, k) multisets."""
    return math.comb(records + k - 1, k) if symmetric else records ** k


def _swaps(records: int, k: int, symmetric: bool, alternatives: int) -> int:
    """Unordered pairs of size-k datasets that differ by replacing one record with one of its
    alternatives, where ``alternatives`` is the number of unordered record pairs {a, b} that may
    replace each other (C(r, 2) for replace-one, sum_x C(L_x, 2) for label-only).

    Sequences: choose the position (k), the pair {a, b} and the other k - 1 positions (r^(k-1)).
    Multisets: the two datasets are C + a and C + b for their common part C, a multiset of size
    k - 1, which the pair determines: C(r + k - 2, k - 1) * alternatives.
    """
    if k == 0 or alternatives == 0:
        return 0
    if symmetric:
        return math.comb(records + k - 2, k - 1) * alternatives
    return k * records ** (k - 1) * alternatives


def _insertions(records: int, k: int, symmetric: bool) -> int:
    """Pairs (B, A) with |B| = k and A = B plus one record: every B and every record a added to it.

    Multisets: B + a differs for every a, so r per B.  Sequences: inserting one of r records
    at one of k + 1 places gives (k + 1) r strings, of which exactly k(r - 1) + r are distinct
    whatever B is (inserting b next to an equal b is the same string wherever it goes)."""
    return _count(records, k, symmetric) * (records if symmetric else k * (records - 1) + records)


def _label_pairs(universe: Universe) -> int:
    """sum over x of C(L_x, 2): the unordered pairs of records (x, y), (x, y') with y != y'."""
    labels: dict = {}
    for x, _ in universe.records:
        labels[x] = labels.get(x, 0) + 1
    return sum(math.comb(count, 2) for count in labels.values())


def estimate(universe: Universe) -> Size:
    """How many datasets and unordered neighbouring pairs the universe has, by formulas (no enumeration).

    Exact for sequences and multisets under replace-one, add/remove and label-only (the counts
    :func:`neighbour_pairs` finds; tests/test_work_estimate.py holds them against enumeration); for a
    custom relation, every pair of datasets it is asked about (see :class:`Size`).
    """
    if isinstance(universe, PairSet):  # exactly the listed datasets and pairs
        return Size(len(universe.datasets()), len(universe.pairs))
    r, sym = len(universe.records), universe.symmetric
    datasets = sum(_count(r, k, sym) for k in universe.sizes)
    rel = universe.neighbours
    if rel is Neighbours.REPLACE_ONE:
        pairs = sum(_swaps(r, k, sym, math.comb(r, 2)) for k in universe.sizes)
    elif rel is Neighbours.LABEL_ONLY:
        alternatives = _label_pairs(universe)
        pairs = sum(_swaps(r, k, sym, alternatives) for k in universe.sizes)
    elif rel is Neighbours.ADD_REMOVE:
        pairs = sum(_insertions(r, k, sym) for k in universe.sizes if k + 1 in universe.sizes)
    elif _integer_answers(universe):
        pairs = sum(_answer_count(rel, universe.records, k) for k in universe.sizes)
    else:
        return Size(datasets, datasets * (datasets - 1) // 2, exact=False)
    return Size(datasets, pairs)


def _integer_answers(universe: Universe) -> bool:
    """Sequences of integer answers under the DSL's own ``linf_one`` or ``l1_one``: their pairs are counted
    by formula and listed by index arithmetic (:func:`_answer_sequences`), without asking the relation."""
    return (not universe.symmetric and (universe.neighbours is linf_one or universe.neighbours is l1_one)
            and all(type(r) is int for r in universe.records))


def _moves(records: tuple, rel: Callable[[tuple, tuple], bool]) -> list[tuple[int, int]]:
    """The ordered pairs (a, b) of record positions one answer may move between: |records[a] - records[b]|
    <= 1 under ell_inf (a == b included: that answer stays), == 1 under ell_1 (the one answer that moves)."""
    return [(a, b) for a, x in enumerate(records) for b, y in enumerate(records)
            if abs(x - y) <= 1 and (rel is linf_one or x != y)]


def _answer_count(rel: Callable[[tuple, tuple], bool], records: tuple, k: int) -> int:
    """Unordered pairs of distinct integer answer vectors of length k that ``linf_one`` or ``l1_one``
    relates (both need equal lengths).  ell_inf: every answer moves independently along one of the c
    ordered moves (a == b included), c^k ordered pairs, of which r^k pair a vector with itself;
    ell_1: one position, one of the e unordered pairs {a, b} with |a - b| = 1, the others free."""
    if k == 0:
        return 0
    moves = len(_moves(records, rel))
    if rel is linf_one:
        return (moves ** k - len(records) ** k) // 2
    return k * len(records) ** (k - 1) * (moves // 2)


def enumerate_datasets(universe: Universe) -> list[tuple]:
    """Every dataset of the universe, smallest size first, in a fixed order (of a pair set: the listed ones)."""
    if isinstance(universe, PairSet):
        return universe.datasets()
    out: list[tuple] = []
    for k in universe.sizes:
        if universe.symmetric:
            out.extend(itertools.combinations_with_replacement(universe.records, k))
        else:
            out.extend(itertools.product(universe.records, repeat=k))
    return out


def neighbour_pairs(universe: Universe, datasets: list[tuple]) -> tuple[np.ndarray, np.ndarray]:
    """Unordered neighbouring pairs (i < j) as index arrays into ``datasets`` (see :func:`require_pairs`)."""
    return _pairs(universe, datasets)


def require_pairs(universe: Universe, left: np.ndarray) -> None:
    """Refuse a universe without a neighbouring pair: every claim over its pairs would hold vacuously."""
    if len(left) == 0:
        file, line = universe.origin or (None, None)
        raise SpecError(f"the universe ({universe.describe()}) has no pair of neighbouring datasets, "
                        "so a claim over its pairs would hold without saying anything",
                        "check the neighbour relation (a custom one gets two datasets, tuples of records, "
                        "and is closed under swapping them), the records and the sizes n",
                        file=file, line=line)


def _pairs(universe: Universe, datasets: list[tuple]) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(universe, PairSet):
        index = {d: i for i, d in enumerate(datasets)}
        listed = sorted({tuple(sorted((index[x], index[x_prime]))) for x, x_prime in universe.pairs})
        arr = np.array(listed, dtype=np.int64).reshape(-1, 2)
        return arr[:, 0], arr[:, 1]
    if universe.neighbours is Neighbours.REPLACE_ONE and not universe.symmetric:
        return _replace_one_sequences(universe)
    if _integer_answers(universe) and len(datasets) == sum(len(universe.records) ** k for k in universe.sizes):
        return _answer_sequences(universe)
    rel = universe.neighbours
    if universe.symmetric and (rel is linf_one or rel is l1_one) \
            and all(type(r) in (int, Fraction) for r in universe.records):
        # multisets are neighbours when SOME orderings of them are: for the l1 and l_inf distances the
        # closest orderings are both sorted by value (the sorted matching minimises the sum and the
        # maximum of |a_i - b_pi(i)|), whatever order the universe lists the records in
        by_value = [tuple(sorted(d)) for d in datasets]
        found = _answer_pairs(rel, by_value) if all(type(r) is int for r in universe.records) \
            else _custom_pairs(rel, by_value)
        return _as_arrays(found)
    if universe.symmetric and not isinstance(rel, Neighbours):
        # a relation on tuples may depend on the order of the records, and a multiset is represented by one
        # sorted ordering: two multisets are neighbours when SOME orderings of them are related
        return _as_arrays(_custom_multiset_pairs(rel, datasets))
    index = {d: i for i, d in enumerate(datasets)}
    order = {r: i for i, r in enumerate(universe.records)}
    canon = (lambda d: tuple(sorted(d, key=order.__getitem__))) if universe.symmetric else (lambda d: d)
    rel = universe.neighbours
    pairs: set[tuple[int, int]] = set()
    if (rel is linf_one or rel is l1_one) and all(type(r) is int for r in universe.records):
        pairs = _answer_pairs(rel, datasets)  # the DSL's own relations on integer answers: vectorised
    elif callable(rel) and not isinstance(rel, Neighbours):
        pairs = _custom_pairs(rel, datasets)
    else:
        alternatives = _alternatives(universe)
        for i, data in enumerate(datasets):
            for pos, record in enumerate(data):
                if rel is Neighbours.ADD_REMOVE:
                    others = [canon(data[:pos] + data[pos + 1:])]
                else:
                    others = [canon(data[:pos] + (alt,) + data[pos + 1:]) for alt in alternatives[record]]
                for other in others:
                    j = index.get(other)
                    if j is not None and j != i:
                        pairs.add((min(i, j), max(i, j)))
    return _as_arrays(pairs)


def _as_arrays(pairs: set[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    if not pairs:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    arr = np.array(sorted(pairs), dtype=np.int64)
    return arr[:, 0], arr[:, 1]


def _answer_pairs(rel: Callable[[tuple, tuple], bool], datasets: list[tuple]) -> set[tuple[int, int]]:
    """The pairs (i < j) that :func:`~dpverify.dsl.universe.linf_one` or ``l1_one`` relate, among
    integer answer vectors, computed with numpy row by row: the answers calling the relation on every
    pair would give (both need equal lengths; ell_inf: every answer moves by at most 1; ell_1: the
    moves sum to at most 1)."""
    by_length: dict[int, list[int]] = {}
    for i, data in enumerate(datasets):
        by_length.setdefault(len(data), []).append(i)
    pairs: set[tuple[int, int]] = set()
    for k, members in by_length.items():
        if k == 0 or len(members) < 2:
            continue
        rows = np.array([datasets[i] for i in members], dtype=np.int64)
        index = np.array(members, dtype=np.int64)
        for a in range(len(members) - 1):
            moves = np.abs(rows[a + 1:] - rows[a])
            close = (moves.max(axis=1) <= 1) if rel is linf_one else (moves.sum(axis=1) <= 1)
            for b in index[a + 1:][close]:
                i, j = int(index[a]), int(b)
                pairs.add((min(i, j), max(i, j)))
    return pairs


def _custom_pairs(rel: Callable[[tuple, tuple], bool], datasets: list[tuple]) -> set[tuple[int, int]]:
    """Pairs (i < j) with rel(x, x') or rel(x', x): a user relation is closed under symmetry,
    since DP compares both directions; every answer must be a bool (True or False)."""
    pairs: set[tuple[int, int]] = set()
    for i, j in itertools.combinations(range(len(datasets)), 2):
        if _related(rel, datasets[i], datasets[j]) or _related(rel, datasets[j], datasets[i]):
            pairs.add((i, j))
    return pairs


def _custom_multiset_pairs(rel: Callable[[tuple, tuple], bool], datasets: list[tuple]) -> set[tuple[int, int]]:
    """Pairs (i < j) of multisets with rel(x, x') or rel(x', x) for some ordering x of one and x' of the
    other (as many questions as the relation is asked on the sequences themselves)."""
    orders = [sorted(set(itertools.permutations(d)), key=repr) for d in datasets]
    pairs: set[tuple[int, int]] = set()
    for i, j in itertools.combinations(range(len(datasets)), 2):
        if any(_related(rel, x, y) or _related(rel, y, x) for x in orders[i] for y in orders[j]):
            pairs.add((i, j))
    return pairs


def _related(rel: Callable[[tuple, tuple], bool], x: tuple, x_prime: tuple) -> bool:
    code = getattr(rel, "__code__", None)
    file = code.co_filename if code else None
    name = getattr(rel, "__name__", "function")
    token, violations = contract.enter()  # a relation is spec code: no outside randomness either
    try:
        answer = rel(x, x_prime)
    except SpecError:
        raise
    except Exception as exc:
        raise SpecError(f"the neighbour relation {name} raised {type(exc).__name__}: {exc} "
                        f"on ({x!r}, {x_prime!r})",
                        "make the relation return True or False for every two datasets of the universe",
                        file=file, line=(line_in(exc.__traceback__, file) if file else None)
                        or (code.co_firstlineno if code else None)) from None
    finally:
        contract.leave(token)
    if violations:
        raise violations[0]
    if type(answer) is not bool:
        raise SpecError(f"the neighbour relation {name} returned {answer!r} (a {type(answer).__name__}) "
                        f"on ({x!r}, {x_prime!r}); it must return True or False",
                        "return a bool, e.g. `return bool(...)` around the test",
                        file=file, line=code.co_firstlineno if code else None)
    return answer


def _replace_one_sequences(universe: Universe) -> tuple[np.ndarray, np.ndarray]:
    """Replace-one pairs among sequences by index arithmetic: a dataset of size k is its
    number in base r (r records), so replacing position p changes one digit."""
    r = len(universe.records)
    lefts, rights, offset = [], [], 0
    for k in universe.sizes:
        count = r ** k
        index = np.arange(count, dtype=np.int64)
        for pos in range(k):
            place = r ** (k - 1 - pos)
            digit = (index // place) % r
            for shift in range(1, r):
                other = index + (((digit + shift) % r) - digit) * place
                keep = index < other
                lefts.append(index[keep] + offset)
                rights.append(other[keep] + offset)
        offset += count
    if not lefts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    left, right = np.concatenate(lefts), np.concatenate(rights)
    order = np.lexsort((right, left))
    return left[order], right[order]


def _answer_sequences(universe: Universe) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (i < j) that ``linf_one`` or ``l1_one`` relate among sequences of integer answers, by index
    arithmetic (a vector of length k is its number in base r, in :func:`enumerate_datasets`' order), sorted as
    :func:`_as_arrays` sorts: the pairs :func:`_answer_pairs` finds by asking every pair, without asking
    (tests/test_work_estimate.py holds the two equal).  ell_inf: every vector's neighbours are the product of
    each answer's moves, built one position at a time; ell_1: one position moves by one."""
    records, rel = universe.records, universe.neighbours
    r = len(records)
    moves = np.array(_moves(records, rel), dtype=np.int64).reshape(-1, 2)
    lefts, rights, offset = [], [], 0
    for k in universe.sizes:
        count = r ** k
        if k == 0 or len(moves) == 0:
            offset += count
            continue
        if rel is linf_one:
            left = np.zeros(1, dtype=np.int64)
            right = np.zeros(1, dtype=np.int64)
            for _ in range(k):  # append one digit: every pair so far times every move of the next answer
                left = (left[:, None] * r + moves[None, :, 0]).reshape(-1)
                right = (right[:, None] * r + moves[None, :, 1]).reshape(-1)
                # a pair whose first digits put left above right stays there (a prefix decides the order of
                # two base-r numbers of equal length), so it is dropped as soon as it is seen
                keep = left <= right if _ < k - 1 else left < right
                left, right = left[keep], right[keep]
        else:
            index = np.arange(count, dtype=np.int64)
            parts_l, parts_r = [], []
            for pos in range(k):
                place = r ** (k - 1 - pos)
                digit = (index // place) % r
                for a, b in moves:
                    if a < b:  # each unordered move once: the smaller vector is the one with the smaller digit
                        chosen = index[digit == a]
                        parts_l.append(chosen)
                        parts_r.append(chosen + (b - a) * place)
            left, right = np.concatenate(parts_l), np.concatenate(parts_r)
        lefts.append(left + offset)
        rights.append(right + offset)
        offset += count
    if not lefts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    left, right = np.concatenate(lefts), np.concatenate(rights)
    order = np.lexsort((right, left))
    return left[order], right[order]


def _alternatives(universe: Universe) -> dict:
    if universe.neighbours is Neighbours.LABEL_ONLY:
        return {(x, y): [(x2, y2) for x2, y2 in universe.records if x2 == x and y2 != y]
                for x, y in universe.records}
    return {r: [s for s in universe.records if s != r] for r in universe.records}
