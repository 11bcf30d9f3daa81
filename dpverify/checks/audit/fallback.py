"""From the exact audit to the statistical one: claims about a ``dp.implementation`` the engine cannot follow.

The exact audit runs an implementation with an instrumented generator; where the code does
something the engine cannot follow (``math.log(u)``, ``rng.gumbel()``, ``u * v``), the run raises
:class:`~dpverify.errors.CannotFollow` located at the code's line.  :func:`decide` then decides the
claim by the statistical audit (:class:`~.statistical.StatisticalCheck`) of the same function, run
as the implementation's black box (:attr:`~dpverify.dsl.implementation.Implementation.fallback`)
with the real, seeded generator that the instrumented one stands for: ``consistent``, ``refuted``
at a stated error probability, or ``unknown`` -- never ``verified``.  Its message says first that
the exact audit was refused, where and why; its evidence (:class:`FallbackEvidence`) names the way
that decided and the refusal's site.

A ``private`` claim tests the cells of a spec program's exact law: the spec's ``conforms(spec_program)``
claim's program, else ``dp.implementation(..., spec_program=...)``; with neither it is ``unknown``,
saying what to add.  Every other SpecError (a bug in the code, a bad argument) stays an error, and so
does the refusal itself with ``fallback=False`` or for a kind of claim the statistical audit does
not decide.
"""
from __future__ import annotations

import copy
import dataclasses
from typing import Any, Callable, Optional

from ...dsl.black_box import BlackBox
from ...dsl.claims import Claim, Conforms, Private
from ...dsl.implementation import GENERATORS, Implementation
from ...dsl.params import Point, point_label
from ...dsl.spec import Spec
from ...errors import CannotFollow, SpecError
from ...evidence import FallbackEvidence, StatisticalEvidence
from ...replay import relative
from ...results import PointResult, Status
from ..workspace import Workspace


def _statistical() -> Any:
    """The statistical audit's check, imported only when an exact audit is refused."""
    from .statistical import StatisticalCheck
    return StatisticalCheck()


def decide(check: Any, spec: Spec, claim: Claim, point: Point, ws: Workspace) -> PointResult:
    """``check.run(...)`` (``check`` a :class:`dpverify.checks.Check`), or, when that is the exact audit of
    an implementation refusing its code, the statistical audit of the same code."""
    try:
        return check.run(spec, claim, point, ws)
    except CannotFollow as refusal:
        implementation = spec.mechanism
        if not isinstance(implementation, Implementation) or implementation.fallback is None:
            raise
        if not _statistical().supports(claim):
            raise SpecError(refusal.problem, f"{refusal.fix}; the statistical audit decides conforms and private "
                            f"claims, not {claim.kind}", file=refusal.file, line=refusal.line) from None
        return _sampled(spec, claim, point, ws, implementation, refusal)


def _sampled(spec: Spec, claim: Claim, point: Point, ws: Workspace, implementation: Implementation,
             refusal: CannotFollow) -> PointResult:
    box, sampled = _black_box(spec, implementation, ws)
    file = relative(refusal.file) if refusal.file else "an unknown file"
    site = f"{file}:{refusal.line}" if refusal.line else file
    refused = (f"the exact audit was refused at {site}: {refusal.problem}; decided by the statistical audit "
               f"instead (the code run with a real {GENERATORS[implementation.rng].library}, {box.seeded})")
    if isinstance(claim, Private) and box.spec_program is None:
        result = PointResult(point_label(point), Status.UNKNOWN,
                             f"{refused}, which cannot decide it: a private(...) claim tests the cells of a spec "
                             "program's exact law, and this spec names none: add dp.conforms(<the spec's "
                             f"mechanism>) to its claims, or pass dp.implementation({implementation.__name__}, ..., "
                             "spec_program=<the spec's mechanism>)",
                             method=f"exact audit refused at {site}; no statistical audit without a spec program",
                             evidence=StatisticalEvidence(samples=box.samples, seed=box.seed,
                                                          error_probability=str(box.error)))
    else:
        try:
            result = _statistical().run(sampled, claim, point, ws)
        except SpecError as err:
            raise SpecError(f"{refused}, which failed: {err.problem}", err.fix, file=err.file, line=err.line) from None
        result.message = f"{refused}: {result.message}"
        result.method = f"exact audit refused at {site}; {result.method}"
    result.evidence = _evidence(result.evidence, site, refusal)
    return result


def _black_box(spec: Spec, implementation: Implementation, ws: Workspace) -> tuple[BlackBox, Spec]:
    """The implementation's black box with the spec program its private claims test, and the spec with it
    as the mechanism (one per spec, kept in the memo: every claim at every point shares its samples)."""
    key = ("fallback", id(spec))
    if key not in ws.memo:
        assert implementation.fallback is not None
        box = copy.copy(implementation.fallback)
        box.spec_program = _spec_program(spec) or box.spec_program
        ws.memo[key] = (spec, box, dataclasses.replace(spec, mechanism=box))  # spec kept: its id stays its own
    _, box, sampled = ws.memo[key]
    return box, sampled


def _spec_program(spec: Spec) -> Optional[Callable[..., Any]]:
    """The program of the spec's first ``conforms(spec_program)`` claim, if it has one."""
    return next((claim.other for claim in spec.claims if isinstance(claim, Conforms)), None)


def _evidence(evidence: Any, site: str, refusal: CannotFollow) -> FallbackEvidence:
    assert isinstance(evidence, StatisticalEvidence)
    values = {f.name: getattr(evidence, f.name) for f in dataclasses.fields(evidence) if f.init}
    return FallbackEvidence(**values, exact_refused_at=site, exact_refusal=refusal.problem)


__all__ = ["FallbackEvidence", "decide"]
