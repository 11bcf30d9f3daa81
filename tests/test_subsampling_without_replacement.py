"""Sampling without replacement under replace-one neighbours, exactly: the mixture pairs of
:func:`dpverify.engine.pld.atoms.without_replacement` against the enumerated program, the exact
composed profile against an independent mpmath multinomial sum, ties decided by algebra, and the
Poisson formula (the base's add/remove level) refuted where it is wrong.
"""
from __future__ import annotations

import itertools

import mpmath
import pytest
import sympy
from sympy import Rational, exp

import dpverify as dp
from dpverify.engine.program.backend import IntervalBackend
from dpverify.engine.pld.atoms import atoms, composed_delta, without_replacement

eps = dp.symbol("eps", positive=True)


def clamped_geometric(centre, a):
    """P(out = -1), P(0), P(1) of centre + Z clamped into [-1, 1], Z two-sided geometric (a)."""
    def at_most(j):  # P(Z <= j): a^j / (a + 1) * a below 0, 1 - a^-(j + 1) / (a + 1) * a from 0
        return 1 - a ** (-(j + 1)) / (a + 1) * a if j >= 0 else a ** j / (a + 1) * a
    below = at_most(-1 - centre)
    above = 1 - at_most(-centre)  # P(centre + Z >= 1) = 1 - P(Z <= -centre)
    return [sympy.simplify(below), sympy.simplify(1 - below - above), sympy.simplify(above)]


def sampled(data, eps):
    (record,) = dp.subset(data, 1)
    return dp.geometric(record, dp.exp(eps), lower=-1, upper=1)


def rr_sampled(data, eps):
    (record,) = dp.subset(data, 1)
    return dp.randomized_response(record, eps)


def profile_of(program, values, n, at, times, e):
    spec = dp.spec(program, universe=dp.universe(values, n=n, neighbours=dp.REPLACE_ONE, symmetric=True),
                   grid={eps: [e]}, claims=[dp.profile(at=[at], delta=1, times=times, id="p")])
    (result,) = dp.check(spec, proofs=False)
    return result


def reference(p, q, times, at, dps=60):
    """delta_T(at) by the multinomial over the outputs of (p, q), summed in mpmath (no dpverify code)."""
    with mpmath.workdps(dps):
        pf = [mpmath.mpf(sympy.N(v, dps + 10)) for v in p]
        qf = [mpmath.mpf(sympy.N(v, dps + 10)) for v in q]
        at = mpmath.mpf(sympy.N(at, dps + 10))
        total = mpmath.mpf(0)
        for counts in itertools.product(range(times + 1), repeat=len(p)):
            if sum(counts) != times:
                continue
            coefficient = mpmath.factorial(times) / mpmath.fprod(mpmath.factorial(c) for c in counts)
            pm = coefficient * mpmath.fprod(v ** c for v, c in zip(pf, counts))
            loss = mpmath.fsum(c * mpmath.log(a / b) for a, b, c in zip(pf, qf, counts) if c)
            if loss > at:
                total += pm * (1 - mpmath.exp(at - loss))
        return total


@pytest.mark.parametrize("times, at", [(1, Rational(1, 10)), (7, Rational(1, 2)), (20, Rational(3, 2))])
def test_mixture_pairs_against_the_program_and_a_reference(times, at):
    """The program's worst ordered pair (enumerated, exact) equals the largest of the four mixture pairs of
    the base laws, and both equal the mpmath multinomial sum."""
    e = Rational(1, 2)
    a = exp(e)
    p, q = clamped_geometric(1, a), clamped_geometric(-1, a)
    pairs = without_replacement(p, q, Rational(1, 2))
    found = [composed_delta([(atoms(x, y), times)], at, IntervalBackend(50)).delta for x, y in pairs]
    worst = max(found, key=lambda v: float(v.b))
    program = profile_of(sampled, [-1, 1], 2, at, times, e)
    achieved = float(program.evidence.rows[0].achieved)
    expected = max(reference(x, y, times, at) for x, y in pairs)
    with mpmath.workdps(60):
        assert worst.a - mpmath.mpf(10) ** -45 <= expected <= worst.b + mpmath.mpf(10) ** -45
    assert achieved == pytest.approx(float(expected), rel=1e-12, abs=1e-300)


def test_randomized_response_on_the_sampled_record_matches_the_pairs():
    e, times, at = Rational(1), 30, Rational(2)
    keep = exp(e) / (1 + exp(e))
    pairs = without_replacement([keep, 1 - keep], [1 - keep, keep], Rational(1, 3))
    expected = max(float(composed_delta([(atoms(x, y), times)], at, IntervalBackend(50)).delta.mid) for x, y in pairs)
    program = profile_of(rr_sampled, [0, 1], 3, at, times, e)
    assert float(program.evidence.rows[0].achieved) == pytest.approx(expected, rel=1e-12)


def test_basic_composition_is_a_tie_decided_exactly():
    """The largest loss equals eps0 = ln(1 + (e^(2 eps) - 1)/2) exactly: delta_T(T eps0) = 0 is verified (an
    interval method alone leaves [0, tiny]); any smaller eps refutes delta = 0."""
    e0 = sympy.log(1 + (exp(2 * eps) - 1) / 2)
    universe = dp.universe([-1, 1], n=2, neighbours=dp.REPLACE_ONE, symmetric=True)
    spec = dp.spec(sampled, universe=universe, grid={eps: [Rational(1, 2)]},
                   claims=[dp.profile(at=[20 * e0], delta=0, times=20, id="tie"),
                           dp.profile(at=[20 * e0 - Rational(1, 10 ** 6)], delta=0, times=20, id="below")])
    tie, below = dp.check(spec, proofs=False)
    assert tie.status.value == "verified"
    assert below.status.value == "refuted"


def test_spec_amplification_and_its_poisson_mutant():
    """spec/subsampling.py's without_replacement: the theorem at the base's replace-one level 2 eps holds (proved),
    the Poisson formula at the add/remove level eps is refuted, alone and composed."""
    import importlib.util
    from pathlib import Path
    path = Path(__file__).parent.parent / "spec" / "subsampling.py"
    module_spec = importlib.util.spec_from_file_location("subsampling_spec", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    results = {(c.id): r for c, r in zip(
        [c for c in module.without_replacement.claims for _ in module.without_replacement.points_for(c)],
        dp.check(module.without_replacement))}
    assert results["amplified"].status.value == "proved"
    assert results["poisson_formula"].status.value == "refuted"
    assert results["poisson_formula_composed"].status.value == "refuted"
    assert results["poisson_formula_composed"].witness is not None
    assert results["advanced_composition_of_amplified"].status.value == "verified"
    assert results["basic_composition_of_amplified"].status.value == "verified"
