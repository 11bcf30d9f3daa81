"""Reading a mechanism program on datasets: one distribution per dataset.

:func:`distribution` gives one dataset's exact output law in a chosen backend
(used for independent recomputation and exact tie-breaking);
:func:`all_distributions` computes every dataset of a universe once, in
certified interval arithmetic, and groups identical laws so that later pair
comparisons work on distinct distributions only.
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Hashable, Optional

import sympy

from ...errors import NotRational, SpecError, dsl_misuse, journal, line_in
from . import product_form
from .backend import Backend, IntervalBackend
from .enumerate import Distribution, Runner, Session
from ..continuous.noisy import Density, NeedsExactParameters


@functools.lru_cache(maxsize=256)
def _accepted(program: Callable[..., Any], skip: int = 1) -> Optional[frozenset]:
    """The keyword parameters a function takes after its first ``skip`` positional ones
    (None: it takes any, through **kwargs)."""
    try:
        parameters = list(inspect.signature(program).parameters.values())[skip:]
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return frozenset(p.name for p in parameters)


def keywords(fn: Callable[..., Any], params: Mapping[str, Any], skip: int = 2) -> dict:
    """The parameters ``fn`` declares after its ``skip`` positional arguments."""
    names = _accepted(fn, skip)
    return dict(params) if names is None else {k: v for k, v in params.items() if k in names}


def call_with(program: Callable[..., Any], data: tuple, params: Mapping[str, Any]) -> Any:
    """Call a mechanism with the parameters it declares (a grid may hold claim-only ones).  A sample of a
    sample-complexity sum is passed as a new object per call (``Sample.replay``: replays do not share state)."""
    if type(data) is not tuple:
        from ..datasets.counts import fresh  # noqa: PLC0415 (the datasets package imports this one)
        data = fresh(data)
    return program(data, **keywords(program, params, skip=1))


def _call(program: Callable[..., Any], data: tuple, params: Mapping[str, Any],
          session: Session) -> Distribution:
    code = getattr(program, "__code__", None)
    filename = code.co_filename if code else "<mechanism>"
    first_line = code.co_firstlineno if code else None
    session.last_key = None
    try:
        with journal() as raised:
            try:
                kwargs = session.convert(params)
                run = lambda: call_with(program, data, kwargs)  # noqa: E731
                law = product_form.distribution(run, session)  # an argmax in m integrals, when recognised
                if law is None:
                    runner = Runner(session)
                    law = runner.distribution(run)
                    session.last_key = runner.law_key
            except Exception as exc:
                if session.branch is not None:  # a parameter's value was used, whatever the program did next
                    raise session.branch from None
                _refused(raised.swallowed(exc))
                raise
            if session.branch is not None:  # ... even when the program caught the refusal and went on
                raise session.branch
            _refused(raised.swallowed())
    except NeedsExactParameters as exc:
        raise SpecError("a noise parameter or a value compared with noise is an inexact number",
                        "compute noise scales and thresholds exactly: Fractions, sympy numbers, "
                        "dp.exp/dp.log/dp.sqrt", file=filename, line=line_in(exc.__traceback__, filename)) from None
    except SpecError as err:
        err.problem = f"{err.problem} (on dataset {data!r})" if "on dataset" not in err.problem else err.problem
        raise err.located(filename, line_in(err.__traceback__, filename) or first_line) from None
    except NotRational:
        raise
    except RecursionError:
        raise SpecError(f"the mechanism recursed without end on dataset {data!r}",
                        "make the program terminate on every branch",
                        file=filename) from None
    except Exception as exc:  # the spec's own code failed: report where, never a traceback
        misuse = dsl_misuse(exc)  # plain Python refusing a dp.* call: say what to write
        if misuse is not None:
            raise misuse.located(filename, line_in(exc.__traceback__, filename) or first_line) from None
        raise SpecError(f"the mechanism raised {type(exc).__name__}: {exc} on dataset {data!r}",
                        "fix the program so it runs on every dataset of the universe",
                        file=filename, line=line_in(exc.__traceback__, filename) or first_line) from None
    return law


def _refused(caught: Optional[Exception]) -> None:
    """Raise the refusal a program caught and went on from (see :class:`dpverify.errors.Journal`)."""
    if caught is None:
        return
    if isinstance(caught, SpecError) and "caught" not in caught.problem:
        caught.problem += ("; the program caught this refusal and went on (except ...), so the run cannot be "
                           "read: a caught refusal still refuses")
    raise caught


def mass(weight: Any, backend: Backend) -> Any:
    """The probability a weight carries: itself, or a density's integral."""
    return weight.mass(backend) if isinstance(weight, Density) else weight


def law_key(law: Distribution, backend: Backend, index: int, described: Optional[Hashable] = None) -> Hashable:
    """What identical laws share, for grouping them.

    ``described``: the run's exact description of the law (:attr:`.enumerate.Runner.law_key`: every leaf's
    output, the branches it took and an exact token of each branch list along its path -- the same
    primitive arguments as exact numbers), when it has one: equal descriptions are equal laws, weight for
    weight, whatever the enclosures.  Else every output with its weight's exact key, when the reading pins
    every weight down (a point enclosure is one exact binary number); else the dataset's own ``index``, so
    the law is grouped with no other.  Equal enclosures that are not points prove nothing: Bernoulli(p)
    and Bernoulli(p (1 - 10^-60)) can share them at 50 digits, and a law merged with another by mistake
    drops the pair between them (every divergence claim would hold on it vacuously)."""
    if described is not None:
        return described
    key = []
    for output, weight in law.items():
        found = weight.exact_key(backend) if isinstance(weight, Density) else backend.exact_key(weight)
        if found is None:
            return ("dataset", index)
        key.append((output, found))
    return frozenset(key)


def _check_mass(law: Distribution, backend: Backend, data: tuple, program: Callable[..., Any]) -> None:
    values = [mass(v, backend) for v in law.values()]
    if any(v is None for v in values):
        return
    total = sum(values[1:], values[0])
    if backend.sign(total - 1) not in (0, None):
        code = getattr(program, "__code__", None)
        raise SpecError(f"the output probabilities on dataset {data!r} sum to {total}, not 1",
                        "check the probabilities passed to categorical/bernoulli",
                        file=code.co_filename if code else None, line=code.co_firstlineno if code else None)


def distribution(program: Callable[..., Any], data: tuple, params: Mapping[str, sympy.Expr],
                 backend: Backend, windows: Optional[dict] = None) -> Distribution:
    """One dataset's exact output law, computed afresh (no shared caches)."""
    law = _call(program, data, params, Session(backend, windows))
    _check_mass(law, backend, data, program)
    return law


GROUPING = True
"""Whether :func:`all_distributions` groups identical laws by default (tests turn it off to compare)."""


@dataclass
class Table:
    """Every dataset's output law, computed once, with identical laws grouped.

    ``laws[k]`` is the k-th distinct law; ``law_of[i]`` the index of dataset
    i's law; ``windows`` the final tail windows (needed to recompute a law
    independently with the same lumping).
    """

    datasets: list[tuple]
    laws: list[Distribution]
    law_of: list[int]
    backend: IntervalBackend
    windows: dict = field(default_factory=dict)
    memo: dict = field(default_factory=dict, repr=False, compare=False)
    """Results of exact functions of this table's weights kept for the checks that read it (the
    density cells' normal forms and suprema: :func:`dpverify.engine.continuous.density_cells.cells`)."""


def all_distributions(program: Callable[..., Any], datasets: list[tuple], params: Mapping[str, sympy.Expr],
                      dps: int, progress: Optional[Callable[[int], None]] = None,
                      group: Optional[bool] = None) -> Table:
    """Compute each dataset's law once, in certified interval arithmetic at ``dps`` digits; with ``group``
    (default: :data:`GROUPING`), laws proved identical are kept once (see :func:`law_key`); without, one
    law per dataset (the reference tests/test_law_grouping.py holds the grouping to)."""
    group = GROUPING if group is None else group
    backend = IntervalBackend(dps)
    session = Session(backend)
    session.keyed = group
    laws: list[Optional[Distribution]] = [None] * len(datasets)
    described: list[Optional[Hashable]] = [None] * len(datasets)
    seen_version: list[int] = [0] * len(datasets)
    todo = list(range(len(datasets)))
    while todo:
        for count, i in enumerate(todo):
            laws[i] = _call(program, datasets[i], params, session)
            described[i] = session.last_key
            seen_version[i] = session.window_version
            if progress is not None and count % 64 == 63:
                progress(64)
        # Tail windows only grow; laws computed under an older window are redone.
        todo = [i for i in range(len(datasets)) if seen_version[i] != session.window_version]
    distinct: dict = {}
    law_of = []
    unique: list[Distribution] = []
    for index, law in enumerate(laws):
        key = law_key(law, backend, index, described[index]) if group else ("dataset", index)
        if key not in distinct:
            distinct[key] = len(unique)
            unique.append(law)
            _check_mass(law, backend, datasets[len(law_of)], program)
        law_of.append(distinct[key])
    return Table(datasets, unique, law_of, backend, session.windows)
