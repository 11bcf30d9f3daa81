"""The one door from the DSL to the engine: what a primitive may ask of whoever runs the program.

The DSL describes and imports nothing from the engine.  A primitive still has
to reach the run in progress (to draw a branch, to add a noise variable) and
the engine's exact numbers (a symbolic parameter's expression), so it asks an
:class:`Engine` -- a protocol declared here and implemented by
:mod:`dpverify.engine.program.port`, which installs itself with :func:`install` when
the engine package is imported (``import dpverify`` always does).

Outside a mechanism run the engine refuses a draw with :func:`outside_run`'s
error, as it always has.
"""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any, Optional, Protocol

from ..errors import SpecError


class NotDerivable(Exception):
    """The engine cannot derive a query's sensitivity (the reason is the message)."""


class Engine(Protocol):
    """The operations the primitives need from the engine; nothing else crosses the layer."""

    def running(self) -> bool:
        """Whether a mechanism run is in progress (a primitive may draw)."""

    def draw(self, name: str, make: Callable[[], Any]) -> Any:
        """The value of the current branch of the law ``make()`` describes (a :mod:`.laws` description).

        ``make`` is called only when the run has not met this draw before; outside
        a run the primitive ``name`` is refused (:func:`outside_run`).
        """

    def noise(self, kind: str, centre: Any, scale: Any, site: tuple) -> Any:
        """A new noisy value centre + noise of ``kind`` ('laplace', 'exponential', 'gaussian') in the run.

        ``centre`` and ``scale`` are exact (see :meth:`exact`); ``site`` is the
        (file, line) of the mechanism's call.
        """

    def exact(self, value: Any, what: str, fn: str) -> Any:
        """``value`` as an exact number (Fraction, or a sympy number or expression), or a SpecError
        naming the argument ``what`` of the primitive ``fn``."""

    def exact_math(self, fn: Callable[[Any], Any], value: Any) -> Any:
        """``fn`` (sympy.exp, log, sqrt) applied exactly to a program's value, in every reading."""

    def runtime_sensitivity(self, query: Any, candidates: tuple, relation: Any, size: int) -> tuple[Any, str]:
        """(Delta, a note saying how it was derived) for a query or score on datasets of ``size``
        records; raises :class:`NotDerivable` when it cannot be derived."""


_installed: Optional[Engine] = None
_local = threading.local()  # a reading that runs a program by itself (the structural one) overrides it here


def install(implementation: Engine) -> None:
    """Make ``implementation`` the engine the primitives ask (the engine package does this when imported)."""
    global _installed
    _installed = implementation


def engine() -> Engine:
    """The installed engine; a clear error when none is (the DSL used without ``import dpverify``)."""
    found = getattr(_local, "override", None) or _installed
    if found is None:
        raise SpecError("no engine is installed to run the primitives",
                        "import dpverify (which installs its engine) before running a mechanism")
    return found


@contextlib.contextmanager
def reading(implementation: Engine) -> Iterator[None]:
    """Within the block (on this thread), primitives ask ``implementation`` instead of the installed
    engine: another reading of the program (e.g. :mod:`dpverify.engine.structural`) runs it."""
    before = getattr(_local, "override", None)
    _local.override = implementation
    try:
        yield
    finally:
        _local.override = before


def outside_run(name: str) -> SpecError:
    """The error for a primitive called while no mechanism run is in progress."""
    return SpecError(f"{name}() was called outside a mechanism run",
                     "call primitives only inside the mechanism function that a spec names; "
                     "run it with `dpverify check`")


__all__ = ["Engine", "NotDerivable", "engine", "install", "outside_run", "reading"]
