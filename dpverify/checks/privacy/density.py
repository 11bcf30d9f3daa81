"""Privacy of mechanisms that release noisy values: the loss from densities, exactly.

The cells and their losses come from :mod:`.density_cells`.  A cheap pass
(exact pieces, sampled others) looks for a violation first; only when there
is none does the branch and bound run on pieces with several terms, so that
the claim can be verified.  ``verified`` needs every cell decided (a tie at
e^eps decided exactly by sympy at the attaining point); a violation is
``refuted`` only after the witness value is re-evaluated on laws recomputed
at twice the precision.  Gaussian (eps, delta) claims go to
:mod:`.privacy_gaussian`.
"""
from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Any, Optional

import sympy

from ...dsl.params import Point
from ...engine.backend import IntervalBackend, SympyBackend, exact_sign
from ...engine.density_ratio import Candidate, beyond
from ...engine.noisy import Density
from ...engine.reading import distribution
from ...engine.density_cells import Cell, cells, normalise, slot_value
from .density_delta import check_delta
from .gaussian import all_gaussian, check_gaussian_delta, gaussian_beyond
from ...evidence import PrivacyEvidence
from ...results import PointResult, Status, Witness
from ..witness import CONFIRM_DIGITS, number, positive
from ...engine.decimals import decimal
from ...engine.work import params


def check_density(program: Any, point: Point, eps: sympy.Expr, delta: sympy.Expr, table: Any, left: Any,
                  right: Any, result: PointResult, scope: str) -> PointResult:
    backend = table.backend
    eps_iv = backend.num(eps)
    result.method = "exact densities of released values, certified intervals"
    if delta != 0 and all_gaussian(table):
        return check_gaussian_delta(program, point, eps, delta, table, left, right, result, scope)
    if delta != 0:
        decided = check_delta(program, point, eps, delta, table, left, right, result, scope)
        if decided is not None:
            return decided
        return _approximate_by_pure(program, point, eps, table, left, right, result, scope)
    # First the cheap pass (exact pieces, sampled others): enough to refute; then, only if nothing
    # is refuted, the branch and bound that can verify pieces with several terms.
    all_cells = cells(table, left, right, backend.exp(eps), search=False)
    refuted = _first_refutation(program, point, eps, all_cells, table, result)
    if refuted is not None:
        return _with_achieved(refuted, all_cells)
    if any(not c.decided for c in all_cells):
        all_cells = cells(table, left, right, backend.exp(eps))
    decided = [c for c in all_cells if c.decided]
    undecided = [c for c in all_cells if not c.decided]
    worst = max(decided, key=_order, default=None)
    lower = max((c for c in all_cells if c.lower is not None), key=lambda c: _order(c, "lower"), default=None)
    exact = not undecided and all(c.exact for c in decided)
    enclosure = ""
    if not all_cells:  # every dataset has the same law
        result.evidence.achieved_epsilon = decimal(backend.num(0))
    if worst is not None and (exact or worst.loss == math.inf):
        result.evidence.achieved_epsilon = decimal(worst.loss)
    elif lower is not None:
        result.evidence.achieved_epsilon, result.evidence.achieved_is_lower_bound = decimal(lower.lower), True
        if not undecided and worst is not None:
            enclosure = f" (the supremum is enclosed in [{decimal(lower.lower)}, {decimal(worst.loss.b)}])"
    result.evidence.datasets, result.evidence.distinct_laws = len(table.datasets), len(table.laws)
    result.evidence.cells = len(all_cells)
    refuted = _first_refutation(program, point, eps, all_cells, table, result)
    if refuted is not None:
        return refuted
    straddling = [c for c in decided if c.loss != math.inf and not c.loss.b <= eps_iv.a and not c.below]
    inexact = [c for c in straddling if not c.exact]
    if inexact:
        cell = inexact[0]
        result.message = (f"cannot decide: the supremum of the density ratio for X={cell.x!r}, X'={cell.x_prime!r}, "
                          f"o={cell.output!r} is enclosed in a loss interval [{decimal(cell.loss.a)}, "
                          f"{decimal(cell.loss.b)}] that contains eps")
        return result
    exact_laws: dict = {}
    for cell in straddling:
        sign, points = _exact_excess(program, point, eps, cell, table, exact_laws)
        if sign is None:
            result.message = (f"cannot decide the density ratio for X={cell.x!r}, X'={cell.x_prime!r}, "
                              f"o={cell.output!r}: intervals overlap and sympy could not decide")
            return result
        if sign > 0:
            return _refute(program, point, eps, dataclasses.replace(cell, points=points), table, result,
                           exact=True)
    if undecided:
        result.message = (f"no violation found, but {len(undecided)} cells are undecided: {undecided[0].reason} "
                          f"(e.g. X={undecided[0].x!r}, X'={undecided[0].x_prime!r}, o={undecided[0].output!r})")
        return result
    result.status = Status.VERIFIED
    if straddling:  # verified, and some cell reaches e^eps exactly: the achieved epsilon is eps
        result.evidence.achieved_epsilon, result.evidence.achieved_is_lower_bound, enclosure = decimal(eps), False, ""
    result.message = (f"holds on all {scope}; achieved epsilon {'at least ' if enclosure else ''}"
                      f"{result.evidence.achieved_epsilon}{enclosure}"
                      + (f" (tight: {len(straddling)} cells reach e^eps exactly, decided by sympy)"
                         if straddling else ""))
    return result


def _approximate_by_pure(program: Any, point: Point, eps: sympy.Expr, table: Any, left: Any, right: Any,
                         result: PointResult, scope: str) -> PointResult:
    """(eps, delta) where the exact divergence is not covered: pure eps-DP implies it, nothing else is
    decided -- a density ratio above e^eps refutes pure DP only, so the claim is then ``unknown``."""
    pure = check_density(program, point, eps, sympy.Integer(0), table, left, right,
                         PointResult(result.params, Status.UNKNOWN, "", evidence=PrivacyEvidence(
                             claimed_epsilon=result.evidence.claimed_epsilon, claimed_delta=decimal(sympy.Integer(0)))), scope)
    result.evidence.achieved_epsilon, result.evidence.achieved_is_lower_bound = pure.evidence.achieved_epsilon, pure.evidence.achieved_is_lower_bound
    result.method = "exact densities of released values (pure eps-DP implies (eps, delta)), certified intervals"
    if pure.status == Status.VERIFIED:
        result.status = Status.VERIFIED
        result.message = f"holds with delta = 0, so for every delta: {pure.message}"
    else:
        result.message = ("undecided: the release is not eps-DP with delta = 0, and the hockey-stick divergence "
                          "of densities other than Gaussian is not computed" + (f" ({pure.message})"
                                                                               if pure.message else ""))
    return result


def _first_refutation(program: Any, point: Point, eps: sympy.Expr, all_cells: list, table: Any,
                      result: PointResult) -> Optional[PointResult]:
    """The first cell whose certified lower bound exceeds eps and whose witness is confirmed."""
    eps_iv = table.backend.num(eps)
    for cell in sorted(all_cells, key=lambda c: _order(c, "lower"), reverse=True):
        bound = cell.lower
        if bound is None or (bound != math.inf and not bound.a > eps_iv.b):
            return None
        refuted = _refute(program, point, eps, cell, table, result)
        if refuted.status == Status.REFUTED:
            return refuted
    return None


def _with_achieved(result: PointResult, all_cells: list) -> PointResult:
    """Report the largest certified lower bound as the achieved epsilon of a refuted claim."""
    lower = max((c for c in all_cells if c.lower is not None), key=lambda c: _order(c, "lower"), default=None)
    if lower is not None:
        exact = lower.decided and (lower.lower == math.inf or lower.exact)
        result.evidence.achieved_epsilon = decimal(lower.lower)
        result.evidence.achieved_is_lower_bound = not exact or any(not c.decided for c in all_cells)
        if lower.lower == math.inf:
            result.evidence.achieved_is_lower_bound = False
    result.evidence.cells = len(all_cells)
    return result


def _order(cell: Cell, field: str = "loss") -> float:
    value = getattr(cell, field)
    if value is None:
        return -math.inf
    return math.inf if value == math.inf else float(value.b)


def _evaluate(law: dict, output: Any, points: list, backend: Any) -> Any:
    weight = law.get(output)
    if weight is None:
        return backend.num(0)
    normal = normalise(weight, backend)
    value = normal.constant
    for slot, candidate in zip(normal.slots, points):
        value = value * slot_value(slot, candidate, backend)
    return value


def _exact_excess(program: Any, point: Point, eps: sympy.Expr, cell: Cell, table: Any,
                  cache: dict) -> tuple[Optional[int], Optional[list]]:
    """(sign, points): the sign of sup density(X) - e^eps density(X') in exact sympy, and the points
    where it is attained (a positive sign is a violation there).

    The ratio of the two densities is a product of one factor per released value, so its supremum
    takes, for each value, the candidate with the largest factor: each value's tying candidates
    (``cell.choices``, which the intervals could not rank) are ranked exactly, one value at a time
    with the others held fixed -- a sum, not a product, of exact evaluations.
    """
    exact = SympyBackend()
    for data in (cell.x, cell.x_prime):
        if data not in cache:
            cache[data] = distribution(program, data, params(point), exact, table.windows)
    law, law_prime = cache[cell.x], cache[cell.x_prime]

    def densities(points: list) -> tuple[Any, Any]:
        return _evaluate(law, cell.output, points, exact), _evaluate(law_prime, cell.output, points, exact)

    best = list(cell.points)
    p, q = densities(best)
    for k, tops in enumerate(cell.choices):
        for candidate in tops:
            if candidate is best[k]:
                continue
            trial = best[:k] + [candidate] + best[k + 1:]
            p2, q2 = densities(trial)
            larger = exact_sign(sympy.simplify(p2 * q - p * q2))  # p2/q2 > p/q, both densities positive
            if larger is None:
                return None, None
            if larger > 0:
                best, p, q = trial, p2, q2
    sign = exact_sign(sympy.simplify(p - sympy.exp(eps) * q))
    return (None, None) if sign is None else (sign, best)


def _witness_points(cell: Cell, law: dict, law_prime: dict, bound: Any, backend: Any,
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


def a_mixes(law: dict, cell: Cell) -> tuple:
    weight = law.get(cell.output)
    return tuple(f.mix for f in weight.terms[0][1]) if isinstance(weight, Density) and weight.terms else ()


def _determinant(matrix: tuple) -> Fraction:
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


def _released_values(mixes: tuple, points: list) -> list:
    """The released values at the witness: w itself, or y = A w for released sums (see noise._linear)."""
    values = [c.t for c in points]
    for mix in set(m for m in mixes if m is not None):
        group, matrix = mix
        w = [points[k].t for k in group]
        for i, k in enumerate(group):
            values[k] = sum((a * b for a, b in zip(matrix[i], w)), Fraction(0))
    return values


def _refute(program: Any, point: Point, eps: sympy.Expr, cell: Cell, table: Any, result: PointResult,
            exact: bool = False) -> PointResult:
    """Confirm a violating cell at an interior witness point on laws recomputed at twice the precision
    (``exact``: a violation decided by exact sympy, confirmed in that reading, moving the witness
    towards its cut until the exact ratio there exceeds e^eps)."""
    dps = 2 * table.backend.dps
    fresh = IntervalBackend(dps)
    law = distribution(program, cell.x, params(point), fresh, table.windows)
    law_prime = distribution(program, cell.x_prime, params(point), fresh, table.windows)
    e_eps = fresh.exp(eps)
    if cell.output not in law:
        result.message = f"a violation found at {table.backend.dps} digits has no witness point to confirm"
        return result
    if exact:
        return _refute_exactly(program, point, eps, cell, table, result, law, law_prime)
    points = _witness_points(cell, law, law_prime, e_eps, fresh)
    if points is None:
        result.message = f"a violation found at {table.backend.dps} digits has no witness point to confirm"
        return result
    p, q = _densities(law, law_prime, cell, points, fresh)
    if not (p - e_eps * q).a > 0:
        result.message = f"a violation found at {table.backend.dps} digits was not confirmed at {dps} digits"
        return result
    shown = [number(p, probability=not points), number(q, probability=not points),
             "inf" if fresh.is_zero(q) else number(p / q, probability=False)]
    return _refuted(result, cell, law, points, shown, decimal(e_eps), f"confirmed at {dps} digits")


def _refute_exactly(program: Any, point: Point, eps: sympy.Expr, cell: Cell, table: Any, result: PointResult,
                    law: dict, law_prime: dict) -> PointResult:
    exact = SympyBackend()
    laws = [distribution(program, data, params(point), exact, table.windows) for data in (cell.x, cell.x_prime)]
    bound = sympy.exp(eps)
    for closeness in WITNESS_CLOSENESS:
        points = _witness_points(cell, law, law_prime, table.backend.exp(eps), table.backend, closeness)
        if points is None:
            break
        p, q = _densities(laws[0], laws[1], cell, points, exact)
        if positive(p - bound * q):
            shown = [number(p, probability=not points), number(q, probability=not points),
                     "inf" if q == 0 else number(p / q, probability=False)]
            excess = number(p - bound * q, probability=False)
            return _refuted(result, cell, law, points, shown, number(bound, probability=False),
                            f"the certified intervals cannot separate the ratio from e^eps; decided exactly by "
                            f"sympy (the difference is {excess} > 0, confirmed by a strict {CONFIRM_DIGITS}-digit "
                            "evaluation)")
    result.message = (f"a violation decided exactly at X={cell.x!r}, X'={cell.x_prime!r}, o={cell.output!r} has no "
                      f"interior witness point confirmed by a strict {CONFIRM_DIGITS}-digit evaluation")
    return result


WITNESS_CLOSENESS = (8, 64, 256, 1024)
"""How close (2^-k of the way) an exact witness may move towards the cut where the supremum is reached."""


def _densities(law: dict, law_prime: dict, cell: Cell, points: list, backend: Any) -> tuple[Any, Any]:
    """The two densities (or probabilities, without released values) of the cell's output at ``points``."""
    p = _evaluate(law, cell.output, points, backend)
    q = _evaluate(law_prime, cell.output, points, backend)
    for mix in set(m for m in a_mixes(law, cell) if m is not None):  # densities of y = A w: divide by |det A|
        determinant = backend.num(abs(_determinant(mix[1])))
        p, q = p / determinant, q / determinant
    return p, q


def _refuted(result: PointResult, cell: Cell, law: dict, points: list, shown: list, bound: Optional[str],
             how: str) -> PointResult:
    if None in shown:
        result.message = (f"a violation at X={cell.x!r}, X'={cell.x_prime!r}, o={cell.output!r} was confirmed, but "
                          "its witness numbers are not pinned down (too wide to print)")
        return result
    p, q, ratio = shown
    values = ", ".join(f"v{k}={value}" for k, value in enumerate(_released_values(a_mixes(law, cell), points)))
    density = "density" if points else "probability"
    result.status = Status.REFUTED
    result.witness = Witness(cell.x, cell.x_prime, f"{cell.output!r} at {values}" if points else cell.output,
                             p, q, ratio, quantity=density)
    result.message = (f"X={cell.x!r} and X'={cell.x_prime!r} are neighbours; the {density} of "
                      f"o={cell.output!r}{' at ' + values if points else ''} is {p} under X and "
                      f"{q} under X', ratio {ratio} > e^eps = {bound}; {how}")
    return result
