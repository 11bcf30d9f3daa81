"""Both densities of a density witness and their log ratio on a grid around the witness: plot data.

A refuted claim on released values shows one point v where density(X) / density(X') exceeds the
claimed e^eps.  To let a reader see where that point sits, the two densities are evaluated along a
line through it: one released value moves over a grid, the others keep their witness values (for
released sums y = A w the line moves y_k alone, so w moves along column k of A^-1).  The grid
covers the witness value and the breakpoints (or centres) of both densities of that value, padded
by twice the noise scale.  Numbers are floats from the same certified laws, for the plot only: no
verdict reads them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import mpmath
import sympy

from .density_cells import normalise, slot_value
from .density_points import densities, determinant, mixes, released_values
from .density_ratio import Candidate

GRID = 81
"""Points of the grid (the witness value is added when it falls between two of them)."""

PLOT_DIGITS = 20
"""Digits of the float conversion (a density far in a tail underflows a float; its log ratio does not)."""


@dataclass
class Curves:
    """Both densities along the grid ``v`` of released value ``slot`` (its witness value ``at``) and
    their log ratio (None where a density is 0)."""

    slot: int
    at: Fraction
    v: list[float]
    density: list[float]
    density_prime: list[float]
    log_ratio: list[Optional[float]]


def curves(law: dict, law_prime: dict, output: Any, points: list, backend: Any,
           size: int = GRID) -> Optional[Curves]:
    """The curves of ``output`` through the witness ``points`` (one Candidate per released value), or
    None when the output releases no value or its weight has no one-dimensional densities."""
    if not points or output not in law:
        return None
    normal = normalise(law[output], backend)
    other = normalise(law_prime[output], backend) if output in law_prime else None
    if normal.constant is None or (other is not None and other.constant is None):
        return None
    maps = mixes(law, output)
    values = released_values(maps, points)
    k = _witness_slot(normal.slots, other.slots if other is not None else None, points, backend)
    direction = _direction(maps, k, len(points))
    grid = _grid(values[k], [normal.slots[k]] + ([other.slots[k]] if other is not None else []),
                 mixed=maps[k] is not None if maps else False, size=size)
    rows = []
    for y in grid:
        shift = y - values[k]
        moved = [c if d == 0 else Candidate(c.t + shift * d, c.t + shift * d) for c, d in zip(points, direction)]
        rows.append(_floats(*densities(law, law_prime, output, moved, backend)))
    return Curves(k, values[k], [float(y) for y in grid], [r[0] for r in rows], [r[1] for r in rows],
                  [r[2] for r in rows])


def _witness_slot(slots: list, slots_prime: Optional[list], points: list, backend: Any) -> int:
    """The released value whose own factor contributes most to the witness ratio (the first on ties;
    the first value when X' gives the output no density)."""
    if slots_prime is None:
        return 0
    best, best_k = None, 0
    for k, (g, h, c) in enumerate(zip(slots, slots_prime, points)):
        p, q = _mid(slot_value(g, c, backend)), _mid(slot_value(h, c, backend))
        score = math.inf if q <= 0 < p else (mpmath.log(p) - mpmath.log(q) if p > 0 else -math.inf)
        if best is None or score > best:
            best, best_k = score, k
    return best_k


def _direction(maps: tuple, k: int, n: int) -> list[Fraction]:
    """How each point's coordinate moves when released value k moves by 1: e_k, or for released sums
    y = A w the column of A^-1 for y_k (Cramer's rule), placed at the group's slots."""
    direction = [Fraction(0)] * n
    mix = maps[k] if maps else None
    if mix is None:
        direction[k] = Fraction(1)
        return direction
    group, matrix = mix
    i = group.index(k)
    det = determinant(matrix)
    for j, slot in enumerate(group):
        replaced = [[(Fraction(int(r == i)) if c == j else matrix[r][c]) for c in range(len(group))]
                    for r in range(len(group))]
        direction[slot] = determinant(tuple(tuple(row) for row in replaced)) / det
    return direction


def _grid(at: Fraction, slots: list, mixed: bool, size: int) -> list[Fraction]:
    """``size`` evenly spaced values covering ``at`` and the slots' breakpoints (or Gaussian centres;
    not for released sums, whose breakpoints are in w), padded by twice the largest noise scale;
    ``at`` added when it falls between two of them."""
    features, scale = [at], Fraction(0)
    for slot in slots:
        if isinstance(slot, tuple):  # ("gaussian", centre, sigma)
            features += [] if mixed else [_fraction(slot[1])]
            scale = max(scale, _fraction(slot[2]))
            continue
        features += [] if mixed else list(slot.cuts)
        rates = [abs(rate) for piece in slot.pieces for (rate, _) in piece if rate != 0]
        scale = max([scale] + [1 / r for r in rates])
    pad = 2 * (scale or Fraction(1))
    lo, hi = min(features) - pad, max(features) + pad
    grid = [lo + (hi - lo) * Fraction(i, size - 1) for i in range(size)]
    return sorted(set(grid) | {at})


def _fraction(value: Any) -> Fraction:
    """A parameter of a Gaussian slot (a Fraction, an int or an exact sympy number) as a Fraction, to
    the digits a plot needs."""
    if isinstance(value, (int, Fraction)):
        return Fraction(value)
    return Fraction(str(sympy.N(value, PLOT_DIGITS)))


def _mid(value: Any) -> Any:
    """An interval's midpoint (or an exact number) as an mpmath number at PLOT_DIGITS digits."""
    with mpmath.workdps(PLOT_DIGITS):
        if hasattr(value, "_mpi_"):
            a, b = (mpmath.mp.make_mpf(end) for end in value._mpi_)
            return (a + b) / 2
        return mpmath.mpf(sympy.N(value, PLOT_DIGITS))


def _floats(p: Any, q: Any) -> tuple[float, float, Optional[float]]:
    """(p, q, ln(p/q)) as floats; the log ratio is None where a density is 0."""
    with mpmath.workdps(PLOT_DIGITS):
        a, b = _mid(p), _mid(q)
        ratio = float(mpmath.log(a) - mpmath.log(b)) if a > 0 and b > 0 else None
        return float(a), float(b), ratio
