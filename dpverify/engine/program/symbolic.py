"""The symbolic reading: output laws as rational functions of w = e^(eps/L).

Run with sympy numbers and the continuous parameters left as symbols, a
mechanism built from the exponential mechanism, randomized response,
geometric noise and finite draws has output probabilities that are rational
functions, with rational coefficients, of the exponentials e^(c*eps) for
rational c.  With L the least common denominator of those c, every such
exponential is a power of w = e^(eps/L), and eps > 0 exactly when w > 1.
This module computes those rational functions; deciding inequalities between
them is the decision reading's job (:mod:`dpverify.checks.privacy.proof`).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Optional

import sympy

from .backend import SympyBackend
from .enumerate import Distribution, Session
from ..continuous.noisy import Density
from .reading import Table, _call
from ...errors import NotRational  # noqa: F401  (raised by readings; re-exported)


@dataclass(frozen=True)
class Laws:
    """Every dataset's symbolic law, identical laws grouped (as in :class:`.reading.Table`)."""

    laws: list[Distribution]
    law_of: list[int]


def symbolic_laws(program: Callable[..., Any], datasets: list[tuple], params: Mapping[str, Any],
                  windows: dict, reference: Optional[tuple[Table, dict]] = None) -> Laws:
    """Each dataset's law with sympy weights; ``params`` may hold Symbols.

    ``reference`` = (the certified table of the same datasets, {symbol: grid value}):
    the symbolic laws must then agree with it at the grid point (see :func:`_agree`).
    """
    session = Session(SympyBackend(), windows)
    index: dict = {}
    laws: list[Distribution] = []
    law_of = []
    for data in datasets:
        law = _call(program, data, params, session)
        key = frozenset((o, w.symbolic_key() if isinstance(w, Density) else w) for o, w in law.items())
        if key not in index:
            index[key] = len(laws)
            laws.append(law)
        law_of.append(index[key])
    result = Laws(laws, law_of)
    if reference is not None:
        _agree(result, datasets, *reference)
    return result


class ReadingsDisagree(NotRational):
    """The symbolic reading, evaluated at the grid point, is not the certified reading's law there."""


def _agree(laws: Laws, datasets: list[tuple], table: Table, at: dict) -> None:
    """Refuse a symbolic reading that took another path than the certified one at the grid point.

    Comparisons, hashing and conversions of a parameter are refused as they
    happen (:mod:`.parameter`); this catches what a proxy cannot see -- a program
    that inspects its parameter's type, say -- whenever it changes the law at
    the grid point: the same outputs, and every symbolic weight at the grid
    point inside the certified interval's reach.
    """
    backend, ctx = table.backend, table.backend.ctx
    values: dict = {}
    compared: set = set()
    for i, data in enumerate(datasets):
        pair = (laws.law_of[i], table.law_of[i])
        if pair in compared:
            continue
        compared.add(pair)
        law, certified = laws.laws[pair[0]], table.laws[pair[1]]
        if any(isinstance(w, Density) for w in law.values()):
            continue
        where = ", ".join(f"{s} = {v}" for s, v in at.items())
        if set(law) != set(certified):
            extra = sorted(set(law) ^ set(certified), key=repr)[:3]
            raise ReadingsDisagree(f"the symbolic reading at {where} gives other outputs than the certified "
                                   f"reading on dataset {data!r} ({', '.join(map(repr, extra))}): the program "
                                   "depends on how its parameters are represented", frozenset(at))
        for o, w in law.items():
            if w not in values:
                values[w] = backend.num(sympy.sympify(w).xreplace(at))
            v, c = values[w], certified[o]
            if not isinstance(c, ctx.mpf) or v.b < c.a or c.b < v.a:
                raise ReadingsDisagree(f"the symbolic reading at {where} gives P(o={o!r}) = {w} on dataset "
                                       f"{data!r}, not the certified reading's value: the program depends on "
                                       "how its parameters are represented", frozenset(at))


def _exponents(expr: sympy.Expr, symbols: Iterable[sympy.Symbol]) -> dict[sympy.Symbol, set]:
    """For each symbol s, the rational coefficients c of every e^(c*s + ...) in expr."""
    found: dict = {s: set() for s in symbols}
    for atom in expr.atoms(sympy.exp):
        arg = sympy.expand(atom.args[0])
        for s in found:
            c = arg.coeff(s)
            if c != 0:
                if not c.is_Rational:
                    raise NotRational(f"e^({arg}) has a non-rational coefficient of {s}")
                found[s].add(c)
    return found


@dataclass(frozen=True)
class WBasis:
    """The substitution e^(c*s) -> w_s^(c*L_s), one variable w_s > 1 per symbol s."""

    scale: dict  # symbol -> L (int)
    variables: dict  # symbol -> sympy Symbol w_s

    def describe(self) -> str:
        return ", ".join(f"{w} = e^({s}/{self.scale[s]})" if self.scale[s] != 1 else f"{w} = e^{s}"
                         for s, w in self.variables.items())


MAX_DEGREE = 2000
"""The largest power of w one exponential may become; above it no proof is attempted.

The catalogue needs at most w^20; a rate such as eps*(1 + 10^-60) would need w^(10^60) and
exhaust memory building the polynomials, so the budget is checked before any is built."""


def basis(exprs: Iterable[sympy.Expr], symbols: list[sympy.Symbol]) -> WBasis:
    """The coarsest basis in which every exponential of ``exprs`` is an integer power."""
    coefficients: dict = {s: set() for s in symbols}
    for expr in exprs:
        for s, cs in _exponents(sympy.expand(expr, power_exp=True, mul=False, multinomial=False,
                                             log=False, basic=False), symbols).items():
            coefficients[s] |= cs
    scale = {s: functools.reduce(sympy.ilcm, [c.q for c in cs], 1) for s, cs in coefficients.items()}
    for s, cs in coefficients.items():
        degree = max((abs(c) * scale[s] for c in cs), default=0)
        if degree > MAX_DEGREE:
            raise NotRational(f"an exponential of {s} is w^{int(degree):.4g} in the coarsest basis of rational "
                              f"exponents, over the proof's budget of degree {MAX_DEGREE}")
    variables = {s: sympy.Symbol(f"w_{s.name}", positive=True) for s in symbols}
    return WBasis(scale, variables)


def _within_degree(denominators: set[int]) -> None:
    """Refuse constants e^(p/q) whose common base e^(1/lcm q) has a degree over the budget.

    sympy's cancel writes e^(1/2) and e^(10^-30) as powers of one generator e^(1/(2*10^30)),
    and builds polynomials of that degree (a claim log(R) + 10^-30 hung the proof for minutes)."""
    lcm = functools.reduce(sympy.ilcm, denominators, 1)
    if lcm > MAX_DEGREE:
        raise NotRational(f"constant exponentials e^(p/q) share the base e^(1/{sympy.Float(lcm, 4)}), over the "
                          f"proof's budget of degree {MAX_DEGREE}")


_RATIONAL_FUNCTIONS: dict = {}
"""rational_function's results by (expr, basis): the same weight recurs in many laws and pairs (2053
calls for 9 distinct expressions in em_label_hamming's same-distribution proof).  Keys are sympy's
structural equality; expressions holding Floats are not kept (a Float may equal a Rational)."""

MAX_KEPT = 50_000


def rational_function(expr: sympy.Expr, base: WBasis) -> tuple[sympy.Poly, sympy.Poly]:
    """expr as numerator and denominator polynomials over QQ in the w variables (a NotRational is raised
    again for the same arguments: refusals are kept as well)."""
    try:
        key = (sympy.sympify(expr), tuple(base.scale.items()), tuple(base.variables.items()))
        if key[0].has(sympy.Float):
            return _rational_function(expr, base)
        found = _RATIONAL_FUNCTIONS.get(key)
    except TypeError:  # not hashable
        return _rational_function(expr, base)
    if found is None:
        try:
            found = ("ok", _rational_function(expr, base))
        except NotRational as exc:
            found = ("refused", exc)
        if len(_RATIONAL_FUNCTIONS) > MAX_KEPT:
            _RATIONAL_FUNCTIONS.clear()
        _RATIONAL_FUNCTIONS[key] = found
    if found[0] == "refused":
        raise NotRational(str(found[1]), found[1].symbols)  # a fresh error: no traceback piles up
    return found[1]


def _rational_function(expr: sympy.Expr, base: WBasis) -> tuple[sympy.Poly, sympy.Poly]:
    expr = sympy.expand(expr, power_exp=True, mul=False, multinomial=False, log=False, basic=False)
    gens = list(base.variables.values())
    replace = {}
    constant_denominators: set[int] = set()
    for atom in expr.atoms(sympy.exp):
        arg = sympy.expand(atom.args[0])
        rest = arg - sum(arg.coeff(s) * s for s in base.variables)
        if rest.free_symbols:
            raise NotRational(f"e^({arg}) depends on {rest.free_symbols} outside the proof's symbols",
                              frozenset(rest.free_symbols & set(base.variables)))
        factor = sympy.exp(rest)
        for s, w in base.variables.items():
            c = arg.coeff(s)
            if c != 0:
                power = c * base.scale[s]
                if not power.is_Integer:
                    raise NotRational(f"e^({arg}) is not an integer power of {w}")
                factor *= w ** int(power)
        replace[atom] = factor
        if rest.is_Rational:
            constant_denominators.add(int(rest.q))
    _within_degree(constant_denominators)
    expr = sympy.cancel(sympy.together(expr.xreplace(replace)))
    if expr.free_symbols - set(gens):
        outside = expr.free_symbols - set(gens)
        raise NotRational(f"{', '.join(sorted(map(str, outside)))} appears outside exponentials",
                          frozenset(outside))
    num, den = sympy.fraction(expr)
    try:
        return sympy.Poly(num, *gens, domain="QQ"), sympy.Poly(den, *gens, domain="QQ")
    except (sympy.PolynomialError, sympy.CoercionFailed) as exc:
        raise NotRational(f"{expr} is not a rational function with rational coefficients ({exc})") from None
