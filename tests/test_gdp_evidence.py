"""Gaussian DP's typed evidence: the achieved mu (exact for Gaussian releases, a certified lower bound on
the profile routes, checked against an independent mpmath computation of randomized response's least mu),
tightness, the witness point of a refutation, and how the terminal table and ``--json`` show them."""
from __future__ import annotations

import json

import mpmath
import pytest
from click.testing import CliRunner
from sympy import Rational

import dpverify as dp
from dpverify.cli import main
from dpverify.evidence import GdpEvidence

SIGMA = dp.symbol("sigma", positive=True)
EPS = dp.symbol("eps", positive=True)


def count(data, sigma):
    return dp.gaussian(sum(data), sigma)


def rr(data, eps):
    return dp.randomized_response(data[0], eps)


def least_mu(e0: float) -> mpmath.mpf:
    """The least mu with delta_RR(eps) <= G_mu(eps) for every eps (a fine eps grid, bisection on mu)."""
    with mpmath.workdps(30):
        e0 = mpmath.mpf(e0)
        grid = [e0 * k / 400 for k in range(401)]

        def excess(mu):
            g = lambda e: mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)  # noqa: E731
            return max((mpmath.exp(e0) - mpmath.exp(e)) / (1 + mpmath.exp(e0)) - g(e) for e in grid)
        low, high = mpmath.mpf("0.01"), mpmath.mpf(10)
        for _ in range(60):
            mid = (low + high) / 2
            low, high = (low, mid) if excess(mid) <= 0 else (mid, high)
        return high


def test_gaussian_releases_carry_the_exact_mu_and_the_witness():
    spec = dp.spec(count, universe=dp.universe([0, 1], n=range(1, 3), neighbours=dp.ADD_REMOVE),
                   grid={SIGMA: [2]}, claims=[dp.gdp(3 / SIGMA, times=9, id="composed"),
                                              dp.gdp(1 / SIGMA, times=9, id="no_sqrt")])
    composed, no_sqrt = dp.check(spec)
    for point in (composed, no_sqrt):
        assert isinstance(point.evidence, GdpEvidence) and point.evidence.times == 9
        assert float(point.evidence.achieved) == pytest.approx(1.5, rel=1e-30)  # sqrt(9) * 1/2
        assert point.evidence.method == "gaussian" and not point.evidence.lower_bound
    assert composed.status.value == "proved" and composed.evidence.tightness == "1"
    assert composed.evidence.witness_epsilon is None
    assert no_sqrt.status.value == "refuted" and no_sqrt.evidence.tightness == "3"
    ev = no_sqrt.evidence
    assert float(ev.witness_epsilon) == 0 and float(ev.witness_delta) > float(ev.witness_bound)
    with mpmath.workdps(40):  # delta(0) = 2 Phi(D/2) - 1 at D = 3/2, and G_(1/2)(0) = 2 Phi(1/4) - 1
        assert abs(mpmath.mpf(ev.witness_delta) - (2 * mpmath.ncdf(0.75) - 1)) < 1e-30
        assert abs(mpmath.mpf(ev.witness_bound) - (2 * mpmath.ncdf(0.25) - 1)) < 1e-30


def test_profile_route_gives_a_sound_lower_bound_of_mu():
    """Randomized response at eps0 = 1/2: the lower bound lies below the least mu (mpmath) and within 1%;
    a claim just below the lower bound is refuted, one 1% above the least mu verified."""
    truth = float(least_mu(0.5))
    spec = dp.spec(rr, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE), grid={EPS: [Rational(1, 2)]},
                   claims=[dp.gdp(Rational(int(truth * 1.01 * 10 ** 6), 10 ** 6), id="above")])
    (above,) = dp.check(spec)
    assert above.status.value == "verified"
    ev = above.evidence
    assert ev.lower_bound and ev.method == "lattice" and ev.grid_points is not None
    bound = float(ev.achieved)
    assert truth * 0.99 < bound <= truth
    below = dp.spec(rr, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE), grid={EPS: [Rational(1, 2)]},
                    claims=[dp.gdp(Rational(int(bound * 0.999 * 10 ** 6), 10 ** 6), id="below")])
    (refuted,) = dp.check(below)
    assert refuted.status.value == "refuted" and refuted.evidence.witness_delta is not None
    assert float(refuted.evidence.witness_delta) > float(refuted.evidence.witness_bound)


RR_SPEC = '''
from sympy import Rational
import dpverify as dp
eps = dp.symbol("eps", positive=True)

def count(data, sigma):
    return dp.gaussian(sum(data), sigma)

sigma = dp.symbol("sigma", positive=True)
gauss = dp.spec(count, universe=dp.universe([0, 1], n=range(1, 3), neighbours=dp.ADD_REMOVE), grid={sigma: [2]},
                claims=[dp.gdp(Rational(1, 4), id="too_small")])
'''


def test_terminal_and_json_show_mu(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.py").write_text(RR_SPEC)
    table = CliRunner().invoke(main, ["check", "g.py", "--no-proofs", "--no-cache"])
    assert table.exit_code == 1
    row = next(line for line in table.output.splitlines() if "too_small" in line and "│" in line)
    assert "μ 0.25" in row and "μ 0.5" in row
    document = CliRunner().invoke(main, ["check", "g.py", "--json", "--no-proofs", "--no-cache"])
    point = json.loads(document.output)["specs"][0]["claims"][0]["points"][0]
    figures = point["figures"]
    assert figures["achieved"].startswith("0.5") and figures["tightness"] == "2"
    assert float(figures["witness_delta"]) > float(figures["witness_bound"])
    assert {"claimed_epsilon", "achieved_epsilon", "witness"} <= set(point)  # the old keys stay


def test_report_shows_the_gdp_table(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.py").write_text(RR_SPEC)
    result = CliRunner().invoke(main, ["report", "g.py", "--out", "out", "--no-proofs", "--no-cache"])
    assert result.exit_code == 1
    page = next((tmp_path / "out").glob("g.*.md")).read_text()
    assert "| claimed μ | achieved μ | achieved / claimed |" in page
    assert "δ\\_T ≥" in page and "G\\_μ =" in page
