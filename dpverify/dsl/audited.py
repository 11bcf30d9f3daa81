"""User code that dpverify runs: the wrapper that stands for it, its outputs read as Python values, and
the real generators it gets when it is sampled.

Shared by ``dp.implementation`` (code run exactly with an instrumented generator, sampled with a real
one when the exact audit cannot follow it) and ``dp.black_box`` (code only sampled).
"""
from __future__ import annotations

import inspect
import random
from collections.abc import Callable
from typing import Any

import numpy as np


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


def plain(value: Any) -> Any:
    """An output as Python values: numpy scalars -> Python numbers, arrays and lists -> tuples."""
    if isinstance(value, np.ndarray):
        return tuple(plain(v) for v in value.tolist()) if value.ndim else plain(value.item())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return tuple(plain(v) for v in value)
    return value


class SeededSystemRandom(random.SystemRandom):
    """A ``random.SystemRandom`` (what diffprivlib takes as ``random_state``) whose bits come from a seeded
    Mersenne twister: every method of ``random.Random`` is built on ``random()`` and ``getrandbits()``."""

    def __init__(self, seed: int) -> None:
        self._twister = random.Random(seed)
        super().__init__()

    def random(self) -> float:
        return self._twister.random()

    def getrandbits(self, k: int) -> int:
        return self._twister.getrandbits(k)

    def randbytes(self, n: int) -> bytes:
        return self._twister.randbytes(n)


def _seed(stream: np.random.Generator) -> int:
    return int(stream.integers(2 ** 63))


REAL_GENERATORS: dict[str, Callable[[np.random.Generator], Any]] = {
    "numpy": lambda stream: stream,
    "random": lambda stream: random.Random(_seed(stream)),
    "system_random": lambda stream: SeededSystemRandom(_seed(stream)),
}
"""The real generator each kind of instrumented generator (``dp.implementation(fn, rng=<kind>)``,
:data:`~.implementation.GENERATORS`) stands for, made from the statistical audit's numpy
stream of one (seed, run, dataset, parameters): the generator an implementation gets when its claims
fall back to sampling (:meth:`~.black_box.BlackBox.sample`), so the same seed gives the same numbers."""


__all__ = ["REAL_GENERATORS", "AuditedCode", "SeededSystemRandom", "plain"]
