"""Instrumented stand-ins for ``numpy.random.Generator`` and ``random.Random``: their methods are draws.

A third stand-in, :class:`SystemRandomGenerator` (``rng="system_random"``), is the
``random.Random`` one as a subclass of ``random.SystemRandom``: libraries that accept a
SystemRandom as their randomness take it unchanged -- diffprivlib's ``check_random_state(seed,
secure=True)`` returns any ``secrets.SystemRandom`` instance as it is, so a diffprivlib mechanism
built with ``random_state=rng`` draws its uniforms from the engine.

An implementation audited exactly (:func:`dpverify.implementation`) receives one of these
instead of a real generator.  Each supported method becomes the engine's draw with the
law the real method has, computed from the library's own algorithm:

* ``random()``: a :class:`~.instrumented.Uniform` handle on the 2^53-point grid (see there).
* numpy ``integers`` and random's ``randrange``/``randint``/``choice``/``getrandbits``:
  exactly uniform, as both libraries draw them by rejection (numpy: Lemire's bounded
  integers, ``random_bounded_uint64``; CPython: ``_randbelow_with_getrandbits``).
* numpy ``choice(a, p=p)``: numpy computes ``cdf = p.cumsum(); cdf /= cdf[-1]`` in floats and
  returns ``cdf.searchsorted(random(), side="right")`` (numpy/random/_generator.pyx,
  ``Generator.choice``): the index i has probability #{k : cdf[i-1] <= k/2^53 < cdf[i]} / 2^53,
  counted exactly on the very float array numpy builds.  Without p: ``integers(0, len(a))``.
* random's ``choices(population, weights)``: ``bisect(cum_weights, random() * total, 0, n - 1)``
  (Lib/random.py): the Uniform handle follows ``random() * total`` and the bisection exactly;
  without weights ``floor(random() * n)``, which is not exactly uniform and is counted as it is.
* ``uniform(a, b)``: ``a + (b - a) * random()`` in both libraries, followed as arithmetic.
* ``laplace``, ``exponential``, ``normal`` (numpy) and ``gauss``, ``normalvariate``,
  ``expovariate`` (random): the ideal real laws, through the engine's Laplace, exponential
  and Gaussian noise, with float arguments read as their exact binary values.  Whether the
  library's floating-point sampler realises that ideal law (Mironov 2012) is another
  check's question, not this one's.

Any other method (``gumbel``, ``geometric``, ``shuffle``, ``permutation``, ``bytes``,
``bit_generator``...) is refused with the program's file and line.
"""
from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction
from typing import Any, Callable, Optional

import numpy as np
import sympy

from ..errors import CannotFollow, SpecError
from . import port, primitives
from .instrumented import GRID, LATER, Uniform, grid_count, refuse, user_site


def _exact(value: Any, what: str, fn: str) -> Any:
    """An argument of a noise method as an exact number: a float is its exact binary value."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        if not math.isfinite(value):
            raise refuse(f"{fn}: {what}={value!r} is not finite", f"pass a finite {what}")
        return Fraction(value)
    if isinstance(value, sympy.Float):
        exact = sympy.Rational(value)
        return Fraction(int(exact.p), int(exact.q))
    if isinstance(value, Uniform):
        raise refuse(f"{fn}: {what} is computed from a uniform draw", f"pass a constant {what}; {LATER}", CannotFollow)
    return value


def _noise(kind: str, loc: Any, scale: Any, fn: str, what: str = "scale") -> Any:
    """loc + noise of ``kind`` with the given scale, located at the program's line."""
    engine = port.engine()
    if not engine.running():
        raise port.outside_run(fn)
    centre = engine.exact(_exact(loc, "loc", fn), "loc", fn)
    width = engine.exact(_exact(scale, what, fn), what, fn)
    positive = width > 0 if not isinstance(width, sympy.Basic) else width.is_positive
    if positive is None and not getattr(width, "free_symbols", None):
        raise SpecError(f"{fn}: cannot tell that {what}={scale} is positive", "pass a positive scale")
    if positive is False:
        if width == 0:
            return float(centre)  # numpy returns loc itself for a zero scale
        raise ValueError(f"{what} < 0")  # what numpy and random raise
    return engine.noise(kind, centre, width, user_site())


def _many(size: Any, one: Callable[[], Any], dtype: Any = object) -> Any:
    """``one()`` for a scalar size=None, else an array of independent draws of that shape."""
    if size is None:
        return one()
    shape = (int(size),) if isinstance(size, (int, np.integer)) else tuple(int(s) for s in size)
    values = [one() for _ in range(math.prod(shape))]
    out = np.empty(len(values), dtype=dtype)
    out[:] = values
    return out.reshape(shape)


def _uniform_index(n: int) -> int:
    return primitives.uniform(range(n)) if n > 1 else 0


class _Refusing:
    """Every method not written here is refused, naming it and the program's line."""

    library = "generator"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise refuse(f"the implementation calls {self.library}.{name}(), which the exact audit does not support",
                     f"dpverify follows {', '.join(self.supported)}; {LATER}", CannotFollow)


class NumpyGenerator(_Refusing):
    """Stands for ``numpy.random.Generator`` in an implementation audited exactly."""

    library = "numpy.random.Generator"
    supported = ("random", "integers", "choice", "uniform", "laplace", "exponential", "standard_exponential",
                 "normal", "standard_normal")

    def random(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        if np.dtype(dtype) != np.float64 or out is not None:
            raise refuse("random(dtype=float32 or out=...) is not supported by the exact audit",
                         f"call rng.random() with float64 values; {LATER}", CannotFollow)
        return _many(size, Uniform)

    def integers(self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64,
                 endpoint: bool = False) -> Any:
        low, high = (0, low) if high is None else (low, high)
        low, high = int(low), int(high) + (1 if endpoint else 0)
        if low >= high:
            raise ValueError("low >= high" if not endpoint else "low > high")
        kind = np.dtype(dtype).type
        return _many(size, lambda: kind(primitives.uniform(range(low, high)) if high - low > 1 else low),
                     dtype=np.dtype(dtype))

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None, axis: int = 0,
               shuffle: bool = True) -> Any:
        if not replace and size is not None:
            raise refuse("choice(..., replace=False) with a size is not supported by the exact audit",
                         f"draw the elements one by one, or choose a subset with integers; {LATER}", CannotFollow)
        population = None if isinstance(a, (int, np.integer)) else np.asarray(a)
        n = int(a) if population is None else len(population)
        if n <= 0:
            raise ValueError("a must be a positive integer unless no samples are taken" if population is None
                             else "a cannot be empty unless no samples are taken")
        law = None if p is None else choice_law(p, n)

        def one() -> Any:
            if law is None:
                index = _uniform_index(n)
            else:
                index = next(iter(law)) if len(law) == 1 else primitives.categorical(law)
            return np.int64(index) if population is None else population[index]
        return _many(size, one)

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None) -> Any:
        lo, hi = float(low), float(high)
        return _many(size, lambda: lo + (hi - lo) * Uniform())  # random_uniform: lower + range * next_double

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        return _many(size, lambda: _noise("laplace", loc, scale, "laplace"))

    def exponential(self, scale: Any = 1.0, size: Any = None) -> Any:
        return _many(size, lambda: _noise("exponential", 0, scale, "exponential"))

    def standard_exponential(self, size: Any = None) -> Any:
        return self.exponential(1, size)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        return _many(size, lambda: _noise("gaussian", loc, scale, "normal"))

    def standard_normal(self, size: Any = None) -> Any:
        return self.normal(0, 1, size)


def choice_law(p: Any, n: int, grid: int = GRID) -> dict[int, Fraction]:
    """The exact law of ``Generator.choice(n, p=p)``: index -> #{k : cdf[i-1] <= k/2^53 < cdf[i]} / 2^53.

    The cdf is built with numpy on the float array as numpy builds it; p is validated as
    numpy validates it (non-negative, summing to 1 within sqrt(float64 eps), raising the
    same ValueErrors; the sum is taken with ``math.fsum`` where numpy uses a Kahan sum).
    ``grid`` is 2^53 (smaller grids are for tests against brute force).
    """
    probabilities = np.asarray(p, dtype=np.float64)
    if probabilities.ndim != 1:
        raise ValueError("p must be 1-dimensional")
    if probabilities.size != n:
        raise ValueError("a and p must have same size")
    total = math.fsum(probabilities.tolist())
    if math.isnan(total):
        raise ValueError("probabilities contain NaN")
    if np.any(probabilities < 0):
        raise ValueError("probabilities are not non-negative")
    if abs(total - 1.0) > math.sqrt(np.finfo(np.float64).eps):
        raise ValueError("probabilities do not sum to 1")
    cdf = probabilities.cumsum()
    cdf /= cdf[-1]
    counts, below = {}, 0
    for i, c in enumerate(cdf.tolist()):
        upto = grid_count(c, grid)
        if upto > below:
            counts[i] = Fraction(upto - below, grid)
        below = max(below, upto)
    return counts


class RandomGenerator(_Refusing):
    """Stands for ``random.Random`` in an implementation audited exactly."""

    library = "random.Random"
    supported = ("random", "uniform", "randrange", "randint", "choice", "choices", "getrandbits", "gauss",
                 "normalvariate", "expovariate")

    def random(self) -> Uniform:
        return Uniform()

    def uniform(self, a: Any, b: Any) -> Any:
        return a + (b - a) * Uniform()  # Lib/random.py: a + (b - a) * self.random()

    def randrange(self, start: int, stop: Optional[int] = None, step: int = 1) -> int:
        values = range(start) if stop is None else range(start, stop, step)
        if not values:
            raise ValueError(f"empty range in randrange({start}, {stop}, {step})")
        return values[_uniform_index(len(values))]

    def randint(self, a: int, b: int) -> int:
        return self.randrange(a, b + 1)

    def getrandbits(self, k: int) -> int:
        return _uniform_index(2 ** k)

    def choice(self, seq: Any) -> Any:
        if not len(seq):
            raise IndexError("Cannot choose from an empty sequence")
        return seq[_uniform_index(len(seq))]

    def choices(self, population: Any, weights: Any = None, *, cum_weights: Any = None, k: int = 1) -> list:
        n = len(population)
        if cum_weights is None and weights is None:
            scale = n + 0.0
            return [population[math.floor(Uniform() * scale)] for _ in range(k)]
        if cum_weights is None:
            cum_weights = list(itertools.accumulate(weights))
        elif weights is not None:
            raise TypeError("Cannot specify both weights and cumulative weights")
        if len(cum_weights) != n:
            raise ValueError("The number of weights does not match the population")
        total = cum_weights[-1] + 0.0
        if total <= 0.0:
            raise ValueError("Total of weights must be greater than zero")
        if not math.isfinite(total):
            raise ValueError("Total of weights must be finite")
        if any(b < a for a, b in zip(cum_weights, cum_weights[1:])) or cum_weights[0] < 0:
            raise refuse("choices() with negative weights is not supported by the exact audit",
                         "pass non-negative weights")
        return [population[_bisected(cum_weights, total, n - 1)] for _ in range(k)]

    def gauss(self, mu: Any = 0.0, sigma: Any = 1.0) -> Any:
        return _noise("gaussian", mu, sigma, "gauss", "sigma")

    def normalvariate(self, mu: Any = 0.0, sigma: Any = 1.0) -> Any:
        return _noise("gaussian", mu, sigma, "normalvariate", "sigma")

    def expovariate(self, lambd: Any = 1.0) -> Any:
        rate = _exact(lambd, "lambd", "expovariate")
        if not rate > 0:
            raise refuse(f"expovariate: lambd={lambd!r} must be positive for the exact audit",
                         "pass a positive rate")
        return _noise("exponential", 0, 1 / rate, "expovariate", "1/lambd")


class SystemRandomGenerator(RandomGenerator, random.SystemRandom):
    """Stands for ``random.SystemRandom`` (diffprivlib's ``random_state`` hook) in an implementation
    audited exactly: :class:`RandomGenerator`'s methods; SystemRandom's others are refused."""

    library = "random.SystemRandom"


def _refused(name: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return _Refusing.__getattr__(self, name)
    method.__name__ = name
    return method


for _name in dir(random.SystemRandom):  # inherited methods would run on the real generator's code paths
    if (not _name.startswith("_") and callable(getattr(random.SystemRandom, _name))
            and _name not in RandomGenerator.supported + ("seed",)):  # seed: the no-op Random.__init__ calls
        setattr(SystemRandomGenerator, _name, _refused(_name))
del _name


def _bisected(cum_weights: list, total: float, hi: int) -> int:
    """``bisect(cum_weights, random() * total, 0, hi)``, drawn exactly: the index as one categorical draw.

    The uniform's handle follows ``random() * total``; each comparison with a cumulative
    weight is one exact count, so the whole bisection is a sequence of exact Bernoulli draws
    whose product is the exact law (numpy's and CPython's ``bisect`` compare ``x < a[mid]``).
    """
    x = Uniform() * total
    lo = 0
    while lo < hi:
        mid = (lo + hi) // 2
        if x < cum_weights[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


__all__ = ["NumpyGenerator", "RandomGenerator", "SystemRandomGenerator", "choice_law"]
