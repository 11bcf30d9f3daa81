"""Noisy max and sparse vector on StatDP's eight query-answer patterns, m = 5 and m = 10 answers.

The DP testers (StatDP, Ding et al. CCS 2018; DP-Sniper; CheckDP) test these
mechanisms on query vectors of length 5 and 10, on a fixed list of
neighbouring inputs rather than a whole universe: ``dp.statdp_patterns(m)``
compares 1^m with one answer below, one above, one above and the rest below,
one below and the rest above, half above and half below, all above, all
below, plus the "x shape" 1^(m/2) 0^(m/2) against 0^(m/2) 1^(m/2) -- all
ell_inf neighbours.  ``dp.pairs`` declares that list as the universe: every
claim here is checked exactly on those eight pairs (both directions), and
results, the JSON document and reports say "listed pairs", never the whole
universe ({0,1,2}^10 has 59,049 vectors).

At m = 10 noisy max has 2^9 = 512 comparison paths per vector; the engine
reads it as an argmax in product form (engine/program/product_form.py: one closed-form
integral per output), and the sparse vector technique's law conditioned on its
threshold noise is a product too (one path per output with c = 1).

* ``rnm_laplace`` (benchmark/noisy_max.py, StatDP ``noisy_max_v1a``):
  eps-DP, verified on the patterns at m = 5 and m = 10.
* ``rnm_thin`` -- noisy max with Lap(1/eps): the scale that suffices for
  monotone (counting) queries, used under ell_inf neighbours where answers
  move in different directions.  BROKEN: refuted at m = 5 (about 1.98*eps on
  the pattern "one above, rest below").
* ``svt`` (benchmark/sparse_vector.py, Lyu et al. Alg. 1, StatDP ``SVT``):
  eps-DP, verified at m = 5 and m = 10.
* ``isvt3`` (benchmark/sparse_vector_broken.py, Lyu et al. Alg. 4, StatDP
  ``iSVT3``): true level 7*eps/4; refuted at m = 10 (about 1.74*eps).

One grid point, eps = 1, keeps the file's run short (about 2 s).
"""
import dpverify as dp
from noisy_max import noisy_max, rnm_laplace
from sparse_vector import svt
from sparse_vector_broken import isvt3

eps = dp.symbol("eps", positive=True)
GRID = {eps: [1]}
PATTERNS_5 = dp.pairs(dp.statdp_patterns(5), neighbours=dp.linf_one, name="StatDP's eight patterns, m = 5")
PATTERNS_10 = dp.pairs(dp.statdp_patterns(10), neighbours=dp.linf_one, name="StatDP's eight patterns, m = 10")


def rnm_thin(q, eps):
    """Index of the largest q_i + Lap(1/eps): half the noise ell_inf neighbours need (the broken variant)."""
    return noisy_max(q, lambda answer: dp.laplace(answer, 1 / eps))[0]


noisy_max_patterns_5 = dp.spec(
    rnm_laplace, name="noisy_max_patterns_5", universe=PATTERNS_5, grid=GRID, claims=[dp.private(eps)],
    doc="Report noisy max with Lap(2/eps) on StatDP's eight patterns, m = 5: eps-DP on those pairs.")

noisy_max_patterns_10 = dp.spec(
    rnm_laplace, name="noisy_max_patterns_10", universe=PATTERNS_10, grid=GRID, claims=[dp.private(eps)],
    doc="Report noisy max with Lap(2/eps) on StatDP's eight patterns, m = 10: eps-DP on those pairs.")

noisy_max_thin_patterns_5 = dp.spec(
    rnm_thin, name="noisy_max_thin_patterns_5", universe=PATTERNS_5, grid=GRID,
    claims=[dp.private(eps, expect="refuted")],
    doc="Report noisy max with Lap(1/eps) under ell_inf neighbours, StatDP's patterns, m = 5: not eps-DP.")

sparse_vector_patterns_5 = dp.spec(
    svt, name="sparse_vector_patterns_5", universe=PATTERNS_5, grid=GRID, claims=[dp.private(eps)],
    doc="SVT (Lyu et al. Alg. 1, c = 1) on StatDP's eight patterns, m = 5: eps-DP on those pairs.")

sparse_vector_patterns_10 = dp.spec(
    svt, name="sparse_vector_patterns_10", universe=PATTERNS_10, grid=GRID, claims=[dp.private(eps)],
    doc="SVT (Lyu et al. Alg. 1, c = 1) on StatDP's eight patterns, m = 10: eps-DP on those pairs.")

svt_alg4_patterns_10 = dp.spec(
    isvt3, name="svt_alg4_patterns_10", universe=PATTERNS_10, grid=GRID, claims=[dp.private(eps, expect="refuted")],
    doc="iSVT3 = Lyu et al. Alg. 4 (c = 1) on StatDP's eight patterns, m = 10: claimed eps, true 7*eps/4.")
