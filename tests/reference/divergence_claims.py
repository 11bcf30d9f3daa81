"""Rényi, zCDP and privacy-profile claims for the differential fuzzer, and their truths.

A :class:`DivCase` is a :class:`.cases.Case` whose claims are :class:`DivClaim` s: ``dp.renyi(alpha,
eps)``, ``dp.zcdp(rho)`` and ``dp.profile(at=[...], delta=[...], times=T, also=[(other, k)])``, with
every claimed number a :class:`Level` -- a function of the grid's ``eps`` that the reference can
evaluate in certified intervals and, where it is an element of the field, exactly.
:class:`DivReference` decides each claim at a parameter value from the exact laws of
:class:`.differential.Reference` with :mod:`.divergence`; :func:`claims_for` draws claims at,
just above and just below the reference's values; :func:`compare` judges dpverify's report.

Truths are three-valued: ``True``, ``False``, or ``None`` when the reference cannot decide
(a zCDP claim inside the reference's bracket, a non-integer order the intervals cannot
separate).  A verdict is only judged against a decided truth.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Optional

import mpmath

from . import differential, divergence as dv, privacy
from .cases import Case, q_source
from .differential import FOR_ALL_SAMPLES, Finding
from .exactnum import Q, Undecided
from .shim import Unsupported

iv = mpmath.iv
STATS: Counter = Counter()  # verdicts seen (and reference skips) in this process
REASONS: Counter = Counter()  # why points were unknown or errors, and what the reference could not decide
REFERENCE_LIMITS = (Unsupported, Undecided, ZeroDivisionError, TypeError, KeyError, IndexError)
MAX_TERMS = 6000
"""The largest composition (multisets of outputs x pairs) the reference enumerates in a fuzz case."""
MAX_EXACT_SOURCE = 4000
"""The longest exact number rendered into a claim (longer ones are claimed only approximately)."""


def _rational(x: Fraction) -> str:
    x = Fraction(x)
    return f"Rational({x.numerator}, {x.denominator})"


@dataclass(frozen=True)
class Level:
    """A claimed number at the grid value ``eps``:
    const + coef * eps**power + mult * ln(log_of) + exact_q  (absent parts are 0)."""

    const: Fraction = Fraction(0)
    coef: Fraction = Fraction(0)
    power: int = 1
    log_of: Optional[Q] = None
    mult: Fraction = Fraction(1)
    exact_q: Optional[Q] = None

    def _rational_part(self, eps: Fraction) -> Fraction:
        return self.const + self.coef * Fraction(eps) ** self.power

    def iv(self, eps: Fraction, bits: int) -> Any:
        r = self._rational_part(eps)
        with dv.precision(bits):
            out = iv.mpf(r.numerator) / r.denominator
            if self.log_of is not None:
                out += iv.mpf(self.mult.numerator) / self.mult.denominator * iv.log(dv.enclose(self.log_of, bits))
            if self.exact_q is not None:
                out += dv.enclose(self.exact_q, bits)
            return out

    def exact(self, eps: Fraction) -> Optional[Q]:
        """The value as an exact number, when it is one of the field (no logarithm)."""
        if self.log_of is not None:
            return None
        out = Q.of(self._rational_part(eps))
        return out + self.exact_q if self.exact_q is not None else out

    def exp_exact(self, eps: Fraction, m: Fraction) -> Optional[Q]:
        """e^(m * value) exactly, when it is an element of the field."""
        if self.exact_q is not None:
            return None
        out = Q.exp(m * self._rational_part(eps))
        if self.log_of is not None:
            k = m * self.mult
            if k.denominator != 1:
                return None
            out = out * self.log_of ** int(k)
        return out

    def source(self) -> str:
        parts = []
        if self.const:
            parts.append(_rational(self.const))
        if self.coef:
            parts.append(f"{_rational(self.coef)}*eps" + (f"**{self.power}" if self.power != 1 else ""))
        if self.log_of is not None:
            parts.append(f"{_rational(self.mult)}*sympy.log({q_source(self.log_of)})")
        if self.exact_q is not None:
            parts.append(q_source(self.exact_q))
        return " + ".join(parts) or "Rational(0)"

    def size(self) -> int:
        return len(self.source())


@dataclass(frozen=True)
class DivClaim:
    """``renyi`` (alpha, level), ``zcdp`` (level = rho) or ``profile`` (at, deltas, times, also)."""

    kind: str
    alpha: Fraction = Fraction(2)
    level: Level = Level()
    at: tuple[Level, ...] = ()
    deltas: tuple[Level, ...] = ()
    times: int = 1
    also: int = 0  # runs of ``other`` composed with the mechanism's (0: none)
    label: str = ""

    def source(self, i: int) -> str:
        if self.kind == "renyi":
            return f"dp.renyi({_rational(self.alpha)}, {self.level.source()}, id='c{i}')"
        if self.kind == "zcdp":
            return f"dp.zcdp({self.level.source()}, id='c{i}')"
        at = ", ".join(a.source() for a in self.at)
        deltas = ", ".join(d.source() for d in self.deltas)
        also = f", also=[(other, {self.also})]" if self.also else ""
        return f"dp.profile(at=[{at}], delta=[{deltas}], times={self.times}{also}, id='c{i}')"


@dataclass
class DivCase(Case):
    """A case whose claims are :class:`DivClaim` s (rendered here; the universe as in :class:`Case`)."""

    def render(self) -> str:
        saved = self.claims
        try:
            self.claims = []
            head = Case.render(self)
        finally:
            self.claims = saved
        claims = ",\n        ".join(c.source(i) for i, c in enumerate(self.claims))
        return head.replace("    claims=[\n        ,\n    ],", f"    claims=[\n        {claims},\n    ],")


class DivReference:
    """The divergence facts of a case, per parameter value, from :class:`.differential.Reference`'s laws."""

    def __init__(self, case: Case) -> None:
        self.base = differential.reference(case)
        self.case = case
        self._pairs: dict = {}
        self._brackets: dict = {}
        self._comps: dict = {}

    @property
    def data(self) -> list:
        return self.base.data

    def pair_laws(self, eps: Fraction) -> list[dv.PairLaw]:
        if eps not in self._pairs:
            laws = self.base.laws(eps)
            self._pairs[eps] = [dv.PairLaw(laws[i], laws[j]) for i, j in dv.distinct_pairs([laws], self.base.pairs)]
        return self._pairs[eps]

    def bracket(self, eps: Fraction) -> dv.Bracket:
        if eps not in self._brackets:
            self._brackets[eps] = dv.zcdp_bracket(self.pair_laws(eps), rel_tol=1e-8, max_evaluations=200)
        return self._brackets[eps]

    def compositions(self, eps: Fraction, times: int, also: int) -> list[dv.Composition]:
        key = (eps, times, also)
        if key not in self._comps:
            programs = [(self.base.laws(eps), times)] + ([(self.base.laws(eps, "other"), also)] if also else [])
            self._comps[key] = dv.compositions(programs, self.base.pairs)
        return self._comps[key]

    def composition_size(self, eps: Fraction, times: int, also: int) -> int:
        return sum(c.size() for c in self.compositions(eps, times, also))

    # truths -------------------------------------------------------------------------------------
    def holds(self, claim: DivClaim, eps: Fraction) -> Optional[bool]:
        eps = Fraction(eps)
        if claim.kind == "renyi":
            level = claim.level
            return dv.renyi_compare(self.pair_laws(eps), claim.alpha, lambda bits: level.iv(eps, bits),
                                    lambda: level.exp_exact(eps, claim.alpha - 1))
        if claim.kind == "zcdp":
            b = self.bracket(eps)
            rho = claim.level.iv(eps, dv.BITS[1])
            if b.lower == dv.INF:
                return False
            if dv._hi(rho) < b.lower:
                return False
            if dv._lo(rho) >= b.upper:
                return True
            return None
        return self.profile_holds(claim, eps, self.compositions(eps, claim.times, claim.also))

    def profile_holds(self, claim: DivClaim, eps: Fraction, comps: list) -> Optional[bool]:
        undecided = False
        for at, delta in zip(claim.at, claim.deltas):
            w_exact = at.exp_exact(eps, Fraction(1))
            truth = dv.profile_compare(comps, _w_iv(at, eps, w_exact), w_exact, lambda bits: delta.iv(eps, bits),
                                       delta.exact(eps))
            if truth is False:
                return False
            undecided |= truth is None
        return None if undecided else True

    def pair_holds(self, claim: DivClaim, eps: Fraction, x: tuple, x_prime: tuple,
                   alpha: Optional[Fraction]) -> Optional[bool]:
        """Whether the claim holds on the single ordered pair (x, x') (a witness), at order ``alpha``
        for zCDP (D_alpha / alpha <= rho there)."""
        i, j = self.data.index(tuple(x)), self.data.index(tuple(x_prime))
        if claim.kind == "profile":
            programs = [(self.base.laws(eps), claim.times)]
            if claim.also:
                programs.append((self.base.laws(eps, "other"), claim.also))
            return self.profile_holds(claim, eps, dv.compositions(programs, [(i, j)]))
        laws = self.base.laws(eps)
        pair = [dv.PairLaw(laws[i], laws[j])] if not privacy.same_law(laws[i], laws[j]) else []
        if claim.kind == "renyi":
            level = claim.level
            return dv.renyi_compare(pair, claim.alpha, lambda bits: level.iv(eps, bits),
                                    lambda: level.exp_exact(eps, claim.alpha - 1))
        # zCDP at one order: D_alpha <= rho alpha, i.e. a Rényi claim with level rho * alpha
        level = claim.level
        if level.log_of is not None or level.exact_q is not None:
            return None
        scaled = Level(level.const * alpha, level.coef * alpha, level.power)
        return dv.renyi_compare(pair, alpha, lambda bits: scaled.iv(eps, bits),
                                lambda: scaled.exp_exact(eps, alpha - 1))


def _w_iv(at: Level, eps: Fraction, w_exact: Optional[Q]) -> Any:
    if w_exact is not None:
        return lambda bits: dv.enclose(w_exact, bits)

    def w(bits: int) -> Any:
        with dv.precision(bits):
            return iv.exp(at.iv(eps, bits))
    return w


# ----- drawing claims -------------------------------------------------------------------------------

RELATIVE = (Fraction(1, 10**6), -Fraction(1, 10**6), Fraction(1, 100), -Fraction(1, 100))
TINY = Fraction(1, 10**30)


def _near(value: Any, rel: Fraction) -> Optional[Fraction]:
    """A rational within a few 1e-25 of value * (1 + rel) (None below 0, and for magnitudes beyond
    1e+-250, whose decimal rendering Python limits)."""
    with mpmath.workdps(60):
        x = mpmath.mpf(value) * (1 + mpmath.mpf(rel.numerator) / rel.denominator)
        if x < 0 or (x != 0 and not mpmath.mpf(10) ** -250 < x < mpmath.mpf(10) ** 250):
            return None
        return Fraction(mpmath.nstr(x, 30, min_fixed=-mpmath.inf, max_fixed=mpmath.inf)) if x != 0 else Fraction(0)


def _off(off: Fraction) -> str:
    if off == 0:
        return ""
    return f" {'+' if off > 0 else '-'} 1e-{len(str(abs(off).denominator)) - 1}"


def _rel(rel: Fraction) -> str:
    return f" x (1 {'+' if rel > 0 else '-'} {float(abs(rel)):g})"


def renyi_claims(ref: DivReference, draw: Any, st: Any) -> list[DivClaim]:
    eps0 = ref.case.grid[0]
    alpha = draw(st.sampled_from([Fraction(2), Fraction(2), Fraction(3), Fraction(3, 2), Fraction(3, 2), Fraction(5),
                                  Fraction(5, 4)]))
    pairs = ref.pair_laws(eps0)
    top = dv.renyi_max(pairs, alpha)
    # (the first choice is what hypothesis draws for its simplest case: a cheap one)
    kind = draw(st.sampled_from(["relative", "exact", "exact", "relative", "linear"]))
    if top == dv.INF:
        kind = "linear"
    if kind == "exact" and alpha.denominator == 1:
        k = int(alpha)
        s = dv.renyi_top_sum(pairs, k)
        off = draw(st.sampled_from([Fraction(0), Fraction(0), TINY, -TINY]))
        if s is None:  # no pairs with distinct laws: D = 0
            return [DivClaim("renyi", alpha, Level(const=max(off, Fraction(0))), label=f"D_{alpha} = 0{_off(off)}")]
        level = Level(const=off, log_of=s, mult=Fraction(1, k - 1))
        if off < 0 and s <= Q.exp(-off * (k - 1)):
            off = -off
            level = Level(const=off, log_of=s, mult=Fraction(1, k - 1))
        if level.size() <= MAX_EXACT_SOURCE:
            return [DivClaim("renyi", alpha, level, label=f"D_{alpha} exact{_off(off)}")]
        kind = "relative"
    if kind in ("exact", "relative"):
        rel = draw(st.sampled_from(RELATIVE))
        value = _near(dv._lo(top), rel)
        if value is None:
            return []
        return [DivClaim("renyi", alpha, Level(const=value), label=f"D_{alpha}{_rel(rel)}")]
    coef, power = draw(st.sampled_from([(Fraction(1, 2), 1), (Fraction(1), 1), (Fraction(2), 1),
                                        (Fraction(1, 2), 2), (Fraction(1, 4), 2), (Fraction(10**4), 0)]))
    if power == 0:
        return [DivClaim("renyi", alpha, Level(const=coef), label=f"D_{alpha} <= {coef}")]
    return [DivClaim("renyi", alpha, Level(coef=coef, power=power), label=f"D_{alpha} <= {coef}*eps^{power}")]


def zcdp_claims(ref: DivReference, draw: Any, st: Any) -> list[DivClaim]:
    eps0 = ref.case.grid[0]
    b = ref.bracket(eps0)
    kind = draw(st.sampled_from(["below", "above", "below", "above", "linear"]))
    if b.lower == dv.INF:
        kind = "linear"
    if kind == "below":
        rel = draw(st.sampled_from([-Fraction(1, 10**6), -Fraction(1, 100)]))
        value = _near(b.lower, rel)
        if value is None or b.lower == 0:
            return []
        return [DivClaim("zcdp", level=Level(const=value), label=f"rho_lower{_rel(rel)}")]
    if kind == "above":
        rel = draw(st.sampled_from([Fraction(1, 10**6), Fraction(1, 100)]))
        value = _near(b.upper, rel)
        if value is None:
            return []
        return [DivClaim("zcdp", level=Level(const=value), label=f"rho_upper{_rel(rel)}")]
    coef, power = draw(st.sampled_from([(Fraction(1, 8), 2), (Fraction(1, 2), 2), (Fraction(1), 2),
                                        (Fraction(1, 2), 1), (Fraction(1), 1), (Fraction(0), 0)]))
    if power == 0:
        return [DivClaim("zcdp", level=Level(), label="rho = 0")]
    return [DivClaim("zcdp", level=Level(coef=coef, power=power), label=f"rho <= {coef}*eps^{power}")]


def _at_levels(ref: DivReference, times: int) -> list[tuple[Level, str]]:
    eps0 = ref.case.grid[0]
    out = [(Level(), "0"), (Level(const=Fraction(1, 2)), "1/2"), (Level(const=Fraction(1)), "1"),
           (Level(coef=Fraction(1)), "eps"), (Level(coef=Fraction(1, 2)), "eps/2"), (Level(coef=Fraction(2)), "2*eps")]
    best = privacy.achieved(ref.base.laws(eps0), ref.base.pairs)
    if not best.infinite and best.ratio > 1:  # ties: the pure loss, once and T times
        out.append((Level(log_of=best.ratio, mult=Fraction(times)), f"{times}*eps_achieved"))
        if times > 1:
            out.append((Level(log_of=best.ratio), "eps_achieved"))
    return out


def profile_claims(ref: DivReference, draw: Any, st: Any) -> list[DivClaim]:
    eps0 = ref.case.grid[0]
    also = 1 if ("other" in ref.base.namespace and draw(st.booleans())) else 0
    times = draw(st.sampled_from([1, 2, 2, 3, 3] if not also else [1, 2]))
    while times > 1 and ref.composition_size(eps0, times, also) > MAX_TERMS:
        times -= 1
    if ref.composition_size(eps0, times, also) > MAX_TERMS:
        STATS["profile claim skipped (too many terms)"] += 1
        return []
    comps = ref.compositions(eps0, times, also)
    levels = _at_levels(ref, times)
    chosen = [draw(st.sampled_from(levels)) for _ in range(draw(st.sampled_from([1, 1, 2])))]
    kind = draw(st.sampled_from(["exact", "exact", "relative", "relative", "fixed"]))
    off = draw(st.sampled_from([Fraction(0), Fraction(0), TINY, -TINY]))
    rel = draw(st.sampled_from(RELATIVE))
    fixed = draw(st.sampled_from([Fraction(1, 10), Fraction(1, 1000), Fraction(0)]))
    ats, deltas, labels = [], [], []
    for at, at_label in chosen:
        w_exact = at.exp_exact(eps0, Fraction(1))
        if kind == "fixed":
            delta, how = Level(const=fixed), str(fixed)
        else:
            value = dv.profile_value(comps, _w_iv(at, eps0, w_exact), w_exact)
            if value is None:
                return []
            delta = None
            if kind == "exact" and w_exact is not None:
                exact = dv.profile_exact(comps, w_exact)
                total = exact + off
                if total.sign() >= 0 and total <= 1:
                    delta, how = Level(const=off, exact_q=exact), f"delta exact{_off(off)}"
                    if delta.size() > MAX_EXACT_SOURCE:
                        delta = None
            if delta is None:
                near = _near(dv._lo(value), rel)
                if near is None:
                    return []
                near = min(near, Fraction(1))
                delta, how = Level(const=near), f"delta{_rel(rel)}"
        ats.append(at)
        deltas.append(delta)
        labels.append(f"delta_{times}({at_label}) <= {how}")
    label = "; ".join(labels) + (f" (with other x {also})" if also else "")
    return [DivClaim("profile", at=tuple(ats), deltas=tuple(deltas), times=times, also=also, label=label)]


def claims_for(ref: DivReference, draw: Any, st: Any,
               kinds: tuple[str, ...] = ("renyi", "zcdp", "profile")) -> list[DivClaim]:
    """One to three claims of the ``kinds``, drawn with hypothesis ``draw`` around the reference's values
    at the first grid point."""
    out: list[DivClaim] = []
    makers = {"renyi": renyi_claims, "zcdp": zcdp_claims, "profile": profile_claims}
    for _ in range(draw(st.integers(1, 3))):
        out += makers[draw(st.sampled_from(kinds))](ref, draw, st)
    return out


# ----- judging dpverify's report ---------------------------------------------------------------------


def _point_eps(params: dict) -> Optional[Fraction]:
    value = params.get("eps")
    return None if value is None else Fraction(value)


def _beyond_grid_eps(message: str) -> Optional[Fraction]:
    m = re.search(r"fails (?:for|at) eps = (?:\S+ = )?([-+0-9.eE]+)", message)
    return Fraction(Decimal(m.group(1))) if m else None


def _reason(message: str) -> str:
    return re.sub(r"[0-9]+", "N", re.sub(r"\S*fuzz_case\.py:[0-9]+: ", "", message))[:110]


def compare(case: DivCase, ref: DivReference, report: Any) -> list[Finding]:
    findings: list[Finding] = []
    specs = report.specs
    if not specs or specs[0].error:
        STATS["load error"] += 1
        REASONS[f"load error: {_reason(specs[0].error) if specs else 'no spec'}"] += 1
        if specs and "delta=" in specs[0].error and "must lie in [0, 1" in specs[0].error:
            # every delta drawn lies in [0, 1] (exact values are checked when drawn)
            findings.append(Finding("valid delta refused", "the spec", "-", "error", "every claimed delta is in [0, 1]",
                                    specs[0].error[:600]))
        return findings
    by_id = {f"c{i}": c for i, c in enumerate(case.claims)}
    order = privacy.order_dependent(ref.base.laws(case.grid[0]), ref.data) if case.symmetric else None
    for result in specs[0].claims:
        claim = by_id[result.claim_id]
        for point in result.points:
            status = point.status.value
            STATS[f"{claim.kind} {status}"] += 1
            if status in ("unknown", "error"):
                REASONS[f"{claim.kind} {status}: {_reason(point.message)}"] += 1
            if status == "error" and "internal error" in point.message:
                findings.append(Finding("internal error", f"{result.claim_id} ({claim.kind}: {claim.label})",
                                        str(point.params), status, "a well-formed claim", point.message[:600]))
            eps = _point_eps(point.params)
            if eps is None or status == "error":
                continue
            label = f"{result.claim_id} ({claim.kind}: {claim.label}) at eps={eps}"
            if status == "unknown":  # no verdict to judge, but the achieved value it reports must be right
                mismatch = _achieved_mismatch(ref, claim, eps, point)
                if mismatch:
                    findings.append(Finding("achieved value differs", label, str(eps), status, mismatch,
                                            point.message[:600]))
                continue
            findings += _judge(case, ref, claim, eps, status, point, label, order)
    return findings


def _judge(case: DivCase, ref: DivReference, claim: DivClaim, eps: Fraction, status: str, point: Any,
           label: str, order: Optional[tuple]) -> list[Finding]:
    out: list[Finding] = []
    truth = ref.holds(claim, eps)
    if truth is None:
        STATS[f"{claim.kind} reference undecided"] += 1

    def add(category: str, truth_text: str) -> None:
        out.append(Finding(category, label, str(eps), status, truth_text, point.message[:600]))

    if status in ("proved", "verified"):
        if truth is False:
            add("false " + status, "false at this grid point")
        elif not ref.base.pairs:
            add("no neighbouring pairs accepted", "vacuous: the universe has no pairs")
        elif order is not None:
            add("symmetric=True not checked", f"orderings {order[0]!r} and {order[1]!r} have different laws")
    if status == "proved":
        if case.branches_on_eps:
            add("proof of a program that branches on eps", "unknown for every eps (the program branches on eps)")
        else:
            bad = next((s for s in FOR_ALL_SAMPLES if _safe_holds(ref, claim, s) is False), None)
            if bad is not None:
                add("false proof for every eps", f"false at eps={bad}")
    if status == "refuted":
        star = _beyond_grid_eps(point.message)
        if truth is True:
            if star is None:
                add("false refutation", "true at this grid point")
            else:
                samples = [star] + ([] if case.branches_on_eps else list(FOR_ALL_SAMPLES))
                if not any(_safe_holds(ref, claim, s) is False for s in samples if s > 0):
                    add("unconfirmed refutation beyond the grid", f"true at eps={star} and at the samples")
        if star is None and point.witness is not None:
            out += _witness(ref, claim, eps, point, add)
    if status != "error":
        mismatch = _achieved_mismatch(ref, claim, eps, point)
        if mismatch:
            add("achieved value differs", mismatch)
    return out


def _safe_holds(ref: DivReference, claim: DivClaim, eps: Fraction) -> Optional[bool]:
    try:
        return ref.holds(claim, eps)
    except REFERENCE_LIMITS:
        return None


def _order(text: str) -> Optional[Fraction]:
    m = re.search(r"order alpha = ([0-9/]+)", str(text))
    return Fraction(m.group(1)) if m else None


def _witness(ref: DivReference, claim: DivClaim, eps: Fraction, point: Any, add: Any) -> list:
    """A refutation's witness pair must itself violate the claim (at the witness's order for zCDP)."""
    w = point.witness
    try:
        x, x_prime = tuple(w.x), tuple(w.x_prime)
        if x not in ref.data or x_prime not in ref.data:
            add("witness outside the universe", f"{x!r}, {x_prime!r}")
            return []
        i, j = ref.data.index(x), ref.data.index(x_prime)
        if (i, j) not in ref.base.pairs:
            add("witness pair not neighbours", f"{x!r}, {x_prime!r}")
            return []
        alpha = _order(w.output) if claim.kind == "zcdp" else None
        if claim.kind == "zcdp" and alpha is None:
            return []
        holds = ref.pair_holds(claim, eps, x, x_prime, alpha)
    except REFERENCE_LIMITS:
        return []
    if holds is True:
        add("witness does not violate the claim", f"the claim holds on {x!r}, {x_prime!r}"
            + (f" at alpha = {alpha}" if alpha is not None else ""))
    if claim.kind in ("renyi", "zcdp"):
        wrong = _witness_value(ref, eps, i, j, alpha if alpha is not None else claim.alpha, w.p, point.message)
        if wrong:
            add("witness value differs", wrong)
    return []


def _witness_value(ref: DivReference, eps: Fraction, i: int, j: int, alpha: Fraction, shown: str,
                   message: str) -> Optional[str]:
    """A divergence witness states D_alpha(M(X) || M(X')): "inf" exactly when it is infinite, an enclosure
    "[a, b]" that must hold it, a lower end (the message says ">= p") that must not exceed it, or else its
    value (relative 1e-20)."""
    try:
        laws = ref.base.laws(eps)
        value = dv.adaptive(lambda bits: dv.PairLaw(laws[i], laws[j]).renyi(alpha, bits))
    except REFERENCE_LIMITS:
        return None
    said = f"the witness says D_{alpha}(M(X) || M(X')) {'>=' if f'>= {shown}' in message else '='} {shown}"
    if value is dv.INF or shown == "inf":
        return None if value is dv.INF and shown == "inf" else f"{said}, exactly {value}"
    rel = mpmath.mpf(10) ** -20
    with mpmath.workdps(60):
        lo, hi = dv._lo(value), dv._hi(value)
        exact = f"{said}, exactly {mpmath.nstr(lo, 25)}"
        if shown.startswith("["):
            a, b = (mpmath.mpf(s) for s in shown.strip("[]").split(","))
            return None if a * (1 - rel) <= hi and lo <= b * (1 + rel) else exact
        got = mpmath.mpf(shown)
        if f">= {shown}" in message:
            return None if got <= hi * (1 + rel) else exact
        return None if lo * (1 - rel) <= got <= hi * (1 + rel) else exact


def _achieved_mismatch(ref: DivReference, claim: DivClaim, eps: Fraction, point: Any) -> Optional[str]:
    """The achieved value in dpverify's evidence against the reference's.  What each claims: a Rényi
    ``achieved`` is D_alpha's value or the upper end of its interval (never below D_alpha, close to it
    in absolute terms); a zCDP ``achieved`` marked ``lower_bound`` is at most the supremum (relative
    1e-20: it says "at least"), otherwise it is the supremum; a profile row's ``achieved`` is a pinned
    value (relative 1e-20), ``achieved_lower``/``achieved_upper`` certified bounds."""
    ev = point.evidence
    rel, absolute = mpmath.mpf(10) ** -20, mpmath.mpf(10) ** -25
    try:
        if claim.kind == "renyi" and getattr(ev, "achieved", None) is not None:
            top = dv.renyi_max(ref.pair_laws(eps), claim.alpha)
            got = ev.achieved
            if got == "inf" or top == dv.INF:
                return None if got == "inf" and top == dv.INF else f"reference {top}, dpverify {got}"
            with mpmath.workdps(60):
                lo, hi, g = dv._lo(top), dv._hi(top), mpmath.mpf(got)
                if g < lo * (1 - rel) or g > hi + absolute * (1 + hi):
                    return f"D_{claim.alpha}: reference {mpmath.nstr(lo, 40)}, dpverify {got}"
        elif claim.kind == "zcdp" and getattr(ev, "achieved", None) is not None:
            b = ref.bracket(eps)
            got = ev.achieved
            if got == "inf" or b.upper == dv.INF:
                return None if got == "inf" and b.upper == dv.INF else f"reference {b.upper}, dpverify {got}"
            with mpmath.workdps(60):
                g = mpmath.mpf(got)
                if ev.lower_bound and g > b.upper * (1 + rel):
                    return (f"rho at least {got} (a lower bound, at alpha = {ev.alpha}) above the reference's upper "
                            f"bound {mpmath.nstr(b.upper, 30)} (bracket [{mpmath.nstr(b.lower, 30)}, "
                            f"{mpmath.nstr(b.upper, 30)}])")
                if not ev.lower_bound and not b.lower * (1 - rel) <= g <= b.upper * (1 + rel):
                    return f"rho {got} outside the reference's bracket [{b.lower}, {b.upper}]"
        elif claim.kind == "profile" and getattr(ev, "rows", None):
            comps = ref.compositions(eps, claim.times, claim.also)
            for at, row in zip(claim.at, ev.rows):
                w_exact = at.exp_exact(eps, Fraction(1))
                value = dv.profile_value(comps, _w_iv(at, eps, w_exact), w_exact)
                if value is None:
                    continue
                with mpmath.workdps(60):
                    lo, hi = dv._lo(value), dv._hi(value)
                    if row.achieved is not None:
                        g = mpmath.mpf(row.achieved)
                        if g < lo * (1 - rel) - mpmath.mpf(10) ** -300 or g > hi * (1 + rel) + mpmath.mpf(10) ** -300:
                            return f"delta_{claim.times}({row.epsilon}): reference {mpmath.nstr(lo, 40)}, dpverify {g}"
                    elif row.achieved_lower is not None:
                        a, b = mpmath.mpf(row.achieved_lower), mpmath.mpf(row.achieved_upper)
                        if hi < a * (1 - rel) or lo > b * (1 + rel):
                            return (f"delta_{claim.times}({row.epsilon}): reference {mpmath.nstr(lo, 40)} outside "
                                    f"dpverify's [{a}, {b}]")
    except REFERENCE_LIMITS:
        return None
    return None
