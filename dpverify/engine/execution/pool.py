"""The program's worker processes: the one place dpverify forks, so that no worker outlives its run.

Every worker is forked (it inherits the spec's code and any unpicklable state, such as
a mechanism defined in a closure, without pickling it) and on start:

* dies with its parent: on Linux the kernel sends it SIGKILL when the parent thread
  that forked it ends (``prctl(PR_SET_PDEATHSIG, SIGKILL)``: spec code cannot catch it);
  where prctl is missing,
  the parent's ``finally`` below still stops it;
* dies of SIGTERM at once (default action) and leaves SIGINT to the parent, which
  stops its workers in a ``finally``, on Ctrl-C as on any error;
* forks no workers of its own: :func:`parallel_map` runs in-process inside a worker
  and :func:`available` says 1, so the whole program never runs more processes
  than its top level asked for.

Two ways in: :func:`parallel_map` spreads the items of one computation over up to
``workers`` processes and returns the results in order (the sample-complexity sums);
:func:`start` and :func:`stop` give a caller that manages its own workers (one per
spec file, say) a worker with a pipe back, with the same guarantees.

Nothing here decides a verdict: how the items are split never changes a result, and
the only wait with a bound is :data:`STOP_GRACE`, in the stopping path.
"""
from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterable
from typing import Any, Optional, TypeVar

T = TypeVar("T")
R = TypeVar("R")

STOP_GRACE = 1.0
"""Seconds a terminated worker has to end before it is killed (it dies of SIGTERM at once unless spec
code caught the signal)."""

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>

_in_worker = False


class WorkerFailed(RuntimeError):
    """A worker raised, or ended without a word (``os._exit``, a crash): the caller may redo the work
    in-process, where the error is reported properly."""


def can_fork() -> bool:
    """Whether this platform forks (not on Windows)."""
    import multiprocessing
    return "fork" in multiprocessing.get_all_start_methods()


def in_worker() -> bool:
    """Whether this process is a worker of this module."""
    return _in_worker


def available() -> int:
    """How many workers a computation here may use: the cores this process may run on, or 1 inside a
    worker or where processes cannot be forked."""
    if _in_worker or not can_fork():
        return 1
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def become_worker(parent: int) -> None:
    """First thing in a forked worker: SIGINT is the parent's, SIGTERM ends it, and so does the
    parent's death (Linux); ``parent`` is the pid that forked it.  Exits at once when the parent has
    already gone (it died before the death signal was armed)."""
    global _in_worker
    _in_worker = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no prctl in this libc: the parent's finally stops the worker
            pass
    if os.getppid() != parent:
        os._exit(1)


def _child(target: Callable[..., Any], connection: Any, args: tuple, parent: int) -> None:
    become_worker(parent)
    target(connection, *args)


def start(target: Callable[..., Any], *args: Any, duplex: bool = False) -> tuple[Any, Any]:
    """Fork a worker that runs ``target(connection, *args)`` and return ``(process, connection)``: the
    parent's end of a pipe to it (the worker sends on its end; with ``duplex`` both ends send and
    receive).  Stop it with :func:`stop` in a ``finally``."""
    import multiprocessing
    context = multiprocessing.get_context("fork")
    if duplex:
        mine, theirs = context.Pipe(duplex=True)
    else:
        mine, theirs = context.Pipe(duplex=False)  # (receiving end, sending end)
    process = context.Process(target=_child, args=(target, theirs, args, os.getpid()))
    process.start()
    theirs.close()
    return process, mine


def stop(processes: Iterable[Any], grace: float = STOP_GRACE) -> None:
    """Terminate worker processes (SIGTERM) and reap them; one still alive after ``grace`` seconds is
    killed (SIGKILL)."""
    processes = [p for p in processes if p.pid is not None]
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(grace)
        if process.is_alive():
            process.kill()
            process.join()


def _serve(connection: Any, fn: Callable[[Any], Any]) -> None:
    """A :func:`parallel_map` worker: answer (index, item) with (index, True, fn(item)) until told to
    stop (None); on an error, answer (index, False, what) and end."""
    while True:
        task = connection.recv()
        if task is None:
            break
        index, item = task
        try:
            connection.send((index, True, fn(item)))
        except BaseException as exc:  # anything: the parent decides what to do with it
            connection.send((index, False, f"{type(exc).__name__}: {exc}"))
            break
    connection.close()


def _died(process: Any) -> WorkerFailed:
    process.join(STOP_GRACE)
    return WorkerFailed(f"a worker process ended without its result (exit code {process.exitcode})")


def _send(connection: Any, process: Any, task: Any) -> None:
    try:
        connection.send(task)
    except (BrokenPipeError, ConnectionResetError):
        raise _died(process) from None


def parallel_map(fn: Callable[[T], R], items: Iterable[T], workers: int) -> list[R]:
    """``[fn(item) for item in items]``, spread over up to ``workers`` forked processes, each taking the
    next item when it is done with one (items and results are pickled; ``fn`` is inherited, not pickled).

    In-process when one worker would do, inside a worker, or where processes cannot be forked.
    Raises :class:`WorkerFailed` when a worker raises or dies; every worker is stopped before this
    returns or raises (also on KeyboardInterrupt)."""
    items = list(items)
    workers = min(workers, len(items))
    if workers <= 1 or _in_worker or not can_fork():
        return [fn(item) for item in items]
    from multiprocessing.connection import wait
    results: list[Optional[R]] = [None] * len(items)
    tasks = iter(enumerate(items))
    running: dict[Any, Any] = {}
    processes = []
    try:
        for _ in range(workers):
            process, connection = start(_serve, fn, duplex=True)
            processes.append(process)
            running[connection] = process
            _send(connection, process, next(tasks))
        while running:
            for connection in wait(list(running)):
                try:
                    index, ok, value = connection.recv()
                except EOFError:
                    raise _died(running[connection]) from None
                if not ok:
                    raise WorkerFailed(value)
                results[index] = value
                task = next(tasks, None)
                _send(connection, running[connection], task)
                if task is None:
                    del running[connection]
                    connection.close()
    finally:
        for connection in running:
            connection.close()
        stop(processes)
    return results  # type: ignore[return-value]


__all__ = ["STOP_GRACE", "WorkerFailed", "available", "become_worker", "can_fork", "in_worker", "parallel_map",
           "start", "stop"]
