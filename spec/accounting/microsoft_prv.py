"""Microsoft's prv-accountant 0.2.0, checked against dpverify's exact profiles.

Used the way its users use it: ``PRVAccountant(prvs=[prv], max_self_compositions=[T], eps_error=0.01,
delta_error=1e-10)``, then ``compute_delta(eps, [T])`` and ``compute_epsilon(delta, [T])``, each of which
returns three numbers (lower, estimate, upper).  Only the upper one is a guarantee: the estimate is a
numerical approximation of the true value and lies below it about half the time, by design.  So the
claims hold the accountant to its UPPER bounds -- delta_T(eps) <= the upper delta, and delta_T(eps_up)
<= delta at the upper epsilon -- and the estimates are shown in the findings below, against the exact
values, not claimed.  Each reported float becomes its exact binary value (``_reported.py``).

Privacy random variables, each beside the exact law it stands for:

* ``PureDPMechanism(eps=ln(17/15))``: randomized response of one bit at eps0 = the float ln(17/15)
  (written ``dp.randomized_response(bit, eps0)`` at the float's exact value); replace-one;
  T in {10, 100, 1000}, the exact lattice PLD.
* ``GaussianMechanism(noise_multiplier=10.0)``: a sensitivity-1 sum plus N(0, 10^2); add-or-remove;
  T in {10, 100, 1000}, the analytic delta at sqrt(T)/10.
* ``LaplaceMechanism(mu=1.0)``: its mu is the loss bound sensitivity/scale, so a sensitivity-1 sum
  plus Laplace(1); add-or-remove; T = 10, between certified bounds of the discretised loss distribution.

Findings (prv-accountant 0.2.0; exact values from ``dpverify check``):

* **The upper bounds fail for composed randomized response (PureDPMechanism) -- a real violation.**
  eps0 = 1, the README's eps_error = 0.1, delta_error = 1e-10.  T = 1000: compute_delta(500) = (-1e-10,
  0, 1e-10) and compute_delta(550) the same, against the exact delta_1000(500) = 0.0803759 and
  delta_1000(550) = 6.09445e-4; compute_epsilon(1e-6) = (12.89, 12.99, 13.09), where the exact
  delta_1000(13.09) is 1 to six digits (the composed loss has mean 462).
  T = 100: compute_epsilon(1e-6) = (75.88, 75.98, 76.08), exact delta_100(76.08) = 7.70922e-5, 77 times
  the 1e-6 asked for; its compute_delta at 50 and 70 still holds (upper 0.296439 and 1.51854e-3 against
  0.287618 and 1.42732e-3).  With eps_error = 0.01 (spec claims ``*_fine``) the T = 100 bounds are all
  below the truth: compute_delta(70) = (1.33945e-3, 1.34077e-3, 1.35529e-3) against 1.42732e-3 (upper
  5% low), compute_epsilon(1e-6) upper 75.9998 where the exact delta is 7.78253e-5.  The cause: the
  automatic domain (eps_max=None, ``compute_safe_domain_size``) is [-76.03, 76.03] for T = 100 and
  [-289.0, 289.0] for T = 1000, short of the losses that matter (the 1000-fold loss has mean 462), and
  the truncated PRV drops that tail (compute_epsilon answers near the domain's edge, 76); given
  eps_max = 700 or 1100 it refuses instead (the RuntimeError below).  For
  eps0 = ln(17/15) (the dp_accounting file's mechanism) the accountant refuses T = 100 and 1000 instead
  ("RuntimeError: Discrete mean differs from continuous mean significantly"), as it does for Laplace at
  T = 1000.  T = 10 holds: upper delta(5) = 0.373754 and delta(8) = 0.0538057 against 0.363591 and
  0.0377024; upper epsilon 10.1028 where delta_10 is exactly 0 (the mechanism is 10-DP).
* The estimate is not a bound, as documented, and the exact values show it: randomized response T = 100
  estimate delta(50) = 0.287504 and delta(70) = 1.33981e-3 against the exact 0.287618 and 1.42732e-3
  (below); Gaussian T = 10 estimate delta(0.5) = 0.00978911 against 0.00977487 (above), T = 1000
  0.383837 (equal to 6 digits).  No claim is made on estimates.
* Gaussian: every upper bound holds; slack ratio upper/exact at eps_error = 0.1 is 1.9 and 2.9 at
  T = 10 (delta(0.5) = 0.0187946 against 0.00977487; delta(1) = 3.20742e-4 against 1.0981e-4),
  1.15 and 1.24 at T = 100, 1.03 and 1.07 at T = 1000 (delta(10) = 0.0361602 against 0.0337795);
  at the upper epsilon for 1e-6 (1.46808 / 4.98672 / 19.5238) the exact delta is 2.23e-7 / 6.18e-7 /
  8.56e-7.  (At eps_error = 0.01 the ratios shrink to 1.07 to 1.12 at T = 10.)
* Laplace T = 10: upper delta(2) = 0.626261, delta(6) = 0.117942, delta(8) = 0.0179683 above the certified
  brackets [0.61111, 0.614568], [0.108788, 0.110507], [0.0155252, 0.0158808]: verified.  Its estimates
  (0.612802, 0.109757, 0.0157511) lie inside the brackets (undecidable, and not claimed).
* The subsampled Gaussian (``PoissonSubsampledGaussianMechanism``) is checked in ``subsampled_gaussian.py``:
  its upper bounds hold at T in {1, 10, 100, 1000} (ratio 1.7 to 2.5 on compute_delta(1)).
"""
import dpverify as dp
from _reported import ADD_REMOVE, BIT, exact, reported_deltas, reported_epsilon

try:
    from prv_accountant import GaussianMechanism, LaplaceMechanism, PRVAccountant, PureDPMechanism
except ImportError:
    raise dp.SpecError("spec/accounting/microsoft_prv.py checks prv-accountant, which is not installed",
                       "install the accounting extra: pip install -e '.[accounting]' (the dev install includes it)"
                       ) from None

TIMES = (10, 100, 1000)
DELTA = 1e-6
EPS0 = 1.0
SIGMA = 10.0
MU = 1.0
RR_EPS = {10: [5.0, 8.0], 100: [50.0, 70.0], 1000: [500.0, 550.0]}
GAUSS_EPS = {10: [0.5, 1.0], 100: [1.0, 2.0], 1000: [5.0, 10.0]}
LAPLACE_EPS = [2.0, 6.0, 8.0]


def rr(data):
    return dp.randomized_response(data[0], exact(EPS0))


def gaussian_sum(data):
    return dp.gaussian(sum(data), exact(SIGMA))


def laplace_sum(data):
    return dp.laplace(sum(data), 1 / exact(MU))


def accountant(prv, times, eps_error=0.1):
    """The accountant for ``times`` self-compositions of ``prv``; eps_error 0.1 is the README's "typically"."""
    return PRVAccountant(prvs=[prv], max_self_compositions=[times], eps_error=eps_error, delta_error=1e-10)


UPPER = 2
"""The index of the upper bound in compute_delta's and compute_epsilon's (lower, estimate, upper)."""


def upper_claims(prv, epsilons, times, expect=(None, None), eps_error=0.1, name=""):
    """The upper delta at each eps, and delta_T at the upper epsilon for DELTA; ``expect`` for each."""
    acc = accountant(prv, times, eps_error)
    source = f"prv-accountant PRVAccountant upper bound, eps_error {eps_error}"
    return [reported_deltas(lambda e: acc.compute_delta(e, [times])[UPPER], epsilons, times,
                            f"upper_delta_T{times}{name}", expect[0], source=source),
            reported_epsilon(lambda d: acc.compute_epsilon(d, [times])[UPPER], DELTA, times,
                             f"upper_epsilon_T{times}{name}", expect[1], source=source)]


RR_PRV = PureDPMechanism(eps=EPS0)
RR_EXPECT = {10: (None, None), 100: (None, "refuted"), 1000: ("refuted", "refuted")}

rr_prv = dp.spec(rr, name="rr_prv", universe=BIT,
                 claims=[c for t in TIMES for c in upper_claims(RR_PRV, RR_EPS[t], t, RR_EXPECT[t])]
                 + upper_claims(RR_PRV, RR_EPS[100], 100, ("refuted", "refuted"), eps_error=0.01, name="_fine"))

gaussian_prv = dp.spec(gaussian_sum, name="gaussian_prv", universe=ADD_REMOVE,
                       claims=[c for t in TIMES for c in upper_claims(GaussianMechanism(noise_multiplier=SIGMA),
                                                                      GAUSS_EPS[t], t)])

LAPLACE = accountant(LaplaceMechanism(mu=MU), 10)

laplace_prv = dp.spec(laplace_sum, name="laplace_prv", universe=ADD_REMOVE,
                      claims=[reported_deltas(lambda e: LAPLACE.compute_delta(e, [10])[UPPER], LAPLACE_EPS, 10,
                                              "upper_delta_T10",
                                              source="prv-accountant PRVAccountant upper bound, eps_error 0.1")])
