"""The continuous fuzzer must be able to fail: deliberate bugs put into the engine, each caught.

Each mutant below is one small edit of the source of one engine function (``dpverify/engine/noise.py``,
``noisy.py``, ``product_form.py``), compiled in memory and monkeypatched over the original for one
test; no engine file is touched.  The edit is a text replacement of a fragment that must occur in the
function exactly as often as stated, so a change of the engine's source makes the mutant's test fail
loudly (rewrite the fragment) instead of silently testing the unmutated engine.

Each test replays the fuzzer's default cases (``tests/test_fuzz_continuous.py``: :func:`default_cases`,
the very cases its default run checks, with the reference's values already computed, so a replay costs
dpverify's time only) under the mutant, up to the first that shows a wrong verdict, and fails if none
does.  The unmutated engine passes them all (the default fuzzer test).

Two kinds of mutant:

* ``wrong verdict`` (:data:`MUTANTS`): the fuzzer must find a ``proved``/``verified`` that the reference
  rejects or a ``refuted`` that it accepts;
* ``refused`` (:data:`REFUSED`): the bug breaks the law's total mass, and the engine's own check ("the
  output probabilities ... sum to ..., not 1") turns the claims into errors: the fuzzer may or may not see
  a wrong verdict, but some default case must show that refusal.

Not here, because it cannot change a verdict: an exponential's support ignored (``Noise.support`` FULL for
every kind) -- the density is zero below the centre, so the support only decides comparisons early; without it
they branch onto paths of probability exactly zero (at worst a probe on such a path is refused, an error).

``DPVERIFY_FUZZ_STATS`` files get each mutant's index of the first catching case.
"""
from __future__ import annotations

import inspect
import re
import sys
import textwrap
from typing import Any

import pytest

from dpverify.engine.continuous import noise, noisy
from dpverify.engine.program import product_form
from tests import test_fuzz_continuous as fuzz


def mutate(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, edits: list[tuple[str, str, int]]) -> None:
    """Replace ``owner.name`` (a function of a module or a method of a class) by a copy of its source with
    each (old, new, count) edit applied; ``old`` must occur exactly ``count`` times."""
    original = inspect.getattr_static(owner, name)
    src = textwrap.dedent(inspect.getsource(original))
    for old, new, count in edits:
        found = src.count(old)
        assert found == count, f"mutant of {name}: {old!r} occurs {found} times, expected {count}"
        src = src.replace(old, new)
    module = sys.modules[original.__module__]
    local: dict = {}
    exec(compile(src, f"<mutant of {module.__name__}.{name}>", "exec"), module.__dict__, local)
    monkeypatch.setattr(owner, name, local[name])


# name: (owner, function, edits, what the bug is)
MUTANTS: dict[str, tuple[Any, str, list, str]] = {
    "constant offset sign": (
        noise.NoiseState, "compare", [("d - a.offset, greater)", "d + a.offset, greater)", 1)],
        "x + a > c read as x > c + a (the offset moved to the wrong side)"),
    "constant direction": (
        noise.NoiseState, "compare", [("d - a.offset, greater)", "d - a.offset, not greater)", 1)],
        "x > c read as x < c (the sign of x - c reversed)"),
    "noisy minus constant": (
        noisy.Noisy, "__sub__", [("self.offset - self._constant", "self.offset + self._constant", 1)],
        "x - c read as x + c"),
    "<= read as >": (
        noisy.Noisy, "__le__", [("greater=False, strict=False", "greater=True, strict=True", 1)],
        "x <= y read as x > y"),
    ">= read as <": (
        noisy.Noisy, "__ge__", [("greater=True, strict=False", "greater=False, strict=False", 1)],
        "x >= y read as x <= y"),
    "< read as <= on one variable": (
        noise.NoiseState, "compare", [("return not strict", "return True", 1)],
        "strictness ignored for one variable: x > x and x < x hold"),
    ">= read as > on one variable": (
        noise.NoiseState, "compare", [("return not strict", "return False", 1)],
        "strictness ignored for one variable: x >= x fails (finding C1)"),
    "one variable offsets reversed": (
        noise.NoiseState, "compare", [("(a.offset > b.offset) == greater", "(a.offset < b.offset) == greater", 1)],
        "x + 1 > x read as false"),
    "pair direction": (
        noise.NoiseState, "compare", [("d, greater = -d, not greater", "d, greater = -d, greater", 1)],
        "the direction of a two-variable comparison not swapped with its sides"),
    "pair offset sign": (
        noise.NoiseState, "compare", [("d = b.offset - a.offset", "d = a.offset - b.offset", 1)],
        "x + a > y + b read as x - a > y - b (the edge difference's sign flipped)"),
    "forced outcome": (
        noise.NoiseState, "_branch", [("return above, greater", "return above, not greater", 1)],
        "a comparison decided by earlier constraints (x > 1, then x > 0) answered the wrong way"),
    "edge orientation": (
        noise.NoiseState, "_neighbours", [("(j, (None if hi is None else -hi, None if lo is None else -lo))",
                                           "(j, (lo, hi))", 1)],
        "the interval of x_i - x_j used as that of x_j - x_i when integrating from the other end"),
    "equality by identity": (
        noisy.Noisy, "__eq__", [("and other.offset == self.offset", "and other is self", 1)],
        "(x + 1) - 1 == x read as false (finding C2)"),
    "exponential support reversed": (
        noisy.Noise, "support", [("return (self.centre, None) if", "return (None, self.centre) if", 1)],
        "an exponential's support taken below its centre: x > c decided false for every c above the centre"),
    "Laplace given a support": (
        noisy.Noise, "support", [('if self.kind == "exponential" else FULL', "", 1)],
        "a Laplace value given the exponential's support: x < centre decided false"),
    "argmax root reversed": (
        product_form, "winner", [("below[b] += 1", "below[_b] += 1", 1), ("below[a] += 1", "below[b] += 1", 1),
                                 ("below[_b] += 1", "below[a] += 1", 1)],
        "product form: the winner of a path read as its loser"),
    "argmax wrong winner": (
        product_form, "distribution", [("win_probability(shape.variables, w, session)",
                                        "win_probability(shape.variables, (w + 1) % len(shape.variables),"
                                        " session)", 1)],
        "product form: an output weighed by another variable's winning probability"),
}


# name: (owner, function, edits, what the bug is): bugs that break the total mass, which the engine notices
REFUSED: dict[str, tuple[Any, str, list, str]] = {
    "meet keeps the wider bound": (
        noise, "_meet", [("max(a[0], b[0])", "min(a[0], b[0])", 1), ("min(a[1], b[1])", "max(a[1], b[1])", 1)],
        "a second comparison of one value does not narrow its interval (x > 1, then x > 0: x > 0)"),
}


def hunt(refusal: bool = False) -> tuple[int, list]:
    """(index, findings) of the first default case whose verdicts are wrong (or, with ``refusal``, which the
    engine's check of the total probability refuses: findings [] then), or (-1, [])."""
    for k, (case, ref) in enumerate(fuzz.default_cases()):
        errors: list = []
        findings = [f for f in fuzz.check_case(case, ref, errors) if not fuzz._expected(case, f)]
        if findings or (refusal and any(re.search(fuzz.MASS_CHECK, e) for e in errors)):
            return k, findings
    return -1, []


@pytest.mark.parametrize("name", list(MUTANTS))
def test_the_fuzzer_catches_the_mutant(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    owner, function, edits, what = MUTANTS[name]
    mutate(monkeypatch, owner, function, edits)
    k, findings = hunt()
    fuzz.STATS[f"mutant {name!r} caught at case"] = k
    fuzz._dump_stats()
    assert k >= 0, (f"the mutant {name!r} ({what}) was not caught by the {len(fuzz.default_cases())} default cases "
                    "of the continuous fuzzer")
    assert all(f.category.startswith(("false", "achieved")) for f in findings)


@pytest.mark.parametrize("name", list(REFUSED))
def test_the_engine_refuses_the_mutant(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Caught by the fuzzer or refused by the engine's check of the total probability, which never fires on
    the unmutated engine (tests/test_fuzz_continuous.py::test_dpverify_agrees_with_the_continuous_reference)."""
    owner, function, edits, what = REFUSED[name]
    mutate(monkeypatch, owner, function, edits)
    k, _ = hunt(refusal=True)
    fuzz.STATS[f"mutant {name!r} caught or refused at case"] = k
    fuzz._dump_stats()
    assert k >= 0, (f"the mutant {name!r} ({what}) was neither caught by the fuzzer's default cases nor "
                    "refused by the engine's check of the total probability")
