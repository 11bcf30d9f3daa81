"""The real library targets (issue 12): diffprivlib audited exactly through its ``random_state``
hook (``rng="system_random"``), OpenDP by sampling, and the instrumented uniform's new reach --
numpy float64 constants, comparisons against numpy arrays, reflected comparisons, refusals of
logarithms and cosines with the program's file and line.  Exact laws are checked against
independent computations on numpy's own float arithmetic."""
from __future__ import annotations

import inspect
import math
import random
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sympy

import dpverify as dp
from dpverify.dsl.generators import SystemRandomGenerator
from dpverify.dsl.instrumented import GRID
from dpverify.engine.program.backend import SympyBackend
from dpverify.engine.program.reading import distribution
from dpverify.options import Options
from dpverify.results import Status
from dpverify.runner import check_paths

mechanisms = pytest.importorskip("diffprivlib.mechanisms")
diffprivlib_utils = pytest.importorskip("diffprivlib.utils")

eps = dp.symbol("eps", positive=True)
HERE = __file__
AUDITS = Path(__file__).resolve().parent.parent / "spec" / "audits"


def law(fn, rng="system_random", data=(0,), **params) -> dict:
    """The exact law of an implementation on one dataset, as output -> sympy Rational."""
    return distribution(dp.implementation(fn, rng=rng), data, params, SympyBackend())


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def refused(fn, rng="system_random", **params) -> dp.SpecError:
    with pytest.raises(dp.SpecError) as info:
        law(fn, rng=rng, **params)
    return info.value


def count_at_most(c: float) -> int:
    """#{k in [0, 2^53) : k / 2^53 <= c}, by exact rational arithmetic (independent of the engine)."""
    return min(GRID, max(0, math.floor(Fraction(c) * GRID) + 1))


# -- the hook ----------------------------------------------------------------------------------

def test_the_system_random_stand_in_is_taken_by_diffprivlib_unchanged():
    rng = SystemRandomGenerator()
    assert isinstance(rng, random.SystemRandom)
    assert diffprivlib_utils.check_random_state(rng, secure=True) is rng
    mechanism = mechanisms.Binary(epsilon=1.0, value0="0", value1="1", random_state=rng)
    assert mechanism._rng is rng  # the mechanism draws from the engine, not from the OS
    assert repr(dp.implementation(lambda data, rng: 0, rng="system_random")).endswith("rng='system_random')")


def test_system_random_methods_outside_the_supported_ones_are_refused_at_their_line():
    def shuffled(data, rng):
        items = [0, 1]
        rng.shuffle(items)
        return tuple(items)
    err = refused(shuffled)
    assert err.file == HERE and err.line == line_of(shuffled, "rng.shuffle(items)")
    assert "random.SystemRandom.shuffle()" in err.problem


def test_an_unknown_generator_kind_names_system_random():
    with pytest.raises(dp.SpecError, match="system_random"):
        dp.implementation(lambda data, rng: 0, rng="secrets")


# -- diffprivlib's Binary mechanism, exactly ---------------------------------------------------

def binary(data, eps, rng):
    mechanism = mechanisms.Binary(epsilon=float(eps), value0="0", value1="1", random_state=rng)
    return int(mechanism.randomise(str(data[0])))


@pytest.mark.parametrize("epsilon", [Fraction(1, 2), 1, 2])
def test_binary_law_is_the_count_of_grid_points_numpy_keeps(epsilon):
    """Binary keeps when random() * (np.exp(eps) + 1) <= np.exp(eps) + 0.0: the least k that flips,
    found by scanning numpy's own float64 products around the rational estimate."""
    e = np.exp(float(epsilon))
    estimate = math.floor(Fraction(float(e)) / Fraction(float(e + 1)) * GRID)
    window = range(estimate - 8, estimate + 8)
    flips = [bool((k / GRID) * (e + 1) > e + 0.0) for k in window]
    assert flips == sorted(flips) and flips[0] is False and flips[-1] is True  # one transition, inside
    kept = window[flips.index(True)]  # grid points 0..kept-1 keep the bit
    got = law(binary, eps=epsilon)
    assert got == {0: sympy.Rational(kept, GRID), 1: sympy.Rational(GRID - kept, GRID)}
    assert law(binary, data=(1,), eps=epsilon) == {1: sympy.Rational(kept, GRID), 0: sympy.Rational(GRID - kept, GRID)}
    ideal = sympy.exp(sympy.nsimplify(epsilon)) / (1 + sympy.exp(sympy.nsimplify(epsilon)))
    assert got[0] != ideal  # floats: not the spec's law exactly


def test_binary_odds_exceed_e_to_the_eps_the_finding():
    """The spec file's finding, recomputed: the keep/flip odds are above e^eps at eps = 1."""
    got = law(binary, eps=1)
    odds = got[0] / got[1]
    assert (odds - sympy.E).evalf(50) > 0 and (odds / sympy.E - 1).evalf(50) < sympy.Rational(1, 2 ** 40)


# -- numpy float64 constants and arrays ----------------------------------------------------------

def test_numpy_float64_constants_are_followed_with_numpy_arithmetic():
    def scaled(data, rng):
        return rng.random() * (np.exp(1.0) + 1) > np.exp(1.0)
    e = np.exp(1.0)
    first = next(k for k in range(math.floor(Fraction(float(e)) / Fraction(float(e + 1)) * GRID) - 8, GRID)
                 if (k / GRID) * (e + 1) > e)
    assert law(scaled, rng="numpy") == {True: sympy.Rational(GRID - first, GRID), False: sympy.Rational(first, GRID)}

    def left(data, rng):
        return np.float64(2.0) * rng.random() > np.float64(1.0)
    assert law(left, rng="numpy") == {True: sympy.Rational(2 ** 52 - 1, GRID), False: sympy.Rational(2 ** 52 + 1, GRID)}


CDF = np.cumsum(np.array([0.1, 0.2, 0.7]))


def test_comparison_with_a_numpy_array_is_a_sequence_of_exact_comparisons():
    def first_at_least(data, rng):
        u = rng.random()
        below = u <= CDF
        assert type(below) is np.ndarray and below.dtype == bool and below.shape == (3,)
        return int(np.argmax(below)) if np.any(below) else -1

    def reflected(data, rng):
        return int(np.argmax(CDF >= rng.random()))
    counts = [count_at_most(c) for c in CDF.tolist()]
    expected = {i: sympy.Rational(counts[i] - (counts[i - 1] if i else 0), GRID) for i in range(3)
                if counts[i] > (counts[i - 1] if i else 0)}
    if counts[-1] < GRID:
        expected[-1] = sympy.Rational(GRID - counts[-1], GRID)
    assert law(first_at_least, rng="numpy") == expected
    assert law(reflected, rng="numpy") == {k: v for k, v in expected.items() if k >= 0} | (
        {0: expected[0] + expected[-1]} if -1 in expected else {})


def test_the_array_comparison_narrows_the_draw():
    def twice(data, rng):
        u = rng.random()
        return tuple((u < CDF).tolist()) + (u < 0.05, u < 0.2)
    got = law(twice, rng="numpy")
    assert sum(got.values()) == 1
    assert all(not (out[0] and not out[4]) for out in got)  # u < 0.1 then u < 0.2: never contradicted
    assert all(out[0] for out in got if out[3])  # u < 0.05 only within u < 0.1
    assert sum(p for out, p in got.items() if out[3]) == sympy.Rational(math.ceil(Fraction(0.05) * GRID), GRID)


def test_diffprivlib_exponential_law_from_its_own_cumulative_probabilities():
    utility = [2, 0, 1]

    def exponential(data, eps, rng):
        return mechanisms.Exponential(epsilon=float(eps), sensitivity=1, utility=utility, random_state=rng).randomise()
    cumulative = mechanisms.Exponential(epsilon=1.0, sensitivity=1, utility=utility)._probabilities
    counts = [count_at_most(c) for c in cumulative.tolist()]
    assert counts[-1] == GRID  # the last cumulative probability is 1.0 here: np.any always holds
    expected = {i: sympy.Rational(counts[i] - (counts[i - 1] if i else 0), GRID) for i in range(3)}
    assert law(exponential, eps=1) == expected


# -- reflected comparisons ---------------------------------------------------------------------

CONSTANTS = [1, 0.375, Fraction(2, 3), sympy.Rational(2, 3), np.float64(0.375)]
REFLECTIONS = [(lambda c, u: c > u, lambda c, u: u < c), (lambda c, u: c >= u, lambda c, u: u <= c),
               (lambda c, u: c < u, lambda c, u: u > c), (lambda c, u: c <= u, lambda c, u: u >= c),
               (lambda c, u: c == u, lambda c, u: u == c), (lambda c, u: c != u, lambda c, u: u != c)]


@pytest.mark.parametrize("constant", CONSTANTS, ids=lambda c: type(c).__name__)
@pytest.mark.parametrize("reflected, direct", REFLECTIONS, ids=["gt", "ge", "lt", "le", "eq", "ne"])
def test_a_constant_on_the_left_is_the_same_exact_comparison(constant, reflected, direct):
    def left(data, rng):
        return bool(reflected(constant, rng.random()))

    def right(data, rng):
        return bool(direct(constant, rng.random()))
    assert law(left, rng="random") == law(right, rng="random")


def test_reflected_comparisons_have_the_exact_counts():
    def third(data, rng):
        return Fraction(1, 3) > rng.random()
    assert law(third, rng="random") == {True: sympy.Rational(math.ceil(Fraction(GRID, 3)), GRID),
                                         False: sympy.Rational(GRID - math.ceil(Fraction(GRID, 3)), GRID)}


def test_fraction_arithmetic_with_the_draw_on_the_right_is_followed_or_refused_as_a_float_would_be():
    def shifted(data, rng):
        return Fraction(1, 4) + rng.random() < 0.5

    def flipped(data, rng):
        return Fraction(1, 2) - rng.random() < 0.25
    assert law(shifted, rng="random") == {True: sympy.Rational(1, 4), False: sympy.Rational(3, 4)}
    assert law(flipped, rng="random") == {True: sympy.Rational(3 * 2 ** 51 - 1, GRID),  # u > 1/4
                                          False: sympy.Rational(2 ** 51 + 1, GRID)}

    def power(data, rng):
        return Fraction(1, 2) ** rng.random() < 0.75
    err = refused(power, rng="random")
    assert err.line == line_of(power, "Fraction(1, 2) ** rng.random()") and "power" in err.problem


def test_a_draw_asked_its_type_is_still_refused():
    def typed(data, rng):
        return isinstance(rng.random(), float)
    err = refused(typed, rng="random")
    assert err.line == line_of(typed, "isinstance(rng.random(), float)") and "its type is asked for" in err.problem


# -- what cannot be followed: refused with file and line ----------------------------------------

@pytest.mark.parametrize("use, text, what", [
    (lambda u: np.log(u) > -1, "np.log", "numpy.log"),
    (lambda u: np.cos(np.pi * u) > 0, "np.cos", "numpy.cos"),
    (lambda u: np.log1p(-u) > -1, "np.log1p", "numpy.log1p"),
    (lambda u: math.log(u) > -1, "math.log", "float value"),
])
def test_logarithms_and_cosines_of_a_draw_are_refused_at_their_line(use, text, what):
    err = refused(lambda data, rng: use(rng.random()), rng="numpy")
    assert err.file == HERE and err.line == use.__code__.co_firstlineno  # the lambda's line, holding `text`
    assert text in Path(HERE).read_text().splitlines()[err.line - 1]
    assert what in err.problem and "cannot follow" in err.problem


def test_numpy_functions_of_an_array_of_draws_are_refused_at_their_line():
    def vectorised(data, rng):
        return tuple(np.log(rng.random(size=2)) < -1)

    def cosine(data, rng):
        return tuple(np.cos(np.pi * rng.random(size=2)) > 0)
    for fn, text, what in ((vectorised, "np.log(", "numpy.log"), (cosine, "np.cos(", "numpy.cos")):
        err = refused(fn, rng="numpy")
        assert isinstance(err, dp.CannotFollow)  # a limit of the exact audit, not numpy's TypeError
        assert err.file == HERE and err.line == line_of(fn, text) and what in err.problem

    def floors(data, rng):
        return tuple(np.floor(rng.random(size=2) * 2))  # what can be followed still is
    assert law(floors, rng="numpy") == {(a, b): sympy.Rational(1, 4) for a in (0, 1) for b in (0, 1)}


def test_diffprivlib_laplace_and_geometric_are_refused_at_the_adapters_line():
    def laplace(data, eps, rng):
        return mechanisms.Laplace(epsilon=float(eps), sensitivity=1, random_state=rng).randomise(data[0])

    def geometric(data, eps, rng):
        return mechanisms.Geometric(epsilon=float(eps), sensitivity=1, random_state=rng).randomise(data[0])
    for fn, what in ((laplace, "numpy.log"), (geometric, "numpy.log")):
        err = refused(fn, eps=1)
        assert err.file == HERE and err.line == line_of(fn, "randomise(data[0])")  # library frames skipped
        assert what in err.problem


# -- the spec files ------------------------------------------------------------------------------

def spec_file_results(name: str):
    report = check_paths([str(AUDITS / name)], Options())
    return {(c.spec, c.claim_id): c for s in report.specs for c in s.claims}, report


def test_the_diffprivlib_audits_reach_their_expected_verdicts():
    claims, report = spec_file_results("diffprivlib_mechanisms.py")
    assert not report.unexpected()
    status = {key: c.status for key, c in claims.items()}
    assert status[("diffprivlib_binary", "float_rounding")] == Status.REFUTED
    assert status[("diffprivlib_binary", "private_up_to_rounding")] == Status.VERIFIED
    assert status[("diffprivlib_binary_double_eps", "private")] == Status.REFUTED
    assert status[("diffprivlib_exponential", "private")] == Status.VERIFIED
    assert status[("diffprivlib_geometric", "conforms")] == Status.CONSISTENT
    assert status[("diffprivlib_geometric_wrong_sensitivity", "private")] == Status.REFUTED
    assert status[("diffprivlib_laplace", "conforms")] == status[("diffprivlib_laplace", "private")] == Status.CONSISTENT


def test_the_opendp_audits_reach_their_expected_verdicts():
    pytest.importorskip("opendp.prelude")
    claims, report = spec_file_results("opendp_mechanisms.py")
    assert not report.unexpected()
    refuted = {key for key, c in claims.items() if c.status == Status.REFUTED}
    assert refuted == {("opendp_laplace_eps_scale", "conforms"), ("opendp_laplace_eps_scale", "private")}
    assert all(c.status == Status.CONSISTENT for key, c in claims.items() if key not in refuted)


@pytest.mark.parametrize("name, library", [("opendp_mechanisms.py", "opendp"),
                                           ("diffprivlib_mechanisms.py", "diffprivlib")])
def test_without_the_library_the_spec_file_fails_with_one_error_naming_the_extra(monkeypatch, name, library):
    for module in [m for m in sys.modules if m == library or m.startswith(library + ".")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, library, None)  # import opendp -> ImportError
    _, report = spec_file_results(name)
    assert report.statuses() == ["error"]
    assert "[audit]" in report.specs[0].error and library in report.specs[0].error
