"""`dpverify check --json` against its JSON Schema (dpverify/report/check.schema.json, draft 2020-12).

Real documents of the command, run as a process (the CI form: no terminal, progress on stderr), on
small spec folders holding every outcome: proved, refuted as expected, refuted unexpectedly, unknown,
an error in a claim and a spec file that does not load.  The schema must accept them, reject
malformed documents, describe every key, and pin the number form (real values as strings: exact, or
40 significant digits; an exact zero "0").  jsonschema is in the dev extra.
"""
from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Iterator

import jsonschema
import pytest

from dpverify.report.json_report import SCHEMA_VERSION, schema

RR = textwrap.dedent("""
    from sympy import Rational
    import dpverify as dp
    eps = dp.symbol("eps", positive=True)

    def rr(data, eps):
        return dp.randomized_response(data[0], eps)

    s = dp.spec(rr, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                grid={eps: [Rational(1, 2), 1]}, claims=[CLAIMS])
""")

UNKNOWN = textwrap.dedent("""
    from sympy import Rational
    import dpverify as dp

    def rr(data):
        return dp.randomized_response(data[0], Rational(1, 2))

    s = dp.spec(rr, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                claims=[dp.profile(at=[50], delta=Rational(1, 10), times=1000)])
""")

FORMULA = textwrap.dedent("""
    import sympy
    import dpverify as dp
    x = dp.symbol("x")
    r = dp.symbol("r", positive=True)
    s = dp.spec(name="hinge", claims=[
        dp.identity(sympy.Max(r - x, 0), r - x, where=[x <= r], id="on_the_left"),
        dp.identity(sympy.Max(r - x, 0), r - x, id="everywhere", expect="refuted"),
    ])
""")

EXITS = RR.replace("return dp.randomized_response(data[0], eps)", "raise SystemExit(3)").replace("CLAIMS", "dp.private(eps)")

FOLDERS = {
    # every claim as expected: exit 0
    "holds": {"rr.py": RR.replace("CLAIMS", "dp.private(eps), dp.private(eps / 2, id='half', expect='refuted')"),
              "hinge.py": FORMULA},
    # refuted unexpectedly, and unknown (the composition refused by --max-work): exit 1
    "fails": {"rr.py": RR.replace("CLAIMS", "dp.private(eps / 3, id='third')"), "composed.py": UNKNOWN},
    # a spec file that does not load, and a claim whose mechanism exits: exit 2
    "errors": {"broken.py": "import dpverify as dp\ns = dp.spec(undefined_name)\n", "exits.py": EXITS,
               "rr.py": RR.replace("CLAIMS", "dp.private(eps)")},
}

EXIT = {"holds": 0, "fails": 1, "errors": 2}


def _check(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpverify", "check", str(folder.name), "--json", "--no-cache",
                           "--max-work", "500000"], cwd=folder.parent, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, dict, str]]:
    """(exit code, document, stderr) of each folder's run."""
    root = tmp_path_factory.mktemp("schema")
    out = {}
    for name, files in FOLDERS.items():
        folder = root / name
        folder.mkdir()
        for file, text in files.items():
            (folder / file).write_text(text)
        done = _check(folder)
        assert "Traceback" not in done.stderr, done.stderr
        out[name] = (done.returncode, json.loads(done.stdout), done.stderr)  # stdout is the document alone
    return out


def _validator() -> jsonschema.Draft202012Validator:
    document_schema = schema()
    jsonschema.Draft202012Validator.check_schema(document_schema)
    return jsonschema.Draft202012Validator(document_schema, format_checker=jsonschema.FormatChecker())


def _points(doc: dict) -> Iterator[tuple[dict, dict, dict]]:
    for spec in doc["specs"]:
        for claim in spec["claims"]:
            for point in claim["points"]:
                yield spec, claim, point


def test_the_schema_is_package_data_and_a_valid_2020_12_schema() -> None:
    from importlib.resources import files
    text = files("dpverify.report").joinpath("check.schema.json").read_text(encoding="utf-8")
    loaded = json.loads(text)
    assert loaded["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(loaded)
    assert loaded["properties"]["schema_version"]["pattern"] == r"^1\.[0-9]+$"


@pytest.mark.parametrize("name", sorted(FOLDERS))
def test_real_documents_are_valid_and_say_their_exit_code(documents, name: str) -> None:
    code, doc, _ = documents[name]
    assert code == EXIT[name], doc
    errors = sorted(_validator().iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])
    assert doc["schema_version"] == SCHEMA_VERSION and doc["exit_code"] == code
    assert doc["totals"]["claims"]["total"] == sum(len(s["claims"]) for s in doc["specs"])
    assert doc["totals"]["points"]["total"] == sum(1 for _ in _points(doc))


def test_every_outcome_is_in_the_documents(documents) -> None:
    """The folders cover what the schema must hold: each outcome, a witness, a spec error."""
    outcomes = {p["outcome"] for name in FOLDERS for _, _, p in _points(documents[name][1])}
    assert {"proved", "refuted as expected", "refuted", "unknown", "error"} <= outcomes, outcomes
    holds = documents["holds"][1]
    assert holds["totals"]["claims"]["refuted_as_expected"] == 2 and holds["totals"]["claims"]["unexpected"] == 0
    assert holds["summary"]["refuted"] == 2  # the old key still counts every refutation, by claim
    fails = documents["fails"][1]["totals"]["claims"]
    assert (fails["refuted_unexpectedly"], fails["unknown"], fails["unexpected"]) == (1, 1, 2)
    errors = documents["errors"][1]
    assert errors["totals"]["spec_errors"] == 1 and errors["totals"]["claims"]["error"] == 1
    assert any("broken.py:2" in s.get("error", "") for s in errors["specs"])
    witnesses = [p["witness"] for name in FOLDERS for _, _, p in _points(documents[name][1]) if p["witness"]]
    assert {w["quantity"] for w in witnesses} == {"probability"}
    assert any(isinstance(w["x"], dict) for w in witnesses)  # the formula's counterexample


def test_every_point_that_holds_has_its_scope_and_no_other_does(documents) -> None:
    """Schema 1.1: "scope" on every point; a label for every verdict that holds, null for the others."""
    seen = set()
    for name in FOLDERS:
        for _, claim, point in _points(documents[name][1]):
            if point["status"] in ("proved", "verified", "consistent"):
                scope = point["scope"]
                assert scope["label"] and scope["short"], point
                assert scope["all_datasets"] is (scope["kind"] == "all datasets" or claim["kind"] == "sensitivity"), scope
                seen.add(scope["kind"])
            else:
                assert point["scope"] is None, point
    assert "formula" in seen and len(seen) >= 2, seen


def _significant(text: str) -> int:
    mantissa = text.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
    return len(mantissa)


def test_real_values_are_strings_exact_or_with_40_significant_digits(documents) -> None:
    seen = []
    for name in FOLDERS:
        for _, _, point in _points(documents[name][1]):
            values = [point[k] for k in ("claimed_epsilon", "claimed_delta", "achieved_epsilon", "achieved_delta")]
            if point["witness"]:
                w = point["witness"]
                values += [w["p"], w["p_prime"]] + ([w["ratio"]] if "ratio" in w else [])
            for value in values:
                if value is None:
                    continue
                assert isinstance(value, str), value
                seen.append(value)
                if re.fullmatch(r"-?[0-9]+(/[0-9]+)?|inf", value):
                    continue  # exact: an integer ("0" for zero) or a fraction
                assert _significant(value) == 40, value
    assert "0" in seen and "0.0" not in seen  # pure DP's delta: one zero, written once
    assert any(_significant(v) == 40 for v in seen)


def _broken(doc: dict, change: Any) -> dict:
    copied = copy.deepcopy(doc)
    change(copied)
    return copied


def _first_point(doc: dict) -> dict:
    return next(p for _, _, p in _points(doc) if p["claimed_epsilon"] is not None)


MALFORMED = {
    "no schema_version": lambda d: d.pop("schema_version"),
    "a key removed from a point": lambda d: _first_point(d).pop("achieved_epsilon"),
    "an undocumented key": lambda d: _first_point(d).update(surprise=1),
    "epsilon as a JSON number": lambda d: _first_point(d).update(claimed_epsilon=0.5),
    "zero written 0.0": lambda d: _first_point(d).update(claimed_delta="0.0"),
    "digits dropped": lambda d: _first_point(d).update(achieved_epsilon="0.5"),
    "an unknown status": lambda d: _first_point(d).update(status="maybe"),
    "an exit code out of the contract": lambda d: d.update(exit_code=3),
    "a count as a string": lambda d: d["summary"].update(proved="1"),
    "a schema of another major version": lambda d: d.update(schema_version="2.0"),
    "a point without its scope": lambda d: _first_point(d).pop("scope"),
    "a scope without its label": lambda d: _first_point(d)["scope"].pop("label"),
    "a scope's all_datasets as a string": lambda d: _first_point(d)["scope"].update(all_datasets="false"),
    "a scope with unknown parameters": lambda d: _first_point(d)["scope"].update(parameters="some"),
}


@pytest.mark.parametrize("what", sorted(MALFORMED))
def test_the_schema_rejects_a_malformed_document(documents, what: str) -> None:
    doc = documents["holds"][1]
    validator = _validator()
    assert validator.is_valid(doc)
    assert not validator.is_valid(_broken(doc, MALFORMED[what])), what


def _properties(node: Any, where: str = "#") -> Iterator[tuple[str, Any]]:
    """Every (location, subschema) named as a property anywhere in the schema."""
    if isinstance(node, dict):
        for name, sub in node.get("properties", {}).items():
            yield f"{where}/properties/{name}", sub
        for key, sub in node.items():
            yield from _properties(sub, f"{where}/{key}")
    elif isinstance(node, list):
        for i, sub in enumerate(node):
            yield from _properties(sub, f"{where}/{i}")


def test_every_key_has_a_description() -> None:
    document_schema = schema()
    keys = list(_properties(document_schema))
    assert len(keys) > 60
    missing = [where for where, sub in keys if not (isinstance(sub, dict) and sub.get("description"))]
    assert not missing, missing
    for name in ("spec", "claim", "point"):
        assert document_schema["$defs"][name]["description"]


def test_every_figures_key_is_described() -> None:
    """figures holds the fields of the evidence types (dpverify/evidence.py): each has a described entry in
    the schema, so a field added there without a description here fails."""
    import dataclasses

    import dpverify.evidence as evidence
    described = schema()["$defs"]["point"]["properties"]["figures"]["properties"]
    types = [t for t in vars(evidence).values() if isinstance(t, type) and dataclasses.is_dataclass(t)
             and issubclass(t, evidence.Evidence)]
    shown_at_the_top = {"claimed_epsilon", "claimed_delta", "achieved_epsilon", "achieved_is_lower_bound",
                        "achieved_delta"}
    fields = {f.name for t in types for f in dataclasses.fields(t)} - shown_at_the_top
    assert fields - set(described) == set(), sorted(fields - set(described))
    assert all(entry["description"] for entry in described.values())


def test_the_figures_of_real_documents_are_described(documents) -> None:
    described = set(schema()["$defs"]["point"]["properties"]["figures"]["properties"])
    keys = {key for name in FOLDERS for _, _, p in _points(documents[name][1]) for key in p["figures"]}
    assert keys and keys <= described, sorted(keys - described)
