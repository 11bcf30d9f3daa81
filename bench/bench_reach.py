"""Benchmark: how far a universe declared ``symmetric=True`` reaches, now that the declaration is shown
from the program's code (:mod:`dpverify.engine.datasets.orderfree`) instead of on every ordering.

Two mechanisms, both checked for ``private(eps)`` at eps = 1 (``dp.check``; ``--proofs`` adds the proof
for every eps):

* the bit count: records {0, 1}, n = 12, 20, 30, two-sided geometric noise on ``sum(data)``;
* the private threshold learner of ``spec/em_private_learner.py``: 8 labelled records (x in 0..3, y in
  {0, 1}), the exponential mechanism over 5 thresholds scoring ``-dp.mean(error)`` through
  ``score.on(data)``, n = 5, 6, 8, 10.

For each size: CPU seconds (this process and its reaped children) and wall seconds, the growth factor
from the previous size, and how symmetric=True was shown.  Then the old path -- every ordering of every
multiset, forced by refusing the code analysis -- at the small sizes, measured in the same run, and the
ratio old / new.  The machine is shared: compare CPU seconds; the load average is printed.

Run:  python bench/bench_reach.py [--proofs] [--skip-old]
This is a measurement, not a test: it asserts nothing about time.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import resource
import time
from collections.abc import Iterator

import dpverify as dp
from dpverify.engine.datasets import symmetry

eps = dp.symbol("eps", positive=True)
XS = (0, 1, 2, 3)
THRESHOLDS = (0, 1, 2, 3, 4)
RECORDS = dp.labelled(xs=XS, labels=[0, 1])


def predict(t, x):
    return 1 if x >= t else 0


error = dp.mean(lambda rec, t: int(predict(t, rec[0]) != rec[1]), domain=RECORDS)
score = -error


def noisy_count(data, eps):
    """The number of ones plus two-sided geometric noise, a = e^eps."""
    return dp.geometric(sum(data), dp.exp(eps))


def threshold_learner(data, eps):
    """The exponential mechanism over thresholds, score minus the empirical error (Delta derived: 1/n)."""
    return dp.exponential(THRESHOLDS, score.on(data), eps, neighbours=dp.REPLACE_ONE)


def spec_of(name: str, n: int) -> dp.Spec:
    if name == "bit count":
        return dp.spec(noisy_count, name=f"bit_count_{n}", grid={eps: [1]}, claims=[dp.private(eps)],
                       universe=dp.universe([0, 1], n=n, neighbours=dp.REPLACE_ONE, symmetric=True))
    return dp.spec(threshold_learner, name=f"learner_{n}", grid={eps: [1]}, claims=[dp.private(eps)],
                   universe=dp.universe(RECORDS, n=n, neighbours=dp.REPLACE_ONE, symmetric=True))


def cpu() -> float:
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


@contextlib.contextmanager
def old_path() -> Iterator[None]:
    """The check as it was: the code analysis refused, so every ordering of every multiset is run."""
    original, saved = symmetry.proof, dict(symmetry._PROOFS)
    symmetry._PROOFS.clear()
    symmetry.proof = lambda program, universe: "refused by bench_reach (the old path)"
    try:
        yield
    finally:
        symmetry.proof = original
        symmetry._PROOFS.update(saved)


def measure(name: str, n: int, proofs: bool) -> tuple[float, float, str, str]:
    spec = spec_of(name, n)
    ws_how: list[str] = []
    original = symmetry.check_symmetric

    def recording(*args, **kwargs):
        how = original(*args, **kwargs)
        ws_how.append(how)
        return how

    symmetry.check_symmetric = recording
    import dpverify.checks.workspace as workspace  # the checks call it through their own import
    workspace.check_symmetric = recording
    try:
        c0, w0 = cpu(), time.perf_counter()
        results = dp.check(spec, proofs=proofs)
        c1, w1 = cpu(), time.perf_counter()
    finally:
        symmetry.check_symmetric = original
        workspace.check_symmetric = original
    statuses = ",".join(sorted({r.status.value for r in results}))
    return c1 - c0, w1 - w0, statuses, (ws_how[0] if ws_how else "-")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--proofs", action="store_true", help="also prove private(eps) for every eps")
    parser.add_argument("--skip-old", action="store_true", help="skip the old path's figures")
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}  "
          f"(cores: {os.cpu_count()}; proofs: {'yes' if args.proofs else 'no, the grid check'})")
    cases = {"bit count": (12, 20, 30), "threshold learner": (5, 6, 8, 10)}
    new: dict = {}
    for name, sizes in cases.items():
        previous = None
        for n in sizes:
            c, w, status, how = measure(name, n, args.proofs)
            new[(name, n)] = c
            growth = f"x{c / previous:.2f}" if previous else "-"
            previous = c
            print(f"{name:18} n={n:<3} cpu {c:7.2f} s  wall {w:7.2f} s  growth {growth:>7}  {status:9} {how}")
    if not args.skip_old:
        print("old path (every ordering of every multiset), same run:")
        old_cases = {"bit count": (12,), "threshold learner": (5,)}
        for name, sizes in old_cases.items():
            for n in sizes:
                with old_path():
                    c, w, status, how = measure(name, n, args.proofs)
                ratio = f"old/new cpu x{c / new[(name, n)]:.1f}" if (name, n) in new else "(new not measured)"
                print(f"{name:18} n={n:<3} cpu {c:7.2f} s  wall {w:7.2f} s  {ratio:22} {status:9} "
                      f"{how.split(';')[0]}")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
