"""OpenDP's other combinators against dpverify's exact answers, called as OpenDP's users call them:
make_pureDP_to_zCDP (randomized response, Laplace), pureDP -> zCDP -> composition -> approxDP on Laplace,
and make_adaptive_composition.  The spec's claims hold; the same answers mis-stated (what an accountant that
under-reports would say) are refuted with a witness."""
from __future__ import annotations

import importlib.util
import sys
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from sympy import Rational

import dpverify as dp

odp = pytest.importorskip("opendp.prelude")
odp.enable_features("contrib")

ACCOUNTING = Path(__file__).parent.parent / "spec" / "accounting"
BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)
ADD_REMOVE = dp.universe([1], n=range(0, 2), neighbours=dp.ADD_REMOVE)


def exact(x: float) -> Rational:
    f = Fraction(x)
    return Rational(f.numerator, f.denominator)


def rr(data):
    return dp.categorical({data[0]: Rational(3, 4), 1 - data[0]: Rational(1, 4)})


def laplace_sum(data):
    return dp.laplace(sum(data), 1)


def statuses(spec):
    return [p.status.value for p in dp.check(spec)]


def test_the_spec_holds():
    sys.path.insert(0, str(ACCOUNTING))
    try:
        found = importlib.util.spec_from_file_location("opendp_composition_spec", ACCOUNTING / "opendp_composition.py")
        module = importlib.util.module_from_spec(found)
        found.loader.exec_module(module)
    finally:
        sys.path.remove(str(ACCOUNTING))
    for spec in (module.rr_zcdp, module.laplace_zcdp, module.rr_adaptive):
        assert set(statuses(spec)) == {"verified"}, spec.name


def test_pure_to_zcdp_is_eps_squared_over_two_and_a_smaller_rho_is_refuted():
    rho = odp.c.make_pureDP_to_zCDP(odp.m.make_randomized_response_bool(0.75)).map(1)
    with mpmath.workdps(30):
        assert abs(mpmath.mpf(rho) - mpmath.log(3) ** 2 / 2) < 1e-15
    spec = dp.spec(rr, universe=BIT, claims=[dp.zcdp(exact(rho), id="reported"),
                                            dp.zcdp(exact(rho) / 5, id="a fifth")])
    reported, fifth = dp.check(spec)
    assert reported.status.value == "verified"
    assert fifth.status.value == "refuted" and fifth.witness is not None


def test_laplace_through_zcdp_holds_and_mis_stated_answers_are_refuted():
    """OpenDP's delta_10(4) = 0.827 holds against the exact [0.3305, 0.3313]; a third of it (0.276) is below
    the certified lower bound and refuted; fix_delta's epsilon holds, a quarter of it does not."""
    laplace = (odp.atom_domain(T=float, nan=False), odp.absolute_distance(T=float)) >> odp.m.then_laplace(1.0)
    approx = odp.c.make_zCDP_to_approxDP(odp.c.make_composition([odp.c.make_pureDP_to_zCDP(laplace)] * 10))
    delta = approx.map(1.0).delta(4.0)
    eps_at, fixed = odp.c.make_fix_delta(approx, 1e-6).map(1.0)
    spec = dp.spec(laplace_sum, universe=ADD_REMOVE,
                   claims=[dp.profile(at=[4], delta=exact(delta), times=10, id="reported"),
                           dp.profile(at=[4], delta=exact(delta) / 3, times=10, id="a third"),
                           dp.profile(at=[exact(eps_at)], delta=exact(fixed), times=10, id="fix_delta"),
                           dp.profile(at=[exact(eps_at) / 4], delta=exact(fixed), times=10, id="a quarter")])
    found = dp.check(spec)
    assert [p.status.value for p in found] == ["verified", "refuted", "verified", "refuted"]
    row = found[0].evidence.rows[0]
    assert 0.33 < float(row.achieved_lower) <= float(row.achieved_upper) < 0.332 < delta
    assert all(p.witness is not None and "confirmed" in p.message for p in (found[1], found[3]))


def test_adaptive_composition_is_basic_composition_rounded_up():
    rr_odp = odp.m.make_randomized_response_bool(0.75)
    composed = odp.c.make_adaptive_composition(rr_odp.input_domain, rr_odp.input_metric, rr_odp.output_measure, 1,
                                               [rr_odp.map(1)] * 100).map(1)
    with mpmath.workdps(60):
        assert mpmath.mpf(composed) > 100 * mpmath.log(3)
    spec = dp.spec(rr, universe=BIT, claims=[dp.profile(at=[exact(composed)], delta=0, times=100),
                                            dp.profile(at=[exact(composed) * Rational(999, 1000)], delta=0, times=100)])
    assert statuses(spec) == ["verified", "refuted"]


def test_population_amplification_is_tight_and_rounded_outward():
    """OpenDP's amplified epsilon for 2 of 4 records sampled without replacement is the exact epsilon of the
    subsampled mechanism rounded up: the float holds, the next float below it is refuted (the theorem is tight)."""
    import math
    odp.enable_features("honest-but-curious")
    measurement = ((odp.vector_domain(odp.atom_domain(bounds=(0, 1)), size=2), odp.symmetric_distance())
                   >> odp.t.then_sum() >> odp.m.then_laplace(2.0))
    amplified = odp.c.make_population_amplification(measurement, population_size=4).map(2)

    def sampled_sum(data):
        return dp.geometric(sum(dp.subset(data, 2)), dp.exp(Rational(1, 2)), lower=0, upper=2)
    spec = dp.spec(sampled_sum, universe=dp.universe([0, 1], n=4, neighbours=dp.REPLACE_ONE, symmetric=True),
                   claims=[dp.private(exact(amplified)), dp.private(exact(math.nextafter(amplified, 0)))])
    holds, below = dp.check(spec)
    assert holds.status.value == "verified" and below.status.value == "refuted"
    with mpmath.workdps(40):
        formula = mpmath.log(1 + (mpmath.exp(mpmath.mpf(1) / 2) - 1) / 2)
        assert abs(mpmath.mpf(holds.evidence.achieved_epsilon) - formula) < 1e-35
