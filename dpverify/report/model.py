"""The view model of a report: results turned into what the Markdown and HTML pages show.

:func:`build` reads a :class:`~dpverify.runner.Report` (with the specs it
checked) and returns a :class:`Site`: one :class:`SpecPage` per spec, each
pinned to what it verified (the spec file's sha256, the dpverify version, the
backend and its precision, the assumptions), with one :class:`ClaimView` per
claim whose detail blocks come from :mod:`.sections`.  Nothing here formats
markup: the writers do, and escape everything they render.

Deterministic: no clock is read.  Times are kept only when ``timings`` is set;
otherwise durations that checks write into their messages ("z3, 0.04s") are
removed, so the same specs give the same bytes.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..version import __version__
from ..evidence import privacy_view
from ..results import ClaimResult, Status, worst
from ..dsl.claims import Claim
from ..dsl.spec import Spec
from ..replay import relative
from ..results import Report, SpecReport
from .blocks import Block, Heading, Pairs, Table, WitnessBox
from . import scope as scopes
from .section_parts import Context, short, source_of
from .sections import blocks_for
from .sections_sources import compared
from .statements import Part, statement

ASSUMPTIONS = (
    "Finite universe: privacy and distribution claims are decided on every dataset of the declared "
    "universe (its records, sizes and neighbour relation), not on larger ones; each verdict's scope says so. "
    "Only a verdict whose scope reads 'all datasets' (a proof for every dataset of every size) is about "
    "more.",
    "Idealised real arithmetic: a spec's probabilities are exact real numbers. Floating point is "
    "analysed only where a claim says so: a float_private claim decides a sampler over its whole grid "
    "of double uniforms (Mironov's attack on Laplace noise), and an audited implementation "
    "(dp.implementation) has its float probabilities read at their exact binary values; its Laplace, "
    "exponential and Gaussian draws are the ideal real laws.",
    "Grid: 'verified' holds at the listed parameter points; 'proved' holds for every value of the "
    "symbolic parameters (e.g. every ε > 0), the others fixed at each grid point.",
    "Certified arithmetic: no verdict rests on a float comparison; every 'refuted' is re-confirmed by an "
    "independent recomputation at twice the precision. Exception, by design: a black box (dp.black_box) "
    "is sampled, so its 'consistent' and 'refuted' are statistical, at the stated error probability, a "
    "refutation confirmed by a re-run with fresh seeds.",
)
_DURATION = re.compile(r"(?:,\s*| in | after )?\b\d+\.\d+s\b")


@dataclass(frozen=True)
class Settings:
    """How the report was produced; all of it is printed in the report."""

    precision: int
    proofs: bool = True
    timings: bool = False
    paths: tuple[str, ...] = ()


@dataclass
class ClaimView:
    id: str
    anchor: str
    kind: str
    description: str
    status: str
    expect: Optional[str]
    as_expected: bool
    methods: tuple[str, ...]
    message: str  # empty when a witness box says it
    seconds: Optional[str]
    blocks: list[Block]
    statement: tuple[Part, ...] = ()
    witnesses: list[WitnessBox] = field(default_factory=list)  # shown first in the claim's section
    scope: str = ""  # what a claim that holds is about, short (.scope.claim_short): "universe n=3, every ε", "n = 3..40"
    achieved: str = ""  # "achieved ε = 0.5 (exact, over the universe) against claimed ε = 0.25", refuted privacy claims
    points: int = 0
    scope_labels: tuple[str, ...] = ()  # the whole scope of each of its points that hold, each once

    @property
    def lead(self) -> Optional[WitnessBox]:
        """The witness shown at the top of the page: the claim's first."""
        return self.witnesses[0] if self.witnesses else None


@dataclass
class SpecPage:
    slug: str
    name: str
    path: str
    status: str
    as_expected: bool
    sha256: Optional[str]
    doc: str = ""
    source: Optional[str] = None
    universe: Optional[Pairs] = None
    grid: Optional[Table] = None
    claims: list[ClaimView] = field(default_factory=list)
    sources: list[Block] = field(default_factory=list)  # every source's reported deltas against the exact profile
    error: Optional[str] = None
    pinned: Optional[Pairs] = None
    scope: str = ""  # the verdict banner's scope sentence (.scope.spec_sentence)

    @property
    def leads(self) -> list[ClaimView]:
        """The refuted claims whose witness opens the page: unexpected ones first, at most :data:`LEADS`."""
        refuted = [c for c in self.claims if c.status == "refuted" and c.witnesses]
        return sorted(refuted, key=lambda c: c.as_expected)[:LEADS]

    @property
    def more_refuted(self) -> int:
        return sum(c.status == "refuted" for c in self.claims) - len(self.leads)

    @property
    def verdict(self) -> str:
        """One sentence that answers first: what holds, what is refuted, and whether that was expected."""
        if self.error:
            return "The spec file could not be loaded; nothing in it was checked."
        return tally(self.claims)

    @property
    def unexpected(self) -> list[ClaimView]:
        return [c for c in self.claims if not c.as_expected]

    @property
    def markdown(self) -> str:
        return f"{self.slug}.md"

    @property
    def html(self) -> str:
        return f"{self.slug}.html"


LEADS = 3  # witnesses shown at the top of a page; the others are in their claims' sections
HOLDS = ("proved", "verified", "consistent")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def tally(claims: list[ClaimView]) -> str:
    """What a list of claims came to, in words: "3 claims: 2 hold (1 proved, 1 verified); 1 refuted
    as expected." — a refutation the spec expects is said to be expected, an unexpected one is named."""
    if not claims:
        return "No claims were checked."
    holds = [c for c in claims if c.status in HOLDS]
    parts = []
    if holds:
        kinds = ", ".join(f"{sum(c.status == s for c in holds)} {s}" for s in HOLDS if any(c.status == s for c in holds))
        parts.append(f"{len(holds)} hold{'s' if len(holds) == 1 else ''} ({kinds})")
    for status in ("refuted", "unknown", "error"):
        group = [c for c in claims if c.status == status]
        if not group:
            continue
        expected = sum(c.as_expected for c in group)
        if expected == len(group):
            parts.append(f"{len(group)} {status} as expected")
        elif expected:
            parts.append(f"{len(group)} {status} ({expected} as expected, {len(group) - expected} NOT expected)")
        else:
            parts.append(f"{len(group)} {status}, NOT expected")
    points = sum(c.points for c in claims)
    return f"{_plural(len(claims), 'claim')} ({_plural(points, 'checked point')}): " + "; ".join(parts) + "."


@dataclass
class FileGroup:
    """The index's rows of one spec file: its pages (one per spec in it) and their claims' tally."""

    path: str
    pages: list[SpecPage]

    @property
    def claims(self) -> list[ClaimView]:
        return [c for p in self.pages for c in p.claims]

    @property
    def errors(self) -> int:
        return sum(bool(p.error) for p in self.pages)

    @property
    def unexpected(self) -> bool:
        """Anything a reader must look at: an unexpected verdict, an unknown, a file that did not load."""
        return bool(self.errors) or any(not c.as_expected or c.status in ("unknown", "error") for c in self.claims)

    @property
    def anchor(self) -> str:
        return "file-" + re.sub(r"[^A-Za-z0-9_-]+", "-", self.path).strip("-")

    @property
    def summary(self) -> str:
        specs = _plural(len(self.pages), "spec")
        if self.errors and not self.claims:
            return f"{specs}: the file could not be loaded."
        return f"{specs}, " + tally(self.claims) + (f" {self.errors} could not be loaded." if self.errors else "")


def groups(pages: list[SpecPage]) -> list[FileGroup]:
    """The pages grouped by spec file, files with something unexpected first, then in report order."""
    by_path: dict[str, list[SpecPage]] = {}
    for page in pages:
        by_path.setdefault(page.path, []).append(page)
    out = [FileGroup(path, group) for path, group in by_path.items()]
    return sorted(out, key=lambda g: not g.unexpected)


@dataclass
class Site:
    settings: Settings
    pages: list[SpecPage]
    summary: dict[str, int]
    exit_code: int
    assumptions: tuple[str, ...] = ASSUMPTIONS
    environment: tuple[tuple[str, str], ...] = ()
    scope: str = ""  # "scope of the N claim points that hold: ..." (.scope.ScopeCounts.line)

    @property
    def groups(self) -> list[FileGroup]:
        return groups(self.pages)

    @property
    def claims(self) -> list[ClaimView]:
        return [c for p in self.pages for c in p.claims]

    @property
    def attention(self) -> list[tuple[SpecPage, ClaimView]]:
        """Claims not as expected (an unexpected refutation, an unknown, an error), in report order."""
        return [(p, c) for p in self.pages for c in p.claims if not c.as_expected or c.status in ("unknown", "error")]

    @property
    def headline(self) -> str:
        """What the report counts, in words: claims and points, refutations said expected or not."""
        files = len(dict.fromkeys(p.path for p in self.pages))
        errors = sum(bool(p.error) for p in self.pages)
        text = f"{_plural(files, 'spec file')}, {_plural(len(self.pages), 'spec')}. " + tally(self.claims)
        return text + (f" {_plural(errors, 'spec file')} could not be loaded." if errors else "")

    @property
    def overall(self) -> str:
        if self.exit_code == 0:
            return "Every claim holds or is refuted as expected."
        if self.exit_code == 1:
            return "Some claims are refuted or undecided unexpectedly: they are listed first."
        return "Some spec files could not be checked: they are listed first."


def scrub(text: str, timings: bool) -> str:
    """Remove durations from a check's message unless timings were asked for."""
    return text if timings else _DURATION.sub("", text)


def backend(settings: Settings) -> str:
    return f"mpmath interval arithmetic, {settings.precision} significant digits"


def environment() -> tuple[tuple[str, str], ...]:
    """The versions a report depends on (dpverify first), for the index and report.json."""
    import jinja2
    import matplotlib
    import mpmath
    import numpy
    import sympy
    import z3
    return (("dpverify", __version__), ("mpmath", mpmath.__version__), ("sympy", sympy.__version__),
            ("z3-solver", z3.get_version_string()), ("numpy", numpy.__version__),
            ("matplotlib", matplotlib.__version__), ("jinja2", jinja2.__version__))


def sha256(path: str) -> Optional[str]:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def slugs(report: Report) -> list[str]:
    """A file name per spec: ``FILE-STEM.SPEC-NAME``, made safe and unique (in report order)."""
    out: list[str] = []
    for s in report.specs:
        stem = Path(s.path).stem
        base = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem if s.spec is None else f"{stem}.{s.name}")
        slug, k = base.strip("._") or "spec", 2
        while slug.lower() in {o.lower() for o in out} or slug.lower() == "index":
            slug, k = f"{base}-{k}", k + 1
        out.append(slug)
    return out


def anchor(claim_id: str) -> str:
    return "claim-" + re.sub(r"[^A-Za-z0-9_-]+", "-", claim_id)


def build(report: Report, settings: Settings, exit_code: int) -> Site:
    """The view model of a whole report."""
    pages = [_page(s, slug, settings) for s, slug in zip(report.specs, slugs(report))]
    counts = {status.value: 0 for status in Status}
    for status in report.statuses():
        counts[status] += 1
    return Site(settings, pages, counts, exit_code, environment=environment(),
                scope=_sentence(scopes.counts(report.specs).line()))


def _sentence(line: str) -> str:
    """"scope of ...: ..." as a sentence: "Scope of ...: ... ." ("" stays "")."""
    return f"{line[:1].upper()}{line[1:]}." if line else ""


def _page(s: SpecReport, slug: str, settings: Settings) -> SpecPage:
    path = relative(s.path)
    digest = sha256(s.path)
    page = SpecPage(slug, s.name, path, "error" if s.error else _worst(s), _as_expected(s), digest)
    page.scope = "" if s.error else scopes.spec_sentence(s)
    page.pinned = Pairs((("spec file", path), ("sha256", digest or "unreadable"), ("dpverify", __version__),
                         ("backend", backend(settings)),
                         ("proofs for every parameter value", "attempted (z3)" if settings.proofs else "off"),
                         ("timings", "recorded" if settings.timings else "not recorded")))
    if s.error:
        page.error = s.error
        return page
    spec = s.spec
    if spec is not None:
        page.doc = spec.doc or ""
        page.source = source_of(spec.mechanism) if spec.mechanism is not None else None
        page.universe = _universe(spec)
        page.grid = _grid(spec)
    ctx = Context(slug, lambda text: scrub(text, settings.timings))
    declared = {c.id: c for c in spec.claims} if spec is not None else {}
    page.sources = compared([(c, declared.get(c.claim_id)) for c in s.claims], ctx)
    anchors: set[str] = set()
    for c in s.claims:
        view = _claim(s, c, declared.get(c.claim_id), ctx, settings)
        while view.anchor in anchors:  # ids that differ only in characters an anchor cannot hold
            view.anchor += "-"
        anchors.add(view.anchor)
        page.claims.append(view)
    return page


def _claim(s: SpecReport, c: ClaimResult, decl: Optional[Claim], ctx: Context, settings: Settings) -> ClaimView:
    """A claim's view: its witness boxes lead its section, and its message is said once (not again
    when a witness box carries it); a structural proof's steps follow its details."""
    methods = tuple(dict.fromkeys(p.method for p in c.points if p.method))
    blocks = blocks_for(c, decl, ctx) + _proof_steps(c, ctx)
    witnesses = [b for b in blocks if isinstance(b, WitnessBox)]
    message = ctx.text(c.message)
    return ClaimView(c.claim_id, anchor(c.claim_id), c.kind, c.description, c.status.value, c.expect,
                     c.as_expected, methods, "" if any(w.sentence == message for w in witnesses) else message,
                     f"{c.seconds:.2f} s" if settings.timings else None,
                     [b for b in blocks if not isinstance(b, WitnessBox)], statement(c.description, decl, c.kind),
                     witnesses, scopes.claim_short(s, c), _achieved(c), len(c.points),
                     tuple(scopes.claim_labels(s, c)))


def _decimal(value: str) -> str:
    """A certified decimal as printed, trailing zeros dropped ("0.5000" is 0.5, "inf" is ∞)."""
    if value == "inf":
        return "∞"
    if "." in value and "e" not in value.lower():
        value = value.rstrip("0").rstrip(".")
    return value


def _achieved(c: ClaimResult) -> str:
    """A refuted privacy claim's achieved ε against its claimed ε at its first refuted point."""
    for p in c.points:
        levels = privacy_view(p.evidence)
        if p.status != Status.REFUTED or levels.achieved_epsilon is None or levels.claimed_epsilon is None:
            continue
        where = f" at {', '.join(f'{k} = {v}' for k, v in p.params.items())}" if p.params else ""
        if levels.achieved_is_lower_bound:
            return (f"achieved ε ≥ {_decimal(levels.achieved_epsilon)} (a certified lower bound) against claimed "
                    f"ε = {_decimal(levels.claimed_epsilon)}{where}")
        return (f"achieved ε = {_decimal(levels.achieved_epsilon)} (exact, over the universe) against claimed "
                f"ε = {_decimal(levels.claimed_epsilon)}{where}")
    return ""


def _proof_steps(c: ClaimResult, ctx: Context) -> list[Block]:
    """The steps of each structural proof (a privacy evidence's ``proof_steps``), numbered, once per
    distinct list (the grid points it covers named when the lists differ): the sensitivity derivation,
    the calibration lemma, the composition."""
    lists: dict[tuple[str, ...], list[str]] = {}
    for p in c.points:
        steps = tuple(str(step) for step in (getattr(p.evidence, "proof_steps", None) or ()))
        if steps:
            lists.setdefault(steps, []).append(", ".join(f"{k}={v}" for k, v in p.params.items()))
    out: list[Block] = []
    for steps, where in lists.items():
        at = f" (at {'; '.join(w for w in where if w)})" if len(lists) > 1 and any(where) else ""
        out += [Heading(f"Proof for every dataset{at}"),
                Pairs(tuple((f"step {i}", ctx.text(step)) for i, step in enumerate(steps, 1)), prose=True)]
    return out


def _worst(s: SpecReport) -> str:
    return worst([c.status for c in s.claims]).value


def _as_expected(s: SpecReport) -> bool:
    return not s.error and all(c.as_expected for c in s.claims)


def _universe(spec: Spec) -> Optional[Pairs]:
    u = spec.universe
    if u is None:
        return None
    shown = ", ".join(repr(r) for r in u.records[:40])
    if len(u.records) > 40:
        shown += f", … ({len(u.records) - 40} more)"
    sizes = ", ".join(str(n) for n in u.sizes)
    return Pairs((("summary", u.describe()), ("checked on", u.scope()["note"]), ("records", shown),
                  ("dataset sizes n", sizes), ("neighbour relation", u.relation_name),
                  ("enumerated as", "multisets (the mechanism ignores record order)" if u.symmetric
                   else "sequences")))


def _grid(spec: Spec) -> Optional[Table]:
    if not spec.points or not spec.points[0]:
        return None
    names = tuple(sym.name for sym, _ in spec.points[0])
    rows = tuple(tuple(str(value) for _, value in point) for point in spec.points)
    return Table(names, rows, tuple(range(len(names))), f"{len(rows)} grid point(s), exact values")


__all__ = ["ASSUMPTIONS", "ClaimView", "FileGroup", "groups", "tally", "Settings", "Site", "SpecPage", "backend", "build", "environment",
           "scrub", "slugs"]
