"""Randomized response (Warner 1965): keep a bit with probability e^eps/(1+e^eps), flip it otherwise.

Claims: eps-DP for one record, and tight (the achieved epsilon equals the
claim exactly); applied independently to every label of a dataset, eps-label-DP.
"""
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)
GRID = {eps: [Rational(1, 2), 1, 2]}


def randomized_response(data, eps):
    """Report the one record's bit, kept with probability e^eps/(1 + e^eps)."""
    return dp.randomized_response(data[0], eps)


one_record = dp.spec(
    randomized_response,
    name="randomized_response",
    universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
    grid=GRID,
    claims=[dp.private(eps)],
)


def label_flipping(data, eps):
    """Randomized response on every label of a labelled dataset; features are kept as they are."""
    return tuple((x, dp.randomized_response(y, eps, values=(-1, 1))) for x, y in data)


every_label = dp.spec(
    label_flipping,
    universe=dp.universe(dp.labelled(xs=[0, 1], labels=[-1, 1]), n=3, neighbours=dp.LABEL_ONLY),
    grid=GRID,
    claims=[dp.private(eps)],
)
