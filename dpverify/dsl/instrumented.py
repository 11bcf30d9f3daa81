"""A uniform draw of an instrumented generator: a handle the engine follows exactly, never a sample.

numpy's ``Generator.random()`` is ``next_double``: ``(next_uint64 >> 11) * (1.0 / 9007199254740992.0)``
(numpy/random/src/distributions/distributions.c, ``random_standard_uniform`` and the bit
generators' ``next_double``), and CPython's ``random.Random.random()`` is ``genrand_res53``:
``(a * 67108864.0 + b) * (1.0 / 9007199254740992.0)`` (Modules/_randommodule.c).  Both return
k / 2^53 for k uniform in [0, 2^53): a uniform draw is one of these 2^53 grid points, each
with probability 2^-53, and the exact law of anything the program does with it is a count of
grid points.

A :class:`Uniform` knows the set of grid points it may still be (a union of intervals of k,
narrowed by every comparison the program made) and the floating-point function of k the
program computed from it, kept only while that function is monotone in k: shifts and
scalings by constants (``a + (b - a) * u``, ``u * total``), computed with the program's own
float arithmetic.  Then

* ``u < p`` (``<=``, ``>``, ``>=``, ``==``, ``!=``; p an int, float, Fraction or sympy number,
  a float meaning its exact binary value) becomes one ``dp.bernoulli`` with the exact
  probability #{k still possible : f(k) < p} / #{k still possible}; the boundary of that
  set is found by integer binary search on the program's own float arithmetic;
* ``int(u * n)``, ``math.floor``, ``math.ceil``, ``round`` become one ``dp.categorical``
  over the values they take, each with its exact count of grid points;
* either side may hold the draw: ``p > u`` is ``u < p`` (Python reflects the comparison for
  ints, floats, Fractions and sympy numbers, numpy through ``__array_ufunc__``);
* ``u <= a`` against a numpy array ``a`` (diffprivlib's exponential mechanism: ``rand <=
  cumulative_probabilities``) is elementwise: one exact comparison per element in order, each
  narrowing the draw, returned as a bool array (``np.any``/``np.argmax`` then read it).

Anything else (``math.log(u)``, ``np.log(u)``, ``np.cos(np.pi * u)``, ``float(u)``, ``u * v``,
``np.searchsorted(cdf, u)``) cannot be followed exactly: it is refused with a SpecError naming the
program's file and line.
"""
from __future__ import annotations

import abc
import math
import os
import sys
import sysconfig
from collections.abc import Callable
from fractions import Fraction
from typing import Any, Optional

import numpy as np
import sympy

from ..errors import CannotFollow, SpecError
from . import primitives

GRID = 2 ** 53
"""The number of values ``random()`` can return: k / 2^53 for k in [0, 2^53)."""
MAX_VALUES = 4096
"""``int(f(u))`` taking more distinct values than this is refused (it would be one huge draw)."""

_OWN = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_LIBRARIES = tuple(sorted({os.path.abspath(p) + os.sep for key in ("purelib", "platlib", "stdlib", "platstdlib")
                           if (p := sysconfig.get_paths().get(key))}))
LATER = ("with dp.implementation(..., fallback=True), the default, such code's claims are decided by the "
         "statistical audit instead (the code sampled with a real seeded generator: consistent or refuted at "
         "a stated error probability, never verified); fallback=False keeps this refusal as an error")


def user_site() -> tuple[Optional[str], Optional[int]]:
    """(file, line) of the innermost frame of the audited program (outside dpverify and libraries)."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith("<") and not os.path.abspath(name).startswith((_OWN, *_LIBRARIES)):
            return name, frame.f_lineno
        frame = frame.f_back
    return None, None


def refuse(problem: str, fix: str, error: type[SpecError] = SpecError) -> SpecError:
    """A SpecError located at the audited program's line (``error=CannotFollow``: a limit of the exact
    audit, not a mistake, so that the claim falls back to the statistical audit)."""
    file, line = user_site()
    return error(problem, fix, file=file, line=line)


def cannot_follow(what: str) -> SpecError:
    return refuse(f"the exact audit cannot follow arithmetic on a uniform draw: {what}; dpverify follows "
                  "comparisons (u < p), shifts and scalings by constants (a + b * u) and int/floor/round of "
                  "those, so this implementation cannot be decided exactly",
                  f"compare the draw with a threshold (rng.random() < p), or draw with rng.integers / "
                  f"rng.choice(..., p=...); {LATER}", CannotFollow)


def grid_count(p: Any, grid: int = GRID) -> int:
    """#{k in [0, grid) : k / grid < p}, exactly (a float p is its exact binary value); grid = 2^53
    for ``random()`` (smaller grids are for tests against brute force).

    >>> grid_count(0.5) == 2 ** 52, grid_count(0), grid_count(1) == GRID
    (True, 0, True)
    """
    value = exact_threshold(p)
    if isinstance(value, Fraction):
        scaled = value * grid
        count = -((-scaled.numerator) // scaled.denominator)  # ceil
    elif isinstance(value, float):  # +-inf
        count = grid if value > 0 else 0
    else:
        count = _first(0, grid, lambda k: not _less(Fraction(k, grid), value))
    return min(grid, max(0, count))


def exact_threshold(p: Any) -> Any:
    """A constant the program compares a draw with, as a Fraction or an exact sympy number."""
    if isinstance(p, (bool, np.bool_)):
        return Fraction(int(p))
    if isinstance(p, np.generic):
        p = p.item()
    if isinstance(p, int):
        return Fraction(p)
    if isinstance(p, float):
        if not math.isfinite(p):
            return p  # inf compares as itself; nan makes every comparison false
        return Fraction(p)
    if isinstance(p, Fraction):
        return p
    if isinstance(p, sympy.Basic) and p.is_number:
        if isinstance(p, sympy.Float):
            return Fraction(sympy.Rational(p).p, sympy.Rational(p).q)
        if isinstance(p, sympy.Rational):
            return Fraction(int(p.p), int(p.q))
        if p.is_real is not True or p.is_finite is not True:
            raise refuse(f"a uniform draw is compared with {p}, which is not a finite real number",
                         "compare draws with finite real thresholds")
        return p
    if isinstance(p, Uniform):
        raise cannot_follow("two uniform draws (or two values computed from draws) are compared")
    if type(p).__name__ == "Parameter":
        p > 0  # the symbolic reading's parameter refuses here (ParameterBranch), as everywhere in the DSL
    raise refuse(f"a uniform draw is compared with {p!r} (a {type(p).__name__}), which is not a number",
                 "compare draws with ints, floats, Fractions or sympy numbers")


def _less(x: Any, c: Any) -> bool:
    """x < c for a float or Fraction x and an exact threshold c (sympy numbers decided exactly)."""
    if isinstance(c, sympy.Basic):
        verdict = sympy.Rational(Fraction(x).numerator, Fraction(x).denominator) < c
        if verdict not in (sympy.true, sympy.false):
            raise refuse(f"cannot decide whether {x!r} < {c}", "compare draws with rational thresholds", CannotFollow)
        return bool(verdict)
    return x < c


def _compare(op: str, x: Any, c: Any) -> bool:
    if isinstance(x, np.generic):
        x = x.item()  # compared as a Python number: exactly, never through numpy's conversions
    if any(isinstance(v, float) and math.isnan(v) for v in (x, c)):
        return op == "!="  # a nan threshold too: u >= nan and u <= nan are False, not the negations of < and >
    if op == "<":
        return _less(x, c)
    if op == ">=":
        return not _less(x, c)
    if op == ">":
        return _less(c, x) if not isinstance(c, sympy.Basic) else not (_less(x, c) or _equal(x, c))
    if op == "<=":
        return not _compare(">", x, c)
    return _equal(x, c) == (op == "==")


def _equal(x: Any, c: Any) -> bool:
    if isinstance(c, sympy.Basic):
        return False  # an irrational constant (rational ones are Fractions) equals no float
    return x == c


def _promoted(f: Callable[[int], Any], x0: Any, other: Any) -> tuple[Callable[[int], Any], Any]:
    """numpy compares a numpy scalar with a number in their common dtype (NEP 50: a Python float against
    np.float32 in float32): both sides rounded to that dtype (a monotone rounding), then compared exactly."""
    kind = np.result_type(x0, other).type
    return (lambda k: kind(f(k)).item()), exact_threshold(kind(other))


def _first(lo: int, hi: int, pred: Callable[[int], bool]) -> int:
    """The least k in [lo, hi) with pred(k), pred false then true on [lo, hi); hi when none."""
    while lo < hi:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


class Draw:
    """One call of ``random()``: the intervals of k it may still be, narrowed by what the program learnt."""

    __slots__ = ("pieces",)

    def __init__(self) -> None:
        self.pieces: list[tuple[int, int]] = [(0, GRID)]

    def total(self) -> int:
        return sum(hi - lo for lo, hi in self.pieces)


def _region(lo: int, hi: int, f: Callable[[int], Any], rising: bool, op: str, c: Any) -> tuple[int, int]:
    """The interval of k in [lo, hi) where ``f(k) op c`` holds, f monotone (``rising`` or falling).

    ``<`` and ``<=`` hold on a prefix of a rising f, ``==`` on a middle interval; ``!=`` is
    handled by the caller as the complement of ``==``.
    """
    if op == "==":
        start = _region(lo, hi, f, rising, ">=", c)
        end = _region(lo, hi, f, rising, "<=", c)
        a, b = max(start[0], end[0]), min(start[1], end[1])
        return (a, b) if a < b else (lo, lo)
    below = op in ("<", "<=")
    if below == rising:  # a prefix
        return lo, _first(lo, hi, lambda k: not _compare(op, f(k), c))
    return _first(lo, hi, lambda k: _compare(op, f(k), c)), hi


_COMPARISON_UFUNCS = {"less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">=", "equal": "==",
                      "not_equal": "!="}
_REFLECTING = frozenset(method.__code__ for name in ("_richcmp", "__eq__", "__add__", "__pow__")
                        if hasattr(method := getattr(Fraction, name, None), "__code__"))
"""Library code asking a draw's type only to hand the operation over to the draw, so that Python
reflects ``Fraction(2, 3) > u`` into ``u < Fraction(2, 3)`` and ``Fraction(1, 4) + u`` into
``u.__radd__`` (``Fraction.__add__``'s code is that of every arithmetic operator of Fraction;
``Fraction ** u`` becomes ``float ** u``, refused by ``u.__rpow__``): it is told the truth.  These are
internals of CPython's fractions module: should they change, such code is refused, never misread."""
_INSTANCECHECK = abc.ABCMeta.__instancecheck__.__code__
_NUMPY_METHODS = frozenset(f.__name__ for f in vars(np).values() if isinstance(f, np.ufunc) and f.nin == 1)
"""Unary numpy ufuncs: on an object array numpy calls each element's method of that name."""


class Uniform:
    """``f(u)`` for a uniform draw u of an instrumented generator, f monotone (see the module)."""

    __slots__ = ("_draw", "_f", "_rising")
    __array_priority__ = 1000
    __sympy__ = False  # sympify(u, strict=True) fails, so sympy's comparisons return NotImplemented and reflect

    def __init__(self, draw: Optional[Draw] = None, f: Optional[Callable[[int], Any]] = None,
                 rising: Optional[bool] = True) -> None:
        self._draw = draw if draw is not None else Draw()
        self._f = f if f is not None else (lambda k: k / GRID)
        self._rising = rising  # None: f is constant

    # -- comparisons -------------------------------------------------------------------------
    def _decide(self, op: str, other: Any) -> Any:
        if type(other) is np.ndarray and other.ndim:
            return self._elementwise(op, other)
        c = exact_threshold(other)
        f, rising = self._f, self._rising if self._rising is not None else True
        x0 = f(self._draw.pieces[0][0])
        if isinstance(other, np.generic) or (isinstance(x0, np.generic) and isinstance(other, (int, float))):
            f, c = _promoted(f, x0, other)
        held, missed = [], []
        for lo, hi in self._draw.pieces:
            a, b = _region(lo, hi, f, rising, "==" if op == "!=" else op, c)
            inside = [(a, b)] if a < b else []
            outside = [(x, y) for x, y in ((lo, a), (b, hi)) if x < y] if a < b else [(lo, hi)]
            if op == "!=":
                inside, outside = outside, inside
            held += inside
            missed += outside
        count = sum(y - x for x, y in held)
        total = self._draw.total()
        if count in (0, total):
            return count == total
        outcome = primitives.bernoulli(Fraction(count, total))
        self._draw.pieces = held if outcome else missed
        return outcome

    def _elementwise(self, op: str, array: np.ndarray) -> np.ndarray:
        """``u op array`` as numpy computes it: a bool array, element by element in order, each an
        exact comparison of the same draw (which narrows it, so later ones are mostly decided)."""
        return np.array([self._decide(op, x) for x in array.flat], dtype=bool).reshape(array.shape)

    def __lt__(self, other: Any) -> bool:
        return self._decide("<", other)

    def __le__(self, other: Any) -> bool:
        return self._decide("<=", other)

    def __gt__(self, other: Any) -> bool:
        return self._decide(">", other)

    def __ge__(self, other: Any) -> bool:
        return self._decide(">=", other)

    def __eq__(self, other: Any) -> bool:  # type: ignore[override]
        return self._decide("==", other)

    def __ne__(self, other: Any) -> bool:  # type: ignore[override]
        return self._decide("!=", other)

    # -- monotone arithmetic ----------------------------------------------------------------
    def _then(self, g: Callable[[Any], Any], keeps: Optional[bool]) -> "Uniform":
        """f followed by g, g rising (keeps=True), falling (False) or constant (None)."""
        f = self._f
        rising = None if keeps is None or self._rising is None else (self._rising == keeps)
        return Uniform(self._draw, lambda k: g(f(k)), rising)

    def __add__(self, other: Any) -> "Uniform":
        c = _constant(other, "u + v")
        return self._then(lambda x: x + c, True)

    def __radd__(self, other: Any) -> "Uniform":
        c = _constant(other, "v + u")
        return self._then(lambda x: c + x, True)

    def __sub__(self, other: Any) -> "Uniform":
        c = _constant(other, "u - v")
        return self._then(lambda x: x - c, True)

    def __rsub__(self, other: Any) -> "Uniform":
        c = _constant(other, "v - u")
        return self._then(lambda x: c - x, False)

    def __mul__(self, other: Any) -> "Uniform":
        c = _constant(other, "u * v")
        return self._then(lambda x: x * c, None if c == 0 else c > 0)

    def __rmul__(self, other: Any) -> "Uniform":
        c = _constant(other, "v * u")
        return self._then(lambda x: c * x, None if c == 0 else c > 0)

    def __truediv__(self, other: Any) -> "Uniform":
        c = _constant(other, "u / v")
        if c == 0:
            raise ZeroDivisionError("float division by zero")
        return self._then(lambda x: x / c, c > 0)

    def __neg__(self) -> "Uniform":
        return self._then(lambda x: -x, False)

    def __pos__(self) -> "Uniform":
        return self

    def __rtruediv__(self, other: Any) -> Any:
        raise cannot_follow("a constant divided by a uniform draw (c / u)")

    # -- to an integer: one categorical draw -------------------------------------------------
    def _integer(self, g: Callable[[Any], int], name: str) -> int:
        f, rising = self._f, self._rising if self._rising is not None else True
        ranges: dict[int, list[tuple[int, int]]] = {}
        for lo, hi in self._draw.pieces:
            k = lo
            while k < hi:
                v = g(f(k))
                end = _first(k, hi, (lambda j, v=v: g(f(j)) > v) if rising else (lambda j, v=v: g(f(j)) < v))
                ranges.setdefault(v, []).append((k, end))
                if len(ranges) > MAX_VALUES:
                    raise refuse(f"{name} of a uniform draw takes more than {MAX_VALUES:,} values",
                                 "draw the integer with rng.integers(low, high) instead", CannotFollow)
                k = end
        total = self._draw.total()
        law = {v: Fraction(sum(b - a for a, b in rs), total) for v, rs in ranges.items()}
        value = next(iter(law)) if len(law) == 1 else primitives.categorical(law)
        self._draw.pieces = ranges[value]
        return value

    def __int__(self) -> int:
        return self._integer(int, "int()")

    def __trunc__(self) -> int:
        return self._integer(math.trunc, "math.trunc()")

    def __floor__(self) -> int:
        return self._integer(math.floor, "math.floor()")

    def __ceil__(self) -> int:
        return self._integer(math.ceil, "math.ceil()")

    def __round__(self, ndigits: Optional[int] = None) -> Any:
        if ndigits is not None:
            raise cannot_follow(f"round(u, {ndigits})")
        return self._integer(round, "round()")

    # -- what cannot be followed --------------------------------------------------------------
    def __float__(self) -> float:
        raise cannot_follow("its float value is asked for (float(u), math.log(u), math.exp(u), a numpy "
                            "function or array of floats...)")

    def __index__(self) -> int:
        raise cannot_follow("it is used as an index")

    def __bool__(self) -> bool:
        raise cannot_follow("its truth value is asked for")

    def __hash__(self) -> int:
        raise cannot_follow("it is hashed (a set member, a dict key or part of the output)")

    def __abs__(self) -> Any:
        raise cannot_follow("abs(u)")

    def __pow__(self, other: Any) -> Any:
        raise cannot_follow("a power of it (u ** c)")

    def __rpow__(self, other: Any) -> Any:
        raise cannot_follow("a power with it as the exponent (c ** u)")

    def __mod__(self, other: Any) -> Any:
        raise cannot_follow("u % c")

    def __floordiv__(self, other: Any) -> Any:
        raise cannot_follow("u // c (write math.floor(u / c))")

    def __format__(self, spec: str) -> str:
        raise cannot_follow("it is formatted as text")

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """numpy scalars and arrays meeting a draw: the operators above, anything else refused."""
        operators = {"add": "__add__", "subtract": "__sub__", "multiply": "__mul__", "true_divide": "__truediv__",
                     "less": "__lt__", "less_equal": "__le__", "greater": "__gt__", "greater_equal": "__ge__",
                     "equal": "__eq__", "not_equal": "__ne__"}
        if method == "__call__" and not kwargs and len(inputs) == 2 and ufunc.__name__ in operators:
            # numpy hands a scalar operand (np.float64(0.3) < u) over as a 0-d array: its scalar again
            left, right = (x[()] if type(x) is np.ndarray and x.ndim == 0 else x for x in inputs)
            if ufunc.__name__ in _COMPARISON_UFUNCS and type(left) is np.ndarray and isinstance(right, Uniform):
                return right._elementwise(_FLIP[_COMPARISON_UFUNCS[ufunc.__name__]], left)
            if ufunc.__name__ in _COMPARISON_UFUNCS and isinstance(left, Uniform) and type(right) is np.ndarray:
                return left._elementwise(_COMPARISON_UFUNCS[ufunc.__name__], right)
            if isinstance(left, Uniform) and not isinstance(right, Uniform) and np.ndim(right) == 0:
                return getattr(left, operators[ufunc.__name__])(right)
            if isinstance(right, Uniform) and not isinstance(left, Uniform) and np.ndim(left) == 0:
                name = ufunc.__name__
                if name in ("less", "less_equal", "greater", "greater_equal"):
                    flipped = {"less": "__gt__", "less_equal": "__ge__", "greater": "__lt__",
                               "greater_equal": "__le__"}[name]
                    return getattr(right, flipped)(left)
                return getattr(right, {"add": "__radd__", "subtract": "__rsub__", "multiply": "__rmul__",
                                       "true_divide": "__rtruediv__", "equal": "__eq__",
                                       "not_equal": "__ne__"}[name])(left)
        if method == "__call__" and len(inputs) == 1 and ufunc.__name__ == "negative":
            return -inputs[0]
        raise cannot_follow(f"numpy.{ufunc.__name__} is applied to it")

    def __getattr__(self, name: str) -> Any:
        """numpy applies a ufunc to an object array (``np.log(rng.random(size=3))``) by calling the
        element's method of the ufunc's name: refused like the ufunc on the draw itself."""
        if name not in _NUMPY_METHODS:
            raise AttributeError(name)

        def refused() -> Any:  # numpy would turn an error while looking the method up into a TypeError
            raise cannot_follow(f"numpy.{name} is applied to it (in an array)")
        return refused

    def __str__(self) -> str:
        raise cannot_follow("it is turned into text (str(u))")

    def __repr__(self) -> str:  # the program would see a float's digits: never a stand-in's text
        raise cannot_follow("it is turned into text (repr(u))")

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        """isinstance(u, float) is True for the real draw and would be False here: a program asking
        for the type of a draw is refused rather than sent down another branch (except Fraction's
        comparisons, which only decide to reflect: see ``_REFLECTING``)."""
        caller = sys._getframe(1)
        if caller.f_code is _INSTANCECHECK and caller.f_back is not None:
            caller = caller.f_back  # isinstance(u, numbers.Rational) goes through ABCMeta.__instancecheck__
        if caller.f_code in _REFLECTING:
            return Uniform
        raise cannot_follow("its type is asked for (isinstance(u, ...))")

    def describe(self) -> str:
        """For dpverify's own messages (never seen by the program)."""
        return f"<uniform draw, {self._draw.total()} of 2^53 grid points possible>"


def _constant(value: Any, what: str) -> Any:
    """A constant the program shifts or scales a draw by, as the program's own arithmetic sees it.

    A sympy number (an exact parameter) becomes the float nearest it, as deployed code
    receives its parameters as floats; ints, floats, Fractions and numpy scalars are kept.
    """
    if isinstance(value, Uniform):
        raise cannot_follow(f"{what} with both operands computed from uniform draws")
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, float, Fraction, np.integer, np.floating)):
        if isinstance(value, (float, np.floating)) and not math.isfinite(value):
            raise cannot_follow(f"{what} with the non-finite constant {value!r}")
        return value
    if isinstance(value, sympy.Basic) and value.is_number and value.is_real:
        return float(value)
    if type(value).__name__ == "Parameter":
        float(value)  # the symbolic reading's parameter refuses here (ParameterBranch)
    raise cannot_follow(f"{what} with {value!r} (a {type(value).__name__})")


__all__ = ["GRID", "Draw", "Uniform", "cannot_follow", "exact_threshold", "grid_count", "refuse", "user_site"]
