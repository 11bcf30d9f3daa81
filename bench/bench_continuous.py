"""Continuous noise in product form: noisy max and the sparse vector technique, old path vs new, one run.

    python bench/bench_continuous.py                    # full universes m = 3..6, old path up to m = 5
    python bench/bench_continuous.py --old-up-to 4      # the old path only up to m = 4 (faster)
    python bench/bench_continuous.py --max-m 7          # also {0,1,2}^7 (about 20 s new)

Part 1: report noisy max with Lap(2/eps) (spec/benchmark/noisy_max.py's ``rnm_laplace``) over the
full universe {0,1,2}^m under ell_inf neighbours, eps = 1: seconds of ``dp.check`` (every dataset's
law, every pair, the verdict) with the argmax product form (engine/program/product_form.py, the default)
and, for m <= --old-up-to, with the general branch enumeration (2^(m-1) comparison paths per
dataset, each integrated; the path every run took before), in the same process; their ratio and
whether both give the same verdict and achieved epsilon (to 30 digits).  Wall and CPU seconds
are both printed (the machine may be shared: CPU seconds are what the process spent); the ratio is
of CPU seconds.

Part 3 (--cells): the density cells of released noisy values (engine/continuous/density_cells.py):
CPU seconds of ``dp.check`` on sparse_vector_broken.py's released-value specs (isvt4's fixed-m bound at
m = 3, BadGapSVT at m = 5) with the cells' shared results (normal forms, piece values, slot suprema,
the first pass's decided cells: the default) and with every cell computed afresh
(``density_cells.SHARED = False``), and whether verdict and achieved epsilon agree.

Part 2: StatDP's eight patterns (dp.statdp_patterns) at m = 5 and m = 10, eps = 1: seconds per
pair of ``dp.check`` for noisy max and for the sparse vector technique (Lyu et al. Alg. 1, c = 1),
new path, and the old path for noisy max at m = 5 and m = 10 (--old-patterns-up-to).
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import time
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "spec" / "benchmark"))

import dpverify as dp  # noqa: E402
from dpverify.engine.program import product_form  # noqa: E402

from noisy_max import rnm_laplace  # noqa: E402
from sparse_vector import svt  # noqa: E402

eps = dp.symbol("eps", positive=True)


@contextlib.contextmanager
def old_path():
    """The general reading for every run: the product form declines."""
    saved = product_form.distribution
    product_form.distribution = lambda program, session: None
    try:
        yield
    finally:
        product_form.distribution = saved


def timed(spec: dp.Spec) -> tuple[float, float, str, str]:
    """(wall seconds, CPU seconds, verdict, achieved epsilon) of one ``dp.check`` in this process."""
    start, cpu = time.perf_counter(), time.process_time()
    [result] = dp.check(spec, proofs=False)
    return (time.perf_counter() - start, time.process_time() - cpu, result.status.value,
            result.evidence.achieved_epsilon or "-")


def full_universes(max_m: int, old_up_to: int) -> None:
    print("noisy max, Lap(2/eps), full universe {0,1,2}^m, ell_inf neighbours, eps = 1 (dp.check, no proofs)")
    print(f"{'m':>2} {'datasets':>8} {'new s':>7} {'new cpu':>7} {'old s':>7} {'old cpu':>7} {'ratio':>7}  "
          "verdict   achieved eps (new)        same")
    for m in range(3, max_m + 1):
        spec = dp.spec(rnm_laplace, universe=dp.answers([0, 1, 2], m), grid={eps: [1]}, claims=[dp.private(eps)])
        new, new_cpu, status, achieved = timed(spec)
        old_text, ratio, same = "-      -", "-", "-"
        if m <= old_up_to:
            with old_path():
                old, old_cpu, old_status, old_achieved = timed(spec)
            old_text, ratio = f"{old:7.2f} {old_cpu:7.2f}", f"{old_cpu / new_cpu:6.1f}x"
            same = str(status == old_status and achieved[:32] == old_achieved[:32])
        print(f"{m:>2} {3 ** m:>8} {new:7.2f} {new_cpu:7.2f} {old_text:>15} {ratio:>7}  {status:9} "
              f"{achieved[:24]:24}  {same}")


def patterns(old_up_to: int) -> None:
    print("\nStatDP's eight patterns (dp.statdp_patterns), eps = 1: seconds per pair (dp.check / 8 pairs)")
    print(f"{'mechanism':10} {'m':>3} {'new s/pair':>10} {'cpu/pair':>8} {'old s/pair':>10} {'cpu/pair':>8} "
          f"{'ratio':>7}  verdict   achieved eps")
    for name, mech in (("noisy max", rnm_laplace), ("svt", svt)):
        for m in (5, 10):
            listed = dp.pairs(dp.statdp_patterns(m), neighbours=dp.linf_one, name=f"patterns m = {m}")
            spec = dp.spec(mech, universe=listed, grid={eps: [1]}, claims=[dp.private(eps)])
            new, new_cpu, status, achieved = timed(spec)
            old_text, ratio = "-        -", "-"
            if mech is rnm_laplace and m <= old_up_to:
                with old_path():
                    old, old_cpu, _, _ = timed(spec)
                old_text, ratio = f"{old / 8:10.3f} {old_cpu / 8:8.3f}", f"{old_cpu / new_cpu:6.1f}x"
            print(f"{name:10} {m:>3} {new / 8:10.3f} {new_cpu / 8:8.3f} {old_text:>19} {ratio:>7}  {status:9} "
                  f"{achieved[:24]}")


def shared_cells() -> None:
    from dpverify.engine.continuous import density_cells
    import sparse_vector_broken as broken
    print("\ndensity cells of released values: shared results vs every cell afresh (dp.check, no proofs)")
    print(f"{'spec':24} {'eps':>4} {'shared cpu':>10} {'fresh cpu':>9} {'ratio':>7}  verdict   achieved eps    same")
    for spec, eps_value in ((broken.svt_alg3, Fraction(1, 2)), (broken.svt_alg3, 1), (broken.bad_gap_sparse_vector, 1)):
        claim = spec.claims[-1]
        one = dp.spec(spec.mechanism, universe=spec.universe, grid={eps: [eps_value]}, claims=[claim])
        _, shared, status, achieved = timed(one)
        density_cells.SHARED = False
        try:
            _, fresh, fresh_status, fresh_achieved = timed(one)
        finally:
            density_cells.SHARED = True
        same = status == fresh_status and achieved == fresh_achieved
        print(f"{spec.name + ' ' + claim.id:24} {str(eps_value):>4} {shared:10.2f} {fresh:9.2f} "
              f"{fresh / shared:6.1f}x  {status:9} {achieved[:14]:14}  {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-m", type=int, default=6, help="largest m of the full universes (default 6)")
    parser.add_argument("--old-up-to", type=int, default=5, help="old path on full universes up to this m")
    parser.add_argument("--old-patterns-up-to", type=int, default=10,
                        help="old path for noisy max on the patterns up to this m (5 or 10)")
    parser.add_argument("--cells", action="store_true", help="only part 3: the density cells, shared vs afresh")
    args = parser.parse_args()
    print(f"dpverify {dp.__version__}; product form: engine/program/product_form.py; eps = {Fraction(1)}")
    warm = dp.spec(rnm_laplace, universe=dp.answers([0, 1], 2), grid={eps: [1]}, claims=[dp.private(eps)])
    timed(warm)  # the checks' lazy imports, outside the first figure
    if args.cells:
        shared_cells()
        return
    full_universes(args.max_m, args.old_up_to)
    patterns(args.old_patterns_up_to)


if __name__ == "__main__":
    main()
