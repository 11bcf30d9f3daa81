"""The distribution-equality check: two programs have the same output law on every dataset.

Differences are found with certified intervals (a non-zero interval
difference is a certain mismatch, then confirmed at twice the precision).
Equality cannot be shown by intervals, so every dataset is also recomputed
exactly with sympy and each output's difference shown to be zero
(:func:`~dpverify.engine.backend.exact_sign`).
"""
from __future__ import annotations

import sympy

from ..dsl.claims import Claim, SameDistribution
from ..dsl.params import Point, point_label
from ..dsl.spec import Spec
from ..engine.backend import IntervalBackend, SympyBackend, exact_sign
from ..engine.reading import distribution
from .result import PointResult, Status, Witness
from .workspace import Workspace, decimal, params


class SameDistributionCheck:
    kind = "same_distribution"

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, SameDistribution)

    def run(self, spec: Spec, claim: SameDistribution, point: Point, ws: Workspace) -> PointResult:
        mine = ws.table(spec, spec.mechanism, point)
        theirs = ws.table(spec, claim.other, point)
        result = PointResult(point_label(point), Status.UNKNOWN, "",
                             method="exact enumeration; equality by exact sympy algebra")
        ctx = mine.backend.ctx
        zero = ctx.mpf(0)
        for i, data in enumerate(mine.datasets):
            law, other = mine.laws[mine.law_of[i]], theirs.laws[theirs.law_of[i]]
            for o in sorted(set(law) | set(other), key=repr):
                diff = law.get(o, zero) - other.get(o, zero)
                if diff.a > 0 or diff.b < 0:
                    return _refute(spec, claim, point, data, o, mine.backend.dps, mine.windows, result)
        # No certain difference: show equality exactly, dataset by dataset.
        exact_pairs: dict = {}
        for i, data in enumerate(mine.datasets):
            key = (mine.law_of[i], theirs.law_of[i])
            law = distribution(spec.mechanism, data, params(point), SympyBackend(), mine.windows)
            other = distribution(claim.other, data, params(point), SympyBackend(), theirs.windows)
            for o in set(law) | set(other):
                sign = exact_sign(law.get(o, sympy.Integer(0)) - other.get(o, sympy.Integer(0)))
                if sign is None:
                    result.message = (f"cannot decide whether P(o={o!r}) is the same under both programs on "
                                      f"dataset {data!r}: sympy could not simplify the difference")
                    return result
                if sign != 0:
                    return _refute(spec, claim, point, data, o, mine.backend.dps, mine.windows, result)
            exact_pairs[key] = True
        result.status = Status.VERIFIED
        result.message = (f"identical output laws on all {len(mine.datasets):,} datasets "
                          f"({len(exact_pairs)} distinct law pairs), equality shown exactly")
        return result


def _refute(spec: Spec, claim: SameDistribution, point: Point, data: tuple, output: object, dps: int,
            windows: dict, result: PointResult) -> PointResult:
    backend = IntervalBackend(2 * dps)
    law = distribution(spec.mechanism, data, params(point), backend, windows)
    other = distribution(claim.other, data, params(point), backend, windows)
    zero = backend.num(0)
    p, q = law.get(output, zero), other.get(output, zero)
    diff = p - q
    if not (diff.a > 0 or diff.b < 0):
        result.message = f"a difference found at {dps} digits was not confirmed at {2 * dps} digits"
        return result
    name = getattr(claim.other, "__name__", "other")
    result.status = Status.REFUTED
    result.witness = Witness(data, data, output, decimal(p), decimal(q))
    result.message = (f"on dataset {data!r}, P(o={output!r}) = {decimal(p)} under {spec.mechanism.__name__} "
                      f"but {decimal(q)} under {name}; confirmed at {2 * dps} digits")
    return result
