"""The wall-clock safety net around z3, apart from z3 itself.

Verdicts are decided by counted budgets (z3's ``rlimit``), never by time; a far wall-clock limit
only keeps a run from hanging, and when it fires nothing is decided.  This module holds that
limit and its exception without importing z3, so code that only catches the exception (a proof
in one variable, which never calls z3) does not pay z3's import at start-up.
"""
from __future__ import annotations

SAFETY_SECONDS = 300
"""A far wall-clock safety net on every z3 call; the deciding budget is z3's ``rlimit`` (a count)."""
SAFETY_MESSAGE = "a wall-clock safety limit fired (machine load?)"


class SafetyLimit(Exception):
    """A wall-clock safety net fired: the outcome depends on the machine, so nothing is decided."""


__all__ = ["SAFETY_MESSAGE", "SAFETY_SECONDS", "SafetyLimit"]
