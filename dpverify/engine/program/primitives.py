"""The distributions of the primitives, written once against the backend interface.

Each primitive is a small immutable description (:mod:`dpverify.dsl.laws`)
built and validated by the DSL function of the same name; the function here
registered for its type returns its finite list of ``(value, weight)`` pairs
with positive weight, in the session's backend.  Where the arguments are
plain data, the result is cached in the session so that datasets offering the
same arguments share one computation; the key compares arguments by exact type
and value (see :func:`_exact`), never by ``==`` alone.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable
from fractions import Fraction
from typing import Any

import sympy

from ...dsl import laws
from ...dsl.exact import exact_float
from ...errors import SpecError
from .backend import SympyBackend, is_exactly_zero
from .enumerate import LAWS, Runner, Session
from ..continuous.tails import TailInt, engine_keys, geometric_at_least, geometric_at_most

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


class _NoKey(Exception):
    """An argument without an exact key: the primitive is computed afresh, not cached."""


_LEAVES = frozenset({int, bool, str, bytes, Fraction, type(None)})


def _exact(value: Any) -> Hashable:
    """A cache key equal only for arguments of the same exact types and values, leaf by leaf (plain
    ints, bools, strings, Fractions, None, floats by their text, sympy objects, tuples and frozensets of
    them); raises :class:`_NoKey` for anything else.  Keys by ``==`` alone let one dataset reuse another's
    list: (1, 0) equals (True, False), a user's class may leave a field out of its ``==``, and an int
    subclass may equal everything -- then an output or a score that tells the record apart was taken
    from the other dataset's computation (a non-private mechanism came out proved)."""
    kind = type(value)
    if kind in _LEAVES:
        return (kind, value)
    if kind is tuple:
        return (kind, tuple(_exact(x) for x in value))
    if kind is float:
        return (kind, repr(value))
    if kind is frozenset:
        return (kind, frozenset(_exact(x) for x in value))
    if isinstance(value, sympy.Basic) and (kind.__module__ or "").split(".")[0] == "sympy":
        return (kind, value)
    raise _NoKey


def _cached(session: Session, key: Callable[[], Hashable], compute: Callable[[], Branches]) -> Branches:
    """``compute()``, shared through the session under the exact key ``key()``; computed afresh when an
    argument has no exact key (see :func:`_exact`) or is not hashable."""
    try:
        exact = key()
        found = session.cache.get(exact)
    except (_NoKey, TypeError):
        return compute()
    if found is None:
        found = session.cache[exact] = compute()
    return found


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


def _exponential(law: laws.Exponential, session: Session) -> Branches:
    """P(y) = exp(eps*u(y)/(2 Delta)) / sum_z exp(eps*u(z)/(2 Delta)); a derived Delta's note is kept
    in the session (see :func:`derived_notes`) for the reports."""
    backend = session.backend
    if law.derived is not None:
        query = getattr(law.score, "query", law.score)
        session.cache[(DERIVED, id(query))] = (query, law.derived)
    scores = tuple(_exact_score(law.score(c), f"score({c!r})") for c in law.candidates)
    eps = _positive(backend, law.eps, "eps", "exponential")
    sens = _positive(backend, law.sensitivity, "sensitivity", "exponential")
    def key() -> Hashable:
        return ("exponential", _exact(law.candidates), tuple(_key(backend, s) for s in scores),
                backend.key(eps), backend.key(sens))

    def compute() -> Branches:
        exact = all(isinstance(s, (int, Fraction)) for s in scores)
        top = max(scores) if exact else 0
        weights = [backend.exp(eps * backend.num(s - top) / (2 * sens)) for s in scores]
        total = sum(weights[1:], weights[0])
        return _nonzero(session, [(c, w / total) for c, w in zip(law.candidates, weights)])
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
    """A score's cache key: exact for ints and Fractions, the backend's weight key for sympy numbers
    (the computation reads the score through that weight); no key (:class:`_NoKey`) for anything else,
    e.g. an int subclass whose ``==`` holds for every number."""
    if type(value) in (int, Fraction):
        return (type(value), value)
    if isinstance(value, sympy.Basic) and (type(value).__module__ or "").split(".")[0] == "sympy":
        return backend.key(value)
    raise _NoKey


def _randomized_response(law: laws.RandomizedResponse, session: Session) -> Branches:
    """The true value with probability e^eps/(e^eps + k - 1), each of the k - 1 others with 1/(e^eps + k - 1)."""
    backend = session.backend
    eps = _positive(backend, law.eps, "eps", "randomized_response")
    def key() -> Hashable:
        return ("rr", _exact(law.value), _exact(law.values), backend.key(eps))

    def compute() -> Branches:
        keep = backend.exp(eps)
        total = keep + (len(law.values) - 1)
        return _nonzero(session, [(v, (keep if v == law.value else backend.num(1)) / total)
                                   for v in law.values])
    return _cached(session, key, compute)


def _categorical(law: laws.Categorical, session: Session) -> Branches:
    """The given (value, probability) pairs, checked to lie in [0, 1] and sum to 1 where the reading
    validates."""
    backend = session.backend
    weights = [(v, backend.num(p)) for v, p in law.items]
    if not backend.validates:
        return _nonzero(session, weights)
    for value, weight in weights:
        if backend.sign(weight) == -1:
            raise SpecError(f"{law.name}: the probability of {value!r} is negative ({weight})",
                            "probabilities must lie in [0, 1]")
    total = sum((w for _, w in weights[1:]), weights[0][1])
    if backend.sign(total - 1) not in (0, None):
        raise SpecError(f"{law.name}: the probabilities sum to {total}, not 1",
                        "make the probabilities sum to exactly 1")
    return _nonzero(session, weights)


def _subset(law: laws.Subset, session: Session) -> Branches:
    """Each m-subset of positions with probability 1/C(n, m), equal record tuples merged."""
    counts: dict = {}
    for positions in itertools.combinations(range(len(law.data)), law.m):
        chosen = tuple(law.data[i] for i in positions)
        counts[chosen] = counts.get(chosen, 0) + 1
    total = math.comb(len(law.data), law.m)
    return [(v, session.backend.num(Fraction(c, total))) for v, c in counts.items()]


def _same_base(first: tuple, other: tuple) -> bool:
    """Whether two (key, exact value or None when the key pins the value down) of a geometric base are the
    same number: the keys differ, no; equal pinned keys, yes; equal enclosures that are not points prove
    nothing (lumping the tails of two bases 10^-60 apart as one hides an unbounded privacy loss), so then
    the exact values must be equal or differ by an exact zero."""
    if first[0] != other[0]:
        return False
    x, y = first[1], other[1]
    if x is None or y is None or x is y or x == y:
        return True
    exact = SympyBackend()
    return is_exactly_zero(exact.num(x) - exact.num(y))


def _geometric(law: laws.Geometric, session: Session) -> Branches:
    """value + Z, P(Z = k) = (a-1)/(a+1) a^-|k|, clamped sides carrying their tail mass; unclamped sides
    lumped exactly beyond the window of centres seen at the call site (see :mod:`.tails`)."""
    backend = session.backend
    a = backend.num(law.a)
    if backend.sign(a - 1) in (0, -1):
        raise SpecError(f"geometric: a={law.a} must be > 1", "use a = exp(eps / sensitivity) > 1")
    lo = hi = None
    if law.lower is None or law.upper is None:
        here = (backend.key(a), None if backend.exact_key(a) is not None else law.a)
        base = session.bases.setdefault(law.site, here)
        if not _same_base(base, here):
            raise SpecError("geometric: the noise base a at this line differs between datasets, "
                            "so its unclamped tails cannot be lumped exactly",
                            "make a depend on the parameters only, or clamp the output")
        window = session.windows.setdefault(law.site, [law.value, law.value])
        if law.value < window[0] or law.value > window[1]:
            window[0], window[1] = min(window[0], law.value), max(window[1], law.value)
            session.window_version += 1
        lo, hi = window
    first = law.lower if law.lower is not None else min(lo, law.upper if law.upper is not None else lo) - 1
    last = law.upper if law.upper is not None else max(hi, first) + 1
    def key() -> Hashable:
        return ("geometric", _exact(law.value), backend.key(a), _exact(first), _exact(last),
                law.lower is None, law.upper is None)

    def compute() -> Branches:
        if first == last:
            return [(first, backend.num(1))]
        c = (a - 1) / (a + 1)
        out = [(first if law.lower is not None else TailInt(first, -1),
                geometric_at_most(a, first - law.value))]
        out += [(k, c * a ** (-abs(k - law.value))) for k in range(first + 1, last)]
        out.append((last if law.upper is not None else TailInt(last, 1),
                    geometric_at_least(a, last - law.value)))
        return _nonzero(session, out)
    return _cached(session, key, compute)


def _rejection_loop(law: laws.RejectionLoop, session: Session) -> Branches:
    """The attempt's law conditioned on acceptance, P(v) = P_attempt(v) / P_attempt(accepted): the
    loop's fixed point when rounds are independent.  A loop that accepts with probability 0 never
    terminates and is an error."""
    law_of_attempt = Runner(session).distribution(law.attempt)
    law_of_attempt.pop(laws.REJECTED, None)
    if not law_of_attempt:
        raise SpecError("repeat_until_accepted: the attempt never accepts, so the loop never ends",
                        "make some outcome of the attempt accepted with positive probability")
    weights = list(law_of_attempt.values())
    accepted = sum(weights[1:], weights[0])
    return [(value, weight / accepted) for value, weight in law_of_attempt.items()]


LAWS.update({
    laws.Exponential: _exponential,
    laws.RandomizedResponse: _randomized_response,
    laws.Categorical: _categorical,
    laws.Subset: _subset,
    laws.Geometric: _geometric,
    laws.RejectionLoop: _rejection_loop,
})
