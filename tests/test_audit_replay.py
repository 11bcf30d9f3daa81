"""Grey-box replay (``dp.calibrated``): the recording generators, the verdicts on spec/audits/greybox.py,
mutants that must be refuted, the cases that must stay ``unknown``, a property over random tiny
universes with planted sensitivity bugs (refuted iff the bug is reachable), the report's trace and
the JSON figures."""
from __future__ import annotations

import inspect
import itertools
import json
import random
import textwrap
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import dpverify as dp
from dpverify.checks import Options
from dpverify.checks.audit.replay import readings
from dpverify.dsl.recording import NoiseValue, RecordingNumpy, RecordingRandom, record
from dpverify.errors import SpecError
from dpverify.evidence import ReplayEvidence
from dpverify.loader import load
from dpverify.report import sections
from dpverify.report.blocks import Pairs, Table, WitnessBox
from dpverify.report.section_parts import Context
from dpverify.results import Status
from dpverify.runner import check_paths

REPO = Path(__file__).resolve().parent.parent
GREYBOX = REPO / "spec/audits/greybox.py"
eps = dp.symbol("eps", positive=True)
VALUES = dp.universe([0, 1, 2, 3], n=2, neighbours=dp.REPLACE_ONE)


def fed_value(draw):
    """The one reading of the value fed into a draw (a single sum, or none), or (None, why)."""
    values, why = readings(draw)
    assert values is None or len(values) == 1, values
    return (values[0] if values else None), why


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def clipped_sum(data, eps):
    return dp.laplace(sum(min(r, 1) for r in data), 1 / eps)


def verdict(fn, spec_program=clipped_sum, universe=VALUES, rng="numpy", **claim):
    spec = dp.spec(dp.implementation(fn, rng=rng), universe=universe, grid={eps: [Fraction(1, 2)]},
                   claims=[dp.calibrated(spec_program, **claim)])
    [point] = dp.check(spec)
    return point


# ----- the recorder ---------------------------------------------------------------------------

def program(data, rng):
    flip = rng.random() < 0.5
    k = rng.integers(0, 3)
    noisy = sum(data) + rng.laplace(0, 2.0)
    return flip, int(k), noisy, rng.normal(1.0, 0.5) - data[0], np.float64(data[0]) + rng.exponential(3.0)


def test_recorder_logs_calls_sites_and_gives_the_real_generators_results():
    trace = record(program, (1, 2), {}, "numpy", "rng", 11)
    assert trace.output == program((1, 2), np.random.default_rng(11))  # the same draws, the same arithmetic
    assert [c.method for c in trace.calls] == ["random", "integers", "laplace", "normal", "exponential"]
    lines = [line_of(program, "rng.random()"), line_of(program, "rng.integers"), line_of(program, "rng.laplace"),
             line_of(program, "rng.normal")]
    assert [c.line for c in trace.calls] == lines + [lines[-1] + 0]  # both draws of the return line
    assert all(c.file == __file__ for c in trace.calls)
    fed = [fed_value(d)[0] for d in trace.noise]
    assert fed == [3, 1 - 1, 1]  # 3 + Lap(0, 2); normal(1, .5) - x0 = (1 - x0) + Z; x0 + Exp(3)
    assert [d.kind for d in trace.noise] == ["laplace", "gaussian", "exponential"]
    assert [d.scale for d in trace.noise] == [2.0, 0.5, 3.0]
    assert isinstance(RecordingNumpy(0), np.random.Generator)


def test_every_form_of_a_sum_records_its_other_operand():
    forms = {
        "value + noise": (lambda v, n: v + n, 5),
        "noise + value": (lambda v, n: n + v, 5),
        "value - noise": (lambda v, n: v - n, 5),
        "noise - value": (lambda v, n: n - v, -5),
        "np.float64 + noise": (lambda v, n: np.float64(v) + n, 5),
        "np.int64 - noise": (lambda v, n: np.int64(v) - n, 5),
        "noise + np.float64": (lambda v, n: n + np.float64(v), 5),
        "Fraction + noise": (lambda v, n: Fraction(v) + n, 5),
    }
    for name, (combine, centre) in forms.items():
        rng = RecordingNumpy(4)
        out = combine(5, rng.laplace(0, 1))
        expected = combine(5, np.random.default_rng(4).laplace(0, 1))
        assert out == expected and isinstance(out, type(expected)), name  # the value the real code computes
        assert type(out) is type(expected) or type(out) is NoiseValue, name  # numpy results stay numpy's
        assert fed_value(rng._trace.noise[0]) == (centre, None), name


def test_chains_of_sums_give_every_reading_and_the_cost_is_the_least():
    def chains(data, rng):
        a = rng.laplace(1, 1) + 3 - 4  # the chain's end: 1 + 3 - 4 (1 + 3 is only a step)
        b = 10 - (rng.laplace(0, 1) + 2)  # 10 - (0 + 2)
        c = rng.laplace(0, 1) + 3
        return a, b, c, c - 4  # c is released and summed again: two readings, 3 and -1
    trace = record(chains, (0,), {}, "numpy", "rng", 0)
    assert [readings(d)[0] for d in trace.noise] == [[0], [8], [3, -1]]
    assert trace.output == chains((0,), np.random.default_rng(0))

    def offset_first(data, eps, rng):  # a constant step first must not hide the unclipped sum after it
        return rng.laplace(0, 1 / eps) + 1 + sum(data)
    assert verdict(offset_first).status is Status.REFUTED

    def compensated(data, eps, rng):  # the first sum moves by 3, the whole chain by 1: calibrated
        return rng.laplace(0, 1 / eps) + sum(data) - sum(max(r - 1, 0) for r in data)
    point = verdict(compensated)
    assert point.status is Status.CONSISTENT, point.message

    def uncompensated(data, eps, rng):  # the chain's end moves by 2
        return rng.laplace(0, 1 / eps) + sum(data) - sum(max(r - 2, 0) for r in data)
    assert verdict(uncompensated).status is Status.REFUTED

    def both_released(data, eps, rng):  # x released, and x - correction too: every reading must violate
        x = rng.laplace(0, 1 / eps) + sum(data)
        return x, x - sum(max(r - 1, 0) for r in data)
    point = verdict(both_released)
    assert point.status is Status.CONSISTENT and "2 readings" in point.evidence.trace.calls[0].note

    def both_too_large(data, eps, rng):
        x = rng.laplace(0, 1 / eps) + sum(data)
        return x, x - sum(max(r - 2, 0) for r in data)
    point = verdict(both_too_large)
    assert point.status is Status.REFUTED and "2 readings" in point.evidence.trace.calls[0].note


def test_noise_without_a_single_fed_value_is_marked_not_guessed():
    def used(data, rng):
        a, b = rng.laplace(0, 1), rng.laplace(0, 1)
        c = rng.laplace(0, 1)
        d = rng.laplace(0, 1)
        return a + b, c + 1, c + 2, 2 * d + 1, np.array([1.0, 2.0]) + rng.laplace(0, 1), np.exp(rng.laplace(0, 1))
    trace = record(used, (0,), {}, "numpy", "rng", 1)
    unclear = [d.fed.unclear for d in trace.noise]
    assert unclear == ["added to another noise value", "added to another noise value", None,
                       "transformed by rmul before any sum", "added to an array",
                       "transformed by numpy.exp before any sum"]
    assert readings(trace.noise[2]) == ([1, 2], None)  # used in two sums: two readings, both kept
    assert all(readings(d)[0] is None for d in trace.noise if d.fed.unclear)
    real = used((0,), np.random.default_rng(1))
    assert all(np.array_equal(a, b) for a, b in zip(trace.output, real))


def test_random_random_is_recorded_outermost_calls_only():
    def code(data, rng):
        return rng.gauss(data[0], 2.0), rng.expovariate(Fraction(1, 2)) + data[0], rng.randrange(10)
    trace = record(code, (3,), {}, "random", "rng", 9)
    assert trace.output == code((3,), random.Random(9))
    assert [c.method for c in trace.calls] == ["gauss", "expovariate", "randrange"]  # not gauss's random()s
    assert [fed_value(d)[0] for d in trace.noise] == [3, 3]
    assert trace.noise[1].scale.rate == Fraction(1, 2)  # expovariate(lambd): scale 1/lambd, exactly
    assert isinstance(RecordingRandom(0), random.Random)


def test_noise_with_size_is_logged_element_by_element():
    trace = record(lambda data, rng: rng.laplace([0.0, 1.0], 2.0, size=2), (0,), {}, "numpy", "rng", 2)
    assert [(d.element, fed_value(d)[0]) for d in trace.noise] == [(0, 0), (1, 1)]
    assert np.array_equal(trace.output, np.random.default_rng(2).laplace([0.0, 1.0], 2.0, size=2))


def test_vector_noise_records_each_elements_operand():
    def vector(data, rng):
        counts = np.array([1.0, 2.0, 3.0])
        noise = rng.laplace(0, 1.0, size=3)
        other = rng.laplace([0.0, 1.0], 1.0, size=2)
        return counts + noise, [5 - other[i] for i in range(2)]
    trace = record(vector, (0,), {}, "numpy", "rng", 6)
    assert [fed_value(d)[0] for d in trace.noise] == [1, 2, 3, 5, 4]  # 5 - (loc 1 + Z): fed 5 - 1
    real = vector((0,), np.random.default_rng(6))
    assert np.array_equal(trace.output[0], real[0]) and trace.output[1] == real[1]
    assert isinstance(trace.output[0], np.ndarray)

    def in_place(data, rng):
        counts = np.array([1.0, 2.0])
        counts += rng.laplace(0, 1, size=2)
        square = rng.laplace(0, 1, size=(2, 2))
        return counts, square.T + np.array([[1.0, 2.0], [3.0, 4.0]])
    trace = record(in_place, (0,), {}, "numpy", "rng", 6)
    assert [fed_value(d)[0] for d in trace.noise[:2]] == [1, 2]  # counts += noise
    assert all("cannot follow" in d.fed.unclear for d in trace.noise[2:])  # a transpose loses the elements' order
    real = in_place((0,), np.random.default_rng(6))
    assert all(np.array_equal(a, b) for a, b in zip(trace.output, real))


def test_noise_that_escapes_the_recorder_is_marked():
    def escapes(data, rng):
        return float(rng.laplace(0, 1)) + data[0], rng.laplace(data[0], 1), max(rng.laplace(0, 1), 0.5)
    trace = record(escapes, (2,), {}, "numpy", "rng", 0)
    assert "cannot follow" in trace.noise[0].fed.unclear  # float(noise) + x: not read as fed by 0
    assert fed_value(trace.noise[1]) == (2, None)  # released as drawn: fed its loc
    assert fed_value(trace.noise[2]) == (0, None) and trace.noise[2].fed.seen  # compared


def test_vector_noise_histogram_is_replayed():
    def hist_vector(data, eps, rng):
        counts = np.bincount(np.asarray(data, dtype=int), minlength=4).astype(float)
        return tuple(counts + rng.laplace(0, 1 / eps, size=4))

    def hist_vector_two(data, eps, rng):
        counts = np.bincount(np.asarray(data, dtype=int), minlength=5)[:4] * 1.0
        counts[1:] += np.bincount(np.asarray(data, dtype=int), minlength=4)[:3]
        return tuple(counts + rng.laplace(0, 1 / eps, size=4))

    def histogram(data, eps):
        return tuple(dp.laplace(sum(1 for r in data if r == b), 1 / eps) for b in range(4))
    records = dp.universe([0, 1, 2], n=range(0, 3), neighbours=dp.ADD_REMOVE)
    assert verdict(hist_vector, spec_program=histogram, universe=records).status is Status.CONSISTENT
    point = verdict(hist_vector_two, spec_program=histogram, universe=records)
    assert point.status is Status.REFUTED and point.evidence.trace.total_violation == "L1"


# ----- verdicts -----------------------------------------------------------------------------

EXPECTED = {"numpy_clipped_sum": Status.CONSISTENT, "sum_without_clip": Status.REFUTED,
            "sum_wrong_clip": Status.REFUTED, "count_half_scale": Status.REFUTED, "count_branch": Status.REFUTED,
            "mean_unit_sensitivity": Status.REFUTED, "numpy_histogram": Status.CONSISTENT,
            "histogram_two_bins": Status.REFUTED, "numpy_noisy_max": Status.CONSISTENT,
            "noisy_max_small_scale": Status.REFUTED, "numpy_sparse_vector": Status.CONSISTENT}


@pytest.fixture(scope="module")
def greybox():
    return check_paths([str(GREYBOX)], Options())


def test_spec_file_verdicts(greybox):
    claims = {s.name: s.claims[0] for s in greybox.specs}
    assert {name: {p.status for p in c.points} for name, c in claims.items()} == \
        {name: {status} for name, status in EXPECTED.items()}
    for name, claim in claims.items():
        for p in claim.points:
            ev = p.evidence
            assert isinstance(ev, ReplayEvidence) and ev.search == "enumeration"
            assert ev.pairs_run == ev.pairs_in_universe and ev.seeds == [0, 1, 2]
            if p.status is Status.REFUTED:
                assert ev.confirmed and p.witness is not None


def test_the_witness_names_the_pair_the_values_and_the_derived_sensitivity(greybox):
    claim = next(s.claims[0] for s in greybox.specs if s.name == "sum_without_clip")
    for p in claim.points:
        ev, w = p.evidence, p.witness
        row = next(r for r in ev.trace.calls if r.violation)
        assert abs(sum(w.x) - sum(w.x_prime)) == 3 and {w.p, w.p_prime} == {str(sum(w.x)), str(sum(w.x_prime))}
        assert ev.spec_calls[0]["delta"] == "1"  # max |min(r,1) sum| change over replace-one pairs: derived
        scale = Fraction(1) / Fraction(p.params["eps"])
        assert Fraction(row.cost) == 3 / scale and Fraction(row.spec_cost) == 1 / scale
        assert row.site.endswith(f"greybox.py:{line_of(_mechanism('sum_without_clip'), 'rng.laplace')}")
    histogram = next(s.claims[0] for s in greybox.specs if s.name == "histogram_two_bins")
    for p in histogram.points:
        assert p.evidence.trace.total_violation == "L1" or any(r.violation for r in p.evidence.trace.calls)


def _mechanism(name):
    return next(s for s in load(GREYBOX) if s.name == name).mechanism.fn


def test_sparse_vector_stops_at_different_queries_and_says_so(greybox):
    claim = next(s.claims[0] for s in greybox.specs if s.name == "numpy_sparse_vector")
    assert all(p.status is Status.CONSISTENT for p in claim.points)
    assert any(p.evidence.divergences for p in claim.points)  # sampled: at eps = 1 (seeds 0-2) some runs differ
    for p in (p for p in claim.points if p.evidence.divergences):
        first = p.evidence.first_divergence
        assert "(no call)" in (first.divergence["method"], first.divergence["method_prime"])
        assert "data-dependent control flow" in p.message
        assert any(c.note in ("only on X", "only on X'") for c in first.calls)


def wrong_clip(data, eps, rng):
    return np.clip(np.asarray(data), 0, 3).sum() + rng.laplace(0, 1 / eps)


def wrong_scale(data, eps, rng):
    return np.clip(np.asarray(data), 0, 1).sum() + rng.laplace(0, 1 / (3 * eps))


def data_branch(data, eps, rng):
    total = np.clip(np.asarray(data), 0, 1).sum()
    if data[0] == 2:
        total = total + 1  # a data-dependent branch moves the value fed into the noise
    return total + rng.laplace(0, 1 / eps)


def correct(data, eps, rng):
    return min(data[0], 1) + min(data[1], 1) + rng.laplace(0, 1 / eps)


@pytest.mark.parametrize("mutant", [wrong_clip, wrong_scale, data_branch])
def test_mutants_are_refuted_and_the_correct_code_is_consistent(mutant):
    point = verdict(mutant)
    assert point.status is Status.REFUTED, point.message
    assert point.evidence.confirmed
    assert verdict(correct).status is Status.CONSISTENT


def test_control_flow_divergence_is_reported_with_both_sites():
    def extra_draw(data, eps, rng):
        if data[0] == 1:
            rng.random()
        return min(data[0], 1) + min(data[1], 1) + rng.laplace(0, 1 / eps)
    point = verdict(extra_draw)
    assert point.status is Status.CONSISTENT and point.evidence.divergences > 0  # not a sensitivity bug
    assert "data-dependent control flow" in point.message
    trace = point.evidence.first_divergence
    assert trace is not None and trace.divergence is not None
    sites = {trace.divergence["site"], trace.divergence["site_prime"]}
    assert any(s.endswith(f":{line_of(extra_draw, 'rng.random()')}") for s in sites)


def test_a_violation_the_rerun_does_not_reproduce_is_not_a_refutation():
    runs = []

    def flaky(data, eps, rng):
        runs.append(data)
        shift = 5 if len(runs) <= 2 else 0  # only the first replay sees the bug
        return min(data[0], 1) + min(data[1], 1) + (shift if data == (0, 0) else 0) + rng.laplace(0, 1 / eps)
    point = verdict(flaky)
    assert point.status is Status.UNKNOWN and "did not reproduce" in point.message
    assert point.evidence.confirmed is False


def test_what_cannot_be_compared_is_unknown_with_the_reason():
    def two_calls(data, eps, rng):
        return sum(min(r, 1) for r in data) + rng.laplace(0, 1 / eps), rng.laplace(0, 1 / eps)
    point = verdict(two_calls)
    assert point.status is Status.UNKNOWN and "the spec makes 1 noise calls" in point.message

    def scaled(data, eps, rng):
        return sum(min(r, 1) for r in data) + 2 * rng.laplace(0, 1 / eps)
    point = verdict(scaled)
    assert point.status is Status.UNKNOWN and "transformed by rmul" in point.message

    def nested(data, eps):
        return dp.laplace(dp.laplace(sum(data), 1 / eps), 1 / eps)
    point = verdict(correct, spec_program=nested)
    assert point.status is Status.UNKNOWN and "noisy value" in point.message

    def coin(data, eps):
        return dp.randomized_response(min(data[0], 1), eps)
    point = verdict(correct, spec_program=coin)
    assert point.status is Status.UNKNOWN and "no calibration to compare" in point.message

    plain = dp.spec(clipped_sum, universe=VALUES, grid={eps: [1]}, claims=[dp.calibrated(clipped_sum)])
    [point] = dp.check(plain)
    assert point.status is Status.UNKNOWN and "dp.implementation" in point.message


def test_a_mistake_in_the_spec_program_is_an_error_not_unknown():
    def zero_scale(data, eps):
        return dp.laplace(sum(data), 0)
    point = verdict(correct, spec_program=zero_scale)
    assert point.status is Status.ERROR and "must be positive" in point.message

    def crashing(data, eps, rng):
        raise ValueError("boom")
    point = verdict(crashing)
    assert point.status is Status.ERROR and "boom" in point.message and "with seed 0" in point.message


def test_a_black_box_taking_a_generator_is_replayed_and_one_taking_a_seed_is_not():
    box = dp.spec(dp.black_box(wrong_clip), universe=VALUES, grid={eps: [1]},
                  claims=[dp.calibrated(clipped_sum)])
    [point] = dp.check(box)
    assert point.status is Status.REFUTED and point.evidence.confirmed

    def seeded(data, eps, seed):
        return sum(data) + np.random.default_rng(seed).laplace(0, 1 / eps)
    [point] = dp.check(dp.spec(dp.black_box(seeded), universe=VALUES, grid={eps: [1]},
                               claims=[dp.calibrated(clipped_sum)]))
    assert point.status is Status.UNKNOWN and "rng_argument" in point.message


def test_random_random_code_is_replayed():
    def gauss_sum(data, eps, rng):
        return sum(data) + rng.gauss(0, 1 / eps)

    def spec(data, eps):
        return dp.gaussian(sum(min(r, 1) for r in data), 1 / eps)
    point = verdict(gauss_sum, spec_program=spec, rng="random")
    assert point.status is Status.REFUTED and point.evidence.trace.calls[0].method == "gauss"


def test_large_universes_are_searched_with_hypothesis_and_shrunk():
    big = dp.universe([0, 1, 2, 3], n=3, neighbours=dp.REPLACE_ONE)

    def late_bug(data, eps, rng):
        total = np.clip(np.asarray(data), 0, 1).sum()
        return total + (4 if data[2] == 3 else 0) + rng.laplace(0, 1 / eps)
    point = verdict(late_bug, universe=big, pairs=40, seeds=1)
    ev = point.evidence
    assert ev.search == "hypothesis" and ev.pairs_in_universe == 288
    assert point.status is Status.REFUTED and ev.confirmed, point.message
    assert sorted((point.witness.x, point.witness.x_prime)) == [(0, 0, 0), (0, 0, 3)]  # shrunk
    assert verdict(correct_three, universe=big, pairs=40, seeds=1).status is Status.CONSISTENT


def correct_three(data, eps, rng):
    return np.clip(np.asarray(data), 0, 1).sum() + rng.laplace(0, 1 / eps)


def test_bad_arguments_are_spec_errors():
    for bad in ({"seeds": 0}, {"pairs": -1}, {"seed": True}):
        with pytest.raises(SpecError):
            dp.calibrated(clipped_sum, **bad)
    with pytest.raises(SpecError, match="not callable"):
        dp.calibrated(3)


# ----- property: refuted iff the planted bug is reachable -------------------------------------

def _pairs(records, sizes, relation):
    datasets = [d for k in sizes for d in itertools.product(records, repeat=k)]
    for x, y in itertools.combinations(datasets, 2):
        if relation is dp.REPLACE_ONE and len(x) == len(y) and sum(a != b for a, b in zip(x, y)) == 1:
            yield x, y
        if relation is dp.ADD_REMOVE and abs(len(x) - len(y)) == 1:
            small, large = sorted((x, y), key=len)
            if any(large[:i] + large[i + 1:] == small for i in range(len(large))):
                yield x, y


@settings(max_examples=12, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(records=st.sets(st.integers(0, 3), min_size=1, max_size=3), top=st.integers(1, 2),
       relation=st.sampled_from([dp.REPLACE_ONE, dp.ADD_REMOVE]), spec_clip=st.integers(1, 3),
       code_clip=st.integers(0, 3), scale_factor=st.sampled_from([Fraction(1), Fraction(1, 2), Fraction(2)]))
def test_refuted_iff_the_planted_sensitivity_bug_is_reachable(records, top, relation, spec_clip, code_clip,
                                                              scale_factor):
    records = sorted(records)
    sizes = range(top - 1, top + 1) if relation is dp.ADD_REMOVE else [top]
    universe = dp.universe(records, n=sizes, neighbours=relation)
    pairs = list(_pairs(records, sizes, relation))
    if not pairs:
        return

    def spec(data, eps):
        return dp.laplace(sum(min(r, spec_clip) for r in data), spec_clip / eps)

    def code(data, eps, rng):
        return sum(min(r, code_clip) for r in data) + rng.laplace(0, scale_factor * spec_clip / eps)

    def change(clip):  # the exact sensitivity by brute force, independent of the engine
        return max(abs(sum(min(r, clip) for r in x) - sum(min(r, clip) for r in y)) for x, y in pairs)
    reachable = Fraction(change(code_clip)) / scale_factor > change(spec_clip)
    point = verdict(code, spec_program=spec, universe=universe, seeds=1)
    assert point.status is (Status.REFUTED if reachable else Status.CONSISTENT), point.message


# ----- report and JSON ----------------------------------------------------------------------

def test_report_shows_the_failing_pairs_trace(greybox):
    claim = next(s.claims[0] for s in greybox.specs if s.name == "sum_wrong_clip")
    blocks = sections.blocks_for(claim, None, Context("t", lambda text: text))
    boxes = [b for b in blocks if isinstance(b, WitnessBox)]
    assert len(boxes) == len(claim.points) == 2
    for box, p in zip(boxes, claim.points):
        row = next(c for c in p.evidence.trace.calls if c.violation)
        items = dict(box.items)
        assert items["seed"] == str(p.evidence.trace.seed) and items["on X"] == row.value
        assert items["scale"] == row.scale and items["spec's Δ / scale"] == row.spec_cost
        assert items["cost |value(X) − value(X')| / scale"] == row.cost
    traces = [b for b in blocks if isinstance(b, Table) and "value on X" in b.headers]
    assert len(traces) == 2
    for p, table in zip(claim.points, traces):
        trace = p.evidence.trace
        assert len(table.rows) == len(trace.calls)
        for row, call in zip(table.rows, trace.calls):
            assert row[:6] == (str(call.index), call.site, call.method, call.value, call.value_prime, call.scale)
            assert row[6].startswith(f"{call.cost} vs {call.spec_cost}") and row[6].endswith("✗") == call.violation
        assert f"X = {trace.x}, X' = {trace.x_prime}" in table.caption


def test_report_shows_a_control_flow_divergence():
    def extra_draw(data, eps, rng):
        if data[0] == 1:
            rng.random()
        return min(data[0], 1) + min(data[1], 1) + rng.laplace(0, 1 / eps)
    spec = dp.spec(dp.implementation(extra_draw), universe=VALUES, grid={eps: [1]},
                   claims=[dp.calibrated(clipped_sum)])
    point = dp.check(spec)[0]
    first = point.evidence.first_divergence
    from dpverify.report.sections_replay import calibrated
    claim = type("C", (), {"points": [point], "claim_id": "c"})()
    pairs = [b for b in calibrated(claim, None, Context("t", lambda text: text)) if isinstance(b, Pairs)]
    assert pairs and pairs[0].items[0] == ("control flow diverges at call", first.divergence["index"])


def test_pytest_shows_the_values_fed_into_the_noise(pytester):
    pytester.mkdir("spec")
    pytester.path.joinpath("spec", "unclipped.py").write_text(textwrap.dedent("""
        import dpverify as dp
        eps = dp.symbol("eps", positive=True)

        def clipped_sum(data, eps):
            return dp.laplace(sum(min(r, 1) for r in data), 1 / eps)

        def unclipped(data, eps, rng):
            return sum(data) + rng.laplace(0, 1 / eps)

        bug = dp.spec(dp.implementation(unclipped), universe=dp.universe([0, 3], n=1, neighbours=dp.REPLACE_ONE),
                      grid={eps: [1]}, claims=[dp.calibrated(clipped_sum)])
    """))
    result = pytester.runpytest("spec")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*value fed into the noise on X  = 0*", "*value fed into the noise on X' = 3*"])
    assert "P(output|X)" not in result.stdout.str()


def test_figures_are_plain_json(greybox):
    for spec in greybox.specs:
        for p in spec.claims[0].points:
            figures = p.evidence.figures()
            assert json.loads(json.dumps(figures)) == figures
            assert {"search", "pairs_run", "seeds", "spec_calls", "trace"} <= set(figures)
            assert all(isinstance(v, str) for call in figures["spec_calls"] for v in call.values())


def test_a_universe_too_large_for_the_work_limit_is_refused_before_replaying():
    from dpverify.checks import Workspace, check_point
    spec = dp.spec(dp.implementation(correct), universe=VALUES, grid={eps: [1]}, claims=[dp.calibrated(clipped_sum)])
    ws = Workspace(Options(max_work=10))
    point = check_point(spec, spec.claims[0], spec.points_for(spec.claims[0])[0], ws)
    assert point.status is Status.ERROR and "units of work" in point.message
