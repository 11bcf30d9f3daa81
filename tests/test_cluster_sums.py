"""The sample-complexity sums (dpverify/engine/cluster_sums.py) on a local Dask cluster of two worker
processes started here, against the local run: the same enclosure bit for bit (exact integer sums), the
same verdict and figures through dp.check, outputs the caller's table missed sent back and the chunks
redone, refusals (another spec file at the path, other versions, a spec error) raised as SpecErrors."""
from __future__ import annotations

import sys
import textwrap
from fractions import Fraction

import pytest

distributed = pytest.importorskip("distributed", reason="Dask's distributed is not installed "
                                                        "(pip install -e '.[cluster]'; dev includes it)")

import dpverify as dp  # noqa: E402
from dpverify.engine.execution import cluster_laws, cluster_sums, executor
from dpverify.engine.datasets import multisets  # noqa: E402
from dpverify.engine.datasets.multisets import MultisetSum  # noqa: E402
from dpverify.errors import SpecError  # noqa: E402
from dpverify.loader import load  # noqa: E402

SPEC = textwrap.dedent('''
    from fractions import Fraction
    import dpverify as dp

    eps = dp.symbol("eps", positive=True)
    XS, THRESHOLDS, TARGET = (0, 1, 2, 3), (0, 1, 2, 3, 4), 2
    POPULATION = {(x, int(x >= TARGET)): Fraction(1, 4) for x in XS}

    def learner(data, eps):
        """The threshold learner by the exponential mechanism (read per multiset: not of the counts form)."""
        errors = {t: sum(int(x >= t) != y for x, y in data) for t in THRESHOLDS}
        return dp.exponential(THRESHOLDS, lambda t: -Fraction(errors[t], len(data)), eps,
                              sensitivity=Fraction(1, len(data)))

    def positives(data, eps):
        """Deterministic: how many positive labels; outputs 1..n-1 appear on no multiset of one record."""
        return sum(y for _, y in data)

    def flags(data, eps):
        """True on some multisets, 1 on the others: equal in Python, told apart by the predicate below."""
        return True if data.counts[(0, 0)] > 7 else 1

    def raises(data, eps):
        if data.counts[(0, 0)] == 3:
            raise ValueError("no")
        return 0

    def true_error(t):
        return sum(p for (x, y), p in POPULATION.items() if int(x >= t) != y)

    universe = dp.universe(list(POPULATION), n=1, neighbours=dp.REPLACE_ONE)
    learners = dp.spec(learner, name="learner", universe=universe, grid={eps: [1]}, claims=[
        dp.sample_complexity(population=POPULATION, error=true_error, alpha=Fraction(1, 4), beta=Fraction(1, 4),
                             bound=28)])
''')


@pytest.fixture(scope="module")
def scheduler():
    cluster = distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                       dashboard_address=None, silence_logs=50)
    try:
        yield cluster.scheduler_address
    finally:
        executor.close_all()
        cluster.close()


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    path = tmp_path_factory.mktemp("cluster_sums") / "cluster_sums_specs.py"
    path.write_text(SPEC)
    specs = load(path)
    return path, specs, sys.modules[specs[0].mechanism.__module__]


@pytest.fixture
def remote_calls(monkeypatch):
    """Sums over 2,000 multisets and more go to the cluster; the (n, rounds) of each remote sum."""
    monkeypatch.setattr(multisets, "REMOTE_FROM", 2_000)
    calls = []
    real = cluster_sums.remote_sums

    def spy(summing, where, n, scale, chunks, summer):
        rounds = []
        real_map = where.map

        def counted(fn, units):
            rounds.append(len(units))
            return real_map(fn, units)
        where.map = counted
        try:
            return real(summing, where, n, scale, chunks, summer)
        finally:
            del where.map
            calls.append((n, rounds))
    monkeypatch.setattr(cluster_sums, "remote_sums", spy)
    return calls


def _summed(module, program, bad, n):
    population = tuple(module.POPULATION.items())
    summing = MultisetSum(program, {"eps": 1}, population, bad, 30)
    return summing.at(n), summing


def test_the_enclosure_equals_the_local_run_bit_for_bit(loaded, scheduler, remote_calls, monkeypatch) -> None:
    _, _, module = loaded
    bad = lambda t: module.true_error(t) > Fraction(1, 4)  # noqa: E731  (a closure: it never travels)
    local, mine = _summed(module, module.learner, bad, 30)
    assert remote_calls == []
    monkeypatch.setenv(executor.ENVIRONMENT, scheduler)
    remote, theirs = _summed(module, module.learner, bad, 30)
    assert [n for n, _ in remote_calls] and all(n == 30 for n, _ in remote_calls)
    assert remote._mpi_ == local._mpi_ and theirs.fallbacks == mine.fallbacks
    assert theirs.paths[30] == "multisets" and 0 < float(local.a) < 1
    assert remote_calls[0][1] == [remote_calls[0][1][0]], "the seeded table needed no second round"


def test_outputs_the_table_missed_are_decided_here_and_their_chunks_redone(loaded, scheduler, remote_calls,
                                                                           monkeypatch) -> None:
    _, _, module = loaded
    decided = []

    def bad(k):
        decided.append(k)
        return k > 13
    local, _ = _summed(module, module.positives, bad, 30)
    monkeypatch.setenv(executor.ENVIRONMENT, scheduler)
    decided.clear()
    remote, _ = _summed(module, module.positives, bad, 30)
    assert remote._mpi_ == local._mpi_
    assert len(remote_calls[0][1]) >= 2, "some chunks met outputs the seeds did not show"
    assert set(decided) == set(range(31))


def test_a_sum_that_keeps_missing_outputs_is_computed_locally(loaded, scheduler, remote_calls,
                                                              monkeypatch) -> None:
    _, _, module = loaded
    local, _ = _summed(module, module.positives, lambda k: k > 13, 30)
    monkeypatch.setenv(executor.ENVIRONMENT, scheduler)
    monkeypatch.setattr(cluster_sums, "MAX_ROUNDS", 1)
    remote, _ = _summed(module, module.positives, lambda k: k > 13, 30)
    assert remote._mpi_ == local._mpi_ and [len(rounds) for _, rounds in remote_calls] == [1]


def test_a_mutant_threshold_is_caught(loaded, scheduler, remote_calls, monkeypatch) -> None:
    """bad at a threshold one higher changes the sum: the remote sum is not a copy of any fixed value."""
    _, _, module = loaded
    monkeypatch.setenv(executor.ENVIRONMENT, scheduler)
    right, _ = _summed(module, module.positives, lambda k: k > 13, 30)
    mutant, _ = _summed(module, module.positives, lambda k: k > 14, 30)
    assert mutant.b < right.a


def test_verdict_and_figures_equal_the_local_run(loaded, scheduler, remote_calls, monkeypatch) -> None:
    _, specs, _ = loaded
    [local] = dp.check(specs[0], precision=30, proofs=False)
    monkeypatch.setenv(executor.ENVIRONMENT, scheduler)
    [remote] = dp.check(specs[0], precision=30, proofs=False)
    assert remote_calls, "the cluster was not used"
    assert (remote.status, remote.message) == (local.status, local.message)
    assert remote.evidence.curve == local.evidence.curve and remote.status.value == "verified"


def test_a_spec_error_on_a_worker_is_raised_here(loaded, scheduler, remote_calls, monkeypatch) -> None:
    _, _, module = loaded
    with pytest.raises(SpecError) as local:
        _summed(module, module.raises, lambda o: o > 0, 30)
    monkeypatch.setenv(executor.ENVIRONMENT, scheduler)
    with pytest.raises(SpecError) as remote:
        _summed(module, module.raises, lambda o: o > 0, 30)
    assert remote_calls and remote.value.problem == local.value.problem


def test_a_worker_with_another_spec_file_or_versions_refuses(loaded, scheduler, monkeypatch) -> None:
    path, _, module = loaded
    monkeypatch.setenv(executor.ENVIRONMENT, scheduler)
    where = executor.current()
    unit = {"file": str(path), "qualname": "positives", "digest": cluster_laws.digest(str(path)),
            "versions": cluster_laws.versions(), "values": {"eps": 1}, "n": 4, "scale": 64, "firsts": [4, 3],
            "population": tuple(module.POPULATION.items()), "dps": 20, "summer": MultisetSum,
            "table": {cluster_sums.key(k): k > 0 for k in range(5)}}
    [found] = where.map(cluster_sums.sums_of_chunk, [unit])
    assert found["sums"][0] > 0
    with pytest.raises(SpecError, match="other contents at this path"):
        where.map(cluster_sums.sums_of_chunk, [{**unit, "digest": "0" * 64}])
    with pytest.raises(SpecError, match="install the same versions"):
        where.map(cluster_sums.sums_of_chunk, [{**unit, "versions": ("0.0.0",)}])


def test_outputs_python_merges_are_decided_apart(loaded, scheduler, remote_calls, monkeypatch) -> None:
    """1 == True, but the predicate "is True" tells them apart: the table keys them apart too (a table
    keyed by the outputs themselves would give every multiset the first one's answer)."""
    _, _, module = loaded
    local, _ = _summed(module, module.flags, lambda o: o is True, 30)
    monkeypatch.setenv(executor.ENVIRONMENT, scheduler)
    remote, _ = _summed(module, module.flags, lambda o: o is True, 30)
    assert remote_calls and remote._mpi_ == local._mpi_ and 0 < float(local.a) < 1
    assert len({cluster_sums.key(v) for v in (1, 1.0, True, (1,), (True,), 0.0, -0.0)}) == 7
    nan = float("nan")
    assert cluster_sums.key(nan) == cluster_sums.key(float("nan"))


def test_outputs_that_are_not_plain_values_stay_local() -> None:
    assert cluster_sums.plain((1, Fraction(1, 2), "a", None, frozenset({2})))
    assert not cluster_sums.plain([1]) and not cluster_sums.plain(object())
