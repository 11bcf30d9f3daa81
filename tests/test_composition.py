"""Composed privacy profiles: exact lattice PLDs, Gaussian and Laplace compositions, the profile claim.

References are computed independently of dpverify's code: binomial sums in mpmath at 60 digits for
randomized response, the closed form with mpmath's ncdf for Gaussians, numerical integration at
50 digits for two Laplace releases, and brute-force enumeration of T-tuples in exact sympy.
"""
from __future__ import annotations

import itertools

import mpmath
import pytest
import sympy
from hypothesis import given, settings, strategies as st
from sympy import Rational, exp

import dpverify as dp
from dpverify.engine.program.backend import IntervalBackend
from dpverify.engine.pld.lattice import NotOnLattice, delta_at, lattice_pld
from dpverify.engine.pld.atoms import atoms, composed_delta, poisson_subsampled
from dpverify.engine.pld.bounds import delta_bounds, discretise
from dpverify.errors import SpecError

eps = dp.symbol("eps", positive=True)
BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)


def rr_pair(e):
    keep = exp(e) / (1 + exp(e))
    return [keep, 1 - keep], [1 - keep, keep]


def binomial_delta(e, times, at, dps=60):
    """delta of T-fold randomized response at ``at``: a binomial sum over the number of truthful answers."""
    with mpmath.workdps(dps):
        e, at = mpmath.mpf(e.p) / e.q, mpmath.mpf(at.p) / at.q
        keep = mpmath.exp(e) / (1 + mpmath.exp(e))
        total = mpmath.mpf(0)
        for j in range(times + 1):
            loss = (2 * j - times) * e
            if loss > at:
                total += mpmath.binomial(times, j) * keep ** j * (1 - keep) ** (times - j) * (1 - mpmath.exp(at - loss))
        return total


@pytest.mark.parametrize("e, times, at", [(Rational(1, 2), 1, Rational(0)), (Rational(1, 10), 50, Rational(1)),
                                          (Rational(1, 3), 7, Rational(2, 3)), (Rational(1, 5), 25, Rational(3, 2))])
def test_randomized_response_against_binomial_sum(e, times, at):
    pld = lattice_pld(*rr_pair(e)).compose(times)
    found = delta_at(pld, at, IntervalBackend(60))
    reference = binomial_delta(e, times, at)
    with mpmath.workdps(60):
        assert found.delta.a - mpmath.mpf(10) ** -50 <= reference <= found.delta.b + mpmath.mpf(10) ** -50
        assert found.delta.b - found.delta.a < mpmath.mpf(10) ** -45


def test_loss_on_the_lattice_is_exact_at_a_tie():
    """At eps' = 3 eps (a loss of the lattice) the term with loss exactly eps' contributes 0."""
    e = Rational(1, 4)
    pld = lattice_pld(*rr_pair(e)).compose(5)
    found = delta_at(pld, 3 * e, IntervalBackend(50))
    assert found.threshold == 4  # the loss 3 s equals eps exactly: it is left out of S (its term is 0)
    assert abs(float(found.delta.mid) - float(binomial_delta(e, 5, 3 * e))) < 1e-15


def test_off_lattice_pair_is_refused():
    with pytest.raises(NotOnLattice):
        lattice_pld([Rational(1, 3), Rational(2, 3)], [Rational(1, 2), Rational(1, 2)])


def test_gaussian_composition_against_closed_form():
    spec = dp.spec(lambda data, eps: dp.gaussian(data[0], 2), universe=BIT, grid={eps: [1]},
                   claims=[dp.profile(at=[0, 1, 3], delta=1, times=9)])
    report = dp.check(spec)
    rows = report[0].evidence.rows
    mu = mpmath.sqrt(9) * mpmath.mpf(1) / 2
    for row, e in zip(rows, (0, 1, 3)):
        with mpmath.workdps(50):
            closed = mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu)
            assert abs(mpmath.mpf(row.achieved) - closed) < mpmath.mpf(10) ** -35


def _laplace_two_fold(t, at, dps=50):
    """delta_2(at) of two Laplace values t scales apart: the loss of one is t w.p. 1/2, -t w.p. e^-t/2 and
    has density e^(-(t - y)/2)/4 on (-t, t); integrate (1 - e^(at - l1 - l2))_+ over both, piece by piece."""
    with mpmath.workdps(dps + 10):
        t, at = mpmath.mpf(t), mpmath.mpf(at)
        atoms = [(t, mpmath.mpf(1) / 2), (-t, mpmath.exp(-t) / 2)]
        density = lambda y: mpmath.exp(-(t - y) / 2) / 4
        f = lambda total: max(1 - mpmath.exp(at - total), 0)

        def inner(l1):  # E over l2 of f(l1 + l2)
            total = sum(m * f(l1 + a) for a, m in atoms)
            cut = min(max(at - l1, -t), t)
            return total + mpmath.quad(lambda y: density(y) * f(l1 + y), [cut, t])
        total = sum(m * inner(a) for a, m in atoms)
        total += mpmath.quad(lambda y: density(y) * inner(y), [-t, min(max(at - t, -t), t), min(max(at + t, -t), t), t])
        return total


@pytest.mark.parametrize("grid", [64, 512])
def test_laplace_bounds_bracket_the_integral(grid):
    ctx = IntervalBackend(30).ctx
    found = discretise(ctx, [grid, grid], ctx.mpf(1) / grid)
    for at in (Rational(0), Rational(1, 2), Rational(3, 2)):
        bounds = delta_bounds(ctx, found, ctx.mpf(at.p) / at.q)
        reference = _laplace_two_fold(1, mpmath.mpf(at.p) / at.q)
        assert bounds.lower.a <= reference <= bounds.upper.b
        assert bounds.upper.b - bounds.lower.a < 4.0 / grid


def _status(spec):
    return [(c.id, p.status.value) for c, p in zip(spec.claims, dp.check(spec))]


def test_claims_verified_and_mutants_refuted():
    rr = dp.spec(lambda data, eps: dp.randomized_response(data[0], eps), universe=BIT,
                 grid={eps: [Rational(1, 10)]},
                 claims=[dp.profile(at=[3], delta=Rational(63, 100), times=1000, id="exact"),
                         dp.profile(at=[3], delta=Rational(62, 100), times=1000, id="too_small")])
    assert _status(rr) == [("exact", "verified"), ("too_small", "refuted")]
    lap = dp.spec(lambda data, eps: dp.laplace(data[0], 1), universe=BIT, grid={eps: [1]},
                  claims=[dp.profile(at=[Rational(1, 2)], delta=Rational(36, 100), times=2, id="above"),
                          dp.profile(at=[Rational(1, 2)], delta=Rational(34, 100), times=2, id="below")])
    assert _status(lap) == [("above", "verified"), ("below", "refuted")]
    gauss = dp.spec(lambda data, eps: dp.gaussian(data[0], 1), universe=BIT, grid={eps: [1]},
                    claims=[dp.profile(at=[1], delta=Rational(82, 100), times=10, id="above"),
                            dp.profile(at=[1], delta=Rational(81, 100), times=10, id="below")])
    assert _status(gauss) == [("above", "verified"), ("below", "refuted")]


def test_refutation_carries_confirmed_witness():
    rr = dp.spec(lambda data, eps: dp.randomized_response(data[0], eps), universe=BIT, grid={eps: [Rational(1, 2)]},
                 claims=[dp.profile(at=[1], delta=Rational(1, 10), times=20)])
    point = dp.check(rr)[0]
    assert point.status.value == "refuted"
    with mpmath.workdps(50):
        p, q = mpmath.mpf(point.witness.p), mpmath.mpf(point.witness.p_prime)
        assert p - mpmath.e * q > mpmath.mpf(1) / 10
        assert abs((p - mpmath.e * q) - binomial_delta(Rational(1, 2), 20, Rational(1))) < 1e-30


def poisson_pair(e, rate):
    """Randomized response of whether the record was kept (rate ``rate``): X = (1,) against X' = ()."""
    keep = exp(e) / (1 + exp(e))
    with_record = [rate * keep + (1 - rate) * (1 - keep), rate * (1 - keep) + (1 - rate) * keep]
    return with_record, [1 - keep, keep]


@pytest.mark.parametrize("times, at", [(1, Rational(0)), (10, Rational(1, 2)), (50, Rational(1))])
def test_poisson_subsampling_against_binomial_sum(times, at):
    """Both directions of the subsampled pair, composed: an independent binomial sum at 60 digits."""
    e, rate = Rational(1), Rational(1, 10)
    p, q = poisson_pair(e, rate)
    for first, second in ((p, q), (q, p)):
        found = composed_delta([(atoms(first, second), times)], at, IntervalBackend(60)).delta
        with mpmath.workdps(60):
            a = [mpmath.mpf(sympy.N(x, 70)) for x in first]
            b = [mpmath.mpf(sympy.N(x, 70)) for x in second]
            reference = mpmath.mpf(0)
            for j in range(times + 1):
                pj = mpmath.binomial(times, j) * a[0] ** j * a[1] ** (times - j)
                qj = mpmath.binomial(times, j) * b[0] ** j * b[1] ** (times - j)
                reference += max(pj - mpmath.exp(mpmath.mpf(at.p) / at.q) * qj, 0)
            assert found.a - mpmath.mpf(10) ** -45 <= reference <= found.b + mpmath.mpf(10) ** -45


def test_multinomial_agrees_with_lattice_on_randomized_response():
    e = Rational(1, 3)
    for times, at in ((30, Rational(1)), (7, Rational(2, 3))):
        lattice = delta_at(lattice_pld(*rr_pair(e)).compose(times), at, IntervalBackend(50)).delta
        multinomial = composed_delta([(atoms(*rr_pair(e)), times)], at, IntervalBackend(50)).delta
        assert abs(float(lattice.mid) - float(multinomial.mid)) < 1e-14 * max(float(lattice.mid), 1e-300)
        assert float(multinomial.b - multinomial.a) < 1e-40


masses = st.lists(st.integers(1, 9), min_size=2, max_size=3)


@settings(max_examples=25, deadline=None)
@given(p=masses, q=masses, times=st.integers(1, 4), at=st.sampled_from([Rational(0), Rational(1, 3), Rational(1)]))
def test_multinomial_equals_brute_force(p, q, times, at):
    """Random rational pairs (losses on no lattice): delta of the T-fold product, enumerated tuple by tuple."""
    size = min(len(p), len(q))
    p = [Rational(x, sum(p[:size])) for x in p[:size]]
    q = [Rational(x, sum(q[:size])) for x in q[:size]]
    found = composed_delta([(atoms(p, q), times)], at, IntervalBackend(50)).delta
    with mpmath.workdps(50):
        e_at = mpmath.exp(mpmath.mpf(at.p) / at.q)
        reference = mpmath.mpf(0)
        for combo in itertools.product(range(size), repeat=times):
            pm = mpmath.fprod(mpmath.mpf(p[i].p) / p[i].q for i in combo)
            qm = mpmath.fprod(mpmath.mpf(q[i].p) / q[i].q for i in combo)
            reference += max(pm - e_at * qm, 0)
        assert found.a - mpmath.mpf(10) ** -40 <= reference <= found.b + mpmath.mpf(10) ** -40
        assert found.b - found.a < mpmath.mpf(10) ** -30


def test_poisson_subsampled_pair_matches_the_program():
    """The engine's subsampled dominating pair of randomized response (both directions) gives the profile
    the spec program's laws give."""
    e, rate = Rational(1), Rational(1, 10)
    keep = exp(e) / (1 + exp(e))
    pairs = poisson_subsampled([keep, 1 - keep], [1 - keep, keep], rate)
    found = max(float(composed_delta([(atoms(*pair), 100)], Rational(1, 2), IntervalBackend(50)).delta.b)
                for pair in pairs)

    def poisson_rr(data, eps):
        kept = [r for r in data if dp.bernoulli(rate)]
        return dp.randomized_response(1 if kept else 0, eps)
    spec = dp.spec(poisson_rr, universe=dp.universe([1], n=range(0, 2), neighbours=dp.ADD_REMOVE), grid={eps: [1]},
                   claims=[dp.profile(at=[Rational(1, 2)], delta=1, times=100)])
    assert abs(float(dp.check(spec)[0].evidence.rows[0].achieved) - found) < 1e-15


def test_subsampled_composition_claims():
    rate = Rational(1, 10)

    def poisson_rr(data, eps):
        kept = [r for r in data if dp.bernoulli(rate)]
        return dp.randomized_response(1 if kept else 0, eps)
    e0 = dp.log(1 + rate * (dp.exp(eps) - 1))
    spec = dp.spec(poisson_rr, universe=dp.universe([1], n=range(0, 2), neighbours=dp.ADD_REMOVE), grid={eps: [1]},
                   claims=[dp.profile(at=[100 * e0], delta=0, times=100, id="basic"),
                           dp.profile(at=[10 * eps], delta=0, times=100, id="linear"),
                           dp.profile(at=[Rational(1, 2)], delta=Rational(1, 10), times=100, id="small")])
    assert _status(spec) == [("basic", "verified"), ("linear", "refuted"), ("small", "refuted")]


blocks = st.lists(st.tuples(st.integers(1, 5), st.integers(0, 3)), min_size=1, max_size=3)


@settings(max_examples=25, deadline=None)
@given(blocks=blocks, infinite=st.integers(0, 2), times=st.integers(1, 4), step=st.sampled_from([Rational(1, 3), Rational(1, 2), 1]))
def test_polynomial_power_equals_brute_force(blocks, infinite, times, step):
    """Random pairs made of symmetric blocks (outputs with losses +-k s), possibly an output of infinite
    loss: the composed PLD's masses equal brute-force sums over T-tuples, exactly (as rational functions of w)."""
    weights = [Rational(c) for c, _ in blocks] + [Rational(infinite)]
    total = sum(weights) + 1  # the last unit goes to an output only Q has
    p, q = [], []
    for (c, k), _ in zip(blocks, weights):
        a = exp(k * step)
        p += [Rational(c) / total * a / (1 + a), Rational(c) / total / (1 + a)]
        q += [Rational(c) / total / (1 + a), Rational(c) / total * a / (1 + a)]
    p += [Rational(infinite) / total, 0]
    q += [0, 1 / total]
    pld = lattice_pld(p, q).compose(times)
    w0 = sympy.Symbol("w0", positive=True)  # e^step
    in_w0 = lambda m: sympy.sympify(m).replace(lambda e: isinstance(e, sympy.exp),
                                               lambda e: w0 ** int(e.args[0] / step)).xreplace({sympy.E: w0 ** int(1 / step)})
    finite = [(in_w0(pm), k) for pm, qm, k in _losses(p, q, blocks) if qm != 0 and pm != 0]
    brute: dict = {}
    for combo in itertools.product(finite, repeat=times):
        key = sum(k for _, k in combo)
        brute[key] = brute.get(key, 0) + sympy.Mul(*(m for m, _ in combo))
    unit = int(pld.step / step) if pld.step != 0 else 1  # the lattice's step in units of ``step``
    found: dict = {}
    for (k, j), c in pld.terms.items():
        found[k * unit] = found.get(k * unit, 0) + c * w0 ** (j * unit)
    den = sympy.Mul(*(sum(c * w0 ** (j * unit) for j, c in d.items()) ** power for d, power in pld.denominators))
    assert sorted(found) == sorted(brute)
    for key, mass in brute.items():
        assert sympy.cancel(mass - found[key] / den) == 0
    assert pld.infinite == ((Rational(infinite) / total, times),)


def _losses(p, q, blocks):
    out = []
    for b, (_, k) in enumerate(blocks):
        out += [(p[2 * b], q[2 * b], k), (p[2 * b + 1], q[2 * b + 1], -k)]
    out += [(p[-2], q[-2], None), (p[-1], q[-1], None)]
    return out


@pytest.mark.parametrize("call, fix", [
    (lambda: dp.profile(at=[1], delta=Rational(1, 10), times=0), "times=100"),
    (lambda: dp.profile(at=[1, 2], delta=[Rational(1, 10)]), "one delta for every epsilon"),
    (lambda: dp.profile(at=[-1], delta=Rational(1, 10)), "epsilons >= 0"),
    (lambda: dp.profile(at=[1], delta=2), "between 0 and 1"),
    (lambda: dp.profile(at=[], delta=Rational(1, 10)), "at=[1, 2]"),
    (lambda: dp.profile(at=[0.5], delta=Rational(1, 10)), "Rational"),
])
def test_invalid_declarations(call, fix):
    with pytest.raises(SpecError) as info:
        call()
    assert fix in str(info.value)


PROFILE_SPEC = '''
from sympy import Rational
import dpverify as dp

eps = dp.symbol("eps", positive=True)
BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)


def rr(data, eps):
    return dp.randomized_response(data[0], eps)


def lap(data, eps):
    return dp.laplace(data[0], 1)


rr_composed = dp.spec(rr, universe=BIT, grid={eps: [Rational(1, 2)]},
                      claims=[dp.profile(at=[1, 2], delta=[Rational(7, 10), Rational(1, 2)], times=20, id="holds"),
                              dp.profile(at=[1], delta=Rational(1, 10), times=20, id="broken")])
lap_composed = dp.spec(lap, universe=BIT, grid={eps: [1]},
                       claims=[dp.profile(at=[Rational(1, 2)], delta=Rational(36, 100), times=2, id="bounds")])
'''


def test_report_sections_terminal_and_plugin_lines(tmp_path):
    """The profile section (table, the delta-against-eps plot, the witness), the terminal's columns and the
    plugin's text lines; --json keeps its keys and adds the evidence under figures."""
    from dpverify.options import Options
    from dpverify.report import sections
    from dpverify.report.evidence_lines import evidence_lines
    from dpverify.report.blocks import Figure, Table
    from dpverify.report.section_parts import Context
    from dpverify.report.terminal import _levels
    from dpverify.runner import check_paths
    path = tmp_path / "profiles.py"
    path.write_text(PROFILE_SPEC)
    report = check_paths([str(path)], Options())
    claims = {(s.name, c.claim_id): c for s in report.specs for c in s.claims}
    holds, broken, bounds = (claims[k] for k in (("rr", "holds"), ("rr", "broken"),
                                                  ("lap", "bounds")))
    assert [c.points[0].status.value for c in (holds, broken, bounds)] == ["verified", "refuted", "verified"]
    blocks = sections.blocks_for(holds, None, Context("t", lambda text: text))
    table = next(b for b in blocks if isinstance(b, Table))
    assert len(table.rows) == 2 and table.rows[0][3] == "1" and table.rows[0][4] == "0.7"
    figure = next(b for b in blocks if isinstance(b, Figure))
    assert "<svg" in figure.svg
    claimed, achieved = _levels(holds.points[0].evidence)
    assert claimed == "δ 0.7" and achieved.startswith("δ 0.")
    assert _levels(bounds.points[0].evidence)[1].startswith("δ [0.3")
    assert evidence_lines(broken.points[0].evidence)[0].startswith("20-fold: claimed delta(1")
    figures = broken.points[0].evidence.figures()
    assert figures["times"] == 20 and figures["method"] == "lattice" and len(figures["curve"]["delta"]) == 16


def _rr(data, eps):
    return dp.randomized_response(data[0], eps)


def _rr_half(data, eps):
    return dp.randomized_response(data[0], eps / 2)


def _rows(spec):
    return [point.evidence.rows for point in dp.check(spec)]


def test_different_mechanisms_composed_against_enumeration():
    """RR(eps) three times and RR(eps/2) twice on the same bit: the lattice of step eps/2, against all 2^5
    output tuples enumerated at 50 digits; and the same mechanism given twice equals its runs added."""
    e, at = Rational(1, 2), Rational(1, 3)
    spec = dp.spec(_rr, universe=BIT, grid={eps: [e]},
                   claims=[dp.profile(at=[at], delta=1, times=3, also=[(_rr_half, 2)], id="mixed"),
                           dp.profile(at=[at], delta=1, times=2, also=[(_rr, 3)], id="split"),
                           dp.profile(at=[at], delta=1, times=5, id="whole")])
    mixed, split, whole = (rows[0] for rows in _rows(spec))
    with mpmath.workdps(50):
        def law(x, level):
            keep = mpmath.exp(level) / (1 + mpmath.exp(level))
            return {x: keep, 1 - x: 1 - keep}
        levels = [mpmath.mpf(1) / 2] * 3 + [mpmath.mpf(1) / 4] * 2
        reference = mpmath.mpf(0)
        for outputs in itertools.product([0, 1], repeat=5):
            p = mpmath.fprod(law(0, lv)[o] for lv, o in zip(levels, outputs))
            q = mpmath.fprod(law(1, lv)[o] for lv, o in zip(levels, outputs))
            reference += max(p - mpmath.exp(mpmath.mpf(1) / 3) * q, 0)
        assert abs(mpmath.mpf(mixed.achieved) - reference) < mpmath.mpf(10) ** -35
    assert split.achieved == whole.achieved


def test_different_gaussians_and_laplaces_composed():
    def g1(data, eps):
        return dp.gaussian(data[0], 1)

    def g2(data, eps):
        return dp.gaussian(data[0], 2)

    def lap(data, eps):
        return dp.laplace(data[0], 1)

    def lap2(data, eps):
        return dp.laplace(data[0], 2)
    gauss = dp.spec(g1, universe=BIT, grid={eps: [1]}, claims=[dp.profile(at=[1], delta=1, times=4, also=[g2])])
    (row,), = _rows(gauss)
    with mpmath.workdps(50):
        mu = mpmath.sqrt(4 + mpmath.mpf(1) / 4)
        closed = mpmath.ncdf(mu / 2 - 1 / mu) - mpmath.e * mpmath.ncdf(-mu / 2 - 1 / mu)
        assert abs(mpmath.mpf(row.achieved) - closed) < mpmath.mpf(10) ** -35
    laplace = dp.spec(lap, universe=BIT, grid={eps: [1]},
                      claims=[dp.profile(at=[Rational(1, 2)], delta=1, times=1, also=[lap2]),
                              dp.profile(at=[Rational(1, 2)], delta=1, times=1, also=[lap])])
    mixed, same = (rows[0] for rows in _rows(laplace))
    assert float(mixed.achieved_lower) <= float(mixed.achieved_upper) < float(same.achieved_lower)
    reference = float(_laplace_two_fold(1, mpmath.mpf(1) / 2, dps=20))
    assert float(same.achieved_lower) <= reference <= float(same.achieved_upper)


def test_subsampled_and_plain_composed_by_multinomial():
    rate = Rational(1, 10)

    def poisson_rr(data, eps):
        kept = [r for r in data if dp.bernoulli(rate)]
        return dp.randomized_response(1 if kept else 0, eps)

    def plain(data, eps):
        return dp.randomized_response(1 if data else 0, eps)
    spec = dp.spec(poisson_rr, universe=dp.universe([1], n=range(0, 2), neighbours=dp.ADD_REMOVE), grid={eps: [1]},
                   claims=[dp.profile(at=[1], delta=1, times=3, also=[(plain, 2)])])
    point = dp.check(spec)[0]
    assert point.status.value == "verified" and point.evidence.method == "multinomial"
    with mpmath.workdps(50):
        keep = mpmath.e / (1 + mpmath.e)
        sub = {1: rate * keep + (1 - rate) * (1 - keep), 0: rate * (1 - keep) + (1 - rate) * keep}
        empty = {1: 1 - keep, 0: keep}
        full = {1: keep, 0: 1 - keep}
        best = mpmath.mpf(0)
        for first, second, a, b in ((sub, full, empty, empty), (empty, empty, sub, full)):
            total = mpmath.mpf(0)
            for outputs in itertools.product([0, 1], repeat=5):
                p = mpmath.fprod([first[o] for o in outputs[:3]] + [second[o] for o in outputs[3:]])
                q = mpmath.fprod([a[o] for o in outputs[:3]] + [b[o] for o in outputs[3:]])
                total += max(p - mpmath.e * q, 0)
            best = max(best, total)
        assert abs(mpmath.mpf(point.evidence.rows[0].achieved) - best) < mpmath.mpf(10) ** -35


def test_invalid_also_is_refused():
    with pytest.raises(SpecError) as info:
        dp.profile(at=[1], delta=Rational(1, 10), also=[(_rr, 0)])
    assert "also=[(other, 10)]" in str(info.value)


P6 = [Rational(x, 21) for x in (1, 2, 3, 4, 5, 6)]
Q6 = [Rational(x, 21) for x in (6, 1, 5, 2, 4, 3)]


def _six(data, eps):
    return dp.categorical(dict(enumerate(P6 if data[0] == 0 else Q6)))


def test_discretised_discrete_pairs_bracket_enumeration(monkeypatch):
    """Six outputs with six distinct losses on no lattice: with the multinomial's budget cut to 10 terms,
    the discretised bounds take over and bracket the brute-force delta of every 3-tuple; a claim between
    the exact value and the lower bound is refuted, one above the upper bound verified."""
    import dpverify.engine.pld.atoms as pld_atoms
    monkeypatch.setattr(pld_atoms, "MAX_TERMS", 10)
    with mpmath.workdps(50):
        def delta(first, second):
            total = mpmath.mpf(0)
            for combo in itertools.product(range(6), repeat=3):
                p = mpmath.fprod(mpmath.mpf(first[i].p) / first[i].q for i in combo)
                q = mpmath.fprod(mpmath.mpf(second[i].p) / second[i].q for i in combo)
                total += max(p - mpmath.exp(mpmath.mpf(1) / 2) * q, 0)
            return total
        exact = max(delta(P6, Q6), delta(Q6, P6))
    exact_above = Rational(int(exact * 100) + 5, 100)
    spec = dp.spec(_six, universe=BIT, grid={eps: [1]},
                   claims=[dp.profile(at=[Rational(1, 2)], delta=1, times=3, id="bounds"),
                           dp.profile(at=[Rational(1, 2)], delta=Rational(1, 100), times=3, id="small"),
                           dp.profile(at=[Rational(1, 2)], delta=exact_above, times=3, id="above")])
    bounds, small, above = dp.check(spec)
    row = bounds.evidence.rows[0]
    assert bounds.evidence.method == "discrete"
    assert float(row.achieved_lower) <= float(exact) <= float(row.achieved_upper)
    assert float(row.achieved_upper) - float(row.achieved_lower) < 0.05
    assert small.status.value == "refuted" and float(exact) > 0.01
    assert above.status.value == "verified"


def test_compositions_beyond_the_budgets_are_unknown_with_the_reason(monkeypatch):
    """Counted budgets, checked before the work: 10,000 Laplace runs exceed the grid budget, and a lattice
    product beyond the term budget falls back to the next route instead of running on."""
    import dpverify.engine.pld.lattice as pld
    spec = dp.spec(lambda data, eps: dp.laplace(data[0], 1), universe=BIT, grid={eps: [1]},
                   claims=[dp.profile(at=[10], delta=Rational(1, 10), times=10000)])
    point = dp.check(spec)[0]
    assert point.status.value == "unknown" and "grid points" in point.message
    keep = exp(Rational(1, 10)) / (1 + exp(Rational(1, 10)))
    small = lattice_pld([keep, 1 - keep], [1 - keep, keep])
    monkeypatch.setattr(pld, "MAX_PRODUCTS", 100)
    with pytest.raises(NotOnLattice):
        small.compose(1000)
