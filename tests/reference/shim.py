"""The DSL's discrete primitives, written again from their definitions, as a ``dp`` stand-in.

A mechanism's source is executed with this module bound to ``dp``.  Each primitive is
a choice point: :func:`law` runs the program once per path of the choice tree (depth
first, re-running it with a recorded prefix of choices) and sums the exact probability
of every path into its output.  Semantics (see dpverify/dsl/primitives.py's docstrings):

* ``bernoulli(p)``: True w.p. p, False w.p. 1 - p.
* ``categorical({v: p})``: v w.p. p (the p must sum to exactly 1).
* ``uniform(choices)``: each listed element w.p. 1/len (repeats count).
* ``subset(data, m)``: each m-subset of positions w.p. 1/C(n, m), records in their order.
* ``randomized_response(v, eps, values)``: v w.p. e^eps/(e^eps + k - 1), each other value
  w.p. 1/(e^eps + k - 1).
* ``exponential(cands, u, eps, sensitivity=D)``: y w.p. proportional to e^{eps u(y)/(2 D)}.
* ``repeat_until_accepted(attempt)``: the attempt's law conditioned on not returning REJECTED.
* ``geometric(v, a, lower=, upper=)``: v + Z, P(Z = k) = (a-1)/(a+1) a^{-|k|}, clamped into
  [lower, upper]; an unclamped side is enumerated up to :data:`WINDOW` and lumped beyond it
  into one :class:`Tail` value.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable
from fractions import Fraction
from typing import Any, Optional

from .exactnum import Q, as_fraction

MAX_PATHS = 20000


class Unsupported(BaseException):
    """The program uses something this reference does not model (the case is skipped).  A
    BaseException, so that a program's ``except Exception`` cannot turn it into a behaviour."""


class _Run:
    def __init__(self, prefix: list[int]) -> None:
        self.prefix = prefix
        self.trail: list[int] = []
        self.sizes: list[int] = []
        self.prob = Q.of(1)

    def choose(self, options: list[tuple[Any, Q]]) -> Any:
        options = [(v, p) for v, p in options if not p.is_zero()]
        if not options:
            raise Unsupported("a draw with no possible value")
        i = len(self.trail)
        k = self.prefix[i] if i < len(self.prefix) else 0
        self.trail.append(k)
        self.sizes.append(len(options))
        value, p = options[k]
        self.prob = self.prob * p
        return value


_active: list[_Run] = []


def _choose(options: list[tuple[Any, Any]]) -> Any:
    if not _active:
        raise RuntimeError("a draw outside a reference run")
    return _active[-1].choose([(v, Q.of(p)) for v, p in options])


def law(program: Callable[..., Any], data: tuple, params: dict[str, Any]) -> dict[Any, Q]:
    """The exact output law of ``program(data, **params)``: {output: probability}."""
    out: dict[Any, Q] = {}
    stack: list[list[int]] = [[]]
    paths = 0
    while stack:
        prefix = stack.pop()
        run = _Run(prefix)
        _active.append(run)
        try:
            result = program(data, **params)
        finally:
            _active.pop()
        paths += 1
        if paths > MAX_PATHS:
            raise Unsupported(f"more than {MAX_PATHS} paths")
        for i in range(len(prefix), len(run.trail)):
            for j in range(1, run.sizes[i]):
                stack.append(run.trail[:i] + [j])
        hash(result)
        out[result] = out[result] + run.prob if result in out else run.prob
    total = sum(out.values(), Q.of(0))
    if total != 1:
        raise Unsupported(f"the law sums to {total}, not 1")
    return out


# -- math -----------------------------------------------------------------------------------

def exp(x: Any) -> Q:
    """e^x for a rational x."""
    try:
        return Q.exp(as_fraction(x))
    except TypeError:
        raise Unsupported(f"exp of {x!r}") from None


def log(x: Any) -> Any:
    raise Unsupported("log")


def sqrt(x: Any) -> Any:
    raise Unsupported("sqrt")


# -- primitives -----------------------------------------------------------------------------

REJECTED = type("Rejected", (), {"__repr__": lambda self: "REJECTED"})()


def repeat_until_accepted(attempt: Callable[[], Any]) -> Any:
    """The attempt's law conditioned on acceptance (the fixed point of the rejection loop)."""
    inner = law(lambda data: attempt(), (), {})
    rejected = inner.pop(REJECTED, Q.of(0))
    if rejected == 1:
        raise Unsupported("an attempt that never accepts")
    return _choose([(v, p / (1 - rejected)) for v, p in inner.items()])


def bernoulli(p: Any) -> bool:
    p = Q.of(p)
    if p < 0 or p > 1:
        raise Unsupported(f"bernoulli({p}) is not a probability")
    return _choose([(True, p), (False, 1 - p)])


def categorical(probabilities: dict) -> Any:
    items = [(v, Q.of(p)) for v, p in probabilities.items()]
    if any(p < 0 for _, p in items) or sum((p for _, p in items), Q.of(0)) != 1:
        raise Unsupported("categorical probabilities are not a distribution")
    return _choose(items)


def uniform(choices: Any) -> Any:
    values = tuple(choices)
    return _choose([(v, Fraction(1, len(values))) for v in values])


def subset(data: Any, m: int) -> tuple:
    records = tuple(data)
    combos = list(itertools.combinations(range(len(records)), m))
    return _choose([(tuple(records[i] for i in c), Fraction(1, len(combos))) for c in combos])


def randomized_response(value: Any, eps: Any, values: Any = (0, 1)) -> Any:
    values = tuple(values)
    w = Q.exp(as_fraction(eps))
    norm = w + (len(values) - 1)
    return _choose([(v, (w if v == value else Q.of(1)) / norm) for v in values])


def exponential(candidates: Any, score: Callable[[Any], Any], eps: Any, *, sensitivity: Any = None,
                neighbours: Any = None) -> Any:
    if sensitivity is None:
        raise Unsupported("derived sensitivities")
    cands = tuple(candidates)
    scale = as_fraction(eps) / (2 * as_fraction(sensitivity))
    weights = [Q.exp(scale * as_fraction(score(y))) for y in cands]
    total = sum(weights, Q.of(0))
    return _choose([(y, w / total) for y, w in zip(cands, weights)])


def _tail(a: Q, k: int) -> Q:
    """P(Z >= k) for the two-sided geometric Z with parameter a."""
    if k >= 1:
        return a ** (1 - k) / (a + 1)
    return 1 - a ** k / (a + 1)


WINDOW = (-8, 12)  # unclamped geometric values are enumerated here; beyond, one exact lump per side


class Tail:
    """All values of an unclamped geometric beyond the window on one side, lumped.

    Lumping is exact for privacy when every query value lies inside the window: for
    z beyond it the ratio P(z|X)/P(z|X') is the same constant, so the lump has that ratio
    and its hockey-stick term is the sum of the terms it replaces.  Only operations that
    are provably constant on the whole tail are allowed (comparisons and equality with
    ints inside the window, hashing); anything else raises :class:`Unsupported`.
    """

    __slots__ = ("side",)

    def __init__(self, side: int) -> None:
        self.side = side

    def _beyond(self, x: Any) -> bool:
        if isinstance(x, bool) or not isinstance(x, int) or not WINDOW[0] <= x <= WINDOW[1]:
            raise Unsupported(f"a lumped geometric tail compared with {x!r}")
        return True

    def __eq__(self, other: Any) -> bool:  # type: ignore[override]
        if isinstance(other, Tail):
            return other.side == self.side
        return not self._beyond(other)

    def __ne__(self, other: Any) -> bool:  # type: ignore[override]
        return not self == other

    def __hash__(self) -> int:
        return hash(("lumped tail", self.side))

    def __gt__(self, other: Any) -> bool:
        return self._beyond(other) and self.side > 0

    def __ge__(self, other: Any) -> bool:
        return self._beyond(other) and self.side > 0

    def __lt__(self, other: Any) -> bool:
        return self._beyond(other) and self.side < 0

    def __le__(self, other: Any) -> bool:
        return self._beyond(other) and self.side < 0

    def __repr__(self) -> str:
        return f"Tail({'>' if self.side > 0 else '<'})"

    def __getattr__(self, name: str) -> Any:
        raise Unsupported(f"{name} of a lumped geometric tail")

    def _refuse(self, *args: Any) -> Any:
        raise Unsupported("arithmetic on a lumped geometric tail")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __mod__ = __int__ = __index__ = _refuse
    __floordiv__ = __truediv__ = __neg__ = __abs__ = __bool__ = _refuse


def geometric(value: int, a: Any, *, lower: Optional[int] = None, upper: Optional[int] = None) -> Any:
    a = Q.of(a)
    if not a > 1:
        raise Unsupported("geometric with a <= 1")
    if not WINDOW[0] < value < WINDOW[1]:
        raise Unsupported(f"a geometric around {value}, outside the window {WINDOW}")
    lo = lower if lower is not None else WINDOW[0]
    hi = upper if upper is not None else WINDOW[1]
    options: list[tuple[Any, Q]] = []
    for j in range(lo, hi + 1):
        if lo == hi:
            p = Q.of(1)
        elif j == hi:
            p = _tail(a, hi - value) if upper is not None else (a - 1) / (a + 1) * a ** (-abs(j - value))
        elif j == lo:
            p = _tail(a, value - lo) if lower is not None else (a - 1) / (a + 1) * a ** (-abs(j - value))
        else:
            p = (a - 1) / (a + 1) * a ** (-abs(j - value))
        options.append((j, p))
    if upper is None:
        options.append((Tail(1), _tail(a, hi + 1 - value)))
    if lower is None:
        options.append((Tail(-1), _tail(a, value - (lo - 1))))
    return _choose(options)
