"""``dp.implementation``: a user's unmodified function, run by the engine with an instrumented generator.

The user's code takes an injected ``numpy.random.Generator`` or ``random.Random`` (the
argument ``rng`` by default); :func:`implementation` turns it into a mechanism program that
the engine enumerates like any other: each run calls ``fn(data, **params, rng=<instrumented
generator>)`` (:mod:`.generators`), whose methods are the engine's draws.  Its claims are the
usual ones: ``dp.private(eps)``, and ``dp.conforms(spec_program)`` (same law as the spec's
program on every dataset).

When the engine cannot follow the code (``math.log(u)``, ``rng.gumbel()``, ``u * v``: a
:class:`~dpverify.errors.CannotFollow` naming the line), its claims fall back to the statistical
audit (``fallback=True``, the default; :mod:`dpverify.checks.audit.fallback`): the same function
sampled as a :class:`~.black_box.BlackBox`, with the real, seeded generator that the instrumented
one stands for (:data:`~.audited.REAL_GENERATORS`).

Parameters reach the code as exact numbers (ints, Fractions, sympy numbers): code that
computes ``math.exp(eps)`` gets a float, as deployed code does, and that float is exactly
what the law uses.  Outputs are read as Python values: numpy scalars become Python numbers
(``.item()``) and numpy arrays and lists become tuples, so that ``np.int64(1)`` and ``1`` are
one output.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Optional

from ..errors import SpecError, call_help
from .audited import AuditedCode, plain
from .black_box import BlackBox, black_box
from .generators import NumpyGenerator, RandomGenerator, SystemRandomGenerator

GENERATORS = {"numpy": NumpyGenerator, "random": RandomGenerator, "system_random": SystemRandomGenerator}


class Implementation(AuditedCode):
    """A mechanism program running ``fn`` with an instrumented generator (build with :func:`implementation`)."""

    def __init__(self, fn: Callable[..., Any], rng: str, rng_argument: str,
                 fallback: Optional[BlackBox] = None) -> None:
        super().__init__(fn, rng_argument, "implementation")
        self.rng, self.rng_argument = rng, rng_argument
        # the same function as a black box with a real seeded generator, sampled when the exact audit
        # cannot follow the code; None with fallback=False (the refusal is then an error)
        self.fallback = fallback

    def __call__(self, data: tuple, **params: Any) -> Any:
        return plain(self.fn(data, **params, **{self.rng_argument: GENERATORS[self.rng]()}))

    def __repr__(self) -> str:
        return f"dp.implementation({self.__name__}, rng={self.rng!r})"


@call_help("dp.implementation(my_function, rng='numpy')",
           fn="the implementation: a function (data, <parameters>, rng) drawing from rng",
           spec_program="the spec's program whose exact law picks what a private(eps) claim tests, when the "
                        "claim falls back to the statistical audit and the spec has no conforms(spec_program) claim",
           samples="runs per dataset when a claim falls back to the statistical audit (dp.black_box's default)",
           seed="the seed of the statistical audit's streams: same seed, same numbers",
           error="the statistical audit's overall error probability, e.g. Fraction(1, 10**9)",
           fallback="False: a construct the exact audit cannot follow stays an error (no statistical audit)")
def implementation(fn: Callable[..., Any], rng: str = "numpy", rng_argument: str = "rng", *,
                   spec_program: Optional[Callable[..., Any]] = None, samples: Optional[int] = None,
                   seed: Optional[int] = None, error: Any = None, fallback: bool = True) -> Implementation:
    """The user's function ``fn(data, **params, rng=...)`` as a mechanism program, audited exactly.

    ``rng="numpy"`` passes an instrumented ``numpy.random.Generator``, ``rng="random"`` an
    instrumented ``random.Random``, ``rng="system_random"`` the same as a subclass of
    ``random.SystemRandom`` (diffprivlib mechanisms take it as ``random_state`` unchanged), as the
    keyword argument ``rng_argument``.  Supported
    methods become exact draws (see :mod:`dpverify.dsl.generators`); anything the engine cannot
    follow is refused with the function's file and line, and then, with ``fallback=True`` (the
    default), the claims are decided by the statistical audit of the same function run with a real
    generator seeded from ``seed``: ``samples`` runs per dataset, refutations at overall error
    probability ``error`` (None: :func:`~.black_box.black_box`'s defaults).  A ``private`` claim
    tests the cells of the spec program's exact law: the spec's ``conforms(spec_program)`` claim's,
    else ``spec_program``.  With ``fallback=False`` the refusal is an error.

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
                        "use rng='numpy' (numpy.random.Generator), rng='random' (random.Random) or "
                        "rng='system_random' (a random.SystemRandom subclass: diffprivlib's random_state)")
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
    return Implementation(fn, rng, rng_argument, _fallback(fn, rng, rng_argument, spec_program, samples, seed,
                                                           error, fallback))


def _fallback(fn: Callable[..., Any], rng: str, rng_argument: str, spec_program: Optional[Callable[..., Any]],
              samples: Optional[int], seed: Optional[int], error: Any, fallback: bool) -> Optional[BlackBox]:
    """The black box the claims fall back to (its arguments checked now, by :func:`~.black_box.black_box`),
    or None for ``fallback=False``."""
    budget = {name: value for name, value in (("samples", samples), ("seed", seed), ("error", error))
              if value is not None}
    if not isinstance(fallback, bool):
        raise SpecError(f"implementation: fallback={fallback!r} is not True or False",
                        "pass fallback=True (decide by sampling what the exact audit cannot follow) or False")
    if not fallback:
        if budget or spec_program is not None:
            given = ", ".join(f"{k}=" for k in [*budget, *(["spec_program"] if spec_program is not None else [])])
            raise SpecError(f"implementation: {given} set the statistical audit, yet fallback=False",
                            f"leave {given} out, or let the claims fall back to sampling (fallback=True)")
        return None
    try:
        box = black_box(fn, spec_program=spec_program, rng_argument=rng_argument, **budget)
    except SpecError as err:
        err.problem = err.problem.replace("black_box:", "implementation:", 1)
        raise
    box.kind = rng  # the real generator REAL_GENERATORS makes for this kind, passed as rng_argument
    return box


__all__ = ["Implementation", "implementation"]
