"""Benchmark: the catalogue's cold run, as a ratio that travels between machines.

Measures, in one run:

* **loop**: the CPU seconds of a plain Python loop (``s = 0; for i in range(10**7): s += i*i``),
  best of 3 (``time.process_time``);
* **catalogue**: ``dpverify check spec/ --no-cache --json`` in a subprocess, with a fresh empty
  cache directory as well (no verdict is reused): the CPU seconds of every process it ran (user +
  sys of the children, ``resource.getrusage(RUSAGE_CHILDREN)`` before and after, workers and
  their children included) and its wall seconds;

and prints both, the ratio catalogue CPU / loop CPU, the load average before and after, the
verdict counts, and the files and points with the most seconds (the JSON report's per-point
``seconds``, wall-clock seconds inside each worker).

Run:  python bench/bench_catalogue.py [--jobs N] [--top K] [--json-out FILE] [PATH ...]

This is a measurement, not a test: it asserts nothing about time.  The last line printed is
``ratio: N.N`` (catalogue CPU seconds / loop CPU seconds).  Other processes on the machine change
the wall seconds much more than the CPU seconds; measure when ``uptime`` shows the lowest load
and report it with the figures.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def loop_seconds(repeat: int = 3) -> float:
    """The fastest of ``repeat`` CPU timings of the plain loop."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        s = 0
        for i in range(10 ** 7):
            s += i * i
        best = min(best, time.process_time() - start)
    return best


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_catalogue(paths: list[str], jobs: int | None) -> tuple[float, float, int, dict]:
    """(CPU seconds, wall seconds, exit code, the JSON report) of one cold run."""
    with tempfile.TemporaryDirectory(prefix="dpverify-bench-cache-") as cache:
        command = [sys.executable, "-m", "dpverify", "check", *paths, "--no-cache", "--cache-dir", cache,
                   "--json", "-q"]
        if jobs is not None:
            command += ["--jobs", str(jobs)]
        env = dict(os.environ, DPVERIFY_CACHE_DIR=cache)
        before, start = children_cpu(), time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
        wall, cpu = time.perf_counter() - start, children_cpu() - before
    try:
        report = json.loads(done.stdout)
    except ValueError:
        print(done.stderr[-2000:], file=sys.stderr)
        report = {}
    return cpu, wall, done.returncode, report


def breakdown(report: dict) -> tuple[dict, list]:
    """Seconds per file and the points with the most seconds."""
    files: dict = defaultdict(float)
    points = []
    for spec in report.get("specs", []):
        for claim in spec.get("claims", []):
            for point in claim.get("points", []):
                seconds = point.get("seconds") or 0.0
                files[spec["path"]] += seconds
                points.append((seconds, f"{spec['path']}::{spec['name']}::{claim['id']} {point.get('params')}"))
    points.sort(reverse=True)
    return dict(files), points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=["spec/"], help="what to check (default spec/)")
    parser.add_argument("--jobs", type=int, default=None, help="passed to dpverify check (default: its own)")
    parser.add_argument("--top", type=int, default=15, help="how many files and points to list (default 15)")
    parser.add_argument("--json-out", default=None, help="also save the run's JSON report here")
    args = parser.parse_args()

    load_before = os.getloadavg()
    loop = loop_seconds()
    cpu, wall, code, report = run_catalogue(args.paths, args.jobs)
    load_after = os.getloadavg()
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=1))

    files, points = breakdown(report)
    print(f"files and their points' seconds (wall inside the workers; top {args.top}):")
    for path, seconds in sorted(files.items(), key=lambda item: -item[1])[:args.top]:
        print(f"  {seconds:8.2f}  {path}")
    print(f"points with the most seconds (top {args.top}):")
    for seconds, name in points[:args.top]:
        print(f"  {seconds:8.2f}  {name}")
    print(f"summary: {report.get('summary')}")
    print(f"exit code: {code}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in load_before)}; "
          f"after: {' '.join(f'{x:.2f}' for x in load_after)}")
    print(f"loop CPU seconds (best of 3): {loop:.3f}")
    print(f"catalogue CPU seconds (user+sys, all processes): {cpu:.1f}")
    print(f"catalogue wall seconds: {wall:.1f}")
    print(f"points' seconds summed: {sum(files.values()):.1f}")
    print(f"ratio: {cpu / loop:.1f}")


if __name__ == "__main__":
    main()
