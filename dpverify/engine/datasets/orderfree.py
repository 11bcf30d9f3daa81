"""Showing from a mechanism's code that it reads its dataset only through order-free operations.

``symmetric=True`` is checked on every ordering of every multiset (:mod:`.symmetry`): r^n runs.
This module proves the declaration without them, for programs whose every use of the dataset is
one of a few operations whose result is the same -- identical, not only equal -- on every
ordering of one multiset of the universe's records.  Then every value the program computes is the
same on every ordering (by induction over the execution), so are its primitive calls and its
output, and the law is a function of the multiset.

The uses are found in the bytecode (CPython 3.11; any other version, or any instruction this
module does not know, is refused and the caller falls back to the full check).  ``data`` is the
mechanism's first parameter, and every name bound to it in a function that receives it is
*tainted*.  A load of a tainted name must be one of:

* ``len(data)``; ``sum(data)`` (records that are ints, bools or Fractions: exact sums);
  ``sorted(data)``, ``min(data)``, ``max(data)`` (records the universe orders strictly and
  totally: equal records are the same record) -- each a call of the builtin itself, one
  positional argument, the name not shadowed in the module;
* ``sum(<generator or list comprehension over data>)`` whose body is *pure and exact*: it reads
  only its loop variables, plain constants and free variables, calls only ``int``, ``bool``,
  ``abs``, ``len``, ``min``, ``max``, ``Fraction`` and module functions that are themselves pure
  and exact (checked the same way), uses no ``/`` and no ``**`` (no float can arise from exact
  inputs), stores nothing outside its frame.  Its free variables and the pure functions'
  arguments must hold plain exact values (ints, bools, strings, bytes, None, Fractions and
  tuples of them) when they run: a value of a user's class could see, through its own
  comparison methods, the order in which the records are compared with it.  That is a runtime
  fact, checked by :func:`watch` on every run of the program on every multiset;
* an argument of a call ``f(..., data, ...)`` of a module-level Python function, whose code is
  then analysed with that parameter tainted; or of a dpverify query (``dp.count``/``total``/
  ``mean`` of record terms, and their linear combinations) called as ``query(data)`` or
  ``score(data, y)``: the query sums exact term values, its terms pure and exact as above;
* a variable captured by a nested function (``lambda t: score(data, t)``), whose code is then
  analysed with the captured name tainted.

Anything else -- indexing, slicing, iteration by any other consumer, ``enumerate``, ``zip``,
``reversed``, comparing or hashing the dataset, ``repr``, ``type``, ``id``, passing it to a
primitive, to numpy or to a function this module cannot read, binding it to another name,
``try``/``except`` or ``with`` in a function that holds it, generators -- refuses the proof.
Records must be plain exact values too (no floats: their sums depend on the order).

Known limits, as for the other guards: a program that reaches the dataset around its names
(frame objects, ``gc``, a closure's cells) is not followed; names are resolved when the program
is analysed and are re-checked after each run.
"""
from __future__ import annotations

import builtins
import dis
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional

VERSION = (3, 11)
"""The bytecode this module reads; on another Python the proof is refused (the full check runs)."""

_PLAIN = frozenset({int, bool, str, bytes, Fraction, type(None)})
_ORIGINAL = {name: getattr(builtins, name) for name in ("len", "sum", "sorted", "min", "max", "int", "bool",
                                                        "abs")}
_ON_DATA = frozenset({"len", "sum", "sorted", "min", "max"})
_PURE_BUILTINS = frozenset({"int", "bool", "abs", "len", "min", "max"})
_FORBIDDEN_NAMES = frozenset({
    "locals", "vars", "eval", "exec", "globals", "compile", "_getframe", "currentframe", "f_locals", "f_back",
    "f_globals", "stack", "getouterframes", "getinnerframes", "trace", "get_referrers", "get_referents",
    "get_objects", "cell_contents", "gi_frame", "cr_frame", "ag_frame", "tb_frame", "setattr", "getattr",
    "delattr", "settrace", "setprofile", "frame", "f_code",
})
_SIMPLE_LOADS = frozenset({"LOAD_FAST", "LOAD_DEREF", "LOAD_CONST"})
_BAD_BINARY = frozenset({"/", "**", "@", "/=", "**=", "@="})
_PURE_OPS = frozenset({
    "RESUME", "NOP", "COPY_FREE_VARS", "POP_TOP", "LOAD_FAST", "STORE_FAST", "LOAD_CONST", "LOAD_DEREF",
    "UNPACK_SEQUENCE", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "BINARY_OP", "BINARY_SUBSCR", "UNARY_NEGATIVE",
    "UNARY_NOT", "UNARY_INVERT", "UNARY_POSITIVE", "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE",
    "POP_JUMP_BACKWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_NONE",
    "POP_JUMP_FORWARD_IF_NOT_NONE", "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE",
    "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP", "BUILD_TUPLE",
    "RETURN_VALUE", "COPY", "SWAP", "PUSH_NULL", "PRECALL", "CALL", "LOAD_GLOBAL", "EXTENDED_ARG",
})
_NESTED = {"<genexpr>": ("RETURN_GENERATOR", "YIELD_VALUE"), "<listcomp>": ("BUILD_LIST", "LIST_APPEND")}
MAX_FUNCTIONS = 64
"""Functions analysed for one program at most (beyond: refused)."""


def plain(value: Any) -> bool:
    """A plain exact value: int, bool, str, bytes, None, Fraction, or a tuple of them (exact types)."""
    kind = type(value)
    if kind in _PLAIN:
        return True
    return kind is tuple and all(plain(x) for x in value)


class Refused(Exception):
    """The code uses the dataset in a way this module cannot show order-free (the message says where)."""


@dataclass
class Proof:
    """What the analysis showed, and what must still hold at run time."""

    uses: list[str] = field(default_factory=list)
    """The order-free uses found, for the verdict's explanation (e.g. ``sum(data) in noisy_count``)."""
    watched: dict = field(default_factory=dict)
    """code object -> names that must hold plain exact values whenever a frame of it runs."""
    bindings: list[tuple[dict, str, Any]] = field(default_factory=list)
    """(globals, name, value) resolved by the analysis: the same objects must be there at run time."""

    @property
    def needs_runs(self) -> bool:
        return bool(self.watched)

    def bindings_hold(self) -> bool:
        return all(scope.get(name, _MISSING) is value for scope, name, value in self.bindings)

    def describe(self) -> str:
        return ", ".join(dict.fromkeys(self.uses)) or "no use of the data"


_MISSING = object()


def analyse(program: Callable[..., Any], records: tuple) -> Proof:
    """The proof that ``program`` reads its first argument only through order-free operations on the
    universe's ``records``, or :class:`Refused`."""
    if sys.version_info[:2] != VERSION:
        raise Refused(f"the bytecode of Python {sys.version_info[0]}.{sys.version_info[1]} is not read "
                      f"(only {VERSION[0]}.{VERSION[1]})")
    if not all(plain(r) and type(r) is not float for r in records):
        bad = next(r for r in records if not plain(r))
        raise Refused(f"the record {bad!r} is not a plain exact value (int, str, Fraction, tuples of them)")
    if type(program) is not types.FunctionType:
        raise Refused(f"the mechanism is a {type(program).__name__}, not a plain function")
    analysis = _Analysis(records)
    code = program.__code__
    if code.co_argcount < 1:
        raise Refused(f"{code.co_name} takes its dataset through *args")
    analysis.function(program, {code.co_varnames[0]}, cells={})
    return analysis.proof


class _Analysis:
    def __init__(self, records: tuple) -> None:
        self.records = records
        self.proof = Proof()
        self.done: set = set()
        self.pure_done: set = set()
        self._numbers = all(type(r) in (int, bool, Fraction) for r in records)
        self._ordered: Optional[bool] = None

    # ----- the universe's records -----

    def ordered(self) -> bool:
        """Whether ``<`` is a strict total order on the records (so sorted/min/max give one answer)."""
        if self._ordered is None:
            try:
                ranked = sorted(self.records)
                self._ordered = all(
                    (ranked[i] < ranked[j]) is True and (ranked[j] < ranked[i]) is False
                    and (ranked[j] > ranked[i]) is True and (ranked[i] > ranked[j]) is False
                    and (ranked[i] == ranked[j]) is False
                    for i in range(len(ranked)) for j in range(i + 1, len(ranked)))
            except TypeError:
                self._ordered = False
        return self._ordered

    # ----- functions that receive the data -----

    def function(self, fn: types.FunctionType, tainted: set[str], cells: dict) -> None:
        code = fn.__code__
        self.code(code, fn.__globals__, tainted, fn.__closure__)

    def code(self, code: types.CodeType, scope: dict, tainted: set[str], closure: Any) -> None:
        key = (code, frozenset(tainted))
        if key in self.done:
            return
        self.done.add(key)
        if len(self.done) > MAX_FUNCTIONS:
            raise Refused("too many functions receive the data")
        where = code.co_name
        if code.co_flags & (0x20 | 0x80 | 0x100 | 0x200):  # generator, coroutine, iterable coroutine, async gen
            raise Refused(f"{where} is a generator or coroutine")
        if code.co_exceptiontable:
            raise Refused(f"{where} has try/except or with (an exception could show the order)")
        ins = list(dis.get_instructions(code))
        for instr in ins:
            if instr.opname in ("LOAD_ATTR", "LOAD_METHOD", "LOAD_GLOBAL", "LOAD_NAME", "IMPORT_NAME",
                                "IMPORT_FROM", "STORE_ATTR"):
                name = instr.argval
                if name in _FORBIDDEN_NAMES or (instr.opname != "LOAD_GLOBAL" and str(name).startswith("__")):
                    raise Refused(f"{where} uses {name!r} (it could reach the data around its name)")
            if instr.opname in ("STORE_FAST", "STORE_DEREF", "DELETE_FAST", "DELETE_DEREF") \
                    and instr.argval in tainted:
                raise Refused(f"{where} rebinds {instr.argval!r}")
        for i, instr in enumerate(ins):
            if instr.opname in ("LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_NAME") and instr.argval in tainted:
                self.use(ins, i, code, scope, tainted, closure)

    def use(self, ins: list, i: int, code: types.CodeType, scope: dict, tainted: set[str], closure: Any) -> None:
        where, name = code.co_name, ins[i].argval
        if ins[i].opname == "LOAD_NAME":
            raise Refused(f"{where} reads {name!r} by name")
        if ins[i].opname == "LOAD_CLOSURE":
            return self.captured(ins, i, code, scope, tainted)
        after = [x.opname for x in ins[i + 1:i + 6]]
        # sum(<comprehension over data>)
        if after[:5] == ["GET_ITER", "PRECALL", "CALL", "PRECALL", "CALL"] and ins[i + 2].arg == 0 \
                and ins[i + 3].arg == 0 and ins[i + 4].arg == 1 and ins[i + 5].arg == 1:
            return self.comprehension(ins, i, code, scope, tainted)
        # builtin(data)
        if i >= 1 and after[:2] == ["PRECALL", "CALL"] and ins[i + 1].arg == 1 and ins[i + 2].arg == 1 \
                and ins[i - 1].opname == "LOAD_GLOBAL" and ins[i - 1].arg & 1 \
                and ins[i - 1].argval in _ON_DATA:
            fn = ins[i - 1].argval
            self.builtin(scope, fn, where)
            if fn == "sum" and not self._numbers:
                raise Refused("sum(data) over records that are not all ints, bools or Fractions")
            if fn in ("sorted", "min", "max") and not self.ordered():
                raise Refused(f"{fn}(data) over records that < does not order strictly and totally")
            self.proof.uses.append(f"{fn}(data) in {where}")
            return None
        # f(..., data, ...)
        return self.argument(ins, i, code, scope, tainted)

    def builtin(self, scope: dict, name: str, where: str) -> None:
        if name in scope:
            raise Refused(f"{where} calls a module-level {name!r}, not the builtin")
        table = scope.get("__builtins__", builtins)
        table = table if isinstance(table, dict) else getattr(table, "__dict__", {})
        if table.get(name) is not _ORIGINAL[name]:
            raise Refused(f"the builtin {name!r} was replaced")
        self.proof.bindings.append((scope, name, _MISSING))  # must stay unshadowed
        self.proof.bindings.append((table, name, _ORIGINAL[name]))

    def comprehension(self, ins: list, i: int, code: types.CodeType, scope: dict, tainted: set[str]) -> None:
        where = code.co_name
        if ins[i - 1].opname != "MAKE_FUNCTION" or ins[i - 1].arg not in (0, 8) or ins[i - 2].opname != "LOAD_CONST":
            raise Refused(f"{where} iterates the data other than in sum(...)")
        inner = ins[i - 2].argval
        if not isinstance(inner, types.CodeType) or inner.co_name not in _NESTED:
            raise Refused(f"{where} iterates the data other than in sum(...)")
        start = i - 2
        if ins[i - 1].arg == 8:
            if ins[i - 3].opname != "BUILD_TUPLE":
                raise Refused(f"{where}: an unexpected comprehension")
            k = ins[i - 3].arg
            captured = ins[i - 3 - k:i - 3]
            if len(captured) != k or any(x.opname != "LOAD_CLOSURE" for x in captured):
                raise Refused(f"{where}: an unexpected comprehension")
            if any(x.argval in tainted for x in captured):
                raise Refused(f"{where}: a comprehension over the data also captures the data")
            start = i - 3 - k
        head = ins[start - 1] if start >= 1 else None
        if head is None or head.opname != "LOAD_GLOBAL" or not head.arg & 1 or head.argval != "sum":
            raise Refused(f"{where} iterates the data other than in sum(...)")
        self.builtin(scope, "sum", where)
        self.pure(inner, scope, kind=inner.co_name)
        self.proof.watched[inner] = tuple(inner.co_freevars)
        self.proof.uses.append(f"sum({inner.co_name[1:-1]} of a pure term) in {where}")

    def captured(self, ins: list, i: int, code: types.CodeType, scope: dict, tainted: set[str]) -> None:
        where = code.co_name
        j = i
        while j < len(ins) and ins[j].opname == "LOAD_CLOSURE":
            j += 1
        if j + 2 >= len(ins) or ins[j].opname != "BUILD_TUPLE" or ins[j + 1].opname != "LOAD_CONST" \
                or ins[j + 2].opname != "MAKE_FUNCTION" or not ins[j + 2].arg & 8:
            raise Refused(f"{where} captures the data in an unexpected way")
        inner = ins[j + 1].argval
        if not isinstance(inner, types.CodeType):
            raise Refused(f"{where} captures the data in an unexpected way")
        if inner.co_name in _NESTED:
            raise Refused(f"{where}: a comprehension captures the data")
        names = {x.argval for x in ins[j - ins[j].arg:j]}
        inner_tainted = {n for n in inner.co_freevars if n in tainted and n in names}
        if ins[j + 2].arg & ~8:
            raise Refused(f"{where}: a nested function with defaults or annotations captures the data")
        self.code(inner, scope, inner_tainted, None)
        self.proof.uses.append(f"a closure ({inner.co_name}) in {where}")

    def argument(self, ins: list, i: int, code: types.CodeType, scope: dict, tainted: set[str]) -> None:
        """``f(a, data, b)``: f a module-level name, every argument one simple load."""
        where = code.co_name
        j = i
        while j >= 1 and (ins[j - 1].opname in _SIMPLE_LOADS
                          or (ins[j - 1].opname == "LOAD_GLOBAL" and not ins[j - 1].arg & 1)):
            j -= 1
        head = ins[j - 1] if j >= 1 else None
        k = i
        while k + 1 < len(ins) and (ins[k + 1].opname in _SIMPLE_LOADS
                                    or (ins[k + 1].opname == "LOAD_GLOBAL" and not ins[k + 1].arg & 1)):
            k += 1
        count = k - j + 1
        if head is None or head.opname != "LOAD_GLOBAL" or not head.arg & 1 or k + 2 >= len(ins) \
                or ins[k + 1].opname != "PRECALL" or ins[k + 2].opname != "CALL" \
                or ins[k + 1].arg != count or ins[k + 2].arg != count:
            raise Refused(f"{where} uses the data other than through len, sum, sorted, min, max, a sum over it, "
                          f"or as an argument of a module function (line {_line(ins, i)})")
        position = i - j
        if any(ins[p].opname in ("LOAD_FAST", "LOAD_DEREF") and ins[p].argval in tainted
               for p in range(j, k + 1) if p != i):
            raise Refused(f"{where} passes the data twice to one call")
        name = head.argval
        target = scope.get(name, _MISSING)
        if target is _MISSING:
            raise Refused(f"{where} passes the data to {name!r}, which is not a module-level name")
        self.proof.bindings.append((scope, name, target))
        if _is_query(target):
            self.query(target, position, name, where)
            return
        if type(target) is not types.FunctionType:
            raise Refused(f"{where} passes the data to {name!r}, a {type(target).__name__}")
        inner = target.__code__
        if position >= inner.co_argcount:
            raise Refused(f"{where} passes the data to {name!r} beyond its positional parameters")
        self.function(target, {inner.co_varnames[position]}, cells={})
        self.proof.uses.append(f"{name}(data) in {where}")

    def query(self, query: Any, position: int, name: str, where: str) -> None:
        from ...dsl.queries import Linear  # noqa: PLC0415
        if position != 0 or type(query) is not Linear:
            raise Refused(f"{where} passes the data to the query {name!r}, not a sum of record terms "
                          "(count/total/mean) with the data first")
        for _, _, term in query.parts:
            fn = term.fn
            if type(fn) is not types.FunctionType:
                raise Refused(f"the record term of {name!r} is a {type(fn).__name__}")
            self.pure_function(fn)
        if not plain(query.const) or not plain(query.coef):
            raise Refused(f"the query {name!r} has an inexact constant")
        self.proof.uses.append(f"the query {name}(data) in {where}")

    # ----- pure and exact code -----

    def pure_function(self, fn: types.FunctionType) -> None:
        code = fn.__code__
        if code in self.pure_done:
            return
        if code.co_flags & (0x04 | 0x08):
            raise Refused(f"{code.co_name} takes *args or **kwargs")
        if fn.__closure__ and not all(plain(_cell(c)) for c in fn.__closure__):
            raise Refused(f"{code.co_name} captures a value that is not plain")
        if fn.__defaults__ and not all(plain(d) for d in fn.__defaults__):
            raise Refused(f"{code.co_name} has a default that is not plain")
        if fn.__kwdefaults__:
            raise Refused(f"{code.co_name} has keyword-only defaults")
        self.pure(code, fn.__globals__, kind="function")
        self.proof.watched[code] = tuple(code.co_varnames[:code.co_argcount]) + tuple(code.co_freevars)

    def pure(self, code: types.CodeType, scope: dict, kind: str) -> None:
        """Refuse unless ``code`` is pure and exact given plain exact inputs (see the module docstring)."""
        if code in self.pure_done:
            return
        self.pure_done.add(code)
        where = code.co_name
        if len(self.pure_done) > MAX_FUNCTIONS:
            raise Refused("too many functions in the per-record terms")
        if code.co_exceptiontable:
            raise Refused(f"{where} has try/except or with")
        allowed = set(_PURE_OPS)
        if kind in _NESTED:
            allowed.update(_NESTED[kind])
            allowed.add("FOR_ITER")
        elif code.co_flags & (0x20 | 0x80 | 0x100 | 0x200):
            raise Refused(f"{where} is a generator or coroutine")
        ins = list(dis.get_instructions(code))
        loops = 0
        for index, instr in enumerate(ins):
            op = instr.opname
            if op not in allowed:
                raise Refused(f"{where}: {op} in a per-record term (line {_line(ins, index)})")
            if op == "FOR_ITER":
                loops += 1
                if loops > 1 or ins[index - 1].opname != "LOAD_FAST" or ins[index - 1].argval != ".0":
                    raise Refused(f"{where}: a loop inside a per-record term")
            if op == "LOAD_FAST" and instr.argval == ".0" and (index + 1 >= len(ins) or ins[index + 1].opname
                                                               != "FOR_ITER"):
                raise Refused(f"{where} reads its iterator")
            if op == "BINARY_OP" and instr.argrepr in _BAD_BINARY:
                raise Refused(f"{where} uses {instr.argrepr!r} (a float could arise)")
            if op == "LOAD_CONST" and not plain(instr.argval):
                raise Refused(f"{where} uses the constant {instr.argval!r}, not a plain exact value")
            if op == "LOAD_GLOBAL":
                self.pure_global(instr, scope, where)

    def pure_global(self, instr: Any, scope: dict, where: str) -> None:
        name = instr.argval
        value = scope.get(name, _MISSING)
        if value is _MISSING:
            if name not in _PURE_BUILTINS:
                raise Refused(f"{where} calls the builtin {name!r} in a per-record term")
            self.builtin(scope, name, where)
            return
        self.proof.bindings.append((scope, name, value))
        if value is Fraction:
            return
        if type(value) is types.FunctionType:
            self.pure_function(value)
            return
        if instr.arg & 1 or not plain(value):
            raise Refused(f"{where} uses {name!r} (a {type(value).__name__}) in a per-record term")


def _is_query(value: Any) -> bool:
    from ...dsl.queries import Query  # noqa: PLC0415
    return isinstance(value, Query)


def _cell(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:
        return None


def _line(ins: list, i: int) -> Any:
    for instr in reversed(ins[:i + 1]):
        if instr.starts_line:
            return instr.starts_line
    return "?"


class Watch:
    """While active (a context manager), every frame of a watched code object is checked on entry:
    the names it must hold plain exact values do (see :class:`Proof`); ``broken`` says where not."""

    def __init__(self, proof: Proof) -> None:
        self.watched = proof.watched
        self.broken: Optional[str] = None
        self._previous: Any = None

    def _trace(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            names = self.watched.get(frame.f_code)
            if names is not None and self.broken is None:
                values = frame.f_locals
                for name in names:
                    if name in values and not plain(values[name]):
                        self.broken = (f"{frame.f_code.co_name} ran with {name} = {values[name]!r} "
                                       f"(a {type(values[name]).__name__}, not a plain exact value)")
                        break
        return None

    def __enter__(self) -> "Watch":
        self._previous = sys.gettrace()
        sys.settrace(self._trace)
        return self

    def __exit__(self, *exc: Any) -> None:
        sys.settrace(self._previous)


__all__ = ["Proof", "Refused", "VERSION", "Watch", "analyse", "plain"]
