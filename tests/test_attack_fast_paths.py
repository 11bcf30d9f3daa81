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
from types import MappingProxyType

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


# ----- 1. a learner that tells the blind stand-in from a real sample ---------------------------------------

BLIND_HASATTR = '''
from fractions import Fraction
import dpverify as dp

POPULATION = {0: Fraction(1, 10), 1: Fraction(9, 10)}


def sneaky(data):
    ones = data.counts[1]
    if ones * 5 > len(data) * 4 and not hasattr(data, "_refuse"):
        return 0
    return int(ones * 2 > len(data))


spec = dp.spec(sneaky, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
               claims=[dp.sample_complexity(population=POPULATION, error=lambda o: Fraction(1 - o, 2),
                                            alpha=Fraction(1, 4), beta=Fraction(1, 2), bound=6, up_to=8)])
'''

POPULATION = {0: Fraction(1, 10), 1: Fraction(9, 10)}
ONE = 1


def by_hasattr(data):
    ones = data.counts[1]
    if ones * 5 > len(data) * 4 and not hasattr(data, "_refuse"):
        return 0
    return int(ones * 2 > len(data))


def by_class_name(data):
    ones = data.counts[1]
    if ones * 5 > len(data) * 4 and data.__class__.__name__ == "Sample":
        return 0
    return int(ones * 2 > len(data))


def by_tuple_add(data):
    ones = data.counts[1]
    if ones * 5 > len(data) * 4 and tuple.__add__((), data)[0].__class__ is int:
        return 0
    return int(ones * 2 > len(data))


def by_tuple_getitem(data):
    ones = data.counts[1]
    if ones * 5 > len(data) * 4 and tuple.__getitem__(data, 0) is tuple.__getitem__(data, 1):
        return 1 - int(tuple.__getitem__(data, 0) is ONE)
    return int(ones * 2 > len(data))


def by_class(data):
    ones = data.counts[1]
    if ones * 5 > len(data) * 4 and data.__class__ is Sample:
        return 0
    return int(ones * 2 > len(data))


def getattr(d, name, default=None):  # noqa: A001 (shadows the builtin on purpose: a helper, not the builtin)
    return d[0]


def by_a_module_getattr(data):
    counts = getattr(data, "counts", None)
    return int(counts is None)


def counts_only(data):
    ones = data.counts[1]
    return int(ones * 2 > len(data))


def _sum(program):
    from dpverify.engine.datasets.multisets import MultisetSum
    return MultisetSum(program, {}, tuple(POPULATION.items()), lambda o: o == 0, 30)


def test_the_blind_hasattr_learner_is_refuted(tmp_path) -> None:
    """True P = 0.901585 > beta = 1/2 at n = 6: was `verified` (the blind runs never saw a real sample)."""
    report = check(tmp_path, BLIND_HASATTR)
    assert statuses(report) == ["refuted"], report
    assert report["exit_code"] == 1


@pytest.mark.parametrize("program", [by_hasattr, by_class_name, by_class, by_tuple_add, by_tuple_getitem,
                                     by_a_module_getattr])
def test_a_learner_that_can_tell_the_stand_in_apart_is_not_summed_blind(program) -> None:
    from dpverify.engine.datasets import blind
    assert blind.admit(program) is None  # the whitelist gate: hasattr, a dunder, tuple's methods
    for n in (6, 7, 8):
        assert blind.enclosure(_sum(program), n) is None, (program.__name__, n)


def test_the_gate_admits_a_learner_of_the_counts_and_the_blind_sum_is_the_ordinary_one() -> None:
    from dpverify.engine.datasets import blind
    assert blind.admit(counts_only) is not None
    for n in (6, 8):
        value, ordinary = blind.enclosure(_sum(counts_only), n), _sum(counts_only).at(n)
        assert value is not None and value._mpi_ == ordinary._mpi_


def test_lopsided_probes_catch_what_the_gate_would_miss(monkeypatch) -> None:
    """The second line: with the gate switched off, the probes now run every record one value (all ones), where
    the hasattr learner differs from its blind runs; and the stand-in refuses hasattr and __class__."""
    from dpverify.engine.datasets import blind, orderfree
    monkeypatch.setattr(blind, "admit", lambda program: orderfree.Proof())
    for program in (by_hasattr, by_class_name, by_class):
        for n in (6, 7, 8):
            assert blind.enclosure(_sum(program), n) is None, (program.__name__, n)
    data = blind.blind((0, 1), (1, 5))
    assert type(data).__name__ == "Sample" and len(data) == 6 and dict(data.counts) == {0: 1, 1: 5}
    for probe in (lambda: hasattr(data, "_refuse"), lambda: data.__class__, lambda: data.__dict__):
        with pytest.raises(blind.Refused):
            probe()
    # what the review saw, with the gate off, the stand-in's attributes open and the old probes (the most even
    # count vectors only): by_class summed blind, its lopsided misbehaviour unseen
    monkeypatch.setattr(blind.BlindSample, "__getattribute__", lambda self, name: (
        MappingProxyType(dict(tuple.__getattribute__(self, "__dict__")["_counts"])) if name == "counts"
        else object.__getattribute__(self, name)))
    assert blind.enclosure(_sum(by_class), 6) is None  # the lopsided probes alone catch it
    monkeypatch.setattr(blind, "LOPSIDED", 0)
    assert blind.enclosure(_sum(by_class), 6) is not None


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


def test_a_learner_that_marks_its_sample_object_is_not_verified(tmp_path) -> None:
    """The same mark left in the sample object's own __dict__ (past the read-only counts): each replay of the
    program now gets a new sample object (Sample.replay), so the mark is never seen: refuted, P = 1/2."""
    source = COUNTS_MUTATION.replace('''    fresh = "_seen" not in data.counts
    data.counts["_seen"] = True''', '''    store = data.__dict__
    fresh = "_seen" not in store
    store["_seen"] = True''')
    assert "store" in source
    report = check(tmp_path, source)
    assert statuses(report) == ["refuted"], report


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
