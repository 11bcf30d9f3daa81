"""The accountants checked by spec/accounting/, against values computed here independently.

Randomized response composed T times: a binomial sum over the number of truthful answers at 60
digits; the Gaussian: the closed form delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
with mu = sqrt(T)/sigma.  Each accountant's answer is compared with these (its bound holds, or its
under-report is real), dpverify's verdicts on planted reports (a delta a hair below the exact one is
refuted, a hair above verified), and the spec files' verdicts.
"""
from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from sympy import Rational

import dpverify as dp

dp_accounting = pytest.importorskip("dp_accounting")
prv_accountant = pytest.importorskip("prv_accountant")

from dp_accounting import NeighboringRelation, dp_event  # noqa: E402
from dp_accounting.pld import PLDAccountant  # noqa: E402
from dp_accounting.rdp import RdpAccountant  # noqa: E402

SPEC_DIR = Path(__file__).resolve().parent.parent / "spec" / "accounting"
sys.path.insert(0, str(SPEC_DIR))
from _reported import ADD_REMOVE, BIT, reported_deltas, reported_epsilon  # noqa: E402

KEEP = Rational(17, 32)  # dp_accounting's RandomizedResponseDpEvent(0.9375, 2): the bit kept w.p. 1 - p/2
RR_EVENT = dp_event.RandomizedResponseDpEvent(noise_parameter=0.9375, num_buckets=2)
REPLACE = NeighboringRelation.REPLACE_ONE


def _mp(x) -> mpmath.mpf:
    f = Fraction(x) if isinstance(x, (float, int, Fraction)) else Fraction(int(x.p), int(x.q))
    return mpmath.mpf(f.numerator) / f.denominator


def rr_delta(keep, times: int, at) -> mpmath.mpf:
    """delta_T(at) of randomized response keeping the bit w.p. ``keep`` (an mpf or Rational): the sum over
    j truthful answers of C(T, j) keep^j (1 - keep)^(T - j) (1 - e^(at - loss)) where the loss
    (2j - T) ln(keep / (1 - keep)) exceeds ``at``; 60 digits."""
    with mpmath.workdps(60):
        keep = keep if isinstance(keep, mpmath.mpf) else _mp(keep)
        at, step = _mp(at), mpmath.log(keep / (1 - keep))
        total = mpmath.mpf(0)
        for j in range(times + 1):
            loss = (2 * j - times) * step
            if loss > at:
                total += mpmath.binomial(times, j) * keep ** j * (1 - keep) ** (times - j) * (1 - mpmath.exp(at - loss))
        return total


def gaussian_delta(sigma: float, times: int, at: float) -> mpmath.mpf:
    """The closed form of delta_T(at) for T runs of a sensitivity-1 Gaussian of scale sigma; 50 digits."""
    with mpmath.workdps(50):
        mu, e = mpmath.sqrt(times) / _mp(sigma), _mp(at)
        return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)


def _rr(data):
    bit = data[0]
    return dp.categorical({bit: KEEP, 1 - bit: 1 - KEEP})


def _rr_eps_one(data):
    return dp.randomized_response(data[0], 1)


def _gaussian(data):
    return dp.gaussian(sum(data), 10)


def _statuses(spec) -> list[str]:
    return [point.status.value for point in dp.check(spec)]


def test_binomial_sum_matches_dpverify():
    """The independent sum agrees with the exact value dpverify reports (so the comparisons below are fair)."""
    point = dp.check(dp.spec(_rr, universe=BIT, claims=[dp.profile(at=[2], delta=1, times=100)]))[0]
    with mpmath.workdps(60):
        assert abs(mpmath.mpf(point.evidence.rows[0].achieved) - rr_delta(KEEP, 100, Rational(2))) < 1e-30


def test_pld_accountant_ignores_count_for_randomized_response():
    """compose(event, count) answers for one run; compose(event) in a loop answers for T runs, above the exact."""
    once = PLDAccountant(REPLACE)
    once.compose(RR_EVENT, 100)
    looped = PLDAccountant(REPLACE)
    for _ in range(100):
        looped.compose(RR_EVENT)
    exact = rr_delta(KEEP, 100, Rational(2))
    assert once.get_delta(2.0) == 0 < exact  # the under-report is real
    assert exact <= looped.get_delta(2.0) <= exact * 1.05
    spec = dp.spec(_rr, universe=BIT, claims=[reported_deltas(once.get_delta, [2.0], 100, "bug", source="once"),
                                              reported_deltas(looped.get_delta, [2.0], 100, "loop", source="loop")])
    assert _statuses(spec) == ["refuted", "verified"]


def test_rdp_accountant_bounds_randomized_response():
    acc = RdpAccountant(neighboring_relation=REPLACE)
    acc.compose(RR_EVENT, 1000)
    assert acc.get_delta(15.0) > rr_delta(KEEP, 1000, Rational(15))
    assert rr_delta(KEEP, 1000, Fraction(acc.get_epsilon(1e-6))) < 1e-6


@pytest.mark.parametrize("times", [10, 100, 1000])
def test_dp_accounting_gaussian_against_closed_form(times):
    for accountant in (PLDAccountant(), RdpAccountant()):
        accountant.compose(dp_event.GaussianDpEvent(noise_multiplier=10.0), times)
        at = 1.0 if times < 1000 else 5.0
        assert accountant.get_delta(at) >= gaussian_delta(10.0, times, at)
        assert gaussian_delta(10.0, times, accountant.get_epsilon(1e-6)) <= 1e-6


def test_prv_upper_bounds_hold_for_the_gaussian_and_estimate_is_no_bound():
    acc = prv_accountant.PRVAccountant(prvs=[prv_accountant.GaussianMechanism(noise_multiplier=10.0)],
                                       max_self_compositions=[10], eps_error=0.1, delta_error=1e-10)
    lower, estimate, upper = acc.compute_delta(0.5, [10])
    exact = gaussian_delta(10.0, 10, 0.5)
    assert lower <= exact <= upper
    assert gaussian_delta(10.0, 10, acc.compute_epsilon(1e-6, [10])[2]) <= 1e-6


def test_prv_upper_bound_fails_for_composed_randomized_response():
    """PureDPMechanism(1), T = 1000: the 'upper' delta at 500 is 1e-10 while the binomial sum is 0.08."""
    acc = prv_accountant.PRVAccountant(prvs=[prv_accountant.PureDPMechanism(eps=1.0)],
                                       max_self_compositions=[1000], eps_error=0.1, delta_error=1e-10)
    upper = acc.compute_delta(500.0, [1000])[2]
    with mpmath.workdps(60):
        keep = mpmath.e / (1 + mpmath.e)
        exact = rr_delta(keep, 1000, Rational(500))
        assert upper < 1e-9 and exact > mpmath.mpf("0.08")
        eps_up = acc.compute_epsilon(1e-6, [1000])[2]
        assert rr_delta(keep, 1000, Fraction(eps_up)) > mpmath.mpf("0.99")
    spec = dp.spec(_rr_eps_one, universe=BIT, claims=[dp.profile(at=[500], delta=Rational(Fraction(upper).numerator,
                                                                                            Fraction(upper).denominator),
                                                                 times=1000)])
    assert _statuses(spec) == ["refuted"]


def test_planted_under_report_is_refuted_and_over_report_verified():
    """An 'accountant' reporting the exact delta times (1 -+ 1e-9) as a float."""
    exact = rr_delta(KEEP, 100, Rational(2))
    below = float(exact * (1 - mpmath.mpf(10) ** -9))
    above = float(exact * (1 + mpmath.mpf(10) ** -9))
    spec = dp.spec(_rr, universe=BIT, claims=[reported_deltas(lambda e: below, [2.0], 100, "below", source="below"),
                                              reported_deltas(lambda e: above, [2.0], 100, "above", source="above")])
    points = dp.check(spec)
    assert [p.status.value for p in points] == ["refuted", "verified"]
    witness = points[0].witness
    with mpmath.workdps(50):
        excess = mpmath.mpf(witness.p) - mpmath.exp(2) * mpmath.mpf(witness.p_prime)
        assert abs(excess - exact) < mpmath.mpf(10) ** -30  # the witness event carries the whole delta


def test_planted_gaussian_epsilon_too_small_is_refuted():
    """get_epsilon answering 1% below the true epsilon at 1e-6: delta there exceeds 1e-6."""
    acc = PLDAccountant()
    acc.compose(dp_event.GaussianDpEvent(noise_multiplier=10.0), 100)
    spec = dp.spec(_gaussian, universe=ADD_REMOVE,
                   claims=[reported_epsilon(lambda d: acc.get_epsilon(d) * 0.99, 1e-6, 100, "low", source="low"),
                           reported_epsilon(acc.get_epsilon, 1e-6, 100, "reported", source="reported")])
    assert _statuses(spec) == ["refuted", "verified"]


def test_spec_files_reach_their_expectations():
    from dpverify.options import Options
    from dpverify.runner import check_paths
    report = check_paths([str(SPEC_DIR)], Options())
    claims = {(s.name, c.claim_id): c for s in report.specs for c in s.claims}
    assert not any(s.error for s in report.specs)
    assert all(c.as_expected for c in claims.values()), [k for k, c in claims.items() if not c.as_expected]
    refuted = sorted(k for k, c in claims.items() if c.status.value == "refuted")
    assert refuted == sorted([("randomized_response", f"pld_{w}_T{t}") for w in ("delta", "epsilon") for t in (10, 100, 1000)]
                             + [("rr_prv", "upper_epsilon_T100"), ("rr_prv", "upper_delta_T1000"),
                                ("rr_prv", "upper_epsilon_T1000"), ("rr_prv", "upper_delta_T100_fine"),
                                ("rr_prv", "upper_epsilon_T100_fine"),
                                ("population_amplification", "population_overstated"),
                                ("subsampled_laplace", "pld_coarse_delta_T1"), ("subsampled_laplace", "halved_delta_T1")])
    # one DP-SGD step composed 1 to 1000 times: no accountant violates (subsampled_gaussian.py)
    assert all(c.status.value == "verified" for (s, _), c in claims.items() if s == "dpsgd")
    assert len([k for k in claims if k[0] == "dpsgd"]) == 21
    assert len(claims) >= 40


def test_report_comparison_table():
    """The profile section ends with the comparison table: ratio and verdict per eps (slack, under-report,
    undecided between the ends of an enclosure)."""
    from dpverify.evidence import ProfileRow
    from dpverify.report import sections
    from dpverify.report.blocks import Table
    from dpverify.report.section_parts import Context
    from dpverify.report.sections_accounting import ratio, verdict
    from dpverify.options import Options
    from dpverify.runner import check_paths
    report = check_paths([str(SPEC_DIR / "google_dp_accounting.py")], Options(), spec_filter="randomized_response",
                         claim_filter="pld_looped_delta_T100")
    claim = next(c for s in report.specs for c in s.claims if c.claim_id == "pld_looped_delta_T100")
    table = [b for b in sections.blocks_for(claim, None, Context("t", lambda text: text)) if isinstance(b, Table)][-1]
    assert table.headers[5:] == ("ratio", "verdict")
    assert [row[2] for row in table.rows] == ["2", "4"] and all(row[6] == "slack" for row in table.rows)
    assert 1 < float(table.rows[0][5]) < 1.01  # 0.0679372 reported against 0.067353 exact
    exact = ProfileRow("1", "0.5", achieved="0.25")
    assert (verdict(exact), ratio(exact)) == ("slack", "2")
    assert verdict(ProfileRow("1", "0.2", achieved="0.25")) == "under-report"
    bracket = ProfileRow("1", "0.3", achieved_lower="0.25", achieved_upper="0.35")
    assert verdict(bracket) == "undecided"
    assert verdict(ProfileRow("1", "0.2", achieved_lower="0.25", achieved_upper="0.35")) == "under-report"
    assert (verdict(ProfileRow("1", "0", achieved="0")), ratio(ProfileRow("1", "0", achieved="0"))) == ("holds", "–")


def test_opendp_composition_against_independent_values():
    """OpenDP's basic composition of randomized response rounds T ln 3 upwards (so delta_T = 0 there, and
    dpverify says so), and its zCDP-to-approxDP epsilon bounds the Gaussian closed form."""
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    rr = odp.m.make_randomized_response_bool(0.75)
    composed = odp.c.make_composition([rr] * 100).map(1)
    with mpmath.workdps(60):
        assert _mp(composed) > 100 * mpmath.log(3)
        assert rr_delta(mpmath.mpf(3) / 4, 100, Fraction(composed)) == 0
        assert rr_delta(mpmath.mpf(3) / 4, 100, Fraction(composed) * Fraction(999, 1000)) > 0  # basic composition is tight
    gaussian = (odp.atom_domain(T=float, nan=False), odp.absolute_distance(T=float)) >> odp.m.then_gaussian(10.0)
    approx = odp.c.make_zCDP_to_approxDP(odp.c.make_composition([gaussian] * 100))
    eps_at, delta = odp.c.make_fix_delta(approx, 1e-6).map(1.0)
    assert gaussian_delta(10.0, 100, eps_at) <= delta
    spec = dp.spec(lambda data: dp.categorical({data[0]: Rational(3, 4), 1 - data[0]: Rational(1, 4)}), universe=BIT,
                   claims=[dp.profile(at=[Rational(Fraction(composed).numerator, Fraction(composed).denominator)],
                                      delta=0, times=100),
                           dp.profile(at=[Rational(Fraction(composed).numerator, Fraction(composed).denominator) * 999
                                          / 1000], delta=0, times=100)])
    assert _statuses(spec) == ["verified", "refuted"]
