"""The float-speed screening (dpverify/engine/screening.py, engine/loss/pairs.py) against the full certified
computation: on random small discrete mechanisms the screened achieved epsilon and hockey-stick
divergence equal the ones obtained by certifying every cell in interval arithmetic, the float
enclosures contain the exact probabilities (tiny, huge-mantissa and zero ones included), and
mutants whose violation sits in one cell out of many are still refuted."""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpverify as dp
from dpverify.engine.loss import pairs as loss_module
from dpverify.engine.loss import screening
from dpverify.engine.datasets.datasets import enumerate_datasets, neighbour_pairs
from dpverify.engine.loss.pairs import LossTable, hockey_stick_pair
from dpverify.engine.program.reading import all_distributions

from .helpers import eps

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RECORDS = (0, 1, 2)
UNIVERSE = dp.universe(list(RECORDS), n=2, neighbours=dp.REPLACE_ONE)
DATASETS = enumerate_datasets(UNIVERSE)
# a weight per (dataset, output), small integers, then up to two edits: 0 leaves the output out (an
# infinite loss when a neighbour has it), "tiny" is 2^-1100 (below the smallest normal double, so the
# screening takes its two-bound pass)
edits = st.lists(st.tuples(st.integers(-1, len(DATASETS) - 1), st.integers(0, 2), st.sampled_from([0, "tiny"])),
                 max_size=2)  # dataset -1: the whole output column (tiny under every law: finite ratios)
law_tables = st.builds(
    lambda rows, changes: [[changes_at(changes, k, o, w) for o, w in enumerate(row)] for k, row in enumerate(rows)],
    st.lists(st.lists(st.integers(1, 6), min_size=3, max_size=3), min_size=len(DATASETS), max_size=len(DATASETS)),
    edits)


def changes_at(changes: list, k: int, o: int, w: object) -> object:
    for dataset, output, value in changes:
        if dataset in (k, -1) and output == o:
            w = value if value == 0 else ("tiny", w[1] if isinstance(w, tuple) else w)
    return w

def categorical_mechanism(rows: list) -> object:
    """A mechanism whose law on the k-th dataset is the k-th row of weights, normalised."""
    laws = {}
    for data, row in zip(DATASETS, rows):
        raw = [Fraction(w[1], 2 ** 1100) if isinstance(w, tuple) else Fraction(w) for w in row]
        if not any(raw):
            raw[0] = Fraction(1)
        total = sum(raw)
        laws[data] = {o: w / total for o, w in enumerate(raw) if w}

    def mech(data, eps):
        return dp.categorical(laws[tuple(data)])
    return mech


def table_of(rows: list, precision: int = 40):
    mech = categorical_mechanism(rows)
    table = all_distributions(mech, DATASETS, {"eps": 1}, precision)
    left, right = neighbour_pairs(UNIVERSE, DATASETS)
    return table, left, right


def every_cell_certified(table, left, right):
    """The achieved epsilon by certifying every (ordered pair, output) cell in interval arithmetic (a
    pair of datasets with the same law has loss exactly 0)."""
    ctx = table.backend.ctx
    lows, highs = [], []
    for i, j in itertools.chain(zip(left.tolist(), right.tolist()), zip(right.tolist(), left.tolist())):
        if table.law_of[i] == table.law_of[j]:
            lows.append(0)
            highs.append(0)
            continue
        law, law_prime = table.laws[table.law_of[i]], table.laws[table.law_of[j]]
        for o, p in law.items():
            q = law_prime.get(o)
            if q is None:
                return math.inf
            loss = ctx.log(p) - ctx.log(q)
            lows.append(loss.a)
            highs.append(loss.b)
    return (max(lows), max(highs)) if lows else (0, 0)


@SETTINGS
@given(rows=law_tables)
def test_screened_achieved_epsilon_equals_every_cell_certified(rows) -> None:
    table, left, right = table_of(rows)
    achieved, cell = LossTable(table, left, right).max_loss()
    expected = every_cell_certified(table, left, right)
    if expected == math.inf:
        assert achieved == math.inf and cell is not None and cell.p_prime is None
        return
    assert (achieved.a, achieved.b) == expected
    if expected[1] > 0:  # some pair of distinct laws: a cell attaining the maximum is shown
        assert cell is not None and cell.loss.b >= expected[0]


@SETTINGS
@given(rows=law_tables)
def test_merged_and_unmerged_pairs_agree(rows) -> None:
    """Repeated pairs of laws merged through the dense count, or screened one by one: the same result."""
    table, left, right = table_of(rows)
    merged = LossTable(table, left, right).max_loss()[0]
    ctx = table.backend.ctx
    merged_delta, _ = LossTable(table, left, right).hockey_stick(ctx.mpf(1) / 2)
    saved = loss_module._DENSE
    loss_module._DENSE = 0
    try:
        single = LossTable(table, left, right)
        assert single._keys is None
        unmerged = single.max_loss()[0]
        unmerged_delta, _ = single.hockey_stick(ctx.mpf(1) / 2)
    finally:
        loss_module._DENSE = saved
    assert merged == unmerged if merged == math.inf else (merged.a, merged.b) == (unmerged.a, unmerged.b)
    assert (merged_delta.a, merged_delta.b) == (unmerged_delta.a, unmerged_delta.b)


@SETTINGS
@given(rows=law_tables, e=st.sampled_from([Fraction(0), Fraction(1, 3), Fraction(2)]))
def test_screened_hockey_stick_equals_every_pair_certified(rows, e) -> None:
    table, left, right = table_of(rows)
    ctx = table.backend.ctx
    e_eps = ctx.exp(ctx.mpf(e.numerator) / e.denominator)
    value, _ = LossTable(table, left, right).hockey_stick(ctx.mpf(e.numerator) / e.denominator)
    full = [hockey_stick_pair(ctx, table.laws[table.law_of[i]], table.laws[table.law_of[j]], e_eps)
            for i, j in itertools.chain(zip(left.tolist(), right.tolist()), zip(right.tolist(), left.tolist()))]
    top = max(v.b for v in full)
    assert value.a <= top and max(v.a for v in full) <= value.b
    assert value.b == top or value.b >= max(v.a for v in full)


@SETTINGS
@given(rows=law_tables)
def test_float_enclosures_contain_the_exact_probabilities(rows) -> None:
    table, _, _ = table_of(rows, precision=30)
    enc = screening.enclose(table)
    mech = categorical_mechanism(rows)
    column = {o: k for k, o in enumerate(enc.outputs)}
    for r, law in enumerate(table.laws):
        data = DATASETS[table.law_of.index(r)]
        for o, w in law.items():
            exact = Fraction(mech.__closure__[0].cell_contents[data][o])
            lo, hi = enc.lo[r, column[o]], enc.hi[r, column[o]]
            assert Fraction(lo) <= exact <= Fraction(hi)
        for o in set(enc.outputs) - set(law):
            assert enc.lo[r, column[o]] == enc.hi[r, column[o]] == 0.0


bounds = st.tuples(st.floats(1e-6, 1.0), st.sampled_from([0.0, 2.0 ** -52, 1e-9, 1.0, "absent", "reaches 0"]))


@SETTINGS
@given(cells=st.lists(st.lists(bounds, min_size=3, max_size=3), min_size=2, max_size=6))
def test_screen_keeps_every_cell_that_may_reach_its_lower_bound(cells) -> None:
    """Exact rationals over random float enclosures: the screening's ``best`` is at most the largest
    certified lower bound of a ratio, and every cell whose certified upper bound reaches it is kept."""
    lo = np.array([[0.0 if w in ("absent", "reaches 0") else h * (1 - w) for h, w in row] for row in cells])
    hi = np.array([[0.0 if w == "absent" else h for h, w in row] for row in cells])
    enc = screening.Enclosures([0, 1, 2], lo, hi, np.ascontiguousarray(hi.T), screening._width(lo, hi))
    a, b = (np.array(side, dtype=np.int64) for side in zip(*itertools.combinations(range(len(cells)), 2)))
    scr = screening.screen(enc, a, b)

    def ratio(num, den):
        return Fraction(0) if num == 0 else (math.inf if den == 0 else Fraction(num) / Fraction(den))
    lower = max(ratio(lo[x, o], hi[y, o]) for r in range(len(a)) for x, y in ((a[r], b[r]), (b[r], a[r]))
                for o in range(3) if hi[x, o] > 0)
    assert scr.best <= lower
    forward, backward = screening.reaching(scr, scr.best)
    for rows, swap in ((set(forward.tolist()), False), (set(backward.tolist()), True)):
        for r in range(len(a)):
            x, y = (b[r], a[r]) if swap else (a[r], b[r])
            reach = [o for o in range(3) if hi[x, o] > 0 and ratio(hi[x, o], lo[y, o]) >= scr.best]
            if reach:
                assert r in rows
                assert set(reach) <= set(screening.cells_reaching(enc, int(x), int(y), scr.best).tolist())


def test_enclosures_of_huge_mantissas_and_special_values() -> None:
    """At 5,000 digits a mantissa has about 16,600 bits (float() of it would overflow)."""
    ctx = mpmath.iv
    with mpmath.workdps(5000):
        thirds = mpmath.iv.mpf(1) / 3
    lo = screening._floats([thirds._mpi_[0]], lower=True)[0]
    hi = screening._floats([thirds._mpi_[1]], lower=False)[0]
    assert Fraction(lo) < Fraction(1, 3) < Fraction(hi) and hi - lo < 1e-15
    zero = ctx.mpf(0)._mpi_[0]
    assert screening._floats([zero], lower=True)[0] == 0.0 == screening._floats([zero], lower=False)[0]
    infinity = mpmath.libmp.finf
    assert screening._floats([infinity], lower=False)[0] == math.inf
    assert screening._floats([infinity], lower=True)[0] == 0.0


def test_the_one_division_pass_needs_a_width_bound() -> None:
    """A probability below the smallest normal double sends the table to the two-bound pass."""
    rows = [[1, 1, 1]] * len(DATASETS)
    table, _, _ = table_of(rows)
    assert screening.enclose(table).width is not None
    rows = [[("tiny", 1), 1, 1]] + [[1, 1, 1]] * (len(DATASETS) - 1)
    table, _, _ = table_of(rows)
    assert screening.enclose(table).width is None


def _one_bad_cell(bad_numerator: int):
    """Randomized response on 4-record sequences of length 3 (64 datasets, 576 pairs) whose law on one
    dataset, (0, 0, 0), has P(1) = bad/8 instead of 1/4: its neighbours have P(1) = 1/4, so e^eps = 3
    allows at most 6/8 there (a tie)."""
    rr = {0: {0: Fraction(3, 4), 1: Fraction(1, 4)}, 1: {0: Fraction(1, 4), 1: Fraction(3, 4)}}

    def mech(data, eps):
        if tuple(data) == (0, 0, 0):
            return dp.categorical({0: 1 - Fraction(bad_numerator, 8), 1: Fraction(bad_numerator, 8)})
        return dp.categorical(rr[int(sum(data) >= 5)])
    universe = dp.universe([0, 1, 2, 3], n=3, neighbours=dp.REPLACE_ONE)
    return dp.spec(mech, universe=universe, grid={eps: [sympy_log3()]}, claims=[dp.private(eps)])


def sympy_log3():
    import sympy
    return sympy.log(3)


def test_a_violation_in_one_cell_out_of_many_is_refuted() -> None:
    [result] = dp.check(_one_bad_cell(7), proofs=False)  # P(1) = 7/8 against 1/4 on a neighbour: ratio 3.5
    assert result.status.value == "refuted", result.message
    assert (0, 0, 0) in (result.witness.x, result.witness.x_prime)


def test_the_tight_unmutated_mechanism_holds_and_ties_are_decided_exactly() -> None:
    [result] = dp.check(_one_bad_cell(6), proofs=False)  # 3/4: the tie ratio 3 everywhere
    assert result.status.value == "verified", result.message


def test_an_output_possible_under_one_dataset_only_is_refuted() -> None:
    def mech(data, eps):
        if tuple(data) == (2, 2):
            return dp.categorical({0: Fraction(1, 2), 1: Fraction(1, 4), 2: Fraction(1, 4)})
        return dp.categorical({0: Fraction(1, 2), 1: Fraction(1, 2)})
    spec = dp.spec(mech, universe=UNIVERSE, grid={eps: [5]}, claims=[dp.private(eps)])
    [result] = dp.check(spec, proofs=False)
    assert result.status.value == "refuted" and result.witness.ratio == "inf", result.message


@pytest.mark.parametrize("claim", [Fraction(1), Fraction(2)])
def test_a_barely_false_claim_at_a_huge_ratio_is_refuted(claim) -> None:
    """Probabilities of 2^-1100 (the two-bound pass) with the claim just under the achieved loss."""
    tiny = Fraction(1, 2 ** 1100)

    def mech(data, eps):
        scale = 3 if tuple(data) == (1, 1) else 1
        return dp.categorical({0: scale * tiny, 1: 1 - scale * tiny})
    spec = dp.spec(mech, universe=UNIVERSE, grid={eps: [claim]}, claims=[dp.private(eps)])
    [result] = dp.check(spec, proofs=False)
    expected = "refuted" if claim < Fraction(1099, 1000) else "verified"  # ln 3 = 1.0986...
    assert result.status.value == expected, result.message
    assert np.isclose(float(result.evidence.achieved_epsilon), math.log(3))
