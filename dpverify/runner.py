"""Running the claims of spec files: the one orchestration shared by the CLI, the
pytest plugin and the reports.  It knows specs, checks and results, and nothing
of how results are displayed.

Where processes fork, each spec file is checked in a worker process of its own.  Without
filters, and when the caller does not need the specs back (``dpverify check``), the worker also
loads the file, so that files whose import is slow (spec/accounting/ calls accountants) load side
by side instead of one after the other in this process; with filters, or for a report (which
shows the specs), the files are loaded here first.  A :class:`~dpverify.cache.Cache` makes each
point a look-up first.  The check machinery (:mod:`dpverify.checks`, z3, the statistical audit)
is imported where it is used, so that a one-claim run imports only what its claim needs.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from .cache import Cache
from .engine.execution import pool
from .options import Options
from .replay import relative
from .results import ClaimResult, PointResult, Report, SpecReport, Status
from .dsl.claims import Claim
from .dsl.params import Point, point_label
from .dsl.spec import Spec
from .errors import SpecError, line_in
from .loader import discover, libraries, load
from .selection import Plan, select

if TYPE_CHECKING:  # imported where a point is checked: a cached run never imports the checks
    from .checks import Workspace

def render_error(err: SpecError) -> str:
    if err.file:
        err.file = relative(err.file)
    return err.render()


def run_point(path: str, spec: Spec, claim: Claim, point: Point, ws: Workspace) -> PointResult:
    """:func:`check_point`, with anything the spec's code raises past it -- ``sys.exit()``, a
    ``BaseException`` -- turned into an ``error`` result for this point (Ctrl-C still stops)."""
    from .checks import check_point
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
                on_point: Optional[Callable[[str], None]] = None, jobs: int = 1,
                cache: Optional[Cache] = None, keep_specs: bool = True,
                while_waiting: Optional[Callable[[], None]] = None) -> Report:
    """Load every spec under ``paths`` and check its claims at every grid point.

    Raises :class:`SpecError` on a usage error: a path without spec files, a filter that
    matches nothing.  A spec file that does not load, or whose code ends its worker
    process, is an ``error`` entry of the report; the other files are still checked.
    ``on_load(total_points)`` is called once the work is known (or, when the workers load
    the files, each time one more file is known, with the total so far), ``on_point(label)``
    after each (claim, point) -- hooks for a progress bar.  ``jobs`` worker processes
    check spec files side by side; the report is the same, in the same order.  ``cache``
    (:class:`~dpverify.cache.Cache`) reuses the kept results of unchanged points and keeps the new
    ones.  ``keep_specs=False`` says the caller does not need :attr:`SpecReport.spec` (``check``
    does not, ``report`` does): without filters the workers then load the files themselves.
    ``while_waiting()`` runs once in this process while the first workers check (the CLI imports
    what will display the report there, side by side with the check).
    """
    files = discover(paths)
    if not keep_specs and not (claim_filter or point_filter or spec_filter) and pool.can_fork():
        return Report(_load_and_check(files, options, jobs, cache, on_load, on_point, while_waiting), options)
    loaded: list[tuple[Path, Optional[list[Spec]], Optional[str]]] = []
    for path in files:
        try:
            loaded.append((path, _load_file(path), None))
        except SpecError as err:
            loaded.append((path, None, render_error(err)))
    plans = select([s for _, specs, _ in loaded for s in specs or []], spec_filter=spec_filter,
                   claim_filter=claim_filter, point_filter=point_filter,
                   unloaded=[str(path) for path, specs, _ in loaded if specs is None])
    if on_load:
        on_load(sum(len(v) for v in plans.values()))
    work = [(path, [s for s in specs if plans.get(id(s))]) for path, specs, _ in loaded if specs]
    work = [(path, specs) for path, specs in work if specs]
    results = _check_files(work, plans, options, jobs, on_point, cache, while_waiting)
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
                on_point: Optional[Callable[[str], None]] = None, cache: Optional[Cache] = None,
                digest: Optional[str] = None) -> SpecReport:
    """Check ``plan`` (a spec's selected claims and points) in this process with a workspace of its
    own, each point looked up in ``cache`` first (and kept there after)."""
    ws: Optional[Workspace] = None  # the spec's workspace, made at its first miss
    report = SpecReport(str(path), spec.name)
    report.coverage = spec.universe.scope() if spec.universe is not None else None  # listed pairs: say so
    by_claim: dict[str, ClaimResult] = {}
    keys = _keys(path, spec, plan, cache, digest)
    for (claim, point), key in zip(plan, keys):
        result = cache.get(key) if cache is not None and key is not None else None
        if cache is not None and key is None:
            cache.count(0, 1, 0)  # checked every time: counted as a miss
        if result is None:
            if ws is None:
                from .checks import Workspace
                ws = Workspace(options)
            result = run_point(str(path), spec, claim, point, ws)
            if cache is not None and key is not None:
                cache.put(key, result)  # with what this process read, lazy imports of the check included
        if claim.id not in by_claim:
            by_claim[claim.id] = ClaimResult(str(path), spec.name, claim.id, claim.kind,
                                             claim.describe(), [], claim.expect)
            report.claims.append(by_claim[claim.id])
        by_claim[claim.id].points.append(result)
        if on_point:
            on_point(f"{spec.name}:{claim.id}")
    return report


def _file_key(path: Path, cache: Optional[Cache]) -> Optional[str]:
    """The digest of a spec file (:meth:`dpverify.cache.Cache.spec_digest`; what else its points
    read is in each entry's manifest), or None when there is no cache or it cannot be read."""
    if cache is None:
        return None
    try:
        return cache.spec_digest(path)
    except OSError:
        return None


def _keys(path: Path, spec: Spec, plan: Plan, cache: Optional[Cache], digest: Optional[str]) -> list[Optional[str]]:
    """The cache key of each (claim, point) of ``plan``; None where nothing may be kept: no cache or
    digest, a black box sampled from unseeded code (its verdict changes from run to run)."""
    if cache is None or digest is None or getattr(spec.mechanism, "kind", None) == "unseeded":
        return [None] * len(plan)
    position = next((i for i, s in enumerate(_file_specs.get(str(path.resolve()), [spec])) if s is spec), 0)
    claims = {id(c): i for i, c in enumerate(spec.claims)}
    grids: dict[int, list[Point]] = {}
    keys: list[Optional[str]] = []
    for claim, point in plan:
        points = grids.setdefault(id(claim), spec.points_for(claim))
        where = next((i for i, p in enumerate(points) if p == point), -1)
        keys.append(cache.key(digest, (position, spec.name), (claims.get(id(claim), -1), claim.id),
                              (where, point_label(point))))
    return keys


_file_specs: dict[str, list[Spec]] = {}
"""Each loaded file's specs in order, by real path: a spec's position is part of its keys."""


def _check_file(path: Path, specs: list[Spec], plans: dict[int, Plan], options: Options,
                on_point: Optional[Callable[[str], None]], cache: Optional[Cache]) -> list[SpecReport]:
    """The specs of one file, checked in order."""
    digest = _file_key(path, cache)
    return [_check_spec(path, s, plans[id(s)], options, on_point, cache, digest) for s in specs]


def _load_file(path: Path) -> list[Spec]:
    specs = load(path)
    _file_specs[str(path.resolve())] = specs
    return specs


def _check_files(work: list[tuple[Path, list[Spec]]], plans: dict[int, Plan], options: Options, jobs: int,
                 on_point: Optional[Callable[[str], None]], cache: Optional[Cache] = None,
                 while_waiting: Optional[Callable[[], None]] = None) -> dict[Path, list[SpecReport]]:
    """Check each spec file in a forked worker process, ``jobs`` at a time, so that spec code
    that ends its process (``os._exit``, a crash) costs that file an error, not the run.
    Where processes cannot be forked (Windows), the files are checked here, one by one."""
    if not pool.can_fork():
        return {path: _check_file(path, specs, plans, options, on_point, cache) for path, specs in work}
    _preload(len(work))
    if cache is not None:
        cache.prime()  # the workers inherit the digests of the files loaded here
    outcomes = _fork_each([(path, (_worker, path, specs, plans, options, cache)) for path, specs in work],
                          jobs, on_point, cache=cache, while_waiting=while_waiting)
    return {path: payload if kind == "done" else _failed(path, specs, payload, exitcode, done)
            for (path, specs), (kind, payload, exitcode, done) in zip(work, outcomes)}


def _load_and_check(files: list[Path], options: Options, jobs: int, cache: Optional[Cache],
                    on_load: Optional[Callable[[int], None]],
                    on_point: Optional[Callable[[str], None]],
                    while_waiting: Optional[Callable[[], None]] = None) -> list[SpecReport]:
    """Every spec file loaded and checked in a worker of its own (no filters: every claim at every
    point); the reports in the files' order, without their specs."""
    _preload(len(files))
    total = [0]

    def planned(count: int) -> None:
        total[0] += count
        if on_load:
            on_load(total[0])
    def waiting() -> None:
        if while_waiting is not None:
            while_waiting()
        _prefetch(files[jobs:])
        if cache is not None:
            cache.prime()  # the workers forked from now on inherit the digests of the prefetched libraries
    outcomes = _fork_each([(path, (_load_worker, path, options, cache)) for path in files], jobs, on_point, planned,
                          cache, waiting)
    reports: list[SpecReport] = []
    for path, (kind, payload, exitcode, done) in zip(files, outcomes):
        if kind == "done":
            reports += payload
        elif kind == "unloaded":
            reports.append(SpecReport(str(path), path.stem, error=payload))
        else:
            reports += _failed(path, None, payload, exitcode, done)
    if not total[0] and any(not r.error for r in reports):
        raise SpecError("nothing to check: the selection holds no claim at any grid point",
                        "points of the selected claims: none")
    return reports


def _preload(files: int) -> None:
    """Import the check machinery here before forking when several files are checked, so that
    each worker inherits it instead of importing it again (a one-file run imports what it needs
    in its worker)."""
    if files > 1:
        from .checks import preload
        preload()


def _prefetch(files: list[Path]) -> None:
    """Import here, while the first workers run, the installed libraries the remaining spec files
    import (:func:`dpverify.loader.libraries`): the workers forked later inherit them instead of
    each importing scipy, opendp or an accountant again (which doubled the CPU of loading the
    catalogue).  A library that fails to import here is left to the worker, which reports it."""
    import importlib
    for name in libraries(files):
        try:
            importlib.import_module(name)
        except KeyboardInterrupt:
            raise
        except BaseException:  # the spec file's own load will say what is wrong
            continue


def _fork_each(tasks: list[tuple[Path, tuple]], jobs: int, on_point: Optional[Callable[[str], None]],
               on_plan: Optional[Callable[[int], None]] = None,
               cache: Optional[Cache] = None,
               while_waiting: Optional[Callable[[], None]] = None) -> list[tuple[str, Any, Optional[int], list[str]]]:
    """Run each task (a worker function and its arguments) in a forked process, ``jobs`` at a time;
    relay its ``point`` and ``plan`` messages and add its ``cache`` counts to ``cache``'s; run
    ``while_waiting()`` once the first workers started; return each task's (kind, payload, exit
    code, points done), in the tasks' order."""
    pending = list(enumerate(tasks))
    running: dict[Any, tuple[Any, int, list[str]]] = {}
    outcomes: dict[int, tuple[str, Any, Optional[int], list[str]]] = {}
    try:
        while pending or running:
            while pending and len(running) < jobs:
                index, (_, (target, *args)) = pending.pop(0)
                process, receiver = pool.start(target, *args)
                running[receiver] = (process, index, [])
            if while_waiting is not None:
                while_waiting()
                while_waiting = None
            from multiprocessing.connection import wait
            for receiver in wait(list(running)):
                process, index, done = running[receiver]
                try:
                    kind, payload = receiver.recv()
                except EOFError:  # the process ended without a word
                    kind, payload = "died", None
                if kind == "point":
                    done.append(payload)
                    if on_point:
                        on_point(payload)
                    continue
                if kind == "plan":
                    if on_plan:
                        on_plan(payload)
                    continue
                if kind == "cache":
                    if cache is not None:
                        cache.count(*payload)
                    continue
                del running[receiver]
                receiver.close()
                process.join()
                outcomes[index] = (kind, payload, process.exitcode, done)
    finally:  # also on an interruption: no worker outlives the run
        pool.stop([process for process, *_ in running.values()])
        for receiver in running:
            receiver.close()
    return [outcomes[i] for i in range(len(tasks))]


def _send_reports(sender: Any, check: Callable[[], list[SpecReport]], cache: Optional[Cache]) -> None:
    """Send ``("done", reports)``, or ``("failed", why)`` when checking fails outside any one point's
    check or its results do not pickle; before it, ``("cache", counts)`` of this worker's look-ups
    and the content digests it computed (workers forked later inherit them)."""
    before = cache.counts() if cache is not None else None
    try:
        message: tuple[str, Any] = ("done", check())
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # a failure outside any one point's check
        message = ("failed", f"{type(exc).__name__}: {exc}")
    if cache is not None and before is not None:
        sender.send(("cache", (*(a - b for a, b in zip(cache.counts(), before)), cache.digests_learned())))
    try:
        sender.send(message)
    except Exception as exc:  # a result that does not pickle
        sender.send(("failed", f"its results could not be sent back: {type(exc).__name__}: {exc}"))
    sender.close()


def _worker(sender: Any, path: Path, specs: list[Spec], plans: dict[int, Plan], options: Options,
            cache: Optional[Cache]) -> None:
    """In a forked worker (:func:`dpverify.engine.execution.pool.start`): check one file's specs and send back
    the reports (or what stopped them)."""
    _send_reports(sender, lambda: _check_file(path, specs, plans, options,
                                              lambda label: sender.send(("point", label)), cache), cache)


def _load_worker(sender: Any, path: Path, options: Options, cache: Optional[Cache]) -> None:
    """In a forked worker: load one spec file, say how many points it plans (``("plan", n)``), check
    every claim at every point and send back the reports without their specs (functions of a module
    the parent never imported do not unpickle there); ``("unloaded", message)`` when it does not load."""
    try:
        specs = _load_file(path)
    except SpecError as err:
        sender.send(("unloaded", render_error(err)))
        sender.close()
        return
    try:
        plans = select(specs)
    except SpecError:  # nothing to check in this file: the parent decides whether the run is empty
        plans = {id(s): [] for s in specs}
    sender.send(("plan", sum(len(p) for p in plans.values())))
    checked = [s for s in specs if plans[id(s)]]

    def check() -> list[SpecReport]:
        reports = _check_file(path, checked, plans, options, lambda label: sender.send(("point", label)), cache)
        for report in reports:
            report.spec = None
        return reports
    _send_reports(sender, check, cache)


def _failed(path: Path, specs: Optional[list[Spec]], reason: Optional[str], exitcode: Optional[int],
            done: list[str]) -> list[SpecReport]:
    """Error entries for the specs of a file whose worker process failed or ended early (one entry
    named after the file when the worker loaded it and its specs are not known here)."""
    if reason is None:
        after = f" after {len(done)} checked points (the last {done[-1]})" if done else " before any point was checked"
        error = SpecError(f"the worker process checking this file ended (exit code {exitcode}){after}",
                          "a mechanism returns its output: remove what ends the process "
                          "(os._exit, os.kill, a crash in compiled code)", file=relative(str(path)))
    else:
        error = SpecError(f"internal error while checking this file: {reason}", "please report it",
                          file=relative(str(path)))
    if specs is None:
        return [SpecReport(str(path), path.stem, error=error.render())]
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
