"""Pure DP of released Laplace values, proved for every eps.

Run with eps a symbol, a mechanism that releases q(X) + Lap(b(eps)) values
(each its own noise variable, restricted at most to an interval by
comparisons with constants) has, per released value, the log density ratio

    l(v) = (|v - q'| - |v - q|) / b,

derived here with sympy: l is piecewise linear in v with breakpoints q and q',
so its supremum over the value's interval I is the largest of l at the finite
ends of I, at q and q' inside I, and the limits of l at the unbounded ends
(sympy.limit).  With the centres exact this is K/b for a rational K -- the
textbook |q - q'|/b when I is the whole line, derived rather than assumed.
The loss of a pair is the sum over released values, a function of eps; the
claim eps' holds for every eps when sympy shows eps' - loss >= 0 under the
parameters' assumptions.
"""
from __future__ import annotations

import functools
from fractions import Fraction
from typing import Any, Optional

import sympy

from ...dsl.claims import Private
from ...dsl.params import Point
from ...dsl.spec import Spec
from ...engine.continuous.noisy import Density
from ...engine.program.symbolic import NotRational, symbolic_laws
from ...errors import SpecError
from .proof import Proof, proof_symbols
from ...results import Status
from ..workspace import Workspace
from ...engine.program.work import params

_V = sympy.Symbol("v", real=True)
_B = sympy.Symbol("b", positive=True)


def _number(value: Any) -> sympy.Expr:
    return sympy.Rational(value.numerator, value.denominator) if isinstance(value, Fraction) else sympy.sympify(value)


@functools.lru_cache(maxsize=4096)
def laplace_loss_coefficient(centre: Any, centre_prime: Any, lo: Any, hi: Any) -> sympy.Expr:
    """K with sup over v in (lo, hi) of (|v - centre'| - |v - centre|)/b = K/b for every b > 0."""
    mu, nu = _number(centre), _number(centre_prime)
    loss = (sympy.Abs(_V - nu) - sympy.Abs(_V - mu)) / _B
    values = []
    for point in (lo, hi, centre, centre_prime):
        if point is None:
            continue
        p = _number(point)
        if (lo is None or p >= _number(lo)) and (hi is None or p <= _number(hi)):
            values.append(loss.subs(_V, p))
    if lo is None:
        values.append(sympy.limit(loss, _V, -sympy.oo))
    if hi is None:
        values.append(sympy.limit(loss, _V, sympy.oo))
    return sympy.simplify(sympy.Max(*values) * _B)


def prove_density(spec: Spec, program: Any, claim: Private, point: Point, ws: Workspace) -> Optional[Proof]:
    """Prove eps-DP of a mechanism releasing Laplace values for every value of its continuous parameters."""
    symbols = proof_symbols(point, program)
    if not symbols or claim.delta != 0:
        return None
    values = {**params(point), **{s.name: s for s in symbols}}
    fixed = {s: v for s, v in point if s not in symbols}
    datasets, left, right = ws.datasets(spec)
    names = ", ".join(s.name for s in symbols)
    try:
        ws.require_symmetric(spec, program, values)  # multisets stand for every ordering, for every value
        laws = symbolic_laws(program, datasets, values, {})
    except NotRational:
        return Proof(Status.UNKNOWN, f"no proof for all {names}: the released values depend on comparisons "
                                     "of noise, whose integrals are not handled symbolically")
    except SpecError as exc:
        return Proof(Status.UNKNOWN, f"no proof for all {names}: the program does not run with symbolic "
                                     f"parameters ({exc.problem})")
    claimed = claim.epsilon.subs(fixed)
    worst: dict = {}
    for i, j in zip(left.tolist(), right.tolist()):
        for a, b in ((i, j), (j, i)):
            law, law_prime = laws.laws[laws.law_of[a]], laws.laws[laws.law_of[b]]
            for output, weight in law.items():
                loss = _loss(weight, law_prime.get(output))
                if isinstance(loss, str):
                    return Proof(Status.UNKNOWN, f"no proof for all {names}: {loss}")
                worst.setdefault(loss, (datasets[a], datasets[b], output))
    for loss, (x, x_prime, output) in worst.items():
        slack = sympy.simplify(claimed - loss)
        if slack.is_nonnegative:
            continue
        return Proof(Status.UNKNOWN, f"no proof for all {names}: cannot show {claimed} >= {loss} "
                                     f"(X={x!r}, X'={x_prime!r}, o={output!r})")
    largest = sorted(worst, key=lambda e: sympy.default_sort_key(e))
    shown = ", ".join(str(e) for e in largest[:3]) + (", ..." if len(largest) > 3 else "")
    return Proof(Status.PROVED, f"proved for every {names} > 0: the log density ratio of each released Laplace "
                                f"value is piecewise linear, its supremum derived with sympy; the distinct "
                                f"losses over all pairs ({shown}) are at most {claimed}",
                 method="sympy derivation of sup ln(density ratio)")


_SIMPLIFIED: dict = {}
"""sympy.simplify's results by expression: the same constants, scales and losses recur over the pairs
(sq_learner: about 22,000 calls).  Expressions holding Floats are simplified afresh every time."""


def _simplify(expr: Any) -> Any:
    expr = sympy.sympify(expr)
    if expr.has(sympy.Float):
        return sympy.simplify(expr)
    found = _SIMPLIFIED.get(expr)
    if found is None:
        if len(_SIMPLIFIED) > 50_000:
            _SIMPLIFIED.clear()
        found = _SIMPLIFIED[expr] = sympy.simplify(expr)
    return found


def _loss(weight: Any, weight_prime: Any) -> Any:
    """The symbolic loss of one (pair, output), or a reason it cannot be derived."""
    if weight_prime is None:
        return "an output possible under one dataset only"
    if not isinstance(weight, Density) or not isinstance(weight_prime, Density):
        return "a released output mixed with discrete outputs"
    if len(weight.terms) != 1 or len(weight_prime.terms) != 1:
        return "an output released on several paths"
    (c, factors), (c_prime, factors_prime) = weight.terms[0], weight_prime.terms[0]
    if _simplify(sympy.sympify(c) - sympy.sympify(c_prime)) != 0:
        return "discrete probabilities that differ between the datasets"
    total = sympy.Integer(0)
    for f, g in zip(factors, factors_prime):
        if f.noise is None or g.noise is None or f.noise.kind != "laplace" or g.noise.kind != "laplace":
            return "a released value that is not a lone Laplace variable"
        if f.interval != g.interval or _simplify(_number(f.noise.scale) - _number(g.noise.scale)) != 0:
            return "released Laplace values with different scales or intervals"
        lo, hi = f.interval
        k = laplace_loss_coefficient(f.noise.centre + f.offset, g.noise.centre + g.offset,
                                     None if lo is None else lo + f.offset, None if hi is None else hi + f.offset)
        total += k / _number(f.noise.scale)
    return _simplify(total)
