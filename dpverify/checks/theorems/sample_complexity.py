"""The sample-complexity check: "if n >= BOUND then P[error(M(S)) > alpha] <= beta", exactly.

S is n records drawn i.i.d. from a finite population.  The failure probability
at the least n the claim covers is summed over the multisets of S as a certified
enclosure by :mod:`dpverify.engine.multisets` (exact integer weights; each run's
probability of a bad output enclosed by the fast reading of
:mod:`dpverify.engine.fastlaw` or the general interval reading; or, for a learner whose
score is a linear query of the counts, grouped by its exponent vector or enclosed in
float64 intervals by :mod:`dpverify.engine.counts`, re-read precisely when such an
enclosure cannot be separated from beta); this module
decides: which n the bound covers, whether an output's error exceeds alpha, and
whether the enclosure lies below beta.  A failure at the bound's n is re-computed
at twice the precision before the claim is refuted, by the general reading alone
when the bound's n has at most CONFIRM_GENERAL_UP_TO multisets (never by the counts form).

Next to the bound's n the check reports the smallest N from which the guarantee
holds for every n up to the bound's (the failure probability need not be
monotone in n), within the work limit, so the slack of a theorem is visible.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional

import sympy
from mpmath.libmp import to_rational

from ...dsl.claims import Claim
from ...dsl.learning import SampleComplexity
from ...dsl.params import Point, point_label, substitute
from ...dsl.spec import Spec
from ...engine.backend import IntervalBackend, exact_float, exact_sign
from ...engine.decimals import decimal
from ...engine.multisets import MultisetSum, multisets
from ...engine.reading import keywords
from ...engine.work import params
from ...errors import EnumerationTooLarge, SpecError
from ...evidence import SampleComplexityEvidence
from ...results import PointResult, Status, Witness
from ..witness import number
from ..workspace import Workspace

SCAN_SHARE = 2_500
"""The search for the smallest working n may enumerate max_work / SCAN_SHARE multisets (20,000 by
default, enough for small populations; raise --max-work for a full scan of larger ones)."""


CONFIRM_GENERAL_UP_TO = 20_000
"""A refutation at the bound's n is confirmed with the general interval reading for every multiset when
there are at most this many multisets (a few seconds at twice the precision), else with the fast reading."""


def least_n(bound: sympy.Expr, dps: int) -> int:
    """The least integer n >= bound, decided with certified digits (and exactly when the bound is
    an integer in disguise): sympy's own ceiling can be off by one for a bound within 10^-100 of
    an integer, and the claim covers n >= bound only."""
    if isinstance(bound, sympy.Integer):
        return int(bound)
    enclosure = IntervalBackend(dps).num(bound)
    # the exact ends, as Python integers: with gmpy2 installed mpmath's are mpz, which sympy refuses
    lo, hi = (Fraction(*map(int, to_rational(end))) for end in enclosure._mpi_)
    lo, hi = math.ceil(lo), math.floor(hi)
    if lo > hi:  # no integer in the enclosure: the bound lies strictly between hi and lo
        return lo
    if lo == hi:
        sign = exact_sign(bound - lo)
        if sign is not None:
            return lo if sign <= 0 else lo + 1
    raise SpecError(f"sample_complexity: cannot decide the least integer n >= bound = {bound}",
                    "give the bound as an exact number or a simpler expression")


class SampleComplexityCheck:
    kind = "sample_complexity"

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, SampleComplexity)

    def run(self, spec: Spec, claim: SampleComplexity, point: Point, ws: Workspace) -> PointResult:
        alpha = substitute(claim.alpha, point, "alpha")
        beta = substitute(claim.beta, point, "beta")
        bound = substitute(claim.bound, point, "bound")
        n_bound = least_n(bound, ws.options.precision)
        records = tuple(r for r, _ in claim.population)
        work = multisets(records, n_bound)
        failure = FailureProbability(spec, claim, point, alpha, ws.options.precision)
        # a run per multiset costs about ten units of work; a count vector of the counts form, one
        if work > ws.options.max_work or (work > ws.options.max_work // 10 and failure.form(n_bound) is None):
            raise EnumerationTooLarge(
                f"sample_complexity: the bound asks for n = {n_bound}, which has {work:,} multisets of the "
                f"{len(records)}-record population", "use a smaller population or parameters giving a "
                "smaller bound, or raise --max-work (a learner whose score is a dp.count/dp.total/dp.mean "
                "query passed as score.on(data) is summed by counts, at a tenth of the work)")
        at_bound = failure.at(n_bound)
        limit = failure.backend.num(beta)
        if failure.paths.get(n_bound) == "float" and not (at_bound.b <= limit.a or at_bound.a > limit.b):
            # the float64 enclosure (about 14 digits) cannot separate it from beta: the precise reading
            at_bound = failure.seen[n_bound] = FailureProbability(
                spec, claim, point, alpha, ws.options.precision, counts=False).at(n_bound)
        result = PointResult(point_label(point), Status.VERIFIED, "",
                             method="exact failure probability over multisets, certified intervals")
        ev = result.evidence = SampleComplexityEvidence()
        smallest, complete = self._smallest(failure, limit, n_bound, ws.options.max_work // SCAN_SHARE)
        ev.n_bound, ev.bound, ev.failure_at_bound = n_bound, str(bound), decimal(at_bound)
        ev.beta, ev.smallest_n, ev.holds_down_to = decimal(beta), smallest if complete else None, smallest
        ev.curve = {str(n): decimal(p) for n, p in sorted(failure.seen.items())}
        if at_bound.b <= limit.a:
            scan = (f"the guarantee holds for every n from {smallest} to {n_bound}" if complete else
                    f"the guarantee holds for every n from {smallest} to {n_bound} (smaller n were not "
                    f"decided: raise --max-work for the full scan)")
            result.message = (f"verified at n = {n_bound}, the least n the claim covers (n >= {bound}): "
                              f"P[error > {alpha}] = {decimal(at_bound)} <= beta = {decimal(beta)}{summed(failure, n_bound)}; "
                              f"larger n are not checked (the failure probability need not decrease in n); {scan}")
            ev.verified_n = [n_bound]
            return result
        # The confirmation reads every run with the general interval reading when that is affordable,
        # independently of the fast reading that found the failure; above that, the fast one at 2x digits.
        independent = work <= CONFIRM_GENERAL_UP_TO
        confirm = FailureProbability(spec, claim, point, alpha, 2 * ws.options.precision,
                                     fast=not independent, counts=False).at(n_bound)
        shown = number(confirm)
        if not confirm.a > IntervalBackend(2 * ws.options.precision).num(beta).b or shown is None:
            result.status = Status.UNKNOWN
            result.message = f"P[error > alpha] at n = {n_bound} cannot be separated from beta at this precision"
            return result
        result.status = Status.REFUTED
        result.witness = Witness(n_bound, None, f"error > {alpha}", shown, decimal(beta))
        result.message = (f"at the bound's n = {n_bound}, P[error > {alpha}] = {shown} > beta = "
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
            value = failure.at(n)
            if not value.b <= limit.a:
                return smallest, value.a > limit.b  # complete only when n is shown to fail
            smallest = n
        return smallest, True


def summed(failure: MultisetSum, n: int) -> str:
    """How the sum at n was taken, when by the counts form (the enclosure's width with the float path)."""
    path = failure.paths.get(n)
    if path == "grouped":
        return f" (summed by the learner's counts: {failure.groups[n]:,} exponent vectors, exact weights)"
    if path == "float":
        value = failure.seen[n]
        width = float(((value.b - value.a) / value.b).a) if value.b else 0.0
        return (f" (summed by the learner's counts in float64 interval arithmetic: certified, relative "
                f"width {width:.0e})")
    return ""


class FailureProbability(MultisetSum):
    """P_{S ~ population^n}[error(M(S)) > alpha] for each n, as a certified enclosure: the claim's
    population and mechanism summed over multisets by :class:`~dpverify.engine.multisets.MultisetSum`
    (``fast``, ``workers``, ``counts`` as there), with "error > alpha" decided here, exactly."""

    def __init__(self, spec: Spec, claim: SampleComplexity, point: Point, alpha: sympy.Expr, dps: int,
                 fast: bool = True, workers: int = 1, counts: bool = True) -> None:
        self.claim, self.alpha = claim, alpha
        self._bad: dict = {}
        super().__init__(spec.mechanism, params(point), tuple(claim.population), self._is_bad, dps, fast, workers,
                         counts)

    def _is_bad(self, output: Any) -> bool:
        """error(output) > alpha, decided exactly (a tie is not bad; a float must be exact)."""
        if output not in self._bad:
            error = self.claim.error(output, **keywords(self.claim.error, self.values, skip=1))
            if isinstance(error, float):
                error = exact_float(error)
            sign = exact_sign(sympy.sympify(error) - self.alpha)
            if sign is None:
                raise SpecError(f"sample_complexity: cannot decide whether the error {error} of output {output!r} "
                                f"exceeds alpha = {self.alpha}", "return the error as an exact rational")
            self._bad[output] = sign > 0
        return self._bad[output]
