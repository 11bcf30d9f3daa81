"""Claims: the statements a spec makes about its mechanism.

A claim only describes; the checks in :mod:`dpverify.checks` decide it.
Parameters in a claim are sympy expressions in the spec's symbols, evaluated
exactly at every grid point.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

import sympy

from ..errors import SpecError


EXPECTATIONS = (None, "refuted")


@dataclass(frozen=True)
class Claim:
    """Base of every claim: an id (unique in its spec) and what is expected of it.

    ``expect="refuted"`` marks a statement known to be false (a published
    broken mechanism, a formula that fails outside its domain): the run is
    green only if it *is* refuted, like a strict xfail.

    Class attributes say how the claim is run: ``needs_mechanism`` (it is
    about the spec's program and universe) and ``per_point`` (it is decided
    at every grid point; a claim that is not quantifies over its own symbols).
    """

    id: Optional[str] = field(default=None, kw_only=True)
    expect: Optional[str] = field(default=None, kw_only=True)
    kind = "claim"
    needs_mechanism = True
    per_point = True

    def __post_init__(self) -> None:
        if self.expect not in EXPECTATIONS:
            raise SpecError(f"{self.kind}: expect={self.expect!r} is not an expectation",
                            "use expect='refuted' for a claim known to be false, or leave it out")

    def describe(self) -> str:
        return self.kind


def _expression(value: Any, what: str, fn: str) -> sympy.Expr:
    if isinstance(value, float):
        value = sympy.Rational(repr(value))
    try:
        expr = sympy.sympify(value, strict=True)
    except (sympy.SympifyError, TypeError):
        raise SpecError(f"{fn}: {what}={value!r} is not a number or sympy expression",
                        f"write {what} in the spec's parameter symbols, e.g. eps or 2*eps") from None
    if expr.is_number:
        if expr.has(sympy.nan, sympy.zoo) or expr.is_real is False or expr.is_finite is False:
            raise SpecError(f"{fn}: {what}={value!r} is not a finite real number", f"use a finite {what}")
    return expr


@dataclass(frozen=True)
class Private(Claim):
    """(epsilon, delta)-differential privacy under the spec's neighbour relation.

    For every ordered pair of neighbouring datasets (X, X') and every set S of
    outputs, P(M(X) in S) <= e^epsilon P(M(X') in S) + delta.  With delta = 0
    this is checked output by output; with delta > 0 by the hockey-stick
    divergence.  Under the label-only relation this is label-DP.
    """

    epsilon: sympy.Expr = sympy.Integer(0)
    delta: sympy.Expr = sympy.Integer(0)
    kind = "private"

    def describe(self) -> str:
        return f"{self.epsilon}-DP" if self.delta == 0 else f"({self.epsilon}, {self.delta})-DP"


def private(epsilon: Any, delta: Any = 0, *, id: Optional[str] = None,
            expect: Optional[str] = None) -> Private:
    """Claim (epsilon, delta)-DP; epsilon and delta may be expressions in the parameters."""
    eps = _expression(epsilon, "epsilon", "private")
    dlt = _expression(delta, "delta", "private")
    if eps.is_number and not eps.is_nonnegative:
        raise SpecError(f"private: epsilon={epsilon!r} must be >= 0", "use a non-negative epsilon")
    if dlt.is_number and not (dlt.is_nonnegative and (dlt < 1) is sympy.true):
        raise SpecError(f"private: delta={delta!r} must lie in [0, 1)", "use 0 for pure DP or a small delta")
    return Private(epsilon=eps, delta=dlt, id=id, expect=expect)


@dataclass(frozen=True)
class SameDistribution(Claim):
    """The mechanism and ``other`` have identical output distributions on every dataset."""

    other: Optional[Callable[..., Any]] = None
    kind = "same_distribution"

    def describe(self) -> str:
        return f"same distribution as {getattr(self.other, '__name__', 'other')}"


def same_distribution(other: Callable[..., Any], *, id: Optional[str] = None,
                      expect: Optional[str] = None) -> SameDistribution:
    """Claim that ``other`` (same signature as the mechanism) has the same output law everywhere."""
    if not callable(other):
        raise SpecError(f"same_distribution: other={other!r} is not callable",
                        "pass the other mechanism function, with the same arguments as the spec's")
    return SameDistribution(other=other, id=id, expect=expect)
