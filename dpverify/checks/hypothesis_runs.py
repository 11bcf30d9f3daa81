"""Hypothesis searches whose draws depend on the claim alone, writing nothing to the user's directory.

The formula search (:mod:`dpverify.checks.formulas.search`) and the grey-box replay's pair search
(:mod:`dpverify.checks.audit.replay`) run hypothesis inside ``dpverify check``: both wrap it
in :func:`isolated`.
"""
from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator


@contextlib.contextmanager
def isolated() -> Iterator[None]:
    """Hypothesis with scratch storage and no local constants (see the two helpers)."""
    with _scratch_storage(), _no_local_constants():
        yield


@contextlib.contextmanager
def _no_local_constants() -> Iterator[None]:
    """Keep hypothesis from mixing constants of the loaded modules into its draws.

    Hypothesis (6.131 and later) reads literals from every "local" module in ``sys.modules``
    and draws them now and then, under a time limit on the parsing: the examples tried would
    depend on what else the process imported and on the machine's load.  With no local
    constants the draws depend on the claim alone (derandomised), so the search gives the same
    answer in ``dpverify check``, in pytest and under load.  If hypothesis's internals change,
    the search still runs (its verdicts are confirmed exactly either way)."""
    from hypothesis.internal.conjecture import providers
    getter = getattr(providers, "_get_local_constants", None)
    try:
        sorted_set, key = providers.SortedSet, providers.float_to_int
        empty = providers.Constants(integers=sorted_set(), floats=sorted_set(key=key), bytes=sorted_set(),
                                    strings=sorted_set())
    except (AttributeError, TypeError):
        getter = None
    if getter is None:
        yield
        return
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = getter


@contextlib.contextmanager
def _scratch_storage() -> Iterator[None]:
    """Point hypothesis's storage at a temporary directory, removed afterwards.

    Even with ``database=None``, hypothesis (6.131 and later) caches the constants it reads
    from local modules under ``.hypothesis/constants`` in the working directory; the caller's
    directory must stay as it was.  The previous storage directory (a test suite's own) is
    restored on the way out."""
    from hypothesis import configuration
    previous = vars(configuration).get("__hypothesis_home_directory")  # module global, not mangled
    with tempfile.TemporaryDirectory(prefix="dpverify-hypothesis-") as scratch:
        configuration.set_hypothesis_home_dir(scratch)
        try:
            yield
        finally:
            configuration.set_hypothesis_home_dir(previous)


__all__ = ["isolated"]
