"""The fast paths of :mod:`dpverify.engine.pld` give the same enclosures as the plain interval-context code they
replace (kept here as the references)."""
from __future__ import annotations

import functools
import math

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.engine.pld.lattice import Profile, _masses, delta_at, lattice_pld
from dpverify.engine.program.backend import IntervalBackend, exact_sign

R = sympy.Rational


def _reference_delta_at(pld, eps, backend) -> Profile:
    """delta_at as it was: every operation through the interval context's operators."""
    ctx = backend.ctx
    s = pld.step
    inf_p = ctx.mpf(1)
    for mass, times in pld.infinite:
        inf_p *= (ctx.mpf(1) - backend.num(mass)) ** times
    inf_p = ctx.mpf(1) - inf_p
    if s == 0:
        return Profile(inf_p, inf_p, ctx.mpf(0), 1)
    s_iv, eps_iv = backend.num(s), backend.num(eps)
    ratio = eps_iv / s_iv
    threshold = int(math.floor(float(ratio.a))) - 1
    while threshold < ratio.a:
        threshold += 1
    if not threshold > ratio.b and exact_sign(threshold * s - eps) in (0, -1):
        threshold += 1
    e_eps = ctx.exp(eps_iv)
    delta, p_event, q_event = ctx.mpf(0), ctx.mpf(0), ctx.mpf(0)
    for k, mass, back in _masses(pld, backend):
        if k < threshold:
            continue
        p_event += mass
        q_event += mass * back
        excess = ctx.mpf(1) - e_eps * back
        delta += mass * ctx.mpf([max(excess.a, 0), max(excess.b, 0)])
    return Profile(delta + inf_p, p_event + inf_p, q_event, threshold)


@functools.lru_cache(maxsize=None)
def _rr(eps: sympy.Expr, leak: sympy.Expr = sympy.Integer(0)):
    """Randomized response at eps, with an output of mass ``leak`` under P only (an infinite loss) and one
    under Q only."""
    e = sympy.exp(eps)
    p = [(1 - leak) * e / (1 + e), (1 - leak) / (1 + e), leak, sympy.Integer(0)]
    q = [(1 - leak) / (1 + e), (1 - leak) * e / (1 + e), sympy.Integer(0), leak]
    return lattice_pld(p, q)


def _same(a: Profile, b: Profile) -> bool:
    return (a.delta._mpi_ == b.delta._mpi_ and a.p_event._mpi_ == b.p_event._mpi_
            and a.q_event._mpi_ == b.q_event._mpi_ and a.threshold == b.threshold)


@settings(max_examples=40, deadline=None)
@given(eps=st.sampled_from([R(1, 10), R(1, 2), R(1), R(3, 7)]), times=st.integers(1, 60),
       at=st.fractions(min_value=0, max_value=8, max_denominator=50), leak=st.sampled_from([0, R(1, 1000)]),
       dps=st.sampled_from([20, 50]))
def test_delta_at_is_the_interval_contexts_sum_exactly(eps, times, at, leak, dps) -> None:
    pld = _rr(eps, sympy.sympify(leak)).compose(times)
    backend = IntervalBackend(dps)
    level = R(at.numerator, at.denominator)
    assert _same(delta_at(pld, level, backend), _reference_delta_at(pld, level, backend))


def test_delta_at_on_the_lattice_points_and_beyond_the_largest_loss() -> None:
    pld = _rr(R(1, 2)).compose(25)
    backend = IntervalBackend(50)
    for level in (0, R(1, 2), 3, R(25, 2), 13, sympy.log(2)):
        found = delta_at(pld, level, backend)
        assert _same(found, _reference_delta_at(pld, level, backend))
    assert delta_at(pld, 13, backend).delta._mpi_[1][1] == 0  # no loss above 25 * 1/2: delta is exactly 0
