"""Conformance within a tolerance: every output probability of an implementation within t of the spec's.

``dp.conforms(spec_program)`` without a tolerance is exact and decided by
:mod:`.same_distribution`.  With ``tolerance=t > 0`` it states, for every dataset X of the
universe and every output o, |P_impl(o|X) - P_spec(o|X)| <= t: float code whose law differs
from the real-valued spec only by rounding is then verified, and a real discrepancy is still
refuted with its witness.

Decided with the certified interval laws of both programs: a difference whose interval lies
inside [-t, t] holds, one wholly outside is a refutation (recomputed afresh at twice the
precision before it is reported), and a difference whose interval straddles +-t is decided
exactly (sympy, :func:`~dpverify.engine.program.backend.exact_sign`), or left ``unknown``.
"""
from __future__ import annotations

from typing import Any

import sympy

from ...dsl.claims import Claim, Conforms
from ...dsl.params import Point, point_label
from ...dsl.spec import Spec
from ...engine.program.backend import IntervalBackend, SympyBackend, exact_sign
from ...engine.decide.decimals import decimal
from ...engine.program.reading import distribution
from ...engine.program.work import params
from ...evidence import ConformanceEvidence
from ...results import PointResult, Status, Witness
from ..workspace import Workspace
from ..privacy.same_distribution import _one_meaning_of_outputs


class ConformsCheck:
    kind = "conforms"

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, Conforms) and claim.tolerance != 0

    def run(self, spec: Spec, claim: Conforms, point: Point, ws: Workspace) -> PointResult:
        mine = ws.discrete_table(spec, spec.mechanism, point, "conforms")
        theirs = ws.discrete_table(spec, claim.other, point, "conforms")
        _one_meaning_of_outputs(mine, theirs)
        evidence = ConformanceEvidence(tolerance=decimal(claim.tolerance), datasets=len(mine.datasets))
        result = PointResult(point_label(point), Status.UNKNOWN, "", evidence=evidence,
                             method=f"exact enumeration; differences against the tolerance {claim.tolerance} "
                                    "in certified intervals, exactly where they straddle it")
        backend = mine.backend
        tolerance = backend.num(claim.tolerance)
        zero = backend.ctx.mpf(0)
        largest, at = zero, None
        straddling: list[tuple[tuple, Any]] = []
        for i, data in enumerate(mine.datasets):
            law, other = mine.laws[mine.law_of[i]], theirs.laws[theirs.law_of[i]]
            for o in sorted(set(law) | set(other), key=repr):
                diff = abs(law.get(o, zero) - other.get(o, zero))
                if diff.a > tolerance.b:
                    return _refute(spec, claim, point, data, o, backend.dps, mine.windows, result)
                if diff.b <= tolerance.a:
                    if at is None or diff.b > largest:
                        largest, at = diff.b, [repr(data), repr(o)]
                else:
                    straddling.append((data, o))
        for data, o in straddling:  # exactly: |p - q| - t
            law = distribution(spec.mechanism, data, params(point), SympyBackend(), mine.windows)
            other = distribution(claim.other, data, params(point), SympyBackend(), theirs.windows)
            gap = sympy.Abs(law.get(o, sympy.Integer(0)) - other.get(o, sympy.Integer(0))) - claim.tolerance
            sign = exact_sign(gap)
            if sign is None:
                result.message = (f"cannot decide whether P(o={o!r}) on dataset {data!r} differs by more than "
                                  f"{claim.tolerance}: sympy could not simplify the difference")
                return result
            if sign > 0:
                return _refute(spec, claim, point, data, o, backend.dps, mine.windows, result)
        evidence.largest_difference, evidence.largest_at = decimal(largest), at
        result.status = Status.VERIFIED
        result.message = (f"every output probability within {claim.tolerance} of "
                          f"{getattr(claim.other, '__name__', 'the spec program')}'s on all "
                          f"{len(mine.datasets):,} datasets (largest certified difference at most "
                          f"{decimal(largest)}{'' if not straddling else '; those at the tolerance decided exactly'})")
        return result


def _refute(spec: Spec, claim: Conforms, point: Point, data: tuple, output: object, dps: int, windows: dict,
            result: PointResult) -> PointResult:
    """Recompute the two probabilities afresh at twice the precision; report only a confirmed excess."""
    backend = IntervalBackend(2 * dps)
    values = params(point)
    zero = backend.num(0)
    p = distribution(spec.mechanism, data, values, backend, windows).get(output, zero)
    q = distribution(claim.other, data, values, backend, windows).get(output, zero)
    if not abs(p - q).a > backend.num(claim.tolerance).b:
        if exact_sign(sympy.Abs(_exact(spec.mechanism, data, values, windows, output)
                                - _exact(claim.other, data, values, windows, output)) - claim.tolerance) != 1:
            result.message = f"a difference above the tolerance at {dps} digits was not confirmed"
            return result
    name = getattr(claim.other, "__name__", "the spec program")
    if isinstance(result.evidence, ConformanceEvidence):
        result.evidence.largest_difference = decimal(abs(p - q))
        result.evidence.largest_at = [repr(data), repr(output)]
    result.status = Status.REFUTED
    result.witness = Witness(data, data, output, decimal(p), decimal(q))
    result.message = (f"on dataset {data!r}, P(o={output!r}) = {decimal(p)} under {spec.mechanism.__name__} "
                      f"but {decimal(q)} under {name}: they differ by more than the tolerance {claim.tolerance}; "
                      f"confirmed at {2 * dps} digits")
    return result


def _exact(program: Any, data: tuple, values: dict, windows: dict, output: object) -> Any:
    return distribution(program, data, values, SympyBackend(), windows).get(output, sympy.Integer(0))
