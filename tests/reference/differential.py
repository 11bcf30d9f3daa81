"""Run one fuzz case through the reference and through dpverify, and compare verdicts.

The comparison is one-sided where the reference is: at a grid point the reference
decides every claim exactly; "for every eps" it can only refute (it evaluates the
claim exactly at sample values of eps), and a program that branches on eps must not
be ``proved`` at all.  Findings are returned, not raised, so the caller can count them.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any, Optional

import mpmath
import sympy

from . import privacy, shim
from .cases import Case, ClaimSpec
from .exactnum import Q

FOR_ALL_SAMPLES = (Fraction(1, 10), Fraction(1, 3), Fraction(1, 2), Fraction(1), Fraction(2), Fraction(5))
STATS: Counter = Counter()  # verdicts seen in this process (reported by the tests)
REASONS: Counter = Counter()  # why points came back error or unknown (the start of the message)


@dataclass
class Finding:
    category: str
    claim: str
    point: str
    status: str
    truth: str
    message: str


@dataclass
class Reference:
    """The reference's view of one case: programs, datasets, pairs, and laws per eps."""

    case: Case
    namespace: dict = field(default_factory=dict)
    data: list = field(default_factory=list)
    pairs: list = field(default_factory=list)
    _laws: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        exec(compile(self.case.source, "<fuzz case>", "exec"), self.namespace)  # noqa: S102
        self.data = privacy.datasets(self.case.records, self.case.sizes)
        relation = self.namespace["rel"] if self.case.relation == "rel" else self.case.relation
        self.relation = relation
        self.pairs = privacy.pairs(self.data, relation)

    def laws(self, eps: Fraction, name: str = "mech") -> list:
        key = (eps, name)
        if key not in self._laws:
            # the value a program receives, as dpverify documents it ("every reading receives the same
            # exact parameter values": a Fraction for a rational grid value), so its own comparisons,
            # hashes and outputs mean the same in both
            self._laws[key] = privacy.laws(self.namespace[name], self.data, {"eps": Fraction(eps)})
        return self._laws[key]

    def achieved(self, eps: Fraction) -> privacy.Achieved:
        key = (eps, "achieved")
        if key not in self._laws:
            self._laws[key] = privacy.achieved(self.laws(eps), self.pairs)
        return self._laws[key]

    def holds(self, claim: ClaimSpec, eps: Fraction) -> bool:
        """The exact truth of a claim at one parameter value."""
        if claim.kind == "same":
            return all(privacy.same_law(a, b) for a, b in zip(self.laws(eps), self.laws(eps, "other")))
        bound = claim.exp_bound(eps)
        if not claim.is_delta:
            return privacy.pure_holds(self.achieved(eps), bound)
        return privacy.hockey_stick(self.laws(eps), self.pairs, bound) <= claim.delta()


def namespace() -> dict:
    """What a program's source sees in the reference: the shim as ``dp``."""
    return {"dp": shim, "Fraction": Fraction, "Rational": sympy.Rational, "sympy": sympy}


def reference(case: Case) -> Reference:
    return Reference(case, namespace())


def run_dpverify(path: Path) -> Any:
    """dpverify's report of one spec file, in process (as ``dpverify check`` computes it)."""
    from dpverify.checks import Options
    from dpverify.runner import check_paths
    return check_paths([str(path)], Options(precision=50, proofs=True))


def _point_eps(params: dict) -> Optional[Fraction]:
    value = params.get("eps")
    return None if value is None else Fraction(value)


def _beyond_grid_eps(message: str) -> Optional[Fraction]:
    m = re.search(r"fails for eps = ([-+0-9.eE]+)", message)
    return Fraction(Decimal(m.group(1))) if m else None


def compare(case: Case, ref: Reference, report: Any) -> list[Finding]:
    """Every disagreement between dpverify's statuses and the reference's truths."""
    findings: list[Finding] = []
    spec_reports = report.specs
    if not spec_reports or spec_reports[0].error:
        STATS["load error"] += 1
        REASONS[f"load error: {_reason(spec_reports[0].error) if spec_reports else 'no spec'}"] += 1
        return findings
    by_id = {f"c{i}": c for i, c in enumerate(case.claims)}
    order = privacy.order_dependent(ref.laws(case.grid[0]), ref.data) if case.symmetric else None
    for result in spec_reports[0].claims:
        claim = by_id[result.claim_id]
        for point in result.points:
            status = point.status.value
            STATS[status] += 1
            if status in ("unknown", "error") or "no proof" in point.message:
                why = point.message[point.message.find("no proof"):] if status == "verified" else point.message
                REASONS[f"{status}: {_reason(why)}"] += 1
            eps = _point_eps(point.params)
            if eps is None or status in ("unknown", "error"):
                continue
            label = f"{result.claim_id} ({claim.label}) at eps={eps}"
            findings += _judge(case, ref, claim, eps, status, point, label, order)
    return findings


def _reason(message: str) -> str:
    """The start of a message without file paths and numbers (to count reasons)."""
    return re.sub(r"[0-9]+", "N", re.sub(r"\S*fuzz_case\.py:[0-9]+: ", "", message))[:100]


def _judge(case: Case, ref: Reference, claim: ClaimSpec, eps: Fraction, status: str, point: Any,
           label: str, order: Optional[tuple]) -> list[Finding]:
    out = []
    truth = ref.holds(claim, eps)

    def add(category: str, truth_text: str) -> None:
        out.append(Finding(category, label, str(eps), status, truth_text, point.message[:400]))

    if status in ("proved", "verified"):
        if not truth:
            add("false " + status, "false at this grid point")
        elif not ref.pairs and claim.kind == "private":
            add("no neighbouring pairs accepted", "vacuous: the universe has no pairs (must be an error)")
        elif order is not None:
            add("symmetric=True not checked", f"orderings {order[0]!r} and {order[1]!r} have different laws")
    if status == "proved":
        if case.branches_on_eps:
            add("proof of a program that branches on eps", "unknown for every eps (the program branches on eps)")
        else:
            bad = next((s for s in FOR_ALL_SAMPLES if not ref.holds(claim, s)), None)
            if bad is not None:
                add("false proof for every eps", f"false at eps={bad}")
    if status == "refuted" and truth:
        star = _beyond_grid_eps(point.message)
        if star is None or "every eps" not in point.method:
            add("false refutation", "true at this grid point")
        elif case.branches_on_eps or not (star > 0 and not ref.holds(claim, star)):
            samples = () if case.branches_on_eps else FOR_ALL_SAMPLES
            if not any(not ref.holds(claim, s) for s in samples):
                add("unconfirmed refutation beyond the grid", f"true at eps={star} and at the samples")
    if claim.kind == "private" and not claim.is_delta and point.evidence.achieved_epsilon and status != "error":
        mismatch = _achieved_mismatch(ref.achieved(eps), point)
        if mismatch:
            add("achieved epsilon differs", mismatch)
    return out


def _achieved_mismatch(best: privacy.Achieved, point: Any) -> Optional[str]:
    got = point.evidence.achieved_epsilon
    if got == "inf" or best.infinite:
        return None if got == "inf" and best.infinite else f"reference {'inf' if best.infinite else 'finite'}, dpverify {got}"
    if point.evidence.achieved_is_lower_bound:
        return None
    with mpmath.workdps(60):
        ref = best.ratio.log_mpf(50)
        if abs(mpmath.mpf(got) - ref) > mpmath.mpf(10) ** -30 * (1 + abs(ref)):
            return f"reference {mpmath.nstr(ref, 40)}, dpverify {got}"
    return None


def claims_for(ref: Reference, draw: Any, st: Any) -> list[ClaimSpec]:
    """Claims around the reference's exact levels (drawn with hypothesis ``draw``)."""
    case = ref.case
    eps0 = case.grid[0]
    single = len(case.grid) == 1
    excesses = [Fraction(0)] * 4 + [Fraction(1, 10**30), -Fraction(1, 10**30), Fraction(1, 10**60),
                                    Fraction(1, 10**100), -Fraction(1, 10**100)]
    kinds = ["linear", "linear", "delta_fixed", "huge"] + (["exact", "exact", "delta_exact"] if single else [])
    out: list[ClaimSpec] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(kinds))
        off = draw(st.sampled_from(excesses))
        if kind == "linear":
            coef = draw(st.sampled_from([Fraction(1, 2), Fraction(1), Fraction(2), Fraction(3)]))
            out.append(ClaimSpec("private", coef=coef, offset=off, label=f"{coef}*eps{_off(off)}"))
        elif kind == "huge":
            big = draw(st.sampled_from([Fraction(200), Fraction(10**4)]))
            out.append(ClaimSpec("private", offset=big + off, label=f"{big}{_off(off)}"))
        elif kind == "exact":
            best = ref.achieved(eps0)
            if best.infinite or (off < 0 and best.ratio <= Q.exp(-off)):
                continue
            out.append(ClaimSpec("private", ratio=best.ratio, offset=off, label=f"achieved{_off(off)}"))
        elif kind == "delta_fixed":
            coef = draw(st.sampled_from([Fraction(0), Fraction(1, 2), Fraction(1)]))
            d = draw(st.sampled_from([Fraction(1, 10), Fraction(1, 1000)]))
            out.append(ClaimSpec("private", coef=coef, delta_offset=d, label=f"({coef}*eps, {d})"))
        else:
            coef = draw(st.sampled_from([Fraction(0), Fraction(1, 2), Fraction(1)]))
            base = privacy.hockey_stick(ref.laws(eps0), ref.pairs, Q.exp(coef * eps0))
            total = base + off
            if total.sign() <= 0 or total >= 1:
                continue
            out.append(ClaimSpec("private", coef=coef, delta_base=base, delta_offset=off,
                                 label=f"({coef}*eps, delta(eps){_off(off)})"))
    if "other" in ref.namespace:
        out.append(ClaimSpec("same", label="same_distribution"))
    return out


def _off(off: Fraction) -> str:
    if off == 0:
        return ""
    return f" {'+' if off > 0 else '-'} 1e-{len(str(abs(off).denominator)) - 1}"
