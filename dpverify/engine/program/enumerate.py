"""Exact enumeration of a probabilistic program's output distribution.

A mechanism is plain Python that calls primitives (``dp.exponential``,
``dp.bernoulli``...).  Each primitive offers a finite list of branches
``(value, weight)``.  The runner explores the tree of choices depth first by
re-executing the program with a prescribed prefix of choices, and sums the
weight of every leaf into the output it returns.

A primitive describes its law (a :mod:`dpverify.dsl.laws` description); the
function registered for that type in :data:`LAWS` (by :mod:`.primitives`)
gives its branches in the session's reading.

Re-execution is cheap because the branch list a primitive offers at a given
prefix is cached: on a replay, a primitive returns its prescribed value without
recomputing its distribution (or the scores behind it).  This needs the program
to be deterministic given its choices -- no outside randomness, no global
state -- which is the contract for mechanism programs.
"""
from __future__ import annotations

import contextvars
import dataclasses
import math
import random
from collections.abc import Callable, Hashable
from fractions import Fraction
from typing import Any, Optional

import sympy

from ...errors import EnumerationTooLarge, SpecError
from . import contract  # importing it installs the guards, before any spec file is imported
from .backend import Backend
from .parameter import ParameterBranch, program_value
from .run import ACTIVE
from ..continuous.tails import TailInt, engine_keys
from ...dsl import laws as _laws

Distribution = dict
"""An exact output distribution: output -> weight (a backend number)."""

MAX_DRAWS_PER_RUN = 10_000
"""More draws than this in one run of a program means an unbounded loop: refused."""
MAX_LEAVES = 2_000_000
"""More branches than this for one dataset is refused before it exhausts memory or time."""
PROBES = 8
"""Random paths (fixed seed) that estimate the branch count when the first path suggests too many."""

LEAF_BUDGET: contextvars.ContextVar[int] = contextvars.ContextVar("dpverify_leaf_budget", default=MAX_LEAVES)
"""Branches allowed on one dataset (the checks tie it to --max-work)."""
TRACE: contextvars.ContextVar[Optional[list]] = contextvars.ContextVar("dpverify_trace", default=None)
"""When a list: each execution appends (the branch lists along its path, the branches taken, its
output, whether it used continuous noise) -- a certificate that two inputs have the same law (see
:mod:`.symmetry`)."""

LAWS: dict[type, Callable[[Any, "Session"], list]] = {}
"""Law description type -> function(description, session) giving its branches; filled by :mod:`.primitives`."""


class Session:
    """State shared by the runs of one (program, parameter point, backend).

    ``cache`` holds primitive distributions keyed by their arguments, so datasets
    that give a primitive the same arguments share its computation;
    ``windows`` holds, per call site of unclamped geometric noise, the integer
    window its exact tails are lumped beyond (see :mod:`.tails`).
    """

    def __init__(self, backend: Backend, windows: Optional[dict] = None) -> None:
        self.backend = backend
        self.cache: dict[Hashable, list] = {}
        self.windows: dict[Hashable, list] = {} if windows is None else {k: list(v) for k, v in windows.items()}
        self.bases: dict[Hashable, Hashable] = {}
        self.window_version = 0
        self.arguments: dict[tuple, dict] = {}
        self.outputs: dict[Any, tuple] = {}
        self.branch: Optional[ParameterBranch] = None  # a symbolic parameter's value was used (.parameter)
        self.keyed = False  # runs record an exact description of their law (see :func:`branch_token`)
        self.last_key: Optional[Hashable] = None  # ... the last top-level run's, or None
        self.token_ids: dict[Hashable, int] = {}  # token -> its number (holding the branch lists it names)

    def convert(self, params: dict) -> dict:
        """The parameters as the program receives them: the same exact values in every reading.

        Ints stay ints, rationals become Fractions, other exact numbers stay sympy
        numbers, and values with free symbols (the symbolic reading) become
        :class:`~.parameter.Parameter`: the program's own arithmetic and
        comparisons are exact, and only the primitives convert to the backend.
        """
        key = tuple(sorted(params.items(), key=lambda item: item[0]))
        if key not in self.arguments:
            self.arguments[key] = {name: program_value(value) for name, value in key}
        return self.arguments[key]

    def register(self, output: Any) -> None:
        """Hold the outputs of every run of this session to one meaning of "the same output".

        Two outputs are the same when they are equal leaf by leaf *and* of the
        same types.  Python's dicts merge some values that are equal under ``==``
        but differ in type (1, 1.0, True, Fraction(1), sympy.Integer(1)) and keep
        others apart (Fraction(1, 2) and sympy.Rational(1, 2) hash differently);
        merging outputs an observer can tell apart could understate the privacy
        loss, so a mechanism whose outputs Python would merge that way is refused.
        """
        found = self.outputs.get(output)
        if found is None:
            self.outputs[output] = (output, _typed(output))
            return
        first, typed = found
        if first is not output and typed != _typed(output):
            raise SpecError(f"the mechanism returns both {first!r} ({_types(first)}) and {output!r} "
                            f"({_types(output)}), which Python treats as one value although they can be told "
                            "apart (their types, their text or their attributes differ)",
                            "return one type for one value (e.g. int(...) or bool(...) everywhere): dpverify "
                            "counts two outputs as the same only when they are equal and of the same types")


def _typed(output: Any) -> Any:
    """``output`` with every leaf paired with its type and its text: equal exactly when two outputs are
    the same.  Equal values of one type and one hash can still be told apart -- 0.0 and -0.0,
    Decimal('1.0') and Decimal('1.00') -- and their text does tell them apart; a NaN, which equals
    nothing, not even itself, cannot be an output at all."""
    if isinstance(output, tuple):
        return (type(output), tuple(_typed(x) for x in output), _state(output) if type(output) is not tuple else ())
    if isinstance(output, frozenset):
        return (type(output), frozenset(_typed(x) for x in output),
                _state(output) if type(output) is not frozenset else ())
    if output != output:
        raise SpecError(f"the mechanism returns {output!r}, which is not equal to itself (a NaN): no two runs "
                        "would return the same output", "return None or a string for an undefined result")
    return (type(output), output, repr(output), _state(output))


_OWN_MODULES = ("builtins", "fractions", "decimal", "numbers", "sympy", "numpy", "dpverify", "mpmath")


def _state(output: Any, depth: int = 0) -> tuple:
    """The attributes of an instance of a user's class, as text, recursively: two outputs equal under
    its ``==``, with one text, can still differ in a field that its ``==``, hash and repr all leave out
    (a dataclass field with ``compare=False, repr=False``, or such a field inside an attribute), and
    whoever reads the output reads that field (an error function, an observer).  Attributes are read
    past any ``__getattribute__`` (the instance's ``__dict__`` and its slots' descriptors, mangled names
    included); numpy arrays in full.  Empty for numbers, strings and library types."""
    if depth > 8:
        return ("too deep",)
    if isinstance(output, (list, tuple, set, frozenset)) and type(output) in (list, tuple, set, frozenset):
        items = sorted(output, key=repr) if isinstance(output, (set, frozenset)) else output
        return tuple(_state(x, depth + 1) for x in items)
    if isinstance(output, dict) and type(output) is dict:
        return tuple((repr(k), _state(v, depth + 1)) for k, v in output.items())
    kind = type(output)
    module = getattr(kind, "__module__", "") or ""
    if module.split(".")[0] == "numpy" and hasattr(output, "tolist"):
        return (repr(output.tolist()),)  # an array's repr elides the middle of long ones
    if module.split(".")[0] in _OWN_MODULES:
        return ()
    fields: dict = {}
    try:
        found = object.__getattribute__(output, "__dict__")
    except AttributeError:
        found = None
    if isinstance(found, dict):
        fields.update(found)
    for cls in kind.__mro__:
        for name, slot in vars(cls).items():
            if type(slot).__name__ == "member_descriptor":  # a __slots__ entry (mangled names included)
                try:
                    fields[name] = slot.__get__(output, kind)
                except AttributeError:
                    fields[name] = "<unset>"
    if isinstance(output, (tuple, frozenset)):  # a subclass: its elements as well as its attributes
        fields["<elements>"] = tuple(output) if isinstance(output, tuple) else sorted(output, key=repr)
    return tuple(sorted((str(k), type(v).__qualname__, repr(v), _state(v, depth + 1)) for k, v in fields.items()))


def _types(output: Any) -> str:
    if isinstance(output, (tuple, frozenset)) and output:
        return f"{type(output).__name__} of {', '.join(_types(x) for x in output)}"
    return type(output).__name__


class Runner:
    """Enumerates one program on one input, under one session."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.backend = session.backend
        self._path: list[int] = []
        self._sizes: list[int] = []
        self._branches: dict[tuple, list] = {}
        self._depth = 0
        self._weight: Any = None
        self._probe: Optional[random.Random] = None  # set while estimating the branch count
        self._trail: Optional[list] = None  # the branch lists along the current path, when tracing
        self.noise: Any = None  # the run's continuous noise (see .noise), created on first use
        self._tokens: Optional[dict] = {} if session.keyed else None  # prefix -> exact token of its branches
        self._token_trail: list = []
        self.law_key: Optional[Hashable] = None  # after distribution(): an exact description of the law

    def draw(self, make: Callable[[], Any]) -> Any:
        """Called by a primitive inside a run: return the value of the current branch.

        ``make()`` builds (and validates) the primitive's law description; it is
        called only when the branches at this prefix are not known yet, so
        replays cost little.
        """
        depth = self._depth
        self._depth += 1
        if depth >= MAX_DRAWS_PER_RUN:
            raise SpecError(f"one run of the program made more than {MAX_DRAWS_PER_RUN:,} random draws",
                            "an unbounded loop of draws cannot be enumerated: write a rejection loop with "
                            "dp.repeat_until_accepted, or bound the loop")
        prefix = tuple(self._path[:depth])
        branches = self._branches.get(prefix)
        if branches is None:
            law = make()
            scores = None
            if self._tokens is not None and type(law) is _laws.Exponential:
                scores = _Scores(law.score)
                law = _with_score(law, scores)
            branches = LAWS[type(law)](law, self.session)
            if not branches:
                raise SpecError(f"{law.name} has no outcome with positive probability",
                                "check its arguments: every primitive needs at least one possible value")
            self._branches[prefix] = branches
            if self._tokens is not None:  # the session numbers distinct tokens: leaves hold small ints
                found = branch_token(law, branches, scores)
                ids = self.session.token_ids
                self._tokens[prefix] = None if found is None else ids.setdefault(found, len(ids))
        if depth < len(self._path):
            index = self._path[depth]
        else:
            index = 0 if self._probe is None else self._probe.randrange(len(branches))
            self._path.append(index)
            self._sizes.append(len(branches))
        value, weight = branches[index]
        self._weight = weight if self._weight is None else self._weight * weight
        if self._trail is not None:
            self._trail.append(branches)
        if self._tokens is not None:
            self._token_trail.append(self._tokens[prefix])
        return value

    def distribution(self, program: Callable[[], Any]) -> Distribution:
        """Run ``program`` (no arguments) over every branch and sum the leaves."""
        result: Distribution = {}
        token = ACTIVE.set(self)
        leaves = 0
        budget = LEAF_BUDGET.get()
        ticket = contract.WATCHDOG.watch()
        trace = TRACE.get()
        keyed = self._tokens is not None
        described: Optional[list] = [] if keyed else None
        self.law_key = None
        try:
            while True:
                leaves += 1
                if leaves > budget:
                    raise EnumerationTooLarge(
                        f"the program has more than {budget:,} branches on one dataset",
                        "draw fewer values, or merge equal outcomes with dp.categorical; the limit is "
                        "tied to --max-work")
                self._depth = 0
                self._weight = None
                self.noise = None
                ticket.leaves = leaves
                if trace is not None:
                    self._trail = []
                if keyed:
                    self._token_trail = []
                output = self._execute(program)
                trail = self._token_trail
                if ticket.fired:  # the program caught the safety net's exception and went on
                    raise contract.escaped(contract.WallClockLimit())
                if trace is not None:
                    trace.append((tuple(self._trail), tuple(self._path), output, self.noise is not None))
                if leaves == 1:
                    self._refuse_if_too_many(program, budget)
                if self._depth < len(self._path):
                    raise SpecError("the program made different random choices on a replay",
                                    "mechanisms must be deterministic given their draws: no global "
                                    "state, no outside randomness")
                weight = self.backend.num(1) if self._weight is None else self._weight
                with engine_keys():  # the engine keys lumped tails; spec code may not hash them (.tails)
                    _hashable(output, self.session)
                    if described is not None:
                        leaf = _leaf(output, self._path, trail) if self.noise is None else None
                        if leaf is None:
                            described = None
                        else:
                            described.append(leaf)
                    if self.noise is not None:
                        output, weight = self.noise.finish(output, weight, self.session)
                        if not hasattr(weight, "terms") and self.backend.is_zero(weight):
                            if not self._advance():
                                break
                            continue
                    self.session.register(output)
                    result[output] = result[output] + weight if output in result else weight
                if not self._advance():
                    break
        except contract.WallClockLimit as exc:  # the safety net fired between two executions
            raise contract.escaped(exc) from None
        finally:
            contract.WATCHDOG.release(ticket)
            ACTIVE.reset(token)
        if described is not None:
            self.law_key = ("leaves", tuple(described))
        return result

    def _execute(self, program: Callable[[], Any]) -> Any:
        """One execution of the program under the mechanism contract: outside randomness, exits and
        runaway executions (the watchdog's far wall-clock limit) become SpecErrors."""
        token, violations = contract.enter()
        try:
            output = program()
        except (Exception, KeyboardInterrupt):
            raise
        except BaseException as exc:  # SystemExit, GeneratorExit, the watchdog's WallClockLimit...
            raise contract.escaped(exc) from None
        finally:
            contract.leave(token)
        if violations:  # the program caught the refusal and went on
            raise violations[0]
        return output

    def _refuse_if_too_many(self, program: Callable[[], Any], budget: int) -> None:
        """Knuth's estimate of the branch count (the product of the branch counts along a path),
        checked before enumerating: when the first path and every one of PROBES random paths
        (fixed seed) each estimate more than ``budget`` branches, refuse at once."""
        first = math.prod(self._sizes)
        if first <= budget:
            return
        saved = self._path, self._sizes, self._depth, self._weight, self.noise
        estimates = [first]
        self._probe = random.Random(0)
        try:
            for _ in range(PROBES):
                self._path, self._sizes = [], []
                self._depth, self._weight, self.noise = 0, None, None
                self._execute(program)
                estimates.append(math.prod(self._sizes))
                if estimates[-1] <= budget:
                    return
        finally:
            self._probe = None
            self._path, self._sizes, self._depth, self._weight, self.noise = saved
        raise EnumerationTooLarge(
            f"the program has about {min(estimates):.3g} branches on one dataset (estimated from the "
            f"branch counts along {len(estimates)} paths, before enumerating), above the limit of {budget:,}",
            "draw fewer values (each draw multiplies the branches), merge equal outcomes with "
            "dp.categorical, or use a smaller universe; the limit is tied to --max-work")

    def _advance(self) -> bool:
        while self._path:
            if self._path[-1] + 1 < self._sizes[-1]:
                self._path[-1] += 1
                return True
            self._path.pop()
            self._sizes.pop()
        return False


class _Unkeyable(Exception):
    """A value with no exact, complete description here: the law it enters is grouped with no other."""


class _Same:
    """A branch list compared by identity: the session's cache hands the same list to every run that gives
    a primitive the same arguments (under its key), and holding it here keeps its id from being reused."""

    __slots__ = ("branches",)

    def __init__(self, branches: list) -> None:
        self.branches = branches

    def __eq__(self, other: Any) -> bool:
        return type(other) is _Same and other.branches is self.branches

    def __hash__(self) -> int:
        return id(self.branches)


class _Scores:
    """An exponential mechanism's score function, recording every call (argument, value) in order, so
    that the exact scores the primitive read are the ones its token holds (no second call)."""

    __slots__ = ("score", "calls", "query")

    def __init__(self, score: Callable[[Any], Any]) -> None:
        self.score = score
        self.calls: list = []
        self.query = getattr(score, "query", score)  # what the primitive keys a derived sensitivity's note by

    def __call__(self, candidate: Any) -> Any:
        value = self.score(candidate)
        self.calls.append((candidate, value))
        return value


_DIRECT = tuple(f.name for f in dataclasses.fields(_laws.Exponential)) == (
    "candidates", "score", "eps", "sensitivity", "name", "derived")


def _with_score(law: Any, score: Any) -> Any:
    """``law`` (an Exponential) with another score function; built directly when its fields are the ones
    known here (dataclasses.replace costs as much as the rest of a draw)."""
    if not _DIRECT or type(law) is not _laws.Exponential:
        return dataclasses.replace(law, score=score)
    return _laws.Exponential(law.candidates, score, law.eps, law.sensitivity, law.name, law.derived)


def _exact(value: Any) -> Hashable:
    """An exact number as a key: equal keys are equal numbers of the same kind, read alike by every reading
    (ints, Fractions and sympy Rationals as one exact rational; floats by their exact text; other sympy
    expressions structurally, when they hold no sympy Float).  Anything else is unkeyable."""
    kind = type(value)
    if kind is Fraction:  # (numerator, denominator) in lowest terms: ints hash faster than Fractions
        return ("q", value.numerator, value.denominator)
    if kind is int:
        return ("q", value, 1)
    if kind is bool:
        return ("bool", value)
    if kind is float:
        if value != value:
            raise _Unkeyable
        return ("float", repr(value))
    if isinstance(value, sympy.Rational):
        return ("q", int(value.p), int(value.q))
    if isinstance(value, sympy.Basic) and not value.has(sympy.Float):  # Floats of one value, other precisions
        return ("sympy", value)
    raise _Unkeyable


_PLAIN = (int, bool, str, bytes, type(None), Fraction)


def _plain(value: Any) -> Hashable:
    """A value of builtin kinds (numbers, text, None, tuples and frozensets of them, lumped tails) as a key:
    equal keys are values of the same types that are equal, and ``==`` among such values is an equivalence
    (it merges outputs and branches the same way wherever it is used).  Other values are unkeyable: a
    user's class may define ``==`` and ``hash`` any way at all."""
    kind = type(value)
    if kind in _PLAIN:
        return (kind, value)
    if kind is float:
        if value != value:
            raise _Unkeyable
        return (float, repr(value))
    if kind is tuple:
        return (tuple, tuple(_plain(x) for x in value))
    if kind is frozenset:
        return (frozenset, frozenset(_plain(x) for x in value))
    if kind is TailInt:
        return (TailInt, value.bound, value.side)
    raise _Unkeyable


def branch_token(law: Any, branches: list, scores: Optional[_Scores] = None) -> Optional[Hashable]:
    """An exact, complete description of the branch list ``branches`` that the primitive ``law`` gave, or
    None.  Equal tokens (within one session) mean the same values with exactly the same weights:

    * a list the session's cache handed out is compared by identity, which pins its cache key (candidates,
      values, windows, exact scores); the parts of that key that are enclosures (eps, the sensitivity,
      a geometric base, scores that are not rationals) are added as exact numbers;
    * a list computed afresh (categorical, subset) is described by its arguments: values of builtin
      kinds and exact probabilities.
    Other primitives (a rejection loop, a comparison with noise) have no token."""
    try:
        kind = type(law)
        if kind is _laws.Exponential:
            if scores is None or len(scores.calls) != len(law.candidates) or any(
                    called is not candidate for (called, _), candidate in zip(scores.calls, law.candidates)):
                return None
            return ("exponential", _Same(branches), _exact(law.eps), _exact(law.sensitivity),
                    tuple(_exact(value) for _, value in scores.calls))
        if kind is _laws.RandomizedResponse:
            return ("rr", _Same(branches), _exact(law.eps))
        if kind is _laws.Geometric:
            return ("geometric", _Same(branches), _exact(law.a))
        if kind is _laws.Categorical:
            return ("categorical", tuple((_plain(v), _exact(p)) for v, p in law.items))
        if kind is _laws.Subset:
            if type(law.m) is not int:
                return None
            return ("subset", _plain(law.data), law.m)
    except _Unkeyable:
        return None
    return None


def _leaf(output: Any, path: list, trail: list) -> Optional[tuple]:
    """One leaf of a run's tree, exactly: its output, the branches it took and the tokens of the branch
    lists along its path (None when one of them has none)."""
    if None in trail:
        return None
    try:
        return (_plain(output), tuple(path), tuple(trail))
    except _Unkeyable:
        return None


def _hashable(output: Any, session: Session) -> None:
    """Refuse an output that cannot key a law: unhashable, or holding a symbolic parameter."""
    try:
        hash(output)
    except TypeError:
        raise SpecError(f"the mechanism returned {output!r}, a {type(output).__name__}, which is not hashable",
                        "return a tuple (or frozenset) instead of a list, set or dict") from None
    except ParameterBranch as exc:
        session.branch = ParameterBranch("it is part of the output", exc.symbols, "the mechanism's return value")
        raise session.branch from None
