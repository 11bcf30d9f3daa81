"""Benchmark: the dpverify engine against a plain per-pair recomputation.

Mechanism: the exponential-mechanism private learner for thresholds on a
4-point line.  Records are labelled points (x, y) with x in {0,1,2,3} and
y in {0,1} (8 records); hypotheses are h_t(x) = 1 iff x >= t, t in 0..4;
the score of h_t is minus its empirical error on the dataset (a Fraction),
with sensitivity 1/n.  n = 4, replace-one neighbours, no symmetry reduction:
8^4 = 4096 ordered datasets.  eps = 1.

* engine:   ``dpverify.check(spec)`` at 50 digits (certified intervals); the
            achieved epsilon is the one the check reports.
* baseline: for every ordered neighbouring pair (X, X'), both output laws are
            computed from scratch with mpmath at 50 digits (exp of
            eps*score/(2*Delta), normalised) and the largest
            ln(P(o|X)/P(o|X')) over outputs is kept; the overall maximum is the
            baseline's achieved epsilon.

Run:  python bench/bench_engine.py [--repeat N] [--profile]

This is a measurement, not a test: it asserts nothing about time.  The last
line printed is ``speedup: N.Nx`` (baseline seconds / engine seconds, wall); the line
before it gives the same ratio in CPU seconds, which a loaded machine distorts far less.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import itertools
import os
import pstats
import time
from fractions import Fraction

import mpmath

import dpverify as dp
from dpverify.engine.decide.decimals import DIGITS

PRECISION = 50       # decimal digits, engine and baseline alike
SHOW_DIGITS = 35     # digits printed for each achieved epsilon
AGREE_DIGITS = 30    # the two achieved epsilons must agree to this many digits

XS = (0, 1, 2, 3)
LABELS = (0, 1)
THRESHOLDS = tuple(range(len(XS) + 1))  # h_t for t = 0..4
N = 4
EPS = 1
SENSITIVITY = Fraction(1, N)


def errors(data: tuple, t: int) -> int:
    """Mistakes of h_t(x) = [x >= t] on the labelled records of ``data``."""
    return sum(int(x >= t) != y for x, y in data)


def score(data: tuple, t: int) -> Fraction:
    """Minus the empirical error of h_t on ``data``."""
    return -Fraction(errors(data, t), len(data))


# ----- the spec ------------------------------------------------------------------------

eps = dp.symbol("eps", positive=True)


def threshold_learner(data, eps):
    """Pick a threshold t with probability proportional to exp(eps * (-error_t) / (2 * (1/n)))."""
    return dp.exponential(THRESHOLDS, lambda t: score(data, t), eps, sensitivity=Fraction(1, len(data)))


SPEC = dp.spec(
    threshold_learner,
    name="threshold_learner",
    universe=dp.universe(dp.labelled(xs=XS, labels=LABELS), n=N, neighbours=dp.REPLACE_ONE),
    grid={eps: [EPS]},
    claims=[dp.private(eps)],
)


# ----- engine -----------------------------------------------------------------------------

CPU: dict = {}
"""The CPU seconds (time.process_time) of the last run of each side: on a shared machine the wall
seconds say more about the other processes than about dpverify."""


def run_engine():
    """One full ``dpverify.check`` of the spec: (seconds, point result)."""
    start, cpu = time.perf_counter(), time.process_time()
    results = dp.check(SPEC, precision=PRECISION, proofs=False)
    seconds = time.perf_counter() - start
    CPU["engine"] = min(CPU.get("engine", float("inf")), time.process_time() - cpu)
    (result,) = results
    return seconds, result


# ----- baseline ---------------------------------------------------------------------------

def baseline_law(data: tuple) -> list:
    """P(t | data) for every threshold, from scratch, in the current mpmath context."""
    weights = []
    for t in THRESHOLDS:
        exponent = EPS * score(data, t) / (2 * SENSITIVITY)  # an exact Fraction
        weights.append(mpmath.exp(mpmath.mpf(exponent.numerator) / exponent.denominator))
    total = mpmath.fsum(weights)
    return [w / total for w in weights]


def ordered_neighbours():
    """Every ordered replace-one pair (X, X') of the universe, enumerated independently of the engine."""
    records = [(x, y) for x in XS for y in LABELS]
    for data in itertools.product(records, repeat=N):
        for pos, record in enumerate(data):
            for other in records:
                if other != record:
                    yield data, data[:pos] + (other,) + data[pos + 1:]


def run_baseline():
    """(seconds, achieved epsilon as an mpf, datasets, ordered pairs)."""
    start, cpu = time.perf_counter(), time.process_time()
    with mpmath.workdps(PRECISION):
        best = mpmath.mpf("-inf")
        pairs = 0
        seen = set()
        for x, x_prime in ordered_neighbours():
            seen.add(x)
            pairs += 1
            p, q = baseline_law(x), baseline_law(x_prime)
            for p_o, q_o in zip(p, q):
                loss = mpmath.log(p_o / q_o)
                if loss > best:
                    best = loss
    seconds = time.perf_counter() - start
    CPU["baseline"] = min(CPU.get("baseline", float("inf")), time.process_time() - cpu)
    return seconds, best, len(seen), pairs


# ----- reporting --------------------------------------------------------------------------

def agreeing_digits(a: mpmath.mpf, b: mpmath.mpf) -> float:
    """How many significant decimal digits a and b share (relative difference)."""
    with mpmath.workdps(PRECISION + 10):
        if a == b:
            return float(PRECISION)
        return float(-mpmath.log10(abs(a - b) / abs(b)))


def profile_engine(top: int = 25) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    run_engine()
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1,
                        help="time each side N times and keep the fastest (default 1)")
    parser.add_argument("--profile", action="store_true",
                        help="also print a cProfile of one engine run (before the table)")
    args = parser.parse_args()

    if args.profile:
        print(profile_engine())

    engine_runs = [run_engine() for _ in range(max(1, args.repeat))]
    engine_seconds = min(s for s, _ in engine_runs)
    result = engine_runs[0][1]
    baseline_runs = [run_baseline() for _ in range(max(1, args.repeat))]
    baseline_seconds = min(r[0] for r in baseline_runs)
    _, baseline_eps, datasets, pairs = baseline_runs[0]

    with mpmath.workdps(PRECISION):
        engine_eps = mpmath.mpf(result.evidence.achieved_epsilon)
    digits = agreeing_digits(engine_eps, baseline_eps)
    agree = digits >= AGREE_DIGITS
    figures = result.evidence.figures()

    rows = [
        ("mechanism", "exponential-mechanism threshold learner, eps = 1, sensitivity 1/4"),
        ("datasets", f"{figures.get('datasets', '?'):,} engine / {datasets:,} baseline"),
        ("ordered neighbouring pairs", f"{2 * figures.get('pairs', 0):,} engine / {pairs:,} baseline"),
        ("distinct output laws (engine)", f"{figures.get('distinct_laws', '?')}"),
        ("outputs", f"{figures.get('outputs', '?')}"),
        ("claim status (engine)", result.status.value),
        ("engine seconds", f"{engine_seconds:.3f} wall, {CPU['engine']:.3f} CPU"),
        ("baseline seconds", f"{baseline_seconds:.3f} wall, {CPU['baseline']:.3f} CPU"),
        ("engine achieved eps", mpmath.nstr(engine_eps, SHOW_DIGITS, strip_zeros=False)),
        ("baseline achieved eps", mpmath.nstr(baseline_eps, SHOW_DIGITS, strip_zeros=False)),
        (f"agree to {AGREE_DIGITS} digits", f"{'yes' if agree else 'NO'} ({digits:.1f} digits agree; "
                                           f"the engine reports {DIGITS} digits)"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"speedup in CPU seconds: {CPU['baseline'] / CPU['engine']:.1f}x")
    print(f"speedup: {baseline_seconds / engine_seconds:.1f}x")


if __name__ == "__main__":
    main()
