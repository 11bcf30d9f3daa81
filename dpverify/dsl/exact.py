"""Floats a program computed, accepted only when they are exact: the DSL's one float rule.

A pure helper shared by the primitives (a probability, a record term's value)
and by the engine's readings (:mod:`dpverify.engine.program.backend` re-exports it), so
that every place that meets a float refuses an inexact one with the same words.

>>> exact_float(0.5)
Fraction(1, 2)
"""
from __future__ import annotations

from fractions import Fraction

from ..errors import SpecError


def exact_float(value: float) -> Fraction:
    """A float that a program computed, accepted only when it is exactly what it looks like.

    0.5 is exact; 1/3 computed in floats is not, and reading it as 1/3 or as
    0.333... would both analyse a mechanism other than the one written.
    """
    if value != value or value in (float("inf"), float("-inf")):
        raise SpecError(f"the program produced the float {value!r}, which is not a finite number",
                        "compute probabilities with Fractions or dp.exp/dp.log")
    binary, written = Fraction(value), Fraction(repr(value))
    if binary != written:
        raise SpecError(f"the program produced the float {value!r}, which is not exact "
                        f"(its binary value is {binary})",
                        "use fractions.Fraction or sympy.Rational for exact numbers, e.g. Fraction(1, 3) "
                        "instead of 1/3")
    return binary


__all__ = ["exact_float"]
