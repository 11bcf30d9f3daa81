"""HTML reports in headless Chromium: they load without console errors, no table is wider than its
box at 1280 and 1600 px, and a refuted claim's witness is on the first screen of its section.

Chromium writes every console message (errors, CSP violations, uncaught exceptions)
to stderr as ``INFO:CONSOLE`` lines with ``--enable-logging=stderr``; a page of
ours runs no script, so any such line is a failure.  A control page that does log
an error proves the detector works with the installed Chromium.

The layout is measured in the browser: a probe page (ours, with a script) frames every
report page at each width (an iframe is a viewport of exactly that size) and writes
the measurements into its DOM, which ``--dump-dom`` prints.  The report pages stay as
they are, scripts forbidden by their Content-Security-Policy.

Skipped only when no Chromium binary exists and neither ``CI`` nor
``DPVERIFY_REQUIRE_BROWSER`` is set; in CI a missing browser fails (``.ci/run`` installs
Debian's ``chromium``).
"""
from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from dpverify.checks import Options
from dpverify.report.model import Settings
from dpverify.report.site import write
from dpverify.runner import check_paths, exit_code

from .test_reports import DENSITY, EVIL, FORMULA, LONG_FORMULA

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
WIDTHS = (1280, 1600)
HEIGHT = 800  # the first screen of a laptop


def _chromium() -> str | None:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


CHROMIUM = _chromium()
REQUIRED = bool(os.environ.get("CI") or os.environ.get("DPVERIFY_REQUIRE_BROWSER"))
MISSING = ("no chromium binary on PATH or at /usr/bin/chromium (install Debian's chromium package, as "
           ".ci/run does)")
pytestmark = pytest.mark.skipif(CHROMIUM is None and not REQUIRED, reason=MISSING)


def _command(profile: Path, *extra: str) -> list[str]:
    if CHROMIUM is None:
        pytest.fail(f"{MISSING}; CI or DPVERIFY_REQUIRE_BROWSER is set, so the browser test may not be skipped",
                    pytrace=False)
    return [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}", *extra]


def load(page: Path, profile: Path, *extra: str) -> tuple[str, list[str]]:
    """The DOM after loading ``page`` headless, and the console messages it produced."""
    command = _command(profile, "--enable-logging=stderr", "--v=0", *extra, "--dump-dom", page.resolve().as_uri())
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        pytest.fail(f"chromium did not load {page.name} within 180 s")
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, console


def test_the_console_detector_sees_errors(tmp_path: Path) -> None:
    control = tmp_path / "control.html"
    control.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"><title>c</title></head><body>'
                       '<script>console.error("dpverify-control-error")</script></body></html>')
    _, console = load(control, tmp_path / "profile")
    assert any("dpverify-control-error" in line for line in console), console


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report of specs with refuted privacy (discrete and density), formula and sensitivity claims,
    and formulas long enough to test the claims table's width."""
    specs = tmp_path_factory.mktemp("browser-specs")
    for name, text in (("evil.py", EVIL), ("formula.py", FORMULA), ("density.py", DENSITY),
                       ("long.py", LONG_FORMULA)):
        (specs / name).write_text(text)
    report = check_paths([str(specs)], Options())
    out = specs.parent / "browser-out"
    write(report, out, Settings(precision=50, paths=("specs/",)), exit_code(report))
    return out


def test_report_page_loads_cleanly_and_shows_the_claims(site: Path, tmp_path: Path) -> None:
    for name in ("evil.leaky.html", "index.html"):
        dom, console = load(site / name, tmp_path / f"profile-{name}")
        assert console == [], f"{name} logged to the console:\n" + "\n".join(console)
        tables = re.findall(r'<table class="claims"[^>]*>(.*?)</table>', dom, re.S)
        assert tables, f"{name} has no claims table"
        if name == "evil.leaky.html":
            rows = re.findall(r"<tr\b", tables[0])
            assert len(rows) == 4, rows  # the header and three claims
        for claim in ("half&lt;script&gt;", "private", "acc"):
            assert claim in "".join(tables)
        assert "<script" not in dom.lower()  # the spec's <script> strings stayed text
        assert dom.count("<svg") >= (6 if name == "evil.leaky.html" else 0)


PROBE = textwrap.dedent("""\
    <!DOCTYPE html><html><head><meta charset="utf-8"><title>probe</title></head><body>
    FRAMES
    <script>
    window.addEventListener("load", () => {
      const out = [];
      for (const frame of document.querySelectorAll("iframe")) {
        const doc = frame.contentDocument, win = frame.contentWindow;
        const m = {page: frame.dataset.page, width: win.innerWidth, height: win.innerHeight,
                   pageScroll: doc.documentElement.scrollWidth - doc.documentElement.clientWidth,
                   tables: [], refuted: [], badges: [],
                   firstWitness: null, hasRefuted: !!doc.querySelector('section.claim[data-status="refuted"]'),
                   pageHeight: doc.documentElement.scrollHeight};
        const first = doc.querySelector(".witness");
        if (first) m.firstWitness = first.getBoundingClientRect().top + win.scrollY;
        for (const t of doc.querySelectorAll("table")) {
          const box = t.parentElement;
          m.tables.push({table: t.id || t.className || t.querySelector("th")?.textContent || "",
                         scroll: box.scrollWidth, client: box.clientWidth,
                         width: t.getBoundingClientRect().width, parent: box.getBoundingClientRect().width});
        }
        for (const b of doc.querySelectorAll("table.claims .badge")) {  // a status badge inside its cell
          const cell = b.closest("td").getBoundingClientRect(), badge = b.getBoundingClientRect();
          m.badges.push({text: b.textContent, inside: badge.left >= cell.left && badge.right <= cell.right});
        }
        for (const s of doc.querySelectorAll('section.claim[data-status="refuted"]')) {
          const w = s.querySelector(".witness");
          m.refuted.push({claim: s.id,
                          offset: w ? w.getBoundingClientRect().top - s.getBoundingClientRect().top : null});
        }
        out.push(m);
      }
      const pre = document.createElement("pre");
      pre.id = "measurements";
      pre.textContent = JSON.stringify(out);
      document.body.appendChild(pre);
    });
    </script></body></html>
""")


def measure(pages: list[Path], tmp_path: Path) -> list[dict[str, Any]]:
    """Each page framed at each width in ``WIDTHS`` (viewport height ``HEIGHT``), measured."""
    frames = "\n".join(f'<iframe data-page="{html.escape(p.name)}" src="{html.escape(p.resolve().as_uri())}" '
                       f'style="width:{w}px;height:{HEIGHT}px;border:0;display:block"></iframe>'
                       for p in pages for w in WIDTHS)
    probe = tmp_path / "probe.html"
    probe.write_text(PROBE.replace("FRAMES", frames))
    dom, console = load(probe, tmp_path / "profile-probe", "--allow-file-access-from-files",
                        "--window-size=1700,900", "--virtual-time-budget=10000")
    found = re.search(r'<pre id="measurements">(.*?)</pre>', dom, re.S)
    assert found, f"the probe wrote no measurements: {console}"
    return json.loads(html.unescape(found.group(1)))


def test_tables_fit_and_witnesses_come_first(site: Path, tmp_path: Path) -> None:
    pages = sorted(site.glob("*.html"))
    measured = measure(pages, tmp_path)
    assert len(measured) == len(pages) * len(WIDTHS)
    assert {m["width"] for m in measured} == set(WIDTHS) and {m["height"] for m in measured} == {HEIGHT}
    overflowing = [(m["page"], m["width"], t) for m in measured for t in m["tables"]
                   if t["scroll"] > t["client"] or t["width"] > t["parent"] + 0.5]
    assert not overflowing, f"tables wider than their box: {overflowing}"
    assert not [(m["page"], m["width"]) for m in measured if m["pageScroll"] > 0], "a page scrolls sideways"
    badges = [(m["page"], m["width"], b["text"]) for m in measured for b in m["badges"]]
    assert len(badges) >= 2 * 9 * len(WIDTHS)  # each claim in its page and in the index
    assert not [b for m in measured for b in m["badges"] if not b["inside"]], "status badges cut by their cell"
    refuted = [(m["page"], m["width"], r) for m in measured for r in m["refuted"]]
    assert len({(page, r["claim"]) for page, _, r in refuted}) >= 5  # privacy, density, formula, sensitivity
    late = [(page, width, r) for page, width, r in refuted if r["offset"] is None or r["offset"] >= HEIGHT]
    assert not late, f"witnesses below the first screen of their section: {late}"
    assert sum(len(m["tables"]) for m in measured if m["page"] == "index.html") >= 2 * len(WIDTHS)


def test_a_refuted_page_answers_first(site: Path, tmp_path: Path) -> None:
    """The verdict and the first witness (pair, output, both probabilities, the ratio against the claimed
    bound) are on the first screen of a refuted page: the witness box's top is inside the 1280x800 (and
    1600x800) viewport, above the claims table, the plots and the derivations."""
    pages = [p for p in sorted(site.glob("*.html")) if p.name != "index.html"]
    measured = measure(pages, tmp_path)
    refuted = [m for m in measured if m["hasRefuted"]]
    assert len({m["page"] for m in refuted}) >= 4, [m["page"] for m in measured]
    late = [(m["page"], m["width"], m["firstWitness"]) for m in refuted
            if m["firstWitness"] is None or m["firstWitness"] >= HEIGHT]
    assert not late, f"refuted pages whose first witness is below the first screen: {late}"
    for page in {m["page"] for m in refuted}:
        text = (site / page).read_text()
        assert text.index('class="witness') < text.index('id="claims"') < text.index('<section class="claim"')
