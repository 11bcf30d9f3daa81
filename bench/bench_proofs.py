"""Benchmark: time to prove each catalogue privacy claim for every eps (z3), next to the grid check.

For every pure-DP claim of every spec under spec/ (or the paths given), at the
claim's first grid point: the seconds of the certified grid check alone
(``--no-proofs``) and the seconds the proof for all eps adds (symbolic reading,
polynomial constraints, z3; for mechanisms releasing noisy values, the proof over
their densities), with the number of distinct constraints.

Both are timed through :func:`dpverify.checks.check_point`, the route ``dpverify
check`` takes, each with a fresh workspace: the grid check with ``proofs=False``,
then the whole check with ``proofs=True``; the proof's seconds are the difference.
So every kind of spec runs (released densities, implementations, black boxes --
which have no proof: their row says so); a spec file that does not load, or a
check that raises, is a row or a line, never the end of the run.

Run:  python bench/bench_proofs.py [PATH ...]

A measurement, not a test: it asserts nothing.  The last line is the total
proof time and its ratio to the total grid-check time.
"""
from __future__ import annotations

import sys
import time

from dpverify.checks import Workspace, check_point
from dpverify.dsl.claims import Private
from dpverify.errors import SpecError
from dpverify.loader import discover, load
from dpverify.options import Options

Row = tuple[str, str, float, str, float, str]


def _timed(spec, claim, point, proofs: bool):  # type: ignore[no-untyped-def]
    """(result or None, seconds, error text) of one check with a fresh workspace."""
    start = time.perf_counter()
    try:
        return check_point(spec, claim, point, Workspace(Options(proofs=proofs))), time.perf_counter() - start, ""
    except Exception as err:  # refused (too much work, ...) or a crash: a row, not the end of the run
        text = err.problem if isinstance(err, SpecError) else f"{type(err).__name__}: {err}"
        return None, time.perf_counter() - start, text


def _detail(result) -> str:  # type: ignore[no-untyped-def]
    """The proof's constraint count from its message (``proved for every eps ...: N distinct ...``)."""
    if result is None or result.status.value != "proved":
        return ""
    text = result.message.split(":", 1)[1] if ":" in result.message else result.message
    text = text.split(" in ")[0].strip()
    return text if len(text) <= 70 else text[:67] + "..."


def rows_for(path) -> list[Row]:  # type: ignore[no-untyped-def]
    rows: list[Row] = []
    try:
        specs = load(path)
    except SpecError as err:
        print(f"{path}: does not load ({err.problem}); skipped")
        return rows
    for spec in specs:
        for claim in spec.claims:
            if not isinstance(claim, Private) or claim.delta != 0:
                continue
            points = spec.points_for(claim)
            if not points:
                continue
            name = f"{path.stem}:{spec.name}:{claim.id}"
            grid, grid_seconds, problem = _timed(spec, claim, points[0], proofs=False)
            if grid is None:
                rows.append((name, "error", grid_seconds, "error", 0.0, problem[:60]))
                continue
            full, full_seconds, problem = _timed(spec, claim, points[0], proofs=True)
            if full is None:
                rows.append((name, grid.status.value, grid_seconds, "error", full_seconds, problem[:60]))
                continue
            proved = full.status.value == "proved"
            status = "proved" if proved else f"none ({full.status.value})"
            rows.append((name, grid.status.value, grid_seconds, status, max(full_seconds - grid_seconds, 0.0),
                         _detail(full)))
    return rows


def main(paths: list[str]) -> None:
    rows = [row for path in discover(paths or ["spec"]) for row in rows_for(path)]
    if not rows:
        print("no pure-DP privacy claims under " + " ".join(paths or ["spec"]))
        return
    width = max(len(r[0]) for r in rows)
    print(f"{'claim':<{width}}  {'grid':>9} {'secs':>7}  {'all eps':>18} {'secs':>7}  constraints")
    for name, grid, gs, status, ps, detail in rows:
        print(f"{name:<{width}}  {grid:>9} {gs:7.2f}  {status:>18} {ps:7.2f}  {detail}")
    total_grid = sum(r[2] for r in rows)
    total_proof = sum(r[4] for r in rows)
    proved = sum(1 for r in rows if r[3] == "proved")
    print(f"total: proofs {total_proof:.2f}s for {len(rows)} claims ({proved} proved for every eps), "
          f"grid checks {total_grid:.2f}s, ratio {total_proof / max(total_grid, 1e-9):.1f}x")


if __name__ == "__main__":
    main(sys.argv[1:])
