"""The verdict cache (dpverify/cache.py): an unchanged point is reused, a changed one never is.

Each mechanism here appends its spec's name to a log file every time it runs, so a test sees
which specs were recomputed, not only what the CLI's summary line says.
"""
from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpverify.cache import Cache, Environment, file_digest, keeps, source_digest, user_sources
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
def catalogue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two spec files (first, second) importing a helper module beside them, in the working directory."""
    root = tmp_path / "specs"
    root.mkdir()
    (root / "_helper.py").write_text(f"LOG = {str(tmp_path / 'runs.log')!r}\nKEEP = 1\n")
    _write(root, "first")
    _write(root, "second")
    monkeypatch.chdir(tmp_path)
    return root


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
    entry, = tmp_path.rglob("*.pickle")
    entry.write_bytes(b"not a pickle")
    assert cache.get(key) is None and (cache.hits, cache.misses) == (1, 1)


def test_the_key_holds_options_and_dpverify_sources(tmp_path: Path) -> None:
    assert Environment.of(Options()) == Environment.of(Options())
    assert Environment.of(Options(precision=40)) != Environment.of(Options())
    assert Environment.of(Options(proofs=False)) != Environment.of(Options())
    (tmp_path / "a.py").write_text("x = 1\n")
    before = source_digest(tmp_path)
    (tmp_path / "a.py").write_text("x = 2\n")  # a checkout's edit, the version unchanged
    assert source_digest(tmp_path) != before


def test_a_helper_imported_earlier_by_another_spec_is_still_a_source(catalogue: Path) -> None:
    """Both spec files import _helper; the second load adds nothing to sys.modules, yet the import
    statement names it, so it is part of the second file's key."""
    from dpverify.loader import load, sources
    load(catalogue / "first.py")
    load(catalogue / "second.py")
    assert [p.name for p in sources(catalogue / "second.py")] == ["_helper.py"]
    digest = file_digest(catalogue / "second.py", sources(catalogue / "second.py"))
    (catalogue / "_helper.py").write_text((catalogue / "_helper.py").read_text() + "\n")
    assert file_digest(catalogue / "second.py", sources(catalogue / "second.py")) != digest
    import sys
    sys.modules.pop("_helper", None)


def test_user_sources_skip_libraries_and_dpverify(catalogue: Path) -> None:
    import types
    module = types.ModuleType("m")
    found = user_sources(catalogue / "first.py", module, {"sympy", "dpverify.cli", "json"})
    assert found == []  # _helper is not loaded in this process: nothing else counts as user code


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
