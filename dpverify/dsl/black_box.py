"""``dp.black_box``: code the engine cannot follow, audited by sampling it, seeded and reproducible.

Code that draws from its own generator (``np.random.default_rng(seed)`` inside, a library's
sampler in Rust) cannot be enumerated; it can be run.  :func:`black_box` declares such a
function; its claims ``dp.conforms(spec_program)`` and ``dp.private(eps)`` (or ``dp.private(eps,
delta)``) are decided by the
statistical audit (:mod:`dpverify.checks.audit.statistical`) against the spec program's
exact law, which the engine computes.  Statistical evidence never says ``verified``: a passing
audit is ``consistent`` (at a stated error probability), a failing one ``refuted`` at that
error probability, after an independent re-run with fresh seeds reproduces it.

Runs are reproducible: the function must take its randomness as an argument, either a
``numpy.random.Generator`` (``rng_argument``, "rng" by default) or an integer seed
(``seed_argument``).  Each (dataset, run) gets one generator,
``np.random.default_rng([seed, run, dataset index, crc32 of the parameter values])``, passed to each of its ``samples``
calls (or a fresh 63-bit seed drawn from it per call).  Numpy's global state is never used.
Code that cannot be seeded at all (OpenDP's samplers draw from the operating system's entropy)
is declared with ``unseeded=True``: it is sampled as it is, and every message says that its
numbers are not reproducible.

Parameters reach the code as deployed code gets them: integers as ``int``, other numbers as
``float``.  Outputs are read as Python values (numpy scalars become numbers, arrays tuples).
"""
from __future__ import annotations

import inspect
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import Any, Optional

import numpy as np
import sympy

from ..errors import SpecError, call_help
from .audited import REAL_GENERATORS, AuditedCode, plain

SAMPLES = 20_000
ERROR = Fraction(1, 10 ** 9)


class BlackBox(AuditedCode):
    """A function sampled, never enumerated (build with :func:`black_box`)."""

    def __init__(self, fn: Callable[..., Any], spec_program: Optional[Callable[..., Any]], samples: int,
                 seed: int, error: Fraction, cells: int, argument: str, kind: str) -> None:
        super().__init__(fn, argument, "black_box")
        self.spec_program, self.samples, self.seed = spec_program, samples, seed
        self.error, self.cells, self.argument, self.kind = error, cells, argument, kind

    def __call__(self, data: tuple, **params: Any) -> Any:
        raise SpecError(f"{self!r} is sampled by the statistical audit, not run by the engine",
                        "claim dp.conforms(spec_program) or dp.private(eps) about it",
                        file=self.fn.__code__.co_filename, line=self.fn.__code__.co_firstlineno)

    def sample(self, data: tuple, params: Mapping[str, Any], run: int, index: int) -> Counter:
        """The outputs of ``samples`` calls on ``data``, from the stream of (seed, run, dataset index,
        parameter values): each grid point samples afresh."""
        draws = self.draws(data, params, run, index)
        return Counter(next(draws) for _ in range(self.samples))

    def draws(self, data: tuple, params: Mapping[str, Any], run: int, index: int) -> Iterator[Any]:
        """The outputs of successive calls on ``data``, one by one, from the stream of (seed, run, dataset
        index, parameter values): the first ``samples`` of them are :meth:`sample`'s, in its order (a
        sequential test reads a prefix and goes on where it stopped)."""
        point = zlib.crc32(repr(sorted((k, str(v)) for k, v in params.items())).encode())
        stream = np.random.default_rng([self.seed, run, index, point])
        # kind "rng": the stream itself; a dp.implementation's kind (its fallback): the real generator it stands for
        generator = REAL_GENERATORS[self.kind](stream) if self.kind in REAL_GENERATORS else stream
        values = {name: deployed(value) for name, value in params.items()}
        while True:
            source = {} if self.kind == "unseeded" else {
                self.argument: int(stream.integers(2 ** 63)) if self.kind == "seed" else generator}
            try:
                output = plain(self.fn(data, **values, **source))
            except Exception as exc:
                raise SpecError(f"black box {self.__name__} failed on dataset {data!r}: "
                                f"{type(exc).__name__}: {exc}",
                                "the function must return an output (a number, a tuple of numbers, ...) "
                                "for every dataset of the universe",
                                file=self.fn.__code__.co_filename, line=self.fn.__code__.co_firstlineno) from None
            yield output

    @property
    def seeded(self) -> str:
        """How the runs are seeded, for messages."""
        return "unseeded: not reproducible" if self.kind == "unseeded" else f"seed {self.seed}"

    def __repr__(self) -> str:
        return (f"dp.black_box({self.__name__}, samples={self.samples}, "
                + ("unseeded=True)" if self.kind == "unseeded" else f"seed={self.seed})"))


def deployed(value: Any) -> Any:
    """A parameter as deployed code gets it: an int for an integer, else a float."""
    if isinstance(value, (int, float)):
        return value
    number = sympy.sympify(value)
    return int(number) if number.is_integer else float(number)


def _argument(names: list[str], rng_argument: Optional[str], seed_argument: Optional[str],
              name: str, unseeded: bool) -> tuple[str, str]:
    if unseeded:
        if rng_argument or seed_argument or "rng" in names or "seed" in names:
            raise SpecError(f"black_box: {name} takes its randomness as an argument, yet unseeded=True",
                            "leave unseeded out: seeded runs are reproducible")
        return "", "unseeded"
    if rng_argument and seed_argument:
        raise SpecError("black_box: give rng_argument or seed_argument, not both",
                        "name the one argument through which the function takes its randomness")
    if rng_argument or seed_argument:
        argument, kind = (rng_argument, "rng") if rng_argument else (seed_argument, "seed")
    elif "rng" in names:
        argument, kind = "rng", "rng"
    elif "seed" in names:
        argument, kind = "seed", "seed"
    else:
        raise SpecError(f"black_box: {name}({', '.join(names)}) takes no generator and no seed, so its "
                        "runs cannot be reproduced",
                        "take the randomness as an argument: def impl(data, eps, rng): ... drawing from rng "
                        "(a numpy Generator), or def impl(data, eps, seed): ...; name it with "
                        "rng_argument=/seed_argument=; for code that cannot be seeded at all (a "
                        "library's sampler), declare unseeded=True")
    if argument not in names:
        raise SpecError(f"black_box: {name}({', '.join(names)}) has no argument {argument!r}",
                        "name the argument that carries the randomness with rng_argument= or seed_argument=")
    if names[0] == argument:
        raise SpecError(f"black_box: the first argument of {name} is its randomness",
                        "the first argument is the dataset: def impl(data, eps, rng): ...")
    return argument, kind


@call_help("dp.black_box(my_function, spec_program=my_spec, samples=20_000, seed=0)",
           fn="the code: a function (data, <parameters>, rng) drawing from rng, or (data, ..., seed)",
           spec_program="the spec's program whose exact law picks the pair and events a private(...) claim tests",
           samples="runs per dataset (and again for the confirming re-run): the audit's budget",
           seed="the seed of every stream: same seed, same verdict and numbers",
           error="the overall error probability of a refutation, e.g. Fraction(1, 10**9)",
           cells="how many events (outputs, sets of outputs, half-lines) a private(...) claim tests, chosen "
                 "from the spec's exact law by their power at the sample count",
           unseeded="True for code that cannot be seeded (its numbers are then not reproducible)")
def black_box(fn: Callable[..., Any], *, spec_program: Optional[Callable[..., Any]] = None,
              samples: int = SAMPLES, seed: int = 0, error: Any = ERROR, cells: int = 3,
              rng_argument: Optional[str] = None, seed_argument: Optional[str] = None,
              unseeded: bool = False) -> BlackBox:
    """Code audited by sampling: ``fn(data, **params, rng=<numpy Generator>)`` or ``fn(..., seed=<int>)``.

    ``samples`` runs per dataset of the universe (the budget is a count, not a clock); a
    refutation is stated at overall error probability ``error`` (Bonferroni over every test the
    claim makes) and confirmed by a re-run with fresh seeds.  ``private(eps)`` and ``private(eps, delta)``
    claims test ``cells`` events (single outputs, sets of outputs ordered by likelihood ratio, for
    real outputs half-lines) chosen from ``spec_program``'s exact law by their power at ``samples``,
    so it must be given for them.  Outputs may be discrete (finite, or unbounded integers as from
    ``dp.geometric``) or real numbers and tuples of them (tested against the spec's exact CDF).

    >>> import dpverify as dp
    >>> def coin(data, eps, rng):
    ...     return data[0] if rng.random() < 0.75 else 1 - data[0]
    >>> dp.black_box(coin, samples=1000)
    dp.black_box(coin, samples=1000, seed=0)
    """
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise SpecError(f"black_box: fn={fn!r} is not a Python function",
                        "wrap the code in a function: def impl(data, eps, rng): return library_call(...)")
    if spec_program is not None and not callable(spec_program):
        raise SpecError(f"black_box: spec_program={spec_program!r} is not callable",
                        "pass the spec's mechanism function, e.g. spec_program=randomized_response")
    for what, value, low in (("samples", samples, 1), ("seed", seed, 0), ("cells", cells, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise SpecError(f"black_box: {what}={value!r} is not an integer >= {low}", f"pass {what} as an int")
    if samples > 10 ** 7:
        raise SpecError(f"black_box: samples={samples:,} is above the limit of 10,000,000",
                        "use fewer samples per dataset")
    if isinstance(error, float) or not isinstance(error, (int, Fraction, sympy.Rational)):
        raise SpecError(f"black_box: error={error!r} is not an exact number",
                        "pass an exact probability, e.g. error=Fraction(1, 10**9)")
    error = Fraction(str(error))
    if not 0 < error < 1:
        raise SpecError(f"black_box: error={error} is not a probability in (0, 1)",
                        "pass a small probability, e.g. error=Fraction(1, 10**9)")
    names = list(inspect.signature(fn).parameters)
    argument, kind = _argument(names, rng_argument, seed_argument, fn.__name__, unseeded)
    return BlackBox(fn, spec_program, samples, seed, error, cells, argument, kind)


__all__ = ["BlackBox", "black_box"]
