"""The cells a black box's samples are counted in: the spec's outputs, its lumped tails, pooled rare outputs.

The engine gives the exact law of a spec whose noise has infinite support (``dp.geometric``
unclamped) as finitely many outputs: the integers in a window around the centres, and each tail
beyond it lumped into one output (a :class:`~dpverify.engine.continuous.tails.TailInt`, ``<=b`` or ``>=b``)
with its exact closed-form mass -- nothing is enumerated.  A sample is counted in the output it
equals, or in the tail that contains it (componentwise for tuples).

For conformance, outputs whose exact probability is too small for the sample count (expected
count below :data:`POOL`) are pooled, each pool tested as one cell with its exact total mass:
for integer outputs those below the first well-sampled output form one cell, those above the
last another, any between a third; other outputs pool into one cell.  Every cell stays exact.
"""
from __future__ import annotations

import functools
import operator
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Optional

from ...engine.continuous.tails import TailInt

POOL = 10
"""Outputs expected fewer than this many times in the samples are pooled (conformance)."""


def _has_tail(key: Any) -> bool:
    return isinstance(key, TailInt) or (isinstance(key, tuple) and any(isinstance(k, TailInt) for k in key))


def _inside(value: Any, key: Any) -> bool:
    """Whether a sampled ``value`` is the output ``key`` stands for (a tail stands for many)."""
    if isinstance(key, TailInt):
        return (isinstance(value, int) and not isinstance(value, bool)
                and (value <= key.bound if key.side < 0 else value >= key.bound))
    if isinstance(key, tuple):
        return (isinstance(value, tuple) and len(value) == len(key)
                and all(_inside(v, k) for v, k in zip(value, key)))
    return bool(value == key)


class KeyMap:
    """Maps sampled outputs to the keys of the spec's laws (plain outputs by hash, tails by search)."""

    def __init__(self, keys: Iterable[Any]) -> None:
        keys = list(keys)
        self.plain = {k for k in keys if not _has_tail(k)}
        self.tails = sorted((k for k in keys if _has_tail(k)), key=repr)

    def key_of(self, value: Any) -> Optional[Any]:
        """The key ``value`` is counted under, or None when no output of the spec holds it."""
        if value in self.plain:
            return value
        return next((k for k in self.tails if _inside(value, k)), None)

    def counts(self, counts: Counter) -> tuple[Counter, list[Any]]:
        """The sampled counts per key, and the sampled values no key holds (in a deterministic order)."""
        out: Counter = Counter()
        missing = []
        for value, k in counts.items():
            key = self.key_of(value)
            if key is None:
                missing.append(value)
            else:
                out[key] += k
        return out, sorted(missing, key=repr)


@dataclass(frozen=True)
class Cell:
    """A conformance cell: its label, the law keys it gathers, its exact mass (an interval)."""

    label: str
    keys: tuple
    weight: Any


def _position(key: Any) -> Optional[float]:
    if isinstance(key, TailInt):
        return float("-inf") if key.side < 0 else float("inf")
    if isinstance(key, (int, float)) and not isinstance(key, bool):
        return float(key)
    return None


def cells(law: dict, n: int) -> list[Cell]:
    """The cells of one law at ``n`` samples: each well-sampled output alone, the rare ones pooled."""
    keys = sorted((o for o, w in law.items() if w.b > 0), key=repr)
    large = [o for o in keys if float(law[o].b) * n >= POOL]
    small = [o for o in keys if float(law[o].b) * n < POOL]
    out = [Cell(repr(o), (o,), law[o]) for o in large]
    if len(small) <= 1:
        return out + [Cell(repr(o), (o,), law[o]) for o in small]
    groups: dict[str, list[Any]] = {}
    if all(_position(o) is not None for o in keys):
        low = min((_position(o) for o in large), default=float("inf"))
        high = max((_position(o) for o in large), default=float("-inf"))
        for o in small:
            side = "below" if _position(o) < low else "above" if _position(o) > high else "between"
            groups.setdefault(side, []).append(o)
    else:
        groups["rare"] = small
    for side, members in groups.items():
        members.sort(key=lambda o: (_position(o) or 0.0, repr(o)))
        weight = functools.reduce(operator.add, (law[o] for o in members))
        label = (f"{side}: {len(members)} rare outputs pooled, {members[0]!r} ... {members[-1]!r}"
                 if len(members) > 1 else repr(members[0]))
        out.append(Cell(label, tuple(members), weight))
    return out


__all__ = ["POOL", "Cell", "KeyMap", "cells"]
