"""The cells of a privacy check on released values: (X, X', output) with the loss from densities.

A law maps an output skeleton (the discrete part, with markers v0, v1... for
released values) to a :class:`~dpverify.engine.continuous.noise.Density`.  For neighbours
X, X' and a skeleton o the privacy loss is

    ln(c/c') + sum_k sup_v ln(g_k(v)/h_k(v)),

as released values from different noise components are independent, so the
supremum of the product is the product of the suprema.  Each factor's
supremum comes from :mod:`dpverify.engine.continuous.density_ratio`: exact on pieces
where both densities are single exponentials (released Laplace noise: the
derived |q - q'|/b), enclosed by certified branch and bound elsewhere.
Gaussian factors have an unbounded loss unless their centres agree.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import sympy

from . import piecewise as pw
from .density_ratio import Candidate, bound_sup, ratio_at, ratio_sup
from .noisy import Density, Factor


def has_densities(table: Any) -> bool:
    return any(isinstance(w, Density) for law in table.laws for w in law.values())


# -- one weight, normalised into a constant and one factor per released value --------------

@dataclass
class Normal:
    constant: Any
    slots: list  # per released value: a Piecewise, or ("gaussian", centre, sigma)
    reason: str = ""
    mixes: tuple = ()  # per released value: the linear map of released sums it belongs to (or None)


def normalise(weight: Any, backend: Any) -> Normal:
    if not isinstance(weight, Density):
        return Normal(weight, [])
    sizes = {len(factors) for _, factors in weight.terms}
    if any(f.joint for _, factors in weight.terms for f in factors):
        return Normal(None, [], "two released values depend on each other through comparisons (no "
                                "one-dimensional density per value)")
    if len(weight.terms) == 1:
        constant, factors = weight.terms[0]
        return Normal(constant, [_slot(f, backend) for f in factors], mixes=tuple(f.mix for f in factors))
    if any(f.mix is not None for _, fs in weight.terms for f in fs):
        return Normal(None, [], "released sums of noisy values on several paths")
    if sizes == {1} and all(f.function is not None for _, fs in weight.terms for f in fs):
        total = None
        for constant, (factor,) in weight.terms:
            scaled = pw.Piecewise(factor.function.cuts, tuple({k: v * constant for k, v in piece.items()}
                                                              for piece in factor.function.pieces))
            total = scaled if total is None else pw.add(total, scaled)
        return Normal(backend.num(1), [total])
    return Normal(None, [], "several paths release several values (a sum of products of densities)")


def _slot(factor: Factor, backend: Any) -> Any:
    if factor.function is not None:
        return factor.function
    noise = factor.noise
    if noise is not None and noise.kind == "gaussian" and factor.interval == (None, None):
        return ("gaussian", noise.centre + factor.offset, noise.scale)
    return ("unsupported", factor)


def _gaussian_density(slot: tuple, v: Fraction, backend: Any) -> Any:
    _, centre, sigma = slot
    s = backend.num(sigma)
    z = (backend.num(v) - backend.num(centre)) / s
    return backend.exp(-(z * z) / 2) / (s * backend.sqrt(backend.num(2) * backend.num(sympy.pi)))


def slot_value(slot: Any, candidate: Candidate, backend: Any) -> Any:
    if isinstance(slot, tuple):
        return _gaussian_density(slot, candidate.t, backend)
    return pw.evaluate_terms(slot.pieces[slot.piece_at(candidate.inside)], candidate.t, backend)


# -- one cell: (X, X', skeleton) ---------------------------------------------------------------

@dataclass
class Cell:
    x: tuple
    x_prime: tuple
    output: Any
    loss: Any  # interval, math.inf, or None when undecided
    lower: Any  # a certified lower bound of the loss (interval) or math.inf
    points: Optional[list]  # per slot, the Candidate at which the loss (or its lower bound) is attained
    decided: bool
    reason: str = ""
    exact: bool = True  # the loss is attained at ``points`` (ties can be decided exactly there)
    below: bool = False  # the loss is shown to be at most the claim's eps (single released value)
    choices: tuple = ()  # per released value, every candidate whose ratio may tie with its supremum
    # (intervals overlap): an exact decision must rank them, not trust the one the intervals ranked first


@dataclass
class SlotSup:
    """sup g/h for one released value: ``value`` an interval enclosing it (or inf; None when not
    derived), ``lower`` a certified value below it, ``where`` the point attaining ``lower``;
    ``exact``: the supremum is the ratio at ``where`` (so a tie can be decided exactly there)."""

    value: Any
    lower: Any
    where: Optional[Candidate]
    exact: bool
    reason: str = ""
    below: bool = False  # shown to be at most the target (the claim's bound for this value)
    tops: tuple = ()  # every candidate whose ratio may equal the supremum (``where`` among them)


def _slot_sup(g: Any, h: Any, backend: Any, target: Any = None, search: bool = True,
              memo: Optional[dict] = None) -> SlotSup:
    if isinstance(g, tuple) or isinstance(h, tuple):
        if isinstance(g, tuple) and isinstance(h, tuple) and g[0] == h[0] == "gaussian":
            if g[2] != h[2]:
                return SlotSup(None, None, None, False, "Gaussian noise of different scales")
            if g[1] == h[1]:
                one = backend.num(1)
                return SlotSup(one, one, Candidate(Fraction(0), Fraction(0)), True)
            growth = Candidate(None, Fraction(0), 1 if g[1] > h[1] else -1)
            return SlotSup(math.inf, math.inf, growth, True)
        return SlotSup(None, None, None, False, "a released value of a kind with no exact density ratio")
    sup = ratio_sup(g, h, backend)
    if sup.infinite_support is not None:
        point = Candidate(sup.infinite_support, sup.infinite_support)
        return SlotSup(math.inf, math.inf, point, True)
    best, where, values = None, None, []
    for candidate in sup.candidates:
        if candidate.growth:
            return SlotSup(math.inf, math.inf, candidate, sup.decided)
        a, b = ratio_at(g, h, candidate, backend, memo)
        if backend.sign(b) != 1 or backend.sign(a) != 1:
            continue  # a sample at a zero of the density (a cut): no information
        value = a / b
        values.append((value, candidate))
        if best is None or value.b > best.b:
            best, where = value, candidate
    if best is None:
        zero = backend.num(0)
        if sup.decided:
            return SlotSup(zero, zero, None, True)
        best = zero
    if sup.decided:
        tops = tuple(dict.fromkeys(c for v, c in values if v.b >= best.a))
        enclosure = backend.ctx.mpf([best.a, max(v.b for v, _ in values)]) if len(tops) > 1 else best
        return SlotSup(enclosure, best, where, True, tops=tops)
    if not search:
        return SlotSup(None, best, where, False, "a density with several exponential terms on a piece")
    bound = bound_sup(g, h, best, where, backend, target, None if memo is None else memo.setdefault("exps", {}))
    if bound is None:
        return SlotSup(None, best, where, False, "a density that may vanish inside a piece")
    # the single-term pieces' candidates that may tie with the supremum count as well
    ties = [(v, c) for v, c in values if v.b >= bound.lower.a]
    tops = tuple(dict.fromkeys([*bound.tops, *(c for _, c in ties)]))
    upper = max([bound.upper, *(v.b for v, _ in ties)])
    enclosure = backend.ctx.mpf([bound.lower.a, upper])
    below = target is not None and upper != math.inf and upper <= target
    single = bound.at_candidate and len(tops) <= 1
    return SlotSup(bound.lower if single else enclosure, bound.lower, bound.where, bound.at_candidate,
                   below=below, tops=tops)


def _slot_sup_once(g: Any, h: Any, backend: Any, target: Any, search: bool, memo: Optional[dict]) -> SlotSup:
    """:func:`_slot_sup`, once per (g, h, target, search) while ``memo`` lives: densities are shared
    objects (several pairs of laws meet the same pair of densities), and the result is a function of
    its arguments alone.  The entry keeps g and h alive, so their identities are not reused."""
    if memo is None:
        return _slot_sup(g, h, backend, target, search)
    key = ("sup", id(g), id(h), None if target is None else target._mpi_, search)
    found = memo.get(key)
    if found is not None and found[0] is g and found[1] is h:
        return found[2]
    slot = _slot_sup(g, h, backend, target, search, memo)
    memo[key] = (g, h, slot)
    return slot


def _cell(x: tuple, x_prime: tuple, output: Any, w: Any, w_prime: Any, backend: Any, bound: Any = None,
          search: bool = True, memo: Optional[dict] = None) -> Cell:
    """The loss of one (pair, output); ``bound`` = e^eps of the claim, to stop refining below it.
    ``memo`` (optional): the caller's store of normal forms and piece values (:func:`cells`)."""
    if w_prime is None:
        return Cell(x, x_prime, output, math.inf, math.inf, _support_points(w, backend), True)
    a, b = _normal(w, backend, memo), _normal(w_prime, backend, memo)
    if a.constant is None or b.constant is None:
        return Cell(x, x_prime, output, None, None, None, False, a.reason or b.reason)
    if a.mixes != b.mixes:
        return Cell(x, x_prime, output, None, None, None, False,
                    "the released sums are different linear maps of the noise on the two datasets")
    ratio = a.constant / b.constant
    ctx = backend.ctx
    total, lower, points, exact, below = ratio, ratio, [], True, False
    choices: list[tuple] = []
    target = None
    if bound is not None and len(a.slots) == 1 and backend.sign(ratio) == 1:
        target = (bound / ratio).a
    for g, h in zip(a.slots, b.slots):
        slot = _slot_sup_once(g, h, backend, target, search, memo)
        below = slot.below
        points.append(slot.where)
        choices.append(slot.tops or (slot.where,))
        if slot.value is None:
            low = None if slot.lower is None or lower == math.inf else ctx.log(lower * slot.lower)
            return Cell(x, x_prime, output, None, low, points, False, slot.reason)
        exact &= slot.exact
        if slot.value == math.inf:
            return Cell(x, x_prime, output, math.inf, math.inf, points, True)
        total, lower = total * slot.value, lower * slot.lower
    if backend.is_zero(ratio):
        return Cell(x, x_prime, output, ctx.mpf(-math.inf), ctx.mpf(-math.inf), points, True)
    return Cell(x, x_prime, output, ctx.log(total), ctx.log(lower), points, True, exact=exact,
                below=below and target is not None, choices=tuple(tuple(c) for c in choices))


def _normal(weight: Any, backend: Any, memo: Optional[dict]) -> Normal:
    """:func:`normalise`, once per weight object while ``memo`` lives (the entry keeps the weight alive,
    so its identity is not reused; a weight meets every neighbour of its dataset)."""
    if memo is None:
        return normalise(weight, backend)
    key = ("normal", id(weight))
    found = memo.get(key)
    if found is not None and found[0] is weight:
        return found[1]
    normal = normalise(weight, backend)
    memo[key] = (weight, normal)
    return normal


def _support_points(weight: Any, backend: Any) -> Optional[list]:
    normal = normalise(weight, backend)
    points = []
    for slot in normal.slots:
        if isinstance(slot, tuple):
            points.append(Candidate(Fraction(0), Fraction(0)))
            continue
        for index, piece in enumerate(slot.pieces):
            if any(not backend.is_zero(c) for c in piece.values()):
                inside = pw.interior(slot.cuts[index - 1] if index else None,
                                     slot.cuts[index] if index < len(slot.cuts) else None)
                points.append(Candidate(inside, inside))
                break
    return points


SHARED = True
"""Whether :func:`cells` shares normal forms, piece values, slot suprema and the first pass's decided
cells (the default); False computes every cell afresh (the reference bench/bench_continuous.py and the
tests compare with)."""


def cells(table: Any, left: Any, right: Any, bound: Any = None, search: bool = True,
          earlier: Optional[list] = None) -> list[Cell]:
    """Every (ordered pair of distinct laws, output) cell.  ``search=False`` skips the branch and
    bound of pieces with several terms (their cells stay undecided, with sampled lower bounds).

    ``earlier``: this call's result with the same table, pairs and bound but ``search=False``; its
    decided cells are kept (the search only changes cells with an undecided slot), the others are
    computed again.  Normal forms, piece values and slot suprema are kept with the table (in
    ``table.memo`` when it has one), so the claims checked on one table share them."""
    backend = table.backend
    out, seen = [], set()
    memo = getattr(table, "memo", None) if SHARED else None
    if memo is None and SHARED:
        memo = {}
    if not SHARED:
        earlier = None
    position = 0
    for i, j in zip(left.tolist(), right.tolist()):
        for a, b in ((i, j), (j, i)):
            la, lb = table.law_of[a], table.law_of[b]
            if la == lb or (la, lb) in seen:
                continue
            seen.add((la, lb))
            law, law_prime = table.laws[la], table.laws[lb]
            for output, w in law.items():
                if earlier is not None:
                    before = earlier[position]
                    assert before.output == output and before.x == table.datasets[a]  # the same order
                    position += 1
                    if before.decided:
                        out.append(before)
                        continue
                out.append(_cell(table.datasets[a], table.datasets[b], output, w, law_prime.get(output), backend,
                                 bound, search, memo))
    return out
