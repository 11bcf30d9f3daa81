"""The sample-complexity check: "if n >= BOUND then P[error(M(S)) > alpha] <= beta", exactly.

S is n records drawn i.i.d. from a finite population.  A learner that ignores
record order sees only the multiset of S, so the failure probability is a sum
over multisets (count vectors c, not n-tuples) of the multinomial probability
n!/prod(c_r!) prod(p_r^c_r) times the learner's exact probability of an output
with error > alpha -- C(n+r-1, r-1) terms instead of r^n.  The sum is
computed in certified intervals; a failure at the bound's n is re-computed at
twice the precision before the claim is refuted.

Next to the bound's n the check reports the smallest N from which the guarantee
holds for every n up to the bound's (the failure probability need not be
monotone in n), within the work limit, so the slack of a theorem is visible.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any, Optional

import sympy

from ..dsl.claims import Claim
from ..dsl.learning import SampleComplexity
from ..dsl.params import Point, point_label, substitute
from ..dsl.spec import Spec
from ..engine.backend import IntervalBackend
from ..engine.enumerate import Session
from ..engine.reading import _call, keywords
from ..errors import EnumerationTooLarge
from .result import PointResult, Status, Witness
from .workspace import Workspace, decimal, params


SCAN_SHARE = 2_500
"""The search for the smallest working n may enumerate max_work / SCAN_SHARE multisets (20,000 by
default, enough for small populations; raise --max-work for a full scan of larger ones)."""


def multisets(records: tuple, n: int) -> int:
    return math.comb(n + len(records) - 1, len(records) - 1)


class SampleComplexityCheck:
    kind = "sample_complexity"

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, SampleComplexity)

    def run(self, spec: Spec, claim: SampleComplexity, point: Point, ws: Workspace) -> PointResult:
        alpha = substitute(claim.alpha, point, "alpha")
        beta = substitute(claim.beta, point, "beta")
        bound = substitute(claim.bound, point, "bound")
        n_bound = int(sympy.ceiling(bound))
        records = tuple(r for r, _ in claim.population)
        work = multisets(records, n_bound)
        if work > ws.options.max_work // 10:
            raise EnumerationTooLarge(
                f"sample_complexity: the bound asks for n = {n_bound}, which has {work:,} multisets of the "
                f"{len(records)}-record population", "use a smaller population or parameters giving a "
                "smaller bound, or raise --max-work")
        failure = FailureProbability(spec, claim, point, alpha, ws.options.precision)
        at_bound = failure.at(n_bound)
        limit = failure.backend.num(beta)
        result = PointResult(point_label(point), Status.VERIFIED, "",
                             method="exact failure probability over multisets, certified intervals")
        smallest, complete = self._smallest(failure, limit, n_bound, ws.options.max_work // SCAN_SHARE)
        result.figures = {"n_bound": n_bound, "bound": str(bound), "failure_at_bound": decimal(at_bound),
                          "beta": decimal(beta), "smallest_n": smallest if complete else None,
                          "holds_down_to": smallest,
                          "curve": {str(n): decimal(p) for n, p in sorted(failure.seen.items())}}
        if at_bound.b <= limit.a:
            scan = (f"the guarantee holds for every n from {smallest} to {n_bound}" if complete else
                    f"the guarantee holds for every n from {smallest} to {n_bound} (smaller n were not "
                    f"scanned: raise --max-work for the full scan)")
            result.message = (f"at the bound's n = {n_bound}, P[error > {alpha}] = {decimal(at_bound)} <= beta = "
                              f"{decimal(beta)}; {scan}")
            return result
        confirm = FailureProbability(spec, claim, point, alpha, 2 * ws.options.precision).at(n_bound)
        if not confirm.a > IntervalBackend(2 * ws.options.precision).num(beta).b:
            result.status = Status.UNKNOWN
            result.message = f"P[error > alpha] at n = {n_bound} cannot be separated from beta at this precision"
            return result
        result.status = Status.REFUTED
        result.witness = Witness(n_bound, None, f"error > {alpha}", decimal(confirm), decimal(beta))
        result.message = (f"at the bound's n = {n_bound}, P[error > {alpha}] = {decimal(confirm)} > beta = "
                          f"{decimal(beta)} (exact over {multisets(records, n_bound):,} multisets, confirmed at "
                          f"{2 * ws.options.precision} digits)")
        return result

    @staticmethod
    def _smallest(failure: "FailureProbability", limit: Any, n_bound: int,
                  budget: int) -> tuple[Optional[int], bool]:
        """(N, complete): failure <= beta (certified) for every n in [N, n_bound], scanning down from
        the bound's n.  complete is False when the scan stopped at the work budget before reaching
        an n that fails (or n = 1); N is then only how far down the guarantee was seen to hold.

        The failure probability need not be monotone in n (lattice effects), so the first n that
        works is not enough: every n up to the bound's is checked.
        """
        smallest, spent = None, 0
        for n in range(n_bound, 0, -1):
            spent += multisets(failure.records, n)
            if spent > budget and smallest is not None:
                return smallest, False
            if not failure.at(n).b <= limit.a:
                return smallest, True
            smallest = n
        return smallest, True


class FailureProbability:
    """P_{S ~ population^n}[error(M(S)) > alpha] for each n, in certified intervals."""

    def __init__(self, spec: Spec, claim: SampleComplexity, point: Point, alpha: sympy.Expr, dps: int) -> None:
        self.spec, self.claim, self.alpha = spec, claim, alpha
        self.values = params(point)
        self.backend = IntervalBackend(dps)
        self.session = Session(self.backend)
        self.records = tuple(r for r, _ in claim.population)
        self.p = [p for _, p in claim.population]
        self.seen: dict[int, Any] = {}
        self._bad: dict = {}

    def _is_bad(self, output: Any) -> bool:
        if output not in self._bad:
            error = self.claim.error(output, **keywords(self.claim.error, self.values, skip=1))
            self._bad[output] = bool(sympy.sympify(error) > self.alpha)
        return self._bad[output]

    def at(self, n: int) -> Any:
        if n in self.seen:
            return self.seen[n]
        total = self.backend.num(0)
        factorial = math.factorial(n)
        for counts in _compositions(n, len(self.records)):
            weight = Fraction(factorial)
            for c, p in zip(counts, self.p):
                weight *= p ** c / math.factorial(c)
            if weight == 0:
                continue
            data = Sample(itertools.chain.from_iterable([r] * c for r, c in zip(self.records, counts)))
            data.counts = dict(zip(self.records, counts))
            law = _call(self.spec.mechanism, data, self.values, self.session)
            failing = [w for o, w in law.items() if self._is_bad(o)]
            if failing:
                total += self.backend.num(weight) * sum(failing[1:], failing[0])
        self.seen[n] = total
        return total


class Sample(tuple):
    """A sample as the tuple of its records (in population order) that also knows its ``counts``
    (record -> multiplicity), so a learner that only needs counts can run in O(records), not O(n)."""

    counts: dict


def _compositions(n: int, parts: int) -> Any:
    """Every count vector of ``parts`` non-negative integers summing to n."""
    if parts == 1:
        yield (n,)
        return
    for first in range(n, -1, -1):
        for rest in _compositions(n - first, parts - 1):
            yield (first, *rest)
