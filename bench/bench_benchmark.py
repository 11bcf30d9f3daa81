"""Benchmark: the verdict on every mechanism of the literature benchmark (spec/benchmark/), timed.

For each claim of each spec under spec/benchmark/ (or the paths given), at
every grid point: the verdict, the claimed and the achieved epsilon, whether
the verdict is the expected one (broken mechanisms' published claims carry
expect="refuted"), and the seconds it took (fresh workspace per spec, so each
row includes computing the spec's exact output laws).

Baseline, measured in the same run: the exact closed-form integration of the
output law of report-noisy-max (Laplace noise, m queries) against mpmath's
adaptive quadrature of the textbook integral P[i wins] = int f_i(x)
prod_{j != i} F_j(x) dx at the same 50 digits (quadrature is not certified
and not exact: the engine's law is both).

Run:  python bench/bench_benchmark.py [PATH ...]
A measurement, not a test: it asserts nothing.
"""
from __future__ import annotations

import sys
import time
from fractions import Fraction

import mpmath
import sympy

import dpverify as dp
from dpverify.checks import Options, Workspace, check_point
from dpverify.engine.program.backend import IntervalBackend
from dpverify.engine.program.reading import distribution
from dpverify.loader import discover, load


def verdicts(paths: list[str]) -> None:
    print(f"{'spec':<26} {'claim':<22} {'point':<10} {'verdict':<20} {'claimed':>9} {'achieved':>12} {'seconds':>8}")
    total = 0.0
    for path in discover(paths or ["spec/benchmark"]):
        for spec in load(path):
            ws = Workspace(Options())
            for claim in spec.claims:
                for point in spec.points_for(claim):
                    start = time.perf_counter()
                    result = check_point(spec, claim, point, ws)
                    seconds = time.perf_counter() - start
                    total += seconds
                    verdict = result.status.value
                    if getattr(claim, "expect", None) == "refuted":
                        verdict += " (expected)" if verdict == "refuted" else " (UNEXPECTED)"
                    label = ",".join(f"{k}={v}" for k, v in result.params.items()) or "-"
                    print(f"{spec.name:<26} {claim.id:<22} {label:<10} {verdict:<20} "
                          f"{_short(result.evidence.claimed_epsilon):>9} "
                          f"{('>=' if result.evidence.achieved_is_lower_bound else '') + _short(result.evidence.achieved_epsilon):>12} "
                          f"{seconds:>8.2f}")
    print(f"total {total:.2f} s")


def _short(value) -> str:
    if value is None:
        return "-"
    text = str(value)
    if text.startswith(">= "):
        return ">=" + _short(text[3:])
    try:
        return f"{float(text):.4g}"
    except ValueError:
        return text


def noisy_max(q, eps):
    best, best_value = 0, dp.laplace(q[0], 2 / eps)
    for i in range(1, len(q)):
        x = dp.laplace(q[i], 2 / eps)
        if x > best_value:
            best, best_value = i, x
    return best


def quadrature_law(q, eps, dps=50):
    law = {}
    with mpmath.workdps(dps):
        b = 2 / (mpmath.mpf(eps.numerator) / eps.denominator)
        f = lambda x, c: mpmath.exp(-abs(x - c) / b) / (2 * b)
        F = lambda x, c: mpmath.exp((x - c) / b) / 2 if x < c else 1 - mpmath.exp(-(x - c) / b) / 2
        breaks = [-mpmath.inf] + sorted(set(mpmath.mpf(c) for c in q)) + [mpmath.inf]
        for i, c in enumerate(q):
            law[i] = mpmath.quad(lambda x: f(x, c) * mpmath.fprod(F(x, d) for j, d in enumerate(q) if j != i), breaks)
    return law


def baseline() -> None:
    print("\nreport-noisy-max (Laplace), one dataset's whole output law at 50 digits:")
    print(f"{'m':>3} {'exact engine s':>15} {'mpmath.quad s':>14} {'ratio':>7} {'max |difference|':>18}")
    for m in (3, 5, 8):
        q = tuple((3 * i) % 4 for i in range(m))
        start = time.perf_counter()
        law = distribution(noisy_max, q, {"eps": sympy.Rational(1, 2)}, IntervalBackend(50))
        exact_s = time.perf_counter() - start
        start = time.perf_counter()
        quad = quadrature_law(q, Fraction(1, 2))
        quad_s = time.perf_counter() - start
        with mpmath.workdps(50):
            diff = max(abs(mpmath.mpf(law[i].mid) - quad[i]) for i in range(m))
        print(f"{m:>3} {exact_s:>15.4f} {quad_s:>14.4f} {quad_s / exact_s:>6.1f}x {mpmath.nstr(diff, 3):>18}")


if __name__ == "__main__":
    verdicts(sys.argv[1:])
    baseline()
