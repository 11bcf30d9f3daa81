"""One check per kind of claim.  A check says whether it ``supports`` a claim and
returns a :class:`~dpverify.results.PointResult`; a claim no check
supports comes back ``unknown`` naming what could not be handled -- never a
silent pass.  Adding a kind of claim means adding one module here and one line
to :data:`CHECKS`.
"""
from __future__ import annotations

import logging
import time
import traceback
from typing import Protocol

from ..dsl.claims import Claim
from ..dsl.params import Point, point_label
from ..dsl.spec import Spec
from ..errors import SpecError
from .floating.check import FloatPrivateCheck
from .formulas.check import FormulaCheck
from .theorems.prediction import PrivatePredictionCheck, StabilityCheck
from .privacy.discrete import PrivacyCheck
from .theorems.probability import ProbabilityCheck
from .theorems.sample_complexity import SampleComplexityCheck
from ..results import ClaimResult, PointResult, Status
from .privacy.conforms import ConformsCheck
from .privacy.same_distribution import SameDistributionCheck
from .sensitivity.check import SensitivityCheck
from .workspace import Workspace
from ..options import Options


log = logging.getLogger(__name__)


class Check(Protocol):
    kind: str

    def supports(self, claim: Claim) -> bool: ...

    def run(self, spec: Spec, claim: Claim, point: Point, ws: Workspace) -> PointResult: ...


CHECKS: tuple[Check, ...] = (PrivacyCheck(), ConformsCheck(), SameDistributionCheck(),
                             FormulaCheck(),
                             SensitivityCheck(),
                             ProbabilityCheck(), StabilityCheck(), PrivatePredictionCheck(),
                             SampleComplexityCheck(), FloatPrivateCheck())


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
    log.info("%s:%s [%s] %s, decided by %s, %.2f s", spec.name, claim.id,
             ", ".join(f"{k}={v}" for k, v in point_label(point).items()) or "no parameters",
             result.status.value, result.method or "no method named", result.seconds)
    return result


__all__ = ["CHECKS", "Check", "ClaimResult", "Options", "PointResult", "Status", "Workspace", "check_point"]
