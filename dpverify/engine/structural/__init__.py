"""Structural reading: a mechanism's privacy cost for EVERY dataset of every size, from its structure.

* :mod:`.values` -- the generic dataset (every dataset of symbolic size n at once) and the values a
  program computes from it: data-independent (:class:`~.values.Sym`), derived from the data without
  noise (:class:`~.values.DataValue`), noisy (:class:`~.values.Handle`); every other use refuses.
* :mod:`.gate` -- the whitelist a program must pass first: a static read of its bytecode and of
  everything it can call (no exception handler, no probe builtin, no attribute but a few, no state
  shared between a term's records); anything it cannot classify gets no structural proof.
* :mod:`.reading` -- runs the program on the generic dataset (the DSL's port and a globals overlay
  answer its primitives and builtins), once per path of outcomes of its comparisons of noisy values,
  and records each path's noise steps.
* :mod:`.lemmas` -- each step's centre sensitivity derived for every n, the calibration lemma of its
  noise, sequential composition, and :func:`~.lemmas.at_most` (cost <= bound for every n and every
  parameter value, decided exactly).

The engine knows nothing of claims: :mod:`dpverify.checks.privacy.structural` compares the cost with
a claim, cross-checks it against the exact engine and writes the verdict.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from .lemmas import Cost, answers_cost, at_most, record_cost
from .reading import Reading, read
from .values import NotStructural


def cost_of(program: Callable[..., Any], universe: Any, params: dict) -> Cost:
    """The pure-eps cost of ``program`` for every dataset the universe's records and relation allow
    (every size n >= the cost's n_min), ``params`` name -> sympy symbol (generalised) or exact value.
    Raises :class:`NotStructural` with the reason when the program is not in the structural form."""
    from ...dsl.universe import l1_one, linf_one
    relation = universe.neighbours
    if relation is l1_one or relation is linf_one:
        if len(universe.sizes) != 1:
            raise NotStructural("an answers universe of several lengths")
        m = universe.sizes[0]
        return answers_cost(read(program, relation, universe.records, params, answers=m), relation, m)
    return record_cost(read(program, relation, universe.records, params), relation, universe.records)


__all__ = ["Cost", "NotStructural", "Reading", "at_most", "cost_of", "read"]
