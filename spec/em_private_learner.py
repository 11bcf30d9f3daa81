"""A private PAC learner for thresholds via the exponential mechanism, catalogue entry 4.

Mechanism: the finite class H of thresholds on the line {0, 1, 2, 3},
h_t(x) = 1 if x >= t else 0 for t in {0, ..., 4} (|H| = 5); the data are n
labelled examples (x, y) with y in {0, 1}; the score of h is minus its
empirical error, u(X, h) = -(1/n) #{i : h(x_i) != y_i}; output h_t with the
exponential mechanism with parameter eps and Delta = 1/n.
Source: Kasiviswanathan, Lee, Nissim, Raskhodnikova and Smith, "What can we
learn privately?" (FOCS 2008), as presented in the lecture notes on the
exponential mechanism and private PAC learning.

Claims checked here: eps-DP under replace-one neighbours, for every dataset
size n = 1, ..., 4 (multisets, since the learner ignores the order of its
examples), and the sensitivity of the empirical error, Delta(n) = 1/n for
every n >= 1 (derived, not assumed): the error is a mean of the record term
[h(x) != y], which takes the values 0 and 1 over the labelled records, and
replacing one example moves a mean of n terms by at most (1 - 0)/n.  The
learner omits ``sensitivity=`` and uses exactly this derived value,
Delta(len(data)), at run time; the mutants in tests/test_mutants.py that
under-state it (1/(2n)) or score the error count with Delta = 1/n are refuted,
and so are the sensitivity mutants in tests/test_sensitivity.py.

Sample complexity (realizable case): for
n >= max{4 ln(2|H|/beta)/(eps alpha), 2 ln(2|H|/beta)/alpha^2} the output has
true error <= alpha with probability >= 1 - beta.  Checked both ways.

* Exactly (spec ``learner_sample_complexity``): x uniform on {0, 1, 2},
  labelled by the target threshold h_2, so a sample of n examples is one of
  C(n + 2, 2) multisets (the 4-point line would make the bound's n, in the
  hundreds, cost C(n + 3, 3) runs of the learner).  The learner is the same
  exponential mechanism over the same |H| = 5 thresholds, written to read the
  sample through its counts (``counting_learner``); ``same_learner`` states
  that it has exactly the output law of ``threshold_learner`` on every
  dataset of n = 1, 2, 3 labelled records (proved for every eps).  The check
  sums the exact probability of every sample times the learner's exact
  probability of an output with true error > alpha at the bound's n, and
  reports next to it the smallest n at which the guarantee actually holds:
  n = 119 asked for, 16 enough at eps = 1 (alpha = beta = 1/4; and 29 at
  eps = 1/2).  The default run scans only the top of that range to stay
  fast; ``dpverify check spec/em_private_learner.py --max-work 1000000000``
  scans every n.
* The algebra of the proof (spec ``learner_bound``, formula claims proved
  with sympy/z3 for all values of the symbols).  Call h bad when
  err_D(h) > alpha; the target h_2 has empirical error 0, so OPT = 0.  The
  output is bad only if (a) some bad h has err_S(h) <= alpha/2, or (b) the
  mechanism outputs an h with err_S(h) > alpha/2, i.e. score < OPT - alpha/2.
  ``hoeffding_bad_hypothesis``: for one bad h, Hoeffding gives
  P[err_S(h) <= alpha/2] <= e^(-2n(err - alpha/2)^2) <= e^(-alpha^2 n/2);
  ``union_term``: over at most |H| bad hypotheses,
  |H| e^(-alpha^2 n/2) <= beta/2 when n >= 2 ln(2|H|/beta)/alpha^2;
  ``privacy_term``: the exponential mechanism's weak utility bound
  P[u <= OPT - t] <= |H| e^(-eps t/(2 Delta)) at t = alpha/2, Delta = 1/n,
  is |H| e^(-eps alpha n/4) <= beta/2 when n >= 4 ln(2|H|/beta)/(eps alpha);
  ``total``: both terms together are <= beta for n >= the maximum.  (The
  form 2|H| e^(-alpha^2 n/2) <= beta/2, with a two-sided union bound, would
  need ln(4|H|/beta): it is refuted, see tests/test_learning_mutants.py.)
  The steps write ln(2|H|/beta) as -ln(beta/(2|H|)) (the identity
  ``log_form``): z3 reads exp and log as monotone fresh variables without the
  law exp(-ln v) = 1/v, and in this form each step is proved as written.

The bound is loose on the instance (the smallest n that works is a quarter
of the bound's n or less), so a bound with |H| for 2|H| (n = 96) or with both
constants halved (n = 60) still holds there exactly, and swapping alpha and
alpha^2 only asks for more samples; those mistakes are refuted as steps of the
proof, and the exact check refutes bounds that ask for fewer samples than the
smallest n that works (tests/test_learning_mutants.py).
"""
from collections import Counter
from fractions import Fraction

from sympy import Max, Rational, exp, log

import dpverify as dp

eps = dp.symbol("eps", positive=True)
n = dp.symbol("n", integer=True, positive=True)
GRID = {eps: [Rational(1, 2), 1, 2]}

POINTS = (0, 1, 2, 3)
THRESHOLDS = (0, 1, 2, 3, 4)
SIZES = range(1, 5)
RECORDS = dp.labelled(xs=POINTS, labels=[0, 1])


def predict(t, x):
    """The threshold hypothesis h_t(x) = 1 if x >= t else 0."""
    return 1 if x >= t else 0


empirical_error = dp.mean(lambda rec, t: int(predict(t, rec[0]) != rec[1]), domain=RECORDS)
"""err(X, h_t) = (1/n) #{i : h_t(x_i) != y_i}; ``empirical_error(data, t)`` is a Fraction."""

score = -empirical_error
"""u(X, h_t) = -err(X, h_t), the learner's score."""


def threshold_learner(data, eps):
    """Exponential mechanism over thresholds, score -empirical error, sensitivity derived (1/n)."""
    return dp.exponential(THRESHOLDS, score.on(data), eps, neighbours=dp.REPLACE_ONE)


learner = dp.spec(
    threshold_learner,
    universe=dp.universe(RECORDS, n=SIZES, neighbours=dp.REPLACE_ONE, symmetric=True),
    grid=GRID,
    claims=[dp.private(eps),
            dp.sensitivity(empirical_error, 1 / n, candidates=THRESHOLDS, id="error_sensitivity")],
)


# ----- sample complexity: the exact failure probability on a small population -------------

alpha = dp.symbol("alpha", positive=True)
beta = dp.symbol("beta", positive=True)

TARGET = 2
"""The target concept h_2 (the realizable case)."""

POPULATION = {(x, predict(TARGET, x)): Fraction(1, 3) for x in (0, 1, 2)}
"""x uniform on {0, 1, 2}, labelled by h_2: the records (0, 0), (1, 0), (2, 1)."""

CLASS_SIZE = len(THRESHOLDS)
"""|H| = 5, the class the learner chooses from (on the population's support h_3 = h_4)."""

BOUND = Max(4 * log(2 * CLASS_SIZE / beta) / (eps * alpha), 2 * log(2 * CLASS_SIZE / beta) / alpha**2)
"""n >= max{4 ln(2|H|/beta)/(eps alpha), 2 ln(2|H|/beta)/alpha^2}."""


def true_error(t):
    """err_D(h_t) = P[h_t(x) != y] under the population: 2/3, 1/3, 0, 1/3, 1/3 for t = 0..4."""
    return sum(p for (x, y), p in POPULATION.items() if predict(t, x) != y)


def counting_learner(data, eps):
    """``threshold_learner`` reading the sample through its counts (record -> multiplicity).

    The sample-complexity check passes a sample with ``.counts``, so the scores cost
    O(records), not O(n); on a plain tuple of records the counts are taken here.  Delta = 1/n,
    the sensitivity derived above (``error_sensitivity``)."""
    counts = getattr(data, "counts", None) or Counter(data)
    size = sum(counts.values())
    wrong = {t: sum(c for (x, y), c in counts.items() if predict(t, x) != y) for t in THRESHOLDS}
    return dp.exponential(THRESHOLDS, lambda t: -Fraction(wrong[t], size), eps, sensitivity=Fraction(1, size))


learner_sample_complexity = dp.spec(
    counting_learner,
    name="learner_sample_complexity",
    doc=("The realizable sample complexity of the private threshold learner, exactly: x uniform on "
         "{0, 1, 2}, target h_2, |H| = 5; P[err_D(output) > alpha] at the bound's n next to the "
         "smallest n that works."),
    universe=dp.universe(RECORDS, n=range(1, 4), neighbours=dp.REPLACE_ONE, symmetric=True),
    grid={eps: [1], alpha: [Rational(1, 4)], beta: [Rational(1, 4)]},
    claims=[
        dp.same_distribution(threshold_learner, id="same_learner"),
        dp.sample_complexity(population=POPULATION, error=true_error, alpha=alpha, beta=beta, bound=BOUND,
                             id="realizable_bound"),
    ],
)


# ----- the algebra of the proof --------------------------------------------------------------

H = dp.symbol("H", integer=True, positive=True)
"""|H|, the size of the class."""
err = dp.symbol("err", positive=True)
"""The true error of one bad hypothesis."""

PROPER = [alpha < 1, beta < 1]
"""An error level and a failure probability in (0, 1)."""

LOG = -log(beta / (2 * H))
"""ln(2|H|/beta), written so that z3 can connect it with the exponentials (see ``log_form``)."""

HOEFFDING_N = 2 * LOG / alpha**2
PRIVACY_N = 4 * LOG / (eps * alpha)


def hoeffding_term(size, alpha_, n_):
    """|H| e^(-alpha^2 n/2): the union bound of Hoeffding's e^(-2n(alpha/2)^2) over the bad hypotheses."""
    return size * exp(-alpha_**2 * n_ / 2)


def privacy_term(size, eps_, alpha_, n_):
    """|H| exp(-eps t/(2 Delta)) at t = alpha/2 and Delta = 1/n: |H| e^(-eps alpha n/4)."""
    t, delta = alpha_ / 2, 1 / n_
    return size * exp(-eps_ * t / (2 * delta))


learner_bound = dp.spec(
    name="learner_bound",
    doc=("The steps of the realizable sample-complexity proof for the exponential-mechanism learner: "
         "Hoeffding for one bad hypothesis at alpha/2, the union bound over H, the exponential "
         "mechanism's utility at t = alpha/2 with Delta = 1/n, each at most beta/2 at the bound's n, "
         "and both together at most beta for n >= max{4 ln(2|H|/beta)/(eps alpha), 2 ln(2|H|/beta)/alpha^2}."),
    claims=[
        dp.identity(log(2 * H / beta), LOG, id="log_form"),
        dp.inequality(exp(-2 * n * (err - alpha / 2)**2), exp(-alpha**2 * n / 2),
                      where=[err > alpha, err <= 1, *PROPER], id="hoeffding_bad_hypothesis"),
        dp.inequality(hoeffding_term(H, alpha, n), beta / 2, where=[n >= HOEFFDING_N, *PROPER],
                      id="union_term"),
        dp.inequality(privacy_term(H, eps, alpha, n), beta / 2, where=[n >= PRIVACY_N, *PROPER],
                      id="privacy_term"),
        dp.inequality(hoeffding_term(H, alpha, n) + privacy_term(H, eps, alpha, n), beta,
                      where=[n >= Max(PRIVACY_N, HOEFFDING_N), *PROPER], id="total"),
    ],
)
