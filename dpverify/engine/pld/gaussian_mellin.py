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

The budget (:class:`Budget`, one per route: every claim at a point shares it) counts integrand evaluations,
never time: each ``acb.integral`` is capped at EVAL_LIMIT evaluations (a capped integral returns a wider or
non-finite ball: still an enclosure), and none starts unless its cap fits in what is left of
MAX_EVALUATIONS (scaled by --max-work), so the planner's moments, the nodes, the envelope and the moment
bounds together never exceed it.  Values are memoised across routes (exact balls), but a route is charged
the counted cost of every value it uses once, computed or remembered: its verdicts do not depend on which
claims ran before it.  The node phase is also estimated before it starts (nodes times the cost of the
planner's last moment at the line), and refused at once when that estimate does not fit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Union

from flint import acb, arb, ctx

from .budget import HOW, scaled

MAX_NODES = 500
"""The most nodes of the trapezoid sum plus envelope points per (pair, T, direction) (a counted budget)."""
EVAL_LIMIT = 20_000
"""The most integrand evaluations of one ``acb.integral`` (its ``eval_limit``): beyond it the integral returns
the wider ball it reached (non-finite when nothing was established)."""
OVERSHOOT = 2_000
"""What one integral may cost beyond its eval_limit, counted against the budget before it starts: the last
subinterval's quadrature (arb checks the limit between subintervals; its degree is at most a few hundred)."""
MAX_EVALUATIONS = 1_000_000
"""Integrand evaluations per route (every claim at a point), scaled by --max-work: the planner's moments,
the nodes, the envelope, Lip and V, the moment bounds (a counted budget; about 10 s on a loaded machine)."""
MAX_BITS = 1_024
"""The most working precision of the nodes (bits grow with log2 T and the cancellation between terms)."""
TAIL_SIGMAS = 13
"""Half-width of the integration range of M(s) in standard deviations (tails bounded analytically)."""
VALUES: dict = {}
"""Every counted value (M(s) at a node or a planner's point, Lip, V) per (q, D, what, exact arguments, bits,
working precision): (the ball, the integrand evaluations it cost).  Shared by every route (exact balls,
deterministic); each route is charged the cost of the values it uses (:class:`Budget`)."""
EVALUATIONS = [0]
"""Integrand evaluations by ``acb.integral`` since import (the counter the budgets read)."""


class Unreached(Exception):
    """A bound could not be established within the budget (the reason is the message)."""


def _eval_limit() -> int:
    """EVAL_LIMIT at the run's --max-work."""
    return max(int(scaled(EVAL_LIMIT)), 1)


def _max_nodes() -> int:
    """MAX_NODES at the run's --max-work."""
    return int(scaled(MAX_NODES))


class Budget:
    """Integrand evaluations counted against ``limit`` (MAX_EVALUATIONS at the run's --max-work when None).

    :meth:`use` admits a value only when the caps of its integrals fit in what is left (so the spent count
    never exceeds the limit), then charges its counted cost -- the same whether the value is computed here
    or remembered from another route (each value once per budget): deterministic and independent of the
    order of the claims."""

    def __init__(self, limit: float | None = None) -> None:
        self.limit = int(scaled(MAX_EVALUATIONS) if limit is None else limit)
        self.spent = 0
        self.integrals = 0
        self.charged: set = set()

    def refusal(self, need: int, what: str = "the next integral") -> str:
        return (f"the Mellin route's budget of {self.limit:,} integrand evaluations would be exceeded "
                f"({self.spent:,} spent, {what} may take {need:,}); {HOW}")

    def admit(self, need: int, what: str = "the next integral") -> None:
        if self.spent + need > self.limit:
            raise Unreached(self.refusal(need, what))

    def use(self, key: tuple, integrals: int, compute: Callable[[], object]) -> object:
        """The value under ``key`` (memoised in VALUES), charged once per budget."""
        if key in self.charged:
            return VALUES[key][0]
        self.admit(integrals * (_eval_limit() + OVERSHOOT))
        if key not in VALUES:
            before = EVALUATIONS[0]
            try:
                value = compute()
            except BaseException:
                self.spent += EVALUATIONS[0] - before  # the work of a failed value counts too
                raise
            VALUES[key] = (value, EVALUATIONS[0] - before)
        value, cost = VALUES[key]
        self.spent += cost
        self.integrals += integrals
        self.charged.add(key)
        return value


def _exact_key(x: arb) -> tuple:
    """An arb ball's exact midpoint and radius (a memo key)."""
    return tuple(int(v) for v in (*x.mid().man_exp(), *x.rad().man_exp()))


def _s_key(s: acb) -> tuple:
    return _exact_key(s.real) + _exact_key(s.imag)


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

    def __init__(self, q: arb, distance: arb, key: tuple, budget: Budget | None = None) -> None:
        self.q, self.d, self.key = q, distance, key
        self.budget = Budget() if budget is None else budget
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
        def counted(z: acb, analytic: bool) -> acb:
            EVALUATIONS[0] += 1
            return f(z, analytic)
        return acb.integral(counted, lo, hi, rel_tol=arb(2) ** -bits, abs_tol=arb(2) ** -bits,
                            eval_limit=_eval_limit())

    def _counted(self, what: str, args: tuple, integrals: int, compute: Callable[[], object]) -> object:
        return self.budget.use((self.key, what, args, ctx.prec), integrals, compute)

    def moment(self, s: acb, bits: int) -> acb:
        """M(s) = E_{N(0,1)}[lambda(x)^s] (counted against the budget, memoised)."""
        return self._counted("M", (_s_key(s), bits), 1, lambda: self._moment(s, bits))

    def _moment(self, s: acb, bits: int) -> acb:
        """M(s): acb.integral on [L1, L2] plus the tails' bound as a radius."""
        sigma = s.real
        lo, hi = self._range(float(sigma.upper()))

        # the integrand of _lam and _integral inlined (the same operations in the same order: the same balls and
        # evaluation counts), without two Python calls and six attribute look-ups per evaluation
        q, d, shift, norm, counter = self.q, self.d, self.shift, self.norm, EVALUATIONS
        rest = 1 - q  # as _lam computes it, at this working precision

        def f(z: acb, analytic: bool) -> acb:
            counter[0] += 1
            return (s * (rest + q * (d * z - shift).exp()).log(analytic=analytic)).exp() * norm * (-(z * z) / 2).exp()

        body = acb.integral(f, lo, hi, rel_tol=arb(2) ** -bits, abs_tol=arb(2) ** -bits, eval_limit=_eval_limit())
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
        """An upper bound of E[lambda^sigma |ln lambda|] >= |M'(sigma + it)| for every t (counted, memoised)."""
        return self._counted("Lip", (_exact_key(sigma), bits), 2, lambda: self._lipschitz(sigma, bits))

    def _lipschitz(self, sigma: arb, bits: int) -> arb:
        lo, hi = self._range(float(sigma.upper()))
        body = self._pieces(lambda z, analytic: self._lam(z).log(analytic=analytic), [self.d / 2], sigma, bits)
        left = self._left_weight(sigma) * -(1 - self.q).log() * self._upper_tail(-lo)
        if sigma.lower() >= 0:  # lambda^sigma ln lambda <= e^(sigma(Dx - D^2/2)) (D x - D^2/2) right of D/2
            right = self.d * (-sigma * self.shift).exp() * self._right_tail(hi, sigma * self.d, -self.d / 2)
        else:
            right = self.d * self._right_tail(hi, arb(0), -self.d / 2)
        return (body + left + right).upper()

    def decay(self, sigma: arb, bits: int = 40) -> arb:
        """V with |M(sigma + it)| <= V / |t| (counted, memoised)."""
        return self._counted("V", (_exact_key(sigma), bits), 4, lambda: self._decay(sigma, bits))

    def _decay(self, sigma: arb, bits: int) -> arb:
        """V: int lambda^sigma |g'| dx, g = phi lambda / lambda', bounded by
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


def _log_m(pair: Pair, sigma: float, added: bool) -> float:
    """ln m(sigma) in floats (planning only; the moment is counted and memoised): +inf when m(sigma) overflows
    a float; :class:`Unreached` when its ball is not finite (the integral was not established)."""
    value = pair.moment(_exponent(acb(sigma), added), 30).real
    if not value.is_finite():
        raise Unreached(f"m({sigma}) was not established by the planner's integral (a non-finite ball within "
                        f"{_eval_limit():,} evaluations per integral; {HOW})")
    middle = float(value.mid())
    if not middle > 0:
        raise Unreached(f"m({sigma}) is not certified positive in floats")
    return math.log(middle)


@dataclass(frozen=True)
class Plan:
    """The line Re s = a, the strip's half-width d, the step h (floats: exact binary values), the log of the
    reference size of delta (the target is 10^-digits of it), the estimated last node, the extra bits
    that the cancellation between the terms costs, and the counted cost of one moment on the line (the
    planner's last one, at 20 bits): the node phase's estimate is nodes times it."""

    a: float
    d: float
    h: float
    eps: float
    reference: float
    nodes: int
    extra: int
    cost: int = 0


def _plan(pair: Pair, times: int, eps: float, added: bool, digits: int) -> Plan:
    """Chosen in floats, on a grid of 1/8 in sigma: a and d maximising the step h whose discretisation error
    is about 10^-digits of delta's estimate (e^F at the saddle of F(sigma) = T ln m(sigma) + eps(1 - sigma)
    - ln(sigma(sigma - 1)), over 2 pi); then the nodes needed, from |m(a + it)| at t growing by 1.25.  Only a
    plan: every error is bounded afterwards in arb.  Every moment is counted (memoised: replanning is free
    of integrals)."""
    def f(sigma: float) -> float:
        return times * _log_m(pair, sigma, added) + eps * (1 - sigma) - math.log(sigma * (sigma - 1))
    grid = [k / 8 for k in range(9, 8 * 24)]
    values = {}
    best_sigma, best = None, math.inf
    for sigma in grid:  # F is convex (log-convex m): walk until it rises
        values[sigma] = f(sigma)
        if not math.isfinite(values[sigma]):
            break  # m overflows a float from here on (F convex: the minimum, if any, is behind)
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
    if not (h > 0 and math.isfinite(h)):
        raise Unreached("no line and strip found for the trapezoid rule")
    h = 2.0 ** (math.floor(math.log2(h) * 4) / 4)  # a few steps only: shared memo keys
    extra = max(0, math.ceil((f(a) - math.log(2 * math.pi) - reference) / math.log(2)))
    t, cost = 8.0, 0
    while True:
        spent = pair.budget.spent
        size = float(abs(pair.moment(_exponent(acb(a, t), added), 20)).mid())
        cost = max(cost, pair.budget.spent - spent)  # 0 when this route already used the value: a lower estimate
        if not (size > 0 and times * math.log(size) + eps * (1 - a) - 2 * math.log(t) > goal - 2
                and t / h <= _max_nodes()):  # beyond the budget: no need to know how far
            break
        t *= 1.25
    return Plan(a, d, h, eps, reference, math.ceil(t / h), extra, cost)


def _node(pair: Pair, a: arb, t: arb, times: int, added: bool, bits: int) -> acb:
    return pair.moment(_exponent(acb(a, t), added), bits) ** times


def mellin_delta(q: Fraction, distance: Number, times: int, eps: Number,
                 added: bool, digits: int = 12, plan: Plan | None = None, budget: Budget | None = None) -> Enclosure:
    """delta_T(eps) of the ordered pair (mixture, N(0, 1)) (``added``) or (N(0, 1), mixture), composed
    ``times`` times, in an arb ball aimed at ``digits`` significant digits (on ``plan``, else on one chosen
    for this eps); :class:`Unreached` when a bound is not established within MAX_NODES nodes, MAX_BITS bits or
    the ``budget`` of integrand evaluations (a fresh :class:`Budget` when None), or T = 1 (use :func:`one_step`)."""
    if times < 2:
        raise Unreached("one step: the Mellin integral decays too slowly in t; use the closed form")
    budget = Budget() if budget is None else budget
    with ctx.workprec(60):
        pair = Pair(_ball(q), _ball(distance), (q, distance), budget)
        if not added and bool(times * -(1 - pair.q).log() < _ball(eps)):
            return Enclosure(arb(0), 0.0, 0.0, 0, 0)  # the removed direction's loss is at most -T ln(1 - q) < eps
        if plan is None:  # planned at eps rounded to a half: nearby eps share the plan and the nodes
            try:
                plan = _plan(pair, times, round(2 * _float(eps)) / 2, added, digits)
            except (ValueError, OverflowError, ZeroDivisionError) as exc:  # floats only choose: never decide
                raise Unreached(f"the plan's floats failed ({exc})") from None
    if plan.nodes > _max_nodes():
        raise Unreached(f"about {plan.nodes:,} nodes of the trapezoid sum needed (more than {_max_nodes():,}; {HOW})")
    bits = int(digits * 3.33) + 30 + times.bit_length() + plan.extra
    if bits > MAX_BITS:
        raise Unreached(f"{bits:,} bits of working precision needed (more than {MAX_BITS:,}: the terms cancel to "
                        f"about e^-{plan.extra * math.log(2):.3g} of their size)")
    budget.admit(plan.nodes * plan.cost, f"the {plan.nodes:,} nodes planned (at {plan.cost:,} evaluations each)")
    with ctx.workprec(bits + 20):
        pair = Pair(_ball(q), _ball(distance), (q, distance), budget)
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
        scale = (e * (1 - a)).exp() / (2 * arb.pi())
        # the reference size of delta moves with eps as the integrand's factor e^(eps(1 - a)) does
        reference = plan.reference + (_float(eps) - plan.eps) * (1 - plan.a)
        floor = arb(math.exp(reference - (digits + 4) * math.log(10)))
        total, k, quiet = acb(0), 0, 0
        while quiet < 8:  # sum until the terms stay below 10^-(digits+4) of the reference for 8 nodes
            t = k * h
            s = acb(a, t)
            term = _node(pair, a, t, times, added, bits) * scale * (e * acb(0, -t)).exp() / (s * (s - 1))
            total += term if k == 0 else 2 * term.real
            quiet = quiet + 1 if abs(term).upper() < floor else 0
            k += 1
            if k > _max_nodes():
                raise Unreached(f"more than {k - 1:,} nodes of the trapezoid sum ({HOW})")
        tail, envelope = _tail(pair, a, h, k, times, added, e, floor)
        value = h * total.real + arb(0, (discretisation + tail).upper())
        return Enclosure(value, plan.a, plan.h, k, envelope, plan)


def _tail(pair: Pair, a: arb, h: arb, first: int, times: int, added: bool, e: arb, target: arb) -> tuple[arb, int]:
    """An upper bound of h |sum_{|k| >= first} u(kh)|: envelope segments of |m| over n nodes from t = kh
    (|m(a + ikh)| plus n h Lip) up to t_V, then (V / t)^T.  Lip, V and |m| at the envelope's nodes do not
    depend on eps or T (counted and memoised by the pair).  (bound, envelope points)."""
    sigma = _exponent(acb(a), added).real
    lip, v = pair.lipschitz(sigma), pair.decay(sigma)
    front = (e * (1 - a)).exp() / arb.pi()
    # estimated before any of its moments: a segment stays below (1 + |m|)/2 < 1, so it spans at most
    # max(h, 1 / (2 Lip)) in t, and the envelope must reach t > V before V / t < 1
    span = max(float(h.upper()), 1 / (2 * float(lip.lower()))) if lip.lower() > 0 else math.inf
    needed = (float(v.lower()) - first * float(h.upper())) / span
    if needed > _max_nodes():
        raise Unreached(f"the envelope of the omitted nodes needs about {needed:,.0f} points up to t = V = "
                        f"{float(v.lower()):.3g} (more than {_max_nodes():,}; {HOW})")
    k, bound, points = first, arb(0), 0
    while True:
        # beyond kh: sum_{j >= k} <= (1/h) int_{kh-h}^inf (V/x)^T x^-2 dx = (V/(kh-h))^T / ((T+1)(kh-h) h)
        start = (k - 1) * h
        if (v / start).upper() < 1:
            beyond = front * (v / start) ** times / ((times + 1) * start)
            if beyond.upper() < target.lower() or points > _max_nodes():
                break
        t = k * h
        m = abs(pair.moment(_exponent(acb(a, t), added), 30)).upper()
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
    if not (v / ((k - 1) * h)).upper() < 1 or points > _max_nodes():
        raise Unreached(f"the decay bound V / t is not below 1 within {_max_nodes():,} envelope points ({HOW})")
    start = (k - 1) * h
    bound += front * (v / start) ** times / ((times + 1) * start)
    return bound.upper(), points


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


FRACTION_BITS = 4_096
"""Exponents of 2 beyond which an arb end is not turned into an exact Fraction (2^(10^28) would take forever):
a tiny one is rounded outwards to +-2^-FRACTION_BITS, a huge one refused."""


def _fraction(x: arb, up: bool = True) -> Fraction:
    """The exact binary value of the arb number ``x`` (an end of a ball); below 2^-FRACTION_BITS in magnitude,
    2^-FRACTION_BITS (``up``) or -2^-FRACTION_BITS (not ``up``): rounded outwards, still an end."""
    man, exp = (int(v) for v in x.man_exp())
    size = exp + abs(man).bit_length()
    if man != 0 and size < -FRACTION_BITS:
        return Fraction(1 if up else -1, 2 ** FRACTION_BITS)
    if size > FRACTION_BITS:
        raise Unreached(f"a bound beyond 2^{FRACTION_BITS:,}")
    return Fraction(man) * Fraction(2) ** exp


def certified_delta(q: Fraction, distance: Number, times: int, eps: Number, added: bool, digits: int = 12,
                    plan: Plan | None = None, budget: Budget | None = None) -> Certified:
    """delta_T(eps) of one direction certified: the closed form for T = 1, else :func:`mellin_delta` (on
    ``plan`` when given: the curve of a claim reuses its nodes; counted against ``budget``, a fresh one when
    None); :class:`Unreached` beyond the budget."""
    if times == 1:
        value = one_step(q, distance, eps, added, int(digits * 3.33) + 60)
        enclosure = Enclosure(value, 0.0, 0.0, 0, 0)
        how = "closed form"
    else:
        enclosure = mellin_delta(q, distance, times, eps, added, digits, plan, budget)
        how = "mellin"
    value = enclosure.value
    if not value.is_finite():
        raise Unreached("an enclosure is not finite (an integral's error bound was not established)")
    lower = max(_fraction(value.lower(), up=False), Fraction(0))
    return Certified(lower, _fraction(value.upper()), enclosure.digits, how, enclosure.plan)


def chernoff(q: Fraction, distance: Number, times: int, eps: Number, added: bool, a: Fraction,
             budget: Budget | None = None) -> Fraction:
    """An upper bound of delta_T(eps) from one moment: (y - K)_+ <= c_a y^a K^(1 - a) with
    c_a = (a - 1)^(a - 1) / a^a (the maximum of (y - K) / y^a, at y = aK/(a - 1)), so delta_T(eps) <=
    c_a e^(eps(1 - a)) m(a)^T for every a > 1: a cheap bound for a direction far below the other (1 when
    that is not below 1: delta <= 1).  The moment is counted against ``budget``."""
    with ctx.workprec(80):
        pair = Pair(_ball(q), _ball(distance), (q, distance), budget)
        s, e = _ball(a), _ball(eps)
        m = pair.moment_upper(_exponent(acb(s), added).real, 40)
        bound = (s - 1) ** (s - 1) / s ** s * (e * (1 - s)).exp() * m ** times
        if not bound.is_finite():
            raise Unreached("the moment bound is not finite")
        if not bound.upper() < 1:
            return Fraction(1)
        return _fraction(bound.upper())
