"""rational_function's kept results are the ones computed afresh, and its refusals are raised again.

:func:`dpverify.engine.program.symbolic.rational_function` keeps its results by (expression, basis):
the same weight recurs in many laws and pairs.  A kept result must be the fresh one (the same
numerator and denominator polynomials), a second basis must not get the first basis' result, a
refusal must be raised on every call, and an expression holding a Float is never kept.
"""
from __future__ import annotations

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpverify.engine.program import symbolic
from dpverify.engine.program.symbolic import NotRational, basis, rational_function

eps = sympy.Symbol("eps", positive=True)
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

rates = st.fractions(min_value=-3, max_value=3, max_denominator=4)
coefficients = st.fractions(min_value=-5, max_value=5, max_denominator=6).filter(lambda c: c != 0)


def weight(terms, denominator_terms):
    num = sum(sympy.Rational(c.numerator, c.denominator) * sympy.exp(sympy.Rational(r.numerator, r.denominator) * eps)
              for c, r in terms)
    den = sum(sympy.exp(sympy.Rational(r.numerator, r.denominator) * eps) for r in denominator_terms)
    return num / den


@SETTINGS
@given(terms=st.lists(st.tuples(coefficients, rates), min_size=1, max_size=3),
       denominator=st.lists(rates, min_size=1, max_size=3))
def test_kept_results_equal_fresh_ones(terms, denominator) -> None:
    expr = weight(terms, denominator)
    base = basis([expr], [eps])
    fresh = symbolic._rational_function(expr, base)
    first = rational_function(expr, base)
    again = rational_function(expr, base)
    assert first == fresh and again == fresh
    assert all(a.as_expr() == b.as_expr() for a, b in zip(again, fresh))


def test_another_basis_gets_its_own_result() -> None:
    expr = sympy.exp(eps) / (1 + sympy.exp(eps))
    coarse = basis([expr], [eps])
    fine = basis([expr, sympy.exp(eps / 2)], [eps])
    assert coarse.scale != fine.scale
    assert rational_function(expr, coarse) == symbolic._rational_function(expr, coarse)
    assert rational_function(expr, fine) == symbolic._rational_function(expr, fine)
    assert rational_function(expr, fine) != rational_function(expr, coarse)


def test_a_refusal_is_raised_on_every_call() -> None:
    expr = eps * sympy.exp(eps)  # eps outside an exponential
    base = basis([expr], [eps])
    for _ in range(3):
        with pytest.raises(NotRational) as info:
            rational_function(expr, base)
        assert eps in info.value.symbols


def test_an_expression_with_a_float_is_not_kept() -> None:
    expr = sympy.Float(0.5) * sympy.exp(eps)
    base = basis([expr], [eps])
    before = len(symbolic._RATIONAL_FUNCTIONS)
    try:
        rational_function(expr, base)
    except NotRational:
        pass
    assert len(symbolic._RATIONAL_FUNCTIONS) == before


@SETTINGS
@given(terms=st.lists(st.tuples(coefficients, rates), min_size=1, max_size=3))
def test_density_proofs_kept_simplifications_equal_fresh_ones(terms) -> None:
    """checks/privacy/density_proof keeps sympy.simplify's results by expression: equal to a fresh call,
    and a symbol with other assumptions is another expression."""
    from dpverify.checks.privacy.density_proof import _simplify
    expr = weight(terms, [0])
    assert _simplify(expr) == sympy.simplify(expr)
    assert _simplify(expr) == sympy.simplify(expr)
    plain = sympy.Symbol("eps")
    other = expr.subs(eps, plain)
    assert _simplify(other) == sympy.simplify(other)
    assert (_simplify(sympy.sqrt(eps ** 2)) == eps) and (_simplify(sympy.sqrt(plain ** 2)) != plain)


def _exp_sum(terms):
    return sum(sympy.Rational(c.numerator, c.denominator) * sympy.exp(sympy.Rational(r.numerator, r.denominator))
               for c, r in terms)


@SETTINGS
@given(terms=st.lists(st.tuples(coefficients, rates), min_size=1, max_size=4),
       other=st.lists(st.tuples(coefficients, rates), min_size=1, max_size=3),
       zero=st.booleans())
def test_the_field_zero_test_decides_as_cancel_and_simplify(terms, other, zero) -> None:
    """backend.is_exactly_zero reads QQ(w) elements in the field first: the same answer as the
    sympy.cancel / simplify path it shortcuts, on zeros built as (a/b)*b - a and on non-zeros."""
    from dpverify.engine.program import backend
    a, b = _exp_sum(terms), 1 + _exp_sum(other) ** 2
    expr = sympy.expand(a / b * b, mul=False) - a if zero else a / b - _exp_sum(terms[:1])
    fast = backend.is_exactly_zero(expr)
    backend.FIELD_ZERO_TEST = False
    try:
        slow = backend.is_exactly_zero(expr)
    finally:
        backend.FIELD_ZERO_TEST = True
    assert fast == slow
    if zero:
        assert fast


def test_the_field_zero_test_leaves_other_transcendentals_to_sympy() -> None:
    from dpverify.engine.program.backend import _W, _zero_in_field, is_exactly_zero
    assert _zero_in_field(sympy.log(2) * _W) is None
    assert _zero_in_field(sympy.Integer(0)) is True and _zero_in_field(_W - _W ** 2 / _W) is True
    assert _zero_in_field(_W + sympy.Rational(1, 10 ** 80)) is False
    assert is_exactly_zero(sympy.exp(sympy.Rational(1, 3)) ** 3 - sympy.E)
    assert not is_exactly_zero(sympy.exp(sympy.Rational(1, 3)) ** 3 - sympy.E + sympy.Rational(1, 10 ** 80))
