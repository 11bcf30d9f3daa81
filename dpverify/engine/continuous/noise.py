"""Continuous noise inside a mechanism: symbolic noisy values, branching comparisons, exact integrals.

``dp.laplace(q, b)`` returns a :class:`Noisy` value x = q + Lap(b): a handle on
a fresh noise variable, not a sample.  Adding a constant shifts it; comparing
it with a constant or another noisy value is a branch point, enumerated like a
discrete draw (both outcomes, weight 1), and the outcome taken is recorded as
a constraint -- an interval for one variable, or for the difference of two.
At the end of a run (:meth:`NoiseState.finish`) the path's probability is the
integral of the noise densities over its constraints.  For the comparisons
mechanisms make (noisy max compares each value with the running maximum; the
sparse vector technique compares each query with one noisy threshold) the
constraints form a forest, and the integral is computed exactly by
eliminating leaves: each leaf's density, restricted to its interval, is
integrated in closed form (:mod:`.piecewise`) into a function of its parent.

A run that *returns* noisy values has a density, not a probability: the
output is a skeleton with :class:`Released` markers, and its weight a
:class:`Density` -- for each released value the joint density with the
path's event, as a function of the released value, times the probability of
everything else.  Privacy of densities is checked by
:mod:`dpverify.checks.privacy.density`.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import sympy

from ...errors import NotRational, SpecError
from . import piecewise as pw
from ..program.enumerate import LAWS, Runner, Session
from .noisy import FULL, Density, Factor, Interval, Noise, Noisy, NoisyLinear, Released, exact


@dataclass(frozen=True)
class _Outcome:
    """The two outcomes of a comparison, enumerated like a draw; the weight comes at the leaf."""

    name: str = "comparison"


def _outcomes(law: _Outcome, session: Session) -> list:
    one = session.backend.num(1)
    return [(True, one), (False, one)]


LAWS[_Outcome] = _outcomes

_OUTCOME = _Outcome()


def _outcome() -> _Outcome:
    """The law of every comparison (one shared instance: a comparison is drawn millions of times)."""
    return _OUTCOME


_ZERO = Fraction(0)


def _meet(a: Interval, b: Interval) -> Interval:
    lo = b[0] if a[0] is None else a[0] if b[0] is None else max(a[0], b[0])
    hi = b[1] if a[1] is None else a[1] if b[1] is None else min(a[1], b[1])
    return (lo, hi)


def _empty(interval: Interval) -> bool:
    lo, hi = interval
    return lo is not None and hi is not None and lo >= hi


class NoiseState:
    """The noise variables of one run and the constraints its comparisons took."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.variables: list[Noise] = []
        self.unary: list[Interval] = []
        self.edges: dict[tuple[int, int], Interval] = {}
        self.root: list[int] = []
        self.comparable: set[int] = set()  # the variables :meth:`_comparable` accepted

    def add(self, noise: Noise) -> Noisy:
        self.variables.append(noise)
        self.unary.append(noise.support())
        self.root.append(len(self.root))
        return Noisy(self, len(self.variables) - 1, _ZERO)

    def _find(self, i: int) -> int:
        while self.root[i] != i:
            self.root[i] = self.root[self.root[i]]
            i = self.root[i]
        return i

    def compare(self, a: Noisy, b: Any, greater: bool, strict: bool = True) -> bool:
        """Whether a > b (greater) or a < b -- or a >= b, a <= b when not strict -- as a branch of the
        enumeration.  Two sides on one noise variable differ by their offsets alone, so that comparison is
        decided by the offsets, ties included (x >= x holds); any other tie has probability zero."""
        if a.state is not self:
            raise SpecError("a noisy value was used outside the run that drew it",
                            "do not keep noisy values between runs of a mechanism")
        if a.var not in self.comparable:
            self._comparable(a)
        if type(b) is Noisy:  # Noisy has no subclasses; a handle's __class__ is guarded, type() is not
            if b.state is not self:
                raise SpecError("a noisy value was used outside the run that drew it",
                                "do not keep noisy values between runs of a mechanism")
            if b.var not in self.comparable:
                self._comparable(b)
            if b.var == a.var:
                if a.offset == b.offset:
                    return not strict
                return (a.offset > b.offset) == greater
            i, j = (a.var, b.var) if a.var < b.var else (b.var, a.var)
            # a > b  <=>  x_a - x_b > b.offset - a.offset, written on x_i - x_j with i < j
            d = b.offset - a.offset if b.offset is not a.offset else _ZERO  # (one shared zero: x - x is 0)
            if i != a.var:
                d, greater = -d, not greater
            current = self.edges.get((i, j))
            if current is None:
                root_i, root_j = self._find(i), self._find(j)
                if root_i == root_j:
                    raise SpecError("the comparisons between noisy values form a cycle, which exact integration "
                                    "does not support",
                                    "compare each noisy value with one running value (noisy max) or with one "
                                    "noisy threshold (sparse vector), as the standard mechanisms do")
                chosen = self._branch(FULL, d, greater)
                self.root[root_i] = root_j  # (_branch does not touch the forest)
            else:
                chosen = self._branch(current, d, greater)
            self.edges[(i, j)] = chosen[0]
            return chosen[1]
        d = exact(b, "the value compared with a noisy value", "comparison")
        if not isinstance(d, Fraction):
            raise SpecError(f"a noisy value was compared with {b!r}, which is not an exact rational",
                            "compare noisy values with exact rationals")
        chosen = self._branch(self.unary[a.var], d - a.offset, greater)
        self.unary[a.var] = chosen[0]
        return chosen[1]

    def _comparable(self, value: Noisy) -> None:
        noise = self.variables[value.var]
        if noise.kind == "gaussian":
            raise SpecError("a Gaussian noisy value was compared: exact integration covers Laplace and "
                            "exponential noise only",
                            "use dp.laplace for noise that the mechanism compares; Gaussian noise is supported "
                            "for released values")
        if not noise.rational:  # symbolic scales are integrated at the end, if they can be
            symbolic = getattr(noise.scale, "free_symbols", None) and isinstance(noise.centre, Fraction)
            if not symbolic:
                raise _not_rational(noise)
        self.comparable.add(value.var)

    def _branch(self, current: Interval, d: Fraction, greater: bool) -> tuple[Interval, bool]:
        if current[0] is None and current[1] is None:  # nothing known yet: both sides possible, no meet needed
            above, below = (d, None), (None, d)
        else:
            above, below = _meet(current, (d, None)), _meet(current, (None, d))
            if _empty(below):
                return above, greater
            if _empty(above):
                return below, not greater
        outcome = self.runner.draw(_outcome)
        return (above if outcome == greater else below), outcome

    # -- the end of a run -------------------------------------------------------------

    def finish(self, output: Any, weight: Any, session: Session) -> tuple[Any, Any]:
        """The run's output and weight: the probability times the integral of its event, or a density."""
        released: list = []
        skeleton = _skeleton(output, released)
        factors: list[Optional[Factor]] = [None] * len(released)
        components: dict[int, list[int]] = {}
        for var in range(len(self.variables)):
            components.setdefault(self._find(var), []).append(var)
        simple: dict[int, int] = {}
        differences: dict[int, tuple[int, int]] = {}
        linear_vars: set = set()
        for group in _linear_groups(released):
            forms = [NoisyLinear.of(released[k]) for k in group]
            if len(group) == 1 and isinstance(released[group[0]], Noisy):
                simple[group[0]] = released[group[0]].var
                continue
            edge = self._edge_difference(forms[0]) if len(group) == 1 else None
            if edge is not None:
                differences[group[0]] = edge
                continue
            for k, factor in zip(group, self._linear(group, forms, session)):
                factors[k] = factor
            linear_vars |= {v for form in forms for v in form.coefficients}
        taken = set(simple.values()) | linear_vars | {v for edge in differences.values() for v in edge}
        for k, (i, j) in differences.items():
            members = components[self._find(i)]
            joint = sum(1 for m in members if m in taken) > 2
            factors[k] = self._difference(released[k], i, j, joint, session)
        for k, var in simple.items():
            members = components[self._find(var)]
            joint = sum(1 for m in members if m in taken) > 1 or list(simple.values()).count(var) > 1
            factors[k] = self._factor(released[k], members, joint, session)
        for members in components.values():
            if any(m in taken for m in members) or not self._constrained(members):
                continue
            weight = weight * self._probability(members, session)
        if not released:
            return skeleton, weight
        return skeleton, Density([(weight, tuple(factors))])

    def _edge_difference(self, form: NoisyLinear) -> Optional[tuple[int, int]]:
        """(i, j) when the form is x_i - x_j + c for two values that were compared with each other."""
        if len(form.coefficients) != 2 or sorted(form.coefficients.values()) != [-1, 1]:
            return None
        i = next(v for v, c in form.coefficients.items() if c == 1)
        j = next(v for v, c in form.coefficients.items() if c == -1)
        return (i, j) if tuple(sorted((i, j))) in self.edges else None

    def _difference(self, form: NoisyLinear, i: int, j: int, joint: bool, session: Session) -> Factor:
        """The density of a released gap g = x_i - x_j (+ c) along a comparison edge, with its event.

        Cutting the tree at the edge leaves two independent parts: A(r), x_j's density times its
        side's integrals, and B(s), x_i's side likewise; g has density int A(r) B(r + g) dr on the
        edge's interval (the comparisons between x_i and x_j) -- a correlation, in closed form."""
        if joint:
            return Factor(None, form.offset, FULL, joint=True)
        for v in (i, j):
            if not self.variables[v].rational:
                raise _not_rational(self.variables[v])
        backend = session.backend
        lo, hi = self.edges[tuple(sorted((i, j)))]
        if i > j:  # the edge holds x_j - x_i
            lo, hi = (None if hi is None else -hi), (None if lo is None else -lo)
        gap = pw.correlate(self._function(j, i, session), self._function(i, j, session), backend)
        function = pw.shift(pw.restrict(gap, lo, hi), -form.offset, backend)
        return Factor(None, form.offset, FULL, function)

    def _linear(self, group: list[int], forms: list, session: Session) -> list[Factor]:
        """Factors for released sums y = A x + o of Laplace values x that nothing compared.

        With w = A^-1 y (a bijection fixed by the program, not by the data), w_k = x_k + (A^-1 o)_k:
        independent Laplace values with centres nu = mu + A^-1 o, whose densities are the factors."""
        variables = sorted({v for form in forms for v in form.coefficients})
        file, line = self.variables[variables[-1]].site or (None, None)
        for v in variables:
            noise = self.variables[v]
            if noise.kind != "laplace" or self.unary[v] != noise.support() or self._find(v) != v or any(
                    v in edge for edge in self.edges):
                raise SpecError("a released sum of noisy values involves a value that was also compared (or is "
                                "not Laplace noise); its density is not supported",
                                "release sums of fresh Laplace values, or the compared values themselves",
                                file=file, line=line)
        if len(variables) != len(forms):
            raise SpecError(f"{len(forms)} released sums of {len(variables)} noisy values have no joint density "
                            "(the map from noise to outputs must be invertible)",
                            "release as many independent sums as there are noise values", file=file, line=line)
        matrix = [[form.coefficients.get(v, Fraction(0)) for v in variables] for form in forms]
        inverse = _inverse(matrix)
        if inverse is None:
            raise SpecError("the released sums of noisy values are linearly dependent: no joint density",
                            "release linearly independent sums", file=file, line=line)
        offsets = [form.offset for form in forms]
        mix = (tuple(group), tuple(tuple(row) for row in matrix))
        factors = []
        for i, v in enumerate(variables):
            noise = self.variables[v]
            shift = sum((inverse[i][j] * offsets[j] for j in range(len(forms))), Fraction(0))
            virtual = Noise("laplace", noise.centre + shift, noise.scale, site=noise.site)
            function = virtual.density(session.backend) if virtual.rational else None
            factors.append(Factor(virtual, Fraction(0), FULL, function, mix=mix))
        return factors

    def _constrained(self, members: list[int]) -> bool:
        return len(members) > 1 or self.unary[members[0]] != self.variables[members[0]].support()

    def _factor(self, value: Noisy, members: list[int], joint: bool, session: Session) -> Factor:
        noise = self.variables[value.var]
        single = noise if len(members) == 1 else None
        interval = self.unary[value.var] if single is not None else FULL
        if joint:
            return Factor(single, value.offset, interval, joint=True)
        if noise.kind == "gaussian" or not all(self.variables[m].rational for m in members):
            symbolic = getattr(noise.scale, "free_symbols", None) or getattr(noise.centre, "free_symbols", None)
            if single is None or (noise.kind != "gaussian" and not symbolic):
                raise _not_rational(noise)  # an irrational Laplace scale: no exact breakpoints and rates
            return Factor(single, value.offset, interval)
        function = pw.shift(self._function(value.var, None, session), -value.offset, session.backend)
        return Factor(single, value.offset, interval, function)

    def _probability(self, members: list[int], session: Session) -> Any:
        if len(members) == 1 and not self.variables[members[0]].rational:
            return _interval_probability(self.variables[members[0]], self.unary[members[0]])
        for m in members:
            if not self.variables[m].rational:
                raise _not_rational(self.variables[m])
        root = members[0]
        key = ("noise-integral", self._key(root, None))
        cached = session.cache.get(key)
        if cached is None:
            cached = session.cache[key] = pw.integral(self._function(root, None, session), session.backend)
        return cached

    def _neighbours(self, node: int) -> list[tuple[int, Interval]]:
        """(other, interval of x_other - x_node) for each edge at ``node``."""
        out = []
        for (i, j), (lo, hi) in self.edges.items():
            if i == node:
                out.append((j, (None if hi is None else -hi, None if lo is None else -lo)))
            elif j == node:
                out.append((i, (lo, hi)))
        return out

    def _key(self, node: int, parent: Optional[int]) -> Any:
        children = sorted(((self._key(child, node), interval) for child, interval in self._neighbours(node)
                           if child != parent), key=repr)
        return (self.variables[node], self.unary[node], tuple(children))

    def _function(self, node: int, parent: Optional[int], session: Session) -> pw.Piecewise:
        """x_node -> its density on its interval times the integrals of its subtrees (away from parent)."""
        key = ("noise-function", self._key(node, parent))
        cached = session.cache.get(key)
        if cached is not None:
            return cached
        backend = session.backend
        lo, hi = self.unary[node]
        f = pw.restrict(self.variables[node].density(backend), lo, hi)
        for child, (a, b) in self._neighbours(node):
            if child == parent:
                continue
            f = pw.multiply(f, pw.window_integral(self._function(child, node, session), a, b, backend))
        session.cache[key] = f
        return f


def _interval_probability(noise: Noise, interval: Interval) -> Any:
    """P[x in interval] for one noise value, in closed form with a symbolic scale (the symbolic reading).

    With eps a symbol the scale is an expression in eps, and F(t) is 1/2 e^((t - mu)/b) or
    1 - 1/2 e^(-(t - mu)/b): exponentials of eps times rationals, as the proofs for every eps need.
    Only comparisons with constants reach here (a single value); comparisons between values do not."""
    mu, b = noise.centre, noise.scale
    if noise.kind == "gaussian" or getattr(mu, "free_symbols", None) or not isinstance(mu, Fraction):
        raise _not_rational(noise)
    centre = sympy.Rational(mu.numerator, mu.denominator)

    def cdf(t: Optional[Fraction], at_none: int) -> Any:
        if t is None:
            return sympy.Integer(at_none)
        x = sympy.Rational(t.numerator, t.denominator) - centre
        if noise.kind == "exponential":
            return sympy.Integer(0) if x <= 0 else 1 - sympy.exp(-x / b)
        return sympy.exp(x / b) / 2 if x < 0 else 1 - sympy.exp(-x / b) / 2
    lo, hi = interval
    return sympy.expand(cdf(hi, 1) - cdf(lo, 0))


def _not_rational(noise: Noise) -> Exception:
    symbols = frozenset(getattr(noise.scale, "free_symbols", ())) | frozenset(getattr(noise.centre, "free_symbols", ()))
    if symbols:
        return NotRational("probabilities that integrate Laplace or exponential noise over comparisons involve "
                           "eps outside exponentials", frozenset(symbols))
    file, line = noise.site or (None, None)
    return SpecError(f"noise {noise.describe()} has an irrational centre or scale, which exact integration "
                     "cannot use", "make noise scales and query answers exact rationals at every grid point",
                     file=file, line=line)


def _linear_groups(released: list) -> list[list[int]]:
    """Indices of released values, grouped by shared noise variables (transitively)."""
    owner: dict[int, int] = {}
    parent = list(range(len(released)))

    def find(k: int) -> int:
        while parent[k] != k:
            k = parent[k]
        return k
    for k, value in enumerate(released):
        for var in NoisyLinear.of(value).coefficients:
            if var in owner:
                parent[find(k)] = find(owner[var])
            else:
                owner[var] = k
    groups: dict[int, list[int]] = {}
    for k in range(len(released)):
        groups.setdefault(find(k), []).append(k)
    return list(groups.values())


def _inverse(matrix: list[list[Fraction]]) -> Optional[list[list[Fraction]]]:
    """The exact inverse of a square rational matrix (Gauss-Jordan), or None when singular."""
    n = len(matrix)
    rows = [list(row) + [Fraction(int(i == j)) for j in range(n)] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if rows[r][col] != 0), None)
        if pivot is None:
            return None
        rows[col], rows[pivot] = rows[pivot], rows[col]
        head = rows[col][col]
        rows[col] = [x / head for x in rows[col]]
        for r in range(n):
            if r != col and rows[r][col] != 0:
                factor = rows[r][col]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col])]
    return [row[n:] for row in rows]


def _skeleton(output: Any, released: list) -> Any:
    if isinstance(output, (Noisy, NoisyLinear)):
        released.append(output)
        return Released(len(released) - 1)
    if isinstance(output, tuple) and any(isinstance(item, (Noisy, NoisyLinear, tuple)) for item in output):
        return tuple(_skeleton(item, released) for item in output)
    return output


def state(runner: Runner) -> NoiseState:
    """The active run's noise state (created on first use)."""
    if runner.noise is None:
        runner.noise = NoiseState(runner)
    return runner.noise
