"""The version of dpverify, in the lowest layer so that any module (reports, the CLI) may name it.

The root package re-exports it as ``dpverify.__version__``; modules inside
dpverify import it from here, never from the root facade.
"""
from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
