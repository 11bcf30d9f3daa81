"""The proof for every eps in one variable, reduced (checks/privacy/proof.py ``_prove_one``): each distinct weight
read once (engine/decide/wreader.py, integer coefficients), each pair of distinct laws once, each distinct
constraint decided once (engine/decide/positivity.py ``find_point_dense``).

A reduction may not drop a constraint: the reduced constraint set is held equal to the brute-force one
(every neighbouring pair, both directions, every output, each constraint built by the general reading's
sympy polynomials and normalised by ``_normalised``), on the threshold learner and on mutants of it whose only
violation sits in one direction of one pair of laws; the mutants are refuted end to end (the grid holds, the
proof finds the eps that breaks it); and mutants of the reduction itself are caught by these references.
"""
from __future__ import annotations

from fractions import Fraction

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import dpverify as dp
from dpverify.checks import Workspace
from dpverify.checks.privacy import proof
from dpverify.engine.decide.positivity import find_point, find_point_dense, shift_one
from dpverify.engine.decide.wreader import read
from dpverify.engine.program.symbolic import basis, rational_function, symbolic_laws
from dpverify.engine.program.work import params
from dpverify.options import Options

eps = dp.symbol("eps", positive=True)
XS = (0, 1, 2)
THRESHOLDS = (0, 1, 2, 3)
RECORDS = dp.labelled(xs=XS, labels=[0, 1])
error = dp.mean(lambda rec, t: int((1 if rec[0] >= t else 0) != rec[1]), domain=RECORDS)
score = -error


def learner(data, eps):
    """The threshold learner: the exponential mechanism, score minus the empirical error (Delta = 1/n)."""
    return dp.exponential(THRESHOLDS, score.on(data), eps, neighbours=dp.REPLACE_ONE)


def leak_one_dataset(data, eps):
    """Leaks threshold 3 with probability 1/10 on one dataset only (all records (2, 1), the last multiset):
    the only violations are from that dataset to its neighbours, for output 3, for small eps."""
    if data.count((2, 1)) == len(data) and dp.bernoulli(Fraction(1, 10)):
        return 3
    return dp.exponential(THRESHOLDS, score.on(data), eps, neighbours=dp.REPLACE_ONE)


def leak_count(data, eps):
    """Releases min(#(0, 0), 3) with probability 1/10: a leak on every pair that changes that count."""
    if dp.bernoulli(Fraction(1, 10)):
        return min(data.count((0, 0)), 3)
    return dp.exponential(THRESHOLDS, score.on(data), eps, neighbours=dp.REPLACE_ONE)


def _spec(program, n, factor=1):
    return dp.spec(program, grid={eps: [1, 2]}, claims=[dp.private(factor * eps)],
                   universe=dp.universe(RECORDS, n=n, neighbours=dp.REPLACE_ONE, symmetric=True))


def _reduced_and_reference(spec):
    """The reduced constraint set (``constraints_one``) and the brute-force one, both as canonical tuples."""
    [claim] = spec.claims
    ws = Workspace(Options.validated())
    datasets, left, right = ws.datasets(spec)
    values = {**params(spec.points[0]), "eps": eps}
    laws = symbolic_laws(spec.mechanism, datasets, values, {})
    bound = sympy.exp(claim.epsilon)
    weights = list(dict.fromkeys(w for law in laws.laws for w in law.values()))
    base = basis(weights + [bound], [eps])
    dense, numbered = proof._dense_laws(laws.laws, base)
    reduced = proof.constraints_one(laws.law_of, dense, numbered, proof._dense_weight(bound, base),
                                    datasets, left, right)
    assert isinstance(reduced, dict)
    (w,) = base.variables.values()
    bound_num, bound_den = rational_function(bound, base)
    reference = set()
    for i, j in zip(left.tolist(), right.tolist()):
        for x, y in ((i, j), (j, i)):
            law_x, law_y = laws.laws[laws.law_of[x]], laws.laws[laws.law_of[y]]
            for o, weight in law_x.items():
                num, den = rational_function(weight, base)
                num_y, den_y = rational_function(law_y[o], base)
                h = proof._normalised(bound_num * num_y * den - num * den_y * bound_den)
                coefficients = [int(c) for c in reversed(sympy.Poly(h, w).all_coeffs())]
                while coefficients and coefficients[-1] == 0:
                    coefficients.pop()
                reference.add(tuple(coefficients))
    return set(reduced), reference, (datasets, left, right)


@pytest.mark.parametrize("program, n", [(learner, 2), (learner, 3), (leak_one_dataset, 2), (leak_one_dataset, 3),
                                        (leak_count, 3)])
def test_the_reduced_constraints_are_every_pairs_constraints(program, n) -> None:
    reduced, reference, _ = _reduced_and_reference(_spec(program, n, 2))
    assert reduced == reference and len(reference) > 1


@pytest.mark.parametrize("program", [leak_one_dataset, leak_count])
@pytest.mark.parametrize("n", [2, 3])
def test_mutants_of_the_learner_that_hold_on_the_grid_are_refuted_by_the_proof(program, n) -> None:
    for factor in (2, 3):
        results = dp.check(_spec(program, n, factor))
        assert [r.status.value for r in results] == ["refuted", "refuted"]
        assert "holds at this grid point but fails for eps" in results[0].message
        assert "found by the decision procedure" in results[0].message


def test_the_learner_is_proved_by_the_reduced_proof_itself() -> None:
    """The finite-universe proof (not only the exponential mechanism's structural one) proves the learner."""
    spec = _spec(learner, 3)
    [claim] = spec.claims
    ws = Workspace(Options.validated())
    table = ws.table(spec, spec.mechanism, spec.points[0])
    found = proof.prove_private(spec, spec.mechanism, claim, spec.points[0], table, ws)
    assert found.status.value == "proved" and found.method == "exact real-root isolation"
    assert "distinct polynomial constraints" in found.message


def test_a_reduction_that_drops_the_reverse_direction_is_caught(monkeypatch) -> None:
    """Mutant of the reduction: each pair of laws read in its first direction only (the dataset pairs come
    as i < j, and leak_one_dataset's leaking multiset is the last).  The reference comparison above sees the
    missing constraints."""
    original = proof.constraints_one

    def one_direction(law_of, dense, numbered, bound, datasets, left, right):
        out = {}
        bound_num, bound_den = bound
        for i, j in zip(left.tolist(), right.tolist()):
            a, b = law_of[i], law_of[j]
            if a == b:
                continue
            for o, u in numbered[a].items():
                (num, den), (num_y, den_y) = dense[u], dense[numbered[b][o]]
                h = proof._canonical(proof._sub(proof._mul(proof._mul(bound_num, num_y), den),
                                                proof._mul(proof._mul(num, den_y), bound_den)))
                out.setdefault(h, (datasets[i], datasets[j], o))
        return out

    spec = _spec(leak_one_dataset, 3, 2)
    monkeypatch.setattr(proof, "constraints_one", one_direction)
    reduced, reference, _ = _reduced_and_reference(spec)
    assert reduced != reference  # the reference test catches the mutant
    monkeypatch.setattr(proof, "constraints_one", original)
    assert [r.status.value for r in dp.check(spec)] == ["refuted", "refuted"]


def test_a_reduction_that_groups_laws_by_a_coarse_key_is_caught(monkeypatch) -> None:
    """Mutant: laws grouped by one output's weight (a key that is not the whole law), so laws that differ
    elsewhere count as one and the pairs between them are skipped.  The reference comparison sees it."""
    original = proof.constraints_one

    def coarse(law_of, dense, numbered, bound, datasets, left, right):
        first: dict = {}
        merged = [first.setdefault(numbered[a].get(0), a) for a in law_of]
        return original(merged, dense, numbered, bound, datasets, left, right)

    monkeypatch.setattr(proof, "constraints_one", coarse)
    reduced, reference, _ = _reduced_and_reference(_spec(leak_count, 3, 2))
    assert reduced != reference


# -- the integer-coefficient reading of weights, against the general one ----------------------------------

def _expressions():
    leaf = st.one_of(
        st.fractions(min_value=-5, max_value=5, max_denominator=6).map(lambda f: sympy.Rational(f.numerator, f.denominator)),
        st.fractions(min_value=-4, max_value=4, max_denominator=4).map(
            lambda f: sympy.exp(sympy.Rational(f.numerator, f.denominator) * eps)))
    return st.recursive(leaf, lambda inner: st.one_of(
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: sympy.Add(*xs)),
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: sympy.Mul(*xs)),
        st.tuples(inner, st.integers(-2, 3)).map(lambda t: t[0] ** t[1] if t[0] != 0 else t[0])), max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(_expressions())
def test_the_integer_reading_of_a_weight_is_the_general_readings_rational_function(expr) -> None:
    if expr.has(sympy.zoo, sympy.nan, sympy.oo) or expr == 0:
        return
    base = basis([expr], [eps])
    (w,) = base.variables.values()
    try:
        num, den = rational_function(expr, base)
    except Exception:
        return
    found = read(expr, eps, base.scale[eps])
    assert found is not None, expr  # every shape generated here is read
    p, q = (sympy.Poly(list(reversed(c)) or [0], w, domain="QQ") for c in found)
    assert not q.is_zero
    assert (p * den - q * num).is_zero, expr  # p/q = num/den exactly


@pytest.mark.parametrize("expr", [sympy.exp(eps + 1), sympy.exp(sympy.sqrt(2) * eps), sympy.Float(0.5) * sympy.exp(eps),
                                  eps * sympy.exp(eps), sympy.exp(eps) ** sympy.Rational(1, 2), sympy.E ** eps + sympy.pi,
                                  (1 + sympy.exp(eps)) ** 1000])
def test_the_integer_reading_declines_what_it_does_not_read(expr) -> None:
    assert read(expr, eps, 1) is None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-6, 6), min_size=0, max_size=9))
def test_the_dense_sign_decision_is_root_isolations(coefficients) -> None:
    while coefficients and coefficients[-1] == 0:
        coefficients.pop()
    w = sympy.Symbol("w", positive=True)
    poly = sympy.Poly(list(reversed(coefficients)) or [0], w, domain="QQ")
    assert shift_one(coefficients) == [int(c) for c in reversed(poly.shift(1).all_coeffs())][:len(coefficients)] \
        or not coefficients
    for op in ("<", "<="):
        assert find_point_dense(tuple(coefficients), w, op) == find_point(poly, op)
