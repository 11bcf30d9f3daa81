"""What a run found, counted: claims and claim points by outcome, for the summary lines of
``dpverify check`` and ``dpverify report``, the progress lines and the ``"totals"`` of the
``--json`` document.

An outcome is a status read against what the claim expects: a point of a claim marked
``expect="refuted"`` is *refuted as expected* when refuted and *not refuted (expected refuted)*
otherwise; a point of any other claim holds (proved, verified, or consistent for a statistical
audit) or is *refuted* / *unknown* / *error*, each unexpected.  A claim's outcome is its status
(the worst of its points) read the same way (:attr:`~dpverify.results.ClaimResult.as_expected`).
The exit code follows: 2 when anything is an error, 1 when anything else is unexpected, else 0.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..results import ClaimResult, PointResult, Report, SpecReport, Status
from .scope import counts

UNEXPECTED = ("error", "refuted", "unknown", "not refuted (expected refuted)")
"""Outcomes that fail the run, worst first: shown first, loudly."""

EXPECTED = ("proved", "verified", "consistent", "refuted as expected")
"""Outcomes that do not fail the run."""

ORDER = UNEXPECTED + EXPECTED


def point_outcome(claim: ClaimResult, point: PointResult) -> str:
    """The outcome of one claim point (one of :data:`ORDER`)."""
    if point.status is Status.ERROR:
        return "error"
    if claim.expect == "refuted":
        return "refuted as expected" if point.status is Status.REFUTED else "not refuted (expected refuted)"
    return point.status.value


def claim_outcome(claim: ClaimResult) -> str:
    """The outcome of a claim over its grid (one of :data:`ORDER`)."""
    if claim.status is Status.ERROR:
        return "error"
    if claim.expect == "refuted":
        return "refuted as expected" if claim.as_expected else "not refuted (expected refuted)"
    return claim.status.value


@dataclass
class Tally:
    """Counts by outcome (every key of :data:`ORDER`, zeros included)."""

    counts: dict[str, int] = field(default_factory=lambda: {o: 0 for o in ORDER})

    def add(self, outcome: str) -> None:
        self.counts[outcome] += 1

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def unexpected(self) -> int:
        return sum(self.counts[o] for o in UNEXPECTED)

    def words(self, noun: str = "", unexpected_only: bool = False) -> str:
        """``"2 refuted, 81 proved, 101 refuted as expected"``: the non-zero outcomes, unexpected
        first; an unexpected refutation is "refuted unexpectedly"."""
        parts = []
        for outcome in (UNEXPECTED if unexpected_only else ORDER):
            n = self.counts[outcome]
            if n:
                shown = "refuted unexpectedly" if outcome == "refuted" else outcome
                parts.append(f"{n} {noun + ' ' if noun else ''}{shown}")
        return ", ".join(parts)

    def as_json(self) -> dict[str, int]:
        """The JSON view: ``total``, ``as_expected``, ``unexpected``, then the statuses (``refuted``
        counts every refutation, expected or not) and ``refuted_as_expected`` / ``expected_refuted_but_not``."""
        c = self.counts
        return {"total": self.total, "as_expected": self.total - self.unexpected, "unexpected": self.unexpected,
                "proved": c["proved"], "verified": c["verified"], "consistent": c["consistent"],
                "refuted": c["refuted"] + c["refuted as expected"], "refuted_as_expected": c["refuted as expected"],
                "refuted_unexpectedly": c["refuted"], "expected_refuted_but_not": c["not refuted (expected refuted)"],
                "unknown": c["unknown"], "error": c["error"]}


@dataclass
class Totals:
    """A run's counts: files, specs (and specs that could not be checked), claims and points."""

    files: int = 0
    specs: int = 0
    spec_errors: int = 0
    claims: Tally = field(default_factory=Tally)
    points: Tally = field(default_factory=Tally)

    @property
    def unexpected(self) -> bool:
        return bool(self.spec_errors or self.claims.unexpected or self.points.unexpected)


def tally(specs: list[SpecReport]) -> Totals:
    """Count ``specs`` (a report's, or one file's)."""
    totals = Totals(files=len({s.path for s in specs}), specs=len(specs),
                    spec_errors=sum(1 for s in specs if s.error))
    for spec in specs:
        for claim in spec.claims:
            totals.claims.add(claim_outcome(claim))
            for point in claim.points:
                totals.points.add(point_outcome(claim, point))
    return totals


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def problem_line(totals: Totals, where: str = "each listed above") -> str:
    """The loud first line when anything failed (empty otherwise): ``"NOT AS EXPECTED: 2 claims refuted
    unexpectedly, 1 spec with an error (each listed above)"``."""
    parts = []
    if totals.spec_errors:
        parts.append(f"{_plural(totals.spec_errors, 'spec')} not checked (error)")
    for outcome in UNEXPECTED:
        n = totals.claims.counts[outcome]
        if n:
            shown = "refuted unexpectedly" if outcome == "refuted" else outcome
            parts.append(f"{_plural(n, 'claim')} {shown}")
    if not parts:
        return ""
    return "NOT AS EXPECTED: " + ", ".join(parts) + f" ({where})"


def count_lines(totals: Totals) -> list[str]:
    """What was checked and what came of it, in claims and in claim points:

    ``"211 claims in 37 files: 81 proved, 151 verified, 28 consistent, 101 refuted as expected"``
    ``"592 claim points: ..."``"""
    where = f"in {_plural(totals.files, 'file')}"
    if totals.spec_errors:
        where += f" ({_plural(totals.spec_errors, 'spec')} of {totals.specs} not checked: error)"
    claims = f"{_plural(totals.claims.total, 'claim')} {where}: {totals.claims.words() or 'none checked'}"
    points = f"{_plural(totals.points.total, 'claim point')}: {totals.points.words() or 'none checked'}"
    return [claims, points]


def summary_lines(report: Report, where: str = "each listed above") -> tuple[str, list[str]]:
    """(the problem line, or "", and the count lines) of ``report``; ``where`` says where the details are.
    The count lines start with the scope of what holds (:class:`.scope.ScopeCounts`): how many claim
    points hold for all datasets, on a finite universe for every value of a parameter, at grid points."""
    totals = tally(report.specs)
    scope = counts(report.specs).line()
    return problem_line(totals, where), ([scope] if scope else []) + count_lines(totals)
