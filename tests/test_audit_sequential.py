"""The statistical audit's sequential tests (dpverify/checks/audit/sequential.py): the spending keeps
each test's error probability, the screen never changes a decision, the draws read look by look are the
fixed-n sampler's, and a broken code is refuted at an early look while a correct one is sampled in full."""
from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import dpverify as dp
from dpverify.checks.audit import clopper_pearson as cp
from dpverify.checks.audit.sequential import LOOKS, look_level, looks, may_reject
from dpverify.results import Status

eps = dp.symbol("eps", positive=True)
BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)


@given(st.integers(1, 10 ** 7), st.floats(1e-15, 0.5))
def test_the_levels_of_the_looks_add_up_to_at_most_the_tests_level(n: int, level: float) -> None:
    sizes = looks(n)
    assert sizes[-1] == n and sizes == sorted(set(sizes)) and len(sizes) <= LOOKS and sizes[0] >= 1
    assert sum(look_level(level, m, n) for m in sizes) <= level * (1 + 1e-12)
    assert look_level(level, n, n) == level / 2


@settings(max_examples=400, deadline=None)
@given(st.integers(1, 5000), st.data(), st.floats(0.001, 0.999), st.floats(0, 0.05),
       st.sampled_from([1e-3, 1e-6, 1e-11]))
def test_the_screen_never_hides_a_rejection(m: int, data, p: float, width: float, level: float) -> None:
    k = data.draw(st.integers(0, m))
    lo, hi = p, min(0.999999, p + width)
    if cp.outside(m, k, lo, hi, level):
        assert may_reject(m, k, lo, hi, level), (m, k, lo, hi, level)


def rr(data, eps):
    return dp.randomized_response(data[0], eps)


def rr_rng(data, eps, rng):
    keep = math.exp(eps) / (1 + math.exp(eps))
    return data[0] if rng.random() < keep else 1 - data[0]


def rr_double(data, eps, rng):
    return rr_rng(data, 2 * eps, rng)


def test_draws_read_look_by_look_are_the_fixed_n_samples() -> None:
    box = dp.black_box(rr_rng, spec_program=rr, samples=3000)
    draws = box.draws((1,), {"eps": 1}, 0, 1)
    prefix = [next(draws) for _ in range(3000)]
    assert Counter(prefix) == box.sample((1,), {"eps": 1}, 0, 1)


def test_a_broken_code_stops_early_and_a_correct_one_is_sampled_in_full() -> None:
    broken = dp.spec(dp.black_box(rr_double, spec_program=rr, samples=20_000), universe=BIT, grid={eps: [1]},
                     claims=[dp.conforms(rr), dp.private(eps)])
    for result in dp.check(broken):
        assert result.status == Status.REFUTED, result.message
        assert result.evidence.samples < 20_000 and "sequential test's look" in result.message
        assert result.evidence.confirmed is True
        k, m = map(int, result.witness.p.split("/"))
        assert m == result.evidence.samples and 0 <= k <= m
    correct = dp.spec(dp.black_box(rr_rng, spec_program=rr, samples=20_000), universe=BIT, grid={eps: [1]},
                      claims=[dp.conforms(rr), dp.private(eps)])
    for result in dp.check(correct):
        assert result.status == Status.CONSISTENT, result.message
        assert result.evidence.samples == 20_000


def test_a_small_deviation_is_still_found_at_the_last_look() -> None:
    """Off by 0.03 in the keep probability: invisible at the early looks, rejected on all 20,000 draws."""
    def rr_slightly_off(data, eps, rng):
        keep = math.exp(eps) / (1 + math.exp(eps)) + 0.03
        return data[0] if rng.random() < keep else 1 - data[0]

    spec = dp.spec(dp.black_box(rr_slightly_off, spec_program=rr, samples=20_000), universe=BIT, grid={eps: [1]},
                   claims=[dp.conforms(rr)])
    result, = dp.check(spec)
    assert result.status == Status.REFUTED, result.message
    assert result.evidence.samples > 1250
