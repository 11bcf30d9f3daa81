"""``renyi(alpha, eps)`` of discrete mechanisms proved -- or refuted off the grid -- for every value of
one parameter, by exact polynomial algebra.

Run with the parameter as a sympy symbol (:func:`dpverify.engine.program.symbolic.symbolic_laws`), every output
probability is a rational function of w = e^(s/L) (:func:`dpverify.engine.program.symbolic.basis`).  For an
integer order alpha >= 2 and an ordered neighbouring pair (P, Q),

    e^((alpha - 1) D_alpha(P || Q)) = sum_o P(o)^alpha Q(o)^(1 - alpha) = sum_o P(o)^alpha / Q(o)^(alpha - 1)

is a rational function S(w) = N(w) / D(w) too, and when e^((alpha - 1) eps_claimed) is one, B(w) = b(w) / c(w)
(``eps`` such as ``log(2 cosh(eps) - 1)`` or ``eps`` itself; ``eps^2`` is not), the claim at every value is
S(w) <= B(w), i.e. H(w) = b D - N c >= 0 for every w > 1 once D and c are shown positive there.  Each
distinct H is decided by exact real-root isolation (:func:`dpverify.engine.decide.positivity.find_point`): no
w > 1 with H(w) < 0 proves the claim for every value; an exact rational w* with H(w*) < 0 is a
counterexample at s* = L ln w*, confirmed by recomputing both laws at s* in certified intervals at twice
the precision (D_alpha above the claim evaluated there) before the claim is refuted.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import sympy

from ...dsl.params import Point
from ...engine.program.backend import IntervalBackend
from ...engine.decide.decimals import decimal
from ...engine.decide.positivity import find_point
from ...engine.program.reading import distribution
from ...engine.loss.renyi import PairDivergence, Unsupported, parts
from ...engine.program.symbolic import Laws, NotRational, basis, rational_function
from ...engine.program.work import params
from ...results import Status, Witness

MAX_ORDER = 64
"""The largest integer order proved (the polynomials' degrees grow with it)."""


def discrete(program: Any, point: Point, table: Any, laws: Laws, datasets: list, left: Any, right: Any,
             symbols: list, alpha: sympy.Expr, claimed: sympy.Expr) -> tuple[Status, str, Optional[Witness]]:
    """(PROVED, REFUTED or UNKNOWN, the message, the witness of a refutation) for D_alpha <= claimed over every
    ordered neighbouring pair of ``laws``, for every value of the one symbol in ``symbols``."""
    names = ", ".join(s.name for s in symbols)
    if len(symbols) != 1:
        return Status.UNKNOWN, f"no proof for all {names}: discrete laws are proved over one parameter", None
    if not (alpha.is_Integer and 2 <= alpha <= MAX_ORDER):
        return (Status.UNKNOWN, f"no proof for all {names}: D_{alpha} of discrete laws is a rational function of "
                                f"e^{names} for integer orders 2..{MAX_ORDER} only", None)
    order = int(alpha)
    bound = sympy.exp((order - 1) * claimed).rewrite(sympy.exp)
    weights = [w for law in laws.laws for w in law.values()]
    try:
        base = basis([*weights, bound], symbols)
        bound_num, bound_den = rational_function(bound, base)
        converted = [{o: rational_function(w, base) for o, w in law.items() if w != 0} for law in laws.laws]
    except NotRational as exc:
        return Status.UNKNOWN, f"no proof for all {names}: {exc}", None
    (w,) = base.variables.values()
    constraints: dict = {}
    dens = {bound_den}
    seen = set()
    for i, j in zip(left.tolist(), right.tolist()):
        for a, b in ((i, j), (j, i)):
            la, lb = laws.law_of[a], laws.law_of[b]
            if la == lb or (la, lb) in seen:
                continue
            seen.add((la, lb))
            total = _sum(converted[la], converted[lb], order, w)
            if total is None:
                return (Status.UNKNOWN, f"no proof for all {names}: an output of X={datasets[a]!r} is impossible under "
                                        f"X'={datasets[b]!r} (D_alpha infinite)", None)
            num, den = total
            dens.add(den)
            h = bound_num * den - num * bound_den
            constraints.setdefault(_normalised(h), (datasets[a], datasets[b]))
    for den in dens:
        if find_point(sympy.Poly(den.as_expr(), w, domain="QQ"), "<=") is not False:
            return (Status.UNKNOWN, f"no proof for all {names}: cannot show the denominator {den.as_expr()} positive "
                                    f"for {base.describe()} > 1", None)
    for h, (x, x_prime) in constraints.items():
        found = find_point(sympy.Poly(h.as_expr(), w, domain="QQ"), "<")
        if found is None:
            return Status.UNKNOWN, f"no proof for all {names}: root isolation failed in {base.describe()}", None
        if found is not False:
            (symbol,) = symbols
            value = base.scale[symbol] * sympy.log(found)
            return _confirm(program, point, table, symbol, value, x, x_prime, order, claimed)
    return (Status.PROVED, f"proved for every {names} > 0 (other parameters fixed): sum_o P(o)^{order} P'(o)^{1 - order} "
                           f"of every ordered neighbouring pair is a rational function of {base.describe()}, at most "
                           f"e^({order - 1} x the claim): {len(constraints)} distinct polynomial constraints have no "
                           "violation for w > 1 (exact real-root isolation)", None)


def _sum(law: dict, law_prime: dict, order: int, w: sympy.Symbol) -> Optional[tuple[sympy.Poly, sympy.Poly]]:
    """sum_o P(o)^order / Q(o)^(order - 1) as (numerator, denominator) polynomials in w; None when an output
    of P is impossible under Q."""
    num, den = sympy.Poly(0, w, domain="QQ"), sympy.Poly(1, w, domain="QQ")
    for output, (pn, pd) in law.items():
        if pn.is_zero:
            continue
        other = law_prime.get(output)
        if other is None or other[0].is_zero:
            return None
        qn, qd = other
        term_num, term_den = pn ** order * qd ** (order - 1), pd ** order * qn ** (order - 1)
        num, den = num * term_den + term_num * den, den * term_den
        common = num.gcd(den)
        num, den = num.exquo(common), den.exquo(common)
    return num, den


def _normalised(h: sympy.Poly) -> sympy.Poly:
    """h divided by its positive content and its largest monomial factor: the same sign for every w > 1."""
    if h.is_zero:
        return h
    _, h = h.terms_gcd()
    content, primitive = h.primitive()
    return primitive if content > 0 else -primitive


def _confirm(program: Any, point: Point, table: Any, symbol: sympy.Symbol, value: sympy.Expr, x: tuple,
             x_prime: tuple, order: int, claimed: sympy.Expr) -> tuple[Status, str, Optional[Witness]]:
    """Recompute both laws at symbol = value in intervals at twice the precision; refuted when D_order is
    certified above the claim there."""
    digits = 2 * table.backend.dps
    backend = IntervalBackend(digits)
    at = {**params(point), symbol.name: value}
    try:
        laws = [parts(distribution(program, data, at, backend, table.windows), backend) for data in (x, x_prime)]
        divergence = PairDivergence(laws[0], laws[1], backend).value(sympy.Integer(order))
    except Unsupported as exc:
        return Status.UNKNOWN, f"a counterexample at {symbol} = {value} could not be recomputed: {exc}", None
    bound = backend.num(claimed.subs(symbol, value))
    shown_at = f"{symbol} = {value} = {decimal(value)}"
    if not (divergence == math.inf or divergence.a > bound.b):
        return Status.UNKNOWN, f"a counterexample found at {shown_at} was not confirmed at {digits} digits", None
    achieved = "inf" if divergence == math.inf else decimal(divergence.a)
    witness = Witness(x, x_prime, f"order alpha = {order} at {shown_at}", achieved, decimal(bound.b),
                      quantity="divergence")
    return (Status.REFUTED, f"fails at {shown_at} (off the grid; found by exact real-root isolation of the claim "
                            f"as a polynomial in w = e^{symbol}, confirmed at {digits} digits): X={x!r}, X'={x_prime!r}, "
                            f"D_{order}(M(X) || M(X')) >= {achieved} > {decimal(bound.b)}", witness)
