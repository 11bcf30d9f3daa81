"""The Poisson-subsampled Gaussian (one DP-SGD step) composed T times: a route of :mod:`.routes`.

A program that keeps each record with probability q and releases a Gaussian value of the kept
records (``[r for r in data if dp.bernoulli(q)]`` then ``dp.gaussian(f(kept), sigma)``) has, on an
add/remove pair, one law N(c0, sigma^2) and the other the mixture (1 - q) N(c0, sigma^2) + q N(c1, sigma^2).
Each ordered pair's delta_T(eps) is first certified to CERTIFIED_DIGITS (8) significant digits or more by
:mod:`dpverify.engine.pld.gaussian_mellin`: the closed form in Phi for T = 1, the Mellin inversion of
the composed moments M(s)^T (arb balls, every error bounded) for T >= 2.  Where that is beyond its
counted budget (small T > 1: the integrand decays too slowly along the line), the pair is bounded by
discretised loss distributions (certified lower and upper bounds): each cell of outputs merged into
one output for the lower bound, split between grid points keeping its Q-mass for the upper one
(:mod:`dpverify.engine.pld.gaussian_tight`, second order in the cells' width), composed by
:mod:`dpverify.engine.pld.gaussian_mixture`, on a grid refined once when a claim falls between them.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional

import sympy

from ...dsl.params import Point
from ...engine.program.backend import IntervalBackend, SympyBackend
from ...engine.continuous.noisy import FULL, Density
from ...engine.pld.bounds import Discretised, TooLong, delta_bounds
from ...engine.pld.gaussian_mellin import Budget, Certified, Unreached, certified_delta, chernoff
from ...engine.pld.gaussian_mixture import compose
from ...engine.pld.gaussian_tight import one_step_tight
from .laplace_mixture import SubsampledLaplace, is_laplace_mixture
from .routes import NotComposable, Route, route as exact_route, two_point_mixture

GRIDS = ((500, 0.05, 6.0), (2000, 0.03, 6.5))
"""(grid points per unit of loss, the least output step of a cell and the tails' edge, in standard
deviations): the first, and the refinement (counted budgets: a few hundred certified Phi evaluations
per step; the tails, P-mass about 1e-9 and 1e-12 per step, leak fully in the upper bound)."""
STEPS: dict = {}
"""One step's rounded polynomials per (rate, distance, grid, digits): exact integers, deterministic."""
DIGITS = 20
"""The precision of the discretisation (the masses are certified intervals at this precision, rounded
outwards to 2^-160); a violation is confirmed at twice it."""
CERTIFIED_DIGITS = 8
"""Significant digits the certified route aims at first; twice as many when a claim falls inside its ball
(:meth:`SubsampledGaussian.refine`); a violation is confirmed afresh at twice the digits in use."""
CURVE_DIGITS = CERTIFIED_DIGITS
"""Digits of the achieved curve's points (the plot), on the plan of the claim's first eps: the same digits as the
claim's, so that the curve reuses its node moments (they do not depend on eps; memoised per working precision)
instead of integrating every node afresh at fewer digits (4 digits cost about as much again as the claims)."""


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


def route(components: list, point: Point, pairs: list[tuple]) -> Route:
    """:class:`SubsampledGaussian` when the laws are Gaussian mixtures of that form,
    :class:`.laplace_mixture.SubsampledLaplace` for Laplace mixtures, else :func:`.routes.route`."""
    weights = [w for _, _, table in components for law in table.laws for w in law.values()]
    if any(isinstance(w, Density) and len(w.terms) > 1 for w in weights):
        if is_laplace_mixture(weights):
            return SubsampledLaplace(components, point, pairs)
        return SubsampledGaussian(components, point, pairs)
    return exact_route(components, point, pairs)


class SubsampledGaussian(Route):
    """The Poisson-subsampled Gaussian: delta_T(eps) certified to many digits (closed form, Mellin
    inversion), else certified bounds from its loss distribution rounded down and up."""

    method = ("Poisson-subsampled Gaussian: delta_T(eps) certified by the closed form in Phi (T = 1) or the Mellin "
              "inversion of the composed moments M(s)^T (arb balls, trapezoid rule with its strip error bound, "
              "tails bounded); beyond that method's budget, a discretised privacy loss distribution (cells merged "
              "for the lower bound, split between grid points for the upper one)")

    def __init__(self, components: list, point: Point, pairs: list[tuple]) -> None:
        super().__init__(components, point, pairs)
        if len(components) != 1:
            raise NotComposable("the subsampled Gaussian is composed with itself only (no also=)")
        self.times = components[0][1]
        self.shapes = [self._shape(pair) for pair in pairs]
        self.grid, self.dx, self.tail = GRIDS[0]
        self.work = IntervalBackend(DIGITS)
        self.found: dict = {}  # grid polynomials per shape (rate, distance), built when a pair needs them
        self.certified: dict = {}  # (index, eps) -> Certified, or Unreached
        self.plans: dict = {}  # index -> the Mellin plan of its first eps (the curve reuses its nodes)
        self.beyond: set = set()  # indices whose first eps was beyond the certified route's budget
        self.coarse: dict = {}  # the certified enclosures at CERTIFIED_DIGITS, kept when refined
        self.gridded = False  # some enclosure came from the grid (refine() can help)
        self.digits = CERTIFIED_DIGITS
        self.budget = Budget()  # the Mellin route's integrand evaluations for every claim at this point (counted)

    def _shape(self, pair: tuple) -> tuple[sympy.Expr, sympy.Expr, bool]:
        (laws, _), = self.laws(pair, SympyBackend())
        found = two_point_mixture(*laws, _centres)
        if found is None:
            raise NotComposable(f"X={pair[0]!r} and X'={pair[1]!r}: only a Gaussian release against its Poisson "
                                "subsampling (one law N(c0, s^2), the other (1 - q) N(c0, s^2) + q N(c1, s^2)) is "
                                "composed among mixtures of densities")
        rate = found[0]
        if not (rate.is_Rational and 0 < rate < 1):
            raise NotComposable(f"the subsampling rate {rate} is not a rational number in (0, 1)")
        return found

    def _discretise(self, shape: tuple, backend: Any, grid: tuple) -> Optional[list[Discretised]]:
        """Both directions composed ``times`` times; one step's polynomials are kept per (shape, grid,
        precision) in STEPS, for the other claims and compositions of a file."""
        rate, distance = shape[:2]
        if distance == 0:
            return None
        ctx = backend.ctx
        key = (rate, distance, grid, backend.dps)
        try:
            if key not in STEPS:
                STEPS[key] = one_step_tight(ctx, backend.num(rate), backend.num(distance), ctx.mpf(1) / grid[0], *grid[1:],
                                            times=self.times)
            return compose(STEPS[key], self.times, ctx.mpf(1) / grid[0])
        except TooLong as exc:
            raise NotComposable(str(exc)) from None

    def _grid(self, index: int) -> Optional[list[Discretised]]:
        shape = self.shapes[index][:2]
        if shape not in self.found:
            try:
                self.found[shape] = self._discretise(self.shapes[index], self.work, (self.grid, self.dx, self.tail))
            except NotComposable as exc:  # both routes out of reach: name both budgets
                reasons = [str(c) for (k, _), c in self.certified.items() if k == index and isinstance(c, Unreached)]
                if not reasons:
                    raise
                raise NotComposable(f"the Mellin route: {reasons[0]}; the grid: {exc}") from None
        return self.found[shape]

    def refine(self) -> bool:
        """Twice the digits for the certified enclosures, the finer grid for the others (False when neither
        applies: already refined, or the finer grid beyond its budget)."""
        changed = False
        if self.digits == CERTIFIED_DIGITS and any(isinstance(c, Certified) for c in self.certified.values()):
            self.digits = 2 * CERTIFIED_DIGITS
            self.coarse, self.certified = self.certified, {}
            changed = True
        if self.gridded and self.grid != GRIDS[-1][0]:
            try:
                self.found = {shape[:2]: self._discretise(shape, self.work, GRIDS[-1]) for shape in self.shapes}
                self.grid, self.dx, self.tail = GRIDS[-1]
                changed = True
            except NotComposable:
                pass
        return changed

    def _grid_bounds(self, found: Optional[list], added: bool, eps: sympy.Expr, backend: Any) -> Any:
        """[lower, upper] of delta_T(eps) of the direction from the grid, in the table's context."""
        if found is None:
            return self.backend.ctx.mpf(0)
        bounds = delta_bounds(backend.ctx, found[0 if added else 1], backend.num(eps))
        return self.backend.ctx.mpf([bounds.lower.a, bounds.upper.b])

    def _certify(self, shape: tuple, eps: sympy.Expr, digits: int, plan: Any = None,
                 budget: Budget | None = None) -> Certified:
        rate, distance, added = shape
        return certified_delta(Fraction(int(rate.p), int(rate.q)), _fractions(distance), self.times,
                               _fractions(sympy.sympify(eps)), added, digits, plan,
                               self.budget if budget is None else budget)

    def _interval(self, found: Certified, backend: Any) -> Any:
        ctx = backend.ctx
        low = ctx.mpf(found.lower.numerator) / found.lower.denominator
        high = ctx.mpf(found.upper.numerator) / found.upper.denominator
        return self.backend.ctx.mpf([low.a, high.b])

    def enclosure(self, index: int, eps: sympy.Expr) -> Any:
        shape = self.shapes[index]
        if shape[1] == 0:
            return self.backend.ctx.mpf(0)
        key = (index, eps)
        if key not in self.certified and index not in self.beyond:
            self._far_below(index, eps)
        if key not in self.certified and index not in self.beyond:
            try:
                self.certified[key] = self._certify(shape, eps, self.digits)
                self.plans.setdefault(index, self.certified[key].plan)
            except Unreached as exc:
                if isinstance(self.coarse.get(key), Certified):  # twice the digits is beyond the budget: keep it
                    self.certified[key] = self.coarse[key]
                else:
                    self.certified[key] = exc
                    self.beyond.add(index)  # the budget hardly depends on eps: the grid for this pair's others
        found = self.certified.get(key)
        if isinstance(found, Certified):
            return self._interval(found, self.backend)
        self.gridded = True
        return self._grid_bounds(self._grid(index), shape[2], eps, self.work)

    def _far_below(self, index: int, eps: sympy.Expr) -> None:
        """Certify [0, a moment bound] for a pair whose bound is below 10^-3 of another pair's certified lower
        end (the removed direction of a subsampled Gaussian is often many orders below): that pair is never
        the worst, nor the witness, so its full Mellin inversion is skipped."""
        rate, distance, added = self.shapes[index]
        if added or self.times == 1 or len(self.shapes) < 2:  # the removed direction only (no recursion)
            return
        try:
            bound = min(chernoff(Fraction(int(rate.p), int(rate.q)), _fractions(distance), self.times,
                                 _fractions(sympy.sympify(eps)), added, Fraction(a), self.budget)
                        for a in (2, 4, 8, 16, 32))
        except Unreached:
            return
        for other in range(len(self.shapes)):
            if other != index and self.shapes[other][2] != added:
                if (other, eps) not in self.certified and other not in self.beyond:
                    self.enclosure(other, eps)
                found = self.certified.get((other, eps))
                if isinstance(found, Certified) and bound < found.lower / 1000:
                    self.certified[(index, eps)] = Certified(Fraction(0), bound, 0.0, "moment bound")
                    return

    def curve_point(self, index: int, eps: sympy.Expr) -> Any:
        """An enclosure for the plot: on the plan of the pair's first claimed eps, at CURVE_DIGITS digits (the
        closed form for T = 1; the grid where the claimed eps was beyond the Mellin route's budget)."""
        if index in self.beyond:
            return self._grid_bounds(self._grid(index), self.shapes[index][2], eps, self.work)
        plan = self.plans.get(index)
        if plan is None:
            return self.enclosure(index, eps)
        try:
            return self._interval(self._certify(self.shapes[index], eps, CURVE_DIGITS, plan), self.backend)
        except Unreached:
            try:
                return self.enclosure(index, eps)
            except NotComposable:  # a plot's point beyond both budgets: delta is in [0, 1] (no verdict rests on it)
                return self.backend.ctx.mpf([0, 1])

    def lower_how(self, index: int, eps: sympy.Expr) -> str:
        """How :meth:`confirm_lower` bounds delta_T(eps) from below, for a refutation's message."""
        if isinstance(self.certified.get((index, eps)), Certified):
            return "the certified closed form (T = 1) or Mellin inversion, its error bound subtracted"
        return f"the loss distribution rounded down on a grid of {self.grid} points per unit"

    def confirm_lower(self, index: int, eps: sympy.Expr) -> tuple[Any, int]:
        """The certified lower bound of delta_T(eps) from both laws read afresh: the certified route at twice the
        digits (on a budget of its own, as large as the route's), or the grid at twice the precision."""
        fresh = IntervalBackend(2 * DIGITS)
        shape = self._shape(self.pairs[index])
        if isinstance(self.certified.get((index, eps)), Certified):
            budget = Budget()
            for digits in (2 * self.digits, self.digits + 2):  # more digits: other nodes, not the memo's
                try:
                    return self._interval(self._certify(shape, eps, digits, budget=budget), fresh), digits
                except Unreached:
                    continue
        found = self._discretise(shape, fresh, (self.grid, self.dx, self.tail))
        return self._grid_bounds(found, shape[2], eps, fresh), fresh.dps

    def extras(self) -> dict:
        digits = [c.digits for c in self.certified.values()
                  if isinstance(c, Certified) and c.upper > 0 and c.how != "moment bound"]
        return {"grid": self.grid if self.gridded else None, "digits": round(min(digits), 1) if digits else None}


def _fractions(value: sympy.Expr) -> Fraction | tuple[Fraction, Fraction]:
    """A number exactly (a rational), or an enclosure [lo, hi] of it (certified intervals at 40 digits)."""
    if value.is_Rational:
        return Fraction(int(value.p), int(value.q))
    low, high = IntervalBackend(40).num(value)._mpi_
    return _exact(low), _exact(high)


def _exact(raw: tuple) -> Fraction:
    """The exact value of an mpmath raw mpf (sign, mantissa, exponent, bits)."""
    sign, man, exp, _ = raw
    return (-1) ** sign * Fraction(int(man)) * Fraction(2) ** int(exp)
