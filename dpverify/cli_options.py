"""The options ``dpverify check`` and ``dpverify report`` share, defined once.

:func:`run_options` puts the selection (``--spec``, ``--claim``, ``--point``), work
(``--precision``, ``--max-work``, ``--proofs/--no-proofs``, ``--jobs``), verdict cache
(``--cache/--no-cache``, ``--cache-dir``) and verbosity (``-v``, ``-q``) options on a command and hands the command one :class:`Run` instead of
ten keyword arguments.  Values are validated by :mod:`dpverify.options`, as in the pytest
plugin; a bad value is a click usage error (exit code 2) naming the option.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

import click

from .cache import DEFAULT_DIR, ENV_VARIABLE
from .options import (DEFAULT_MAX_WORK, DEFAULT_PRECISION, PRECISION_RANGE, OptionError, Options, check_jobs,
                      check_max_work, check_precision, parse_points)


@dataclass(frozen=True)
class Run:
    """What one run checks and how: the check options, the selection, the workers, the verbosity."""

    options: Options
    spec_filter: Optional[str] = None
    claim_filter: Optional[str] = None
    point_filter: Optional[dict[str, str]] = None
    jobs: Optional[int] = None  # None: one worker per core
    verbosity: int = 0  # -q is -1, each -v adds 1
    cache: Optional[bool] = None  # --cache / --no-cache; None: the default (dpverify.cli decides)
    cache_dir: Optional[str] = None  # --cache-dir; None: $DPVERIFY_CACHE_DIR, else ./.dpverify_cache

    @property
    def quiet(self) -> bool:
        return self.verbosity < 0


def _validating(check: Callable[[Any, str], Any]) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A click callback running one of :mod:`dpverify.options`' validators on a given value."""
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is None:
            return None
        try:
            return check(value, param.opts[0])
        except OptionError as err:
            raise click.UsageError(str(err), ctx=ctx) from None  # the message names the option
    return callback


def _scheduler(ctx: click.Context, param: click.Parameter, value: Optional[str]) -> None:
    """--scheduler: reach the Dask scheduler once, then let every process of the run use it."""
    if value is None:
        return
    from .engine.execution import executor  # noqa: PLC0415  (only runs given --scheduler pay for it)
    from .errors import SpecError  # noqa: PLC0415
    try:
        executor.probe(value)
    except SpecError as err:
        raise click.UsageError(f"--scheduler: {err.problem} (fix: {err.fix})", ctx=ctx) from None
    executor.configure(value)


_OPTIONS = [
    click.option("--precision", type=str, metavar="DIGITS", default=DEFAULT_PRECISION, show_default=True,
                 callback=_validating(check_precision),
                 help=f"Significant digits of the certified interval arithmetic "
                      f"({PRECISION_RANGE[0]} to {PRECISION_RANGE[1]})."),
    click.option("--max-work", type=str, metavar="N", default=DEFAULT_MAX_WORK, show_default=True,
                 callback=_validating(check_max_work),
                 help="Refuse universes whose estimated work (datasets+pairs) x outputs exceeds this."),
    click.option("--proofs/--no-proofs", default=True, show_default=True,
                 help="Try to prove claims for every parameter value (z3), beyond the grid."),
    click.option("--spec", "spec_filter", metavar="NAME", default=None, help="Only the spec with this name."),
    click.option("--claim", "claim_filter", metavar="ID", default=None, help="Only the claim with this id."),
    click.option("--point", "point_values", metavar="NAME=VALUE", multiple=True, callback=_validating(parse_points),
                 help="Only grid points with NAME=VALUE (repeatable)."),
    click.option("--jobs", "-j", type=str, metavar="N", default=None, callback=_validating(check_jobs),
                 help="Worker processes, one spec file each [default: the number of cores]."),
    click.option("--cache/--no-cache", "use_cache", default=None,
                 help="Reuse the verdicts of unchanged spec files, options, dpverify and libraries "
                      "(deterministic results only; see docs/reference/cli.md, the verdict cache) [default: on]."),
    click.option("--cache-dir", metavar="DIR", default=None, type=click.Path(file_okay=False),
                 help=f"Where the verdict cache lives [default: ${ENV_VARIABLE}, else ./{DEFAULT_DIR}]."),
    click.option("--scheduler", metavar="tcp://HOST:PORT", default=None, expose_value=False, callback=_scheduler,
                 help="Compute datasets' laws and screen pairs on this Dask scheduler's workers (docs/cluster.md)."),
    click.option("--verbose", "-v", count=True, help="Log how verdicts were reached (-vv: more detail)."),
    click.option("--quiet", "-q", is_flag=True, help="Only the report and errors: no progress (bar or lines), no log."),
]


def run_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the shared options to a click command; it receives them as ``run: Run``."""
    @functools.wraps(command)
    def wrapper(*args: Any, precision: int, max_work: int, proofs: bool, spec_filter: Optional[str],
                claim_filter: Optional[str], point_values: Optional[dict[str, str]], jobs: Optional[int],
                use_cache: Optional[bool], cache_dir: Optional[str], verbose: int, quiet: bool,
                **kwargs: Any) -> Any:
        run = Run(Options(precision=precision, max_work=max_work, proofs=proofs), spec_filter=spec_filter,
                  claim_filter=claim_filter, point_filter=point_values, jobs=jobs,
                  verbosity=-1 if quiet else verbose, cache=use_cache, cache_dir=cache_dir)
        return command(*args, run=run, **kwargs)
    for option in reversed(_OPTIONS):
        wrapper = option(wrapper)
    return wrapper
