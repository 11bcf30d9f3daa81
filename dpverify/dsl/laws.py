"""What a primitive draws from, as plain immutable descriptions: the DSL describes, the engine reads.

Each DSL primitive (:mod:`.primitives`) validates its arguments and builds one
of these; the engine (:mod:`dpverify.engine.program.primitives`) maps each type to the
finite list of branches ``(value, weight)`` it offers in a reading.  A new
primitive is one description here, one function in :mod:`.primitives` and one
implementation registered in the engine.

>>> Categorical(((True, 1), (False, 0))).name
'categorical'
"""
from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Optional


@dataclass(frozen=True)
class Exponential:
    """Output y in ``candidates`` with probability proportional to exp(eps*u(y)/(2*sensitivity)).

    ``derived`` is set when the program omitted the sensitivity and the DSL
    derived it from the score: a note saying so, which the engine keeps for
    the reports.
    """

    candidates: tuple
    score: Callable[[Any], Any]
    eps: Any
    sensitivity: Any
    name: str = "exponential"
    derived: Optional[str] = None


@dataclass(frozen=True)
class RandomizedResponse:
    """Report the true value with probability e^eps/(e^eps + k - 1), each other value otherwise."""

    value: Hashable
    eps: Any
    values: tuple
    name: str = "randomized_response"


@dataclass(frozen=True)
class Categorical:
    """A finite distribution given as (value, probability) pairs, which must sum to 1."""

    items: tuple
    name: str = "categorical"


@dataclass(frozen=True)
class Subset:
    """A uniformly random m-subset of the records (by position), in their original order."""

    data: tuple
    m: int
    name: str = "subset"


@dataclass(frozen=True)
class Geometric:
    """value + Z, P(Z = k) = (a-1)/(a+1) a^-|k|, optionally clamped into [lower, upper].

    ``site`` is the (file, line) of the call: unclamped sides are lumped
    exactly beyond the window of centres seen there.
    """

    value: int
    a: Any
    lower: Optional[int]
    upper: Optional[int]
    site: Hashable
    name: str = "geometric"


class _Rejected:
    """The type of :data:`REJECTED`."""

    def __repr__(self) -> str:
        return "REJECTED"


REJECTED = _Rejected()
"""Returned by a rejection loop's attempt to ask for another round."""


@dataclass(frozen=True)
class RejectionLoop:
    """Repeat ``attempt`` until it returns something other than :data:`REJECTED`.

    Analysed as the loop's fixed point: when each round is independent of the
    previous ones, the output law is the attempt's law conditioned on
    acceptance, P(v) = P_attempt(v) / P_attempt(accepted) -- exactly, with no
    unrolling.
    """

    attempt: Callable[[], Any]
    name: str = "repeat_until_accepted"


__all__ = ["Categorical", "Exponential", "Geometric", "REJECTED", "RandomizedResponse", "RejectionLoop",
           "Subset"]
