"""Benchmark: the exact failure probability of the private threshold learner as n grows.

Realizable setting on a 4-point domain: x uniform on {0, 1, 2, 3}, labels from
the target threshold t* = 2, hypotheses h_t for t = 0..4, the exponential
mechanism with eps = 1 and score minus the empirical error (sensitivity 1/n).
For each n the check sums over the C(n+3, 3) multisets of the sample (not the
4^n sequences) the multinomial probability times the learner's exact
probability of an output with true error > alpha = 1/4, in certified intervals.

Run:  python bench/bench_sample_complexity.py [N ...]   (default 10 50 100; 200 and 400 take minutes to an hour)

Prints seconds per n and the exponent of a power-law fit between successive n
(polynomial growth shows as a bounded exponent, about 3 here); asserts nothing.
"""
from __future__ import annotations

import math
import sys
import time
from fractions import Fraction

import dpverify as dp
from dpverify.checks.sample_complexity import FailureProbability, multisets

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


def main(sizes: list[int]) -> None:
    claim, point = SPEC.claims[0], SPEC.points[0]
    print(f"{'n':>5} {'multisets':>12} {'seconds':>9} {'P[error > 1/4]':>45}  growth exponent")
    previous = None
    for n in sizes:
        failure = FailureProbability(SPEC, claim, point, claim.alpha, 50)
        start = time.perf_counter()
        value = failure.at(n)
        seconds = time.perf_counter() - start
        growth = ""
        if previous is not None:
            growth = f"{math.log(seconds / previous[1]) / math.log(n / previous[0]):.2f}"
        print(f"{n:>5} {multisets(failure.records, n):>12,} {seconds:>9.2f} {dp_decimal(value):>45}  {growth}")
        previous = (n, seconds)


def dp_decimal(value) -> str:
    from dpverify.checks.workspace import decimal
    return decimal(value)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10, 50, 100])
