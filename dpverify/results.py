"""Results: what every check returns.  A refuted claim is a result, not an exception.

Statuses mean exactly what DESIGN.md says: ``proved`` (for all parameter
values), ``verified`` (every pair of the finite universe at every grid point,
certified), ``refuted`` (a witness re-confirmed by an independent recomputation
at higher precision; for a statistical audit, at a stated error probability and confirmed by an
independent re-run), ``consistent`` (a statistical audit of a black box found no evidence against
the claim at its stated confidence: evidence, never a proof), ``unknown`` (undecided, with the reason), and ``error``
(the spec could not be evaluated).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Optional

from .dsl.spec import Spec
from .evidence import Evidence
from .options import Options


class Status(str, enum.Enum):
    PROVED = "proved"
    VERIFIED = "verified"
    REFUTED = "refuted"
    UNKNOWN = "unknown"
    ERROR = "error"
    CONSISTENT = "consistent"

    @property
    def holds(self) -> bool:
        return self in (Status.PROVED, Status.VERIFIED)

    @property
    def passes(self) -> bool:
        """Does not fail a run: the claim holds, or a statistical audit found it ``consistent``
        (the exit code is 0 and the pytest item passes; the verdict word still says which)."""
        return self.holds or self is Status.CONSISTENT


# Worst first: the status of a claim is the worst status of its points.
_SEVERITY = [Status.ERROR, Status.REFUTED, Status.UNKNOWN, Status.CONSISTENT, Status.VERIFIED, Status.PROVED]


def worst(statuses: list[Status]) -> Status:
    return min(statuses, key=_SEVERITY.index) if statuses else Status.UNKNOWN


@dataclass
class Witness:
    """A counterexample a reader can check by hand.

    For privacy: neighbouring datasets ``x`` and ``x_prime``, the ``output``
    (or event), P(output|x) = ``p`` and P(output|x_prime) = ``p_prime``.  For
    a distribution claim ``x`` and ``x_prime`` are the same dataset and ``p``,
    ``p_prime`` the probabilities under the two programs.
    """

    x: Any
    x_prime: Any
    output: Any
    p: str
    p_prime: str
    ratio: Optional[str] = None
    quantity: str = "probability"  # what p and p_prime are: a key of LABELS, or a grey-box replay's quantity

    def labels(self) -> tuple[str, str]:
        """What ``p`` and ``p_prime`` are, for reports and the pytest plugin."""
        if self.quantity in LABELS:
            return LABELS[self.quantity]
        return f"{self.quantity} on X", f"{self.quantity} on X'"


LABELS: dict[str, tuple[str, str]] = {
    "probability": ("P(o | X)", "P(o | X')"),
    "density": ("density under X", "density under X'"),
    "frequency": ("frequency under X", "frequency or probability against it"),  # k/n counts of a black box
    "divergence": ("D_α(X ‖ X')", "claimed bound"),
    "delta": ("δ achieved (its certified lower end)", "claimed δ"),
    "gdp": ("δ_T(ε) of the pair (its certified lower end)", "G_μ(ε), the Gaussian bound"),
    "sup |F_n - F| vs threshold": ("sup |F_n − F|", "threshold"),
}
"""Labels of a witness's two numbers, by ``quantity``."""


@dataclass
class PointResult:
    """The outcome of one claim at one parameter point: the verdict, the sentence that explains it,
    the witness of a refutation, which path decided it (``method``), and the claim kind's typed
    :mod:`~dpverify.evidence`."""

    params: dict[str, str]
    status: Status
    message: str
    witness: Optional[Witness] = None
    method: str = ""
    seconds: float = 0.0
    evidence: Evidence = field(default_factory=Evidence)
    coverage: Optional[dict] = None  # a verdict on part of what the claim states, e.g. {"scope": "n range",
    # "from", "to", "label": "n = 3..40", "note"} (sample_complexity checks finitely many n); None: all of it


@dataclass
class ClaimResult:
    """One claim of one spec over its whole grid."""

    path: str
    spec: str
    claim_id: str
    kind: str
    description: str
    points: list[PointResult]
    expect: Optional[str] = None

    @property
    def as_expected(self) -> bool:
        """Holds or is ``consistent`` (:attr:`Status.passes`), or (for a claim marked
        expect="refuted") is refuted at every point."""
        if self.expect == "refuted":
            return bool(self.points) and all(p.status == Status.REFUTED for p in self.points)
        return self.status.passes

    @property
    def status(self) -> Status:
        return worst([p.status for p in self.points])

    @property
    def seconds(self) -> float:
        return sum(p.seconds for p in self.points)

    @property
    def message(self) -> str:
        bad = [p for p in self.points if p.status == self.status]
        return bad[0].message if bad else ""


@dataclass
class SpecReport:
    path: str
    name: str
    claims: list[ClaimResult] = field(default_factory=list)
    error: Optional[str] = None
    spec: Optional[Spec] = None  # what was checked, for writers that show it (reports)
    coverage: Optional[dict] = None  # the universe's scope(): every pair, or only listed pairs (dp.pairs)
    universe: Optional[dict] = None  # universe_text(spec.universe): {"label", "short"}, for every verdict's scope


def universe_text(universe: Any) -> Optional[dict]:
    """What a spec's claims are checked on, in a few words, for the scope of every verdict
    (:mod:`dpverify.report.scope`): ``{"label": "n = 3 over {0, 1/2, 1}, replace-one", "short": "n=3"}``
    for a universe, ``{"label": "6 listed pairs (patterns) of 5 datasets, linf_one", "short": "6 listed
    pairs"}`` for a ``dp.pairs`` set; None for a spec without one."""
    if universe is None:
        return None
    if isinstance(getattr(universe, "pairs", None), tuple) and hasattr(universe, "datasets"):  # dp.pairs
        name = getattr(universe, "name", "")
        relation = getattr(universe.neighbours, "value", None) or getattr(universe.neighbours, "__name__", "custom")
        count = len(universe.pairs)
        return {"label": f"{count} listed pairs{f' ({name})' if name else ''} of {len(universe.datasets())} datasets, "
                         f"{relation}", "short": f"{count} listed pairs"}
    records = tuple(getattr(universe, "records", ()))
    sizes = tuple(getattr(universe, "sizes", ()))
    if not sizes:
        return {"label": str(getattr(universe, "describe", lambda: "the declared universe")()), "short": "declared"}
    if len(sizes) == 1:
        n = f"n = {sizes[0]}"
    elif list(sizes) == list(range(sizes[0], sizes[-1] + 1)):
        n = f"n = {sizes[0]}..{sizes[-1]}"
    else:
        n = "n in {" + ", ".join(map(str, sizes)) + "}"
    shown = ", ".join(_record_text(r) for r in records[:_RECORDS_SHOWN])
    if len(records) > _RECORDS_SHOWN:
        shown += f", ... ({len(records)} records)"
    relation = getattr(universe, "relation_name", "custom")
    return {"label": f"{n} over {{{shown}}}, {relation}", "short": n.replace(" = ", "=").replace(" in ", " in ")}


_RECORDS_SHOWN = 6


def _record_text(record: Any) -> str:
    """A record as a scope shows it: ``1/2`` for a fraction, ``(0, 1)`` for a tuple, at most 24 characters."""
    if isinstance(record, tuple):
        text = "(" + ", ".join(_record_text(r) for r in record) + ("," if len(record) == 1 else "") + ")"
    elif isinstance(record, (bool, str)) or record is None:
        text = repr(record)
    elif isinstance(record, (int, float)) or type(record).__module__ in ("fractions", "sympy.core.numbers"):
        text = str(record)
    else:
        text = repr(record)
    return text if len(text) <= 24 else text[:21] + "..."


@dataclass
class Report:
    specs: list[SpecReport]
    options: Options = field(default_factory=Options)  # how the claims were checked, for replay commands

    def statuses(self) -> list[str]:
        out = [c.status.value for s in self.specs for c in s.claims]
        return out + ["error" for s in self.specs if s.error]

    def unexpected(self) -> list[ClaimResult]:
        """Claims that neither hold nor fail the way they are declared to."""
        return [c for s in self.specs for c in s.claims if not c.as_expected]
