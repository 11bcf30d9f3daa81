"""The one exception family for misuse of dpverify.

A refuted claim is a *result*, never an exception.  Exceptions are raised for
misuse (a malformed spec, a wrong argument) and for backend failures.  Every
:class:`SpecError` names what is wrong, the value it had, and how to fix it;
the loader adds the file and line where the spec author can make the change.
"""
from __future__ import annotations

import traceback
from types import TracebackType


class DpverifyError(Exception):
    """Root of every exception dpverify raises on purpose."""


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
