"""Formula claims as spec authors meet them: eager validation, and the JSON of a counterexample."""
from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from dpverify.cli import main

HEADER = "import sympy\nimport dpverify as dp\nx = dp.symbol('x')\nr = dp.symbol('r', positive=True)\n"

BAD = {
    "condition as a side": ("dp.identity(x > 0, 1)", "is a condition, not an expression"),
    "string side": ("dp.inequality('x', 1)", "not a number or sympy expression"),
    "nan side": ("dp.identity(x, sympy.nan)", "not a finite real number"),
    "non-real symbol": ("dp.identity(sympy.Symbol('z'), 1)", "not declared real"),
    "where not a relation": ("dp.identity(x, x, where=[x])", "not a relation"),
    "where always false": ("dp.identity(x, x, where=[r < 0])", "always false"),
    "strict not a bool": ("dp.inequality(x, x + 1, strict='yes')", "not a bool"),
    "bad expectation": ("dp.identity(x, x, expect='proved')", "not an expectation"),
    "formula spec without a name": (None, "needs a name"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_formula_claim_gives_one_clear_error(case: str, tmp_path, monkeypatch) -> None:
    claim, words = BAD[case]
    body = (f"s = dp.spec(name='f', claims=[{claim}])\n" if claim
            else "s = dp.spec(claims=[dp.identity(x, x)])\n")
    (tmp_path / "bad.py").write_text(HEADER + body)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "bad.py", "--json"])
    assert result.exit_code == 2, result.output
    error = json.loads(result.output)["specs"][0]["error"]
    assert words in error and "bad.py:5" in error and "fix:" in error
    assert "Traceback" not in result.output


SPEC = textwrap.dedent("""
    import sympy
    import dpverify as dp
    x = dp.symbol("x")
    r = dp.symbol("r", positive=True)
    s = dp.spec(name="hinge", claims=[
        dp.inequality(0, sympy.Max(r - x, 0), id="nonnegative"),
        dp.identity(sympy.Max(r - x, 0), r - x, where=[x <= r], id="on_the_left"),
        dp.identity(sympy.Max(r - x, 0), r - x, id="everywhere", expect="refuted"),
    ])
""")


def test_formula_results_in_json(tmp_path, monkeypatch) -> None:
    (tmp_path / "hinge.py").write_text(SPEC)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "hinge.py", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["summary"] == {"proved": 2, "verified": 0, "refuted": 1, "unknown": 0, "error": 0, "consistent": 0}
    claims = {c["id"]: c for c in doc["specs"][0]["claims"]}
    assert [c["kind"] for c in claims.values()] == ["inequality", "identity", "identity"]
    for cid in ("nonnegative", "on_the_left"):
        [point] = claims[cid]["points"]
        assert point["params"] == {} and point["witness"] is None
        assert point["message"].startswith(f"proved by {point['method']}: ")
    assert claims["on_the_left"]["points"][0]["method"] == "z3 exact"
    [point] = claims["everywhere"]["points"]
    assert claims["everywhere"]["as_expected"] and point["status"] == "refuted"
    witness = point["witness"]
    assert set(witness["x"]) == {"r", "x"} and witness["x_prime"] is None and witness["output"] is None
    values = {k: float(eval(v)) for k, v in witness["x"].items()}  # exact rationals such as "3/2"
    assert values["x"] > values["r"]  # outside the branch where the identity holds
    assert float(witness["p"]) == 0 and float(witness["p_prime"]) == values["r"] - values["x"]


def test_the_pytest_plugin_shows_a_formula_counterexample(pytester) -> None:
    pytester.mkdir("spec")
    pytester.path.joinpath("spec", "hinge.py").write_text(SPEC.replace(', expect="refuted"', ""))
    result = pytester.runpytest("spec", "-v")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*hinge::everywhere FAILED*", "refuted: hinge:everywhere*",
                                 "refuted by z3 exact: *", "  at r = *, x = *", "  lhs = 0*", "  rhs = -*",
                                 "replay: dpverify check spec/hinge.py --spec hinge --claim everywhere"])


def test_formula_results_carry_typed_evidence() -> None:
    """A proof says what it rests on; a refutation carries the exact counterexample and both sides."""
    import sympy

    import dpverify as dp
    from dpverify.evidence import FormulaEvidence
    x = dp.symbol("x", positive=True)
    (held,) = dp.check(dp.spec(name="f", claims=[dp.inequality(2 * x, x**2 + 1, id="amgm")]))
    assert held.status.value == "proved" and isinstance(held.evidence, FormulaEvidence)
    assert held.evidence.derivation and held.evidence.counterexample is None
    assert held.evidence.statement == "2*x <= x**2 + 1"
    (broken,) = dp.check(dp.spec(name="f", claims=[dp.inequality(x**2, x, id="square")]))
    ev = broken.evidence
    assert broken.status.value == "refuted" and isinstance(ev, FormulaEvidence)
    value = sympy.Rational(ev.counterexample["x"])
    assert value > 0 and value**2 > value
    assert (ev.lhs, ev.rhs) == (broken.witness.p, broken.witness.p_prime)
    assert abs(sympy.Float(ev.lhs, 40) - value**2) < sympy.Rational(1, 10**30)
    assert broken.evidence.figures()["counterexample"] == {"x": str(value)}
