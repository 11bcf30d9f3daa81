"""Datasets, neighbouring pairs, exact laws, achieved epsilon and delta(eps), by brute force.

The truth a claim is measured against: datasets are all *sequences* of records of the
declared sizes (a ``symmetric=True`` declaration is a claim about the program, not a
change of the universe); neighbouring pairs are the relation closed under swapping
(DP quantifies over both orders); and (eps, delta)-DP holds iff for every ordered pair
(X, X') the hockey-stick divergence sum_o max(0, P(o|X) - e^eps P(o|X')) is <= delta
(for delta = 0: P(o|X) <= e^eps P(o|X') output by output).
"""
from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional, Union

from .exactnum import Q
from .shim import law

Relation = Union[str, Callable[[tuple, tuple], bool]]  # "replace", "addremove" or a function
Law = dict


def datasets(records: tuple, sizes: tuple[int, ...]) -> list[tuple]:
    """Every sequence of records of every declared size."""
    return [d for n in sizes for d in itertools.product(records, repeat=n)]


def _related(relation: Relation, x: tuple, y: tuple) -> bool:
    if relation == "replace":
        return len(x) == len(y) and sum(a != b for a, b in zip(x, y)) == 1
    if relation == "addremove":
        small, big = (x, y) if len(x) < len(y) else (y, x)
        return len(big) == len(small) + 1 and any(big[:i] + big[i + 1:] == small for i in range(len(big)))
    return bool(relation(x, y))


def pairs(data: list[tuple], relation: Relation) -> list[tuple[int, int]]:
    """Ordered neighbouring pairs (i, j), i != j, of the relation closed under swapping."""
    out = []
    for i, x in enumerate(data):
        for j, y in enumerate(data):
            if i != j and (_related(relation, x, y) or _related(relation, y, x)):
                out.append((i, j))
    return out


def asymmetric(data: list[tuple], relation: Relation) -> Optional[tuple[tuple, tuple]]:
    """A pair the relation holds for in one order only, if any."""
    for x in data:
        for y in data:
            if _related(relation, x, y) and not _related(relation, y, x):
                return x, y
    return None


def laws(program: Callable[..., Any], data: list[tuple], params: dict[str, Any]) -> list[Law]:
    return [law(program, x, params) for x in data]


@dataclass(frozen=True)
class Achieved:
    """The maximum privacy loss: infinite, or log(ratio) attained at (pair, output)."""

    infinite: bool
    ratio: Q
    where: Optional[tuple[int, int, Any]]


def achieved(ls: list[Law], prs: list[tuple[int, int]]) -> Achieved:
    best = Achieved(False, Q.of(1), None)
    for i, j in prs:
        for o, p in ls[i].items():
            q = ls[j].get(o)
            if q is None:
                return Achieved(True, Q.of(0), (i, j, o))
            r = p / q
            if r > best.ratio:
                best = Achieved(False, r, (i, j, o))
    return best


def pure_holds(best: Achieved, bound: Q) -> bool:
    """eps-DP with e^eps = ``bound``, given the achieved loss."""
    return not best.infinite and best.ratio <= bound


def hockey_stick(ls: list[Law], prs: list[tuple[int, int]], bound: Q) -> Q:
    """max over ordered pairs of sum_o max(0, P(o|X) - bound * P(o|X'))."""
    worst = Q.of(0)
    for i, j in prs:
        total = Q.of(0)
        for o, p in ls[i].items():
            d = p - bound * ls[j].get(o, Q.of(0))
            if d.sign() > 0:
                total = total + d
        if total > worst:
            worst = total
    return worst


def order_dependent(ls: list[Law], data: list[tuple]) -> Optional[tuple[tuple, tuple]]:
    """Two orderings of one multiset whose laws differ, if any."""
    index = {x: i for i, x in enumerate(data)}
    for x in data:
        for y in set(itertools.permutations(x)):
            if y in index and not same_law(ls[index[x]], ls[index[y]]):
                return x, y
    return None


def same_law(a: Law, b: Law) -> bool:
    return a.keys() == b.keys() and all(a[o] == b[o] for o in a)
