"""Checking claims leaves the caller's directories as they were: no `.hypothesis/` (hypothesis
caches constants of local modules there even without an example database) and, by default, no
diagnostics on stderr."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sympy

import dpverify as dp

SEARCH_ONLY = textwrap.dedent("""
    import sympy
    import dpverify as dp

    x = dp.symbol("x")
    # sin is opaque to z3: only the numeric (hypothesis) search refutes this
    s = dp.spec(name="sine", claims=[dp.inequality(sympy.sin(x), sympy.Rational(9, 10) + x**2 / 100, id="sine")])
""")


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path, Path]:
    """`python -m dpverify check` of a claim the numeric search refutes, run in an empty directory."""
    specs, cwd = tmp_path_factory.mktemp("specs"), tmp_path_factory.mktemp("cwd")
    (specs / "sine.py").write_text(SEARCH_ONLY)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HYPOTHESIS")}
    done = subprocess.run([sys.executable, "-m", "dpverify", "check", str(specs / "sine.py"), "--no-cache"],  # the
                          # verdict cache is the one thing a run keeps in the working directory (.dpverify_cache)
                          cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    return done, specs, cwd


def test_a_numeric_search_writes_nothing_into_the_working_directory(cli_run) -> None:
    done, specs, cwd = cli_run
    assert done.returncode == 1 and "refuted by numeric search" in done.stdout, done.stdout + done.stderr
    assert sorted(p.name for p in cwd.iterdir()) == []
    assert sorted(p.name for p in specs.iterdir()) == ["sine.py"]


def test_no_diagnostics_by_default(cli_run) -> None:
    done, _, _ = cli_run
    assert "dpverify: INFO" not in done.stderr and "dpverify: DEBUG" not in done.stderr, done.stderr


def test_the_search_restores_the_storage_directory_of_the_caller(tmp_path: Path, monkeypatch) -> None:
    """In process (the pytest plugin where it cannot fork, dp.check): a test suite's own hypothesis
    storage is put back after the search borrowed it."""
    configuration = pytest.importorskip("hypothesis.configuration")
    mine, before = tmp_path / "suite-storage", vars(configuration).get("__hypothesis_home_directory")
    configuration.set_hypothesis_home_dir(mine)
    try:
        monkeypatch.chdir(tmp_path)
        x = dp.symbol("x")
        claim = dp.inequality(sympy.sin(x), sympy.Rational(9, 10) + x**2 / 100, id="sine")
        (result,) = dp.check(dp.spec(name="sine", claims=[claim]))
        assert result.status.value == "refuted" and result.method == "numeric search", result.message
        assert vars(configuration)["__hypothesis_home_directory"] == mine
        assert sorted(p.name for p in tmp_path.iterdir()) == []
    finally:
        configuration.set_hypothesis_home_dir(before)


def test_the_search_draws_no_constants_from_the_loaded_modules(monkeypatch) -> None:
    """Hypothesis reads literals from every local module in sys.modules (under a time limit) and
    mixes them into its draws; the search switches that off, so its examples depend on the claim
    only, not on what the process imported or on the machine's load."""
    providers = pytest.importorskip("hypothesis.internal.conjecture.providers")
    calls = []
    original = providers._get_local_constants
    monkeypatch.setattr(providers, "_get_local_constants", lambda: calls.append(1) or original())
    x = dp.symbol("x")
    claim = dp.inequality(sympy.sin(x), sympy.Rational(9, 10) + x**2 / 100, id="sine")
    (result,) = dp.check(dp.spec(name="sine", claims=[claim]))
    assert result.status.value == "refuted" and result.method == "numeric search", result.message
    assert calls == [], f"hypothesis read the loaded modules' constants {len(calls)} times"
    assert providers._get_local_constants.__name__ == "<lambda>"  # the spy is back in place afterwards
