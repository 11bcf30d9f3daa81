"""Universes: a finite record domain, the dataset sizes and the neighbour relation.

A universe states the whole space a privacy claim quantifies over (as OpenDP
names a measurement's input domain and metric): the records a dataset may
contain, its size ``n`` (one size or a range), and which datasets are
neighbours.  There is no default relation: replace-one, add/remove-one and
label-only give different guarantees, so the spec must say which one it means.
"""
from __future__ import annotations

import enum
import os
import sys
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from ..errors import SpecError, call_help


class Neighbours(enum.Enum):
    """The built-in neighbour relations on datasets."""

    REPLACE_ONE = "replace-one"
    """Same size; exactly one record replaced by another (bounded DP)."""
    ADD_REMOVE = "add/remove-one"
    """Sizes differ by one; the smaller is the larger with one record removed (unbounded DP)."""
    LABEL_ONLY = "label-only"
    """Records are (x, y); exactly one record's label y differs (label DP)."""


REPLACE_ONE = Neighbours.REPLACE_ONE
ADD_REMOVE = Neighbours.ADD_REMOVE
LABEL_ONLY = Neighbours.LABEL_ONLY

Relation = Union[Neighbours, Callable[[tuple, tuple], bool]]

RELATIONS = ("dp.REPLACE_ONE (same size, one record replaced), dp.ADD_REMOVE (one record added or removed), "
             "dp.LABEL_ONLY (one record's label changed), or a function (x, x_prime) -> bool such as "
             "dp.l1_one or dp.linf_one")
"""The relations a spec can name, as errors list them."""


@dataclass(frozen=True)
class Universe:
    """A finite universe of datasets; build it with :func:`universe`."""

    records: tuple[Hashable, ...]
    sizes: tuple[int, ...]
    neighbours: Relation
    symmetric: bool
    origin: Optional[tuple[str, int]] = field(default=None, compare=False)
    """Where the spec declared the universe (file, line), for errors found later."""

    @property
    def relation_name(self) -> str:
        if isinstance(self.neighbours, Neighbours):
            return self.neighbours.value
        return f"custom ({getattr(self.neighbours, '__name__', 'function')})"

    def describe(self) -> str:
        sizes = (f"n={self.sizes[0]}" if len(self.sizes) == 1
                 else f"n in {self.sizes[0]}..{self.sizes[-1]}")
        kind = "multisets" if self.symmetric else "sequences"
        return f"{len(self.records)} records, {sizes}, {self.relation_name}, {kind}"


@call_help("dp.labelled([0, 1, 2], [0, 1])")
def labelled(xs: Iterable[Hashable], labels: Iterable[Hashable]) -> tuple[tuple[Any, Any], ...]:
    """All labelled records (x, y) for x in ``xs`` and y in ``labels``."""
    xs, labels = _finite(xs, "xs"), _finite(labels, "labels")
    return tuple((x, y) for x in xs for y in labels)


def _finite(values: Iterable[Hashable], what: str) -> tuple:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise SpecError(f"{what} must be a finite collection (a list, tuple, range or set), "
                        f"got {type(values).__name__}",
                        f"give {what} as a list, e.g. [0, 1, 2]")
    values = tuple(values)
    for value in values:
        try:
            hash(value)
        except TypeError:
            raise SpecError(f"{what} contains {value!r}, which is not hashable",
                            "use tuples instead of lists for structured records") from None
    return values


@call_help("dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE)",
           neighbours=f"the neighbour relation: {RELATIONS}",
           n="the dataset size, one int or a range such as range(1, 4)")
def universe(records: Iterable[Hashable], n: int | Iterable[int], *,
             neighbours: Relation, symmetric: bool = False) -> Universe:
    """Declare a finite universe of datasets.

    ``records`` is the finite record domain, ``n`` one dataset size or a range
    of sizes, ``neighbours`` a :class:`Neighbours` member or a function
    ``(x, x_prime) -> bool`` on two datasets (tuples of records) that returns
    True or False.  DP compares both directions, so a custom relation is closed
    under symmetry: x and x' are neighbours when ``rel(x, x')`` or
    ``rel(x_prime, x)`` (a one-directional "x' is x minus a record" works).  A
    claim over the neighbouring pairs of a universe that has none is an error.
    ``symmetric=True`` states that the mechanism ignores record order, so the
    engine enumerates multisets; the checks verify the statement (every
    ordering of each multiset must give the same law, exactly) before relying
    on it.

    >>> universe([0, 1], n=2, neighbours=REPLACE_ONE).describe()
    '2 records, n=2, replace-one, sequences'
    """
    records = _finite(records, "records")
    if not records:
        raise SpecError("the universe has no records", "give at least one record, e.g. records=[0, 1]")
    if len(set(records)) != len(records):
        raise SpecError("the universe lists a record twice", "give each record once")
    if isinstance(n, bool) or not isinstance(n, (int, range, list, tuple)):
        raise SpecError(f"n={n!r} must be an int or a finite range of ints",
                        "use n=4 or n=range(1, 5)")
    sizes = (n,) if isinstance(n, int) else tuple(n)
    if not sizes or any(isinstance(k, bool) or not isinstance(k, int) or k < 0 for k in sizes):
        raise SpecError(f"n={n!r} must be non-negative ints", "use n=4 or n=range(1, 5)")
    sizes = tuple(sorted(set(sizes)))
    if not (isinstance(neighbours, Neighbours) or callable(neighbours)):
        raise SpecError(f"neighbours={neighbours!r} is not a neighbour relation",
                        f"use {RELATIONS}")
    if neighbours is Neighbours.ADD_REMOVE and not any(k + 1 in sizes for k in sizes):
        raise SpecError(f"add/remove neighbours need two consecutive sizes, got n={n!r}",
                        "use a range of sizes, e.g. n=range(2, 5)")
    if neighbours is Neighbours.LABEL_ONLY:
        if not all(isinstance(r, tuple) and len(r) == 2 for r in records):
            raise SpecError("label-only neighbours need records (x, y)",
                            "build the records with dp.labelled(xs, labels)")
    return Universe(records, sizes, neighbours, bool(symmetric), _caller())


def _caller() -> Optional[tuple[str, int]]:
    """The first frame outside dpverify: where the spec declared the universe."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame = sys._getframe(1)
    while frame is not None:
        if not os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
            return frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back
    return None


def linf_one(x: tuple, x_prime: tuple) -> bool:
    """Query-answer vectors of the same length where every answer moves by at most 1 (||q - q'||_inf <= 1).

    The relation of the testers' benchmarks (StatDP, DP-Sniper, CheckDP): m queries of sensitivity 1 each,
    all of which may change between neighbouring databases.
    """
    return len(x) == len(x_prime) and all(abs(a - b) <= 1 for a, b in zip(x, x_prime))


def l1_one(x: tuple, x_prime: tuple) -> bool:
    """Answer vectors at L1 distance at most 1 (||q - q'||_1 <= 1): a histogram, one record added or removed."""
    return len(x) == len(x_prime) and sum(abs(a - b) for a, b in zip(x, x_prime)) <= 1


@call_help("dp.answers([0, 1, 2], 3)")
def answers(values: Iterable[int], m: int, *, neighbours: Callable[[tuple, tuple], bool] = linf_one) -> Universe:
    """The universe of query-answer vectors: every vector in ``values``^m, neighbours by ``neighbours``.

    Mechanisms of the benchmark literature take the answers q(D) rather than D;
    quantifying over all answer vectors within the relation covers every
    database whose queries have the stated sensitivity.

    >>> answers([0, 1], 3).describe()
    '2 records, n=3, custom (linf_one), sequences'
    """
    return universe(values, m, neighbours=neighbours)
