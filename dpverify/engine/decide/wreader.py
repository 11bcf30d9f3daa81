"""Probabilities as rational functions of one w = e^(eps/L), read straight off sympy's expression tree.

The proof for every eps (:mod:`dpverify.checks.privacy.proof`) needs each distinct weight of the symbolic
reading as numerator / denominator polynomials in w with rational coefficients.  The general reading
(:func:`dpverify.engine.program.symbolic.rational_function`: expand, substitute, ``together``, ``cancel``)
costs milliseconds per weight; the threshold learner at n = 10 has 3,346 distinct weights.  Most weights are
built from rationals, e^(c eps) with rational c, sums, products and integer powers -- the exponential
mechanism's e^(a eps) / (sum_t e^(b_t eps)) -- and :func:`read` takes exactly those: it walks the tree in
exact arithmetic (Laurent polynomials in w with Fraction coefficients), multiplies numerator and denominator
by one power of w and one positive integer (the same rational function, integer coefficients), and divides
out their gcd (sympy's dense ``dup_cancel`` over ZZ, whose answer is checked exactly: p * g == q * f).
Anything else -- an exponential with a constant part or an irrational rate, a float, another function, a
symbol outside an exponential, a large power -- returns None, and the caller takes the general reading
(with its refusals).  tests/test_proof_reduced.py holds the two readings equal on random expressions.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Optional

import sympy
from sympy.polys.domains import ZZ
from sympy.polys.euclidtools import dup_cancel

Laurent = dict
"""{power of w: nonzero Fraction}; the zero polynomial is {}."""

MAX_POWER = 64
"""The largest integer exponent of a sum read here (above it: the general reading)."""

MAX_DEGREE = 4000
"""The largest spread of powers of w kept here (above it: the general reading, with its own budget)."""


class _Decline(Exception):
    """The expression is not of the shapes read here."""


def _add(f: Laurent, g: Laurent) -> Laurent:
    out = dict(f)
    for k, c in g.items():
        v = out.get(k, 0) + c
        if v:
            out[k] = v
        else:
            out.pop(k, None)
    return out


def _mul(f: Laurent, g: Laurent) -> Laurent:
    out: dict = {}
    for i, a in f.items():
        for j, b in g.items():
            out[i + j] = out.get(i + j, 0) + a * b
    out = {k: v for k, v in out.items() if v}
    if out and max(out) - min(out) > MAX_DEGREE:
        raise _Decline
    return out


_ONE: Laurent = {0: Fraction(1)}


def _walk(expr: sympy.Expr, symbol: sympy.Symbol, scale: int) -> tuple[Laurent, Laurent]:
    if expr.is_Rational:
        value = Fraction(int(expr.p), int(expr.q))
        return ({0: value} if value else {}), _ONE
    if isinstance(expr, sympy.exp):
        c, rest = expr.args[0].as_coeff_Mul()
        if rest != symbol or not c.is_Rational:
            raise _Decline
        power = c * scale
        if not power.is_Integer or abs(int(power)) > MAX_DEGREE:
            raise _Decline
        return {int(power): Fraction(1)}, _ONE
    if expr.is_Add:
        num, den = {}, _ONE
        for term in expr.args:
            n, d = _walk(term, symbol, scale)
            num, den = _add(_mul(num, d), _mul(n, den)), _mul(den, d)
        return num, den
    if expr.is_Mul:
        num, den = _ONE, _ONE
        for factor in expr.args:
            n, d = _walk(factor, symbol, scale)
            num, den = _mul(num, n), _mul(den, d)
        return num, den
    if expr.is_Pow:
        base, exponent = expr.args
        if not exponent.is_Integer or abs(int(exponent)) > MAX_POWER:
            raise _Decline
        n, d = _walk(base, symbol, scale)
        k = int(exponent)
        if k < 0:
            n, d, k = d, n, -k
        num, den = _ONE, _ONE
        for _ in range(k):
            num, den = _mul(num, n), _mul(den, d)
        return num, den
    raise _Decline


def _integers(f: Laurent, shift: int, scale: int, top: int) -> list:
    """f * w^shift * scale as dense integer coefficients, highest power first (sympy's dup order)."""
    out = [ZZ(0)] * (top + 1)
    for k, c in f.items():
        value = c * scale
        out[top - (k + shift)] = ZZ(int(value))
    return out


def read(expr: sympy.Expr, symbol: sympy.Symbol, scale: int) -> Optional[tuple[tuple, tuple]]:
    """``expr`` as (numerator, denominator): integer coefficients, lowest power of w = e^(symbol/scale) first,
    no common factor, the denominator not zero; or None when the expression is not of the shapes this module
    reads (the caller then takes :func:`~dpverify.engine.program.symbolic.rational_function`)."""
    try:
        num, den = _walk(sympy.sympify(expr), symbol, scale)
    except (_Decline, RecursionError):
        return None
    if not den:
        return None
    low = min(min(num, default=0), min(den))
    top = max(max(num, default=0), max(den)) - low
    common = 1
    for c in list(num.values()) + list(den.values()):
        common = common * c.denominator // _gcd(common, c.denominator)
    f = _integers(num, -low, common, top)
    g = _integers(den, -low, common, top)
    f, g = _strip(f), _strip(g)
    p, q = dup_cancel(f, g, ZZ) if f else ([], [ZZ(1)])
    p, q = _strip(list(p)), _strip(list(q))
    if not q or _dup_mul(p, g) != _dup_mul(q, f):  # p / q must be f / g exactly
        return None
    return tuple(int(c) for c in reversed(p)), tuple(int(c) for c in reversed(q))


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


def _strip(f: list) -> list:
    i = 0
    while i < len(f) and f[i] == 0:
        i += 1
    return f[i:]


def _dup_mul(f: list, g: list) -> list:
    """The product of two dense polynomials (highest power first) as Python ints, no leading zeros."""
    if not f or not g:
        return []
    out = [0] * (len(f) + len(g) - 1)
    for i, a in enumerate(f):
        a = int(a)
        if a:
            for j, b in enumerate(g):
                out[i + j] += a * int(b)
    return _strip(out)
