"""Benchmark: time to prove each catalogue privacy claim for every eps (z3), next to the grid check.

For every pure-DP claim of every spec under spec/ (or the paths given), at the
first grid point: the seconds of the certified grid check alone (exact
enumeration) and the seconds of the proof for all eps (symbolic reading,
polynomial constraints, z3; for mechanisms releasing noisy values, the proof over
their densities), with the number of distinct constraints.

Run:  python bench/bench_proofs.py [PATH ...]

A measurement, not a test: it asserts nothing.  The last line is the total
proof time and its ratio to the total grid-check time.
"""
from __future__ import annotations

import sys
import time

from dpverify.checks import Options, Workspace
from dpverify.checks.privacy.density_proof import prove_density
from dpverify.checks.privacy.discrete import PrivacyCheck
from dpverify.checks.privacy.proof import prove_private
from dpverify.dsl.claims import Private
from dpverify.engine.density_cells import has_densities
from dpverify.errors import SpecError
from dpverify.loader import discover, load


def main(paths: list[str]) -> None:
    rows = []
    for path in discover(paths or ["spec"]):
        for spec in load(path):
            for claim in spec.claims:
                if not isinstance(claim, Private) or claim.delta != 0:
                    continue
                point = spec.points[0]
                ws = Workspace(Options())
                start = time.perf_counter()
                grid = PrivacyCheck().run(spec, claim, point, Workspace(Options(proofs=False)))
                grid_seconds = time.perf_counter() - start
                start = time.perf_counter()
                try:
                    table = ws.table(spec, spec.mechanism, point)
                    proof = (prove_density(spec, spec.mechanism, claim, point, ws) if has_densities(table) else
                             prove_private(spec, spec.mechanism, claim, point, table, ws))
                except SpecError as err:  # refused (too much work, ...): shown, not fatal
                    rows.append((f"{path.stem}:{spec.name}:{claim.id}", grid.status.value, grid_seconds,
                                 "error", time.perf_counter() - start, err.problem[:60]))
                    continue
                proof_seconds = time.perf_counter() - start
                status = proof.status.value if proof else "no proof (no continuous parameter)"
                detail = proof.message.split(":")[1].split(" in ")[0].strip() if proof and proof.status.value == "proved" else ""
                rows.append((f"{path.stem}:{spec.name}:{claim.id}", grid.status.value, grid_seconds,
                             status, proof_seconds, detail if len(detail) <= 70 else detail[:67] + "..."))
    if not rows:
        print("no pure-DP privacy claims under " + " ".join(paths or ["spec"]))
        return
    width = max(len(r[0]) for r in rows)
    print(f"{'claim':<{width}}  {'grid':>9} {'secs':>7}  {'all eps':>8} {'secs':>7}  constraints")
    for name, grid, gs, status, ps, detail in rows:
        print(f"{name:<{width}}  {grid:>9} {gs:7.2f}  {status:>8} {ps:7.2f}  {detail}")
    total_grid = sum(r[2] for r in rows)
    total_proof = sum(r[4] for r in rows)
    print(f"total: proofs {total_proof:.2f}s for {len(rows)} claims, grid checks {total_grid:.2f}s, "
          f"ratio {total_proof / max(total_grid, 1e-9):.1f}x")


if __name__ == "__main__":
    main(sys.argv[1:])
