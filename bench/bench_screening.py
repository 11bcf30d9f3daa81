"""Benchmark: the engine's pair screening against the same screening as bare numpy float64, one run.

For each mechanism the output laws of every dataset are computed once (not timed), then timed on the
same universe, pairs and laws:

* raw (the baseline): the laws as a plain float64 matrix indexed by dataset (their midpoints), and
  the largest privacy loss over every ordered neighbouring pair and output as one numpy expression,
  in two ways -- differences of logs, ``L = log(P); d = L[left] - L[right]; max(d.max(), -d.min())``,
  and quotients, ``r = P[left] / P[right]; log(max(r.max(), 1 / r.min()))`` -- and the faster of the
  two is the baseline.  Uncertified: it rounds as it goes and says nothing about its error.
* engine screening: ``LossTable(table, left, right).max_loss()`` with the table's float enclosures
  already built -- pairs mapped to pairs of distinct laws, one vectorised pass over rigorous bounds of
  every ratio, and the cells that reach the maximum certified in mpmath intervals: the certified
  achieved epsilon (dpverify/engine/screening.py, engine/loss/pairs.py).
* enclosures: building the table's float enclosures (outward-rounded float64 bounds of every
  distinct law's probabilities, from the mpmath intervals), once per table and grid point;
  engine end to end = enclosures + screening.

Throughput counts pair·outputs: ordered neighbouring pairs (2 per unordered pair) times outputs.
``--laws`` also times the law computation itself in two child processes, with mpmath on gmpy2
(when installed) and with MPMATH_NOGMPY=1 (pure-Python integers), and python-flint's arb log
against mpmath's interval log for the certified part.

Run:  python bench/bench_screening.py [--repeat N] [--n N] [--laws]

A measurement, not a test: it asserts nothing about time (the engine and the baseline must agree on
the achieved epsilon, to the baseline's float accuracy).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

import dpverify as dp
from dpverify.checks.workspace import Workspace
from dpverify.engine.loss import screening
from dpverify.engine.loss.pairs import LossTable
from dpverify.options import Options

sys.path.insert(0, str(Path(__file__).parent))
from bench_engine import SPEC as LEARNER  # noqa: E402  (the threshold learner: 225 distinct laws of 4,096)

eps = dp.symbol("eps", positive=True)
OUTPUTS = tuple(range(8))


def scattered(data, eps):
    """A categorical law over 8 outputs whose weights depend on the whole dataset (most laws distinct:
    the merging of repeated pairs of laws does not help, every pair is screened)."""
    s = sum(x * 4 ** i for i, x in enumerate(data))
    weights = {o: 1 + (s * (2 * o + 3) + o * o * s // 3) % 1009 for o in OUTPUTS}
    total = sum(weights.values())
    return dp.categorical({o: Fraction(w, total) for o, w in weights.items()})


def scattered_spec(n: int) -> dp.Spec:
    return dp.spec(scattered, name=f"scattered categorical, 4 records, n = {n}",
                   universe=dp.universe(records=(0, 1, 2, 3), n=n, neighbours=dp.REPLACE_ONE),
                   grid={eps: [1]}, claims=[dp.private(eps)])


def fastest(fn, repeat: int) -> tuple[float, object]:
    best, value = math.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def measure(spec: dp.Spec, repeat: int) -> dict:
    ws = Workspace(Options(precision=50))
    point = spec.points[0]
    start = time.perf_counter()
    table = ws.table(spec, spec.mechanism, point)
    laws_seconds = time.perf_counter() - start
    _, left, right = ws.datasets(spec)
    outputs = sorted({o for law in table.laws for o in law}, key=repr)
    column = {o: k for k, o in enumerate(outputs)}
    by_law = np.zeros((len(table.laws), len(outputs)))
    for r, law in enumerate(table.laws):
        for o, w in law.items():
            by_law[r, column[o]] = float(w.mid)
    matrix = by_law[np.asarray(table.law_of)]  # per dataset, as a bare computation would hold them

    def raw_log():
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.log(matrix)
            d = logs[left] - logs[right]
            return max(float(d.max()), -float(d.min()))

    def raw_ratio():
        with np.errstate(divide="ignore", invalid="ignore"):
            r = matrix[left] / matrix[right]
            return math.log(max(float(r.max()), 1 / float(r.min())))

    def enclose():
        table._float_enclosures = None
        return screening.enclose(table)

    def engine():
        return LossTable(table, left, right).max_loss()[0]

    def end_to_end():
        enclose()
        return engine()

    t_log, raw_value = fastest(raw_log, repeat)
    t_ratio, _ = fastest(raw_ratio, repeat)
    t_enclose, _ = fastest(enclose, repeat)
    t_engine, achieved = fastest(engine, repeat)
    t_total, _ = fastest(end_to_end, repeat)
    cells = 2 * len(left) * len(outputs)
    return {"mechanism": spec.name, "datasets": len(table.datasets), "pairs": len(left), "laws": len(table.laws),
            "outputs": len(outputs), "pair_outputs": cells, "laws_seconds": laws_seconds,
            "raw_log": t_log, "raw_ratio": t_ratio, "enclose": t_enclose, "engine": t_engine, "total": t_total,
            "raw_eps": raw_value, "achieved": achieved}


def report(m: dict) -> None:
    baseline = min(m["raw_log"], m["raw_ratio"])
    rate = lambda seconds: f"{m['pair_outputs'] / seconds / 1e6:8.1f} M/s ({seconds * 1e3:7.2f} ms)"  # noqa: E731
    achieved = m["achieved"]
    agree = achieved != math.inf and abs(float(achieved.mid) - m["raw_eps"]) <= 1e-9 * max(1.0, m["raw_eps"])
    rows = [
        ("mechanism", m["mechanism"]),
        ("datasets / pairs / distinct laws / outputs",
         f"{m['datasets']:,} / {m['pairs']:,} / {m['laws']:,} / {m['outputs']}"),
        ("pair·outputs (ordered pairs x outputs)", f"{m['pair_outputs']:,}"),
        ("laws computed once (mpmath intervals, not timed below)", f"{m['laws_seconds']:.2f} s"),
        ("raw numpy float64, log differences", rate(m["raw_log"])),
        ("raw numpy float64, quotients", rate(m["raw_ratio"])),
        ("engine screening (certified achieved eps)", rate(m["engine"])),
        ("engine enclosures (once per table)", f"{m['enclose'] * 1e3:.2f} ms"),
        ("engine end to end (enclosures + screening)", rate(m["total"])),
        ("screening / raw throughput", f"{baseline / m['engine']:.0%}"),
        ("end to end / raw throughput", f"{baseline / m['total']:.0%}"),
        ("achieved eps (engine, certified)", f"{float(achieved.mid):.15g}" if achieved != math.inf else "inf"),
        ("achieved eps (raw floats)", f"{m['raw_eps']:.15g}  agree: {'yes' if agree else 'NO'}"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print()


CHILD = """
import json, time, sys, mpmath
sys.path.insert(0, {bench!r})
import bench_screening as b
from dpverify.checks.workspace import Workspace
from dpverify.options import Options
out = {{"backend": mpmath.libmp.BACKEND}}
for name, spec in (("learner", b.LEARNER), ("scattered", b.scattered_spec({n}))):
    best = float("inf")
    for _ in range({repeat}):
        ws = Workspace(Options(precision=50))
        start = time.perf_counter()
        ws.table(spec, spec.mechanism, spec.points[0])
        best = min(best, time.perf_counter() - start)
    out[name] = best
print(json.dumps(out))
"""


def laws_by_backend(n: int, repeat: int) -> None:
    """The law computation with mpmath on gmpy2 and on Python integers, each in a child process."""
    code = CHILD.format(bench=str(Path(__file__).parent), n=n, repeat=max(1, min(repeat, 3)))
    results = {}
    for label, extra in (("default", {}), ("MPMATH_NOGMPY=1", {"MPMATH_NOGMPY": "1"})):
        env = {**os.environ, **extra}
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        results[label] = json.loads(done.stdout.strip().splitlines()[-1])
    print("law computation (all datasets, mpmath intervals at 50 digits), fastest of runs:")
    for label, found in results.items():
        print(f"  {label:<16} mpmath backend {found['backend']:<7} learner {found['learner']:.3f} s   "
              f"scattered {found['scattered']:.3f} s")
    gmpy, python = results["default"], results["MPMATH_NOGMPY=1"]
    if gmpy["backend"] == "gmpy":
        print(f"  gmpy2 speed-up: learner {python['learner'] / gmpy['learner']:.2f}x, "
              f"scattered {python['scattered'] / gmpy['scattered']:.2f}x")
    else:
        print("  gmpy2 is not installed here (pip install gmpy2 to compare; it is not a dependency: bench/README.md)")
    certified_logs(repeat)


def certified_logs(repeat: int) -> None:
    """The certified part: interval logs of 3,000 probabilities, mpmath against python-flint's arb."""
    from mpmath.ctx_iv import MPIntervalContext
    ctx = MPIntervalContext()
    ctx.dps = 50
    values = [ctx.mpf(1) / ctx.mpf(k + 3) for k in range(3000)]
    t_mpmath, _ = fastest(lambda: [ctx.log(v) for v in values], repeat)
    try:
        import flint
    except ImportError:
        print("  python-flint is not installed: no arb comparison")
        return
    flint.ctx.prec = 170

    def arb_log():
        out = []
        for v in values:
            (sa, ma, ea, _), (sb, mb, eb, _) = v._mpi_
            lo = flint.arb(int(ma)) * flint.arb(2) ** int(ea)  # the exact dyadic ends
            hi = flint.arb(int(mb)) * flint.arb(2) ** int(eb)
            out.append(lo.union(hi).log())
        return out
    t_arb, _ = fastest(arb_log, repeat)
    print(f"certified logs of 3,000 intervals: mpmath {t_mpmath * 1e6 / 3000:.1f} µs each, "
          f"python-flint arb (with the conversion from mpmath) {t_arb * 1e6 / 3000:.1f} µs each")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="keep the fastest of N runs of each (default 7)")
    parser.add_argument("--n", type=int, default=6, help="dataset size of the scattered mechanism (4^n datasets)")
    parser.add_argument("--laws", action="store_true",
                        help="also time the law computation with and without gmpy2, and arb against mpmath")
    args = parser.parse_args()
    ratios = []
    for spec in (LEARNER, scattered_spec(args.n)):
        m = measure(spec, max(1, args.repeat))
        report(m)
        ratios.append(min(m["raw_log"], m["raw_ratio"]) / m["engine"])
    if args.laws:
        laws_by_backend(args.n, args.repeat)
    print(f"screening at {min(ratios):.0%} of raw float64 throughput (the lower of the two mechanisms)")


if __name__ == "__main__":
    main()
