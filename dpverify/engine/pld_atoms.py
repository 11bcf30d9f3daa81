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

import math
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import sympy

from .backend import exact_sign

MAX_TERMS = 300_000
"""The most multinomial terms composed (a counted budget)."""


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


def composed_terms(parts: Sequence[tuple[Atoms, int]], backend: Any) -> list[tuple[tuple, Any, Any]]:
    """(counts, loss, P-mass) of every term of the composition of ``parts`` (pairs (atoms, runs)): counts
    over the concatenated ratios of the parts, in certified intervals of ``backend`` (:class:`TooManyTerms`
    beyond MAX_TERMS)."""
    if count(parts) > MAX_TERMS:
        groups = ", ".join(f"{len(a.ratios)} losses x {t}" for a, t in parts)
        raise TooManyTerms(f"{groups} make {count(parts):,} terms (more than {MAX_TERMS:,})")
    ctx = backend.ctx
    out: list[tuple[tuple, Any, Any]] = [((), ctx.mpf(0), ctx.mpf(1))]
    for found, times in parts:
        if not found.ratios:
            continue
        losses = [ctx.log(backend.num(r)) for r in found.ratios]
        log_masses = [ctx.log(backend.num(m)) for m in found.masses]
        log_fact = [ctx.mpf(0)]
        for n in range(1, times + 1):
            log_fact.append(log_fact[-1] + ctx.log(n))
        own = []
        for counts in _counts(len(losses), times):
            loss = sum((n * l for n, l in zip(counts, losses) if n), ctx.mpf(0))
            log_mass = log_fact[times] - sum(log_fact[n] for n in counts) + sum(
                (n * lm for n, lm in zip(counts, log_masses) if n), ctx.mpf(0))
            own.append((counts, loss, ctx.exp(log_mass)))
        out = [(c1 + c2, l1 + l2, m1 * m2) for c1, l1, m1 in out for c2, l2, m2 in own]
    return out


def composed_delta(parts: Sequence[tuple[Atoms, int]], eps: sympy.Expr, backend: Any, table: Any = None) -> Sums:
    """delta(eps') of the composition of ``parts`` (pairs (atoms, runs)), in certified intervals of
    ``backend``; ``table`` is :func:`composed_terms` at the backend's precision when already computed."""
    ctx = backend.ctx
    eps_iv = backend.num(eps)
    finite = ctx.mpf(1)
    for found, times in parts:
        finite *= (ctx.mpf(1) - backend.num(found.infinite)) ** times
    inf_p = ctx.mpf(1) - finite
    ratios = tuple(r for found, _ in parts for r in found.ratios)
    delta, p_event, q_event = ctx.mpf(0), ctx.mpf(0), ctx.mpf(0)
    for counts, loss, mass in (table if table is not None else composed_terms(parts, backend)):
        if not loss.b > eps_iv.a:
            continue
        if not loss.a > eps_iv.b and _exactly_at_most(counts, ratios, eps):
            continue  # a loss equal to eps' (shown by algebra) contributes 0
        excess = 1 - ctx.exp(eps_iv - loss)
        delta += mass * ctx.mpf([max(excess.a, 0), max(excess.b, 0)])
        if loss.a > eps_iv.b:
            p_event += mass
            q_event += mass * ctx.exp(-loss)
    return Sums(delta + inf_p, p_event + inf_p, q_event)


def _exactly_at_most(counts: tuple, ratios: tuple, eps: sympy.Expr) -> bool:
    """True when sum_i n_i ln r_i <= eps' is shown exactly (False: above, or undecided)."""
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
