"""One table of malformed specs.  Each must give exit 2 and one clear message that
names the file, the line (where there is one) and the fix -- never a traceback."""
import textwrap

import pytest
from click.testing import CliRunner

from dpverify.cli import main

HEADER = "import dpverify as dp\nfrom fractions import Fraction\neps = dp.symbol('eps', positive=True)\n"
RR = "def mech(data, eps):\n    return dp.randomized_response(data[0], eps)\n"
UNIVERSE = "dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)"

CASES = {
    "syntax error": ("def mech(data, eps)\n    return 1\n", 4, "syntax"),
    "does not import": ("import not_a_module_anywhere\n", 4, "does not import"),
    "no mechanism": ("x = 1\n", None, "declares no mechanism"),
    "empty universe": (RR + "s = dp.spec(mech, universe=dp.universe([], n=1, neighbours=dp.REPLACE_ONE),"
                       " grid={eps: [1]}, claims=[dp.private(eps)])\n", 6, "no records"),
    "infinite universe": ("import itertools\n" + RR + "s = dp.spec(mech, universe=dp.universe("
                          "itertools.count(), n=1, neighbours=dp.REPLACE_ONE), grid={eps: [1]}, "
                          "claims=[dp.private(eps)])\n", 7, "finite"),
    "NaN parameter": (RR + f"s = dp.spec(mech, universe={UNIVERSE}, grid={{eps: [float('nan')]}},"
                      " claims=[dp.private(eps)])\n", 6, "not a finite number"),
    "non-positive eps": (RR + f"s = dp.spec(mech, universe={UNIVERSE}, grid={{eps: [-1]}},"
                         " claims=[dp.private(eps)])\n", 6, "must be positive"),
    "zero eps": (RR + f"s = dp.spec(mech, universe={UNIVERSE}, grid={{eps: [0]}},"
                 " claims=[dp.private(eps)])\n", 6, "must be positive"),
    "unhashable output": ("def mech(data, eps):\n    return [dp.randomized_response(data[0], eps)]\n"
                          f"s = dp.spec(mech, universe={UNIVERSE}, grid={{eps: [1]}}, "
                          "claims=[dp.private(eps)])\n", 4, "not hashable"),
    "mass not 1": ("def mech(data, eps):\n    return dp.categorical({0: Fraction(1, 2), 1: Fraction(1, 3)})\n"
                   f"s = dp.spec(mech, universe={UNIVERSE}, grid={{eps: [1]}}, "
                   "claims=[dp.private(eps)])\n", 5, "sum to"),
    "too large": (RR + "s = dp.spec(mech, universe=dp.universe(range(12), n=8, neighbours=dp.REPLACE_ONE),"
                  " grid={eps: [1]}, claims=[dp.private(eps)])\n", None, "--max-work"),
    "wrong signature": ("def mech(data, epsilon):\n    return 0\n"
                        f"s = dp.spec(mech, universe={UNIVERSE}, grid={{eps: [1]}}, "
                        "claims=[dp.private(eps)])\n", 6, "does not match"),
    "missing neighbour relation": (RR + "s = dp.spec(mech, universe=dp.universe([0, 1], n=1),"
                                   " grid={eps: [1]}, claims=[dp.private(eps)])\n", 6,
                                   "missing its keyword argument neighbours="),
    "float grid value": (RR + f"s = dp.spec(mech, universe={UNIVERSE}, grid={{eps: [1/3]}},"
                         " claims=[dp.private(eps)])\n", 6, "write Fraction(1, 3)"),
    "float claim": (RR + f"s = dp.spec(mech, universe={UNIVERSE}, grid={{eps: [1]}},"
                    " claims=[dp.private(0.5 * eps)])\n", 6, "write Fraction(1, 2)"),
    "misspelt DSL name": (RR + "c = dp.privat(eps)\n", 6, "did you mean dp.private?"),
    "misspelt keyword": (RR + "c = dp.private(eps, delt=0)\n", 6, "did you mean delta=?"),
    "mechanism raises": ("def mech(data, eps):\n    return 1 // (data[0] - data[0])\n"
                         f"s = dp.spec(mech, universe={UNIVERSE}, grid={{eps: [1]}}, "
                         "claims=[dp.private(eps)])\n", 5, "ZeroDivisionError"),
    "unbounded loop of draws": ("def mech(data, eps):\n    while dp.bernoulli(Fraction(1, 2)):\n        pass\n"
                                "    return 0\n"
                                f"s = dp.spec(mech, universe={UNIVERSE}, grid={{eps: [1]}}, "
                                "claims=[dp.private(eps)])\n", 5, "unbounded loop"),
    "claim symbol not in grid": (RR + "d = dp.symbol('d', positive=True)\n"
                                 f"s = dp.spec(mech, universe={UNIVERSE}, grid={{eps: [1]}},"
                                 " claims=[dp.private(eps, d)])\n", 7, "grid does not give"),
    "profile source not a name": (RR + "c = dp.profile(at=[1], delta=Fraction(1, 10), source=3)\n", 6,
                                  "source=3 is not a name"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_spec_gives_one_clear_error(case: str, tmp_path, monkeypatch) -> None:
    body, line, words = CASES[case]
    path = tmp_path / "bad_spec.py"
    path.write_text(HEADER + textwrap.dedent(body))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "bad_spec.py"])
    text = result.output
    assert result.exit_code == 2, text
    assert "Traceback" not in text
    assert words in text
    assert "bad_spec.py" in text
    if line is not None:
        assert f"bad_spec.py:{line}" in text, text
    assert "fix" in text


def test_missing_path_is_a_usage_error(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "nowhere.py"])
    assert result.exit_code == 2 and "no such file" in result.output


def test_unknown_option_is_a_usage_error() -> None:
    assert CliRunner().invoke(main, ["check", "--frobnicate", "x.py"]).exit_code == 2
