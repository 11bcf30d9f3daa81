"""Adversarial reproducers against grouping identical laws by an exact description (commit bfa604f:
:func:`dpverify.engine.program.reading.all_distributions`, :meth:`.enumerate.Runner.distribution`'s
``law_key``, :func:`.enumerate.branch_token`).

Two kinds of checks:

* ``test_grouped_laws_match_ungrouped``: programs built to make the description coarser than the law
  (scores or weights 10^-40 apart or equal as floats but not exactly, -0.0 and 0.0, 1 / 1.0 / True /
  Fraction(1) as eps or weights, outputs depending on the data after the draws, clamps depending on
  the data, subsets): every dataset's grouped law must have the outputs (with their types) and the
  weights of its own ungrouped law, and two datasets share a law only when their ungrouped laws agree.
  All pass: no wrong grouping found.
* ``test_cache_aliasing_not_trusted``: the session cache keys exponential candidates and randomized
  response values by ``==``, so a dataset whose candidates are (True, False) gets the branch list
  cached for (1, 0) and returns 1 where the program returns True.  The output's type reveals the
  record (dpverify refuses outputs that Python merges although they can be told apart, as the
  categorical control shows), yet the claim comes out ``proved`` with achieved epsilon 0.  This is
  in the cache (dpverify/engine/program/primitives.py), with or without grouping and on the commit
  before bfa604f too; the grouping's identity token inherits it ("the same list" is trusted to mean
  "the same arguments").  Likewise candidates of a user's class equal under a coarse ``==`` (a field
  that ``==`` leaves out, which dpverify does read), and scores of an int subclass whose ``==`` always
  holds (the cache key keeps int and Fraction scores as they are, compared by their own ``==``): a
  score gap of 50 is ``proved`` 1-DP.  Fixed: the cache now keys every argument by exact type and
  value and computes afresh what has no exact key (``_exact`` in primitives.py); each reproducer has
  a control (uncached primitive or plain scores) getting the same verdict.
The spec files are in /tmp/attack_lg/ of the session that wrote them.
"""
from __future__ import annotations

import importlib.util
import itertools
from fractions import Fraction

import pytest
import sympy

import dpverify as dp
from dpverify.engine.program.enumerate import _typed
from dpverify.engine.program.reading import all_distributions

_COUNTER = itertools.count()

# -- the type of the output reveals the record, hidden by the session cache ---------------------------

SOURCES: dict[str, str] = {}
SOURCES["exponential_candidates_typed"] = r'''
import dpverify as dp

eps = dp.symbol("eps", positive=True)


def mech(data, eps):
    cands = (1, 0) if data[0] == 0 else (True, False)
    return dp.exponential(cands, lambda c: 0, eps, sensitivity=1)


spec = dp.spec(mech, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
               grid={eps: [1]}, claims=[dp.private(eps)])
'''
SOURCES["rr_values_typed"] = r'''
import dpverify as dp

eps = dp.symbol("eps", positive=True)


def mech(data, eps):
    values = (0, 1) if data[0] == 0 else (False, True)
    return dp.randomized_response(values[0], eps, values=values)


spec = dp.spec(mech, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
               grid={eps: [1]}, claims=[dp.private(eps)])
'''
SOURCES["categorical_typed_control"] = r'''
import dpverify as dp

eps = dp.symbol("eps", positive=True)


def mech(data, eps):
    cands = (1, 0) if data[0] == 0 else (True, False)
    return dp.categorical({cands[0]: 0.5, cands[1]: 0.5})


spec = dp.spec(mech, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
               grid={eps: [1]}, claims=[dp.private(eps)])
'''

SOURCES["exponential_candidates_hidden_field"] = r"""
import dataclasses

import dpverify as dp

eps = dp.symbol("eps", positive=True)


@dataclasses.dataclass(frozen=True)
class Label:
    v: int
    tag: int = dataclasses.field(compare=False, repr=False)


def mech(data, eps):
    cands = (Label(0, data[0]), Label(1, data[0]))
    return dp.exponential(cands, lambda c: c.v, eps, sensitivity=1)


spec = dp.spec(mech, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
               grid={eps: [1]}, claims=[dp.private(eps)])
"""
SOURCES["uniform_hidden_field_control"] = SOURCES["exponential_candidates_hidden_field"].replace(
    "dp.exponential(cands, lambda c: c.v, eps, sensitivity=1)", "dp.uniform(cands)")
SOURCES["exponential_scores_int_subclass"] = r"""
import dpverify as dp

eps = dp.symbol("eps", positive=True)


class Score(int):
    def __eq__(self, other):
        return True

    def __hash__(self):
        return 0


def mech(data, eps):
    return dp.exponential((0, 1), lambda c: Score(50 * c * data[0]), eps, sensitivity=1)


spec = dp.spec(mech, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
               grid={eps: [1]}, claims=[dp.private(eps)])
"""
SOURCES["exponential_scores_plain_control"] = SOURCES["exponential_scores_int_subclass"].replace(
    "Score(50 * c * data[0])", "50 * c * data[0]")

OPEN = {  # the findings (fixed; the reasons say what went wrong)
    "exponential_candidates_typed": "session cache keys exponential candidates by ==: (True, False) gets the "
                                    "list cached for (1, 0); the type-revealing mechanism is 'proved'",
    "rr_values_typed": "session cache keys randomized_response values by ==: (False, True) gets the list "
                       "cached for (0, 1); the type-revealing mechanism is 'proved'",
    "exponential_candidates_hidden_field": "session cache keys candidates by ==: a field left out of == "
                                           "(which dpverify reads) comes from dataset 0's objects; 'proved'",
    "exponential_scores_int_subclass": "session cache keys int/Fraction scores by their own ==: an int "
                                       "subclass equal to everything gets dataset 0's list; a loss of 50 "
                                       "is 'proved' private at eps = 1",
}


def _load(tmp_path, name: str):
    path = tmp_path / f"attack_lg_{name}.py"
    path.write_text(SOURCES[name])
    spec = importlib.util.spec_from_file_location(f"attack_lg_{name}_{next(_COUNTER)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", list(OPEN) + ["categorical_typed_control", "uniform_hidden_field_control",
                                                 "exponential_scores_plain_control"])
def test_cache_aliasing_not_trusted(tmp_path, name):
    """Each mechanism tells the record apart (by an output's type or hidden field, or by a score gap of
    50): never proved/verified; the correct verdict is the refusal (outputs Python merges though they
    differ) or the refutation its uncached control gets."""
    statuses = [r.status.value for r in dp.check(_load(tmp_path, name).spec, proofs=False)]
    assert statuses and all(s in ("error", "refuted") for s in statuses), statuses


# -- grouped laws against ungrouped ones ------------------------------------------------------------

TINY = Fraction(1, 10 ** 40)


def em_tiny(data, eps):
    """Scores 10^-40 apart on datasets that differ only there."""
    return dp.exponential((0, 1), lambda c: c * (1 + TINY * data[0]), eps, sensitivity=1)


def em_float_vs_exact(data, eps):
    """An exact float (0.5), Fraction(1, 2), sympy 1/2 and 1/2 + 10^-40 (inexact floats are refused)."""
    score = (0.5, Fraction(1, 2), sympy.Rational(1, 2), Fraction(1, 2) + TINY)[data[0]]
    return dp.exponential((0, 1), lambda c: c * score, eps, sensitivity=1)


def em_signed_zero(data, eps):
    score = (0.0, -0.0, 0, -TINY)[data[0]]
    return dp.exponential((0, 1), lambda c: score if c else 1, eps, sensitivity=1)


def em_eps_kinds(data, eps):
    """eps as 1, Fraction(1), sympy 1, 1 + 10^-40: the last one is another law."""
    e = (1, Fraction(1), sympy.Integer(1), 1 + TINY)[data[0]]
    return dp.exponential((0, 1), lambda c: c, e, sensitivity=1)


def em_sensitivity_kinds(data, eps):
    s = (1, Fraction(1), sympy.Rational(2, 2), 1 - TINY)[data[0]]
    return dp.exponential((0, 1), lambda c: c, eps, sensitivity=s)


def em_order(data, eps):
    """Equal score multisets, candidates in another order: another law of the outputs."""
    cands = ((0, 1), (1, 0), (0, 1), (1, 0))[data[0]]
    return dp.exponential(cands, lambda c: c if data[0] % 2 == 0 else 1 - c, eps, sensitivity=1)


def post_draw_data(data, eps):
    """The output depends on the data after the draw, not through a primitive."""
    x = dp.randomized_response(0, eps)
    return (x + data[0], len(data)) if data[0] else (x, len(data))


def branch_between(data, eps):
    """Branches on the data between draws that do not change the primitives' arguments."""
    x = dp.randomized_response(0, eps)
    if data[0] > 1:
        y = dp.randomized_response(1, eps)
    else:
        y = dp.randomized_response(1, eps)
    return (x, y) if data[0] != 2 else (y, x)


def categorical_weights(data, eps):
    w = ((Fraction(1, 3), Fraction(2, 3)), (Fraction(1, 3), Fraction(2, 3) - TINY),
         (Fraction(1, 3) + TINY, Fraction(2, 3) - TINY), (0.25, 0.75))[data[0]]
    if data[0] == 1:  # weights that do not sum to 1 are refused: keep the sum exact
        w = (Fraction(1, 3) + TINY, Fraction(2, 3) - TINY)
    return dp.categorical({"a": w[0], "b": w[1]})


def categorical_value_kinds(data, eps):
    v = (1, 1.0, Fraction(1), "1")[data[0]]
    return dp.categorical({v: Fraction(1, 2), None: Fraction(1, 2)}) == v


def geometric_bounds(data, eps):
    lo, hi = ((0, 2), (0, 3), (-1, 2), (0, 2))[data[0]]
    return dp.geometric(1, 2, lower=lo, upper=hi)


def geometric_base(data, eps):
    a = (2, Fraction(2), 2 + TINY, sympy.Integer(2))[data[0]]
    return dp.geometric(0, a, lower=-2, upper=2)


def subset_data(data, eps):
    pool = ((1, 2, 2), (2, 1, 2), (2, 2, 1), (1, 2, 3))[data[0]]
    return dp.subset(pool, 2)


def composed(data, eps):
    a = dp.randomized_response(data[0] % 2, eps)
    b = dp.exponential((0, 1), lambda c: c * (data[0] // 2), eps, sensitivity=1)
    return a + b


PROGRAMS = [em_tiny, em_float_vs_exact, em_signed_zero, em_eps_kinds, em_sensitivity_kinds, em_order,
            post_draw_data, branch_between, categorical_weights, categorical_value_kinds, geometric_bounds,
            geometric_base, subset_data, composed]


def _same_law(p: dict, q: dict) -> bool:
    """The same outputs (with their types) and overlapping weight enclosures."""
    if {(_typed(o)) for o in p} != {(_typed(o)) for o in q}:
        return False
    for output, w in p.items():
        v = q[output]
        if not (w.a <= v.b and v.a <= w.b):
            return False
    return True


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda f: f.__name__)
def test_grouped_laws_match_ungrouped(program):
    datasets = [(k,) for k in range(4)]
    params = {"eps": sympy.Integer(1)}
    grouped = all_distributions(program, datasets, params, 50, group=True)
    plain = all_distributions(program, datasets, params, 50, group=False)
    own = [plain.laws[plain.law_of[i]] for i in range(len(datasets))]
    for i in range(len(datasets)):
        assert _same_law(grouped.laws[grouped.law_of[i]], own[i]), (program.__name__, i)
    for i, j in itertools.combinations(range(len(datasets)), 2):
        if grouped.law_of[i] == grouped.law_of[j]:
            assert _same_law(own[i], own[j]), (program.__name__, i, j)
            # merged laws are exactly equal: the ungrouped enclosures are the same intervals
            assert {o: (w.a, w.b) for o, w in own[i].items()} == {o: (w.a, w.b) for o, w in own[j].items()}
