"""Answering statistical queries with Laplace noise, the private SQ learner's core (catalogue 7).

M statistical queries; query i is the average of a [0, 1]-valued predicate
phi_i over its own disjoint chunk of m records (records i*m .. i*m + m - 1),
and its answer is released with Laplace noise of scale M/(m*alpha).  Source:
the standard simulation of statistical-query learners under differential
privacy (Blum, Dwork, McSherry and Nissim, "Practical privacy: the SuLQ
framework", PODS 2005; Kasiviswanathan et al., "What can we learn
privately?", FOCS 2008): an average over m records has sensitivity 1/m (see
``laplace.py``), so each answer is ((1/m)/(M/(m alpha))) = (alpha/M)-DP, and
the M answers together are alpha-DP by sequential composition.

Claims, on 4 records over the domain {0, 1, 2} (M = 2 queries, m = 2 records
each; phi_1(x) = [x >= 1], phi_2(x) = [x = 2]), replace-one neighbours:

* ``each_answer`` -- one answer alone is (alpha/M)-DP (tight: achieved alpha/M);
* ``all_answers`` -- the M answers together are alpha-DP.  The chunks are
  disjoint, so one replaced record moves one answer only: the achieved level is
  alpha/M (parallel composition), and the report shows the slack of the
  sequential-composition bound;
* mutants, expected refuted: the scale without the factor M (1/(m alpha))
  claimed (alpha/M)-DP per answer, and the scale with alpha^2 for alpha (a
  swapped alpha and alpha^2) claimed alpha/M-DP for alpha > 1.

Both released answers are Laplace values, so the privacy loss comes from the
densities: sup_v ln(p_X(v)/p_X'(v)) = |q(X) - q(X')|/b derived exactly for
every pair, and proved for every alpha with sympy.
"""
from fractions import Fraction

import dpverify as dp

alpha = dp.symbol("alpha", positive=True)

M, CHUNK = 2, 2
PREDICATES = (lambda x: int(x >= 1), lambda x: int(x == 2))


def average(data, i):
    """phi_i averaged over chunk i (an exact Fraction)."""
    chunk = data[i * CHUNK:(i + 1) * CHUNK]
    return Fraction(sum(PREDICATES[i](x) for x in chunk), CHUNK)


def answers(data, alpha):
    """All M answers, each with Laplace noise of scale M/(m alpha)."""
    return tuple(dp.laplace(average(data, i), Fraction(M, CHUNK) / alpha) for i in range(M))


def first_answer(data, alpha):
    """The first answer alone (each answer is the same mechanism on its chunk)."""
    return dp.laplace(average(data, 0), Fraction(M, CHUNK) / alpha)


def first_answer_without_m(data, alpha):
    """Mutant: the scale 1/(m alpha) forgets the number of queries M."""
    return dp.laplace(average(data, 0), Fraction(1, CHUNK) / alpha)


def first_answer_alpha_squared(data, alpha):
    """Mutant: alpha^2 where alpha belongs (less noise when alpha > 1)."""
    return dp.laplace(average(data, 0), Fraction(M, CHUNK) / alpha ** 2)


UNIVERSE = dp.universe([0, 1, 2], n=M * CHUNK, neighbours=dp.REPLACE_ONE)

each_answer = dp.spec(
    first_answer, name="sq_each_answer", universe=UNIVERSE, grid={alpha: [Fraction(1, 2), 2]},
    doc="One statistical-query answer with Laplace noise of scale M/(m alpha) is (alpha/M)-DP.",
    claims=[dp.private(alpha / M, id="each_answer")],
)

all_answers = dp.spec(
    answers, name="sq_all_answers", universe=UNIVERSE, grid={alpha: [Fraction(1, 2), 2]},
    doc="The M answers together are alpha-DP (sequential composition; achieved alpha/M as the chunks are disjoint).",
    claims=[dp.private(alpha, id="all_answers"), dp.private(alpha / M, id="parallel_composition")],
)

without_m = dp.spec(
    first_answer_without_m, name="sq_scale_without_m", universe=UNIVERSE, grid={alpha: [Fraction(1, 2), 2]},
    doc="Mutant: scale 1/(m alpha) claimed (alpha/M)-DP per answer; it is only alpha-DP.",
    claims=[dp.private(alpha / M, id="each_answer", expect="refuted"), dp.private(alpha, id="true_level")],
)

alpha_squared = dp.spec(
    first_answer_alpha_squared, name="sq_alpha_squared", universe=UNIVERSE, grid={alpha: [2]},
    doc="Mutant: scale M/(m alpha^2) claimed (alpha/M)-DP; at alpha = 2 it is (alpha^2/M)-DP.",
    claims=[dp.private(alpha / M, id="each_answer", expect="refuted")],
)
