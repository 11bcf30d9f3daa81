"""Diagnostics through the :mod:`logging` module: which path decided a verdict, budgets used.

Every module logs to its own ``logging.getLogger(__name__)``, all under the ``dpverify`` logger;
nothing is shown unless asked for.  The command line calls :func:`configure` with its ``-v``/``-q``
count: ``-q`` shows errors only, the default warnings, ``-v`` one INFO line per decided point
(spec, claim, point, status, method, seconds), ``-vv`` DEBUG details such as the z3 resources each
query spent.  Lines go to stderr, so ``--json`` on stdout stays one clean document.
"""
from __future__ import annotations

import logging
import sys

FORMAT = "dpverify: %(levelname)s %(name)s: %(message)s"
"""One line per record, the logger's name saying which module spoke."""

LEVELS = {-1: logging.ERROR, 0: logging.WARNING, 1: logging.INFO, 2: logging.DEBUG}
"""Verbosity (``-q`` is -1, each ``-v`` adds 1) to the lowest level shown."""


class _Stderr(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time of the record (a captured or redirected
    stderr included), like :data:`logging.lastResort`."""

    @property
    def stream(self):  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass


def level(verbosity: int) -> int:
    """The lowest level shown at ``verbosity`` (clamped to -1..2)."""
    return LEVELS[max(-1, min(2, verbosity))]


def configure(verbosity: int) -> None:
    """Show the ``dpverify`` loggers' records of at least :func:`level` (``verbosity``) on stderr.

    Calling it again replaces the previous setting (one handler, never duplicated lines)."""
    logger = logging.getLogger("dpverify")
    for handler in [h for h in logger.handlers if isinstance(h, _Stderr)]:
        logger.removeHandler(handler)
    handler = _Stderr()
    handler.setFormatter(logging.Formatter(FORMAT))
    logger.addHandler(handler)
    logger.setLevel(level(verbosity))
