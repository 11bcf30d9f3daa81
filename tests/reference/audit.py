"""An independent evaluator of implementations drawing from an injected generator (tests only).

The oracle for the exact audit (``dp.implementation``), sharing no code with dpverify.  The
program runs unmodified, many times, with a stand-in generator whose ``random()`` returns a
*real float* ``k / 2^53`` (a :class:`Probe`, a float subclass): the program's own float
arithmetic and comparisons decide every branch.  A Probe only remembers which arithmetic
(shifts, scalings by constants) was applied to the draw and which constants the result was
compared with; from those the evaluator finds, by replaying the same float operations on
plain floats, the grid points k where a comparison's outcome can change (the least k with
``value(k) >= t`` and the least with ``value(k) > t``: affine float arithmetic is monotone in
k, so the sign of ``value(k) - t`` is constant between them).

The decision tree is enumerated path by path (:func:`law`): at a ``random()`` the grid
[0, 2^53) is cut at every such boundary seen on *any* path below (repeated until no new
boundary appears), the program is re-run with k fixed at the first point of each cell, and
the cell weighs (cell size) / 2^53.  ``integers(lo, hi)`` (and ``random.Random``'s
``_randbelow``) weigh each value alike; numpy's ``choice(a, p=p)`` weighs index i by
#{k : cdf[i-1] <= k/2^53 < cdf[i]} / 2^53, with the cdf built as numpy builds it
(``np.cumsum(p)``, then divided by its last element) and the count taken with Fractions.
For ``rng="random"`` the stand-in subclasses ``random.Random``, so ``uniform``, ``choices``
(``bisect`` over the cumulative weights), ``randrange`` and ``choice`` run CPython's own code.

Supported: the shapes the fuzzer generates (comparisons with numbers, ``+ - * /`` by
constants, ``int``/``math.floor``/``math.ceil``/``round`` of those).  Anything else on a
draw raises :class:`~tests.reference.shim.Unsupported`.
"""
from __future__ import annotations

import functools
import math
import random as _random
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from .shim import Unsupported

N = 2 ** 53
"""random() returns k / 2^53, k uniform in [0, 2^53), in numpy and in CPython."""
MAX_RUNS = 20_000
"""Programs needing more runs than this are beyond the reference (Unsupported)."""

APPLY: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda x, c: x + c, "radd": lambda x, c: c + x, "sub": lambda x, c: x - c,
    "rsub": lambda x, c: c - x, "mul": lambda x, c: x * c, "rmul": lambda x, c: c * x,
    "div": lambda x, c: x / c, "neg": lambda x, c: -x,
}


def value(ops: tuple, k: int) -> Any:
    """The program's float arithmetic ``ops`` replayed on plain floats from k / 2^53."""
    x = k / N  # exact: k < 2^53
    for op, c, _ in ops:
        x = APPLY[op](x, c)
    return x


def least(pred: Callable[[int], bool]) -> int:
    """The least k in [0, N] with pred(k) (pred false then true on [0, N)); N when none."""
    lo, hi = 0, N
    while lo < hi:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def boundaries(ops: tuple, t: Any, kind: type = float) -> frozenset[int]:
    """The grid points where the sign of ``value(k) - t`` may change (``kind``: t's type, kept in the key
    so that 0.5 and np.float32(0.5), equal but compared differently by numpy, stay apart)."""
    return _boundaries(ops, t, kind, N)  # N in the cache's key: tests shrink the grid


@functools.lru_cache(maxsize=4096)
def _boundaries(ops: tuple, t: Any, kind: type, grid: int) -> frozenset[int]:
    rising = value(ops, 0) <= value(ops, N - 1)
    if rising:
        return frozenset({least(lambda k: value(ops, k) >= t), least(lambda k: value(ops, k) > t)})
    return frozenset({least(lambda k: value(ops, k) <= t), least(lambda k: value(ops, k) < t)})


class Probe(float):
    """A draw's real value pushed through the program's arithmetic; it records every comparison."""

    __array_ufunc__ = None  # numpy scalars defer to the reflected methods below

    def __new__(cls, x: Any, draw: int, ops: tuple, seen: dict) -> "Probe":
        self = super().__new__(cls, x)
        self.actual, self.draw, self.ops, self.seen = x, draw, ops, seen  # actual: the program's value, numpy type kept
        return self

    def _then(self, op: str, c: Any) -> "Probe":
        if isinstance(c, Probe):
            raise Unsupported("arithmetic between two draws")
        if not isinstance(c, (int, float, Fraction, np.floating)) or (isinstance(c, (float, np.floating)) and not math.isfinite(c)):
            raise Unsupported(f"arithmetic with {c!r}")
        ops = self.ops + ((op, c, type(c)),)
        return Probe(APPLY[op](self.actual, c), self.draw, ops, self.seen)

    def _note(self, t: Any) -> float:
        if isinstance(t, Probe) or not isinstance(t, (int, float, Fraction, np.floating)) or isinstance(t, bool):
            raise Unsupported(f"a draw compared with {t!r}")
        self.seen.setdefault(self.draw, set()).add((self.ops, t, type(t)))
        return self.actual

    def __lt__(self, t: Any) -> bool:  # compared as the program's own float would be (numpy's rules included)
        return self._note(t) < t

    def __le__(self, t: Any) -> bool:
        return self._note(t) <= t

    def __gt__(self, t: Any) -> bool:
        return self._note(t) > t

    def __ge__(self, t: Any) -> bool:
        return self._note(t) >= t

    def __eq__(self, t: Any) -> bool:  # type: ignore[override]
        return self._note(t) == t

    def __ne__(self, t: Any) -> bool:  # type: ignore[override]
        return self._note(t) != t

    def _integer(self, to_int: Callable[[float], int]) -> int:
        ends = (value(self.ops, 0), value(self.ops, N - 1))
        lo, hi = math.floor(min(ends)), math.ceil(max(ends))
        if hi - lo > 16:
            raise Unsupported("an integer of a draw with too many values")
        for h in range(2 * lo, 2 * hi + 1):  # int, floor, ceil and round depend on x's place among halves
            self._note(Fraction(h, 2))
        return to_int(self.actual)

    def __int__(self) -> int:
        return self._integer(int)

    def __trunc__(self) -> int:
        return self._integer(math.trunc)

    def __floor__(self) -> int:
        return self._integer(math.floor)

    def __ceil__(self) -> int:
        return self._integer(math.ceil)

    def __round__(self, ndigits: Any = None) -> int:
        if ndigits is not None:
            raise Unsupported("round(u, ndigits)")
        return self._integer(round)

    def __add__(self, c: Any) -> "Probe":
        return self._then("add", c)

    def __radd__(self, c: Any) -> "Probe":
        return self._then("radd", c)

    def __sub__(self, c: Any) -> "Probe":
        return self._then("sub", c)

    def __rsub__(self, c: Any) -> "Probe":
        return self._then("rsub", c)

    def __mul__(self, c: Any) -> "Probe":
        return self._then("mul", c)

    def __rmul__(self, c: Any) -> "Probe":
        return self._then("rmul", c)

    def __truediv__(self, c: Any) -> "Probe":
        return self._then("div", c)

    def __neg__(self) -> "Probe":
        return self._then("neg", 0)

    def _unsupported(self, *args: Any) -> Any:
        raise Unsupported("a use of a draw the reference does not follow")

    __hash__ = __bool__ = __str__ = __repr__ = __format__ = __pow__ = __rpow__ = __mod__ = __rmod__ = _unsupported
    __floordiv__ = __rfloordiv__ = __rtruediv__ = __abs__ = __pos__ = __divmod__ = _unsupported


class NeedChoice(BaseException):
    """The run reached a draw its prefix does not fix: ``options`` [(choice, weight)], or None for random().
    A BaseException, so that a program's ``except Exception`` does not catch the reference's control flow."""

    def __init__(self, options: Any) -> None:
        self.options = options


class Run:
    """One run's draws: the fixed prefix of choices, then NeedChoice."""

    def __init__(self, prefix: tuple) -> None:
        self.prefix, self.at, self.seen = prefix, 0, {}

    def next(self, options: Any = None) -> Any:
        i = self.at
        self.at += 1
        if i < len(self.prefix):
            return self.prefix[i]
        raise NeedChoice(options)

    def uniform(self) -> Probe:
        draw = self.at
        return Probe(self.next() / N, draw, (), self.seen)


def numpy_choice_weights(p: Any) -> list[tuple[int, Fraction]]:
    """Index -> #{k : cdf[i-1] <= k/2^53 < cdf[i]} / 2^53, cdf as numpy's Generator.choice builds it."""
    cdf = np.cumsum(np.asarray(p, dtype=np.float64))
    cdf /= cdf[-1]
    out, below = [], 0
    for i, c in enumerate(cdf.tolist()):
        upto = min(N, max(0, math.ceil(Fraction(c) * N)))  # #{k : k/N < c}
        if upto > below:
            out.append((i, Fraction(upto - below, N)))
        below = max(below, upto)
    return out


class RefNumpy:
    """Stands for numpy.random.Generator: random, integers, choice, uniform (scalars only)."""

    def __init__(self, run: Run) -> None:
        self.run = run

    def random(self) -> Probe:
        return self.run.uniform()

    def integers(self, low: int, high: Any = None, endpoint: bool = False) -> np.int64:
        low, high = (0, low) if high is None else (low, high)
        high += bool(endpoint)
        return np.int64(self.run.next([(v, Fraction(1, high - low)) for v in range(low, high)]))

    def choice(self, a: Any, p: Any = None) -> Any:
        n = a if isinstance(a, int) else len(a)
        options = ([(i, Fraction(1, n)) for i in range(n)] if p is None else numpy_choice_weights(p))
        i = self.run.next(options)
        return np.int64(i) if isinstance(a, int) else np.asarray(a)[i]  # numpy scalars, as numpy returns

    def uniform(self, low: float = 0.0, high: float = 1.0) -> Probe:
        return low + (high - low) * self.random()  # numpy's random_uniform: lower + range * next_double


class RefRandom(_random.Random):
    """Stands for random.Random: CPython's own methods over an enumerated random() and _randbelow."""

    def __init__(self, run: Run) -> None:
        super().__init__(0)
        self.run = run

    def random(self) -> Probe:  # type: ignore[override]
        return self.run.uniform()

    def _randbelow(self, n: int) -> int:  # type: ignore[override]
        return self.run.next([(v, Fraction(1, n)) for v in range(n)])


def plain(v: Any) -> Any:
    if isinstance(v, Probe):
        raise Unsupported("a draw in the output")
    if isinstance(v, np.ndarray):
        return plain(v.tolist())
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (list, tuple)):
        return tuple(plain(x) for x in v)
    return v


def law(fn: Callable[..., Any], data: tuple, rng: str = "numpy", **params: Any) -> dict[Any, Fraction]:
    """The exact output law of ``fn(data, **params, rng=<generator>)``."""
    make = RefNumpy if rng == "numpy" else RefRandom
    memo: dict[tuple, tuple[dict, dict]] = {}

    def explore(prefix: tuple) -> tuple[dict, dict]:
        if prefix not in memo:
            if len(memo) > MAX_RUNS:
                raise Unsupported(f"more than {MAX_RUNS} runs")
            run = Run(prefix)
            try:
                memo[prefix] = ({plain(fn(data, **params, rng=make(run))): Fraction(1)}, run.seen)
            except NeedChoice as need:
                memo[prefix] = branch(prefix, need.options)
        return memo[prefix]

    def branch(prefix: tuple, options: Any) -> tuple[dict, dict]:
        j = len(prefix)
        if options is None:  # random(): cut the grid until no path below sees a new boundary
            cuts = {0, N}
            while True:
                points = sorted(cuts)
                options = [(lo, Fraction(hi - lo, N)) for lo, hi in zip(points, points[1:])]
                new = {b for lo, _ in options for key in explore(prefix + (lo,))[1].get(j, ()) for b in boundaries(*key)}
                if new <= cuts:
                    break
                cuts |= new
        out: dict = {}
        seen: dict = {}
        for choice, weight in options:
            sublaw, subseen = explore(prefix + (choice,))
            for o, p in sublaw.items():
                out[o] = out.get(o, 0) + weight * p
            for d, keys in subseen.items():
                if d < j:
                    seen.setdefault(d, set()).update(keys)
        return out, seen

    result = explore(())[0]
    assert sum(result.values()) == 1
    return {o: p for o, p in result.items() if p}
