"""Exact binomial tails and Clopper-Pearson confidence bounds, for the statistical audit of black boxes.

For X ~ Bin(n, p), :func:`at_least` and :func:`at_most` enclose P(X >= k) and P(X <= k) in an
interval: the smaller tail is summed term by term from its first term outwards (the terms
decrease geometrically there, so the rest is bounded by a geometric series), the larger one is
its complement.  Terms are computed in doubles from ``math.lgamma``; their relative rounding
error is below 1e-8 for n <= 10^7, and every enclosure is widened by :data:`MARGIN` = 1e-6
relative, so a comparison with a level decided by the enclosure is certain.

The Clopper-Pearson bounds invert those tails by bisection and keep the conservative end of
the final bracket (the lower bound from below, the upper from above): the interval returned
contains the exact Clopper-Pearson interval.  scipy is not needed.
"""
from __future__ import annotations

import math

MARGIN = 1e-6
"""The relative widening of every tail enclosure (rounding of lgamma, exp and the sums is < 1e-8)."""
MAX_N = 10 ** 7
_RELATIVE = 1e-17  # summing stops when the geometric bound on the rest is below this share of the sum


def _tail_from(n: int, k: int, p: float) -> tuple[float, float]:
    """Enclose sum_{j >= k} C(n, j) p^j (1-p)^(n-j) for k >= n p, where the terms decrease."""
    q = 1.0 - p
    log_t = (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
             + k * math.log(p) + (n - k) * math.log1p(-p))
    if log_t < -745.0:  # below the smallest double: the whole tail is at most (n + 1) e^-745
        return 0.0, 1e-300
    t, total, rest, j = math.exp(log_t), 0.0, 0.0, k
    while True:
        total += t
        if j == n:
            rest = 0.0
            break
        r = (n - j) * p / ((j + 1) * q)
        rest = t * r / (1.0 - r)
        if rest <= _RELATIVE * total or t == 0.0:
            break
        t, j = t * r, j + 1
    return total * (1 - MARGIN), min(1.0, (total + rest) * (1 + MARGIN) + 1e-300)


def at_least(n: int, k: int, p: float) -> tuple[float, float]:
    """An enclosure (lo, hi) of P(X >= k) for X ~ Bin(n, p)."""
    if not 0 < n <= MAX_N:
        raise ValueError(f"binomial tails need 0 < n <= {MAX_N:,}, not n = {n}")
    if k <= 0 or p >= 1.0:
        return (1.0, 1.0) if k <= n else (0.0, 0.0)
    if k > n or p <= 0.0:
        return 0.0, 0.0
    if k >= n * p:
        return _tail_from(n, k, p)
    lo, hi = _tail_from(n, n - k + 1, 1.0 - p)  # P(X <= k - 1), the smaller side, summed downwards
    return max(0.0, 1.0 - hi), min(1.0, 1.0 - lo)


def at_most(n: int, k: int, p: float) -> tuple[float, float]:
    """An enclosure (lo, hi) of P(X <= k) for X ~ Bin(n, p)."""
    return at_least(n, n - k, 1.0 - p)


def lower_bound(n: int, k: int, level: float) -> float:
    """The one-sided Clopper-Pearson lower bound on p after k successes in n trials: P(X >= k) =
    ``level`` there.  Returned from below: p >= this with error probability at most ``level``."""
    if k == 0:
        return 0.0
    lo, hi = 0.0, 1.0
    while hi - lo > 1e-15 * hi:
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if at_least(n, k, mid)[1] < level:
            lo = mid  # the tail is certainly below the level: the bound is above mid
        else:
            hi = mid
    return lo


def upper_bound(n: int, k: int, level: float) -> float:
    """The one-sided Clopper-Pearson upper bound: P(X <= k) = ``level`` there; returned from above."""
    return 1.0 - lower_bound(n, n - k, level)


def interval(n: int, k: int, error: float) -> tuple[float, float]:
    """The two-sided Clopper-Pearson interval at error probability ``error`` (``error``/2 per side)."""
    return lower_bound(n, k, error / 2), upper_bound(n, k, error / 2)


def outside(n: int, k: int, p_lo: float, p_hi: float, error: float) -> int:
    """-1 when every p in [p_lo, p_hi] lies certainly below the two-sided interval of k in n at
    ``error`` (the count is too high for p), +1 when above (too low), 0 otherwise.  Decided by the
    tails at the nearer end, without computing the interval."""
    if at_least(n, k, p_hi)[1] < error / 2:
        return -1
    if at_most(n, k, p_lo)[1] < error / 2:
        return 1
    return 0


__all__ = ["MARGIN", "at_least", "at_most", "interval", "lower_bound", "outside", "upper_bound"]
