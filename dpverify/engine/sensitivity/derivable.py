"""What every sensitivity derivation shares: the dataset-size symbol n and the "not derivable" signal.

In its own module so that the derivations over finite domains
(:mod:`.sensitivity`) and over interval domains (:mod:`.sensitivity_interval`)
import it from below instead of from each other.
"""
from __future__ import annotations

import sympy

N = sympy.Symbol("n", integer=True, positive=True)
"""The dataset size in every derived expression."""


class NotDerivable(Exception):
    """The query is not in a form whose sensitivity is derived (the reason is the message)."""


__all__ = ["N", "NotDerivable"]
