"""The per-run memo that checks share: each (program, point) is enumerated once, whatever the claims,
and a universe declared symmetric is checked before its laws are used."""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from ..dsl.params import Point
from ..dsl.spec import Spec
from ..engine.datasets.datasets import enumerate_datasets, neighbour_pairs, require_pairs
from ..engine.continuous.noisy import Density
from ..engine.program.contract import global_state, state_changed
from ..engine.program.enumerate import LEAF_BUDGET, MAX_LEAVES
from ..engine.execution.cluster_laws import all_distributions  # the local reading, or a Dask cluster's (--scheduler)
from ..engine.program.reading import Table, keywords
from ..engine.datasets.symmetry import check_symmetric
from ..engine.program.work import guard, params
from ..errors import NotRational, SpecError
from ..options import Options

PAIR_CLAIMS = frozenset({"private", "private_prediction", "stability"})
"""Claim kinds that quantify over neighbouring pairs: vacuous (and refused) on a universe without one."""


@dataclass
class Workspace:
    """Per-run memo: each (program, point) is enumerated once, whatever the claims."""

    options: Options = field(default_factory=Options)
    _tables: dict = field(default_factory=dict)
    _universes: dict = field(default_factory=dict)
    memo: dict = field(default_factory=dict)
    progress: Optional[Callable[[int], None]] = None

    def datasets(self, spec: Spec) -> tuple[list[tuple], np.ndarray, np.ndarray]:
        key = spec.universe
        if key not in self._universes:
            datasets = enumerate_datasets(spec.universe)
            left, right = neighbour_pairs(spec.universe, datasets)
            if any(claim.kind in PAIR_CLAIMS for claim in spec.claims):
                require_pairs(spec.universe, left)
            self._universes[key] = (datasets, left, right)
        return self._universes[key]

    def table(self, spec: Spec, program: Callable[..., Any], point: Point) -> Table:
        """Every dataset's law at ``point``; for a universe declared symmetric, the declaration is
        checked first (every ordering of each multiset has the same law), or refused."""
        key = (id(spec), program, point, self.options.precision)
        if key not in self._tables:
            token = LEAF_BUDGET.set(min(MAX_LEAVES, self.options.max_work))
            before = global_state()
            try:
                guard(spec, program, point, self.options)
                datasets, _, _ = self.datasets(spec)
                table = all_distributions(program, datasets, params(point), self.options.precision,
                                          self.progress)
                if spec.universe.symmetric:
                    self._symmetric(spec, program, point, table.windows)
                if global_state() != before:
                    code = getattr(program, "__code__", None)
                    raise state_changed((code.co_filename, code.co_firstlineno) if code else (None, None))
                self._tables[key] = table
            except SpecError as err:
                self._tables[key] = err  # the same refusal for every claim at this point, computed once
            finally:
                LEAF_BUDGET.reset(token)
        found = self._tables[key]
        if isinstance(found, SpecError):
            raise found
        return found

    def _symmetric(self, spec: Spec, program: Callable[..., Any], point: Point, windows: dict) -> None:
        """Check symmetric=True for ``program`` at ``point`` (once).  A program with a ``mechanism``
        attribute that is the spec's mechanism is a post-processing of it (a prediction at a query
        point): symmetric when the mechanism is, so the mechanism is checked instead."""
        if getattr(program, "mechanism", None) is spec.mechanism:
            program = spec.mechanism
        values = keywords(program, params(point), skip=1)  # the law depends on these only
        key = (program, tuple(sorted(values.items())))
        done = self.memo.setdefault(("symmetric", id(spec)), set())
        if key not in done:
            datasets, _, _ = self.datasets(spec)
            how = check_symmetric(program, spec.universe, datasets, values, windows, self.options.max_work)
            self.memo[("symmetric-how", id(spec))] = how
            logging.getLogger(__name__).info("%s: symmetric=True %s", spec.name, how)
            done.add(key)

    def require_symmetric(self, spec: Spec, program: Callable[..., Any], values: dict[str, Any]) -> None:
        """Before a proof for every value of the symbols in ``values`` over the multisets of a
        universe declared symmetric: the declaration must hold for every such value too (a grid
        point shows it only there).  Raises NotRational (no proof, with the reason) otherwise."""
        if not spec.universe.symmetric:
            return
        if getattr(program, "mechanism", None) is spec.mechanism:
            program = spec.mechanism
        values = keywords(program, values, skip=1)
        key = (program, tuple(sorted(values.items(), key=lambda item: item[0])))
        done = self.memo.setdefault(("symmetric-for-all", id(spec)), {})
        if key not in done:
            datasets, _, _ = self.datasets(spec)
            try:
                check_symmetric(program, spec.universe, datasets, values, {}, self.options.max_work)
                done[key] = None
            except (SpecError, NotRational) as exc:
                done[key] = NotRational(f"symmetric=True is not shown for every value of the parameters, "
                                        f"so no proof over the multisets is attempted ({exc})")
        if done[key] is not None:
            raise done[key]

    def discrete_table(self, spec: Spec, program: Callable[..., Any], point: Point, kind: str) -> Table:
        """:meth:`table`, for claims that need output probabilities (not densities of released values)."""
        table = self.table(spec, program, point)
        for law in table.laws:
            for output, weight in law.items():
                if isinstance(weight, Density):
                    raise SpecError(f"the mechanism releases continuous noisy values (output {output!r}); "
                                    f"{kind} claims need outputs with probabilities",
                                    "release a discrete function of the noisy values (compare them with "
                                    "thresholds), or state a private(...) claim about the densities",
                                    file=getattr(getattr(program, "__code__", None), "co_filename", None),
                                    line=getattr(getattr(program, "__code__", None), "co_firstlineno", None))
        return table
