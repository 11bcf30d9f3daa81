"""The layering is a contract: import-linter's layers (``[tool.importlinter]`` in pyproject.toml),
no import cycle between dpverify's modules, and no module importing the root facade.

The layers, top to bottom: the front ends (``python -m dpverify``; the CLI and the pytest plugin),
reports and the runner, spec loading and selection, the checks, results, evidence, the engine, the
DSL, and the base (options, errors, version, logs).  ``dsl`` imports nothing from ``engine``: the
primitives reach it through one port (``dpverify.dsl.port``).  Two more contracts: the engine imports
no claim declaration, and inside ``checks/`` the claim families sit over the shared witness builders
and workspace.  Imports inside functions and under ``TYPE_CHECKING`` count like any other: each is an
edge of the graph.

Each check is shown able to fail on a broken copy of the package or on a small graph.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "dpverify"


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """Run ``lint-imports`` on the package under ``root`` with ``root``'s pyproject.toml (no cache written)."""
    return subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()",
         "--config", str(root / "pyproject.toml"), "--no-cache", "--no-logo"],
        cwd=root, capture_output=True, text=True, timeout=300)


def cycles(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """The import cycles between modules of ``package``: each strongly connected component of more than one
    module, as one shortest cycle through its first module (sorted), reading importer -> imported."""
    modules = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    seen: set[str] = set()
    found = []
    for module in modules:
        if module in seen:
            continue
        component = graph.find_upstream_modules(module) & graph.find_downstream_modules(module)
        if not component:
            continue
        seen |= component | {module}
        partner = min(component)
        there = graph.find_shortest_chain(importer=module, imported=partner)
        back = graph.find_shortest_chain(importer=partner, imported=module)
        found.append([*there, *back[1:]])
    return found


def describe(graph: grimp.ImportGraph, cycle: list[str]) -> str:
    """A cycle with the line of each import, for the failure message."""
    lines = []
    for importer, imported in zip(cycle, cycle[1:]):
        details = graph.get_import_details(importer=importer, imported=imported)
        where = f" (line {details[0]['line_number']}: {details[0]['line_contents']})" if details else ""
        lines.append(f"  {importer} -> {imported}{where}")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(PACKAGE, cache_dir=None)


def test_the_layers_contract_is_kept() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, f"lint-imports found imports running up a layer:\n{result.stdout}{result.stderr}"
    assert "0 broken" in result.stdout


def test_no_import_cycle_between_modules(graph: grimp.ImportGraph) -> None:
    found = cycles(graph, PACKAGE)
    assert not found, ("import cycles between dpverify modules (move the shared piece into its own module; "
                       "imports inside functions and under TYPE_CHECKING count):\n"
                       + "\n\n".join(describe(graph, cycle) for cycle in found))


def test_nothing_inside_imports_the_root_facade(graph: grimp.ImportGraph) -> None:
    importers = sorted(graph.find_modules_that_directly_import(PACKAGE))
    assert not importers, (f"{', '.join(importers)} import the root package {PACKAGE!r}, which imports everything: "
                           "import from the module that defines the name (e.g. dpverify.version)")


def test_the_engine_is_installed_behind_the_dsl_port() -> None:
    import dpverify  # noqa: F401  (the facade imports the engine, which installs itself)
    from dpverify.dsl import port
    from dpverify.engine.program.port import ENGINE
    assert port.engine() is ENGINE
    with pytest.raises(dpverify.SpecError, match=r"bernoulli\(\) was called outside a mechanism run"):
        dpverify.bernoulli(0)
    with pytest.raises(dpverify.SpecError, match=r"laplace\(\) was called outside a mechanism run"):
        dpverify.laplace(0, 1)


# ----- the checks can fail -------------------------------------------------------------------

BREAKS = [  # (module file, an import added inside a function, the broken import lint-imports must name)
    ("dsl/laws.py", "from ..engine.program import enumerate", "dpverify.dsl.laws -> dpverify.engine.program.enumerate"),
    ("engine/program/run.py", "from ...checks import workspace", "dpverify.engine.program.run -> dpverify.checks.workspace"),
    ("engine/program/run.py", "from ...dsl import claims", "dpverify.engine.program.run -> dpverify.dsl.claims"),
    ("runner.py", "from .report import blocks", "dpverify.runner -> dpverify.report.blocks"),
    ("checks/privacy/discrete.py", "from ..theorems import prediction",
     "dpverify.checks.privacy.discrete -> dpverify.checks.theorems.prediction"),
    ("checks/privacy/discrete.py", "from ..audit import conforms",
     "dpverify.checks.privacy.discrete -> dpverify.checks.audit.conforms"),
]


@pytest.mark.parametrize("module, line, named", BREAKS, ids=[b[2] for b in BREAKS])
def test_an_import_against_the_contracts_breaks_them(tmp_path: Path, module: str, line: str, named: str) -> None:
    shutil.copytree(ROOT / PACKAGE, tmp_path / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    path = tmp_path / PACKAGE / module
    path.write_text(path.read_text() + f"\n\ndef _reach() -> None:\n    {line}  # noqa\n")
    result = lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert named in result.stdout
    assert "1 broken" in result.stdout


def test_the_cycle_finder_reports_a_cycle_with_its_lines() -> None:
    graph = grimp.ImportGraph()
    graph.add_import(importer="p.a", imported="p.b", line_number=3, line_contents="from . import b")
    graph.add_import(importer="p.b", imported="p.c", line_number=5, line_contents="from .c import x")
    graph.add_import(importer="p.c", imported="p.a", line_number=9, line_contents="from . import a")
    graph.add_import(importer="p.d", imported="p.a", line_number=1, line_contents="from . import a")
    assert cycles(graph, "p") == [["p.a", "p.b", "p.c", "p.a"]]
    assert "p.c -> p.a (line 9: from . import a)" in describe(graph, cycles(graph, "p")[0])
    graph.remove_import(importer="p.c", imported="p.a")
    assert cycles(graph, "p") == []
