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
  comparison methods, the order in which the records are compared with it.  Unless the code shows
  them plain (below), that is checked by :class:`Watch` on a run of the program on every multiset;
* ``data.count(v)`` of a value ``v`` known plain;
* an argument of a call ``f(..., data, ...)`` of a module-level Python function, whose code is
  then analysed with that parameter tainted; or of a dpverify query called as ``query(data)`` or
  ``score(data, y)``, or bound by ``score.on(data)`` passed straight to ``dp.exponential``: sums of
  exact record terms (``dp.count``/``total``/``mean``), ``|q|``, ``q1 + q2`` and ``dp.query(fn)`` (fn
  read like a function given the data); ``max_of``/``min_of`` are refused (among equal values of
  different types, 1 and Fraction(1), the first in the data's order is returned);
* a variable captured by a nested function (``lambda t: score(data, t)``) or a comprehension, whose
  code is then analysed with the captured name tainted.  Its errors must not reach code that is not
  read (``int('a')`` fails on the first bad record in the data's order, and a caller that catches the
  error could release its text): the function must be ``dp.exponential``'s score, a primitive's first
  argument, or a local that is only called; a generator must be consumed at once by ``tuple``,
  ``list``, ``set``, ``frozenset``, ``sum``, ``min``, ``max``, ``sorted``, ``any`` or ``all``.

Values are *known plain* from the code when they are plain constants, module-level plain values,
parameters every call with the data passes plain, the loop variables of a comprehension over a plain
value, or the candidates of ``dp.exponential`` seen by a score built in place with plain candidates.
Free variables of a per-record term that are not known plain are checked when the term runs.

Anything else -- indexing, slicing, iteration by any other consumer, ``enumerate``, ``zip``,
``reversed``, comparing or hashing the dataset, ``repr``, ``type``, ``id``, passing it to a
primitive, to numpy or to a function this module cannot read, binding it to another name,
``try``/``except`` or ``with`` in a function that holds it, generators -- refuses the proof.
Records must be plain exact values too (no floats: their sums depend on the order).

Before that, the whole program is read (:class:`_Reach`): the mechanism and every function it can reach,
whether or not it gets the data.  It may call only functions that are read, dpverify's DSL (not its
engine), ``math``, sympy/fractions classes and a few pure builtins; it may store nothing outside its
frames (no global, attribute, subscript or other function's variable), import nothing, and touch no
dunder, frame or trace attribute; each function's ``__builtins__`` must be the real one.  So no code
that is not read can change, during a run, what the analysis read (reaching the data around its names
through frames, ``gc`` or cells needs one of those).  What was read -- each function's code, defaults
and cells, each name resolved -- is compared by identity after the runs (:meth:`Proof.bindings_hold`).
Known limits: the spec module's top level runs first and can change anything; methods of values the
program obtains (sympy numbers, primitives' results) are library code, not read.
"""
from __future__ import annotations

import builtins
import dis
import os
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
                                                        "abs", "tuple", "list", "set", "frozenset", "any", "all")}
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
_COMPREHENSIONS = frozenset({"<genexpr>", "<listcomp>", "<dictcomp>", "<setcomp>"})
_CONSUMERS = frozenset({"tuple", "list", "set", "frozenset", "sum", "min", "max", "sorted", "any", "all"})
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
    functions: list[tuple] = field(default_factory=list)
    """(function, __code__, __defaults__, __kwdefaults__ items, cell contents) of every function read: the
    same objects after the runs, or the proof is dropped."""

    @property
    def needs_runs(self) -> bool:
        return bool(self.watched)

    def bindings_hold(self) -> bool:
        """Whether every name the analysis resolved, and every function it read (code, defaults, cells),
        is still the very object it read."""
        return all(scope.get(name, _MISSING) is value for scope, name, value in self.bindings) \
            and all(_same(_snapshot(entry[0]), entry) for entry in self.functions)

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
    _Reach(analysis.proof).read(program)
    analysis.code(code, program.__globals__, {code.co_varnames[0]}, frozenset())
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

    def code(self, code: types.CodeType, scope: dict, tainted: set[str], plain_names: frozenset,
             over_plain: bool = False, comprehension: bool = False) -> None:
        """Analyse ``code`` with the names ``tainted`` bound to the data and ``plain_names`` known to hold
        plain exact values whenever it runs with the data (never rebound in it).  ``over_plain``: ``code``
        is a comprehension iterating a plain value (its loop variables are plain, its order fixed)."""
        ins = list(dis.get_instructions(code))
        writes = [x.argval for x in ins if x.opname in ("STORE_FAST", "STORE_DEREF", "DELETE_FAST", "DELETE_DEREF")]
        stored = set(writes) | _nested_stores(code)  # a nested nonlocal assignment rebinds a cell of this code
        loop = _loop_targets(ins) if over_plain else set()
        plain_names = frozenset((plain_names - stored) | {n for n in loop if writes.count(n) == 1
                                                          and n not in _nested_stores(code)})
        key = (code, frozenset(tainted), plain_names)
        if key in self.done:
            return
        self.done.add(key)
        if len(self.done) > MAX_FUNCTIONS:
            raise Refused("too many functions receive the data")
        where = code.co_name
        if code.co_flags & (0x80 | 0x100 | 0x200) or (code.co_flags & 0x20 and not comprehension):
            raise Refused(f"{where} is a generator or coroutine")
        if code.co_exceptiontable:
            raise Refused(f"{where} has try/except or with (an exception could show the order)")
        for instr in ins:
            if instr.opname in ("STORE_GLOBAL", "DELETE_GLOBAL", "STORE_NAME", "DELETE_NAME"):
                raise Refused(f"{where} assigns the module-level name {instr.argval!r}")
            if instr.opname in ("LOAD_ATTR", "LOAD_METHOD", "LOAD_GLOBAL", "LOAD_NAME", "IMPORT_NAME",
                                "IMPORT_FROM", "STORE_ATTR"):
                name = instr.argval
                if name in _FORBIDDEN_NAMES or (instr.opname != "LOAD_GLOBAL" and str(name).startswith("__")):
                    raise Refused(f"{where} uses {name!r} (it could reach the data around its name)")
        rebound = tainted & stored
        if rebound:
            raise Refused(f"{where} rebinds {sorted(rebound)[0]!r}")
        context = _Context(code, scope, tainted, plain_names, ins)
        for i, instr in enumerate(ins):
            if instr.opname in ("LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_NAME") and instr.argval in tainted:
                self.use(context, i)

    def use(self, cx: "_Context", i: int) -> None:
        ins, where, name = cx.ins, cx.code.co_name, cx.ins[i].argval
        if ins[i].opname == "LOAD_NAME":
            raise Refused(f"{where} reads {name!r} by name")
        if ins[i].opname == "LOAD_CLOSURE":
            return self.captured(cx, i)
        after = [x.opname for x in ins[i + 1:i + 6]]
        # sum(<comprehension over data>)
        if after[:5] == ["GET_ITER", "PRECALL", "CALL", "PRECALL", "CALL"] and ins[i + 2].arg == 0 \
                and ins[i + 3].arg == 0 and ins[i + 4].arg == 1 and ins[i + 5].arg == 1:
            return self.comprehension(cx, i)
        # builtin(data)
        if i >= 1 and after[:2] == ["PRECALL", "CALL"] and ins[i + 1].arg == 1 and ins[i + 2].arg == 1 \
                and ins[i - 1].opname == "LOAD_GLOBAL" and ins[i - 1].arg & 1 \
                and ins[i - 1].argval in _ON_DATA:
            fn = ins[i - 1].argval
            self.builtin(cx.scope, fn, where)
            if fn == "sum" and not self._numbers:
                raise Refused("sum(data) over records that are not all ints, bools or Fractions")
            if fn in ("sorted", "min", "max") and not self.ordered():
                raise Refused(f"{fn}(data) over records that < does not order strictly and totally")
            self.proof.uses.append(f"{fn}(data) in {where}")
            return None
        # data.count(x), x plain
        if len(after) >= 4 and after[0] == "LOAD_METHOD" and ins[i + 1].argval == "count" \
                and after[2:4] == ["PRECALL", "CALL"] and ins[i + 3].arg == 1 and ins[i + 4].arg == 1:
            if not self.plain_load(cx, ins[i + 2]):
                raise Refused(f"{where} counts a value in the data that is not known plain")
            self.proof.uses.append(f"data.count(...) in {where}")
            return None
        # score.on(data) straight into dp.exponential
        if i >= 2 and after[:2] == ["PRECALL", "CALL"] and ins[i + 1].arg == 1 and ins[i + 2].arg == 1 \
                and ins[i - 1].opname == "LOAD_METHOD" and ins[i - 1].argval == "on":
            return self.bound(cx, i)
        # f(..., data, ...)
        return self.argument(cx, i)

    def builtin(self, scope: dict, name: str, where: str) -> None:
        if name in scope:
            raise Refused(f"{where} calls a module-level {name!r}, not the builtin")
        table = scope.get("__builtins__", builtins)
        table = table if isinstance(table, dict) else getattr(table, "__dict__", {})
        if table.get(name) is not _ORIGINAL[name]:
            raise Refused(f"the builtin {name!r} was replaced")
        self.proof.bindings.append((scope, name, _MISSING))  # must stay unshadowed
        self.proof.bindings.append((table, name, _ORIGINAL[name]))

    def comprehension(self, cx: "_Context", i: int) -> None:
        ins, where, tainted = cx.ins, cx.code.co_name, cx.tainted
        if ins[i - 1].opname != "MAKE_FUNCTION" or ins[i - 1].arg not in (0, 8) or ins[i - 2].opname != "LOAD_CONST":
            raise Refused(f"{where} iterates the data other than in sum(...)")
        inner = ins[i - 2].argval
        if not isinstance(inner, types.CodeType) or inner.co_name not in _NESTED:
            raise Refused(f"{where} iterates the data other than in sum(...)")
        start, captured = i - 2, []
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
        self.builtin(cx.scope, "sum", where)
        self.pure(inner, cx.scope, kind=inner.co_name)
        unknown = tuple(x.argval for x in captured if x.argval not in cx.plain)
        if unknown:  # free variables not known plain: checked when it runs
            self.watch(inner, unknown)
        self.proof.uses.append(f"sum({inner.co_name[1:-1]} of a pure term) in {where}")

    def captured(self, cx: "_Context", i: int) -> None:
        ins, where, tainted = cx.ins, cx.code.co_name, cx.tainted
        first = i
        while first >= 1 and ins[first - 1].opname == "LOAD_CLOSURE":
            first -= 1
        j = i
        while j < len(ins) and ins[j].opname == "LOAD_CLOSURE":
            j += 1
        if j + 2 >= len(ins) or ins[j].opname != "BUILD_TUPLE" or ins[j + 1].opname != "LOAD_CONST" \
                or ins[j + 2].opname != "MAKE_FUNCTION" or ins[j + 2].arg != 8 or ins[j].arg != j - first:
            raise Refused(f"{where} captures the data in an unexpected way")
        inner = ins[j + 1].argval
        if not isinstance(inner, types.CodeType):
            raise Refused(f"{where}: unexpected code captures the data")
        names = {x.argval for x in ins[first:j]}
        inner_tainted = {n for n in inner.co_freevars if n in tainted and n in names}
        plain_names = {n for n in inner.co_freevars if n in cx.plain and n in names}
        if inner.co_name in _COMPREHENSIONS:  # a comprehension that uses the data inside (it iterates something else:
            # the data followed by GET_ITER is refused where it is loaded); over a plain value, its loop
            # variables are plain
            over = j + 6 < len(ins) and self.plain_load(cx, ins[j + 3]) and ins[j + 4].opname == "GET_ITER" \
                and ins[j + 5].opname == "PRECALL" and ins[j + 6].opname == "CALL" and ins[j + 6].arg == 0
            if inner.co_name == "<genexpr>":  # a lazy generator: consumed at once by a builtin that catches nothing
                head = ins[first - 1] if first >= 1 else None
                if not (j + 8 < len(ins) and ins[j + 3].opname in _SIMPLE_LOADS | {"LOAD_GLOBAL"}
                        and not (ins[j + 3].opname == "LOAD_GLOBAL" and ins[j + 3].arg & 1)
                        and [x.opname for x in ins[j + 4:j + 9]] == ["GET_ITER", "PRECALL", "CALL", "PRECALL", "CALL"]
                        and ins[j + 8].arg == 1 and head is not None and head.opname == "LOAD_GLOBAL"
                        and head.arg & 1 and head.argval in _CONSUMERS):
                    raise Refused(f"{where}: a generator that uses the data is not consumed at once by "
                                  "tuple, list, set, frozenset, sum, min, max, sorted, any or all")
                self.builtin(cx.scope, head.argval, where)
            self.code(inner, cx.scope, inner_tainted, frozenset(plain_names), over_plain=over, comprehension=True)
            self.proof.uses.append(f"a {inner.co_name[1:-1]} in {where}")
            return
        if inner.co_argcount >= 1 and self.score_of_exponential(cx, first, j + 2):
            plain_names.add(inner.co_varnames[0])  # called with the candidates only, plain values
        elif self.exponential_score(cx, first, j + 2) is None and not self.contained(cx, first, j + 2):
            raise Refused(f"{where}: the function {inner.co_name} that uses the data could be called, and its "
                          "errors caught, by code that is not read (pass it straight to a dpverify primitive, or "
                          "only call it)")
        self.code(inner, cx.scope, inner_tainted, frozenset(plain_names))
        self.proof.uses.append(f"a closure ({inner.co_name}) in {where}")

    def contained(self, cx: "_Context", first: int, made: int) -> bool:
        """Whether the function built by ``ins[first..made]`` only reaches code that is read or a dpverify
        primitive (whose errors end the run): its first argument straight away, or stored in a local that
        is only called (``f()``) or passed as a primitive's first argument."""
        ins = cx.ins
        if self.primitive_argument(cx, first, made):
            return True
        if made + 1 >= len(ins) or ins[made + 1].opname != "STORE_FAST":
            return False
        name = ins[made + 1].argval
        if name in cx.code.co_cellvars or sum(1 for x in ins if x.argval == name and x.opname.startswith(
                ("STORE", "DELETE"))) != 1:
            return False
        for p, instr in enumerate(ins):
            if instr.argval != name or p == made + 1:
                continue
            if instr.opname != "LOAD_FAST":
                return False
            called = p >= 1 and ins[p - 1].opname == "PUSH_NULL" and p + 2 < len(ins) \
                and ins[p + 1].opname == "PRECALL" and ins[p + 2].opname == "CALL" and ins[p + 2].arg == 0
            if not called and not self.primitive_argument(cx, p, p):
                return False
        return True

    def primitive_argument(self, cx: "_Context", first: int, made: int) -> bool:
        """Whether the value built by ``ins[first..made]`` is the first argument of a call of a dpverify
        primitive whose other arguments are simple loads."""
        ins = cx.ins
        if first < 1 or not self.is_primitive(cx, first - 1):
            return False
        k = made
        while k + 1 < len(ins) and (ins[k + 1].opname in _SIMPLE_LOADS or ins[k + 1].opname == "KW_NAMES"
                                    or (ins[k + 1].opname == "LOAD_GLOBAL" and not ins[k + 1].arg & 1)):
            k += 1
        loads = sum(1 for x in ins[made + 1:k + 1] if x.opname != "KW_NAMES")
        return k + 2 < len(ins) and ins[k + 1].opname == "PRECALL" and ins[k + 2].opname == "CALL" \
            and ins[k + 2].arg == 1 + loads

    def is_primitive(self, cx: "_Context", at: int) -> bool:
        """Whether ``ins[at]`` (with what precedes it) pushes a function of dpverify.dsl.primitives after a NULL."""
        from ...dsl import primitives  # noqa: PLC0415
        ins = cx.ins
        instr = ins[at]

        def primitive(value: Any) -> bool:
            return type(value) is types.FunctionType and getattr(primitives, value.__name__, None) is value

        if instr.opname == "LOAD_GLOBAL" and instr.arg & 1:
            value = cx.scope.get(instr.argval, _MISSING)
            if primitive(value):
                self.proof.bindings.append((cx.scope, instr.argval, value))
                return True
            return False
        if instr.opname == "LOAD_ATTR" and at >= 1 and ins[at - 1].opname == "LOAD_GLOBAL" and ins[at - 1].arg & 1:
            module = cx.scope.get(ins[at - 1].argval, _MISSING)
            value = getattr(module, instr.argval, None) if isinstance(module, types.ModuleType) else None
            if primitive(value):
                self.proof.bindings.append((cx.scope, ins[at - 1].argval, module))
                self.proof.bindings.append((module.__dict__, instr.argval, value))
                return True
        return False

    def score_of_exponential(self, cx: "_Context", first: int, made: int) -> bool:
        """Whether the value built from ``ins[first]`` to ``ins[made]`` is the score argument of a call
        ``dp.exponential(CANDIDATES, <it>, ...)`` (or ``exponential(...)``) whose candidates are a plain
        constant or module-level plain value: the score then runs on plain candidates only."""
        return self.exponential_score(cx, first, made) is True

    def exponential_score(self, cx: "_Context", first: int, made: int) -> Optional[bool]:
        """None unless the value built from ``ins[first]`` to ``ins[made]`` is the score argument of
        ``dp.exponential(CANDIDATES, <it>, ...)`` with CANDIDATES one simple load; else whether the
        candidates are plain (a plain constant or module-level plain value)."""
        ins = cx.ins
        if first < 3:
            return None
        candidates = ins[first - 1]
        if candidates.opname not in _SIMPLE_LOADS and not (candidates.opname == "LOAD_GLOBAL"
                                                            and not candidates.arg & 1):
            return None
        if not self.consumed_as_second(cx, first, made):
            return None
        if candidates.opname == "LOAD_CONST":
            return plain(candidates.argval)
        if candidates.opname == "LOAD_GLOBAL":
            value = cx.scope.get(candidates.argval, _MISSING)
            if value is _MISSING or not plain(value):
                return False
            self.proof.bindings.append((cx.scope, candidates.argval, value))
            return True
        return False

    def consumed_as_second(self, cx: "_Context", first: int, made: int) -> bool:
        """Whether the value built by ``ins[first..made]``, pushed after one simple load that follows
        ``dp.exponential``, is consumed by that call (as its second positional argument)."""
        ins = cx.ins
        if not self.is_exponential(cx, first - 2):
            return False
        above, kw = 0, 0
        for instr in ins[made + 1:]:
            op = instr.opname
            if op in ("LOAD_FAST", "LOAD_CONST", "LOAD_DEREF"):
                above += 1
            elif op == "LOAD_GLOBAL":
                above += 2 if instr.arg & 1 else 1
            elif op in ("PRECALL", "NOP"):
                pass
            elif op in ("LOAD_ATTR", "UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT"):
                if above < 1:  # it would act on the function itself
                    return False
            elif op == "LOAD_METHOD":
                if above < 1:
                    return False
                above += 1
            elif op == "BINARY_OP":  # pops two values: the function must stay below both
                if above < 2:
                    return False
                above -= 1
            elif op == "BUILD_TUPLE":
                if above < instr.arg:
                    return False
                above -= instr.arg - 1
            elif op == "KW_NAMES":
                kw = len(cx.code.co_consts[instr.arg])
            elif op == "CALL":
                if above >= instr.arg + 2:
                    above -= instr.arg + 1
                    kw = 0
                    continue
                return instr.arg == above + 2 and kw <= above
            else:
                return False
            if above < 0:
                return False
        return False

    def is_exponential(self, cx: "_Context", at: int) -> bool:
        """Whether ``ins[at]`` (with what precedes it) pushes dpverify's ``exponential`` after a NULL."""
        from ...dsl import primitives  # noqa: PLC0415
        ins = cx.ins
        instr = ins[at]
        if instr.opname == "LOAD_GLOBAL" and instr.arg & 1:
            value = cx.scope.get(instr.argval, _MISSING)
            if value is primitives.exponential:
                self.proof.bindings.append((cx.scope, instr.argval, value))
                return True
            return False
        if instr.opname == "LOAD_ATTR" and instr.argval == "exponential" and at >= 1 \
                and ins[at - 1].opname == "LOAD_GLOBAL" and ins[at - 1].arg & 1:
            module = cx.scope.get(ins[at - 1].argval, _MISSING)
            if isinstance(module, types.ModuleType) and module.__dict__.get("exponential") is primitives.exponential:
                self.proof.bindings.append((cx.scope, ins[at - 1].argval, module))
                self.proof.bindings.append((module.__dict__, "exponential", primitives.exponential))
                return True
        return False

    def bound(self, cx: "_Context", i: int) -> None:
        """``score.on(data)`` as the score argument of ``dp.exponential(CANDIDATES, score.on(data), ...)``:
        the bound score (which holds the records in the order given) reaches the primitive only, and the
        primitive reads it through the query, whose terms must be pure and exact."""
        ins, where = cx.ins, cx.code.co_name
        holder = ins[i - 2]
        if holder.opname != "LOAD_GLOBAL" or holder.arg & 1:
            raise Refused(f"{where}: .on(data) of something other than a module-level query")
        query = cx.scope.get(holder.argval, _MISSING)
        if not _is_query(query):
            raise Refused(f"{where}: .on(data) of {holder.argval!r}, not a dpverify query")
        self.proof.bindings.append((cx.scope, holder.argval, query))
        if not self.score_of_exponential(cx, i - 2, i + 2):
            raise Refused(f"{where}: {holder.argval}.on(data) is not passed straight to dp.exponential with "
                          "plain candidates")
        self.query(query, 0, holder.argval, where, candidate_plain=True, bound=True, with_candidate=True)

    def argument(self, cx: "_Context", i: int) -> None:
        """``f(a, data, b)``: f a module-level name, every argument one simple load."""
        ins, where, tainted, scope = cx.ins, cx.code.co_name, cx.tainted, cx.scope
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
        plain_args = [self.plain_load(cx, ins[p]) for p in range(j, k + 1)]
        name = head.argval
        target = scope.get(name, _MISSING)
        if target is _MISSING:
            raise Refused(f"{where} passes the data to {name!r}, which is not a module-level name")
        self.proof.bindings.append((scope, name, target))
        if _is_query(target):
            self.query(target, position, name, where, candidate_plain=all(plain_args[1:]) and count <= 2,
                       with_candidate=count == 2 and plain_args[1])
            return
        if type(target) is not types.FunctionType:
            raise Refused(f"{where} passes the data to {name!r}, a {type(target).__name__}")
        inner = target.__code__
        if count > inner.co_argcount or inner.co_flags & 0x04:
            raise Refused(f"{where} passes the data to {name!r} beyond its positional parameters")
        plain_names = {inner.co_varnames[p] for p in range(count) if plain_args[p]}
        plain_names |= {n for n, c in zip(inner.co_freevars, target.__closure__ or ()) if plain(_cell(c))}
        self.code(inner, target.__globals__, {inner.co_varnames[position]}, frozenset(plain_names))
        self.proof.uses.append(f"{name}(data) in {where}")

    def plain_load(self, cx: "_Context", instr: Any) -> bool:
        """Whether a simple load pushes a plain exact value whenever this code runs with the data."""
        if instr.opname == "LOAD_CONST":
            return plain(instr.argval)
        if instr.opname in ("LOAD_FAST", "LOAD_DEREF"):
            return instr.argval in cx.plain
        if instr.opname == "LOAD_GLOBAL" and not instr.arg & 1:
            value = cx.scope.get(instr.argval, _MISSING)
            if value is not _MISSING and plain(value):
                self.proof.bindings.append((cx.scope, instr.argval, value))
                return True
        return False

    def query(self, query: Any, position: int, name: str, where: str, candidate_plain: bool,
              bound: bool = False, with_candidate: bool = False) -> None:
        """A dpverify query given the data first (``query(data)``, ``score(data, y)``, ``score.on(data)``):
        it evaluates itself on ``tuple(data)`` (the data itself) and nothing else sees that tuple."""
        if position != 0:
            raise Refused(f"{where} passes the data to the query {name!r} other than first")
        self.query_parts(query, name, candidate_plain, with_candidate)
        self.proof.uses.append(f"the query {name}{'.on' if bound else ''}(data) in {where}")

    def query_parts(self, query: Any, name: str, candidate_plain: bool, with_candidate: bool = False) -> None:
        """Sums of exact record terms (count/total/mean), |q|, q1 + q2 and dp.query(fn): exact values whatever
        the order.  A max_of/min_of is refused: among equal values of different types (1 and Fraction(1))
        the first one in the data's order is returned."""
        from ...dsl.queries import Abs, Linear, Opaque, Sum  # noqa: PLC0415
        if not plain(query.const) or not plain(query.coef):
            raise Refused(f"the query {name!r} has an inexact constant")
        kind = type(query)
        if kind is Linear:
            for _, _, term in query.parts:
                fn = term.fn
                if type(fn) is not types.FunctionType:
                    raise Refused(f"the record term of {name!r} is a {type(fn).__name__}")
                self.pure_function(fn, watched=not candidate_plain)
        elif kind is Abs:
            self.query_parts(query.inner, name, candidate_plain, with_candidate)
        elif kind is Sum:
            for item in query.items:
                self.query_parts(item, name, candidate_plain, with_candidate)
        elif kind is Opaque and type(query.fn) is types.FunctionType:
            # fn(records) or fn(records, candidate) on tuple(data): read like any function given the data
            inner = query.fn.__code__
            if inner.co_argcount < 1 or inner.co_flags & 0x04:
                raise Refused(f"the query {name!r} takes its data through *args")
            # its second parameter is a plain candidate only when the query is called with one (a score with
            # plain candidates); called as q(data) it keeps its default, which is not known plain
            plain_names = {inner.co_varnames[1]} if with_candidate and inner.co_argcount >= 2 else set()
            plain_names |= {n for n, c in zip(inner.co_freevars, query.fn.__closure__ or ()) if plain(_cell(c))}
            self.code(inner, query.fn.__globals__, {inner.co_varnames[0]}, frozenset(plain_names))
        else:
            raise Refused(f"the query {name!r} is a {kind.__name__} (a max_of/min_of, or unknown): not shown "
                          "order-free")

    # ----- pure and exact code -----

    def pure_function(self, fn: types.FunctionType, watched: bool = False) -> None:
        """A function called with plain exact arguments inside pure code (or, ``watched``, with arguments
        that must be checked plain when it runs, as a query's term called with a candidate)."""
        code = fn.__code__
        if watched:
            self.watch(code, tuple(code.co_varnames[:code.co_argcount]) + tuple(code.co_freevars))
        # every function object, even of code already read: two closures of one code capture different values
        if code.co_flags & (0x04 | 0x08):
            raise Refused(f"{code.co_name} takes *args or **kwargs")
        if fn.__closure__ and not all(plain(_cell(c)) for c in fn.__closure__):
            raise Refused(f"{code.co_name} captures a value that is not plain")
        if fn.__defaults__ and not all(plain(d) for d in fn.__defaults__):
            raise Refused(f"{code.co_name} has a default that is not plain")
        if fn.__kwdefaults__:
            raise Refused(f"{code.co_name} has keyword-only defaults")
        if code in self.pure_done:
            return
        self.pure(code, fn.__globals__, kind="function")

    def watch(self, code: types.CodeType, names: tuple) -> None:
        """Add ``names`` to those checked whenever a frame of ``code`` runs (never drop earlier ones)."""
        self.proof.watched[code] = tuple(dict.fromkeys(self.proof.watched.get(code, ()) + tuple(names)))

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


@dataclass
class _Context:
    code: types.CodeType
    scope: dict
    tainted: set
    plain: frozenset
    ins: list


def _loop_targets(ins: list) -> set:
    """The names a comprehension's loop binds right after its FOR_ITER (directly or by unpacking)."""
    for k, instr in enumerate(ins):
        if instr.opname == "FOR_ITER":
            nxt = ins[k + 1]
            if nxt.opname in ("STORE_FAST", "STORE_DEREF"):
                return {nxt.argval}
            if nxt.opname == "UNPACK_SEQUENCE":
                targets = ins[k + 2:k + 2 + nxt.arg]
                if all(t.opname in ("STORE_FAST", "STORE_DEREF") for t in targets):
                    return {t.argval for t in targets}
            return set()
    return set()


def _nested_stores(code: types.CodeType) -> set:
    """Names that code nested in ``code`` (at any depth) assigns or deletes as free variables."""
    found: set = set()
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= {x.argval for x in dis.get_instructions(const)
                      if x.opname in ("STORE_DEREF", "DELETE_DEREF") and x.argval in const.co_freevars}
            found |= _nested_stores(const)
    return found


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


# ----- the whole program is read: what it can call, and what it may change -----

_CALLABLE_BUILTINS = {name: getattr(builtins, name) for name in (
    "len", "sum", "sorted", "min", "max", "abs", "range", "int", "bool", "tuple", "list", "set", "frozenset",
    "any", "all", "enumerate", "zip", "reversed")}
"""The builtins read code may name: pure functions and types of exact values (their results depend on
their arguments only) -- what the catalogue's programs need."""
_LIBRARIES = ("sympy", "fractions")
"""Libraries whose classes (Rational, Fraction, ...) read code may call; of their modules only math, whose
functions are pure, may be named (sympy's has sympify, which evaluates text)."""
_STATE_OPS = frozenset({
    "STORE_GLOBAL", "DELETE_GLOBAL", "STORE_NAME", "DELETE_NAME", "LOAD_NAME", "STORE_ATTR", "DELETE_ATTR",
    "STORE_SUBSCR", "DELETE_SUBSCR", "IMPORT_NAME", "IMPORT_FROM", "IMPORT_STAR", "LOAD_CLASSDEREF",
    "LOAD_BUILD_CLASS", "SETUP_ANNOTATIONS",
})
MAX_READ = 256
"""Functions read for one program at most (beyond: refused)."""


class _Reach:
    """Reads the program and every function it can reach (whether or not it gets the data), refusing any
    call of code that is not read, a dpverify function or query, a library function (sympy, math,
    fractions) or an allowed builtin, any store to state outside a frame (a global, an attribute, a
    subscript, a cell of another function) and any access to frames, code, globals, builtins,
    closures or defaults: nothing unread can change what the analysis read between the analysis and the
    runs, or during a run (the attack reproducers of tests/test_attack_orderfree.py).  What was read is
    recorded (:attr:`Proof.functions`, :attr:`Proof.bindings`) and compared after the runs."""

    def __init__(self, proof: Proof) -> None:
        self.proof = proof
        self.seen: set = set()
        self.todo: list = []

    def read(self, program: types.FunctionType) -> None:
        self.todo.append(program)
        while self.todo:
            fn = self.todo.pop()
            if id(fn) in self.seen:
                continue
            self.seen.add(id(fn))
            if len(self.seen) > MAX_READ:
                raise Refused("the program reaches too many functions")
            self.function(fn)

    def function(self, fn: types.FunctionType) -> None:
        where = fn.__code__.co_name
        # CPython 3.11 looks builtins up in the function's own __builtins__, and a function made at run time
        # takes them from its globals' __builtins__: both must be the real ones
        if fn.__builtins__ is not builtins.__dict__:
            raise Refused(f"{where} runs with its own __builtins__, not the builtins module's")
        scope = fn.__globals__
        table = scope.get("__builtins__", _MISSING)
        if table is not builtins and table is not builtins.__dict__:
            raise Refused(f"the module of {where} has its own __builtins__")
        self.proof.bindings.append((scope, "__builtins__", table))
        for value in (fn.__defaults__ or ()):
            self.value(value, f"a default of {where}")
        for value in (fn.__kwdefaults__ or {}).values():
            self.value(value, f"a default of {where}")
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            self.value(_cell(cell), f"the variable {name!r} {where} captures")
        self.proof.functions.append(_snapshot(fn))
        self.code(fn.__code__, scope)

    def code(self, code: types.CodeType, scope: dict) -> None:
        where = code.co_name
        ins = list(dis.get_instructions(code))
        for k, instr in enumerate(ins):
            op = instr.opname
            if op in _STATE_OPS:
                raise Refused(f"{where}: {op} {instr.argval!r} (line {_line(ins, k)}) changes or reaches state "
                              "outside the program's frames")
            if op in ("STORE_DEREF", "DELETE_DEREF") and instr.argval in code.co_freevars:
                raise Refused(f"{where} assigns the variable {instr.argval!r} of another function")
            if op in ("LOAD_ATTR", "LOAD_METHOD"):
                name = str(instr.argval)
                if name in _FORBIDDEN_NAMES or name.startswith("__"):
                    raise Refused(f"{where} uses the attribute {name!r} (line {_line(ins, k)})")
            if op == "LOAD_GLOBAL":
                self.global_(ins, k, scope, where)
            if op == "LOAD_CONST" and isinstance(instr.argval, types.CodeType):
                self.code(instr.argval, scope)

    def global_(self, ins: list, k: int, scope: dict, where: str) -> None:
        name = ins[k].argval
        value = scope.get(name, _MISSING)
        if value is _MISSING:
            value = builtins.__dict__.get(name, _MISSING)
            if value is _MISSING or _CALLABLE_BUILTINS.get(name, _MISSING) is not value:
                raise Refused(f"{where} uses the builtin {name!r}, whose effects are not read")
            self.proof.bindings.append((scope, name, _MISSING))
            self.proof.bindings.append((builtins.__dict__, name, value))
            return
        self.proof.bindings.append((scope, name, value))
        self.value(value, f"{name!r} in {where}")
        # dp.primitive, dpverify.dsl.x.y: the attributes of a dpverify module are what is called
        j = k + 1
        while isinstance(value, types.ModuleType) and _dpverify_module(value) and j < len(ins) \
                and ins[j].opname in ("LOAD_ATTR", "LOAD_METHOD"):
            attr = value.__dict__.get(ins[j].argval, _MISSING)
            if attr is _MISSING:
                raise Refused(f"{where} uses {name}.{ins[j].argval}, which does not exist")
            self.proof.bindings.append((value.__dict__, ins[j].argval, attr))
            self.value(attr, f"{name}.{ins[j].argval} in {where}")
            value, j = attr, j + 1

    def value(self, value: Any, what: str, depth: int = 0) -> None:
        """Refuse unless ``value`` (reachable by read code) is harmless: a plain or library value, a
        dpverify function, class or query, an allowed builtin, or a Python function (then read too)."""
        kind = type(value)
        if plain(value) or kind in (float, complex) or harmless(value):
            return
        if kind is types.FunctionType:
            if not _dpverify_function(value):
                self.todo.append(value)
            return
        if any(value is b for b in _CALLABLE_BUILTINS.values()):
            return
        if isinstance(value, types.ModuleType):
            if _dpverify_module(value) or value.__name__ == "math":
                return
            raise Refused(f"{what} is the module {value.__name__}, whose functions are not read")
        if _is_query(value):
            for fn in _query_functions(value):
                self.value(fn, what, depth + 1)
            return
        if isinstance(value, type) and (_dsl_name(str(getattr(value, "__module__", "")))
                                        or str(getattr(value, "__module__", "")).split(".")[0] in _LIBRARIES):
            return
        if _dsl_name(str(getattr(kind, "__module__", ""))) and depth < 3 \
                and hasattr(value, "__dict__"):  # a dpverify constant (dp.REPLACE_ONE, dp.REJECTED): what it holds
            for item in vars(value).values():
                self.value(item, what, depth + 1)
            return
        if kind in (tuple, list, frozenset, set, dict) and depth < 3 and len(value) <= 1000:
            items = list(value.items()) if kind is dict else list(value)
            for item in items:
                self.value(item, what, depth + 1)
            return
        raise Refused(f"{what} is a {kind.__name__}, whose code is not read")


def harmless(value: Any) -> bool:
    """A value whose methods are library code: plain, float, or a sympy object."""
    if plain(value) or type(value) in (float, complex):
        return True
    try:
        import sympy  # noqa: PLC0415
    except ImportError:  # pragma: no cover
        return False
    return isinstance(value, sympy.Basic) and str(type(value).__module__).startswith("sympy")


_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
"""dpverify's own directory (this module is dpverify/engine/datasets/orderfree.py)."""


def _dsl_name(name: str) -> bool:
    """dpverify's namespace and its DSL (the primitives, queries, universes): not the engine's internals."""
    return name == "dpverify" or name == "dpverify.dsl" or name.startswith("dpverify.dsl.")


def _dpverify_module(module: types.ModuleType) -> bool:
    return _dsl_name(module.__name__)


def _dpverify_function(fn: types.FunctionType) -> bool:
    """A function of dpverify itself (defined in the package, and the attribute of its module)."""
    module = sys.modules.get(str(getattr(fn, "__module__", "")))
    return module is not None and _dsl_name(module.__name__) and module.__dict__.get(fn.__name__) is fn \
        and fn.__code__.co_filename.startswith(_PACKAGE)


def _query_functions(query: Any) -> list:
    from ...dsl.queries import Abs, Extreme, Linear, Opaque, Sum  # noqa: PLC0415
    kind = type(query)
    if kind is Linear:
        return [term.fn for _, _, term in query.parts]
    if kind is Extreme:
        return [query.term.fn] if query.term is not None else []
    if kind is Abs:
        return [query.inner]
    if kind is Sum:
        return list(query.items)
    if kind is Opaque:
        return [query.fn]
    raise Refused(f"a query of kind {kind.__name__} is not read")


def _snapshot(fn: types.FunctionType) -> tuple:
    return (fn, fn.__code__, fn.__defaults__, tuple((fn.__kwdefaults__ or {}).items()),
            tuple(_cell(c) for c in fn.__closure__ or ()))


def _same(a: tuple, b: tuple) -> bool:
    return a[0] is b[0] and a[1] is b[1] and a[2] is b[2] and len(a[3]) == len(b[3]) \
        and all(x[0] == y[0] and x[1] is y[1] for x, y in zip(a[3], b[3])) \
        and len(a[4]) == len(b[4]) and all(x is y for x, y in zip(a[4], b[4]))


class Watch:
    """While active (a context manager), every frame of a watched code object is checked on entry:
    the names it must hold plain exact values do (see :class:`Proof`); ``broken`` says where not."""

    def __init__(self, proof: Proof) -> None:
        self.watched = proof.watched
        self.broken: Optional[str] = None
        self._previous: Any = None
        self._tracer = self._trace  # one bound method, to see that it is still the trace function at the end

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
        sys.settrace(self._tracer)
        return self

    def __exit__(self, *exc: Any) -> None:
        if sys.gettrace() is not self._tracer and self.broken is None:  # read code cannot, but be sure
            self.broken = "tracing was switched off during the run"
        sys.settrace(self._previous)


__all__ = ["Proof", "Refused", "VERSION", "Watch", "analyse", "plain"]
