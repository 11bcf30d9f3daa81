"""Running the claims of spec files: the one orchestration shared by the CLI, the
pytest plugin and the reports.  It knows specs, checks and results, and nothing
of how results are displayed.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .checks import ClaimResult, Options, Workspace, check_point
from .dsl.params import point_label
from .dsl.spec import Spec
from .errors import SpecError
from .loader import discover, load


@dataclass
class SpecReport:
    path: str
    name: str
    claims: list[ClaimResult] = field(default_factory=list)
    error: Optional[str] = None
    spec: Optional[Spec] = None  # what was checked, for writers that show it (reports)


@dataclass
class Report:
    specs: list[SpecReport]

    def statuses(self) -> list[str]:
        out = [c.status.value for s in self.specs for c in s.claims]
        return out + ["error" for s in self.specs if s.error]

    def unexpected(self) -> list[ClaimResult]:
        """Claims that neither hold nor fail the way they are declared to."""
        return [c for s in self.specs for c in s.claims if not c.as_expected]


def relative(path: str) -> str:
    """Show paths relative to the working directory when they are inside it."""
    try:
        return os.path.relpath(path) if os.path.isabs(path) and not os.path.relpath(path).startswith("..") else path
    except ValueError:
        return path


def render_error(err: SpecError) -> str:
    if err.file:
        err.file = relative(err.file)
    return err.render()


def planned(spec: Spec, claim_filter: Optional[str], point_filter: Optional[dict[str, str]]) -> list:
    """(claim, point) pairs to run for a spec, after the command-line filters."""
    todo = []
    for claim in spec.claims:
        if claim_filter and claim.id != claim_filter:
            continue
        for point in spec.points_for(claim):
            if point_filter and claim.per_point and any(point_label(point).get(k) != v for k, v in point_filter.items()):
                continue
            todo.append((claim, point))
    return todo


def check_paths(paths: list[str], options: Options, *, claim_filter: Optional[str] = None,
                point_filter: Optional[dict[str, str]] = None, spec_filter: Optional[str] = None,
                on_load: Optional[Callable[[int], None]] = None,
                on_point: Optional[Callable[[str], None]] = None, jobs: int = 1) -> Report:
    """Load every spec under ``paths`` and check its claims at every grid point.

    ``on_load(total_points)`` is called once the work is known, ``on_point(label)``
    after each (claim, point) -- hooks for a progress bar.  ``jobs`` > 1 checks spec
    files in that many worker processes; the report is the same, in the same order.
    """
    loaded: list[tuple[Path, Optional[list[Spec]], Optional[str]]] = []
    for path in discover(paths):
        try:
            loaded.append((path, load(path), None))
        except SpecError as err:
            loaded.append((path, None, render_error(err)))
    if spec_filter:
        loaded = [(p, [s for s in specs if s.name == spec_filter] if specs is not None else None, e)
                  for p, specs, e in loaded]
    plans = {id(s): planned(s, claim_filter, point_filter) for _, specs, _ in loaded for s in specs or []}
    if on_load:
        on_load(sum(len(v) for v in plans.values()))
    work = [(path, specs) for path, specs, _ in loaded if specs]
    results: dict[Path, list[SpecReport]] = {}
    if jobs > 1 and len(work) > 1:
        results = _in_workers(work, options, (claim_filter, point_filter, spec_filter), jobs, on_point)
    else:
        for path, specs in work:
            results[path] = [_check_spec(path, spec, plans[id(spec)], options, on_point) for spec in specs]
    reports: list[SpecReport] = []
    for path, specs, error in loaded:
        if specs is None:
            reports.append(SpecReport(str(path), path.stem, error=error))
            continue
        for spec, report in zip(specs, results[path]):
            report.spec = spec
            reports.append(report)
    return Report(reports)


def _check_spec(path: Path, spec: Spec, plan: list, options: Options,
                on_point: Optional[Callable[[str], None]] = None) -> SpecReport:
    ws = Workspace(options)
    report = SpecReport(str(path), spec.name)
    by_claim: dict[str, ClaimResult] = {}
    for claim, point in plan:
        result = check_point(spec, claim, point, ws)
        if result.status.value == "error":
            result.message = result.message.replace(str(Path(path).resolve()), str(path))
        if claim.id not in by_claim:
            by_claim[claim.id] = ClaimResult(str(path), spec.name, claim.id, claim.kind,
                                             claim.describe(), [], claim.expect)
            report.claims.append(by_claim[claim.id])
        by_claim[claim.id].points.append(result)
        if on_point:
            on_point(f"{spec.name}:{claim.id}")
    return report


def _check_file(path: Path, options: Options, filters: tuple) -> list[SpecReport]:
    """In a worker process: load one spec file again and check it (results carry no spec objects)."""
    claim_filter, point_filter, spec_filter = filters
    specs = [s for s in load(path) if not spec_filter or s.name == spec_filter]
    return [_check_spec(path, s, planned(s, claim_filter, point_filter), options) for s in specs]


def _in_workers(work: list, options: Options, filters: tuple, jobs: int,
                on_point: Optional[Callable[[str], None]]) -> dict[Path, list[SpecReport]]:
    """Check spec files in parallel processes (forked, so the loaded modules are shared)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    results: dict[Path, list[SpecReport]] = {}
    with ProcessPoolExecutor(max_workers=min(jobs, len(work)), mp_context=context) as pool:
        futures = {pool.submit(_check_file, path, options, filters): path for path, _ in work}
        for future in as_completed(futures):
            path = futures[future]
            results[path] = future.result()
            if on_point:
                for report in results[path]:
                    for claim in report.claims:
                        for _ in claim.points:
                            on_point(f"{report.name}:{claim.claim_id}")
    return results


def default_jobs() -> int:
    """Worker processes for a run: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def exit_code(report: Report) -> int:
    """0 when every claim holds (or is refuted as declared), 1 when any claim is refuted or
    undecided unexpectedly, 2 on a spec error."""
    if "error" in report.statuses():
        return 2
    return 1 if report.unexpected() else 0
