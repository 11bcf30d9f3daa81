"""The documentation site builds without a warning, and its examples run and print what they show.

Conventions of the pages (docs/*.md and README.md), kept deliberately small:

* a fenced block ```` ```python title="spec/first.py" ```` is a file: it is written, under that
  relative path, into a fresh directory of the page (a later block with the same title replaces it);
* a fenced block ```` ```python ```` without a title is run with ``exec`` in one namespace per page,
  in that directory, after the files before it were written;
* a fenced block ```` ```console ```` holds commands after ``$ `` and, below each, lines of what it
  prints: the command is run by bash in that directory and every shown line must appear in its
  output (stdout and stderr), compared with box-drawing characters, durations (``0.32s``) and runs
  of spaces removed, so a table's widths and times do not matter; ``...`` marks lines left out;
* ```` ```py ````, ```` ```bash ```` and other blocks are illustrations: fragments, install commands,
  options to copy; they are not run.
"""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted([ROOT / "README.md", *DOCS.rglob("*.md")])

FENCE = re.compile(r"^(?P<indent>[ ]*)```(?P<lang>[\w-]*)(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=indent)```[ ]*$",
                   re.M | re.S)
TITLE = re.compile(r'title="(?P<title>[^"]+)"')
BOX = re.compile("[\u2500-\u257f]")
SECONDS = re.compile(r"(?<![\w.])\d+(\.\d+)?s\b")


def _blocks(page: Path) -> list[tuple[str, str, str]]:
    """(kind, title, body) of each fenced block that runs: 'file', 'python' or 'console'."""
    found = []
    for match in FENCE.finditer(page.read_text()):
        indent = len(match["indent"])
        body = "\n".join(line[indent:] for line in match["body"].splitlines()) + "\n"
        title = TITLE.search(match["info"])
        if match["lang"] == "python":
            found.append(("file", title["title"], body) if title else ("python", "", body))
        elif match["lang"] == "console":
            found.append(("console", "", body))
    return found


def _normal(text: str) -> str:
    return " ".join(SECONDS.sub(" ", BOX.sub(" ", text)).split())


def _commands(body: str) -> list[tuple[str, list[str]]]:
    """Each ``$ command`` with the lines shown below it."""
    runs: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            runs.append((line[2:], []))
        elif runs and line.strip() and line.strip() != "...":
            runs[-1][1].append(line)
        elif not runs and line.strip():
            raise AssertionError(f"a console block must start with a $ command, not {line!r}")
    return runs


RUNNABLE = [page for page in PAGES if _blocks(page)]


def _id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def test_the_conventions_find_the_examples() -> None:
    """The parser sees the tutorial's files and commands (a broken pattern would pass every page)."""
    kinds = [kind for kind, _, _ in _blocks(DOCS / "tutorial" / "first-mechanism.md")]
    assert kinds.count("file") >= 3 and kinds.count("console") >= 4, kinds
    assert ROOT / "README.md" in RUNNABLE
    assert _normal("│ rr │ private │ 0.32s │\n  x") == "rr private x"


@pytest.mark.parametrize("page", RUNNABLE, ids=_id)
def test_the_examples_of_a_page_run_and_print_what_they_show(page: Path, tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "200", "DPVERIFY_CACHE_DIR": str(tmp_path / ".cache"),
           "PYTHONDONTWRITEBYTECODE": "1"}
    for name in [name for name in env if name.startswith("PYTEST_")]:  # this run's (xdist's, addopts): not the example's
        del env[name]
    namespace: dict = {"__name__": f"docs_example_{page.stem}"}
    for kind, title, body in _blocks(page):
        if kind == "file":
            target = tmp_path / title
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(body)
        elif kind == "python":
            cwd = os.getcwd()
            os.chdir(tmp_path)
            sys.path.insert(0, str(tmp_path))
            try:
                exec(compile(body, f"{_id(page)} (python block)", "exec"), namespace)
            finally:
                sys.path.remove(str(tmp_path))
                os.chdir(cwd)
        else:
            for command, shown in _commands(body):
                done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True,
                                      text=True, timeout=600)
                printed = _normal(done.stdout + "\n" + done.stderr)
                for line in shown:
                    assert _normal(line) in printed, (
                        f"{_id(page)}: `{command}` did not print the line the page shows:\n  {line}\n"
                        f"it printed:\n{done.stdout}\n{done.stderr}")


def test_the_api_reference_documents_every_public_name() -> None:
    import dpverify
    api = (DOCS / "reference" / "api.md").read_text()
    documented = {target.rsplit(".", 1)[-1] for target in re.findall(r"^::: ([\w.]+)", api, re.M)}
    assert not set(dpverify.__all__) - documented, sorted(set(dpverify.__all__) - documented)


def test_the_json_reference_includes_the_schema_file() -> None:
    page = (DOCS / "reference" / "json.md").read_text()
    assert '--8<-- "dpverify/report/check.schema.json"' in page


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None,
                    reason="mkdocs is not installed (pip install -e \".[docs]\"; the dev extra includes it)")
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    cli = (site / "reference" / "cli" / "index.html").read_text()
    for option in ("--max-work", "--no-cache", "--out", "--timings", "--dpverify-dir"):
        assert option in cli, option  # the help texts, put in at build time by docs/_hooks/generated.py
    api = (site / "reference" / "api" / "index.html").read_text()
    assert "P(Z = k) = (a-1)/(a+1) * a^-|k|" in api  # dp.geometric's docstring, read by mkdocstrings
    if (ROOT / "dpverify" / "report" / "check.schema.json").exists():
        assert "schema_version" in (site / "reference" / "json" / "index.html").read_text()
