"""Start-up (issue 14, item 1): a run imports what it needs when it needs it.

`dpverify check` on a one-claim spec must take at most twice `python -c "import sympy"`
(bench/bench_startup.py measures it); these tests hold the structure that makes it so: the
command line imports no check, z3, plotting, templating or hypothesis before a claim needs
them, and the lazy registry of checks hides no check a claim needs.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dpverify.checks import CHECKS, preload
from dpverify.loader import discover, load

ROOT = Path(__file__).resolve().parents[1]

HEAVY = ["z3", "matplotlib", "jinja2", "hypothesis", "scipy", "dpverify.checks", "dpverify.report.html",
         "dpverify.engine.sensitivity.derive"]


def _imported(code: str, cwd: Path) -> set[str]:
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_the_command_line_imports_no_check_machinery(tmp_path: Path) -> None:
    loaded = _imported("import json, sys; import dpverify.cli; print(json.dumps(sorted(sys.modules)))", tmp_path)
    assert not [m for m in HEAVY if m in loaded], [m for m in HEAVY if m in loaded]


ONE_CLAIM = textwrap.dedent("""
    import dpverify as dp
    eps = dp.symbol("eps", positive=True)

    def rr(data, eps):
        return dp.randomized_response(data[0], eps)

    spec = dp.spec(rr, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE), grid={eps: [1]},
                   claims=[dp.private(eps)])
""")


def test_a_one_claim_check_imports_only_its_claims_path(tmp_path: Path) -> None:
    """In process (no fork), to see every module the check itself imports."""
    (tmp_path / "one.py").write_text(ONE_CLAIM)
    code = textwrap.dedent("""
        import json, sys
        from pathlib import Path
        from dpverify.options import Options
        from dpverify.runner import _check_spec
        from dpverify.loader import load
        from dpverify.selection import select
        specs = load(Path("one.py"))
        plans = select(specs)
        report = _check_spec(Path("one.py"), specs[0], plans[id(specs[0])], Options())
        assert report.claims[0].status.value == "proved", report.claims[0].message
        print(json.dumps(sorted(sys.modules)))
    """)
    loaded = _imported(code, tmp_path)
    unneeded = ["z3", "dpverify.engine.decide.smt", "matplotlib", "jinja2", "hypothesis", "dpverify.checks.audit.statistical",
                "dpverify.checks.privacy.density", "dpverify.checks.composition.profile",
                "dpverify.checks.formulas.check", "dpverify.checks.theorems.sample_complexity",
                "dpverify.engine.sensitivity.derive", "dpverify.report"]
    assert not [m for m in unneeded if m in loaded], [m for m in unneeded if m in loaded]


def _catalogue_claims() -> list:
    claims = []
    for path in discover([str(ROOT / "spec")]):
        if "accounting" in path.parts:  # their imports call accountants: slow, and no claim kind of their own
            continue
        for spec in load(path):
            claims += [(spec, claim) for claim in spec.claims]
    return claims


def test_the_lazy_registry_hides_no_check() -> None:
    """For every claim of the catalogue, the lazy entries that accept it are exactly the checks that
    support it (the claim-type pre-filter never drops one), and each entry's black_box is its check's."""
    preload()
    claims = _catalogue_claims()
    kinds = {claim.kind for _, claim in claims}
    assert len(kinds) >= 10, kinds  # the catalogue covers most claim kinds
    for _, claim in claims:
        lazy = [i for i, c in enumerate(CHECKS) if c.supports(claim)]
        real = [i for i, c in enumerate(CHECKS) if c.check.supports(claim)]  # type: ignore[attr-defined]
        assert lazy == real, (claim.kind, lazy, real)
    for entry in CHECKS:
        assert entry.black_box == getattr(entry.check, "black_box", False)  # type: ignore[attr-defined]


@pytest.mark.parametrize("module", ["dpverify.checks.audit.statistical", "dpverify.checks.composition.profile"])
def test_a_claim_that_needs_a_check_gets_it(tmp_path: Path, module: str) -> None:
    """The other side: the checks are imported when a claim needs them (here by preload)."""
    loaded = _imported("import json, sys; from dpverify.checks import preload; preload(); "
                       "print(json.dumps(sorted(sys.modules)))", tmp_path)
    assert module in loaded


def test_libraries_named_by_spec_files_are_installed_ones_only(tmp_path: Path) -> None:
    """What the parent imports for the workers it forks later: installed libraries, never the
    user's helpers beside the spec files (their import may compute) nor dpverify."""
    from dpverify.loader import libraries
    (tmp_path / "_helper.py").write_text("raise RuntimeError('a helper is never imported by the parent')\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "a.py").write_text("import numpy as np\nimport dpverify as dp\nfrom _helper import x\n"
                                   "from pkg import y\nimport no_such_library_anywhere\n")
    assert libraries([tmp_path / "a.py"]) == ["numpy"]
