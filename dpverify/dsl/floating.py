"""``dp.float_private``: a floating-point sampler against the idealised real mechanism.

Specs reason about reals; code adds noise in doubles.  A sampler that turns one uniform double
into its output (the textbook inverse-CDF Laplace, ``-b*log(u)``, a geometric by
``floor(log(u)/log(a))``, Mironov's snapping mechanism) has at most 2^53 outputs per query
value, and two neighbouring query values may not share them: an output reachable from one and
not from the other is a privacy loss of infinity (Mironov 2012).  The claim names the sampler as
a function ``sampler(value, u)`` of the query value (a double) and the uniform, how the uniform
is produced from a 53-bit integer k, the pieces of the grid of k on which the sampler is
monotone, and the query values of neighbouring datasets (a universe and a query, or explicit
pairs).  The check is :mod:`dpverify.checks.floating`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import sympy

from ..errors import SpecError, call_help
from .claims import Claim, _expression
from .queries import Query
from .universe import Universe

GRID = 2 ** 53
UNIFORM_GRIDS = ("[0,1)", "(0,1]", "(0,1)")
"""``[0,1)``: u = k/2^53 (numpy ``Generator.random``, ``random.random``); ``(0,1]``: (k+1)/2^53;
``(0,1)``: (k + 1/2)/2^53 (k + 0.5 rounded to a double first), for k in [0, 2^53)."""


@dataclass(frozen=True)
class FloatPrivate(Claim):
    """The sampler's outputs from neighbouring query values have the same support, and, when the
    supports are finite and ``epsilon`` is given, their exact probabilities differ by at most e^epsilon."""

    sampler: Optional[Callable[[float, float], Any]] = None
    epsilon: Optional[sympy.Expr] = None
    pairs: tuple[tuple[Any, Any], ...] = ()
    universe: Optional[Universe] = None
    query: Optional[Query] = None
    uniforms: str = "[0,1)"
    pieces: tuple[tuple[int, int], ...] = ((0, GRID),)
    candidates: int = 1000
    max_outputs: int = 4096
    seed: int = 0
    kind = "float_private"
    needs_mechanism = False
    per_point = False

    def describe(self) -> str:
        name = getattr(self.sampler, "__name__", None) or getattr(getattr(self.sampler, "func", None),
                                                                  "__name__", "sampler")
        what = "equal supports" if self.epsilon is None else f"{self.epsilon}-DP"
        return f"{name} in doubles: {what} over the 2^53 uniforms"


def _count(value: Any, what: str, low: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise SpecError(f"float_private: {what}={value!r} is not an integer >= {low}",
                        f"pass a count, e.g. {what}=1000")
    return value


def _pairs(pairs: Iterable[Any]) -> tuple[tuple[Any, Any], ...]:
    try:
        out = tuple((a, b) for a, b in pairs)
    except (TypeError, ValueError):
        raise SpecError(f"float_private: pairs={pairs!r} is not a list of (value, neighbour value) pairs",
                        "write pairs=[(0, 1)] for the query values of two neighbouring datasets") from None
    for a, b in out:
        for v in (a, b):
            if isinstance(v, bool) or not isinstance(v, (int, float, Fraction)):
                raise SpecError(f"float_private: the pair ({a!r}, {b!r}) holds {v!r}, not a number",
                                "give query values as ints, Fractions or floats")
    if not out:
        raise SpecError("float_private: pairs=[] gives no neighbouring query values",
                        "write pairs=[(0, 1)], or pass universe= and query=")
    return out


def validate_pieces(pieces: Any) -> tuple[tuple[int, int], ...]:
    """Pieces as sorted, disjoint, non-empty half-open ranges of grid indices inside [0, 2^53)."""
    fix = "write pieces=[(lo, hi), ...] with integers 0 <= lo < hi <= 2**53, sorted and not overlapping"
    try:
        out = tuple((lo, hi) for lo, hi in pieces)
    except (TypeError, ValueError):
        raise SpecError(f"pieces={pieces!r} is not a list of (lo, hi) pairs", fix) from None
    previous = 0
    for lo, hi in out:
        if not (isinstance(lo, int) and isinstance(hi, int)) or isinstance(lo, bool) or isinstance(hi, bool):
            raise SpecError(f"the piece ({lo!r}, {hi!r}) does not hold two integers", fix)
        if not previous <= lo < hi <= GRID:
            raise SpecError(f"the piece ({lo}, {hi}) is empty, overlaps another or leaves [0, 2**53)", fix)
        previous = hi
    if not out:
        raise SpecError("pieces=[] declares no uniform at all", fix)
    return out


@call_help("dp.float_private(sampler, pairs=[(0, 1)], pieces=[(1, 2**52), (2**52, 2**53)])",
           sampler="the code as a function sampler(value, u) of the query value (a float) and one uniform double",
           epsilon="the claimed epsilon (exact: an int, a Fraction or a sympy number); leave out to claim "
                   "equal supports only",
           pairs="query values (q, q') of neighbouring datasets, e.g. [(0, 1)]",
           universe="instead of pairs: a universe whose neighbouring datasets give the pairs (with query=)",
           query="instead of pairs: the query, e.g. dp.count(lambda x: x == 1)",
           uniforms="how k in [0, 2^53) becomes u: '[0,1)' (k/2^53, numpy and random.random), '(0,1]' or '(0,1)'",
           pieces="ranges [lo, hi) of k on which the sampler is monotone, covering the k the code accepts",
           candidates="how many grid points to try as outputs when the outputs are too many to list",
           max_outputs="the most outputs per query value to list exhaustively",
           seed="the seed of the pseudo-random candidates")
def float_private(sampler: Callable[[float, float], Any], epsilon: Any = None, *,
                  pairs: Optional[Iterable[Any]] = None, universe: Optional[Universe] = None,
                  query: Optional[Query] = None, uniforms: str = "[0,1)",
                  pieces: Optional[Iterable[Any]] = None, candidates: int = 1000, max_outputs: int = 4096,
                  seed: int = 0, id: Optional[str] = None, expect: Optional[str] = None) -> FloatPrivate:
    """Claim that a double-precision sampler of one uniform leaks nothing infinite between neighbours.

    ``sampler(value, u)`` must be monotone in ``u`` on each piece of grid indices (an assumption
    the check tests on every evaluation it makes).  A k outside every piece is taken as rejected
    and re-drawn (numpy's Laplace rejects u = 0: ``pieces=[(1, 2**53)]``).
    """
    if not callable(sampler):
        raise SpecError(f"float_private: sampler={sampler!r} is not callable",
                        "pass the sampler as a function sampler(value, u)")
    eps = None
    if epsilon is not None:
        eps = _expression(epsilon, "epsilon", "float_private")
        if eps.free_symbols or not eps.is_nonnegative:
            raise SpecError(f"float_private: epsilon={epsilon!r} is not a non-negative number",
                            "give epsilon as an exact number, e.g. 1 or Fraction(1, 2)")
    if uniforms not in UNIFORM_GRIDS:
        raise SpecError(f"float_private: uniforms={uniforms!r} is not a known grid of uniforms",
                        f"use one of {', '.join(UNIFORM_GRIDS)} ('[0,1)' is numpy's Generator.random)")
    if (pairs is None) == (universe is None and query is None):
        raise SpecError("float_private needs the neighbouring query values: pairs=, or universe= with query=",
                        "pass pairs=[(0, 1)], or universe=dp.universe(...) and query=dp.count(...)")
    if pairs is None and not (isinstance(universe, Universe) and isinstance(query, Query)):
        raise SpecError(f"float_private: universe={universe!r}, query={query!r} is not a universe and a query",
                        "build them with dp.universe(...) and dp.count(...) / dp.total(...)")
    return FloatPrivate(sampler=sampler, epsilon=eps, pairs=_pairs(pairs) if pairs is not None else (),
                        universe=universe, query=query, uniforms=uniforms,
                        pieces=validate_pieces(pieces) if pieces is not None else ((0, GRID),),
                        candidates=_count(candidates, "candidates", 1),
                        max_outputs=_count(max_outputs, "max_outputs", 1),
                        seed=_count(seed, "seed", 0), id=id, expect=expect)
