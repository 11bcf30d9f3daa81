"""Privacy loss over all neighbouring pairs, screened in bulk and certified where it matters.

For ordered neighbours (X, X') and an output o the privacy loss is
ln P(o|X) - ln P(o|X') (+inf when o is possible under X only).  Every law
holds certified intervals, so each loss has a rigorous float enclosure
[lo, hi]: the interval logs rounded outward, widened by a bound on the float
subtraction error.  Numpy evaluates these enclosures for all distinct pairs at
once; only cells whose enclosure reaches the value that decides a verdict are
re-evaluated in interval arithmetic.  Nothing here compares floats to decide:
floats only rule cells out, with a margin that covers their rounding.
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from .reading import Table

_CHUNK = 1 << 20  # matrix cells per numpy block, to bound memory


@dataclass(frozen=True)
class Cell:
    """One (ordered pair, output) with its certified loss (an mpmath interval or inf)."""

    x: tuple
    x_prime: tuple
    output: Any
    p: Any
    p_prime: Any
    loss: Any  # ivmpf, or math.inf when p_prime is exactly 0

    @property
    def infinite(self) -> bool:
        return self.loss == math.inf


def _down(x: float) -> float:
    return math.nextafter(x, -math.inf)


def _up(x: float) -> float:
    return math.nextafter(x, math.inf)


class LossTable:
    """The privacy losses of a :class:`Table` over its neighbouring pairs."""

    def __init__(self, table: Table, left: np.ndarray, right: np.ndarray) -> None:
        self.table = table
        self.ctx = table.backend.ctx
        laws_left = np.asarray(table.law_of, dtype=np.int64)[left] if len(left) else left
        laws_right = np.asarray(table.law_of, dtype=np.int64)[right] if len(right) else right
        self.representative: dict[tuple[int, int], tuple[int, int]] = {}
        self.multiplicity: dict[tuple[int, int], int] = {}
        for i, j, a, b in zip(left.tolist(), right.tolist(), laws_left.tolist(), laws_right.tolist()):
            if a != b:
                self.representative.setdefault((a, b), (i, j))
                self.representative.setdefault((b, a), (j, i))
                self.multiplicity[(a, b)] = self.multiplicity.get((a, b), 0) + 1
                self.multiplicity[(b, a)] = self.multiplicity.get((b, a), 0) + 1
        directed = sorted(self.representative)
        self.a = np.array([p[0] for p in directed], dtype=np.int64)
        self.b = np.array([p[1] for p in directed], dtype=np.int64)
        self.pairs = len(left)
        self.outputs = sorted({o for law in table.laws for o in law}, key=repr)
        column = {o: k for k, o in enumerate(self.outputs)}
        shape = (len(table.laws), len(self.outputs))
        self.log_lo = np.full(shape, -math.inf)
        self.log_hi = np.full(shape, -math.inf)
        self.p_lo = np.zeros(shape)
        self.p_hi = np.zeros(shape)
        self._log: dict[tuple[int, Any], Any] = {}
        for r, law in enumerate(table.laws):
            for o, w in law.items():
                c = column[o]
                if not w.a > 0:  # never the log of an interval that reaches 0: enclose it from -inf
                    w = self.ctx.mpf([0, w.b]) if w.b > 0 else self.ctx.mpf(0)
                lg = self.ctx.log(w) if w.b > 0 else self.ctx.mpf([-math.inf, -math.inf])
                self._log[(r, o)] = lg
                self.log_lo[r, c], self.log_hi[r, c] = _down(float(lg.a)), _up(float(lg.b))
                self.p_lo[r, c], self.p_hi[r, c] = _down(float(w.a)), _up(float(w.b))
        finite = np.abs(self.log_lo[np.isfinite(self.log_lo)])
        self.margin = (float(finite.max()) if finite.size else 1.0) * 2.0 ** -48 + 1e-300

    def _blocks(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(pair indices, loss lower bounds, loss upper bounds) for blocks of directed pairs."""
        step = max(1, _CHUNK // max(1, len(self.outputs)))
        with np.errstate(invalid="ignore"):
            for start in range(0, len(self.a), step):
                idx = np.arange(start, min(start + step, len(self.a)))
                a, b = self.a[idx], self.b[idx]
                hi = self.log_hi[a] - self.log_lo[b] + self.margin
                lo = self.log_lo[a] - self.log_hi[b] - self.margin
                absent = self.log_hi[a] == -math.inf  # o impossible under X: no loss
                hi[absent] = -math.inf
                lo[absent] = -math.inf
                yield idx, lo, hi

    def loss_histogram(self, bins: int = 20) -> dict[str, Any]:
        """A figure: how the largest loss of each ordered neighbouring pair is distributed.

        Floats (midpoints of the enclosures), for plots only; pairs with identical
        laws have loss 0, pairs with an output impossible on one side are infinite.
        """
        worst = []
        for _, lo, hi in self._blocks():
            worst.append(np.max(np.where(np.isfinite(hi) & np.isfinite(lo), (lo + hi) / 2, hi), axis=1))
        values = np.concatenate(worst) if worst else np.zeros(0)
        weights = np.array([self.multiplicity[(int(a), int(b))] for a, b in zip(self.a, self.b)], dtype=float)
        finite = np.isfinite(values)
        identical = 2 * self.pairs - int(weights.sum())  # pairs with the same law: loss 0
        counts, edges = np.histogram(np.append(values[finite], 0.0), bins=bins,
                                     weights=np.append(weights[finite], float(identical)))
        return {"edges": [float(f"{e:.12g}") for e in edges], "counts": [int(c) for c in counts],
                "infinite": int(weights[~finite].sum())}

    def cell(self, pair: int, column: int) -> Cell:
        """Certify one cell in interval arithmetic."""
        a, b = int(self.a[pair]), int(self.b[pair])
        o = self.outputs[column]
        i, j = self.representative[(a, b)]
        p, q = self.table.laws[a].get(o), self.table.laws[b].get(o)
        loss = math.inf if q is None else self._log[(a, o)] - self._log[(b, o)]
        return Cell(self.table.datasets[i], self.table.datasets[j], o, p, q, loss)

    def max_loss(self) -> tuple[Any, Optional[Cell]]:
        """The achieved epsilon (an interval, or inf) and a cell attaining it."""
        best_lo = -math.inf
        for _, lo, _ in self._blocks():
            if lo.size:
                best_lo = max(best_lo, float(np.nanmax(lo)))
        if best_lo == -math.inf and not len(self.a):
            return self.ctx.mpf(0), None
        cells = self.cells_reaching(best_lo)
        if any(c.infinite for c in cells):
            return math.inf, next(c for c in cells if c.infinite)
        if not cells:
            return self.ctx.mpf(0), None
        top = max(cells, key=lambda c: c.loss.mid)
        achieved = self.ctx.mpf([max(c.loss.a for c in cells), max(c.loss.b for c in cells)])
        return achieved, top

    def cells_reaching(self, threshold: float) -> list[Cell]:
        """Every cell whose loss could be >= threshold, certified."""
        out = []
        for idx, _, hi in self._blocks():
            rows, cols = np.nonzero(hi >= threshold)
            out.extend(self.cell(int(idx[r]), int(c)) for r, c in zip(rows, cols))
        return out

    # ----- approximate DP: the hockey-stick divergence ---------------------------------

    def hockey_stick(self, eps: Any) -> tuple[Any, Optional[tuple[tuple, tuple]]]:
        """max over ordered pairs of sum_o max(0, P(o|X) - e^eps P(o|X')): an interval and its pair."""
        ctx = self.ctx
        e_eps = ctx.exp(eps)
        e_lo, e_hi = _down(float(e_eps.a)), _up(float(e_eps.b))
        slack = len(self.outputs) * 2.0 ** -48 * max(1.0, e_hi) + 1e-300
        best_lo, uppers = -math.inf, []
        for start in range(0, len(self.a), max(1, _CHUNK // max(1, len(self.outputs)))):
            idx = np.arange(start, min(start + max(1, _CHUNK // max(1, len(self.outputs))), len(self.a)))
            a, b = self.a[idx], self.b[idx]
            hi = np.maximum(0.0, self.p_hi[a] - _scaled(e_lo, self.p_lo[b])).sum(axis=1) + slack
            lo = np.maximum(0.0, self.p_lo[a] - _scaled(e_hi, self.p_hi[b])).sum(axis=1) - slack
            best_lo = max(best_lo, float(lo.max()) if lo.size else -math.inf)
            uppers.append((idx, hi))
        found = []
        for idx, hi in uppers:
            for k in idx[hi >= best_lo].tolist():
                a, b = int(self.a[k]), int(self.b[k])
                found.append((self._divergence(a, b, e_eps), self.representative[(a, b)]))
        if not found:
            return ctx.mpf(0), None
        value, (i, j) = max(found, key=lambda item: item[0].mid)
        best = ctx.mpf([max(v.a for v, _ in found), max(v.b for v, _ in found)])
        return best, (self.table.datasets[i], self.table.datasets[j])

    def pairs_reaching(self, eps: Any, value: Any) -> list[tuple[Any, tuple[tuple, tuple]]]:
        """Every ordered pair whose divergence at ``eps`` could be >= ``value`` (an mpmath number):
        (certified divergence interval, (X, X')), largest first.

        Unlike :meth:`hockey_stick` (the maximum and one pair attaining it) this lists
        every pair a verdict against ``value`` depends on: two pairs may both straddle it.
        Floats only rule pairs out, with the same rounding slack as :meth:`hockey_stick`.
        """
        e_eps = self.ctx.exp(eps)
        e_lo = _down(float(e_eps.a))
        slack = len(self.outputs) * 2.0 ** -48 * max(1.0, _up(float(e_eps.b))) + 1e-300
        value = self.ctx.mpf(value)
        threshold = _down(float(value.a))
        step = max(1, _CHUNK // max(1, len(self.outputs)))
        found = []
        for start in range(0, len(self.a), step):
            idx = np.arange(start, min(start + step, len(self.a)))
            a, b = self.a[idx], self.b[idx]
            hi = np.maximum(0.0, self.p_hi[a] - _scaled(e_lo, self.p_lo[b])).sum(axis=1) + slack
            for k in idx[~(hi < threshold)].tolist():
                a_k, b_k = int(self.a[k]), int(self.b[k])
                i, j = self.representative[(a_k, b_k)]
                divergence = self._divergence(a_k, b_k, e_eps)
                if not divergence.b < value.a:
                    found.append((divergence, (self.table.datasets[i], self.table.datasets[j])))
        return sorted(found, key=lambda item: item[0].b, reverse=True)

    def _divergence(self, a: int, b: int, e_eps: Any) -> Any:
        return hockey_stick_pair(self.ctx, self.table.laws[a], self.table.laws[b], e_eps)


def _scaled(factor: float, probabilities: np.ndarray) -> np.ndarray:
    """factor * p with 0 * inf read as 0 (an impossible output stays impossible)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(probabilities > 0, factor * probabilities, 0.0)


def hockey_stick_pair(ctx: Any, law: dict, law_prime: dict, e_eps: Any) -> Any:
    """sum_o max(0, P(o) - e^eps P'(o)) for two laws, as a certified interval."""
    total = ctx.mpf(0)
    for o, p in law.items():
        term = p - e_eps * law_prime[o] if o in law_prime else p
        if term.b <= 0:
            continue
        total += term if term.a >= 0 else ctx.mpf([0, term.b])
    return total
