"""The exhaustive attacker's fast evaluation (dpverify.checks.formulas.fast) against the slow exact one.

Whenever the fast path answers, its sign must be the one sympy's exact evaluation and the certified
sign give; where it cannot be sure (an undefined side, an interval around 0, a node it does not
know) it must say None, never a guess.
"""
from __future__ import annotations

import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpverify as dp
from dpverify.checks.formulas import check, fast
from dpverify.checks.formulas.problem import Problem, Undecidable, certified_sign, evaluate
from dpverify.engine.decide import smt_values
from dpverify.results import Status

m = sympy.Symbol("m", integer=True, positive=True)
d = sympy.Symbol("d", integer=True, positive=True)
i = sympy.Symbol("i", integer=True)


def slow_sign(lhs, rhs, values):
    try:
        left, right = evaluate(lhs, values), evaluate(rhs, values)
    except Undecidable:
        return "undecidable"
    except Exception:  # sympy itself fails on some random trees (a gamma pole while asking is_finite)
        return "sympy error"
    if left is None or right is None:
        return "undefined"
    return certified_sign(left - right)


leaves = st.sampled_from([m, d, sympy.Integer(0), sympy.Integer(1), sympy.Integer(-2), sympy.Rational(3, 7),
                          sympy.E, sympy.pi])


def _extend(children):
    return st.one_of(
        st.tuples(children, children).map(lambda t: t[0] + t[1]),
        st.tuples(children, children).map(lambda t: t[0] * t[1]),
        st.tuples(children, st.integers(-3, 4)).map(lambda t: t[0] ** t[1]),
        st.tuples(children, st.sampled_from([m, d, sympy.Rational(1, 2)])).map(lambda t: t[0] ** t[1]),
        children.map(lambda c: sympy.binomial(m, c)),
        children.map(sympy.factorial),
        children.map(sympy.exp),
        children.map(sympy.log),
        children.map(lambda c: sympy.Sum(c * i + sympy.binomial(m, i), (i, 0, d))),
        children.map(lambda c: sympy.Sum(c / (i + 1), (i, 1, m))),
        st.tuples(children, children).map(lambda t: sympy.Piecewise((t[0], sympy.Eq(m, 2)), (t[1], m < d))),
        st.tuples(children, children).map(lambda t: sympy.Piecewise((t[0], d >= 3), (t[1], True))),
    )


expressions = st.recursive(leaves, _extend, max_leaves=6)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(expressions, expressions, st.integers(1, 6), st.integers(1, 6))
def test_fast_sign_agrees_with_the_exact_slow_sign(lhs, rhs, mv, dv) -> None:
    values = {m: sympy.Integer(mv), d: sympy.Integer(dv)}
    quick = fast.sign(lhs, rhs, values)
    if quick is None:
        return
    slow = slow_sign(lhs, rhs, values)
    assert slow in (-1, 0, 1, None, "undecidable", "sympy error"), (lhs, rhs, values, quick, slow)
    if slow in (-1, 0, 1):
        assert quick == slow, (lhs, rhs, values, quick, slow)


def test_fast_sign_declines_undefined_and_tied_points() -> None:
    at = {m: sympy.Integer(2), d: sympy.Integer(2)}
    assert fast.sign(1 / (m - d), sympy.Integer(0), at) is None  # a zero denominator
    assert fast.sign(sympy.log(m - d), sympy.Integer(0), at) is None  # log of 0
    assert fast.sign(sympy.E * m, 2 * sympy.E, at) is None  # an exact tie of irrationals: the slow path decides
    assert fast.sign(sympy.binomial(m, d) * 3, sympy.Integer(3), at) == 0  # rationals: exact
    assert fast.sign(sympy.E ** 2, sympy.Rational(738905609893065, 10 ** 14), at) == 1  # e^2 = 7.389056098930650227...
    assert fast.sign(sympy.erf(m), sympy.Integer(0), at) is None  # a function without a rule here


def _exhaustive(claim):
    problem = Problem.from_claim(claim)
    return check.exhaustive(problem, smt_values.symbol_bounds(problem.symbols, list(problem.where)))


def test_sauer_shelah_bound_is_decided_at_every_point_and_its_mutant_refuted() -> None:
    phi = sympy.Sum(sympy.binomial(m, i), (i, 0, d))
    mm, dd = dp.symbol("m", integer=True, positive=True), dp.symbol("d", integer=True, positive=True)
    phi = phi.xreplace({m: mm, d: dd})
    assert _exhaustive(dp.inequality(phi, (sympy.E * mm / dd) ** dd, where=[dd <= mm, mm <= 30])) == 465
    # without the factor e the bound fails already at d = 1, m = 1: 2 > 1
    found = _exhaustive(dp.inequality(phi, (mm / dd) ** dd, where=[dd <= mm, mm <= 30]))
    assert not isinstance(found, (int, str)) and found is not None
    assert found.lhs > found.rhs
    # an exact tie is decided exactly (equality holds at d = m: Phi_m(m) = 2^m)
    assert _exhaustive(dp.inequality(phi, 2 ** mm, where=[dd <= mm, mm <= 12])) == 78
    claim = dp.inequality(phi, 2 ** mm, where=[dd <= mm, mm <= 12], strict=True)
    assert not isinstance(_exhaustive(claim), int)


def test_sauer_shelah_claim_is_proved_through_the_check() -> None:
    mm, dd = dp.symbol("m", integer=True, positive=True), dp.symbol("d", integer=True, positive=True)
    phi = sympy.Sum(sympy.binomial(mm, i), (i, 0, dd))
    spec = dp.spec(name="ss", claims=[dp.inequality(phi, (sympy.E * mm / dd) ** dd, where=[dd <= mm, mm <= 8])])
    [result] = dp.check(spec)
    assert result.status is Status.PROVED and "36 integer points" in result.message
