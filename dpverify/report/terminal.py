"""The terminal table of ``dpverify check``: one row per claim and parameter point, named
``file::spec`` (spec names repeat across files), then what did not go as expected, then the
summary (:mod:`.summary`): a loud line first when anything failed, and the counts of claims and of
claim points by outcome, expected refutations apart ("101 refuted as expected")."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..replay import relative, replay_command
from ..results import PointResult, Report, SpecReport
from ..evidence import DivergenceEvidence, Evidence, GdpEvidence, ProfileEvidence, privacy_view
from . import profile_text
from .scope import of as scope_of
from .summary import summary_lines

_STYLE = {"proved": "bold green", "verified": "green", "consistent": "cyan", "refuted": "bold red", "unknown": "yellow",
          "error": "bold magenta"}


def _short(value: str | None) -> str:
    if value is None:
        return "-"
    if value in ("inf", "null"):
        return value
    try:
        return f"{float(value):.6g}"
    except ValueError:
        return value


def _levels(evidence: Evidence) -> tuple[str, str]:
    """The claimed and achieved level a table shows: epsilon for privacy claims, D_alpha (Rényi) or
    rho (zCDP) for divergence claims; ">=" marks a lower bound."""
    if isinstance(evidence, DivergenceEvidence):
        unit = "rho " if evidence.kind == "zcdp" else "D "
        achieved = _short(evidence.achieved)
        return (unit + _short(evidence.claimed) if evidence.claimed else "-",
                unit + (">=" if evidence.lower_bound else "") + achieved if evidence.achieved else "-")
    if isinstance(evidence, ProfileEvidence):
        return profile_text.levels(evidence)
    if isinstance(evidence, GdpEvidence):  # Gaussian DP: mu (">=" a certified lower bound of the achieved)
        return (("μ " + _short(evidence.claimed)) if evidence.claimed else "-",
                ("μ " + (">=" if evidence.lower_bound else "") + _short(evidence.achieved)) if evidence.achieved else "-")
    levels = privacy_view(evidence)
    return _short(levels.claimed_epsilon), (">=" if levels.achieved_is_lower_bound else "") + _short(levels.achieved_epsilon)


def _listed(spec: SpecReport) -> str:
    """The status suffix of a spec checked on an explicit pair set (dp.pairs): never the whole universe."""
    return " [listed pairs]" if spec.coverage and spec.coverage.get("scope") == "listed pairs" else ""


def _n_range(point: PointResult) -> bool:
    return bool(point.coverage) and point.coverage.get("scope") == "n range" and bool(point.coverage.get("label"))


def _scope(point: PointResult) -> str:
    """The status suffix of a point verified on part of what its claim states ("[n = 3..40]" for a
    sample-complexity claim checked for those n only): never the whole claim.  (Every verdict's scope
    is in the scope column.)"""
    return f" [{point.coverage['label']}]" if _n_range(point) else ""


SCOPE_LEGEND = ('scope: "all datasets" = every dataset of every size; "universe n=.." = the declared finite universe '
                'only (--json: scope.label);',
                '       "every ε" = proved for every value of ε; "grid" = at this grid point only')
"""The lines under the table that say what the scope column's words mean."""


def row_name(spec: SpecReport) -> str:
    """``file::spec``: the file as the user named it, and the spec's name."""
    return f"{relative(spec.path)}::{spec.name}"


def render(report: Report, console: Console) -> None:
    table = Table(title="dpverify check", show_lines=False)
    for name, justify in (("file::spec", "left"), ("claim", "left"), ("params", "left"), ("status", "left"),
                          ("scope", "left"), ("claimed", "right"), ("achieved", "right"), ("time", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for spec in report.specs:
        if spec.error:
            table.add_row(row_name(spec), "-", "-", Text("error", style=_STYLE["error"]), "-", "-", "-", "-")
            continue
        for claim in spec.claims:
            for point in claim.points:
                params = ", ".join(f"{k}={v}" for k, v in point.params.items()) or "-"
                status = point.status.value
                shown = Text(status + (" (expected)" if claim.expect == status else "") + _listed(spec)
                             + _scope(point),
                             style="green" if claim.expect == status else _STYLE[status])
                claimed, achieved = _levels(point.evidence)
                scope = scope_of(spec, claim, point)
                shown_scope = Text(scope.short if scope else "-", style="bold green" if scope and scope.all_datasets else "")
                table.add_row(row_name(spec), claim.claim_id, params, shown, shown_scope, claimed, achieved,
                              f"{point.seconds:.2f}s")
    console.print(table)
    if any(scope_of(s, c, p) for s in report.specs for c in s.claims for p in c.points):
        for line in SCOPE_LEGEND:
            console.print(line, markup=False, highlight=False)
    for spec in report.specs:
        if _listed(spec) and not spec.error:
            console.print(Text(f"{row_name(spec)}: {spec.coverage['note']}", style="yellow"))
        if any(_n_range(point) for claim in spec.claims for point in claim.points):
            console.print(Text(f"{row_name(spec)}: a verdict marked [n = a..b] covers those n only (a sample_complexity "
                               f"claim states every n >= its bound); not shown beyond", style="yellow"))
        if spec.error:
            console.print(Text(f"error in {spec.path}:\n{spec.error}", style=_STYLE["error"]))
        for claim in spec.claims:
            for point in claim.points:
                if point.status.value == claim.expect:
                    continue
                if claim.expect is not None or point.status.value in ("refuted", "unknown", "error"):
                    params = " ".join(f"{k}={v}" for k, v in point.params.items())
                    console.print(Text(f"{point.status.value}: {spec.path} {spec.name}:{claim.claim_id} "
                                       f"[{params}]", style=_STYLE[point.status.value]))
                    console.print(f"  {point.message}", markup=False, highlight=False)
                    replay = replay_command(spec.path, spec.name, claim.claim_id, point.params, report.options)
                    console.print(f"  replay: {replay}", markup=False, highlight=False)
    problem, lines = summary_lines(report)
    if problem:
        console.print(Text(problem, style="bold red"))
    for line in lines:
        console.print(line, markup=False, highlight=False)
