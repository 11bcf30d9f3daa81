"""Composed privacy profiles, timed: exact delta(eps) of T-fold randomized response, Gaussian, Laplace and
the Poisson-subsampled Gaussian (one DP-SGD step), each beside the accountants that are installed.

    python bench/bench_accounting.py                # T = 10 100 1000 for randomized response
    python bench/bench_accounting.py --times 1000 5000 --grid

For each question, the seconds dpverify's engine takes and its answer (the certified enclosure, with its
significant digits), then each installed accountant on the same question, called as its users call it --
dp_accounting's PLDAccountant and RdpAccountant (``compose(event, T)``, ``get_delta(eps)``) and
prv-accountant's PRVAccountant (``compute_delta(eps, [T])``, its upper bound, the guarantee) -- with its
seconds and its error against ours (relative; negative means it reports less than the exact delta, a
violation of what an accountant promises; for a bracket, where it lies).  A benchmark, not a test: it
prints figures and asserts only that the exact answer agrees with an independent binomial sum.
"""
from __future__ import annotations

import argparse
import time
from fractions import Fraction
from typing import Any, Callable, Optional

import mpmath


def _mid(value: Any) -> Any:
    return mpmath.mp.make_mpf(value.mid._mpi_[0])
from sympy import Rational, exp

from dpverify.engine.program.backend import IntervalBackend
from dpverify.engine.continuous.gaussian_delta import gaussian_delta
from dpverify.engine.pld.lattice import delta_at, lattice_pld
from dpverify.engine.pld.bounds import delta_bounds, discretise
from dpverify.engine.pld import gaussian_mellin as pld_gaussian_mellin
from dpverify.engine.pld.gaussian_mixture import compose, one_step, subsampled_bounds
from dpverify.engine.pld.gaussian_tight import one_step_tight

EPS = Rational(1, 10)
AT = Rational(1)


def exact_rr(times: int) -> tuple[float, Any, int]:
    """(seconds, delta(AT) enclosure, terms) of the times-fold randomized response at EPS, from its laws."""
    start = time.perf_counter()
    keep = exp(EPS) / (1 + exp(EPS))
    pld = lattice_pld([keep, 1 - keep], [1 - keep, keep]).compose(times)
    value = delta_at(pld, AT + times * EPS / 4, IntervalBackend(50)).delta
    return time.perf_counter() - start, value, len(pld.terms)


def binomial(times: int) -> Any:
    """The same number as an independent binomial sum at 60 digits."""
    with mpmath.workdps(60):
        e, at = mpmath.mpf(1) / 10, 1 + mpmath.mpf(times) / 40
        keep = mpmath.exp(e) / (1 + mpmath.exp(e))
        return sum(mpmath.binomial(times, j) * keep ** j * (1 - keep) ** (times - j) * (1 - mpmath.exp(at - (2 * j - times) * e))
                   for j in range(times + 1) if (2 * j - times) * e > at)


def gaussian(times: int) -> tuple[float, Any]:
    start = time.perf_counter()
    ctx = IntervalBackend(50).ctx
    value = gaussian_delta(ctx, ctx.sqrt(times) * ctx.mpf(1) / 10, ctx.mpf(1))
    return time.perf_counter() - start, value


def laplace(times: int, grid: int) -> tuple[float, Any, Any]:
    start = time.perf_counter()
    ctx = IntervalBackend(30).ctx
    found = discretise(ctx, [grid] * times, ctx.mpf(1) / grid)
    bounds = delta_bounds(ctx, found, ctx.mpf(1))
    return time.perf_counter() - start, bounds.lower, bounds.upper


SGD_RATE, SGD_SIGMA, SGD_AT = Fraction(1, 100), 1, 1
SGD_GRIDS = (("rounded", (1000, 0.05, 6.0)), ("second order", (500, 0.05, 6.0)),
             ("second order", (1000, 0.03, 7.0)))
"""(bounds, (grid points per unit of loss, least output step of a cell, tails' edge in sigmas)): counted budgets."""


def subsampled(times: int, grid: tuple, tight: bool) -> tuple[float, Any, Any]:
    """(seconds, lower, upper) of delta_T(SGD_AT) of the Poisson-subsampled Gaussian (one DP-SGD step at
    rate SGD_RATE, sensitivity 1, noise SGD_SIGMA) composed ``times`` times, between the grid's certified
    bounds: cells rounded to the grid, or (``tight``) merged and split (second order)."""
    start = time.perf_counter()
    ctx = IntervalBackend(20).ctx
    h = ctx.mpf(1) / grid[0]
    steps = (one_step_tight if tight else one_step)(ctx, ctx.mpf(SGD_RATE.numerator) / SGD_RATE.denominator,
                                                    ctx.mpf(1) / SGD_SIGMA, h, *grid[1:])
    bounds = subsampled_bounds(ctx, compose(steps, times, h), ctx.mpf(SGD_AT))
    return time.perf_counter() - start, mpmath.mp.make_mpf(bounds.lower._mpi_[0]), mpmath.mp.make_mpf(bounds.upper._mpi_[1])


def certified(times: int, digits: int) -> Optional[tuple[float, Any, Any, float]]:
    """(seconds, lower, upper, digits) of delta_T(SGD_AT), the worse direction, certified by the closed form
    (T = 1) or the Mellin inversion; None beyond the node budget (pld_gaussian_mellin.MAX_NODES)."""
    start = time.perf_counter()
    try:
        both = [pld_gaussian_mellin.certified_delta(SGD_RATE, Fraction(1, SGD_SIGMA), times, Fraction(SGD_AT),
                                                    added, digits) for added in (True, False)]
    except pld_gaussian_mellin.Unreached:
        return None
    top = max(both, key=lambda c: c.upper)
    return (time.perf_counter() - start, mpmath.mpf(top.lower.numerator) / top.lower.denominator,
            mpmath.mpf(top.upper.numerator) / top.upper.denominator, top.digits)


def _digits(lower: Any, upper: Any) -> float:
    """Significant digits the bracket certifies: -log10 of its relative width."""
    return float(-mpmath.log10((upper - lower) / upper)) if upper > lower > 0 else 0.0


# --- the accountants, called as their users call them ---------------------------------------------------


def _timed(run: Callable[[], float]) -> tuple[float, float]:
    start = time.perf_counter()
    value = float(run())
    return time.perf_counter() - start, value


def accountants(question: dict, times: int, eps: float) -> list[tuple[str, Any]]:
    """[(name, (seconds, delta) or a reason)] for every installed accountant on ``question`` (its
    dp_accounting event and neighbouring relation, its prv-accountant random variable)."""
    out: list[tuple[str, Any]] = []
    try:
        from dp_accounting import NeighboringRelation
        from dp_accounting.pld import PLDAccountant
        from dp_accounting.rdp import RdpAccountant
    except ImportError:
        out.append(("dp_accounting", "not installed"))
    else:
        relation = getattr(NeighboringRelation, question["relation"])

        def delta(accountant: Any) -> float:
            acc = accountant(neighboring_relation=relation)
            acc.compose(question["event"](), times)
            return acc.get_delta(eps)
        for name, accountant in (("dp_accounting PLD", PLDAccountant), ("dp_accounting RDP", RdpAccountant)):
            try:
                out.append((name, _timed(lambda: delta(accountant))))
            except Exception as exc:  # an accountant refusing the question is a figure too
                out.append((name, f"refused: {type(exc).__name__}: {str(exc)[:60]}"))
    try:
        from prv_accountant import PRVAccountant
    except ImportError:
        out.append(("prv-accountant", "not installed"))
    else:
        def upper() -> float:
            acc = PRVAccountant(prvs=[question["prv"]()], max_self_compositions=[times], eps_error=0.1,
                                delta_error=1e-10)
            return acc.compute_delta(eps, [times])[2]
        try:
            out.append(("prv-accountant upper", _timed(upper)))
        except Exception as exc:
            out.append(("prv-accountant upper", f"refused: {type(exc).__name__}: {str(exc)[:60]}"))
    return out


def subsampled_laplace(times: int, eps: Fraction) -> tuple[float, Any, Any]:
    """(seconds, lower, upper) of delta_T(eps) of the Poisson-subsampled Laplace (q = 0.1's float, Laplace(1),
    sensitivity 1), the worse direction: certified (closed form, acb.integral) for T <= 2, else the lattice
    bracket at 2000 steps per run."""
    from dpverify.engine.pld import laplace_mixture as certified_laplace, laplace_mixture_bounds as lattice
    start = time.perf_counter()
    rate, ends = Fraction(0.1), []
    for added in (True, False):
        if times <= 2:
            ball = certified_laplace.certified_delta(rate, Fraction(1), times, eps, added)
            ends.append((mpmath.mpf(ball.lower().str(30, radius=False)), mpmath.mpf(ball.upper().str(30, radius=False))))
            continue
        ctx = mpmath.iv
        ctx.dps = 30
        e = ctx.mpf(eps.numerator) / eps.denominator
        found = lattice.bounds(ctx, lattice.discretised(ctx, ctx.mpf(rate.numerator) / rate.denominator, ctx.mpf(1),
                                                        added, times, 2000), e)
        ends.append((mpmath.mp.make_mpf(found.lower._mpi_[0]), mpmath.mp.make_mpf(found.upper._mpi_[1])))
    lower, upper = max(ends, key=lambda end: end[1])
    return time.perf_counter() - start, lower, upper


def _no_prv() -> Any:
    raise NotImplementedError("prv-accountant has no subsampled Laplace mechanism")


def _events() -> dict:
    """The bench's questions as each accountant names them (imported lazily: optional libraries)."""
    def dp_event():
        from dp_accounting import dp_event as module
        return module

    def prv():
        from prv_accountant import privacy_random_variables as module
        return module
    keep = float(mpmath.exp(EPS) / (1 + mpmath.exp(EPS)))
    return {
        "rr": {"relation": "REPLACE_ONE", "prv": lambda: prv().PureDPMechanism(eps=float(EPS)),
               "event": lambda: dp_event().RandomizedResponseDpEvent(noise_parameter=2 * (1 - keep), num_buckets=2)},
        "gaussian": {"relation": "ADD_OR_REMOVE_ONE", "event": lambda: dp_event().GaussianDpEvent(10.0),
                     "prv": lambda: prv().GaussianMechanism(noise_multiplier=10.0)},
        "laplace": {"relation": "ADD_OR_REMOVE_ONE", "event": lambda: dp_event().LaplaceDpEvent(1.0),
                    "prv": lambda: prv().LaplaceMechanism(mu=1.0)},
        "dpsgd": {"relation": "ADD_OR_REMOVE_ONE",
                  "event": lambda: dp_event().PoissonSampledDpEvent(float(SGD_RATE), dp_event().GaussianDpEvent(float(SGD_SIGMA))),
                  "prv": lambda: prv().PoissonSubsampledGaussianMechanism(noise_multiplier=float(SGD_SIGMA),
                                                                          sampling_probability=float(SGD_RATE))},
        "sampled_laplace": {"relation": "ADD_OR_REMOVE_ONE", "prv": _no_prv,
                            "event": lambda: dp_event().PoissonSampledDpEvent(0.1, dp_event().LaplaceDpEvent(1.0))},
    }


def _against(found: list[tuple[str, Any]], lower: Any, upper: Any) -> str:
    """Each accountant's seconds and error against our enclosure [lower, upper]."""
    parts = []
    for name, answer in found:
        if isinstance(answer, str):
            parts.append(f"{name}: {answer}")
            continue
        seconds, value = answer
        if upper - lower <= mpmath.mpf(10) ** -12 * abs(upper):  # a point (10+ digits): the relative error
            exact = float((lower + upper) / 2)
            error = (value - exact) / exact if exact else value
            where = " (a violation)" if value < float(lower) else ""
            parts.append(f"{name}: {seconds:.2f} s, {value:.6e}, {error:+.2e}{where}")
        else:
            where = ("below the bracket: a violation" if value < float(lower) else
                     "inside the bracket" if value <= float(upper) else f"above, {value / float(upper) - 1:+.2e} over its top")
            parts.append(f"{name}: {seconds:.2f} s, {value:.6e}, {where}")
    return "\n          ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--times", type=int, nargs="*", default=[10, 100, 1000])
    parser.add_argument("--grid", action="store_true", help="also the subsampled Gaussian's grid brackets (slow)")
    parser.add_argument("--max-nodes", type=int, default=pld_gaussian_mellin.MAX_NODES,
                        help="the Mellin route's node budget (T = 10 needs about 3,000)")
    args = parser.parse_args()
    pld_gaussian_mellin.MAX_NODES = args.max_nodes
    questions = _events()
    print(f"randomized response at eps = {EPS}, delta(1 + T eps / 4) exactly (a polynomial power in w = e^eps)")
    for times in args.times:
        seconds, value, terms = exact_rr(times)
        reference = binomial(times)
        with mpmath.workdps(60):
            agrees = value.a - mpmath.mpf(10) ** -45 <= reference <= value.b + mpmath.mpf(10) ** -45
        assert agrees, (times, value, reference)
        at = float(AT + times * EPS / 4)
        print(f"T = {times:>5}: ours {seconds:.3f} s, {mpmath.nstr(_mid(value), 20)} (width {float(value.b - value.a):.1e}, "
              f"{terms} terms, agrees with the binomial sum: {agrees})")
        print("          " + _against(accountants(questions["rr"], times, at), _mid(value), _mid(value)))
    print("\nGaussian, sigma = 10 (shift 1), T runs: delta(1) at the distance sqrt(T) / 10, closed form")
    for times in args.times:
        seconds, value = gaussian(times)
        print(f"T = {times:>5}: ours {seconds:.3f} s, {mpmath.nstr(_mid(value), 20)}")
        print("          " + _against(accountants(questions["gaussian"], times, 1.0), _mid(value), _mid(value)))
    print("\nLaplace(1), shift 1, T runs: delta(1) between certified bounds (grid of 1/512)")
    for times in (2, 10):
        seconds, lower, upper = laplace(times, 512)
        low, high = mpmath.mp.make_mpf(lower._mpi_[0]), mpmath.mp.make_mpf(upper._mpi_[1])
        print(f"T = {times:>5}: ours {seconds:.3f} s, [{mpmath.nstr(low, 12)}, {mpmath.nstr(high, 12)}]")
        print("          " + _against(accountants(questions["laplace"], times, 1.0), low, high))
    print(f"\nPoisson-subsampled Gaussian (one DP-SGD step: q = {SGD_RATE}, sigma = {SGD_SIGMA}, sensitivity 1), T steps: "
          f"delta({SGD_AT}) of the worse direction, certified to 10 digits (closed form at T = 1, Mellin inversion "
          f"beyond; the grid's second-order bracket where the Mellin route is beyond {args.max_nodes} nodes)")
    for times in (1, 10, 100, 1000):
        found = certified(times, 10)
        if found is None:
            seconds, lower, upper = subsampled(times, (1000, 0.03, 7.0), True)
            how = "grid (1000, 0.03, 7)"
        else:
            seconds, lower, upper, _ = found
            how = "closed form" if times == 1 else "Mellin"
        print(f"T = {times:>5}: ours ({how}) {seconds:.2f} s, [{mpmath.nstr(lower, 15)}, {mpmath.nstr(upper, 15)}], "
              f"{_digits(lower, upper):.1f} digits")
        print("          " + _against(accountants(questions["dpsgd"], times, float(SGD_AT)), lower, upper))
        if args.grid:
            for bounds, grid in SGD_GRIDS:
                seconds, lower, upper = subsampled(times, grid, bounds != "rounded")
                print(f"          grid, {bounds} {grid}: {seconds:.2f} s, [{mpmath.nstr(lower, 10)}, {mpmath.nstr(upper, 10)}], "
                      f"{_digits(lower, upper):.1f} digits")
    print("\nPoisson-subsampled Laplace (q = 0.1, Laplace(1), sensitivity 1), T runs: delta(eps) of the worse direction, "
          "certified (closed form at T = 1, acb.integral at T = 2; error bounds below 1e-30), a second-order lattice "
          "bracket beyond (2000 steps per run)")
    for times, eps in ((1, Fraction(0.1)), (2, Fraction(0.2)), (10, Fraction(1))):
        seconds, lower, upper = subsampled_laplace(times, eps)
        print(f"T = {times:>5}: ours {seconds:.2f} s at eps = {float(eps)}, [{mpmath.nstr(lower, 15)}, {mpmath.nstr(upper, 15)}], "
              f"{_digits(lower, upper):.1f} digits")
        print("          " + _against(accountants(questions["sampled_laplace"], times, float(eps)), lower, upper))


if __name__ == "__main__":
    main()
