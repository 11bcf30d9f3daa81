"""The command line: ``dpverify check PATH... [--json]`` and ``dpverify report PATH... --out DIR``,
both with the selection and work options of :mod:`dpverify.cli_options`.

Exit codes are a public contract: 0 when every claim holds, 1 when any claim
is refuted or could not be decided, 2 on a usage or spec error; 130 or 143 when
SIGINT or SIGTERM stopped the run.
"""
from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Iterator

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from . import logs
from .cli_options import Run, run_options
from .errors import SpecError
from .engine import pool
from .runner import Interrupted, Report, check_paths, exit_code, interruptible, render_error
from .version import __version__


@click.group()
@click.version_option(__version__, prog_name="dpverify")
def main() -> None:
    """Machine-check the claims made about differentially private mechanisms."""


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of the table.")
@run_options
def check(paths: tuple[str, ...], as_json: bool, run: Run) -> None:
    """Check every claim of the spec files under PATHS."""
    with _stoppable():
        report = _run(list(paths), run, show_progress=not as_json)
        _print(report, as_json)
    sys.exit(exit_code(report))


@contextlib.contextmanager
def _stoppable() -> Iterator[None]:
    """SIGINT or SIGTERM stops the run and its workers at once and exits 130 or 143."""
    try:
        with interruptible():
            yield
    except Interrupted as stop:
        click.echo(f"interrupted ({signal.Signals(stop.signum).name}): the worker processes were stopped; "
                   "nothing was reported", err=True)
        sys.exit(stop.exit_code)


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


def _run(paths: list[str], run: Run, show_progress: bool) -> Report:
    """Check the specs under ``paths``, with a progress bar on a terminal (not with ``-q``) and
    the diagnostics ``-v``/``-q`` ask for (:mod:`dpverify.logs`); exit 2 on a usage error.

    Whatever spec code prints goes to stderr: stdout carries only the report (``--json`` stays
    one parseable document)."""
    logs.configure(run.verbosity)  # before the workers fork: they inherit it
    console = Console(stderr=True)
    jobs = pool.available() if run.jobs is None else run.jobs
    selection = dict(claim_filter=run.claim_filter, point_filter=run.point_filter, spec_filter=run.spec_filter,
                     jobs=jobs)
    with contextlib.redirect_stdout(sys.stderr):
        try:
            if show_progress and not run.quiet and console.is_terminal:
                progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                    TimeElapsedColumn(), console=console, transient=True)
                with progress:
                    task = progress.add_task("checking", total=None)
                    return check_paths(paths, run.options, on_load=lambda n: progress.update(task, total=n),
                                       on_point=lambda label: progress.update(task, advance=1, description=label),
                                       **selection)
            return check_paths(paths, run.options, **selection)
        except SpecError as err:
            click.echo(f"error: {render_error(err)}", err=True)
            sys.exit(2)


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, writable=True),
              help="Directory to write the report into (created if missing).")
@click.option("--timings", is_flag=True,
              help="Show the time of each claim (the report is then not byte-for-byte reproducible).")
@run_options
def report(paths: tuple[str, ...], out: str, timings: bool, run: Run) -> None:
    """Write Markdown, HTML and JSON reports of the spec files under PATHS into OUT.

    One Markdown and one self-contained HTML page per spec, index.md, index.html and
    report.json, of the claims and points the selection options choose (all by default).
    Exit codes as for check: 0 when every claim holds (or is refuted as expected), 1 when
    one is refuted or undecided unexpectedly, 2 on an error.
    """
    with _stoppable():
        code = _write_report(list(paths), out, timings, run)
    sys.exit(code)


def _write_report(paths: list[str], out: str, timings: bool, run: Run) -> int:
    """Check, write the report into ``out`` and say what was written; returns the exit code."""
    from pathlib import Path

    from .report.model import Settings
    from .report.site import write
    checked = _run(paths, run, show_progress=True)
    code = exit_code(checked)
    settings = Settings(precision=run.options.precision, proofs=run.options.proofs, timings=timings,
                        paths=tuple(paths))
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
    return code


if __name__ == "__main__":
    main()
