"""Running the claims of spec files: the one orchestration shared by the CLI, the
pytest plugin and the reports.  It knows specs, checks and results, and nothing
of how results are displayed.

Every spec file is loaded before any point is checked, so the work -- the claim points of each
file -- is known first (:class:`Progress`).  Where processes fork, each spec file is checked in a
worker process of its own.  Without filters, and when the caller does not need the specs back
(``dpverify check``), that worker also loads the file (``jobs`` side by side: files whose import is
slow, spec/accounting/ calling accountants, do not wait for each other), reports its points and
waits for its turn; a worker that loads only its own file records for the verdict cache only what
that file read.  With filters, or for a report (which shows the specs), the files are loaded here.
A :class:`~dpverify.cache.Cache` makes each point a look-up first.  The check machinery
(:mod:`dpverify.checks`, z3, the statistical audit) is imported where it is used, so that a
one-claim run imports only what its claim needs.
"""
from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from .cache import Cache
from .engine.execution import pool
from .options import Options
from .replay import relative
from .results import ClaimResult, PointResult, Report, SpecReport, Status, universe_text
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


class Progress:
    """What a run tells whoever shows its progress (the CLI's bar or log lines); every hook does nothing
    here.  In order: :meth:`loading` before each spec file is loaded (``index`` of ``files``; ``here``
    when this process loads it and is busy until :meth:`planned`, else a worker does) and, when a
    worker loads it, :meth:`loaded` after; :meth:`planned` once, before any point is checked, with
    every file and the points it will check (0 for a file that did not load); then for each file :meth:`started`, :meth:`point` after each
    (claim, point), :meth:`finished` with its reports and the seconds since it started.  :meth:`tick`
    runs about once a second while this process waits for worker processes (a heartbeat), never in a
    worker.  The hooks run in this process, in the order the workers' messages arrive."""

    def loading(self, path: str, index: int, files: int, here: bool = False) -> None:
        pass

    def loaded(self, path: str, points: int) -> None:
        pass

    def busy(self, what: Optional[str]) -> None:
        """This process is busy with ``what`` (no :meth:`tick` until ``busy(None)``), e.g. importing
        libraries while workers load."""

    def planned(self, plan: list[tuple[str, int]]) -> None:
        pass

    def started(self, path: str) -> None:
        pass

    def point(self, path: str, label: str) -> None:
        pass

    def finished(self, path: str, reports: list[SpecReport], seconds: float) -> None:
        pass

    def tick(self) -> None:
        pass


class _Hooks(Progress):
    """The older hooks ``on_load(total_points)`` and ``on_point(label)`` beside a :class:`Progress`."""

    def __init__(self, progress: Optional[Progress], on_load: Optional[Callable[[int], None]],
                 on_point: Optional[Callable[[str], None]]) -> None:
        self.progress = progress or Progress()
        self.on_load, self.on_point = on_load, on_point

    def loading(self, path: str, index: int, files: int, here: bool = False) -> None:
        self.progress.loading(path, index, files, here)

    def loaded(self, path: str, points: int) -> None:
        self.progress.loaded(path, points)

    def busy(self, what: Optional[str]) -> None:
        busy = getattr(self.progress, "busy", None)
        if busy is not None:
            busy(what)

    def planned(self, plan: list[tuple[str, int]]) -> None:
        self.progress.planned(plan)
        if self.on_load:
            self.on_load(sum(n for _, n in plan))

    def started(self, path: str) -> None:
        self.progress.started(path)

    def point(self, path: str, label: str) -> None:
        self.progress.point(path, label)
        if self.on_point:
            self.on_point(label)

    def finished(self, path: str, reports: list[SpecReport], seconds: float) -> None:
        self.progress.finished(path, reports, seconds)

    def tick(self) -> None:
        self.progress.tick()


TICK = 1.0
"""Seconds between :meth:`Progress.tick` calls while this process waits for its workers (display
only: no verdict depends on it)."""


def check_paths(paths: list[str], options: Options, *, claim_filter: Optional[str] = None,
                point_filter: Optional[dict[str, str]] = None, spec_filter: Optional[str] = None,
                on_load: Optional[Callable[[int], None]] = None,
                on_point: Optional[Callable[[str], None]] = None, jobs: int = 1,
                cache: Optional[Cache] = None, keep_specs: bool = True,
                while_waiting: Optional[Callable[[], None]] = None,
                progress: Optional[Progress] = None) -> Report:
    """Load every spec under ``paths`` and check its claims at every grid point.

    Raises :class:`SpecError` on a usage error: a path without spec files, a filter that
    matches nothing.  A spec file that does not load, or whose code ends its worker
    process, is an ``error`` entry of the report; the other files are still checked.
    Every file is loaded before any point is checked, so the work (points, by file) is known first --
    here, or, without filters when the caller needs no specs back and processes fork, each by the
    worker that will check it (:func:`_load_and_check`):
    ``progress`` (:class:`Progress`) hears of it, of each (claim, point) and of each finished file;
    ``on_load(total_points)`` is called once the work is known, ``on_point(label)`` after each
    (claim, point).  ``jobs`` worker processes check spec files side by side; the report is the
    same, in the same order.  ``cache`` (:class:`~dpverify.cache.Cache`) reuses the kept results of
    unchanged points and keeps the new ones.  ``keep_specs=False`` says the caller does not need
    :attr:`SpecReport.spec` (``check`` does not, ``report`` does).  ``while_waiting()`` runs once in
    this process while the first workers check (the CLI imports what will display the report there,
    side by side with the check).
    """
    hooks = _Hooks(progress, on_load, on_point)
    files = discover(paths)
    if not keep_specs and not (claim_filter or point_filter or spec_filter) and pool.can_fork():
        return Report(_load_and_check(files, options, jobs, cache, hooks, while_waiting), options)
    loaded: list[tuple[Path, Optional[list[Spec]], Optional[str]]] = []
    for index, path in enumerate(files):
        hooks.loading(relative(str(path)), index, len(files), here=True)
        try:
            loaded.append((path, _load_file(path), None))
        except SpecError as err:
            loaded.append((path, None, render_error(err)))
    plans = select([s for _, specs, _ in loaded for s in specs or []], spec_filter=spec_filter,
                   claim_filter=claim_filter, point_filter=point_filter,
                   unloaded=[str(path) for path, specs, _ in loaded if specs is None])
    work = [(path, [s for s in specs if plans.get(id(s))]) for path, specs, _ in loaded if specs]
    work = [(path, specs) for path, specs in work if specs]
    unloaded = {path: SpecReport(str(path), path.stem, error=error) for path, specs, error in loaded if specs is None}
    points = {path: sum(len(plans[id(s)]) for s in specs) for path, specs in work}
    hooks.planned([(relative(str(path)), points.get(path, 0)) for path, specs, _ in loaded
                   if specs is None or path in points])
    for path, report in unloaded.items():
        hooks.finished(relative(str(path)), [report], 0.0)
    results = _check_files(work, plans, options, jobs, hooks, cache, while_waiting)
    reports: list[SpecReport] = []
    for path, specs, error in loaded:
        if specs is None:
            reports.append(unloaded[path])
            continue
        checked = [s for s in specs if plans.get(id(s))]
        for spec, report in zip(checked, results.get(path, [])):
            report.spec = spec if keep_specs else None
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
    report.universe = universe_text(spec.universe)  # every verdict's scope names it (dpverify.report.scope)
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
                 hooks: Progress, cache: Optional[Cache] = None,
                 while_waiting: Optional[Callable[[], None]] = None) -> dict[Path, list[SpecReport]]:
    """Check each spec file in a forked worker process, ``jobs`` at a time, so that spec code
    that ends its process (``os._exit``, a crash) costs that file an error, not the run.
    Where processes cannot be forked (Windows), the files are checked here, one by one."""
    if not pool.can_fork():
        out: dict[Path, list[SpecReport]] = {}
        for path, specs in work:
            shown, began = relative(str(path)), time.monotonic()
            hooks.started(shown)
            hooks.busy(f"checking {shown}")  # no worker to wait for: no ticks until it is done
            try:
                out[path] = _check_file(path, specs, plans, options, lambda label, p=shown: hooks.point(p, label),
                                        cache)
            finally:
                hooks.busy(None)
            hooks.finished(shown, out[path], time.monotonic() - began)
        return out
    _preload(len(work))
    if cache is not None:
        cache.prime()  # the workers inherit the digests of the files loaded here

    def reports(index: int, outcome: tuple[str, Any, Optional[int], list[str]]) -> list[SpecReport]:
        (path, specs), (kind, payload, exitcode, done) = work[index], outcome
        return payload if kind == "done" else _failed(path, specs, payload, exitcode, done)
    try:
        results = _fork_each([(path, (_worker, path, specs, plans, options, cache)) for path, specs in work],
                             jobs, hooks, reports, cache=cache, while_waiting=while_waiting)
    finally:
        _thaw()
    return {path: result for (path, _), result in zip(work, results)}


MAX_PARKED = 64
"""At most this many worker processes wait, loaded, for their turn to check (the 37 files of spec/ held
about 1 GB of memory together, PSS, once loaded): a larger catalogue is loaded in rounds, and its total
of points is then known round by round."""


def _load_and_check(files: list[Path], options: Options, jobs: int, cache: Optional[Cache], hooks: Progress,
                    while_waiting: Optional[Callable[[], None]] = None) -> list[SpecReport]:
    """Every spec file loaded and checked in a worker of its own (no filters: every claim at every
    point); the reports in the files' order, without their specs.

    A worker loads its file (``jobs`` load side by side: files whose import is slow, such as
    spec/accounting/ calling accountants, do not wait for each other), says how many points it plans,
    and waits; once every file is loaded (:meth:`Progress.planned`: the work is known before any of it
    is done) the waiting workers check, ``jobs`` at a time.  Each worker loads only its own file, so
    what it records for the verdict cache is what that file read (a file loaded here would be in every
    worker's manifest)."""
    _preload(len(files))
    _import_shared(files[:jobs], files[jobs:])
    tasks = list(enumerate(files))
    plan: dict[int, int] = {}
    parked: list[tuple[int, Any]] = []  # (index, receiver) of loaded workers waiting for their turn
    workers: dict[Any, tuple[Any, int, list[str], float]] = {}  # receiver -> (process, index, points, start)
    state: dict[Any, str] = {}  # receiver -> "loading" | "parked" | "checking"
    outcomes: dict[int, list[SpecReport]] = {}
    announced = [False]
    shown = [relative(str(path)) for path in files]

    def waiting() -> None:
        hooks.busy("importing the libraries the spec files use")
        try:
            if while_waiting is not None:
                while_waiting()
            _prefetch(files[jobs:])
            if cache is not None:
                cache.prime()  # the workers forked from now on inherit the digests of the prefetched libraries
        finally:
            hooks.busy(None)

    def busy() -> int:
        return sum(1 for r in workers if state[r] != "parked")

    def finish(receiver: Any, kind: str, payload: Any) -> None:
        process, index, done, began = workers.pop(receiver)
        state.pop(receiver)
        receiver.close()
        process.join()
        path = files[index]
        if kind == "done":
            outcomes[index] = payload
        elif kind == "unloaded":
            outcomes[index] = [SpecReport(str(path), path.stem, error=payload)]
            plan.setdefault(index, 0)
        else:
            outcomes[index] = _failed(path, None, payload, process.exitcode, done)
            plan.setdefault(index, 0)
        if kind != "done" and not announced[0]:
            hooks.loaded(shown[index], 0)
        hooks.finished(shown[index], outcomes[index], time.monotonic() - began)

    try:
        first = True
        while tasks or workers:
            while tasks and busy() < jobs and len(workers) < MAX_PARKED:
                index, path = tasks.pop(0)
                hooks.loading(shown[index], index, len(files))
                process, receiver = pool.start(_load_worker, path, options, cache, duplex=True)
                workers[receiver], state[receiver] = (process, index, [], time.monotonic()), "loading"
            if first:
                first = False
                waiting()
            if parked and not any(v == "loading" for v in state.values()) and (not tasks or len(workers) >= MAX_PARKED):
                if not announced[0]:
                    announced[0] = True
                    hooks.planned([(shown[i], plan.get(i, 0)) for i in range(len(files))])
                while parked and busy() < jobs:
                    index, receiver = parked.pop(0)
                    state[receiver] = "checking"
                    process, _, done, _ = workers[receiver]
                    workers[receiver] = (process, index, done, time.monotonic())
                    hooks.started(shown[index])
                    try:
                        receiver.send(True)
                    except OSError:  # it died while waiting: its end of file comes next
                        pass
            from multiprocessing.connection import wait
            ready = wait(list(workers), timeout=TICK)
            hooks.tick()
            for receiver in ready:
                process, index, done, _ = workers[receiver]
                try:
                    kind, payload = receiver.recv()
                except EOFError:  # the process ended without a word
                    kind, payload = "died", None
                if kind == "plan":
                    plan[index] = payload
                    state[receiver] = "parked"
                    parked.append((index, receiver))
                    parked.sort(key=lambda item: item[0])  # checked in the files' order
                    hooks.loaded(shown[index], payload)
                elif kind == "point":
                    done.append(payload)
                    hooks.point(shown[index], payload)
                elif kind == "cache":
                    if cache is not None:
                        cache.count(*payload)
                else:
                    finish(receiver, kind, payload)
        if not announced[0]:  # nothing loaded: every file an error
            hooks.planned([(shown[i], plan.get(i, 0)) for i in range(len(files))])
    finally:  # also on an interruption: no worker outlives the run
        pool.stop([process for process, *_ in workers.values()])
        for receiver in workers:
            receiver.close()
        _thaw()
    reports = [report for index in range(len(files)) for report in outcomes[index]]
    if not sum(plan.values()) and any(not r.error for r in reports):
        raise SpecError("nothing to check: the selection holds no claim at any grid point",
                        "points of the selected claims: none")
    return reports


def _import_shared(first: list[Path], rest: list[Path]) -> None:
    """Before the first workers fork: import the top-level modules both one of the ``first`` files and one
    of the ``rest`` import by statement (not modules beside a spec file, not dpverify), which a first
    worker and this process (:func:`_prefetch`, for the later workers) would otherwise each import --
    dp_accounting and the accountants' scipy for spec/accounting/, about 2 CPU s of the catalogue's run.
    Read from the files' text (the import system is asked only about the names both import); a module
    that fails to import here is left to the worker, which reports it."""
    if not rest:
        return  # (and no file read here that the verdict cache's audit hook would record for the workers)
    import importlib
    import importlib.util

    from .cache import _Paused
    from .loader import imported_names

    def names(paths: list[Path]) -> set[str]:
        found: set[str] = set()
        for path in paths:
            try:
                with _Paused():  # not a read of the checks: the verdict cache's audit hook must not record it
                    text = path.read_text()
            except (OSError, UnicodeDecodeError):
                continue
            found |= {n for n in imported_names(text) if "." not in n and n != "dpverify"
                      and not (path.parent / f"{n}.py").exists() and not (path.parent / n).is_dir()}
        return found
    from .loader import is_user_file
    for name in sorted(names(first) & names(rest)):
        if name in sys.modules:
            continue
        try:
            where = importlib.util.find_spec(name)
            if where is None or not where.origin or is_user_file(where.origin):
                continue  # user code (its own worker reads it), or nothing to import
            importlib.import_module(name)
        except KeyboardInterrupt:
            raise
        except BaseException:  # the spec file's own load will say what is wrong
            continue


def _prefetch(files: list[Path]) -> None:
    """Import here, while the first workers load, the installed libraries the remaining spec files
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


def _load_worker(connection: Any, path: Path, options: Options, cache: Optional[Cache]) -> None:
    """In a forked worker: load one spec file, say how many points it plans (``("plan", n)``), wait for
    its turn (``True``; anything else, or the parent gone, ends it), check every claim at every point
    and send back the reports without their specs (functions of a module the parent never imported do
    not unpickle there); ``("unloaded", message)`` when it does not load."""
    try:
        specs = _load_file(path)
    except SpecError as err:
        connection.send(("unloaded", render_error(err)))
        connection.close()
        return
    try:
        plans = select(specs)
    except SpecError:  # nothing to check in this file: the parent decides whether the run is empty
        plans = {id(s): [] for s in specs}
    connection.send(("plan", sum(len(p) for p in plans.values())))
    try:
        go = connection.recv()
    except (EOFError, OSError):
        go = None
    if go is not True:
        connection.close()
        return
    checked = [s for s in specs if plans[id(s)]]

    def check() -> list[SpecReport]:
        reports = _check_file(path, checked, plans, options, lambda label: connection.send(("point", label)), cache)
        for report in reports:
            report.spec = None
        return reports
    _send_reports(connection, check, cache)


def _preload(files: int) -> None:
    """Import the check machinery here before forking when several files are checked, so that
    each worker inherits it instead of importing it again (a one-file run imports what it needs
    in its worker)."""
    if files > 1:
        from .checks import preload
        preload()
        import importlib
        for name in LAZY_IMPORTS:
            try:
                importlib.import_module(name)
            except ImportError:  # an optional part missing here: the worker that needs it says so
                pass
        import gc
        gc.collect()
        gc.freeze()  # the inherited objects: no worker's collections walk (and so copy) the parent's pages;
        # thawed (:func:`_thaw`) once the run's workers are done, so a long-lived caller (pytest) collects as before


def _thaw() -> None:
    """Undo :func:`_preload`'s ``gc.freeze()`` in this process once its workers have all been forked and ended."""
    import gc
    gc.unfreeze()


LAZY_IMPORTS = ("sympy.physics.units", "sympy.sets.setexpr", "sympy.assumptions.wrapper",
                "dpverify.engine.structural", "dpverify.checks.privacy.structural",
                "dpverify.checks.privacy.density", "dpverify.checks.privacy.density_delta",
                "dpverify.checks.privacy.density_proof", "dpverify.checks.privacy.gaussian")
"""Modules that checks import lazily, in most workers: imported once here, before the forks.  sympy's
``simplify`` imports ``sympy.physics.units`` (and with it sympy.tensor and sympy.combinatorics,
0.2 s of CPU) on its first call; measured over the catalogue (issue 22, item 1)."""


def _fork_each(tasks: list[tuple[Path, tuple]], jobs: int, hooks: Progress,
               reports: Callable[[int, tuple[str, Any, Optional[int], list[str]]], list[SpecReport]],
               cache: Optional[Cache] = None,
               while_waiting: Optional[Callable[[], None]] = None) -> list[list[SpecReport]]:
    """Run each task (a worker function and its arguments) in a forked process, ``jobs`` at a time;
    relay its ``point`` messages to ``hooks`` and add its ``cache`` counts to ``cache``'s; run
    ``while_waiting()`` once the first workers started; turn each task's (kind, payload, exit code,
    points done) into its reports with ``reports(index, outcome)`` as it ends (``hooks.finished``);
    return them in the tasks' order.  ``hooks.tick()`` runs about every :data:`TICK` seconds."""
    pending = list(enumerate(tasks))
    running: dict[Any, tuple[Any, int, list[str], float]] = {}
    outcomes: dict[int, list[SpecReport]] = {}
    try:
        while pending or running:
            while pending and len(running) < jobs:
                index, (path, (target, *args)) = pending.pop(0)
                hooks.started(relative(str(path)))
                process, receiver = pool.start(target, *args)
                running[receiver] = (process, index, [], time.monotonic())
            if while_waiting is not None:
                while_waiting()
                while_waiting = None
            from multiprocessing.connection import wait
            ready = wait(list(running), timeout=TICK)
            hooks.tick()
            for receiver in ready:
                process, index, done, began = running[receiver]
                shown = relative(str(tasks[index][0]))
                try:
                    kind, payload = receiver.recv()
                except EOFError:  # the process ended without a word
                    kind, payload = "died", None
                if kind == "point":
                    done.append(payload)
                    hooks.point(shown, payload)
                    continue
                if kind == "cache":
                    if cache is not None:
                        cache.count(*payload)
                    continue
                del running[receiver]
                receiver.close()
                process.join()
                outcomes[index] = reports(index, (kind, payload, process.exitcode, done))
                hooks.finished(shown, outcomes[index], time.monotonic() - began)
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
