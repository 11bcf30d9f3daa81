"""The run in progress: which runner enumerates the program that is executing now.

A context variable, in its own module so that the values a program meets
(:mod:`.parameter`'s symbolic parameters, :mod:`.tails`' lumped tails) can ask
"am I inside a run?" without importing the runner (:mod:`.enumerate`), which
imports them.  The runner sets it around each enumeration; the fast reading
(:mod:`.fastlaw`) sets it to its own minimal runner.
"""
from __future__ import annotations

import contextvars
from typing import Any, Optional

ACTIVE: contextvars.ContextVar[Optional[Any]] = contextvars.ContextVar("dpverify_runner", default=None)
"""The runner enumerating the current program (an :class:`.enumerate.Runner`, or the fast reading's)."""


def active() -> Optional[Any]:
    """The runner enumerating the current program, or None outside a run."""
    return ACTIVE.get()


__all__ = ["ACTIVE", "active"]
