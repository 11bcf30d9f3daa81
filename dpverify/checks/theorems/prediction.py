"""Checks about predictions at query points: private prediction and uniform stability.

The prediction at a query point x is a post-processing of the mechanism,
``predict(M(X), x)`` (which may itself draw, e.g. flip the label), so both
checks build that derived program and let the engine enumerate it exactly.

* private prediction: the derived program is checked for eps-DP by the privacy
  check (with its proof for every eps); the achieved eps is the largest over x.
* stability: the largest additive change max |P(y|X) - P(y|X')| over
  neighbours, labels y and points x, certified in intervals, ties decided by
  sympy, violations confirmed at twice the precision; the achieved gamma is
  reported.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

import sympy

from ...dsl.claims import Claim, Private
from ...dsl.learning import PrivatePrediction, Stability
from ...dsl.params import Point, point_label, substitute
from ...dsl.spec import Spec
from ...engine.program.backend import IntervalBackend, SympyBackend, exact_sign
from ...engine.program.reading import call_with, distribution, keywords
from ..privacy.discrete import check_private, side_by_side
from ...evidence import PredictionEvidence
from ...results import PointResult, Status, Witness, worst
from ..witness import CONFIRM_DIGITS, number, positive
from ..workspace import Workspace
from ...engine.decide.decimals import decimal
from ...engine.program.work import params


@dataclass(frozen=True)
class PredictionAt:
    """The program X -> predict(mechanism(X), x): one query point's prediction."""

    mechanism: Callable[..., Any]
    predict: Callable[..., Any]
    x: Any

    def __call__(self, data: tuple, **values: Any) -> Any:
        return self.predict(call_with(self.mechanism, data, values), self.x, **keywords(self.predict, values))

    @property
    def __code__(self) -> Any:  # errors are located in the spec file that defines the mechanism
        return self.mechanism.__code__

    @property
    def __name__(self) -> str:
        return f"{getattr(self.predict, '__name__', 'predict')}@{self.x!r}"


class PrivatePredictionCheck:
    kind = "private_prediction"

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, PrivatePrediction)

    def run(self, spec: Spec, claim: PrivatePrediction, point: Point, ws: Workspace) -> PointResult:
        results = []
        for x in claim.points:
            as_privacy = Private(epsilon=claim.epsilon, id=f"{claim.id}@{x!r}")
            results.append((x, check_private(spec, PredictionAt(spec.mechanism, claim.predict, x), as_privacy,
                                             point, ws)))
        status = worst([r.status for _, r in results])
        x, chosen = next((x, r) for x, r in results if r.status == status) if status in (
            Status.REFUTED, Status.UNKNOWN, Status.ERROR) else max(results, key=lambda item: _achieved(item[1]))
        chosen.status = status
        chosen.message = f"at query point x={x!r} (the worst of {len(results)}): {chosen.message}"
        chosen.evidence = PredictionEvidence(**vars(chosen.evidence), achieved_by_point={
            repr(px): r.evidence.achieved_epsilon for px, r in results})
        return chosen


def _achieved(result: PointResult) -> float:
    value = result.evidence.achieved_epsilon
    return math.inf if value == "inf" else float(value) if value else -1.0


class StabilityCheck:
    kind = "stability"

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, Stability)

    def run(self, spec: Spec, claim: Stability, point: Point, ws: Workspace) -> PointResult:
        gamma = substitute(claim.gamma, point, "gamma")
        _, left, right = ws.datasets(spec)
        result = PointResult(point_label(point), Status.VERIFIED, "", evidence=PredictionEvidence(),
                             method="exact enumeration of prediction laws, certified intervals")
        best: Optional[tuple] = None
        ties = 0
        for x in claim.points:
            program = PredictionAt(spec.mechanism, claim.predict, x)
            table = ws.discrete_table(spec, program, point, "prediction")
            limit = table.backend.num(gamma)
            pairs = {(table.law_of[i], table.law_of[j]): (i, j) for i, j in zip(left.tolist(), right.tolist())}
            for (a, b), (i, j) in pairs.items():
                law, other = table.laws[a], table.laws[b]
                for label in sorted(set(law) | set(other), key=repr):  # a deterministic first witness
                    change = abs(law.get(label, table.backend.num(0)) - other.get(label, table.backend.num(0)))
                    if best is None or change.b > best[0].b:
                        best = (change, x, table.datasets[i], table.datasets[j], label, program, table)
                    if change.b <= limit.a:
                        continue
                    data, data_prime = table.datasets[i], table.datasets[j]
                    if change.a > limit.b:
                        return _refute(program, point, gamma, data, data_prime, label, x, table, result)
                    sign = _exact_change(program, point, gamma, data, data_prime, label, table.windows)
                    if sign is None:
                        result.status = Status.UNKNOWN
                        result.message = f"cannot decide the change at x={x!r} between {data!r} and {data_prime!r}"
                        return result
                    if sign > 0:
                        return _refute(program, point, gamma, data, data_prime, label, x, table, result, True)
                    ties += sign == 0
        achieved = best[0] if best else 0
        result.evidence.achieved_gamma = decimal(achieved)
        result.evidence.claimed_gamma = decimal(gamma)
        where = f" at x={best[1]!r} between {best[2]!r} and {best[3]!r}" if best else ""
        result.message = (f"holds at {len(claim.points)} query points over {len(left):,} neighbouring pairs; "
                          f"achieved gamma {decimal(achieved)}{where} (claimed {decimal(gamma)})"
                          + (f"; {ties} exact ties decided by sympy" if ties else ""))
        return result


def _exact_change(program: PredictionAt, point: Point, gamma: sympy.Expr, data: tuple, data_prime: tuple,
                  label: Any, windows: dict) -> Optional[int]:
    """Sign of |P(label|X) - P(label|X')| - gamma, exactly."""
    p = distribution(program, data, params(point), SympyBackend(), windows).get(label, sympy.Integer(0))
    q = distribution(program, data_prime, params(point), SympyBackend(), windows).get(label, sympy.Integer(0))
    signs = [exact_sign(p - q - gamma), exact_sign(q - p - gamma)]
    if 1 in signs:
        return 1
    return None if None in signs else max(signs)


def _refute(program: PredictionAt, point: Point, gamma: sympy.Expr, data: tuple, data_prime: tuple,
            label: Any, x: Any, table: Any, result: PointResult, exact: bool = False) -> PointResult:
    """Confirm a change above gamma on laws recomputed afresh at twice the precision (``exact``: decided
    by exact sympy where the intervals straddle gamma, and confirmed in that reading)."""
    dps = 2 * table.backend.dps
    backend = IntervalBackend(dps)
    law = distribution(program, data, params(point), backend, table.windows)
    other = distribution(program, data_prime, params(point), backend, table.windows)
    if exact:
        laws = [distribution(program, d, params(point), SympyBackend(), table.windows) for d in (data, data_prime)]
        p, q = (law_.get(label, sympy.Integer(0)) for law_ in laws)
        change = p - q if positive(p - q - gamma) else q - p
        confirmed = positive(change - gamma)
        how = (f"the certified intervals cannot separate the change from gamma; decided exactly by sympy (by "
               f"{number(change - gamma, probability=False)}, confirmed by a strict {CONFIRM_DIGITS}-digit evaluation)")
    else:
        p, q = law.get(label, backend.num(0)), other.get(label, backend.num(0))
        change = abs(p - q)
        confirmed = (change - backend.num(gamma)).a > 0
        how = f"confirmed at {dps} digits"
    shown = [number(p), number(q), number(change)]
    if not confirmed or None in shown:
        result.status = Status.UNKNOWN
        result.message = f"a violation at x={x!r} was not confirmed ({'exactly' if exact else f'at {dps} digits'})"
        return result
    result.status = Status.REFUTED
    result.witness = Witness(data, data_prime, label, shown[0], shown[1])
    result.evidence.witness_laws = side_by_side(law, other)
    result.message = (f"at query point x={x!r}, P(predict = {label!r}) is {shown[0]} on {data!r} but "
                      f"{shown[1]} on its neighbour {data_prime!r}: a change of {shown[2]} > gamma = {decimal(gamma)}; "
                      f"{how}")
    return result
