"""The noise calls of a spec program, and the sensitivity of each one's centre over a universe.

For the grey-box replay (``dp.calibrated``): the spec program (``dp.laplace(sum(data), 1/eps)``)
is enumerated by the engine's own runner on each dataset, and the noise variables its run
created (:class:`.noisy.Noise`: kind, exact centre, exact scale, call site) are read off the
run's noise state.  Every path of a dataset must make the same noise calls, or a prefix of the
longest path's (a program that stops early, like the sparse vector technique); otherwise the
calls cannot be matched by order, and :class:`Unmatchable` says why.

The sensitivity of call k is derived, never assumed: the maximum over the universe's
neighbouring pairs of |centre_k(X) - centre_k(X')|, exactly (Fractions, or sympy numbers for
irrational parameters).  A centre computed from earlier noise (``dp.laplace(noisy, b)``) is
refused by the engine's noise primitive, which the check reports as ``unknown``.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

import sympy

from ..program.backend import IntervalBackend, exact_sign
from ..program.enumerate import Runner, Session
from ..program.reading import call_with


@dataclass(frozen=True)
class SpecCall:
    """One noise call of the spec program on one dataset: kind, exact centre and scale, site."""

    kind: str
    centre: Any
    scale: Any
    site: Optional[tuple]


@dataclass(frozen=True)
class CallSensitivity:
    """Noise call k of the spec over the universe: kind, scale, the derived sensitivity of its centre
    (``delta``), a pair of datasets (indices) attaining it, and the call's site."""

    index: int
    kind: str
    scale: Any
    delta: Any
    pair: Optional[tuple[int, int]]
    site: Optional[tuple]


GROUPS = {"laplace": ("L1", 1), "exponential": ("L1", 1), "gaussian": ("L2", 2)}
"""How per-call costs c = Delta / scale compose: sum c over Laplace and exponential calls (pure DP), sum
c^2 over Gaussian ones (zCDP's rho = sum c^2 / 2); other kinds are not totalled."""


def total(costs: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """Per group of :data:`GROUPS`: the sum of cost^power over the calls of its kinds."""
    out: dict[str, Any] = {}
    for kind, cost in costs:
        if kind in GROUPS:
            group, power = GROUPS[kind]
            out[group] = out.get(group, 0) + sympy.sympify(cost) ** power
    return out


def largest_totals(calls: Sequence[tuple[SpecCall, ...]], left: Sequence[int],
                   right: Sequence[int]) -> dict[str, tuple[Any, tuple[int, int]]]:
    """Per group: the largest total over the pairs of sum |centre_k(X) - centre_k(X')|^p / scale_k^p (the
    calls both datasets make), and a pair attaining it."""
    best: dict[str, tuple[Any, tuple[int, int]]] = {}
    for a, b in zip(left, right):
        shared = zip(calls[a], calls[b])
        costs = [(c.kind, abs(sympy.sympify(c.centre) - sympy.sympify(d.centre)) / sympy.sympify(c.scale))
                 for c, d in shared]
        for group, value in total(costs).items():
            if group not in best or exact_sign(value - best[group][0]) == 1:
                best[group] = (value, (int(a), int(b)))
    return best


class Unmatchable(Exception):
    """The spec's noise calls cannot be matched by order (they differ between paths, or a scale or kind
    differs between datasets)."""


def noise_calls(program: Callable[..., Any], data: tuple, params: Mapping[str, Any]) -> list[tuple[SpecCall, ...]]:
    """The noise calls of every path of ``program`` on ``data``, in order (the engine's enumeration)."""
    session = Session(IntervalBackend(15))
    kwargs = session.convert(dict(params))
    runner = Runner(session)
    paths: list[tuple[SpecCall, ...]] = []

    def run() -> Any:
        output = call_with(program, data, kwargs)
        variables = runner.noise.variables if runner.noise is not None else []
        paths.append(tuple(SpecCall(v.kind, v.centre, v.scale, v.site) for v in variables))
        return output

    runner.distribution(run)
    return paths


def sequence(paths: Sequence[tuple[SpecCall, ...]], data: tuple) -> tuple[tuple[SpecCall, ...], frozenset]:
    """The longest path's calls, and the lengths the paths have; every path must be a prefix of it."""
    longest = max(paths, key=len, default=())
    for path in paths:
        if path != longest[:len(path)]:
            raise Unmatchable(f"on dataset {data!r} the spec's paths make different noise calls "
                              f"({_describe(path)} and {_describe(longest)}): they cannot be matched by order")
    return longest, frozenset(len(p) for p in paths)


def sensitivities(calls: Sequence[tuple[SpecCall, ...]], left: Sequence[int], right: Sequence[int],
                  datasets: Sequence[tuple]) -> list[CallSensitivity]:
    """Per call index: the exact max |centre(X) - centre(X')| over the pairs (left[i], right[i]) where both
    datasets make that call; its kind and scale must be the same on every dataset."""
    out: list[CallSensitivity] = []
    for k in range(max((len(c) for c in calls), default=0)):
        present = [i for i, c in enumerate(calls) if len(c) > k]
        first = calls[present[0]][k]
        for i in present:
            call = calls[i][k]
            if call.kind != first.kind or exact_sign(sympy.sympify(call.scale) - sympy.sympify(first.scale)) != 0:
                raise Unmatchable(f"the spec's noise call #{k + 1} is {first.kind} with scale {first.scale} on "
                                  f"{datasets[present[0]]!r} but {call.kind} with scale {call.scale} on "
                                  f"{datasets[i]!r}: a data-dependent scale has no single sensitivity to "
                                  "compare with")
        delta: Any = 0
        pair: Optional[tuple[int, int]] = None
        for a, b in zip(left, right):
            if len(calls[a]) > k and len(calls[b]) > k:
                change = abs(sympy.sympify(calls[a][k].centre) - sympy.sympify(calls[b][k].centre))
                if pair is None or exact_sign(change - sympy.sympify(delta)) == 1:
                    delta, pair = change, (int(a), int(b))
        out.append(CallSensitivity(k, first.kind, first.scale, delta, pair, first.site))
    return out


def _describe(path: tuple[SpecCall, ...]) -> str:
    return "[" + ", ".join(f"{c.kind}({c.centre}, {c.scale})" for c in path) + "]"


__all__ = ["CallSensitivity", "GROUPS", "SpecCall", "Unmatchable", "largest_totals", "noise_calls", "sensitivities",
           "sequence", "total"]
