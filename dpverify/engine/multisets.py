"""Probabilities over i.i.d. samples from a finite population, summed over multisets, certified.

S is n records drawn i.i.d. from a population of r records with exact rational
probabilities p_r.  A program that ignores record order sees only the multiset of
S, so P[bad(M(S))] is a sum over count vectors c (not n-tuples) of the multinomial
probability n!/prod(c_r!) prod(p_r^c_r) times the program's exact probability of a
bad output -- C(n+r-1, r-1) terms instead of r^n.  :class:`MultisetSum` computes
that sum as a certified enclosure (an mpmath interval); what counts as bad is the
caller's predicate (the sample-complexity check's "error > alpha").
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import Any, Optional

from . import cluster_sums
from . import counts as by_counts
from . import executor as executors
from .backend import IntervalBackend
from .counts import Sample
from .enumerate import Session
from .fastlaw import ExpAtoms, Unsupported, bits_for, capture, scaled
from .pool import WorkerFailed, parallel_map
from .reading import _call, keywords

PARALLEL_FROM = 50_000
"""Fewer multisets than this are summed in-process whatever ``workers`` says (forking costs more)."""
REMOTE_FROM = 50_000
"""With a Dask scheduler configured (:mod:`dpverify.engine.executor`), the fast reading's sums over at
least this many multisets are computed on its workers (:mod:`dpverify.engine.cluster_sums`)."""


def multisets(records: tuple, n: int) -> int:
    """How many multisets of size n the records have: C(n + r - 1, r - 1)."""
    return math.comb(n + len(records) - 1, len(records) - 1)


class MultisetSum:
    """P_{S ~ population^n}[bad(program(S))] for each n, as a certified enclosure (an mpmath interval).

    Two readings, each an enclosure of the same exact value:

    * ``fast=True`` (the default): every multiset weight n!/prod(c_r!) prod(p_r^c_r)
      is an exact integer over the common denominator B^n, and each run of the
      program that makes at most one draw, an exponential mechanism with exact
      rational scores, eps and sensitivity, is read by :mod:`dpverify.engine.fastlaw`:
      its probability of a bad output is enclosed by integers q_lo, q_hi on the grid
      2^-S, rounded outward.  The sum is then exact integer arithmetic, and
      P lies in [sum N_c q_lo, sum N_c q_hi] / (B^n 2^S).  A run of any other form
      (other primitives, several draws, continuous noise, irrational numbers, an
      error) is read by the general interval reading, and its interval's ends are
      rounded outward onto the same grid.  ``fallbacks`` counts those runs (over every n computed).
    * ``fast=False``: the general interval reading for every multiset (about 350 us
      per multiset at 50 digits), the reference the fast reading is tested against.

    ``workers`` > 1 splits the multisets over the worker processes of :mod:`dpverify.engine.pool`
    (the sums are exact integers, so the result does not depend on the split).  With a Dask scheduler
    configured (``--scheduler``), sums over at least :data:`REMOTE_FROM` multisets are split over its
    workers instead (:mod:`dpverify.engine.cluster_sums`), with the same exact result.

    With ``counts=True`` (the default, with ``fast``) a program whose law depends on the sample
    only through a linear score of its counts (:mod:`dpverify.engine.counts`) is not run per
    multiset: the exact weights are summed by exponent vector and each group's share enclosed once
    (``paths[n] == "grouped"``, ``groups[n]`` groups, an enclosure as narrow as the fast reading's),
    or, with more groups than :data:`.counts.GROUP_LIMIT`, the sum is enclosed in float64 interval
    arithmetic (``"float"``: certified, about 14 significant digits).  Otherwise ``paths[n]`` is
    ``"multisets"`` (the fast reading) or ``"general"``.
    """

    def __init__(self, program: Callable[..., Any], values: Mapping[str, Any],
                 population: tuple[tuple[Any, Fraction], ...], bad: Callable[[Any], bool], dps: int,
                 fast: bool = True, workers: int = 1, counts: bool = True) -> None:
        self.program, self.values, self.bad = program, values, bad
        self.dps = dps
        self.backend = IntervalBackend(dps)
        self.session = Session(self.backend)
        self.records = tuple(r for r, _ in population)
        self.p = [p for _, p in population]
        self.denominator = math.lcm(*(p.denominator for p in self.p))
        self.numerators = [int(p * self.denominator) for p in self.p]
        self.fast, self.workers = fast, max(1, int(workers))
        self.fallbacks = 0
        self.counts = counts and fast
        self.paths: dict[int, str] = {}
        self.groups: dict[int, int] = {}
        self._forms: dict[int, Optional[by_counts.CountsForm]] = {}
        self.seen: dict[int, Any] = {}
        self._atoms: dict[int, ExpAtoms] = {}

    def at(self, n: int) -> Any:
        """The enclosure at sample size n (computed once)."""
        if n not in self.seen:
            value = self._by_counts(n) if self.counts else None
            if value is None:
                value = self._fast(n) if self.fast else self._interval(n)
                self.paths[n] = "multisets" if self.fast else "general"
            self.seen[n] = value
        return self.seen[n]

    def form(self, n: int) -> Optional[by_counts.CountsForm]:
        """The program's counts form at sample size n (traced once), or None when it has none or
        ``counts`` is off."""
        if not self.counts:
            return None
        if n not in self._forms:
            kwargs = keywords(self.program, self.session.convert(self.values), skip=1)
            self._forms[n] = by_counts.trace(self.program, kwargs, self.records, n, self.bad, self.backend)
        return self._forms[n]

    def _by_counts(self, n: int) -> Any:
        """The enclosure by the counts form of the program (see the class docstring), or None."""
        form = self.form(n)
        if form is None:
            return None
        rows, numerators = by_counts.merged(form, self.numerators)
        try:
            groups = by_counts.grouped(rows, numerators, n)
            if groups is None:
                atoms = by_counts.Atoms(form.denominator, 64)
                value = by_counts.floating(rows, numerators, self.denominator, n, form.bad, atoms, self.backend.ctx)
                self.paths[n] = "float"
                return value
            value = self._grouped(n, groups, form.bad, form.denominator)
        except Unsupported:  # too many distinct exponentials to tabulate
            return None
        self.paths[n], self.groups[n] = "grouped", len(groups)
        return value

    def _grouped(self, n: int, groups: dict, bad: tuple, denominator: int) -> Any:
        """sum over groups of the exact weight N_g times the group's share [q_lo, q_hi] / 2^S, over B^n,
        with S refined (as in :meth:`_fast`) until the relative width is about 10^-dps."""
        bits = bits_for(self.dps)
        scale = 2 * bits + 64
        for attempt in range(4):
            lo, hi = by_counts.exact_sum(groups, bad, by_counts.Atoms(denominator, scale + 16), scale)
            width = hi - lo
            if width == 0 or (width << (bits - 32)) <= hi or attempt == 3:
                break
            scale += bits - 32 - (hi.bit_length() - width.bit_length()) + 16
        ctx = self.backend.ctx
        denominator_n = ctx.mpf(self.denominator ** n << scale)
        return ctx.mpf([(ctx.mpf(lo) / denominator_n).a, (ctx.mpf(hi) / denominator_n).b])

    def _interval(self, n: int) -> Any:
        """The general reading: each multiset's law in certified intervals, weights as intervals."""
        total = self.backend.num(0)
        factorial = math.factorial(n)
        for counts in compositions(n, len(self.records)):
            weight = Fraction(factorial)
            for c, p in zip(counts, self.p):
                weight *= p ** c / math.factorial(c)
            if weight == 0:
                continue
            data = Sample(itertools.chain.from_iterable([r] * c for r, c in zip(self.records, counts)))
            data.counts = dict(zip(self.records, counts))
            law = _call(self.program, data, self.values, self.session)
            failing = [w for o, w in law.items() if self.bad(o)]
            if failing:
                total += self.backend.num(weight) * sum(failing[1:], failing[0])
        return total

    def _fast(self, n: int) -> Any:
        """The fast reading: exact integer sums of outward-rounded shares (see the class docstring)."""
        bits = bits_for(self.dps)
        scale = 2 * bits + 64
        grid = self.denominator ** n << 6  # the width the grid 2^-S alone can cause (a few units a multiset)
        for attempt in range(4):
            lo, hi, fallbacks = self._sums(n, scale)
            width = hi - lo
            # Done at a relative width of about 10^-dps (as the interval reading gives) or better, or
            # when the width does not come from the grid (runs read by the general reading).
            if width == 0 or (width << (bits - 32)) <= hi or width > grid or attempt == 3:
                break
            # A tiny probability: the absolute grid 2^-S is too coarse for its digits; refine it.
            scale += bits - 32 - (hi.bit_length() - width.bit_length()) + 16
        self.fallbacks += fallbacks
        ctx = self.backend.ctx
        denominator = ctx.mpf(self.denominator ** n << scale)
        low, high = ctx.mpf(lo) / denominator, ctx.mpf(hi) / denominator
        return ctx.mpf([low.a, high.b])

    def _sums(self, n: int, scale: int) -> tuple[int, int, int]:
        """(L, H, fallbacks) with L <= P * B^n * 2^scale <= H, over every multiset."""
        firsts = list(range(n, -1, -1))
        remote = self._remote(n, scale, firsts)
        if remote is not None:
            return remote
        if self.workers == 1 or multisets(self.records, n) < PARALLEL_FROM:
            return self._chunk(n, scale, firsts)
        chunks = balanced(firsts, lambda c0: multisets(self.records[1:], n - c0), self.workers * 6)
        try:
            parts = parallel_map(lambda chunk: self._chunk(n, scale, chunk), chunks, self.workers)
        except WorkerFailed:  # a spec error in a worker (or a worker that died): redo in-process, which reports it
            return self._chunk(n, scale, firsts)
        low, high, fallbacks = (sum(part[i] for part in parts) for i in range(3))
        return low, high, fallbacks

    def _remote(self, n: int, scale: int, firsts: list) -> Optional[tuple[int, int, int]]:
        """(L, H, fallbacks) from the configured Dask cluster's workers, or None (no cluster, a small sum,
        a program or data that cannot travel).  A worker that failed (other than by a spec's refusal,
        raised as it is) makes the sum be redone in-process, which reports the error."""
        where = executors.current()
        if not where.remote or multisets(self.records, n) < REMOTE_FROM:
            return None
        chunks = balanced(firsts, lambda c0: multisets(self.records[1:], n - c0),
                          where.workers * cluster_sums.UNITS_PER_WORKER)
        try:
            return cluster_sums.remote_sums(self, where, n, scale, chunks, MultisetSum)
        except WorkerFailed:
            return self._chunk(n, scale, firsts)

    def _chunk(self, n: int, scale: int, firsts: list) -> tuple[int, int, int]:
        """(L, H, fallbacks) over the multisets whose first record's count is in ``firsts``."""
        records, program = self.records, self.program
        kwargs = keywords(program, self.session.convert(self.values), skip=1)
        atoms = self._atoms.get(scale)
        if atoms is None:
            atoms = self._atoms[scale] = ExpAtoms(bits_for(self.dps), scale)
        one = 1 << scale
        blocks = [(r,) * n for r in records]
        bad = self.bad
        low = high = fallbacks = 0
        for counts, weight in weighted(n, self.numerators, firsts):
            data = Sample(sum((block[:c] for block, c in zip(blocks, counts)), ()))
            data.counts = dict(zip(records, counts))
            try:
                exponent, outputs = capture(lambda: program(data, **kwargs), self.backend)
            except Exception:  # not of the fast form (or an error the general reading reports properly)
                fallbacks += 1
                q_lo, q_hi = self._general(data, scale)
            else:
                if exponent is None:
                    q_lo = q_hi = one if bad(outputs[0][0]) else 0
                else:
                    chosen = [i for output, indices in outputs if bad(output) for i in indices]
                    q_lo, q_hi = atoms.probability(exponent, chosen)
            low += weight * q_lo
            high += weight * q_hi
        return low, high, fallbacks

    def _general(self, data: Sample, scale: int) -> tuple[int, int]:
        """One multiset's P(bad output) by the general interval reading, as [q_lo, q_hi] / 2^scale."""
        law = _call(self.program, data, self.values, self.session)
        failing = [w for o, w in law.items() if self.bad(o)]
        if not failing:
            return 0, 0
        a, b = sum(failing[1:], failing[0])._mpi_
        return scaled(a, scale, floor=True), scaled(b, scale, floor=False)


def balanced(items: list, cost: Callable[[Any], int], parts: int) -> list[list]:
    """``items`` cut into about ``parts`` runs of similar total cost, each run a list."""
    total = sum(cost(i) for i in items)
    chunks, current, spent = [], [], 0
    for item in items:
        current.append(item)
        spent += cost(item)
        if spent >= total / parts:
            chunks.append(current)
            current, spent = [], 0
    if current:
        chunks.append(current)
    return chunks


def weighted(n: int, numerators: list[int], firsts: list[int]) -> Iterator[tuple[tuple, int]]:
    """(counts, N) for every count vector summing to n whose first count is in ``firsts``, where
    N = n!/prod(c_r!) prod(A_r^c_r) is the multiset's probability times B^n (p_r = A_r/B)."""
    r = len(numerators)
    pows = [[1] * (n + 1) for _ in numerators]
    for i, a in enumerate(numerators):
        for c in range(1, n + 1):
            pows[i][c] = pows[i][c - 1] * a
    if r == 1:
        if n in firsts:
            yield (n,), pows[0][n]
        return
    rows: dict[int, list] = {}

    def last_two(m: int) -> list:  # [(k, m-k, C(m, k) A^k A'^(m-k))] for k = m..0
        row = rows.get(m)
        if row is None:
            a, b = pows[r - 2], pows[r - 1]
            row = rows[m] = [(k, m - k, math.comb(m, k) * a[k] * b[m - k]) for k in range(m, -1, -1)]
        return row

    def rest(i: int, m: int, prefix: tuple, weight: int) -> Iterator[tuple[tuple, int]]:
        if i == r - 2:
            for k, j, w in last_two(m):
                if w:
                    yield (*prefix, k, j), weight * w
            return
        for c in range(m, -1, -1):
            w = weight * math.comb(m, c) * pows[i][c]
            if w:
                yield from rest(i + 1, m - c, (*prefix, c), w)

    if r == 2:
        for k, j, w in last_two(n):
            if k in firsts and w:
                yield (k, j), w
        return
    for c0 in firsts:
        w0 = math.comb(n, c0) * pows[0][c0]
        if w0:
            yield from rest(1, n - c0, (c0,), w0)


def compositions(n: int, parts: int) -> Iterator[tuple]:
    """Every count vector of ``parts`` non-negative integers summing to n."""
    if parts == 1:
        yield (n,)
        return
    for first in range(n, -1, -1):
        for rest in compositions(n - first, parts - 1):
            yield (first, *rest)


__all__ = ["PARALLEL_FROM", "REMOTE_FROM", "MultisetSum", "Sample", "balanced", "compositions", "multisets", "scaled",
           "weighted"]
