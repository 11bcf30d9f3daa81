"""Queries and scores written per record and aggregated.

A query is at once a plain function of a dataset (``errors(data)`` is an exact
int or Fraction, usable inside a mechanism program) and a structure that
:mod:`dpverify.engine.sensitivity.derive` reads to *derive* its global sensitivity as
a formula in the dataset size n.  The aggregations, for a record term t:

* ``count(p)``  = #{i : p(x_i)},          ``total(t)`` = sum_i t(x_i),
* ``mean(t)``   = (1/n) sum_i t(x_i),     ``max_of(t)``/``min_of(t)`` = max_i/min_i t(x_i),

closed under ``-q``, ``c*q``, ``q/c``, ``q + c``, ``q1 + q2`` and ``abs(q)``.
Sums of counts, totals and means stay in the *linear* form
sum_i a(x_i) + (1/n) sum_i b(x_i) + c; its sensitivity is derived exactly, as
is that of a max/min and of |linear| (each scaled and shifted).  A
``dp.query(fn)`` (any function of the dataset) or a sum mixing a max with a
mean is measured instead (enumeration of the universe, z3 at further sizes).

A term taking ``(record, candidate)`` makes a *score* u(X, y), as the
exponential mechanism needs; ``score(data, y)`` evaluates it and
``score.on(data)`` is u(X, .) to pass to ``dp.exponential``.  ``domain=`` gives
the record domain the sensitivity is taken over: a finite collection of
records, a universe, or ``dp.interval(lo, hi)`` for real-valued records.

>>> from fractions import Fraction
>>> wrong = mean(lambda rec, t: int((rec[0] >= t) != rec[1]))
>>> (-wrong)(((0, 1), (2, 1)), 1)
Fraction(-1, 2)
"""
from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional, Union

import sympy

from ..errors import SpecError
from .exact import exact_float
from .universe import Universe

_MISSING = object()


@dataclass(frozen=True)
class Interval:
    """Real-valued records in the closed interval [lo, hi]; build it with :func:`interval`."""

    lo: sympy.Expr
    hi: sympy.Expr

    def __contains__(self, value: Any) -> bool:
        try:
            return bool(self.lo <= sympy.sympify(value) <= self.hi)
        except (TypeError, sympy.SympifyError):
            return False

    def describe(self) -> str:
        return f"[{self.lo}, {self.hi}]"


@dataclass(frozen=True)
class Finite:
    """A finite record domain (the records in a fixed order)."""

    records: tuple

    def describe(self) -> str:
        return f"{len(self.records)} records"


Domain = Union[Interval, Finite]


def interval(lo: Any, hi: Any) -> Interval:
    """The record domain [lo, hi] of real numbers (lo < hi, exact numbers)."""
    from .params import exact
    low, high = exact(lo, "interval: lo"), exact(hi, "interval: hi")
    if not bool(low < high):
        raise SpecError(f"interval: lo={lo} must be below hi={hi}", "write dp.interval(0, 1)")
    return Interval(low, high)


def _domain(value: Any, fn: str) -> Optional[Domain]:
    if value is None or isinstance(value, (Interval, Finite)):
        return value
    if isinstance(value, Universe):
        return Finite(value.records)
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__") or not hasattr(value, "__len__"):
        raise SpecError(f"{fn}: domain={value!r} is not a record domain",
                        "pass the records as a list, a dp.universe(...), or dp.interval(lo, hi)")
    records = tuple(value)
    if not records or len(set(records)) != len(records):
        raise SpecError(f"{fn}: domain must list at least one record, each once", "e.g. domain=[0, 1, 2]")
    return Finite(records)


def _merge(a: Optional[Domain], b: Optional[Domain]) -> Optional[Domain]:
    if a is not None and b is not None and a != b:
        raise SpecError(f"cannot combine queries over different domains ({a.describe()} and {b.describe()})",
                        "declare the same domain= on both, or on one of them only")
    return a if a is not None else b


def number(value: Any, what: str) -> Any:
    """An exact number from a term or a constant: int, Fraction, or a sympy number."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, Fraction)):
        return value
    if isinstance(value, float):
        return exact_float(value)
    if isinstance(value, sympy.Rational):
        return Fraction(int(value.p), int(value.q))
    if isinstance(value, sympy.Expr) and value.is_number and value.is_real:
        return value
    raise SpecError(f"{what} is {value!r}, not an exact real number",
                    "return an int, a Fraction or a sympy number from record terms")


def _arity(fn: Callable[..., Any], fn_name: str) -> int:
    if not callable(fn):
        raise SpecError(f"{fn_name}: {fn!r} is not callable",
                        "pass a record term, e.g. lambda rec: rec[1] or lambda rec, h: ...")
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    except (TypeError, ValueError):
        return 1
    if len(params) not in (1, 2):
        raise SpecError(f"{fn_name}: the term takes {len(params)} arguments",
                        "a record term takes (record) or, for a score, (record, candidate)")
    return len(params)


@dataclass(frozen=True, eq=False)
class Term:
    """A record term t(x) or t(x, y); an indicator term is 1 where the predicate holds, else 0."""

    fn: Callable[..., Any]
    arity: int
    indicator: bool = False

    def __call__(self, record: Any, candidate: Any = None) -> Any:
        value = self.fn(record) if self.arity == 1 else self.fn(record, candidate)
        if self.indicator:
            if isinstance(value, sympy.Basic) and not isinstance(value, sympy.logic.boolalg.BooleanAtom):
                return sympy.Piecewise((1, value), (0, True))
            return 1 if value else 0
        return number(value, "the record term's value")


@dataclass(frozen=True, eq=False)
class Query:
    """coef * raw(data) + const, for the aggregation ``raw`` of the subclass."""

    domain: Optional[Domain] = dataclasses.field(default=None, kw_only=True)
    coef: Fraction = dataclasses.field(default=Fraction(1), kw_only=True)
    const: Any = dataclasses.field(default=0, kw_only=True)

    @property
    def is_score(self) -> bool:
        """True when the query depends on a candidate y (a score u(X, y))."""
        return any(child.is_score for child in self.children())

    def children(self) -> tuple["Query", ...]:
        return ()

    def raw(self, data: tuple, candidate: Any) -> Any:
        raise NotImplementedError

    def value(self, data: tuple, candidate: Any) -> Any:
        """coef * raw + const on a tuple of records (no argument checks)."""
        value = self.raw(data, candidate)
        return value if self.coef == 1 and self.const == 0 else self.coef * value + self.const

    def __call__(self, data: Iterable[Any], candidate: Any = _MISSING) -> Any:
        if candidate is _MISSING:
            if self.is_score:
                raise SpecError("a score needs a candidate: call score(data, y)",
                                "or pass score.on(data) to dp.exponential")
            candidate = None
        value = self.value(tuple(data), candidate)
        return int(value) if isinstance(value, Fraction) and value.denominator == 1 else value

    def on(self, data: Iterable[Any]) -> "BoundScore":
        """u(X, .) for the dataset X = data: a function of the candidate, for dp.exponential."""
        return BoundScore(self, tuple(data))

    def describe(self) -> str:
        text = self._describe()
        if self.coef != 1:
            text = f"({text})" if " " in text and not text.startswith("|") else text
            text = f"-{text}" if self.coef == -1 else f"{self.coef}*{text}"
        return text if self.const == 0 else f"{text} + {self.const}"

    def _describe(self) -> str:
        return type(self).__name__.lower()

    # ----- composition -------------------------------------------------------------------
    def scaled(self, factor: Any) -> "Query":
        c = _constant(factor, "a query's factor")
        return dataclasses.replace(self, coef=self.coef * c, const=self.const * c)

    def __neg__(self) -> "Query":
        return self.scaled(-1)

    def __mul__(self, other: Any) -> "Query":
        if isinstance(other, Query):
            raise SpecError("the product of two queries is not supported",
                            "scale a query by a constant, or write the product with dp.query(fn)")
        return self.scaled(other)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> "Query":
        c = _constant(other, "a query's divisor")
        if c == 0:
            raise SpecError("a query divided by 0", "divide by a non-zero constant")
        return self.scaled(1 / c)

    def __add__(self, other: Any) -> "Query":
        if not isinstance(other, Query):
            return dataclasses.replace(self, const=self.const + _constant(other, "a constant added"))
        domain = _merge(self.domain, other.domain)
        if isinstance(self, Linear) and isinstance(other, Linear):
            return Linear(self.folded() + other.folded(), domain=domain, const=self.const + other.const)
        return Sum((self, other), domain=domain)

    __radd__ = __add__

    def __sub__(self, other: Any) -> "Query":
        return self + (-other)

    def __rsub__(self, other: Any) -> "Query":
        return (-self) + other

    def __abs__(self) -> "Query":
        return Abs(self, domain=self.domain)


def _constant(value: Any, what: str) -> Fraction:
    c = number(value, what)
    if not isinstance(c, (int, Fraction)):
        raise SpecError(f"{what} is {value!r}, not a rational number", "use an int or a Fraction")
    return Fraction(c)


Part = tuple  # (coefficient: Fraction, is_mean: bool, term: Term)


@dataclass(frozen=True, eq=False)
class Linear(Query):
    """sum over parts of coefficient * (sum_i t(x_i), or (1/n) sum_i t(x_i) for a mean part)."""

    parts: tuple[Part, ...] = ()

    def children(self) -> tuple[Query, ...]:
        return ()

    @property
    def is_score(self) -> bool:
        return any(term.arity == 2 for _, _, term in self.parts)

    def folded(self) -> tuple[Part, ...]:
        """The parts with ``coef`` multiplied in."""
        return tuple((c * self.coef, is_mean, term) for c, is_mean, term in self.parts)

    def raw(self, data: tuple, candidate: Any) -> Any:
        value: Any = 0
        for c, is_mean, term in self.parts:
            part = sum((term(x, candidate) for x in data), 0)
            if is_mean:
                if not data:
                    raise SpecError("the mean of an empty dataset is undefined",
                                    "use datasets of at least one record")
                part = Fraction(part, len(data)) if isinstance(part, int) else part / len(data)
            value += c * part
        return value

    def _describe(self) -> str:
        out = ""
        for c, m, term in self.parts:
            name = "mean" if m else ("count" if term.indicator else "total")
            fn = getattr(term.fn, "__name__", "t")
            text = f"{name}({'t' if fn == '<lambda>' else fn})"
            text = text if abs(c) == 1 else f"{abs(c)}*{text}"
            out += (" - " if c < 0 else " + ") + text if out else ("-" if c < 0 else "") + text
        return out or "0"


@dataclass(frozen=True, eq=False)
class Extreme(Query):
    """max_i t(x_i) (``largest``) or min_i t(x_i)."""

    term: Optional[Term] = None
    largest: bool = True

    @property
    def is_score(self) -> bool:
        return self.term is not None and self.term.arity == 2

    def raw(self, data: tuple, candidate: Any) -> Any:
        if not data:
            raise SpecError("the max/min of an empty dataset is undefined", "use non-empty datasets")
        values = [self.term(x, candidate) for x in data]  # type: ignore[misc]
        return max(values) if self.largest else min(values)

    def _describe(self) -> str:
        fn = getattr(self.term.fn, "__name__", "t")  # type: ignore[union-attr]
        return f"{'max_of' if self.largest else 'min_of'}({'t' if fn == '<lambda>' else fn})"


@dataclass(frozen=True, eq=False)
class Abs(Query):
    """|q(X)| for a query q."""

    inner: Optional[Query] = None

    def children(self) -> tuple[Query, ...]:
        return (self.inner,)  # type: ignore[return-value]

    def raw(self, data: tuple, candidate: Any) -> Any:
        return abs(self.inner.value(data, candidate))  # type: ignore[union-attr]

    def _describe(self) -> str:
        return f"|{self.inner.describe()}|"  # type: ignore[union-attr]


@dataclass(frozen=True, eq=False)
class Sum(Query):
    """q1(X) + q2(X) + ... for queries that do not combine into one linear form."""

    items: tuple[Query, ...] = ()

    def children(self) -> tuple[Query, ...]:
        return self.items

    def raw(self, data: tuple, candidate: Any) -> Any:
        return sum((q.value(data, candidate) for q in self.items), 0)

    def _describe(self) -> str:
        return "(" + " + ".join(q.describe() for q in self.items) + ")"


@dataclass(frozen=True, eq=False)
class Opaque(Query):
    """Any function of the whole dataset (and the candidate): sensitivity by enumeration only."""

    fn: Optional[Callable[..., Any]] = None
    score: bool = False

    @property
    def is_score(self) -> bool:
        return self.score

    def raw(self, data: tuple, candidate: Any) -> Any:
        value = self.fn(data, candidate) if self.score else self.fn(data)  # type: ignore[misc]
        return number(value, "the query's value")

    def _describe(self) -> str:
        return getattr(self.fn, "__name__", "query")


@dataclass(frozen=True, eq=False)
class BoundScore:
    """u(X, .) for one dataset X: what a mechanism passes to ``dp.exponential``."""

    query: Query
    data: tuple

    def __call__(self, candidate: Any) -> Any:
        return self.query(self.data, candidate)


# ----- factories (what spec authors call) ------------------------------------------------

def count(predicate: Callable[..., Any], *, domain: Any = None) -> Query:
    """The count #{i : predicate(x_i)} (or predicate(x_i, y) for a score).  Replace-one sensitivity 1."""
    term = Term(predicate, _arity(predicate, "count"), indicator=True)
    return Linear(((Fraction(1), False, term),), domain=_domain(domain, "count"))


def total(term: Callable[..., Any], *, domain: Any = None) -> Query:
    """sum_i t(x_i).  Replace-one sensitivity max t - min t over the record domain."""
    return Linear(((Fraction(1), False, Term(term, _arity(term, "total"))),), domain=_domain(domain, "total"))


def mean(term: Callable[..., Any], *, domain: Any = None) -> Query:
    """(1/n) sum_i t(x_i).  Replace-one sensitivity (max t - min t)/n."""
    return Linear(((Fraction(1), True, Term(term, _arity(term, "mean"))),), domain=_domain(domain, "mean"))


def max_of(term: Callable[..., Any], *, domain: Any = None) -> Query:
    """max_i t(x_i) over the records of a non-empty dataset."""
    return Extreme(term=Term(term, _arity(term, "max_of")), largest=True, domain=_domain(domain, "max_of"))


def min_of(term: Callable[..., Any], *, domain: Any = None) -> Query:
    """min_i t(x_i) over the records of a non-empty dataset."""
    return Extreme(term=Term(term, _arity(term, "min_of")), largest=False, domain=_domain(domain, "min_of"))


def query(fn: Callable[..., Any], *, domain: Any = None) -> Query:
    """Any function of the dataset, fn(data) (or fn(data, y) for a score): not decomposable, so its
    sensitivity is measured by exact enumeration of the universe."""
    return Opaque(fn=fn, score=_arity(fn, "query") == 2, domain=_domain(domain, "query"))


__all__ = ["BoundScore", "Domain", "Finite", "Interval", "Query", "count", "interval", "max_of", "mean",
           "min_of", "query", "total"]
