"""Certified lower and upper bounds on delta_T(eps) of the Poisson-subsampled Laplace, any T.

One run's loss (:mod:`.pld_laplace_mixture`: in units of the scale, P0 = Laplace(0, 1) against the
mixture (1 - q) P0 + q Laplace(t, 1)) has two atoms, at l_lo and l_hi, and a continuous part between
them.  The lattice is o + h Z with o = l_lo and h = (l_hi - l_lo) / n (h irrational, an interval): both
atoms lie on it exactly, and the T-fold composition lives on T o + h Z, so delta_T(eps) is the lattice
bound of :func:`.pld_bounds.delta_bounds` at eps - T o (delta depends on eps - loss only).

* Upper bound: each lattice cell [g_k, g_k+1] of the continuous part split to its two ends keeping its
  P- and Q-masses -- a pair with likelihood ratios in [e^g_k, e^g_k+1] is a post-processing of that
  two-point pair (second order in h).
* Lower bound: the continuous part cut into cells of width 2h centred a little above the even lattice
  points (by SAFETY times the deficit of the centred cells, estimated in floats), each cell merged into one output (a post-processing: its loss
  ln(P_c / Q_c), exact masses) and that loss rounded down to the lattice (delta_T is non-decreasing in
  every run's loss).  The merged loss of a cell is its midpoint minus O(h^2) (the measure
  e^(-l/2) P(dl) is decreasing in l here, so a centred cell's merged loss falls below its midpoint):
  the shift keeps it above its lattice point, so the rounding costs O(h^2), not O(h); a cell where
  that is not certified is rounded down further (still a bound).

Masses are mpmath intervals, composed by the exact integer products of :mod:`.pld_bounds`.
"""
from __future__ import annotations

from typing import Any

from mpmath.libmp import from_int, fzero, round_ceiling, round_floor
from mpmath.libmp.libmpi import mpi_add, mpi_div, mpi_mul

from .budget import HOW, scaled
from .bounds import BITS, MAX_COEFFICIENTS, Bounds, Discretised, TooLong, _floor, _integers, _power, check_cost

SAFETY = 1.5
"""The lower bound's cells are centred SAFETY times the estimated deficit above their lattice point."""


class Run:
    """One run of a direction on the lattice l_lo + h Z with n steps (mpmath interval context ``ctx``)."""

    def __init__(self, ctx: Any, q: Any, t: Any, added: bool, n: int) -> None:
        self.ctx, self.q, self.t, self.added, self.n = ctx, q, t, added, n
        low, high = ctx.log(1 - q + q * ctx.exp(-t)), ctx.log(1 - q + q * ctx.exp(t))
        if added:
            self.atoms = ((low, (1 - q) / 2 + q * ctx.exp(-t) / 2), (high, (1 - q) * ctx.exp(-t) / 2 + q / 2))
        else:
            self.atoms = ((-high, ctx.exp(-t) / 2), (-low, ctx.mpf(1) / 2))
        self.origin = self.atoms[0][0]
        self.h = (self.atoms[1][0] - self.origin) / n

    def _x(self, loss: Any) -> Any:
        """The output x in [0, t] where the loss is ``loss`` (inside the atoms' range)."""
        ctx, q = self.ctx, self.q
        ratio = (ctx.exp(loss if self.added else -loss) - 1 + q) / q
        return (self.t + ctx.log(ratio)) / 2

    def point(self, k: int) -> Any:
        return self.origin + k * self.h

    def masses(self, la: Any, lb: Any, ends: tuple[bool, bool]) -> tuple[Any, Any]:
        """(P-mass, Q-mass) of the outputs with loss in [la, lb] (``ends``: la, lb are the atoms' losses, whose
        outputs x are exactly 0 or t)."""
        ctx, q, t = self.ctx, self.q, self.t
        xa = (ctx.mpf(0) if self.added else t) if ends[0] else self._x(la)
        xb = (t if self.added else ctx.mpf(0)) if ends[1] else self._x(lb)
        if not self.added:
            xa, xb = xb, xa
        p0 = (ctx.exp(-xa) - ctx.exp(-xb)) / 2
        p1 = (ctx.exp(xb - t) - ctx.exp(xa - t)) / 2
        mix = (1 - q) * p0 + q * p1
        return (mix, p0) if self.added else (p0, mix)

    def upper(self) -> dict[int, Any]:
        """{lattice index: P-mass}: each cell split to its ends keeping its P- and Q-masses."""
        ctx = self.ctx
        out = {0: self.atoms[0][1], self.n: self.atoms[1][1]}
        for k in range(self.n):
            a, b = self.point(k), self.point(k + 1)
            p_mass, q_mass = self.masses(a, b, (k == 0, k + 1 == self.n))
            at_a = (q_mass - p_mass * ctx.exp(-b)) / (ctx.exp(-a) - ctx.exp(-b))
            at_a = ctx.mpf([max(at_a.a, 0), min(at_a.b, p_mass.b)])
            out[k] = out.get(k, ctx.mpf(0)) + at_a
            out[k + 1] = out.get(k + 1, ctx.mpf(0)) + ctx.mpf([max((p_mass - at_a).a, 0), (p_mass - ctx.mpf(at_a.a)).b])
        return _clip(ctx, out)

    def _merged(self, a: Any, b: Any, ends: tuple[bool, bool]) -> tuple[Any, Any]:
        """(P-mass, merged loss ln(P_c / Q_c)) of the outputs with loss in [a, b]."""
        p_mass, q_mass = self.masses(a, b, ends)
        p_mass = self.ctx.mpf([max(p_mass.a, 0), p_mass.b])
        if not (p_mass.a > 0 and q_mass.a > 0):  # nothing certain to merge: the cell is dropped (a lower bound)
            return p_mass, None
        return p_mass, self.ctx.log(p_mass / q_mass)

    def _shifts(self) -> list[float]:
        """Per odd lattice point 2j - 1, how far above it to cut (a float estimate; soundness does not rest on
        it): SAFETY times the larger deficit (midpoint minus merged loss) of the two centred cells beside it."""
        deficits = []
        for k in range(0, self.n + 1, 2):
            a, b = self.point(max(k - 1, 0)), self.point(min(k + 1, self.n))
            _, merged = self._merged(a, b, (k == 0, k + 1 >= self.n))
            deficits.append(0.0 if merged is None else max(float((self.point(k) - merged).b), 0.0))
        cap = float(self.h.a) / 2  # cuts stay increasing and inside the atoms' range: the cells partition
        return [min(SAFETY * max(deficits[j - 1], deficits[j] if j < len(deficits) else 0.0), cap)
                for j in range(1, (self.n + 1) // 2 + 1)]

    def lower(self) -> dict[int, Any]:
        """{lattice index: P-mass}: cells merged (exact masses) at their loss rounded down to the lattice."""
        ctx = self.ctx
        out = {0: self.atoms[0][1], self.n: self.atoms[1][1]}
        shifts = self._shifts()
        cuts = [(self.point(0), True)] + [(self.point(k) + shifts[k // 2], False) for k in range(1, self.n, 2)]
        cuts.append((self.point(self.n), True))
        for (a, end_a), (b, end_b) in zip(cuts, cuts[1:]):
            p_mass, merged = self._merged(a, b, (end_a, end_b))
            if merged is None:
                continue
            k = min(max(_floor(ctx, (merged - self.origin) / self.h), 0), self.n)
            out[k] = out.get(k, ctx.mpf(0)) + ctx.mpf(p_mass.a)
        return _clip(ctx, out)


def _suffix_sums(ctx: Any, found: tuple[Discretised, Any], up: bool) -> tuple[list[int], list[tuple]]:
    """(S_p, S_q) of one bound, kept on its :class:`Discretised` per precision: S_p[i] = sum_{j >= i} c_j (exact
    integers) and S_q[i] = sum_{j >= i} c_j e^(-l_j) (raw mpmath intervals; l_j = T o + (first + j) h, its
    lattice losses), so that every eps costs one difference instead of a pass over the coefficients."""
    lattice, offset = found
    key = ("laplace", up, ctx.prec)
    if key not in lattice.sums:
        first, coeffs, _ = lattice.upper if up else lattice.lower
        prec, n = ctx.prec, len(coeffs)
        ratio = ctx.exp(-lattice.h)._mpi_
        back = ctx.exp(-(offset + (first + n - 1) * lattice.h))._mpi_  # e^(-l_j), from the top down
        s_p, s_q = [0] * (n + 1), [(fzero, fzero)] * (n + 1)
        for j in range(n - 1, -1, -1):
            c = coeffs[j]
            s_p[j] = s_p[j + 1] + c
            s_q[j] = mpi_add(s_q[j + 1], mpi_mul((from_int(c, prec, round_floor), from_int(c, prec, round_ceiling)),
                                                 back, prec), prec)
            back = mpi_div(back, ratio, prec)
        lattice.sums[key] = (s_p, s_q)
    return lattice.sums[key]


def _clip(ctx: Any, masses: dict[int, Any]) -> dict[int, Any]:
    return {i: ctx.mpf([max(m.a, 0), max(m.b, 0)]) for i, m in masses.items()}


def top_loss(ctx: Any, q: Any, t: Any, added: bool) -> Any:
    """One run's largest loss (its upper atom): delta_T(eps) = 0 for eps >= T times it."""
    return ctx.log(1 - q + q * ctx.exp(t)) if added else -ctx.log(1 - q + q * ctx.exp(-t))


def discretised(ctx: Any, q: Any, t: Any, added: bool, times: int, n: int) -> tuple[Discretised, Any]:
    """(the composed lower and upper lattice distributions, T o): :class:`TooLong` beyond MAX_COEFFICIENTS."""
    if n < 2 or times * n + 1 > scaled(MAX_COEFFICIENTS):
        raise TooLong(f"{times:,} runs of {max(n, 2):,} lattice steps or more exceed the budget of "
                      f"{int(scaled(MAX_COEFFICIENTS)):,} coefficients ({HOW})")
    check_cost([(n + 1, times)], f"{times:,} runs of {n:,} lattice steps")
    run = Run(ctx, q, t, added, n)
    ends = [_power(_integers(masses, up), times, up) for masses, up in ((run.lower(), False), (run.upper(), True))]
    return Discretised(run.h, ends[0], ends[1]), times * run.origin


def bounds(ctx: Any, found: tuple[Discretised, Any], eps: Any) -> Bounds:
    """Certified [lower, upper] ends of delta_T(eps) (``eps`` an interval): over the lattice losses l_j
    certified above eps, sum c_j - e^eps sum c_j e^(-l_j) (both suffix sums, computed once per bound and
    precision: :func:`_suffix_sums`), plus c_j (1 - e^(eps - l_j)) clipped at 0 for the few l_j
    that meet eps, plus the upper bound's mass at +inf."""
    lattice, offset = found
    h = lattice.h
    ends = []
    for up, (first, coeffs, overflow) in ((False, lattice.lower), (True, lattice.upper)):
        def loss(j: int) -> Any:
            return offset + (first + j) * h
        above = min(max(_floor(ctx, (eps - offset) / h) - first, 0), len(coeffs))
        while above > 0 and loss(above - 1).a > eps.b:
            above -= 1
        while above < len(coeffs) and not loss(above).a > eps.b:
            above += 1
        s_p, s_q = _suffix_sums(ctx, found, up)
        total = ctx.mpf(s_p[above] + (overflow if up else 0))
        if above < len(coeffs):
            total -= ctx.exp(eps) * ctx.make_mpf(s_q[above])
        j = above - 1
        while j >= 0 and loss(j).b > eps.a:  # losses not separated from eps
            excess = 1 - ctx.exp(eps - loss(j))
            total += coeffs[j] * ctx.mpf([max(excess.a, 0), max(excess.b, 0)])
            j -= 1
        value = total / ctx.mpf(2) ** BITS
        ends.append(ctx.mpf(max(value.b, 0)) if up else ctx.mpf(max(value.a, 0)))
    return Bounds(ends[0], ends[1])
