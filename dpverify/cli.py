"""The command line: ``dpverify check PATH... [--json] [--precision DIGITS]`` and
``dpverify report PATH... --out DIR``.

Exit codes are a public contract: 0 when every claim holds, 1 when any claim
is refuted or could not be decided, 2 on a usage or spec error.
"""
from __future__ import annotations

import contextlib
import sys
from typing import Optional

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from . import __version__
from .checks.workspace import DEFAULT_MAX_WORK, DEFAULT_PRECISION, Options
from .errors import SpecError
from .runner import Report, check_paths, default_jobs, exit_code, render_error


def _points(values: tuple[str, ...]) -> Optional[dict[str, str]]:
    out = {}
    for item in values:
        if "=" not in item:
            raise click.BadParameter(f"{item!r} is not NAME=VALUE", param_hint="--point")
        name, value = item.split("=", 1)
        out[name.strip()] = value.strip()
    return out or None


@click.group()
@click.version_option(__version__, prog_name="dpverify")
def main() -> None:
    """Machine-check the claims made about differentially private mechanisms."""


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of the table.")
@click.option("--precision", default=DEFAULT_PRECISION, show_default=True, type=click.IntRange(15, 10_000),
              help="Significant digits of the certified interval arithmetic.")
@click.option("--max-work", default=DEFAULT_MAX_WORK, show_default=True, type=click.IntRange(1),
              help="Refuse universes whose estimated work (datasets+pairs) x outputs exceeds this.")
@click.option("--proofs/--no-proofs", default=True, show_default=True,
              help="Try to prove claims for every parameter value (z3), beyond the grid.")
@click.option("--spec", "spec_filter", default=None, help="Only the spec with this name.")
@click.option("--claim", "claim_filter", default=None, help="Only the claim with this id.")
@click.option("--point", "point_values", multiple=True, help="Only grid points with NAME=VALUE (repeatable).")
@click.option("--jobs", "-j", default=None, type=click.IntRange(1),
              help="Worker processes, one spec file each [default: the number of cores].")
def check(paths: tuple[str, ...], as_json: bool, precision: int, max_work: int, proofs: bool,
          spec_filter: Optional[str],
          claim_filter: Optional[str], point_values: tuple[str, ...], jobs: Optional[int]) -> None:
    """Check every claim of the spec files under PATHS."""
    options = Options(precision=precision, max_work=max_work, proofs=proofs)
    report = _run(list(paths), options, show_progress=not as_json, claim_filter=claim_filter,
                  point_filter=_points(point_values), spec_filter=spec_filter, jobs=jobs)
    _print(report, as_json)
    sys.exit(exit_code(report))


def _print(report: Report, as_json: bool) -> None:
    if as_json:
        from .report.json_report import dumps
        click.echo(dumps(report))
    else:
        from .report.terminal import render
        console = Console()
        if not console.is_terminal:  # a log or a pipe: do not squeeze the table into 80 columns
            console = Console(width=160)
        render(report, console)


def _run(paths: list[str], options: Options, show_progress: bool, claim_filter: Optional[str] = None,
         point_filter: Optional[dict[str, str]] = None, spec_filter: Optional[str] = None,
         jobs: Optional[int] = None) -> Report:
    """Check the specs under ``paths``, with a progress bar on a terminal; exit 2 on a usage error.

    Whatever spec code prints goes to stderr: stdout carries only the report (``--json`` stays
    one parseable document)."""
    console = Console(stderr=True)
    jobs = default_jobs() if jobs is None else jobs
    with contextlib.redirect_stdout(sys.stderr):
        return _checked(paths, options, console, show_progress, claim_filter, point_filter, spec_filter, jobs)


def _checked(paths: list[str], options: Options, console: Console, show_progress: bool,
             claim_filter: Optional[str], point_filter: Optional[dict[str, str]], spec_filter: Optional[str],
             jobs: int) -> Report:
    try:
        if show_progress and console.is_terminal:
            progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), console=console, transient=True)
            with progress:
                task = progress.add_task("checking", total=None)
                return check_paths(paths, options, claim_filter=claim_filter, point_filter=point_filter,
                                   spec_filter=spec_filter, on_load=lambda n: progress.update(task, total=n),
                                   on_point=lambda label: progress.update(task, advance=1, description=label),
                                   jobs=jobs)
        return check_paths(paths, options, claim_filter=claim_filter, point_filter=point_filter,
                           spec_filter=spec_filter, jobs=jobs)
    except SpecError as err:
        click.echo(f"error: {render_error(err)}", err=True)
        sys.exit(2)


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, writable=True),
              help="Directory to write the report into (created if missing).")
@click.option("--precision", default=DEFAULT_PRECISION, show_default=True, type=click.IntRange(15, 10_000),
              help="Significant digits of the certified interval arithmetic.")
@click.option("--proofs/--no-proofs", default=True, show_default=True,
              help="Try to prove claims for every parameter value (z3), beyond the grid.")
@click.option("--timings", is_flag=True,
              help="Show the time of each claim (the report is then not byte-for-byte reproducible).")
def report(paths: tuple[str, ...], out: str, precision: int, proofs: bool, timings: bool) -> None:
    """Write Markdown, HTML and JSON reports of the spec files under PATHS into OUT.

    One Markdown and one self-contained HTML page per spec, index.md, index.html and
    report.json.  Exit codes as for check: 0 when every claim holds (or is refuted as
    expected), 1 when one is refuted or undecided unexpectedly, 2 on an error.
    """
    from pathlib import Path

    from .report.model import Settings
    from .report.site import write
    checked = _run(list(paths), Options(precision=precision, proofs=proofs), show_progress=True)
    code = exit_code(checked)
    settings = Settings(precision=precision, proofs=proofs, timings=timings, paths=tuple(paths))
    try:
        written = write(checked, Path(out), settings, code)
    except OSError as err:
        click.echo(f"error: cannot write the report into {out}: {err}\n  fix: give --out a writable directory",
                   err=True)
        sys.exit(2)
    counts: dict[str, int] = {}
    for status in checked.statuses():
        counts[status] = counts.get(status, 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no claims checked"
    click.echo(f"wrote {len(written)} files to {out} ({summary}); open {Path(out) / 'index.html'}")
    sys.exit(code)


if __name__ == "__main__":
    main()
