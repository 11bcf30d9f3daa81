"""A fuzz case as data, and its rendering into a real spec file for dpverify.

The mechanism (and, when used, the ``other`` program of a same_distribution claim and
a custom relation ``rel``) is Python source written with the DSL's primitives; the
reference executes that source with :mod:`.shim` as ``dp``, dpverify loads the rendered
spec file.  Universe, grid and claims are data here, rendered into ``dp.spec(...)``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional

import sympy

from .exactnum import Q

HEADER = """\
from fractions import Fraction
import sympy
from sympy import Rational
import dpverify as dp

eps = dp.symbol("eps", positive=True)
"""


@dataclass(frozen=True)
class ClaimSpec:
    """One claim.  ``kind`` is "private" or "same".

    For private: the claimed epsilon is log(ratio) + coef*eps + offset (ratio None means
    1, i.e. no log term), the claimed delta is delta_base + delta_offset (None: pure DP).
    """

    kind: str
    coef: Fraction = Fraction(0)
    offset: Fraction = Fraction(0)
    ratio: Optional[Q] = None
    delta_base: Optional[Q] = None
    delta_offset: Fraction = Fraction(0)
    label: str = ""

    def exp_bound(self, eps: Fraction) -> Q:
        """e^(claimed epsilon) at the parameter value ``eps``, exactly."""
        e = Q.exp(self.coef * eps + self.offset)
        return e * self.ratio if self.ratio is not None else e

    def delta(self) -> Q:
        base = self.delta_base if self.delta_base is not None else Q.of(0)
        return base + self.delta_offset

    @property
    def is_delta(self) -> bool:
        return self.delta_base is not None or self.delta_offset != 0


@dataclass
class Case:
    """A generated program with its universe, grid and claims."""

    source: str  # defines mech(data, eps) and, if used, other(data, eps) and rel(x, y)
    records: tuple
    sizes: tuple[int, ...]
    relation: str  # "replace", "addremove" or "rel" (a function in source)
    symmetric: bool
    grid: tuple[Fraction, ...]
    claims: list[ClaimSpec] = field(default_factory=list)
    shapes: tuple[str, ...] = ()  # what the generator put in (for statistics and xfails)
    branches_on_eps: bool = False

    def render(self) -> str:
        """The spec file dpverify checks."""
        if len(self.sizes) == 1:
            n = str(self.sizes[0])
        else:
            n = f"range({self.sizes[0]}, {self.sizes[-1] + 1})"
        relation = {"replace": "dp.REPLACE_ONE", "addremove": "dp.ADD_REMOVE"}.get(self.relation, self.relation)
        grid = ", ".join(_rational(v) for v in self.grid)
        claims = ",\n        ".join(_claim_source(c, i) for i, c in enumerate(self.claims))
        return (f"{HEADER}\n{self.source}\n\n"
                f"spec = dp.spec(\n    mech,\n"
                f"    universe=dp.universe({self.records!r}, n={n}, neighbours={relation}, "
                f"symmetric={self.symmetric}),\n"
                f"    grid={{eps: [{grid}]}},\n"
                f"    claims=[\n        {claims},\n    ],\n)\n")


def _rational(x: Any) -> str:
    x = Fraction(x)
    return f"Rational({x.numerator}, {x.denominator})"


def q_source(q: Q) -> str:
    """Python source of an exact number, as a sympy expression."""
    def poly(p: Any) -> str:
        terms = [f"{_rational(c)}*sympy.exp({_rational(a)})" for a, c in sorted(p.terms.items())]
        return "(" + (" + ".join(terms) or "Rational(0)") + ")"
    return f"({poly(q.num)}/{poly(q.den)})"


def _claim_source(c: ClaimSpec, i: int) -> str:
    if c.kind == "same":
        return f"dp.same_distribution(other, id='c{i}')"
    parts = []
    if c.ratio is not None:
        parts.append(f"sympy.log({q_source(c.ratio)})")
    if c.coef:
        parts.append(f"{_rational(c.coef)}*eps")
    if c.offset:
        parts.append(_rational(c.offset))
    epsilon = " + ".join(parts) or "0"
    if not c.is_delta:
        return f"dp.private({epsilon}, id='c{i}')"
    delta = q_source(c.delta_base) if c.delta_base is not None else "0"
    if c.delta_offset:
        delta += f" + {_rational(c.delta_offset)}"
    return f"dp.private({epsilon}, delta={delta}, id='c{i}')"


def claimed_value_sympy(c: ClaimSpec, eps: Fraction) -> sympy.Expr:
    """The claimed epsilon at ``eps`` as an exact sympy number (for messages)."""
    out = sympy.Rational(c.coef * eps + c.offset)
    return out + sympy.log(c.ratio.to_sympy()) if c.ratio is not None else out
