"""What the argmax product form reuses must never change a law (engine/program/product_form.py).

Two things are reused, and each is checked here against the computation without it:

* across datasets, one session's integrals: P(argmax = w) is cached under the winner's law and the
  sorted laws of the others *relative to the winner's centre* (kind, centre offset, scale), so that
  permuted and shifted answer vectors share one integral;
* across the paths of one dataset, the first path's noise laws: every later path's draws are compared
  with them field by field (:func:`product_form.same_laws`) instead of being checked again.

"Without it" is a fresh session per dataset (nothing cached; certified intervals must then be equal to
the last bit, since the same integral is computed from the same exact description) and the general
reading (every comparison path integrated on its own; enclosures must overlap and the exact sympy
readings be equal).  Vectors that differ by a tiny exact amount (1/3 against 1/3 + 10^-30) and scales that
differ likewise must get different laws; each key and template check is also shown to matter by a
mutant that drops it and that these tests then catch.
"""
from __future__ import annotations

import itertools
import random
from fractions import Fraction

import mpmath
import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpverify as dp
from dpverify.engine.program import product_form
from dpverify.engine.program.backend import IntervalBackend, SympyBackend
from dpverify.engine.program.enumerate import Session
from dpverify.engine.program.reading import _call, distribution

from .helpers import lo_hi
from .test_product_form import assert_same, general_reading, noisy_max

IV = IntervalBackend(50)
eps = dp.symbol("eps", positive=True)
TINY = Fraction(1, 10 ** 30)


def laws(mech, vectors, params, backend=IV, shared=True):
    """Each vector's law, in one session (``shared``: caches reused across the vectors) or a fresh one each."""
    session = Session(backend)
    out = []
    for q in vectors:
        law = _call(mech, tuple(q), params, session if shared else Session(backend))
        out.append(law)
    return out


def identical(a, b) -> bool:
    """Two certified laws with the same outputs and bit-for-bit the same enclosures."""
    return set(a) == set(b) and all(lo_hi(a[o]) == lo_hi(b[o]) for o in a)


def recognised(mech, q, params) -> bool:
    return product_form.distribution(lambda: mech(tuple(q), **params), Session(IV)) is not None


def relatives(q, rng):
    """q, a permutation of it, and q shifted by a constant: the vectors whose integrals are shared."""
    permuted = list(q)
    rng.shuffle(permuted)
    shift = Fraction(rng.randint(-6, 6), rng.randint(1, 3))
    return [tuple(q), tuple(permuted), tuple(a + shift for a in q)]


rationals = st.fractions(min_value=-3, max_value=3, max_denominator=6)
scales = st.fractions(min_value=Fraction(1, 3), max_value=4, max_denominator=6)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), m=st.integers(min_value=2, max_value=5))
def test_shared_integrals_give_the_laws_of_a_fresh_session(data, m) -> None:
    """Random vectors (with their permutations and shifts), kinds and scales: the shared session's laws are
    the fresh sessions' to the last bit, and the general reading's within its enclosures."""
    kinds = data.draw(st.lists(st.sampled_from(["laplace", "exponential"]), min_size=m, max_size=m))
    widths = data.draw(st.lists(scales, min_size=m, max_size=m))
    mech = noisy_max(list(zip(kinds, widths)))
    q = data.draw(st.lists(rationals, min_size=m, max_size=m))
    vectors = relatives(q, random.Random(data.draw(st.integers(0, 2 ** 32))))
    vectors += [tuple(data.draw(st.lists(rationals, min_size=m, max_size=m))) for _ in range(2)]
    params = {"eps": Fraction(1)}
    assert recognised(mech, q, params)
    shared, fresh = laws(mech, vectors, params), laws(mech, vectors, params, shared=False)
    for a, b in zip(shared, fresh):
        assert identical(a, b), (a, b)
    with general_reading():
        slow = laws(mech, vectors[:2], params, shared=False)
    for a, b in zip(shared, slow):
        assert_same(a, b)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(q=st.lists(st.integers(0, 2), min_size=3, max_size=4), eps_value=scales)
def test_the_benchmark_noisy_max_shared_and_fresh_agree(q, eps_value) -> None:
    """The benchmark's program (Lap(2/eps) per answer) at random eps, over all of q's permutations."""
    def rnm(q, eps):
        best, value = 0, dp.laplace(q[0], 2 / eps)
        for i in range(1, len(q)):
            x = dp.laplace(q[i], 2 / eps)
            if x > value:
                best, value = i, x
        return best
    vectors = sorted(set(itertools.permutations(q)))
    params = {"eps": eps_value}
    for a, b in zip(laws(rnm, vectors, params), laws(rnm, vectors, params, shared=False)):
        assert identical(a, b)


def exact_laws(mech, vectors, shared=True):
    return laws(mech, vectors, {"eps": Fraction(1)}, backend=SympyBackend(), shared=shared)


def exactly_equal(a, b) -> bool:
    return set(a) == set(b) and all(sympy.simplify(a[o] - b[o]) == 0 for o in a)


def test_a_tiny_exact_difference_in_an_answer_is_not_shared() -> None:
    """(1/3, 0, 1) and (1/3 + 10^-30, 0, 1): different laws, exactly (sympy) and at 50 digits, in one session;
    each as a fresh session computes it and as the general reading does."""
    mech = noisy_max([("laplace", Fraction(2))] * 3)
    vectors = [(Fraction(1, 3), 0, 1), (Fraction(1, 3) + TINY, 0, 1), (0, Fraction(1, 3), 1)]
    exact = exact_laws(mech, vectors)
    assert not exactly_equal(exact[0], exact[1])
    assert exactly_equal(exact[0], {0: exact[2][1], 1: exact[2][0], 2: exact[2][2]})  # a permutation: shared
    for a, b in zip(exact, exact_laws(mech, vectors, shared=False)):
        assert exactly_equal(a, b)
    with general_reading():
        slow = exact_laws(mech, vectors[:2], shared=False)
    for a, b in zip(exact, slow):
        assert exactly_equal(a, b)
    certified = laws(mech, vectors, {"eps": Fraction(1)})
    assert not identical(certified[0], certified[1])
    lo0, hi0 = lo_hi(certified[0][0])
    lo1, hi1 = lo_hi(certified[1][0])
    assert hi0 < lo1, "1/3 + 10^-30 wins more often than 1/3: disjoint enclosures at 50 digits"
    for a, b in zip(certified, laws(mech, vectors, {"eps": Fraction(1)}, shared=False)):
        assert identical(a, b)


@pytest.mark.parametrize("widths", [
    [Fraction(2), Fraction(2), Fraction(2) + TINY],
    [Fraction(2), Fraction(3), Fraction(2)],
    [Fraction(1, 2), Fraction(2), Fraction(2)],
])
def test_scale_variations_are_not_shared(widths) -> None:
    """The same answers and centre offsets, one scale changed (by 10^-30 or more): a different law from the
    all-equal scales, exactly, although both are computed in one session."""
    base = noisy_max([("laplace", Fraction(2))] * 3)
    varied = noisy_max([("laplace", w) for w in widths])
    q = (0, 1, 1)
    session = Session(SympyBackend())
    first = _call(base, q, {"eps": Fraction(1)}, session)
    second = _call(varied, q, {"eps": Fraction(1)}, session)
    assert not exactly_equal(first, second)
    assert exactly_equal(second, exact_laws(varied, [q], shared=False)[0])
    with general_reading():
        assert exactly_equal(second, exact_laws(varied, [q], shared=False)[0])


def scale_on_path(q, eps):
    """The third answer's noise scale depends on the first comparison: paths draw different laws."""
    x0, x1 = dp.laplace(q[0], 2), dp.laplace(q[1], 2)
    best, value = (1, x1) if x1 > x0 else (0, x0)
    x2 = dp.laplace(q[2], 2 if best == 0 else 2 + TINY)
    return 2 if x2 > value else best


def centre_on_path(q, eps):
    """The third answer's centre moves by 10^-30 on one side of the first comparison."""
    x0, x1 = dp.laplace(q[0], 2), dp.laplace(q[1], 2)
    best, value = (1, x1) if x1 > x0 else (0, x0)
    x2 = dp.laplace(q[2] + (TINY if best == 1 else 0), 2)
    return 2 if x2 > value else best


def kind_on_path(q, eps):
    """The third answer's noise is Laplace on one side of the first comparison, exponential on the other."""
    x0, x1 = dp.laplace(q[0], 2), dp.laplace(q[1], 2)
    best, value = (1, x1) if x1 > x0 else (0, x0)
    x2 = (dp.laplace if best == 0 else dp.exponential_noise)(q[2], 2)
    return 2 if x2 > value else best


@pytest.mark.parametrize("mech", [scale_on_path, centre_on_path, kind_on_path], ids=lambda f: f.__name__)
def test_paths_drawing_other_laws_are_declined(mech) -> None:
    """The later paths' draws are compared with the first path's: any difference declines the product form,
    and the general reading gives the law."""
    q = (0, 1, Fraction(1, 2))
    assert not recognised(mech, q, {"eps": Fraction(1)})
    fast = distribution(mech, q, {"eps": Fraction(1)}, SympyBackend())
    with general_reading():
        slow = distribution(mech, q, {"eps": Fraction(1)}, SympyBackend())
    assert exactly_equal(fast, slow)


def test_the_template_check_matters(monkeypatch) -> None:
    """Mutant: every later path taken to draw the first path's laws.  The product form then reads
    scale_on_path as an argmax with the first path's scale 2 + 10^-30 on every path, a wrong law, and the
    comparison above sees it (kind_on_path stays declined: its supports differ between paths)."""
    monkeypatch.setattr(product_form, "same_laws", lambda variables, template: True)
    q = (0, 1, Fraction(1, 2))
    assert recognised(scale_on_path, q, {"eps": Fraction(1)})
    fast = distribution(scale_on_path, q, {"eps": Fraction(1)}, SympyBackend())
    with general_reading():
        slow = distribution(scale_on_path, q, {"eps": Fraction(1)}, SympyBackend())
    assert not exactly_equal(fast, slow)


def test_the_key_without_scales_would_be_caught(monkeypatch) -> None:
    """Mutant: the integral's key without the scales.  Two programs that differ only in one scale then share
    a law in one session, which the fresh session's law exposes."""
    monkeypatch.setattr(product_form, "_relative", lambda noise, origin: (noise.kind, noise.centre - origin))
    monkeypatch.setattr(product_form, "_law_of", lambda key: product_form.Noise(key[0], key[1], Fraction(2)))
    base = noisy_max([("laplace", Fraction(2))] * 3)
    varied = noisy_max([("laplace", Fraction(2)), ("laplace", Fraction(2)), ("laplace", Fraction(3))])
    q = (0, 1, 1)
    session = Session(SympyBackend())
    first = _call(base, q, {"eps": Fraction(1)}, session)
    second = _call(varied, q, {"eps": Fraction(1)}, session)
    assert exactly_equal(first, second)  # the mutant merged them ...
    with general_reading():
        truth = exact_laws(varied, [q], shared=False)[0]
    assert not exactly_equal(second, truth)  # ... and the general reading tells


def test_a_wrong_claim_is_still_refuted() -> None:
    """The correct noisy max over {0,1,2}^4 (achieved 0.947 eps) claimed eps/2-DP: refuted, with a witness
    whose ratio exceeds e^(eps/2); the true claim verified in the same run."""
    def rnm(q, eps):
        best, value = 0, dp.laplace(q[0], 2 / eps)
        for i in range(1, len(q)):
            x = dp.laplace(q[i], 2 / eps)
            if x > value:
                best, value = i, x
        return best
    spec = dp.spec(rnm, universe=dp.answers([0, 1, 2], 4), grid={eps: [1]},
                   claims=[dp.private(eps / 2), dp.private(eps)])
    wrong, right = dp.check(spec, proofs=False)
    assert wrong.status.value == "refuted" and wrong.witness is not None
    assert right.status.value == "verified"
    assert right.evidence.achieved_epsilon.startswith("0.947368134341")
    with mpmath.workdps(30):
        assert mpmath.mpf(right.evidence.achieved_epsilon) > mpmath.mpf(1) / 2


# -- the tracing state's comparisons (product_form._ArgmaxState.compare) can be caught when wrong ----------

def handicapped(q, eps):
    """Argmax of x_i + 1 against the running value: an edge with a negative bound, not an argmax."""
    best, value = 0, dp.laplace(q[0], 2)
    for i in range(1, len(q)):
        x = dp.laplace(q[i], 2)
        if x + 1 > value:
            best, value = i, x
    return best


def agree(fast, slow) -> bool:
    if set(fast) != set(slow):
        return False
    for output in fast:
        (a, b), (c, d) = lo_hi(fast[output]), lo_hi(slow[output])
        if not (a <= d and c <= b):
            return False
    return True


def last_first(q, eps):
    """Draws and compares from the last answer down, with <."""
    best, value = len(q) - 1, dp.laplace(q[-1], 2)
    for i in range(len(q) - 2, -1, -1):
        x = dp.laplace(q[i], 2)
        if value < x:
            best, value = i, x
    return best


TRACING_MUTANTS = {
    # (edits, program, caught how): "law" -- read as an argmax with a law the general reading contradicts;
    # "declined" -- the recognition itself no longer sees an argmax (an edge with a bound of the wrong sign,
    # outputs and roots that do not match), and the general reading gives the right law
    "offsets ignored": ([("d = b.offset - a.offset if b.offset is not a.offset else _ZERO", "d = _ZERO", 1)],
                        handicapped, "law"),
    "offset sign": ([("d = b.offset - a.offset", "d = a.offset - b.offset", 1)], handicapped, "declined"),
    "edge orientation": ([("(d, None) if outcome == greater else (None, d)",
                           "(None, d) if outcome == greater else (d, None)", 1)],
                         noisy_max([("laplace", Fraction(2))] * 4), "declined"),
    "direction ignored": ([("outcome == greater", "outcome", 1)], last_first, "declined"),
}


@pytest.mark.parametrize("name", list(TRACING_MUTANTS))
def test_a_wrong_tracing_comparison_is_caught(name, monkeypatch) -> None:
    """Each mutant of the tracing state's comparison either makes the product form's law differ from the
    general reading's on (0, 1, 2, 1) -- which tests/test_product_form.py compares on every program it
    reads -- or is declined by the recognition, the law then being the general reading's."""
    from .test_fuzz_continuous_mutants import mutate
    edits, mech, how = TRACING_MUTANTS[name]
    q, params = (0, 1, 2, 1), {"eps": Fraction(1)}
    with general_reading():
        slow = distribution(mech, q, params, IV)
    assert agree(distribution(mech, q, params, IV), slow)
    mutate(monkeypatch, product_form._ArgmaxState, "compare", edits)
    fast = distribution(mech, q, params, IV)
    if how == "law":
        assert recognised(mech, q, params)
        assert not agree(fast, slow), name
    else:
        assert not recognised(mech, q, params)
        assert agree(fast, slow)
