"""Golden tests of the reference evaluator (tests/reference/) against hand-computed values.

The fuzzer trusts the reference, so the reference is checked here against closed forms:
randomized response achieves exactly eps, the exponential mechanism with a missing factor
2 achieves exactly twice its claim, a clamped geometric's masses sum to 1, the
hockey-stick divergence of randomized response, and exact zeros written with exp.
"""
from __future__ import annotations

from fractions import Fraction

import pytest
import sympy

from tests.reference import privacy, shim
from tests.reference.exactnum import ExpPoly, Q

HALF = sympy.Rational(1, 2)


def rr(data, eps):
    return shim.randomized_response(data[0], eps)


def _achieved(program, records, n, eps, relation="replace"):
    data = privacy.datasets(records, (n,) if isinstance(n, int) else n)
    laws = privacy.laws(program, data, {"eps": eps})
    return privacy.achieved(laws, privacy.pairs(data, relation)), laws, data


def test_randomized_response_achieves_exactly_eps():
    best, _, _ = _achieved(rr, (0, 1), 1, HALF)
    assert best.ratio == Q.exp(Fraction(1, 2))
    assert privacy.pure_holds(best, Q.exp(Fraction(1, 2)))
    assert not privacy.pure_holds(best, Q.exp(Fraction(1, 2) - Fraction(1, 10**100)))
    assert privacy.pure_holds(best, Q.exp(Fraction(1, 2) + Fraction(1, 10**100)))


def test_randomized_response_hockey_stick():
    """delta(eps') = (e^eps - e^eps') / (1 + e^eps) for eps' <= eps."""
    data = privacy.datasets((0, 1), (1,))
    laws = privacy.laws(rr, data, {"eps": sympy.Integer(2)})
    delta = privacy.hockey_stick(laws, privacy.pairs(data, "replace"), Q.exp(1))
    assert delta == (Q.exp(2) - Q.exp(1)) / (1 + Q.exp(2))
    assert privacy.hockey_stick(laws, privacy.pairs(data, "replace"), Q.exp(2)) == 0


def test_exponential_mechanism_missing_factor_two_achieves_twice():
    """Two candidates, a counting score (sensitivity 1): with the correct Delta = 1 the weights are
    e^{eps u / 2} and the loss is exactly eps/2; a mutant declaring Delta = 1/2 (the factor 2 lost)
    has loss exactly eps."""
    def em(delta):
        return lambda data, eps: shim.exponential((0, 1), lambda y: -abs(y - sum(data)), eps, sensitivity=delta)
    correct, _, _ = _achieved(em(1), (0, 1), 1, HALF)
    mutant, _, _ = _achieved(em(Fraction(1, 2)), (0, 1), 1, HALF)
    assert correct.ratio == Q.exp(Fraction(1, 4))
    assert mutant.ratio == Q.exp(Fraction(1, 2))


def test_geometric_clamped_masses():
    """P(out = j) = (a-1)/(a+1) a^-|j-v| inside, the tails at the ends; total 1 exactly."""
    def geo(data, eps):
        return shim.geometric(data[0], shim.exp(eps), lower=0, upper=3)
    _, laws, _ = _achieved(geo, (0, 1), 1, sympy.Integer(1))
    a = Q.exp(1)
    assert laws[0][1] == (a - 1) / (a + 1) / a
    assert laws[0][0] == a / (a + 1)
    assert laws[0][3] == a ** -2 / (a + 1)
    assert sum(laws[1].values(), Q.of(0)) == 1


def test_exact_zero_and_leaks():
    def leak(data, eps):
        z = shim.bernoulli(1 - shim.exp(eps) * shim.exp(-eps))
        return (z, data[0]) if z else z
    best, laws, _ = _achieved(leak, (0, 1), 1, HALF)
    assert laws[0] == {False: Q.of(1)} and not best.infinite
    best, _, _ = _achieved(lambda data, eps: data[0], (0, 1), 1, HALF)
    assert best.infinite


def test_relations_are_closed_and_asymmetry_found():
    data = privacy.datasets((0, 1), (0, 1))
    def remove(x, y):
        return len(y) == len(x) - 1
    assert sorted(privacy.pairs(data, remove)) == sorted(privacy.pairs(data, "addremove"))
    assert privacy.asymmetric(data, remove) is not None
    assert privacy.asymmetric(data, "addremove") is None


def test_order_dependence_found():
    data = privacy.datasets((0, 1), (2,))
    first = privacy.laws(lambda d, eps: d[0], data, {"eps": HALF})
    total = privacy.laws(lambda d, eps: sum(d), data, {"eps": HALF})
    assert privacy.order_dependent(first, data) is not None
    assert privacy.order_dependent(total, data) is None


@pytest.mark.parametrize("excess", [10**30, 10**60, 10**100])
def test_signs_of_tiny_excesses_at_huge_eps(excess):
    big = Q.exp(10**4)
    assert big * Q.exp(Fraction(1, excess)) > big
    assert (big * (1 + Fraction(1, excess)) - big).sign() == 1
    assert ExpPoly({Fraction(1): Fraction(1), Fraction(0): Fraction(-1)}).sign() == 1


def test_rejection_loop_is_the_conditional_law():
    """A uniform proposal accepted w.p. e^{-eps |y - q| / 2} has the exponential mechanism's law."""
    def accept(y, q, eps):
        return y if shim.bernoulli(shim.exp(-eps * abs(y - q) / 2)) else shim.REJECTED

    def rejection(data, eps):
        return shim.repeat_until_accepted(lambda: accept(shim.uniform((0, 1, 2)), sum(data), eps))

    def em(data, eps):
        return shim.exponential(range(3), lambda y: -abs(y - sum(data)), eps, sensitivity=1)
    data = privacy.datasets((0, 1), (2,))
    for a, b in zip(privacy.laws(rejection, data, {"eps": HALF}), privacy.laws(em, data, {"eps": HALF})):
        assert privacy.same_law(a, b)


def test_unclamped_geometric_tail_is_lumped_exactly():
    """Membership in a finite set: exact on the tails; arithmetic on a lumped tail is refused."""
    def member(data, eps):
        return shim.geometric(sum(data), shim.exp(eps)) in {0, 2}

    def parity(data, eps):
        return shim.geometric(sum(data), shim.exp(eps)) % 2
    data = privacy.datasets((0, 1), (1,))
    laws = privacy.laws(member, data, {"eps": sympy.Integer(1)})
    a = Q.exp(1)
    assert laws[0][True] == (a - 1) / (a + 1) * (1 + a ** -2)
    with pytest.raises(shim.Unsupported):
        privacy.laws(parity, data, {"eps": sympy.Integer(1)})
