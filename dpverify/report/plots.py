"""Plots for reports: matplotlib (Agg) figures rendered to deterministic inline SVG.

Every function returns an SVG document as a string, without the XML prolog, ready
to be written to a file or inlined in HTML.  Determinism (same data, same bytes):
``svg.fonttype`` is ``'none'`` (text stays text, no font files embedded), the metadata
carries no date and no creator version, and no id depends on a float.  matplotlib names
clip paths, markers and path collections by a hash of their floats (the axes' box in
display units, after layout arithmetic whose last bits vary with the CPU and the numpy
build): :func:`_svg` renames them in order of appearance, ``KIND-KEY-N``, with the figure's
``key`` so that ids never collide when several figures share a page (``svg.hashsalt``
stays set per key, so even an id missed here would not be random).  Data computed in
floats by other libraries (accountants' δ, divergences) are plotted through :func:`steady`,
which rounds them to :data:`DIGITS` significant digits: a last-bit difference between
machines does not move a coordinate.

Text in the SVG (tick labels that show a mechanism's outputs) is XML-escaped by
matplotlib's SVG writer.
"""
from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from typing import Any, Optional

import matplotlib

matplotlib.use("Agg", force=False)
from matplotlib.figure import Figure  # noqa: E402  (after choosing the backend)

COLOURS = {"proved": "#1a7f37", "verified": "#2da44e", "consistent": "#0969da", "refuted": "#cf222e", "unknown": "#bf8700",
           "error": "#8250df"}
_BASE_RC = {"svg.fonttype": "none", "font.family": "sans-serif", "font.size": 9.0,
            "axes.titlesize": 9.0, "axes.labelsize": 9.0, "path.simplify": False,
            "svg.image_inline": True}
MAX_BARS = 40  # a witness law with more outputs is plotted at its largest-probability outputs


DIGITS = 6  # significant digits of a plotted float from outside dpverify's exact arithmetic
_HASHED = re.compile(r'(id="|url\(#|href="#)((?:[a-z]|C[0-9a-f]+_[0-9a-f]+_)[0-9a-f]{10})(?=[")])')


def steady(value: Any, digits: int = DIGITS) -> Any:
    """A float rounded to ``digits`` significant digits (what a plot can show), so its last bits do not
    reach the SVG; None, infinities, NaN and non-floats pass unchanged."""
    if isinstance(value, float) and math.isfinite(value) and value != 0.0:
        return float(f"{value:.{digits}g}")
    return value


def steady_all(values: Sequence[Any], digits: int = DIGITS) -> list[Any]:
    return [steady(v, digits) for v in values]


def _renumber(text: str, key: str) -> str:
    """matplotlib's hashed ids (``p57460174fa``, ``m2d109e336b``, ``C0_0_4f3c…``) renamed
    ``KIND-KEY-N`` in order of first appearance, definitions and references alike."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", key)
    names: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        old = match.group(2)
        if old not in names:
            kind = "C" if old.startswith("C") and "_" in old else old[0]
            names[old] = f"{kind}-{safe}-{len(names) + 1}"
        return match.group(1) + names[old]
    return _HASHED.sub(rename, text)


def _svg(fig: Figure, key: str) -> str:
    """Serialise a figure to SVG with ids that depend on no float, and no date or version."""
    rc = dict(_BASE_RC, **{"svg.hashsalt": f"dpverify:{key}"})
    buffer = io.StringIO()
    with matplotlib.rc_context(rc):
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight",
                    pad_inches=0.05)
    text = buffer.getvalue()
    text = re.sub(r"^<\?xml[^>]*\?>\s*", "", text)
    text = re.sub(r"^<!DOCTYPE[^>]*>\s*", "", text)
    return _renumber(text, key).strip() + "\n"


def _figure(width: float, height: float) -> Figure:
    with matplotlib.rc_context(_BASE_RC):
        return Figure(figsize=(width, height), dpi=72)


def delta_against_epsilon(fig: Figure, ax: Any, ylabel: str, key: str) -> str:
    """Finish a plot of delta against eps (log-scaled delta, light grid, small legend) as SVG."""
    ax.set_xlabel("ε")
    ax.set_ylabel(ylabel)
    ax.set_yscale("log")
    ax.grid(True, linewidth=0.4, color="#dddddd")
    ax.legend(frameon=False, fontsize=6)
    fig.tight_layout()
    return _svg(fig, key)


def epsilon_plot(points: Sequence[tuple[float, float, str]], key: str, title: str = "") -> str:
    """Achieved epsilon against claimed epsilon, one marker per grid point, with the diagonal.

    ``points`` are (claimed, achieved, status); an infinite achieved epsilon is drawn as
    an upward triangle at the top of the axes.
    """
    with matplotlib.rc_context(_BASE_RC):
        fig = _figure(4.2, 3.4)
        ax = fig.add_subplot()
        finite = [a for _, a, _ in points if math.isfinite(a)]
        top = max([c for c, _, _ in points] + finite + [1e-9]) * 1.15
        ax.plot([0, top], [0, top], color="#888888", linestyle="--", linewidth=1, label="achieved = claimed")
        for status in sorted({s for _, _, s in points}):
            xs = [c for c, a, s in points if s == status and math.isfinite(a)]
            ys = [a for c, a, s in points if s == status and math.isfinite(a)]
            if xs:
                ax.scatter(xs, ys, color=COLOURS.get(status, "#555555"), zorder=3, label=status)
            inf = [c for c, a, s in points if s == status and not math.isfinite(a)]
            if inf:
                ax.scatter(inf, [top] * len(inf), marker="^", color=COLOURS.get(status, "#555555"),
                           zorder=3, label=f"{status} (achieved = inf)")
        ax.set_xlim(0, top)
        ax.set_ylim(0, top * 1.02)
        ax.set_xlabel("claimed ε")
        ax.set_ylabel("achieved ε (exact, over the universe)")
        if title:
            ax.set_title(title)
        ax.grid(True, linewidth=0.4, color="#dddddd")
        ax.legend(loc="upper left", frameon=False, fontsize=8)
        return _svg(fig, key)


def loss_histograms(panels: Sequence[tuple[str, dict[str, Any], Optional[float]]], key: str) -> str:
    """The privacy-loss distribution over ordered neighbouring pairs, one panel per grid point.

    Each panel is (title, ``figures["loss_histogram"]`` = {edges, counts, infinite},
    claimed epsilon or None); the claimed epsilon is a dashed vertical line.
    """
    with matplotlib.rc_context(_BASE_RC):
        columns = max(1, min(3, len(panels)))
        rows = math.ceil(len(panels) / columns)
        fig = _figure(2.6 * columns + 0.4, 2.3 * rows + 0.3)
        for index, (title, hist, claimed) in enumerate(panels):
            ax = fig.add_subplot(rows, columns, index + 1)
            edges = [float(e) for e in hist.get("edges", [])]
            counts = [int(c) for c in hist.get("counts", [])]
            if len(edges) == len(counts) + 1 and counts:
                widths = [b - a for a, b in zip(edges, edges[1:])]
                ax.bar(edges[:-1], counts, width=widths, align="edge", color="#4c72b0",
                       edgecolor="white", linewidth=0.4)
            if claimed is not None:
                ax.axvline(claimed, color=COLOURS["refuted"], linestyle="--", linewidth=1)
            infinite = int(hist.get("infinite", 0))
            ax.set_title(title + (f"  (+{infinite} infinite)" if infinite else ""))
            ax.set_xlabel("largest privacy loss of the pair")
            if index % columns == 0:
                ax.set_ylabel("ordered pairs")
            ax.grid(True, axis="y", linewidth=0.4, color="#dddddd")
        fig.tight_layout()
        return _svg(fig, key)


def failure_curves(panels: Sequence[tuple[str, dict[int, float], float, Optional[int], Optional[int]]],
                   key: str) -> str:
    """Failure probability against the sample size n, one panel per grid point.

    Each panel is (title, {n: P[failure]}, beta, the bound's n, the smallest n that works);
    beta is a dashed horizontal line, the bound's n a dotted vertical one.
    """
    with matplotlib.rc_context(_BASE_RC):
        columns = max(1, min(3, len(panels)))
        rows = math.ceil(len(panels) / columns)
        fig = _figure(2.8 * columns + 0.4, 2.4 * rows + 0.3)
        for index, (title, curve, beta, n_bound, smallest) in enumerate(panels):
            ax = fig.add_subplot(rows, columns, index + 1)
            ns = sorted(curve)
            runs: list[list[int]] = []
            for n in ns:  # join only consecutive sizes: the check computes n = 1, 2, ... and the bound's n
                if runs and runs[-1][-1] == n - 1:
                    runs[-1].append(n)
                else:
                    runs.append([n])
            for run in runs:
                ax.plot(run, [curve[n] for n in run], marker="o", markersize=3, color="#4c72b0", linewidth=1)
            ax.axhline(beta, color=COLOURS["refuted"], linestyle="--", linewidth=1, label="β")
            if n_bound is not None:
                ax.axvline(n_bound, color="#555555", linestyle=":", linewidth=1, label="bound's n")
            if smallest is not None and smallest in curve:
                ax.scatter([smallest], [curve[smallest]], color=COLOURS["proved"], zorder=3,
                           label="smallest n that works")
            ax.set_title(title)
            ax.set_xlabel("sample size n")
            if index % columns == 0:
                ax.set_ylabel("P[error > α]")
            ax.grid(True, linewidth=0.4, color="#dddddd")
            if index == 0:
                ax.legend(frameon=False, fontsize=7)
        fig.tight_layout()
        return _svg(fig, key)


def witness_laws(outputs: Sequence[str], p: Sequence[float], p_prime: Sequence[float], key: str,
                 labels: tuple[str, str] = ("P(o | X)", "P(o | X')")) -> str:
    """The witness pair's two output distributions side by side (grouped bars per output)."""
    order = list(range(len(outputs)))
    if len(order) > MAX_BARS:  # keep the outputs that carry the most mass, in their original order
        keep = sorted(order, key=lambda i: (-max(p[i], p_prime[i]), i))[:MAX_BARS]
        order = sorted(keep)
    with matplotlib.rc_context(_BASE_RC):
        fig = _figure(max(4.2, 0.32 * len(order) + 1.5), 3.2)
        ax = fig.add_subplot()
        xs = list(range(len(order)))
        ax.bar([x - 0.2 for x in xs], [p[i] for i in order], width=0.4, color="#4c72b0", label=labels[0])
        ax.bar([x + 0.2 for x in xs], [p_prime[i] for i in order], width=0.4, color="#dd8452", label=labels[1])
        ax.set_xticks(xs)
        ax.set_xticklabels([_short(outputs[i]) for i in order], rotation=60 if len(order) > 6 else 0,
                           ha="right" if len(order) > 6 else "center", fontsize=7)
        ax.set_xlabel("output o" + (f" ({len(order)} of {len(outputs)} with the most mass)"
                                    if len(order) < len(outputs) else ""))
        ax.set_ylabel("probability")
        ax.grid(True, axis="y", linewidth=0.4, color="#dddddd")
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False, fontsize=8)
        return _svg(fig, key)


def density_witness(curves: Any, claimed_epsilon: Optional[float], key: str) -> str:
    """A density witness: both densities around the witness value (top) and their log ratio with
    the claimed ε and the witness value marked (bottom).  ``curves`` is an
    :class:`~dpverify.evidence.DensityCurves`; a None log ratio (a density is 0) is a gap."""
    with matplotlib.rc_context(_BASE_RC):
        fig = _figure(5.2, 4.4)
        top, bottom = fig.subplots(2, 1, sharex=True)
        top.plot(curves.v, curves.density, color="#4c72b0", linewidth=1.4, label="density under X")
        top.plot(curves.v, curves.density_prime, color="#dd8452", linewidth=1.4, linestyle="--",
                 label="density under X'")
        top.set_ylabel(f"density of {curves.slot}")
        top.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False, fontsize=8)
        ratio = [math.nan if r is None else r for r in curves.log_ratio]
        bottom.plot(curves.v, ratio, color="#333333", linewidth=1.4, label="ln(density X / density X')")
        if claimed_epsilon is not None:
            bottom.axhline(claimed_epsilon, color=COLOURS["refuted"], linestyle="--", linewidth=1,
                           label="claimed ε")
        bottom.set_ylabel("log ratio")
        bottom.set_xlabel(f"released value {curves.slot}")
        bottom.legend(loc="best", frameon=False, fontsize=8)
        for ax in (top, bottom):
            ax.axvline(curves.at, color="#888888", linestyle=":", linewidth=1)
            ax.grid(True, linewidth=0.4, color="#dddddd")
        fig.tight_layout()
        return _svg(fig, key)


def _short(text: str, width: int = 18) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def sampled_frequencies(cells: Sequence[tuple[str, float, float, float, float]], key: str) -> str:
    """A statistical audit's tested cells: each output's empirical frequency with its Clopper-Pearson
    interval (a dot with bars) against the spec's exact probability (a diamond).  ``cells`` are
    (label, frequency, interval low, interval high, exact probability); the first MAX_BARS are drawn."""
    cells = list(cells)[:MAX_BARS]
    with matplotlib.rc_context(_BASE_RC):
        fig = _figure(max(4.2, 0.45 * len(cells) + 1.6), 3.2)
        ax = fig.add_subplot()
        xs = list(range(len(cells)))
        freq = [c[1] for c in cells]
        below = [max(0.0, c[1] - c[2]) for c in cells]
        above = [max(0.0, c[3] - c[1]) for c in cells]
        ax.errorbar(xs, freq, yerr=[below, above], fmt="o", markersize=4, color="#4c72b0", ecolor="#4c72b0",
                    elinewidth=1.2, capsize=4, label="frequency k/n, Clopper-Pearson interval")
        ax.scatter(xs, [c[4] for c in cells], marker="D", s=22, facecolors="none", edgecolors=COLOURS["refuted"],
                   linewidths=1.2, zorder=3, label="spec's exact probability")
        ax.set_xticks(xs)
        rotate = len(cells) > 4
        ax.set_xticklabels([_short(c[0], 24) for c in cells], rotation=45 if rotate else 0,
                           ha="right" if rotate else "center", fontsize=7)
        ax.set_xlim(-0.6, len(cells) - 0.4)
        ax.set_xlabel("dataset → output")
        ax.set_ylabel("probability")
        ax.grid(True, axis="y", linewidth=0.4, color="#dddddd")
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False, fontsize=8)
        return _svg(fig, key)


def sampled_cdf(panels: Sequence[tuple[str, Sequence[tuple[float, float, float]], float]], key: str) -> str:
    """A statistical audit of real outputs: per panel (one dataset, or one coordinate of it), the
    samples' empirical CDF (steps) against the spec's exact CDF (line) with the DKW-Massart band
    exact ± threshold (shaded): a test rejects where the steps leave the band.  ``panels`` are
    (title, points (x, empirical, exact), threshold); at most 6 panels are drawn."""
    panels = list(panels)[:6]
    with matplotlib.rc_context(_BASE_RC):
        fig = _figure(3.0 * len(panels) + 0.6, 2.8)
        for index, (title, points, threshold) in enumerate(panels):
            ax = fig.add_subplot(1, len(panels), index + 1)
            xs = [p[0] for p in points]
            exact = [p[2] for p in points]
            ax.fill_between(xs, [max(0.0, e - threshold) for e in exact], [min(1.0, e + threshold) for e in exact],
                            color="#0969da", alpha=0.15, linewidth=0, label="DKW band")
            ax.plot(xs, exact, color="#0969da", linewidth=1.2, label="spec's exact CDF")
            ax.step(xs, [p[1] for p in points], where="post", color=COLOURS["refuted"], linewidth=1.0,
                    label="empirical CDF")
            ax.set_title(_short(title, 32), fontsize=8)
            ax.set_ylim(-0.02, 1.02)
            ax.grid(True, linewidth=0.4, color="#dddddd")
            if index == 0:
                ax.set_ylabel("P(output ≤ x)")
                ax.legend(loc="upper left", frameon=False, fontsize=7)
            ax.set_xlabel("x")
        return _svg(fig, key)


def epsilon_bounds(cells: Sequence[tuple[str, float, Optional[float]]], claimed: Optional[float], key: str) -> str:
    """A statistical privacy audit: per tested cell (X, X', o), the lower confidence bound on the code's
    loss (a dot with an arrow up: the interval [bound, ∞)) against the spec's exact loss there (a
    diamond) and the claimed ε (dashed).  ``cells`` are (label, lower bound, spec's loss or None)."""
    cells = list(cells)[:MAX_BARS]
    finite = [v for _, b, s in cells for v in (b, s) if v is not None and math.isfinite(v)]
    top = max(finite + ([claimed] if claimed is not None else []) + [1e-9]) * 1.3
    bottom = min(finite + [0.0])
    with matplotlib.rc_context(_BASE_RC):
        fig = _figure(max(4.2, 0.6 * len(cells) + 1.6), 3.2)
        ax = fig.add_subplot()
        xs = list(range(len(cells)))
        bounds = [b if math.isfinite(b) else bottom for _, b, _ in cells]
        ax.scatter(xs, bounds, color="#4c72b0", zorder=3, label="code's ε: lower confidence bound")
        for x, b in zip(xs, bounds):
            ax.annotate("", xy=(x, top * 0.97), xytext=(x, b),
                        arrowprops={"arrowstyle": "->", "color": "#4c72b0", "linewidth": 1})
        spec = [(x, s if math.isfinite(s) else top * 0.97) for x, (_, _, s) in zip(xs, cells) if s is not None]
        if spec:
            ax.scatter([x for x, _ in spec], [s for _, s in spec], marker="D", s=22, facecolors="none",
                       edgecolors="#dd8452", linewidths=1.2, zorder=4, label="spec's exact loss")
        if claimed is not None:
            ax.axhline(claimed, color=COLOURS["refuted"], linestyle="--", linewidth=1, label="claimed ε")
        ax.set_xticks(xs)
        ax.set_xticklabels([_short(c[0], 28) for c in cells], rotation=30 if len(cells) > 2 else 0,
                           ha="right" if len(cells) > 2 else "center", fontsize=7)
        ax.set_xlim(-0.6, len(cells) - 0.4)
        ax.set_ylim(bottom - 0.05 * top, top)
        ax.set_xlabel("cell (X, X', output)")
        ax.set_ylabel("privacy loss ε")
        ax.grid(True, axis="y", linewidth=0.4, color="#dddddd")
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False, fontsize=8)
        return _svg(fig, key)
