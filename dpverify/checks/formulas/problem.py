"""A formula claim made ready for its attackers, and the exact re-check of a counterexample.

A :class:`Problem` is the claim ``lhs REL rhs`` (REL one of ``=``, ``<=``,
``<``) quantified over its free symbols, restricted by the symbols' sympy
assumptions and the claim's ``where`` conditions.  Its *domain* is that set,
less the points where a side is undefined (a zero denominator, the log of a
non-positive number): there the claim says nothing.

:func:`Problem.confirm` is the only door to ``refuted``: whatever proposed a
point (a z3 model, a numeric search, an enumeration), the point is substituted
exactly into the claim *as written* (not its normalised form), the conditions
are decided exactly, and the two sides are compared by
:func:`~dpverify.engine.program.backend.exact_sign` (exact algebra for zero, sympy's
certified evalf at 80 digits for a sign).
"""
from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Optional, Union

import sympy

from ...dsl.claims import Identity, Inequality
from ...engine.decide import certified
from ...engine.program.backend import exact_sign
from ...engine.decide.smt import SAFETY_MESSAGE
from ...errors import SpecError

Values = dict[sympy.Symbol, sympy.Rational]
CONFIRM_DIGITS = 80
SAFETY_SECONDS = 600.0
"""The far safety net around one formula check, in CPU seconds of the process (sympy has no
operation budget; z3's queries are limited by counts).  Every catalogue claim takes under a second: when it fires, the
machine is overloaded or the formula pathological, and the outcome says so instead of deciding."""

_SUPPORTED_FUNCTIONS = (sympy.exp, sympy.log, sympy.Abs, sympy.Max, sympy.Min, sympy.Piecewise, sympy.binomial,
                        sympy.factorial, sympy.floor, sympy.ceiling)


_LIMITED = False


class OutOfTime(BaseException):
    """The CPU-time safety net fired.  A BaseException, so that no ``except Exception`` (ours
    or sympy's) turns it into an ordinary failure that some other path would then decide on."""


@contextlib.contextmanager
def time_limit(seconds: Optional[float] = None) -> Iterator[None]:
    """Raise :class:`OutOfTime` in the block after ``seconds``: a safety net around a whole formula
    check, never a budget that decides a verdict (the check then says ``unknown`` and why).  Only
    in the main thread; elsewhere, and inside an outer limit (which keeps governing), it does nothing."""
    global _LIMITED
    seconds = SAFETY_SECONDS if seconds is None else seconds
    if _LIMITED or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise OutOfTime(f"{SAFETY_MESSAGE}: the formula check spent {seconds:g} s of CPU")
    # the process's CPU time (ITIMER_PROF), not the wall clock: other processes do not advance it
    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    _LIMITED = True
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
        _LIMITED = False


@dataclass
class Counterexample:
    """A point of the domain where the claim fails, with both sides evaluated exactly."""

    values: Values
    lhs: sympy.Expr
    rhs: sympy.Expr

    def describe(self) -> str:
        point = ", ".join(f"{s} = {v}" for s, v in self.values.items()) or "(no symbols)"
        return f"{point}: lhs = {_show(self.lhs)}, rhs = {_show(self.rhs)}"


def _show(value: sympy.Expr) -> str:
    exact = str(value)
    if value.is_Rational and len(exact) <= 30:
        return exact
    approx = sympy.N(value, 20)
    return f"{exact} ~ {approx}" if len(exact) <= 40 else f"~ {approx}"


@dataclass
class Problem:
    """The claim as the attackers see it."""

    lhs: sympy.Expr
    rhs: sympy.Expr
    relation: str
    symbols: list[sympy.Symbol]
    where: tuple[sympy.Basic, ...]
    original: tuple[sympy.Expr, sympy.Expr]
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_claim(cls, claim: Union[Identity, Inequality], normalised: bool = True) -> "Problem":
        """The claim's problem; with ``normalised=False`` its sides are the claim's as written (no sums or
        integrals evaluated: all the exhaustive evaluation reads, which uses :attr:`original` only)."""
        relation = "=" if isinstance(claim, Identity) else ("<" if claim.strict else "<=")
        parts = [claim.lhs, claim.rhs, *claim.where]
        symbols = sorted(set().union(*(p.free_symbols for p in parts)), key=lambda s: s.name)
        _distinct_names(claim, symbols)
        notes: list[str] = []
        if not normalised:
            return cls(claim.lhs, claim.rhs, relation, symbols, tuple(claim.where), (claim.lhs, claim.rhs), notes)
        lhs, rhs = normalise(claim.lhs, notes), normalise(claim.rhs, notes)
        return cls(lhs, rhs, relation, symbols, tuple(claim.where), (claim.lhs, claim.rhs), notes)

    @property
    def statement(self) -> str:
        return f"{self.original[0]} {self.relation} {self.original[1]}"

    @property
    def partial(self) -> bool:
        """Whether a side may be undefined somewhere (a symbolic denominator, log, root or power)."""
        def risky(e: sympy.Basic) -> bool:
            if isinstance(e, (sympy.log, sympy.Piecewise, sympy.Integral)):
                return True
            if isinstance(e, sympy.Sum) and any(bound.is_infinite for limit in e.limits for bound in limit[1:]):
                return True  # a series: undefined where it diverges
            return isinstance(e, sympy.Pow) and bool(e.base.free_symbols) and not (
                e.exp.is_Integer and e.exp >= 0)
        return any(any(risky(node) for node in sympy.preorder_traversal(side)) for side in self.original)

    def conditions_text(self) -> str:
        """'for all real b, r, x with b positive, ..., x <= r' (the quantifier of the claim)."""
        names = ", ".join(s.name for s in self.symbols)
        parts = [f"{s} {a}" for s in self.symbols for a in _sign_words(s)] + [str(c) for c in self.where]
        text = f"for all real {names}" if names else "(a closed statement)"
        return text + (f" with {', '.join(parts)}" if parts else "")

    # ----- exact re-check of a point --------------------------------------------------
    def in_domain(self, values: Values) -> Optional[bool]:
        """Whether a point satisfies the symbols' assumptions and ``where`` (None: undecided)."""
        for sym in self.symbols:
            fits = satisfies(sym, values[sym])
            if fits is not True:
                return fits
        decided = [holds(cond, values) for cond in self.where]
        if False in decided:
            return False
        return None if None in decided else True

    def confirm(self, values: Values) -> Optional[Counterexample]:
        """A confirmed counterexample at ``values``, or None if the point does not break the claim."""
        if self.in_domain(values) is not True:
            return None
        try:
            sides = [evaluate(side, values) for side in self.original]
        except Undecidable:
            return None
        if any(side is None for side in sides):
            return None
        left, right = sides
        sign = exact_sign(left - right, CONFIRM_DIGITS)
        broken = {"=": sign in (1, -1), "<=": sign == 1, "<": sign in (0, 1)}[self.relation]
        return Counterexample(dict(values), left, right) if broken else None


def _distinct_names(claim: Union[Identity, Inequality], symbols: list[sympy.Symbol]) -> None:
    """Refuse a claim in which two different symbols have one name (``symbol("n")`` and ``symbol("n",
    positive=True)`` are two variables to sympy): its verdict, its counterexamples and its messages name
    variables by name, and would read the two as one."""
    for a, b in zip(symbols, symbols[1:]):
        if a.name == b.name:
            facts = [" ".join(_sign_words(s)) or ("real" if s.is_real else "no assumptions") for s in (a, b)]
            raise SpecError(f"{claim.kind}: two different symbols are both named {a.name!r} ({facts[0]}; "
                            f"{facts[1]}), so the claim would read them as one variable",
                            "give the symbols different names (or use one symbol object for both)")


def normalise(expr: sympy.Expr, notes: list[str]) -> sympy.Expr:
    """Evaluate what the decision reading cannot: integrals (sympy, exactly), and sums that sympy
    puts in closed form using only supported functions; a sum over all integers is first split as
    f(0) + sum_{k>=1} f(k) + sum_{k>=1} f(-k)."""
    expr = expr.replace(lambda e: isinstance(e, sympy.Sum) and _bilateral(e), _split_bilateral)
    for integral in sorted(expr.atoms(sympy.Integral), key=sympy.default_sort_key):
        value = _attempt(lambda: _signed_variable(integral).doit(), integral)
        if value.has(sympy.Integral):
            value = _attempt(lambda: _signed_variable(integral).doit(meijerg=False), integral)
        if not value.has(sympy.Integral):
            expr = expr.xreplace({integral: _finite(integral, value)})
            notes.append(f"integral {integral} evaluated by sympy as {value}")
    for total in sorted(expr.atoms(sympy.Sum), key=sympy.default_sort_key):
        value = _attempt(total.doit, total)
        if not value.has(sympy.Sum) and _only_supported(value):
            expr = expr.xreplace({total: _finite(total, value)})
            notes.append(f"sum {total} evaluated by sympy as {value}")
    return expr


class Diverges(Exception):
    """A sum or integral of the claim is not a finite number anywhere: the claim says nothing."""


def _finite(term: sympy.Expr, value: sympy.Expr) -> sympy.Expr:
    """``value`` of ``term`` when it is a finite number (or not a number); raises :class:`Diverges`
    for oo, -oo, zoo or nan, which the attackers would otherwise read as an ordinary quantity
    (harmonic = harmonic + 1 was proved with oo as one unknown)."""
    if value.is_number and (value.has(sympy.oo, -sympy.oo, sympy.zoo, sympy.nan) or value.is_finite is False):
        raise Diverges(f"{term} is not a finite number (sympy evaluates it to {value})")
    return value


def _attempt(compute: Callable[[], sympy.Expr], fallback: sympy.Expr) -> sympy.Expr:
    """``compute()``, or ``fallback`` (left unevaluated) when sympy cannot compute it."""
    try:
        return compute()
    except Exception:  # one of the errors sympy raises on forms it cannot evaluate
        return fallback


def _signed_variable(integral: sympy.Integral) -> sympy.Integral:
    """The integral with its variable declared non-negative (non-positive) when its range lies in
    [0, oo) ((-oo, 0]), so that sympy can simplify |x| there; the integrand is unchanged on the range."""
    if len(integral.limits) != 1 or len(integral.limits[0]) != 3:
        return integral
    var, lo, hi = integral.limits[0]
    if lo.is_extended_nonnegative and hi.is_extended_nonnegative:
        signed = sympy.Dummy(var.name, nonnegative=True)
    elif lo.is_extended_nonpositive and hi.is_extended_nonpositive:
        signed = sympy.Dummy(var.name, nonpositive=True)
    else:
        return integral
    return sympy.Integral(integral.function.xreplace({var: signed}), (signed, lo, hi))


def _bilateral(s: sympy.Sum) -> bool:
    return len(s.limits) == 1 and s.limits[0][1] is sympy.S.NegativeInfinity and s.limits[0][2] is sympy.oo


def _split_bilateral(s: sympy.Sum) -> sympy.Expr:
    k = s.limits[0][0]
    j = sympy.Dummy(k.name, integer=True, positive=True)
    f = s.function
    return f.xreplace({k: sympy.Integer(0)}) + sympy.Sum(f.xreplace({k: j}), (j, 1, sympy.oo)) + \
        sympy.Sum(f.xreplace({k: -j}), (j, 1, sympy.oo))


def _only_supported(expr: sympy.Expr) -> bool:
    return all(isinstance(f, _SUPPORTED_FUNCTIONS) for f in expr.atoms(sympy.Function))


def certified_sign(value: sympy.Expr) -> Optional[int]:
    """The sign of a real constant: from sympy's certified evalf when it is clearly non-zero
    (``strict=True`` guarantees the digits), otherwise by :func:`exact_sign` (exact algebra for 0)."""
    if certified.supported(value):  # sympy's evalf calls log(1 + 10^-70) - 10^-80 negative
        return exact_sign(value, CONFIRM_DIGITS)
    try:
        approx = sympy.N(value, 30, strict=True)
        if approx.is_Float and approx != 0:
            return 1 if approx > 0 else -1
    except Exception:  # PrecisionExhausted and friends: decide exactly instead
        pass
    return exact_sign(value, CONFIRM_DIGITS)


class Undecidable(Exception):
    """A value that cannot be computed exactly (an unevaluated sum, digits sympy cannot certify)."""


def evaluate(expr: sympy.Expr, values: Values) -> Optional[sympy.Expr]:
    """``expr`` at a point, exactly: a real constant, or None where it is undefined (a zero
    denominator, a complex value); raises :class:`Undecidable` when it cannot be computed."""
    try:
        value = expr.xreplace(values)
        value = value.replace(lambda e: isinstance(e, sympy.Sum) and _bilateral(e), _split_bilateral).doit()
    except ZeroDivisionError:
        return None
    except (ValueError, TypeError, NotImplementedError) as err:
        raise Undecidable(f"{expr} at {values}: {err}") from None
    if value.has(sympy.nan, sympy.zoo) or value.is_finite is False:
        return None
    if value.free_symbols or value.has(sympy.Integral, sympy.Sum):
        raise Undecidable(f"{expr} at {values} does not evaluate to a number ({value})")
    try:
        approx = sympy.N(value, 30, strict=True)
    except Exception:  # PrecisionExhausted and friends
        raise Undecidable(f"{value} cannot be evaluated to certified digits") from None
    if not approx.is_number or approx.has(sympy.nan, sympy.zoo):
        return None
    if approx.is_real is not True:
        return None  # a complex value (log or root of a negative number): outside the domain
    return value


def holds(cond: sympy.Basic, values: Values) -> Optional[bool]:
    """Decide a condition exactly at a point (None when undecidable)."""
    if isinstance(cond, sympy.And):
        parts = [holds(c, values) for c in cond.args]
        return False if False in parts else (None if None in parts else True)
    if isinstance(cond, sympy.Or):
        parts = [holds(c, values) for c in cond.args]
        return True if True in parts else (None if None in parts else False)
    if isinstance(cond, sympy.Not):
        inner = holds(cond.args[0], values)
        return None if inner is None else not inner
    if cond in (True, sympy.true):
        return True
    if cond in (False, sympy.false):
        return False
    direct = cond.xreplace(values)
    if direct in (sympy.true, sympy.false):
        return bool(direct)
    try:
        left, right = evaluate(cond.lhs, values), evaluate(cond.rhs, values)
    except Undecidable:
        return None
    if left is None or right is None:
        return None
    sign = certified_sign(left - right)
    if sign is None:
        return None
    tests = {sympy.StrictLessThan: sign < 0, sympy.LessThan: sign <= 0, sympy.StrictGreaterThan: sign > 0,
             sympy.GreaterThan: sign >= 0, sympy.Equality: sign == 0, sympy.Unequality: sign != 0}
    return next((ok for kind, ok in tests.items() if isinstance(cond, kind)), None)


def _sign_words(sym: sympy.Symbol) -> list[str]:
    """The symbol's assumptions that restrict its values, in words."""
    known = sym.assumptions0
    words = ["positive"] if known.get("positive") else (["nonnegative"] if known.get("nonnegative") else [])
    words += ["negative"] if known.get("negative") else (["nonpositive"] if known.get("nonpositive") else [])
    words += ["nonzero"] if known.get("nonzero") and not words else []
    kinds = [w for w in ("prime", "composite", "even", "odd") if known.get(w)]
    words += kinds or (["integer"] if sym.is_integer else [w for w in ("rational", "irrational") if known.get(w)])
    return words


def satisfies(sym: sympy.Symbol, value: sympy.Expr) -> Optional[bool]:
    """Whether ``value`` has *every* assumption of ``sym`` -- not only its sign and integrality but
    nonzero, even, odd, prime... (a prime p is never 4, whatever a relaxed encoding proposes);
    None when sympy cannot tell."""
    for name, wanted in sym.assumptions0.items():
        have = getattr(value, f"is_{name}", None)
        if have is None:
            return None
        if bool(have) != bool(wanted):
            return False
    return True
