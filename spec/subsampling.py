"""Privacy amplification by subsampling without replacement, catalogue entry 13.

Mechanism: draw a uniformly random subset of m of the n records, then run an
eps-DP mechanism (under replace-one) on it.
Claim: the composition is ln(1 + (m/n)(e^eps - 1))-DP under replace-one
neighbours (the replaced record is in the subset with probability m/n).
Source: the notes on stable and private prediction; Balle, Barthe and Gaboardi,
"Privacy amplification by subsampling: tight analyses via couplings and
divergences" (NeurIPS 2018): sampling without replacement under the
substitution (replace-one) relation.

Three eps-DP inner mechanisms:

* randomized response on the single sampled record (m = 1 of n = 3, records
  in {0, 1}): the bound is attained exactly, so the claim is tight;
* randomized response on the parity of the number of ones in the subset
  (m = 2 of n = 4): changing one record of the subset flips the parity at most;
  this bound is attained exactly too;
* the exponential mechanism choosing the most frequent item of the subset
  (m = 2 of n = 4, items in {0, 1, 2}, Delta = 1).

All of them ignore the order of the records (the subset is uniform), so the
universes are multisets.

Poisson subsampling, exactly (``poisson_sampled``): each record is kept with probability q = 1/10
and randomized response releases whether a record was kept, under add/remove neighbours.  The
dominating pair is the mixture q P + (1 - q) Q against Q (and the reverse direction), whose losses
ln(1 + q(e^eps - 1)) and ln(1 + q(e^-eps - 1)) lie on no common lattice: its T-fold composition is
an exact multinomial.  Beside the theorem (the amplified eps0 = ln(1 + q(e^eps - 1)), proved for
every eps), the exact profile of T = 1000 runs: advanced composition over eps0 holds, basic
composition's T eps0 is exact (delta = 0), and the folklore "rate q scales epsilon to q eps"
is refuted, alone and composed (delta(T q eps) > 0, with its exact value).

One DP-SGD step (``dpsgd_step``): each record kept with probability q = 1/100, the clipped sum
(sensitivity 1) released with Gaussian noise of sigma = 1, under add/remove neighbours.  The pair is
N(0, 1) against (1 - q) N(0, 1) + q N(1, 1), both ways; delta_T(1/2) is certified to 8+ digits for
T = 1 (closed form: 2.21452e-7) and T = 100 (Mellin inversion, :mod:`dpverify.engine.pld.gaussian_mellin`:
1.27498e-4); T = 10 is beyond that method's node budget and lies between certified bounds of its
discretised loss distribution (a grid of 1/500: cells merged for the lower bound, split between grid
points for the upper one; :mod:`dpverify.engine.pld.gaussian_tight`): 2.54e-6 to 2.56e-6.  A claim above
the upper end is verified; one below the lower end is refuted (re-confirmed at twice the precision).

Sampling without replacement, exactly (``without_replacement``): one of n = 2 records in {-1, 1} is
sampled (m = 1) and released with two-sided geometric noise, a = e^eps, clamped into [-1, 1].  Under
replace-one neighbours the released record changes by 2, so the base mechanism is (2 eps)-DP and the
theorem gives eps0 = ln(1 + (m/n)(e^(2 eps) - 1)): proved for every eps, and tight.  The Poisson formula
with the base's add/remove level eps -- ln(1 + q(e^eps - 1)) at q = m/n, the pitfall of accounting for
sampling without replacement under substitution with a Poisson accountant (Lebeda et al. 2024) -- is
refuted.  The exact curves beside it: each law is a mixture (1 - m/n) A + (m/n) B over whether the
replaced record was sampled, its loss distribution exact (three distinct losses, an exact multinomial
of 1326 terms at T = 50; :func:`dpverify.engine.pld.atoms.without_replacement` gives the same pairs
from the base laws): advanced composition over eps0 holds at T = 50, basic composition's T eps0 is
exact (delta = 0: the largest loss equals eps0, a tie shown by algebra), and advanced composition over
the Poisson formula's eps0 is refuted with the exact delta.
"""
from sympy import Rational, log, sqrt

import dpverify as dp

eps = dp.symbol("eps", positive=True)
GRID = {eps: [Rational(1, 2), 1, 2]}


def amplified(m, n):
    """ln(1 + (m/n)(e^eps - 1)), the epsilon claimed for an eps-DP mechanism run on m of n records."""
    return dp.log(1 + Rational(m, n) * (dp.exp(eps) - 1))


def rr_on_sampled_record(data, eps):
    """Randomized response on one record drawn uniformly from the data (m = 1)."""
    (record,) = dp.subset(data, 1)
    return dp.randomized_response(record, eps)


def rr_on_subset_parity(data, eps):
    """Randomized response on the parity of the number of ones in a random 2-subset."""
    sample = dp.subset(data, 2)
    return dp.randomized_response(sum(sample) % 2, eps)


def em_on_subset(data, eps):
    """Exponential mechanism (score = count, Delta = 1) for the most frequent item of a random 2-subset."""
    sample = dp.subset(data, 2)
    return dp.exponential((0, 1, 2), lambda y: sum(1 for x in sample if x == y), eps, sensitivity=1)


sampled_record = dp.spec(
    rr_on_sampled_record,
    universe=dp.universe([0, 1], n=3, neighbours=dp.REPLACE_ONE, symmetric=True),
    grid=GRID,
    claims=[dp.private(amplified(1, 3))],
)

subset_parity = dp.spec(
    rr_on_subset_parity,
    universe=dp.universe([0, 1], n=4, neighbours=dp.REPLACE_ONE, symmetric=True),
    grid=GRID,
    claims=[dp.private(amplified(2, 4))],
)

subset_most_frequent = dp.spec(
    em_on_subset,
    universe=dp.universe([0, 1, 2], n=4, neighbours=dp.REPLACE_ONE, symmetric=True),
    grid=GRID,
    claims=[dp.private(amplified(2, 4))],
)


Q_RATE = Rational(1, 10)
T = 1000
DELTA = Rational(1, 1000)
EPS0 = dp.log(1 + Q_RATE * (dp.exp(eps) - 1))


def poisson_rr(data, eps):
    """Randomized response on whether a record survived Poisson subsampling at rate Q_RATE."""
    kept = [r for r in data if dp.bernoulli(Q_RATE)]
    return dp.randomized_response(1 if kept else 0, eps)


poisson_sampled = dp.spec(
    poisson_rr,
    universe=dp.universe([1], n=range(0, 2), neighbours=dp.ADD_REMOVE),
    grid={eps: [Rational(1, 2), 1]},
    claims=[dp.private(EPS0, id="amplified"),
            dp.private(Q_RATE * eps, id="linear_amplification", expect="refuted"),
            dp.profile(at=[sqrt(2 * T * log(1 / DELTA)) * EPS0 + T * EPS0 * (dp.exp(EPS0) - 1)], delta=DELTA,
                       times=T, id="advanced_composition_of_amplified"),
            dp.profile(at=[T * EPS0], delta=0, times=T, id="basic_composition_of_amplified"),
            dp.profile(at=[T * Q_RATE * eps], delta=0, times=T, id="linear_amplification_composed",
                       expect="refuted")],
)


SGD_RATE = Rational(1, 100)


def dpsgd_step(data, sigma):
    """One DP-SGD step on gradients clipped to norm 1: the Poisson sample's sum with Gaussian noise."""
    kept = [r for r in data if dp.bernoulli(SGD_RATE)]
    return dp.gaussian(sum(kept), sigma)


sigma = dp.symbol("sigma", positive=True)
dpsgd = dp.spec(
    dpsgd_step,
    universe=dp.universe([1], n=range(0, 2), neighbours=dp.ADD_REMOVE),
    grid={sigma: [1]},
    claims=[dp.profile(at=[Rational(1, 2)], delta=Rational(1, 10 ** 6), id="one_step"),
            dp.profile(at=[Rational(1, 2)], delta=Rational(1, 10 ** 7), id="one_step_too_small", expect="refuted"),
            dp.profile(at=[Rational(1, 2)], delta=Rational(1, 10 ** 5), times=10, id="ten_steps"),
            dp.profile(at=[Rational(1, 2)], delta=Rational(1, 10 ** 6), times=10, id="ten_steps_too_small",
                       expect="refuted"),
            dp.profile(at=[Rational(1, 2)], delta=Rational(1, 10 ** 3), times=100, id="hundred_steps")],
)


WOR_T = 50


def amplified_level(m, n, level):
    """ln(1 + (m/n)(e^level - 1)) for a base mechanism that is level-DP."""
    return dp.log(1 + Rational(m, n) * (dp.exp(level) - 1))


def advanced(level, rounds):
    """Advanced composition's eps' for ``rounds`` level-DP mechanisms at delta' = DELTA."""
    return sqrt(2 * rounds * log(1 / DELTA)) * level + rounds * level * (dp.exp(level) - 1)


def sampled_signed_count(data, eps):
    """One of the records, sampled without replacement, plus geometric noise a = e^eps clamped into [-1, 1]."""
    (record,) = dp.subset(data, 1)
    return dp.geometric(record, dp.exp(eps), lower=-1, upper=1)


WOR_EPS0 = amplified_level(1, 2, 2 * eps)
POISSON_EPS0 = amplified_level(1, 2, eps)

without_replacement = dp.spec(
    sampled_signed_count,
    name="without_replacement",
    universe=dp.universe([-1, 1], n=2, neighbours=dp.REPLACE_ONE, symmetric=True),
    grid={eps: [Rational(1, 2)]},
    claims=[dp.private(WOR_EPS0, id="amplified"),
            dp.private(POISSON_EPS0, id="poisson_formula", expect="refuted"),
            dp.profile(at=[advanced(WOR_EPS0, WOR_T)], delta=DELTA, times=WOR_T, id="advanced_composition_of_amplified"),
            dp.profile(at=[WOR_T * WOR_EPS0], delta=0, times=WOR_T, id="basic_composition_of_amplified"),
            dp.profile(at=[advanced(POISSON_EPS0, WOR_T)], delta=DELTA, times=WOR_T,
                       id="poisson_formula_composed", expect="refuted")],
)
