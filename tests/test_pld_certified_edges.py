"""Edge-case cross-checks of the certified numerics of composed privacy profiles: every enclosure the engine
returns must contain a value computed here (or embedded here) without any dpverify code.

Engine paths: the subsampled Gaussian's closed form (T = 1) and Mellin inversion
(``engine/pld/gaussian_mellin.py``), its grid bracket (``pld_gaussian_tight.one_step_tight`` composed by
``pld_gaussian_mixture.compose`` and bounded by ``pld_bounds.delta_bounds``, as
``checks/composition/mixture.py`` calls them), the subsampled Laplace's closed form and certified integral
(``pld_laplace_mixture``) and lattice bracket (``pld_laplace_mixture_bounds``), and plain Laplace
compositions (``pld_bounds.discretise``).

References (mpmath only):

* subsampled Gaussian, T = 1: the hockey-stick integral in closed form with mpmath's ncdf at 60 digits,
  rewritten so that nothing cancels (``_g_delta1``; checked against direct quadrature of the two
  densities, split at the sign change, in the slow test);
* T = 2: E_P[delta_1(eps - L(x))] by mpmath.quad over the first output, split where the inner level
  crosses its kink, at 40 and 50 digits (the two agree to 1e-41 or better), embedded to 30 digits
  (``_g_delta2`` recomputes some in the slow test);
* T = 10, 100: the Mellin line integral evaluated independently (M(s) by mpmath.quad at 30 digits, the
  trapezoid rule on lines Re s = a and steps h other than the engine's; two (a, h) per value, agreeing to
  17+ digits, aliasing checked by the Poisson summation formula), embedded;
* subsampled Laplace: the closed form at the monotone loss's inverse (and quadrature with a numerical root
  in the slow test) for T = 1, mpmath.quad of the closed form for T = 2, nested quadrature for T = 3;
* plain Laplace: an exact decomposition -- P_T = e^(s/2) nu^{*T} with nu = (e^(-t/2)/2)(delta_t + delta_-t +
  t Unif(-t, t)) -- the sums of uniforms integrated piecewise (Irwin-Hall densities) by mpmath.quad.

The edge grid: q in {1e-4, 0.01, 0.5, 0.99, 1}, the centres 1/50 to 20 noise scales apart, eps in
{0, 1e-3, 1/2, 5, 30} (and negative eps where the engine takes it), both orders of every pair.
"""
from __future__ import annotations

from fractions import Fraction as F

import mpmath
import pytest

from dpverify.engine.pld import gaussian_mellin as mellin
from dpverify.engine.program.backend import IntervalBackend
from dpverify.engine.pld.bounds import delta_bounds, discretise
from dpverify.engine.pld.gaussian_mixture import compose
from dpverify.engine.pld.gaussian_tight import one_step_tight
from dpverify.engine.pld.laplace_mixture import Unreached as LaplaceUnreached
from dpverify.engine.pld.laplace_mixture import certified_delta as laplace_certified
from dpverify.engine.pld.laplace_mixture_bounds import bounds as lattice_bounds
from dpverify.engine.pld.laplace_mixture_bounds import discretised as lattice, top_loss

DPS = 60


def _mp(x: F) -> mpmath.mpf:
    """x as an mpf; a dyadic x (every engine end is one) exactly, by shifting its exponent (dividing by a
    2^2772658 denominator through mpmath's integer conversion would take seconds)."""
    d = x.denominator
    if d & (d - 1) == 0:
        return mpmath.ldexp(mpmath.mpf(x.numerator), 1 - d.bit_length())
    return mpmath.mpf(x.numerator) / d


def _arb_ends(ball) -> tuple[F, F]:
    """The exact ends of a python-flint arb ball (rounded outwards by arb at the current precision)."""
    out = []
    for end in (ball.lower(), ball.upper()):
        man, exp = end.man_exp()
        out.append(F(int(man)) * F(2) ** int(exp))
    return out[0], out[1]


def _contains(lower: F, upper: F, ref: mpmath.mpf, slack: mpmath.mpf = mpmath.mpf(0)) -> bool:
    """lower <= ref <= upper, compared exactly at DPS digits (ref +- its own error ``slack``)."""
    with mpmath.workdps(DPS):
        return _mp(lower) <= ref + slack and ref - slack <= _mp(upper)


# ---------------------------------------------------------------------------------------------------------
# the Poisson-subsampled Gaussian: P = (1 - q) N(0, 1) + q N(D, 1) against N(0, 1) ("added"), and reverse
# ---------------------------------------------------------------------------------------------------------

def _g_loss(x, q, D):
    return mpmath.log1p(q * mpmath.expm1(D * x - D * D / 2))


def _g_inverse(y, q, D):
    """x with L(x) = y, None where e^y <= 1 - q."""
    excess = mpmath.expm1(y) + q
    return None if excess <= 0 else (mpmath.log(excess / q) + D * D / 2) / D


def _g_delta1(y, q, D, added):
    """delta_1 at any real level y: added, P(x > x_y) - e^y Q(x > x_y) = q (Qbar(x - D) - e^(Dx - D^2/2) Qbar(x));
    removed, Phi(x) (1 - e^y (1 - q)) - e^y q Phi(x - D) at x = x_(-y)."""
    if added:
        x = _g_inverse(y, q, D)
        if x is None:
            return -mpmath.expm1(y)
        return q * (mpmath.ncdf(D - x) - mpmath.exp(D * x - D * D / 2) * mpmath.ncdf(-x))
    x = _g_inverse(-y, q, D)
    if x is None:
        return mpmath.mpf(0)
    e = mpmath.exp(y)
    return mpmath.ncdf(x) * (1 - e * (1 - q)) - e * q * mpmath.ncdf(x - D)


def _g_cuts(D, extra):
    points = {mpmath.mpf(c) for c in range(-12, 13)} | {D + c for c in range(-12, 13)}
    points |= {mpmath.mpf(e) for e in extra if e is not None}
    return [-mpmath.inf, *sorted(points), mpmath.inf]


def _g_delta1_quad(eps, q, D, added):
    """delta_1 by quadrature of (p - e^eps r)_+ over the output, split at the one sign change."""
    mix = lambda x: (1 - q) * mpmath.npdf(x) + q * mpmath.npdf(x, D)  # noqa: E731
    p, r = (mix, mpmath.npdf) if added else (mpmath.npdf, mix)
    e = mpmath.exp(eps)
    cut = _g_inverse(eps if added else -eps, q, D)
    if cut is None:
        return 1 - e if added else mpmath.mpf(0)
    pieces = [c for c in _g_cuts(D, [cut]) if (c >= cut if added else c <= cut)]
    return mpmath.quad(lambda x: p(x) - e * r(x), pieces)


def _g_delta2(eps, q, D, added):
    """delta_2 = E_P[delta_1(eps - loss(x))] by mpmath.quad, split where the inner level meets its kink."""
    if added:
        p = lambda x: (1 - q) * mpmath.npdf(x) + q * mpmath.npdf(x, D)  # noqa: E731
        kink = _g_inverse(eps - mpmath.log1p(-q), q, D)
        f = lambda x: p(x) * _g_delta1(eps - _g_loss(x, q, D), q, D, True)  # noqa: E731
    else:
        kink = _g_inverse(-mpmath.log1p(-q) - eps, q, D)
        f = lambda x: mpmath.npdf(x) * _g_delta1(eps + _g_loss(x, q, D), q, D, False)  # noqa: E731
    return mpmath.quad(f, _g_cuts(D, [kink]))


QS = [F(1, 10000), F(1, 100), F(1, 2), F(99, 100), F(1)]
DISTANCES = [F(1, 50), F(2, 5), F(2), F(20)]  # sensitivity / sigma: 1/50, 2/5 (sigma 5, 2/5 x 2), 2 and 20
EPSILONS = [F(0), F(1, 1000), F(1, 2), F(5), F(30)]


@pytest.mark.parametrize("added", [True, False])
@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("distance", DISTANCES)
@pytest.mark.parametrize("q", QS)
def test_gaussian_one_step_contains_the_closed_form(q, distance, eps, added):
    found = mellin.certified_delta(q, distance, 1, eps, added)
    with mpmath.workdps(DPS):
        ref = _g_delta1(_mp(eps), _mp(q), _mp(distance), added)
    assert _contains(found.lower, found.upper, ref), (float(found.lower), float(found.upper), ref)


@pytest.mark.parametrize("q, distance, eps, added", [
    (F(1, 2), F(1), F(-1, 2), True), (F(1, 2), F(1), F(-1, 2), False), (F(99, 100), F(2), F(-5), False),
    (F(1, 100), F(20), F(-1, 1000), True), (F(1), F(2), F(-1, 2), True)])
def test_gaussian_one_step_below_zero_where_defined(q, distance, eps, added):
    """Negative eps (not reachable from a claim: profile refuses eps < 0) where e^eps > 1 - q: still contained."""
    found = mellin.certified_delta(q, distance, 1, eps, added)
    with mpmath.workdps(DPS):
        ref = _g_delta1(_mp(eps), _mp(q), _mp(distance), added)
    assert _contains(found.lower, found.upper, ref)


def test_gaussian_one_step_below_one_minus_q_is_unreached_not_wrong():
    """e^eps <= 1 - q: delta_1 = 1 - e^eps; the closed form's logarithm is undefined there and the engine says
    Unreached (never a wrong ball)."""
    with pytest.raises(mellin.Unreached):
        mellin.certified_delta(F(1, 100), F(1), 1, F(-1, 2), True)


# the grid bracket (the route's fallback beyond the Mellin budget), T = 2, against E_P[delta_1(eps - L)]
T2_REFERENCES = {  # (q, D) -> {(eps, added): delta_2(eps) to 30 digits}
    (F(1, 10000), F(2)): {
        (F(0), True): "0.000119945785530033368273416621138", (F(0), False): "0.000119945785530033368273416621138",
        (F(1, 1000), True): "0.0000528736115253438208852428638667", (F(1, 1000), False): "0",
        (F(1, 2), True): "0.0000000241787381977743381236275302836", (F(1, 2), False): "0",
        (F(5), True): "2.5053570670320050543397520357e-14", (F(5), False): "0"},
    (F(1, 100), F(1, 5)): {
        (F(0), True): "0.00113273731580890204061053786953", (F(0), False): "0.00113273731580890204061053786953",
        (F(1, 1000), True): "0.000728962194310629600127489771668",
        (F(1, 1000), False): "0.000675932623862783124575779554552",
        (F(1, 2), True): "2.14710056356898966105316040733e-100", (F(1, 2), False): "0"},
    (F(1, 100), F(1)): {
        (F(0), True): "0.00594399042354436472376620293115", (F(0), False): "0.00594399042354436472376620293115",
        (F(1, 1000), True): "0.00561152335547897745457397820943",
        (F(1, 1000), False): "0.00530634485980552833092184108699",
        (F(1, 2), True): "0.000000449721218476613259370818300513", (F(1, 2), False): "0",
        (F(5), True): "9.02738189591862554719987830665e-23", (F(5), False): "0"},
    (F(1, 2), F(1)): {
        (F(0), True): "0.272630282440043560786856387304", (F(0), False): "0.272630282440043560786856387304",
        (F(1, 1000), True): "0.272328857611768008910123442529",
        (F(1, 1000), False): "0.272204477739752263642165293061",
        (F(1, 2), True): "0.147920133410954162437488188269", (F(1, 2), False): "0.0853238599600938245459965760713",
        (F(5), True): "0.00000637386805025690947705121377657", (F(5), False): "0"},
    (F(99, 100), F(2)): {
        (F(0), True): "0.83449635069690313715805192422", (F(0), False): "0.83449635069690313715805192422",
        (F(1, 1000), True): "0.834415811383598258519840953338",
        (F(1, 1000), False): "0.834411357908743380256549564409",
        (F(1, 2), True): "0.79096371313613633007979662982", (F(1, 2), False): "0.788141706746538864071086263623",
        (F(5), True): "0.246876082737437992972906022345", (F(5), False): "0.177672340559918047971939491526"},
}
GRID = (500, 0.05, 6.0)  # mixture.GRIDS[0]
_BRACKETS: dict = {}


def _grid_bracket(q: F, distance: F, times: int):
    key = (q, distance, times)
    if key not in _BRACKETS:
        backend = IntervalBackend(20)
        ctx = backend.ctx
        h = ctx.mpf(1) / GRID[0]
        _BRACKETS[key] = (backend, compose(one_step_tight(ctx, backend.num(q), backend.num(distance), h, *GRID[1:]),
                                           times, h))
    return _BRACKETS[key]


def _grid_cases(shapes):
    return [pytest.param(q, d, eps, added, ref, marks=marks) for (q, d), marks in shapes
            for (eps, added), ref in T2_REFERENCES[(q, d)].items()]


@pytest.mark.parametrize("q, distance, eps, added, ref", _grid_cases(
    [((F(1, 10000), F(2)), ()), ((F(1, 100), F(1, 5)), ()), ((F(1, 100), F(1)), pytest.mark.slow),
     ((F(1, 2), F(1)), pytest.mark.slow), ((F(99, 100), F(2)), pytest.mark.slow)]))
def test_gaussian_grid_bracket_contains_two_steps(q, distance, eps, added, ref):
    backend, found = _grid_bracket(q, distance, 2)
    bounds = delta_bounds(backend.ctx, found[0 if added else 1], backend.num(eps))
    with mpmath.workdps(DPS):
        low, high = mpmath.mpf(bounds.lower.a), mpmath.mpf(bounds.upper.b)
        value = mpmath.mpf(ref)
        assert low <= value * (1 + mpmath.mpf(10) ** -28) and value * (1 - mpmath.mpf(10) ** -28) <= high, (low, value, high)


# the Mellin inversion, T >= 2: independent values of the same line integral on other lines and steps
MELLIN_REFERENCES = [  # (q, D, T, eps, added, value, its error (two plans' difference, at least 1e-20 relative))
    (F(1, 2), F(1), 10, F(1, 2), True, "0.4701967666033283216971771", "1e-20"),
    (F(99, 100), F(1), 10, F(1, 2), False, "0.8490292437824856132809732", "1e-17"),
    (F(1, 2), F(1), 100, F(30), False, "8.225156013940178654767544e-8", "1e-27"),
    (F(1, 100), F(1), 100, F(1, 2), True, "0.0001274981309882752947966787", "1e-24"),
    (F(1, 100), F(1), 100, F(0), False, "0.05066997992733189471234742", "1e-21"),
]


@pytest.mark.parametrize("q, distance, times, eps, added, ref, error", MELLIN_REFERENCES)
def test_mellin_enclosure_contains_an_independent_inversion(q, distance, times, eps, added, ref, error):
    found = mellin.certified_delta(q, distance, times, eps, added, 8)
    assert found.how == "mellin" and found.digits > 4
    with mpmath.workdps(DPS):
        assert _contains(found.lower, found.upper, mpmath.mpf(ref), mpmath.mpf(error))


@pytest.mark.parametrize("q, distance, times", [(F(1, 100), F(1), 100), (F(1, 2), F(1), 10)])
def test_mellin_directions_agree_at_zero(q, distance, times):
    """At eps = 0 both orders give the total variation distance: the two certified balls must overlap."""
    a, b = (mellin.certified_delta(q, distance, times, F(0), added, 8) for added in (True, False))
    assert a.lower <= b.upper and b.lower <= a.upper


# ---------------------------------------------------------------------------------------------------------
# the Poisson-subsampled Laplace: P0 = Laplace(0, 1) against M = (1 - q) P0 + q Laplace(t, 1), and reverse
# ---------------------------------------------------------------------------------------------------------

class _Laplace:
    """One run of the pair (added: (M, P0), removed: (P0, M)); loss ln lambda resp. -ln lambda."""

    def __init__(self, q, t, added):
        self.q, self.t, self.added = q, t, added
        lo, hi = mpmath.log1p(q * mpmath.expm1(-t)), mpmath.log1p(q * mpmath.expm1(t))
        if added:
            self.atoms = [(lo, (1 - q) / 2 + q * mpmath.exp(-t) / 2), (hi, (1 - q) * mpmath.exp(-t) / 2 + q / 2)]
        else:
            self.atoms = [(-hi, mpmath.exp(-t) / 2), (-lo, mpmath.mpf(1) / 2)]
        self.lo, self.hi = self.atoms[0][0], self.atoms[1][0]

    def loss(self, x):
        v = mpmath.log1p(self.q * mpmath.expm1(2 * x - self.t))
        return v if self.added else -v

    def density(self, x):
        if self.added:
            return (1 - self.q) * mpmath.exp(-x) / 2 + self.q * mpmath.exp(x - self.t) / 2
        return mpmath.exp(-x) / 2

    def x_of(self, level):
        lam = mpmath.exp(level if self.added else -level)
        return (self.t + mpmath.log((lam - 1 + self.q) / self.q)) / 2

    def delta1(self, y):
        q, t = self.q, self.t
        if y < self.lo:
            return -mpmath.expm1(y)
        if y >= self.hi:
            return mpmath.mpf(0)
        x, e = self.x_of(y), mpmath.exp(y)
        if self.added:  # S = (x, oo)
            return (1 - q) * mpmath.exp(-x) / 2 + q * (1 - mpmath.exp(x - t) / 2) - e * mpmath.exp(-x) / 2
        p = 1 - mpmath.exp(-x) / 2  # S = (-oo, x)
        return p - e * ((1 - q) * p + q * mpmath.exp(x - t) / 2)

    def delta1_quad(self, eps):
        q, t = self.q, self.t
        p0 = lambda x: mpmath.exp(-abs(x)) / 2  # noqa: E731
        mix = lambda x: (1 - q) * p0(x) + q * mpmath.exp(-abs(x - t)) / 2  # noqa: E731
        p, r = (mix, p0) if self.added else (p0, mix)
        f = lambda x: p(x) - mpmath.exp(eps) * r(x)  # noqa: E731
        cuts = [-mpmath.inf, mpmath.mpf(0), t, mpmath.inf]
        tiny = mpmath.mpf(10) ** (-mpmath.mp.dps + 5)
        if f(tiny) * f(t - tiny) < 0:
            cuts.insert(2, mpmath.findroot(f, (tiny, t - tiny), solver="anderson"))
        return sum(max(mpmath.quad(f, [u, v]), 0) for u, v in zip(cuts, cuts[1:]))

    def _cuts(self, eps, levels):
        cuts = {mpmath.mpf(0), self.t}
        for level in levels:
            if self.lo < eps - level < self.hi:
                cuts.add(self.x_of(eps - level))
        return sorted(cuts)

    def delta2(self, eps):
        total = sum(m * self.delta1(eps - loss) for loss, m in self.atoms)
        return total + mpmath.quad(lambda x: self.density(x) * self.delta1(eps - self.loss(x)),
                                   self._cuts(eps, [self.lo, self.hi]))

    def delta3(self, eps):
        total = sum(m * self.delta2(eps - loss) for loss, m in self.atoms)
        return total + mpmath.quad(lambda x: self.density(x) * self.delta2(eps - self.loss(x)),
                                   self._cuts(eps, [2 * self.lo, self.lo + self.hi, 2 * self.hi]))


LAPLACE_QS = [F(1, 10000), F(1, 100), F(1, 2), F(99, 100)]
LAPLACE_TS = [F(1, 50), F(2, 5), F(1), F(4), F(20)]  # sensitivity / b


@pytest.mark.parametrize("added", [True, False])
@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("t", LAPLACE_TS)
@pytest.mark.parametrize("q", LAPLACE_QS)
def test_laplace_one_step_contains_the_closed_form(q, t, eps, added):
    low, high = _arb_ends(laplace_certified(q, t, 1, eps, added))
    with mpmath.workdps(DPS):
        ref = _Laplace(_mp(q), _mp(t), added).delta1(_mp(eps))
    assert _contains(low, high, ref)


def test_laplace_outside_its_range_is_unreached():
    for q, t in ((F(1), F(1)), (F(0), F(1)), (F(1, 2), F(0))):
        with pytest.raises(LaplaceUnreached):
            laplace_certified(q, t, 1, F(1, 2), True)


LAPLACE_T2 = [  # (q, t, eps, added, delta_2 to 30 digits)
    (F(1, 10000), F(1), F(0), True, "0.0000576113279949375776691294744555"),
    (F(1, 10000), F(1), F(0), False, "0.0000576113279949375776691294744555"),
    (F(1, 10000), F(1), F(1, 1000), True, "0"),
    (F(1, 100), F(1), F(0), True, "0.00574713837303423313500570506407"),
    (F(1, 100), F(1), F(1, 1000), True, "0.00532156700161984908094496343871"),
    (F(1, 100), F(1), F(1, 1000), False, "0.00518902460992565530310970299959"),
    (F(1, 100), F(20), F(0), True, "0.0198987255468397297690798676483"),
    (F(1, 100), F(20), F(1, 1000), False, "0.0189181665089311739815713736063"),
    (F(1, 100), F(20), F(1, 2), True, "0.0198926125920774954331815198526"),
    (F(1, 100), F(20), F(5), True, "0.0197903013845649376902408335923"),
    (F(1, 100), F(20), F(30), True, "0.0000193188374827778499602055101829"),
    (F(1, 100), F(20), F(1, 2), False, "0"),
    (F(1, 2), F(1, 25), F(0), True, "0.0100935156265454304946753966757"),
    (F(1, 2), F(1, 25), F(1, 1000), True, "0.00965145602509740574064866646601"),
    (F(1, 2), F(1, 25), F(1, 1000), False, "0.00983410965275716052380674973797"),
    (F(1, 2), F(2, 5), F(0), False, "0.104838887580959850959945363204"),
    (F(1, 2), F(2, 5), F(1, 1000), True, "0.104256746480038239257718679548"),
    (F(1, 2), F(2, 5), F(1, 1000), False, "0.104525780031237352461478081326"),
    (F(99, 100), F(4), F(0), True, "0.938610847616234633589119528824"),
    (F(99, 100), F(4), F(1, 2), True, "0.919472430920896204656805938746"),
    (F(99, 100), F(4), F(1, 2), False, "0.924052945541505607010303740703"),
    (F(99, 100), F(4), F(5), True, "0.595230837924974710558719826047"),
    (F(99, 100), F(4), F(5), False, "0.521703804715261142977725870707"),
    (F(99, 100), F(4), F(30), True, "0"),
]


@pytest.mark.parametrize("q, t, eps, added, ref", LAPLACE_T2)
def test_laplace_two_steps_contains_the_quadrature(q, t, eps, added, ref):
    low, high = _arb_ends(laplace_certified(q, t, 2, eps, added))
    with mpmath.workdps(DPS):
        value = mpmath.mpf(ref)
        assert _contains(low, high, value, value * mpmath.mpf(10) ** -28)


LAPLACE_T3 = [  # (q, t, eps, added, delta_3 by nested quadrature at 40 digits, to 20 digits)
    (F(1, 100), F(1, 5), F(0), True, "0.0014190710429282067"),
    (F(1, 100), F(1, 5), F(0), False, "0.0014190710429282067"),
]


def _lattice_bracket(q, t, added, times, eps, steps=1000):
    backend = IntervalBackend(20)
    ctx = backend.ctx
    qi, ti = backend.num(q), backend.num(t)
    e = backend.num(eps)
    if e.a >= (times * top_loss(ctx, qi, ti, added)).b:
        return mpmath.mpf(0), mpmath.mpf(0)
    found = lattice_bounds(ctx, lattice(ctx, qi, ti, added, times, steps), e)
    return mpmath.mpf(found.lower.a), mpmath.mpf(found.upper.b)


@pytest.mark.parametrize("q, t, eps, added, ref", LAPLACE_T3)
def test_laplace_lattice_bracket_contains_three_steps(q, t, eps, added, ref):
    low, high = _lattice_bracket(q, t, added, 3, eps)
    with mpmath.workdps(DPS):
        value = mpmath.mpf(ref)
        assert low <= value * (1 + mpmath.mpf(10) ** -18) and value * (1 - mpmath.mpf(10) ** -18) <= high


@pytest.mark.parametrize("q, t, eps, added, ref", [c for c in LAPLACE_T2 if c[2] in (F(0), F(1, 1000))][:6])
def test_laplace_lattice_bracket_contains_the_certified_two_steps(q, t, eps, added, ref):
    low, high = _lattice_bracket(q, t, added, 2, eps, steps=400)
    with mpmath.workdps(DPS):
        value = mpmath.mpf(ref)
        assert low <= value * (1 + mpmath.mpf(10) ** -28) and value * (1 - mpmath.mpf(10) ** -28) <= high


# ---------------------------------------------------------------------------------------------------------
# plain Laplace releases composed T times (routes.Laplace: 16 and 64 grid steps per distance)
# ---------------------------------------------------------------------------------------------------------

def _plain_laplace(t, times, eps):
    """delta_T(eps) of T Laplace releases t scales apart, exactly: int (e^(s/2) - e^(eps - s/2))_+ d nu^{*T}."""
    g = lambda s: mpmath.exp(s / 2) - mpmath.exp(eps - s / 2)  # noqa: E731
    total = mpmath.mpf(0)
    for i in range(times + 1):
        for j in range(times + 1 - i):
            k = times - i - j
            coef = mpmath.factorial(times) / (mpmath.factorial(i) * mpmath.factorial(j) * mpmath.factorial(k))
            shift = (i - j) * t
            if k == 0:
                total += coef * max(g(shift), 0)
                continue

            def density(s, k=k):  # the sum of k Unif(-t, t) at s: Irwin-Hall at (s/t + k)/2, over 2t
                v = (s / t + k) / 2
                return sum((-1) ** m * mpmath.binomial(k, m) * (v - m) ** (k - 1) for m in range(k + 1)
                           if v - m > 0) / mpmath.factorial(k - 1) / (2 * t)
            knots = [shift + t * (2 * m - k) for m in range(k + 1)]
            start = max(knots[0], eps)
            points = sorted({start, knots[-1]} | {x for x in knots if start < x < knots[-1]})
            if points[0] < points[-1]:
                total += coef * t ** k * mpmath.quad(lambda s: g(s) * density(s - shift), points)
    return (mpmath.exp(-t / 2) / 2) ** times * total


@pytest.mark.parametrize("grid", [16, 64])
@pytest.mark.parametrize("eps", [F(0), F(1, 1000), F(1, 2), F(5)])
@pytest.mark.parametrize("t", [F(1, 50), F(1), F(20)])
@pytest.mark.parametrize("times", [1, 2, 3])
def test_plain_laplace_bracket_contains_the_exact_value(times, t, eps, grid):
    backend = IntervalBackend(20)
    found = discretise(backend.ctx, [grid] * times, backend.num(t) / grid)
    bounds = delta_bounds(backend.ctx, found, backend.num(eps))
    with mpmath.workdps(40):
        ref = _plain_laplace(_mp(t), times, _mp(eps))
        slack = abs(ref) * mpmath.mpf(10) ** -30 + mpmath.mpf(10) ** -35  # the alternating sums' rounding
        assert mpmath.mpf(bounds.lower.a) <= ref + slack and ref - slack <= mpmath.mpf(bounds.upper.b)


# ---------------------------------------------------------------------------------------------------------
# slow: the references themselves, recomputed (and a longer composition)
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("q, distance, eps, added", [
    (F(1, 100), F(1), F(1, 2), True), (F(1, 2), F(1), F(1, 2), False), (F(99, 100), F(2), F(5), True),
    (F(1, 10000), F(2), F(1, 1000), True)])
def test_slow_gaussian_references_recomputed(q, distance, eps, added):
    with mpmath.workdps(40):
        q_, d_, e_ = _mp(q), _mp(distance), _mp(eps)
        closed, quad = _g_delta1(e_, q_, d_, added), _g_delta1_quad(e_, q_, d_, added)
        assert abs(closed - quad) <= mpmath.mpf(10) ** -30 * closed + mpmath.mpf(10) ** -35
        two = _g_delta2(e_, q_, d_, added)
        assert abs(two - mpmath.mpf(T2_REFERENCES[(q, distance)][(eps, added)])) <= mpmath.mpf(10) ** -28 * two


@pytest.mark.slow
@pytest.mark.parametrize("q, t, eps, added, ref", [LAPLACE_T2[4], LAPLACE_T2[9], LAPLACE_T2[20]])
def test_slow_laplace_references_recomputed(q, t, eps, added, ref):
    with mpmath.workdps(40):
        pair = _Laplace(_mp(q), _mp(t), added)
        assert abs(pair.delta1(_mp(eps)) - pair.delta1_quad(_mp(eps))) <= mpmath.mpf(10) ** -30
        assert abs(pair.delta2(_mp(eps)) - mpmath.mpf(ref)) <= mpmath.mpf(10) ** -28 * mpmath.mpf(ref)


@pytest.mark.slow
@pytest.mark.parametrize("q, t, eps, added, ref", LAPLACE_T3)
def test_slow_laplace_three_steps_recomputed(q, t, eps, added, ref):
    with mpmath.workdps(40):
        value = _Laplace(_mp(q), _mp(t), added).delta3(_mp(eps))
        # the nested quadrature reproduces itself to about 15 digits only (recomputed: 0.00141907104292820999...)
        assert abs(value - mpmath.mpf(ref)) <= mpmath.mpf(10) ** -13 * value


@pytest.mark.slow
@pytest.mark.parametrize("t, eps", [(F(1), F(1, 2)), (F(2, 5), F(1))])
def test_slow_plain_laplace_ten_runs(t, eps):
    backend = IntervalBackend(20)
    found = discretise(backend.ctx, [16] * 10, backend.num(t) / 16)
    bounds = delta_bounds(backend.ctx, found, backend.num(eps))
    with mpmath.workdps(40):
        ref = _plain_laplace(_mp(t), 10, _mp(eps))
        assert mpmath.mpf(bounds.lower.a) <= ref <= mpmath.mpf(bounds.upper.b)
