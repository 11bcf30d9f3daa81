"""Exact tails of unclamped integer noise.

Two-sided geometric noise has infinitely many outputs, but the privacy loss is
constant beyond every centre: for o below all centres seen at a call site,
P(o|X)/P(o|X') = a^(q(X') - q(X)) whatever o is.  So the engine lumps each
tail beyond the window of centres into one output, a :class:`TailInt`, whose
mass is the closed-form tail sum.  The lumped output has exactly the privacy
loss of every point it stands for -- nothing is cut off.

Lumping is exact only while the program does not compute with the tail value
(``o % 2`` would mix the points differently), so every arithmetic operation,
undecidable comparison or truth test on a :class:`TailInt` raises a
:class:`SpecError` asking the author to clamp the noise or return it directly.
So does hashing it in spec code (``z in {3, 4}``, a dict key, ``set()``): a
hash lookup would silently treat the whole tail as missing.  Only the engine
keys tails (laws are dicts keyed by outputs), inside :func:`engine_keys` or
outside a run.
"""
from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

from ...errors import SpecError
from ..program.run import active

_ENGINE_KEYS: contextvars.ContextVar[bool] = contextvars.ContextVar("dpverify_engine_keys", default=False)


@contextlib.contextmanager
def engine_keys() -> Iterator[None]:
    """The engine hashes outputs (tails included) to key a law: allowed inside this block."""
    token = _ENGINE_KEYS.set(True)
    try:
        yield
    finally:
        _ENGINE_KEYS.reset(token)


def _in_spec_code() -> bool:
    return active() is not None and not _ENGINE_KEYS.get()


class TailInt:
    """All integers <= ``bound`` (side -1) or >= ``bound`` (side +1), as one output."""

    __slots__ = ("bound", "side")

    def __init__(self, bound: int, side: int) -> None:
        self.bound = bound
        self.side = side

    def __repr__(self) -> str:
        return f"<={self.bound}" if self.side < 0 else f">={self.bound}"

    def __hash__(self) -> int:
        if _in_spec_code():
            return _misuse("hashing (a set, a dict key, `in {...}`)")
        return hash(("dpverify-tail", self.bound, self.side))

    def __bool__(self) -> bool:
        if self._contains_possibly(0):
            return _misuse("a truth test")
        return True

    def __str__(self) -> str:
        return _misuse("a conversion to a string") if _in_spec_code() else repr(self)

    def __format__(self, spec: str) -> str:
        return _misuse("a conversion to a string") if _in_spec_code() else format(repr(self), spec)

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, TailInt):
            return self.bound == other.bound and self.side == other.side
        if isinstance(other, int) and not self._contains_possibly(other):
            return False
        return _misuse("==")

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    def _contains_possibly(self, k: int) -> bool:
        return k <= self.bound if self.side < 0 else k >= self.bound

    def __lt__(self, other: Any) -> bool:
        return self._compare(other, lambda x, y: x < y)

    def __le__(self, other: Any) -> bool:
        return self._compare(other, lambda x, y: x <= y)

    def __gt__(self, other: Any) -> bool:
        return self._compare(other, lambda x, y: x > y)

    def __ge__(self, other: Any) -> bool:
        return self._compare(other, lambda x, y: x >= y)

    def _compare(self, other: Any, op: Any) -> bool:
        # A comparison is fine when every integer in the tail gives the same answer.
        if isinstance(other, int) and not isinstance(other, bool):
            if self.side < 0 and other > self.bound:
                return op(self.bound, other)
            if self.side > 0 and other < self.bound:
                return op(self.bound, other)
        return _misuse("a comparison")

    def _arith(self, *_: Any) -> Any:
        return _misuse("arithmetic")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _arith
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _arith
    __pow__ = __rpow__ = __divmod__ = __rdivmod__ = __and__ = __rand__ = __or__ = __ror__ = _arith
    __xor__ = __rxor__ = __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = _arith
    __neg__ = __pos__ = __abs__ = __invert__ = __int__ = __index__ = __float__ = __complex__ = _arith
    __round__ = __trunc__ = __floor__ = __ceil__ = _arith


def _misuse(what: str) -> Any:
    raise SpecError(f"{what} on the tail of unclamped geometric noise: the engine lumps the infinite "
                    "tail into one exact output, which is only sound if the program returns it as it is",
                    "clamp the noise with geometric(..., lower=L, upper=U) before computing with it, "
                    "or return the noisy value directly")


def geometric_at_most(a: Any, m: int) -> Any:
    """P(Z <= m) for two-sided geometric Z with P(k) = (a-1)/(a+1) a^-|k|, in closed form."""
    if m <= 0:
        return a ** (m + 1) / (a + 1)
    return 1 - a ** (-m) / (a + 1)


def geometric_at_least(a: Any, m: int) -> Any:
    """P(Z >= m), by the symmetry of Z."""
    return geometric_at_most(a, -m)
