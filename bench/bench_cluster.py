"""Benchmark: every dataset's law and a sample-complexity sum on a Dask cluster of 1 and of 2 workers,
against the local run.

The mechanism is bench_screening.py's scattered categorical (4 records, n = 6 by default: 4,096
datasets, 3,027 distinct laws), computed at 50 digits by

* local: ``dpverify.engine.program.reading.all_distributions`` in this process (what a run does without
  ``--scheduler``; a spec file's laws are computed in one process);
* cluster: ``dpverify.engine.execution.cluster_laws.all_distributions`` with a ``distributed.LocalCluster`` of
  1 and then 2 single-threaded worker processes on this machine (the same path as
  ``dpverify check --scheduler tcp://HOST:PORT``: units carry the spec file's path, workers import it
  and fork a child per unit).

The sample-complexity sum is P[true error > 1/4] for the threshold learner below (the exponential
mechanism over 6 thresholds, read per multiset: not of the counts form) on 5 labelled records at
n = 20 by default (10,626 multisets), at 50 digits, by :class:`dpverify.engine.datasets.multisets.MultisetSum`:

* local: in this process (what ``dpverify check`` does), and over 2 forked processes (``workers=2``,
  ``multisets.PARALLEL_FROM`` lowered to 0);
* cluster: the same sum with a ``LocalCluster`` of 1 and then 2 workers
  (``dpverify.engine.execution.cluster_sums``: units carry the path of this file, workers import it), with
  ``multisets.REMOTE_FROM`` lowered to 0 so that this size goes to the cluster.

Each table must equal the local one (the same laws, exactly) and each enclosure the local one (the
same interval ends); the figures are the fastest of ``--repeat`` runs.  On a machine with 2 cores
shared with other jobs, 2 workers cannot give 2x.

Run:  python bench/bench_cluster.py [--n N] [--sums-n N] [--repeat N]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

XS, THRESHOLDS, TARGET = (0, 1, 2, 3, 4), tuple(range(6)), 2
POPULATION = tuple(((x, int(x >= TARGET)), Fraction(1, len(XS))) for x in XS)


def threshold_learner(data, eps):
    """The exponential mechanism over the thresholds, scored by minus the empirical error (module level:
    the cluster's workers import it from this file by path)."""
    import dpverify as dp
    errors = {t: sum(int(x >= t) != y for x, y in data) for t in THRESHOLDS}
    return dp.exponential(THRESHOLDS, lambda t: -Fraction(errors[t], len(data)), eps,
                          sensitivity=Fraction(1, len(data)))


def too_wrong(t) -> bool:
    """Whether threshold t has true error > 1/4."""
    return sum(p for (x, y), p in POPULATION if int(x >= t) != y) > Fraction(1, 4)


def failure(n: int, workers: int = 1):
    from dpverify.engine.datasets.multisets import MultisetSum
    return MultisetSum(threshold_learner, {"eps": 1}, POPULATION, too_wrong, 50, workers=workers).at(n)


def fastest(fn, repeat: int):
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def ends(table) -> list:
    return [sorted((repr(o), w._mpi_) for o, w in law.items()) for law in table.laws]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=6, help="dataset size (4^n datasets, default 6)")
    parser.add_argument("--sums-n", type=int, default=20, help="sample size of the sum (default 20)")
    parser.add_argument("--repeat", type=int, default=3, help="keep the fastest of N runs (default 3)")
    args = parser.parse_args()

    from distributed import LocalCluster

    import bench_screening
    from dpverify.engine.execution import cluster_laws, executor
    from dpverify.engine.datasets import multisets
    from dpverify.engine.datasets.datasets import enumerate_datasets
    from dpverify.engine.program.reading import all_distributions

    spec = bench_screening.scattered_spec(args.n)
    datasets = enumerate_datasets(spec.universe)
    program = spec.mechanism
    assert cluster_laws.program_reference(program) is not None
    local_seconds, local = fastest(lambda: all_distributions(program, datasets, {"eps": 1}, 50), args.repeat)
    rows = [("local, 1 process", local_seconds, True)]
    sums_seconds, sums = fastest(lambda: failure(args.sums_n), args.repeat)
    multisets.PARALLEL_FROM = 0  # this size over the local pool too
    pool_seconds, pooled = fastest(lambda: failure(args.sums_n, workers=2), args.repeat)
    sums_rows = [("local, 1 process", sums_seconds, True), ("local, 2 forked processes", pool_seconds,
                                                            pooled._mpi_ == sums._mpi_)]
    multisets.REMOTE_FROM = 0
    for workers in (1, 2):
        cluster = LocalCluster(processes=True, n_workers=workers, threads_per_worker=1, dashboard_address=None,
                               silence_logs=50)
        os.environ[executor.ENVIRONMENT] = cluster.scheduler_address
        try:
            seconds, table = fastest(lambda: cluster_laws.all_distributions(program, datasets, {"eps": 1}, 50),
                                     args.repeat)
            summed_seconds, summed = fastest(lambda: failure(args.sums_n), args.repeat)
        finally:
            executor.close_all()
            del os.environ[executor.ENVIRONMENT]
            cluster.close()
        same = table.law_of == local.law_of and ends(table) == ends(local)
        rows.append((f"Dask LocalCluster, {workers} worker{'s' if workers > 1 else ''}", seconds, same))
        sums_rows.append((rows[-1][0], summed_seconds, summed._mpi_ == sums._mpi_))
    print(f"{len(datasets):,} datasets, {len(local.laws):,} distinct laws, {os.cpu_count()} cores "
          f"(load average {os.getloadavg()[0]:.1f})")
    for name, seconds, same in rows:
        print(f"{name:<28} {seconds:7.2f} s   same table as local: {'yes' if same else 'NO'}")
    one, two = rows[1][1], rows[2][1]
    print(f"speedup 2 workers vs 1: {one / two:.2f}x; 2 workers vs local: {local_seconds / two:.2f}x")
    print(f"\nsample-complexity sum at n = {args.sums_n}: {multisets.multisets(tuple(POPULATION), args.sums_n):,} "
          f"multisets, P in {sums}")
    for name, seconds, same in sums_rows:
        print(f"{name:<28} {seconds:7.2f} s   same enclosure as local: {'yes' if same else 'NO'}")
    one, two = sums_rows[2][1], sums_rows[3][1]
    print(f"speedup 2 workers vs 1: {one / two:.2f}x; 2 workers vs local: {sums_seconds / two:.2f}x")


if __name__ == "__main__":
    main()
