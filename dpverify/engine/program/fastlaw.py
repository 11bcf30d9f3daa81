"""A fast certified reading for programs that make at most one draw, from the exponential mechanism.

Summing a learner's failure probability over every multiset of a sample runs the
program millions of times; the general interval reading (:mod:`.enumerate` with
:class:`~.backend.IntervalBackend`) costs about 350 us per run at 50 digits.  Most
learners are one exponential mechanism over a finite class with exact rational
scores, and for those this module reads a run far more cheaply, still exactly:

* :func:`capture` runs the program (the same call, the same parameter objects)
  under a minimal runner that accepts exactly one kind of draw -- an exponential
  mechanism whose scores, eps and sensitivity are exact rationals -- and replays
  the program once per candidate, as the general runner does, to learn the
  output of each branch.  Anything else (another primitive, a second draw,
  continuous noise, a score that is not rational, any attribute of the runner
  other than ``draw`` and ``backend``, any exception) raises :class:`Unsupported`,
  and the caller reads that run with the general interval reading instead.  So
  the fast path is generic in the sense that it *detects* when it applies, run
  by run, and never guesses.
* The law of such a run is P(y) = e^(x_y) / sum_z e^(x_z) with exact rational
  exponents x_y = eps * u(y) / (2 Delta) (the shift by the top score of the
  general reading cancels exactly).  :class:`ExpAtoms` encloses each e^x once,
  with mpmath intervals, as [lo, hi] * 2^e with integer mantissas of ``bits``
  bits, and keeps the enclosures of one factor eps/(2 Delta) on one exact
  integer grid; :meth:`ExpAtoms.probability` then encloses a sum of them
  divided by the sum of all of them with Python integers only, rounding
  outward (floor for lower ends, ceiling for upper ends).  The result is an
  integer interval [q_lo, q_hi] with q_lo / 2^S <= P(event) <= q_hi / 2^S.

Nothing here compares floats; every bound is an exact integer inequality.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from fractions import Fraction
from typing import Any, Optional

import sympy
from mpmath.ctx_iv import MPIntervalContext

from ...dsl.laws import Exponential
from .run import ACTIVE


class Unsupported(Exception):
    """This run is not of the one-exponential-draw form: read it with the general reading."""


def rational(value: Any) -> Optional[Fraction]:
    """``value`` as an exact Fraction when it certainly is one, else None.

    ints, Fractions and sympy Rationals are exact; an mpmath interval is accepted
    only when it is a single point (its two ends are the same binary number, so
    the value is exactly that number).  Floats are refused (the general reading
    decides whether a float is exact and says so when it is not).
    """
    if type(value) is Fraction:
        return value
    if isinstance(value, bool):
        return Fraction(int(value))
    if isinstance(value, (int, Fraction)):
        return Fraction(value)
    if isinstance(value, sympy.Rational):
        return Fraction(int(value.p), int(value.q))
    ends = getattr(value, "_mpi_", None)
    if ends is not None and ends[0] == ends[1]:
        sign, man, exp, _ = ends[0]
        man = int(man)
        if man == 0 and exp != 0:  # inf and nan are encoded with a zero mantissa
            return None
        magnitude = Fraction(man << exp) if exp >= 0 else Fraction(man, 1 << -exp)
        return -magnitude if sign else magnitude
    return None


class ExpAtoms:
    """Certified enclosures of e^x for exact rationals x, computed once each, and shares of their sums.

    ``bits``: the mantissa length of each enclosure (its relative width is about
    2^-bits); ``scale``: the S of the shares' results q / 2^S (their absolute
    error is about 2^-scale).
    """

    def __init__(self, bits: int, scale: int) -> None:
        self.bits, self.scale = bits, scale
        self.ctx = MPIntervalContext()
        self.ctx.prec = bits + 30
        self._atoms: dict[Hashable, tuple[int, int, int]] = {}
        self._aligned: dict[Hashable, tuple[int, int]] = {}
        self._groups: dict[Hashable, list] = {}

    def atom(self, key: Hashable, x: Callable[[], Fraction]) -> tuple[int, int, int]:
        """(lo, hi, e) with lo * 2^e <= e^x() <= hi * 2^e, cached under ``key``."""
        found = self._atoms.get(key)
        if found is None:
            found = self._atoms[key] = self._enclose(x())
        return found

    def _enclose(self, x: Fraction) -> tuple[int, int, int]:
        ctx = self.ctx
        value = ctx.exp(ctx.mpf(x.numerator) / ctx.mpf(x.denominator))
        (sa, ma, ea, _), (sb, mb, eb, bcb) = value._mpi_
        if sa or sb or not ma or not mb:  # e^x > 0; anything else is not a usable enclosure
            raise Unsupported(f"no positive enclosure of exp({x})")
        e = eb + bcb - self.bits
        lo = ma << (ea - e) if ea >= e else ma >> (e - ea)           # floor
        hi = mb << (eb - e) if eb >= e else -((-mb) >> (e - eb))     # ceiling
        return int(lo), int(hi), e

    def probability(self, exponent: "Exponent", chosen: list) -> tuple[int, int]:
        """[q_lo, q_hi] / 2^S enclosing the probability of the ``chosen`` candidates of one exponential draw.

        The enclosures of one draw's e^x share the factor eps/(2 Delta), and across runs they
        are kept on one exact grid per factor (:meth:`_aligned_all`), so a run costs a few integer
        sums and two divisions; a factor whose exponents spread over more than SPREAD bits
        uses :meth:`share`, which rounds onto a grid chosen per run.
        """
        if not chosen:
            return 0, 0
        if len(chosen) == len(exponent.keys):
            one = 1 << self.scale
            return one, one
        cache = self._aligned
        found = [cache.get(key) for key in exponent.keys]
        if None in found:
            found = self._aligned_all(exponent)
            if found is None:
                return self.share(atoms_of(exponent, self), chosen)
        den_lo = den_hi = num_lo = num_hi = 0
        for lo, hi in found:
            den_lo += lo
            den_hi += hi
        for i in chosen:
            lo, hi = found[i]
            num_lo += lo
            num_hi += hi
        q_lo = (num_lo << self.scale) // den_hi
        q_hi = -((-(num_hi << self.scale)) // den_lo)
        return q_lo, min(q_hi, 1 << self.scale)  # a share of a sum of positive terms is at most 1

    SPREAD = 4096
    """The largest spread (in bits) of the exponents of one factor kept on one exact grid."""

    def _aligned_all(self, exponent: "Exponent") -> Optional[list]:
        """Each candidate's enclosure as exact integers (L, H) on its factor's grid 2^base:
        L 2^base <= e^x <= H 2^base.  None when the factor's exponents spread too far."""
        factor, values = exponent.values
        head = exponent.keys[0][0]
        group = self._groups.get(head)
        for key, value in zip(exponent.keys, values):
            if key in self._aligned:
                continue
            lo, hi, e = self.atom(key, lambda: factor * value)
            if group is None:
                group = self._groups[head] = [e - 256, e, []]  # [base, highest e, keys on the grid]
            base, top, keys = group
            top = group[1] = max(top, e)
            if e < base:  # a smaller atom than any before: move the whole grid down (exact shifts)
                shift = base - e + 256
                base = group[0] = base - shift
                for old in keys:
                    a, b = self._aligned[old]
                    self._aligned[old] = (a << shift, b << shift)
            if top - base > self.SPREAD:
                return None
            self._aligned[key] = (lo << (e - base), hi << (e - base))
            keys.append(key)
        return [self._aligned[key] for key in exponent.keys]

    def share(self, atoms: list, chosen: list) -> tuple[int, int]:
        """[q_lo, q_hi] with q_lo / 2^S <= sum(chosen) / sum(atoms) <= q_hi / 2^S.

        ``atoms`` are every candidate's (lo, hi, e); ``chosen`` the indices of the event's.
        Each atom is first put on the common grid 2^E, E = max e - S - 8, exactly
        when it lies above the grid and rounded outward when below (its rounding
        is then below 2^-(S+8) of the total).
        """
        if not chosen:
            return 0, 0
        if len(chosen) == len(atoms):
            one = 1 << self.scale
            return one, one
        top = max(a[2] for a in atoms)
        grid = top - self.scale - 8
        lows, highs = [], []
        for lo, hi, e in atoms:
            if e >= grid:
                lows.append(lo << (e - grid))
                highs.append(hi << (e - grid))
            else:
                lows.append(lo >> (grid - e))
                highs.append(-((-hi) >> (grid - e)))
        den_lo, den_hi = sum(lows), sum(highs)
        num_lo = sum(lows[i] for i in chosen)
        num_hi = sum(highs[i] for i in chosen)
        q_lo = (num_lo << self.scale) // den_hi
        q_hi = -((-(num_hi << self.scale)) // den_lo) if den_lo > 0 else 1 << self.scale
        return q_lo, min(q_hi, 1 << self.scale)  # a share of a sum of positive terms is at most 1


class _Escape(BaseException):
    """Raised inside a run to leave it; a BaseException, so that a program's ``except Exception`` does
    not swallow it (and if a bare ``except:`` does, the runner is marked and the run is refused anyway)."""


class _Capture:
    """The runner of one program run under :func:`capture`: one exponential draw at most.

    It has only ``draw`` and ``backend``; a primitive that asks a runner for
    anything else (continuous noise keeps state on the runner) is refused, and
    the run is read by the general reading.
    """

    __slots__ = ("backend", "branches", "choice", "draws", "refused")

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.branches: Optional[list] = None
        self.choice = 0
        self.draws = 0
        self.refused: Optional[str] = None

    def __getattr__(self, name: str) -> Any:
        self._refuse(f"a primitive asked the runner for {name!r}")

    def _refuse(self, why: str) -> Any:
        self.refused = why
        raise _Escape(why)

    def draw(self, make: Callable[[], Any]) -> Any:
        self.draws += 1
        if self.draws > 1:
            self._refuse("more than one draw")
        if self.branches is None:
            primitive = make()
            if type(primitive) is not Exponential:
                self._refuse(f"a {type(primitive).__name__} draw")
            try:
                self.branches = _exponential_branches(primitive)
            except Unsupported as why:
                self._refuse(str(why))
        return self.branches[self.choice][0]


class Exponent:
    """The exact exponents x_y = eps u(y) / (2 Delta) of one exponential draw, keyed for the atom cache."""

    __slots__ = ("keys", "values")

    def __init__(self, keys: list, values: list) -> None:
        self.keys, self.values = keys, values


_FACTORS: dict = {}
"""(key of eps, key of Delta) -> (eps / (2 Delta), its key): the same pair recurs on every run."""
_LAYOUTS: dict = {}
"""candidates -> [candidate indices] per distinct value (== merges, as the general reading's branches do)."""


def _exact_key(value: Any) -> Optional[Hashable]:
    """A key equal for equal exact values of one kind (Fraction, int, point interval), else None."""
    kind = type(value)
    if kind is Fraction:
        return (value.numerator, value.denominator)
    if kind is int:
        return (value, 1)
    ends = getattr(value, "_mpi_", None)
    return ends if ends is not None and ends[0] == ends[1] else None


def _factor(eps: Any, sens: Any) -> tuple[Fraction, tuple]:
    key = (_exact_key(eps), _exact_key(sens))
    found = _FACTORS.get(key) if None not in key else None
    if found is None:
        eps, sens = rational(eps), rational(sens)
        if eps is None or sens is None:
            raise Unsupported("eps or the sensitivity is not an exact rational")
        if eps <= 0 or sens <= 0:
            raise Unsupported("eps or the sensitivity is not positive")  # the general reading says so
        factor = eps / (2 * sens)
        found = (factor, (factor.numerator, factor.denominator))
        if None not in key:
            _FACTORS[key] = found
    return found


def _exponential_branches(primitive: Exponential) -> list:
    """[(value, candidate indices, Exponent)] for the distinct candidate values, in first-seen order."""
    factor, head = _factor(primitive.eps, primitive.sensitivity)
    keys, values = [], []
    for candidate in primitive.candidates:
        score = primitive.score(candidate)
        if type(score) is not Fraction:
            score = rational(score) if not isinstance(score, float) else None
            if score is None:
                raise Unsupported("a score that is not an exact rational")
        keys.append((head, score.numerator, score.denominator))
        values.append(score)
    exponent = Exponent(keys, (factor, values))
    candidates = primitive.candidates
    layout = _LAYOUTS.get(candidates)
    if layout is None:
        index: dict = {}
        for i, candidate in enumerate(candidates):
            index.setdefault(candidate, []).append(i)
        layout = _LAYOUTS[candidates] = list(index.values())
    return [(candidates[indices[0]], indices, exponent) for indices in layout]


def capture(program: Callable[[], Any], backend: Any) -> tuple[Optional[Exponent], list]:
    """Run ``program`` (no arguments) in the one-exponential-draw form.

    Returns (None, [(output, None)]) for a program that draws nothing, else
    (exponent, [(output, candidate indices)]) with one entry per distinct
    candidate value.  Raises :class:`Unsupported` (or whatever the program raised)
    when the run is not of that form.
    """
    runner = _Capture(backend)
    token = ACTIVE.set(runner)
    try:
        output = _run(program, runner)
        if runner.branches is None:
            if runner.draws:
                raise Unsupported("a draw without branches")
            return None, [(output, None)]
        if runner.draws != 1:
            raise Unsupported("not exactly one draw")
        branches = runner.branches
        outputs = [(output, branches[0][1])]
        for choice in range(1, len(branches)):
            runner.choice, runner.draws = choice, 0
            output = _run(program, runner)
            if runner.draws != 1:
                raise Unsupported("the program made different draws on a replay")
            outputs.append((output, branches[choice][1]))
        return branches[0][2], outputs
    finally:
        ACTIVE.reset(token)


def _run(program: Callable[[], Any], runner: _Capture) -> Any:
    try:
        output = program()
    except _Escape as escape:
        raise Unsupported(str(escape)) from None
    if runner.refused is not None:  # the program swallowed the refusal
        raise Unsupported(runner.refused)
    hash(output)  # an unhashable output: the general reading reports it
    return output


def atoms_of(exponent: Exponent, atoms: ExpAtoms) -> list:
    """The enclosures (lo, hi, e) of e^(x_y) for every candidate of the draw."""
    cache = atoms._atoms
    found = [cache.get(key) for key in exponent.keys]
    if None in found:
        factor, values = exponent.values
        found = [atoms.atom(key, lambda s=s: factor * s) for key, s in zip(exponent.keys, values)]
    return found


def scaled(end: tuple, scale: int, floor: bool) -> int:
    """floor (or ceil) of the mpf ``end`` times 2^scale, exactly."""
    sign, man, exp, _ = end
    if not man:
        if exp:
            raise ArithmeticError("an infinite or undefined probability")
        return 0
    man, shift = int(man), exp + scale
    if sign:
        man = -man
    if shift >= 0:
        return man << shift
    return man >> -shift if floor else -((-man) >> -shift)


def bits_for(dps: int) -> int:
    """Mantissa bits matching ``dps`` significant digits, with a margin."""
    return math.ceil(dps * math.log2(10)) + 32
