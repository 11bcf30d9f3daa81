"""Shared by spec/accounting/: an accountant's float answer turned into the exact claim it makes.

An accountant reports floats; dpverify refuses floats in claims on purpose, so a reported number x
becomes the exact binary value of the float, ``Fraction(x)`` -- the number the accountant actually
stated, with no rounding in either direction.  ``get_delta(eps) = d`` claims delta_T(eps) <= d;
``get_epsilon(delta) = e`` claims delta_T(e) <= delta.  Both are ``dp.profile`` claims, decided against
the exact (or certified) delta_T of the T-fold composition.
"""
from fractions import Fraction
from typing import Callable, Optional, Sequence

import sympy

import dpverify as dp

BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)
"""Randomized response of one bit: replace-one neighbours (dp_accounting requires REPLACE_ONE for it)."""

ADD_REMOVE = dp.universe([1], n=range(0, 2), neighbours=dp.ADD_REMOVE)
"""A sum of records in {1} (sensitivity 1), the datasets {} and {1}: add-or-remove neighbours."""


def exact(x: float) -> sympy.Rational:
    """The float's exact binary value as a sympy Rational."""
    f = Fraction(x)
    return sympy.Rational(f.numerator, f.denominator)


def reported_deltas(get_delta: Callable[[float], float], epsilons: Sequence[float], times: int, id: str,
                    expect: Optional[str] = None, *, source: str) -> dp.Profile:
    """delta_T(eps) <= get_delta(eps) at every eps of ``epsilons`` (the accountant ``source``'s own answers)."""
    return dp.profile(at=[exact(e) for e in epsilons], delta=[exact(get_delta(e)) for e in epsilons],
                      times=times, source=source, id=id, expect=expect)


def reported_epsilon(get_epsilon: Callable[[float], float], delta: float, times: int, id: str,
                     expect: Optional[str] = None, *, source: str) -> dp.Profile:
    """delta_T(get_epsilon(delta)) <= delta: the accountant ``source``'s epsilon at ``delta`` must achieve it."""
    return dp.profile(at=[exact(get_epsilon(delta))], delta=exact(delta), times=times, source=source, id=id,
                      expect=expect)
