"""The whitelist gate of the structural reading: a static read of the program's bytecode.

The structural run (:mod:`.reading`) hands the program stand-ins (the generic dataset, guarded
symbols, noisy handles) and refuses every *dunder* use of them it sees.  A blacklist of probes on a
runtime proxy cannot be complete -- ``object.__repr__(x)``, an ``except`` that catches the error a
real dataset raises, a side effect of a per-record term, hidden state stepped through a call -- so
before a structural result is trusted, the program and everything it can call must pass this gate
(CPython 3.11 bytecode; any other version: no structural proof).  Its rules are a whitelist:

* the whole program is read by :class:`dpverify.engine.datasets.orderfree._Reach` (reused as it
  is): it may call only functions it reads, dpverify's DSL, ``math``, sympy/fractions classes and the
  pure builtins ``len sum sorted min max abs range int bool tuple list set frozenset any all enumerate
  zip reversed``; it stores nothing outside its frames (no global, attribute, subscript or other
  function's variable), imports nothing, names no dunder, frame, ``getattr``/``setattr``... -- so
  ``isinstance``, ``type``, ``hasattr``, ``str``, ``repr``, ``object``, ``iter``, ``next``, ``id`` are
  refused by name;
* no code read has an exception handler (``co_exceptiontable`` non-empty: ``try``, ``with``): an error
  the structural run raises (a refusal, an ``IndexError`` a real dataset would raise) always ends the
  run, and no real run can take a branch the structural run never reached through an exception;
* no user generator function or coroutine (its state lives between calls);
* an attribute is read only on a dpverify module or ``math`` (``dp.geometric``, ``math.log``), or is
  one of :data:`METHODS` (``data.count``, ``score.on``), or is ``out.append`` of a list the frame made
  itself (``out = []``, bound once, seen by no nested code): no other ``append``/``update``/``pop``
  (mutation of anything reachable), no probe of a value's attributes.

* of dpverify only :data:`DSL_CALLABLES` (the primitives, the query factories, ``interval``) may be
  named, and of the libraries' classes only Fraction and sympy's Rational and Integer (library code
  formats a stand-in that the guards let through: ``f"{SympifyError(eps)}"`` named its class).

The per-record term of ``sum(<t(x)> for x in data)`` is also checked when the structural run meets
it (:func:`pure_term`): it is evaluated once per record of the *universe* and read as a table, which
is the real program's value only if the term is a function of its record alone; so is every function
of a query whose sensitivity is derived (:func:`pure_query`, called by :mod:`.lemmas`).

Anything the gate cannot classify: :class:`~.values.NotStructural` (no structural proof; the exact
path's verdict stands).
"""
from __future__ import annotations

import builtins
import dis
import sys
import types
from typing import Any

from ..datasets import orderfree
from .values import NotStructural

METHODS = frozenset({"count", "on"})
"""Attribute names the program may read on a value that is not a module: ``data.count(v)`` and
``query.on(data)`` (read-only methods; a dpverify stand-in guards everything else)."""

_MODULE_OK = ("dpverify", "math")
_GENERATOR_FLAGS = 0x20 | 0x80 | 0x100 | 0x200
_COMPREHENSIONS = frozenset({"<genexpr>", "<listcomp>", "<setcomp>", "<dictcomp>"})


def admit(program: Any) -> None:
    """Raise :class:`NotStructural` unless ``program`` and everything it can reach pass the gate."""
    if sys.version_info[:2] != orderfree.VERSION:
        raise NotStructural(f"the gate reads the bytecode of Python {orderfree.VERSION[0]}.{orderfree.VERSION[1]} "
                            "only")
    if type(program) is not types.FunctionType:
        raise NotStructural("the mechanism is not a plain Python function")
    proof = orderfree.Proof()
    try:
        orderfree._Reach(proof).read(program)
    except orderfree.Refused as err:
        raise NotStructural(f"the gate refuses the program: {err}") from None
    except RecursionError:
        raise NotStructural("the gate refuses the program: nested too deeply to read") from None
    for entry in proof.functions:
        fn = entry[0]
        _code(fn.__code__, fn.__globals__)
        for value in (fn.__defaults__ or ()) + tuple((fn.__kwdefaults__ or {}).values()) + entry[4]:
            _dsl_callable(value, f"a default or captured value of {fn.__code__.co_name}")
    for scope, name, value in proof.bindings:
        if name != "__builtins__" and scope is not builtins.__dict__:  # builtins: _Reach's own whitelist
            _dsl_callable(value, repr(name))


DSL_CALLABLES = frozenset({"exp", "log", "sqrt", "laplace", "gaussian", "exponential_noise", "geometric",
                           "exponential", "randomized_response", "laplace_mechanism", "count", "total", "mean",
                           "max_of", "min_of", "query", "interval", "bernoulli", "uniform", "categorical"})
"""The dpverify functions a program read structurally may name: the primitives (the structural run
answers them or refuses them), the query factories and ``interval``; every other DSL function or class
(``dp.check``, ``dp.spec``, ``dp.universe``, ``dp.symbol``...) is not a mechanism's business and is
refused, so no DSL helper can tell a stand-in from a real value for the program."""


def _library_classes() -> tuple:
    import fractions

    import sympy
    return (fractions.Fraction, sympy.Rational, sympy.Integer)


def _dsl_callable(value: Any, what: str, depth: int = 0) -> None:
    """Refuse a dpverify callable other than :data:`DSL_CALLABLES`, and a library class other than
    Fraction, sympy's Rational and Integer (a class such as ``sympy.Basic`` or an exception class holds a
    stand-in without touching it, and its text, made by library code the guards let through, would name
    the stand-in's class)."""
    if type(value) in (tuple, list, frozenset, set, dict) and depth < 3:
        for item in (list(value.items()) if type(value) is dict else value):
            _dsl_callable(item, what, depth + 1)
        return
    if not callable(value) or isinstance(value, types.ModuleType):
        return
    if isinstance(value, type) and value.__module__ != "builtins" and not str(value.__module__).startswith("dpverify"):
        if value not in _library_classes():
            raise NotStructural(f"the gate refuses {what}: the library class {value.__module__}.{value.__qualname__} "
                                "(only Fraction, sympy's Rational and Integer)")
        return
    module = str(getattr(value, "__module__", "") or "")
    if not (module == "dpverify" or module.startswith("dpverify.")):
        return  # not dpverify's own (a spec module's function: read by the gate like any other)
    from ... import dsl  # the DSL package, which the root facade re-exports (never the root: it imports every layer)
    if type(value) is types.FunctionType and any(getattr(dsl, n, None) is value for n in DSL_CALLABLES):
        return
    from ...dsl.queries import Query
    if isinstance(value, Query):
        return  # a query object (its terms are read by the gate)
    raise NotStructural(f"the gate refuses {what}: the dpverify callable "
                        f"{getattr(value, '__qualname__', type(value).__name__)} is not a primitive or a query "
                        f"factory ({', '.join(sorted(DSL_CALLABLES))})")


def _allowed_module(value: Any) -> bool:
    return isinstance(value, types.ModuleType) and (value.__name__ == "math" or orderfree._dsl_name(value.__name__))


def _code(code: types.CodeType, scope: dict) -> None:
    where = f"{code.co_name} (line {code.co_firstlineno})"
    if code.co_exceptiontable:
        raise NotStructural(f"the gate refuses {where}: an exception handler (try/except/with) could catch an "
                            "error only real datasets raise")
    if code.co_flags & _GENERATOR_FLAGS and code.co_name not in _COMPREHENSIONS:
        raise NotStructural(f"the gate refuses {where}: a generator or coroutine keeps state between calls")
    ins = list(dis.get_instructions(code))
    module_on_stack: Any = None  # the module the previous instruction pushed (LOAD_GLOBAL m, m.sub)
    for k, instr in enumerate(ins):
        op = instr.opname
        if op in ("LOAD_ATTR", "LOAD_METHOD"):
            name = str(instr.argval)
            if module_on_stack is not None:
                value = getattr(module_on_stack, name, None)
                _dsl_callable(value, f"{name!r} in {where}")
                module_on_stack = value if _allowed_module(value) else None
                continue
            if name not in METHODS and not (name == "append" and _fresh_local_list(ins, k, code)):
                raise NotStructural(f"the gate refuses {where}: it reads the attribute {name!r} of a value "
                                    f"(only a dpverify module's, math's, or {', '.join(sorted(METHODS))})")
            module_on_stack = None
            continue
        if op == "LOAD_GLOBAL":
            value = scope.get(instr.argval, builtins.__dict__.get(instr.argval))
            module_on_stack = value if _allowed_module(value) else None
            continue
        if op not in ("PRECALL", "CACHE", "EXTENDED_ARG"):
            module_on_stack = None
        if op == "LOAD_CONST" and isinstance(instr.argval, types.CodeType):
            _code(instr.argval, scope)


def _fresh_local_list(ins: list, k: int, code: types.CodeType) -> bool:
    """``out.append`` where ``out`` is a plain local of this frame (no nested code sees it) bound once, to a
    new empty list: a list no other code and no other call can see (passing it to a function gives that
    function a parameter, whose ``append`` is refused there)."""
    if k < 1 or ins[k - 1].opname != "LOAD_FAST":
        return False
    name = ins[k - 1].argval
    if name in code.co_cellvars or name in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
        return False
    binds = [j for j, x in enumerate(ins) if x.argval == name and x.opname in ("STORE_FAST", "DELETE_FAST")]
    if len(binds) != 1:
        return False
    j = binds[0]
    if j >= 1 and ins[j - 1].opname == "BUILD_LIST" and ins[j - 1].arg == 0:
        return True  # out = []
    # out, count = [], 0: BUILD_LIST 0, LOAD_CONST, STORE_FAST count, STORE_FAST out
    return j >= 3 and ins[j - 3].opname == "BUILD_LIST" and ins[j - 3].arg == 0 \
        and ins[j - 2].opname == "LOAD_CONST" and ins[j - 1].opname == "STORE_FAST"


# ----- the per-record term of sum(<t(x)> for x in data) -----

_TERM_BUILTINS = frozenset({"int", "bool", "abs", "min", "max", "len", "sum", "range", "tuple", "sorted",
                            "any", "all"})
_TERM_OPS = orderfree._PURE_OPS | {"RETURN_GENERATOR", "YIELD_VALUE", "FOR_ITER", "KW_NAMES", "BUILD_LIST",
                                   "LIST_APPEND", "LIST_TO_TUPLE", "MAKE_FUNCTION", "LOAD_CLOSURE",
                                   "BUILD_CONST_KEY_MAP", "COPY_FREE_VARS", "MAKE_CELL", "CONTAINS_OP",
                                   "GET_ITER", "UNPACK_SEQUENCE", "BINARY_OP", "RETURN_VALUE"}
_MAX_TERM_FUNCTIONS = 32


def pure_term(generator: Any, cells: tuple) -> None:
    """Raise :class:`NotStructural` unless the generator expression's term is a function of its record
    alone: its code (and every function it calls) in :data:`_TERM_OPS` -- no attribute, no store outside
    its frame, no exception handler, no loop but its own and those over its own values -- calling only
    :data:`_TERM_BUILTINS`, sympy/fractions classes and Python functions checked the same way; every
    global, default and captured value it reads immutable and inert (plain, sympy, float, tuples,
    frozensets and dicts of them), so no iterator or container is shared between two records."""
    done: set = set()
    for cell in cells:
        _inert(cell.cell_contents, "a variable the term captures")
    _term_code(generator.gi_code, generator.gi_frame.f_globals, done, top=True)


def pure_query(query: Any) -> None:
    """Raise :class:`NotStructural` unless every function of the dpverify query (its record terms, a
    dp.query's function) is pure in the sense of :func:`pure_term`: the derivation evaluates a term once
    per record of the domain, a real run once per record of the dataset, so a term with state shared
    between records (a captured generator stepped by ``zip``) would be derived wrongly."""
    try:
        fns = orderfree._query_functions(query)
    except orderfree.Refused as err:
        raise NotStructural(f"the gate does not read the query: {err}") from None
    done: set = set()
    for fn in fns:
        if type(fn) is not types.FunctionType:
            from ...dsl.queries import Query
            if isinstance(fn, Query):  # a nested query (|q|, q1 + q2)
                pure_query(fn)
                continue
            raise NotStructural(f"a query's function is a {type(fn).__name__}, not read")
        for value in (fn.__defaults__ or ()) + tuple((fn.__kwdefaults__ or {}).values()):
            _inert(value, f"a default of {fn.__code__.co_name}")
        for cell in fn.__closure__ or ():
            _inert(orderfree._cell(cell), f"a variable {fn.__code__.co_name} captures")
        _term_code(fn.__code__, fn.__globals__, done)


def _inert(value: Any, what: str, depth: int = 0) -> None:
    if orderfree.harmless(value):
        return
    kind = type(value)
    if kind in (tuple, frozenset) and depth < 4:
        for item in value:
            _inert(item, what, depth + 1)
        return
    if kind is dict and depth < 4:
        for k, item in value.items():
            _inert(k, what, depth + 1)
            _inert(item, what, depth + 1)
        return
    raise NotStructural(f"a per-record term (sum(... for x in data), a query's term): {what} is a {kind.__name__} (only plain, sympy "
                        "and float values, and tuples, frozensets and dicts of them: a term may share no state "
                        "between records)")


def _term_code(code: types.CodeType, scope: dict, done: set, top: bool = False) -> None:
    if code in done:
        return
    done.add(code)
    if len(done) > _MAX_TERM_FUNCTIONS:
        raise NotStructural("the term of sum(... for x in data) reaches too many functions")
    where = f"the term of sum(... for x in data) ({code.co_name}, line {code.co_firstlineno})"
    if code.co_exceptiontable:
        raise NotStructural(f"{where} has an exception handler")
    if code.co_flags & _GENERATOR_FLAGS and code.co_name not in _COMPREHENSIONS:
        raise NotStructural(f"{where} is a generator function")
    for instr in dis.get_instructions(code):
        op = instr.opname
        if op not in _TERM_OPS:
            raise NotStructural(f"{where}: {op} {instr.argrepr} is not a pure operation of a record")
        if op in ("STORE_DEREF", "DELETE_DEREF") and instr.argval in code.co_freevars:
            raise NotStructural(f"{where} assigns a variable outside itself")
        if op == "LOAD_CONST" and isinstance(instr.argval, types.CodeType):
            _term_code(instr.argval, scope, done)
        elif op == "LOAD_CONST":
            _inert(instr.argval, "a constant")
        elif op == "LOAD_GLOBAL":
            _term_global(instr.argval, scope, done, where)


def _term_global(name: str, scope: dict, done: set, where: str) -> None:
    if name not in scope:
        if name not in _TERM_BUILTINS:
            raise NotStructural(f"{where} calls the builtin {name!r}")
        return
    value = scope[name]
    if type(value) is types.FunctionType:
        for default in (value.__defaults__ or ()) + tuple((value.__kwdefaults__ or {}).values()):
            _inert(default, f"a default of {name}")
        for cell in value.__closure__ or ():
            _inert(orderfree._cell(cell), f"a variable {name} captures")
        _term_code(value.__code__, value.__globals__, done)
        return
    if isinstance(value, type) and str(getattr(value, "__module__", "")).split(".")[0] in ("sympy", "fractions"):
        return  # an exact number's class: Rational(x, 2), Fraction(x)
    _inert(value, f"the global {name!r}")


__all__ = ["DSL_CALLABLES", "METHODS", "admit", "pure_query", "pure_term"]
