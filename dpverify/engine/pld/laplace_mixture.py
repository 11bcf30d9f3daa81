"""delta_T(eps) of the Poisson-subsampled Laplace, certified (python-flint arb) for T = 1 and 2.

In units of the scale b the two laws are P0 = Laplace(0, 1) and the mixture M = (1 - q) P0 + q P1,
P1 = Laplace(t, 1), t = sensitivity / b.  The likelihood ratio M/P0 is lambda(x) = 1 - q + q r(x) with
r = e^(-t) for x <= 0, e^(2x - t) on (0, t), e^t for x >= t: the loss is monotone in x, constant
outside (0, t) -- two atoms and a continuous part.  "added" is the ordered pair (M, P0), loss
ln lambda; "removed" is (P0, M), loss -ln lambda.

* T = 1 (:func:`one_step`): delta_1(y) = P(S) - e^y Q(S), S = {loss > y} a half-line whose end
  x*(y) = (t + ln((e^(+-y) - 1 + q)/q))/2 is closed form: a finite sum of exponentials (for every
  real y: 1 - e^y below the lower atom, 0 at or above the upper one).
* T = 2 (:func:`two_steps`): delta_2(eps) = E_P[delta_1(eps - L)] = the two atoms' terms plus
  int_0^t p(x) delta_1(eps - L(x)) dx, certified by ``acb.integral``; the integrand is analytic
  except where eps - L(x) crosses an atom's loss (its branch changes): the integrand reports a ball
  straddling such a point as non-analytic (the integrator bisects there) and, for the crude bound,
  returns the union of both branches.  The log and square root are evaluated with the integrator's
  ``analytic`` flag (NaN where a complex ball meets their branch cut), so every bound it uses is of an
  analytic continuation of the integrand on that piece.

T >= 3 is not certified here (:class:`Unreached`): callers answer ``unknown``.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from flint import acb, arb, ctx


class Unreached(Exception):
    """delta_T could not be certified (the reason is the message)."""


def _ball(value: Fraction) -> arb:
    return arb(value.numerator) / value.denominator


def _log(z, analytic: bool):
    """ln z; for a complex ball in the integrator's analytic mode, NaN where it meets the branch cut."""
    return z.log(analytic=analytic) if isinstance(z, acb) else z.log()


def _sqrt(z, analytic: bool):
    return z.sqrt(analytic=analytic) if isinstance(z, acb) else z.sqrt()


@dataclass
class Step:
    """One run of a direction: the loss's atoms (low, high) with their P-masses, and the continuous part."""

    q: arb
    t: arb
    added: bool

    @property
    def atoms(self) -> list[tuple[arb, arb]]:
        """[(loss, P-mass)] of the two atoms, lowest loss first."""
        q, t = self.q, self.t
        low, high = (1 - q + q * (-t).exp()).log(), (1 - q + q * t.exp()).log()
        if self.added:
            return [(low, (1 - q) / 2 + q * (-t).exp() / 2), (high, (1 - q) * (-t).exp() / 2 + q / 2)]
        return [(-high, (-t).exp() / 2), (-low, arb(1) / 2)]

    def loss(self, x, analytic: bool = False):
        """The loss at x in (0, t) (arb or acb)."""
        value = _log(1 - self.q + self.q * (2 * x - self.t).exp(), analytic)
        return value if self.added else -value

    def density(self, x):
        """The P-density at x in (0, t)."""
        if self.added:
            return (1 - self.q) * (-x).exp() / 2 + self.q * (x - self.t).exp() / 2
        return (-x).exp() / 2

    def middle(self, y, analytic: bool = False):
        """delta_1(y) for y strictly between the atoms' losses (arb or acb): the closed form at x*(y)."""
        q, t = self.q, self.t
        u = ((y if self.added else -y).exp() - 1 + q) / q  # r(x*) = u, e^(x*) = e^(t/2) sqrt(u)
        e_x = (t / 2).exp() * _sqrt(u, analytic)
        if self.added:  # S = (x*, oo): P = M, Q = P0
            return (1 - q) / (2 * e_x) + q * (1 - e_x * (-t).exp() / 2) - y.exp() / (2 * e_x)
        p_s = 1 - 1 / (2 * e_x)  # S = (-oo, x*): P = P0, Q = M
        return p_s - y.exp() * ((1 - q) * p_s + q * e_x * (-t).exp() / 2)

    def branch(self, y, which: int, analytic: bool = False):
        """delta_1(y) on branch 0 (below the low atom), 1 (between), 2 (at or above the high one)."""
        if which == 0:
            return 1 - y.exp()
        if which == 2:
            return y * 0
        return self.middle(y, analytic)

    def sides(self, y: arb) -> list[int]:
        """The branches a real ball y may lie on (one when it is separated from both atoms' losses)."""
        (low, _), (high, _) = self.atoms
        return [k for k, meets in enumerate((not y >= low, not (y <= low or y >= high), not y < high)) if meets]

    def delta1(self, y: arb) -> arb:
        """delta_1(y) for a real ball y (every real y: the excess is P(S) - e^y Q(S) for the half-line S); a
        ball meeting an atom's loss gets the union of both branches (delta_1 is continuous there)."""
        out = None
        for k in self.sides(y):
            value = self.branch(y, k)
            out = value if out is None else out.union(value)
        return out


def _step(q: Fraction, t: Fraction, added: bool) -> Step:
    if not (0 < q < 1 and t > 0):
        raise Unreached(f"the rate {q} is not in (0, 1) or the distance {t} is not positive")
    return Step(_ball(q), _ball(t), added)


def one_step(q: Fraction, t: Fraction, eps: Fraction, added: bool, bits: int = 200) -> arb:
    """delta_1(eps) of one direction, in closed form (an arb ball at ``bits`` bits)."""
    with ctx.workprec(bits):
        return _step(q, t, added).delta1(_ball(eps))


def two_steps(q: Fraction, t: Fraction, eps: Fraction, added: bool, bits: int = 120) -> arb:
    """delta_2(eps) of one direction: the atoms' terms in closed form plus the certified integral of the
    continuous part's P-density times delta_1(eps - L(x)) over (0, t)."""
    with ctx.workprec(bits):
        step = _step(q, t, added)
        e = _ball(eps)
        (low, p_low), (high, p_high) = step.atoms
        total = p_low * step.delta1(e - low) + p_high * step.delta1(e - high)

        def integrand(x: acb, analytic: bool) -> acb:
            y = e - step.loss(x, analytic)
            if not y.is_finite():  # the log's branch cut met (analytic mode): the integrator bisects
                return acb("nan")
            sides = step.sides(y.real)
            if len(sides) == 1:
                return step.density(x) * step.branch(y, sides[0], analytic)
            if analytic:  # the branch changes inside the ball: the integrator bisects
                return acb("nan")
            values = [step.density(x) * step.branch(y, k) for k in sides]
            real, imag = values[0].real, values[0].imag
            for v in values[1:]:
                real, imag = real.union(v.real), imag.union(v.imag)
            return acb(real, imag)

        part = acb.integral(integrand, 0, step.t, rel_tol=arb(2) ** (-bits + 20), eval_limit=10 ** 6, depth_limit=10 ** 4)
        total += part.real
        if not total.is_finite():
            raise Unreached("the integral's error bound was not established")
        return total


def certified_delta(q: Fraction, t: Fraction, times: int, eps: Fraction, added: bool, bits: int = 120) -> arb:
    """delta_T(eps) of one direction for T = 1 or 2; :class:`Unreached` for larger T."""
    if times == 1:
        return one_step(q, t, eps, added, bits)
    if times == 2:
        return two_steps(q, t, eps, added, bits)
    raise Unreached(f"the subsampled Laplace is certified for T = 1 and 2 only (T = {times})")
