"""``zcdp(rho)``: D_alpha(M(X) || M(X')) <= rho alpha for every order alpha > 1 and ordered neighbours.

Per pair, the achieved rho is sup over alpha > 1 of D_alpha / alpha, which need not be monotone
in alpha.  A grid of orders refined by golden-section search finds a large value (a certified
lower bound of the supremum, at an exact order); the limit at alpha -> 1 (the KL divergence) is
another.  ``refuted`` when D_alpha / alpha exceeds rho at an exact order, confirmed on both laws
recomputed afresh at twice the precision (the witness names the pair and the order).
``verified`` only with an upper bound valid for EVERY alpha > 1
(:func:`dpverify.engine.loss.renyi.rate_at_most`: beyond alpha_0 = D_oo / rho from D_alpha <= D_oo,
on (1, alpha_0] from the monotonicity of D_alpha on a partition); ``unknown`` when it does not
close.  Releases of Gaussian values alone have D_alpha / alpha constant: exactly sum t^2/(2 s^2).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional

import sympy

from ...dsl.claims import Claim, Zcdp
from ...dsl.params import Point, point_label, substitute
from ...dsl.spec import Spec
from ...engine.decide.decimals import decimal
from ...engine.loss.renyi import Unsupported, largest_rate, rate_at_most
from ...results import PointResult, Status, Witness
from ...errors import SpecError
from ..witness import CONFIRM_DIGITS, number, positive
from ..workspace import Workspace
from .pairs import Pair, evidence, exact_rate_sign, fresh, law_pairs, witnessed
from .proof import generalise, prove_zcdp

NEAR_ONE = tuple(1 + Fraction(1, 2 ** k) for k in range(4, 41, 4))
"""Orders tried when only the limit at alpha -> 1 (the KL divergence) exceeds rho."""


class ZcdpCheck:
    kind = "zcdp"

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, Zcdp)

    def run(self, spec: Spec, claim: Zcdp, point: Point, ws: Workspace) -> PointResult:
        rho = substitute(claim.rho, point, "rho")
        if rho.is_negative:
            raise SpecError(f"zcdp: rho = {claim.rho} is {rho} at this point", "rho must be >= 0 at every grid point")
        program = spec.mechanism
        table = ws.table(spec, program, point)
        _, left, right = ws.datasets(spec)
        result = PointResult(point_label(point), Status.UNKNOWN, "",
                             method="exact Rényi divergences, sup over orders certified on a partition")
        rho_iv = table.backend.num(rho)
        try:
            pairs = law_pairs(spec, table, left, right)
            found = [_largest(p) for p in pairs]
        except Unsupported as exc:
            result.message = f"not decided: {exc}"
            return result
        result.evidence = evidence("zcdp", rho, None, pairs, [v for v, _ in found])
        ranked = sorted(zip(pairs, found), key=lambda item: _key(item[1][0]), reverse=True)
        if ranked:
            top_value, top_alpha = ranked[0][1]
            result.evidence.alpha = "1+" if top_alpha is None else decimal(_rational(top_alpha))
            result.evidence.lower_bound = not (top_value == math.inf or ranked[0][0].divergence.rate() is not None)
            if result.evidence.lower_bound and number(top_value, probability=False) is None:
                # "at least" must be a lower end: an enclosure that does not pin the value down (laws that
                # differ below the working precision) shows its lower end, never its upper one
                result.evidence.achieved = decimal(top_value.a) if top_value.a > 0 else decimal(0)
        for pair, (value, alpha) in ranked:
            if value == math.inf or value.a > rho_iv.b:
                refuted = _refute(program, point, claim, pair, rho, alpha, table, result)
                if refuted.status == Status.REFUTED:
                    return refuted
        scope = f"{len(pairs)} ordered pairs of distinct laws ({spec.universe.relation_name}), every order alpha > 1"
        ties = 0
        for pair, _ in ranked:
            holds, why = rate_at_most(pair.divergence, rho_iv)
            if why == "tie":
                sign, rate = exact_rate_sign(program, point, pair, table, rho)
                if sign is not None and sign < 0:
                    return _refute_exactly(claim, pair, rho, rate, result)
                holds, why = (sign is not None), "the intervals overlap and sympy cannot decide the rate"
                ties += bool(holds)
            if not holds:
                result.message = (f"no violation found, but D_alpha / alpha <= {claim.rho} is not certified for "
                                  f"X={pair.x!r}, X'={pair.x_prime!r}: {why}")
                return result
        result.status = Status.VERIFIED
        result.message = (f"holds on all {scope}; largest D_alpha / alpha found "
                          f"{'at least ' if result.evidence.lower_bound else ''}{result.evidence.achieved}"
                          f" (at alpha = {result.evidence.alpha})"
                          + (f"; tight: {ties} pairs have D_alpha / alpha = {claim.rho} exactly, decided by sympy"
                             if ties else ""))
        if ties:
            result.method += "; exact sympy for ties"
        if ws.options.proofs:
            generalise(result, prove_zcdp(spec, program, claim, point, ws))
        return result


def _largest(pair: Pair) -> tuple[Any, Optional[Fraction]]:
    """The largest D_alpha / alpha found for one pair and its order (None: the limit alpha -> 1)."""
    d = pair.divergence
    if d.infinite is not None:
        return math.inf, Fraction(2)
    value, alpha = largest_rate(d)
    kl = d.kl()
    if d.rate() is None and kl.a > value.b:
        return kl, None
    return value, alpha


def _rational(value: Fraction) -> sympy.Rational:
    return sympy.Rational(value.numerator, value.denominator)


def _key(value: Any) -> float:
    return math.inf if value == math.inf else float(value.b)


def _refute_exactly(claim: Zcdp, pair: Pair, rho: Any, rate: Any, result: PointResult) -> PointResult:
    """A Gaussian release whose rate D_alpha / alpha (constant in alpha) the intervals cannot separate
    from rho and exact sympy finds above it: refuted at alpha = 2 (D_2 = 2 rate > 2 rho), confirmed
    by a strict evaluation of the exact excess."""
    if not positive(rate - rho):
        result.message = (f"a violation decided exactly at X={pair.x!r}, X'={pair.x_prime!r} was not confirmed "
                          f"by a strict {CONFIRM_DIGITS}-digit evaluation")
        return result
    divergence, bound = number(2 * rate, probability=False), number(2 * rho, probability=False)
    if divergence is None or bound is None:
        result.message = f"a violation decided exactly at X={pair.x!r}, X'={pair.x_prime!r} cannot be printed"
        return result
    result.status = Status.REFUTED
    result.evidence.alpha = decimal(2)
    result.witness = Witness(pair.x, pair.x_prime, "order alpha = 2", divergence, bound, quantity="divergence")
    result.message = (f"X={pair.x!r} and X'={pair.x_prime!r} are neighbours; D_alpha / alpha = {rate} for every "
                      f"alpha (Gaussian values), so at alpha = 2, D_alpha(M(X) || M(X')) = {divergence} > rho alpha = "
                      f"({claim.rho}) * 2 = {bound}; the certified intervals cannot separate the two, decided exactly "
                      f"by sympy and confirmed by a strict {CONFIRM_DIGITS}-digit evaluation")
    return result


def _refute(program: Any, point: Point, claim: Zcdp, pair: Pair, rho: Any, alpha: Optional[Fraction], table: Any,
            result: PointResult) -> PointResult:
    """Confirm D_alpha / alpha > rho at an exact order on both laws recomputed at twice the precision
    (``alpha`` None: the KL limit exceeds rho, so orders approaching 1 are tried)."""
    again = fresh(program, point, pair, table)
    rho_fresh = again.backend.num(rho)
    for candidate in ((alpha,) if alpha is not None else NEAR_ONE):
        value = again.value(candidate)
        if value == math.inf or (value / again.backend.num(candidate)).a > rho_fresh.b:
            bound = decimal(rho * _rational(candidate))
            relation, divergence = witnessed(value)
            result.status = Status.REFUTED
            result.witness = Witness(pair.x, pair.x_prime, f"order alpha = {candidate}", divergence, bound,
                                     quantity="divergence")
            cause = f" (an output is possible under X only: {again.infinite!r})" if value == math.inf else ""
            result.message = (f"X={pair.x!r} and X'={pair.x_prime!r} are neighbours; at alpha = {candidate}, "
                              f"D_alpha(M(X) || M(X')) {relation} {divergence}{cause} > rho alpha = ({claim.rho}) * {candidate} "
                              f"= {bound}; confirmed on both laws recomputed at {again.backend.dps} digits")
            return result
    result.message = (f"a violation found at {table.backend.dps} digits (X={pair.x!r}, X'={pair.x_prime!r}) was not "
                      f"confirmed at {again.backend.dps} digits")
    return result
