"""Parameters: sympy symbols with assumptions, and the grid of values to check.

A spec states its parameters once, as sympy symbols (``eps = dp.symbol("eps",
positive=True)``), and the values to check as a grid: either a mapping from
symbol to values (checked on the cartesian product) or an explicit list of
points (for parameters that depend on each other).  Grid values are exact sympy
numbers.  Floats are refused wherever a spec declares a number (grid values,
claimed bounds, intervals), even the ones that are exactly binary (0.5): a float
literal is neither the decimal its author wrote (``0.1`` is
3602879701896397/2^55) nor, after arithmetic (``1/3``), the fraction meant, and
which of them was meant decides verdicts near a bound.  The refusal names the
exact value to write, ``Fraction(1, 10)``.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any, Union

import sympy
from sympy.core.assumptions import _assume_defined

from ..errors import SpecError, call_help, close_names

Point = tuple[tuple[sympy.Symbol, sympy.Expr], ...]
"""One parameter point: (symbol, exact value) pairs sorted by symbol name."""

GridLike = Union[Mapping[sympy.Symbol, Iterable[Any]], Iterable[Mapping[sympy.Symbol, Any]]]

ASSUMPTIONS = frozenset(_assume_defined)
"""The assumptions sympy knows (positive, integer, nonnegative...)."""


@call_help('dp.symbol("eps", positive=True)')
def symbol(name: str, **assumptions: bool) -> sympy.Symbol:
    """A real parameter symbol, e.g. ``symbol("eps", positive=True)``.

    Assumptions are sympy's (``positive``, ``integer``, ``nonnegative``...);
    ``real=True`` is implied.  Grid values are checked against them.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise SpecError(f"parameter name {name!r} is not a Python identifier",
                        "name parameters like the mechanism's keyword arguments, e.g. 'eps'")
    for key, value in assumptions.items():  # sympy keeps a misspelt one (positve=True) and ignores it
        if key not in ASSUMPTIONS:
            close = close_names(key, ASSUMPTIONS)
            raise SpecError(f"symbol({name!r}): {key}= is not an assumption"
                            + (f" (did you mean {close[0]}=?)" if close else ""),
                            f"write {close[0] if close else 'positive'}=True (the usual ones: positive, "
                            "nonnegative, negative, nonzero, integer, rational; any of sympy's assumptions works)")
        if value is not None and not isinstance(value, bool):
            raise SpecError(f"symbol({name!r}): {key}={value!r} is not True or False", f"write {key}=True")
    assumptions.setdefault("real", True)
    return sympy.Symbol(name, **assumptions)


class FloatRefused(SpecError):
    """A float where a spec declares a number; ``value`` is the float (the loader finds it in
    the spec's source to point at its line)."""

    def __init__(self, problem: str, fix: str, value: float) -> None:
        super().__init__(problem, fix)
        self.value = value


def meant(value: float) -> Fraction:
    """The exact number a float most likely stands for: the simplest fraction (denominator at
    most 10^6) that rounds to it -- 1/3 for 1/3, 1/10 for 0.1 -- else the decimal it prints
    (1e-10 is 1/10^10)."""
    simple = Fraction(value).limit_denominator(10**6)
    return simple if simple and float(simple) == value else Fraction(repr(value))


def fraction_text(q: Fraction, rational: bool = False) -> str:
    """How to write ``q`` exactly in a spec: ``2``, ``Fraction(1, 3)`` (``sympy.Rational(1, 3)``)."""
    if q.denominator == 1:
        return str(q.numerator)
    return f"{'sympy.Rational' if rational else 'Fraction'}({q.numerator}, {q.denominator})"


def refuse_float(value: float, what: str, within: Any = None, example: str | None = None,
                 binary: Fraction | None = None) -> FloatRefused:
    """The error for the float ``value`` in ``what`` (found ``within`` an expression): the exact
    value to write, and why the float is not it (its exact ``binary`` value, by default the
    double's), or, for a float that is exactly binary (0.5), that dpverify reads no floats.
    ``example`` shows the fix in context (``eps/10``)."""
    if math.isnan(value) or math.isinf(value):
        return FloatRefused(f"{what}={value!r} is not a finite number",
                            "use a finite number, e.g. 1 or Fraction(1, 2)", value)
    target = meant(value)
    binary = Fraction(value) if binary is None else binary
    why = (f", whose exact binary value {binary} is not {target}" if binary != target
           else " (dpverify reads exact numbers, never floats)")
    fix = f"write {fraction_text(target)}"
    if target.denominator != 1:
        fix += f" (or {fraction_text(target, rational=True)})"
    subject = f"{what}={value!r} is a float" if within is None else f"{what}={within} holds the float {value!r}"
    return FloatRefused(f"{subject}{why}", fix + (f", e.g. {example}" if example else ""), value)


def refuse_floats(expr: Any, what: str) -> Any:
    """``expr`` unchanged when it holds no sympy Float; a :class:`FloatRefused` otherwise (``0.1*eps``
    holds the binary 0.1000000000000000055..., and even ``1.0*eps`` is refused: no floats)."""
    floats = expr.atoms(sympy.Float) if isinstance(expr, sympy.Basic) else set()
    if not floats:
        return expr
    first = min(floats, key=float)
    exact_expr = expr.xreplace({f: sympy.Rational(meant(float(f))) for f in floats})
    binary = Fraction(int(sympy.Rational(first).p), int(sympy.Rational(first).q))  # a sympy Float may hold more bits
    if expr == first:
        raise refuse_float(float(first), what, binary=binary)
    raise refuse_float(float(first), what, within=expr, example=str(exact_expr), binary=binary)


def exact(value: Any, what: str) -> sympy.Expr:
    """Turn a number a spec author wrote into an exact, finite, real sympy number (floats refused)."""
    if isinstance(value, bool):
        raise SpecError(f"{what}={value!r} is a bool, not a number", "use an int, Fraction or sympy number")
    if isinstance(value, float):
        raise refuse_float(value, what)
    if isinstance(value, Fraction):
        value = sympy.Rational(value.numerator, value.denominator)
    try:
        expr = sympy.sympify(value, strict=True)
    except (sympy.SympifyError, TypeError) as exc:
        raise SpecError(f"{what}={value!r} is not a number ({exc.__class__.__name__})",
                        "use an int, a Fraction or a sympy expression") from None
    if expr.has(sympy.nan) or expr.free_symbols or expr.is_real is not True or expr.is_finite is False:
        raise SpecError(f"{what}={value!r} is not a finite real number",
                        "use a finite real value such as 1, Fraction(1, 2) or sympy.log(3)")
    return refuse_floats(expr, what)


def _check_assumptions(sym: sympy.Symbol, value: sympy.Expr) -> None:
    for name, test in (("positive", lambda v: v > 0), ("nonnegative", lambda v: v >= 0),
                       ("negative", lambda v: v < 0), ("integer", lambda v: v.is_integer)):
        if sym.assumptions0.get(name) and not bool(test(value)):
            raise SpecError(f"{sym}={value} must be {name}",
                            f"use a {name} value in the grid for {sym}, or change the assumption "
                            f"in symbol({str(sym)!r}, ...)")


def grid(spec_grid: GridLike | None) -> tuple[Point, ...]:
    """Normalise a grid (mapping of value lists, or list of points) to exact points."""
    if spec_grid is None:
        return ((),)
    if isinstance(spec_grid, Mapping):
        symbols = list(spec_grid)
        columns = []
        for sym in symbols:
            values = spec_grid[sym]
            if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
                values = [values]
            values = list(values)
            if not values:
                raise SpecError(f"the grid for {sym} is empty", f"give at least one value for {sym}")
            columns.append(values)
        raw_points = [dict(zip(symbols, combo)) for combo in itertools.product(*columns)]
    else:
        raw_points = list(spec_grid)
        if not raw_points:
            raise SpecError("the grid has no points", "give at least one parameter point")
    points = []
    for raw in raw_points:
        if not isinstance(raw, Mapping):
            raise SpecError(f"grid point {raw!r} is not a mapping",
                            "write points as {eps: 1, ...} or the grid as {eps: [1, 2]}")
        point = []
        for sym, value in raw.items():
            if not isinstance(sym, sympy.Symbol):
                raise SpecError(f"grid key {sym!r} is not a sympy Symbol",
                                "create parameters with dp.symbol('eps', positive=True)")
            value = exact(value, str(sym))
            _check_assumptions(sym, value)
            point.append((sym, value))
        points.append(tuple(sorted(point, key=lambda item: item[0].name)))
    return tuple(points)


def point_label(point: Point) -> dict[str, str]:
    """The JSON form of a point: {"eps": "1/2", ...}."""
    return {sym.name: str(value) for sym, value in point}


RANGES = {"epsilon": ("[0, oo)", lambda v: v >= 0), "gamma": ("[0, oo)", lambda v: v >= 0),
          "delta": ("[0, 1)", lambda v: (v >= 0) & (v < 1)),
          "beta": ("[0, 1)", lambda v: (v >= 0) & (v < 1))}
"""Where a claimed bound must lie at every grid point (a bound written as an expression in the
parameters can leave it: delta = eps - 1 is negative at eps = 1/2)."""


def substitute(expr: Any, point: Point, what: str) -> sympy.Expr:
    """Evaluate a claim expression (in parameter symbols) exactly at a point: a finite real number,
    inside :data:`RANGES` for the bounds that have one (a SpecError naming the point otherwise)."""
    value = refuse_floats(sympy.sympify(expr), what).subs(dict(point))
    if value.free_symbols:
        missing = ", ".join(sorted(s.name for s in value.free_symbols))
        raise SpecError(f"{what} uses {missing}, which the grid does not give a value",
                        f"add {missing} to the spec's grid")
    value = exact(value, what)
    if what in RANGES:
        span, test = RANGES[what]
        inside = _decide(test(value))
        if inside is not True:
            at = ", ".join(f"{s} = {v}" for s, v in point)
            raise SpecError(f"{what} = {expr} is {value} at {at or 'this point'}, "
                            f"{'outside' if inside is False else 'not provably inside'} {span}",
                            f"write {what} so that it lies in {span} at every grid point")
    return value


def _decide(relation: Any) -> Any:
    """True/False for a relation between exact real numbers (None when sympy cannot decide it)."""
    if relation in (sympy.true, True):
        return True
    if relation in (sympy.false, False):
        return False
    if isinstance(relation, sympy.And):
        parts = [_decide(a) for a in relation.args]
        return False if False in parts else (None if None in parts else True)
    try:
        return bool(relation)
    except TypeError:
        return None
