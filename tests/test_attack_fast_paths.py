"""Reproducers of a review of the fast paths (blind sums, the fast reading's replays, the formula deciders):
each printed a false ``verified``/``proved`` before its fix.

1. blind sums: a learner that tells the blind stand-in from a real sample (``hasattr(data, "_refuse")``,
   ``data.__class__``) and misbehaves only on lopsided multisets the probes never ran;
2. the fast reading replays a learner on one sample object: a learner that writes to ``data.counts`` saw its
   own mark on later replays;
3. two different sympy symbols with one name were one z3 variable (and one point of the exhaustive path).
"""
from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
import sympy

import dpverify as dp
from dpverify.engine.datasets.counts import Sample
from dpverify.errors import SpecError


def check(tmp_path: Path, source: str, name: str = "attack_spec.py") -> dict:
    """``dpverify check <spec> --json --no-cache`` (the public contract): the parsed report."""
    path = tmp_path / name
    path.write_text(source)
    run = subprocess.run([sys.executable, "-m", "dpverify", "check", str(path), "--json", "--no-cache"],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert run.stdout, run.stderr
    return json.loads(run.stdout)


def statuses(report: dict) -> list[str]:
    return [claim["status"] for spec in report["specs"] for claim in spec["claims"]]


# ----- 2. a learner that writes to its sample's counts -----------------------------------------------------

COUNTS_MUTATION = '''
from fractions import Fraction
import dpverify as dp

eps = dp.symbol("eps", positive=True)
POPULATION = {0: Fraction(1, 2), 1: Fraction(1, 2)}


def marks(data, eps):
    fresh = "_seen" not in data.counts
    data.counts["_seen"] = True
    d = dp.exponential((0, 1), lambda o: 0, eps, sensitivity=1)
    return d if fresh else 1 - d


spec = dp.spec(marks, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE), grid={eps: [1]},
               claims=[dp.sample_complexity(population=POPULATION, error=lambda o: Fraction(o, 2),
                                            alpha=Fraction(1, 4), beta=Fraction(1, 4), bound=3, up_to=5)])
'''


def test_a_learner_that_marks_its_counts_is_not_verified(tmp_path) -> None:
    """True P[error > 1/4] = 1/2 > beta at every n (each real call gets a fresh sample): was `verified`."""
    report = check(tmp_path, COUNTS_MUTATION)
    assert "verified" not in statuses(report), report
    assert report["exit_code"] != 0


def test_the_counts_of_a_sample_are_read_only_and_fresh_per_read() -> None:
    data = Sample((0, 0, 1))
    data.counts = {0: 2, 1: 1}
    with pytest.raises(TypeError):
        data.counts["_seen"] = True
    seen = data.counts
    assert dict(seen) == {0: 2, 1: 1} and list(seen) == [0, 1]
    assert data.counts is not seen  # nothing one run holds is what a later run reads
    assert "_seen" not in data.counts
