"""Reproducers of a review of the fast paths (blind sums, the fast reading's replays, the formula deciders):
each printed a false ``verified``/``proved`` before its fix.

1. blind sums: a learner that tells the blind stand-in from a real sample (``hasattr(data, "_refuse")``,
   ``data.__class__``) and misbehaves only on lopsided multisets the probes never ran;
2. the fast reading replays a learner on one sample object: a learner that writes to ``data.counts`` saw its
   own mark on later replays;
3. two different sympy symbols with one name were one z3 variable (and one point of the exhaustive path).
"""
from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
import sympy

import dpverify as dp
from dpverify.engine.datasets.counts import Sample
from dpverify.errors import SpecError


def check(tmp_path: Path, source: str, name: str = "attack_spec.py") -> dict:
    """``dpverify check <spec> --json --no-cache`` (the public contract): the parsed report."""
    path = tmp_path / name
    path.write_text(source)
    run = subprocess.run([sys.executable, "-m", "dpverify", "check", str(path), "--json", "--no-cache"],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert run.stdout, run.stderr
    return json.loads(run.stdout)


def statuses(report: dict) -> list[str]:
    return [claim["status"] for spec in report["specs"] for claim in spec["claims"]]


# ----- 2. a learner that writes to its sample's counts -----------------------------------------------------

COUNTS_MUTATION = '''
from fractions import Fraction
import dpverify as dp

eps = dp.symbol("eps", positive=True)
POPULATION = {0: Fraction(1, 2), 1: Fraction(1, 2)}


def marks(data, eps):
    fresh = "_seen" not in data.counts
    data.counts["_seen"] = True
    d = dp.exponential((0, 1), lambda o: 0, eps, sensitivity=1)
    return d if fresh else 1 - d


spec = dp.spec(marks, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE), grid={eps: [1]},
               claims=[dp.sample_complexity(population=POPULATION, error=lambda o: Fraction(o, 2),
                                            alpha=Fraction(1, 4), beta=Fraction(1, 4), bound=3, up_to=5)])
'''


def test_a_learner_that_marks_its_counts_is_not_verified(tmp_path) -> None:
    """True P[error > 1/4] = 1/2 > beta at every n (each real call gets a fresh sample): was `verified`."""
    report = check(tmp_path, COUNTS_MUTATION)
    assert "verified" not in statuses(report), report
    assert report["exit_code"] != 0


def test_the_counts_of_a_sample_are_read_only_and_fresh_per_read() -> None:
    data = Sample((0, 0, 1))
    data.counts = {0: 2, 1: 1}
    with pytest.raises(TypeError):
        data.counts["_seen"] = True
    seen = data.counts
    assert dict(seen) == {0: 2, 1: 1} and list(seen) == [0, 1]
    assert data.counts is not seen  # nothing one run holds is what a later run reads
    assert "_seen" not in data.counts


# ----- 3. two symbols, one name ----------------------------------------------------------------------------

SAME_NAME = '''
import dpverify as dp

n = dp.symbol("n", integer=True)
m = dp.symbol("n", integer=True, positive=True)
x = dp.symbol("x")
y = dp.symbol("x", positive=True)

spec = dp.spec(name="same_name", claims=[dp.inequality(n, 3, where=[m <= 3], id="exhaustive"),
                                         dp.inequality(0, x + y, strict=True, id="z3")])
'''


def test_two_symbols_with_one_name_are_a_spec_error_at_the_claim(tmp_path) -> None:
    """Both claims are false (n = 4, m = 1; x = -2, y = 1): were `proved`.  Now a spec error at the line."""
    report = check(tmp_path, SAME_NAME)
    assert report["summary"]["proved"] == 0 and "proved" not in statuses(report)
    assert report["exit_code"] == 2
    [spec] = report["specs"]
    assert spec["error"].startswith("attack_spec.py:9: ") and "give the symbols different names" in spec["error"]


def test_the_claim_constructors_refuse_two_symbols_with_one_name() -> None:
    n, m = dp.symbol("n", integer=True), dp.symbol("n", integer=True, positive=True)
    with pytest.raises(SpecError, match="both named 'n'"):
        dp.inequality(n, 3, where=[m <= 3])
    with pytest.raises(SpecError, match="both named 'n'"):
        dp.identity(n + m, m + n)
    dp.inequality(n, n + 1)  # one symbol used twice is fine


def test_the_deciders_keep_two_symbols_with_one_name_apart() -> None:
    """Built past the constructors (the Identity/Inequality classes): the z3 translation gives them two
    variables, and the formula check refuses them by name."""
    from dpverify.checks.formulas.check import exhaustive, z3_attack
    from dpverify.checks.formulas.problem import Counterexample, Problem
    from dpverify.dsl.claims import Inequality
    from dpverify.engine.decide import smt, smt_values

    x, y = sympy.Symbol("x", real=True), sympy.Symbol("x", positive=True)
    tr = smt.Translator([x, y])
    assert tr.enc.variables[x].decl().name() != tr.enc.variables[y].decl().name()
    claim = Inequality(lhs=sympy.Integer(0), rhs=x + y, strict=True)
    with pytest.raises(SpecError, match="give the symbols different names"):
        Problem.from_claim(claim)
    problem = Problem(sympy.Integer(0), x + y, "<", [x, y], (), (sympy.Integer(0), x + y))
    status, *_ = z3_attack(problem, smt_values.symbol_bounds([x, y], []))
    assert isinstance(status, Counterexample), status  # x = -2, y = 1 say
    n, m = sympy.Symbol("n", integer=True), sympy.Symbol("n", integer=True, positive=True)
    problem = Problem(n, sympy.Integer(3), "<=", [n, m], (m <= 3,), (n, sympy.Integer(3)))
    bounds = smt_values.symbol_bounds([n, m], [m <= 3])
    assert bounds[n] == (None, None) and bounds[m] == (1, 3)
    assert not isinstance(exhaustive(problem, bounds), int)  # not "all points decided": n is unbounded
