"""The values a mechanism program receives for its parameters, in every reading.

Every reading of a program must take the branch the exact semantics takes, or
refuse.  So numeric readings (certified intervals, exact sympy) hand a program
the same exact values -- ints, Fractions, exact sympy numbers for irrational
grid values -- and only the primitives convert them to the reading's
arithmetic: the program's own arithmetic and comparisons are exact, and equal
in every reading.

The symbolic reading, which proves claims for every eps, hands a program a
:class:`Parameter`: it supports arithmetic (the result is again a parameter)
and the primitives unwrap it, but anything that reveals a value -- ``==``,
``<``, ``hash`` (``in {...}``, dict keys), ``bool``, ``int``, ``float``,
``round``, ``str``... -- raises :class:`ParameterBranch`, and records it in the
session, so that a program that catches the exception is refused all the same.
A proof for every eps is then not attempted: sympy would have answered
``eps == 1`` structurally (False), and the proof would cover a program other
than the one run at eps = 1.
"""
from __future__ import annotations

import abc
import os
import sys
import sysconfig
from fractions import Fraction
from typing import Any, Callable, Optional

import sympy
from sympy.core.sympify import SympifyError, converter

from ...dsl.exact import exact_float
from ...errors import NotRational
from .run import active

_OWN = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep  # dpverify/
_LIBRARIES = tuple(sorted({os.path.abspath(sysconfig.get_paths()[key]) + os.sep
                           for key in ("purelib", "platlib", "stdlib", "platstdlib")}))


class ParameterBranch(NotRational):
    """A program used a symbolic parameter's value (compared, hashed, converted it): no proof over it.

    A :class:`NotRational` naming the parameters, so that a proof over several
    symbols may keep these fixed and try the others.
    """

    def __init__(self, what: str, names: frozenset, where: str) -> None:
        listed = ", ".join(sorted(s.name for s in names))
        super().__init__(f"the program uses the value of the symbolic parameter {listed} at {where} ({what}): "
                         f"a reading must take the branch the exact semantics takes, so no proof for every "
                         f"{listed} is attempted (the claim keeps its grid verdict)", frozenset(names))
        self.where = where


_ABC = (abc.__file__, "<frozen abc>")


def _library(filename: str) -> bool:
    """Code of dpverify, of an installed library or of the standard library (not spec code)."""
    return filename.startswith("<frozen") or os.path.abspath(filename).startswith((_OWN, *_LIBRARIES))


def _site() -> str:
    """file:line of the innermost frame of spec code (outside dpverify, sympy and the standard library)."""
    frame = sys._getframe(2)
    while frame is not None:
        if not _library(frame.f_code.co_filename):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "an unknown line"


def _refuse(value: "Parameter", what: str) -> Any:
    error = ParameterBranch(what, frozenset(value.expr.free_symbols), _site())
    runner = active()
    if runner is not None and runner.session.branch is None:
        runner.session.branch = error
    raise error


def sympy_rational(value: Any) -> Optional[sympy.Rational]:
    """An int, Fraction, exact float or sympy Rational as a sympy Rational; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return sympy.Integer(value)
    if isinstance(value, Fraction):
        return sympy.Rational(value.numerator, value.denominator)
    if isinstance(value, float):
        return sympy.Rational(*exact_float(value).as_integer_ratio())
    if isinstance(value, sympy.Rational):
        return value
    return None


def _operand(value: Any) -> Optional[sympy.Expr]:
    """An operand of parameter arithmetic as a sympy expression, or None (not a number we combine)."""
    if isinstance(value, Parameter):
        return value.expr
    exact = sympy_rational(value)
    if exact is not None:
        return exact
    return value if isinstance(value, sympy.Expr) else None


def wrap(expr: sympy.Expr) -> Any:
    """A parameter when ``expr`` has free symbols, else the exact number itself."""
    return Parameter(expr) if expr.free_symbols else expr


def _binary(op: Callable[[Any, Any], Any], reflected: bool = False) -> Callable[[Any, Any], Any]:
    def method(self: "Parameter", other: Any) -> Any:
        value = _operand(other)
        if value is None:
            return NotImplemented
        return wrap(op(value, self.expr) if reflected else op(self.expr, value))
    return method


class Parameter:
    """A symbolic parameter (or an expression in parameters) as a mechanism program sees it."""

    __slots__ = ("expr",)
    __dpverify_handle__ = True  # id() from spec code is refused (engine/program/contract.py)

    def __dpverify_type_probe__(self) -> None:  # type(eps) in a spec module (engine/contract.spec_type)
        _refuse(self, "its type (type())")

    def __init__(self, expr: sympy.Expr) -> None:
        self.expr = expr

    __add__ = _binary(lambda a, b: a + b)
    __radd__ = _binary(lambda a, b: a + b, reflected=True)
    __sub__ = _binary(lambda a, b: a - b)
    __rsub__ = _binary(lambda a, b: a - b, reflected=True)
    __mul__ = _binary(lambda a, b: a * b)
    __rmul__ = _binary(lambda a, b: a * b, reflected=True)
    __truediv__ = _binary(lambda a, b: a / b)
    __rtruediv__ = _binary(lambda a, b: a / b, reflected=True)
    __pow__ = _binary(lambda a, b: a ** b)
    __rpow__ = _binary(lambda a, b: a ** b, reflected=True)

    def __neg__(self) -> "Parameter":
        return Parameter(-self.expr)

    def __pos__(self) -> "Parameter":
        return self

    def __abs__(self) -> Any:
        return wrap(abs(self.expr))

    def __eq__(self, other: Any) -> bool:
        return _refuse(self, "==")

    def __ne__(self, other: Any) -> bool:
        return _refuse(self, "!=")

    def __lt__(self, other: Any) -> bool:
        return _refuse(self, "<")

    def __le__(self, other: Any) -> bool:
        return _refuse(self, "<=")

    def __gt__(self, other: Any) -> bool:
        return _refuse(self, ">")

    def __ge__(self, other: Any) -> bool:
        return _refuse(self, ">=")

    def __hash__(self) -> int:
        return _refuse(self, "hash: a set, a dict key or `in {...}`")

    def __bool__(self) -> bool:
        return _refuse(self, "a truth value")

    def _conversion(self, *_: Any) -> Any:
        return _refuse(self, "a conversion to a plain number or string")

    __int__ = __float__ = __complex__ = __index__ = __round__ = __trunc__ = __floor__ = __ceil__ = _conversion
    __str__ = __repr__ = __format__ = __bytes__ = _conversion

    def _integer_arithmetic(self, *_: Any) -> Any:
        return _refuse(self, "integer arithmetic (//, %, divmod, bit operations)")

    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __divmod__ = __rdivmod__ = _integer_arithmetic
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _integer_arithmetic
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = __invert__ = _integer_arithmetic

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        """isinstance(eps, Fraction) from spec code tells the readings apart: refused like a comparison
        (isinstance against a class the parameter is not an instance of reads ``__class__``)."""
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename in _ABC:  # ABCMeta.__instancecheck__
            frame = frame.f_back
        if frame is not None and not _library(frame.f_code.co_filename):
            _refuse(self, "its type (isinstance)")
        return Parameter

    def __getattr__(self, name: str) -> Any:
        if _library(sys._getframe(1).f_code.co_filename):
            raise AttributeError(name)  # a library's protocol probe (sympy's _op_priority, copy's __deepcopy__)
        return _refuse(self, f"the attribute .{name}")  # spec code: eps.numerator reveals the reading


def _to_sympy(value: Parameter) -> Any:
    """sympify(parameter): refused, so that sympy's binary operators defer to the parameter's own.

    sympy's operators sympify strictly and return NotImplemented on failure
    (Python then calls the parameter's reflected operator); a sympy function
    applied to a parameter in spec code (``sympy.log(eps)``) sympifies
    leniently, and that use is recorded as a refusal.
    """
    caller = sys._getframe(1)
    if not caller.f_locals.get("strict", False):
        try:
            _refuse(value, "a sympy function applied to it (use dp.exp, dp.log or dp.sqrt)")
        except ParameterBranch:
            pass
    raise SympifyError(value)


converter[Parameter] = _to_sympy


def unwrap(value: Any) -> Any:
    """The sympy expression behind a parameter; any other value as it is (for primitives)."""
    return value.expr if type(value) is Parameter else value


def program_value(value: Any) -> Any:
    """A parameter value as every reading hands it to a program: ints as ints, rationals as Fractions,
    other exact numbers as sympy numbers, expressions in symbols as :class:`Parameter`."""
    if isinstance(value, (bool, int, Fraction)):
        return value
    if isinstance(value, float):
        return exact_float(value)
    if isinstance(value, sympy.Rational):
        return Fraction(int(value.p), int(value.q))
    if isinstance(value, sympy.Basic) and value.free_symbols:
        return Parameter(value)
    return value


def exact_math(fn: Callable[[Any], Any], value: Any) -> Any:
    """``fn`` (sympy.exp, log, sqrt) applied exactly, in every reading: the program's values stay exact."""
    if type(value) is Parameter:
        return wrap(fn(value.expr))
    operand = _operand(value)
    return fn(operand if operand is not None else value)
