"""``gdp(mu, times=T)``: the T-fold composition is mu-Gaussian DP (Dong, Roth and Su 2019).

mu-GDP holds iff for every eps >= 0 and both orders of every neighbouring pair (the pairs of
:mod:`..composition.profile` are ordered) delta_T(eps) <= G(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).

* Gaussian releases: T runs at scaled distance D are exactly a Gaussian at sqrt(T) D, whose tradeoff
  curve is G_(sqrt(T) D): the achieved mu is sqrt(T) D, exactly.  ``verified`` when it is at most the
  claim, upgraded to ``proved`` for every value of the parameters when sympy shows T D^2 / 2 <= mu^2 / 2
  from the program's centres and scales (the Gaussian zCDP proof of :mod:`..divergence.proof`);
  ``refuted`` when above, at eps = 0 (delta(0) = 2 Phi(D/2) - 1 grows with D), re-confirmed at twice
  the precision.
* Every other route of :mod:`..composition.routes`: delta_T is compared with G on an eps grid 0 = e_0 < ... < e_n.
  Both are non-increasing in eps, so delta_T(e_k) <= G(e_(k+1)) (certified) covers [e_k, e_(k+1)];
  beyond e_n nothing leaks when delta_T(e_n) is certified 0.  ``refuted`` when delta_T(e_k) > G(e_k) at a
  grid point, re-confirmed afresh; ``unknown`` when neither closes (the discretised routes' upper bounds
  never reach 0: they leak their tails).

The evidence (:class:`~dpverify.evidence.GdpEvidence`) carries the achieved mu: exact for Gaussian
releases; otherwise a certified lower bound, the least mu whose G_mu reaches delta_T's certified lower
end at the binding grid eps (G_mu(eps) grows with mu, so no smaller mu holds), found by bisection in
intervals; and the witness point of a refutation.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

import flint
import sympy

from ...dsl.claims import Claim, Gdp, Zcdp
from ...dsl.params import Point, point_label, substitute
from ...dsl.spec import Spec
from ...engine.program.backend import IntervalBackend, SympyBackend, exact_sign
from ...engine.datasets.datasets import require_pairs
from ...engine.decide.decimals import decimal
from ...engine.pld.budget import set_factor
from ...engine.continuous.gaussian_delta import gaussian_delta
from ...engine.loss.renyi import Unsupported, exact_number, parts
from ...errors import SpecError
from ...evidence import GdpEvidence
from ...results import PointResult, Status, Witness
from ..divergence.proof import Proof, generalise, prove_zcdp
from ..witness import number
from ..workspace import Workspace
from ..composition.mixture import route
from ..composition.profile import _pairs
from ..composition.routes import Gaussian, NotComposable

GRID_POINTS = (64, 512)
"""eps grid points (the first, and the refinement when the staircase does not close)."""
EDGES = (1, 2, 4, 8, 16, 32, 64)
"""Candidate last grid points e_n, tried in turn until delta_T(e_n) is certified 0."""
BISECTIONS = 40
"""Bisection steps of the achieved mu's lower bound (a counted budget: one G evaluation each)."""
BINDING = 3
"""Grid points (the largest delta_T(e) - G_mu(e)) where the achieved mu's lower bound is sought."""


class GdpCheck:
    kind = "gdp"

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, Gdp)

    def run(self, spec: Spec, claim: Gdp, point: Point, ws: Workspace) -> PointResult:
        mu = substitute(claim.mu, point, "gdp mu")
        if not mu.is_positive:
            raise SpecError(f"gdp: mu = {claim.mu} is {mu} at this point", "mu must be > 0 at every grid point")
        _, left, right = ws.datasets(spec)
        require_pairs(spec.universe, left)
        table = ws.table(spec, spec.mechanism, point)
        pairs = _pairs([table], left, right)
        result = PointResult(point_label(point), Status.UNKNOWN, "", method="Gaussian DP from the privacy profile")
        result.evidence = GdpEvidence(times=claim.times, claimed=decimal(mu), pairs=len(pairs))
        if not pairs:
            result.evidence.achieved, result.evidence.tightness = decimal(0), decimal(0)
            result.status = Status.VERIFIED
            result.message = "holds: every pair of neighbouring datasets has the same law"
            return result
        set_factor(ws.options.max_work)  # the composition budgets scale with --max-work
        try:
            found = route([(spec.mechanism, claim.times, table)], point, pairs)
            result.evidence.method = type(found).__name__.lower()
            if isinstance(found, Gaussian):
                return _gaussian(spec, claim, mu, point, ws, found, table, result)
            return _profile(claim, mu, found, table, result)
        except NotComposable as exc:
            result.status, result.message = Status.UNKNOWN, f"not decided: {exc}"
            return result


def _bound(ctx: Any, mu: Any, eps: Any) -> Any:
    """G(eps) for mu, certified: the delta of a Gaussian release at distance mu, Phi(-eps/mu + mu/2) -
    e^eps Phi(-eps/mu - mu/2), in arb balls (Phi by arb's erfc: no cancellation in the tails) at the context's
    precision plus 30 bits, returned as an interval of ``ctx`` rounded outwards.  G grows with mu and falls
    with eps: an interval mu or eps is handled by its ends (G(mu_lo, eps_hi) below, G(mu_hi, eps_lo) above).
    The grid, the refinement and the bisection of the achieved mu ask for hundreds of these: memoised per
    (precision, mu, eps) -- exact ends, deterministic."""
    key = (ctx.prec, mu._mpi_, eps._mpi_)
    if key not in BOUNDS:
        (mu_lo, mu_hi), (eps_lo, eps_hi) = (tuple(_raw_fraction(r) for r in x._mpi_) for x in (mu, eps))
        with flint.ctx.workprec(ctx.prec + 30):
            low, high = _g(mu_lo, eps_hi).lower(), _g(mu_hi, eps_lo).upper()
            if not (low.is_finite() and high.is_finite()):
                BOUNDS[key] = gaussian_delta(ctx, mu, eps)  # not reached for finite mu > 0 and eps >= 0
            else:
                BOUNDS[key] = ctx.mpf([_to_ctx(ctx, low).a, _to_ctx(ctx, high).b])
    return BOUNDS[key]


BOUNDS: dict = {}
"""G_mu(eps) per (precision, mu, eps): certified intervals (see :func:`_bound`)."""


def _raw_fraction(raw: tuple) -> Fraction:
    """The exact value of an mpmath raw mpf (sign, mantissa, exponent, bits)."""
    sign, man, exp, _ = raw
    return (-1) ** sign * Fraction(int(man)) * Fraction(2) ** int(exp)


def _arb(value: Fraction) -> flint.arb:
    return flint.arb(value.numerator) / value.denominator


def _g(mu: Fraction, eps: Fraction) -> flint.arb:
    """G_mu(eps) for exact mu > 0, eps (an arb ball; 0 where it is negative: G is a delta, >= 0)."""
    if mu <= 0:
        return flint.arb(0)
    m, e = _arb(mu), _arb(eps)
    root = flint.arb(2).sqrt()

    def cdf(x: flint.arb) -> flint.arb:
        return (-x / root).erfc() / 2
    value = cdf(-e / m + m / 2) - e.exp() * cdf(-e / m - m / 2)
    return value if value.lower() >= 0 else flint.arb(0).union(value.upper())


def _to_ctx(ctx: Any, x: flint.arb) -> Any:
    """The exact binary number x (an arb end) as an interval of ``ctx`` containing it."""
    man, exp = (int(v) for v in x.man_exp())
    value = ctx.mpf(man)
    return value * ctx.mpf(2) ** exp if exp >= 0 else value / ctx.mpf(2) ** -exp


def _gaussian(spec: Spec, claim: Gdp, mu: sympy.Expr, point: Point, ws: Workspace, found: Gaussian, table: Any,
              result: PointResult) -> PointResult:
    backend = table.backend
    mu_iv = backend.num(mu)
    result.method = "exact: T Gaussian runs at scaled distance D are G_(sqrt(T) D)"
    worst = max(range(len(found.pairs)), key=lambda k: float(found.distances[k].b))
    achieved = found.distances[worst]
    pair = found.pairs[worst]
    evidence = result.evidence
    evidence.achieved = number(achieved, probability=False) or decimal(achieved.b)
    evidence.tightness = _ratio(achieved, mu_iv)
    evidence.pair = [repr(pair[0]), repr(pair[1])]
    if achieved.a > mu_iv.b:
        fresh = IntervalBackend(2 * backend.dps)
        distance = found._distance(pair, fresh)
        zero = fresh.ctx.mpf(0)
        theirs, bound = gaussian_delta(fresh.ctx, distance, zero), _bound(fresh.ctx, fresh.num(mu), zero)
        if not (distance.a > fresh.num(mu).b and theirs.a > bound.b):
            result.message = f"mu = {decimal(achieved.a)} > {mu} at {backend.dps} digits was not confirmed afresh"
            return result
        result.status = Status.REFUTED
        evidence.witness_epsilon, evidence.witness_delta, evidence.witness_bound = decimal(zero), decimal(theirs.a), decimal(bound.b)
        result.witness = Witness(pair[0], pair[1], f"the {claim.times}-fold composition at eps = 0",
                                 decimal(theirs.a), decimal(bound.b), quantity="gdp")
        result.message = (f"X={pair[0]!r} and X'={pair[1]!r} are neighbours; the composition is exactly "
                          f"{decimal(distance.a)}-GDP (sqrt(T) D), more than mu = {mu}: delta(0) = {decimal(theirs.a)} > "
                          f"G_mu's {decimal(bound.b)}; confirmed at {fresh.dps} digits")
        return result
    if not achieved.b <= mu_iv.a and not all(_exact_at_most(found, p, mu, claim.times) for p in found.pairs):
        result.message = f"the achieved mu sqrt(T) D = {decimal(achieved.mid)} is not separated from the claimed {mu}"
        return result
    result.status = Status.VERIFIED
    result.message = (f"holds on all {len(found.pairs)} ordered pairs: the composition is exactly "
                      f"{decimal(achieved.b)}-GDP (sqrt(T) D, the worst pair) <= {mu}")
    if ws.options.proofs:
        proof = prove_zcdp(spec, spec.mechanism, Zcdp(rho=claim.mu ** 2 / (2 * claim.times), id=f"gdp:{claim.id}"),
                           point, ws)
        if proof is not None:
            proof = Proof(proof.status, f"mu-GDP of T Gaussian runs iff T D^2/2 <= mu^2/2, and {proof.message}")
        generalise(result, proof)
    return result


def _exact_at_most(found: Gaussian, pair: tuple, mu: sympy.Expr, times: int) -> bool:
    """T D^2 <= mu^2 shown by exact algebra on the pair's laws (a tie the intervals cannot separate)."""
    squared = sympy.Integer(0)
    for laws, runs in found.laws(pair, SympyBackend()):
        try:
            law, law_prime = (parts(law, found.backend) for law in laws)
        except Unsupported:
            return False
        for output, part in law.items():
            for g, h in zip(part.slots, law_prime[output].slots):
                t = (exact_number(g.centre) - exact_number(h.centre)) / exact_number(g.scale)
                squared += runs * t ** 2
    return exact_sign(sympy.simplify(mu ** 2 - squared)) in (0, 1)


def _profile(claim: Gdp, mu: sympy.Expr, found: Any, table: Any, result: PointResult) -> PointResult:
    """The staircase comparison of delta_T with G on an eps grid, refined once."""
    backend = table.backend
    ctx = backend.ctx
    mu_iv = backend.num(mu)
    result.method = f"{found.method}; compared with G_mu on an eps grid (both non-increasing)"
    edge = next((e for e in EDGES if all(found.enclosure(k, sympy.Integer(e)).b <= 0
                                         for k in range(len(found.pairs)))), None)
    top = EDGES[-1] if edge is None else edge
    evidence = result.evidence
    for points in GRID_POINTS:
        grid = [sympy.Rational(top * i, points) for i in range(points + 1)]
        bounds = [_bound(ctx, mu_iv, backend.num(e)) for e in grid]
        closes = edge is not None
        evidence.grid_points = points + 1
        all_values = []
        for k, pair in enumerate(found.pairs):
            values = [found.enclosure(k, e) for e in grid]
            all_values.append(values)
            for e, value, g in zip(grid, values, bounds):
                if value.a > g.b:
                    _achieved(evidence, ctx, backend, grid, all_values, bounds, found.pairs, mu_iv)
                    return _refute(claim, mu, found, k, pair, e, table, result)
            closes = closes and all(v.b <= g.a for v, g in zip(values[:-1], bounds[1:]))
        _achieved(evidence, ctx, backend, grid, all_values, bounds, found.pairs, mu_iv)
        if closes:
            result.status = Status.VERIFIED
            result.message = (f"holds on all {len(found.pairs)} ordered pairs: delta_{claim.times}(e_k) <= G_mu(e_(k+1)) "
                              f"on {points + 1} eps from 0 to {top}, and delta_{claim.times}({top}) = 0")
            return result
    result.message = ("no violation on the eps grid, but the staircase does not close: "
                      + ("delta_T(eps) is not certified 0 at any eps up to 64 (the discretised routes' upper bounds "
                         "leak their tails)" if edge is None else
                         f"delta_T(e_k) <= G_mu(e_(k+1)) fails between grid points of {GRID_POINTS[-1] + 1} eps"))
    return result


def _refute(claim: Gdp, mu: sympy.Expr, found: Any, index: int, pair: tuple, eps: sympy.Expr, table: Any,
            result: PointResult) -> PointResult:
    """delta_T(eps) > G_mu(eps), recomputed afresh at twice the precision (both sides)."""
    if hasattr(found, "confirm_lower"):
        lower, digits = found.confirm_lower(index, eps)
        value = lower.a
    else:
        sums, _, digits = found.confirm(index, eps)
        value = sums[2].a
    fresh = IntervalBackend(digits)
    bound = _bound(fresh.ctx, fresh.num(mu), fresh.num(eps))
    if not value > bound.b:
        result.message = f"delta_{claim.times}({eps}) above G_mu({eps}) was not confirmed at {digits} digits"
        return result
    result.status = Status.REFUTED
    evidence = result.evidence
    evidence.witness_epsilon, evidence.witness_delta, evidence.witness_bound = decimal(eps), decimal(value), decimal(bound.b)
    evidence.pair = [repr(pair[0]), repr(pair[1])]
    result.witness = Witness(pair[0], pair[1], f"the {claim.times}-fold composition at eps = {eps}",
                             decimal(value), decimal(bound.b), quantity="gdp")
    result.message = (f"X={pair[0]!r} and X'={pair[1]!r} are neighbours; delta_{claim.times}({eps}) >= {decimal(value)} > "
                      f"G_mu({eps}) = {decimal(bound.b)} (mu = {mu}); confirmed at {digits} digits")
    return result


def _ratio(achieved: Any, mu: Any) -> str:
    """achieved / claimed mu as a figure (6 digits)."""
    return f"{float(achieved.mid) / float(mu.mid):.6g}"


def _achieved(evidence: GdpEvidence, ctx: Any, backend: Any, grid: list, values: list, bounds: list,
              pairs: list, mu: Any) -> None:
    """A certified lower bound of the achieved mu: at the BINDING grid points where delta_T's lower end
    most exceeds G_mu (for the claimed mu), the largest mu_lo with G_(mu_lo)(e) certified below
    delta_T(e)'s lower end, by bisection (no mu <= mu_lo is GDP for the composition); the pair attaining it."""
    ranked = sorted(((float(v.a) - float(g.b), k, i) for k, row in enumerate(values)
                     for i, (v, g) in enumerate(zip(row, bounds)) if v.a > 0), reverse=True)[:BINDING]
    best, where = ctx.mpf(0), None
    for _, k, i in ranked:
        target, eps = values[k][i].a, backend.num(grid[i])
        low, high = ctx.mpf(0), ctx.mpf(1)
        while _bound(ctx, high, eps).b < target and high.a < 1e6:
            low, high = high, high * 2
        for _ in range(BISECTIONS):
            middle = (low + high) / 2
            if _bound(ctx, middle, eps).b < target:
                low = middle
            else:
                high = middle
        if low.a > best.a:
            best, where = low, k
    if where is None:
        return
    evidence.achieved, evidence.lower_bound = decimal(best.a), True
    evidence.pair = [repr(pairs[where][0]), repr(pairs[where][1])]
    evidence.tightness = _ratio(ctx.mpf(best.a), mu)
