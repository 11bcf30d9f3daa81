"""The HTML pages of a report: one self-contained page per spec and ``index.html``.

Jinja2 with autoescaping: every value from a spec or a result is escaped; the
only markup inserted as it is are the SVG plots that :mod:`.plots` drew
(matplotlib escapes the text inside them) and the MathML formulas of
:mod:`.maths` (which escapes every text node itself).  Each page
carries its stylesheet and its plots inline, loads nothing, runs no script, and
says so with a Content-Security-Policy that forbids scripts, so a page opens
offline and anything that slipped through escaping still could not run.
"""
from __future__ import annotations

from typing import Optional

import jinja2
import markupsafe

from . import maths
from .model import Site, SpecPage, backend


def prose(text: str) -> markupsafe.Markup:
    """A check's sentence typeset: Greek names as letters, ``<=`` as ≤, ``e^(eps/2)`` as e<sup>ε/2</sup>
    (:func:`.maths.unicode_text`, :func:`.maths.superscripts`); every piece escaped."""
    out = []
    for piece, raised in maths.superscripts(maths.unicode_text(str(text))):
        escaped = markupsafe.escape(piece)
        out.append(markupsafe.Markup("<sup>{}</sup>").format(escaped) if raised else escaped)
    return markupsafe.Markup("").join(out)


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("dpverify.report", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    env.filters["prose"] = prose
    return env


def render_page(site: Site, page: SpecPage, env: Optional[jinja2.Environment] = None) -> str:
    """One spec's HTML page."""
    env = env or environment()
    return env.get_template("html/page.html.j2").render(
        page=page, settings=site.settings, assumptions=site.assumptions,
        version=dict(site.environment).get("dpverify", ""), backend=backend(site.settings))


def render_index(site: Site, env: Optional[jinja2.Environment] = None) -> str:
    """``index.html``: every claim of every spec, the settings, hashes, assumptions and environment."""
    env = env or environment()
    return env.get_template("html/index.html.j2").render(
        pages=site.pages, settings=site.settings, summary=site.summary, exit_code=site.exit_code,
        groups=site.groups, attention=site.attention, headline=site.headline, scope=site.scope, overall=site.overall,
        assumptions=site.assumptions, environment=site.environment, backend=backend(site.settings))


__all__ = ["render_index", "render_page"]
