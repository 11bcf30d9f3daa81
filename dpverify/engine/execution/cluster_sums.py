"""The sample-complexity sums of :class:`~dpverify.engine.datasets.multisets.MultisetSum` on a Dask cluster.

The fast reading's sum over multisets is split by the first record's count (as the local worker
pool splits it) into work units of plain data: the spec file's path, SHA-256 and the versions the
caller runs (checked on the worker by :func:`.cluster_laws.same_checkout`), the program's qualified
name, the parameters, the population, the precision, the grid 2^-S and the chunk.  A worker imports
the spec file by path (:func:`.cluster_laws.load_program`) and computes the chunk's exact integer
sums (L, H, fallbacks) in a child forked for it (:func:`.cluster_laws.run_forked`); the caller adds
the integers, so the enclosure is the local run's, bit for bit.

Which outputs are bad (the caller's predicate, a closure over the claim) never travels: each unit
carries a table output -> bad(output) evaluated in the caller (keyed by :func:`key`, which tells
1, 1.0 and True apart, as the predicate may).  A worker that meets an output not in
the table sends the outputs it missed instead of sums; the caller evaluates the predicate on them
(so its refusals are raised here, as in the local run) and recomputes only those chunks, until none
misses.  The table is seeded with the outputs of a few multisets read here, so usually one round
does.  A program without a path (a closure, a lambda), records or outputs that are not plain values
(numbers, strings, tuples of them) are summed locally.
"""
from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any, Optional

from .cluster_laws import load_program, program_reference, run_forked, same_checkout, versions
from .cluster_laws import digest as file_digest
from ..datasets.counts import Sample
from ..program.enumerate import Session
from ..program.reading import _call

UNITS_PER_WORKER = 3
"""Chunks per worker thread (the cost of a multiset varies with its counts; a unit costs a fork)."""
SEEDS = 3
"""Multisets read in the caller to seed the table of bad outputs."""
MAX_ROUNDS = 8
"""Rounds of missed outputs after which the sum is computed locally (a program whose outputs change
from run to run, such as a clock's reading, would otherwise miss forever)."""

_PLAIN = (int, float, complex, str, bytes, bool, Fraction, type(None))


class NotPlain(Exception):
    """An output that may not compare equal after travelling: the sum is computed locally."""


def plain(value: Any) -> bool:
    """Whether ``value`` travels by pickle and compares as it did: Python numbers, strings, None,
    Fractions, and tuples and frozensets of them."""
    if isinstance(value, (tuple, frozenset)):
        return type(value) in (tuple, frozenset) and all(plain(v) for v in value)
    return type(value) in _PLAIN


def key(value: Any) -> Any:
    """``value`` as a key of the table of bad outputs that merges no two outputs the predicate might tell
    apart: the type at every level (1, 1.0 and True are three keys, as are (1,) and (True,)) and floats by
    repr (-0.0 is not 0.0; a NaN finds itself after pickling)."""
    if type(value) in (tuple, frozenset):
        return type(value).__name__, type(value)(key(v) for v in value)
    if type(value) in (float, complex):
        return type(value).__name__, repr(value)
    return type(value).__name__, value


def sums_of_chunk(unit: dict) -> dict:
    """A work unit, run on a worker: {"sums": (L, H, fallbacks)} over the chunk's multisets (the
    exact integers :meth:`MultisetSum._chunk` gives), {"misses": outputs} when outputs not in the
    unit's table were met, or {"local": True} when an output is not a plain value."""
    same_checkout(unit)
    load_program(unit["file"], unit["qualname"], unit["digest"])
    return run_forked(_compute, unit)


def _compute(unit: dict) -> dict:
    program = load_program(unit["file"], unit["qualname"], unit["digest"])
    table: dict = unit["table"]
    misses: dict = {}

    def bad(output: Any) -> bool:
        if not plain(output):
            raise NotPlain
        found = table.get(key(output))
        if found is not None:
            return found
        misses.setdefault(key(output), output)
        return False

    summing = unit["summer"](program, unit["values"], unit["population"], bad, unit["dps"], fast=True, counts=False)
    try:
        sums = summing._chunk(unit["n"], unit["scale"], unit["firsts"])
    except NotPlain:
        return {"local": True}
    return {"misses": list(misses.values())} if misses else {"sums": sums}


def remote_sums(summing: Any, where: Any, n: int, scale: int, chunks: list[list[int]],
                summer: type) -> Optional[tuple[int, int, int]]:
    """(L, H, fallbacks) of ``summing`` (a MultisetSum) at n over the chunks of first counts, computed by
    the executor ``where``; None when the program or the data cannot travel (then the caller sums locally).
    ``summer`` is the class MultisetSum itself (it travels by name: this module cannot import
    multisets, which calls it); a worker builds one with the unit's program and table and runs its
    ``_chunk``."""
    reference = program_reference(summing.program)
    population = tuple(zip(summing.records, summing.p))
    if reference is None or not plain(summing.records):
        return None
    table = _seed(summing, n)
    base = {"file": reference[0], "qualname": reference[1], "digest": file_digest(reference[0]),
            "versions": versions(), "values": dict(summing.values), "population": population,
            "dps": summing.dps, "n": n, "scale": scale, "summer": summer}
    results: list[Optional[tuple]] = [None] * len(chunks)
    todo = list(range(len(chunks)))
    for _ in range(MAX_ROUNDS):
        units = [{**base, "firsts": chunks[k], "table": dict(table)} for k in todo]
        missed = []
        for k, found in zip(todo, where.map(sums_of_chunk, units)):
            if found.get("local"):
                return None
            if "sums" in found:
                results[k] = found["sums"]
            else:
                missed.append(k)
                for output in found["misses"]:
                    if key(output) not in table:
                        table[key(output)] = bool(summing.bad(output))
        todo = missed
        if not todo:
            return tuple(sum(part[i] for part in results) for i in range(3))  # type: ignore[return-value]
    return None


def _seed(summing: Any, n: int) -> dict:
    """bad(output) for the outputs of a few multisets (all of one record, for the first records), read
    here by the general reading; a run or a predicate that fails is left to the units to meet."""
    table: dict = {}
    session = Session(summing.backend)  # not the caller's: its tail windows must stay as a local run leaves them
    for i in range(min(SEEDS, len(summing.records))):
        if summing.p[i] == 0:
            continue
        counts = [0] * len(summing.records)
        counts[i] = n
        data = Sample(itertools.chain.from_iterable([r] * c for r, c in zip(summing.records, counts)))
        data.counts = dict(zip(summing.records, counts))
        try:
            outputs = list(_call(summing.program, data, summing.values, session))
            for output in outputs:
                if plain(output) and key(output) not in table:
                    table[key(output)] = bool(summing.bad(output))
        except Exception:  # noqa: BLE001  (the units meet it again and report it)
            continue
    return table


__all__ = ["MAX_ROUNDS", "UNITS_PER_WORKER", "key", "plain", "remote_sums", "sums_of_chunk"]
