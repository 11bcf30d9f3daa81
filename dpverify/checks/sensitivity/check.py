"""The sensitivity check: Delta(n) of a query, claimed as a formula in the dataset size n.

Derived queries (counts, totals, means, max/min, |linear|, scaled and shifted):

* ``proved`` -- the claim C(n) equals the derived Delta(n) for every integer
  n >= n_min: exact values below the point where both are one rational
  function, then sympy simplifies C - Delta to 0 (:mod:`..engine.eventually`);
  for ``at_most=``, also when C(n) >= Delta(n) everywhere, strictly somewhere
  (flagged *loose*);
* ``refuted`` -- C(k) < Delta(k) at some k: the derivation's maximising pair
  at size k, re-confirmed by evaluating the query afresh on both datasets and
  re-checking that they are neighbours; for ``equals=``, also C(k) > Delta(k)
  (the words say *equal*): the pair attaining Delta(k) is the witness, and a
  second method (z3 over symbolic datasets, or enumeration of every pair of
  size k) confirms that no pair reaches C(k) -- without it, ``unknown``.

Other queries are measured (:mod:`..engine.sensitivity_search`): exact
enumeration of the universe at its sizes, and z3 over symbolic datasets at
sizes up to ``Z3_MAX_N``; the claim is then at best ``verified`` (it holds at
the sizes checked), never ``proved``.
"""
from __future__ import annotations

import re
from typing import Any

import sympy

from ...dsl.claims import Claim, Sensitivity
from ...dsl.params import Point, point_label
from ...dsl.queries import Finite
from ...dsl.spec import Spec
from ...dsl.universe import Neighbours
from ...engine.program.backend import exact_sign
from ...engine.decide.eventually import Undecided, compare, value_at
from ...engine.sensitivity.derive import N, Derivation, NotDerivable, derive
from ...engine.decide.smt import SafetyLimit
from ...errors import SpecError
from ...evidence import SensitivityEvidence
from ...results import PointResult, Status
from .context import Context
from .measure import enumerated, measured, mechanism_note, refute_loose
from .refute import are_neighbours, exceeding
from ..workspace import Workspace


def context(spec: Spec, claim: Sensitivity) -> Context:
    """Resolve the relation, the record domain and the candidates of a claim (SpecError if missing)."""
    universe = spec.universe
    relation = claim.neighbours if claim.neighbours is not None else getattr(universe, "neighbours", None)
    if relation is None:
        raise SpecError("sensitivity: the claim names no neighbour relation and the spec has no universe",
                        "pass neighbours=dp.REPLACE_ONE (or ADD_REMOVE, LABEL_ONLY) to dp.sensitivity")
    domain = claim.query.domain
    if domain is None:
        if universe is None:
            raise SpecError("sensitivity: the query has no domain= and the spec has no universe",
                            "declare the record domain on the query, e.g. dp.mean(f, domain=dp.interval(0, 1))")
        domain = Finite(universe.records)
    elif universe is not None:
        outside = [r for r in universe.records
                   if (r not in domain.records if isinstance(domain, Finite) else r not in domain)]
        if outside:
            raise SpecError(f"sensitivity: the universe has records outside the query's domain, e.g. "
                            f"{outside[0]!r}", "make the query's domain= cover every record of the universe")
    if relation is Neighbours.LABEL_ONLY and isinstance(domain, Finite) and not all(
            isinstance(r, tuple) and len(r) == 2 for r in domain.records):
        raise SpecError("sensitivity: label-only neighbours need records (x, y)",
                        "build the domain with dp.labelled(xs, labels)")
    claimed = claim.bound.subs(claim.n, N) if claim.n is not None else claim.bound
    return Context(claim.query, relation, domain, claim.candidates or (None,), universe, claimed)


class SensitivityCheck:
    kind = "sensitivity"

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, Sensitivity)

    def run(self, spec: Spec, claim: Sensitivity, point: Point, ws: Workspace) -> PointResult:
        ctx = context(spec, claim)
        result = PointResult(point_label(point), Status.UNKNOWN, "", method="sensitivity derived with sympy",
                             evidence=SensitivityEvidence(claimed=str(ctx.claimed)))
        try:
            derivation = derive(ctx.query, ctx.relation, ctx.domain, ctx.candidates)
        except NotDerivable as why:
            result.method = "sensitivity measured: exact enumeration and z3"
            return measured(ctx, claim, result, str(why))
        except SafetyLimit as exc:
            result.message = f"undecided: {exc}"
            return result
        try:
            return _derived(spec, ctx, claim, derivation, result)
        except SafetyLimit as exc:
            result.status, result.message = Status.UNKNOWN, f"undecided: {exc}"
            return result


def _relation_name(relation: Any) -> str:
    return relation.value if isinstance(relation, Neighbours) else getattr(relation, "__name__", "custom")


def _derived(spec: Spec, ctx: Context, claim: Sensitivity, d: Derivation, result: PointResult) -> PointResult:
    n0 = d.n_min if claim.n_min is None else claim.n_min
    if n0 < d.n_min:
        raise SpecError(f"sensitivity: n_min={n0}, but under {_relation_name(ctx.relation)} the query has "
                        f"neighbouring pairs (a defined value on both sides) only from n = {d.n_min}",
                        f"use n_min={d.n_min}")
    size = claim.n if claim.n is not None else N

    def show(expr: Any) -> str:
        """An expression in the claim's own size symbol (1/m rather than 1/n when the claim says m)."""
        return str(sympy.sympify(expr).subs(N, size))
    texts = [re.sub(r"\bn\b", str(size), text) for text, _ in d.steps]
    steps = "; ".join(f"{text}: {show(expr)}" for text, (_, expr) in zip(texts, d.steps))
    ev = result.evidence
    ev.derived, ev.n_min, ev.relation = show(d.expr), n0, _relation_name(ctx.relation)
    ev.steps = [[text, show(expr)] for text, (_, expr) in zip(texts, d.steps)]
    ev.claimed = show(ctx.claimed)
    head = f"derived Delta({size}) = {show(d.expr)} ({_relation_name(ctx.relation)}, {size} >= {n0}) [{steps}]"
    try:
        cmp = compare(ctx.claimed, d.expr, N, n0)
    except Undecided as err:
        result.message = f"{head}; cannot compare the claim {show(ctx.claimed)} with it: {err}"
        return result
    cross = _cross_check(ctx, d, n0)
    if cross.startswith("MISMATCH"):
        result.message = f"{head}; internal inconsistency, not trusted: {cross}"
        return result
    if cmp.below is not None:
        return _refute(ctx, d, cmp.below, result, head)
    if cmp.above is not None and claim.exact:
        k = cmp.above
        pair = d.witness(k)
        return refute_loose(ctx, k, d.value(k), None if pair is None else pair[:3], result, head, derived=True)
    if claim.exact:
        unattained = _unattained(ctx, d, n0)
        if unattained:
            result.message = (f"{head}; the claim {show(ctx.claimed)} equals the derived value, but {unattained}, "
                              "so the derived value is only an upper bound and equality is not proved")
            return result
    how = (f"C - Delta simplifies to 0 for {size} >= {cmp.tail_start}" if cmp.tail_identity
           else f"C - Delta is one rational function of constant sign for {size} >= {cmp.tail_start}")
    if cmp.tail_start > n0:
        below = f"{n0}..{cmp.tail_start - 1}" if cmp.tail_start - 1 > n0 else f"{n0}"
        how += f", compared exactly at {size} = {below}"
    result.status = Status.PROVED
    if cmp.above is not None:
        k = cmp.above
        exact, claimed = d.value(k), value_at(ctx.claimed, N, k)
        result.evidence.loose = {"n": k, "claimed": str(claimed), "exact": str(exact)}
        result.message = (f"{head}; the claim {show(ctx.claimed)} holds but is loose: exact value "
                          f"{show(d.expr)} (at {size} = {k}: claimed {claimed}, exact {exact}); {how}")
    else:
        result.message = f"{head}; the claim {show(ctx.claimed)} equals it for every {size} >= {n0}: {how}"
    result.message += cross + mechanism_note(spec, ctx.query)
    return result


def _unattained(ctx: Context, d: Derivation, n0: int) -> str:
    """Why the derived Delta(n0) is not shown attained ('' when a neighbouring pair recomputes to it):
    an ``equals=`` claim needs the value reached, not only bounded."""
    if exact_sign(d.value(n0)) == 0:
        return ""  # a maximum of |differences| >= 0 that is 0 is attained by any pair
    pair = d.witness(n0)
    if pair is None:
        return f"no pair attaining it at n = {n0} was located"
    x, x_prime, candidate, _ = pair
    args = () if candidate is None else (candidate,)
    change = abs(ctx.query(x, *args) - ctx.query(x_prime, *args))
    if not are_neighbours(ctx.relation, x, x_prime) or exact_sign(sympy.sympify(change) - d.value(n0)) != 0:
        return f"the pair {x!r}, {x_prime!r} built for n = {n0} does not recompute to it"
    return ""


def _cross_check(ctx: Context, d: Derivation, n0: int) -> str:
    """Compare the derivation with exact enumeration of the spec's universe, where both apply."""
    if ctx.universe is None or not isinstance(ctx.domain, Finite):
        return ""
    if set(ctx.universe.records) != set(ctx.domain.records):
        return ""
    found = enumerated(ctx, n0)
    if found is None:
        return ""
    for k, f in sorted(found.items()):
        if exact_sign(sympy.sympify(f.value) - d.value(k)) != 0:
            return f"MISMATCH at n = {k}: enumeration gives {f.value}, the derivation {d.value(k)}"
    sizes = ", ".join(str(k) for k in sorted(found))
    return f"; agrees with exact enumeration of the universe at n = {sizes}"


def _refute(ctx: Context, d: Derivation, k: int, result: PointResult, head: str) -> PointResult:
    claimed = value_at(ctx.claimed, N, k)
    exact = d.value(k)
    pair = d.witness(k)
    if pair is None:
        result.message = (f"{head}; the claim {ctx.claimed} is below it at n = {k} ({claimed} < {exact}), "
                          "but no witness pair could be built for that size")
        return result
    return exceeding(ctx, result, k, pair[:3], claimed, where=f"{_relation_name(ctx.relation)}, n = {k}",
                     unconfirmed=f"{head}; a witness at n = {k} was not confirmed",
                     tail=f"confirmed by recomputing the query on both; {head}", exact=exact)


__all__ = ["Context", "SensitivityCheck", "context"]
