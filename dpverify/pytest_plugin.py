"""pytest plugin: spec files become test files, each claim at each grid point a test item.

Registered through the ``pytest11`` entry point, so ``pytest spec/`` (or a plain
``pytest`` whose testpaths include ``spec``) collects every ``*.py`` file inside a
directory named ``spec`` (``--dpverify-dir`` changes the name), and a file named on the
command line is collected as a spec wherever it lives when it imports dpverify.  Items
are ``FILE::SPEC::CLAIM[NAME=VALUE,...]``: a node id pytest prints can be passed back to
it.  A refuted claim fails with its witness and a replay command instead of a traceback.

Claims are checked in a worker process per spec file (forked where the platform can),
so spec code that exits or ends its process fails its items instead of ending the
session.  This module is cheap to import: dpverify itself loads only when a spec file
is collected.
"""
from __future__ import annotations

import fnmatch
import re
from pathlib import Path
from typing import Any, Optional

import pytest


_OPTIONS = pytest.StashKey[Any]()  # the validated dpverify Options, when the command line sets any
VERDICTS = ("proved", "verified", "consistent", "refuted", "unknown", "error")  # the order the summary counts them in


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dpverify")
    group.addoption("--dpverify-precision", default=None,
                    help="significant digits of dpverify's certified arithmetic, 15 to 10000 (default 50)")
    group.addoption("--dpverify-max-work", default=None,
                    help="refuse universes whose estimated enumeration work exceeds this (at least 1)")
    group.addoption("--dpverify-dir", default="spec",
                    help="collect *.py files inside directories with this name as dpverify specs")


def pytest_configure(config: pytest.Config) -> None:
    """Validate the dpverify options as the CLI does (one validator, :mod:`dpverify.options`), and
    register the verdict summary."""
    precision, max_work = config.getoption("--dpverify-precision"), config.getoption("--dpverify-max-work")
    if precision is not None or max_work is not None:  # dpverify is imported only when asked for
        from .options import OptionError, Options
        try:
            config.stash[_OPTIONS] = Options.validated(precision, max_work, flag="--dpverify-precision",
                                                       work_flag="--dpverify-max-work")
        except OptionError as err:
            raise pytest.UsageError(str(err)) from None
    config.pluginmanager.register(_Verdicts(config), "dpverify-verdicts")


def _candidate(path: Path, config: pytest.Config) -> bool:
    """A ``*.py`` file that is not private, not a conftest and not a test module."""
    if path.suffix != ".py" or path.name.startswith("_") or path.name == "conftest.py":
        return False
    patterns = config.getini("python_files")
    return not any(fnmatch.fnmatch(str(path) if "/" in p else path.name, p) for p in patterns)


def _in_spec_dir(path: Path, config: pytest.Config) -> bool:
    """Inside a spec directory of the project (a checkout under ``~/spec/`` does not count)."""
    try:
        parts = path.relative_to(config.rootpath).parent.parts
    except ValueError:  # outside the root directory
        parts = path.parent.parts
    return config.getoption("--dpverify-dir") in parts


def _imports_dpverify(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(r"^\s*(import|from)\b.*\bdpverify\b", text, re.MULTILINE) is not None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Optional[pytest.Collector]:
    """Spec files met while collecting a directory (a file named on the command line is
    collected by :func:`pytest_pycollect_makemodule` instead, so it is collected once)."""
    if parent.session.isinitpath(file_path) or not _candidate(file_path, parent.config):
        return None
    if not _in_spec_dir(file_path, parent.config):
        return None
    return SpecFile.from_parent(parent, path=file_path)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> Optional[pytest.Collector]:
    """A file named on the command line: a spec if it sits in a spec directory or imports dpverify."""
    if not parent.session.isinitpath(module_path) or not _candidate(module_path, parent.config):
        return None
    if _in_spec_dir(module_path, parent.config) or _imports_dpverify(module_path):
        return SpecFile.from_parent(parent, path=module_path)
    return None


def _node_name(text: str) -> str:
    """A name pytest can parse back out of a node id: no ``::``, brackets or white space."""
    return re.sub(r"::|[\[\]\s]", "_", text)


def _no_space(value: Any) -> str:
    """A parameter value for a node id: ``1/2 + sqrt(2)`` as ``1/2+sqrt(2)``."""
    return re.sub(r"\s", "", str(value))


class SpecFile(pytest.File):
    """A spec file: one collector per spec, one item per (claim, grid point)."""

    specs: list  # set by collect
    _worker: Any = None

    def collect(self) -> Any:
        from .errors import SpecError
        from .loader import load
        from .runner import relative, render_error
        try:
            self.specs = load(Path(relative(str(self.path))))
        except SpecError as err:
            yield SpecLoadError.from_parent(self, name="load", error=render_error(err))
            return
        for index, spec in enumerate(self.specs):
            yield SpecNode.from_parent(self, name=_node_name(spec.name), spec=spec, index=index)

    def options(self) -> Any:
        """The check options the pytest command line sets (validated by :func:`pytest_configure`)."""
        from .options import Options
        return self.config.stash.get(_OPTIONS, None) or Options()

    def check(self, key: tuple[int, int, int]) -> Any:
        """Check one (spec, claim, point) by index, in this file's worker process (started on
        first use; after one ends, the next check starts a fresh one)."""
        from .replay import relative
        if self._worker is None:
            self._worker = _Worker(relative(str(self.path)), self.specs, self.options())
        result = self._worker.check(key)
        if self._worker.ended:
            self._worker = None
        return result

    def teardown(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None


class _Worker:
    """Checks the points of one spec file in a forked process, one request at a time; where
    the platform cannot fork, in this process."""

    def __init__(self, path: str, specs: list, options: Any) -> None:
        from .engine import pool
        self.path, self.specs, self.options = path, specs, options
        self.workspaces: dict[int, Any] = {}
        self.ended = False
        self.process: Any = None
        if pool.can_fork():
            self.process, self.connection = pool.start(self._serve, duplex=True)

    def _point(self, key: tuple[int, int, int]) -> Any:
        from .checks import Workspace
        from .runner import run_point
        i, j, k = key
        spec = self.specs[i]
        claim = spec.claims[j]
        ws = self.workspaces.setdefault(i, Workspace(self.options))
        return run_point(self.path, spec, claim, spec.points_for(claim)[k], ws)

    def _serve(self, connection: Any) -> None:
        """In the worker process (:func:`dpverify.engine.pool.start`): answer each key with its result
        until told to stop (or until pytest is gone: the worker dies with it)."""
        from .checks import PointResult, Status
        while (key := _received(connection)) is not None:
            result = self._point(key)
            try:
                connection.send(result)
            except Exception as exc:  # a result that does not pickle
                connection.send(PointResult(result.params, Status.ERROR,
                                            f"internal error: the result could not be sent back: {exc}"))

    def check(self, key: tuple[int, int, int]) -> Any:
        if self.process is None:
            return self._point(key)
        try:
            self.connection.send(key)
            return self.connection.recv()
        except (EOFError, OSError):  # the process ended without answering
            self.close()
            return self._ended(key)

    def _ended(self, key: tuple[int, int, int]) -> Any:
        from .checks import PointResult, Status
        from .dsl.params import point_label
        from .errors import SpecError
        spec = self.specs[key[0]]
        claim = spec.claims[key[1]]
        error = SpecError(f"the process checking {spec.name}:{claim.id} ended (exit code {self.process.exitcode}) "
                          "without a result",
                          "a mechanism returns its output: remove what ends the process "
                          "(os._exit, os.kill, a crash in compiled code)", file=self.path)
        return PointResult(point_label(spec.points_for(claim)[key[2]]), Status.ERROR, error.render())

    def close(self) -> None:
        self.ended = True
        if self.process is None:
            return
        try:
            self.connection.send(None)
        except OSError:
            pass
        self.process.join()
        self.connection.close()


def _received(connection: Any) -> Any:
    """The next request, or ``None`` (stop) when pytest closed its end."""
    try:
        return connection.recv()
    except (EOFError, OSError):
        return None


class SpecNode(pytest.Collector):
    """One spec of a spec file: one item per claim and grid point."""

    def __init__(self, *, spec: Any, index: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec, self.index = spec, index

    def collect(self) -> Any:
        for j, claim in enumerate(self.spec.claims):
            for k, point in enumerate(self.spec.points_for(claim)):
                label = ",".join(f"{sym.name}={_no_space(value)}" for sym, value in point)
                name = _node_name(claim.id) + (f"[{label}]" if label else "")
                yield ClaimItem.from_parent(self, name=name, spec=self.spec, claim=claim, point=point,
                                            key=(self.index, j, k))


class SpecLoadError(pytest.Item):
    """Stands for a spec file that does not load; fails with the loader's message."""

    def __init__(self, *, error: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        self.user_properties.append(("dpverify_status", "error"))
        raise ClaimFailed(self.error)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return str(excinfo.value) if isinstance(excinfo.value, ClaimFailed) else super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"dpverify load {self.path.name}"


class ClaimFailed(Exception):
    """A claim that does not hold: its text is the whole failure report."""


def _aligned(labels: tuple[str, str], values: tuple[str, str]) -> tuple[str, ...]:
    """Two "label = value" lines with their "=" aligned."""
    width = max(len(label) for label in labels)
    return tuple(f"  {label:<{width}} = {value}" for label, value in zip(labels, values))


class ClaimItem(pytest.Item):
    """One claim of one spec at one parameter point."""

    def __init__(self, *, spec: Any, claim: Any, point: Any, key: tuple[int, int, int], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec, self.claim, self.point, self.key = spec, claim, point, key

    def runtest(self) -> None:
        from .replay import relative, replay_command
        from .report.evidence_lines import evidence_lines
        spec_file = self.getparent(SpecFile)
        assert spec_file is not None
        result = spec_file.check(self.key)
        expected = self.claim.expect
        self.user_properties += [("dpverify_status", result.status.value), ("dpverify_expect", expected)]
        if (result.status.value == expected) if expected else result.status.passes:
            return
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
                      *((f"  density at the output under X  = {w.p}", f"  density at the output under X' = {w.p_prime}")
                        if w.quantity == "density" else
                        (f"  D_alpha(X || X') = {w.p}", f"  claimed bound    = {w.p_prime}")
                        if w.quantity == "divergence" else
                        (f"  P(output|X)  = {w.p}", f"  P(output|X') = {w.p_prime}")
                        if w.quantity == "probability" else
                        _aligned(w.labels(), (w.p, w.p_prime)))]
            if w.ratio:
                lines.append(f"  ratio = {w.ratio}")
        lines += [f"  {line}" for line in evidence_lines(result.evidence)]
        replay = replay_command(relative(str(self.path)), self.spec.name, self.claim.id, result.params,
                                spec_file.options())
        lines.append(f"replay: {replay}")
        raise ClaimFailed("\n".join(lines))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ClaimFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"dpverify {self.name}"


def _verdict(report: Any) -> Optional[tuple[str, Optional[str]]]:
    """(status, expected status) of a dpverify item's call report; ``None`` for other reports
    (setup and teardown, other tests' items, and collection reports, which have no properties)."""
    if getattr(report, "when", None) != "call":
        return None
    properties = dict(getattr(report, "user_properties", ()))
    if "dpverify_status" not in properties:
        return None
    return properties["dpverify_status"], properties.get("dpverify_expect")


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    """The verdict of a passing claim in ``pytest -v``: ``PROVED``, ``VERIFIED`` or ``REFUTED (as
    expected)``, instead of a ``PASSED`` that does not tell a proof from a grid check.  Failures,
    the short letters and the outcome counts stay pytest's (tools parse ``FAILED <node id>``);
    the "dpverify verdicts" section names every verdict."""
    verdict = _verdict(report)
    if verdict is None or not report.passed:
        return None
    status, expected = verdict
    return "passed", ".", (status.upper() + (" (as expected)" if expected else ""), {"green": True})


class _Verdicts:
    """Collects each dpverify item's verdict and prints the "dpverify verdicts" summary section:
    the count per verdict, then each claim with its verdict (one line per claim when all its
    points agree, else one per point)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.rows: list[tuple[str, str, Optional[str]]] = []  # node id, status, expected

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        verdict = _verdict(report)
        if verdict is not None:
            self.rows.append((report.nodeid, *verdict))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.rows:
            return
        counts: dict[str, int] = {}
        for _, status, _ in self.rows:
            counts[status] = counts.get(status, 0) + 1
        order = [s for s in VERDICTS if s in counts] + sorted(set(counts) - set(VERDICTS))
        terminalreporter.write_sep("=", "dpverify verdicts")
        noun = "claim point" if len(self.rows) == 1 else "claim points"
        terminalreporter.write_line(f"{len(self.rows)} {noun}: " + ", ".join(f"{counts[s]} {s}" for s in order))
        if terminalreporter.verbosity < 0:
            return
        for text in self.lines():
            terminalreporter.write_line(text)

    def lines(self) -> list[str]:
        """``verdict  claim`` lines, claims in the order they ran."""
        claims: dict[str, list[tuple[str, str, Optional[str]]]] = {}
        for node_id, status, expected in self.rows:
            claims.setdefault(node_id.split("[", 1)[0], []).append((node_id, status, expected))
        width = max(len(self._word(status, expected)) for _, status, expected in self.rows)
        out = []
        for claim, points in claims.items():
            if len({(status, expected) for _, status, expected in points}) == 1:
                _, status, expected = points[0]
                many = f" ({len(points)} points)" if len(points) > 1 else ""
                out.append(f"{self._word(status, expected):<{width}}  {claim if many else points[0][0]}{many}")
            else:
                out += [f"{self._word(status, expected):<{width}}  {node_id}" for node_id, status, expected in points]
        return out

    @staticmethod
    def _word(status: str, expected: Optional[str]) -> str:
        if not expected:
            return status
        return f"{status} (as expected)" if status == expected else f"{status} (expected {expected})"
