"""Misuse of continuous noise: one clear error naming the problem, the file, the line and a fix.

Each case is a spec file checked with ``dpverify check FILE`` (exit 2, never a
traceback), as in test_invalid_specs.py; a few are also checked through the
API, where the claim's one result has status ``error``.
"""
import textwrap

import pytest
from click.testing import CliRunner

import dpverify as dp
from dpverify.cli import main

HEADER = ("import dpverify as dp\nfrom fractions import Fraction\nimport sympy\n"
          "eps = dp.symbol('eps', positive=True)\n")
SPEC = "s = dp.spec(mech, universe=dp.answers([0, 1], 3), grid={eps: [1]}, claims=[dp.private(eps)])\n"


def mech_body(*lines: str) -> str:
    return "def mech(q, eps):\n" + "".join(f"    {line}\n" for line in lines)


# name: (body, the line of the mistake (the header has 4 lines, `def mech` is line 5), words in the message)
CASES = {
    "Gaussian value compared with a constant": (
        mech_body("x = dp.gaussian(q[0], 1)", "if x > 0:", "    return 1", "return 0"), 7, "Gaussian"),
    "Gaussian value compared with a Laplace value": (
        mech_body("x = dp.gaussian(q[0], 1)", "y = dp.laplace(q[1], 1 / eps)", "return y > x"), 8, "Gaussian"),
    "a cycle of comparisons": (
        mech_body("x, y, z = (dp.laplace(v, 1 / eps) for v in q)", "a = x > y", "b = y > z", "c = z > x",
                  "return (a, b, c)"), 9, "cycle"),
    "noisy * 2": (mech_body("x = dp.laplace(q[0], 1 / eps)", "return x * 2"), 7, "not supported"),
    "2 * noisy": (mech_body("x = dp.laplace(q[0], 1 / eps)", "return 2 * x"), 7, "not supported"),
    "noisy / 2": (mech_body("x = dp.laplace(q[0], 1 / eps)", "return x / 2"), 7, "not supported"),
    "minus noisy": (mech_body("return -dp.laplace(q[0], 1 / eps)"), 6, "not supported"),
    "constant minus noisy": (mech_body("return 1 - dp.laplace(q[0], 1 / eps)"), 6, "not supported"),
    "int of noisy": (mech_body("return int(dp.laplace(q[0], 1 / eps))"), 6, "not supported"),
    "noisy as a truth value": (
        mech_body("x = dp.laplace(q[0], 1 / eps)", "if x:", "    return 1", "return 0"), 7, "truth value"),
    "noisy - noisy, compared": (
        mech_body("x = dp.laplace(q[0], 1 / eps)", "y = dp.laplace(q[1], 1 / eps)", "return x - y > 0"), 8,
        "can be released, not compared"),
    "noisy + noisy, compared": (
        mech_body("x = dp.laplace(q[0], 1 / eps)", "y = dp.laplace(q[1], 1 / eps)", "return x + y > 0"), 8,
        "can be released, not compared"),
    "a released sum of a compared value": (
        mech_body("x = dp.laplace(q[0], 1 / eps)", "y = dp.laplace(q[1], 1 / eps)", "z = x > 0",
                  "return x + y"), 7, "also compared"),
    "released sums that are linearly dependent": (
        mech_body("x = dp.laplace(q[0], 1 / eps)", "y = dp.laplace(q[1], 1 / eps)",
                  "return (x + y, x + y + 1)"), 7, "linearly dependent"),
    "zero scale": (mech_body("return dp.laplace(q[0], 0)"), 6, "must be positive"),
    "negative scale at a grid point": (mech_body("return dp.laplace(q[0], eps - 2)"), 6, "must be positive"),
    "negative exponential scale": (mech_body("return dp.exponential_noise(q[0], -eps)"), 6, "must be positive"),
    "zero Gaussian sigma": (mech_body("return dp.gaussian(q[0], 0)"), 6, "must be positive"),
    "irrational scale (sympy.sqrt)": (mech_body("return dp.laplace(q[0], sympy.sqrt(2)) > 0"), 6, "irrational"),
    "inexact float scale": (mech_body("return dp.laplace(q[0], 0.1) > 0"), 6, "not exact"),
    "noisy scale": (mech_body("return dp.laplace(q[0], dp.laplace(1, 1)) > 0"), 6, "itself a noisy value"),
    "bool scale": (mech_body("return dp.laplace(q[0], True) > 0"), 6, "bool"),
    "string answer": (mech_body("return dp.laplace('a', 1)"), 6, "not a number"),
    "noisy value in a list": (mech_body("return [dp.laplace(q[0], 1 / eps)]"), 5, "not hashable"),
}

# Irrational numbers written with dp.sqrt: clear errors for Laplace noise, supported as a Gaussian sigma.
UNCLEAR = {
    "irrational Laplace scale (dp.sqrt), released": mech_body("return dp.laplace(q[0], dp.sqrt(2) / eps)"),
    "irrational Laplace scale (dp.sqrt), compared": mech_body("return dp.laplace(q[0], dp.sqrt(2) / eps) > 0"),
    "noisy value compared with dp.sqrt(2)": mech_body("return dp.laplace(q[0], 1 / eps) > dp.sqrt(2)"),
    "Gaussian sigma with dp.sqrt": mech_body("return dp.gaussian(q[0], dp.sqrt(2) / eps)"),
}


def run_cli(body: str, tmp_path, monkeypatch):
    path = tmp_path / "bad_spec.py"
    path.write_text(HEADER + textwrap.dedent(body) + SPEC)
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(main, ["check", "bad_spec.py", "--no-proofs"])


@pytest.mark.parametrize("case", sorted(CASES))
def test_noise_misuse_gives_one_clear_error(case: str, tmp_path, monkeypatch) -> None:
    body, line, words = CASES[case]
    result = run_cli(body, tmp_path, monkeypatch)
    text = result.output
    assert result.exit_code == 2, text
    assert "Traceback" not in text
    assert words in text, text
    assert f"bad_spec.py:{line}:" in text, text
    assert "fix:" in text
    assert text.count("fix:") == 1, text  # one error, not one per dataset or per grid point
    assert "internal error" not in text and "the mechanism raised" not in text


@pytest.mark.parametrize("case", sorted(UNCLEAR))
def test_irrational_numbers_from_dp_sqrt_give_a_clear_error(case: str, tmp_path, monkeypatch) -> None:
    result = run_cli(UNCLEAR[case], tmp_path, monkeypatch)
    text = result.output
    assert "Traceback" not in text
    if case.startswith("Gaussian") and result.exit_code in (0, 1):
        return  # a Gaussian sigma of sqrt(2)/eps is legitimate: supporting it is a fix too
    assert result.exit_code == 2, text
    assert "bad_spec.py:6:" in text and "fix:" in text
    assert "the mechanism raised" not in text, text
    assert "rational" in text, text


def test_noise_outside_a_mechanism_is_an_error_at_load(tmp_path, monkeypatch) -> None:
    path = tmp_path / "bad_spec.py"
    path.write_text(HEADER + "x = dp.laplace(0, 1)\n" + mech_body("return 0") + SPEC)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "bad_spec.py"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "bad_spec.py:5:" in result.output and "outside a mechanism run" in result.output
    assert "fix:" in result.output


# -- the same errors through the API: one result with status error --------------------------------

eps = dp.symbol("eps", positive=True)


def times_two(q, eps):
    return dp.laplace(q[0], 1 / eps) * 2


def cycle(q, eps):
    x, y, z = (dp.laplace(v, 1 / eps) for v in q)
    return (x > y, y > z, z > x)


def compares_gaussian(q, eps):
    return dp.gaussian(q[0], 1) > dp.gaussian(q[1], 1)


def non_positive_scale(q, eps):
    return dp.laplace(q[0], eps - 1)


@pytest.mark.parametrize("mech, words", [
    (times_two, "not supported"), (cycle, "cycle"), (compares_gaussian, "Gaussian"),
    (non_positive_scale, "must be positive"),
], ids=["times-two", "cycle", "gaussian", "scale"])
def test_api_gives_one_error_result_per_point(mech, words) -> None:
    spec = dp.spec(mech, universe=dp.answers([0, 1], 3), grid={eps: [1]}, claims=[dp.private(eps)])
    results = dp.check(spec, proofs=False)
    assert [r.status.value for r in results] == ["error"]
    message = results[0].message
    assert words in message and "fix" in message and "test_noise_invalid.py" in message
    assert "Traceback" not in message and "internal error" not in message


def test_a_valid_comparison_forest_is_not_mistaken_for_a_cycle() -> None:
    """x > y and x > z: a tree of comparisons (no cycle), which is integrated exactly."""
    def tree(q, eps):
        x, y, z = (dp.laplace(v, 1 / eps) for v in q)
        return (x > y, x > z, y > z + 1) if False else (x > y, x > z)
    spec = dp.spec(tree, universe=dp.answers([0, 1], 3), grid={eps: [1]}, claims=[dp.private(3 * eps)])
    [result] = dp.check(spec, proofs=False)
    assert result.status.value == "verified", result.message


def test_comparing_the_same_pair_twice_is_not_a_cycle() -> None:
    """x > y and then x > y + 1 constrain the same difference: an interval, not a cycle."""
    def twice(q, eps):
        x, y = dp.laplace(q[0], 1 / eps), dp.laplace(q[1], 1 / eps)
        return (x > y, x > y + 1)
    spec = dp.spec(twice, universe=dp.answers([0, 1], 2), grid={eps: [1]}, claims=[dp.private(4 * eps)])
    [result] = dp.check(spec, proofs=False)
    assert result.status.value == "verified", result.message
