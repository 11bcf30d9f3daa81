"""The command line: ``dpverify check PATH... [--json]`` and ``dpverify report PATH... --out DIR``,
both with the selection and work options of :mod:`dpverify.cli_options`.

Exit codes are a public contract: 0 when every claim holds, 1 when any claim
is refuted or could not be decided, 2 on a usage or spec error; 130 or 143 when
SIGINT or SIGTERM stopped the run.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any, Optional

import click

from . import logs
from .cache import ENV_VARIABLE, Cache, default_dir
from .cli_options import Run, run_options
from .errors import SpecError
from .engine.execution import pool
from .runner import Interrupted, Report, check_paths, exit_code, interruptible, render_error
from .version import __version__


@click.group()
@click.version_option(__version__, prog_name="dpverify")
def main() -> None:
    """Machine-check the claims made about differentially private mechanisms."""


_whole_process = False  # set by run(): this process is the command, so it may end without tearing down


def run() -> None:
    """The ``dpverify`` console script and ``python -m dpverify``: :func:`main`, ending the process
    at once when a command is done (:func:`_finish`)."""
    global _whole_process
    _whole_process = True
    main(prog_name="dpverify")


def _finish(code: int) -> None:
    """Exit with ``code``.  When this process is the command (:func:`run`), after the exit handlers
    and flushing the output, skip the interpreter's teardown (freeing sympy's, numpy's and z3's
    objects one by one takes about 0.1 s, a sixth of a one-claim run); elsewhere (click's test
    runner, an embedding program) a plain ``sys.exit``."""
    if not _whole_process:
        sys.exit(code)
    atexit._run_exitfuncs()  # what atexit registered (logging's flush, multiprocessing's clean-up) runs
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said
            pass
    os._exit(code)


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON document instead of the table (its JSON Schema: dpverify/report/check.schema.json).")
@run_options
def check(paths: tuple[str, ...], as_json: bool, run: Run) -> None:
    """Check every claim of the spec files under PATHS.

    Progress goes to stderr (a bar on a terminal, a line per spec file in a log; -q: none). The summary
    counts claims and claim points by outcome, expected refutations apart. Exit codes: 0 when every
    claim holds or is refuted as expected, 1 when one is refuted unexpectedly or undecided, 2 on an error.
    """
    with _stoppable():
        report = _run(list(paths), run, show_progress=True, keep_specs=False, cache_line=not as_json,
                      while_waiting=_json_module if as_json else _table_modules)
        _print(report, as_json)
    _finish(exit_code(report))


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


def _json_module() -> None:
    """Import what prints ``--json`` (while the workers check)."""
    from .report import json_report  # noqa: F401


def _table_modules() -> None:
    """Import what prints the table (while the workers check)."""
    from rich import console, table  # noqa: F401

    from .report import terminal  # noqa: F401


def _print(report: Report, as_json: bool) -> None:
    if as_json:
        from .report.json_report import dumps
        click.echo(dumps(report))
    else:
        from rich.console import Console

        from .report.terminal import render
        console = Console(emoji=False)  # ":name:" in a message is text, not an emoji
        if not console.is_terminal:  # a log or a pipe: do not squeeze the table into 80 columns
            console = Console(width=160, emoji=False)
        render(report, console)


def _cache(run: Run) -> Optional[Cache]:
    """The run's verdict cache: none with ``--no-cache``; with ``--cache``, ``--cache-dir`` or
    ``$DPVERIFY_CACHE_DIR``, or by default when this process is the ``dpverify`` command, the one in
    ``--cache-dir``, else ``$DPVERIFY_CACHE_DIR``, else ``./.dpverify_cache``.  In process (click's
    test runner, a program calling :func:`main`) there is none unless asked for: such a caller may
    have changed dpverify's code in memory, which no key can see."""
    if run.cache is False:
        return None
    if not (run.cache or run.cache_dir or os.environ.get(ENV_VARIABLE) or _whole_process):
        return None
    return Cache.open(run.cache_dir or default_dir(), run.options)


def _run(paths: list[str], run: Run, show_progress: bool, keep_specs: bool = True, cache_line: bool = True,
         while_waiting: Optional[Callable[[], None]] = None) -> Report:
    """Check the specs under ``paths``, with progress on stderr (not with ``-q``; :func:`_progress`)
    and the diagnostics ``-v``/``-q`` ask for (:mod:`dpverify.logs`); exit 2 on a usage error.
    When the verdict cache answered points, one line on stderr says how many (with ``cache_line``,
    not with ``-q``).

    Whatever spec code prints goes to stderr: stdout carries only the report (``--json`` stays
    one parseable document)."""
    logs.configure(run.verbosity)  # before the workers fork: they inherit it
    jobs = pool.available() if run.jobs is None else run.jobs
    cache = _cache(run)
    selection = dict(claim_filter=run.claim_filter, point_filter=run.point_filter, spec_filter=run.spec_filter,
                     jobs=jobs, cache=cache, keep_specs=keep_specs, while_waiting=while_waiting)
    with contextlib.redirect_stdout(sys.stderr):
        try:
            report = _checked(paths, run, show_progress, selection)
        except SpecError as err:
            click.echo(f"error: {render_error(err)}", err=True)
            sys.exit(2)
    if cache is not None and show_progress and cache_line and not run.quiet and cache.hits:
        click.echo(f"verdict cache: {cache.hits} of {cache.hits + cache.misses} points reused from "
                   f"{cache.directory} ({cache.misses} checked; --no-cache checks all)", err=True)
    return report


def _maybe_terminal() -> bool:
    """Whether stderr may be a terminal as rich sees it (rich decides): a tty, or ``FORCE_COLOR`` /
    ``TTY_COMPATIBLE`` set.  Answered without importing rich, which a log or a pipe does not need."""
    return sys.stderr.isatty() or "FORCE_COLOR" in os.environ or "TTY_COMPATIBLE" in os.environ


def _real_stream(stream: object) -> bool:
    """Whether ``stream`` is backed by a file descriptor (a log file, a pipe, a CI runner's capture):
    the progress lines go there.  A stream in memory (click's test runner, a program capturing the
    output of :func:`main`) gets none: its reader wants the report alone."""
    try:
        stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return False
    return True


def _progress(run: Run, show_progress: bool, jobs: int) -> Any:
    """The run's progress on stderr: a bar on a terminal (:class:`dpverify.report.progress.Bar`), lines
    anywhere else with a file descriptor (:class:`~dpverify.report.progress.Lines`: a CI log), None with
    ``-q`` or into memory."""
    if not show_progress or run.quiet:
        return None
    if _maybe_terminal():
        from rich.console import Console
        console = Console(stderr=True)
        if console.is_terminal:
            from .report.progress import Bar
            return Bar(console)
    if _real_stream(sys.stderr):
        from .report.progress import Lines
        return Lines(sys.stderr, jobs=jobs)
    return None


def _checked(paths: list[str], run: Run, show_progress: bool, selection: dict) -> Report:
    """:func:`check_paths`, under the run's progress (:func:`_progress`)."""
    progress = _progress(run, show_progress, selection["jobs"])
    if progress is None:
        return check_paths(paths, run.options, **selection)
    try:
        with progress if hasattr(progress, "__enter__") else contextlib.nullcontext():
            return check_paths(paths, run.options, progress=progress, **selection)
    finally:
        progress.close()


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
    _finish(code)


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
    from .report.summary import summary_lines
    problem, lines = summary_lines(checked, where=f"each in {Path(out) / 'index.html'}")
    if problem:
        click.secho(problem, fg="red", bold=True)
    for line in lines:
        click.echo(line)
    click.echo(f"wrote {len(written)} files to {out}; open {Path(out) / 'index.html'}")
    return code


if __name__ == "__main__":
    run()
