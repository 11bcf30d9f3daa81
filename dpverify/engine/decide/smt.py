"""The decision reading: a sympy expression as a z3 term, exact where it can be.

A formula over real (and integer) symbols is translated construct by construct:

* exact -- rationals, ``+ - * /``, integer powers, ``Abs``, ``Max``/``Min``,
  ``Piecewise``, ``floor``/``ceiling``, relations and ``And``/``Or``/``Not``;
  symbols with ``integer=True`` become z3 ``Int`` (promoted to ``Real`` inside
  arithmetic, so ``/`` is real division); ``sqrt`` and every rational power
  y**(p/q) become a fresh s >= 0 with s**q = y**p (algebraic, so exact);
  ``binomial(m, k)`` with a numeric k is the falling factorial m(m-1)...(m-k+1)/k!;
  a ``Sum`` over a finite range is unrolled, and over a range with a symbolic
  bound that the assumptions make finite (``d <= 30``) it is unrolled with each
  term under ``If(k <= d, ...)``.
* relaxed (an over-approximation: every true point survives, so ``unsat``
  still proves the claim, but a model must be re-checked) -- ``exp(u)`` is a
  fresh y with y > 0, y >= 1 + u + u^2/2 + u^3/6 (and >= 1 + u), y (1 - u) <= 1
  when u < 1, exp(0) = 1 and
  strict monotonicity between all occurrences (u1 < u2 iff y1 < y2);
  ``log(v)`` is a fresh z with exp(z) = v, joining the same monotonicity;
  b**e with a symbolic e is exp(e log b) (exponentials of one product are
  first combined by sympy, exactly); irrational constants (pi, log 2, e) lie
  in certified rational intervals; any other construct is an uninterpreted
  fresh variable.
* restricted (an under-approximation: a model is a real counterexample, but
  ``unsat`` proves nothing) -- a ``Sum`` whose bound the assumptions leave
  unbounded is unrolled to ``max_unroll`` terms and the bound restricted
  accordingly (a bounded search); a ``Sum`` whose range the bounds do not show
  to be non-reversed (upper >= lower - 1) is read only where it is not, although
  sympy gives reversed sums a value (-Sum over the gap, Karr's convention).

Where an expression is undefined (a zero denominator, the log of a
non-positive number, the square root of a negative one, a ``Piecewise`` with no
branch) it is outside the *domain*; :attr:`Encoding.domain` collects those
conditions, each guarded by the ``Piecewise``/``If`` path it occurs on, and so
are the definitions of the fresh variables (a definition that could not hold
off its path would make the whole query vacuously unsatisfiable).

Bounds on the symbols and exact model values live in :mod:`.smt_values`.

>>> x = sympy.Symbol("x", real=True)
>>> tr = Translator([x])
>>> _ = tr.term(abs(x) - sympy.Max(x, -x))
>>> tr.encoding().exact
True
>>> tr = Translator([x])
>>> _ = tr.term(sympy.exp(x))
>>> enc = tr.encoding()
>>> enc.exact, enc.proves
(False, True)
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional

import sympy
import z3

from .safety import SAFETY_MESSAGE, SAFETY_SECONDS, SafetyLimit, cpu_watchdog

Bounds = dict[sympy.Symbol, tuple[Optional[int], Optional[int]]]

log = logging.getLogger(__name__)



@dataclass
class Outcome:
    """What one counted z3 check answered: ``answer`` (z3.sat, unsat or unknown), z3's reason for
    an unknown, the model of a sat answer (in the main context), and the resources it used."""

    answer: Any
    reason: str = ""
    model: Any = None
    used: int = 0


_SPENT = [0]


def spent() -> int:
    """The z3 resources used by every :func:`check` of this process so far (a count, for budgets
    that span several queries)."""
    return _SPENT[0]


def check(solver: Any, rlimit: int, logic: Optional[str] = None) -> Outcome:
    """Decide the assertions of ``solver`` under a deterministic resource limit ``rlimit``, z3's
    count of its own steps, so the answer is the same at any machine load.

    The assertions are copied into a fresh z3 context first: z3's search depends on the ids of
    its terms, which depend on everything created before in the same context, so a query that is
    instant on its own could otherwise run for minutes after other claims (it did).  A z3
    ``Optimize`` keeps its context (its objectives are not assertions; bounds are linear).

    The safety net (:data:`SAFETY_SECONDS` of this thread's CPU, :mod:`.safety`) is far beyond what
    the limit allows on any machine; if it fires first anyway (a single step of z3's nonlinear solver
    that the count does not see), :class:`SafetyLimit` is raised so that the caller reports
    ``unknown`` saying so.  Being CPU time, it does not depend on the machine's load.
    """
    if isinstance(solver, z3.Optimize):
        fresh, back = solver, None
    else:
        ctx = z3.Context()
        fresh = z3.SolverFor(logic, ctx=ctx) if logic else z3.Solver(ctx=ctx)
        for assertion in solver.assertions():
            fresh.add(assertion.translate(ctx))
        back = solver.ctx
    fresh.set("rlimit", rlimit)
    before = resources(fresh)
    with cpu_watchdog(SAFETY_SECONDS, fresh.ctx.interrupt) as fired:
        answer = fresh.check()
    used = resources(fresh) - before
    _SPENT[0] += used
    log.debug("z3 answered %s using %d of rlimit %d (z3's rlimit count; %d in this process so far)",
              answer, used, rlimit, _SPENT[0])
    if answer == z3.unknown and (fired.is_set() or fresh.reason_unknown() in ("timeout", "canceled")):
        raise SafetyLimit(f"{SAFETY_MESSAGE}: z3 spent {SAFETY_SECONDS} s of CPU with {used:,} of its resource "
                          f"limit {rlimit:,} used")
    model = None
    if answer == z3.sat:
        model = fresh.model() if back is None else fresh.model().translate(back)
    reason = fresh.reason_unknown() if answer == z3.unknown else ""
    return Outcome(answer, reason, model, used)


def resources(solver: Any) -> int:
    """z3's resource count so far in the solver's context (differences measure one check)."""
    stats = solver.statistics()
    return int(stats.get_key_value("rlimit count")) if "rlimit count" in stats.keys() else 0


class Unsupported(Exception):
    """A construct the decision reading cannot express, even relaxed."""


@dataclass
class Encoding:
    """What a translation produced besides its terms: side facts, domain, and how faithful it is.

    ``relaxations`` (over-approximations) leave proofs sound; ``restrictions``
    (under-approximations) leave counterexamples sound.  The encoding is
    ``exact`` when it has neither.
    """

    variables: dict[sympy.Symbol, z3.ExprRef]
    facts: list[z3.BoolRef] = field(default_factory=list)
    domain: list[z3.BoolRef] = field(default_factory=list)
    relaxations: list[str] = field(default_factory=list)
    restrictions: list[str] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        return not self.relaxations and not self.restrictions

    @property
    def proves(self) -> bool:
        """Whether ``unsat`` of (assumptions, domain, negated claim) proves the claim."""
        return not self.restrictions


def rational(value: Fraction | sympy.Rational | int) -> z3.ArithRef:
    value = Fraction(int(value.p), int(value.q)) if isinstance(value, sympy.Rational) else Fraction(value)
    return z3.RealVal(f"{value.numerator}/{value.denominator}")


def enclosure(value: sympy.Expr, digits: int = 40) -> tuple[Fraction, Fraction]:
    """Rational lower and upper bounds on a real constant (evalf is accurate to ``digits``)."""
    approx = Fraction(str(sympy.Float(value.evalf(digits + 10, strict=True), digits + 10)))
    pad = abs(approx) / 10**digits + Fraction(1, 10**(digits + 10))
    return approx - pad, approx + pad


def prepare(expr: sympy.Expr) -> sympy.Expr:
    """Exact rewrites before translation: b**e with a symbolic exponent and a base sympy knows to
    be positive becomes exp(e log b), and products of exponentials are combined,
    exp(u) exp(v) = exp(u + v), so that a ratio such as a**-|k + j| / a**-|k| reaches z3 as one
    exp(...).  (Other symbolic powers are left to :meth:`Translator.term`, which flags them.)"""
    def symbolic_power(p: sympy.Basic) -> bool:
        return (isinstance(p, sympy.Pow) and not p.exp.is_number and p.base is not sympy.E
                and bool(p.base.is_positive))
    expr = expr.replace(symbolic_power, lambda p: sympy.exp(p.exp * sympy.log(p.base)))
    return sympy.powsimp(expr, combine="exp")


def assumptions(sym: sympy.Symbol, var: z3.ArithRef) -> list[z3.BoolRef]:
    """The assumptions of a sympy symbol that z3 can state, as facts (integrality is the variable's
    sort).  Others (prime, rational...) are left out, which only widens the domain: a proof still
    holds, and every model is re-checked against all the assumptions."""
    tests = {"positive": var > 0, "nonnegative": var >= 0, "negative": var < 0, "nonpositive": var <= 0,
             "nonzero": var != 0, "zero": var == 0}
    if var.is_int():
        tests.update({"even": var % 2 == 0, "odd": var % 2 == 1})
    return [fact for name, fact in tests.items() if sym.assumptions0.get(name)]


def z3_names(symbols: list[sympy.Symbol]) -> list[str]:
    """One z3 variable name per distinct sympy symbol.  z3 identifies variables by name, and two sympy symbols
    with one name and different assumptions (``Symbol("n")``, ``Symbol("n", positive=True)``) or a Dummy are
    different symbols: one z3 variable for both would prove a claim about a different formula.  A symbol
    whose name is unique in the list, not a Dummy's and free of ``!`` keeps it; any other is ``sym!k!name``
    (k its position): distinct, and unlike any kept name or any helper variable (``hint!N``, the hints
    below are never ``sym``)."""
    seen: dict[str, int] = {}
    for s in symbols:
        seen[s.name] = seen.get(s.name, 0) + 1
    return [s.name if seen[s.name] == 1 and "!" not in s.name and not isinstance(s, sympy.Dummy)
            else f"sym!{k}!{s.name}" for k, s in enumerate(symbols)]


class Translator:
    """Translate sympy expressions and conditions over ``symbols`` into one z3 context.

    ``bounds`` gives integer bounds on integer symbols (from :func:`symbol_bounds`); it is
    trusted to follow from the constraints asserted together with the encoding (the claim's
    assumptions and ``where``), since sums are unrolled only up to them.
    """

    def __init__(self, symbols: list[sympy.Symbol], bounds: Optional[Bounds] = None,
                 max_unroll: int = 40) -> None:
        self.enc = Encoding({s: (z3.Int if s.is_integer else z3.Real)(name)
                             for s, name in zip(symbols, z3_names(symbols))})
        self.enc.facts += [c for s in symbols for c in assumptions(s, self.enc.variables[s])]
        self.bounds = bounds or {}
        self.max_unroll = max_unroll
        self._path: list[z3.BoolRef] = []
        self._exps: list[tuple[z3.ArithRef, z3.ArithRef, z3.BoolRef]] = []  # (u, exp(u), where defined)
        self._memo: dict[tuple, z3.ArithRef] = {}
        self._guards: list[z3.BoolRef] = []
        self._fresh = 0

    # ----- bookkeeping ----------------------------------------------------------------
    def _guard(self) -> z3.BoolRef:
        return z3.And(*self._path) if self._path else z3.BoolVal(True)

    def _require(self, condition: z3.BoolRef) -> None:
        """The expression is defined only where ``condition`` holds (on the current path)."""
        self.enc.domain.append(z3.Implies(self._guard(), condition))

    def _var(self, hint: str) -> z3.ArithRef:
        self._fresh += 1
        return z3.Real(f"{hint}!{self._fresh}")

    def _relax(self, why: str) -> None:
        if why not in self.enc.relaxations:
            self.enc.relaxations.append(why)

    def _exp_of(self, u: z3.ArithRef, y: z3.ArithRef, when: z3.BoolRef) -> None:
        self._exps.append((u, y, when))
        taylor = 1 + u + u * u / 2 + u * u * u / 6  # e^u >= its Taylor polynomials of odd degree
        self.enc.facts += [z3.Implies(when, z3.And(y > 0, y >= 1 + u, y >= taylor,
                                                   z3.Implies(u < 1, y * (1 - u) <= 1)))]

    def encoding(self) -> Encoding:
        """Finish: add strict monotonicity of exp between every two occurrences and exp(0) = 1."""
        occurrences = [(z3.RealVal(0), z3.RealVal(1), z3.BoolVal(True))] + self._exps
        for i, (u1, y1, w1) in enumerate(occurrences):
            for u2, y2, w2 in occurrences[i + 1:]:
                self.enc.facts.append(z3.Implies(z3.And(w1, w2), z3.And(
                    (u1 < u2) == (y1 < y2), (u1 == u2) == (y1 == y2))))
        return self.enc

    # ----- conditions -----------------------------------------------------------------
    def formula(self, cond: sympy.Basic) -> z3.BoolRef:
        """A sympy relation or Boolean combination as a z3 Boolean."""
        if cond is sympy.true or cond is True:
            return z3.BoolVal(True)
        if cond is sympy.false or cond is False:
            return z3.BoolVal(False)
        if isinstance(cond, sympy.And):
            return z3.And(*[self.formula(a) for a in cond.args])
        if isinstance(cond, sympy.Or):
            return z3.Or(*[self.formula(a) for a in cond.args])
        if isinstance(cond, sympy.Not):
            return z3.Not(self.formula(cond.args[0]))
        ops = {sympy.StrictLessThan: lambda a, b: a < b, sympy.LessThan: lambda a, b: a <= b,
               sympy.StrictGreaterThan: lambda a, b: a > b, sympy.GreaterThan: lambda a, b: a >= b,
               sympy.Equality: lambda a, b: a == b, sympy.Unequality: lambda a, b: a != b}
        for kind, op in ops.items():
            if isinstance(cond, kind):
                return op(self.term(cond.lhs), self.term(cond.rhs))
        raise Unsupported(f"the condition {cond}")

    # ----- terms ----------------------------------------------------------------------
    def term(self, expr: sympy.Basic) -> z3.ArithRef:
        """A real-valued sympy expression as a z3 Real term."""
        expr = sympy.sympify(expr)
        key = (expr, tuple(g.get_id() for g in self._path))
        if key not in self._memo:
            self._memo[key] = self._term(expr)
        return self._memo[key]

    def _term(self, e: sympy.Basic) -> z3.ArithRef:
        if isinstance(e, sympy.Symbol):
            if e not in self.enc.variables:
                raise Unsupported(f"the symbol {e}, which is not one of the claim's")
            v = self.enc.variables[e]
            return z3.ToReal(v) if v.is_int() else v
        if e.is_Rational:
            return rational(e)
        if isinstance(e, sympy.Add):
            return z3.Sum([self.term(a) for a in e.args])
        if isinstance(e, sympy.Mul):
            return self._mul(e)
        if isinstance(e, sympy.Pow):
            return self._pow(e.base, e.exp)
        if isinstance(e, sympy.Abs):
            t = self.term(e.args[0])
            return z3.If(t >= 0, t, -t)
        if isinstance(e, (sympy.Max, sympy.Min)):
            out, larger = self.term(e.args[0]), isinstance(e, sympy.Max)
            for arg in e.args[1:]:
                t = self.term(arg)
                out = z3.If(out >= t if larger else out <= t, out, t)
            return out
        if isinstance(e, sympy.Piecewise):
            return self._piecewise(list(e.args))
        if isinstance(e, (sympy.floor, sympy.ceiling)):
            t, k = self.term(e.args[0]), z3.Int(f"round!{self._fresh + 1}")
            self._fresh += 1
            kr = z3.ToReal(k)
            self.enc.facts.append(z3.And(kr <= t, t < kr + 1) if isinstance(e, sympy.floor)
                                  else z3.And(kr - 1 < t, t <= kr))
            return kr
        if e is sympy.E:
            return self._exp(z3.RealVal(1), sympy.Integer(1))
        if isinstance(e, sympy.exp):
            return self._exp(self.term(e.args[0]), e.args[0])
        if isinstance(e, sympy.log):
            return self._log(e.args[0])
        if isinstance(e, sympy.binomial) and e.args[1].is_Integer:
            m, k = e.args[0], int(e.args[1])
            if k < 0:
                return z3.RealVal(0)
            return self.term(sympy.Mul(*[m - j for j in range(k)]) / math.factorial(k))
        if isinstance(e, sympy.Sum):
            return self._sum(e)
        if e.is_number and e.is_real:  # (rationals were handled above; factorial(1/2) is not one)
            lo, hi = enclosure(e)
            v = self._var("const")
            self.enc.facts.append(z3.And(rational(lo) <= v, v <= rational(hi)))
            self._relax(f"the constant {e} as a variable in a rational interval of width {float(hi - lo):.1g}")
            return v
        return self._opaque(e)

    def _opaque(self, e: sympy.Basic) -> z3.ArithRef:
        """An unsupported real-valued term: a fresh variable, the same one for the same term.
        (Never an infinity or nan: a fresh real would make oo = oo + 1 look false and oo <= oo - 1 true.)"""
        if not (isinstance(e, sympy.Expr) and e.is_extended_real is not False) or \
                (e.is_number and e.is_finite is not True):
            raise Unsupported(f"the term {e}")
        self._relax(f"{type(e).__name__} terms such as {str(e)[:60]} as uninterpreted variables")
        key = ("opaque", e)
        if key not in self._memo:
            self._memo[key] = self._var("opaque")
        return self._memo[key]

    def _mul(self, e: sympy.Mul) -> z3.ArithRef:
        nums, dens = [], []
        for factor in e.args:
            if isinstance(factor, sympy.Pow) and factor.exp.is_Integer and factor.exp < 0:
                dens.append(self._pow(factor.base, -factor.exp))
            else:
                nums.append(self.term(factor))
        out = nums[0] if nums else z3.RealVal(1)
        for t in nums[1:]:
            out = out * t
        if dens:
            den = dens[0]
            for t in dens[1:]:
                den = den * t
            self._require(den != 0)
            out = out / den
        return out

    def _pow(self, base: sympy.Expr, exp: sympy.Expr) -> z3.ArithRef:
        if exp.is_Integer:
            n = int(exp)
            if n < 0:
                den = self._pow(base, sympy.Integer(-n))
                self._require(den != 0)
                return 1 / den
            if n > 256:
                raise Unsupported(f"the power {base}**{n} (exponent too large to expand)")
            out: Optional[z3.ArithRef] = None
            square = self.term(base)
            while n:  # repeated squaring keeps the term a small DAG
                if n & 1:
                    out = square if out is None else out * square
                n >>= 1
                if n:
                    square = square * square
            return out if out is not None else z3.RealVal(1)
        if exp.is_Rational:  # y**(p/q): a fresh s >= 0 with s**q = y**p, defined for y >= 0 (y > 0 if p < 0)
            p, q = int(exp.p), int(exp.q)
            y = self.term(base)
            defined = y > 0 if p < 0 else y >= 0
            self._require(defined)
            s = self._var("root")
            lhs = self._pow_term(s, q)
            rhs = self._pow_term(y, abs(p))
            link = lhs * rhs == 1 if p < 0 else lhs == rhs
            self.enc.facts.append(z3.Implies(z3.And(self._guard(), defined), z3.And(s >= 0, link)))
            return s
        if base == sympy.E:
            return self._exp(self.term(exp), exp)
        if base.is_number and base.is_negative and exp.is_integer:
            # (-c)**n = (-1)**n c**n for an integer n: the sign by the parity of n, exactly
            n, half = self.term(exp), z3.ToReal(z3.Int(f"half!{self._fresh + 1}"))
            self._fresh += 1
            self.enc.facts.append(z3.Or(n == 2 * half, n == 2 * half + 1))
            magnitude = self._pow(-base, exp)
            return z3.If(n == 2 * half, magnitude, -magnitude)
        # a symbolic exponent: b**e = exp(e log b), for b > 0; where b <= 0 the power may still be
        # real (an integer exponent), so unless b is known positive that reading is a restriction
        if not base.is_positive:
            self.enc.restrictions.append(f"the power {base}**({exp}) read only where {base} > 0")
        return self._exp(self.term(exp) * self._log(base), exp * sympy.log(base))

    @staticmethod
    def _pow_term(t: z3.ArithRef, n: int) -> z3.ArithRef:
        out = z3.RealVal(1)
        for _ in range(n):
            out = out * t
        return out

    def _exp(self, u: z3.ArithRef, source: sympy.Expr) -> z3.ArithRef:
        y = self._var("exp")
        if source.is_number:
            lo, hi = enclosure(sympy.exp(source))
            self.enc.facts.append(z3.And(rational(lo) <= y, y <= rational(hi)))
        self._exp_of(u, y, self._guard())
        self._relax("exp as a fresh positive variable with Taylor lower bounds and strict monotonicity")
        return y

    def _log(self, arg: sympy.Expr) -> z3.ArithRef:
        v = self.term(arg)
        self._require(v > 0)
        z = self._var("log")
        when = z3.And(self._guard(), v > 0)
        if arg.is_number and arg.is_positive:
            lo, hi = enclosure(sympy.log(arg))
            self.enc.facts.append(z3.Implies(when, z3.And(rational(lo) <= z, z <= rational(hi))))
        self._exp_of(z, v, when)
        self._relax("log as a fresh variable z with exp(z) = its argument")
        return z

    def _piecewise(self, branches: list) -> z3.ArithRef:
        (value, cond), rest = branches[0], branches[1:]
        c = self.formula(cond)
        if not rest:
            self._require(c)
            return self._under(c, value)
        return z3.If(c, self._under(c, value), self._under(z3.Not(c), None, rest))

    def _under(self, cond: z3.BoolRef, value: Optional[sympy.Expr], rest: Optional[list] = None) -> z3.ArithRef:
        self._guards.append(cond)  # kept alive: memo keys hold the ids of path conditions
        self._path.append(cond)
        try:
            return self.term(value) if rest is None else self._piecewise(rest)
        finally:
            self._path.pop()

    def _sum(self, e: sympy.Sum) -> z3.ArithRef:
        if len(e.limits) != 1:
            return self.term(sympy.Sum(sympy.Sum(e.function, *e.limits[:-1]), e.limits[-1]))
        k, lo, hi = e.limits[0]
        lo_n, hi_n = self._integer_range(lo, low=True), self._integer_range(hi, low=False)
        if lo_n is None or hi_n is None:
            if lo.is_infinite or hi.is_infinite:
                return self._opaque(e)
            raise Unsupported(f"the sum {e}: a bound that is not an integer expression")
        first, last = lo_n[0], hi_n[1]
        if first is None:
            return self._opaque(e)
        lo_t, hi_t = self.term(lo), self.term(hi)
        self._require(hi_t >= lo_t - 1)  # empty ranges read as 0; reversed ones are searched no further:
        if hi_n[0] is None or lo_n[1] is None or hi_n[0] < lo_n[1] - 1:  # sympy gives them values (Karr's
            self.enc.restrictions.append(f"the sum {e} read only where its range is not reversed")  # convention)
        if last is None or last - first + 1 > self.max_unroll:
            last = first + self.max_unroll - 1
            self.enc.restrictions.append(f"the sum {e} searched only up to {k} = {last}")
            self.enc.domain.append(z3.Implies(self._guard(), hi_t <= last))
        terms = []
        for value in range(first, last + 1):
            inside = z3.And(lo_t <= value, value <= hi_t)
            fixed = lo_n[0] == lo_n[1] == first and hi_n[0] == hi_n[1]
            if fixed:
                terms.append(self.term(e.function.xreplace({k: sympy.Integer(value)})))
            else:
                terms.append(z3.If(inside, self._under(inside, e.function.xreplace({k: sympy.Integer(value)})),
                                   z3.RealVal(0)))
        return z3.Sum(terms) if terms else z3.RealVal(0)

    def _integer_range(self, bound: sympy.Expr, low: bool) -> Optional[tuple[Optional[int], Optional[int]]]:
        """(min, max) of an integer bound: a number, or a symbol with known bounds, or an integer
        symbol plus a constant; None when the bound is not of that form."""
        if bound.is_Integer:
            return int(bound), int(bound)
        offset, rest = bound.as_coeff_Add()
        if isinstance(rest, sympy.Symbol) and rest.is_integer and offset.is_Integer:
            lo, hi = self.bounds.get(rest, (None, None))
            shift = int(offset)
            return (None if lo is None else lo + shift, None if hi is None else hi + shift)
        return None
