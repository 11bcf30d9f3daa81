"""Rényi DP and zCDP claims (dpverify.checks.divergence): exact values against hand-derived
formulas at 50 digits, mutants refuted with their witness, the supremum over orders of a law
peaking at an interior order, a property against a brute-force mpmath computation, proofs,
refused declarations and the CLI's JSON."""
from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
import sympy
from hypothesis import HealthCheck, given, settings, strategies as st
from sympy import Rational

import dpverify as dp
from dpverify.errors import SpecError

ROOT = Path(__file__).resolve().parent.parent
eps = dp.symbol("eps", positive=True)
ONE_BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)


def _rr(data, eps):
    return dp.randomized_response(data[0], eps)


def _run(program, claims, grid, universe=ONE_BIT):
    return dp.check(dp.spec(program, universe=universe, grid=grid, claims=claims))


def _agree(text: str, value: mpmath.mpf, digits: int = 30) -> bool:
    with mpmath.workdps(60):
        return abs(mpmath.mpf(text) - value) <= abs(value) * mpmath.mpf(10) ** -digits


# ----- exact values against closed forms -----------------------------------------------------

@pytest.mark.parametrize("alpha", [Rational(3, 2), 2, 5])
def test_randomized_response_divergence_is_the_hand_derived_sum(alpha):
    """D_alpha of randomized response at eps = 1: with p = e/(1+e), q = 1/(1+e),
    D_alpha = ln(p^alpha q^(1-alpha) + q^alpha p^(1-alpha)) / (alpha - 1), both pairs alike."""
    (result,) = _run(_rr, [dp.renyi(alpha, 10)], {eps: [1]})
    assert result.status.value == "verified"
    with mpmath.workdps(50):
        a = mpmath.mpf(alpha.p) / alpha.q if isinstance(alpha, Rational) else mpmath.mpf(alpha)
        p, q = mpmath.e / (1 + mpmath.e), 1 / (1 + mpmath.e)
        expected = mpmath.log(p ** a * q ** (1 - a) + q ** a * p ** (1 - a)) / (a - 1)
    assert _agree(result.evidence.achieved, expected)
    assert result.evidence.pairs == 2 and result.evidence.pair == ["(0,)", "(1,)"]


def _laplace_mean(data, eps):
    return dp.laplace_mechanism(dp.mean(lambda v: v, domain=dp.interval(0, 1)), data, eps,
                                neighbours=dp.REPLACE_ONE)


@pytest.mark.parametrize("alpha", [2, Rational(7, 3)])
def test_laplace_divergence_matches_numerical_integration(alpha):
    """The closed form used for released Laplace values against an independent numerical integral
    of p^alpha q^(1-alpha) at 50 digits (mean of 2 bits, Delta = 1/2, b = Delta/eps, eps = 1/2)."""
    (result,) = _run(_laplace_mean, [dp.renyi(alpha, 10)], {eps: [Rational(1, 2)]},
                     dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE))
    assert result.status.value == "verified"
    with mpmath.workdps(50):
        a = mpmath.mpf(sympy.Rational(alpha).p) / sympy.Rational(alpha).q
        b, shift = mpmath.mpf(1), mpmath.mpf(1) / 2  # b = (1/2)/(1/2); centres 1/2 apart

        def lap(x, mu):
            return mpmath.exp(-abs(x - mu) / b) / (2 * b)
        integral = mpmath.quad(lambda x: lap(x, 0) ** a * lap(x, shift) ** (1 - a), [-mpmath.inf, 0, shift, mpmath.inf])
        expected = mpmath.log(integral) / (a - 1)
    assert _agree(result.evidence.achieved, expected)


def test_exact_claim_is_decided_tight_by_sympy():
    (result,) = dp.check(dp.spec(_rr, universe=ONE_BIT, grid={eps: [1]},
                                 claims=[dp.renyi(2, sympy.log(2 * sympy.cosh(eps) - 1))]), proofs=False)
    assert result.status.value == "verified" and "tight" in result.message and "by sympy" in result.message
    assert result.evidence.tightness == "1"


def test_exact_claim_is_proved_for_every_eps():
    """With proofs, the tie is covered by the proof for every eps (no sympy decision at the grid point)."""
    (result,) = _run(_rr, [dp.renyi(2, sympy.log(2 * sympy.cosh(eps) - 1))], {eps: [1]})
    assert result.status.value == "proved" and "tight" in result.message
    assert "exact real-root isolation" in result.message and result.evidence.tightness == "1"


# ----- mutants ------------------------------------------------------------------------------------

def test_claim_below_the_achieved_divergence_is_refuted_with_its_witness():
    (result,) = _run(_rr, [dp.renyi(2, Rational(7, 10))], {eps: [1]})  # achieved D_2 = ln(2 cosh 1 - 1) = 0.735...
    assert result.status.value == "refuted"
    w = result.witness
    assert (w.x, w.x_prime, w.output, w.quantity) == ((0,), (1,), "order alpha = 2", "divergence")
    assert w.p.startswith("0.73532566405551922470") and w.p_prime.startswith("0.7000")
    assert "confirmed on both laws recomputed at 100 digits" in result.message
    from dpverify.report.evidence_lines import evidence_lines
    assert evidence_lines(result.evidence)[0].startswith("claimed D_alpha 0.7000")


def test_claim_just_above_the_achieved_divergence_holds():
    (result,) = _run(_rr, [dp.renyi(2, Rational(736, 1000))], {eps: [1]})
    assert result.status.value == "verified"


def _support_grows(data, eps):
    """Outputs 'rare' only from dataset (1,): an infinite divergence."""
    return dp.categorical({"a": Rational(1, 2), "b": Rational(1, 2)} if data[0] == 0
                          else {"a": Rational(1, 2), "rare": Rational(1, 2)})


def test_output_possible_under_one_dataset_only_is_infinite():
    renyi, zcdp = _run(_support_grows, [dp.renyi(2, 100), dp.zcdp(100)], {eps: [1]})
    assert renyi.status.value == zcdp.status.value == "refuted"
    assert renyi.witness.p == "inf" and "possible under X only" in renyi.message


# ----- zCDP: the supremum over orders ----------------------------------------------------------

def _rare_event(data, eps):
    """P = (99/100, 1/100), Q = (1 - 10^-4, 10^-4): D_alpha / alpha peaks near alpha = 3.5."""
    return dp.bernoulli(Rational(1, 100) if data[0] == 0 else Rational(1, 10 ** 4))


def _brute_rate(p, q, orders):
    with mpmath.workdps(60):
        return max(mpmath.log(sum(a ** o * b ** (1 - o) for a, b in zip(p, q) if a)) / (o - 1) / o for o in orders)


def test_zcdp_supremum_at_an_interior_order():
    refuted, holds = _run(_rare_event, [dp.zcdp(Rational(3, 4)), dp.zcdp(Rational(4, 5))], {eps: [1]})
    assert refuted.status.value == "refuted"
    alpha = Fraction(refuted.witness.output.split("= ")[1])
    assert 3 < alpha < 4  # interior: neither near 1 (KL = 0.036) nor large
    assert holds.status.value == "verified"
    assert 0.77 < float(holds.evidence.achieved) < 0.8 and holds.evidence.lower_bound
    orders = [1 + mpmath.mpf(k) / 100 for k in range(1, 2000)]
    brute = _brute_rate([Rational(99, 100), Rational(1, 100)], [1 - Rational(1, 10 ** 4), Rational(1, 10 ** 4)],
                        [mpmath.mpf(o) for o in orders])
    assert abs(mpmath.mpf(holds.evidence.achieved) - brute) < 1e-4
    assert mpmath.mpf(holds.evidence.achieved) >= brute - 1e-30  # the search found at least the grid's best


def test_zcdp_of_randomized_response_sup_is_the_kl_limit():
    """For randomized response D_alpha / alpha decreases from its limit at alpha -> 1 (the KL
    divergence eps tanh(eps/2)): a rho just below it is refuted at an order close to 1."""
    kl = 1 * sympy.tanh(Rational(1, 2))
    below, above = _run(_rr, [dp.zcdp(kl * Rational(99, 100)), dp.zcdp(kl * Rational(101, 100))], {eps: [1]})
    assert below.status.value == "refuted" and Fraction(below.witness.output.split("= ")[1]) < Fraction(11, 10)
    assert above.status.value == "verified"


# ----- property: the verdict against a brute-force computation ----------------------------------

_PROBABILITY = st.integers(min_value=1, max_value=9)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(weights=st.lists(st.tuples(_PROBABILITY, _PROBABILITY), min_size=2, max_size=3),
       claim=st.fractions(min_value=Fraction(1, 100), max_value=Fraction(2)),
       order=st.sampled_from([Rational(3, 2), Rational(2), Rational(4)]))
def test_verdicts_agree_with_brute_force(weights, claim, order):
    """Random laws on two neighbouring datasets: never verified when the brute-force value (mpmath at
    60 digits; zCDP over a fine grid of orders) exceeds the claim, and refuted when it exceeds it."""
    p = [Rational(a, sum(w[0] for w in weights)) for a, _ in weights]
    q = [Rational(b, sum(w[1] for w in weights)) for _, b in weights]

    def program(data, eps):
        return dp.categorical(dict(enumerate(p if data[0] == 0 else q)))
    rho = Rational(claim.numerator, claim.denominator)
    renyi, zcdp = _run(program, [dp.renyi(order, rho), dp.zcdp(rho)], {eps: [1]})
    with mpmath.workdps(60):
        mp = [[mpmath.mpf(v.p) / v.q for v in law] for law in (p, q)]
        a = mpmath.mpf(order.p) / order.q
        divergence = max(mpmath.log(sum(x ** a * y ** (1 - a) for x, y in zip(*laws))) / (a - 1)
                         for laws in (mp, mp[::-1]))
        orders = [1 + mpmath.mpf(k) / 50 for k in range(1, 1500)]
        rate = max(_brute_rate(*laws, orders) for laws in (mp, mp[::-1]))
        bound = mpmath.mpf(rho.p) / rho.q
    if divergence > bound:
        assert renyi.status.value == "refuted", renyi.message
    elif divergence < bound * (1 - mpmath.mpf(10) ** -20):
        assert renyi.status.value in ("verified", "proved"), renyi.message
    if rate > bound:
        assert zcdp.status.value == "refuted", zcdp.message
    if zcdp.status.value in ("verified", "proved"):
        assert rate <= bound


# ----- proofs -----------------------------------------------------------------------------------

def test_gaussian_zcdp_proved_for_every_rho_and_misstated_rho_refuted():
    rho, sigma = dp.symbol("rho", positive=True), dp.symbol("sigma", positive=True)
    count = dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE)
    results = _run(lambda data, rho: dp.gaussian(sum(data), 1 / dp.sqrt(2 * rho)),
                   [dp.zcdp(rho), dp.zcdp(rho / 2)], {rho: [Rational(1, 3)]}, count)
    assert [r.status.value for r in results] == ["proved", "refuted"]
    assert "proved for every rho" in results[0].message
    results = _run(lambda data, sigma: dp.gaussian(sum(data), sigma),
                   [dp.zcdp(1 / (2 * sigma ** 2)), dp.zcdp(1 / (4 * sigma ** 2))], {sigma: [2]}, count)
    assert [r.status.value for r in results] == ["proved", "refuted"]
    assert results[1].evidence.achieved.startswith("0.125")


# ----- declarations -------------------------------------------------------------------------------

@pytest.mark.parametrize("make, words", [
    (lambda: dp.renyi(1, 1), "must be > 1"),
    (lambda: dp.renyi(0.5, 1), "Fraction(1, 2)"),
    (lambda: dp.renyi(sympy.oo, 1), "dp.private(eps)"),
    (lambda: dp.renyi(2, -1), "non-negative"),
    (lambda: dp.zcdp(0.1), "Fraction(1, 10)"),
    (lambda: dp.zcdp(-1), "non-negative"),
    (lambda: dp.renyi("two", 1), "not a number"),
])
def test_invalid_declarations_name_the_fix(make, words):
    with pytest.raises(SpecError) as err:
        make()
    assert words in str(err.value)


def test_order_not_above_one_at_a_grid_point_is_an_error():
    (result,) = _run(_rr, [dp.renyi(eps, 1)], {eps: [Rational(1, 2)]})
    assert result.status.value == "error" and "not > 1" in result.message


# ----- the CLI ------------------------------------------------------------------------------------

def test_cli_json_on_the_catalogue_spec():
    run = subprocess.run([sys.executable, "-m", "dpverify", "check", "spec/renyi.py", "--json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode in (0, 1), run.stderr
    document = json.loads(run.stdout)
    claims = [c for s in document["specs"] for c in s["claims"]]
    assert claims and all(c["as_expected"] for c in claims)
    figures = claims[0]["points"][0]["figures"]
    assert {"kind", "claimed", "achieved", "alpha", "pair", "per_pair", "curve"} <= set(figures)


# ----- ties the intervals cannot separate --------------------------------------------------------

def test_claim_a_hair_below_the_exact_divergence_is_refuted_exactly():
    tiny = Rational(1, 10 ** 70)  # far below the 50-digit intervals' width
    (result,) = _run(_rr, [dp.renyi(2, sympy.log(2 * sympy.cosh(eps) - 1) - tiny)], {eps: [1]})
    assert result.status.value == "refuted" and "decided exactly by sympy" in result.message


def test_gaussian_rate_a_hair_above_rho_is_refuted_exactly():
    rho = dp.symbol("rho", positive=True)
    count = dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE)
    holds, broken = _run(lambda data, rho: dp.gaussian(sum(data), 1 / dp.sqrt(2 * rho)),
                         [dp.zcdp(rho), dp.zcdp(rho - Rational(1, 10 ** 70))], {rho: [Rational(1, 10)]}, count)
    assert holds.status.value == "proved"
    assert broken.status.value == "refuted" and broken.witness.output == "order alpha = 2"
    assert "decided exactly by sympy" in broken.message


def test_universe_without_neighbours_is_refused():
    lonely = dp.universe([0], n=1, neighbours=dp.REPLACE_ONE)
    (result,) = _run(_rr, [dp.renyi(2, 1)], {eps: [1]}, lonely)
    assert result.status.value == "error" and "no pair of neighbouring datasets" in result.message


def test_unclamped_geometric_tails_lumped_keep_the_exact_divergence():
    """The engine lumps the tails of two-sided geometric noise (the ratio is constant there, so the
    lumped sum P(T)^alpha Q(T)^(1-alpha) is exactly the tail's): D_alpha against the infinite series."""
    def geometric(data, eps):
        return dp.geometric(data[0], dp.exp(eps))
    results = _run(geometric, [dp.renyi(2, 5), dp.renyi(Rational(7, 2), 5)], {eps: [1]})
    with mpmath.workdps(60):
        a = mpmath.exp(-1)

        def law(z, c):
            return (1 - a) / (1 + a) * a ** abs(z - c)
        for result, order in zip(results, (mpmath.mpf(2), mpmath.mpf(7) / 2)):
            series = mpmath.nsum(lambda z: law(z, 0) ** order * law(z, 1) ** (1 - order), [-mpmath.inf, mpmath.inf])
            assert result.status.value == "verified"
            assert _agree(result.evidence.achieved, mpmath.log(series) / (order - 1))
