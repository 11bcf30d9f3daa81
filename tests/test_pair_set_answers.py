"""The vectorised pairs of dp.linf_one and dp.l1_one (engine/datasets/datasets.py) are the pairs the relations give
when called on every two datasets, on random integer answer universes."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import dpverify as dp
from dpverify.engine.datasets import datasets as ds


@settings(max_examples=60, deadline=None)
@given(records=st.lists(st.integers(min_value=-3, max_value=3), min_size=1, max_size=4, unique=True),
       sizes=st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=2, unique=True),
       relation=st.sampled_from([dp.linf_one, dp.l1_one]))
def test_vectorised_answer_pairs_are_the_relation_s(records, sizes, relation) -> None:
    universe = dp.universe(records, range(min(sizes), max(sizes) + 1), neighbours=relation)
    datasets = ds.enumerate_datasets(universe)
    left, right = ds.neighbour_pairs(universe, datasets)
    assert set(zip(left.tolist(), right.tolist())) == ds._custom_pairs(relation, datasets)
