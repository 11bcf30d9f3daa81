"""The command line's filters (``--spec``, ``--claim``, ``--point``): which (claim, point)
pairs of the loaded specs to check.

A filter that matches nothing is a usage error naming what matched nothing and what
exists, never an empty run: a gate that checks nothing must not pass.
"""
from __future__ import annotations

import difflib
from pathlib import Path
from typing import Optional

import sympy

from .dsl.claims import Claim
from .dsl.params import Point, point_label
from .dsl.spec import Spec
from .errors import SpecError

Plan = list[tuple[Claim, Point]]


def canonical(value: str) -> str:
    """A parameter value for comparison: ``0.5`` and ``1/2`` both read ``1/2``, and white space
    does not count (``1+sqrt(2)``, as a pytest node id shows it, is ``1 + sqrt(2)``)."""
    try:
        return str(sympy.Rational(value.strip()))
    except (TypeError, ValueError, ZeroDivisionError):
        return "".join(value.split())


def _listing(values: list[str], most: int = 30) -> str:
    """What exists, for an error message: sorted, without repeats, at most ``most`` entries."""
    unique = sorted(set(values))
    more = f" and {len(unique) - most} more" if len(unique) > most else ""
    return (", ".join(unique[:most]) + more) or "none"


def _near(word: str, known: list[str]) -> str:
    """`` (did you mean 'x'?)`` when a known name is close to a mistyped one."""
    close = difflib.get_close_matches(word, sorted(set(known)), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _matches(point: Point, point_filter: dict[str, str]) -> bool:
    label = point_label(point)
    return all(name in label and canonical(label[name]) == canonical(value)
               for name, value in point_filter.items())


def _spec_filter(specs: list[Spec], name: str, unloaded: list[str]) -> list[Spec]:
    chosen = [s for s in specs if s.name == name]
    if chosen:
        return chosen
    problem = f"--spec {name!r} matches no spec" + _near(name, [s.name for s in specs])
    if "/" in name or name.endswith(".py") or Path(name).exists():
        problem += " (--spec takes a spec's name, not a path: give paths as arguments)"
    raise SpecError(problem + _not_loaded(unloaded), f"spec names: {_listing([s.name for s in specs])}")


def _not_loaded(unloaded: list[str]) -> str:
    if not unloaded:
        return ""
    return f"; {len(unloaded)} spec file(s) did not load ({', '.join(unloaded)}): run without filters to see why"


def select(specs: list[Spec], *, spec_filter: Optional[str] = None, claim_filter: Optional[str] = None,
           point_filter: Optional[dict[str, str]] = None, unloaded: Optional[list[str]] = None) -> dict[int, Plan]:
    """The (claim, point) pairs to check for each spec (keyed by ``id(spec)``).

    Claims that are not checked at grid points (formulas, sample complexity) are kept by
    ``--point``, as before.  Raises :class:`SpecError` when a filter matches nothing, or
    when specs loaded but nothing is left to check.
    """
    unloaded = unloaded or []
    chosen = _spec_filter(specs, spec_filter, unloaded) if spec_filter else specs
    claims = [(s, c) for s in chosen for c in s.claims]
    if claim_filter:
        picked = [(s, c) for s, c in claims if c.id == claim_filter]
        if not picked:
            where = f"spec {spec_filter!r}" if spec_filter else "the specs given"
            raise SpecError(f"--claim {claim_filter!r} matches no claim of {where}"
                            + _near(claim_filter, [c.id for _, c in claims]) + _not_loaded(unloaded),
                            f"claim ids: {_listing([c.id for _, c in claims])}")
        claims = picked
    if point_filter:
        _check_point_filter(claims, point_filter, unloaded)
    plans: dict[int, Plan] = {id(s): [] for s in chosen}
    for spec, claim in claims:
        for point in spec.points_for(claim):
            if not point_filter or not claim.per_point or _matches(point, point_filter):
                plans[id(spec)].append((claim, point))
    if specs and not any(plans.values()):
        raise SpecError("nothing to check: the selection holds no claim at any grid point" + _not_loaded(unloaded),
                        f"points of the selected claims: {_listing(_points(claims))}")
    return plans


def _points(claims: list[tuple[Spec, Claim]]) -> list[str]:
    return [" ".join(f"--point {k}={v}" for k, v in point_label(p).items()) or "(no parameters)"
            for s, c in claims for p in s.points_for(c)]


def _check_point_filter(claims: list[tuple[Spec, Claim]], point_filter: dict[str, str],
                        unloaded: list[str]) -> None:
    """Every NAME=VALUE must name a parameter of a selected claim and one of its grid values."""
    values: dict[str, list[str]] = {}
    for spec, claim in claims:
        if claim.per_point:
            for point in spec.points_for(claim):
                for name, value in point_label(point).items():
                    values.setdefault(name, []).append(value)
    for name, value in point_filter.items():
        if name not in values:
            raise SpecError(f"--point {name}={value}: no selected claim has a parameter {name!r}"
                            + _near(name, list(values)) + _not_loaded(unloaded),
                            f"parameters: {_listing(list(values))}")
        if all(canonical(v) != canonical(value) for v in values[name]):
            raise SpecError(f"--point {name}={value} matches no grid point" + _not_loaded(unloaded),
                            f"values of {name}: {_listing(values[name])}")
