"""Benchmark: the exact failure probability of the private threshold learner as n grows.

Realizable setting on a 4-point domain: x uniform on {0, 1, 2, 3}, labels from
the target threshold t* = 2, hypotheses h_t for t = 0..4, the exponential
mechanism with eps = 1 and score minus the empirical error (sensitivity 1/n).
For each n the check sums over the C(n+3, 3) multisets of the sample (not the
4^n sequences) the multinomial probability times the learner's exact
probability of an output with true error > alpha = 1/4, as a certified
enclosure.

Run:  python bench/bench_sample_complexity.py [N ...] [--workers W] [--baseline-up-to M]

Default sizes 10 50 100 200 400 (a few minutes on two cores), W = the number
of CPUs, M = 50.  For each n it prints the multisets, the seconds of the fast
reading (dpverify.engine.fastlaw: exact integer weights, one-exponential-draw
runs enclosed with outward-rounded integer arithmetic; sums of 50,000 multisets
or more are split over W forked processes) and its CPU seconds (this process
and its workers; the wall time depends on what else the machine runs), the CPU
microseconds per multiset, the runs that fell back to the general interval
reading (0 here), the certified probability (40 digits of the enclosure's
midpoint) with the enclosure's width, and the exponent of a power-law fit of the seconds between
successive n (polynomial growth shows as a bounded exponent, about 3 here, as
the multiset count).  For n <= M it also runs the general interval reading
(the path every multiset took before the fast reading, in one process) and
prints its seconds, the speedup and whether the two enclosures overlap.
Asserts nothing about time.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from fractions import Fraction

import dpverify as dp
from dpverify.checks.theorems.sample_complexity import FailureProbability
from dpverify.engine.multisets import PARALLEL_FROM, multisets
from dpverify.engine.decimals import decimal

XS = (0, 1, 2, 3)
THRESHOLDS = (0, 1, 2, 3, 4)
TARGET = 2
POPULATION = {(x, int(x >= TARGET)): Fraction(1, 4) for x in XS}
eps = dp.symbol("eps", positive=True)


def learner(data, eps):
    """The exponential mechanism over thresholds; the errors come from the sample's counts (O(|H| r))."""
    counts = getattr(data, "counts", None) or {r: data.count(r) for r in set(data)}
    def score(t):
        return -Fraction(sum(c for (x, y), c in counts.items() if int(x >= t) != y), len(data))
    return dp.exponential(THRESHOLDS, score, eps, sensitivity=Fraction(1, len(data)))


def true_error(t):
    return sum(p for (x, y), p in POPULATION.items() if int(x >= t) != y)


SPEC = dp.spec(learner, universe=dp.universe(list(POPULATION), n=1, neighbours=dp.REPLACE_ONE, symmetric=True),
               grid={eps: [1]},
               claims=[dp.sample_complexity(population=POPULATION, error=true_error, alpha=Fraction(1, 4),
                                            beta=Fraction(1, 4), bound=1)])


def main(sizes: list[int], workers: int, baseline_up_to: int) -> None:
    claim, point = SPEC.claims[0], SPEC.points[0]
    print(f"fast reading: {workers} worker(s) from {PARALLEL_FROM:,} multisets on; {os.cpu_count()} CPUs; "
          f"general interval reading (old path) for n <= {baseline_up_to}, one process")
    print(f"{'n':>5} {'multisets':>12} {'seconds':>9} {'cpu s':>8} {'us/ms':>6} {'fallback':>8} {'old s':>8} "
          f"{'speedup':>8} {'agree':>5}  {'P[error > 1/4]':>44} {'width':>8}  growth")
    previous = None
    for n in sizes:
        count = multisets(tuple(POPULATION), n)
        failure = FailureProbability(SPEC, claim, point, claim.alpha, 50, workers=workers)
        start, cpu = time.perf_counter(), _cpu()
        value = failure.at(n)
        seconds, cpu = time.perf_counter() - start, _cpu() - cpu
        old = speedup = agree = ""
        if n <= baseline_up_to:
            general = FailureProbability(SPEC, claim, point, claim.alpha, 50, fast=False)
            start = time.perf_counter()
            reference = general.at(n)
            old_seconds = time.perf_counter() - start
            old, speedup = f"{old_seconds:.2f}", f"{old_seconds / seconds:.1f}x"
            agree = "yes" if value.a <= reference.b and reference.a <= value.b else "NO"
        growth = ""
        if previous is not None:
            growth = f"{math.log(seconds / previous[1]) / math.log(n / previous[0]):.2f}"
        print(f"{n:>5} {count:>12,} {seconds:>9.2f} {cpu:>8.2f} {cpu / count * 1e6:>6.1f} {failure.fallbacks:>8} "
              f"{old:>8} {speedup:>8} {agree:>5}  {decimal(value):>44} {float(value.delta):>8.1e}  {growth}",
              flush=True)
        previous = (n, seconds)


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (the forked workers)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[10, 50, 100, 200, 400])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--baseline-up-to", type=int, default=50)
    args = parser.parse_args()
    main(args.sizes, args.workers, args.baseline_up_to)
    sys.exit(0)
