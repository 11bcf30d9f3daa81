"""Privacy proved for every dataset of every size, from the mechanism's structure.

After the exact path has decided a ``private(eps[, delta])`` claim at a grid
point, :func:`upgrade` asks the structural reading
(:mod:`dpverify.engine.structural`) for the mechanism's pure-eps cost C(n, theta)
for every dataset over the record domain, every size n >= n_min and every value
of the continuous parameters theta, and proves C <= the claimed eps for all of
them (:func:`~dpverify.engine.structural.at_most`, exact).  Pure eps-DP implies
(eps, delta)-DP for every delta >= 0, so a claim with a delta is proved the same
way.

Before anything reads ``proved``, a second, independent check: at this grid
point and at every size of the universe, the structural bound C must be at least
the achieved eps the exact engine computed on the finite universe (a sound
upper bound dominates the exact value).  A structural proof that the exact
engine contradicts -- a bound below the achieved eps, or a claim the exact path
refuted -- is an internal inconsistency: a refuted point stays ``refuted`` with its
certified witness (its message adds that the structural reading disagreed: a bug to report); any
other point becomes ``unknown`` with that message, never ``proved``.

A program the structural reading does not accept (branching on data or noise,
iterating the records, a query whose sensitivity is not derived, ...), a cost
above the claim, or a universe whose sizes are not all covered keeps the exact
path's verdict unchanged.
"""
from __future__ import annotations

from typing import Any, Optional

import sympy

from ...dsl.claims import Private
from ...dsl.params import Point
from ...dsl.spec import Spec
from ...dsl.universe import PairSet
from ...engine.decide.decimals import decimal
from ...engine.program.backend import exact_sign
from ...engine.program.reading import keywords
from ...engine.sensitivity.derivable import N
from ...engine.structural import NotStructural, at_most, cost_of
from ...evidence import PrivacyEvidence
from ...results import PointResult, Status
from ..workspace import Workspace
from .proof import proof_symbols

TOLERANCE_DIGITS = 20
"""The achieved eps is printed to 40 significant digits from a certified enclosure; the dominance
check allows this relative slack below it (a structural bound that is tight equals it exactly)."""


def upgrade(spec: Spec, program: Any, claim: Any, point: Point, ws: Workspace, result: PointResult) -> PointResult:
    """``result`` upgraded to a proof for every dataset when the structure proves it (see the module)."""
    if (not isinstance(claim, Private) or not ws.options.proofs or spec.universe is None
            or isinstance(spec.universe, PairSet) or not isinstance(result.evidence, PrivacyEvidence)
            or result.status not in (Status.VERIFIED, Status.PROVED, Status.REFUTED)):
        return result
    found = _proof(spec, program, claim, point, ws)
    if found is None:
        return result
    cost, label, steps, words = found
    if result.status == Status.REFUTED:  # the certified refutation stands, witness and all
        result.message = (f"{result.message}; internal inconsistency (please report it as a dpverify bug): the "
                          f"structural reading disagreed, claiming a proof for every dataset ({words})")
        return result
    achieved = getattr(result.evidence, "achieved_epsilon", None)
    check = _dominates(cost, point, spec.universe, achieved)
    if check is not None:
        if check.startswith("internal inconsistency"):
            result.status = Status.UNKNOWN
            result.message = f"{check}; the exact path said: {result.message}"
        else:
            result.message = f"{result.message}; no proof for every dataset: {check}"
        return result
    result.status = Status.PROVED
    result.coverage = {"scope": "all datasets", "label": label,
                       "note": "proved for every dataset of every size the label names, from the mechanism's "
                               "structure (sensitivity derived for every n, calibration lemma, composition)"}
    result.evidence.proof_steps = steps
    result.method = f"structural proof for every dataset; {result.method}"
    result.message = f"{words}; on this grid point the exact engine: {result.message}"
    return result


def _proof(spec: Spec, program: Any, claim: Private, point: Point,
           ws: Workspace) -> Optional[tuple[sympy.Expr, str, list[str], str]]:
    """(cost, coverage label, proof steps, the proof in words), or None when there is no structural proof."""
    symbols = proof_symbols(point, program)
    fixed = tuple((s, v) for s, v in point if s not in symbols)
    key = ("structural-proof", id(spec), program, claim.id, fixed)
    if key in ws.memo:
        return ws.memo[key]
    ws.memo[key] = found = _attempt(spec, program, claim, point, symbols, fixed)
    return found


def _attempt(spec: Spec, program: Any, claim: Private, point: Point, symbols: list,
             fixed: tuple) -> Optional[tuple[sympy.Expr, str, list[str], str]]:
    values = {s.name: (s if s in symbols else v) for s, v in point}
    params = keywords(program, values, skip=1)
    try:
        cost = cost_of(program, spec.universe, params)
    except NotStructural:
        return None
    substitution = {s: v for s, v in fixed}
    bound = sympy.sympify(claim.epsilon).subs(substitution)
    if any(s not in symbols and s != N for s in bound.free_symbols | cost.eps.free_symbols):
        return None  # a symbol neither generalised nor fixed at this point
    delta = sympy.sympify(claim.delta).subs(substitution)
    if delta.is_nonnegative is not True:
        return None
    holds, why = at_most(cost.eps, bound, cost.n_min)
    if not holds:
        return None
    universe = spec.universe
    answers = "answer vectors" in cost.domain
    if not answers and any(k < cost.n_min for k in universe.sizes):
        return None  # the universe holds sizes the structural proof does not cover
    every = ", ".join(f"every {s.name}" for s in symbols) or "the parameters at this point"
    at = ", ".join(f"{s.name} = {v}" for s, v in fixed if s.name in params)
    relation = universe.relation_name
    if answers:
        distance = "L1" if "l1" in relation else "L-infinity"
        label = f"all {cost.domain} at {distance} distance <= 1, {every}" + (f" (at {at})" if at else "")
        whom = f"every pair of {cost.domain} at {distance} distance <= 1"
    else:
        label = f"all datasets over {cost.domain}, every size n >= {cost.n_min}, {every}" + (f" (at {at})" if at else "")
        whom = f"every dataset of every size n >= {cost.n_min} over {cost.domain} under {relation}"
    steps = list(cost.steps) + [f"the claimed eps is {bound}: {why}"
                                + ("" if delta == 0 else f"; pure eps-DP implies ({bound}, {delta})-DP")]
    words = (f"proved for {whom} and {every}" + (f" (at {at})" if at else "") + ": " + "; ".join(cost.steps)
             + f"; against the claimed {bound}: {why}")
    return cost.eps.subs(substitution), label, steps, words


def _dominates(cost: sympy.Expr, point: Point, universe: Any, achieved: Optional[str]) -> Optional[str]:
    """None when the structural bound, at this point, is >= the exact achieved eps at every size of the
    universe; else why not (an "internal inconsistency" when it is certainly below)."""
    if achieved is None or achieved == "null":
        return "the exact engine reported no achieved eps to cross-check the structural bound against"
    values = {s: v for s, v in point}
    at_point = sympy.sympify(cost).subs(values)
    sizes = [k for k in universe.sizes] if N in at_point.free_symbols else [None]
    bounds = [at_point.subs(N, k) if k is not None else at_point for k in sizes]
    if achieved == "inf":
        return (f"internal inconsistency: the structural bound {bounds[0]} is finite but the exact engine found "
                "an infinite loss")
    try:
        exact = sympy.Rational(achieved)
    except (TypeError, ValueError):
        return f"the achieved eps {achieved!r} cannot be read"
    slack = sympy.Rational(1, 10 ** TOLERANCE_DIGITS) * max(abs(exact), 1)
    top = sympy.Max(*bounds)
    sign = exact_sign(top - exact + slack)
    if sign is None:
        return f"cannot decide whether the structural bound {top} dominates the achieved eps {achieved}"
    if sign < 0:
        return (f"internal inconsistency: the structural bound {top} = {decimal(top)} at this point is below the "
                f"exact achieved eps {achieved} on the universe")
    return None


__all__ = ["upgrade"]
