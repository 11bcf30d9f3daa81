"""Claims: the statements a spec makes about its mechanism.

A claim only describes; the checks in :mod:`dpverify.checks` decide it.
Parameters in a claim are sympy expressions in the spec's symbols, evaluated
exactly at every grid point.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

import sympy

from ..errors import SpecError, call_help
from .params import refuse_float, refuse_floats


EXPECTATIONS = (None, "refuted")


@dataclass(frozen=True)
class Claim:
    """Base of every claim: an id (unique in its spec) and what is expected of it.

    ``expect="refuted"`` marks a statement known to be false (a published
    broken mechanism, a formula that fails outside its domain): the run is
    green only if it *is* refuted, like a strict xfail.

    Class attributes say how the claim is run: ``needs_mechanism`` (it is
    about the spec's program and universe) and ``per_point`` (it is decided
    at every grid point; a claim that is not quantifies over its own symbols).
    """

    id: Optional[str] = field(default=None, kw_only=True)
    expect: Optional[str] = field(default=None, kw_only=True)
    kind = "claim"
    needs_mechanism = True
    per_point = True

    def __post_init__(self) -> None:
        if self.expect not in EXPECTATIONS:
            raise SpecError(f"{self.kind}: expect={self.expect!r} is not an expectation",
                            "use expect='refuted' for a claim known to be false, or leave it out")

    def describe(self) -> str:
        return self.kind


def _certainly_negative(number: sympy.Expr) -> bool:
    """Whether a constant is certainly below 0: by sympy's assumptions, else by a strict evaluation (whose
    sign is right when it is not zero).  Undecided is not negative: a range check refuses only what it
    knows to be out of range, since sympy cannot always order a true delta against 1 (e.g.
    (e^40000 - 3 e^20001) / (e^40000 + 8 e^30000))."""
    if number.is_negative is not None:
        return bool(number.is_negative)
    try:
        value = sympy.N(number, 30, strict=True)
    except Exception:  # PrecisionExhausted and friends: undecided
        return False
    return value.is_negative is True


def _expression(value: Any, what: str, fn: str) -> sympy.Expr:
    """A claimed value as an exact sympy expression in the parameters (floats refused)."""
    if isinstance(value, float):
        raise refuse_float(value, f"{fn}: {what}")
    try:
        expr = sympy.sympify(value, strict=True)
    except (sympy.SympifyError, TypeError):
        raise SpecError(f"{fn}: {what}={value!r} is not a number or sympy expression",
                        f"write {what} in the spec's parameter symbols, e.g. eps or 2*eps") from None
    if expr.is_number:
        if expr.has(sympy.nan, sympy.zoo) or expr.is_real is False or expr.is_finite is False:
            raise SpecError(f"{fn}: {what}={value!r} is not a finite real number", f"use a finite {what}")
    return refuse_floats(expr, f"{fn}: {what}")


@dataclass(frozen=True)
class Private(Claim):
    """(epsilon, delta)-differential privacy under the spec's neighbour relation.

    For every ordered pair of neighbouring datasets (X, X') and every set S of
    outputs, P(M(X) in S) <= e^epsilon P(M(X') in S) + delta.  With delta = 0
    this is checked output by output; with delta > 0 by the hockey-stick
    divergence.  Under the label-only relation this is label-DP.
    """

    epsilon: sympy.Expr = sympy.Integer(0)
    delta: sympy.Expr = sympy.Integer(0)
    kind = "private"

    def describe(self) -> str:
        return f"{self.epsilon}-DP" if self.delta == 0 else f"({self.epsilon}, {self.delta})-DP"


@call_help("dp.private(eps) or dp.private(eps, delta=Fraction(1, 10**6))",
           epsilon="the claimed epsilon, e.g. eps or 2*eps")
def private(epsilon: Any, delta: Any = 0, *, id: Optional[str] = None,
            expect: Optional[str] = None) -> Private:
    """Claim (epsilon, delta)-DP; epsilon and delta may be expressions in the parameters."""
    eps = _expression(epsilon, "epsilon", "private")
    dlt = _expression(delta, "delta", "private")
    if eps.is_number and not eps.is_nonnegative:
        raise SpecError(f"private: epsilon={epsilon!r} must be >= 0", "use a non-negative epsilon")
    if dlt.is_number and (_certainly_negative(dlt) or (dlt >= 1) is sympy.true or _certainly_negative(1 - dlt)):
        raise SpecError(f"private: delta={delta!r} must lie in [0, 1)", "use 0 for pure DP or a small delta")
    return Private(epsilon=eps, delta=dlt, id=id, expect=expect)


@dataclass(frozen=True)
class SameDistribution(Claim):
    """The mechanism and ``other`` have identical output distributions on every dataset."""

    other: Optional[Callable[..., Any]] = None
    kind = "same_distribution"

    def describe(self) -> str:
        return f"same distribution as {getattr(self.other, '__name__', 'other')}"


@call_help("dp.same_distribution(other_mech)", other="the other mechanism, with the same arguments")
def same_distribution(other: Callable[..., Any], *, id: Optional[str] = None,
                      expect: Optional[str] = None) -> SameDistribution:
    """Claim that ``other`` (same signature as the mechanism) has the same output law everywhere."""
    if not callable(other):
        raise SpecError(f"same_distribution: other={other!r} is not callable",
                        "pass the other mechanism function, with the same arguments as the spec's")
    return SameDistribution(other=other, id=id, expect=expect)


@dataclass(frozen=True)
class Conforms(SameDistribution):
    """An implementation (``dp.implementation``) has exactly the law of the spec program ``other``.

    Decided as :class:`SameDistribution` (exactly, dataset by dataset, a refutation naming
    the dataset, the output and both probabilities).  Exact means exact: an implementation
    that computes its probabilities in floats has the law of those floats, and differs from
    the real-valued spec by their rounding (a refutation with a difference near 1e-17).

    With a ``tolerance`` t > 0 the claim is weaker, and says so: every output probability on
    every dataset is within t of the spec's, |P_impl(o|X) - P_spec(o|X)| <= t (decided by
    :mod:`dpverify.checks.audit.conforms`).
    """

    tolerance: sympy.Expr = sympy.Integer(0)
    kind = "conforms"

    def describe(self) -> str:
        name = getattr(self.other, '__name__', 'the spec program')
        return f"conforms to {name}" + (f" within {self.tolerance}" if self.tolerance != 0 else "")


@call_help("dp.conforms(spec_program) or dp.conforms(spec_program, tolerance=Fraction(1, 2**50))",
           spec_program="the spec's mechanism program, with the same parameters")
def conforms(spec_program: Callable[..., Any], *, tolerance: Any = 0, id: Optional[str] = None,
             expect: Optional[str] = None) -> Conforms:
    """Claim that the spec's mechanism (an implementation) has the same output law as ``spec_program``
    on every dataset of the universe, at every grid point: exactly (the default), or with every
    output probability within ``tolerance`` (an exact number, e.g. Fraction(1, 2**50))."""
    if not callable(spec_program):
        raise SpecError(f"conforms: spec_program={spec_program!r} is not callable",
                        "pass the spec's mechanism function, e.g. dp.conforms(randomized_response)")
    bound = _expression(tolerance, "tolerance", "conforms")
    if not bound.is_number or not (bound.is_nonnegative and (bound < 1) is sympy.true):
        raise SpecError(f"conforms: tolerance={tolerance!r} must be a number in [0, 1)",
                        "use 0 for the exact law, or a small bound such as Fraction(1, 2**50)")
    return Conforms(other=spec_program, tolerance=bound, id=id, expect=expect)


@dataclass(frozen=True)
class Calibrated(Claim):
    """Grey-box replay: the implementation's noise is calibrated as the spec program's.

    The implementation runs with a real seeded generator on two neighbouring datasets, same seed
    (:mod:`dpverify.checks.audit.replay`).  Its noise calls, matched in order with the spec
    program's, must cost no more than the spec's: for call k, |fed(X) - fed(X')| / scale <=
    Delta_k / scale_k, where fed is the value the noise is added to (plus its ``loc``) and Delta_k
    the sensitivity of the spec's k-th centre, derived over the universe.  Randomness is sampled
    (``seeds`` seeds per pair, at most ``pairs`` pairs): a pass is ``consistent``, never ``verified``.
    """

    other: Optional[Callable[..., Any]] = None
    seeds: int = 3
    pairs: int = 500
    seed: int = 0
    kind = "calibrated"

    def describe(self) -> str:
        return f"noise calibrated as {getattr(self.other, '__name__', 'the spec program')}"


@call_help("dp.calibrated(spec_program) or dp.calibrated(spec_program, seeds=3, pairs=500)",
           spec_program="the spec's mechanism program, with the same parameters",
           seeds="seeds replayed per neighbouring pair (seed, seed + 1, ...)",
           pairs="the most neighbouring pairs run: all of them when the universe has no more, else a "
                 "hypothesis search of that many examples",
           seed="the first seed")
def calibrated(spec_program: Callable[..., Any], *, seeds: int = 3, pairs: int = 500, seed: int = 0,
               id: Optional[str] = None, expect: Optional[str] = None) -> Calibrated:
    """Claim that the implementation's noise calls are calibrated as ``spec_program``'s: decided by
    grey-box replay (same seed on neighbouring datasets), ``refuted`` with an exactly re-confirmed
    witness or ``consistent`` within the budget of ``pairs`` x ``seeds`` replays.

    >>> import dpverify as dp
    >>> def spec(data, eps):
    ...     return dp.laplace(sum(data), 1 / eps)
    >>> dp.calibrated(spec).describe()
    'noise calibrated as spec'
    """
    if not callable(spec_program):
        raise SpecError(f"calibrated: spec_program={spec_program!r} is not callable",
                        "pass the spec's mechanism function, e.g. dp.calibrated(laplace_sum)")
    for what, value, low in (("seeds", seeds, 1), ("pairs", pairs, 1), ("seed", seed, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise SpecError(f"calibrated: {what}={value!r} is not an integer >= {low}", f"pass {what} as an int")
    return Calibrated(other=spec_program, seeds=seeds, pairs=pairs, seed=seed, id=id, expect=expect)


@dataclass(frozen=True)
class Renyi(Claim):
    """(alpha, epsilon)-Rényi DP (Mironov 2017): for every ordered pair of neighbouring datasets,
    D_alpha(M(X) || M(X')) = 1/(alpha - 1) ln sum_o P(o|X)^alpha P(o|X')^(1 - alpha) <= epsilon
    (an integral of densities for released values).  alpha > 1 is exact (a number or an expression
    in the parameters); alpha = oo is pure DP, claimed with :func:`private`."""

    alpha: sympy.Expr = sympy.Integer(2)
    epsilon: sympy.Expr = sympy.Integer(0)
    kind = "renyi"

    def describe(self) -> str:
        return f"({self.alpha}, {self.epsilon})-RDP"


@call_help("dp.renyi(2, eps**2) or dp.renyi(alpha, alpha * rho)",
           alpha="the Rényi order, an exact number > 1 or an expression, e.g. 2 or Rational(3, 2)",
           epsilon="the claimed bound on D_alpha, e.g. eps or 2*eps")
def renyi(alpha: Any, epsilon: Any, *, id: Optional[str] = None, expect: Optional[str] = None) -> Renyi:
    """Claim (alpha, epsilon)-Rényi DP: D_alpha(M(X) || M(X')) <= epsilon for all ordered neighbours.

    >>> import dpverify as dp
    >>> dp.renyi(2, 1).describe()
    '(2, 1)-RDP'
    """
    if alpha is sympy.oo or alpha == float("inf"):
        raise SpecError("renyi: alpha=oo is Rényi DP of infinite order, which is pure DP",
                        "claim it as dp.private(eps)")
    order = _expression(alpha, "alpha", "renyi")
    eps = _expression(epsilon, "epsilon", "renyi")
    if order.is_number and not (order > 1) is sympy.true:
        raise SpecError(f"renyi: alpha={alpha!r} must be > 1",
                        "use an order above 1, e.g. 2 or Rational(3, 2) (order 1 is the KL divergence)")
    if eps.is_number and not eps.is_nonnegative:
        raise SpecError(f"renyi: epsilon={epsilon!r} must be >= 0", "use a non-negative epsilon")
    return Renyi(alpha=order, epsilon=eps, id=id, expect=expect)


@dataclass(frozen=True)
class Zcdp(Claim):
    """rho-zero-concentrated DP (Bun and Steinke 2016): for every ordered pair of neighbouring
    datasets and every order alpha > 1, D_alpha(M(X) || M(X')) <= rho * alpha."""

    rho: sympy.Expr = sympy.Integer(0)
    kind = "zcdp"

    def describe(self) -> str:
        return f"{self.rho}-zCDP"


@call_help("dp.zcdp(rho) or dp.zcdp(eps**2 / 2)", rho="the claimed rho, e.g. rho or eps**2/2")
def zcdp(rho: Any, *, id: Optional[str] = None, expect: Optional[str] = None) -> Zcdp:
    """Claim rho-zCDP: D_alpha(M(X) || M(X')) <= rho * alpha for every alpha > 1 and all ordered neighbours.

    >>> import dpverify as dp
    >>> dp.zcdp(1).describe()
    '1-zCDP'
    """
    value = _expression(rho, "rho", "zcdp")
    if value.is_number and not value.is_nonnegative:
        raise SpecError(f"zcdp: rho={rho!r} must be >= 0", "use a non-negative rho, e.g. eps**2/2")
    return Zcdp(rho=value, id=id, expect=expect)


@dataclass(frozen=True)
class Profile(Claim):
    """A privacy profile of the ``times``-fold composition of the mechanism: for every ordered pair of
    neighbouring datasets (X, X') and every listed eps_i, the hockey-stick divergence of the T runs'
    joint laws is delta_T(eps_i) = sup_S P(M^T(X) in S) - e^eps_i P(M^T(X') in S) <= delta_i.
    The T runs are independent, on the same pair (non-adaptive composition); times = 1 is the
    mechanism itself.  Decided by :mod:`dpverify.checks.composition`."""

    epsilons: tuple = ()
    deltas: tuple = ()
    times: int = 1
    also: tuple = ()  # (program, runs) composed with the mechanism's runs, on the same datasets
    source: Optional[str] = None  # who stated the deltas (an accountant, a paper): the report compares sources
    kind = "profile"

    def describe(self) -> str:
        pairs = ", ".join(f"delta({_readable(e)}) <= {_readable(d)}" for e, d in zip(self.epsilons, self.deltas))
        others = "".join(f" + {getattr(p, '__name__', 'program')} x {t}" for p, t in self.also)
        runs = "" if self.times == 1 and not others else f"{self.times}-fold{others}: "
        return _short(f"{runs}{pairs}")


@call_help("dp.profile(at=[1, 2], delta=Rational(1, 10**5), times=100) or dp.profile(at=[1, 2], delta=[d1, d2])",
           at="the epsilons where delta is claimed, e.g. [1, 2] or [eps, 2*eps]",
           delta="the claimed delta: one value for every epsilon, or a list as long as at=")
def profile(at: Any, delta: Any, *, times: int = 1, also: Any = (), source: Optional[str] = None,
            id: Optional[str] = None, expect: Optional[str] = None) -> Profile:
    """Claim delta_T(eps) <= delta at every eps of ``at`` for the ``times``-fold composition of the
    mechanism (independent runs on the same neighbouring pair), composed also with every program of
    ``also`` (a program with the mechanism's signature, run once, or a pair (program, runs)).

    ``source`` names who stated the deltas (e.g. ``"dp_accounting PLDAccountant"``): it decides nothing,
    but the report draws every source's claims of one composition in one plot against the exact
    delta_T(eps), with one table of their ratios.

    >>> import dpverify as dp
    >>> from sympy import Rational
    >>> dp.profile(at=[1, 2], delta=[Rational(1, 10), Rational(1, 100)], times=10).describe()
    '10-fold: delta(1) <= 1/10, delta(2) <= 1/100'
    """
    if isinstance(times, bool) or not isinstance(times, int) or times < 1:
        raise SpecError(f"profile: times={times!r} is not an integer >= 1",
                        "pass the number of independent runs composed, e.g. times=100")
    if isinstance(at, (str, bytes)) or not hasattr(at, "__iter__"):
        at = [at]
    epsilons = tuple(_expression(e, "at", "profile") for e in at)
    if not epsilons:
        raise SpecError("profile: at= is empty", "list the epsilons where delta is claimed, e.g. at=[1, 2]")
    if isinstance(delta, (str, bytes)) or not hasattr(delta, "__iter__"):
        delta = [delta] * len(epsilons)
    deltas = tuple(_expression(d, "delta", "profile") for d in delta)
    if len(deltas) != len(epsilons):
        raise SpecError(f"profile: {len(deltas)} deltas for {len(epsilons)} epsilons",
                        "give one delta for every epsilon of at=, or a single delta for all of them")
    for e in epsilons:
        if e.is_number and not e.is_nonnegative:
            raise SpecError(f"profile: the epsilon {e} is negative", "list epsilons >= 0 in at=")
    for d in deltas:
        if d.is_number and (_certainly_negative(d) or _certainly_negative(1 - d)):
            raise SpecError(f"profile: delta={d} must lie in [0, 1]", "use a delta between 0 and 1")
    if source is not None and (not isinstance(source, str) or not source.strip()):
        raise SpecError(f"profile: source={source!r} is not a name",
                        "name who stated the deltas as a string, e.g. source='dp_accounting PLDAccountant'")
    others = []
    for item in (also if isinstance(also, (list, tuple)) and not (len(also) == 2 and isinstance(also[1], int)
                                                                  and callable(also[0])) else [also]):
        program, runs = item if isinstance(item, tuple) and len(item) == 2 else (item, 1)
        if not callable(program) or isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
            raise SpecError(f"profile: also contains {item!r}, which is not a program or a pair (program, runs)",
                            "pass programs with the mechanism's signature, e.g. also=[other] or also=[(other, 10)]")
        others.append((program, runs))
    return Profile(epsilons=epsilons, deltas=deltas, times=times, also=tuple(others), source=source, id=id,
                   expect=expect)


@dataclass(frozen=True)
class Gdp(Claim):
    """mu-Gaussian DP (Dong, Roth and Su 2019) of the ``times``-fold composition: every ordered pair of
    neighbouring datasets has a tradeoff curve above G_mu, equivalently (Corollary 2.13 there) for every
    eps >= 0, delta_T(eps) <= Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).  Decided by
    :mod:`dpverify.checks.composition.gdp`."""

    mu: sympy.Expr = sympy.Integer(1)
    times: int = 1
    kind = "gdp"

    def describe(self) -> str:
        return f"{self.mu}-GDP" + (f" ({self.times}-fold)" if self.times > 1 else "")


@call_help("dp.gdp(mu) or dp.gdp(1 / sigma, times=10)", mu="the claimed mu > 0, e.g. 1/sigma")
def gdp(mu: Any, *, times: int = 1, id: Optional[str] = None, expect: Optional[str] = None) -> Gdp:
    """Claim mu-Gaussian DP of the ``times``-fold composition of the mechanism.

    >>> import dpverify as dp
    >>> dp.gdp(1, times=4).describe()
    '1-GDP (4-fold)'
    """
    if isinstance(times, bool) or not isinstance(times, int) or times < 1:
        raise SpecError(f"gdp: times={times!r} is not an integer >= 1",
                        "pass the number of independent runs composed, e.g. times=100")
    value = _expression(mu, "mu", "gdp")
    if value.is_number and not value.is_positive:
        raise SpecError(f"gdp: mu={mu!r} must be > 0", "use a positive mu, e.g. 1/sigma for a Gaussian of sensitivity 1")
    return Gdp(mu=value, times=times, id=id, expect=expect)


_RELATIONS = (sympy.core.relational.Relational, sympy.And, sympy.Or, sympy.Not)


def _side(value: Any, what: str, fn: str) -> sympy.Expr:
    """One side of a formula claim: a finite real sympy expression (symbols allowed)."""
    condition = isinstance(value, sympy.logic.boolalg.Boolean) and not isinstance(value, sympy.Expr)
    if condition or isinstance(value, bool):  # (a sympy Symbol is both a Boolean and an Expr)
        raise SpecError(f"{fn}: {what}={value!r} is a condition, not an expression",
                        f"pass the two sides separately, e.g. dp.{fn}(f(x), 0, where=[x > 0])")
    expr = _expression(value, what, fn)
    if not isinstance(expr, sympy.Expr):
        raise SpecError(f"{fn}: {what}={value!r} is not a real expression (it is a {type(expr).__name__})",
                        f"write {what} as a sympy expression in real symbols")
    return expr


def _conditions(where: Any, fn: str) -> tuple[sympy.Basic, ...]:
    """The ``where`` conditions: sympy relations (or And/Or/Not of them); always-true ones dropped."""
    if isinstance(where, (sympy.Basic, bool)):
        where = [where]
    try:
        items = list(where)
    except TypeError:
        raise SpecError(f"{fn}: where={where!r} is not a list of conditions",
                        "pass a list of sympy relations, e.g. where=[b > 1, x >= -r, x <= r]") from None
    out = []
    for cond in items:
        if cond is True or cond is sympy.true:
            continue  # already implied by the symbols' assumptions (e.g. r > 0 for a positive r)
        if cond is False or cond is sympy.false:
            raise SpecError(f"{fn}: a condition in where={items!r} is always false",
                            "check the condition: with the symbols' assumptions nothing satisfies it")
        if not isinstance(cond, _RELATIONS):
            raise SpecError(f"{fn}: where contains {cond!r}, which is not a relation",
                            "write conditions as sympy relations such as x >= -r (not strings or numbers)")
        out.append(cond)
    return tuple(out)


def _real_symbols(fn: str, *parts: sympy.Basic) -> None:
    for part in parts:
        for sym in sorted(part.free_symbols, key=lambda s: s.name):
            if sym.is_real is not True:
                raise SpecError(f"{fn}: the symbol {sym} is not declared real",
                                f"create it with dp.symbol({sym.name!r}) (real is implied), adding "
                                "positive=True or integer=True as it is meant")
    named: dict = {}
    for sym in set().union(*(part.free_symbols for part in parts)):
        other = named.setdefault(sym.name, sym)
        if other is not sym:  # one name, two symbols (other assumptions): read as one variable by name
            raise SpecError(f"{fn}: two different symbols are both named {sym.name!r} (created with different "
                            "assumptions), so the claim would read them as one variable",
                            "give the symbols different names, or use one symbol object for both")


@dataclass(frozen=True)
class Identity(Claim):
    """lhs = rhs for every value of the symbols allowed by their assumptions and ``where``.

    The claim quantifies over its own symbols (it is not evaluated at grid
    points): ``dp.identity(f(x) + f(-x), 2*r, where=[x >= -r, x <= r])``
    states: for all real x, r, b with the symbols' assumptions and the
    conditions, f(x) + f(-x) = 2r.  Points where a side is undefined (a zero
    denominator, the log of a non-positive number) are outside its domain.
    """

    lhs: sympy.Expr = sympy.Integer(0)
    rhs: sympy.Expr = sympy.Integer(0)
    where: tuple[sympy.Basic, ...] = ()
    kind = "identity"
    needs_mechanism = False
    per_point = False

    def describe(self) -> str:
        return _short(f"{self.lhs} = {self.rhs}")


@dataclass(frozen=True)
class Inequality(Claim):
    """lhs <= rhs (lhs < rhs if ``strict``) for every value the assumptions and ``where`` allow."""

    lhs: sympy.Expr = sympy.Integer(0)
    rhs: sympy.Expr = sympy.Integer(0)
    where: tuple[sympy.Basic, ...] = ()
    strict: bool = False
    kind = "inequality"
    needs_mechanism = False
    per_point = False

    def describe(self) -> str:
        return _short(f"{self.lhs} {'<' if self.strict else '<='} {self.rhs}")


def _readable(value: sympy.Expr) -> str:
    """A number as a claim prints it: a float's exact binary value (a rational over 2^k, as an accountant's
    answer becomes) by the float's shortest repr, which names that value and no other; else as sympy does."""
    if isinstance(value, sympy.Rational) and not value.is_Integer and value.q & (value.q - 1) == 0 and value.q >= 2 ** 16:
        number = float(value)
        if sympy.Rational(number) == value:
            return repr(number)
    return str(value)


def _short(text: str, width: int = 100) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


@call_help("dp.identity((x + 1)**2, x**2 + 2*x + 1, where=[x > 0])")
def identity(lhs: Any, rhs: Any, *, where: Any = (), id: Optional[str] = None,
             expect: Optional[str] = None) -> Identity:
    """Claim lhs = rhs for all values of the symbols (their assumptions and ``where``).

    >>> import dpverify as dp
    >>> x = dp.symbol("x")
    >>> dp.identity((x + 1)**2, x**2 + 2*x + 1).kind
    'identity'
    """
    left, right = _side(lhs, "lhs", "identity"), _side(rhs, "rhs", "identity")
    conds = _conditions(where, "identity")
    _real_symbols("identity", left, right, *conds)
    return Identity(lhs=left, rhs=right, where=conds, id=id, expect=expect)


@call_help("dp.inequality(2*x, x**2 + 1, where=[x > 0], strict=False)")
def inequality(lhs: Any, rhs: Any, *, where: Any = (), strict: bool = False, id: Optional[str] = None,
               expect: Optional[str] = None) -> Inequality:
    """Claim lhs <= rhs (lhs < rhs with ``strict=True``) for all values of the symbols.

    >>> import dpverify as dp
    >>> x = dp.symbol("x")
    >>> dp.inequality(2*x, x**2 + 1).describe()
    '2*x <= x**2 + 1'
    """
    if not isinstance(strict, bool):
        raise SpecError(f"inequality: strict={strict!r} is not a bool", "use strict=True for <, or leave it out")
    left, right = _side(lhs, "lhs", "inequality"), _side(rhs, "rhs", "inequality")
    conds = _conditions(where, "inequality")
    _real_symbols("inequality", left, right, *conds)
    return Inequality(lhs=left, rhs=right, where=conds, strict=strict, id=id, expect=expect)


# ----- sensitivity ------------------------------------------------------------------------

from .queries import Query as _Query  # noqa: E402  (kept with the claim that uses it)
from .universe import RELATIONS as _NEIGHBOUR_RELATIONS, Neighbours as _Neighbours  # noqa: E402


@dataclass(frozen=True)
class Sensitivity(Claim):
    """The global sensitivity of ``query`` is ``bound`` (``exact``) or at most ``bound``, a function
    of the dataset size n.

    Delta(n) = max |q(X) - q(X')| over neighbouring datasets X, X' of size n
    (under add/remove: X of size n, X' = X minus one record).  For a score
    u(X, y) the maximum is also over the ``candidates`` y.  ``equals=`` claims
    Delta(n) = bound for every n (a loose bound is refuted, with the exact value);
    ``at_most=`` claims Delta(n) <= bound (a loose bound holds, flagged loose).
    The claim quantifies over every integer n >= ``n_min`` (not over the grid), and
    is about the query, not the mechanism: it uses the spec's universe (if any)
    only for the record domain and the relation it does not state itself.
    """

    query: Any = None
    bound: sympy.Expr = sympy.Integer(0)
    exact: bool = True
    n: Optional[sympy.Symbol] = None
    neighbours: Any = None
    n_min: Optional[int] = None
    candidates: Optional[tuple] = None
    kind = "sensitivity"
    needs_mechanism = False
    per_point = False

    def describe(self) -> str:
        return f"sensitivity of {self.query.describe()} {'=' if self.exact else '<='} {self.bound}"


@call_help("dp.sensitivity(dp.count(lambda r: r == 1), 1) or dp.sensitivity(q, at_most=2 / n)",
           query="the query, e.g. dp.count(lambda r: r == 1)")
def sensitivity(query: Any, equals: Any = None, *, at_most: Any = None, neighbours: Any = None,
                n: Optional[sympy.Symbol] = None, n_min: Optional[int] = None, candidates: Any = None,
                id: Optional[str] = None, expect: Optional[str] = None) -> Sensitivity:
    """Claim that ``query`` (built with dp.count/total/mean/max_of/min_of or dp.query) has global
    sensitivity exactly ``equals`` -- or at most ``at_most`` -- for every dataset size n >= ``n_min``.

    Give one of the two: ``equals`` means equal (a claim above the true sensitivity is refuted,
    with the exact value), ``at_most`` an upper bound.  The value is an expression in the size
    symbol ``n`` (found in it when it has one symbol); ``neighbours`` defaults to the spec
    universe's relation; ``candidates`` is required for a score u(X, y).

    >>> import dpverify as dp
    >>> m = dp.symbol("m", integer=True, positive=True)
    >>> dp.sensitivity(dp.mean(lambda v: v, domain=dp.interval(0, 1)), 1 / m).n
    m
    >>> dp.sensitivity(dp.count(lambda r: r), at_most=2).describe()
    'sensitivity of count(t) <= 2'
    """
    fn = "sensitivity"
    if not isinstance(query, _Query):
        raise SpecError(f"{fn}: query={query!r} is not a query",
                        "build it with dp.count, dp.total, dp.mean, dp.max_of, dp.min_of, or wrap a "
                        "function of the dataset with dp.query(fn)")
    if (equals is None) == (at_most is None):
        raise SpecError(f"{fn}: give exactly one of equals= (the sensitivity is this value) and at_most= "
                        f"(an upper bound){'' if equals is None else ', not both'}",
                        "e.g. dp.sensitivity(q, 1 / n) or dp.sensitivity(q, at_most=2 / n)")
    word, value = ("equals", equals) if at_most is None else ("at_most", at_most)
    expr = _expression(value, word, fn)
    if expr.is_number and expr.is_negative:
        raise SpecError(f"{fn}: {word}={value!r} is negative", "a sensitivity is a maximum of |q(X) - q(X')| >= 0")
    if n is not None and not isinstance(n, sympy.Symbol):
        raise SpecError(f"{fn}: n={n!r} is not a sympy Symbol",
                        "pass the size symbol of the claimed value, e.g. n=dp.symbol('n', integer=True, positive=True)")
    free = expr.free_symbols
    if n is None:
        if len(free) > 1:
            raise SpecError(f"{fn}: {word}={expr} has several symbols", "say which one is the dataset size with n=")
        n = next(iter(free)) if free else sympy.Symbol("n", integer=True, positive=True)
    if free - {n}:
        others = ", ".join(sorted(s.name for s in free - {n}))
        raise SpecError(f"{fn}: {word}={expr} uses {others}, but a sensitivity is a function of n={n} only",
                        "write the claimed sensitivity in the dataset size alone, e.g. 1/n")
    if neighbours is not None and not (isinstance(neighbours, _Neighbours) or callable(neighbours)):
        raise SpecError(f"{fn}: neighbours={neighbours!r} is not a neighbour relation",
                        f"use {_NEIGHBOUR_RELATIONS}, or leave it out to use the universe's")
    if n_min is not None and (isinstance(n_min, bool) or not isinstance(n_min, int) or n_min < 1):
        raise SpecError(f"{fn}: n_min={n_min!r} must be an int >= 1", "e.g. n_min=2")
    if query.is_score:
        if candidates is None or isinstance(candidates, (str, bytes)) or not hasattr(candidates, "__iter__"):
            raise SpecError(f"{fn}: the query is a score u(X, y), so the claim needs candidates=",
                            "pass the candidate set the mechanism chooses from, e.g. candidates=THRESHOLDS")
        candidates = tuple(candidates)
        if not candidates:
            raise SpecError(f"{fn}: candidates is empty", "give at least one candidate")
    elif candidates is not None:
        raise SpecError(f"{fn}: candidates= is only for scores u(X, y)", "leave it out for a query q(X)")
    return Sensitivity(query=query, bound=expr, exact=at_most is None, n=n, neighbours=neighbours, n_min=n_min,
                       candidates=candidates, id=id, expect=expect)
