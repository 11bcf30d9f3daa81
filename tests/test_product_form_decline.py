"""The argmax product form declines a primitive's draw before the primitive's law is built.

Every draw through the port is a DSL primitive (an exponential mechanism, a Bernoulli, a categorical),
never a comparison of noisy values, so the tracer refuses it at once: the law (an exponential
mechanism's scores, say) is built once, by the general reading, not twice.  The laws read are the
same as with the general reading alone.
"""
from __future__ import annotations

from fractions import Fraction

import sympy

import dpverify as dp
from dpverify.dsl.laws import Categorical
from dpverify.dsl.primitives import _draw
from dpverify.engine.program import product_form
from dpverify.engine.program.backend import IntervalBackend
from dpverify.engine.program.enumerate import Session
from dpverify.engine.program.reading import _call, distribution

CANDIDATES = (0, 1, 2, 3)


def test_the_tracer_builds_no_law_of_a_primitive() -> None:
    built = []

    def make():
        built.append(1)
        return Categorical(tuple((c, Fraction(1, len(CANDIDATES))) for c in CANDIDATES))

    def mech(data, eps):
        return _draw("categorical", make)

    run = lambda: mech((0,), Fraction(1, 2))  # noqa: E731
    assert product_form.distribution(run, Session(IntervalBackend(50))) is None
    assert built == []  # declined before the law was built
    law = _call(mech, (0,), {"eps": sympy.Rational(1, 2)}, Session(IntervalBackend(50)))
    assert sorted(law) == list(CANDIDATES) and built == [1]


def test_a_mixed_program_reads_the_same_law_as_the_general_reading() -> None:
    """Noise compared first, a primitive drawn after: declined at the primitive, the same law."""
    def mech(data, eps):
        a, b = dp.laplace(data[0], 1 / eps), dp.laplace(data[1], 1 / eps)
        first = a > b
        return (first, dp.bernoulli(Fraction(1, 3)))

    params = {"eps": sympy.Rational(1, 2)}
    law = distribution(mech, (0, 1), params, IntervalBackend(50))
    saved = product_form.distribution
    product_form.distribution = lambda program, session: None
    try:
        general = distribution(mech, (0, 1), params, IntervalBackend(50))
    finally:
        product_form.distribution = saved
    assert set(law) == set(general)
    assert all(law[o]._mpi_ == general[o]._mpi_ for o in law)
