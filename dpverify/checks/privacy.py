"""The privacy check: (epsilon, delta)-DP over every neighbouring pair of a finite universe.

Pure DP (delta = 0): the achieved epsilon is the largest privacy loss
ln P(o|X) - ln P(o|X') over ordered neighbours and outputs.  The claim is
``verified`` when the certified achieved epsilon is at most the claimed one;
cells whose interval straddles the claim (a tight claim, as for randomized
response) are decided exactly with sympy.  ``refuted`` only after the witness
is recomputed independently at twice the precision.

Approximate DP (delta > 0): the achieved delta is the hockey-stick divergence
max over pairs of sum_o max(0, P(o|X) - e^epsilon P(o|X')); the achieved
epsilon is the smallest epsilon' whose divergence is at most the claimed delta.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import sympy

from ..dsl.claims import Claim, Private
from ..dsl.params import Point, point_label, substitute
from ..dsl.spec import Spec
from ..engine.backend import IntervalBackend, SympyBackend, exact_sign
from ..engine.loss import Cell, LossTable, hockey_stick_pair
from ..engine.reading import distribution
from .density_cells import has_densities
from .privacy_density import check_density
from .privacy_density_proof import prove_density
from .privacy_proof import Proof, prove_private
from .result import PointResult, Status, Witness
from .workspace import Workspace, decimal, params


class PrivacyCheck:
    kind = "private"

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, Private)

    def run(self, spec: Spec, claim: Private, point: Point, ws: Workspace) -> PointResult:
        return check_private(spec, spec.mechanism, claim, point, ws)


def check_private(spec: Spec, program: Any, claim: Private, point: Point, ws: Workspace) -> PointResult:
    """(eps, delta)-DP of ``program`` (the spec's mechanism, or a post-processing of it) on the universe."""
    eps = substitute(claim.epsilon, point, "epsilon")
    delta = substitute(claim.delta, point, "delta")
    table = ws.table(spec, program, point)
    _, left, right = ws.datasets(spec)
    result = PointResult(point_label(point), Status.UNKNOWN, "", claimed_epsilon=decimal(eps),
                         claimed_delta=decimal(delta), method="exact enumeration, certified intervals")
    if has_densities(table):
        scope = f"neighbouring pairs ({spec.universe.relation_name}), {len(table.laws)} distinct output laws"
        result = check_density(program, point, eps, delta, table, left, right, result, scope)
        if result.status == Status.VERIFIED and ws.options.proofs:
            _generalise(result, prove_density(spec, program, claim, point, ws))
        return result
    losses = LossTable(table, left, right)
    result.figures = {"datasets": len(table.datasets), "pairs": losses.pairs,
                      "distinct_laws": len(table.laws), "outputs": len(losses.outputs),
                      "loss_histogram": losses.loss_histogram()}
    scope = (f"{losses.pairs:,} neighbouring pairs ({spec.universe.relation_name}), "
             f"{len(table.laws)} distinct output laws, {len(losses.outputs)} outputs")
    if delta == 0:
        result = _pure(program, point, eps, table, losses, result, scope)
        if result.status == Status.VERIFIED and ws.options.proofs:
            _generalise(result, prove_private(spec, program, claim, point, table, ws))
        return result
    return _approximate(program, point, eps, delta, table, losses, result, scope)


def _generalise(result: PointResult, proof: Optional[Proof]) -> None:
    """Upgrade a grid verification with a proof for every eps, or report why there is none."""
    if proof is None:
        return
    if proof.status == Status.PROVED:
        result.status = Status.PROVED
        result.method = f"exact enumeration for achieved eps; proof for every eps ({proof.method})"
        result.message = f"{proof.message}; on this grid point {result.message}"
    elif proof.status == Status.REFUTED:
        result.status = Status.REFUTED
        result.witness = proof.witness
        result.method = "decision procedure over every eps, confirmed in certified intervals"
        result.message = f"holds at this grid point but {proof.message}"
    else:
        result.message = f"{result.message}; {proof.message}"


def _pure(program: Any, point: Point, eps: sympy.Expr, table: Any, losses: LossTable,
          result: PointResult, scope: str) -> PointResult:
    eps_iv = table.backend.num(eps)
    achieved, top = losses.max_loss()
    result.achieved_epsilon = decimal(achieved)
    if achieved != math.inf and achieved.b <= eps_iv.a:
        result.status = Status.VERIFIED
        result.message = f"holds on all {scope}; achieved epsilon {result.achieved_epsilon}"
        return result
    if achieved == math.inf or achieved.a > eps_iv.b:
        return _refute(program, point, eps, top, table, result)
    # Undecidable by intervals: decide every reaching cell exactly.
    cells = losses.cells_reaching(math.nextafter(float(eps_iv.a), -math.inf) - losses.margin)
    undecided = [c for c in cells if c.infinite or not c.loss.b <= eps_iv.a]
    exact_laws: dict = {}
    tight = 0
    for cell in undecided:
        sign, why = _exact_excess(program, point, eps, cell, table, exact_laws)
        if sign is None:
            result.message = why
            return result
        if sign > 0:
            return _refute(program, point, eps, cell, table, result, exact=True)
        tight += sign == 0
    result.status = Status.VERIFIED
    if tight:
        result.achieved_epsilon = decimal(eps)
    result.method += "; exact sympy for ties"
    result.message = (f"holds on all {scope}; achieved epsilon {result.achieved_epsilon}"
                      + (f" (tight: {tight} cells equal e^eps exactly, decided by sympy)" if tight else ""))
    return result


def _exact_excess(program: Any, point: Point, eps: sympy.Expr, cell: Cell, table: Any,
                  cache: dict) -> tuple[Optional[int], str]:
    """Sign of P(o|X) - e^eps P(o|X') in exact sympy arithmetic, or (None, why it cannot be decided).

    Both readings hand the program the same exact values, so they give the same
    outputs: a cell's output missing from the exact reading where the interval
    reading has it (or the reverse) is an internal inconsistency, never a tie.
    """
    laws = []
    for data in (cell.x, cell.x_prime):
        if data not in cache:
            cache[data] = distribution(program, data, params(point), SympyBackend(), table.windows)
        laws.append(cache[data])
    p, q = laws[0].get(cell.output), laws[1].get(cell.output)
    for name, exact, certified, data in (("P(o|X)", p, cell.p, cell.x), ("P(o|X')", q, cell.p_prime, cell.x_prime)):
        if (exact is None) != (certified is None):
            return None, (f"internal inconsistency: output {cell.output!r} is {'absent from' if exact is None else 'in'} "
                          f"the exact reading of {data!r} but {'in' if exact is None else 'absent from'} the "
                          f"certified one ({name})")
    sign = exact_sign(p - sympy.exp(eps) * (q if q is not None else sympy.Integer(0)))
    if sign is None:
        return None, (f"cannot decide whether P(o|X) <= e^eps P(o|X') for X={cell.x!r}, X'={cell.x_prime!r}, "
                      f"o={cell.output!r}: intervals overlap and sympy could not simplify the difference")
    return sign, ""


def _refute(program: Any, point: Point, eps: sympy.Expr, cell: Optional[Cell], table: Any,
            result: PointResult, exact: bool = False) -> PointResult:
    """Confirm a violating cell by recomputing both laws afresh at twice the precision."""
    if cell is None:
        result.message = "no witness cell was found for a violation (internal inconsistency)"
        return result
    dps = 2 * table.backend.dps
    backend = IntervalBackend(dps)
    law = distribution(program, cell.x, params(point), backend, table.windows)
    law_prime = distribution(program, cell.x_prime, params(point), backend, table.windows)
    p, q = law.get(cell.output), law_prime.get(cell.output)
    e_eps = backend.exp(eps)
    if p is None:
        result.message = f"the witness did not survive recomputation at {dps} digits (P(o|X) = 0)"
        return result
    if q is None:
        confirmed, ratio = p.a > 0, "inf"
    else:
        confirmed = (p - e_eps * q).a > 0 or exact
        ratio = decimal(p / q)
    if not confirmed:
        result.message = f"a violation found at {table.backend.dps} digits was not confirmed at {dps} digits"
        return result
    result.status = Status.REFUTED
    result.witness = Witness(cell.x, cell.x_prime, cell.output, decimal(p),
                             decimal(q) if q is not None else decimal(0), ratio)
    result.figures["witness_laws"] = side_by_side(law, law_prime)
    bound = decimal(e_eps)
    result.message = (f"X={cell.x!r} and X'={cell.x_prime!r} are neighbours; P(o={cell.output!r}|X) = "
                      f"{decimal(p)} and P(o|X') = {decimal(q) if q is not None else '0'}, ratio {ratio} > "
                      f"e^eps = {bound}; confirmed at {dps} digits")
    return result


def side_by_side(law: dict, law_prime: dict) -> dict[str, list]:
    """A figure: the witness pair's two output laws over the union of their outputs."""
    outputs = sorted(set(law) | set(law_prime), key=repr)
    return {"outputs": [repr(o) for o in outputs],
            "p": [decimal(law[o]) if o in law else "0" for o in outputs],
            "p_prime": [decimal(law_prime[o]) if o in law_prime else "0" for o in outputs]}


def _approximate(program: Any, point: Point, eps: sympy.Expr, delta: sympy.Expr, table: Any,
                 losses: LossTable, result: PointResult, scope: str) -> PointResult:
    backend = table.backend
    eps_iv, delta_iv = backend.num(eps), backend.num(delta)
    achieved, pair = losses.hockey_stick(eps_iv)
    result.achieved_delta = decimal(achieved)
    result.achieved_epsilon = _smallest_epsilon(losses, delta_iv)
    result.method = "exact enumeration, hockey-stick divergence, certified intervals"
    if achieved.b <= delta_iv.a:
        result.status = Status.VERIFIED
        result.message = f"holds on all {scope}; achieved delta at the claimed epsilon {result.achieved_delta}"
        return result
    if pair is None:
        result.message = "no pair to test"
        return result
    x, x_prime = pair
    if achieved.a <= delta_iv.b:  # straddles: decide this pair exactly
        law = distribution(program, x, params(point), SympyBackend(), table.windows)
        law_prime = distribution(program, x_prime, params(point), SympyBackend(), table.windows)
        excess = sum((sympy.Max(0, p - sympy.exp(eps) * law_prime.get(o, 0)) for o, p in law.items()),
                     sympy.Integer(0)) - delta
        sign = exact_sign(excess)
        if sign is None or sign <= 0:
            result.status = Status.VERIFIED if sign is not None else Status.UNKNOWN
            result.message = (f"holds on all {scope} (tight, decided by sympy)" if sign is not None
                              else f"cannot decide the hockey-stick divergence of X={x!r}, X'={x_prime!r}")
            return result
    dps = 2 * backend.dps
    fresh = IntervalBackend(dps)
    law = distribution(program, x, params(point), fresh, table.windows)
    law_prime = distribution(program, x_prime, params(point), fresh, table.windows)
    e_eps = fresh.exp(eps)
    value = hockey_stick_pair(fresh.ctx, law, law_prime, e_eps)
    if not value.a > fresh.num(delta).b and achieved.a > delta_iv.b:
        result.message = f"a violation found at {backend.dps} digits was not confirmed at {dps} digits"
        return result
    event = sorted((o for o, p in law.items() if o not in law_prime or (p - e_eps * law_prime[o]).a > 0), key=repr)
    p_event = sum((law[o] for o in event), fresh.ctx.mpf(0))
    q_event = sum((law_prime[o] for o in event if o in law_prime), fresh.ctx.mpf(0))
    result.status = Status.REFUTED
    result.witness = Witness(x, x_prime, event, decimal(p_event), decimal(q_event))
    result.figures["witness_laws"] = side_by_side(law, law_prime)
    result.message = (f"X={x!r} and X'={x_prime!r}: P(S|X) - e^eps P(S|X') = {decimal(value)} > delta = "
                      f"{decimal(delta)} for the event S = {event!r}; confirmed at {dps} digits")
    return result


def _smallest_epsilon(losses: LossTable, delta_iv: Any) -> str:
    """The smallest epsilon' >= 0 with hockey-stick divergence <= delta (a figure, by bisection)."""
    ctx = losses.ctx
    if losses.hockey_stick(ctx.mpf(0))[0].b <= delta_iv.a:
        return decimal(ctx.mpf(0))
    top, _ = losses.max_loss()
    if top == math.inf:
        hi = ctx.mpf(1)
        while losses.hockey_stick(hi)[0].a > delta_iv.b and hi.a < 1e6:
            hi *= 2
        if losses.hockey_stick(hi)[0].a > delta_iv.b:
            return "inf"
    else:
        hi = ctx.mpf(top.b)
    lo = ctx.mpf(0)
    for _ in range(140):
        mid = (lo + hi) / 2
        if losses.hockey_stick(mid)[0].b <= delta_iv.a:
            hi = mid
        else:
            lo = mid
    return decimal(hi)
