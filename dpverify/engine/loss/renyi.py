"""Rényi divergences of two output laws, in certified interval arithmetic.

For laws P, Q over outputs and an order alpha > 1,

    D_alpha(P || Q) = 1/(alpha - 1) ln sum_o P(o)^alpha Q(o)^(1 - alpha),

a finite sum for discrete laws (+inf when some o has Q(o) = 0 < P(o)).  An output that
releases noisy values (a :class:`~dpverify.engine.continuous.noisy.Density` with one path whose
released values are lone Laplace or Gaussian variables over the whole line) contributes
P(o)^alpha Q(o)^(1 - alpha) prod_k e^((alpha - 1) D_alpha(g_k || h_k)), the released values
being independent given o, with the closed forms (Mironov, "Rényi differential privacy",
CSF 2017, Table II) for centres t = |mu - nu| apart:

    Laplace(b):  (alpha - 1) D = ln(alpha/(2 alpha - 1) e^((alpha - 1) t/b) + (alpha - 1)/(2 alpha - 1) e^(-alpha t/b))
    Gaussian(s): D = alpha t^2 / (2 s^2).

Besides D_alpha at an order, a pair gives D_oo (the largest log ratio, which bounds every
D_alpha), the limit at alpha -> 1 (the KL divergence), and -- for one output releasing
Gaussian values only -- the exact rate D_alpha / alpha.  The checks in
:mod:`dpverify.checks.divergence` compare these with claims; nothing here decides.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import sympy

from ..continuous.noisy import FULL, Density


class Unsupported(Exception):
    """A law outside what the closed forms cover (the reason is the message)."""


@dataclass(frozen=True)
class Slot:
    """One released value: ``kind`` "laplace" or "gaussian", its exact centre and scale."""

    kind: str
    centre: Any
    scale: Any


@dataclass(frozen=True)
class Part:
    """One output: its probability (an interval) and its released values."""

    weight: Any
    slots: tuple[Slot, ...]


def parts(law: dict, backend: Any) -> dict:
    """A law as {output: Part}; :class:`Unsupported` for released values beyond the closed forms."""
    out = {}
    for output, weight in law.items():
        if not isinstance(weight, Density):
            out[output] = Part(backend.num(weight), ())
            continue
        if len(weight.terms) != 1:
            raise Unsupported(f"output {output!r} is released on several paths (a mixture of densities)")
        constant, factors = weight.terms[0]
        slots = []
        for f in factors:
            noise = f.noise
            if (noise is None or noise.kind not in ("laplace", "gaussian") or f.interval != FULL or f.joint
                    or f.mix is not None):
                raise Unsupported(f"output {output!r} releases a value that is not a lone Laplace or Gaussian "
                                  "variable over the whole line (it is compared, summed or of another law)")
            slots.append(Slot(noise.kind, noise.centre + f.offset, noise.scale))
        out[output] = Part(backend.num(constant), tuple(slots))
    return out


@dataclass
class _Term:
    log_p: Any
    log_q: Any
    laplace: list  # t/b per released Laplace value
    gaussian: Any  # sum of t^2/(2 s^2) over released Gaussian values


class PairDivergence:
    """D_alpha(P || Q) of one ordered pair of laws given as :func:`parts`, at any order."""

    def __init__(self, law: dict, law_prime: dict, backend: Any) -> None:
        self.backend = backend
        ctx = self.ctx = backend.ctx
        self.infinite: Optional[Any] = None  # an output possible under P only (D_alpha = oo for every alpha)
        self.terms: list[_Term] = []
        for output, part in law.items():
            if not part.weight.b > 0:
                continue
            other = law_prime.get(output)
            if other is None:
                self.infinite = output
                continue
            if not (part.weight.a > 0 and other.weight.a > 0):
                raise Unsupported(f"the probability of {output!r} is not separated from 0 at {backend.dps} digits")
            if len(part.slots) != len(other.slots):
                raise Unsupported(f"output {output!r} releases a different number of values under each dataset")
            laplace, gaussian = [], ctx.mpf(0)
            for g, h in zip(part.slots, other.slots):
                if g.kind != h.kind or g.scale != h.scale:
                    raise Unsupported(f"output {output!r} releases values of different laws or scales "
                                      f"({g.kind}({g.scale}) against {h.kind}({h.scale}))")
                t = abs(backend.num(g.centre) - backend.num(h.centre)) / backend.num(g.scale)
                if g.kind == "laplace":
                    laplace.append(t)
                else:
                    gaussian += t * t / 2
            self.terms.append(_Term(ctx.log(part.weight), ctx.log(other.weight), laplace, gaussian))
        self.single = len(law) == 1 and len(law_prime) == 1 and self.infinite is None

    def value(self, alpha: Any) -> Any:
        """D_alpha as an interval (``alpha`` exact or an interval > 1), or math.inf."""
        if self.infinite is not None:
            return math.inf
        ctx = self.ctx
        a = self.backend.num(alpha) if not isinstance(alpha, ctx.mpf) else alpha
        total = ctx.mpf(0)
        for term in self.terms:
            exponent = a * term.log_p + (1 - a) * term.log_q + (a - 1) * a * term.gaussian
            for t in term.laplace:
                exponent += laplace_scaled(ctx, a, t)
            total += ctx.exp(exponent)
        return ctx.log(total) / (a - 1)

    def infinity(self) -> Any:
        """D_oo = max over outputs of ln(P/Q) + sum of the released values' largest log ratios: an
        interval, or math.inf (an output possible under P only, or a Gaussian value whose centre moves)."""
        if self.infinite is not None:
            return math.inf
        best = None
        for term in self.terms:
            if term.gaussian.b > 0:
                return math.inf
            value = term.log_p - term.log_q + sum(term.laplace, self.ctx.mpf(0))
            best = value if best is None else self.ctx.mpf([max(best.a, value.a), max(best.b, value.b)])
        return best if best is not None else self.ctx.mpf(0)

    def kl(self) -> Any:
        """lim D_alpha as alpha -> 1+ (the KL divergence): sum_o P(o) (ln P/Q + sum_k KL_k), with
        KL = t + e^-t - 1 for Laplace and t^2/(2 s^2) for Gaussian values."""
        if self.infinite is not None:
            return math.inf
        ctx = self.ctx
        total = ctx.mpf(0)
        for term in self.terms:
            inner = term.log_p - term.log_q + term.gaussian + sum((t + ctx.exp(-t) - 1 for t in term.laplace),
                                                                  ctx.mpf(0))
            total += ctx.exp(term.log_p) * inner
        return total

    def rate(self) -> Optional[Any]:
        """D_alpha / alpha when it does not depend on alpha (one output under both laws, released
        Gaussian values only: the sum of t^2/(2 s^2)); None otherwise."""
        if not self.single or not self.terms or self.terms[0].laplace:
            return None
        return self.terms[0].gaussian


def laplace_scaled(ctx: Any, alpha: Any, t: Any) -> Any:
    """(alpha - 1) D_alpha(Lap(0, 1) || Lap(t, 1)) = ln(alpha/(2 alpha - 1) e^((alpha - 1) t)
    + (alpha - 1)/(2 alpha - 1) e^(-alpha t))."""
    return ctx.log(alpha / (2 * alpha - 1) * ctx.exp((alpha - 1) * t)
                   + (alpha - 1) / (2 * alpha - 1) * ctx.exp(-alpha * t))


# ----- the supremum over orders of D_alpha / alpha ------------------------------------------

SEARCH_ORDERS = 48
"""Orders alpha of the grid that looks for the largest D_alpha / alpha (geometric in alpha - 1)."""
SEARCH_REFINEMENTS = 40
"""Golden-section steps around the grid's best order."""
PARTITION_BUDGET = 4000
"""Evaluations of D_alpha per pair allowed to certify D_alpha / alpha <= rho on (1, alpha_0]."""


def _grid(top: Fraction) -> list[Fraction]:
    """Orders 1 + 10^-4 ... ``top``, geometric in alpha - 1, as short fractions."""
    low, high = math.log(1e-4), math.log(float(top - 1))
    return sorted({1 + Fraction(math.exp(low + (high - low) * k / (SEARCH_ORDERS - 1))).limit_denominator(10 ** 6)
                   for k in range(SEARCH_ORDERS)} - {Fraction(1)})


def largest_rate(pair: PairDivergence, top: Fraction = Fraction(1000)) -> tuple[Any, Fraction]:
    """(D_alpha / alpha as an interval, alpha): the largest value found on a grid of orders in
    (1, ``top``] refined by golden-section search -- a certified lower bound of the supremum (the
    value at a found order), not the supremum itself."""
    rate = pair.rate()
    if rate is not None:
        return rate, Fraction(2)

    def at(alpha: Fraction) -> Any:
        return pair.value(alpha) / pair.backend.num(alpha)
    orders = _grid(top)
    values = [at(a) for a in orders]
    k = max(range(len(orders)), key=lambda i: values[i].mid)
    lo, hi = (orders[k - 1] if k else 1 + (orders[0] - 1) / 2), orders[min(k + 1, len(orders) - 1)]
    best, best_alpha = values[k], orders[k]
    ratio = Fraction(618034, 1000000)
    for _ in range(SEARCH_REFINEMENTS):
        left, right = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        left, right = left.limit_denominator(10 ** 9), right.limit_denominator(10 ** 9)
        if not lo < left < right < hi:
            break
        f_left, f_right = at(left), at(right)
        for value, alpha in ((f_left, left), (f_right, right)):
            if value.mid > best.mid:
                best, best_alpha = value, alpha
        if f_left.mid >= f_right.mid:
            hi = right
        else:
            lo = left
    return best, best_alpha


def rate_at_most(pair: PairDivergence, rho: Any) -> tuple[Optional[bool], str]:
    """Whether D_alpha / alpha <= rho (an interval > 0) for EVERY alpha > 1, certified:
    (True, how), or (None, why not decided).  Beyond alpha_0 = D_oo / rho it holds as
    D_alpha <= D_oo; on (1, alpha_0] D_alpha increases in alpha, so on a piece [a, b]
    D_alpha / alpha <= D_b / a, and pieces are halved until each bound is below rho
    (at most PARTITION_BUDGET evaluations)."""
    rate = pair.rate()
    if rate is not None:
        return (True, "D_alpha / alpha is constant (Gaussian values)") if rate.b <= rho.a else (None, "tie")
    top = pair.infinity()
    if top == math.inf:
        return None, "D_oo is infinite and D_alpha / alpha has no closed form here"
    if top.b <= 0:
        return True, "the two laws are identical"
    if not rho.a > 0:
        return None, "a claimed rho of 0 only holds for identical laws"
    bound = float((top / rho).b)
    if not math.isfinite(bound):
        return None, "D_oo / rho is beyond the range of the partition"
    upper = Fraction(math.nextafter(bound, math.inf))  # rounded up: alpha_0 >= D_oo / rho
    alpha_0 = Fraction(math.ceil(upper * 2 ** 20), 2 ** 20)
    if alpha_0 <= 1:
        return True, "D_alpha <= D_oo <= rho for every alpha > 1"
    pieces, spent = [(Fraction(1), alpha_0)], 0
    while pieces:
        a, b = pieces.pop()
        spent += 1
        if spent > PARTITION_BUDGET:
            return None, f"{PARTITION_BUDGET} evaluations of D_alpha did not cover (1, {float(alpha_0):.6g}]"
        if (pair.value(b) / pair.backend.num(a)).b <= rho.a:
            continue
        if b - a < Fraction(1, 10 ** 12):
            return None, f"D_alpha / alpha is too close to rho near alpha = {float(a):.12g}"
        middle = (a + b) / 2
        pieces += [(middle, b), (a, middle)]
    return True, f"alpha_0 = {float(alpha_0):.6g}, {spent} pieces of (1, alpha_0]"


# ----- exact (sympy) sums, for ties the intervals cannot separate -----------------------------

def exact_sum(law: dict, law_prime: dict, alpha: Any) -> Any:
    """sum_o P(o)^alpha Q(o)^(1 - alpha) prod_k e^((alpha - 1) D_alpha(g_k || h_k)) in exact sympy,
    for two laws given as :func:`parts` of the exact reading (sympy.oo when some output is possible
    under P only), so that D_alpha <= eps iff the sum is at most e^((alpha - 1) eps)."""
    total = sympy.Integer(0)
    for output, part in law.items():
        other = law_prime.get(output)
        if other is None:
            return sympy.oo
        term = sympy.sympify(part.weight) ** alpha * sympy.sympify(other.weight) ** (1 - alpha)
        for g, h in zip(part.slots, other.slots):
            t = sympy.Abs(exact_number(g.centre) - exact_number(h.centre)) / exact_number(g.scale)
            if g.kind == "laplace":
                term *= (alpha / (2 * alpha - 1) * sympy.exp((alpha - 1) * t)
                         + (alpha - 1) / (2 * alpha - 1) * sympy.exp(-alpha * t))
            else:
                term *= sympy.exp((alpha - 1) * alpha * t ** 2 / 2)
        total += term
    return total


def exact_rate(law: dict, law_prime: dict) -> Optional[Any]:
    """D_alpha / alpha in exact sympy when it does not depend on alpha (one output under both laws, its
    released values all Gaussian: sum t^2 / (2 s^2)); None otherwise."""
    if len(law) != 1 or law.keys() != law_prime.keys():
        return None
    (output, part), = law.items()
    other = law_prime[output]
    if not part.slots or any(g.kind != "gaussian" or g.kind != h.kind for g, h in zip(part.slots, other.slots)):
        return None
    return sum((((exact_number(g.centre) - exact_number(h.centre)) / exact_number(g.scale)) ** 2 / 2
                for g, h in zip(part.slots, other.slots)), sympy.Integer(0))


def exact_number(value: Any) -> Any:
    """``value`` as an exact sympy number: a Fraction or a float as the rational it is (a float's exact
    binary value, never a nearby decimal), anything else sympified."""
    if isinstance(value, (Fraction, float)):
        value = Fraction(value)
        return sympy.Rational(value.numerator, value.denominator)
    return sympy.sympify(value)
