"""``dp.float_private``: samplers of one uniform double, over the 2^53-point grid (Mironov 2012).

The searches on functions whose answers are known by hand; numpy's Laplace refuted with a
witness that a third, brute-force route re-confirms; the snapping and integer samplers of
spec/audits/floating_point.py verified with their exact epsilon; mutants (a wrong snapping grid,
a claimed epsilon below the exact one) refuted; a non-monotone sampler and bad declarations
refused; the budgets are counts.
"""
from __future__ import annotations

import functools
import importlib.util
import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import dpverify as dp
from dpverify.checks import Workspace, check_point
from dpverify.engine.program.floating import GRID, Sampler, candidates
from dpverify.errors import SpecError
from dpverify.options import Options
from dpverify.results import Status

ROOT = Path(__file__).resolve().parents[1]
AUDIT = ROOT / "spec/audits/floating_point.py"
HALVES = [(1, 2 ** 52), (2 ** 52, 2 ** 53)]


def _audit():
    spec = importlib.util.spec_from_file_location("floating_point_audit", AUDIT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FP = _audit()


def _run(claim):
    spec = dp.spec(name="t", claims=[claim])
    return check_point(spec, spec.claims[0], (), Workspace(Options()))


# ----- the searches on known functions ------------------------------------------------------------

def test_count_of_a_step_function_is_exact():
    """floor(8u) + q takes each value on 2^50 consecutive grid points."""
    s = Sampler(lambda q, u: math.floor(8 * u) + q, "[0,1)", ((0, GRID),))
    assert s.count(0.0, 3.0) == 2 ** 50 and s.count(1.0, 3.0) == 2 ** 50
    assert s.count(0.0, 8.0) == 0 and s.count(0.0, 2.5) == 0
    assert s.confirm_count(0.0, 3.0) == 2 ** 50
    assert s.image(0.0, 100) == {float(v): 2 ** 50 for v in range(8)}
    assert s.image(0.0, 7) is None  # one output over the budget: refused, not truncated


@pytest.mark.parametrize("sign", [1, -1])
def test_count_of_the_identity_matches_the_grid(sign):
    """u itself (or -u): y is reached once iff y is a multiple of 2^-53 in [0, 1)."""
    s = Sampler(lambda q, u: sign * u, "[0,1)", ((0, GRID),))
    for y in (0.0, 0.5, 0.3, 2.0 ** -60, 1 - 2.0 ** -53, 0.1):
        on_grid = (Fraction(y) * GRID).denominator == 1
        assert s.count(0.0, sign * y) == int(on_grid) == s.confirm_count(0.0, sign * y)
    assert s.count(0.0, sign * 1.0) == 0


def test_image_of_a_one_sided_geometric_has_the_dyadic_counts():
    """floor(-log2 u) on u = (k+1)/2^53: j is taken by 2^(52-j) grid points (j <= 52), 53 by one."""
    s = Sampler(lambda q, u: q + math.floor(-math.log2(u)), "(0,1]", ((0, GRID),))
    expected = {float(j): 2 ** (52 - j) for j in range(53)} | {53.0: 1}
    assert s.image(0.0, 100) == expected and sum(expected.values()) == GRID
    assert all(s.confirm_count(0.0, y) == n for y, n in expected.items())


def test_uniform_grids():
    """The three grids: k/2^53, (k+1)/2^53 and (k+1/2)/2^53 (k + 0.5 rounded first)."""
    ident = lambda q, u: u  # noqa: E731
    assert Sampler(ident, "[0,1)", ((0, GRID),)).count(0.0, 0.0) == 1
    assert Sampler(ident, "(0,1]", ((0, GRID),)).count(0.0, 0.0) == 0
    assert Sampler(ident, "(0,1]", ((0, GRID),)).count(0.0, 1.0) == 1
    half = Sampler(ident, "(0,1)", ((0, GRID),))
    assert half.count(0.0, 2.0 ** -54) == 1 and half.count(0.0, 0.0) == 0


def test_candidates_are_deterministic_and_inside_the_pieces():
    pieces = ((1, 2 ** 52), (2 ** 52 + 5, GRID))
    a, b = candidates(pieces, 500, 7), candidates(pieces, 500, 7)
    assert a == b and len(a) == len(set(a)) == 500
    assert all(1 <= k < 2 ** 52 or 2 ** 52 + 5 <= k < GRID for k in a)
    assert candidates(((0, GRID),), 500, 8) != a


# ----- numpy's Laplace ----------------------------------------------------------------------------

def test_the_transcription_is_numpys_laplace_bit_for_bit():
    """FP.numpy_laplace(loc, u, scale) equals Generator.laplace(loc, scale) fed the same uniforms."""
    g1, g2 = np.random.Generator(np.random.PCG64(5)), np.random.Generator(np.random.PCG64(5))
    for i in range(20_000):
        loc, scale = float(i % 3), 0.25 + (i % 4)
        drawn = g1.laplace(loc, scale)
        u = g2.random()
        while u == 0.0:  # numpy rejects u = 0 and draws again
            u = g2.random()
        assert drawn == FP.numpy_laplace(loc, u, scale)


def test_textbook_laplace_is_refuted_with_a_reconfirmed_witness():
    lap = functools.partial(FP.numpy_laplace, scale=0.25)
    r = _run(dp.float_private(lap, pairs=[(0, 1)], pieces=HALVES))
    assert r.status is Status.REFUTED and r.evidence.achieved_epsilon == "inf"
    assert r.witness.p_prime == "0" and "infinite privacy loss" in r.message
    k, y = r.evidence.witness_k, float.fromhex(r.evidence.witness_output_hex)
    q = float(r.witness.x)  # explicit pairs: the witness names the query values
    other = 1.0 - q
    assert lap(q, k / 2 ** 53) == y  # reached from q, at the stated grid point
    # a third route: invert the Laplace CDF in the reals and scan 4001 grid points around it
    centre = Fraction(y - other) / Fraction(0.25)
    u = 0.5 * math.exp(float(centre)) if centre < 0 else 1 - 0.5 * math.exp(-float(centre))
    k0 = int(u * 2 ** 53)
    near = [lap(other, j / 2 ** 53) for j in range(max(1, k0 - 2000), min(GRID, k0 + 2001))]
    assert y not in near and min(near) < y < max(near)


def test_textbook_laplace_from_a_universe_and_query():
    r = check_point(FP.textbook_laplace, FP.textbook_laplace.claims[0], (), Workspace(Options()))
    assert r.status is Status.REFUTED and r.evidence.value_pairs == 2  # counts 0-1 and 1-2
    x, x_prime = r.witness.x, r.witness.x_prime  # the witness names two neighbouring datasets
    assert sum(a != b for a, b in zip(x, x_prime)) == 1
    y = float.fromhex(r.evidence.witness_output_hex)
    assert y == FP.numpy_laplace(float(sum(x)), r.evidence.witness_k / 2 ** 53)


# ----- samplers that pass ---------------------------------------------------------------------------

def _audit_claim(spec, claim_id):
    claim = next(c for c in spec.claims if c.id == claim_id)
    return check_point(spec, claim, (), Workspace(Options()))


def test_snapping_has_equal_supports_and_its_exact_epsilon():
    r = _audit_claim(FP.snapping_mechanism, "supports")
    assert r.status is Status.VERIFIED and "equal supports" in r.message
    assert r.evidence.outputs_per_value == {repr(float(v)): 17 for v in range(-8, 9)}
    achieved = Fraction(r.evidence.achieved_epsilon)
    assert 1 < achieved < 1 + Fraction(1, 2 ** 29)
    assert _audit_claim(FP.snapping_mechanism, "eps_plus_2^-29").status is Status.VERIFIED
    low = _audit_claim(FP.snapping_mechanism, "exactly_eps")
    assert low.status is Status.REFUTED and low.witness.p_prime != "0"


def test_integer_geometric_has_equal_supports_and_its_exact_epsilon():
    r = _audit_claim(FP.exact_integer_geometric, "supports")
    assert r.status is Status.VERIFIED and r.evidence.value_pairs == 10
    assert 1 < Fraction(r.evidence.achieved_epsilon) < 1 + Fraction(1, 2 ** 38)
    assert _audit_claim(FP.exact_integer_geometric, "exactly_eps").status is Status.REFUTED


def test_exact_probabilities_against_a_hand_count():
    """Randomized response on one uniform: answer q when u < 3/4: counts 3*2^51 and 2^51, eps = ln 3."""
    rr = lambda q, u: float(q) if u < 0.75 else 1.0 - q  # noqa: E731
    r = _run(dp.float_private(rr, pairs=[(0, 1)], pieces=[(0, 3 * 2 ** 51), (3 * 2 ** 51, GRID)]))
    assert r.status is Status.VERIFIED and "ln(3/1)" in r.message
    assert _run(dp.float_private(rr, Fraction(10986, 10000), pairs=[(0, 1)],
                                 pieces=[(0, 3 * 2 ** 51), (3 * 2 ** 51, GRID)])).status is Status.REFUTED
    assert _run(dp.float_private(rr, Fraction(10987, 10000), pairs=[(0, 1)],
                                 pieces=[(0, 3 * 2 ** 51), (3 * 2 ** 51, GRID)])).status is Status.VERIFIED


# ----- mutants --------------------------------------------------------------------------------------

def test_mutant_snapping_with_a_wrong_grid_is_refuted():
    r = _audit_claim(FP.snapping_mechanism, "wrong_grid")
    assert r.status is Status.REFUTED and r.witness.ratio == "inf"
    bad = functools.partial(FP.snapping, grid=2.0 ** -44)
    assert _run(dp.float_private(bad, pairs=[(2, 3)], pieces=HALVES)).status is Status.REFUTED


def test_mutant_geometric_without_the_shift_is_refuted():
    """Dropping the -1 of the lower half puts twice the mass at 0: epsilon 1 + ln 2, refuted at 1 + 2^-38."""
    def doubled(q, u):
        z = (-math.floor(math.log(u + u) / FP.LOG_A) if u < 0.5 else math.floor(math.log(2.0 - u - u) / FP.LOG_A))
        return float(min(max(int(q) + z, 0), 10))
    r = _run(dp.float_private(doubled, 1 + Fraction(1, 2 ** 38), pairs=[(3, 4)], pieces=HALVES))
    assert r.status is Status.REFUTED
    assert abs(float(r.evidence.achieved_epsilon) - (1 + math.log(2))) < 1e-6


def test_a_support_missing_in_the_second_direction_only_is_found():
    """From q = 1 the output 1.0 is reached; from q = 0 never (the pair is read both ways)."""
    r = _run(dp.float_private(lambda q, u: q if u < 0.5 else 0.0, pairs=[(0, 1)],
                              pieces=[(0, 2 ** 52), (2 ** 52, GRID)]))
    assert r.status is Status.REFUTED and r.witness.x == 1 and r.witness.output == 1.0
    assert r.witness.p == "0.5000000000000000000000000000000000000000"


def test_signed_zeros_are_two_outputs():
    """A sampler that releases -0.0 from q = -1 and 0.0 from q = 1: equal as floats, told apart by
    copysign (and repr), so each is an output its neighbour never produces -- an infinite loss,
    which merging the zeros (IEEE equality) would have hidden behind equal supports."""
    def signed_zero(q, u):
        return math.floor(u) * q  # floor(u) = 0.0 for u in [0, 1): 0.0 * q keeps q's sign
    r = _run(dp.float_private(signed_zero, pairs=[(-1, 1)]))
    assert r.status is Status.REFUTED and r.evidence.achieved_epsilon == "inf"
    assert math.copysign(1.0, r.witness.output) == (-1.0 if r.witness.x == -1 else 1.0)
    same = _run(dp.float_private(lambda q, u: math.floor(u) * abs(q), pairs=[(-1, 1)]))
    assert same.status is Status.VERIFIED  # 0.0 from both: one output, equal supports


def test_signed_zeros_are_counted_in_total_order():
    """u - 1/2 rounded towards zero to -0.0 below 1/2 and 0.0 from 1/2: a monotone sampler in
    totalOrder (-0.0 before 0.0), so each zero has its exact count of grid points."""
    sampler = Sampler(lambda q, u: math.copysign(0.0, u - 0.5) * (q + 1), "[0,1)", ((0, GRID),))
    image = sampler.image(0.0, 10)
    assert len(image) == 2 and image[-0.0] == image[0.0] == GRID // 2
    assert sampler.count(0.0, -0.0) == GRID // 2


def test_no_witness_among_candidates_is_unknown_not_verified():
    """A sampler with 2^53 outputs that do not depend on q: nothing to find, and no proof either."""
    r = _run(dp.float_private(lambda q, u: u, pairs=[(0, 1)], candidates=200, max_outputs=50))
    assert r.status is Status.UNKNOWN and "no proof" in r.message
    assert r.evidence.candidates_tried == 400 and r.evidence.unreachable_candidates == 0


# ----- the monotonicity assumption and bad input ------------------------------------------------------

def test_a_non_monotone_sampler_is_an_error_naming_the_grid_points():
    wiggly = lambda q, u: q + math.sin(1000 * u)  # noqa: E731
    r = _run(dp.float_private(wiggly, pairs=[(0, 1)]))
    assert r.status is Status.ERROR and "not monotone" in r.message and "k=" in r.message


def test_a_listing_is_not_verified_when_a_candidate_breaks_monotonicity():
    """A step function with one odd grid point that no bisection probe meets: the candidates find it."""
    odd = candidates(((0, GRID),), 1000, 0)[700]
    def step(q, u):
        return 100.0 if u == odd / 2 ** 53 else float(math.floor(8 * u))
    assert _run(dp.float_private(lambda q, u: float(math.floor(8 * u)), pairs=[(0, 1)])).status is Status.VERIFIED
    r = _run(dp.float_private(step, pairs=[(0, 1)]))
    assert r.status is Status.ERROR and "not monotone" in r.message and f"k={odd}" in r.message


def test_a_sampler_that_fails_at_zero_names_the_fix():
    r = _run(dp.float_private(lambda q, u: q + math.log(u), pairs=[(0, 1)]))
    assert r.status is Status.ERROR and "k=0" in r.message and "pieces=" in r.message


def test_nan_is_refused():
    r = _run(dp.float_private(lambda q, u: math.nan, pairs=[(0, 1)]))
    assert r.status is Status.ERROR and "NaN" in r.message


@pytest.mark.parametrize("kwargs, words", [
    (dict(), "pairs="),
    (dict(pairs=[(0, 1)], pieces=[(0, 10), (5, 20)]), "overlapping"),
    (dict(pairs=[(0, 1)], pieces=[(0, 2 ** 54)]), "2**53"),
    (dict(pairs=[(0, 1)], uniforms="[0,1]"), "grid of uniforms"),
    (dict(pairs=[(0, 1)], candidates=0), "candidates"),
    (dict(pairs=[("a", 1)]), "not a number"),
    (dict(pairs=[(0, 1)], epsilon=-1), "non-negative"),
])
def test_bad_declarations(kwargs, words):
    with pytest.raises(SpecError, match=re.escape(words)):
        dp.float_private(lambda q, u: u, **kwargs)


def test_equal_values_give_no_pairs():
    r = _run(dp.float_private(lambda q, u: u, pairs=[(1, 1)]))
    assert r.status is Status.ERROR and "no two neighbouring" in r.message


# ----- budgets are counts ------------------------------------------------------------------------------

def test_the_work_is_the_same_on_every_run():
    lap = functools.partial(FP.numpy_laplace, scale=0.25)
    runs = [_run(dp.float_private(lap, pairs=[(0, 1)], pieces=HALVES, candidates=300)) for _ in range(2)]
    assert runs[0].message == runs[1].message
    assert runs[0].evidence.evaluations == runs[1].evidence.evaluations
    assert runs[0].evidence.candidates_tried == 600


def test_the_audit_file_checks_as_expected(tmp_path):
    from click.testing import CliRunner
    from dpverify.cli import main
    out = CliRunner().invoke(main, ["check", str(AUDIT)])
    assert out.exit_code == 0, out.output
