"""The Sauer-Shelah lemma and its polynomial bound, catalogue entry 14.

A class H of VC dimension d induces at most

    Phi_d(m) = sum_{i=0}^{d} C(m, i)

labellings on any m points (Sauer 1972; Shelah 1972; Vapnik and Chervonenkis
1971), and for m >= d >= 1

    Phi_d(m) <= (e m / d)^d,

since (d/m)^d Phi_d(m) <= sum_i C(m, i) (d/m)^i <= (1 + d/m)^m <= e^d.
Source: Shalev-Shwartz and Ben-David, "Understanding Machine Learning"
(2014), Lemma 6.10 and its corollary; the project's notes on private PAC
learning, where the lemma bounds the cover used by the stable learner.

Claims:

* ``polynomial_bound`` -- Phi_d(m) <= (e m/d)^d for all integers
  1 <= d <= m <= 30 (a bounded range: the claim quantifies over a finite set,
  so it is decided exactly at every one of its 465 points);
* ``thresholds_count`` and ``intervals_count`` -- exact counts: thresholds on
  a line (VC dimension 1) induce exactly Phi_1(m) = m + 1 labellings on m
  points, and intervals (VC dimension 2, the empty interval included) exactly
  Phi_2(m) = 1 + m + C(m, 2), so the lemma is tight for both.  The counts are
  computed here in Python, by listing every labelling the class induces on the
  points 1..m for m = 1..8; the claim states that this table, written as a
  sympy ``Piecewise`` in m (one branch per m), equals Phi_d(m) for every m in
  1..8.
"""
from fractions import Fraction

import sympy
from sympy import E, Piecewise, Sum, binomial

import dpverify as dp

m = dp.symbol("m", integer=True, positive=True)
d = dp.symbol("d", integer=True, positive=True)
i = sympy.Symbol("i", integer=True)  # summation index

M_MAX = 30  # the polynomial bound is checked for 1 <= d <= m <= M_MAX
COUNT_M = range(1, 9)  # the exact counts are made for m = 1..8 points


def sauer_bound(points, dimension):
    """Phi_d(m) = sum_{i=0}^{d} C(m, i), as an unevaluated sympy sum."""
    return Sum(binomial(points, i), (i, 0, dimension))


def labellings(hypotheses, points):
    """The number of distinct labellings the hypotheses induce on the points."""
    return len({tuple(h(p) for p in points) for h in hypotheses})


def thresholds(size):
    """x -> [x >= t] for a cut t between (or beyond) the points 1..size."""
    return [lambda p, t=k + Fraction(1, 2): int(p >= t) for k in range(size + 1)]


def intervals(size):
    """x -> [a <= x <= b] for every a <= b with endpoints among the points, and the empty interval."""
    spans = [(a, b) for a in range(1, size + 1) for b in range(a, size + 1)]
    return [lambda p, a=a, b=b: int(a <= p <= b) for a, b in spans] + [lambda p: 0]


def table(symbol, values):
    """A finite table {m: value} as the sympy expression Piecewise((value, Eq(symbol, m)), ...)."""
    return Piecewise(*[(value, sympy.Eq(symbol, key)) for key, value in values.items()])


def counted(hypothesis_class):
    """The count of labellings of ``hypothesis_class(m)`` on the points 1..m, for m in COUNT_M."""
    return table(m, {k: labellings(hypothesis_class(k), range(1, k + 1)) for k in COUNT_M})


sauer_shelah = dp.spec(
    name="sauer_shelah",
    doc=__doc__,
    claims=[
        dp.inequality(sauer_bound(m, d), (E * m / d) ** d, where=[d <= m, m <= M_MAX], id="polynomial_bound"),
        dp.identity(counted(thresholds), sauer_bound(m, 1), where=[m <= max(COUNT_M)], id="thresholds_count"),
        dp.identity(counted(intervals), sauer_bound(m, 2), where=[m <= max(COUNT_M)], id="intervals_count"),
    ],
)
