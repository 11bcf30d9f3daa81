"""Claims from learning theory: bounds on probabilities of events, stability, private prediction.

* :func:`probability` / :func:`accuracy` -- "P[event] <= bound" (or >=) on every
  dataset of the universe, e.g. the exponential mechanism's utility theorem
  P[u(X, Y) <= OPT(X) - (2 Delta/eps)(ln(|Y|/|Y*|) + t)] <= e^-t.
* :func:`stability` -- the prediction probabilities at every query point move by
  at most gamma (additively) between neighbouring datasets.
* :func:`private_prediction` -- the single prediction at every query point is
  eps-DP.

An ``event`` or ``predict`` function receives the parameters it declares as
keyword arguments (exact sympy numbers; integer parameters as ints), so bounds
may use parameters that only the claim needs (a threshold ``t`` in the grid).
``predict(output, x)`` may itself draw (e.g. flip the label with probability p).
"""
from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Any, Optional

import sympy

from ..errors import SpecError, call_help
from .claims import Claim, _expression
from .params import refuse_float


@dataclass(frozen=True)
class Probability(Claim):
    """P[event(data, output)] is at most ``at_most`` and at least ``at_least`` on every dataset."""

    event: Optional[Callable[..., bool]] = None
    at_most: Optional[sympy.Expr] = None
    at_least: Optional[sympy.Expr] = None
    kind = "probability"

    def describe(self) -> str:
        name = getattr(self.event, "__name__", "event")
        bounds = [f">= {self.at_least}"] if self.at_least is not None else []
        bounds += [f"<= {self.at_most}"] if self.at_most is not None else []
        return f"P[{name}] {' and '.join(bounds)}"


@dataclass(frozen=True)
class Accuracy(Probability):
    """A utility guarantee: the probability of the bad event is at most the bound."""

    kind = "accuracy"


def _event(event: Any, fn: str) -> Callable[..., bool]:
    if not callable(event):
        raise SpecError(f"{fn}: event={event!r} is not callable",
                        "pass a function (data, output, **params) -> bool")
    try:
        signature = inspect.signature(event)
    except (TypeError, ValueError):  # a builtin without a signature: judged when called
        return event
    kinds = [p.kind for p in signature.parameters.values()]
    positional = sum(k in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD) for k in kinds)
    if positional < 2 and inspect.Parameter.VAR_POSITIONAL not in kinds:
        raise SpecError(f"{fn}: the event takes {signature} and cannot be called as event(data, output): it is "
                        "called with the dataset and the output (and the grid's parameters by name)",
                        "write it as lambda data, output: ...")
    return event


@call_help("dp.probability(lambda data, output: output == data[0], at_least=Fraction(1, 2))",
           event="a function (data, output, **params) -> bool")
def probability(event: Callable[..., bool], *, at_most: Any = None, at_least: Any = None,
                id: Optional[str] = None, expect: Optional[str] = None) -> Probability:
    """Claim a bound on P[event(data, output, **params)] on every dataset of the universe."""
    if at_most is None and at_least is None:
        raise SpecError("probability: give at_most=, at_least= or both", "e.g. at_least=Rational(1, 2)")
    return Probability(event=_event(event, "probability"),
                       at_most=None if at_most is None else _expression(at_most, "at_most", "probability"),
                       at_least=None if at_least is None else _expression(at_least, "at_least", "probability"),
                       id=id, expect=expect)


@call_help("dp.accuracy(lambda data, output, t: abs(output - sum(data)) > t, dp.exp(-t))",
           bad="a function (data, output, **params) -> bool, the bad event",
           bound="the bound on its probability")
def accuracy(bad: Callable[..., bool], bound: Any, *, id: Optional[str] = None,
             expect: Optional[str] = None) -> Accuracy:
    """Claim P[bad(data, output, **params)] <= bound on every dataset (a utility theorem)."""
    return Accuracy(event=_event(bad, "accuracy"), at_most=_expression(bound, "bound", "accuracy"),
                    id=id, expect=expect)


def _points(points: Iterable[Hashable], fn: str) -> tuple:
    if isinstance(points, (str, bytes)) or not hasattr(points, "__iter__"):
        raise SpecError(f"{fn}: points={points!r} is not a collection of query points",
                        "pass the query points as a list, e.g. points=[0, 1, 2, 3]")
    points = tuple(points)
    if not points:
        raise SpecError(f"{fn}: no query points", "give at least one query point")
    return points


@dataclass(frozen=True)
class Stability(Claim):
    """|P[predict(M(X), x) = y] - P[predict(M(X'), x) = y]| <= gamma for all neighbours, x and y."""

    gamma: sympy.Expr = sympy.Integer(0)
    predict: Optional[Callable[..., Any]] = None
    points: tuple = ()
    kind = "stability"

    def describe(self) -> str:
        return f"{self.gamma}-uniformly stable predictions"


@call_help("dp.stability(gamma, predict=lambda output, x: output >= x, points=[0, 1, 2])",
           predict="a function (output, x) -> label", points="the query points, e.g. points=[0, 1, 2]")
def stability(gamma: Any, *, predict: Callable[..., Any], points: Iterable[Hashable],
              id: Optional[str] = None, expect: Optional[str] = None) -> Stability:
    """Claim that prediction probabilities change additively by at most gamma between neighbours."""
    if not callable(predict):
        raise SpecError(f"stability: predict={predict!r} is not callable",
                        "pass a function (output, x) -> label")
    return Stability(gamma=_expression(gamma, "gamma", "stability"), predict=predict,
                     points=_points(points, "stability"), id=id, expect=expect)


@dataclass(frozen=True)
class PrivatePrediction(Claim):
    """The prediction at every query point, predict(M(X), x), is eps-DP."""

    epsilon: sympy.Expr = sympy.Integer(0)
    predict: Optional[Callable[..., Any]] = None
    points: tuple = ()
    kind = "private_prediction"

    def describe(self) -> str:
        return f"{self.epsilon}-private prediction"


@call_help("dp.private_prediction(eps, predict=lambda output, x: output >= x, points=[0, 1, 2])",
           predict="a function (output, x) -> label", points="the query points, e.g. points=[0, 1, 2]")
def private_prediction(epsilon: Any, *, predict: Callable[..., Any], points: Iterable[Hashable],
                       id: Optional[str] = None, expect: Optional[str] = None) -> PrivatePrediction:
    """Claim that each single prediction predict(M(X), x) is epsilon-DP."""
    if not callable(predict):
        raise SpecError(f"private_prediction: predict={predict!r} is not callable",
                        "pass a function (output, x) -> label; it may draw, e.g. flip the label")
    return PrivatePrediction(epsilon=_expression(epsilon, "epsilon", "private_prediction"), predict=predict,
                             points=_points(points, "private_prediction"), id=id, expect=expect)


@dataclass(frozen=True)
class SampleComplexity(Claim):
    """If n >= bound, then P_{S ~ population^n}[error(M(S)) > alpha] <= beta.

    ``population`` is a finite distribution over records (realizable: records
    labelled by a target concept; agnostic: any labelled distribution), as
    (record, exact probability) pairs; ``error(output)`` is the true error of
    the learner's output under it.  ``up_to`` is not part of the statement: it
    says how far n is checked (every n from the bound's to ``up_to``; without
    it, as far as the work limit allows), and a verdict that holds says which
    n it covers.
    """

    population: tuple = ()
    error: Optional[Callable[..., Any]] = None
    alpha: sympy.Expr = sympy.Integer(0)
    beta: sympy.Expr = sympy.Integer(0)
    bound: sympy.Expr = sympy.Integer(0)
    up_to: Optional[sympy.Expr] = None
    kind = "sample_complexity"

    def describe(self) -> str:
        return f"n >= {self.bound} => P[error > {self.alpha}] <= {self.beta}"


@call_help("dp.sample_complexity(population={(0, 0): Fraction(1, 2), (1, 1): Fraction(1, 2)}, error=true_error, "
           "alpha=Fraction(1, 4), beta=Fraction(1, 10), bound=n_bound)",
           population="a mapping record -> exact probability", error="a function output -> true error",
           alpha="the error level", beta="the failure probability",
           bound="the sample size n claimed to suffice",
           up_to="the largest n to check (optional; default: as far as the work limit allows)")
def sample_complexity(*, population: Any, error: Callable[..., Any], alpha: Any, beta: Any, bound: Any,
                      up_to: Any = None, id: Optional[str] = None,
                      expect: Optional[str] = None) -> SampleComplexity:
    """Claim a PAC guarantee for the spec's learner on a finite population (see SampleComplexity):
    P[error > alpha] <= beta for every n >= bound.  It is checked for every n from the least n >= bound
    up to ``up_to`` (an integer, or an expression in the parameters, rounded down), or without ``up_to``
    as far as the work limit allows; a verdict that holds covers those n only and says so."""
    from fractions import Fraction
    if not hasattr(population, "items") or not population:
        raise SpecError(f"sample_complexity: population={population!r} is not a mapping record -> probability",
                        "pass e.g. {(0, 0): Fraction(1, 3), (1, 1): Fraction(2, 3)}")
    pairs = []
    for record, p in population.items():
        if isinstance(p, float):
            raise refuse_float(p, f"sample_complexity: population[{record!r}]")
        if not isinstance(p, (int, Fraction, sympy.Rational)):
            raise SpecError(f"sample_complexity: the probability of {record!r} is {p!r}, not an exact rational",
                            "use Fraction or sympy.Rational probabilities")
        pairs.append((record, Fraction(int(sympy.Rational(p).p), int(sympy.Rational(p).q))))
    if sum(p for _, p in pairs) != 1 or any(p < 0 for _, p in pairs):
        raise SpecError("sample_complexity: the population's probabilities do not sum to 1",
                        "give probabilities in [0, 1] that sum to exactly 1")
    if not callable(error):
        raise SpecError(f"sample_complexity: error={error!r} is not callable",
                        "pass a function output -> true error under the population")
    return SampleComplexity(population=tuple(pairs), error=error,
                            alpha=_expression(alpha, "alpha", "sample_complexity"),
                            beta=_expression(beta, "beta", "sample_complexity"),
                            bound=_expression(bound, "bound", "sample_complexity"),
                            up_to=None if up_to is None else _expression(up_to, "up_to", "sample_complexity"),
                            id=id, expect=expect)
