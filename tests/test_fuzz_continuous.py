"""Differential fuzzing of continuous noise inside programs: dpverify against tests/reference/continuous.py.

The generator makes programs as data (tests/reference/continuous.py: Laplace and exponential draws on
query answers, shifted noisy values compared with each other, with constants (x > c, c < x, x - 1 >= c,
<=/>=) and with themselves,
argmax/argmin loops with and without skipping self, sparse vector loops, probes of a noisy value by
``str``/``hash``/``id``/``type``/``isinstance``/``repr``/f-strings, discrete outputs and leaks), tiny
universes (answer vectors in {0, 1}^m under linf/l1, datasets of 1-3 records from {0, 1} under
replace-one/add-remove), a grid point eps, and claims around the values the reference computes:
``private`` at, above and below the achieved eps, ``probability(output == o, at_most=/at_least=)`` at,
above and below max/min over datasets, and ``same_distribution`` against a twin (same law, written
differently) or a perturbed program.

The reference computes each law by quadrature (at most two noise variables here: the innermost in
closed form, the outer with mpmath.quad split at every kink; errors ~1e-20) or by seeded Monte Carlo
with Clopper-Pearson bands (more variables; error probability 1e-9 per case).  A claim is judged only
when the reference decides it with margin.  No ``proved``/``verified`` may be false, no ``refuted``
true; ``error`` and ``unknown`` are allowed (a refused probe is correct) and counted.  Set
DPVERIFY_FUZZ_STATS=FILE for the distribution.

Every case also gets a sweep: tight true bounds (1e-9 relative, 1e-11 absolute) on P(output == o) on single
datasets (``output == o and tuple(data) == d`` at_most, ``output == o or tuple(data) != d`` at_least), on each
side of the reference's value, so that any change of a law beyond the margin refutes a true claim.

Default: ``default_cases()``, 60 cases from fixed seeds (a seeded ``random.Random`` drives the same generator
that hypothesis drives in the long run: hypothesis's first examples are minimal extensions of one another,
and 120 of its draws held 83 distinct programs, many near-duplicates).  The same cases are replayed against
deliberately broken engines by tests/test_fuzz_continuous_mutants.py, each of which must be caught.
``pytest -m fuzz_long`` runs many more (hypothesis, and 1500 further seeds).
"""
from __future__ import annotations

import functools
import json
import os
import random
import re
import tempfile
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction as F
from pathlib import Path
from typing import Any, Optional

import mpmath
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.reference import continuous as C

STATS: Counter = Counter()
REASONS: Counter = Counter()
MC_SAMPLES = 6000
ALPHA = 1e-9  # the Monte-Carlo error probability of one case (split over its outputs and datasets)
MARGIN = mpmath.mpf(10) ** -12  # quadrature verdicts need at least this margin (errors are ~1e-20)

HEADER = """\
from fractions import Fraction
import sympy
from sympy import Rational
import dpverify as dp

eps = dp.symbol("eps", positive=True)
"""


# ---------------------------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Claim:
    kind: str  # "private", "prob_at_most", "prob_at_least", "same"
    value: Any = None  # private: the coefficient r of r*eps (Fraction); prob: the bound (Fraction)
    output: Any = None  # prob: the event is output == this
    label: str = ""
    dataset: Optional[tuple] = None  # prob: on this dataset alone (None: on every dataset)

    def render(self, i: int) -> str:
        if self.kind == "private":
            r = F(self.value)
            return f"dp.private(Rational({r.numerator}, {r.denominator}) * eps, id='c{i}')"
        if self.kind == "same":
            return f"dp.same_distribution(other, id='c{i}')"
        word = "at_most" if self.kind == "prob_at_most" else "at_least"
        b = F(self.value)
        event = f"output == {self.output!r}"
        if self.dataset is not None:  # elsewhere the event is impossible (at_most) or certain (at_least)
            event = (f"{event} and tuple(data) == {self.dataset!r}" if self.kind == "prob_at_most" else
                     f"{event} or tuple(data) != {self.dataset!r}")
        bound = f"Rational({b.numerator}, {b.denominator})"
        return f"dp.probability(lambda data, output: {event}, {word}={bound}, id='c{i}')"


@dataclass
class Case:
    prog: Any
    universe: C.Universe
    eps: F
    claims: list = field(default_factory=list)
    other: Any = None  # the program of a same_distribution claim
    other_same: Optional[bool] = None  # the generator's construction: a twin (True) or perturbed (False)
    shapes: tuple = ()

    def render(self) -> str:
        src = HEADER + "\n\n" + C.render_mech(self.prog, self.universe)
        if self.other is not None:
            src += "\n\n" + C.render_mech(self.other, self.universe, "other")
        claims = ",\n        ".join(c.render(i) for i, c in enumerate(self.claims))
        return (src + f"\n\nspec = dp.spec(\n    mech,\n    universe={self.universe.render()},\n"
                f"    grid={{eps: [Rational({self.eps.numerator}, {self.eps.denominator})]}},\n"
                f"    claims=[\n        {claims},\n    ],\n)\n")


# ---------------------------------------------------------------------------------------------
# the reference's view of a case
# ---------------------------------------------------------------------------------------------

class Reference:
    def __init__(self, case: Case) -> None:
        self.case = case
        self.pairs = case.universe.pairs()
        self.datasets = case.universe.datasets()
        self._cache: dict = {}

    def exact(self, prog: Any) -> bool:
        return len(prog.noise()) <= C.MAX_QUAD_VARIABLES

    def law(self, prog: Any, d: tuple, eps: F) -> Any:
        ans = self.case.universe.answers(d)
        key = (id(prog), ans, eps)
        if key not in self._cache:
            if self.exact(prog):
                self._cache[key] = C.law_quadrature(prog, ans, eps)
            else:
                budget = ALPHA / (4 * 8 * max(1, len(self.datasets)))  # <= 8 outputs, 2 programs, 2 bands
                seed = zlib.crc32(repr((prog, ans, eps)).encode())
                self._cache[key] = C.law_monte_carlo(prog, ans, eps, MC_SAMPLES, seed, budget)
        return self._cache[key]

    def laws(self, prog: Any, eps: F) -> dict:
        return {d: self.law(prog, d, eps) for d in self.datasets}

    def achieved(self, eps: F) -> tuple:
        return C.achieved_band(self.laws(self.case.prog, eps), self.pairs)

    def outputs(self, eps: F) -> list:
        outs: set = set()
        for law in self.laws(self.case.prog, eps).values():
            outs |= set(C._outputs(law))
        return sorted(outs, key=repr)

    def prob_band(self, o: Any, eps: F, worst: str, dataset: Optional[tuple] = None) -> tuple:
        """Band of max (worst="max") or min over datasets (or on ``dataset``) of P(output == o)."""
        laws = self.laws(self.case.prog, eps)
        bands = [law.interval(o) for d, law in laws.items() if dataset is None or d == dataset]
        pick = max if worst == "max" else min
        return pick(b[0] for b in bands), pick(b[1] for b in bands)

    def truth(self, claim: Claim, eps: F) -> Optional[bool]:
        """True/False when the reference decides the claim with margin, None otherwise."""
        exact = self.exact(self.case.prog)
        margin = MARGIN if exact else mpmath.mpf(0)
        if claim.kind == "private":
            lo, hi = self.achieved(eps)
            bound = C._mp(F(claim.value) * eps)
            if hi <= bound - margin:
                return True
            if lo > bound + margin:
                return False
            return None
        if claim.kind in ("prob_at_most", "prob_at_least"):
            lo, hi = self.prob_band(claim.output, eps, "max" if claim.kind == "prob_at_most" else "min", claim.dataset)
            b = C._mp(F(claim.value))
            exact_point = lo == hi  # a structural 0 or 1
            m = mpmath.mpf(0) if exact_point else margin
            if claim.kind == "prob_at_most":
                return True if hi <= b - m or (exact_point and hi <= b) else (False if lo > b + m else None)
            return True if lo >= b + m or (exact_point and lo >= b) else (False if hi < b - m else None)
        if claim.kind == "same":
            return self.same(eps)
        raise ValueError(claim.kind)

    def same(self, eps: F) -> Optional[bool]:
        other = self.case.other
        both_exact = self.exact(self.case.prog) and self.exact(other)
        worst = mpmath.mpf(0)
        for d in self.datasets:
            a, b = self.law(self.case.prog, d, eps), self.law(other, d, eps)
            for o in set(C._outputs(a)) | set(C._outputs(b)):
                (alo, ahi), (blo, bhi) = a.interval(o), b.interval(o)
                if alo > bhi + (MARGIN if both_exact else 0) or blo > ahi + (MARGIN if both_exact else 0):
                    if self.case.other_same:
                        raise AssertionError(f"reference: the twin differs on {d} at {o!r}")
                    return False
                if both_exact:
                    worst = max(worst, abs((alo + ahi) / 2 - (blo + bhi) / 2))
        if both_exact:
            return True if worst < MARGIN else None
        return True if self.case.other_same else None  # Monte Carlo: the construction, not contradicted


# ---------------------------------------------------------------------------------------------
# generation
# ---------------------------------------------------------------------------------------------

class Chooser:
    """The generator's choices: drawn by hypothesis (``draw``: the long run) or by a seeded ``random.Random``
    (``rng``: the default run, whose cases differ from each other, while hypothesis's first examples
    are minimal extensions of one another)."""

    def __init__(self, draw: Any = None, rng: Optional[random.Random] = None) -> None:
        self.draw, self.rng = draw, rng

    def one(self, options: Any) -> Any:
        options = list(options)
        return self.draw(st.sampled_from(options)) if self.draw else self.rng.choice(options)

    def int(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi)) if self.draw else self.rng.randint(lo, hi)

    def bool(self) -> bool:
        return self.draw(st.booleans()) if self.draw else self.rng.random() < 0.5


EPS = [F(1, 2), F(1), F(2)]
SCALES = [F(1), F(2), F(1, 2), F(4)]
SHIFTS = [F(0), F(0), F(1), F(-1), F(1, 2)]
CMP = ["<", "<=", ">", ">="]
CONST_PATHS = [(), (), (F(-1),), (F(-1, 2),), (F(1, 2),), (F(1),), (F(2), F(-1)), (F(-3, 2),)]  # x - 1, x + 1/2, ...
CONSTS = [F(0), F(0), F(1), F(-1), F(1, 2), F(3, 2), F(2), F(-1, 2)]


def make_universe(ch: Chooser, m: int) -> C.Universe:
    if ch.bool():
        return C.Universe("answers", m=m, relation=ch.one(["linf", "linf", "l1"]))
    sizes = ch.one([(1,), (2,), (1, 2), (3,)])
    relation = "addremove" if len(sizes) > 1 else "replace"
    queries = tuple(ch.one(sorted(C.QUERIES)) for _ in range(m))
    return C.Universe("data", sizes=sizes, relation=relation, queries=queries)


def make_draw(ch: Chooser, slots: int, kind: Optional[str] = None) -> C.Draw:
    slot = ch.one(list(range(slots)) + [None]) if slots else None
    return C.Draw(kind or ch.one(["laplace", "exponential"]), slot, ch.one(SHIFTS), ch.one(SCALES))


def make_term(ch: Chooser, k: int, consts: bool = True) -> Any:
    if consts and ch.int(0, 3) == 0:
        return C.Const(ch.one([F(0), F(1), F(-1), F(1, 2), F(3, 2)]))
    path = ch.one([(), (), (), (F(1), F(-1)), (F(0),), (F(1, 2),), (F(-1),), (F(2), F(-1))])
    return C.Var(ch.int(0, k - 1), path)


def make_cond(ch: Chooser, k: int, probes: bool) -> Any:
    r = ch.int(0, 15)
    if r >= 11 or (r >= 8 and k == 1):
        # one noisy value, shifted or not (x - 1, x + 1/2), against a constant, on either side (swap: c < x)
        left = C.Var(ch.int(0, k - 1), ch.one(CONST_PATHS))
        return C.Cmp(left, ch.one(CMP), C.Const(ch.one(CONSTS)), ch.bool())
    if r >= 8:  # two noisy values, shifted on both sides
        a = ch.int(0, k - 1)
        b = ch.one([v for v in range(k) if v != a])
        return C.Cmp(C.Var(a, ch.one(CONST_PATHS[2:])), ch.one(CMP), C.Var(b, ch.one(CONST_PATHS)), ch.bool())
    if probes and r == 0:
        return C.Probe(ch.one(sorted(C.PROBES)), ch.int(0, k - 1))
    if r in (1, 4):  # a value against itself, possibly shifted
        v = ch.int(0, k - 1)
        p1 = ch.one([(), (F(1), F(-1)), (F(0),), (F(1),), (F(-1, 2),)])
        p2 = ch.one([(), (F(2), F(-2)), (F(1),)])
        return C.Cmp(C.Var(v, p1), ch.one(sorted(C.OPS)), C.Var(v, p2), ch.bool())
    if r == 2:
        return C.Not(make_cond(ch, k, probes))
    if r == 3:
        return C.And(make_cond(ch, k, probes), make_cond(ch, k, probes), ch.one(["and", "or"]))
    left = make_term(ch, k, consts=False)
    ops = CMP + (["==", "!="] if ch.int(0, 4) == 0 else [])
    return C.Cmp(left, ch.one(ops), make_term(ch, k), ch.bool())


def make_program(ch: Chooser, slots: int, probes: bool) -> tuple:
    """(program, shapes)."""
    shape = ch.one(["straight", "straight", "straight", "argmax", "argmax", "svt"])
    if shape == "argmax":
        variant = ch.one(sorted(C.ARGMAX_VARIANTS))
        kind = ch.one(["laplace", "exponential"])
        m = ch.int(2, 3)
        scale = ch.one(SCALES)
        ds = tuple(C.Draw(kind, i % slots, F(0), scale) for i in range(m))
        return C.ArgMax(ds, variant), (f"argmax:{variant}", kind, f"m={m}")
    if shape == "svt":
        m = ch.int(1, 2)
        t = C.Draw("laplace", None, ch.one([F(1, 2), F(1), F(0)]), ch.one(SCALES))
        qs = tuple(C.Draw("laplace", i % slots, F(0), ch.one(SCALES)) for i in range(m))
        variant = ch.one(C.SVT_VARIANTS)
        return C.SVT((t,) + qs, ch.int(1, 2), variant), (f"svt:{variant}", f"m={m}")
    k = ch.one([1, 2, 2, 2, 3])  # at most two: the quadrature's exact laws (three: Monte Carlo bands)
    ds = tuple(make_draw(ch, slots) for _ in range(k))
    n = ch.int(1, 3)
    tuple_out = ch.int(0, 3) == 0
    branches = []
    for i in range(n):
        c = make_cond(ch, k, probes)
        out = ("leak", ch.int(0, slots - 1)) if ch.int(0, 4) == 0 else i + 1
        branches.append((c, out))
    prog = C.Straight(ds, tuple(branches), 0, tuple_out)
    kinds = {type(c).__name__ for c, _ in branches}
    probe_names = tuple(f"probe:{c.kind}" for c, _ in branches if isinstance(c, C.Probe))
    self_cmp = any(isinstance(c, C.Cmp) and isinstance(c.left, C.Var) and isinstance(c.right, C.Var)
                   and c.left.var == c.right.var for c, _ in branches)
    return prog, ("straight", f"k={k}", *sorted(kinds), *probe_names, *(("self-compare",) if self_cmp else ()))


def twin(prog: Any) -> Any:
    """The same law, written differently."""
    if isinstance(prog, C.ArgMax):
        argmax = C.ARGMAX_VARIANTS[prog.variant][1]
        same = sorted(v for v, (_, a) in C.ARGMAX_VARIANTS.items() if a == argmax and v != prog.variant)
        return C.ArgMax(prog.draws, same[len(prog.variant) % len(same)])
    if isinstance(prog, C.SVT):
        others = [v for v in C.SVT_VARIANTS if v != prog.variant]
        return C.SVT(prog.draws, prog.cutoff, others[prog.cutoff % len(others)])
    flip = lambda c: (replace(c, swap=not c.swap) if isinstance(c, C.Cmp) else c)  # noqa: E731
    return replace(prog, branches=tuple((flip(c), o) for c, o in prog.branches))


def perturbed(prog: Any) -> Any:
    """A program whose law differs (on some dataset, unless the change is invisible)."""
    if isinstance(prog, C.ArgMax):
        argmax = C.ARGMAX_VARIANTS[prog.variant][1]
        return C.ArgMax(prog.draws, "running_lt_min" if argmax else "running_gt")
    if isinstance(prog, C.SVT):
        t = prog.draws[0]
        return C.SVT((replace(t, shift=t.shift + 1),) + prog.draws[1:], prog.cutoff, prog.variant)
    d = prog.draws[0]
    return replace(prog, draws=(replace(d, scale=d.scale * 2),) + prog.draws[1:])


def _near(x: Any, rel: str) -> F:
    """A rational near the real x: just above/below (1e-9 relative) or 10% away; "tight above"/"tight below":
    1e-9 relative and 1e-11 absolute (a margin the quadrature's verdicts can take, 1e-12)."""
    q = F(Decimal(mpmath.nstr(x, 25, strip_zeros=False)))
    if rel.startswith("tight"):
        return q + (1 if rel == "tight above" else -1) * (abs(q) / 10**9 + F(1, 10**11))
    bump = {"just above": F(1, 10**9), "just below": F(-1, 10**9), "above": F(1, 10), "below": F(-1, 10)}[rel]
    return q + abs(q) * bump + (bump / 1000 if q == 0 else 0)


def make_claims(ch: Chooser, ref: Reference) -> list:
    case = ref.case
    eps = case.eps
    out: list = []
    for _ in range(ch.int(1, 3)):
        kind = ch.one(["private", "private", "private_fixed", "prob", "prob"])
        if kind == "private_fixed":
            r = ch.one([F(1, 2), F(1), F(2), F(3)])
            out.append(Claim("private", r, label=f"{r}*eps"))
        elif kind == "private":
            lo, hi = ref.achieved(eps)
            if hi == mpmath.inf or lo == -mpmath.inf:
                continue
            rel = ch.one(["just above", "just below", "above", "below"])
            value = _near(lo if "below" in rel else hi, rel) / eps
            if value < 0:
                continue
            out.append(Claim("private", value, label=f"achieved {rel}"))
        else:
            outs = ref.outputs(eps)
            o = ch.one(outs + [-1])  # -1: argmax's "no index", often impossible
            most = ch.bool()
            lo, hi = ref.prob_band(o, eps, "max" if most else "min")
            rel = ch.one(["exact", "just above", "just below", "above", "below"])
            if rel == "exact":
                if lo != hi:
                    continue
                b = F(int(lo))
            else:
                b = _near(lo if "below" in rel else hi, rel)
            b = min(max(b, F(0)), F(1))
            out.append(Claim("prob_at_most" if most else "prob_at_least", b, o, label=f"P[output == {o!r}] {rel}"))
    out += sweep(ref, ch.int(0, 10**6))
    if case.other is not None:
        out.append(Claim("same", label="same_distribution"))
    return out


SWEEP = 8  # (dataset, output) pairs per sweep


def sweep(ref: Reference, start: int) -> list:
    """Tight true bounds on P(output == o) on single datasets, each side of the reference's value (exact when it
    is a structural 0 or 1): any change of the law beyond the margin refutes one of them.  SWEEP pairs spread over
    all (dataset, output) pairs, chosen by the seed ``start``."""
    eps = ref.case.eps
    laws = ref.laws(ref.case.prog, eps)
    pairs = [(d, o) for d in ref.datasets for o in ref.outputs(eps)]
    out = []
    for d, o in random.Random(start).sample(pairs, min(SWEEP, len(pairs))):
        lo, hi = laws[d].interval(o)
        if lo == hi:  # a structural 0 or 1
            out.append(Claim("prob_at_most" if lo == 0 else "prob_at_least", F(int(lo)), o,
                             label=f"P[output == {o!r}] = {int(lo)} on {d}", dataset=d))
            continue
        if hi < 1:
            out.append(Claim("prob_at_most", min(_near(hi, "tight above"), F(1)), o,
                             label=f"P[output == {o!r}] tight above on {d}", dataset=d))
        if lo > 0:
            out.append(Claim("prob_at_least", max(_near(lo, "tight below"), F(0)), o,
                             label=f"P[output == {o!r}] tight below on {d}", dataset=d))
    return out


def make_case(ch: Chooser, probes: bool = True) -> Case:
    slots = ch.int(1, 3)
    universe = make_universe(ch, slots)
    prog, shapes = make_program(ch, slots, probes)
    eps = ch.one(EPS)
    case = Case(prog, universe, eps, shapes=(*shapes, universe.kind, universe.relation))
    if ch.int(0, 3) == 0:
        same = ch.bool()
        case.other, case.other_same = (twin(prog) if same else perturbed(prog)), same
        other = case.other
        tag = (f"argmax:{other.variant}" if isinstance(other, C.ArgMax) else
               f"svt:{other.variant}" if isinstance(other, C.SVT) else "straight")
        case.shapes = (*case.shapes, tag)  # a self-comparing twin is a known shape too
    return case


@st.composite
def cases(draw: Any, probes: bool = True) -> Case:
    return make_case(Chooser(draw), probes)


@st.composite
def claims_for(draw: Any, ref: Reference) -> list:
    return make_claims(Chooser(draw), ref)


# ---------------------------------------------------------------------------------------------
# running dpverify and comparing
# ---------------------------------------------------------------------------------------------

@dataclass
class Finding:
    category: str
    claim: str
    status: str
    truth: str
    message: str


def run_dpverify(path: Path) -> Any:
    from dpverify.checks import Options, preload
    from dpverify.runner import check_paths
    preload()  # once: each case is checked in a forked worker, which then inherits the checks' imports
    return check_paths([str(path)], Options(precision=50, proofs=True))


def _beyond_grid(message: str) -> Optional[F]:
    m = re.search(r"fails for eps = ([-+0-9.eE]+)", message)
    return F(Decimal(m.group(1))) if m else None


def check_case(case: Case, ref: Optional[Reference] = None, errors: Optional[list] = None) -> list[Finding]:
    """The discrepancies between dpverify's verdicts on the case and the reference; ``errors`` gets the
    messages of the verdicts that are errors (a load error included)."""
    ref = ref or Reference(case)
    truths = {i: ref.truth(c, case.eps) for i, c in enumerate(case.claims)}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz_continuous_case.py"
        path.write_text(case.render())
        start = time.perf_counter()
        report = run_dpverify(path)
        if time.perf_counter() - start > 5:
            REASONS[f"slow case: {case.shapes}"] += 1
    findings: list[Finding] = []
    specs = report.specs
    if not specs or specs[0].error:
        if errors is not None:
            errors.append(str(specs[0].error if specs else "no spec"))
        STATS["load error"] += 1
        REASONS["load error: " + re.sub(r"\S*fuzz_continuous_case\.py:[0-9]+: ", "",
                                        str(specs[0].error if specs else "no spec"))[:90]] += 1
        return findings
    STATS["cases"] += 1
    for result in specs[0].claims:
        i = int(result.claim_id[1:])
        claim = case.claims[i]
        truth = truths[i]
        for point in result.points:
            status = point.status.value
            STATS[status] += 1
            if status == "error" and errors is not None:
                errors.append(point.message)
            if status in ("error", "unknown"):
                REASONS[f"{status}: " + re.sub(r"[0-9]+", "N", re.sub(r"\S*fuzz_continuous_case\.py:[0-9]+: ", "",
                                                                     point.message))[:90]] += 1
                continue
            label = f"{result.claim_id} ({claim.kind} {claim.label}) at eps={case.eps}"
            if truth is None:
                STATS["undecided by the reference"] += 1
            elif status in ("proved", "verified") and not truth:
                findings.append(Finding("false " + status, label, status, "false", point.message[:500]))
            elif status == "refuted" and truth:
                star = _beyond_grid(point.message)
                if star is None or not ref.exact(case.prog) or ref.truth(claim, star) is not False:
                    findings.append(Finding("false refutation", label, status, "true", point.message[:500]))
            if claim.kind == "private":
                findings += _achieved(ref, case, point, label)
    return findings


def _achieved(ref: Reference, case: Case, point: Any, label: str) -> list[Finding]:
    got = getattr(point.evidence, "achieved_epsilon", None)
    if not got or not ref.exact(case.prog):
        return []
    lo, hi = ref.achieved(case.eps)
    value = mpmath.inf if got == "inf" else mpmath.mpf(got)
    tol = mpmath.mpf(10) ** -9
    lower_only = getattr(point.evidence, "achieved_is_lower_bound", False)
    if value > hi + tol * (1 + abs(value)) if value != mpmath.inf else hi != mpmath.inf:
        return [Finding("achieved epsilon differs", label, point.status.value,
                        f"reference achieved in [{mpmath.nstr(lo, 15)}, {mpmath.nstr(hi, 15)}]", f"dpverify {got}")]
    if not lower_only and (lo == mpmath.inf and value != mpmath.inf or
                           lo != mpmath.inf and value < lo - tol * (1 + abs(lo))):
        return [Finding("achieved epsilon differs", label, point.status.value,
                        f"reference achieved in [{mpmath.nstr(lo, 15)}, {mpmath.nstr(hi, 15)}]", f"dpverify {got}")]
    return []


# A finding still open: (shape, category) pairs whose failure is expected while the engine is fixed.
SELF_SHAPES = {"argmax:all_ge_self", "argmax:all_le_self", "argmax:all_shift_self", "self-compare",
               "svt:shift_self", "svt:threshold_self"}
OPEN_SELF_COMPARISON = False  # the x >= x bug (C1): fixed in engine/continuous/noise.py


def _expected(case: Case, finding: Finding) -> bool:
    return OPEN_SELF_COMPARISON and bool(SELF_SHAPES & set(case.shapes)) or (
        any(s.startswith("probe:") for s in case.shapes) and PROBES_OPEN)


PROBES_OPEN = False  # equality and text/hash/type probes of noisy values (C2-C4): decided or refused


def draw_case(data: st.DataObject, probes: bool = True) -> Optional[tuple]:
    """(case with its claims, its reference), or None when the reference skips it or it has no claim."""
    return new_case(Chooser(data.draw), probes)


def new_case(ch: Chooser, probes: bool = True) -> Optional[tuple]:
    case = make_case(ch, probes)
    try:
        ref = Reference(case)
        case.claims = make_claims(ch, ref)
    except C.Unsupported as exc:
        STATS[f"reference skipped ({exc})"] += 1
        return None
    return (case, ref) if case.claims else None


def judge(case: Case, ref: Reference, errors: Optional[list] = None) -> list[Finding]:
    """Check the case with dpverify; raise AssertionError on a discrepancy that is not a known open finding."""
    try:
        findings = check_case(case, ref, errors)
    except C.Unsupported as exc:
        STATS[f"reference skipped ({exc})"] += 1
        return []
    open_ = [f for f in findings if not _expected(case, f)]
    for f in findings:
        STATS[f"known finding: {f.category}"] += f not in open_
    if open_:
        lines = [f"{f.category}: {f.claim}: dpverify {f.status}, reference {f.truth}; {f.message}" for f in open_]
        raise AssertionError("dpverify disagrees with the continuous reference:\n" + "\n".join(lines)
                             + "\n\nspec:\n" + case.render())
    return findings


def run_one(data: st.DataObject, probes: bool = True) -> list[Finding]:
    item = draw_case(data, probes)
    return judge(*item) if item is not None else []


def _dump_stats() -> None:
    target = os.environ.get("DPVERIFY_FUZZ_STATS")
    if target:
        Path(target).write_text(json.dumps({"verdicts": dict(STATS), "reasons": dict(REASONS.most_common())},
                                           indent=1))


COMMON = dict(derandomize=True, database=None, deadline=None, print_blob=False, phases=[Phase.generate],
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much, HealthCheck.large_base_example])


# ---------------------------------------------------------------------------------------------
# findings, each kept as the small case that showed it (found against 53ed051)
# ---------------------------------------------------------------------------------------------

def _lap(slot: Optional[int], scale: F = F(2), shift: F = F(0)) -> C.Draw:
    return C.Draw("laplace", slot, shift, scale)


def _exp(slot: Optional[int], scale: F = F(2), shift: F = F(0)) -> C.Draw:
    return C.Draw("exponential", slot, shift, scale)


TWO = C.Universe("answers", m=2, relation="linf")
ONE = C.Universe("answers", m=1, relation="linf")
DATA2 = C.Universe("data", sizes=(2,), relation="replace", queries=("count1", "twice1"))
NEVER = Claim("prob_at_most", F(0), -1, "P[output == -1] = 0")


def _leak_if(cond: Any, draws: tuple = (_lap(0, F(1)),)) -> C.Straight:
    return C.Straight(draws, ((cond, ("leak", 0)),), 0)


FINDINGS: dict[str, tuple[Case, Optional[str]]] = {
    # C1 (fixed): x >= x was read as false.  Report noisy max as "first i with all(v[i] >= v[j] for all j)"
    # gets the law "always -1": P[-1] = 0 refuted, the same law as skipping j = i refuted.
    "C1 argmax with all(v[i] >= v[j]) including j = i": (Case(
        C.ArgMax((_lap(0), _lap(1)), "all_ge_self"), TWO, F(1),
        [NEVER, Claim("same", label="same as skipping self")], other=C.ArgMax((_lap(0), _lap(1)), "all_gt_skip"),
        other_same=True), None),
    "C1 argmin with all(v[i] <= v[j]) including j = i": (Case(
        C.ArgMax((_exp(0), _exp(1)), "all_le_self"), TWO, F(1), [NEVER]), None),
    "C1 argmax with (v[i] + 1) - 1 >= v[j]": (Case(
        C.ArgMax((_lap(0), _lap(1)), "all_shift_self"), TWO, F(1 , 2), [NEVER]), None),
    # the leak behind (x + 1) >= (x + 1) is never taken: private(3 eps) proved, the truth is infinite
    "C1 (x + 1) >= (x + 1) guards a leak": (Case(
        _leak_if(C.Cmp(C.Var(0, (F(1),)), ">=", C.Var(0, (F(1),))), (_exp(None, F(4), F(1, 2)),)), DATA2, F(1, 2),
        [Claim("private", F(3), label="3*eps")]), None),
    "C1 SVT with t >= t": (Case(
        C.SVT((_lap(None, F(2), F(1, 2)), _lap(0, F(4))), 1, "threshold_self"), ONE, F(1),
        [Claim("prob_at_most", F(0), (False,), "P[(False,)] = 0"), Claim("prob_at_least", F(1, 10), (True,))]),
        None),
    # C2: equality of a noisy value with itself shifted by 0 is read as false (identity, not value)
    "C2 (x + 1) - 1 == x": (Case(
        C.Straight((_lap(0, F(1)),), ((C.Cmp(C.Var(0, (F(1), F(-1))), "==", C.Var(0)), 1),), 0), ONE, F(1),
        [Claim("prob_at_least", F(1), 1, "P[output == 1] = 1")]), None),
    "C2 x + 0 != x guards nothing, x + 0 == x guards a leak": (Case(
        _leak_if(C.Cmp(C.Var(0, (F(0),)), "==", C.Var(0))), ONE, F(1),
        [Claim("private", F(1), label="eps")]), None),
    # C3: type probes answer for the handle, not for the real number the program means
    "C3 isinstance(x, float) guards a leak": (Case(
        _leak_if(C.Probe("isinstance_float", 0)), ONE, F(1), [Claim("private", F(1), label="eps")]),
        None),
    "C3 type(x) is float guards a leak": (Case(
        _leak_if(C.Probe("type_is_float", 0)), ONE, F(1), [Claim("private", F(1), label="eps")]),
        None),
    # C4: hashing a noisy value hashes the handle (id), not the value
    "C4 hash(x) == hash(x + 0) guards a leak": (Case(
        _leak_if(C.Probe("hash_same", 0)), ONE, F(1), [Claim("private", F(1), label="eps")]),
        None),
    "C4 {x: 1}.get(x + 0) guards a leak": (Case(
        _leak_if(C.Probe("dict_key", 0)), ONE, F(1), [Claim("private", F(1), label="eps")]),
        None),
    "C4 (x + 0) in (x,) guards a leak": (Case(
        _leak_if(C.Probe("in_tuple", 0)), ONE, F(1), [Claim("private", F(1), label="eps")]),
        None),
}


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=False, reason=why) if why else ()) for n, (_, why) in FINDINGS.items()])
def test_finding_stays_fixed(name: str) -> None:
    case = FINDINGS[name][0]
    findings = check_case(case)
    assert not findings, "\n".join(f"{f.category}: {f.claim}: dpverify {f.status}, reference {f.truth}; {f.message}"
                                    for f in findings) + "\n\n" + case.render()


# ---------------------------------------------------------------------------------------------
# the reference itself, against closed forms
# ---------------------------------------------------------------------------------------------

def test_quadrature_matches_closed_forms() -> None:
    with mpmath.workdps(30):
        # Laplace(0, 2) vs Laplace(1, 2): P(x1 > x0) = 1 - e^(-1/2) (1 + 1/4) / 2 (difference of two Laplaces)
        law = C.law_quadrature(C.ArgMax((_lap(0), _lap(1)), "running_gt"), (0, 1), F(1))
        exact = 1 - mpmath.exp(mpmath.mpf(-1) / 2) * mpmath.mpf(5) / 8
        assert abs(law.probs[1] - exact) < mpmath.mpf(10) ** -18 and law.errors[1] < mpmath.mpf(10) ** -15
        # exponential(0, 2) vs exponential(1, 2): P(x0 > x1) = e^(-1/2) / 2 (memorylessness)
        law = C.law_quadrature(C.ArgMax((_exp(0), _exp(1)), "running_gt"), (0, 1), F(1))
        assert abs(law.probs[0] - mpmath.exp(mpmath.mpf(-1) / 2) / 2) < mpmath.mpf(10) ** -18
        # one variable, with a shifted self-comparison that is always true and a threshold: P(x > 1/2)
        prog = C.Straight((_lap(0, F(1)),), ((C.Cmp(C.Var(0, (F(1), F(-1))), ">=", C.Var(0)), 7),), 0)
        assert C.law_quadrature(prog, (0,), F(1)).probs == {7: 1}
        prog = C.Straight((_lap(0, F(1)),), ((C.Cmp(C.Var(0), ">", C.Const(F(1, 2))), 1),), 0)
        law = C.law_quadrature(prog, (0,), F(1))
        assert abs(law.probs[1] - mpmath.exp(mpmath.mpf(-1) / 2) / 2) < mpmath.mpf(10) ** -20
        # exponential noise never below its centre: an exact zero, not a small number
        prog = C.Straight((_exp(0, F(1)),), ((C.Cmp(C.Var(0), "<", C.Const(F(0))), 1),), 0)
        assert set(C.law_quadrature(prog, (0,), F(1)).probs) == {0}


def test_the_monte_carlo_band_holds_the_quadrature_value() -> None:
    prog = C.SVT((_lap(None, F(2), F(1, 2)), _lap(0, F(4))), 1, "ge")
    exact = C.law_quadrature(prog, (1,), F(1))
    mc = C.law_monte_carlo(prog, (1,), F(1), 4000, 7, 1e-6)
    for o, p in exact.probs.items():
        lo, hi = mc.interval(o)
        assert lo <= p <= hi
    lo, hi = C.clopper_pearson(50, 100, 0.05)  # the textbook values 0.3983, 0.6017
    assert abs(lo - mpmath.mpf("0.398321129503")) < 1e-8 and abs(hi - mpmath.mpf("0.601678870497")) < 1e-8


def test_achieved_epsilon_of_the_laplace_release_of_a_comparison() -> None:
    """x = q + Lap(1/eps) compared with 0, eps = 1: P(x <= 0) is 1/2 at q = 0 and e^-1/2 at q = 1, a loss of exactly
    1 (the other output's loss is ln(2 - e^-1) < 1)."""
    prog = C.Straight((_lap(0, F(1)),), ((C.Cmp(C.Var(0), ">", C.Const(F(0))), 1),), 0)
    laws = {(0,): C.law_quadrature(prog, (0,), F(1)), (1,): C.law_quadrature(prog, (1,), F(1))}
    lo, hi = C.achieved_band(laws, [((0,), (1,)), ((1,), (0,))])
    assert abs(lo - 1) < mpmath.mpf(10) ** -18 and hi - lo < 1e-18


# ---------------------------------------------------------------------------------------------
# the fuzzer
# ---------------------------------------------------------------------------------------------

DEFAULT_BUDGET = int(os.environ.get("DPVERIFY_FUZZ_CASES", 60))
SEED = 20240611


@functools.lru_cache(maxsize=None)
def default_cases(budget: int = DEFAULT_BUDGET) -> list:
    """The default run: ``budget`` cases (each with its reference) from fixed seeds, computed once per session.
    Checked here against the engine, and replayed by tests/test_fuzz_continuous_mutants.py against
    deliberately broken engines: each must be caught within them."""
    out: list = []
    for i in range(budget):
        item = new_case(Chooser(rng=random.Random(SEED + i)))
        if item is not None:
            out.append(item)
    return out


def test_dpverify_agrees_with_the_continuous_reference() -> None:
    """The default cases, each judged; and no case trips the engine's check of the total probability (the
    net that tests/test_fuzz_continuous_mutants.py relies on for bugs that break the total mass)."""
    failures = []
    errors: list = []
    try:
        for case, ref in default_cases():
            try:
                judge(case, ref, errors)
            except AssertionError as exc:
                failures.append(str(exc))
    finally:
        _dump_stats()
    assert not failures, "\n\n".join(failures)
    assert not [e for e in errors if re.search(MASS_CHECK, e)]


MASS_CHECK = r"output probabilities .* sum to .*, not 1"


@pytest.mark.fuzz_long
@settings(max_examples=1500, **COMMON)
@given(st.data())
def test_dpverify_agrees_with_the_continuous_reference_long(data: st.DataObject) -> None:
    try:
        run_one(data)
    finally:
        _dump_stats()


@pytest.mark.fuzz_long
def test_dpverify_agrees_with_the_continuous_reference_on_more_seeds() -> None:
    """1500 seeded cases after the default ones (DPVERIFY_FUZZ_FROM=N starts elsewhere)."""
    first = int(os.environ.get("DPVERIFY_FUZZ_FROM", DEFAULT_BUDGET))
    failures = []
    try:
        for i in range(first, first + 1500):
            item = new_case(Chooser(rng=random.Random(SEED + i)))
            if item is not None:
                try:
                    judge(*item)
                except AssertionError as exc:
                    failures.append(f"seed SEED + {i}: {exc}")
    finally:
        _dump_stats()
    assert not failures, "\n\n".join(failures)
