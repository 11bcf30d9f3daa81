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
