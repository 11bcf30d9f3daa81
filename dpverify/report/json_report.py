"""The JSON document of ``dpverify check --json``: a public contract, keep it stable.

Its JSON Schema (draft 2020-12) is ``dpverify/report/check.schema.json`` (package data,
:func:`schema`), with a description of every key; ``"schema_version"`` names the version of that
schema the document follows (:data:`SCHEMA_VERSION`: the major part changes when a key is removed,
renamed or changes meaning -- never so far -- the minor part when keys are added).  Keys are only
ever added.  The outline::

    {"dpverify": VERSION, "schema_version": "1.1", "exit_code": 0 | 1 | 2,
     "specs": [{"path", "name", "error"?, "coverage", "claims": [{"id", "kind", "status", "expect",
                 "as_expected", "outcome", "message",
                 "points": [{"params", "status", "outcome", "as_expected", "message", "method",
                             "claimed_epsilon", "claimed_delta",
                             "achieved_epsilon", "achieved_epsilon_is_lower_bound",
                             "achieved_delta", "witness", "seconds", "figures", "coverage",
                             "scope"}]}]}],
     "summary": {"proved", "verified", "refuted", "unknown", "error", "consistent"},
     "totals": {"files", "specs", "spec_errors", "claims": {...}, "points": {...}}}

``summary`` counts claims by status (a spec that could not be checked counts as one ``error``),
expected refutations among ``refuted``; ``totals`` counts claims and claim points by outcome
(:mod:`.summary`): ``refuted_as_expected`` apart, ``unexpected`` what fails the run.

Numbers (the rule of schema 1.0):

* counts and sizes are JSON integers; ``seconds`` is a JSON number (wall-clock seconds, 3 decimals);
* a real value a check computed or was given -- ``claimed_epsilon``, ``claimed_delta``,
  ``achieved_epsilon``, ``achieved_delta``, a witness's ``ratio``, and its ``p`` and ``p_prime`` when its
  ``quantity`` is a probability, density, divergence, delta or gdp value -- is a string, never a JSON
  number (no digit is lost to a double): a decimal with exactly 40 significant digits, trailing zeros
  kept, fixed-point for 1e-5 <= |x| < 1e12 and ``d.ddd...e+N`` / ``e-N`` otherwise (mpmath's form,
  :func:`dpverify.engine.decide.decimals.decimal`); an exact zero is ``"0"``; infinity ``"inf"``;
* a witness's ``p``/``p_prime`` of other quantities are the check's own figures as strings: ``"k/n"``
  sample frequencies, exact values of a replay (``"1/2"``, ``"1.5"``), a statistic at 6 digits, a
  formula side as sympy prints it;
* ``params`` are the grid values exactly as the spec gives them (``"1/2"``, ``"3"``);
* ``figures`` is the point's typed evidence (:meth:`dpverify.evidence.Evidence.figures`): decimal
  strings as above, integers, and JSON floats only in plot data (curves, histograms), non-finite
  floats as the strings ``"inf"``, ``"-inf"``, ``"nan"``.

``coverage`` (added with explicit pair sets) says what the spec's claims were checked on:
``{"scope": "universe", "note"}`` for every neighbouring pair of its universe, or for a
``dp.pairs(...)`` set ``{"scope": "listed pairs", "pairs", "datasets", "name", "note"}`` -- only
those pairs, never the whole universe; null for a spec without a universe or that did not load.
A point's ``coverage`` (added with the n ranges of sample-complexity claims) is null when its
check recorded nothing beyond the spec's universe; a proof for every dataset of every size carries
``{"scope": "all datasets", "label", ...}``; and a verdict on part of what its claim states says which
part it covers: a
``sample_complexity`` claim states "for every n >= bound" but is checked for finitely many n, so
its ``verified`` points carry ``{"scope": "n range", "from", "to", "label": "n = 3..40", "note":
"checked for n = 3..40; not shown beyond (...)"}`` -- never the whole claim.

``scope`` (added in schema 1.1) is what a point's verdict is about, on every point that holds or is
consistent (:mod:`.scope`): ``{"kind", "all_datasets", "parameters", "label", "short"}`` -- e.g.
``{"kind": "universe", "all_datasets": false, "parameters": "every value", "label": "universe n = 1
over {0, 1}, replace-one; every ε > 0", "short": "universe n=1, every ε"}``; ``all_datasets`` is true
only for a proof about every dataset of every size (a check's ``{"scope": "all datasets"}`` coverage, a
derived sensitivity), never for a verdict on a finite universe.  Null for a refuted, unknown or error
point.  ``coverage`` stays as it was.

``consistent`` (added with the statistical audit of black boxes) counts claims a sampled
audit found no evidence against; they do not fail the run.

``achieved_epsilon_is_lower_bound`` is true when the exact supremum of the loss
was not decided (densities with several terms per piece) and ``achieved_epsilon``
is a certified lower bound from the witness search.

For a formula claim (identity, inequality) ``params`` is ``{}`` and a witness is
the counterexample: ``x`` maps each symbol to its exact value (a string such as
"2" or "1/3"), ``x_prime`` and ``output`` are null, ``p`` and ``p_prime`` are
the values of the left and right sides.
"""
from __future__ import annotations

import json
import math
from fractions import Fraction
from typing import Any, Optional

from ..results import ClaimResult, PointResult, SpecReport, Status
from ..results import Report
from ..evidence import privacy_view
from ..version import __version__
from .summary import EXPECTED as _EXPECTED
from .scope import point_scope
from .summary import Totals, claim_outcome, point_outcome, tally

SCHEMA_VERSION = "1.1"
"""The version of ``check.schema.json`` the document follows (see the module's docstring)."""

DECIMAL_QUANTITIES = frozenset({"probability", "density", "divergence", "delta", "gdp"})
"""Witness quantities whose ``p`` and ``p_prime`` are decimal strings (40 significant digits)."""

_ZEROS = frozenset({"0", "0.0", "-0.0", "-0", "0.", "0e0"})


def decimal_text(value: Any) -> Any:
    """A decimal string in the document's one form: an exact zero (written ``"0.0"`` by
    :func:`~dpverify.engine.decide.decimals.decimal`, ``"0"`` by some checks) becomes ``"0"``;
    every other value is kept as it is (no digit dropped)."""
    if isinstance(value, str) and value.strip() in _ZEROS:
        return "0"
    return value


def schema() -> dict[str, Any]:
    """The JSON Schema of the document (``check.schema.json``, package data)."""
    from importlib.resources import files
    return json.loads(files("dpverify.report").joinpath("check.schema.json").read_text(encoding="utf-8"))


def jsonable(value: Any) -> Any:
    """Datasets and outputs as JSON: tuples become lists, dicts objects, other values their repr."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, (tuple, list)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):  # a formula claim's counterexample: {symbol: exact value}
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v) for v in value), key=repr)
    if isinstance(value, Fraction):
        return str(value)
    return repr(value)


def figures_json(value: Any) -> Any:
    """A figure as JSON: dicts with sorted keys, lists, numbers kept (non-finite floats as strings)."""
    if isinstance(value, dict):
        return {str(k): figures_json(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [figures_json(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return jsonable(value)


def _point(c: ClaimResult, p: PointResult, universe: Optional[dict] = None,
           coverage: Optional[dict] = None) -> dict[str, Any]:
    witness = None
    if p.witness is not None:
        w = p.witness
        exact = w.quantity in DECIMAL_QUANTITIES
        witness = {"x": jsonable(w.x), "x_prime": jsonable(w.x_prime), "output": jsonable(w.output),
                   "p": decimal_text(w.p) if exact else w.p,
                   "p_prime": decimal_text(w.p_prime) if exact else w.p_prime, "quantity": w.quantity}
        if w.ratio is not None:
            witness["ratio"] = decimal_text(w.ratio)
    levels = privacy_view(p.evidence)
    outcome = point_outcome(c, p)
    scope = point_scope(p, c.kind, universe, coverage)
    return {"params": p.params, "status": p.status.value, "outcome": outcome,
            "as_expected": outcome in _EXPECTED, "message": p.message, "method": p.method,
            "claimed_epsilon": decimal_text(levels.claimed_epsilon),
            "claimed_delta": decimal_text(levels.claimed_delta),
            "achieved_epsilon": decimal_text(levels.achieved_epsilon),
            "achieved_epsilon_is_lower_bound": levels.achieved_is_lower_bound,
            "achieved_delta": decimal_text(levels.achieved_delta),
            "witness": witness, "seconds": round(p.seconds, 3), "figures": figures_json(p.evidence.figures()),
            "coverage": p.coverage, "scope": None if scope is None else scope.as_json()}


def _claim(c: ClaimResult, s: Optional[SpecReport] = None) -> dict[str, Any]:
    universe, coverage = (s.universe, s.coverage) if s is not None else (None, None)
    return {"id": c.claim_id, "kind": c.kind, "status": c.status.value, "expect": c.expect,
            "as_expected": c.as_expected, "outcome": claim_outcome(c), "message": c.message,
            "points": [_point(c, p, universe, coverage) for p in c.points]}


def totals_json(totals: Totals) -> dict[str, Any]:
    """The ``"totals"`` of the document."""
    return {"files": totals.files, "specs": totals.specs, "spec_errors": totals.spec_errors,
            "claims": totals.claims.as_json(), "points": totals.points.as_json()}


def exit_code_of(totals: Totals) -> int:
    """The exit code ``dpverify check`` gives (:func:`dpverify.runner.exit_code`, read from the counts):
    2 when a spec or a claim is an error, 1 when a claim is otherwise not as expected, else 0."""
    if totals.spec_errors or totals.claims.counts["error"]:
        return 2
    return 1 if totals.claims.unexpected else 0


def document(report: Report) -> dict[str, Any]:
    specs = []
    for s in report.specs:
        entry: dict[str, Any] = {"path": s.path, "name": s.name, "claims": [_claim(c, s) for c in s.claims],
                                 "coverage": s.coverage}
        if s.error:
            entry["error"] = s.error
        specs.append(entry)
    counts = {status.value: 0 for status in Status}
    for status in report.statuses():
        counts[status] += 1
    totals = tally(report.specs)
    return {"dpverify": __version__, "schema_version": SCHEMA_VERSION, "exit_code": exit_code_of(totals),
            "specs": specs, "summary": counts, "totals": totals_json(totals)}


def dumps(report: Report) -> str:
    return json.dumps(document(report), indent=2, ensure_ascii=False)
