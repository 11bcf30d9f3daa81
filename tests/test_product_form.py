"""The argmax product form (engine/program/product_form.py) against the general reading's branch enumeration.

The product form must give the same law as enumerating every comparison branch, on every
program it accepts, and must decline (None: the general reading reads the run) every program
that is not exactly an argmax over shared independent noise -- mutants below.
"""
from __future__ import annotations

import contextlib
from fractions import Fraction

import mpmath
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpverify as dp
from dpverify.engine.program import product_form
from dpverify.engine.program.backend import IntervalBackend, SympyBackend
from dpverify.engine.program.enumerate import Session
from dpverify.engine.program.reading import distribution

from .helpers import encloses, lo_hi

IV = IntervalBackend(50)
eps = dp.symbol("eps", positive=True)
NARROW = mpmath.mpf(10) ** -35


@contextlib.contextmanager
def general_reading():
    """Read every run with the general branch enumeration (the product form declines)."""
    saved = product_form.distribution
    product_form.distribution = lambda program, session: None
    try:
        yield
    finally:
        product_form.distribution = saved


def both(mech, q, backend=IV, params=None):
    """(the law read by default, the law of the general reading) of ``mech`` on ``q``."""
    params = params or {"eps": Fraction(1)}
    fast = distribution(mech, tuple(q), params, backend)
    with general_reading():
        slow = distribution(mech, tuple(q), params, backend)
    return fast, slow


def recognised(mech, q, params=None) -> bool:
    kwargs = params or {"eps": Fraction(1)}
    return product_form.distribution(lambda: mech(tuple(q), **kwargs), Session(IntervalBackend(50))) is not None


def assert_same(fast, slow) -> None:
    assert set(fast) == set(slow)
    for output in fast:
        (a, b), (c, d) = lo_hi(fast[output]), lo_hi(slow[output])
        assert a <= d and c <= b, (output, fast[output], slow[output])  # the enclosures overlap
        assert b - a < NARROW, (output, fast[output])


def noisy_max(noises):
    """Report noisy max over the given (kind, scale) per answer: the index of the first largest."""
    def mech(q, eps):
        draw = [dp.laplace if kind == "laplace" else dp.exponential_noise for kind, _ in noises]
        best, value = 0, draw[0](q[0], noises[0][1])
        for i in range(1, len(q)):
            x = draw[i](q[i], noises[i][1])
            if x > value:
                best, value = i, x
        return best
    return mech


rationals = st.fractions(min_value=-3, max_value=3, max_denominator=4)
scales = st.fractions(min_value=Fraction(1, 2), max_value=3, max_denominator=4)
noise = st.tuples(st.sampled_from(["laplace", "exponential"]), scales)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), m=st.integers(min_value=2, max_value=4))
def test_product_form_agrees_with_the_branch_enumeration(data, m) -> None:
    """Random centres, scales and noise kinds, m <= 4: the same law, in narrow overlapping enclosures."""
    noises = data.draw(st.lists(noise, min_size=m, max_size=m))
    q = data.draw(st.lists(rationals, min_size=m, max_size=m))
    mech = noisy_max(noises)
    assert recognised(mech, q)
    fast, slow = both(mech, q)
    assert_same(fast, slow)
    assert encloses(sum(fast.values(), IV.num(0)), 1)


def test_the_exact_reading_gives_the_same_numbers() -> None:
    """The sympy reading of the product form is exact: it lies in the general reading's enclosures."""
    mech = noisy_max([("laplace", Fraction(2))] * 3 + [("exponential", Fraction(1))])
    q = (0, 1, 2, 1)
    exact = distribution(mech, q, {"eps": Fraction(1)}, SympyBackend())
    with general_reading():
        certified = distribution(mech, q, {"eps": Fraction(1)}, IV)
    assert set(exact) == set(certified)
    for output, value in exact.items():
        assert encloses(certified[output], value)


def test_noisy_max_of_the_benchmark_is_recognised_and_exact() -> None:
    def rnm(q, eps):
        best, value = 0, dp.laplace(q[0], 2 / eps)
        for i in range(1, len(q)):
            x = dp.laplace(q[i], 2 / eps)
            if x > value:
                best, value = i, x
        return best
    q = (2, 0, 1, 2, 1)
    assert recognised(rnm, q)
    assert_same(*both(rnm, q, params={"eps": Fraction(1, 2)}))


# -- mutants: each must be declined, or read to the same law ----------------------------------------

def first_only(q, eps):
    """Compares every value with the first one, not the running maximum: not an argmax."""
    first = dp.laplace(q[0], 2)
    best = 0
    for i in range(1, len(q)):
        if dp.laplace(q[i], 2) > first:
            best = i
    return best


def argmin(q, eps):
    best, value = 0, dp.laplace(q[0], 2)
    for i in range(1, len(q)):
        x = dp.laplace(q[i], 2)
        if x < value:
            best, value = i, x
    return best


def handicapped(q, eps):
    """Argmax of x_i - 1 against the running value: the offsets make it another law."""
    best, value = 0, dp.laplace(q[0], 2)
    for i in range(1, len(q)):
        x = dp.laplace(q[i], 2)
        if x + 1 > value:
            best, value = i, x
    return best


def record_count(q, eps):
    """How often the running maximum changed: a function of the path, not of the winner."""
    count, value = 0, dp.laplace(q[0], 2)
    for i in range(1, len(q)):
        x = dp.laplace(q[i], 2)
        if x > value:
            count, value = count + 1, x
    return count


def merged(q, eps):
    """Two winners share an output: not one to one."""
    return min(noisy_max([("laplace", Fraction(2))] * len(q))(q, eps), 1)


def with_a_coin(q, eps):
    return (noisy_max([("laplace", Fraction(2))] * len(q))(q, eps), dp.bernoulli(Fraction(1, 3)))


def unused_noise(q, eps):
    """An extra noise value that nothing compares: the comparisons do not span the variables."""
    dp.laplace(0, 1)
    return noisy_max([("laplace", Fraction(2))] * len(q))(q, eps)


def thresholded(q, eps):
    """The maximum, or None when it is below a constant: a comparison with a constant."""
    best, value = 0, dp.laplace(q[0], 2)
    for i in range(1, len(q)):
        x = dp.laplace(q[i], 2)
        if x > value:
            best, value = i, x
    return best if value > 1 else None


def conditional_draw(q, eps):
    """Draws a value only on some paths: paths draw different variables."""
    a, b = dp.laplace(q[0], 2), dp.laplace(q[1], 2)
    if a > b:
        return 0 if a > dp.laplace(q[2], 2) else 2
    return 1


def relabelled(q, eps):
    """An argmax whose outputs are names, one per winner: recognised, and the same law."""
    return "abcdef"[noisy_max([("laplace", Fraction(2))] * len(q))(q, eps)]


def last_first(q, eps):
    """Draws and compares from the last answer down: still an argmax."""
    best, value = len(q) - 1, dp.laplace(q[-1], 2)
    for i in range(len(q) - 2, -1, -1):
        x = dp.laplace(q[i], 2)
        if value < x:
            best, value = i, x
    return best


def tournament(q, eps):
    """Pairs compared first, then the winners: a tree of comparisons that is not a chain."""
    x = [dp.laplace(a, 2) for a in q]
    left = 0 if x[0] > x[1] else 1
    right = 2 if x[2] > x[3] else 3
    return left if x[left] > x[right] else right


DECLINED = [first_only, argmin, handicapped, record_count, merged, with_a_coin, unused_noise, thresholded,
            conditional_draw]
ACCEPTED = [relabelled, last_first, tournament]


@pytest.mark.parametrize("mech", DECLINED, ids=lambda f: f.__name__)
@pytest.mark.parametrize("q", [(0, 1, 2, 1), (2, 0, 0, 1)])
def test_mutants_are_declined_and_read_by_the_general_reading(mech, q) -> None:
    assert not recognised(mech, q)
    assert_same(*both(mech, q))


@pytest.mark.parametrize("mech", ACCEPTED, ids=lambda f: f.__name__)
@pytest.mark.parametrize("q", [(0, 1, 2, 1), (2, 0, 0, 1)])
def test_argmax_shapes_are_recognised_with_the_same_law(mech, q) -> None:
    assert recognised(mech, q)
    assert_same(*both(mech, q))


def outside_randomness(q, eps):
    import random
    return noisy_max([("laplace", Fraction(2))] * len(q))(q, eps) + int(random.random() < 2)


def test_outside_randomness_is_still_refused() -> None:
    """The tracer runs under the mechanism contract: the general reading then refuses as before."""
    assert not recognised(outside_randomness, (0, 1, 2))
    with pytest.raises(dp.SpecError):
        distribution(outside_randomness, (0, 1, 2), {"eps": Fraction(1)}, IV)


def test_a_noisy_max_with_too_little_noise_is_refuted() -> None:
    """Lap(1/(2 eps)) per answer under ell_inf neighbours is not eps-DP: refuted with a witness, m = 5."""
    def thin(q, eps):
        best, value = 0, dp.laplace(q[0], 1 / (2 * eps))
        for i in range(1, len(q)):
            x = dp.laplace(q[i], 1 / (2 * eps))
            if x > value:
                best, value = i, x
        return best
    spec = dp.spec(thin, universe=dp.answers([0, 1], 5), grid={eps: [1]}, claims=[dp.private(eps)])
    [result] = dp.check(spec, proofs=False)
    assert result.status.value == "refuted"
    assert result.witness is not None


def cycle(q, eps):
    """Compares three values in a cycle: the general reading's error, word for word."""
    x = [dp.laplace(a, 2) for a in q]
    return int(x[0] > x[1]) + int(x[1] > x[2]) + int(x[2] > x[0])


def swallows(q, eps):
    """Catches the refusal of a noisy value used as a truth value, and goes on."""
    best = noisy_max([("laplace", Fraction(2))] * len(q))(q, eps)
    try:
        bool(dp.laplace(0, 1))
    except Exception:
        pass
    return best


@pytest.mark.parametrize("mech", [cycle, swallows], ids=lambda f: f.__name__)
def test_refusals_read_as_without_the_product_form(mech) -> None:
    """A refusal met while tracing is not blamed on the general reading's run ("caught and went on")."""
    errors = []
    for reading in (contextlib.nullcontext, general_reading):
        with reading(), pytest.raises(dp.SpecError) as raised:
            distribution(mech, (0, 1, 2), {"eps": Fraction(1)}, IV)
        errors.append(raised.value.problem)
    assert errors[0] == errors[1]
    assert ("caught" in errors[0]) == (mech is swallows)
