"""``profile(at, delta, times=T)``: delta_T(eps) <= delta at every listed eps, for the T-fold composition.

For each distinct ordered pair of laws of neighbouring datasets, a route of :mod:`.routes` encloses
delta_T(eps) in a certified interval.  ``verified`` when every pair's upper end is at most the claimed
delta at every listed eps; ``refuted`` when a pair's lower end exceeds it and the violation survives a
fresh recomputation of both laws and of their composition at twice the precision (the witness: the
event S where the composed loss exceeds eps, with P(S|X) and P(S|X'), or for Laplace releases the
certified lower bound of delta_T(eps)); ``unknown`` otherwise, with the reason.
"""
from __future__ import annotations

from typing import Any

import sympy

from ...dsl.claims import Claim, Profile
from ...dsl.params import Point, point_label, substitute
from ...dsl.spec import Spec
from ...engine.program.backend import IntervalBackend, exact_sign
from ...engine.datasets.datasets import require_pairs
from ...engine.decide.decimals import decimal
from ...engine.pld.budget import set_factor
from ...errors import SpecError
from ...evidence import ProfileEvidence, ProfileRow
from ...results import PointResult, Status, Witness
from ..witness import confirm_delta, number
from ..workspace import Workspace
from .mixture import route
from .routes import NotComposable

CURVE_POINTS = 16
"""Points of the achieved curve in the evidence (the report's plot)."""


class ProfileCheck:
    kind = "profile"

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, Profile)

    def run(self, spec: Spec, claim: Profile, point: Point, ws: Workspace) -> PointResult:
        levels = [(_level(e, point, "epsilon"), _level(d, point, "delta")) for e, d in zip(claim.epsilons, claim.deltas)]
        _, left, right = ws.datasets(spec)
        require_pairs(spec.universe, left)
        components = [(program, times, ws.table(spec, program, point))
                      for program, times in ((spec.mechanism, claim.times), *claim.also)]
        table = components[0][2]
        pairs = _pairs([c[2] for c in components], left, right)
        result = PointResult(point_label(point), Status.UNKNOWN, "", method="privacy loss distribution")
        evidence = result.evidence = ProfileEvidence(times=claim.times, pairs=len(pairs))
        evidence.rows = [ProfileRow(decimal(e), decimal(d)) for e, d in levels]
        scope = (f"{len(pairs)} ordered pairs of distinct laws ({spec.universe.relation_name}), composed "
                 f"{claim.times} time{'s' if claim.times > 1 else ''}"
                 + "".join(f" with {getattr(p, '__name__', 'a program')} x {t}" for p, t in claim.also))
        if not pairs:
            for row in evidence.rows:
                row.achieved = decimal(0)
            result.status = Status.VERIFIED
            result.message = "holds: every pair of neighbouring datasets has the same law (delta = 0 at every eps)"
            return result
        set_factor(ws.options.max_work)  # the composition budgets scale with --max-work
        key = ("profile-route", id(spec), point, tuple((p, t) for p, t, _ in components))
        if key not in ws.memo:  # the composed distributions are shared by the claims at this point
            try:
                ws.memo[key] = route(components, point, pairs)
            except NotComposable as exc:
                ws.memo[key] = exc
        found = ws.memo[key]
        if isinstance(found, NotComposable):
            result.message = f"not decided: {found}"
            return result
        result.method = found.method
        evidence.method = type(found).__name__.lower()
        try:  # a route may meet a budget only at some eps (the lattice a claim needs): unknown, with it
            enclosures = [[found.enclosure(k, e) for k in range(len(pairs))] for e, _ in levels]
            bounded = hasattr(found, "refine")  # a discretised route: certified lower and upper bounds
            if bounded and _undecided(table, levels, enclosures) and found.refine():
                enclosures = [[found.enclosure(k, e) for k in range(len(pairs))] for e, _ in levels]
            for name, value in found.extras().items():
                setattr(evidence, name, value)
            worst = max(range(len(pairs)), key=lambda k: float(enclosures[0][k].b))
            evidence.pair = [repr(pairs[worst][0]), repr(pairs[worst][1])]
            _rows(evidence, enclosures, bounded)
            evidence.curve = _curve(found, worst, [e for e, _ in levels], table)
            return _decide(found, levels, enclosures, pairs, table, result, claim.times, scope)
        except NotComposable as exc:
            result.status, result.message = Status.UNKNOWN, f"not decided: {exc}"
            return result


def _decide(found: Any, levels: list, enclosures: list, pairs: list[tuple], table: Any, result: PointResult,
            times: int, scope: str) -> PointResult:
    """Refuted when a pair's enclosure is above a claimed delta and the violation is confirmed afresh;
    verified when every enclosure is at most its claimed delta; else unknown, naming the pair."""
    backend = table.backend
    for (eps, delta), values in zip(levels, enclosures):
        delta_iv = backend.num(delta)
        for k, value in enumerate(values):
            if value.a > delta_iv.b:
                refuted = _refute(found, k, pairs[k], eps, delta, table, result, times)
                if refuted.status == Status.REFUTED:
                    return refuted
    for (eps, delta), values in zip(levels, enclosures):
        delta_iv = backend.num(delta)
        for k, value in enumerate(values):
            if not value.b <= delta_iv.a:
                if not result.message:
                    result.message = (f"delta_{times}({eps}) of X={pairs[k][0]!r}, X'={pairs[k][1]!r} is in "
                                      f"[{decimal(value.a)}, {decimal(value.b)}], not separated from the claimed "
                                      f"{decimal(delta)}")
                return result
    result.status = Status.VERIFIED
    rows = result.evidence.rows
    shown = "; ".join(f"delta({r.epsilon}) = {r.achieved or r.achieved_upper} <= {r.claimed}" for r in rows[:4])
    result.message = f"holds on all {scope}: {shown}{'; ...' if len(rows) > 4 else ''}"
    return result


def _level(value: sympy.Expr, point: Point, what: str) -> sympy.Expr:
    """A claimed epsilon or delta at ``point``: exact, >= 0 (and a delta at most 1)."""
    found = substitute(value, point, f"profile {what}")
    if exact_sign(found) == -1 or (what == "delta" and exact_sign(found - 1) == 1):
        raise SpecError(f"profile: {what} = {value} is {found} at this point, "
                        f"outside {'[0, 1]' if what == 'delta' else '[0, oo)'}",
                        f"write {what} so that it lies there at every grid point")
    return found


def _pairs(tables: list, left: Any, right: Any) -> list[tuple]:
    """One pair of datasets (X, X') per distinct ordered pair of the components' laws (pairs where every
    component has the same law on both datasets are left out: their divergence is 0)."""
    seen: dict = {}
    for i, j in zip(left.tolist(), right.tolist()):
        for a, b in ((i, j), (j, i)):
            key = tuple((t.law_of[a], t.law_of[b]) for t in tables)
            if any(la != lb for la, lb in key) and key not in seen:
                seen[key] = (tables[0].datasets[a], tables[0].datasets[b])
    return list(seen.values())


def _undecided(table: Any, levels: list, enclosures: list) -> bool:
    for (_, delta), values in zip(levels, enclosures):
        d = table.backend.num(delta)
        if any(not (v.b <= d.a or v.a > d.b) for v in values):
            return True
    return False


def _rows(evidence: ProfileEvidence, enclosures: list, bounds: bool) -> None:
    for row, values in zip(evidence.rows, enclosures):
        top = max(values, key=lambda v: float(v.b))
        shown = number(top)
        if shown is not None and not bounds:
            row.achieved = shown
        else:
            row.achieved_lower, row.achieved_upper = decimal(top.a), decimal(top.b)


def _curve(found: Any, index: int, epsilons: list, table: Any) -> dict:
    """The worst pair's delta_T(eps) (upper ends, floats) on CURVE_POINTS epsilons from 0 to 1.5 times the
    largest listed (at least 1)."""
    top = max([1.0, *(float(e) for e in epsilons)]) * 1.5
    eps = [sympy.Rational(round(top * k / (CURVE_POINTS - 1) * 1000), 1000) for k in range(CURVE_POINTS)]
    point = getattr(found, "curve_point", found.enclosure)  # a cheaper enclosure where the route has one
    values = [float(point(index, e).b) for e in eps]
    return {"epsilon": [float(e) for e in eps], "delta": values}


def _refute(found: Any, index: int, pair: tuple, eps: sympy.Expr, delta: sympy.Expr, table: Any,
            result: PointResult, times: int) -> PointResult:
    """Confirm delta_T(eps) > delta from both laws and their composition recomputed at twice the precision."""
    if hasattr(found, "confirm_lower"):
        lower, digits = found.confirm_lower(index, eps)
        if not _above(lower, delta, digits):
            result.message = (f"a violation found at {table.backend.dps} digits (X={pair[0]!r}, X'={pair[1]!r}) was "
                              f"not confirmed at {digits} digits")
            return result
        result.status = Status.REFUTED
        result.witness = Witness(pair[0], pair[1], f"the {times}-fold composition at eps = {eps}",
                                 decimal(lower.a), decimal(delta), quantity="delta")
        result.message = (f"X={pair[0]!r} and X'={pair[1]!r} are neighbours; delta_{times}({eps}) >= {decimal(lower.a)} "
                          f"(the certified lower bound: {found.lower_how(index, eps)}) > delta = {decimal(delta)}; "
                          f"confirmed on both laws recomputed "
                          f"at {digits} digits")
        return result
    sums, event, digits = found.confirm(index, eps)
    fresh = IntervalBackend(digits)
    return confirm_delta(result, pair, event, f"for {event}", sums, fresh.num(delta), decimal(delta),
                         f"e^({eps})" if eps != 0 else "1", (table.backend.dps, digits))


def _above(lower: Any, delta: sympy.Expr, digits: int) -> bool:
    return bool(lower.a > IntervalBackend(digits).num(delta).b)


