"""Float-speed screening of privacy-loss ratios, with rigorous float enclosures.

Every law of a :class:`~dpverify.engine.program.reading.Table` holds certified mpmath intervals.  This
module turns them, once per table, into float64 arrays indexed by distinct law and output
(:class:`Enclosures`: ``lo <= P(o | law) <= hi``, both rounded outward with ``np.nextafter``; an
output a law lacks is exactly 0 in both), and screens pairs of laws given as index arrays in one
vectorised pass (:func:`screen`).

The pass divides, like the bare float computation it is measured against
(``bench/bench_screening.py``), one float per cell: ``q = hi_A / hi_B``.  It stays rigorous because
every present cell of the table satisfies ``hi <= W lo`` for one constant ``W`` (computed from the
arrays, rounded up), so with ``K = W / (1 - 2^-53)`` (it also covers the division's rounding) the
true ratio P_A / P_B lies in ``[q / K, q K]`` and its reciprocal in ``[1 / (q K), K / q]``.  The
few scalars derived from the pass (the largest lower bound, the thresholds) are computed in exact
rationals from the floats.  Tables where no such ``W`` exists (a probability whose interval reaches
0, below the smallest normal double, or unbounded) are screened by :func:`screen_wide`, which
divides both bounds per cell (about four times the work, same guarantees).

Floats never decide a verdict here: they only rule cells out, and every cell they keep is
recomputed in interval arithmetic by the caller (:mod:`dpverify.engine.loss.pairs`).
"""
from __future__ import annotations

import gc
import math
import operator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import numpy as np

TINY = float(np.finfo(np.float64).tiny)
"""The smallest normal double: a present probability's lower bound must reach it for the one-division
pass (then no quotient of two bounds under- or overflows, and subnormal flushing cannot matter)."""
HUGE = float(np.finfo(np.float64).max)
CHUNK = 1 << 15
"""Cells (outputs x pairs) per numpy block: each temporary stays in the core's cache (2^15 doubles,
256 KB); blocks of 2^18 cells and more measured 3-5 times slower (bench/bench_screening.py)."""
_U = Fraction(1, 2 ** 53)  # the unit roundoff of round-to-nearest doubles


@dataclass
class Enclosures:
    """Float enclosures of every distinct law of a table over its outputs.

    ``lo[r, c] <= P(outputs[c] | laws[r]) <= hi[r, c]``; ``hi_t`` is ``hi`` transposed (outputs x
    laws, contiguous: the screening gathers columns of it).  ``width``: an exact rational W with
    hi <= W lo for every present cell, or None when some present cell has lo < TINY or hi > 2
    (then :func:`screen_wide` is used).
    """

    outputs: list
    lo: np.ndarray
    hi: np.ndarray
    hi_t: np.ndarray
    width: Optional[Fraction]


def _floats(ends: list, lower: bool) -> np.ndarray:
    """mpmath raw mpf tuples (sign, man, exp, bc) -> doubles rounded outward (down when ``lower``).

    float(man) rounds to nearest and ldexp is exact unless the result is subnormal (then it rounds
    to nearest): two steps of nextafter outward cover both roundings.  Exact zeros stay exact;
    special values (bc < 0: infinities, nan) become 0 as a lower and +inf as an upper bound.
    """
    count = len(ends)
    sign, man, exp, bits = zip(*ends) if count else ((), (), (), ())
    bits = np.array(bits, dtype=np.int64)
    if count and bits.max() > 1000:  # float(man) would overflow: keep its top 64 bits (truncation, < 1 ulp)
        shift = [max(0, bc - 64) for bc in bits.tolist()]
        man = [m >> k for m, k in zip(man, shift)]
        exp = [e + k for e, k in zip(exp, shift)]
    sign = np.array(sign, dtype=np.int8)
    man = np.fromiter(map(float, man), dtype=np.float64, count=count)
    # exponents beyond any double's (e^(-10^30) at a huge eps) saturate: ldexp below clips to +-4000 anyway
    exp = np.array([min(max(e, -10 ** 5), 10 ** 5) for e in exp], dtype=np.int64)
    special = bits < 0
    direction = -math.inf if lower else math.inf
    with np.errstate(over="ignore", under="ignore"):
        value = np.ldexp(man, np.clip(exp, -4000, 4000))
    value = np.where(sign == 1, -value, value)
    value = np.where(man == 0, 0.0, np.nextafter(np.nextafter(value, direction), direction))
    value[special] = 0.0 if lower else math.inf
    return value


def enclose(table: Any) -> Enclosures:
    """The float enclosures of a table's distinct laws (computed once per table, then cached on it)."""
    found = getattr(table, "_float_enclosures", None)
    if found is not None:
        return found
    outputs = sorted(set().union(*table.laws), key=repr)
    paused = gc.isenabled()
    gc.disable()  # only flat lists and tuples of numbers are made here: a collection would scan every law
    try:
        enclosures = _enclose(table, outputs)
    finally:
        if paused:
            gc.enable()
    table._float_enclosures = enclosures
    return enclosures


def law_index(table: Any) -> np.ndarray:
    """The table's law of each dataset (``law_of``) as an integer array (made once, cached on it)."""
    found = getattr(table, "_law_index", None)
    if found is None or len(found) != len(table.law_of):
        found = table._law_index = np.asarray(table.law_of, dtype=np.int64)
    return found


def _enclose(table: Any, outputs: list) -> Enclosures:
    column = {o: k for k, o in enumerate(outputs)}
    sizes, keys, ends = [], [], []
    ends_of = operator.attrgetter("_mpi_")
    for law in table.laws:
        sizes.append(len(law))
        keys.extend(law)
        ends.extend(map(ends_of, law.values()))
    rows = np.repeat(np.arange(len(table.laws), dtype=np.int64), sizes)
    cols = np.fromiter(map(column.__getitem__, keys), dtype=np.int64, count=len(keys))
    los, his = (list(side) for side in zip(*ends)) if ends else ([], [])
    shape = (len(table.laws), len(outputs))
    lo, hi = np.zeros(shape), np.zeros(shape)
    if len(rows):
        lo[rows, cols] = np.maximum(_floats(los, lower=True), 0.0)  # probabilities are never negative
        hi[rows, cols] = np.maximum(_floats(his, lower=False), 0.0)
    return Enclosures(outputs, lo, hi, np.ascontiguousarray(hi.T), _width(lo, hi))


def _width(lo: np.ndarray, hi: np.ndarray) -> Optional[Fraction]:
    """An exact W >= hi / lo over present cells, or None when a present cell has lo < TINY or hi > 2
    (a weight that is no probability: the two-bound pass copes with any values)."""
    present = hi > 0
    if not present.any():
        return Fraction(1)
    lo_p, hi_p = lo[present], hi[present]
    if lo_p.min() < TINY or not hi_p.max() <= 2.0:  # probabilities: then no quotient overflows either
        return None
    largest = float(np.nextafter((hi_p / lo_p).max(), math.inf))  # one correctly rounded division
    return Fraction(largest)


@dataclass
class Screen:
    """What one pass over pairs of laws (rows a, b) found: per row the largest ratio upper bound
    forward (P_a / P_b) and backward (P_b / P_a) over outputs, as floats (``forward_hi``,
    ``backward_hi``), and ``best``: an exact lower bound of the largest true ratio over every row,
    output and direction (a Fraction, or math.inf when some ratio is certified infinite).
    ``forward_mid``/``backward_mid``: per-row float estimates of the largest ratio, for figures only.
    """

    forward_hi: np.ndarray
    backward_hi: np.ndarray
    forward_mid: np.ndarray
    backward_mid: np.ndarray
    best: Any


def screen(enc: Enclosures, a: np.ndarray, b: np.ndarray) -> Screen:
    """One vectorised pass over the rows (a[k], b[k]) of law indices (see the module docstring)."""
    if enc.width is None:
        return screen_wide(enc, a, b)
    k = enc.width / (1 - _U)
    n = len(a)
    q_max, q_min = np.empty(n), np.empty(n)
    step = max(1, CHUNK // max(1, len(enc.outputs)))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        for start in range(0, n, step):
            stop = min(n, start + step)
            q = enc.hi_t[:, a[start:stop]] / enc.hi_t[:, b[start:stop]]  # nan: absent under both
            top, bottom = q_max[start:stop], q_min[start:stop]
            top[:], bottom[:] = 0.0, math.inf  # what a row of outputs absent under both laws keeps
            for row in q:  # row by row (fmax/fmin skip nan): numpy's reductions over a short axis are slower
                np.fmax(top, row, out=top)
                np.fmin(bottom, row, out=bottom)
    top, bottom = (float(q_max.max()), float(q_min.min())) if n else (0.0, math.inf)
    if top == math.inf or bottom == 0.0:
        best: Any = math.inf  # an output present (lo >= TINY) under one law and absent under the other
    else:
        best = max(Fraction(top) / k if top > 0 else Fraction(0), 1 / (Fraction(bottom) * k) if bottom < math.inf
                   else Fraction(0))
    with np.errstate(divide="ignore", over="ignore"):
        forward_hi = np.nextafter(q_max * _up(k), math.inf)  # each product and quotient rounded up
        backward_hi = np.nextafter(_up(k) / q_min, math.inf)
        backward_mid = 1 / q_min
    return Screen(forward_hi, backward_hi, q_max, backward_mid, best)


SPREAD_CELLS = 1 << 24
"""Pairs of laws x outputs from which the screening is split over a remote executor's workers."""


def screen_spread(enc: Enclosures, a: np.ndarray, b: np.ndarray, where: Any) -> Screen:
    """:func:`screen`, split by rows over ``where`` (a remote executor, :mod:`dpverify.engine.execution.executor`)
    when there are at least :data:`SPREAD_CELLS` cells: each unit screens a block of rows (the arrays
    travel with it) and the blocks are joined in order, ``best`` their largest (each is a lower bound
    of the true maximum, so their maximum is the one :func:`screen` finds on all rows at once)."""
    cells = len(a) * max(1, len(enc.outputs))
    if not getattr(where, "remote", False) or cells < SPREAD_CELLS:
        return screen(enc, a, b)
    count = max(2, min(len(a), where.workers * 4))
    bounds = [(k * len(a) // count, (k + 1) * len(a) // count) for k in range(count)]
    parts = where.map(screen_unit, [(enc, a[lo:hi], b[lo:hi]) for lo, hi in bounds])
    return Screen(*(np.concatenate([getattr(p, name) for p in parts])
                    for name in ("forward_hi", "backward_hi", "forward_mid", "backward_mid")),
                  max(p.best for p in parts))


def screen_unit(unit: tuple) -> Screen:
    """A work unit of :func:`screen_spread`: (enclosures, rows a, rows b) -> their Screen."""
    return screen(*unit)


def screen_wide(enc: Enclosures, a: np.ndarray, b: np.ndarray) -> Screen:
    """The pass for tables without a width bound: both bounds of every cell, each quotient rounded
    outward (an overflowing lower bound is read as the largest double, which it exceeds)."""
    n = len(a)
    out = {name: np.zeros(n) for name in ("f_hi", "f_lo", "b_hi", "b_lo")}
    step = max(1, CHUNK // max(1, len(enc.outputs)))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        for start in range(0, n, step):
            stop = min(n, start + step)
            lo_a, hi_a = enc.lo[a[start:stop]], enc.hi[a[start:stop]]
            lo_b, hi_b = enc.lo[b[start:stop]], enc.hi[b[start:stop]]
            for name, num, den in (("f_hi", hi_a, lo_b), ("f_lo", lo_a, hi_b), ("b_hi", hi_b, lo_a),
                                   ("b_lo", lo_b, hi_a)):
                out[name][start:stop] = np.fmax.reduce(num / den, axis=1)  # nan (0/0): no ratio there
    f_hi, b_hi = (np.nextafter(np.nan_to_num(out[x], nan=0.0, posinf=math.inf), math.inf) for x in ("f_hi", "b_hi"))
    f_lo, b_lo = (np.nextafter(np.nan_to_num(out[x], nan=0.0, posinf=math.inf), -math.inf) for x in ("f_lo", "b_lo"))
    top = max(float(f_lo.max()), float(b_lo.max())) if n else 0.0
    best: Any = Fraction(min(max(top, 0.0), HUGE))
    return Screen(f_hi, b_hi, f_hi, b_hi, best)


def reaching(scr: Screen, threshold: Any) -> tuple[np.ndarray, np.ndarray]:
    """Rows whose forward, and rows whose backward, ratio may reach ``threshold`` (an exact lower
    bound of a ratio: a Fraction, or math.inf for certified-infinite cells only)."""
    if threshold == math.inf:
        return np.flatnonzero(scr.forward_hi == math.inf), np.flatnonzero(scr.backward_hi == math.inf)
    limit = _down(threshold)
    return np.flatnonzero(scr.forward_hi >= limit), np.flatnonzero(scr.backward_hi >= limit)


def cells_reaching(enc: Enclosures, row_a: int, row_b: int, threshold: Any) -> np.ndarray:
    """Output columns where P_{row_a} / P_{row_b} may reach ``threshold`` (both bounds per cell)."""
    lo_b, hi_a = enc.lo[row_b], enc.hi[row_a]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        upper = np.nextafter(np.nan_to_num(hi_a / lo_b, nan=0.0, posinf=math.inf), math.inf)
    if threshold == math.inf:
        return np.flatnonzero(upper == math.inf)
    return np.flatnonzero(upper >= _down(threshold))


def _down(value: Fraction) -> float:
    """The largest double at most ``value`` (or a double just below it)."""
    if value <= 0:
        return 0.0 if value == 0 else -math.inf
    as_float = float(value) if value < Fraction(HUGE) else HUGE
    return math.nextafter(as_float, -math.inf)


def _up(value: Fraction) -> float:
    return math.nextafter(float(value), math.inf) if value < Fraction(HUGE) else math.inf


def ratio_threshold(ctx: Any, log_threshold: float) -> Fraction:
    """An exact lower bound of exp(``log_threshold``) (a float in log space), certified by mpmath."""
    if log_threshold == -math.inf:
        return Fraction(0)
    sign, man, exp, bc = ctx.exp(ctx.mpf(log_threshold))._mpi_[0]  # its lower end, exactly
    if sign or not man:
        return Fraction(0)
    man = int(man)
    if exp > 2000:  # beyond every double (e^(10^30) at a huge eps): 2^2000 is a smaller lower bound, and
        return Fraction(2 ** 2000)  # 2 ** exp would not end
    return Fraction(man * 2 ** exp) if exp >= 0 else Fraction(man, 2 ** -exp)
