"""The fallback from the exact audit to the statistical one (issue 12): a claim about a dp.implementation
whose code the engine cannot follow is decided by sampling the same code with a real seeded generator.

Each refused construct must fall back, naming the refusal's file and line first; real spec errors
must not; fallback=False keeps the refusal as an error; verdicts are consistent/refuted (never
verified), reproducible from the seed, and the JSON evidence names the way that decided."""
from __future__ import annotations

import inspect
import json
import math
import random
import textwrap

import numpy as np
import pytest
import sympy

import dpverify as dp
from dpverify.dsl.audited import REAL_GENERATORS, SeededSystemRandom
from dpverify.dsl.implementation import GENERATORS
from dpverify.errors import CannotFollow
from dpverify.replay import relative

eps = dp.symbol("eps", positive=True)
BIT = dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)
CANDIDATES = (0, 1, 2)
RECORDS = dp.universe(CANDIDATES, n=2, neighbours=dp.REPLACE_ONE)
HERE = relative(__file__)
SAMPLES = 3000


def line_of(fn, text: str) -> int:
    """The line of ``fn``'s source holding ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def check(fn, *claims, universe=BIT, grid=(1,), **options):
    options.setdefault("samples", SAMPLES)
    spec = dp.spec(dp.implementation(fn, **options), universe=universe, grid={eps: list(grid)}, claims=list(claims))
    return dp.check(spec)


# -- the spec programs and implementations ----------------------------------------------------------

def rr(data, eps):
    return dp.randomized_response(data[0], eps)


def log_rr(data, eps, rng):
    """Randomized response compared in log space: math.log(u) is beyond the exact audit."""
    u = rng.random()
    return data[0] if math.log(u) < eps - math.log(1 + math.exp(eps)) else 1 - data[0]


def log_rr_double(data, eps, rng):
    """BROKEN: 2 eps where eps belongs."""
    u = rng.random()
    return data[0] if math.log(u) < 2 * eps - math.log(1 + math.exp(2 * eps)) else 1 - data[0]


def em(data, eps):
    return dp.exponential(CANDIDATES, lambda y: sum(1 for x in data if x == y), eps, sensitivity=1)


def gumbel_em(data, eps, rng):
    scores = [sum(1 for x in data if x == y) for y in CANDIDATES]
    return CANDIDATES[int(np.argmax([eps * s / 2 + rng.gumbel() for s in scores]))]


def gumbel_em_half_scale(data, eps, rng):
    """BROKEN: Gumbel noise of scale 1/2 (the exponential mechanism at 2 eps)."""
    scores = [sum(1 for x in data if x == y) for y in CANDIDATES]
    return CANDIDATES[int(np.argmax([eps * s / 2 + rng.gumbel(scale=0.5) for s in scores]))]


PRODUCT = sympy.Rational(1, 4) * (1 + sympy.log(4))
"""P(U V < 1/4) for independent uniforms: t (1 - ln t) at t = 1/4."""


def product_coin(data, eps, rng):
    """u * v of two draws: beyond the exact audit."""
    below = rng.random() * rng.random() < 0.25
    return data[0] if below else 1 - data[0]


def spec_product_coin(data, eps):
    return data[0] if dp.bernoulli(PRODUCT) else 1 - data[0]


# -- each refused construct falls back, naming where it was refused ---------------------------------

@pytest.mark.parametrize("fn, spec_program, universe, text", [
    (log_rr, rr, BIT, "if math.log(u)"),
    (gumbel_em, em, RECORDS, "rng.gumbel()"),
    (product_coin, spec_product_coin, BIT, "rng.random() * rng.random()"),
])
def test_a_refused_construct_falls_back_to_the_statistical_audit(fn, spec_program, universe, text):
    results = check(fn, dp.conforms(spec_program), dp.private(eps), universe=universe)
    assert [r.status.value for r in results] == ["consistent", "consistent"]
    site = f"{HERE}:{line_of(fn, text)}"
    for result in results:
        assert result.message.startswith(f"the exact audit was refused at {site}: ")
        assert "decided by the statistical audit instead" in result.message
        assert result.message.index("refused") < result.message.index("consistent with")
        assert "exact audit refused" in result.method and "statistical audit" in result.method
        figures = result.evidence.figures()
        assert figures["decided_by"] == "statistical" and figures["exact_refused_at"] == site
        assert "exact audit" in figures["exact_refusal"] and figures["samples"] == SAMPLES


def test_the_refusal_is_a_cannot_follow_with_its_line():
    """The exact reading itself still refuses (a CannotFollow, a SpecError), at the line."""
    from dpverify.engine.program.backend import SympyBackend
    from dpverify.engine.program.reading import distribution
    with pytest.raises(CannotFollow) as info:
        distribution(dp.implementation(gumbel_em), (0, 1), {"eps": 1}, SympyBackend())
    assert relative(info.value.file) == HERE and info.value.line == line_of(gumbel_em, "rng.gumbel()")
    assert isinstance(info.value, dp.SpecError)


def test_fallback_false_keeps_the_refusal_as_an_error():
    [result] = check(gumbel_em, dp.conforms(em), universe=RECORDS, fallback=False, samples=None)
    assert result.status.value == "error"
    assert "numpy.random.Generator.gumbel()" in result.message and "fallback=False" in result.message
    assert f":{line_of(gumbel_em, 'rng.gumbel()')}:" in result.message


def test_real_spec_errors_do_not_fall_back():
    def negative_scale(data, eps, rng):
        return data[0] + rng.laplace(0, -1)  # numpy raises ValueError: a bug, not a limit of the audit

    def out_of_range(data, eps, rng):
        return data[5] if rng.random() < 0.5 else 0
    for fn, said in ((negative_scale, "ValueError"), (out_of_range, "IndexError")):
        [result] = check(fn, dp.conforms(rr))
        assert result.status.value == "error" and said in result.message
        assert "statistical audit" not in result.message.split("fix:")[0]


def test_a_claim_the_statistical_audit_does_not_decide_stays_an_error():
    [result] = check(gumbel_em, dp.same_distribution(em), universe=RECORDS)
    assert result.status.value == "error"
    assert "gumbel" in result.message and "not same_distribution" in result.message


# -- verdicts ------------------------------------------------------------------------------------

def test_broken_code_is_refuted_by_the_fallback():
    results = check(log_rr_double, dp.conforms(rr), dp.private(eps))
    assert [r.status.value for r in results] == ["refuted", "refuted"]
    for result in results:
        site = f"{HERE}:{line_of(log_rr_double, 'if math.log(u)')}"
        assert result.message.startswith(f"the exact audit was refused at {site}: ")
        assert result.witness is not None and result.witness.quantity == "frequency"
        assert result.evidence.confirmed is True  # the re-run with fresh seeds agreed
    results = check(gumbel_em_half_scale, dp.conforms(em), dp.private(eps), universe=RECORDS, grid=(2,))
    assert [r.status.value for r in results] == ["refuted", "refuted"]


def test_never_verified():
    for result in check(log_rr, dp.conforms(rr), dp.private(eps), dp.private(eps * 2), grid=(1, 2)):
        assert result.status.value == "consistent"


def test_conforms_within_a_tolerance_is_not_decided_by_sampling():
    """Sampling cannot tell a law within 2^-50 of the spec's from the spec's: unknown, saying why."""
    from fractions import Fraction
    [result] = check(log_rr, dp.conforms(rr, tolerance=Fraction(1, 2 ** 50)))
    assert result.status.value == "unknown"
    assert result.message.startswith("the exact audit was refused at ") and "without a tolerance" in result.message


def test_private_needs_a_spec_program():
    [result] = check(log_rr, dp.private(eps))
    assert result.status.value == "unknown"
    assert result.message.startswith(f"the exact audit was refused at {HERE}:")
    assert "spec_program=" in result.message and "dp.conforms(" in result.message
    assert result.evidence.figures()["decided_by"] == "statistical"
    [result] = check(log_rr, dp.private(eps), spec_program=rr)  # no conforms claim: the argument
    assert result.status.value == "consistent" and "rr's exact law" in result.message


def test_a_conforms_claim_gives_private_its_spec_program():
    _, private = check(log_rr, dp.conforms(rr), dp.private(eps))
    assert private.status.value == "consistent" and "rr's exact law" in private.message


# -- reproducibility and generators ---------------------------------------------------------------

def test_same_seed_same_numbers_other_seed_other_numbers():
    def run(seed):
        return [(r.message, r.evidence.figures()) for r in check(gumbel_em, dp.conforms(em), dp.private(eps),
                                                                  universe=RECORDS, seed=seed)]
    first, again, other = run(3), run(3), run(4)
    assert first == again
    assert first != other


def test_every_kind_of_generator_has_a_real_seeded_one():
    assert set(REAL_GENERATORS) == set(GENERATORS)
    seen = {}

    def record(data, eps, rng):
        seen.setdefault("type", type(rng))
        return data[0] if rng.random() < 0.5 else 1 - data[0]
    for kind, expected in (("numpy", np.random.Generator), ("random", random.Random),
                           ("system_random", random.SystemRandom)):
        seen.clear()
        box = dp.implementation(record, rng=kind, samples=200).fallback
        first = box.sample((0,), {"eps": 1}, 0, 0)
        assert issubclass(seen["type"], expected) and first == box.sample((0,), {"eps": 1}, 0, 0)
        assert first != box.sample((0,), {"eps": 1}, 1, 0)  # the re-run's stream is another
    assert isinstance(SeededSystemRandom(5), random.SystemRandom)
    assert [SeededSystemRandom(5).random() for _ in range(2)] == [random.Random(5).random()] * 2


def test_random_random_code_falls_back_with_random_random():
    kinds = set()

    def log_rr_random(data, eps, rng):
        kinds.add(type(rng))
        return data[0] if math.log(rng.random()) < eps - math.log(1 + math.exp(eps)) else 1 - data[0]
    [result] = check(log_rr_random, dp.conforms(rr), rng="random")
    assert result.status.value == "consistent" and "a real random.Random" in result.message
    assert random.Random in kinds  # sampled with the real generator (after the instrumented one was refused)


# -- arguments ------------------------------------------------------------------------------------

def test_the_statistical_arguments_are_checked():
    with pytest.raises(dp.SpecError, match="implementation: samples=0"):
        dp.implementation(log_rr, samples=0)
    with pytest.raises(dp.SpecError, match="implementation: error=0.001 is not an exact number"):
        dp.implementation(log_rr, error=0.001)
    with pytest.raises(dp.SpecError, match="fallback='yes'"):
        dp.implementation(log_rr, fallback="yes")
    with pytest.raises(dp.SpecError, match="samples=, spec_program= set the statistical audit, yet fallback=False"):
        dp.implementation(log_rr, fallback=False, samples=10, spec_program=rr)
    with pytest.raises(dp.SpecError, match="spec_program"):
        dp.implementation(log_rr, spec_program=3)
    box = dp.implementation(log_rr).fallback
    assert (box.samples, box.seed, box.kind) == (dp.black_box(log_rr).samples, 0, "numpy")
    assert dp.implementation(log_rr, fallback=False).fallback is None


# -- the JSON document ------------------------------------------------------------------------------

def test_json_shows_the_way_that_decided(tmp_path):
    from click.testing import CliRunner
    from dpverify.cli import main
    path = tmp_path / "fallback.py"
    path.write_text(textwrap.dedent("""
        import numpy as np
        import dpverify as dp
        eps = dp.symbol("eps", positive=True)
        CANDIDATES = (0, 1, 2)

        def em(data, eps):
            return dp.exponential(CANDIDATES, lambda y: sum(1 for x in data if x == y), eps, sensitivity=1)

        def gumbel_em(data, eps, rng):
            scores = [sum(1 for x in data if x == y) for y in CANDIDATES]
            return CANDIDATES[int(np.argmax([eps * s / 2 + rng.gumbel() for s in scores]))]

        audit = dp.spec(dp.implementation(gumbel_em, samples=2000), name="audit",
                        universe=dp.universe(CANDIDATES, n=2, neighbours=dp.REPLACE_ONE),
                        grid={eps: [1]}, claims=[dp.conforms(em), dp.private(eps)])
    """))
    result = CliRunner().invoke(main, ["check", str(path), "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["summary"]["consistent"] == 2 and document["summary"]["verified"] == 0
    for claim in document["specs"][0]["claims"]:
        [point] = claim["points"]
        assert point["status"] == "consistent"
        assert point["figures"]["decided_by"] == "statistical"
        assert point["figures"]["exact_refused_at"].endswith("fallback.py:12")
        assert "gumbel" in point["figures"]["exact_refusal"]
        assert point["message"].startswith("the exact audit was refused at ")


# -- a refusal the code catches still refuses ------------------------------------------------------

def leaky_behind_a_catch(data, eps, rng):
    """Leaks the bit (shifted by 1000) behind exponential noise; under the exact audit math.log(u) is
    refused, and this code catches the refusal and returns a constant -- which must not be judged."""
    try:
        return data[0] * 1000 - math.log(1 - rng.random())
    except Exception:
        return 0


def test_a_caught_refusal_is_not_judged_as_the_code() -> None:
    """Before: the exact audit saw the constant 0 and *proved* eps-DP.  Now the caught refusal
    ends the exact run: an error without the fallback, the statistical audit with it."""
    claims = (dp.private(eps),)
    [point] = check(leaky_behind_a_catch, *claims, fallback=False, samples=None)
    assert point.status.value == "error"
    assert "caught this refusal" in point.message and "cannot follow" in point.message
    [point] = check(leaky_behind_a_catch, *claims, spec_program=rr)
    assert point.status.value not in ("proved", "verified")
    assert point.evidence.figures()["decided_by"] == "statistical"


def exp_of_noise(data, eps, rng):
    """Randomized response by thresholding exp of Laplace noise: the engine cannot integrate exp(noise)."""
    noisy = data[0] + rng.laplace(0, 1 / eps)
    return 1 if math.exp(noisy) > math.exp(0.5) else 0


def test_arithmetic_on_instrumented_noise_falls_back():
    """The engine's refusal of arithmetic on a noisy value is a limit of exact enumeration (CannotFollow),
    not a spec error: the implementation is sampled instead.  P(out = 1 | 1) = 1 - e^-eps/2 under Laplace
    noise centred at 1 and thresholded at 1/2, which is not randomized response's law: refuted."""
    [conforms] = check(exp_of_noise, dp.conforms(rr), samples=20_000)
    assert conforms.status.value == "refuted", conforms.message
    assert f":{line_of(exp_of_noise, 'math.exp(noisy)')}:" in conforms.message
    assert "arithmetic on a noisy value" in conforms.message
    assert conforms.evidence.figures()["decided_by"] == "statistical"
