"""Loading spec files: import them as code and collect the specs they declare.

Spec files are Python and trusted like test files.  Anything that goes wrong
while importing one becomes a single :class:`SpecError` naming the file, the
line and the fix -- never a raw traceback.
"""
from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

from .dsl.spec import Spec
from .errors import SpecError, line_in


def discover(paths: list[str]) -> list[Path]:
    """Spec files under the given paths: ``*.py`` files, skipping ``_*.py`` and ``conftest.py``."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(p for p in sorted(path.rglob("*.py"))
                         if not p.name.startswith("_") and p.name != "conftest.py")
        elif path.is_file():
            found.append(path)
        else:
            raise SpecError(f"{raw}: no such file or directory", "give a spec file or a directory of spec files")
    return found


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
            importer.loader.exec_module(module)
        finally:
            sys.path.remove(str(path.resolve().parent))
    except SyntaxError as err:
        raise SpecError(f"syntax error: {err.msg}", "fix the Python syntax", file=display, line=err.lineno) from None
    except SpecError as err:
        raise err.located(display, line_in(err.__traceback__, filename)) from None
    except Exception as exc:  # an error in the spec's own code
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
