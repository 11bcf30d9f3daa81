"""The ways to a composed privacy profile, each for every distinct ordered pair of datasets' laws.

A composition is a list of components (program, runs, table of laws), all run on the same pair of
neighbouring datasets.  A route gives, per pair and eps, a certified enclosure [lower, upper] of delta_T(eps), and confirms a
violation afresh: both datasets' laws recomputed (exactly, or in intervals at twice the precision)
and the composition recomputed from them.

* :class:`Lattice` -- discrete laws whose losses are integer multiples of one step: the exact
  polynomial power of :mod:`dpverify.engine.pld.lattice` (lower = upper up to interval rounding).
* :class:`Multinomial` -- discrete laws with few distinct losses on no common lattice (randomized
  response after Poisson subsampling): the exact multinomial of :mod:`dpverify.engine.pld.atoms`.
* :class:`Discrete` -- discrete laws with too many distinct losses for that: every loss rounded down
  and up to a grid (certified lower and upper bounds).
* :class:`Gaussian` -- Gaussian releases: delta at the scaled distance sqrt(T) D, in closed form.
* :class:`Laplace` -- Laplace releases: the discretised loss distribution, cells at their midpoints
  and split to their ends (:mod:`dpverify.engine.pld.bounds`: second order, certified), on a grid
  refined once when a claim falls between the bounds.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import sympy

from ...dsl.params import Point
from ...engine.program.backend import IntervalBackend, SympyBackend, exact_sign
from ...engine.decide.decimals import decimal
from ...engine.continuous.gaussian_delta import centre_distance, event_probabilities, gaussian_delta, release
from ...engine.continuous.noisy import Density
from ...engine.pld.lattice import LatticePLD, NotOnLattice, combine, delta_at, delta_curve, lattice_pld
from ...engine.pld import atoms as pld_atoms
from ...engine.pld.atoms import Atoms, TooManyTerms, atoms, composed_delta, composed_terms, count
from ...engine.pld.budget import HOW, scaled
from ...engine.pld.bounds import Discretised, TooLong, delta_bounds, discretise, discretise_atoms
from ...engine.program.reading import distribution
from ...engine.loss.renyi import Unsupported, exact_number, parts
from ...engine.program.work import params

GRIDS = (128, 1024)
"""Grid points per unit of the largest discrete loss (the Discrete route): the first, and the refinement."""
LAPLACE_GRIDS = (16, 64)
"""Grid points per unit of the smallest Laplace distance: the first, and the refinement (the bounds of
:func:`dpverify.engine.pld.bounds.discretise` are second order in the step: cells' midpoints and ends)."""


class NotComposable(Exception):
    """The laws are outside every route (the reason is the message)."""


def _laws(program: Any, point: Point, pair: tuple, backend: Any, windows: dict) -> list[dict]:
    return [distribution(program, data, params(point), backend, windows) for data in pair]


def _aligned(law: dict, law_prime: dict) -> tuple[list, list]:
    outputs = list(dict.fromkeys([*law, *law_prime]))
    zero = sympy.Integer(0)
    return [law.get(o, zero) for o in outputs], [law_prime.get(o, zero) for o in outputs]


def two_point_mixture(law: dict, law_prime: dict, centres: Any) -> Optional[tuple[sympy.Expr, sympy.Expr, bool]]:
    """(q, t, added) when one law releases one density around c0 and the other the mixture (1 - q) at c0
    + q at c1 of the same family and scale (``centres(weight)`` reads a weight as ({centre: weight}, scale),
    or None): the rate q as an exact number (a float's binary value, never a nearby decimal), the
    centres' distance t in scales, and whether ``law`` is the mixture; None otherwise.  The dominating
    pair of Poisson subsampling, for the Gaussian and the Laplace mixture routes alike."""
    if len(law) != 1 or list(law) != list(law_prime):
        return None
    found = [centres(w) for w in (*law.values(), *law_prime.values())]
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
    return (exact_number(mixed[c1]), sympy.Abs(exact_number(c1) - exact_number(c0)) / exact_number(scale),
            len(a) == 2)


def runs(components: list) -> str:
    """How the composition is described in an event: "20" or "20 + 3" runs."""
    return " + ".join(str(times) for _, times, _ in components)


class Route:
    """What every route shares: the components, the point and the pairs."""

    def __init__(self, components: list, point: Point, pairs: list[tuple]) -> None:
        self.components, self.point, self.pairs = components, point, pairs
        self.backend = components[0][2].backend

    def lower_how(self, index: int, eps: sympy.Expr) -> str:
        """How the route's ``confirm_lower`` bounds delta_T(eps) from below, for a refutation's message
        (routes that confirm from exact sums have no ``confirm_lower``)."""
        return f"the loss distribution rounded down on a grid of {getattr(self, 'grid', '?')} points per unit"

    def laws(self, pair: tuple, backend: Any) -> list[tuple[list[dict], int]]:
        """Each component's two laws on ``pair`` (recomputed in ``backend``), with its runs."""
        return [(_laws(program, self.point, pair, backend, table.windows), times)
                for program, times, table in self.components]


class Lattice(Route):
    """Discrete laws with losses on a lattice: exact composed loss distributions."""

    method = "exact privacy loss distribution: a polynomial power in w = e^s, certified intervals"

    def __init__(self, components: list, point: Point, pairs: list[tuple]) -> None:
        super().__init__(components, point, pairs)
        self.composed = [self._compose(pair) for pair in pairs]

    def _compose(self, pair: tuple) -> LatticePLD:
        return combine([lattice_pld(*_aligned(*laws)).compose(times) for laws, times in self.laws(pair, SympyBackend())])

    def enclosure(self, index: int, eps: sympy.Expr) -> Any:
        return delta_at(self.composed[index], eps, self.backend).delta

    def curve_point(self, index: int, eps: sympy.Expr) -> Any:
        """A cheaper enclosure for the plot: suffix sums (:func:`~dpverify.engine.pld.lattice.delta_curve`)."""
        return delta_curve(self.composed[index], eps, self.backend)

    def confirm(self, index: int, eps: sympy.Expr) -> tuple[tuple, str, int]:
        """(P(S|X), P(S|X'), their excess) of the composed laws recomputed afresh, S their event, digits."""
        fresh = IntervalBackend(2 * self.backend.dps)
        pld = self._compose(self.pairs[index])
        found = delta_at(pld, eps, fresh)
        event = (f"S = the tuples of outputs of the {runs(self.components)} runs whose total privacy loss is at least "
                 f"{found.threshold} x {pld.step} (above eps = {eps} = {decimal(eps)})"
                 + (" or infinite" if any(m != 0 for m, _ in pld.infinite) else ""))
        return (found.p_event, found.q_event, found.p_event - fresh.exp(eps) * found.q_event), event, fresh.dps

    def extras(self) -> dict:
        worst = max(self.composed, key=lambda c: len(c.terms))
        return {"step": str(worst.step), "terms": len(worst.terms)}


class Multinomial(Route):
    """Discrete laws with few distinct losses off any lattice: the exact multinomial composition."""

    method = "exact privacy loss distribution: a multinomial over the distinct losses, certified intervals"

    def __init__(self, components: list, point: Point, pairs: list[tuple]) -> None:
        super().__init__(components, point, pairs)
        self.atoms = [self._atoms(pair) for pair in pairs]
        total = sum(count(found) for found in self.atoms)  # every pair's terms, counted before any is computed
        if total > scaled(pld_atoms.MAX_TERMS):
            raise NotComposable(f"the {len(pairs)} pairs' multinomials make {total:,} "
                                f"terms (more than the budget of {int(scaled(pld_atoms.MAX_TERMS)):,}; {HOW})")
        try:
            self.terms = [composed_terms(found, self.backend) for found in self.atoms]
        except TooManyTerms as exc:
            raise NotComposable(str(exc)) from None

    def _atoms(self, pair: tuple) -> list[tuple[Atoms, int]]:
        return [(atoms(*_aligned(*laws)), times) for laws, times in self.laws(pair, SympyBackend())]

    def enclosure(self, index: int, eps: sympy.Expr) -> Any:
        return composed_delta(self.atoms[index], eps, self.backend, self.terms[index]).delta

    def confirm(self, index: int, eps: sympy.Expr) -> tuple[tuple, str, int]:
        fresh = IntervalBackend(2 * self.backend.dps)
        found = composed_delta(self._atoms(self.pairs[index]), eps, fresh)
        event = (f"S = the tuples of outputs of the {runs(self.components)} runs whose total privacy loss is certified "
                 f"above eps = {eps} = {decimal(eps)}")
        return (found.p_event, found.q_event, found.p_event - fresh.exp(eps) * found.q_event), event, fresh.dps

    def extras(self) -> dict:
        return {"terms": max(len(t) for t in self.terms)}


class Gaussian(Route):
    """Gaussian releases: runs at scaled distances D_i compose into one release at sqrt(sum T_i D_i^2)."""

    method = "analytic Gaussian delta(eps) at the composed distance sqrt(T) D (Balle and Wang 2018), certified"

    def __init__(self, components: list, point: Point, pairs: list[tuple]) -> None:
        super().__init__(components, point, pairs)
        self.distances = [self._distance(pair, self.backend) for pair in pairs]

    def _distance(self, pair: tuple, backend: Any) -> Any:
        squared = backend.ctx.mpf(0)
        for laws, times in self.laws(pair, backend):
            (ka, ga), (kb, gb) = (release(law, backend) for law in laws)
            if ka != kb:
                raise NotComposable(f"X={pair[0]!r} and X'={pair[1]!r} release different outputs around the noise "
                                    "(disjoint supports: delta = 1 at every eps)")
            if len(ga) != len(gb) or any(a[2] != b[2] for a, b in zip(ga, gb)):
                raise NotComposable("the two laws release Gaussian values with different scales")
            squared += times * centre_distance((ga, gb), backend) ** 2
        return backend.ctx.sqrt(squared)

    def enclosure(self, index: int, eps: sympy.Expr) -> Any:
        return gaussian_delta(self.backend.ctx, self.distances[index], self.backend.num(eps))

    def confirm(self, index: int, eps: sympy.Expr) -> tuple[tuple, str, int]:
        fresh = IntervalBackend(2 * self.backend.dps)
        distance = self._distance(self.pairs[index], fresh)
        inside, outside = event_probabilities(fresh.ctx, distance, fresh.num(eps))
        event = f"S = the releases of the {runs(self.components)} runs whose total privacy loss exceeds {eps}"
        return (inside, outside, inside - fresh.exp(eps) * outside), event, fresh.dps

    def extras(self) -> dict:
        return {}


class Laplace(Route):
    """Laplace releases: certified bounds from the rounded-down and rounded-up loss distributions."""

    method = ("discretised privacy loss distribution: cells at their midpoints and split to their ends keeping "
              "both masses (certified lower and upper bounds)")

    def __init__(self, components: list, point: Point, pairs: list[tuple]) -> None:
        super().__init__(components, point, pairs)
        self.distances = [self._distances(pair, self.backend) for pair in pairs]
        # every run's loss is at most its distance t: delta_T(eps) = 0 exactly for eps >= the sum (exact)
        self.tops = [sympy.Add(*(t * runs for t, runs in d.items())) for d in self.distances]
        self.grid = LAPLACE_GRIDS[0]
        self.found = [self._discretise(d, self.backend, self.grid) for d in self.distances]

    def _distances(self, pair: tuple, backend: Any) -> dict:
        """{scaled distance t: how many released Laplace values of all runs have it} (a count per distance:
        T runs are one entry, not T)."""
        out: dict = {}
        for laws, times in self.laws(pair, backend):
            try:
                law, law_prime = (parts(law, backend) for law in laws)
            except Unsupported as exc:
                raise NotComposable(str(exc)) from None
            if len(law) != 1 or list(law) != list(law_prime):
                raise NotComposable("only mechanisms releasing one output of Laplace values are handled "
                                    f"(X={pair[0]!r} and X'={pair[1]!r} release several or different outputs)")
            (a,), (b,) = law.values(), law_prime.values()
            for g, h in zip(a.slots, b.slots):
                if g.kind != "laplace" or h.kind != "laplace" or g.scale != h.scale:
                    raise NotComposable("a released value that is not Laplace, or Laplace values of different scales")
                t = sympy.Abs(exact_number(g.centre) - exact_number(h.centre)) / exact_number(g.scale)
                if t != 0:
                    out[t] = out.get(t, 0) + times
        return out

    def _discretise(self, distances: dict, backend: Any, grid: int) -> Optional[Discretised]:
        if not distances:
            return None
        base = min(distances, key=lambda t: float(t))
        ratios = {t: sympy.simplify(t / base) for t in distances}  # exact (nsimplify would round floats)
        if not all(r.is_Rational for r in ratios.values()):
            raise NotComposable(f"the Laplace distances {sorted(distances, key=str)} are not rational multiples "
                                "of each other")
        denominator = math.lcm(*(int(r.q) for r in ratios.values()))
        steps: dict = {}
        for t, runs in distances.items():
            n = int(ratios[t] * grid * denominator)
            steps[n] = steps.get(n, 0) + runs
        try:
            return discretise(backend.ctx, steps, backend.num(base / (grid * denominator)))
        except TooLong as exc:
            raise NotComposable(str(exc)) from None

    def refine(self) -> bool:
        """Move to the finer grid (False when already there, or when it is beyond the budget)."""
        if self.grid == LAPLACE_GRIDS[-1]:
            return False
        try:
            self.found = [self._discretise(d, self.backend, LAPLACE_GRIDS[-1]) for d in self.distances]
        except NotComposable:
            return False
        self.grid = LAPLACE_GRIDS[-1]
        return True

    def enclosure(self, index: int, eps: sympy.Expr) -> Any:
        ctx = self.backend.ctx
        if self.found[index] is None or exact_sign(eps - self.tops[index]) in (0, 1):
            return ctx.mpf(0)
        bounds = delta_bounds(ctx, self.found[index], self.backend.num(eps))
        return ctx.mpf([bounds.lower.a, bounds.upper.b])

    def confirm_lower(self, index: int, eps: sympy.Expr) -> tuple[Any, int]:
        """The certified lower bound of delta(eps) from both laws recomputed at twice the precision."""
        fresh = IntervalBackend(2 * self.backend.dps)
        found = self._discretise(self._distances(self.pairs[index], fresh), fresh, self.grid)
        if found is None:
            return fresh.ctx.mpf(0), fresh.dps
        return delta_bounds(fresh.ctx, found, fresh.num(eps)).lower, fresh.dps

    def extras(self) -> dict:
        return {"grid": self.grid}


class Discrete(Route):
    """Discrete laws off any lattice with too many distinct losses for an exact multinomial: certified
    bounds from every loss rounded down and up to a grid (:func:`dpverify.engine.pld.bounds.discretise_atoms`)."""

    method = "discretised privacy loss distribution of the discrete laws rounded down and up (certified bounds)"

    def __init__(self, components: list, point: Point, pairs: list[tuple]) -> None:
        super().__init__(components, point, pairs)
        self.atoms = [[(atoms(*_aligned(*laws)), times) for laws, times in self.laws(pair, SympyBackend())]
                      for pair in pairs]
        ctx = self.backend.ctx
        top = max((abs(float(ctx.log(self.backend.num(r)).mid)) for parts in self.atoms for a, _ in parts
                   for r in a.ratios), default=0.0)
        self.unit = sympy.Rational(max(top, 1e-3)).limit_denominator(10 ** 6) + sympy.Rational(1, 10 ** 6)
        self.grid = GRIDS[0]
        self.found = self._all(self.backend)

    def _all(self, backend: Any) -> list:
        return [self._discretise(parts, backend) for parts in self.atoms]

    def lower_how(self, index: int, eps: sympy.Expr) -> str:
        return f"every loss rounded down to a grid of {self.grid} points per {self.unit} of loss"

    def _discretise(self, parts: list, backend: Any) -> tuple[Discretised, Any]:
        ctx = backend.ctx
        finite = ctx.mpf(1)
        for found, times in parts:
            finite *= (ctx.mpf(1) - backend.num(found.infinite)) ** times
        given = [([ctx.log(backend.num(r)) for r in found.ratios], [backend.num(m) for m in found.masses], times)
                 for found, times in parts]
        try:
            return discretise_atoms(ctx, given, backend.num(self.unit / self.grid)), 1 - finite
        except TooLong as exc:
            raise NotComposable(str(exc)) from None

    def refine(self) -> bool:
        if self.grid == GRIDS[-1]:
            return False
        self.grid = GRIDS[-1]
        try:
            self.found = self._all(self.backend)
        except NotComposable:
            self.grid = GRIDS[0]
            return False
        return True

    def _bounds(self, found: tuple, eps: sympy.Expr, backend: Any) -> Any:
        discretised, infinite = found
        bounds = delta_bounds(backend.ctx, discretised, backend.num(eps))
        return backend.ctx.mpf([(bounds.lower + infinite).a, (bounds.upper + infinite).b])

    def enclosure(self, index: int, eps: sympy.Expr) -> Any:
        return self._bounds(self.found[index], eps, self.backend)

    def confirm_lower(self, index: int, eps: sympy.Expr) -> tuple[Any, int]:
        """The certified lower bound of delta(eps) from both laws recomputed exactly, at twice the precision."""
        fresh = IntervalBackend(2 * self.backend.dps)
        parts = [(atoms(*_aligned(*laws)), times) for laws, times in self.laws(self.pairs[index], SympyBackend())]
        return fresh.ctx.mpf(self._bounds(self._discretise(parts, fresh), eps, fresh).a), fresh.dps

    def extras(self) -> dict:
        return {"grid": self.grid}


def route(components: list, point: Point, pairs: list[tuple]) -> Route:
    """The route for the components' laws (``components``: (program, runs, table) each);
    :class:`NotComposable` when none applies."""
    weights = [w for _, _, table in components for law in table.laws for w in law.values()]
    try:
        if not any(isinstance(w, Density) for w in weights):
            reasons = []
            try:
                return Lattice(components, point, pairs)
            except NotOnLattice as exc:
                reasons.append(f"exact lattice: {exc}")
            try:
                return Multinomial(components, point, pairs)
            except NotComposable as exc:
                reasons.append(f"multinomial: {exc}")
            try:
                return Discrete(components, point, pairs)
            except NotComposable as exc:
                raise NotComposable("; ".join([*reasons, f"grid: {exc}"])) from None
        if not all(isinstance(w, Density) for w in weights):
            raise NotComposable("discrete outputs and released noisy values together are not composed")
        kinds = {s.kind for _, _, table in components for law in table.laws
                 for part in parts(law, table.backend).values() for s in part.slots}
    except (NotOnLattice, Unsupported) as exc:
        raise NotComposable(str(exc)) from None
    if kinds == {"gaussian"}:
        return Gaussian(components, point, pairs)
    if kinds == {"laplace"}:
        return Laplace(components, point, pairs)
    raise NotComposable("releases mixing Laplace and Gaussian values, discrete and continuous outputs, or values "
                        "of other laws are not composed")
