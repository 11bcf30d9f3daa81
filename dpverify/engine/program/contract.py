"""The mechanism contract: spec code gets no way around the primitives.

A mechanism's law is read by re-running it, so it must be a deterministic
function of its draws.  This module enforces what that needs while spec code
runs (between :func:`enter` and :func:`leave`, which the runner calls around
each execution; a context variable, so other threads such as a progress
bar's refresh are unaffected):

* **Outside randomness and clocks.**  :func:`install` wraps the module-level
  sources of ``random`` (and the methods of ``random.Random``),
  ``numpy.random``, ``secrets``, ``os.urandom`` / ``os.getrandom``, the
  ``time`` clocks and ``datetime.datetime.now`` (that class is swapped only
  while spec code runs); called from spec code they raise
  :class:`SpecError` naming the spec's file and line.  Calls made by libraries (sympy, numpy, the standard
  library, dpverify itself) are left alone: only the first caller outside the
  random modules is judged.  :func:`global_state` is a backstop: the global
  generators' states, compared by the checks before and after the laws of a table.
* **Exits.**  :func:`escaped` turns a ``SystemExit`` (or any other
  ``BaseException`` but ``KeyboardInterrupt``) raised by spec code into a
  SpecError for that spec.
* **Hangs.**  :class:`Watchdog` is a far safety net: when ONE execution of a
  program has spent more than :func:`run_limit` seconds of its thread's CPU
  (``DPVERIFY_RUN_LIMIT``, default 300; machine load does not advance it), or
  ten times that in wall time while blocked, it raises :class:`WallClockLimit` in
  the running thread, which becomes an error saying so plainly.  Verdicts are
  never decided by it.
"""
from __future__ import annotations

import builtins
import contextvars
import ctypes
import datetime
import functools
import multiprocessing
import os
import random
import secrets
import sys
import sysconfig
import threading
import time
import types
import uuid
from collections.abc import Callable
from typing import Any, Optional

import numpy as np

from ...errors import SpecError

LIMIT_VARIABLE = "DPVERIFY_RUN_LIMIT"
DEFAULT_LIMIT = 300.0
"""Seconds one execution of a mechanism may run before the safety net fires."""

_RUNNING: contextvars.ContextVar[Optional[list]] = contextvars.ContextVar("dpverify_contract", default=None)
_FIX = ("draw every random value with a dpverify primitive (dp.bernoulli, dp.uniform, dp.categorical, "
        "dp.laplace, ...) and read no clock in a mechanism: its law must be a function of its draws")


_depth = 0  # runs in progress (nested ones included)


def enter() -> tuple[contextvars.Token, list]:
    """Mark the current context as running spec code: (the token for :func:`leave`, the list that
    collects violations, even those the program caught and went on from)."""
    global _depth
    _depth += 1
    if _depth == 1:  # only while spec code runs: a replaced class would break pickling elsewhere
        datetime.datetime = _Datetime  # type: ignore[misc]
    seen: list = []
    return _RUNNING.set(seen), seen


def leave(token: contextvars.Token) -> None:
    global _depth
    _RUNNING.reset(token)
    _depth -= 1
    if _depth == 0:
        datetime.datetime = _ORIGINAL_DATETIME  # type: ignore[misc]


# -- who is calling ------------------------------------------------------------------------------

def _dir(module: types.ModuleType) -> str:
    return os.path.dirname(os.path.realpath(module.__file__ or ""))


_LIBRARIES = tuple(sorted({os.path.realpath(p) + os.sep for key in ("stdlib", "platstdlib", "purelib", "platlib")
                           if (p := sysconfig.get_paths().get(key))}
                          | {os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))) + os.sep}))
_PASS_THROUGH = (os.path.realpath(random.__file__), os.path.realpath(secrets.__file__),
                 os.path.realpath(uuid.__file__), os.path.realpath(__file__))
_NUMPY_RANDOM = _dir(np.random) + os.sep
_libraries: dict[str, bool] = {}
_through: dict[str, bool] = {}


def _is_library(filename: str) -> bool:
    """Code of the standard library, an installed package or dpverify (not spec code)."""
    known = _libraries.get(filename)
    if known is None:
        if filename.startswith("<"):
            known = filename.startswith("<frozen")
        else:
            known = os.path.realpath(filename).startswith(_LIBRARIES)
        _libraries[filename] = known
    return known


def _passes_through(filename: str) -> bool:
    """Code of the random modules themselves (their callers are judged instead)."""
    known = _through.get(filename)
    if known is None:
        real = os.path.realpath(filename)
        known = _through[filename] = real in _PASS_THROUGH or real.startswith(_NUMPY_RANDOM)
    return known


def _spec_caller() -> Optional[tuple[str, int]]:
    """(file, line) of the spec code behind the current call, or None when a library made it."""
    frame = sys._getframe(2)
    while frame is not None and _passes_through(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None or _is_library(frame.f_code.co_filename):
        return None
    return frame.f_code.co_filename, frame.f_lineno


def user_frame(frame: Optional[types.FrameType]) -> Optional[tuple[str, int]]:
    """(file, line) of the innermost frame from ``frame`` outwards that is not library code."""
    while frame is not None and _is_library(frame.f_code.co_filename):
        frame = frame.f_back
    return None if frame is None else (frame.f_code.co_filename, frame.f_lineno)


def _check(name: str) -> None:
    seen = _RUNNING.get()
    if seen is None:
        return
    where = _spec_caller()
    if where is None:
        return
    if name in _PROCESS:
        err = SpecError(f"the mechanism calls {name}, which differs between the processes that read its law "
                        "(dpverify runs spec code in worker processes): its law would depend on where it ran",
                        "make the mechanism a function of its data, parameters and draws only",
                        file=where[0], line=where[1])
    elif name == "id()":
        err = SpecError("the mechanism calls id(): an address differs from run to run and from process to "
                        "process (and of a noisy value or a parameter, dpverify holds a handle, not the value)",
                        "make the mechanism a function of its data, parameters and draws only",
                        file=where[0], line=where[1])
    elif name == "hash()":
        err = SpecError("the mechanism hashes a string or bytes: their hashes are salted per process "
                        "(PYTHONHASHSEED), so its law would depend on the process that read it",
                        "compare or sort the strings instead of hashing them", file=where[0], line=where[1])
    elif name in _EXITS:
        err = SpecError(f"the mechanism calls {name}, which would end the whole run: spec code must return "
                        "an output", "remove the exit from the mechanism; signal a bad input with an ordinary "
                        "exception", file=where[0], line=where[1])
    else:
        err = SpecError(f"the mechanism calls {name}, randomness or a clock from outside dpverify's primitives: "
                        "its law (and the verdict) would change from run to run", _FIX,
                        file=where[0], line=where[1])
    seen.append(err)
    raise err


# -- the wrappers --------------------------------------------------------------------------------

def _guarded(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if _RUNNING.get() is not None:
            _check(name)
        return fn(*args, **kwargs)
    guarded.__dpverify_guarded__ = True  # type: ignore[attr-defined]
    return guarded


class _GuardedClass(type):
    """A stand-in for a class whose construction draws outside randomness: calling it is checked;
    isinstance, issubclass and attributes are the original class's."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls.__wrapped__)

    def __subclasscheck__(cls, sub: type) -> bool:
        return sub is cls or issubclass(sub, cls.__wrapped__)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if _RUNNING.get() is not None:
            _check(cls.__label__)
        return cls.__wrapped__(*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        return getattr(cls.__wrapped__, name)


def _guard_class(owner: Any, name: str, label: str) -> None:
    original = getattr(owner, name)
    if isinstance(original, _GuardedClass):
        return
    setattr(owner, name, _GuardedClass(name, (), {"__wrapped__": original, "__label__": label,
                                                  "__module__": original.__module__,
                                                  "__doc__": original.__doc__}))


def _wrap(owner: Any, name: str, label: str) -> None:
    original = getattr(owner, name, None)
    if original is None or getattr(original, "__dpverify_guarded__", False):
        return
    setattr(owner, name, _guarded(original, label))


class _DatetimeType(type):
    """Instances of the real datetime class count as instances of the stand-in."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, _ORIGINAL_DATETIME)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, _ORIGINAL_DATETIME)


class _Datetime(datetime.datetime, metaclass=_DatetimeType):
    """``datetime.datetime`` as spec code sees it while it runs: its clock readings are checked.
    (``from datetime import datetime`` at import time keeps the real class: not seen.)"""

    @classmethod
    def now(cls, tz: Any = None) -> datetime.datetime:  # type: ignore[override]
        if _RUNNING.get() is not None:
            _check("datetime.now()")
        return _ORIGINAL_DATETIME.now(tz)

    @classmethod
    def utcnow(cls) -> datetime.datetime:  # type: ignore[override]
        if _RUNNING.get() is not None:
            _check("datetime.utcnow()")
        return _ORIGINAL_DATETIME.utcnow()

    @classmethod
    def today(cls) -> datetime.datetime:  # type: ignore[override]
        if _RUNNING.get() is not None:
            _check("datetime.today()")
        return _ORIGINAL_DATETIME.today()


_ORIGINAL_DATETIME = datetime.datetime
_installed = False

_RANDOM_FUNCTIONS = ("seed", "random", "uniform", "triangular", "randint", "choice", "randrange", "sample",
                     "shuffle", "choices", "normalvariate", "lognormvariate", "expovariate", "vonmisesvariate",
                     "gammavariate", "gauss", "betavariate", "binomialvariate", "paretovariate",
                     "weibullvariate", "getrandbits", "randbytes")
_NUMPY_CLASSES = ("Generator", "RandomState", "SeedSequence", "MT19937", "PCG64", "PCG64DXSM", "Philox",
                  "SFC64")
_EXITS = ("os._exit()", "os.abort()")
_PROCESS = ("os.getpid()", "os.getppid()", "os.getpgrp()", "os.getsid()", "multiprocessing.current_process()",
            "multiprocessing.parent_process()")
_CLOCKS = ("time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns",
           "process_time", "process_time_ns", "thread_time", "thread_time_ns")


def install() -> None:
    """Wrap the outside sources of randomness and time (once, before spec files are imported)."""
    global _installed
    if _installed:
        return
    _installed = True
    for name in _RANDOM_FUNCTIONS:
        _wrap(random, name, f"random.{name}()")
    for cls in (random.Random, random.SystemRandom):
        for name in ("random", "getrandbits", "seed", "randbytes"):
            if name in vars(cls) or cls is random.Random:
                _wrap(cls, name, f"random.{cls.__name__}.{name}()")
    for name in ("token_bytes", "token_hex", "token_urlsafe", "choice", "randbelow", "randbits"):
        _wrap(secrets, name, f"secrets.{name}()")
    for name in ("urandom", "getrandom"):
        _wrap(os, name, f"os.{name}()")
    for name in _EXITS:
        _wrap(os, name[3:-2], name)
    for name in _CLOCKS:
        _wrap(time, name, f"time.{name}()")
    for label in _PROCESS:
        module, name = label[:-2].split(".")
        _wrap({"os": os, "multiprocessing": multiprocessing}[module], name, label)
    for name in np.random.__all__:
        obj = getattr(np.random, name, None)
        if name in _NUMPY_CLASSES:
            _guard_class(np.random, name, f"numpy.random.{name}()")
        elif callable(obj) and not isinstance(obj, type):
            _wrap(np.random, name, f"numpy.random.{name}()")


_real_id = builtins.id


def _id(obj: Any) -> int:
    """id(), refused in spec code during a run: an address is process-level state, not a function of
    the draws (and a noisy value's or a symbolic parameter's is the handle's)."""
    if _RUNNING.get() is not None:
        _check("id()")
    return _real_id(obj)


_real_hash = builtins.hash


def _hash(obj: Any) -> int:
    """hash(), refused from spec code during a run for strings and bytes (salted per process)."""
    if _RUNNING.get() is not None and isinstance(obj, (str, bytes)):
        _check("hash()")
    return _real_hash(obj)


_real_type = builtins.type


class _SpecType:
    """The ``type`` a spec module sees (the loader puts it in the module's namespace): ``type(x)`` of a
    noisy value during a run is refused, since ``type(x) is float`` cannot be intercepted otherwise;
    anything else -- one- and three-argument calls, isinstance, issubclass, ``class Meta(type):``,
    attributes -- is the real ``type``."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs:
            probe = getattr(_real_type(args[0]), "__dpverify_type_probe__", None)
            if probe is not None and _RUNNING.get() is not None:
                probe(args[0])  # a noisy value refuses; a symbolic parameter gives up the proof for every eps
            return _real_type(args[0])
        return _real_type(*args, **kwargs)

    def __instancecheck__(self, obj: Any) -> bool:
        return isinstance(obj, _real_type)

    def __subclasscheck__(self, sub: Any) -> bool:
        return issubclass(sub, _real_type)

    def __mro_entries__(self, bases: tuple) -> tuple:
        return (_real_type,)

    def __getattr__(self, name: str) -> Any:
        return getattr(_real_type, name)

    def __repr__(self) -> str:
        return repr(_real_type)


spec_type = _SpecType()


SPEC_NAMES = {"type": spec_type, "id": _id, "hash": _hash}
"""Builtins as a spec module sees them (the loader puts them in its namespace, not in ``builtins``:
libraries and dpverify keep the real ones, and pay nothing)."""


# -- the backstop --------------------------------------------------------------------------------

_random_state = random.getstate
_numpy_state = np.random.mtrand._rand.get_state


def global_state() -> tuple:
    """The global generators' states (random, numpy.random): equal before and after a law, or the
    mechanism drew from them through a path the wrappers did not see."""
    state = _numpy_state(legacy=False)["state"]
    return _random_state(), state["key"].tobytes(), state["pos"]


def state_changed(where: tuple[Optional[str], Optional[int]]) -> SpecError:
    return SpecError("the global state of `random` or `numpy.random` changed while the mechanism ran: it draws "
                     "randomness from outside dpverify's primitives, so its law would change from run to run",
                     _FIX, file=where[0], line=where[1])


# -- exits and hangs -----------------------------------------------------------------------------

class WallClockLimit(BaseException):
    """Raised into a thread whose mechanism execution outlived the wall-clock safety limit."""


def run_limit() -> float:
    """The far wall-clock limit on one execution of a mechanism, in seconds (``DPVERIFY_RUN_LIMIT``)."""
    raw = os.environ.get(LIMIT_VARIABLE)
    if raw is None:
        return DEFAULT_LIMIT
    try:
        value = float(raw)
    except ValueError:
        raise SpecError(f"{LIMIT_VARIABLE}={raw!r} is not a number of seconds",
                        f"set {LIMIT_VARIABLE} to a positive number, e.g. 60") from None
    if not value > 0:
        raise SpecError(f"{LIMIT_VARIABLE}={raw!r} must be positive", f"set {LIMIT_VARIABLE}=60")
    return value


def user_location(tb: Optional[types.TracebackType]) -> tuple[Optional[str], Optional[int]]:
    """The innermost frame of spec code in a traceback (file, line)."""
    where: tuple[Optional[str], Optional[int]] = (None, None)
    while tb is not None:
        if not _is_library(tb.tb_frame.f_code.co_filename):
            where = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return where


def escaped(exc: BaseException) -> SpecError:
    """The SpecError for a BaseException (not an Exception) that spec code let out of a run."""
    file, line = user_location(exc.__traceback__)
    if isinstance(exc, WallClockLimit):
        limit = run_limit()
        return SpecError(f"one execution of the mechanism ran longer than {limit:g} s of CPU time (or {10 * limit:g} s "
                         "blocked): "
                         f"dpverify's far safety limit ({LIMIT_VARIABLE}) fired, so nothing was checked. "
                         "Most likely a loop never ends",
                         "make every loop of the mechanism terminate (loops of draws: dp.repeat_until_accepted "
                         f"or a bound); if one execution truly needs longer, raise {LIMIT_VARIABLE}",
                         file=file, line=line)
    kind = type(exc).__name__
    what = f"{kind}({exc.code!r})" if isinstance(exc, SystemExit) else f"{kind}: {exc}"
    return SpecError(f"the mechanism raised {what}, which would end the whole run: spec code must return "
                     "an output (a process exit is not one)",
                     "remove the exit (sys.exit, exit, quit...) from the mechanism; signal a bad input "
                     "with an ordinary exception", file=file, line=line)


class Ticket:
    """One program being enumerated in one thread; the runner bumps ``leaves`` at each execution."""

    __slots__ = ("thread", "cpu", "leaves", "seen", "since", "since_cpu", "fired")

    def __init__(self, thread: int) -> None:
        self.thread = thread
        self.cpu = time.pthread_getcpuclockid(thread)  # the thread's CPU clock: load does not advance it
        self.leaves = 0
        self.seen = -1
        self.since = 0.0
        self.since_cpu = 0.0
        self.fired = 0  # how often the limit fired for the current execution (spec code may catch it)


class Watchdog:
    """A daemon thread that raises :class:`WallClockLimit` into a thread whose current execution
    of a program (the same leaf number) has spent more than the limit in CPU seconds of that thread
    (other processes on a busy machine do not advance it), or ten times the limit in wall seconds (a
    program that blocks without computing: a read, a wait)."""

    def __init__(self) -> None:
        self._clock = _ORIGINAL_MONOTONIC
        self._reset()
        os.register_at_fork(after_in_child=self._reset)  # a forked worker has no watchdog thread yet

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._tickets: list[Ticket] = []
        self._thread: Optional[threading.Thread] = None

    def watch(self) -> Ticket:
        ticket = Ticket(threading.get_ident())
        with self._lock:
            self._tickets.append(ticket)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="dpverify-watchdog", daemon=True)
                self._thread.start()
        return ticket

    def release(self, ticket: Ticket) -> None:
        with self._lock:
            self._tickets.remove(ticket)
            if ticket.fired:  # withdraw the exception if it has not been delivered yet
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ticket.thread), None)

    def _loop(self) -> None:
        while True:
            try:
                limit = run_limit()
            except SpecError:
                limit = DEFAULT_LIMIT
            time.sleep(min(1.0, limit / 4))
            now = self._clock()
            with self._lock:
                for ticket in self._tickets:
                    try:
                        cpu = time.clock_gettime(ticket.cpu)
                    except OSError:  # the thread has ended: its ticket is about to be released
                        continue
                    if ticket.leaves != ticket.seen:
                        ticket.seen, ticket.since, ticket.since_cpu = ticket.leaves, now, cpu
                    elif (cpu - ticket.since_cpu >= limit * (ticket.fired + 1)  # again if it was caught
                          or now - ticket.since >= 10 * limit * (ticket.fired + 1)):
                        ticket.fired += 1
                        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ticket.thread),
                                                                   ctypes.py_object(WallClockLimit))


_ORIGINAL_MONOTONIC = time.monotonic
WATCHDOG = Watchdog()
install()  # on import: dpverify is imported before spec files, so `from random import random` gets the guard
