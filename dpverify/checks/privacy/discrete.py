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

from ...dsl.claims import Claim, Private
from ...dsl.params import Point, point_label, substitute
from ...dsl.spec import Spec
from ...engine.program.backend import IntervalBackend, SympyBackend, exact_sign
from ...engine.loss.pairs import Cell, LossTable
from ...engine.program.reading import distribution
from ...engine.continuous.density_cells import has_densities
from .level import Level
from .proof import Proof, prove_private
from ...evidence import PrivacyEvidence, WitnessLaws
from ...results import PointResult, Status, Witness
from ..witness import CONFIRM_DIGITS, confirm_delta, figure, number, positive, refuted_delta, refuted_ratio
from ..workspace import Workspace
from ...engine.loss.achieved import of_losses
from ...engine.decide.decimals import decimal
from ...engine.program.work import params


class PrivacyCheck:
    kind = "private"

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, Private)

    def run(self, spec: Spec, claim: Private, point: Point, ws: Workspace) -> PointResult:
        from .structural import upgrade  # a proof for every dataset, cross-checked against this point's result
        return upgrade(spec, spec.mechanism, claim, point, ws, check_private(spec, spec.mechanism, claim, point, ws))


def check_private(spec: Spec, program: Any, claim: Private, point: Point, ws: Workspace) -> PointResult:
    """(eps, delta)-DP of ``program`` (the spec's mechanism, or a post-processing of it) on the universe."""
    level = Level(substitute(claim.epsilon, point, "epsilon"), substitute(claim.delta, point, "delta"),
                  sympy.sympify(claim.epsilon))
    table = ws.table(spec, program, point)
    _, left, right = ws.datasets(spec)
    result = PointResult(point_label(point), Status.UNKNOWN, "", evidence=PrivacyEvidence(
                         claimed_epsilon=decimal(level.eps), claimed_delta=decimal(level.delta)),
                         method="exact enumeration, certified intervals")
    if has_densities(table):
        from .density import check_density  # the density path's modules only where densities are released
        from .density_proof import prove_density
        scope = f"neighbouring pairs ({spec.universe.relation_name}), {len(table.laws)} distinct output laws"
        result = check_density(program, point, level, table, left, right, result, scope)
        if result.status == Status.VERIFIED and ws.options.proofs:
            _generalise(result, prove_density(spec, program, claim, point, ws))
        return result
    losses = LossTable(table, left, right)
    result.evidence.datasets, result.evidence.pairs = len(table.datasets), losses.pairs
    result.evidence.distinct_laws, result.evidence.outputs = len(table.laws), len(losses.outputs)
    result.evidence.loss_histogram = losses.loss_histogram()
    scope = (f"{losses.pairs:,} neighbouring pairs ({spec.universe.relation_name}), "
             f"{len(table.laws)} distinct output laws, {len(losses.outputs)} outputs")
    if level.delta == 0:
        result = _pure(program, point, level, table, losses, result, scope)
        if result.status == Status.VERIFIED and ws.options.proofs:
            _generalise(result, prove_private(spec, program, claim, point, table, ws))
        return result
    return _approximate(program, point, level, table, losses, result, scope)


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


def _pure(program: Any, point: Point, level: Level, table: Any, losses: LossTable,
          result: PointResult, scope: str) -> PointResult:
    eps_iv = table.backend.num(level.eps)
    achieved, top = losses.max_loss()
    result.evidence.achieved_epsilon = decimal(achieved)
    if achieved != math.inf and achieved.b <= eps_iv.a:
        result.status = Status.VERIFIED
        result.message = f"holds on all {scope}; achieved epsilon {result.evidence.achieved_epsilon}"
        return result
    if achieved == math.inf or achieved.a > eps_iv.b:
        return _refute(program, point, level, top, table, result)
    # Undecidable by intervals: decide every reaching cell exactly.
    cells = losses.cells_reaching(math.nextafter(float(eps_iv.a), -math.inf) - losses.margin)
    undecided = [c for c in cells if c.infinite or not c.loss.b <= eps_iv.a]
    exact_laws: dict = {}
    tight = 0
    for cell in undecided:
        sign, why = _exact_excess(program, point, level, cell, table, exact_laws)
        if sign is None:
            result.message = why
            return result
        if sign > 0:
            return _refute(program, point, level, cell, table, result, exact=True)
        tight += sign == 0
    result.status = Status.VERIFIED
    if tight:
        result.evidence.achieved_epsilon = decimal(level.eps)
    result.method += "; exact sympy for ties"
    result.message = (f"holds on all {scope}; achieved epsilon {result.evidence.achieved_epsilon}"
                      + (f" (tight: {tight} cells equal {level.e_eps} exactly, decided by sympy)" if tight else ""))
    return result


def _exact_excess(program: Any, point: Point, level: Level, cell: Cell, table: Any,
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
    sign = exact_sign(p - sympy.exp(level.eps) * (q if q is not None else sympy.Integer(0)))
    if sign is None:
        return None, (f"cannot decide whether P(o|X) <= {level.e_eps} P(o|X') for X={cell.x!r}, X'={cell.x_prime!r}, "
                      f"o={cell.output!r}: intervals overlap and sympy could not simplify the difference")
    return sign, ""


def _refute(program: Any, point: Point, level: Level, cell: Optional[Cell], table: Any,
            result: PointResult, exact: bool = False) -> PointResult:
    """Confirm a violating cell independently: both laws recomputed afresh at twice the precision
    (``exact``: the cell was decided by exact sympy, and is confirmed in that reading instead).
    The witness prints the numbers that were compared, each pinned down by the recomputation."""
    if cell is None:
        result.message = "no witness cell was found for a violation (internal inconsistency)"
        return result
    dps = 2 * table.backend.dps
    backend = IntervalBackend(dps)
    law = distribution(program, cell.x, params(point), backend, table.windows)
    law_prime = distribution(program, cell.x_prime, params(point), backend, table.windows)
    if exact:
        return _refute_exactly(program, point, level, cell, table, result, (law, law_prime))
    p, q = law.get(cell.output), law_prime.get(cell.output)
    e_eps = backend.exp(level.eps)
    if p is None:
        result.message = f"the witness did not survive recomputation at {dps} digits (P(o|X) = 0)"
        return result
    if not (p.a > 0 if q is None else (p - e_eps * q).a > 0):
        result.message = f"a violation found at {table.backend.dps} digits was not confirmed at {dps} digits"
        return result
    shown = [number(p), number(q) if q is not None else decimal(0),
             "inf" if q is None else number(p / q, probability=False)]
    if None in shown:
        result.message = (f"a violation at X={cell.x!r}, X'={cell.x_prime!r}, o={cell.output!r} was confirmed at "
                          f"{dps} digits, but its probabilities are not pinned down there (intervals too wide "
                          "to print as a witness)")
        return result
    return _refuted(result, cell, law, law_prime, shown, level, decimal(e_eps), f"confirmed at {dps} digits")


def _refute_exactly(program: Any, point: Point, level: Level, cell: Cell, table: Any, result: PointResult,
                    laws: tuple[dict, dict]) -> PointResult:
    """A cell the intervals could not separate from e^eps and exact sympy found above it: confirmed by
    a strict evaluation of the exact difference at CONFIRM_DIGITS digits, printed from the exact laws."""
    exact = [distribution(program, data, params(point), SympyBackend(), table.windows)
             for data in (cell.x, cell.x_prime)]
    p, q = exact[0].get(cell.output), exact[1].get(cell.output, sympy.Integer(0))
    bound = sympy.exp(level.eps)
    if p is None or not positive(p - bound * q):
        result.message = (f"a violation decided exactly at X={cell.x!r}, X'={cell.x_prime!r}, o={cell.output!r} "
                          f"was not confirmed by a strict {CONFIRM_DIGITS}-digit evaluation")
        return result
    shown = [number(p), number(q), "inf" if q == 0 else number(p / q, probability=False)]
    if None in shown:
        result.message = (f"a violation decided exactly at X={cell.x!r}, X'={cell.x_prime!r}, o={cell.output!r} "
                          "has probabilities sympy cannot evaluate to certified digits")
        return result
    excess = number(p - bound * q, probability=False)
    return _refuted(result, cell, *laws, shown, level, number(bound, probability=False),
                    f"the certified intervals cannot separate the ratio from {level.e_eps}; decided exactly by "
                    f"sympy (P(o|X) - {level.e_eps} P(o|X') = {excess} > 0, confirmed by a strict "
                    f"{CONFIRM_DIGITS}-digit evaluation)")


def _refuted(result: PointResult, cell: Cell, law: dict, law_prime: dict, shown: list, level: Level,
             bound: Optional[str], how: str) -> PointResult:
    p, q, ratio = shown
    result.evidence.witness_laws = side_by_side(law, law_prime)
    return refuted_ratio(result, Witness(cell.x, cell.x_prime, cell.output, p, q, ratio),
                         f"P(o={cell.output!r}|X) = {p} and P(o|X') = {q}", level.e_eps, bound, how)


def side_by_side(law: dict, law_prime: dict) -> WitnessLaws:
    """A figure: the witness pair's two output laws over the union of their outputs (an interval
    too wide to print as a number is shown as its two ends)."""
    outputs = sorted(set(law) | set(law_prime), key=repr)
    return WitnessLaws([repr(o) for o in outputs], [_shown(law[o]) if o in law else "0" for o in outputs],
                       [_shown(law_prime[o]) if o in law_prime else "0" for o in outputs])


def _shown(value: Any) -> str:
    return number(value) or f"[{decimal(value.a)}, {decimal(value.b)}]"


def _approximate(program: Any, point: Point, level: Level, table: Any, losses: LossTable,
                 result: PointResult, scope: str) -> PointResult:
    """(eps, delta): every pair whose divergence the intervals cannot put below delta is decided --
    refuted when certified above (and confirmed afresh), else exactly by sympy."""
    backend = table.backend
    eps, delta = level.eps, level.delta
    eps_iv, delta_iv = backend.num(eps), backend.num(delta)
    achieved, _ = losses.hockey_stick(eps_iv)
    result.evidence.achieved_delta, pinned = figure(achieved)
    result.evidence.achieved_epsilon = decimal(of_losses(losses, delta_iv))
    result.method = "exact enumeration, hockey-stick divergence, certified intervals"
    if achieved.b <= delta_iv.a:
        result.status = Status.VERIFIED
        result.message = (f"holds on all {scope}; achieved delta at the claimed epsilon "
                          f"{'' if pinned else 'at most '}{result.evidence.achieved_delta}")
        return result
    reaching = losses.pairs_reaching(eps_iv, delta_iv)
    above = [pair for value, pair in reaching if value.a > delta_iv.b]
    for pair in above:
        refuted = _refute_delta(program, point, level, pair, table, result)
        if refuted.status == Status.REFUTED:
            return refuted
    if above:
        return refuted  # certified above delta, but not confirmed afresh: its reason is the message
    exact_laws: dict = {}
    for _, pair in reaching:  # every one straddles delta: decide each exactly
        decided = _exact_divergence(program, point, level, pair, table, exact_laws)
        if isinstance(decided, str):
            result.message = decided
            return result
        event, p_event, q_event = decided
        sign = exact_sign(p_event - sympy.exp(eps) * q_event - delta)
        if sign is None:
            result.message = (f"cannot decide whether the hockey-stick divergence of X={pair[0]!r}, "
                              f"X'={pair[1]!r} exceeds delta: intervals overlap and sympy cannot decide")
            return result
        if sign > 0:
            return _refute_delta_exactly(pair, event, p_event, q_event, level, result)
    result.status = Status.VERIFIED
    result.method += "; exact sympy for ties"
    result.message = (f"holds on all {scope}; achieved delta at the claimed epsilon "
                      f"{'' if pinned else 'at most '}{result.evidence.achieved_delta}"
                      + (f" ({len(reaching)} pairs the intervals could not separate from delta, each decided exactly by "
                         "sympy)" if reaching else ""))
    return result


def _exact_divergence(program: Any, point: Point, level: Level, pair: tuple, table: Any,
                      cache: dict) -> Any:
    """(S, P(S|X), P(S|X')) in exact sympy for S = {o : P(o|X) > e^eps P(o|X')} (so the divergence is
    P(S|X) - e^eps P(S|X')), or the reason it cannot be decided."""
    for data in pair:
        if data not in cache:
            cache[data] = distribution(program, data, params(point), SympyBackend(), table.windows)
    law, law_prime = cache[pair[0]], cache[pair[1]]
    event, p_event, q_event = [], sympy.Integer(0), sympy.Integer(0)
    for o, p in law.items():
        q = law_prime.get(o, sympy.Integer(0))
        sign = exact_sign(p - sympy.exp(level.eps) * q)
        if sign is None:
            return (f"cannot decide whether P(o|X) > {level.e_eps} P(o|X') for X={pair[0]!r}, X'={pair[1]!r}, o={o!r} "
                    "(an output of the hockey-stick divergence): intervals overlap and sympy cannot decide")
        if sign > 0:
            event.append(o)
            p_event, q_event = p_event + p, q_event + q
    return sorted(event, key=repr), p_event, q_event


def _refute_delta(program: Any, point: Point, level: Level, pair: tuple, table: Any,
                  result: PointResult) -> PointResult:
    """A pair certified above delta, confirmed afresh at twice the precision on the event it prints."""
    dps = 2 * table.backend.dps
    fresh = IntervalBackend(dps)
    x, x_prime = pair
    law = distribution(program, x, params(point), fresh, table.windows)
    law_prime = distribution(program, x_prime, params(point), fresh, table.windows)
    e_eps = fresh.exp(level.eps)
    event = sorted((o for o, p in law.items() if o not in law_prime or (p - e_eps * law_prime[o]).a > 0), key=repr)
    p_event = sum((law[o] for o in event), fresh.ctx.mpf(0))
    q_event = sum((law_prime[o] for o in event if o in law_prime), fresh.ctx.mpf(0))
    refuted = confirm_delta(result, pair, event, f"for the event S = {event!r}",
                            (p_event, q_event, p_event - e_eps * q_event), fresh.num(level.delta),
                            decimal(level.delta), level.e_eps, (table.backend.dps, dps))
    if refuted.status == Status.REFUTED:
        refuted.evidence.witness_laws = side_by_side(law, law_prime)
    return refuted


def _refute_delta_exactly(pair: tuple, event: list, p_event: sympy.Expr, q_event: sympy.Expr, level: Level,
                          result: PointResult) -> PointResult:
    """A pair straddling delta in intervals and found above it by exact sympy: confirmed by a strict
    evaluation of the exact excess, printed from the exact laws."""
    excess = p_event - sympy.exp(level.eps) * q_event - level.delta
    shown = [number(p_event), number(q_event), number(p_event - sympy.exp(level.eps) * q_event)]
    if not positive(excess) or None in shown:
        result.message = (f"a violation of delta decided exactly (X={pair[0]!r}, X'={pair[1]!r}) was not "
                          f"confirmed by a strict {CONFIRM_DIGITS}-digit evaluation")
        return result
    return refuted_delta(result, pair, event, f"for the event S = {event!r}", shown, decimal(level.delta),
                         level.e_eps, f"the certified intervals cannot separate it from delta; decided exactly by "
                         f"sympy (the excess over delta is {number(excess, probability=False)}, confirmed by a "
                         f"strict {CONFIRM_DIGITS}-digit evaluation)")
