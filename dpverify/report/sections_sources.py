"""Every source against the exact profile: one plot and one table per composition of a spec.

A ``profile`` claim may name its ``source`` -- the accountant, library or paper that stated its deltas
(``dp.profile(..., source="dp_accounting PLDAccountant")``).  When a spec has such claims, its page
opens with this comparison: for each grid point and composition (T runs, and the programs of
``also=``), the exact delta_T(eps) of the worst ordered pair drawn as a curve (upper ends of certified
enclosures, the claims' curves merged) with every source's reported (eps, delta) points in its own
colour, under-reports (violations) marked; and one table of every reported point against the exact
value: the ratio and what it means (:mod:`.sections_accounting`).  Built by :func:`.model._page`.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

import matplotlib

from ..dsl.claims import Claim
from ..evidence import ProfileEvidence, ProfileRow
from ..results import ClaimResult, PointResult
from .blocks import Block, Figure, Heading, Table
from .plots import _BASE_RC, COLOURS, _figure, delta_against_epsilon, steady
from .section_parts import Context, params, short, to_float
from .sections_accounting import exact_of, ratio, verdict

Reported = tuple[str, PointResult, ProfileEvidence]  # (source, point, its evidence)


def declared_source(decl: Optional[Claim]) -> Optional[str]:
    """The declared source of a claim's deltas, if it names one."""
    return getattr(decl, "source", None)


def groups(claims: Sequence[tuple[ClaimResult, Optional[Claim]]]) -> dict[tuple[str, int, str], list[Reported]]:
    """The sourced profile points of a spec, by (grid point, T, the programs composed besides)."""
    out: dict[tuple[str, int, str], list[Reported]] = {}
    for result, decl in claims:
        source = declared_source(decl)
        if result.kind != "profile" or source is None:
            continue
        others = " + ".join(f"{getattr(p, '__name__', 'program')} x {t}" for p, t in getattr(decl, "also", ()))
        for point in result.points:
            if isinstance(point.evidence, ProfileEvidence) and point.evidence.rows:
                out.setdefault((params(point), point.evidence.times, others), []).append((source, point, point.evidence))
    return out


def compared(claims: Sequence[tuple[ClaimResult, Optional[Claim]]], ctx: Context) -> list[Block]:
    """The page's comparison blocks: a heading, a figure and a table per composition; nothing when no
    profile claim of the spec names its source."""
    out: list[Block] = []
    for (label, times, others), reported in groups(claims).items():
        title = f"{times}-fold" + (f" + {others}" if others else "") + (f", {label}" if label != "–" else "")
        out.append(Heading(title))
        name = ctx.name(f"sources-T{times}", "profile")
        out.append(Figure(plot(reported, times, name),
                          f"Exact δ_{times}(ε) of the worst ordered pair (line) against every source's reported "
                          "(ε, δ); a red triangle marks an under-report (below the exact δ: a violation).", name))
        rows = sorted(((to_float(r.epsilon) or 0.0, source, r) for source, _, e in reported for r in e.rows or []),
                      key=lambda row: (row[0], row[1]))
        out.append(Table(("source", "ε", "exact δ_T(ε)", "reported δ", "reported / exact", "verdict"),
                         tuple((source, short(r.epsilon), short(exact_of(r)), short(r.claimed), ratio(r), verdict(r))
                               for _, source, r in rows),
                         (1, 2, 3, 4),
                         "Each source's reported δ against the exact δ_T(ε): a ratio of at least 1 is slack, below 1 "
                         "an under-report (a violation, refuted with its witness in the claim's section). Enclosed "
                         "exact values show their upper end; the ratio is taken to the end that decides."))
    return out


def _exact_curve(reported: Sequence[Reported]) -> list[tuple[float, float]]:
    """The claims' achieved curves and exact values at the reported eps, merged (one mechanism, one T:
    the same function; at an eps met twice the larger upper end is kept); zeros left out (log scale)."""
    merged: dict[float, float] = {}
    for _, _, evidence in reported:
        curve = evidence.curve or {}
        points = list(zip(curve.get("epsilon", []), curve.get("delta", [])))
        points += [(to_float(r.epsilon), to_float(exact_of(r))) for r in evidence.rows or []]
        for x, y in points:
            if x is not None and y:
                x, y = steady(x), steady(y)
                merged[x] = max(y, merged.get(x, 0.0))
    return sorted(merged.items())


def plot(reported: Sequence[Reported], times: int, key: str) -> str:
    """The exact curve as a line, each source's points in its colour, under-reports ringed in red."""
    with matplotlib.rc_context(_BASE_RC):
        fig = _figure(5.2, 3.6)
        ax = fig.add_subplot()
        curve = _exact_curve(reported)
        ax.plot([x for x, _ in curve], [y for _, y in curve], color="#222222", linewidth=1.3,
                label=f"exact δ_{times}(ε)")
        sources = list(dict.fromkeys(source for source, _, _ in reported))
        for index, source in enumerate(sources):
            rows = [r for s, _, e in reported if s == source for r in e.rows or []]
            marks = sorted((steady(to_float(r.epsilon)), steady(to_float(r.claimed)), verdict(r)) for r in rows)
            shown = [(x, y, v) for x, y, v in marks if x is not None and y]
            ax.scatter([x for x, _, _ in shown], [y for _, y, _ in shown], color=f"C{index % 10}", marker="o",
                       s=22, zorder=3, label=source)
            bad = [(x, y) for x, y, v in shown if v == "under-report"]
            if bad:
                ax.scatter([x for x, _ in bad], [y for _, y in bad], facecolors="none", edgecolors=COLOURS["refuted"],
                           marker="v", s=90, linewidths=1.2, zorder=4)
            zeros = [(x, v) for x, y, v in marks if x is not None and y == 0]
            if zeros:  # a reported delta of 0 cannot sit on a log axis: drawn on the lower edge
                edge = ax.get_xaxis_transform()
                ax.scatter([x for x, _ in zeros], [0] * len(zeros), color=f"C{index % 10}", marker="v", s=40,
                           zorder=4, transform=edge, clip_on=False, label=f"{source}: δ = 0")
                bad = [x for x, v in zeros if v == "under-report"]
                ax.scatter(bad, [0] * len(bad), facecolors="none", edgecolors=COLOURS["refuted"], marker="v", s=90,
                           linewidths=1.2, zorder=4, transform=edge, clip_on=False)
        if any(v == "under-report" for s, _, e in reported for v in (verdict(r) for r in e.rows or [])):
            ax.scatter([], [], facecolors="none", edgecolors=COLOURS["refuted"], marker="v", s=90,
                       label="under-report (violation)")
        return delta_against_epsilon(fig, ax, "δ (log scale)", key)


__all__ = ["compared", "declared_source", "groups", "plot"]
