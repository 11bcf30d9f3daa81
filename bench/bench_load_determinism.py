"""Benchmark: the same verdicts idle and on a busy machine (issue 10, class 10).

Runs ``dpverify check PATH --json -j 1 --no-cache`` twice -- once as it is, once beside BUSY
processes that spin the CPU (plain Python loops, each ending by itself after at most
--busy-seconds) -- and compares the two JSON documents with every "seconds" field removed and the
claims of unseeded black boxes (OpenDP's samplers) compared by id, status and expectation only.
Every deciding budget in dpverify is a count (z3's rlimit, example and step counts), so the
documents must be byte-identical; a wall-clock safety net that fired says so in its message.

Run:  python bench/bench_load_determinism.py [PATH] [--busy 2] [--busy-seconds 900]

Prints both wall times, the machine's load average before each run, and either
"identical" or the first differing lines; exits 1 when the documents differ.
A measurement, not a test: it is not collected by pytest.
"""
from __future__ import annotations

import argparse
import difflib
import json
import os
import subprocess
import sys
import time
from typing import Any

SPIN = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    sum(range(1000))\n"


def without_seconds(value: Any) -> Any:
    """The document with every "seconds" field dropped (timings are the one thing allowed to differ)."""
    if isinstance(value, dict):
        return {k: without_seconds(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [without_seconds(v) for v in value]
    return value


def unseeded_by_status(document: Any) -> Any:
    """The document with each claim of an unseeded black box (its points' figures say
    ``"reproducible": false``: OpenDP's samplers draw from the operating system) cut to its id, status and
    expectation: its counts differ on every run by design, its verdicts (at error probability 1e-9) do not."""
    for spec in document.get("specs", []):
        spec["claims"] = [{k: claim.get(k) for k in ("id", "status", "expect")}
                          if any((point.get("figures") or {}).get("reproducible") is False
                                 for point in claim.get("points", [])) else claim
                          for claim in spec.get("claims", [])]
    return document


def run(path: str) -> tuple[str, float, int]:
    """(normalised JSON, wall seconds, exit code) of one ``dpverify check``."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "dpverify.cli", "check", path, "--json", "-j", "1",
                           "--no-cache"],  # both runs compute every verdict: none may come from the cache
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    try:
        text = json.dumps(unseeded_by_status(without_seconds(json.loads(done.stdout))), indent=1, sort_keys=True)
    except ValueError:
        text = done.stdout + done.stderr
    return text, seconds, done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default="spec")
    parser.add_argument("--busy", type=int, default=2, help="busy processes beside the second run")
    parser.add_argument("--busy-seconds", type=float, default=900, help="each busy process ends after this")
    args = parser.parse_args()
    print(f"load average before the idle run: {os.getloadavg()[0]:.2f}")
    idle, idle_s, idle_rc = run(args.path)
    hogs = [subprocess.Popen([sys.executable, "-c", SPIN.format(seconds=args.busy_seconds)])
            for _ in range(args.busy)]
    try:
        time.sleep(2)
        print(f"load average before the busy run ({args.busy} busy processes): {os.getloadavg()[0]:.2f}")
        busy, busy_s, busy_rc = run(args.path)
    finally:
        for hog in hogs:
            hog.terminate()
            hog.wait()
    print(f"idle: {idle_s:.1f} s (exit {idle_rc}); busy: {busy_s:.1f} s (exit {busy_rc}); "
          f"slowdown {busy_s / idle_s:.2f}x")
    if idle == busy and idle_rc == busy_rc:
        print(f"identical: {len(idle.splitlines())} lines of JSON (seconds removed), same exit code")
        return 0
    diff = difflib.unified_diff(idle.splitlines(), busy.splitlines(), "idle", "busy", lineterm="", n=1)
    print("DIFFERENT:")
    for line in list(diff)[:60]:
        print(line)
    return 1


if __name__ == "__main__":
    sys.exit(main())
