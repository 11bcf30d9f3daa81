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

More combinators, called as OpenDP's users call them:

* ``make_pureDP_to_zCDP`` (Bun and Steinke, Proposition 1.4: eps-DP is (eps^2/2)-zCDP): on randomized
  response its rho = (ln 3)^2 / 2 = 0.603474 is checked as ``dp.zcdp`` against the exact sup over orders of
  D_alpha / alpha; on ``then_laplace(1.0)`` (eps = 1) rho = 1/2 likewise.
* ``make_pureDP_to_zCDP`` then ``make_composition`` then ``make_zCDP_to_approxDP`` on Laplace(1), T = 10 and
  100: the converted curve's ``delta(eps)`` and ``make_fix_delta``'s epsilon at 1e-6, against the exact delta_T
  of T Laplace releases between the certified bounds of engine/pld/bounds.py.
* ``make_adaptive_composition`` (the new name of ``make_sequential_composition``: an interactive compositor
  whose queries are measurements) of randomized response: its map at d_in = 1 with d_mids = [ln 3] * T
  claimed as delta_T(map) = 0, decided exactly like ``make_composition``'s.

* ``make_population_amplification`` (feature ``honest-but-curious``): the sum of a sized sample of n = 2 bits
  with discrete Laplace noise (``then_laplace(2.0)`` on integers: eps = 0.5 at one substitution, d_in = 2),
  amplified for a population of N = 4 -- sampling without replacement, ln(1 + (n/N)(e^eps - 1)).  dpverify
  runs the whole pipeline: 2 of the 4 records drawn without replacement (``dp.subset``), summed, plus
  two-sided geometric noise a = e^(1/2), clamped into [0, n] (lossless here: below the smallest centre and
  above the largest every pair's likelihood ratio is constant, so the lumped tails keep the exact loss).
  Claimed: eps' = OpenDP's amplified map; and the same map computed for a population of 8 (a misuse: the
  sample is not from that many records), expected refuted.

Findings (opendp 0.16.0): every answer holds.  Population amplification is tight: the exact eps of the
subsampled mechanism is 0.2809298036201613714..., the amplification formula's value, and OpenDP's float
0.2809298036201614 lies just above it (outward rounding); the population-8 map 0.150298 is refuted.  The zCDP levels: randomized response's largest D_alpha / alpha
found is 0.549306 (a certified lower bound of the sup; rho <= 0.603474 is verified for every order), Laplace's
0.367879 against 1/2.  Laplace through zCDP is loose (its loss is bounded by 1 per run; zCDP sees only its
second moment): delta_10(4) = 0.827462 reported against an exact delta in [0.330531, 0.331343];
delta_100(50) = 0.912342 against [0.03815, 0.03892] and delta_100(60) = 0.422480 against [9.59e-4, 9.94e-4];
fix_delta(1e-6) gives eps = 20.5519 at T = 10, above the largest composed loss 10 (delta_10 = 0 exactly), and
eps = 100.690 at T = 100, where delta_100 is below 4.1e-20.
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
                                      source="OpenDP make_composition", id=f"basic_composition_T{t}")
                           for t in TIMES])

GAUSSIAN = (odp.atom_domain(T=float, nan=False), odp.absolute_distance(T=float)) >> odp.m.then_gaussian(SIGMA)


PROFILE = "OpenDP make_zCDP_to_approxDP (its delta(eps) curve)"
FIXED = "OpenDP make_fix_delta"


def gaussian_claims(times):
    approx = odp.c.make_zCDP_to_approxDP(odp.c.make_composition([GAUSSIAN] * times))
    curve = approx.map(1.0)
    fixed_eps, fixed_delta = odp.c.make_fix_delta(approx, DELTA).map(1.0)
    return [reported_deltas(curve.delta, GAUSS_EPS[times], times, f"profile_delta_T{times}", source=PROFILE),
            reported_epsilon(lambda d: fixed_eps, fixed_delta, times, f"fix_delta_T{times}", source=FIXED)]


gaussian_zcdp = dp.spec(gaussian_sum, name="gaussian_zcdp", universe=ADD_REMOVE,
                        claims=[c for t in TIMES for c in gaussian_claims(t)])


RR_ZCDP = odp.c.make_pureDP_to_zCDP(RR)
LAPLACE = (odp.atom_domain(T=float, nan=False), odp.absolute_distance(T=float)) >> odp.m.then_laplace(1.0)
LAPLACE_ZCDP = odp.c.make_pureDP_to_zCDP(LAPLACE)
LAPLACE_TIMES = (10, 100)
LAPLACE_EPS = {10: [4.0], 100: [50.0, 60.0]}


def laplace_sum(data):
    return dp.laplace(sum(data), exact(1.0))


rr_zcdp = dp.spec(rr, name="rr_zcdp", universe=BIT,
                  claims=[dp.zcdp(exact(RR_ZCDP.map(1)), id="pure_to_zcdp")])


def laplace_claims(times):
    approx = odp.c.make_zCDP_to_approxDP(odp.c.make_composition([LAPLACE_ZCDP] * times))
    curve = approx.map(1.0)
    fixed_eps, fixed_delta = odp.c.make_fix_delta(approx, DELTA).map(1.0)
    return [reported_deltas(curve.delta, LAPLACE_EPS[times], times, f"zcdp_profile_delta_T{times}", source=PROFILE),
            reported_epsilon(lambda d: fixed_eps, fixed_delta, times, f"zcdp_fix_delta_T{times}", source=FIXED)]


laplace_zcdp = dp.spec(laplace_sum, name="laplace_zcdp", universe=ADD_REMOVE,
                       claims=[dp.zcdp(exact(LAPLACE_ZCDP.map(1.0)), id="pure_to_zcdp"),
                               *(c for t in LAPLACE_TIMES for c in laplace_claims(t))])


def adaptive(times):
    """OpenDP's interactive compositor of ``times`` randomized responses, its map at d_in = 1."""
    return odp.c.make_adaptive_composition(RR.input_domain, RR.input_metric, RR.output_measure, 1,
                                           [RR.map(1)] * times).map(1)


rr_adaptive = dp.spec(rr, name="rr_adaptive", universe=BIT,
                      claims=[dp.profile(at=[exact(adaptive(t))], delta=0, times=t, id=f"adaptive_composition_T{t}")
                              for t in TIMES])


odp.enable_features("honest-but-curious")
POPULATION, SAMPLE = 4, 2
SAMPLED_SUM = ((odp.vector_domain(odp.atom_domain(bounds=(0, 1)), size=SAMPLE), odp.symmetric_distance())
               >> odp.t.then_sum() >> odp.m.then_laplace(2.0))


def amplified(population):
    """OpenDP's population amplification of SAMPLED_SUM at one substitution (symmetric distance 2)."""
    return odp.c.make_population_amplification(SAMPLED_SUM, population_size=population).map(2)


def sampled_sum(data):
    """SAMPLE of the records drawn without replacement, summed, plus discrete Laplace noise of scale 2."""
    return dp.geometric(sum(dp.subset(data, SAMPLE)), dp.exp(exact(0.5)), lower=0, upper=SAMPLE)


population_amplification = dp.spec(
    sampled_sum, name="population_amplification",
    universe=dp.universe([0, 1], n=POPULATION, neighbours=dp.REPLACE_ONE, symmetric=True),
    claims=[dp.private(exact(amplified(POPULATION)), id="amplified"),
            dp.private(exact(amplified(2 * POPULATION)), id="population_overstated", expect="refuted")])
