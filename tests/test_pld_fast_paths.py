"""The fast paths of :mod:`dpverify.engine.pld` give the same enclosures as the plain interval-context code they
replace (kept here as the references)."""
from __future__ import annotations

import functools
import math

import mpmath
import pytest
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


def _reference_bounds(ctx, found, eps):
    """laplace_mixture_bounds.bounds as it was: the Q-sum by Horner's rule in the interval context, per eps."""
    from dpverify.engine.pld.bounds import BITS, _floor
    lattice, offset = found
    h = lattice.h
    ends = []
    for up, (first, coeffs, overflow) in ((False, lattice.lower), (True, lattice.upper)):
        def loss(j):
            return offset + (first + j) * h
        above = min(max(_floor(ctx, (eps - offset) / h) - first, 0), len(coeffs))
        while above > 0 and loss(above - 1).a > eps.b:
            above -= 1
        while above < len(coeffs) and not loss(above).a > eps.b:
            above += 1
        total = ctx.mpf(sum(coeffs[above:]) + (overflow if up else 0))
        if above < len(coeffs):
            x, horner = ctx.exp(-h), ctx.mpf(0)
            for c in reversed(coeffs[above:]):
                horner = horner * x + c
            total -= ctx.exp(eps - loss(above)) * horner
        j = above - 1
        while j >= 0 and loss(j).b > eps.a:
            excess = 1 - ctx.exp(eps - loss(j))
            total += coeffs[j] * ctx.mpf([max(excess.a, 0), max(excess.b, 0)])
            j -= 1
        value = total / ctx.mpf(2) ** BITS
        ends.append(value)
    return ends


@pytest.mark.parametrize("q, t, added, times, n", [(R(1, 10), 1, True, 3, 40), (R(1, 10), 1, False, 3, 40),
                                                   (R(1, 2), R(1, 3), True, 5, 20), (R(1, 100), 2, False, 4, 30)])
def test_the_laplace_lattice_bounds_by_suffix_sums_meet_the_horner_ones(q, t, added, times, n) -> None:
    from dpverify.engine.pld.laplace_mixture_bounds import bounds, discretised
    backend = IntervalBackend(50)
    ctx = backend.ctx
    found = discretised(ctx, backend.num(q), backend.num(t), added, times, n)
    top = float(found[0].h.b) * (len(found[0].upper[1]) + found[0].upper[0]) + float(found[1].b)
    for k in range(12):
        eps = backend.num(R(k, 11) * R(round(top * 1000), 1000))
        fast = bounds(ctx, found, eps)
        lower, upper = _reference_bounds(ctx, found, eps)
        for mine, theirs, index in ((fast.lower, lower, 0), (fast.upper, upper, 1)):
            ends = [mpmath.mp.make_mpf(e) for e in (*mine._mpi_, *theirs._mpi_)]
            scale = max(abs(e) for e in ends)
            # the same certified sum enclosed two ways: its lower (upper) ends agree to 40 digits
            reference = max(ends[2], 0) if index == 0 else max(ends[3], 0)
            assert abs(ends[0] - reference) <= scale * mpmath.mpf(10) ** -40 or scale == 0
        assert fast.lower.a >= 0 and fast.lower.a <= fast.upper.b


@settings(max_examples=25, deadline=None)
@given(coeffs=st.lists(st.integers(0, 2 ** 170), min_size=1, max_size=40), dps=st.sampled_from([20, 50]))
def test_the_suffix_sums_enclose_the_q_sums(coeffs, dps) -> None:
    from dpverify.engine.pld.bounds import Discretised
    from dpverify.engine.pld.laplace_mixture_bounds import _suffix_sums
    ctx = IntervalBackend(dps).ctx
    h, offset = ctx.mpf(1) / 7, ctx.mpf(-3) / 5
    lattice = Discretised(h, (2, coeffs, 0), (2, coeffs, 0))
    s_p, s_q = _suffix_sums(ctx, (lattice, offset), True)
    with mpmath.workdps(dps + 60):
        for i in range(len(coeffs) + 1):
            assert s_p[i] == sum(coeffs[i:])
            exact = sum(mpmath.mpf(c) * mpmath.exp(-(mpmath.mpf(-3) / 5 + (2 + j) * mpmath.mpf(1) / 7))
                        for j, c in enumerate(coeffs) if j >= i)
            lo, hi = (mpmath.mp.make_mpf(e) for e in s_q[i])
            assert lo <= exact <= hi


@settings(max_examples=60, deadline=None)
@given(a=st.lists(st.integers(0, 2 ** 200), min_size=1, max_size=50),
       b=st.lists(st.integers(0, 2 ** 200), min_size=1, max_size=50),
       zeros=st.integers(0, 3))
def test_flints_product_is_the_packed_integer_product(a, b, zeros) -> None:
    from dpverify.engine.pld.bounds import _exact_product, _packed_product
    a = a + [0] * zeros  # zero leading coefficients (the tails): the product keeps its full length
    if sum(a) and sum(b):  # (the packed product sizes its bytes from the sums: it needs both positive)
        assert _exact_product(a, b) == _packed_product(a, b)
    else:
        assert _exact_product(a, b) == [0] * (len(a) + len(b) - 1)
    assert len(_exact_product(a, b)) == len(a) + len(b) - 1
    assert _exact_product([0, 0], [0]) == [0, 0]


@pytest.mark.parametrize("q, distance, s, bits, prec", [
    (R(1, 100), R(1), (3, 5), 40, 90), (R(1, 10), R(2), (2, 0), 30, 60), (R(1, 256), R(1, 2), (5, 40), 60, 120)])
def test_the_inlined_moment_integrand_is_the_pairs(q, distance, s, bits, prec) -> None:
    """M(s) by Pair._moment (inlined integrand) is the ball, and costs the evaluations, of the integrand written
    with Pair._lam and Pair._integral."""
    from fractions import Fraction

    from flint import acb, ctx

    from dpverify.engine.pld import gaussian_mellin as gm
    with ctx.workprec(prec):
        pair = gm.Pair(gm._ball(Fraction(q.p, q.q)), gm._ball(Fraction(distance.p, distance.q)), ("test", q, distance))
        point = acb(*s)
        lo, hi = pair._range(float(point.real.upper()))

        def f(z, analytic):
            return (point * pair._lam(z).log(analytic=analytic)).exp() * pair.norm * (-(z * z) / 2).exp()
        before = gm.EVALUATIONS[0]
        reference = pair._integral(f, lo, hi, bits)
        cost = gm.EVALUATIONS[0] - before
        before = gm.EVALUATIONS[0]
        found = pair._moment(point, bits)
        assert gm.EVALUATIONS[0] - before == cost
        tails = found - reference  # the tails' bound is added as a radius only
        assert found.real.mid() == reference.real.mid() and found.imag.mid() == reference.imag.mid()
        assert tails.real.contains(0) and tails.imag.contains(0)


@settings(max_examples=60, deadline=None)
@given(a=st.dictionaries(st.tuples(st.integers(-30, 30), st.integers(-5, 40)), st.integers(0, 2 ** 90), min_size=1, max_size=25),
       b=st.dictionaries(st.tuples(st.integers(-30, 30), st.integers(-5, 40)), st.integers(0, 2 ** 90), min_size=1, max_size=25))
def test_the_sparse_flint_product_is_the_loops(a, b) -> None:
    from dpverify.engine.pld import lattice
    loop: dict = {}
    for (k1, j1), c1 in a.items():
        for (k2, j2), c2 in b.items():
            loop[(k1 + k2, j1 + j2)] = loop.get((k1 + k2, j1 + j2), 0) + c1 * c2
    found = lattice._sparse_product(a, b)
    # the same terms (a zero coefficient kept as a term, as the loop keeps it) and coefficients
    assert {k: v for k, v in found.items() if v} == {k: v for k, v in loop.items() if v}
    if all(a.values()) and all(b.values()):
        assert set(found) == set(loop)
    assert lattice._multiply(a, b).items() >= {k: v for k, v in loop.items() if v}.items()


def test_a_power_by_flint_is_the_power_by_the_loop(monkeypatch) -> None:
    from dpverify.engine.pld import lattice
    terms = {(1, 1): 3, (-1, 0): 5, (2, 0): 7, (0, 3): 1}
    fast = lattice.power(terms, 37)
    monkeypatch.setattr(lattice, "FLINT_FROM", 10 ** 12)
    assert lattice.power(terms, 37) == fast


def _reference_composed_terms(parts, backend):
    """atoms.composed_terms as it was (the interval context's operators), without its budget check."""
    from dpverify.engine.pld.atoms import _counts, _powers
    ctx = backend.ctx
    out = [((), ctx.mpf(0), ctx.mpf(1), ctx.mpf(1))]
    for found, times in parts:
        if not found.ratios:
            continue
        losses = [ctx.log(backend.num(r)) for r in found.ratios]
        p_masses = [backend.num(m) for m in found.masses]
        q_masses = [backend.num(m / r) for m, r in zip(found.masses, found.ratios)]
        p_pow = [_powers(ctx, m, times) for m in p_masses]
        q_pow = [_powers(ctx, m, times) for m in q_masses]
        own = []
        factorials = _powers(ctx, None, times)
        for counts in _counts(len(losses), times):
            coefficient = factorials[times]
            for n in counts:
                if n > 1:
                    coefficient = coefficient / factorials[n]
            loss, p_mass, q_mass = ctx.mpf(0), coefficient, coefficient
            for i, n in enumerate(counts):
                if n:
                    loss += n * losses[i]
                    p_mass *= p_pow[i][n]
                    q_mass *= q_pow[i][n]
            own.append((counts, loss, p_mass, q_mass))
        out = [(c1 + c2, l1 + l2, p1 * p2, q1 * q2) for c1, l1, p1, q1 in out for c2, l2, p2, q2 in own]
    return out


@pytest.mark.parametrize("rate, eps, times, dps", [(R(1, 10), R(1), 40, 50), (R(1, 3), R(1, 2), 7, 20),
                                                   (R(1, 100), R(2), 120, 50)])
def test_composed_terms_are_the_interval_contexts(rate, eps, times, dps) -> None:
    from dpverify.engine.pld.atoms import atoms, composed_terms, poisson_subsampled
    e = sympy.exp(eps)
    p, q = [e / (1 + e), 1 / (1 + e)], [1 / (1 + e), e / (1 + e)]
    (mp, mq), _ = poisson_subsampled(p, q, rate)
    first = atoms(mp, mq)
    three = atoms([R(1, 2), R(1, 3), R(1, 6)], [R(1, 3), R(1, 3), R(1, 3)])
    backend = IntervalBackend(dps)
    for parts in ([(first, times)], [(first, times), (three, 3)]):
        found = composed_terms(parts, backend)
        reference = _reference_composed_terms(parts, backend)
        key = lambda t: (t[0], t[1]._mpi_, t[2]._mpi_, t[3]._mpi_)  # noqa: E731
        assert sorted(map(key, found)) == sorted(map(key, reference))


@settings(max_examples=40, deadline=None)
@given(eps=st.sampled_from([R(1, 10), R(1, 2), R(1)]), times=st.integers(1, 40),
       at=st.fractions(min_value=0, max_value=8, max_denominator=40), leak=st.sampled_from([0, R(1, 1000)]))
def test_the_curves_suffix_sums_enclose_delta(eps, times, at, leak) -> None:
    """The plot's enclosure (suffix sums) meets delta_at's and agrees with it to 40 digits."""
    from dpverify.engine.pld.lattice import delta_curve
    pld = _rr(eps, sympy.sympify(leak)).compose(times)
    backend = IntervalBackend(50)
    level = R(at.numerator, at.denominator)
    exact, fast = delta_at(pld, level, backend).delta, delta_curve(pld, level, backend)
    lo, hi = (mpmath.mp.make_mpf(e) for e in exact._mpi_)
    flo, fhi = (mpmath.mp.make_mpf(e) for e in fast._mpi_)
    assert flo <= hi and lo <= fhi
    assert abs(fhi - hi) <= mpmath.mpf(10) ** -40 * max(hi, mpmath.mpf(10) ** -300)


def test_the_raw_masses_and_grid_suffix_sums_are_the_interval_contexts() -> None:
    from dpverify.engine.pld import lattice
    from dpverify.engine.pld.bounds import Discretised, _suffix_sums
    backend = IntervalBackend(50)
    ctx = backend.ctx
    for eps, leak, times in ((R(1, 2), 0, 30), (R(1, 10), R(1, 1000), 7)):
        pld = _rr(eps, sympy.sympify(leak)).compose(times)
        found = lattice._masses(pld, backend)
        w = ctx.exp(backend.num(pld.step))
        d = ctx.mpf(1)
        for denominator, exponent in pld.denominators:
            d *= sum((c * w ** j for j, c in denominator.items()), ctx.mpf(0)) ** exponent
        by_k: dict = {}
        for (k, j), c in pld.terms.items():
            by_k[k] = by_k.get(k, ctx.mpf(0)) + c * w ** j
        reference = [(k, by_k[k] / d, w ** (-k)) for k in sorted(by_k)]
        assert [(k, m._mpi_, b._mpi_) for k, m, b in found] == [(k, m._mpi_, b._mpi_) for k, m, b in reference]
    coeffs = [3 ** 90, 0, 7 ** 50 + 1, 2 ** 160, 5]
    grid = Discretised(ctx.mpf(1) / 3, (-2, coeffs, 0), (-2, coeffs, 0))
    s_p, s_q = _suffix_sums(ctx, grid, True)
    ratio, back = ctx.exp(-grid.h), ctx.exp(-(-2 + len(coeffs) - 1) * grid.h)
    r_p, r_q = [ctx.mpf(0)] * (len(coeffs) + 1), [ctx.mpf(0)] * (len(coeffs) + 1)
    for j in range(len(coeffs) - 1, -1, -1):
        r_p[j] = r_p[j + 1] + coeffs[j]
        r_q[j] = r_q[j + 1] + coeffs[j] * back
        back = back / ratio
    assert [v._mpi_ for v in s_p] == [v._mpi_ for v in r_p] and [v._mpi_ for v in s_q] == [v._mpi_ for v in r_q]
