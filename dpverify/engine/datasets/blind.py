"""Sums over multisets for a program that reads its sample only through its counts and its size.

:class:`~.multisets.MultisetSum`'s fast reading runs the program once per multiset and, since a
multiset is read in one order, runs it again on other orderings of it and compares the laws (three
more runs per multiset beyond the smallest n): three quarters of the work of a learner that reads
its sample through ``data.counts``, as the catalogue's learners do.

This module reads such a program *blind*: each multiset is passed as a :class:`BlindSample`, a
sample of the right length whose ``counts`` are the multiset's (record -> multiplicity, the same
dict in population order that a real sample carries) and whose records refuse every use -- iterating
it, indexing it, comparing it, hashing it, printing it, or doing anything with one of its records
raises a BaseException the program cannot swallow unseen (a refusal is counted, so a program that
catches it is refused all the same).  A run that completes has computed its law from the counts,
the size and its parameters alone, which are the same for every ordering of the multiset: its law
does not depend on the order, shown for every multiset summed, without running other orderings.

Before any of that, the program must pass a *whitelist* gate (:func:`admit`), since a blacklist of
refusals on a runtime stand-in cannot be complete (``hasattr(data, "_refuse")``, ``data.__class__``,
``tuple.__add__((), data)`` told the stand-in apart and summed a false ``verified``): a static read of
the bytecode (CPython 3.11) of the program and everything it can reach by
:class:`~.orderfree._Reach` (it calls only functions it reads, dpverify's DSL, ``math``,
sympy/fractions classes, ``collections.Counter`` and the pure builtins; no dunder, frame or
``getattr`` attribute; no store outside its frames), in which the sample -- the program's first
parameter and any nested function's variable bound to it -- is loaded only as ``data.counts``,
``len(data)``, ``getattr(data, "counts", <constant>)`` or ``Counter(data)`` (which refuses on a blind
sample: it iterates).  Its value reaches nothing else, so every run is a function of the counts, the
size and the parameters, on a blind sample as on a real one.  Anything the gate cannot classify
returns None (the ordinary path).  What the gate resolved is compared after the runs
(:meth:`~.orderfree.Proof.bindings_hold`).

As a second line, so that a program that tells a blind sample from a real one (by its type, say) is not summed blind,
a few multisets of each n (:data:`PROBES` count vectors, the most even first, and :data:`LOPSIDED`: every record one value) are also run as real
samples (:class:`~.counts.Sample`) in two orders and their laws compared with the blind ones exactly (:func:`~.multisets.fast_difference`).  Anything else -- a
refusal, a run not of the fast form of :func:`~dpverify.engine.program.fastlaw.capture`, an error, a
probe that differs -- returns None, and the caller sums that n the ordinary way (which reports
errors properly and checks orderings).

The sum itself is the fast reading's, exactly: the multiset weights are exact integers over B^n and
each run's share of bad outputs an outward-rounded integer pair on the grid 2^-S
(:meth:`~dpverify.engine.program.fastlaw.ExpAtoms.probability`), so :func:`enclosure` returns the same
interval as :meth:`~.multisets.MultisetSum._fast` (the tests compare them).  The runs are kept, grouped
by their exact exponents and bad candidates with their weights summed, so refining the grid for a tiny
probability re-reads the groups, not the program.
"""
from __future__ import annotations

import builtins
import collections
import dis
import sys
import types
from collections.abc import Iterator
from typing import Any, Optional

from fractions import Fraction
from types import MappingProxyType

from ...dsl.laws import Exponential
from ..program.fastlaw import ExpAtoms, Unsupported, _exponential_branches, bits_for, capture
from ..program import contract
from ..program.reading import keywords
from ..program.run import ACTIVE
from . import orderfree
from .counts import Sample, _probes, fresh

PROBES = 3
"""Count vectors per n (the most even of :func:`.counts._probes`) run as real samples too, in population order
and reversed, and compared with the blind runs."""
LOPSIDED = 4
"""Also probed: the count vectors with all n records one value, for the first this many records of positive
probability (behaviour gated on a lopsided multiset is compared too)."""


class Refused(BaseException):
    """The program used a blind sample other than through ``counts`` and ``len``."""


class _Count:
    """How many refusals were raised (a program that swallows one is still refused: the count moved): of a
    blind sample, and of a draw's stand-in or the one-run runner (:func:`once`)."""

    refusals = 0
    drawn = 0


def _refuse(why: str) -> Any:
    _Count.refusals += 1
    raise Refused(why)


def _refuse_drawn(why: str) -> Any:
    _Count.drawn += 1
    raise Refused(why)


class _StandIn:
    """A value that can be held and nothing more: every use calls the subclass's :meth:`_deny`."""

    __slots__ = ()

    def _deny(self) -> Any:
        raise NotImplementedError

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        self._deny()

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __hash__ = __bool__ = _refuse  # type: ignore
    __getitem__ = __iter__ = __len__ = __contains__ = __int__ = __float__ = __index__ = _refuse  # type: ignore
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _refuse
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __and__ = __or__ = _refuse
    __neg__ = __pos__ = __abs__ = __call__ = __repr__ = __str__ = __format__ = _refuse

    def __getattr__(self, name: str) -> Any:
        if name == "__wrapped__":  # inspect.unwrap's probe (doctest, pydoc): missing, as on a real record
            raise AttributeError(name)
        self._refuse()

    __reduce__ = __reduce_ex__ = __copy__ = __deepcopy__ = __complex__ = __round__ = _refuse
    __dpverify_type_probe__ = _refuse  # type(x) in a spec module (engine/program/contract.spec_type)


class _BlindRecord(_StandIn):
    """A record of a blind sample: it can be held, nothing more."""

    __slots__ = ()

    def _deny(self) -> Any:
        _refuse("the program used a record of its sample")


_RECORD = _BlindRecord()


def _refuse_sample(*args: Any, **kwargs: Any) -> Any:
    _refuse("the program used its sample other than through counts and len")


class BlindSample(Sample):
    """n refusing records and the multiset's ``counts``: ``len`` and ``counts`` are all a program can read
    (and ``bool``, which is ``len > 0``).  Every other use of the sample or of one of its records refuses,
    reading any attribute but ``counts`` (``hasattr``, ``__class__``, ``__dict__``) or setting one included;
    the class is named ``Sample`` as the real one is."""

    __iter__ = __reversed__ = __getitem__ = __contains__ = count = index = _refuse_sample  # type: ignore
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __hash__ = _refuse_sample  # type: ignore
    __add__ = __radd__ = __mul__ = __rmul__ = __mod__ = __rmod__ = _refuse_sample  # type: ignore
    __repr__ = __str__ = __format__ = __reduce__ = __reduce_ex__ = __getnewargs__ = _refuse_sample  # type: ignore
    __copy__ = __deepcopy__ = __getstate__ = __setstate__ = __setattr__ = __delattr__ = _refuse_sample
    __dir__ = __sizeof__ = __init_subclass__ = _refuse_sample
    __dpverify_type_probe__ = _refuse_sample  # type(data) in a spec module (engine/program/contract.spec_type)

    def __getattribute__(self, name: str) -> Any:
        if name == "counts":
            return Sample.counts.fget(self)
        _refuse(f"the program read the attribute {name!r} of its sample")


BlindSample.__name__ = BlindSample.__qualname__ = "Sample"


def _set_counts(data: BlindSample, counts: dict) -> BlindSample:
    Sample.counts.fset(data, counts)
    return data


class _Drawn(_StandIn):
    """What the draw of a one-run reading (:func:`once`) returns: a stand-in for the candidate drawn that
    refuses every use (C code that would look at it on its way out refuses)."""

    __slots__ = ()

    def _deny(self) -> Any:
        _refuse_drawn("the program used the candidate it drew")


_DRAWN = _Drawn()


class NotOnce(Exception):
    """This run cannot be read in one run (it used its draw, drew twice, or is not of the fast form)."""


class _Once:
    """The runner of a one-run reading: at most one draw, an exponential mechanism (as
    :func:`~dpverify.engine.program.fastlaw.capture`), whose result is the refusing stand-in :data:`_DRAWN`."""

    __slots__ = ("backend", "branches", "draws", "refused")

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.branches: Optional[list] = None
        self.draws = 0
        self.refused: Optional[str] = None

    def __getattr__(self, name: str) -> Any:
        self._refuse(f"a primitive asked the runner for {name!r}")

    def _refuse(self, why: str) -> Any:
        self.refused = why
        _refuse_drawn(why)

    def draw(self, make: Any) -> Any:
        self.draws += 1
        if self.draws > 1:
            self._refuse("more than one draw")
        if not _returned_at_once(sys._getframe(1)):
            self._refuse("code runs after the draw")
        primitive = make()
        if type(primitive) is not Exponential:
            self._refuse(f"a {type(primitive).__name__} draw")
        try:
            self.branches = _exponential_branches(primitive)
        except Unsupported as why:
            self._refuse(str(why))
        return _DRAWN


_RETURNS: dict = {}
"""(code object, f_lasti) -> whether that frame stands at a call whose result it returns at once."""


def _returns_the_call(code: Any, lasti: int) -> bool:
    """Whether the instruction a frame of ``code`` runs at ``lasti`` is a call followed at once by RETURN_VALUE
    (inline CACHE entries apart): the frame returns what the call returns, running nothing else."""
    key = (code, lasti)
    found = _RETURNS.get(key)
    if found is None:
        current = following = None
        for instruction in dis.get_instructions(code, show_caches=True):
            if instruction.opname == "CACHE":
                continue
            if instruction.offset <= lasti:
                current = instruction.opname
            else:
                following = instruction.opname
                break
        found = _RETURNS[key] = bool(current and current.startswith("CALL") and following == "RETURN_VALUE")
        if len(_RETURNS) > 4096:
            _RETURNS.clear()
    return found


def _returned_at_once(frame: Any) -> bool:
    """Whether every Python frame from ``frame`` (the caller of the runner's draw) up to :func:`once`'s call
    of the program returns the result of the call it is in at once: then no Python code runs after the draw,
    and what the program returns is what the draw returned, or what C code between the frames made of it."""
    stop = once.__code__
    while frame is not None:
        if frame.f_code is stop:
            return True
        if not _returns_the_call(frame.f_code, frame.f_lasti):
            return False
        frame = frame.f_back
    return False


_PLAIN = frozenset({int, bool, str, bytes, type(None), Fraction})


def _plain(output: Any) -> bool:
    """An int, bool, str, bytes, None or Fraction, or a plain tuple of them: a value that cannot hold the
    stand-in of a draw out of sight."""
    kind = type(output)
    return kind in _PLAIN or (kind is tuple and all(type(x) in _PLAIN for x in output))


def once(program: Any, backend: Any) -> tuple[Any, list]:
    """:func:`~dpverify.engine.program.fastlaw.capture`'s result for ``program`` in one run instead of one per
    candidate, for a program that returns its draw as it is (``return dp.exponential(...)``): at the draw,
    every Python frame up to the program's call must stand at a call whose result it returns at once
    (:func:`_returned_at_once`: no Python code runs after the draw, so nothing can depend on the candidate
    drawn), and the output must be the draw's stand-in itself (which refuses every use: C code between the
    frames cannot have looked at it either), so the output of branch k is candidate k.  A program without a
    draw is read by its one run, as capture reads it.  Raises :class:`NotOnce` when that cannot be read (the
    caller runs :func:`capture`), and :class:`Refused` when the program used a blind sample otherwise than by
    its counts."""
    runner = _Once(backend)
    sample, drawn = _Count.refusals, _Count.drawn
    token = ACTIVE.set(runner)
    try:
        output = program()
    except Refused:
        if _Count.refusals != sample:
            raise
        raise NotOnce("the program used its draw") from None
    except Exception as exc:  # noqa: BLE001 (capture reads it, or reports it)
        raise NotOnce(str(exc)) from None
    finally:
        ACTIVE.reset(token)
    if _Count.refusals != sample:  # a refusal the program caught
        raise Refused("the program caught a refusal")
    if _Count.drawn != drawn or runner.refused is not None:
        raise NotOnce("the program caught a refusal of its draw")
    branches = runner.branches
    if branches is None:
        if runner.draws:
            raise NotOnce("a draw without branches")
        if not _plain(output):
            hash(output)  # an unhashable output: capture reports it (a plain one is hashable)
        return None, [(output, None)]
    if output is not _DRAWN:  # C code between the frames made something else of it
        raise NotOnce("the output is not the draw")
    return branches[0][2], [(value, indices) for value, indices, _ in branches]


def blind(records: tuple, counts: tuple) -> BlindSample:
    """The blind sample of the multiset with these counts (of ``records``, in population order)."""
    return _set_counts(BlindSample((_RECORD,) * sum(counts)), dict(zip(records, counts)))


def real(records: tuple, counts: tuple, order: Optional[tuple] = None) -> Sample:
    """The multiset as a real sample, in population order or in ``order`` (a permutation of its records)."""
    data = Sample(order if order is not None else
                  tuple(r for r, c in zip(records, counts) for _ in range(c)))
    data.counts = dict(zip(records, counts))
    return data


class _Runs:
    """The blind runs of one n grouped by (exact exponents, bad candidates), weights summed exactly."""

    __slots__ = ("groups",)

    def __init__(self) -> None:
        self.groups: dict = {}

    def add(self, exponent: Any, chosen: tuple, weight: int) -> None:
        key = (None if exponent is None else tuple(exponent.keys), chosen)
        found = self.groups.get(key)
        if found is None:
            self.groups[key] = [exponent, weight]
        else:
            found[1] += weight

    def sums(self, atoms: ExpAtoms) -> tuple[int, int]:
        """(L, H) with L <= P * B^n * 2^scale <= H (the scale of ``atoms``)."""
        one = 1 << atoms.scale
        low = high = 0
        for (_, chosen), (exponent, weight) in self.groups.items():
            if exponent is None:
                if chosen:
                    low += weight * one
                    high += weight * one
                continue
            q_lo, q_hi = atoms.probability(exponent, list(chosen))
            low += weight * q_lo
            high += weight * q_hi
        return low, high


def _read(program: Any, kwargs: dict, data: Sample, backend: Any, bad: Any, blind_run: bool) -> Optional[tuple]:
    """(exponent, outputs, chosen) of one run as :func:`.fastlaw.capture` reads it (by :func:`once` on a blind
    sample), or None when it is not of that form, raised, or used a blind sample other than through its counts
    and length."""
    before = _Count.refusals
    try:
        exponent, outputs = _law(program, kwargs, data, backend, blind_run)
        if exponent is None:
            chosen: tuple = (0,) if bad(outputs[0][0]) else ()
        else:
            chosen = tuple(i for output, indices in outputs if bad(output) for i in indices)
    except (Refused, Exception):  # noqa: BLE001 (not blind, not of the form, or an error: the ordinary way)
        return None
    if _Count.refusals != before:  # a refusal the program caught
        return None
    return exponent, outputs, chosen


def _law(program: Any, kwargs: dict, data: Sample, backend: Any, first: bool) -> tuple[Any, list]:
    """The run's (exponent, outputs) as :func:`capture` reads them, by :func:`once` when ``first`` and it can."""
    if first:
        try:
            return once(lambda: program(data, **kwargs), backend)
        except NotOnce:
            pass
    return capture(lambda: program(fresh(data), **kwargs), backend)


def _probes_agree(program: Any, kwargs: dict, records: tuple, numerators: list, n: int, backend: Any,
                  bad: Any) -> bool:
    """A few multisets of size n (of positive probability) run blind and as real samples in several orders:
    the same law exactly, else False (the program may tell a blind sample from a real one)."""
    from .multisets import fast_difference  # noqa: PLC0415 (multisets imports counts, as this module does)
    live = [counts for counts in _probes(len(records), n)
            if all(c == 0 or a for c, a in zip(counts, numerators))]
    live = sorted(live, key=lambda counts: -min(counts))[:PROBES]  # the most even splits first
    positive = [i for i, a in enumerate(numerators) if a][:LOPSIDED]
    for i in positive:  # and every record one value: behaviour gated on a lopsided multiset is compared too
        counts = tuple(n if j == i else 0 for j in range(len(records)))
        if counts not in live:
            live.append(counts)
    for counts in live:
        seen = _read(program, kwargs, blind(records, counts), backend, bad, True)
        if seen is None:
            return False
        ordered = tuple(r for r, c in zip(records, counts) for _ in range(c))
        for order in dict.fromkeys((ordered, ordered[::-1])):
            other = _read(program, kwargs, real(records, counts, order), backend, bad, False)
            if other is None or other[2] != seen[2] or fast_difference(seen[0], seen[1], other[0], other[1]) \
                    is not False:
                return False
    return True


# ----- the whitelist gate ---------------------------------------------------------------------------------

_LOADS = frozenset({"LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_NAME", "LOAD_CLASSDEREF"})
_GATE_MAX = 64
"""Functions whose use of the sample is read for one program at most (beyond: not blind)."""


class _BlindReach(orderfree._Reach):
    """orderfree's whole-program read, also admitting ``collections.Counter`` and ``getattr(x, "counts"[, c])``
    (a constant attribute name that is not a dunder: what ``x.counts`` reads)."""

    def global_(self, ins: list, k: int, scope: dict, where: str) -> None:
        name = ins[k].argval
        if name == "getattr" and name not in scope and builtins.__dict__.get("getattr") is _GETATTR \
                and _counts_getattr(ins, k):
            self.proof.bindings.append((scope, name, orderfree._MISSING))
            self.proof.bindings.append((builtins.__dict__, name, _GETATTR))
            return
        super().global_(ins, k, scope, where)

    def value(self, value: Any, what: str, depth: int = 0) -> None:
        if value is collections.Counter:
            return
        super().value(value, what, depth)


_GETATTR = builtins.getattr


def _counts_getattr(ins: list, k: int) -> bool:
    """``ins[k]`` (LOAD_GLOBAL getattr, with NULL) starts ``getattr(<load>, "counts")`` or ``getattr(<load>,
    "counts", <constant>)``."""
    if not ins[k].arg & 1 or k + 4 >= len(ins) or ins[k + 1].opname not in _LOADS - {"LOAD_CLOSURE"} \
            or ins[k + 2].opname != "LOAD_CONST" or ins[k + 2].argval != "counts":
        return False
    at = k + 3
    if ins[at].opname == "LOAD_CONST":
        at += 1
    arity = at - k - 1
    return at + 1 < len(ins) and ins[at].opname == "PRECALL" and ins[at].arg == arity \
        and ins[at + 1].opname == "CALL" and ins[at + 1].arg == arity


class _NotBlind(Exception):
    """The gate cannot classify a use of the sample (the message says where)."""


def admit(program: Any) -> Optional[orderfree.Proof]:
    """The whitelist gate (see the module): the proof of what was read (its bindings to compare after the runs),
    or None when the program cannot be read blind."""
    if sys.version_info[:2] != orderfree.VERSION or type(program) is not types.FunctionType:
        return None
    code = program.__code__
    if code.co_argcount < 1:
        return None
    proof = orderfree.Proof()
    try:
        _BlindReach(proof).read(program)
        _sample_uses(code, {code.co_varnames[0]}, program.__globals__, proof, set())
    except (orderfree.Refused, _NotBlind, RecursionError):
        return None
    return proof


def _sample_uses(code: types.CodeType, tainted: set, scope: dict, proof: orderfree.Proof, done: set) -> None:
    """Every load of a name bound to the sample in ``code`` (and in code nested in it that captures one) is
    ``x.counts``, ``len(x)``, ``getattr(x, "counts"[, c])`` or ``Counter(x)``; else :class:`_NotBlind`."""
    key = (code, frozenset(tainted))
    if key in done:
        return
    done.add(key)
    if len(done) > _GATE_MAX:
        raise _NotBlind("too many functions")
    ins = list(dis.get_instructions(code))
    where = code.co_name
    for i, instr in enumerate(ins):
        if instr.opname not in _LOADS or instr.argval not in tainted:
            continue
        if instr.opname == "LOAD_CLOSURE":
            _captured(ins, i, tainted, scope, proof, done, where)
            continue
        if instr.opname in ("LOAD_NAME", "LOAD_CLASSDEREF"):
            raise _NotBlind(f"{where} reads the sample by name")
        after = ins[i + 1] if i + 1 < len(ins) else None
        if after is not None and after.opname == "LOAD_ATTR" and after.argval == "counts":
            continue
        before = ins[i - 1] if i >= 1 else None
        if before is not None and before.opname == "LOAD_GLOBAL" and before.arg & 1:
            if before.argval == "getattr" and "getattr" not in scope and _counts_getattr(ins, i - 1) \
                    and builtins.__dict__.get("getattr") is _GETATTR:
                continue  # the builtin (a module-level getattr is read as a function the sample is passed to)
            called = i + 2 < len(ins) and ins[i + 1].opname == "PRECALL" and ins[i + 1].arg == 1 \
                and ins[i + 2].opname == "CALL" and ins[i + 2].arg == 1
            if called and before.argval == "len" and "len" not in scope \
                    and builtins.__dict__.get("len") is orderfree._ORIGINAL["len"]:
                continue
            if called and scope.get(before.argval, orderfree._MISSING) is collections.Counter:
                proof.bindings.append((scope, before.argval, collections.Counter))
                continue  # iterates: refuses on a blind sample
        if _passed(ins, i, tainted, scope, proof, done):
            continue
        raise _NotBlind(f"{where} uses its sample other than as data.counts or len(data)")


_SIMPLE = frozenset({"LOAD_FAST", "LOAD_DEREF", "LOAD_CONST"})


def _passed(ins: list, i: int, tainted: set, scope: dict, proof: orderfree.Proof, done: set) -> bool:
    """Whether ``ins[i]`` passes the sample as a positional argument of ``f(<simple loads>)``, ``f`` a module-level
    Python function (not dpverify's) whose code is then read with that parameter bound to the sample."""
    start = i
    while start >= 1 and (ins[start - 1].opname in _SIMPLE or (ins[start - 1].opname == "LOAD_GLOBAL"
                                                               and not ins[start - 1].arg & 1)):
        start -= 1
    end = i
    while end + 1 < len(ins) and (ins[end + 1].opname in _SIMPLE or (ins[end + 1].opname == "LOAD_GLOBAL"
                                                                    and not ins[end + 1].arg & 1)):
        end += 1
    head = ins[start - 1] if start >= 1 else None
    arity = end - start + 1
    if head is None or head.opname != "LOAD_GLOBAL" or not head.arg & 1 or end + 2 >= len(ins) \
            or ins[end + 1].opname != "PRECALL" or ins[end + 1].arg != arity \
            or ins[end + 2].opname != "CALL" or ins[end + 2].arg != arity:
        return False
    fn = scope.get(head.argval, orderfree._MISSING)
    if type(fn) is not types.FunctionType or orderfree._dpverify_function(fn):
        return False
    callee = fn.__code__
    if callee.co_argcount < arity or callee.co_flags & 0x0C:  # *args/**kwargs: positions not plain
        return False
    proof.bindings.append((scope, head.argval, fn))
    names = {callee.co_varnames[k - start] for k in range(start, end + 1) if ins[k].argval in tainted
             and ins[k].opname != "LOAD_CONST"}
    _sample_uses(callee, names, fn.__globals__, proof, done)
    return True


def _captured(ins: list, i: int, tainted: set, scope: dict, proof: orderfree.Proof, done: set, where: str) -> None:
    """A nested function (or comprehension) made with the sample among its free variables: read it too."""
    j = i
    while j < len(ins) and ins[j].opname == "LOAD_CLOSURE":
        j += 1
    first = i
    while first >= 1 and ins[first - 1].opname == "LOAD_CLOSURE":
        first -= 1
    if j + 2 >= len(ins) or ins[j].opname != "BUILD_TUPLE" or ins[j].arg != j - first \
            or ins[j + 1].opname != "LOAD_CONST" or not isinstance(ins[j + 1].argval, types.CodeType) \
            or ins[j + 2].opname != "MAKE_FUNCTION" or not ins[j + 2].arg & 8:
        raise _NotBlind(f"{where} captures its sample in an unexpected way")
    inner = ins[j + 1].argval
    names = {x.argval for x in ins[first:j]}
    _sample_uses(inner, {n for n in inner.co_freevars if n in tainted and n in names}, scope, proof, done)


def runs(msum: Any, n: int, weighted: Iterator[tuple[tuple, int]]) -> Optional[_Runs]:
    """Every multiset of ``weighted`` ((counts, exact weight) pairs) read blind, or None (see the module).  The
    runs are spec code under :mod:`~dpverify.engine.program.contract` (``type(x)`` of a stand-in in a spec
    module refuses, ``id()`` and outside randomness are violations): any violation returns None."""
    proof = admit(msum.program)
    if proof is None:
        return None
    token, violations = contract.enter()
    try:
        found = _runs(msum, n, weighted)
    finally:
        contract.leave(token)
    return None if violations or not proof.bindings_hold() else found


def _runs(msum: Any, n: int, weighted: Iterator[tuple[tuple, int]]) -> Optional[_Runs]:
    program, records, backend, bad = msum.program, msum.records, msum.backend, msum.bad
    kwargs = keywords(program, msum.session.convert(msum.values), skip=1)
    if not _probes_agree(program, kwargs, records, msum.numerators, n, backend, bad):
        return None
    found = _Runs()
    before = _Count.refusals
    lengthy = (_RECORD,) * n
    one_run = True  # each run read by once() while it can be; from the first that cannot, by capture()
    for counts, weight in weighted:
        data = _set_counts(BlindSample(lengthy), dict(zip(records, counts)))
        try:
            if one_run:
                try:
                    exponent, outputs = once(lambda: program(data, **kwargs), backend)
                except NotOnce:
                    one_run = False
            if not one_run:
                exponent, outputs = capture(lambda: program(fresh(data), **kwargs), backend)
            if exponent is None:
                chosen: tuple = (0,) if bad(outputs[0][0]) else ()
            else:
                chosen = tuple(i for output, indices in outputs if bad(output) for i in indices)
        except (Refused, Exception):  # noqa: BLE001 (see _read)
            return None
        found.add(exponent, chosen, weight)
    if _Count.refusals != before:
        return None
    return found


def enclosure(msum: Any, n: int) -> Optional[Any]:
    """P at n as :meth:`~.multisets.MultisetSum._fast` encloses it (the same grid refinement, the same
    integers), every multiset read blind; None when a run cannot be (see the module)."""
    from .multisets import weighted  # noqa: PLC0415
    found = runs(msum, n, weighted(n, msum.numerators, list(range(n, -1, -1))))
    if found is None:
        return None
    bits = bits_for(msum.dps)
    scale = 2 * bits + 64
    grid = msum.denominator ** n << 6
    for attempt in range(4):
        atoms = msum._atoms.get(scale)
        if atoms is None:
            atoms = msum._atoms[scale] = ExpAtoms(bits, scale)
        lo, hi = found.sums(atoms)
        width = hi - lo
        if width == 0 or (width << (bits - 32)) <= hi or width > grid or attempt == 3:
            break
        scale += bits - 32 - (hi.bit_length() - width.bit_length()) + 16
    ctx = msum.backend.ctx
    denominator = ctx.mpf(msum.denominator ** n << scale)
    low, high = ctx.mpf(lo) / denominator, ctx.mpf(hi) / denominator
    return ctx.mpf([low.a, high.b])


__all__ = ["BlindSample", "LOPSIDED", "PROBES", "Refused", "admit", "blind", "enclosure", "real", "runs"]
