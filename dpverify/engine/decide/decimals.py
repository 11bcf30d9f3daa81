"""Numbers as the results print them: decimal strings with a fixed number of significant digits,
evaluated with strict (relative) precision so that tiny values are not printed as 0."""
from __future__ import annotations

import math
from typing import Any

import mpmath
import sympy

from . import certified

DIGITS = 40  # significant digits in every decimal string we print


def _evaluated(value: sympy.Basic) -> sympy.Basic:
    """``value`` to DIGITS + 5 significant digits: strict (relative) precision on a fixed ladder of
    working precisions, so log(1 + 10^-70) prints as 1e-70, not as the 0 a plain evalf gives."""
    if certified.supported(value):  # our own interval evaluation: sympy's evalf calls log(1 + 10^-70) 0
        found = certified.pinned(value, DIGITS + 5)
        if found is not None:
            with mpmath.workdps(DIGITS + 15):
                return sympy.Float(mpmath.mp.make_mpf(found.mid._mpi_[0]), DIGITS + 5)
    for working in (100, 2000):
        try:
            return value.evalf(DIGITS + 5, strict=True, maxn=working)
        except Exception:  # PrecisionExhausted (an exact zero, or deeper cancellation): try the next
            continue
    return value.evalf(DIGITS + 5)


def decimal(value: Any) -> str:
    """A decimal string with DIGITS significant digits ("inf" for infinity)."""
    if value is None:
        return "null"
    if value == math.inf:
        return "inf"
    with mpmath.workdps(DIGITS + 5):
        if isinstance(value, sympy.Basic):
            value = mpmath.mpf(str(sympy.Float(_evaluated(value), DIGITS + 5)))
        elif hasattr(value, "_mpi_"):  # an mpmath interval: its midpoint
            value = mpmath.mp.make_mpf(value.mid._mpi_[0])
        return mpmath.nstr(mpmath.mpf(value), DIGITS, strip_zeros=False, min_fixed=-6, max_fixed=12)
