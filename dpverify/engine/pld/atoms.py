"""Privacy loss distributions with few distinct losses, composed exactly as multinomials.

A discrete pair (P, Q) whose outputs of finite loss take m distinct losses l_1..l_m (with P-masses
p_1..p_m) -- randomized response after Poisson subsampling has two, ln(1 + q(e^eps - 1)) and
ln(1 + q(e^-eps - 1)), which lie on no common lattice -- composes T times into the multinomial

    P(counts n_1..n_m) = T! / (n_1! ... n_m!) prod_i p_i^n_i,   loss = sum_i n_i l_i,

C(T + m - 1, m - 1) terms (different pairs composed: the product of their terms), each evaluated in certified intervals from exact masses and losses, and

    delta(eps') = 1 - (1 - p_inf)^T + sum over counts of P(counts) (1 - e^(eps' - loss))_+.

A term whose loss interval straddles eps' is decided by exact algebra when it can be (a loss equal
to eps' contributes 0), else contributes its enclosure [0, small].
The event S of a witness takes the terms whose loss is certified above eps' only, so that
P(S|X) - e^eps' P(S|X') is exactly its hockey-stick value (a lower bound of delta, pinned down).
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import sympy
from mpmath.libmp import from_int, fzero, round_ceiling, round_floor
from mpmath.libmp.libmpi import mpi_add, mpi_div, mpi_mul

from ..program.backend import exact_sign
from .budget import HOW, scaled

MAX_TERMS = 25_000
"""The most multinomial terms composed (a counted budget, from the counts before any term: each term costs
a few interval operations per distinct loss, about 0.3 ms at 50 digits; scaled by --max-work)."""


class TooManyTerms(Exception):
    """The multinomial has more than MAX_TERMS terms (the reason is the message)."""


@dataclass(frozen=True)
class Atoms:
    """The finite losses of a pair, exact: ``ratios[i]`` = P(o)/Q(o) on the outputs of group i,
    ``masses[i]`` their total P-mass; ``infinite`` the P-mass of outputs with Q(o) = 0."""

    ratios: tuple
    masses: tuple
    infinite: sympy.Expr


def atoms(p: Sequence[sympy.Expr], q: Sequence[sympy.Expr]) -> Atoms:
    """Group the outputs of the pair by their exact likelihood ratio (equal ratios shown by algebra;
    ratios that algebra cannot show equal stay apart, which is only slower)."""
    ratios: list = []
    masses: list = []
    infinite = sympy.Integer(0)
    for pm, qm in zip(p, q):
        pm, qm = sympy.sympify(pm), sympy.sympify(qm)
        if pm == 0:
            continue
        if qm == 0:
            infinite += pm
            continue
        ratio = sympy.simplify(pm / qm)
        for i, other in enumerate(ratios):
            if exact_sign(ratio - other) == 0:
                masses[i] += pm
                break
        else:
            ratios.append(ratio)
            masses.append(pm)
    return Atoms(tuple(ratios), tuple(masses), infinite)


def terms(groups: int, times: int) -> int:
    """The number of multinomial terms of ``groups`` losses composed ``times`` times."""
    return math.comb(times + groups - 1, groups - 1)


def _counts(groups: int, times: int) -> Iterator[tuple[int, ...]]:
    if groups == 1:
        yield (times,)
        return
    for first in range(times, -1, -1):
        for rest in _counts(groups - 1, times - first):
            yield (first, *rest)


@dataclass
class Sums:
    """delta(eps') (an enclosure), and P(S), Q(S) on the event S of certified losses above eps'."""

    delta: Any
    p_event: Any
    q_event: Any


def count(parts: Sequence[tuple[Atoms, int]]) -> int:
    """The number of terms of the composition of ``parts`` (pairs (atoms, runs))."""
    return math.prod(terms(len(a.ratios), t) if a.ratios else 1 for a, t in parts)


class Terms(list):
    """The terms (counts, loss, P-mass, Q-mass) of a composition sorted by the lower end of their loss,
    with suffix sums of both masses (built once per table): delta(eps') is then one suffix read plus
    the few terms whose loss interval meets eps'."""

    def __init__(self, items: list, ctx: Any) -> None:
        super().__init__(sorted(items, key=lambda t: t[1].a))
        self.ctx = ctx
        self.lows = [t[1].a for t in self]
        self.width = max(((t[1].b - t[1].a).b for t in self), default=ctx.mpf(0).a, key=float)
        self.p_suffix, self.q_suffix = [ctx.mpf(0)] * (len(self) + 1), [ctx.mpf(0)] * (len(self) + 1)
        for j in range(len(self) - 1, -1, -1):
            self.p_suffix[j] = self.p_suffix[j + 1] + self[j][2]
            self.q_suffix[j] = self.q_suffix[j + 1] + self[j][3]


def composed_terms(parts: Sequence[tuple[Atoms, int]], backend: Any) -> Terms:
    """(counts, loss, P-mass, Q-mass) of every term of the composition of ``parts`` (pairs (atoms, runs)):
    counts over the concatenated ratios of the parts, in certified intervals of ``backend`` -- the mass
    an exact multinomial coefficient times powers of the groups' masses, the Q-mass the same with the
    groups' Q-masses p_i / r_i (:class:`TooManyTerms` beyond MAX_TERMS)."""
    if count(parts) > scaled(MAX_TERMS):
        groups = ", ".join(f"{len(a.ratios)} losses x {t:,}" for a, t in parts)
        raise TooManyTerms(f"{groups} make {count(parts):,} multinomial terms (more than the budget of "
                           f"{int(scaled(MAX_TERMS)):,}; {HOW})")
    ctx = backend.ctx
    out: list[tuple[tuple, Any, Any, Any]] = [((), ctx.mpf(0), ctx.mpf(1), ctx.mpf(1))]
    for found, times in parts:
        if not found.ratios:
            continue
        losses = [ctx.log(backend.num(r)) for r in found.ratios]
        p_masses = [backend.num(m) for m in found.masses]
        q_masses = [backend.num(m / r) for m, r in zip(found.masses, found.ratios)]
        p_pow = [_powers(ctx, m, times) for m in p_masses]
        q_pow = [_powers(ctx, m, times) for m in q_masses]
        factorials = _powers(ctx, None, times)  # k! for k <= times, intervals (exact integers would cost O(T) bits each)
        own = _own_terms(losses, p_pow, q_pow, factorials, times, ctx.prec)
        make, prec = ctx.make_mpf, ctx.prec
        out = [(c1 + c2, make(mpi_add(l1._mpi_, l2, prec)), make(mpi_mul(p1._mpi_, p2, prec)),
                make(mpi_mul(q1._mpi_, q2, prec))) for c1, l1, p1, q1 in out for c2, l2, p2, q2 in own]
    return Terms(out, ctx)


def _own_terms(losses: list, p_pow: list, q_pow: list, factorials: list, times: int, prec: int) -> list:
    """(counts, loss, P-mass, Q-mass) of one part's multinomial, the three as raw mpmath intervals: the
    operations of the interval context's operators (same order and precision: the same enclosures) without
    the objects' overhead."""
    own = []
    zero = (fzero, fzero)
    top = factorials[times]._mpi_
    facts = [f._mpi_ for f in factorials]
    raw_losses = [v._mpi_ for v in losses]
    raw_p = [[v._mpi_ for v in row] for row in p_pow]
    raw_q = [[v._mpi_ for v in row] for row in q_pow]
    for counts in _counts(len(losses), times):
        coefficient = top
        for n in counts:
            if n > 1:
                coefficient = mpi_div(coefficient, facts[n], prec)
        loss, p_mass, q_mass = zero, coefficient, coefficient
        for i, n in enumerate(counts):
            if n:
                factor = (from_int(n, prec, round_floor), from_int(n, prec, round_ceiling))
                loss = mpi_add(loss, mpi_mul(factor, raw_losses[i], prec), prec)
                p_mass = mpi_mul(p_mass, raw_p[i][n], prec)
                q_mass = mpi_mul(q_mass, raw_q[i][n], prec)
        own.append((counts, loss, p_mass, q_mass))
    return own


def _powers(ctx: Any, value: Any, times: int) -> list:
    """value^0 .. value^times (intervals); 0! .. times! when ``value`` is None."""
    out = [ctx.mpf(1)]
    for k in range(1, times + 1):
        out.append(out[-1] * (k if value is None else value))
    return out


def composed_delta(parts: Sequence[tuple[Atoms, int]], eps: sympy.Expr, backend: Any, table: Any = None) -> Sums:
    """delta(eps') of the composition of ``parts`` (pairs (atoms, runs)), in certified intervals of
    ``backend``; ``table`` is :func:`composed_terms` at the backend's precision when already computed.
    The terms certified above eps' are one suffix (S_P - e^eps' S_Q, exact in intervals); the few whose
    loss interval meets eps' are taken one by one, those shown equal to eps' by algebra left out."""
    ctx = backend.ctx
    eps_iv = backend.num(eps)
    finite = ctx.mpf(1)
    for found, times in parts:
        finite *= (ctx.mpf(1) - backend.num(found.infinite)) ** times
    inf_p = ctx.mpf(1) - finite
    ratios = tuple(r for found, _ in parts for r in found.ratios)
    found = table if table is not None else composed_terms(parts, backend)
    above = bisect.bisect_right(found.lows, eps_iv.b)  # terms from here have loss certified > eps'
    p_event, q_event = found.p_suffix[above], found.q_suffix[above]
    delta = p_event - ctx.exp(eps_iv) * q_event
    k = above - 1
    while k >= 0 and not found.lows[k] + found.width <= eps_iv.a:  # losses possibly above eps': one by one
        counts, loss, mass, _ = found[k]
        k -= 1
        if not loss.b > eps_iv.a or _exactly_at_most(counts, ratios, eps):
            continue  # a loss at most eps' (a loss equal to eps', shown by algebra, contributes 0)
        excess = 1 - ctx.exp(eps_iv - loss)
        delta += mass * ctx.mpf([max(excess.a, 0), max(excess.b, 0)])
    delta = ctx.mpf([max(delta.a, 0), delta.b])
    return Sums(delta + inf_p, p_event + inf_p, q_event)


def _exactly_at_most(counts: tuple, ratios: tuple, eps: sympy.Expr) -> bool:
    """True when sum_i n_i ln r_i <= eps' is shown exactly (False: above, or undecided): first by
    prod_i r_i^(n_i / g) against e^(eps' / g), g the counts' gcd (a tie such as T ln r = eps' becomes
    r = e^(eps' / T): rational functions of exponentials, which algebra decides), then by the
    logarithms expanded."""
    g = math.gcd(*counts)
    if g:
        product = sympy.Mul(*(r ** (n // g) for n, r in zip(counts, ratios) if n))
        sign = exact_sign(sympy.expand(product - sympy.exp(eps / g)))
        if sign is not None:
            return sign <= 0
    loss = sympy.Add(*(n * sympy.log(r) for n, r in zip(counts, ratios) if n))
    sign = exact_sign(sympy.expand_log(loss - eps, force=True))
    return sign is not None and sign <= 0


def poisson_subsampled(p: Sequence[sympy.Expr], q: Sequence[sympy.Expr], rate: sympy.Expr) -> list[tuple[list, list]]:
    """The two ordered pairs of Poisson subsampling at ``rate`` of a dominating pair (P, Q) under add/remove
    neighbours: the mixture rate P + (1 - rate) Q against Q (the record added), and Q against the mixture
    (the record removed), output by output, exactly."""
    rate = sympy.sympify(rate)
    mixture = [rate * a + (1 - rate) * b for a, b in zip(p, q)]
    return [(mixture, list(q)), (list(q), mixture)]


def without_replacement(p: Sequence[sympy.Expr], q: Sequence[sympy.Expr], rate: sympy.Expr) -> list[tuple[list, list]]:
    """The ordered pairs of sampling m of n records without replacement (``rate`` = m/n) of a base pair
    (P, Q) under replace-one neighbours, exactly, output by output.  With the replaced record sampled
    (probability m/n) the laws are P and Q; without it both releases share one law A, so the pair is
    ((1 - rate) A + rate P, (1 - rate) A + rate Q); its hockey-stick divergence is convex in A, and for
    a base law set {P, Q} (randomized response or a clamped count on one sampled record) its extreme
    points are A = Q and A = P: the mixtures rate P + (1 - rate) Q against Q and P against
    rate Q + (1 - rate) P, in both orders."""
    rate = sympy.sympify(rate)
    toward_q = [rate * a + (1 - rate) * b for a, b in zip(p, q)]
    toward_p = [rate * b + (1 - rate) * a for a, b in zip(p, q)]
    return [(toward_q, list(q)), (list(q), toward_q), (list(p), toward_p), (toward_p, list(p))]
