"""``renyi(alpha, eps)``: D_alpha(M(X) || M(X')) <= eps for every ordered pair of neighbours.

The achieved value is the largest exact Rényi divergence over the universe's ordered
neighbouring pairs, in certified intervals (:mod:`dpverify.engine.loss.renyi`).  ``verified`` when
its upper end is at most the claim; ``refuted`` when a pair's lower end exceeds it and the pair,
recomputed afresh at twice the precision, still does; a pair whose interval straddles the claim
(a claim equal to the exact divergence) is decided in exact sympy: the sum
sum_o P^alpha Q^(1 - alpha) against e^((alpha - 1) eps), a tie shown by algebra -- unless the proof
for every value of the parameters (tried first there) covers this point too.  Where the
divergences have closed forms in the parameters, :mod:`.proof` then proves the claim for every
value of them.
"""
from __future__ import annotations

import math
from typing import Any

import sympy

from ...dsl.claims import Claim, Renyi
from ...dsl.params import Point, point_label, substitute
from ...dsl.spec import Spec
from ...engine.program.backend import IntervalBackend
from ...engine.decide.decimals import decimal
from ...engine.loss.renyi import Unsupported
from ...results import PointResult, Status, Witness
from ..witness import CONFIRM_DIGITS, positive
from ..workspace import Workspace
from .pairs import Pair, evidence, exact_excess, fresh, law_pairs, order, witnessed
from .proof import generalise, prove_renyi

WITNESS_DIGITS = 400
"""Digits of the divergence printed with a refutation decided exactly (laws that agree beyond the working
precision: the divergence is far below it)."""


class RenyiCheck:
    kind = "renyi"

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, Renyi)

    def run(self, spec: Spec, claim: Renyi, point: Point, ws: Workspace) -> PointResult:
        alpha = order(claim.alpha, point)
        eps = substitute(claim.epsilon, point, "epsilon")
        program = spec.mechanism
        table = ws.table(spec, program, point)
        _, left, right = ws.datasets(spec)
        result = PointResult(point_label(point), Status.UNKNOWN, "",
                             method="exact Rényi divergence of every ordered neighbouring pair, certified intervals")
        try:
            pairs = law_pairs(spec, table, left, right)
            values = [p.divergence.value(alpha) for p in pairs]
        except Unsupported as exc:
            result.message = f"not decided: {exc}"
            return result
        result.evidence = evidence("renyi", eps, alpha, pairs, values)
        eps_iv = table.backend.num(eps)
        scope = (f"{len(pairs)} ordered pairs of distinct laws ({spec.universe.relation_name}), "
                 f"{len(table.laws)} distinct output laws")
        above = [(p, v) for p, v in zip(pairs, values) if v == math.inf or v.a > eps_iv.b]
        for pair, _ in sorted(above, key=lambda item: 0 if item[1] == math.inf else -float(item[1].a)):
            refuted = _refute(program, point, claim, pair, alpha, eps, table, result)
            if refuted.status == Status.REFUTED:
                return refuted
        if above:
            return result  # certified above but not confirmed afresh: the reason is the message
        straddling = [p for p, v in zip(pairs, values) if not v.b <= eps_iv.a]
        proof = prove_renyi(spec, program, claim, point, ws) if ws.options.proofs else None
        if proof is not None and proof.status == Status.PROVED:
            straddling_left = []  # proved for every value of the parameters, this point included: no tie to decide
        else:
            straddling_left = straddling
        for pair in straddling_left:
            sign, _ = exact_excess(program, point, pair, table, alpha, eps)
            if sign is None:
                result.message = (f"cannot decide whether D_{alpha}(X || X') <= {eps} for X={pair.x!r}, "
                                  f"X'={pair.x_prime!r}: the intervals overlap and sympy cannot decide")
                return result
            if sign > 0:
                return _refute(program, point, claim, pair, alpha, eps, table, result, exact=True)
        result.status = Status.VERIFIED
        how = "sympy" if straddling_left else "the proof for every value"
        if straddling:
            result.evidence.achieved, result.evidence.tightness = decimal(eps), "1"
            result.method += f"; ties decided by {how}"
        result.message = (f"holds on all {scope}; achieved D_{alpha} = {result.evidence.achieved}"
                          + (f" (tight: {len(straddling)} pairs not separated from {claim.epsilon} by the intervals, "
                             f"at most it by {how})" if straddling else ""))
        generalise(result, proof)
        return result


def _refute(program: Any, point: Point, claim: Renyi, pair: Pair, alpha: Any, eps: Any, table: Any,
            result: PointResult, exact: bool = False) -> PointResult:
    """Confirm D_alpha(X || X') > eps on both laws recomputed afresh at twice the precision (``exact``:
    found by exact sympy, confirmed by a strict evaluation of the exact excess instead)."""
    again = fresh(program, point, pair, table)
    value = again.value(alpha)
    digits = again.backend.dps
    if exact:
        _, difference = exact_excess(program, point, pair, table, alpha, eps)
        if difference != sympy.oo and not positive(difference):
            result.message = (f"a violation decided exactly at X={pair.x!r}, X'={pair.x_prime!r} was not "
                              f"confirmed by a strict {CONFIRM_DIGITS}-digit evaluation")
            return result
        if difference != sympy.oo:  # the divergence itself, from the exact sum, for the witness
            value = IntervalBackend(WITNESS_DIGITS).num(
                sympy.log(difference + sympy.exp((alpha - 1) * eps)) / (alpha - 1))
        how = ("the certified intervals cannot separate it from the claim; decided exactly by sympy (the excess of "
               f"the sum over e^((alpha - 1) eps) is certified positive by a strict {CONFIRM_DIGITS}-digit evaluation)")
    else:
        if not (value == math.inf or value.a > again.backend.num(eps).b):
            result.message = (f"a violation found at {table.backend.dps} digits (X={pair.x!r}, X'={pair.x_prime!r}) "
                              f"was not confirmed at {digits} digits")
            return result
        how = f"confirmed on both laws recomputed at {digits} digits"
    relation, divergence = witnessed(value)
    result.status = Status.REFUTED
    result.witness = Witness(pair.x, pair.x_prime, f"order alpha = {alpha}", divergence, decimal(eps),
                             quantity="divergence")
    cause = (f" (an output is possible under X only: {again.infinite!r})" if value == math.inf else "")
    result.message = (f"X={pair.x!r} and X'={pair.x_prime!r} are neighbours; D_{alpha}(M(X) || M(X')) {relation} "
                      f"{divergence}{cause} > {claim.epsilon} = {decimal(eps)}; {how}")
    return result
