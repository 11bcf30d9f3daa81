"""Verdicts do not depend on the machine's load (issue 10, class 10).

Every budget that can decide a verdict is a count -- z3's ``rlimit``, example counts, step
counts -- and the only clocks are far safety nets, which say so when they fire.  Three checks:

* statically, no module of dpverify reads a clock or sets a z3 timeout except the few places
  allowed below (the ``seconds`` of a result, the safety nets);
* dynamically, a false claim that only the numeric search refutes is refuted the same way when
  every clock in the process runs 1000 times too fast (what a very busy machine looks like to a
  time budget);
* a safety net that fires gives ``unknown`` with "a wall-clock safety limit fired (machine load?)".
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import sympy
import z3

import dpverify as dp
from dpverify.checks.formulas import problem as formula_problem
from dpverify.checks.privacy import proof as privacy_proof
from dpverify.engine import smt

PACKAGE = Path(dp.__file__).parent
CLOCKS = re.compile(r"\b(perf_counter|monotonic|process_time|time\.time|datetime\.now|setitimer|"
                    r"signal\.alarm|\"timeout\"|'timeout'|timeout_ms|deadline(?!=None))\b")
ALLOWED = {
    "checks/__init__.py": "the seconds each check took, reported and never compared",
    "checks/formulas/problem.py": "the formula check's far safety net (SIGALRM, SAFETY_SECONDS)",
    "runner.py": "the grace period between terminating and killing workers on SIGTERM/SIGINT (decides nothing)",
    "engine/smt.py": "z3's far safety net in smt.check (SAFETY_SECONDS), beside the rlimit",
    "engine/contract.py": "the mechanism contract: names the clocks spec code may not read, and its hang "
                          "watchdog (no progress for a long time) is a safety net",
}


def test_no_deciding_path_reads_a_clock() -> None:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name in ALLOWED or name.startswith("report/"):  # reports print timings, decide nothing
            continue
        lines = [f"{i}: {line.strip()}" for i, line in enumerate(path.read_text().splitlines(), 1)
                 if CLOCKS.search(line) and not line.lstrip().startswith("#")]
        if lines:
            found[name] = lines
    assert not found, f"clocks or time budgets outside the safety nets: {found}"


def test_z3_queries_go_through_the_counted_check() -> None:
    """Every solver.check() of a deciding path runs under a resource limit (smt.check)."""
    raw = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        hits = [line.strip() for line in path.read_text().splitlines() if re.search(r"\.check\(\)", line)]
        if hits and name != "engine/smt.py" and not name.startswith("report/"):
            raw[name] = hits
    assert not raw, f"z3 checks without a resource limit: {raw}"


x = dp.symbol("x")


def _search_only_claim() -> dp.Spec:
    """sin is opaque to z3, so its models are spurious and the numeric search must find x near pi/2."""
    return dp.spec(name="sine", claims=[dp.inequality(sympy.sin(x), sympy.Rational(9, 10) + x**2 / 100, id="sine")])


def _fast_clock(real):
    """A clock that runs 1000 times too fast: every budget measured with it is spent at once."""
    start = real()
    return lambda: start + 1000 * (real() - start) + 1000


def test_a_busy_machine_does_not_change_a_numeric_refutation(monkeypatch: pytest.MonkeyPatch) -> None:
    idle = dp.check(_search_only_claim())[0]
    assert idle.status.value == "refuted" and idle.method == "numeric search", idle.message
    for name in ("perf_counter", "monotonic", "time"):
        monkeypatch.setattr(time, name, _fast_clock(getattr(time, name)))
    busy = dp.check(_search_only_claim())[0]
    assert (busy.status, busy.method) == (idle.status, idle.method), busy.message


def test_z3_answers_by_its_resource_count_not_by_time() -> None:
    """The same query under the same rlimit gives the same answer, and a spent limit is 'unknown'
    with z3's reason (not the safety message)."""
    a, b, c, d, e = z3.Reals("a b c d e")
    hard = [a > 0, b > 0, c > 0, d > 0, e > 0, a**5 + b**5 + c**5 + d**5 + e**5 < 5 * a * b * c * d * e]
    answers = []
    for _ in range(2):
        solver = z3.Solver()
        solver.add(*hard)
        outcome = smt.check(solver, 200_000)
        answers.append((outcome.answer, outcome.reason))
    assert answers[0] == answers[1] == (z3.unknown, "max. resource limit exceeded")


def test_a_z3_answer_does_not_depend_on_what_the_process_did_before() -> None:
    """z3's search follows the ids of its terms; each check runs in a fresh context, so a query
    gives the same model whatever was created before (one took 300 s after other claims, 0 s alone)."""
    x, y = z3.Reals("x y")
    def model() -> str:
        solver = z3.Solver()
        solver.add(x * x + y * y == 2, x * y > 0, x + y < 3)
        return str(smt.check(solver, 1_000_000).model)
    first = model()
    _ = [z3.Real(f"junk{i}") * i + x for i in range(500)]  # shift every later term id
    assert model() == first


def test_the_z3_safety_net_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, c, d, e = z3.Reals("a b c d e")
    solver = z3.Solver()
    solver.add(a > 0, b > 0, c > 0, d > 0, e > 0, a**5 + b**5 + c**5 + d**5 + e**5 < 5 * a * b * c * d * e)
    monkeypatch.setattr(smt, "SAFETY_SECONDS", 0.05)
    with pytest.raises(smt.SafetyLimit, match=re.escape("a wall-clock safety limit fired (machine load?)")):
        smt.check(solver, 10**12)


def test_the_formula_safety_net_gives_unknown_saying_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(formula_problem, "SAFETY_SECONDS", 1e-6)
    result = dp.check(_search_only_claim())[0]
    assert result.status.value == "unknown"
    assert "a wall-clock safety limit fired (machine load?)" in result.message


def test_budgets_are_counts() -> None:
    from dpverify.checks.formulas import check as formulas, search as formula_search
    from dpverify.engine import sensitivity_search, smt_values
    assert isinstance(formulas.Z3_RLIMIT, int) and isinstance(smt_values.BOUNDS_RLIMIT, int)
    assert isinstance(privacy_proof.QUERY_RLIMIT, int) and isinstance(privacy_proof.PROOF_RLIMIT, int)
    assert isinstance(sensitivity_search.RLIMIT, int)
    assert isinstance(formula_search.MAX_EXAMPLES, int) and isinstance(formula_search.REFINE_EVALUATIONS, int)
    assert not hasattr(formula_search, "TIME_BUDGET") and not hasattr(privacy_proof, "PROOF_SECONDS")
