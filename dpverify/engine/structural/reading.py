"""The structural reading: the mechanism runs on a generic dataset and leaves its noise steps.

:func:`read` calls the program on :class:`~.values.GenericData` (every dataset of
symbolic size n over the record domain) with its continuous parameters as
symbols -- once per path of outcomes of its comparisons of noisy values, each
comparison taking the outcome the path's script says (False beyond it; every
path is explored, counted) -- under two interceptions:

* the DSL's port (:func:`dpverify.dsl.port.reading`) answers the primitives
  that reach the engine: ``dp.laplace``/``dp.gaussian``/``dp.exponential_noise``
  record a :class:`Step` and return a :class:`~.values.Handle`; ``dp.exp``/``log``/
  ``sqrt`` stay symbolic; every other draw (bernoulli, uniform, ...) is refused;
* the program's functions are re-created with a globals overlay (and fresh
  closure cells) in which the builtins ``sum`` and ``len`` read the generic
  dataset (``sum(data)`` is the query total(x), ``len(data)`` the size n), and
  ``dp.geometric``, ``dp.laplace_mechanism``, ``dp.exponential`` and
  ``dp.randomized_response`` are this reading's own (their real versions need a
  concrete dataset).  The user's own helper functions are re-created the same way.

Anything else the program does with the data refuses (:func:`~.values.refuse`),
as does a function that writes globals or nonlocals (hidden state).  The first
path is run twice and must leave the same steps.  The result is a :class:`Reading`: the
steps, each with the data value at its centre, its noise parameter and the
line that asked for it; :mod:`.lemmas` turns it into a cost.

For an answers universe (``dp.answers``: the data is a vector of m query
answers, neighbours at L1 or L-infinity distance 1) the data is a tuple of m
generic answers instead, each a :class:`~.values.DataValue`.
"""
from __future__ import annotations

import dis
import inspect
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

import sympy

from ...dsl import port
from ...dsl.queries import BoundScore, Finite, Query, count as count_query, total as total_query
from ...dsl.universe import Neighbours
from ..sensitivity.derivable import N
from .gate import admit, pure_term
from .values import (MARK, DataValue, GenericData, GenericIterator, GenericScore, Handle, NotStructural, QueryView,
                     Record, Sym, _Refusing as _RefusingBase, exact_constant, is_float, refuse, refuse_float,
                     set_run)

MAX_FUNCTIONS = 200
"""Functions the overlay re-creates for one program (its helpers, transitively); beyond it: refused."""
MAX_PATHS = 256
"""Paths of outcomes of comparisons of noisy values explored for one program; beyond it: refused."""
MAX_BRANCHES = 64
"""Comparisons of noisy values along one path; beyond it: refused."""


@dataclass(frozen=True)
class Step:
    """One noise step: ``kind`` with parameter ``param`` on the centre ``centre``.

    kind: "laplace" (param: the scale b), "gaussian" (sigma), "exponential_noise" (scale),
    "geometric" (a), "exponential_mechanism" (param: eps; ``stated``: the Delta it divides by;
    ``score``: the score query and its candidates), "randomized_response" (eps).
    """

    kind: str
    centre: Any  # a DataValue, a Record, or None (a constant or noisy centre: post-processing)
    param: sympy.Expr
    line: int
    stated: Optional[sympy.Expr] = None
    score: Optional[tuple] = None  # (query, candidates) of the exponential mechanism
    declared: Optional[Neighbours] = None  # the relation the mechanism calibrated for

    def key(self) -> tuple:
        if isinstance(self.centre, DataValue):
            centre: Any = tuple((str(f), b.describe() if isinstance(b, Query) else b) for f, b in self.centre.terms)
        else:
            centre = ("record", self.centre.index) if isinstance(self.centre, Record) else None
        return (self.kind, centre, str(self.param), self.line, str(self.stated))


@dataclass
class Reading:
    """What one structural run of a mechanism found."""

    steps: list[Step] = field(default_factory=list)
    records_read: set = field(default_factory=set)  # indices i of data[i]
    raw_forms: bool = False  # sum(data)/len(data)/data.count: taken over the universe's records
    path: tuple = ()  # the outcomes of the comparisons of noisy values this run followed
    refused: Optional[str] = None


class _Run:
    """The state of one structural run (the port engine, the shims and the overlay)."""

    def __init__(self, relation: Any, records: tuple, answers: Optional[int], script: tuple = ()) -> None:
        self.script = script  # the outcomes of the first comparisons of noisy values, in order
        self.taken: list[bool] = []
        self.relation = relation
        self.records = records
        self.answers = answers
        self.reading = Reading()
        self.refused: Optional[str] = None
        self.wrapped: dict = {}

    def branch(self, what: str) -> bool:
        """The next comparison's outcome on this run's path (False beyond the script; the caller explores
        the other outcome in another run)."""
        if len(self.taken) >= MAX_BRANCHES:
            return refuse(f"more than {MAX_BRANCHES} comparisons of noisy values on one path")
        outcome = self.script[len(self.taken)] if len(self.taken) < len(self.script) else False
        self.taken.append(outcome)
        return outcome

    # ----- the DSL's port ---------------------------------------------------------------
    def running(self) -> bool:
        return True

    def draw(self, name: str, make: Callable[[], Any]) -> Any:
        return refuse(f"{name}() is not read structurally (only calibrated noise on derived queries is)")

    def noise(self, kind: str, centre: Any, scale: Any, site: tuple) -> Any:
        self._step(kind, centre, scale, site[1])
        return Handle()

    def exact(self, value: Any, what: str, fn: str) -> Any:
        if what == "value" and (isinstance(value, (DataValue, Handle)) or is_float(value)):
            return value  # a float centre is a constant: noise on it is free (the scale may not be a float)
        return self.constant(value, f"{fn}: {what}")

    def exact_math(self, fn: Callable[[Any], Any], value: Any) -> Any:
        if isinstance(value, Handle):
            return Handle()
        return Sym(fn(self.constant(value, getattr(fn, "__name__", "math"))))

    def runtime_sensitivity(self, query: Any, candidates: tuple, relation: Any, size: int) -> tuple[Any, str]:
        return refuse("a sensitivity at a concrete size was asked for")

    # ----- values -----------------------------------------------------------------------
    def constant(self, value: Any, what: str) -> sympy.Expr:
        """A data-independent exact value (a parameter, n under replace-one, a number), else refused."""
        if isinstance(value, Sym):
            return value.expr
        found = exact_constant(value)
        if found is None and is_float(value):
            return refuse_float(what)
        if found is None:
            return refuse(f"{what} depends on the data or the noise ({type(value).__name__})")
        return found

    def _step(self, kind: str, centre: Any, param: Any, line: int, **extra: Any) -> None:
        if isinstance(centre, Handle) or exact_constant(centre) is not None or isinstance(centre, Sym) \
                or is_float(centre):
            centre = None  # noise on a constant or on a noisy value: post-processing, free
        elif not isinstance(centre, (DataValue, Record)):
            refuse(f"noise centred on {type(centre).__name__} is not read structurally")
        param = sympy.sympify(param)
        if param.has(sympy.Float) or any(is_float(v) for v in extra.values()):
            refuse_float(f"the {kind.replace('_', ' ')} step's parameter")
        self.reading.steps.append(Step(kind, centre, param, line, **extra))

    def record(self, key: Any) -> Any:
        if self.answers is not None:
            return refuse("indexing an answers vector is not read structurally")
        if isinstance(key, bool) or not isinstance(key, int) or key < 0:
            return refuse(f"data[{key!r}]: only data[i] for a constant i >= 0 is read structurally")
        if self.relation not in (Neighbours.REPLACE_ONE, Neighbours.LABEL_ONLY):
            return refuse("data[i] under add/remove: removing a record shifts the positions")
        self.reading.records_read.add(key)
        return Record(key)

    def count_of(self, value: Any) -> Any:
        try:
            hash(value)
        except Exception:
            return refuse(f"data.count({value!r}) of an unhashable value")
        if isinstance(value, (Sym, DataValue, Handle, Record)):
            return refuse("data.count of a non-constant value")
        self.reading.raw_forms = True
        return DataValue(((sympy.Integer(1), count_query(lambda x, v=value: x == v,
                                                         domain=Finite(self.records))),))

    # ----- the builtins overlay ---------------------------------------------------------
    def sum_(self, iterable: Any, start: Any = 0) -> Any:
        if isinstance(iterable, GenericData):
            if is_float(start):  # 0.0 + records: a float sum, rounded in real runs
                return refuse_float("sum(data, start)")
            if start != 0 or isinstance(start, bool):
                return refuse("sum(data, start) with a non-zero start")
            self.reading.raw_forms = True
            return DataValue(((sympy.Integer(1), total_query(lambda x: x, domain=Finite(self.records))),))
        if isinstance(iterable, types.GeneratorType) and iterable.gi_frame is not None \
                and isinstance(iterable.gi_frame.f_locals.get(".0"), GenericIterator):
            return self._sum_of_terms(iterable, start)
        return sum(iterable, start)

    def _sum_of_terms(self, generator: Any, start: Any) -> Any:
        """sum(<t(x)> for x in data): the query total(t) with t evaluated, exactly, on every record of the
        universe by the generator's own code (filters and inner loops included); the term may not draw
        noise, branch on noise or give anything but an exact number."""
        if is_float(start):
            return refuse_float("sum(<term> for x in data, start)")
        if exact_constant(start) is None:
            return refuse("sum(<term> for x in data, start) with a start that is not a constant")
        code, frame = generator.gi_code, generator.gi_frame
        if code.co_argcount != 1 or inspect.getgeneratorstate(generator) != inspect.GEN_CREATED:
            return refuse("sum over a generator that is not a fresh generator expression over the data")
        _refuse_hidden_state(code, "the term of sum(... for x in data)")
        try:
            cells = tuple(types.CellType(frame.f_locals[name]) for name in code.co_freevars)
        except KeyError:
            return refuse("the term of sum(... for x in data) reads a variable not yet assigned")
        pure_term(generator, cells)  # a function of its record alone: no state shared between records
        term_fn = types.FunctionType(code, frame.f_globals, "term", None, cells or None)
        steps, taken, values = len(self.reading.steps), len(self.taken), {}
        for record in self.records:
            total: Any = 0
            for item in term_fn(iter((record,))):
                value = exact_constant(item)
                if value is None and is_float(item):  # real runs add the terms in rounded floats
                    return refuse_float(f"the term of sum(... for x in data) on the record {record!r}")
                if value is None:
                    return refuse(f"the term of sum(... for x in data) gives {type(item).__name__} on the record "
                                  f"{record!r}, not an exact number")
                total += value
            values[record] = sympy.sympify(total)
        if len(self.reading.steps) != steps or len(self.taken) != taken:
            return refuse("the term of sum(... for x in data) draws noise or compares noisy values")
        generator.close()
        self.reading.raw_forms = True
        query = total_query(lambda x, table=values: table[x], domain=Finite(self.records))
        return DataValue(((sympy.Integer(1), query),))

    def len_(self, obj: Any) -> Any:
        if isinstance(obj, GenericData):
            if self.relation is Neighbours.ADD_REMOVE:  # neighbours differ in size: n is a count, sensitivity 1
                self.reading.raw_forms = True
                return DataValue(((sympy.Integer(1), count_query(lambda x: True, domain=Finite(self.records))),))
            return Sym(N)
        return len(obj)

    # ----- this reading's own versions of the primitives that read a concrete dataset ---------------------
    def geometric(self, value: Any, a: Any, *, lower: Any = None, upper: Any = None) -> Any:
        base = self.constant(a, "geometric: a")
        for bound in (lower, upper):
            if bound is not None:
                self.constant(bound, "geometric: lower/upper")
        self._step("geometric", value, base, sys._getframe(1).f_lineno)
        return Handle()

    def laplace_mechanism(self, query: Any, data: Any, eps: Any, *, neighbours: Any) -> Any:
        query = query.query if type(query) is QueryView else query
        if not isinstance(query, Query) or query.is_score or not isinstance(neighbours, Neighbours):
            return refuse("laplace_mechanism with a query or relation it would refuse")
        if not isinstance(data, GenericData):
            return refuse("laplace_mechanism on something other than the dataset")
        if neighbours is not Neighbours.ADD_REMOVE and self.relation is Neighbours.ADD_REMOVE:
            return refuse("laplace_mechanism calibrated at len(data), which differs between add/remove neighbours")
        self._step("laplace_mechanism", DataValue(((sympy.Integer(1), query),)), self.constant(eps, "eps"),
                   sys._getframe(1).f_lineno, declared=neighbours, score=(query, (None,)))
        return Handle()

    def exponential(self, candidates: Any, score: Any, eps: Any, *, sensitivity: Any = None,
                    neighbours: Any = None) -> Any:
        if isinstance(candidates, (str, bytes)) or not hasattr(candidates, "__iter__"):
            return refuse("exponential: candidates not a finite collection")
        choices = tuple(candidates)
        for c in choices:
            if isinstance(c, (Sym, DataValue, Handle, Record)) or not _hashable(c):
                return refuse("exponential: candidates that depend on the data, the noise or a parameter")
        if type(score) is GenericScore:
            score = BoundScore(score.query, (MARK,))
        if not (isinstance(score, BoundScore) and len(score.data) == 1 and score.data[0] is MARK):
            return refuse("exponential: a score other than query.on(data) (its sensitivity is not derived)")
        if score.query.domain is None:
            return refuse("exponential: the score has no record domain")
        stated = None
        if sensitivity is not None:
            stated = self.constant(sensitivity, "exponential: sensitivity")
        elif not isinstance(neighbours, Neighbours):
            return refuse("exponential: neither sensitivity= nor neighbours=")
        elif neighbours is not Neighbours.ADD_REMOVE and self.relation is Neighbours.ADD_REMOVE:
            return refuse("exponential: Delta at len(data), which differs between add/remove neighbours")
        self._step("exponential_mechanism", DataValue(((sympy.Integer(1), score.query),)),
                   self.constant(eps, "exponential: eps"), sys._getframe(1).f_lineno, stated=stated,
                   score=(score.query, choices), declared=None if stated is not None else neighbours)
        return Handle()

    def randomized_response(self, value: Any, eps: Any, values: Any = (0, 1)) -> Any:
        choices = tuple(values)
        if len(choices) < 2 or any(not _hashable(c) or isinstance(c, (Sym, DataValue, Handle, Record))
                                   for c in choices) or len(set(choices)) != len(choices):
            return refuse("randomized_response: values not a constant set of distinct values")
        level = self.constant(eps, "randomized_response: eps")
        if isinstance(value, Record):
            missing = [r for r in self.records if r not in choices]
            if missing:
                return refuse(f"randomized_response: the record {missing[0]!r} is not in values={choices!r}")
        elif isinstance(value, DataValue):
            return refuse("randomized_response of a value computed from the data (not a record)")
        elif not isinstance(value, Handle) and exact_constant(value) is None and not _hashable(value):
            return refuse("randomized_response of an unsupported value")
        self._step("randomized_response", value, level, sys._getframe(1).f_lineno,
                   score=(choices,))
        return Handle()

    # ----- the overlay ------------------------------------------------------------------------------------
    def wrap(self, fn: Any) -> Any:
        """``fn`` re-created to see this reading's builtins and primitives (its helpers too, recursion
        included: the new function is registered before its globals are filled in)."""
        if fn in self.wrapped:
            return self.wrapped[fn]
        if len(self.wrapped) >= MAX_FUNCTIONS:
            return refuse(f"more than {MAX_FUNCTIONS} functions to read")
        _refuse_hidden_state(fn.__code__, fn.__qualname__)
        overlay: dict = dict(fn.__globals__)
        builtins = __builtins__ if isinstance(__builtins__, dict) else vars(__builtins__)
        overlay["__builtins__"] = dict(builtins, sum=self.sum_, len=self.len_, type=_TYPE)  # before the function
        if "type" in overlay:
            overlay["type"] = _TYPE  # the spec module's own guarded type (the loader's) knows real runs only
        cells = tuple(types.CellType() for _ in fn.__closure__) if fn.__closure__ else None
        new = types.FunctionType(fn.__code__, overlay, fn.__name__, fn.__defaults__, cells)
        new.__kwdefaults__ = fn.__kwdefaults__
        self.wrapped[fn] = new
        for name in _names(fn.__code__):
            if name in overlay:
                overlay[name] = self.replace(overlay[name])
        for cell, old in zip(cells or (), fn.__closure__ or ()):
            try:
                contents = old.cell_contents
            except ValueError:  # a cell not yet assigned stays empty
                continue
            cell.cell_contents = self.replace(contents)
        return new

    def replace(self, value: Any) -> Any:
        shim = _shims(self).get(id(value))
        if shim is not None:
            return shim
        if isinstance(value, types.ModuleType) and value.__name__ in ("dpverify", "dpverify.dsl",
                                                                     "dpverify.dsl.primitives"):
            return _Module(value, self)
        if isinstance(value, types.FunctionType) and not (value.__module__ or "").startswith("dpverify"):
            return self.wrap(value)
        if type(value) is not QueryView and isinstance(value, Query):
            return QueryView(value)
        return value


def _hashable(value: Any) -> bool:
    try:
        hash(value)
        return True
    except Exception:
        return False


def _shims(run: _Run) -> dict:
    from ...dsl import primitives, noise
    return {id(primitives.geometric): run.geometric, id(primitives.exponential): run.exponential,
            id(primitives.randomized_response): run.randomized_response,
            id(noise.laplace_mechanism): run.laplace_mechanism}


class _StructuralType:
    """``type`` as the program sees it in the overlay: ``type(x)`` of a value of this reading refuses
    (``type(eps) is Fraction`` would tell the generic run from a real one); the rest is the real type."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and isinstance(args[0], (_RefusingBase, GenericIterator)):
            return refuse("the program inspects the type (type(x)) of a value of the structural reading")
        return type(*args, **kwargs)

    def __instancecheck__(self, obj: Any) -> bool:
        return isinstance(obj, type)

    def __subclasscheck__(self, sub: Any) -> bool:
        return issubclass(sub, type)

    def __mro_entries__(self, bases: tuple) -> tuple:
        return (type,)

    def __getattr__(self, name: str) -> Any:
        return getattr(type, name)


_TYPE = _StructuralType()


class _Module:
    """``dp`` as the program sees it in the overlay: this reading's primitives, the rest unchanged."""

    def __init__(self, module: types.ModuleType, run: _Run) -> None:
        self._module, self._run = module, run

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._module, name)
        if name in _FACTORIES:  # queries built inside the program are views too
            return lambda *args, **kwargs: QueryView(found(*args, **kwargs))
        return self._run.replace(found)


_FACTORIES = frozenset({"count", "total", "mean", "max_of", "min_of", "query"})


def _names(code: types.CodeType) -> set:
    """The global names ``code`` and the code nested in it (lambdas, comprehensions, inner functions) use."""
    found = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _names(const)
    return found


_WRITES = {"STORE_GLOBAL", "DELETE_GLOBAL"}


def _refuse_hidden_state(code: types.CodeType, where: str) -> None:
    """A function that writes a global or a nonlocal keeps state between runs: refused."""
    for ins in dis.get_instructions(code):
        if ins.opname in _WRITES or (ins.opname in ("STORE_DEREF", "DELETE_DEREF") and ins.argval in code.co_freevars):
            refuse(f"{where} writes {ins.argval!r} outside itself (hidden state between runs)")
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _refuse_hidden_state(const, where)


def read(program: Callable[..., Any], relation: Any, records: tuple, params: dict,
         answers: Optional[int] = None) -> list[Reading]:
    """Run ``program`` on every dataset at once, once per path of outcomes of its comparisons of noisy
    values (depth first, every path, at most :data:`MAX_PATHS`); raise :class:`NotStructural` when it is
    not in the structural form.  ``params``: name -> a sympy symbol (generalised) or an exact value (fixed).
    Each path's reading carries its outcomes in ``path``.  The program must first pass the whitelist
    gate (:func:`.gate.admit`: a static read of its bytecode and of everything it can call)."""
    admit(program)
    first = _once(program, relation, records, params, answers, ())
    again = _once(program, relation, records, params, answers, ())
    if [s.key() for s in first.steps] != [s.key() for s in again.steps] or first.path != again.path:
        raise NotStructural("two runs of the program left different noise steps (state between runs)")
    paths, pending = [first], _alternatives(first.path, 0)
    while pending:
        if len(paths) >= MAX_PATHS:
            raise NotStructural(f"more than {MAX_PATHS} paths of comparisons of noisy values")
        script = pending.pop()
        found = _once(program, relation, records, params, answers, script)
        if found.path[:len(script)] != script:
            raise NotStructural("a path did not follow its outcomes (state between runs)")
        paths.append(found)
        pending.extend(_alternatives(found.path, len(script)))
    return paths


def _alternatives(path: tuple, start: int) -> list[tuple]:
    """The scripts of the paths that differ from ``path`` first at a comparison at or after ``start``."""
    return [path[:j] + (not path[j],) for j in range(len(path) - 1, start - 1, -1)]


def _once(program: Callable[..., Any], relation: Any, records: tuple, params: dict,
          answers: Optional[int], script: tuple) -> Reading:
    if not isinstance(program, types.FunctionType):
        raise NotStructural("the mechanism is not a plain Python function")
    run = _Run(relation, records, answers, script)
    before = set_run(run)
    watcher = _watch(run)
    try:
        with port.reading(run):  # type: ignore[arg-type]
            fn = run.wrap(program)
            data: Any = (tuple(DataValue(((sympy.Integer(1), ("coord", i)),)) for i in range(answers))
                         if answers is not None else GenericData(run))
            args = {k: (Sym(v) if isinstance(v, sympy.Symbol) else v) for k, v in params.items()}
            output = fn(data, **args)
            _check_output(output)
    except NotStructural:
        raise
    except RecursionError:
        raise NotStructural("the structural run recursed too deeply") from None
    except Exception as err:  # noqa: BLE001 -- any failure of the one symbolic run: no structural proof
        if run.refused is not None:
            raise NotStructural(run.refused) from None
        raise NotStructural(f"the structural run raised {type(err).__name__}: {err}") from None
    finally:
        watcher()
        set_run(before)
    if run.refused is not None:
        raise NotStructural(run.refused + " (the program caught the refusal)")
    run.reading.path = tuple(run.taken)
    return run.reading


def _watch(run: _Run) -> Callable[[], None]:
    """Refuse any record term evaluated on the generic record: ``score.on(data)`` is read by this reading's
    dp.exponential only, and a score called by the program itself (``score.on(data)(y)``, whose term may
    ignore its record) would compute a value for a one-record dataset.  Returns the function that stops
    watching (the previous profile function is restored, and kept being called meanwhile)."""
    from ...dsl.queries import Term
    term_code = Term.__call__.__code__
    previous = sys.getprofile()

    def hook(frame: Any, event: str, arg: Any) -> Any:
        if event == "call" and frame.f_code is term_code and frame.f_locals.get("record") is MARK:
            if run.refused is None:
                run.refused = "the program evaluates a score on the generic dataset itself (only dp.exponential reads it)"
        if previous is not None:
            previous(frame, event, arg)

    sys.setprofile(hook)
    return lambda: sys.setprofile(previous)


def _check_output(value: Any, depth: int = 0) -> None:
    """No part of the output may be the data or a value computed from it without noise."""
    if depth > 50:
        refuse("the output is nested too deeply to inspect")
    if isinstance(value, (DataValue, Record, GenericData)) or value is MARK:
        refuse("the program releases a value computed from the data without noise")
    if isinstance(value, (tuple, list, set, frozenset)):
        for item in value:
            _check_output(item, depth + 1)
    elif isinstance(value, dict):
        for k, item in value.items():
            _check_output(k, depth + 1)
            _check_output(item, depth + 1)
    elif isinstance(value, Sym):
        if value.expr.free_symbols - {N}:  # as in the symbolic reading: an output that follows a parameter
            refuse("the output holds a value computed from a parameter (the proof would speak of every value "
                   "of an output the exact readings see at one)")
    elif not (isinstance(value, (Handle, str, bytes, type(None))) or exact_constant(value) is not None
              or is_float(value)):
        refuse(f"the output holds a {type(value).__name__}, which is not read structurally")


__all__ = ["Reading", "Step", "read"]
