"""Spec errors of plain Python say what to write (issue 11, "the front door").

* Floats are refused wherever a spec declares a number -- grid values, claimed
  bounds, populations -- even exactly binary ones (0.5), with the exact value to
  write and the line of the float literal.
* A DSL call that Python refuses (a missing or misspelt keyword, too many
  positional arguments) names the function, the keyword, the signature and an
  example; ``dp.privat`` suggests ``dp.private``.

Each case writes a spec file, loads it as ``dpverify check`` does and asserts the
file:line and the fix of the one message -- never a traceback.
"""
from __future__ import annotations

import inspect
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import dpverify as dp
from dpverify import dsl
from dpverify.cli import main
from dpverify.loader import load

HEADER = """\
import dpverify as dp
from fractions import Fraction
eps = dp.symbol('eps', positive=True)
def mech(data, eps):
    return dp.randomized_response(data[0], eps)
U = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)
"""
FIRST = HEADER.count("\n") + 1  # the first line after the header


def load_error(tmp_path: Path, body: str) -> str:
    """The message of the SpecError that loading HEADER + body gives (it must give one)."""
    path = tmp_path / "bad_spec.py"
    path.write_text(HEADER + textwrap.dedent(body))
    with pytest.raises(dp.SpecError) as info:
        load(path)
    return str(info.value)


def cli_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> str:
    """The output of `dpverify check` on HEADER + body, which must be exit 2 without a traceback."""
    (tmp_path / "bad_spec.py").write_text(HEADER + textwrap.dedent(body))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "bad_spec.py", "--no-proofs"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return result.output


# ----- floats ---------------------------------------------------------------------------------

GRID_FLOATS = {  # value as written -> (the float's repr, what to write, why it is not that value)
    "0.1": ("0.1", "write Fraction(1, 10) (or sympy.Rational(1, 10))",
            "exact binary value 3602879701896397/36028797018963968 is not 1/10"),
    "1/3": ("0.3333333333333333", "write Fraction(1, 3) (or sympy.Rational(1, 3))",
            "exact binary value 6004799503160661/18014398509481984 is not 1/3"),
    "0.5": ("0.5", "write Fraction(1, 2) (or sympy.Rational(1, 2))", "never floats"),
    "2.0": ("2.0", "write 2", "never floats"),
    "1e-10": ("1e-10", "write Fraction(1, 10000000000)", "is not 1/10000000000"),
}


@pytest.mark.parametrize("written", sorted(GRID_FLOATS))
def test_a_float_grid_value_is_refused_with_the_exact_value_at_its_line(written: str, tmp_path, monkeypatch) -> None:
    shown, fix, why = GRID_FLOATS[written]
    body = f"""\
        s = dp.spec(
            mech,
            universe=U,
            grid={{eps: [Fraction(1, 2), {written}]}},
            claims=[dp.private(eps)],
        )
        """
    text = cli_error(tmp_path, monkeypatch, body)
    assert f"bad_spec.py:{FIRST + 3}: eps={shown} is a float" in text, text  # the grid's line, not dp.spec('s
    assert fix in text and why in text


def test_a_float_defined_elsewhere_points_at_its_literal(tmp_path) -> None:
    text = load_error(tmp_path, """\
        VALUES = [1, 0.25]
        s = dp.spec(mech, universe=U, grid={eps: VALUES}, claims=[dp.private(eps)])
        """)
    assert f"bad_spec.py:{FIRST}: eps=0.25 is a float" in text and "write Fraction(1, 4)" in text


CLAIM_FLOATS = {  # a claim written with a float -> words of the error
    "epsilon": ("dp.private(0.5)", "private: epsilon=0.5 is a float", "write Fraction(1, 2)"),
    "epsilon times eps": ("dp.private(0.1 * eps)", "private: epsilon=0.1*eps holds the float 0.1",
                          "write Fraction(1, 10) (or sympy.Rational(1, 10)), e.g. eps/10"),
    "exact float times eps": ("dp.private(1.0 * eps)", "private: epsilon=1.0*eps holds the float 1.0",
                              "write 1, e.g. eps"),
    "delta": ("dp.private(eps, 1/3)", "private: delta=0.3333333333333333 is a float", "write Fraction(1, 3)"),
    "probability": ("dp.probability(lambda data, output: output == 0, at_least=0.25)",
                    "probability: at_least=0.25 is a float", "write Fraction(1, 4)"),
    "population": ("dp.sample_complexity(population={0: 0.5, 1: Fraction(1, 2)}, error=len, alpha=0, beta=0, "
                   "bound=1)", "sample_complexity: population[0]=0.5 is a float", "write Fraction(1, 2)"),
}


@pytest.mark.parametrize("case", sorted(CLAIM_FLOATS))
def test_a_float_in_a_claim_is_refused_with_the_exact_value(case: str, tmp_path) -> None:
    claim, problem, fix = CLAIM_FLOATS[case]
    text = load_error(tmp_path, f"s = dp.spec(mech, universe=U, grid={{eps: [1]}}, claims=[{claim}])\n")
    assert f"bad_spec.py:{FIRST}: {problem}" in text and fix in text, text


def test_exact_numbers_still_load(tmp_path) -> None:
    path = tmp_path / "good_spec.py"
    path.write_text(HEADER + "s = dp.spec(mech, universe=U, grid={eps: [Fraction(1, 10), 1]}, "
                    "claims=[dp.private(eps / 2 * 2, delta=0)])\n")
    (spec,) = load(path)
    assert [str(v) for point in spec.points for _, v in point] == ["1/10", "1"]


# ----- DSL calls that Python refuses ----------------------------------------------------------

def test_a_universe_without_neighbours_lists_the_relations(tmp_path, monkeypatch) -> None:
    text = cli_error(tmp_path, monkeypatch, "V = dp.universe([0, 1], n=2)\n")
    assert f"bad_spec.py:{FIRST}: dp.universe() is missing its keyword argument neighbours=" in text
    for relation in ("dp.REPLACE_ONE", "dp.ADD_REMOVE", "dp.LABEL_ONLY", "dp.l1_one", "dp.linf_one"):
        assert relation in text, relation
    assert "e.g. dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE)" in " ".join(text.split())


def test_a_misspelt_keyword_suggests_the_right_one(tmp_path, monkeypatch) -> None:
    text = cli_error(tmp_path, monkeypatch, "s = dp.spec(mech, universe=U, grid={eps: [1]},\n"
                                            "            claims=[dp.private(eps, delt=0)])\n")
    assert f"bad_spec.py:{FIRST + 1}: dp.private() has no keyword argument delt= (did you mean delta=?)" in text
    assert "dp.private(epsilon, delta=0, *, id=None, expect=None)" in " ".join(text.split())


def test_the_american_spelling_suggests_neighbours(tmp_path) -> None:
    text = load_error(tmp_path, "V = dp.universe([0, 1], n=2, neighbors=dp.REPLACE_ONE)\n")
    assert "dp.universe() has no keyword argument neighbors= (did you mean neighbours=?)" in text


def test_one_claim_not_in_a_list_says_to_write_a_list(tmp_path) -> None:
    text = load_error(tmp_path, "s = dp.spec(mech, universe=U, grid={eps: [1]}, claims=dp.private(eps))\n")
    assert f"bad_spec.py:{FIRST}: spec: claims= is one claim (eps-DP), not a list of claims" in text
    assert "claims=[dp.private(eps)]" in text


def test_too_many_positional_arguments_say_which_are_keywords(tmp_path) -> None:
    text = load_error(tmp_path, "V = dp.universe([0, 1], 2, dp.REPLACE_ONE)\n")
    assert "dp.universe() takes 2 positional arguments but 3 were given" in text
    assert "pass neighbours=, symmetric= by keyword" in text


def test_a_spec_without_claims_shows_an_example(tmp_path) -> None:
    text = load_error(tmp_path, "s = dp.spec(mech, universe=U, grid={eps: [1]})\n")
    assert f"bad_spec.py:{FIRST}: dp.spec() is missing its keyword argument claims=" in text
    assert "e.g. dp.spec(mech, universe=" in text


def _public_functions() -> list[str]:
    return sorted(n for n in dsl.__all__ if inspect.isfunction(getattr(dsl, n)))


@pytest.mark.parametrize("name", _public_functions())
def test_every_dsl_function_names_an_unknown_keyword(name: str, tmp_path) -> None:
    """Whoever wrote the function (a claim, a primitive, a query): an unknown keyword is one SpecError
    naming the function, the keyword and the signature."""
    if any(p.kind is p.VAR_KEYWORD for p in inspect.signature(getattr(dsl, name)).parameters.values()):
        pytest.skip(f"dp.{name} takes any keyword")
    text = load_error(tmp_path, f"x = dp.{name}(zz_unknown=1)\n")
    assert f"bad_spec.py:{FIRST}: dp.{name}() has no keyword argument zz_unknown=" in text, text
    assert f"the call is dp.{name}(" in text


@pytest.mark.parametrize("name", _public_functions())
def test_every_dsl_function_names_a_missing_argument(name: str, tmp_path) -> None:
    required = [p.name for p in inspect.signature(getattr(dsl, name)).parameters.values()
                if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if not required:
        pytest.skip(f"dp.{name} has no required argument")
    text = load_error(tmp_path, f"x = dp.{name}()\n")
    assert f"bad_spec.py:{FIRST}: dp.{name}() is missing its " in text and required[0] in text, text


@pytest.mark.parametrize("written, words", [
    ("positve=True", "symbol('x'): positve= is not an assumption (did you mean positive=?)"),
    ("integer=1", "symbol('x'): integer=1 is not True or False"),
])
def test_a_misspelt_assumption_is_not_silently_ignored(written: str, words: str, tmp_path) -> None:
    """sympy keeps Symbol('x', positve=True) and ignores it: x would not be positive."""
    text = load_error(tmp_path, f"x = dp.symbol('x', {written})\n")
    assert f"bad_spec.py:{FIRST}: {words}" in text, text


DECLARATIONS = ["universe", "labelled", "answers", "symbol", "spec", "private", "same_distribution", "identity",
                "inequality", "sensitivity", "probability", "accuracy", "stability", "private_prediction",
                "sample_complexity"]


@pytest.mark.parametrize("name", DECLARATIONS)
def test_declarations_show_an_example_call(name: str) -> None:
    example = getattr(getattr(dp, name), "call_example")
    assert example.startswith(f"dp.{name}(")


def test_a_spec_function_of_the_same_name_is_not_taken_for_the_dsl(tmp_path) -> None:
    text = load_error(tmp_path, "def universe(records):\n    return records\nV = universe([0], 1)\n")
    assert "TypeError: universe() takes 1 positional argument but 2 were given" in text
    assert "dp.universe" not in text


# ----- names dpverify does not have -----------------------------------------------------------

@pytest.mark.parametrize("written, suggestion", [("dp.privat", "dp.private"), ("dp.Laplace", "dp.laplace"),
                                                 ("dp.REPLACE_ON", "dp.REPLACE_ONE"),
                                                 ("dp.dsl.privat", "dpverify.dsl.private")])
def test_a_misspelt_name_suggests_the_closest(written: str, suggestion: str, tmp_path, monkeypatch) -> None:
    text = cli_error(tmp_path, monkeypatch, f"c = {written}(eps)\n")
    shown = written.replace("dp.dsl.", "dpverify.dsl.")
    assert f"bad_spec.py:{FIRST}: {shown} does not exist (did you mean {suggestion}?)" in text, text
    assert f"fix: write {suggestion}" in text


def test_a_name_with_no_close_match_points_at_the_list(tmp_path) -> None:
    text = load_error(tmp_path, "c = dp.qqqqqqqq\n")
    assert "dp.qqqqqqqq does not exist" in text and "dpverify.__all__" in text


def test_the_explanation_works_for_errors_caught_outside_the_loader() -> None:
    """dsl_misuse reads only the exception: a mechanism's own run (where the engine catches it) can use it."""
    from dpverify.errors import dsl_misuse

    def mech():
        return dp.randomized_response(0, 1, valus=(0, 1))

    with pytest.raises(TypeError) as info:
        mech()
    err = dsl_misuse(info.value)
    assert err is not None and "dp.randomized_response() has no keyword argument valus= (did you mean values=?)" in str(err)
    with pytest.raises(AttributeError) as missing:
        dp.randomised_response  # noqa: B018
    assert "did you mean dp.randomized_response?" in str(dsl_misuse(missing.value))


# ----- the same help for DSL misuse inside a mechanism, found at run time --------------------

@pytest.mark.parametrize("call, says, fix", [
    ("dp.randomized_response(data[0], eps, valus=(0, 1))",
     "dp.randomized_response() has no keyword argument valus= (did you mean values=?)", "write values="),
    ("dp.randomised_response(data[0], eps)",
     "dp.randomised_response does not exist (did you mean dp.randomized_response?)", "write dp.randomized_response"),
])
def test_dsl_misuse_inside_a_mechanism_says_what_to_write(tmp_path, monkeypatch, call, says, fix) -> None:
    body = f"""
    def wrong(data, eps):
        return {call}
    s = dp.spec(wrong, universe=U, grid={{eps: [1]}}, claims=[dp.private(eps)])
    """
    output = cli_error(tmp_path, monkeypatch, body)
    line = FIRST + 2  # the call's line inside the mechanism
    assert f"bad_spec.py:{line}: {says}" in " ".join(output.split()), output
    assert fix in output and "the mechanism raised" not in output
