"""The vocabulary of report pages: a few kinds of block that every format can render.

A claim's section is a list of blocks, built from its results by
:mod:`dpverify.report.sections`.  The Markdown and HTML writers each render
every kind of block with one small template (``templates/md/block_KIND.md.j2``,
``templates/html/block_KIND.html.j2``), so a new kind of claim needs no template
at all, only a function that returns blocks.

Text in blocks is plain, unescaped text: the writers escape it.  Only
:attr:`Figure.svg` and :attr:`Math.mathml` are markup, produced by :mod:`.plots`
and :mod:`.maths` (which escape what they take from a spec).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True)
class Heading:
    """A sub-heading inside a claim's section."""

    text: str
    type: str = field(default="heading", init=False)


@dataclass(frozen=True)
class Paragraph:
    """Running text; ``label`` (if any) is shown in bold before it."""

    text: str
    label: str = ""
    type: str = field(default="paragraph", init=False)


@dataclass(frozen=True)
class Table:
    """A table of plain-text cells; ``numeric`` columns are right-aligned."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[int, ...] = ()
    caption: str = ""
    type: str = field(default="table", init=False)


@dataclass(frozen=True)
class Pairs:
    """A list of label: value lines (a witness, a counterexample, metadata)."""

    items: tuple[tuple[str, str], ...]
    prose: bool = False  # values are checks' sentences: typeset (Greek letters, ≤, raised exponents)
    type: str = field(default="pairs", init=False)


@dataclass(frozen=True)
class Figure:
    """A plot: inline SVG markup from :mod:`.plots`, a caption, and the file name it gets next
    to the Markdown pages (``figures/NAME.svg``)."""

    svg: str
    caption: str
    name: str
    type: str = field(default="figure", init=False)


@dataclass(frozen=True)
class Math:
    """A formula: its LaTeX source (for Markdown), its presentation MathML (for HTML, from
    :mod:`.maths`, escaped there), and a plain-text fallback; ``label`` introduces it."""

    latex: str
    text: str
    mathml: str = ""
    label: str = ""
    type: str = field(default="math", init=False)


@dataclass(frozen=True)
class WitnessBox:
    """A refuted claim's counterexample, shown first in its section: what a reader checks by
    hand (``items``: the pair, the output or event, both probabilities or densities), the
    comparison with the claimed bound (``verdict``), and the check's own sentence, said once."""

    title: str
    items: tuple[tuple[str, str], ...]
    verdict: str = ""
    sentence: str = ""
    type: str = field(default="witness", init=False)


@dataclass(frozen=True)
class Code:
    """Verbatim text in a fenced block (source code, long messages)."""

    text: str
    language: str = ""
    type: str = field(default="code", init=False)


Block = Union[Heading, Paragraph, Table, Pairs, Figure, Math, Code, WitnessBox]

__all__ = ["Block", "Code", "Figure", "Heading", "Math", "Pairs", "Paragraph", "Table", "WitnessBox"]
