"""The distributions of the primitives, written once against the backend interface.

Each primitive is a small immutable description built (and validated) by the
DSL function of the same name; ``branches(session)`` returns its finite list
of ``(value, weight)`` pairs with positive weight, in the session's backend.
Where the arguments are plain data, the result is cached in the session so
that datasets offering the same arguments share one computation.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import sympy

from ..errors import SpecError
from .backend import exact_float
from .enumerate import Runner, Session
from .tails import TailInt, engine_keys, geometric_at_least, geometric_at_most

Branches = list


def _exact_score(value: Any, what: str) -> Any:
    """A score as an exact hashable number when it is one (ints, Fractions, decimals)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, Fraction):
        return value
    if isinstance(value, float):
        return exact_float(value)
    if isinstance(value, sympy.Rational):
        return Fraction(int(value.p), int(value.q))
    return value


def _cached(session: Session, key: Hashable, compute: Callable[[], Branches]) -> Branches:
    try:
        return session.cache[key]
    except KeyError:
        result = session.cache[key] = compute()
        return result
    except TypeError:  # an argument that is not hashable: compute without the cache
        return compute()


def _nonzero(session: Session, branches: list) -> Branches:
    """Drop branches of exactly zero weight (zeros are decided exactly when the weights are converted:
    see the backends); merge equal values."""
    merged: dict = {}
    with engine_keys():  # lumped geometric tails are values here
        for value, weight in branches:
            if session.backend.is_zero(weight):
                continue
            merged[value] = merged[value] + weight if value in merged else weight
    return list(merged.items())


DERIVED = "derived-sensitivity"
"""Session-cache key prefix under which an exponential mechanism records a derived sensitivity."""


@dataclass(frozen=True)
class Exponential:
    """Output y in ``candidates`` with probability proportional to exp(eps*u(y)/(2*sensitivity)).

    ``derived`` is set when the program omitted the sensitivity and the DSL
    derived it from the score: a note saying so, kept in the session (see
    :func:`derived_notes`) for the reports.
    """

    candidates: tuple
    score: Callable[[Any], Any]
    eps: Any
    sensitivity: Any
    name: str = "exponential"
    derived: Optional[str] = None

    def branches(self, session: Session) -> Branches:
        backend = session.backend
        if self.derived is not None:
            query = getattr(self.score, "query", self.score)
            session.cache[(DERIVED, id(query))] = (query, self.derived)
        scores = tuple(_exact_score(self.score(c), f"score({c!r})") for c in self.candidates)
        eps = _positive(backend, self.eps, "eps", "exponential")
        sens = _positive(backend, self.sensitivity, "sensitivity", "exponential")
        key = ("exponential", self.candidates, tuple(_key(backend, s) for s in scores),
               backend.key(eps), backend.key(sens))

        def compute() -> Branches:
            exact = all(isinstance(s, (int, Fraction)) for s in scores)
            top = max(scores) if exact else 0
            weights = [backend.exp(eps * backend.num(s - top) / (2 * sens)) for s in scores]
            total = sum(weights[1:], weights[0])
            return _nonzero(session, [(c, w / total) for c, w in zip(self.candidates, weights)])
        return _cached(session, key, compute)


def derived_notes(session: Session) -> list[tuple[Any, str]]:
    """(score, note) for every exponential mechanism of the session that derived its Delta."""
    return [entry for key, entry in session.cache.items()
            if isinstance(key, tuple) and len(key) == 2 and key[0] == DERIVED]


def _positive(backend: Any, value: Any, what: str, fn: str) -> Any:
    number = backend.num(value)
    if backend.sign(number) in (0, -1):  # None: a symbolic reading that cannot tell
        raise SpecError(f"{fn}: {what}={value} must be positive",
                        f"pass a {what} > 0 (a grid value or an expression in the parameters)")
    return number


def _key(backend: Any, value: Any) -> Hashable:
    return value if isinstance(value, (int, Fraction)) else backend.key(value)


@dataclass(frozen=True)
class RandomizedResponse:
    """Report the true value with probability e^eps/(e^eps + k - 1), each other value otherwise."""

    value: Hashable
    eps: Any
    values: tuple
    name: str = "randomized_response"

    def branches(self, session: Session) -> Branches:
        backend = session.backend
        eps = _positive(backend, self.eps, "eps", "randomized_response")
        key = ("rr", self.value, self.values, backend.key(eps))

        def compute() -> Branches:
            keep = backend.exp(eps)
            total = keep + (len(self.values) - 1)
            return _nonzero(session, [(v, (keep if v == self.value else backend.num(1)) / total)
                                       for v in self.values])
        return _cached(session, key, compute)


@dataclass(frozen=True)
class Categorical:
    """A finite distribution given as (value, probability) pairs, checked to sum to 1."""

    items: tuple
    name: str = "categorical"

    def branches(self, session: Session) -> Branches:
        backend = session.backend
        weights = [(v, backend.num(p)) for v, p in self.items]
        if not backend.validates:
            return _nonzero(session, weights)
        for value, weight in weights:
            if backend.sign(weight) == -1:
                raise SpecError(f"{self.name}: the probability of {value!r} is negative ({weight})",
                                "probabilities must lie in [0, 1]")
        total = sum((w for _, w in weights[1:]), weights[0][1])
        if backend.sign(total - 1) not in (0, None):
            raise SpecError(f"{self.name}: the probabilities sum to {total}, not 1",
                            "make the probabilities sum to exactly 1")
        return _nonzero(session, weights)


@dataclass(frozen=True)
class Subset:
    """A uniformly random m-subset of the records (by position), in their original order."""

    data: tuple
    m: int
    name: str = "subset"

    def branches(self, session: Session) -> Branches:
        counts: dict = {}
        for positions in itertools.combinations(range(len(self.data)), self.m):
            chosen = tuple(self.data[i] for i in positions)
            counts[chosen] = counts.get(chosen, 0) + 1
        total = math.comb(len(self.data), self.m)
        return [(v, session.backend.num(Fraction(c, total))) for v, c in counts.items()]


@dataclass(frozen=True)
class Geometric:
    """value + Z, P(Z = k) = (a-1)/(a+1) a^-|k|, optionally clamped into [lower, upper].

    Unclamped sides are lumped exactly beyond the window of centres seen at
    this call site (``site``); see :mod:`.tails`.
    """

    value: int
    a: Any
    lower: int | None
    upper: int | None
    site: Hashable
    name: str = "geometric"

    def branches(self, session: Session) -> Branches:
        backend = session.backend
        a = backend.num(self.a)
        if backend.sign(a - 1) in (0, -1):
            raise SpecError(f"geometric: a={self.a} must be > 1", "use a = exp(eps / sensitivity) > 1")
        lo = hi = None
        if self.lower is None or self.upper is None:
            base = session.bases.setdefault(self.site, backend.key(a))
            if base != backend.key(a):
                raise SpecError("geometric: the noise base a at this line differs between datasets, "
                                "so its unclamped tails cannot be lumped exactly",
                                "make a depend on the parameters only, or clamp the output")
            window = session.windows.setdefault(self.site, [self.value, self.value])
            if self.value < window[0] or self.value > window[1]:
                window[0], window[1] = min(window[0], self.value), max(window[1], self.value)
                session.window_version += 1
            lo, hi = window
        first = self.lower if self.lower is not None else min(lo, self.upper if self.upper is not None else lo) - 1
        last = self.upper if self.upper is not None else max(hi, first) + 1
        key = ("geometric", self.value, backend.key(a), first, last, self.lower is None, self.upper is None)

        def compute() -> Branches:
            if first == last:
                return [(first, backend.num(1))]
            c = (a - 1) / (a + 1)
            out = [(first if self.lower is not None else TailInt(first, -1),
                    geometric_at_most(a, first - self.value))]
            out += [(k, c * a ** (-abs(k - self.value))) for k in range(first + 1, last)]
            out.append((last if self.upper is not None else TailInt(last, 1),
                        geometric_at_least(a, last - self.value)))
            return _nonzero(session, out)
        return _cached(session, key, compute)


class _Rejected:
    """The type of :data:`REJECTED`."""

    def __repr__(self) -> str:
        return "REJECTED"


REJECTED = _Rejected()
"""Returned by a rejection loop's attempt to ask for another round."""


@dataclass(frozen=True)
class RejectionLoop:
    """Repeat ``attempt`` until it returns something other than REJECTED.

    Analysed as the loop's fixed point: when each round is independent of the
    previous ones, the output law is the attempt's law conditioned on
    acceptance, P(v) = P_attempt(v) / P_attempt(accepted) -- exactly, with no
    unrolling.  A loop that accepts with probability 0 never terminates and is
    an error.
    """

    attempt: Callable[[], Any]
    name: str = "repeat_until_accepted"

    def branches(self, session: Session) -> Branches:
        law = Runner(session).distribution(self.attempt)
        law.pop(REJECTED, None)
        if not law:
            raise SpecError("repeat_until_accepted: the attempt never accepts, so the loop never ends",
                            "make some outcome of the attempt accepted with positive probability")
        accepted = sum(list(law.values())[1:], list(law.values())[0])
        return [(value, weight / accepted) for value, weight in law.items()]
