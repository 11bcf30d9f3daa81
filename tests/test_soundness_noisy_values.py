"""Hostile and hurried uses of noisy values (issue 21, finding 1 and the held-back handle paths).

* A noisy value compared with itself: ``x >= x`` holds, ``x > x`` does not; report noisy max written the
  textbook way (the first i whose value is >= every value, i itself included) has the law of the
  skip-self version.  It used to be read as "always -1": ``private(eps/4)`` verified, true facts refuted.
* What spec code can do with a noisy value's handle -- its text, hash, type, attributes, id() -- is
  refused with the spec's file and line: the handle is not a sample, so answering would read another
  program (``str(x)`` shows the centre, the data).
* Noise arithmetic that cancels: ``(x + y) - y`` is x, ``x - x`` is the constant 0.
* Process identity (``os.getpid()``) differs between the processes that read a law: refused.

The achieved epsilon of report noisy max is checked against an independent mpmath quadrature.
"""
from __future__ import annotations

import json
import os
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import dpverify as dp
from dpverify.errors import SpecError

eps = dp.symbol("eps", positive=True)
TWO = dp.answers([0, 1], 2, neighbours=dp.linf_one)
BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)


def results(spec: dp.Spec) -> list:
    return dp.check(spec)


def statuses(spec: dp.Spec) -> list[str]:
    return [r.status.value for r in results(spec)]


# -- report noisy max with the index itself among the compared ----------------------------------------

def rnm_textbook(q, eps):
    """The first i with v_i >= v_j for every j, j = i included (ties among distinct values: null)."""
    v = [dp.laplace(q[i], 2 / eps) for i in range(len(q))]
    for i in range(len(v)):
        if all(v[i] >= v[j] for j in range(len(v))):
            return i
    return -1


def rnm_skip_self(q, eps):
    v = [dp.laplace(q[i], 2 / eps) for i in range(len(q))]
    for i in range(len(v)):
        if all(v[i] > v[j] for j in range(len(v)) if j != i):
            return i
    return -1


def _reference_level(e: Fraction) -> mpmath.mpf:
    """The achieved eps of two-answer noisy max with Lap(2/e) over linf-one neighbours on {0, 1}^2, by
    quadrature: P(index 0 | q) = P(L_0 - L_1 > q_1 - q_0) = g(q_0 - q_1), and the worst pair moves the gap
    from 1 to -1 (q = (1, 0) against (0, 1))."""
    with mpmath.workdps(40):
        b = 2 / mpmath.mpf(e.numerator) * e.denominator

        def density(x):
            return mpmath.exp(-abs(x) / b) / (2 * b)

        def cdf(x):
            return 1 - mpmath.exp(-x / b) / 2 if x >= 0 else mpmath.exp(x / b) / 2

        def g(d):  # P(d + L_0 > L_1) = integral of f(x) F(x + d), split at the kinks 0 and -d
            return mpmath.quad(lambda x: density(x) * cdf(x + d), [-mpmath.inf, min(0, -d), max(0, -d), mpmath.inf])
        levels = [mpmath.log(g(d) / g(d2)) for d in (-1, 0, 1) for d2 in (-1, 0, 1) if abs(d - d2) <= 2]
        return max(levels)


def test_textbook_noisy_max_that_compares_each_value_with_itself_is_read_right() -> None:
    level = _reference_level(Fraction(1))
    assert abs(level - mpmath.mpf("0.4934")) < mpmath.mpf("1e-4")  # the figure
    spec = dp.spec(rnm_textbook, universe=TWO, grid={eps: [1]},
                   claims=[dp.private(eps / 4), dp.private(Fraction(1, 2) * eps),
                           dp.probability(lambda data, o: o == -1, at_most=0),
                           dp.same_distribution(rnm_skip_self)])
    found = results(spec)
    assert [r.status.value for r in found] == ["refuted", "verified", "verified", "verified"], \
        [(r.status.value, r.message) for r in found]
    achieved = str(found[0].evidence.achieved_epsilon)
    with mpmath.workdps(40):
        assert abs(mpmath.mpf(achieved) - level) < mpmath.mpf("1e-30"), achieved


def test_the_skip_self_version_never_returns_minus_one() -> None:
    spec = dp.spec(rnm_skip_self, universe=TWO, grid={eps: [1]},
                   claims=[dp.probability(lambda data, o: o == -1, at_most=0),
                           dp.same_distribution(rnm_textbook)])
    assert statuses(spec) == ["verified", "verified"]


def _compare_self(data, eps, *, how):
    x = dp.laplace(data[0], 1 / eps)
    return data[0] if how(x) else 0


@pytest.mark.parametrize("how, holds", [
    (lambda x: x >= x, True), (lambda x: x <= x, True), (lambda x: x > x, False), (lambda x: x < x, False),
    (lambda x: (x + 1) - 1 >= x, True), (lambda x: x >= (x + 1) - 1, True), (lambda x: x + 1 > x, True),
    (lambda x: x - 1 >= x, False), (lambda x: x == (x + 0), True), (lambda x: x != x, False),
    (lambda x: x == x + 1, False), (lambda x: (x + Fraction(1, 3)) - Fraction(1, 3) <= x, True)])
def test_a_comparison_of_a_noisy_value_with_itself_is_decided_by_its_offsets(how, holds) -> None:
    """data[0] released when the comparison holds: not private; a constant 0 when it does not."""
    def mechanism(data, eps):
        return _compare_self(data, eps, how=how)
    spec = dp.spec(mechanism, universe=BIT, grid={eps: [1]}, claims=[dp.private(eps)])
    assert statuses(spec) == (["refuted"] if holds else ["proved"])


def rnm_laplace(q, eps):
    best, best_value = 0, dp.laplace(q[0], 2 / eps)
    for i in range(1, len(q)):
        x = dp.laplace(q[i], 2 / eps)
        if x > best_value:
            best, best_value = i, x
    return best


def first_at_max(q, eps, rng):
    """numpy code people write: the noisy maximum, then the first index that reaches it."""
    noisy = np.asarray(q) + rng.laplace(0, 2 / eps, size=len(q))
    top = max(noisy)
    for i in range(len(q)):
        if noisy[i] >= top:
            return i
    return -1


def first_at_np_max(q, eps, rng):
    noisy = np.asarray(q) + rng.laplace(0, 2 / eps, size=len(q))
    return int(np.flatnonzero(noisy >= np.max(noisy))[0])


@pytest.mark.parametrize("code", [first_at_max, first_at_np_max])
def test_the_exact_audit_of_first_index_at_the_max(code) -> None:
    spec = dp.spec(dp.implementation(code), universe=TWO, grid={eps: [1]},
                   claims=[dp.conforms(rnm_laplace), dp.private(eps), dp.private(eps / 4)])
    assert statuses(spec) == ["verified", "verified", "refuted"]


# -- the handle ----------------------------------------------------------------------------------------

def _probe(data, eps, *, what):
    x = dp.laplace(data[0], 1 / eps)
    return what(x)


PROBES = {
    "str": lambda x: len(str(x)) % 2, "repr": lambda x: repr(x)[:9], "f-string": lambda x: f"{x}"[:9],
    "format": lambda x: format(x, "")[:9], "hash": lambda x: hash(x) % 2, "a set": lambda x: len({x, x + 0}),
    "a dict key": lambda x: {x: 1}[x], "isinstance": lambda x: isinstance(x, float),
    "isinstance of an ABC": lambda x: __import__("numbers").Number.__instancecheck__(x),
    "an attribute": lambda x: x.real, "a method": lambda x: x.is_integer(),
    "json": lambda x: json.dumps([x]), "a numpy array's text": lambda x: str(np.array([x])),
}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_spec_code_cannot_read_a_noisy_values_handle(name) -> None:
    what = PROBES[name]

    def mechanism(data, eps):
        return _probe(data, eps, what=what)
    (result,) = results(dp.spec(mechanism, universe=BIT, grid={eps: [1]}, claims=[dp.private(eps)]))
    assert result.status.value == "error", (name, result.status.value, result.message)
    assert "test_soundness_noisy_values.py:" in result.message, result.message


def test_a_caught_probe_still_refuses() -> None:
    def mechanism(data, eps):
        x = dp.laplace(0, 1 / eps)
        try:
            return isinstance(x, float) and 0
        except Exception:
            return data[0]
    (result,) = results(dp.spec(mechanism, universe=BIT, grid={eps: [1]}, claims=[dp.private(eps)]))
    assert result.status.value == "error" and "caught" in result.message


def test_the_engine_still_names_noisy_values_in_its_messages() -> None:
    def mechanism(data, eps):
        x = dp.laplace(data[0], 1 / eps)
        return x * 2  # refused arithmetic: the message is dpverify's own
    (result,) = results(dp.spec(mechanism, universe=BIT, grid={eps: [1]}, claims=[dp.private(eps)]))
    assert result.status.value == "error" and "arithmetic" in result.message


# -- arithmetic that cancels ---------------------------------------------------------------------------

def test_noise_arithmetic_that_cancels_is_the_value_it_leaves() -> None:
    def plus_minus(data, eps):
        x, y = dp.laplace(data[0], 1 / eps), dp.laplace(0, 1 / eps)
        return (x + y) - y

    def cancelled(data, eps):
        x = dp.laplace(0, 1 / eps)
        return (x - x) + data[0]

    def compared_after_cancelling(data, eps):
        x, y = dp.laplace(data[0], 1 / eps), dp.laplace(0, 1 / eps)
        return 1 if (x + y) - y > 0 else 0
    assert statuses(dp.spec(plus_minus, universe=BIT, grid={eps: [1]},
                            claims=[dp.private(eps), dp.private(eps / 2)])) == ["proved", "refuted"]
    assert statuses(dp.spec(cancelled, universe=BIT, grid={eps: [1]}, claims=[dp.private(eps)])) == ["refuted"]
    assert statuses(dp.spec(compared_after_cancelling, universe=BIT, grid={eps: [1]},
                            claims=[dp.private(eps), dp.private(eps / 2)])) == ["proved", "refuted"]


# -- a claim's event with the wrong signature ----------------------------------------------------------

def test_an_event_that_takes_only_the_output_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match=r"event\(data, output\)"):
        dp.probability(lambda o: o == -1, at_most=0)


SPEC_FILE = """\
import json, multiprocessing, os
import numpy as np
import dpverify as dp
eps = dp.symbol("eps", positive=True)
def mech(data, eps):
    x = dp.laplace(data[0], 1 / eps)
    {body}
s = dp.spec(mech, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE), grid={{eps: [1]}},
            claims=[dp.private(eps)])
"""


@pytest.mark.parametrize("name, body", [
    ("type of a noisy value", "return data[0] if type(x) is float else 0"),
    ("type of a noisy value, by name", "return data[0] if type(x).__name__ == 'float' else 0"),
    ("id of anything", "return data[0] if id(data) % 2 == 5 else 0"),
    ("id of a noisy value", "return id(x) % 2"),
    ("hash of a string", "return hash(str(data[0])) % 2"),
    ("hash of a noisy value", "return hash(x) % 2"),
    ("the process's name", "return data[0] if multiprocessing.current_process().name == 'MainProcess' else 0"),
    ("the process id", "return data[0] if os.getpid() == 1 else 0"),
    ("json of a noisy value", "return json.dumps([x])"),
])
def test_a_spec_file_cannot_read_handles_or_process_state(name, body, tmp_path, monkeypatch) -> None:
    """Through the loader, as users run spec files: ``type``, ``id`` and ``hash`` in a spec module are
    dpverify's guarded ones; type(x) of a noisy value and process-level state are errors at the line."""
    from click.testing import CliRunner
    from dpverify.cli import main
    (tmp_path / "probe.py").write_text(SPEC_FILE.format(body=body))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "probe.py", "--no-cache", "--json"])
    assert result.exit_code == 2, (name, result.output)
    assert "probe.py" in result.output and "Traceback" not in result.output, result.output


def test_type_is_still_type_in_a_spec_file(tmp_path, monkeypatch) -> None:
    from click.testing import CliRunner
    from dpverify.cli import main
    (tmp_path / "meta.py").write_text(
        "import dpverify as dp\n"
        "class Meta(type):\n    pass\n"
        "class K(metaclass=Meta):\n    pass\n"
        "assert type(K) is Meta and isinstance(K, type) and issubclass(Meta, type) and type(3) is int\n"
        "assert type('N', (), {})().__class__.__name__ == 'N' and hash('a') == hash('a')\n"
        "eps = dp.symbol('eps', positive=True)\n"
        "def rr(data, eps):\n    return type(data[0]).__name__, dp.randomized_response(data[0], eps)\n"
        "s = dp.spec(rr, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE), grid={eps: [1]},\n"
        "           claims=[dp.private(eps)])\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "meta.py", "--no-cache"])
    assert result.exit_code == 0, result.output


# -- found by the adversarial review of this round -------------------------------------------------------

def _both_with_order(q, eps):
    x, y = dp.laplace(q[0], 1 / eps), dp.laplace(q[1], 1 / eps)
    return (x, y, x > y)


def _sorted_pair(q, eps):
    x, y = dp.laplace(q[0], 1 / eps), dp.laplace(q[1], 1 / eps)
    return tuple(sorted([x, y]))


@pytest.mark.parametrize("program", [_both_with_order, _sorted_pair])
def test_released_values_tied_by_a_comparison_are_never_merged_across_datasets(program) -> None:
    """Two released values linked by a comparison have a joint density, which the engine does not
    compute; their weights carried no centre, so every dataset's law had the same key, the laws were
    merged, and private(eps/100), private(1/1000, delta=1e-6) and a profile were verified on no pair
    (the truth is 2 eps; delta(0.001) = 0.448 on (0, 0) / (1, 1))."""
    spec = dp.spec(program, universe=TWO, grid={eps: [1]},
                   claims=[dp.private(eps / 100), dp.private(Fraction(1, 1000), delta=Fraction(1, 10 ** 6)),
                           dp.profile(at=[Fraction(1, 1000)], delta=Fraction(1, 10 ** 6))])
    for result in results(spec):
        assert result.status.value in ("refuted", "unknown"), (result.status.value, result.message)


def test_a_copied_noisy_value_is_the_value() -> None:
    import copy

    def mechanism(data, eps):
        x = dp.laplace(data[0], 1 / eps)
        return copy.deepcopy(x) > 0 and copy.copy(x) >= x
    spec = dp.spec(mechanism, universe=BIT, grid={eps: [1]}, claims=[dp.private(eps), dp.private(eps / 2)])
    assert statuses(spec) == ["proved", "refuted"]


SET_ORDER = """\
import dpverify as dp
eps = dp.symbol("eps", positive=True)
def mech(data, eps):
    first = next(iter({"alpha", "beta", "gamma", "delta", "eps", "zeta"}))
    if first == "alpha":
        return data[0]
    return dp.randomized_response(data[0], eps)
s = dp.spec(mech, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE), grid={eps: [1]},
            claims=[dp.private(eps)])
"""


@pytest.mark.xfail(strict=True, reason="open (docs/soundness.md, known limits): the iteration order of a set of "
                                       "strings follows the process's hash seed, which no guard sees")
def test_a_law_that_follows_the_hash_seed_is_not_decided_differently_per_process(tmp_path) -> None:
    import subprocess
    import sys
    (tmp_path / "order.py").write_text(SET_ORDER)
    codes = set()
    for seed in ("0", "11"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-m", "dpverify", "check", "order.py", "--no-cache", "-q"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        codes.add(done.returncode)
    assert len(codes) == 1, codes
