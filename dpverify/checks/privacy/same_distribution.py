"""The distribution-equality check: two programs have the same output law on every dataset.

Differences are found with certified intervals (a non-zero interval
difference is a certain mismatch, then confirmed at twice the precision).
Equality cannot be shown by intervals, so every dataset is also recomputed
exactly with sympy and each output's difference shown to be zero
(:func:`~dpverify.engine.program.backend.exact_sign`).
"""
from __future__ import annotations

from typing import Any, Optional

import sympy

from ...dsl.claims import Claim, SameDistribution
from ...dsl.params import Point, point_label
from ...dsl.spec import Spec
from ...engine.program.backend import IntervalBackend, SympyBackend, exact_sign
from ...engine.program.enumerate import Session
from ...engine.program.reading import Table, distribution
from ...errors import SpecError
from ...engine.program.parameter import ParameterBranch
from ...engine.program.symbolic import NotRational, basis, rational_function, symbolic_laws
from .proof import proof_symbols
from ...results import PointResult, Status, Witness
from ..workspace import Workspace
from ...engine.decide.decimals import decimal
from ...engine.program.work import params


class SameDistributionCheck:
    kind = "same_distribution"

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, SameDistribution)

    def run(self, spec: Spec, claim: SameDistribution, point: Point, ws: Workspace) -> PointResult:
        mine = ws.discrete_table(spec, spec.mechanism, point, "same_distribution")
        theirs = ws.discrete_table(spec, claim.other, point, "same_distribution")
        result = PointResult(point_label(point), Status.UNKNOWN, "",
                             method="exact enumeration; equality by exact sympy algebra")
        _one_meaning_of_outputs(mine, theirs)
        ctx = mine.backend.ctx
        zero = ctx.mpf(0)
        note = ""
        for i, data in enumerate(mine.datasets):
            law, other = mine.laws[mine.law_of[i]], theirs.laws[theirs.law_of[i]]
            for o in sorted(set(law) | set(other), key=repr):
                diff = law.get(o, zero) - other.get(o, zero)
                if diff.a > 0 or diff.b < 0:
                    return _refute(spec, claim, point, data, o, mine.backend.dps, mine.windows, result)
        if ws.options.proofs and proof_symbols(point, spec.mechanism, claim.other):
            over = proof_symbols(point, spec.mechanism, claim.other)
            fixed = tuple((sym, v) for sym, v in point if sym not in over)
            key = ("same-distribution-proof", id(spec), claim.id, fixed)
            if key not in ws.memo:
                ws.memo[key] = _prove(spec, claim, point, mine, theirs, ws)
            found = ws.memo[key]
            if isinstance(found, str):
                result.status, result.method = Status.PROVED, "symbolic reading; rational functions compared"
                result.message = found
                return result
            if isinstance(found, ParameterBranch):
                note = f"; no proof for every parameter value: {found}"
            elif found is not None:
                data, output, at = found
                return _refute(spec, claim, point, data, output, mine.backend.dps, mine.windows, result, at)
        # No certain difference: show equality exactly, dataset by dataset.
        exact_pairs: dict = {}
        for i, data in enumerate(mine.datasets):
            key = (mine.law_of[i], theirs.law_of[i])
            law = distribution(spec.mechanism, data, params(point), SympyBackend(), mine.windows)
            other = distribution(claim.other, data, params(point), SympyBackend(), theirs.windows)
            for o in sorted(set(law) | set(other), key=repr):  # a deterministic first witness
                sign = exact_sign(law.get(o, sympy.Integer(0)) - other.get(o, sympy.Integer(0)))
                if sign is None:
                    result.message = (f"cannot decide whether P(o={o!r}) is the same under both programs on "
                                      f"dataset {data!r}: sympy could not simplify the difference")
                    return result
                if sign != 0:
                    return _refute(spec, claim, point, data, o, mine.backend.dps, mine.windows, result)
            exact_pairs[key] = True
        result.status = Status.VERIFIED
        result.message = (f"identical output laws on all {len(mine.datasets):,} datasets "
                          f"({len(exact_pairs)} distinct law pairs), equality shown exactly{note}")
        return result


def _one_meaning_of_outputs(mine: Table, theirs: Table) -> None:
    """Both programs' outputs held to one meaning of "the same output" (equal and of the same types):
    one returning 1 where the other returns True differs, though Python's dicts would merge them."""
    outputs = Session(mine.backend)
    for table in (mine, theirs):
        for law in table.laws:
            for output in law:
                outputs.register(output)


def _prove(spec: Spec, claim: SameDistribution, point: Point, mine_table: Table, theirs_table: Table,
           ws: Workspace) -> Any:
    """Equality for every value of the continuous parameters, as rational functions of w.

    Returns the proof's message, or (dataset, output, {symbol: value}) where the
    laws differ, the :class:`ParameterBranch` when a program uses a parameter's
    value (no proof is attempted), or None when the laws are not rational functions of w.
    """
    symbols = proof_symbols(point, spec.mechanism, claim.other)
    values = {**params(point), **{s.name: s for s in symbols}}
    datasets, _, _ = ws.datasets(spec)
    try:
        for program in (spec.mechanism, claim.other):  # multisets stand for every ordering, every value
            ws.require_symmetric(spec, program, values)
        at = {s: v for s, v in point if s in symbols}
        mine = symbolic_laws(spec.mechanism, datasets, values, mine_table.windows, (mine_table, at))
        theirs = symbolic_laws(claim.other, datasets, values, theirs_table.windows, (theirs_table, at))
        weights = [w for laws in (mine, theirs) for law in laws.laws for w in law.values()]
        base = basis(weights, symbols)
        compared: set = set()
        for i, data in enumerate(datasets):
            pair = (mine.law_of[i], theirs.law_of[i])
            if pair in compared:
                continue
            compared.add(pair)
            law, other = mine.laws[pair[0]], theirs.laws[pair[1]]
            for o in sorted(set(law) | set(other), key=repr):  # a deterministic first witness
                p = rational_function(law.get(o, sympy.Integer(0)), base)
                q = rational_function(other.get(o, sympy.Integer(0)), base)
                difference = p[0] * q[1] - q[0] * p[1]
                if not difference.is_zero:
                    return data, o, _nonzero_at(difference, base)
    except ParameterBranch as branch:  # the symbolic reading would take a branch of its own: no proof
        return branch
    except (NotRational, SpecError):  # not a rational function of w, or not runnable symbolically
        return None
    return (f"identical output laws for every {', '.join(s.name for s in symbols)} > 0 on all "
            f"{len(datasets):,} datasets: {len(compared)} distinct pairs of laws are equal as rational "
            f"functions of {base.describe()}")


def _nonzero_at(difference: sympy.Poly, base: Any) -> dict:
    """Parameter values (eps = L ln w for small rational w > 1) where a non-zero polynomial is non-zero."""
    for k in range(2, 2 + difference.total_degree() + 2):
        at = {w: sympy.Rational(k, 1) for w in base.variables.values()}
        if difference.eval(at) != 0:
            return {s.name: base.scale[s] * sympy.log(at[w]) for s, w in base.variables.items()}
    raise NotRational("no witness point found")  # impossible for a non-zero polynomial in one variable


def _refute(spec: Spec, claim: SameDistribution, point: Point, data: tuple, output: object, dps: int,
            windows: dict, result: PointResult, at: Optional[dict] = None) -> PointResult:
    backend = IntervalBackend(2 * dps)
    values = {**params(point), **(at or {})}
    law = distribution(spec.mechanism, data, values, backend, windows)
    other = distribution(claim.other, data, values, backend, windows)
    zero = backend.num(0)
    p, q = law.get(output, zero), other.get(output, zero)
    diff = p - q
    if not (diff.a > 0 or diff.b < 0):
        result.message = f"a difference found at {dps} digits was not confirmed at {2 * dps} digits"
        return result
    name = getattr(claim.other, "__name__", "other")
    result.status = Status.REFUTED
    result.witness = Witness(data, data, output, decimal(p), decimal(q))
    where = f" at {', '.join(f'{k} = {decimal(v)}' for k, v in at.items())}" if at else ""
    result.message = (f"on dataset {data!r}{where}, P(o={output!r}) = {decimal(p)} under "
                      f"{spec.mechanism.__name__} but {decimal(q)} under {name}; confirmed at {2 * dps} digits")
    return result
