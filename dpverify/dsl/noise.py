"""Continuous noise primitives: Laplace, one-sided exponential and Gaussian noise on an exact answer.

Each returns a noisy value -- a handle the engine integrates over exactly,
never a sample -- which the engine creates through the DSL's port
(:mod:`.port`).  A mechanism may compare noisy values with constants or with
each other (``if x > threshold:``), shift them by constants, add them to each
other (sums can be released, not compared), and return them; the engine then
computes exact output probabilities, or for returned values exact densities.
"""
from __future__ import annotations

import sys
from typing import Any

import sympy

from ..errors import SpecError
from . import port
from .queries import Query
from .universe import Neighbours


def _noise(kind: str, value: Any, scale: Any, fn: str, what: str) -> Any:
    engine = port.engine()
    if not engine.running():
        raise port.outside_run(fn)
    centre = engine.exact(value, "value", fn)
    width = engine.exact(scale, what, fn)
    positive = width > 0 if not isinstance(width, sympy.Basic) else width.is_positive
    if positive is False or (positive is None and not width.free_symbols):
        raise SpecError(f"{fn}: {what}={scale} must be positive", f"pass {what} > 0, e.g. 1/eps")
    if positive is None:
        raise SpecError(f"{fn}: cannot tell that {what}={scale} is positive",
                        "declare the parameters positive: dp.symbol('eps', positive=True)")
    caller = sys._getframe(2)  # the mechanism's line that asked for the noise
    return engine.noise(kind, centre, width, (caller.f_code.co_filename, caller.f_lineno))


def laplace(value: Any, scale: Any) -> Any:
    """value + Lap(scale): density exp(-|x - value|/scale) / (2 scale)."""
    return _noise("laplace", value, scale, "laplace", "scale")


def exponential_noise(value: Any, scale: Any) -> Any:
    """value + Exp(scale), one-sided: density exp(-(x - value)/scale)/scale for x >= value."""
    return _noise("exponential", value, scale, "exponential_noise", "scale")


def gaussian(value: Any, sigma: Any) -> Any:
    """value + N(0, sigma^2); released values only (Gaussian noise cannot be compared exactly)."""
    return _noise("gaussian", value, sigma, "gaussian", "sigma")


def laplace_mechanism(query: Any, data: Any, eps: Any, *, neighbours: Any) -> Any:
    """q(data) + Lap(Delta/eps), with Delta *derived* from the query (never typed in).

    ``query`` is built with dp.count/dp.total/dp.mean/... and a record ``domain=``; its
    sensitivity under ``neighbours`` is derived with sympy as for the exponential mechanism
    (Delta(n) at the dataset's size; under add/remove the supremum over all sizes).
    """
    if not isinstance(query, Query) or query.is_score:
        raise SpecError(f"laplace_mechanism: {query!r} is not a query of the dataset",
                        "build it with dp.count/dp.total/dp.mean(..., domain=RECORDS), or call dp.laplace "
                        "with an explicit scale")
    if not isinstance(neighbours, Neighbours):
        raise SpecError(f"laplace_mechanism: neighbours={neighbours!r}: the derived sensitivity depends on "
                        "the neighbour relation", "pass neighbours=dp.REPLACE_ONE or dp.ADD_REMOVE")
    data = tuple(data)
    eps = port.engine().exact(eps, "eps", "laplace_mechanism")  # asks for exact parameters in the certified reading
    try:
        delta, _ = port.engine().runtime_sensitivity(query, (None,), neighbours, len(data))
    except port.NotDerivable as err:
        raise SpecError(f"laplace_mechanism: cannot derive the query's sensitivity: {err}",
                        "declare the query's domain= and build it from counts, totals, means or max/min, "
                        "or call dp.laplace with an explicit scale") from None
    return _noise("laplace", query(data), delta / eps, "laplace_mechanism", "scale")
