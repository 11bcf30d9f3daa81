"""Exact numbers of the form (sum c_i e^{a_i}) / (sum d_j e^{b_j}) with rational c, a, d, b.

Every probability of the discrete primitives at a rational parameter value lives in
this field: e^eps, exp-mechanism weights e^{eps u / (2 Delta)}, geometric masses a^{-k}
with a = e^{eps/Delta}, claimed bounds e^{eps'} with eps' = k*eps + 10^-100.

Zero is decided exactly: by the Lindemann-Weierstrass theorem, e^{a_1}, ..., e^{a_k}
for distinct rationals a_i are linearly independent over the rationals, so a sum
sum c_i e^{a_i} (equal exponents merged) is zero iff every c_i is.  A non-zero sum has
its sign decided in mpmath interval arithmetic at doubling precision until the
enclosure excludes 0, which terminates because the value is not zero (a far cap
raises :class:`Undecided` rather than guess).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Union

import mpmath
import sympy

MAX_BITS = 1 << 17  # far cap on the working precision of a sign decision


class Undecided(Exception):
    """A sign that the capped precision could not settle (never a guess)."""


def as_fraction(x: Any) -> Fraction:
    """An exact rational from an int, Fraction or sympy Rational (bools refused)."""
    if isinstance(x, bool):
        raise TypeError(f"{x!r} is a bool, not a number")
    if isinstance(x, (int, Fraction)):
        return Fraction(x)
    if isinstance(x, sympy.Rational):
        return Fraction(int(x.p), int(x.q))
    raise TypeError(f"{x!r} ({type(x).__name__}) is not an exact rational")


class ExpPoly:
    """A finite sum sum_a c_a e^a, stored as {a: c} with rational a and non-zero rational c."""

    __slots__ = ("terms",)

    def __init__(self, terms: dict[Fraction, Fraction] | None = None) -> None:
        self.terms = {a: c for a, c in (terms or {}).items() if c != 0}

    @staticmethod
    def const(c: Fraction) -> "ExpPoly":
        return ExpPoly({Fraction(0): Fraction(c)})

    def __add__(self, other: "ExpPoly") -> "ExpPoly":
        out = dict(self.terms)
        for a, c in other.terms.items():
            out[a] = out.get(a, Fraction(0)) + c
        return ExpPoly(out)

    def __neg__(self) -> "ExpPoly":
        return ExpPoly({a: -c for a, c in self.terms.items()})

    def __sub__(self, other: "ExpPoly") -> "ExpPoly":
        return self + (-other)

    def __mul__(self, other: "ExpPoly") -> "ExpPoly":
        out: dict[Fraction, Fraction] = {}
        for a, c in self.terms.items():
            for b, d in other.terms.items():
                out[a + b] = out.get(a + b, Fraction(0)) + c * d
        return ExpPoly(out)

    def is_zero(self) -> bool:
        return not self.terms

    def single(self) -> tuple[Fraction, Fraction] | None:
        """(a, c) when the sum is the single term c e^a."""
        return next(iter(self.terms.items())) if len(self.terms) == 1 else None

    def enclosure(self, bits: int) -> Any:
        """A certified mpmath interval containing the value, at ``bits`` of precision."""
        iv = mpmath.iv
        saved = iv.prec
        iv.prec = bits
        try:
            total = iv.mpf(0)
            for a, c in self.terms.items():
                coeff = iv.mpf(c.numerator) / c.denominator
                total += coeff * iv.exp(iv.mpf(a.numerator) / a.denominator)
            return total
        finally:
            iv.prec = saved

    def sign(self) -> int:
        """-1, 0 or 1, decided exactly (see the module docstring)."""
        if not self.terms:
            return 0
        if len(self.terms) == 1:
            return 1 if next(iter(self.terms.values())) > 0 else -1
        bits = 128
        while bits <= MAX_BITS:
            x = self.enclosure(bits)
            if x.a > 0:
                return 1
            if x.b < 0:
                return -1
            bits *= 2
        raise Undecided(f"sign of a {len(self.terms)}-term exponential sum beyond {MAX_BITS} bits")

    def to_sympy(self) -> sympy.Expr:
        return sympy.Add(*[sympy.Rational(c.numerator, c.denominator)
                           * sympy.exp(sympy.Rational(a.numerator, a.denominator))
                           for a, c in sorted(self.terms.items())])


Number = Union[int, Fraction, "Q"]


class Q:
    """num / den with exponential sums num and den (den != 0): exact arithmetic and order."""

    __slots__ = ("num", "den")

    def __init__(self, num: ExpPoly, den: ExpPoly | None = None) -> None:
        den = den if den is not None else ExpPoly.const(Fraction(1))
        if den.is_zero():
            raise ZeroDivisionError("division by an exact zero")
        one = den.single()
        if one is not None:  # normalise a monomial denominator away
            a, c = one
            num = num * ExpPoly({-a: 1 / c})
            den = ExpPoly.const(Fraction(1))
        self.num, self.den = num, den

    @staticmethod
    def of(x: Any) -> "Q":
        if isinstance(x, Q):
            return x
        return Q(ExpPoly.const(as_fraction(x)))

    @staticmethod
    def exp(a: Any) -> "Q":
        """e^a for rational a."""
        return Q(ExpPoly({as_fraction(a): Fraction(1)}))

    # arithmetic ---------------------------------------------------------------------------
    def __add__(self, other: Any) -> "Q":
        o = _coerce(other)
        if o is NotImplemented:
            return NotImplemented
        return Q(self.num * o.den + o.num * self.den, self.den * o.den)

    __radd__ = __add__

    def __neg__(self) -> "Q":
        return Q(-self.num, self.den)

    def __sub__(self, other: Any) -> "Q":
        o = _coerce(other)
        return NotImplemented if o is NotImplemented else self + (-o)

    def __rsub__(self, other: Any) -> "Q":
        o = _coerce(other)
        return NotImplemented if o is NotImplemented else o + (-self)

    def __mul__(self, other: Any) -> "Q":
        o = _coerce(other)
        if o is NotImplemented:
            return NotImplemented
        return Q(self.num * o.num, self.den * o.den)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> "Q":
        o = _coerce(other)
        if o is NotImplemented:
            return NotImplemented
        return Q(self.num * o.den, self.den * o.num)

    def __rtruediv__(self, other: Any) -> "Q":
        o = _coerce(other)
        return NotImplemented if o is NotImplemented else o / self

    def __pow__(self, k: Any) -> "Q":
        if isinstance(k, bool) or not isinstance(k, int):
            raise TypeError(f"only integer powers of exact numbers, got {k!r}")
        if k < 0:
            return Q.of(1) / (self ** -k)
        out = Q.of(1)
        for _ in range(k):
            out = out * self
        return out

    # order -------------------------------------------------------------------------------
    def sign(self) -> int:
        return self.num.sign() * self.den.sign()

    def is_zero(self) -> bool:
        return self.num.is_zero()

    def _cmp(self, other: Any) -> int:
        o = _coerce(other)
        if o is NotImplemented:
            raise TypeError(f"cannot compare an exact number with {other!r}")
        return (self - o).sign()

    def __eq__(self, other: Any) -> bool:  # type: ignore[override]
        o = _coerce(other)
        return False if o is NotImplemented else (self - o).is_zero()

    def __lt__(self, other: Any) -> bool:
        return self._cmp(other) < 0

    def __le__(self, other: Any) -> bool:
        return self._cmp(other) <= 0

    def __gt__(self, other: Any) -> bool:
        return self._cmp(other) > 0

    def __ge__(self, other: Any) -> bool:
        return self._cmp(other) >= 0

    def __bool__(self) -> bool:
        return not self.is_zero()

    __hash__ = None  # type: ignore[assignment]  (exact numbers of this kind are never outputs)

    # read-back ---------------------------------------------------------------------------
    def to_sympy(self) -> sympy.Expr:
        return self.num.to_sympy() / self.den.to_sympy()

    def mpf(self, dps: int = 60) -> mpmath.mpf:
        """The value to about ``dps`` digits (for reports and tolerant comparisons only)."""
        with mpmath.workdps(2 * dps + 20):
            return _approx(self.num) / _approx(self.den)

    def log_mpf(self, dps: int = 60) -> mpmath.mpf:
        with mpmath.workdps(dps + 20):
            return mpmath.log(self.mpf(dps + 20))

    def __repr__(self) -> str:
        return f"Q({self.to_sympy()})"


def _approx(p: ExpPoly) -> mpmath.mpf:
    return mpmath.fsum(mpmath.mpf(c.numerator) / c.denominator * mpmath.exp(mpmath.mpf(a.numerator) / a.denominator)
                       for a, c in p.terms.items())


def _coerce(x: Any) -> Any:
    if isinstance(x, Q):
        return x
    try:
        return Q.of(x)
    except TypeError:
        return NotImplemented
