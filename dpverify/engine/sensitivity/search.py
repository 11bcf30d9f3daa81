"""Sensitivity measured, for queries whose sensitivity is not derived.

Exact methods over a finite record domain, and one over an interval:

* :func:`enumerate_max` -- every neighbouring pair of a finite universe: the
  exact max |q(X) - q(X')| at each dataset size, with a pair attaining it;
* :func:`z3_search` -- datasets of one size n as symbolic data: n record
  indices (bounded integer variables), the neighbour relation as constraints
  (X' replaces, relabels or drops the first record; the others are sorted,
  which loses nothing as every encoded query is symmetric), the query as exact
  linear real arithmetic.  ``unsat`` proves that no pair of size n changes q
  by more than the bound; ``sat`` gives a pair, which the caller recomputes.
  A resource limit (not a clock) keeps the answer deterministic;
* :func:`z3_interval_search` -- the same question over an interval record
  domain, the records as real variables and the query as a sympy expression
  translated by :mod:`.smt`: it confirms that a derived sensitivity is not
  exceeded at one size (``unsat``), independently of the derivation.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy
import z3

from ...dsl.queries import Abs, Extreme, Linear, Opaque, Query, Sum
from ...dsl.universe import Neighbours, Universe
from ..datasets.datasets import enumerate_datasets, estimate, neighbour_pairs
from ..decide.smt import Translator, Unsupported, check, rational

MAX_EVALUATIONS = 300_000
"""Refuse an enumeration needing more query evaluations (datasets x candidates) than this."""
RLIMIT = 12_000_000
"""z3's deterministic resource limit per satisfiability check: over twice what a max plus a mean over
symbolic datasets of 8 records needs (5.2M; the catalogue's use at most a few hundred), and binding
long before the CPU-time safety net (that test's queries at 5.2M each take well under a second of CPU)."""


class TooLarge(ValueError):
    """An enumeration over MAX_EVALUATIONS (not an error of the query: it is left to z3)."""


@dataclass(frozen=True)
class Found:
    """The largest change of q between neighbours found at one size, and a pair attaining it."""

    size: int
    value: Any
    x: tuple
    x_prime: tuple
    candidate: Any


def enumerate_max(query: Query, universe: Universe, candidates: tuple) -> dict[int, Found]:
    """Exact max |q(X) - q(X')| over the neighbouring pairs of ``universe``, keyed by the larger size.

    Raises :class:`TooLarge` (with the estimated size) when the enumeration is too large.
    """
    size = estimate(universe)
    if size.datasets * len(candidates) > MAX_EVALUATIONS:
        raise TooLarge(f"{size.datasets:,} datasets x {len(candidates)} candidates")
    datasets = enumerate_datasets(universe)
    values = [[query.value(d, h) for h in candidates] for d in datasets]
    left, right = neighbour_pairs(universe, datasets)
    best: dict[int, Found] = {}
    for i, j in zip(left.tolist(), right.tolist()):
        k = max(len(datasets[i]), len(datasets[j]))
        for c, h in enumerate(candidates):
            change = abs(values[i][c] - values[j][c])
            if k not in best or change > best[k].value:
                big, small = (datasets[i], datasets[j]) if len(datasets[i]) >= len(datasets[j]) else \
                    (datasets[j], datasets[i])
                best[k] = Found(k, change, big, small, h)
    return best


class NotEncodable(Exception):
    """The query has a part z3 cannot express exactly (the reason is the message)."""


def _real(value: Any) -> z3.ArithRef:
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, (int, Fraction)):
        return z3.RealVal(str(Fraction(value)))
    if getattr(value, "is_Rational", False):
        return z3.RealVal(str(value))
    raise NotEncodable(f"the term value {value!r} is not rational")


def _table(term: Any, records: tuple, h: Any, index: z3.ArithRef) -> z3.ArithRef:
    values = [_real(term(r, h)) for r in records]
    out = values[-1]
    for i in range(len(records) - 2, -1, -1):
        out = z3.If(index == i, values[i], out)
    return out


def encode(query: Query, records: tuple, h: Any, data: list) -> z3.ArithRef:
    """q(X) as a z3 real term, X given as record indices ``data``."""
    if isinstance(query, Linear):
        raw: z3.ArithRef = z3.RealVal(0)
        for c, is_mean, term in query.parts:
            part = z3.Sum([_table(term, records, h, x) for x in data]) if data else z3.RealVal(0)
            if is_mean:
                if not data:
                    raise NotEncodable("the mean of an empty dataset")
                part = part / z3.RealVal(len(data))
            raw = raw + _real(c) * part
    elif isinstance(query, Extreme):
        if not data:
            raise NotEncodable("the max/min of an empty dataset")
        values = [_table(query.term, records, h, x) for x in data]
        raw = values[0]
        for v in values[1:]:
            raw = z3.If(v > raw, v, raw) if query.largest else z3.If(v < raw, v, raw)
    elif isinstance(query, Abs):
        inner = encode(query.inner, records, h, data)  # type: ignore[arg-type]
        raw = z3.If(inner >= 0, inner, -inner)
    elif isinstance(query, Sum):
        raw = z3.Sum([encode(q, records, h, data) for q in query.items])
    elif isinstance(query, Opaque):
        raise NotEncodable("a dp.query(fn) is a plain Python function, which z3 cannot read")
    else:
        raise NotEncodable(f"no encoding for {type(query).__name__}")
    return _real(query.coef) * raw + _real(query.const)


def z3_search(query: Query, records: tuple, relation: Neighbours, size: int, candidates: tuple,
              bound: Any, strict: bool = True) -> tuple[str, Any]:
    """Is there a pair of size ``size`` with |q(X) - q(X')| > bound (>= bound if not strict)?

    Returns ("sat", (X, X', candidate)), ("unsat", None) or ("unknown", reason).
    """
    limit = _real(bound)
    unknown = None
    for h in candidates:
        solver = z3.Solver()
        xs = [z3.Int(f"x{i}") for i in range(size)]
        for x in xs:
            solver.add(x >= 0, x < len(records))
        for a, b in zip(xs[1:], xs[2:]):
            solver.add(a <= b)
        if relation is Neighbours.ADD_REMOVE:
            other = xs[1:]
        else:
            y = z3.Int("y")
            allowed = [(i, j) for i, r in enumerate(records) for j, s in enumerate(records) if i != j and
                       (relation is not Neighbours.LABEL_ONLY or r[0] == s[0])]
            if not allowed:
                continue
            solver.add(z3.Or([z3.And(xs[0] == i, y == j) for i, j in allowed]))
            other = [y] + xs[1:]
        diff = encode(query, records, h, xs) - encode(query, records, h, other)
        solver.add(z3.Or(diff > limit, -diff > limit) if strict else z3.Or(diff >= limit, -diff >= limit))
        outcome = check(solver, RLIMIT)
        if outcome.answer == z3.sat:
            model = outcome.model
            pick = [records[model.eval(x, model_completion=True).as_long()] for x in xs]
            if relation is Neighbours.ADD_REMOVE:
                return "sat", (tuple(pick), tuple(pick[1:]), h)
            swapped = records[model.eval(y, model_completion=True).as_long()]
            return "sat", (tuple(pick), (swapped,) + tuple(pick[1:]), h)
        if outcome.answer == z3.unknown:
            unknown = f"z3 gave up at n = {size} ({outcome.reason})"
    return ("unknown", unknown) if unknown else ("unsat", None)


INTERVAL_MAX_N = 8
"""Datasets of real records are encoded up to this size (each record is one z3 variable)."""


def symbolic_value(query: Query, h: Any, data: list) -> sympy.Expr:
    """q(X) as a sympy expression in the real symbols ``data`` (the records of an interval domain)."""
    def term_of(term: Any, x: sympy.Symbol) -> sympy.Expr:
        value = term.fn(x) if term.arity == 1 else term.fn(x, h)
        if term.indicator:
            if isinstance(value, sympy.Basic) and not isinstance(value, sympy.logic.boolalg.BooleanAtom):
                return sympy.Piecewise((1, value), (0, True))
            return sympy.Integer(1 if value else 0)
        return sympy.sympify(value)
    if isinstance(query, Linear):
        raw = sympy.Integer(0)
        for c, is_mean, term in query.parts:
            part = sympy.Add(*[term_of(term, x) for x in data])
            if is_mean:
                if not data:
                    raise NotEncodable("the mean of an empty dataset")
                part = part / len(data)
            raw += sympy.Rational(c) * part
    elif isinstance(query, Extreme):
        if not data:
            raise NotEncodable("the max/min of an empty dataset")
        values = [term_of(query.term, x) for x in data]
        raw = sympy.Max(*values) if query.largest else sympy.Min(*values)
    elif isinstance(query, Abs):
        raw = sympy.Abs(symbolic_value(query.inner, h, data))  # type: ignore[arg-type]
    elif isinstance(query, Sum):
        raw = sympy.Add(*[symbolic_value(q, h, data) for q in query.items])
    else:
        raise NotEncodable(f"no symbolic form for {type(query).__name__}")
    return sympy.Rational(query.coef) * raw + sympy.sympify(query.const)


def z3_interval_search(query: Query, lo: Any, hi: Any, relation: Neighbours, size: int, candidates: tuple,
                       bound: Any) -> tuple[str, Any]:
    """Is there a pair of size ``size`` of records in [lo, hi] with |q(X) - q(X')| >= bound?

    The records are real variables, the query a sympy expression translated by
    :mod:`.smt` (exactly, or over-approximated: ``unsat`` still shows no such pair).
    Returns ("unsat", None), or ("sat" | "unknown", reason): a model is not re-checked here,
    so "sat" only says that no proof was found.
    """
    if relation not in (Neighbours.REPLACE_ONE, Neighbours.ADD_REMOVE) or not 1 <= size <= INTERVAL_MAX_N:
        return "unknown", f"no interval encoding for {relation} at n = {size}"
    xs = [sympy.Symbol(f"x{i}", real=True) for i in range(size)]
    y = sympy.Symbol("y", real=True)
    other = xs[1:] if relation is Neighbours.ADD_REMOVE else [y] + xs[1:]
    variables = xs + ([] if relation is Neighbours.ADD_REMOVE else [y])
    for h in candidates:
        try:
            diff = symbolic_value(query, h, xs) - symbolic_value(query, h, other)
            tr = Translator(variables)
            term = tr.term(diff)
            inside = [tr.formula(sympy.And(v >= lo, v <= hi)) for v in variables]
        except (NotEncodable, Unsupported, TypeError, ValueError, sympy.SympifyError) as err:
            return "unknown", f"z3 cannot express the query over [{lo}, {hi}]: {err}"
        enc = tr.encoding()
        if not enc.proves:
            return "unknown", "the encoding is a bounded search"
        limit = rational(sympy.Rational(bound)) if sympy.sympify(bound).is_Rational else None
        if limit is None:
            return "unknown", f"the bound {bound} is not rational"
        solver = z3.Solver()
        solver.add(*enc.facts, *enc.domain, *inside, z3.Or(term >= limit, -term >= limit))
        answer = check(solver, RLIMIT).answer
        if answer != z3.unsat:
            return ("sat" if answer == z3.sat else "unknown"), f"z3 answered {answer} at n = {size}"
    return "unsat", None


__all__ = ["Found", "INTERVAL_MAX_N", "TooLarge", "NotEncodable", "encode", "enumerate_max", "symbolic_value", "z3_search",
           "z3_interval_search"]
