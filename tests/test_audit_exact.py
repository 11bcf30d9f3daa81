"""The exact audit of unmodified code (issue 12, way 1): instrumented generators, dp.implementation,
dp.conforms.  Laws are checked against exact values worked out by hand and against brute force
on reduced grids; refusals must name the implementation's file and line."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import sympy
from hypothesis import given, settings, strategies as st

import dpverify as dp
from dpverify.dsl.generators import choice_law
from dpverify.dsl.instrumented import GRID, grid_count
from dpverify.engine.program.backend import SympyBackend
from dpverify.engine.program.reading import distribution
from dpverify.errors import CannotFollow

eps = dp.symbol("eps", positive=True)
BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)
HERE = __file__


def law(fn, rng="numpy", data=(0,), **params) -> dict:
    """The exact law of an implementation on one dataset, as output -> sympy Rational."""
    return distribution(dp.implementation(fn, rng=rng), data, params, SympyBackend())


def line_of(fn, text: str) -> int:
    """The line of ``fn``'s source holding ``text``."""
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


# -- the grid count ----------------------------------------------------------------------------

def test_grid_count_exact_values():
    assert grid_count(0.5) == 2 ** 52
    assert grid_count(0) == 0 and grid_count(0.0) == 0 and grid_count(-1.5) == 0
    assert grid_count(1) == GRID and grid_count(1.0) == GRID and grid_count(7) == GRID
    third = 1 / 3  # the float: 6004799503160661 / 2^54, just below 1/3
    assert Fraction(third) < Fraction(1, 3)
    assert grid_count(third) == math.ceil(Fraction(third) * GRID) == 3002399751580331
    assert grid_count(Fraction(1, 3)) == 3002399751580331  # ceil(2^53 / 3): the same count here
    assert grid_count(sympy.Rational(1, 4)) == 2 ** 51
    e = sympy.E / (1 + sympy.E)
    count = grid_count(e)
    assert sympy.Rational(count - 1, GRID) < e <= sympy.Rational(count, GRID)


def test_comparison_laws_are_exact_counts():
    def below(data, p, rng):
        return rng.random() < p
    assert law(below, p=Fraction(1, 2)) == {True: sympy.Rational(1, 2), False: sympy.Rational(1, 2)}
    third = law(below, p=Fraction(1, 3))  # the program receives the exact 1/3
    assert third[True] == sympy.Rational(3002399751580331, GRID)
    assert law(below, p=0) == {False: 1} and law(below, p=1) == {True: 1}

    def float_third(data, rng):
        return rng.random() <= 1 / 3
    assert law(float_third)[True] == sympy.Rational(3002399751580331, GRID)  # u <= p: same count, p is no grid point


def test_repeated_comparisons_are_consistent():
    def two(data, rng):
        u = rng.random()
        return (u < 0.5, u < 0.25, u >= 0.5)
    got = law(two)
    assert got == {(True, True, False): sympy.Rational(1, 4), (True, False, False): sympy.Rational(1, 4),
                   (False, False, True): sympy.Rational(1, 2)}

    def equal(data, rng):
        u = rng.random()
        return (u == 0.5, u < 0.5)
    assert law(equal) == {(True, False): sympy.Rational(1, GRID), (False, True): sympy.Rational(1, 2),
                          (False, False): sympy.Rational(2 ** 52 - 1, GRID)}


def test_monotone_arithmetic_is_followed_exactly():
    def shifted(data, rng):
        return rng.uniform(2, 4) < 3  # 2 + 2u, rounded: u = 1/2 - 2^-53 gives 3 - 2^-52, rounded (to even) to 3
    assert 2.0 + 2.0 * ((2 ** 52 - 1) / GRID) == 3 and 2.0 + 2.0 * ((2 ** 52 - 2) / GRID) < 3
    assert law(shifted) == {True: sympy.Rational(2 ** 52 - 1, GRID), False: sympy.Rational(2 ** 52 + 1, GRID)}

    def falling(data, rng):
        return 1 - rng.random() > 0.75  # 1 - u > 3/4 iff u < 1/4 (exact subtraction here)
    assert law(falling)[True] == sympy.Rational(1, 4)

    def third(data, rng):
        return int(rng.random() * 3)
    got = law(third)
    assert set(got) == {0, 1, 2} and sum(got.values()) == 1
    below = 0
    for j in (1, 2):  # brute force: the first k of the float product's step j, near j/3 * 2^53
        near = math.ceil(Fraction(j, 3) * GRID)
        first = next(k for k in range(near - 8, near + 8) if int(k / GRID * 3) >= j)
        assert int((first - 1) / GRID * 3) == j - 1
        assert got[j - 1] == sympy.Rational(first - below, GRID)
        below = first
    assert got[2] == sympy.Rational(GRID - below, GRID)


def test_random_random_choices_and_ranges():
    def weighted(data, rng):
        return rng.choices("abc", [1, 2, 1])[0]
    assert law(weighted, rng="random") == {"a": sympy.Rational(1, 4), "b": sympy.Rational(1, 2),
                                           "c": sympy.Rational(1, 4)}

    def unweighted(data, rng):  # floor(random() * 3.0): counted as the floats fall, not assumed uniform
        return rng.choices("abc")[0]
    got, below = law(unweighted, rng="random"), 0
    for j, letter in ((1, "a"), (2, "b")):
        near = math.ceil(Fraction(j, 3) * GRID)
        first = next(k for k in range(near - 8, near + 8) if math.floor(k / GRID * 3.0) >= j)
        assert got[letter] == sympy.Rational(first - below, GRID)
        below = first
    assert got["c"] == sympy.Rational(GRID - below, GRID)

    def ranges(data, rng):
        return (rng.randrange(3), rng.randint(5, 6))
    got = law(ranges, rng="random")
    assert len(got) == 6 and set(got.values()) == {sympy.Rational(1, 6)}


# -- numpy's choice(p) --------------------------------------------------------------------------

def brute_choice(p, grid):
    """numpy's own algorithm, run on every point k/grid of a reduced grid."""
    cdf = np.asarray(p, dtype=np.float64).cumsum()
    cdf /= cdf[-1]
    counts: dict = {}
    for k in range(grid):
        i = int(cdf.searchsorted(k / grid, side="right"))
        counts[i] = counts.get(i, 0) + 1
    return {i: Fraction(c, grid) for i, c in counts.items()}


def test_choice_with_p_against_brute_force():
    p = [0.1, 0.2, 0.3, 0.4]
    assert choice_law(p, 4, grid=2 ** 12) == brute_choice(p, 2 ** 12)
    full = choice_law(p, 4)
    assert sum(full.values()) == 1
    assert full != {i: Fraction(x) for i, x in enumerate(p)}  # floats: not the decimal probabilities

    def pick(data, rng):
        return rng.choice(["x", "y", "z"], p=[0.5, 0.25, 0.25])
    assert law(pick) == {"x": sympy.Rational(1, 2), "y": sympy.Rational(1, 4), "z": sympy.Rational(1, 4)}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 20), min_size=1, max_size=6).filter(lambda w: sum(w) > 0),
       st.integers(4, 11))
def test_choice_law_sums_to_one_and_is_numpys_algorithm(weights, bits):
    p = [w / sum(weights) for w in weights]
    if abs(math.fsum(p) - 1) > 1e-8:
        return
    got = choice_law(p, len(p), grid=2 ** bits)
    assert sum(got.values()) == 1
    assert got == brute_choice(p, 2 ** bits)


def test_choice_law_agrees_with_seeded_numpy():
    p = [0.2, 0.3, 0.5]
    law_ = choice_law(p, 3)
    drawn = np.random.default_rng(3).choice(3, size=20_000, p=p)
    for i, prob in law_.items():
        assert abs((drawn == i).mean() - float(prob)) < 0.02


# -- refusals ------------------------------------------------------------------------------------

def refused(fn, rng="numpy") -> dp.SpecError:
    with pytest.raises(dp.SpecError) as info:
        law(fn, rng=rng, eps=1)
    return info.value


def test_arithmetic_that_cannot_be_followed_is_refused_at_its_line():
    def inverse_cdf_laplace(data, eps, rng):
        u = rng.random()
        return data[0] + math.log(u) / eps
    err = refused(inverse_cdf_laplace)
    assert err.file == HERE and err.line == line_of(inverse_cdf_laplace, "math.log(u)")
    assert "cannot follow arithmetic on a uniform draw" in err.problem
    assert "cannot be decided exactly" in err.problem and "fallback=True" in err.fix
    assert isinstance(err, CannotFollow)  # a limit of the exact audit: its claims fall back to sampling

    def product(data, eps, rng):
        return rng.random() * rng.random() < 0.25
    err = refused(product)
    assert err.line == line_of(product, "rng.random() * rng.random()")


@pytest.mark.parametrize("use, what", [
    (lambda u: str(u) < "0.5", "str(u)"),
    (lambda u: repr(u) < "0.5", "repr(u)"),
    (lambda u: f"{u:.3f}" < "0.5", "formatted as text"),
    (lambda u: isinstance(u, float), "isinstance"),
    (lambda u: u in {0.25, 0.5}, "hashed"),
    (lambda u: bool(u), "truth value"),
])
def test_a_draw_never_shows_a_stand_in_to_the_program(use, what):
    """The program would see a float (its digits, its type, its hash): a stand-in's text or type
    would send it down another branch than the real code takes, so each is refused, never followed."""
    def program(data, eps, rng):
        return use(rng.random())
    err = refused(program)
    assert what in err.problem and "cannot be decided exactly" in err.problem


def gumbel_em(data, eps, rng):
    """The exponential mechanism by the Gumbel-max trick: refused by the exact audit (its claims fall back
    to the statistical audit: tests/test_audit_fallback.py)."""
    scores = [sum(1 for x in data if x == y) for y in (0, 1)]
    return int(np.argmax([eps * s / 2 + rng.gumbel() for s in scores]))


def test_unsupported_methods_are_refused_by_name():
    err = refused(gumbel_em)
    assert "numpy.random.Generator.gumbel()" in err.problem and "does not support" in err.problem
    assert err.file == HERE and err.line == line_of(gumbel_em, "rng.gumbel()")

    def shuffled(data, eps, rng):
        items = list(data)
        rng.shuffle(items)
        return tuple(items)
    assert "random.Random.shuffle()" in refused(shuffled, rng="random").problem
    assert all(isinstance(refused(f, rng=r), CannotFollow) for f, r in ((gumbel_em, "numpy"), (shuffled, "random")))
    spec = dp.spec(dp.implementation(gumbel_em, fallback=False), universe=BIT, grid={eps: [1]},
                   claims=[dp.private(eps)])
    [result] = dp.check(spec)
    assert result.status.value == "error" and "gumbel" in result.message


def test_implementation_arguments_are_checked():
    def no_rng(data, eps):
        return 0
    with pytest.raises(dp.SpecError, match="no argument 'rng'"):
        dp.implementation(no_rng)
    with pytest.raises(dp.SpecError, match="rng='numpy'"):
        dp.implementation(gumbel_em, rng="torch")


# -- conforms and private ------------------------------------------------------------------------

def rr(data, eps):
    return dp.randomized_response(data[0], eps)


def exact_rr(data, eps, rng):
    """Keeps with e^eps/(1 + e^eps) computed exactly (the parameter is an exact number)."""
    keep = sympy.exp(eps) / (1 + sympy.exp(eps))
    return data[0] if rng.random() < keep else 1 - data[0]


def float_rr(data, eps, rng):
    keep = math.exp(eps) / (1 + math.exp(eps))
    return data[0] if rng.random() < keep else 1 - data[0]


def flipped_rr(data, eps, rng):
    """A mutant: the branches swapped (reports the flipped bit with the keep probability)."""
    keep = math.exp(eps) / (1 + math.exp(eps))
    return 1 - data[0] if rng.random() < keep else data[0]


def doubled_rr(data, eps, rng):
    keep = math.exp(2 * eps) / (1 + math.exp(2 * eps))
    return data[0] if rng.random() < keep else 1 - data[0]


def check(fn, *claims, grid=(1,), universe=BIT):
    return dp.check(dp.spec(dp.implementation(fn), universe=universe, grid={eps: list(grid)}, claims=list(claims)))


def test_conforms_is_exact_and_refutes_with_a_witness():
    # an exact threshold is still counted on the grid: the law differs from e/(1+e) by < 2^-53
    [exact] = check(exact_rr, dp.conforms(rr))
    assert exact.status.value == "refuted"
    [mutant] = check(flipped_rr, dp.conforms(rr))
    assert mutant.status.value == "refuted"
    witness = mutant.witness
    assert witness.x == witness.x_prime == (0,) and witness.output == 0
    assert abs(float(witness.p) - 1 / (1 + math.e)) < 1e-15
    assert abs(float(witness.p_prime) - math.e / (1 + math.e)) < 1e-15
    [rounding] = check(float_rr, dp.conforms(rr))
    assert rounding.status.value == "refuted"
    assert 0 < abs(sympy.Rational(rounding.witness.p) - sympy.Rational(rounding.witness.p_prime)) < 1e-15


def test_conforms_verified_for_exact_noise_programs():
    def rnm(q, eps):
        best, value = 0, dp.laplace(q[0], 2 / eps)
        for i in range(1, len(q)):
            x = dp.laplace(q[i], 2 / eps)
            if x > value:
                best, value = i, x
        return best

    def textbook(q, eps, rng):
        return int(np.argmax(np.asarray(q) + rng.laplace(0, 2 / eps, size=len(q))))

    def wrong_scale(q, eps, rng):
        return int(np.argmax(np.asarray(q) + rng.laplace(0, 1 / eps, size=len(q))))
    answers = dp.answers([0, 1], 2, neighbours=dp.linf_one)
    assert [r.status.value for r in check(textbook, dp.conforms(rnm), dp.private(eps), universe=answers)] \
        == ["verified", "verified"]
    assert [r.status.value for r in check(wrong_scale, dp.conforms(rnm), universe=answers)] == ["refuted"]

    def pick(data, eps, rng):
        return data[0] if rng.integers(0, 4) < 3 else 1 - data[0]

    def spec_pick(data, eps):
        return data[0] if dp.bernoulli(Fraction(3, 4)) else 1 - data[0]
    assert [r.status.value for r in check(pick, dp.conforms(spec_pick))] == ["proved"]  # for every eps


def test_private_refuted_for_broken_and_float_implementations():
    [broken] = check(doubled_rr, dp.private(eps))
    assert broken.status.value == "refuted" and broken.witness is not None
    # textbook floats: the odds exceed e^eps by ~1e-16 at eps = 1 (a Mironov-style finding) ...
    [floats] = check(float_rr, dp.private(eps))
    assert floats.status.value == "refuted"
    # ... and eps * (1 + 2^-40) holds
    [slack] = check(float_rr, dp.private(eps * (1 + sympy.Rational(1, 2 ** 40))))
    assert slack.status.value == "verified"


def test_outputs_are_python_values():
    def integers(data, rng):
        return rng.integers(0, 2), np.array([1, 2])
    assert law(integers) == {(0, (1, 2)): sympy.Rational(1, 2), (1, (1, 2)): sympy.Rational(1, 2)}
    assert all(type(o[0]) is int for o in law(integers))


# -- conforms within a tolerance -----------------------------------------------------------------

ROUNDING = Fraction(1, 2 ** 50)


def test_conforms_within_a_tolerance_separates_rounding_from_bugs():
    results = check(float_rr, dp.conforms(rr, tolerance=ROUNDING), grid=(Fraction(1, 2), 1, 2))
    assert [r.status.value for r in results] == ["verified"] * 3
    assert all("within 1/1125899906842624" in r.message for r in results)
    [mutant] = check(flipped_rr, dp.conforms(rr, tolerance=ROUNDING))
    assert mutant.status.value == "refuted" and mutant.witness.output == 0
    assert "more than the tolerance" in mutant.message
    # a tolerance below the rounding error itself is refuted, with the rounding as the witness
    [tight] = check(float_rr, dp.conforms(rr, tolerance=Fraction(1, 2 ** 60)))
    assert tight.status.value == "refuted"


def test_a_difference_exactly_at_the_tolerance_is_decided_exactly():
    def third(data, eps, rng):
        return rng.random() < Fraction(1, 3)  # ceil(2^53/3)/2^53 = 1/3 + 1/(3 * 2^53)

    def spec_third(data, eps):
        return dp.bernoulli(Fraction(1, 3))
    at = Fraction(1, 3 * 2 ** 53)
    assert [r.status.value for r in check(third, dp.conforms(spec_third, tolerance=at))] == ["verified"]
    below = at - Fraction(1, 10 ** 40)
    assert [r.status.value for r in check(third, dp.conforms(spec_third, tolerance=below))] == ["refuted"]


def test_a_tolerance_must_be_an_exact_number_in_range():
    with pytest.raises(dp.SpecError, match="float"):
        dp.conforms(rr, tolerance=1e-9)
    with pytest.raises(dp.SpecError, match=r"\[0, 1\)"):
        dp.conforms(rr, tolerance=2)
    with pytest.raises(dp.SpecError, match=r"\[0, 1\)"):
        dp.conforms(rr, tolerance=eps)
