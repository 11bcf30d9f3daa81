"""The ordered neighbouring pairs of a divergence claim, their fresh recomputation and the evidence.

Pairs of datasets with the same law have divergence 0 and are skipped; each distinct ordered pair
of laws is evaluated once, named by one pair of datasets that has it.  A refutation recomputes the
two datasets' laws afresh at twice the precision (no shared cache) and evaluates the divergence
again there: that is the independent confirmation a witness needs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import mpmath
import sympy

from ...dsl.params import Point, substitute
from ...dsl.spec import Spec
from ...engine.program.backend import IntervalBackend, SympyBackend, exact_sign
from ...engine.datasets.datasets import require_pairs
from ...engine.decide.decimals import decimal
from ...engine.program.reading import distribution
from ...engine.loss.renyi import PairDivergence, exact_rate, exact_sum, parts
from ...engine.program.work import params
from ...errors import SpecError
from ...evidence import DivergenceCurve, DivergenceEvidence, PairValue
from ..witness import number

PER_PAIR_SHOWN = 20
"""Pairs listed in the evidence (largest first)."""
CURVE_ORDERS = 40
"""Orders of the witness pair's D_alpha curve (for the report's plot)."""


@dataclass
class Pair:
    """One distinct ordered pair of laws, named by datasets (X, X') that have them."""

    x: tuple
    x_prime: tuple
    divergence: PairDivergence


def law_pairs(spec: Spec, table: Any, left: Any, right: Any) -> list[Pair]:
    """Every distinct ordered pair of different laws among the neighbours (raises Unsupported); a
    universe without neighbours is refused (the claim would hold vacuously)."""
    require_pairs(spec.universe, left)
    converted = [parts(law, table.backend) for law in table.laws]
    seen: dict[tuple[int, int], Pair] = {}
    for i, j in zip(left.tolist(), right.tolist()):
        for a, b in ((i, j), (j, i)):
            la, lb = table.law_of[a], table.law_of[b]
            if la != lb and (la, lb) not in seen:
                seen[(la, lb)] = Pair(table.datasets[a], table.datasets[b],
                                      PairDivergence(converted[la], converted[lb], table.backend))
    return list(seen.values())


def fresh(program: Any, point: Point, pair: Pair, table: Any) -> PairDivergence:
    """The pair's divergence from both laws recomputed afresh at twice the table's precision."""
    backend = IntervalBackend(2 * table.backend.dps)
    laws = [parts(distribution(program, data, params(point), backend, table.windows), backend)
            for data in (pair.x, pair.x_prime)]
    return PairDivergence(laws[0], laws[1], backend)


def exact_excess(program: Any, point: Point, pair: Pair, table: Any, alpha: sympy.Expr,
                 bound: sympy.Expr) -> tuple[Optional[int], Any]:
    """(sign, difference): the exact sympy difference sum_o P^alpha Q^(1 - alpha)... - e^((alpha - 1) bound)
    (sympy.oo for an output possible under X only) and its sign: > 0 means D_alpha > bound; None
    when sympy cannot decide."""
    exact = SympyBackend()
    laws = [parts(distribution(program, data, params(point), exact, table.windows), exact)
            for data in (pair.x, pair.x_prime)]
    total = exact_sum(laws[0], laws[1], alpha)
    if total == sympy.oo:
        return 1, sympy.oo
    difference = total - sympy.exp((alpha - 1) * bound)
    sign = exact_sign(difference)
    if sign is None:  # hyperbolic functions and the like: the same number in exponentials, simplified
        difference = sympy.simplify(difference.rewrite(sympy.exp))
        sign = exact_sign(difference)
    return sign, difference


def exact_rate_sign(program: Any, point: Point, pair: Pair, table: Any, rho: sympy.Expr) -> tuple[Optional[int], Any]:
    """(sign of rho - D_alpha / alpha, the exact rate) in exact sympy for a pair whose rate does not
    depend on alpha (one output releasing Gaussian values): >= 0 means the claim holds for every order."""
    exact = SympyBackend()
    laws = [parts(distribution(program, data, params(point), exact, table.windows), exact)
            for data in (pair.x, pair.x_prime)]
    rate = exact_rate(laws[0], laws[1])
    return (None, None) if rate is None else (exact_sign(rho - rate), rate)


def order(alpha: sympy.Expr, point: Point) -> sympy.Expr:
    """The claim's order at ``point``: exact and > 1 (a SpecError naming the fix otherwise)."""
    value = substitute(alpha, point, "alpha")
    if exact_sign(value - 1) != 1:
        at = ", ".join(f"{s} = {v}" for s, v in point) or "this point"
        raise SpecError(f"renyi: alpha = {alpha} is {value} at {at}, not > 1",
                        "write alpha so that it exceeds 1 at every grid point")
    return value


def shown(value: Any) -> str:
    """A certified divergence as a decimal: "inf", its value when pinned down, else its upper end."""
    if value == math.inf:
        return "inf"
    return number(value, probability=False) or decimal(value.b)


def witnessed(value: Any) -> tuple[str, str]:
    """A divergence a refutation rests on, as (relation, decimal): "=" and its value when pinned down (or
    inf), else ">=" and its lower end when that is positive, else "in" and the enclosure -- never the
    upper end alone, which can exceed the truth many times over when the laws differ below the working
    precision."""
    if value == math.inf:
        return "=", "inf"
    pinned = number(value, probability=False)
    if pinned:
        return "=", pinned
    return (">=", decimal(value.a)) if value.a > 0 else ("in", f"[{decimal(value.a)}, {decimal(value.b)}]")


def evidence(kind: str, claimed: sympy.Expr, alpha: Optional[Any], pairs: list[Pair],
             values: list[Any]) -> DivergenceEvidence:
    """The evidence of a claim over ``pairs`` with their ``values`` (intervals or inf)."""
    ranked = sorted(zip(pairs, values), key=lambda item: math.inf if item[1] == math.inf else float(item[1].b),
                    reverse=True)
    found = DivergenceEvidence(kind=kind, claimed=decimal(claimed), alpha=None if alpha is None else decimal(alpha),
                               pairs=len(pairs))
    found.per_pair = [PairValue(repr(p.x), repr(p.x_prime), shown(v)) for p, v in ranked[:PER_PAIR_SHOWN]]
    if ranked:
        top, value = ranked[0]
        found.achieved, found.pair = shown(value), [repr(top.x), repr(top.x_prime)]
        found.tightness = tightness(value, claimed)
        found.curve = curve(top)
    else:
        found.achieved, found.tightness = decimal(0), decimal(0) if claimed != 0 else None
    return found


def tightness(value: Any, claimed: sympy.Expr) -> Optional[str]:
    """achieved / claimed (a figure, 6 digits), or None when the claim is 0; computed in mpmath, as a float
    would overflow or vanish for claims such as 10^-400."""
    if claimed == 0:
        return None
    if value == math.inf:
        return "inf"
    with mpmath.workdps(30):
        scale = mpmath.mpf(sympy.N(claimed, 30))
        return None if scale == 0 else mpmath.nstr(mpmath.mpf(value.mid) / scale, 6)


def curve(pair: Pair, top: float = 16.0) -> DivergenceCurve:
    """D_alpha of ``pair`` at CURVE_ORDERS orders in (1, top], geometric in alpha - 1 (floats)."""
    orders = [1 + Fraction(10 ** (-3 + (math.log10(top - 1) + 3) * k / (CURVE_ORDERS - 1))).limit_denominator(10 ** 6)
              for k in range(CURVE_ORDERS)]
    values = []
    for a in orders:
        v = pair.divergence.value(a)
        values.append(None if v == math.inf else float(v.mid))
    return DivergenceCurve(repr(pair.x), repr(pair.x_prime), [float(a) for a in orders], values)
