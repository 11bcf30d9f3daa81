"""The work guard (refuse, before enumerating, a universe too large for the run's limit) and the
conversion of a parameter point into a mechanism's keyword arguments."""
from __future__ import annotations

from typing import Any, Callable

from ...dsl.params import Point
from ...dsl.spec import Spec
from ...errors import EnumerationTooLarge
from ...options import Options
from .backend import IntervalBackend
from ..datasets.datasets import estimate
from .reading import distribution
from ..datasets.symmetry import orderings


def params(point: Point) -> dict[str, Any]:
    """A point as the mechanism's keyword arguments: integer symbols as Python ints (usable as
    sizes and indices), every other value exact, to be converted by the reading."""
    return {sym.name: int(value) if sym.is_integer else value for sym, value in point}


def guard(spec: Spec, program: Callable[..., Any], point: Point, options: Options) -> None:
    """Refuse, before enumerating, a universe whose work exceeds ``options.max_work``.

    Work is counted as (datasets + neighbouring pairs + orderings) x outputs, the datasets,
    pairs and orderings exactly by formula (:func:`.datasets.estimate`, :func:`.symmetry.orderings`; the pairs of
    a custom relation are all those it is asked about, an upper bound, while integer answer vectors under
    ``linf_one``/``l1_one`` are listed without asking and counted exactly),
    the number of outputs read off the law of one largest dataset; the orderings are the sequences
    run to check a ``symmetric=True`` declaration.  The refusal names where the universe was declared.
    """
    size = estimate(spec.universe)
    order_work = orderings(spec.universe, program)  # runs to check symmetric=True (.symmetry)
    work = size.datasets + size.pairs + order_work
    if work <= options.max_work:
        largest = (spec.universe.records[0],) * spec.universe.sizes[-1]
        law = distribution(program, largest, params(point), IntervalBackend(15))
        work *= max(1, len(law))
    if work > options.max_work:
        file, line = spec.universe.origin or (None, None)
        raise EnumerationTooLarge(
            f"the universe of spec {spec.name!r} ({spec.universe.describe()}) needs about {work:.3g} "
            f"units of work ({size.datasets:,} datasets, {size.pairs:,} "
            + ("neighbouring pairs" if size.exact else "pairs to ask the neighbour relation about")
            + (f", {order_work:,} runs to check symmetric=True" if order_work else "")
            + f"), above the limit of {options.max_work:,}",
            "use fewer records or a smaller n, declare symmetric=True if the mechanism ignores record "
            "order, or raise the limit with --max-work", file=file, line=line)
