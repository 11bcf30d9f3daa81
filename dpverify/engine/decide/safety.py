"""The safety net around z3, apart from z3 itself.

Verdicts are decided by counted budgets (z3's ``rlimit``), never by time; a far limit only keeps a
run from hanging, and when it fires nothing is decided.  z3's rlimit does not tick inside some single
steps of its nonlinear solver (a root isolation with large algebraic numbers ran 10 s between two
ticks of a 3-variable degree-4 query), so the net can fire before the count binds.  It therefore
counts the CPU seconds of the thread that runs z3, not wall seconds: other processes on a busy
machine do not advance it, so the same query gets the same outcome idle and at load 10 (a wall
clock gave ``unknown`` under load and ``refuted`` idle).  This module holds that limit, the
watchdog and the exception without importing z3, so code that only catches the exception (a proof
in one variable, which never calls z3) does not pay z3's import at start-up.
"""
from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

SAFETY_SECONDS = 300
"""A far safety net on every z3 call, in CPU seconds of the calling thread; the deciding budget is
z3's ``rlimit`` (a count)."""
SAFETY_MESSAGE = "a CPU-time safety limit fired (a solver step that its resource count does not bound)"
_POLL = 0.25


class SafetyLimit(Exception):
    """The safety net fired: the count did not bind first, so nothing is decided."""


def thread_cpu_clock() -> Callable[[], float]:
    """A function reading the CPU seconds of the calling thread (from any thread)."""
    clock = time.pthread_getcpuclockid(threading.get_ident())
    return lambda: time.clock_gettime(clock)


@contextlib.contextmanager
def cpu_watchdog(seconds: float, interrupt: Callable[[], None]) -> Iterator[threading.Event]:
    """Call ``interrupt`` once the calling thread has spent ``seconds`` of CPU inside the block; the
    event yielded is set when it did.  Sleeping, waiting or being descheduled by other processes does
    not count."""
    read = thread_cpu_clock()
    start = read()
    fired, done = threading.Event(), threading.Event()

    def watch() -> None:
        while not done.wait(_POLL):
            if read() - start > seconds:
                fired.set()
                interrupt()
                return
    watcher = threading.Thread(target=watch, name="dpverify-cpu-watchdog", daemon=True)
    watcher.start()
    try:
        yield fired
    finally:
        done.set()
        watcher.join()


__all__ = ["SAFETY_MESSAGE", "SAFETY_SECONDS", "SafetyLimit", "cpu_watchdog", "thread_cpu_clock"]
