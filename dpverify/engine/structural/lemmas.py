"""From a structural reading to a privacy cost for every dataset: sensitivities, calibration, composition.

Each noise step's centre is a data value sum_i f_i q_i + c whose sensitivity
is bounded, for every integer n >= n_min, by S(n) = sum_i |f_i| Delta_i(n), each
Delta_i derived by :func:`dpverify.engine.sensitivity.derive.derive` under the
universe's relation over the query's record domain (which must contain the
universe's records).  The calibration lemmas (pure eps-DP of one step):

* Laplace with scale b: S/b (the density ratio of two Laplace laws whose
  centres are S apart is at most e^(S/b));
* two-sided geometric with parameter a > 1 on an integer centre: S ln a
  (P(k + j)/P(k) <= a^|j|);
* the exponential mechanism with eps and the Delta_s it divides by
  (exp(eps u/(2 Delta_s))), on a score of derived sensitivity Delta_u:
  eps Delta_u/Delta_s (McSherry-Talwar: e^(eps Delta_u/(2 Delta_s)) from the
  numerator, the same from the normaliser);
* randomized response of one record over a values set that holds every record:
  eps (the keep/flip odds are e^eps/(k-1) : 1/(k-1));
* Gaussian and one-sided exponential noise on a data value: no finite eps
  (the Gaussian's zCDP cost S^2/(2 sigma^2) is reported, not used);
* noise on a constant or on a noisy value, and everything after: free
  (post-processing).

Costs add (basic sequential composition: each step's centre and law are fixed by
data-independent values and the outcomes of earlier comparisons of noisy values;
the reading refuses branching on data).  A program that compares noisy values is
read once per path of outcomes: the probability of a transcript is the product of
its steps' probabilities, each within e^(its cost) of its neighbour's, so the loss
is at most the largest path's total (adaptive composition of pure eps-DP).
For an answers universe each step charges its rate (1/b, ln a) times |f_i| to
the answer i; neighbours at L1 distance 1 cost at most the largest answer's
charge, at L-infinity distance 1 the sum of all charges.

:func:`at_most` decides cost(n, theta) <= bound(theta) for every integer n >= n_min
and every positive value of the symbols: by an exact supremum over n of the
ratio cost/bound when it is free of the parameters
(:func:`dpverify.engine.decide.eventually.supremum`), else by sympy's
assumptions on bound - cost.  Never a float comparison.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional

import sympy

from ...dsl.queries import Finite, Interval, Linear, Query
from ...dsl.universe import Neighbours, l1_one, linf_one
from ..decide.eventually import Undecided, supremum
from ..program.backend import exact_sign
from ..sensitivity.derivable import N, NotDerivable
from .gate import pure_query
from .reading import Reading, Step
from .values import DataValue, NotStructural, Record, is_float


@dataclass
class Cost:
    """The total pure-eps cost of a mechanism for every dataset, with the steps that give it."""

    eps: sympy.Expr
    n_min: int
    domain: str
    steps: list[str] = field(default_factory=list)
    rho: Optional[sympy.Expr] = None  # zCDP cost of the Gaussian steps (informative)


def _contains(domain: Any, records: tuple) -> bool:
    if isinstance(domain, Finite):
        return set(records) <= set(domain.records)
    if isinstance(domain, Interval):
        return all(r in domain for r in records)
    return False


_PLAIN = frozenset({int, bool, str, Fraction, sympy.Integer, sympy.Rational, sympy.core.numbers.Zero,
                    sympy.core.numbers.One, sympy.core.numbers.NegativeOne, sympy.core.numbers.Half})
"""The exact types of a plain record (no subclass: a record class's own operator methods -- an int subclass's
__radd__, __eq__ -- run unread in real runs, while the structural reading uses the record's number)."""


def _plain(record: Any, depth: int = 0) -> bool:
    if type(record) is tuple and depth < 20:
        return all(_plain(r, depth + 1) for r in record)
    return type(record) in _PLAIN


def plain_records(records: Any, where: str) -> None:
    """Refuse a structural proof unless every record is plain (see :data:`_PLAIN`, tuples of them too)."""
    for record in records:
        if not _plain(record):
            raise NotStructural(f"{where} holds the record {record!r} of type {type(record).__name__}: only plain "
                                "records (exactly int, bool, str, Fraction, sympy Integer/Rational, or tuples "
                                "of them; no subclass, no float) are read structurally")


def _show(records: tuple) -> str:
    return "{" + ", ".join(str(r) for r in records) + "}" if len(records) <= 12 else f"{len(records)} records"


def _simplify(expr: sympy.Expr) -> sympy.Expr:
    return sympy.simplify(sympy.powsimp(sympy.expand_log(expr, force=False)))


class _Costing:
    def __init__(self, relation: Neighbours, records: tuple) -> None:
        self.relation, self.records = relation, records
        self.n_min = 1
        self.lines: list[str] = []

    def domain_of(self, query: Query) -> Any:
        domain = query.domain if query.domain is not None else Finite(self.records)
        if isinstance(domain, Finite):
            plain_records(domain.records, f"the domain of {query.describe()}")
        if not _contains(domain, self.records):
            raise NotStructural(f"the query {query.describe()}'s domain {domain.describe()} does not hold every "
                                "record of the universe")
        return domain

    def delta(self, query: Query, relation: Neighbours, candidates: tuple = (None,),
              domain: Any = None) -> sympy.Expr:
        try:
            from ..sensitivity.derive import derive  # lazily: a program without queries (randomized response) never needs it
            d = derive(query, relation, domain if domain is not None else self.domain_of(query), candidates)
        except (NotDerivable, Exception) as err:  # noqa: BLE001 -- any failure: no derivation, no proof
            raise NotStructural(f"the sensitivity of {query.describe()} is not derived: {err}") from None
        self.n_min = max(self.n_min, d.n_min)
        return d.expr

    def sensitivity(self, centre: DataValue) -> sympy.Expr:
        total = sympy.Integer(0)
        for f, base in centre.terms:
            if not isinstance(base, Query):
                raise NotStructural("an answer of an answers vector in a record universe")
            total += sympy.Abs(f) * self.delta(base, self.relation)
        return _simplify(total)

    def integer_valued(self, centre: DataValue) -> None:
        """Geometric noise takes an integer centre: shown for every dataset over the domain (integer factors
        of counts and totals of integer-valued terms), else no structural proof (the program would fail on
        some dataset the proof speaks of)."""
        for f, base in centre.terms:
            if not (isinstance(base, Linear) and sympy.sympify(f).is_integer is True
                    and all(not m and sympy.sympify(c).is_integer for c, m, _ in base.folded())):
                raise NotStructural("geometric noise on a value not shown to be an integer for every dataset")
            domain = self.domain_of(base)
            if not isinstance(domain, Finite):
                raise NotStructural("geometric noise on a query over a real interval")
            for record in domain.records:
                for _, _, term in base.parts:
                    if not sympy.sympify(term(record)).is_integer:
                        raise NotStructural(f"geometric noise on a term that is not an integer on the record {record!r}")

    def stated(self, query: Query, declared: Neighbours, candidates: tuple) -> sympy.Expr:
        """The Delta the mechanism itself divides by when it derives it (as dpverify's runtime does)."""
        if query.domain is None:
            raise NotStructural("the mechanism's query has no record domain")
        if isinstance(query.domain, Finite):
            plain_records(query.domain.records, f"the domain of {query.describe()}")
        try:
            from ..sensitivity.derive import derive  # lazily, as above
            d = derive(query, declared, query.domain, candidates)
            value = supremum(d.expr, N, d.n_min) if declared is Neighbours.ADD_REMOVE else d.expr
        except (NotDerivable, Undecided) as err:
            raise NotStructural(f"the mechanism's own Delta is not derived: {err}") from None
        if declared is not Neighbours.ADD_REMOVE:
            self.n_min = max(self.n_min, d.n_min)
        if sympy.sympify(value).is_positive is not True:
            raise NotStructural(f"the mechanism's Delta {value} is not positive for every n")
        return sympy.sympify(value)

    def step(self, s: Step) -> sympy.Expr:
        where = f"line {s.line}"
        if s.centre is None:
            self.lines.append(f"{where}: {s.kind.replace('_', ' ')} on a constant or noisy value: "
                              "post-processing, cost 0")
            return sympy.Integer(0)
        if isinstance(s.centre, Record):
            if s.kind != "randomized_response":
                raise NotStructural("a record read by something other than randomized response")
            plain_records(s.score[0], "randomized response's values")
            cost = sympy.Abs(s.param)
            self.n_min = max(self.n_min, s.centre.index + 1)
            self.lines.append(f"{where}: randomized response of data[{s.centre.index}] over values "
                              f"{_show(s.score[0])} (every record among them): cost {_simplify(cost)}")
            return cost
        if s.kind == "randomized_response":
            raise NotStructural("randomized response of a value computed from the data")
        if s.kind in ("laplace_mechanism", "exponential_mechanism"):
            query, candidates = s.score
            u = self.delta(query, self.relation, candidates)
            stated = s.stated if s.stated is not None else self.stated(query, s.declared, candidates)
            if s.stated is not None and sympy.sympify(stated).is_positive is not True:
                raise NotStructural(f"the stated sensitivity {stated} is not positive")
            if sympy.sympify(s.param).is_positive is not True:  # exp(eps u/(2 Delta_s)) with eps <= 0 is no
                # eps-DP lemma (the cost eps u/Delta_s would be <= 0 and prove anything)
                raise NotStructural(f"the mechanism's eps = {s.param} is not shown positive for every parameter")
            cost = _simplify(s.param * u / stated)
            what = "Laplace mechanism, scale Delta_s/eps" if s.kind == "laplace_mechanism" else \
                "exponential mechanism, weights exp(eps u/(2 Delta_s))"
            self.lines.append(f"{where}: {what} with Delta_s = {stated}, eps = {s.param}; {query.describe()} has "
                              f"sensitivity Delta(n) = {u} ({self.relation.value}) for every n >= {self.n_min}; "
                              f"cost eps Delta/Delta_s = {cost}")
            return cost
        s_n = self.sensitivity(s.centre)
        if s.kind == "laplace":
            cost = _simplify(s_n / s.param)
            lemma = f"Laplace noise with scale b = {s.param}: cost Delta/b = {cost}"
        elif s.kind == "geometric":
            if s.param.is_positive is not True or sympy.log(s.param).is_positive is not True:
                raise NotStructural(f"geometric noise with a = {s.param}: a > 1 is not shown for every parameter")
            self.integer_valued(s.centre)
            cost = _simplify(s_n * sympy.log(s.param))
            lemma = f"two-sided geometric noise with a = {s.param}: cost Delta ln a = {cost}"
        elif s.kind == "gaussian":
            self.rho = _simplify(s_n ** 2 / (2 * s.param ** 2))
            cost = sympy.oo
            lemma = f"Gaussian noise with sigma = {s.param}: no finite eps (zCDP rho = Delta^2/(2 sigma^2) = {self.rho})"
        else:
            cost = sympy.oo
            lemma = f"{s.kind} noise on a data value: no finite eps (its support moves)"
        self.lines.append(f"{where}: the centre has sensitivity Delta(n) = {s_n} ({self.relation.value}) for every "
                          f"n >= {self.n_min}; {lemma}")
        return cost


def _combined(totals: list[sympy.Expr], per_path: list[list[str]], paths: list[Reading]) -> tuple[sympy.Expr, list[str]]:
    """The largest path's total (adaptive composition) and the steps that show it."""
    distinct = list(dict.fromkeys(totals))
    if len(paths) == 1:
        return totals[0], per_path[0] + [f"sequential composition of {len(paths[0].steps)} step(s): total cost "
                                         f"{totals[0]}"]
    if len(distinct) == 1:
        return totals[0], per_path[0] + [
            f"adaptive composition over the {len(paths)} paths of outcomes of the comparisons of noisy values "
            f"(post-processing of the released noise): every path's steps add to {totals[0]}"]
    total = _simplify(sympy.Max(*distinct))
    lines = [f"path {''.join('T' if b else 'F' for b in r.path) or '-'}: total {t}"
             for r, t in list(zip(paths, totals))[:8]]
    return total, lines + [f"adaptive composition over the {len(paths)} paths of outcomes of the comparisons of "
                           f"noisy values: each path's steps add up, the loss is at most the largest total, {total}"]


def record_cost(readings: list[Reading], relation: Any, records: tuple) -> Cost:
    """The cost of a record universe's mechanism for every dataset over its domain, every n >= n_min."""
    if not isinstance(relation, Neighbours):
        raise NotStructural("a custom neighbour relation on records has no structural rule")
    plain_records(records, "the universe")
    costing = _Costing(relation, records)
    for reading in readings:  # a derivation reads each term once per record of the domain: pure terms only
        for s in reading.steps:
            if s.score and isinstance(s.score[0], Query):
                pure_query(s.score[0])
            if isinstance(s.centre, DataValue):
                for _, base in s.centre.terms:
                    if isinstance(base, Query):
                        pure_query(base)
    totals, per_path = [], []
    for reading in readings:
        costing.lines = []
        total = sympy.Integer(0)
        for s in reading.steps:
            total += costing.step(s)
        totals.append(_simplify(total))
        per_path.append(costing.lines)
    total, lines = _combined(totals, per_path, readings)
    if total.has(sympy.Float):
        raise NotStructural(f"the cost {total} holds a float (the structural reading computes exactly)")
    read = {i for r in readings for i in r.records_read}
    if read:  # data[i] is a record only when n > i: the statement speaks of those sizes only (the gate
        # refuses exception handlers, so no smaller dataset's IndexError can be caught unseen)
        costing.n_min = max(costing.n_min, max(read) + 1)
        lines.append(f"the program reads data[{max(read)}]: every size n >= {max(read) + 1}")
    steps = [s for r in readings for s in r.steps]
    queries = [s.score[0] for s in steps if s.score and isinstance(s.score[0], Query)]
    queries += [b for s in steps if isinstance(s.centre, DataValue) for _, b in s.centre.terms if isinstance(b, Query)]
    domains = {id(q.domain): q.domain for q in queries if q.domain is not None}
    shared = list(domains.values())
    # the label names a declared domain only when EVERY query's sensitivity was derived over it: a query
    # without a domain was derived over the universe's records (domain_of), and a bound derived over a
    # domain holding the records also holds for the datasets over the records -- so the label falls back
    # to the universe's records
    plain = (not any(r.raw_forms or r.records_read for r in readings) and len(shared) == 1
             and all(q.domain is not None for q in queries))
    for domain in shared:
        if isinstance(domain, Interval):
            _interval_terms_trusted(steps)
    if plain and isinstance(shared[0], Interval):
        where = f"[{shared[0].lo}, {shared[0].hi}]"
    elif plain and isinstance(shared[0], Finite):
        where = _show(shared[0].records)
    else:
        where = _show(records)
    n_min = costing.n_min if relation is not Neighbours.ADD_REMOVE else costing.n_min - 1
    return Cost(total, max(n_min, 0), where, lines, getattr(costing, "rho", None))


_BRANCHES = frozenset({"COMPARE_OP", "IS_OP", "CONTAINS_OP", "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE",
                       "POP_JUMP_BACKWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_NONE",
                       "POP_JUMP_FORWARD_IF_NOT_NONE", "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE",
                       "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP", "FOR_ITER", "LOAD_ATTR", "LOAD_METHOD"})


def _interval_terms_trusted(steps: list) -> None:
    """A sensitivity derived over a real interval reads each record term once, on a symbolic record: it
    is the real term's only if the term is straight-line arithmetic of its record (no comparison, identity
    test, branch, loop, attribute or call of a Python function -- what a symbol cannot follow).  Else no
    structural proof at all (the derived Delta may be wrong even on the universe's records)."""
    import dis
    import types
    from ..datasets.orderfree import Refused, _query_functions

    def check(code: types.CodeType, scope: dict) -> None:
        for ins in dis.get_instructions(code):
            if ins.opname in _BRANCHES:
                raise NotStructural(f"a record term over a real interval uses {ins.opname} (line "
                                    f"{code.co_firstlineno}): its derived sensitivity is not trusted")
            if ins.opname == "LOAD_GLOBAL" and type(scope.get(ins.argval)) is types.FunctionType:
                raise NotStructural(f"a record term over a real interval calls the function {ins.argval!r}")
            if (ins.opname == "LOAD_CONST" and isinstance(ins.argval, float)) or (
                    ins.opname == "LOAD_GLOBAL" and is_float(scope.get(ins.argval))):
                raise NotStructural(f"a record term over a real interval computes with a float (line "
                                    f"{code.co_firstlineno}): real runs round it, the derivation is exact")
            if ins.opname == "LOAD_CONST" and isinstance(ins.argval, types.CodeType):
                check(ins.argval, scope)

    queries = [s.score[0] for s in steps if s.score and isinstance(s.score[0], Query)]
    queries += [b for s in steps if isinstance(s.centre, DataValue) for _, b in s.centre.terms if isinstance(b, Query)]
    for query in queries:
        if not isinstance(query.domain, Interval):
            continue
        try:
            fns = _query_functions(query)
        except Refused as err:
            raise NotStructural(f"a query over a real interval whose terms are not read: {err}") from None
        for fn in fns:
            if type(fn) is not types.FunctionType:
                raise NotStructural("a record term over a real interval that is not a Python function")
            if any(is_float(c.cell_contents) for c in fn.__closure__ or () if _filled(c)):
                raise NotStructural("a record term over a real interval captures a float: real runs round it")
            check(fn.__code__, fn.__globals__)


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def answers_cost(readings: list[Reading], relation: Any, m: int) -> Cost:
    """The cost of an answers universe's mechanism for every pair of answer vectors in the relation."""
    if relation is not l1_one and relation is not linf_one:
        raise NotStructural("an answers universe with a relation other than dp.l1_one or dp.linf_one")
    totals, per_path = [], []
    for reading in readings:
        total, lines = _answers_path(reading, relation, m)
        totals.append(total)
        per_path.append(lines)
    total, lines = _combined(totals, per_path, readings)
    if total.has(sympy.Float):
        raise NotStructural(f"the cost {total} holds a float (the structural reading computes exactly)")
    geometric = any(s.kind == "geometric" and s.centre is not None for r in readings for s in r.steps)
    return Cost(total, 0, f"{'integer ' if geometric else ''}answer vectors of length {m}", lines)


def _answers_path(reading: Reading, relation: Any, m: int) -> tuple[sympy.Expr, list[str]]:
    charge = [sympy.Integer(0)] * m
    lines = []
    for s in reading.steps:
        if s.centre is None:
            lines.append(f"line {s.line}: {s.kind} on a constant or noisy value: post-processing, cost 0")
            continue
        if s.kind == "laplace":
            rate, what = 1 / s.param, f"Laplace noise, scale b = {s.param}: rate 1/b"
        elif s.kind == "geometric":
            if s.param.is_positive is not True or sympy.log(s.param).is_positive is not True:
                raise NotStructural(f"geometric noise with a = {s.param}: a > 1 is not shown for every parameter")
            if not all(sympy.sympify(f).is_integer for f, _ in s.centre.terms):
                raise NotStructural("geometric noise on a non-integer combination of answers")
            rate, what = sympy.log(s.param), f"geometric noise, a = {s.param}: rate ln a"
        else:
            raise NotStructural(f"{s.kind} on an answer is not read structurally")
        rate = _simplify(rate)
        for f, base in s.centre.terms:
            if not (isinstance(base, tuple) and base[0] == "coord"):
                raise NotStructural("a query of records in an answers universe")
            charge[base[1]] += sympy.Abs(f) * rate
        lines.append(f"line {s.line}: {what} = {rate} per unit of the answers it is centred on")
    charge = [_simplify(c) for c in charge]
    if relation is l1_one:
        total = _simplify(sympy.Max(*charge))
        lines.append(f"answers at L1 distance <= 1: the loss is sum_i |q_i - q'_i| charge_i <= max_i charge_i = {total}")
    else:
        total = _simplify(sympy.Add(*charge))
        lines.append(f"answers at L-infinity distance <= 1: the loss is at most sum_i charge_i = {total}")
    return total, lines


def at_most(cost: sympy.Expr, bound: sympy.Expr, n_min: int) -> tuple[bool, str]:
    """Whether cost <= bound for every integer n >= n_min and every positive value of the other symbols
    (their declared assumptions), with the sentence that decides it; False when it is not shown."""
    cost, bound = sympy.sympify(cost), sympy.sympify(bound)
    if cost == 0:
        return True, "the cost is 0"
    if cost.has(sympy.oo, sympy.zoo, sympy.nan):
        return False, "the cost is not finite"
    if isinstance(cost, sympy.Max):  # the largest path's total: every path's total must be within the bound
        reasons = []
        for part in cost.args:
            holds, why = at_most(part, bound, n_min)
            if not holds:
                return False, why
            reasons.append(why)
        return True, "for every path, " + "; ".join(dict.fromkeys(reasons))
    if bound.is_positive is not True:
        return False, f"the claimed level {bound} is not shown positive for every parameter"
    ratio = _simplify(cost / bound)
    if ratio.free_symbols <= {N}:
        try:
            top = supremum(ratio, N, max(n_min, 1)) if N in ratio.free_symbols else ratio
        except (Undecided, Exception) as err:  # noqa: BLE001
            return False, f"the supremum over n of cost/claim = {ratio} is not decided ({err})"
        sign = exact_sign(sympy.sympify(top) - 1)
        if sign is not None and sign <= 0:
            return True, (f"cost/claim = {ratio}, whose supremum over n >= {max(n_min, 1)} is {top} <= 1"
                          if N in ratio.free_symbols else f"cost/claim = {ratio} <= 1")
        return False, f"cost/claim = {ratio} reaches {top} > 1" if sign else f"cost/claim = {ratio}: sign undecided"
    gap = _simplify(bound - cost)
    if gap.is_nonnegative is True:
        return True, f"claim - cost = {gap} >= 0 for every value of the parameters"
    return False, f"claim - cost = {gap} is not shown >= 0 for every value of the parameters"


__all__ = ["Cost", "answers_cost", "at_most", "record_cost"]
