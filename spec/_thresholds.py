"""Threshold classifiers on a small line, shared by the learning specs (not a spec itself)."""
from fractions import Fraction

XS = (0, 1, 2)
THRESHOLDS = tuple(range(len(XS) + 1))  # h_t(x) = 1 iff x >= t, t = 0..3


def h(t, x):
    """The threshold classifier h_t at x."""
    return int(x >= t)


def errors(t, data):
    """How many labelled records (x, y) of ``data`` h_t gets wrong."""
    return sum(h(t, x) != y for x, y in data)


def cover(sample):
    """One threshold per distinct labelling of the sample: the smallest t giving that labelling."""
    chosen = {}
    for t in THRESHOLDS:
        chosen.setdefault(tuple(h(t, x) for x, _ in sample), t)
    return tuple(sorted(chosen.values()))


def empirical_error(t, data):
    return Fraction(errors(t, data), len(data))
