"""Divergence claims proved for every value of the parameters, where closed forms reach.

Run with the parameters as sympy symbols (the symbolic reading,
:func:`dpverify.engine.program.symbolic.symbolic_laws`), a mechanism whose every dataset releases one
output of lone Laplace or Gaussian values over the whole line has, per ordered neighbouring pair,

    D_alpha = sum_k D_alpha(g_k || h_k),

the values being independent; each term is a closed form in the centres' distance t (derived
from the program's exact centres, never assumed) and the scale: alpha t^2 / (2 s^2) for a
Gaussian value, Mironov's expression for a Laplace value.  For zCDP only Gaussian values are
handled: D_alpha / alpha = sum_k t_k^2 / (2 s_k^2) for every alpha.  The claim holds for every
value when sympy simplifies claimed - achieved to an expression it shows non-negative under the
symbols' assumptions, for every distinct pair; otherwise the grid verdict stands, with the reason.
Discrete laws (every output a probability, no released value) go to :mod:`.discrete_proof`: for an
integer order the claim becomes polynomial inequalities in w = e^eps, decided exactly for every eps, or
refuted at an exact counterexample off the grid, re-confirmed in certified intervals.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import sympy

from ...dsl.claims import Renyi, Zcdp
from ...dsl.params import Point
from ...dsl.spec import Spec
from ...engine.continuous.noisy import FULL, Density
from ...engine.program.reading import keywords
from ...engine.loss.renyi import exact_number
from ...engine.program.symbolic import NotRational, symbolic_laws
from ...engine.program.work import params
from ...errors import SpecError
from ...results import PointResult, Status, Witness
from ..workspace import Workspace
from .discrete_proof import discrete


@dataclass
class Proof:
    status: Status
    message: str
    witness: Optional[Witness] = None


def generalise(result: PointResult, proof: Optional[Proof]) -> None:
    """Upgrade a grid verification to ``proved``, or add why there is no proof."""
    if proof is None:
        return
    if proof.status == Status.PROVED:
        result.status = Status.PROVED
        result.method = f"{result.method}; sympy proof for every value of the parameters"
        result.message = f"{proof.message}; on this grid point {result.message}"
    elif proof.status == Status.REFUTED:  # a counterexample off the grid, re-confirmed in certified intervals
        result.status, result.witness = Status.REFUTED, proof.witness
        result.method = f"{result.method}; exact polynomial algebra for every value of the parameters"
        result.message = f"{proof.message}; on this grid point {result.message}"
    else:
        result.message = f"{result.message}; {proof.message}"


def _symbols(point: Point, program: Any) -> list[sympy.Symbol]:
    """The parameters a proof generalises over: positive, real, not integer, taken by the program."""
    taken = keywords(program, {s.name: v for s, v in point}, skip=1)
    return [s for s, _ in point if s.is_positive and not s.is_integer and s.name in taken]


def prove_renyi(spec: Spec, program: Any, claim: Renyi, point: Point, ws: Workspace) -> Optional[Proof]:
    return _prove(spec, program, claim, point, ws, claim.alpha, claim.epsilon)


def prove_zcdp(spec: Spec, program: Any, claim: Zcdp, point: Point, ws: Workspace) -> Optional[Proof]:
    return _prove(spec, program, claim, point, ws, None, claim.rho)


def _prove(spec: Spec, program: Any, claim: Any, point: Point, ws: Workspace, alpha: Optional[sympy.Expr],
           bound: sympy.Expr) -> Optional[Proof]:
    symbols = _symbols(point, program)
    if not symbols:
        return None
    fixed = {s: v for s, v in point if s not in symbols}
    key = ("divergence-proofs", id(spec), claim.id, claim.kind, tuple(sorted(fixed.items(), key=str)))
    if key not in ws.memo:
        ws.memo[key] = _attempt(spec, program, point, ws, symbols, fixed,
                                None if alpha is None else alpha.subs(fixed), bound.subs(fixed))
    return ws.memo[key]


def _attempt(spec: Spec, program: Any, point: Point, ws: Workspace, symbols: list, fixed: dict,
             alpha: Optional[sympy.Expr], claimed: sympy.Expr) -> Proof:
    names = ", ".join(s.name for s in symbols)
    values = {**params(point), **{s.name: s for s in symbols}}
    datasets, left, right = ws.datasets(spec)
    table = ws.table(spec, program, point)
    try:
        ws.require_symmetric(spec, program, values)
        laws = symbolic_laws(program, datasets, values, table.windows,
                             (table, {s: v for s, v in point if s in symbols}))
    except NotRational as exc:
        return Proof(Status.UNKNOWN, f"no proof for all {names}: {exc}")
    except SpecError as exc:
        return Proof(Status.UNKNOWN, f"no proof for all {names}: the program does not run with symbolic "
                                     f"parameters ({exc.problem})")
    if alpha is not None and not any(isinstance(w, Density) for law in laws.laws for w in law.values()):
        status, message, witness = discrete(program, point, table, laws, datasets, left, right, symbols, alpha, claimed)
        return Proof(status, message, witness)
    achieved: dict = {}
    for i, j in zip(left.tolist(), right.tolist()):
        for a, b in ((i, j), (j, i)):
            la, lb = laws.law_of[a], laws.law_of[b]
            if la == lb:
                continue
            value = _achieved(laws.laws[la], laws.laws[lb], alpha)
            if isinstance(value, str):
                return Proof(Status.UNKNOWN, f"no proof for all {names}: {value}")
            achieved.setdefault(value, (datasets[a], datasets[b]))
    for value, (x, x_prime) in achieved.items():
        slack = sympy.simplify(claimed - value)
        if slack == 0 or slack.is_nonnegative:
            continue
        return Proof(Status.UNKNOWN, f"no proof for all {names}: sympy cannot show {claimed} >= {value} "
                                     f"(X={x!r}, X'={x_prime!r})")
    what = "D_alpha / alpha" if alpha is None else f"D_{alpha}"
    shown = ", ".join(str(v) for v in sorted(achieved, key=sympy.default_sort_key)[:3])
    return Proof(Status.PROVED, f"proved for every {names} > 0: {what} of every ordered neighbouring pair, "
                                f"derived in closed form from the program's centres and scales ({shown}"
                                f"{', ...' if len(achieved) > 3 else ''}), is at most {claimed}")


def _achieved(law: dict, law_prime: dict, alpha: Optional[sympy.Expr]) -> Any:
    """D_alpha (or, for alpha None, D_alpha / alpha) of one pair in closed form, or why there is none."""
    if len(law) != 1 or len(law_prime) != 1:
        return "the laws have several outputs (only single releases of noisy values are handled)"
    (output, weight), = law.items()
    (output_prime, weight_prime), = law_prime.items()
    if output != output_prime or not isinstance(weight, Density) or not isinstance(weight_prime, Density):
        return "the two datasets release different outputs, or outputs without noisy values"
    if len(weight.terms) != 1 or len(weight_prime.terms) != 1:
        return "an output released on several paths"
    factors, factors_prime = weight.terms[0][1], weight_prime.terms[0][1]
    if len(factors) != len(factors_prime) or any(f.joint for f in (*factors, *factors_prime)):
        return "released values that depend on each other, or a different number of them"
    total = sympy.Integer(0)
    for f, g in zip(factors, factors_prime):
        kinds = ("gaussian",) if alpha is None else ("gaussian", "laplace")
        if (f.noise is None or g.noise is None or f.noise.kind not in kinds or g.noise.kind != f.noise.kind
                or f.interval != FULL or g.interval != FULL or f.mix is not None or g.mix is not None):
            return (f"a released value that is not a lone {' or '.join(kinds)} variable over the whole line")
        scale = exact_number(f.noise.scale)
        if sympy.simplify(scale - exact_number(g.noise.scale)) != 0:
            return "released values with different scales"
        t = sympy.Abs(exact_number(f.noise.centre + f.offset) - exact_number(g.noise.centre + g.offset)) / scale
        if f.noise.kind == "gaussian":
            total += (1 if alpha is None else alpha) * t ** 2 / 2
        else:
            total += sympy.log(alpha / (2 * alpha - 1) * sympy.exp((alpha - 1) * t)
                               + (alpha - 1) / (2 * alpha - 1) * sympy.exp(-alpha * t)) / (alpha - 1)
    return sympy.simplify(total)
