"""The one exception family for misuse of dpverify.

A refuted claim is a *result*, never an exception.  Exceptions are raised for
misuse (a malformed spec, a wrong argument) and for backend failures.  Every
:class:`SpecError` names what is wrong, the value it had, and how to fix it;
the loader adds the file and line where the spec author can make the change.
Calls of DSL functions that Python itself refuses (a missing or misspelt keyword)
become SpecErrors too, through :func:`call_error` and the notes of :func:`call_help`.
"""
from __future__ import annotations

import contextlib
import contextvars
import difflib
import inspect
import re
import os
import traceback
from collections.abc import Callable, Iterable, Iterator
from types import FrameType, ModuleType, TracebackType
from typing import Any, Optional, TypeVar

_OWN = os.path.dirname(os.path.abspath(__file__)) + os.sep
_JOURNAL: contextvars.ContextVar[Optional[list]] = contextvars.ContextVar("dpverify_errors", default=None)


class DpverifyError(Exception):
    """Root of every exception dpverify raises on purpose.  Each one made while a :func:`journal` is
    open is noted in it (see there)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        noted = _JOURNAL.get()
        if noted is not None:
            noted.append(self)


class Journal:
    """dpverify's errors made while a program runs, to find the one the program caught and went on from.

    A refusal raised into the program's code (``math.log(u)`` of an instrumented uniform,
    arithmetic the engine cannot do with a noisy value, a request to rerun with exact parameters)
    means the run cannot be read.  A program that catches it (``except Exception: return 0``)
    would otherwise go on and be judged on a behaviour that is not its own: a refusal turned into
    a false ``proved``.  An error that passed through a frame outside dpverify (the program's code,
    or a library it calls) and did not end the run was swallowed there.
    """

    def __init__(self) -> None:
        self.errors: list[DpverifyError] = []

    def swallowed(self, ending: Optional[BaseException] = None) -> Optional[DpverifyError]:
        """The first error that reached code outside dpverify, other than ``ending`` (the exception
        that ended the run, if any), or None."""
        for error in self.errors:
            if error is ending:
                continue
            for frame, _ in traceback.walk_tb(error.__traceback__):
                if not os.path.abspath(frame.f_code.co_filename).startswith(_OWN):
                    return error
        return None


@contextlib.contextmanager
def journal() -> Iterator[Journal]:
    """Note every :class:`DpverifyError` made inside the block (nested journals each keep their own)."""
    opened = Journal()
    token = _JOURNAL.set(opened.errors)
    try:
        yield opened
    finally:
        _JOURNAL.reset(token)


class SpecError(DpverifyError):
    """A spec (or an argument inside one) is invalid.

    ``problem`` says what is wrong, ``fix`` what to change; ``file`` and
    ``line`` are filled in by whoever knows them (usually the loader, from the
    traceback of the spec file).
    """

    def __init__(self, problem: str, fix: str | None = None, *,
                 file: str | None = None, line: int | None = None) -> None:
        self.problem = problem
        self.fix = fix
        self.file = file
        self.line = line
        super().__init__(self.render())

    def render(self) -> str:
        where = ""
        if self.file:
            where = f"{self.file}:{self.line}: " if self.line else f"{self.file}: "
        text = f"{where}{self.problem}"
        if self.fix:
            text += f"\n  fix: {self.fix}"
        return text

    def __str__(self) -> str:
        return self.render()

    def located(self, file: str, line: int | None) -> "SpecError":
        """Return this error with a location, unless it already has one."""
        if self.file is None:
            self.file, self.line = file, line
        return self


class CannotFollow(SpecError):
    """The exact audit (``dp.implementation``) cannot follow what the code does with its randomness
    (``math.log(u)``, ``rng.gumbel()``, ``u * v``...): not a mistake in the spec, a limit of exact
    enumeration.  A claim about such an implementation falls back to the statistical audit
    (:mod:`dpverify.checks.audit.fallback`); ``file`` and ``line`` locate the refused code."""


class NotRational(DpverifyError):
    """A probability is not a rational function of the exponentials of the symbols.

    ``symbols`` names the parameters that appear outside exponentials, if that
    is the reason (a proof may then keep them fixed and try again).
    """

    def __init__(self, message: str, symbols: frozenset = frozenset()) -> None:
        super().__init__(message)
        self.symbols = symbols


class EnumerationTooLarge(SpecError):
    """The universe would take too much work to enumerate; refused up front."""


def line_in(tb: TracebackType | None, filename: str) -> int | None:
    """The innermost line of ``filename`` in a traceback, or None."""
    line = None
    for frame, lineno in traceback.walk_tb(tb):
        if frame.f_code.co_filename == filename:
            line = lineno
    return line


def close_names(name: str, names: Iterable[str]) -> list[str]:
    """The names closest to a misspelt one (``privat`` -> ``private``), best first."""
    return difflib.get_close_matches(name, list(names), n=3, cutoff=0.6)


F = TypeVar("F", bound=Callable[..., Any])


def call_help(example: str, **keywords: str) -> Callable[[F], F]:
    """Attach to a DSL function what a refused call of it shows: an example call and, per
    keyword, what it means and which values it takes.  The function itself is not wrapped
    (its signature, doctests and speed are unchanged); :func:`call_error` reads the notes."""
    def attach(fn: F) -> F:
        fn.call_example = example  # type: ignore[attr-defined]
        fn.call_notes = keywords  # type: ignore[attr-defined]
        return fn
    return attach


def signature_text(fn: Callable[..., Any]) -> str:
    """``dp.name(a, b=0, *, c)``: the call form of a DSL function, without annotations."""
    sig = inspect.signature(fn)
    bare = sig.replace(parameters=[p.replace(annotation=p.empty) for p in sig.parameters.values()],
                       return_annotation=sig.empty)
    return f"dp.{fn.__name__}{bare}"


_MISSING = re.compile(r"missing \d+ required (positional|keyword-only) arguments?: (.*)$")
_UNKNOWN = re.compile(r"got an unexpected keyword argument '(\w+)'$")
_TWICE = re.compile(r"got multiple values for argument '(\w+)'$")


def call_error(fn: Callable[..., Any], exc: TypeError) -> SpecError | None:
    """The SpecError for a call of the DSL function ``fn`` that Python refused -- a missing,
    unknown or doubled argument, or too many positional ones -- naming the function and the
    argument, suggesting the closest keyword, with the signature and an example.  None when
    ``exc`` is not Python's refusal of a call of ``fn``."""
    text = str(exc)
    prefix = f"{fn.__name__}() "
    if not text.startswith(prefix):
        return None
    rest = text[len(prefix):]
    params = inspect.signature(fn).parameters
    notes: dict[str, str] = getattr(fn, "call_notes", {})
    hints: list[str] = []
    if (match := _MISSING.match(rest)):
        missing = re.findall(r"'(\w+)'", match.group(2))
        kind = "keyword argument" if match.group(1) == "keyword-only" else "argument"
        plural = "s" if len(missing) > 1 else ""
        shown = ", ".join(f"{m}=" if match.group(1) == "keyword-only" else m for m in missing)
        problem = f"dp.{fn.__name__}() is missing its {kind}{plural} {shown}"
        hints = [f"{m}= is {notes[m]}" for m in missing if m in notes]
    elif (match := _UNKNOWN.match(rest)):
        unknown = match.group(1)
        close = close_names(unknown, [p for p in params if params[p].kind is not inspect.Parameter.VAR_POSITIONAL])
        problem = f"dp.{fn.__name__}() has no keyword argument {unknown}="
        if close:
            problem += f" (did you mean {close[0]}=?)"
            hints = [f"write {close[0]}="]
    elif (match := _TWICE.match(rest)):
        problem = f"dp.{fn.__name__}() got {match.group(1)} twice (by position and as {match.group(1)}=)"
    elif rest.startswith("takes "):
        problem = f"dp.{fn.__name__}() {rest}"
        keyword_only = [p for p in params if params[p].kind is inspect.Parameter.KEYWORD_ONLY]
        if keyword_only:
            hints = [f"pass {', '.join(k + '=' for k in keyword_only)} by keyword"]
    else:
        problem = f"dp.{fn.__name__}(): {rest}"
    example = getattr(fn, "call_example", None)
    hints.append(f"the call is {signature_text(fn)}" + (f", e.g. {example}" if example else ""))
    return SpecError(problem, "; ".join(hints))


def dsl_misuse(exc: BaseException) -> SpecError | None:
    """What to write instead, when ``exc`` is plain Python refusing the DSL in a spec's code: a
    call of a dpverify function with a missing, unknown or doubled argument
    (``dp.universe([0, 1], n=2)``), or a name that dpverify does not have (``dp.privat``).
    None for any other error, and for one raised inside dpverify (the refusing frame, the
    innermost, must be the spec's).  The caller adds the file and line."""
    frames = list(traceback.walk_tb(exc.__traceback__))
    while frames and frames[-1][0].f_code.co_name == "__getattr__" and _inside_dpverify(frames[-1][0].f_code.co_filename):
        frames.pop()  # a dpverify module's own __getattr__ (dp.strategies) refusing the name for the spec
    if not frames or _inside_dpverify(frames[-1][0].f_code.co_filename):
        return None
    if isinstance(exc, AttributeError) and isinstance(getattr(exc, "obj", None), ModuleType) and exc.name:
        module = exc.obj  # type: ignore[attr-defined]
        if module.__name__.split(".")[0] != "dpverify":
            return None
        public = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
        prefix = "dp" if module.__name__ == "dpverify" else module.__name__
        close = [f"{prefix}.{c}" for c in close_names(exc.name, public)]
        if close:
            return SpecError(f"{prefix}.{exc.name} does not exist (did you mean {close[0]}?)", f"write {close[0]}")
        return SpecError(f"{prefix}.{exc.name} does not exist",
                         "use one of the names in dpverify.__all__ (docs/reference/api.md lists them)")
    if isinstance(exc, TypeError):
        called = _called_function(str(exc).split("(", 1)[0], frames[-1][0])
        return call_error(called, exc) if called is not None else None
    return None


def _inside_dpverify(filename: str) -> bool:
    return os.path.abspath(filename).startswith(os.path.dirname(os.path.abspath(__file__)) + os.sep)


def _called_function(name: str, frame: FrameType) -> Callable[..., Any] | None:
    """The dpverify function ``name`` as the code of ``frame`` reaches it: bound to the name
    itself (``from dpverify import universe``) or on an imported dpverify module (``dp.universe``);
    None when the name is the spec's own function or no dpverify module has it."""
    own = frame.f_locals.get(name, frame.f_globals.get(name))
    candidates = [own] if own is not None else [
        getattr(v, name, None) for v in frame.f_globals.values()
        if isinstance(v, ModuleType) and v.__name__.split(".")[0] == "dpverify"]
    for fn in candidates:
        if inspect.isfunction(fn) and fn.__module__.split(".")[0] == "dpverify":
            return fn
    return None
