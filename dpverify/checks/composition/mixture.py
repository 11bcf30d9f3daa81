"""The Poisson-subsampled Gaussian (one DP-SGD step) composed T times: a route of :mod:`.routes`.

A program that keeps each record with probability q and releases a Gaussian value of the kept
records (``[r for r in data if dp.bernoulli(q)]`` then ``dp.gaussian(f(kept), sigma)``) has, on an
add/remove pair, one law N(c0, sigma^2) and the other the mixture (1 - q) N(c0, sigma^2) + q N(c1, sigma^2).
Both ordered pairs are bounded by discretised loss distributions (certified lower and upper bounds of
delta_T(eps)): each cell of outputs merged into one output for the lower bound, split between grid
points keeping its Q-mass for the upper one (:mod:`dpverify.engine.pld_gaussian_tight`, second order
in the cells' width), composed by :mod:`dpverify.engine.pld_gaussian_mixture`, on a grid refined once
when a claim falls between them.
"""
from __future__ import annotations

from typing import Any, Optional

import sympy

from ...dsl.params import Point
from ...engine.backend import IntervalBackend, SympyBackend
from ...engine.noisy import FULL, Density
from ...engine.pld_bounds import Discretised, TooLong
from ...engine.pld_gaussian_mixture import compose, subsampled_bounds
from ...engine.pld_gaussian_tight import one_step_tight
from ...engine.renyi import exact_number
from .routes import NotComposable, Route, route as exact_route

GRIDS = ((500, 0.05, 6.0), (2000, 0.03, 6.5))
"""(grid points per unit of loss, the least output step of a cell and the tails' edge, in standard
deviations): the first, and the refinement (counted budgets: a few hundred certified Phi evaluations
per step; the tails, P-mass about 1e-9 and 1e-12 per step, leak fully in the upper bound)."""
STEPS: dict = {}
"""One step's rounded polynomials per (rate, distance, grid, digits): exact integers, deterministic."""
DIGITS = 20
"""The precision of the discretisation (the masses are certified intervals at this precision, rounded
outwards to 2^-160); a violation is confirmed at twice it."""


def _centres(weight: Any) -> Optional[tuple[dict, Any]]:
    """{centre: total weight} and the scale of a density whose every path releases one plain Gaussian
    value (no restriction, no other factor), else None."""
    if not isinstance(weight, Density):
        return None
    out: dict = {}
    scales = set()
    for constant, factors in weight.terms:
        if len(factors) != 1:
            return None
        (f,) = factors
        if (f.noise is None or f.noise.kind != "gaussian" or f.interval != FULL or f.function is not None
                or f.joint or f.mix is not None):
            return None
        centre = f.noise.centre + f.offset
        out[centre] = out.get(centre, 0) + constant
        scales.add(f.noise.scale)
    return (out, scales.pop()) if len(scales) == 1 else None


def _mixture(law: dict, law_prime: dict) -> Optional[tuple[sympy.Expr, sympy.Expr]]:
    """(q, D): the rate and the centres' distance in standard deviations when one law is N(c0, s^2) and the
    other (1 - q) N(c0, s^2) + q N(c1, s^2), in either order; None otherwise."""
    if len(law) != 1 or list(law) != list(law_prime):
        return None
    found = [_centres(w) for w in (*law.values(), *law_prime.values())]
    if None in found or found[0][1] != found[1][1]:
        return None
    (a, scale), (b, _) = found
    single, mixed = (a, b) if len(a) == 1 else (b, a)
    if len(single) != 1 or len(mixed) != 2:
        return None
    (c0,) = single
    if c0 not in mixed:
        return None
    (c1,) = [c for c in mixed if c != c0]
    return sympy.nsimplify(mixed[c1]), sympy.Abs(exact_number(c1) - exact_number(c0)) / exact_number(scale)


def route(components: list, point: Point, pairs: list[tuple]) -> Route:
    """:class:`SubsampledGaussian` when the laws are Gaussian mixtures of that form, else
    :func:`.routes.route`."""
    weights = [w for _, _, table in components for law in table.laws for w in law.values()]
    if any(isinstance(w, Density) and len(w.terms) > 1 for w in weights):
        return SubsampledGaussian(components, point, pairs)
    return exact_route(components, point, pairs)


class SubsampledGaussian(Route):
    """The Poisson-subsampled Gaussian: certified bounds from its loss distribution rounded down and up."""

    method = ("discretised privacy loss distribution of the Poisson-subsampled Gaussian: cells merged (lower bound) "
              "and split between grid points (upper bound), the certified Phi at the cells' ends")

    def __init__(self, components: list, point: Point, pairs: list[tuple]) -> None:
        super().__init__(components, point, pairs)
        if len(components) != 1:
            raise NotComposable("the subsampled Gaussian is composed with itself only (no also=)")
        self.times = components[0][1]
        self.shapes = [self._shape(pair) for pair in pairs]
        self.grid, self.dx, self.tail = GRIDS[0]
        self.work = IntervalBackend(DIGITS)
        self.found = [self._discretise(s, self.work, GRIDS[0]) for s in self.shapes]

    def _shape(self, pair: tuple) -> tuple[sympy.Expr, sympy.Expr]:
        (laws, _), = self.laws(pair, SympyBackend())
        found = _mixture(*laws)
        if found is None:
            raise NotComposable(f"X={pair[0]!r} and X'={pair[1]!r}: only a Gaussian release against its Poisson "
                                "subsampling (one law N(c0, s^2), the other (1 - q) N(c0, s^2) + q N(c1, s^2)) is "
                                "composed among mixtures of densities")
        rate, distance = found
        if not (rate.is_Rational and 0 < rate < 1):
            raise NotComposable(f"the subsampling rate {rate} is not a rational number in (0, 1)")
        return found

    def _discretise(self, shape: tuple, backend: Any, grid: tuple) -> Optional[list[Discretised]]:
        """Both directions composed ``times`` times; one step's polynomials are kept per (shape, grid,
        precision) in STEPS, for the other claims and compositions of a file."""
        rate, distance = shape
        if distance == 0:
            return None
        ctx = backend.ctx
        key = (rate, distance, grid, backend.dps)
        try:
            if key not in STEPS:
                STEPS[key] = one_step_tight(ctx, backend.num(rate), backend.num(distance), ctx.mpf(1) / grid[0], *grid[1:])
            return compose(STEPS[key], self.times, ctx.mpf(1) / grid[0])
        except TooLong as exc:
            raise NotComposable(str(exc)) from None

    def refine(self) -> bool:
        """Move to the finer grid (False when already there, or when it is beyond the budget)."""
        if self.grid == GRIDS[-1][0]:
            return False
        try:
            self.found = [self._discretise(s, self.work, GRIDS[-1]) for s in self.shapes]
        except NotComposable:
            return False
        self.grid, self.dx, self.tail = GRIDS[-1]
        return True

    def _bounds(self, found: Optional[list], eps: sympy.Expr, backend: Any) -> Any:
        """[lower, upper] of delta_T(eps) in the table's context."""
        if found is None:
            return self.backend.ctx.mpf(0)
        bounds = subsampled_bounds(backend.ctx, found, backend.num(eps))
        return self.backend.ctx.mpf([bounds.lower.a, bounds.upper.b])

    def enclosure(self, index: int, eps: sympy.Expr) -> Any:
        return self._bounds(self.found[index], eps, self.work)

    def confirm_lower(self, index: int, eps: sympy.Expr) -> tuple[Any, int]:
        """The certified lower bound of delta_T(eps) from both laws read afresh, at twice the precision,
        on the current grid."""
        fresh = IntervalBackend(2 * DIGITS)
        found = self._discretise(self._shape(self.pairs[index]), fresh, (self.grid, self.dx, self.tail))
        return self._bounds(found, eps, fresh), fresh.dps

    def extras(self) -> dict:
        return {"grid": self.grid}
