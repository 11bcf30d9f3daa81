"""One check per kind of claim.  A check says whether it ``supports`` a claim and
returns a :class:`~dpverify.results.PointResult`; a claim no check
supports comes back ``unknown`` naming what could not be handled -- never a
silent pass.  A spec whose mechanism is a ``dp.black_box`` (code that can only be sampled) is
decided by the checks marked ``black_box = True`` only, every other spec by the others: the
engine never enumerates a black box.  A claim about a ``dp.implementation`` whose code the exact
audit cannot follow is decided by the statistical audit instead (:mod:`.privacy.fallback`).  Adding a
kind of claim means adding one module here and one line to :data:`CHECKS`.
"""
from __future__ import annotations

import logging
import time
import traceback
from typing import Protocol

from ..dsl.black_box import BlackBox
from ..dsl.claims import Claim
from ..dsl.params import Point, point_label
from ..dsl.spec import Spec
from ..errors import SpecError
from .divergence.renyi import RenyiCheck
from .divergence.zcdp import ZcdpCheck
from .composition.profile import ProfileCheck
from .gdp.check import GdpCheck
from .floating.check import FloatPrivateCheck
from .formulas.check import FormulaCheck
from .theorems.prediction import PrivatePredictionCheck, StabilityCheck
from .privacy.discrete import PrivacyCheck
from .theorems.probability import ProbabilityCheck
from .theorems.sample_complexity import SampleComplexityCheck
from ..results import ClaimResult, PointResult, Status
from .privacy.calibrated import CalibratedCheck
from .privacy.conforms import ConformsCheck
from .privacy.same_distribution import SameDistributionCheck
from .privacy.fallback import decide
from .privacy.statistical import StatisticalCheck
from .sensitivity.check import SensitivityCheck
from .workspace import Workspace
from ..options import Options


log = logging.getLogger(__name__)


class Check(Protocol):
    kind: str

    def supports(self, claim: Claim) -> bool: ...

    def run(self, spec: Spec, claim: Claim, point: Point, ws: Workspace) -> PointResult: ...


CHECKS: tuple[Check, ...] = (StatisticalCheck(), PrivacyCheck(), ConformsCheck(), SameDistributionCheck(),
                             FormulaCheck(),
                             SensitivityCheck(),
                             ProbabilityCheck(), StabilityCheck(), PrivatePredictionCheck(),
                             SampleComplexityCheck(), FloatPrivateCheck(),
                             CalibratedCheck(), CalibratedCheck(black_box=True),
                             RenyiCheck(), ZcdpCheck(), ProfileCheck(), GdpCheck())


def check_point(spec: Spec, claim: Claim, point: Point, ws: Workspace) -> PointResult:
    """Decide one claim at one parameter point; spec errors become ``error`` results."""
    start = time.perf_counter()
    sampled = isinstance(spec.mechanism, BlackBox)
    check = next((c for c in CHECKS if getattr(c, "black_box", False) == sampled and c.supports(claim)), None)
    if check is None:
        result = PointResult(point_label(point), Status.UNKNOWN,
                             f"no check supports claims of kind {claim.kind!r}"
                             + (" about a dp.black_box (it supports conforms(spec_program), private(eps) and "
                                "calibrated(spec_program))" if sampled else ""))
    else:
        try:
            result = decide(check, spec, claim, point, ws)  # a dp.implementation falls back to sampling
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
