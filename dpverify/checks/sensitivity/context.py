"""What one sensitivity claim is checked against: the query, the neighbour relation, the record
domain, the candidates, the universe and the claimed Delta(n).

In its own module so that the check (:mod:`.check`, which builds it) and the measurement and
refutation helpers (:mod:`.measure`, :mod:`.refute`, which read it) import it from below instead
of from each other.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import sympy

from ...dsl.queries import Finite, Query
from ...dsl.universe import Universe


@dataclass(frozen=True)
class Context:
    """What one sensitivity claim is checked against."""

    query: Query
    relation: Any
    domain: Any
    candidates: tuple
    universe: Optional[Universe]
    claimed: sympy.Expr

    @property
    def records(self) -> Optional[tuple]:
        if isinstance(self.domain, Finite):
            return self.domain.records
        return None


__all__ = ["Context"]
