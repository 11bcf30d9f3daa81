"""Small builders shared by the framework's tests."""
from __future__ import annotations

from fractions import Fraction

import mpmath
import sympy

import dpverify as dp

eps = dp.symbol("eps", positive=True)


def rr_spec(claim_factor: Fraction = Fraction(1), grid=(1,)) -> dp.Spec:
    """Randomized response on one bit, claiming claim_factor * eps."""
    def rr(data, eps):
        return dp.randomized_response(data[0], eps)
    return dp.spec(rr, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                   grid={eps: list(grid)}, claims=[dp.private(claim_factor * eps)])


def statuses(spec: dp.Spec) -> list[str]:
    return [r.status.value for r in dp.check(spec)]


# -- certified intervals, read back as plain mpmath numbers --------------------------------------

def lo_hi(x) -> tuple[mpmath.mpf, mpmath.mpf]:
    """The endpoints of a certified interval as plain mpmath numbers (exactly: no rounding)."""
    with mpmath.workprec(max(mpmath.mp.prec, 400)):
        return mpmath.mpf(x._mpi_[0]), mpmath.mpf(x._mpi_[1])


def mid(x) -> mpmath.mpf:
    lo, hi = lo_hi(x)
    return (lo + hi) / 2


def encloses(x, value) -> bool:
    """The interval x contains the (60-digit) value of an exact sympy number."""
    with mpmath.workdps(60):
        lo, hi = lo_hi(x)
        v = mpmath.mpf(str(sympy.N(value, 60))) if isinstance(value, sympy.Basic) else mpmath.mpf(value)
        return lo <= v <= hi


def frac(x) -> mpmath.mpf:
    """An exact rational as an mpmath number at the working precision."""
    x = Fraction(x)
    return mpmath.mpf(x.numerator) / x.denominator
