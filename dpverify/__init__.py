"""dpverify: machine-checked claims about differentially private mechanisms.

Spec files ``import dpverify as dp`` and declare a mechanism program, its
finite universe, a parameter grid and claims; ``dpverify check`` decides them.

>>> import dpverify as dp
>>> eps = dp.symbol("eps", positive=True)
>>> def rr(data, eps):
...     return dp.randomized_response(data[0], eps)
>>> s = dp.spec(rr, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
...             grid={eps: [1]}, claims=[dp.private(eps)])
>>> [r.status.value for r in dp.check(s)]
['proved']
"""
from __future__ import annotations

from typing import Any

from . import engine as _engine  # noqa: F401  (installs the engine behind the DSL's port)
from .dsl import *  # noqa: F401,F403  (the DSL is the public surface)
from .dsl import __all__ as _dsl_all
from .errors import CannotFollow, DpverifyError, EnumerationTooLarge, SpecError
from .version import __version__


def check(spec: "Spec", precision: int = 50, proofs: bool = True) -> list:  # noqa: F405
    """Check every claim of one spec at every grid point; returns the point results.

    ``proofs=False`` stops at the certified grid check (no attempt to prove claims
    for every parameter value).
    """
    from .checks import Workspace, check_point
    from .options import Options
    ws = Workspace(Options.validated(precision, proofs=proofs, flag="precision"))  # the CLI's validation
    return [check_point(spec, claim, point, ws) for claim in spec.claims for point in spec.points_for(claim)]


def __getattr__(name: str) -> Any:
    """``dp.strategies`` (hypothesis strategies for users' property tests), imported on first use so
    that ``import dpverify`` does not import hypothesis; any other missing name is an AttributeError."""
    if name == "strategies":
        import importlib
        return importlib.import_module(".strategies", __name__)
    import sys
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}", name=name, obj=sys.modules[__name__])


__all__ = [*_dsl_all, "CannotFollow", "DpverifyError", "EnumerationTooLarge", "SpecError", "__version__", "check"]
