"""Properties of the engine over random universes, parameters and mechanisms (hypothesis)."""
import itertools
from fractions import Fraction

import mpmath
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpverify as dp
from dpverify.engine.program.backend import IntervalBackend
from dpverify.engine.datasets.datasets import enumerate_datasets, neighbour_pairs
from dpverify.engine.program.reading import distribution

from .helpers import eps

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
small_eps = st.fractions(min_value=Fraction(1, 10), max_value=3, max_denominator=10)
score_tables = st.lists(st.lists(st.integers(-2, 2), min_size=3, max_size=3), min_size=3, max_size=3)


def em_from_table(table):
    """An exponential mechanism whose score of candidate y is the sum over records r of table[r][y]."""
    def mech(data, eps):
        return dp.exponential([0, 1, 2], lambda y: sum(table[r][y] for r in data), eps, sensitivity=4)
    return mech


def brute_force_achieved(mech, universe, eps_value) -> mpmath.mpf:
    """The achieved epsilon by a plain loop over ordered pairs, in mpmath, independent of LossTable."""
    datasets = enumerate_datasets(universe)
    left, right = neighbour_pairs(universe, datasets)
    backend = IntervalBackend(40)
    laws = [distribution(mech, d, {"eps": eps_value}, backend) for d in datasets]
    best = mpmath.mpf(0)
    with mpmath.workdps(40):
        for i, j in itertools.chain(zip(left, right), zip(right, left)):
            for o, p in laws[i].items():
                q = laws[j].get(o)
                if q is None:
                    return mpmath.inf
                best = max(best, mpmath.log(mpmath.mpf(p.mid.a)) - mpmath.log(mpmath.mpf(q.mid.a)))
    return best


@SETTINGS
@given(table=score_tables, e=small_eps, n=st.integers(1, 3))
def test_achieved_epsilon_matches_a_plain_loop(table, e, n) -> None:
    mech = em_from_table(table)
    universe = dp.universe([0, 1, 2], n=n, neighbours=dp.REPLACE_ONE)
    spec = dp.spec(mech, universe=universe, grid={eps: [e]}, claims=[dp.private(eps)])
    [result] = dp.check(spec, precision=40)
    expected = brute_force_achieved(mech, universe, e)
    with mpmath.workdps(40):
        assert abs(mpmath.mpf(result.evidence.achieved_epsilon) - expected) < mpmath.mpf(10) ** -30
    # The exponential mechanism with a correct sensitivity bound is eps-DP.
    assert result.status.value == "proved"


@SETTINGS
@given(table=score_tables, e=small_eps, n=st.integers(1, 3))
def test_symmetry_reduction_never_changes_the_achieved_epsilon(table, e, n) -> None:
    mech = em_from_table(table)
    results = []
    for symmetric in (False, True):
        universe = dp.universe([0, 1, 2], n=n, neighbours=dp.REPLACE_ONE, symmetric=symmetric)
        spec = dp.spec(mech, universe=universe, grid={eps: [e]}, claims=[dp.private(eps)])
        results.append(dp.check(spec)[0].evidence.achieved_epsilon)
    assert results[0] == results[1]


@SETTINGS
@given(e1=small_eps, e2=small_eps)
def test_sequential_composition_adds_epsilon_exactly(e1, e2) -> None:
    e2_sym = dp.symbol("e2", positive=True)

    def twice(data, eps, e2):
        return (dp.randomized_response(data[0], eps), dp.randomized_response(data[0], e2))
    spec = dp.spec(twice, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                   grid=[{eps: e1, e2_sym: e2}],
                   claims=[dp.private(eps + e2_sym), dp.private((eps + e2_sym) * Fraction(999, 1000))])
    tight, less = dp.check(spec)
    assert tight.status.value == "proved" and tight.evidence.achieved_epsilon == tight.evidence.claimed_epsilon
    assert less.status.value == "refuted"


@SETTINGS
@given(a=st.fractions(min_value=Fraction(11, 10), max_value=5, max_denominator=10),
       value=st.integers(-3, 3), lower=st.integers(-4, 0), width=st.integers(0, 5))
def test_clamped_geometric_is_a_distribution(a, value, lower, width) -> None:
    law = distribution(lambda d: dp.geometric(value, a, lower=lower, upper=lower + width), (), {},
                       IntervalBackend(30))
    total = sum(law.values(), IntervalBackend(30).num(0))
    assert total.a <= 1 <= total.b
    assert set(law) == set(range(lower, lower + width + 1))


@SETTINGS
@given(table=score_tables, e=small_eps)
def test_loss_is_antisymmetric(table, e) -> None:
    mech = em_from_table(table)
    backend = IntervalBackend(30)
    for x, y in [((0,), (1,)), ((1, 2), (2, 2))]:
        p, q = (distribution(mech, d, {"eps": e}, backend) for d in (x, y))
        for o in p:
            forward = backend.ctx.log(p[o]) - backend.ctx.log(q[o])
            backward = backend.ctx.log(q[o]) - backend.ctx.log(p[o])
            assert (forward + backward).a <= 0 <= (forward + backward).b
