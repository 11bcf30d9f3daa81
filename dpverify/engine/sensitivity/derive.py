"""Global sensitivity derived as a sympy expression in the dataset size n.

The sensitivity of q under a neighbour relation is Delta(n) = max |q(X) - q(X')|
over neighbouring X, X' (for add/remove: X of size n, X' = X minus a record, so
n >= 2 when q has a mean or a max).  For the forms of :mod:`dpverify.dsl.queries`
it follows from the values of the record terms over the record domain.  With
g(x) = a(x) + b(x)/n the per-record contribution of a linear query
q = sum_i a(x_i) + (1/n) sum_i b(x_i) + c, and m' the mean of b over the other
n - 1 records:

* linear, replace-one: one record x -> x' changes q by g(x') - g(x), so
  Delta = max g - min g; label-only: the same with x, x' sharing their features;
* linear, add/remove: q(X) - q(X - v) = a(v) + (b(v) - m')/n, extreme at
  m' in {min b, max b} (all other records equal);
* |linear|: with S the sum of g over the other records, | |c + g(x) + S| - |c + g(x') + S| |
  is monotone in S, so its maximum is at S = (n - 1) min g or (n - 1) max g;
* max_of/min_of: the range of t (any relation; the other records at the
  opposite extreme), per feature group for label-only.

Every bound is attained by a dataset built from the maximising records, which
:meth:`Derivation.witness` returns, so the derived value is exact, not an upper
bound.  Finite domains are evaluated record by record; an interval domain uses
sympy's ``function_range``.  The raw maximum over finitely many expressions is
brought into exact piecewise form by :mod:`.eventually`.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

import sympy

from ...dsl.queries import Abs as AbsQuery, Extreme, Finite, Interval, Linear, Query
from ...dsl.universe import Neighbours
from .derivable import N, NotDerivable
from ..decide.eventually import Undecided, piecewise, supremum, value_at
from .interval import interval_terms

Recipe = Callable[[int], tuple[tuple, tuple, Any]]
"""Size k -> (X, X', candidate) attaining one term of the maximum."""


@dataclass(frozen=True, eq=False)
class Derivation:
    """Delta(n) of one query, for every integer n >= ``n_min``, with the steps that give it."""

    relation: Neighbours
    raw: sympy.Expr
    expr: sympy.Expr
    n_min: int
    steps: tuple[tuple[str, sympy.Expr], ...]
    terms: tuple[tuple[sympy.Expr, Optional[Recipe]], ...]

    def value(self, k: int) -> sympy.Expr:
        """Delta(k), exactly."""
        return value_at(self.expr, N, k)

    def witness(self, k: int) -> Optional[tuple[tuple, tuple, Any, sympy.Expr]]:
        """(X, X', candidate, |q(X) - q(X')| as derived) attaining Delta(k), or None."""
        if not self.terms:
            return None
        values = [value_at(t, N, k) for t, _ in self.terms]
        best = max(range(len(values)), key=lambda i: values[i])
        recipe = self.terms[best][1]
        return None if recipe is None else (*recipe(k), values[best])


def _s(value: Any) -> sympy.Expr:
    return sympy.sympify(value)


def _profile(query: Linear, records: tuple, h: Any) -> list[tuple[Any, sympy.Expr, sympy.Expr]]:
    """(record, a, b) for every record: the total and the mean contributions of one record."""
    out = []
    for r in records:
        a = sum((_s(c) * _s(t(r, h)) for c, m, t in query.folded() if not m), sympy.Integer(0))
        b = sum((_s(c) * _s(t(r, h)) for c, m, t in query.folded() if m), sympy.Integer(0))
        out.append((r, a, b))
    return out


def _groups(profile: list, relation: Neighbours) -> list[list]:
    """Records one neighbour step can exchange: all of them, or those sharing x (label-only)."""
    if relation is not Neighbours.LABEL_ONLY:
        return [profile]
    by_x: dict = {}
    for item in profile:
        by_x.setdefault(item[0][0], []).append(item)
    return [g for g in by_x.values() if len(g) > 1]


def _arg(profile: list, key: Callable[[Any], Any], k: int, largest: bool) -> Any:
    values = [value_at(key(item), N, k) for item in profile]
    pick = max if largest else min
    return profile[values.index(pick(values))][0]


def _linear(query: Linear, records: tuple, candidates: tuple, relation: Neighbours) -> tuple[list, int, str]:
    terms: dict = {}
    has_mean = any(m for _, m, _ in query.parts)
    for h in candidates:
        prof = _profile(query, records, h)
        g = lambda item: item[1] + item[2] / N  # noqa: E731
        if relation is Neighbours.ADD_REMOVE:
            bs = [item[2] for item in prof]
            for m_val, largest in ((min(bs), False), (max(bs), True)):
                fill = prof[bs.index(m_val)][0]
                for r, a, b in prof:
                    expr = sympy.Abs(a + (b - m_val) / N)
                    terms.setdefault(expr, lambda k, r=r, f=fill, h=h: ((r,) + (f,) * (k - 1), (f,) * (k - 1), h))
            continue
        for group in _groups(prof, relation):
            hi, lo = sympy.Max(*[g(i) for i in group]), sympy.Min(*[g(i) for i in group])
            rest = prof[0][0]
            terms.setdefault(hi - lo, lambda k, grp=group, h=h, f=rest: (
                (_arg(grp, g, k, True),) + (f,) * (k - 1), (_arg(grp, g, k, False),) + (f,) * (k - 1), h))
    n_min = 2 if relation is Neighbours.ADD_REMOVE and has_mean else 1
    how = {Neighbours.ADD_REMOVE: "|a(v) + (b(v) - m')/n| at m' = min b, max b",
           Neighbours.LABEL_ONLY: "max g - min g over records sharing x",
           Neighbours.REPLACE_ONE: "max g - min g over the records"}[relation]
    return list(terms.items()), n_min, f"linear q = sum a(x_i) + (1/n) sum b(x_i) + c, g = a + b/n: {how}"


def _abs(query: AbsQuery, records: tuple, candidates: tuple, relation: Neighbours) -> tuple[list, int, str]:
    inner = query.inner
    if not isinstance(inner, Linear):
        raise NotDerivable(f"|q| is derived for linear q only, not for {inner.describe()}")
    c = _s(inner.const)
    scale = abs(_s(query.coef))
    terms: dict = {}
    for h in candidates:
        prof = _profile(inner, records, h)
        if relation is Neighbours.ADD_REMOVE:
            if any(b != 0 for _, _, b in prof):
                raise NotDerivable("|q| under add/remove is derived only when q has no mean part")
            pairs = [(item, None) for item in prof]
        else:
            pairs = [(x, y) for grp in _groups(prof, relation) for i, x in enumerate(grp) for y in grp[i + 1:]]
        gs = [a + b / N for _, a, b in prof]
        for spread, largest in ((sympy.Min(*gs), False), (sympy.Max(*gs), True)):
            for x, y in pairs:
                gx = x[1] + x[2] / N
                gy = 0 if y is None else y[1] + y[2] / N
                other = c + (N - 1) * spread
                expr = scale * sympy.Abs(sympy.Abs(gx + other) - sympy.Abs(gy + other))
                if expr == 0:
                    continue

                def recipe(k: int, x=x, y=y, h=h, largest=largest, prof=prof) -> tuple:
                    fill = _arg(prof, lambda i: i[1] + i[2] / N, k, largest)
                    rest = (fill,) * (k - 1)
                    return (x[0],) + rest, ((y[0],) + rest if y is not None else rest), h
                terms.setdefault(expr, recipe)
    has_mean = any(m for _, m, _ in inner.parts)
    n_min = 2 if relation is Neighbours.ADD_REMOVE and has_mean else 1
    return list(terms.items()), n_min, ("|linear|: | |c + g(x) + S| - |c + g(x') + S| | is monotone in the sum S "
                                    "of the others, so S = (n-1) min g or (n-1) max g")


def _extreme(query: Extreme, records: tuple, candidates: tuple, relation: Neighbours) -> tuple[list, int, str]:
    scale = abs(_s(query.coef))
    terms: dict = {}
    for h in candidates:
        values = [(r, _s(query.term(r, h))) for r in records]  # type: ignore[misc]
        low = min(values, key=lambda i: i[1]) if query.largest else max(values, key=lambda i: i[1])
        for group in _groups(values, relation):
            top = max(group, key=lambda i: i[1]) if query.largest else min(group, key=lambda i: i[1])
            bottom = min(group, key=lambda i: i[1]) if query.largest else max(group, key=lambda i: i[1])
            expr = scale * abs(top[1] - bottom[1])
            if relation is Neighbours.ADD_REMOVE:
                recipe = (lambda k, t=top[0], f=low[0], h=h: ((t,) + (f,) * (k - 1), (f,) * (k - 1), h))
            else:
                recipe = (lambda k, t=top[0], b=bottom[0], f=low[0], h=h:
                          ((t,) + (f,) * (k - 1), (b,) + (f,) * (k - 1), h))
            terms.setdefault(expr, recipe)
    n_min = 2 if relation is Neighbours.ADD_REMOVE else 1
    return list(terms.items()), n_min, "max/min: the range of t, the other records at the opposite extreme"


def _dispatch(query: Query, records: tuple, candidates: tuple, relation: Neighbours) -> tuple[list, int, str]:
    if isinstance(query, Linear):
        return _linear(query, records, candidates, relation)
    if isinstance(query, AbsQuery):
        return _abs(query, records, candidates, relation)
    if isinstance(query, Extreme):
        return _extreme(query, records, candidates, relation)
    raise NotDerivable(f"{query.describe()} is not in decomposable form (a count/total/mean, a max/min, "
                       "or |linear|, each scaled and shifted)")


@functools.lru_cache(maxsize=256)
def derive(query: Query, relation: Neighbours, domain: Any, candidates: tuple = (None,)) -> Derivation:
    """Delta(n) of ``query`` (of u(., y) maximised over ``candidates`` for a score) over ``domain``.

    Raises :class:`NotDerivable` when the form or the domain is outside what is derived exactly.
    """
    if not isinstance(relation, Neighbours):
        raise NotDerivable("a custom neighbour relation has no derivation rule")
    if isinstance(domain, Interval):
        terms, n_min, how = interval_terms(query, domain, candidates, relation)
    elif isinstance(domain, Finite):
        terms, n_min, how = _dispatch(query, domain.records, candidates, relation)
    else:
        raise NotDerivable("the query has no record domain")
    raw = sympy.Max(*[t for t, _ in terms], evaluate=False) if len(terms) > 1 else (
        terms[0][0] if terms else sympy.Integer(0))
    try:
        expr = piecewise(raw, N, n_min)
    except Undecided as err:
        raise NotDerivable(f"cannot bring the maximum into closed form: {err}") from None
    where = domain.describe() + (f", max over {len(candidates)} candidates" if candidates != (None,) else "")
    steps = ((f"over {where}, {how}; Delta(n) = the max of {len(terms)} distinct expression(s)", raw),
             (f"exact for every integer n >= {n_min}", expr))
    return Derivation(relation, raw, expr, n_min, steps, tuple(terms))


@functools.lru_cache(maxsize=1024)
def runtime_sensitivity(query: Query, candidates: tuple, relation: Neighbours, size: int) -> tuple[Any, str]:
    """The Delta a mechanism uses when it omits ``sensitivity=``, and a note saying where it came from.

    Replace-one and label-only compare datasets of one size, so Delta(size)
    is used; under add/remove a dataset of size k meets sizes k - 1 and k + 1,
    and the exponential mechanism's proof needs one Delta for both, so the
    supremum of Delta(n) over all n is used.
    """
    if query.domain is None:
        raise NotDerivable("the score has no record domain: declare domain= on it")
    d = derive(query, relation, query.domain, candidates)
    try:
        value = supremum(d.expr, N, d.n_min) if relation is Neighbours.ADD_REMOVE else d.value(size)
    except Undecided as err:
        raise NotDerivable(str(err)) from None
    where = f"sup over n >= {d.n_min}" if relation is Neighbours.ADD_REMOVE else f"at n = {size}"
    return value, f"Delta(n) = {d.expr} derived ({relation.value}), {value} {where}"


__all__ = ["Derivation", "N", "NotDerivable", "derive", "runtime_sensitivity"]
