"""The values of the structural reading: a generic dataset, the data-derived values, noisy handles.

In the structural reading (:mod:`.reading`) a mechanism runs once on
:class:`GenericData`, which stands for *every* dataset of a symbolic size n
over the record domain.  What the program computes from it is one of:

* :class:`Sym` -- a value that does not depend on the records: a parameter
  (eps, as a sympy symbol), the size n under replace-one (both neighbours have
  it), and arithmetic on them.  It may scale noise; it may not be compared or
  branched on (``eps == 1`` would silently pick one branch for every eps).
* :class:`DataValue` -- a value computed from the records *without* noise:
  sum_i f_i q_i(X) + c for queries q_i whose sensitivity is derived for every n
  (a count, a sum, a mean; ``len(data)`` under add/remove).  It carries the
  queries, not a number: its sensitivity is bounded by sum_i |f_i| Delta_i(n)
  (the triangle inequality; exact for one query).  It may only become the
  centre of noise.
* :class:`Record` -- ``data[i]`` for a constant i: one record, which only
  randomized response (over a values set holding the whole record domain) reads.
* :class:`Handle` -- the output of a noise step, or anything computed from such
  outputs and data-independent values: post-processing, free.  Branching on it
  is refused in this first step (no adaptive composition yet).

Every other use -- iterating the data, indexing with a non-constant,
comparing or branching on a data value, a noise scale that depends on the
data -- calls :func:`refuse`, which raises :class:`NotStructural` *and* marks
the run refused, so that a program catching the exception still gets no proof.
"""
from __future__ import annotations

import sys
import threading
from fractions import Fraction
from typing import Any, Optional

import sympy


class NotStructural(Exception):
    """The program is not in the structural form (the reason is the message): no structural proof."""


_state = threading.local()


def refuse(reason: str) -> Any:
    """Mark the active structural run refused (even if the program swallows the exception) and raise."""
    run = getattr(_state, "run", None)
    if run is not None and run.refused is None:
        run.refused = reason
    raise NotStructural(reason)


def set_run(run: Any) -> Any:
    before = getattr(_state, "run", None)
    _state.run = run
    return before


def exact_constant(value: Any) -> Optional[sympy.Expr]:
    """A plain Python/sympy number as an exact sympy number, or None for anything else -- a float (Python or
    sympy) included: a real run computes with it in rounded binary arithmetic (2.0**53 + 1 == 2.0**53), the
    structural reading would compute exactly, so a float may not enter a scale, a centre, a term's value or
    a value combined with a parameter or n (see :func:`is_float`)."""
    if isinstance(value, bool):
        return sympy.Integer(int(value))
    if isinstance(value, int):
        return sympy.Integer(value)
    if isinstance(value, Fraction):
        return sympy.Rational(value.numerator, value.denominator)
    if isinstance(value, sympy.Expr) and value.is_number and not value.has(sympy.Float):
        return value
    return None


def is_float(value: Any) -> bool:
    """A Python float or a sympy expression holding a sympy Float: refused wherever the structural reading
    would compute with it (post-processing of noisy values and outputs may still hold floats)."""
    return isinstance(value, float) or (isinstance(value, sympy.Basic) and value.has(sympy.Float))


FLOAT_REASON = ("a float (the real program rounds binary floats, e.g. 2.0**53 + 1 == 2.0**53; the structural "
                "reading computes exactly): use ints, fractions.Fraction or sympy.Rational")


def refuse_float(where: str) -> Any:
    return refuse(f"{where} uses {FLOAT_REASON}")


def _from_spec_code(depth: int = 2) -> bool:
    """Whether the frame ``depth`` levels up (past abc's instance checks) is spec code, not dpverify's,
    an installed library's or the standard library's."""
    from ..program.parameter import _ABC, _library
    frame: Any = sys._getframe(depth)
    while frame is not None and (frame.f_code.co_filename in _ABC or frame.f_code is _GUARD):
        frame = frame.f_back  # abc's instance checks, and the attribute guard an isinstance goes through
    return frame is not None and not _library(frame.f_code.co_filename)


class _Refusing:
    """Everything that would let a program branch on or leak the value refuses -- including probes that
    tell this reading's values from a real run's (isinstance, attributes, text), which could otherwise
    take a path for the generic dataset that no real dataset takes."""

    what = "value"

    def _no(self, op: str) -> Any:
        return refuse(f"the program {op} a {self.what}")

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        if _from_spec_code():
            self._no("inspects the type (isinstance) of")
        return type(self)

    _public: frozenset = frozenset()  # attributes spec code may read (data.count)

    def __getattribute__(self, name: str) -> Any:
        if not name.startswith("__") and name not in type(self)._public and _from_spec_code():
            # object.__getattribute__, not self._no: reading _no through this guard from here would find
            # the spec frame again and recurse (hasattr(eps, "expr") ended in RecursionError)
            return object.__getattribute__(self, "_no")(f"reads the attribute {name!r} of")
        return object.__getattribute__(self, name)

    def __getattr__(self, name: str) -> Any:
        if name == "__wrapped__":  # inspect.unwrap's probe (doctest, pydoc): missing, as on a real value
            raise AttributeError(name)
        return self._no(f"reads the attribute {name!r} of")

    def __str__(self) -> str:
        return self._no("turns into text")

    def __format__(self, spec: str) -> str:
        return self._no("formats")

    def __repr__(self) -> str:
        if _from_spec_code():
            self._no("turns into text (repr)")
        return f"<{type(self).__name__}>"

    def __bool__(self) -> bool:
        return self._no("branches on")

    def __eq__(self, other: Any) -> bool:  # type: ignore[override]
        return self._no("compares (==)")

    def __ne__(self, other: Any) -> bool:  # type: ignore[override]
        return self._no("compares (!=)")

    def __lt__(self, other: Any) -> bool:
        return self._no("compares (<)")

    def __le__(self, other: Any) -> bool:
        return self._no("compares (<=)")

    def __gt__(self, other: Any) -> bool:
        return self._no("compares (>)")

    def __ge__(self, other: Any) -> bool:
        return self._no("compares (>=)")

    def __hash__(self) -> int:
        return self._no("hashes")

    def __int__(self) -> int:
        return self._no("converts to int")

    def __float__(self) -> float:
        return self._no("converts to float")

    def __index__(self) -> int:
        return self._no("uses as an index or count")

    def __round__(self, *args: Any) -> Any:
        return self._no("rounds")

    def __iter__(self) -> Any:
        return self._no("iterates over")

    def __len__(self) -> int:
        return self._no("takes the length of")

    def __getitem__(self, key: Any) -> Any:
        return self._no("indexes")

    def __contains__(self, item: Any) -> bool:
        return self._no("tests membership in")

    def __floor__(self) -> Any:
        return self._no("floors")

    def __ceil__(self) -> Any:
        return self._no("ceils")

    def __mod__(self, other: Any) -> Any:
        return self._no("takes a remainder of")

    __rmod__ = __mod__

    def __floordiv__(self, other: Any) -> Any:
        return self._no("floor-divides")

    __rfloordiv__ = __floordiv__


class Sym(_Refusing):
    """A data-independent exact value (a sympy expression in the parameters and, under replace-one, n)."""

    what = "parameter or dataset size"
    __slots__ = ("expr",)

    def __init__(self, expr: Any) -> None:
        self.expr = sympy.sympify(expr)
        if self.expr.has(sympy.Float):
            refuse_float("a parameter or dataset size")


    def _arith(self, other: Any, op: Any, reverse: bool = False) -> Any:
        if isinstance(other, (DataValue, Handle)):
            return other._arith(self, op, not reverse)
        value = other.expr if isinstance(other, Sym) else exact_constant(other)
        if value is None and is_float(other):
            return refuse_float("the program combines a parameter or n with a value that")
        if value is None:
            return refuse(f"the program combines a parameter with {type(other).__name__}")
        return Sym(op(value, self.expr) if reverse else op(self.expr, value))

    def __add__(self, o: Any) -> Any: return self._arith(o, lambda a, b: a + b)
    def __radd__(self, o: Any) -> Any: return self._arith(o, lambda a, b: a + b, True)
    def __sub__(self, o: Any) -> Any: return self._arith(o, lambda a, b: a - b)
    def __rsub__(self, o: Any) -> Any: return self._arith(o, lambda a, b: a - b, True)
    def __mul__(self, o: Any) -> Any: return self._arith(o, lambda a, b: a * b)
    def __rmul__(self, o: Any) -> Any: return self._arith(o, lambda a, b: a * b, True)
    def __truediv__(self, o: Any) -> Any: return self._arith(o, lambda a, b: a / b)
    def __rtruediv__(self, o: Any) -> Any: return self._arith(o, lambda a, b: a / b, True)
    def __pow__(self, o: Any) -> Any: return self._arith(o, lambda a, b: a ** b)
    def __rpow__(self, o: Any) -> Any: return self._arith(o, lambda a, b: a ** b, True)
    def __neg__(self) -> Any: return Sym(-self.expr)
    def __pos__(self) -> Any: return self
    def __abs__(self) -> Any: return Sym(sympy.Abs(self.expr))


class DataValue(_Refusing):
    """sum of factor * base + c computed from the records without noise; ``terms`` = ((factor, base), ...),
    a base a dpverify query (over the records) or ("coord", i) (an answer of an answers universe)."""

    what = "value computed from the data without noise"
    __slots__ = ("terms",)

    def __init__(self, terms: tuple) -> None:
        self.terms = terms

    def describe(self) -> str:
        return f"a data value of {len(self.terms)} term(s)"

    def scaled(self, factor: sympy.Expr) -> "DataValue":
        return DataValue(tuple((f * factor, b) for f, b in self.terms))

    def _arith(self, other: Any, op: Any, reverse: bool = False) -> Any:
        name = op.__name__ if hasattr(op, "__name__") else ""
        if isinstance(other, Handle):
            return refuse("the program combines a noisy value with a value computed from the data without noise")
        if isinstance(other, DataValue):
            if op is _add:
                return DataValue(self.terms + other.terms)
            if op is _sub:
                return DataValue((other.scaled(-1) if not reverse else self.scaled(-1)).terms
                                 + (self.terms if not reverse else other.terms))
            return refuse("the program multiplies or divides two values computed from the data")
        value = other.expr if isinstance(other, Sym) else exact_constant(other)
        if value is None and is_float(other):
            return refuse_float("the program combines a data value with a value that")
        if value is None:
            return refuse(f"the program combines a data value with {type(other).__name__}")
        if op in (_add, _sub):
            return self.scaled(-1) if (op is _sub and reverse) else self  # a constant shift: same sensitivity
        if op is _mul:
            return self.scaled(value)
        if op is _div and not reverse:
            if value == 0:
                return refuse("the program divides a data value by 0")
            return self.scaled(1 / value)
        return refuse(f"the program applies a nonlinear operation ({name}) to a value computed from the data")

    def __add__(self, o: Any) -> Any: return self._arith(o, _add)
    def __radd__(self, o: Any) -> Any: return self._arith(o, _add, True)
    def __sub__(self, o: Any) -> Any: return self._arith(o, _sub)
    def __rsub__(self, o: Any) -> Any: return self._arith(o, _sub, True)
    def __mul__(self, o: Any) -> Any: return self._arith(o, _mul)
    def __rmul__(self, o: Any) -> Any: return self._arith(o, _mul, True)
    def __truediv__(self, o: Any) -> Any: return self._arith(o, _div)
    def __rtruediv__(self, o: Any) -> Any: return self._arith(o, _div, True)
    def __pow__(self, o: Any) -> Any: return refuse("the program raises a data value to a power")
    __rpow__ = __pow__
    def __neg__(self) -> Any: return self.scaled(sympy.Integer(-1))
    def __pos__(self) -> Any: return self

    def __abs__(self) -> Any:
        return self  # | |x| - |x'| | <= |x - x'|: the same sensitivity bound holds


def _add(a: Any, b: Any) -> Any: return a + b
def _sub(a: Any, b: Any) -> Any: return a - b
def _mul(a: Any, b: Any) -> Any: return a * b
def _div(a: Any, b: Any) -> Any: return a / b


class Record(_Refusing):
    """``data[index]``: one record of the generic dataset, readable only by randomized response."""

    what = "record of the data"
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index



def _branch(what: str) -> bool:
    """The outcome of a comparison of noisy values on the path the active run follows (see
    :meth:`dpverify.engine.structural.reading._Run.branch`)."""
    run = getattr(_state, "run", None)
    if run is None:
        raise NotStructural(f"a {what} outside a structural run")
    return run.branch(what)


class Handle(_Refusing):
    """A noisy value, or a post-processing of noisy values and data-independent values.

    A comparison or a truth test is a branch point: the structural reading follows one outcome per
    run and explores every path (adaptive composition: the cost is the largest path's total)."""

    what = "noisy value (its number: int(), float(), an index)"
    __slots__ = ()

    def __bool__(self) -> bool:
        return _branch("truth test of a noisy value")

    def __eq__(self, other: Any) -> bool:  # type: ignore[override]
        return self._compare(other, "==")

    def __ne__(self, other: Any) -> bool:  # type: ignore[override]
        return self._compare(other, "!=")

    def __lt__(self, other: Any) -> bool:
        return self._compare(other, "<")

    def __le__(self, other: Any) -> bool:
        return self._compare(other, "<=")

    def __gt__(self, other: Any) -> bool:
        return self._compare(other, ">")

    def __ge__(self, other: Any) -> bool:
        return self._compare(other, ">=")

    def _compare(self, other: Any, op: str) -> bool:
        if isinstance(other, (DataValue, Record, GenericData)) or other is MARK:
            return refuse("the program compares a noisy value with a value computed from the data without noise")
        if not (isinstance(other, (Handle, Sym)) or exact_constant(other) is not None or is_float(other)):
            return refuse(f"the program compares a noisy value with {type(other).__name__}")
        return _branch(f"comparison ({op}) of a noisy value")


    def _arith(self, other: Any, op: Any, reverse: bool = False) -> Any:
        if isinstance(other, (DataValue, Record, GenericData)):
            return refuse("the program combines a noisy value with a value computed from the data without noise")
        if isinstance(other, (Handle, Sym)) or exact_constant(other) is not None or is_float(other):
            return Handle()  # post-processing of noisy values: floats may round, the loss does not change
        return refuse(f"the program combines a noisy value with {type(other).__name__}")

    def __add__(self, o: Any) -> Any: return self._arith(o, _add)
    __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = __add__
    __pow__ = __rpow__ = __add__
    def __neg__(self) -> Any: return Handle()
    def __pos__(self) -> Any: return self
    def __abs__(self) -> Any: return Handle()

    __hash__ = _Refusing.__hash__  # hashing a noisy value is refused in every reading (sets, dict keys)


class _Mark(_Refusing):
    """The one 'record' ``Query.on(data)`` sees of the generic dataset: a marker for the reading's own
    primitives (dp.exponential); any record term evaluated on it refuses."""

    what = "generic record (a score bound to the generic dataset is read by dp.exponential only)"


MARK = _Mark()


_GUARD = _Refusing.__getattribute__.__code__


class QueryView(_Refusing):
    """A dpverify query as the program sees it in the structural reading: ``q(data)`` of the generic dataset
    is the data value q (its sensitivity derived), ``q.on(data)`` a :class:`GenericScore` that only
    dp.exponential reads; arithmetic gives views of the combined query."""

    what = "query (in the structural reading)"
    _public = frozenset({"on"})
    __slots__ = ("query",)

    def __init__(self, query: Any) -> None:
        self.query = query

    def __call__(self, data: Any, *rest: Any) -> Any:
        if type(data) is GenericData:
            if rest or self.query.is_score:
                return refuse("a score evaluated on the generic dataset by the program itself")
            return DataValue(((sympy.Integer(1), self.query),))
        return self.query(data, *rest)

    def on(self, data: Any) -> Any:
        if type(data) is GenericData:
            return GenericScore(self.query)
        return self.query.on(data)

    def _combine(self, other: Any, op: Any) -> Any:
        other = other.query if type(other) is QueryView else other
        if isinstance(other, (Sym, DataValue, Handle, Record)):
            return refuse("a query combined with a value of the program")
        return QueryView(op(self.query, other))

    def __add__(self, o: Any) -> Any: return self._combine(o, lambda a, b: a + b)
    def __radd__(self, o: Any) -> Any: return self._combine(o, lambda a, b: b + a)
    def __sub__(self, o: Any) -> Any: return self._combine(o, lambda a, b: a - b)
    def __rsub__(self, o: Any) -> Any: return self._combine(o, lambda a, b: b - a)
    def __mul__(self, o: Any) -> Any: return self._combine(o, lambda a, b: a * b)
    def __rmul__(self, o: Any) -> Any: return self._combine(o, lambda a, b: b * a)
    def __truediv__(self, o: Any) -> Any: return self._combine(o, lambda a, b: a / b)
    def __neg__(self) -> Any: return QueryView(-self.query)
    def __abs__(self) -> Any: return QueryView(abs(self.query))


class GenericScore(_Refusing):
    """``score.on(data)`` of the generic dataset: u(X, .) for every dataset X, read by dp.exponential only."""

    what = "score bound to the dataset (only dp.exponential reads it)"
    __slots__ = ("query",)

    def __init__(self, query: Any) -> None:
        self.query = query

    def __call__(self, *args: Any) -> Any:
        return self._no("evaluates")


class GenericData(_Refusing):
    """Every dataset of size n over the record domain, at once (see the module docstring)."""

    what = "dataset"
    _public = frozenset({"count"})

    def __init__(self, reading: Any) -> None:
        self._reading = reading


    def __iter__(self) -> Any:
        caller = sys._getframe(1).f_code
        if caller is _on_code():  # score.on(data): a marker the reading's dp.exponential recognises
            return iter((MARK,))
        return GenericIterator()  # only sum(<term> for x in data) reads it; any step refuses

    def __len__(self) -> int:
        if sys._getframe(1).f_code is _on_code():  # tuple()'s length hint inside score.on(data): no length
            raise TypeError("the generic dataset has no concrete length")
        return self._no("takes the length (outside len(data)) of")

    def __getitem__(self, key: Any) -> Any:
        return self._reading.record(key)

    def count(self, value: Any) -> Any:
        return self._reading.count_of(value)


class GenericIterator:
    """``iter(data)`` of the generic dataset: the source of ``sum(t(x) for x in data)``, which the reading's
    ``sum`` reads as the query total(t); stepping it (a loop over the records) refuses."""

    def __iter__(self) -> "GenericIterator":
        return self

    def __next__(self) -> Any:
        return refuse("the program iterates over the dataset (only count/total/mean/max_of/min_of queries, "
                      "sum(data), sum(<term> for x in data), len(data) and data.count(v) are read structurally)")


def _on_code() -> Any:
    from ...dsl.queries import Query
    return Query.on.__code__


__all__ = ["DataValue", "GenericData", "GenericIterator", "GenericScore", "Handle", "QueryView", "MARK", "NotStructural", "Record", "Sym", "exact_constant",
           "is_float", "refuse", "refuse_float"]
