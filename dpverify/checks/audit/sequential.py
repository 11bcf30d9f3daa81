"""The sequential form of the statistical audit's tests: looks at growing prefixes of the samples.

A black box is run ``samples`` = n times per dataset and run.  Its tests (the exact binomial tests of
conformance, the Clopper-Pearson bounds of ``private``) are read at the looks :func:`looks` -- after
n/16, n/8, n/4, n/2 and n draws -- and the sampling of a dataset stops at the first look that rejects:
a clearly broken code is refuted after a fraction of the draws, a conforming one is still sampled n
times.  Each test's error probability ``level`` (its Bonferroni share of the overall ``error``) is spent
over the looks by a schedule fixed in advance (:func:`look_level`: half at the last look, the other half
evenly over the earlier ones), so by a union bound over the looks the probability that a true null
rejects at *any* look is at most ``level``, and the overall error probability of a refutation stays
``error`` -- never a fixed-n test read repeatedly at its full level.  The re-run with fresh seeds that
confirms a rejection uses the same looks and the same spending.

:func:`may_reject` is a screen (it never rejects): it skips the exact tails at an early look when the
count is certainly not extreme enough, which saves their cost and changes no decision.
``tests/test_audit_sequential.py`` checks the spending and the screen.
"""
from __future__ import annotations

import math


LOOKS = 5
"""The looks of the sequential tests: each test is read after n/16, n/8, n/4, n/2 and n of the ``samples``
draws per dataset (:func:`looks`).  Its error probability is spent over them (:func:`look_level`)."""


def looks(n: int) -> list[int]:
    """The sample counts at which a test looks: n/16, n/8, n/4, n/2, n (fewer for a tiny n)."""
    return sorted({max(1, n >> (LOOKS - 1 - j)) for j in range(LOOKS)})


def look_level(level: float, m: int, n: int) -> float:
    """The error probability a test of per-test level ``level`` spends at its look after ``m`` of ``n`` draws:
    half at the last look, the other half split evenly over the (at most LOOKS - 1) earlier ones -- a union
    bound over the looks keeps the test's error probability at most ``level`` whatever the stopping
    (alpha spending: the level of each look is fixed in advance, never chosen from the data)."""
    return level / 2 if m >= n else level / (2 * (LOOKS - 1))


def may_reject(m: int, k: int, lo: float, hi: float, level: float) -> bool:
    """False only when the exact two-sided test of k in m against [lo, hi] at ``level`` certainly does not
    reject: both tails are at least P(X = k) >= exp(-m KL(k/m || p)) / (m + 1) (method of types), checked
    against 2 x level for rounding.  A screen that saves the exact tails at early looks; it never rejects."""
    f = k / m
    p = lo if f < lo else (hi if f > hi else None)
    if p is None:
        return False  # the frequency lies inside the spec's interval: no side can reject
    if p <= 0.0 or p >= 1.0:
        return True
    kl = (f * math.log(f / p) if f > 0 else 0.0) + ((1 - f) * math.log((1 - f) / (1 - p)) if f < 1 else 0.0)
    return -m * kl - math.log(m + 1) < math.log(2 * level)


__all__ = ["LOOKS", "look_level", "looks", "may_reject"]
