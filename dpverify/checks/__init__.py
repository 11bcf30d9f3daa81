"""One check per kind of claim.  A check says whether it ``supports`` a claim and
returns a :class:`~dpverify.results.PointResult`; a claim no check
supports comes back ``unknown`` naming what could not be handled -- never a
silent pass.  A spec whose mechanism is a ``dp.black_box`` (code that can only be sampled) is
decided by the checks marked ``black_box = True`` only, every other spec by the others: the
engine never enumerates a black box.  A claim about a ``dp.implementation`` whose code the exact
audit cannot follow is decided by the statistical audit instead (:mod:`.audit.fallback`).  Adding a
kind of claim means adding one module here and one line to :data:`CHECKS`.
"""
from __future__ import annotations

import logging
import time
import traceback
from typing import Protocol

import importlib
from typing import Any, Optional

from ..dsl.black_box import BlackBox
from ..dsl.claims import (Calibrated, Claim, Conforms, Gdp, Identity, Inequality, Private, Profile, Renyi,
                          SameDistribution, Sensitivity, Zcdp)
from ..dsl.floating import FloatPrivate
from ..dsl.learning import PrivatePrediction, Probability, SampleComplexity, Stability
from ..dsl.params import Point, point_label
from ..dsl.spec import Spec
from ..errors import SpecError
from ..results import ClaimResult, PointResult, Status
from .workspace import Workspace
from ..options import Options


log = logging.getLogger(__name__)


class Check(Protocol):
    kind: str

    def supports(self, claim: Claim) -> bool: ...

    def run(self, spec: Spec, claim: Claim, point: Point, ws: Workspace) -> PointResult: ...


class _Lazy:
    """A check imported on first use (a one-claim run imports only its claim's check, not z3's, the
    statistical audit's and every other family's modules): ``claims`` are the claim types its
    ``supports`` can accept, tested first; ``black_box`` must be the check's own (preload checks it)."""

    def __init__(self, module: str, name: str, claims: tuple[type, ...], black_box: bool = False,
                 args: Optional[dict[str, Any]] = None) -> None:
        self._where, self._claims, self._kwargs, self.black_box = (module, name), claims, args or {}, black_box
        self._check: Any = None

    @property
    def check(self) -> Any:
        if self._check is None:
            module, name = self._where
            check = getattr(importlib.import_module(f"{__name__}.{module}"), name)(**self._kwargs)
            if getattr(check, "black_box", False) != self.black_box:
                raise AssertionError(f"{name}: the registry's black_box does not match the check's")
            self._check = check
        return self._check

    @property
    def kind(self) -> str:
        return self.check.kind

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, self._claims) and self.check.supports(claim)

    def run(self, spec: Spec, claim: Claim, point: Point, ws: Workspace) -> PointResult:
        return self.check.run(spec, claim, point, ws)


CHECKS: tuple[Check, ...] = (_Lazy("audit.statistical", "StatisticalCheck", (Conforms, Private), black_box=True),
                             _Lazy("privacy.discrete", "PrivacyCheck", (Private,)),
                             _Lazy("audit.conforms", "ConformsCheck", (Conforms,)),
                             _Lazy("privacy.same_distribution", "SameDistributionCheck", (SameDistribution,)),
                             _Lazy("formulas.check", "FormulaCheck", (Identity, Inequality)),
                             _Lazy("sensitivity.check", "SensitivityCheck", (Sensitivity,)),
                             _Lazy("theorems.probability", "ProbabilityCheck", (Probability,)),
                             _Lazy("theorems.prediction", "StabilityCheck", (Stability,)),
                             _Lazy("theorems.prediction", "PrivatePredictionCheck", (PrivatePrediction,)),
                             _Lazy("theorems.sample_complexity", "SampleComplexityCheck", (SampleComplexity,)),
                             _Lazy("floating.check", "FloatPrivateCheck", (FloatPrivate,)),
                             _Lazy("audit.replay", "CalibratedCheck", (Calibrated,)),
                             _Lazy("audit.replay", "CalibratedCheck", (Calibrated,), black_box=True,
                                   args={"black_box": True}),
                             _Lazy("divergence.renyi", "RenyiCheck", (Renyi,)),
                             _Lazy("divergence.zcdp", "ZcdpCheck", (Zcdp,)),
                             _Lazy("composition.profile", "ProfileCheck", (Profile,)),
                             _Lazy("gdp.check", "GdpCheck", (Gdp,)))


def preload() -> None:
    """Import every check now (before forking workers that would each import them again)."""
    from .audit import fallback  # noqa: F401  (check_point's route for implementations)
    for check in CHECKS:
        check.check  # type: ignore[attr-defined]


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
            from .audit.fallback import decide
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


__all__ = ["CHECKS", "Check", "ClaimResult", "Options", "PointResult", "Status", "Workspace", "check_point", "preload"]
