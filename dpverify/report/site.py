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
(a spec that was removed) are gone; nothing else in the directory is touched.  Writing
is atomic (:func:`write`): a temporary directory renamed into place.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Optional

from ..dsl.params import point_label
from ..dsl.spec import Spec
from ..results import Report
from . import html, markdown
from .blocks import Figure
from .json_report import document, figures_json, jsonable
from .model import Settings, Site, backend, build, scrub


def _spec_meta(spec: Optional[Spec], page: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"sha256": page.sha256, "pages": {"markdown": page.markdown, "html": page.html}}
    if spec is None:
        return meta
    meta["doc"] = spec.doc
    meta["source"] = page.source
    u = spec.universe
    meta["universe"] = None if u is None else {
        "description": u.describe(), "records": jsonable(list(u.records)), "sizes": list(u.sizes),
        "neighbours": u.relation_name, "symmetric": u.symmetric, "coverage": u.scope()}
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
        for block in [*page.sources, *(block for claim in page.claims for block in claim.blocks)]:
            if isinstance(block, Figure):
                files[f"figures/{block.name}.svg"] = block.svg
    files["index.md"] = markdown.render_index(site, md_env)
    files["index.html"] = html.render_index(site, html_env)
    names = sorted([*files, "report.json"])
    doc = extended_document(report, site, names)
    files["report.json"] = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    return dict(sorted(files.items()))


def write(report: Report, out: Path, settings: Settings, exit_code: int) -> list[str]:
    """Render the report into ``out`` and return the files written (relative, sorted).

    Atomic: the whole report is built in a temporary directory next to ``out`` (same
    filesystem) and renamed into place; an existing ``out`` is renamed aside first and
    removed once the new one is in.  Files in ``out`` that the previous report did not
    write (a README, a .gitattributes) are carried over as hard links (copies where links
    fail); the previous report's files are not, so a spec that was removed loses its pages.
    An error at any point leaves ``out`` as it was and no temporary directory behind.
    """
    files = render(report, settings, exit_code)
    target = Path(os.path.realpath(out))
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(f"{out} exists and is not a directory")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".new", dir=target.parent))
    try:
        os.chmod(staging, target.stat().st_mode & 0o7777 if target.is_dir() else 0o777 & ~_umask())
        if target.is_dir():
            _carry_over(target, staging, set(_previous(target)) | {"report.json"})
        for name, text in files.items():
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
        _swap(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return list(files)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _carry_over(old: Path, new: Path, reported: set[str]) -> None:
    """Hard-link (or copy) into ``new`` every file of ``old`` that no report wrote."""
    for root, dirs, names in os.walk(old):
        dirs.sort()
        base = Path(root).relative_to(old)
        for name in sorted(names) + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            relative = (base / name).as_posix()
            if relative in reported:
                continue
            source, dest = Path(root) / name, new / base / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(source, dest, follow_symlinks=False)
            except OSError:
                shutil.copy2(source, dest, follow_symlinks=False)


def _swap(staging: Path, target: Path) -> None:
    """Rename ``staging`` to ``target``; an existing ``target`` goes aside first, is put back if the
    rename fails, and is removed after it succeeds."""
    if not target.exists():
        os.rename(staging, target)
        return
    aside = staging.with_name(staging.name[:-len(".new")] + ".old")
    os.rename(target, aside)
    try:
        os.rename(staging, target)
    except BaseException:
        os.rename(aside, target)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def _previous(out: Path) -> list[str]:
    """The files an earlier report in ``out`` said it wrote (safe relative names only)."""
    try:
        listed = json.loads((out / "report.json").read_text(encoding="utf-8"))["report"]["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [n for n in listed if isinstance(n, str) and not Path(n).is_absolute() and ".." not in Path(n).parts]


__all__ = ["extended_document", "figures_json", "render", "write"]
