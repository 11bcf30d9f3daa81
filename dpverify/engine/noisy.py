"""The values and weights of continuous noise: noisy values, noise laws, densities.

A mechanism sees :class:`Noisy` values (q + noise, a handle, never a sample) and
:class:`NoisyLinear` sums of them; the engine (:mod:`.noise`) turns the
comparisons they take part in into branches and constraints.  A run that
returns noisy values weighs its output with a :class:`Density`, a sum over
paths of constant * prod_k factor_k(v_k), one :class:`Factor` per released value.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional, Protocol

import sympy

from ..dsl.exact import exact_float
from ..errors import CannotFollow, DpverifyError, SpecError
from . import piecewise as pw
from .parameter import Parameter

Interval = tuple  # (lo, hi), None for an unbounded side; an open interval of the real line

FULL: Interval = (None, None)


class NeedsExactParameters(DpverifyError):
    """A noise primitive got a parameter as an interval: rerun the program with exact parameters."""


def exact(value: Any, what: str, fn: str) -> Any:
    """An exact rational as a Fraction; a symbolic or irrational sympy number as itself.

    Interval numbers (the certified reading's parameters) cannot say which
    rational they are, so they ask for a rerun with exact parameters.
    """
    if type(value) is Parameter:  # the symbolic reading's parameter: its expression
        return value.expr
    if isinstance(value, bool):
        raise SpecError(f"{fn}: {what}={value!r} is a bool", f"pass a number as {what}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, Fraction):
        return value
    if isinstance(value, float):
        return exact_float(value)
    if isinstance(value, sympy.Float):  # an inexact number, from arithmetic with interval parameters
        raise NeedsExactParameters()
    if isinstance(value, sympy.Basic):
        return Fraction(int(value.p), int(value.q)) if isinstance(value, sympy.Rational) else value
    if isinstance(value, Noisy):
        raise SpecError(f"{fn}: {what} is itself a noisy value", "noise is added to exact query answers only")
    if type(value).__name__ in ("ivmpf", "mpf"):
        raise NeedsExactParameters()
    raise SpecError(f"{fn}: {what}={value!r} is not a number", f"pass an exact number as {what}")


@dataclass(frozen=True)
class Noise:
    """A noise variable's law: its value x = centre + Z, Z ~ Laplace(scale), Exp(scale) or N(0, scale^2)."""

    kind: str
    centre: Any
    scale: Any
    site: Optional[tuple] = field(default=None, compare=False, hash=False, repr=False)  # (file, line) of the call

    @property
    def rational(self) -> bool:
        return isinstance(self.centre, Fraction) and isinstance(self.scale, Fraction)

    def support(self) -> Interval:
        return (self.centre, None) if self.kind == "exponential" else FULL

    def density(self, backend: Any) -> pw.Piecewise:
        """The density of x as a piecewise exponential (Laplace and exponential noise)."""
        mu, b = self.centre, self.scale
        rate = 1 / b
        if self.kind == "laplace":
            c = backend.num(1 / (2 * b))
            return pw.Piecewise((mu,), ({(rate, 0): c * backend.exp(-mu * rate)},
                                        {(-rate, 0): c * backend.exp(mu * rate)}))
        if self.kind == "exponential":
            return pw.Piecewise((mu,), ({}, {(-rate, 0): backend.num(rate) * backend.exp(mu * rate)}))
        raise AssertionError(self.kind)

    def describe(self) -> str:
        name = {"laplace": "Lap", "exponential": "Exp", "gaussian": "N"}[self.kind]
        return f"{self.centre} + {name}({self.scale})"


@dataclass(frozen=True)
class Released:
    """Marks, in an output skeleton, the k-th noisy value a mechanism returned."""

    index: int

    def __repr__(self) -> str:
        return f"v{self.index}"


@dataclass(frozen=True)
class Factor:
    """The density of one released value v = x + offset jointly with the path's event.

    ``function``: a piecewise exponential in v (Laplace/exponential noise);
    ``mix``: set when released values are sums of noise variables -- then the factor is the
    density of one coordinate w_k of w = A^-1 y (a bijection that does not depend on the data,
    so density ratios are the same in y and in w);
    ``noise``/``interval``: the single variable's law and the interval it was
    restricted to, when the component has no other variable (the symbolic
    reading uses these); ``joint``: the value's component holds another
    released value, so it has no one-dimensional density (unsupported).
    """

    noise: Optional[Noise]
    offset: Any
    interval: Interval
    function: Optional[pw.Piecewise] = None
    joint: bool = False
    mix: Optional[tuple] = None  # (slots, A): released sums y = A w of independent values w (see _linear)


@dataclass
class Density:
    """A weight that is a density: sum over paths of constant * prod_k factor_k(v_k)."""

    terms: list = field(default_factory=list)  # [(constant, (Factor, ...))]

    def __add__(self, other: "Density") -> "Density":
        return Density(self.terms + other.terms)

    def mass(self, backend: Any) -> Any:
        """The total probability of the output, or None when a factor has no one-dimensional density."""
        total = backend.num(0)
        for constant, factors in self.terms:
            for factor in factors:
                if factor.joint:
                    return None
                if factor.function is not None:
                    constant = constant * pw.integral(factor.function, backend)
                elif factor.interval != FULL:
                    return None
            total = total + constant
        return total

    def symbolic_key(self) -> Any:
        """A hashable key for exact (sympy) weights, whose factors carry no functions."""
        return tuple((c, tuple((f.noise, f.offset, f.interval, f.joint, f.mix) for f in factors))
                     for c, factors in self.terms)

    def key(self, backend: Any) -> Any:
        return self._key(backend, backend.key)

    def exact_key(self, backend: Any) -> Optional[Any]:
        """A key equal only for exactly equal densities (every coefficient pinned down by the reading),
        or None."""
        try:
            return self._key(backend, _pinned(backend))
        except _NotPinned:
            return None

    def _key(self, backend: Any, key: Any) -> Any:
        return tuple((key(c), tuple((f.noise, f.offset, f.interval, f.joint, f.mix,
                                     _pw_key(f.function, key)) for f in factors))
                     for c, factors in self.terms)


class _NotPinned(Exception):
    """A coefficient the reading does not pin down (an enclosure that is not a point)."""


def _pinned(backend: Any) -> Any:
    def key(value: Any) -> Any:
        found = backend.exact_key(value)
        if found is None:
            raise _NotPinned
        return found
    return key


def _pw_key(f: Optional[pw.Piecewise], key: Any) -> Any:
    if f is None:
        return None
    return (f.cuts, tuple(tuple(sorted((k, key(v)) for k, v in piece.items())) for piece in f.pieces))


class State(Protocol):
    """What a noisy value asks of its run's noise state (:class:`.noise.NoiseState`, which imports this
    module): the laws of its variables, and a comparison taken as a branch."""

    variables: list

    def compare(self, a: "Noisy", b: Any, greater: bool) -> bool:
        """Whether a > b (greater) or a < b, as a branch of the enumeration."""


class Noisy:
    """x + offset for the noise variable x of index ``var`` in the current run."""

    __slots__ = ("state", "var", "offset")

    def __init__(self, state: State, var: int, offset: Any) -> None:
        self.state, self.var, self.offset = state, var, offset

    def __add__(self, other: Any) -> Any:
        if isinstance(other, (Noisy, NoisyLinear)):
            return NoisyLinear.of(self) + other
        return Noisy(self.state, self.var, self.offset + self._constant(other, "+"))

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        if isinstance(other, (Noisy, NoisyLinear)):
            return NoisyLinear.of(self) - other
        return Noisy(self.state, self.var, self.offset - self._constant(other, "-"))

    def _constant(self, other: Any, op: str) -> Any:
        value = exact(other, "the constant", f"noisy value {op}")
        if not isinstance(value, Fraction):
            raise CannotFollow(f"noisy value {op} {other!r}: the constant must be an exact rational",
                            "shift noisy values by exact rationals only")
        return value

    def _unsupported(self, *_: Any) -> Any:
        raise CannotFollow("this arithmetic on a noisy value is not supported (only + and - of exact constants, "
                        "and comparisons)",
                        "release the noisy value itself, or compare it; scale the exact answer before adding "
                        "noise instead of scaling the noisy value")

    __mul__ = __rmul__ = __truediv__ = __rtruediv__ = __neg__ = __abs__ = __rsub__ = _unsupported
    __float__ = __int__ = __round__ = __floor__ = __ceil__ = _unsupported

    def __bool__(self) -> bool:
        raise CannotFollow("a noisy value was used as a truth value", "compare it with something: `if x > t:`")

    def __gt__(self, other: Any) -> bool:
        return self.state.compare(self, other, greater=True)

    __ge__ = __gt__  # ties have probability zero

    def __lt__(self, other: Any) -> bool:
        return self.state.compare(self, other, greater=False)

    __le__ = __lt__

    def __eq__(self, other: Any) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        noise = self.state.variables[self.var]
        return f"noisy({noise.describe()}{f' + {self.offset}' if self.offset else ''})"


class NoisyLinear:
    """sum_k c_k x_k + offset over noise variables x_k: a sum of noisy values (a running sum, a prefix
    sum).  It may be shifted, added to and released, not compared: its density is exact when the
    released sums are an invertible linear map of uncompared Laplace values."""

    __slots__ = ("state", "coefficients", "offset")

    def __init__(self, state: State, coefficients: dict, offset: Any) -> None:
        self.state, self.coefficients, self.offset = state, coefficients, offset

    @staticmethod
    def of(value: Any) -> "NoisyLinear":
        if isinstance(value, NoisyLinear):
            return value
        return NoisyLinear(value.state, {value.var: Fraction(1)}, value.offset)

    def _combine(self, other: Any, sign: int) -> "NoisyLinear":
        if isinstance(other, (Noisy, NoisyLinear)):
            other = NoisyLinear.of(other)
            if other.state is not self.state:
                raise SpecError("noisy values of different runs were added", "add noisy values of one run only")
            coefficients = dict(self.coefficients)
            for var, c in other.coefficients.items():
                coefficients[var] = coefficients.get(var, 0) + sign * c
            return NoisyLinear(self.state, {v: c for v, c in coefficients.items() if c}, self.offset + sign * other.offset)
        value = exact(other, "the constant", "sum of noisy values")
        if not isinstance(value, Fraction):
            raise CannotFollow(f"a sum of noisy values shifted by {other!r}: the constant must be an exact rational",
                            "shift noisy values by exact rationals only")
        return NoisyLinear(self.state, dict(self.coefficients), self.offset + sign * value)

    def __add__(self, other: Any) -> "NoisyLinear":
        return self._combine(other, 1)

    __radd__ = __add__

    def __sub__(self, other: Any) -> "NoisyLinear":
        return self._combine(other, -1)

    def _refuse(self, *_: Any) -> Any:
        raise CannotFollow("a sum of noisy values can be released, not compared or used in arithmetic "
                        "beyond + and - (exact integration covers comparisons of single noisy values)",
                        "compare the noisy values themselves, or release the sum")

    __gt__ = __ge__ = __lt__ = __le__ = __mul__ = __rmul__ = __truediv__ = __neg__ = __abs__ = _refuse
    __rsub__ = __float__ = __int__ = __bool__ = _refuse

    def __eq__(self, other: Any) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        terms = " + ".join(f"{c}*x{v}" for v, c in sorted(self.coefficients.items()))
        return f"noisy({terms}{f' + {self.offset}' if self.offset else ''})"
