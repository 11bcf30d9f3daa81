"""The probability check: P[event] <= at_most (and/or >= at_least) on every dataset of the universe.

For each dataset X the exact law of the mechanism is summed over the outputs
where ``event(X, output)`` holds, in certified intervals.  A bound that the
interval cannot separate is decided exactly with sympy; a violation is
re-computed afresh at twice the precision before the claim is refuted.  The
figures report the worst dataset on each side and its slack, so a loose
theorem shows how loose it is.
"""
from __future__ import annotations

from typing import Any, Optional

import sympy

from ...dsl.claims import Claim
from ...dsl.learning import Probability
from ...dsl.params import Point, point_label, substitute
from ...dsl.spec import Spec
from ...engine.program.backend import IntervalBackend, SympyBackend, exact_sign
from ...engine.program.reading import distribution, keywords
from ...evidence import ProbabilityEvidence, SideBound
from ...results import PointResult, Status, Witness
from ..witness import CONFIRM_DIGITS, number, positive
from ..workspace import Workspace
from ...engine.decide.decimals import decimal
from ...engine.program.work import params


class ProbabilityCheck:
    kind = "probability"

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, Probability)

    def run(self, spec: Spec, claim: Probability, point: Point, ws: Workspace) -> PointResult:
        table = ws.discrete_table(spec, spec.mechanism, point, "probability")
        backend, values = table.backend, params(point)
        event_args = keywords(claim.event, values)
        bounds = [(side, substitute(expr, point, side)) for side, expr in
                  (("at_most", claim.at_most), ("at_least", claim.at_least)) if expr is not None]
        result = PointResult(point_label(point), Status.VERIFIED, "",
                             method="exact enumeration of the event's probability, certified intervals",
                             evidence=ProbabilityEvidence())
        probabilities = []
        for i, data in enumerate(table.datasets):
            law = table.laws[table.law_of[i]]
            hits = [w for o, w in law.items() if _holds(claim.event(data, o, **event_args))]
            probabilities.append(sum(hits, backend.num(0)))
        ties = 0
        for side, bound in bounds:
            limit = backend.num(bound)
            sign = 1 if side == "at_most" else -1  # at_most: bound - P >= 0; at_least: P - bound >= 0
            worst = max(range(len(probabilities)), key=lambda k: sign * float(probabilities[k].mid))
            for k in range(len(probabilities)):
                gap = (limit - probabilities[k]) * sign
                if gap.a >= 0:
                    continue
                if gap.b < 0:
                    return _refute(spec, claim, point, table.datasets[k], side, bound, table.windows, result,
                                   backend.dps)
                exact = _exact_gap(spec, claim, point, table.datasets[k], bound, sign, table.windows)
                if exact is None:
                    result.status = Status.UNKNOWN
                    result.message = (f"cannot decide P[event] against {bound} on {table.datasets[k]!r}: "
                                      "intervals overlap and sympy cannot simplify the difference")
                    return result
                if exact < 0:
                    return _refute(spec, claim, point, table.datasets[k], side, bound, table.windows, result,
                                   backend.dps, exact=True)
                ties += exact == 0
            p = probabilities[worst]
            by_size: dict = {}
            for k, data in enumerate(table.datasets):
                low, high = by_size.get(len(data), (probabilities[k], probabilities[k]))
                by_size[len(data)] = (min(low, probabilities[k], key=lambda v: float(v.mid)),
                                      max(high, probabilities[k], key=lambda v: float(v.mid)))
            result.evidence.by_size = {str(n): {"min": decimal(lo), "max": decimal(hi)}
                                         for n, (lo, hi) in sorted(by_size.items())}
            setattr(result.evidence, side, SideBound(decimal(bound), decimal(p), repr(table.datasets[worst]),
                                                     decimal((limit - p) * sign)))
        parts = [f"P[event] {'<=' if side == 'at_most' else '>='} {bound}: worst "
                 f"{getattr(result.evidence, side).worst_probability} on {getattr(result.evidence, side).worst_dataset} "
                 f"(slack {getattr(result.evidence, side).slack})" for side, bound in bounds]
        result.message = (f"holds on all {len(table.datasets):,} datasets; " + "; ".join(parts)
                          + (f"; {ties} exact ties decided by sympy" if ties else ""))
        return result


def _holds(value: Any) -> bool:
    """An event's truth value; sympy relationals must be decidable."""
    if isinstance(value, sympy.Basic) and not isinstance(value, sympy.logic.boolalg.BooleanAtom):
        raise TypeError(f"the event returned {value}, which sympy cannot decide")
    return bool(value)


def _event_probability(spec: Spec, claim: Probability, point: Point, data: tuple, backend: Any,
                       windows: dict) -> Any:
    values = params(point)
    law = distribution(spec.mechanism, data, values, backend, windows)
    args = keywords(claim.event, values)
    return sum((w for o, w in law.items() if _holds(claim.event(data, o, **args))), backend.num(0))


def _exact_gap(spec: Spec, claim: Probability, point: Point, data: tuple, bound: sympy.Expr, sign: int,
               windows: dict) -> Optional[int]:
    p = _event_probability(spec, claim, point, data, SympyBackend(), windows)
    return exact_sign((bound - p) * sign)


def _refute(spec: Spec, claim: Probability, point: Point, data: tuple, side: str, bound: sympy.Expr,
            windows: dict, result: PointResult, dps: int, exact: bool = False) -> PointResult:
    """Confirm a violation on the law recomputed afresh at twice the precision (``exact``: decided by
    exact sympy where the intervals straddle the bound, and confirmed in that reading)."""
    name = getattr(claim.event, "__name__", "event")
    if exact:
        p = _event_probability(spec, claim, point, data, SympyBackend(), windows)
        excess = p - bound if side == "at_most" else bound - p
        how = (f"the certified intervals cannot separate P[event] from the bound; decided exactly by sympy (by "
               f"{number(excess, probability=False)}, confirmed by a strict {CONFIRM_DIGITS}-digit evaluation)")
        confirmed = positive(excess)
    else:
        backend = IntervalBackend(2 * dps)
        p = _event_probability(spec, claim, point, data, backend, windows)
        limit = backend.num(bound)
        confirmed = (p - limit).a > 0 if side == "at_most" else (limit - p).a > 0
        how = f"confirmed at {2 * dps} digits"
    shown = number(p)
    if not confirmed or shown is None:
        result.status = Status.UNKNOWN
        result.message = (f"a violation on {data!r} was not confirmed ({'exactly' if exact else f'at {2 * dps} digits'}"
                          f"{', or its probability is not pinned down' if confirmed else ''})")
        return result
    relation = ">" if side == "at_most" else "<"
    result.status = Status.REFUTED
    result.witness = Witness(data, None, name, shown, decimal(bound))
    result.message = f"on dataset {data!r}, P[{name}] = {shown} {relation} {bound} = {decimal(bound)}; {how}"
    return result
