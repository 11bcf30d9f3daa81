"""Recording generators for the grey-box replay (``dp.calibrated``): real seeded draws, every call logged.

The replay runs a user's implementation with a REAL generator (``numpy.random.Generator`` on
``PCG64(seed)``, or ``random.Random(seed)``), so the same seed gives two neighbouring datasets
identical randomness.  The generators here are subclasses of the real ones (``isinstance``
checks in user code still pass) whose public methods call the real method and log the call:
its method, arguments, result and the user's file:line (:func:`.instrumented.user_site`).

A noise method (numpy ``laplace``, ``normal``, ``gumbel``, ``exponential``,
``standard_normal``, ``standard_exponential``; random's ``gauss``, ``normalvariate``,
``expovariate``) also logs its law: kind, ``loc`` and scale.  Its scalar result is a
:class:`NoiseValue`, a float subclass that records the sums it takes part in (``value +
rng.laplace(0, b)``, numpy scalars included, through ``__array_ufunc__``); a sum with a Python
number is again a :class:`NoiseValue` (equal to what the real code computes), so a chain
``rng.laplace(0, b) + a - c`` is followed; with a numpy operand the result is numpy's own value.
The end of each chain is one *reading* of the value fed into the call (``loc + a - c``), and so is a
value partway along it that the code also compares or releases (``x = noise + a; return x, x - c``).
Noise drawn with ``size=`` is a :class:`NoiseArray` recording the same per element
(``counts + rng.laplace(0, b, size=k)``, ``counts += ...``, or element by element).

A noise value combined with another noise value, transformed before any sum (``2 * noise``,
``np.exp(noise)``), or never seen in a sum, a comparison or the output as drawn (``float(noise) +
x`` escapes the recorder) has no value fed into it that the recorder can read: that is logged
(``unclear``), never guessed.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Optional

import numpy as np
import sympy

from .instrumented import user_site

NUMPY_NOISE = {  # method -> (kind, parameter names in order, loc name or None, scale name or None)
    "laplace": ("laplace", ("loc", "scale", "size"), "loc", "scale"),
    "normal": ("gaussian", ("loc", "scale", "size"), "loc", "scale"),
    "gumbel": ("gumbel", ("loc", "scale", "size"), "loc", "scale"),
    "exponential": ("exponential", ("scale", "size"), None, "scale"),
    "standard_normal": ("gaussian", ("size", "dtype", "out"), None, None),
    "standard_exponential": ("exponential", ("size", "dtype", "method", "out"), None, None),
}
NUMPY_DEFAULTS = {"loc": 0.0, "scale": 1.0, "size": None}
RANDOM_NOISE = {
    "gauss": ("gaussian", ("mu", "sigma"), "mu", "sigma"),
    "normalvariate": ("gaussian", ("mu", "sigma"), "mu", "sigma"),
    "expovariate": ("exponential", ("lambd",), None, "lambd"),
}
RANDOM_DEFAULTS = {"mu": 0.0, "sigma": 1.0, "lambd": 1.0}


@dataclass
class Fed:
    """What one noise draw was added to: its ``loc``, and every chain of sums it took part in (``paths``:
    each a tuple of steps ``(sign of the noisy value, sign of the operand, operand)``, raw values read
    exactly later).  ``unclear`` says why no value fed into it can be read (another noise value, a
    transform before any sum, an escape); ``seen``: it took part in something the recorder saw."""

    loc: Any = 0
    paths: list = field(default_factory=list)
    unclear: Optional[str] = None
    seen: bool = False
    extended: set = field(default_factory=set)  # paths whose value took part in a further sum
    used: set = field(default_factory=set)  # paths whose value was also compared, transformed or released

    def readings(self) -> list:
        """The paths that are values the code used: every chain's end, and a value partway along a chain
        only when the code also compared, transformed or released it (``noise + c + x`` reads c + x, not c)."""
        return [p for p in self.paths if p not in self.extended or p in self.used]


@dataclass
class NoiseDraw:
    """One draw of noise: its call's index in the trace, its element (``size=`` draws), its law and what
    it was fed."""

    call: int
    element: Optional[int]
    kind: str
    scale: Any
    fed: Fed
    value: float


@dataclass
class Call:
    """One logged call: method, arguments (repr), result (repr) and the user's file:line."""

    index: int
    method: str
    arguments: str
    result: str
    file: Optional[str]
    line: Optional[int]

    @property
    def site(self) -> str:
        return f"{self.file}:{self.line}" if self.file else "?"


@dataclass
class Trace:
    """Every call of one run, in order, and its noise draws."""

    calls: list[Call] = field(default_factory=list)
    noise: list[NoiseDraw] = field(default_factory=list)
    output: Any = None
    error: Optional[str] = None


_READS = frozenset({np.greater, np.greater_equal, np.less, np.less_equal, np.equal, np.not_equal, np.isfinite,
                    np.isnan, np.isinf, np.signbit})
"""numpy functions that read a noise value without transforming it (comparisons, tests)."""

Step = tuple  # (sign of the noisy value, sign of the other operand, the other operand): new = s1 * old + s2 * other


class NoiseValue(float):
    """A noise draw's scalar result, or a sum it took part in: a float carrying the draw's :class:`Fed` and
    the ``path`` of sums from the draw to this value (``()`` for the draw itself).

    A sum with a number returns a new :class:`NoiseValue` (its value what the real code computes) whose
    path is one step longer, and records that path on the draw; with a numpy operand it returns numpy's
    value (the chain ends there).  A sum with another noise value, or arithmetic other than sums before
    any sum, makes the fed value unclear; comparisons only mark the draw as seen."""

    _fed: Fed
    _path: tuple

    def __new__(cls, value: float, fed: Fed, path: tuple = ()) -> "NoiseValue":
        obj = super().__new__(cls, value)
        obj._fed, obj._path = fed, path
        return obj

    @staticmethod
    def _plain(value: Any) -> Any:
        return float(value) if isinstance(value, NoiseValue) else value

    def _sum(self, other: Any, sign_self: int, sign_other: int, value: Any) -> Any:
        path = _note(self._fed, self._path, other, sign_self, sign_other)
        return NoiseValue(value, self._fed, path) if path is not None and type(value) is float else value

    def __add__(self, other: Any) -> Any:
        return self._sum(other, 1, 1, float(self) + self._plain(other))

    def __radd__(self, other: Any) -> Any:
        return self._sum(other, 1, 1, self._plain(other) + float(self))

    def __sub__(self, other: Any) -> Any:
        return self._sum(other, 1, -1, float(self) - self._plain(other))

    def __rsub__(self, other: Any) -> Any:
        return self._sum(other, -1, 1, self._plain(other) - float(self))

    def _compare(name: str) -> Callable[..., Any]:  # noqa: N805  (builds methods in the class body)
        real = getattr(float, name)

        def method(self: "NoiseValue", other: Any) -> Any:
            _used(self._fed, self._path)
            return real(float(self), NoiseValue._plain(other))
        method.__name__ = name
        return method

    __lt__, __le__, __gt__, __ge__ = _compare("__lt__"), _compare("__le__"), _compare("__gt__"), _compare("__ge__")
    del _compare

    def _other(name: str) -> Callable[..., Any]:  # noqa: N805  (builds methods in the class body)
        real = getattr(float, name)

        def method(self: "NoiseValue", *args: Any) -> Any:
            _transformed(self._fed, self._path, name.strip("_"))
            return real(float(self), *(NoiseValue._plain(a) for a in args))
        method.__name__ = name
        return method

    for _op in ("__mul__", "__rmul__", "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
                "__rmod__", "__pow__", "__rpow__", "__neg__", "__abs__"):
        locals()[_op] = _other(_op)
    del _op, _other

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if _is_sum(ufunc, method, inputs, kwargs) and any(i is self for i in inputs):
            first = inputs[0] is self
            other = inputs[1] if first else inputs[0]
            minus = ufunc is np.subtract
            _note(self._fed, self._path, other, -1 if (minus and not first) else 1, -1 if (minus and first) else 1)
        elif ufunc in _READS:
            _used(self._fed, self._path)
        else:
            _transformed(self._fed, self._path, f"numpy.{ufunc.__name__}")
        return _call_plain(ufunc, method, inputs, kwargs)

    def item(self) -> float:  # what an element of a numpy array offers: a plain float (the recorder loses it)
        return float(self)

    def __reduce__(self) -> Any:
        return (float, (float(self),))


def _note(fed: Fed, path: tuple, other: Any, sign_self: int, sign_other: int) -> Optional[tuple]:
    """A sum ``sign_self * (noisy value at path) + sign_other * other``: the new path, recorded on the draw
    as one reading of the value fed into it; None when there is no single reading (another noise value,
    an array operand)."""
    fed.seen = True
    if isinstance(other, (NoiseValue, NoiseArray)):
        fed.unclear = "added to another noise value"
        for other_fed in ([other._fed] if isinstance(other, NoiseValue) else _feds_of(other)):
            other_fed.unclear, other_fed.seen = "added to another noise value", True
        return None
    if isinstance(other, np.ndarray) and other.ndim:
        fed.unclear = "added to an array"
        return None
    new = path + ((sign_self, sign_other, other),)
    fed.paths.append(new)
    fed.extended.add(path)
    return new


def _used(fed: Fed, path: tuple) -> None:
    fed.seen = True
    fed.used.add(path)


def _transformed(fed: Fed, path: tuple, how: str) -> None:
    """Arithmetic other than a sum: on the draw itself before any sum, its scale is no longer the call's, so
    no value fed into it is read; on a sum, the readings so far stand (the chain ends)."""
    _used(fed, path)
    if not path and not fed.paths and fed.unclear is None:
        fed.unclear = f"transformed by {how} before any sum"


def _feds_of(array: "NoiseArray") -> list:
    return [] if array._feds is None else array._feds.ravel().tolist()


class NoiseArray(np.ndarray):
    """The result of a noise draw with ``size=`` (or of a sum of one): an array whose elements carry, like
    :class:`NoiseValue`, their draw's :class:`Fed` and path of sums (``counts + rng.laplace(0, b,
    size=k)``, elementwise, ``+=`` included); indexing and iterating give :class:`NoiseValue` elements."""

    _feds: Optional[np.ndarray]  # one Fed per element, same shape; None on an array numpy derived
    _paths: Optional[np.ndarray]  # one path per element

    def __array_finalize__(self, obj: Any) -> None:
        self._feds = self._paths = None  # a view, transpose or copy numpy makes does not carry the draws

    def __getitem__(self, index: Any) -> Any:
        if self._feds is None:  # elements the recorder lost: the escape check after the run judges them
            return self.view(np.ndarray)[index]
        value, feds, paths = self.view(np.ndarray)[index], self._feds[index], self._paths[index]
        if np.ndim(value) == 0:
            return NoiseValue(float(value), feds, paths)
        return _noise_array(value, feds, paths)

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    def tolist(self) -> Any:
        return [item.tolist() if isinstance(item, NoiseArray) else item for item in self]

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        mine = self._feds is not None and any(i is self for i in inputs)
        feds = self._feds.ravel().tolist() if mine else []
        paths = self._paths.ravel().tolist() if mine else []
        other, others = (inputs[1] if inputs[0] is self else inputs[0]) if len(inputs) == 2 else None, None
        if mine and _is_sum(ufunc, method, inputs, kwargs):
            try:  # the operand's values before the ufunc runs (it may write into it: counts += noise)
                others = np.broadcast_to(np.asarray(other, dtype=object), self.shape).ravel().tolist()
            except ValueError:
                others = None
        result = _call_plain(ufunc, method, inputs, kwargs)
        if not mine:
            return result
        if not _is_sum(ufunc, method, inputs, kwargs):
            for fed, path in zip(feds, paths):
                if ufunc in _READS:
                    _used(fed, path)
                else:
                    _transformed(fed, path, f"numpy.{ufunc.__name__}")
            return result
        first = inputs[0] is self
        minus = ufunc is np.subtract
        signs = (-1 if (minus and not first) else 1, -1 if (minus and first) else 1)
        if others is None or isinstance(other, (NoiseValue, NoiseArray)) or np.shape(result) != self.shape:
            for fed, path in zip(feds, paths):
                _note(fed, path, other if isinstance(other, (NoiseValue, NoiseArray)) else np.ones((2,)), *signs)
            return result
        new = _objects([_note(fed, path, operand, *signs) for fed, path, operand in zip(feds, paths, others)],
                       self.shape)
        if result is self:  # noise += counts: the same array, one step further
            self._paths = new
            return self
        if "out" in kwargs or not isinstance(result, np.ndarray):  # counts += noise: numpy's own out array
            return result
        return _noise_array(result, self._feds.copy(), new)


def _objects(items: list, shape: tuple) -> np.ndarray:
    """An object array of ``items`` (one by one: numpy would read tuples as a further dimension)."""
    holder = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        holder[i] = item
    return holder.reshape(shape)


def _is_sum(ufunc: Any, method: str, inputs: tuple, kwargs: dict) -> bool:
    """``a + b`` or ``a - b`` (``out=`` allowed: ``counts += noise``)."""
    return (method == "__call__" and ufunc in (np.add, np.subtract) and len(inputs) == 2
            and set(kwargs) <= {"out"})


def _call_plain(ufunc: Any, method: str, inputs: tuple, kwargs: dict) -> Any:
    """The ufunc on plain values (noise arrays as plain views, writing into the same memory), returning what
    numpy returns (the ``out`` array itself when one is given)."""
    def plain(value: Any) -> Any:
        if isinstance(value, NoiseArray):
            return value.view(np.ndarray)
        return NoiseValue._plain(value)
    out = kwargs.get("out")
    if out is not None:
        kwargs = dict(kwargs, out=tuple(plain(o) for o in out))
    result = getattr(ufunc, method)(*(plain(i) for i in inputs), **kwargs)
    if out is not None and len(out) == 1:
        return out[0]
    return result


def _noise_array(values: np.ndarray, feds: np.ndarray, paths: np.ndarray) -> NoiseArray:
    out = np.asarray(values).view(NoiseArray)
    out._feds, out._paths = feds, paths
    return out


def _mark_released(output: Any, seen: set) -> None:
    """Mark the noisy values the output holds (a sum partway along a chain, released too, is a reading)."""
    if id(output) in seen:
        return
    seen.add(id(output))
    if isinstance(output, NoiseValue):
        _used(output._fed, output._path)
    elif isinstance(output, NoiseArray) and output._feds is not None:
        for fed, path in zip(output._feds.ravel().tolist(), output._paths.ravel().tolist()):
            _used(fed, path)
    elif isinstance(output, dict):
        _mark_released(list(output.values()), seen)
    elif isinstance(output, (tuple, list)):
        for item in output:
            _mark_released(item, seen)


def _released(output: Any, value: float, seen: set) -> bool:
    """Whether ``value`` (a noise draw's raw result) appears in the output, as it is (released raw)."""
    if id(output) in seen:
        return False
    seen.add(id(output))
    if isinstance(output, (float, np.floating)) and np.ndim(output) == 0:
        return float(output) == value
    if isinstance(output, np.ndarray):
        return output.dtype.kind == "f" and bool(np.any(output.view(np.ndarray) == value))
    if isinstance(output, dict):
        output = list(output.values())
    if isinstance(output, (tuple, list)):
        return any(_released(item, value, seen) for item in output)
    return False


def _bind(names: tuple, defaults: dict, args: tuple, kwargs: dict) -> dict:
    bound = {name: defaults.get(name) for name in names}
    bound.update(zip(names, args))
    bound.update(kwargs)
    return bound


def _for_library(value: Any) -> Any:
    """An exact number (Fraction, sympy) as the float the library converts it to; others unchanged."""
    if isinstance(value, Fraction) or (isinstance(value, sympy.Basic) and value.is_number):
        return float(value)
    return value


class _Recorder:
    """Logs the calls of the real generator it is mixed into (outermost calls only)."""

    _trace: Trace
    _depth: int
    _noise: dict
    _defaults: dict

    def _record(self, name: str, real: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        if self._depth:
            return real(*args, **kwargs)
        file, line = user_site()
        self._depth += 1
        try:
            result = real(*(_for_library(a) for a in args), **{k: _for_library(v) for k, v in kwargs.items()})
        finally:
            self._depth -= 1
        trace = self._trace
        call = Call(len(trace.calls), name, _arguments(args, kwargs), _short(result), file, line)
        trace.calls.append(call)
        if name in self._noise:
            result = self._noise_result(call, name, args, kwargs, result)
        return result

    def _noise_result(self, call: Call, name: str, args: tuple, kwargs: dict, result: Any) -> Any:
        kind, names, loc_name, scale_name = self._noise[name]
        bound = _bind(names, self._defaults, args, kwargs)
        loc = bound.get(loc_name, 0) if loc_name else 0
        scale = bound.get(scale_name, 1) if scale_name else 1
        if name == "expovariate":
            scale = _Reciprocal(scale)
        if isinstance(result, (float, np.floating)) and np.ndim(result) == 0:
            fed = Fed(loc)
            self._trace.noise.append(NoiseDraw(call.index, None, kind, scale, fed, float(result)))
            return NoiseValue(float(result), fed)
        values = np.asarray(result)
        locs = np.broadcast_to(np.asarray(loc, dtype=object), values.shape).ravel().tolist()
        scales = np.broadcast_to(np.asarray(scale, dtype=object), values.shape).ravel().tolist()
        feds = []
        for element, (value, lo, sc) in enumerate(zip(values.ravel().tolist(), locs, scales)):
            feds.append(Fed(lo))
            self._trace.noise.append(NoiseDraw(call.index, element, kind, sc, feds[-1], float(value)))
        return _noise_array(values, _objects(feds, values.shape), _objects([()] * len(feds), values.shape))


@dataclass(frozen=True)
class _Reciprocal:
    """random's ``expovariate(lambd)`` has scale 1/lambd: kept as lambd, inverted exactly later."""

    rate: Any

    def __repr__(self) -> str:
        return f"1/{self.rate!r}"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def _short(value: Any, width: int = 80) -> str:
    return _cut(repr(value.tolist() if isinstance(value, np.ndarray) else value), width)


def _arguments(args: tuple, kwargs: dict) -> str:
    return _cut(", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]), 120)


def _wrap(name: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        real = getattr(super(type(self), self), name)
        return self._record(name, real, args, kwargs)
    method.__name__ = name
    return method


_GENERATOR = getattr(np.random.Generator, "__wrapped__", np.random.Generator)
"""numpy's Generator class itself (the engine's mechanism contract may have put a guarded stand-in in its place)."""


class RecordingNumpy(_Recorder, _GENERATOR):
    """A real ``numpy.random.Generator`` on ``PCG64(seed)`` that logs every call."""

    _noise = NUMPY_NOISE
    _defaults = NUMPY_DEFAULTS

    def __init__(self, seed: int) -> None:
        super().__init__(getattr(np.random.PCG64, "__wrapped__", np.random.PCG64)(seed))
        self._trace, self._depth = Trace(), 0


class RecordingRandom(_Recorder, random.Random):
    """A real ``random.Random(seed)`` that logs every call (its own internal calls are not logged)."""

    _noise = RANDOM_NOISE
    _defaults = RANDOM_DEFAULTS

    def __init__(self, seed: int) -> None:
        self._trace, self._depth = Trace(), 0
        super().__init__(seed)


for _name in ("random", "integers", "choice", "uniform", "laplace", "exponential", "standard_exponential",
              "normal", "standard_normal", "gumbel", "geometric", "poisson", "binomial", "permutation",
              "shuffle", "permuted", "bytes", "logistic", "multinomial", "hypergeometric", "beta", "gamma"):
    setattr(RecordingNumpy, _name, _wrap(_name))
for _name in ("random", "uniform", "randrange", "randint", "choice", "choices", "sample", "shuffle",
              "getrandbits", "gauss", "normalvariate", "expovariate", "betavariate", "gammavariate",
              "triangular", "binomialvariate", "randbytes"):
    if hasattr(random.Random, _name):
        setattr(RecordingRandom, _name, _wrap(_name))

GENERATORS = {"numpy": RecordingNumpy, "random": RecordingRandom}


def record(fn: Callable[..., Any], data: tuple, params: dict, library: str, argument: str, seed: int) -> Trace:
    """Run ``fn(data, **params, <argument>=<recording generator on seed>)`` once and return its trace.

    An exception raised by the code ends the trace: it is kept as ``error`` (the calls made so far
    stay), for the check to report."""
    generator = GENERATORS[library](seed)
    trace = generator._trace
    try:
        trace.output = fn(data, **params, **{argument: generator})
    except Exception as exc:  # the user's code failed: the check reports it with the trace so far
        trace.error = f"{type(exc).__name__}: {exc}"
    _mark_released(trace.output, set())
    for draw in trace.noise:  # a value never summed, compared, transformed or released: it escaped us
        fed = draw.fed
        if not fed.seen and fed.unclear is None and not _released(trace.output, draw.value, set()):
            fed.unclear = ("used where the recorder cannot follow it (never in a sum, a comparison or the "
                           "output as drawn: float(), .item(), np.float64() or .tolist() of it?)")
    return trace


__all__ = ["Call", "Fed", "GENERATORS", "NoiseArray", "NoiseDraw", "NoiseValue", "RecordingNumpy", "RecordingRandom", "Trace", "record"]
