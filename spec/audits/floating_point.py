"""Floating-point noise samplers against the idealised mechanism (Mironov 2012).

The specs prove q(X) + Lap(b) private over the reals; code adds noise in doubles, from one
uniform double u = k/2^53 (numpy's ``Generator.random``, ``random.random``).  Each sampler below
is written as the function of the query value and that one uniform which the code computes;
``dp.float_private`` searches the 2^53 uniforms for an output that one query value produces and
its neighbour never does (a privacy loss of infinity), and, when the outputs are few enough to
list, counts for every output how many of the 2^53 uniforms produce it: the exact law of the
code, hence its exact epsilon.

* ``numpy_laplace`` is numpy's own ``Generator.laplace`` (numpy/random/src/distributions:
  ``random_laplace``: u >= 1/2 gives loc - scale*log(2 - 2u), 0 < u < 1/2 gives
  loc + scale*log(2u), u = 0 is rejected), transcribed with ``math.log`` (the C library's log,
  which numpy's C code calls; tests/test_floating.py checks bit-for-bit agreement with
  ``Generator.laplace`` on 20,000 draws), on a count of two records.  Refuted: the output
  2.0000000000000284 is produced from the count 2 by 3 of the uniforms and never from the
  count 1; 4 in 5 of the candidate outputs tried are unreachable from the neighbouring count.
* ``geometric`` is an exact-integer sampler: the two halves of the uniform give
  floor(log(2u)/log(a)) and floor(log(2 - 2u)/log(a)), a = e^-eps, eps = 1, a two-sided
  geometric noise (P(z) proportional to a^z for z >= 0 and a^(-1-z) for z < 0: eps-DP for
  sensitivity 1 in the reals), added to a count of 10 records and clamped to [0, 10].  Its 11
  outputs are reached from every count (equal supports, verified), but the exact law of the
  doubles is (eps + 2.05e-12)-DP, about eps + 2^-38.8, not eps-DP: the numbers of uniforms
  giving each output are integers, so their ratios are e^eps only up to about one part in
  10^12.  That is a finding, shown by a claim of exactly eps marked ``expect="refuted"`` next
  to one of eps + 2^-38 that holds.
* ``snapping`` is Mironov's snapping mechanism: clamp q to [-B, B], add Laplace noise of scale
  lambda, round to the nearest multiple of Lambda (the least power of two >= lambda: here
  lambda = Lambda = 1, B = 8), clamp to [-B, B].  Over the query values q, q + 1 for the
  integers q in [-8, 8) its 17 outputs are reached from every value, and the exact epsilon
  with this 53-bit uniform is 1 + 1.02e-9 (about 1 + 2^-29.9, at the clamped output -8 between
  q = 7 and 8).  Mironov's Theorem 1 is about a sampler that draws U from all doubles in
  (0, 1] (finer near 0) with a correctly rounded log, so it does not cover this code exactly;
  the figure here is the exact one for this code.  Snapping to a grid much finer than the
  noise (Lambda = 2^-45) is refuted with an unreachable output.
"""
import functools
import math
from fractions import Fraction

import dpverify as dp

HALVES = [(1, 2 ** 52), (2 ** 52, 2 ** 53)]
"""u < 1/2 and u >= 1/2, each monotone; k = 0 (u = 0) is rejected, as numpy does."""


def numpy_laplace(loc, u, scale=1.0):
    """numpy's Generator.laplace(loc, scale) on the uniform u it draws (random_laplace in C)."""
    if u >= 0.5:
        return loc - scale * math.log(2.0 - u - u)
    return loc + scale * math.log(u + u)


textbook_laplace = dp.spec(
    name="textbook_laplace",
    doc="numpy's Generator.laplace(q, 1) for a count q: not DP in doubles (Mironov 2012).",
    claims=[dp.float_private(numpy_laplace, universe=dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE),
                             query=dp.count(lambda x: x == 1), pieces=HALVES, id="numpy_laplace",
                             expect="refuted")],
)


EPS = 1
LOG_A = -float(EPS)  # log(a) for a = e^-eps
N = 10
COUNTS = dp.universe([0, 1], n=N, neighbours=dp.REPLACE_ONE)
ONES = dp.count(lambda x: x == 1)


def geometric(q, u, low=0, high=N):
    """An integer count plus two-sided geometric noise from one uniform, clamped to [low, high]."""
    if u < 0.5:
        z = -1 - math.floor(math.log(u + u) / LOG_A)
    else:
        z = math.floor(math.log(2.0 - u - u) / LOG_A)
    return float(min(max(int(q) + z, low), high))


exact_integer_geometric = dp.spec(
    name="exact_integer_geometric",
    doc="A clamped integer geometric sampler of a count: equal supports; exact epsilon 1 + 2^-38.8.",
    claims=[dp.float_private(geometric, universe=COUNTS, query=ONES, pieces=HALVES, id="supports"),
            dp.float_private(geometric, Fraction(EPS) + Fraction(1, 2 ** 38), universe=COUNTS, query=ONES,
                             pieces=HALVES, id="eps_plus_2^-38"),
            dp.float_private(geometric, EPS, universe=COUNTS, query=ONES, pieces=HALVES, id="exactly_eps",
                             expect="refuted")],
)


def snapping(q, u, lam=1.0, bound=8.0, grid=1.0):
    """Mironov's snapping mechanism on one uniform: clamp, add Laplace(lam), round to a multiple of grid, clamp."""
    q = min(max(q, -bound), bound)
    noise = lam * math.log(u + u) if u < 0.5 else -lam * math.log(2.0 - u - u)
    return min(max(grid * round((q + noise) / grid), -bound), bound)


STEPS = [(q, q + 1) for q in range(-8, 8)]
"""Query values one apart inside [-B, B] (integer ones: the check reads the pairs it is given)."""

snapping_mechanism = dp.spec(
    name="snapping_mechanism",
    doc="Mironov's snapping mechanism (lambda = Lambda = 1, B = 8): equal supports, exact epsilon 1 + 2^-29.9.",
    claims=[dp.float_private(snapping, pairs=STEPS, pieces=HALVES, id="supports"),
            dp.float_private(snapping, 1 + Fraction(1, 2 ** 29), pairs=STEPS, pieces=HALVES, id="eps_plus_2^-29"),
            dp.float_private(snapping, 1, pairs=STEPS, pieces=HALVES, id="exactly_eps", expect="refuted"),
            dp.float_private(functools.partial(snapping, grid=2.0 ** -45), pairs=[(0, 1)], pieces=HALVES,
                             id="wrong_grid", expect="refuted")],
)
