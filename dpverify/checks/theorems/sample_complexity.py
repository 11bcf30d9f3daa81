"""The sample-complexity check: "if n >= BOUND then P[error(M(S)) > alpha] <= beta", exactly, for the n checked.

S is n records drawn i.i.d. from a finite population.  The failure probability at each n is summed
over the multisets of S as a certified enclosure by :mod:`dpverify.engine.datasets.multisets` (exact integer
weights; each run's probability of a bad output enclosed by the fast reading of
:mod:`dpverify.engine.program.fastlaw` or the general interval reading; or, for a learner whose score is a
linear query of the counts, grouped by its exponent vector or enclosed in float64 intervals by
:mod:`dpverify.engine.datasets.counts`, re-read precisely when such an enclosure cannot be separated from
beta); this module decides: which n the claim covers, whether an output's error exceeds alpha, and
whether the enclosure lies below beta.

The claim states every n >= the bound, and the failure probability need not decrease in n (a
majority vote with ties to 0 fails more often at n = 4 than at n = 3), while nothing here shows it
stays below beta for all larger n.  So every n from the bound's (the least integer >= the bound) up
is checked: to the claim's ``up_to``, or while the work spent beyond the bound's n stays within
max_work / RANGE_SHARE units.  A verdict that holds covers those n only: ``verified`` with the
scope ``n = 3..40`` (``PointResult.coverage``; the table shows ``verified [n = 3..40]``) and a
message that says "checked for n = 3..40; not shown beyond".  An n of the range whose enclosure is
not below beta is re-computed at twice the precision, by the general reading alone when it has at
most CONFIRM_GENERAL_UP_TO multisets (never by the counts form): a failure refutes the claim with
that n as witness, a value shown below beta lets the scan go on, anything else is ``unknown``.

Next to the range the check reports the smallest N from which the guarantee holds for every n up to
the bound's, within the work limit, so the slack of a theorem is visible.

The sum over multisets reads each multiset in one order; it is the failure probability only if the
learner's law on a sequence depends on its multiset alone.  That is checked, not assumed: the engine
runs every multiset it reads in other orderings too and compares the laws exactly (every ordering
while n is small, a fixed set of orderings beyond: the verdict says which), and a learner whose
laws differ -- or cannot be shown equal -- is summed over the r^n sequences of each n instead, within
max_work / SEQUENCE_SHARE sequences: refuted at an n that fails, verified for the n summed, or
``unknown`` when the sequences are beyond the work limit.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any, Optional

import sympy
from mpmath.libmp import to_rational

from ...dsl.claims import Claim
from ...dsl.learning import SampleComplexity
from ...dsl.params import Point, point_label, substitute
from ...dsl.spec import Spec
from ...engine.program.backend import IntervalBackend, exact_float, exact_sign
from ...engine.decide.decimals import decimal
from ...engine.program.enumerate import _typed
from ...engine.datasets import blind
from ...engine.datasets.multisets import EVERY_ORDERING_UP_TO, ORDERINGS, MultisetSum, OrderDependent, multisets
from ...engine.program.reading import keywords
from ...engine.program.work import params
from ...errors import EnumerationTooLarge, SpecError
from ...evidence import SampleComplexityEvidence
from ...results import PointResult, Status, Witness
from ..witness import number
from ..workspace import Workspace

SCAN_SHARE = 2_500
"""The search for the smallest working n may enumerate max_work / SCAN_SHARE multisets (20,000 by
default, enough for small populations; raise --max-work for a full scan of larger ones)."""


RANGE_SHARE = 500
"""Without up_to= the claim is checked from the bound's n upward while the work spent beyond the bound's n stays
within max_work / RANGE_SHARE units (100,000 by default): a run of the learner per multiset costs ten units, a
count vector of the counts form one, and every n PER_N more (a 3-record population: about 10,000 runs)."""

PER_N = 100
"""The work units every further n costs besides its multisets (so that a tiny population stops too)."""


SEQUENCE_SHARE = 500
"""A learner that depends on the order of its sample is summed over sequences: at most max_work / SEQUENCE_SHARE
sequences (runs) over every n checked (100,000 by default)."""


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
        dps, max_work = ws.options.precision, ws.options.max_work
        n_bound = least_n(bound, dps)
        records = tuple(r for r, _ in claim.population)
        work = multisets(records, n_bound)
        failure = FailureProbability(spec, claim, point, alpha, dps, order_log={})
        # a run per multiset costs about ten units of work; a count vector of the counts form, one
        if work > max_work or (work > max_work // 10 and failure.form(n_bound) is None):
            raise EnumerationTooLarge(
                f"sample_complexity: the bound asks for n = {n_bound}, which has {work:,} multisets of the "
                f"{len(records)}-record population", "use a smaller population or parameters giving a "
                "smaller bound, or raise --max-work (a learner whose score is a dp.count/dp.total/dp.mean "
                "query passed as score.on(data) is summed by counts, at a tenth of the work)")
        up_to = None
        if claim.up_to is not None:
            up_to = greatest_n(substitute(claim.up_to, point, "up_to"), dps)
            if up_to < n_bound:
                raise SpecError(f"sample_complexity: up_to = {up_to} is below the bound's n = {n_bound} (n >= {bound})",
                                "give an up_to at least the least n the bound covers, or leave it out (the "
                                "work limit then sets how far n is checked)")
            total = range_multisets(records, n_bound, up_to)
            if total > max_work or (total > max_work // 10 and failure.form(n_bound) is None):
                raise EnumerationTooLarge(
                    f"sample_complexity: up_to = {up_to} asks for every n from {n_bound} to {up_to}, "
                    f"{total:,} multisets of the {len(records)}-record population in all",
                    "give a smaller up_to, or leave it out (the work limit then sets how far n is checked), "
                    "or raise --max-work")
        try:
            return self._by_multisets(spec, claim, point, alpha, beta, bound, n_bound, up_to, records, failure,
                                      dps, max_work)
        except OrderDependent as found:
            return self._by_sequences(spec, claim, point, alpha, beta, bound, n_bound, up_to, records, dps,
                                      max_work, found)

    def _by_multisets(self, spec: Spec, claim: SampleComplexity, point: Point, alpha: sympy.Expr,
                      beta: sympy.Expr, bound: sympy.Expr, n_bound: int, up_to: Optional[int], records: tuple,
                      failure: "FailureProbability", dps: int, max_work: int) -> PointResult:
        """The claim decided by sums over multisets (see the module docstring); raises OrderDependent."""
        decide = _Decider(spec, claim, point, alpha, beta, dps, failure)
        ev = SampleComplexityEvidence(n_bound=n_bound, bound=str(bound), beta=decimal(beta))
        at_bound = decide.at(n_bound)
        ev.failure_at_bound = decimal(at_bound)
        result = PointResult(point_label(point), Status.VERIFIED, "",
                             method="exact failure probability over multisets, certified intervals", evidence=ev)
        # every n from the bound's up: to up_to, or while the work beyond the bound's n stays in budget
        counted = failure.paths.get(n_bound) in ("grouped", "float")
        budget, spent, last = max_work // RANGE_SHARE, 0, n_bound - 1
        for n in itertools.count(n_bound):
            if n > n_bound:
                if up_to is not None:
                    if n > up_to:
                        break
                else:
                    spent += multisets(records, n) * (1 if counted else 10) + PER_N
                    if spent > budget:
                        break
            if not decide.holds(decide.at(n)):
                # not shown to hold: re-computed at twice the digits, it fails (refuted), holds, or stays open
                confirm, independent = decide.confirm(n)
                if confirm.a > decide.limit2.b:
                    ev.curve = {str(n): decimal(p) for n, p in sorted(failure.seen.items())}
                    return self._refute(decide, confirm, independent, n, n_bound, result, records, bound,
                                        order_note(failure, n, n))
                if not confirm.b <= decide.limit2.a:
                    result.status = Status.UNKNOWN
                    result.message = (f"P[error > alpha] {_where(n, n_bound, bound)} cannot be separated from beta "
                                      f"at {2 * dps} digits")
                    return result
                failure.seen[n] = confirm  # shown to hold at twice the digits
            last = n
        ev.checked_up_to = last
        ev.range_end = "up_to" if up_to is not None else "work limit"
        ev.verified_n = list(range(n_bound, last + 1))
        smallest, complete = self._smallest(failure, decide.limit, n_bound, max_work // SCAN_SHARE)
        ev.smallest_n, ev.holds_down_to = (smallest if complete else None), smallest
        ev.curve = {str(n): decimal(p) for n, p in sorted(failure.seen.items())}
        checked = _span(n_bound, last)
        note = f"checked for {checked}; not shown beyond"
        result.coverage = {"scope": "n range", "from": n_bound, "to": last, "label": checked,
                           "note": f"{note} (the claim states every n >= {bound})"}
        worst = max(range(n_bound, last + 1), key=lambda n: failure.seen[n].b)
        why = (f"up_to = {up_to}" if up_to is not None else
               "the work limit: give up_to= or raise --max-work to check further")
        scan = (f"the guarantee holds for every n from {smallest} to {last}" if complete else
                f"the guarantee holds for every n from {smallest} to {last} (smaller n were not "
                f"decided: raise --max-work for the full scan)")
        result.message = (f"{note}, where the claim states every n >= {bound} (the failure probability need not "
                          f"decrease in n); the range ends at {why}.  P[error > {alpha}] <= beta = {decimal(beta)} "
                          f"at every n checked, largest {decimal(failure.seen[worst])} at n = {worst}; at the bound's "
                          f"n = {n_bound}, the least n the claim covers, P = {decimal(at_bound)}"
                          f"{summed(failure, n_bound)}; {scan}; {order_note(failure, min(smallest, n_bound), last)}")
        return result

    def _by_sequences(self, spec: Spec, claim: SampleComplexity, point: Point, alpha: sympy.Expr,
                      beta: sympy.Expr, bound: sympy.Expr, n_bound: int, up_to: Optional[int], records: tuple,
                      dps: int, max_work: int, found: OrderDependent) -> PointResult:
        """The claim decided by sums over sequences, for a learner whose laws on two orderings of one
        multiset differ (or could not be shown equal): every n from the bound's, to up_to or while the
        sequences stay within max_work / SEQUENCE_SHARE; refuted at an n that fails, verified for the n
        summed when they reach up_to (or, without up_to, at least the bound's n), else unknown."""
        failure = FailureProbability(spec, claim, point, alpha, dps, sequences=True)
        decide = _Decider(spec, claim, point, alpha, beta, dps, failure)
        positive = failure.positive
        ev = SampleComplexityEvidence(n_bound=n_bound, bound=str(bound), beta=decimal(beta))
        result = PointResult(point_label(point), Status.UNKNOWN, "",
                             method="exact failure probability over sequences (the learner depends on the order of "
                                    "its sample), certified intervals", evidence=ev)
        name = getattr(spec.mechanism, "__name__", "the learner")
        if found.decided:
            why = f"{name} depends on the order of its sample: {found.describe()}"
        else:
            why = f"{name} could not be shown to ignore the order of its sample: {found.describe()}"
        how = f"so the failure probability is summed over the {positive}^n sequences of each n, not over multisets"
        budget, spent, last = max_work // SEQUENCE_SHARE, 0, n_bound - 1
        for n in itertools.count(n_bound):
            if up_to is not None and n > up_to:
                break
            if spent + positive ** n > budget:
                break
            spent += positive ** n
            value = decide.at(n)
            if not decide.holds(value):
                confirm, independent = decide.confirm(n)
                if confirm.a > decide.limit2.b:
                    ev.curve = {str(k): decimal(p) for k, p in sorted(failure.seen.items())}
                    return self._refute(decide, confirm, independent, n, n_bound, result, records, bound,
                                        f"{why}; {how}")
                if not confirm.b <= decide.limit2.a:
                    result.message = (f"{why}; {how}: P[error > alpha] {_where(n, n_bound, bound)} cannot be "
                                      f"separated from beta at {2 * dps} digits")
                    return result
                failure.seen[n] = confirm
            last = n
        ev.curve = {str(k): decimal(p) for k, p in sorted(failure.seen.items())}
        if last < n_bound or (up_to is not None and last < up_to):
            held = f"; P[error > {alpha}] <= beta at {_span(n_bound, last)}" if last >= n_bound else ""
            result.message = (f"{why}; {how}, and the {positive ** (last + 1):,} sequences at n = {last + 1} are "
                              f"beyond the work limit (max_work / {SEQUENCE_SHARE} = {budget:,} sequences in all)"
                              f"{held}.  Raise --max-work, or make the learner ignore the order of its sample (for "
                              f"example, sort it first)")
            return result
        ev.checked_up_to = last
        ev.range_end = "up_to" if up_to is not None else "work limit"
        ev.verified_n = list(range(n_bound, last + 1))
        ev.failure_at_bound = decimal(failure.seen[n_bound])
        checked = _span(n_bound, last)
        note = f"checked for {checked}; not shown beyond"
        result.status = Status.VERIFIED
        result.coverage = {"scope": "n range", "from": n_bound, "to": last, "label": checked,
                           "note": f"{note} (the claim states every n >= {bound})"}
        worst = max(range(n_bound, last + 1), key=lambda k: failure.seen[k].b)
        result.message = (f"{note}, where the claim states every n >= {bound}; {why}; {how} (exact over every "
                          f"sequence).  P[error > {alpha}] <= beta = {decimal(beta)} at every n checked, largest "
                          f"{decimal(failure.seen[worst])} at n = {worst}; at the bound's n = {n_bound}, P = "
                          f"{decimal(failure.seen[n_bound])}; the smallest n was not scanned")
        return result

    @staticmethod
    def _refute(decide: "_Decider", confirm: Any, independent: bool, n: int, n_bound: int, result: PointResult,
                records: tuple, bound: sympy.Expr, order: str) -> PointResult:
        """Refuted at n, from the failure ``confirm`` re-computed at twice the digits (see
        :meth:`_Decider.confirm`), with the witness n; unknown when that number cannot be printed."""
        shown = number(confirm)
        where = _where(n, n_bound, bound)
        if shown is None:
            result.status = Status.UNKNOWN
            result.message = f"P[error > alpha] {where} cannot be separated from beta at this precision"
            return result
        result.evidence.failing_n = n  # type: ignore[attr-defined]
        result.status = Status.REFUTED
        result.witness = Witness(n, None, f"error > {decide.alpha}", shown, decimal(decide.beta))
        sequences = decide.failure.sequences
        unit = "sequence" if sequences else "multiset"
        how = f"by the general reading of every {unit}" if independent else "by the fast reading"
        terms = decide.failure.positive ** n if sequences else multisets(records, n)
        result.message = (f"{where}, P[error > {decide.alpha}] = {shown} > beta = {decimal(decide.beta)} (exact over "
                          f"{terms:,} {unit}s, confirmed at {2 * decide.dps} digits {how}); {order}")
        return result

    @staticmethod
    def _smallest(failure: "FailureProbability", limit: Any, n_bound: int,
                  budget: int) -> tuple[Optional[int], bool]:
        """(N, complete): failure <= beta (certified) for every n in [N, n_bound], scanning down from
        the bound's n (shown to hold).  complete is False when the scan stopped at the work budget
        before reaching an n that fails (or n = 1); N is then only how far down it was seen to hold.

        The failure probability need not be monotone in n (lattice effects), so the first n that
        works is not enough: every n up to the bound's is checked.
        """
        smallest, spent = n_bound, multisets(failure.records, n_bound)  # the bound's n is decided: it holds
        for n in range(n_bound - 1, 0, -1):
            spent += multisets(failure.records, n)
            if spent > budget and smallest is not None:
                return smallest, False
            value = failure.at(n)
            if not value.b <= limit.a:
                return smallest, value.a > limit.b  # complete only when n is shown to fail
            smallest = n
        return smallest, True


class _Decider:
    """The failure probability at n, decided against beta: the fast enclosure, re-read per multiset
    (:class:`FailureProbability` with ``counts=False``) when it is a float64 enclosure of the counts
    form that cannot be separated from beta."""

    def __init__(self, spec: Spec, claim: SampleComplexity, point: Point, alpha: sympy.Expr, beta: sympy.Expr,
                 dps: int, failure: "FailureProbability") -> None:
        self.spec, self.claim, self.point, self.alpha, self.beta, self.dps = spec, claim, point, alpha, beta, dps
        self.failure = failure
        self.limit = failure.backend.num(beta)
        self.limit2 = IntervalBackend(2 * dps).num(beta)
        self._precise: Optional[FailureProbability] = None

    def at(self, n: int) -> Any:
        value = self.failure.at(n)
        if self.failure.paths.get(n) == "float" and not (value.b <= self.limit.a or value.a > self.limit.b):
            # the float64 enclosure (about 14 digits) cannot separate it from beta: the precise reading
            if self._precise is None:
                self._precise = FailureProbability(self.spec, self.claim, self.point, self.alpha, self.dps,
                                                   counts=False, order_log=self.failure.order_log)
            value = self.failure.seen[n] = self._precise.at(n)
        return value

    def confirm(self, n: int) -> tuple[Any, bool]:
        """(enclosure, independent): the failure probability at n re-computed at twice the digits, by the
        general interval reading of every multiset when there are at most CONFIRM_GENERAL_UP_TO of them
        (independent of the fast reading; ``independent`` True), else by the fast reading (never by the
        counts form nor blind, :mod:`dpverify.engine.datasets.blind`: each multiset's orderings are run)."""
        failure = self.failure
        terms = failure.positive ** n if failure.sequences else multisets(failure.records, n)
        independent = terms <= CONFIRM_GENERAL_UP_TO
        return FailureProbability(self.spec, self.claim, self.point, self.alpha, 2 * self.dps, fast=not independent,
                                  counts=False, sequences=failure.sequences, order_log=failure.order_log,
                                  blind=False).at(n), \
            independent

    def holds(self, value: Any) -> bool:
        """P <= beta, certified (the enclosure's upper end at most beta's lower end)."""
        return bool(value.b <= self.limit.a)


def order_note(failure: MultisetSum, first: int, last: int) -> str:
    """What the sums over multisets of n = first..last assumed of the order of the sample, and how it was
    checked (see :meth:`~dpverify.engine.datasets.multisets.MultisetSum._check_orders`), or shown: an n summed
    blind (:mod:`dpverify.engine.datasets.blind`) read each multiset only through its counts and size."""
    log = failure.order_log
    every = [n for n in range(first, last + 1) if log.get(n) == "every"]
    counted = [n for n in range(first, last + 1) if log.get(n) == "counts"]
    some = [n for n in range(first, last + 1) if log.get(n) == "some"]
    seen = [n for n in range(first, last + 1) if log.get(n) == "blind"]
    if not some and not counted:
        if not seen:
            return "the learner ignores the order of its sample: shown, every ordering of every multiset was run"
        also = f", and every ordering of every multiset was run at {_list(every)}" if every else ""
        return (f"the learner ignores the order of its sample: shown, it read its sample only through its counts "
                f"and size at {_list(seen)} ({BLIND_NOTE}){also}")
    k = 0
    while failure.positive ** (k + 1) <= EVERY_ORDERING_UP_TO:
        k += 1
    parts = []
    if some:
        every_part = f"checked on every ordering for n <= {k}, " if k >= 1 else ""
        parts.append(f"{every_part}on {ORDERINGS} orderings per multiset beyond (reversed, rotated by one, seeded "
                     f"shuffles; every ordering of a multiset with at most {ORDERINGS + 1})")
    if counted:
        parts.append(f"at {_list(counted)} summed by its counts form, a function of the counts cross-checked with "
                     f"runs in several orders")
    if seen:
        parts.append(f"at {_list(seen)} shown: it read its sample only through its counts and size ({BLIND_NOTE})")
    return f"assumed: the learner ignores the order of its sample ({'; '.join(parts)})"


BLIND_NOTE = ("its code and all it calls read statically: the sample used only as data.counts and len(data); "
              "every multiset run on a stand-in sample whose records refuse any use, so that no ordering can change "
              "its law; cross-checked against real samples read in two orders, lopsided ones included")


def _list(ns: list[int]) -> str:
    """"n = 3..40" for a run of consecutive n, else "n = 3, 5, 9"."""
    if ns == list(range(ns[0], ns[-1] + 1)):
        return _span(ns[0], ns[-1])
    return "n = " + ", ".join(map(str, ns))


def _where(n: int, n_bound: int, bound: sympy.Expr) -> str:
    """Where a failure is: "at the bound's n = 3", or "at n = 4 (the claim covers ...; n = 3 holds)"."""
    if n == n_bound:
        return f"at the bound's n = {n}"
    verb = "hold" if n - 1 > n_bound else "holds"
    return f"at n = {n} (the claim covers every n >= {bound}; {_span(n_bound, n - 1)} {verb})"


def _span(first: int, last: int) -> str:
    """"n = 3..40", or "n = 3" for a single n."""
    return f"n = {first}..{last}" if last > first else f"n = {first}"


def greatest_n(up_to: sympy.Expr, dps: int) -> int:
    """The greatest integer n <= up_to (certified, as :func:`least_n`), at least 1."""
    if isinstance(up_to, sympy.Integer):
        n = int(up_to)
    else:
        try:
            n = -least_n(-up_to, dps)
        except SpecError:
            raise SpecError(f"sample_complexity: cannot decide the greatest integer n <= up_to = {up_to}",
                            "give up_to as an integer") from None
    if n < 1:
        raise SpecError(f"sample_complexity: up_to = {up_to} leaves no sample size n >= 1", "give up_to >= 1")
    return n


def range_multisets(records: tuple, first: int, last: int) -> int:
    """How many multisets the sizes n = first..last have together: sum of C(n + r - 1, r - 1),
    C(last + r, r) - C(first - 1 + r, r) (the hockey-stick identity)."""
    r = len(records)
    return math.comb(last + r, r) - math.comb(first - 1 + r, r)


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
    population and mechanism summed over multisets by :class:`~dpverify.engine.datasets.multisets.MultisetSum`
    (``fast``, ``workers``, ``counts`` as there), with "error > alpha" decided here, exactly."""

    def __init__(self, spec: Spec, claim: SampleComplexity, point: Point, alpha: sympy.Expr, dps: int,
                 fast: bool = True, workers: int = 1, counts: bool = True, sequences: bool = False,
                 order_log: Optional[dict] = None, blind: bool = True) -> None:
        self.claim, self.alpha = claim, alpha
        self._alpha = Fraction(int(alpha.p), int(alpha.q)) if isinstance(alpha, sympy.Rational) else None
        self._bad: dict = {}
        self._blind: set[int] = set()
        self.blind = blind
        super().__init__(spec.mechanism, params(point), tuple(claim.population), self._is_bad, dps, fast, workers,
                         counts, sequences, order_log)
        self._error_kwargs = keywords(self.claim.error, self.values, skip=1)

    def at(self, n: int) -> Any:
        """The enclosure at n (see :class:`~dpverify.engine.datasets.multisets.MultisetSum`); an n summed blind
        is logged ``"blind"`` in ``order_log`` (its order independence shown without running orderings)."""
        fresh, logged = n not in self.seen, self.order_log.get(n)
        value = super().at(n)
        if fresh and n in self._blind and logged not in ("every", "some"):
            self.order_log[n] = "blind"
        return value

    def _fast(self, n: int) -> Any:
        """The fast reading at n: every multiset read blind (:mod:`dpverify.engine.datasets.blind`: the same
        enclosure, without running other orderings) when the learner reads its sample only through its counts
        and size, else the ordinary way."""
        if self.blind and not self.sequences and self.workers == 1:
            value = blind.enclosure(self, n)
            if value is not None:
                self._blind.add(n)
                return value
        return super()._fast(n)

    def _is_bad(self, output: Any) -> bool:
        """error(output) > alpha, decided exactly (a tie is not bad; a float must be exact).  Outputs are
        cached by :func:`~dpverify.engine.program.enumerate._typed` (equal, of the same types and the same text), so
        outputs equal under Python's == that an observer -- or ``error`` -- can tell apart (0.0 and -0.0,
        1 and True) are never merged; a NaN output is refused at the learner."""
        try:
            key = _plain_key(output)
            if key is None:
                key = _typed(output)
        except SpecError as err:
            code = getattr(self.program, "__code__", None)
            raise err.located(code.co_filename, code.co_firstlineno) if code else err from None
        if key not in self._bad:
            error = self.claim.error(output, **self._error_kwargs)
            if isinstance(error, float):
                error = exact_float(error)
            sign = _rational_sign(error, self._alpha)
            if sign is None:
                sign = exact_sign(sympy.sympify(error) - self.alpha)
            if sign is None:
                raise SpecError(f"sample_complexity: cannot decide whether the error {error} of output {output!r} "
                                f"exceeds alpha = {self.alpha}", "return the error as an exact rational")
            self._bad[key] = sign > 0
        return self._bad[key]


_PLAIN_KEY = object()
"""Marks a key of :func:`_plain_key` (no key of :func:`~dpverify.engine.program.enumerate._typed` holds it)."""

_PLAIN_LEAVES = frozenset({int, bool, str, bytes, type(None)})
"""Leaf types whose equal values have one text (and no other state): a value of one of them is the same output
as another exactly when they are of one type and equal."""


def _plain_key(output: Any) -> Optional[tuple]:
    """A key equal for two outputs exactly when :func:`~dpverify.engine.program.enumerate._typed` gives equal
    keys, for an int, bool, str, bytes, None or Fraction (exact types) or a plain tuple of them; None for
    anything else.  Cheaper than _typed (no repr; a Fraction keyed by its numerator and denominator, which
    equal Fractions share, instead of its slow hash): a deterministic learner has a new output per multiset."""
    kind = type(output)
    if kind is tuple:
        leaves = []
        for x in output:
            leaf = type(x)
            if leaf is Fraction:
                leaves.append((leaf, x.numerator, x.denominator))
            elif leaf in _PLAIN_LEAVES:
                leaves.append((leaf, x))
            else:
                return None
        return (_PLAIN_KEY, tuple(leaves))
    if kind is Fraction:
        return (_PLAIN_KEY, kind, output.numerator, output.denominator)
    if kind in _PLAIN_LEAVES:
        return (_PLAIN_KEY, kind, output)
    return None


def _rational_sign(error: Any, alpha: Optional[Fraction]) -> Optional[int]:
    """The sign of error - alpha by exact rational arithmetic when alpha is a rational and the error
    an int, a Fraction or a sympy Rational (not a bool), else None: the common case, without building
    an interval enclosure per output (a deterministic statistic has a new output per multiset)."""
    if alpha is None:
        return None
    kind = type(error)
    if kind is Fraction or kind is int:  # exactly: the integers error.p * alpha.q against alpha.p * error.q
        left, right = error.numerator * alpha.denominator, alpha.numerator * error.denominator
        return (left > right) - (left < right)
    if isinstance(error, sympy.Rational):
        error = Fraction(int(error.p), int(error.q))
    elif isinstance(error, bool) or not isinstance(error, (int, Fraction)):
        return None
    return (error > alpha) - (error < alpha)
