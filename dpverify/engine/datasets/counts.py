"""Sums over multisets without running the learner on each: its score as a linear form in the counts.

:class:`~.multisets.MultisetSum` runs the program once per multiset (C(n + r - 1, r - 1) runs:
10.8 million at n = 400 on four records).  When the program is one exponential mechanism whose
score is a query the engine can read -- ``dp.count``/``dp.total``/``dp.mean`` of a record term and
their linear combinations, passed as ``score.on(data)`` -- the law of a run depends on the sample
only through its counts c, and linearly: the exponent of candidate t is

    x_t(c) = (1/D) sum_r c_r M[r][t] + (a constant that cancels)

with exact integers M and D.  This module finds that form and sums with it:

* :func:`trace` runs the program once (and once per branch) on a *sealed* sample of n
  placeholders: it may take its length, iterate it and bind it to a query, but any use of a
  record (comparing, hashing, indexing, reading ``counts``) raises a BaseException the program
  cannot swallow unseen, and the run is not of the form.  So everything the program does
  outside the score -- the candidates, eps, the sensitivity, the output of each branch -- is the
  same for every multiset of size n.  The score's record terms are then evaluated on the real
  records (exact rationals only), and the form is cross-checked against the ordinary fast
  reading (:func:`.fastlaw.capture`) on real samples, each in several orders (in population order,
  reversed, rotated, shuffled): the same exact scores, factor and outputs (the same types and text).
  Anything else returns None and the caller sums multiset by multiset as before.
* :func:`grouped` sums the exact multinomial integer weights of the count vectors by the
  exponent vector they give (a dynamic programme over the records, keyed exactly), so the
  learner's share of bad outputs is enclosed once per distinct exponent vector (records the
  score cannot tell apart are merged first).  The result is exact integer arithmetic, as in
  :class:`~.multisets.MultisetSum`'s fast reading: sum of N_g * [q_lo, q_hi] over B^n 2^S.
* When there are too many groups (on four records the exponent vector can determine the counts),
  :func:`floating` encloses the same sum over every count vector with numpy in float64
  *interval* arithmetic: every operation is IEEE round-to-nearest, so stepping its result one
  unit outward (``nextafter``) bounds the exact result; the exponentials come from mpmath
  enclosures, the weights from exact integers, and the sums from ``math.fsum`` (correctly
  rounded) stepped outward.  Certified, about 14 significant digits instead of ~dps.
"""
from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import numpy as np
from mpmath.ctx_iv import MPIntervalContext
from mpmath.libmp import from_float, to_float

from ...dsl.laws import Exponential
from ...dsl.queries import BoundScore, Linear
from ...errors import SpecError
from ..program.enumerate import _typed
from ..program.fastlaw import Unsupported, _factor, capture, rational, scaled
from ..program.run import ACTIVE

GROUP_LIMIT = 400_000
"""The dynamic programme over the counts gives up (for the float enclosure) above this many states."""
ATOM_LIMIT = 2_000_000
"""The largest number of distinct exponent differences (the table of certified exponentials)."""
CROSS_CHECKS = 8
"""Real samples on which the traced form is compared with the ordinary fast reading."""


class _Sealed(BaseException):
    """A sealed record was used: the program reads the data outside the score (not of the form)."""


class _SealedRecord:
    """The placeholder of one record of a sealed sample: it can be passed around, nothing more."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        _refuse("the program used a record of the sample outside its score")

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __hash__ = __bool__ = _refuse  # type: ignore
    __getitem__ = __iter__ = __len__ = __contains__ = __int__ = __float__ = __index__ = _refuse  # type: ignore
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _refuse
    __neg__ = __abs__ = __call__ = __getattr__ = _refuse

    def __repr__(self) -> str:
        return "<sealed record>"


class Sample(tuple):
    """A sample as the tuple of its records (in population order) that also knows its ``counts``
    (record -> multiplicity), so a learner that only needs counts can run in O(records), not O(n).

    ``counts`` is read-only: each read returns a fresh read-only view (``types.MappingProxyType``) of a
    fresh copy, so a program that writes to it gets a TypeError, and nothing it does to what it read can
    reach a later run on the same sample object (the fast readings replay a program on one sample)."""

    @property
    def counts(self) -> Mapping:
        return MappingProxyType(dict(tuple.__getattribute__(self, "__dict__")["_counts"]))

    @counts.setter
    def counts(self, value: Mapping) -> None:
        tuple.__getattribute__(self, "__dict__")["_counts"] = tuple(dict(value).items())  # immutable pairs

    def __setattr__(self, name: str, value: Any) -> None:
        if name != "counts":
            raise TypeError(f"a sample's attributes are read-only (the program set {name!r})")
        Sample.counts.fset(self, value)

    def __delattr__(self, name: str) -> None:
        raise TypeError(f"a sample's attributes are read-only (the program deleted {name!r})")

    @staticmethod
    def replay(data: "Sample") -> "Sample":
        """A new sample object with ``data``'s records and counts, for one run of a replayed program: whatever
        a run leaves on its sample object (``data.__dict__``) is not seen by the next run."""
        kind = tuple.__getattribute__(data, "__class__")
        copy = tuple.__new__(kind, tuple.__getitem__(data, slice(None)))
        tuple.__getattribute__(copy, "__dict__")["_counts"] = tuple.__getattribute__(data, "__dict__")["_counts"]
        return copy


def fresh(data: Any) -> Any:
    """:meth:`Sample.replay` of a sample, anything else as it is."""
    return Sample.replay(data) if isinstance(data, Sample) else data


class SealedSample(tuple):
    """n sealed records (distinct placeholders, so that a score bound to a part of the sample, or to
    one record repeated, is told apart from one bound to the whole): its length and its placeholders
    are all a program can learn from it."""

    @property
    def counts(self) -> dict:
        _refuse("the program read the sample's counts")

    def __reduce__(self) -> Any:
        _refuse("the program pickled the sample")


def _refuse(why: str) -> Any:
    """Mark the sealed run as not of the form (so a program that swallows the exception is still
    refused) and leave it."""
    runner = ACTIVE.get()
    if isinstance(runner, _Tracer) and runner.refused is None:
        runner.refused = why
    raise _Sealed(why)


@dataclass(frozen=True)
class CountsForm:
    """One size n: x_t(c) = (sum_r c_r M[r][t]) / D up to a constant, per candidate t, and the
    output of each candidate; ``scores`` maps counts to the exact scores (for the cross-check)."""

    n: int
    exponents: tuple[tuple[int, ...], ...]
    """M[r][t], normalised so that M[r][0] = 0."""
    denominator: int
    bad: tuple[bool, ...]
    """Whether candidate t's output is bad."""
    factor: Fraction
    values: tuple[tuple[Fraction, ...], ...]
    """The score's part per record and candidate; the score is sum_r c_r values[r][t] + constant."""
    constant: Fraction
    outputs: tuple


class _Tracer:
    """The runner of a sealed run: one exponential draw, whose score is a readable query."""

    __slots__ = ("backend", "primitive", "layout", "choice", "draws", "refused")

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.primitive: Optional[Exponential] = None
        self.layout: list = []
        self.choice = 0
        self.draws = 0
        self.refused: Optional[str] = None

    def __getattr__(self, name: str) -> Any:
        _refuse(f"a primitive asked the runner for {name!r}")

    def draw(self, make: Callable[[], Any]) -> Any:
        self.draws += 1
        if self.draws > 1:
            _refuse("more than one draw")
        if self.primitive is None:
            primitive = make()
            if type(primitive) is not Exponential:
                _refuse(f"a {type(primitive).__name__} draw")
            index: dict = {}
            for i, candidate in enumerate(primitive.candidates):
                index.setdefault(candidate, []).append(i)
            self.primitive, self.layout = primitive, list(index.values())
        return self.primitive.candidates[self.layout[self.choice][0]]


def _sealed_run(program: Callable[[], Any], tracer: _Tracer) -> Any:
    """One run of the program on the sealed sample; raises _Sealed when it is not of the form."""
    token = ACTIVE.set(tracer)
    try:
        output = program()
        hash(output)
    except _Sealed:
        raise
    except Exception as exc:  # an error, or a refusal turned into one: not of the form
        raise _Sealed(f"{type(exc).__name__}: {exc}") from None
    finally:
        ACTIVE.reset(token)
    if tracer.refused is not None:  # the program swallowed the refusal
        raise _Sealed(tracer.refused)
    if tracer.draws != 1:
        raise _Sealed("not exactly one draw")
    return output


def trace(program: Callable[..., Any], kwargs: Mapping[str, Any], records: tuple, n: int,
          bad: Callable[[Any], bool], backend: Any) -> Optional[CountsForm]:
    """The counts form of ``program`` on samples of size n from ``records``, or None (see the module)."""
    if n < 1:
        return None
    sealed = SealedSample(_SealedRecord() for _ in range(n))
    tracer = _Tracer(backend)
    try:
        first = _sealed_run(lambda: program(sealed, **kwargs), tracer)
        outputs = [first]
        for choice in range(1, len(tracer.layout)):
            tracer.choice, tracer.draws = choice, 0
            outputs.append(_sealed_run(lambda: program(sealed, **kwargs), tracer))
        form = _form(tracer.primitive, tracer.layout, outputs, records, sealed, bad)
    except (_Sealed, Exception):  # not of the form, or a term or bad() that raises: the per-multiset
        return None                # reading reports such an error properly
    if form is None or not _agrees(form, program, kwargs, records, backend):
        return None
    return form


def _form(primitive: Exponential, layout: list, outputs: list, records: tuple, sealed: SealedSample,
          bad: Callable[[Any], bool]) -> Optional[CountsForm]:
    score, n = primitive.score, len(sealed)
    if not isinstance(score, BoundScore) or type(score.query) is not Linear:
        return None
    if len(score.data) != n or {id(x) for x in score.data} != {id(x) for x in sealed}:
        return None  # bound to other data than the whole sample (in any order)
    query = score.query
    factor, _ = _factor(primitive.eps, primitive.sensitivity)
    candidates = primitive.candidates
    values = []
    for record in records:
        row = []
        for candidate in candidates:
            value = Fraction(0)
            for coefficient, is_mean, term in query.folded():
                part = rational(term(record, candidate))
                if part is None:
                    return None
                value += coefficient * part / (n if is_mean else 1)
            row.append(value)
        values.append(tuple(row))
    constant = rational(query.const)
    if constant is None:
        return None
    weighted = [[factor * v for v in row] for row in values]  # x_t = sum_r c_r weighted[r][t] + constant
    denominator = math.lcm(*(v.denominator for row in weighted for v in row))
    exponents = tuple(tuple(int(v * denominator) - int(row[0] * denominator) for v in row) for row in weighted)
    output_of = [None] * len(candidates)
    for indices, output in zip(layout, outputs):
        for i in indices:
            output_of[i] = output
    flags = tuple(bool(bad(output)) for output in output_of)
    return CountsForm(n, exponents, denominator, flags, factor, tuple(values), constant, tuple(output_of))


def _agrees(form: CountsForm, program: Callable[..., Any], kwargs: Mapping[str, Any], records: tuple,
            backend: Any) -> bool:
    """The form against the ordinary fast reading of real samples: the same exact scores, factor and
    output per candidate (a program that behaves differently on a sealed sample is caught here), each
    sample read in several orders (:func:`_orders`): the form is a function of the counts, so a program
    whose law on some probe depends on the order of its sample differs from it there and is refused."""
    for counts in _probes(len(records), form.n):
        ordered = [r for r, c in zip(records, counts) for _ in range(c)]
        expected = [sum((c * row[t] for c, row in zip(counts, form.values)), form.constant)
                    for t in range(len(form.bad))]
        for order in _orders(ordered, counts):
            data = Sample(order)
            data.counts = dict(zip(records, counts))
            try:
                exponent, outputs = capture(lambda: program(fresh(data), **kwargs), backend)
            except Exception:  # noqa: BLE001 (not of the fast form on a real sample: do not use the form)
                return False
            if exponent is None:
                return False
            factor, scores = exponent.values
            if factor != form.factor or list(scores) != expected:
                return False
            try:
                for output, indices in outputs:
                    if any(_typed(form.outputs[i]) != _typed(output) for i in indices):
                        return False
            except SpecError:  # a NaN output: the per-multiset reading refuses it properly
                return False
    return True


def _orders(ordered: list, counts: tuple) -> list[tuple]:
    """A probe sample in population order, reversed, rotated by one and a seeded shuffle (distinct ones)."""
    shuffled = list(ordered)
    random.Random(f"dpverify-counts:{tuple(counts)}").shuffle(shuffled)
    orders = [tuple(ordered), tuple(reversed(ordered)), tuple(ordered[1:] + ordered[:1]), tuple(shuffled)]
    return list(dict.fromkeys(orders))


def _probes(r: int, n: int) -> list[tuple]:
    """A few count vectors of size n: each record alone, an even split, and skewed splits."""
    probes = [tuple(n if i == j else 0 for i in range(r)) for j in range(r)]
    even = [n // r + (i < n % r) for i in range(r)]
    probes.append(tuple(even))
    for shift in range(1, CROSS_CHECKS - r):
        weights = [(i * 7 + shift * 3) % 5 + 1 for i in range(r)]
        total = sum(weights)
        counts = [n * w // total for w in weights]
        counts[shift % r] += n - sum(counts)
        probes.append(tuple(counts))
    return list(dict.fromkeys(probes))


def merged(form: CountsForm, numerators: list[int]) -> tuple[list[tuple[int, ...]], list[int]]:
    """The records' exponent rows with equal rows merged (their probabilities added): the multinomial
    over the merged classes is the sum of the multinomial over the records, exactly."""
    rows: dict = {}
    for row, a in zip(form.exponents, numerators):
        rows[row] = rows.get(row, 0) + a
    return list(rows), list(rows.values())


# ----- the exact sum, grouped by exponent vector ------------------------------------------------


def grouped(rows: list[tuple[int, ...]], numerators: list[int], n: int,
            limit: Optional[int] = None) -> Optional[dict[tuple, int]]:
    """{exponent vector K: sum of n!/prod c! prod A^c over the count vectors c with sum_r c_r row_r = K},
    or None when the dynamic programme would hold more than ``limit`` (:data:`GROUP_LIMIT`) states."""
    limit = GROUP_LIMIT if limit is None else limit
    if math.comb(n + len(rows) - 1, len(rows) - 1) > limit and injective(rows):
        return None  # every count vector is its own group: too many, known without trying
    width = len(rows[0])
    span = n * max(max(abs(v) for v in row) for row in rows) + 1
    base = 2 * span + 1
    encode = lambda vector: sum((v + span) * base ** t for t, v in enumerate(vector))  # noqa: E731
    steps = [sum(v * base ** t for t, v in enumerate(row)) for row in rows]
    states: dict[tuple[int, int], int] = {(0, encode((0,) * width)): 1}
    for j, (step, a) in enumerate(zip(steps, numerators)):
        last = j == len(rows) - 1
        following: dict[tuple[int, int], int] = {}
        for (used, key), weight in states.items():
            left = n - used
            for c in ((left,) if last else range(left + 1)):
                w = weight * math.comb(left, c) * a ** c
                if w:
                    k = (used + c, key + c * step)
                    following[k] = following.get(k, 0) + w
        if len(following) > limit:
            return None
        states = following
    out: dict[tuple, int] = {}
    for (_, key), weight in states.items():
        vector = tuple((key // base ** t) % base - span for t in range(width))
        out[vector] = out.get(vector, 0) + weight
    return out


def injective(rows: list[tuple[int, ...]]) -> bool:
    """Whether count vectors of one size n give distinct exponent vectors: c -> (sum_r c_r row_r, sum_r c_r)
    is one-to-one exactly when the rows extended by a 1 are linearly independent (exact elimination)."""
    matrix = [[Fraction(v) for v in row] + [Fraction(1)] for row in rows]
    rank, width = 0, len(matrix[0])
    for column in range(width):
        pivot = next((i for i in range(rank, len(matrix)) if matrix[i][column] != 0), None)
        if pivot is None:
            continue
        matrix[rank], matrix[pivot] = matrix[pivot], matrix[rank]
        for i in range(len(matrix)):
            if i != rank and matrix[i][column] != 0:
                f = matrix[i][column] / matrix[rank][column]
                matrix[i] = [a - f * b for a, b in zip(matrix[i], matrix[rank])]
        rank += 1
    return rank == len(rows)


class Atoms:
    """e^(-k/D) for integers k >= 0, certified: as integers on the grid 2^-bits (lo <= e 2^bits <= hi),
    and as float64 intervals; computed once by repeated interval multiplication."""

    def __init__(self, denominator: int, bits: int) -> None:
        self.denominator, self.bits = denominator, bits
        self.ctx = MPIntervalContext()
        self.ctx.prec = bits + 80
        self.step = self.ctx.exp(self.ctx.mpf(-1) / self.ctx.mpf(denominator))
        self.values = [self.ctx.mpf(1)]

    def upto(self, k: int) -> None:
        if k >= ATOM_LIMIT:
            raise Unsupported(f"{k:,} exponentials to tabulate")
        while len(self.values) <= k:
            self.values.append(self.values[-1] * self.step)

    def integers(self, k: int) -> tuple[int, int]:
        self.upto(k)
        a, b = self.values[k]._mpi_
        return scaled(a, self.bits, floor=True), scaled(b, self.bits, floor=False)

    def floats(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Float64 arrays lo, hi with lo[i] <= e^(-i/D) <= hi[i] for i <= k."""
        self.upto(k)
        lo, hi = np.empty(k + 1), np.empty(k + 1)
        for i in range(k + 1):
            lo[i], hi[i] = _float_ends(self.values[i])
        return lo, hi


def _float_ends(value: Any) -> tuple[float, float]:
    """Floats enclosing an mpmath interval (one step outward unless the end is exactly a float)."""
    from mpmath.libmp import to_float, from_float  # noqa: PLC0415
    a, b = value._mpi_
    lo, hi = to_float(a), to_float(b)
    if from_float(lo) != a:
        lo = float(np.nextafter(lo, -np.inf))
    if from_float(hi) != b:
        hi = float(np.nextafter(hi, np.inf))
    return max(lo, 0.0), hi


def share(differences: tuple, bad: tuple, lows: list[int], highs: list[int], scale: int) -> tuple[int, int]:
    """[q_lo, q_hi] with q_lo / 2^scale <= sum_bad e^(x_t) / sum_t e^(x_t) <= q_hi / 2^scale, where
    ``differences`` are max_s x_s - x_t in units of 1/D and lows[k] <= e^(-k/D) 2^bits <= highs[k]."""
    num_lo = num_hi = den_lo = den_hi = 0
    for k, is_bad in zip(differences, bad):
        lo, hi = lows[k], highs[k]
        den_lo += lo
        den_hi += hi
        if is_bad:
            num_lo += lo
            num_hi += hi
    if num_hi == 0:
        return 0, 0
    one = 1 << scale
    if num_lo == den_lo and num_hi == den_hi:
        return one, one
    return (num_lo << scale) // den_hi, min(one, -((-(num_hi << scale)) // den_lo))


def exact_sum(groups: dict[tuple, int], bad: tuple, atoms: Atoms, scale: int) -> tuple[int, int]:
    """(L, H) with L <= P * B^n * 2^scale <= H: the groups' integer weights times their shares."""
    spread = max((max(vector) - min(vector) for vector in groups), default=0)
    pairs = [atoms.integers(k) for k in range(spread + 1)]
    lows, highs = [p[0] for p in pairs], [p[1] for p in pairs]
    low = high = 0
    seen: dict = {}
    for vector, weight in groups.items():
        top = max(vector)
        key = tuple(top - v for v in vector)
        found = seen.get(key)
        if found is None:
            found = seen[key] = share(key, bad, lows, highs, scale)
        low += weight * found[0]
        high += weight * found[1]
    return low, high


# ----- the float64 interval sum over every count vector ------------------------------------------


def _down(x: np.ndarray) -> np.ndarray:
    return np.nextafter(x, -np.inf)


def _up(x: np.ndarray) -> np.ndarray:
    return np.nextafter(x, np.inf)


def _factors(numerators: list[int], denominator: int, n: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per record and count c <= n: (lo, hi, e) with lo 2^e <= p^c / c! <= hi 2^e, lo in [1/2, 1] (or 0)."""
    out = []
    for a in numerators:
        lo, hi, ex = np.zeros(n + 1), np.zeros(n + 1), np.zeros(n + 1, dtype=np.int64)
        num, den = 1, 1
        for c in range(n + 1):
            if c:
                num *= a
                den *= denominator * c
            if num:
                e = num.bit_length() - den.bit_length()
                shift = 60 - e  # value * 2^60 / 2^e, floor and ceiling as 61..62-bit integers
                top = num << shift if shift >= 0 else num
                bottom = den if shift >= 0 else den << -shift
                q, r = divmod(top, bottom)
                lo[c] = math.ldexp(_float_floor(q), -60)
                hi[c] = math.ldexp(_float_ceil(q + (r > 0)), -60)
                ex[c] = e
        out.append((lo, hi, ex))
    return out


def _float_floor(q: int) -> float:
    """The largest float <= q."""
    f = float(q)
    return f if f <= q else float(np.nextafter(f, -np.inf))


def _float_ceil(q: int) -> float:
    """The smallest float >= q."""
    f = float(q)
    return f if f >= q else float(np.nextafter(f, np.inf))


def floating(rows: list[tuple[int, ...]], numerators: list[int], denominator: int, n: int, bad: tuple,
             atoms: Atoms, ctx: Any) -> Any:
    """The failure probability as an mpmath interval (``ctx``), summed over every count vector in float64
    interval arithmetic (see the module docstring)."""
    bad_index = [t for t, b in enumerate(bad) if b]
    good_index = [t for t, b in enumerate(bad) if not b]
    if not bad_index:
        return ctx.mpf(0)
    if not good_index:
        return ctx.mpf(1)
    spread = n * max(max(row) - min(row) for row in rows)  # max_t x_t - x_s <= sum_r c_r (max - min of row r)
    if n * max(abs(v) for row in rows for v in row) >= 1 << 60:
        raise Unsupported("exponents too large for 64-bit integers")
    table_lo, table_hi = atoms.floats(spread)
    factors = _factors(numerators, denominator, n)
    # The scale: the largest count vector's probability is at most 1, so values are kept relative to
    # 2^-log2(n!) (the product of the factors p^c/c! is the probability over n!).
    reference = -(math.factorial(n).bit_length() - 1)
    rows_arr = [np.asarray(row, dtype=np.int64) for row in rows]
    total_lo, total_hi = [], []
    tail = min(3, len(rows))
    for prefix, used in _prefixes(len(rows) - tail, n):
        head_lo, head_hi, head_e = 1.0, 1.0, 0
        head_k = np.zeros(len(bad), dtype=np.int64)
        for j, c in enumerate(prefix):
            lo, hi, ex = factors[j]
            head_lo, head_hi = float(_down(np.float64(head_lo * lo[c]))), float(_up(np.float64(head_hi * hi[c])))
            head_e += int(ex[c])
            head_k = head_k + c * rows_arr[j]
        if head_hi == 0:
            continue
        counts = _tails(tail, n - used)
        k = head_k[:, None] + sum(counts[i][None, :] * rows_arr[len(prefix) + i][:, None] for i in range(tail))
        d = k.max(axis=0)[None, :] - k  # >= 0: e^(x_t - max) = e^(-d/D)
        b_lo, b_hi = _summed(table_lo, table_hi, d[bad_index])
        g_lo, g_hi = _summed(table_lo, table_hi, d[good_index])
        p_lo = _down(b_lo / _up(b_lo + g_hi))
        p_hi = np.minimum(_up(b_hi / _down(b_hi + g_lo)), 1.0)
        w_lo, w_hi = np.full(p_lo.shape, head_lo), np.full(p_lo.shape, head_hi)
        e = np.full(p_lo.shape, head_e - reference, dtype=np.int64)
        for i in range(tail):
            lo, hi, ex = factors[len(prefix) + i]
            w_lo, w_hi = _down(w_lo * lo[counts[i]]), _up(w_hi * hi[counts[i]])
            e += ex[counts[i]]
        total_lo.append(_exactly(np.maximum(_down(w_lo * p_lo), 0.0), e))
        total_hi.append(_exactly(_up(w_hi * p_hi), e))
    low, high = sum(total_lo), sum(total_hi)
    unit = ctx.mpf(math.factorial(n)) * ctx.mpf(2) ** reference
    return ctx.mpf([(ctx.mpf(low.numerator) / low.denominator * unit).a,
                    (ctx.mpf(high.numerator) / high.denominator * unit).b])


def _exactly(values: np.ndarray, exponents: np.ndarray) -> Fraction:
    """sum_i values[i] 2^exponents[i], exactly, for floats values >= 0: each value is m 2^E with an
    integer m < 2^53, split into halves of 27 and 26 bits whose sums per E stay below 2^53, so
    ``bincount``'s float sums of them are exact."""
    mantissa, exponent = np.frexp(values)
    m = np.ldexp(mantissa, 53)
    high = np.floor(np.ldexp(m, -26))
    low = m - np.ldexp(high, 26)
    where = exponent.astype(np.int64) + exponents - 53
    if len(values) >= 1 << 26:
        raise Unsupported("too many terms in one chunk for exact float sums")
    bottom = int(where.min()) if len(where) else 0
    index = where - bottom
    highs = np.bincount(index, weights=high)
    lows = np.bincount(index, weights=low)
    total = 0
    for j in np.flatnonzero(highs + lows).tolist():
        total += ((int(highs[j]) << 26) + int(lows[j])) << j
    return Fraction(total) * Fraction(2) ** bottom


def _summed(lo: np.ndarray, hi: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Enclosures of sum over the rows of d of e^(-d/D), rounded outward after each addition."""
    s_lo, s_hi = lo[d[0]], hi[d[0]]
    for row in d[1:]:
        s_lo, s_hi = _down(s_lo + lo[row]), _up(s_hi + hi[row])
    return s_lo, s_hi


_TAILS: dict = {}


def _tails(tail: int, m: int) -> list[np.ndarray]:
    """The last ``tail`` counts of every count vector whose last ``tail`` counts sum to m (arrays)."""
    key = (tail, m)
    found = _TAILS.get(key)
    if found is None:
        if tail == 1:
            found = [np.array([m])]
        elif tail == 2:
            a = np.arange(m, -1, -1)
            found = [a, m - a]
        else:
            a, b = np.meshgrid(np.arange(m + 1), np.arange(m + 1), indexing="ij")
            keep = (a + b) <= m
            a, b = a[keep], b[keep]
            found = [a, b, m - a - b]
        if len(_TAILS) > 4096:
            _TAILS.clear()
        found = _TAILS[key] = [np.ascontiguousarray(x, dtype=np.int64) for x in found]
    return found


def _prefixes(parts: int, n: int) -> Iterator[tuple[tuple, int]]:
    """(counts of the first ``parts`` records, their sum) for every prefix with sum <= n."""
    if parts == 0:
        yield (), 0
        return
    for rest, used in _prefixes(parts - 1, n):
        for c in range(n - used + 1):
            yield (*rest, c), used + c


__all__ = ["ATOM_LIMIT", "Atoms", "CROSS_CHECKS", "CountsForm", "GROUP_LIMIT", "Sample", "SealedSample",
           "exact_sum", "floating", "grouped", "merged", "share", "trace"]
