"""Sensitivity by measurement, for the sensitivity check: enumeration, z3, notes.

Used where no derivation applies (a ``dp.query(fn)``, a sum of a max and a
mean...) and, for derived queries, to cross-check the derivation against the
universe and to confirm that no pair reaches an ``equals=`` claim above the true
value.  A refuting pair is confirmed independently of how it was found, by
:mod:`.refute`.
"""
from __future__ import annotations

from typing import Any, Optional

import sympy

from ...dsl.queries import Abs, Extreme, Interval, Linear, Opaque, Query
from ...dsl.spec import Spec
from ...dsl.universe import Neighbours, Universe
from ...engine.program.backend import IntervalBackend, exact_sign
from ...engine.program.enumerate import Runner, Session
from ...engine.decide.eventually import value_at
from ...engine.program.primitives import derived_notes
from ...engine.sensitivity.derive import N
from ...engine.sensitivity.search import (Found, NotEncodable, TooLarge, enumerate_max, z3_interval_search,
                                         z3_search)
from ...engine.decide.smt import SafetyLimit
from ...errors import DpverifyError, SpecError
from ...results import PointResult, Status
from ...engine.program.work import params
from .context import Context
from .refute import are_neighbours, exceeding, refuted, values


Z3_MAX_N = 8
"""z3 attacks a claim at every size up to this one that the universe does not enumerate."""
DEFAULT_SIZES = 3
"""Sizes enumerated (from n_min) when the spec has no universe."""


def _opaque(query: Query) -> bool:
    return isinstance(query, Opaque) or any(_opaque(c) for c in query.children())


def enumerated(ctx: "Context", n0: int) -> Optional[dict[int, Found]]:
    """Exact max |q(X) - q(X')| at each size n >= n0 of the universe (None: nothing enumerable)."""
    if ctx.records is None:
        return None
    universe = ctx.universe
    sizes = [k for k in universe.sizes if k >= n0] if universe is not None else \
        list(range(n0, n0 + DEFAULT_SIZES))
    symmetric = not _opaque(ctx.query) or bool(universe is not None and universe.symmetric)
    found: dict[int, Found] = {}
    if not isinstance(ctx.relation, Neighbours):
        if universe is None:
            return None
        whole = Universe(ctx.records, universe.sizes, ctx.relation, universe.symmetric)
        return {k: f for k, f in _enumerate(ctx, whole).items() if k >= n0}
    for k in sizes:
        pair_sizes = (k - 1, k) if ctx.relation is Neighbours.ADD_REMOVE else (k,)
        part = _enumerate(ctx, Universe(ctx.records, pair_sizes, ctx.relation, symmetric))
        if k in part:
            found[k] = part[k]
    return found


def _enumerate(ctx: "Context", universe: Universe) -> dict[int, Found]:
    try:
        return enumerate_max(ctx.query, universe, ctx.candidates)
    except TooLarge:  # too large to enumerate at this size: left to z3
        return {}
    except SpecError:
        raise
    except Exception as exc:  # the spec's query failed on one of the datasets: say so, never skip the size
        sizes = ", ".join(map(str, universe.sizes))
        raise SpecError(f"sensitivity: the query raised {type(exc).__name__}: {exc} on a dataset of size {sizes}",
                        "make the query defined on every dataset of the sizes checked, or raise n_min") from None


def mechanism_note(spec: Spec, query: Query) -> str:
    """Say so when the spec's mechanism derives its exponential-mechanism Delta from this query."""
    if spec.mechanism is None or spec.universe is None or not spec.universe.sizes:
        return ""
    data = (spec.universe.records[0],) * spec.universe.sizes[-1]
    session = Session(IntervalBackend(15))
    kwargs = session.convert(params(spec.points[0]))
    try:
        Runner(session).distribution(lambda: spec.mechanism(data, **kwargs))  # type: ignore[misc]
    except (DpverifyError, Exception):  # the note is a courtesy; the privacy check reports failures
        return ""
    for used, note in derived_notes(session):
        if same_sensitivity(used, query):
            return f"; used by the mechanism: {spec.name} omits sensitivity= and takes {note}"
    return ""


def same_sensitivity(a: Query, b: Query) -> bool:
    """a = +-b + c (same terms, same aggregations), so that a and b have the same sensitivity."""
    if a is b:
        return True
    if type(a) is not type(b) or abs(a.coef) != abs(b.coef):
        return False
    if isinstance(a, Linear):
        return [(c * a.coef, m, t) for c, m, t in a.parts] in (
            [(c * b.coef, m, t) for c, m, t in b.parts], [(-c * b.coef, m, t) for c, m, t in b.parts])
    if isinstance(a, Extreme):
        return a.term is b.term and a.largest == b.largest  # type: ignore[attr-defined]
    if isinstance(a, Abs):
        return a.inner is b.inner  # type: ignore[attr-defined]
    return False


def measured(ctx: "Context", claim: Any, result: PointResult, why: str) -> PointResult:
    """Enumerate the universe and attack the claim with z3 at further sizes."""
    head = f"not derived ({why})"
    try:
        return _measured(ctx, claim, result, head)
    except SafetyLimit as exc:
        result.message = f"{head}; {exc}"
        return result


def _measured(ctx: "Context", claim: Any, result: PointResult, head: str) -> PointResult:
    n0 = claim.n_min or (2 if ctx.relation is Neighbours.ADD_REMOVE else 1)
    found = enumerated(ctx, n0)
    if found is None:
        result.message = f"{head}; the record domain is not finite, so nothing can be enumerated"
        return result
    held, loose, notes = [], [], []
    first_loose: Optional[Found] = None
    for k, f in sorted(found.items()):
        claimed = value_at(ctx.claimed, N, k)
        sign = exact_sign(claimed - sympy.sympify(f.value))
        if sign is not None and sign < 0:
            return _refuted(ctx, f.x, f.x_prime, f.candidate, claimed, k, result, f"{head}; exact enumeration")
        held.append(k)
        if sign != 0:
            loose.append(f"n = {k}: exact {f.value}")
            first_loose = first_loose or f
    if claim.exact and first_loose is not None:
        f = first_loose
        return refute_loose(ctx, f.size, f.value, (f.x, f.x_prime, f.candidate), result,
                            f"{head}; exact enumeration of the universe", derived=False)
    result.evidence.enumerated = {str(k): str(f.value) for k, f in sorted(found.items())}
    z3_sizes = []
    if isinstance(ctx.relation, Neighbours) and not _opaque(ctx.query):
        for k in range(n0, Z3_MAX_N + 1):
            if k in found:
                continue
            claimed = value_at(ctx.claimed, N, k)
            try:
                answer, detail = z3_search(ctx.query, ctx.records, ctx.relation, k, ctx.candidates, claimed)
                if answer == "sat":
                    return _refuted(ctx, *detail, claimed, k, result, f"{head}; z3 over symbolic datasets")
                if answer == "unknown":
                    notes.append(detail)
                    continue
                z3_sizes.append(k)
                attained, _ = z3_search(ctx.query, ctx.records, ctx.relation, k, ctx.candidates, claimed,
                                        strict=False)
                if attained == "unknown" and claim.exact:
                    result.message = (f"{head}; z3 shows no pair of size {k} exceeds {claimed} but cannot tell "
                                      f"whether one attains it, which equals= needs; {EXACT_WORDS}")
                    return result
                if attained == "unsat":
                    loose.append(f"n = {k}: no pair attains {claimed} (z3)")
                    if claim.exact:
                        result.message = (f"{head}; z3 over symbolic datasets: no neighbouring pair of size {k} "
                                          f"changes q by the claimed {claimed}, so the claim is loose there, but "
                                          "the exact value was not computed, so it is not refuted; " + EXACT_WORDS)
                        return result
            except NotEncodable as err:
                notes.append(f"z3 not applicable: {err}")
                break
    elif not isinstance(ctx.relation, Neighbours) or _opaque(ctx.query):
        notes.append("z3 not applicable: the query contains a plain Python function")
    if not held and not z3_sizes:
        result.message = f"{head}; no size could be checked" + "".join(f"; {n}" for n in notes)
        return result
    result.status = Status.VERIFIED
    parts = [head]
    if held:
        parts.append(f"exact enumeration of the universe at n = {', '.join(map(str, held))}: "
                     + ", ".join(f"Delta({k}) = {found[k].value}" for k in held))
    if z3_sizes:
        parts.append(f"z3 over symbolic datasets ({len(ctx.records)} records as bounded integers, the "
                     f"relation as constraints): no pair changes q by more than the claim at n = "
                     f"{', '.join(map(str, z3_sizes))}")
    parts.append(f"the claim {ctx.claimed} holds at these sizes (not proved for every n)")
    if loose:
        parts.append("loose: " + "; ".join(loose))
    result.message = "; ".join(parts + notes)
    return result


EXACT_WORDS = "equals= means exactly equal: write at_most= for an upper bound"


def refute_loose(ctx: "Context", k: int, exact: Any, pair: Optional[tuple], result: PointResult, head: str,
                 derived: bool) -> PointResult:
    """An ``equals=`` claim above the true sensitivity at size ``k``: refuted when the pair attaining
    the exact value ``exact`` recomputes to it and a second method confirms that no pair of size k
    reaches the claim; otherwise ``unknown`` with the reason."""
    claimed = value_at(ctx.claimed, N, k)
    loose = f"the claim {ctx.claimed} is loose at n = {k}: the sensitivity there is {exact}, not {claimed}"
    if pair is None:
        result.message = (f"{head}; {loose}, but no pair attaining it could be built, so it is not refuted; "
                          f"{EXACT_WORDS}")
        return result
    x, x_prime, candidate = pair
    args = () if candidate is None else (candidate,)
    value, value_prime = ctx.query(x, *args), ctx.query(x_prime, *args)
    change = abs(value - value_prime)
    if not are_neighbours(ctx.relation, x, x_prime) or exact_sign(sympy.sympify(change) - sympy.sympify(exact)) != 0:
        result.message = (f"{head}; {loose}, but the pair {x!r}, {x_prime!r} does not recompute to it "
                          f"(internal inconsistency, not trusted); {EXACT_WORDS}")
        return result
    confirmed, how = _nothing_reaches(ctx, k, claimed, derived)
    if not confirmed:
        result.message = f"{head}; {loose}, but {how}, so it is not refuted; {EXACT_WORDS}"
        return result
    return refuted(result, k, pair, (value, value_prime), claimed, exact=exact, message=(
        f"the sensitivity at n = {k} is {exact}, not the claimed {claimed}: X={x!r} and X'={x_prime!r} "
        f"are neighbours, {values(candidate, value, value_prime)}: |difference| = {change} (recomputed), "
        f"and {how}; {EXACT_WORDS}; {head}"))


def _nothing_reaches(ctx: "Context", k: int, claimed: Any, derived: bool) -> tuple[bool, str]:
    """Whether a method other than the one that found the exact value shows that no neighbouring
    pair of size k changes q by ``claimed`` or more: z3 over symbolic datasets, or (for a derived
    value) exact enumeration of every pair of size k."""
    if isinstance(ctx.domain, Interval):
        answer, why = z3_interval_search(ctx.query, ctx.domain.lo, ctx.domain.hi, ctx.relation, k, ctx.candidates,
                                         claimed)
        if answer == "unsat":
            return True, (f"z3 over records in {ctx.domain.describe()} shows that no neighbouring pair of size {k} "
                          f"reaches {claimed}")
        return False, f"no second method confirms it ({why})"
    if ctx.records is None:
        return False, "no second method covers this record domain"
    if isinstance(ctx.relation, Neighbours) and not _opaque(ctx.query):
        try:
            answer, _ = z3_search(ctx.query, ctx.records, ctx.relation, k, ctx.candidates, claimed, strict=False)
        except NotEncodable:
            answer = "n/a"
        if answer == "unsat":
            return True, f"z3 over symbolic datasets shows that no neighbouring pair of size {k} reaches {claimed}"
        if answer == "sat":
            return False, f"z3 finds a pair of size {k} reaching {claimed} (internal inconsistency, not trusted)"
    if derived and isinstance(ctx.relation, Neighbours):
        sizes = (k - 1, k) if ctx.relation is Neighbours.ADD_REMOVE else (k,)
        symmetric = not _opaque(ctx.query)
        part = _enumerate(ctx, Universe(ctx.records, sizes, ctx.relation, symmetric)).get(k)
        if part is not None and exact_sign(sympy.sympify(part.value) - claimed) == -1:
            return True, f"exact enumeration of every neighbouring pair of size {k} gives {part.value}"
    return False, "no second method could confirm that no pair reaches the claim"


def _refuted(ctx: "Context", x: tuple, x_prime: tuple, candidate: Any, claimed: Any, k: int,
             result: PointResult, how: str) -> PointResult:
    return exceeding(ctx, result, k, (x, x_prime, candidate), claimed, where=f"n = {k}",
                     unconfirmed=f"{how} found a pair at n = {k} that was not confirmed",
                     tail=f"found by {how}, confirmed by recomputing the query on both", show_change=True)


__all__ = ["Z3_MAX_N", "enumerated", "measured", "mechanism_note", "refute_loose", "same_sensitivity"]
