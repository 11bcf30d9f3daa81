"""Counted budgets of the composed privacy profiles (``profile``, ``gdp``): estimated before the work.

Every loop of the composition routes whose length grows with the number of runs T, the number of
distinct losses or the grid is bounded by a count estimated *before* it starts -- terms and products of
exact polynomials (:mod:`.pld`), multinomial terms (:mod:`.pld_atoms`), the digit operations of the
integer products of the discretised distributions (:mod:`.pld_bounds`), moment integrals of the Mellin
route (:mod:`.pld_gaussian_mellin`) -- never by a clock.  A composition beyond a budget is refused at
once with the budget's name (the route then tries the next one, or the claim ends ``unknown``).

The budgets scale with ``--max-work`` (``Options.max_work`` over its default): the check sets
:data:`FACTOR` from the run's options before it builds a route (deterministic: the same options give the
same verdicts on any machine).
"""
from __future__ import annotations

FACTOR = 1.0
"""--max-work over its default (set by the profile and gdp checks for their run): every budget here is
multiplied by it."""

HOW = "raise it with --max-work (every composition budget scales with it)"
"""How to raise a composition budget, for the refusals' messages."""


def scaled(limit: float) -> float:
    """A budget at the run's --max-work."""
    return limit * FACTOR


def set_factor(max_work: int) -> None:
    """Scale the composition budgets for a run with ``--max-work`` = ``max_work``."""
    from ...options import DEFAULT_MAX_WORK
    global FACTOR
    FACTOR = max(max_work / DEFAULT_MAX_WORK, 1e-6)


KARATSUBA = 1.585
"""The exponent of Python's integer multiplication (Karatsuba) in the cost model of :func:`product_cost`."""


def product_cost(words_a: float, words_b: float) -> float:
    """Digit operations of one product of two integers of ``words_a`` and ``words_b`` 30-bit digits:
    Python multiplies a long by a short one in short-by-short chunks, each Karatsuba."""
    small, large = sorted((max(words_a, 1.0), max(words_b, 1.0)))
    return (large / small) * small ** KARATSUBA
