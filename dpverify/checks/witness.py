"""The numbers a witness prints: certified, and what they say they are.

A refutation prints probabilities (or densities, labelled so) that a reader
checks by hand.  Each number comes from a recomputation independent of the
pass that found the violation -- fresh intervals at a higher precision, or the
exact sympy reading where a tie was decided exactly -- and is printed only when
that recomputation pins it down: an interval narrower than ``RELATIVE_WIDTH``
of its size (and, for a probability, inside [0, 1]), or an exact number that
sympy evaluates with certified digits.  Anything else is not a witness: the
check then says ``unknown`` with the reason, never ``refuted``.
"""
from __future__ import annotations

from typing import Any, Optional

import mpmath
import sympy

from ..engine.decide import certified
from ..results import PointResult, Status, Witness
from ..engine.decide.decimals import DIGITS, decimal

RELATIVE_WIDTH = 10 ** -(DIGITS - 5)
"""An interval is printed only when its width is below this fraction of its magnitude."""

CONFIRM_DIGITS = 120
"""Digits of the strict evaluation that confirms the sign an exact decision found."""


def number(value: Any, *, probability: bool = True) -> Optional[str]:
    """``value`` (an mpmath interval or an exact sympy number) as a certified decimal, or None when
    it is not pinned down (a wide interval, a probability outside [0, 1], an evaluation sympy
    cannot certify)."""
    if isinstance(value, (int, sympy.Basic)):
        return _exact(sympy.sympify(value), probability)
    a, b = (mpmath.mp.make_mpf(end) for end in value._mpi_)  # the exact ends, as plain numbers
    if not (mpmath.isfinite(a) and mpmath.isfinite(b)) or (probability and (a > 1 or b < 0)):
        return None
    with mpmath.workdps(20):
        if a == b or (b - a) <= RELATIVE_WIDTH * max(abs(a), abs(b)):
            return decimal(value)
    return None


def _exact(value: sympy.Expr, probability: bool) -> Optional[str]:
    if value.is_zero:
        return decimal(sympy.Integer(0))
    approx = _strict(value, DIGITS + 5)
    if approx is None or not approx.is_Float or (probability and not 0 <= approx <= 1):
        return None
    return decimal(approx)


def positive(value: sympy.Expr, digits: int = CONFIRM_DIGITS) -> bool:
    """True only when a strict evaluation of the exact ``value`` at ``digits`` digits is certified
    positive: the independent confirmation of a sign found exactly (zero or undecided: False)."""
    approx = _strict(sympy.sympify(value), digits)
    return bool(approx is not None and approx.is_Float and approx > 0)


def _strict(value: sympy.Expr, digits: int) -> Optional[sympy.Expr]:
    """``value`` to ``digits`` certified digits, or None when they cannot be certified: our own interval
    evaluation where it applies (sympy's evalf calls log(1 + 10^-70) zero), else sympy's strict
    evaluation with a fixed ladder of working precisions (a cancellation needs more)."""
    if certified.supported(value):
        found = certified.pinned(value, digits)
        if found is None:
            return None
        with mpmath.workdps(digits + 10):
            return sympy.Float(mpmath.mp.make_mpf(found.mid._mpi_[0]), digits)
    for extra in (100, 2000):
        try:
            return value.evalf(digits, strict=True, maxn=digits + extra)
        except Exception:  # PrecisionExhausted and friends: not certified at this working precision
            continue
    return None


def figure(value: Any) -> tuple[str, bool]:
    """(text, exact) for a certified interval shown as a figure: its decimal when pinned down, else its
    upper end (``exact`` False: the figure is then only an upper bound -- a midpoint of a wide
    interval would be a number the computation never established)."""
    shown = number(value, probability=False)
    return (shown, True) if shown is not None else (decimal(value.b), False)


def refuted_ratio(result: PointResult, witness: Witness, statement: str, e_eps: str, bound: str,
                  how: str) -> PointResult:
    """``result`` refuted for pure DP by ``witness``: ``statement`` gives its two certified numbers, whose
    ratio ``witness.ratio`` exceeds the claimed bound ``e_eps`` (as the claim writes it: "e^(eps/4)"),
    worth ``bound`` at this point; ``how`` says how the violation was confirmed."""
    result.status = Status.REFUTED
    result.witness = witness
    result.message = (f"X={witness.x!r} and X'={witness.x_prime!r} are neighbours; {statement}, ratio "
                      f"{witness.ratio} > {e_eps} = {bound}; {how}")
    return result


def refuted_delta(result: PointResult, pair: tuple, event: Any, phrase: str, shown: list, delta: str,
                  e_eps: str, how: str) -> PointResult:
    """``result`` refuted for (eps, delta): on the event ``event`` (described in the message by
    ``phrase``) P(S|X) - e^eps P(S|X') exceeds delta, with e^eps named ``e_eps`` as the claim writes
    it ("e^(eps/4)"); ``shown`` holds the three certified numbers."""
    p, q, value = shown
    result.status = Status.REFUTED
    result.witness = Witness(pair[0], pair[1], event, p, q)
    result.message = (f"X={pair[0]!r} and X'={pair[1]!r}: {phrase}, P(S|X) = {p}, P(S|X') = {q}, "
                      f"P(S|X) - {e_eps} P(S|X') = {value} > delta = {delta}; {how}")
    return result


def confirm_delta(result: PointResult, pair: tuple, event: Any, phrase: str, sums: tuple, delta_iv: Any,
                  delta: str, e_eps: str, digits: tuple[int, int]) -> PointResult:
    """Refute for (eps, delta) from a fresh recomputation: ``sums`` = (P(S|X), P(S|X'), their excess
    P(S|X) - e^eps P(S|X')) as intervals at ``digits[1]`` digits, for a violation found at
    ``digits[0]``.  Refuted only when the excess is certified above ``delta_iv`` (the claimed delta
    at the fresh precision) and all three numbers are pinned down; else ``result`` stays unknown
    with the reason."""
    found_at, fresh_at = digits
    if not sums[2].a > delta_iv.b:
        result.message = (f"a violation of delta found at {found_at} digits (X={pair[0]!r}, X'={pair[1]!r}) "
                          f"was not confirmed at {fresh_at} digits")
        return result
    shown = [number(sums[0]), number(sums[1]), number(sums[2])]
    if None in shown:
        result.message = (f"a violation of delta (X={pair[0]!r}, X'={pair[1]!r}) was confirmed at {fresh_at} "
                          "digits, but its probabilities are not pinned down there (intervals too wide to print "
                          "as a witness)")
        return result
    return refuted_delta(result, pair, event, phrase, shown, delta, e_eps, f"confirmed at {fresh_at} digits")
