"""Benchmark: the exact failure probability of the private threshold learner as n grows, by counts.

Realizable setting on a 4-point domain: x uniform on {0, 1, 2, 3}, labels from
the target threshold t* = 2, hypotheses h_t for t = 0..4, the exponential
mechanism with eps = 1 and score minus the empirical error (sensitivity 1/n).
For each n, P[true error > alpha = 1/4] over the C(n+3, 3) multisets of the
sample (10.8 million at n = 400), as a certified enclosure, several ways in one run:

* new (dpverify.engine.datasets.counts): the learner's score is ``-dp.mean(...)``, so the
  engine traces it once on a sealed sample and reads its exponent as a linear
  form in the counts; the exact multinomial weights are summed by exponent
  vector and each group's share enclosed once ("grouped": as narrow as the
  old reading, about 10^-50), or, above 400,000 groups (here every count vector
  is its own group), the sum is enclosed in float64 interval arithmetic
  ("float": certified, about 14 significant digits);
* old (dpverify.engine.program.fastlaw, the per-multiset fast reading): the same learner
  written to read the sample's counts, run once per multiset and candidate,
  split over W forked processes from 50,000 multisets on (n <= O only), each multiset's orderings run too;
* blind (dpverify.engine.datasets.blind, n <= O): the same counting learner run once per multiset
  on a stand-in sample that only has counts and a length (no orderings to run, no replay per
  candidate); "same" says whether its enclosure is the old one bit for bit.

For n <= O it also runs the float enclosure at that n (forced) and says whether
all three enclosures overlap.  Seconds are CPU seconds of this process (the old path's forked
workers are not counted).  Asserts nothing about time.

Run:  python bench/bench_sample_complexity.py [N ...] [--workers W] [--old-up-to O]

Default sizes 10 50 100 200 400, W = the number of CPUs, O = 100.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from fractions import Fraction

import dpverify as dp
from dpverify.checks.theorems.sample_complexity import FailureProbability
from dpverify.engine.datasets import counts
from dpverify.engine.decide.decimals import decimal
from dpverify.engine.datasets.multisets import MultisetSum, multisets

XS = (0, 1, 2, 3)
THRESHOLDS = (0, 1, 2, 3, 4)
TARGET = 2
POPULATION = {(x, int(x >= TARGET)): Fraction(1, 4) for x in XS}
eps = dp.symbol("eps", positive=True)
error = dp.mean(lambda rec, t: int(int(rec[0] >= t) != rec[1]), domain=list(POPULATION))


def learner(data, eps):
    """The exponential mechanism over thresholds, score minus the empirical error (a dp.mean query)."""
    return dp.exponential(THRESHOLDS, (-error).on(data), eps, neighbours=dp.REPLACE_ONE)


def counting_learner(data, eps):
    """The same learner reading the sample's counts (O(|H| r) a run): the old path's best case."""
    counts_ = getattr(data, "counts", None) or {r: data.count(r) for r in set(data)}

    def score(t):
        return -Fraction(sum(c for (x, y), c in counts_.items() if int(x >= t) != y), len(data))
    return dp.exponential(THRESHOLDS, score, eps, sensitivity=Fraction(1, len(data)))


def true_error(t):
    return sum(p for (x, y), p in POPULATION.items() if int(x >= t) != y)


def spec_of(program):
    return dp.spec(program, universe=dp.universe(list(POPULATION), n=1, neighbours=dp.REPLACE_ONE, symmetric=True),
                   grid={eps: [1]},
                   claims=[dp.sample_complexity(population=POPULATION, error=true_error, alpha=Fraction(1, 4),
                                                beta=Fraction(1, 4), bound=1)])


def timed(program, n: int, ordinary: bool = False, **kwargs):
    """(enclosure at n, CPU seconds, the FailureProbability); ``ordinary``: the per-multiset fast reading with
    its order checks (MultisetSum._fast), not the blind reading (dpverify.engine.datasets.blind)."""
    spec = spec_of(program)
    claim, point = spec.claims[0], spec.points[0]
    failure = FailureProbability(spec, claim, point, claim.alpha, 50, **kwargs)
    if ordinary:
        failure._fast = lambda n: MultisetSum._fast(failure, n)
    start = time.process_time()
    value = failure.at(n)
    return value, time.process_time() - start, failure


def width(value) -> str:
    return f"{float(((value.b - value.a) / value.b).a):.0e}" if value.b else "0"


def overlap(a, b) -> bool:
    return a.a <= b.b and b.a <= a.b


def main(sizes: list[int], workers: int, old_up_to: int) -> None:
    print(f"new: counts form (grouped exact up to {counts.GROUP_LIMIT:,} groups, else float64 intervals); "
          f"old: per-multiset fast reading, {workers} worker(s), n <= {old_up_to}; {os.cpu_count()} CPUs")
    print(f"{'n':>4} {'multisets':>11} {'path':>8} {'groups':>9} {'new s':>7} {'rel width':>9} {'old s':>8} "
          f"{'speedup':>8} {'float s':>7} {'agree':>5} {'blind s':>7} {'same':>4}  {'P[error > 1/4]':>44}")
    for n in sizes:
        value, seconds, failure = timed(learner, n)
        path = failure.paths[n]
        old = speedup = float_s = agree = blind_s = same = ""
        if n <= old_up_to:
            reference, old_seconds, _ = timed(counting_learner, n, ordinary=True, workers=workers)
            seen, blind_seconds, blind_failure = timed(counting_learner, n)
            blind_s = f"{blind_seconds:.2f}" if blind_failure.order_log.get(n) == "blind" else "-"
            original, counts.GROUP_LIMIT = counts.GROUP_LIMIT, 0
            try:
                floating, float_seconds, _ = timed(learner, n)
            finally:
                counts.GROUP_LIMIT = original
            old, speedup, float_s = f"{old_seconds:.2f}", f"{old_seconds / seconds:.1f}x", f"{float_seconds:.2f}"
            agree = "yes" if overlap(value, reference) and overlap(floating, reference) else "NO"
            same = "yes" if seen._mpi_ == reference._mpi_ else "NO"
        groups = f"{failure.groups[n]:,}" if n in failure.groups else "-"
        print(f"{n:>4} {multisets(tuple(POPULATION), n):>11,} {path:>8} {groups:>9} {seconds:>7.2f} "
              f"{width(value):>9} {old:>8} {speedup:>8} {float_s:>7} {agree:>5} {blind_s:>7} {same:>4}  "
              f"{decimal(value):>44}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[10, 50, 100, 200, 400])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--old-up-to", type=int, default=100)
    args = parser.parse_args()
    main(args.sizes, args.workers, args.old_up_to)
    sys.exit(0)
