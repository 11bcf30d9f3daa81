"""The runner's preparation before forking the workers of a multi-file run (dpverify.runner._preload):
the lazily imported modules are imported once in the parent, and the parent's gc freeze is undone at
the end of the run (a long-lived caller such as pytest collects as before)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_preload_imports_the_lazy_modules_and_the_run_thaws_the_heap(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / f"{name}.py").write_text(textwrap.dedent("""
            import dpverify as dp
            eps = dp.symbol("eps", positive=True)

            def rr(data, eps):
                return dp.randomized_response(data[0], eps)

            spec = dp.spec(rr, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE), grid={eps: [1]},
                           claims=[dp.private(eps)])
        """))
    code = textwrap.dedent("""
        import gc, json, sys
        from dpverify import runner
        from dpverify.options import Options
        report = runner.check_paths(["a.py", "b.py"], Options(), jobs=2, keep_specs=False)
        print(json.dumps({"statuses": [c.status.value for s in report.specs for c in s.claims],
                          "frozen": gc.get_freeze_count(),
                          "lazy": [m for m in runner.LAZY_IMPORTS if m not in sys.modules]}))
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["statuses"] == ["proved", "proved"]
    assert out["frozen"] == 0 and out["lazy"] == []
