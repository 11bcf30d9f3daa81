"""Checking ``symmetric=True``: every ordering of a dataset must give the same law, exactly.

A universe declared symmetric is enumerated as multisets, which is sound only
if the mechanism's law does not depend on the order of the records.  Before
the engine relies on that, :func:`check_symmetric` runs the program on every
ordering of every multiset and compares each ordering's law with the law of
the sorted representative:

The runs use the exact sympy reading, whose primitive caches are keyed by the
exact arguments (an interval reading would share a cache entry between two
arguments with the same enclosure, which proves nothing exact):

1. **Same trace** (cheap): every execution visits the very same cached branch
   lists (the primitives got the same exact arguments) and returns an equal
   output of the same types.  The laws are then the same products summed the
   same way: equal exactly.
2. Otherwise the two exact laws are compared: different output sets, or a
   weight whose difference has a certified non-zero sign, show a difference;
   a difference exact algebra proves zero shows equality; anything else is
   refused as undecidable.

The work is the number of orderings (sequences); :func:`orderings` counts it
so that the checks fold it into the ``--max-work`` estimate before any run.

**Without the orderings.**  First, :mod:`.orderfree` reads the program's code: when every use of
the dataset is an order-free operation (``len``, ``sum``, ``sorted``, ``min``, ``max``, a sum of a
pure exact per-record term, a dpverify count/total/mean query, or passing it to functions and
closures that are read the same way), the law is a function of the multiset, and no ordering is
run.  Terms that see values other than records (a candidate, a parameter) need those values to be
plain exact numbers at run time: then the program runs once per multiset (every branch, the exact
reading) while :class:`.orderfree.Watch` checks them, instead of once per ordering.  Otherwise --
or when a run shows such a value of another kind -- the full check above runs, under the work
limit (``max_work``): refused up front when its orderings exceed it.  :func:`check_symmetric`
returns how the declaration was shown, for the verdict.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Optional

import sympy

from ...dsl.universe import Universe
from ...errors import EnumerationTooLarge, SpecError
from ..program.backend import IntervalBackend, SympyBackend, exact_sign, is_exactly_zero
from ..program.enumerate import TRACE, Distribution, Session
from ..continuous.noisy import Density
from ..program.reading import _call
from . import orderfree


def orderings(universe: Universe, program: Optional[Callable[..., Any]] = None) -> int:
    """How many runs the check makes (0 when the universe is not declared symmetric): the sequences of
    every size, or, given the ``program`` and when its code shows it order-free (:func:`proof`), one
    run per multiset when its terms need a run-time check and none when they do not."""
    if not universe.symmetric:
        return 0
    if program is not None:
        found = proof(program, universe)
        if isinstance(found, orderfree.Proof):
            return multisets(universe) if found.needs_runs else 0
    return sum(len(universe.records) ** k for k in universe.sizes)


def multisets(universe: Universe) -> int:
    """How many multisets the universe has over its sizes: C(r + k - 1, k) each."""
    r = len(universe.records)
    return sum(math.comb(r + k - 1, k) for k in universe.sizes)


_PROOFS: dict = {}


def proof(program: Callable[..., Any], universe: Universe) -> Any:
    """:func:`.orderfree.analyse` of the program over the universe's records (memoised): a Proof, or the
    reason (a str) it was refused."""
    key = (program, universe.records)
    try:
        found = _PROOFS.get(key)
    except TypeError:  # an unhashable program
        found, key = None, None
    if found is None:
        try:
            found = orderfree.analyse(program, universe.records)
        except orderfree.Refused as why:
            found = str(why)
        except Exception as exc:  # noqa: BLE001 (code this module cannot read: the full check runs)
            found = f"its code could not be read ({type(exc).__name__}: {exc})"
        if key is not None:
            if len(_PROOFS) > 256:
                _PROOFS.clear()
            _PROOFS[key] = found
    return found


def permutations(data: tuple) -> Iterator[tuple]:
    """Each distinct ordering of a dataset once, the dataset itself first (for a multiset sorted by
    the universe's order, the orderings come in lexicographic order)."""
    order = {r: i for i, r in enumerate(dict.fromkeys(data))}
    items = sorted(data, key=order.__getitem__)
    n = len(items)
    while True:
        yield tuple(items)
        i = n - 2
        while i >= 0 and order[items[i]] >= order[items[i + 1]]:
            i -= 1
        if i < 0:
            return
        j = n - 1
        while order[items[j]] <= order[items[i]]:
            j -= 1
        items[i], items[j] = items[j], items[i]
        items[i + 1:] = reversed(items[i + 1:])


def check_symmetric(program: Callable[..., Any], universe: Universe, datasets: list[tuple],
                    params: Mapping[str, Any], windows: dict, max_work: Optional[int] = None) -> str:
    """Raise SpecError unless every ordering of each dataset (a sorted multiset) has its law, exactly;
    return how that was shown.  From the code when :mod:`.orderfree` shows the program order-free
    (and its run-time conditions hold on one run per multiset), else by running every ordering: refused
    with EnumerationTooLarge when those exceed ``max_work``."""
    found = proof(program, universe)
    if isinstance(found, orderfree.Proof) and not all(orderfree.harmless(v) for v in params.values()):
        found = "a parameter is not a number (its methods are code that is not read)"
    if isinstance(found, orderfree.Proof):
        broken = _watched_runs(program, datasets, params, windows, found) if found.needs_runs else None
        if broken is None and not found.bindings_hold():
            broken = "a name the analysis resolved was rebound"
        if broken is None:
            runs = f", its terms checked on one run per multiset ({len(datasets):,})" if found.needs_runs else ""
            return f"shown from the code: it reads the data only through {found.describe()}{runs}"
        reason = broken
    else:
        reason = found
    work = orderings(universe)
    if max_work is not None and work > max_work:
        file, line = universe.origin or (None, None)
        raise EnumerationTooLarge(
            f"symmetric=True could not be shown from the code of {getattr(program, '__name__', 'the mechanism')} "
            f"({reason}), and checking it on every ordering needs {work:,} runs, above the limit of "
            f"{max_work:,}",
            "read the data only through len, sum, sorted, min, max or sums of per-record terms (see "
            "dpverify.engine.datasets.orderfree), use fewer records or a smaller n, or raise the limit with --max-work",
            file=file, line=line)
    session = Session(_Exact(), windows)
    while True:
        version = session.window_version
        for data in datasets:
            _check_multiset(program, universe, data, params, session)
        if session.window_version == version:  # tail windows only grow: redo until they are stable
            return f"every ordering of every multiset ({work:,} runs; not shown from the code: {reason})"


def _watched_runs(program: Callable[..., Any], datasets: list[tuple], params: Mapping[str, Any],
                  windows: dict, found: orderfree.Proof) -> Optional[str]:
    """Run the program on every multiset (every branch) while the proof's run-time conditions are
    watched; None when they held on every run, else why not.  The branches are those of the exact
    reading: the interval reading at 15 digits drops exactly the same ones (a weight that is exactly
    zero, :meth:`.backend.Backend.is_zero`), so it runs the same paths, faster, when the parameters are
    numbers; with symbols, or when it cannot follow a run, the exact reading runs."""
    if not any(_symbolic(v) for v in params.values()):
        found_numeric = _watched_in(program, datasets, params, windows, found, Session(IntervalBackend(15), windows))
        if found_numeric is None or watch_reason(found_numeric):
            return found_numeric
    return _watched_in(program, datasets, params, windows, found, Session(_Exact(), windows))


def watch_reason(why: str) -> bool:
    """Whether a failed watched run failed on a watched value (not on the reading)."""
    return not why.startswith("a run raised")


def _symbolic(value: Any) -> bool:
    return bool(getattr(value, "free_symbols", None))


def _watched_in(program: Callable[..., Any], datasets: list[tuple], params: Mapping[str, Any],
                windows: dict, found: orderfree.Proof, session: Session) -> Optional[str]:
    while True:
        version = session.window_version
        for data in datasets:
            watch = orderfree.Watch(found)
            try:
                with watch:
                    _traced(program, data, params, session)
            except Exception as exc:  # noqa: BLE001 (the full check reports the program's own errors)
                return watch.broken or f"a run raised {type(exc).__name__}"
            if watch.broken is not None:
                return watch.broken
        if session.window_version == version:
            return None


class _Exact(SympyBackend):
    """The exact sympy reading, with zero tests that try a structural positivity test and a
    certified evaluation first (sympy's assumptions are slow on sums of exponentials); the
    answers are the same."""

    def is_zero(self, value: Any) -> bool:
        value = self.num(value)
        if value == 0:
            return True
        if _positive(value):
            return False
        if not value.free_symbols:
            return exact_sign(value) == 0
        return super().is_zero(value)


def _positive(e: sympy.Expr) -> bool:
    """Positive by its form: positive rationals, exp of a rational, and sums, products and rational
    powers of positive terms (False: not shown)."""
    if e.is_Rational:
        return e > 0
    if isinstance(e, sympy.exp):
        return e.args[0].is_Rational
    if e.is_Add or e.is_Mul:
        return all(_positive(a) for a in e.args)
    if e.is_Pow:
        return e.exp.is_Rational and _positive(e.base)
    return False


def _traced(program: Callable[..., Any], data: tuple, params: Mapping[str, Any],
            session: Session) -> tuple[Distribution, list]:
    trace: list = []
    token = TRACE.set(trace)
    try:
        law = _call(program, data, params, session)
    finally:
        TRACE.reset(token)
    return law, trace


def _check_multiset(program: Callable[..., Any], universe: Universe, data: tuple,
                    params: Mapping[str, Any], session: Session) -> None:
    orders = permutations(data)
    first = next(orders)
    base: Optional[tuple[Distribution, list]] = None
    for other in orders:
        if base is None:
            base = _traced(program, first, params, session)
        law, trace = _traced(program, other, params, session)
        if _same_trace(base[1], trace):
            continue
        differs = _compare(base[0], law)
        if differs is not False:
            raise _refusal(universe, program, first, other, differs)


def _same_trace(a: list, b: list) -> bool:
    """The executions visit the very same cached branch lists (exact arguments, in the sympy
    reading) and return equal outputs of the same types: the laws are equal exactly."""
    if len(a) != len(b):
        return False
    for (lists_a, taken_a, out_a, noisy_a), (lists_b, taken_b, out_b, noisy_b) in zip(a, b):
        if noisy_a or noisy_b or taken_a != taken_b or len(lists_a) != len(lists_b) \
                or not _same_output(out_a, out_b) or any(x is not y for x, y in zip(lists_a, lists_b)):
            return False
    return True


def _same_output(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if type(a) is tuple:
        return len(a) == len(b) and all(_same_output(x, y) for x, y in zip(a, b))
    return bool(a == b)


def _compare(a: Distribution, b: Distribution) -> Any:
    """Two exact laws: False when equal, an explanation when they differ, None when undecidable."""
    if set(a) != set(b):
        only = next(iter(set(a) ^ set(b)))
        return f"the output {only!r} is possible on one ordering only"
    for output, weight in a.items():
        other = b[output]
        if isinstance(weight, Density) or isinstance(other, Density):
            if isinstance(weight, Density) and isinstance(other, Density) \
                    and weight.symbolic_key() == other.symbolic_key():
                continue
            return None
        if weight == other:
            continue
        difference = weight - other
        if is_exactly_zero(difference):
            continue
        if exact_sign(difference) in (1, -1):
            return (f"P(o={output!r}) is {_decimal(weight)} on one ordering and {_decimal(other)} "
                    "on the other")
        return None
    return False


def _decimal(x: Any) -> str:
    return str(sympy.N(x, 15))


def _refusal(universe: Universe, program: Callable[..., Any], first: tuple, other: tuple,
             why: Optional[str]) -> SpecError:
    file, line = universe.origin or (None, None)
    name = getattr(program, "__name__", "the mechanism")
    if why is None:
        return SpecError(f"symmetric=True says {name} ignores record order, but its laws on the orderings "
                         f"{first!r} and {other!r} could not be shown equal exactly",
                         "drop symmetric=True (the datasets are then enumerated as sequences), or make the "
                         "mechanism visibly order-independent (e.g. sort the data first)", file=file, line=line)
    return SpecError(f"symmetric=True says {name} ignores record order, but the orderings {first!r} and "
                     f"{other!r} of one dataset give different output laws: {why}",
                     "drop symmetric=True (the datasets are then enumerated as sequences), or make the "
                     "mechanism order-independent (e.g. sort the data first)", file=file, line=line)


__all__ = ["check_symmetric", "multisets", "orderings", "permutations", "proof"]
