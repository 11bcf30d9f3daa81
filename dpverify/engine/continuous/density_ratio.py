"""The supremum of a ratio of densities, piece by piece, with the points that attain it.

For outputs that carry released noisy values the privacy loss of a pair of
datasets is sup_v ln(g(v)/h(v)) over the released value v, where g and h are
piecewise exponential-polynomials (:mod:`.piecewise`).  On a piece where g
and h are single exponentials c e^(r v) -- always so for a released Laplace
or exponential value that nothing else constrains -- the log ratio is linear
in v, so its supremum over the piece is attained at an end (or is infinite
towards an unbounded end): this is the symbolic derivation of the Laplace
mechanism's loss |q - q'|/b, done exactly on every piece.  Pieces with several
terms are not decided; their ratio is evaluated at the ends and the middle,
which gives lower bounds (and witnesses), never a verified upper bound.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

from . import piecewise as pw


@dataclass(frozen=True)
class Candidate:
    """A point t of the piece containing ``inside``: ratio there, or the piece's growth towards an end.

    ``growth`` is 0 for a point candidate; +1 / -1 when the ratio grows without
    bound towards +inf / -inf on the piece (the sup is infinite).
    """

    t: Optional[Fraction]
    inside: Fraction
    growth: int = 0


@dataclass
class Sup:
    """The candidates of sup g/h on the real line; ``decided``: the sup is the max over them."""

    candidates: list
    decided: bool
    infinite_support: Optional[Fraction] = None  # a point where h = 0 < g


def _nonzero(terms: dict, backend: Any) -> dict:
    return {k: c for k, c in terms.items() if not backend.is_zero(c)}


def ratio_sup(g: pw.Piecewise, h: pw.Piecewise, backend: Any) -> Sup:
    """Where sup g/h can be attained: exact candidates on single-term pieces, samples elsewhere."""
    cuts = tuple(sorted(set(g.cuts) | set(h.cuts)))
    g, h = pw.refine(g, cuts), pw.refine(h, cuts)
    candidates: list[Candidate] = []
    decided = True
    for index, (gt, ht) in enumerate(zip(g.pieces, h.pieces)):
        lo = cuts[index - 1] if index else None
        hi = cuts[index] if index < len(cuts) else None
        inside = pw.interior(lo, hi)
        gt, ht = _nonzero(gt, backend), _nonzero(ht, backend)
        if not gt:
            continue
        if not ht:
            return Sup(candidates, True, infinite_support=inside)
        if len(gt) == 1 and len(ht) == 1 and all(backend.sign(c) == 1 for c in (*gt.values(), *ht.values())):
            (rg, dg), (rh, dh) = next(iter(gt)), next(iter(ht))
            if dg == dh == 0:
                slope = rg - rh
                if slope > 0:
                    candidates.append(Candidate(None, inside, 1) if hi is None else Candidate(hi, inside))
                elif slope < 0:
                    candidates.append(Candidate(None, inside, -1) if lo is None else Candidate(lo, inside))
                else:
                    candidates.append(Candidate(inside, inside))
                continue
        decided = False
        points = [p for p in (lo, hi) if p is not None] + [inside]
        if lo is None:
            points += [inside - 2 ** k for k in (1, 3, 5)]
        if hi is None:
            points += [inside + 2 ** k for k in (1, 3, 5)]
        candidates += [Candidate(p, inside) for p in points]
    return Sup(candidates, decided)


def ratio_at(g: pw.Piecewise, h: pw.Piecewise, candidate: Candidate, backend: Any,
             memo: Optional[dict] = None) -> tuple[Any, Any]:
    """(g, h) at the candidate's point, each evaluated with the terms of the piece containing ``inside``.

    ``memo`` (optional, owned by the caller): values of pieces already evaluated at a point, keyed by
    the piece's identity and the point -- a density meets every neighbour of its dataset, so the same
    piece is evaluated at the same candidate many times.  The entry keeps the piece alive, so its
    identity cannot be reused while the memo lives; the value is the one evaluation would give."""
    gt = g.pieces[g.piece_at(candidate.inside)]
    ht = h.pieces[h.piece_at(candidate.inside)]
    if memo is None:
        return pw.evaluate_terms(gt, candidate.t, backend), pw.evaluate_terms(ht, candidate.t, backend)
    return _evaluate(gt, candidate.t, backend, memo), _evaluate(ht, candidate.t, backend, memo)


def _evaluate(terms: dict, t: Fraction, backend: Any, memo: dict) -> Any:
    key = (id(terms), t)
    found = memo.get(key)
    if found is not None and found[0] is terms:
        return found[1]
    value = pw.evaluate_terms(terms, t, backend)
    memo[key] = (terms, value)
    return value


def beyond(g: pw.Piecewise, h: pw.Piecewise, candidate: Candidate, bound: Any, backend: Any) -> Fraction:
    """A point on the candidate's unbounded side where g/h exceeds ``bound`` (ratio grows like e^(slope t))."""
    gt = _nonzero(g.pieces[g.piece_at(candidate.inside)], backend)
    ht = _nonzero(h.pieces[h.piece_at(candidate.inside)], backend)
    (rg, _), cg = next(iter(gt.items()))
    (rh, _), ch = next(iter(ht.items()))
    slope = rg - rh
    # (cg/ch) e^(slope t) > bound  <=>  slope t > ln(bound ch / cg)
    target = backend.log(bound * ch / cg)
    top = float(target.b) if hasattr(target, "b") else float(target)
    t = Fraction(math.floor(top / float(slope)) - 1) if slope < 0 else Fraction(math.ceil(top / float(slope)) + 1)
    if candidate.growth > 0:
        return max(t, candidate.inside)
    return min(t, candidate.inside)


# -- certifying pieces with several terms: interval branch and bound -------------------------

_IVS: dict = {}
"""_iv's results by (working precision, value): the boxes' ends and rates recur across searches."""


def _iv(backend: Any, value: Fraction) -> Any:
    ctx = backend.ctx
    key = (ctx.prec, value)
    found = _IVS.get(key)
    if found is None:
        if len(_IVS) > 100_000:
            _IVS.clear()
        found = _IVS[key] = ctx.mpf(value.numerator) / value.denominator
    return found


def _hull(backend: Any, a: Fraction, b: Fraction) -> Any:
    lo, hi = _iv(backend, a), _iv(backend, b)
    return backend.ctx.mpf([lo.a, hi.b])


class _Form:
    """A piece's terms prepared for interval evaluation: (rate, degree, coefficient) with the
    rate as an interval, and the derivative's terms likewise (computed once per piece).

    ``exps`` (optional, shared by the forms of one search): e^(rate t) by (rate, t) -- the terms of g,
    h and their derivatives share rates, and every box is evaluated for all four; the value is the
    one ``ctx.exp`` gives for that rate and interval."""

    def __init__(self, terms: dict, backend: Any, exps: Optional[dict] = None) -> None:
        self.backend = backend
        self.terms = terms
        self.exps = {} if exps is None else exps
        self.items = [(r, _iv(backend, r) if r else None, d, c) for (r, d), c in terms.items()]
        slope: dict = {}
        for (rate, degree), c in terms.items():
            for key, factor in (((rate, degree - 1), degree), ((rate, degree), rate)):
                if factor and key[1] >= 0:
                    value = c * _iv(backend, Fraction(factor))
                    slope[key] = slope[key] + value if key in slope else value
        self.slope = [(r, _iv(backend, r) if r else None, d, c) for (r, d), c in slope.items()]

    def _sum(self, items: list, t: Any, ctx: Any) -> Any:
        total = ctx.mpf(0)
        exps = self.exps
        where = t._mpi_
        for r, rate, degree, c in items:
            value = c * t ** degree if degree else c
            if rate is not None:
                key = (r, where)
                e = exps.get(key)
                if e is None:
                    e = exps[key] = ctx.exp(rate * t)
                value = value * e
            total += value
        return total

    def at(self, t: Any) -> Any:
        """An interval containing the sum for every t in the interval ``t``."""
        return self._sum(self.items, t, self.backend.ctx)

    def derivative_at(self, t: Any) -> Any:
        return self._sum(self.slope, t, self.backend.ctx)


def _point_ratio(gf: "_Form", hf: "_Form", t: Fraction) -> Any:
    backend = gf.backend
    point = _iv(backend, t)
    g, h = gf.at(point), hf.at(point)
    if h.a > 0 and g.a >= 0:
        return g / h
    return None


def _box_upper(gf: _Form, hf: _Form, a: Fraction, b: Fraction, ends: dict) -> Any:
    """An upper bound of g/h on [a, b] (inf when the enclosure is too wide), or -inf when an end's
    own ratio bounds the box (F = R h - g with F(e) = 0 and F' of the right sign on the box)."""
    backend = gf.backend
    ctx = backend.ctx
    box = _hull(backend, a, b)
    g, h = gf.at(box), hf.at(box)
    if not h.a > 0:
        return ctx.mpf("inf")  # the enclosure is too wide (cancellation): bisect
    dg, dh = gf.derivative_at(box), hf.derivative_at(box)
    for end in (a, b):
        ratio = ends.get(end)
        if ratio is None:
            continue
        slope = ratio * dh - dg
        if (end == a and slope.a >= 0) or (end == b and slope.b <= 0):
            return ctx.mpf("-inf")
    natural = (g / h).b
    middle = (a + b) / 2
    at_middle = _point_ratio(gf, hf, middle)
    if at_middle is None:
        return natural
    slope = (dg * h - g * dh) / (h * h)  # the mean-value form: quadratic near an interior maximum
    mean_value = (at_middle + slope * (box - _iv(backend, middle))).b
    return min(natural, mean_value)


def _decay(backend: Any, power: int, rate: Fraction, u0: Fraction) -> Any:
    """An upper bound of u^power e^(-rate u) over u >= u0 > 0 (rate >= 0), or None if it may grow."""
    ctx = backend.ctx
    if rate < 0 or (rate == 0 and power > 0):
        return None
    if power > 0 and u0 < Fraction(power) / rate:
        return None  # still increasing at u0: move the edge further out
    value = _iv(backend, u0) ** power if power else ctx.mpf(1)
    if rate:
        value = value * ctx.exp(-_iv(backend, rate) * _iv(backend, u0))
    return value.b


def _tail_bound(gt: dict, ht: dict, edge: Fraction, side: int, backend: Any) -> Any:
    """An upper bound of g/h beyond ``edge`` towards -inf (side -1) or +inf (side +1); inf when the
    ratio grows without bound there; None when undecided (edge not far enough out).

    With u = |t| each term is c side^d u^d e^(-rho u), rho = -side * rate > 0 for an integrable
    tail.  Dividing by the dominant term (least rho, then highest degree) leaves factors
    u^j e^(-delta u) that are at most their value at u0 = |edge| once u0 is past their maximum.
    """
    ctx = backend.ctx
    u0 = abs(edge)
    if side * edge <= 0:
        return None

    def normal(terms: dict) -> Optional[tuple]:
        items = [(-side * rate, degree, c * (side ** degree)) for (rate, degree), c in terms.items()]
        rho, top = min((r, -d) for r, d, _ in items)
        top = -top
        dominant = next(c for r, d, c in items if r == rho and d == top)
        if backend.sign(dominant) != 1:
            return None
        bracket = ctx.mpf(1)
        for r, d, c in items:
            if r == rho and d == top:
                continue
            reach = _decay(backend, d - top, r - rho, u0)
            if reach is None:
                return None
            bracket += (c / dominant) * ctx.mpf([-reach, reach])
        return rho, top, dominant, bracket
    num, den = normal(gt), normal(ht)
    if num is None or den is None or not den[3].a > 0:
        return None
    (rho_g, d_g, c_g, b_g), (rho_h, d_h, c_h, b_h) = num, den
    if rho_g < rho_h or (rho_g == rho_h and d_g > d_h):
        return math.inf
    prefactor = _decay(backend, d_g - d_h, rho_g - rho_h, u0)
    if prefactor is None:
        return None
    bound = (c_g / c_h) * b_g / b_h
    return (ctx.mpf([0, prefactor]) * bound).b if bound.b > 0 else ctx.mpf(0)


MAX_BOXES = 600
"""Boxes examined per piece before the bound is left as it is."""
MIN_WIDTH = Fraction(1, 2 ** 70)
TOLERANCE = 10 ** -30
"""Boxes whose bound exceeds the best value by less than this (relative) end the search there:
the supremum is then known to 30 digits, as an enclosure."""


@dataclass
class Bound:
    """sup g/h lies in [lower, upper]; ``lower`` is attained (or approached) at ``where``.

    ``at_candidate``: the supremum is the value at a candidate point (every box was bounded by
    a known value), so it can be decided exactly there; otherwise only the enclosure is known.
    """

    lower: Any
    upper: Any
    where: Optional[Candidate]
    at_candidate: bool
    tops: tuple = ()  # every point examined whose ratio may equal the supremum (intervals overlap)


def bound_sup(g: pw.Piecewise, h: pw.Piecewise, lower: Any, where: Optional[Candidate], backend: Any,
              target: Any = None, exps: Optional[dict] = None) -> Optional[Bound]:
    """Enclose sup g/h given a certified value ``lower`` attained at ``where``: interval branch and
    bound (natural and mean-value forms, with the end-ratio argument) on every piece with several
    terms, and the dominant exponentials for unbounded pieces.  None when a tail cannot be bounded.

    ``target`` (a number, optional): boxes whose bound is at most it need no further splitting --
    a check only needs to know that the ratio stays below the claim's bound; the enclosure's upper
    end is then that box's bound.  The search stops as soon as ``lower`` exceeds ``target``.

    ``exps`` (optional): the caller's store of e^(rate t) by (rate, interval t), shared with its other
    searches at the same precision."""
    cuts = tuple(sorted(set(g.cuts) | set(h.cuts)))
    g, h = pw.refine(g, cuts), pw.refine(h, cuts)
    if exps is None:  # e^(rate t) shared by the forms of this search (or the caller's searches)
        exps = {}
    upper = lower.b
    at_candidate = True
    seen = [(lower, where)]  # every point whose ratio was evaluated: the supremum may sit at any that ties

    def done(at: bool) -> Bound:
        """The bound: the enclosure reaches every examined point that may tie with ``lower``."""
        tops = [(v, c) for v, c in seen if c is not None and v.b >= lower.a]
        top = max([upper, lower.b] + [v.b for v, _ in tops])
        return Bound(lower, top, where, at, tuple(dict.fromkeys(c for _, c in tops)))
    for index, (gt, ht) in enumerate(zip(g.pieces, h.pieces)):
        gt, ht = _nonzero(gt, backend), _nonzero(ht, backend)
        if not gt or (len(gt) == 1 and len(ht) == 1 and all(d == 0 for _, d in list(gt) + list(ht))
                      and all(backend.sign(c) == 1 for c in (*gt.values(), *ht.values()))):
            continue
        lo = cuts[index - 1] if index else None
        hi = cuts[index] if index < len(cuts) else None
        if lo is None or hi is None:
            anchor = hi if lo is None else lo
            step = Fraction(-1 if lo is None else 1)
            gf, hf = _Form(gt, backend, exps), _Form(ht, backend, exps)
            tail = None
            for _ in range(16):
                edge = anchor + step
                value = _point_ratio(gf, hf, edge)
                if value is not None:
                    seen.append((value, Candidate(edge, edge)))
                if value is not None and value.a > lower.a:
                    lower, where = value, Candidate(edge, edge)
                tail = _tail_bound(gt, ht, edge, -1 if lo is None else 1, backend)
                if tail is not None and tail != math.inf and (
                        tail <= lower.a or (target is not None and tail <= target)):
                    break
                step *= 2
            if tail is None:
                return None
            if tail == math.inf:
                return Bound(lower, math.inf, where, False)
            if tail > lower.a:
                upper = max(upper, tail)
                at_candidate = False
            lo, hi = (edge, hi) if lo is None else (lo, edge)
        gf, hf = _Form(gt, backend, exps), _Form(ht, backend, exps)
        ends = {end: r for end in (lo, hi) if (r := _point_ratio(gf, hf, end)) is not None}
        for end, r in ends.items():
            seen.append((r, Candidate(end, (lo + hi) / 2)))
            if r.a > lower.a:
                lower, where = r, Candidate(end, (lo + hi) / 2)
        stack = [(lo, hi)]
        boxes = 0
        while stack:
            a, b = stack.pop()
            boxes += 1
            bound = _box_upper(gf, hf, a, b, ends)
            if bound <= lower.a:
                continue
            if bound <= lower.a * (1 + TOLERANCE) or (target is not None and bound <= target):
                upper, at_candidate = max(upper, bound), False  # an enclosure, not a value
                continue
            mid = (a + b) / 2
            value = _point_ratio(gf, hf, mid)
            if value is not None:
                seen.append((value, Candidate(mid, mid)))
            if value is not None and value.a > lower.a:
                lower, where = value, Candidate(mid, mid)
                if target is not None and lower.a > target:
                    return done(False)
            if b - a < MIN_WIDTH or boxes > MAX_BOXES:
                upper = max(upper, bound)
                at_candidate = False
                continue
            stack += [(a, mid), (mid, b)]
    return done(at_candidate)
