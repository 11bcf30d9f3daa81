"""Exact calculus on piecewise exponential-polynomial functions of one real variable.

Laplace and exponential noise have densities that are exponentials on each
side of a breakpoint; their distribution functions, products of those, and
integrals of products stay in the class

    f(t) = sum_k c_k * t^d_k * e^(r_k t)      on each piece between breakpoints,

with exact rational breakpoints and rates r_k, and coefficients c_k in the
active backend (certified intervals, or exact sympy numbers).  The class is
closed under products, shifts t -> t + s, restriction to an interval and
antiderivatives, and every definite integral has a closed form -- so noise
can be integrated out of a mechanism exactly, with no quadrature and no
sampling.  This is the engine's continuous arithmetic; :mod:`.noise` builds on it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

Terms = dict
"""{(rate, degree): coefficient} -- the sum of coefficient * t^degree * e^(rate t)."""


@dataclass(frozen=True)
class Piecewise:
    """``cuts`` t_1 < ... < t_k (exact) and k + 1 pieces of terms: (-inf, t_1), ..., (t_k, +inf)."""

    cuts: tuple
    pieces: tuple

    def piece_at(self, t: Fraction) -> int:
        """The index of the piece containing ``t`` (a cut belongs to the piece on its right)."""
        index = 0
        while index < len(self.cuts) and self.cuts[index] <= t:
            index += 1
        return index


def interior(lo: Optional[Fraction], hi: Optional[Fraction]) -> Fraction:
    """A point strictly inside the interval (lo, hi) (None: unbounded)."""
    if lo is None and hi is None:
        return Fraction(0)
    if lo is None:
        return hi - 1
    if hi is None:
        return lo + 1
    return (lo + hi) / 2


def constant(value: Any) -> Piecewise:
    return Piecewise((), ({(Fraction(0), 0): value},))


def refine(f: Piecewise, cuts: tuple) -> Piecewise:
    """The same function over the pieces of ``cuts`` (which must include f's cuts)."""
    if cuts == f.cuts:
        return f
    pieces = []
    source = 0
    for index in range(len(cuts) + 1):
        left = cuts[index - 1] if index else None
        while source < len(f.cuts) and left is not None and f.cuts[source] <= left:
            source += 1
        pieces.append(f.pieces[source])
    return Piecewise(cuts, tuple(pieces))


def _union(*fs: Piecewise) -> tuple:
    return tuple(sorted(set().union(*(f.cuts for f in fs))))


def add(f: Piecewise, g: Piecewise) -> Piecewise:
    cuts = _union(f, g)
    f, g = refine(f, cuts), refine(g, cuts)
    return Piecewise(cuts, tuple(_plus(a, b) for a, b in zip(f.pieces, g.pieces)))


def subtract(f: Piecewise, g: Piecewise) -> Piecewise:
    cuts = _union(f, g)
    f, g = refine(f, cuts), refine(g, cuts)
    return Piecewise(cuts, tuple(_plus(a, {k: -v for k, v in b.items()}) for a, b in zip(f.pieces, g.pieces)))


def _plus(a: Terms, b: Terms) -> Terms:
    out = dict(a)
    for key, value in b.items():
        out[key] = out[key] + value if key in out else value
    return out


def multiply(f: Piecewise, g: Piecewise) -> Piecewise:
    cuts = _union(f, g)
    f, g = refine(f, cuts), refine(g, cuts)
    pieces = []
    for a, b in zip(f.pieces, g.pieces):
        out: Terms = {}
        for (ra, da), ca in a.items():
            for (rb, db), cb in b.items():
                key = (ra + rb, da + db)
                product = ca * cb
                out[key] = out[key] + product if key in out else product
        pieces.append(out)
    return Piecewise(cuts, tuple(pieces))


def restrict(f: Piecewise, lo: Optional[Fraction], hi: Optional[Fraction]) -> Piecewise:
    """f on the interval (lo, hi), zero outside (None: unbounded on that side)."""
    cuts = _union(f, Piecewise(tuple(c for c in (lo, hi) if c is not None), ()))
    f = refine(f, cuts)
    pieces = []
    for index, terms in enumerate(f.pieces):
        left = cuts[index - 1] if index else None
        right = cuts[index] if index < len(cuts) else None
        inside = ((lo is None or (left is not None and left >= lo))
                  and (hi is None or (right is not None and right <= hi)))
        pieces.append(terms if inside else {})
    return Piecewise(cuts, tuple(pieces))


def shift(f: Piecewise, s: Fraction, backend: Any) -> Piecewise:
    """t -> f(t + s)."""
    if s == 0:
        return f
    pieces = []
    for terms in f.pieces:
        out: Terms = {}
        for (rate, degree), c in terms.items():
            scale = c * backend.exp(rate * s) if rate else c
            for k in range(degree + 1):
                coefficient = scale * backend.num(math.comb(degree, k) * s ** (degree - k))
                key = (rate, k)
                out[key] = out[key] + coefficient if key in out else coefficient
        pieces.append(out)
    return Piecewise(tuple(c - s for c in f.cuts), tuple(pieces))


def _term_at(backend: Any, rate: Fraction, degree: int, c: Any, t: Fraction) -> Any:
    value = c * backend.num(t ** degree) if degree else c
    return value * backend.exp(rate * t) if rate else value


def evaluate_terms(terms: Terms, t: Fraction, backend: Any) -> Any:
    total = backend.num(0)
    for (rate, degree), c in terms.items():
        total = total + _term_at(backend, rate, degree, c, t)
    return total


def evaluate(f: Piecewise, t: Fraction, backend: Any) -> Any:
    return evaluate_terms(f.pieces[f.piece_at(t)], t, backend)


def _decaying(terms: Terms, side: int, backend: Any) -> Terms:
    """The terms that vanish at -inf (side -1) or +inf (side +1).

    An integrable function's other terms on an unbounded piece are exactly zero
    (distinct exponential-polynomial terms are linearly independent), so they
    are dropped; an interval that excludes zero there means a bug, not a fact.
    """
    kept: Terms = {}
    for (rate, degree), c in terms.items():
        if (rate > 0 and side < 0) or (rate < 0 and side > 0):
            kept[(rate, degree)] = c
        elif backend.sign(c) not in (0, None):
            raise ArithmeticError(f"non-integrable term {c} t^{degree} e^({rate} t) on an unbounded piece")
    return kept


def _primitive(terms: Terms, backend: Any) -> Terms:
    """An antiderivative of each term (closed forms; no constant added)."""
    out: Terms = {}
    for (rate, degree), c in terms.items():
        if rate == 0:
            key = (rate, degree + 1)
            value = c / backend.num(degree + 1)
            out[key] = out[key] + value if key in out else value
            continue
        # int t^d e^(rt) dt = e^(rt) sum_k (-1)^k d!/(d-k)! t^(d-k) / r^(k+1)
        falling = 1
        for k in range(degree + 1):
            key = (rate, degree - k)
            value = c * backend.num(Fraction((-1) ** k * falling) / rate ** (k + 1))
            out[key] = out[key] + value if key in out else value
            falling *= degree - k
    return out


def antiderivative(f: Piecewise, backend: Any) -> tuple[Piecewise, Any]:
    """(H, total): H(t) = integral of f from -inf to t, and total = H(+inf)."""
    pieces = list(f.pieces)
    pieces[0] = _decaying(pieces[0], -1, backend)
    pieces[-1] = _decaying(pieces[-1], 1, backend)
    out = []
    previous: Optional[Terms] = None
    for index, terms in enumerate(pieces):
        primitive = _primitive(terms, backend)
        if index:
            cut = f.cuts[index - 1]
            constant_term = evaluate_terms(previous, cut, backend) - evaluate_terms(primitive, cut, backend)
            key = (Fraction(0), 0)
            primitive[key] = primitive[key] + constant_term if key in primitive else constant_term
        out.append(primitive)
        previous = primitive
    total = out[-1].get((Fraction(0), 0), backend.num(0))
    return Piecewise(f.cuts, tuple(out)), total


def integral(f: Piecewise, backend: Any) -> Any:
    """The integral of f over the real line."""
    return antiderivative(f, backend)[1]


def window_integral(f: Piecewise, lo: Optional[Fraction], hi: Optional[Fraction], backend: Any) -> Piecewise:
    """x -> integral of f(y) over y in (x + lo, x + hi), as a function of x (None: unbounded)."""
    h, total = antiderivative(f, backend)
    upper = constant(total) if hi is None else shift(h, hi, backend)
    if lo is None:
        return upper
    return subtract(upper, shift(h, lo, backend))


def _pieces(f: Piecewise) -> list[tuple[Optional[Fraction], Optional[Fraction], Terms]]:
    """(lo, hi, terms) for every piece with terms (None: unbounded)."""
    out = []
    for index, terms in enumerate(f.pieces):
        if terms:
            out.append((f.cuts[index - 1] if index else None, f.cuts[index] if index < len(f.cuts) else None, terms))
    return out


def _at_bound(primitive: Terms, bound: tuple, side: int, backend: Any) -> Terms:
    """The primitive (terms in r) at r = bound, as terms in g: bound = (c, s) means r = c + s*g
    (s in {0, -1}); c None is the limit at -inf (side -1) or +inf (side +1), where only decaying
    terms may remain (the integrand is integrable there), and they vanish."""
    c, s = bound
    if c is None:
        _decaying(primitive, side, backend)  # checks that nothing else is left
        return {}
    out: Terms = {}
    for (rate, degree), coefficient in primitive.items():
        # coefficient * (c + s g)^degree * e^(rate (c + s g))
        scale = coefficient * backend.exp(rate * c) if rate else coefficient
        for k in range(degree + 1):
            value = scale * backend.num(math.comb(degree, k) * c ** (degree - k) * s ** k)
            if value == 0 or (s == 0 and k > 0):
                continue
            key = (rate * s, k)
            out[key] = out[key] + value if key in out else value
    return out


def correlate(a: Piecewise, b: Piecewise, backend: Any) -> Piecewise:
    """g -> the integral over r of a(r) b(r + g): the density of x_b - x_a for independent parts.

    For a piece of a on (a0, a1) and one of b on (b0, b1), r runs over
    (max(a0, b0 - g), min(a1, b1 - g)); which bound is active changes only at the
    differences b_j - a_i, so those are the breakpoints in g, and on each piece
    in between the integral is an exponential-polynomial in g in closed form.
    """
    pa, pb = _pieces(a), _pieces(b)
    cuts = tuple(sorted({y - x for x in a.cuts for y in b.cuts}))
    pieces = []
    for index in range(len(cuts) + 1):
        lo_g = cuts[index - 1] if index else None
        hi_g = cuts[index] if index < len(cuts) else None
        g0 = interior(lo_g, hi_g)
        out: Terms = {}
        for a0, a1, at in pa:
            for b0, b1, bt in pb:
                lower = _bound_max(a0, b0, g0)
                upper = _bound_min(a1, b1, g0)
                if _value(lower, g0, -1) >= _value(upper, g0, 1):
                    continue
                for (ra, da), ca in at.items():
                    for (rb, db), cb in bt.items():
                        for k in range(db + 1):
                            # ca r^da e^(ra r) * cb C(db,k) r^k g^(db-k) e^(rb (r + g))
                            weight = ca * cb * backend.num(math.comb(db, k))
                            primitive = _primitive({(ra + rb, da + k): weight}, backend)
                            top = _at_bound(primitive, upper, 1, backend)
                            bottom = _at_bound(primitive, lower, -1, backend)
                            for terms, sign in ((top, 1), (bottom, -1)):
                                for (rate, degree), value in terms.items():
                                    key = (rate + rb, degree + db - k)
                                    value = value if sign > 0 else -value
                                    out[key] = out[key] + value if key in out else value
        pieces.append(out)
    return Piecewise(cuts, tuple(pieces))


def _bound_max(a0: Optional[Fraction], b0: Optional[Fraction], g0: Fraction) -> tuple:
    """The active lower bound max(a0, b0 - g) near g0, as (c, s): r = c + s*g; (None, 0) for -inf."""
    if a0 is None and b0 is None:
        return (None, 0)
    if b0 is None or (a0 is not None and a0 >= b0 - g0):
        return (a0, 0)
    return (b0, -1)


def _bound_min(a1: Optional[Fraction], b1: Optional[Fraction], g0: Fraction) -> tuple:
    if a1 is None and b1 is None:
        return (None, 0)
    if b1 is None or (a1 is not None and a1 <= b1 - g0):
        return (a1, 0)
    return (b1, -1)


def _value(bound: tuple, g0: Fraction, side: int) -> Any:
    c, s = bound
    if c is None:
        return math.inf * side
    return c + s * g0
