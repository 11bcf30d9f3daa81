"""The verdict cache (dpverify/cache.py): an unchanged point is reused, a changed one never is.

Each mechanism here appends its spec's name to a log file every time it runs, so a test sees
which specs were recomputed, not only what the CLI's summary line says.
"""
from __future__ import annotations

import json
import os
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpverify.cache import Cache, Environment, forget, keeps, loaded_files, manifest, source_digest, still_valid
from dpverify.cli import main
from dpverify.options import Options
from dpverify.results import PointResult, Status

SPEC = textwrap.dedent("""
    from sympy import Rational
    import dpverify as dp
    from _helper import LOG, KEEP

    eps = dp.symbol("eps", positive=True)

    def NAME_mechanism(data, eps):
        with open(LOG, "a") as log:
            log.write("NAME\\n")
        return dp.randomized_response(data[0], eps * KEEP)

    NAME = dp.spec(NAME_mechanism, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                   grid={eps: [Rational(1, 2), 1]}, claims=[dp.private(CLAIM)], name="NAME")
""")


def _write(root: Path, name: str, claim: str = "eps") -> Path:
    path = root / f"{name}.py"
    path.write_text(SPEC.replace("NAME", name).replace("CLAIM", claim))
    return path


@pytest.fixture
def catalogue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Two spec files (first, second) importing a helper module beside them, in the working directory."""
    root = tmp_path / "specs"
    root.mkdir()
    (root / "_helper.py").write_text(f"LOG = {str(tmp_path / 'runs.log')!r}\nKEEP = 1\n")
    _write(root, "first")
    _write(root, "second")
    monkeypatch.chdir(tmp_path)
    yield root
    for name, module in list(sys.modules.items()):  # a run in this process (a filter, a report) imported them
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


def _check(*args: str) -> tuple[int, str, set[str]]:
    """``dpverify check specs`` with a cache in ./cache: (exit code, output, specs whose mechanism ran)."""
    log = Path("runs.log")
    if log.exists():
        log.unlink()
    result = CliRunner().invoke(main, ["check", "specs", "--cache-dir", "cache", *args])
    ran = set(log.read_text().split()) if log.exists() else set()
    return result.exit_code, result.output, ran


def _reused(output: str) -> tuple[int, int]:
    found = re.search(r"verdict cache: (\d+) of (\d+) points reused", output)
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


@pytest.fixture(autouse=True)
def _steady(monkeypatch: pytest.MonkeyPatch) -> None:
    """Edits here keep a file's size within one second: a stale ``.pyc`` would run the old code; and
    dpverify's source digest is taken once per test (an edit of dpverify's files while the suite runs,
    in a shared checkout, would otherwise change every key between two runs of one test;
    test_the_key_holds_options_and_dpverify_sources pins that it is in the key)."""
    import dpverify.cache as cache_module
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    frozen = cache_module.source_digest()
    monkeypatch.setattr(cache_module, "source_digest", lambda root=None: frozen)


def test_an_unchanged_catalogue_is_answered_by_the_cache(catalogue: Path) -> None:
    code, output, ran = _check()
    assert code == 0 and ran == {"first", "second"} and _reused(output) == (0, 0), output
    code, output, ran = _check()
    assert code == 0 and ran == set() and _reused(output) == (4, 4), output
    assert (Path("cache") / ".gitignore").read_text().strip().endswith("*")


def test_a_changed_spec_file_is_recomputed_and_only_it(catalogue: Path) -> None:
    _check()
    path = catalogue / "second.py"
    path.write_text(path.read_text() + "\n# an edit\n")
    code, output, ran = _check()
    assert code == 0 and ran == {"second"} and _reused(output) == (2, 4), output


def test_a_changed_claim_is_never_answered_from_the_cache(catalogue: Path) -> None:
    """The mutant: eps-DP holds and is cached; the same file claiming eps/2 must be refuted."""
    assert _check()[0] == 0
    _write(catalogue, "second", claim="eps / 2")
    code, output, ran = _check("--json")
    assert code == 1 and ran == {"second"}, output
    statuses = {s["name"]: [c["status"] for c in s["claims"]] for s in json.loads(output)["specs"]}
    assert statuses == {"first": ["proved"], "second": ["refuted"]}


def test_a_changed_helper_module_recomputes_the_specs_importing_it(catalogue: Path) -> None:
    _check()
    helper = catalogue / "_helper.py"
    helper.write_text(helper.read_text().replace("KEEP = 1", "KEEP = 2"))  # now a 2 eps mechanism
    code, output, ran = _check()
    assert code == 1 and ran == {"first", "second"} and _reused(output) == (0, 0), output


@pytest.mark.parametrize("option", [["--precision", "40"], ["--no-proofs"], ["--max-work", "1000000"]])
def test_an_option_that_changes_verdicts_recomputes_everything(catalogue: Path, option: list[str]) -> None:
    _check()
    code, output, ran = _check(*option)
    assert code == 0 and ran == {"first", "second"} and _reused(output) == (0, 0), output
    code, output, ran = _check(*option)  # and that run is cached under its own key
    assert ran == set() and _reused(output) == (4, 4), output


def test_no_cache_checks_everything_and_writes_nothing(catalogue: Path) -> None:
    _check()
    code, output, ran = _check("--no-cache")
    assert code == 0 and ran == {"first", "second"} and "verdict cache" not in output
    assert not Path("elsewhere").exists()
    CliRunner().invoke(main, ["check", "specs", "--no-cache", "--cache-dir", "elsewhere"])
    assert not Path("elsewhere").exists()


def test_in_process_runs_have_no_cache_unless_asked(catalogue: Path) -> None:
    """Click's test runner (or a program calling main) may have patched dpverify in memory."""
    assert CliRunner().invoke(main, ["check", "specs"]).exit_code == 0
    assert not Path(".dpverify_cache").exists()


def test_the_environment_variable_moves_the_cache(catalogue: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DPVERIFY_CACHE_DIR", "from-env")
    assert CliRunner().invoke(main, ["check", "specs"]).exit_code == 0
    assert (Path("from-env") / "CACHEDIR.TAG").exists()


def test_a_cached_json_document_is_the_fresh_one(catalogue: Path) -> None:
    """Same keys, same values (a cached point keeps the seconds it took), same exit code."""
    _write(catalogue, "second", claim="eps / 2")
    fresh_code, fresh, _ = _check("--json")
    cached_code, cached, ran = _check("--json")
    assert ran == set() and fresh_code == cached_code == 1
    assert json.loads(fresh) == json.loads(cached)


UNSEEDED = textwrap.dedent("""
    import numpy as np
    from sympy import Rational
    import dpverify as dp

    eps = dp.symbol("eps", positive=True)

    def rr(data, eps):
        return dp.randomized_response(data[0], eps)

    def own_entropy(data, eps):
        keep = float(np.exp(eps) / (1 + np.exp(eps)))
        return data[0] if np.random.default_rng().random() < keep else 1 - data[0]

    s = dp.spec(dp.black_box(own_entropy, spec_program=rr, samples=2000, unseeded=True),
                universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE), grid={eps: [1]},
                claims=[dp.conforms(rr)])
""")


def test_an_unseeded_black_box_is_never_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its samples differ from run to run: its verdict is recomputed every time."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "unseeded.py").write_text(UNSEEDED)
    for _ in range(2):
        result = CliRunner().invoke(main, ["check", "unseeded.py", "--cache-dir", "cache"])
        assert result.exit_code == 0 and "verdict cache" not in result.output, result.output
    assert not list((tmp_path / "cache").rglob("*.pickle"))


def test_errors_and_unreproducible_results_are_not_kept() -> None:
    class Result:
        def __init__(self, status: str, reproducible: bool = True) -> None:
            self.status, self.evidence = status, type("E", (), {"reproducible": reproducible})()
    assert keeps(Result("verified")) and keeps(Result("refuted"))
    assert not keeps(Result("error")) and not keeps(Result("consistent", reproducible=False))


def test_a_corrupt_entry_is_a_miss(tmp_path: Path) -> None:
    cache = Cache.open(str(tmp_path), Options())
    key = cache.key("file", (0, "s"), (0, "c"), (0, {"eps": "1"}))
    cache.put(key, PointResult({"eps": "1"}, Status.VERIFIED, "holds"))
    assert cache.get(key).message == "holds"
    entry, = [p for p in tmp_path.rglob("*.pickle") if "manifests" not in p.parts]
    entry.write_bytes(b"not a pickle")
    assert cache.get(key) is None and (cache.hits, cache.misses) == (1, 1)


def test_a_corrupt_or_missing_manifest_is_a_miss(tmp_path: Path) -> None:
    """An entry is reused only with its manifest (what its check read) on disk, intact and true."""
    for damage in ("corrupt", "tampered", "missing"):
        cache = Cache.open(str(tmp_path / damage), Options())
        key = cache.key("file", (0, "s"), (0, "c"), (0, {"eps": "1"}))
        cache.put(key, PointResult({"eps": "1"}, Status.VERIFIED, "holds"))
        recorded, = (tmp_path / damage).rglob("manifests/*/*.pickle")
        if damage == "corrupt":
            recorded.write_bytes(b"not a pickle")
        elif damage == "tampered":  # a well-formed manifest that is not the one the entry names
            import pickle
            files, absent = pickle.loads(recorded.read_bytes())
            recorded.write_bytes(pickle.dumps((files[1:], absent)))
        else:
            recorded.unlink()
        cache = Cache.open(str(tmp_path / damage), Options())  # a new run: nothing validated yet
        assert cache.get(key) is None and (cache.hits, cache.misses) == (0, 1), damage


def test_the_key_holds_options_and_dpverify_sources(tmp_path: Path) -> None:
    assert Environment.of(Options()) == Environment.of(Options())
    assert Environment.of(Options(precision=40)) != Environment.of(Options())
    assert Environment.of(Options(proofs=False)) != Environment.of(Options())
    (tmp_path / "a.py").write_text("x = 1\n")
    before = source_digest(tmp_path)
    (tmp_path / "a.py").write_text("x = 2\n")  # a checkout's edit, the version unchanged
    assert source_digest(tmp_path) != before


def test_a_report_after_a_check_is_answered_by_the_cache(catalogue: Path) -> None:
    """The CI recipe: `dpverify check` (each file loaded in its worker) fills the cache, `dpverify
    report` (files loaded here, its specs shown) reads it: the keys agree between the two ways."""
    _check()
    log = Path("runs.log")
    log.unlink()
    result = CliRunner().invoke(main, ["report", "specs", "--out", "site", "--cache-dir", "cache"])
    assert result.exit_code == 0 and not log.exists(), result.output
    assert _reused(result.output) == (4, 4), result.output


DYNAMIC = textwrap.dedent("""
    import importlib
    from sympy import Rational
    import dpverify as dp

    helper = importlib.import_module("_dynamic")  # no import statement names it
    eps = dp.symbol("eps", positive=True)

    def NAME_mechanism(data, eps):
        return dp.randomized_response(data[0], eps * helper.KEEP)

    NAME = dp.spec(NAME_mechanism, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                   grid={eps: [1]}, claims=[dp.private(eps)], name="NAME")
""")


def test_a_helper_imported_dynamically_is_a_source_even_when_loaded_before(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The attack: two spec files import a helper through importlib; with a filter the files load in
    this process one after the other, so the second load adds nothing to sys.modules and no import
    statement names the helper. Its change must still recompute (and here refute) the second spec."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "_dynamic.py").write_text("KEEP = 1\n")
    for name in ("a_first", "b_second"):
        (tmp_path / "specs" / f"{name}.py").write_text(DYNAMIC.replace("NAME", name))
    args = ["check", "specs", "--claim", "private", "--cache-dir", "cache", "--json"]
    try:
        assert CliRunner().invoke(main, args).exit_code == 0
        (tmp_path / "specs" / "_dynamic.py").write_text("KEEP = 2\n")  # now 2 eps
        import sys
        sys.modules.pop("_dynamic", None)
        result = CliRunner().invoke(main, args)
        statuses = [s["claims"][0]["status"] for s in json.loads(result.output)["specs"]]
        assert result.exit_code == 1 and statuses == ["refuted", "refuted"], result.output
    finally:
        import sys
        sys.modules.pop("_dynamic", None)


# --- issue 21, item 3: what a verdict read is what its entry records ----------------------------



@pytest.fixture
def site_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory of installed distributions on sys.path (``site.addsitedir``: its ``.pth`` files
    are read), which dpverify counts as installed libraries like site-packages; the modules imported
    from under ``tmp_path`` are dropped afterwards."""
    import importlib
    import site

    import dpverify.cache as cache_module
    where = tmp_path / "site"
    where.mkdir()
    monkeypatch.setattr(sys, "path", list(sys.path))
    site.addsitedir(str(where))
    monkeypatch.setattr(cache_module, "_LIBRARIES", cache_module._LIBRARIES + (str(where.resolve()) + os.sep,))
    yield where
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]
    importlib.invalidate_caches()


def _install(site: Path, name: str, version: str, source: str) -> None:
    """A distribution as pip lays it out: the package and its ``.dist-info`` (RECORD left out)."""
    import shutil
    shutil.rmtree(site / name, ignore_errors=True)
    for old in site.glob(f"{name}-*.dist-info"):
        shutil.rmtree(old)
    (site / name).mkdir()
    (site / name / "__init__.py").write_text(source)
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    import importlib
    importlib.invalidate_caches()


LIBRARY_SPEC = textwrap.dedent("""
    from sympy import Rational
    import dpverify as dp
    import fakelib
    from _helper import LOG

    eps = dp.symbol("eps", positive=True)

    def NAME_mechanism(data, eps):
        with open(LOG, "a") as log:
            log.write("NAME\\n")
        return dp.randomized_response(data[0], eps * fakelib.FACTOR)

    NAME = dp.spec(NAME_mechanism, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                   grid={eps: [Rational(1, 2), 1]}, claims=[dp.private(eps)], name="NAME")
""")


def test_a_library_reinstalled_with_other_code_and_the_same_version_is_recomputed(catalogue: Path,
                                                                                  site_dir: Path) -> None:
    """Regression (issue 21, item 3a): an installed, non-editable library was keyed by its name and
    version only; reinstalled with other code under the same version, the old `proved` was served."""
    _install(site_dir, "fakelib", "1.0", "FACTOR = 1\n")
    (catalogue / "second.py").write_text(LIBRARY_SPEC.replace("NAME", "second"))
    code, output, ran = _check()
    assert code == 0 and ran == {"first", "second"}, output
    _install(site_dir, "fakelib", "1.0", "FACTOR = 2\n")  # same name, same version, other code
    code, output, ran = _check("--json")
    statuses = {s["name"]: [c["status"] for c in s["claims"]] for s in json.loads(output)["specs"]}
    assert code == 1 and ran == {"second"} and statuses == {"first": ["proved"], "second": ["refuted"]}, output


PACKAGE_SPEC = textwrap.dedent("""
    from sympy import Rational
    import dpverify as dp
    from _lib._model import factor

    eps = dp.symbol("eps", positive=True)

    def NAME_mechanism(data, eps):
        return dp.randomized_response(data[0], eps * factor())

    NAME = dp.spec(NAME_mechanism, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                   grid={eps: [1]}, claims=[dp.private(eps)], name="NAME")
""")


@pytest.mark.parametrize("selection", [["--claim", "private"], ["--spec", "b_second", "--claim", "private",
                                                                  "--point", "eps=1"]])
def test_a_helper_reached_by_a_relative_import_is_tracked_in_a_filtered_run(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch,
                                                                           selection: list[str]) -> None:
    """Regression (issue 21, item 3b): `_lib/_model.py` does `from ._helpers import KEEP`.  With a filter
    the files load here one after the other: the second load adds nothing to sys.modules, no import
    statement of it names `_lib._helpers` and KEEP (an int) names no module, so the helper was not in
    the second file's key, and its edit left the second spec's `proved` in place."""
    monkeypatch.chdir(tmp_path)
    lib = tmp_path / "specs" / "_lib"  # underscored: not spec files
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text("")
    (lib / "_model.py").write_text("from ._helpers import KEEP\n\n\ndef factor():\n    return KEEP\n")
    (lib / "_helpers.py").write_text("KEEP = 1\n")
    for name in ("a_first", "b_second"):
        (tmp_path / "specs" / f"{name}.py").write_text(PACKAGE_SPEC.replace("NAME", name))
    args = ["check", "specs", *selection, "--cache-dir", "cache", "--json"]

    def forget_lib() -> None:
        for name in [n for n in sys.modules if n == "_lib" or n.startswith("_lib.")]:
            del sys.modules[name]
    try:
        assert CliRunner().invoke(main, args).exit_code == 0
        forget_lib()
        (lib / "_helpers.py").write_text("KEEP = 2\n")  # now 2 eps
        result = CliRunner().invoke(main, args)
        statuses = {s["name"]: s["claims"][0]["status"] for s in json.loads(result.output)["specs"]}
        assert result.exit_code == 1 and set(statuses.values()) == {"refuted"} and "b_second" in statuses, \
            result.output
    finally:
        forget_lib()


def test_installing_an_unrelated_package_reuses_every_point(catalogue: Path, site_dir: Path) -> None:
    """Nothing a check read changed: every point is reused (the key once held every installed
    distribution's name, and any install emptied the cache)."""
    _check()
    _install(site_dir, "unrelated", "3.1", "VALUE = 1\n")
    code, output, ran = _check()
    assert code == 0 and ran == set() and _reused(output) == (4, 4), output


def test_a_library_reinstalled_with_the_same_code_is_reused(catalogue: Path, site_dir: Path) -> None:
    """The key is the content, not the file's dates: a reinstall of identical files reuses the points."""
    _install(site_dir, "fakelib", "1.0", "FACTOR = 1\n")
    (catalogue / "second.py").write_text(LIBRARY_SPEC.replace("NAME", "second"))
    _check()
    _install(site_dir, "fakelib", "1.0", "FACTOR = 1\n")
    code, output, ran = _check()
    assert code == 0 and ran == set() and _reused(output) == (4, 4), output


LAZY_SPEC = textwrap.dedent("""
    from sympy import Rational
    import dpverify as dp

    eps = dp.symbol("eps", positive=True)

    def NAME_mechanism(data, eps):
        import lazylib  # only while a point is checked, never at load
        return dp.randomized_response(data[0], eps * lazylib.FACTOR)

    NAME = dp.spec(NAME_mechanism, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                   grid={eps: [1]}, claims=[dp.private(eps)], name="NAME")
""")


def test_a_module_imported_only_while_checking_is_recorded(catalogue: Path, site_dir: Path) -> None:
    _install(site_dir, "lazylib", "0.1", "FACTOR = 1\n")
    (catalogue / "second.py").write_text(LAZY_SPEC.replace("NAME", "second"))
    assert _check()[0] == 0
    _install(site_dir, "lazylib", "0.1", "FACTOR = 2\n")
    code, output, _ = _check("--json")
    statuses = {s["name"]: s["claims"][0]["status"] for s in json.loads(output)["specs"]}
    assert code == 1 and statuses == {"first": "proved", "second": "refuted"}, output


FALLBACK_SPEC = textwrap.dedent("""
    from sympy import Rational
    import dpverify as dp
    try:
        from fastpath import FACTOR  # absent at first: the fallback below is what the check reads
    except ImportError:
        FACTOR = 1

    eps = dp.symbol("eps", positive=True)

    def NAME_mechanism(data, eps):
        return dp.randomized_response(data[0], eps * FACTOR)

    NAME = dp.spec(NAME_mechanism, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                   grid={eps: [1]}, claims=[dp.private(eps)], name="NAME")
""")


def test_an_import_that_failed_and_now_succeeds_recomputes(catalogue: Path, site_dir: Path) -> None:
    """No file the check read changed, but an import it tried and fell back from now finds a module."""
    (catalogue / "second.py").write_text(FALLBACK_SPEC.replace("NAME", "second"))
    assert _check()[0] == 0
    _install(site_dir, "fastpath", "1.0", "FACTOR = 2\n")
    code, output, _ = _check("--json")
    statuses = {s["name"]: s["claims"][0]["status"] for s in json.loads(output)["specs"]}
    assert code == 1 and statuses == {"first": "proved", "second": "refuted"}, output


def test_a_pinned_dependency_appearing_changes_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """gmpy2 changes mpmath's arithmetic when it is there: its absence is part of the key, and so is
    the version of every pinned dependency; an unrelated distribution is not."""
    monkeypatch.setattr(sys, "path", [str(tmp_path)] + sys.path)
    before = Environment.of(Options())
    (tmp_path / "unrelated-1.0.dist-info").mkdir()
    assert Environment.of(Options()) == before
    (tmp_path / "gmpy2-9.9.dist-info").mkdir()
    assert Environment.of(Options()) != before


def test_the_manifest_hashes_loaded_files_but_not_what_the_key_covers(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib
    import json as stdlib_module

    import sympy
    monkeypatch.setattr(sys, "path", [str(tmp_path)] + sys.path)
    (tmp_path / "probe_module_for_cache.py").write_text("X = 1\n")
    importlib.invalidate_caches()
    try:
        importlib.import_module("probe_module_for_cache")
        roots = Environment.of(Options()).covered
        files = loaded_files(roots)
        assert str((tmp_path / "probe_module_for_cache.py").resolve()) in files
        assert not {os.path.realpath(m.__file__) for m in (stdlib_module, sympy)} & files
        assert not any(f.startswith(str(Path(__file__).resolve().parents[1] / "dpverify")) for f in files)
        recorded = manifest(roots)
        assert recorded is not None and still_valid(recorded)
        (tmp_path / "probe_module_for_cache.py").write_text("X = 2\n")
        assert still_valid(recorded)  # within one run a file is read once
        forget()  # the next run
        assert not still_valid(recorded)
        (tmp_path / "probe_module_for_cache.py").write_text("X = 1\n")
        forget()
        assert still_valid(recorded)  # the content, not the file's dates
        (tmp_path / "probe_module_for_cache.py").unlink()
        forget()
        assert not still_valid(recorded)
    finally:
        sys.modules.pop("probe_module_for_cache", None)


# --- what a check read without importing it: the audit hook ("open", "ctypes.dlopen") ------------

READ_SPEC = textwrap.dedent("""
    import os, sys, sympy
    import dpverify as dp
    HERE = os.path.dirname(os.path.abspath(__file__))
    READ
    t = dp.symbol("t", positive=True)
    s = dp.spec(name="s", claims=[dp.identity(sympy.Integer(X) * t, t, id="c")])
""")

READS = {
    "spec_from_file_location": ("""
        import importlib.util
        _sp = importlib.util.spec_from_file_location("h_private_cached", os.path.join(HERE, "_helper.py"))
        _helper = importlib.util.module_from_spec(_sp); _sp.loader.exec_module(_helper)
        X = _helper.X""", "_helper.py", "X = 1\n", "X = 2\n"),
    "runpy.run_path": ("""
        import runpy
        X = runpy.run_path(os.path.join(HERE, "_helper.py"))["X"]""", "_helper.py", "X = 1\n", "X = 2\n"),
    "runpy.run_module": ("""
        import runpy
        sys.path.insert(0, HERE)
        X = runpy.run_module("_helper_run_module_cached")["X"]""",
                         "_helper_run_module_cached.py", "X = 1\n", "X = 2\n"),
    "a fallback on a module that failed": ("""
        try:
            from _fast_cached import X
        except ImportError:
            X = 1""", "_fast_cached.py", "from math import no_such_thing\nX = 2\n", "X = 2\n"),
    "a data file": ("""
        with open(os.path.join(HERE, "x.txt")) as handle:
            X = int(handle.read())""", "x.txt", "1\n", "2\n"),
}


def _read_run(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["check", "specs", "--cache-dir", "cache", *args])
    return result.exit_code, result.output


@pytest.mark.parametrize("how", sorted(READS))
def test_a_file_read_without_staying_in_sys_modules_recomputes(how: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A helper executed by importlib or runpy (not left in sys.modules), a module found but failing to
    import (``except ImportError`` fell back), a data file: the check read them, so their change
    recomputes the point (here: proved, then refuted) instead of reusing the proof."""
    read, name, before, after = READS[how]
    monkeypatch.chdir(tmp_path)
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / name).write_text(before)
    (specs / "s.py").write_text(READ_SPEC.replace("READ", textwrap.dedent(read).strip()))
    code, output = _read_run([])
    assert code == 0, output
    code, output = _read_run([])
    assert code == 0 and _reused(output) == (1, 1), output
    (specs / name).write_text(after)
    code, output = _read_run([])
    assert code == 1 and _reused(output)[0] == 0, output  # recomputed: refuted
    assert _read_run(["--no-cache"])[0] == 1


def test_a_library_ctypes_loads_beside_the_spec_recomputes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``ctypes.CDLL`` of a library beside the spec (not on sys.path once the spec is loaded): rebuilt
    with other code, the point is recomputed."""
    import shutil
    import subprocess
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler")
    monkeypatch.chdir(tmp_path)
    specs = tmp_path / "specs"
    specs.mkdir()

    def build(value: int) -> None:
        (tmp_path / "v.c").write_text(f"int val(void) {{ return {value}; }}\n")
        made = subprocess.run([compiler, "-shared", "-fPIC", "-o", str(tmp_path / "libv.new"), str(tmp_path / "v.c")],
                              capture_output=True)
        if made.returncode:
            pytest.skip(f"the C compiler cannot build a shared library: {made.stderr.decode()[:200]}")
        os.replace(tmp_path / "libv.new", specs / "libv.so")
    build(1)
    (specs / "s.py").write_text(READ_SPEC.replace("READ", 'import ctypes\nX = ctypes.CDLL(os.path.join(HERE, "libv.so")).val()'))
    code, output = _read_run([])
    assert code == 0, output
    code, output = _read_run([])
    assert code == 0 and _reused(output) == (1, 1), output
    build(2)
    code, output = _read_run([])
    assert code == 1 and _reused(output)[0] == 0, output  # recomputed: refuted
    assert _read_run(["--no-cache"])[0] == 1


def test_an_opened_path_is_recorded_where_the_system_opened_it(tmp_path) -> None:
    """Found by review: ``lnk/../flag`` behind a symlinked directory was recorded lexically (abspath: the
    wrong file), and a regular file under /dev/shm was skipped with /dev's devices."""
    from dpverify import cache as cache_module
    target = tmp_path / "other" / "sub"
    target.mkdir(parents=True)
    (tmp_path / "other" / "flag").write_text("1")
    (tmp_path / "lnk").symlink_to(target)
    was = cache_module._recording[0]
    cache_module._recording[0] = True
    try:
        cache_module._audit("open", (str(tmp_path / "lnk" / ".." / "flag"), "r", 0))
    finally:
        cache_module._recording[0] = was
    assert str(tmp_path / "other" / "flag") in cache_module._opened
    shm = Path("/dev/shm")
    if shm.is_dir():
        probe = shm / f"dpverify-cache-test-{os.getpid()}"
        probe.write_text("1")
        try:
            assert cache_module._read_file(str(probe)) == str(probe)
        finally:
            probe.unlink()
