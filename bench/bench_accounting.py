"""Composed privacy profiles, timed: exact delta(eps) of T-fold randomized response, Gaussian and Laplace.

    python bench/bench_accounting.py                # T = 10 100 1000 for randomized response
    python bench/bench_accounting.py --times 1000 5000

For each question, the seconds dpverify's engine takes and its answer (40 digits, with the width of
the certified enclosure), then -- when Google's dp_accounting is installed -- its PLD accountant on
the same question (seconds, and its error against ours: negative means it reports less than the
exact delta, a violation of what an accountant promises).  A benchmark, not a test: it
prints figures and asserts only that the exact answer agrees with an independent binomial sum.
"""
from __future__ import annotations

import argparse
import time
from typing import Any, Optional

import mpmath


def _mid(value: Any) -> Any:
    return mpmath.mp.make_mpf(value.mid._mpi_[0])
from sympy import Rational, exp

from dpverify.engine.backend import IntervalBackend
from dpverify.engine.gaussian_delta import gaussian_delta
from dpverify.engine.pld import delta_at, lattice_pld
from dpverify.engine.pld_bounds import delta_bounds, discretise
from dpverify.engine.pld_gaussian_mixture import compose, one_step, subsampled_bounds
from dpverify.engine.pld_gaussian_tight import one_step_tight

EPS = Rational(1, 10)
AT = Rational(1)


def exact_rr(times: int) -> tuple[float, Any, int]:
    """(seconds, delta(AT) enclosure, terms) of the times-fold randomized response at EPS, from its laws."""
    start = time.perf_counter()
    keep = exp(EPS) / (1 + exp(EPS))
    pld = lattice_pld([keep, 1 - keep], [1 - keep, keep]).compose(times)
    value = delta_at(pld, AT + times * EPS / 4, IntervalBackend(50)).delta
    return time.perf_counter() - start, value, len(pld.terms)


def binomial(times: int) -> Any:
    """The same number as an independent binomial sum at 60 digits."""
    with mpmath.workdps(60):
        e, at = mpmath.mpf(1) / 10, 1 + mpmath.mpf(times) / 40
        keep = mpmath.exp(e) / (1 + mpmath.exp(e))
        return sum(mpmath.binomial(times, j) * keep ** j * (1 - keep) ** (times - j) * (1 - mpmath.exp(at - (2 * j - times) * e))
                   for j in range(times + 1) if (2 * j - times) * e > at)


def accountant_rr(times: int) -> Optional[tuple[float, float, float]]:
    """dp_accounting's PLD accountant on the same question, called as its users do --
    ``compose(event, count)`` -- and with ``times`` single ``compose(event)`` calls: (seconds of the
    first, its delta, the second's delta), or None when dp_accounting is not installed."""
    try:
        from dp_accounting import dp_event, pld as pld_accounting
        from dp_accounting.privacy_accountant import NeighboringRelation
    except ImportError:
        return None
    event = dp_event.RandomizedResponseDpEvent(noise_parameter=2 / (1 + float(mpmath.exp(EPS))), num_buckets=2)
    at = float(AT + times * EPS / 4)
    start = time.perf_counter()
    counted = pld_accounting.PLDAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
    counted.compose(event, times)
    value = counted.get_delta(at)
    seconds = time.perf_counter() - start
    looped = pld_accounting.PLDAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
    for _ in range(times):
        looped.compose(event)
    return seconds, value, looped.get_delta(at)


def gaussian(times: int) -> tuple[float, Any]:
    start = time.perf_counter()
    ctx = IntervalBackend(50).ctx
    value = gaussian_delta(ctx, ctx.sqrt(times) * ctx.mpf(1) / 10, ctx.mpf(1))
    return time.perf_counter() - start, value


def laplace(times: int, grid: int) -> tuple[float, Any, Any]:
    start = time.perf_counter()
    ctx = IntervalBackend(30).ctx
    found = discretise(ctx, [grid] * times, ctx.mpf(1) / grid)
    bounds = delta_bounds(ctx, found, ctx.mpf(1))
    return time.perf_counter() - start, bounds.lower, bounds.upper


SGD_RATE, SGD_SIGMA, SGD_AT = Rational(1, 100), 1, 1
SGD_GRIDS = (("rounded", (1000, 0.05, 6.0)), ("second order", (500, 0.05, 6.0)),
             ("second order", (1000, 0.03, 7.0)))
"""(bounds, (grid points per unit of loss, least output step of a cell, tails' edge in sigmas)): counted budgets."""


def subsampled(times: int, grid: tuple, tight: bool) -> tuple[float, Any, Any]:
    """(seconds, lower, upper) of delta_T(SGD_AT) of the Poisson-subsampled Gaussian (one DP-SGD step at
    rate SGD_RATE, sensitivity 1, noise SGD_SIGMA) composed ``times`` times, certified: cells rounded to
    the grid, or (``tight``) merged and split (second order)."""
    start = time.perf_counter()
    ctx = IntervalBackend(20).ctx
    h = ctx.mpf(1) / grid[0]
    steps = (one_step_tight if tight else one_step)(ctx, ctx.mpf(SGD_RATE.p) / SGD_RATE.q, ctx.mpf(1) / SGD_SIGMA, h, *grid[1:])
    bounds = subsampled_bounds(ctx, compose(steps, times, h), ctx.mpf(SGD_AT))
    return time.perf_counter() - start, mpmath.mp.make_mpf(bounds.lower._mpi_[0]), mpmath.mp.make_mpf(bounds.upper._mpi_[1])


def accountant_subsampled(times: int) -> Optional[tuple[float, float]]:
    """dp_accounting's PLDAccountant on the same question, as its users call it: (seconds, delta), or None."""
    try:
        from dp_accounting import dp_event, pld as pld_accounting
        from dp_accounting.privacy_accountant import NeighboringRelation
    except ImportError:
        return None
    start = time.perf_counter()
    accountant = pld_accounting.PLDAccountant(neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE)
    accountant.compose(dp_event.PoissonSampledDpEvent(float(SGD_RATE), dp_event.GaussianDpEvent(SGD_SIGMA)), times)
    value = accountant.get_delta(float(SGD_AT))
    return time.perf_counter() - start, value


def _digits(lower: Any, upper: Any) -> float:
    """Significant digits the bracket certifies: -log10 of its relative width."""
    return float(-mpmath.log10((upper - lower) / upper)) if upper > lower > 0 else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--times", type=int, nargs="*", default=[10, 100, 1000])
    args = parser.parse_args()
    print(f"randomized response at eps = {EPS}, delta(1 + T eps / 4) exactly (a polynomial power in w = e^eps)")
    print(f"{'T':>6} {'terms':>6} {'seconds':>8}  delta (40 digits)                            width      "
          f"agrees  dp_accounting PLD: compose(event, T) (seconds, error)")
    for times in args.times:
        seconds, value, terms = exact_rr(times)
        reference = binomial(times)
        with mpmath.workdps(60):
            agrees = value.a - mpmath.mpf(10) ** -45 <= reference <= value.b + mpmath.mpf(10) ** -45
        assert agrees, (times, value, reference)
        other = accountant_rr(times)
        exact = float(_mid(value))
        theirs = ("not installed" if other is None else
                  f"{other[0]:.3f} s, {other[1] - exact:+.3e} (T single calls: {other[2] - exact:+.3e})")
        print(f"{times:>6} {terms:>6} {seconds:>8.3f}  {mpmath.nstr(_mid(value), 40):<44} "
              f"{float(value.b - value.a):.1e}  {agrees!s:<6}  {theirs}")
    print("\nGaussian, sigma = 10 (shift 1), T runs: delta(1) at the distance sqrt(T) / 10, closed form")
    for times in args.times:
        seconds, value = gaussian(times)
        print(f"{times:>6} {seconds:>8.3f}  {mpmath.nstr(_mid(value), 40)}")
    print("\nLaplace(1), shift 1, T runs: delta(1) between certified bounds (grid of 1/64 and 1/512)")
    for times in (2, 10):
        for grid in (64, 512):
            seconds, lower, upper = laplace(times, grid)
            print(f"{times:>6} grid {grid:>4} {seconds:>8.3f}  [{mpmath.nstr(mpmath.mp.make_mpf(lower._mpi_[0]), 12)}, {mpmath.nstr(mpmath.mp.make_mpf(upper._mpi_[1]), 12)}]")
    print(f"\nPoisson-subsampled Gaussian (one DP-SGD step: q = {SGD_RATE}, sigma = {SGD_SIGMA}, sensitivity 1), T steps: "
          f"delta({SGD_AT}) between certified bounds; dp_accounting's PLDAccountant against them")
    print(f"{'T':>6} {'bounds':>12} {'grid':>18} {'seconds':>8}  {'lower':<20} {'upper':<20} digits  "
          "dp_accounting (seconds, delta, where)")
    for times in (1, 10, 100, 1000):
        other = accountant_subsampled(times)
        for bounds, grid in SGD_GRIDS:
            seconds, lower, upper = subsampled(times, grid, bounds != "rounded")
            where = ("" if other is None else "below the lower bound: a violation" if other[1] < lower else
                     "inside the bracket" if other[1] <= upper else "above the upper bound (slack)")
            theirs = "not installed" if other is None else f"{other[0]:.2f} s, {other[1]:.6e}, {where}"
            print(f"{times:>6} {bounds:>12} {str(grid):>18} {seconds:>8.2f}  {mpmath.nstr(lower, 10):<20} {mpmath.nstr(upper, 10):<20} "
                  f"{_digits(lower, upper):>5.1f}  {theirs}")


if __name__ == "__main__":
    main()
