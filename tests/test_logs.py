"""Diagnostics through `logging`: `dpverify.logs.configure(verbosity)` shows one INFO line per
decided point naming the path that decided it (-v), z3's resource count per query (-vv), and
nothing by default."""
from __future__ import annotations

import logging

import pytest
import z3

import dpverify as dp
from dpverify import logs
from dpverify.engine.decide import smt

x = dp.symbol("x")


@pytest.fixture(autouse=True)
def restore_logger():
    """Each test starts and ends with the 'dpverify' logger as it was (no handler of ours)."""
    logger = logging.getLogger("dpverify")
    handlers, level = list(logger.handlers), logger.level
    yield
    logger.handlers[:] = handlers
    logger.setLevel(level)


def _refuted_by_z3() -> dp.Spec:
    return dp.spec(name="s", claims=[dp.inequality(x**2 + 1, 0, id="c")])


def test_verbosity_chooses_the_level_and_one_handler() -> None:
    assert [logs.level(v) for v in (-3, -1, 0, 1, 2, 5)] == [logging.ERROR, logging.ERROR, logging.WARNING,
                                                               logging.INFO, logging.DEBUG, logging.DEBUG]
    logs.configure(1)
    logs.configure(2)
    logger = logging.getLogger("dpverify")
    assert logger.level == logging.DEBUG
    assert len([h for h in logger.handlers if isinstance(h, logs._Stderr)]) == 1


def test_verbose_shows_one_line_per_point_naming_the_method(capsys) -> None:
    logs.configure(1)
    (result,) = dp.check(_refuted_by_z3())
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("dpverify: ")]
    assert result.status.value == "refuted" and result.method
    assert lines == [f"dpverify: INFO dpverify.checks: s:c [no parameters] refuted, decided by {result.method}, "
                     f"{result.seconds:.2f} s"], err
    assert "DEBUG" not in err


def test_very_verbose_shows_the_z3_resources_each_query_spent(capsys) -> None:
    logs.configure(2)
    solver = z3.Solver()
    a = z3.Real("a")
    solver.add(a * a < 0)
    outcome = smt.check(solver, 100_000)
    err = capsys.readouterr().err
    assert outcome.answer == z3.unsat
    assert (f"dpverify: DEBUG dpverify.engine.decide.smt: z3 answered unsat using {outcome.used} of rlimit 100000"
            in err), err


def test_quiet_and_default_show_no_diagnostics(capsys) -> None:
    for verbosity in (-1, 0):
        logs.configure(verbosity)
        dp.check(_refuted_by_z3())
        assert "dpverify:" not in capsys.readouterr().err

