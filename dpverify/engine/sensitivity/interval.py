"""Sensitivity over an interval record domain [lo, hi]: the term's range by sympy maximisation.

The record term is applied to a real symbol x, and sympy's ``function_range``
gives its exact image over [lo, hi] (it handles polynomials, ``Abs``,
rational and elementary functions; anything it cannot do is reported as not
derivable, never guessed).  The maximising and minimising records, when sympy
finds them among the end points and stationary points, build the witnesses.

Forms derived (g(x) the term, [m, M] its range):

* total, replace-one: M - m; add/remove: max(|M|, |m|);
* mean, replace-one and add/remove (n >= 2): (M - m)/n;
* max_of/min_of: M - m (add/remove for n >= 2).

Label-only needs records (x, y), so it has no interval form.
"""
from __future__ import annotations

import sys
from fractions import Fraction
from typing import Any, Optional

import sympy
from sympy.calculus.util import function_range

from ...dsl.queries import Extreme, Interval, Linear, Query
from ...dsl.universe import Neighbours
from ..program.backend import exact_sign
from .derivable import N, NotDerivable

X = sympy.Symbol("x", real=True)


def _plain(value: sympy.Expr) -> Any:
    """A record as a spec author writes it: an int or Fraction when rational."""
    if value.is_Integer:
        return int(value)
    if value.is_Rational:
        return Fraction(int(value.p), int(value.q))
    return value


class _Watched(sympy.Symbol):
    """The record as a symbol that notices when spec code compares, hashes or inspects it.

    ``x == 0``, ``x in (0, 1)``, ``table.get(x)``, ``x.is_zero`` or ``x.equals(0)`` on a sympy
    symbol answer structurally (False, a miss, None), so ``5 if x == 0 else x`` would read as
    the term x over the whole interval while the real term is 5 at 0.  Arithmetic (operators,
    sympy functions) is what a symbolic record can follow; calls made by sympy itself are not
    spec code.
    """

    touched: list = []

    def _note(self, other: Any = None, depth: int = 2) -> None:
        caller = sys._getframe(depth).f_globals.get("__name__", "")
        if not (caller.startswith("sympy") or caller == __name__) and other is not self:
            _Watched.touched.append(other)

    def __getattribute__(self, name: str) -> Any:
        if not name.startswith("_"):  # is_zero, equals, subs...: operators do not come this way
            object.__getattribute__(self, "_note")(name, 2)
        return object.__getattribute__(self, name)

    def __eq__(self, other: Any) -> bool:
        self._note(other)
        return sympy.Symbol.__eq__(self, other)

    def __ne__(self, other: Any) -> bool:
        self._note(other)
        return sympy.Symbol.__ne__(self, other)

    def __hash__(self) -> int:
        self._note()
        return sympy.Symbol.__hash__(self)


_ARITHMETIC_BUILTINS = frozenset({"abs", "min", "max", "pow"})


def _inspects(fn: Any, depth: int = 0) -> str:
    """What in ``fn``'s code (and the Python functions it names) could tell the symbolic record from a real
    one without passing through the watched methods -- an identity test (``x is THIRD``) or a builtin
    other than abs/min/max/pow (``isinstance(x, sympy.Symbol)`` never reads a subclass's ``__class__``,
    ``type(x)``, ``repr``...) -- or '' when nothing does."""
    import builtins
    import dis
    import types
    code = getattr(fn, "__code__", None)
    if code is None or depth > 8:
        return ""
    scope = getattr(fn, "__globals__", {})
    todo = [code]
    while todo:
        current = todo.pop()
        for ins in dis.get_instructions(current):
            if ins.opname == "IS_OP":
                return "an identity test (is)"
            if ins.opname == "LOAD_CONST" and isinstance(ins.argval, types.CodeType):
                todo.append(ins.argval)
            if ins.opname == "LOAD_GLOBAL":
                value = scope.get(ins.argval, builtins.__dict__.get(ins.argval))
                if ins.argval not in scope and ins.argval in builtins.__dict__ \
                        and ins.argval not in _ARITHMETIC_BUILTINS:
                    return f"the builtin {ins.argval}"
                if type(value) is types.FunctionType and value is not fn:
                    found = _inspects(value, depth + 1)
                    if found:
                        return found
    return ""


def _term(term: Any, h: Any) -> sympy.Expr:
    if term.indicator:
        raise NotDerivable("an indicator (count) over an interval domain has no derived range")
    probe = _inspects(term.fn)
    if probe:
        raise NotDerivable(f"the record term uses {probe}, which a symbolic record cannot follow over an interval "
                           "(it could tell the symbol from a real record)")
    record = _Watched("x", real=True)
    _Watched.touched.clear()
    try:
        value = term.fn(record) if term.arity == 1 else term.fn(record, h)
    except (TypeError, ValueError, ArithmeticError) as err:  # e.g. `if x > 0:` on a symbol
        raise NotDerivable(f"the record term cannot be read on a symbolic record over an interval "
                           f"({type(err).__name__}: {err})") from None
    finally:
        touched, _Watched.touched = list(_Watched.touched), []
    if touched:
        raise NotDerivable("the record term compares, hashes or inspects the record (==, !=, in, a dict or "
                           "set lookup, is_zero, equals...), which a symbolic record cannot follow over an interval")
    if isinstance(value, (bool, sympy.logic.boolalg.Boolean)) and not isinstance(value, sympy.Expr):
        raise NotDerivable(f"the record term gives the condition {value}, not a number, over an interval")
    try:
        value = sympy.sympify(value, strict=True)
    except (sympy.SympifyError, TypeError):
        raise NotDerivable(f"the record term gives {value!r}, not a sympy expression") from None
    if not isinstance(value, sympy.Expr):
        raise NotDerivable(f"the record term gives {value!r}, not a real expression")
    value = value.xreplace({record: X})
    if value.free_symbols - {X}:
        raise NotDerivable(f"the record term {value} has symbols other than the record")
    return value.xreplace({f: _exact(f) for f in value.atoms(sympy.Float)})


def _exact(value: sympy.Float) -> sympy.Rational:
    """A float in a record term, accepted only when it is exactly what it looks like (0.5, not 0.1),
    as the same term evaluated on a concrete record accepts it."""
    binary = Fraction(float(value))
    if sympy.Float(float(value)) != value or binary != Fraction(repr(float(value))):
        raise NotDerivable(f"the record term uses the float {value}, which is not exact: use a Fraction")
    return sympy.Rational(binary.numerator, binary.denominator)


def _extremes(f: sympy.Expr, dom: Interval) -> tuple[sympy.Expr, Optional[Any], sympy.Expr, Optional[Any]]:
    """(min, argmin, max, argmax) of f over [lo, hi]; an arg is None when sympy does not locate it."""
    try:
        image = function_range(f, X, sympy.Interval(dom.lo, dom.hi))
    except (NotImplementedError, ValueError, TypeError) as err:
        raise NotDerivable(f"sympy cannot find the range of {f} over {dom.describe()}: {err}") from None
    low, high = image.inf, image.sup
    if not (low.is_finite and high.is_finite):
        raise NotDerivable(f"{f} is unbounded over {dom.describe()}")
    doubt = _range_doubt(f, dom, low, high)
    if doubt:
        raise NotDerivable(f"sympy's range [{low}, {high}] of {f} over {dom.describe()} is not confirmed: {doubt}")
    points = [dom.lo, dom.hi]
    try:
        stationary = sympy.solveset(sympy.diff(f, X), X, sympy.Interval(dom.lo, dom.hi))
        if isinstance(stationary, sympy.FiniteSet):
            points += list(stationary)
    except (NotImplementedError, ValueError, TypeError):
        pass

    def where(target: sympy.Expr) -> Optional[Any]:
        for p in points:
            if exact_sign(f.subs(X, p) - target) == 0:
                return _plain(p)
        return None
    return low, where(low), high, where(high)


def _range_doubt(f: sympy.Expr, dom: Interval, low: sympy.Expr, high: sympy.Expr) -> str:
    """Why z3 does not confirm that f is defined on all of [lo, hi] with values in [low, high]
    ('' when it does): the derivation rests on that range, so it is checked by a second method."""
    import z3  # here, not at import: z3 only on the paths that use it

    from ..decide.smt import Translator, Unsupported, check
    from .search import RLIMIT
    tr = Translator([X])
    try:
        value, bottom, top = tr.term(f), tr.term(low), tr.term(high)
        inside = tr.formula(sympy.And(X >= dom.lo, X <= dom.hi))
    except (Unsupported, TypeError, ValueError) as err:
        return f"z3 cannot express it ({err})"
    enc = tr.encoding()
    if not enc.proves:
        return "z3's reading is a bounded search"
    undefined, outside = z3.Solver(), z3.Solver()
    undefined.add(*enc.facts, inside, z3.Not(z3.And(*enc.domain)) if enc.domain else z3.BoolVal(False))
    outside.add(*enc.facts, *enc.domain, inside, z3.Or(value < bottom, value > top))
    for solver, what in ((undefined, "defined everywhere on the interval"), (outside, "within the range")):
        if check(solver, RLIMIT).answer != z3.unsat:
            return f"z3 does not show the term {what}"
    return ""


def ranges(found: list) -> str:
    """The distinct term ranges found, e.g. '[0, 1]' (at most three shown)."""
    distinct = list(dict.fromkeys(f"[{lo}, {hi}]" for lo, hi in found))
    return ", ".join(distinct[:3]) + (f" (and {len(distinct) - 3} more)" if len(distinct) > 3 else "")


def _pair(top: Any, bottom: Any, fill: Any, h: Any, same_size: bool) -> Any:
    if top is None or fill is None or (same_size and bottom is None):
        return None
    if same_size:
        return lambda k: ((top,) + (fill,) * (k - 1), (bottom,) + (fill,) * (k - 1), h)
    return lambda k: ((top,) + (fill,) * (k - 1), (fill,) * (k - 1), h)


def interval_terms(query: Query, dom: Interval, candidates: tuple,
                   relation: Neighbours) -> tuple[list, int, str]:
    """The (expression, witness recipe) terms whose maximum is Delta(n), with n_min and a summary."""
    if relation is Neighbours.LABEL_ONLY:
        raise NotDerivable("label-only neighbours need labelled records, not an interval domain")
    same = relation is not Neighbours.ADD_REMOVE
    terms: dict = {}
    ranged: list = []
    if isinstance(query, Extreme):
        scale = abs(sympy.sympify(query.coef))
        for h in candidates:
            lo, at_lo, hi, at_hi = _extremes(_term(query.term, h), dom)  # type: ignore[union-attr]
            ranged.append((lo, hi))
            top, bottom = (at_hi, at_lo) if query.largest else (at_lo, at_hi)
            recipe = (lambda k, t=top, b=bottom, h=h: ((t,) + (b,) * (k - 1), (b,) * k, h)) if same else \
                _pair(top, bottom, bottom, h, False)
            terms.setdefault(scale * (hi - lo), recipe if top is not None and bottom is not None else None)
        return list(terms.items()), 1 if same else 2, f"max/min of a term with range {ranges(ranged)} by sympy"
    if not isinstance(query, Linear):
        raise NotDerivable(f"{query.describe()} over an interval: only counts, totals, means, max/min")
    mean_only = all(m for _, m, _ in query.parts)
    if not mean_only and any(m for _, m, _ in query.parts):
        raise NotDerivable("a sum of totals and means over an interval domain is not derived")
    ranged: list = []
    for h in candidates:
        g = sympy.simplify(sum((sympy.sympify(c) * _term(t, h) for c, _, t in query.folded()), sympy.Integer(0)))
        lo, at_lo, hi, at_hi = _extremes(g, dom)
        ranged.append((lo, hi))
        if mean_only:
            terms.setdefault((hi - lo) / N, _pair(at_hi, at_lo, at_lo, h, same))
        elif same:
            terms.setdefault(hi - lo, _pair(at_hi, at_lo, _plain(dom.lo), h, True))
        else:
            for value, at in ((hi, at_hi), (lo, at_lo)):
                terms.setdefault(sympy.Abs(value), _pair(at, None, _plain(dom.lo), h, False) if at is not None
                                 else None)
    n_min = 2 if mean_only and not same else 1
    kind = "mean: (hi - lo)/n" if mean_only else ("total: hi - lo" if same else "total: max(|hi|, |lo|)")
    return list(terms.items()), n_min, f"term range [lo, hi] = {ranges(ranged)} by sympy; {kind}"


__all__ = ["interval_terms"]
