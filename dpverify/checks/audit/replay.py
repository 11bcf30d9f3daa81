"""Grey-box replay (``dp.calibrated(spec_program)``): the implementation's noise against the spec's sensitivity.

The implementation (a ``dp.implementation``, or a ``dp.black_box`` taking a numpy Generator) runs
with a REAL seeded generator that logs every call (:mod:`dpverify.dsl.recording`), on both datasets
of a neighbouring pair with the same seed.  From the two traces:

1. control flow: the first call where the sequences (method and file:line) differ;
2. per noise draw, the value fed into it on X and X' (``loc`` plus what the noise is added to;
   one reading per chain of sums it ends, see :mod:`dpverify.dsl.recording`) and its scale;
3. against the spec: the spec program's noise calls (enumerated by the engine,
   :mod:`dpverify.engine.sensitivity.centres`) with the sensitivity Delta_k of each centre DERIVED over the
   universe's neighbouring pairs.  Matched in order, the implementation's cost
   |fed(X) - fed(X')| / scale (the least over its readings: a violation needs every reading of the
   value fed to violate) must not exceed Delta_k / scale_k, nor the pair's total (sum over the
   draws) the spec's largest total; a scale that differs between X and X' is a violation (the two
   laws' density ratio is unbounded).

Pairs: all of the universe's when pairs x seeds fits the claim's budget, otherwise a hypothesis
search (derandomised, no database, no local constants) over
:func:`dpverify.strategies.neighbouring_pairs` that shrinks a violating pair.  A violation is
``refuted`` only after an independent re-run of both datasets with the same seed recomputes it
exactly (floats read as Fractions, the spec's values exact); otherwise the verdict is
``consistent`` (no violation in the budget: randomness is sampled, so never ``verified``) or
``unknown`` with the reason (different numbers or kinds of noise calls, a value not fed by a
sum, a spec whose calls cannot be matched).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional

import numpy as np
import sympy

from ...dsl.black_box import BlackBox, deployed
from ...dsl.claims import Calibrated, Claim
from ...dsl.implementation import Implementation
from ...dsl.params import Point, point_label
from ...dsl.recording import GENERATORS, NoiseDraw, Trace, record
from ...dsl.spec import Spec
from ...engine.program.backend import exact_sign
from ...engine.sensitivity.centres import Unmatchable, largest_totals, noise_calls, sensitivities, sequence, total
from ...engine.program.parameter import program_value
from ...engine.program.reading import keywords
from ...engine.program.work import guard, params
from ...errors import SpecError
from ..hypothesis_runs import isolated
from ...evidence import ReplayCall, ReplayEvidence, ReplayTrace
from ...replay import relative
from ...results import PointResult, Status, Witness
from ..workspace import Workspace

MAX_PROBLEMS = 10
"""Problems (mismatched calls, values not fed by a sum) kept in the evidence."""


class CalibratedCheck:
    """``dp.calibrated(spec_program)`` about an implementation (one instance per kind of mechanism:
    ``black_box=True`` takes the specs whose mechanism is a ``dp.black_box``, see
    :func:`dpverify.checks.check_point`)."""

    kind = "calibrated"

    def __init__(self, black_box: bool = False) -> None:
        self.black_box = black_box

    def supports(self, claim: Claim) -> bool:
        return isinstance(claim, Calibrated)

    def run(self, spec: Spec, claim: Claim, point: Point, ws: Workspace) -> PointResult:
        assert isinstance(claim, Calibrated)
        result = PointResult(point_label(point), Status.UNKNOWN, "", evidence=ReplayEvidence(),
                             method="grey-box replay: a real seeded generator on neighbouring datasets, same seed; "
                                    "noise calls against the spec's derived sensitivities; a violation re-run and "
                                    "recomputed exactly")
        code = _code(spec)
        if isinstance(code, str):
            result.message = code
            return result
        return Replay(spec, claim, point, ws, result, *code).run()


def _code(spec: Spec) -> Any:
    """(fn, library, argument, parameter conversion) of the spec's mechanism, or why it cannot be replayed."""
    mech = spec.mechanism
    if isinstance(mech, Implementation):
        if mech.rng not in GENERATORS:
            return (f"the replay runs code with a recording numpy Generator or random.Random, not rng={mech.rng!r}; "
                    "declare the implementation with rng='numpy' or rng='random' to replay it")
        return mech.fn, mech.rng, mech.rng_argument, program_value
    if isinstance(mech, BlackBox):
        if mech.kind != "rng":
            return (f"{mech!r} takes {'a seed' if mech.kind == 'seed' else 'no randomness'}, not a generator: the "
                    "replay needs to hand it a recording numpy Generator; declare it with rng_argument=")
        return mech.fn, "numpy", mech.argument, deployed
    return ("dp.calibrated(spec_program) is about code: declare the mechanism with dp.implementation(fn) (or "
            "dp.black_box(fn) taking a numpy Generator)")


@dataclass
class Outcome:
    """One replayed pair and seed: its trace for the evidence, the largest excess of cost over the spec's,
    the first violating draw (index into the trace's calls), and the problems met."""

    x: tuple
    x_prime: tuple
    trace: ReplayTrace
    excess: Optional[Any] = None
    violation: Optional[int] = None
    total_violation: Optional[str] = None
    problems: list[str] = field(default_factory=list)
    costs: list[tuple[str, Any]] = field(default_factory=list)  # (kind, exact cost) of the compared draws

    @property
    def violated(self) -> bool:
        return self.violation is not None or self.total_violation is not None


class Replay:
    """The replay of one claim at one grid point."""

    def __init__(self, spec: Spec, claim: Calibrated, point: Point, ws: Workspace, result: PointResult,
                 fn: Any, library: str, argument: str, convert: Any) -> None:
        self.spec, self.claim, self.ws, self.result = spec, claim, ws, result
        self.fn, self.library, self.argument = fn, library, argument
        exact = {k: program_value(v) for k, v in params(point).items()}
        self.spec_params = exact
        self.impl_params = {k: convert(v) for k, v in keywords(spec.mechanism, exact, skip=1).items()}
        self.point = point
        self.seeds = [claim.seed + i for i in range(claim.seeds)]
        self.ev: ReplayEvidence = result.evidence  # type: ignore[assignment]
        self.ev.seeds = self.seeds
        self.traces: dict[tuple[tuple, int], Trace] = {}

    # -- the spec ---------------------------------------------------------------------------------

    def run(self) -> PointResult:
        name = getattr(self.claim.other, "__name__", "the spec program")
        try:
            guard(self.spec, self.claim.other, self.point, self.ws.options)  # the universe the spec runs on, bounded
            datasets, left, right = self.ws.datasets(self.spec)
            self.datasets, self.index = datasets, {d: i for i, d in enumerate(datasets)}
            paths = [sequence(noise_calls(self.claim.other, d, self.spec_params), d) for d in datasets]
            self.lengths = [lengths for _, lengths in paths]
            calls = [calls for calls, _ in paths]
            self.calls = sensitivities(calls, left.tolist(), right.tolist(), datasets)
            self.spec_totals = {group: value for group, (value, _) in
                                largest_totals(calls, left.tolist(), right.tolist()).items()}
        except Unmatchable as exc:
            self.result.message = f"the spec program {name} cannot be matched call by call: {exc}"
            return self.result
        except SpecError as exc:
            if "is itself a noisy value" not in exc.problem:  # a mistake in the spec: an error, as for any claim
                raise
            self.result.message = (f"the sensitivity of {name}'s noise calls cannot be derived: a centre is computed "
                                   f"from earlier noise ({exc.problem}), so its calls have no centre of the data alone")
            return self.result
        if not self.calls:
            self.result.message = (f"the spec program {name} adds no continuous noise (dp.laplace, dp.gaussian, "
                                   "dp.exponential_noise) on any dataset: there is no calibration to compare; claim "
                                   "dp.conforms or dp.private about the implementation instead")
            return self.result
        self.spec_costs = [sympy.sympify(c.delta) / sympy.sympify(c.scale) for c in self.calls]
        self.ev.spec_calls = [{"call": str(c.index + 1), "kind": c.kind, "site": _site(c.site), "scale": _show(c.scale),
                               "delta": _show(c.delta), "spec_cost": _show(cost)}
                              for c, cost in zip(self.calls, self.spec_costs)]
        self.ev.spec_totals = {group: _show(value) for group, value in self.spec_totals.items()} or None
        pairs = list(zip(left.tolist(), right.tolist()))
        self.ev.pairs_in_universe = len(pairs)
        if not pairs:
            self.result.message = "the universe has no neighbouring pair to replay"
            return self.result
        if len(pairs) <= self.claim.pairs:
            self.ev.search = "enumeration"
            found = self._enumerate([(datasets[a], datasets[b]) for a, b in pairs])
        else:
            self.ev.search = "hypothesis"
            found = self._hypothesis()
        return self._verdict(found)

    # -- the search -------------------------------------------------------------------------------

    def _enumerate(self, pairs: list[tuple[tuple, tuple]]) -> Optional[Outcome]:
        """Every pair; the violation of largest excess, if any."""
        self.worst: Optional[Outcome] = None
        self.problems: list[str] = []
        worst: Optional[Outcome] = None
        for x, x_prime in pairs:
            found = self._pair(x, x_prime)
            if found is not None and (worst is None or _greater(found.excess, worst.excess)):
                worst = found
        return worst

    def _pair(self, x: tuple, x_prime: tuple) -> Optional[Outcome]:
        """Replay (x, x') with every seed; the first violating outcome, else None (the worst one kept)."""
        self.ev.pairs_run += 1
        for seed in self.seeds:
            outcome = self.compare(self._trace(x, seed), self._trace(x_prime, seed), x, x_prime, seed)
            if outcome.trace.divergence is not None:
                self.ev.divergences += 1
                self.ev.first_divergence = self.ev.first_divergence or outcome.trace
            for problem in outcome.problems:
                if problem not in self.problems and len(self.problems) < MAX_PROBLEMS:
                    self.problems.append(problem)
            if outcome.excess is not None and (self.worst is None or _greater(outcome.excess, self.worst.excess)):
                self.worst = outcome
            if outcome.violated:
                return outcome
        return None

    def _hypothesis(self) -> Optional[Outcome]:
        from hypothesis import HealthCheck, find, settings
        from hypothesis.errors import HypothesisException
        from ...strategies import neighbouring_pairs
        self.worst, self.problems = None, []
        found: dict[tuple, Outcome] = {}

        def violates(pair: tuple[tuple, tuple]) -> bool:
            outcome = self._pair(*pair)
            if outcome is not None:
                found[pair] = outcome
            return outcome is not None

        config = settings(max_examples=self.claim.pairs, database=None, derandomize=True, deadline=None,
                          suppress_health_check=list(HealthCheck))
        try:
            with isolated():
                pair = find(neighbouring_pairs(self.spec.universe), violates, settings=config)
        except HypothesisException:  # no violating pair among the examples
            return None
        return found[tuple(pair)]  # the shrunk pair's outcome

    def _trace(self, data: tuple, seed: int) -> Trace:
        key = (data, seed)
        if key not in self.traces:
            self.traces[key] = self._run(data, seed)
        return self.traces[key]

    def _run(self, data: tuple, seed: int) -> Trace:
        trace = record(self.fn, data, self.impl_params, self.library, self.argument, seed)
        if trace.error is not None:
            code = self.fn.__code__
            raise SpecError(f"the implementation {self.fn.__name__} raised {trace.error} on dataset {data!r} "
                            f"with seed {seed} (replay)",
                            "the code must return an output for every dataset of the universe",
                            file=code.co_filename, line=code.co_firstlineno)
        return trace

    # -- one pair -------------------------------------------------------------------------------

    def compare(self, trace: Trace, trace_prime: Trace, x: tuple, x_prime: tuple, seed: int) -> Outcome:
        """The two traces side by side: divergence, per matched draw the costs, and the problems."""
        outcome = Outcome(x, x_prime, ReplayTrace(repr(x), repr(x_prime), seed, [], _divergence(trace, trace_prime)))
        for data, t in ((x, trace), (x_prime, trace_prime)):
            lengths = self.lengths[self.index[data]]
            if len(t.noise) not in lengths:
                outcome.problems.append(f"on {data!r} (seed {seed}) the implementation makes {len(t.noise)} noise "
                                        f"calls, the spec {' or '.join(map(str, sorted(lengths)))}")
        for k in range(max(len(trace.noise), len(trace_prime.noise))):
            draw = trace.noise[k] if k < len(trace.noise) else None
            draw_prime = trace_prime.noise[k] if k < len(trace_prime.noise) else None
            row = self._row(k, draw, draw_prime, trace if draw is not None else trace_prime, outcome)
            outcome.trace.calls.append(row)
            if row.violation and outcome.violation is None:
                outcome.violation = k
        if outcome.excess is not None:
            outcome.trace.excess = _show(outcome.excess)
        self._totals(outcome)
        return outcome

    def _totals(self, outcome: Outcome) -> None:
        """The pair's total cost per group against the spec's largest; a partial total (some calls not
        compared) is a lower bound, so exceeding the spec's is still a violation."""
        totals = total(outcome.costs)
        outcome.trace.totals = {group: [_show(value), _show(self.spec_totals.get(group, 0))]
                                for group, value in totals.items()} or None
        for group, value in totals.items():
            excess = value - self.spec_totals.get(group, 0)
            if exact_sign(excess) == 1 and outcome.total_violation is None:
                outcome.total_violation = outcome.trace.total_violation = group
                if _greater(excess, outcome.excess):
                    outcome.excess = excess

    def _row(self, k: int, draw: Optional[NoiseDraw], draw_prime: Optional[NoiseDraw], trace: Trace,
             outcome: Outcome) -> ReplayCall:
        some = draw or draw_prime
        assert some is not None
        call = trace.calls[some.call]
        row = ReplayCall(k + 1, _at(call.file, call.line), call.method, some.kind)
        fed = readings(draw) if draw is not None else (None, None)
        fed_prime = readings(draw_prime) if draw_prime is not None else (None, None)
        row.value = _show(fed[0][0]) if fed[0] else None  # the first reading (the compared one, below)
        row.value_prime = _show(fed_prime[0][0]) if fed_prime[0] else None
        scales = [_scale(d) for d in (draw, draw_prime) if d is not None]
        shown = [_show(s) for s in scales]
        row.scale = (None if None in scales else shown[0] if len(set(shown)) == 1
                     else f"{shown[0]} on X, {shown[1]} on X'")
        spec = self.calls[k] if k < len(self.calls) else None
        if spec is not None:
            row.spec_cost = _show(self.spec_costs[k])
        if draw is None or draw_prime is None:  # one run stopped earlier: its count is checked against the spec's
            row.note = "only on X" if draw_prime is None else "only on X'"
            return row
        why = fed[1] or fed_prime[1]
        if why is None and len(fed[0]) != len(fed_prime[0]):
            why = f"its value took part in {len(fed[0])} sums on X and {len(fed_prime[0])} on X'"
        if why is None and None in scales:
            why = "the scale is not an exact number"
        if why is None and spec is None:
            why = f"the spec makes {len(self.calls)} noise calls"
        if why is None and (spec.kind != some.kind or (draw_prime is not None and draw_prime.kind != some.kind)):
            why = f"a {some.kind} draw where the spec's call #{k + 1} is {spec.kind}"
        if why is not None:
            row.note = why
            outcome.problems.append(f"noise call #{k + 1} at {row.site}: {why}")
            return row
        if len(scales) == 2 and exact_sign(sympy.sympify(scales[0]) - sympy.sympify(scales[1])) != 0:
            row.cost, row.violation = "inf", True
            row.note = (f"the scale depends on the data ({row.scale}), where the spec's is the same on every dataset: "
                        f"two {some.kind} laws of different scales have an unbounded density ratio")
            outcome.excess = sympy.oo
            return row
        costs = [abs(sympy.sympify(a) - sympy.sympify(b)) / sympy.sympify(scales[0])
                 for a, b in zip(fed[0], fed_prime[0])]
        j = min(range(len(costs)), key=lambda i: sympy.sympify(costs[i]))  # every reading must violate to refute
        cost = costs[j]
        row.value, row.value_prime = _show(fed[0][j]), _show(fed_prime[0][j])
        if len(costs) > 1:
            row.note = f"the least costly of {len(costs)} readings (chains of sums) of the value fed"
        row.cost = _show(cost)
        outcome.costs.append((some.kind, cost))
        excess = cost - self.spec_costs[k]
        if _greater(excess, outcome.excess):
            outcome.excess = excess
        row.violation = exact_sign(excess) == 1
        return row

    # -- the verdict ------------------------------------------------------------------------------

    def _verdict(self, found: Optional[Outcome]) -> PointResult:
        ev, result = self.ev, self.result
        ev.problems = self.problems or None
        budget = (f"{ev.pairs_run:,} of the universe's {ev.pairs_in_universe:,} neighbouring pairs "
                  f"({ev.search}) x {len(self.seeds)} seeds")
        name = getattr(self.claim.other, "__name__", "the spec program")
        if found is not None:
            return self._refute(found, budget, name)
        worst = self.worst
        ev.trace = worst.trace if worst is not None else None
        flow = (f"; data-dependent control flow in {ev.divergences} replays (first at "
                f"{_where(ev.first_divergence)})" if ev.first_divergence is not None else "")
        if self.problems:
            result.message = (f"no noise call costs more than {name}'s in {budget}, but not every call could be "
                              f"compared: {'; '.join(self.problems[:3])}{flow}")
            return result
        most = f"; largest cost - spec cost {worst.trace.excess}" if worst is not None and worst.trace.excess else ""
        result.status = Status.CONSISTENT
        result.message = (f"consistent with {name}: in {budget}, no noise call's |fed(X) - fed(X')| / scale exceeds "
                          f"the spec's derived Delta / scale, nor their total the spec's largest{most}{flow} (randomness sampled, not enumerated)")
        return result

    def _refute(self, found: Outcome, budget: str, name: str) -> PointResult:
        """Re-run both datasets with the same seed, independently, and recompute the violation exactly:
        refuted only when the re-run gives the same values and the same violation."""
        ev, result, trace = self.ev, self.result, found.trace
        x, x_prime, seed = found.x, found.x_prime, trace.seed
        again = self.compare(self._run(x, seed), self._run(x_prime, seed), x, x_prime, seed)
        ev.trace = trace
        same = [(r.value, r.value_prime, r.scale, r.cost) for r in trace.calls] == \
            [(r.value, r.value_prime, r.scale, r.cost) for r in again.trace.calls]
        ev.confirmed = same and again.violation == found.violation and again.total_violation == found.total_violation
        where = f"X = {x!r}, X' = {x_prime!r} (seed {seed})"
        k = found.violation
        if k is not None:
            row = trace.calls[k]
            found_text = (f"noise call #{k + 1} ({row.method} at {row.site}) is fed {row.value} on X and "
                          f"{row.value_prime} on X', {where}, scale {row.scale}: cost |difference| / scale = "
                          f"{row.cost} > {row.spec_cost}, {name}'s Delta / scale for its call #{k + 1} (Delta = "
                          f"{ev.spec_calls[k]['delta']}, derived over the universe)")
            witness = Witness(x, x_prime, f"noise call #{k + 1} at {row.site}", row.value or "?",
                              row.value_prime or "?", quantity="value fed into the noise")
        else:
            group = found.total_violation
            code, spec = (trace.totals or {}).get(group, ["?", "?"])
            what = "sum of |difference| / scale" if group == "L1" else "sum of (|difference| / scale)^2"
            found_text = (f"the noise calls' total cost ({what}, over the {'Laplace and exponential' if group == 'L1' else 'Gaussian'} "
                          f"calls) is {code} at {where}, above {spec}, the largest total of {name}'s calls over "
                          f"the universe's pairs (derived); per call: " + ", ".join(
                              f"#{r.index} {r.value} -> {r.value_prime} at {r.site}" for r in trace.calls[:6]))
            witness = Witness(x, x_prime, f"total noise cost ({group})", code, spec, quantity="total cost")
        if not ev.confirmed:
            result.message = f"{found_text}, but an independent re-run did not reproduce it: not reported as a refutation"
            return result
        result.status = Status.REFUTED
        result.witness = witness
        flow = f"; control flow diverges at {_where(trace)}" if trace.divergence else ""
        result.message = (f"{found_text}; re-run independently with the same seed and recomputed exactly{flow} "
                          f"(found in {budget})")
        return result


def _greater(a: Any, b: Optional[Any]) -> bool:
    """a > b exactly (b None counts as below everything; sympy's oo is above every number)."""
    if b is None:
        return True
    if a == sympy.oo or b == sympy.oo:
        return a == sympy.oo and b != sympy.oo
    return exact_sign(sympy.sympify(a) - sympy.sympify(b)) == 1


def _where(trace: Optional[ReplayTrace]) -> str:
    if trace is None or trace.divergence is None:
        return "?"
    d = trace.divergence
    return (f"call #{d['index']}: {d['method']} at {d['site']} on X = {trace.x}, {d['method_prime']} at "
            f"{d['site_prime']} on X' = {trace.x_prime}")


def _divergence(trace: Trace, trace_prime: Trace) -> Optional[dict[str, str]]:
    """The first call where the sequences (method, site) differ, or one run has no more calls."""
    for i in range(max(len(trace.calls), len(trace_prime.calls))):
        a = trace.calls[i] if i < len(trace.calls) else None
        b = trace_prime.calls[i] if i < len(trace_prime.calls) else None
        key = (a.method, a.file, a.line) if a else None
        key_prime = (b.method, b.file, b.line) if b else None
        if key != key_prime:
            return {"index": str(i + 1), "method": a.method if a else "(no call)",
                    "site": _at(a.file, a.line) if a else "–",
                    "method_prime": b.method if b else "(no call)", "site_prime": _at(b.file, b.line) if b else "–"}
    return None


def exact(value: Any) -> Optional[Any]:
    """A number the code computed, exactly: ints and Fractions as they are, a float as its binary value,
    a sympy number as itself; None for anything else (an array, a string, a non-finite float)."""
    if isinstance(value, np.generic) and np.ndim(value) == 0:
        value = value.item()
    if isinstance(value, bool):
        return Fraction(int(value))
    if isinstance(value, (int, Fraction)):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(value) if np.isfinite(value) else None
    if isinstance(value, sympy.Basic) and value.is_number and value.is_finite:
        return value
    return None


def readings(draw: NoiseDraw) -> tuple[Optional[list], Optional[str]]:
    """The values the draw's noise was added to, exactly: its ``loc`` when it took part in no sum (released or
    compared as drawn), else one value per chain of sums it took part in (``value + noise``, then ``+ b``...),
    in the order the code made them; or None and why none can be read."""
    fed = draw.fed
    if fed.unclear is not None:
        return None, f"the noise is {fed.unclear}, so no value fed into it can be read"
    loc = exact(fed.loc)
    if loc is None:
        return None, f"loc={fed.loc!r} is not a number"
    if not fed.paths:
        return [loc], None
    out = []
    for path in fed.readings():
        value = loc
        for sign_self, sign_other, operand in path:
            number = exact(operand)
            if number is None:
                return None, f"the noise is added to {operand!r}, not a number"
            value = sign_self * value + sign_other * number
        out.append(value)
    return out, None


def _scale(draw: Optional[NoiseDraw]) -> Optional[Any]:
    if draw is None:
        return None
    rate = getattr(draw.scale, "rate", None)
    value = exact(draw.scale) if rate is None else exact(rate)
    if value is None or not value > 0:
        return None
    return value if rate is None else 1 / value


def _show(value: Any) -> str:
    """An exact number for people: an integer, a double's shortest repr when it is one exactly, else p/q."""
    if value == sympy.oo:
        return "inf"
    if isinstance(value, sympy.Rational):
        value = Fraction(int(value.p), int(value.q))
    if isinstance(value, Fraction):
        if value.denominator == 1:
            return str(value.numerator)
        return repr(float(value)) if Fraction(float(value)) == value else str(value)
    return str(value)


def _site(site: Optional[tuple]) -> str:
    return _at(site[0], site[1]) if site else "?"


def _at(file: Optional[str], line: Optional[int]) -> str:
    """file:line, the path relative to the working directory when inside it (as messages show paths)."""
    return f"{relative(file)}:{line}" if file else "?"


__all__ = ["CalibratedCheck", "exact"]
