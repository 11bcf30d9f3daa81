"""Privacy of mechanisms that release noisy values: the loss from densities, exactly.

A law here maps an output skeleton (the discrete part, with markers v0, v1...
for released values) to a :class:`~dpverify.engine.noise.Density`.  For
neighbours X, X' and a skeleton o the privacy loss is

    ln(c/c') + sum_k sup_v ln(g_k(v)/h_k(v)),

as released values from different noise components are independent, so the
supremum of the product is the product of the suprema.  Each factor's
supremum comes from :mod:`dpverify.engine.density_ratio` (exact on pieces
where both densities are single exponentials, as for released Laplace noise:
there the loss is the derived |q - q'|/b); Gaussian factors have an unbounded
loss unless their centres agree, and their (eps, delta) curve is the analytic
one, delta(eps) = Phi(D/2 - eps/D) - e^eps Phi(-D/2 - eps/D) with D the
scaled distance of the centres (Balle and Wang, ICML 2018), evaluated in
certified intervals.

``verified`` needs every piece decided; a violation is ``refuted`` only after
the witness value is re-evaluated on laws recomputed at twice the precision.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import sympy

from ..engine import piecewise as pw
from ..engine.backend import IntervalBackend, SympyBackend, exact_sign
from ..engine.density_ratio import Candidate, beyond, bound_sup, ratio_at, ratio_sup
from ..engine.noise import Density, Factor, Released
from ..engine.reading import distribution
from ..dsl.params import Point
from .result import PointResult, Status, Witness
from .workspace import decimal, params


def has_densities(table: Any) -> bool:
    return any(isinstance(w, Density) for law in table.laws for w in law.values())


# -- one weight, normalised into a constant and one factor per released value --------------

@dataclass
class Normal:
    constant: Any
    slots: list  # per released value: a Piecewise, or ("gaussian", centre, sigma)
    reason: str = ""
    mixes: tuple = ()  # per released value: the linear map of released sums it belongs to (or None)


def _normal(weight: Any, backend: Any) -> Normal:
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


def _slot_value(slot: Any, candidate: Candidate, backend: Any) -> Any:
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


def _slot_sup(g: Any, h: Any, backend: Any, target: Any = None, search: bool = True) -> SlotSup:
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
    best, where = None, None
    for candidate in sup.candidates:
        if candidate.growth:
            return SlotSup(math.inf, math.inf, candidate, sup.decided)
        a, b = ratio_at(g, h, candidate, backend)
        if backend.sign(b) != 1 or backend.sign(a) != 1:
            continue  # a sample at a zero of the density (a cut): no information
        value = a / b
        if best is None or value.b > best.b:
            best, where = value, candidate
    if best is None:
        zero = backend.num(0)
        if sup.decided:
            return SlotSup(zero, zero, None, True)
        best = zero
    if sup.decided:
        return SlotSup(best, best, where, True)
    if not search:
        return SlotSup(None, best, where, False, "a density with several exponential terms on a piece")
    bound = bound_sup(g, h, best, where, backend, target)
    if bound is None:
        return SlotSup(None, best, where, False, "a density that may vanish inside a piece")
    enclosure = backend.ctx.mpf([bound.lower.a, bound.upper])
    below = target is not None and bound.upper != math.inf and bound.upper <= target
    return SlotSup(enclosure if not bound.at_candidate else bound.lower, bound.lower, bound.where,
                   bound.at_candidate, below=below)


def _cell(x: tuple, x_prime: tuple, output: Any, w: Any, w_prime: Any, backend: Any, bound: Any = None,
          search: bool = True) -> Cell:
    """The loss of one (pair, output); ``bound`` = e^eps of the claim, to stop refining below it."""
    if w_prime is None:
        return Cell(x, x_prime, output, math.inf, math.inf, _support_points(w, backend), True)
    a, b = _normal(w, backend), _normal(w_prime, backend)
    if a.constant is None or b.constant is None:
        return Cell(x, x_prime, output, None, None, None, False, a.reason or b.reason)
    if a.mixes != b.mixes:
        return Cell(x, x_prime, output, None, None, None, False,
                    "the released sums are different linear maps of the noise on the two datasets")
    ratio = a.constant / b.constant
    ctx = backend.ctx
    total, lower, points, exact, below = ratio, ratio, [], True, False
    target = None
    if bound is not None and len(a.slots) == 1 and backend.sign(ratio) == 1:
        target = (bound / ratio).a
    for g, h in zip(a.slots, b.slots):
        slot = _slot_sup(g, h, backend, target, search)
        below = slot.below
        points.append(slot.where)
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
                below=below and target is not None)


def _support_points(weight: Any, backend: Any) -> Optional[list]:
    normal = _normal(weight, backend)
    points = []
    for slot in normal.slots:
        if isinstance(slot, tuple):
            points.append(Candidate(Fraction(0), Fraction(0)))
            continue
        for index, piece in enumerate(slot.pieces):
            if any(not backend.is_zero(c) for c in piece.values()):
                lo = slot.cuts[index - 1] if index else None
                hi = slot.cuts[index] if index < len(slot.cuts) else None
                inside = (lo + hi) / 2 if lo is not None and hi is not None else (
                    (hi - 1) if lo is None and hi is not None else (lo + 1 if lo is not None else Fraction(0)))
                points.append(Candidate(inside, inside))
                break
    return points


def cells(table: Any, left: Any, right: Any, bound: Any = None, search: bool = True) -> list[Cell]:
    """Every (ordered pair of distinct laws, output) cell.  ``search=False`` skips the branch and
    bound of pieces with several terms (their cells stay undecided, with sampled lower bounds)."""
    backend = table.backend
    out, seen = [], set()
    for i, j in zip(left.tolist(), right.tolist()):
        for a, b in ((i, j), (j, i)):
            la, lb = table.law_of[a], table.law_of[b]
            if la == lb or (la, lb) in seen:
                continue
            seen.add((la, lb))
            law, law_prime = table.laws[la], table.laws[lb]
            for output, w in law.items():
                out.append(_cell(table.datasets[a], table.datasets[b], output, w, law_prime.get(output), backend,
                                 bound, search))
    return out


# -- the check -------------------------------------------------------------------------------

def check_density(program: Any, point: Point, eps: sympy.Expr, delta: sympy.Expr, table: Any, left: Any,
                  right: Any, result: PointResult, scope: str) -> PointResult:
    backend = table.backend
    eps_iv = backend.num(eps)
    result.method = "exact densities of released values, certified intervals"
    if delta != 0 and _all_gaussian(table):
        return _gaussian_delta(program, point, eps, delta, table, left, right, result, scope)
    # First the cheap pass (exact pieces, sampled others): enough to refute; then, only if nothing
    # is refuted, the branch and bound that can verify pieces with several terms.
    all_cells = cells(table, left, right, backend.exp(eps), search=False)
    refuted = _first_refutation(program, point, eps, all_cells, table, result)
    if refuted is not None:
        return _with_achieved(refuted, all_cells)
    if any(not c.decided for c in all_cells):
        all_cells = cells(table, left, right, backend.exp(eps))
    decided = [c for c in all_cells if c.decided]
    undecided = [c for c in all_cells if not c.decided]
    worst = max(decided, key=_order, default=None)
    lower = max((c for c in all_cells if c.lower is not None), key=lambda c: _order(c, "lower"), default=None)
    exact = not undecided and all(c.exact for c in decided)
    enclosure = ""
    if not all_cells:  # every dataset has the same law
        result.achieved_epsilon = decimal(backend.num(0))
    if worst is not None and (exact or worst.loss == math.inf):
        result.achieved_epsilon = decimal(worst.loss)
    elif lower is not None:
        result.achieved_epsilon, result.achieved_is_lower_bound = decimal(lower.lower), True
        if not undecided and worst is not None:
            enclosure = f" (the supremum is enclosed in [{decimal(lower.lower)}, {decimal(worst.loss.b)}])"
    result.figures = {"datasets": len(table.datasets), "distinct_laws": len(table.laws), "cells": len(all_cells)}
    refuted = _first_refutation(program, point, eps, all_cells, table, result)
    if refuted is not None:
        return refuted
    straddling = [c for c in decided if c.loss != math.inf and not c.loss.b <= eps_iv.a and not c.below]
    inexact = [c for c in straddling if not c.exact]
    if inexact:
        cell = inexact[0]
        result.message = (f"cannot decide: the supremum of the density ratio for X={cell.x!r}, X'={cell.x_prime!r}, "
                          f"o={cell.output!r} is enclosed in a loss interval [{decimal(cell.loss.a)}, "
                          f"{decimal(cell.loss.b)}] that contains eps")
        return result
    exact_laws: dict = {}
    for cell in straddling:
        sign = _exact_excess(program, point, eps, cell, table, exact_laws)
        if sign is None:
            result.message = (f"cannot decide the density ratio for X={cell.x!r}, X'={cell.x_prime!r}, "
                              f"o={cell.output!r}: intervals overlap and sympy could not decide")
            return result
        if sign > 0:
            return _refute(program, point, eps, cell, table, result, exact=True)
    if undecided:
        result.message = (f"no violation found, but {len(undecided)} cells are undecided: {undecided[0].reason} "
                          f"(e.g. X={undecided[0].x!r}, X'={undecided[0].x_prime!r}, o={undecided[0].output!r})")
        return result
    result.status = Status.VERIFIED
    if straddling:  # verified, and some cell reaches e^eps exactly: the achieved epsilon is eps
        result.achieved_epsilon, result.achieved_is_lower_bound, enclosure = decimal(eps), False, ""
    result.message = (f"holds on all {scope}; achieved epsilon {'at least ' if enclosure else ''}"
                      f"{result.achieved_epsilon}{enclosure}"
                      + (f" (tight: {len(straddling)} cells reach e^eps exactly, decided by sympy)"
                         if straddling else ""))
    return result


def _first_refutation(program: Any, point: Point, eps: sympy.Expr, all_cells: list, table: Any,
                      result: PointResult) -> Optional[PointResult]:
    """The first cell whose certified lower bound exceeds eps and whose witness is confirmed."""
    eps_iv = table.backend.num(eps)
    for cell in sorted(all_cells, key=lambda c: _order(c, "lower"), reverse=True):
        bound = cell.lower
        if bound is None or (bound != math.inf and not bound.a > eps_iv.b):
            return None
        refuted = _refute(program, point, eps, cell, table, result)
        if refuted.status == Status.REFUTED:
            return refuted
    return None


def _with_achieved(result: PointResult, all_cells: list) -> PointResult:
    """Report the largest certified lower bound as the achieved epsilon of a refuted claim."""
    lower = max((c for c in all_cells if c.lower is not None), key=lambda c: _order(c, "lower"), default=None)
    if lower is not None:
        exact = lower.decided and (lower.lower == math.inf or lower.exact)
        result.achieved_epsilon = decimal(lower.lower)
        result.achieved_is_lower_bound = not exact or any(not c.decided for c in all_cells)
        if lower.lower == math.inf:
            result.achieved_is_lower_bound = False
    result.figures = {"cells": len(all_cells)}
    return result


def _order(cell: Cell, field: str = "loss") -> float:
    value = getattr(cell, field)
    if value is None:
        return -math.inf
    return math.inf if value == math.inf else float(value.b)


def _evaluate(law: dict, output: Any, points: list, backend: Any) -> Any:
    weight = law.get(output)
    if weight is None:
        return backend.num(0)
    normal = _normal(weight, backend)
    value = normal.constant
    for slot, candidate in zip(normal.slots, points):
        value = value * _slot_value(slot, candidate, backend)
    return value


def _exact_excess(program: Any, point: Point, eps: sympy.Expr, cell: Cell, table: Any,
                  cache: dict) -> Optional[int]:
    """Sign of sup density(X) - e^eps density(X') at the cell's attaining points, in exact sympy."""
    exact = SympyBackend()
    for data in (cell.x, cell.x_prime):
        if data not in cache:
            cache[data] = distribution(program, data, params(point), exact, table.windows)
    law, law_prime = cache[cell.x], cache[cell.x_prime]
    p = _evaluate(law, cell.output, cell.points, exact)
    q = _evaluate(law_prime, cell.output, cell.points, exact)
    return exact_sign(sympy.simplify(p - sympy.exp(eps) * q))


def _witness_points(cell: Cell, law: dict, law_prime: dict, bound: Any, backend: Any) -> Optional[list]:
    """Interior points where density(X) > bound * density(X') (a cut is a limit, not a witness)."""
    a = _normal(law[cell.output], backend)
    b = _normal(law_prime[cell.output], backend) if cell.output in law_prime else None
    points = []
    for k, candidate in enumerate(cell.points or []):
        g = a.slots[k]
        h = b.slots[k] if b is not None else None
        if candidate is None:
            return None
        if candidate.growth:
            if isinstance(g, tuple):
                points.append(_gaussian_beyond(g, h, bound, backend))
            else:
                points.append(Candidate(beyond(g, h, candidate, bound, backend), candidate.inside))
            continue
        t = candidate.t
        if t != candidate.inside:  # move strictly inside the piece, towards the cut
            t = candidate.inside + (t - candidate.inside) * Fraction(255, 256)
        points.append(Candidate(t, t))
    return points


def a_mixes(law: dict, cell: Cell) -> tuple:
    weight = law.get(cell.output)
    return tuple(f.mix for f in weight.terms[0][1]) if isinstance(weight, Density) and weight.terms else ()


def _determinant(matrix: tuple) -> Fraction:
    """The exact determinant of a square rational matrix (Gaussian elimination)."""
    rows = [list(row) for row in matrix]
    n, det = len(rows), Fraction(1)
    for col in range(n):
        pivot = next((r for r in range(col, n) if rows[r][col] != 0), None)
        if pivot is None:
            return Fraction(0)
        if pivot != col:
            rows[col], rows[pivot], det = rows[pivot], rows[col], -det
        det *= rows[col][col]
        for r in range(col + 1, n):
            factor = rows[r][col] / rows[col][col]
            rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col])]
    return det


def _released_values(mixes: tuple, points: list) -> list:
    """The released values at the witness: w itself, or y = A w for released sums (see noise._linear)."""
    values = [c.t for c in points]
    for mix in set(m for m in mixes if m is not None):
        group, matrix = mix
        w = [points[k].t for k in group]
        for i, k in enumerate(group):
            values[k] = sum((a * b for a, b in zip(matrix[i], w)), Fraction(0))
    return values


def _gaussian_beyond(g: tuple, h: tuple, bound: Any, backend: Any) -> Candidate:
    mu, nu, sigma = g[1], h[1], g[2]
    s = float(sympy.N(sigma, 30))
    # ln ratio = (mu - nu)(2v - mu - nu)/(2 sigma^2) > ln bound
    target = float(backend.log(bound).b) + 1
    v = (float(mu) + float(nu)) / 2 + target * s * s / (float(mu) - float(nu))
    v = Fraction(math.ceil(v) + 1) if mu > nu else Fraction(math.floor(v) - 1)
    return Candidate(v, v)


def _refute(program: Any, point: Point, eps: sympy.Expr, cell: Cell, table: Any, result: PointResult,
            exact: bool = False) -> PointResult:
    dps = 2 * table.backend.dps
    fresh = IntervalBackend(dps)
    law = distribution(program, cell.x, params(point), fresh, table.windows)
    law_prime = distribution(program, cell.x_prime, params(point), fresh, table.windows)
    e_eps = fresh.exp(eps)
    points = _witness_points(cell, law, law_prime, e_eps, fresh) if cell.output in law else None
    if points is None:
        result.message = f"a violation found at {table.backend.dps} digits has no witness point to confirm"
        return result
    p = _evaluate(law, cell.output, points, fresh)
    q = _evaluate(law_prime, cell.output, points, fresh)
    for mix in set(m for m in a_mixes(law, cell) if m is not None):  # densities of y = A w: divide by |det A|
        determinant = fresh.num(abs(_determinant(mix[1])))
        p, q = p / determinant, q / determinant
    if not ((p - e_eps * q).a > 0 or (exact and fresh.sign(p - e_eps * q) != -1)):
        result.message = f"a violation found at {table.backend.dps} digits was not confirmed at {dps} digits"
        return result
    values = ", ".join(f"v{k}={value}" for k, value in enumerate(_released_values(a_mixes(law, cell), points)))
    ratio = "inf" if fresh.is_zero(q) else decimal(p / q)
    density = "density" if points else "probability"
    result.status = Status.REFUTED
    result.witness = Witness(cell.x, cell.x_prime, f"{cell.output!r} at {values}" if points else cell.output,
                             decimal(p), decimal(q), ratio)
    result.message = (f"X={cell.x!r} and X'={cell.x_prime!r} are neighbours; the {density} of "
                      f"o={cell.output!r}{' at ' + values if points else ''} is {decimal(p)} under X and "
                      f"{decimal(q)} under X', ratio {ratio} > e^eps = {decimal(e_eps)}; confirmed at {dps} digits")
    return result


# -- Gaussian releases: the analytic delta(eps) ----------------------------------------------

def _all_gaussian(table: Any) -> bool:
    for law in table.laws:
        for weight in law.values():
            normal = _normal(weight, table.backend)
            if normal.constant is None or not normal.slots:
                return False
            if not all(isinstance(s, tuple) and s[0] == "gaussian" for s in normal.slots):
                return False
    return all(len(law) == 1 for law in table.laws)


def phi(ctx: Any, x: Any) -> Any:
    """The standard normal cdf in interval arithmetic: 1/2 + erf(x/sqrt 2)/2 by its Taylor series.

    Phi is increasing, so an interval argument is handled by its two ends (evaluating the
    series on the interval itself would multiply its width by the series' large terms).
    """
    x = ctx.mpf(x)
    if x.a == x.b:
        return _phi_point(ctx, x)
    return ctx.mpf([_phi_point(ctx, ctx.mpf(x.a)).a, _phi_point(ctx, ctx.mpf(x.b)).b])


def _phi_point(ctx: Any, x: Any) -> Any:
    """Phi at a point: the series of erf alternates with terms that decrease once n > x^2, so
    the first omitted term bounds the error; it is added to the enclosure.  The working
    precision grows with x^2, as the terms grow to about e^(x^2/2) before they cancel.
    """
    saved = ctx.prec
    ctx.dps = ctx.dps + int(float(abs(x).b) ** 2) + 20
    try:
        z = x / ctx.sqrt(2)
        z2 = z * z
        term = z
        total = ctx.mpf(0)
        n = 0
        while True:
            total += term / (2 * n + 1)
            n += 1
            term = -term * z2 / n
            if n > float(z2.b) + 2 and abs(term / (2 * n + 1)).b < ctx.mpf(10) ** (-(ctx.dps + 5)):
                break
        error = abs(term / (2 * n + 1)).b
        erf = 2 * (total + ctx.mpf([-error, error])) / ctx.sqrt(ctx.pi)
        value = (1 + erf) / 2
    finally:
        ctx.prec = saved
    return +value


def gaussian_delta(ctx: Any, distance: Any, eps: Any) -> Any:
    """delta(eps) of a Gaussian release whose centres are ``distance`` standard deviations apart."""
    if distance.b == 0:
        return ctx.mpf(0)
    return phi(ctx, distance / 2 - eps / distance) - ctx.exp(eps) * phi(ctx, -distance / 2 - eps / distance)


def _smallest_epsilon(ctx: Any, distance: Any, delta_iv: Any) -> Any:
    """The smallest eps' with delta(eps') <= delta (delta(eps) decreases in eps), by bisection."""
    lo, hi = ctx.mpf(0), ctx.mpf(1)
    while gaussian_delta(ctx, distance, hi).a > delta_iv.b and hi.a < 1e4:
        lo, hi = hi, hi * 2
    for _ in range(60):
        mid = (lo + hi) / 2
        if gaussian_delta(ctx, distance, ctx.mpf(mid.mid)).b <= delta_iv.a:
            hi = ctx.mpf(mid.mid)
        else:
            lo = ctx.mpf(mid.mid)
    return hi


def _gaussian_delta(program: Any, point: Point, eps: sympy.Expr, delta: sympy.Expr, table: Any, left: Any,
                    right: Any, result: PointResult, scope: str) -> PointResult:
    backend = table.backend
    ctx = backend.ctx
    eps_iv, delta_iv = backend.num(eps), backend.num(delta)
    result.method = "analytic Gaussian delta(eps) (Balle and Wang 2018), certified intervals"
    worst, pair = None, None
    for i, j in zip(left.tolist(), right.tolist()):
        (_, wa), = table.laws[table.law_of[i]].items()
        (_, wb), = table.laws[table.law_of[j]].items()
        ga, gb = _normal(wa, backend).slots, _normal(wb, backend).slots
        if len(ga) != len(gb) or any(a[2] != b[2] for a, b in zip(ga, gb)):
            result.message = "the two laws release Gaussian values with different scales; not supported"
            return result
        squared = ctx.mpf(0)
        for a, b in zip(ga, gb):
            d = (backend.num(a[1]) - backend.num(b[1])) / backend.num(a[2])
            squared += d * d
        distance = ctx.sqrt(squared)
        if worst is None or distance.b > worst.b:
            worst, pair = distance, (table.datasets[i], table.datasets[j])
    value = gaussian_delta(ctx, worst, eps_iv) if worst is not None else ctx.mpf(0)
    result.achieved_delta = decimal(value)
    if worst is not None:
        result.achieved_epsilon = decimal(_smallest_epsilon(ctx, worst, delta_iv))
    if value.b <= delta_iv.a:
        result.status = Status.VERIFIED
        result.message = (f"holds on all {scope}: the largest scaled distance of centres is {decimal(worst)} "
                          f"(X={pair[0]!r}, X'={pair[1]!r}), delta(eps) = {result.achieved_delta}")
        return result
    fresh = IntervalBackend(2 * backend.dps)
    laws = [distribution(program, data, params(point), fresh, table.windows) for data in pair]
    slots = [_normal(next(iter(law.values())), fresh).slots for law in laws]
    squared = fresh.ctx.mpf(0)
    for a, b in zip(*slots):
        d = (fresh.num(a[1]) - fresh.num(b[1])) / fresh.num(a[2])
        squared += d * d
    confirm = gaussian_delta(fresh.ctx, fresh.ctx.sqrt(squared), fresh.num(eps))
    if value.a > delta_iv.b and confirm.a > fresh.num(delta).b:
        result.status = Status.REFUTED
        result.witness = Witness(pair[0], pair[1], "the event where the privacy loss exceeds eps",
                                 result.achieved_delta, decimal(delta))
        result.message = (f"X={pair[0]!r} and X'={pair[1]!r}: the Gaussian release's delta(eps) = "
                          f"{result.achieved_delta} > delta = {decimal(delta)}; confirmed at {2 * backend.dps} digits")
        return result
    result.message = f"delta(eps) = {result.achieved_delta} is too close to the claimed delta to decide"
    return result
