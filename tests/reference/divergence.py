"""Rényi divergences, zCDP levels and composed privacy profiles, by brute force from the exact laws.

Like the rest of this package it shares no code with dpverify: the inputs are the per-dataset
exact output laws {output: Q} that :mod:`.privacy` computes with :mod:`.shim`, every probability
an exact element of Q(e^r : r rational) (:mod:`.exactnum`).  For one ordered pair of distinct
laws (P, P') of neighbouring datasets (X, X'):

* the hockey-stick divergence of the T-fold composition (and, for ``also``, of further programs
  run on the same datasets), delta_T(eps) = sum over output tuples t of
  max(0, P(t|X) - e^eps P(t|X')), P(t|X) the product of the runs' probabilities.  The tuples
  are enumerated as multisets of outputs per program with their multinomial counts (every
  ordering of a multiset has the same product); nothing is grouped by privacy loss;
* the Rényi divergence D_alpha(P || P') = 1/(alpha - 1) ln sum_o P(o)^alpha P'(o)^(1 - alpha),
  infinite when some output is possible under P only; for an integer alpha the sum is an exact
  number of the field (so claims can be decided exactly);
* the zCDP level sup_{alpha > 1} D_alpha / alpha, bracketed in [L, U] (it has no closed form):
  L is D_alpha / alpha at an order tried, or the limit alpha -> 1 (the KL divergence); U holds
  for every order: psi(lam) = lam D_(1+lam) = ln sum_o P(o) (P(o)/P'(o))^lam is convex with
  psi(0) = 0 (a cumulant generating function; the maximum over pairs is convex too), so on a
  segment of orders it lies below its chord, which bounds D_alpha / alpha = psi / (lam (lam + 1))
  there; and D_alpha <= D_oo beyond the last segment.  Segments are split (branch and bound)
  until U is within a relative tolerance of L.  A pair whose every privacy loss lies in [-e, e]
  has D_alpha <= alpha e^2 / 2 for every alpha (Bun and Steinke 2016, Proposition 3.3): such a
  pair with e^2 / 2 <= L cannot raise the supremum and is left out of the search (a pruning
  only; the bracket stays certified).

Values are certified mpmath intervals at a precision raised until they are tight (the inputs'
enclosures come from :meth:`.exactnum.ExpPoly.enclosure`); where an interval cannot separate a
value from a claimed level, integer-order Rényi sums and profile deltas are compared exactly in
the field.  Where neither settles it, the answer is ``None`` (the reference does not know) --
never a guess.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional

import mpmath

from .exactnum import Q, Undecided

iv = mpmath.iv
BITS = (160, 640, 2560, 10240)
"""The precision ladder of the interval evaluations (bits)."""

INF = math.inf


def ULP(bits: int) -> mpmath.mpf:
    """A relative margin covering the few round-to-nearest operations done on interval endpoints
    (divisions by an order, maxima, a square) at ``bits`` of precision."""
    return mpmath.mpf(2) ** (8 - bits)


@contextmanager
def precision(bits: int):
    saved = iv.prec
    iv.prec = bits
    try:
        yield
    finally:
        iv.prec = saved


def enclose(x: Q, bits: int) -> Any:
    """A certified interval containing the exact number ``x``."""
    with precision(bits):
        return x.num.enclosure(bits) / x.den.enclosure(bits)


def _lo(x: Any) -> mpmath.mpf:
    """The lower end of an interval as an mpf, exactly (``mpmath.mpf(x.a)`` would round it to the
    working precision, 53 bits by default)."""
    return mpmath.mp.make_mpf(x._mpi_[0])


def _hi(x: Any) -> mpmath.mpf:
    return mpmath.mp.make_mpf(x._mpi_[1])


def tight(x: Any, rel: float = 1e-15) -> bool:
    """The interval is narrow relative to its magnitude (and excludes 0 unless it is a point)."""
    lo, hi = _lo(x), _hi(x)
    return hi - lo <= rel * max(abs(lo), abs(hi)) and (lo > 0 or hi < 0 or lo == hi)


def exact_sum(items: Iterable[Q]) -> Q:
    """The exact sum of many numbers, adding numerators over identical denominators first (summing
    Q's one by one multiplies every denominator into the result)."""
    groups: dict[tuple, list] = {}
    for x in items:
        key = tuple(sorted(x.den.terms.items()))
        if key in groups:
            groups[key][1] = groups[key][1] + x.num
        else:
            groups[key] = [x.den, x.num]
    total = Q.of(0)
    for den, num in groups.values():
        if not num.is_zero():
            total = total + Q(num, den)
    return total


def compare_iv(a: Callable[[int], Any], b: Callable[[int], Any],
               exact: Optional[Callable[[], Optional[int]]] = None) -> Optional[int]:
    """The sign of a - b, both given as interval functions of the precision (INF allowed); ``exact``
    decides what the intervals cannot (returns the sign or None); None when nothing decides."""
    for bits in BITS:
        x, y = a(bits), b(bits)
        if x is INF or y is INF:
            if x is INF and y is INF:
                return None
            return 1 if x is INF else -1
        if _lo(x) > _hi(y):
            return 1
        if _hi(x) < _lo(y):
            return -1
        if exact is not None and tight(x, 1e-40) and tight(y, 1e-40):
            # overlapping at 40 digits: most likely a tie, which only the exact comparison decides
            sign = exact()
            if sign is not None:
                return sign
            exact = None
    return exact() if exact is not None else None


# ----- pairs of laws --------------------------------------------------------------------------


def law_classes(laws: Sequence[dict]) -> list[int]:
    """For each dataset the index of the first dataset with exactly the same law."""
    out: list[int] = []
    for i, law in enumerate(laws):
        out.append(next((j for j in range(i) if out[j] == j and _same(laws[j], law)), i))
    return out


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(a[o] == b[o] for o in a)


def distinct_pairs(programs: Sequence[Sequence[dict]], pairs: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """One ordered dataset pair per distinct ordered pair of (every program's) laws, leaving out pairs on
    which every program has the same law (their divergences are 0)."""
    classes = [law_classes(laws) for laws in programs]
    seen: dict = {}
    for i, j in pairs:
        key = tuple((c[i], c[j]) for c in classes)
        if any(a != b for a, b in key) and key not in seen:
            seen[key] = (i, j)
    return list(seen.values())


class PairLaw:
    """One ordered pair (P, P') of laws, aligned on the union of their supports (None: probability 0)."""

    def __init__(self, law: dict, law_prime: dict) -> None:
        outputs = list(law) + [o for o in law_prime if o not in law]
        self.p: list[Optional[Q]] = [law.get(o) for o in outputs]
        self.q: list[Optional[Q]] = [law_prime.get(o) for o in outputs]
        self.outputs = outputs
        self.infinite = any(p is not None and q is None for p, q in zip(self.p, self.q))
        self._iv: dict[int, tuple[list, list]] = {}
        self._classes: dict[int, list] = {}
        self._groups: Optional[list[list[int]]] = None
        self._sums: dict[int, Q] = {}

    def enclosures(self, bits: int) -> tuple[list, list]:
        if bits not in self._iv:
            self._iv[bits] = ([None if p is None else enclose(p, bits) for p in self.p],
                              [None if q is None else enclose(q, bits) for q in self.q])
        return self._iv[bits]

    # Rényi -----------------------------------------------------------------------------------
    def renyi(self, alpha: Fraction, bits: int) -> Any:
        """D_alpha(P || P') in an interval at ``bits``, or INF: output by output."""
        if self.infinite:
            return INF
        ps, qs = self.enclosures(bits)
        with precision(bits):
            a = iv.mpf(alpha.numerator) / alpha.denominator
            total = iv.mpf(0)
            for p, q in zip(ps, qs):
                if p is not None:
                    total += iv.exp(a * iv.log(p) + (1 - a) * iv.log(q))
            return _nonnegative(iv.log(total) / (a - 1))

    def renyi_sum(self, k: int) -> Optional[Q]:
        """sum_o P(o)^k / P'(o)^(k - 1) exactly (integer k >= 2), None when infinite."""
        if self.infinite:
            return None
        if k not in self._sums:
            self._sums[k] = exact_sum(p ** k / q ** (k - 1) for p, q in zip(self.p, self.q) if p is not None)
        return self._sums[k]

    def renyi_sum_iv(self, k: int, bits: int) -> Any:
        if self.infinite:
            return INF
        ps, qs = self.enclosures(bits)
        with precision(bits):
            total = iv.mpf(0)
            for p, q in zip(ps, qs):
                if p is not None:
                    total += p ** k / q ** (k - 1)
            return total

    def d_inf(self, bits: int) -> Any:
        """max_o ln(P(o)/P'(o)) (INF when P' misses an output of P)."""
        if self.infinite:
            return INF
        ps, qs = self.enclosures(bits)
        with precision(bits):
            return max((iv.log(p / q) for p, q in zip(ps, qs) if p is not None), key=lambda v: _hi(v))

    # classes of equal likelihood ratio, for the zCDP search only --------------------------------
    def loss_classes(self, bits: int) -> list[tuple[Any, Any]]:
        """[(P-mass, ln ratio)] with outputs of exactly equal ratio P/P' merged (D_alpha is unchanged:
        sum_o P(o) r_o^(alpha - 1)); candidates found by a fingerprint of the ratio's enclosure, equality
        decided exactly (P(o) P'(o') = P(o') P'(o))."""
        if self._groups is None:
            ps, qs = self.enclosures(BITS[0])
            groups: list[tuple[list[int], str]] = []
            for k, (p, q) in enumerate(zip(self.p, self.q)):
                if p is None:
                    continue
                with precision(BITS[0]):
                    fp = mpmath.nstr(_lo(ps[k] / qs[k]), 12)
                for members, key in groups:
                    first = members[0]
                    if key == fp and self.p[first] * q == p * self.q[first]:
                        members.append(k)
                        break
                else:
                    groups.append(([k], fp))
            self._groups = [members for members, _ in groups]
        if bits not in self._classes:
            ps, qs = self.enclosures(bits)
            with precision(bits):
                self._classes[bits] = [(sum((ps[k] for k in members), iv.mpf(0)),
                                        iv.log(ps[members[0]] / qs[members[0]])) for members in self._groups]
        return self._classes[bits]

    def cumulant(self, lam: Any, bits: int) -> tuple[Any, Any]:
        """(psi(lam), psi'(lam)): psi(lam) = ln sum_o P(o) (P(o)/P'(o))^lam = (alpha - 1) D_alpha at
        alpha = 1 + lam (an mpf > 0), and its derivative, the mean loss under the tilted law
        P_lam(o) ~ P(o) (P(o)/P'(o))^lam; from the loss classes."""
        with precision(bits):
            x = iv.mpf(lam)
            total, moment = iv.mpf(0), iv.mpf(0)
            for mass, loss in self.loss_classes(bits):
                w = mass * iv.exp(x * loss)
                total += w
                moment += w * loss
            return iv.log(total), moment / total

    def curvature(self, a: Any, b: Any, centre: Any, bits: int) -> Any:
        """An upper bound of psi'' on [a, b]: psi''(lam) is the tilted variance, at most the tilted mean
        of (loss - centre)^2, enclosed over the whole interval of lam."""
        with precision(bits):
            x = iv.mpf([a, b])
            total, moment = iv.mpf(0), iv.mpf(0)
            for mass, loss in self.loss_classes(bits):
                w = mass * iv.exp(x * loss)
                total += w
                moment += w * (loss - centre) ** 2
            return _hi(moment) / _lo(total) * (1 + ULP(bits))

    def kl(self, bits: int) -> Any:
        with precision(bits):
            return _nonnegative(sum((m * l for m, l in self.loss_classes(bits)), iv.mpf(0)))

    def symmetric_loss(self, bits: int) -> Any:
        """max_o |ln(P(o)/P'(o))| (INF when either side misses an output of the other)."""
        if self.infinite or any(p is None for p in self.p):
            return INF
        ps, qs = self.enclosures(bits)
        with precision(bits):
            return max((abs(iv.log(p / q)) for p, q in zip(ps, qs)), key=lambda v: _hi(v))


def _nonnegative(x: Any) -> Any:
    """Clip an enclosure of a quantity known to be >= 0 (a divergence) at 0."""
    if _lo(x) < 0:
        with precision(iv.prec):
            return iv.mpf([0, max(_hi(x), mpmath.mpf(0))])
    return x


def adaptive(value: Callable[[int], Any], rel: float = 1e-15) -> Any:
    """value(bits) at the first precision of the ladder where it is tight (else the last)."""
    for bits in BITS:
        x = value(bits)
        if x == INF or tight(x, rel):
            return x
    return x


# ----- Rényi -----------------------------------------------------------------------------------


def renyi_max(pairs: Sequence[PairLaw], alpha: Fraction) -> Any:
    """max over pairs of D_alpha, an interval (or INF; 0 without pairs)."""
    if not pairs:
        return iv.mpf(0)
    if any(p.infinite for p in pairs):
        return INF
    values = [adaptive(lambda bits, p=p: p.renyi(alpha, bits)) for p in pairs]
    top = max(values, key=_hi)
    return top


def renyi_top_sum(pairs: Sequence[PairLaw], k: int) -> Optional[Q]:
    """The exact max over pairs of sum_o P^k P'^(1-k) (None: infinite or no pairs)."""
    if not pairs or any(p.infinite for p in pairs):
        return None
    values = [(p, adaptive(lambda bits, p=p: p.renyi_sum_iv(k, bits))) for p in pairs]
    best_hi = max(_lo(v) for _, v in values)
    candidates = [p for p, v in values if _hi(v) >= best_hi]
    best = candidates[0].renyi_sum(k)
    for p in candidates[1:]:
        s = p.renyi_sum(k)
        if s > best:
            best = s
    return best


def renyi_compare(pairs: Sequence[PairLaw], alpha: Fraction, level_iv: Callable[[int], Any],
                  level_exp: Optional[Callable[[], Optional[Q]]]) -> Optional[bool]:
    """Whether D_alpha <= level for every pair (None: undecided).  ``level_exp`` gives
    e^((alpha - 1) level) exactly when it exists (integer orders are then decided exactly)."""
    integer = alpha.denominator == 1
    k = int(alpha)
    undecided = False
    for p in pairs:
        if p.infinite:
            return False
        if integer:
            bound = level_exp() if level_exp is not None else None

            def exact(p=p, bound=bound) -> Optional[int]:
                return None if bound is None else (p.renyi_sum(k) - bound).sign()

            def bound_iv(bits: int, bound=bound) -> Any:
                if bound is not None:
                    return enclose(bound, bits)
                with precision(bits):
                    return iv.exp((k - 1) * level_iv(bits))
            sign = compare_iv(lambda bits, p=p: p.renyi_sum_iv(k, bits), bound_iv, exact)
        else:
            sign = compare_iv(lambda bits, p=p: p.renyi(alpha, bits), level_iv)
        if sign is None:
            undecided = True
        elif sign > 0:
            return False
    return None if undecided else True


# ----- zCDP --------------------------------------------------------------------------------------


@dataclass
class Bracket:
    """lower <= sup_{alpha > 1} max_pairs D_alpha / alpha <= upper (mpf, or INF)."""

    lower: Any
    upper: Any
    evaluations: int = 0


def zcdp_bracket(pairs: Sequence[PairLaw], rel_tol: float = 1e-9, max_evaluations: int = 400) -> Bracket:
    """The zCDP level of the pairs, bracketed (see the module docstring); the bracket closes to
    ``rel_tol`` unless the evaluation budget runs out (it is certified either way)."""
    if not pairs:
        return Bracket(mpmath.mpf(0), mpmath.mpf(0))
    if any(p.infinite for p in pairs):
        return Bracket(INF, INF)
    bits = BITS[0]
    for bits in BITS:  # a precision where every pair's KL is resolved (distinct laws: KL > 0)
        kls = [p.kl(bits) for p in pairs]
        if all(tight(k, 1e-30) for k in kls):
            break
    with mpmath.workprec(bits):  # endpoint arithmetic at the intervals' precision (margins: ULP)
        return _bracket(pairs, kls, bits, rel_tol, max_evaluations)


def _bracket(pairs: Sequence[PairLaw], kls: list, bits: int, rel_tol: float, max_evaluations: int) -> Bracket:
    """(Run at ``bits`` of working precision.)  With lam = alpha - 1 and psi(lam) = lam D_alpha the
    cumulant generating function of the privacy loss under P -- convex, psi(0) = 0, psi'(0) = KL -- the
    rate is f(lam) = D_alpha / alpha = psi(lam) / (lam (lam + 1)).  On a segment [a, b] two upper bounds of
    psi give one of f, the smaller is used: the chord of the pairs' maximum of psi (convex, so below its
    chord through the upper ends), and per pair the Taylor bound psi(a) + psi'(a) (lam - a) + M (lam - a)^2 / 2
    with M >= psi'' on [a, b] (tight where the losses are small and f is flat over long ranges).  Either
    way f is below (C lam^2 + B lam + A) / (lam (lam + 1)), whose maximum over [a, b] is at an end or at a
    root of (C - B) lam^2 - 2 A lam - A (enclosed in intervals).  Beyond the last segment,
    f <= D_oo / (1 + lam)."""
    lower = max(_lo(k) for k in kls)
    if lower <= 0:
        return Bracket(mpmath.mpf(0), max(_hi(p.d_inf(bits)) for p in pairs))
    # pairs that cannot exceed the lower bound at any order are left out (module docstring)
    live = []
    for p in pairs:
        e = p.symmetric_loss(bits)
        cap = _hi(p.d_inf(bits)) if e == INF else min(_hi(p.d_inf(bits)), _hi(e) ** 2 / 2)
        if cap * (1 + ULP(bits)) > lower:
            live.append(p)
    if not live:
        return Bracket(lower * (1 - ULP(bits)), lower * (1 + ULP(bits)))
    d_inf = max(_hi(p.d_inf(bits)) for p in live)
    kl = {id(p): p.kl(bits) for p in live}
    evaluations = 0
    psi: dict = {}

    def at(lam: Any) -> tuple[Any, Any, list]:
        """(lower, upper) of max over live pairs of psi(lam), and every pair's (psi, psi')."""
        nonlocal evaluations, lower
        if lam not in psi:
            evaluations += 1
            found = [p.cumulant(lam, bits) for p in live]
            psi[lam] = (max(_lo(v) for v, _ in found), max(_hi(v) for v, _ in found), found)
            lower = max(lower, psi[lam][0] / (lam * (lam + 1)))
        return psi[lam]

    def ratio_max(A: Any, B: Any, C: Any, a: Any, b: Any) -> Any:
        """An upper bound of (C x^2 + B x + A) / (x (x + 1)) over [a, b], 0 < a (intervals A, B, C)."""
        with precision(bits + 20):
            la, lb = iv.mpf(a), iv.mpf(b)

            def f(x: Any) -> Any:
                return (C * x * x + B * x + A) / (x * (x + 1))
            whole = iv.mpf([a, b])
            crude = _hi(C * whole * whole + B * whole + A) / (a * (a + 1))
            lead, disc = C - B, A * (A + C - B)
            if _lo(lead) <= 0 <= _hi(lead) or _lo(disc) <= 0 <= _hi(disc):
                return crude * (1 + ULP(bits))
            values = [f(la), f(lb)]
            if _lo(disc) > 0:
                root = iv.sqrt(disc)
                for r in ((A + root) / lead, (A - root) / lead):
                    if _hi(r) >= a and _lo(r) <= b:
                        values.append(f(iv.mpf([max(_lo(r), a), min(_hi(r), b)])))
            return min(crude, max(_hi(v) for v in values)) * (1 + ULP(bits))

    def bound(a: Any, b: Any) -> Any:
        """An upper bound of f on (a, b]."""
        _, yb, found_b = at(b)
        with precision(bits + 20):
            if a == 0:  # chord from (0, 0): f <= psi(b) / b; Taylor from 0: f <= (KL + M lam / 2) / (1 + lam)
                chord = yb / b
                taylor = mpmath.mpf(0)
                for p in live:
                    k = kl[id(p)]
                    m = p.curvature(a, b, iv.mpf(_hi(k)), bits)
                    end = (k + iv.mpf(m) * iv.mpf(b) / 2) / (1 + iv.mpf(b))
                    taylor = max(taylor, _hi(k), _hi(end))
                return min(chord, taylor) * (1 + ULP(bits))
            _, ya, found_a = at(a)
            slope = (iv.mpf(yb) - iv.mpf(ya)) / (iv.mpf(b) - iv.mpf(a))
            chord = ratio_max(iv.mpf(ya) - slope * iv.mpf(a), slope, iv.mpf(0), a, b)
            taylor = mpmath.mpf(0)
            for p, (y, dy) in zip(live, found_a):
                m = iv.mpf(p.curvature(a, b, iv.mpf(_hi(dy)), bits))
                la = iv.mpf(a)
                taylor = max(taylor, ratio_max(y - dy * la + m * la * la / 2, dy - m * la, m / 2, a, b))
            return min(chord, taylor)

    lams = sorted({mpmath.mpf(2) ** -k for k in (40, 30, 20, 12, 8, 4, 2, 1, 0)}
                  | {mpmath.mpf(a) for a in (2, 3, 5, 7, 11, 15, 23, 31, 47, 63)})
    for lam in lams:
        at(lam)
    horizon = max(d_inf / lower, lams[-1]) * (1 + mpmath.mpf(2) ** -20)
    while lams[-1] < horizon:
        lams.append(min(lams[-1] * 16, horizon))
        at(lams[-1])
    segments = [mpmath.mpf(0)] + lams
    bounds = [bound(segments[i], segments[i + 1]) for i in range(len(segments) - 1)]
    tail = d_inf / (1 + segments[-1]) * (1 + ULP(bits))
    while True:
        upper = max(max(bounds), tail)
        if upper <= lower * (1 + rel_tol) or evaluations >= max_evaluations:
            break
        if tail >= max(bounds):  # (only before the horizon is reached)
            segments.append(segments[-1] * 16)
            bounds.append(bound(segments[-2], segments[-1]))
            tail = d_inf / (1 + segments[-1]) * (1 + ULP(bits))
            continue
        i = max(range(len(bounds)), key=lambda j: bounds[j])
        a, b = segments[i], segments[i + 1]
        m = b / 8 if a == 0 else (a + b) / 2
        segments.insert(i + 1, m)
        bounds[i:i + 1] = [bound(a, m), bound(m, b)]
    upper = max(upper, lower)  # the pruned pairs stay below lower
    return Bracket(lower * (1 - ULP(bits)), upper * (1 + ULP(bits)), evaluations)


# ----- composed privacy profiles ---------------------------------------------------------------


def multisets(size: int, runs: int) -> list[tuple[int, tuple[int, ...]]]:
    """(multinomial count, counts per output) for every multiset of ``runs`` outputs out of ``size``."""
    out = []
    for combo in itertools.combinations_with_replacement(range(size), runs):
        counts = [0] * size
        for o in combo:
            counts[o] += 1
        coef = math.factorial(runs)
        for c in counts:
            coef //= math.factorial(c)
        out.append((coef, tuple(counts)))
    return out


@dataclass
class Composition:
    """The runs of every program on one ordered pair of datasets: [(PairLaw, runs)], and the
    resulting product law as terms (count, P(t|X), P(t|X')) over multisets of outputs."""

    parts: list[tuple[PairLaw, int]]
    _terms: Optional[list] = None
    _iv: dict = field(default_factory=dict)
    _exact: dict = field(default_factory=dict)

    def size(self) -> int:
        total = 1
        for pair, runs in self.parts:
            total *= math.comb(len(pair.outputs) + runs - 1, runs)
        return total

    def terms(self) -> list[tuple[int, list[tuple[int, int]]]]:
        """(count, [(part, output index, multiplicity)]) per term."""
        if self._terms is None:
            per_part = [[(coef, [(k, o, c) for o, c in enumerate(counts) if c]) for coef, counts in multisets(
                len(pair.outputs), runs)] for k, (pair, runs) in enumerate(self.parts)]
            self._terms = []
            for combo in itertools.product(*per_part):
                coef = 1
                factors: list = []
                for c, f in combo:
                    coef *= c
                    factors += f
                self._terms.append((coef, factors))
        return self._terms

    def products(self, bits: int) -> list[tuple[int, Any, Any]]:
        """(count, P(t|X), P(t|X')) in intervals (None for a zero probability)."""
        if bits not in self._iv:
            encs = [pair.enclosures(bits) for pair, _ in self.parts]
            out = []
            with precision(bits):
                for coef, factors in self.terms():
                    p = q = iv.mpf(1)
                    for k, o, c in factors:
                        pk, qk = encs[k][0][o], encs[k][1][o]
                        p = None if p is None or pk is None else p * pk ** c
                        q = None if q is None or qk is None else q * qk ** c
                    out.append((coef, p, q))
            self._iv[bits] = out
        return self._iv[bits]

    def exact_product(self, index: int) -> tuple[Optional[Q], Optional[Q]]:
        if index not in self._exact:
            _, factors = self.terms()[index]
            p: Optional[Q] = Q.of(1)
            q: Optional[Q] = Q.of(1)
            for k, o, c in factors:
                pair = self.parts[k][0]
                p = None if p is None or pair.p[o] is None else p * pair.p[o] ** c
                q = None if q is None or pair.q[o] is None else q * pair.q[o] ** c
            self._exact[index] = (p, q)
        return self._exact[index]

    def positive(self, w_iv: Callable[[int], Any], w_exact: Optional[Q], bits: int) -> Optional[list[int]]:
        """The terms with P(t|X) > e^eps P(t|X') (ties, exactly zero, left out); None when a sign
        cannot be decided (no exact e^eps)."""
        out = []
        w = w_iv(bits)
        with precision(bits):
            for index, (_, p, q) in enumerate(self.products(bits)):
                if p is None:
                    continue
                if q is None:
                    out.append(index)
                    continue
                d = p - w * q
                if _lo(d) > 0:
                    out.append(index)
                elif _hi(d) >= 0:  # straddles 0: exactly
                    if w_exact is None:
                        return None
                    pe, qe = self.exact_product(index)
                    if (pe - w_exact * qe).sign() > 0:
                        out.append(index)
        return out

    def delta_iv(self, w_iv: Callable[[int], Any], w_exact: Optional[Q], bits: int) -> Optional[Any]:
        """delta(eps) = sum over positive terms of count (P - e^eps P'), in an interval."""
        chosen = self.positive(w_iv, w_exact, bits)
        if chosen is None:
            return None
        products = self.products(bits)
        w = w_iv(bits)
        with precision(bits):
            total = iv.mpf(0)
            for index in chosen:
                coef, p, q = products[index]
                total += coef * (p if q is None else p - w * q)
            return _nonnegative(total)

    def delta_exact(self, w_exact: Q) -> Q:
        chosen = self.positive(lambda bits: enclose(w_exact, bits), w_exact, BITS[0])
        assert chosen is not None
        plus, minus = [], []
        for index in chosen:
            coef = self.terms()[index][0]
            p, q = self.exact_product(index)
            plus.append(p * coef)
            if q is not None:
                minus.append(q * coef)
        return exact_sum(plus) - w_exact * exact_sum(minus)


def compositions(programs: Sequence[tuple[Sequence[dict], int]], pairs: Sequence[tuple[int, int]]) -> list[Composition]:
    """One Composition per distinct ordered pair of the programs' laws: programs are (laws, runs)."""
    return [Composition([(PairLaw(laws[i], laws[j]), runs) for laws, runs in programs])
            for i, j in distinct_pairs([laws for laws, _ in programs], pairs)]


def profile_value(comps: Sequence[Composition], w_iv: Callable[[int], Any], w_exact: Optional[Q]) -> Optional[Any]:
    """max over pairs of delta(eps), an interval at the first precision where it is tight (None:
    undecidable signs)."""
    if not comps:
        return iv.mpf(0)
    for bits in BITS:
        values = [c.delta_iv(w_iv, w_exact, bits) for c in comps]
        if any(v is None for v in values):
            return None
        top = max(values, key=_hi)
        if _hi(top) == 0 or tight(top, 1e-14):
            return top
    return top


def profile_exact(comps: Sequence[Composition], w_exact: Q) -> Q:
    """max over pairs of delta(eps), exactly."""
    if not comps:
        return Q.of(0)
    values = [(c, profile_bits_value(c, w_exact)) for c in comps]
    best_lo = max(_lo(v) for _, v in values)
    best = None
    for c, v in values:
        if _hi(v) >= best_lo:
            d = c.delta_exact(w_exact)
            if best is None or d > best:
                best = d
    return best


def profile_bits_value(c: Composition, w_exact: Q) -> Any:
    for bits in BITS:
        v = c.delta_iv(lambda b: enclose(w_exact, b), w_exact, bits)
        if _hi(v) == 0 or tight(v, 1e-14):
            return v
    return v


def profile_compare(comps: Sequence[Composition], w_iv: Callable[[int], Any], w_exact: Optional[Q],
                    delta_iv: Callable[[int], Any], delta_exact: Optional[Q]) -> Optional[bool]:
    """Whether delta(eps) <= the claimed delta for every pair (None: undecided)."""
    undecided = False
    for c in comps:
        def exact(c=c) -> Optional[int]:
            if w_exact is None or delta_exact is None:
                return None
            return (c.delta_exact(w_exact) - delta_exact).sign()

        def value(bits: int, c=c) -> Any:
            v = c.delta_iv(w_iv, w_exact, bits)
            if v is None:
                raise Undecided("a composed term's sign without an exact e^eps")
            return v
        try:
            sign = compare_iv(value, delta_iv, exact)
        except Undecided:
            sign = None
        if sign is None:
            undecided = True
        elif sign > 0:
            return False
    return None if undecided else True


__all__ = ["Bracket", "Composition", "PairLaw", "compare_iv", "compositions", "distinct_pairs", "enclose",
           "exact_sum", "multisets", "profile_compare", "profile_exact", "profile_value", "renyi_compare",
           "renyi_max", "renyi_top_sum", "zcdp_bracket"]
