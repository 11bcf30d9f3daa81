"""``dpverify report``: the whole report directory.

For every spec a Markdown page and a self-contained HTML page, then ``index.md``,
``index.html``, the Markdown pages' plots under ``figures/``, and one
``report.json``: the ``dpverify check --json`` document (its keys unchanged)
extended with

* ``report``: settings, backend, assumptions, environment and the list of files;
* per spec: ``sha256`` of the spec file, ``pages``, ``doc``, ``source``, ``universe``, ``grid``;
* per claim: ``description``; per point: ``figures`` (floats stay numbers).

Deterministic: without ``timings`` each point's ``seconds`` is null and the
durations inside messages are removed (see :func:`.model.scrub`).  Files a
previous report listed in its ``report.json`` and this one no longer writes
(a spec that was removed) are deleted; nothing else in the directory is touched.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Optional

from ..dsl.params import point_label
from ..dsl.spec import Spec
from ..results import Report
from . import html, markdown
from .blocks import Figure
from .json_report import document, jsonable
from .model import Settings, Site, backend, build, scrub


def figures_json(value: Any) -> Any:
    """A figure as JSON: dicts with sorted keys, lists, numbers kept (non-finite floats as strings)."""
    if isinstance(value, dict):
        return {str(k): figures_json(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [figures_json(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return jsonable(value)


def _spec_meta(spec: Optional[Spec], page: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"sha256": page.sha256, "pages": {"markdown": page.markdown, "html": page.html}}
    if spec is None:
        return meta
    meta["doc"] = spec.doc
    meta["source"] = page.source
    u = spec.universe
    meta["universe"] = None if u is None else {
        "description": u.describe(), "records": jsonable(list(u.records)), "sizes": list(u.sizes),
        "neighbours": u.relation_name, "symmetric": u.symmetric}
    meta["grid"] = [point_label(p) for p in spec.points if p]
    return meta


def extended_document(report: Report, site: Site, files: list[str]) -> dict[str, Any]:
    """The check document plus figures and spec metadata (only keys are added)."""
    timings = site.settings.timings
    doc = document(report)
    for entry, s, page in zip(doc["specs"], report.specs, site.pages):
        entry.update(_spec_meta(s.spec, page))
        for c_entry, c in zip(entry["claims"], s.claims):
            c_entry["description"] = c.description
            c_entry["message"] = scrub(c_entry["message"], timings)
            for p_entry, p in zip(c_entry["points"], c.points):
                p_entry["figures"] = figures_json(p.evidence.figures())
                p_entry["message"] = scrub(p_entry["message"], timings)
                if not timings:
                    p_entry["seconds"] = None
    doc["report"] = {
        "paths": list(site.settings.paths), "precision": site.settings.precision,
        "proofs": site.settings.proofs, "timings": timings, "backend": backend(site.settings),
        "assumptions": list(site.assumptions), "environment": dict(site.environment), "files": files}
    return doc


def render(report: Report, settings: Settings, exit_code: int) -> dict[str, str]:
    """Every file of the report, by its path relative to the output directory."""
    site = build(report, settings, exit_code)
    files: dict[str, str] = {}
    md_env, html_env = markdown.environment(), html.environment()
    for page in site.pages:
        files[page.markdown] = markdown.render_page(site, page, md_env)
        files[page.html] = html.render_page(site, page, html_env)
        for claim in page.claims:
            for block in claim.blocks:
                if isinstance(block, Figure):
                    files[f"figures/{block.name}.svg"] = block.svg
    files["index.md"] = markdown.render_index(site, md_env)
    files["index.html"] = html.render_index(site, html_env)
    names = sorted([*files, "report.json"])
    doc = extended_document(report, site, names)
    files["report.json"] = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    return dict(sorted(files.items()))


def write(report: Report, out: Path, settings: Settings, exit_code: int) -> list[str]:
    """Render the report into ``out`` and return the files written (relative, sorted)."""
    files = render(report, settings, exit_code)
    out.mkdir(parents=True, exist_ok=True)
    for name in _previous(out):
        if name not in files:
            (out / name).unlink(missing_ok=True)
    for name, text in files.items():
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    return list(files)


def _previous(out: Path) -> list[str]:
    """The files an earlier report in ``out`` said it wrote (safe relative names only)."""
    try:
        listed = json.loads((out / "report.json").read_text(encoding="utf-8"))["report"]["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [n for n in listed if isinstance(n, str) and not Path(n).is_absolute() and ".." not in Path(n).parts]


__all__ = ["extended_document", "figures_json", "render", "write"]
