"""The literature benchmark's sparse vector and noisy max specs after their loops were shared
(spec/benchmark/_svt.py, ``noisy_max`` in spec/benchmark/noisy_max.py): the helper module is not
taken for a spec file, and every variant keeps its verdict and its exact achieved epsilon (the
figures of ``dpverify check spec/benchmark/`` before the loops were shared)."""
from pathlib import Path

import pytest

from dpverify.checks import Options, Workspace, check_point
from dpverify.loader import discover, load

BENCHMARK = Path(__file__).resolve().parent.parent / "spec" / "benchmark"

# (file, spec, claim) -> (status, achieved epsilon at eps = 1/2, at eps = 1).  "proved": the structural
# prover (dpverify/engine/structural) shows the claim for every answer vector and every eps by composing
# every noisy answer's cost (svt_dwork_roth 5eps/8, num_svt 5eps/6, gap_svt 3eps/4); the exact achieved
# epsilon on the grid point is unchanged.
EXPECTED = {
    ("sparse_vector.py", "svt", "private"):
        ("verified", "0.4050234741014349629737811420113672275544", "0.8076055829912376958591486404867918578095"),
    ("sparse_vector.py", "svt_dwork_roth", "private"):
        ("proved", "0.2438310560911515665453064502463449728521", "0.4846698838117891041259372392898773193878"),
    ("sparse_vector.py", "num_svt", "private"):
        ("proved", "0.3580048411056479411939484545355422898247", "0.7112085316452247211638743267308975532068"),
    ("sparse_vector.py", "svt_monotone", "private"):
        ("verified", "0.4206785385166705139397562849451117613025", "0.7990675846200257690089152694181847530505"),
    ("sparse_vector.py", "svt_monotone_on_linf", "private"):
        ("refuted", "0.6619203039314188059188070824448748831075", "1.277966872642117166766311247409666953060"),
    ("sparse_vector.py", "gap_svt", "private"):
        ("proved", "0.3007830151507740929847443216454224923606", "0.5867786329975667781886938442254887031675"),
    ("sparse_vector_broken.py", "isvt3", "private"):
        ("refuted", "0.8289851979631215314253778833740734027002", "1.613958839326883765063854430344061042393"),
    ("sparse_vector_broken.py", "isvt4", "private"):
        ("refuted", "0.7500000000000000000000000000000000000000", "1.500000000000000000000000000000000000000"),
    ("noisy_max.py", "rnm_laplace", "private"):
        ("verified", "0.4061751636160244693672434394585374503111", "0.8532795938069534894123208064569492496514"),
    ("noisy_max.py", "rnm_exponential", "private"):
        ("verified", "0.5000000000000000000000000000000000000000", "1.000000000000000000000000000000000000000"),
    ("noisy_max.py", "rnm_laplace_value", "private"):
        ("refuted", "0.7500000000000000000000000000000000000000", "1.500000000000000000000000000000000000000"),
    ("noisy_max.py", "rnm_exponential_value", "private"): ("refuted", "inf", "inf"),
}


def test_the_shared_helper_is_not_a_spec_file() -> None:
    found = {p.name for p in discover([str(BENCHMARK)])}
    assert "_svt.py" not in found
    assert {"sparse_vector.py", "sparse_vector_broken.py", "noisy_max.py"} <= found


@pytest.mark.parametrize("key", sorted(EXPECTED), ids=lambda key: f"{key[1]}-{key[2]}")
def test_each_variant_keeps_its_verdict_and_achieved_epsilon(key) -> None:
    filename, name, claim_id = key
    [spec] = [s for s in load(BENCHMARK / filename) if s.name == name]
    [claim] = [c for c in spec.claims if c.id == claim_id]
    ws = Workspace(Options())
    results = [check_point(spec, claim, point, ws) for point in spec.points_for(claim)]
    status, *achieved = EXPECTED[key]
    assert [r.status.value for r in results] == [status] * len(achieved), [r.message for r in results]
    assert [r.evidence.achieved_epsilon for r in results] == achieved
