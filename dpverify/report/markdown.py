"""The Markdown pages of a report: one per spec and ``index.md`` (GitHub-flavoured Markdown).

Escaping is the default, as HTML autoescaping is: every ``{{ value }}`` in a
Markdown template goes through :func:`escape` unless it is :class:`Md` (text
this module built, already safe).  :func:`escape` turns ``& < >`` into entities
(so ``<script>`` stays text) and backslash-escapes every character that could
start emphasis, code, a link, a table cell, math or a list.  Source code and
LaTeX go into fenced blocks whose fence is longer than any backtick run inside.
Plots are written as SVG files under ``figures/`` and linked.
"""
from __future__ import annotations

import html
import re
from typing import Any, Optional

import jinja2

from .blocks import Table
from . import maths
from .maths import inline_markdown
from .model import Site, SpecPage, backend
from .statements import Part

_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+!|~$^])")


class Md(str):
    """Markdown that is already safe to emit as it is."""


def _escape_line(line: str) -> str:
    text = line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _SPECIALS.sub(r"\\\1", text)
    text = re.sub(r"^(\s*)(-(?=[\s-]|$)|=)", r"\1\\\2", text)  # a list item, a rule, a setext underline
    return re.sub(r"^(\s*\d+)\.(?=\s|$)", r"\1\\.", text)  # an ordered list item


def escape(value: Any) -> Md:
    """Plain text as inline Markdown that renders exactly that text (line breaks become spaces)."""
    if isinstance(value, Md):
        return value
    return Md(_escape_line(" ".join(str(value).splitlines())))


def paragraphs(value: Any) -> Md:
    """Multi-line text (a docstring): each line escaped and stripped, hard line breaks within a
    paragraph, blank lines kept."""
    lines = [_escape_line(line.strip()) for line in str(value).strip().splitlines()]
    out = []
    for line, following in zip(lines, lines[1:] + [""]):
        out.append(line + "\\" if line and following else line)
    return Md("\n".join(out))


def fence(value: Any, language: Optional[str] = "") -> Md:
    """A fenced code block whose fence is longer than any run of backticks in the text."""
    text = str(value)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    bar = "`" * max(3, longest + 1)
    return Md(f"{bar}{language or ''}\n{text.rstrip(chr(10))}\n{bar}")


def table(block: Table) -> Md:
    """A pipe table; cells that are :class:`Md` are kept, the others escaped."""
    head = "| " + " | ".join(escape(h) for h in block.headers) + " |"
    rule = "|" + "|".join("---:" if i in block.numeric else "---" for i in range(len(block.headers))) + "|"
    rows = ["| " + " | ".join(escape(c) for c in row) + " |" for row in block.rows]
    caption = f"\n\n*{escape(block.caption)}*" if block.caption else ""
    return Md("\n".join([head, rule, *rows]) + caption)


def status(value: str, expect: Optional[str] = None, scope: str = "") -> Md:
    """A verdict in bold; ``scope`` (e.g. "n = 3..40") marks a verdict on part of what the claim states."""
    return Md(f"**{escape(value)}**" + (" (expected)" if expect == value else "")
              + (f" {escape(f'[{scope}]')}" if scope else ""))


def statement(parts: tuple[Part, ...]) -> Md:
    """A claim's statement: text escaped, formulas as inline LaTeX (``$`...`$``)."""
    return Md("".join(inline_markdown(p.latex) if p.latex else escape(p.text) for p in parts))


def html_text(value: Any) -> Md:
    """Text inside an HTML element of a Markdown page (``<summary>``), where Markdown is not read:
    HTML-escaped only."""
    return Md(html.escape(" ".join(str(value).splitlines()), quote=False))


def prose(value: Any) -> Md:
    """A check's sentence typeset as in HTML: Greek letters, ≤ ≥, exponents raised with ``<sup>``
    (GitHub renders it); every piece escaped."""
    pieces = maths.superscripts(maths.unicode_text(" ".join(str(value).splitlines())))
    return Md("".join(f"<sup>{escape(piece)}</sup>" if raised else escape(piece) for piece, raised in pieces))


def _anchor(name: str) -> Md:
    return Md(f'<a id="{re.sub(r"[^A-Za-z0-9_-]", "-", name)}"></a>')


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("dpverify.report", "templates"), autoescape=False,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True, finalize=escape)
    env.filters.update(fence=fence, paragraphs=paragraphs, table=table, status=status, anchor=_anchor,
                       raw=Md, statement=statement, html=html_text, prose=prose)
    return env


def _claims(page: SpecPage) -> Md:
    if not page.claims:
        return Md("*No claims were checked.*")
    rows = tuple((Md(f"[{escape(c.id)}](#{c.anchor})"), c.kind, statement(c.statement),
                  status(c.status, c.expect, c.scope), prose("; ".join(c.methods))) + ((c.seconds or "",) if c.seconds else ()) for c in page.claims)
    timed = any(c.seconds for c in page.claims)
    return table(Table(("claim", "kind", "statement", "status", "method") + (("time",) if timed else ()), rows))


def _index_rows(pages: list[SpecPage], timed: tuple[str, ...], with_path: bool = False) -> list[tuple]:
    """Claims rows of the index; the spec named on its first row only."""
    rows: list[tuple] = []
    for page in pages:
        spec = Md(f"[{escape(page.name)}]({page.markdown})" + (f" ({escape(page.path)})" if with_path else ""))
        for i, c in enumerate(page.claims):
            rows.append((spec if i == 0 else "", Md(f"[{escape(c.id)}]({page.markdown}#{c.anchor})"), c.kind,
                         statement(c.statement), status(c.status, c.expect, c.scope), prose("; ".join(c.methods)))
                        + ((c.seconds or "",) if timed else ()))
        if page.error:
            rows.append((spec, "–", "–", "the file could not be loaded", status("error"), "–") + timed)
    return rows


_HEADERS = ("spec", "claim", "kind", "statement", "status", "method")


def _index_claims(site: Site) -> list[tuple[Any, Md]]:
    """Per spec file (unexpected ones first), its claims as a table."""
    timed = ("",) if site.settings.timings else ()
    headers = _HEADERS + (("time",) if timed else ())
    return [(g, table(Table(headers, tuple(_index_rows(g.pages, timed))))) for g in site.groups]


def _attention(site: Site) -> Md:
    """The claims that are not as expected, or "" when there are none."""
    if not site.attention:
        return Md("")
    timed = ("",) if site.settings.timings else ()
    rows = []
    for page, c in site.attention:
        rows.append((Md(f"[{escape(page.name)}]({page.markdown}) ({escape(page.path)})"),
                     Md(f"[{escape(c.id)}]({page.markdown}#{c.anchor})"), c.kind, statement(c.statement),
                     status(c.status, c.expect, c.scope), prose("; ".join(c.methods))) + ((c.seconds or "",) if timed else ()))
    return table(Table(_HEADERS + (("time",) if timed else ()), tuple(rows)))


def render_page(site: Site, page: SpecPage, env: Optional[jinja2.Environment] = None) -> str:
    """One spec's Markdown page."""
    env = env or environment()
    return env.get_template("md/page.md.j2").render(
        page=page, settings=site.settings, assumptions=site.assumptions, claims_table=_claims(page),
        version=dict(site.environment).get("dpverify", ""), backend=backend(site.settings))


def render_index(site: Site, env: Optional[jinja2.Environment] = None) -> str:
    """``index.md``: every claim of every spec, the settings, hashes, assumptions and environment."""
    env = env or environment()
    hashes = table(Table(("spec", "file", "sha256"),
                         tuple((Md(f"[{escape(p.name)}]({p.markdown})"), p.path, p.sha256 or "unreadable")
                               for p in site.pages), caption="Each spec page names its spec file's sha256."))
    env_table = table(Table(("package", "version"), site.environment, caption="Environment"))
    return env.get_template("md/index.md.j2").render(
        settings=site.settings, summary=site.summary, exit_code=site.exit_code, assumptions=site.assumptions,
        groups=_index_claims(site), attention_table=_attention(site), headline=site.headline, scope=site.scope,
        overall=site.overall, hashes_table=hashes, environment_table=env_table,
        backend=backend(site.settings))


__all__ = ["Md", "escape", "fence", "paragraphs", "render_index", "render_page", "statement"]
