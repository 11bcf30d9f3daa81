"""Continuous noise in mechanisms: exact laws against textbook integrals, and privacy from densities.

The output laws of noisy max (Laplace and one-sided exponential noise) and of the
sparse vector technique are compared with mpmath.quad of the textbook formulas
(P[i wins] = integral f_i(x) prod_{j != i} F_j(x) dx), on random answer vectors;
the certified interval reading must enclose the exact sympy reading.  Privacy
verdicts are pinned to facts from the literature, every refutation's witness is
re-evaluated here from the explicit densities, and the Gaussian mechanism's
(eps, delta) verdicts are compared with the analytic formula computed with
mpmath.ncdf.  Each correct mechanism's mutants (a halved scale, a missing
noise) must be refuted.
"""
from __future__ import annotations

import itertools
import re
from fractions import Fraction

import mpmath
import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpverify as dp
from dpverify.engine.continuous.gaussian_delta import gaussian_delta, phi
from dpverify.engine.program.backend import IntervalBackend, SympyBackend
from dpverify.engine.continuous import piecewise
from dpverify.engine.continuous.noisy import Density
from dpverify.engine.program.reading import distribution

from .helpers import encloses, frac, lo_hi, mid

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
IV = IntervalBackend(50)
TOL = mpmath.mpf(10) ** -12
HALF = Fraction(1, 2)

eps = dp.symbol("eps", positive=True)
sigma = dp.symbol("sigma", positive=True)
delta = dp.symbol("delta", positive=True)

answers = st.fractions(min_value=0, max_value=3, max_denominator=2)
epsilons = st.fractions(min_value=Fraction(1, 4), max_value=2, max_denominator=4)


# -- independent numerics ------------------------------------------------------------------------

def close(x, value, tol=TOL) -> bool:
    with mpmath.workdps(30):
        return abs(mid(x) - value) < tol


def pdf(kind: str, mu, b):
    mu, b = frac(mu), frac(b)
    if kind == "laplace":
        return lambda x: mpmath.exp(-abs(x - mu) / b) / (2 * b)
    return lambda x: mpmath.exp(-(x - mu) / b) / b if x >= mu else mpmath.mpf(0)


def cdf(kind: str, mu, b):
    mu, b = frac(mu), frac(b)
    if kind == "laplace":
        return lambda x: mpmath.exp((x - mu) / b) / 2 if x < mu else 1 - mpmath.exp(-(x - mu) / b) / 2
    return lambda x: 1 - mpmath.exp(-(x - mu) / b) if x >= mu else mpmath.mpf(0)


def integrate(fn, breaks) -> mpmath.mpf:
    inner = sorted({frac(c) for c in breaks})
    return mpmath.quad(fn, [-mpmath.inf, *inner, mpmath.inf])


def textbook_noisy_max(q, b, kind) -> list:
    """P[i wins] = integral f_i(x) prod_{j != i} F_j(x) dx, by quadrature."""
    out = []
    with mpmath.workdps(30):
        for i in range(len(q)):
            f = pdf(kind, q[i], b)
            others = [cdf(kind, q[j], b) for j in range(len(q)) if j != i]
            out.append(integrate(lambda x: f(x) * mpmath.fprod(F(x) for F in others), q))
    return out


def textbook_max_density(q, b, kind, v) -> mpmath.mpf:
    """The density of max_i (q_i + noise_i) at v: sum_i f_i(v) prod_{j != i} F_j(v)."""
    with mpmath.workdps(60):
        v = frac(v)
        return mpmath.fsum(pdf(kind, q[i], b)(v) * mpmath.fprod(cdf(kind, q[j], b)(v) for j in range(len(q)) if j != i)
                           for i in range(len(q)))


def textbook_svt(q, threshold, b_threshold, b_query) -> dict:
    """Sparse vector with c = 1: P[first query above the noisy threshold is i], P[none]."""
    f = pdf("laplace", threshold, b_threshold)
    Fs = [cdf("laplace", qi, b_query) for qi in q]
    out = {}
    with mpmath.workdps(30):
        breaks = [threshold, *q]
        for i in range(len(q)):
            out[i] = integrate(lambda t: f(t) * mpmath.fprod(F(t) for F in Fs[:i]) * (1 - Fs[i](t)), breaks)
        out[None] = integrate(lambda t: f(t) * mpmath.fprod(F(t) for F in Fs), breaks)
    return out


def ncdf_delta(distance, e) -> mpmath.mpf:
    """delta(eps) of a Gaussian pair at scaled distance D (Balle and Wang 2018), with mpmath.ncdf."""
    with mpmath.workdps(50):
        D, e = mpmath.mpf(distance), frac(e)
        return mpmath.ncdf(D / 2 - e / D) - mpmath.exp(e) * mpmath.ncdf(-D / 2 - e / D)


def decimal_of(text: str) -> mpmath.mpf:
    with mpmath.workdps(50):
        return mpmath.mpf(text)


def achieved(result) -> tuple[mpmath.mpf, bool]:
    """(achieved epsilon, whether it is only a lower bound), from either ">= x" or a lower-bound flag."""
    text = result.evidence.achieved_epsilon.strip()
    lower = text.startswith(">=") or bool(result.evidence.achieved_is_lower_bound)
    return decimal_of(text.lstrip(">= ")), lower


# -- mechanisms ----------------------------------------------------------------------------------

def noisy_max(kind: str = "laplace", scale=2, release: bool = False):
    """Report noisy max (the index, or the noisy value with ``release``) with noise of scale ``scale``/eps."""
    noise = dp.laplace if kind == "laplace" else dp.exponential_noise

    def mech(q, eps):
        best, bv = 0, noise(q[0], scale / eps)
        for i in range(1, len(q)):
            x = noise(q[i], scale / eps)
            if x > bv:
                best, bv = i, x
        return bv if release else best
    return mech


def sparse_vector(threshold_scale=2, query_scale=4, threshold=0):
    """Sparse vector with c = 1 (Lyu, Su and Li, Alg. 1): the first query above one noisy threshold."""
    def mech(q, eps):
        rho = dp.laplace(threshold, threshold_scale / eps)
        for i, qi in enumerate(q):
            if dp.laplace(qi, query_scale / eps) >= rho:
                return i
        return None
    return mech


def laplace_mechanism(q, eps):
    return dp.laplace(q[0], 1 / eps)


def histogram(q, eps):
    return tuple(dp.laplace(c, 1 / eps) for c in q)


def gaussian_mechanism(q, sigma):
    return tuple(dp.gaussian(c, sigma) for c in q)


def law(mech, q, e, backend=IV):
    return distribution(mech, tuple(q), {"eps": sympy.Rational(e.numerator, e.denominator)}, backend)


def check(mech, universe, claim, e=HALF, grid=None):
    [result] = dp.check(dp.spec(mech, universe=universe, grid=grid or {eps: [e]}, claims=[claim]), proofs=False)
    return result


UNIVERSE = dp.answers([0, 1, 2], 3)


# -- exact laws against textbook integrals --------------------------------------------------------

@SETTINGS
@given(kind=st.sampled_from(["laplace", "exponential"]), q=st.lists(answers, min_size=2, max_size=4), e=epsilons)
def test_noisy_max_matches_the_textbook_integral(kind, q, e) -> None:
    got = law(noisy_max(kind), q, e)
    expected = textbook_noisy_max(q, 2 / e, kind)
    assert set(got) <= set(range(len(q)))
    for i, p in enumerate(expected):
        assert close(got.get(i, IV.num(0)), p), (i, got.get(i), p)
    total = sum(got.values(), IV.num(0))
    assert encloses(total, 1)


@SETTINGS
@given(q=st.lists(answers, min_size=1, max_size=3), threshold=answers, e=epsilons)
def test_sparse_vector_matches_the_textbook_integral(q, threshold, e) -> None:
    got = law(sparse_vector(threshold=threshold), q, e)
    expected = textbook_svt(q, threshold, 2 / e, 4 / e)
    for output, p in expected.items():
        assert close(got.get(output, IV.num(0)), p), (output, got.get(output), p)
    assert set(got) <= set(expected)
    assert encloses(sum(got.values(), IV.num(0)), 1)


@pytest.mark.parametrize("kind", ["laplace", "exponential"])
@pytest.mark.parametrize("m", [2, 3, 4])
def test_noisy_max_of_equal_answers_is_uniform(kind, m) -> None:
    got = law(noisy_max(kind), [1] * m, Fraction(1, 3))
    assert set(got) == set(range(m))
    for p in got.values():
        assert encloses(p, sympy.Rational(1, m))
        lo, hi = lo_hi(p)
        assert hi - lo < mpmath.mpf(10) ** -40


@pytest.mark.parametrize("kind", ["laplace", "exponential"])
def test_noisy_max_of_equal_answers_is_exactly_uniform_in_sympy(kind) -> None:
    got = law(noisy_max(kind), [1, 1, 1], Fraction(1, 2), SympyBackend())
    for p in got.values():
        assert sympy.simplify(p - sympy.Rational(1, 3)) == 0


def test_two_laplace_values_closed_form() -> None:
    """P[q1 + Lap(b) > q0 + Lap(b)] = 1 - (2 + d/b) e^(-d/b)/4 for d = q1 - q0 >= 0, exactly."""
    got = law(noisy_max(), [0, 1], HALF, SympyBackend())  # b = 4, d = 1
    expected = 1 - (2 + sympy.Rational(1, 4)) * sympy.exp(-sympy.Rational(1, 4)) / 4
    assert sympy.simplify(got[1] - expected) == 0
    assert sympy.simplify(got[0] + got[1] - 1) == 0


@pytest.mark.parametrize("mech, q", [
    (noisy_max("laplace"), (0, 1, 2)), (noisy_max("laplace"), (2, Fraction(1, 2), 1)),
    (noisy_max("exponential"), (0, 1, 2)), (noisy_max("exponential"), (1, 0, Fraction(3, 2))),
    (sparse_vector(), (0, 1, 2)), (sparse_vector(threshold=1), (2, 0, 1)),
], ids=["nm-lap-a", "nm-lap-b", "nm-exp-a", "nm-exp-b", "svt-a", "svt-b"])
def test_intervals_enclose_the_exact_sympy_law(mech, q) -> None:
    e = Fraction(2, 3)
    exact, certified = law(mech, q, e, SympyBackend()), law(mech, q, e)
    assert set(exact) == set(certified)
    for output, p in exact.items():
        assert encloses(certified[output], p), (output, certified[output], sympy.N(p, 60))


# -- privacy of discrete outputs --------------------------------------------------------------------

def brute_force_achieved(mech, values, m, e) -> mpmath.mpf:
    """max over ordered L-inf neighbours of max_o ln P(o|X)/P(o|X'), by a plain loop over textbook laws."""
    data = list(itertools.product(values, repeat=m))
    laws = {x: law(mech, x, e) for x in data}
    best = mpmath.mpf(0)
    with mpmath.workdps(40):
        for x, y in itertools.permutations(data, 2):
            if all(abs(a - b) <= 1 for a, b in zip(x, y)):
                for o, p in laws[x].items():
                    if o not in laws[y]:
                        return mpmath.inf
                    best = max(best, mpmath.log(mid(p)) - mpmath.log(mid(laws[y][o])))
    return best


@pytest.mark.parametrize("mech", [noisy_max("laplace"), noisy_max("exponential"), sparse_vector()],
                         ids=["noisy-max-laplace", "noisy-max-exponential", "sparse-vector"])
def test_textbook_mechanisms_are_private_and_the_achieved_epsilon_is_the_plain_maximum(mech) -> None:
    result = check(mech, UNIVERSE, dp.private(eps))
    assert result.status.value == "verified", result.message
    achieved = decimal_of(result.evidence.achieved_epsilon)
    assert achieved <= HALF + mpmath.mpf(10) ** -35
    with mpmath.workdps(40):
        assert abs(achieved - brute_force_achieved(mech, [0, 1, 2], 3, HALF)) < mpmath.mpf(10) ** -30


def test_noisy_max_with_exponential_noise_is_exactly_tight() -> None:
    """Noisy max with Exp(2/eps) reaches eps exactly (decided by sympy, not by intervals)."""
    result = check(noisy_max("exponential"), UNIVERSE, dp.private(eps))
    assert result.status.value == "verified"
    assert decimal_of(result.evidence.achieved_epsilon) == decimal_of("0.5")
    assert "tight" in result.message


def test_noisy_max_refuted_below_its_achieved_epsilon_with_a_checkable_witness() -> None:
    mech = noisy_max("laplace")
    result = check(mech, UNIVERSE, dp.private(eps / 2))
    assert result.status.value == "refuted"
    assert decimal_of(result.evidence.achieved_epsilon) > decimal_of("0.25")
    w = result.witness
    with mpmath.workdps(30):
        p = textbook_noisy_max(w.x, 4, "laplace")[w.output]
        q = textbook_noisy_max(w.x_prime, 4, "laplace")[w.output]
        assert abs(decimal_of(w.p) - p) < TOL and abs(decimal_of(w.p_prime) - q) < TOL
        assert p > mpmath.exp(mpmath.mpf(1) / 4) * q
    assert all(abs(a - b) <= 1 for a, b in zip(w.x, w.x_prime)) and w.x != w.x_prime


# -- privacy of released values ----------------------------------------------------------------------

def released_points(output: str) -> list[Fraction]:
    """The values v0, v1... at which a density witness is given ("density of the released values (v0, v1)
    at v0 = -1, v1 = 2")."""
    return [Fraction(v) for v in re.findall(r"v\d+ = (-?[\d/]+)", output)]


def test_noisy_max_releasing_the_laplace_value_is_refuted_at_three_halves_eps() -> None:
    """Releasing the maximum of m = 3 Lap(2/eps) values: the loss tends to 3 eps/2 as v -> -inf."""
    result = check(noisy_max("laplace", release=True), dp.answers([0, 1], 3), dp.private(eps))
    assert result.status.value == "refuted", result.message
    value, _ = achieved(result)  # a lower bound while pieces with several terms are only sampled
    with mpmath.workdps(40):
        assert abs(value - mpmath.mpf(3) / 4) < mpmath.mpf(10) ** -35
    w = result.witness
    [v] = released_points(w.output)
    p, q = (textbook_max_density(data, 4, "laplace", v) for data in (w.x, w.x_prime))
    with mpmath.workdps(40):
        assert abs(decimal_of(w.p) - p) < mpmath.mpf(10) ** -30
        assert abs(decimal_of(w.p_prime) - q) < mpmath.mpf(10) ** -30
        assert p > mpmath.exp(HALF.numerator / mpmath.mpf(HALF.denominator)) * q


def test_noisy_max_releasing_the_value_of_two_answers_is_exactly_eps() -> None:
    """With m = 2 the same limit is 2 eps/2 = eps: private, and tight."""
    result = check(noisy_max("laplace", release=True), dp.answers([0, 1], 2), dp.private(eps))
    assert result.status.value == "verified", result.message
    assert achieved(result) == (decimal_of("0.5"), False)
    below = check(noisy_max("laplace", release=True), dp.answers([0, 1], 2), dp.private(eps * Fraction(9, 10)))
    assert below.status.value == "refuted", below.message


def test_noisy_max_releasing_the_exponential_value_has_an_infinite_ratio() -> None:
    result = check(noisy_max("exponential", release=True), dp.answers([0, 1], 3), dp.private(eps))
    assert result.status.value == "refuted", result.message
    assert achieved(result)[0] == mpmath.inf
    w = result.witness
    assert w.ratio == "inf"
    [v] = released_points(w.output)
    assert textbook_max_density(w.x, 4, "exponential", v) > 0
    assert textbook_max_density(w.x_prime, 4, "exponential", v) == 0
    assert decimal_of(w.p_prime) == 0


@pytest.mark.parametrize("mech, universe", [
    (laplace_mechanism, dp.answers([0, 1, 2], 1)),
    (histogram, dp.answers([0, 1, 2], 3, neighbours=dp.l1_one)),
], ids=["laplace-mechanism", "histogram"])
@pytest.mark.parametrize("e", [Fraction(1, 2), Fraction(3, 2)])
def test_laplace_mechanisms_are_exactly_tight(mech, universe, e) -> None:
    result = check(mech, universe, dp.private(eps), e=e)
    assert result.status.value == "verified", result.message
    assert decimal_of(result.evidence.achieved_epsilon) == frac(e)
    assert "tight" in result.message
    # Just below the achieved epsilon the claim is refuted.
    below = check(mech, universe, dp.private(eps * Fraction(99, 100)), e=e)
    assert below.status.value == "refuted"


def test_laplace_witness_is_the_textbook_density_ratio() -> None:
    def halved(q, eps):
        return dp.laplace(q[0], 1 / (2 * eps))
    result = check(halved, dp.answers([0, 1, 2], 1), dp.private(eps))
    assert result.status.value == "refuted"
    assert decimal_of(result.evidence.achieved_epsilon) == 1  # |q - q'| / b = 2 eps
    w = result.witness
    [v] = released_points(w.output)
    with mpmath.workdps(40):
        p, q = pdf("laplace", w.x[0], 1)(frac(v)), pdf("laplace", w.x_prime[0], 1)(frac(v))
        assert abs(decimal_of(w.p) - p) < mpmath.mpf(10) ** -30
        assert abs(decimal_of(w.p_prime) - q) < mpmath.mpf(10) ** -30
        assert p > mpmath.exp(mpmath.mpf(1) / 2) * q


# -- the Gaussian mechanism --------------------------------------------------------------------------

@settings(max_examples=20, deadline=None)
@given(x=st.fractions(min_value=-12, max_value=12, max_denominator=64))
def test_phi_encloses_the_normal_cdf(x) -> None:
    ctx = IntervalBackend(40).ctx
    value = phi(ctx, ctx.mpf(x.numerator) / x.denominator)
    lo, hi = lo_hi(value)
    with mpmath.workdps(60):
        assert lo <= mpmath.ncdf(frac(x)) <= hi


@settings(max_examples=20, deadline=None)
@given(k=st.integers(-12 * 64, 12 * 64))
def test_phi_is_precise_at_exact_points(k) -> None:
    """At a point the context represents exactly (k/64), phi is tight to the working precision."""
    ctx = IntervalBackend(40).ctx
    value = phi(ctx, ctx.mpf(k) / 64)
    lo, hi = lo_hi(value)
    with mpmath.workdps(60):
        expected = mpmath.ncdf(mpmath.mpf(k) / 64)
        assert lo <= expected <= hi
        assert hi - lo < mpmath.mpf(10) ** -36 * expected


@pytest.mark.parametrize("x", [Fraction(-35, 3), Fraction(-61, 5)])
def test_phi_is_precise_at_inexact_points_in_the_far_tail(x) -> None:
    ctx = IntervalBackend(40).ctx
    lo, hi = lo_hi(phi(ctx, ctx.mpf(x.numerator) / x.denominator))
    with mpmath.workdps(60):
        expected = mpmath.ncdf(frac(x))
        assert lo <= expected <= hi
        assert hi - lo < mpmath.mpf(10) ** -30 * expected


def test_a_clearly_private_gaussian_mechanism_with_a_large_sigma_is_verified() -> None:
    """sigma = 20, sensitivity 1, eps = 1: delta(eps) is about 1e-91, far below the claimed 1e-5."""
    [result] = dp.check(dp.spec(gaussian_mechanism, universe=dp.answers([0, 1], 1),
                                grid=[{eps: 1, sigma: 20, delta: Fraction(1, 10 ** 5)}],
                                claims=[dp.private(eps, delta)]), proofs=False)
    assert result.status.value == "verified", result.message


@settings(max_examples=15, deadline=None)
@given(d=st.fractions(min_value=Fraction(1, 8), max_value=6, max_denominator=8), e=epsilons)
def test_gaussian_delta_encloses_the_analytic_formula(d, e) -> None:
    ctx = IntervalBackend(40).ctx
    value = gaussian_delta(ctx, ctx.mpf(d.numerator) / d.denominator, ctx.mpf(e.numerator) / e.denominator)
    lo, hi = lo_hi(value)
    with mpmath.workdps(50):
        expected = ncdf_delta(frac(d), e)
        assert lo <= expected <= hi


def rational_near(x: mpmath.mpf) -> Fraction:
    with mpmath.workdps(50):
        return Fraction(int(mpmath.nint(x * mpmath.mpf(10) ** 40)), 10 ** 40)


@settings(max_examples=8, deadline=None)
@given(s=st.fractions(min_value=Fraction(1, 2), max_value=4, max_denominator=4), e=epsilons,
       m=st.integers(1, 2))
def test_gaussian_mechanism_against_the_analytic_delta(s, e, m) -> None:
    """m Gaussian answers, L-inf neighbours on {0, 1}^m: the worst scaled distance is sqrt(m)/sigma."""
    with mpmath.workdps(50):
        true = ncdf_delta(mpmath.sqrt(m) / frac(s), e)
    universe = dp.answers([0, 1], m)
    for factor, status in ((Fraction(101, 100), "verified"), (Fraction(99, 100), "refuted")):
        claimed = rational_near(true * frac(factor))
        [result] = dp.check(dp.spec(gaussian_mechanism, universe=universe,
                                    grid=[{eps: e, sigma: s, delta: claimed}],
                                    claims=[dp.private(eps, delta)]), proofs=False)
        assert result.status.value == status, (factor, result.message)
        with mpmath.workdps(40):
            assert abs(decimal_of(result.evidence.achieved_delta) - true) < mpmath.mpf(10) ** -30


def test_gaussian_mechanism_is_not_pure_dp() -> None:
    result = check(lambda q, eps: dp.gaussian(q[0], 2), dp.answers([0, 1], 1), dp.private(eps))
    assert result.status.value == "refuted"
    assert achieved(result)[0] == mpmath.inf
    w = result.witness
    [v] = released_points(w.output)
    with mpmath.workdps(40):
        p = mpmath.npdf(frac(v), frac(w.x[0]), 2)
        q = mpmath.npdf(frac(v), frac(w.x_prime[0]), 2)
        assert abs(decimal_of(w.p) - p) < mpmath.mpf(10) ** -30 * p
        assert p > mpmath.e * q


@pytest.mark.parametrize("noise", [dp.gaussian, dp.laplace])
def test_noise_that_ignores_the_data_is_perfectly_private(noise) -> None:
    result = check(lambda q, eps: noise(0, 2), dp.answers([0, 1], 1), dp.private(eps))
    assert result.status.value in ("verified", "proved"), result.message


@pytest.mark.parametrize("noise", [dp.gaussian, dp.laplace])
def test_noise_that_ignores_the_data_achieves_epsilon_zero(noise) -> None:
    result = check(lambda q, eps: noise(0, 2), dp.answers([0, 1], 1), dp.private(eps))
    assert result.evidence.achieved_epsilon is not None and decimal_of(result.evidence.achieved_epsilon) == 0


# -- mutants ---------------------------------------------------------------------------------------

def noisy_max_one_exact(q, eps):
    """Noisy max whose first answer gets no noise."""
    best, bv = 0, q[0]
    for i in range(1, len(q)):
        x = dp.laplace(q[i], 2 / eps)
        if x > bv:
            best, bv = i, x
    return best


def exact_max(q, eps):
    """Noisy max without noise."""
    return max(range(len(q)), key=lambda i: q[i])


def exponential_max_one_exact(q, eps):
    best, bv = 0, q[0]
    for i in range(1, len(q)):
        x = dp.exponential_noise(q[i], 2 / eps)
        if x > bv:
            best, bv = i, x
    return best


def sparse_vector_exact_queries(q, eps):
    """Sparse vector comparing the exact answers with the noisy threshold."""
    rho = dp.laplace(0, 2 / eps)
    for i, qi in enumerate(q):
        if qi >= rho:
            return i
    return None


def laplace_halved(q, eps):
    return dp.laplace(q[0], 1 / (2 * eps))


def laplace_missing(q, eps):
    return q[0]


def histogram_halved(q, eps):
    return tuple(dp.laplace(c, 1 / (2 * eps)) for c in q)


def histogram_one_bin_exact(q, eps):
    return (q[0],) + tuple(dp.laplace(c, 1 / eps) for c in q[1:])


HIST = dp.answers([0, 1, 2], 3, neighbours=dp.l1_one)
MUTANTS = {
    "noisy max, Lap(1/eps)": (noisy_max("laplace", scale=1), UNIVERSE),
    "noisy max, first answer without noise": (noisy_max_one_exact, UNIVERSE),
    "noisy max, no noise": (exact_max, UNIVERSE),
    "exponential noisy max, Exp(1/eps)": (noisy_max("exponential", scale=1), UNIVERSE),
    "exponential noisy max, first answer without noise": (exponential_max_one_exact, UNIVERSE),
    "sparse vector, scales halved": (sparse_vector(threshold_scale=1, query_scale=2), UNIVERSE),
    "sparse vector, queries without noise": (sparse_vector_exact_queries, UNIVERSE),
    "laplace mechanism, scale halved": (laplace_halved, dp.answers([0, 1, 2], 1)),
    "laplace mechanism, no noise": (laplace_missing, dp.answers([0, 1, 2], 1)),
    "histogram, scale halved": (histogram_halved, HIST),
    "histogram, one bin without noise": (histogram_one_bin_exact, HIST),
}
CORRECT = {
    "noisy max": (noisy_max("laplace"), UNIVERSE),
    "exponential noisy max": (noisy_max("exponential"), UNIVERSE),
    "sparse vector": (sparse_vector(), UNIVERSE),
    "laplace mechanism": (laplace_mechanism, dp.answers([0, 1, 2], 1)),
    "histogram": (histogram, HIST),
}


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_noise_mechanisms_are_verified(name) -> None:
    mech, universe = CORRECT[name]
    results = dp.check(dp.spec(mech, universe=universe, grid={eps: [Fraction(1, 3), 1]},
                               claims=[dp.private(eps)]), proofs=False)
    assert [r.status.value for r in results] == ["verified", "verified"], [r.message for r in results]


@pytest.mark.parametrize("mech, universe", list(MUTANTS.values()), ids=list(MUTANTS))
def test_noise_mutants_are_refuted(mech, universe) -> None:
    [result] = dp.check(dp.spec(mech, universe=universe, grid={eps: [HALF]}, claims=[dp.private(eps)]),
                        proofs=False)
    assert result.status.value == "refuted", result.message
    w = result.witness
    assert w is not None and w.x != w.x_prime
    assert universe.neighbours(w.x, w.x_prime)
    assert w.ratio == "inf" or decimal_of(w.ratio) > mpmath.exp(mpmath.mpf(1) / 2)


@pytest.mark.parametrize("halved", [False, True])
def test_gaussian_mutant_with_halved_sigma_is_refuted(halved) -> None:
    s = Fraction(1) if halved else Fraction(2)
    with mpmath.workdps(50):
        true_at_two = ncdf_delta(mpmath.mpf(1) / 2, 1)
    claimed = rational_near(true_at_two * Fraction(11, 10))
    [result] = dp.check(dp.spec(gaussian_mechanism, universe=dp.answers([0, 1], 1),
                                grid=[{eps: 1, sigma: s, delta: claimed}],
                                claims=[dp.private(eps, delta)]), proofs=False)
    assert result.status.value == ("refuted" if halved else "verified"), result.message


# -- released sums of noisy values ------------------------------------------------------------------

def prefix_sums(q, eps):
    running, out = 0, []
    for qi in q:
        running = running + dp.laplace(qi, 1 / eps)
        out.append(running)
    return tuple(out)


def sum_and_difference(q, eps):
    x, y = dp.laplace(q[0], 1 / eps), dp.laplace(q[1], 1 / eps)
    return (x + y, x - y)


@pytest.mark.parametrize("neighbours, level", [(dp.l1_one, 1), (dp.linf_one, 3)])
def test_prefix_sums_cost_eps_per_moved_entry(neighbours, level) -> None:
    """One entry moved: eps (the sums are a bijection of the noise); every entry moved: 3 eps."""
    universe = dp.answers([0, 1], 3, neighbours=neighbours)
    holds = check(prefix_sums, universe, dp.private(level * eps))
    assert holds.status.value in ("verified", "proved"), holds.message
    assert abs(achieved(holds)[0] - level * frac(HALF)) < mpmath.mpf(10) ** -30
    broken = check(prefix_sums, universe, dp.private(level * eps * Fraction(9, 10)))
    assert broken.status.value == "refuted", broken.message


def test_a_released_linear_map_reports_the_density_of_the_released_values() -> None:
    """(x + y, x - y) has |det| = 2: the witness density is the Laplace product at A^-1 v, halved."""
    result = check(sum_and_difference, dp.answers([0, 1], 2), dp.private(eps * Fraction(9, 10)))
    assert result.status.value == "refuted", result.message
    w = result.witness
    values = released_points(w.output)
    s, d = values
    b = 1 / frac(HALF)
    with mpmath.workdps(50):
        def density(q):
            x, y = (s + d) / 2, (s - d) / 2
            return (mpmath.exp(-abs(frac(x) - q[0]) / b) * mpmath.exp(-abs(frac(y) - q[1]) / b)) / (4 * b * b) / 2
        assert abs(decimal_of(w.p) - density(w.x)) < mpmath.mpf(10) ** -35
        assert abs(decimal_of(w.p_prime) - density(w.x_prime)) < mpmath.mpf(10) ** -35


def test_smart_sum_is_two_eps_and_its_noiseless_block_ends_are_refuted() -> None:
    def smart_with(q, eps, noisy_ends):
        total, current, out = 0, 0, []
        for i, qi in enumerate(q):
            if i % 2 == 1:
                current = total + qi + (dp.laplace(0, 1 / eps) if noisy_ends else 0)
                total = 0
            else:
                current = current + dp.laplace(qi, 1 / eps)
                total = total + qi
            out.append(current)
        return tuple(out)
    def smart(q, eps):
        return smart_with(q, eps, True)

    def noiseless_ends(q, eps):
        return smart_with(q, eps, False)
    universe = dp.answers([0, 1], 4, neighbours=dp.l1_one)
    assert check(smart, universe, dp.private(2 * eps)).status.value in ("verified", "proved")
    assert check(smart, universe, dp.private(eps * Fraction(19, 10))).status.value == "refuted"
    bad = check(noiseless_ends, universe, dp.private(2 * eps))
    assert bad.status.value == "refuted" and bad.evidence.achieved_epsilon == "inf", bad.message


# -- released gaps: differences of compared values ------------------------------------------------

def gap_svt(query_scale=4):
    def mech(q, eps):
        rho = dp.laplace(1, 2 / eps)
        out = []
        for qi in q:
            x = dp.laplace(qi, query_scale / eps)
            if x >= rho:
                out.append(x - rho)
                break
            out.append(False)
        return tuple(out)
    return mech


@SETTINGS
@given(q=st.lists(st.integers(0, 2), min_size=1, max_size=3), g=st.fractions(0, 4, max_denominator=8))
def test_the_released_gap_has_the_correlation_density(q, g) -> None:
    """p(first above at k, gap g) = int f_rho(r) prod_{j<k} F_j(r) f_k(r + g) dr, by quadrature."""
    e = HALF
    result = law(gap_svt(), q, e)
    bt, bq = 2 / frac(e), 4 / frac(e)
    with mpmath.workdps(30):
        lap = lambda x, m, b: mpmath.exp(-abs(x - m) / b) / (2 * b)
        cdf = lambda x, m, b: mpmath.exp((x - m) / b) / 2 if x < m else 1 - mpmath.exp(-(x - m) / b) / 2
        for output, weight in result.items():
            if not isinstance(weight, Density):
                continue
            k = len(output) - 1
            [(c, (factor,))] = weight.terms
            got = c * pw_evaluate(factor.function, g)
            kinks = sorted({mpmath.mpf(1), *(mpmath.mpf(qj) for qj in q[:k]), mpmath.mpf(q[k]) - frac(g)})
            expected = mpmath.quad(lambda r: lap(r, 1, bt) * mpmath.fprod(cdf(r, qj, bq) for qj in q[:k])
                                   * lap(r + frac(g), q[k], bq), [-mpmath.inf, *kinks, mpmath.inf])
            assert abs(mpmath.mpf(got.mid) - expected) < mpmath.mpf(10) ** -15


def pw_evaluate(function, t):
    return piecewise.evaluate(function, t, IV)


def test_sparse_vector_with_gap_is_private_and_its_low_noise_mutant_is_not() -> None:
    universe = dp.answers([0, 1], 3)
    holds = check(gap_svt(), universe, dp.private(eps))
    assert holds.status.value == "verified", holds.message
    broken = check(gap_svt(query_scale=1), universe, dp.private(eps))
    assert broken.status.value == "refuted", broken.message


def test_the_laplace_mechanism_derives_its_sensitivity_from_the_query() -> None:
    """dp.laplace_mechanism(mean, ...) uses Delta = 1/n (derived): eps-DP, and not eps/2-DP."""
    mean = dp.mean(lambda v: v, domain=dp.interval(0, 1))

    def mech(data, eps):
        return dp.laplace_mechanism(mean, data, eps, neighbours=dp.REPLACE_ONE)
    universe = dp.universe([0, Fraction(1, 2), 1], n=2, neighbours=dp.REPLACE_ONE)
    holds = check(mech, universe, dp.private(eps))
    assert holds.status.value in ("verified", "proved") and decimal_of(holds.evidence.achieved_epsilon) == frac(HALF)
    assert check(mech, universe, dp.private(eps / 2)).status.value == "refuted"
    total = dp.total(lambda v: v, domain=dp.interval(0, 1))

    def by_total(data, eps):
        return dp.laplace_mechanism(total, data, eps, neighbours=dp.REPLACE_ONE)
    assert decimal_of(check(by_total, universe, dp.private(eps)).evidence.achieved_epsilon) == frac(HALF)


def test_the_laplace_mechanism_refuses_a_plain_function() -> None:
    def mech(data, eps):
        return dp.laplace_mechanism(lambda d: sum(d), data, eps, neighbours=dp.REPLACE_ONE)
    result = check(mech, dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE), dp.private(eps))
    assert result.status.value == "error" and "explicit scale" in result.message


# -- (eps, delta) of released Laplace values: the exact hockey-stick divergence ---------------------

@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shrink=st.sampled_from([Fraction(1, 4), Fraction(1, 2), Fraction(3, 4), Fraction(9, 10)]))
def test_the_laplace_mechanism_has_the_textbook_delta_below_its_eps(shrink) -> None:
    """Lap(1/eps) with sensitivity 1 at eps' = shrink*eps: delta = 1 - e^((eps' - eps)/2), exactly."""
    with mpmath.workdps(50):
        true = 1 - mpmath.exp((frac(shrink) - 1) * frac(HALF) / 2)
    above = Fraction(str(mpmath.nstr(true * (1 + mpmath.mpf(10) ** -6), 20)))
    below = Fraction(str(mpmath.nstr(true * (1 - mpmath.mpf(10) ** -6), 20)))
    universe = dp.answers([0, 1, 2], 1)
    holds = check(laplace_mechanism, universe, dp.private(shrink * eps, above))
    assert holds.status.value == "verified", holds.message
    assert abs(decimal_of(holds.evidence.achieved_delta) - true) < mpmath.mpf(10) ** -35
    broken = check(laplace_mechanism, universe, dp.private(shrink * eps, below))
    assert broken.status.value == "refuted", broken.message
    assert f"P(S|X) - e^({shrink * eps}) P(S|X')" in broken.message and "e^eps" not in broken.message


def test_an_approximate_claim_is_never_refuted_by_a_pure_violation() -> None:
    """Releasing the noisy max breaks pure eps (3eps/2 here), but that says nothing about (eps, delta):
    where the divergence is not computed (several terms per piece), the claim stays unknown."""
    result = check(noisy_max(release=True), dp.answers([0, 1], 3), dp.private(eps, Fraction(1, 10)))
    assert result.status.value == "unknown", result.message
    assert "hockey-stick" in result.message


def test_threshold_tests_of_single_noisy_values_are_proved_for_every_eps() -> None:
    """P[q + Lap(1/eps) > 1] is 1/2 e^((q-1) eps) or 1 - 1/2 e^((1-q) eps): a rational function of
    e^eps, so which bins exceed a threshold is eps-DP for every eps, and a halved scale is not."""
    def above(q, eps):
        return tuple(dp.laplace(c, 1 / eps) > 1 for c in q)

    def above_halved(q, eps):
        return tuple(dp.laplace(c, 1 / (2 * eps)) > 1 for c in q)
    universe = dp.answers([0, 1, 2], 2, neighbours=dp.l1_one)
    [proved] = dp.check(dp.spec(above, universe=universe, grid={eps: [HALF]}, claims=[dp.private(eps)]))
    assert proved.status.value == "proved", proved.message
    [broken] = dp.check(dp.spec(above_halved, universe=universe, grid={eps: [HALF]}, claims=[dp.private(eps)]))
    assert broken.status.value == "refuted", broken.message


# -- how a refutation names the claim, and the plot around a density witness ------------------------

def bound_after(text: str, message: str) -> mpmath.mpf:
    """The number the message prints right after ``text`` (as in "> e^(eps/4) = 1.13...;")."""
    found = re.search(re.escape(text) + r"(\d[\d.e+-]*)", message)
    assert found, (text, message)
    return decimal_of(found.group(1))


def test_a_refuted_density_claim_names_the_claimed_bound_and_the_released_value() -> None:
    """Lap(2) on {0, 1} claimed at eps/4, eps = 1/2: the ratio is compared with e^(eps/4) = e^(1/8), and
    the witness is the density of the released value at one point v."""
    result = check(laplace_mechanism, dp.answers([0, 1], 1), dp.private(eps / 4))
    assert result.status.value == "refuted", result.message
    assert "e^eps" not in result.message
    with mpmath.workdps(50):
        assert abs(bound_after("> e^(eps/4) = ", result.message) - mpmath.exp(mpmath.mpf(1) / 8)) < \
            mpmath.mpf(10) ** -35
    w = result.witness
    assert w.quantity == "density"
    assert re.fullmatch(r"density of the released value v0 at v0 = -?[\d/]+", w.output), w.output
    assert f"the {w.output} is {w.p} under X and {w.p_prime} under X'" in result.message


def test_a_density_witness_carries_both_densities_and_their_log_ratio_around_it() -> None:
    """The plot data of a Laplace witness: both textbook densities on a grid that holds the witness
    value and both centres; the log ratio is clipped at |q - q'|/b = 1/2 and reaches it."""
    result = check(laplace_mechanism, dp.answers([0, 1], 1), dp.private(eps / 4))
    w, curves = result.witness, result.evidence.density_curves
    [v] = released_points(w.output)
    assert curves.slot == "v0" and curves.at == float(v) and len(curves.v) >= 81
    assert curves.v == sorted(curves.v) and curves.v[0] < min(w.x[0], w.x_prime[0], v)
    assert curves.v[-1] > max(w.x[0], w.x_prime[0], v)
    at = curves.v.index(curves.at)
    assert curves.density[at] == pytest.approx(float(w.p), rel=1e-12)
    assert curves.density_prime[at] == pytest.approx(float(w.p_prime), rel=1e-12)
    with mpmath.workdps(30):
        f, g = pdf("laplace", w.x[0], 2), pdf("laplace", w.x_prime[0], 2)
        for t, p, q, r in zip(curves.v, curves.density, curves.density_prime, curves.log_ratio):
            assert p == pytest.approx(float(f(t)), rel=1e-9) and q == pytest.approx(float(g(t)), rel=1e-9)
            assert r == pytest.approx(float(mpmath.log(f(t) / g(t))), abs=1e-9)
    assert max(curves.log_ratio) == pytest.approx(0.5) and min(curves.log_ratio) == pytest.approx(-0.5)


def test_the_curves_of_several_released_values_move_the_one_that_differs() -> None:
    """Two Gaussian values, neighbours differing in the second: the plot moves v1 (the value whose
    centres differ), holding v0 at its witness value; densities are the product of the normals."""
    result = check(lambda q, eps: (dp.gaussian(q[0], 2), dp.gaussian(q[1], 2)), dp.answers([0, 1], 2),
                   dp.private(eps))
    assert result.status.value == "refuted", result.message
    w, curves = result.witness, result.evidence.density_curves
    moved = next(k for k in range(2) if w.x[k] != w.x_prime[k])
    values = released_points(w.output)
    assert curves.slot == f"v{moved}" and curves.at == float(values[moved])
    with mpmath.workdps(30):
        def density(centres, t):
            point = [frac(x) for x in values]
            point[moved] = mpmath.mpf(t)
            return mpmath.fprod(mpmath.npdf(x, c, 2) for x, c in zip(point, centres))
        for t, p, q in list(zip(curves.v, curves.density, curves.density_prime))[::10]:
            assert p == pytest.approx(float(density(w.x, t)), rel=1e-9)
            assert q == pytest.approx(float(density(w.x_prime, t)), rel=1e-9)


def test_the_curves_of_a_released_linear_map_move_one_released_value() -> None:
    """(x + y, x - y): moving the released sum s with the difference d fixed moves both noise values,
    and the density is the Laplace product at A^-1 (s, d), halved."""
    result = check(sum_and_difference, dp.answers([0, 1], 2), dp.private(eps * Fraction(9, 10)))
    assert result.status.value == "refuted", result.message
    w, curves = result.witness, result.evidence.density_curves
    values = released_points(w.output)
    k = int(curves.slot[1:])
    assert curves.at == float(values[k])
    b = 1 / frac(HALF)
    with mpmath.workdps(30):
        def density(q, t):
            s, d = [frac(x) for x in values]
            s, d = (mpmath.mpf(t), d) if k == 0 else (s, mpmath.mpf(t))
            x, y = (s + d) / 2, (s - d) / 2
            return mpmath.exp(-abs(x - q[0]) / b) * mpmath.exp(-abs(y - q[1]) / b) / (4 * b * b) / 2
        for t, p, q in zip(curves.v, curves.density, curves.density_prime):
            assert p == pytest.approx(float(density(w.x, t)), rel=1e-9)
            assert q == pytest.approx(float(density(w.x_prime, t)), rel=1e-9)


def test_a_refuted_gaussian_delta_claim_names_the_claimed_level() -> None:
    """N(q, 1) on {0, 1} claimed (eps/4, 10^-5)-DP at eps = 1: delta(1/4) is about 0.31."""
    [result] = dp.check(dp.spec(gaussian_mechanism, universe=dp.answers([0, 1], 1),
                                grid=[{eps: 1, sigma: 1, delta: Fraction(1, 10 ** 5)}],
                                claims=[dp.private(eps / 4, delta)]), proofs=False)
    assert result.status.value == "refuted", result.message
    assert "the privacy loss exceeds eps/4" in result.message and "e^eps" not in result.message
    with mpmath.workdps(50):
        assert abs(bound_after("P(S|X) - e^(eps/4) P(S|X') = ", result.message)
                   - ncdf_delta(1, Fraction(1, 4))) < mpmath.mpf(10) ** -35
