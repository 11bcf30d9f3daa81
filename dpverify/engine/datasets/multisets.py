"""Probabilities over i.i.d. samples from a finite population, summed over multisets, certified.

S is n records drawn i.i.d. from a population of r records with exact rational
probabilities p_r.  A program that ignores record order sees only the multiset of
S, so P[bad(M(S))] is a sum over count vectors c (not n-tuples) of the multinomial
probability n!/prod(c_r!) prod(p_r^c_r) times the program's exact probability of a
bad output -- C(n+r-1, r-1) terms instead of r^n.  :class:`MultisetSum` computes
that sum as a certified enclosure (an mpmath interval); what counts as bad is the
caller's predicate (the sample-complexity check's "error > alpha").

That the program ignores the order of its sample is not assumed: every multiset read is also
run in other orderings and the laws compared exactly (:meth:`MultisetSum._check_orders`) --
every ordering of every multiset while the population has at most
:data:`EVERY_ORDERING_UP_TO` sequences of size n, else every ordering of a multiset that has
at most :data:`ORDERINGS` + 1 of them and :data:`ORDERINGS` fixed ones (reversed, rotated,
seeded shuffles) of the others.  Laws that differ raise :class:`OrderDependent`, and the
caller may sum over sequences instead (``sequences=True``: r^n terms, exact weights).
"""
from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import Any, Optional

from ..execution import cluster_sums
from . import counts as by_counts
from ..execution import executor as executors
from ...errors import SpecError
from ..program.backend import IntervalBackend
from .counts import Sample, fresh
from ..program.enumerate import Session, _typed
from ..program.fastlaw import ExpAtoms, Exponent, Unsupported, bits_for, capture, rational, scaled
from ..execution.pool import WorkerFailed, parallel_map
from ..program.reading import _call, keywords

PARALLEL_FROM = 50_000
"""Fewer multisets than this are summed in-process whatever ``workers`` says (forking costs more)."""
REMOTE_FROM = 50_000
"""With a Dask scheduler configured (:mod:`dpverify.engine.execution.executor`), the fast reading's sums over at
least this many multisets are computed on its workers (:mod:`dpverify.engine.execution.cluster_sums`)."""


ORDERINGS = 3
"""Beyond :data:`EVERY_ORDERING_UP_TO`, a multiset with more than ORDERINGS + 1 distinct orderings is also
run in ORDERINGS fixed other ones: reversed, rotated by one, and a seeded shuffle (deterministic)."""
EVERY_ORDERING_UP_TO = 4096
"""At a sample size n whose sequences (r^n over the records of positive probability) are at most this
many, every ordering of every multiset is run and compared: order independence is then shown, not sampled."""


class OrderDependent(Exception):
    """The program's laws on two orderings of one multiset differ (``why`` says how), or could not be shown
    equal exactly (``why`` None): the sum over multisets does not give the failure probability."""

    def __init__(self, n: int, first: tuple, other: tuple, why: Optional[str]) -> None:
        self.n, self.first, self.other, self.why = n, first, other, why
        super().__init__(self.describe())

    @property
    def decided(self) -> bool:
        return self.why is not None

    def describe(self) -> str:
        if self.why is None:
            return (f"its laws on the orderings {tuple(self.first)!r} and {tuple(self.other)!r} of one sample "
                    f"(n = {self.n}) could not be shown equal exactly")
        return (f"the orderings {tuple(self.first)!r} and {tuple(self.other)!r} of one sample (n = {self.n}) give "
                f"different output laws: {self.why}")


def multisets(records: tuple, n: int) -> int:
    """How many multisets of size n the records have: C(n + r - 1, r - 1)."""
    return math.comb(n + len(records) - 1, len(records) - 1)


class MultisetSum:
    """P_{S ~ population^n}[bad(program(S))] for each n, as a certified enclosure (an mpmath interval).

    Two readings, each an enclosure of the same exact value:

    * ``fast=True`` (the default): every multiset weight n!/prod(c_r!) prod(p_r^c_r)
      is an exact integer over the common denominator B^n, and each run of the
      program that makes at most one draw, an exponential mechanism with exact
      rational scores, eps and sensitivity, is read by :mod:`dpverify.engine.program.fastlaw`:
      its probability of a bad output is enclosed by integers q_lo, q_hi on the grid
      2^-S, rounded outward.  The sum is then exact integer arithmetic, and
      P lies in [sum N_c q_lo, sum N_c q_hi] / (B^n 2^S).  A run of any other form
      (other primitives, several draws, continuous noise, irrational numbers, an
      error) is read by the general interval reading, and its interval's ends are
      rounded outward onto the same grid.  ``fallbacks`` counts those runs (over every n computed).
    * ``fast=False``: the general interval reading for every multiset (about 350 us
      per multiset at 50 digits), the reference the fast reading is tested against.

    ``workers`` > 1 splits the multisets over the worker processes of :mod:`dpverify.engine.execution.pool`
    (the sums are exact integers, so the result does not depend on the split).  With a Dask scheduler
    configured (``--scheduler``), sums over at least :data:`REMOTE_FROM` multisets are split over its
    workers instead (:mod:`dpverify.engine.execution.cluster_sums`), with the same exact result.

    With ``counts=True`` (the default, with ``fast``) a program whose law depends on the sample
    only through a linear score of its counts (:mod:`dpverify.engine.datasets.counts`) is not run per
    multiset: the exact weights are summed by exponent vector and each group's share enclosed once
    (``paths[n] == "grouped"``, ``groups[n]`` groups, an enclosure as narrow as the fast reading's),
    or, with more groups than :data:`.counts.GROUP_LIMIT`, the sum is enclosed in float64 interval
    arithmetic (``"float"``: certified, about 14 significant digits).  Otherwise ``paths[n]`` is
    ``"multisets"`` (the fast reading) or ``"general"``.

    Order: a multiset is read in one order, so each multiset read is also run in other orderings and
    its laws compared exactly (see the module docstring); :class:`OrderDependent` is raised when they
    differ or cannot be shown equal.  ``order_log[n]`` says how the order was checked at n:
    ``"every"`` (every ordering of every multiset), ``"some"`` (:data:`ORDERINGS` per multiset that has
    more), or ``"counts"`` (summed by the counts form, whose law is a function of the counts: see
    :mod:`.counts`).  Instances may share one ``order_log``: an n checked once is not checked again.
    With ``sequences=True`` the sum is over the r^n sequences instead (each read as it is; no counts
    form, no order check), for a program that depends on the order of its sample.
    """

    def __init__(self, program: Callable[..., Any], values: Mapping[str, Any],
                 population: tuple[tuple[Any, Fraction], ...], bad: Callable[[Any], bool], dps: int,
                 fast: bool = True, workers: int = 1, counts: bool = True, sequences: bool = False,
                 order_log: Optional[dict] = None) -> None:
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
        self.sequences = sequences
        self.counts = counts and fast and not sequences
        self.order_log: dict[int, str] = {} if order_log is None else order_log
        self.positive = sum(1 for a in self.numerators if a)
        self._exact_session: Optional[Session] = None
        code = getattr(program, "__code__", None)
        self._where = (code.co_filename, code.co_firstlineno) if code else ("<mechanism>", None)
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
                if not self.sequences and self.order_log.get(n) not in ("every", "some"):
                    self.order_log[n] = "every" if self.every_ordering(n) else "some"
            else:
                self.order_log.setdefault(n, "counts")
            self.seen[n] = value
        return self.seen[n]

    def every_ordering(self, n: int) -> bool:
        """Whether every ordering of every multiset of size n is run (at most EVERY_ORDERING_UP_TO sequences)."""
        return self.positive ** n <= EVERY_ORDERING_UP_TO

    def _checks_orders(self, n: int) -> bool:
        return not self.sequences and self.order_log.get(n) not in ("every", "some")

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
        """The general reading: each multiset's law in certified intervals, weights as intervals (or each
        sequence's, with ``sequences``)."""
        total = self.backend.num(0)
        check, every = self._checks_orders(n), self.every_ordering(n)
        for data, counts, weight in self._samples(n):
            law = _call(self.program, data, self.values, self.session)
            if check:
                self._check_orders(n, data, counts, ("law", law), every)
            failing = [w for o, w in law.items() if self.bad(o)]
            if failing:
                total += self.backend.num(weight) * sum(failing[1:], failing[0])
        return total

    def _samples(self, n: int) -> Iterator[tuple[Sample, tuple, Fraction]]:
        """(data, counts, exact probability) for every multiset of size n of positive probability (read
        in population order), or with ``sequences`` for every sequence."""
        if self.sequences:
            scale = Fraction(1, self.denominator ** n)
            for data, counts, weight in self._sequences(n):
                yield data, counts, weight * scale
            return
        factorial = math.factorial(n)
        for counts in compositions(n, len(self.records)):
            weight = Fraction(factorial)
            for c, p in zip(counts, self.p):
                weight *= p ** c / math.factorial(c)
            if weight == 0:
                continue
            data = Sample(itertools.chain.from_iterable([r] * c for r, c in zip(self.records, counts)))
            data.counts = dict(zip(self.records, counts))
            yield data, counts, weight

    def _sequences(self, n: int) -> Iterator[tuple[Sample, tuple, int]]:
        """(data, counts, N) for every sequence of n records of positive probability, N = prod A_(x_i) (its
        probability times B^n)."""
        live = [i for i, a in enumerate(self.numerators) if a]
        for picks in itertools.product(live, repeat=n):
            counts = [0] * len(self.records)
            weight = 1
            for i in picks:
                counts[i] += 1
                weight *= self.numerators[i]
            data = Sample(self.records[i] for i in picks)
            data.counts = dict(zip(self.records, counts))
            yield data, tuple(counts), weight

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
        if self.sequences:
            return self._chunk(n, scale, firsts)
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
        """(L, H, fallbacks) over the multisets whose first record's count is in ``firsts`` (with
        ``sequences``: over every sequence), each multiset's orderings compared (:meth:`_check_orders`)."""
        records, program = self.records, self.program
        kwargs = keywords(program, self.session.convert(self.values), skip=1)
        atoms = self._atoms.get(scale)
        if atoms is None:
            atoms = self._atoms[scale] = ExpAtoms(bits_for(self.dps), scale)
        one = 1 << scale
        blocks = [(r,) * n for r in records]
        bad = self.bad
        check, every = self._checks_orders(n), self.every_ordering(n)
        low = high = fallbacks = 0
        for data, counts, weight in (self._sequences(n) if self.sequences else
                                     self._weighted_samples(n, firsts, blocks)):
            try:
                exponent, outputs = capture(lambda: program(fresh(data), **kwargs), self.backend)
            except Exception:  # not of the fast form (or an error the general reading reports properly)
                fallbacks += 1
                law = _call(self.program, data, self.values, self.session)
                q_lo, q_hi = self._scaled(law, scale)
                base: tuple = ("law", law)
            else:
                if exponent is None:
                    q_lo = q_hi = one if bad(outputs[0][0]) else 0
                else:
                    chosen = [i for output, indices in outputs if bad(output) for i in indices]
                    q_lo, q_hi = atoms.probability(exponent, chosen)
                base = ("fast", exponent, outputs)
            if check:
                self._check_orders(n, data, counts, base, every, kwargs)
            low += weight * q_lo
            high += weight * q_hi
        return low, high, fallbacks

    def _weighted_samples(self, n: int, firsts: list, blocks: list) -> Iterator[tuple[Sample, tuple, int]]:
        for counts, weight in weighted(n, self.numerators, firsts):
            data = Sample(sum((block[:c] for block, c in zip(blocks, counts)), ()))
            data.counts = dict(zip(self.records, counts))
            yield data, counts, weight

    def _scaled(self, law: dict, scale: int) -> tuple[int, int]:
        """One law's P(bad output), read by the general interval reading, as [q_lo, q_hi] / 2^scale."""
        failing = [w for o, w in law.items() if self.bad(o)]
        if not failing:
            return 0, 0
        a, b = sum(failing[1:], failing[0])._mpi_
        return scaled(a, scale, floor=True), scaled(b, scale, floor=False)

    def _general(self, data: Sample, scale: int) -> tuple[int, int]:
        """One multiset's P(bad output) by the general interval reading, as [q_lo, q_hi] / 2^scale."""
        return self._scaled(_call(self.program, data, self.values, self.session), scale)

    # ----- the order of the sample ------------------------------------------------------------------

    def _check_orders(self, n: int, data: Sample, counts: tuple, base: tuple, every: bool,
                      kwargs: Optional[dict] = None) -> None:
        """Run the program on other orderings of the multiset ``data`` (:func:`orderings`) and compare
        each law with ``base`` (``("fast", exponent, outputs)`` from :func:`.fastlaw.capture`, or
        ``("law", law)`` from the general reading) exactly; raise :class:`OrderDependent` when one
        differs or cannot be shown equal."""
        try:
            self._orderings_agree(n, data, counts, base, every, kwargs)
        except SpecError as err:  # a NaN output (outputs are compared as _typed keys): at the program
            raise err.located(*self._where) from None

    def _orderings_agree(self, n: int, data: Sample, counts: tuple, base: tuple, every: bool,
                         kwargs: Optional[dict]) -> None:
        if kwargs is None:
            kwargs = keywords(self.program, self.session.convert(self.values), skip=1)
        program = self.program
        for other in orderings(data, counts, every):
            sample = Sample(other)
            sample.counts = data.counts
            got = None
            if base[0] == "fast":
                try:
                    got = capture(lambda: program(fresh(sample), **kwargs), self.backend)
                except Exception:  # noqa: BLE001 (another form on this ordering: compared by the readings below)
                    got = None
            if got is not None:
                why = fast_difference(base[1], base[2], got[0], got[1])
            else:
                why = None
            if why is None:
                why = self._slow_difference(data, sample, base)
            if why is not False:
                raise OrderDependent(n, data, other, why)

    def _slow_difference(self, data: Sample, other: Sample, base: tuple) -> Any:
        """False when the laws of ``data`` and ``other`` are equal exactly, a reason when they differ, None
        when neither is shown: the interval reading first (the same outputs with the same point weights are
        equal; a disjoint weight or an output of positive weight on one side only differs), then the exact
        sympy reading, compared as the ``symmetric=True`` check does (:mod:`.symmetry`)."""
        first = base[1] if base[0] == "law" else _call(self.program, data, self.values, self.session)
        second = _call(self.program, other, self.values, self.session)
        found = interval_difference(first, second)
        if found is not None:
            return found
        from .symmetry import _compare, _Exact, _same_trace, _traced  # noqa: PLC0415
        if self._exact_session is None:
            self._exact_session = Session(_Exact())
        try:
            law_a, trace_a = _traced(self.program, data, self.values, self._exact_session)
            law_b, trace_b = _traced(self.program, other, self.values, self._exact_session)
            if _same_trace(trace_a, trace_b):
                return False
            return _compare(law_a, law_b)
        except Exception:  # noqa: BLE001 (the exact reading cannot read it: not shown either way)
            return None


def orderings(data: tuple, counts: tuple, every: bool, some: int = ORDERINGS) -> Iterator[tuple]:
    """The orderings of the multiset ``data`` (read in population order) other than ``data`` itself that
    the order check runs: all of them when ``every`` or when there are at most ``some`` others, else
    ``some`` fixed ones -- reversed, rotated by one, and seeded shuffles (the same on every run)."""
    n = len(data)
    distinct = math.factorial(n)
    for c in counts:
        distinct //= math.factorial(c)
    if distinct <= 1:
        return
    if every or distinct - 1 <= some:
        from .symmetry import permutations  # noqa: PLC0415
        orders = permutations(tuple(data))
        next(orders)  # data itself
        yield from orders
        return
    seen = {tuple(data)}
    made = 0
    fixed = [tuple(reversed(data)), tuple(data[1:]) + tuple(data[:1])]
    for attempt in range(4 * some):
        if attempt < len(fixed):
            other = fixed[attempt]
        else:
            other = tuple(map(data.__getitem__, _shuffle(n, attempt)))
        if other in seen:
            continue
        seen.add(other)
        yield other
        made += 1
        if made == some:
            return


_SHUFFLES: dict = {}


def _shuffle(n: int, attempt: int) -> list[int]:
    """A fixed permutation of range(n) (seeded by n and the attempt: the same on every run)."""
    found = _SHUFFLES.get((n, attempt))
    if found is None:
        found = list(range(n))
        random.Random(f"dpverify-order:{n}:{attempt}").shuffle(found)
        if len(_SHUFFLES) > 4096:
            _SHUFFLES.clear()
        _SHUFFLES[(n, attempt)] = found
    return found


_PLAIN = frozenset({int, bool, str, bytes, Fraction, type(None)})
"""Types whose equal values of one type have one text: equal and of the same type is the same output."""


def same_output(a: Any, b: Any) -> bool:
    """Whether two outputs are the same in the sense of :func:`.enumerate._typed` (equal, of the same types
    and the same text), without building the keys for the common plain values and tuples of them."""
    kind = type(a)
    if kind is not type(b):
        return False
    if kind in _PLAIN:
        return a == b
    if kind is tuple:
        if len(a) != len(b) or a != b:
            return False
        return all(type(x) is type(y) and (type(x) in _PLAIN or same_output(x, y)) for x, y in zip(a, b))
    return _typed(a) == _typed(b)


POLYNOMIAL_LIMIT = 1_000_000
"""fast_difference multiplies two laws' polynomials (products of their numbers of distinct terms) only up
to this size; beyond, the caller compares by the readings."""


def fast_difference(exponent_a: Optional[Exponent], outputs_a: list, exponent_b: Optional[Exponent],
                    outputs_b: list) -> Any:
    """Compare two laws read by :func:`.fastlaw.capture`, exactly: False when equal, a reason when they
    differ, None when too large to decide here.

    A law is P(y) = N_y(t) / Z(t) with t = e^(1/D): N_y is the sum of t^(D x_i) over the candidates i
    whose output is y (x_i = eps u(i) / (2 Delta) - max, exact rationals; a program without a draw is
    N_y = 1 for its output), Z the sum over every candidate.  Outputs are the same when equal, of the
    same types and the same text (:func:`.enumerate._typed`).  The same multiset of (output, x_i) gives
    the same law; otherwise, since t is transcendental (e is), the laws are equal exactly when
    N_y Z' = N'_y Z as polynomials, for every output y."""
    if _identical(exponent_a, outputs_a, exponent_b, outputs_b):
        return False
    terms_a, terms_b = _terms(exponent_a, outputs_a), _terms(exponent_b, outputs_b)
    if _counted(terms_a) == _counted(terms_b):
        return False
    denominator = math.lcm(*(x.denominator for _, _, x in terms_a + terms_b))
    polys_a, total_a, shown = _polynomials(terms_a, denominator)
    polys_b, total_b, shown_b = _polynomials(terms_b, denominator)
    shown.update(shown_b)
    if len(total_a) * len(total_b) * (len(polys_a) + len(polys_b)) > POLYNOMIAL_LIMIT:
        return None
    for key in dict.fromkeys([*polys_a, *polys_b]):
        left = _times(polys_a.get(key, {}), total_b)
        right = _times(polys_b.get(key, {}), total_a)
        if left != right:
            return (f"P(o={shown[key]!r}) is {_approximate(polys_a.get(key, {}), total_a, denominator)} on one "
                    f"ordering and {_approximate(polys_b.get(key, {}), total_b, denominator)} on the other")
    return False


def _identical(exponent_a: Optional[Exponent], outputs_a: list, exponent_b: Optional[Exponent],
               outputs_b: list) -> bool:
    """The common case: the same exact exponents per candidate (the same factor and scores) and the same
    output on the same candidates."""
    if exponent_a is None or exponent_b is None:
        if exponent_a is not exponent_b:
            return False
    elif exponent_a.keys != exponent_b.keys or exponent_a.values[0] != exponent_b.values[0]:
        return False
    if len(outputs_a) != len(outputs_b):
        return False
    return all(ia == ib and same_output(oa, ob) for (oa, ia), (ob, ib) in zip(outputs_a, outputs_b))


def _terms(exponent: Optional[Exponent], outputs: list) -> list[tuple[Any, Any, Fraction]]:
    """(typed output, output, x_i - max x) per candidate; one term of exponent 0 without a draw."""
    if exponent is None:
        return [(_typed(outputs[0][0]), outputs[0][0], Fraction(0))]
    factor, scores = exponent.values
    xs = [factor * rational(score) for score in scores]
    top = max(xs)
    terms = []
    for output, indices in outputs:
        key = _typed(output)
        terms.extend((key, output, xs[i] - top) for i in indices)
    return terms


def _counted(terms: list) -> dict:
    found: dict = {}
    for key, _, x in terms:
        found[(key, x)] = found.get((key, x), 0) + 1
    return found


def _polynomials(terms: list, denominator: int) -> tuple[dict, dict, dict]:
    """({typed output: {power: count}}, {power: count} of Z, {typed output: output}) in s = e^(-1/D)."""
    polys: dict = {}
    total: dict = {}
    shown: dict = {}
    for key, output, x in terms:
        power = int(-x * denominator)
        poly = polys.setdefault(key, {})
        poly[power] = poly.get(power, 0) + 1
        total[power] = total.get(power, 0) + 1
        shown.setdefault(key, output)
    return polys, total, shown


def _times(a: dict, b: dict) -> dict:
    out: dict = {}
    for i, x in a.items():
        for j, y in b.items():
            out[i + j] = out.get(i + j, 0) + x * y
    return {k: v for k, v in out.items() if v}


def _approximate(poly: dict, total: dict, denominator: int) -> str:
    """N(s)/Z(s) at s = e^(-1/D), to a few digits (for the message only)."""
    def value(p: dict) -> float:
        return math.fsum(c * math.exp(-k / denominator) for k, c in p.items())
    try:
        return f"{value(poly) / value(total):.6g}"
    except (OverflowError, ZeroDivisionError):
        return "another value"


def interval_difference(a: dict, b: dict) -> Any:
    """Two laws of the general interval reading: False when they are the same outputs (:func:`.enumerate._typed`)
    with the same point weights (equal exactly), a reason when they certainly differ (an output whose weight
    is certainly positive on one side only, or disjoint weights), else None."""
    if not all(hasattr(w, "a") and hasattr(w, "b") for w in (*a.values(), *b.values())):
        return None  # densities (continuous noise): left to the exact reading
    typed_a = {_typed(o): (o, w) for o, w in a.items()}
    typed_b = {_typed(o): (o, w) for o, w in b.items()}
    for mine, theirs in ((typed_a, typed_b), (typed_b, typed_a)):
        for key, (output, weight) in mine.items():
            if key not in theirs and weight.a > 0:
                return f"the output {output!r} is possible on one ordering only"
    same = typed_a.keys() == typed_b.keys()
    for key in typed_a.keys() & typed_b.keys():
        output, weight = typed_a[key]
        other = typed_b[key][1]
        if weight.b < other.a or other.b < weight.a:
            return f"P(o={output!r}) is {weight} on one ordering and {other} on the other"
        if not (weight.a == weight.b == other.a == other.b):
            same = False
    return False if same else None


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


__all__ = ["EVERY_ORDERING_UP_TO", "ORDERINGS", "OrderDependent", "PARALLEL_FROM", "REMOTE_FROM", "MultisetSum",
           "Sample", "balanced", "compositions", "fast_difference", "interval_difference", "multisets", "orderings",
           "same_output", "scaled", "weighted"]
