"""The program's worker pool (dpverify.engine.execution.pool): results in order whatever the split, failures
reported, no nested forks, and no worker outliving its parent -- stopped in a finally on an error
or an interruption, and killed by the kernel (PR_SET_PDEATHSIG) when the parent dies abruptly."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dpverify.engine.execution import pool

pytestmark = pytest.mark.skipif(not pool.can_fork(), reason="workers are forked")


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def gone(pids: list[int], within: float = 10.0) -> bool:
    """Whether every pid has ended, polling for a while (the kernel delivers the death signal asynchronously)."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def pid_of(item: int) -> tuple[int, int]:
    return item * item, os.getpid()


def test_results_come_back_in_order_from_several_workers() -> None:
    answers = pool.parallel_map(pid_of, range(40), 3)
    assert [a for a, _ in answers] == [i * i for i in range(40)]
    workers = {p for _, p in answers}
    assert os.getpid() not in workers and 1 <= len(workers) <= 3
    assert gone(sorted(workers))


def test_one_worker_or_one_item_runs_in_process() -> None:
    assert pool.parallel_map(pid_of, range(5), 1) == [(i * i, os.getpid()) for i in range(5)]
    assert pool.parallel_map(pid_of, [3], 4) == [(9, os.getpid())]


def nested(item: int) -> tuple[int, bool, int, list]:
    return os.getpid(), pool.in_worker(), pool.available(), pool.parallel_map(pid_of, range(3), 4)


def test_a_worker_forks_no_workers_of_its_own() -> None:
    for pid, inside, available, inner in pool.parallel_map(nested, range(4), 2):
        assert inside and available == 1
        assert {p for _, p in inner} == {pid}  # run in the worker itself
    assert not pool.in_worker()


def raises(item: int) -> int:
    if item == 7:
        raise ValueError("no seven")
    return os.getpid()


def exits(item: int) -> int:
    os._exit(3)


def test_a_failing_worker_is_reported_and_every_worker_stopped() -> None:
    before = set(os.listdir("/proc"))
    with pytest.raises(pool.WorkerFailed, match="ValueError: no seven"):
        pool.parallel_map(raises, range(20), 3)
    with pytest.raises(pool.WorkerFailed, match="exit code 3"):
        pool.parallel_map(exits, range(4), 2)
    spawned = [int(p) for p in set(os.listdir("/proc")) - before if p.isdigit()]
    assert not [p for p in spawned if alive(p) and _parent(p) == os.getpid()]


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return -1


SCRIPT = textwrap.dedent("""
    import os, signal, sys, time
    from dpverify.engine.execution import pool

    # Python keeps an inherited SIG_IGN for SIGINT (a CI runner or nohup may start us so): put back the
    # handler that raises KeyboardInterrupt, so the test does not depend on the disposition it inherits
    signal.signal(signal.SIGINT, signal.default_int_handler)

    def slow(item):
        os.write(1, f"{os.getpid()}\\n".encode())  # one write(2) under PIPE_BUF: the two workers' lines never interleave
        time.sleep(120)
        return item

    try:
        pool.parallel_map(slow, range(2), 2)
    except KeyboardInterrupt:
        print("stopped", flush=True)
""")


@contextlib.contextmanager
def two_workers(inherited_sigint: object = signal.SIG_DFL) -> Iterator[tuple[subprocess.Popen, list[int]]]:
    """Run :data:`SCRIPT` (with SIGINT's disposition at exec ``inherited_sigint``), wait until its two
    workers print their pids, and give (process, pids); on the way out, kill whatever of them a failing
    test left running."""
    process = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, text=True,
                               start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, inherited_sigint))
    workers: list[int] = []
    try:
        while len(workers) < 2:  # pids, one per line (a CI log once showed a blank line among them)
            line = process.stdout.readline()
            assert line, "the script ended before its two workers started"
            workers += [int(token) for token in line.split()]
        assert all(alive(p) for p in workers)
        yield process, workers
    finally:
        for pid in workers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        process.kill()
        process.wait()
        process.stdout.close()


@pytest.mark.parametrize("inherited_sigint", [signal.SIG_DFL, signal.SIG_IGN], ids=["default", "ignored"])
def test_an_interrupted_parent_stops_its_workers_in_its_finally(inherited_sigint: object) -> None:
    with two_workers(inherited_sigint) as (process, workers):
        process.send_signal(signal.SIGINT)
        assert process.stdout.readline().strip() == "stopped"
        assert gone(workers), [p for p in workers if alive(p)]
        process.wait(timeout=60)


def test_workers_die_with_a_parent_killed_outright() -> None:
    """SIGKILL runs no finally: the kernel's parent-death signal (Linux) ends the workers."""
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux's")
    with two_workers() as (process, workers):
        process.kill()
        process.wait(timeout=60)
        assert gone(workers), [p for p in workers if alive(p)]


def test_start_and_stop_give_a_worker_with_a_pipe_back() -> None:
    """The way in for a caller that manages its own workers (one per spec file)."""
    def work(connection, value):
        connection.send((value + 1, os.getpid(), pool.in_worker()))
        time.sleep(120)  # stopped by stop(), not by finishing
    process, connection = pool.start(work, 41)
    try:
        answer, pid, inside = connection.recv()
        assert (answer, inside) == (42, True) and pid == process.pid != os.getpid()
    finally:
        pool.stop([process])
        connection.close()
    assert not process.is_alive() and process.exitcode == -signal.SIGTERM
