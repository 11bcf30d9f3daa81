"""The hockey-stick divergence of releases with one noisy value per output, in certified intervals.

delta(X, X') = sum over discrete outputs of max(0, P(o|X) - e^eps P(o|X')) plus, for each
output that releases a value v, the integral of max(0, g(v) - e^eps h(v)).  Where g and h are
single exponentials on a piece (a released Laplace or exponential value that nothing else
constrains) their difference changes sign at most once, at
v* = ln(e^eps c_h / c_g) / (r_g - r_h), and the integral over the part where it is positive has
a closed form -- evaluated in certified intervals with v* an interval.  Anything else (several
released values, pieces with several terms) raises :class:`Undecided`.  The privacy check
(:mod:`dpverify.checks.privacy.density_delta`) compares the result with the claim.
"""
from __future__ import annotations

from typing import Any

from . import piecewise as pw
from .density_cells import normalise
from .noisy import Density


class Undecided(Exception):
    """This table's divergence is outside what the closed form covers."""


def _piece_excess(gt: dict, ht: dict, lo: Any, hi: Any, e_eps: Any, backend: Any) -> tuple[Any, Any]:
    """(int g, int h) over the part of (lo, hi) where g > e^eps h, for single exponentials g, h."""
    ctx = backend.ctx
    zero = ctx.mpf(0)
    if not gt:
        return zero, zero
    if not ht:
        return _integral(gt, lo, hi, backend), zero
    if len(gt) != 1 or len(ht) != 1:
        raise Undecided("a density with several terms on a piece")
    ((rg, dg), cg), = gt.items()
    ((rh, dh), ch), = ht.items()
    if dg or dh or backend.sign(cg) != 1 or backend.sign(ch) != 1:
        raise Undecided("a density with polynomial factors on a piece")
    if rg == rh:
        ratio = cg / (e_eps * ch)
        if ratio.a > 1:
            return _integral(gt, lo, hi, backend), _integral(ht, lo, hi, backend)
        if ratio.b <= 1:
            return zero, zero
        raise Undecided("a density ratio equal to e^eps on a whole piece")
    crossing = ctx.log(e_eps * ch / cg) / backend.num(rg - rh)  # g > e^eps h beyond it (rg > rh) or before it
    if rg > rh:
        left, right = _later(lo, crossing, backend), hi
    else:
        left, right = lo, _earlier(hi, crossing, backend)
    return _integral(gt, left, right, backend), _integral(ht, left, right, backend)


def _later(end: Any, crossing: Any, backend: Any) -> Any:
    """max(end, crossing) as an enclosure (end None: -inf)."""
    if end is None:
        return crossing
    e = backend.num(end)
    return backend.ctx.mpf([max(e.a, crossing.a), max(e.b, crossing.b)])


def _earlier(end: Any, crossing: Any, backend: Any) -> Any:
    """min(end, crossing) as an enclosure (end None: +inf)."""
    if end is None:
        return crossing
    e = backend.num(end)
    return backend.ctx.mpf([min(e.a, crossing.a), min(e.b, crossing.b)])


def _integral(terms: dict, lo: Any, hi: Any, backend: Any) -> Any:
    """The integral of single-exponential terms over (lo, hi): ends are Fractions, intervals or None."""
    ctx = backend.ctx
    ((rate, _), c), = terms.items()
    r = backend.num(rate)

    def at(t: Any) -> Any:
        if t is None:
            return ctx.mpf(0)  # a decaying exponential at its infinite end
        return c * ctx.exp(r * backend.num(t)) / r
    value = at(hi) - at(lo)  # the integrand is positive: an empty or reversed range gives <= 0
    return ctx.mpf([max(value.a, 0), max(value.b, 0)])


def divergence(law: dict, law_prime: dict, e_eps: Any, backend: Any) -> tuple[Any, Any, Any]:
    """(delta, P(S|X), P(S|X')) of the event S where X's law exceeds e^eps times X''s."""
    ctx = backend.ctx
    delta, p, q = ctx.mpf(0), ctx.mpf(0), ctx.mpf(0)
    for output, weight in law.items():
        other = law_prime.get(output)
        if not isinstance(weight, Density):
            other_mass = ctx.mpf(0) if other is None else other
            if isinstance(other_mass, Density):
                raise Undecided("an output released on one dataset and discrete on the other")
            if (weight - e_eps * other_mass).a > 0:
                delta, p, q = delta + weight - e_eps * other_mass, p + weight, q + other_mass
            elif not (weight - e_eps * other_mass).b <= 0:
                raise Undecided("a discrete output whose ratio straddles e^eps")
            continue
        a = normalise(weight, backend)
        b = normalise(other, backend) if other is not None else None
        if a.constant is None or len(a.slots) != 1 or isinstance(a.slots[0], tuple):
            raise Undecided("an output releasing several values, or not Laplace/exponential noise")
        g = pw.Piecewise(a.slots[0].cuts, tuple({k: v * a.constant for k, v in piece.items()}
                                               for piece in a.slots[0].pieces))
        if b is None:
            mass = pw.integral(g, backend)
            delta, p = delta + mass, p + mass
            continue
        if b.constant is None or len(b.slots) != 1 or isinstance(b.slots[0], tuple):
            raise Undecided("an output releasing several values, or not Laplace/exponential noise")
        h = pw.Piecewise(b.slots[0].cuts, tuple({k: v * b.constant for k, v in piece.items()}
                                               for piece in b.slots[0].pieces))
        cuts = tuple(sorted(set(g.cuts) | set(h.cuts)))
        g, h = pw.refine(g, cuts), pw.refine(h, cuts)
        for index, (gt, ht) in enumerate(zip(g.pieces, h.pieces)):
            lo = cuts[index - 1] if index else None
            hi = cuts[index] if index < len(cuts) else None
            pg, ph = _piece_excess({k: c for k, c in gt.items() if not backend.is_zero(c)},
                                   {k: c for k, c in ht.items() if not backend.is_zero(c)}, lo, hi, e_eps, backend)
            delta, p, q = delta + pg - e_eps * ph, p + pg, q + ph
    return ctx.mpf([max(delta.a, 0), max(delta.b, 0)]), p, q
