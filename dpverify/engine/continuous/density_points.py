"""Densities of one released output at given points: where a density violation is shown.

A law maps an output skeleton to a :class:`~dpverify.engine.continuous.noisy.Density`; its weight is a
constant times one factor per released value (:func:`~dpverify.engine.continuous.density_cells.normalise`).
Here the two weights of one output under X and X' are evaluated at one point per released value
(for released sums y = A w the factors are densities of w, so both are divided by |det A|);
the points come from a cell's supremum candidates, moved strictly inside their pieces (a cut is
a limit, not a witness) or past the crossing of a ratio that grows without bound.  The privacy
checks (:mod:`dpverify.checks.privacy.density`) build and confirm their witnesses with these.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional

import sympy

from ..program.backend import exact_sign
from .density_cells import Cell, normalise, slot_value
from .density_ratio import Candidate, beyond
from .gaussian_delta import gaussian_beyond
from .noisy import Density


def density_at(law: dict, output: Any, points: list, backend: Any) -> Any:
    """The weight of ``output`` in ``law`` at one point per released value (0 when it is absent)."""
    weight = law.get(output)
    if weight is None:
        return backend.num(0)
    normal = normalise(weight, backend)
    value = normal.constant
    for slot, candidate in zip(normal.slots, points):
        value = value * slot_value(slot, candidate, backend)
    return value


def mixes(law: dict, output: Any) -> tuple:
    """Per released value of ``output``, the linear map (group, A) of released sums it belongs to, or None."""
    weight = law.get(output)
    return tuple(f.mix for f in weight.terms[0][1]) if isinstance(weight, Density) and weight.terms else ()


def determinant(matrix: tuple) -> Fraction:
    """The exact determinant of a square rational matrix (Gaussian elimination)."""
    rows = [list(row) for row in matrix]
    n, det = len(rows), Fraction(1)
    for col in range(n):
        pivot = next((r for r in range(col, n) if rows[r][col] != 0), None)
        if pivot is None:
            return Fraction(0)
        if pivot != col:
            rows[col], rows[pivot], det = rows[pivot], rows[col], -det
        det *= rows[col][col]
        for r in range(col + 1, n):
            factor = rows[r][col] / rows[col][col]
            rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col])]
    return det


def released_values(maps: tuple, points: list) -> list:
    """The released values at ``points``: w itself, or y = A w for released sums (see noise._linear)."""
    values = [c.t for c in points]
    for mix in set(m for m in maps if m is not None):
        group, matrix = mix
        w = [points[k].t for k in group]
        for i, k in enumerate(group):
            values[k] = sum((a * b for a, b in zip(matrix[i], w)), Fraction(0))
    return values


def densities(law: dict, law_prime: dict, output: Any, points: list, backend: Any) -> tuple[Any, Any]:
    """The two densities (or probabilities, without released values) of ``output`` at ``points``."""
    p = density_at(law, output, points, backend)
    q = density_at(law_prime, output, points, backend)
    for mix in set(m for m in mixes(law, output) if m is not None):  # densities of y = A w: divide by |det A|
        scale = backend.num(abs(determinant(mix[1])))
        p, q = p / scale, q / scale
    return p, q


def witness_points(cell: Cell, law: dict, law_prime: dict, bound: Any, backend: Any,
                   closeness: int = 8) -> Optional[list]:
    """Interior points where density(X) > bound * density(X') (a cut is a limit, not a witness): a
    candidate at a cut moves inside its piece, to within 2^-closeness of the way to the cut."""
    a = normalise(law[cell.output], backend)
    b = normalise(law_prime[cell.output], backend) if cell.output in law_prime else None
    points = []
    for k, candidate in enumerate(cell.points or []):
        g = a.slots[k]
        h = b.slots[k] if b is not None else None
        if candidate is None:
            return None
        if candidate.growth:
            if isinstance(g, tuple):
                points.append(gaussian_beyond(g, h, bound, backend))
            else:
                points.append(Candidate(beyond(g, h, candidate, bound, backend), candidate.inside))
            continue
        t = candidate.t
        if t != candidate.inside:  # move strictly inside the piece, towards the cut
            t = candidate.inside + (t - candidate.inside) * (1 - Fraction(1, 2 ** closeness))
        points.append(Candidate(t, t))
    return points


def exact_supremum(cell: Cell, law: dict, law_prime: dict, backend: Any) -> Optional[tuple[Any, Any, list]]:
    """(p, q, points): the two exact densities where their ratio is largest among the cell's
    candidates, or None when two candidates cannot be ranked exactly.

    The ratio of the two densities is a product of one factor per released value, so its supremum
    takes, for each value, the candidate with the largest factor: each value's tying candidates
    (``cell.choices``, which the intervals could not rank) are ranked exactly, one value at a time
    with the others held fixed -- a sum, not a product, of exact evaluations.  ``backend`` is the
    exact (sympy) reading that produced both laws.
    """
    def at(points: list) -> tuple[Any, Any]:
        return density_at(law, cell.output, points, backend), density_at(law_prime, cell.output, points, backend)

    best = list(cell.points)
    p, q = at(best)
    for k, tops in enumerate(cell.choices):
        for candidate in tops:
            if candidate is best[k]:
                continue
            trial = best[:k] + [candidate] + best[k + 1:]
            p2, q2 = at(trial)
            larger = exact_sign(sympy.simplify(p2 * q - p * q2))  # p2/q2 > p/q, both densities positive
            if larger is None:
                return None
            if larger > 0:
                best, p, q = trial, p2, q2
    return p, q, best
