"""Privacy of mechanisms that release noisy values: the loss from densities, exactly.

The cells and their losses come from :mod:`dpverify.engine.continuous.density_cells`.  A cheap pass
(exact pieces, sampled others) looks for a violation first; only when there
is none does the branch and bound run on pieces with several terms, so that
the claim can be verified.  ``verified`` needs every cell decided (a tie at
e^eps decided exactly by sympy at the attaining point); a violation is
``refuted`` only after the witness value is re-evaluated on laws recomputed
at twice the precision (the points and densities there come from
:mod:`dpverify.engine.continuous.density_points`).  A density witness carries both densities
and their log ratio around it, for the report's plot.  (eps, delta) claims go to
:mod:`.gaussian` (Gaussian releases) and :mod:`.density_delta`.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Optional

import sympy

from ...dsl.params import Point
from ...engine.program.backend import IntervalBackend, SympyBackend, exact_sign
from ...engine.continuous.density_cells import Cell, cells
from ...engine.continuous.density_curves import curves
from ...engine.continuous.density_points import densities, exact_supremum, mixes, released_values, witness_points
from ...engine.continuous.gaussian_delta import all_gaussian
from ...engine.continuous.noisy import Released
from ...engine.program.reading import distribution
from .density_delta import check_delta
from .gaussian import check_gaussian_delta
from .level import Level
from ...evidence import DensityCurves, PrivacyEvidence
from ...results import PointResult, Status, Witness
from ..witness import CONFIRM_DIGITS, number, positive, refuted_ratio
from ...engine.decide.decimals import decimal
from ...engine.program.work import params


def check_density(program: Any, point: Point, level: Level, table: Any, left: Any, right: Any,
                  result: PointResult, scope: str) -> PointResult:
    """``private(eps[, delta])`` of a program that releases noisy values, on the table's laws."""
    backend = table.backend
    eps = level.eps
    eps_iv = backend.num(eps)
    result.method = "exact densities of released values, certified intervals"
    if level.delta != 0 and all_gaussian(table):
        return check_gaussian_delta(program, point, level, table, left, right, result, scope)
    if level.delta != 0:
        decided = check_delta(program, point, level, table, left, right, result, scope)
        if decided is not None:
            return decided
        return _approximate_by_pure(program, point, level, table, left, right, result, scope)
    # First the cheap pass (exact pieces, sampled others): enough to refute; then, only if nothing
    # is refuted, the branch and bound that can verify pieces with several terms.
    all_cells = cells(table, left, right, backend.exp(eps), search=False)
    refuted = _first_refutation(program, point, level, all_cells, table, result)
    if refuted is not None:
        return _with_achieved(refuted, all_cells)
    if any(not c.decided for c in all_cells):
        all_cells = cells(table, left, right, backend.exp(eps), earlier=all_cells)
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
    refuted = _first_refutation(program, point, level, all_cells, table, result)
    if refuted is not None:
        return refuted
    straddling = [c for c in decided if c.loss != math.inf and not c.loss.b <= eps_iv.a and not c.below]
    inexact = [c for c in straddling if not c.exact]
    if inexact:
        cell = inexact[0]
        result.message = (f"cannot decide: the supremum of the density ratio for X={cell.x!r}, X'={cell.x_prime!r}, "
                          f"o={cell.output!r} is enclosed in a loss interval [{decimal(cell.loss.a)}, "
                          f"{decimal(cell.loss.b)}] that contains {level.eps_text}")
        return result
    exact_laws: dict = {}
    for cell in straddling:
        sign, points = _exact_excess(program, point, level, cell, table, exact_laws)
        if sign is None:
            result.message = (f"cannot decide the density ratio for X={cell.x!r}, X'={cell.x_prime!r}, "
                              f"o={cell.output!r}: intervals overlap and sympy could not decide")
            return result
        if sign > 0:
            return _refute(program, point, level, dataclasses.replace(cell, points=points), table, result,
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
                      + (f" (tight: {len(straddling)} cells reach {level.e_eps} exactly, decided by sympy)"
                         if straddling else ""))
    return result


def _approximate_by_pure(program: Any, point: Point, level: Level, table: Any, left: Any, right: Any,
                         result: PointResult, scope: str) -> PointResult:
    """(eps, delta) where the exact divergence is not covered: pure eps-DP implies it, nothing else is
    decided -- a density ratio above e^eps refutes pure DP only, so the claim is then ``unknown``."""
    zero = sympy.Integer(0)
    pure = check_density(program, point, dataclasses.replace(level, delta=zero), table, left, right,
                         PointResult(result.params, Status.UNKNOWN, "", evidence=PrivacyEvidence(
                             claimed_epsilon=result.evidence.claimed_epsilon, claimed_delta=decimal(zero))), scope)
    result.evidence.achieved_epsilon = pure.evidence.achieved_epsilon
    result.evidence.achieved_is_lower_bound = pure.evidence.achieved_is_lower_bound
    result.method = "exact densities of released values (pure eps-DP implies (eps, delta)), certified intervals"
    if pure.status == Status.VERIFIED:
        result.status = Status.VERIFIED
        result.message = f"holds with delta = 0, so for every delta: {pure.message}"
    else:
        result.message = ("undecided: the release is not eps-DP with delta = 0, and the hockey-stick divergence "
                          "of densities other than Gaussian is not computed" + (f" ({pure.message})"
                                                                               if pure.message else ""))
    return result


def _first_refutation(program: Any, point: Point, level: Level, all_cells: list, table: Any,
                      result: PointResult) -> Optional[PointResult]:
    """The first cell whose certified lower bound exceeds eps and whose witness is confirmed."""
    eps_iv = table.backend.num(level.eps)
    for cell in sorted(all_cells, key=lambda c: _order(c, "lower"), reverse=True):
        bound = cell.lower
        if bound is None or (bound != math.inf and not bound.a > eps_iv.b):
            return None
        refuted = _refute(program, point, level, cell, table, result)
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


def _exact_excess(program: Any, point: Point, level: Level, cell: Cell, table: Any,
                  cache: dict) -> tuple[Optional[int], Optional[list]]:
    """(sign, points): the sign of sup density(X) - e^eps density(X') in exact sympy, and the points
    where it is attained (a positive sign is a violation there); (None, None) when undecided."""
    exact = SympyBackend()
    for data in (cell.x, cell.x_prime):
        if data not in cache:
            cache[data] = distribution(program, data, params(point), exact, table.windows)
    found = exact_supremum(cell, cache[cell.x], cache[cell.x_prime], exact)
    if found is None:
        return None, None
    p, q, best = found
    sign = exact_sign(sympy.simplify(p - sympy.exp(level.eps) * q))
    return (None, None) if sign is None else (sign, best)


def _refute(program: Any, point: Point, level: Level, cell: Cell, table: Any, result: PointResult,
            exact: bool = False) -> PointResult:
    """Confirm a violating cell at an interior witness point on laws recomputed at twice the precision
    (``exact``: a violation decided by exact sympy, confirmed in that reading, moving the witness
    towards its cut until the exact ratio there exceeds e^eps)."""
    dps = 2 * table.backend.dps
    fresh = IntervalBackend(dps)
    law = distribution(program, cell.x, params(point), fresh, table.windows)
    law_prime = distribution(program, cell.x_prime, params(point), fresh, table.windows)
    e_eps = fresh.exp(level.eps)
    if cell.output not in law:
        result.message = f"a violation found at {table.backend.dps} digits has no witness point to confirm"
        return result
    if exact:
        return _refute_exactly(program, point, level, cell, table, result, (law, law_prime), fresh)
    points = witness_points(cell, law, law_prime, e_eps, fresh)
    if points is None:
        result.message = f"a violation found at {table.backend.dps} digits has no witness point to confirm"
        return result
    p, q = densities(law, law_prime, cell.output, points, fresh)
    if not (p - e_eps * q).a > 0:
        result.message = f"a violation found at {table.backend.dps} digits was not confirmed at {dps} digits"
        return result
    shown = [number(p, probability=not points), number(q, probability=not points),
             "inf" if fresh.is_zero(q) else number(p / q, probability=False)]
    return _refuted(result, cell, (law, law_prime), fresh, points, shown, level, decimal(e_eps),
                    f"confirmed at {dps} digits")


def _refute_exactly(program: Any, point: Point, level: Level, cell: Cell, table: Any, result: PointResult,
                    laws: tuple[dict, dict], fresh: IntervalBackend) -> PointResult:
    """A violation decided by exact sympy: the witness moves towards its cut (WITNESS_CLOSENESS) until a
    strict evaluation confirms the exact ratio there above e^eps; ``laws`` are the fresh interval laws."""
    exact = SympyBackend()
    exact_laws = [distribution(program, data, params(point), exact, table.windows) for data in (cell.x, cell.x_prime)]
    bound = sympy.exp(level.eps)
    for closeness in WITNESS_CLOSENESS:
        points = witness_points(cell, *laws, table.backend.exp(level.eps), table.backend, closeness)
        if points is None:
            break
        p, q = densities(exact_laws[0], exact_laws[1], cell.output, points, exact)
        if positive(p - bound * q):
            shown = [number(p, probability=not points), number(q, probability=not points),
                     "inf" if q == 0 else number(p / q, probability=False)]
            excess = number(p - bound * q, probability=False)
            return _refuted(result, cell, laws, fresh, points, shown, level, number(bound, probability=False),
                            f"the certified intervals cannot separate the ratio from {level.e_eps}; decided exactly "
                            f"by sympy (the difference is {excess} > 0, confirmed by a strict {CONFIRM_DIGITS}-digit "
                            "evaluation)")
    result.message = (f"a violation decided exactly at X={cell.x!r}, X'={cell.x_prime!r}, o={cell.output!r} has no "
                      f"interior witness point confirmed by a strict {CONFIRM_DIGITS}-digit evaluation")
    return result


WITNESS_CLOSENESS = (8, 64, 256, 1024)
"""How close (2^-k of the way) an exact witness may move towards the cut where the supremum is reached."""


def _refuted(result: PointResult, cell: Cell, laws: tuple[dict, dict], backend: IntervalBackend, points: list,
             shown: list, level: Level, bound: Optional[str], how: str) -> PointResult:
    """The refutation: a density witness (released values at ``points``) names the values and carries
    both densities around them (:class:`~dpverify.evidence.DensityCurves`); without released values
    the witness is the output's probability."""
    if None in shown:
        result.message = (f"a violation at X={cell.x!r}, X'={cell.x_prime!r}, o={cell.output!r} was confirmed, but "
                          "its witness numbers are not pinned down (too wide to print)")
        return result
    p, q, ratio = shown
    if not points:
        return refuted_ratio(result, Witness(cell.x, cell.x_prime, cell.output, p, q, ratio),
                             f"the probability of o={cell.output!r} is {p} under X and {q} under X'", level.e_eps,
                             bound, how)
    values = released_values(mixes(laws[0], cell.output), points)
    where = f"density of {_released(cell.output)} at {', '.join(f'v{k} = {v}' for k, v in enumerate(values))}"
    found = curves(*laws, cell.output, points, backend)
    if found is not None:
        result.evidence.density_curves = DensityCurves(f"v{found.slot}", float(found.at), found.v, found.density,
                                                       found.density_prime, found.log_ratio)
    return refuted_ratio(result, Witness(cell.x, cell.x_prime, where, p, q, ratio, quantity="density"),
                         f"the {where} is {p} under X and {q} under X'", level.e_eps, bound, how)


def _released(output: Any) -> str:
    """What a density is of: "the released value v0", "the released values (v0, v1)", or the output
    itself when it also holds discrete parts ("the output (v0, 0, v1, 0)")."""
    parts = output if isinstance(output, tuple) else (output,)
    if not all(isinstance(part, Released) for part in parts):
        return f"the output {output!r}"
    if len(parts) == 1:
        return f"the released value {parts[0]!r}"
    return f"the released values ({', '.join(repr(part) for part in parts)})"
