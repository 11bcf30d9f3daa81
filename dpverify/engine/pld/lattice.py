"""Privacy loss distributions on a lattice, exactly: the T-fold composition as a polynomial power.

For an ordered pair of discrete laws (P, Q) -- a dominating pair -- the privacy loss of an
output o is ln(P(o)/Q(o)).  When the probabilities are rational functions of w = e^s (s the
largest number such that every exponential in them is e^(m s) with m an integer: for randomized
response at eps, s = eps) and every ratio P(o)/Q(o) is exactly w^k for an integer k, the loss
distribution under P is the Laurent polynomial

    F(x) = sum_k p_k x^k,   p_k = sum of P(o) over the outputs of loss k s = N_k(w) / D(w),

with N_k, D integer polynomials.  The T-fold composition's loss distribution is F^T, computed
exactly as the integer polynomial (sum_k N_k(w) x^k)^T in two variables over D(w)^T (repeated
squaring of sparse dictionaries: for randomized response 1001 terms at T = 1000).  Outputs with
Q(o) = 0 < P(o) carry an infinite loss, mass p_inf; outputs with P(o) = 0 carry none under P.

Since Q(o) = e^(-loss) P(o) for every output of finite loss, the hockey-stick divergence is

    delta(eps') = 1 - (1 - p_inf)^T + sum_{k s > eps'} [F^T]_k (1 - e^(eps' - k s)),

a sum of positive terms, evaluated in certified intervals from the exact coefficients (a
term with k s = eps' exactly is 0: ties need no decision beyond an exact sign).
Nothing here decides a claim: :mod:`dpverify.checks.composition` compares these numbers.
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional, Sequence

import sympy
from flint import fmpz_mpoly_ctx
from mpmath.libmp import fone, from_int, fzero, mpf_lt, round_ceiling, round_floor
from mpmath.libmp.libmpi import mpi_add, mpi_div, mpi_mul, mpi_pow, mpi_sub

from ..program.backend import exact_sign
from .budget import HOW, scaled

W = sympy.Symbol("w", positive=True)
MAX_TERMS = 400_000
"""The most (loss, w-degree) terms of a composed polynomial computed exactly (a counted budget)."""
MAX_PRODUCTS = 20_000_000
"""The most products of terms in one multiplication (a counted budget, checked before it starts)."""
MAX_WORK = 100_000_000
"""The most work of one composition's exact polynomial products, in units of one product of small
integers (a product of b-bit coefficients counts 1 + b/200 + (b/800)^2 units: their size grows with T),
estimated before the repeated squaring starts from the sizes and bit lengths its powers can reach
(:func:`power_work`), and counted again on the actual sizes before each multiplication."""


def _unit(bits: int) -> float:
    """Units of work of one product of two coefficients of ``bits`` bits together."""
    return 1 + bits / 200 + (bits / 800) ** 2


def power_work(terms: dict, times: int) -> float:
    """An upper estimate of the work of :func:`power` (``terms`` to the ``times``), before any product:
    the n-th power has at most min(C(n + m - 1, m - 1), (n dk + 1)(n dj + 1)) terms (m terms spanning dk
    losses and dj degrees in w) with coefficients of at most n log2(sum |c|) bits.  Stops counting once
    above the budget."""
    m = len(terms)
    if m <= 1:
        return 0.0
    dk = max(k for k, _ in terms) - min(k for k, _ in terms)
    dj = max(j for _, j in terms) - min(j for _, j in terms)
    bits1 = max(1, sum(abs(c) for c in terms.values()).bit_length())
    limit = scaled(MAX_WORK)

    def size(n: int) -> int:
        return min(math.comb(n + m - 1, m - 1), (n * dk + 1) * (n * dj + 1))
    total, result, base, n = 0.0, 0, 1, times
    while n and total <= limit:
        if n & 1:
            if result:
                total += size(result) * size(base) * _unit((result + base) * bits1)
            result += base
        n >>= 1
        if n:
            total += size(base) ** 2 * _unit(2 * base * bits1)
            base *= 2
    return total


class NotOnLattice(Exception):
    """The pair's losses are not integer multiples of one step, or too large to compose exactly
    (the reason is the message)."""


@dataclass(frozen=True)
class LatticePLD:
    """The loss distribution under P of a pair (or of a composition): the mass at loss k*step is
    (sum_j terms[(k, j)] w^j) / prod_i D_i(w)^p_i with w = e^step, ``denominators`` the pairs
    (D_i as {j: c}, p_i); ``infinite`` the pairs (exact P-mass of the outputs of infinite loss of a
    component, its number of runs), so that an infinite loss has P-probability 1 - prod (1 - m)^t."""

    step: sympy.Expr
    terms: dict
    denominators: tuple
    infinite: tuple
    cache: dict = field(default_factory=dict, compare=False, repr=False)  # masses per precision

    def compose(self, times: int) -> "LatticePLD":
        """The ``times``-fold composition (refuses beyond MAX_TERMS terms or MAX_WORK, estimated before the
        first product: :class:`NotOnLattice`)."""
        work = power_work(self.terms, times)
        if work > scaled(MAX_WORK):
            raise NotOnLattice(f"the exact lattice composition of {len(self.terms)} terms {times:,} times needs about "
                               f"{work:.3g} units of work (more than the budget of {scaled(MAX_WORK):.3g}; {HOW})")
        return LatticePLD(self.step, power(self.terms, times), tuple((d, p * times) for d, p in self.denominators),
                          tuple((m, t * times) for m, t in self.infinite))

    def losses(self) -> list[int]:
        """The distinct finite losses, in units of ``step``, in increasing order."""
        return sorted({k for k, _ in self.terms})


def combine(plds: Sequence[LatticePLD]) -> LatticePLD:
    """The composition of different pairs' distributions (each possibly composed already): every
    step is brought to their gcd (w_i = w^(s_i / s)), the polynomials multiplied."""
    steps = [Fraction(int(p.step.p), int(p.step.q)) for p in plds if p.step != 0]
    common = Fraction(math.gcd(*(f.numerator for f in steps)), math.lcm(*(f.denominator for f in steps))) \
        if steps else Fraction(0)
    terms: Optional[dict] = None
    denominators: list = []
    infinite: list = []
    for pld in plds:
        m = int(Fraction(int(pld.step.p), int(pld.step.q)) / common) if pld.step != 0 else 1
        scaled = {(k * m, j * m): c for (k, j), c in pld.terms.items()}
        terms = scaled if terms is None else _multiply(terms, scaled)
        denominators += [({j * m: c for j, c in d.items()}, p) for d, p in pld.denominators]
        infinite += list(pld.infinite)
    return LatticePLD(sympy.Rational(common.numerator, common.denominator), terms or {(0, 0): 1},
                      tuple(denominators), tuple(infinite))


def _exponents(expr: sympy.Expr) -> list[Fraction]:
    found = [a.args[0] for a in expr.atoms(sympy.exp)]
    if expr.atoms(sympy.core.numbers.Exp1):
        found.append(sympy.Integer(1))
    out = []
    for a in found:
        if not a.is_Rational:
            raise NotOnLattice(f"the probabilities contain e^({a}), whose exponent is not rational")
        out.append(Fraction(int(a.p), int(a.q)))
    return out


def _step(masses: Sequence[sympy.Expr]) -> Optional[Fraction]:
    """The gcd of every exponent of e in ``masses`` (None when there is none)."""
    exps = [abs(e) for m in masses for e in _exponents(m) if e != 0]
    if not exps:
        return None
    num = math.gcd(*(e.numerator for e in exps))
    den = math.lcm(*(e.denominator for e in exps))
    return Fraction(num, den)


def _in_w(expr: sympy.Expr, step: Optional[Fraction]) -> tuple[sympy.Poly, sympy.Poly]:
    """``expr`` as (numerator, denominator) polynomials in w with rational coefficients."""
    if step is not None:
        s = sympy.Rational(step.numerator, step.denominator)
        expr = expr.replace(lambda e: isinstance(e, sympy.exp), lambda e: W ** int(e.args[0] / s))
        expr = expr.xreplace({sympy.E: W ** int(1 / s)})  # e itself (sympy writes exp(1) as E)
    num, den = sympy.fraction(sympy.cancel(sympy.together(expr)))
    try:
        return sympy.Poly(num, W, domain=sympy.QQ), sympy.Poly(den, W, domain=sympy.QQ)
    except (sympy.PolificationFailed, sympy.CoercionFailed, sympy.GeneratorsNeeded) as exc:
        raise NotOnLattice(f"the probability {expr} is not a rational function of e^s ({exc})") from None


def _monomial_degree(num: sympy.Poly, den: sympy.Poly) -> Optional[int]:
    """k when num/den is exactly w^k, else None."""
    g = num.gcd(den)
    nt, dt = num.exquo(g).terms(), den.exquo(g).terms()
    if len(nt) != 1 or len(dt) != 1 or nt[0][1] != dt[0][1]:
        return None
    return nt[0][0][0] - dt[0][0][0]


def lattice_pld(p: Sequence[sympy.Expr], q: Sequence[sympy.Expr]) -> LatticePLD:
    """The exact loss distribution of the pair with probabilities ``p`` (under P) and ``q`` (under Q),
    output by output (exact sympy numbers); :class:`NotOnLattice` when the losses are not on a lattice."""
    p, q = [sympy.sympify(m) for m in p], [sympy.sympify(m) for m in q]
    step = _step([*p, *q])
    infinite = sympy.Integer(0)
    grouped: dict[int, list[tuple[sympy.Poly, sympy.Poly]]] = {}
    for pm, qm in zip(p, q):
        if pm == 0:
            continue
        if qm == 0:
            infinite += pm
            continue
        pn, pd = _in_w(pm, step)
        qn, qd = _in_w(qm, step)
        k = _monomial_degree(pn * qd, qn * pd)
        if k is None or (step is None and k != 0):
            raise NotOnLattice(f"the loss ln({pm} / {qm}) is not an integer multiple of one step s "
                               f"(P(o)/Q(o) must be exactly e^(k s))")
        grouped.setdefault(k, []).append((pn, pd))
    dens = [d for items in grouped.values() for _, d in items]
    common = sympy.Poly(1, W, domain=sympy.QQ)
    for d in dens:
        common = common.lcm(d)
    numerators = {k: sum((n * common.exquo(d) for n, d in items), sympy.Poly(0, W, domain=sympy.QQ))
                  for k, items in grouped.items()}
    coeffs = [c for poly in (common, *numerators.values()) for c in poly.all_coeffs()]
    scale = math.lcm(*(int(sympy.Rational(c).q) for c in coeffs))
    terms = {}
    for k, poly in numerators.items():
        for (j,), c in poly.terms():
            terms[(k, j)] = int(c * scale)
    denominator = {j: int(c * scale) for (j,), c in common.terms()}
    s = sympy.Integer(0) if step is None else sympy.Rational(step.numerator, step.denominator)
    return LatticePLD(s, terms, ((denominator, 1),), ((infinite, 1),))


def _multiply(a: dict, b: dict) -> dict:
    if not a or not b:  # no finite loss on one side (all its mass leaks fully): no finite products
        return {}
    if len(a) * len(b) > MAX_PRODUCTS:
        raise NotOnLattice(f"composing the distribution takes more than {MAX_PRODUCTS:,} products of terms")
    bits = max(abs(c) for c in a.values()).bit_length() + max(abs(c) for c in b.values()).bit_length()
    work = len(a) * len(b) * _unit(bits)
    if work > scaled(MAX_WORK):
        raise NotOnLattice(f"one product of the exact lattice composition needs about {work:.3g} units of work "
                           f"(more than the budget of {scaled(MAX_WORK):.3g}; {HOW})")
    if len(a) * len(b) >= FLINT_FROM and all(c > 0 for c in a.values()) and all(c > 0 for c in b.values()):
        out = _sparse_product(a, b)
        if len(out) > MAX_TERMS:
            raise NotOnLattice(f"the composed distribution has more than {MAX_TERMS} terms")
        return out
    out: dict = {}
    get = out.get
    for (k1, j1), c1 in a.items():
        for (k2, j2), c2 in b.items():
            key = (k1 + k2, j1 + j2)
            out[key] = get(key, 0) + c1 * c2
    if len(out) > MAX_TERMS:
        raise NotOnLattice(f"the composed distribution has more than {MAX_TERMS} terms")
    return out


FLINT_FROM = 64
"""Products of at least this many pairs of terms are multiplied by FLINT's sparse fmpz_mpoly (when every
coefficient is > 0: then no product term cancels to 0 and none is 0, so the terms are exactly the loop's)."""
_MPOLY = fmpz_mpoly_ctx.get(("k", "j"), "lex")


def _sparse_product(a: dict, b: dict) -> dict:
    """The product of two sparse polynomials {(k, j): c} with coefficients > 0, exactly (FLINT's fmpz_mpoly,
    exponents shifted to be >= 0): the terms and coefficients of the loop in :func:`_multiply`, in FLINT's
    order (the sums over a loss's terms are then added in another order: enclosures may differ in their
    last bits)."""
    ka, ja = min(k for k, _ in a), min(j for _, j in a)
    kb, jb = min(k for k, _ in b), min(j for _, j in b)
    left = _MPOLY.from_dict({(k - ka, j - ja): c for (k, j), c in a.items()})
    right = _MPOLY.from_dict({(k - kb, j - jb): c for (k, j), c in b.items()})
    dk, dj = ka + kb, ja + jb
    return {(int(k) + dk, int(j) + dj): int(c) for (k, j), c in (left * right).to_dict().items()}


def power(terms: dict, times: int) -> dict:
    """The ``times``-th power of a sparse two-variable integer polynomial {(k, j): c}, by repeated squaring."""
    result: Optional[dict] = None
    base = terms
    n = times
    while n:
        if n & 1:
            result = base if result is None else _multiply(result, base)
        n >>= 1
        if n:
            base = _multiply(base, base)
    return result if result is not None else {(0, 0): 1}


@dataclass
class Profile:
    """delta(eps') of a (composed) pair with the event S = {loss > eps'}: P(S), Q(S) (intervals)."""

    delta: Any
    p_event: Any
    q_event: Any
    threshold: int  # S holds the losses k * step with k >= threshold (and the infinite ones)


def delta_at(pld: LatticePLD, eps: sympy.Expr, backend: Any) -> Profile:
    """delta(eps) of ``pld`` in certified intervals (an :class:`IntervalBackend` at its precision)."""
    ctx = backend.ctx
    s = pld.step
    inf_p = ctx.mpf(1)
    for mass, times in pld.infinite:
        inf_p *= (ctx.mpf(1) - backend.num(mass)) ** times
    inf_p = ctx.mpf(1) - inf_p
    if s == 0:
        return Profile(inf_p, inf_p, ctx.mpf(0), 1)
    s_iv, eps_iv = backend.num(s), backend.num(eps)
    ratio = eps_iv / s_iv
    threshold = int(math.floor(float(ratio.a))) - 1
    while threshold < ratio.a:
        threshold += 1
    # the least integer >= ratio's lower end: left out only when threshold * s <= eps is shown exactly
    # (undecided, it stays in: its contribution (1 - e^(eps - loss))_+ is enclosed in [0, small])
    if not threshold > ratio.b and exact_sign(threshold * s - eps) in (0, -1):
        threshold += 1
    e_eps = ctx.exp(eps_iv)
    delta, p_event, q_event = _sums(_masses(pld, backend), threshold, e_eps._mpi_, ctx.prec)
    make = ctx.make_mpf
    return Profile(make(delta) + inf_p, make(p_event) + inf_p, make(q_event), threshold)


def delta_curve(pld: LatticePLD, eps: sympy.Expr, backend: Any) -> Any:
    """An enclosure of delta(eps) for a plot (no verdict rests on it), from suffix sums kept per precision:
    the losses k >= threshold + 1 (certified above eps, each excess >= 1 - e^-s > 0: no cancellation beyond a
    factor 1/s) as S_P - e^eps S_Q, the threshold's own term clipped as in :func:`delta_at`; one difference
    per eps instead of a pass over every loss."""
    ctx = backend.ctx
    s = pld.step
    if s == 0:
        return delta_at(pld, eps, backend).delta
    inf_p = ctx.mpf(1)
    for mass, times in pld.infinite:  # as delta_at: the P-mass of an infinite loss, leaking fully
        inf_p *= (ctx.mpf(1) - backend.num(mass)) ** times
    inf_p = ctx.mpf(1) - inf_p
    eps_iv = backend.num(eps)
    ratio = eps_iv / backend.num(s)
    threshold = int(math.floor(float(ratio.a))) - 1
    while threshold < ratio.a:
        threshold += 1
    if threshold > ratio.b:  # every loss from the threshold up is certified above eps
        first, near = threshold, None
    else:  # the threshold's term alone may meet eps: clipped at 0 (never an exact decision: a plot)
        first, near = threshold + 1, threshold
    masses = _masses(pld, backend)
    ks, s_p, s_q = _suffixes(pld, backend)
    start = bisect.bisect_left(ks, first)
    prec = ctx.prec
    e_eps = ctx.exp(eps_iv)._mpi_
    delta = mpi_sub(s_p[start], mpi_mul(e_eps, s_q[start], prec), prec)
    if near is not None and start > 0 and ks[start - 1] == near:
        delta = mpi_add(delta, _sums(masses[start - 1:start], near, e_eps, prec)[0], prec)
    low, high = delta
    return ctx.make_mpf((fzero if mpf_lt(low, fzero) else low, fzero if mpf_lt(high, fzero) else high)) + inf_p


def _suffixes(pld: LatticePLD, backend: Any) -> tuple[list, list, list]:
    """(losses k in increasing order, S_P, S_Q): S_P[i] = sum_{j >= i} m_j, S_Q[i] = sum_{j >= i} m_j w^-k_j (raw
    intervals), kept on ``pld`` per precision."""
    key = ("suffixes", backend.dps)
    found = pld.cache.get(key)
    if found is None:
        masses = _masses(pld, backend)
        prec = backend.ctx.prec
        s_p, s_q = [_ZERO] * (len(masses) + 1), [_ZERO] * (len(masses) + 1)
        for i in range(len(masses) - 1, -1, -1):
            _, mass, back = masses[i]
            s_p[i] = mpi_add(s_p[i + 1], mass._mpi_, prec)
            s_q[i] = mpi_add(s_q[i + 1], mpi_mul(mass._mpi_, back._mpi_, prec), prec)
        found = pld.cache[key] = ([k for k, _, _ in masses], s_p, s_q)
    return found


def _sums(masses: list, threshold: int, e_eps: tuple, prec: int) -> tuple[tuple, tuple, tuple]:
    """(sum m (1 - e^eps w^-k)_+, sum m, sum m w^-k) over the losses k >= threshold, as raw mpmath intervals:
    the same operations, in the same order and at the same precision, as the interval context's operators
    (which call these libmpi functions after converting their operands), without the objects' overhead."""
    delta = p_event = q_event = _ZERO
    start = bisect.bisect_left(masses, threshold, key=_first)
    one = _ONE
    for _, mass, back in masses[start:]:
        m, b = mass._mpi_, back._mpi_
        p_event = mpi_add(p_event, m, prec)
        q_event = mpi_add(q_event, mpi_mul(m, b, prec), prec)
        low, high = mpi_sub(one, mpi_mul(e_eps, b, prec), prec)
        if mpf_lt(low, fzero):  # (1 - e^eps w^-k)_+: each end clipped at 0
            low = fzero
            if mpf_lt(high, fzero):
                high = fzero
        delta = mpi_add(delta, mpi_mul(m, (low, high), prec), prec)
    return delta, p_event, q_event


def _first(item: tuple) -> int:
    return item[0]


_ZERO = (fzero, fzero)
_ONE = (fone, fone)


def _masses(pld: LatticePLD, backend: Any) -> list[tuple[int, Any, Any]]:
    """(k, P-mass at loss k s, w^-k) for every finite loss, as intervals at the backend's precision (cached)."""
    found = pld.cache.get(backend.dps)
    if found is None:
        ctx = backend.ctx
        w = ctx.exp(backend.num(pld.step))
        d = ctx.mpf(1)
        for denominator, exponent in pld.denominators:
            d *= sum((c * w ** j for j, c in denominator.items()), ctx.mpf(0)) ** exponent
        # raw libmpi operations: those of the interval context's operators (an int operand rounded outward to
        # the precision), in the same order and precision -- the same enclosures without the objects' overhead
        prec, raw_w, raw_d, make = ctx.prec, w._mpi_, d._mpi_, ctx.make_mpf
        by_k: dict[int, Any] = {}
        powers: dict[int, Any] = {}
        for (k, j), c in pld.terms.items():
            wj = powers.get(j)
            if wj is None:
                wj = powers[j] = mpi_pow(raw_w, _int(j, prec), prec)
            by_k[k] = mpi_add(by_k.get(k, _ZERO), mpi_mul(_int(c, prec), wj, prec), prec)
        found = pld.cache[backend.dps] = [(k, make(mpi_div(by_k[k], raw_d, prec)),
                                           make(mpi_pow(raw_w, _int(-k, prec), prec))) for k in sorted(by_k)]
    return found


def _int(value: int, prec: int) -> tuple:
    """An integer as the interval context converts it: its ends rounded down and up to ``prec`` bits."""
    return from_int(value, prec, round_floor), from_int(value, prec, round_ceiling)
