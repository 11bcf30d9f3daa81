"""Certified enclosures of exact real constants, by our own interval evaluation of sympy trees.

sympy's ``evalf(strict=True)`` is not a certificate: it returns 0 for log(1 + 10^-70), and so
gives log(1 + 10^-70) - 10^-80 a negative sign.  Signs and printed witnesses therefore come from
mpmath interval arithmetic applied node by node to the exact expression (rationals, e, pi, +, *,
powers, exp, log, sqrt), at a fixed ladder of precisions: every operation rounds outward, so the
interval contains the exact value whatever cancellation happens.  An expression with a node this
module does not know gives None (the caller then says it cannot decide).

mpmath's interval functions are not enclosures at every precision: 1.3.0's interval exp of
3/(2*10^20) at 20000 digits lies about 4e-19989 (eleven digits) above the true value.  So every
transcendental result (exp, log, e, pi) is widened outward by a margin of :func:`margin_digits` digits
of its magnitude before it is used (relative, so log(1 + 10^-100) keeps its digits).
"""
from __future__ import annotations

from typing import Any, Optional

import sympy
from mpmath.ctx_iv import MPIntervalContext

LADDER = (60, 200, 1000, 5000, 20000)
"""Working precisions (decimal digits), tried in order: deeper cancellations need more."""


def margin_digits(dps: int) -> int:
    """The digits given up around each transcendental result at ``dps`` working digits: 3 at 60 (about
    ten bits, several units in the last place), 203 at 20000, where mpmath's interval exp was seen to
    miss by eleven digits (by one at 15000, not at 10000)."""
    return 3 + dps // 100


def _widened(value: Any, ctx: Any) -> Any:
    """``value`` widened by 10^-(dps - margin) of its magnitude."""
    unit = ctx.mpf([-1, 1]) * ctx.mpf(10) ** (margin_digits(ctx.dps) - ctx.dps)
    return value + value * unit


class Unsupported(Exception):
    """A node of the expression has no interval rule here."""


def enclosure(expr: sympy.Expr, dps: int) -> Optional[Any]:
    """An mpmath interval (in a fresh context at ``dps`` digits) containing the exact value, or None."""
    ctx = MPIntervalContext()
    ctx.dps = dps
    try:
        return _iv(sympy.sympify(expr), ctx)
    except (Unsupported, ZeroDivisionError, ValueError):
        return None


def supported(expr: sympy.Basic) -> bool:
    """Whether every node of ``expr`` has an interval rule here."""
    node = sympy.sympify(expr)
    if node.is_Rational or node is sympy.E or node is sympy.pi:
        return True
    if node.is_Add or node.is_Mul or node.is_Pow or isinstance(node, sympy.exp) or (
            isinstance(node, sympy.log) and len(node.args) == 1):
        return all(supported(arg) for arg in node.args)
    return False


def sign(expr: sympy.Expr, ladder: tuple[int, ...] = LADDER) -> Optional[int]:
    """-1 or 1 when some precision of ``ladder`` puts the exact value's enclosure off 0, else None."""
    for dps in ladder:
        value = enclosure(expr, dps)
        if value is None:
            return None
        if value.a > 0:
            return 1
        if value.b < 0:
            return -1
    return None


def pinned(expr: sympy.Expr, digits: int) -> Optional[Any]:
    """An enclosure whose width is below 10^-digits of its magnitude (None when no precision of the
    ladder gets there, e.g. for an exact zero)."""
    for dps in LADDER:
        if dps < digits + 10:
            continue
        value = enclosure(expr, dps)
        if value is None:
            return None
        if (value.a > 0 or value.b < 0) and value.delta <= abs(value.mid) * value.ctx.mpf(10) ** (-digits):
            return value
    return None


def _iv(node: sympy.Basic, ctx: Any) -> Any:
    if node.is_Rational:
        return ctx.mpf(int(node.p)) / ctx.mpf(int(node.q))
    if node is sympy.E:
        return _widened(ctx.e, ctx)
    if node is sympy.pi:
        return _widened(ctx.pi, ctx)
    if node.is_Add:
        total = ctx.mpf(0)
        for arg in node.args:
            total += _iv(arg, ctx)
        return total
    if node.is_Mul:
        product = ctx.mpf(1)
        for arg in node.args:
            product *= _iv(arg, ctx)
        return product
    if node.is_Pow:
        base, exponent = node.args
        if exponent.is_Integer:
            value = _iv(base, ctx)
            power = int(exponent)
            if power < 0:
                if value.a <= 0 <= value.b:
                    raise Unsupported("a negative power of an interval around 0")
                return ctx.mpf(1) / value ** (-power)
            return value ** power
        value = _iv(base, ctx)
        if not value.a > 0:
            raise Unsupported("a non-integer power of a value not shown positive")
        return _widened(ctx.exp(_iv(exponent, ctx) * _widened(ctx.log(value), ctx)), ctx)
    if isinstance(node, sympy.exp):
        return _widened(ctx.exp(_iv(node.args[0], ctx)), ctx)
    if isinstance(node, sympy.log) and len(node.args) == 1:
        value = _iv(node.args[0], ctx)
        if not value.a > 0:
            raise Unsupported("the logarithm of a value not shown positive")
        return _widened(ctx.log(value), ctx)
    raise Unsupported(f"no interval rule for {type(node).__name__}")
