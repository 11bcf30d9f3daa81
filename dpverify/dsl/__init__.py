"""What spec authors import: universes, parameters, primitives, claims and ``spec``."""
from .claims import Conforms, Private, SameDistribution, conforms, private, same_distribution
from .claims import Calibrated, calibrated
from .claims import Identity, Inequality, identity, inequality
from .claims import Sensitivity, sensitivity
from .claims import Renyi, Zcdp, renyi, zcdp
from .claims import Profile, profile
from .claims import Gdp, gdp
from .floating import FloatPrivate, float_private
from .implementation import Implementation, implementation
from .black_box import BlackBox, black_box
from .learning import (Accuracy, Probability, PrivatePrediction, SampleComplexity, Stability, accuracy,
                       private_prediction, probability, sample_complexity, stability)
from .noise import exponential_noise, gaussian, laplace, laplace_mechanism
from .params import symbol
from .primitives import (REJECTED, bernoulli, categorical, exp, exponential, geometric, log,
                         randomized_response, repeat_until_accepted, sqrt, subset, uniform)
from .queries import count, interval, max_of, mean, min_of, query, total
from .spec import Spec, spec
from .universe import (ADD_REMOVE, LABEL_ONLY, REPLACE_ONE, Neighbours, PairSet, Universe, answers, l1_one,
                       labelled, linf_one, pairs, statdp_patterns, universe)

__all__ = [
    "ADD_REMOVE", "LABEL_ONLY", "REJECTED", "REPLACE_ONE", "Neighbours", "Private", "SameDistribution",
    "Spec", "Universe", "bernoulli", "categorical", "exp", "exponential", "geometric", "labelled", "log",
    "private", "randomized_response", "repeat_until_accepted", "same_distribution", "spec", "sqrt",
    "subset", "symbol", "uniform", "universe",
    "Identity", "Inequality", "identity", "inequality",
    "Sensitivity", "count", "interval", "max_of", "mean", "min_of", "query", "sensitivity", "total",
    "Accuracy", "Probability", "PrivatePrediction", "Stability", "accuracy", "private_prediction",
    "probability", "stability", "SampleComplexity", "sample_complexity",
    "exponential_noise", "gaussian", "laplace", "laplace_mechanism", "answers", "l1_one", "linf_one",
    "PairSet", "pairs", "statdp_patterns",
    "FloatPrivate", "float_private",
    "Conforms", "Implementation", "conforms", "implementation",
    "BlackBox", "black_box",
    "Calibrated", "calibrated",
    "Renyi", "Zcdp", "renyi", "zcdp",
    "Profile", "profile",
    "Gdp", "gdp",
]
