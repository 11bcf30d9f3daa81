"""Explicit pair sets (dp.pairs, dp.statdp_patterns): checked exactly on the listed pairs, and labelled
everywhere -- messages, the terminal table, the JSON document, reports -- as covering only them."""
from __future__ import annotations

import io
import textwrap
from fractions import Fraction

import pytest
from rich.console import Console

import dpverify as dp
from dpverify.engine.datasets.datasets import enumerate_datasets, estimate, neighbour_pairs
from dpverify.options import Options
from dpverify.report import terminal
from dpverify.report.json_report import document
from dpverify.report.model import _universe
from dpverify.runner import check_paths

eps = dp.symbol("eps", positive=True)


def test_statdp_patterns_are_the_eight_published_pairs() -> None:
    five = dp.statdp_patterns(5)
    assert five == [((1, 1, 1, 1, 1), (0, 1, 1, 1, 1)), ((1, 1, 1, 1, 1), (2, 1, 1, 1, 1)),
                    ((1, 1, 1, 1, 1), (2, 0, 0, 0, 0)), ((1, 1, 1, 1, 1), (0, 2, 2, 2, 2)),
                    ((1, 1, 1, 1, 1), (2, 2, 0, 0, 0)), ((1, 1, 1, 1, 1), (2, 2, 2, 2, 2)),
                    ((1, 1, 1, 1, 1), (0, 0, 0, 0, 0)), ((1, 1, 0, 0, 0), (0, 0, 1, 1, 1))]
    for m in (5, 10):
        pairs = dp.statdp_patterns(m)
        assert len(pairs) == 8 and all(dp.linf_one(x, y) and x != y for x, y in pairs)


def test_a_pair_set_enumerates_only_its_datasets_and_pairs() -> None:
    universe = dp.pairs(dp.statdp_patterns(10), neighbours=dp.linf_one, name="patterns")
    datasets = enumerate_datasets(universe)
    left, right = neighbour_pairs(universe, datasets)
    assert len(datasets) == 10 and len(left) == 8  # not the 59,049 vectors of {0,1,2}^10
    assert {frozenset((datasets[i], datasets[j])) for i, j in zip(left, right)} == \
        {frozenset(p) for p in dp.statdp_patterns(10)}
    size = estimate(universe)
    assert (size.datasets, size.pairs, size.exact) == (10, 8, True)
    assert "listed pairs" in universe.relation_name and "not on the whole universe" in universe.describe()


def test_a_pair_listed_twice_or_reversed_counts_once() -> None:
    universe = dp.pairs([((0,), (1,)), ((1,), (0,)), ((0,), (1,))], neighbours=dp.linf_one)
    assert universe.pairs == (((0,), (1,)),)


@pytest.mark.parametrize("listed, relation, problem", [
    ([((0, 0), (2, 0))], dp.linf_one, "not neighbours"),
    ([((0, 0), (0, 0))], dp.linf_one, "one dataset twice"),
    ([((0, 0),)], dp.linf_one, "not a pair"),
    ([([0], [1])], dp.linf_one, "not a pair"),
    ([], dp.linf_one, "no pair"),
    ([((0,), (1,))], dp.REPLACE_ONE, "relation function"),
    ("abc", dp.linf_one, "list of"),
])
def test_bad_pair_sets_are_one_clear_error(listed, relation, problem) -> None:
    with pytest.raises(dp.SpecError, match=problem):
        dp.pairs(listed, neighbours=relation)


def leaky(q, eps):
    """eps-DP except on the pair (0, 0) / (1, 1), whose outputs are told apart exactly."""
    if q == (1, 1):
        return 1
    return dp.randomized_response(0, eps)


def test_only_the_listed_pairs_are_checked_and_the_result_says_so() -> None:
    """The violation is on an unlisted pair: verified -- on the listed pairs, as the message says."""
    listed = dp.pairs([((0, 0), (0, 1)), ((0, 1), (1, 0))], neighbours=dp.linf_one, name="two pairs")
    [result] = dp.check(dp.spec(leaky, universe=listed, grid={eps: [1]}, claims=[dp.private(eps)]), proofs=False)
    assert result.status.value == "verified"
    assert "listed pairs only: two pairs" in result.message
    whole = dp.answers([0, 1], 2)
    [result] = dp.check(dp.spec(leaky, universe=whole, grid={eps: [1]}, claims=[dp.private(eps)]), proofs=False)
    assert result.status.value == "refuted"


def test_a_listed_violating_pair_is_refuted_with_its_witness() -> None:
    listed = dp.pairs([((0, 0), (0, 1)), ((0, 0), (1, 1))], neighbours=dp.linf_one)
    [result] = dp.check(dp.spec(leaky, universe=listed, grid={eps: [1]}, claims=[dp.private(eps)]), proofs=False)
    assert result.status.value == "refuted"
    assert {result.witness.x, result.witness.x_prime} == {(0, 0), (1, 1)}


def noisy_max(q, eps):
    best, value = 0, dp.laplace(q[0], 2 / eps)
    for i in range(1, len(q)):
        x = dp.laplace(q[i], 2 / eps)
        if x > value:
            best, value = i, x
    return best


def test_listing_every_pair_gives_the_universe_s_figure() -> None:
    """Exact on the pairs: the pair set of every ell_inf pair of {0,1}^3 gives the universe's achieved eps."""
    whole = dp.answers([0, 1], 3)
    datasets = enumerate_datasets(whole)
    left, right = neighbour_pairs(whole, datasets)
    listed = dp.pairs([(datasets[i], datasets[j]) for i, j in zip(left, right)], neighbours=dp.linf_one)
    figures = []
    for universe in (whole, listed):
        [result] = dp.check(dp.spec(noisy_max, universe=universe, grid={eps: [Fraction(1, 2)]},
                                    claims=[dp.private(eps)]), proofs=False)
        figures.append((result.status.value, result.evidence.achieved_epsilon))
    assert figures[0] == figures[1]


SPEC = """
    import dpverify as dp
    eps = dp.symbol("eps", positive=True)

    def rr(q, eps):
        return dp.randomized_response(q[0], eps)

    listed = dp.spec(rr, name="listed", universe=dp.pairs([((0, 1), (1, 1))], neighbours=dp.linf_one,
                     name="one pair"), grid={eps: [1]}, claims=[dp.private(eps)])
    whole = dp.spec(rr, name="whole", universe=dp.answers([0, 1], 2), grid={eps: [1]}, claims=[dp.private(eps)])
"""


def test_the_table_json_and_report_label_the_pairs(tmp_path) -> None:
    path = tmp_path / "pairs_spec.py"
    path.write_text(textwrap.dedent(SPEC))
    report = check_paths([str(path)], Options(proofs=False))
    doc = document(report)
    coverage = {entry["name"]: entry["coverage"] for entry in doc["specs"]}
    assert coverage["listed"]["scope"] == "listed pairs" and coverage["listed"]["pairs"] == 1
    assert "not every pair of the universe" in coverage["listed"]["note"]
    assert coverage["whole"]["scope"] == "universe"
    out = io.StringIO()
    terminal.render(report, Console(file=out, width=200))
    text = out.getvalue()
    assert "verified [listed pairs]" in text and "listed: only the 1 listed pairs (one pair)" in text
    assert text.count("[listed pairs]") == 1  # the whole universe's row is not labelled
    [listed] = [s.spec for s in report.specs if s.name == "listed"]
    rows = dict(_universe(listed).items)
    assert "not every pair of the universe" in rows["checked on"]


def test_strategies_draw_the_listed_pairs_only() -> None:
    """dp.strategies on a pair set: the listed datasets and pairs (both orders), nothing else."""
    from hypothesis import given, settings
    listed = dp.pairs(dp.statdp_patterns(5), neighbours=dp.linf_one)
    allowed = {p for pair in listed.pairs for p in (pair, pair[::-1])}

    @settings(max_examples=50, deadline=None)
    @given(pair=dp.strategies.neighbouring_pairs(listed), data=dp.strategies.datasets(listed))
    def check(pair, data) -> None:
        assert pair in allowed and data in listed.datasets()
    check()
