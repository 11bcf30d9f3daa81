"""A uniformly stable learner through a random cover and the exponential mechanism (catalogue 11).

Draw a uniformly random subset S' of m of the n labelled examples; keep one
hypothesis for each distinct labelling that the class (thresholds on a 3-point
line) induces on S' -- the cover; run the exponential mechanism with eps over
the cover, scored by minus the number of errors on the whole sample S
(sensitivity 1); predict with the chosen hypothesis at the query point.

Claim (the notes on stable and private prediction): between neighbouring
datasets (replace-one), the probability of predicting each label at every
query point changes by at most gamma = m/n + (e^eps - 1).  The subset
contains the changed example with probability m/n (then anything can happen);
otherwise the cover is the same and the exponential mechanism's weights move
by a factor of at most e^eps.  The report gives the achieved gamma.
"""
from sympy import Rational

import dpverify as dp
from _thresholds import XS, cover, errors, h

eps = dp.symbol("eps", positive=True)
M, N = 1, 3


def stable_learner(data, eps):
    """Exponential mechanism over the cover of a random m-subset, scored on all the data."""
    hypotheses = cover(dp.subset(data, M))
    return dp.exponential(hypotheses, lambda t: -errors(t, data), eps, sensitivity=1)


def predict(t, x):
    """The chosen threshold's label at the query point."""
    return h(t, x)


stable = dp.spec(
    stable_learner,
    universe=dp.universe(dp.labelled(XS, [0, 1]), n=N, neighbours=dp.REPLACE_ONE, symmetric=True),
    grid={eps: [Rational(1, 10), Rational(1, 2), 1]},
    claims=[dp.stability(Rational(M, N) + dp.exp(eps) - 1, predict=predict, points=XS)],
)
