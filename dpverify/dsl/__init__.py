"""What spec authors import: universes, parameters, primitives, claims and ``spec``."""
from .claims import Private, SameDistribution, private, same_distribution
from .params import symbol
from .primitives import (REJECTED, bernoulli, categorical, exp, exponential, geometric, log,
                         randomized_response, repeat_until_accepted, sqrt, subset, uniform)
from .spec import Spec, spec
from .universe import ADD_REMOVE, LABEL_ONLY, REPLACE_ONE, Neighbours, Universe, labelled, universe

__all__ = [
    "ADD_REMOVE", "LABEL_ONLY", "REJECTED", "REPLACE_ONE", "Neighbours", "Private", "SameDistribution",
    "Spec", "Universe", "bernoulli", "categorical", "exp", "exponential", "geometric", "labelled", "log",
    "private", "randomized_response", "repeat_until_accepted", "same_distribution", "spec", "sqrt",
    "subset", "symbol", "uniform", "universe",
]
