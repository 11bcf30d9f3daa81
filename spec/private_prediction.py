"""Private prediction from a uniformly stable learner by randomized labels (catalogue 12).

Run the stable learner of ``stable_learner.py`` (a random m-subset's cover,
then the exponential mechanism with eps), predict at the query point, and flip
the predicted label with probability p.  If the learner is gamma-uniformly
stable, each prediction is ln(1 + gamma/p)-differentially private:
P(y|X) = p + (1 - 2p) q(X) with q the stable prediction probability, so the
ratio is at most 1 + (1 - 2p) gamma / p <= 1 + gamma/p.  With
gamma = m/n + e^eps - 1 from the stability claim this gives the claim below;
the report shows the achieved epsilon next to it.
"""
from sympy import Rational

import dpverify as dp
from _thresholds import XS, h
from stable_learner import M, N, stable_learner

eps = dp.symbol("eps", positive=True)
p = dp.symbol("p", positive=True)
GAMMA = Rational(M, N) + dp.exp(eps) - 1


def noisy_prediction(t, x, p):
    """The chosen threshold's label at x, flipped with probability p."""
    label = h(t, x)
    return 1 - label if dp.bernoulli(p) else label


private = dp.spec(
    stable_learner,
    name="private_prediction",
    universe=dp.universe(dp.labelled(XS, [0, 1]), n=N, neighbours=dp.REPLACE_ONE, symmetric=True),
    grid={eps: [Rational(1, 10), Rational(1, 2)], p: [Rational(1, 4), Rational(2, 5)]},
    claims=[dp.private_prediction(dp.log(1 + GAMMA / p), predict=noisy_prediction, points=XS)],
)
