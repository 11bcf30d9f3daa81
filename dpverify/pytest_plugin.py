"""pytest plugin: spec files become test files, each claim at each grid point a test item.

Registered through the ``pytest11`` entry point.  What is collected as a spec file:

- every ``*.py`` file (not ``_*.py``, not ``conftest.py``) inside a directory named ``spec``
  (``--dpverify-dir`` changes the name), whatever ``python_files`` says;
- inside a directory given on the command line (or in ``testpaths``) under any name
  (``pytest mechanisms/``), every such file that declares specs (a module-level
  ``dpverify.spec(...)`` call after ``import dpverify``) and is not named like a test module;
- a file named on the command line wherever it lives when it imports dpverify.

A spec file pytest would pass over (``pytest`` run without arguments on a folder not named
``spec``) is a collection error naming it and the fix.

Items are ``FILE::SPEC::CLAIM[NAME_VALUE-NAME_VALUE...]``, e.g.
``spec/rr.py::rr::private[eps_1/2]`` or ``spec/sparse.py::svt::private[eps_1-t_4]``: the
parameters sorted by name, each name and its value joined by ``_``, the parameters by ``-`` (as
pytest joins a parametrized test's values), the value as dpverify prints it without spaces.
Node ids are deterministic: the same spec file gives the same ids in every run, which is what
``--lf``, ``--ff`` and ``--sw`` match the previous run's failures by.  Every printed node id can
be passed back to pytest.  ``-k`` takes the ids' words (``-k 'eps_1/2'``, ``-k 'halved and
eps_1]'``; ``-k`` matches substrings, so ``eps_1`` also selects ``eps_1/2``, and ``eps_1]`` only
``eps=1`` as the last parameter).  A value holding a character ``-k``'s grammar refuses keeps it
(``1+sqrt(2)``, ``2*pi``, a tuple's ``(1,2)``, a repeated claim id's ``#``): select such a point
by its node id, or with ``-k`` by a part of it without those characters.

A refuted claim fails with its witness and a replay command instead of a traceback.  A claim
declared ``expect="refuted"`` is pytest's strict xfail: refuted, it is reported ``xfailed``
(``XFAIL``, its reason the witness in one line); holding, it fails as ``[XPASS(strict)]``;
``unknown`` or an error fails as any claim does.  A run where every claim is as expected exits 0.

A claim that holds passes, and ``pytest -v`` and the "dpverify verdicts" section name its verdict and
its scope (:mod:`dpverify.report.scope`): ``PROVED [universe n=3, every ε]`` (proved for every ε on the
declared finite universe only), ``VERIFIED [universe n=3, grid]``, ``PROVED [all datasets, every ε]``;
each item's ``user_properties`` (in junit XML) carry ``dpverify_scope`` (that short form),
``dpverify_scope_label`` (the whole scope) and ``dpverify_all_datasets`` (true only for a verdict about
every dataset of every size).

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


def _spec_name(path: Path) -> bool:
    """A name ``dpverify check`` takes in a directory (:func:`dpverify.loader.is_spec_name`, kept
    here so that importing the plugin does not import dpverify): ``*.py``, not ``_*.py``, not
    ``conftest.py``.  Whether it also matches ``python_files`` does not matter."""
    return path.suffix == ".py" and not path.name.startswith("_") and path.name != "conftest.py"


def _python_file(path: Path, config: pytest.Config) -> bool:
    """Whether pytest's own Python collector takes ``path`` by its name (``python_files``)."""
    from _pytest.python import path_matches_patterns
    return path_matches_patterns(path, config.getini("python_files"))


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


_ARGUMENT_DIRS = pytest.StashKey[list[Path]]()


def _argument_dirs(config: pytest.Config) -> list[Path]:
    """The directories given on the command line or by ``testpaths`` (resolved), but not the
    invocation directory pytest falls back to when it has neither: ``pytest mechanisms/`` asks for
    the specs in ``mechanisms/``, a bare ``pytest`` in a project is not asked for its specs."""
    if _ARGUMENT_DIRS not in config.stash:
        found = []
        if config.args_source is not pytest.Config.ArgsSource.INVOCATION_DIR:
            for arg in config.args:
                path = Path(arg.split("::", 1)[0])
                path = (config.invocation_params.dir / path) if not path.is_absolute() else path
                if path.is_dir():
                    found.append(path.resolve())
        config.stash[_ARGUMENT_DIRS] = found
    return config.stash[_ARGUMENT_DIRS]


def _in_argument_dir(path: Path, config: pytest.Config) -> bool:
    real = path.resolve()
    return any(folder in real.parents for folder in _argument_dirs(config))


def _holds_specs(path: Path) -> bool:
    """Declares specs as far as reading it tells: an import of dpverify and a module-level
    ``dpverify.spec(...)`` call (:func:`_declares_specs`)."""
    return _imports_dpverify(path) and _declares_specs(path)


def _is_spec(path: Path, session: pytest.Session) -> bool:
    """Whether the plugin collects ``path`` as a spec file: every file ``dpverify check`` would take
    in a spec directory, whatever ``python_files`` says (``spec/test_rr.py`` is a spec, never a
    test module that pytest imports and finds no tests in); in a directory given on the command
    line (or by ``testpaths``) under another name, a file that declares specs and is not named like
    a test module (test modules there stay pytest's); a file named on the command line outside
    spec directories when it imports dpverify and is not named like a test module.  As ``dpverify
    check`` does, a file named on the command line is taken whatever its name (but a conftest.py,
    which pytest loads as one)."""
    if path.suffix != ".py" or path.name == "conftest.py":
        return False
    if not session.isinitpath(path):
        if not _spec_name(path):
            return False
        config = session.config
        if _in_spec_dir(path, config):
            return True
        return _in_argument_dir(path, config) and not _python_file(path, config) and _holds_specs(path)
    if _in_spec_dir(path, session.config):
        return True
    return not _python_file(path, session.config) and _imports_dpverify(path)


class _Collection:
    """What the collection saw, for :func:`pytest_collection_modifyitems` to check that no spec
    file and no claim point was left out silently."""

    def __init__(self) -> None:
        self.taken: set[Path] = set()  # spec files given a SpecFile collector
        self.modules: list[pytest.Module] = []  # pytest's own test modules (a spec file among them is not checked)
        self.spec_dirs: set[Path] = set()  # spec directories pytest entered
        self.deselected: set[str] = set()  # node ids reported deselected (-k, -m, --deselect, ...)


_COLLECTION = pytest.StashKey[_Collection]()


def _collection(config: pytest.Config) -> _Collection:
    if _COLLECTION not in config.stash:
        config.stash[_COLLECTION] = _Collection()
    return config.stash[_COLLECTION]


def _note_spec_dir(path: Path, config: pytest.Config) -> None:
    """Record the outermost directory named like a spec directory that holds ``path`` (inside the
    root directory when ``path`` is: a checkout under ``~/spec/`` is not a spec directory)."""
    name, root = config.getoption("--dpverify-dir"), config.rootpath
    inside = root in path.parents
    for folder in reversed(path.parents):
        if folder.name == name and (not inside or root in folder.parents):
            _collection(config).spec_dirs.add(folder)
            return


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Any:
    """A spec file gets exactly one collector, a :class:`SpecFile`: through
    :func:`pytest_pycollect_makemodule` when pytest's Python collector takes the file (its name
    matches ``python_files``, or it is named on the command line), else here.  A test module that
    another hook made for a spec file (a conftest.py's ``pytest_pycollect_makemodule``) is replaced:
    pytest would import the spec as a test module, find no tests and pass."""
    outcome = yield
    if file_path.suffix != ".py" or not _is_spec(file_path, parent.session):
        if _unchecked_spec(file_path, parent.session):
            outcome.force_result([_UncheckedSpec.from_parent(parent, path=file_path)])
        return
    collected = list(outcome.get_result() or [])
    if not any(isinstance(c, SpecFile) for c in collected):
        collected = [c for c in collected if type(c) is not pytest.Module]
        collected.append(SpecFile.from_parent(parent, path=file_path))
        outcome.force_result(collected)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """Note what pytest collects (not what it only looks at: pytest >= 8 makes collectors for a
    directory's every entry, then keeps those the arguments name): the spec files taken (also
    when --lf then skips them), pytest's own test modules, the spec directories entered."""
    outcome = yield
    collection = _collection(collector.config)
    if isinstance(collector, SpecFile):
        collection.taken.add(collector.path.resolve())
        _last_failed_found(collector, outcome.get_result())
    elif type(collector) is pytest.Module:
        collection.modules.append(collector)
    path = getattr(collector, "path", None)
    if isinstance(path, Path) and not isinstance(collector, pytest.Session):
        _note_spec_dir(path / "_" if path.is_dir() else path, collector.config)


def _last_failed_found(spec_file: "SpecFile", report: pytest.CollectReport) -> None:
    """Under ``--lf``, tell pytest's last-failed plugin that a spec file holding a failed claim point
    was collected, so that it skips the spec files without failures (``skipped N files``) instead
    of loading every one: it looks for the failures among a file's direct children, and a spec
    file's are its specs (the claim points one level down).  pytest sorts the files with failures
    first, so they are collected before the others it can then skip.  Where pytest's plugin is not
    the one this was written against (pytest 9.0's ``LFPluginCollWrapper``), nothing happens: --lf
    still deselects the points that passed, it only loads every file."""
    config = spec_file.config
    if not config.getoption("lf", False) or report.outcome != "passed":
        return
    wrapper = config.pluginmanager.get_plugin("lfplugin-collwrapper")
    if wrapper is None or getattr(wrapper, "_collected_at_least_one_failure", True) is not False:
        return
    lastfailed = getattr(getattr(wrapper, "lfplugin", None), "lastfailed", None)
    if not isinstance(lastfailed, dict):
        return
    ids = {f"{node.nodeid}::{name}" for node in report.result if isinstance(node, SpecNode) for name in node.names()}
    if not ids & lastfailed.keys():
        return
    try:
        from _pytest.cacheprovider import LFPluginCollSkipfiles
    except ImportError:
        return
    if not config.pluginmanager.has_plugin("lfplugin-collskip"):
        config.pluginmanager.register(LFPluginCollSkipfiles(wrapper.lfplugin), "lfplugin-collskip")
    wrapper._collected_at_least_one_failure = True


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> Optional[pytest.Collector]:
    """A spec file that pytest's Python collector takes (its name matches ``python_files``, or it
    is named on the command line) is collected as a spec, not imported as a test module."""
    if _is_spec(module_path, parent.session):
        return SpecFile.from_parent(parent, path=module_path)
    return None


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items:
        _collection(items[0].config).deselected.update(item.nodeid for item in items)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> Any:
    """After every other hook has chosen the items: a spec file that ``dpverify check`` would check
    on the same folders but that pytest did not take as a spec, or claim points a hook dropped
    without deselecting them, are collection errors naming the file, why and the fix (pytest then
    exits 2, "errors during collection"; a gate must not pass while a refuted claim goes unchecked)."""
    before = list(items)
    yield
    collection = _collection(config)
    problems = _modules_holding_specs(collection, before) + _files_not_taken(session, collection)
    problems += _points_dropped(before, items, collection)
    for path, text in problems:
        _collection_error(session, path, text)


def _collection_error(session: pytest.Session, path: Path, text: str) -> None:
    try:
        node_id = path.relative_to(session.config.rootpath).as_posix()
    except ValueError:
        node_id = str(path)
    report = pytest.CollectReport(node_id, "failed", text, [])
    session.ihook.pytest_collectreport(report=report)


def _shown(path: Path, config: pytest.Config) -> str:
    try:
        return path.relative_to(config.invocation_params.dir).as_posix()
    except ValueError:
        return str(path)


def _declared_specs(module: Any) -> list:
    """The specs a module object declares, read as :func:`dpverify.loader.load` reads them."""
    import sys
    if "dpverify.dsl.spec" not in sys.modules:  # no spec can exist before dpverify's DSL is imported
        return []
    from .dsl.spec import Spec
    found = []
    for value in list(vars(module).values()):
        for item in (value if isinstance(value, (list, tuple)) else [value]):
            if isinstance(item, Spec) and all(item is not s for s in found):
                found.append(item)
    return found


def _modules_holding_specs(collection: _Collection, items: list[pytest.Item]) -> list[tuple[Path, str]]:
    """pytest's own test modules (a file named on the command line outside spec directories, named
    like a test module or without an import of dpverify the plugin can see) that declare specs and
    hold no tests: their claims would go unchecked under a run that passes."""
    with_tests = {id(item.getparent(pytest.Module)) for item in items}
    problems = []
    for module in collection.modules:
        loaded = module.__dict__.get("_obj")  # set only when pytest imported it (it did when it collected it)
        named = module.session.isinitpath(module.path)
        if loaded is None or id(module) in with_tests or not (_spec_name(module.path) or named):
            continue
        specs = _declared_specs(loaded)
        if not specs:
            continue
        where = _shown(module.path, module.config)
        why = ("its name matches python_files" if _python_file(module.path, module.config)
               else "the plugin saw no `import dpverify` or `from dpverify` line in it")
        problems.append((module.path, (
            f"{where} declares dpverify specs ({', '.join(s.name for s in specs)}) but pytest collected it as a "
            f"test module ({why}) and found no tests in it: its claims are not checked.\n"
            f"fix: put it in a directory named {module.config.getoption('--dpverify-dir')!r} (or the one "
            "--dpverify-dir names), or rename it so it does not match python_files and import dpverify in it; "
            f"`dpverify check {where}` checks it")))
    return problems


def _directory_args(session: pytest.Session) -> list[Path]:
    """The directories pytest was asked to collect (command-line arguments or testpaths)."""
    config = session.config
    found = []
    for arg in config.args:
        path = Path(arg.split("::", 1)[0])
        path = (config.invocation_params.dir / path) if not path.is_absolute() else path
        if path.is_dir():
            found.append(path.resolve())
    return found


def _files_not_taken(session: pytest.Session, collection: _Collection) -> list[tuple[Path, str]]:
    """Spec files ``dpverify check`` takes in the spec directories of this run (a directory argument
    inside a spec directory, or a spec directory pytest entered) that got no SpecFile collector."""
    config = session.config
    arguments = _directory_args(session)
    # a spec directory pytest collected only on its way to a narrower argument (spec/rr.py) is not one of the run's
    roots = {d.resolve() for d in collection.spec_dirs}
    roots = {d for d in roots if any(a == d or a in d.parents for a in arguments)}
    roots |= {d for d in arguments if _in_spec_dir(d / "_", config)}
    expected: dict[Path, Path] = {}
    for root in sorted(roots):
        if any(other in root.parents for other in roots):
            continue
        for path in sorted(root.rglob("*.py")):
            if _spec_name(path) and path.is_file():
                expected.setdefault(path.resolve(), path)
    # a directory argument under another name: the files that declare specs and are not test modules
    spec_roots = set(roots)
    others = [d for d in _argument_dirs(config) if d not in spec_roots and not any(r in d.parents for r in spec_roots)]
    for argument in sorted(others):
        if any(other in argument.parents for other in others):
            continue
        for path in _python_files_under(argument):
            real = path.resolve()
            if real not in expected and _spec_name(path) and not _python_file(path, config) \
                    and not any(r in real.parents for r in spec_roots) and _holds_specs(path):
                expected[real] = path
                roots.add(argument)
    problems = []
    for real, path in expected.items():
        if real in collection.taken:
            continue
        root = next(r for r in roots if r in real.parents)
        why, fix = _why_not_collected(session, real, root)
        problems.append((real, f"{_shown(real, config)} is a spec file that `dpverify check` checks, but pytest did "
                               f"not collect it: {why}, so its claims are not checked.\nfix: {fix}"))
    return problems


def _python_files_under(folder: Path) -> list[Path]:
    """The ``*.py`` files under a directory argument, sorted, not looking inside virtualenvs,
    ``site-packages``, ``__pycache__`` or ``.git`` (``pytest .`` in a project with its ``.venv``
    must not read every installed package)."""
    import os
    found = []
    for top, dirs, files in os.walk(folder):
        here = Path(top)
        dirs[:] = sorted(d for d in dirs if d not in {".git", "__pycache__", "site-packages"}
                         and not (here / d / "pyvenv.cfg").is_file())
        found += [here / f for f in sorted(files) if f.endswith(".py")]
    return found


def _why_not_collected(session: pytest.Session, path: Path, root: Path) -> tuple[str, str]:
    """Why pytest skipped ``path`` under ``root``, and what to change: the first directory (from the
    top) or the file itself that pytest's ignore rules leave out."""
    import fnmatch as _fnmatch
    config = session.config
    chain = [p for p in reversed(path.parents) if root in p.parents or p == root][1:] + [path]
    deselect = f"to leave its claims out on purpose, `--deselect {_shown(path, config)}` (pytest reports them deselected)"
    for step in chain:
        try:
            ignored = session.gethookproxy(step).pytest_ignore_collect(collection_path=step, config=config)
        except Exception:  # a hook that fails here: fall through to the general answer
            ignored = None
        if not ignored:
            continue
        shown = _shown(step, config)
        given = [Path(p).resolve() for p in (config.getoption("ignore") or [])]
        globs = config.getoption("ignore_glob") or []
        if step in given or any(_fnmatch.fnmatch(str(step), str(Path(g).resolve())) for g in globs):
            return (f"{shown} is ignored by --ignore or --ignore-glob",
                    f"drop the --ignore (from the command line or addopts); {deselect}")
        if step.is_dir() and ((step / "pyvenv.cfg").is_file() or (step / "bin" / "activate").is_file()
                              or (step / "Scripts" / "activate.bat").is_file()):
            return (f"{shown} looks like a virtualenv, which pytest does not enter",
                    "move the spec file out of that directory, or pass --collect-in-virtualenv")
        if step.is_dir():
            patterns = [p for p in config.getini("norecursedirs") if _fnmatch.fnmatch(step.name, p)]
            if patterns:
                return (f"pytest does not enter {shown} (norecursedirs {patterns[0]!r})",
                        f"rename the directory, or set norecursedirs in the pytest configuration so that "
                        f"it does not match {step.name!r}")
        return (f"{shown} is ignored by a conftest.py (collect_ignore, collect_ignore_glob) or a "
                "pytest_ignore_collect hook",
                f"stop ignoring it in the conftest.py; {deselect}")
    return ("a conftest.py or plugin hook made no collector for it (or another one than the dpverify plugin's)",
            f"let the dpverify plugin collect it (check the pytest_collect_file and pytest_pycollect_makemodule "
            f"hooks of the conftest.py files above it); {deselect}")


def _points_dropped(before: list[pytest.Item], after: list[pytest.Item],
                    collection: _Collection) -> list[tuple[Path, str]]:
    """Claim points a hook removed from the run without reporting them deselected."""
    kept = {id(item) for item in after}
    dropped: dict[Path, list[str]] = {}
    for item in before:
        if isinstance(item, (ClaimItem, SpecLoadError)) and id(item) not in kept \
                and item.nodeid not in collection.deselected:
            dropped.setdefault(item.path, []).append(item.nodeid)
    return [(path, f"{len(ids)} claim point(s) of {_shown(path, before[0].config)} were removed from the run by a "
                   f"pytest_collection_modifyitems hook without being deselected ({ids[0]}{', ...' if len(ids) > 1 else ''}), "
                   "so their claims are not checked.\nfix: deselect them instead (config.hook.pytest_deselected"
                   "(items=...), as -k and --deselect do), or keep them")
            for path, ids in dropped.items()]


def _pytest_tests(path: Path, config: pytest.Config) -> list[str]:
    """The names pytest's Python collector would collect as tests in the spec file loaded from
    ``path`` (functions matching ``python_functions``, classes matching ``python_classes``)."""
    import inspect
    from .dsl.spec import Spec
    from .loader import _loaded
    module = _loaded[str(path.resolve())][0]

    def matches(option: str, name: str) -> bool:
        return any(name.startswith(p) or (any(c in p for c in "*?[") and fnmatch.fnmatch(name, p))
                   for p in config.getini(option))

    names = []
    for name, value in list(vars(module).items()):
        if isinstance(value, Spec):
            continue
        if inspect.isclass(value) and matches("python_classes", name):
            names.append(name)
        elif not inspect.isclass(value) and callable(value) and matches("python_functions", name):
            names.append(name)
    return names


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Any:
    """A claim point is never skipped or xfailed from outside its spec (a ``skip``/``xfail`` mark or
    an autouse fixture from a conftest.py would pass a run whose claims were not checked, or were
    refuted): it fails, saying so.  ``expect="refuted"`` in the spec is how a claim is expected to
    fail: refuted, its item is reported xfailed here (holding, it failed as ``[XPASS(strict)]`` in
    :meth:`ClaimItem.runtest`); -k or --deselect is how claims are left out."""
    outcome = yield
    report = outcome.get_result()
    if not isinstance(item, (ClaimItem, SpecLoadError)):
        return
    if call.excinfo is not None and isinstance(call.excinfo.value, RefutedAsExpected) and report.failed:
        report.outcome = "skipped"  # how pytest reports an xfail: "x", XFAIL, counted as xfailed, exit 0
        report.wasxfail = call.excinfo.value.reason
        return
    if not report.skipped:
        return
    longrepr = report.longrepr
    if hasattr(report, "wasxfail"):  # xfailed: the check's own failure, if it ran, is kept below
        what = f"xfail ({report.wasxfail})" if report.wasxfail else "xfail"
        del report.wasxfail
        failure = "" if isinstance(longrepr, tuple) or longrepr is None else f"\n{longrepr}"
    else:
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
        what, failure = f"skip ({reason})", ""
    report.outcome = "failed"
    report.longrepr = (f"{item.nodeid}: a claim point cannot be skipped or xfailed, and this one was marked {what}"
                       f"{failure}\nfix: remove the skip or xfail (a mark, an autouse fixture or a hook of a "
                       "conftest.py); to leave claims out, deselect them (-k, --deselect); to expect a "
                       "refutation, write expect=\"refuted\" in the claim")


def _node_name(text: str) -> str:
    """A name pytest can parse back out of a node id: no ``::``, brackets or white space."""
    return re.sub(r"::|[\[\]\s]", "_", text)


def point_id(point: Any) -> str:
    """A grid point as it appears in a node id: ``eps_1/2-t_4`` for ``eps=1/2, t=4`` (the point's
    parameters are sorted by name).  ``=`` and ``,`` would make the id a syntax error for ``-k``;
    ``_`` and ``-`` are in its grammar, ``-`` is how pytest joins a parametrized test's values."""
    return "-".join(f"{sym.name}_{_no_space(value)}" for sym, value in point)


def _no_space(value: Any) -> str:
    """A parameter value for a node id: ``1/2 + sqrt(2)`` as ``1/2+sqrt(2)``."""
    return re.sub(r"\s", "", str(value))


def _unchecked_spec(path: Path, session: pytest.Session) -> bool:
    """A file outside spec directories that pytest's Python collector does not take (not named like a
    test module) but that declares dpverify specs at module level: ``dpverify check`` on the folder
    would check it, pytest would pass it over in silence (found by review: ``pytest myspecs`` exited 0
    where ``dpverify check myspecs`` refuted a claim)."""
    if path.suffix != ".py" or path.name == "conftest.py" or session.isinitpath(path):
        return False
    if _in_spec_dir(path, session.config) or _python_file(path, session.config):
        return False
    return _imports_dpverify(path) and _declares_specs(path)


def _declares_specs(path: Path) -> bool:
    """Whether a module-level statement calls ``dpverify.spec`` (by any name the file imports it as)."""
    import ast
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError, OSError):
        return False
    modules, functions = set(), set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == "dpverify"}
        elif isinstance(node, ast.ImportFrom) and node.module == "dpverify":
            functions |= {a.asname or a.name for a in node.names if a.name == "spec"}
    for node in tree.body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.Expr)) or node.value is None:
            continue
        for call in ast.walk(node.value):
            if not isinstance(call, ast.Call):
                continue
            f = call.func
            if isinstance(f, ast.Attribute) and f.attr == "spec" and isinstance(f.value, ast.Name) \
                    and f.value.id in modules or isinstance(f, ast.Name) and f.id in functions:
                return True
    return False


class _UncheckedSpec(pytest.File):
    """A spec file that this pytest run would not check: a collection error naming it and the fix."""

    def collect(self) -> Any:
        folder = self.path.parent.name
        raise self.CollectError(
            f"{_shown(self.path, self.config)} declares dpverify specs, but its folder is not a spec folder "
            f"(named {self.config.getoption('--dpverify-dir')!r}) nor given on the command line, and its name is "
            f"not a test module's, so pytest would pass over it while `dpverify check {folder}` checks it.\n"
            f"fix: name the folder on the command line (`pytest {_shown(self.path.parent, self.config)}`, or in "
            f"testpaths), run `pytest --dpverify-dir {folder}`, rename the folder to "
            f"{self.config.getoption('--dpverify-dir')!r}, or name the file on the command line")


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
        tests = _pytest_tests(self.path, self.config)
        if tests:
            where = _shown(self.path, self.config)
            raise self.CollectError(
                f"{where} declares dpverify specs and also defines pytest tests ({', '.join(tests[:5])}"
                f"{', ...' if len(tests) > 5 else ''}): the dpverify plugin collects it as a spec file, so pytest "
                "would not run those tests, and pytest's own collector would not check its claims.\n"
                "fix: move the tests into a test module outside the spec directory (it can import what it "
                "tests from the spec file), or the specs into a file of their own")
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
        from .engine.execution import pool
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
        """In the worker process (:func:`dpverify.engine.execution.pool.start`): answer each key with its result
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

    def _points(self) -> Any:
        """(item name, claim index, claim, point index, point) of each claim point, in order."""
        for j, claim in enumerate(self.spec.claims):
            for k, point in enumerate(self.spec.points_for(claim)):
                label = point_id(point)
                yield _node_name(claim.id) + (f"[{label}]" if label else ""), j, claim, k, point

    def names(self) -> list[str]:
        """The names of its items (``private[eps_1/2]``), without making them."""
        return [name for name, *_ in self._points()]

    def collect(self) -> Any:
        for name, j, claim, k, point in self._points():
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


class RefutedAsExpected(ClaimFailed):
    """A claim declared ``expect="refuted"`` that is refuted: reported as pytest's xfail, its
    reason the witness in one line (:func:`pytest_runtest_makereport`)."""

    def __init__(self, text: str, *, reason: str) -> None:
        super().__init__(text)
        self.reason = reason


def _summary(message: str) -> str:
    """A verdict's message in one line for an xfail reason: its first line, long decimals cut to
    eight digits after the point (``0.88079707...``; the replay command prints them all)."""
    line = (message.strip().splitlines() or [""])[0]
    line = re.sub(r"(\d+\.\d{8})\d+", r"\1...", line)
    return f"refuted as expected: {line}" if line else "refuted as expected"


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
        from .report.scope import point_scope
        from .results import universe_text
        spec_file = self.getparent(SpecFile)
        assert spec_file is not None
        result = spec_file.check(self.key)
        expected = self.claim.expect
        universe = getattr(self.spec, "universe", None)
        scope = point_scope(result, self.claim.kind, universe_text(universe),
                            universe.scope() if universe is not None else None)
        self.user_properties += [("dpverify_status", result.status.value), ("dpverify_expect", expected),
                                 ("dpverify_scope", scope.short if scope else None),
                                 ("dpverify_scope_label", scope.label if scope else None),
                                 ("dpverify_all_datasets", scope.all_datasets if scope else None)]
        if not expected and result.status.passes:
            return
        lines = [f"{result.status.value}: {self.spec.name}:{self.claim.id} ({self.claim.describe()})",
                 result.message]
        as_expected = expected is not None and result.status.value == expected
        if expected and not as_expected:
            # a strict xfail that passed reads as pytest writes it; unknown or an error is a failure as any
            xpass = "[XPASS(strict)] " if result.status.passes else ""
            lines.insert(0, f"{xpass}expected {expected}, got {result.status.value}"
                            + (f" [{scope.label}]" if scope else ""))
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
        if as_expected:
            raise RefutedAsExpected("\n".join(lines), reason=_summary(result.message))
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
    """The verdict of a passing claim in ``pytest -v``: ``PROVED``, ``VERIFIED`` or ``CONSISTENT`` and its
    scope (``PROVED [universe n=3, every ε]``), instead of a ``PASSED`` that does not tell a proof from a
    grid check, nor a finite universe from every dataset.  Failures, xfails (a
    claim refuted as expected), the short letters and the outcome counts stay pytest's (tools
    parse ``FAILED <node id>``); the "dpverify verdicts" section names every verdict."""
    verdict = _verdict(report)
    if verdict is None or not report.passed:
        return None
    status, _ = verdict
    return "passed", ".", (status.upper() + _scope(report), {"green": True})


def _scope(report: Any) -> str:
    """The scope of a verdict that holds (:mod:`dpverify.report.scope`): " [universe n=3, every ε]" for a
    proof on the declared finite universe, " [universe n=3, grid]" at a grid point, " [all datasets, every
    ε]" for a proof about every dataset, " [n = 3..40]" for a sample-complexity claim checked for those n;
    "" for a verdict that does not hold."""
    scope = dict(getattr(report, "user_properties", ())).get("dpverify_scope")
    return f" [{scope}]" if scope else ""


class _Verdicts:
    """Collects each dpverify item's verdict and prints the "dpverify verdicts" summary section:
    the count per verdict, then each claim with its verdict (one line per claim when all its
    points agree, else one per point)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.rows: list[tuple[str, str, Optional[str]]] = []  # node id, status, expected
        self.scopes: dict[str, str] = {}  # node id -> " [universe n=3, grid]": the scope of a verdict that holds

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        verdict = _verdict(report)
        if verdict is not None:
            self.rows.append((report.nodeid, *verdict))
            self.scopes[report.nodeid] = _scope(report)

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
        claims: dict[str, list[tuple[str, str]]] = {}
        for node_id, status, expected in self.rows:
            word = self._word(status, expected) + self.scopes.get(node_id, "")
            claims.setdefault(node_id.split("[", 1)[0], []).append((node_id, word))
        width = max(len(word) for points in claims.values() for _, word in points)
        out = []
        for claim, points in claims.items():
            if len({word for _, word in points}) == 1:
                word = points[0][1]
                many = f" ({len(points)} points)" if len(points) > 1 else ""
                out.append(f"{word:<{width}}  {claim if many else points[0][0]}{many}")
            else:
                out += [f"{word:<{width}}  {node_id}" for node_id, word in points]
        return out

    @staticmethod
    def _word(status: str, expected: Optional[str]) -> str:
        if not expected:
            return status
        return f"{status} (as expected)" if status == expected else f"{status} (expected {expected})"
