"""The claimed privacy level at one grid point, and how messages name it.

A claim ``private(eps / 4)`` is checked against e^(eps/4) at each grid point; its messages say
"ratio ... > e^(eps/4) = 1.284..." with the claim's own expression, never a generic e^eps.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy


@dataclass(frozen=True)
class Level:
    """``eps`` and ``delta``: the claim's values at this point (exact); ``written``: the claim's
    epsilon as the spec wrote it (an expression in the parameters)."""

    eps: sympy.Expr
    delta: sympy.Expr
    written: sympy.Expr

    @property
    def eps_text(self) -> str:
        """The claimed epsilon as written: ``eps/4``."""
        return str(self.written)

    @property
    def e_eps(self) -> str:
        """The claimed bound on the ratio as written: ``e^eps``, ``e^(eps/4)``, ``e^(1/2)``."""
        return e_to(self.written)


def e_to(epsilon: sympy.Expr) -> str:
    """e to the power ``epsilon``, parenthesised unless it is a symbol or a whole number."""
    epsilon = sympy.sympify(epsilon)
    if epsilon.is_Symbol or (epsilon.is_Integer and epsilon >= 0):
        return f"e^{epsilon}"
    return f"e^({epsilon})"
