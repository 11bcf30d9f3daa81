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
:mod:`dpverify.checks.privacy_density`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional

import sympy

from ..errors import NotRational, SpecError
from . import piecewise as pw
from .enumerate import Runner, Session

Interval = tuple  # (lo, hi), None for an unbounded side; an open interval of the real line

FULL: Interval = (None, None)
KINDS = ("laplace", "exponential", "gaussian")


class NeedsExactParameters(Exception):
    """A noise primitive got a parameter as an interval: rerun the program with exact parameters."""


def exact(value: Any, what: str, fn: str) -> Any:
    """An exact rational as a Fraction; a symbolic or irrational sympy number as itself.

    Interval numbers (the certified reading's parameters) cannot say which
    rational they are, so they ask for a rerun with exact parameters.
    """
    if isinstance(value, bool):
        raise SpecError(f"{fn}: {what}={value!r} is a bool", f"pass a number as {what}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, Fraction):
        return value
    if isinstance(value, float):
        from .backend import exact_float
        return exact_float(value)
    if isinstance(value, sympy.Basic):
        return Fraction(int(value.p), int(value.q)) if isinstance(value, sympy.Rational) else value
    if isinstance(value, Noisy):
        raise SpecError(f"{fn}: {what} is itself a noisy value", "noise is added to exact query answers only")
    if type(value).__name__ in ("ivmpf", "mpf"):
        raise NeedsExactParameters()
    raise SpecError(f"{fn}: {what}={value!r} is not a number", f"pass an exact number as {what}")


@dataclass(frozen=True)
class Noise:
    """A noise variable's law: its value x = centre + Z, Z ~ Laplace(scale), Exp(scale) or N(0, scale^2)."""

    kind: str
    centre: Any
    scale: Any
    site: Optional[tuple] = field(default=None, compare=False, hash=False, repr=False)  # (file, line) of the call

    @property
    def rational(self) -> bool:
        return isinstance(self.centre, Fraction) and isinstance(self.scale, Fraction)

    def support(self) -> Interval:
        return (self.centre, None) if self.kind == "exponential" else FULL

    def density(self, backend: Any) -> pw.Piecewise:
        """The density of x as a piecewise exponential (Laplace and exponential noise)."""
        mu, b = self.centre, self.scale
        rate = 1 / b
        if self.kind == "laplace":
            c = backend.num(1 / (2 * b))
            return pw.Piecewise((mu,), ({(rate, 0): c * backend.exp(-mu * rate)},
                                        {(-rate, 0): c * backend.exp(mu * rate)}))
        if self.kind == "exponential":
            return pw.Piecewise((mu,), ({}, {(-rate, 0): backend.num(rate) * backend.exp(mu * rate)}))
        raise AssertionError(self.kind)

    def describe(self) -> str:
        name = {"laplace": "Lap", "exponential": "Exp", "gaussian": "N"}[self.kind]
        return f"{self.centre} + {name}({self.scale})"


@dataclass(frozen=True)
class Released:
    """Marks, in an output skeleton, the k-th noisy value a mechanism returned."""

    index: int

    def __repr__(self) -> str:
        return f"v{self.index}"


@dataclass(frozen=True)
class Factor:
    """The density of one released value v = x + offset jointly with the path's event.

    ``function``: a piecewise exponential in v (Laplace/exponential noise);
    ``mix``: set when released values are sums of noise variables -- then the factor is the
    density of one coordinate w_k of w = A^-1 y (a bijection that does not depend on the data,
    so density ratios are the same in y and in w);
    ``noise``/``interval``: the single variable's law and the interval it was
    restricted to, when the component has no other variable (the symbolic
    reading uses these); ``joint``: the value's component holds another
    released value, so it has no one-dimensional density (unsupported).
    """

    noise: Optional[Noise]
    offset: Any
    interval: Interval
    function: Optional[pw.Piecewise] = None
    joint: bool = False
    mix: Optional[tuple] = None  # (slots, A): released sums y = A w of independent values w (see _linear)


@dataclass
class Density:
    """A weight that is a density: sum over paths of constant * prod_k factor_k(v_k)."""

    terms: list = field(default_factory=list)  # [(constant, (Factor, ...))]

    def __add__(self, other: "Density") -> "Density":
        return Density(self.terms + other.terms)

    def mass(self, backend: Any) -> Any:
        """The total probability of the output, or None when a factor has no one-dimensional density."""
        total = backend.num(0)
        for constant, factors in self.terms:
            for factor in factors:
                if factor.joint:
                    return None
                if factor.function is not None:
                    constant = constant * pw.integral(factor.function, backend)
                elif factor.interval != FULL:
                    return None
            total = total + constant
        return total

    def symbolic_key(self) -> Any:
        """A hashable key for exact (sympy) weights, whose factors carry no functions."""
        return tuple((c, tuple((f.noise, f.offset, f.interval, f.joint, f.mix) for f in factors))
                     for c, factors in self.terms)

    def key(self, backend: Any) -> Any:
        return tuple((backend.key(c), tuple((f.noise, f.offset, f.interval, f.joint, f.mix,
                                             _pw_key(f.function, backend)) for f in factors))
                     for c, factors in self.terms)


def _pw_key(f: Optional[pw.Piecewise], backend: Any) -> Any:
    if f is None:
        return None
    return (f.cuts, tuple(tuple(sorted((k, backend.key(v)) for k, v in piece.items())) for piece in f.pieces))


class Noisy:
    """x + offset for the noise variable x of index ``var`` in the current run."""

    __slots__ = ("state", "var", "offset")

    def __init__(self, state: "NoiseState", var: int, offset: Any) -> None:
        self.state, self.var, self.offset = state, var, offset

    def __add__(self, other: Any) -> Any:
        if isinstance(other, (Noisy, NoisyLinear)):
            return NoisyLinear.of(self) + other
        return Noisy(self.state, self.var, self.offset + self._constant(other, "+"))

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        if isinstance(other, (Noisy, NoisyLinear)):
            return NoisyLinear.of(self) - other
        return Noisy(self.state, self.var, self.offset - self._constant(other, "-"))

    def _constant(self, other: Any, op: str) -> Any:
        value = exact(other, "the constant", f"noisy value {op}")
        if not isinstance(value, Fraction):
            raise SpecError(f"noisy value {op} {other!r}: the constant must be an exact rational",
                            "shift noisy values by exact rationals only")
        return value

    def _unsupported(self, *_: Any) -> Any:
        raise SpecError("this arithmetic on a noisy value is not supported (only + and - of exact constants, "
                        "and comparisons)",
                        "release the noisy value itself, or compare it; scale the exact answer before adding "
                        "noise instead of scaling the noisy value")

    __mul__ = __rmul__ = __truediv__ = __rtruediv__ = __neg__ = __abs__ = __rsub__ = _unsupported
    __float__ = __int__ = __round__ = __floor__ = __ceil__ = _unsupported

    def __bool__(self) -> bool:
        raise SpecError("a noisy value was used as a truth value", "compare it with something: `if x > t:`")

    def __gt__(self, other: Any) -> bool:
        return self.state.compare(self, other, greater=True)

    __ge__ = __gt__  # ties have probability zero

    def __lt__(self, other: Any) -> bool:
        return self.state.compare(self, other, greater=False)

    __le__ = __lt__

    def __eq__(self, other: Any) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        noise = self.state.variables[self.var]
        return f"noisy({noise.describe()}{f' + {self.offset}' if self.offset else ''})"


class NoisyLinear:
    """sum_k c_k x_k + offset over noise variables x_k: a sum of noisy values (a running sum, a prefix
    sum).  It may be shifted, added to and released, not compared: its density is exact when the
    released sums are an invertible linear map of uncompared Laplace values."""

    __slots__ = ("state", "coefficients", "offset")

    def __init__(self, state: "NoiseState", coefficients: dict, offset: Any) -> None:
        self.state, self.coefficients, self.offset = state, coefficients, offset

    @staticmethod
    def of(value: Any) -> "NoisyLinear":
        if isinstance(value, NoisyLinear):
            return value
        return NoisyLinear(value.state, {value.var: Fraction(1)}, value.offset)

    def _combine(self, other: Any, sign: int) -> "NoisyLinear":
        if isinstance(other, (Noisy, NoisyLinear)):
            other = NoisyLinear.of(other)
            if other.state is not self.state:
                raise SpecError("noisy values of different runs were added", "add noisy values of one run only")
            coefficients = dict(self.coefficients)
            for var, c in other.coefficients.items():
                coefficients[var] = coefficients.get(var, 0) + sign * c
            return NoisyLinear(self.state, {v: c for v, c in coefficients.items() if c}, self.offset + sign * other.offset)
        value = exact(other, "the constant", "sum of noisy values")
        if not isinstance(value, Fraction):
            raise SpecError(f"a sum of noisy values shifted by {other!r}: the constant must be an exact rational",
                            "shift noisy values by exact rationals only")
        return NoisyLinear(self.state, dict(self.coefficients), self.offset + sign * value)

    def __add__(self, other: Any) -> "NoisyLinear":
        return self._combine(other, 1)

    __radd__ = __add__

    def __sub__(self, other: Any) -> "NoisyLinear":
        return self._combine(other, -1)

    def _refuse(self, *_: Any) -> Any:
        raise SpecError("a sum of noisy values can be released, not compared or used in arithmetic "
                        "beyond + and - (exact integration covers comparisons of single noisy values)",
                        "compare the noisy values themselves, or release the sum")

    __gt__ = __ge__ = __lt__ = __le__ = __mul__ = __rmul__ = __truediv__ = __neg__ = __abs__ = _refuse
    __rsub__ = __float__ = __int__ = __bool__ = _refuse

    def __eq__(self, other: Any) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        terms = " + ".join(f"{c}*x{v}" for v, c in sorted(self.coefficients.items()))
        return f"noisy({terms}{f' + {self.offset}' if self.offset else ''})"


@dataclass(frozen=True)
class _Outcome:
    """The two outcomes of a comparison, enumerated like a draw; the weight comes at the leaf."""

    name: str = "comparison"

    def branches(self, session: Session) -> list:
        one = session.backend.num(1)
        return [(True, one), (False, one)]


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

    def add(self, noise: Noise) -> Noisy:
        self.variables.append(noise)
        self.unary.append(noise.support())
        self.root.append(len(self.root))
        return Noisy(self, len(self.variables) - 1, Fraction(0))

    def _find(self, i: int) -> int:
        while self.root[i] != i:
            self.root[i] = self.root[self.root[i]]
            i = self.root[i]
        return i

    def compare(self, a: Noisy, b: Any, greater: bool) -> bool:
        """Whether a > b (greater) or a < b, as a branch of the enumeration."""
        if a.state is not self:
            raise SpecError("a noisy value was used outside the run that drew it",
                            "do not keep noisy values between runs of a mechanism")
        self._comparable(a)
        if isinstance(b, Noisy):
            self._comparable(b)
            if b.var == a.var:
                return (a.offset > b.offset) == greater if a.offset != b.offset else False
            i, j = sorted((a.var, b.var))
            # a > b  <=>  x_a - x_b > b.offset - a.offset, written on x_i - x_j with i < j
            d = b.offset - a.offset
            if i != a.var:
                d, greater = -d, not greater
            if (i, j) not in self.edges and self._find(i) == self._find(j):
                raise SpecError("the comparisons between noisy values form a cycle, which exact integration "
                                "does not support",
                                "compare each noisy value with one running value (noisy max) or with one "
                                "noisy threshold (sparse vector), as the standard mechanisms do")
            current = self.edges.get((i, j), FULL)
            chosen = self._branch(current, d, greater)
            if (i, j) not in self.edges:
                self.root[self._find(i)] = self._find(j)
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
        if not noise.rational:
            raise _not_rational(noise)

    def _branch(self, current: Interval, d: Fraction, greater: bool) -> tuple[Interval, bool]:
        above, below = _meet(current, (d, None)), _meet(current, (None, d))
        if _empty(below):
            return above, greater
        if _empty(above):
            return below, not greater
        outcome = self.runner.draw(_Outcome)
        return (above if outcome == greater else below), outcome

    # -- the end of a run -------------------------------------------------------------

    def finish(self, output: Any, weight: Any, session: Session) -> tuple[Any, Any]:
        """The run's output and weight: the probability times the integral of its event, or a density."""
        released: list = []
        skeleton = _skeleton(output, released)
        factors: list[Optional[Factor]] = [None] * len(released)
        simple: dict[int, int] = {}
        linear_vars: set = set()
        for group in _linear_groups(released):
            forms = [NoisyLinear.of(released[k]) for k in group]
            if len(group) == 1 and isinstance(released[group[0]], Noisy):
                simple[group[0]] = released[group[0]].var
                continue
            for k, factor in zip(group, self._linear(group, forms, session)):
                factors[k] = factor
            linear_vars |= {v for form in forms for v in form.coefficients}
        components: dict[int, list[int]] = {}
        for var in range(len(self.variables)):
            components.setdefault(self._find(var), []).append(var)
        slots = {var: k for k, var in simple.items()}
        for k, var in simple.items():
            members = components[self._find(var)]
            joint = sum(1 for m in members if m in slots or m in linear_vars) > 1 or list(simple.values()).count(var) > 1
            factors[k] = self._factor(released[k], members, joint, session)
        for members in components.values():
            if any(m in slots or m in linear_vars for m in members) or not self._constrained(members):
                continue
            weight = weight * self._probability(members, session)
        if not released:
            return skeleton, weight
        return skeleton, Density([(weight, tuple(factors))])

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
