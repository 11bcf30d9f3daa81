"""Uniform convergence for a finite class: Hoeffding plus a union bound, catalogue entry 5.

For a finite class H, a distribution D over labelled examples and a sample S of
n examples drawn i.i.d. from D, write err_D(h) for the true error of h and
err_S(h) for its empirical error.  Hoeffding's inequality for one h (err_S(h)
is a mean of n i.i.d. [0, 1]-valued terms with mean err_D(h)) and a union bound
over H give

* one-sided: for n >= ln(|H|/beta)/(2 alpha^2),
  P[max_h (err_D(h) - err_S(h)) > alpha] <= |H| e^(-2 n alpha^2) <= beta;
* two-sided: for n >= ln(2|H|/beta)/(2 alpha^2),
  P[max_h |err_D(h) - err_S(h)| > alpha] <= 2 |H| e^(-2 n alpha^2) <= beta.

Source: Shalev-Shwartz and Ben-David, "Understanding Machine Learning" (2014),
Lemma 4.5 and Corollary 4.6; Hoeffding, "Probability inequalities for sums of
bounded random variables" (JASA 1963); the project's notes on private PAC
learning, where the one-sided form bounds the true error of the hypotheses the
exponential mechanism can pick.

Checked two ways.

1. Exactly, on small instances (specs ``uniform_convergence`` and
   ``hoeffding_one_hypothesis``).  The "mechanism" is the vector of empirical
   errors (err_S(h))_h of the sample, a deterministic function of the data;
   the claim kind ``dp.sample_complexity`` states "if n >= BOUND then
   P_S[dev(M(S)) > alpha] <= beta", where ``dev`` maps that vector to the
   largest deviation from the true errors (one-sided or two-sided).  The check
   sums the exact multinomial probabilities of all samples (count vectors, not
   n-tuples) -- for one hypothesis, exactly the binomial tails -- at the n the
   bound asks for, and reports next to it the smallest n that works (see
   below).
   ``uniform_convergence``: the |H| = 4 thresholds h_t(x) = [x >= t] on
   {0, 1, 2}, under the labelled distribution uniform on (0, 0), (1, 1),
   (2, 0) (not realizable by a threshold; true errors 2/3, 1/3, 2/3, 1/3).
   ``hoeffding_one_hypothesis``: |H| = 1, a hypothesis with true error 1/2, so
   err_S ~ Binomial(n, 1/2)/n; this is Hoeffding's inequality itself, against
   the binomial tail.
2. The algebra of the proof (spec ``hoeffding_algebra``, formula claims proved
   with sympy/z3 for all values of the symbols): Hoeffding's lemma for a
   Bernoulli(p) term through its log-moment generating function
   phi(lam) = -lam p + ln(1 - p + p e^lam) (phi(0) = 0, phi'(0) = 0,
   phi'' = q(1 - q) <= 1/4 with q = p e^lam/(1 - p + p e^lam); Taylor's theorem
   then gives phi(lam) <= lam^2/8, a step of calculus, not algebra, so not a
   claim here); Chernoff's exponent n(lam^2/8 - lam t) is smallest at
   lam = 4t, where it is -2 n t^2; and the union-bound step in both forms,
   |H| e^(-2 n alpha^2) <= beta and 2 |H| e^(-2 n alpha^2) <= beta at the
   bound's n.

The union-bound steps write the bound's logarithm as -ln(beta/|H|) (resp.
-ln(beta/(2|H|))), the same number as ln(|H|/beta) (the identities
``log_form_*``, proved by sympy): z3 reads exp and log as monotone fresh
variables without the law exp(-ln v) = 1/v, and in this form the step is
proved as written.

The "smallest n" the check reports is the smallest N from which the failure
probability is <= beta for every n up to the bound's.  For these statistics
the failure probability is not monotone in n (the empirical errors live on
the lattice k/n): for ``uniform_convergence`` at alpha = 1/4, beta = 1/10 the
first n that works is 11 (one-sided) and 12 (two-sided), but the guarantee
holds for every larger n only from 14 and 16 on, which is what is reported.

The sample-complexity bounds are loose on these instances (the smallest n
that works is a fifth to two thirds of the bound's n), so a mutant that
changes a constant by a factor 2 or the logarithm's argument by a factor 2 is
refuted exactly only on an instance where its n becomes small enough (small
beta, or beta near 1 with n = 1); tests/test_learning_mutants.py lists which,
and refutes every mutant of the algebra.
"""
from collections import Counter
from fractions import Fraction

import sympy
from sympy import Rational, exp, log

import dpverify as dp
from _thresholds import THRESHOLDS, h

alpha = dp.symbol("alpha", positive=True)
beta = dp.symbol("beta", positive=True)


def empirical_errors(hypotheses):
    """The mechanism: data -> (err_S(h))_h for the thresholds in ``hypotheses``, exact Fractions.

    The sample-complexity check passes a sample with ``.counts`` (record -> multiplicity); other
    callers pass a plain tuple of records."""
    def errors_of(data):
        counts = getattr(data, "counts", None) or Counter(data)
        size = sum(counts.values())
        return tuple(Fraction(sum(c for (x, y), c in counts.items() if h(t, x) != y), size) for t in hypotheses)
    errors_of.__name__ = "empirical_errors"
    return errors_of


def true_errors(population, hypotheses):
    """(err_D(h))_h under the labelled distribution ``population`` (record -> probability)."""
    return tuple(sum(p for (x, y), p in population.items() if h(t, x) != y) for t in hypotheses)


def largest_gap(truth):
    """dev(S) = max_h (err_D(h) - err_S(h)): how far the sample flatters its best-looking hypothesis."""
    def one_sided(errors):
        return max(d - e for d, e in zip(truth, errors))
    return one_sided


def largest_deviation(truth):
    """dev(S) = max_h |err_D(h) - err_S(h)|."""
    def two_sided(errors):
        return max(abs(d - e) for d, e in zip(truth, errors))
    return two_sided


def one_sided_bound(size):
    """ln(|H|/beta)/(2 alpha^2)."""
    return log(size / beta) / (2 * alpha**2)


def two_sided_bound(size):
    """ln(2|H|/beta)/(2 alpha^2)."""
    return log(2 * size / beta) / (2 * alpha**2)


def instance(name, population, hypotheses, grid, doc):
    """A spec of both claims for one class and one labelled distribution."""
    truth = true_errors(population, hypotheses)
    size = len(hypotheses)
    return dp.spec(
        empirical_errors(hypotheses),
        name=name,
        doc=doc,
        universe=dp.universe(list(population), n=1, neighbours=dp.REPLACE_ONE),  # unused: the samples
        grid=grid,                                                               # come from the population
        claims=[
            dp.sample_complexity(population=population, error=largest_gap(truth), alpha=alpha, beta=beta,
                                 bound=one_sided_bound(size), id="one_sided"),
            dp.sample_complexity(population=population, error=largest_deviation(truth), alpha=alpha, beta=beta,
                                 bound=two_sided_bound(size), id="two_sided"),
        ],
    )


AGNOSTIC = {(0, 0): Fraction(1, 3), (1, 1): Fraction(1, 3), (2, 0): Fraction(1, 3)}
"""Uniform on three labelled points that no threshold fits (the best, h_1 or h_3, errs 1/3)."""

COIN = {(0, 0): Fraction(1, 2), (1, 0): Fraction(1, 2)}
"""Two labelled points; h_1 errs exactly on (1, 0), so its true error is 1/2."""

uniform_convergence = instance(
    "uniform_convergence", AGNOSTIC, THRESHOLDS,
    [{alpha: Rational(1, 4), beta: Rational(1, 10)},
     {alpha: Rational(1, 5), beta: Rational(1, 10)},
     {alpha: Rational(1, 4), beta: Rational(1, 1000)}],
    "The |H| = 4 thresholds on {0, 1, 2} under the uniform distribution on (0, 0), (1, 1), (2, 0): "
    "exact P[max_h (err_D - err_S) > alpha] and P[max_h |err_D - err_S| > alpha] at the bound's n.",
)

hoeffding_one_hypothesis = instance(
    "hoeffding_one_hypothesis", COIN, (1,),
    [{alpha: Rational(1, 4), beta: Rational(1, 10)},
     {alpha: Rational(1, 8), beta: Rational(1, 10)},
     {alpha: Rational(1, 4), beta: Rational(1, 1000)},
     {alpha: Rational(1, 4), beta: Rational(9, 10)}],
    "|H| = 1 with true error 1/2: Hoeffding's inequality against the exact Binomial(n, 1/2) tails.",
)


# ----- the algebra of the proof ------------------------------------------------------------

H = dp.symbol("H", integer=True, positive=True)
"""|H|, the size of the class."""
n = dp.symbol("n", integer=True, positive=True)
"""The sample size."""
p = dp.symbol("p", nonnegative=True)
"""The mean of one Bernoulli term (the true error of one hypothesis)."""
lam = dp.symbol("lam")
"""Chernoff's free parameter lambda."""
t = dp.symbol("t", positive=True)
"""The deviation in Hoeffding's inequality."""

PROPER = [alpha < 1, beta < 1]
"""An error level and a failure probability in (0, 1)."""


def log_mgf(lam_, p_):
    """phi(lam) = ln E e^(lam (Z - p)) for Z ~ Bernoulli(p): -lam p + ln(1 - p + p e^lam)."""
    return -lam_ * p_ + log(1 - p_ + p_ * exp(lam_))


def tilted_mean(lam_, p_):
    """q = p e^lam/(1 - p + p e^lam), the mean of Z under the tilted law."""
    return p_ * exp(lam_) / (1 - p_ + p_ * exp(lam_))


def chernoff_exponent(lam_, t_, n_):
    """n (lam^2/8 - lam t): ln of e^(-lam n t) (E e^(lam (Z - p)))^n after Hoeffding's lemma."""
    return n_ * (lam_**2 / 8 - lam_ * t_)


q = tilted_mean(lam, p)

hoeffding_algebra = dp.spec(
    name="hoeffding_algebra",
    doc=("The algebraic steps of Hoeffding's inequality for a Bernoulli mean and of the union bound: "
         "phi(0) = 0, phi'(0) = 0, phi'' = q(1 - q) <= 1/4 (then Taylor: phi(lam) <= lam^2/8); the "
         "Chernoff exponent is smallest at lam = 4t, where it is -2nt^2; and at the bound's n the "
         "union bound is at most beta, one-sided with ln(|H|/beta), two-sided with ln(2|H|/beta)."),
    claims=[
        dp.identity(log_mgf(0, p), 0, where=[p <= 1], id="lemma_phi_at_0"),
        dp.identity(sympy.diff(log_mgf(lam, p), lam).subs(lam, 0), 0, where=[p <= 1], id="lemma_slope_at_0"),
        dp.identity(sympy.diff(log_mgf(lam, p), lam, 2), q * (1 - q), where=[p <= 1], id="lemma_curvature"),
        dp.inequality(q * (1 - q), Rational(1, 4), where=[p <= 1], id="lemma_curvature_at_most_quarter"),
        dp.inequality(chernoff_exponent(4 * t, t, n), chernoff_exponent(lam, t, n), id="chernoff_best_lambda"),
        dp.identity(chernoff_exponent(4 * t, t, n), -2 * n * t**2, id="chernoff_exponent"),
        dp.identity(log(H / beta), -log(beta / H), id="log_form_one_sided"),
        dp.identity(log(2 * H / beta), -log(beta / (2 * H)), id="log_form_two_sided"),
        dp.inequality(H * exp(-2 * n * alpha**2), beta,
                      where=[n >= -log(beta / H) / (2 * alpha**2), *PROPER], id="union_one_sided"),
        dp.inequality(2 * H * exp(-2 * n * alpha**2), beta,
                      where=[n >= -log(beta / (2 * H)) / (2 * alpha**2), *PROPER], id="union_two_sided"),
    ],
)
