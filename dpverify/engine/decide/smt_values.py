"""Values out of z3: bounds that linear conditions imply, and exact rationals from models.

Companions of :mod:`dpverify.engine.decide.smt`: the formula check asks for the range
of every symbol before translating (sums are unrolled up to those bounds and
finite integer domains are enumerated), and turns each model z3 returns into
an exact point to re-check.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Optional

import sympy
import z3

from .smt import Bounds, Translator, Unsupported, check

BOUNDS_RLIMIT = 2_000_000
"""z3's resource limit per optimisation (a count, not a clock): over 30 times what the catalogue's
formula claims need (about 64,000), and binding long before the CPU-time safety net."""


def symbol_bounds(symbols: list[sympy.Symbol], conditions: list[sympy.Basic],
                  rlimit: int = BOUNDS_RLIMIT) -> dict[sympy.Symbol, tuple[Optional[Fraction], Optional[Fraction]]]:
    """Lower and upper bounds on each symbol implied by the *linear* conditions among ``conditions``.

    Only linear conditions are used (z3's optimiser decides them); a subset of
    the conditions can only give looser bounds, so every bound returned is
    valid.  A strict bound (b > 1) is returned as its value (1); integer
    symbols get integer bounds; None means unbounded (or not found within ``rlimit``).  Raises
    :class:`~.smt.SafetyLimit` if z3's CPU-time safety net fires first.
    """
    linear = [c for c in conditions if _linear(c, symbols)]
    tr = Translator(symbols)
    facts = tr.enc.facts + [tr.formula(c) for c in linear]
    out = {}
    for s in symbols:
        found: list[Optional[Fraction]] = []
        for direction in ("minimize", "maximize"):
            opt = z3.Optimize()
            opt.add(*facts)
            handle = getattr(opt, direction)(tr.enc.variables[s])
            value = None
            if check(opt, rlimit).answer == z3.sat:
                infinite, finite, _ = handle.lower_values() if direction == "minimize" else handle.upper_values()
                if _fraction(infinite) == 0:
                    value = _fraction(finite)
            found.append(value)
        out[s] = (found[0], found[1])
    return out


def integer_bounds(bounds: dict[sympy.Symbol, tuple[Optional[Fraction], Optional[Fraction]]]) -> Bounds:
    """The integer symbols' bounds from :func:`symbol_bounds`, rounded inwards."""
    return {s: (None if lo is None else math.ceil(lo), None if hi is None else math.floor(hi))
            for s, (lo, hi) in bounds.items() if s.is_integer}


def _fraction(value: z3.ExprRef) -> Optional[Fraction]:
    if z3.is_int_value(value):
        return Fraction(value.as_long())
    if z3.is_rational_value(value):
        return value.as_fraction()
    return None


def _linear(cond: sympy.Basic, symbols: list[sympy.Symbol]) -> bool:
    if isinstance(cond, (sympy.And, sympy.Or, sympy.Not)):
        return all(_linear(a, symbols) for a in cond.args)
    if not isinstance(cond, sympy.core.relational.Relational):
        return cond in (sympy.true, True)
    try:
        poly = sympy.Poly(cond.lhs - cond.rhs, *symbols)
    except sympy.PolynomialError:
        return False
    return poly.total_degree() <= 1 and all(c.is_Rational for c in poly.coeffs())


def model_value(model: z3.ModelRef, var: z3.ExprRef, digits: int = 30) -> sympy.Rational:
    """A model's value of a variable as an exact rational (algebraic numbers are rounded to
    ``digits`` digits; the point is re-checked exactly afterwards anyway)."""
    value = model.eval(var, model_completion=True)
    if z3.is_int_value(value):
        return sympy.Integer(value.as_long())
    if z3.is_rational_value(value):
        return sympy.Rational(value.numerator_as_long(), value.denominator_as_long())
    if z3.is_algebraic_value(value):
        approx = value.approx(digits)
        return sympy.Rational(approx.numerator_as_long(), approx.denominator_as_long())
    raise Unsupported(f"the model value {value}")
