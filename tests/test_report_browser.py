"""An HTML report loads in headless Chromium without console errors and shows the claims table.

Chromium writes every console message (errors, CSP violations, uncaught exceptions)
to stderr as ``INFO:CONSOLE`` lines with ``--enable-logging=stderr``; a page of
ours runs no script, so any such line is a failure.  A control page that does log
an error proves the detector works with the installed Chromium.  Skipped only when
no Chromium binary exists (``.ci/run`` installs Debian's ``chromium``).
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from dpverify.checks import Options
from dpverify.report.model import Settings
from dpverify.report.site import write
from dpverify.runner import check_paths, exit_code

from .test_reports import EVIL

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def _chromium() -> str | None:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary on PATH or at /usr/bin/chromium "
                                "(install Debian's chromium package, as .ci/run does)")


def load(page: Path, profile: Path) -> tuple[str, list[str]]:
    """The DOM after loading ``page`` headless, and the console messages it produced."""
    assert CHROMIUM is not None
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
               "--enable-logging=stderr", "--v=0", "--dump-dom", page.resolve().as_uri()]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail(f"chromium did not load {page.name} within 120 s")
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, console


def test_the_console_detector_sees_errors(tmp_path: Path) -> None:
    control = tmp_path / "control.html"
    control.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"><title>c</title></head><body>'
                       '<script>console.error("dpverify-control-error")</script></body></html>')
    _, console = load(control, tmp_path / "profile")
    assert any("dpverify-control-error" in line for line in console), console


def test_report_page_loads_cleanly_and_shows_the_claims(tmp_path: Path) -> None:
    spec = tmp_path / "evil.py"
    spec.write_text(EVIL)
    report = check_paths([str(spec)], Options())
    out = tmp_path / "out"
    write(report, out, Settings(precision=50, paths=("evil.py",)), exit_code(report))
    for name in ("evil.leaky.html", "index.html"):
        dom, console = load(out / name, tmp_path / f"profile-{name}")
        assert console == [], f"{name} logged to the console:\n" + "\n".join(console)
        table = re.search(r'<table class="claims" id="claims">(.*?)</table>', dom, re.S)
        assert table, f"{name} has no claims table"
        rows = re.findall(r"<tr\b", table.group(1))
        assert len(rows) == 4, rows  # the header and three claims
        for claim in ("half&lt;script&gt;", "private", "acc"):
            assert claim in table.group(1)
        assert "<script" not in dom.lower()  # the spec's <script> strings stayed text
        assert dom.count("<svg") >= (6 if name == "evil.leaky.html" else 0)
