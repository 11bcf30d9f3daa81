"""Identical laws are grouped only when proved identical: a differential test of the grouping.

:func:`dpverify.engine.program.reading.all_distributions` keeps one law per group of datasets whose
runs have the same exact description (every leaf's output, the branches it took, and the exact
arguments of each primitive along its path).  Here random mechanisms over small universes draw
from pools of exact weights and scores in which some coincide exactly and others differ by a tiny
exact amount (1/3 against 1/3 + 10^-40, e^-eps against e^-eps (1 - 10^-60)): amounts no 50-digit
enclosure sees.  Each case is checked twice, grouped and with grouping off (one law per dataset,
the reference), and must give the same verdicts and achieved epsilons; and two datasets grouped
together must have exactly equal laws, recomputed in the exact sympy reading.
"""
from __future__ import annotations

import random
from fractions import Fraction

import pytest
import sympy

import dpverify as dp
from dpverify.engine.program import reading
from dpverify.engine.program.backend import SympyBackend, is_exactly_zero

eps = dp.symbol("eps", positive=True)
TINY = Fraction(1, 10 ** 40)

THIRD = Fraction(1, 3)
WEIGHTS = (THIRD, THIRD + TINY, Fraction(1, 2), Fraction(1, 4), Fraction(1, 3) - TINY)
"""Pool of raw weights (normalised per dataset): the first two and the last differ by 10^-40."""
SCORES = (0, 1, THIRD, THIRD + TINY, Fraction(-2, 3), sympy.Rational(1, 3), 1.5)
"""Pool of exponential-mechanism scores: equal as numbers across kinds (1/3 as a Fraction and as a sympy
Rational), or 10^-40 apart."""


def _categorical_case(rng: random.Random, records: tuple, outputs: int) -> dict:
    """A table record-tuple -> normalised exact law over ``outputs`` values, drawn from a pool of three
    (so that several datasets share a law exactly)."""
    pool = []
    for _ in range(3):
        raw = [rng.choice(WEIGHTS) for _ in range(outputs)]
        total = sum(raw)
        pool.append({k: w / total for k, w in enumerate(raw)})
    return {data: dict(rng.choice(pool)) for data in _datasets(records, 2)}


def _datasets(records: tuple, n: int) -> list:
    import itertools
    return list(itertools.product(records, repeat=n))


def _make_categorical(table: dict, post: int):
    def mechanism(data, eps):
        y = dp.categorical(table[data])
        if post == 1:
            return y % 2
        if post == 2:  # a second draw whose law depends on the first output only
            return (y, dp.bernoulli(Fraction(1, 3) if y else Fraction(1, 3) + TINY))
        return y
    return mechanism


def _make_exponential(scores: dict, candidates: tuple):
    def mechanism(data, eps):
        return dp.exponential(candidates, lambda c: scores[data][c], eps, sensitivity=1)
    return mechanism


def _make_symbolic(choice: dict):
    """Bernoulli(p) with p from exact sympy expressions, two of which agree to 60 digits."""
    def mechanism(data, eps):
        p = dp.exp(-eps) / 2
        ps = (p, p * (1 - Fraction(1, 10 ** 60)), Fraction(1, 4), p)
        return dp.bernoulli(ps[choice[data]])
    return mechanism


def _cases():
    rng = random.Random(20261127)
    records = (0, 1, 2)
    for k in range(4):
        yield f"categorical-{k}", _make_categorical(_categorical_case(rng, records, 3), k % 3), records
    for k in range(3):
        candidates = ("a", "b", "c")
        pool = [{c: rng.choice(SCORES) for c in candidates} for _ in range(3)]
        scores = {data: dict(rng.choice(pool)) for data in _datasets(records, 2)}
        yield f"exponential-{k}", _make_exponential(scores, candidates), records
    choice = {data: rng.randrange(4) for data in _datasets(records, 2)}
    yield "symbolic", _make_symbolic(choice), records
    # laws that differ only by 10^-40: grouping any two of them would hide every pair that matters
    for k in range(2):
        base = [rng.choice(WEIGHTS) for _ in range(3)]
        near = list(base)
        near[k] += TINY
        pool = [{i: w / sum(raw) for i, w in enumerate(raw)} for raw in (base, near)]
        table = {data: dict(rng.choice(pool)) for data in _datasets(records, 2)}
        yield f"near-categorical-{k}", _make_categorical(table, 0), records
    candidates = ("a", "b", "c")
    pool = [{"a": THIRD, "b": 0, "c": 1}, {"a": THIRD + TINY, "b": 0, "c": 1}, {"a": sympy.Rational(1, 3), "b": 0, "c": 1}]
    scores = {data: dict(rng.choice(pool)) for data in _datasets(records, 2)}
    yield "near-exponential", _make_exponential(scores, candidates), records


CASES = list(_cases())


def _spec(mechanism, records):
    return dp.spec(mechanism, name="grouping_case",
                   universe=dp.universe(records, n=2, neighbours=dp.REPLACE_ONE),
                   grid={eps: [sympy.Rational(1, 2)]},
                   claims=[dp.private(eps, id="pure"), dp.private(eps / 1000, id="tight"), dp.private(0, id="zero"),
                           dp.private(0, delta=sympy.Rational(1, 10 ** 45), id="approx")])


def _outcome(results) -> list:
    return [(dict(r.params), r.status.value, str(r.evidence.achieved_epsilon), r.evidence.achieved_delta)
            for r in results]


@pytest.mark.parametrize("name,mechanism,records", CASES, ids=[c[0] for c in CASES])
def test_grouped_and_ungrouped_give_the_same_verdicts(monkeypatch, name, mechanism, records) -> None:
    spec = _spec(mechanism, records)
    grouped = _outcome(dp.check(spec, proofs=False))
    monkeypatch.setattr(reading, "GROUPING", False)
    alone = _outcome(dp.check(spec, proofs=False))
    assert grouped == alone


@pytest.mark.parametrize("name,mechanism,records", CASES, ids=[c[0] for c in CASES])
def test_grouped_datasets_have_exactly_equal_laws(name, mechanism, records) -> None:
    datasets = _datasets(records, 2)
    params = {"eps": sympy.Rational(1, 2)}
    table = reading.all_distributions(mechanism, datasets, params, 50)
    exact = [reading.distribution(mechanism, data, params, SympyBackend()) for data in datasets]
    groups: dict = {}
    for i, k in enumerate(table.law_of):
        groups.setdefault(k, []).append(i)
    for members in groups.values():
        first = exact[members[0]]
        for i in members[1:]:
            other = exact[i]
            assert set(first) == set(other), (datasets[members[0]], datasets[i])
            for output in first:
                a, b = sympy.sympify(first[output]), sympy.sympify(other[output])
                assert a == b or is_exactly_zero(a - b), (datasets[members[0]], datasets[i], output)
    # and datasets whose primitives get the same arguments (of the same kinds) were grouped: what makes the
    # grouping worth having
    for i in range(len(datasets)):
        for j in range(i):
            if _arguments(mechanism, datasets[i]) == _arguments(mechanism, datasets[j]):
                assert table.law_of[i] == table.law_of[j], (datasets[i], datasets[j])
    assert len(table.laws) < len(datasets)


def _arguments(mechanism, data) -> object:
    """The closure's own table entry for ``data`` (the primitive's arguments), with the kinds of its
    numbers: datasets with equal entries are run alike."""
    for cell in mechanism.__closure__ or ():
        value = cell.cell_contents
        if isinstance(value, dict) and data in value:
            entry = value[data]
            if isinstance(entry, dict):
                return tuple((k, type(v).__name__, str(v)) for k, v in entry.items())
            return entry
    return object()


def test_a_tiny_exact_difference_keeps_two_laws_apart() -> None:
    """1/3 against 1/3 + 10^-40 as Bernoulli weights: their 50-digit enclosures may coincide, their
    descriptions do not, so the pair between them is checked (and the tight claim refuted)."""
    def mechanism(data, eps):
        return dp.bernoulli(THIRD if data[0] == 0 else THIRD + TINY)
    table = reading.all_distributions(mechanism, [(0,), (1,)], {"eps": 1}, 50)
    assert len(table.laws) == 2
    spec = dp.spec(mechanism, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                   grid={eps: [1]}, claims=[dp.private(0)])
    (result,) = dp.check(spec, proofs=False)
    assert result.status.value == "refuted", result.message


def test_equal_arguments_of_different_kinds_share_one_law() -> None:
    """Scores 1/3 as a Fraction and as a sympy Rational are one number: one law."""
    def mechanism(data, eps):
        third = THIRD if data[0] == 0 else sympy.Rational(1, 3)
        return dp.exponential(("a", "b"), lambda c: third if c == "a" else 0, eps, sensitivity=1)
    table = reading.all_distributions(mechanism, [(0,), (1,)], {"eps": 1}, 50)
    assert table.law_of == [0, 0]


# ----- the achieved epsilon of a Gaussian release: guided bisection, certified result ------------------

@pytest.mark.parametrize("distance,delta", [("0.5", "0.001"), ("2", "0.9")])
def test_guided_gaussian_bisection_gives_the_certified_result(distance, delta) -> None:
    """The plain-precision guide takes the certified bisection's steps: the same figure, bit for bit."""
    from mpmath.ctx_iv import MPIntervalContext

    from dpverify.engine.loss import achieved
    ctx = MPIntervalContext()
    ctx.dps = 50
    d, level = ctx.mpf(distance), ctx.mpf(delta)
    certified = achieved._of_gaussian(ctx, d, level, achieved._certified(ctx, d, level))
    assert achieved.of_gaussian(ctx, d, level) == certified


def test_a_wrong_guide_is_caught_by_the_certificate(monkeypatch) -> None:
    """A guide that answers 'satisfied' everywhere would return eps' = 0; the certified evaluation refuses
    it and the certified bisection decides."""
    from mpmath.ctx_iv import MPIntervalContext

    from dpverify.engine.loss import achieved
    ctx = MPIntervalContext()
    ctx.dps = 50
    d, level = ctx.mpf("1.2"), ctx.mpf("1e-5")
    monkeypatch.setattr(achieved._Guide, "satisfied", lambda self, eps: True)
    found = achieved.of_gaussian(ctx, d, level)
    assert found == achieved._of_gaussian(ctx, d, level, achieved._certified(ctx, d, level))
    assert found.a > 5
