"""Universes: a finite record domain, the dataset sizes and the neighbour relation.

A universe states the whole space a privacy claim quantifies over (as OpenDP
names a measurement's input domain and metric): the records a dataset may
contain, its size ``n`` (one size or a range), and which datasets are
neighbours.  There is no default relation: replace-one, add/remove-one and
label-only give different guarantees, so the spec must say which one it means.

For inputs too large to enumerate, :func:`pairs` declares an explicit list of
neighbouring pairs (:class:`PairSet`, e.g. :func:`statdp_patterns`): claims are
then checked exactly on those pairs only, and every result says so.
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

    def scope(self) -> dict[str, Any]:
        """What a claim over this universe's pairs covers, for results and reports: every pair."""
        return {"scope": "universe", "note": "every neighbouring pair of the universe"}

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


@dataclass(frozen=True)
class PairSet(Universe):
    """An explicit list of neighbouring pairs; build it with :func:`pairs`.

    A claim over its pairs is checked exactly on them -- both directions of each -- and on no
    other pair: its results say "listed pairs", never that the whole universe was covered.
    ``records`` and ``sizes`` are those of the listed datasets; ``neighbours`` is the relation
    every listed pair satisfies (it was checked when the pairs were declared).
    """

    pairs: tuple[tuple[tuple, tuple], ...] = ()
    name: str = ""

    @property
    def relation_name(self) -> str:
        return f"listed pairs only{f': {self.name}' if self.name else ''}"

    def scope(self) -> dict[str, Any]:
        """Only the listed pairs: the note every result and report carries."""
        return {"scope": "listed pairs", "pairs": len(self.pairs), "datasets": len(self.datasets()),
                "name": self.name,
                "note": (f"only the {len(self.pairs)} listed pairs{f' ({self.name})' if self.name else ''} of "
                         f"{_relation(self.neighbours)} neighbours were checked, not every pair of the universe")}

    def datasets(self) -> list[tuple]:
        """The listed datasets, each once, shortest first, in the order the pairs name them."""
        seen: dict[tuple, None] = {}
        for x, x_prime in self.pairs:
            seen.setdefault(x)
            seen.setdefault(x_prime)
        return sorted(seen, key=len)

    def describe(self) -> str:
        return (f"{len(self.pairs)} listed pairs of {len(self.datasets())} datasets"
                f"{f' ({self.name})' if self.name else ''}, {_relation(self.neighbours)} neighbours: "
                "checked on these pairs only, not on the whole universe")


def _relation(neighbours: Relation) -> str:
    return neighbours.value if isinstance(neighbours, Neighbours) else getattr(neighbours, "__name__", "custom")


@call_help("dp.pairs([((1, 1), (0, 2)), ((1, 1), (2, 2))], neighbours=dp.linf_one, name='patterns')",
           neighbours="the relation every listed pair satisfies, e.g. dp.linf_one or dp.l1_one")
def pairs(listed: Iterable[tuple[tuple, tuple]], *, neighbours: Callable[[tuple, tuple], bool],
          name: str = "") -> PairSet:
    """Declare an explicit list of neighbouring pairs (x, x'), for inputs too large to enumerate.

    Each pair is two datasets (tuples of hashable records) that ``neighbours`` relates (in
    either direction; checked here, so a mistyped pair is an error, not a false refutation).
    Claims are checked exactly on these pairs, both directions, and only on them: results,
    the JSON document and reports label them as covering the listed pairs, never the universe.

    >>> pairs([((1, 1), (0, 2))], neighbours=linf_one, name="one pattern").describe()
    '1 listed pairs of 2 datasets (one pattern), linf_one neighbours: checked on these pairs only, not on the whole universe'
    """
    if isinstance(neighbours, Neighbours) or not callable(neighbours):
        raise SpecError(f"neighbours={neighbours!r}: a pair set needs a relation function to check its pairs against",
                        "pass neighbours=dp.linf_one, dp.l1_one or a function (x, x_prime) -> bool")
    if isinstance(listed, (str, bytes)) or not hasattr(listed, "__iter__"):
        raise SpecError(f"the pairs must be a list of (x, x_prime), got {type(listed).__name__}",
                        "give a list such as [((1, 1), (0, 2))]")
    found: dict[tuple, None] = {}
    for pair in listed:
        if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(d, tuple) for d in pair)):
            raise SpecError(f"{pair!r} is not a pair (x, x_prime) of datasets given as tuples",
                            "give each pair as a tuple of two tuples, e.g. ((1, 1), (0, 2))")
        x, x_prime = _finite(pair[0], "a dataset"), _finite(pair[1], "a dataset")
        if x == x_prime:
            raise SpecError(f"the pair {pair!r} lists one dataset twice", "list two different datasets")
        related = neighbours(x, x_prime) or neighbours(x_prime, x)
        if type(related) is not bool and related not in (0, 1):
            raise SpecError(f"the relation returned {related!r} on {pair!r}", "return True or False")
        if not related:
            raise SpecError(f"{x!r} and {x_prime!r} are not neighbours under "
                            f"{getattr(neighbours, '__name__', 'the relation')}",
                            "list only pairs the relation relates, or name the relation they satisfy")
        if (x_prime, x) not in found:
            found.setdefault((x, x_prime))
    if not found:
        raise SpecError("the pair set lists no pair", "give at least one pair (x, x_prime)")
    datasets = list(dict.fromkeys(d for pair in found for d in pair))
    records = tuple(dict.fromkeys(r for d in datasets for r in d))
    sizes = tuple(sorted({len(d) for d in datasets}))
    return PairSet(records, sizes, neighbours, False, _caller(), tuple(found), str(name))


@call_help("dp.statdp_patterns(5)")
def statdp_patterns(m: int) -> list[tuple[tuple, tuple]]:
    """The eight query-answer patterns of StatDP (Ding et al., CCS 2018), for m answers.

    Seven pairs compare 1^m with: one below (0 1^(m-1)), one above (2 1^(m-1)), one above and
    the rest below (2 0^(m-1)), one below and the rest above (0 2^(m-1)), half above and half
    below (2^(m//2) 0^(m - m//2)), all above (2^m), all below (0^m); the eighth is the "x shape"
    1^(m//2) 0^(m - m//2) against 0^(m//2) 1^(m - m//2).  All are ell_inf neighbours
    (:func:`linf_one`): every answer moves by at most 1.

    >>> statdp_patterns(2)[-1]
    ((1, 0), (0, 1))
    """
    if isinstance(m, bool) or not isinstance(m, int) or m < 2:
        raise SpecError(f"statdp_patterns: m={m!r} must be an int >= 2", "pass the number of answers, e.g. 5")
    half, rest = m // 2, m - m // 2
    ones = (1,) * m
    others = [(0,) + (1,) * (m - 1), (2,) + (1,) * (m - 1), (2,) + (0,) * (m - 1), (0,) + (2,) * (m - 1),
              (2,) * half + (0,) * rest, (2,) * m, (0,) * m]
    return [(ones, other) for other in others] + [((1,) * half + (0,) * rest, (0,) * half + (1,) * rest)]
