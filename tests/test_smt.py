"""The decision reading (dpverify.engine.decide.smt) and the formula check's honesty about it.

Pins which constructs translate exactly, which are relaxed (over-approximated:
proofs stay sound, models need a re-check) and which are restricted (a bounded
search: models are real, unsat proves nothing); and that the check never says
``proved`` for a false claim, whatever the encoding, nor from sampling.
"""
from __future__ import annotations

import pytest
import sympy
import z3
from sympy import Abs, Max, Min, Piecewise, Sum, binomial, exp, log, sqrt

import dpverify as dp
from dpverify.engine.decide import smt, smt_values

x = dp.symbol("x")
y = dp.symbol("y")
p = dp.symbol("p", positive=True)
n = dp.symbol("n", integer=True, positive=True)
k = sympy.Symbol("k", integer=True)


def encode(expr: sympy.Expr, symbols: list, bounds: dict | None = None) -> tuple[z3.ArithRef, smt.Encoding]:
    tr = smt.Translator(symbols, bounds)
    term = tr.term(smt.prepare(expr))
    return term, tr.encoding()


def valid(claim: sympy.Basic, symbols: list, bounds: dict | None = None) -> z3.CheckSatResult:
    """z3's answer to 'the negation of claim is satisfiable' (with the facts, the domain and the
    bounds, which the translator trusts to hold)."""
    tr = smt.Translator(symbols, bounds)
    negation = z3.Not(tr.formula(claim))
    for sym, (lo, hi) in (bounds or {}).items():
        tr.enc.facts += [tr.enc.variables[sym] >= lo] if lo is not None else []
        tr.enc.facts += [tr.enc.variables[sym] <= hi] if hi is not None else []
    enc = tr.encoding()
    solver = z3.Solver()
    solver.set("timeout", 5000)
    solver.add(*enc.facts, *enc.domain, negation)
    return solver.check()


def status(claim: dp.Identity | dp.Inequality) -> tuple[str, str]:
    [result] = dp.check(dp.spec(name="t", claims=[claim]))
    return result.status.value, result.message


# ----- exactness flags -------------------------------------------------------------------

@pytest.mark.parametrize("expr, symbols", [
    (x**3 - 2 * x * y + sympy.Rational(1, 3), [x, y]),
    (Abs(x - y) + Max(x, 2 * y, 1) - Min(x, y), [x, y]),
    (Piecewise((x**2, x > 0), (-x, True)), [x]),
    (sqrt(p) + p ** sympy.Rational(2, 3), [p]),
    ((x + 1) / (x**2 + 1), [x]),
    (binomial(n, 3), [n]),
    (sympy.floor(x / 2), [x]),
], ids=["polynomial", "abs-max-min", "piecewise", "roots", "division", "binomial", "floor"])
def test_algebraic_constructs_are_exact(expr, symbols) -> None:
    _, enc = encode(expr, symbols)
    assert enc.exact and enc.proves


def test_a_sum_with_a_bounded_symbolic_bound_is_unrolled_exactly() -> None:
    _, enc = encode(Sum(binomial(n, k), (k, 0, n)), [n], {n: (1, 12)})
    assert enc.exact
    assert valid(sympy.Eq(Sum(k**2, (k, 0, n)), n * (n + 1) * (2 * n + 1) / 6), [n], {n: (1, 12)}) == z3.unsat
    assert valid(sympy.Eq(Sum(k**2, (k, 0, n)), n * (n + 1) * (2 * n + 1) / 6 + (n - 7) * (n - 3)),
                 [n], {n: (1, 12)}) == z3.sat


def test_a_sum_with_an_unbounded_bound_is_a_restricted_search() -> None:
    _, enc = encode(Sum(k, (k, 1, n)), [n], {n: (1, None)})
    assert enc.restrictions and not enc.proves


@pytest.mark.parametrize("expr", [exp(x), log(p), 2**x, p**x, sympy.pi * x, sympy.E + x],
                         ids=["exp", "log", "2^x", "p^x", "pi", "e"])
def test_transcendental_constructs_are_relaxed_but_still_prove(expr) -> None:
    _, enc = encode(expr, [x, p])
    assert enc.relaxations and not enc.restrictions and enc.proves and not enc.exact


def test_an_unknown_function_becomes_an_uninterpreted_relaxation() -> None:
    _, enc = encode(sympy.gamma(p) + 1, [p])
    assert any("gamma" in r for r in enc.relaxations)


def test_integer_symbols_divide_as_reals() -> None:
    m = dp.symbol("m", integer=True)
    assert valid(sympy.Eq(2 * (m / 2), m), [m]) == z3.unsat  # 1/2 is not integer division


# ----- soundness of the relaxations and of the domain -------------------------------------

def test_exp_facts_prove_the_standard_bounds() -> None:
    assert valid(exp(x) >= 1 + x, [x]) == z3.unsat
    assert valid(log(p) <= p - 1, [p]) == z3.unsat
    assert valid(exp(x) * exp(y) <= exp(x + y), [x, y]) == z3.sat  # beyond the relaxation: a model, no proof


def test_definitions_off_their_path_do_not_make_the_query_vacuous() -> None:
    # sqrt(x) is only defined for x >= 0; at x = -1 the other branch is taken and the claim fails.
    claim = Piecewise((sqrt(x), x >= 0), (0, True)) >= 1
    assert valid(claim, [x]) == z3.sat


def test_partial_functions_restrict_only_their_own_branch() -> None:
    assert valid(Piecewise((1 / x, x > 0), (0, True)) >= 0, [x]) == z3.unsat


def test_model_values_are_exact_rationals() -> None:
    a = z3.Real("a")
    solver = z3.Solver()
    solver.add(a * a == 2, a > 0)
    assert solver.check() == z3.sat
    value = smt_values.model_value(solver.model(), a)
    assert value.is_Rational and abs(value - sympy.sqrt(2)) < sympy.Rational(1, 10**25)


def test_symbol_bounds_come_from_linear_conditions_only() -> None:
    d = dp.symbol("d", integer=True, positive=True)
    bounds = smt_values.symbol_bounds([d, n, x], [d <= n, n <= 30, x * d < 3, x > 1])
    assert bounds[d] == (1, 30) and bounds[n] == (1, 30)
    assert bounds[x] == (1, None)


# ----- the check's verdicts --------------------------------------------------------------

def test_relaxed_unsat_is_reported_as_a_relaxed_proof() -> None:
    result, message = status(dp.inequality(1 + x, exp(x)))
    assert result == "proved" and "over-approximates" in message


def test_a_false_claim_under_a_relaxed_encoding_is_refuted_not_proved() -> None:
    # e^x >= 1 + x + x^2/2 fails for x < 0 (e^-1 < 1/2); the relaxation alone cannot see it.
    result, message = status(dp.inequality(1 + x + x**2 / 2, exp(x)))
    assert result == "refuted", message


def test_a_bounded_search_never_proves() -> None:
    # sum_{k=1}^{n} 1 = n <= 100 is false for n > 100; z3 only searches n <= 40.
    result, message = status(dp.inequality(Sum(1, (k, 1, n)), 100))
    assert result in ("unknown", "refuted"), message
    assert result != "proved"


def test_opaque_functions_still_get_confirmed_counterexamples() -> None:
    result, message = status(dp.identity(sympy.sin(x) ** 2 + sympy.cos(x) ** 2, 1 + x / 1000))
    assert result == "refuted" and "confirmed exactly" in message


def test_claims_outside_z3_get_counterexamples_from_the_numeric_search() -> None:
    # sin x <= 1 - 10^-6 fails only within about 0.0014 of pi/2 + 2 pi k: z3's models of the
    # uninterpreted sin are spurious, the search (sampling, then refinement) finds the peak.
    result, message = status(dp.inequality(sympy.sin(x), 1 - sympy.Rational(1, 10**6)))
    assert result == "refuted" and "numeric search" in message, message


def test_numeric_search_never_proves() -> None:
    # true (J0^2 + 2 J1^2 <= 1 on the reals) but beyond sympy's simplifier and z3: stays unknown
    claim = dp.inequality(sympy.besselj(0, x) ** 2 + 2 * sympy.besselj(1, x) ** 2, 1, where=[x >= 0, x <= 5])
    result, message = status(claim)
    assert result == "unknown", message


def test_a_true_inequality_between_piecewise_sides_is_proved_exactly() -> None:
    result, message = status(dp.inequality(Abs(x + y), Abs(x) + Abs(y)))
    assert result == "proved" and "z3 exact" in message
