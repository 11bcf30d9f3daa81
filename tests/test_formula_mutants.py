"""Mutants of the catalogue's formula claims: each must be refuted with a confirmed counterexample.

Every formula claim in ``spec/`` (barrier hinge, Sauer-Shelah, the geometric
pmf, the label-Hamming level recursion, the Laplace tail) gets variants with a
dropped term, a wrong constant, a flipped sign or an off-by-one.  Each is built
with the DSL from the spec file's own helpers, checked with ``dp.check``, and
must come back ``refuted``; the test then re-evaluates the claim *as written*
at the witness with sympy at 50 digits, independently of the check, and
asserts that it really fails there.
"""
from __future__ import annotations

import functools
import runpy
from collections.abc import Callable
from pathlib import Path

import mpmath
import pytest
import sympy
from sympy import Abs, E, Sum, exp, log, oo

import dpverify as dp

SPEC_DIR = Path(__file__).resolve().parent.parent / "spec"


@functools.lru_cache(maxsize=None)
def spec_module(stem: str) -> dict:
    """The globals of a spec file (its symbols and helpers)."""
    return runpy.run_path(str(SPEC_DIR / f"{stem}.py"))


def barrier(**_: object) -> dict:
    return spec_module("barrier_hinge")


def hinge_without(piece: int) -> Callable:
    """The barrier hinge with one of its three affine pieces dropped."""
    g = barrier()
    b, r = g["b"], g["r"]

    def f(x):
        pieces = [-b * (r + x) + r, b * (x - r), r - x]
        del pieces[piece]
        return sympy.Max(*pieces)
    return f


def _barrier_mutants() -> dict[str, Callable[[], dp.Identity | dp.Inequality]]:
    g = barrier()
    f, b, r, x, y, t = g["f"], g["b"], g["r"], g["x"], g["y"], g["t"]
    on_barrier = [b > 1, x >= -r, x <= r]
    flipped = lambda u: sympy.Max(-b * (r + u) + r, b * (r - u), r - u)  # noqa: E731  b(x - r) -> b(r - x)
    return {
        "barrier_sum_wrong_constant": lambda: dp.identity(f(x) + f(-x), r, where=on_barrier),
        "barrier_sum_dropped_hinge": lambda: dp.identity(hinge_without(2)(x) + hinge_without(2)(-x), 2 * r,
                                                         where=on_barrier),
        "barrier_sum_off_by_one_interval": lambda: dp.identity(f(x) + f(-x), 2 * r,
                                                               where=[b > 1, x >= -r - 1, x <= r + 1]),
        "barrier_nonnegative_wrong_constant": lambda: dp.inequality(r, f(x), where=[b > 1]),
        "barrier_nonnegative_flipped_sign": lambda: dp.inequality(0, flipped(x), where=[b > 1]),
        "barrier_convex_flipped": lambda: dp.inequality(t * f(x) + (1 - t) * f(y), f(t * x + (1 - t) * y),
                                                        where=[b > 1, t >= 0, t <= 1]),
        "barrier_convex_dropped_term": lambda: dp.inequality(f(t * x + (1 - t) * y), t * f(x),
                                                             where=[b > 1, t >= 0, t <= 1]),
        "barrier_convex_off_by_one_t": lambda: dp.inequality(f(t * x + (1 - t) * y), t * f(x) + (1 - t) * f(y),
                                                             where=[b > 1, t >= 0, t <= 2]),
    }


def _sauer_mutants() -> dict[str, Callable[[], dp.Identity | dp.Inequality]]:
    g = spec_module("sauer_shelah")
    m, d, bound, counted, table = g["m"], g["d"], g["sauer_bound"], g["counted"], g["table"]
    labellings, intervals, thresholds = g["labellings"], g["intervals"], g["thresholds"]
    span = [d <= m, m <= 30]
    small = [m <= 8]

    def counted_with(hypotheses):
        return table(m, {k: labellings(hypotheses(k), range(1, k + 1)) for k in range(1, 9)})
    return {
        "sauer_bound_dropped_e": lambda: dp.inequality(bound(m, d), (m / d) ** d, where=span),
        "sauer_bound_off_by_one": lambda: dp.inequality(bound(m, d + 1), (E * m / d) ** d, where=span),
        "sauer_bound_wrong_exponent": lambda: dp.inequality(bound(m, d), (E * m / d) ** (d - 1), where=span),
        "sauer_thresholds_off_by_one": lambda: dp.identity(counted(thresholds), bound(m, 0), where=small),
        "sauer_thresholds_missing_one": lambda: dp.identity(
            counted_with(lambda k: thresholds(k)[1:]), bound(m, 1), where=small),
        "sauer_intervals_dropped_empty": lambda: dp.identity(
            counted_with(lambda k: intervals(k)[:-1]), bound(m, 2), where=small),
        "sauer_intervals_off_by_one": lambda: dp.identity(counted(intervals), bound(m, 3), where=small),
    }


def _geometric_mutants() -> dict[str, Callable[[], dp.Identity | dp.Inequality]]:
    g = spec_module("geometric")
    a, k, j, pmf = g["a"], g["k"], g["j"], g["pmf"]
    return {
        "geometric_sum_wrong_constant": lambda: dp.identity(
            Sum((a - 1) / (a + 2) * a ** -Abs(k), (k, -oo, oo)), 1, where=[a > 1]),
        "geometric_sum_dropped_normaliser": lambda: dp.identity(Sum(a ** -Abs(k), (k, -oo, oo)), 1, where=[a > 1]),
        "geometric_sum_off_by_one": lambda: dp.identity(
            Sum((a - 1) / (a + 1) * a ** (-Abs(k) - 1), (k, -oo, oo)), 1, where=[a > 1]),
        "geometric_shift_off_by_one": lambda: dp.inequality(pmf(k + j) / pmf(k), a ** (Abs(j) - 1), where=[a > 1]),
        "geometric_shift_flipped_sign": lambda: dp.inequality(pmf(k + j) / pmf(k), a ** -Abs(j), where=[a > 1]),
    }


def _hamming_mutants() -> dict[str, Callable[[], dp.Identity | dp.Inequality]]:
    g = spec_module("em_label_hamming")
    n, i, eps, level = g["n_"], g["i_"], g["eps"], g["level_probability"]
    step = log(level(i)) - log(level(i - 1))
    return {
        "hamming_base_flipped_sign": lambda: dp.identity(log(level(0)), n * log(1 + exp(eps / 2))),
        "hamming_base_wrong_constant": lambda: dp.identity(log(level(0)), -n * log(1 + exp(eps))),
        "hamming_step_off_by_one": lambda: dp.identity(step, log(n - i) - log(i) + eps / 2, where=[i <= n]),
        "hamming_step_dropped_term": lambda: dp.identity(step, log(n - i + 1) - log(i), where=[i <= n]),
        "hamming_step_flipped_sign": lambda: dp.identity(step, log(n - i + 1) + log(i) + eps / 2, where=[i <= n]),
    }


def _laplace_mutants() -> dict[str, Callable[[], dp.Identity | dp.Inequality]]:
    g = spec_module("laplace")
    b, t, tail = g["b"], g["t"], g["two_sided_tail"]
    return {
        "laplace_tail_dropped_two": lambda: dp.identity(tail(t, b) / 2, exp(-t / b)),
        "laplace_tail_wrong_constant": lambda: dp.identity(tail(t, b), exp(-2 * t / b)),
        "laplace_tail_flipped_sign": lambda: dp.identity(tail(t, b), exp(t / b)),
    }


MUTANTS = {**_barrier_mutants(), **_sauer_mutants(), **_geometric_mutants(), **_hamming_mutants(),
           **_laplace_mutants()}


def numeric(expr: sympy.Expr) -> sympy.Float:
    """A constant expression at 50 digits; sums and integrals by mpmath's nsum and quad (sympy's own
    evalf of a sum over all integers does not terminate)."""
    def by_mpmath(e: sympy.Expr) -> sympy.Float:
        (var, lo, hi), = e.limits
        f = sympy.lambdify(var, e.function, "mpmath")
        ends = [mpmath.inf if v is oo else -mpmath.inf if v is -oo else mpmath.mpf(sympy.N(v, 60)) for v in (lo, hi)]
        with mpmath.workdps(60):
            return sympy.Float(mpmath.nsum(f, ends) if isinstance(e, Sum) else mpmath.quad(f, ends), 60)
    def infinite(e: sympy.Basic) -> bool:
        return isinstance(e, (Sum, sympy.Integral)) and not e.free_symbols and \
            any(v.is_infinite for v in e.limits[0][1:])
    return sympy.N(expr.replace(infinite, by_mpmath).doit(), 50)


def fails_at(claim: dp.Identity | dp.Inequality, values: dict[str, str]) -> bool:
    """Re-evaluate the claim as written at the witness, independently of the check (mpmath, 50 digits)."""
    symbols = {s.name: s for s in claim.lhs.free_symbols | claim.rhs.free_symbols}
    point = {symbols[name]: sympy.Rational(value) for name, value in values.items() if name in symbols}
    left, right = (numeric(side.xreplace(point)) for side in (claim.lhs, claim.rhs))
    gap = left - right
    if isinstance(claim, dp.Identity):
        return abs(gap) > sympy.Float("1e-40")
    return gap > 0 if not claim.strict else gap >= 0


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_refuted_with_a_confirmed_counterexample(name: str) -> None:
    claim = MUTANTS[name]()
    [result] = dp.check(dp.spec(name=name, claims=[claim]))
    assert result.status.value == "refuted", result.message
    witness = result.witness
    assert witness is not None and isinstance(witness.x, dict) and witness.x_prime is None
    assert "confirmed exactly" in result.message and result.method in result.message
    assert fails_at(claim, witness.x), (witness, result.message)


def test_every_catalogue_formula_claim_has_a_mutant() -> None:
    prefixes = {"barrier_sum", "barrier_nonnegative", "barrier_convex", "sauer_bound", "sauer_thresholds",
                "sauer_intervals", "geometric_sum", "geometric_shift", "hamming_base", "hamming_step",
                "laplace_tail"}
    assert {p for p in prefixes if any(name.startswith(p) for name in MUTANTS)} == prefixes
