"""The sample-complexity check: "if n >= BOUND then P[error(M(S)) > alpha] <= beta", exactly.

S is n records drawn i.i.d. from a finite population.  A learner that ignores
record order sees only the multiset of S, so the failure probability is a sum
over multisets (count vectors c, not n-tuples) of the multinomial probability
n!/prod(c_r!) prod(p_r^c_r) times the learner's exact probability of an output
with error > alpha -- C(n+r-1, r-1) terms instead of r^n.  The sum is a
certified enclosure: multiset weights are exact integers over B^n, and each
run's probability of a bad output is enclosed by the fast reading of
:mod:`dpverify.engine.fastlaw` (one exponential draw with rational exponents:
integer arithmetic, rounded outward; about 25 us per multiset instead of 350 us)
or, for a run of any other form, by the general interval reading.  A failure at
the bound's n is re-computed at twice the precision before the claim is
refuted, by the general reading alone when the bound's n has at most
CONFIRM_GENERAL_UP_TO multisets.

Next to the bound's n the check reports the smallest N from which the guarantee
holds for every n up to the bound's (the failure probability need not be
monotone in n), within the work limit, so the slack of a theorem is visible.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any, Optional

import sympy
from mpmath.libmp import to_rational

from ...dsl.claims import Claim
from ...dsl.learning import SampleComplexity
from ...dsl.params import Point, point_label, substitute
from ...dsl.spec import Spec
from ...engine.backend import IntervalBackend, exact_float, exact_sign
from ...engine.enumerate import Session
from ...engine.fastlaw import ExpAtoms, bits_for, capture
from ...engine.reading import _call, keywords
from ...errors import EnumerationTooLarge, SpecError
from ...evidence import SampleComplexityEvidence
from ...results import PointResult, Status, Witness
from ..witness import number
from ..workspace import Workspace
from ...engine.decimals import decimal
from ...engine.work import params


SCAN_SHARE = 2_500
"""The search for the smallest working n may enumerate max_work / SCAN_SHARE multisets (20,000 by
default, enough for small populations; raise --max-work for a full scan of larger ones)."""


CONFIRM_GENERAL_UP_TO = 20_000
"""A refutation at the bound's n is confirmed with the general interval reading for every multiset when
there are at most this many multisets (a few seconds at twice the precision), else with the fast reading."""


def least_n(bound: sympy.Expr, dps: int) -> int:
    """The least integer n >= bound, decided with certified digits (and exactly when the bound is
    an integer in disguise): sympy's own ceiling can be off by one for a bound within 10^-100 of
    an integer, and the claim covers n >= bound only."""
    if isinstance(bound, sympy.Integer):
        return int(bound)
    enclosure = IntervalBackend(dps).num(bound)
    lo, hi = (Fraction(*to_rational(end)) for end in enclosure._mpi_)  # the exact ends
    lo, hi = math.ceil(lo), math.floor(hi)
    if lo > hi:  # no integer in the enclosure: the bound lies strictly between hi and lo
        return lo
    if lo == hi:
        sign = exact_sign(bound - lo)
        if sign is not None:
            return lo if sign <= 0 else lo + 1
    raise SpecError(f"sample_complexity: cannot decide the least integer n >= bound = {bound}",
                    "give the bound as an exact number or a simpler expression")


def multisets(records: tuple, n: int) -> int:
    return math.comb(n + len(records) - 1, len(records) - 1)


class SampleComplexityCheck:
    kind = "sample_complexity"

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, SampleComplexity)

    def run(self, spec: Spec, claim: SampleComplexity, point: Point, ws: Workspace) -> PointResult:
        alpha = substitute(claim.alpha, point, "alpha")
        beta = substitute(claim.beta, point, "beta")
        bound = substitute(claim.bound, point, "bound")
        n_bound = least_n(bound, ws.options.precision)
        records = tuple(r for r, _ in claim.population)
        work = multisets(records, n_bound)
        if work > ws.options.max_work // 10:
            raise EnumerationTooLarge(
                f"sample_complexity: the bound asks for n = {n_bound}, which has {work:,} multisets of the "
                f"{len(records)}-record population", "use a smaller population or parameters giving a "
                "smaller bound, or raise --max-work")
        failure = FailureProbability(spec, claim, point, alpha, ws.options.precision)
        at_bound = failure.at(n_bound)
        limit = failure.backend.num(beta)
        result = PointResult(point_label(point), Status.VERIFIED, "",
                             method="exact failure probability over multisets, certified intervals")
        ev = result.evidence = SampleComplexityEvidence()
        smallest, complete = self._smallest(failure, limit, n_bound, ws.options.max_work // SCAN_SHARE)
        ev.n_bound, ev.bound, ev.failure_at_bound = n_bound, str(bound), decimal(at_bound)
        ev.beta, ev.smallest_n, ev.holds_down_to = decimal(beta), smallest if complete else None, smallest
        ev.curve = {str(n): decimal(p) for n, p in sorted(failure.seen.items())}
        if at_bound.b <= limit.a:
            scan = (f"the guarantee holds for every n from {smallest} to {n_bound}" if complete else
                    f"the guarantee holds for every n from {smallest} to {n_bound} (smaller n were not "
                    f"decided: raise --max-work for the full scan)")
            result.message = (f"verified at n = {n_bound}, the least n the claim covers (n >= {bound}): "
                              f"P[error > {alpha}] = {decimal(at_bound)} <= beta = {decimal(beta)}; larger n are "
                              f"not checked (the failure probability need not decrease in n); {scan}")
            ev.verified_n = [n_bound]
            return result
        # The confirmation reads every run with the general interval reading when that is affordable,
        # independently of the fast reading that found the failure; above that, the fast one at 2x digits.
        independent = work <= CONFIRM_GENERAL_UP_TO
        confirm = FailureProbability(spec, claim, point, alpha, 2 * ws.options.precision,
                                     fast=not independent).at(n_bound)
        shown = number(confirm)
        if not confirm.a > IntervalBackend(2 * ws.options.precision).num(beta).b or shown is None:
            result.status = Status.UNKNOWN
            result.message = f"P[error > alpha] at n = {n_bound} cannot be separated from beta at this precision"
            return result
        result.status = Status.REFUTED
        result.witness = Witness(n_bound, None, f"error > {alpha}", shown, decimal(beta))
        result.message = (f"at the bound's n = {n_bound}, P[error > {alpha}] = {shown} > beta = "
                          f"{decimal(beta)} (exact over {multisets(records, n_bound):,} multisets, confirmed at "
                          f"{2 * ws.options.precision} digits)")
        return result

    @staticmethod
    def _smallest(failure: "FailureProbability", limit: Any, n_bound: int,
                  budget: int) -> tuple[Optional[int], bool]:
        """(N, complete): failure <= beta (certified) for every n in [N, n_bound], scanning down from
        the bound's n.  complete is False when the scan stopped at the work budget before reaching
        an n that fails (or n = 1); N is then only how far down the guarantee was seen to hold.

        The failure probability need not be monotone in n (lattice effects), so the first n that
        works is not enough: every n up to the bound's is checked.
        """
        smallest, spent = None, 0
        for n in range(n_bound, 0, -1):
            spent += multisets(failure.records, n)
            if spent > budget and smallest is not None:
                return smallest, False
            value = failure.at(n)
            if not value.b <= limit.a:
                return smallest, value.a > limit.b  # complete only when n is shown to fail
            smallest = n
        return smallest, True


class FailureProbability:
    """P_{S ~ population^n}[error(M(S)) > alpha] for each n, as a certified enclosure (an mpmath interval).

    Two readings, each an enclosure of the same exact value:

    * ``fast=True`` (the default): every multiset weight n!/prod(c_r!) prod(p_r^c_r)
      is an exact integer over the common denominator B^n, and each run of the
      learner that makes at most one draw, an exponential mechanism with exact
      rational scores, eps and sensitivity, is read by :mod:`dpverify.engine.fastlaw`:
      its probability of a bad output is enclosed by integers q_lo, q_hi on the grid
      2^-S, rounded outward.  The sum is then exact integer arithmetic, and
      P lies in [sum N_c q_lo, sum N_c q_hi] / (B^n 2^S).  A run of any other form
      (other primitives, several draws, continuous noise, irrational numbers, an
      error) is read by the general interval reading, and its interval's ends are
      rounded outward onto the same grid.  ``fallbacks`` counts those runs (over every n computed).
    * ``fast=False``: the general interval reading for every multiset (about 350 us
      per multiset at 50 digits), the reference the fast reading is tested against.

    ``workers`` > 1 splits the multisets over forked processes (the sums are exact
    integers, so the result does not depend on the split).
    """

    def __init__(self, spec: Spec, claim: SampleComplexity, point: Point, alpha: sympy.Expr, dps: int,
                 fast: bool = True, workers: int = 1) -> None:
        self.spec, self.claim, self.alpha = spec, claim, alpha
        self.values = params(point)
        self.dps = dps
        self.backend = IntervalBackend(dps)
        self.session = Session(self.backend)
        self.records = tuple(r for r, _ in claim.population)
        self.p = [p for _, p in claim.population]
        self.denominator = math.lcm(*(p.denominator for p in self.p))
        self.numerators = [int(p * self.denominator) for p in self.p]
        self.fast, self.workers = fast, max(1, int(workers))
        self.fallbacks = 0
        self.seen: dict[int, Any] = {}
        self._bad: dict = {}
        self._atoms: dict[int, ExpAtoms] = {}

    def _is_bad(self, output: Any) -> bool:
        """error(output) > alpha, decided exactly (a tie is not bad; a float must be exact)."""
        if output not in self._bad:
            error = self.claim.error(output, **keywords(self.claim.error, self.values, skip=1))
            if isinstance(error, float):
                error = exact_float(error)
            sign = exact_sign(sympy.sympify(error) - self.alpha)
            if sign is None:
                raise SpecError(f"sample_complexity: cannot decide whether the error {error} of output {output!r} "
                                f"exceeds alpha = {self.alpha}", "return the error as an exact rational")
            self._bad[output] = sign > 0
        return self._bad[output]

    def at(self, n: int) -> Any:
        if n not in self.seen:
            self.seen[n] = self._fast(n) if self.fast else self._interval(n)
        return self.seen[n]

    def _interval(self, n: int) -> Any:
        """The general reading: each multiset's law in certified intervals, weights as intervals."""
        total = self.backend.num(0)
        factorial = math.factorial(n)
        for counts in _compositions(n, len(self.records)):
            weight = Fraction(factorial)
            for c, p in zip(counts, self.p):
                weight *= p ** c / math.factorial(c)
            if weight == 0:
                continue
            data = Sample(itertools.chain.from_iterable([r] * c for r, c in zip(self.records, counts)))
            data.counts = dict(zip(self.records, counts))
            law = _call(self.spec.mechanism, data, self.values, self.session)
            failing = [w for o, w in law.items() if self._is_bad(o)]
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
        runs = multisets(self.records, n)
        if self.workers == 1 or runs < PARALLEL_FROM or not _can_fork():
            return self._chunk(n, scale, firsts)
        import concurrent.futures
        import multiprocessing
        chunks = _balanced(firsts, lambda c0: multisets(self.records[1:], n - c0), self.workers * 6)
        global _FORKED
        _FORKED = (self, n, scale)
        try:
            with concurrent.futures.ProcessPoolExecutor(self.workers,
                                                        mp_context=multiprocessing.get_context("fork")) as pool:
                parts = list(pool.map(_forked_chunk, chunks))
        except Exception:  # a spec error in a worker (or a broken pool): redo in-process, which reports it
            return self._chunk(n, scale, firsts)
        finally:
            _FORKED = None
        return tuple(sum(part[i] for part in parts) for i in range(3))

    def _chunk(self, n: int, scale: int, firsts: list) -> tuple[int, int, int]:
        """(L, H, fallbacks) over the multisets whose first record's count is in ``firsts``."""
        records, program = self.records, self.spec.mechanism
        kwargs = keywords(program, self.session.convert(self.values), skip=1)
        atoms = self._atoms.get(scale)
        if atoms is None:
            atoms = self._atoms[scale] = ExpAtoms(bits_for(self.dps), scale)
        one = 1 << scale
        blocks = [(r,) * n for r in records]
        bad = self._is_bad
        low = high = fallbacks = 0
        for counts, weight in _weighted(n, self.numerators, firsts):
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

    def _general(self, data: "Sample", scale: int) -> tuple[int, int]:
        """One multiset's P(bad output) by the general interval reading, as [q_lo, q_hi] / 2^scale."""
        law = _call(self.spec.mechanism, data, self.values, self.session)
        failing = [w for o, w in law.items() if self._is_bad(o)]
        if not failing:
            return 0, 0
        a, b = sum(failing[1:], failing[0])._mpi_
        return _scaled(a, scale, floor=True), _scaled(b, scale, floor=False)


PARALLEL_FROM = 50_000
"""Fewer multisets than this are summed in-process whatever ``workers`` says (forking costs more)."""

_FORKED: Optional[tuple] = None
"""(FailureProbability, n, scale) for the forked workers of :meth:`FailureProbability._sums`."""


def _forked_chunk(firsts: list) -> tuple[int, int, int]:
    failure, n, scale = _FORKED
    return failure._chunk(n, scale, firsts)


def _can_fork() -> bool:
    import multiprocessing
    return "fork" in multiprocessing.get_all_start_methods()


def _balanced(items: list, cost: Any, parts: int) -> list[list]:
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


def _scaled(end: tuple, scale: int, floor: bool) -> int:
    """floor (or ceil) of the mpf ``end`` times 2^scale, exactly."""
    sign, man, exp, _ = end
    if not man:
        if exp:
            raise ArithmeticError("an infinite or undefined probability")
        return 0
    man, shift = int(man), exp + scale
    if sign:
        man = -man
    if shift >= 0:
        return man << shift
    return man >> -shift if floor else -((-man) >> -shift)


def _weighted(n: int, numerators: list[int], firsts: list[int]) -> Any:
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

    def rest(i: int, m: int, prefix: tuple, weight: int) -> Any:
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


class Sample(tuple):
    """A sample as the tuple of its records (in population order) that also knows its ``counts``
    (record -> multiplicity), so a learner that only needs counts can run in O(records), not O(n)."""

    counts: dict


def _compositions(n: int, parts: int) -> Any:
    """Every count vector of ``parts`` non-negative integers summing to n."""
    if parts == 1:
        yield (n,)
        return
    for first in range(n, -1, -1):
        for rest in _compositions(n - first, parts - 1):
            yield (first, *rest)
