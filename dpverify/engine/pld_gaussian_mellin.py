"""delta_T(eps) of the Poisson-subsampled Gaussian composed T times, certified to many digits by the
Mellin inversion of the call payoff (arb balls, python-flint).

With the noise scaled to 1 and the centres D standard deviations apart, one step's likelihood ratio
under N(0, 1) is lambda(x) = 1 - q + q e^(D x - D^2/2) (the pair of :mod:`.pld_gaussian_mixture`).
For the product Lam of T such ratios and K = e^eps, (Lam - K)_+ = (1/2 pi i) int_{Re s = a}
Lam^s K^(1 - s) / (s (s - 1)) ds for every a > 1 (the Mellin transform of (y - 1)_+ is 1/(s(s - 1))),
so, with M(s) = E_{N(0,1)}[lambda^s] (an entire function: lambda > 0 has Gaussian tails in log),

    delta_T(eps) = (1/2 pi) int_R m(a + it)^T e^(eps(1 - a - it)) / ((a + it)(a - 1 + it)) dt,

where m(s) = M(s) for the ordered pair (mixture, N(0, 1)) ("added": the loss is ln lambda under the
mixture) and m(s) = M(1 - s) for (N(0, 1), mixture) ("removed": E_mixture[lambda^-s] = E_N[lambda^(1-s)]).
Every step is an arb enclosure:

* M(s) at a node: ``acb.integral`` (rigorous error bounds for holomorphic integrands; the log's branch
  cut is reported to it) on [L1, L2], plus the tails bounded analytically: |lambda^s| = lambda^Re s,
  lambda <= 1 left of D/2, lambda <= e^(D x - D^2/2) right of it;
* the trapezoid rule with step h on the line (the integrand is conjugate-symmetric: h (u(0) + 2 sum
  Re u(kh))); it is analytic in the strip a - d < Re s < a + d (d < a - 1: the pole at s = 1 stays
  outside), where its integral along every line is at most m(sigma)^T e^(eps(1 - sigma)) / (2(sigma - 1))
  (|m(s)| <= m(Re s); int dt / |s(s - 1)| <= pi / (sigma - 1)), log-convex in sigma so largest at an edge:
  the error is at most 2 M_d / (e^(2 pi d / h) - 1) (Trefethen and Weideman 2014, Theorem 5.1);
* the nodes beyond the last summed one: |m(a + it)| <= |m(a + it_j)| + |t - t_j| Lip (Lip = E[lambda^Re s
  |ln lambda|] bounds |m'|) on segments up to t_V, and beyond it |m(a + it)| <= V / |t| (one integration
  by parts: M(s) = -(1/s) int g' lambda^s dx with g = phi lambda / lambda', V = int lambda^Re s |g'|),
  raised to the T-th power.

T = 1 has too slow a decay in t (1/t^3 with no power to help); its delta is the closed form in Phi
(:func:`one_step`: the loss is monotone in x).  A bound that cannot be established within the counted
budget raises :class:`Unreached`; callers then answer with the grid brackets or ``unknown``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Union

from flint import acb, arb, ctx

MAX_NODES = 500
"""The most nodes of the trapezoid sum plus envelope points per (pair, T, direction) (a counted budget)."""
TAIL_SIGMAS = 13
"""Half-width of the integration range of M(s) in standard deviations (tails bounded analytically)."""
MEMO: dict = {}
"""Composed node values m(a + ikh)^T per (q, D, T, direction, a, h, precision): shared by every claim and
every eps (exact balls, deterministic)."""


class Unreached(Exception):
    """A bound could not be established within the budget (the reason is the message)."""


@dataclass(frozen=True)
class Enclosure:
    """delta_T(eps) in the ball ``value`` (python-flint arb); the plan that produced it."""

    value: arb
    a: float
    h: float
    nodes: int
    envelope: int
    plan: "Plan | None" = None

    @property
    def digits(self) -> float:
        """Significant digits certified: -log10 of the width relative to the upper end (0 when the ball meets 0)."""
        lower, upper = float(self.value.lower()), float(self.value.upper())
        if not lower > 0:
            return 0.0
        return -math.log10((upper - lower) / upper) if upper > lower else math.inf


Number = Union[Fraction, tuple[Fraction, Fraction]]
"""An exact rational, or an enclosure [lo, hi] of an irrational number by two rationals."""


def _float(value: Number) -> float:
    return float(value) if isinstance(value, Fraction) else float((value[0] + value[1]) / 2)


def _ball(value: Number) -> arb:
    """An arb ball containing the exact rational, or the interval [lo, hi] of rationals."""
    lo, hi = (value, value) if isinstance(value, Fraction) else value
    low = arb(lo.numerator) / lo.denominator
    high = arb(hi.numerator) / hi.denominator
    return low.union(high)


class Pair:
    """One step's ratio lambda(x) = 1 - q + q e^(D x - D^2/2) (q, D arb balls) and its integrals."""

    def __init__(self, q: arb, distance: arb, key: tuple) -> None:
        self.q, self.d, self.key = q, distance, key
        self.shift = distance * distance / 2
        self.norm = 1 / (2 * arb.pi()).sqrt()

    def _phi(self, x: arb) -> arb:
        return self.norm * (-(x * x) / 2).exp()

    @staticmethod
    def _upper_tail(x: arb) -> arb:
        """P(N(0, 1) > x)."""
        return (x / arb(2).sqrt()).erfc() / 2

    def _range(self, sigma: float) -> tuple[arb, arb]:
        """[L1, L2]: L1 < min(D/2, -D), L2 > max(D/2, 0) + sigma+ D, each TAIL_SIGMAS beyond."""
        dist = float(self.d.upper())
        return arb(-TAIL_SIGMAS - dist - 1), arb(TAIL_SIGMAS + dist + max(sigma, 0.0) * dist + 1)

    def _lam(self, z: acb) -> acb:
        return (1 - self.q) + self.q * (self.d * z - self.shift).exp()

    def _left_weight(self, sigma: arb) -> arb:
        """An upper bound of lambda^sigma left of D/2 (lambda in (1 - q, 1))."""
        return max((1 - self.q) ** sigma, arb(1), key=lambda v: float(v.upper()))

    def _right_tail(self, low: arb, beta: arb, c: arb) -> arb:
        """int_low^inf (x + c) phi(x) e^(beta x) dx = e^(beta^2/2) (phi(low - beta) + (beta + c) P(N > low - beta))."""
        y = low - beta
        return (beta * beta / 2).exp() * (self._phi(y) + (beta + c) * self._upper_tail(y))

    def _integral(self, f: Callable[[acb], acb], lo: arb, hi: arb, bits: int) -> acb:
        return acb.integral(lambda z, analytic: f(z, analytic), lo, hi, rel_tol=arb(2) ** -bits,
                            abs_tol=arb(2) ** -bits, eval_limit=200_000)

    def moment(self, s: acb, bits: int) -> acb:
        """M(s) = E_{N(0,1)}[lambda(x)^s]: acb.integral on [L1, L2] plus the tails' bound as a radius."""
        sigma = s.real
        lo, hi = self._range(float(sigma.upper()))

        def f(z: acb, analytic: bool) -> acb:
            return (s * self._lam(z).log(analytic=analytic)).exp() * self.norm * (-(z * z) / 2).exp()

        body = self._integral(f, lo, hi, bits)
        left = self._left_weight(sigma) * self._upper_tail(-lo)
        if sigma.lower() >= 0:  # lambda^sigma <= e^(sigma (D x - D^2/2)) right of D/2
            right = ((sigma * sigma * self.d * self.d / 2 - sigma * self.shift).exp()
                     * self._upper_tail(hi - sigma * self.d))
        elif sigma.upper() <= 0:  # lambda >= 1 right of D/2
            right = self._upper_tail(hi)
        else:
            raise Unreached("the real part of s straddles 0")
        tail = (left + right).upper()
        return body + acb(arb(0, tail), arb(0, tail))

    def moment_upper(self, sigma: arb, bits: int) -> arb:
        """An upper bound of M(sigma) at a real sigma."""
        return self.moment(acb(sigma), bits).real.upper()

    def _pieces(self, weight: Callable[[acb, bool], acb], cuts: list[arb], sigma: arb, bits: int) -> arb:
        """int_{L1}^{L2} phi lambda^sigma |w| dx, with w = ``weight``, of one sign between consecutive cuts."""
        lo, hi = self._range(float(sigma.upper()))
        points = [lo, *sorted(cuts, key=float), hi]
        total = arb(0)
        for a, b in zip(points, points[1:]):
            sign = 1 if float(weight(acb((a + b) / 2), False).real) >= 0 else -1

            def f(z: acb, analytic: bool, sign: int = sign) -> acb:
                return sign * weight(z, analytic) * (sigma * self._lam(z).log(analytic=analytic)).exp() \
                    * self.norm * (-(z * z) / 2).exp()
            total += self._integral(f, a, b, bits).real
        return total.upper()

    def lipschitz(self, sigma: arb, bits: int = 40) -> arb:
        """An upper bound of E[lambda^sigma |ln lambda|] >= |M'(sigma + it)| for every t."""
        lo, hi = self._range(float(sigma.upper()))
        body = self._pieces(lambda z, analytic: self._lam(z).log(analytic=analytic), [self.d / 2], sigma, bits)
        left = self._left_weight(sigma) * -(1 - self.q).log() * self._upper_tail(-lo)
        if sigma.lower() >= 0:  # lambda^sigma ln lambda <= e^(sigma(Dx - D^2/2)) (D x - D^2/2) right of D/2
            right = self.d * (-sigma * self.shift).exp() * self._right_tail(hi, sigma * self.d, -self.d / 2)
        else:
            right = self.d * self._right_tail(hi, arb(0), -self.d / 2)
        return (body + left + right).upper()

    def decay(self, sigma: arb, bits: int = 40) -> arb:
        """V with |M(sigma + it)| <= V / |t|: int lambda^sigma |g'| dx, g = phi lambda / lambda', bounded by
        int phi lambda^sigma (A |x + D| e^(-D x) + |x| / D) dx with A = (1 - q) e^(D^2/2) / (q D)."""
        big = (1 - self.q) * self.shift.exp() / (self.q * self.d)
        lo, hi = self._range(float(sigma.upper()))
        first = self._pieces(lambda z, _: big * (z + self.d) * (-self.d * z).exp(), [-self.d], sigma, bits)
        second = self._pieces(lambda z, _: z / self.d, [arb(0)], sigma, bits)
        # left of L1: lambda^sigma <= w; int_{-inf}^{L1} |x + D| phi(x) e^(-D x) dx = e^(D^2/2) phi(L1 + D)
        left = self._left_weight(sigma) * (big * self.shift.exp() * self._phi(lo + self.d) + self._phi(lo) / self.d)
        if sigma.lower() >= 0:
            scale = (-sigma * self.shift).exp()
            right = scale * (big * self._right_tail(hi, (sigma - 1) * self.d, self.d)
                             + self._right_tail(hi, sigma * self.d, arb(0)) / self.d)
        else:
            right = big * self._right_tail(hi, -self.d, self.d) + self._right_tail(hi, arb(0), arb(0)) / self.d
        return (first + second + left + right).upper()


def _exponent(s: acb, added: bool) -> acb:
    """The argument of M for the direction: s (added) or 1 - s (removed)."""
    return s if added else 1 - s


PLANS: dict = {}
"""Plans per (q, D, T, direction, eps rounded to a half, digits)."""
LOG_M: dict = {}
"""ln m(sigma) in floats per (q, D, sigma, direction): the planner's only input (memoised)."""


def _log_m(pair: Pair, sigma: float, added: bool) -> float:
    """ln m(sigma) in floats (planning only)."""
    key = (pair.key, sigma, added)
    if key not in LOG_M:
        LOG_M[key] = math.log(float(pair.moment(_exponent(acb(sigma), added), 30).real.mid()))
    return LOG_M[key]


@dataclass(frozen=True)
class Plan:
    """The line Re s = a, the strip's half-width d, the step h (floats: exact binary values), the log of the
    reference size of delta (the target is 10^-digits of it), the estimated last node and the extra bits
    that the cancellation between the terms costs."""

    a: float
    d: float
    h: float
    eps: float
    reference: float
    nodes: int
    extra: int


def _plan(pair: Pair, times: int, eps: float, added: bool, digits: int) -> Plan:
    """Chosen in floats, on a grid of 1/8 in sigma (shared memo): a and d maximising the step h whose
    discretisation error is about 10^-digits of delta's estimate (e^F at the saddle of F(sigma) = T ln m(sigma)
    + eps(1 - sigma) - ln(sigma(sigma - 1)), over 2 pi); then the nodes needed, from |m(a + it)| at doubling
    t.  Only a plan: every error is bounded afterwards in arb."""
    def f(sigma: float) -> float:
        return times * _log_m(pair, sigma, added) + eps * (1 - sigma) - math.log(sigma * (sigma - 1))
    grid = [k / 8 for k in range(9, 8 * 24)]
    values = {}
    best_sigma, best = None, math.inf
    for sigma in grid:  # F is convex (log-convex m): walk until it rises
        values[sigma] = f(sigma)
        if values[sigma] < best:
            best_sigma, best = sigma, values[sigma]
        elif values[sigma] > best + 5:
            break
    if best_sigma is None:
        raise Unreached("ln m(sigma) is not finite on the planner's grid")
    reference = best - math.log(2 * math.pi)
    goal = reference - digits * math.log(10) - 3
    choice = (0.0, 0.0, 0.0)
    for a in [k / 4 for k in range(5, int(4 * max(best_sigma, 2.0)) + 1)]:
        for frac in (0.25, 0.5, 0.75, 0.9):
            d = math.floor(frac * (a - 1) * 8) / 8
            if d <= 0 or a - d <= 1:
                continue
            edge = max(times * _log_m(pair, s, added) + eps * (1 - s) - math.log(2 * (s - 1)) for s in (a - d, a + d))
            h = 2 * math.pi * d / max(math.log(2) + edge - goal, 1.0)
            choice = max(choice, (h, a, d))
    h, a, d = choice
    if not h > 0:
        raise Unreached("no line and strip found for the trapezoid rule")
    h = 2.0 ** (math.floor(math.log2(h) * 4) / 4)  # a few steps only: shared memo keys
    extra = max(0, math.ceil((f(a) - math.log(2 * math.pi) - reference) / math.log(2)))
    t = 8.0
    while times * math.log(float(abs(pair.moment(_exponent(acb(a, t), added), 20)).mid())) + eps * (1 - a) \
            - 2 * math.log(t) > goal - 2 and t / h <= MAX_NODES:  # beyond the budget: no need to know how far
        t *= 1.25
    return Plan(a, d, h, eps, reference, math.ceil(t / h), extra)


def _node(pair: Pair, a: arb, t: arb, times: int, added: bool, bits: int) -> acb:
    return pair.moment(_exponent(acb(a, t), added), bits) ** times


def mellin_delta(q: Fraction, distance: Number, times: int, eps: Number,
                 added: bool, digits: int = 12, plan: Plan | None = None) -> Enclosure:
    """delta_T(eps) of the ordered pair (mixture, N(0, 1)) (``added``) or (N(0, 1), mixture), composed
    ``times`` times, in an arb ball aimed at ``digits`` significant digits (on ``plan``, else on one chosen
    for this eps); :class:`Unreached` when a bound is not established within MAX_NODES nodes (or T = 1: use
    :func:`one_step`)."""
    if times < 2:
        raise Unreached("one step: the Mellin integral decays too slowly in t; use the closed form")
    with ctx.workprec(60):
        pair = Pair(_ball(q), _ball(distance), (q, distance))
        if not added and bool(times * -(1 - pair.q).log() < _ball(eps)):
            return Enclosure(arb(0), 0.0, 0.0, 0, 0)  # the removed direction's loss is at most -T ln(1 - q) < eps
        if plan is None:  # planned at eps rounded to a half: nearby eps share the plan and the nodes
            key = (q, distance, times, added, round(2 * _float(eps)) / 2, digits)
            if key not in PLANS:
                try:
                    PLANS[key] = _plan(pair, times, key[4], added, digits)
                except (ValueError, OverflowError, ZeroDivisionError) as exc:  # floats only choose: never decide
                    raise Unreached(f"the plan's floats failed ({exc})") from None
            plan = PLANS[key]
    if plan.nodes > MAX_NODES:
        raise Unreached(f"about {plan.nodes:,} nodes of the trapezoid sum needed (more than {MAX_NODES:,})")
    bits = int(digits * 3.33) + 30 + times.bit_length() + plan.extra
    with ctx.workprec(bits + 20):
        pair = Pair(_ball(q), _ball(distance), (q, distance))
        e = _ball(eps)
        a, d, h = _ball(Fraction(plan.a)), _ball(Fraction(plan.d)), _ball(Fraction(plan.h))
        if not (a - d > 1 and d > 0 and h > 0):
            raise Unreached("the strip of analyticity must lie right of the pole at s = 1 (a - d > 1)")
        # the discretisation error: 2 M_d / (e^(2 pi d/h) - 1), M_d the larger edge's line integral bound
        edges = []
        for sigma in (a - d, a + d):
            m = pair.moment_upper(_exponent(acb(sigma), added).real, 40)
            edges.append(m ** times * (e * (1 - sigma)).exp() / (2 * (sigma - 1)))
        m_d = max(edges, key=lambda v: float(v.upper())).upper()
        discretisation = (2 * m_d / ((2 * arb.pi() * d / h).exp() - 1)).upper()
        values = MEMO.setdefault((q, distance, times, added, plan.a, plan.h, bits), [])
        scale = (e * (1 - a)).exp() / (2 * arb.pi())
        # the reference size of delta moves with eps as the integrand's factor e^(eps(1 - a)) does
        reference = plan.reference + (_float(eps) - plan.eps) * (1 - plan.a)
        floor = arb(math.exp(reference - (digits + 4) * math.log(10)))
        total, k, quiet = acb(0), 0, 0
        while quiet < 8:  # sum until the terms stay below 10^-(digits+4) of the reference for 8 nodes
            t = k * h
            s = acb(a, t)
            term = _node_at(values, pair, a, h, k, times, added, bits) * scale * (e * acb(0, -t)).exp() / (s * (s - 1))
            total += term if k == 0 else 2 * term.real
            quiet = quiet + 1 if abs(term).upper() < floor else 0
            k += 1
            if k > MAX_NODES:
                raise Unreached(f"more than {k - 1:,} nodes of the trapezoid sum")
        cache = ENVELOPES.setdefault((q, distance, added, plan.a, plan.h), {})
        tail, envelope = _tail(pair, a, h, k, times, added, e, floor, cache)
        value = h * total.real + arb(0, (discretisation + tail).upper())
        return Enclosure(value, plan.a, plan.h, k, envelope, plan)


def _node_at(values: list, pair: Pair, a: arb, h: arb, k: int, times: int, added: bool, bits: int) -> acb:
    """m(a + ikh)^T, memoised in ``values`` (computed in order)."""
    while len(values) <= k:
        values.append(_node(pair, a, len(values) * h, times, added, bits))
    return values[k]


def _tail(pair: Pair, a: arb, h: arb, first: int, times: int, added: bool, e: arb, target: arb,
          cache: dict) -> tuple[arb, int]:
    """An upper bound of h |sum_{|k| >= first} u(kh)|: envelope segments of |m| over n nodes from t = kh
    (|m(a + ikh)| plus n h Lip) up to t_V, then (V / t)^T.  ``cache`` keeps Lip, V and |m| at the envelope's
    nodes (they do not depend on eps or T).  (bound, envelope points)."""
    if "lip" not in cache:
        sigma = _exponent(acb(a), added).real
        cache["lip"], cache["v"] = pair.lipschitz(sigma), pair.decay(sigma)
    lip, v = cache["lip"], cache["v"]
    front = (e * (1 - a)).exp() / arb.pi()
    k, bound, points = first, arb(0), 0
    while True:
        # beyond kh: sum_{j >= k} <= (1/h) int_{kh-h}^inf (V/x)^T x^-2 dx = (V/(kh-h))^T / ((T+1)(kh-h) h)
        start = (k - 1) * h
        if (v / start).upper() < 1:
            beyond = front * (v / start) ** times / ((times + 1) * start)
            if beyond.upper() < target.lower() or points > MAX_NODES:
                break
        t = k * h
        if k not in cache:
            cache[k] = abs(pair.moment(_exponent(acb(a, t), added), 30)).upper()
        m = cache[k]
        if not m < 1:
            raise Unreached(f"|m(a + it)| is not certified below 1 at t = {float(t):.4g}")
        # the segment's level: halfway to 1, and at most (target t / (10 front))^(1/T), so that the segments'
        # bounds (each about front level^T width / t^2) add up to a fraction of the target
        allowed = min((1 + float(m)) / 2, (float(target.lower()) * float(t.lower()) / (10 * float(front.upper()))) ** (1 / times))
        count = max(1, math.floor((allowed - float(m)) / float(lip * h)))  # nodes k .. k + count - 1
        level = m + count * h * lip  # |m| on [kh, (k + count) h]
        bound += front * h * count * level ** times / (t * t)
        k += count
        points += 1
    if not (v / ((k - 1) * h)).upper() < 1 or points > MAX_NODES:
        raise Unreached("the decay bound V / t is not below 1 within the budget")
    start = (k - 1) * h
    bound += front * (v / start) ** times / ((times + 1) * start)
    return bound.upper(), points


ENVELOPES: dict = {}
"""Lip, V and |m| at the envelope's nodes per (q, D, direction, a, h) (independent of eps and T)."""


def one_step(q: Fraction, distance: Number, eps: Number, added: bool,
             bits: int = 120) -> arb:
    """delta_1(eps) in closed form: the loss ln lambda(x) is increasing in x, with inverse
    x(y) = (ln((e^y - (1 - q)) / q) + D^2/2) / D.  Added (mixture against N(0, 1)): P(x > x_eps) - e^eps
    Q(x > x_eps), P the mixture; removed: P(x < x_-eps) - e^eps Q(x < x_-eps), P = N(0, 1), Q the mixture
    (0 when e^-eps <= 1 - q: no output has a loss that large)."""
    with ctx.workprec(bits):
        qb, d, e = _ball(q), _ball(distance), _ball(eps)

        def cdf(x: arb) -> arb:  # from erfc on both sides: no cancellation far in the tails
            return (-x / arb(2).sqrt()).erfc() / 2

        def upper(x: arb) -> arb:
            return (x / arb(2).sqrt()).erfc() / 2

        def inverse(y: arb) -> arb:
            return (((y.exp() - (1 - qb)) / qb).log() + d * d / 2) / d
        if added:
            x = inverse(e)
            upper_q, upper_shift = upper(x), upper(x - d)
            return (1 - qb) * upper_q + qb * upper_shift - e.exp() * upper_q
        excess = (-e).exp() - (1 - qb)
        if excess.upper() <= 0:
            return arb(0)
        if not excess.lower() > 0:
            raise Unreached("e^-eps is too close to 1 - q for the working precision")
        x = inverse(-e)
        return cdf(x) - e.exp() * ((1 - qb) * cdf(x) + qb * cdf(x - d))


@dataclass(frozen=True)
class Certified:
    """delta_T(eps) in [lower, upper] (exact rationals: the arb ball's ends), its significant digits, how
    (``"closed form"`` or ``"mellin"``) and the Mellin plan (None for the closed form)."""

    lower: Fraction
    upper: Fraction
    digits: float
    how: str
    plan: Plan | None = None


def _fraction(x: arb) -> Fraction:
    man, exp = x.man_exp()
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def certified_delta(q: Fraction, distance: Number, times: int, eps: Number,
                    added: bool, digits: int = 12, plan: Plan | None = None) -> Certified:
    """delta_T(eps) of one direction certified: the closed form for T = 1, else :func:`mellin_delta` (on
    ``plan`` when given: the curve of a claim reuses its nodes); :class:`Unreached` beyond the budget."""
    if times == 1:
        value = one_step(q, distance, eps, added, int(digits * 3.33) + 60)
        enclosure = Enclosure(value, 0.0, 0.0, 0, 0)
        how = "closed form"
    else:
        enclosure = mellin_delta(q, distance, times, eps, added, digits, plan)
        how = "mellin"
    value = enclosure.value
    if not value.is_finite():
        raise Unreached("an enclosure is not finite (an integral's error bound was not established)")
    lower = max(_fraction(value.lower()), Fraction(0))
    return Certified(lower, _fraction(value.upper()), enclosure.digits, how, enclosure.plan)


def chernoff(q: Fraction, distance: Number, times: int, eps: Number, added: bool, a: Fraction) -> Fraction:
    """An upper bound of delta_T(eps) from one moment: (y - K)_+ <= c_a y^a K^(1 - a) with
    c_a = (a - 1)^(a - 1) / a^a (the maximum of (y - K) / y^a, at y = aK/(a - 1)), so delta_T(eps) <=
    c_a e^(eps(1 - a)) m(a)^T for every a > 1: a cheap bound for a direction far below the other."""
    with ctx.workprec(80):
        pair = Pair(_ball(q), _ball(distance), (q, distance))
        s, e = _ball(a), _ball(eps)
        m = pair.moment_upper(_exponent(acb(s), added).real, 40)
        bound = (s - 1) ** (s - 1) / s ** s * (e * (1 - s)).exp() * m ** times
        if not bound.is_finite():
            raise Unreached("the moment bound is not finite")
        return _fraction(bound.upper())
