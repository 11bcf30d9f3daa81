"""Label-private release of a relabelled dataset with the exponential mechanism, catalogue entry 9.

Mechanism: a labelled dataset D = ((x_1, y_1), ..., (x_n, y_n)) with labels in
{-1, +1}; over all labelings D'' in {-1, +1}^n the score
q(D, D'') = #{i : y''_i = y_i} (n minus the Hamming distance) has sensitivity
1 when one label changes; output the relabelled dataset ((x_i, y''_i))_i with
probability proportional to exp(eps q / 2).
Two-step sampler: the score level i has P(q = i) = C(n, i) e^(eps i/2) /
(1 + e^(eps/2))^n, computed by the log recursion
    log P(q = 0) = -n log(1 + e^(eps/2)),
    log P(q = i) = log(n - i + 1) - log i + eps/2 + log P(q = i - 1);
draw i, then a labeling uniformly among the C(n, i) labelings that agree with
D in exactly i places.
Source: the project's notes on label-private learning with the exponential
mechanism and symmetric losses (catalogue entry 9); label differential privacy
as defined by Chaudhuri and Hsu, "Sample complexity bounds for differentially
private learning" (COLT 2011).

Claims checked here (n = 3, features in {0, 1}, labels in {-1, +1}):

* the direct mechanism is eps-label-DP (label-only neighbours); in fact the
  normaliser (1 + e^(eps/2))^n does not depend on D, so the achieved epsilon
  is eps/2;
* the two-step sampler has exactly the direct mechanism's output law;
* the two-step sampler driven by the log recursion has exactly the law of the
  one driven by the closed form C(n, i) e^(eps i/2)/(1 + e^(eps/2))^n (here
  for n = 3, every level i and grid eps);
* the recursion matches the closed form for *all* n, i and eps > 0 (spec
  ``level_recursion``, formula claims proved symbolically): with
  P_i = C(n, i) e^(eps i/2)/(1 + e^(eps/2))^n, the base case
  log P_0 = -n log(1 + e^(eps/2)) and, for integers 1 <= i <= n, the step
  log P_i - log P_(i-1) = log(n - i + 1) - log i + eps/2 (because
  C(n, i)/C(n, i - 1) = (n - i + 1)/i).  By induction on i the recursion then
  computes log P_i exactly, for every n.

Success probability: with the direct mechanism, at most half of the labels are
flipped (q >= n/2) with probability at least 1/2 for every n and eps, since
P(q = i) grows with i by the factor e^(eps i/2); the ``success`` spec checks
this exactly for n = 2..5 and reports the table of P(q >= n/2) by n and eps
(the check's ``by_size`` figures).
"""
import itertools
import math

import sympy
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)
GRID = {eps: [Rational(1, 2), 1, 2]}

N = 3
LABELS = (-1, 1)
UNIVERSE = dp.universe(dp.labelled(xs=[0, 1], labels=LABELS), n=N, neighbours=dp.LABEL_ONLY)


def agreement(data, labels):
    """q(D, D''): how many of the new labels agree with the data's labels."""
    return sum(1 for (_, y), new in zip(data, labels) if y == new)


def relabel(data, labels):
    """The dataset with its labels replaced by ``labels`` (features kept)."""
    return tuple((x, new) for (x, _), new in zip(data, labels))


def labelings_at_level(data, i):
    """Every labeling that agrees with the data's labels in exactly i places, in a fixed order."""
    return [labels for labels in itertools.product(LABELS, repeat=len(data)) if agreement(data, labels) == i]


def direct(data, eps):
    """Exponential mechanism over all 2^n relabelled datasets, score = agreeing labels, Delta = 1."""
    labelings = tuple(itertools.product(LABELS, repeat=len(data)))
    labels = dp.exponential(labelings, lambda candidate: agreement(data, candidate), eps, sensitivity=1)
    return relabel(data, labels)


def level_probabilities_by_recursion(n, eps):
    """P(q = i) for i = 0..n from the log recursion of the catalogue (computed with dp.log/dp.exp)."""
    logs = [-n * dp.log(1 + dp.exp(eps / 2))]
    for i in range(1, n + 1):
        logs.append(dp.log(n - i + 1) - dp.log(i) + eps / 2 + logs[i - 1])
    return {i: dp.exp(logs[i]) for i in range(n + 1)}


def level_probabilities_closed_form(n, eps):
    """P(q = i) = C(n, i) e^(eps i/2) / (1 + e^(eps/2))^n for i = 0..n."""
    total = (1 + dp.exp(eps / 2)) ** n
    return {i: math.comb(n, i) * dp.exp(eps * i / 2) / total for i in range(n + 1)}


def two_step_sampler(data, eps):
    """Draw the level i by the log recursion, then a labeling uniformly among those at level i."""
    i = dp.categorical(level_probabilities_by_recursion(len(data), eps))
    return relabel(data, dp.uniform(labelings_at_level(data, i)))


def two_step_closed_form(data, eps):
    """The two-step sampler with the level law written in closed form."""
    i = dp.categorical(level_probabilities_closed_form(len(data), eps))
    return relabel(data, dp.uniform(labelings_at_level(data, i)))


direct_spec = dp.spec(
    direct,
    universe=UNIVERSE,
    grid=GRID,
    claims=[dp.private(eps, id="label_dp"), dp.same_distribution(two_step_sampler, id="two_step")],
)

recursion_spec = dp.spec(
    two_step_sampler,
    universe=UNIVERSE,
    grid=GRID,
    claims=[dp.same_distribution(two_step_closed_form, id="recursion_is_closed_form")],
)


n_ = dp.symbol("n", integer=True, positive=True)
i_ = dp.symbol("i", integer=True, positive=True)


def level_probability(i):
    """P(q = i) = C(n, i) e^(eps i/2) / (1 + e^(eps/2))^n in closed form, symbolic in n and eps."""
    return sympy.binomial(n_, i) * sympy.exp(eps * i / 2) / (1 + sympy.exp(eps / 2)) ** n_


level_recursion = dp.spec(
    name="level_recursion",
    doc="The log recursion for the level law equals the closed form for all n, i and eps > 0.",
    claims=[
        dp.identity(sympy.log(level_probability(0)), -n_ * sympy.log(1 + sympy.exp(eps / 2)), id="base_case"),
        dp.identity(sympy.log(level_probability(i_)) - sympy.log(level_probability(i_ - 1)),
                    sympy.log(n_ - i_ + 1) - sympy.log(i_) + eps / 2, where=[i_ <= n_], id="recursion_step"),
    ],
)


def at_most_half_flipped(data, relabelled):
    """q(D, D'') >= n/2: the released labels agree with at least half of the true ones."""
    return 2 * sum(y == new for (_, y), (_, new) in zip(data, relabelled)) >= len(data)


success = dp.spec(
    direct,
    name="success",
    universe=dp.universe(dp.labelled(xs=[0], labels=LABELS), n=range(2, 6), neighbours=dp.LABEL_ONLY),
    grid={eps: [Rational(1, 2), 1, 2, 4]},
    claims=[dp.probability(at_most_half_flipped, at_least=Rational(1, 2), id="at_most_half_flipped")],
)
