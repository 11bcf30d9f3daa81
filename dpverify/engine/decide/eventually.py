"""Expressions in an integer size n: exact values for every n >= n_min, without sampling.

A derived sensitivity is a sympy expression in n built from rational functions
with ``Max``, ``Min``, ``Abs`` and ``Piecewise`` (conditions on n).  Such an
expression is *eventually* one rational function: past some integer ``start``
every ``Abs`` has a fixed sign, every ``Max`` a fixed winner, every condition a
fixed truth value.  :func:`eventual` finds ``start`` and that form exactly:

* the sign of a rational function p(n)/q(n) is constant beyond the Cauchy bound
  1 + max_i |a_i / a_d| of p and of q (no real root lies beyond it), where it
  is the sign of the leading coefficients;
* below ``start`` there are finitely many integers, each evaluated exactly.

So "for every integer n >= n_min" becomes finitely many exact evaluations plus
one symbolic identity (or sign) of rational functions -- a proof, not a sample.

>>> n = sympy.Symbol("n", integer=True, positive=True)
>>> piecewise(sympy.Max(1, 3 - n), n, 1)
Piecewise((2, Eq(n, 1)), (1, True))
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import sympy

from ..program.backend import exact_sign

MAX_SPAN = 20_000
"""More integers than this below the eventual start are not evaluated one by one."""


class Undecided(Exception):
    """The expression is outside what this module decides exactly (the reason is the message)."""


@dataclass(frozen=True)
class Eventual:
    """For every integer n >= ``start``, the expression equals ``form`` (free of Max/Min/Abs)."""

    start: int
    form: sympy.Expr


def _leading_sign(poly: sympy.Poly) -> int:
    sign = exact_sign(poly.LC())
    if sign in (None, 0):
        raise Undecided(f"cannot decide the sign of the leading coefficient {poly.LC()}")
    return sign


def _cauchy(poly: sympy.Poly) -> int:
    """An integer beyond every real root of ``poly``: from exact real-root isolation when the
    coefficients are rational, else Cauchy's bound 1 + max |a_i / a_d|."""
    coeffs = poly.all_coeffs()
    if len(coeffs) == 1:
        return 0
    if poly.domain.is_ZZ or poly.domain.is_QQ:
        roots = poly.intervals()
        return int(sympy.floor(max(hi for (_, hi), _ in roots))) + 1 if roots else 0
    bound = 1 + max(sympy.Abs(c / coeffs[0]) for c in coeffs[1:])
    value = sympy.ceiling(bound)
    if not value.is_Integer:
        raise Undecided(f"cannot bound the roots of {poly.as_expr()}")
    return int(value)


def eventual_sign(expr: sympy.Expr, n: sympy.Symbol, start: int) -> tuple[int, int]:
    """(sign, bound): ``expr`` (a rational function of n) has that sign for every integer n >= bound.

    ``bound >= start``; sign 0 means ``expr`` is identically zero.
    """
    expr = sympy.cancel(sympy.together(expr))
    if expr.free_symbols - {n}:
        raise Undecided(f"{expr} has symbols other than {n}")
    num, den = sympy.fraction(expr)
    try:
        pnum, pden = sympy.Poly(num, n), sympy.Poly(den, n)
    except sympy.PolynomialError:
        raise Undecided(f"{expr} is not a rational function of {n}") from None
    if pnum.is_zero:
        return 0, start
    bound = max(start, _cauchy(pnum) + 1, _cauchy(pden) + 1)
    return _leading_sign(pnum) * _leading_sign(pden), bound


def _truth(cond: sympy.Basic, n: sympy.Symbol, start: int) -> tuple[bool, int]:
    """(truth, bound): the condition's truth value for every integer n >= bound."""
    if cond in (sympy.true, True):
        return True, start
    if cond in (sympy.false, False):
        return False, start
    if isinstance(cond, (sympy.And, sympy.Or)):
        parts = [_truth(c, n, start) for c in cond.args]
        combine = all if isinstance(cond, sympy.And) else any
        return combine(t for t, _ in parts), max(b for _, b in parts)
    if isinstance(cond, sympy.Not):
        truth, bound = _truth(cond.args[0], n, start)
        return not truth, bound
    if isinstance(cond, sympy.core.relational.Relational):
        left, right = eventual(cond.lhs, n, start), eventual(cond.rhs, n, start)
        sign, bound = eventual_sign(left.form - right.form, n, max(left.start, right.start))
        truth = {sympy.Eq: sign == 0, sympy.Ne: sign != 0, sympy.Lt: sign < 0, sympy.Le: sign <= 0,
                 sympy.Gt: sign > 0, sympy.Ge: sign >= 0}.get(type(cond))
        if truth is None:
            raise Undecided(f"unsupported condition {cond}")
        return truth, bound
    raise Undecided(f"unsupported condition {cond}")


def eventual(expr: sympy.Expr, n: sympy.Symbol, start: int) -> Eventual:
    """The rational form ``expr`` takes for every integer n past some start >= ``start``."""
    expr = sympy.sympify(expr)
    if not expr.has(sympy.Max, sympy.Min, sympy.Abs, sympy.Piecewise):
        return Eventual(start, expr)
    if isinstance(expr, sympy.Abs):
        inner = eventual(expr.args[0], n, start)
        sign, bound = eventual_sign(inner.form, n, inner.start)
        return Eventual(bound, sign * inner.form)
    if isinstance(expr, (sympy.Max, sympy.Min)):
        want = 1 if isinstance(expr, sympy.Max) else -1
        parts = [eventual(a, n, start) for a in expr.args]
        best, bound = parts[0].form, max(p.start for p in parts)
        for part in parts[1:]:
            sign, bound = eventual_sign(part.form - best, n, bound)
            if sign == want:
                best = part.form
        return Eventual(bound, best)
    if isinstance(expr, sympy.Piecewise):
        bound = start
        for value, cond in expr.args:
            truth, bound = _truth(cond, n, bound)
            if truth:
                branch = eventual(value, n, bound)
                return Eventual(branch.start, branch.form)
        raise Undecided(f"no branch of {expr} holds for large n")
    parts = [eventual(a, n, start) for a in expr.args]
    return Eventual(max(p.start for p in parts), expr.func(*[p.form for p in parts]))


def value_at(expr: sympy.Expr, n: sympy.Symbol, k: int) -> sympy.Expr:
    """The exact value of ``expr`` at n = k."""
    value = sympy.sympify(expr).subs(n, k)
    return value if value.is_Rational else sympy.simplify(value)


def _differs(a: sympy.Expr, b: sympy.Expr) -> bool:
    if not (a.is_finite and b.is_finite):
        return True
    sign = exact_sign(a - b)
    if sign is None:
        raise Undecided(f"cannot tell whether {a} and {b} are equal")
    return sign != 0


def _sign(value: sympy.Expr, what: str) -> int:
    sign = exact_sign(value) if value.is_finite else None
    if sign is None:
        raise Undecided(f"cannot decide the sign of {what}")
    return sign


def _span(start: int, stop: int) -> range:
    if stop - start > MAX_SPAN:
        raise Undecided(f"{stop - start} sizes below the eventual form (n = {start}..{stop - 1}) "
                        "are too many to evaluate one by one")
    return range(start, stop)


def piecewise(expr: sympy.Expr, n: sympy.Symbol, n_min: int) -> sympy.Expr:
    """``expr`` for integers n >= n_min as Piecewise((v_k, Eq(n, k)), ..., (form, True))."""
    tail = eventual(expr, n, n_min)
    head = []
    for k in _span(n_min, tail.start):
        value = value_at(expr, n, k)
        if _differs(value, value_at(tail.form, n, k)):
            head.append((value, sympy.Eq(n, k)))
    form = sympy.factor(sympy.cancel(tail.form)) if tail.form.is_rational_function(n) else tail.form
    return sympy.Piecewise(*head, (form, True)) if head else form


@dataclass(frozen=True)
class Comparison:
    """How a claimed C(n) compares with the exact D(n) for every integer n >= n_min."""

    below: Optional[int]   # smallest n with C(n) < D(n) found (None: none)
    above: Optional[int]   # smallest n with C(n) > D(n) (None: none)
    tail_start: int        # from here on C - D is one rational function ...
    tail_identity: bool    # ... which sympy simplified to 0


def compare(claimed: sympy.Expr, derived: sympy.Expr, n: sympy.Symbol, n_min: int) -> Comparison:
    """Decide C(n) >= D(n), and where they differ, for every integer n >= n_min, exactly."""
    c, d = eventual(claimed, n, n_min), eventual(derived, n, n_min)
    start = max(c.start, d.start)
    below = above = None
    for k in _span(n_min, start):
        sign = _sign(value_at(claimed, n, k) - value_at(derived, n, k), f"claim - derived at n = {k}")
        below = k if sign < 0 and below is None else below
        above = k if sign > 0 and above is None else above
    diff = c.form - d.form
    if sympy.simplify(diff) == 0:
        return Comparison(below, above, start, True)
    sign, bound = eventual_sign(diff, n, start)
    if sign == 0:
        return Comparison(below, above, start, True)
    for k in _span(start, bound):
        s = _sign(value_at(diff, n, k), f"claim - derived at n = {k}")
        below = k if s < 0 and below is None else below
        above = k if s > 0 and above is None else above
    if sign < 0 and below is None:
        below = bound
    if sign > 0 and above is None:
        above = bound
    return Comparison(below, above, start, False)


def supremum(expr: sympy.Expr, n: sympy.Symbol, n_min: int) -> sympy.Expr:
    """sup over integers n >= n_min of ``expr`` (exact; the limit if it is approached, not attained)."""
    tail = eventual(expr, n, n_min)
    slope, bound = eventual_sign(sympy.diff(tail.form, n), n, tail.start)
    values = [value_at(expr, n, k) for k in _span(n_min, bound + 1)]
    if slope > 0:
        limit = sympy.limit(tail.form, n, sympy.oo)
        if not limit.is_finite:
            raise Undecided(f"{expr} grows without bound in n")
        values.append(limit)
    return sympy.Max(*values)


__all__ = ["Comparison", "Eventual", "Undecided", "compare", "eventual", "eventual_sign", "piecewise",
           "supremum", "value_at"]
