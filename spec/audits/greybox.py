"""Grey-box replay: textbook numpy code with sensitivity bugs, next to the spec it should calibrate like.

``dp.calibrated(spec_program)`` runs the implementation with a REAL seeded numpy Generator on
both datasets of each neighbouring pair, with the same seed, logging every call
(``dpverify/dsl/recording.py``).  For each noise draw it reads the value fed into it -- ``loc``
plus what the noise is added to in ``value + rng.laplace(0, b)`` -- and its scale; the spec
program's noise calls are enumerated by the engine and the sensitivity Delta of each centre is
derived over the universe.  The code's cost |value(X) - value(X')| / scale must not exceed the
spec's Delta / scale, call by call (matched in order), nor the sum over the calls the spec's
largest sum over a pair.  Randomness is sampled (3 seeds per pair): a pass is ``consistent``,
never ``verified``; a refutation is re-run independently and recomputed exactly.

Findings (every neighbouring pair of each universe, seeds 0, 1, 2; costs at eps = 1, halved at eps = 1/2):

* The bounded sum that clips to [0, 1] is consistent with its spec.  The one that forgets to
  clip feeds 0 and 3 into its Laplace noise on the neighbours (0, 0), (0, 3): cost 3 against the
  spec's 1.  The one clipping to [0, 2] feeds 0 and 2: cost 2.
* The count with scale 1/(2 eps) where the spec has 1/eps: cost 2 against 1 (wrong scale).
* The mean of records in [0, 3] calibrated for values in [0, 1] (scale 1/(n eps) instead of
  3/(n eps)): cost 3 against 1.
* The histogram that adds each record to its bin and the next one: every bin's change is at most
  1, as in the spec, but adding a record changes two bins: total cost 2 against the spec's 1
  (the per-pair sum, derived over the universe's pairs).
* The data-dependent branch (a count released with half the noise when it is large) feeds the
  same counts but with scale 1/(2 eps) on some datasets: refuted at the pair where it switches.
* Report noisy max with ``np.argmax`` over ``count + rng.laplace(0, 2/eps)`` is consistent with the
  spec's noisy max; with scale 1/eps it is refuted (cost 1 against 1/2 at eps = 1).
* The sparse vector technique stops at the first noisy count above the noisy threshold, so with
  the same seed the two runs of a pair may stop at different queries: the replay reports this
  data-dependent control flow (a call made on one dataset only, with both sites) and compares the
  calls both runs make; it is consistent with the spec.
"""
from fractions import Fraction

import numpy as np

import dpverify as dp

eps = dp.symbol("eps", positive=True)
GRID = {eps: [Fraction(1, 2), 1]}
VALUES = dp.universe([0, 1, 2, 3], n=2, neighbours=dp.REPLACE_ONE)
BINS = (0, 1, 2, 3)
RECORDS = dp.universe([0, 1, 2], n=range(0, 3), neighbours=dp.ADD_REMOVE)


# -- a bounded sum ----------------------------------------------------------------------------

def clipped_sum(data, eps):
    """The spec: the sum of the records clipped to [0, 1], plus Laplace(1/eps) noise."""
    return dp.laplace(sum(min(r, 1) for r in data), 1 / eps)


def numpy_clipped_sum(data, eps, rng):
    """Textbook: clip to [0, 1], sum, add Laplace noise of scale 1/eps."""
    return np.clip(np.asarray(data), 0, 1).sum() + rng.laplace(0, 1 / eps)


def sum_without_clip(data, eps, rng):
    """BROKEN: forgets to clip, so one record moves the sum by up to 3."""
    return sum(data) + rng.laplace(0, 1 / eps)


def sum_wrong_clip(data, eps, rng):
    """BROKEN: clips to [0, 2] but calibrates the noise for [0, 1]."""
    return np.clip(np.asarray(data), 0, 2).sum() + rng.laplace(0, 1 / eps)


# -- a count ----------------------------------------------------------------------------------

def count_ones(data, eps):
    """The spec: the number of records equal to 1, plus Laplace(1/eps)."""
    return dp.laplace(sum(1 for r in data if r == 1), 1 / eps)


def count_half_scale(data, eps, rng):
    """BROKEN: noise of scale 1/(2 eps), a 2 eps mechanism."""
    return rng.laplace(sum(1 for r in data if r == 1), 1 / (2 * eps))


def count_branch(data, eps, rng):
    """BROKEN: a data-dependent branch -- a large count gets half the noise."""
    count = sum(1 for r in data if r == 1)
    scale = 1 / (2 * eps) if count == 2 else 1 / eps
    return count + rng.laplace(0, scale)


# -- a mean -----------------------------------------------------------------------------------

def mean_of_values(data, eps):
    """The spec: the mean of records in [0, 3] (n = 2 fixed), plus Laplace(3 / (n eps))."""
    n = len(data)
    return dp.laplace(Fraction(sum(data), n), Fraction(3, n) / eps)


def mean_unit_sensitivity(data, eps, rng):
    """BROKEN: calibrated as if the records were in [0, 1] (sensitivity 1/n instead of 3/n)."""
    return np.mean(data) + rng.laplace(0, 1 / (len(data) * eps))


# -- a histogram ------------------------------------------------------------------------------

def histogram(data, eps):
    """The spec: each bin's count plus Laplace(1/eps) (adding a record changes one bin)."""
    return tuple(dp.laplace(sum(1 for r in data if r == b), 1 / eps) for b in BINS)


def numpy_histogram(data, eps, rng):
    """Textbook: count per bin with numpy, add Laplace(1/eps) to each."""
    counts = np.zeros(len(BINS))
    for r in data:
        counts[r] += 1
    return tuple(c + rng.laplace(0, 1 / eps) for c in counts)


def histogram_two_bins(data, eps, rng):
    """BROKEN: adds each record's weight to its bin and to the next one (two bins change per record)."""
    counts = np.zeros(len(BINS))
    for r in data:
        counts[r] += 1
        counts[r + 1] += 1
    return tuple(c + rng.laplace(0, 1 / eps) for c in counts)


bounded_sum = dp.spec(
    dp.implementation(numpy_clipped_sum), universe=VALUES, grid=GRID, claims=[dp.calibrated(clipped_sum)],
    doc="Clip to [0, 1], sum, Laplace(1/eps): consistent with the spec's calibration.")

bounded_sum_no_clip = dp.spec(
    dp.implementation(sum_without_clip), universe=VALUES, grid=GRID,
    claims=[dp.calibrated(clipped_sum, expect="refuted")],
    doc="The sum without its clip: the value fed into the noise moves by 3 where the spec's moves by 1.")

bounded_sum_wrong_clip = dp.spec(
    dp.implementation(sum_wrong_clip), universe=VALUES, grid=GRID,
    claims=[dp.calibrated(clipped_sum, expect="refuted")],
    doc="Clipped to [0, 2], calibrated for [0, 1]: cost 2 against 1.")

count_wrong_scale = dp.spec(
    dp.implementation(count_half_scale), universe=VALUES, grid=GRID,
    claims=[dp.calibrated(count_ones, expect="refuted")],
    doc="A count with noise of scale 1/(2 eps): cost 2 eps against eps.")

count_data_branch = dp.spec(
    dp.implementation(count_branch), universe=VALUES, grid=GRID,
    claims=[dp.calibrated(count_ones, expect="refuted")],
    doc="A data-dependent branch halves the noise of large counts: refuted where it switches.")

mean_wrong_sensitivity = dp.spec(
    dp.implementation(mean_unit_sensitivity), universe=VALUES, grid=GRID,
    claims=[dp.calibrated(mean_of_values, expect="refuted")],
    doc="A mean of values in [0, 3] calibrated for [0, 1]: cost 3 against 1.")

numpy_histogram_spec = dp.spec(
    dp.implementation(numpy_histogram), universe=RECORDS, grid=GRID, claims=[dp.calibrated(histogram)],
    doc="A numpy histogram with Laplace(1/eps) per bin: consistent with the spec.")

histogram_double_count = dp.spec(
    dp.implementation(histogram_two_bins), universe=RECORDS, grid=GRID,
    claims=[dp.calibrated(histogram, expect="refuted")],
    doc="A histogram adding each record to two bins: total cost 2 against the spec's 1.")


# -- report noisy max and the sparse vector technique -------------------------------------------

CANDIDATES = (0, 1, 2)
SMALL = dp.universe([0, 1, 2], n=2, neighbours=dp.REPLACE_ONE)


def noisy_max(data, eps):
    """The spec: the index of the largest count plus Laplace(2/eps)."""
    noisy = [dp.laplace(sum(1 for r in data if r == c), 2 / eps) for c in CANDIDATES]
    best = 0
    for i in range(1, len(noisy)):
        if noisy[i] > noisy[best]:
            best = i
    return best


def numpy_noisy_max(data, eps, rng):
    """Textbook: np.argmax over the noisy counts."""
    counts = [sum(1 for r in data if r == c) for c in CANDIDATES]
    return int(np.argmax([q + rng.laplace(0, 2 / eps) for q in counts]))


def noisy_max_small_scale(data, eps, rng):
    """BROKEN: Laplace(1/eps) per count, half the spec's scale."""
    counts = [sum(1 for r in data if r == c) for c in CANDIDATES]
    return int(np.argmax([q + rng.laplace(0, 1 / eps) for q in counts]))


def sparse_vector(data, eps):
    """The spec: the first candidate whose noisy count exceeds a noisy threshold of 1."""
    threshold = dp.laplace(1, 2 / eps)
    for c in CANDIDATES:
        if dp.laplace(sum(1 for r in data if r == c), 4 / eps) > threshold:
            return c
    return None


def numpy_sparse_vector(data, eps, rng):
    """Textbook: the same loop with numpy noise; it stops at the first query above the threshold."""
    threshold = 1 + rng.laplace(0, 2 / eps)
    for c in CANDIDATES:
        if sum(1 for r in data if r == c) + rng.laplace(0, 4 / eps) > threshold:
            return c
    return None


numpy_noisy_max_spec = dp.spec(
    dp.implementation(numpy_noisy_max), universe=SMALL, grid=GRID, claims=[dp.calibrated(noisy_max)],
    doc="Report noisy max with np.argmax: consistent with the spec's calibration.")

noisy_max_wrong_scale = dp.spec(
    dp.implementation(noisy_max_small_scale), universe=SMALL, grid=GRID,
    claims=[dp.calibrated(noisy_max, expect="refuted")],
    doc="Report noisy max with half the noise: refuted (cost 1 against 1/2 at eps = 1).")

numpy_sparse_vector_spec = dp.spec(
    dp.implementation(numpy_sparse_vector), universe=SMALL, grid=GRID, claims=[dp.calibrated(sparse_vector)],
    doc="The sparse vector technique: data-dependent control flow (reported), consistent calibration.")
