"""The formula check: identities and inequalities over sympy expressions, proved or broken.

A claim ``lhs REL rhs`` (``=``, ``<=`` or ``<``) quantifies over its symbols,
within their sympy assumptions and the claim's ``where`` conditions.  The
attackers run in order, and the first verdict wins:

1. **exhaustive exact evaluation** -- when every symbol is an integer in a
   small finite range, every point is decided exactly, on the sides as
   written (exact rationals, certified intervals for e, pi, exp, log:
   :mod:`.fast`; sympy where those cannot tell).  -> ``proved`` or ``refuted``
   (a proof of the claim as stated: it quantifies over that finite domain)
2. **sympy simplification** -- lhs - rhs simplifies to 0 (or, when logs are
   involved, exp(lhs) - exp(rhs) does: exp is injective on the reals); for an
   inequality, sympy's assumptions show rhs - lhs >= 0.  A symbol with a
   numeric lower bound in ``where`` (a > 1) is first written as 1 + a' with a'
   positive.  These derivations hold for every value the *assumptions* allow,
   a superset of the domain.  -> ``proved``
3. **z3** -- the negation of the claim with the assumptions and the domain
   (:mod:`dpverify.engine.decide.smt`).  ``unsat`` proves the claim when the encoding
   is exact or only relaxed (over-approximated); a restricted encoding (a
   bounded search) proves nothing.  A model is a *candidate* only.
4. **numeric search** (:mod:`.formula_search`) -- for candidates z3 could
   not produce or confirm.  It never proves.

Every candidate counterexample is re-checked exactly on the claim as written
(:meth:`~.formula_problem.Problem.confirm`) before it is reported as ``refuted``.

>>> import sympy, dpverify as dp
>>> x, r = dp.symbol("x"), dp.symbol("r", positive=True)
>>> hinge = sympy.Max(r - x, 0)
>>> s = dp.spec(name="hinge", claims=[dp.identity(hinge, r - x, where=[x <= r]), dp.identity(hinge, r - x)])
>>> [(res.status.value, res.method) for res in dp.check(s)]
[('proved', 'z3 exact'), ('refuted', 'z3 exact')]
>>> sorted(dp.check(s)[1].witness.x)
['r', 'x']
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Optional, Union

import sympy
import z3

from ...dsl.claims import Claim, Identity, Inequality
from ...dsl.params import Point
from ...dsl.spec import Spec
from ...engine.decide import smt, smt_values
from ...engine.program.backend import is_exactly_zero
from ...errors import SpecError
from .problem import (Counterexample, Diverges, OutOfTime, Problem, Undecidable, certified_sign, evaluate,
                              normalise, time_limit)
from .search import search
from . import fast
from ...evidence import FormulaEvidence
from ...results import PointResult, Status, Witness
from ..workspace import Workspace
from ...engine.decide.decimals import decimal

Z3_RLIMIT = 3_000_000
"""z3's resource limit per query (a count of its steps, so the verdict does not depend on the
machine's load): over 14 times what the most demanding formula claim of the catalogue needs (about
210,000).  Sized so that it binds long before the CPU-time safety net (300 s) even on a machine ten
times slower: z3's nonlinear solver can run 10 s between two ticks of its count, and the slowest query
found (a sum of squares of quadratics in three variables plus a shifted copy,
``tests/test_soundness_budgets.py``) spends about 10 s of CPU here on 3,000,000 (it spent minutes on
the 50,000,000 of before, so its verdict depended on the net)."""
EXHAUSTIVE_LIMIT = 5000
FormulaClaim = Union[Identity, Inequality]


class FormulaCheck:
    kind = "formula"

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, (Identity, Inequality))

    def run(self, spec: Spec, claim: FormulaClaim, point: Point, ws: Workspace) -> PointResult:
        """Every budget inside is a count (z3's rlimit, example and step counts); the one clock is
        the far safety net around the whole check, and when it fires the verdict is ``unknown``."""
        try:
            with time_limit():
                return self._run(claim)
        except (OutOfTime, smt.SafetyLimit) as exc:
            return PointResult({}, Status.UNKNOWN, f"undecided: {exc}", method="sympy, z3, numeric search")

    def _run(self, claim: FormulaClaim) -> PointResult:
        # A small finite integer domain is decided point by point first: exact, and a proof of the claim
        # as stated (sympy's derivation, tried first otherwise, would prove no more of it), without the
        # sympy work of normalising the sides (a symbolic sum's doit) that only the other attackers use.
        written = Problem.from_claim(claim, normalised=False)
        bounds = smt_values.symbol_bounds(written.symbols, list(written.where))  # normalising changes neither
        early = exhaustive(written, bounds)
        if isinstance(early, Counterexample):
            return _refuted(written, "exhaustive exact evaluation", early, "")
        if isinstance(early, int) and early > 0:
            return _proved(written, "exhaustive exact evaluation",
                           f"all {early} integer points of the finite domain were decided exactly")
        try:
            problem = Problem.from_claim(claim)
        except Diverges as exc:
            return PointResult({}, Status.UNKNOWN, f"undecided: {exc}, so the claim compares no real numbers",
                               method="sympy")
        notes: list[str] = []
        if vacuous(problem, bounds):
            raise SpecError(f"{claim.kind} {problem.statement}: no value of {', '.join(map(str, problem.symbols))} "
                            f"satisfies the assumptions and where conditions with both sides defined, so the claim "
                            f"says nothing (z3 shows the domain empty)",
                            "check the where conditions and the symbols' assumptions")
        try:
            derivation = sympy_proof(problem)
        except Exception as exc:  # sympy raises assorted errors on forms it cannot handle
            derivation = None
            notes.append(f"sympy simplification failed ({type(exc).__name__})")
        else:
            if derivation is None:
                notes.append("sympy could not simplify the claim to a tautology")
        if derivation is not None:
            return _proved(problem, "sympy simplification", derivation)
        found = early  # the same points, read on the sides as written: already decided above
        if isinstance(found, Counterexample):
            return _refuted(problem, "exhaustive exact evaluation", found, "")
        if isinstance(found, int):
            return _proved(problem, "exhaustive exact evaluation",
                           f"all {found} integer points of the finite domain were decided exactly")
        if found:
            notes.append(found)
        try:
            status, method, detail, candidates = z3_attack(problem, bounds)
        except (z3.Z3Exception, ArithmeticError, ValueError, TypeError) as exc:  # a construct z3 rejects
            status, method, detail, candidates = Status.UNKNOWN, "z3", f"z3 failed ({type(exc).__name__}: {exc})", []
        if isinstance(status, Counterexample):
            return _refuted(problem, method, status, detail)
        if status is Status.PROVED:
            return _proved(problem, method, detail)
        notes.append(detail)
        counterexample, searched = search(problem, bounds, candidates)
        if counterexample is not None:
            return _refuted(problem, "numeric search", counterexample,
                            f"{searched}; z3 did not confirm one ({detail})")
        notes.append(searched)
        return PointResult({}, Status.UNKNOWN, f"undecided: {'; '.join(notes)}", method="sympy, z3, numeric search")


def _proved(problem: Problem, method: str, detail: str) -> PointResult:
    message = (f"proved by {method}: {detail}; {problem.statement} holds {problem.conditions_text()}"
               + (" wherever both sides are defined" if problem.partial else ""))
    if problem.notes:
        message += "; " + "; ".join(problem.notes)
    return PointResult({}, Status.PROVED, message, method=method,
                       evidence=FormulaEvidence(str(problem.statement), problem.conditions_text(), detail))


def _refuted(problem: Problem, method: str, cx: Counterexample, detail: str) -> PointResult:
    values = {s.name: str(v) for s, v in cx.values.items()}
    message = (f"refuted by {method}: {cx.describe()}, so {problem.statement} fails; "
               f"confirmed exactly (sympy, certified to 80 digits)" + (f"; {detail}" if detail else ""))
    lhs, rhs = decimal(cx.lhs), decimal(cx.rhs)
    return PointResult({}, Status.REFUTED, message, method=method, witness=Witness(values, None, None, lhs, rhs),
                       evidence=FormulaEvidence(str(problem.statement), problem.conditions_text(), None, values,
                                                lhs, rhs))


# ----- 1. sympy ------------------------------------------------------------------------

def sympy_proof(problem: Problem) -> Optional[str]:
    """A sympy derivation of the claim for all values the symbols' assumptions allow, or None.

    Sides with Max, Min or Piecewise get only a cheap expansion: sympy's
    simplify rarely settles them and is slow there, while z3 decides
    piecewise-polynomial arithmetic exactly.
    """
    for lhs, rhs, how in _forms(problem):
        heavy = not (lhs - rhs).has(sympy.Max, sympy.Min, sympy.Piecewise)
        if problem.relation == "=":
            if _is_zero(lhs - rhs, heavy):
                return f"lhs - rhs simplifies to 0{how}"
            if heavy and (lhs - rhs).has(sympy.log) and is_exactly_zero(sympy.exp(lhs) - sympy.exp(rhs)):
                return f"exp(lhs) - exp(rhs) simplifies to 0 and exp is injective on the reals{how}"
        else:
            gap = rhs - lhs
            for form in (gap, sympy.simplify(gap)) if heavy else (gap,):
                if (form.is_positive if problem.relation == "<" else form.is_nonnegative):
                    return f"rhs - lhs = {form} is {'positive' if problem.relation == '<' else 'non-negative'}{how}"
    return None


def _is_zero(expr: sympy.Expr, heavy: bool) -> bool:
    return is_exactly_zero(expr) if heavy else sympy.expand(expr) == 0


def _forms(problem: Problem) -> Iterator[tuple[sympy.Expr, sympy.Expr, str]]:
    """The claim as normalised, then with every symbol that has a numeric lower bound in ``where``
    shifted to a non-negative (or positive) one: a > 1 becomes a = 1 + a' with a' positive."""
    yield problem.lhs, problem.rhs, ""
    shifts, shown = {}, []
    for cond in problem.where:
        sym, low, strict = _lower_bound(cond)
        if sym is None or sym in shifts:
            continue
        assumptions = {"real": True, "nonnegative": True}
        assumptions.update({"positive": True} if strict else {})
        assumptions.update({"integer": True} if sym.is_integer else {})
        fresh = sympy.Dummy(f"{sym.name}_", **assumptions)  # never a symbol of the claim (n_ may be one)
        shifts[sym] = low + fresh
        shown.append(f"{sym} = {low} + {fresh} with {fresh} {'> 0' if strict else '>= 0'}")
    if shifts:
        notes: list[str] = []
        yield (normalise(problem.original[0].xreplace(shifts), notes),
               normalise(problem.original[1].xreplace(shifts), notes), f" after writing {', '.join(shown)}")


def _lower_bound(cond: sympy.Basic) -> tuple[Optional[sympy.Symbol], Optional[sympy.Expr], bool]:
    if isinstance(cond, (sympy.StrictGreaterThan, sympy.GreaterThan)):
        big, small = cond.lhs, cond.rhs
    elif isinstance(cond, (sympy.StrictLessThan, sympy.LessThan)):
        big, small = cond.rhs, cond.lhs
    else:
        return None, None, False
    if isinstance(big, sympy.Symbol) and small.is_Rational and not (big.is_integer and not small.is_integer):
        return big, small, isinstance(cond, (sympy.StrictGreaterThan, sympy.StrictLessThan))
    return None, None, False


# ----- 2. finite domains ---------------------------------------------------------------

def exhaustive(problem: Problem, bounds: dict) -> Union[Counterexample, int, str, None]:
    """Decide every point when all symbols are integers in a finite range of at most
    EXHAUSTIVE_LIMIT points: a counterexample, the number of points decided, a reason it could not
    finish, or None when the domain is not of that kind."""
    ranges = []
    for sym in problem.symbols:
        lo, hi = bounds.get(sym, (None, None))
        if not sym.is_integer or lo is None or hi is None:
            return None
        ranges.append(range(math.ceil(lo), math.floor(hi) + 1))
    if not ranges or math.prod(len(r) for r in ranges) > EXHAUSTIVE_LIMIT:
        return None
    decided = 0
    for combo in itertools.product(*ranges):
        values = {s: sympy.Integer(v) for s, v in zip(problem.symbols, combo)}
        inside = problem.in_domain(values)
        if inside is False:
            continue
        if inside is None:
            return f"exhaustive evaluation could not decide the conditions at {_show(values)}"
        quick = fast.sign(*problem.original, values)  # exact or certified, else None: then the slow way
        if quick is not None and not {"=": quick != 0, "<=": quick > 0, "<": quick >= 0}[problem.relation]:
            decided += 1
            continue
        try:
            sides = [evaluate(side, values) for side in problem.original]
        except Undecidable as err:
            return f"exhaustive evaluation could not evaluate {err}"
        if sides[0] is None or sides[1] is None:
            continue  # a side is undefined here: outside the domain
        sign = certified_sign(sides[0] - sides[1])
        if sign is None:
            return f"exhaustive evaluation could not decide the sign at {_show(values)}"
        if {"=": sign != 0, "<=": sign > 0, "<": sign >= 0}[problem.relation]:
            found = problem.confirm(values)
            if found is None:
                return f"a failure at {_show(values)} was not confirmed at 80 digits"
            return found
        decided += 1
    return decided


def _show(values: dict) -> str:
    return ", ".join(f"{s} = {v}" for s, v in values.items())


# ----- 3. z3 ---------------------------------------------------------------------------

def z3_attack(problem: Problem, bounds: dict, rlimit: int = Z3_RLIMIT,
              models: int = 3) -> tuple[Union[Status, Counterexample], str, str, list[dict]]:
    """(status or confirmed counterexample, method, detail, rejected candidate points) from z3.

    Asserts the symbols' assumptions, the encoding's facts and domain, ``where`` and the negated
    claim.  ``unsat`` proves the claim unless the encoding is restricted; each model is re-checked
    exactly, and up to ``models`` spurious ones are blocked and passed on to the numeric search.
    """
    tr = smt.Translator(problem.symbols, smt_values.integer_bounds(bounds))
    try:
        lhs, rhs = tr.term(smt.prepare(problem.lhs)), tr.term(smt.prepare(problem.rhs))
        where = [tr.formula(c) for c in problem.where]
    except smt.Unsupported as err:
        return Status.UNKNOWN, "z3", f"z3 cannot express {err}", []
    enc = tr.encoding()
    method = "z3 exact" if enc.exact else "z3 relaxed"
    negation = {"=": lhs != rhs, "<=": lhs > rhs, "<": lhs >= rhs}[problem.relation]
    solver = z3.Solver()
    solver.add(*enc.facts, *enc.domain, *where, negation)
    candidates = []
    for _ in range(models):
        outcome = smt.check(solver, rlimit)
        if outcome.answer == z3.unsat:
            if not candidates and enc.proves:
                return Status.PROVED, method, _how(enc), []
            if not enc.proves:
                return (Status.UNKNOWN, method, f"z3 found no counterexample, but only in a bounded search "
                        f"({'; '.join(enc.restrictions)})", candidates)
            return (Status.UNKNOWN, method, "z3's models were all spurious (a relaxed encoding, or assumptions "
                    "such as prime that z3 does not state)", candidates)
        if outcome.answer == z3.unknown:
            reason = f"z3 gave up ({outcome.reason}; resource limit {rlimit:,})"
            return Status.UNKNOWN, method, reason, candidates
        model = outcome.model
        variables = enc.variables
        values = {s: smt_values.model_value(model, variables[s]) for s in problem.symbols}
        found = problem.confirm(values)
        if found is not None:
            relaxed = "" if enc.exact else f"; encoding relaxed ({'; '.join(enc.relaxations)})"
            return found, method, "a z3 model" + relaxed, candidates
        candidates.append(values)
        solver.add(z3.Or(*[variables[s] != _z3_value(values[s], variables[s]) for s in problem.symbols])
                   if problem.symbols else z3.BoolVal(False))
    return Status.UNKNOWN, method, f"z3's {models} models did not survive the exact re-check", candidates


def vacuous(problem: Problem, bounds: dict, rlimit: int = Z3_RLIMIT) -> bool:
    """Whether z3 shows that no point satisfies the assumptions and ``where`` with both sides
    defined: then every proof would be vacuous (a typo in ``where`` would pass any claim).
    False when z3 cannot tell, or reads the claim only in a bounded search."""
    tr = smt.Translator(problem.symbols, smt_values.integer_bounds(bounds))
    try:
        tr.term(smt.prepare(problem.lhs)), tr.term(smt.prepare(problem.rhs))
        where = [tr.formula(c) for c in problem.where]
    except (smt.Unsupported, z3.Z3Exception, ArithmeticError, ValueError, TypeError):
        return False
    enc = tr.encoding()
    solver = z3.Solver()
    solver.add(*enc.facts, *enc.domain, *where)
    return enc.proves and smt.check(solver, rlimit).answer == z3.unsat


def _z3_value(value: sympy.Rational, var: z3.ExprRef) -> z3.ExprRef:
    return z3.IntVal(int(value)) if var.is_int() else smt.rational(value)


def _how(enc: smt.Encoding) -> str:
    text = "the negation is unsatisfiable (z3)"
    if enc.relaxations:
        text += ("; the encoding over-approximates, which is sound for a proof: "
                 + "; ".join(enc.relaxations))
    return text
