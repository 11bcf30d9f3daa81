"""Where the engine's bulk work runs: local processes by default, a Dask cluster on request.

An :class:`Executor` maps a function over a list of work units and returns the results in order.
Two exist:

* :class:`LocalExecutor` -- this machine's cores through :func:`dpverify.engine.execution.pool.parallel_map`
  (forked workers that inherit the spec's code; the embedded default, no scheduler);
* :class:`DaskExecutor` -- the workers of a Dask ``distributed`` scheduler
  (``dpverify check ... --scheduler tcp://HOST:PORT``).  Its work units travel by pickle: a unit
  names a module-level function of dpverify and plain data (a spec file's path and the mechanism's
  name, datasets, parameters, float arrays); a worker imports the spec file by path from the same
  checkout (docs/cluster.md), never a pickled closure.

:func:`configure` picks the scheduler for this process and the processes it starts (through the
environment variable ``DPVERIFY_SCHEDULER``); :func:`current` is what the engine asks.  Which
executor ran a computation never changes its result: every unit is a pure function of its
arguments and the results are combined in order (``tests/test_cluster.py`` compares verdicts and
achieved values with the local run).  A unit that fails raises its error on the caller's side.
"""
from __future__ import annotations

import functools
import os
import random
import sys
from collections.abc import Callable, Sequence
from typing import Any, Optional, Protocol

from ...errors import SpecError
from . import pool

ENVIRONMENT = "DPVERIFY_SCHEDULER"
"""The environment variable that carries the scheduler's address to every process of a run."""


class Executor(Protocol):
    """Maps a function over work units, results in order."""

    remote: bool
    workers: int

    def map(self, fn: Callable[[Any], Any], units: Sequence[Any]) -> list:
        ...


class LocalExecutor:
    """This machine's cores: forked processes (:mod:`dpverify.engine.execution.pool`), in-process for one unit."""

    remote = False

    def __init__(self, workers: Optional[int] = None) -> None:
        self.workers = pool.available() if workers is None else max(1, workers)

    def map(self, fn: Callable[[Any], Any], units: Sequence[Any]) -> list:
        return pool.parallel_map(fn, units, self.workers)


class DaskExecutor:
    """The workers of a Dask distributed scheduler at ``address`` (``tcp://HOST:PORT``)."""

    remote = True

    def __init__(self, address: str, timeout: str = "20s") -> None:
        try:
            from distributed import Client
        except ImportError:
            raise SpecError(f"--scheduler {address} needs Dask's distributed package",
                            'install it from the dpverify checkout: pip install -e ".[cluster]"') from None
        self.address = address
        try:
            self.client = Client(address, set_as_default=False, timeout=timeout)
        except (OSError, TimeoutError) as exc:
            raise SpecError(f"cannot reach the Dask scheduler at {address} ({type(exc).__name__}: {exc})",
                            "start it (dask scheduler), start workers (dask worker ADDRESS) and check the "
                            "address") from None
        self.workers = max(1, sum(info.get("nthreads", 1) for info in
                                  self.client.scheduler_info().get("workers", {}).values()))
        private_randomness()

    def map(self, fn: Callable[[Any], Any], units: Sequence[Any]) -> list:
        private_randomness()
        futures = self.client.map(_checked, [fn] * len(units), list(units), pure=False)
        results = self.client.gather(futures)
        return [_unwrap(result) for result in results]

    def close(self) -> None:
        self.client.close()


_PRIVATE = random.Random()


def private_randomness() -> None:
    """Point the ``random`` of Dask's and tornado's modules at a private generator.

    Their threads draw jitter and samples from Python's global ``random`` while a run goes on
    (tornado's periodic callbacks, dask's sizeof, distributed's retries); the engine compares the
    global random state before and after computing laws, to catch a mechanism drawing randomness
    its wrappers did not see.  With a client or a worker in the process that comparison would fail
    for nothing: their draws go to a generator of their own instead."""
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] in ("distributed", "tornado", "dask") and getattr(module, "random", None) is random:
            module.random = _PRIVATE


def _checked(fn: Callable[[Any], Any], unit: Any) -> tuple:
    """Run one unit on a worker: ("ok", value), or ("refused", the SpecError's fields) so that a spec's
    refusal reaches the caller as the same SpecError."""
    private_randomness()
    try:
        return ("ok", fn(unit))
    except SpecError as err:
        return ("refused", (err.problem, err.fix, err.file, err.line))


def _unwrap(result: tuple) -> Any:
    kind, value = result
    if kind == "refused":
        problem, fix, file, line = value
        raise SpecError(problem, fix, file=file, line=line)
    return value


_LOCAL = LocalExecutor()
PROBE_TIMEOUT = "5s"
"""How long ``--scheduler`` waits for the scheduler before the run is refused (exit code 2)."""


def configure(address: Optional[str]) -> None:
    """Use the Dask scheduler at ``address`` in this process and the processes it starts (None: local)."""
    if address:
        os.environ[ENVIRONMENT] = address
    else:
        os.environ.pop(ENVIRONMENT, None)


def probe(address: str) -> int:
    """Connect to the scheduler at ``address`` once (then close): how many worker threads it has; a
    SpecError saying what to do when it cannot be reached or ``distributed`` is missing."""
    found = DaskExecutor(address, timeout=PROBE_TIMEOUT)
    try:
        return found.workers
    finally:
        found.close()


def current() -> Any:
    """The executor this process uses: the configured scheduler's, else the local one.  Inside a worker
    process of :mod:`dpverify.engine.execution.pool` or of a Dask cluster: always the local one, in-process."""
    address = os.environ.get(ENVIRONMENT)
    if not address or pool.in_worker() or _inside_dask():
        return _LOCAL
    return _dask(address, os.getpid())


@functools.lru_cache(maxsize=4)
def _dask(address: str, pid: int) -> DaskExecutor:
    """One client per scheduler and process (a forked process makes its own: a client's threads do not
    survive a fork)."""
    found = DaskExecutor(address)
    _opened.append(found)
    return found


def close_all() -> None:
    """Close every client this process opened (the next :func:`current` connects afresh)."""
    for found in _opened:
        found.close()
    _opened.clear()
    _dask.cache_clear()


_opened: list = []


def _inside_dask() -> bool:
    try:
        from distributed import get_worker
    except ImportError:
        return False
    try:
        get_worker()
    except ValueError:
        return False
    return True


__all__ = ["ENVIRONMENT", "DaskExecutor", "Executor", "LocalExecutor", "close_all", "configure", "current", "probe"]
