"""Refuting a sensitivity claim: the one place a sensitivity result becomes ``refuted``.

Whatever found the pair (the derivation's maximising pair, exact enumeration, z3 over
symbolic datasets), the refutation stands on the pair alone: the two datasets are
re-checked to be neighbours from the relation's definition and the query is evaluated
afresh on both, in exact arithmetic (:func:`confirm`); :func:`refuted` then writes the
witness, the evidence (the size n, the claim at n, the exact sensitivity or the pair's
change) and the message.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Optional, Union

import sympy

from ...dsl.universe import Neighbours
from ...engine.program.backend import exact_sign
from ...results import PointResult, Status, Witness
from .context import Context



def are_neighbours(relation: Any, x: tuple, x_prime: tuple) -> bool:
    """The relation, re-checked from its definition on two concrete datasets."""
    if not isinstance(relation, Neighbours):
        return bool(relation(x, x_prime) or relation(x_prime, x))
    gone, new = Counter(x) - Counter(x_prime), Counter(x_prime) - Counter(x)
    if relation is Neighbours.ADD_REMOVE:
        return len(x) == len(x_prime) + 1 and sum(gone.values()) == 1 and not new
    if len(x) != len(x_prime) or sum(gone.values()) != 1 or sum(new.values()) != 1:
        return False
    if relation is Neighbours.LABEL_ONLY:
        (a,), (b,) = gone, new
        return a[0] == b[0] and a[1] != b[1]
    return True


def confirm(ctx: "Context", x: tuple, x_prime: tuple, candidate: Any,
            claimed: sympy.Expr) -> Union[str, tuple[Any, Any, Any]]:
    """(q(X), q(X'), |change|) recomputed afresh when the pair refutes the claim; else why not."""
    if not are_neighbours(ctx.relation, x, x_prime):
        return f"{x!r} and {x_prime!r} are not neighbours"
    args = () if candidate is None else (candidate,)
    value, value_prime = ctx.query(x, *args), ctx.query(x_prime, *args)
    change = abs(value - value_prime)
    if exact_sign(sympy.sympify(change) - claimed) != 1:
        return f"the recomputed change {change} does not exceed the claim {claimed}"
    return value, value_prime, change


def values(candidate: Any, value: Any, value_prime: Any) -> str:
    """'q(X) = a, q(X') = b', or with the candidate for a score."""
    if candidate is None:
        return f"q(X) = {value}, q(X') = {value_prime}"
    return f"u(X, {candidate!r}) = {value}, u(X', {candidate!r}) = {value_prime}"


def refuted(result: PointResult, k: int, pair: tuple, query_values: tuple[Any, Any], claimed: Any, message: str,
            exact: Any = None, change: Any = None) -> PointResult:
    """``result`` refuted by the neighbouring ``pair`` (X, X', candidate) of size ``k`` on which the
    query takes ``query_values``: the witness, the evidence (n, the claim at n and, where given,
    the exact sensitivity at n and the pair's change) and ``message``."""
    x, x_prime, candidate = pair
    value, value_prime = query_values
    result.status = Status.REFUTED
    result.witness = Witness(x, x_prime, candidate, str(value), str(value_prime))
    evidence = result.evidence
    evidence.n, evidence.claimed_at_n = k, str(claimed)
    if exact is not None:
        evidence.exact = str(exact)
    if change is not None:
        evidence.change = str(change)
    result.message = message
    return result


def exceeding(ctx: "Context", result: PointResult, k: int, pair: tuple, claimed: Any, *, where: str,
              unconfirmed: str, tail: str, exact: Optional[Any] = None, show_change: bool = False) -> PointResult:
    """Refute by a pair of size ``k`` whose change exceeds the claim ``claimed``, once
    :func:`confirm` recomputes it; otherwise ``result`` stays undecided with ``unconfirmed`` and
    the reason.  ``where`` says what the pair is (the relation, n), ``tail`` how it was found;
    ``show_change`` puts the pair's change into the evidence."""
    checked = confirm(ctx, *pair, claimed)
    if isinstance(checked, str):
        result.message = f"{unconfirmed}: {checked}"
        return result
    value, value_prime, change = checked
    x, x_prime, candidate = pair
    message = (f"X={x!r} and X'={x_prime!r} are neighbours ({where}); {values(candidate, value, value_prime)}: "
               f"|difference| = {change} > claimed {claimed}; {tail}")
    return refuted(result, k, pair, (value, value_prime), claimed, message, exact=exact,
                   change=change if show_change else None)


__all__ = ["are_neighbours", "confirm", "exceeding", "refuted", "values"]
