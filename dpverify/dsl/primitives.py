"""The primitives a mechanism program calls, and math that works in every reading.

Each function validates its arguments eagerly (one clear error naming the
argument, its value and the fix) and hands a description of its law
(:mod:`.laws`) to the engine through the DSL's port (:mod:`.port`); the engine
chooses a branch.  Outside a mechanism run they raise, because a draw only has
meaning while the engine enumerates a program.

``exp``, ``log`` and ``sqrt`` compute exactly (sympy numbers) in every reading,
as the parameters a program receives are exact in every reading (see
:mod:`dpverify.engine.program.parameter`); the primitives convert probabilities to the
reading's arithmetic.  Write ``dp.exp(eps)`` rather than ``math.exp(eps)``.
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import Any, Optional, TypeVar

import sympy

from ..errors import SpecError
from . import port
from .exact import exact_float
from .laws import REJECTED, Categorical, Exponential, Geometric, RandomizedResponse, RejectionLoop, Subset
from .queries import BoundScore, Query
from .universe import Neighbours

T = TypeVar("T")


def _draw(name: str, make: Callable[[], Any]) -> Any:
    """Let the engine's active run choose a branch of the law ``make()`` describes."""
    return port.engine().draw(name, make)


def _finite_choices(values: Iterable[T], what: str, fn: str) -> tuple[T, ...]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__") or not hasattr(values, "__len__"):
        raise SpecError(f"{fn}: {what} must be a finite collection, got {type(values).__name__}",
                        f"pass {what} as a list or tuple")
    values = tuple(values)
    if not values:
        raise SpecError(f"{fn}: {what} is empty", f"give {fn} at least one {what[:-1] if what.endswith('s') else what}")
    for value in values:
        try:
            hash(value)
        except TypeError:
            raise SpecError(f"{fn}: {value!r} in {what} is not hashable",
                            "use tuples instead of lists") from None
    return values


def exp(x: Any) -> Any:
    """e**x, exact (a sympy number), in every reading: the program's own values stay exact."""
    return port.engine().exact_math(sympy.exp, x)


def log(x: Any) -> Any:
    """The natural logarithm, exact (a sympy number), in every reading."""
    return port.engine().exact_math(sympy.log, x)


def sqrt(x: Any) -> Any:
    """The square root, exact (a sympy number), in every reading."""
    return port.engine().exact_math(sympy.sqrt, x)


def exponential(candidates: Iterable[T], score: Callable[[T], Any], eps: Any, *,
                sensitivity: Any = None, neighbours: Optional[Neighbours] = None) -> T:
    """The exponential mechanism: y with probability proportional to exp(eps*u(y)/(2*sensitivity)).

    ``score`` maps a candidate to a real number (int, Fraction, sympy
    Rational); ``sensitivity`` is the score's global sensitivity Delta as the
    spec states it.  (McSherry and Talwar 2007.)

    With ``sensitivity`` omitted, the score must be a query object bound to
    the dataset (``score.on(data)``, the score built with ``dp.mean`` etc. and
    a ``domain=``), and ``neighbours`` names the relation: Delta is then
    derived by the engine (:meth:`.port.Engine.runtime_sensitivity`) as
    max over the candidates of the score's sensitivity -- Delta(len(data)) under
    replace-one and label-only, sup over n of Delta(n) under add/remove.
    """
    def make() -> Exponential:
        choices = _finite_choices(candidates, "candidates", "exponential")
        if not callable(score):
            raise SpecError(f"exponential: score={score!r} is not callable",
                            "pass a function candidate -> number, e.g. lambda y: -errors(y)")
        if sensitivity is not None:
            return Exponential(choices, score, eps, sensitivity)
        value, note = _derived_sensitivity(score, choices, neighbours)
        return Exponential(choices, score, eps, value, derived=note)
    return _draw("exponential", make)


def _derived_sensitivity(score: Any, choices: tuple, neighbours: Any) -> tuple[Any, str]:
    if isinstance(score, Query):
        raise SpecError("exponential: score is a score not yet bound to the dataset",
                        "pass score.on(data), the score u(data, .) as a function of the candidate")
    if not isinstance(score, BoundScore):
        raise SpecError(f"exponential: sensitivity omitted, but score={getattr(score, '__name__', score)!r} "
                        "is a plain function, whose sensitivity cannot be derived",
                        "pass sensitivity=... (the score's global sensitivity), or build the score with "
                        "dp.count/dp.total/dp.mean/dp.max_of/dp.min_of(..., domain=RECORDS) and pass "
                        "score.on(data)")
    if not isinstance(neighbours, Neighbours):
        raise SpecError(f"exponential: sensitivity omitted and neighbours={neighbours!r}: the derived "
                        "sensitivity depends on the neighbour relation",
                        "pass neighbours=dp.REPLACE_ONE (or the relation of the spec's universe), or "
                        "pass sensitivity=...")
    try:
        return port.engine().runtime_sensitivity(score.query, choices, neighbours, len(score.data))
    except port.NotDerivable as err:
        raise SpecError(f"exponential: cannot derive the score's sensitivity: {err}",
                        "pass sensitivity=... explicitly, or declare the score's domain= and build it "
                        "from counts, totals, means or max/min") from None


def randomized_response(value: T, eps: Any, values: Iterable[T] = (0, 1)) -> T:
    """Keep ``value`` with probability e^eps/(e^eps + k - 1), else report one of the k-1 others.

    For a bit (k = 2) this is Warner's randomized response: keep with
    probability e^eps/(1 + e^eps).
    """
    def make() -> RandomizedResponse:
        choices = _finite_choices(values, "values", "randomized_response")
        if len(choices) < 2 or len(set(choices)) != len(choices):
            raise SpecError(f"randomized_response: values={choices!r} must list at least two distinct values",
                            "use values=(0, 1) for a bit")
        if value not in choices:
            raise SpecError(f"randomized_response: value={value!r} is not one of values={choices!r}",
                            "pass the record's value, or list every possible value in values=")
        return RandomizedResponse(value, eps, choices)
    return _draw("randomized_response", make)


def bernoulli(p: Any) -> bool:
    """True with probability p, False with probability 1 - p (0 <= p <= 1)."""
    return _draw("bernoulli", lambda: Categorical(((True, p), (False, _one_minus(p))), name="bernoulli"))


def _one_minus(p: Any) -> Any:
    if isinstance(p, bool):
        raise SpecError(f"bernoulli: p={p!r} is a bool", "pass a probability such as Fraction(1, 3)")
    if isinstance(p, float):
        p = exact_float(p)
    if isinstance(p, (int, Fraction)) and not 0 <= p <= 1:
        raise SpecError(f"bernoulli: p={p} is not a probability", "use 0 <= p <= 1")
    return 1 - p


def categorical(probabilities: Mapping[T, Any]) -> T:
    """A value drawn with the given probabilities, which must sum to exactly 1."""
    def make() -> Categorical:
        if not isinstance(probabilities, Mapping) or not probabilities:
            raise SpecError(f"categorical: expected a non-empty mapping value -> probability, "
                            f"got {probabilities!r}", "pass e.g. {'a': Fraction(1, 2), 'b': Fraction(1, 2)}")
        return Categorical(tuple(probabilities.items()))
    return _draw("categorical", make)


def uniform(choices: Iterable[T]) -> T:
    """A uniformly random element of ``choices`` (repeats count with their multiplicity)."""
    def make() -> Categorical:
        values = _finite_choices(choices, "choices", "uniform")
        return Categorical(tuple((v, Fraction(1, len(values))) for v in values), name="uniform")
    return _draw("uniform", make)


def subset(data: Iterable[T], m: int) -> tuple[T, ...]:
    """A uniformly random m-subset of the records (chosen by position), in their order."""
    def make() -> Subset:
        records = tuple(data)
        if isinstance(m, bool) or not isinstance(m, int) or not 0 <= m <= len(records):
            raise SpecError(f"subset: m={m!r} must be an int between 0 and len(data)={len(records)}",
                            "choose a subset size that fits every dataset of the universe")
        return Subset(records, m)
    return _draw("subset", make)


def geometric(value: int, a: Any, *, lower: Optional[int] = None, upper: Optional[int] = None) -> Any:
    """value + Z with two-sided geometric Z: P(Z = k) = (a-1)/(a+1) * a^-|k| for every integer k.

    ``a > 1``; for an integer query of sensitivity Delta, a = exp(eps/Delta)
    gives eps-DP.  ``lower``/``upper`` clamp the output into a range (the
    clamped ends carry the closed-form tail mass).  An unclamped side keeps its
    infinite tail, lumped exactly beyond the values seen (see dpverify.engine.continuous.tails): the
    program may return such an output but not compute with it.
    """
    caller = sys._getframe(1)
    site = (caller.f_code.co_filename, caller.f_lineno)

    def make() -> Geometric:
        number = int(value) if isinstance(value, sympy.Integer) else value
        if isinstance(number, bool) or not isinstance(number, int):
            raise SpecError(f"geometric: value={value!r} must be an int", "add geometric noise to integer queries")
        for name, bound in (("lower", lower), ("upper", upper)):
            if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int)):
                raise SpecError(f"geometric: {name}={bound!r} must be an int or None", f"use {name}=0 or similar")
        if lower is not None and upper is not None and lower > upper:
            raise SpecError(f"geometric: lower={lower} > upper={upper}", "swap the bounds")
        return Geometric(number, a, lower, upper, site)
    return _draw("geometric", make)


def repeat_until_accepted(attempt: Callable[[], Any]) -> Any:
    """Run ``attempt()`` until it returns something other than ``dp.REJECTED``.

    Analysed exactly as the loop's fixed point (the attempt's law conditioned
    on acceptance), so the rounds must not depend on each other.
    """
    def make() -> RejectionLoop:
        if not callable(attempt):
            raise SpecError(f"repeat_until_accepted: attempt={attempt!r} is not callable",
                            "pass a function with no arguments that returns a value or dp.REJECTED")
        return RejectionLoop(attempt)
    return _draw("repeat_until_accepted", make)


__all__ = ["REJECTED", "bernoulli", "categorical", "exp", "exponential", "geometric", "log",
           "randomized_response", "repeat_until_accepted", "sqrt", "subset", "uniform"]
