"""A fuzzer for the verdict cache (dpverify/cache.py): a stale verdict is a wrong verdict.

Each example builds a small project whose one spec reads six files, each holding a factor 1 or 2:

* ``specs/fz.py``, the spec file itself (``LOCAL``);
* ``specs/_abs.py``, a helper beside it imported absolutely (``import _abs``);
* ``specs/_pkg/_rel.py``, reached only through a relative import in ``specs/_pkg/_model.py``
  (``from ._rel import REL``);
* ``site/fakelib/``, an installed library (with its ``fakelib-1.0.dist-info``) in a site directory
  on ``sys.path``, which dpverify counts as installed like site-packages;
* ``extra/pthlib.py``, on ``sys.path`` only through ``site/extra.pth``;
* ``site/lazylib/``, imported by the mechanism while a point is checked, never at load.

The mechanism is randomized response at ε·k, k the product of the factors, claimed 2ε-DP: proved
when k ≤ 2, refuted otherwise.  Hypothesis then draws steps: edits of any of these files (a new
factor, a comment, the same bytes again, with the old mtime put back or not), an edit of a helper
nothing imports, installs of unrelated distributions, an identical reinstall of the library, a
touch; after each, a run with the cache -- of the whole directory, with ``--claim``, or the replay
command (``--spec --claim --point``) -- and the same run with ``--no-cache``.  It asserts that

* the cached run's verdicts are the ``--no-cache`` run's, and the expected ones;
* a point is recomputed exactly when a file its check read changed since its entry was kept (the
  run's hits and misses, and whether the mechanism ran at all): a change is never missed, and
  nothing that did not change what the check read (an unrelated install, a touch, a reinstall of the
  same bytes, an unused helper) costs a recomputation.

The default run is a fixed-seed handful of examples; ``pytest -m fuzz_long`` runs many more.
"""
from __future__ import annotations

import importlib
import json
import os
import shutil
import site
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpverify.cache as cache_module
import dpverify.cli as cli_module
from dpverify.cli import main

TESTS = str(Path(__file__).resolve().parent) + os.sep

SPEC = textwrap.dedent("""
    from sympy import Rational
    import dpverify as dp
    import _abs
    from _pkg._model import rel
    import fakelib
    import pthlib
    from _abs import LOG

    LOCAL = {value}{comment}
    eps = dp.symbol("eps", positive=True)

    def fz_mechanism(data, eps):
        import lazylib  # while a point is checked only
        with open(LOG, "a") as log:
            log.write("ran\\n")
        k = LOCAL * _abs.ABS * rel() * fakelib.LIB * pthlib.PTH * lazylib.LAZY
        return dp.randomized_response(data[0], eps * k)

    fz = dp.spec(fz_mechanism, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                 grid={{eps: [Rational(1, 2), 1]}}, claims=[dp.private(2 * eps)], name="fz")
""")

FILES = {  # what the check reads: (path under the project, the text with {value} and {comment})
    "spec": ("specs/fz.py", SPEC),
    "abs": ("specs/_abs.py", "LOG = {log!r}\nABS = {value}{comment}\n"),
    "rel": ("specs/_pkg/_rel.py", "REL = {value}{comment}\n"),
    "lib": ("site/fakelib/__init__.py", "LIB = {value}{comment}\n"),
    "pth": ("extra/pthlib.py", "PTH = {value}{comment}\n"),
    "lazy": ("site/lazylib/__init__.py", "LAZY = {value}{comment}\n"),
}
UNUSED = "specs/_unused.py"  # a helper beside the spec that nothing imports
POINTS = {"all": ["1/2", "1"], "claim": ["1/2", "1"], "replay": ["1"]}
MODES = {"all": [], "claim": ["--claim", "private"],
         "replay": ["--spec", "fz", "--claim", "private", "--point", "eps=1"]}


class Project:
    """The project of one example, and what the cache should know about it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.values = {name: 1 for name in FILES}
        self.comments = {name: "" for name in FILES}
        self.kept: dict[str, Any] = {}  # point -> the read files' contents when its entry was kept
        (root / "specs" / "_pkg").mkdir(parents=True)
        (root / "specs" / "_pkg" / "__init__.py").write_text("")
        (root / "specs" / "_pkg" / "_model.py").write_text("from ._rel import REL\n\n\ndef rel():\n    return REL\n")
        (root / UNUSED).write_text("UNUSED = 1\n")
        (root / "extra").mkdir()
        (root / "site").mkdir()
        (root / "site" / "extra.pth").write_text(str(root / "extra") + "\n")
        for name in FILES:
            self.write(name)
        self.dist_info("fakelib", "1.0")
        self.dist_info("lazylib", "0.1")

    def text(self, name: str) -> str:
        path, template = FILES[name]
        return template.format(value=self.values[name], comment=self.comments[name], log=str(self.root / "runs.log"))

    def write(self, name: str, keep_mtime: bool = False) -> None:
        path = self.root / FILES[name][0]
        path.parent.mkdir(parents=True, exist_ok=True)
        old = path.stat() if path.exists() else None
        path.write_text(self.text(name))
        if keep_mtime and old is not None:  # as `cp -p` or an archive would: only the ctime tells
            os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))

    def dist_info(self, name: str, version: str) -> None:
        info = self.root / "site" / f"{name}-{version}.dist-info"
        info.mkdir(exist_ok=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")

    def state(self) -> tuple[str, ...]:
        return tuple(self.text(name) for name in FILES)

    def expected(self) -> str:
        k = 1
        for value in self.values.values():
            k *= value
        return "proved" if k <= 2 else "refuted"


@st.composite
def steps(draw: Any) -> list[tuple]:
    found = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["edit", "edit", "edit", "unused", "install", "reinstall", "touch"]))
        mode = draw(st.sampled_from(sorted(MODES)))
        if kind == "edit":
            found.append(("edit", draw(st.sampled_from(sorted(FILES))), draw(st.sampled_from([1, 2])),
                          draw(st.sampled_from(["", "  # edited", "  # again"])), draw(st.booleans()), mode))
        elif kind == "install":
            found.append(("install", f"unrelated_{draw(st.integers(0, 9))}", mode))
        elif kind == "touch":
            found.append(("touch", draw(st.sampled_from(sorted(FILES))), mode))
        else:
            found.append((kind, mode))
    return found


def _run(project: Project, mode: str, cached: bool, caches: list) -> tuple[int, list[str], bool]:
    """One in-process run: (exit code, the statuses in order, whether the mechanism ran)."""
    log = project.root / "runs.log"
    if log.exists():
        log.unlink()
    args = ["check", "specs", "--json", *MODES[mode], *(["--cache-dir", "cache"] if cached else ["--no-cache"])]
    try:
        result = CliRunner().invoke(main, args)
    finally:  # a filtered run imported the project's modules here: the next run must read the files again
        for name, module in list(sys.modules.items()):
            if str(getattr(module, "__file__", None) or "").startswith(str(project.root)):
                del sys.modules[name]
        importlib.invalidate_caches()
    try:
        document = json.loads(result.output)
    except ValueError:
        raise AssertionError(f"{args}: {result.output}") from None
    statuses = [p["status"] for s in document["specs"] for c in s["claims"] for p in c["points"]]
    if any(s not in ("proved", "refuted") for s in statuses):  # say why, should it ever happen
        statuses += [p["message"] for s in document["specs"] for c in s["claims"] for p in c["points"]]
        statuses += [s.get("error") for s in document["specs"] if s.get("error")]
    return result.exit_code, statuses, log.exists()


def _apply(project: Project, step: tuple) -> None:
    kind = step[0]
    if kind == "edit":
        _, name, value, comment, keep_mtime, _ = step
        project.values[name], project.comments[name] = value, comment
        project.write(name, keep_mtime)
    elif kind == "unused":
        path = project.root / UNUSED
        path.write_text(path.read_text() + "# edited\n")
    elif kind == "install":  # an unrelated distribution appears in the site directory
        package = project.root / "site" / step[1]
        package.mkdir(exist_ok=True)
        (package / "__init__.py").write_text("VALUE = 1\n")
        project.dist_info(step[1], "1.0")
    elif kind == "reinstall":  # the library's files removed and written again, the same bytes
        shutil.rmtree(project.root / "site" / "fakelib")
        project.write("lib")
    elif kind == "touch":
        os.utime(project.root / FILES[step[1]][0])
    importlib.invalidate_caches()


def _check_example(plan: list[tuple]) -> None:
    with tempfile.TemporaryDirectory(prefix="dpverify-cache-fuzz-") as where, pytest.MonkeyPatch.context() as mp:
        root = Path(where).resolve()
        mp.chdir(root)
        mp.setattr(sys, "dont_write_bytecode", True)  # same-size edits within a second: no stale .pyc
        mp.setattr(sys, "path", list(sys.path))
        frozen = cache_module.source_digest()  # others may edit dpverify's files while this runs
        mp.setattr(cache_module, "source_digest", lambda root=None: frozen)
        covered = getattr(cache_module, "_is_covered", None)  # the test harness's own files (others may
        if covered is not None:  # edit tests/) are not what the spec reads: counted as the environment
            mp.setattr(cache_module, "_is_covered", lambda real, roots: real.startswith(TESTS) or covered(real, roots))
        caches: list = []
        opened = cli_module._cache

        def spy(run: Any) -> Any:
            cache = opened(run)
            caches.append(cache)
            return cache
        mp.setattr(cli_module, "_cache", spy)
        project = Project(root)
        mp.setattr(cache_module, "_LIBRARIES", cache_module._LIBRARIES
                   + (str(root / "site") + os.sep, str(root / "extra") + os.sep))
        site.addsitedir(str(root / "site"))
        importlib.invalidate_caches()
        for step in [("start", "all")] + plan:
            _apply(project, step)
            mode = step[-1]
            code, statuses, ran = _run(project, mode, True, caches)
            cache = caches[-1]
            state = project.state()
            stale = [p for p in POINTS[mode] if project.kept.get(p) != state]
            assert (cache.misses, cache.hits) == (len(stale), len(POINTS[mode]) - len(stale)), (step, stale)
            assert ran == bool(stale), (step, stale)
            fresh_code, fresh, _ = _run(project, mode, False, caches)
            assert statuses == fresh == [project.expected()] * len(POINTS[mode]), (step, statuses, fresh)
            assert code == fresh_code == (0 if project.expected() == "proved" else 1), step
            for point in POINTS[mode]:
                project.kept[point] = state


@settings(max_examples=5, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(steps())
def test_the_cache_recomputes_what_changed_and_reuses_the_rest(plan: list[tuple]) -> None:
    _check_example(plan)


@pytest.mark.fuzz_long
@settings(max_examples=120, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(steps())
def test_the_cache_recomputes_what_changed_and_reuses_the_rest_long(plan: list[tuple]) -> None:
    _check_example(plan)


def test_every_kind_of_file_is_caught() -> None:
    """The fixed part: an edit of each kind of file the check reads, in each kind of run."""
    _check_example([("edit", name, 2, "", False, mode) for name, mode in zip(sorted(FILES), ["claim", "replay", "all"] * 2)]
                   + [("edit", name, 1, "", True, "all") for name in sorted(FILES)])
