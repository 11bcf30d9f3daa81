"""Privacy profiles (``profile`` claims) as text: the terminal table's columns and the pytest plugin's
lines.  Kept apart from :mod:`.sections_profile` so that text surfaces do not import matplotlib."""
from __future__ import annotations

from typing import Any, Optional

from ..evidence import ProfileEvidence


def _short(value: Optional[str]) -> str:
    if value is None:
        return "-"
    try:
        return f"{float(value):.6g}"
    except ValueError:
        return value


def achieved(row: Any) -> str:
    """A row's achieved delta: the exact value, or "[lower, upper]" for certified bounds."""
    if row.achieved is not None:
        return _short(row.achieved)
    return f"[{_short(row.achieved_lower)}, {_short(row.achieved_upper)}]"


def levels(evidence: ProfileEvidence) -> tuple[str, str]:
    """The terminal table's claimed and achieved columns: delta at the first claimed eps."""
    if not evidence.rows:
        return "-", "-"
    row = evidence.rows[0]
    return "δ " + _short(row.claimed), "δ " + achieved(row)


def lines(evidence: ProfileEvidence) -> list[str]:
    """Plain-text lines for the pytest plugin's failure output: one per claimed eps."""
    return [f"{evidence.times}-fold: claimed delta({r.epsilon}) <= {r.claimed}, achieved {achieved(r)}"
            for r in evidence.rows or []]


__all__ = ["achieved", "levels", "lines"]
