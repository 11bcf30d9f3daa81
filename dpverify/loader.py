"""Loading spec files: import them as code and collect the specs they declare.

Spec files are Python and trusted like test files.  Anything that goes wrong
while importing one becomes a single :class:`SpecError` naming the file, the
line and the fix -- never a raw traceback.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

from .dsl.spec import Spec
from .errors import SpecError, line_in


def is_spec_name(path: Path) -> bool:
    """Whether a ``*.py`` file found in a directory is a spec file (not ``_*.py``, not ``conftest.py``)."""
    return path.suffix == ".py" and not path.name.startswith("_") and path.name != "conftest.py"


def discover(paths: list[str]) -> list[Path]:
    """Spec files under the given paths: ``*.py`` files, skipping ``_*.py`` and ``conftest.py``.

    Every path must give at least one spec file: a missing path, a directory without spec
    files or a file that is not Python is a usage error (so a typo cannot pass a CI gate
    by checking nothing).
    """
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            inside = [p for p in sorted(path.rglob("*.py")) if is_spec_name(p)]
            if not inside:
                raise SpecError(f"{raw}: no spec files in this directory (spec files are *.py, "
                                "not _*.py or conftest.py)", "give a directory that holds spec files")
            found.extend(inside)
        elif path.is_file():
            if path.suffix != ".py":
                raise SpecError(f"{raw} is not a spec file (spec files end in .py)",
                                "give a spec file or a directory of spec files")
            found.append(path)
        else:
            raise SpecError(f"{raw}: no such file or directory", "give a spec file or a directory of spec files")
    unique: dict[Path, Path] = {}
    for path in found:  # a file given twice (`spec/ spec/rr.py`) is checked once
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


@contextlib.contextmanager
def _exit_raises() -> Iterator[None]:
    """While a spec file is imported, ``os._exit`` raises :class:`SystemExit` like ``sys.exit``:
    the import happens in the process that reports, and an exit there would end the run
    with the spec's exit code and no report."""
    real = os._exit

    def refuse(code: int) -> NoReturn:
        raise SystemExit(code)

    os._exit = refuse
    try:
        yield
    finally:
        os._exit = real


def load(path: Path) -> list[Spec]:
    """Import ``path`` and return its specs in the order they are defined."""
    filename = str(path.resolve())
    display = str(path)
    digest = hashlib.sha1(filename.encode()).hexdigest()[:12]
    module_name = f"dpverify_spec_{path.stem}_{digest}"
    try:
        importer = importlib.util.spec_from_file_location(module_name, filename)
        if importer is None or importer.loader is None:
            raise SpecError(f"{display} is not a Python file", "spec files end in .py")
        module = importlib.util.module_from_spec(importer)
        sys.modules[module_name] = module
        sys.path.insert(0, str(path.resolve().parent))  # like a script: helper modules beside it import
        try:
            with _exit_raises():
                importer.loader.exec_module(module)
        finally:
            sys.path.remove(str(path.resolve().parent))
    except SyntaxError as err:
        raise SpecError(f"syntax error: {err.msg}", "fix the Python syntax", file=display, line=err.lineno) from None
    except SpecError as err:
        raise err.located(display, line_in(err.__traceback__, filename)) from None
    except SystemExit as exc:  # sys.exit(), exit() or os._exit() at import: it must not end the whole run
        raise SpecError(f"the spec file exits while it is imported (SystemExit: {exc.code!r})",
                        "remove the exit, or guard script code with `if __name__ == \"__main__\":`",
                        file=display, line=line_in(exc.__traceback__, filename)) from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # an error in the spec's own code (any kind but the user's Ctrl-C)
        raise SpecError(f"the spec does not import: {type(exc).__name__}: {exc}",
                        "fix the error at this line (run `python " + display + "` to see it alone)",
                        file=display, line=line_in(exc.__traceback__, filename)) from None
    specs: list[Spec] = []
    for value in vars(module).values():
        candidates = value if isinstance(value, (list, tuple)) else [value]
        for item in candidates:
            if isinstance(item, Spec) and all(item is not s for s in specs):
                specs.append(item)
    if not specs:
        raise SpecError("the file declares no mechanism",
                        "define one at module level: spec = dp.spec(mechanism, universe=..., claims=[...])",
                        file=display)
    names = [s.name for s in specs]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise SpecError(f"two specs are named {duplicated[0]!r}", "pass name=... to dp.spec to tell them apart",
                        file=display)
    return specs
