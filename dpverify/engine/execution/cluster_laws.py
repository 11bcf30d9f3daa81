"""Every dataset's law computed on a Dask cluster: the same :class:`~dpverify.engine.program.reading.Table`
as :func:`~dpverify.engine.program.reading.all_distributions`, with the datasets split over the workers.

A work unit is plain data -- the spec file's path and the mechanism's qualified name, a chunk of
datasets, the parameters, the precision, the tail windows to start from and the leaf budget -- and
a worker imports the spec file by path (:func:`load_program`).  A mechanism that cannot be named so
(a closure, a lambda, a post-processing made inside a function) is computed locally, as are small
universes (fewer than :data:`MIN_DATASETS` datasets) and laws of continuous noise (densities, which
do not travel): :func:`all_distributions` then simply calls the local reading.

What the local reading checks across datasets is checked here across units too: the tail windows
of unclamped geometric noise are merged and every unit whose laws were computed under smaller
windows is recomputed with the merged ones (windows only grow, so this ends); the noise base of
such a call site must agree between units; two outputs Python would merge although their types
differ are refused (a :class:`~dpverify.engine.program.enumerate.Session` registers every output of every
law); a unit whose run changed the global random state is refused as the local run refuses it.
Laws travel as the raw ends of their certified intervals and are rebuilt exactly.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import pickle
import sys
from collections.abc import Callable, Mapping
from typing import Any, Optional

from ...errors import SpecError
from ...version import __version__
from . import executor as executors
from . import pool
from ..program.backend import IntervalBackend
from ..program.contract import global_state, state_changed
from ..program.enumerate import LEAF_BUDGET, Session
from ..program.reading import Table, _call, _check_mass, all_distributions as local_distributions, law_key

MIN_DATASETS = 256
"""Universes with fewer datasets are computed locally (shipping them costs more than computing them)."""
UNITS_PER_WORKER = 2
"""Chunks per worker thread: some balance when datasets differ in cost, against a fixed cost per unit
(a fork, and caches that start cold: about 0.15 s measured with bench/bench_cluster.py)."""

_programs: dict[tuple[str, str, str], Callable[..., Any]] = {}


class NotTransportable(Exception):
    """A law holds a weight that is not a certified interval (a density): computed locally instead."""


def program_reference(program: Callable[..., Any]) -> Optional[tuple[str, str]]:
    """(spec file, qualified name) by which a worker can import ``program``, or None when it has none
    (a closure, a lambda, a function not reachable from its module under its name)."""
    code = getattr(program, "__code__", None)
    qualname = getattr(program, "__qualname__", "")
    module = sys.modules.get(getattr(program, "__module__", None) or "")
    if code is None or module is None or "<" in qualname or not os.path.isfile(code.co_filename):
        return None
    target: Any = module
    for part in qualname.split("."):
        target = getattr(target, part, None)
    if target is not program:
        return None
    return os.path.abspath(code.co_filename), qualname


def versions() -> tuple:
    """What a worker must share with the caller to compute the same laws: dpverify's, mpmath's, sympy's
    and Python's versions."""
    import mpmath  # noqa: PLC0415
    import sympy  # noqa: PLC0415
    return __version__, mpmath.__version__, sympy.__version__, sys.version_info[:3]


def digest(file: str) -> str:
    with open(file, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def same_checkout(unit: dict) -> None:
    """Refuse a unit on a worker whose spec file or libraries differ from the caller's."""
    if unit["versions"] != versions():
        raise SpecError(f"a cluster worker runs {versions()} (dpverify, mpmath, sympy, Python), the caller "
                        f"{unit['versions']}", "install the same versions on every worker")
    try:
        found = digest(unit["file"])
    except OSError:
        found = None
    if found != unit["digest"]:
        raise SpecError(f"{unit['file']}: a cluster worker sees {'no such file' if found is None else 'other contents'} "
                        "at this path", "give the workers the same checkout of the specs, at the same path",
                        file=unit["file"])


def load_program(file: str, qualname: str, digest: str) -> Callable[..., Any]:
    """Import the spec file at ``file`` whose contents have the SHA-256 ``digest`` (once per process and
    contents, as the loader does: its directory on sys.path while it runs) and return the function
    named ``qualname`` in it.  A file edited between two runs is imported afresh under a new name."""
    key = (file, qualname, digest)
    if key not in _programs:
        name = f"dpverify_cluster_{os.path.splitext(os.path.basename(file))[0]}_{digest[:16]}"
        module = sys.modules.get(name)
        if module is None:
            importer = importlib.util.spec_from_file_location(name, file)
            if importer is None or importer.loader is None:
                raise SpecError(f"{file}: a cluster worker cannot import this spec file",
                                "give the workers the same checkout of the specs, at the same path")
            module = importlib.util.module_from_spec(importer)
            sys.modules[name] = module
            sys.path.insert(0, os.path.dirname(file))
            try:
                importer.loader.exec_module(module)
            except BaseException:
                del sys.modules[name]
                raise
            finally:
                sys.path.remove(os.path.dirname(file))
        target: Any = module
        for part in qualname.split("."):
            target = getattr(target, part)
        _programs[key] = target
    return _programs[key]


def laws_of_chunk(unit: dict) -> Optional[dict]:
    """A work unit, run on a worker: the laws of a chunk of datasets, as the local reading computes them
    (one Session, laws redone while the tail windows grow), with the final windows and noise bases;
    None when a law holds a density (then the caller computes locally).

    The computation runs in a process forked for it (:func:`_forked`): a Dask
    worker's own threads draw from Python's global ``random`` while a task runs, so the check that
    the mechanism left the global random states alone is only meaningful in a process of its own.
    The spec file is imported before the fork, so the child imports nothing."""
    same_checkout(unit)
    load_program(unit["file"], unit["qualname"], unit["digest"])
    return run_forked(_compute, unit)


def run_forked(compute: Callable[[dict], Any], unit: dict) -> Any:
    """``compute(unit)`` in a child process forked for it (:func:`_forked`), its SpecError raised here
    as the same SpecError and any other failure as :class:`~dpverify.engine.execution.pool.WorkerFailed` (an
    error, never a dropped unit).  Used by every work unit that runs spec code on a worker."""
    kind, value = _forked(compute, unit)
    if kind == "refused":
        problem, fix, file, line = value
        raise SpecError(problem, fix, file=file, line=line)
    if kind == "failed":
        raise pool.WorkerFailed(value)
    return value


def _forked(compute: Callable[[dict], Any], unit: dict) -> tuple:
    """compute(unit) in a child forked with os.fork (a Dask worker is a daemonic process, which
    multiprocessing forbids to start children), its answer pickled back through a pipe."""
    parent = os.getpid()
    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(readable)
        code = 0
        try:
            pool.become_worker(parent)
            answer = _answer(compute, unit)
            with os.fdopen(writable, "wb") as out:
                pickle.dump(answer, out)
        except BaseException:  # noqa: BLE001  (nothing may escape a forked child)
            code = 1
        finally:
            os._exit(code)
    os.close(writable)
    try:
        with os.fdopen(readable, "rb") as answer:
            data = answer.read()
    finally:
        os.waitpid(pid, 0)
    if not data:
        return "failed", "the process computing a work unit ended without its result"
    return pickle.loads(data)


def _answer(compute: Callable[[dict], Any], unit: dict) -> tuple:
    try:
        return "ok", compute(unit)
    except SpecError as err:
        return "refused", (err.problem, err.fix, err.file, err.line)
    except Exception as exc:  # anything else: the caller raises it
        return "failed", f"{type(exc).__name__}: {exc}"


def _compute(unit: dict) -> Optional[dict]:
    program = load_program(unit["file"], unit["qualname"], unit["digest"])
    backend = IntervalBackend(unit["dps"])
    session = Session(backend, unit["windows"])
    token = LEAF_BUDGET.set(unit["budget"])
    before = global_state()
    try:
        datasets = unit["datasets"]
        laws: list[Any] = [None] * len(datasets)
        seen = [-1] * len(datasets)
        todo = list(range(len(datasets)))
        while todo:
            for i in todo:
                laws[i] = _call(program, datasets[i], unit["params"], session)
                seen[i] = session.window_version
            todo = [i for i in range(len(datasets)) if seen[i] != session.window_version]
    finally:
        LEAF_BUDGET.reset(token)
    if global_state() != before:
        code = getattr(program, "__code__", None)
        raise state_changed((code.co_filename, code.co_firstlineno) if code else (None, None))
    try:
        shipped = [[(o, _ends(w)) for o, w in law.items()] for law in laws]
    except NotTransportable:
        return None
    return {"laws": shipped, "windows": session.windows, "bases": session.bases}


def _ends(weight: Any) -> tuple:
    ends = getattr(weight, "_mpi_", None)
    if ends is None:
        raise NotTransportable
    return tuple((s, int(m), e, bc) for s, m, e, bc in ends)


def all_distributions(program: Callable[..., Any], datasets: list[tuple], params: Mapping[str, Any], dps: int,
                      progress: Optional[Callable[[int], None]] = None) -> Table:
    """Every dataset's law: on the configured cluster when there is one and the mechanism can be named
    by path, else locally (:func:`dpverify.engine.program.reading.all_distributions`).  The same Table either way."""
    where = executors.current()
    reference = program_reference(program) if where.remote and len(datasets) >= MIN_DATASETS else None
    if reference is not None:
        table = _remote(where, reference, program, datasets, dict(params), dps)
        if table is not None:
            if progress is not None:
                progress(len(datasets))
            return table
    return local_distributions(program, datasets, params, dps, progress)


def _remote(where: Any, reference: tuple[str, str], program: Callable[..., Any], datasets: list[tuple],
            params: dict, dps: int) -> Optional[Table]:
    count = max(1, min(len(datasets), where.workers * UNITS_PER_WORKER))
    bounds = [(k * len(datasets) // count, (k + 1) * len(datasets) // count) for k in range(count)]
    base = {"file": reference[0], "qualname": reference[1], "params": params, "dps": dps,
            "budget": LEAF_BUDGET.get(), "digest": digest(reference[0]), "versions": versions()}
    windows: dict = {}
    results: list[Optional[dict]] = [None] * count
    todo = list(range(count))
    while todo:
        units = [{**base, "datasets": datasets[bounds[k][0]:bounds[k][1]], "windows": windows} for k in todo]
        for k, found in zip(todo, where.map(laws_of_chunk, units)):
            if found is None:
                return None
            results[k] = found
        merged = _merged([r["windows"] for r in results if r is not None])
        todo = [k for k, r in enumerate(results) if r is None or _normal(r["windows"]) != merged]
        windows = merged
    return _table(program, datasets, results, windows, dps)


def _normal(windows: dict) -> dict:
    return {site: tuple(window) for site, window in windows.items()}


def _merged(all_windows: list[dict]) -> dict:
    """The smallest windows holding every unit's windows (tail windows only grow)."""
    merged: dict = {}
    for windows in all_windows:
        for site, (lo, hi) in windows.items():
            old = merged.get(site)
            merged[site] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
    return merged


def _table(program: Callable[..., Any], datasets: list[tuple], results: list, windows: dict, dps: int) -> Table:
    """The units' laws as one Table, grouped and checked as the local reading does."""
    backend = IntervalBackend(dps)
    session = Session(backend)
    bases: dict = {}
    laws = []
    for result in results:
        for site, key in result["bases"].items():
            if bases.setdefault(site, key) != key:
                raise SpecError("geometric: the noise base a at this line differs between datasets, "
                                "so its unclamped tails cannot be lumped exactly",
                                "make a depend on the parameters only, or clamp the output")
        for shipped in result["laws"]:
            law = {}
            for output, ends in shipped:
                session.register(output)
                law[output] = backend.ctx.make_mpf(ends)
            laws.append(law)
    distinct: dict = {}
    law_of, unique = [], []
    for index, (data, law) in enumerate(zip(datasets, laws)):
        key = law_key(law, backend, index)
        if key not in distinct:
            distinct[key] = len(unique)
            unique.append(law)
            _check_mass(law, backend, data, program)
        law_of.append(distinct[key])
    return Table(datasets, unique, law_of, backend, {site: list(w) for site, w in windows.items()})


__all__ = ["MIN_DATASETS", "all_distributions", "digest", "laws_of_chunk", "load_program", "program_reference",
           "run_forked", "same_checkout", "versions"]
