"""Packaging: the license metadata, `python -m dpverify`, and a CI example that installs dpverify in
a way that works (dpverify is not on the package index, so `pip install dpverify` fails).

The wheel build is marked `slow`: it builds in an isolated environment (pip fetches setuptools).
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / "docs" / "github-actions-dpverify.yml"
BARE_INSTALL = re.compile(r"\bpip install\s+(-\S+\s+)*dpverify(?![\w./-])")
"""`pip install dpverify`, with or without options or a version pin: a name on the package index."""


def _run_lines(text: str) -> list[str]:
    """The shell lines of a workflow's steps: every `run:` value, one-line or block."""
    lines, block_indent = [], None
    for line in text.splitlines():
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if block_indent is not None:
            if stripped and indent <= block_indent:
                block_indent = None
            elif stripped and not stripped.startswith("#"):
                lines.append(stripped)
                continue
        match = re.match(r"\s*(-\s+)?run:\s*(.*)$", line)
        if match:
            value = match.group(2).strip()
            if value in ("|", ">", "|-", ">-"):
                block_indent = indent
            elif value:
                lines.append(value)
    return lines


def test_the_ci_example_never_installs_dpverify_from_the_package_index() -> None:
    runs = _run_lines(WORKFLOW.read_text())
    assert any(line.startswith("dpverify check spec/") for line in runs), runs  # the parser sees the steps
    assert not [line for line in runs if BARE_INSTALL.search(line)], runs


def test_the_ci_example_installs_the_checkout_it_makes() -> None:
    text = WORKFLOW.read_text()
    assert 'pip install "./dpverify-src[dev]"' in _run_lines(text)  # [dev]: pytest, for `pytest spec/`
    checkout = text[text.index("Check out dpverify"):text.index("Install dpverify")]
    assert "uses: actions/checkout@" in checkout
    assert re.search(r"repository:\s*\$\{\{\s*vars\.DPVERIFY_REPOSITORY\s*\}\}", checkout), checkout
    assert re.search(r"path:\s*dpverify-src\s*$", checkout, re.M), checkout


def test_the_readme_never_tells_to_install_dpverify_from_the_package_index() -> None:
    readme = (ROOT / "README.md").read_text()
    commands = [line.strip() for line in readme.splitlines() if line.strip().startswith("pip install")]
    assert commands and not [line for line in commands if BARE_INSTALL.match(line)], commands
    top = readme.split("\n## ")[0]
    assert 'pip install -e ".[dev]"' in top and "clone" in top


def test_the_bare_install_pattern_catches_what_it_should() -> None:
    for bad in ("pip install dpverify", "pip install -q dpverify==0.1.0", "pip install dpverify[dev]"):
        assert BARE_INSTALL.search(bad), bad
    for good in ("pip install ./dpverify-src", 'pip install "./dpverify-src[dev]"', "pip install tools/dpverify-0.1.0-py3-none-any.whl",
                 "pip install -e .", "pip install dpverify-src/"):
        assert not BARE_INSTALL.search(good), good


def test_the_license_is_declared_as_an_spdx_expression() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    meta = project["project"]
    assert meta["license"] == "MIT" and meta["license-files"] == ["LICENSE"]
    assert not [c for c in meta["classifiers"] if c.startswith("License ::")]  # setuptools refuses both
    assert any(req.replace(" ", "") == "setuptools>=77" for req in project["build-system"]["requires"])
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "Copyright (c) 2026 the dpverify authors" in text


def _python_m(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpverify", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_python_m_dpverify_is_the_command(tmp_path: Path) -> None:
    helped = _python_m("--help", cwd=tmp_path)
    assert helped.returncode == 0, helped.stderr
    assert helped.stdout.startswith("Usage: dpverify ") and "check" in helped.stdout
    missing = _python_m("check", "nonexistent/", cwd=tmp_path)
    assert missing.returncode == 2
    assert "nonexistent/" in missing.stdout + missing.stderr and "Traceback" not in missing.stderr
    command = shutil.which("dpverify")
    if command:  # the console script, where it is on PATH: the same answer
        same = subprocess.run([command, "check", "nonexistent/"], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)
        assert (same.returncode, same.stdout, same.stderr) == (2, missing.stdout, missing.stderr)


def test_python_m_dpverify_gives_the_exit_code_of_a_refutation(tmp_path: Path) -> None:
    (tmp_path / "false.py").write_text("import dpverify as dp\nx = dp.symbol('x')\n"
                                       "s = dp.spec(name='s', claims=[dp.inequality(x**2 + 1, 0, id='c')])\n")
    done = _python_m("check", "false.py", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "refuted" in done.stdout


@pytest.mark.slow
def test_the_wheel_carries_license_templates_and_types(tmp_path: Path) -> None:
    """Built from a copy of the sources, so the build leaves nothing in the checkout."""
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "dpverify", source / "dpverify", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "dist"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = out.glob("dpverify-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        fields = archive.read(metadata).decode()
    assert re.search(r"^License-Expression: MIT$", fields, re.M), fields[:600]
    assert re.search(r"^License-File: LICENSE$", fields, re.M), fields[:600]
    assert [n for n in names if re.search(r"\.dist-info/licenses/LICENSE$", n)], names
    assert "dpverify/py.typed" in names and "dpverify/__main__.py" in names
    templates = {n for n in names if n.startswith("dpverify/report/templates/")}
    on_disk = {p.relative_to(ROOT).as_posix() for p in (ROOT / "dpverify/report/templates").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    assert on_disk and templates == on_disk, on_disk ^ templates
