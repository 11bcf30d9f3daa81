"""Differential fuzzing of the exact audit (``dp.implementation``) against tests/reference/audit.py.

Hypothesis writes small programs drawing from an injected numpy Generator or random.Random:
``random()`` compared with thresholds (the same draw more than once, ``==``, nan and the
grid's own points among them), affine maps ``a + b * u`` compared with thresholds inside
their range, ``int``/``math.floor``/``round`` of scaled draws, ``integers``/``randrange``,
``choice(p=...)``/``choices(weights)``, branches on the data and on earlier outcomes.  On
every dataset of a one- or two-record universe dpverify's law must equal the reference's
*exactly* (Fractions), and ``dp.private(eps)`` at an eps just above or just below the
reference's achieved epsilon must be verified or refuted accordingly.

The default run is a fixed-seed sample of 25 programs; ``pytest -m fuzz_long`` runs 1500.
The reference itself is checked against brute force over every point of reduced grids.
"""
from __future__ import annotations

import itertools
import math
from collections import Counter
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable

import mpmath
import numpy as np
import pytest
import sympy
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import dpverify as dp
from dpverify.engine.program.backend import SympyBackend
from dpverify.engine.program.reading import distribution
from tests.reference import audit

G = 2 ** 53
REFUSED = "refused by the exact audit"
"""Marks a line the exact audit cannot follow: its program must be an error, never a law."""
SPECIAL = [0.0, 1.0, 0.5, 0.25, 0.75, 1 / 3, 0.1, 0.9, -0.1, 1.1, 2 ** -53, 3 * 2 ** -53, 1 - 2 ** -53,
           0.5 + 2 ** -53, 0.5 - 2 ** -54, -0.0, 1, 0, math.nan, math.inf, -math.inf]


def number(x: float) -> str:
    """A float as source text that evaluates to exactly x."""
    return "math.nan" if math.isnan(x) else ("math.inf" if x > 0 else "-math.inf") if math.isinf(x) else repr(x)


unit = st.one_of(st.sampled_from(SPECIAL), st.floats(-0.05, 1.05))
coef = st.one_of(st.sampled_from([1.0, -1.0, 2.0, 0.5, 3.0, 1e-3, 1e6, 0.0, 1.7e308]), st.floats(-5, 5))


@st.composite
def condition(draw, u: str) -> str:
    """A comparison of the draw u (or of a value computed from it) with a threshold."""
    op = draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
    shape = draw(st.sampled_from(["plain", "plain", "affine", "falling", "scaled", "data", "chain", "clamp",
                                  "member", "numpy", "fraction", "integer"]))
    s, s2 = draw(unit), draw(unit)
    if shape == "plain":
        return f"{u} {op} {number(s)}"
    if shape == "data":  # the threshold depends on the data
        return f"{u} {op} {number(s)} + 0.25 * data[-1]"
    if shape == "falling":
        return f"1 - {u} {op} {number(s)}"
    if shape == "chain":  # two comparisons of one draw, the second only when the first holds
        return f"{number(s)} < {u} <= {number(s2)}"
    if shape == "clamp":
        return f"{draw(st.sampled_from(['min', 'max']))}({u}, {number(s)}) {op} {number(s2)}"
    if shape == "member":
        return f"{u} in ({number(s)}, {number(s2)})"
    if shape == "fraction":
        p, q = draw(st.integers(-1, 12)), draw(st.integers(1, 12))
        return draw(st.sampled_from([f"{u} {op} Fraction({p}, {q})", f"{u} * Fraction({p}, {q}) {op} {number(s)}"]))
    if shape == "integer":
        return f"{u} * {draw(st.integers(1, 9))} {op} {draw(st.integers(-1, 9))}"
    a, b = draw(coef), draw(coef)
    t = a + b * s if math.isfinite(s) else s  # inside the map's range, often near a grid image
    if shape == "numpy":  # numpy scalars meet the draw (numpy hands them over as 0-d arrays)
        return draw(st.sampled_from([f"np.float64({number(a)}) + np.float64({number(b)}) * {u} {op} {number(t)}",
                                     f"np.float64({number(s)}) {op} {u}", f"{u} {op} np.float32({number(s)})",
                                     f"{u} * np.float32({number(b)}) {op} {number(t)}"]))
    if shape == "scaled":
        return f"({u} - {number(a)}) / {number(b if b else 1.0)} {op} {number(t)}"
    return f"{number(a)} + {number(b)} * {u} {op} {number(t)}"


@st.composite
def weights(draw) -> list[float]:
    ws = draw(st.lists(st.sampled_from([0, 1, 1, 2, 3, 7, 10]), min_size=2, max_size=4).filter(lambda w: sum(w) > 0))
    if draw(st.booleans()):
        return [w / sum(ws) for w in ws]  # float probabilities, summing to 1 within rounding
    return [float(w) for w in ws]


@st.composite
def block(draw, rng: str, draws: list[str], depth: int, indent: str, guarded: bool = False) -> list[str]:
    """Statements appending small values to ``out`` (inside a ``try`` when ``guarded``)."""
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kinds = ["new", "compare", "integer", "discrete", "derive"] + (["branch", "guarded"] if depth < 2 else [])
        kinds += ["refused"] if guarded else []
        kind = draw(st.sampled_from(kinds))
        if kind == "new" and len(draws) < 3 or not draws and kind in ("compare", "integer"):
            name = f"u{len(draws)}"
            how = draw(st.sampled_from(["rng.random()", "rng.random()", "rng.uniform(-1.0, 3.0)"]))
            lines.append(f"{indent}{name} = {how}")
            draws.append(name)
        u = draw(st.sampled_from(draws)) if draws else None
        if kind == "compare" and u:
            lines.append(f"{indent}out.append('T' if {draw(condition(u))} else 'F')")  # one type: no bool/int clash
        elif kind == "integer" and u:
            m = draw(st.sampled_from([1, 2, 3, 5, 7, 2.5, 0.75, -3]))
            how = draw(st.sampled_from(["int", "math.floor", "round", "math.ceil"]))
            lines.append(f"{indent}out.append({how}({u} * {number(float(m))}))")
        elif kind == "derive" and u and len(draws) < 5:  # a value computed from a draw, kept and used later
            a, b = draw(coef), draw(coef)
            how = draw(st.sampled_from([f"{number(a)} + {number(b)} * {u}", f"({u} - {number(a)}) * {number(b)}",
                                        f"-{u}", f"{u} * Fraction({draw(st.integers(-3, 7))}, 3)"]))
            lines.append(f"{indent}u{len(draws)} = {how}")
            draws.append(f"u{len(draws)}")
        elif kind == "discrete":
            ws = draw(weights())
            if rng == "numpy":
                if draw(st.booleans()):
                    how = draw(st.sampled_from([f"rng.integers(0, {len(ws)})", f"rng.integers(-1, {len(ws)}, endpoint=True)",
                                                f"rng.choice({len(ws)})"]))
                    lines.append(f"{indent}out.append(int({how}))")
                else:
                    p = [w / sum(ws) for w in ws]
                    a = draw(st.sampled_from([f"['a', 'b', 'c', 'd'][:{len(p)}]", str(len(p))]))
                    lines.append(f"{indent}out.append(rng.choice({a}, p={p!r}).item())")
            elif draw(st.booleans()):
                how = draw(st.sampled_from([f"rng.randrange({len(ws)})", f"rng.randint(-1, {len(ws)})",
                                            f"rng.choice('abcd'[:{len(ws)}])", f"rng.choices('abcd'[:{len(ws)}])[0]"]))
                lines.append(f"{indent}out.append({how})")
            else:
                k = draw(st.integers(1, 2))
                lines.append(f"{indent}out.append(tuple(rng.choices('abcd'[:{len(ws)}], {ws!r}, k={k})))")
        elif kind == "refused" and u:  # beyond the exact audit, inside a try: the caught refusal must still refuse
            lines.append(f"{indent}HITS.append(1)")
            lines.append(f"{indent}out.append('T' if math.log(abs({u}) + 2.0) > 0.9 else 'F')  # {REFUSED}")
        elif kind == "guarded":  # code that catches every Exception, as deployed code sometimes does
            lines.append(f"{indent}try:  # guarded")
            lines += draw(block(rng, list(draws), depth + 1, indent + "    ", guarded=True))
            lines.append(f"{indent}except Exception:")
            lines.append(f"{indent}    out.append('E')")
        elif kind == "branch":
            test = draw(st.sampled_from(["data[0] == 1", "sum(data) >= 1", "out and out[-1] in ('T', 1)", "data[-1] == 0"]))
            lines.append(f"{indent}if {test}:")
            lines += draw(block(rng, list(draws), depth + 1, indent + "    ", guarded))
            lines.append(f"{indent}else:")
            lines += draw(block(rng, list(draws), depth + 1, indent + "    ", guarded))
    return lines or [f"{indent}pass"]


@st.composite
def programs(draw) -> tuple[str, str]:
    rng = draw(st.sampled_from(["numpy", "numpy", "random"]))
    body = draw(block(rng, [], 0, "    "))
    return rng, "import math\nfrom fractions import Fraction\n\nimport numpy as np\n\nHITS = []\n\n\ndef mech(data, eps, rng):\n    out = []\n" + "\n".join(body) + "\n    return tuple(out)\n"


def load(source: str, tmp: str) -> Callable[..., Any]:
    """The program as a function defined in a real file (refusals name its line)."""
    path = Path(tmp) / "audit_case.py"
    path.write_text(source)
    namespace: dict = {}
    exec(compile(source, str(path), "exec"), namespace)
    return namespace["mech"]


eps = dp.symbol("eps", positive=True)
SKIPPED: Counter = Counter()


def dpverify_law(fn: Callable[..., Any], rng: str, data: tuple) -> dict:
    law = distribution(dp.implementation(fn, rng=rng), data, {"eps": sympy.Integer(1)}, SympyBackend())
    return {o: Fraction(int(p.p), int(p.q)) for o, p in law.items()}


def achieved(laws: dict[tuple, dict]) -> Any:
    """The reference's largest P(o|x) / P(o|x') over replace-one neighbours: None when unbounded."""
    best = Fraction(1)
    for x, y in itertools.permutations(laws, 2):
        if len(x) == len(y) and sum(a != b for a, b in zip(x, y)) == 1:
            for o, p in laws[x].items():
                if o not in laws[y]:
                    return None
                best = max(best, p / laws[y][o])
    return best


def check_program(rng: str, source: str, n: int, above: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        fn = load(source, tmp)
        data = list(itertools.product([0, 1], repeat=n))
        if REFUSED in source:  # a refusal caught by the program's try: no law may come out of it
            spec = dp.spec(dp.implementation(fn, rng=rng, fallback=False),
                           universe=dp.universe([0, 1], n=n, neighbours=dp.REPLACE_ONE),
                           grid={eps: [1]}, claims=[dp.private(eps)])
            [result] = dp.check(spec)
            if fn.__globals__["HITS"]:  # the exact run reached the refused line (and the try caught it)
                assert result.status.value == "error" and "caught this refusal" in result.message, \
                    f"{result.status.value}: {result.message}\n{source}"
                SKIPPED["caught refusal refused"] += 1
                return
        try:
            reference = {x: audit.law(fn, x, rng=rng, eps=sympy.Integer(1)) for x in data}
        except (audit.Unsupported, OverflowError) as exc:  # beyond the reference (or int(inf) in the program)
            SKIPPED[type(exc).__name__] += 1
            return
        for x in data:
            try:
                got = dpverify_law(fn, rng, x)
            except dp.SpecError as exc:
                if "more than 4,096 values" not in str(exc):
                    raise
                SKIPPED["refused: too many integer values"] += 1
                return
            assert got == reference[x], f"law on {x} differs\n{source}"
        ratio = achieved(reference)
        if ratio is None:
            claim_eps, holds = Fraction(5), False
        elif ratio == 1:
            claim_eps, holds = Fraction(1, 2), True
        else:
            with mpmath.workdps(60):
                level = mpmath.log(mpmath.mpf(ratio.numerator) / ratio.denominator)
                claim_eps = Fraction(mpmath.nstr(level * (1 + (1 if above else -1) * mpmath.mpf(10) ** -6), 40))
            holds = above
        spec = dp.spec(dp.implementation(fn, rng=rng), universe=dp.universe([0, 1], n=n, neighbours=dp.REPLACE_ONE),
                       grid={eps: [1]}, claims=[dp.private(claim_eps)])
        [result] = dp.check(spec)
        status = result.status.value
        expected = ("verified", "proved") if holds else ("refuted",)
        assert status in expected, f"private({claim_eps}): dpverify {status}, reference {holds}: " \
                                   f"{result.message}\n{source}"


COMMON = dict(derandomize=True, database=None, deadline=None, print_blob=False, phases=[Phase.generate],
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much])


@settings(max_examples=25, **COMMON)
@given(programs(), st.sampled_from([1, 2]), st.booleans())
def test_exact_audit_agrees_with_the_reference(program: tuple[str, str], n: int, above: bool) -> None:
    check_program(*program, n, above)


@pytest.mark.fuzz_long
@settings(max_examples=1500, **COMMON)
@given(programs(), st.sampled_from([1, 2]), st.booleans())
def test_exact_audit_agrees_with_the_reference_long(program: tuple[str, str], n: int, above: bool) -> None:
    check_program(*program, n, above)


# -- the reference against brute force on reduced grids -----------------------------------------

def brute_law(fn: Callable[..., Any], data: tuple, rng: str, bits: int) -> dict:
    """The law from brute force: each complete run weighs the product of 1/(number of options)."""
    grid = 2 ** bits
    law: dict = {}

    class Exhausted(Exception):
        pass

    def run(prefix: tuple, weight: Fraction) -> None:
        choices = iter(prefix)

        def take(n: int) -> int:
            value = next(choices, None)
            if value is None:
                raise Exhausted(n)
            return value

        class Numpy:
            def random(self) -> float:
                return take(grid) / grid

            def integers(self, low: int, high: int) -> int:
                return low + take(high - low)

            def choice(self, a: Any, p: Any) -> Any:
                cdf = np.cumsum(np.asarray(p, dtype=np.float64))
                cdf /= cdf[-1]
                return a[int(cdf.searchsorted(self.random(), side="right"))]  # numpy's own algorithm

            def uniform(self, low: float, high: float) -> float:
                return low + (high - low) * self.random()

        class Random(audit._random.Random):
            def random(self) -> float:  # type: ignore[override]
                return take(grid) / grid

            def _randbelow(self, n: int) -> int:  # type: ignore[override]
                return take(n)
        try:
            o = audit.plain(fn(data, rng=Numpy() if rng == "numpy" else Random()))
        except Exhausted as more:
            n = more.args[0]
            for c in range(n):
                run(prefix + (c,), weight / n)
            return
        law[o] = law.get(o, 0) + weight

    run((), Fraction(1))
    return law


def small_grid(fn: Callable[..., Any], rng: str, bits: int, data: tuple = (1,)) -> tuple[dict, dict]:
    old = audit.N
    audit.N = 2 ** bits
    try:
        return audit.law(fn, data, rng=rng), brute_law(fn, data, rng, bits)
    finally:
        audit.N = old


def prog_two_draws(data, rng):
    u, v = rng.random(), rng.random()
    if u < 0.3 + 0.25 * data[0]:
        return (int(v * 3), u >= 0.1)
    return (0.5 + 2.5 * u > 1.6, round(v * 2.5), v == 0.5, 1 - v <= 0.25)


def prog_discrete(data, rng):
    return (rng.choice(["a", "b", "c"], p=[0.2, 0.3, 0.5]), rng.integers(0, 3), rng.uniform(-1.0, 3.0) < 0.7)


def prog_random(data, rng):
    return (rng.choices("abc", [1, 2, 4])[0], rng.choices("ab")[0], rng.randrange(3), rng.uniform(1, 3) < 2.2)


@pytest.mark.parametrize("fn, rng, bits", [(prog_two_draws, "numpy", 6), (prog_discrete, "numpy", 7),
                                           (prog_random, "random", 4)])
def test_reference_equals_brute_force_on_reduced_grids(fn, rng, bits):
    ref, truth = small_grid(fn, rng, bits)
    assert ref == truth and sum(ref.values()) == 1


# -- findings ----------------------------------------------------------------------------------

def nan_threshold(data, eps, rng):
    u = rng.random()
    return (u >= math.nan, u <= math.nan, u == math.nan, u != math.nan, u < np.float64(math.nan))


def test_a_nan_threshold_compares_false_as_in_python():
    """Finding: u >= nan and u <= nan were True (read as not(u < nan)), u == nan True and u != nan
    False, on every grid point; Python says False, False, False, True."""
    assert dpverify_law(nan_threshold, "numpy", (0,)) == {(False, False, False, True, False): 1}
    assert audit.law(nan_threshold, (0,), eps=1) == {(False, False, False, True, False): 1}


def numpy_scalars(data, eps, rng):
    u = rng.random()
    return (np.float64(0.3) < u, int(np.float64(2.0) * u + np.float64(0.5)), np.float64(0.75) >= u)


def test_numpy_scalar_operands_are_followed():
    """Finding: numpy hands a scalar operand to __array_ufunc__ as a 0-d array, which was refused
    as 'not a number' (np.float64(0.3) < u, np.float64(2.0) * u)."""
    expected = audit.law(numpy_scalars, (0,), eps=1)
    assert len(expected) == 5 and dpverify_law(numpy_scalars, "numpy", (0,)) == expected


def float32_comparisons(data, eps, rng):
    u = rng.random()
    return (u < np.float32(0.1), u * np.float32(3.0) == 0.3)


def equal_values_other_types(data, eps, rng):  # 0.5 == np.float32(0.5), but numpy compares u with it in float32
    u = rng.random()
    return (u < 0.5, u < np.float32(0.5), u * 3.0 < 1.5, u * np.float32(3.0) < 1.5)


def test_numpy_promotion_decides_comparisons_with_float32():
    """Finding: numpy compares a Python float with np.float32 in float32 (NEP 50), and a float32
    value with a Python float in float32 too; the audit compared the exact values, so
    P(u < np.float32(0.1)) was off by 2^25 grid points and u * np.float32(3.0) == 0.3 (true on
    2^27 grid points) had probability 0."""
    got = dpverify_law(float32_comparisons, "numpy", (0,))
    assert got == audit.law(float32_comparisons, (0,), eps=1)
    below = int(sum(p for (lt, _), p in got.items() if lt) * G)
    assert (below - 1) / G < np.float32(0.1) and not below / G < np.float32(0.1)  # the real boundary
    assert below == math.ceil(Fraction(np.float32(0.1).item()) * G) - 2 ** 25 + 1
    assert sum(p for (_, eq), p in got.items() if eq) == Fraction(2 ** 27, G)
    both = dpverify_law(equal_values_other_types, "numpy", (0,))
    assert both == audit.law(equal_values_other_types, (0,), eps=1) and len(both) == 3
