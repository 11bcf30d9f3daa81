"""The truncated geometric sampler of DP-Sniper (Balcer and Vadhan, "Differential Privacy on Finite Computers", ITCS 2018, Alg. 4.8 GeoSample).

Input: a count c in {0, ..., n}; neighbours |c - c'| <= 1.  With
k = ceil(ln(2/eps)) (the natural log, as DP-Sniper's
``TruncatedGeometricMechanism`` computes it) and
d = (2^(k+1) + 1) (2^k + 1)^(n-1), the sampler outputs z in {0..n} with
P[z] = (F(z) - F(z - 1))/d, F(-1) = 0, F(n) = d, and

    F(z) = 2^(k(c - z)) (2^k + 1)^(n - (c - z))           for 0 <= z < c,
    F(z) = d - 2^(k(z - c + 1)) (2^k + 1)^(n - 1 - (z - c)) for c <= z < n,

all in integer arithmetic (a uniform draw from {1..d}, inverted through F).
The output law is a two-sided geometric with ratio 2^-k around c,
truncated to {0..n}.

Claims: DP-Sniper runs it at eps = 0.1 with nominal privacy eps.  Balcer and
Vadhan's Thm. 4.7 makes GeoSample ln(1 + 2^-k)-DP; with k from log2 that
would be at most eps, but with ln it is not: at eps = 1/10, k = 3 and the
true level is ln(9/8) = 0.1178 > 0.1 (DP-Sniper measured 0.1156 as a lower
bound).  So the nominal claim eps is expected to be refuted and
``true_level`` ln(1 + 2^-k) holds (exactly, it is attained by neighbouring
counts).

Instance: DP-Sniper's own, n = 5 and counts {0..5}, at eps = 1/10 (k = 3)
and eps = 1/20 (k = 4, true ln(17/16) = 0.0606 > 0.05).  At eps >= 1/2 the
nominal claim happens to hold (k = 2 gives ln(5/4) < 1/2), which is why
those points are not in the grid.  The grid is a list of points
{eps, k} with k = ceil(ln(2/eps)) worked out by hand: the mechanism takes
k (its law depends on k alone), the nominal claim uses eps.
"""
from fractions import Fraction

import dpverify as dp

eps = dp.symbol("eps", positive=True)
k = dp.symbol("k", integer=True, positive=True)
N = 5

# k = ceil(ln(2/eps)) at each point, computed by hand (the law depends on k only,
# and parameters reach the program as intervals, so k cannot be derived there):
# ln 40 = 3.69 -> 4 and ln 20 = 2.996 -> 3.
POINTS = [{eps: Fraction(1, 20), k: 4}, {eps: Fraction(1, 10), k: 3}]


def truncated_geometric(q, k):
    """Balcer-Vadhan GeoSample on the count q[0] in {0..N} with ratio 2^-k."""
    c, k = q[0], int(k)
    d = (2 ** (k + 1) + 1) * (2 ** k + 1) ** (N - 1)

    def cdf(z):
        if z < 0:
            return 0
        if z < c:
            return 2 ** (k * (c - z)) * (2 ** k + 1) ** (N - (c - z))
        if z < N:
            return d - 2 ** (k * (z - c + 1)) * (2 ** k + 1) ** (N - 1 - (z - c))
        return d

    return dp.categorical({z: Fraction(cdf(z) - cdf(z - 1), d) for z in range(N + 1)})


truncated_geometric_spec = dp.spec(
    truncated_geometric,
    universe=dp.answers(range(N + 1), 1, neighbours=dp.linf_one),
    grid=POINTS,
    claims=[dp.private(eps, expect="refuted"),
            dp.private(dp.log(1 + 2 ** -k), id="true_level")],
    doc="DP-Sniper TruncatedGeometricMechanism (Balcer-Vadhan GeoSample, k = ceil(ln(2/eps)), n = 5): "
        "nominal eps, true ln(1 + 2^-k).",
)
