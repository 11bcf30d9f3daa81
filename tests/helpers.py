"""Small builders shared by the framework's tests."""
from __future__ import annotations

from fractions import Fraction

import dpverify as dp

eps = dp.symbol("eps", positive=True)


def rr_spec(claim_factor: Fraction = Fraction(1), grid=(1,)) -> dp.Spec:
    """Randomized response on one bit, claiming claim_factor * eps."""
    def rr(data, eps):
        return dp.randomized_response(data[0], eps)
    return dp.spec(rr, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                   grid={eps: list(grid)}, claims=[dp.private(claim_factor * eps)])


def statuses(spec: dp.Spec) -> list[str]:
    return [r.status.value for r in dp.check(spec)]
