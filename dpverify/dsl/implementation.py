"""``dp.implementation``: a user's unmodified function, run by the engine with an instrumented generator.

The user's code takes an injected ``numpy.random.Generator`` or ``random.Random`` (the
argument ``rng`` by default); :func:`implementation` turns it into a mechanism program that
the engine enumerates like any other: each run calls ``fn(data, **params, rng=<instrumented
generator>)`` (:mod:`.generators`), whose methods are the engine's draws.  Its claims are the
usual ones: ``dp.private(eps)``, and ``dp.conforms(spec_program)`` (same law as the spec's
program on every dataset).

Parameters reach the code as exact numbers (ints, Fractions, sympy numbers): code that
computes ``math.exp(eps)`` gets a float, as deployed code does, and that float is exactly
what the law uses.  Outputs are read as Python values: numpy scalars become Python numbers
(``.item()``) and numpy arrays and lists become tuples, so that ``np.int64(1)`` and ``1`` are
one output.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import SpecError, call_help
from .generators import NumpyGenerator, RandomGenerator

GENERATORS = {"numpy": NumpyGenerator, "random": RandomGenerator}


class AuditedCode:
    """User code standing in for a mechanism program: it carries the function's name, docstring and
    signature without the randomness argument (which dpverify supplies), and its ``__code__``, so
    that errors are located in the file that defines the user's function."""

    def __init__(self, fn: Callable[..., Any], argument: str, default_name: str) -> None:
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", default_name)
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__module__ = getattr(fn, "__module__", __name__)
        self.__doc__ = fn.__doc__
        signature = inspect.signature(fn)
        self.__signature__ = signature.replace(
            parameters=[p for p in signature.parameters.values() if p.name != argument])

    @property
    def __code__(self) -> Any:
        return self.fn.__code__


class Implementation(AuditedCode):
    """A mechanism program running ``fn`` with an instrumented generator (build with :func:`implementation`)."""

    def __init__(self, fn: Callable[..., Any], rng: str, rng_argument: str) -> None:
        super().__init__(fn, rng_argument, "implementation")
        self.rng, self.rng_argument = rng, rng_argument

    def __call__(self, data: tuple, **params: Any) -> Any:
        return plain(self.fn(data, **params, **{self.rng_argument: GENERATORS[self.rng]()}))

    def __repr__(self) -> str:
        return f"dp.implementation({self.__name__}, rng={self.rng!r})"


def plain(value: Any) -> Any:
    """An output as Python values: numpy scalars -> Python numbers, arrays and lists -> tuples."""
    if isinstance(value, np.ndarray):
        return tuple(plain(v) for v in value.tolist()) if value.ndim else plain(value.item())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return tuple(plain(v) for v in value)
    return value


@call_help("dp.implementation(my_function, rng='numpy')",
           fn="the implementation: a function (data, <parameters>, rng) drawing from rng")
def implementation(fn: Callable[..., Any], rng: str = "numpy", rng_argument: str = "rng") -> Implementation:
    """The user's function ``fn(data, **params, rng=...)`` as a mechanism program, audited exactly.

    ``rng="numpy"`` passes an instrumented ``numpy.random.Generator``, ``rng="random"`` an
    instrumented ``random.Random``, as the keyword argument ``rng_argument``.  Supported
    methods become exact draws (see :mod:`dpverify.dsl.generators`); anything the engine cannot
    follow is refused with the function's file and line.

    >>> import dpverify as dp
    >>> def coin(data, rng):
    ...     return data[0] if rng.random() < 0.75 else 1 - data[0]
    >>> dp.implementation(coin, rng="numpy")
    dp.implementation(coin, rng='numpy')
    """
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise SpecError(f"implementation: fn={fn!r} is not a Python function",
                        "pass the function that implements the mechanism: def impl(data, eps, rng): ...")
    if rng not in GENERATORS:
        raise SpecError(f"implementation: rng={rng!r} is not a supported generator",
                        "use rng='numpy' (numpy.random.Generator) or rng='random' (random.Random)")
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        names = []
    if rng_argument not in names:
        raise SpecError(f"implementation: {fn.__name__}({', '.join(names)}) has no argument {rng_argument!r} "
                        "for the generator",
                        "name the generator's argument with rng_argument=..., e.g. rng_argument='random_state'")
    if names and names[0] == rng_argument:
        raise SpecError(f"implementation: the first argument of {fn.__name__} is the generator",
                        "the first argument is the dataset: def impl(data, eps, rng): ...")
    return Implementation(fn, rng, rng_argument)


__all__ = ["Implementation", "implementation"]
