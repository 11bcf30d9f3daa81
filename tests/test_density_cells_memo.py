"""The density cells' shared results are the ones computed afresh.

:func:`dpverify.engine.continuous.density_cells.cells` keeps normal forms, piece values at candidate
points, slot suprema and e^(rate t) of the branch and bound with the table (several pairs of laws
meet the same densities, and the claims of one table meet the same cells), and its second pass keeps
the first pass's decided cells.  These tests compare every cell with the one computed by
:func:`~dpverify.engine.continuous.density_cells._cell` with no memo at all (fresh normal forms,
fresh evaluations, a fresh branch and bound per slot): the same loss, lower bound, points, choices,
decision and reason, interval end for interval end -- on random sparse vector variants that release
noisy values (so the branch and bound runs) and on the Laplace mechanism.
"""
from __future__ import annotations

import math
from fractions import Fraction

import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpverify as dp
from dpverify.engine.continuous import density_cells
from dpverify.engine.continuous.density_cells import _cell, cells
from dpverify.engine.datasets.datasets import enumerate_datasets, neighbour_pairs
from dpverify.engine.program.reading import all_distributions

SETTINGS = settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def released_svt(threshold_scale: Fraction, query_scale: Fraction):
    """Sparse vector (c = 1) that releases the noisy answer on above (Lyu Alg. 3 / BadGapSVT shapes)."""
    def mech(q, eps):
        rho = dp.laplace(1, threshold_scale / eps)
        out = []
        for answer in q:
            noisy = dp.laplace(answer, query_scale / eps)
            if noisy >= rho:
                out.append(noisy)
                break
            out.append(False)
        return tuple(out)
    return mech


def laplace_sum(q, eps):
    return dp.laplace(sum(q), 1 / eps)


def _key(value):
    if value is None or value == math.inf:
        return value
    return value._mpi_


def _same(a, b) -> None:
    assert (a.x, a.x_prime, a.output) == (b.x, b.x_prime, b.output)
    assert _key(a.loss) == _key(b.loss)
    assert _key(a.lower) == _key(b.lower)
    assert (a.decided, a.exact, a.below, a.reason) == (b.decided, b.exact, b.below, b.reason)
    assert a.points == b.points
    assert a.choices == b.choices


def _fresh(table, left, right, bound, search):
    """Every cell by :func:`_cell` with no memo, in the order :func:`cells` gives them."""
    out, seen = [], set()
    for i, j in zip(left.tolist(), right.tolist()):
        for a, b in ((i, j), (j, i)):
            la, lb = table.law_of[a], table.law_of[b]
            if la == lb or (la, lb) in seen:
                continue
            seen.add((la, lb))
            for output, w in table.laws[la].items():
                out.append(_cell(table.datasets[a], table.datasets[b], output, w, table.laws[lb].get(output),
                                 table.backend, bound, search))
    return out


def _compare(program, universe, e, claims) -> int:
    datasets = enumerate_datasets(universe)
    left, right = neighbour_pairs(universe, datasets)
    table = all_distributions(program, datasets, {"eps": sympy.nsimplify(e)}, 50)
    searched = 0
    for claim in claims:  # several claims on one table: the memo outlives each call
        bound = table.backend.exp(table.backend.num(claim))
        first = cells(table, left, right, bound, search=False)
        for got, want in zip(first, _fresh(table, left, right, bound, False), strict=True):
            _same(got, want)
        second = cells(table, left, right, bound, earlier=first)
        for got, want in zip(second, _fresh(table, left, right, bound, True), strict=True):
            _same(got, want)
        searched += sum(1 for c in first if not c.decided)
    return searched


@SETTINGS
@given(threshold_scale=st.sampled_from([Fraction(1), Fraction(2), Fraction(3)]),
       query_scale=st.sampled_from([Fraction(1), Fraction(2), Fraction(4)]),
       e=st.sampled_from([Fraction(1, 2), Fraction(1)]),
       m=st.just(2))
def test_memoised_cells_equal_fresh_cells_on_released_sparse_vectors(threshold_scale, query_scale, e, m) -> None:
    universe = dp.answers([0, 1], m, neighbours=dp.linf_one)
    _compare(released_svt(threshold_scale, query_scale), universe, e, [e, 3 * e / 2])


def test_the_branch_and_bound_runs_in_the_compared_cells() -> None:
    """The comparison above reaches the searched slots (pieces with several terms), not only exact ones."""
    universe = dp.answers([0, 1], 3, neighbours=dp.linf_one)
    assert _compare(released_svt(Fraction(2), Fraction(2)), universe, Fraction(1, 2), [Fraction(3, 4)]) > 0


def test_memoised_cells_equal_fresh_cells_on_the_laplace_mechanism() -> None:
    universe = dp.answers([0, 1, 2], 2, neighbours=dp.linf_one)
    _compare(laplace_sum, universe, Fraction(1, 2), [Fraction(1, 2), Fraction(1)])


def test_a_second_pass_recomputes_only_undecided_cells(monkeypatch) -> None:
    """``earlier``'s decided cells are kept as they are; only undecided ones reach :func:`_cell` again."""
    universe = dp.answers([0, 1], 3, neighbours=dp.linf_one)
    datasets = enumerate_datasets(universe)
    left, right = neighbour_pairs(universe, datasets)
    table = all_distributions(released_svt(Fraction(2), Fraction(2)), datasets, {"eps": sympy.Rational(1, 2)}, 50)
    bound = table.backend.exp(table.backend.num(Fraction(3, 4)))
    first = cells(table, left, right, bound, search=False)
    calls = []
    original = density_cells._cell
    monkeypatch.setattr(density_cells, "_cell", lambda *a, **k: calls.append(a) or original(*a, **k))
    second = cells(table, left, right, bound, earlier=first)
    assert len(calls) == sum(1 for c in first if not c.decided) > 0
    assert all(s is f for s, f in zip(second, first) if f.decided)
