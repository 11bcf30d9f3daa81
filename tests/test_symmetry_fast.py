"""symmetric=True shown from the code (dpverify.engine.datasets.orderfree) instead of on every ordering.

A program that reads its data only through order-free operations has a law that is a function of the
multiset: it is accepted with no ordering run (or one watched run per multiset).  Everything else falls
back to the full check over orderings, which refutes an order-dependent program with its witness, as
before.  The tests here fail if the fast path accepts a program whose law depends on the order: each
refused program is also run through the full check, and the hypothesis test draws programs from
symmetric and order-dependent pieces and holds the fast path to the full check's answer.
"""
from __future__ import annotations

import sys
import textwrap
import types
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpverify as dp
from dpverify.engine.datasets import symmetry
from dpverify.engine.datasets.datasets import enumerate_datasets
from dpverify.engine.datasets.orderfree import VERSION, Proof
from dpverify.engine.datasets.symmetry import check_symmetric, multisets, orderings, proof
from dpverify.engine.program.work import guard
from dpverify.errors import EnumerationTooLarge, SpecError
from dpverify.options import Options

needs_bytecode = pytest.mark.skipif(sys.version_info[:2] != VERSION, reason="orderfree reads CPython 3.11 bytecode "
                                    "only; elsewhere every program takes the full check")

PRELUDE = """\
import dpverify as dp
from fractions import Fraction
import numpy as np
THRESHOLDS = (0, 1, 2, 3)
VALUES = (0, 1, 2)
"""


def mechanism(source: str, extra: str = "") -> types.FunctionType:
    """``mech`` defined in a module of its own (the analysis resolves names in the function's globals)."""
    scope: dict = {"__name__": "mech_module"}
    exec(compile(PRELUDE + textwrap.dedent(extra) + textwrap.dedent(source), "<mech>", "exec"), scope)  # noqa: S102
    return scope["mech"]


def universe(records=(0, 1, 2), n=3):
    return dp.universe(list(records), n=n, neighbours=dp.REPLACE_ONE, symmetric=True)


def check(program, u, full: bool = False, max_work=None) -> str:
    """check_symmetric on every multiset of ``u`` at eps = 1; ``full`` forces the check over orderings."""
    datasets = enumerate_datasets(u)
    if full:
        saved = symmetry._PROOFS.copy()
        symmetry._PROOFS.clear()
        original = symmetry.proof
        symmetry.proof = lambda program, universe: "forced"  # type: ignore[assignment]
        try:
            return check_symmetric(program, u, datasets, {"eps": 1}, {}, max_work)
        finally:
            symmetry.proof = original
            symmetry._PROOFS.update(saved)
    return check_symmetric(program, u, datasets, {"eps": 1}, {}, max_work)


# ----- accepted from the code ---------------------------------------------------------------------

SYMMETRIC = {
    "bit count": ("def mech(data, eps):\n    return dp.geometric(sum(data), dp.exp(eps))", (0, 1)),
    "sum of {0, 1, 2}, clamped": ("def mech(data, eps):\n"
                                  "    return dp.geometric(sum(data), dp.exp(eps / 2), lower=0, upper=len(data))",
                                  (0, 1, 2)),
    "histogram by sums": ("def mech(data, eps):\n"
                          "    return tuple(dp.geometric(sum(1 for x in data if x == v), dp.exp(eps), lower=0,"
                          " upper=2) for v in VALUES)", (0, 1, 2)),
    "histogram by count": ("def mech(data, eps):\n"
                           "    return tuple(dp.geometric(data.count(v), dp.exp(eps), lower=0, upper=2)"
                           " for v in VALUES)", (0, 1, 2)),
    "median by sorted": ("def mech(data, eps):\n"
                         "    return dp.randomized_response(sorted(data)[len(data) // 2], eps, values=VALUES)",
                         (0, 1, 2)),
    "range by min and max": ("def mech(data, eps):\n"
                             "    return dp.geometric(max(data) - min(data), dp.exp(eps), lower=0, upper=2)",
                             (0, 1, 2)),
    "exponential mechanism scoring by counts (lambda)": (
        "def errors(data, t):\n    return sum(int(x >= t) != y for x, y in data)\n"
        "def mech(data, eps):\n"
        "    return dp.exponential(THRESHOLDS, lambda t: -Fraction(errors(data, t), len(data)), eps,"
        " sensitivity=Fraction(1, len(data)))", ((0, 0), (0, 1), (1, 0), (1, 1), (2, 1))),
    "exponential mechanism scoring by a query (score.on)": (
        "RECORDS = dp.labelled(xs=(0, 1, 2), labels=[0, 1])\n"
        "def predict(t, x):\n    return 1 if x >= t else 0\n"
        "err = dp.mean(lambda rec, t: int(predict(t, rec[0]) != rec[1]), domain=RECORDS)\n"
        "score = -err\n"
        "def mech(data, eps):\n"
        "    return dp.exponential(THRESHOLDS, score.on(data), eps, neighbours=dp.REPLACE_ONE)",
        ((0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1))),
    "exponential mechanism scoring by a query called per candidate": (
        "wrong = dp.count(lambda rec, t: (rec[0] >= t) != rec[1])\n"
        "def mech(data, eps):\n"
        "    return dp.exponential(THRESHOLDS, lambda t: -wrong(data, t), eps, sensitivity=1)",
        ((0, 0), (0, 1), (1, 0), (1, 1))),
    "median by a balance score (|count - count|)": (
        "balance = -abs(dp.count(lambda x, y: x < y, domain=VALUES) - dp.count(lambda x, y: x > y, domain=VALUES))\n"
        "def mech(data, eps):\n"
        "    return dp.exponential(VALUES, balance.on(data), eps, neighbours=dp.REPLACE_ONE)", (0, 1, 2)),
    "a dp.query(fn) score": (
        "def spread(d, t):\n    return sum(abs(x - t) for x in d)\n"
        "q = dp.query(spread)\n"
        "def mech(data, eps):\n    return dp.exponential(VALUES, q.on(data), eps, sensitivity=2)", (0, 1, 2)),
    "a dict comprehension of counts": (
        "def mech(data, eps):\n    counts = {v: data.count(v) for v in VALUES}\n"
        "    return dp.geometric(counts[1], dp.exp(eps), lower=0, upper=3)", (0, 1, 2)),
}


@needs_bytecode
@pytest.mark.parametrize("name", list(SYMMETRIC))
def test_symmetric_programs_are_shown_from_the_code(name) -> None:
    source, records = SYMMETRIC[name]
    program = mechanism(source)
    u = universe(records, n=3)
    found = proof(program, u)
    assert isinstance(found, Proof), found
    how = check(program, u)
    assert how.startswith("shown from the code"), how
    assert orderings(u, program) in (0, multisets(u))  # the guard counts the new work
    assert orderings(u, program) < orderings(u)
    assert check(program, u, full=True).startswith("every ordering")  # the full check agrees


@needs_bytecode
def test_the_reach_bit_count_at_n_30_runs_no_ordering() -> None:
    program = mechanism(SYMMETRIC["bit count"][0])
    u = universe((0, 1), n=30)
    assert orderings(u) == 2 ** 30 and orderings(u, program) == 0
    spec = dp.spec(program, universe=u, grid={dp.symbol("eps", positive=True): [1]}, claims=[dp.private(1)])
    guard(spec, program, spec.points[0], Options.validated(max_work=1000))  # the old count was 2^30 + ...
    with pytest.raises(EnumerationTooLarge):
        guard(spec, spec.mechanism, spec.points[0], Options.validated(max_work=30))  # 31 datasets + 30 pairs


@needs_bytecode
def test_a_watched_term_costs_one_run_per_multiset_and_is_checked_when_it_runs() -> None:
    """Candidates that are not known plain from the code: each run checks the term's free values."""
    program = mechanism("def errors(data, t):\n    return sum(int(x >= t) for x in data)\n"
                        "def mech(data, eps):\n    cands = tuple(THRESHOLDS)\n"
                        "    return dp.exponential(cands, lambda t: errors(data, t), eps, sensitivity=1)")
    u = universe((0, 1, 2), n=3)
    found = proof(program, u)
    assert isinstance(found, Proof) and found.needs_runs
    assert orderings(u, program) == multisets(u)
    assert check(program, u).startswith("shown from the code")


# ----- refused by the fast path, and refuted by the full check -----------------------------------

ORDERED = {
    "reads data[0]": "def mech(data, eps):\n    return dp.geometric(data[0], dp.exp(eps), lower=0, upper=2)",
    "reads data[-1] through a helper": ("def last(d):\n    return d[-1]\n"
                                        "def mech(data, eps):\n"
                                        "    return dp.geometric(last(data), dp.exp(eps), lower=0,"
                                        " upper=2)"),
    "weights by position": ("def mech(data, eps):\n"
                            "    return dp.geometric(sum(i * x for i, x in enumerate(data)), dp.exp(eps), lower=0,"
                            " upper=4)"),
    "zip with a range": ("def mech(data, eps):\n"
                         "    return dp.geometric(sum(x * i for x, i in zip(data, range(3))), dp.exp(eps),"
                         " lower=0, upper=4)"),
    "early break": ("def mech(data, eps):\n    total = 0\n    for x in data:\n        if x == 2:\n"
                    "            break\n        total += x\n"
                    "    return dp.geometric(total, dp.exp(eps), lower=0, upper=4)"),
    "iter().__next__": ("def mech(data, eps):\n"
                        "    return dp.geometric(iter(data).__next__(), dp.exp(eps), lower=0, upper=2)"),
    "a list then indexed": ("def mech(data, eps):\n"
                            "    return dp.geometric(list(data)[0], dp.exp(eps), lower=0, upper=2)"),
    "type(data) guard": ("def mech(data, eps):\n    first = data[0] if type(data) is tuple else 0\n"
                         "    return dp.geometric(first, dp.exp(eps), lower=0, upper=2)"),
    "numpy": ("def mech(data, eps):\n"
              "    return dp.geometric(int(np.asarray(data)[0]), dp.exp(eps), lower=0, upper=2)"),
    "reversed": ("def mech(data, eps):\n"
                 "    return dp.geometric(next(reversed(data)), dp.exp(eps), lower=0, upper=2)"),
    "index": "def mech(data, eps):\n    return dp.geometric(data.index(max(data)), dp.exp(eps), lower=0, upper=2)",
    "a shadowed sum": ("def sum(d):\n    return d[0]\n"
                       "def mech(data, eps):\n    return dp.geometric(sum(data), dp.exp(eps), lower=0, upper=2)"),
    "min with a key over tied records": (
        "def mech(data, eps):\n"
        "    return dp.geometric(min(data, key=lambda r: r // 2), dp.exp(eps), lower=0, upper=2)"),
    "repr": "def mech(data, eps):\n    return dp.randomized_response(repr(data)[1] == '0', eps)",
    "a generator consumed partially": ("def mech(data, eps):\n    g = (x for x in data)\n"
                                       "    return dp.geometric(next(g), dp.exp(eps), lower=0, upper=2)"),
}


@pytest.mark.parametrize("name", list(ORDERED))
def test_order_dependent_programs_are_refused_and_refuted_with_a_witness(name) -> None:
    program = mechanism(ORDERED[name])
    u = universe((0, 1, 2), n=3)
    found = proof(program, u)
    assert isinstance(found, str), f"the fast path accepted {name}: {found}"
    assert orderings(u, program) == orderings(u)  # the guard counts every ordering
    with pytest.raises(SpecError) as refused:
        check(program, u)
    assert "symmetric=True" in refused.value.problem and "orderings" in refused.value.problem


def test_a_float_sum_depends_on_the_order_and_is_refused() -> None:
    """(0.1 + 0.2) + 0.3 != 0.1 + (0.2 + 0.3): records that are floats are never shown from the code."""
    program = mechanism("def mech(data, eps):\n    return dp.randomized_response(sum(data) == 0.6, eps)")
    u = universe((0.1, 0.2, 0.3), n=3)
    assert isinstance(proof(program, u), str)
    with pytest.raises(SpecError, match="symmetric=True"):
        check(program, u)


@needs_bytecode
def test_a_float_term_is_not_a_pure_exact_term() -> None:
    program = mechanism("def mech(data, eps):\n"
                        "    return dp.randomized_response(sum(x * 0.1 for x in data) == 0.30000000000000004, eps)")
    assert "0.1" in proof(program, universe((1, 2, 3), n=3))
    program = mechanism("def mech(data, eps):\n"
                        "    return dp.randomized_response(sum(x / 10 for x in data) == 0.6, eps)")
    assert "'/'" in proof(program, universe((1, 2, 3), n=3))


SPY = """\
class Spy:
    seen = []
    def __init__(self, t):
        self.t = t
    def __le__(self, x):
        Spy.seen.append(x)
        return self.t <= x
    def __ge__(self, x):
        Spy.seen.append(x)
        return self.t >= x
    def __hash__(self):
        return hash(self.t)
    def __eq__(self, other):
        return type(other) is Spy and other.t == self.t
    def __repr__(self):
        return f"Spy({self.t})"
CANDIDATES = [Spy(0), Spy(1)]
def first_seen():
    return Spy.seen[-3] if len(Spy.seen) >= 3 else 0
"""


@needs_bytecode
def test_a_candidate_that_records_the_order_it_is_compared_in_is_caught_when_it_runs() -> None:
    """Candidates of a user's class are not plain: the term is watched, the run sees a Spy, the full check
    runs and finds the order the Spy recorded."""
    program = mechanism("def wrong(data, t):\n    return sum(int(x >= t) for x in data)\n"
                        "def mech(data, eps):\n"
                        "    chosen = dp.exponential(CANDIDATES, lambda t: wrong(data, t), eps, sensitivity=1)\n"
                        "    return (chosen.t, first_seen())", extra=SPY)
    u = universe((0, 1, 2), n=3)
    found = proof(program, u)
    # the program reaches a user's object (its comparison methods are code that is not read): refused before
    # any run -- or, were it accepted, watched and caught when it runs
    if isinstance(found, Proof):
        assert found.needs_runs
        datasets = enumerate_datasets(u)
        assert symmetry._watched_runs(program, datasets, {"eps": 1}, {}, found) is not None  # a Spy was seen
    else:
        assert "Spy" in found and "not read" in found
    with pytest.raises(SpecError, match="symmetric=True"):
        check(program, u)


@needs_bytecode
def test_a_nonlocal_rebinding_unmarks_a_plain_cell() -> None:
    program = mechanism("def mech(data, eps):\n    v = 1\n"
                        "    def change():\n        nonlocal v\n        v = 2\n"
                        "    return dp.geometric(sum(1 for x in data if x == v), dp.exp(eps), lower=0, upper=3)")
    found = proof(program, universe((0, 1, 2), n=2))
    # refused (a function assigns a variable of another one), or v watched, never assumed plain
    assert (isinstance(found, Proof) and found.needs_runs) or "assigns the variable 'v'" in found


def test_the_fallback_is_refused_up_front_when_its_orderings_exceed_the_limit() -> None:
    program = mechanism(ORDERED["reads data[0]"])
    u = universe((0, 1, 2), n=3)
    with pytest.raises(EnumerationTooLarge) as refused:
        check(program, u, max_work=10)
    assert "could not be shown from the code" in refused.value.problem and "--max-work" in refused.value.fix


# ----- random programs: the fast path never accepts what the full check refutes ------------------

PIECES = [
    "sum(data)", "len(data)", "max(data)", "min(data)", "sorted(data)[0]", "sorted(data)[-1]",
    "sum(x * x for x in data)", "sum(1 for x in data if x > 0)", "data.count(1)", "data[0]", "data[-1]",
    "sum(i * x for i, x in enumerate(data))", "data.index(max(data))", "list(data)[1]",
    "sum(x for x, _ in zip(data, range(1)))", "(data[0] - data[1])", "sum([x - 1 for x in data])",
    "int(sum(x * 0.1 for x in data) * 10)", "int(sum(x / 3 for x in data) * 3)", "sum(x % 2 for x in data)",
    "sum(max(x, 1) for x in data)", "len([x for x in data if x])", "sum(sorted(data)[:1])",
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=3), st.sampled_from(["+", "-", "*"]))
def test_random_programs_agree_with_the_full_check(pieces, op) -> None:
    expression = f" {op} ".join(pieces)
    program = mechanism(f"def mech(data, eps):\n    return dp.geometric(({expression}) % 3, dp.exp(eps),"
                        " lower=0, upper=2)")
    u = universe((0, 1, 2), n=2)
    try:
        full = check(program, u, full=True)
    except SpecError:
        full = None
    found = proof(program, u)
    if isinstance(found, Proof):
        assert full is not None, f"the fast path accepted an order-dependent program: {expression}"
        assert check(program, u).startswith("shown from the code")
    assert all(p not in expression for p in ("data[", "enumerate", "index", "list(", "zip", "0.1", "/ 3")) \
        or isinstance(found, str)


@needs_bytecode
def test_a_program_that_rebinds_a_builtin_it_calls_is_refused() -> None:
    """``sum`` is not module-level when the code is read, but the program makes it so on its first run."""
    program = mechanism("def mech(data, eps):\n    global sum\n    total = sum(data)\n"
                        "    sum = lambda d: d[0]\n    return dp.geometric(total, dp.exp(eps), lower=0, upper=2)")
    assert "STORE_GLOBAL 'sum'" in proof(program, universe((0, 1, 2), n=2))


NOT_SHOWN = {
    "a uniformly chosen record": ("def mech(data, eps):\n"
                                  "    return dp.randomized_response(dp.uniform(data), eps, values=VALUES)"),
    "a max_of query": ("top = dp.max_of(lambda x, t: -abs(x - t), domain=VALUES)\n"
                       "def mech(data, eps):\n    return dp.exponential(VALUES, top.on(data), eps, sensitivity=2)"),
}


@pytest.mark.parametrize("name", list(NOT_SHOWN))
def test_symmetric_laws_not_shown_from_the_code_are_accepted_by_the_full_check(name) -> None:
    program = mechanism(NOT_SHOWN[name])
    u = universe((0, 1, 2), n=2)
    assert isinstance(proof(program, u), str)
    assert check(program, u).startswith("every ordering of every multiset")


CATCHER = """\
def first_bad(f):
    try:
        f()
    except ValueError as e:
        return str(e)[-2]
    return 'z'
def drain(g):
    try:
        for _ in g:
            pass
    except ValueError as e:
        return str(e)[-2]
    return 'z'
"""


@pytest.mark.parametrize("source", [
    "def mech(data, eps):\n    g = lambda: sum(int(s) for s in data)\n"
    "    return dp.randomized_response(first_bad(g), eps, values=('a', 'b', 'c', 'z'))",
    "def mech(data, eps):\n    g = (sum(int(s) for s in data) for _ in (1,))\n"
    "    return dp.randomized_response(drain(g), eps, values=('a', 'b', 'c', 'z'))",
])
def test_an_error_whose_message_names_the_first_bad_record_cannot_escape_to_unread_code(source) -> None:
    """int('a') fails on the first bad record in the data's order: a closure or generator that uses the data
    and reaches code that is not read (which catches the error and releases its text) is refused."""
    program = mechanism(source, extra=CATCHER)
    u = universe(("a", "b", "c"), n=2)
    assert isinstance(proof(program, u), str)
    with pytest.raises(SpecError, match="symmetric=True"):
        check(program, u)
