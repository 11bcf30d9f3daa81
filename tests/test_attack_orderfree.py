"""Adversarial reproducers against the order-free reading of symmetric=True
(:mod:`dpverify.engine.datasets.orderfree`).

Each reproducer is a spec module with two specs of one mechanism whose law DOES depend on the order
of the records: ``attack`` (``symmetric=True``) and ``truth`` (``symmetric=False``, which enumerates
every ordered dataset and refutes the claim).  The correct behaviour for ``attack`` is the truth's
verdict, or an error refusing the declaration (the full check's witness); never ``verified``.
Findings still open are strict xfails (on CPython 3.11, where the order-free reading runs; on other
versions it refuses and the full check decides, so they must pass there).  The same modules are in
/tmp/attack_sym/ of the session that wrote them (``dpverify check --no-proofs <file>``).
"""
from __future__ import annotations

import importlib.util
import itertools
import sys

import pytest

import dpverify as dp

FAST = sys.version_info[:2] == (3, 11)
_COUNTER = itertools.count()

SOURCES: dict[str, str] = {}
SOURCES['globals_shadow_restored'] = r'''"""Attack 1: the mechanism shadows the builtin `sorted` in its own module for the length of each
run (through a module-level alias of globals()), and removes the shadow before returning.  The
analysis (run after the laws) sees the builtin, and the bindings check (after the runs) holds.
At run time `sorted(data)` is the data as given, so sorted(data)[0] is the FIRST record."""
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)
_G = globals()


def _as_given(d):
    return list(d)


def mech(data, eps):
    _G["sorted"] = _as_given
    first = sorted(data)[0]
    del _G["sorted"]
    return dp.randomized_response(1 if first == min(data) else 0, eps)


def build(symmetric):
    return dp.spec(mech, name=f"shadow_{symmetric}",
                   universe=dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE, symmetric=symmetric),
                   grid={eps: [Rational(1, 2)]}, claims=[dp.private(Rational(1, 10))])


attack = build(True)
truth = build(False)
'''
SOURCES['settrace_off'] = r'''"""Attack 3: a per-record term whose free variable is a user's object that sees the order
of the records (its __rmul__ answers the first record it meets, then 0).  The analysis watches
the free variable w; the Watch should see it is not plain and send the check to every ordering."""
from sympy import Rational

import dpverify as dp
from sys import settrace as _settrace

eps = dp.symbol("eps", positive=True)


class FirstOnly:
    def __init__(self):
        self.seen = False

    def __rmul__(self, x):
        if self.seen:
            return 0
        self.seen = True
        return x


def mech(data, eps):
    _settrace(None)
    w = FirstOnly()
    first = sum(x * w for x in data)
    return dp.randomized_response(1 if first == min(data) else 0, eps)


def build(symmetric):
    return dp.spec(mech, name=f"probe_{symmetric}",
                   universe=dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE, symmetric=symmetric),
                   grid={eps: [Rational(1, 2)]}, claims=[dp.private(Rational(1, 10))])


attack = build(True)
truth = build(False)
'''
SOURCES['closure_cell_swapped'] = r'''"""Attack 4: a helper read by the analysis, sum(x * k for x in data), takes k from a closure cell
that is plain (1) when the analysis looks (after the laws), so k is "known plain" and no run is
watched; the mechanism sets the cell to a user's object for the length of each run, through a
sibling closure the analysis never reads (it receives no data), and puts 1 back before returning."""
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)


class FirstOnly:
    def __init__(self):
        self.seen = False

    def __rmul__(self, x):
        if self.seen:
            return 0
        self.seen = True
        return x


def _make():
    k = 1

    def weighted(data):
        return sum(x * k for x in data)

    def set_k(value):
        nonlocal k
        k = value

    return weighted, set_k


weighted, set_k = _make()


def mech(data, eps):
    set_k(FirstOnly())
    first = weighted(data)
    set_k(1)
    return dp.randomized_response(1 if first == min(data) else 0, eps)


def build(symmetric):
    return dp.spec(mech, name=f"cell_{symmetric}",
                   universe=dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE, symmetric=symmetric),
                   grid={eps: [Rational(1, 2)]}, claims=[dp.private(Rational(1, 10))])


attack = build(True)
truth = build(False)
'''
SOURCES['frame_by_aliases'] = r'''"""Attack 5 (the documented limit, by aliases): the names the analysis forbids (_getframe,
f_locals) are reached under other names bound at module level, so the mechanism reads the data
under a name that is not tainted, and indexes it."""
from operator import attrgetter
from sys import _getframe as _here

from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)
_frame_vars = attrgetter("f_" + "locals")


def mech(data, eps):
    same = _frame_vars(_here())["data"]
    return dp.randomized_response(1 if same[0] == min(data) else 0, eps)


def build(symmetric):
    return dp.spec(mech, name=f"frame_{symmetric}",
                   universe=dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE, symmetric=symmetric),
                   grid={eps: [Rational(1, 2)]}, claims=[dp.private(Rational(1, 10))])


attack = build(True)
truth = build(False)
'''
SOURCES['order_dependent_neighbours'] = r'''"""Finding 6 (not the code reader: the neighbour relation): an order-free mechanism (it reads only
sum(data)) under a custom neighbour relation that depends on the order -- "x' replaces the FIRST
record of x".  Over multisets the engine relates sorted representatives only."""
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)


def replace_first(x, y):
    return len(x) == len(y) and x[0] != y[0] and x[1:] == y[1:]


def mech(data, eps):
    return dp.randomized_response(1 if sum(data) == 0 else 0, eps)


def build(symmetric):
    return dp.spec(mech, name=f"nbr_{symmetric}",
                   universe=dp.universe([0, 1], n=2, neighbours=replace_first, symmetric=symmetric),
                   grid={eps: [Rational(1, 2)]}, claims=[dp.private(Rational(1, 10))])


attack = build(True)
truth = build(False)
'''
SOURCES['function_builtins'] = r'''"""Attack 7: CPython 3.11 looks builtins up in the FUNCTION's __builtins__ (fixed when the function
is made), while the analysis checks the module's globals()['__builtins__'].  The mechanism is made
while the module's __builtins__ is a copy whose `sorted` keeps the order given; then the module's
__builtins__ is put back.  No run-time mutation at all: the bindings always hold."""
import builtins
import types

from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)


def _mech(data, eps):
    first = sorted(data)[0]
    return dp.randomized_response(1 if first == min(data) else 0, eps)


_fake = dict(vars(builtins), sorted=list)
mech = types.FunctionType(_mech.__code__, dict(globals(), __builtins__=_fake), "mech")
mech.__globals__["__builtins__"] = builtins   # what the analysis reads; the function keeps _fake


def build(symmetric):
    return dp.spec(mech, name=f"builtins_{symmetric}",
                   universe=dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE, symmetric=symmetric),
                   grid={eps: [Rational(1, 2)]}, claims=[dp.private(Rational(1, 10))])


attack = build(True)
truth = build(False)
'''
SOURCES['code_swapped'] = r'''"""Attack 8: a helper the analysis reads (first_of) is analysed with its own code; for the length of
each run a helper that receives no data (so is never read) swaps in another function's __code__,
and swaps the original back before the mechanism returns.  The bindings hold the function OBJECT,
which never changes."""
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)


def first_of(data):
    return min(data)


def _really_first(data):
    return data[0]


_original = first_of.__code__
_evil = _really_first.__code__


def _swap(code):
    first_of.__code__ = code


def mech(data, eps):
    _swap(_evil)
    first = first_of(data)
    _swap(_original)
    return dp.randomized_response(1 if first == min(data) else 0, eps)


def build(symmetric):
    return dp.spec(mech, name=f"code_{symmetric}",
                   universe=dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE, symmetric=symmetric),
                   grid={eps: [Rational(1, 2)]}, claims=[dp.private(Rational(1, 10))])


attack = build(True)
truth = build(False)
'''
SOURCES['shared_code_closure_float'] = r'''"""Attack 9 (static, no run-time tricks): two closures from one factory share a code object.  The
analysis checks a pure function's captured values only the first time it meets its code (the
`pure_done` memo is keyed by the code, and the closure/defaults check comes after the memo test),
so `tenth`, which captures the float 0.1, is taken as pure and exact because `one` (capturing 1) was
checked first.  Float sums depend on the order: 0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1."""
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)


def scale(w):
    def term(x):
        return x * w
    return term


one = scale(1)
tenth = scale(0.1)


def mech(data, eps):
    size = sum(one(x) for x in data)                 # checked: marks term's code pure
    given = sum(tenth(x) for x in data)              # not checked again: a float per record
    ranked = sum(tenth(x) for x in sorted(data))     # the same terms, in sorted order
    return dp.randomized_response(1 if given == ranked and size > 0 else 0, eps)


def build(symmetric):
    return dp.spec(mech, name=f"float_{symmetric}",
                   universe=dp.universe([1, 2, 3], n=3, neighbours=dp.REPLACE_ONE, symmetric=symmetric),
                   grid={eps: [Rational(1, 2)]}, claims=[dp.private(Rational(1, 10))])


attack = build(True)
truth = build(False)
'''
SOURCES['watched_names_overwritten'] = r'''"""Attack 10 (static): one comprehension code object met twice with different free variables not
known plain.  `comprehension()` sets proof.watched[code] = the unknown names of the LAST analysis,
overwriting the first: f_first's genexpr must have k checked (k = 0.1), f_unused's must have a
checked; only `a` is watched in the end, and f_unused never runs, so k = 0.1 is never looked at."""
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)


def make(a, k):
    def weighted(data):
        return sum(x * a + x * k for x in data)
    return weighted


f_first = make(1, 0.1)    # k is a float: its sum depends on the order
f_unused = make(0.1, 1)   # analysed second, never run


def mech(data, eps):
    given = f_first(data)
    if len(data) > 5:
        f_unused(data)
    ranked = f_first(sorted(data))   # a list, not the data: not read
    return dp.randomized_response(1 if given == ranked else 0, eps)


def build(symmetric):
    return dp.spec(mech, name=f"overwrite_{symmetric}",
                   universe=dp.universe([1, 2, 3], n=3, neighbours=dp.REPLACE_ONE, symmetric=symmetric),
                   grid={eps: [Rational(1, 2)]}, claims=[dp.private(Rational(1, 10))])


attack = build(True)
truth = build(False)
'''
SOURCES['watched_user_object'] = r'''"""Attack 2 (control): a per-record term whose free variable is a user's object that sees the order
of the records (its __rmul__ answers the first record it meets, then 0).  The analysis watches
the free variable w; the Watch should see it is not plain and send the check to every ordering."""
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)


class FirstOnly:
    def __init__(self):
        self.seen = False

    def __rmul__(self, x):
        if self.seen:
            return 0
        self.seen = True
        return x


def mech(data, eps):
    w = FirstOnly()
    first = sum(x * w for x in data)
    return dp.randomized_response(1 if first == min(data) else 0, eps)


def build(symmetric):
    return dp.spec(mech, name=f"probe_{symmetric}",
                   universe=dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE, symmetric=symmetric),
                   grid={eps: [Rational(1, 2)]}, claims=[dp.private(Rational(1, 10))])


attack = build(True)
truth = build(False)
'''
SOURCES['float_closure_alone'] = r'''"""Attack 9 (static, no run-time tricks): two closures from one factory share a code object.  The
analysis checks a pure function's captured values only the first time it meets its code (the
`pure_done` memo is keyed by the code, and the closure/defaults check comes after the memo test),
so `tenth`, which captures the float 0.1, is taken as pure and exact because `one` (capturing 1) was
checked first.  Float sums depend on the order: 0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1."""
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)


def scale(w):
    def term(x):
        return x * w
    return term


one = scale(1)
tenth = scale(0.1)


def mech(data, eps):
    size = 1
    given = sum(tenth(x) for x in data)              # not checked again: a float per record
    ranked = sum(tenth(x) for x in sorted(data))     # the same terms, in sorted order
    return dp.randomized_response(1 if given == ranked and size > 0 else 0, eps)


def build(symmetric):
    return dp.spec(mech, name=f"float_{symmetric}",
                   universe=dp.universe([1, 2, 3], n=3, neighbours=dp.REPLACE_ONE, symmetric=symmetric),
                   grid={eps: [Rational(1, 2)]}, claims=[dp.private(Rational(1, 10))])


attack = build(True)
truth = build(False)
'''
SOURCES['watched_float_alone'] = r'''"""Attack 10 (static): one comprehension code object met twice with different free variables not
known plain.  `comprehension()` sets proof.watched[code] = the unknown names of the LAST analysis,
overwriting the first: f_first's genexpr must have k checked (k = 0.1), f_unused's must have a
checked; only `a` is watched in the end, and f_unused never runs, so k = 0.1 is never looked at."""
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)


def make(a, k):
    def weighted(data):
        return sum(x * a + x * k for x in data)
    return weighted


f_first = make(1, 0.1)    # k is a float: its sum depends on the order
f_unused = make(0.1, 1)   # analysed second, never run


def mech(data, eps):
    given = f_first(data)
    ranked = f_first(sorted(data))   # a list, not the data: not read
    return dp.randomized_response(1 if given == ranked else 0, eps)


def build(symmetric):
    return dp.spec(mech, name=f"overwrite_{symmetric}",
                   universe=dp.universe([1, 2, 3], n=3, neighbours=dp.REPLACE_ONE, symmetric=symmetric),
                   grid={eps: [Rational(1, 2)]}, claims=[dp.private(Rational(1, 10))])


attack = build(True)
truth = build(False)
'''
SOURCES['score_closure_through_binary_op'] = r'''"""Attack 11 (static): the score closure of dp.exponential is trusted to be called with the plain
candidates only, because a stack simulation (consumed_as_second) says it is exponential's second
argument.  `(lambda y: ...) + WRAP` passes the closure to WRAP.__radd__ instead (a BINARY_OP pops
the closure, and the simulation counts it as the operand's result), which calls the score with an
object that sees, through ==, the records in the data's order; WRAP returns the real score."""
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)
CANDIDATES = (0, 1)


class Peek:
    def __init__(self):
        self.seen = []

    def __eq__(self, other):
        self.seen.append(other)
        return False

    __hash__ = None


class Wrap:
    def __radd__(self, score):
        peek = Peek()
        score(peek)                      # the records, in the order of the data
        best = 1 if peek.seen[0] == min(peek.seen) else 0
        return lambda y: 10 if y == best else 0


WRAP = Wrap()


def mech(data, eps):
    return dp.exponential(CANDIDATES, (lambda y: sum(1 for x in data if x == y)) + WRAP, eps, sensitivity=1)


def build(symmetric):
    return dp.spec(mech, name=f"plus_{symmetric}",
                   universe=dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE, symmetric=symmetric),
                   grid={eps: [Rational(1, 2)]}, claims=[dp.private(Rational(1, 10))])


attack = build(True)
truth = build(False)
'''
SOURCES['query_fn_default_taken_plain'] = r'''"""Attack 12 (static): dp.query(fn) with fn(d, w=RECORDER).  _arity counts only parameters without
defaults, so the query is not a score and runs fn(data): w is its default, a user's object.  The
analysis, for q(data) with no candidate, takes candidate_plain = all([]) = True and marks fn's
SECOND parameter known plain, so the per-record term x * w is not watched; w sees the records in
the data's order.  (With a float default the law is refused by the float guard, but the
declaration is still accepted from the code.)"""
from sympy import Rational

import dpverify as dp

eps = dp.symbol("eps", positive=True)


class Recorder:
    def __init__(self):
        self.seen = []

    def __rmul__(self, x):
        self.seen.append(x)
        return 0

    def first_and_reset(self):
        first, self.seen = self.seen[0], []
        return first


def first_of(d, w=Recorder()):
    sum(x * w for x in d)
    return w.first_and_reset()


q = dp.query(first_of)


def mech(data, eps):
    return dp.randomized_response(1 if q(data) == min(data) else 0, eps)


def build(symmetric):
    return dp.spec(mech, name=f"qdefault_{symmetric}",
                   universe=dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE, symmetric=symmetric),
                   grid={eps: [Rational(1, 2)]}, claims=[dp.private(Rational(1, 10))])


attack = build(True)
truth = build(False)
'''
# name -> (open on the order-free path only?, why); None: open on every Python version
OPEN: dict[str, tuple] = {
    'globals_shadow_restored': (True, 'the mechanism shadows `sorted` in its module through a globals() alias during each run and restores it; the analysis runs after the laws and the bindings are only compared at the end'),
    'settrace_off': (True, 'Watch relies on sys.settrace, which the mechanism switches off under an alias (`from sys import settrace as _settrace`)'),
    'closure_cell_swapped': (True, "a free variable taken as known plain from its closure cell at analysis time is set to a user's object during each run by a sibling closure the analysis never reads"),
    'frame_by_aliases': (True, "documented limit, but the forbidden-name filter is defeated by module-level aliases (_getframe, attrgetter('f_locals'))"),
    'order_dependent_neighbours': (None, 'not orderfree: a custom neighbour relation that depends on record order is applied to sorted representatives only'),
    'function_builtins': (True, "CPython 3.11 resolves builtins in the function's __builtins__, the analysis checks globals()['__builtins__']"),
    'code_swapped': (True, "a helper that receives no data (never read) swaps an analysed function's __code__ for each run; bindings compare the function object only"),
    'shared_code_closure_float': (True, 'pure_function tests the pure_done memo (keyed by code) before the closure/defaults check: a second closure of the same code capturing a float is never checked'),
    'watched_names_overwritten': (True, "comprehension() overwrites proof.watched[code] with the last analysis' unknown names: a free variable that must be watched for one closure is dropped by the analysis of another closure of the same code"),
    'score_closure_through_binary_op': (True, 'consumed_as_second counts a BINARY_OP as popping one value: `(lambda y: ...) + WRAP` hands the score closure, trusted to see plain candidates only, to WRAP.__radd__, which calls it with an object that sees the records in order'),
    'query_fn_default_taken_plain': (True, 'query_parts marks an Opaque fn\'s second parameter known plain when q(data) has no candidate (all([]) is True), though fn(data) leaves it at its default, a user\'s object'),
}
# fixed findings (they must pass everywhere): name -> what closed them
FIXED: dict[str, str] = {}


def _fix(name: str, how: str) -> None:
    OPEN.pop(name)
    FIXED[name] = how


_fix('order_dependent_neighbours', 'datasets._pairs relates two multisets when some orderings of them are related '
     '(l1_one/linf_one: the sorted-by-value orderings, the closest ones)')
for _name, _how in {
    'globals_shadow_restored': 'the whole program is read before the runs: the store to a subscript of a '
                               'module-level dict (the globals() alias) refuses the fast path',
    'settrace_off': 'a module-level alias of sys.settrace is a builtin that is not read: refused',
    'closure_cell_swapped': 'every function the program reaches is read; the sibling closure assigns a variable '
                            'of another function (STORE_DEREF of a free variable): refused',
    'frame_by_aliases': 'module-level aliases of _getframe and attrgetter are callables that are not read: refused',
    'function_builtins': "each read function's own __builtins__ must be the builtins module's dict",
    'code_swapped': 'the helper that swaps __code__ is reached, so read: the attribute __code__ refuses it; '
                    "after the runs every read function's code, defaults and cells are compared too",
    'shared_code_closure_float': "pure_function checks every function object's captured values and defaults "
                                 'before the memo on its code',
    'watched_names_overwritten': 'the names watched for one code object are added to, never overwritten',
    'score_closure_through_binary_op': 'consumed_as_second: an operator that pops the score function means it is '
                                       'not consumed by dp.exponential',
    'query_fn_default_taken_plain': "an Opaque query's second parameter is known plain only when the query is "
                                    'called with a plain candidate',
}.items():
    _fix(_name, _how)
CONTROLS = ['watched_user_object', 'float_closure_alone', 'watched_float_alone']


def _load(tmp_path, name: str):
    path = tmp_path / f"attack_{name}.py"
    path.write_text(SOURCES[name])
    spec = importlib.util.spec_from_file_location(f"attack_orderfree_{name}_{next(_COUNTER)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _results(spec):
    trace = sys.gettrace()  # a reproducer switches tracing off inside its mechanism
    try:
        return dp.check(spec, proofs=False)
    finally:
        sys.settrace(trace)


def _marks(name: str):
    fast, why = OPEN[name]
    open_here = fast is None or (fast and FAST)
    return pytest.mark.xfail(strict=True, reason=why) if open_here else ()


@pytest.mark.parametrize("name", list(OPEN) + list(FIXED) + CONTROLS)
def test_truth_refutes(tmp_path, name):
    """Every ordered dataset enumerated: the claim is refuted (the reproducer is meaningful)."""
    module = _load(tmp_path, name)
    assert [r.status.value for r in _results(module.truth)] == ["refuted"]


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(n)) for n in OPEN] + list(FIXED) + CONTROLS)
def test_symmetric_declaration_not_trusted(tmp_path, name):
    """symmetric=True must not turn the refuted claim into a verified one: the declaration is
    refuted (an error naming two orderings) or the verdict is the truth's."""
    module = _load(tmp_path, name)
    attack = _results(module.attack)
    truth = [r.status.value for r in _results(module.truth)]
    statuses = [r.status.value for r in attack]
    assert "verified" not in statuses
    assert statuses == truth or all(s == "error" and "symmetric=True" in str(r.message)
                                    for s, r in zip(statuses, attack))
