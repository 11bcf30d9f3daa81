"""Arithmetic backends: the same program read with different kinds of numbers.

The engine and the primitives are written once against this small interface
(as mpmath runs the same code under ``mp``, ``fp`` and ``iv``).  Two readings
exist so far:

* :class:`IntervalBackend` -- mpmath interval arithmetic in a private context
  at a chosen precision.  Every weight is an interval guaranteed to contain the
  exact value, so comparisons are certified or come back undecided (``None``).
* :class:`SympyBackend` -- exact sympy expressions, used to decide ties that no
  interval can (a claim that is exactly tight).

mpmath's global precision is never touched: each interval backend owns a fresh
``MPIntervalContext``.
"""
from __future__ import annotations

import functools
from fractions import Fraction
from typing import Any, Hashable, Optional

import mpmath
import sympy
from mpmath.ctx_iv import MPIntervalContext
from mpmath.libmp import fzero, mpf_sign

from ...dsl.exact import exact_float  # noqa: F401  (re-exported: the readings' float rule)
from ...errors import SpecError
from ..decide import certified
from .parameter import Parameter, sympy_rational as _rational


class Backend:
    """The operations a reading must provide for weights (probabilities).

    ``validates``: whether primitives check their arguments (probabilities in
    [0, 1] summing to 1) in this reading.  The certified interval reading, which
    every check runs first on every dataset, does; exact re-readings of the same
    program skip checks that are costly in exact arithmetic.
    """

    name = "abstract"
    validates = True

    def num(self, value: Any) -> Any:
        """Convert an int, Fraction, decimal float or sympy number into a weight."""
        raise NotImplementedError

    def exp(self, value: Any) -> Any:
        raise NotImplementedError

    def log(self, value: Any) -> Any:
        raise NotImplementedError

    def sqrt(self, value: Any) -> Any:
        raise NotImplementedError

    def is_zero(self, value: Any) -> bool:
        """True only when the weight is exactly zero."""
        raise NotImplementedError

    def sign(self, value: Any) -> Optional[int]:
        """-1, 0 or 1 when certain, None when this reading cannot tell."""
        raise NotImplementedError

    def key(self, value: Any) -> Hashable:
        """A hashable stand-in, equal for equal weights (for caching)."""
        raise NotImplementedError

    def exact_key(self, value: Any) -> Optional[Hashable]:
        """A hashable stand-in equal only for exactly equal values, or None when this reading does not
        pin the value down (then equal keys prove nothing)."""
        raise NotImplementedError


_WORKING_DIGITS = (100, 2_000, 20_000)
"""The working precisions (digits) sympy may use to pin an exact number down, tried in order."""


class IntervalBackend(Backend):
    """Certified interval arithmetic with mpmath at ``dps`` significant digits."""

    name = "mpmath-iv"

    def __init__(self, dps: int = 50) -> None:
        self.dps = dps
        self.ctx = MPIntervalContext()
        self.ctx.dps = dps
        self._zero = self.ctx.mpf(0)
        self._exps: dict = {}
        self._rationals: dict = {}
        self._exacts: dict = {}

    def num(self, value: Any) -> Any:
        ctx = self.ctx
        if isinstance(value, ctx.mpf):
            return value
        if type(value) in (int, Fraction):  # the hot case: exact rationals recur (breakpoints, rates)
            found = self._rationals.get(value)
            if found is None:
                if len(self._rationals) > 100_000:
                    self._rationals.clear()
                found = self._rationals[value] = ctx.mpf(value.numerator) / ctx.mpf(value.denominator)
            return found
        exact = _rational(value)
        if exact is not None:
            return ctx.mpf(int(exact.p)) / ctx.mpf(int(exact.q))
        if isinstance(value, sympy.Basic):
            found = self._exacts.get(value)
            if found is None:
                if len(self._exacts) > 100_000:
                    self._exacts.clear()
                found = self._exacts[value] = self._enclose(value)
            return found
        if isinstance(value, Parameter):
            raise SpecError(f"the value {value.expr} still contains the symbols {value.expr.free_symbols}",
                            "give every parameter a value in the grid")
        raise SpecError(f"{value!r} (a {type(value).__name__}) is not a number the engine can use",
                        "use ints, Fractions, sympy numbers or the dp.exp/dp.log helpers")

    def _enclose(self, value: sympy.Basic) -> Any:
        """A certified interval around an exact sympy number; an exact zero only when proved zero.

        sympy's evaluation with ``strict=True`` guarantees the requested digits or
        raises; a value it cannot bound away from 0 is decided by exact algebra
        (a probability written as 1 - e^eps e^-eps is exactly 0, never an interval
        around it).
        """
        if value.free_symbols:
            raise SpecError(f"the value {value} still contains the symbols {value.free_symbols}",
                            "give every parameter a value in the grid")
        if value == 0:
            return self._zero
        if certified.supported(value):  # our own interval evaluation (sympy's evalf is no certificate)
            best = None
            for dps in (self.dps + 20, *(d for d in certified.LADDER if d > self.dps + 20)):
                found = certified.enclosure(value, dps)
                if found is None:
                    break
                if found.a > 0 or found.b < 0:  # off 0: keep it, and stop once it is tight as well
                    lo, hi = (mpmath.mp.make_mpf(end) for end in found._mpi_)
                    best = self.ctx.mpf([lo, hi])  # rounded outward to this context's precision
                    if found.delta <= abs(found.mid) * found.ctx.mpf(10) ** (-(self.dps + 5)):
                        return best
                elif dps == self.dps + 20 and is_exactly_zero(value):
                    return self._zero
            if best is not None:
                return best
            if is_exactly_zero(value):
                return self._zero
            raise SpecError(f"cannot bound {value} away from 0 at {certified.LADDER[-1]} digits",
                            "simplify the expression or raise --precision")
        if value.is_zero:
            return self._zero
        digits = self.dps + 20
        approx = None
        for working in _WORKING_DIGITS:  # a fixed ladder: deep cancellations (1 - p at eps = 10^4) need more
            try:
                approx = value.evalf(digits, strict=True, maxn=max(working, digits + 30))
            except Exception:  # PrecisionExhausted (a zero, or a cancellation) and friends
                approx = None
            if approx is not None and approx.is_Float and not approx.is_zero:
                break
            if working == _WORKING_DIGITS[0] and is_exactly_zero(value):
                return self._zero
        if approx is None or not approx.is_Float or approx.is_zero:
            if is_exactly_zero(value):
                return self._zero
            raise SpecError(f"cannot bound {value} away from 0 at {digits} digits",
                            "simplify the expression or raise --precision")
        ctx = self.ctx
        text = str(sympy.Float(approx, digits))
        mid = ctx.mpf(text)
        radius = abs(ctx.mpf(text)) * ctx.mpf(10) ** (-(self.dps + 12))
        return ctx.mpf([(mid - radius).a, (mid + radius).b])

    def exp(self, value: Any) -> Any:
        value = self.num(value)
        key = value._mpi_
        found = self._exps.get(key)
        if found is None:  # the same exponents recur across datasets: compute each once
            found = self._exps[key] = self.ctx.exp(value)
        return found

    def log(self, value: Any) -> Any:
        return self.ctx.log(self.num(value))

    def sqrt(self, value: Any) -> Any:
        return self.ctx.sqrt(self.num(value))

    def is_zero(self, value: Any) -> bool:
        a, b = self.num(value)._mpi_
        return a == fzero and b == fzero

    def sign(self, value: Any) -> Optional[int]:
        a, b = self.num(value)._mpi_
        if mpf_sign(a) > 0:
            return 1
        if mpf_sign(b) < 0:
            return -1
        if a == fzero and b == fzero:
            return 0
        return None

    def key(self, value: Any) -> Hashable:
        return self.num(value)._mpi_

    def exact_key(self, value: Any) -> Optional[Hashable]:
        """The enclosure when it is a point (an exact binary number); None otherwise: two values that
        differ below the working precision can share an enclosure that is not a point."""
        a, b = self.num(value)._mpi_
        return (a, b) if a == b else None


class SympyBackend(Backend):
    """Exact sympy expressions (slow; for deciding ties and for symbolic readings)."""

    name = "sympy"
    validates = False

    def num(self, value: Any) -> Any:
        exact = _rational(value)
        if exact is not None:
            return exact
        if isinstance(value, sympy.Basic):
            return value
        if isinstance(value, Parameter):
            return value.expr
        raise SpecError(f"{value!r} (a {type(value).__name__}) is not a number the engine can use",
                        "use ints, Fractions, sympy numbers or the dp.exp/dp.log helpers")

    def exp(self, value: Any) -> Any:
        return sympy.exp(self.num(value))

    def log(self, value: Any) -> Any:
        return sympy.log(self.num(value))

    def sqrt(self, value: Any) -> Any:
        return sympy.sqrt(self.num(value))

    def is_zero(self, value: Any) -> bool:
        """Exactly zero, decided by exact algebra when a strict evaluation cannot tell (as the interval
        reading decides it, so both readings drop the same branches)."""
        value = self.num(value)
        if value == 0:
            return True
        if value.free_symbols:  # symbolic weights: a zero that sympy does not cancel stays, harmlessly
            return False
        return exact_sign(value) == 0

    def sign(self, value: Any) -> Optional[int]:
        return exact_sign(self.num(value))

    def key(self, value: Any) -> Hashable:
        return self.num(value)

    def exact_key(self, value: Any) -> Optional[Hashable]:
        return self.num(value)


_W = sympy.Symbol("w", positive=True)


MAX_W_DEGREE = 2000
"""The largest power of w = e^(1/L) an exact zero test builds; above it the zero is not shown (the
caller then says `unknown`): a tie at eps = 10^4 gave w^30000 and sympy ran for hours."""


def is_exactly_zero(expr: sympy.Expr) -> bool:
    """True only when ``expr`` is provably zero (False means "not shown", not "non-zero").

    Every exp(r) with rational r is rewritten as w**(r*L) with w = e^(1/L); as
    e^(1/L) is transcendental (Lindemann-Weierstrass), the expression is zero
    exactly when the resulting rational function in w cancels to zero.  Other
    transcendentals (log 2, pi, exp(sqrt 2)) stay atoms: an identity in them and w
    holds at their values too.  A sympy Float is not exact (sympy rounds arithmetic
    with it, and simplify turns it into a nearby rational): never shown zero.
    """
    if sympy.sympify(expr).has(sympy.Float):
        return False
    expr = sympy.expand(expr, power_exp=True, mul=False, multinomial=False, log=False, basic=False)
    powers = {a: a.args[0] for a in expr.atoms(sympy.exp) if a.args[0].is_Rational}
    if expr.has(sympy.E):
        powers[sympy.E] = sympy.Integer(1)
    if powers:
        lcm = functools.reduce(sympy.ilcm, [r.q for r in powers.values()], 1)
        if max(abs(r) * lcm for r in powers.values()) > MAX_W_DEGREE:
            return False  # not shown: sympy's polynomial algebra at such degrees runs for hours
        expr = expr.xreplace({a: _W ** (r * lcm) for a, r in powers.items()})
    if FIELD_ZERO_TEST:
        in_field = _zero_in_field(expr)
        if in_field is not None:
            return in_field
    for simplify in (sympy.cancel, sympy.simplify):
        try:
            reduced = simplify(expr)
            if reduced == 0:
                return True
            if simplify is sympy.cancel and _rational_in_w(reduced):
                return False  # a non-zero rational function of w alone: nothing left for simplify
        except Exception:  # sympy gives up on some forms; the next method may not
            continue
    return False


FIELD_ZERO_TEST = True
"""Whether :func:`is_exactly_zero` first reads the expression as an element of the field QQ(w) (exact
rational-function arithmetic, no Expr trees: about 30x faster than sympy.cancel on a law's total
mass); False: sympy.cancel and simplify only (the reference the tests compare with)."""

_FIELD: list = []


def _zero_in_field(expr: sympy.Expr) -> Optional[bool]:
    """Whether ``expr`` is zero, when it is an element of QQ(w) (built from rationals and w by +, *, and
    integer powers); None when it is not one (another transcendental, a symbol): the caller decides.
    In QQ(w) zero is decided exactly, as sympy.cancel decides it, by the same arithmetic."""
    if expr.free_symbols - {_W}:
        return None
    if not _FIELD:
        _FIELD.append(sympy.QQ.frac_field(_W))
    field = _FIELD[0]
    try:
        value = field.from_sympy(expr)
    except (sympy.CoercionFailed, sympy.PolynomialError, ZeroDivisionError, TypeError, ValueError):
        return None
    return not value


def _rational_in_w(expr: sympy.Expr) -> bool:
    """``expr`` is a ratio of polynomials in w with rational coefficients (cancel decides its zero)."""
    if expr.free_symbols - {_W}:
        return False
    try:
        return all(sympy.Poly(part, _W).domain in (sympy.ZZ, sympy.QQ) for part in sympy.fraction(expr))
    except sympy.PolynomialError:
        return False


@functools.lru_cache(maxsize=4096)
def exact_sign(expr: sympy.Expr, digits: int = 60) -> Optional[int]:
    """The sign of an exact real constant expression, or None if undecidable.

    Zero is recognised only by exact algebra (:func:`is_exactly_zero`), never
    from a numeric value; a non-zero sign only from a numeric evaluation that
    sympy certifies to ``digits`` digits (``strict=True`` raises when it cannot),
    at a small working precision first, then (after the algebra) a larger one.
    An expression holding a sympy Float has no exact sign here (None): sympy rounds
    arithmetic with Floats (0.1 - 1/10 becomes 0, though the binary 0.1 is larger).
    """
    expr = sympy.sympify(expr)
    if expr.has(sympy.Float):
        return None
    if expr == 0:
        return 0
    if certified.supported(expr):  # our own interval evaluation: sympy's evalf and is_negative are not
        # certificates (both call log(1 + 10^-70) - 10^-80 negative)
        first = certified.sign(expr, certified.LADDER[:1])
        if first is not None:
            return first
        if is_exactly_zero(expr):
            return 0  # a tie, shown by algebra before a costlier evaluation
        return certified.sign(expr, certified.LADDER[1:])
    if expr.is_zero:
        return 0
    for working in SIGN_WORKING_DIGITS:  # other functions (erf, Abs, ...): sympy's strict evaluation, trusted
        try:
            value = expr.evalf(digits, strict=True, maxn=working)
        except Exception:  # PrecisionExhausted and friends: cannot tell at this working precision
            if working == SIGN_WORKING_DIGITS[0] and is_exactly_zero(expr):
                return 0
            continue
        if not (value.is_Float or value.is_Rational) or value.is_zero:  # complex, or not a number: no sign
            break
        return 1 if value > 0 else -1
    return None


SIGN_WORKING_DIGITS = (100, 2000)
"""The working precisions (digits) sympy may use to certify a sign: a fixed ladder, not a time budget."""
