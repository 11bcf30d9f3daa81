"""The engine's side of the DSL's port (:mod:`dpverify.dsl.port`): what the primitives may ask of a run.

Importing the engine package installs :data:`ENGINE`, so every spec (which
imports ``dpverify``, whose facade imports the engine) runs its primitives
against it.  Each operation forwards to the module that owns it: draws to the
active runner (:mod:`.enumerate`), noise to the run's noise state
(:mod:`.noise`), exact numbers to :mod:`.noisy` and :mod:`.parameter`, derived
sensitivities to :mod:`.sensitivity`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...dsl import port
from ..continuous import noisy
from . import parameter
from . import primitives  # noqa: F401  (registers the laws' branches before any draw)
from ..continuous.noise import state
from .run import active


class EnginePort:
    """The :class:`dpverify.dsl.port.Engine` the primitives run against."""

    def running(self) -> bool:
        return active() is not None

    def draw(self, name: str, make: Callable[[], Any]) -> Any:
        runner = active()
        if runner is None:
            raise port.outside_run(name)
        return runner.draw(make)

    def noise(self, kind: str, centre: Any, scale: Any, site: tuple) -> Any:
        runner = active()
        if runner is None:
            raise port.outside_run(kind)
        return state(runner).add(noisy.Noise(kind, centre, scale, site=site))

    def exact(self, value: Any, what: str, fn: str) -> Any:
        return noisy.exact(value, what, fn)

    def exact_math(self, fn: Callable[[Any], Any], value: Any) -> Any:
        return parameter.exact_math(fn, value)

    def runtime_sensitivity(self, query: Any, candidates: tuple, relation: Any, size: int) -> tuple[Any, str]:
        from ..sensitivity import derive as sensitivity  # imported by the first query whose sensitivity is derived, not by every run
        try:
            return sensitivity.runtime_sensitivity(query, candidates, relation, size)
        except sensitivity.NotDerivable as err:
            raise port.NotDerivable(str(err)) from None


ENGINE = EnginePort()
port.install(ENGINE)

__all__ = ["ENGINE", "EnginePort"]
