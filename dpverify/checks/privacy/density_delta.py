"""(eps, delta) of releases with one noisy value per output, decided by the exact hockey-stick divergence.

The divergence comes from :mod:`dpverify.engine.continuous.density_divergence` (a closed form on pieces where
both densities are single exponentials, in certified intervals); anything it does not cover leaves
the claim to :func:`~dpverify.checks.privacy.density.check_density`'s fallback.  A violation is
confirmed on laws recomputed at twice the precision before the claim is refuted.
"""
from __future__ import annotations

from typing import Any, Optional

from ...dsl.params import Point
from ...engine.program.backend import IntervalBackend
from ...engine.continuous.density_divergence import Undecided, divergence
from ...engine.program.reading import distribution
from .level import Level
from ...results import PointResult, Status
from ..witness import confirm_delta, figure
from ...engine.decide.decimals import decimal
from ...engine.program.work import params


def check_delta(program: Any, point: Point, level: Level, table: Any, left: Any, right: Any,
                result: PointResult, scope: str) -> Optional[PointResult]:
    """Decide an (eps, delta) claim by the exact divergence, or None when it is not covered."""
    backend = table.backend
    e_eps, delta_iv = backend.exp(level.eps), backend.num(level.delta)
    worst, pair = None, None
    try:
        for i, j in zip(left.tolist(), right.tolist()):
            for a, b in ((i, j), (j, i)):
                la, lb = table.law_of[a], table.law_of[b]
                if la == lb:
                    continue
                value, _, _ = divergence(table.laws[la], table.laws[lb], e_eps, backend)
                if worst is None or value.b > worst.b:
                    worst, pair = value, (table.datasets[a], table.datasets[b])
    except Undecided:
        return None
    result.method = "exact hockey-stick divergence of the released densities, certified intervals"
    if worst is None:
        result.status, result.evidence.achieved_delta = Status.VERIFIED, "0.0"
        result.message = f"holds on all {scope}: every dataset has the same law"
        return result
    result.evidence.achieved_delta, pinned = figure(worst)
    if worst.b <= delta_iv.a:
        result.status = Status.VERIFIED
        result.message = (f"holds on all {scope}; achieved delta at the claimed epsilon "
                          f"{'' if pinned else 'at most '}{result.evidence.achieved_delta}")
        return result
    if not worst.a > delta_iv.b:
        result.message = f"delta(eps) = {result.evidence.achieved_delta} is too close to the claimed delta to decide"
        return result
    fresh = IntervalBackend(2 * backend.dps)
    laws = [distribution(program, data, params(point), fresh, table.windows) for data in pair]
    confirm, p, q = divergence(laws[0], laws[1], fresh.exp(level.eps), fresh)
    return confirm_delta(result, pair, f"the set of outputs where p(o|X) > {level.e_eps} p(o|X')",
                         f"on the set S where p(o|X) > {level.e_eps} p(o|X')", (p, q, confirm),
                         fresh.num(level.delta), decimal(level.delta), level.e_eps, (backend.dps, fresh.dps))
