"""A fast exact evaluation of a formula claim at one integer point, for the exhaustive attacker.

:func:`~.check.exhaustive` decides every point of a small finite domain.  Doing so through sympy
(substitute, ``doit`` the sums, certify the digits) costs about 15 ms a point, almost all of it in
sympy's assumption system rebuilding ``binomial(30, i)`` and friends.  :func:`sign` here evaluates
the same tree *as written* node by node in Python's exact arithmetic:

* rationals, the point's values, ``+``, ``*``, integer powers, ``binomial`` and ``factorial`` of
  non-negative integers, finite sums ``Sum(f, (i, a, b))`` whose limits are integers
  (``b >= a - 1``) and ``Piecewise`` with conditions comparing rationals, as
  :class:`fractions.Fraction`, exactly;
* ``E``, ``pi``, ``exp``, ``log`` and non-integer powers as mpmath intervals, through the very
  rules (and outward widening) of :mod:`dpverify.engine.decide.certified`, at its first precision.

The sign of ``lhs - rhs`` is then exact (two rationals) or certified (an interval off 0).  Anything
else -- a node without a rule here, a zero denominator, an interval that straddles 0, an integer
power too large to compute -- gives ``None``, and the caller decides that point the slow way, as
before.  So this is a guide that only ever answers when its answer is a certificate: it never turns
a point the slow path leaves undecided (or calls undefined) into a decided one of a different kind,
and a failing point is still re-confirmed by :meth:`~.problem.Problem.confirm` before ``refuted``.
``tests/test_formula_fast.py`` checks it against the slow path.
"""
from __future__ import annotations

import math
import threading
from fractions import Fraction
from typing import Any, Optional, Union

import sympy
from mpmath.ctx_iv import MPIntervalContext

from ...engine.decide import certified

DPS = certified.LADDER[0]
"""The working precision (decimal digits) of the interval part: the certified ladder's first rung."""
MAX_TERMS = 100_000
"""The most terms a finite sum may have here (more: the slow path)."""
MAX_BITS = 100_000
"""The largest integer (in bits) an exact power, binomial or factorial may produce here (larger: the
slow path), so that a point never costs unbounded memory."""

Value = Union[Fraction, Any]  # a Fraction, or an mpmath interval of the context below


_local = threading.local()


def _context() -> Any:
    """This thread's interval context at :data:`DPS` digits (made once: making one costs 0.2 ms)."""
    ctx = getattr(_local, "ctx", None)
    if ctx is None:
        ctx = _local.ctx = MPIntervalContext()
    ctx.dps = DPS
    return ctx


class _Give(Exception):
    """This point is not for the fast path: the caller evaluates it the slow way."""


class _Evaluator:
    def __init__(self, values: dict) -> None:
        self.values = {s: Fraction(int(v.p), int(v.q)) for s, v in values.items()}
        self.ctx: Optional[Any] = None

    def interval(self, value: Value) -> Any:
        if self.ctx is None:
            self.ctx = _context()
        if isinstance(value, Fraction):
            return self.ctx.mpf(value.numerator) / self.ctx.mpf(value.denominator)
        return value

    def transcendental(self, node: sympy.Basic) -> Any:
        """A closed constant subtree (E, pi, exp(2), ...) by the certified module's own rules."""
        self.interval(Fraction(0))
        try:
            return certified._iv(node, self.ctx)
        except (certified.Unsupported, ZeroDivisionError, ValueError):
            raise _Give() from None

    def ev(self, node: sympy.Basic) -> Value:
        if node.is_Rational:
            return Fraction(int(node.p), int(node.q))
        if node.is_Symbol:
            if node not in self.values:
                raise _Give()
            return self.values[node]
        if node is sympy.E or node is sympy.pi:
            return self.transcendental(node)
        if node.is_Add:
            parts = [self.ev(arg) for arg in node.args]
            if all(isinstance(p, Fraction) for p in parts):
                return sum(parts, Fraction(0))
            total = self.interval(Fraction(0))
            for p in parts:
                total += self.interval(p)
            return total
        if node.is_Mul:
            parts = [self.ev(arg) for arg in node.args]
            if all(isinstance(p, Fraction) for p in parts):
                product = Fraction(1)
                for p in parts:
                    product *= p
                return product
            product = self.interval(Fraction(1))
            for p in parts:
                product *= self.interval(p)
            return product
        if node.is_Pow:
            return self.power(node)
        if isinstance(node, sympy.binomial):
            n, k = (self.integer(arg) for arg in node.args)
            if n < 0 or k < 0:
                raise _Give()  # sympy's generalised binomial: the slow path
            if k > n:
                return Fraction(0)
            self.bounded(n * max(1, min(k, n - k).bit_length()))
            return Fraction(math.comb(n, k))
        if isinstance(node, sympy.factorial):
            n = self.integer(node.args[0])
            if n < 0:
                raise _Give()
            self.bounded(n * max(1, n.bit_length()))
            return Fraction(math.factorial(n))
        if isinstance(node, sympy.Sum):
            return self.total(node)
        if isinstance(node, sympy.Piecewise):
            for value, condition in node.args:
                if self.holds(condition):
                    return self.ev(value)
            raise _Give()  # no branch holds: undefined here, which the slow path says
        if isinstance(node, (sympy.exp, sympy.log)) and len(node.args) == 1:
            value = self.interval(self.ev(node.args[0]))
            if isinstance(node, sympy.log) and not value.a > 0:
                raise _Give()
            raw = self.ctx.exp(value) if isinstance(node, sympy.exp) else self.ctx.log(value)
            return certified._widened(raw, self.ctx)
        raise _Give()

    _RELATIONS = {sympy.Eq: lambda a, b: a == b, sympy.Ne: lambda a, b: a != b,
                  sympy.Lt: lambda a, b: a < b, sympy.Le: lambda a, b: a <= b,
                  sympy.Gt: lambda a, b: a > b, sympy.Ge: lambda a, b: a >= b}

    def holds(self, condition: sympy.Basic) -> bool:
        """A Piecewise condition decided exactly: True, or a comparison of two rationals (else the slow path)."""
        if condition is sympy.true:
            return True
        if condition is sympy.false:
            return False
        test = self._RELATIONS.get(type(condition))
        if test is None:
            raise _Give()
        left, right = self.ev(condition.lhs), self.ev(condition.rhs)
        if not (isinstance(left, Fraction) and isinstance(right, Fraction)):
            raise _Give()
        return test(left, right)

    def integer(self, node: sympy.Basic) -> int:
        value = self.ev(node)
        if not isinstance(value, Fraction) or value.denominator != 1:
            raise _Give()
        return value.numerator

    @staticmethod
    def bounded(bits: int) -> None:
        if bits > MAX_BITS:
            raise _Give()

    def power(self, node: sympy.Pow) -> Value:
        base_node, exponent_node = node.args
        exponent = self.ev(exponent_node)
        base = self.ev(base_node)
        if isinstance(exponent, Fraction) and exponent.denominator == 1:
            power = exponent.numerator
            if isinstance(base, Fraction):
                if base == 0 and power < 0:
                    raise _Give()  # a zero denominator: undefined, which the slow path says
                size = max(abs(base.numerator), base.denominator).bit_length()
                self.bounded(size * abs(power))
                return base ** power
            if abs(power) > MAX_BITS:
                raise _Give()
            if power < 0:
                if base.a <= 0 <= base.b:
                    raise _Give()
                return self.interval(Fraction(1)) / base ** (-power)
            return base ** power
        value = self.interval(base)
        if not value.a > 0:
            raise _Give()  # a root of a value not shown positive: the slow path
        logarithm = certified._widened(self.ctx.log(value), self.ctx)
        return certified._widened(self.ctx.exp(self.interval(exponent) * logarithm), self.ctx)

    def total(self, node: sympy.Sum) -> Value:
        if len(node.limits) != 1 or len(node.limits[0]) != 3:
            raise _Give()
        index, low_node, high_node = node.limits[0]
        low, high = self.integer(low_node), self.integer(high_node)
        if high < low - 1 or high - low + 1 > MAX_TERMS:
            raise _Give()  # sympy's Karr convention for reversed limits, or too many terms: the slow path
        saved = self.values.get(index)
        parts = []
        try:
            for k in range(low, high + 1):
                self.values[index] = Fraction(k)
                parts.append(self.ev(node.function))
        finally:
            if saved is None:
                self.values.pop(index, None)
            else:
                self.values[index] = saved
        if all(isinstance(p, Fraction) for p in parts):
            return sum(parts, Fraction(0))
        total = self.interval(Fraction(0))
        for p in parts:
            total += self.interval(p)
        return total


def sign(lhs: sympy.Expr, rhs: sympy.Expr, values: dict) -> Optional[int]:
    """The sign of ``lhs - rhs`` at ``values`` (symbols to sympy rationals), exactly (both sides
    rational) or certified (an interval off 0); None when this path cannot tell and the caller must
    evaluate the point the slow way (including every point where a side may be undefined)."""
    if not all(getattr(v, "is_Rational", False) for v in values.values()):
        return None
    evaluator = _Evaluator(values)
    try:
        left, right = evaluator.ev(lhs), evaluator.ev(rhs)
        if isinstance(left, Fraction) and isinstance(right, Fraction):
            return (left > right) - (left < right)
        gap = evaluator.interval(left) - evaluator.interval(right)
    except (_Give, ZeroDivisionError, ValueError, OverflowError):
        return None
    ctx = evaluator.ctx
    if any(ctx.isinf(end) or ctx.isnan(end) for end in (gap.a, gap.b)):
        return None
    if gap.a > 0:
        return 1
    if gap.b < 0:
        return -1
    return None
