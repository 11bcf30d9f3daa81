"""The scope of every verdict: which datasets and which parameter values a ``proved``, ``verified`` or
``consistent`` is about, in one place for every surface (the table, the summary, ``--json``, the pytest
items and the reports).

DESIGN.md: "Every verdict also carries its scope ... nothing checked on a finite universe ever reads as
a statement about all datasets."  The scope of a point, from what its check recorded:

* the check's own ``PointResult.coverage`` when it set one: ``{"scope": "all datasets", "label"}`` (a
  structural proof for every dataset of every size) or ``{"scope": "n range", "label": "n = 3..40"}``
  (a sample-complexity claim checked for finitely many n);
* a ``sensitivity`` derived with sympy: every dataset over the query's record domain, every n >= n_min;
  one measured by enumeration and z3: the sizes checked;
* ``identity`` / ``inequality``: every value of the formula's symbols (within its assumptions); no
  datasets are involved;
* a ``float_private`` claim: its listed value pairs, every double uniform of the sampler;
* ``consistent``: sampled (or replayed) on the universe -- evidence, never a proof;
* every other claim: the spec's universe (``universe n = 3 over {0, 1/2, 1}, replace-one``) or its
  listed pairs, and for ``proved`` every value of the parameters its proof names ("every ε > 0"; the
  others fixed at the grid point, and said so), for ``verified`` the grid point.

Only ``all datasets`` (a check's coverage) and a derived sensitivity read as statements about all
datasets (:attr:`Scope.all_datasets`); a refuted, unknown or error point has no scope (``None``): a
refutation's witness is one concrete pair that breaks the whole claim.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from ..results import ClaimResult, PointResult, SpecReport, Status

GREEK = {"eps": "ε", "epsilon": "ε", "rho": "ρ", "sigma": "σ", "alpha": "α", "mu": "μ", "delta": "δ",
         "lam": "λ", "lambda": "λ", "beta": "β", "gamma": "γ", "tau": "τ"}
"""Parameter names shown as their Greek letter in scope labels."""

FORMULAS = ("identity", "inequality")
"""Claim kinds that are statements for every value of their symbols (no datasets)."""

PARAMETERS = ("every value", "every value, others fixed", "grid point", "none")
"""What a scope's ``parameters`` says: every value of the parameters (a proof), every value of those
the proof names with the others fixed at the grid point, the grid point only, or no parameters."""

_PROVED_FOR = re.compile(r"\bfor every ([A-Za-z_]\w*(?:, [A-Za-z_]\w*)*) > 0")


@dataclass(frozen=True)
class Scope:
    """What one verdict is about.  ``kind``: "all datasets", "universe", "listed pairs", "n range",
    "formula", "sampled", "value pairs", "sizes checked" (or a check's own coverage scope);
    ``label`` the whole sentence, ``short`` the table's cell."""

    kind: str
    label: str
    short: str
    all_datasets: bool
    parameters: str  # one of PARAMETERS

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "all_datasets": self.all_datasets, "parameters": self.parameters,
                "label": self.label, "short": self.short}


def greek(name: str) -> str:
    return GREEK.get(name, name)


def _grid(point: PointResult) -> str:
    return ", ".join(f"{greek(k)} = {v}" for k, v in point.params.items())


def _proved_names(point: PointResult) -> list[str]:
    """The parameters a proof names ("proved for every eps > 0" in its message), in order."""
    found = _PROVED_FOR.search(point.message or "")
    return [n.strip() for n in found.group(1).split(",")] if found else []


def _every(point: PointResult) -> tuple[str, str, str]:
    """(label part, short part, parameters) of a ``proved`` point on a finite universe."""
    names = [n for n in _proved_names(point)]
    fixed = {k: v for k, v in point.params.items() if k not in names}
    if names:
        text = "every " + ", ".join(greek(n) for n in names) + " > 0"
        short = "every " + ", ".join(greek(n) for n in names)
    else:
        text, short = "every value of its symbolic parameters", "every value"
    if fixed:
        return (text + " (" + ", ".join(f"{greek(k)} = {v}" for k, v in fixed.items()) + " fixed)", short,
                "every value, others fixed")
    return text, short, "every value"


def _at_grid(point: PointResult) -> tuple[str, str, str]:
    """(label part, short part, parameters) of a verdict at one grid point (or with no parameters)."""
    if point.params:
        return f"grid point {_grid(point)}", "grid", "grid point"
    return "no parameters", "", "none"


def _join(datasets: str, params: str) -> str:
    return f"{datasets}; {params}" if params and params != "no parameters" else datasets


def _short(datasets: str, params: str) -> str:
    return f"{datasets}, {params}" if params else datasets


def point_scope(point: PointResult, kind: str, universe: Optional[dict] = None,
                coverage: Optional[dict] = None) -> Optional[Scope]:
    """The scope of ``point``, a point of a claim of ``kind`` in a spec whose universe is described by
    ``universe`` (:func:`dpverify.results.universe_text`) and covered as ``coverage`` (the universe's
    ``scope()``: every pair, or listed pairs); None for a refuted, unknown or error point."""
    status = point.status
    if status not in (Status.PROVED, Status.VERIFIED, Status.CONSISTENT):
        return None
    own = point.coverage if isinstance(point.coverage, dict) else None
    if own and own.get("scope") == "all datasets" and status in (Status.PROVED, Status.VERIFIED) and own.get("label"):
        label = str(own["label"])
        head = re.split(r" over | at | \(|, ", label, maxsplit=1)[0] if label.startswith("all ") else "all datasets"
        found = re.findall(r"\bevery (?!size\b)(?!dataset)(?!pair\b)([A-Za-zεδρσαμλβγτ_]\w*)", label)
        if status is Status.PROVED and found:
            fixed = "(at " in label or "fixed" in label
            short = f"{head}, every " + ", ".join(greek(n) for n in found)
            return Scope("all datasets", label, str(own.get("short") or short), True,
                         "every value, others fixed" if fixed else "every value")
        part, grid, parameters = _at_grid(point)  # every dataset, at this grid point only
        return Scope("all datasets", _join(label, part), _short(head, grid), True, parameters)
    if own and own.get("label") and status is not Status.CONSISTENT:  # a check's own partial coverage
        part, _, parameters = _at_grid(point) if status is Status.VERIFIED else _every(point)
        label = str(own["label"])
        return Scope(str(own.get("scope") or "partial"), _join(label, part), label, False, parameters)
    if kind in FORMULAS:
        if status is Status.PROVED:
            return Scope("formula", "every value of its symbols, within its stated assumptions (no datasets)",
                         "formula, every value", False, "every value")
        part, grid, parameters = _at_grid(point)
        return Scope("formula", _join("the values its message names", part), _short("formula", grid), False,
                     parameters)
    if kind == "sensitivity" and status is Status.PROVED:
        ev = point.evidence
        n_min, relation = getattr(ev, "n_min", None), getattr(ev, "relation", None)
        sizes = f"every n >= {n_min}" if n_min is not None else "every n"
        label = f"all datasets over the query's record domain, {sizes}" + (f" ({relation})" if relation else "")
        part, grid, parameters = _at_grid(point)
        return Scope("all datasets", _join(label, part), _short(f"all datasets, {sizes.replace('>=', '≥')}", grid),
                     True, parameters)
    if kind == "sensitivity" and universe is None:
        part, grid, parameters = _at_grid(point)
        return Scope("sizes checked", _join("the sizes its message names, not every n", part),
                     _short("sizes checked", grid), False, parameters)
    if kind == "float_private":
        pairs = getattr(point.evidence, "value_pairs", None)
        label = (f"its {pairs} listed value pairs" if pairs else "its listed value pairs") + \
            ", every double uniform of the sampler"
        part, grid, parameters = _at_grid(point)
        return Scope("value pairs", _join(label, part), _short("value pairs, every uniform", grid), False, parameters)
    listed = bool(coverage and coverage.get("scope") == "listed pairs")
    where = (universe or {}).get("label")
    if listed:
        datasets, short = f"listed pairs: {where}" if where else "the listed pairs only", "listed pairs"
    else:
        datasets = f"universe {where}" if where else "the declared universe"
        short = f"universe {(universe or {}).get('short')}" if universe else "universe"
    scope_kind = "listed pairs" if listed else "universe"
    if status is Status.CONSISTENT:
        part, grid, parameters = _at_grid(point)
        return Scope("sampled", _join(f"sampled on {datasets} (evidence, not a proof)", part),
                     _short(f"sampled, {short}", grid), False, parameters)
    if status is Status.PROVED:
        part, grid, parameters = _every(point)
        return Scope(scope_kind, _join(datasets, part), _short(short, grid), False, parameters)
    part, grid, parameters = _at_grid(point)
    return Scope(scope_kind, _join(datasets, part), _short(short, grid), False, parameters)


def of(spec: SpecReport, claim: ClaimResult, point: PointResult) -> Optional[Scope]:
    """The scope of a point of a checked spec (:func:`point_scope` with the spec's universe)."""
    return point_scope(point, claim.kind, spec.universe, spec.coverage)


def claim_short(spec: SpecReport, claim: ClaimResult) -> str:
    """The scope of a claim that holds (or is consistent), as one cell: its points' shorts, each once
    ("universe n=3, every ε"; "universe n=3, every ε; universe n=3, grid"), "" otherwise."""
    if not (claim.status.holds or claim.status is Status.CONSISTENT):
        return ""
    shorts = list(dict.fromkeys(s.short for p in claim.points if (s := of(spec, claim, p)) is not None))
    if len(shorts) > 1 and all(s.startswith("n = ") for s in shorts):
        return "finite n ranges, per point"
    return "; ".join(shorts[:3]) + ("; ..." if len(shorts) > 3 else "")


def claim_labels(spec: SpecReport, claim: ClaimResult) -> list[str]:
    """Each distinct full scope label of a claim's points that hold, in order."""
    return list(dict.fromkeys(s.label for p in claim.points if (s := of(spec, claim, p)) is not None))


@dataclass
class ScopeCounts:
    """How many holding (or consistent) claim points have each broad scope, for the summary."""

    all_datasets: int = 0
    universe_every: int = 0  # proved for every value of (some) parameters on a finite universe or listed pairs
    universe_grid: int = 0  # verified on a finite universe or listed pairs at grid points
    formulas: int = 0
    partial: int = 0  # a part of the claim only: n ranges, sizes checked, value pairs
    sampled: int = 0

    def add(self, scope: Scope) -> None:
        if scope.all_datasets:
            self.all_datasets += 1
        elif scope.kind == "formula":
            self.formulas += 1
        elif scope.kind == "sampled":
            self.sampled += 1
        elif scope.kind in ("universe", "listed pairs") and scope.parameters.startswith("every value"):
            self.universe_every += 1
        elif scope.kind in ("universe", "listed pairs"):
            self.universe_grid += 1
        else:
            self.partial += 1

    @property
    def total(self) -> int:
        return (self.all_datasets + self.universe_every + self.universe_grid + self.formulas + self.partial
                + self.sampled)

    def line(self) -> str:
        """``"scope of the 233 claim points that hold: 0 for all datasets, 81 on a finite universe for every
        value of a parameter, 151 on a finite universe at grid points, ..."``: the all-datasets count always,
        the others when not 0; "" when nothing holds."""
        if not self.total:
            return ""
        parts = [f"{self.all_datasets} for all datasets"]  # said even when 0
        parts += [f"{self.universe_every} on a finite universe for every value of a parameter"] \
            if self.universe_every else []
        parts += [f"{self.universe_grid} on a finite universe at grid points"] if self.universe_grid else []
        parts += [f"{self.formulas} formulas for every value"] if self.formulas else []
        parts += [f"{self.partial} on a stated part (n range, sizes, value pairs)"] if self.partial else []
        parts += [f"{self.sampled} sampled (evidence, not proof)"] if self.sampled else []
        noun = "claim point that holds" if self.total == 1 else "claim points that hold"
        return f"scope of the {self.total} {noun}: " + ", ".join(parts)


def counts(specs: list[SpecReport]) -> ScopeCounts:
    out = ScopeCounts()
    for spec in specs:
        for claim in spec.claims:
            for point in claim.points:
                found = of(spec, claim, point)
                if found is not None:
                    out.add(found)
    return out




def spec_sentence(spec: SpecReport) -> str:
    """The scope of a spec's verdicts in one sentence, for the verdict banner of its report page:
    "Scope: 2 claim points for all datasets of every size; 3 on the declared universe only (n = 1 over
    {0, 1}, replace-one), not all datasets: 2 for every value of a parameter, 1 at grid points." ("" when
    nothing holds)."""
    found = counts([spec])
    if not found.total:
        return ""
    parts = []
    if found.all_datasets:
        parts.append(f"{_points(found.all_datasets)} for all datasets of every size")
    on_universe = found.universe_every + found.universe_grid
    if on_universe:
        listed = bool(spec.coverage and spec.coverage.get("scope") == "listed pairs")
        where = (spec.universe or {}).get("label")
        what = ("on the listed pairs only" if listed else "on the declared universe only") + \
            (f" ({where})" if where else "")
        detail = ", ".join(t for t in (f"{found.universe_every} for every value of a parameter" if found.universe_every
                                       else "", f"{found.universe_grid} at grid points" if found.universe_grid else "")
                           if t)
        parts.append(f"{_points(on_universe)} {what}, not all datasets: {detail}")
    if found.formulas:
        parts.append(f"{_points(found.formulas)} formulas, for every value of their symbols")
    if found.partial:
        parts.append(f"{_points(found.partial)} on the part of the claim their scope names")
    if found.sampled:
        parts.append(f"{_points(found.sampled)} sampled: evidence, not proof")
    return "Scope: " + "; ".join(parts) + "."


def _points(n: int) -> str:
    return f"{n} claim point" + ("" if n == 1 else "s")


__all__ = ["FORMULAS", "GREEK", "PARAMETERS", "Scope", "ScopeCounts", "claim_labels", "claim_short", "counts",
           "greek", "of", "point_scope", "spec_sentence"]
