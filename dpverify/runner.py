"""Running the claims of spec files: the one orchestration shared by the CLI, the
pytest plugin and the reports.  It knows specs, checks and results, and nothing
of how results are displayed.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator

from pathlib import Path
from typing import Any, Optional

from .checks import Workspace, check_point
from .engine import pool
from .options import Options
from .replay import relative
from .results import ClaimResult, PointResult, Report, SpecReport, Status
from .dsl.claims import Claim
from .dsl.params import Point, point_label
from .dsl.spec import Spec
from .errors import SpecError, line_in
from .loader import discover, load
from .selection import Plan, select


def render_error(err: SpecError) -> str:
    if err.file:
        err.file = relative(err.file)
    return err.render()


def run_point(path: str, spec: Spec, claim: Claim, point: Point, ws: Workspace) -> PointResult:
    """:func:`check_point`, with anything the spec's code raises past it -- ``sys.exit()``, a
    ``BaseException`` -- turned into an ``error`` result for this point (Ctrl-C still stops)."""
    try:
        result = check_point(spec, claim, point, ws)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit and friends: the spec's fault, never the run's end
        if isinstance(exc, SystemExit):
            problem = f"the spec's code exits (SystemExit: {exc.code!r}) while {claim.id} is checked"
            fix = "a mechanism returns its output; remove the sys.exit()/exit() call"
        else:
            problem = f"the spec's code raises {type(exc).__name__}: {exc} while {claim.id} is checked"
            fix = "raise an Exception (not a BaseException) or fix the code at this line"
        err = SpecError(problem, fix, file=path, line=line_in(exc.__traceback__, str(Path(path).resolve())))
        return PointResult(point_label(point), Status.ERROR, str(err))
    # name the file as the user gave it, in every message (a note about a parameter branch names its
    # line too): the same spec gives the same message wherever the checkout is
    result.message = result.message.replace(str(Path(path).resolve()), path)
    return result


def check_paths(paths: list[str], options: Options, *, claim_filter: Optional[str] = None,
                point_filter: Optional[dict[str, str]] = None, spec_filter: Optional[str] = None,
                on_load: Optional[Callable[[int], None]] = None,
                on_point: Optional[Callable[[str], None]] = None, jobs: int = 1) -> Report:
    """Load every spec under ``paths`` and check its claims at every grid point.

    Raises :class:`SpecError` on a usage error: a path without spec files, a filter that
    matches nothing.  A spec file that does not load, or whose code ends its worker
    process, is an ``error`` entry of the report; the other files are still checked.
    ``on_load(total_points)`` is called once the work is known, ``on_point(label)``
    after each (claim, point) -- hooks for a progress bar.  ``jobs`` worker processes
    check spec files side by side; the report is the same, in the same order.
    """
    loaded: list[tuple[Path, Optional[list[Spec]], Optional[str]]] = []
    for path in discover(paths):
        try:
            loaded.append((path, load(path), None))
        except SpecError as err:
            loaded.append((path, None, render_error(err)))
    plans = select([s for _, specs, _ in loaded for s in specs or []], spec_filter=spec_filter,
                   claim_filter=claim_filter, point_filter=point_filter,
                   unloaded=[str(path) for path, specs, _ in loaded if specs is None])
    if on_load:
        on_load(sum(len(v) for v in plans.values()))
    work = [(path, [s for s in specs if plans.get(id(s))]) for path, specs, _ in loaded if specs]
    work = [(path, specs) for path, specs in work if specs]
    results = _check_files(work, plans, options, jobs, on_point)
    reports: list[SpecReport] = []
    for path, specs, error in loaded:
        if specs is None:
            reports.append(SpecReport(str(path), path.stem, error=error))
            continue
        checked = [s for s in specs if plans.get(id(s))]
        for spec, report in zip(checked, results.get(path, [])):
            report.spec = spec
            reports.append(report)
    return Report(reports, options)


def _check_spec(path: Path, spec: Spec, plan: Plan, options: Options,
                on_point: Optional[Callable[[str], None]] = None) -> SpecReport:
    ws = Workspace(options)
    report = SpecReport(str(path), spec.name)
    by_claim: dict[str, ClaimResult] = {}
    for claim, point in plan:
        result = run_point(str(path), spec, claim, point, ws)
        if claim.id not in by_claim:
            by_claim[claim.id] = ClaimResult(str(path), spec.name, claim.id, claim.kind,
                                             claim.describe(), [], claim.expect)
            report.claims.append(by_claim[claim.id])
        by_claim[claim.id].points.append(result)
        if on_point:
            on_point(f"{spec.name}:{claim.id}")
    return report


def _check_files(work: list[tuple[Path, list[Spec]]], plans: dict[int, Plan], options: Options, jobs: int,
                 on_point: Optional[Callable[[str], None]]) -> dict[Path, list[SpecReport]]:
    """Check each spec file in a forked worker process, ``jobs`` at a time, so that spec code
    that ends its process (``os._exit``, a crash) costs that file an error, not the run.
    Where processes cannot be forked (Windows), the files are checked here, one by one."""
    if not pool.can_fork():
        return {path: [_check_spec(path, s, plans[id(s)], options, on_point) for s in specs]
                for path, specs in work}
    from multiprocessing.connection import wait
    pending = list(work)
    running: dict[Any, tuple[Any, Path, list[Spec], list[str]]] = {}
    results: dict[Path, list[SpecReport]] = {}
    try:
        while pending or running:
            while pending and len(running) < jobs:
                path, specs = pending.pop(0)
                process, receiver = pool.start(_worker, path, specs, plans, options)
                running[receiver] = (process, path, specs, [])
            for receiver in wait(list(running)):
                process, path, specs, done = running[receiver]
                try:
                    kind, payload = receiver.recv()
                except EOFError:  # the process ended without a word
                    kind, payload = "died", None
                if kind == "point":
                    done.append(payload)
                    if on_point:
                        on_point(payload)
                    continue
                del running[receiver]
                receiver.close()
                process.join()
                results[path] = payload if kind == "done" else _failed(path, specs, payload, process.exitcode, done)
    finally:  # also on an interruption: no worker outlives the run
        pool.stop([process for process, *_ in running.values()])
        for receiver in running:
            receiver.close()
    return results


def _worker(sender: Any, path: Path, specs: list[Spec], plans: dict[int, Plan], options: Options) -> None:
    """In a forked worker (:func:`dpverify.engine.pool.start`): check one file's specs and send back
    the reports (or what stopped them)."""
    try:
        message = ("done", [_check_spec(path, s, plans[id(s)], options, lambda label: sender.send(("point", label)))
                            for s in specs])
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # a failure outside any one point's check
        message = ("failed", f"{type(exc).__name__}: {exc}")
    try:
        sender.send(message)
    except Exception as exc:  # a result that does not pickle
        sender.send(("failed", f"its results could not be sent back: {type(exc).__name__}: {exc}"))
    sender.close()


def _failed(path: Path, specs: list[Spec], reason: Optional[str], exitcode: Optional[int],
            done: list[str]) -> list[SpecReport]:
    """Error entries for the specs of a file whose worker process failed or ended early."""
    if reason is None:
        after = f" after {len(done)} checked points (the last {done[-1]})" if done else " before any point was checked"
        error = SpecError(f"the worker process checking this file ended (exit code {exitcode}){after}",
                          "a mechanism returns its output: remove what ends the process "
                          "(os._exit, os.kill, a crash in compiled code)", file=relative(str(path)))
    else:
        error = SpecError(f"internal error while checking this file: {reason}", "please report it",
                          file=relative(str(path)))
    return [SpecReport(str(path), spec.name, error=error.render()) for spec in specs]


class Interrupted(KeyboardInterrupt):
    """The run was stopped by SIGINT or SIGTERM (``signum``); a KeyboardInterrupt, so every
    ``finally`` that stops workers runs on either."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        """The shell's convention: 128 + the signal number (130 for SIGINT, 143 for SIGTERM)."""
        return 128 + self.signum


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """While the block runs, SIGINT and SIGTERM raise :class:`Interrupted` in the main thread
    (once: a second signal during the clean-up is ignored), so the worker pool is stopped and
    the caller can exit with a message.  SIGINT is handled even where it was inherited ignored
    (a ``&`` job of a non-interactive shell), as ``kill -INT`` is a request to stop.  Outside the
    main thread signals cannot be caught: there the block runs as is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stopping = False

    def handler(signum: int, frame: Any) -> None:
        nonlocal stopping
        if not stopping:
            stopping = True
            raise Interrupted(signum)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def exit_code(report: Report) -> int:
    """0 when every claim holds (or is refuted as declared), 1 when any claim is refuted or
    undecided unexpectedly, 2 on a spec error.  A claim a statistical audit found ``consistent``
    does not fail the run (:attr:`~dpverify.results.Status.passes`): its verdict word says it is
    evidence at a stated confidence, not a proof."""
    if "error" in report.statuses():
        return 2
    return 1 if report.unexpected() else 0
