"""The Poisson-subsampled Laplace composed T times, dp_accounting's PLD accountant checked.

The mechanism: each record kept with probability q = 0.1, the kept records' sum (sensitivity 1) released
with Laplace(1) noise; add-or-remove neighbours.  The accountant as its users call it (dp_accounting 0.6.0):
``PLDAccountant(NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=...)`` with the default
1e-4 and a coarser 1e-3 (its documented accuracy-for-speed knob), ``compose(PoissonSampledDpEvent(0.1,
LaplaceDpEvent(1.0)), T)``, then ``get_delta(eps)`` and ``get_epsilon(1e-3)``.  dp_accounting's RdpAccountant
refuses this event (``UnsupportedEventError``: its Poisson subevent must be Gaussian) and prv-accountant has no
subsampled Laplace mechanism, so neither is checked.

Exact values (the worse ordered pair -- a record added -- at the floats' exact eps): delta_T(eps) of
:mod:`dpverify.engine.pld.laplace_mixture` -- T = 1 in closed form, T = 2 a certified acb.integral (both
about 30 digits; the table carries 20) -- and for T = 10 the second-order lattice bracket of
:mod:`dpverify.engine.pld.laplace_mixture_bounds` (relative width 2e-5 at 1000 steps per run, 5e-6 at 2000).
delta_1(1) = delta_2(1) = 0 exactly (the largest loss is ln(1 - q + q e) = 0.158), hence eps = 0.1 and 0.2.

Findings:

* Violation (refuted, ``pld_coarse_delta_T1``): with value_discretization_interval = 1e-3, get_delta(0.1) at
  T = 1 is 0.013121830885831229, below the exact delta_1(0.1) = 0.0131218308858312641384 by 3.5e-17
  (2.7e-15 relative, about 12 ulps): floating-point rounding in its pessimistic answer, tiny but a reported
  delta below the exact one.  With the default interval it is 0.013121830885832382 (8.5e-14 above).
* T = 2: get_delta(0.2) = 0.006859132158760297 (default; 7.5e-8 above the exact 0.00685913164300373647) and
  0.0068591870739215036 (coarse; 8.1e-6 above): both hold.
* get_epsilon(1e-3) holds at T = 1 and 2: the exact delta at its answers is 9.9999944e-4 / 9.9998624e-4
  (T = 1, default / coarse) and 9.9999946e-4 / 9.9994665e-4 (T = 2).
* T = 10, eps = 1: get_delta = 9.2587275e-5 (coarse) is above the bracket [9.25742e-5, 9.25762e-5] (1000
  steps) by 1.2e-4 relative: holds.  The default's 9.2576180e-5 is above the refined bracket [9.2575637e-5,
  9.2576118e-5] (2000 steps) by 6.7e-7 relative: holds (tests/test_subsampled_laplace.py, 6 s); its
  get_epsilon(1e-3) = 0.76646236 gives delta in [9.99995e-4, 1e-3] (holds).
* T = 100, eps = 3 (not claimed here: 17 s per direction): the bracket at 999 steps per run is
  [7.781936e-4, 7.782562e-4]; the coarse get_delta 7.783601e-4 is above it (holds), the default's
  7.7825552e-4 inside it (undecided).
* A mis-stated answer, half the accountant's delta, is refuted (``halved_delta_T1`` here; T = 2 and 10 in the
  tests).
"""
from fractions import Fraction

import sympy

import dpverify as dp
from _reported import ADD_REMOVE, exact, reported_deltas, reported_epsilon

try:
    from dp_accounting import NeighboringRelation, dp_event
    from dp_accounting.pld import PLDAccountant
except ImportError:
    raise dp.SpecError("spec/accounting/subsampled_laplace.py checks dp_accounting, which is not installed",
                       "install the accounting extra: pip install -e '.[accounting]' (the dev install includes it)"
                       ) from None

Q, SCALE, DELTA = 0.1, 1.0, 1e-3
KEEP = exact(Q)
"""The rate the accountant was given: the float 0.1's exact value."""
EVENT = dp_event.PoissonSampledDpEvent(Q, dp_event.LaplaceDpEvent(SCALE))
EPS = {1: 0.1, 2: 0.2, 10: 1.0}
"""The eps of get_delta per T (delta_T(1) is exactly 0 at T = 1 and 2: the largest loss is ln(1 - q + q e) = 0.158)."""
INTERVALS = (1e-4, 1e-3)
"""value_discretization_interval: the default, and a coarser one users pick for speed."""


def subsampled_laplace(data):
    """The Poisson sample's sum (sensitivity 1) plus Laplace(SCALE) noise."""
    kept = [r for r in data if dp.bernoulli(KEEP)]
    return dp.laplace(sum(kept), exact(SCALE))


def pld_claims(times, interval, expect=None):
    acc = PLDAccountant(NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=interval)
    acc.compose(EVENT, times)
    name = f"pld{'' if interval == INTERVALS[0] else '_coarse'}"
    source = f"dp_accounting PLDAccountant, value_discretization_interval {interval}"
    return [reported_deltas(acc.get_delta, [EPS[times]], times, f"{name}_delta_T{times}",
                            expect if times == 1 else None, source=source),
            reported_epsilon(acc.get_epsilon, DELTA, times, f"{name}_epsilon_T{times}", source=source)]


def halved(times):
    """A mis-stated answer: half of the accountant's delta, which must be refuted."""
    acc = PLDAccountant(NeighboringRelation.ADD_OR_REMOVE_ONE)
    acc.compose(EVENT, times)
    return dp.profile(at=[exact(EPS[times])], delta=exact(acc.get_delta(EPS[times])) / 2, times=times,
                      source="half of dp_accounting PLDAccountant (mis-stated)", id=f"halved_delta_T{times}",
                      expect="refuted")


CLAIMS = ([c for t in (1, 2) for i in INTERVALS for c in pld_claims(t, i, "refuted" if i == INTERVALS[1] else None)] + pld_claims(10, INTERVALS[1])[:1]
          + [halved(1)])
"""T = 10 with the default interval (decided only on the refined lattice, 6 s) and the halved answers at T = 2
and 10 are in tests/test_subsampled_laplace.py, to keep this file's run short."""

laplace_step = dp.spec(subsampled_laplace, name="subsampled_laplace", universe=ADD_REMOVE, claims=CLAIMS)
