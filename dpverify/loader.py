"""Loading spec files: import them as code and collect the specs they declare.

Spec files are Python and trusted like test files.  Anything that goes wrong
while importing one becomes a single :class:`SpecError` naming the file, the
line and the fix -- never a raw traceback.  Plain Python errors about the DSL
say what to write: a DSL call Python refuses (a missing or misspelt keyword)
shows the signature, the closest keyword and an example; a misspelt ``dp.name``
the closest public names; a float points at the line of its literal.
"""
from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import NoReturn

from .cache import imported_names, is_user_file
from .dsl.params import FloatRefused
from .engine.program.contract import SPEC_NAMES
from .dsl.spec import Spec
from .errors import SpecError, dsl_misuse, line_in


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


def _float_literal(node: ast.AST) -> object:
    """The number a literal node writes (``0.1``, ``-0.5``, ``1/3``), or None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _float_literal(node.operand)
        return -inner if isinstance(inner, (int, float)) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left, right = _float_literal(node.left), _float_literal(node.right)
        return left / right if isinstance(left, int) and isinstance(right, int) and right else None
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    return None


def _literal_line(filename: str, line: int | None, value: float) -> int | None:
    """The line of the float literal equal to ``value`` in the statement of the spec file that
    holds ``line`` (a statement may span lines: a grid below its ``dp.spec(``), or else
    anywhere in the file when exactly one line has one."""
    try:
        tree = ast.parse(Path(filename).read_text())
    except (OSError, SyntaxError, ValueError):
        return None
    found = [n.lineno for n in ast.walk(tree) if isinstance(n, (ast.Constant, ast.BinOp, ast.UnaryOp))
             and type(_float_literal(n)) is float and _float_literal(n) == value]
    holding = [s for s in ast.walk(tree) if isinstance(s, ast.stmt) and line is not None
               and s.lineno <= line <= (s.end_lineno or s.lineno)]
    if holding:
        inner = min(holding, key=lambda s: (s.end_lineno or s.lineno) - s.lineno)
        inside = sorted(n for n in found if inner.lineno <= n <= (inner.end_lineno or inner.lineno))
        if inside:
            return inside[0]
    return found[0] if len(set(found)) == 1 else None


def libraries(paths: list[Path]) -> list[str]:
    """The installed libraries the spec files at ``paths`` import by statement (top-level names, in
    order): neither user code beside them nor dpverify.  Importing them once in the process that
    forks the workers spares each worker its own import of, e.g., scipy."""
    found: list[str] = []
    for path in paths:
        try:
            names = imported_names(path.read_text())
        except (OSError, UnicodeDecodeError):
            continue
        for name in sorted(n for n in names if "." not in n):
            if name in found or name == "dpverify" or (path.parent / f"{name}.py").exists() \
                    or (path.parent / name).is_dir():
                continue
            try:
                where = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                continue
            if where is not None and where.origin and not is_user_file(where.origin) \
                    and where.origin not in ("built-in", "frozen"):
                found.append(name)
    return found


_loaded: dict[str, tuple[ModuleType, set[str]]] = {}
"""Each loaded spec file's module and the modules its load added to ``sys.modules``, by its real path."""


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
        module.__dict__.update(SPEC_NAMES)  # type(), id(), hash() as spec code may use them (engine/program/contract.py)
        sys.modules[module_name] = module
        sys.path.insert(0, str(path.resolve().parent))  # like a script: helper modules beside it import
        before = set(sys.modules)
        try:
            with _exit_raises():
                importer.loader.exec_module(module)
        finally:
            sys.path.remove(str(path.resolve().parent))
        _loaded[filename] = (module, set(sys.modules) - before)
    except SyntaxError as err:
        raise SpecError(f"syntax error: {err.msg}", "fix the Python syntax", file=display, line=err.lineno) from None
    except FloatRefused as err:
        line = line_in(err.__traceback__, filename)
        raise err.located(display, _literal_line(filename, line, err.value) or line) from None
    except SpecError as err:
        raise err.located(display, line_in(err.__traceback__, filename)) from None
    except SystemExit as exc:  # sys.exit(), exit() or os._exit() at import: it must not end the whole run
        raise SpecError(f"the spec file exits while it is imported (SystemExit: {exc.code!r})",
                        "remove the exit, or guard script code with `if __name__ == \"__main__\":`",
                        file=display, line=line_in(exc.__traceback__, filename)) from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # an error in the spec's own code (any kind but the user's Ctrl-C)
        explained = dsl_misuse(exc)
        if explained is not None:
            raise explained.located(display, line_in(exc.__traceback__, filename)) from None
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
