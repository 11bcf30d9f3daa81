"""An independent reference for programs with continuous noise inside (tests only).

Programs are data here (:class:`Straight`, :class:`ArgMax`, :class:`SVT`): Laplace and one-sided
exponential draws on query answers, noisy values shifted by constants, compared with each other,
with constants and with themselves (``x >= x``, ``(x + 1) - 1 >= x``, ``x + 0 == x``), argmax/argmin
loops, sparse vector loops, and "probes" of a noisy value (``str``, ``hash``, ``id``, ``type``,
``isinstance``, ``repr``, f-strings) whose answer is the same for every real number.  Outputs are
discrete.  Each program renders the dpverify spec source of itself (:meth:`render`) and evaluates
itself on real noise values (:meth:`run`).

The meaning is the exact real semantics: a draw is a real number ``centre + Z``; a value is a pair
(noise variable, exact rational offset), so two values of one variable compare by their offsets
exactly (``(x + 1) - 1 >= x`` is true, ``x > x`` false), values of different variables by their real
values (ties have probability zero); a probe answers as it would for a Python float (``isinstance(x,
float)`` is true, ``str(x + 0) == str(x)`` true).

Two evaluators of one program on one answer vector, sharing no code with dpverify:

* :func:`law_quadrature` (at most three noise variables): the output is constant on the cells of the
  arrangement of the program's comparison hyperplanes ``x_i = c``, ``x_i - x_j = d`` (and the
  densities' kinks at the centres); the projections of the arrangement are closed so that for an
  outer point inside a cell the order of the inner breakpoints is fixed.  The innermost variable is
  integrated in closed form (differences of its CDF, written again here), the outer ones with
  ``mpmath.quad`` (tanh-sinh, split at the breakpoints), each with its error estimate.  Every
  probability comes with an error bound; an output that no cell of positive volume produces has
  probability exactly 0.
* :func:`law_monte_carlo` (any program): seeded sampling, Clopper-Pearson bands per output
  probability at a stated error probability (Bonferroni over outputs).

Nothing here imports ``dpverify``.
"""
from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional

import mpmath

F = Fraction

# ---------------------------------------------------------------------------------------------
# Universes: answer vectors for each dataset
# ---------------------------------------------------------------------------------------------

QUERIES = {  # name: (source over `data`, python function)
    "count1": ("data.count(1)", lambda d: d.count(1)),
    "count0": ("data.count(0)", lambda d: d.count(0)),
    "size": ("len(data)", lambda d: len(d)),
    "first": ("(data[0] if data else 0)", lambda d: d[0] if d else 0),
    "twice1": ("2 * data.count(1)", lambda d: 2 * d.count(1)),
}


@dataclass(frozen=True)
class Universe:
    """Either answer vectors (``kind="answers"``: values^m, neighbours linf/l1) or datasets of records
    in {0, 1} of the given sizes (``kind="data"``: replace-one / add-remove) with queries by name."""

    kind: str
    m: int = 1
    values: tuple = (0, 1)
    relation: str = "linf"
    sizes: tuple = (1,)
    queries: tuple = ()

    def datasets(self) -> list[tuple]:
        if self.kind == "answers":
            return list(itertools.product(self.values, repeat=self.m))
        return [d for n in self.sizes for d in itertools.product((0, 1), repeat=n)]

    def answers(self, d: tuple) -> tuple:
        if self.kind == "answers":
            return tuple(d)
        return tuple(QUERIES[q][1](d) for q in self.queries)

    def neighbours(self, x: tuple, y: tuple) -> bool:
        if x == y:
            return False
        if self.relation == "linf":
            return len(x) == len(y) and all(abs(a - b) <= 1 for a, b in zip(x, y))
        if self.relation == "l1":
            return len(x) == len(y) and sum(abs(a - b) for a, b in zip(x, y)) <= 1
        if self.relation == "replace":
            return len(x) == len(y) and sum(a != b for a, b in zip(x, y)) == 1
        if self.relation == "addremove":
            small, big = (x, y) if len(x) < len(y) else (y, x)
            return len(big) == len(small) + 1 and any(big[:i] + big[i + 1:] == small for i in range(len(big)))
        raise ValueError(self.relation)

    def pairs(self) -> list[tuple]:
        ds = self.datasets()
        return [(x, y) for x in ds for y in ds if self.neighbours(x, y)]

    def n_answers(self) -> int:
        return self.m if self.kind == "answers" else len(self.queries)

    def render(self) -> str:
        if self.kind == "answers":
            rel = {"linf": "dp.linf_one", "l1": "dp.l1_one"}[self.relation]
            return f"dp.answers({list(self.values)!r}, {self.m}, neighbours={rel})"
        n = str(self.sizes[0]) if len(self.sizes) == 1 else f"range({self.sizes[0]}, {self.sizes[-1] + 1})"
        rel = {"replace": "dp.REPLACE_ONE", "addremove": "dp.ADD_REMOVE"}[self.relation]
        return f"dp.universe((0, 1), n={n}, neighbours={rel})"

    def prologue(self) -> str:
        if self.kind == "answers":
            return "    _a = tuple(data)\n"
        return f"    _a = ({', '.join(QUERIES[q][0] for q in self.queries)},)\n"


def _rat(x: Fraction) -> str:
    x = F(x)
    return f"Fraction({x.numerator}, {x.denominator})" if x.denominator != 1 else str(x.numerator)


# ---------------------------------------------------------------------------------------------
# The program AST
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Draw:
    """kind("laplace" | "exponential") noise of scale ``scale / eps`` on ``answer[slot] + shift``
    (slot None: the constant ``shift``)."""

    kind: str
    slot: Optional[int]
    shift: Fraction
    scale: Fraction

    def centre(self, ans: tuple) -> Fraction:
        return (F(ans[self.slot]) if self.slot is not None else F(0)) + self.shift

    def render(self) -> str:
        fn = "dp.laplace" if self.kind == "laplace" else "dp.exponential_noise"
        if self.slot is None:
            centre = _rat(self.shift)
        else:
            centre = f"_a[{self.slot}]" + (f" + {_rat(self.shift)}" if self.shift else "")
        return f"{fn}({centre}, {_rat(self.scale)} / eps)"


@dataclass(frozen=True)
class Var:
    """Noise variable ``var`` shifted successively by ``path`` (rendered ``((x + a) - b)``)."""

    var: int
    path: tuple = ()

    @property
    def offset(self) -> Fraction:
        return sum((F(p) for p in self.path), F(0))

    def render(self, names: Any) -> str:
        out = names(self.var)
        for p in self.path:
            out = f"({out} + {_rat(p)})" if p >= 0 else f"({out} - {_rat(-p)})"
        return out


@dataclass(frozen=True)
class Const:
    value: Fraction

    def render(self, names: Any) -> str:
        return _rat(self.value)


OPS = {"<": lambda s: s < 0, "<=": lambda s: s <= 0, ">": lambda s: s > 0, ">=": lambda s: s >= 0,
       "==": lambda s: s == 0, "!=": lambda s: s != 0}
FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


@dataclass(frozen=True)
class Cmp:
    left: Any
    op: str
    right: Any
    swap: bool = False  # rendered as ``right FLIP[op] left`` (Python's reflected comparison)

    def render(self, names: Any) -> str:
        if self.swap:
            return f"({self.right.render(names)} {FLIP[self.op]} {self.left.render(names)})"
        return f"({self.left.render(names)} {self.op} {self.right.render(names)})"


# probes of a noisy value: (source template, its answer for every real number)
PROBES = {
    "isinstance_float": ("isinstance({x}, float)", True),
    "type_is_float": ("type({x}) is float", True),
    "type_same": ("type({x}) is type({x} + 1)", True),
    "str_same": ("str({x}) == str({x} + 0)", True),
    "repr_same": ("repr({x}) == repr(({x} + 1) - 1)", True),
    "fstring_same": ("f'{{{x}}}' == f'{{{x} + 0}}'", True),
    "hash_same": ("hash({x}) == hash({x} + 0)", True),
    "id_same": ("id({x}) == id({x})", True),
    "str_nonempty": ("len(str({x})) > 0", True),
    "in_tuple": ("({x} + 0) in ({x},)", True),
    "eq_shift": ("({x} + 1) - 1 == {x}", True),
    "ne_shift": ("{x} + 0 != {x}", False),
    "dict_key": ("{{{x}: 1}}.get({x} + 0, 0) == 1", True),
}


@dataclass(frozen=True)
class Probe:
    kind: str
    var: int

    def render(self, names: Any) -> str:
        return "(" + PROBES[self.kind][0].format(x=names(self.var)) + ")"


@dataclass(frozen=True)
class Not:
    cond: Any

    def render(self, names: Any) -> str:
        return f"(not {self.cond.render(names)})"


@dataclass(frozen=True)
class And:
    a: Any
    b: Any
    op: str = "and"

    def render(self, names: Any) -> str:
        return f"({self.a.render(names)} {self.op} {self.b.render(names)})"


def evaluate(cond: Any, xs: tuple) -> bool:
    """A condition on real noise values ``xs`` (exact on one variable, ties of two have probability 0)."""
    if isinstance(cond, Cmp):
        return OPS[cond.op](_difference(cond.left, cond.right, xs))
    if isinstance(cond, Probe):
        return PROBES[cond.kind][1]
    if isinstance(cond, Not):
        return not evaluate(cond.cond, xs)
    if isinstance(cond, And):
        if cond.op == "and":
            return evaluate(cond.a, xs) and evaluate(cond.b, xs)
        return evaluate(cond.a, xs) or evaluate(cond.b, xs)
    raise TypeError(cond)


def _difference(a: Any, b: Any, xs: tuple) -> Any:
    """a - b: exact when both are one variable (or constants), else a real number."""
    if isinstance(a, Var) and isinstance(b, Var) and a.var == b.var:
        return a.offset - b.offset
    if isinstance(a, Const) and isinstance(b, Const):
        return F(a.value) - F(b.value)
    conv = float if any(isinstance(x, float) for x in xs) else _mp
    av = conv(F(a.value)) if isinstance(a, Const) else xs[a.var] + conv(a.offset)
    bv = conv(F(b.value)) if isinstance(b, Const) else xs[b.var] + conv(b.offset)
    return av - bv


def _real(v: Any) -> Any:
    if isinstance(v, Fraction):
        return mpmath.mpf(v.numerator) / v.denominator
    if isinstance(v, float):
        return v
    return v


def _planes_of(cond: Any, out: set) -> None:
    if isinstance(cond, Cmp):
        a, b = cond.left, cond.right
        if isinstance(a, Var) and isinstance(b, Var):
            if a.var != b.var:  # x_a + oa = x_b + ob
                out.add(_plane(a.var, b.var, b.offset - a.offset))
        elif isinstance(a, Var):
            out.add((a.var, None, F(b.value) - a.offset))
        elif isinstance(b, Var):
            out.add((b.var, None, F(a.value) - b.offset))
    elif isinstance(cond, Not):
        _planes_of(cond.cond, out)
    elif isinstance(cond, And):
        _planes_of(cond.a, out)
        _planes_of(cond.b, out)


def _plane(a: int, b: int, d: Fraction) -> tuple:
    """The hyperplane x_a - x_b = d, normalised to (i, j, d'): x_i = x_j + d' with i > j."""
    return (a, b, F(d)) if a > b else (b, a, -F(d))


def _out_src(o: Any) -> str:
    if isinstance(o, tuple) and o and o[0] == "leak":
        return f"('leak', _a[{o[1]}])"
    return repr(o)


@dataclass(frozen=True)
class Straight:
    """Draws x0..x(k-1); ``if c1: return o1 elif c2: ... else: return default``, or (``tuple_out``)
    the tuple of the conditions' truth values.  An output ('leak', i) releases answer i."""

    draws: tuple
    branches: tuple  # ((cond, output), ...)
    default: Any = 0
    tuple_out: bool = False

    def noise(self) -> tuple:
        return self.draws

    def planes(self) -> set:
        out: set = set()
        for cond, _ in self.branches:
            _planes_of(cond, out)
        return out

    def run(self, ans: tuple, xs: tuple) -> Any:
        if self.tuple_out:
            return tuple(evaluate(c, xs) for c, _ in self.branches)
        for cond, o in self.branches:
            if evaluate(cond, xs):
                return ("leak", ans[o[1]]) if isinstance(o, tuple) and o and o[0] == "leak" else o
        return self.default

    def render_body(self) -> str:
        names = lambda v: f"x{v}"  # noqa: E731
        lines = [f"    x{i} = {d.render()}\n" for i, d in enumerate(self.draws)]
        if self.tuple_out:
            return "".join(lines) + f"    return ({', '.join(c.render(names) for c, _ in self.branches)},)\n"
        for k, (cond, o) in enumerate(self.branches):
            lines.append(f"    {'if' if k == 0 else 'elif'} {cond.render(names)}:\n        return {_out_src(o)}\n")
        lines.append(f"    return {_out_src(self.default)}\n")
        return "".join(lines)

    def outputs_hint(self) -> str:
        return "tuple" if self.tuple_out else "label"


ARGMAX_VARIANTS = {
    # name: (loop source, argmax (True) or argmin (False), compares a value with itself)
    "running_gt": ("    best, top = 0, v[0]\n    for i in range(1, len(v)):\n        if v[i] > top:\n"
                   "            best, top = i, v[i]\n    return best\n", True),
    "running_ge": ("    best, top = 0, v[0]\n    for i in range(1, len(v)):\n        if v[i] >= top:\n"
                   "            best, top = i, v[i]\n    return best\n", True),
    "running_lt_min": ("    best, low = 0, v[0]\n    for i in range(1, len(v)):\n        if v[i] < low:\n"
                       "            best, low = i, v[i]\n    return best\n", False),
    "all_ge_self": ("    for i in range(len(v)):\n        if all(v[i] >= v[j] for j in range(len(v))):\n"
                    "            return i\n    return -1\n", True),
    "all_le_self": ("    for i in range(len(v)):\n        if all(v[i] <= v[j] for j in range(len(v))):\n"
                    "            return i\n    return -1\n", False),
    "all_gt_skip": ("    for i in range(len(v)):\n        if all(v[i] > v[j] for j in range(len(v)) if j != i):\n"
                    "            return i\n    return -1\n", True),
    "all_shift_self": ("    for i in range(len(v)):\n        if all((v[i] + 1) - 1 >= v[j] for j in range(len(v))):\n"
                       "            return i\n    return -1\n", True),
    "not_lt_self": ("    for i in range(len(v)):\n        if not any(v[i] < v[j] for j in range(len(v))):\n"
                    "            return i\n    return -1\n", True),
    "max_builtin": ("    return v.index(max(v))\n", True),
    "min_builtin": ("    return v.index(min(v))\n", False),
    "sorted_key": ("    return sorted(range(len(v)), key=lambda i: v[i])[-1]\n", True),
    "running_ge_first": ("    best = 0\n    for i in range(len(v)):\n        if v[i] >= v[best]:\n"
                         "            best = i\n    return best\n", True),
}
SELF_COMPARING = {"all_ge_self", "all_le_self", "all_shift_self", "not_lt_self", "running_ge_first"}


@dataclass(frozen=True)
class ArgMax:
    """v[i] = noise on answer i (i < m); the index of the largest (or smallest) by a loop variant."""

    draws: tuple
    variant: str

    def noise(self) -> tuple:
        return self.draws

    def planes(self) -> set:
        return {_plane(i, j, F(0)) for i in range(len(self.draws)) for j in range(i)}

    def run(self, ans: tuple, xs: tuple) -> Any:
        vals = [_real(x) for x in xs]
        pick = max if ARGMAX_VARIANTS[self.variant][1] else min
        return vals.index(pick(vals))

    def render_body(self) -> str:
        return (f"    v = [{', '.join(d.render() for d in self.draws)}]\n" + ARGMAX_VARIANTS[self.variant][0])


SVT_VARIANTS = ("ge", "gt", "shift_self", "threshold_self")


@dataclass(frozen=True)
class SVT:
    """Noisy threshold (draw 0), then for each query draw: above -> True (stop after c), below -> False.
    ``shift_self`` compares ``(noisy + 1) - 1 >= threshold``; ``threshold_self`` also requires
    ``threshold >= threshold`` (always true)."""

    draws: tuple  # draws[0] the threshold, draws[1:] the queries
    cutoff: int
    variant: str = "ge"

    def noise(self) -> tuple:
        return self.draws

    def planes(self) -> set:
        return {_plane(i, 0, F(0)) for i in range(1, len(self.draws))}

    def run(self, ans: tuple, xs: tuple) -> Any:
        t = _real(xs[0])
        out, count = [], 0
        for i in range(1, len(self.draws)):
            x = _real(xs[i])
            if (x > t) if self.variant == "gt" else (x >= t):
                out.append(True)
                count += 1
                if count >= self.cutoff:
                    break
            else:
                out.append(False)
        return tuple(out)

    def render_body(self) -> str:
        cmp = {"ge": "noisy >= t", "gt": "noisy > t", "shift_self": "(noisy + 1) - 1 >= t",
               "threshold_self": "noisy >= t and t >= t"}[self.variant]
        qs = ", ".join(d.render() for d in self.draws[1:])
        return (f"    t = {self.draws[0].render()}\n    out, count = [], 0\n"
                f"    for make in [{', '.join(f'lambda: {d.render()}' for d in self.draws[1:])}]:\n"
                f"        noisy = make()\n        if {cmp}:\n            out.append(True)\n"
                f"            count += 1\n            if count >= {self.cutoff}:\n                break\n"
                f"        else:\n            out.append(False)\n    return tuple(out)\n") if qs else ""


def render_mech(prog: Any, universe: Universe, name: str = "mech") -> str:
    return f"def {name}(data, eps):\n{universe.prologue()}{prog.render_body()}"


# ---------------------------------------------------------------------------------------------
# Densities and distribution functions (written again from the definitions)
# ---------------------------------------------------------------------------------------------

def _mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


class Law1:
    """One noise variable: its density, CDF and survival function in mpmath."""

    def __init__(self, kind: str, centre: Fraction, scale: Fraction) -> None:
        self.kind, self.c, self.s = kind, _mp(centre), _mp(scale)
        self.exact_centre = centre

    def density(self, x: Any) -> Any:
        if self.kind == "laplace":
            return mpmath.exp(-abs(x - self.c) / self.s) / (2 * self.s)
        return mpmath.exp(-(x - self.c) / self.s) / self.s if x >= self.c else mpmath.mpf(0)

    def mass(self, lo: Any, hi: Any) -> Any:
        """P(lo < X < hi), computed on the side of the centre that keeps relative precision."""
        if hi <= lo:
            return mpmath.mpf(0)
        c, s = self.c, self.s
        if self.kind == "exponential":
            lo = max(lo, c)
            if hi <= lo:
                return mpmath.mpf(0)
            up = mpmath.exp(-(hi - c) / s) if hi != mpmath.inf else mpmath.mpf(0)
            return mpmath.exp(-(lo - c) / s) - up
        if lo >= c:
            up = mpmath.exp(-(hi - c) / s) / 2 if hi != mpmath.inf else mpmath.mpf(0)
            return mpmath.exp(-(lo - c) / s) / 2 - up
        if hi <= c:
            down = mpmath.exp((lo - c) / s) / 2 if lo != -mpmath.inf else mpmath.mpf(0)
            return mpmath.exp((hi - c) / s) / 2 - down
        return self.mass(lo, c) + self.mass(c, hi)


# ---------------------------------------------------------------------------------------------
# Quadrature over the cells of the comparison arrangement
# ---------------------------------------------------------------------------------------------

class Unsupported(Exception):
    """The quadrature reference does not take this program (too many noise variables)."""


def _forms(planes: set, k: int, laws: list) -> list[set]:
    """Breakpoint forms per variable: (j, d) is x_j + d (j < the variable), (None, d) the constant d;
    closed under projection, so that inside a cell of the outer variables the inner order is fixed."""
    planes = set(planes)
    for i, law in enumerate(laws):
        planes.add((i, None, law.exact_centre))
    forms: list[set] = [set() for _ in range(k)]
    for v in range(k - 1, -1, -1):
        forms[v] = {(j, d) for (i, j, d) in planes if i == v}
        for (j1, d1), (j2, d2) in itertools.combinations(sorted(forms[v], key=repr), 2):
            if j1 == j2:
                continue
            if j1 is None:
                planes.add((j2, None, d1 - d2))
            elif j2 is None:
                planes.add((j1, None, d2 - d1))
            else:
                planes.add(_plane(j1, j2, d2 - d1))
    return forms


def _value(form: tuple, outer: list) -> Any:
    j, d = form
    return _mp(d) if j is None else outer[j] + _mp(d)


def _intervals(forms: set, outer: list) -> list[tuple]:
    """Consecutive (lo_form, hi_form) pairs in the order at ``outer``; None is -inf/+inf."""
    ordered = sorted(forms, key=lambda f: _value(f, outer))
    uniq: list = []
    for f in ordered:
        if uniq and _value(uniq[-1], outer) == _value(f, outer):
            continue  # the same point (an identical form)
        uniq.append(f)
    bounds = [None] + uniq + [None]
    return list(zip(bounds[:-1], bounds[1:]))


def _end(form: Optional[tuple], outer: list, low: bool) -> Any:
    if form is None:
        return -mpmath.inf if low else mpmath.inf
    return _value(form, outer)


def _rep(lo: Any, hi: Any) -> Any:
    if lo == -mpmath.inf and hi == mpmath.inf:
        return mpmath.mpf(0)
    if lo == -mpmath.inf:
        return hi - 1
    if hi == mpmath.inf:
        return lo + 1
    return (lo + hi) / 2


@dataclass
class QuadLaw:
    """P(o) per output with an absolute error bound per output."""

    probs: dict
    errors: dict

    def interval(self, o: Any) -> tuple:
        """[lo, hi] holding P(o): a point only for a structural 0 (no cell of positive volume gives o) or 1
        (no cell gives anything else); else p -+ its error bound, at a precision that keeps them apart."""
        if o not in self.probs:
            return (mpmath.mpf(0), mpmath.mpf(0))
        if len(self.probs) == 1:
            return (mpmath.mpf(1), mpmath.mpf(1))
        p, e = self.probs[o], self.errors[o]
        with mpmath.workdps(40):
            return (max(p - e, mpmath.mpf(0)), min(p + e, mpmath.mpf(1)))


MAX_QUAD_VARIABLES = 2  # three work (law_quadrature(..., max_vars=3)) but take minutes: Monte Carlo instead


def law_quadrature(prog: Any, ans: tuple, eps: Fraction, dps: int = 25, max_vars: int = MAX_QUAD_VARIABLES) -> QuadLaw:
    draws = prog.noise()
    k = len(draws)
    if k > max_vars or k > 3:
        raise Unsupported(f"{k} noise variables")
    with mpmath.workdps(dps):
        laws = [Law1(d.kind, d.centre(ans), d.scale / F(eps)) for d in draws]
        forms = _forms(prog.planes(), k, laws)
        tol = mpmath.mpf(10) ** (-dps + 5)

        def tree(v: int, outer: list) -> list:
            """The cells of variable v at the representative outer point: (lo, hi, subtree or output)."""
            cells = []
            for lo_f, hi_f in _intervals(forms[v], outer):
                lo, hi = _end(lo_f, outer, True), _end(hi_f, outer, False)
                if laws[v].kind == "exponential" and hi <= laws[v].c:
                    continue  # outside the support: probability exactly 0
                r = _rep(lo, hi)
                if v == k - 1:
                    xs = tuple(outer) + (r,)
                    cells.append((lo_f, hi_f, ("out", prog.run(ans, xs))))
                else:
                    cells.append((lo_f, hi_f, tree(v + 1, outer + [r])))
            return cells

        def outputs(t: list, acc: set) -> set:
            for _, _, sub in t:
                if isinstance(sub, tuple):
                    acc.add(sub[1])
                else:
                    outputs(sub, acc)
            return acc

        probs: dict = {}
        errs: dict = {}
        top = tree(0, [])
        for o in outputs(top, set()):
            err = [mpmath.mpf(0)]

            def integrate(t: list, v: int, outer: list) -> Any:
                total = mpmath.mpf(0)
                for lo_f, hi_f, sub in t:
                    lo, hi = _end(lo_f, outer, True), _end(hi_f, outer, False)
                    if v == k - 1:
                        if sub[1] == o:
                            total += laws[v].mass(lo, hi)
                        continue
                    if not _contains(sub, o):
                        continue
                    if laws[v].kind == "exponential":
                        lo = max(lo, laws[v].c)
                    if hi <= lo:
                        continue

                    def g(x: Any, sub: list = sub) -> Any:
                        return laws[v].density(x) * integrate(sub, v + 1, outer + [x])
                    value, e = mpmath.quad(g, [lo, hi], error=True)
                    err[0] += e
                    total += value
                return total

            p = integrate(top, 0, [])
            probs[o] = +p
            errs[o] = err[0] + tol * (1 + len(probs))
        total = sum(probs.values())
        if abs(total - 1) > sum(errs.values()) + tol * 10:
            raise AssertionError(f"quadrature law sums to {total}")
        return QuadLaw(probs, errs)


def _contains(t: Any, o: Any) -> bool:
    if isinstance(t, tuple):
        return t[1] == o
    return any(_contains(sub, o) for _, _, sub in t)


# ---------------------------------------------------------------------------------------------
# Monte Carlo with Clopper-Pearson bands
# ---------------------------------------------------------------------------------------------

def _sample(rng: random.Random, kind: str, centre: float, scale: float) -> float:
    u = rng.random()
    if kind == "exponential":
        return centre - scale * math.log(1.0 - u)
    return centre - scale * math.copysign(1.0, u - 0.5) * math.log(1.0 - 2.0 * abs(u - 0.5))


_LOG_BINOM: dict = {}


def _log_binom(n: int) -> Any:
    if n not in _LOG_BINOM:
        import numpy
        _LOG_BINOM[n] = numpy.array([math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                                     for i in range(n + 1)])
    return _LOG_BINOM[n]


def _log_tail(n: int, k: int, p: float, upper: bool) -> float:
    """ln P(Bin(n, p) >= k) (upper) or ln P(Bin(n, p) <= k), by a log-sum-exp over the pmf."""
    import numpy
    i = numpy.arange(n + 1)
    logpmf = _log_binom(n) + i * math.log(p) + (n - i) * math.log1p(-p)
    part = logpmf[k:] if upper else logpmf[:k + 1]
    top = part.max()
    return float(top + math.log(numpy.exp(part - top).sum()))


def clopper_pearson(k: int, n: int, alpha: float) -> tuple:
    """The two-sided Clopper-Pearson interval for k successes in n trials at error probability alpha
    (its ends found by bisection on the binomial tails, widened by 1e-9 relative against rounding)."""
    target = math.log(alpha / 2)

    def bisect(pred: Any) -> float:  # the boundary of {p: pred(p)} in (0, 1), pred monotone increasing
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            if pred(mid):
                hi = mid
            else:
                lo = mid
        return lo, hi
    lower = 0.0 if k == 0 else bisect(lambda p: _log_tail(n, k, p, True) > target)[0] * (1 - 1e-9)
    upper = 1.0 if k == n else min(1.0, bisect(lambda p: _log_tail(n, k, p, False) < target)[1] * (1 + 1e-9))
    return mpmath.mpf(lower), mpmath.mpf(upper)


@dataclass
class MCLaw:
    counts: dict
    n: int
    alpha: float
    _bands: dict = field(default_factory=dict)

    def interval(self, o: Any) -> tuple:
        if o not in self._bands:
            self._bands[o] = clopper_pearson(self.counts.get(o, 0), self.n, self.alpha)
        return self._bands[o]


def law_monte_carlo(prog: Any, ans: tuple, eps: Fraction, n: int, seed: int, alpha: float) -> MCLaw:
    """Counts of each output over n seeded runs; ``interval(o)`` holds P(o) except with probability
    ``alpha`` (per output: the caller divides its error budget)."""
    rng = random.Random(seed)
    params = [(d.kind, float(d.centre(ans)), float(d.scale / F(eps))) for d in prog.noise()]
    counts: dict = {}
    for _ in range(n):
        xs = tuple(_sample(rng, *p) for p in params)
        o = prog.run(ans, xs)
        counts[o] = counts.get(o, 0) + 1
    return MCLaw(counts, n, alpha)


# ---------------------------------------------------------------------------------------------
# Claims' truths from laws with error bands
# ---------------------------------------------------------------------------------------------

def log_ratio_band(p: tuple, q: tuple) -> tuple:
    """[lo, hi] of ln(P/Q) from bands of P and Q (inf when Q may be 0 and P > 0; -inf when P may be 0)."""
    (plo, phi), (qlo, qhi) = p, q
    if phi == 0:
        return (-mpmath.inf, -mpmath.inf)
    lo = -mpmath.inf if plo == 0 else (mpmath.inf if qhi == 0 else mpmath.log(plo / qhi))
    hi = mpmath.inf if qlo == 0 else mpmath.log(phi / qlo)
    return (lo, hi)


def achieved_band(laws: dict, pairs: list) -> tuple:
    """[lo, hi] of max over ordered pairs and outputs of ln(P(o|X)/P(o|X')) (dataset -> law)."""
    lo, hi = -mpmath.inf, -mpmath.inf
    for x, y in pairs:
        lx, ly = laws[x], laws[y]
        outs = set(_outputs(lx)) | set(_outputs(ly))
        for o in outs:
            a, b = log_ratio_band(lx.interval(o), ly.interval(o))
            lo, hi = max(lo, a), max(hi, b)
    return lo, hi


def _outputs(law: Any) -> list:
    return list(law.probs) if isinstance(law, QuadLaw) else list(law.counts)
