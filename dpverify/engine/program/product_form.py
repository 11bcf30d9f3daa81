"""Report noisy max in product form: an argmax over independent noise in m integrals, not 2^(m-1) paths.

The general reading (:mod:`.enumerate` with :mod:`.noise`) enumerates every
outcome of every comparison between noisy values and integrates each path's
event over its tree of constraints: noisy max over m answers has 2^(m-1)
paths, and their integrals dominate its cost (12 s for the 243 vectors of
{0,1,2}^5).  Yet the law it sums is P(argmax = i) = int f_i(t) prod_{j != i}
F_j(t) dt: one integral of a piecewise exponential-polynomial per output.

This module reads a run in that form when -- and only when -- it can show the
run is an argmax, from the program's own behaviour:

* :func:`trace` executes the program once per path of its comparisons under a
  minimal runner that accepts nothing but continuous Laplace or exponential
  noise and comparisons of noisy values (no other draw, no released noisy
  value, no symbolic parameter; anything else raises :class:`Unsupported`),
  recording each path's noise variables, constraints and output.  No integral
  is computed, so a path costs a few tens of microseconds.  Its noise state
  (:class:`_ArgmaxState`) follows only comparisons of two values on variables
  no earlier comparison connected, and the first path's noise laws are checked
  once and compared field by field on every later path (:func:`same_laws`):
  noisy max over {0,1,2}^8 executes 839,808 paths (bench/bench_noisy_max.py).
* :func:`argmax_law` recognises the paths: every path draws the same
  variables x_1..x_m, compares no value with a constant, and its comparisons
  form a spanning tree in which every edge orders its two ends (x_a - x_b > l
  with l >= 0), with one root that every other variable is below.  That path's
  event lies inside A_w = {x_w > x_j for all j != w} for its root w.  When
  each output has one root and distinct outputs distinct roots, the paths
  with output o -- the leaves of a decision tree, which partition the noise
  space up to null sets -- make up exactly A_w(o), up to a null set, since the
  A_w are disjoint too.  So P(o) = P(A_w(o)), whatever order the program
  compared values in.
* P(A_w) is computed in closed form with :mod:`.piecewise` (the product of
  the other variables' CDFs is piecewise exponential-polynomial between the
  sorted centres), keyed on the winner's law and the multiset of the others'
  laws relative to its centre, so datasets that permute or shift answers share
  one integral.

Anything not recognised exactly returns None and the general reading reads
the run; the law is never guessed.
"""
from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any, Optional

from ...errors import journal
from . import contract
from ..continuous import piecewise as pw
from .enumerate import LEAF_BUDGET, MAX_DRAWS_PER_RUN, TRACE, Distribution, Session
from ..continuous.noise import _ZERO, NoiseState, _Outcome, _outcome
from ..continuous.noisy import Noise, Noisy, NoisyLinear
from .run import ACTIVE

READINGS = frozenset({"mpmath-iv", "sympy"})
"""The readings whose numbers :mod:`.piecewise` integrates exactly (certified intervals, exact sympy)."""


class Unsupported(Exception):
    """The run is not a recognised argmax: read it with the general reading."""


class _Escape(BaseException):
    """Raised through spec code when the run asks for something the tracer does not follow."""


class _Tracer:
    """The runner of :func:`trace`: continuous noise and comparisons only.

    It has ``draw`` (comparison outcomes only) and ``noise`` (the run's
    :class:`~.noise.NoiseState`); any other attribute a primitive asks for
    (a session, a backend) is refused, so that run is read by the general reading.
    """

    __slots__ = ("noise", "path", "depth", "refused")

    def __init__(self) -> None:
        self.noise: Optional[NoiseState] = None
        self.path: list[int] = []
        self.depth = 0
        self.refused: Optional[str] = None

    def __getattr__(self, name: str) -> Any:
        self._refuse(f"a primitive asked the runner for {name!r}")

    def _refuse(self, why: str) -> Any:
        self.refused = why
        raise _Escape(why)

    def draw(self, make: Callable[[], Any]) -> Any:
        if make is not _outcome:  # a primitive's draw (through the port), never a comparison: refused before
            self._refuse("a draw of a primitive")  # its law is built (an exponential mechanism's scores, say)
        law = make()
        if type(law) is not _Outcome:
            self._refuse(f"a {type(law).__name__} draw")
        depth = self.depth
        self.depth += 1
        if depth >= MAX_DRAWS_PER_RUN:
            self._refuse("too many comparisons in one run")
        if depth == len(self.path):
            self.path.append(0)
        return self.path[depth] == 0  # branch 0 is True, as in the general reading's _outcomes


Path = tuple
"""(variables, unary intervals, edges, output) of one traced path."""

_ARGMAX_KINDS = ("laplace", "exponential")


class _ArgmaxState(NoiseState):
    """The noise state of one traced run: what :class:`Argmax` can recognise, and nothing else.

    Draws are recorded as by :class:`~..continuous.noise.NoiseState`; a comparison is followed only
    between two noisy values on *different* variables of this run that no earlier comparison connected
    (directly or through others: union-find), both Laplace or exponential noise with rational
    parameters.  Its outcome is the tracer's next branch (True first, as the general reading's), and
    the event taken is recorded on the pair in the comparison's own orientation: a > b
    (``greater``) is x_a - x_b > d with d = b.offset - a.offset, a < b is x_a - x_b < d; the edge is
    keyed (a.var, b.var) with that interval -- the form :func:`winner` reads, in which an edge's key
    need not be sorted.  Anything else -- a constant, one variable on both sides, a pair already
    connected, a sum, another run's value, other noise -- is refused (the general reading then reads
    the run, with its own errors), and the noise of the variables is checked again, in full, by
    :func:`_record` on the first path (:func:`same_laws` on the others).
    """

    def compare(self, a: Any, b: Any, greater: bool, strict: bool = True) -> bool:
        runner = self.runner
        if type(b) is not Noisy or a.state is not self or b.state is not self:
            runner._refuse("a comparison with something other than a noisy value of this run")
        i, j = a.var, b.var
        ok = self.comparable
        if i not in ok:
            self._argmax_noise(i)
        if j not in ok:
            self._argmax_noise(j)
        root_i, root_j = self._find(i), self._find(j)
        if root_i == root_j:  # one variable on both sides, the same pair again, or a cycle
            runner._refuse("a comparison of values already compared, directly or through others")
        d = b.offset - a.offset if b.offset is not a.offset else _ZERO
        depth = runner.depth  # _Tracer.draw(_outcome), inline (noisy max at m = 8 compares 6 * 10^6 times)
        runner.depth = depth + 1
        if depth >= MAX_DRAWS_PER_RUN:
            runner._refuse("too many comparisons in one run")
        path = runner.path
        if depth == len(path):
            path.append(0)
        outcome = path[depth] == 0  # branch 0 is True, as in the general reading's _outcomes
        self.edges[(i, j)] = (d, None) if outcome == greater else (None, d)
        self.root[root_i] = root_j
        return outcome

    def _argmax_noise(self, var: int) -> None:
        noise = self.variables[var]
        if noise.kind not in _ARGMAX_KINDS or not noise.rational:
            self.runner._refuse("a comparison of noise that is not Laplace or exponential with rational parameters")
        self.comparable.add(var)


def trace(program: Callable[[], Any], session: Session, limit: int,
          accept: Callable[[Path], None]) -> int:
    """Execute every path of ``program``'s comparisons under :class:`_Tracer` (at most ``limit``), handing
    each path to ``accept``; returns their number.

    Raises :class:`Unsupported` when a run does anything but draw Laplace or exponential
    noise with rational centres and scales, compare noisy values, and return a discrete output,
    or when ``accept`` raises it (on the first path that is not of the expected shape).
    """
    tracer = _Tracer()
    token = ACTIVE.set(tracer)
    ticket = contract.WATCHDOG.watch()  # the far safety net, as for the general reading
    count = 0
    template: Optional[tuple] = None  # the first path's noise laws: every later path must draw the same
    try:
        while True:
            if count >= limit:
                raise Unsupported(f"more than {limit} paths")
            tracer.depth, tracer.noise = 0, _ArgmaxState(tracer)
            ticket.leaves = count + 1
            output = _execute(program, tracer)
            if ticket.fired:  # the program caught the safety net's exception and went on
                raise contract.escaped(contract.WallClockLimit())
            if tracer.depth < len(tracer.path):
                raise Unsupported("the program made different choices on a replay")
            path = _record(tracer.noise, output, session, template)
            template = path[0]
            accept(path)
            count += 1
            if count == 1 and 2 ** len(tracer.path) > limit:  # the first path's branching: too many to trace
                raise Unsupported(f"about 2^{len(tracer.path)} paths")
            while tracer.path and tracer.path[-1] == 1:
                tracer.path.pop()
            if not tracer.path:
                return count
            tracer.path[-1] = 1
    except contract.WallClockLimit as exc:  # the safety net fired between two executions
        raise contract.escaped(exc) from None
    finally:
        contract.WATCHDOG.release(ticket)
        ACTIVE.reset(token)


def _execute(program: Callable[[], Any], tracer: _Tracer) -> Any:
    entered, violations = contract.enter()
    try:
        output = program()
    except _Escape as escape:
        raise Unsupported(str(escape)) from None
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # the general reading reports it in its own words
        raise Unsupported(f"the program raised {type(exc).__name__}") from None
    except BaseException as exc:  # an exit, the safety net's limit: the same error as the general reading's
        raise contract.escaped(exc) from None
    finally:
        contract.leave(entered)
    if violations or tracer.refused is not None:  # outside randomness, or a refusal the program swallowed
        raise Unsupported("the run was refused")
    return output


def _record(state: Optional[NoiseState], output: Any, session: Session, template: Optional[tuple] = None) -> Path:
    """One path as (variables, unary, edges, output).  With ``template`` (an earlier path's variables, already
    checked here), the path's variables must have exactly its laws -- kind, centre and scale, each number
    of the same type and value -- and the template itself is returned as the path's variables (the same
    laws, one object: :class:`Argmax` compares them by identity first); otherwise :class:`Unsupported`."""
    if state is None or not state.variables:
        raise Unsupported("no continuous noise")
    if _releases(output):
        raise Unsupported("a noisy value is released")
    try:
        hash(output)
        session.register(output)
    except Exception:  # unhashable, or types Python would merge: the general reading says so
        raise Unsupported("an output the general reading refuses") from None
    if template is not None:
        if not same_laws(state.variables, template):
            raise Unsupported("paths draw different noise")
        return template, state.unary, state.edges, output  # the run's own: its state is dropped after it
    for noise in state.variables:
        if noise.kind not in ("laplace", "exponential") or not noise.rational:
            raise Unsupported("noise that is not Laplace or exponential with rational parameters")
    return tuple(state.variables), tuple(state.unary), dict(state.edges), output


def same_laws(variables: list, template: tuple) -> bool:
    """Whether ``variables`` have exactly the laws of ``template`` (Laplace or exponential noise whose
    centres and scales are Fractions, as :func:`_record` checked): the same kinds, and centres and scales
    that are Fractions equal to the template's (what :class:`~..continuous.noisy.Noise`'s ``==`` compares,
    the call site aside, without its generic number comparisons)."""
    if len(variables) != len(template):
        return False
    for noise, known in zip(variables, template):
        if noise is known:
            continue
        if noise.kind != known.kind:
            return False
        x, y = noise.centre, known.centre  # (inline: every draw of every path)
        if x is not y and (type(x) is not Fraction or x.numerator != y.numerator or x.denominator != y.denominator):
            return False
        x, y = noise.scale, known.scale
        if x is not y and (type(x) is not Fraction or x.numerator != y.numerator or x.denominator != y.denominator):
            return False
    return True


def _releases(output: Any) -> bool:
    if isinstance(output, (Noisy, NoisyLinear)):
        return True
    if isinstance(output, (tuple, frozenset)):
        return any(_releases(item) for item in output)
    return False


def winner(variables: tuple, unary: tuple, edges: dict, supports: Optional[tuple] = None) -> Optional[int]:
    """The variable w that the path's constraints put above every other one, or None.

    The comparisons must form a spanning tree of the variables (nothing compared with a
    constant) in which each edge x_a - x_b in (lo, hi) orders its ends (lo >= 0: a above b;
    hi <= 0: b above a), with one root above its children and each other variable below
    exactly one: then x_w - x_j is a sum of positive differences for every j.  ``supports``: the
    variables' supports, when the caller has them already.
    """
    m = len(variables)
    if m < 2 or len(edges) != m - 1:
        return None
    if supports is None:
        supports = tuple(noise.support() for noise in variables)
    if tuple(unary) != supports:
        return None
    below = [0] * m
    for (a, b), (lo, hi) in edges.items():
        if lo is not None and _nonnegative(lo):
            below[b] += 1
        elif hi is not None and _nonpositive(hi):
            below[a] += 1
        else:
            return None
    roots = [v for v in range(m) if below[v] == 0]  # m - 1 edges: one root leaves each other below one
    return roots[0] if len(roots) == 1 else None


def _nonnegative(x: Any) -> bool:
    """x >= 0 (a Fraction's sign is its numerator's: the denominator is positive)."""
    return x.numerator >= 0 if type(x) is Fraction else x >= 0


def _nonpositive(x: Any) -> bool:
    """x <= 0."""
    return x.numerator <= 0 if type(x) is Fraction else x <= 0


class Argmax:
    """Recognises paths as an argmax over shared variables, one path at a time (:meth:`accept`).

    ``winners`` maps each output to its root variable; an output with two roots, a root with
    two outputs, or a path of another shape raises :class:`Unsupported`.
    """

    def __init__(self) -> None:
        self.variables: Optional[tuple] = None
        self.winners: dict = {}
        self._outputs: dict = {}
        self._supports: Optional[tuple] = None

    def accept(self, path: Path) -> None:
        variables, unary, edges, output = path
        if self.variables is None:
            self.variables = variables
            self._supports = tuple(noise.support() for noise in variables)
        elif variables is not self.variables and variables != self.variables:
            raise Unsupported("paths draw different noise")
        w = winner(variables, unary, edges, self._supports)
        if w is None:
            raise Unsupported("a path whose comparisons do not single out a maximum")
        if self.winners.setdefault(output, w) != w or self._outputs.setdefault(w, output) != output:
            raise Unsupported("outputs and maxima do not correspond one to one")


def _relative(noise: Noise, origin: Any) -> tuple:
    return (noise.kind, noise.centre - origin, noise.scale)


def _law_of(key: tuple) -> Noise:
    kind, centre, scale = key
    return Noise(kind, centre, scale)


def win_probability(variables: tuple, w: int, session: Session) -> Any:
    """P(x_w > x_j for all j != w) = int f_w(t) prod_{j != w} F_j(t) dt, in closed form.

    Cached under the winner's law and the sorted laws of the others, all relative to the
    winner's centre: permuting or shifting the answers gives the same integral.
    """
    origin = variables[w].centre
    others = tuple(sorted(_relative(v, origin) for j, v in enumerate(variables) if j != w))
    key = ("argmax-win", _relative(variables[w], origin), others)
    cached = session.cache.get(key)
    if cached is None:
        backend = session.backend
        f = _law_of(_relative(variables[w], origin)).density(backend)
        for other in others:
            f = pw.multiply(f, _cdf(other, session))
        cached = session.cache[key] = pw.integral(f, backend)
    return cached


def _cdf(key: tuple, session: Session) -> pw.Piecewise:
    """t -> P(x < t) for the noise of ``key`` (kind, centre, scale), cached in the session."""
    found = session.cache.get(("argmax-cdf", key))
    if found is None:
        found = session.cache[("argmax-cdf", key)] = pw.antiderivative(_law_of(key).density(session.backend),
                                                                       session.backend)[0]
    return found


def distribution(program: Callable[[], Any], session: Session) -> Optional[Distribution]:
    """The run's law by the argmax product form, or None when the run is not recognised as one."""
    if session.backend.name not in READINGS or TRACE.get() is not None:  # symmetry certificates need paths
        return None
    shape = Argmax()
    with journal() as raised:  # the tracer's own: a refusal it met must not be blamed on the general reading's run
        try:
            trace(program, session, LEAF_BUDGET.get(), shape.accept)
        except Unsupported:
            return None
        if raised.swallowed() is not None:  # the program caught a refusal and went on: the general reading says so
            return None
    law: Distribution = {}
    for output, w in shape.winners.items():
        weight = win_probability(shape.variables, w, session)
        if not session.backend.is_zero(weight):
            law[output] = weight
    return law
