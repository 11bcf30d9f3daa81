"""One DP-SGD step -- the Poisson-subsampled Gaussian -- composed T times, three accountants checked.

The mechanism: each record kept with probability q = 1/100, the kept records' clipped sum (sensitivity
1) released with N(0, 1) noise; add-or-remove neighbours; T in {1, 10, 100, 1000} steps.  The accountants
as their users call them:

* dp_accounting 0.6.0: ``PLDAccountant()`` / ``RdpAccountant()``, ``compose(PoissonSampledDpEvent(0.01,
  GaussianDpEvent(1.0)), T)``, then ``get_delta(1.0)`` and ``get_epsilon(1e-6)``;
* prv-accountant 0.2.0: ``PRVAccountant(prvs=[PoissonSubsampledGaussianMechanism(noise_multiplier=1.0,
  sampling_probability=0.01)], max_self_compositions=[T], eps_error=0.1, delta_error=1e-10)``, its upper
  bounds of ``compute_delta(1.0, [T])`` and ``compute_epsilon(1e-6, [T])`` (its guarantees).

Each answer is a ``dp.profile`` claim on the float's exact value (``_reported.py``), decided against
delta_T(eps) of the worse ordered pair: T = 1 in closed form (Phi at the monotone loss's inverse),
T = 100 and 1000 certified to 8+ significant digits (16 when a claim falls inside) by the Mellin inversion of M(s)^T
(``dpverify/engine/pld_gaussian_mellin.py``); T = 10 is beyond that method's node budget (the integrand
decays too slowly along its line for few steps) and is decided between the grid's certified bounds
(about 3 digits), so only the accountants whose slack exceeds them are claimed there.

Findings (exact values from ``dpverify check``; ratio = reported / exact):

* No violation: every answer of the three accountants holds.
* PLDAccountant is almost exact: get_delta(1) = 2.7320101e-9 / 6.671448e-7 / 2.6124968e-3 (T = 1 / 100 /
  1000) against the exact 2.73200926e-9 / 6.67139892e-7 / 2.61242058e-3 (ratio - 1 = 3e-7, 7e-6, 3e-5);
  its get_epsilon(1e-6) = 0.363948 / 0.954218 / 2.124523, where the exact delta is 9.999998e-7 /
  9.999921e-7 / 9.999417e-7 -- below 1e-6 by 2e-7, 8e-6, 6e-5 relative.  At T = 10 its delta(1) =
  2.93995e-8 lies inside the grid's certified bracket, so no claim is made there.
* RdpAccountant holds with the RDP conversion's slack: get_delta(1) is 2464x the exact at T = 1
  (6.73e-6 against 2.73e-9), 458x at T = 10, 80x at T = 100 and 3.2x at T = 1000 (8.35e-3 against
  2.61e-3); at its get_epsilon(1e-6) (1.212 / 1.309 / 1.507 / 2.437) the exact delta is 5.4e-10 /
  - / 1.2e-8 / 8.2e-8.
* PRVAccountant's upper bounds hold: compute_delta(1) upper = 6.04e-9 / 6.64e-8 / 1.64e-6 / 4.55e-3
  (ratio 2.2 / 2.3 / 2.5 / 1.7); at its upper epsilon for 1e-6 (0.4605 / 0.6935 / 1.0544 / 2.2248) the
  exact delta is 3.4e-7 / - / 4.2e-7 / 4.5e-7.  Its estimates (2.67e-9, 2.96e-8, 6.68e-7, 2.6152e-3)
  sit on both sides of the exact values, as documented (no claim on them).

The subsampled Laplace (``PoissonSampledDpEvent(0.1, LaplaceDpEvent(1.0))``) is checked in
``subsampled_laplace.py``: PLDAccountant only (RdpAccountant refuses it with ``UnsupportedEventError``: the
subevent must be a ``GaussianDpEvent``; prv-accountant has no subsampled Laplace), against delta_T certified
by :mod:`dpverify.engine.pld.laplace_mixture` (closed form at T = 1, a certified integral at T = 2) and
bracketed by :mod:`dpverify.engine.pld.laplace_mixture_bounds` for larger T (second-order lattice bounds
through both atoms of the loss: the Mellin integrand m(a + it)^T does not decay in t there).
"""
import dpverify as dp
from _reported import ADD_REMOVE, exact, reported_deltas, reported_epsilon

try:
    from dp_accounting import dp_event
    from dp_accounting.pld import PLDAccountant
    from dp_accounting.rdp import RdpAccountant
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism
except ImportError:
    raise dp.SpecError("spec/accounting/subsampled_gaussian.py checks dp_accounting and prv-accountant, which are "
                       "not installed",
                       "install the accounting extra: pip install -e '.[accounting]' (the dev install includes it)"
                       ) from None

Q, SIGMA, EPS, DELTA = 0.01, 1.0, 1.0, 1e-6
KEEP = exact(Q)
"""The rate the accountants were given: the float 0.01's exact value (1/100 + 2e-19)."""
TIMES = (1, 10, 100, 1000)
EVENT = dp_event.PoissonSampledDpEvent(Q, dp_event.GaussianDpEvent(SIGMA))
UPPER = 2
"""The index of the upper bound in prv-accountant's (lower, estimate, upper)."""


def dpsgd_step(data):
    """One DP-SGD step on gradients clipped to norm 1: the Poisson sample's sum plus N(0, SIGMA^2)."""
    kept = [r for r in data if dp.bernoulli(KEEP)]
    return dp.gaussian(sum(kept), exact(SIGMA))


def dp_accounting_claims(accountant, times, name, epsilon=True):
    acc = accountant()
    acc.compose(EVENT, times)
    source = f"dp_accounting {accountant.__name__}"
    out = [reported_deltas(acc.get_delta, [EPS], times, f"{name}_delta_T{times}", source=source)]
    if epsilon:
        out.append(reported_epsilon(acc.get_epsilon, DELTA, times, f"{name}_epsilon_T{times}", source=source))
    return out


def prv_claims(times):
    acc = PRVAccountant(prvs=[PoissonSubsampledGaussianMechanism(noise_multiplier=SIGMA, sampling_probability=Q)],
                        max_self_compositions=[times], eps_error=0.1, delta_error=1e-10)
    source = "prv-accountant PRVAccountant upper bound"
    return [reported_deltas(lambda e: acc.compute_delta(e, [times])[UPPER], [EPS], times, f"prv_upper_delta_T{times}",
                            source=source),
            reported_epsilon(lambda d: acc.compute_epsilon(d, [times])[UPPER], DELTA, times,
                             f"prv_upper_epsilon_T{times}", source=source)]



# T = 10 is decided between grid bounds (about 3 digits): the PLD accountant's answers lie inside them
# (no claim); RDP's get_epsilon at T = 100 would cost another set of Mellin nodes for a slack of 80x (left out)
CLAIMS = {1: dp_accounting_claims(PLDAccountant, 1, "pld") + dp_accounting_claims(RdpAccountant, 1, "rdp") + prv_claims(1),
          10: dp_accounting_claims(RdpAccountant, 10, "rdp") + prv_claims(10),
          100: dp_accounting_claims(PLDAccountant, 100, "pld") + dp_accounting_claims(RdpAccountant, 100, "rdp", False)
          + prv_claims(100),
          1000: dp_accounting_claims(PLDAccountant, 1000, "pld") + dp_accounting_claims(RdpAccountant, 1000, "rdp")
          + prv_claims(1000)}

dpsgd = dp.spec(dpsgd_step, name="dpsgd", universe=ADD_REMOVE, claims=[c for t in TIMES for c in CLAIMS[t]])
