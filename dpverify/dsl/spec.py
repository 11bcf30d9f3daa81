"""A spec: one mechanism program, its universe, its parameter grid and its claims.

A spec is an immutable value and computes nothing (description apart from
analysis, as dp_accounting separates a DpEvent from its accountant).  It is
validated eagerly when built, so a malformed spec fails at import with an
error that names the argument and the fix.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Optional

import sympy

from ..errors import SpecError, call_help
from .claims import Claim
from .params import GridLike, Point, grid as normalise_grid
from .universe import Universe


@dataclass(frozen=True)
class Spec:
    """What a spec file declares; build it with :func:`spec`."""

    name: str
    mechanism: Optional[Callable[..., Any]]
    universe: Optional[Universe]
    points: tuple[Point, ...]
    claims: tuple[Claim, ...]
    doc: str

    def points_for(self, claim: Claim) -> tuple[Point, ...]:
        """The grid points a claim is checked at: the grid projected onto the parameters that the
        mechanism or the claim uses (so a threshold t only an accuracy claim needs does not
        repeat the privacy check), or the single empty point for a claim over its own symbols."""
        if not claim.per_point:
            return ((),)
        used = _names_used(self.mechanism, *[v for v in vars(claim).values() if callable(v)])
        if used is None:
            return self.points
        for value in vars(claim).values():
            if isinstance(value, sympy.Basic):
                used |= {s.name for s in value.free_symbols}
        seen: dict = {}
        for point in self.points:
            projected = tuple((sym, v) for sym, v in point if sym.name in used)
            seen.setdefault(projected, None)
        return tuple(seen)


def _names_used(*functions: Any) -> Optional[set[str]]:
    """Parameter names the functions declare; None when one takes **kwargs (it may use any)."""
    names: set[str] = set()
    for fn in functions:
        if fn is None:
            continue
        try:
            parameters = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            return None
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
            return None
        names |= {p.name for p in parameters}
    return names


def _parameters(fn: Callable[..., Any], what: str) -> list[str]:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        raise SpecError(f"{what} {fn!r} has no inspectable signature",
                        "define the mechanism with def name(data, eps, ...)") from None
    if not params:
        raise SpecError(f"{what} {getattr(fn, '__name__', fn)} takes no arguments",
                        "its first argument is the dataset: def name(data, eps): ...")
    return [p.name for p in params[1:]]


def _check_signature(fn: Callable[..., Any], names: Iterable[str], what: str) -> None:
    """The function's keyword parameters must all be grid parameters (it may ignore some:
    a grid may hold parameters that only claims use, such as a threshold t)."""
    wanted = sorted(names)
    got = sorted(_parameters(fn, what))
    if set(got) - set(wanted):
        raise SpecError(f"{what} {fn.__name__}(data, {', '.join(got)}) does not match the grid's "
                        f"parameters ({', '.join(wanted) or 'none'})",
                        "give the function one keyword argument per grid parameter it uses, after the dataset")


@call_help("dp.spec(mech, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE), grid={eps: [1]}, "
           "claims=[dp.private(eps)])",
           claims="the list of claims, e.g. claims=[dp.private(eps)]")
def spec(mechanism: Optional[Callable[..., Any]] = None, *, claims: Iterable[Claim],
         universe: Optional[Universe] = None, grid: Optional[GridLike] = None,
         name: Optional[str] = None, doc: Optional[str] = None) -> Spec:
    """Declare a mechanism with its universe, parameter grid and claims.

    The mechanism is called as ``mechanism(data, **point)`` with ``data`` a
    tuple of records and one keyword argument per parameter.  A spec of
    formula claims only (a theorem, a loss function) has no mechanism and no
    universe, and then needs a ``name``.
    """
    if isinstance(claims, (Claim, str, bytes)) or not hasattr(claims, "__iter__"):
        what = f"one claim ({claims.describe()})" if isinstance(claims, Claim) else repr(claims)
        raise SpecError(f"spec: claims= is {what}, not a list of claims",
                        "write a list, even of one claim: claims=[dp.private(eps)]")
    claims = tuple(claims)
    if mechanism is None:
        if name is None:
            raise SpecError("a spec without a mechanism needs a name", "pass name='...' to dp.spec")
        bad = [c for c in claims if isinstance(c, Claim) and c.needs_mechanism]
        if bad:
            raise SpecError(f"claim {bad[0].describe()} is about a mechanism, but the spec has none",
                            "pass the mechanism function and its universe to dp.spec")
    else:
        if not callable(mechanism):
            raise SpecError(f"mechanism={mechanism!r} is not callable",
                            "pass the mechanism function: def mech(data, eps): ...")
        if not isinstance(universe, Universe):
            raise SpecError(f"universe={universe!r} is not a universe", "build it with dp.universe(...)")
    points = normalise_grid(grid)
    names = [sym.name for sym, _ in points[0]]
    if any([sym.name for sym, _ in p] != names for p in points):
        raise SpecError("grid points give values for different parameters",
                        "give every point a value for every parameter")
    if mechanism is not None:
        _check_signature(mechanism, names, "mechanism")
    if not claims:
        raise SpecError("the spec makes no claims", "add at least one claim, e.g. claims=[dp.private(eps)]")
    symbols = {sym for sym, _ in points[0]}
    seen: dict[str, int] = {}
    named = []
    for claim in claims:
        if not isinstance(claim, Claim):
            raise SpecError(f"claims contains {claim!r}, which is not a claim",
                            "build claims with dp.private(...) or dp.same_distribution(...)")
        for expr in vars(claim).values() if claim.per_point else ():
            free = getattr(expr, "free_symbols", set()) if isinstance(expr, sympy.Basic) else set()
            if free - symbols:
                missing = ", ".join(sorted(s.name for s in free - symbols))
                raise SpecError(f"claim {claim.describe()} uses {missing}, which the grid does not give",
                                f"add {missing} to the grid")
        other = getattr(claim, "other", None)
        if other is not None:
            _check_signature(other, names, "same_distribution: other")
        base = claim.id or claim.kind
        seen[base] = seen.get(base, 0) + 1
        claim_id = base if seen[base] == 1 else f"{base}#{seen[base]}"
        if claim.id and seen[base] > 1:
            raise SpecError(f"two claims have the id {claim.id!r}", "give each claim its own id")
        named.append(_with_id(claim, claim_id))
    if doc is None:
        doc = (inspect.getdoc(mechanism) or "") if mechanism is not None else ""
    return Spec(name=name or mechanism.__name__, mechanism=mechanism, universe=universe,  # type: ignore[union-attr]
                points=points, claims=tuple(named), doc=doc)


def _with_id(claim: Claim, claim_id: str) -> Claim:
    import dataclasses
    return dataclasses.replace(claim, id=claim_id)
