"""The JSON document of ``dpverify check --json``: a public contract, keep it stable.

Schema (decimal strings carry 40 significant digits)::

    {"dpverify": VERSION,
     "specs": [{"path", "name", "error"?, "coverage", "claims": [{"id", "kind", "status", "expect",
                 "as_expected", "message",
                 "points": [{"params", "status", "message", "claimed_epsilon", "claimed_delta",
                             "achieved_epsilon", "achieved_epsilon_is_lower_bound",
                             "achieved_delta", "witness", "seconds", "figures", "coverage"}]}]}],
     "summary": {"proved", "verified", "refuted", "unknown", "error", "consistent"}}

``coverage`` (added with explicit pair sets) says what the spec's claims were checked on:
``{"scope": "universe", "note"}`` for every neighbouring pair of its universe, or for a
``dp.pairs(...)`` set ``{"scope": "listed pairs", "pairs", "datasets", "name", "note"}`` -- only
those pairs, never the whole universe; null for a spec without a universe or that did not load.
A point's ``coverage`` (added with the n ranges of sample-complexity claims) is null when its
verdict is about all that its claim states, and otherwise says which part it covers: a
``sample_complexity`` claim states "for every n >= bound" but is checked for finitely many n, so
its ``verified`` points carry ``{"scope": "n range", "from", "to", "label": "n = 3..40", "note":
"checked for n = 3..40; not shown beyond (...)"}`` -- never the whole claim.

``consistent`` (added with the statistical audit of black boxes) counts claims a sampled
audit found no evidence against; they do not fail the run.  ``figures`` is the point's typed
evidence (:meth:`dpverify.evidence.Evidence.figures`), e.g. a statistical audit's samples, seed,
error probability, tests and worst interval.

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
from typing import Any

from ..results import ClaimResult, PointResult, Status
from ..results import Report
from ..evidence import privacy_view
from ..version import __version__


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


def _point(p: PointResult) -> dict[str, Any]:
    witness = None
    if p.witness is not None:
        w = p.witness
        witness = {"x": jsonable(w.x), "x_prime": jsonable(w.x_prime), "output": jsonable(w.output),
                   "p": w.p, "p_prime": w.p_prime}
        if w.ratio is not None:
            witness["ratio"] = w.ratio
    levels = privacy_view(p.evidence)
    return {"params": p.params, "status": p.status.value, "message": p.message, "method": p.method,
            "claimed_epsilon": levels.claimed_epsilon, "claimed_delta": levels.claimed_delta,
            "achieved_epsilon": levels.achieved_epsilon,
            "achieved_epsilon_is_lower_bound": levels.achieved_is_lower_bound,
            "achieved_delta": levels.achieved_delta,
            "witness": witness, "seconds": round(p.seconds, 3), "figures": figures_json(p.evidence.figures()),
            "coverage": p.coverage}


def _claim(c: ClaimResult) -> dict[str, Any]:
    return {"id": c.claim_id, "kind": c.kind, "status": c.status.value, "expect": c.expect,
            "as_expected": c.as_expected, "message": c.message, "points": [_point(p) for p in c.points]}


def document(report: Report) -> dict[str, Any]:
    specs = []
    for s in report.specs:
        entry: dict[str, Any] = {"path": s.path, "name": s.name, "claims": [_claim(c) for c in s.claims],
                                 "coverage": s.coverage}
        if s.error:
            entry["error"] = s.error
        specs.append(entry)
    counts = {status.value: 0 for status in Status}
    for status in report.statuses():
        counts[status] += 1
    return {"dpverify": __version__, "specs": specs, "summary": counts}


def dumps(report: Report) -> str:
    return json.dumps(document(report), indent=2, ensure_ascii=False)
