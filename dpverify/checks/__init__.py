"""One check per kind of claim.  A check says whether it ``supports`` a claim and
returns a :class:`~dpverify.checks.result.PointResult`; a claim no check
supports comes back ``unknown`` naming what could not be handled -- never a
silent pass.  Adding a kind of claim means adding one module here and one line
to :data:`CHECKS`.
"""
from __future__ import annotations

import time
import traceback
from typing import Protocol

from ..dsl.claims import Claim
from ..dsl.params import Point, point_label
from ..dsl.spec import Spec
from ..errors import SpecError
from .formulas import FormulaCheck
from .prediction import PrivatePredictionCheck, StabilityCheck
from .privacy import PrivacyCheck
from .probability import ProbabilityCheck
from .sample_complexity import SampleComplexityCheck
from .result import ClaimResult, PointResult, Status
from .same_distribution import SameDistributionCheck
from .sensitivity import SensitivityCheck
from .workspace import Options, Workspace


class Check(Protocol):
    kind: str

    def supports(self, claim: Claim) -> bool: ...

    def run(self, spec: Spec, claim: Claim, point: Point, ws: Workspace) -> PointResult: ...


CHECKS: tuple[Check, ...] = (PrivacyCheck(), SameDistributionCheck(),
                             FormulaCheck(),
                             SensitivityCheck(),
                             ProbabilityCheck(), StabilityCheck(), PrivatePredictionCheck(),
                             SampleComplexityCheck())


def check_point(spec: Spec, claim: Claim, point: Point, ws: Workspace) -> PointResult:
    """Decide one claim at one parameter point; spec errors become ``error`` results."""
    start = time.perf_counter()
    check = next((c for c in CHECKS if c.supports(claim)), None)
    if check is None:
        result = PointResult(point_label(point), Status.UNKNOWN,
                             f"no check supports claims of kind {claim.kind!r}")
    else:
        try:
            result = check.run(spec, claim, point, ws)
        except SpecError as err:
            result = PointResult(point_label(point), Status.ERROR, str(err))
        except Exception as exc:  # a bug of ours: report it as an error result, never a traceback
            where = traceback.extract_tb(exc.__traceback__)[-1]
            result = PointResult(point_label(point), Status.ERROR,
                                 f"internal error in the {check.kind} check: {type(exc).__name__}: {exc} "
                                 f"(at {where.filename}:{where.lineno}); please report it")
    result.seconds = time.perf_counter() - start
    return result


__all__ = ["CHECKS", "Check", "ClaimResult", "Options", "PointResult", "Status", "Workspace", "check_point"]
