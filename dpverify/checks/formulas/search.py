"""The second attacker: a numeric search for counterexamples to a formula claim.

For claims outside z3's reach (transcendental functions in earnest, sums it
cannot unroll) the search draws points with hypothesis strategies built from
the symbols' assumptions and the bounds the linear ``where`` conditions imply
(integers, and exact fractions for reals, with the bounds and small values as
explicit examples), keeps those that satisfy every condition exactly, and
scores each by its *violation* at 30 digits with mpmath:

    identity:    |lhs - rhs| / (1 + |lhs| + |rhs|)
    inequality:  (lhs - rhs) / (1 + |lhs| + |rhs|)

A point whose score says the claim fails is re-checked exactly
(:meth:`~.formula_problem.Problem.confirm`); only a confirmed point is
returned.  When sampling finds none, the best-scoring points (and any spurious
z3 models) are refined by a coordinate search with halving steps, each step
exact rational arithmetic on the point and mpmath on the score.  The search
never proves anything: not finding a counterexample is ``unknown``.

Runs are deterministic (hypothesis ``derandomize=True``, no example database, and
nothing written to disk: see :func:`dpverify.checks.hypothesis_runs.isolated`), and
bounded by counts only -- MAX_EXAMPLES sampled points, REFINE_EVALUATIONS steps per
refinement -- never by a clock, so the same claim gets the same answer at any machine load
(the formula check's one safety net, in CPU seconds, sits around the whole check).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Callable, Optional

import mpmath
import sympy

from ..hypothesis_runs import isolated
from .problem import Counterexample, Problem, Values

SEARCH_DPS = 30
MAX_EXAMPLES = 400
REFINE_EVALUATIONS = 600
DEFAULT_SPAN = 20
TOLERANCE = mpmath.mpf(10) ** -20

Score = Callable[[Values], Optional[mpmath.mpf]]


def search(problem: Problem, bounds: dict, seeds: list[Values]) -> tuple[Optional[Counterexample], str]:
    """A confirmed counterexample (or None) and a sentence saying what was searched."""
    score = _scorer(problem)
    if score is None:
        return None, "numeric search impossible (the sides do not evaluate numerically)"
    best: list[tuple[mpmath.mpf, Values]] = []
    confirmed: dict[tuple, Optional[Counterexample]] = {}

    def confirm(values: Values) -> Optional[Counterexample]:
        key = tuple(values.values())
        if key not in confirmed:
            confirmed[key] = problem.confirm(values)
        return confirmed[key]

    def breaks(values: Values) -> bool:
        value = _score_in_domain(problem, score, values)
        if value is None:
            return False
        best.append((value, values))
        best.sort(key=lambda item: -item[0])
        del best[5:]
        return value > _threshold(problem) and confirm(values) is not None

    found = _sample(problem, bounds, breaks)
    if found is not None:
        return confirm(found), f"numeric search (hypothesis, up to {MAX_EXAMPLES} points)"
    starts = [v for v in seeds if _score_in_domain(problem, score, v) is not None] + [v for _, v in best]
    for start in starts:
        point = _refine(problem, score, start, breaks)
        if point is not None:
            return confirm(point), "numeric search (hypothesis, then coordinate refinement)"
    return None, (f"numeric search found no counterexample in {MAX_EXAMPLES} hypothesis examples and "
                  f"{len(starts)} refinements")


def _threshold(problem: Problem) -> mpmath.mpf:
    return -TOLERANCE if problem.relation == "<" else TOLERANCE


def _scorer(problem: Problem) -> Optional[Score]:
    """The violation of the claim at a point, at SEARCH_DPS digits (None where undefined)."""
    try:
        sides = [sympy.lambdify(problem.symbols, side, modules="mpmath") for side in (problem.lhs, problem.rhs)]
    except Exception:  # an expression lambdify cannot print
        return None

    def score(values: Values) -> Optional[mpmath.mpf]:
        args = [mpmath.mpf(int(v.p)) / int(v.q) for v in values.values()]
        try:
            with mpmath.workdps(SEARCH_DPS):
                left, right = (mpmath.mpmathify(f(*args)) for f in sides)
                if not (mpmath.isfinite(left) and mpmath.isfinite(right)) or \
                        isinstance(left, mpmath.mpc) or isinstance(right, mpmath.mpc):
                    return None
                gap = left - right
                scale = 1 + abs(left) + abs(right)
                return (abs(gap) if problem.relation == "=" else gap) / scale
        except (ZeroDivisionError, ValueError, TypeError, OverflowError, ArithmeticError):
            return None
    return score


def _score_in_domain(problem: Problem, score: Score, values: Values) -> Optional[mpmath.mpf]:
    if problem.in_domain(values) is not True:
        return None
    return score(values)


def _sample(problem: Problem, bounds: dict, breaks: Callable[[Values], bool]) -> Optional[Values]:
    """A confirmed counterexample found (and shrunk) by hypothesis, or None."""
    try:
        from hypothesis import HealthCheck, find, settings, strategies as st
        from hypothesis.errors import HypothesisException
    except ImportError:  # hypothesis is optional at run time: refinement still runs
        return None
    try:
        parts = [_strategy(st, sym, *bounds.get(sym, (None, None))) for sym in problem.symbols]
        strategy = st.tuples(*parts).map(lambda combo: dict(zip(problem.symbols, combo)))
        config = settings(max_examples=MAX_EXAMPLES, database=None, derandomize=True, deadline=None,
                          suppress_health_check=list(HealthCheck))
        with isolated():
            return find(strategy, breaks, settings=config)
    except HypothesisException:  # no example found (NoSuchExample), empty ranges, ...
        return None


def _strategy(st, sym: sympy.Symbol, lo: Optional[Fraction], hi: Optional[Fraction]):
    """Exact values for one symbol within its bounds (a window of DEFAULT_SPAN when unbounded)."""
    if lo is None and hi is None:
        lo, hi = Fraction(-DEFAULT_SPAN // 2), Fraction(DEFAULT_SPAN // 2)
    elif lo is None:
        lo = hi - DEFAULT_SPAN
    elif hi is None:
        hi = lo + DEFAULT_SPAN
    if sym.is_integer:
        ints = st.integers(int(-(-lo // 1)), int(hi // 1))
        return ints.map(sympy.Integer)
    specials = sorted({v for v in (lo, hi, Fraction(0), Fraction(1), Fraction(-1), Fraction(1, 2), Fraction(2),
                                   lo + 1, hi - 1, (lo + hi) / 2) if lo <= v <= hi})
    values = st.one_of(st.sampled_from(specials), st.fractions(lo, hi, max_denominator=64))
    return values.map(lambda f: sympy.Rational(f.numerator, f.denominator))


def _refine(problem: Problem, score: Score, start: Values, breaks: Callable[[Values], bool]) -> Optional[Values]:
    """Coordinate search from ``start`` towards a larger violation, with halving steps."""
    point, current = dict(start), _score_in_domain(problem, score, start)
    if current is None:
        return None
    if breaks(point):
        return point
    budget = REFINE_EVALUATIONS
    step = sympy.Integer(1)
    while budget > 0 and step >= sympy.Rational(1, 2**16):
        improved = False
        for sym in problem.symbols:
            if sym.is_integer and step < 1:
                continue
            for direction in (1, -1):
                trial = dict(point)
                trial[sym] = point[sym] + direction * step
                budget -= 1
                value = _score_in_domain(problem, score, trial)
                if value is not None and value > current:
                    point, current, improved = trial, value, True
                    if breaks(point):
                        return point
        if not improved:
            step /= 2
    return None
