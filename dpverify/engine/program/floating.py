"""Floating-point samplers driven by one uniform double: exact reachability over the 2^53 grid.

A sampler ``f(value, u)`` turns a query value and one uniform double ``u`` into a double.
Generators draw ``u`` from a grid of 2^53 points indexed by an integer ``k`` (numpy's
``Generator.random`` and ``random.random`` return k/2^53).  When ``f`` is monotone in ``k`` on
each declared piece of the grid, the set of k giving an output ``y`` is one run of consecutive
k per piece, found by binary search with about 53 evaluations: whether ``y`` is reachable from
a query value, and by how many of the 2^53 uniforms, is then decided exactly (Mironov 2012, "On
significance of the least significant bits for differential privacy", shows textbook Laplace
samplers reach outputs from one value that no uniform reaches from its neighbour).

Outputs are doubles told apart by their bits: -0.0 and 0.0 are two outputs (``math.copysign``,
``repr`` and division tell them apart, so a release can), ordered by IEEE 754 totalOrder (-0.0
before 0.0), and monotonicity is read in that order; NaN is refused.
Monotonicity is an assumption: every evaluation is kept, and :meth:`Sampler.check_monotone`
refuses a sampler whose evaluations contradict it, naming the k that show it.  Budgets are
counts (outputs walked, candidates tried); nothing here reads a clock.
"""
from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

from ...errors import SpecError

GRID = 2 ** 53
"""The number of uniform doubles a 53-bit generator draws from."""

_ULP = 2.0 ** -53
UNIFORMS: dict[str, Callable[[int], float]] = {
    "[0,1)": lambda k: k * _ULP,              # numpy Generator.random, random.random: k/2^53
    "(0,1]": lambda k: (k + 1) * _ULP,        # 1 - k/2^53 read backwards: (k+1)/2^53
    "(0,1)": lambda k: (k + 0.5) * _ULP,      # (k + 1/2)/2^53, k + 0.5 rounded to a double first
}
"""How the k-th grid point becomes the uniform double ``u`` (all exact except the rounding noted)."""


def where(fn: Callable[..., Any]) -> tuple[Optional[str], Optional[int]]:
    """The file and first line of a user function, for errors about it."""
    code = getattr(fn, "__code__", None) or getattr(getattr(fn, "func", None), "__code__", None)
    return (code.co_filename, code.co_firstlineno) if code is not None else (None, None)


def name_of(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__name__", None) or getattr(getattr(fn, "func", None), "__name__", None) or repr(fn)


def total(y: float) -> tuple[float, float]:
    """The IEEE 754 totalOrder key of a non-NaN double: -0.0 sorts before 0.0, otherwise the value's order."""
    return (float(y), math.copysign(1.0, y))


class Double(float):
    """A sampler's output: a double equal only to the same double, so that -0.0 and 0.0 are two
    outputs (as dict keys too).  Arithmetic, ``repr`` and ``hex`` are the float's own."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, float) and total(self) == total(other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(float(self))  # -0.0 and 0.0 share a hash and differ in __eq__


class NotMonotone(SpecError):
    """The sampler's evaluations contradict the declared monotonicity on a piece."""


@dataclass
class Branch:
    """f(value, .) on one piece [lo, hi) of the grid, with every evaluation kept."""

    sampler: "Sampler"
    value: float
    lo: int
    hi: int
    seen: dict[int, float] = field(default_factory=dict)
    sign: int = 1  # +1: non-decreasing in k; -1: non-increasing

    def __post_init__(self) -> None:
        self.sign = 1 if total(self.at(self.lo)) <= total(self.at(self.hi - 1)) else -1

    def at(self, k: int) -> float:
        if k not in self.seen:
            self.seen[k] = self.sampler.evaluate(self.value, k)
        return self.seen[k]

    def first(self, y: float, strict: bool) -> int:
        """The least k in [lo, hi) with sign*f(k) >= sign*y (> when ``strict``) in totalOrder; hi if none.
        Bisection."""
        target = total(self.sign * y)
        lo, hi = self.lo, self.hi
        while lo < hi:
            mid = (lo + hi) // 2
            v = total(self.sign * self.at(mid))
            if v > target or (not strict and v == target):
                hi = mid
            else:
                lo = mid + 1
        return lo

    def run(self, y: float) -> tuple[int, int]:
        """The k in [lo, hi) with f(k) == y, as a half-open run [a, b) (empty when a == b)."""
        a, b = self.first(y, False), self.first(y, True)
        if b > a and self.at(a) != y:
            raise self.violation()
        return a, b

    def confirm_first(self, y: float, strict: bool) -> int:
        """:meth:`first` by another route, on fresh evaluations: galloping from lo, bisection in the
        bracket, then a scan of the neighbouring grid points on both sides of the boundary."""
        target = total(self.sign * y)

        def past(k: int) -> bool:
            v = total(self.sign * self.sampler.evaluate(self.value, k))
            return v > target or (not strict and v == target)

        step, low = 1, self.lo
        while low + step - 1 < self.hi and not past(low + step - 1):
            low, step = low + step, step * 2
        high = min(low + step - 1, self.hi)  # past(high) holds, or high == hi
        while low < high:
            mid = low + (high - low) // 2
            low, high = (low, mid) if past(mid) else (mid + 1, high)
        for k in range(max(self.lo, low - 2), min(self.hi, low + 3)):
            if past(k) != (k >= low):
                raise self.violation(extra=k)
        return low

    def image(self, budget: int, into: dict[float, int]) -> bool:
        """Add every output of this piece with its number of k to ``into``; False past ``budget`` outputs."""
        k = self.lo
        while k < self.hi:
            y = self.at(k)
            end = self.first(y, True)
            if end <= k:
                raise self.violation()
            into[y] = into.get(y, 0) + end - k
            if len(into) > budget:
                return False
            k = end
        return True

    def violation(self, extra: Optional[int] = None) -> NotMonotone:
        """The error naming three k that contradict monotonicity (from the kept evaluations)."""
        if extra is not None:
            self.at(extra)
        points = sorted(self.seen.items())
        for (k1, y1), (k2, y2) in zip(points, points[1:]):
            if total(self.sign * y2) < total(self.sign * y1):
                return self._error(k1, y1, k2, y2)
        return self._error(self.lo, self.at(self.lo), self.hi - 1, self.at(self.hi - 1))

    def check_monotone(self) -> None:
        points = sorted(self.seen.items())
        for (k1, y1), (k2, y2) in zip(points, points[1:]):
            if total(self.sign * y2) < total(self.sign * y1):
                raise self._error(k1, y1, k2, y2)

    def _error(self, k1: int, y1: float, k2: int, y2: float) -> NotMonotone:
        way = "non-decreasing" if self.sign > 0 else "non-increasing"
        file, line = where(self.sampler.fn)
        return NotMonotone(
            f"the sampler {name_of(self.sampler.fn)} is not monotone in the uniform on the piece "
            f"[{self.lo}, {self.hi}) of the grid for the value {self.value!r}: it looks {way} from its ends, "
            f"but k={k1} gives {y1!r} and k={k2} gives {y2!r} (k indexes the grid {self.sampler.uniform} of uniforms)",
            "declare pieces on which it is monotone (pieces=[(lo, hi), ...] in grid indices), or use a "
            "sampler whose output is monotone in one uniform", file=file, line=line)


@dataclass
class Sampler:
    """A user's sampler f(value, u) over the grid points k of the declared pieces; counts evaluations."""

    fn: Callable[[float, float], Any]
    uniform: str
    pieces: tuple[tuple[int, int], ...]
    evaluations: int = 0
    branches: dict[float, list[Branch]] = field(default_factory=dict)

    @property
    def size(self) -> int:
        """How many grid points the uniform is drawn from (a k outside the pieces is re-drawn)."""
        return sum(hi - lo for lo, hi in self.pieces)

    def evaluate(self, value: float, k: int) -> float:
        self.evaluations += 1
        u = UNIFORMS[self.uniform](k)
        try:
            out = self.fn(value, u)
        except Exception as exc:
            file, line = where(self.fn)
            raise SpecError(f"the sampler {name_of(self.fn)}({value!r}, u) raised {type(exc).__name__}: {exc} "
                            f"at k={k}, u={u!r} ({u.hex()})",
                            "declare pieces that leave out the uniforms it cannot take (e.g. pieces=[(1, 2**53)] "
                            "when it rejects u = 0), or fix the sampler", file=file, line=line) from None
        try:
            y = float(out)
        except (TypeError, ValueError, OverflowError):
            file, line = where(self.fn)
            raise SpecError(f"the sampler {name_of(self.fn)} returned {out!r} (a {type(out).__name__}) at k={k}",
                            "return one number (a float or an int)", file=file, line=line) from None
        if math.isnan(y) or (isinstance(out, int) and abs(out) > GRID):
            file, line = where(self.fn)
            raise SpecError(f"the sampler {name_of(self.fn)} returned {out!r} at k={k}, u={u!r}",
                            "return a number that is not NaN (ints below 2^53 in size)", file=file, line=line)
        return Double(y)

    def of(self, value: float) -> list[Branch]:
        if value not in self.branches:
            self.branches[value] = [Branch(self, value, lo, hi) for lo, hi in self.pieces]
        return self.branches[value]

    def output(self, value: float, k: int) -> float:
        piece = next(b for b in self.of(value) if b.lo <= k < b.hi)
        return piece.at(k)

    def count(self, value: float, y: float) -> int:
        """How many grid points give exactly ``y`` from ``value`` (binary search on every piece)."""
        return sum(b - a for a, b in (branch.run(y) for branch in self.of(value)))

    def confirm_count(self, value: float, y: float) -> int:
        """:meth:`count` recomputed on fresh evaluations by galloping and scanning (an independent route)."""
        total = 0
        for branch in self.of(value):
            a, b = branch.confirm_first(y, False), branch.confirm_first(y, True)
            if b > a and self.evaluate(value, a) != y:
                raise branch.violation(extra=a)
            total += max(0, b - a)
        return total

    def image(self, value: float, budget: int) -> Optional[dict[float, int]]:
        """Every output from ``value`` with its number of grid points, or None above ``budget`` outputs."""
        out: dict[float, int] = {}
        for branch in self.of(value):
            if not branch.image(budget, out):
                return None
        return out

    def check_monotone(self) -> None:
        """Refuse the sampler if any kept evaluation contradicts monotonicity on its piece."""
        for branches in self.branches.values():
            for branch in branches:
                branch.check_monotone()


def candidates(pieces: tuple[tuple[int, int], ...], count: int, seed: int) -> list[int]:
    """A deterministic list of at most ``count`` grid indices: the ends of each piece, powers of two and
    their neighbours (from both ends of the grid), the centre, then seeded pseudo-random ones."""
    inside = [lambda k, lo=lo, hi=hi: lo <= k < hi for lo, hi in pieces]
    structured: list[int] = []
    for lo, hi in pieces:
        structured += list(range(lo, min(hi, lo + 8))) + list(range(max(lo, hi - 8), hi))
    for j in range(54):
        for base in (2 ** j, GRID - 2 ** j, GRID // 2 + 2 ** j, GRID // 2 - 2 ** j):
            structured += [base - 1, base, base + 1]
    out = list(dict.fromkeys(k for k in structured if any(test(k) for test in inside)))[:count]
    rng = random.Random(seed)
    size = sum(hi - lo for lo, hi in pieces)
    chosen = set(out)
    while len(out) < min(count, size):
        r = rng.randrange(size)
        for lo, hi in pieces:
            if r < hi - lo:
                k = lo + r
                break
            r -= hi - lo
        if k not in chosen:
            chosen.add(k)
            out.append(k)
    return out

