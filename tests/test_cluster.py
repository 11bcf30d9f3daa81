"""The Dask executor (dpverify/engine/executor.py, cluster_laws.py, screening.screen_spread) against the
local run, on a local cluster of two worker processes started here: the same laws, tables, verdicts
and achieved values; refusals travel back as the same SpecError; mechanisms that cannot be named by
path stay local; `dpverify check --scheduler` gives the local run's JSON."""
from __future__ import annotations

import re

import json
import subprocess
import sys
import textwrap

import pytest

distributed = pytest.importorskip("distributed", reason="Dask's distributed is not installed "
                                                        "(pip install -e '.[cluster]'; dev includes it)")

import dpverify as dp  # noqa: E402
from dpverify.engine.execution import cluster_laws, executor
from dpverify.engine.loss import screening  # noqa: E402
from dpverify.engine.loss.pairs import LossTable  # noqa: E402
from dpverify.engine.program.reading import all_distributions as local_distributions  # noqa: E402
from dpverify.errors import SpecError  # noqa: E402
from dpverify.loader import load  # noqa: E402

SPEC = textwrap.dedent('''
    from fractions import Fraction
    import dpverify as dp

    eps = dp.symbol("eps", positive=True)

    def learner(data, eps):
        """The exponential-mechanism threshold learner: 8 labelled records, n = 3 (512 datasets)."""
        def score(t):
            return -Fraction(sum(int(x >= t) != y for x, y in data), len(data))
        return dp.exponential(range(5), score, eps, sensitivity=Fraction(1, len(data)))

    def too_sensitive(data, eps):
        """A mutant: the score's sensitivity stated 4 times too small."""
        def score(t):
            return -Fraction(sum(int(x >= t) != y for x, y in data), len(data))
        return dp.exponential(range(5), score, eps, sensitivity=Fraction(1, 4 * len(data)))

    def noisy_count(data, eps):
        """Unclamped geometric noise on a count: tail windows that grow from dataset to dataset."""
        return dp.geometric(sum(x for x, _ in data), dp.exp(eps))

    def mixed_types(data, eps):
        """Returns 1 on some datasets and True on others: Python merges them, dpverify refuses."""
        return True if data[0] == (3, 1) else 1

    def raises(data, eps):
        if data == ((2, 0), (2, 0), (2, 0)):
            raise ValueError("no")
        return 0

    universe = dp.universe(dp.labelled(xs=(0, 1, 2, 3), labels=(0, 1)), n=3, neighbours=dp.REPLACE_ONE)
    learners = dp.spec(learner, name="learner", universe=universe, grid={eps: [1]},
                       claims=[dp.private(eps), dp.private(eps, delta=Fraction(1, 100))])
    mutant = dp.spec(too_sensitive, name="mutant", universe=universe, grid={eps: [1]},
                     claims=[dp.private(eps, expect="refuted")])
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
def spec_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("cluster") / "cluster_specs.py"
    path.write_text(SPEC)
    return path


@pytest.fixture
def on_cluster(scheduler, monkeypatch):
    monkeypatch.setenv(executor.ENVIRONMENT, scheduler)
    return scheduler


def _module(spec_file):
    specs = load(spec_file)
    return specs, sys.modules[specs[0].mechanism.__module__]


def _ends(table):
    return [sorted((repr(o), w._mpi_) for o, w in law.items()) for law in table.laws]


def _per_dataset(table):
    ends = _ends(table)
    return [ends[k] for k in table.law_of]


def _remote_calls(monkeypatch):
    calls = []
    real = cluster_laws._remote

    def spy(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)
    monkeypatch.setattr(cluster_laws, "_remote", spy)
    return calls


def test_tables_equal_the_local_reading(spec_file, on_cluster, monkeypatch) -> None:
    """The laws, their grouping and the tail windows of growing geometric noise: equal to the local run."""
    specs, module = _module(spec_file)
    datasets = dp_datasets(specs[0])
    calls = _remote_calls(monkeypatch)
    rounds = []
    real_map = executor.DaskExecutor.map

    def counted(self, fn, units):
        rounds.append(len(units))
        return real_map(self, fn, units)
    monkeypatch.setattr(executor.DaskExecutor, "map", counted)
    remote = cluster_laws.all_distributions(module.noisy_count, datasets, {"eps": 1}, 20)
    local = local_distributions(module.noisy_count, datasets, {"eps": 1}, 20)
    # every dataset's law equal; the local reading may group more (it proves laws identical from the runs'
    # exact descriptions, which do not travel), never fewer
    assert _per_dataset(remote) == _per_dataset(local) and len(local.laws) <= len(remote.laws)
    assert remote.windows == local.windows and len(local.laws) > 1
    assert calls == [(str(spec_file), "noisy_count")]
    assert len(rounds) >= 2, "the units' tail windows differed: some were recomputed with the merged ones"


def dp_datasets(spec):
    from dpverify.engine.datasets.datasets import enumerate_datasets
    return enumerate_datasets(spec.universe)


def test_verdicts_and_achieved_values_equal_the_local_run(spec_file, scheduler, monkeypatch) -> None:
    specs, _ = _module(spec_file)
    local = [dp.check(spec, precision=30, proofs=False) for spec in specs]
    monkeypatch.setenv(executor.ENVIRONMENT, scheduler)
    calls = _remote_calls(monkeypatch)
    remote = [dp.check(spec, precision=30, proofs=False) for spec in specs]
    assert calls, "the cluster was not used"
    for mine, theirs in zip(remote, local):
        assert [_figures(r) for r in mine] == [_figures(r) for r in theirs]
    assert [r.status.value for r in remote[1]] == ["refuted"]
    assert [r.status.value for r in remote[0]] == ["verified", "verified"]


def _figures(result):
    # the local reading proves more laws identical (from the runs' exact descriptions, which do not travel
    # from the workers), so its count of distinct laws may be smaller; everything else is equal
    message = re.sub(r"[\d,]+ distinct output laws", "N distinct output laws", result.message)
    return (result.status, message, getattr(result.evidence, "achieved_epsilon", None),
            getattr(result.evidence, "achieved_delta", None))


def test_refusals_travel_back_as_the_same_spec_error(spec_file, on_cluster) -> None:
    specs, module = _module(spec_file)
    datasets = dp_datasets(specs[0])
    for program in (module.mixed_types, module.raises):
        with pytest.raises(SpecError) as local:
            executor_env = executor.os.environ.pop(executor.ENVIRONMENT)
            try:
                local_distributions(program, datasets, {"eps": 1}, 30)
            finally:
                executor.os.environ[executor.ENVIRONMENT] = executor_env
        with pytest.raises(SpecError) as remote:
            cluster_laws.all_distributions(program, datasets, {"eps": 1}, 30)
        assert remote.value.problem.split(" (")[0] == local.value.problem.split(" (")[0]


def test_closures_and_small_universes_stay_local(spec_file, on_cluster, monkeypatch) -> None:
    specs, module = _module(spec_file)
    datasets = dp_datasets(specs[0])
    calls = _remote_calls(monkeypatch)

    def closure(data, eps):
        return module.learner(data, eps)
    assert cluster_laws.program_reference(closure) is None
    cluster_laws.all_distributions(closure, datasets, {"eps": 1}, 30)
    cluster_laws.all_distributions(module.learner, datasets[:10], {"eps": 1}, 30)
    assert calls == []


def test_pair_screening_spread_over_the_workers_equals_one_pass(spec_file, on_cluster, monkeypatch) -> None:
    specs, module = _module(spec_file)
    datasets = dp_datasets(specs[0])
    from dpverify.engine.datasets.datasets import neighbour_pairs
    left, right = neighbour_pairs(specs[0].universe, datasets)
    table = local_distributions(module.too_sensitive, datasets, {"eps": 1}, 30)
    one = LossTable(table, left, right)
    one_pass = screening.screen(one.enc, one.a, one.b)
    monkeypatch.setattr(screening, "SPREAD_CELLS", 1)
    spread = LossTable(table, left, right)
    found = spread.screen()
    assert found.best == one_pass.best
    for name in ("forward_hi", "backward_hi"):
        assert (getattr(found, name) == getattr(one_pass, name)).all()
    mine, theirs = spread.max_loss()[0], one.max_loss()[0]
    assert (mine.a, mine.b) == (theirs.a, theirs.b)


def test_the_cli_flag_gives_the_local_json(spec_file, scheduler, tmp_path) -> None:
    def run(*extra):
        done = subprocess.run([sys.executable, "-m", "dpverify", "check", str(spec_file), "--json", "--no-cache",
                               "--no-proofs", "--precision", "30", *extra], capture_output=True, text=True,
                              cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout)

    def verdicts(report):
        return [(c.get("status"), json.dumps(c.get("points", c), sort_keys=True, default=str))
                for s in report["specs"] for c in s["claims"]]
    local, remote = run(), run("--scheduler", scheduler)
    strip = _without_times
    assert strip(remote) == strip(local)


def _without_times(value):
    """The JSON report without wall-clock figures (seconds differ from run to run)."""
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if "second" not in k and "time" not in k}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def test_an_unreachable_scheduler_is_a_usage_error(spec_file, monkeypatch) -> None:
    from click.testing import CliRunner

    from dpverify.cli import main
    monkeypatch.setattr(executor, "PROBE_TIMEOUT", "1s")
    done = CliRunner().invoke(main, ["check", str(spec_file), "--no-cache", "--scheduler", "tcp://127.0.0.1:9"])
    assert done.exit_code == 2, done.output
    assert "--scheduler" in done.output and "cannot reach the Dask scheduler" in done.output
    assert executor.ENVIRONMENT not in executor.os.environ


def _unit(path, qualname="learner", **changes):
    from dpverify.engine.datasets.datasets import enumerate_datasets
    from dpverify.engine.program.enumerate import LEAF_BUDGET
    specs = load(path)
    unit = {"file": str(path), "qualname": qualname, "params": {"eps": 1}, "dps": 20, "budget": LEAF_BUDGET.get(),
            "datasets": enumerate_datasets(specs[0].universe)[:4], "windows": {},
            "digest": cluster_laws.digest(str(path)), "versions": cluster_laws.versions()}
    unit.update(changes)
    return unit


def test_a_worker_with_another_checkout_refuses_the_unit(spec_file) -> None:
    """Another spec file at the same path, or other library versions, on a worker: refused, not computed."""
    assert cluster_laws.laws_of_chunk(_unit(spec_file))["laws"]
    with pytest.raises(SpecError, match="other contents at this path"):
        cluster_laws.laws_of_chunk(_unit(spec_file, digest="0" * 64))
    with pytest.raises(SpecError, match="install the same versions"):
        cluster_laws.laws_of_chunk(_unit(spec_file, versions=("0.0.0",)))


def test_an_edited_spec_file_is_imported_afresh_by_a_long_running_worker(tmp_path) -> None:
    path = tmp_path / "edited.py"
    path.write_text("def mech(data, eps):\n    return 1\n")
    first = cluster_laws.load_program(str(path), "mech", cluster_laws.digest(str(path)))
    path.write_text("def mech(data, eps):\n    return 2\n")
    second = cluster_laws.load_program(str(path), "mech", cluster_laws.digest(str(path)))
    assert (first(None, 1), second(None, 1)) == (1, 2)
