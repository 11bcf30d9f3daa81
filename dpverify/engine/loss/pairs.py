"""Privacy loss over all neighbouring pairs, screened in bulk and certified where it matters.

For ordered neighbours (X, X') and an output o the privacy loss is
ln P(o|X) - ln P(o|X') (+inf when o is possible under X only).  Every law
holds certified intervals; :mod:`dpverify.engine.loss.screening` turns them once into
outward-rounded float arrays indexed by distinct law, and screens every pair of
distinct laws in one vectorised pass over loss *ratios* (no float logarithm:
IEEE division is correctly rounded, so the bounds stay rigorous).  Pairs are
index arrays: each neighbouring pair is mapped to its two laws, pairs of equal
laws (loss 0) are dropped, and repeated pairs of laws are merged when there are
few distinct laws.  Only cells whose float upper bound reaches the value that
decides a verdict are re-evaluated in interval arithmetic.  Nothing here
compares floats to decide: floats only rule cells out.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ..execution import executor as executors
from . import screening
from ..program.reading import Table

_CHUNK = screening.CHUNK  # matrix cells per numpy block, to bound memory
_DENSE = 1 << 22
"""Pairs of laws are merged through a dense count over law x law when there are at most this many."""


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
    """The privacy losses of a :class:`Table` over its neighbouring pairs.

    ``a[k], b[k]``: the k-th pair of distinct laws (each screened in both directions);
    ``weight[k]``: how many neighbouring pairs of datasets it stands for.
    """

    def __init__(self, table: Table, left: np.ndarray, right: np.ndarray) -> None:
        self.table = table
        self.ctx = table.backend.ctx
        self.pairs = len(left)
        self.enc = screening.enclose(table)
        self.outputs = self.enc.outputs
        self.p_lo, self.p_hi = self.enc.lo, self.enc.hi
        self.margin = 2.0 ** -40  # log-space slack callers subtract from a threshold (only widens it)
        law_of = screening.law_index(table)
        la = law_of[np.asarray(left, dtype=np.int64)]
        lb = law_of[np.asarray(right, dtype=np.int64)]
        laws = len(table.laws)
        self._la, self._lb, self._left, self._right = la, lb, left, right
        self._keys: Optional[np.ndarray] = None
        if laws * laws <= min(_DENSE, max(8 * len(la), 1 << 16)):  # cheap next to the pairs themselves
            keys = np.minimum(la, lb) * laws + np.maximum(la, lb)
            counts = np.bincount(keys, minlength=laws * laws)
            merged = np.flatnonzero(counts)
            merged = merged[merged // laws != merged % laws]
            self.a, self.b, self.weight = merged // laws, merged % laws, counts[merged]
            self._keys, self._laws = keys, laws
        else:
            rows = np.flatnonzero(la != lb)
            self.a, self.b, self.weight = la[rows], lb[rows], np.ones(len(rows), dtype=np.int64)
            self._rows = rows
        self._log: dict[tuple[int, Any], Any] = {}
        self._screened: Optional[screening.Screen] = None
        self._found: dict[tuple[int, int], tuple[int, int]] = {}
        self._both: Optional[tuple[np.ndarray, np.ndarray]] = None

    def screen(self) -> screening.Screen:
        """The vectorised pass over every pair of distinct laws (once; split over a cluster's workers when
        one is configured and the pairs are many)."""
        if self._screened is None:
            self._screened = screening.screen_spread(self.enc, self.a, self.b, executors.current())
        return self._screened

    def representative(self, row: int, forward: bool = True) -> tuple[int, int]:
        """Indices (i, j) of a neighbouring pair of datasets whose laws are (a[row], b[row]) (swapped
        when not ``forward``)."""
        a, b = int(self.a[row]), int(self.b[row])
        if self._keys is None:
            k = int(self._rows[row])
            i, j = int(self._left[k]), int(self._right[k])
        else:
            if (a, b) not in self._found:
                k = int(np.flatnonzero(self._keys == min(a, b) * self._laws + max(a, b))[0])
                i, j = int(self._left[k]), int(self._right[k])
                self._found[(a, b)] = (i, j) if int(self._la[k]) == a else (j, i)
            i, j = self._found[(a, b)]
        return (i, j) if forward else (j, i)

    def loss_histogram(self, bins: int = 20) -> dict[str, Any]:
        """A figure: how the largest loss of each ordered neighbouring pair is distributed.

        Floats (the screening's estimates), for plots only; pairs with identical
        laws have loss 0, pairs with an output impossible on one side are infinite.
        """
        scr = self.screen()
        with np.errstate(divide="ignore"):
            values = np.log(np.concatenate([scr.forward_mid, scr.backward_mid]))
        weights = np.concatenate([self.weight, self.weight]).astype(float)
        finite = np.isfinite(values)
        identical = 2 * self.pairs - int(weights.sum())  # pairs with the same law: loss 0
        counts, edges = np.histogram(np.append(values[finite], 0.0), bins=bins,
                                     weights=np.append(weights[finite], float(identical)))
        return {"edges": [float(f"{e:.12g}") for e in edges], "counts": [int(c) for c in counts],
                "infinite": int(weights[~finite].sum())}

    def _log_of(self, r: int, o: Any) -> Any:
        found = self._log.get((r, o))
        if found is None:
            w = self.table.laws[r][o]
            if not w.a > 0:  # never the log of an interval that reaches 0: enclose it from -inf
                w = self.ctx.mpf([0, w.b]) if w.b > 0 else self.ctx.mpf(0)
            found = self._log[(r, o)] = (self.ctx.log(w) if w.b > 0 else self.ctx.mpf([-math.inf, -math.inf]))
        return found

    def cell(self, row: int, column: int, forward: bool = True) -> Cell:
        """Certify one cell in interval arithmetic (direction a -> b when ``forward``)."""
        a, b = int(self.a[row]), int(self.b[row])
        if not forward:
            a, b = b, a
        o = self.outputs[column]
        i, j = self.representative(row, forward)
        p, q = self.table.laws[a].get(o), self.table.laws[b].get(o)
        loss = math.inf if q is None else self._log_of(a, o) - self._log_of(b, o)
        return Cell(self.table.datasets[i], self.table.datasets[j], o, p, q, loss)

    def max_loss(self) -> tuple[Any, Optional[Cell]]:
        """The achieved epsilon (an interval, or inf) and a cell attaining it."""
        if not len(self.a):
            return self.ctx.mpf(0), None
        cells = self._cells(self.screen().best)
        if any(c.infinite for c in cells):
            return math.inf, next(c for c in cells if c.infinite)
        if not cells:
            return self.ctx.mpf(0), None
        top = max(cells, key=lambda c: c.loss.mid)
        achieved = self.ctx.mpf([max(c.loss.a for c in cells), max(c.loss.b for c in cells)])
        return achieved, top

    def cells_reaching(self, threshold: float) -> list[Cell]:
        """Every cell whose loss could be >= threshold (a float in log space), certified."""
        if not len(self.a):
            return []
        return self._cells(screening.ratio_threshold(self.ctx, threshold))

    def _cells(self, ratio: Any) -> list[Cell]:
        """Every cell whose loss ratio could reach ``ratio`` (an exact lower bound, or inf), certified."""
        forward, backward = screening.reaching(self.screen(), ratio)
        out = []
        for rows, direction in ((forward, True), (backward, False)):
            for row in rows.tolist():
                a, b = int(self.a[row]), int(self.b[row])
                if not direction:
                    a, b = b, a
                for column in screening.cells_reaching(self.enc, a, b, ratio).tolist():
                    out.append(self.cell(row, column, direction))
        return out

    def _directed(self) -> tuple[np.ndarray, np.ndarray]:
        """Every pair of distinct laws in both directions (the first half forward; made once: the
        achieved epsilon of an (eps, delta) claim bisects over them)."""
        if self._both is None:
            self._both = np.concatenate([self.a, self.b]), np.concatenate([self.b, self.a])
        return self._both

    def _pair(self, k: int) -> tuple[tuple, tuple]:
        """The datasets of the k-th directed pair of :meth:`_directed`."""
        rows = len(self.a)
        i, j = self.representative(k % rows, k < rows)
        return self.table.datasets[i], self.table.datasets[j]

    # ----- approximate DP: the hockey-stick divergence ---------------------------------

    def hockey_stick(self, eps: Any) -> tuple[Any, Optional[tuple[tuple, tuple]]]:
        """max over ordered pairs of sum_o max(0, P(o|X) - e^eps P(o|X')): an interval and its pair."""
        ctx = self.ctx
        e_eps = ctx.exp(eps)
        e_lo, e_hi = _down(float(e_eps.a)), _up(float(e_eps.b))
        slack = len(self.outputs) * 2.0 ** -48 * max(1.0, e_hi) + 1e-300
        best_lo, uppers = -math.inf, []
        da, db = self._directed()
        step = max(1, _CHUNK // max(1, len(self.outputs)))
        for start in range(0, len(da), step):
            idx = np.arange(start, min(start + step, len(da)))
            a, b = da[idx], db[idx]
            hi = np.maximum(0.0, self.p_hi[a] - _scaled(e_lo, self.p_lo[b])).sum(axis=1) + slack
            lo = np.maximum(0.0, self.p_lo[a] - _scaled(e_hi, self.p_hi[b])).sum(axis=1) - slack
            best_lo = max(best_lo, float(lo.max()) if lo.size else -math.inf)
            uppers.append((idx, hi))
        found = []
        for idx, hi in uppers:
            for k in idx[hi >= best_lo].tolist():
                found.append((self._divergence(int(da[k]), int(db[k]), e_eps), self._pair(k)))
        if not found:
            return ctx.mpf(0), None
        value, pair = max(found, key=lambda item: item[0].mid)
        best = ctx.mpf([max(v.a for v, _ in found), max(v.b for v, _ in found)])
        return best, pair

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
        da, db = self._directed()
        for start in range(0, len(da), step):
            idx = np.arange(start, min(start + step, len(da)))
            a, b = da[idx], db[idx]
            hi = np.maximum(0.0, self.p_hi[a] - _scaled(e_lo, self.p_lo[b])).sum(axis=1) + slack
            for k in idx[~(hi < threshold)].tolist():
                divergence = self._divergence(int(da[k]), int(db[k]), e_eps)
                if not divergence.b < value.a:
                    found.append((divergence, self._pair(k)))
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
