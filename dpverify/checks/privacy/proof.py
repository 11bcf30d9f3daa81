"""Pure DP proved for every eps > 0 on a finite universe, with z3.

The symbolic reading (:mod:`dpverify.engine.program.symbolic`) gives every output
probability as a rational function of w = e^(eps/L).  The claim
P(o|X) <= e^eps' P(o|X') for all neighbours and outputs becomes, after
clearing denominators that are shown positive for all w > 1, a finite set of
polynomial inequalities H(w) >= 0.  Each distinct H is handed to z3's
nonlinear real arithmetic as "exists w > 1 with H(w) < 0": ``unsat`` for all
of them proves the claim for every eps > 0; a model is turned into an exact
rational w*, checked exactly (H(w*) < 0 in rational arithmetic) and then
confirmed by recomputing both laws at eps* = L ln w* in certified intervals
at twice the precision, before the claim is refuted.

With one parameter (one w) the constraints are built in integer arithmetic (:func:`_prove_one`): each
distinct weight read once (:mod:`dpverify.engine.decide.wreader`), each pair of distinct laws once, each
distinct H -- every (pair, direction, output) constraint, deduplicated by its exact canonical form, none
dropped as implied -- decided once by exact real-root isolation, after an integer Taylor shift that settles
most of them (tests/test_proof_reduced.py holds the set equal to the brute-force one).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional, Union

import math
import sys

import sympy

from ...dsl.claims import Private
from ...dsl.params import Point
from ...dsl.spec import Spec
from ...engine.program.backend import IntervalBackend
from ...errors import SpecError
from ...engine.decide.positivity import Dense, find_point, find_point_dense
from ...engine.decide.wreader import read
from ...engine.program.reading import Table, distribution, keywords
from ...engine.decide.safety import SafetyLimit
from ...engine.program.symbolic import NotRational, WBasis, basis, rational_function, symbolic_laws
from .level import e_to
from ...results import Status, Witness
from ..witness import figure, number
from ..workspace import Workspace
from ...engine.decide.decimals import decimal
from ...engine.program.work import params

QUERY_RLIMIT = 3_000_000
"""z3's resource limit per query (a count of its steps), so that a proof's outcome does not depend on
the machine's load; sized like the formula check's (:data:`~dpverify.checks.formulas.check.Z3_RLIMIT`)
to bind long before the CPU-time safety net even on a machine ten times slower."""
PROOF_RLIMIT = 30_000_000
"""z3's resources for all the queries of one proof; beyond it the claim keeps its grid verdict,
with the reason.  (One-parameter proofs use exact root isolation, which always answers.)"""


@dataclass
class Proof:
    """The outcome of a proof attempt: PROVED, REFUTED (with witness) or UNKNOWN (with reason)."""

    status: Status
    message: str
    witness: Optional[Witness] = None
    method: str = ""
    at: dict[str, str] = field(default_factory=dict)


def proof_symbols(point: Point, *programs: Any) -> list[sympy.Symbol]:
    """The parameters a proof generalises over: positive, real, not integer (eps and its kin),
    and taken by one of the programs (a grid may hold parameters only a claim uses)."""
    taken = [keywords(p, {s.name: v for s, v in point}, skip=1) for p in programs]
    return [sym for sym, _ in point if sym.is_positive and not sym.is_integer
            and (not programs or any(sym.name in names for names in taken))]


def prove_private(spec: Spec, program: Any, claim: Private, point: Point, table: Table,
                  ws: Workspace) -> Optional[Proof]:
    """Try to prove ``claim`` for every value of the continuous parameters (others fixed)."""
    symbols = proof_symbols(point, program)
    if not symbols or claim.delta != 0:
        return None
    # A proof over symbols S holds at every point that agrees on the other parameters: reuse it.
    done = ws.memo.setdefault(("privacy-proofs", id(spec), program, claim.id, ws.options.precision), [])
    for over, fixed, proof in done:
        if tuple((s, v) for s, v in point if s not in over) == fixed:
            return proof
    proof = _safely(spec, program, claim, point, symbols, table, ws)
    while isinstance(proof, NotRational) and proof.symbols and set(symbols) - proof.symbols:
        symbols = [s for s in symbols if s not in proof.symbols]  # keep those fixed, prove over the rest
        proof = _safely(spec, program, claim, point, symbols, table, ws)
    if isinstance(proof, NotRational):
        proof = Proof(Status.UNKNOWN, f"no proof for all {', '.join(s.name for s in symbols)}: {proof}")
    done.append((frozenset(symbols), tuple((s, v) for s, v in point if s not in symbols), proof))
    return proof


def _safely(spec: Spec, program: Any, claim: Private, point: Point, symbols: list[sympy.Symbol], table: Table,
            ws: Workspace) -> Union[Proof, NotRational]:
    """:func:`_prove`, or ``unknown`` saying so when z3's far CPU-time safety net fired."""
    try:
        return _prove(spec, program, claim, point, symbols, table, ws)
    except SafetyLimit as exc:
        return Proof(Status.UNKNOWN, f"no proof for all {', '.join(s.name for s in symbols)}: {exc}")


def _prove(spec: Spec, program: Any, claim: Private, point: Point, symbols: list[sympy.Symbol], table: Table,
           ws: Workspace) -> Union[Proof, NotRational]:
    values = {**params(point), **{s.name: s for s in symbols}}
    fixed = {s: v for s, v in point if s not in symbols}
    datasets, left, right = ws.datasets(spec)
    try:
        ws.require_symmetric(spec, program, values)  # multisets stand for every ordering, for every value
        at = {s: v for s, v in point if s in symbols}  # the symbolic laws must agree with the table there
        laws = symbolic_laws(program, datasets, values, table.windows, (table, at))
        bound = sympy.exp(claim.epsilon.subs(fixed))
        weights = list(dict.fromkeys(w for law in laws.laws for w in law.values()))  # each distinct weight once
        base = basis(weights + [bound], symbols)
        if len(base.variables) == 1:  # one variable: integer coefficient lists and root isolation, no z3
            dense, numbered = _dense_laws(laws.laws, base)
            one = (dense, numbered, _dense_weight(bound, base))
        else:
            ratio = _rational_laws(laws.laws, base)
            bound_num, bound_den = rational_function(bound, base)
    except NotRational as exc:
        return exc
    except SpecError as exc:
        return Proof(Status.UNKNOWN, f"no proof for all eps: the program does not run with symbolic "
                                     f"parameters ({exc.problem})")
    gens = list(base.variables.values())
    if len(gens) == 1:
        return _prove_one(program, claim, point, symbols, base, laws, *one, datasets, left, right, table)
    solver = _solver(gens)
    start = _spent()
    dens = {p for law in ratio for _, den in law.values() for p in [den]} | {bound_den}
    for den in dens:
        if _exists(solver, gens, den, "<=") is not False:
            return Proof(Status.UNKNOWN, f"no proof for all eps: cannot show the denominator {den.as_expr()} "
                                         f"positive for {base.describe()} > 1")
    constraints: dict = {}
    seen: set = set()
    for i, j in zip(left.tolist(), right.tolist()):
        a, b = laws.law_of[i], laws.law_of[j]
        if a == b:
            continue
        for x, y, src, dst in ((a, b, i, j), (b, a, j, i)):
            for o, weight in laws.laws[x].items():
                if o not in ratio[y]:
                    return Proof(Status.UNKNOWN, f"output {o!r} is impossible under {datasets[dst]!r} "
                                                 "for every eps (infinite loss)")
                key = (weight, laws.laws[y][o])
                if key in seen:
                    continue
                seen.add(key)
                (num, den), (num_y, den_y) = ratio[x][o], ratio[y][o]
                h = _normalised(bound_num * num_y * den - num * den_y * bound_den)
                constraints.setdefault(h, (datasets[src], datasets[dst], o))
    for h, (x, x_prime, o) in constraints.items():
        if _spent() - start > PROOF_RLIMIT:
            return Proof(Status.UNKNOWN, f"no proof for all eps: over the z3 resource budget ({PROOF_RLIMIT:,}) with "
                                         f"{len(constraints)} constraints in {base.describe()}")
        answer = _exists(solver, gens, h, "<")
        if answer is None:
            return Proof(Status.UNKNOWN, f"no proof for all eps: the decision procedure gave up (z3 resource "
                                         f"limit {QUERY_RLIMIT:,} or root isolation failed) on a constraint in "
                                         f"{base.describe()}")
        if answer is not False:
            return _confirm(program, claim, point, symbols, base, h, answer, x, x_prime, o, table)
    method = "exact real-root isolation" if len(gens) == 1 else "z3 nonlinear real arithmetic"
    return Proof(Status.PROVED, method=method, message=
                 f"proved for every {', '.join(s.name for s in symbols)} > 0 (other parameters fixed): "
                 f"{len(constraints)} distinct polynomial constraints in {base.describe()} have no "
                 f"violation for w > 1 ({method})")


def _prove_one(program: Any, claim: Private, point: Point, symbols: list[sympy.Symbol], base: WBasis, laws: Any,
               dense: list[tuple[Dense, Dense]], numbered: list[dict], bound: tuple[Dense, Dense],
               datasets: list[tuple], left: Any, right: Any, table: Table) -> Proof:
    """:func:`_prove` in one variable w, with the constraints built and compared as integer coefficient lists.

    ``dense``: each distinct weight as (numerator, denominator) with integer coefficients, lowest power first
    (:func:`_dense_weight`: the same rational function); ``numbered``: each law as {output: its weight's
    number}.  Then H = bound_num num_y den_x - num_x den_y bound_den is a positive multiple of the polynomial
    the general path builds, and its canonical form (:func:`_canonical`: the factor w^k and the positive
    content divided out, which keeps its sign on w > 1) is the key under which equal constraints are decided
    once -- sympy's normal form (:func:`_normalised`) in other words, counted alike.  Each pair of distinct
    laws is read once (both directions), however many dataset pairs lie between them, and each pair of
    weights once.  Deciding is :func:`~dpverify.engine.decide.positivity.find_point_dense`: no negative
    coefficient of H(1 + v) answers at once, anything else goes to exact root isolation."""
    (w,) = base.variables.values()
    bound_num, bound_den = bound
    for den in {d for _, d in dense} | {bound_den}:
        if find_point_dense(den, w, "<=") is not False:
            return Proof(Status.UNKNOWN, f"no proof for all eps: cannot show the denominator "
                                         f"{_poly(den, w).as_expr()} positive for {base.describe()} > 1")
    constraints = constraints_one(laws.law_of, dense, numbered, bound, datasets, left, right)
    if isinstance(constraints, str):
        return Proof(Status.UNKNOWN, constraints)
    for h, (x, x_prime, o) in constraints.items():
        answer = find_point_dense(h, w, "<")
        if answer is None:
            return Proof(Status.UNKNOWN, f"no proof for all eps: root isolation failed on a constraint in "
                                         f"{base.describe()}")
        if answer is not False:
            model = {w: Fraction(int(answer.p), int(answer.q))}
            return _confirm(program, claim, point, symbols, base, _poly(h, w), model, x, x_prime, o, table)
    method = "exact real-root isolation"
    return Proof(Status.PROVED, method=method, message=
                 f"proved for every {', '.join(s.name for s in symbols)} > 0 (other parameters fixed): "
                 f"{len(constraints)} distinct polynomial constraints in {base.describe()} have no "
                 f"violation for w > 1 ({method})")


def constraints_one(law_of: list[int], dense: list[tuple[Dense, Dense]], numbered: list[dict],
                    bound: tuple[Dense, Dense], datasets: list[tuple], left: Any, right: Any) -> Union[dict, str]:
    """The distinct canonical constraints H (see :func:`_prove_one`), each with the first (X, X', output) that
    gives it, or the reason there is no proof (an output impossible under a neighbour).  Exhaustive: every
    neighbouring pair, both directions, every output of the first law -- read once per pair of distinct laws
    and once per pair of weights, which give the same H every time they meet."""
    bound_num, bound_den = bound
    constraints: dict = {}
    seen: set = set()
    law_pairs: set = set()
    for i, j in zip(left.tolist(), right.tolist()):
        a, b = law_of[i], law_of[j]
        if a == b or (a, b) in law_pairs:
            continue
        law_pairs.add((a, b))
        law_pairs.add((b, a))
        for x, y, src, dst in ((a, b, i, j), (b, a, j, i)):
            weights_y = numbered[y]
            for o, u in numbered[x].items():
                v = weights_y.get(o)
                if v is None:
                    return f"output {o!r} is impossible under {datasets[dst]!r} for every eps (infinite loss)"
                if (u, v) in seen:
                    continue
                seen.add((u, v))
                (num, den), (num_y, den_y) = dense[u], dense[v]
                h = _canonical(_sub(_mul(_mul(bound_num, num_y), den), _mul(_mul(num, den_y), bound_den)))
                if h not in constraints:
                    constraints[h] = (datasets[src], datasets[dst], o)
    return constraints


def _dense_laws(laws: list[dict], base: WBasis) -> tuple[list[tuple[Dense, Dense]], list[dict]]:
    """Each distinct weight of ``laws`` as integer coefficient lists (:func:`_dense_weight`), converted once,
    and each law as {output: the number of its weight}."""
    index: dict = {}
    dense: list[tuple[Dense, Dense]] = []
    numbered = []
    for law in laws:
        converted = {}
        for o, weight in law.items():
            found = index.get(weight)
            if found is None:
                found = index[weight] = len(dense)
                dense.append(_dense_weight(weight, base))
            converted[o] = found
        numbered.append(converted)
    return dense, numbered


def _dense_weight(weight: sympy.Expr, base: WBasis) -> tuple[Dense, Dense]:
    """A weight as (numerator, denominator) in the one variable w of ``base``, integer coefficients, lowest
    power first: read off sympy's tree when it is built from rationals, e^(c eps), sums, products and integer
    powers (:func:`~dpverify.engine.decide.wreader.read`), else by the general reading
    (:func:`~dpverify.engine.program.symbolic.rational_function`, which raises NotRational where it must)."""
    ((symbol, scale),) = base.scale.items()
    found = read(weight, symbol, scale)
    if found is not None:
        return found
    return _dense_pair(*rational_function(weight, base))


def _dense_pair(num: sympy.Poly, den: sympy.Poly) -> tuple[Dense, Dense]:
    """num/den (univariate, rational coefficients) as integer coefficient lists, lowest power first, both
    multiplied by the same positive integer (the least common denominator of all their coefficients)."""
    coefficients = [[Fraction(int(c.p), int(c.q)) for c in reversed(p.all_coeffs())] for p in (num, den)]
    scale = 1
    for row in coefficients:
        for c in row:
            scale = scale * c.denominator // math.gcd(scale, c.denominator)
    out = []
    for row in coefficients:
        ints = [int(c * scale) for c in row]
        while ints and ints[-1] == 0:
            ints.pop()
        out.append(tuple(ints))
    return out[0], out[1]


def _mul(f: Dense, g: Dense) -> list[int]:
    if not f or not g:
        return []
    out = [0] * (len(f) + len(g) - 1)
    for i, a in enumerate(f):
        if a:
            for j, b in enumerate(g):
                out[i + j] += a * b
    return out


def _sub(f: list[int], g: list[int]) -> list[int]:
    if len(f) < len(g):
        f = f + [0] * (len(g) - len(f))
    out = list(f)
    for i, b in enumerate(g):
        out[i] -= b
    return out


def _canonical(h: list[int]) -> Dense:
    """h without its factor w^k and divided by the gcd of its coefficients (positive): the same sign for
    every w > 1, and one form for all positive multiples of w^k h."""
    while h and h[-1] == 0:
        h = h[:-1]
    low = 0
    while low < len(h) and h[low] == 0:
        low += 1
    h = h[low:]
    g = 0
    for c in h:
        g = math.gcd(g, c)
        if g == 1:
            break
    return tuple(c // g for c in h) if g > 1 else tuple(h)


def _poly(coefficients: Dense, w: sympy.Symbol) -> sympy.Poly:
    return sympy.Poly(list(reversed(coefficients)) or [0], w, domain="QQ")


def _normalised(h: sympy.Poly) -> sympy.Poly:
    """h divided by its positive content and its largest monomial factor: same sign for all w > 1."""
    _, h = h.terms_gcd()
    content, primitive = h.primitive()
    return primitive if content > 0 else -primitive


def _rational_laws(laws: list[dict], base: WBasis) -> list[dict]:
    cache: dict = {}
    out = []
    for law in laws:
        converted = {}
        for o, w in law.items():
            if w not in cache:
                cache[w] = rational_function(w, base)
            converted[o] = cache[w]
        out.append(converted)
    return out


def _spent() -> int:
    """z3's resource count in this process so far; 0 while z3 has not been loaded (one-variable
    proofs never load it: importing z3 is a fifth of a one-claim run's start-up)."""
    smt = sys.modules.get("dpverify.engine.decide.smt")
    return smt.spent() if smt is not None else 0


def _solver(gens: list[sympy.Symbol]) -> Any:
    import z3
    solver = z3.SolverFor("QF_NRA")
    for w in gens:
        solver.add(z3.Real(w.name) > 1)
    return solver


def _z3(poly: sympy.Poly) -> Any:
    """A polynomial with rational coefficients as a z3 term."""
    import z3
    terms = []
    for monomial, coeff in poly.terms():
        term = z3.RealVal(str(coeff))
        for gen, power in zip(poly.gens, monomial):
            for _ in range(power):
                term = term * z3.Real(gen.name)
        terms.append(term)
    if not terms:
        return z3.RealVal(0)
    return z3.Sum(terms) if len(terms) > 1 else terms[0]


def _exists(solver: Any, gens: list[sympy.Symbol], poly: sympy.Poly, op: str) -> Any:
    """A model {w: Fraction} if some w > 1 has ``poly op 0`` ("<" or "<="); False if none; None if unknown.

    One variable: exact real-root isolation (:mod:`dpverify.engine.decide.positivity`), which always
    answers (z3's nonlinear timeouts proved unreliable on high-degree univariate polynomials);
    several variables: z3.
    """
    if len(gens) > 1:
        return _z3_exists(solver, gens, poly, op, QUERY_RLIMIT)
    found = find_point(sympy.Poly(poly.as_expr(), gens[0], domain="QQ"), op)
    if found is None or found is False:
        return found
    return {gens[0]: Fraction(int(found.p), int(found.q))}


def _z3_exists(solver: Any, gens: list[sympy.Symbol], poly: sympy.Poly, op: str, rlimit: int) -> Any:
    import z3

    from ...engine.decide.smt import check
    solver.push()
    try:
        term = _z3(poly)
        solver.add(term < 0 if op == "<" else term <= 0)
        outcome = check(solver, rlimit, logic="QF_NRA")
        if outcome.answer == z3.unsat:
            return False
        if outcome.answer != z3.sat:
            return None
        model = outcome.model
        point = {}
        for w in gens:
            value = model.eval(z3.Real(w.name), model_completion=True)
            if z3.is_algebraic_value(value):
                value = value.approx(30)
            point[w] = Fraction(value.as_fraction())
        return point
    finally:
        solver.pop()


def _confirm(program: Any, claim: Private, point: Point, symbols: list[sympy.Symbol], base: WBasis,
             h: sympy.Poly, model: dict, x: tuple, x_prime: tuple, output: Any, table: Table) -> Proof:
    """Check the model exactly, then recompute the pair at eps* in intervals at twice the precision."""
    at = {w: sympy.Rational(f.numerator, f.denominator) for w, f in model.items()}
    if not h.eval(at) < 0:
        return Proof(Status.UNKNOWN, "z3's model (rounded to a rational) does not violate the constraint exactly")
    values = {s: base.scale[s] * sympy.log(at[base.variables[s]]) for s in symbols}
    exact = {**params(point), **{s.name: v for s, v in values.items()}}
    dps = 2 * table.backend.dps
    backend = IntervalBackend(dps)
    p = distribution(program, x, exact, backend, table.windows).get(output)
    q = distribution(program, x_prime, exact, backend, table.windows).get(output)
    bound = backend.exp(claim.epsilon.subs({s: v for s, v in point if s not in symbols}).subs(values))
    if p is None or q is None or not (p - bound * q).a > 0:
        return Proof(Status.UNKNOWN, f"a violation found by z3 at {values} was not confirmed at {dps} digits")
    shown = {s.name: decimal(v) for s, v in values.items()}
    p_text, q_text = number(p), number(q)
    if p_text is None or q_text is None:
        return Proof(Status.UNKNOWN, f"a violation found by z3 at {shown} was confirmed at {dps} digits, but "
                                     "its probabilities are not pinned down well enough to print as a witness")
    ratio, _ = figure(p / q)
    message = (f"fails for {', '.join(f'{k} = {v}' for k, v in shown.items())} (found by the decision procedure, confirmed at "
               f"{dps} digits): X={x!r}, X'={x_prime!r}, P(o={output!r}|X) = {p_text} > "
               f"{e_to(claim.epsilon)} P(o|X') = {figure(bound * q)[0]}")
    return Proof(Status.REFUTED, message, Witness(x, x_prime, output, p_text, q_text, ratio), shown)
