"""pytest plugin: spec files become test files, each claim at each grid point a test item.

Registered through the ``pytest11`` entry point, so ``pytest spec/`` (or a
plain ``pytest`` whose testpaths include ``spec``) collects every ``*.py``
file inside a directory named ``spec`` (``--dpverify-dir`` changes the name).
A refuted claim fails with its witness and a replay command instead of a
traceback.  This module is cheap to import: dpverify itself loads only when a
spec file is collected.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import pytest

_WORKSPACES = pytest.StashKey[dict]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dpverify")
    group.addoption("--dpverify-precision", type=int, default=None,
                    help="significant digits of dpverify's certified arithmetic (default 50)")
    group.addoption("--dpverify-max-work", type=int, default=None,
                    help="refuse universes whose estimated enumeration work exceeds this")
    group.addoption("--dpverify-dir", default="spec",
                    help="collect *.py files inside directories with this name as dpverify specs")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_WORKSPACES] = {}


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Optional[pytest.Collector]:
    if file_path.suffix != ".py" or file_path.name.startswith(("_", "test_")) or file_path.name == "conftest.py":
        return None
    if parent.config.getoption("--dpverify-dir") not in file_path.parent.parts:
        return None
    return SpecFile.from_parent(parent, path=file_path)


class SpecFile(pytest.File):
    """A spec file: one item per (spec, claim, grid point)."""

    def collect(self) -> Any:
        from .errors import SpecError
        from .loader import load
        from .runner import relative, render_error
        try:
            specs = load(Path(relative(str(self.path))))
        except SpecError as err:
            yield SpecLoadError.from_parent(self, name="load", error=render_error(err))
            return
        for spec in specs:
            for claim in spec.claims:
                for point in spec.points_for(claim):
                    label = ",".join(f"{sym.name}={value}" for sym, value in point)
                    name = f"{spec.name}::{claim.id}" + (f"[{label}]" if label else "")
                    yield ClaimItem.from_parent(self, name=name, spec=spec, claim=claim, point=point)


class SpecLoadError(pytest.Item):
    """Stands for a spec file that does not load; fails with the loader's message."""

    def __init__(self, *, error: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        raise ClaimFailed(self.error)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return str(excinfo.value) if isinstance(excinfo.value, ClaimFailed) else super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"dpverify load {self.path.name}"


class ClaimFailed(Exception):
    """A claim that does not hold: its text is the whole failure report."""


class ClaimItem(pytest.Item):
    """One claim of one spec at one parameter point."""

    def __init__(self, *, spec: Any, claim: Any, point: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec, self.claim, self.point = spec, claim, point

    def _workspace(self) -> Any:
        from .checks import Options, Workspace
        from .checks.workspace import DEFAULT_MAX_WORK, DEFAULT_PRECISION
        spaces = self.config.stash[_WORKSPACES]
        if id(self.spec) not in spaces:
            options = Options(
                precision=self.config.getoption("--dpverify-precision") or DEFAULT_PRECISION,
                max_work=self.config.getoption("--dpverify-max-work") or DEFAULT_MAX_WORK)
            spaces[id(self.spec)] = (self.spec, Workspace(options))  # keep spec alive with its workspace
        return spaces[id(self.spec)][1]

    def runtest(self) -> None:
        from .checks import check_point
        from .runner import relative
        result = check_point(self.spec, self.claim, self.point, self._workspace())
        self.user_properties.append(("dpverify_status", result.status.value))
        expected = self.claim.expect
        if (result.status.value == expected) if expected else result.status.holds:
            return
        path = relative(str(self.path))
        lines = [f"{result.status.value}: {self.spec.name}:{self.claim.id} ({self.claim.describe()})",
                 result.message]
        if expected:
            lines.insert(0, f"expected {expected}, got {result.status.value}")
        if result.witness is not None and isinstance(result.witness.x, dict):  # a formula's counterexample
            w = result.witness
            lines += ["  at " + ", ".join(f"{k} = {v}" for k, v in w.x.items()), f"  lhs = {w.p}",
                      f"  rhs = {w.p_prime}"]
        elif result.witness is not None:
            w = result.witness
            lines += [f"  X   = {w.x!r}", f"  X'  = {w.x_prime!r}", f"  output = {w.output!r}",
                      f"  P(output|X)  = {w.p}", f"  P(output|X') = {w.p_prime}"]
            if w.ratio:
                lines.append(f"  ratio = {w.ratio}")
        replay = f"dpverify check {path} --spec {self.spec.name} --claim {self.claim.id}"
        replay += "".join(f" --point {k}={v}" for k, v in result.params.items())
        lines.append(f"replay: {replay}")
        raise ClaimFailed("\n".join(lines))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ClaimFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"dpverify {self.name}"
