"""Benchmark: the start-up of ``dpverify check`` on a one-claim spec, against ``import sympy``.

dpverify reads mechanisms with sympy, so importing sympy is the floor of any run; the
target (issue 14, item 1) is a whole one-claim ``dpverify check`` -- interpreter, imports,
the check itself, the table -- in at most twice the time of ``python -c "import sympy"``.

Each round runs, one after the other (interleaved, so a change of the machine's load
touches both sides alike): ``python -c "import sympy"``, ``dpverify check ONE.py
--no-cache`` (a fresh check: what the target is about) and ``dpverify check ONE.py`` a
second time with the verdict cache warm, all with bytecode caching on (a first run writes it,
as an install does for sympy). The medians of the wall times and their
ratios to sympy's are printed; the last line is ``ratio: N.NNx`` (fresh check / sympy).

The one-claim spec is randomized response on one bit, ``dp.private(eps)`` at eps = 1
(proved for every eps: enumeration, certified intervals, real-root isolation); it is
written into a temporary directory, which is also the working directory (so the cache
lives there and nothing is left behind).

Run:  python bench/bench_startup.py [--rounds 7]

A measurement, not a test: it asserts nothing.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC = '''"""One claim: randomized response on one bit is eps-DP."""
import dpverify as dp

eps = dp.symbol("eps", positive=True)


def rr(data, eps):
    return dp.randomized_response(data[0], eps)


spec = dp.spec(rr, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
               grid={eps: [1]}, claims=[dp.private(eps)])
'''


def _seconds(command: list[str], cwd: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed (exit {done.returncode}):\n{done.stderr}")
    return seconds


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="runs of each command (default 7)")
    args = parser.parse_args(argv)
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="dpverify-startup-") as tmp:
        Path(tmp, "one_claim.py").write_text(SPEC)
        # PYTHONDONTWRITEBYTECODE (set on some machines, this one included) would make every run
        # compile dpverify's modules from source while sympy's come precompiled from the install:
        # runs here write and reuse bytecode, as an installed package does for its users.
        env = {k: v for k, v in os.environ.items() if k not in ("DPVERIFY_CACHE_DIR", "PYTHONDONTWRITEBYTECODE")}
        commands = {
            "python -c 'import sympy'": [python, "-c", "import sympy"],
            "dpverify check one_claim.py --no-cache": [python, "-m", "dpverify", "check", "one_claim.py",
                                                       "--no-cache"],
            "dpverify check one_claim.py (cache warm)": [python, "-m", "dpverify", "check", "one_claim.py"],
        }
        _seconds(commands["dpverify check one_claim.py (cache warm)"], tmp, env)  # fills the cache, warms the disk
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, command in commands.items():
                times[name].append(_seconds(command, tmp, env))
    base = statistics.median(times["python -c 'import sympy'"])
    width = max(len(name) for name in commands)
    print(f"{'command':<{width}}  {'median s':>8}  {'min s':>6}  {'/ sympy':>7}   ({args.rounds} interleaved rounds)")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<{width}}  {median:8.3f}  {min(values):6.3f}  {median / base:6.2f}x")
    fresh = statistics.median(times["dpverify check one_claim.py --no-cache"])
    print(f"ratio: {fresh / base:.2f}x")


if __name__ == "__main__":
    main(sys.argv[1:])
