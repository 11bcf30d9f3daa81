"""Report noisy max over the full universe {0,1,2}^m, m = 5..8: seconds, growth per answer, old path as a ratio.

    python bench/bench_noisy_max.py                  # m = 5..8, the old path at m = 5 and 6
    python bench/bench_noisy_max.py --max-m 7        # m = 5..7
    python bench/bench_noisy_max.py --old-up-to 0    # no old path
    python bench/bench_noisy_max.py --old-rev REV    # the old path from another commit (default: below)

What is timed: ``rnm_laplace`` of spec/benchmark/noisy_max.py (Lap(2/eps) per answer, the index of the
first largest) with the claim private(eps), eps = 1, ell_inf neighbours, every dataset of {0,1,2}^m --
the check of ``dp.check(spec, proofs=False)`` with the DEFAULT work guard (``--max-work`` 5e7; m = 8 counts
(6,561 + 2,879,120 pairs) x 8 outputs = 2.3e7 units since the pairs of integer answer vectors under
``linf_one`` are counted exactly; m = 9 is refused).  Three figures per m, wall and CPU seconds of this
process each:

* ``pairs``: the universe's datasets and neighbouring pairs (engine/datasets, memoised by the workspace
  before the check, so that it is timed on its own; listed by index arithmetic, not by asking the relation);
* ``laws``: every dataset's law, the pairs' losses and the verdict (the check itself); the laws are the
  product form's (engine/program/product_form.py: 2^(m-1) traced executions per dataset, m integrals
  shared across permuted and shifted datasets);
* ``total`` and its growth against m - 1 (CPU seconds).

The old path: the same check with ``product_form.py``, ``continuous/noise.py`` and ``continuous/noisy.py``
as of ``--old-rev`` (default 6ea3b96, the commit before this benchmark's speed-ups) and every other file as
in this checkout, in a child process started by this run (so the same machine, minutes apart); the ratio
is old CPU / new CPU of the whole check.  The load average is printed before and after: the machine may be
shared, and CPU seconds are what this process spent (wall seconds move with the load).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OLD_REV = "6ea3b96"
REPLACED = ("dpverify/engine/program/product_form.py", "dpverify/engine/continuous/noise.py",
            "dpverify/engine/continuous/noisy.py")


def measure(m: int) -> dict:
    """One m in this process: seconds of the pairs and of the check, verdict, achieved epsilon."""
    sys.path.insert(0, str(ROOT / "spec" / "benchmark"))
    import dpverify as dp
    from dpverify.checks import Workspace, check_point
    from dpverify.options import Options
    from noisy_max import rnm_laplace

    eps = dp.symbol("eps", positive=True)

    def run(mm: int) -> dict:
        spec = dp.spec(rnm_laplace, universe=dp.answers([0, 1, 2], mm), grid={eps: [1]}, claims=[dp.private(eps)])
        ws = Workspace(Options.validated(50, proofs=False))  # the default --max-work
        wall, cpu = time.perf_counter(), time.process_time()
        ws.datasets(spec)
        pairs = (time.perf_counter() - wall, time.process_time() - cpu)
        wall, cpu = time.perf_counter(), time.process_time()
        [result] = [check_point(spec, claim, point, ws) for claim in spec.claims for point in spec.points_for(claim)]
        laws = (time.perf_counter() - wall, time.process_time() - cpu)
        return {"m": mm, "pairs": pairs, "laws": laws, "status": result.status.value,
                "achieved": getattr(result.evidence, "achieved_epsilon", None) or "-",
                "dpverify": os.path.dirname(dp.__file__)}

    run(2)  # the checks' lazy imports, outside the figures
    return run(m)


def old_tree(rev: str) -> str:
    """A copy of this checkout's package with the replaced files as of ``rev``."""
    where = tempfile.mkdtemp(prefix="dpverify-old-")
    shutil.copytree(ROOT / "dpverify", Path(where) / "dpverify",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for path in REPLACED:
        text = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], check=True,
                              capture_output=True, text=True).stdout
        (Path(where) / path).write_text(text)
    return where


def child(m: int, package_root: str) -> dict:
    env = dict(os.environ, PYTHONPATH=package_root)
    out = subprocess.run([sys.executable, __file__, "--child", str(m), "--package-root", package_root],
                         check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--min-m", type=int, default=5)
    parser.add_argument("--max-m", type=int, default=8)
    parser.add_argument("--old-up-to", type=int, default=6, help="old path for m up to this (default 6)")
    parser.add_argument("--old-rev", default=OLD_REV, help=f"commit of the old path's files (default {OLD_REV})")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--package-root", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        sys.path.insert(0, args.package_root)
        print(json.dumps(measure(args.child)))
        return
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs")
    print("noisy max, Lap(2/eps), {0,1,2}^m, ell_inf neighbours, eps = 1, private(eps), no proofs")
    print(f"{'m':>2} {'datasets':>8} {'pairs s':>8} {'cpu':>6} {'laws s':>7} {'cpu':>6} {'total s':>8} {'cpu':>6} "
          f"{'growth':>7} {'old cpu':>8} {'ratio':>6}  verdict   achieved eps")
    old_root = old_tree(args.old_rev) if args.old_up_to >= args.min_m else None
    previous = None
    try:
        for m in range(args.min_m, args.max_m + 1):
            new = child(m, str(ROOT))
            assert new["dpverify"] == str(ROOT / "dpverify"), new["dpverify"]
            total = (new["pairs"][0] + new["laws"][0], new["pairs"][1] + new["laws"][1])
            growth = f"{total[1] / previous:6.1f}x" if previous else "-"
            previous = total[1]
            old_text, ratio = "-", "-"
            if old_root is not None and m <= args.old_up_to:
                old = child(m, old_root)
                assert old["dpverify"] == os.path.join(old_root, "dpverify"), old["dpverify"]
                assert (old["status"], old["achieved"][:32]) == (new["status"], new["achieved"][:32]), (old, new)
                old_total = old["pairs"][1] + old["laws"][1]
                old_text, ratio = f"{old_total:8.2f}", f"{old_total / total[1]:5.2f}x"
            print(f"{m:>2} {3 ** m:>8} {new['pairs'][0]:8.2f} {new['pairs'][1]:6.2f} {new['laws'][0]:7.2f} "
                  f"{new['laws'][1]:6.2f} {total[0]:8.2f} {total[1]:6.2f} {growth:>7} {old_text:>8} {ratio:>6}  "
                  f"{new['status']:9} {new['achieved'][:24]}", flush=True)
    finally:
        if old_root is not None:
            shutil.rmtree(old_root, ignore_errors=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
