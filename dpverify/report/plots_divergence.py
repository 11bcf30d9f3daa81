"""The Rényi curve of a divergence claim: D_alpha(X || X') of the worst pair against the order alpha.

Kept apart from :mod:`.plots` (whose helpers it uses) as it belongs to one claim family.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

import matplotlib

from .plots import _BASE_RC, COLOURS, _figure, _svg, steady


def renyi_curves(panels: Sequence[tuple[str, Any, Optional[float], Optional[float], str, str]], key: str) -> str:
    """One line per grid point: (label, DivergenceCurve, claimed, claim's order, kind, status).

    A ``renyi`` claim is a marker at (alpha, eps); a ``zcdp`` claim the line rho * alpha.
    """
    with matplotlib.rc_context(_BASE_RC):
        fig = _figure(4.6, 3.4)
        ax = fig.add_subplot()
        top = 0.0
        for index, (label, curve, claimed, alpha, kind, status) in enumerate(panels):
            points = [(steady(a), steady(d)) for a, d in zip(curve.alpha, curve.divergence) if d is not None]
            if not points:
                continue
            colour = f"C{index % 10}"
            ax.plot([a for a, _ in points], [d for _, d in points], color=colour, linewidth=1.2,
                    label=f"{label}: D_α({curve.x} ‖ {curve.x_prime})")
            top = max(top, max(d for _, d in points))
            if claimed is None:
                continue
            if kind == "zcdp":
                xs = [a for a, _ in points]
                ax.plot(xs, [claimed * a for a in xs], color=colour, linestyle="--", linewidth=0.9,
                        label=f"{label}: claimed ρα")
            elif alpha is not None:
                ax.scatter([alpha], [claimed], color=COLOURS.get(status, "#555555"), marker="_", s=200,
                           linewidths=2, zorder=3, label=f"{label}: claimed ε at α = {alpha:g}")
        ax.set_xscale("log")
        ax.set_xlabel("order α")
        ax.set_ylabel("D_α")
        ax.set_ylim(bottom=0, top=top * 1.3 if top > 0 else 1)
        ax.grid(True, linewidth=0.4, color="#dddddd")
        ax.legend(frameon=False, fontsize=6)
        fig.tight_layout()
        return _svg(fig, key)
