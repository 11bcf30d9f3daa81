"""The executor interface (dpverify/engine/executor.py): the local default maps in order over forked
workers, --scheduler's address reaches every process through the environment, and a process that is
itself a worker always computes in-process."""
from __future__ import annotations

import os

from dpverify.engine.execution import executor, pool


def square_and_pid(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


def test_the_local_executor_maps_in_order_over_forked_workers() -> None:
    found = executor.LocalExecutor(workers=2).map(square_and_pid, list(range(12)))
    assert [value for value, _ in found] == [x * x for x in range(12)]
    if pool.can_fork():
        assert os.getpid() not in {pid for _, pid in found}


def test_one_worker_runs_in_process() -> None:
    assert {pid for _, pid in executor.LocalExecutor(workers=1).map(square_and_pid, [1, 2])} == {os.getpid()}


def test_without_a_scheduler_the_executor_is_local(monkeypatch) -> None:
    monkeypatch.delenv(executor.ENVIRONMENT, raising=False)
    assert executor.current().remote is False


def test_configure_sets_and_clears_the_environment(monkeypatch) -> None:
    monkeypatch.delenv(executor.ENVIRONMENT, raising=False)
    executor.configure("tcp://127.0.0.1:8786")
    assert os.environ[executor.ENVIRONMENT] == "tcp://127.0.0.1:8786"
    executor.configure(None)
    assert executor.ENVIRONMENT not in os.environ


def current_is_local(_: int) -> bool:
    return executor.current().remote is False


def test_inside_a_worker_process_the_executor_is_local(monkeypatch) -> None:
    """A forked worker never opens a connection of its own to a scheduler (address unreachable here)."""
    monkeypatch.setenv(executor.ENVIRONMENT, "tcp://127.0.0.1:9")
    if pool.can_fork():
        assert pool.parallel_map(current_is_local, [0, 1], 2) == [True, True]
