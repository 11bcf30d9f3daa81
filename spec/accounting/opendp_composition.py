"""OpenDP's composition (``opendp.prelude``) checked against dpverify's exact profiles.

Used as OpenDP's users use it: measurements built with ``opendp.measurements``, composed with
``make_composition([m] * T)``, the privacy map read at d_in = 1; for zCDP measurements converted with
``make_zCDP_to_approxDP`` (a privacy profile: ``profile.delta(eps)`` and ``profile.epsilon(delta)``) and
``make_fix_delta(..., delta)``.  Each float becomes its exact binary value (``_reported.py``).

* ``make_randomized_response_bool(0.75)``: the true bit with probability 3/4 (eps0 = ln 3), pure DP
  (``max_divergence``); its composition's map is basic composition, T eps0 rounded up.  Claimed:
  delta_T(map) = 0 -- which holds only if OpenDP rounded T ln 3 upwards, decided exactly (ln 3 is
  irrational: the float must lie above it).
* ``then_gaussian(10.0)`` on a float with absolute distance (sensitivity 1): zCDP with rho = 1/200 per
  run, composed to T/200, converted to (eps, delta) by ``make_zCDP_to_approxDP``.

Findings (opendp 0.16.0; exact values from ``dpverify check``):

* Randomized response: the composed maps 10.986122886681102 (T = 10), 109.86122886681163 (T = 100) and
  1098.6122886681555 (T = 1000) all lie above T ln 3, so delta_T(map) = 0 exactly: OpenDP's rounding is
  outward, as it promises, and basic composition is tight here (delta_T at any eps below T ln 3 is > 0).
* Gaussian: every answer holds, with the slack of the zCDP-to-(eps, delta) conversion.  fix_delta(1e-6)
  gives eps = 1.47159 / 5.22153 / 20.5519 (T = 10 / 100 / 1000) against the exact epsilons 1.36757 /
  4.88655 / 19.4237 (dp_accounting's PLD answers, verified within 1e-7 relative in
  google_dp_accounting.py), where the exact delta is 2.11e-7 / 1.93e-7 / 1.65e-7; profile.delta(1) at
  T = 10 is 3.85709e-4 against 1.0981e-4 (ratio 3.5), delta(2) at T = 100 0.054293 against 0.0209236
  (2.6), delta(10) at T = 1000 0.104505 against 0.0337795 (3.1).
"""
import dpverify as dp
from _reported import ADD_REMOVE, BIT, exact, reported_deltas, reported_epsilon

try:
    import opendp.prelude as odp
except ImportError:
    raise dp.SpecError("spec/accounting/opendp_composition.py checks OpenDP, which is not installed",
                       "install the audit extra: pip install -e '.[audit]' (the dev install includes it)") from None

odp.enable_features("contrib")

TIMES = (10, 100, 1000)
DELTA = 1e-6
KEEP = 0.75
SIGMA = 10.0
GAUSS_EPS = {10: [1.0], 100: [2.0], 1000: [10.0]}


def rr(data):
    """OpenDP's randomized response on a bool: the true bit with probability KEEP."""
    bit = data[0]
    return dp.categorical({bit: exact(KEEP), 1 - bit: 1 - exact(KEEP)})


def gaussian_sum(data):
    return dp.gaussian(sum(data), exact(SIGMA))


RR = odp.m.make_randomized_response_bool(KEEP)

rr_basic = dp.spec(rr, name="rr_basic", universe=BIT,
                   claims=[dp.profile(at=[exact(odp.c.make_composition([RR] * t).map(1))], delta=0, times=t,
                                      id=f"basic_composition_T{t}") for t in TIMES])

GAUSSIAN = (odp.atom_domain(T=float, nan=False), odp.absolute_distance(T=float)) >> odp.m.then_gaussian(SIGMA)


def gaussian_claims(times):
    approx = odp.c.make_zCDP_to_approxDP(odp.c.make_composition([GAUSSIAN] * times))
    curve = approx.map(1.0)
    fixed_eps, fixed_delta = odp.c.make_fix_delta(approx, DELTA).map(1.0)
    return [reported_deltas(curve.delta, GAUSS_EPS[times], times, f"profile_delta_T{times}"),
            reported_epsilon(lambda d: fixed_eps, fixed_delta, times, f"fix_delta_T{times}")]


gaussian_zcdp = dp.spec(gaussian_sum, name="gaussian_zcdp", universe=ADD_REMOVE,
                        claims=[c for t in TIMES for c in gaussian_claims(t)])
