"""The ``float_private`` check: a sampler of one uniform double, over all 2^53 uniforms.

For every pair of neighbouring query values (q, q'), both ways:

* **Finite image** (at most ``max_outputs`` outputs per value, listed by walking the breakpoints
  of the monotone pieces): every output's exact number of grid points is known, so equal
  supports are decided exactly, and so is the exact epsilon of the doubles, max |ln P(y|q) /
  P(y|q')| as a ratio of integer counts, against the claimed epsilon -> ``verified``/``refuted``.
* **Too many outputs**: candidate outputs y = f(q, k) for a counted, seeded list of k are each
  searched for among the outputs of q' (binary search per piece).  One that q' never reaches is
  a privacy loss of infinity -> ``refuted``; none found is no proof -> ``unknown``.

Every refutation is re-confirmed on fresh evaluations by another search (galloping and a scan
of the neighbouring grid points); every verdict first checks that no evaluation made (the
searches' probes, and the candidates, also in the listing) contradicts the declared
monotonicity (the assumption the searches rest on), and says so.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import sympy

from ...dsl.claims import Claim
from ...dsl.floating import FloatPrivate
from ...dsl.params import Point, point_label
from ...dsl.spec import Spec
from ...engine.program.backend import exact_sign
from ...engine.datasets.datasets import enumerate_datasets, estimate, neighbour_pairs
from ...engine.decide.decimals import decimal
from ...engine.program.floating import UNIFORMS, Sampler, candidates, name_of
from ...errors import SpecError
from ...evidence import FloatEvidence
from ...results import PointResult, Status, Witness
from ..workspace import Workspace

MAX_PAIRS = 100_000
"""The most neighbouring pairs of a universe read for their query values."""
COUNT_ROWS = 100
"""The most outputs whose counts a finite image's evidence lists (the report's table)."""


class FloatPrivateCheck:
    kind = "float_private"

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, FloatPrivate)

    def run(self, spec: Spec, claim: FloatPrivate, point: Point, ws: Workspace) -> PointResult:
        assert claim.sampler is not None
        sampler = Sampler(claim.sampler, claim.uniforms, claim.pieces)
        pairs = _value_pairs(claim)
        result = PointResult(point_label(point), Status.UNKNOWN, "",
                             evidence=FloatEvidence(grid_points=sampler.size, value_pairs=len(pairs)))
        if claim.epsilon is not None:
            result.evidence.claimed_epsilon = decimal(claim.epsilon)  # type: ignore[attr-defined]
        images: dict[float, dict[float, int]] = {}
        for value in dict.fromkeys(side.double for pair in pairs for side in pair):
            image = sampler.image(value, claim.max_outputs)
            if image is None:
                break
            images[value] = image
        else:
            return _exhaustive(claim, sampler, pairs, images, result)
        return _search(claim, sampler, pairs, result)


@dataclass(frozen=True)
class Side:
    """One side of a neighbouring pair: the exact query value, the double the sampler gets, and a
    dataset with that value when the pairs come from a universe."""

    value: Any
    double: float
    dataset: Optional[tuple] = None

    def who(self) -> Any:
        return self.dataset if self.dataset is not None else self.value

    def __str__(self) -> str:
        return f"q = {self.value!r}" + (f" (X = {self.dataset!r})" if self.dataset is not None else "")


def _value_pairs(claim: FloatPrivate) -> list[tuple[Side, Side]]:
    """One unordered pair of sides per pair of neighbouring query values whose doubles differ."""
    if claim.pairs:
        sides = [(Side(a, float(a)), Side(b, float(b))) for a, b in claim.pairs]
    else:
        assert claim.universe is not None and claim.query is not None
        if estimate(claim.universe).pairs > MAX_PAIRS:
            raise SpecError(f"float_private: the universe ({claim.universe.describe()}) has more than "
                            f"{MAX_PAIRS:,} neighbouring pairs", "use a smaller universe, or pass pairs=")
        datasets = enumerate_datasets(claim.universe)
        left, right = neighbour_pairs(claim.universe, datasets)
        values = [claim.query(d) for d in datasets]
        sides = [(Side(values[i], float(values[i]), datasets[i]), Side(values[j], float(values[j]), datasets[j]))
                 for i, j in zip(left, right)]
    out: dict[tuple[float, float], tuple[Side, Side]] = {}
    for a, b in sides:
        if a.double != b.double:
            a, b = (a, b) if a.double < b.double else (b, a)
            out.setdefault((a.double, b.double), (a, b))
    if not out:
        raise SpecError("float_private: no two neighbouring datasets give different query values (as doubles)",
                        "check the query and the universe: with equal values the sampler's law is the same")
    return list(out.values())


def _assumption(sampler: Sampler) -> str:
    sampler.check_monotone()
    return (f"assuming {name_of(sampler.fn)} is monotone in the uniform on each of its {len(sampler.pieces)} "
            f"piece(s) of the grid (no contradiction among the {sampler.evaluations:,} evaluations made)")


def _p(count: int, size: int) -> str:
    """count/size as a decimal probability."""
    return decimal(sympy.Rational(count, size))


def _show(y: float) -> str:
    return f"{y!r} ({y.hex()})"


def _infinite(sampler: Sampler, x: Side, xp: Side, k: Optional[int], y: float, result: PointResult) -> PointResult:
    """Refute with an output reachable from x and not from xp, after an independent re-count."""
    count = sampler.count(x.double, y)
    fresh = sampler.evaluate(x.double, k) if k is not None else y
    again, never = sampler.confirm_count(x.double, y), sampler.confirm_count(xp.double, y)
    note = _assumption(sampler)
    ev = result.evidence
    assert isinstance(ev, FloatEvidence)
    ev.evaluations, ev.witness_k, ev.witness_output_hex = sampler.evaluations, k, y.hex()
    if fresh != y or again != count or count == 0 or never != 0:
        result.message = (f"an output {_show(y)} reachable from {x} and not from {xp} was not confirmed by the "
                          f"independent search (counts {count} and {again}, and {never} from the neighbour)")
        return result
    result.status, ev.achieved_epsilon = Status.REFUTED, "inf"
    result.witness = Witness(x.who(), xp.who(), y, _p(count, sampler.size), "0", "inf")
    at = f" (e.g. at k = {k}, u = {UNIFORMS[sampler.uniform](k)!r})" if k is not None else ""
    result.message = (f"the output {_show(y)} is produced from {x} by {count} of the {sampler.size:,} uniforms"
                      f"{at} and by none from {xp}: an infinite privacy loss (Mironov 2012); both counts "
                      f"re-confirmed by an independent search on fresh evaluations; {note}")
    return result


def _exhaustive(claim: FloatPrivate, sampler: Sampler, pairs: list[tuple[Side, Side]],
                images: dict[float, dict[float, int]],
                result: PointResult) -> PointResult:
    """Every output of every value is listed with its count: supports and the exact epsilon."""
    ev = result.evidence
    assert isinstance(ev, FloatEvidence)
    ev.outputs_per_value = {repr(v): len(image) for v, image in images.items()}
    ks = candidates(sampler.pieces, claim.candidates, claim.seed)
    for value in images:  # the monotonicity the listing rests on, tested on the candidates too
        for k in ks:
            sampler.output(value, k)
    worst: Optional[tuple[Fraction, Side, Side, float]] = None
    for a, b in pairs:
        for x, xp in ((a, b), (b, a)):
            mine, theirs = images[x.double], images[xp.double]
            for y, count in mine.items():
                if y not in theirs:
                    _output_counts(ev, x, xp, mine, theirs, y)
                    return _infinite(sampler, x, xp, None, y, result)
                ratio = Fraction(count, theirs[y])
                if worst is None or ratio > worst[0]:
                    worst = (ratio, x, xp, y)
    assert worst is not None
    ratio, x, xp, y = worst
    _output_counts(ev, x, xp, images[x.double], images[xp.double], y)
    achieved = sympy.log(sympy.Rational(ratio.numerator, ratio.denominator))
    ev.achieved_epsilon = decimal(achieved)
    ev.evaluations = sampler.evaluations
    note = _assumption(sampler)
    counts = {len(image) for image in images.values()}
    sizes = (f"{counts.pop()} outputs from each of the {len(images)} query values" if len(counts) == 1 else
             ", ".join(f"{len(image)} outputs from q = {v!r}" for v, image in images.items()))
    supports = (f"every output reachable from one query value is reachable from its neighbour, over all "
                f"{sampler.size:,} uniforms ({sizes}, listed exhaustively)")
    exact = (f"the exact epsilon of the doubles is ln({ratio.numerator}/{ratio.denominator}) = {decimal(achieved)}, "
             f"at the output {_show(y)} between {x} and {xp}")
    if claim.epsilon is None:
        result.status, result.method = Status.VERIFIED, "exhaustive listing of the sampler's outputs"
        result.message = f"{supports}: equal supports (a necessary condition for DP); {exact}; {note}"
        return result
    sign = exact_sign(sympy.exp(claim.epsilon) - sympy.Rational(ratio.numerator, ratio.denominator))
    if sign is None:
        result.message = f"{supports}; {exact}, which cannot be told apart from the claimed {claim.epsilon}"
        return result
    if sign >= 0:
        result.status, result.method = Status.VERIFIED, "exhaustive listing of the sampler's outputs, exact counts"
        result.message = f"{claim.epsilon}-DP holds exactly in doubles: {supports}; {exact}; {note}"
        return result
    p, p_prime = sampler.confirm_count(x.double, y), sampler.confirm_count(xp.double, y)
    if Fraction(p, p_prime or 1) != ratio or p_prime == 0:
        result.message = f"the counts at the output {_show(y)} were not confirmed by the independent search"
        return result
    result.status, result.method = Status.REFUTED, "exhaustive listing of the sampler's outputs, exact counts"
    result.witness = Witness(x.who(), xp.who(), y, _p(p, sampler.size),
                             _p(p_prime, sampler.size), decimal(sympy.Rational(p, p_prime)))
    result.message = (f"{exact}, above the claimed {claim.epsilon} = {decimal(claim.epsilon)}: the output is produced "
                      f"by {p} uniforms from {x} and {p_prime} from {xp} (of {sampler.size:,}; counts "
                      f"re-confirmed by an independent search); {supports}; {note}")
    return result


def _output_counts(ev: FloatEvidence, x: Side, xp: Side, mine: dict[float, int], theirs: dict[float, int],
                   y: float) -> None:
    """The pair's counts per output (the first COUNT_ROWS outputs by value, and ``y``, where the loss is
    largest), for the report."""
    outputs = sorted(set(mine) | set(theirs))
    shown = outputs[:COUNT_ROWS] + ([y] if y not in outputs[:COUNT_ROWS] else [])
    ev.counts_of, ev.epsilon_output_hex = [repr(x.value), repr(xp.value)], y.hex()
    ev.output_counts = [[repr(o), mine.get(o, 0), theirs.get(o, 0)] for o in shown]


def _search(claim: FloatPrivate, sampler: Sampler, pairs: list[tuple[Side, Side]], result: PointResult) -> PointResult:
    """Too many outputs to list: look for an output of one value that its neighbour never produces."""
    ks = candidates(sampler.pieces, claim.candidates, claim.seed)
    ev = result.evidence
    assert isinstance(ev, FloatEvidence)
    tried = missed = 0
    best: Optional[tuple[tuple[int, float], Side, Side, int, float]] = None
    for a, b in pairs:
        for x, xp in ((a, b), (b, a)):
            for k in ks:
                y = sampler.output(x.double, k)
                tried += 1
                if sampler.count(xp.double, y) == 0:
                    missed += 1
                    key = (sampler.count(x.double, y), -abs(y - x.double))  # the likeliest, then nearest q
                    if best is None or key > best[0]:
                        best = (key, x, xp, k, y)
    ev.candidates_tried, ev.unreachable_candidates = tried, missed
    if best is not None:
        _, x, xp, k, y = best
        out = _infinite(sampler, x, xp, k, y, result)
        if out.status is Status.REFUTED:
            out.method = "binary search over the 2^53-point grid of uniforms"
            out.message += f"; {missed:,} of {tried:,} candidate outputs were unreachable from the neighbour"
        return out
    ev.evaluations = sampler.evaluations
    note = _assumption(sampler)
    result.message = (f"no output among {tried:,} candidates (grid points k of each query value) is unreachable "
                      f"from the neighbouring value, but the sampler has more than {claim.max_outputs:,} outputs "
                      f"per value, so not all were tried: no proof of equal supports ({note})")
    return result
