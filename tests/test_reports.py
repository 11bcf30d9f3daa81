"""`dpverify report`: the committed reports/ are up to date, and reports are deterministic,
escaped, show witnesses, and survive claim kinds they do not know."""
from __future__ import annotations

import ast
import difflib
import html
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sympy
from click.testing import CliRunner

from dpverify.checks import Options
from dpverify.cli import main
from dpverify.report import html as html_writer
from dpverify.report import markdown as markdown_writer
from dpverify.report import maths, sections
from dpverify.report import site as site_module
from dpverify.report.blocks import Paragraph
from dpverify.report.markdown import escape, fence
from dpverify.report.model import Settings, environment
from dpverify.report.site import render, write
from dpverify.runner import check_paths, exit_code

REPO = Path(__file__).resolve().parent.parent
COMMAND = "dpverify report spec/ --out reports/"  # the README names this command

EVIL = textwrap.dedent('''
    from dataclasses import dataclass
    from sympy import Rational
    import dpverify as dp
    from dpverify.dsl.claims import Claim

    eps = dp.symbol("eps", positive=True)


    def leaky(data, eps):
        """<script>alert('doc')</script> *not bold* _x_ [link](javascript:alert(1)) | `tick` $x$
        # not a heading
        1. not a list
        """
        bit = dp.randomized_response(data[0], eps)
        return "<script>alert('out')</script>" if bit == 1 else "a|b*`c`"


    @dataclass(frozen=True)
    class Accuracy(Claim):
        """A kind of claim no check (and no report section) knows yet."""
        kind = "accuracy"

        def describe(self):
            return "accurate <b>enough</b>"


    broken = dp.spec(leaky, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                     grid={eps: [Rational(1, 2), 1]},
                     claims=[dp.private(eps / 2, id="half<script>"), dp.private(eps), Accuracy(id="acc")])
''')

SAMPLE = textwrap.dedent('''
    from fractions import Fraction
    from sympy import Rational
    import dpverify as dp

    eps = dp.symbol("eps", positive=True)
    POPULATION = {(x, int(x >= 2)): Fraction(1, 3) for x in (0, 1, 2)}

    def learner(data, eps):
        errors = {t: sum(int(x >= t) != y for x, y in data) for t in (0, 1, 2, 3)}
        return dp.exponential((0, 1, 2, 3), lambda t: -Fraction(errors[t], len(data)), eps,
                              sensitivity=Fraction(1, len(data)))

    def true_error(t):
        return sum(p for (x, y), p in POPULATION.items() if int(x >= t) != y)

    def claim(bound, id):
        return dp.sample_complexity(population=POPULATION, error=true_error, alpha=Rational(1, 4),
                                    beta=Rational(1, 4), bound=bound, id=id)

    thresholds = dp.spec(learner, universe=dp.universe(list(POPULATION), n=1, neighbours=dp.REPLACE_ONE),
                         grid={eps: [1]}, claims=[claim(30, "enough"), claim(1, "too_few")])
''')

FORMULA = textwrap.dedent('''
    import dpverify as dp
    x = dp.symbol("x")
    wrong = dp.spec(name="wrong", claims=[dp.identity((x + 1) ** 2, x ** 2 + 1, id="square")])
''')


DENSITY = textwrap.dedent('''
    import dpverify as dp

    eps = dp.symbol("eps", positive=True)
    m = dp.symbol("m", integer=True, positive=True)
    mean = dp.mean(lambda v: v, domain=dp.interval(0, 1))


    def noisy(data, eps):
        return dp.laplace(data[0], 1 / eps)


    wrong_scale = dp.spec(noisy, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE), grid={eps: [1]},
                          claims=[dp.private(eps / 2, id="half")])
    sens = dp.spec(name="sens", claims=[dp.sensitivity(mean, 1 / m, n=m, neighbours=dp.REPLACE_ONE, id="exact"),
                                        dp.sensitivity(mean, 1 / (2 * m), n=m, neighbours=dp.REPLACE_ONE,
                                                       id="small")])
''')

LONG_FORMULA = textwrap.dedent('''
    import sympy
    import dpverify as dp

    x, y, t = dp.symbol("x"), dp.symbol("y"), dp.symbol("t")
    b, r = dp.symbol("b", positive=True), dp.symbol("r", positive=True)


    def f(margin):
        return sympy.Max(-b * (r + margin) + r, sympy.Max(b * (margin - r), r - margin))


    hinge = dp.spec(name="hinge", claims=[
        dp.inequality(f(t * x + (1 - t) * y), t * f(x) + (1 - t) * f(y), where=[b > 1, t >= 0, t <= 1],
                      id="convex_barrier_hinge_loss_for_every_margin_pair"),
        dp.identity(f(x) + f(-x), 2 * r, where=[b > 1], id="symmetric_everywhere")])
''')

@pytest.fixture(scope="module")
def evil(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("specs") / "evil.py"
    path.write_text(EVIL)
    return path


@pytest.fixture(scope="module")
def evil_files(evil: Path) -> dict[str, str]:
    report = check_paths([str(evil)], Options())
    return render(report, Settings(precision=50, paths=("evil.py",)), exit_code(report))


# ----- the committed report ------------------------------------------------------------------

def _normalise(name: str, text: str, versions: set[str]) -> str:
    """Drop what depends on the installed plotting and numeric libraries, not on the catalogue."""
    if name.endswith(".svg"):
        return ""
    if name == "report.json":
        data = json.loads(text)
        data.get("report", {}).pop("environment", None)
        return json.dumps(data, indent=2, ensure_ascii=False)
    text = re.sub(r"<svg\b.*?</svg>", "<svg/>", text, flags=re.S)
    for version in sorted(versions, key=len, reverse=True):
        text = text.replace(version, "<version>")
    return text


LONG_NUMBER = re.compile(r"\d{8,}")


def _long_numbers_masked(files: dict[str, str]) -> dict[str, str]:
    """The report with every run of eight or more digits read as one token: the accountants the
    specs in spec/accounting/ call (dp_accounting's FFT) answer in float64 whose last bit depends on
    the CPU's vector instructions (a delta one ulp apart on an AVX-512 FP16 machine), and that answer is
    the claim's statement, so its long digits differ between the machine that regenerated reports/
    and CI.  Statuses, messages, counts and every shorter number are still compared exactly; the
    numbers themselves are checked by the spec and accounting tests, not here."""
    return {name: LONG_NUMBER.sub("#", text) for name, text in files.items()}


def _sampled_unseeded(files: dict[str, str]) -> dict[str, str]:
    """The report with what an unseeded black box (``unseeded=True``: OpenDP's samplers draw from the
    operating system) sampled left out: its specs' pages and figures are compared by name only, and
    in report.json its claims by id, status and expectation -- its counts differ on every run, its
    verdicts (at error probability 1e-9) do not."""
    try:
        doc = json.loads(files.get("report.json", ""))
    except ValueError:
        return files
    stems = set()
    for spec in doc.get("specs", []):
        if any(point.get("figures", {}).get("reproducible") is False
               for claim in spec.get("claims", []) for point in claim.get("points", [])):
            stems.update(page.rsplit(".", 1)[0] for page in spec.get("pages", {}).values())
            spec["claims"] = [{k: claim.get(k) for k in ("id", "status", "expect")} for claim in spec["claims"]]
    if not stems:
        return files
    out = dict(files, **{"report.json": json.dumps(doc, indent=2, ensure_ascii=False)})
    for name in files:
        stem = name.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        if stem in stems or any(stem.startswith(s + "-") for s in stems):
            out[name] = ""
    return out


TIME_LIMITS = ("budget", "time limit", "gave up", "timeout")


def _ran_out_of_time(fresh: str, old: str) -> list[str]:
    """Points whose regenerated message blames a time limit (the committed one does not): their
    verdict depends on the machine's load, not on the catalogue."""
    def messages(text: str) -> dict[tuple, str]:
        try:
            doc = json.loads(text)
        except ValueError:
            return {}
        return {(s["name"], c["id"], json.dumps(p["params"], sort_keys=True)): p["message"]
                for s in doc.get("specs", []) for c in s.get("claims", []) for p in c.get("points", [])}
    new, before = messages(fresh), messages(old)
    return [f"{k[0]}:{k[1]} {k[2]}" for k, m in sorted(new.items())
            if any(t in m for t in TIME_LIMITS) and before.get(k) != m]


def test_reports_directory_is_up_to_date(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    committed = REPO / "reports"
    assert committed.is_dir(), f"reports/ is missing: run `{COMMAND}` in the repository root"
    monkeypatch.chdir(REPO)
    out = tmp_path / "reports"
    result = CliRunner().invoke(main, ["report", "spec/", "--out", str(out)])
    assert (out / "report.json").is_file(), result.output  # (a red catalogue is the spec tests' business)
    fresh = {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8") for p in out.rglob("*") if p.is_file()}
    old = {p.relative_to(committed).as_posix(): p.read_text(encoding="utf-8")
           for p in committed.rglob("*") if p.is_file()}
    recorded = json.loads(old.get("report.json", "{}")).get("report", {}).get("environment")
    if recorded != dict(environment()):  # other library versions draw other SVG bytes: compare the rest
        versions = {v for k, v in [*environment(), *(recorded or {}).items()] if k != "dpverify"}
        fresh = {k: _normalise(k, v, versions) for k, v in fresh.items()}
        old = {k: _normalise(k, v, versions) for k, v in old.items()}
    fresh, old = _sampled_unseeded(fresh), _sampled_unseeded(old)
    fresh, old = _long_numbers_masked(fresh), _long_numbers_masked(old)
    missing, extra = sorted(set(fresh) - set(old)), sorted(set(old) - set(fresh))
    changed = sorted(k for k in set(fresh) & set(old) if fresh[k] != old[k])
    if missing or extra or changed:
        slow = _ran_out_of_time(fresh.get("report.json", ""), old.get("report.json", ""))
        if slow:
            pytest.skip(f"a time limit ran out while regenerating the report (a loaded machine?): {slow[:5]}")
        first = changed[0] if changed else None
        diff = "" if first is None else "\n".join(list(difflib.unified_diff(
            old[first].splitlines(), fresh[first].splitlines(), f"reports/{first}", "regenerated", lineterm=""))[:40])
        pytest.fail(f"reports/ is stale: run `{COMMAND}` in the repository root and commit the result.\n"
                    f"new files: {missing[:10]}\nfiles to remove: {extra[:10]}\nchanged: {changed[:10]}\n{diff}",
                    pytrace=False)


# ----- properties of any report --------------------------------------------------------------

def test_two_renders_are_identical(evil: Path, evil_files: dict[str, str]) -> None:
    report = check_paths([str(evil)], Options())
    again = render(report, Settings(precision=50, paths=("evil.py",)), exit_code(report))
    assert again == evil_files


def test_same_bytes_across_processes_and_hash_seeds(evil: Path, tmp_path: Path) -> None:
    outs = []
    for seed in ("1", "2"):
        out = tmp_path / f"r{seed}"
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run([sys.executable, "-m", "dpverify.cli", "report", evil.name, "--out", str(out)],
                              cwd=evil.parent, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 1, done.stderr  # the spec has an unexpected refutation
        outs.append({p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()})
    assert outs[0] == outs[1]


def test_no_clock_in_the_report(evil_files: dict[str, str]) -> None:
    doc = json.loads(evil_files["report.json"])
    assert all(p["seconds"] is None for s in doc["specs"] for c in s["claims"] for p in c["points"])
    assert "timings" in evil_files["index.md"] and "not recorded" in evil_files["index.md"]
    assert not re.search(r"\d\.\d+s\b", evil_files["evil.leaky.md"])


def test_html_escapes_everything(evil_files: dict[str, str]) -> None:
    for name in ("evil.leaky.html", "index.html"):
        page = evil_files[name]
        assert "<script" not in page.lower() and "<b>enough" not in page
        assert "Content-Security-Policy" in page
    page = evil_files["evil.leaky.html"]
    assert "&lt;script&gt;alert(&#39;doc&#39;)&lt;/script&gt;" in page
    assert "half&lt;script&gt;" in page
    shown = [re.sub(r"\s", "", html.unescape(re.sub(r"<[^>]+>", "", cell)))  # a cell as the reader sees it
             for cell in re.findall(r'<td class="statement">(.*?)</td>', page, re.S)]
    assert "accurate<b>enough</b>" in shown  # typeset or not, the description's markup is text
    for name, svg in evil_files.items():
        if name.endswith(".svg"):
            assert "<script" not in svg.lower()


def test_markdown_renders_user_text_inert(evil_files: dict[str, str]) -> None:
    markdown_it = pytest.importorskip("markdown_it")
    renderer = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table")
    for name in ("evil.leaky.md", "index.md"):
        html = renderer.render(evil_files[name])
        assert "<script" not in html.lower(), name
        assert "<b>enough" not in html and 'href="javascript:' not in html
    html = renderer.render(evil_files["evil.leaky.md"])
    assert "<em>not bold</em>" not in html and "<h1>not a heading" not in html and "<ol>" not in html
    assert "&lt;script&gt;alert('out')&lt;/script&gt;" in html or "&lt;script&gt;alert(&#x27;out" in html
    # the source is in a fenced block, verbatim
    assert "return &quot;&lt;script&gt;alert('out')&lt;/script&gt;&quot;" in html


def test_fence_is_longer_than_any_backtick_run() -> None:
    block = fence("a ``` b ````` c", "python")
    assert block.startswith("``````python\n") and block.endswith("\n``````")


def test_refuted_privacy_claim_shows_its_witness(evil_files: dict[str, str]) -> None:
    md, html = evil_files["evil.leaky.md"], evil_files["evil.leaky.html"]
    for page in (md, html):
        assert "Witness at ε=1/2" in page and "Witness at ε=1" in page
        assert "0.6224593312018545646389005657455084787533" in page  # P(o|X) = e^(1/2) / (1 + e^(1/2))
    assert "](figures/evil.leaky-half_script_-witness-0.svg)" in md
    assert "figures/evil.leaky-half_script_-witness-0.svg" in evil_files
    assert html.count("<svg") >= 6  # epsilon plots, loss histograms, two witness laws
    point = json.loads(evil_files["report.json"])["specs"][0]["claims"][0]["points"][0]
    assert point["figures"]["witness_laws"]["outputs"] and point["witness"]["x"] == [0]


def test_unknown_claim_kind_still_renders(evil_files: dict[str, str]) -> None:
    md = evil_files["evil.leaky.md"]
    assert "### acc (accuracy): **unknown**" in md
    assert "no check supports claims of kind 'accuracy'" in md
    assert 'id="claim-acc"' in evil_files["evil.leaky.html"]


def test_formula_counterexample_and_statement(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "wrong.py").write_text(FORMULA)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["report", "wrong.py", "--out", "out", "--timings"])
    assert result.exit_code == 1, result.output
    md = (tmp_path / "out" / "wrong.wrong.md").read_text()
    assert "#### Counterexample" in md and "left-hand side" in md
    assert "- **statement:** $`\\left(x + 1\\right)^{2} = x^{2} + 1`$" in md and md.count("x^{2} + 1") == 3  # the verdict at the top, the claims table, the claim
    html = (tmp_path / "out" / "wrong.wrong.html").read_text()
    assert "<th>time</th>" in html  # --timings shows per-claim times
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert doc["report"]["timings"] is True and doc["specs"][0]["claims"][0]["points"][0]["seconds"] is not None


def test_exit_codes_and_stale_pages_removed(evil: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(evil.parent)
    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["report", "evil.py", "--out", str(out), "--no-proofs"]).exit_code == 1
    assert (out / "evil.leaky.md").exists() and (out / "index.html").exists()
    (tmp_path / "ok.py").write_text(FORMULA.replace("x ** 2 + 1", "x ** 2 + 2 * x + 1"))
    result = CliRunner().invoke(main, ["report", str(tmp_path / "ok.py"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert not (out / "evil.leaky.md").exists()  # listed by the previous report.json, no longer written
    assert CliRunner().invoke(main, ["report", "missing/", "--out", str(out)]).exit_code == 2


def test_a_new_kind_gets_its_section_from_one_function(evil: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sections.SECTIONS, "accuracy",
                        lambda claim, decl, ctx: [Paragraph(f"{len(claim.points)} points, all {claim.status.value}",
                                                            "accuracy section")])
    report = check_paths([str(evil)], Options(proofs=False))
    files = render(report, Settings(precision=50, proofs=False), exit_code(report))
    assert "**accuracy section:** 2 points, all unknown" in files["evil.leaky.md"]
    assert "<strong>accuracy section:</strong> 2 points, all unknown" in files["evil.leaky.html"]


def test_sample_complexity_shows_the_bound_next_to_the_smallest_n(tmp_path: Path) -> None:
    (tmp_path / "sc.py").write_text(SAMPLE)
    report = check_paths([str(tmp_path / "sc.py")], Options())
    files = render(report, Settings(precision=50), exit_code(report))
    md = files["sc.learner.md"]
    assert "| parameters | status | bound's n | smallest n that works |" in md
    assert re.search(r"\| eps=1 \| verified \| 30 \| \d+ \|", md)
    assert "figures/sc.learner-enough-failure.svg" in files
    assert "#### Counterexample at ε=1" in md  # the bound n = 1 is too small


# ----- the front door: witnesses first, formulas typeset, atomic writes --------------------------

def _claim_section(page: str, anchor: str) -> str:
    """The part of a Markdown or HTML page from a claim's anchor to the next claim's."""
    start = page.index(f'id="{anchor}"')
    following = [i for i in (page.find('<a id="claim-', start + 1), page.find('<section class="claim"', start + 1))
                 if i > 0]
    return page[start:min(following, default=len(page))]


@pytest.fixture(scope="module")
def density_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("density") / "density.py"
    path.write_text(DENSITY)
    report = check_paths([str(path)], Options())
    return render(report, Settings(precision=50), exit_code(report))


def test_witness_comes_first_and_its_sentence_is_said_once(evil_files: dict[str, str]) -> None:
    messages = [p["message"] for p in json.loads(evil_files["report.json"])["specs"][0]["claims"][0]["points"]]
    assert len(messages) == 2
    for name, escaped in (("evil.leaky.md", lambda m: str(markdown_writer.prose(m))),
                          ("evil.leaky.html", lambda m: str(html_writer.prose(m)))):
        page = evil_files[name]
        section = _claim_section(page, "claim-half-script-")
        witness = section.index("Witness at ε=1/2")
        assert witness < section.index("claimed ε") and witness < section.index("Both output laws")
        for message in messages:  # in its witness box, and nowhere else (not the header, not a list)
            assert page.count(escaped(message)) == 1, (name, message)
        assert escaped("> e^ε = 1.284025417 (claimed: ε = 0.25)") in section  # the ratio against e^(eps/2), eps = 1/2
        assert "e<sup>ε</sup>" in section and "e^" not in section.replace("e^{", "")  # raised, no caret
        assert "Messages per grid point" not in section


def test_formulas_are_typeset_not_escaped(evil_files: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "wrong.py").write_text(FORMULA)
    report = check_paths([str(tmp_path / "wrong.py")], Options())
    files = render(report, Settings(precision=50), exit_code(report))
    md, page = files["wrong.wrong.md"], files["wrong.wrong.html"]
    assert "| $`\\left(x + 1\\right)^{2} = x^{2} + 1`$ |" in md
    assert "- **statement:** $`\\left(x + 1\\right)^{2} = x^{2} + 1`$" in md
    statements = [line for text in (md, files["index.md"]) for line in text.splitlines()
                  if "| identity |" in line or line.startswith("- **statement:**")]
    # the page's table and claim; the index's "not as expected" table and its file's table
    assert len(statements) == 4 and not [line for line in statements if "\\*" in line or "\\(" in line]
    cells = re.findall(r'<(?:td|dd) class="statement">(.*?)</(?:td|dd)>', page + files["index.html"], re.S)
    assert len(cells) == 4 and all("<msup>" in c and "**" not in c and "(x + 1)" not in c for c in cells)
    assert "$`\\frac{\\varepsilon}{2}`$-DP" in evil_files["evil.leaky.md"] and "eps/2-DP" not in evil_files["index.md"]
    assert "<mfrac><mi>ε</mi><mn>2</mn></mfrac>" in evil_files["evil.leaky.html"]


def test_mathml_escapes_what_sympy_does_not() -> None:
    markup = maths.mathml(sympy.Symbol("a<b>&c") ** 2 + 1)
    assert "<b>" not in markup and "a&lt;b&gt;&amp;c" in markup
    assert "&InvisibleTimes;" not in maths.mathml(2 * sympy.Symbol("x"))  # entities as characters
    assert maths.inline_markdown(r"\left|x\right|") == r"$`\left\vert x\right\vert`$"


def test_sensitivity_shows_the_claimed_delta_next_to_the_derived(density_files: dict[str, str]) -> None:
    md = density_files["density.sens.md"]
    small = _claim_section(md, "claim-small")
    claimed, derived = small.index("**claimed Δ:**"), small.index("**derived Δ:**")
    assert claimed < derived and "\\frac{1}{2 m}" in small[claimed:derived]
    assert "|q(X) − q(X')| = 1 > 1/2, the claimed Δ at n = 1" in html.unescape(density_files["density.sens.html"])
    assert _claim_section(md, "claim-exact").count("**claimed Δ:**") == 1


def test_density_witness_reads_as_a_density_and_is_plotted(density_files: dict[str, str]) -> None:
    md, page = density_files["density.noisy.md"], density_files["density.noisy.html"]
    assert re.search(r"- \*\*where:\*\* density at v = -?[0-9/]+\n", md)
    assert "density under X" in md and "P(o | X)" not in md
    figure = "figures/density.noisy-half-density-0.svg"
    assert figure in density_files and f"]({figure})" in md
    assert "log ratio" in density_files[figure] and "claimed ε" in density_files[figure]
    assert page.count("<svg") >= 2


def test_a_failed_write_leaves_the_previous_report(evil: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = check_paths([str(evil)], Options(proofs=False))
    out = tmp_path / "reports"
    write(report, out, Settings(precision=50), exit_code(report))
    (out / "README.txt").write_text("not ours")
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def fail(*args: object, **kwargs: object) -> str:
        raise RuntimeError("renderer broke")
    calls = {"n": 0}

    def second_page_fails(site: object, page: object, env: object = None) -> str:
        calls["n"] += 1
        if calls["n"] > 1:
            raise RuntimeError("renderer broke half-way")
        return original(site, page, env)
    original = html_writer.render_page
    monkeypatch.setattr(html_writer, "render_page", second_page_fails)
    monkeypatch.setattr(html_writer, "render_index", fail)
    with pytest.raises(RuntimeError):
        write(report, out, Settings(precision=50, timings=True), exit_code(report))
    monkeypatch.undo()
    renames, real_rename = {"n": 0}, os.rename

    def rename_fails_into_place(src: object, dst: object) -> None:  # the new directory cannot go in
        renames["n"] += 1
        if Path(str(dst)) == out.resolve() and ".new" in str(src):
            raise OSError("disk full")
        real_rename(src, dst)  # type: ignore[arg-type]
    monkeypatch.setattr(site_module.os, "rename", rename_fails_into_place)
    with pytest.raises(OSError):
        write(report, out, Settings(precision=50, timings=True), exit_code(report))
    assert renames["n"] >= 3  # aside, (refused) in, back
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reports"]  # no temporary directory left


def test_a_write_replaces_the_report_and_keeps_other_files(evil: Path, tmp_path: Path) -> None:
    report = check_paths([str(evil)], Options(proofs=False))
    out = tmp_path / "reports"
    out.mkdir(mode=0o750)
    (out / "README.txt").write_text("not ours")
    (out / "stale.md").write_text("old")
    (out / "report.json").write_text(json.dumps({"report": {"files": ["stale.md", "report.json"]}}))
    written = write(report, out, Settings(precision=50), exit_code(report))
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == sorted(
        [*written, "README.txt"])
    assert (out / "README.txt").read_text() == "not ours" and (out / "report.json").stat().st_size > 100
    assert out.stat().st_mode & 0o777 == 0o750
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reports"]


def test_report_modules_import_without_cycles() -> None:
    """The sections and their families share report/section_parts.py instead of importing each other."""
    package = REPO / "dpverify" / "report"
    graph: dict[str, set[str]] = {}
    for path in package.glob("*.py"):
        tree = ast.parse(path.read_text())
        graph[path.stem] = {alias.name if node.level and node.module is None else (node.module or "").split(".")[0]
                            for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level == 1
                            for alias in node.names}
    graph = {k: {v for v in deps if v in graph and v != "__init__"} for k, deps in graph.items()}
    assert "sections" not in graph["sections_privacy"] | graph["sections_theorems"]

    def reaches(start: str, target: str, seen: set[str]) -> bool:
        return any(d == target or (d not in seen and reaches(d, target, seen | {d})) for d in graph[start])
    assert not [m for m in graph if reaches(m, m, set())]
