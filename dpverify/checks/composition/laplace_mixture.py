"""The Poisson-subsampled Laplace composed T times: a route of :mod:`.routes` (through :mod:`.mixture`).

A program that keeps each record with probability q and releases a Laplace value of the kept records
has, on an add/remove pair, one law Laplace(c0, b) and the other (1 - q) Laplace(c0, b) + q Laplace(c1, b).
Each ordered pair's delta_T(eps) is certified by :mod:`dpverify.engine.pld.laplace_mixture`: the closed
form for T = 1, the certified integral of the closed form for T = 2 (arb balls, about 30 digits).  For
T >= 3 it is bracketed by :mod:`dpverify.engine.pld.laplace_mixture_bounds` (second-order lattice bounds:
cells merged for the lower bound, split to their ends for the upper one) with LATTICES[0] steps per run,
refined once to LATTICES[1] when a claim falls inside the bracket.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional

import sympy

from ...dsl.params import Point
from ...engine.program.backend import IntervalBackend, SympyBackend
from ...engine.continuous.noisy import FULL, Density
from ...engine.pld.bounds import MAX_COEFFICIENTS, TooLong
from ...engine.pld.budget import HOW, scaled
from ...engine.pld.laplace_mixture import Unreached, certified_delta
from ...engine.pld.laplace_mixture_bounds import bounds, discretised, top_loss
from .routes import NotComposable, Route, two_point_mixture

LATTICES = (1000, 2000)
"""Lattice steps across one run's loss range for T >= 3: the first, and the refinement (capped so that the
composed polynomial stays within pld_bounds.MAX_COEFFICIENTS)."""
BITS = 120
"""Working precision of the certified values (about 36 digits); a violation is confirmed at twice it."""


def _centres(weight: Any) -> Optional[tuple[dict, Any]]:
    """{centre: total weight} and the scale of a density whose every path releases one plain Laplace value."""
    if not isinstance(weight, Density):
        return None
    out: dict = {}
    scales = set()
    for constant, factors in weight.terms:
        if len(factors) != 1:
            return None
        (f,) = factors
        if f.noise is None or f.noise.kind != "laplace" or f.interval != FULL or f.joint or f.mix is not None:
            return None
        centre = f.noise.centre + f.offset
        if f.function is not None and tuple(f.function.cuts) != (centre,):  # only the plain density's one kink
            return None
        out[centre] = out.get(centre, 0) + constant
        scales.add(f.noise.scale)
    return (out, scales.pop()) if len(scales) == 1 else None


def is_laplace_mixture(weights: list) -> bool:
    """Whether every weight is a density releasing one plain Laplace value (some of them mixtures)."""
    return all(_centres(w) is not None for w in weights)


def _fraction_of(x: Any) -> Fraction:
    man, exp = x.man_exp()
    return Fraction(int(man)) * Fraction(2) ** int(exp)


class SubsampledLaplace(Route):
    """The Poisson-subsampled Laplace: delta_T(eps) certified (closed form at T = 1, certified integral at T = 2)."""

    method = ("Poisson-subsampled Laplace: delta_T(eps) certified in arb (python-flint): the closed form at the "
              "monotone loss's inverse for T = 1, the certified integral (acb.integral) of that closed form against "
              "one run's loss distribution for T = 2; for T >= 3 second-order certified bounds on a lattice through "
              "both atoms (cells merged for the lower bound, split to their ends keeping P- and Q-masses for the "
              "upper one)")

    def __init__(self, components: list, point: Point, pairs: list[tuple]) -> None:
        super().__init__(components, point, pairs)
        if len(components) != 1:
            raise NotComposable("the subsampled Laplace is composed with itself only (no also=)")
        self.times = components[0][1]
        self.shapes = [self._shape(pair) for pair in pairs]
        self.memo: dict = {}
        self.steps = self._steps(LATTICES[0])
        if self.times > 2 and self.steps < 2:
            raise NotComposable(f"{self.times:,} runs of the lattice bounds (2 steps per run or more) exceed the budget of "
                                f"{int(scaled(MAX_COEFFICIENTS)):,} coefficients ({HOW})")
        self.fell_back = False  # T <= 2 answered by the lattice where the certified integral was not established
        self.found: dict = {}  # lattice bounds per (shape, steps), built when a claim needs them
        self.grid = (f"{self.steps} steps per run" if self.times > 2
                     else "no (certified closed form and integral)")

    def _steps(self, steps: int) -> int:
        return min(steps, int(scaled(MAX_COEFFICIENTS) - 1) // self.times)

    def _shape(self, pair: tuple) -> tuple[Fraction, Fraction, bool]:
        (laws, _), = self.laws(pair, SympyBackend())
        found = two_point_mixture(*laws, _centres)
        if found is None:
            raise NotComposable(f"X={pair[0]!r} and X'={pair[1]!r}: only a Laplace release against its Poisson "
                                "subsampling (one law Laplace(c0, b), the other (1 - q) Laplace(c0, b) + q Laplace(c1, b)) "
                                "is composed among mixtures of Laplace densities")
        rate, distance, added = found
        if not (rate.is_Rational and 0 < rate < 1 and distance.is_Rational and distance > 0):
            raise NotComposable(f"the subsampling rate {rate} or the distance {distance} (in scales) is not a rational "
                                "number in range")
        return Fraction(int(rate.p), int(rate.q)), Fraction(int(distance.p), int(distance.q)), added

    def _certified(self, shape: tuple, eps: sympy.Expr, bits: int, backend: Any, memo: Optional[dict] = None) -> Any:
        eps = sympy.sympify(eps)
        if not eps.is_Rational:
            raise NotComposable(f"eps = {eps} is not rational (the certified route takes exact rationals)")
        q, t, added = shape
        if self.times > 2:
            return self._bracket(shape, eps, backend, self.found if memo is None else memo)
        try:
            value = certified_delta(q, t, self.times, Fraction(int(eps.p), int(eps.q)), added, bits)
        except Unreached:  # (a far-out rate or scale): the lattice bounds, which hold for every T
            self.fell_back = True
            return self._bracket(shape, eps, backend, self.found if memo is None else memo)
        low, high = _fraction_of(value.lower()), _fraction_of(value.upper())
        ctx = backend.ctx
        lo = ctx.mpf(low.numerator) / low.denominator
        hi = ctx.mpf(high.numerator) / high.denominator
        return ctx.mpf([max(lo.a, 0), hi.b])

    def _bracket(self, shape: tuple, eps: sympy.Expr, backend: Any, memo: dict) -> Any:
        """[lower, upper] of delta_T(eps) from the lattice bounds (0 exactly when eps >= T times the largest loss)."""
        ctx = backend.ctx
        q, t, added = shape
        q_, t_ = ctx.mpf(q.numerator) / q.denominator, ctx.mpf(t.numerator) / t.denominator
        e = backend.num(eps)
        if e.a >= (self.times * top_loss(ctx, q_, t_, added)).b:
            return ctx.mpf(0)
        key = (shape, self.steps, backend.dps)
        if key not in memo:
            try:
                memo[key] = discretised(ctx, q_, t_, added, self.times, self.steps)
            except TooLong as exc:
                raise NotComposable(str(exc)) from None
        found = bounds(ctx, memo[key], e)
        return self.backend.ctx.mpf([found.lower.a, found.upper.b])

    def refine(self) -> bool:
        """The finer lattice for T >= 3 (False when already there or for T <= 2: certified values)."""
        finer = self._steps(LATTICES[-1])
        if self.times <= 2 or finer == self.steps:
            return False
        self.steps, self.memo = finer, {}
        self.grid = f"{self.steps} steps per run"
        return True

    def enclosure(self, index: int, eps: sympy.Expr) -> Any:
        key = (index, eps)
        if key not in self.memo:
            self.memo[key] = self._certified(self.shapes[index], eps, BITS, self.backend)
        return self.memo[key]

    def curve_point(self, index: int, eps: sympy.Expr) -> Any:
        """A cheaper enclosure for the plot (60 bits; the same lattice for T >= 3)."""
        return self._certified(self.shapes[index], eps, 60, self.backend)

    def lower_how(self, index: int, eps: sympy.Expr) -> str:
        """How :meth:`confirm_lower` bounds delta_T(eps) from below, for a refutation's message."""
        if self.times > 2 or self.fell_back:
            return f"the lattice lower bound with {self.steps} steps per run"
        return "the closed form" if self.times == 1 else "the certified integral (arb balls)"

    def confirm_lower(self, index: int, eps: sympy.Expr) -> tuple[Any, int]:
        """The certified lower bound of delta_T(eps) from both laws read afresh, at twice the precision."""
        fresh = IntervalBackend(2 * self.backend.dps)
        shape = self._shape(self.pairs[index])
        return self._certified(shape, eps, 2 * BITS, fresh, {}), fresh.dps

    def extras(self) -> dict:
        return {"grid": self.steps} if self.times > 2 else {}
