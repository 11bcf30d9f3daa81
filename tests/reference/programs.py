"""Hypothesis strategies for small discrete programs of the DSL, as source text.

A program is ``mech(data, eps)``: an optional hostile header (a branch on eps, a dict
keyed by eps), one or two draws of the discrete primitives on a query of the data (or
on the first draw), and a post-processing of the draws (identity, pairs, sums,
comparisons, hashing by set membership or dict lookup, outputs computed from eps).
For a same_distribution claim the generator also writes ``other``: the same program
with one draw replaced by a twin of the same law (the claim holds) or by a perturbed
draw (it does not).  A relation that is not built in is written as ``rel(x, y)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from hypothesis import strategies as st

TINY = "Fraction(1, 10**40)"


@dataclass(frozen=True)
class Draw:
    """One draw: its source, a same-law twin and a perturbed variant (source strings)."""

    kind: str
    source: str
    twin: str
    perturbed: str


def _mixed(src: str) -> str:
    """A law 10^-40 away from ``src``'s, with the same exponents (scaling eps by 1 + 10^-40 instead
    would make the proof step's polynomials of degree 10^40: finding F7)."""
    return f"({src} if dp.bernoulli(1 - {TINY}) else 0)"


def _eps(coef: Fraction, factor: str) -> str:
    text = "eps" if coef == 1 else f"eps * {coef.numerator} / {coef.denominator}"
    return f"{text} * {factor}" if factor else text


# Probabilities: exact constants, functions of eps, and exact zeros/ones written with exp.
def _probabilities(e: str) -> list[str]:
    return ["Fraction(1, 3)", "Fraction(1, 2)", "Fraction(2, 3)", f"1 / (1 + dp.exp({e}))",
            f"dp.exp({e}) / (1 + dp.exp({e}))", "1 - dp.exp(eps) * dp.exp(-eps)", "dp.exp(eps) * dp.exp(-eps)"]


def _halves(e: str) -> list[str]:
    return ["Fraction(1, 4)", "Fraction(1, 3)", "Fraction(1, 2)", f"1 / (2 + 2 * dp.exp({e}))",
            f"dp.exp({e}) / (2 + 2 * dp.exp({e}))", "1 - dp.exp(eps) * dp.exp(-eps)"]


@st.composite
def draws(draw, q: str, factor: str, data_ok: bool) -> Draw:
    """One primitive applied to the integer expression ``q``."""
    kinds = ["rr2", "rr3", "bernoulli", "categorical", "exponential", "geometric", "uniform", "leak", "rejection",
             "tiny_bernoulli"]
    if data_ok:
        kinds.append("subset")
    kind = draw(st.sampled_from(kinds))
    e = _eps(draw(st.sampled_from([Fraction(1), Fraction(1, 2), Fraction(2), Fraction(3, 2)])), factor)
    if kind == "rr2":
        src = f"dp.randomized_response(({q}) % 2, {e})"
        twin = (f"dp.categorical({{({q}) % 2: dp.exp({e}) / (1 + dp.exp({e})), "
                f"1 - ({q}) % 2: 1 / (1 + dp.exp({e}))}})")
        return Draw(kind, src, twin, _mixed(src))
    if kind == "rr3":
        src = f"dp.randomized_response(({q}) % 3, {e}, values=(0, 1, 2))"
        return Draw(kind, src, f"dp.randomized_response(({q}) % 3, {e}, values=(2, 1, 0))",
                    _mixed(src))
    if kind == "bernoulli":
        p0, p1 = draw(st.sampled_from(_probabilities(e))), draw(st.sampled_from(_probabilities(e)))
        p = f"({p0}, {p1})[({q}) % 2]"
        return Draw(kind, f"dp.bernoulli({p})", f"dp.categorical({{False: 1 - {p}, True: {p}}})",
                    f"dp.bernoulli({p} * (1 - {TINY}))")
    if kind == "categorical":
        a = [draw(st.sampled_from(_halves(e))) for _ in range(2)]
        b = [draw(st.sampled_from(_halves(e))) for _ in range(2)]
        pa, pb = f"({a[0]}, {a[1]})[({q}) % 2]", f"({b[0]}, {b[1]})[({q}) % 2]"
        return Draw(kind, f"dp.categorical({{0: {pa}, 1: {pb}, 2: 1 - {pa} - {pb}}})",
                    f"dp.categorical({{2: 1 - {pb} - {pa}, 1: {pb}, 0: {pa}}})",
                    f"dp.categorical({{0: {pa} * (1 - {TINY}), 1: {pb}, 2: 1 - {pa} * (1 - {TINY}) - {pb}}})")
    if kind == "exponential":
        k = draw(st.sampled_from([2, 3]))
        sens = draw(st.sampled_from(["1", "2", "Fraction(1, 2)"]))
        score = f"lambda y: -abs(y - ({q}))"
        return Draw(kind, f"dp.exponential(range({k}), {score}, {e}, sensitivity={sens})",
                    f"dp.exponential(tuple(reversed(range({k}))), {score}, {e}, sensitivity={sens})",
                    _mixed(f"dp.exponential(range({k}), {score}, {e}, sensitivity={sens})"))
    if kind == "tiny_bernoulli":  # one dataset class differs by 10^-60: below the working precision
        p0 = draw(st.sampled_from(_probabilities(e)[:5]))
        p = f"({p0}, {p0} * (1 - Fraction(1, 10**60)), 1 - {p0})[({q}) % 3]"
        return Draw(kind, f"dp.bernoulli({p})", f"dp.categorical({{True: {p}, False: 1 - {p}}})",
                    f"dp.bernoulli({p0})")
    if kind == "rejection":  # uniform proposal, accepted w.p. e^{-eps |y - q| / 2}: the exponential mechanism
        src = f"dp.repeat_until_accepted(lambda: _accept(dp.uniform((0, 1, 2)), {q}, {e}))"
        score = f"lambda y: -abs(y - ({q}))"
        return Draw(kind, src, f"dp.exponential(range(3), {score}, {e}, sensitivity=1)",
                    _mixed(src))
    if kind == "geometric":
        upper = draw(st.sampled_from([1, 2, 3]))
        a = draw(st.sampled_from([f"dp.exp({e})", "Fraction(3)"]))
        return Draw(kind, f"dp.geometric({q}, {a}, lower=0, upper={upper})",
                    f"min(max(dp.geometric({q}, {a}, lower=-1, upper={upper + 1}), 0), {upper})",
                    f"dp.geometric({q}, {a} * (1 + {TINY}), lower=0, upper={upper})")
    if kind == "uniform":
        if data_ok and draw(st.booleans()):
            return Draw(kind, "dp.uniform(data)", "dp.subset(data, 1)[0]", "dp.uniform(data + (0,))")
        return Draw(kind, f"dp.uniform((({q}), ({q}) + 1, 2))", f"dp.uniform((2, ({q}) + 1, ({q})))",
                    f"dp.uniform((({q}), ({q}) + 1, 2, 2))")
    if kind == "subset":
        return Draw(kind, "sum(dp.subset(data, 1))", "dp.uniform(data)", "sum(dp.subset(data + (0,), 1))")
    return Draw(kind, f"({q})", f"int({q})", f"({q}) + 1")


ACCEPT = ("def _accept(y, q, e):\n"
          "    return y if dp.bernoulli(dp.exp(-e * abs(y - q) / 2)) else dp.REJECTED")

QUERIES = [  # (source, order dependent, needs a non-empty dataset)
    ("sum(data)", False, False),
    ("len(data)", False, False),
    ("data.count(1)", False, False),
    ("max(data, default=0)", False, False),
    ("(data[0] if data else 0)", True, False),
    ("(data[-1] if data else 0)", True, False),
    ("sum(i * r for i, r in enumerate(data))", True, False),
]

POSTS = [  # (source over z1, z2; tag)
    ("z1", "plain"), ("(z1, z2)", "plain"), ("int(z1) + int(z2)", "plain"), ("int(z1) % 2", "plain"),
    ("int(z1) > 1", "plain"), ("min(int(z1), 1)", "plain"),
    ("int(z1) in {0, 2}", "hashing"), ("{0: 'a', 1: 'b'}.get(int(z1), 'c')", "hashing"),
    ("int(z1) + eps", "computed_output"), ("(int(z1), eps)", "computed_output"),
    ("int(z1) * eps", "computed_output"),
]


@dataclass(frozen=True)
class Program:
    source: str
    shapes: tuple[str, ...]
    branches_on_eps: bool


def _rat(v: Fraction) -> str:
    return f"Rational({v.numerator}, {v.denominator})"


@st.composite
def headers(draw, q: str, grid: tuple[Fraction, ...]) -> tuple[list[str], str, str]:
    """A hostile branch on eps: (lines, factor for eps, tag); tag '' for none."""
    kind = draw(st.sampled_from(["none"] * 5 + ["eq", "in", "ne", "dict", "cmp", "hash", "bool"]))
    v = draw(st.sampled_from(sorted(set(grid) | {Fraction(1), Fraction(1, 2)})))
    w = draw(st.sampled_from([Fraction(1), Fraction(2), Fraction(3, 2)]))
    if kind == "eq":
        return [f"if eps == {_rat(v)}:", f"    return ('leak', {q})"], "", "eps_branch_eq"
    if kind == "in":
        return [f"if eps in {{{_rat(v)}, {_rat(w)}}}:", f"    return ('leak', {q})"], "", "eps_branch_in"
    if kind == "ne":
        return [f"if eps != {_rat(v)}:", "    pass", "else:", f"    return ('leak', {q})"], "", "eps_branch_ne"
    if kind == "dict":
        return [f"k = {{{_rat(v)}: 3}}.get(eps, 1)"], "k", "eps_dict_key"
    if kind == "hash":
        return [f"if hash(eps) % 2 == hash({_rat(v)}) % 2:", f"    return ('leak', {q})"], "", "eps_hash"
    if kind == "bool":
        return [f"if not bool(eps - {_rat(v)}):", f"    return ('leak', {q})"], "", "eps_bool"
    if kind == "cmp":
        return [f"if dp.exp(eps) > {draw(st.sampled_from([2, 3, 8]))}:", f"    return ('leak', {q})"], "", "eps_compare"
    return [], "", ""


TAIL_POSTS = [  # over an unclamped geometric z1: the tail must stay lumped, or be refused
    ("z1", "plain"), ("z1 > 1", "plain"), ("(z1, z1 > 2)", "plain"), ("z1 == 1", "plain"),
    ("z1 in {0, 2}", "hashing"), ("{0: 'a', 1: 'b'}.get(z1, 'c')", "hashing"), ("z1 in (0, 3)", "hashing"),
]


def _tail_program(draw, q: str, header: list[str], factor: str, want_other: bool) -> tuple[str, str, str]:
    """mech (and other) around one unclamped geometric draw; returns (source, post tag, kind)."""
    e = _eps(draw(st.sampled_from([Fraction(1), Fraction(1, 2), Fraction(2)])), factor)
    a = draw(st.sampled_from([f"dp.exp({e})", "Fraction(3)"]))
    bounds = draw(st.sampled_from(["", ", lower=0", ", upper=3"]))
    post, tag = draw(st.sampled_from(TAIL_POSTS))
    draws_ = {"": f"dp.geometric({q}, {a}{bounds})",
              "twin": f"dp.geometric({q}, {a}{bounds or ', lower=None'})",
              "perturbed": f"dp.geometric({q}, {a} * (1 + {TINY}){bounds})"}
    same = draw(st.booleans())

    def body(name: str, variant: str) -> str:
        lines = [f"def {name}(data, eps):"] + [f"    {line}" for line in header]
        return "\n".join(lines + [f"    z1 = {draws_[variant]}", f"    return {post}"])
    source = body("mech", "")
    if want_other:
        source += "\n\n\n" + body("other", "twin" if same else "perturbed")
    return source, tag, "geometric_unclamped"


@st.composite
def programs(draw, sizes: tuple[int, ...], grid: tuple[Fraction, ...], want_other: bool) -> Program:
    """mech(data, eps) and, with ``want_other``, other(data, eps)."""
    data_ok = 0 not in sizes
    q, order_dependent, _ = draw(st.sampled_from(QUERIES))
    header, factor, htag = draw(headers(q, grid))
    if draw(st.integers(0, 5)) == 0:
        source, ptag, kind = _tail_program(draw, q, header, factor, want_other)
        shapes = tuple(t for t in (htag, ptag, kind, q if order_dependent else "") if t)
        return Program(source, shapes, bool(htag))
    d1 = draw(draws(q, factor, data_ok))
    two = draw(st.booleans())
    d2 = None
    if two:
        q2 = draw(st.sampled_from(["z1", q]))
        d2 = draw(draws(f"int({q2})" if q2 == "z1" else q2, factor, data_ok))
    posts = [p for p in POSTS if two or "z2" not in p[0]]
    post, ptag = draw(st.sampled_from(posts))
    same = draw(st.booleans())

    def body(name: str, variant: str) -> str:
        lines = [f"def {name}(data, eps):"] + [f"    {line}" for line in header]
        for i, d in enumerate([d1, d2], start=1):
            if d is None:
                continue
            src = d.source
            if variant and i == 1:
                src = d.twin if variant == "twin" else d.perturbed
            lines.append(f"    z{i} = {src}")
        lines.append(f"    return {post}")
        return "\n".join(lines)

    source = body("mech", "")
    if want_other:
        source += "\n\n\n" + body("other", "twin" if same else "perturbed")
    if "_accept(" in source:
        source = ACCEPT + "\n\n\n" + source
    shapes = tuple(t for t in (htag, ptag, d1.kind, d2.kind if d2 else "", q if order_dependent else "") if t)
    return Program(source, shapes, bool(htag))


RELATIONS = {
    "rel_replace": "def rel(x, y):\n    return len(x) == len(y) and sum(a != b for a, b in zip(x, y)) == 1",
    "rel_remove_oneway": ("def rel(x, y):\n    return len(y) == len(x) - 1 and "
                          "any(x[:i] + x[i + 1:] == y for i in range(len(x)))"),
    "rel_replace_oneway": ("def rel(x, y):\n    return len(x) == len(y) and x < y and "
                           "sum(a != b for a, b in zip(x, y)) == 1"),
    "rel_empty": "def rel(x, y):\n    return False",
}


@st.composite
def universes(draw) -> tuple[tuple, tuple[int, ...], str, str, bool]:
    """(records, sizes, relation, relation source, symmetric flag)."""
    records = draw(st.sampled_from([(0, 1), (0, 1, 2)]))
    relation = draw(st.sampled_from(["replace"] * 4 + ["addremove"] * 3 + sorted(RELATIONS)))
    if relation in ("replace", "rel_replace", "rel_replace_oneway", "rel_empty"):
        sizes = draw(st.sampled_from([(1,), (2,)]))
    else:
        sizes = draw(st.sampled_from([(0, 1), (1, 2), (0, 1, 2)]))
    symmetric = draw(st.sampled_from([False, False, False, True]))
    if relation in RELATIONS:
        return records, sizes, "rel", RELATIONS[relation], symmetric
    return records, sizes, relation, "", symmetric
