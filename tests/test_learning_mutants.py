"""Mutants of the sample-complexity and uniform-convergence claims (catalogue entries 4 and 5).

Every new claim in ``spec/em_private_learner.py`` and ``spec/uniform_convergence.py`` gets
variants with a wrong constant, a wrong log argument (|H| for 2|H|, or |H| dropped) and alpha and
alpha^2 swapped, wherever the claim has such a part.

* Formula mutants (the proof's steps) must be refuted with a counterexample confirmed by the check;
  the test re-evaluates the claim as written at the witness, independently (mpmath, 50 digits), and
  also checks that the witness satisfies the claim's assumptions and ``where`` conditions.
* Sample-complexity mutants are bounds that ask for too few samples: the exact failure probability
  at the mutant's n must exceed beta, confirmed by the check at twice the precision, and the test
  recomputes it independently (plain Fractions, or mpmath for the exponential mechanism).  A
  mutant is checked at the instance (grid point) that exposes it.

The catalogue's bounds are loose on every instance small enough to enumerate (the smallest n that
works is a fifth to two thirds of the bound's n), so a mutation that changes n by less than that
slack is a *true* statement there and no exact computation can refute it.  For the uniform-
convergence bounds each kind of mutation has an instance where it is refuted exactly (small beta,
or beta near 1 where its n is 1); for the learner's bound, the catalogue-style mutations that
survive the exact check are pinned below (``test_..._survive_the_exact_check``), and each of them
is refuted as a step of the proof.
"""
from __future__ import annotations

import functools
import itertools
import math
import runpy
import sys
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
import sympy
from sympy import Max, Rational, exp, log

import dpverify as dp

SPEC_DIR = Path(__file__).resolve().parent.parent / "spec"


@functools.lru_cache(maxsize=None)
def spec_module(stem: str) -> dict:
    """The globals of a spec file (its symbols and helpers); like the loader, helper modules beside
    it (``_thresholds``) import."""
    sys.path.insert(0, str(SPEC_DIR))
    try:
        return runpy.run_path(str(SPEC_DIR / f"{stem}.py"))
    finally:
        sys.path.remove(str(SPEC_DIR))


def learner() -> dict:
    return spec_module("em_private_learner")


def convergence() -> dict:
    return spec_module("uniform_convergence")


# ----- formula mutants: the proof's steps -----------------------------------------------------

def _learner_step_mutants() -> dict[str, Callable[[], dp.Identity | dp.Inequality]]:
    g = learner()
    H, a, b, eps, m, err = g["H"], g["alpha"], g["beta"], g["eps"], g["n"], g["err"]
    proper, hoeffding, privacy = g["PROPER"], g["hoeffding_term"], g["privacy_term"]
    good = -log(b / (2 * H))   # ln(2|H|/beta)
    half = -log(b / H)         # ln(|H|/beta): the wrong log argument
    return {
        # log_form
        "learner_log_form_wrong_log_argument": lambda: dp.identity(log(2 * H / b), half),
        # hoeffding_bad_hypothesis: deviation alpha instead of alpha/2; alpha for alpha^2
        "learner_hoeffding_wrong_constant": lambda: dp.inequality(
            exp(-2 * m * (err - a / 2)**2), exp(-a**2 * m), where=[err > a, err <= 1, *proper]),
        "learner_hoeffding_alpha_swapped": lambda: dp.inequality(
            exp(-2 * m * (err - a / 2)**2), exp(-a * m / 2), where=[err > a, err <= 1, *proper]),
        # union_term
        "learner_union_wrong_constant": lambda: dp.inequality(
            hoeffding(H, a, m), b / 2, where=[m >= good / a**2, *proper]),
        "learner_union_two_sided_constant": lambda: dp.inequality(  # 2|H| e^(-alpha^2 n/2) <= beta/2
            2 * hoeffding(H, a, m), b / 2, where=[m >= 2 * good / a**2, *proper]),
        "learner_union_wrong_log_argument": lambda: dp.inequality(
            hoeffding(H, a, m), b / 2, where=[m >= 2 * half / a**2, *proper]),
        "learner_union_alpha_swapped": lambda: dp.inequality(
            hoeffding(H, a, m), b / 2, where=[m >= 2 * good / a, *proper]),
        # privacy_term
        "learner_privacy_wrong_constant": lambda: dp.inequality(
            privacy(H, eps, a, m), b / 2, where=[m >= 2 * good / (eps * a), *proper]),
        "learner_privacy_wrong_log_argument": lambda: dp.inequality(
            privacy(H, eps, a, m), b / 2, where=[m >= 4 * half / (eps * a), *proper]),
        "learner_privacy_alpha_swapped": lambda: dp.inequality(
            privacy(H, eps, a**2, m), b / 2, where=[m >= 4 * good / (eps * a), *proper]),
        # total
        "learner_total_wrong_constant": lambda: dp.inequality(
            hoeffding(H, a, m) + privacy(H, eps, a, m), b,
            where=[m >= Max(2 * good / (eps * a), good / a**2), *proper]),
        "learner_total_wrong_log_argument": lambda: dp.inequality(
            hoeffding(H, a, m) + privacy(H, eps, a, m), b,
            where=[m >= Max(4 * half / (eps * a), 2 * half / a**2), *proper]),
        # (alpha swapped in the total is left out: its counterexample lies where the numeric
        # search's time budget decides, which made it flaky; the swap is refuted in each step above.)
    }


def _hoeffding_step_mutants() -> dict[str, Callable[[], dp.Identity | dp.Inequality]]:
    g = convergence()
    H, a, b, n, p, lam, t = g["H"], g["alpha"], g["beta"], g["n"], g["p"], g["lam"], g["t"]
    proper, phi, q, chernoff = g["PROPER"], g["log_mgf"], g["q"], g["chernoff_exponent"]
    return {
        # Hoeffding's lemma for a Bernoulli term
        "hoeffding_phi_at_0_dropped_term": lambda: dp.identity(log(1 + p * exp(0)), 0, where=[p <= 1]),
        "hoeffding_slope_at_0_uncentred": lambda: dp.identity(
            sympy.diff(log(1 - p + p * exp(lam)), lam).subs(lam, 0), 0, where=[p <= 1]),
        "hoeffding_curvature_wrong_constant": lambda: dp.identity(
            sympy.diff(phi(lam, p), lam, 2), 2 * q * (1 - q), where=[p <= 1]),
        "hoeffding_quarter_wrong_constant": lambda: dp.inequality(q * (1 - q), Rational(1, 8), where=[p <= 1]),
        # Chernoff
        "hoeffding_best_lambda_wrong_constant": lambda: dp.inequality(chernoff(2 * t, t, n), chernoff(lam, t, n)),
        "hoeffding_exponent_wrong_constant": lambda: dp.identity(chernoff(4 * t, t, n), -n * t**2),
        "hoeffding_exponent_t_swapped": lambda: dp.identity(chernoff(4 * t, t, n), -2 * n * t),
        # log forms
        "hoeffding_log_form_wrong_log_argument": lambda: dp.identity(log(2 * H / b), -log(b / H)),
        # union bound, one-sided
        "hoeffding_union_one_sided_wrong_constant": lambda: dp.inequality(
            H * exp(-2 * n * a**2), b, where=[n >= -log(b / H) / (4 * a**2), *proper]),
        "hoeffding_union_one_sided_wrong_log_argument": lambda: dp.inequality(  # |H| dropped
            H * exp(-2 * n * a**2), b, where=[n >= -log(b) / (2 * a**2), *proper]),
        "hoeffding_union_one_sided_alpha_swapped": lambda: dp.inequality(
            H * exp(-2 * n * a**2), b, where=[n >= -log(b / H) / (2 * a), *proper]),
        # union bound, two-sided
        "hoeffding_union_two_sided_wrong_constant": lambda: dp.inequality(
            2 * H * exp(-2 * n * a**2), b, where=[n >= -log(b / (2 * H)) / (4 * a**2), *proper]),
        "hoeffding_union_two_sided_wrong_log_argument": lambda: dp.inequality(  # |H| for 2|H|
            2 * H * exp(-2 * n * a**2), b, where=[n >= -log(b / H) / (2 * a**2), *proper]),
        "hoeffding_union_two_sided_alpha_swapped": lambda: dp.inequality(
            2 * H * exp(-2 * n * a**2), b, where=[n >= -log(b / (2 * H)) / (2 * a), *proper]),
    }


FORMULA_MUTANTS = {**_learner_step_mutants(), **_hoeffding_step_mutants()}


def holds_at(claim: dp.Identity | dp.Inequality, point: dict) -> tuple[bool, bool]:
    """(the witness is in the claim's domain, the claim fails there), each decided numerically at 50
    digits from the claim as written, independently of the check."""
    def value(expr: sympy.Expr) -> sympy.Float:
        return sympy.N(expr.xreplace(point), 50)
    inside = all(sym.is_real and not (sym.is_positive and v <= 0) and not (sym.is_nonnegative and v < 0)
                 and not (sym.is_integer and not v.is_integer) for sym, v in point.items())
    for cond in claim.where:
        big, small = (cond.lhs, cond.rhs) if isinstance(cond, (sympy.GreaterThan, sympy.StrictGreaterThan)) \
            else (cond.rhs, cond.lhs)
        gap = value(big - small)
        inside &= bool(gap > 0) if isinstance(cond, (sympy.StrictGreaterThan, sympy.StrictLessThan)) \
            else bool(gap >= 0)
    gap = value(claim.lhs - claim.rhs)
    if isinstance(claim, dp.Identity):
        return inside, bool(abs(gap) > sympy.Float("1e-40"))
    return inside, bool(gap > 0) if not claim.strict else bool(gap >= 0)


@pytest.mark.parametrize("name", sorted(FORMULA_MUTANTS))
def test_a_wrong_step_is_refuted_with_a_confirmed_counterexample(name: str) -> None:
    claim = FORMULA_MUTANTS[name]()
    [result] = dp.check(dp.spec(name=name, claims=[claim]))
    assert result.status.value == "refuted", result.message
    witness = result.witness
    assert witness is not None and isinstance(witness.x, dict)
    assert "confirmed exactly" in result.message
    symbols = {s.name: s for part in (claim.lhs, claim.rhs, *claim.where) for s in part.free_symbols}
    point = {symbols[k]: sympy.Rational(v) for k, v in witness.x.items() if k in symbols}
    inside, fails = holds_at(claim, point)
    assert inside and fails, (witness, result.message)


STEP_MUTANTS = {
    ("learner_bound", "log_form"): "learner_log_form",
    ("learner_bound", "hoeffding_bad_hypothesis"): "learner_hoeffding",
    ("learner_bound", "union_term"): "learner_union",
    ("learner_bound", "privacy_term"): "learner_privacy",
    ("learner_bound", "total"): "learner_total",
    ("hoeffding_algebra", "lemma_phi_at_0"): "hoeffding_phi_at_0",
    ("hoeffding_algebra", "lemma_slope_at_0"): "hoeffding_slope_at_0",
    ("hoeffding_algebra", "lemma_curvature"): "hoeffding_curvature",
    ("hoeffding_algebra", "lemma_curvature_at_most_quarter"): "hoeffding_quarter",
    ("hoeffding_algebra", "chernoff_best_lambda"): "hoeffding_best_lambda",
    ("hoeffding_algebra", "chernoff_exponent"): "hoeffding_exponent",
    ("hoeffding_algebra", "log_form_one_sided"): "hoeffding_log_form",
    ("hoeffding_algebra", "log_form_two_sided"): "hoeffding_log_form",
    ("hoeffding_algebra", "union_one_sided"): "hoeffding_union_one_sided",
    ("hoeffding_algebra", "union_two_sided"): "hoeffding_union_two_sided",
}
"""Every step (formula claim) of both proofs -> the prefix of its mutants."""


def test_every_step_of_both_proofs_has_mutants() -> None:
    steps = {(spec.name, c.id) for spec in (learner()["learner_bound"], convergence()["hoeffding_algebra"])
             for c in spec.claims}
    assert steps == set(STEP_MUTANTS)
    for prefix in STEP_MUTANTS.values():
        assert any(name.startswith(prefix) for name in FORMULA_MUTANTS), prefix


# ----- sample-complexity mutants: bounds that ask for too few samples ---------------------------

def convergence_spec(population: dict, hypotheses: tuple, two_sided: bool, bound: sympy.Expr,
                     alpha: Rational, beta: Rational) -> dp.Spec:
    """The uniform-convergence instance of the spec file with ``bound`` in place of the catalogue's."""
    g = convergence()
    truth = g["true_errors"](population, hypotheses)
    deviation = (g["largest_deviation"] if two_sided else g["largest_gap"])(truth)
    return dp.spec(g["empirical_errors"](hypotheses), name="mutant",
                   universe=dp.universe(list(population), n=1, neighbours=dp.REPLACE_ONE),
                   grid=[{g["alpha"]: alpha, g["beta"]: beta}],
                   claims=[dp.sample_complexity(population=population, error=deviation, alpha=g["alpha"],
                                                beta=g["beta"], bound=bound)])


def convergence_failure(population: dict, hypotheses: tuple, two_sided: bool, n: int, alpha: Fraction) -> Fraction:
    """P[dev > alpha] over all n-tuples' count vectors, exactly with Fractions (independent of dpverify)."""
    g = convergence()
    records = list(population)
    truth = g["true_errors"](population, hypotheses)
    total = Fraction(0)
    for counts in itertools.product(range(n + 1), repeat=len(records)):
        if sum(counts) != n:
            continue
        weight = Fraction(math.factorial(n))
        for c, r in zip(counts, records):
            weight *= population[r] ** c / math.factorial(c)
        errors = [Fraction(sum(c for c, (x, y) in zip(counts, records) if g["h"](t, x) != y), n) for t in hypotheses]
        gaps = [d - e for d, e in zip(truth, errors)]
        dev = max(abs(x) for x in gaps) if two_sided else max(gaps)
        total += weight if dev > alpha else 0
    return total


def _convergence_mutants() -> dict[str, tuple]:
    """name -> (instance, two-sided, mutated bound, alpha, beta)."""
    g = convergence()
    a, b = g["alpha"], g["beta"]
    agnostic = (g["AGNOSTIC"], g["THRESHOLDS"])
    coin = (g["COIN"], (1,))
    H = len(g["THRESHOLDS"])
    return {
        "one_sided_wrong_constant": (agnostic, False, log(H / b) / (4 * a**2), Rational(1, 4), Rational(1, 1000)),
        "one_sided_wrong_log_argument": (agnostic, False, log(1 / b) / (2 * a**2), Rational(1, 4), Rational(9, 10)),
        "one_sided_alpha_swapped": (agnostic, False, log(H / b) / (2 * a), Rational(1, 4), Rational(1, 10)),
        "two_sided_wrong_constant": (agnostic, True, log(2 * H / b) / (4 * a**2), Rational(1, 4), Rational(1, 1000)),
        # |H| for 2|H|: only one hypothesis with beta near 1 makes the bound's n small enough (n = 1)
        "two_sided_wrong_log_argument": (coin, True, log(1 / b) / (2 * a**2), Rational(1, 4), Rational(9, 10)),
        "two_sided_alpha_swapped": (agnostic, True, log(2 * H / b) / (2 * a), Rational(1, 4), Rational(1, 10)),
        "one_hypothesis_wrong_constant": (coin, False, log(1 / b) / (4 * a**2), Rational(1, 4), Rational(1, 1000)),
        "one_hypothesis_alpha_swapped": (coin, True, log(2 / b) / (2 * a), Rational(1, 4), Rational(1, 10)),
    }


CONVERGENCE_MUTANTS = _convergence_mutants()


@pytest.mark.parametrize("name", sorted(CONVERGENCE_MUTANTS))
def test_a_convergence_bound_asking_for_too_few_samples_is_refuted(name: str) -> None:
    (population, hypotheses), two_sided, bound, alpha, beta = CONVERGENCE_MUTANTS[name]
    [result] = dp.check(convergence_spec(population, hypotheses, two_sided, bound, alpha, beta))
    assert result.status.value == "refuted", result.message
    assert result.witness is not None and "confirmed" in result.message
    n = result.evidence.n_bound
    assert n == math.ceil(float(bound.subs({convergence()["alpha"]: alpha, convergence()["beta"]: beta})))
    exact = convergence_failure(population, hypotheses, two_sided, n, Fraction(alpha.p, alpha.q))
    assert exact > Fraction(beta.p, beta.q)
    assert abs(float(exact) - float(result.witness.p)) < 1e-12


def learner_spec(bound: sympy.Expr, eps: Rational, alpha: Rational = Rational(1, 4),
                 beta: Rational = Rational(1, 4)) -> dp.Spec:
    """The learner's sample-complexity claim with ``bound``, at one grid point."""
    g = learner()
    return dp.spec(g["counting_learner"], name="mutant", universe=g["learner_sample_complexity"].universe,
                   grid=[{g["eps"]: eps, g["alpha"]: alpha, g["beta"]: beta}],
                   claims=[dp.sample_complexity(population=g["POPULATION"], error=g["true_error"], alpha=g["alpha"],
                                                beta=g["beta"], bound=bound)])


def learner_failure(n: int, eps: Rational, alpha: Rational) -> mpmath.mpf:
    """P[err_D(output) > alpha] at n, by mpmath at 30 digits over count vectors (independent of dpverify)."""
    g = learner()
    records, thresholds = list(g["POPULATION"]), g["THRESHOLDS"]
    bad = [g["true_error"](t) > alpha for t in thresholds]
    with mpmath.workdps(30):
        total = mpmath.mpf(0)
        for c0 in range(n + 1):
            for c1 in range(n + 1 - c0):
                counts = (c0, c1, n - c0 - c1)
                weight = mpmath.mpf(math.factorial(n)) / math.prod(math.factorial(c) for c in counts) / 3**n
                wrong = [sum(c for c, (x, y) in zip(counts, records) if g["predict"](t, x) != y) for t in thresholds]
                w = [mpmath.exp(-mpmath.mpf(eps.p) / eps.q * k / 2) for k in wrong]  # eps * (-k/n) / (2/n)
                total += weight * sum(wi for wi, is_bad in zip(w, bad) if is_bad) / sum(w)
        return total


def _learner_mutants() -> dict[str, sympy.Expr]:
    g = learner()
    a, b, eps, size = g["alpha"], g["beta"], g["eps"], g["CLASS_SIZE"]
    good = log(2 * size / b)
    return {
        # 4/(eps alpha) and 2/alpha^2 read as 1/(4 eps alpha) and 1/(2 alpha^2)
        "learner_wrong_constant": Max(good / (4 * eps * a), good / (2 * a**2)),
        # alpha for alpha^2 in the Hoeffding term, and the privacy term forgotten
        "learner_alpha_swapped_privacy_term_dropped": 2 * good / a,
        # alpha^2 multiplying instead of dividing, the privacy term dropped (the mutant of test_sample_complexity.py)
        "learner_alpha_squared_multiplies": 2 * good * a**2,
    }


LEARNER_MUTANTS = _learner_mutants()


@pytest.mark.parametrize("name", sorted(LEARNER_MUTANTS))
def test_a_learner_bound_asking_for_too_few_samples_is_refuted(name: str) -> None:
    eps = Rational(1, 4)  # the instance where the privacy term matters most: the smallest n that works is 56
    [result] = dp.check(learner_spec(LEARNER_MUTANTS[name], eps))
    assert result.status.value == "refuted", result.message
    assert result.witness is not None and "confirmed" in result.message
    n = result.evidence.n_bound
    exact = learner_failure(n, eps, Rational(1, 4))
    with mpmath.workdps(30):
        assert exact > mpmath.mpf(1) / 4
        assert abs(exact - mpmath.mpf(result.witness.p)) < mpmath.mpf(10) ** -25


def test_catalogue_style_mutants_of_the_learner_bound_survive_the_exact_check() -> None:
    """|H| for 2|H| and both constants halved still ask for more samples than the smallest n that works
    (29 at eps = 1/2), so on this instance they are true statements: the exact check verifies them.
    The same mistakes are refuted as steps of the proof (``learner_union_*``, ``learner_privacy_*``)."""
    g = learner()
    a, b, eps, size = g["alpha"], g["beta"], g["eps"], g["CLASS_SIZE"]
    half = log(size / b)
    good = log(2 * size / b)
    for bound, n_bound in ((Max(4 * half / (eps * a), 2 * half / a**2), 96),
                           (Max(2 * good / (eps * a), good / a**2), 60)):
        [result] = dp.check(learner_spec(bound, Rational(1, 2)))
        assert result.status.value == "verified", result.message
        assert result.evidence.n_bound == n_bound  # above 29, the smallest n that works (full scan)
    for name in ("learner_union_wrong_log_argument", "learner_privacy_wrong_log_argument",
                 "learner_union_wrong_constant", "learner_privacy_wrong_constant"):
        [result] = dp.check(dp.spec(name=name, claims=[FORMULA_MUTANTS[name]()]))
        assert result.status.value == "refuted"
