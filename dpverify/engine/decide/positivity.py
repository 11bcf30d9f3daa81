"""Exact sign of a univariate polynomial with rational coefficients on w > 1.

The privacy constraints of a mechanism with one continuous parameter are
polynomials H(w) that must be non-negative for every w > 1.  For one variable
this is decidable exactly and quickly without a solver: write w = 1 + v, and

1. if every coefficient of G(v) = H(1 + v) is non-negative, G(v) >= 0 for all
   v > 0 (Descartes: no sign change, no positive root) -- done;
2. otherwise isolate the real roots of G on v >= 0 in disjoint rational
   intervals (sympy's exact root isolation) and evaluate G exactly at a
   rational point in every gap between them: G has no root inside a gap, so
   its sign there is the sign at the sample point, and a root's own interval
   adds no other sign.

The answer is either "never negative" or an exact rational w* > 1 with
H(w*) < 0 (op "<"), resp. H(w*) <= 0 (op "<=").  Several variables are left to z3.
"""
from __future__ import annotations

from typing import Optional, Union

import sympy

Verdict = Union[bool, sympy.Rational]


def _gaps(intervals: list[tuple[sympy.Rational, sympy.Rational]]) -> list[sympy.Rational]:
    """Rational sample points in (0, oo) outside every isolating interval."""
    points = []
    edge = sympy.Integer(0)
    for a, b in sorted(intervals):
        if a > edge:
            points.append((edge + a) / 2)
        edge = max(edge, b)
    points.append(edge + 1)
    return points


def find_point(poly: sympy.Poly, op: str) -> Optional[Verdict]:
    """A rational w > 1 with ``poly(w) op 0`` (op "<" or "<="), or False if there is none.

    ``poly`` must be univariate.  Returns None only if root isolation fails.
    """
    (w,) = poly.gens
    if poly.is_zero:
        return False if op == "<" else sympy.Integer(2)
    shifted = poly.shift(1)  # G(v) = H(1 + v)
    if all(c >= 0 for c in shifted.all_coeffs()):
        return False  # not the zero polynomial, so G(v) > 0 for every v > 0
    squarefree = shifted.sqf_part()  # same roots, each simple: isolation and refinement are exact
    positive_roots = []
    try:
        for (a, b), _ in squarefree.intervals(inf=0):
            if a == b == 0:
                continue  # the root v = 0 is w = 1, outside w > 1
            while a == 0:  # the root is positive: shrink its interval off 0 so (0, root) can be sampled
                a, b = squarefree.refine_root(a, b, eps=b / 1024)
            positive_roots.append((a, b))
        positive_roots.sort()
        for i in range(len(positive_roots) - 1):  # separate touching intervals, so a gap lies between
            while positive_roots[i][1] >= positive_roots[i + 1][0]:
                for k in (i, i + 1):
                    a, b = positive_roots[k]
                    if a != b:  # an exact rational root needs no refining
                        positive_roots[k] = squarefree.refine_root(a, b, eps=(b - a) / 4)
    except Exception:  # sympy's isolation failing is an "unknown", never a pass
        return None
    if op == "<=" and positive_roots:
        a, b = positive_roots[0]
        return 1 + (a + b) / 2  # H vanishes in there: it is not positive on w > 1
    for v in _gaps(positive_roots):
        value = shifted.eval(v)
        if value < 0 or (op == "<=" and value == 0):
            return 1 + v
    return False


Dense = tuple
"""A univariate polynomial with integer coefficients, lowest power first: (c_0, c_1, ..., c_d), no trailing
zeros (the zero polynomial is ())."""


def shift_one(coefficients: Dense) -> list[int]:
    """The coefficients of G(v) = H(1 + v), lowest power first, exactly (integer Taylor shift by 1)."""
    a = list(coefficients)
    n = len(a)
    for i in range(n - 1):
        for j in range(n - 2, i - 1, -1):
            a[j] += a[j + 1]
    return a


def find_point_dense(coefficients: Dense, w: sympy.Symbol, op: str) -> Optional[Verdict]:
    """:func:`find_point` for H given by integer coefficients (lowest power first): False at once when
    H(1 + v) has no negative coefficient and H is not zero (step 1 of the module's procedure, in integer
    arithmetic), else :func:`find_point` on H as a sympy polynomial in ``w``."""
    if coefficients and all(c >= 0 for c in shift_one(coefficients)):
        return False  # not the zero polynomial, so H(1 + v) > 0 for every v > 0
    return find_point(sympy.Poly(list(reversed(coefficients)) or [0], w, domain="QQ"), op)
