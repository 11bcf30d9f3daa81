"""The verdict cache: a point's result, kept on disk, reused while nothing it read changed.

``dpverify check`` (and ``report``) look every (claim, point) up before checking it, so that
re-running an unchanged catalogue in CI costs the loading of its spec files, not their checks.
A stale verdict is a wrong verdict: a result is reused only when everything it was computed from
is as it was.  That is, in two parts:

**The key** (:meth:`Cache.key`) names what every run can compute before checking anything:

* the spec file: its path as the user gave it (messages name it) and its bytes;
* the spec's name and position in the file, the claim's id and position, the point's values and
  position;
* the run's :class:`Environment`: the check options (precision, ``--max-work``, ``--proofs``);
  dpverify's version AND a digest of dpverify's own source files (a checkout changes code without
  changing the version); the Python version and machine; and the installed versions (or absence) of
  the dependencies dpverify itself imports, the ones that decide verdicts (:data:`PINNED`: sympy,
  mpmath, z3-solver, numpy, python-flint, gmpy2, ... -- installing gmpy2 changes mpmath's
  arithmetic, so its absence counts too).  Their files are covered by these versions and not
  hashed; nothing else installed is in the key, so installing an unrelated package reuses
  everything.

**The entry's manifest** (:func:`manifest`) names what the check *read*, recorded in the process
that checked the point, right after its check (so a module imported lazily while checking counts):

* every module file in ``sys.modules`` -- the spec file, helpers beside it however imported
  (absolutely, relatively, through ``importlib``), packages of the project, installed libraries
  (editable or not) -- and, on Linux, every shared library mapped into the process from a
  directory on ``sys.path`` (a library's native code loaded by ``ctypes``), except the files the
  key covers: the standard library (the Python version), dpverify (its source digest) and the
  :data:`PINNED` dependencies (their versions); each file with the SHA-256 of its *content*;
* every file the process opened for reading and every library ``ctypes`` loaded since the cache was
  opened (:func:`record_reads`: an audit hook on the ``open`` and ``ctypes.dlopen`` events, paused
  while the cache does its own reading): data files the spec reads, helpers executed by ``runpy`` or
  ``importlib`` and left out of ``sys.modules``, a module found but failing to import (``try:
  from fast import X / except ImportError``), a library beside the spec; a ``__pycache__/*.pyc``
  stands for its source, directories and ``/proc``, ``/sys``, ``/dev`` are left out, and so are the
  files the key covers (as above);
* every module name the import system looked for and did not find (a ``try: import fast`` that
  fell back), with the path searched (:class:`_AbsentRecorder`).

A worker process inherits the modules its parent loaded (libraries imported for other spec files,
other spec files in a filtered run): they are recorded too.  Counting more than the check read
only costs a recomputation when one of them changes; counting less would serve a stale verdict.

A look-up (:meth:`Cache.get`) re-validates the manifest: every recorded file hashed again (missing
or different: a miss), every absent name searched again (found: a miss).  Manifests are kept once
each, content-addressed, beside the entries; each is validated once per process.  Hashing is of
content, each file once per run (a worker hands the digests it computed back to its parent, and the
workers forked after inherit them); across runs, a process reuses a digest by (path, device, inode,
size, mtime, ctime) only for a file whose status is older than the digest by 2 s, as a change within a
timestamp's granularity would not show (:func:`content_digest`); nothing of this is kept on disk.
A file edited *while* a run checks the points that read it may be recorded with its new content or
go unnoticed until the next run (run again after editing).

Only deterministic results are kept (:func:`keeps`): never an ``error`` (it may come from the
environment, e.g. the wall-clock safety net), never a statistical audit whose samples are not
reproducible (a ``dp.black_box(..., unseeded=True)``: its numbers differ from run to run, so its
verdict is recomputed every time).  Entries are pickles written atomically (one file per point,
so that worker processes write side by side); an entry that does not read back is a miss.  The
cache is a directory (``.dpverify_cache/`` in the working directory unless ``--cache-dir`` or
``DPVERIFY_CACHE_DIR`` says otherwise) holding a ``.gitignore`` of ``*`` and a ``CACHEDIR.TAG``;
deleting it is always safe.  Like ``.pytest_cache``, it is the user's own: pickles are only
read from a directory the user (or their CI) wrote.  What no manifest sees: environment variables,
a directory's listing (a namespace package gaining an ``__init__.py``; a new module, earlier on
``sys.path``, shadowing the recorded one), code run on a remote Dask worker only (``--scheduler``):
run with ``--no-cache`` (the reference: every point checked) after changing those.  ``tests/test_cache_fuzz.py`` edits every kind of loaded file at random and compares the
cached run with ``--no-cache``.
"""
from __future__ import annotations

import hashlib
import os
import stat
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .options import Options
from .version import __version__

DEFAULT_DIR = ".dpverify_cache"
ENV_VARIABLE = "DPVERIFY_CACHE_DIR"
FORMAT = "v2"  # bump when what an entry holds, or what a key or manifest means, changes

PINNED: dict[str, tuple[str, ...]] = {
    "sympy": ("sympy",), "mpmath": ("mpmath",), "z3_solver": ("z3",), "numpy": ("numpy", "numpy.libs"),
    "python_flint": ("flint", "python_flint.libs"), "gmpy2": ("gmpy2", "gmpy2.libs"),
    "click": ("click",), "rich": ("rich",), "jinja2": ("jinja2",),
    "matplotlib": ("matplotlib", "mpl_toolkits", "pylab", "matplotlib.libs"),
    "hypothesis": ("hypothesis", "_hypothesis_pytestplugin", "_hypothesis_ftz_detector", "_hypothesis_globals"),
}
"""dpverify's own dependencies (pyproject's ``dependencies``, and gmpy2, which mpmath and sympy use
when it is there), by normalized distribution name, with the top-level names their files sit under:
the key holds their versions, so their files are not hashed.  Every other installed file a check
loads is hashed by content."""

_PACKAGE = Path(__file__).resolve().parent
_LIBRARIES = tuple(sorted({str(Path(p).resolve()) + os.sep for key in ("stdlib", "platstdlib", "purelib", "platlib")
                           if (p := sysconfig.get_paths().get(key))}))
_STDLIB = tuple(sorted({form(p) + os.sep for key in ("stdlib", "platstdlib") if (p := sysconfig.get_paths().get(key))
                        for form in (os.path.abspath, os.path.realpath)}))
_OWN = tuple(sorted({str(_PACKAGE) + os.sep, os.path.abspath(os.path.dirname(__file__)) + os.sep}))


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


def _normalized(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def pinned_distributions() -> tuple[list[tuple[str, str]], tuple[str, ...]]:
    """The :data:`PINNED` distributions installed on ``sys.path``: their ``*.dist-info`` (or
    ``*.egg-info``) entries as (directory, entry name: it carries the version), and the paths their
    files sit under (``<directory>/<top-level name>``, the directory as on ``sys.path`` and resolved).
    A directory listing per ``sys.path`` entry, not the slower metadata parse."""
    found: set[tuple[str, str]] = set()
    roots: list[str] = []
    for entry in dict.fromkeys(os.path.abspath(e or ".") for e in sys.path if isinstance(e, str)):
        try:
            names = os.listdir(entry)
        except OSError:
            continue
        real = os.path.realpath(entry)
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            project = _normalized(name.rsplit(".", 1)[0].split("-", 1)[0])
            if project in PINNED:
                found.add((real, name))
                roots += [os.path.join(where, top) for top in PINNED[project] for where in (entry, real)]
    return sorted(found), tuple(sorted(set(roots)))


@dataclass(frozen=True)
class Environment:
    """What every key of one run shares: options, dpverify, Python and the pinned dependencies;
    ``covered`` the paths under which a file is covered by those (not hashed)."""

    digest: str
    covered: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def of(cls, options: Options) -> "Environment":
        import platform
        pinned, roots = pinned_distributions()
        return cls(_digest(FORMAT, options.precision, options.max_work, options.proofs, __version__, source_digest(),
                           sys.version, sys.implementation.cache_tag, platform.machine(), pinned), roots)


def is_user_file(filename: Optional[str]) -> bool:
    """A module file of the user's own code: not the standard library, not an installed package,
    not dpverify.  (:func:`dpverify.loader.libraries` prefetches the others; the cache hashes every
    loaded file but the ones :class:`Environment` covers, user code or not.)"""
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


# ---------------------------------------------------------------------------------------------
# What a check read: the loaded files, their contents, the names looked for and not found.

RACY_NS = 2_000_000_000
"""A digest is reused for a file whose status changed at least this long (2 s) before it was
computed; a file changed later, or within a timestamp's granularity of it, is hashed again."""

_hashes: dict[tuple, tuple[Optional[str], int]] = {}
"""Content digests computed in this process, with when, by (path, device, inode, size, mtime_ns,
ctime_ns): any change of a file's content changes its ctime (which no program can set back)."""
_learned: dict[tuple, tuple[Optional[str], int]] = {}
"""The ones this process computed itself since it was forked (handed back to its parent)."""
_settled: dict[str, Optional[str]] = {}
"""This run's digest of each file, by path: a run reads each file once (this process, its parent
before the fork, or a worker that handed it back), so the workers do not stat every library again."""
_real: dict[str, str] = {}
_covered: dict[str, bool] = {}
_validated: dict[str, bool] = {}
"""Manifests validated (or found stale) in this run, by their digest."""
_absent: set[tuple[str, tuple[str, ...]]] = set()
"""(module name, the path it was searched on) for every import that found nothing."""
_last: list[Any] = [None, None]
"""The last manifest this process computed, with what it was computed from."""


def _after_fork_in_child() -> None:
    _learned.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def forget() -> None:
    """Forget the validations and paths of an earlier run (a long-lived process runs again); the
    content digests stay, each reused only while its file's status is unchanged and was so well
    before it was computed (:data:`RACY_NS`)."""
    _real.clear()
    _regular.clear()
    _covered.clear()
    _settled.clear()
    _validated.clear()
    _last[:] = [None, None]


def content_digest(path: str) -> Optional[str]:
    """The SHA-256 of the file at ``path``, None when it is not a regular file one can read: read once
    per run (:data:`_settled`, forgotten by :func:`forget`), and remembered in this process by the file's (path, device, inode, size, mtime, ctime), and reused
    only when that status is older than the digest by :data:`RACY_NS` (a file changed within a
    timestamp's granularity of its hashing would show the same status: the "racy git" problem)."""
    import time
    if path in _settled:
        return _settled[path]
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    signature = (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    known = _hashes.get(signature)
    if known is not None and st.st_ctime_ns + RACY_NS < known[1] and st.st_mtime_ns + RACY_NS < known[1]:
        _settled[path] = known[0]
        return known[0]
    when = time.time_ns()
    try:
        with open(path, "rb") as handle:
            if hasattr(hashlib, "file_digest"):
                found: Optional[str] = hashlib.file_digest(handle, "sha256").hexdigest()
            else:  # Python 3.10
                h = hashlib.sha256()
                for block in iter(lambda: handle.read(1 << 20), b""):
                    h.update(block)
                found = h.hexdigest()
    except OSError:
        found = None
    _hashes[signature] = _learned[signature] = (found, when)
    _settled[path] = found
    return found


def learned() -> dict[tuple, tuple[Optional[str], int]]:
    """The digests this process computed since it was forked (and forgets that it did)."""
    found = dict(_learned)
    _learned.clear()
    return found


def learn(digests: dict[tuple, tuple[Optional[str], int]]) -> None:
    """Digests a worker computed in this run: the workers forked after this inherit them."""
    _hashes.update(digests)
    for signature, (found, _) in digests.items():
        _settled.setdefault(signature[0], found)


def _absolute(path: str) -> str:
    """``path`` made absolute and normal (no ``..`` can lead a prefix test astray); not resolved:
    every prefix it is tested against is there as given and resolved, and its content is read
    through the links anyway."""
    found = _real.get(path)
    if found is None:
        found = _real[path] = os.path.abspath(path)
    return found


def _is_covered(real: str, roots: tuple[str, ...]) -> bool:
    """Whether the key covers the file at (absolute path) ``real``: the standard library, dpverify or
    a :data:`PINNED` distribution's files."""
    key = real
    found = _covered.get(key)
    if found is not None:
        return found
    found = False
    for stdlib in _STDLIB:
        if real.startswith(stdlib):
            rest = real[len(stdlib):].split(os.sep)
            found = not ({"site-packages", "dist-packages"} & set(rest))
            break
    if not found and real.startswith(_OWN):
        found = True
    if not found:
        for root in roots:
            if real.startswith(root):
                rest = real[len(root):]
                if rest.startswith(os.sep) or (rest.startswith(".") and os.sep not in rest):
                    found = True
                    break
    _covered[key] = found
    return found


_opened: set[str] = set()
"""Every file opened for reading (absolute path) while :data:`_recording` (the ``open`` audit event:
``open()``, ``io.open_code`` -- the import system and ``runpy`` read sources through it --, ``os.open``)."""
_dlopened: set[str] = set()
"""Every library ``ctypes`` loaded while :data:`_recording` (the ``ctypes.dlopen`` event): a path
(absolute) or a bare name the dynamic loader searched for."""
_recording = [False]
_hooked = [False]
_WRITE = ("w", "a", "x")


def _audit(event: str, args: tuple) -> None:
    """The audit hook (:func:`record_reads`): cheap unless recording and the event is one it keeps."""
    if not _recording[0]:
        return
    if event == "open":
        try:
            path, mode, flags = args
            if isinstance(path, int):
                return
            if isinstance(mode, str):
                if "+" not in mode and any(c in mode for c in _WRITE):
                    return
            elif isinstance(flags, int) and flags & os.O_ACCMODE == os.O_WRONLY:
                return
            _opened.add(os.path.realpath(os.fsdecode(os.fspath(path))))  # not abspath: lnk/../f
        except Exception:
            pass
    elif event == "ctypes.dlopen":
        try:
            name = args[0]
            if name is None:
                return
            name = os.fsdecode(os.fspath(name))
            _dlopened.add(os.path.abspath(name) if os.sep in name else name)
        except Exception:
            pass


def record_reads() -> None:
    """Install the audit hook (once per process) and record from now on the files this process opens
    for reading and the libraries ``ctypes`` loads (paused inside the cache's own work: :class:`_Paused`).
    :meth:`Cache.open` calls it, after forgetting the files read before (a long-lived process's own)."""
    if not _hooked[0]:
        sys.addaudithook(_audit)
        _hooked[0] = True
    _recording[0] = True


class _Paused:
    """``with _Paused():`` the cache's own reads (entries, manifests, the files it hashes) are not recorded."""

    def __enter__(self) -> None:
        self.was = _recording[0]
        _recording[0] = False

    def __exit__(self, *exc: Any) -> None:
        _recording[0] = self.was


_PSEUDO = ("/proc/", "/sys/", "/dev/")
_FILES_UNDER_DEV = ("/dev/shm/",)  # a tmpfs of regular files: counted (found by review)
_regular: dict[str, Optional[str]] = {}


def _read_file(path: str) -> Optional[str]:
    """The file to hash for a path opened for reading: a cached ``__pycache__/*.pyc`` stands for its
    source (which decides whether it is used); None for what is no file one could change the content
    of (a directory, ``/proc``, a device)."""
    found = _regular.get(path, "")
    if found != "":
        return found
    found = path
    if path.startswith(_PSEUDO) and not path.startswith(_FILES_UNDER_DEV):
        found = None
    elif path.endswith(".pyc") and "__pycache__" in path:
        try:
            import importlib.util
            source = importlib.util.source_from_cache(path)
            if os.path.exists(source):
                found = source
        except ValueError:
            pass
    if found is not None:
        try:
            if not stat.S_ISREG(os.stat(found).st_mode):
                found = None
        except OSError:
            pass  # missing now (a temporary file): recorded as absent
    _regular[path] = found
    return found


def _module_file(module: Any) -> Optional[str]:
    filename = getattr(module, "__file__", None)
    if not isinstance(filename, str):
        return None
    archive = getattr(getattr(module, "__loader__", None), "archive", None)
    if isinstance(archive, str) and not os.path.isfile(filename):
        return archive  # imported from a zip: the archive is what it read
    return filename


def _mapped(directories: tuple[str, ...]) -> set[str]:
    """Files mapped into this process (Linux: shared libraries, also those ``ctypes`` loads) that
    sit under one of ``directories``."""
    found: set[str] = set()
    try:
        with open("/proc/self/maps") as handle:
            for line in handle:
                parts = line.split(None, 5)
                if len(parts) == 6 and parts[5].startswith("/"):
                    found.add(parts[5].rstrip("\n"))
    except OSError:
        return set()
    return {f for f in found if f.startswith(directories)}


def loaded_files(roots: tuple[str, ...]) -> set[str]:
    """The (absolute) paths of the files this process loaded that the key does not cover (``roots``: the
    pinned distributions' paths): module files in ``sys.modules`` and mapped shared libraries."""
    found: set[str] = set()
    for module in list(sys.modules.values()):
        filename = _module_file(module)
        if filename is None:
            continue
        real = _absolute(filename)
        if not _is_covered(real, roots):
            found.add(real)
    directories = tuple(sorted({form(e) + os.sep for e in sys.path if isinstance(e, str) and e
                                for form in (_absolute, os.path.realpath)}))
    libraries = tuple(sorted(_dlopened))
    bare = tuple(name for name in libraries if os.sep not in name)
    mapped = _mapped(directories + ("/",) if bare else directories)
    found.update(f for f in mapped if f.startswith(directories) and not _is_covered(f, roots))
    for name in bare:  # a library ctypes loaded by name: the file the dynamic loader mapped
        found.update(f for f in mapped if os.path.basename(f).startswith(name) and not _is_covered(f, roots))
    for path in list(_opened) + [name for name in libraries if os.sep in name]:
        read = _read_file(path)
        if read is not None and not _is_covered(read, roots):
            found.add(read)
    return found


class _AbsentRecorder:
    """Last on ``sys.meta_path``: asked only when the finders before it found nothing, it records the
    name and the path it was searched on.  A library that falls back when an import fails (``try:
    import fast``) computes differently once that module is installed: such an entry is then stale."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        try:
            after = sys.meta_path[sys.meta_path.index(self) + 1:]
        except ValueError:
            return None
        for finder in after:  # a finder appended after this one: it may still find the name
            try:
                if finder.find_spec(name, path, target) is not None:
                    return None
            except Exception:
                return None
        searched = path if path is not None else sys.path
        try:
            _absent.add((name, tuple(str(p) for p in searched)))
        except TypeError:
            pass
        return None


_RECORDER = _AbsentRecorder()


def record_absent_imports() -> None:
    """Put the :class:`_AbsentRecorder` last on ``sys.meta_path`` (once)."""
    if _RECORDER not in sys.meta_path:
        sys.meta_path.append(_RECORDER)


def _still_absent(name: str, path: tuple[str, ...]) -> bool:
    """Whether ``name`` is still not found where it was searched (any doubt: found)."""
    from importlib.machinery import PathFinder
    for finder in sys.meta_path:
        if finder is _RECORDER:
            continue
        try:
            if finder is PathFinder or isinstance(finder, type) and issubclass(finder, PathFinder):
                spec = finder.find_spec(name, list(path))
            else:
                spec = finder.find_spec(name, list(path) if "." in name else None)
        except Exception:
            return False
        if spec is not None:
            return False
    return True


Manifest = tuple[tuple[tuple[str, Optional[str]], ...], tuple[tuple[str, tuple[str, ...]], ...]]


def manifest(roots: tuple[str, ...]) -> Optional[Manifest]:
    """What a check in this process read, now: ((file, content digest), ...) and the absent
    names; None when a loaded file cannot be read (then nothing is kept)."""
    files = loaded_files(roots)
    absent = frozenset(_absent)
    seen = (frozenset(files), absent)
    if _last[0] == seen:
        return _last[1]
    digests = tuple(sorted((f, content_digest(f)) for f in files))
    result: Optional[Manifest] = (digests, tuple(sorted(absent)))
    if any(d is None and (os.path.lexists(f) or f.endswith(" (deleted)")) for f, d in digests):
        result = None  # a loaded file that exists but cannot be read, or was replaced: its content is unknown
    _last[:] = [seen, result]
    return result


def still_valid(recorded: Manifest) -> bool:
    """Whether every recorded file has the recorded content and every absent name is still absent."""
    files, absent = recorded
    return all(content_digest(f) == d for f, d in files) and all(_still_absent(n, p) for n, p in absent)


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
        """The cache for a new run: what an earlier run in this process validated is forgotten
        (:func:`forget`), and imports that find nothing are recorded from now on."""
        import importlib
        forget()
        importlib.invalidate_caches()
        record_absent_imports()
        _opened.clear()  # what this process read between runs (a caller's own files) is no check's
        record_reads()
        return cls(Path(directory), Environment.of(options))

    def spec_digest(self, path: Path) -> str:
        """The digest of a spec file as given (its path) and its bytes (OSError when unreadable)."""
        return _digest(str(path), path.read_bytes())

    def key(self, file: str, spec: tuple[int, str], claim: tuple[int, str], point: tuple[int, dict[str, str]]) -> str:
        """The key of one (spec, claim, point) of a spec file whose :meth:`spec_digest` is ``file``."""
        return _digest(self.environment.digest, file, spec, claim, point[0], sorted(point[1].items()))

    def counts(self) -> tuple[int, int, int]:
        """(hits, misses, stored) so far."""
        return self.hits, self.misses, self.stored

    def count(self, hits: int, misses: int, stored: int, digests: Optional[dict] = None) -> None:
        """Add a worker process's counts to these, and learn the content digests it computed."""
        self.hits, self.misses, self.stored = self.hits + hits, self.misses + misses, self.stored + stored
        if digests:
            learn(digests)

    def digests_learned(self) -> dict[tuple, tuple[Optional[str], int]]:
        """The content digests this (worker) process computed: its parent learns them (:meth:`count`)."""
        return learned()

    def prime(self) -> None:
        """Hash the files this process loaded (before forking workers: they inherit the digests)."""
        with _Paused():
            for path in loaded_files(self.environment.covered):
                content_digest(path)

    def _path(self, key: str) -> Path:
        return self.directory / FORMAT / key[:2] / f"{key}.pickle"

    def _manifest_path(self, digest: str) -> Path:
        return self.directory / FORMAT / "manifests" / digest[:2] / f"{digest}.pickle"

    def _valid(self, digest: Any) -> bool:
        """Whether the manifest ``digest`` names is on disk, intact and still true."""
        import pickle
        if not isinstance(digest, str):
            return False
        if digest not in _validated:
            try:
                with open(self._manifest_path(digest), "rb") as handle:
                    recorded = pickle.load(handle)
                _validated[digest] = _digest(recorded) == digest and still_valid(recorded)
            except Exception:  # absent, truncated: the entry is a miss
                _validated[digest] = False
        return _validated[digest]

    def get(self, key: str) -> Optional[Any]:
        """The result kept under ``key`` if what it read is unchanged, else None (absent,
        unreadable, or stale: then recomputed)."""
        with _Paused():
            return self._get(key)

    def _get(self, key: str) -> Optional[Any]:
        import pickle
        try:
            with open(self._path(key), "rb") as handle:
                digest, result = pickle.load(handle)
        except Exception:  # absent, truncated, from another Python: a miss, never an error
            self.misses += 1
            return None
        if not self._valid(digest):
            self.misses += 1
            return None
        self.hits += 1
        return result

    def put(self, key: str, result: Any) -> None:
        """Keep ``result`` under ``key`` with the manifest of what this process read (call it right
        after the check), when it is deterministic (:func:`keeps`) and every file read could be
        hashed; a cache that cannot be written (read-only, full disk) is skipped silently: the
        run's verdicts do not depend on it."""
        with _Paused():
            self._put(key, result)

    def _put(self, key: str, result: Any) -> None:
        if not keeps(result):
            return
        recorded = manifest(self.environment.covered)
        if recorded is None:
            return
        digest = _digest(recorded)
        try:
            self._prepare()
            where = self._manifest_path(digest)
            if not where.exists():
                self._write(where, recorded)
            self._write(self._path(key), (digest, result))
            _validated[digest] = True
            self.stored += 1
        except Exception:
            return

    @staticmethod
    def _write(path: Path, value: Any) -> None:
        import pickle
        import tempfile
        path.parent.mkdir(parents=True, exist_ok=True)
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)

    def _prepare(self) -> None:
        """The directory, with a ``.gitignore`` of ``*`` and a ``CACHEDIR.TAG`` (backup tools skip it)."""
        if (self.directory / "CACHEDIR.TAG").exists():
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / ".gitignore").write_text("# created by dpverify: the verdict cache\n*\n")
        (self.directory / "CACHEDIR.TAG").write_text(
            "Signature: 8a477f597d28d172789f06886806bc55\n# dpverify's verdict cache: safe to delete\n")


__all__ = ["Cache", "DEFAULT_DIR", "ENV_VARIABLE", "Environment", "PINNED", "content_digest", "default_dir", "forget",
           "imported_names", "is_user_file", "keeps", "loaded_files", "manifest", "pinned_distributions",
           "source_digest", "still_valid"]
