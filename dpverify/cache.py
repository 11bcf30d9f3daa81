"""The verdict cache: a point's result, kept on disk, reused while nothing it depends on changed.

``dpverify check`` (and ``report``) look every (claim, point) up before checking it, so that
re-running an unchanged catalogue in CI costs the loading of its spec files, not their checks.
A result is reused only under a key that names everything it was computed from:

* the spec file's bytes, and those of every module of the user's own code it imported (helpers
  beside it such as ``spec/accounting/_reported.py``, a package of the project, an audited library
  installed in editable mode): found from the import statements of the file and of those
  modules, recursively, and from the modules the load added to ``sys.modules`` -- every such
  module whose file is not part of the standard library or an installed distribution
  (:func:`user_sources`);
* the path as the user gave it (messages name it);
* the spec's name and position in the file, the claim's id and position, the point's values and
  position;
* what changes verdicts (:meth:`Environment.of`): the check options (precision, ``--max-work``,
  ``--proofs``); the dpverify version AND a digest of dpverify's own source files (a checkout
  changes code without changing the version); the Python version and machine; the names and
  versions of every installed distribution on ``sys.path`` (the libraries a spec audits or calls,
  numpy, sympy, z3, mpmath: any upgrade recomputes everything).

Only deterministic results are kept (:func:`keeps`): never an ``error`` (it may come from the
environment, e.g. the wall-clock safety net), never a statistical audit whose samples are not
reproducible (a ``dp.black_box(..., unseeded=True)``: its numbers differ from run to run, so its
verdict is recomputed every time).  Entries are pickles written atomically (one file per point,
so that worker processes write side by side); an entry that does not read back is a miss.  The
cache is a directory (``.dpverify_cache/`` in the working directory unless ``--cache-dir`` or
``DPVERIFY_CACHE_DIR`` says otherwise) holding a ``.gitignore`` of ``*`` and a ``CACHEDIR.TAG``;
deleting it is always safe.  Like ``.pytest_cache``, it is the user's own: pickles are only
read from a directory the user (or their CI) wrote.
"""
from __future__ import annotations

import hashlib
import os
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Optional

from .options import Options
from .version import __version__

DEFAULT_DIR = ".dpverify_cache"
ENV_VARIABLE = "DPVERIFY_CACHE_DIR"
FORMAT = "v1"  # bump when what an entry holds changes shape

_PACKAGE = Path(__file__).resolve().parent
_LIBRARIES = tuple(sorted({str(Path(p).resolve()) + os.sep for key in ("stdlib", "platstdlib", "purelib", "platlib")
                           if (p := sysconfig.get_paths().get(key))}))


def default_dir() -> str:
    """``$DPVERIFY_CACHE_DIR`` when set (CI), else ``.dpverify_cache`` in the working directory."""
    return os.environ.get(ENV_VARIABLE) or DEFAULT_DIR


def _digest(*parts: Any) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else repr(part).encode())
        h.update(b"\0")
    return h.hexdigest()


def source_digest(root: Path = _PACKAGE) -> str:
    """A digest of dpverify's own source files (every ``*.py`` under the package, by relative path)."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def distributions_digest() -> str:
    """A digest of the installed distributions' names and versions: the ``*.dist-info`` and
    ``*.egg-info`` entries of every directory on ``sys.path`` (a directory listing, not the
    slower metadata parse; the names carry the versions)."""
    names: list[str] = []
    for entry in sys.path:
        try:
            names += [f"{entry}/{n}" for n in os.listdir(entry or ".") if n.endswith((".dist-info", ".egg-info"))]
        except OSError:
            continue
    return _digest(sorted(names))


@dataclass(frozen=True)
class Environment:
    """What every key of one run shares: options, dpverify, Python and the installed libraries."""

    digest: str

    @classmethod
    def of(cls, options: Options) -> "Environment":
        import platform
        return cls(_digest(FORMAT, options.precision, options.max_work, options.proofs, __version__, source_digest(),
                           sys.version, platform.machine(), distributions_digest()))


def is_user_file(filename: Optional[str]) -> bool:
    """A module file of the user's own code: not the standard library, not an installed package,
    not dpverify (whose sources are in :class:`Environment`)."""
    if not filename or not filename.endswith(".py"):
        return False
    real = str(Path(filename).resolve())
    return not real.startswith(_LIBRARIES) and not real.startswith(str(_PACKAGE) + os.sep)


def imported_names(source: str) -> set[str]:
    """Every module name an ``import`` statement of ``source`` names (and its parent packages)."""
    import ast
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in found:
            parts = name.split(".")
            names.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return names


def _referenced(module: ModuleType, modules: dict[str, Any]) -> list[Any]:
    """The modules the spec module's globals are or come from (``import x``, ``from x import f``,
    and what ``importlib.import_module`` returned into a global): a third view of its imports."""
    found = []
    for value in list(vars(module).values()):
        if isinstance(value, ModuleType):
            found.append(value)
            continue
        name = getattr(value, "__module__", None)
        if isinstance(name, str) and name != module.__name__ and name in modules:
            found.append(modules[name])
    return found


def user_sources(spec_file: Path, module: ModuleType, added: set[str]) -> list[Path]:
    """The files of the user's own modules a loaded spec file depends on, sorted: those its import
    statements name (recursively through theirs), those its load added to ``sys.modules``
    (``added``) and those its globals are or come from, whenever their file is user code
    (:func:`is_user_file`).  The statements find a helper another spec file imported first; the
    other two an import the statements hide (``importlib.import_module``)."""
    modules = dict(sys.modules)
    found: dict[str, Path] = {}
    todo = [spec_file]
    todo += [Path(m.__file__) for name in added if (m := modules.get(name)) is not None
             and is_user_file(getattr(m, "__file__", None))]
    todo += [Path(m.__file__) for m in _referenced(module, modules) if is_user_file(getattr(m, "__file__", None))]
    seen: set[str] = set()
    while todo:
        path = todo.pop()
        key = str(path.resolve())
        if key in seen:
            continue
        seen.add(key)
        found[key] = path.resolve()
        try:
            source = path.read_text()
        except (OSError, UnicodeDecodeError):
            continue
        for name in imported_names(source):
            dep = modules.get(name)
            filename = getattr(dep, "__file__", None)
            if dep is not None and dep is not module and is_user_file(filename):
                todo.append(Path(filename))
    found.pop(str(spec_file.resolve()), None)
    return sorted(found.values())


def file_digest(path: Path, sources: list[Path]) -> str:
    """The digest of a spec file as given (its path) and the bytes of it and of its user sources."""
    parts: list[Any] = [str(path), path.read_bytes()]
    for source in sources:
        try:
            parts += [str(source), source.read_bytes()]
        except OSError:
            parts += [str(source), b"<unreadable>"]
    return _digest(*parts)


def keeps(result: Any) -> bool:
    """Whether a point's result is deterministic, hence kept: not an ``error``, not an audit whose
    samples are not reproducible (an unseeded black box)."""
    if getattr(result.status, "value", result.status) == "error":
        return False
    return getattr(result.evidence, "reproducible", True) is not False


@dataclass
class Cache:
    """The verdict cache in ``directory``, for one run's :class:`Environment`.  ``hits`` and
    ``misses`` count this process's look-ups."""

    directory: Path
    environment: Environment
    hits: int = 0
    misses: int = 0
    stored: int = 0

    @classmethod
    def open(cls, directory: str, options: Options) -> "Cache":
        return cls(Path(directory), Environment.of(options))

    def key(self, file: str, spec: tuple[int, str], claim: tuple[int, str], point: tuple[int, dict[str, str]]) -> str:
        """The key of one (spec, claim, point) of a spec file whose :func:`file_digest` is ``file``."""
        return _digest(self.environment.digest, file, spec, claim, point[0], sorted(point[1].items()))

    def counts(self) -> tuple[int, int, int]:
        """(hits, misses, stored) so far."""
        return self.hits, self.misses, self.stored

    def count(self, hits: int, misses: int, stored: int) -> None:
        """Add a worker process's counts to these."""
        self.hits, self.misses, self.stored = self.hits + hits, self.misses + misses, self.stored + stored

    def _path(self, key: str) -> Path:
        return self.directory / FORMAT / key[:2] / f"{key}.pickle"

    def get(self, key: str) -> Optional[Any]:
        """The result kept under ``key``, or None (absent, or unreadable: then recomputed)."""
        import pickle
        try:
            with open(self._path(key), "rb") as handle:
                result = pickle.load(handle)
        except Exception:  # absent, truncated, from another Python: a miss, never an error
            self.misses += 1
            return None
        self.hits += 1
        return result

    def put(self, key: str, result: Any) -> None:
        """Keep ``result`` under ``key`` when it is deterministic (:func:`keeps`); a cache that cannot
        be written (read-only, full disk) is skipped silently: the run's verdicts do not depend on it."""
        if not keeps(result):
            return
        import pickle
        import tempfile
        path = self._path(key)
        try:
            self._prepare()
            path.parent.mkdir(parents=True, exist_ok=True)
            data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, path)
            self.stored += 1
        except Exception:
            return

    def _prepare(self) -> None:
        """The directory, with a ``.gitignore`` of ``*`` and a ``CACHEDIR.TAG`` (backup tools skip it)."""
        if (self.directory / "CACHEDIR.TAG").exists():
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / ".gitignore").write_text("# created by dpverify: the verdict cache\n*\n")
        (self.directory / "CACHEDIR.TAG").write_text(
            "Signature: 8a477f597d28d172789f06886806bc55\n# dpverify's verdict cache: safe to delete\n")


__all__ = ["Cache", "DEFAULT_DIR", "ENV_VARIABLE", "Environment", "default_dir", "file_digest", "imported_names",
           "is_user_file", "keeps", "source_digest", "user_sources"]
