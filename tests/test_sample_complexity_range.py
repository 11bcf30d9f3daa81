"""Sample-complexity claims state "for every n >= bound": the check covers every n from the bound's n up to
``up_to=`` (or as far as the work limit allows), refutes at any n of that range, and a verdict that holds
says which n it covers -- in the table, the JSON document, the reports and pytest's output -- never the
whole claim.  Reproducers of issue 21 item 4 (a majority vote with ties to 0 passes at n = 3 and fails at
n = 4, which was verified), mutants of bounds, and a property against brute force over sequences."""
from __future__ import annotations

import io
import itertools
import math
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console
from sympy import Rational, log

import dpverify as dp
from dpverify.checks import Workspace, check_point
from dpverify.checks.theorems import sample_complexity as sc
from dpverify.engine.datasets.multisets import multisets
from dpverify.options import Options
from dpverify.report import terminal
from dpverify.report.json_report import document
from dpverify.report.model import Settings
from dpverify.report.site import render
from dpverify.runner import check_paths, exit_code

q = dp.symbol("q", nonnegative=True)

# ----- the reproducer: a majority vote with ties to 0 ------------------------------------------------

VOTES = {1: Fraction(3, 5), 0: Fraction(2, 5)}
"""Labels: 1 with probability 3/5.  The vote outputs a label; its error is P[y != label]."""


def majority(data, q):
    """1 when more than half the sample says 1, else 0 (a tie goes to 0)."""
    return 1 if 2 * sum(1 for y in data if y == 1) > len(data) else 0


def vote_error(label):
    return sum(p for y, p in VOTES.items() if y != label)


def vote_failure(n: int) -> Fraction:
    """P[the vote outputs 0] = P[Bin(n, 3/5) <= n/2], exactly (0 errs 3/5 > alpha = 1/2; 1 errs 2/5)."""
    return sum((math.comb(n, k) * Fraction(3, 5) ** k * Fraction(2, 5) ** (n - k) for k in range(n + 1) if 2 * k <= n),
               Fraction(0))


def vote_spec(bound, beta=Fraction(36, 100), **kwargs) -> dp.Spec:
    return dp.spec(majority, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE), grid={q: [0]},
                   claims=[dp.sample_complexity(population=VOTES, error=vote_error, alpha=Fraction(1, 2), beta=beta,
                                                bound=bound, **kwargs)])


def test_a_failure_above_the_bound_s_n_is_refuted_with_its_n() -> None:
    """Issue 21 item 4: P = 0.352 <= 0.36 at n = 3, the bound's n, but 0.5248 at n = 4.  Was `verified`."""
    assert vote_failure(3) == Fraction(352, 1000) and vote_failure(4) == Fraction(5248, 10000)
    [result] = dp.check(vote_spec(3), proofs=False)
    assert result.status.value == "refuted", result.message
    assert result.witness.x == 4 and result.evidence.failing_n == 4 and result.evidence.n_bound == 3
    assert Fraction(result.witness.p) == Fraction(5248, 10000)
    assert "at n = 4" in result.message and "n = 3 holds" in result.message
    assert "confirmed at 100 digits" in result.message
    assert result.coverage is None  # a refutation is about the whole claim


def test_a_verdict_that_holds_covers_the_range_checked_and_says_so() -> None:
    [result] = dp.check(vote_spec(3, beta=Fraction(53, 100), up_to=40), proofs=False)
    assert result.status.value == "verified", result.message
    assert result.coverage == {"scope": "n range", "from": 3, "to": 40, "label": "n = 3..40",
                               "note": "checked for n = 3..40; not shown beyond (the claim states every n >= 3)"}
    assert "checked for n = 3..40; not shown beyond" in result.message and "up_to = 40" in result.message
    ev = result.evidence
    assert ev.checked_up_to == 40 and ev.range_end == "up_to" and ev.verified_n == list(range(3, 41))
    for n in range(3, 41):  # the curve is the exact failure probability at every n of the range
        assert abs(Fraction(ev.curve[str(n)]) - vote_failure(n)) < Fraction(1, 10 ** 35)
    assert "largest 0.5248" in result.message and "at n = 4" in result.message


def test_without_up_to_the_range_is_set_by_the_work_limit() -> None:
    spec = vote_spec(3, beta=Fraction(53, 100))
    claim, point = spec.claims[0], spec.points[0]
    ranges = {}
    for max_work in (10_000_000, 50_000_000, 200_000_000):
        result = check_point(spec, claim, point, Workspace(Options.validated(max_work=max_work)))
        assert result.status.value == "verified", result.message
        assert result.evidence.range_end == "work limit" and "give up_to= or raise --max-work" in result.message
        ranges[max_work] = last = result.coverage["to"]
        budget = max_work // sc.RANGE_SHARE  # the counted work beyond the bound's n: within the budget, one more n not
        spent = sum(10 * multisets((0, 1), n) + sc.PER_N for n in range(4, last + 1))
        assert spent <= budget < spent + 10 * multisets((0, 1), last + 1) + sc.PER_N
    assert ranges[10_000_000] < ranges[50_000_000] < ranges[200_000_000]


def test_a_range_too_large_for_the_work_limit_and_an_up_to_below_the_bound_are_errors() -> None:
    spec = vote_spec(3, up_to=10 ** 6)
    [result] = dp.check(spec, proofs=False)
    assert result.status.value == "error" and "--max-work" in result.message and "up_to" in result.message
    [result] = dp.check(vote_spec(5, up_to=4), proofs=False)
    assert result.status.value == "error" and "below the bound's n = 5" in result.message
    with pytest.raises(dp.SpecError, match="float"):
        dp.sample_complexity(population=VOTES, error=vote_error, alpha=Fraction(1, 2), beta=Fraction(1, 2), bound=3,
                             up_to=4.5)


def test_up_to_may_be_an_expression_of_the_parameters_rounded_down() -> None:
    n0 = dp.symbol("n0", positive=True)
    spec = dp.spec(majority, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                   grid={q: [0], n0: [Rational(15, 2)]},
                   claims=[dp.sample_complexity(population=VOTES, error=vote_error, alpha=Fraction(1, 2),
                                                beta=Fraction(53, 100), bound=n0 / 2, up_to=2 * n0 + log(2))])
    [result] = dp.check(spec, proofs=False)
    assert result.status.value == "verified", result.message
    assert (result.coverage["from"], result.coverage["to"]) == (4, 15)  # ceil(3.75), floor(15 + ln 2)


def test_range_multisets_is_the_sum_over_the_range() -> None:
    for records in ((0,), (0, 1), (0, 1, 2), (0, 1, 2, 3)):
        for first in range(1, 6):
            for last in range(first, 12):
                assert sc.range_multisets(records, first, last) == sum(multisets(records, n)
                                                                       for n in range(first, last + 1))


# ----- mutants: bounds too small are refuted somewhere in the range ------------------------------------

SMALLEST_VOTE = 11
"""Every n >= 11 has P <= 0.36 (odd n from 3 on do; even n from 12 on), and n = 10 does not."""


def test_the_smallest_n_of_the_vote_by_brute_force() -> None:
    fails = [n for n in range(1, 200) if vote_failure(n) > Fraction(36, 100)]
    assert max(fails) == SMALLEST_VOTE - 1 and 3 not in fails and 9 not in fails


@pytest.mark.parametrize("bound", range(1, SMALLEST_VOTE + 2))
def test_every_bound_below_the_smallest_n_is_refuted_at_the_first_failing_n(bound: int) -> None:
    """bound = 10 (one too small) fails at its own n; 3, 5, 7, 9 hold at the bound's n and fail one above it
    (all four were verified before the range was checked); 11 and 12 hold on the whole range."""
    [result] = dp.check(vote_spec(bound, up_to=60), proofs=False)
    first = next((n for n in range(bound, 61) if vote_failure(n) > Fraction(36, 100)), None)
    if first is None:
        assert bound >= SMALLEST_VOTE
        assert result.status.value == "verified" and result.coverage["label"] == f"n = {bound}..60", result.message
        return
    assert result.status.value == "refuted", result.message
    assert result.witness.x == first and Fraction(result.witness.p) == vote_failure(first)
    assert (first > bound) == (bound in (3, 5, 7, 9))


AGNOSTIC = {(0, 0): Fraction(1, 3), (1, 1): Fraction(1, 3), (2, 0): Fraction(1, 3)}
THRESHOLDS = (0, 1, 2, 3)
TRUTH = tuple(sum(p for (x, y), p in AGNOSTIC.items() if int(x >= t) != y) for t in THRESHOLDS)


def empirical_errors(data, q):
    return tuple(Fraction(sum(int(x >= t) != y for x, y in data), len(data)) for t in THRESHOLDS)


def largest_gap(errors):
    return max(d - e for d, e in zip(TRUTH, errors))


def gap_failure(n: int, alpha: Fraction) -> Fraction:
    """P[max_h (err_D - err_S) > alpha] over count vectors, exactly (independent of dpverify)."""
    total = Fraction(0)
    records = list(AGNOSTIC)
    for c0 in range(n + 1):
        for c1 in range(n + 1 - c0):
            counts = (c0, c1, n - c0 - c1)
            weight = Fraction(math.factorial(n), math.prod(math.factorial(c) for c in counts)) / 3 ** n
            data = [r for r, c in zip(records, counts) for _ in range(c)]
            if largest_gap(empirical_errors(data, 0)) > alpha:
                total += weight
    return total


def test_uniform_convergence_bounds_between_the_first_n_that_works_and_the_smallest_are_refuted() -> None:
    """spec/uniform_convergence.py, one-sided, alpha = 1/4, beta = 1/10: n = 11 is the first n that works,
    12 works too, 13 fails; from 14 on every n works.  Bounds 11..13 are refuted at n = 13 (11 and 12 only by
    the range: they were verified before), 14 is verified."""
    alpha, beta = Fraction(1, 4), Fraction(1, 10)
    exact = {n: gap_failure(n, alpha) for n in range(10, 31)}
    assert exact[10] > beta >= max(exact[11], exact[12]) and exact[13] > beta
    assert all(exact[n] <= beta for n in range(14, 31))
    for bound in (11, 12, 13, 14):
        spec = dp.spec(empirical_errors, universe=dp.universe(list(AGNOSTIC), n=1, neighbours=dp.REPLACE_ONE),
                       grid={q: [0]}, claims=[dp.sample_complexity(population=AGNOSTIC, error=largest_gap, alpha=alpha,
                                                                   beta=beta, bound=bound, up_to=30)])
        [result] = dp.check(spec, proofs=False)
        if bound == 14:
            assert result.status.value == "verified" and result.coverage["label"] == "n = 14..30", result.message
            assert result.evidence.smallest_n == 14
            continue
        first = next(n for n in range(bound, 31) if exact[n] > beta)
        assert result.status.value == "refuted", result.message
        assert result.witness.x == first == 13
        assert abs(Fraction(result.witness.p) - exact[first]) < Fraction(1, 10 ** 35)


# ----- the scope in every output ----------------------------------------------------------------------

SPEC = textwrap.dedent('''
    from fractions import Fraction
    import dpverify as dp

    q = dp.symbol("q", nonnegative=True)
    VOTES = {1: Fraction(3, 5), 0: Fraction(2, 5)}

    def majority(data, q):
        return 1 if 2 * sum(1 for y in data if y == 1) > len(data) else 0

    def vote_error(label):
        return sum(p for y, p in VOTES.items() if y != label)

    def claim(beta, id, **kwargs):
        return dp.sample_complexity(population=VOTES, error=vote_error, alpha=Fraction(1, 2), beta=beta, bound=3,
                                    id=id, **kwargs)

    votes = dp.spec(majority, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE), grid={q: [0]},
                    claims=[claim(Fraction(53, 100), "loose", up_to=40),
                            claim(Fraction(36, 100), "tight", up_to=40, expect="refuted")])
''')


@pytest.fixture(scope="module")
def votes_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("votes") / "votes.py"
    path.write_text(SPEC)
    return path


def test_the_table_json_and_reports_show_the_range(votes_file: Path) -> None:
    report = check_paths([str(votes_file)], Options(proofs=False))
    out = io.StringIO()
    terminal.render(report, Console(file=out, width=200))
    text = out.getvalue()
    assert "verified [n = 3..40]" in text and text.count("[n = 3..40]") == 1  # the refuted row has no range
    assert "covers those n only" in text
    doc = document(report)
    points = {c["id"]: c["points"][0] for c in doc["specs"][0]["claims"]}
    assert points["loose"]["coverage"]["label"] == "n = 3..40" and points["loose"]["coverage"]["to"] == 40
    assert points["tight"]["coverage"] is None and points["tight"]["witness"]["x"] == 4
    assert points["loose"]["figures"]["checked_up_to"] == 40
    files = render(report, Settings(precision=50, proofs=False), exit_code(report))
    md, page = files["votes.majority.md"], files["votes.majority.html"]
    assert "### loose (sample\\_complexity): **verified** \\[n = 3..40\\]" in md
    assert "| 3 | 3..40 |" in md  # the bound's n, its smallest n that works, the n checked
    assert '<span class="scope">[n = 3..40]</span>' in page
    assert "\\[n = 3..40\\]" in files["index.md"]


def test_pytest_shows_the_range_of_a_verdict(votes_file: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v", str(votes_file)],
                         capture_output=True, text=True, cwd=votes_file.parent, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "VERIFIED [n = 3..40]" in run.stdout and " XFAIL" in run.stdout and "refuted (as expected)" in run.stdout
    assert "verified [n = 3..40]" in run.stdout  # the "dpverify verdicts" summary


# ----- a property against brute force over sequences ---------------------------------------------------

RECORD_POOL = [(0, 0), (1, 0), (1, 1), (2, 1), (2, 0)]


def erm(data, q):
    """The threshold of least empirical error (the smallest on ties)."""
    return min(THRESHOLDS, key=lambda t: (sum(int(x >= t) != y for x, y in data), t))


def vote_of_labels(data, q):
    """Majority of the labels, ties to 0, as a constant hypothesis: t = 0 labels 1, t = 3 labels 0."""
    return 0 if 2 * sum(y for _, y in data) > len(data) else 3


def noisy_vote(data, q):
    """The vote, flipped with probability q (a draw: read by the general interval reading)."""
    t = vote_of_labels(data, q)
    return (3 - t) if dp.bernoulli(q) else t


LEARNERS = {"erm": erm, "vote": vote_of_labels, "noisy_vote": noisy_vote}


def law(name: str, data: tuple, flip: Fraction) -> dict[int, Fraction]:
    """The learner's output law on a sequence, by hand."""
    if name == "erm":
        return {erm(data, flip): Fraction(1)}
    t = vote_of_labels(data, flip)
    if name == "vote":
        return {t: Fraction(1)}
    out = {t: 1 - flip}
    out[3 - t] = out.get(3 - t, Fraction(0)) + flip
    return out


def by_sequences(population: dict, name: str, flip: Fraction, n: int, alpha: Fraction) -> Fraction:
    """P[error > alpha] summed over every n-sequence of records (no multisets), exactly."""
    def error(t):
        return sum(p for (x, y), p in population.items() if int(x >= t) != y)
    total = Fraction(0)
    for sample in itertools.product(list(population), repeat=n):
        weight = math.prod(population[r] for r in sample)
        total += weight * sum(p for t, p in law(name, sample, flip).items() if error(t) > alpha)
    return total


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(RECORD_POOL), min_size=1, max_size=3, unique=True).flatmap(
    lambda recs: st.tuples(st.just(recs), st.lists(st.integers(1, 4), min_size=len(recs), max_size=len(recs)),
                           st.sampled_from(sorted(LEARNERS)), st.sampled_from([Fraction(0), Fraction(1, 5)]),
                           st.sampled_from([Fraction(1, 5), Fraction(1, 3), Fraction(1, 2)]),
                           st.sampled_from([Fraction(1, 10), Fraction(1, 4), Fraction(2, 5), Fraction(3, 5)]),
                           st.integers(1, 4), st.integers(0, 3))))
def test_every_n_of_the_range_against_brute_force_over_sequences(case) -> None:
    records, raw, name, flip, alpha, beta, bound, extra = case
    population = {r: Fraction(w, sum(raw)) for r, w in zip(records, raw)}
    up_to = bound + extra

    def error(t):
        return sum(p for (x, y), p in population.items() if int(x >= t) != y)
    spec = dp.spec(LEARNERS[name], universe=dp.universe(list(population), n=1, neighbours=dp.REPLACE_ONE),
                   grid={q: [flip]}, claims=[dp.sample_complexity(population=population, error=error, alpha=alpha,
                                                                  beta=beta, bound=bound, up_to=up_to)])
    [result] = dp.check(spec, proofs=False)
    exact = {n: by_sequences(population, name, flip, n, alpha) for n in range(bound, up_to + 1)}
    first = next((n for n in exact if exact[n] > beta), None)
    tie = next((n for n in exact if exact[n] == beta), None)  # P = beta exactly: an enclosure cannot show <=
    if tie is not None and (first is None or tie < first):
        assert result.status.value in ("unknown", "verified"), result.message
        return
    seen = result.evidence.curve
    for n in range(bound, (first or up_to) + 1):
        assert abs(Fraction(seen[str(n)]) - exact[n]) <= Fraction(1, 10 ** 30) * max(exact[n], Fraction(1)), n
    if first is not None:
        assert result.status.value == "refuted", result.message
        assert result.witness.x == first and abs(Fraction(result.witness.p) - exact[first]) < Fraction(1, 10 ** 30)
    else:
        assert result.status.value == "verified", result.message
        assert (result.coverage["from"], result.coverage["to"]) == (bound, up_to)
        assert result.coverage["label"] == (f"n = {bound}..{up_to}" if up_to > bound else f"n = {bound}")


# ----- the order of the sample (review findings A and B) ---------------------------------------------------
# The failure probability is summed over multisets, each read in one order: exact only when the learner's law
# on a sequence depends on its multiset alone.  That is checked (every multiset read is run in other orderings
# and the laws compared exactly); a learner whose laws differ is summed over sequences instead.

from dpverify.engine.datasets import multisets as ms  # noqa: E402
from dpverify.engine.program.backend import IntervalBackend  # noqa: E402

COIN = {0: Fraction(1, 2), 1: Fraction(1, 2)}


def one_is_bad(h):
    return Fraction(1) if h == 1 else Fraction(0)


def coin_spec(learner, beta, bound=3, up_to=6, population=COIN, error=one_is_bad, grid=None) -> dp.Spec:
    return dp.spec(learner, name=learner.__name__, grid=grid or {},
                   universe=dp.universe(list(population), n=1, neighbours=dp.REPLACE_ONE),
                   claims=[dp.sample_complexity(population=population, error=error, alpha=Fraction(1, 2), beta=beta,
                                                bound=bound, up_to=up_to)])


def first_record(data):
    return data[0]


def test_a_learner_that_reads_its_first_record_is_refuted_over_sequences() -> None:
    """Finding A: each multiset was read sorted, so data[0] was its smallest record: `verified [n = 3..6]` with
    P = 0.125, where P[data[0] = 1] = 1/2 > 1/4 at every n."""
    [result] = dp.check(coin_spec(first_record, Fraction(1, 4)), proofs=False)
    assert result.status.value == "refuted", result.message
    assert result.witness.x == 3 and Fraction(result.witness.p) == Fraction(1, 2)
    assert "first_record depends on the order of its sample" in result.message
    assert "exact over 8 sequences" in result.message and result.coverage is None


def late_first_record(data):
    """The smallest record up to n = 6 (order-free), the first one from n = 7 on."""
    return data[0] if len(data) >= 7 else min(data)


def test_an_order_dependence_that_shows_only_at_a_larger_n_is_found_there(monkeypatch) -> None:
    """n = 3..6 are order-free and hold (P = 2^-n), n = 7 depends on the order (P = 1/2 > 1/4); every ordering
    is run up to n = 4 here, three per multiset beyond, which find it."""
    monkeypatch.setattr(ms, "EVERY_ORDERING_UP_TO", 16)
    [result] = dp.check(coin_spec(late_first_record, Fraction(1, 4), up_to=9), proofs=False)
    assert result.status.value == "refuted", result.message
    assert result.witness.x == 7 and Fraction(result.witness.p) == Fraction(1, 2)
    assert "n = 3..6 hold" in result.message and "(n = 7)" in result.message


def test_at_the_default_budget_an_order_dependence_beyond_every_ordering_is_found() -> None:
    """2^13 sequences > EVERY_ORDERING_UP_TO: n = 13 is checked on a few orderings per multiset, reversed first."""
    assert 2 ** 12 <= ms.EVERY_ORDERING_UP_TO < 2 ** 13

    def first_from_13(data):
        return data[0] if len(data) >= 13 else min(data)
    mutant = coin_spec(first_from_13, Fraction(1, 4), bound=12, up_to=13)
    found = pytest.raises(ms.OrderDependent, sc.FailureProbability(mutant, mutant.claims[0], {}, Rational(1, 2), 30,
                                                                   order_log={}).at, 13)
    assert found.value.n == 13 and found.value.decided


def iterating_majority(data):
    """Order-free, but walks its sample record by record."""
    ones = 0
    for record in data:
        ones += record
    return 1 if 2 * ones > len(data) else 0


def test_an_order_free_learner_that_iterates_its_sample_still_verifies() -> None:
    """P[majority says 1] = P[Bin(n, 1/2) > n/2] <= 1/2; every ordering is run up to n = 12, three orderings per
    multiset at n = 13, 14 (and the verdict says so)."""
    [result] = dp.check(coin_spec(iterating_majority, Fraction(1, 2), up_to=14), proofs=False)
    assert result.status.value == "verified", result.message
    assert result.coverage["label"] == "n = 3..14"
    assert ("assumed: the learner ignores the order of its sample (checked on every ordering for n <= 12, on 3 "
            "orderings per multiset beyond") in result.message
    [small] = dp.check(coin_spec(iterating_majority, Fraction(1, 2), up_to=8), proofs=False)
    assert small.status.value == "verified", small.message
    assert "ignores the order of its sample: shown, every ordering of every multiset was run" in small.message


def chooses_a_record(data, eps):
    """The exponential mechanism over the sample's records as they come (duplicates and all), scored by the
    record plus data[0]: the candidates' order and the scores' shift depend on the order, the law does not."""
    return dp.exponential(tuple(data), lambda c: Fraction(c) + data[0], eps, sensitivity=1)


def test_laws_equal_under_reordered_candidates_and_shifted_scores_are_equal() -> None:
    eps_ = dp.symbol("eps", positive=True)
    three = {0: Fraction(1, 3), 1: Fraction(1, 3), 2: Fraction(1, 3)}
    spec = coin_spec(chooses_a_record, Fraction(9, 10), bound=2, up_to=9, population=three,
                     error=lambda h: Fraction(h, 2), grid={eps_: [1]})
    [result] = dp.check(spec, proofs=False)
    assert result.status.value == "verified", result.message
    base = capture_law(chooses_a_record, (0, 1, 1, 2))
    assert ms.fast_difference(*base, *capture_law(chooses_a_record, (1, 2, 0, 1))) is False
    assert ms.fast_difference(*base, *capture_law(chooses_a_record, (0, 1, 2, 2))) not in (False, None)


def capture_law(program, data):
    from dpverify.engine.program.fastlaw import capture
    return capture(lambda: program(ms.Sample(data), eps=Fraction(1)), IntervalBackend(30))


def test_fast_difference_decides_equal_laws_written_differently() -> None:
    """Duplicated candidates: {a, a, b, b} at exponents (0, 0, -1, -1) is the law of {a, b} at (0, -1)."""
    def doubled(data, eps):
        return dp.exponential(("a", "a", "b", "b") if data[0] else ("a", "b"), lambda c: 0 if c == "a" else -1, eps,
                              sensitivity=Fraction(1, 2))
    assert ms.fast_difference(*capture_law(doubled, (1,)), *capture_law(doubled, (0,))) is False


def noisy_first(data):
    """A coin whose bias is set by the first record: P[1] = 1/4 or 3/4 (the general reading; 1/2 over sequences)."""
    return int(dp.bernoulli(Fraction(1, 4) + Fraction(data[0], 2)))


def noisy_count(data):
    """A coin whose bias is set by the sample's count of ones (order-free)."""
    return int(dp.bernoulli(Fraction(1, 4) + Fraction(sum(data), 2 * len(data))))


def test_the_general_reading_compares_orderings_exactly_too() -> None:
    """Sorted, data[0] = 0 unless every record is 1: P = 1/4 + 2^-(n+1) <= 3/8 was shown; the truth is 1/2."""
    [result] = dp.check(coin_spec(noisy_first, Fraction(3, 8), up_to=5), proofs=False)
    assert result.status.value == "refuted", result.message
    assert Fraction(result.witness.p) == Fraction(1, 2) and "depends on the order" in result.message
    [fine] = dp.check(coin_spec(noisy_count, Fraction(5, 8), up_to=5), proofs=False)
    assert fine.status.value == "verified", fine.message


def test_sequences_beyond_the_work_limit_give_unknown_never_verified() -> None:
    spec = coin_spec(first_record, Fraction(3, 4), bound=3, up_to=12)
    [result] = dp.check(spec, proofs=False)
    assert result.status.value == "verified"  # P = 1/2 <= 3/4 at every n, summed over all 2^3 + ... + 2^12
    assert "exact over every sequence" in result.message
    ws = Workspace(Options(max_work=1_000_000, proofs=False))  # 2,000 sequences in all
    small = check_point(spec, spec.claims[0], {}, ws)
    assert small.status.value == "unknown", small.message
    assert "beyond the work limit" in small.message and "depends on the order of its sample" in small.message


def signed_zero(data):
    return -0.0 if sum(data) % 2 else 0.0


def negative(h):
    return 1 if math.copysign(1.0, h) < 0 else 0


def not_a_number(data):
    return float("nan") if sum(data) % 2 else 0.0


def test_outputs_equal_but_distinguishable_are_told_apart_or_refused_at_the_learner() -> None:
    """Finding B: the cache of error(output) > alpha was keyed by ==, so -0.0 took 0.0's error: verified with
    P = 0 where the truth is 1/2.  The cache is keyed by type and text: P = 1/2 is found; the confirmation by
    the general reading refuses such outputs (as every reading of a mechanism does), and a NaN is refused,
    naming the learner's file and line."""
    [held] = dp.check(coin_spec(signed_zero, Fraction(3, 4), error=negative), proofs=False)
    assert held.status.value == "verified", held.message
    assert all(Fraction(p) == Fraction(1, 2) for p in held.evidence.curve.values())
    for learner in (signed_zero, not_a_number):
        [result] = dp.check(coin_spec(learner, Fraction(1, 4), error=negative), proofs=False)
        assert result.status.value == "error", result.message
        first = learner.__code__.co_firstlineno
        assert any(f"{__file__}:{line}:" in result.message for line in (first, first + 1)), result.message
    assert "0.0 (float) and -0.0 (float)" in dp.check(coin_spec(signed_zero, Fraction(1, 4), error=negative),
                                                      proofs=False)[0].message


def test_the_error_cache_is_keyed_by_type_and_text() -> None:
    spec = coin_spec(first_record, Fraction(1, 4), error=negative)
    failure = sc.FailureProbability(spec, spec.claims[0], {}, Rational(1, 2), 30)
    assert failure._is_bad(0.0) is False and failure._is_bad(-0.0) is True
    kinds = coin_spec(first_record, Fraction(1, 4), error=lambda h: Fraction(type(h) is bool))
    failure = sc.FailureProbability(kinds, kinds.claims[0], {}, Rational(1, 2), 30)
    assert failure._is_bad(1) is False and failure._is_bad(True) is True
    with pytest.raises(dp.SpecError, match="not equal to itself"):
        failure._is_bad(float("nan"))


def test_an_order_dependent_learner_cannot_take_the_counts_form() -> None:
    """The counts form is traced on a sealed sample (no record can be read), but identity is left: this learner
    doubles eps when its first and last records are the same object and the first two are not, which no sealed
    sample and no sample in population order shows.  The form's probes in other orders refuse it."""
    from dpverify.engine.datasets import counts as by_counts
    points = {(x, int(x >= 2)): Fraction(1, 4) for x in (0, 1, 2, 3)}
    wrong = dp.mean(lambda rec, t: int(int(rec[0] >= t) != rec[1]), domain=list(points))

    def plain(data, eps):
        return dp.exponential((0, 1, 2, 3, 4), (-wrong).on(data), eps, neighbours=dp.REPLACE_ONE)

    def sneaky(data, eps):
        wide = len(data) > 2 and data[0] is data[-1] and data[0] is not data[1]
        return dp.exponential((0, 1, 2, 3, 4), (-wrong).on(data), eps * (2 if wide else 1), neighbours=dp.REPLACE_ONE)

    def form(program):
        return ms.MultisetSum(program, {"eps": Rational(1)}, tuple(points.items()), lambda t: t != 2, 30).form(5)
    assert form(plain) is not None
    assert form(sneaky) is None
    records = tuple(points)
    assert not by_counts._agrees(form(plain), sneaky, {"eps": Rational(1)}, records, IntervalBackend(30))
