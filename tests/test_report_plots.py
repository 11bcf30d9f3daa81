"""Plots are a function of the spec alone: no SVG id depends on a float, and floats that other
libraries compute (an accountant's δ, whose last bits vary with the CPU and the numpy build) are
rounded before they are drawn, so a perturbation in their last bits leaves the SVG byte for byte."""
from __future__ import annotations

import math
import re

from dpverify.evidence import ProfileEvidence, ProfileRow
from dpverify.report import plots
from dpverify.report.sections_profile import curves

EPS = [0.05 * k for k in range(1, 41)]
DELTA = [math.exp(-3.0 * e) / 7.0 + 1e-9 * e for e in EPS]
HASHED = re.compile(r'(?:id="|url\(#|href="#)(?:[a-z]|C[0-9a-f]+_[0-9a-f]+_)[0-9a-f]{10}[")]')


def _profile(delta: list[float]) -> str:
    evidence = ProfileEvidence(times=10, rows=[ProfileRow("0.5", "0.01", "0.0321")],
                               curve={"epsilon": list(EPS), "delta": list(delta)})
    return curves([("eps=1", evidence)], ["refuted"], "acct-key")


def _ulps(value: float, n: int) -> float:
    for _ in range(abs(n)):
        value = math.nextafter(value, math.inf if n > 0 else -math.inf)
    return value


def test_last_bits_of_a_plotted_float_leave_the_svg_unchanged() -> None:
    before = _profile(DELTA)
    for index in (0, 17, len(DELTA) - 1):
        for n in (1, -1, 4):
            perturbed = list(DELTA)
            perturbed[index] = _ulps(perturbed[index], n)
            assert perturbed != DELTA
            assert _profile(perturbed) == before, (index, n)


def test_a_visible_change_still_changes_the_svg() -> None:
    changed = list(DELTA)
    changed[17] *= 1.5
    assert _profile(changed) != _profile(DELTA)


def test_no_id_is_a_hash_and_every_reference_is_defined() -> None:
    for svg in (_profile(DELTA), plots.epsilon_plot([(0.5, 0.5, "proved"), (1.0, 1.2, "refuted")], "k2"),
                plots.witness_laws(["a", "b"], [0.25, 0.75], [0.5, 0.5], "k3")):
        assert not HASHED.search(svg), HASHED.search(svg)
        ids = set(re.findall(r'\bid="([^"]+)"', svg))
        refs = set(re.findall(r'(?:url\(#|href="#)([^")]+)', svg))
        assert refs and refs <= ids, refs - ids


def test_ids_do_not_depend_on_the_axes_box() -> None:
    """matplotlib hashes the clip rectangle's floats into the clip-path id: a box moved by a rounding
    error (another CPU's layout arithmetic) must not rename it."""
    a = plots.epsilon_plot([(0.5, 0.5, "proved")], "same")
    b = plots.epsilon_plot([(0.5, 0.5, "proved")], "same", title="a title moves the axes box down")
    clips = [re.findall(r'<clipPath id="([^"]+)"', svg) for svg in (a, b)]
    assert clips[0] and clips[0] == clips[1]


def test_steady_rounds_floats_only() -> None:
    assert plots.steady(0.1234567891) == 0.123457 and plots.steady(None) is None
    assert plots.steady(math.inf) == math.inf and plots.steady(3) == 3 and plots.steady(0.0) == 0.0
