"""The spec's exact CDF of a released noisy value, per coordinate, for the statistical audit of black boxes.

A spec program that releases noisy values (``dp.laplace(sum(data), 1/eps)``) has, on each
dataset, a law whose one output is the skeleton of the released values (``v0`` or a tuple of
them) weighed by a :class:`~dpverify.engine.continuous.noisy.Density`: a constant times one density per
released value (:func:`~dpverify.engine.continuous.density_cells.normalise`).  The marginal CDF of value k
is then the constant times the other values' masses times H_k(t), the antiderivative of the
k-th density (:func:`~dpverify.engine.continuous.piecewise.antiderivative`: exact terms, certified
interval arithmetic); a Gaussian value's is Phi((t - mu) / sigma) from mpmath at 40 digits,
widened by 1e-30.  :meth:`Cdf.floats` evaluates it in doubles to search (which sample point,
which threshold); :meth:`Cdf.certified` encloses it where a verdict reads it.

Laws this does not cover (a discrete part beside the values, released sums of several noises,
values that depend on each other) give a :class:`Uncovered` with the reason.
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import sympy

from ...engine.continuous import piecewise as pw
from ...engine.continuous.density_cells import normalise
from ...engine.continuous.noisy import Density, Released


class Uncovered(Exception):
    """The spec's law is not a product of one-dimensional densities of the released values."""


@dataclass
class Cdf:
    """The marginal CDF of one released value: ``scale`` * H(t), H a Piecewise antiderivative, or a Gaussian."""

    scale: Any  # a certified interval (the constant and the other values' masses)
    h: Any  # a Piecewise antiderivative, or ("gaussian", centre, sigma)
    backend: Any

    def floats(self, t: float) -> float:
        """F(t) in doubles (searching only)."""
        if isinstance(self.h, tuple):
            _, centre, sigma = self.h
            return self._scale * 0.5 * math.erfc(-(t - float(centre)) / (float(sigma) * math.sqrt(2)))
        cuts = self._cuts
        terms = self._terms[bisect.bisect_right(cuts, t)]
        total = 0.0
        for rate, degree, c in terms:
            try:
                total += c * (t ** degree if degree else 1.0) * (math.exp(rate * t) if rate else 1.0)
            except OverflowError:
                return 0.0 if t < 0 else 1.0
        return min(1.0, max(0.0, self._scale * total))

    def certified(self, t: float) -> tuple[float, float]:
        """An enclosure (lo, hi) of F(t), as doubles rounded outwards."""
        if isinstance(self.h, tuple):
            _, centre, sigma = self.h
            with mpmath.workdps(40):
                z = mpmath.mpf(t) - _mp(centre)
                value = mpmath.erfc(-z / (_mp(sigma) * mpmath.sqrt(2))) / 2
            lo, hi = float(value * self.scale.a) - 1e-30, float(value * self.scale.b) + 1e-30
        else:
            value = pw.evaluate(self.h, Fraction(t), self.backend) * self.scale
            lo, hi = float(value.a), float(value.b)
        return max(0.0, math.nextafter(lo, -math.inf)), min(1.0, math.nextafter(hi, math.inf))

    def __post_init__(self) -> None:
        self._scale = float(self.scale.mid)  # the search's double, computed once (not per sample)
        if not isinstance(self.h, tuple):
            self._cuts = [float(c) for c in self.h.cuts]
            self._terms = [[(float(rate), degree, float(c.mid) if hasattr(c, "mid") else float(c))
                            for (rate, degree), c in piece.items()] for piece in self.h.pieces]


def _mp(x: Any) -> Any:
    """An exact number (Fraction, int, sympy expression) as an mpmath number at the working precision."""
    if isinstance(x, Fraction):
        return mpmath.mpf(x.numerator) / x.denominator
    return mpmath.mpf(str(sympy.N(sympy.sympify(x), mpmath.mp.dps + 5)))


def released(law: dict) -> tuple[Any, list[int]]:
    """The one output skeleton of ``law`` and, per coordinate of a sample, the index of its released value."""
    if len(law) != 1:
        raise Uncovered(f"the spec's law has {len(law)} output shapes (a discrete part beside the noisy values); "
                        "the audit of continuous outputs covers laws of released values only")
    (key, weight), = law.items()
    if not isinstance(weight, Density):
        raise Uncovered("the spec's law mixes discrete outputs and noisy values")
    parts = key if isinstance(key, tuple) else (key,)
    if not all(isinstance(p, Released) for p in parts):
        raise Uncovered(f"the spec's output {key!r} has discrete parts beside the noisy values")
    return key, [p.index for p in parts]


def marginals(law: dict, backend: Any) -> list[Cdf]:
    """Per coordinate of the output (in order), its marginal CDF under ``law``."""
    key, indices = released(law)
    normal = normalise(law[key], backend)
    if normal.constant is None:
        raise Uncovered(normal.reason)
    if any(m is not None for m in normal.mixes):
        raise Uncovered("the spec releases sums of several noisy values (no one-dimensional CDF per value here)")
    parts, masses = [], []
    for slot in normal.slots:
        if isinstance(slot, tuple) and slot[0] == "gaussian":
            parts.append(slot)
            masses.append(backend.num(1))
        elif isinstance(slot, tuple):
            raise Uncovered("a released value's noise has no closed-form density here")
        else:
            h, total = pw.antiderivative(slot, backend)
            parts.append(h)
            masses.append(total)
    out = []
    for index in indices:
        scale = normal.constant
        for other, mass in enumerate(masses):
            if other != index:
                scale = scale * mass
        out.append(Cdf(scale, parts[index], backend))
    return out


__all__ = ["Cdf", "Uncovered", "marginals", "released"]
