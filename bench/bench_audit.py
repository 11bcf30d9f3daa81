"""Benchmark: audits of broken implementations -- samples and seconds to a refutation.

Part 1, black boxes (issue 12, way 3).  Broken numpy implementations that draw from their own
generator (randomized response with 2*eps, report noisy max with scale 1/eps, the exponential
mechanism without its factor 1/2, and the broken sparse vector variants iSVT1-3 of Lyu et al.)
are audited with ``dp.black_box(fn, spec_program=...)`` and ``dp.private(eps)`` at eps = 1/2
(and ``dp.conforms(spec_program)`` where the spec program is the correct mechanism).  The audit
tests ``cells`` = 3 events (single outputs or sets of outputs ordered by likelihood ratio) on one
neighbouring pair, all chosen from the spec program's exact law by their expected power at the
sample count -- no samples spent choosing.  Which law that is matters, and the table says it
(column ``spec law``): for rr, noisy max and the exponential mechanism the spec program is the
CORRECT mechanism, so the events are chosen from a law the code does not follow (a heuristic:
the events where the correct law comes closest to the bound); for iSVT1-3 it is the published
broken algorithm, the code's own exact model (as a user who wrote the algorithm down as a spec
and audits an implementation of it).  The
samples per dataset double from 250 until the claim is ``refuted`` at error probability 1e-9
(the statistical audit's default, re-run with fresh seeds included); the table gives that
count, the runs of the code it took (counted by a wrapper: every sampled dataset, the re-run
included; the audit's tests are sequential -- dpverify/checks/audit/sequential.py -- so a refutation
may read only a prefix, n/16 and up, of the n budgeted draws) and the seconds of that audit (the
spec's exact law included).

Baseline, measured in the same run: a StatDP-style two-sample test written here (after Ding et
al., CCS 2018, "Detecting violations of differential privacy"; no StatDP code).  It is given the
neighbouring pair of dpverify's witness (an advantage: StatDP searches several input pairs),
spends a first batch of n runs per dataset choosing the event (every single output seen and its
complement, in both directions, the smallest p-value wins), then a fresh batch of n runs per
dataset tests H0: P(S|X) <= e^eps P(S|X') by StatDP's reduction -- the count on X thinned
binomially with probability e^-eps, then a one-sided Fisher exact test, its hypergeometric tail
summed exactly in log space (lgamma).  n doubles from 250 until p <= 1e-9; runs = 4n.  The
last column extrapolates its seconds per run to StatDP's default of 4.2M runs per test eps.

Part 2, exact audits (way 1): for each implementation of spec/audits/textbook_numpy.py, the
seconds of its claims audited exactly (``dp.implementation``) against the seconds of the same
claims about the spec program it is compared with (the mechanism written as a spec), same run.
Between the two parts, the black-box audits again with ``cells=1`` (the single event of highest
expected power instead of the default 3), to show what the extra events cost.

Run:  python bench/bench_audit.py [--cap 20] [--eps 1/2]
A measurement, not a test: it asserts nothing.
"""
from __future__ import annotations

import argparse
import functools
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from fractions import Fraction
from typing import Any, Optional

import numpy as np

import dpverify as dp
from dpverify.checks import Options, Workspace, check_point
from dpverify.dsl.claims import Conforms, Private
from dpverify.loader import load

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "spec", "benchmark"))
sys.path.insert(0, os.path.join(ROOT, "spec", "audits"))

import sparse_vector_broken as svt  # noqa: E402  (spec programs of the published SVT variants)
import textbook_numpy as tn  # noqa: E402  (textbook numpy code and its spec programs)

eps = dp.symbol("eps", positive=True)
ERROR = 1e-9
STATDP_DEFAULT = 4_200_000
START = 250


# -- broken implementations, numpy code drawing from the generator it is given ---------------

def numpy_isvt1(q, eps, rng):
    """iSVT1 (Lyu Alg. 5): threshold T + Lap(2/eps), answers compared without noise, no cutoff."""
    threshold = svt.T + rng.laplace(0.0, 2 / eps)
    return tuple(bool(a >= threshold) for a in q)


def numpy_isvt2(q, eps, rng):
    """iSVT2 (Lyu Alg. 6): threshold T + Lap(2/eps), answers + Lap(2/eps), no cutoff."""
    threshold = svt.T + rng.laplace(0.0, 2 / eps)
    noisy = np.asarray(q) + rng.laplace(0.0, 2 / eps, size=len(q))
    return tuple(bool(x >= threshold) for x in noisy)


def numpy_isvt3(q, eps, rng):
    """iSVT3 (Lyu Alg. 4, c = 1): threshold T + Lap(4/eps), answers + Lap(4/(3 eps)), stop at the first above."""
    threshold = svt.T + rng.laplace(0.0, 4 / eps)
    out = []
    for a in q:
        above = bool(a + rng.laplace(0.0, 4 / (3 * eps)) >= threshold)
        out.append(above)
        if above:
            break
    return tuple(out)


# (name, code, spec program, universe, conforms tested): the spec program is the correct mechanism
# where the code deviates from it (conforms tested; the events are chosen from a law the code does not
# follow); for SVT the published algorithm the code implements faithfully (its own exact model).
CASES = [
    ("rr, 2*eps", tn.rr_double_eps, tn.rr, tn.BIT, True),
    ("noisy max, scale 1/eps", tn.noisy_max_wrong_scale, tn.rnm_laplace, tn.ANSWERS, True),
    ("exp. mech., no 1/2", tn.em_no_half, tn.em, tn.RECORDS, True),
    ("iSVT1 (Lyu Alg. 5)", numpy_isvt1, svt.isvt1, svt.UNIVERSE, False),
    ("iSVT2 (Lyu Alg. 6)", numpy_isvt2, svt.isvt2, svt.UNIVERSE, False),
    ("iSVT3 (Lyu Alg. 4)", numpy_isvt3, svt.isvt3, svt.UNIVERSE, False),
]


def spec_law(conforms: bool) -> str:
    """Which exact law chose the events: the correct mechanism's (a heuristic) or the code's own model."""
    return "correct" if conforms else "own"


def counted(fn: Callable[..., Any], runs: list[int]) -> Callable[..., Any]:
    """``fn`` with every call counted in ``runs[0]`` (same signature, for dp.black_box)."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        runs[0] += 1
        return fn(*args, **kwargs)
    return wrapper


def audit(fn, program, universe, claim_of, eps_value, n: int, cells: int):
    """One statistical audit of ``fn`` at ``n`` samples per dataset, testing ``cells`` events:
    (result, runs, seconds)."""
    runs = [0]
    box = dp.black_box(counted(fn, runs), spec_program=program, samples=n, seed=0, cells=cells)
    claim = claim_of(program)
    spec = dp.spec(box, universe=universe, grid={eps: [eps_value]}, claims=[claim], name=fn.__name__)
    start = time.perf_counter()
    result = check_point(spec, claim, spec.points_for(claim)[0], Workspace(Options()))
    return result, runs[0], time.perf_counter() - start


def to_refuted(fn, program, universe, claim_of, eps_value, cap: int, cells: int = 3):
    """Doubling from START: (n, runs, seconds, result) of the first refuting audit, or (None, ...) of the last."""
    n = START
    while True:
        result, runs, seconds = audit(fn, program, universe, claim_of, eps_value, n, cells)
        if result.status.value == "refuted" or n >= cap:
            return (n if result.status.value == "refuted" else None), runs, seconds, result
        n *= 2


# -- the StatDP-style baseline ----------------------------------------------------------------

def sample(fn, data, eps_value: float, n: int, stream: list[int]) -> Counter:
    """n runs of ``fn`` on ``data``, all drawing from one generator seeded with ``stream``, as dp.black_box does."""
    rng = np.random.default_rng(stream)
    counts: Counter = Counter()
    for _ in range(n):
        out = fn(data, eps=eps_value, rng=rng)
        counts[tuple(out) if isinstance(out, (tuple, list)) else out] += 1
    return counts


def log_hypergeom_sf(k: int, population: int, successes: int, draws: int) -> float:
    """ln P(H >= k), H hypergeometric (population, successes, draws), exact terms in log space."""
    top = min(successes, draws)
    if k > top:
        return -math.inf
    k = max(k, max(0, draws - (population - successes)))

    def log_term(i: int) -> float:
        return (math.lgamma(successes + 1) - math.lgamma(i + 1) - math.lgamma(successes - i + 1)
                + math.lgamma(population - successes + 1) - math.lgamma(draws - i + 1)
                - math.lgamma(population - successes - draws + i + 1)
                - math.lgamma(population + 1) + math.lgamma(draws + 1) + math.lgamma(population - draws + 1))

    mode = (draws + 1) * (successes + 1) // (population + 2)
    if k <= mode:  # the tail holds the mode: sum the complement's smaller side instead
        below = _log_sum(log_term(i) for i in range(max(0, draws - (population - successes)), k))
        return math.log1p(-min(math.exp(below), 1 - 2 ** -53))
    terms, first = [], log_term(k)
    for i in range(k, top + 1):  # terms decrease past the mode: stop when negligible
        t = first if i == k else log_term(i)
        terms.append(t)
        if t < first - 60:
            break
    return _log_sum(terms)


def _log_sum(values) -> float:
    values = list(values)
    if not values:
        return -math.inf
    m = max(values)
    return m + math.log(sum(math.exp(v - m) for v in values)) if m > -math.inf else -math.inf


def fisher_p(c1: int, c2: int, n: int, eps_value: float, rng: np.random.Generator) -> float:
    """StatDP's p-value for H0: p1 <= e^eps p2 from counts c1 of n (on X) and c2 of n (on X'):
    c1 thinned by Binomial(c1, e^-eps), then the one-sided Fisher exact test (upper tail)."""
    thinned = int(rng.binomial(c1, math.exp(-eps_value)))
    return math.exp(log_hypergeom_sf(thinned, 2 * n, thinned + c2, n))


def statdp_once(fn, pair, eps_value: float, n: int, seed: int = 0) -> tuple[float, Any]:
    """Event selection on a first batch, then the test on a fresh batch: (p-value, chosen event)."""
    thin = np.random.default_rng([seed, 99, n])
    x, y = pair
    first = [sample(fn, x, eps_value, n, [seed, 0, 0]), sample(fn, y, eps_value, n, [seed, 0, 1])]
    outputs = sorted(set(first[0]) | set(first[1]), key=repr)
    best: Optional[tuple[float, int, Any, bool]] = None
    for side in (0, 1):
        for o in outputs:
            for complement in (False, True):
                c1, c2 = (_event(first[side], o, complement, n), _event(first[1 - side], o, complement, n))
                p = fisher_p(c1, c2, n, eps_value, thin)
                if best is None or p < best[0]:
                    best = (p, side, o, complement)
    assert best is not None
    _, side, o, complement = best
    second = [sample(fn, x, eps_value, n, [seed, 1, 0]), sample(fn, y, eps_value, n, [seed, 1, 1])]
    c1, c2 = _event(second[side], o, complement, n), _event(second[1 - side], o, complement, n)
    return fisher_p(c1, c2, n, eps_value, thin), (side, o, complement)


def _event(counts: Counter, o: Any, complement: bool, n: int) -> int:
    return n - counts.get(o, 0) if complement else counts.get(o, 0)


def statdp_to_reject(fn, pair, eps_value: float, cap: int):
    """Doubling from START: (n, seconds, p) of the first test with p <= 1e-9, or (None, seconds, p) at the cap."""
    n = START
    while True:
        start = time.perf_counter()
        p, _ = statdp_once(fn, pair, eps_value, n)
        seconds = time.perf_counter() - start
        if p <= ERROR or n >= cap:
            return (n if p <= ERROR else None), seconds, p
        n *= 2


# -- the tables -------------------------------------------------------------------------------

def black_boxes(eps_value: Fraction, cap: int) -> None:
    print(f"Black boxes at eps = {eps_value}: samples per dataset doubling from {START} (cap {cap:,}); "
          f"refuted at error probability 1e-9.  StatDP's default: {STATDP_DEFAULT:,} runs per test eps.")
    print("spec law: 'correct' = the events are chosen from the correct mechanism's exact law, which the broken "
          "code does not follow (a heuristic choice); 'own' = from the code's own exact model (the published "
          "broken algorithm)")
    print(f"{'implementation':<24} {'spec law':>8} {'conforms n':>10} {'private n':>9} {'runs':>9} {'s':>7} | "
          f"{'StatDP-style n':>14} {'runs':>9} {'s':>7} {'p':>8} | {'runs ratio':>10} {'s ratio':>7} "
          f"{'4.2M/runs':>9} {'s at 4.2M':>9}")
    print("(ratios: StatDP-style / dpverify; 4.2M/runs: StatDP's default runs / dpverify's runs; s at 4.2M: "
          "the StatDP-style seconds per run times 4.2M, an extrapolation)")
    for name, fn, program, universe, conforms in CASES:
        conform_n = "-"
        if conforms:
            n_c, _, _, _ = to_refuted(fn, program, universe, lambda p: dp.conforms(p), eps_value, cap)
            conform_n = f"{n_c:,}" if n_c else f">{cap:,}"
        n, runs, seconds, result = to_refuted(fn, program, universe, lambda p: dp.private(eps), eps_value, cap)
        if n is None:
            print(f"{name:<24} {spec_law(conforms):>8} {conform_n:>10} not refuted below {cap:,} per dataset "
                  f"({result.status.value})")
            continue
        pair = (result.witness.x, result.witness.x_prime)
        m, s_seconds, p = statdp_to_reject(fn, pair, float(eps_value), cap)
        left = f"{name:<24} {spec_law(conforms):>8} {conform_n:>10} {n:>9,} {runs:>9,} {seconds:>7.3f} | "
        if m is None:
            print(left + f"not rejected below {cap:,} (p {p:.2g}, {4 * cap:,} runs, {s_seconds:.1f} s)")
            continue
        print(left + f"{m:>14,} {4 * m:>9,} {s_seconds:>7.3f} {p:>8.1e} | {4 * m / runs:>9.1f}x "
              f"{s_seconds / seconds:>6.1f}x {STATDP_DEFAULT / runs:>8.0f}x {s_seconds / (4 * m) * STATDP_DEFAULT:>9.1f}")


def one_cell(eps_value: Fraction, cap: int) -> None:
    """The same private(eps) audits testing only the event of highest expected power (cells=1, not the default 3)."""
    print("\nThe same with dp.black_box(..., cells=1): only the event of highest expected power is tested")
    print(f"{'implementation':<24} {'private n':>9} {'runs':>9} {'s':>7}")
    for name, fn, program, universe, _ in CASES:
        n, runs, seconds, result = to_refuted(fn, program, universe, lambda p: dp.private(eps), eps_value, cap, 1)
        shown = f"{n:>9,}" if n else f"not refuted below {cap:,} ({result.status.value})"
        print(f"{name:<24} {shown} {runs:>9,} {seconds:>7.3f}" if n else f"{name:<24} {shown}")


def exact_audits() -> None:
    print("\nExact audits (way 1), spec/audits/textbook_numpy.py: seconds of the implementation's claims "
          "against the same claims about its spec program, fresh workspace each")
    print(f"{'spec':<32} {'claim':<24} {'verdict':<10} {'impl. s':>8} {'spec s':>8} {'impl/spec':>9}  spec verdict")
    total = [0.0, 0.0]
    for spec in load(Path(ROOT, "spec", "audits", "textbook_numpy.py")):
        program = next((c.other for c in spec.claims if isinstance(c, Conforms)), PROGRAMS.get(spec.name))
        claims = [c for c in spec.claims if isinstance(c, Private)]
        twin = dp.spec(program, universe=spec.universe, grid=_grid(spec), name=spec.name + "_spec", claims=claims)
        for claim in claims:
            seconds, verdict = _timed(spec, claim)
            twin_seconds, twin_verdict = _timed(twin, claim)
            total[0] += seconds
            total[1] += twin_seconds
            print(f"{spec.name:<32} {claim.id:<24} {verdict:<10} {seconds:>8.3f} {twin_seconds:>8.3f} "
                  f"{seconds / twin_seconds:>8.1f}x  {twin_verdict}")
    print(f"total: implementations {total[0]:.2f} s, specs {total[1]:.2f} s, ratio {total[0] / total[1]:.1f}x")


PROGRAMS = {"textbook_histogram": tn.noisy_hist, "histogram_eps_scale": tn.noisy_hist,
            "noisy_max_value": tn.rnm_laplace}
"""The spec program of each textbook implementation that claims privacy only (no conforms claim)."""


def _grid(spec) -> dict:
    grid: dict = {}
    for point in spec.points:
        for sym, value in point:
            grid.setdefault(sym, [])
            if value not in grid[sym]:
                grid[sym].append(value)
    return grid


def _timed(spec, claim) -> tuple[float, str]:
    """Seconds of every grid point of ``claim`` (fresh workspace, so the exact laws are computed) and the verdicts."""
    ws = Workspace(Options())
    start = time.perf_counter()
    verdicts = {check_point(spec, claim, point, ws).status.value for point in spec.points_for(claim)}
    return time.perf_counter() - start, "/".join(sorted(verdicts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=int, default=20, help="largest samples per dataset: 2^CAP (default 20)")
    parser.add_argument("--eps", type=Fraction, default=Fraction(1, 2), help="the claimed eps (default 1/2)")
    parser.add_argument("--skip-exact", action="store_true", help="only the black boxes")
    args = parser.parse_args()
    black_boxes(args.eps, 2 ** args.cap)
    one_cell(args.eps, 2 ** args.cap)
    if not args.skip_exact:
        exact_audits()


if __name__ == "__main__":
    main()
