"""The values and weights of continuous noise: noisy values, noise laws, densities.

A mechanism sees :class:`Noisy` values (q + noise, a handle, never a sample) and
:class:`NoisyLinear` sums of them; the engine (:mod:`.noise`) turns the
comparisons they take part in into branches and constraints.  A run that
returns noisy values weighs its output with a :class:`Density`, a sum over
paths of constant * prod_k factor_k(v_k), one :class:`Factor` per released value.
"""
from __future__ import annotations

import os
import sys
import sysconfig
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional, Protocol

import sympy

from ...dsl.exact import exact_float
from ...errors import CannotFollow, DpverifyError, SpecError
from . import piecewise as pw
from ..program import contract
from ..program.parameter import Parameter

Interval = tuple  # (lo, hi), None for an unbounded side; an open interval of the real line

FULL: Interval = (None, None)


class NeedsExactParameters(DpverifyError):
    """A noise primitive got a parameter as an interval: rerun the program with exact parameters."""


_FRACTIONS: dict[int, Fraction] = {}
"""Integers already met as Fractions (immutable, so shared): equal centres are then one object."""


def exact(value: Any, what: str, fn: str) -> Any:
    """An exact rational as a Fraction; a symbolic or irrational sympy number as itself.

    Interval numbers (the certified reading's parameters) cannot say which
    rational they are, so they ask for a rerun with exact parameters.
    """
    kind = type(value)
    if kind is Fraction:  # the common cases first (a noise draw asks twice): exactly the branches below
        return value
    if kind is int:
        found = _FRACTIONS.get(value)
        if found is None:
            found = Fraction(value)
            if len(_FRACTIONS) < 4096:
                _FRACTIONS[value] = found
        return found
    if kind is Parameter:  # the symbolic reading's parameter: its expression
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


@dataclass(frozen=True, init=False)
class Noise:
    """A noise variable's law: its value x = centre + Z, Z ~ Laplace(scale), Exp(scale) or N(0, scale^2)."""

    kind: str
    centre: Any
    scale: Any
    site: Optional[tuple] = field(default=None, compare=False, hash=False, repr=False)  # (file, line) of the call

    def __init__(self, kind: str, centre: Any, scale: Any, site: Optional[tuple] = None) -> None:
        # The generated frozen __init__ sets each field through object.__setattr__ (2 us a noise draw, which
        # noisy max makes 10^6 times); the instance dict written at once is the same object.
        self.__dict__.update(kind=kind, centre=centre, scale=scale, site=site)

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
        """A hashable key for exact (sympy) weights, whose factors carry no functions.  A joint factor
        (released values tied by comparisons) carries no law of its own, so its weight equals no other."""
        if self._joint():
            return ("joint", id(self))
        return tuple((c, tuple((f.noise, f.offset, f.interval, f.joint, f.mix) for f in factors))
                     for c, factors in self.terms)

    def _joint(self) -> bool:
        return any(f.joint for _, factors in self.terms for f in factors)

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
        if self._joint():  # no one-dimensional law per value: the key would hold no centre (found by review)
            raise _NotPinned
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

    def compare(self, a: "Noisy", b: Any, greater: bool, strict: bool = True) -> bool:
        """Whether a > b (greater) or a < b (a >= b, a <= b when not strict), as a branch of the
        enumeration."""


class _Handle:
    """What spec code may not read of a noisy value (or a sum of them): dpverify holds a handle, not a
    sample, so its text, type, attributes and conversions would describe another program.  Each is
    refused at the spec's line (:func:`_probe`); dpverify's own code reads them freely."""

    __slots__ = ()
    __dpverify_handle__ = True  # id() in a spec module is refused (engine/program/contract.py)

    def __dpverify_type_probe__(self) -> None:  # type(x) in a spec module (engine/contract.spec_type)
        _probe(self, "type (type(x))")

    def __copy__(self) -> Any:  # a copy of a value is the value (copy.copy, copy.deepcopy)
        return self

    def __deepcopy__(self, memo: Any) -> Any:
        return self

    def __format__(self, spec: str) -> str:
        _probe(self, "text (an f-string or format)")
        return repr(self)

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        """isinstance(x, float) from spec code would tell the handle from a sample: refused."""
        _probe(self, "type (isinstance, __class__)")
        return type(self)

    def __getattr__(self, name: str) -> Any:
        if not (name.startswith("__") and name.endswith("__")):
            _probe(self, f"attribute .{name}")
        raise AttributeError(name)  # a protocol probe (numpy's __array_*__, copy's __deepcopy__)

    def _no_conversion(self, *_: Any) -> Any:
        _probe(self, "conversion (bytes, complex, an index)")
        raise AssertionError("unreachable")

    __bytes__ = __complex__ = __index__ = __trunc__ = _no_conversion


class Noisy(_Handle):
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
        if type(other) is NoisyLinear:  # _single, inline: noisy max compares 10^6 times
            other = other.reduced()
        return self.state.compare(self, other, greater=True)

    def __ge__(self, other: Any) -> bool:  # a tie has probability zero, but for x >= x (one variable)
        return self.state.compare(self, _single(other), greater=True, strict=False)

    def __lt__(self, other: Any) -> bool:
        if type(other) is NoisyLinear:  # _single, inline
            other = other.reduced()
        return self.state.compare(self, other, greater=False)

    def __le__(self, other: Any) -> bool:
        return self.state.compare(self, _single(other), greater=False, strict=False)

    def __eq__(self, other: Any) -> bool:
        """x + a == x + b exactly when a == b (one variable); any other equality has probability zero."""
        other = _single(other)
        return isinstance(other, Noisy) and other.state is self.state and other.var == self.var \
            and other.offset == self.offset

    def __hash__(self) -> int:
        _probe(self, "hash (a set, a dict key, `in {...}`)")
        return hash((id(self.state), self.var, self.offset))

    def __repr__(self) -> str:
        _probe(self, "text (str, repr, format, print)")
        noise = self.state.variables[self.var]
        return f"noisy({noise.describe()}{f' + {self.offset}' if self.offset else ''})"

    __str__ = __repr__


def _single(value: Any) -> Any:
    """A sum of noisy values on one variable with coefficient 1 (``x + y - y``) as that noisy value, a sum
    whose noise cancels (``x - x``) as its constant, anything else unchanged."""
    return value.reduced() if type(value) is NoisyLinear else value


def _handle_site() -> Optional[tuple[str, int]]:
    """(file, line) of the code that probes a noisy value, None when dpverify itself does.

    Frames of the standard library are passed through (``json.dumps(x)`` judges its caller); the first
    other frame decides: dpverify's own code may read a handle, spec code and other libraries may not."""
    frame = sys._getframe(3)  # _handle_site <- _probe <- the probed method <- its caller
    while frame is not None and (_stdlib(frame.f_code.co_filename) or frame.f_code.co_filename == _CONTRACT):
        frame = frame.f_back  # the standard library, and the contract's guarded builtins (hash, id)
    if frame is None or frame.f_code.co_filename.startswith(_OWN):
        return None
    where = contract.user_frame(frame)  # the spec's own line, above a library that probed (numpy's printing)
    return where or (frame.f_code.co_filename, frame.f_lineno)


def _probe(value: Any, what: str) -> None:
    where = _handle_site()
    if where is not None:
        raise CannotFollow(f"the program reads a noisy value's {what}: dpverify holds a handle on the value, "
                           "not a sample, so its text, hash, type and attributes are not the real value's",
                           "compare or release the noisy value itself; compute on it only by + and - of exact "
                           "constants", file=where[0], line=where[1])


_OWN = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep  # dpverify/
_CONTRACT = contract.__file__
_STDLIB = tuple(sorted({os.path.abspath(p) + os.sep for key in ("stdlib", "platstdlib")
                        if (p := sysconfig.get_paths().get(key))}))
_stdlib_seen: dict[str, bool] = {}


def _stdlib(filename: str) -> bool:
    known = _stdlib_seen.get(filename)
    if known is None:
        known = filename.startswith("<frozen") or (not filename.startswith(_OWN)
                                                    and os.path.abspath(filename).startswith(_STDLIB)
                                                    and "site-packages" not in filename)
        _stdlib_seen[filename] = known
    return known


class NoisyLinear(_Handle):
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

    def _combine(self, other: Any, sign: int) -> Any:
        if isinstance(other, (Noisy, NoisyLinear)):
            other = NoisyLinear.of(other)
            if other.state is not self.state:
                raise SpecError("noisy values of different runs were added", "add noisy values of one run only")
            coefficients = dict(self.coefficients)
            for var, c in other.coefficients.items():
                coefficients[var] = coefficients.get(var, 0) + sign * c
            return NoisyLinear(self.state, {v: c for v, c in coefficients.items() if c},
                               self.offset + sign * other.offset).reduced()
        value = exact(other, "the constant", "sum of noisy values")
        if not isinstance(value, Fraction):
            raise CannotFollow(f"a sum of noisy values shifted by {other!r}: the constant must be an exact rational",
                            "shift noisy values by exact rationals only")
        return NoisyLinear(self.state, dict(self.coefficients), self.offset + sign * value)

    def __add__(self, other: Any) -> Any:
        return self._combine(other, 1)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        return self._combine(other, -1)

    def _refuse(self, *_: Any) -> Any:
        raise CannotFollow("a sum of noisy values can be released, not compared or used in arithmetic "
                        "beyond + and - (exact integration covers comparisons of single noisy values)",
                        "compare the noisy values themselves, or release the sum")

    __gt__ = __ge__ = __lt__ = __le__ = __mul__ = __rmul__ = __truediv__ = __neg__ = __abs__ = _refuse
    __rsub__ = __float__ = __int__ = __bool__ = _refuse

    def reduced(self) -> Any:
        """This sum as a single noisy value when it is one (coefficient 1 on one variable), as its constant
        when its noise cancels, else itself."""
        if not self.coefficients:
            return self.offset
        if len(self.coefficients) == 1:
            (var, c), = self.coefficients.items()
            if c == 1:
                return Noisy(self.state, var, self.offset)
        return self

    def __eq__(self, other: Any) -> bool:
        """Equal sums are equal; any other equality has probability zero (a non-zero combination of
        continuous noise)."""
        other = _single(other)
        return isinstance(other, NoisyLinear) and other.state is self.state \
            and other.coefficients == self.coefficients and other.offset == self.offset

    def __hash__(self) -> int:
        _probe(self, "hash (a set, a dict key, `in {...}`)")
        return hash((id(self.state), tuple(sorted(self.coefficients.items())), self.offset))

    def __repr__(self) -> str:
        _probe(self, "text (str, repr, format, print)")
        terms = " + ".join(f"{c}*x{v}" for v, c in sorted(self.coefficients.items()))
        return f"noisy({terms}{f' + {self.offset}' if self.offset else ''})"

    __str__ = __repr__
