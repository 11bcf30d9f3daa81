"""Hostile specs against the mechanism contract and the universe (issue 10, classes 3, 4 and 9).

Each spec here got a false verdict, a silent exit or a hang from dpverify 8b7f8b0:
one-directional or empty neighbour relations, an order-dependent mechanism declared
symmetric, randomness from outside the primitives, a process exit, an endless loop and
a tree of 2^25 branches.  Now each is a refutation or one clear error (exit 2) naming the
file and line, and a good spec beside a bad one is still checked.
"""
import json
import textwrap
import time

import pytest
from click.testing import CliRunner

from dpverify.cli import main

HEADER = ("import dpverify as dp\nfrom fractions import Fraction\n"
          "eps = dp.symbol('eps', positive=True)\n")
GOOD = HEADER + textwrap.dedent("""\
    def rr(data, eps):
        return dp.randomized_response(data[0], eps)
    s = dp.spec(rr, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE), grid={eps: [1]},
                claims=[dp.private(eps)])
    """)


def run(tmp_path, monkeypatch, files: dict[str, str], *args: str):
    for name, body in files.items():
        (tmp_path / name).write_text(body)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", *(args or files), "--no-proofs"])
    assert "Traceback" not in result.output, result.output
    return result


def spec_with(mechanism: str, universe: str = "dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE)",
              claim: str = "dp.private(eps)", prelude: str = "") -> str:
    return (HEADER + textwrap.dedent(prelude) + textwrap.dedent(mechanism)
            + f"s = dp.spec(mech, universe={universe}, grid={{eps: [1]}}, claims=[{claim}])\n")


# -- class 3: neighbour relations --------------------------------------------------------------

LEAK = """\
def mech(data, eps):
    return len(data) if dp.bernoulli(Fraction(1, 2)) else 0
"""
ONE_WAY = """\
def minus_one(x, x_prime):
    return len(x_prime) == len(x) - 1 and all(x_prime.count(r) <= x.count(r) for r in x_prime)
"""


def test_a_one_directional_relation_is_closed_under_symmetry(tmp_path, monkeypatch) -> None:
    """x' = x minus a record holds only for (larger, smaller): the pairs are (i < j) = (smaller,
    larger), so 8b7f8b0 found no pair and verified a claim the mechanism breaks."""
    body = spec_with(LEAK, "dp.universe([0, 1], n=range(1, 3), neighbours=minus_one)", "dp.private(eps / 100)",
                     prelude=ONE_WAY)
    result = run(tmp_path, monkeypatch, {"one_way.py": body})
    assert result.exit_code == 1 and "refuted" in result.output, result.output


RELATIONS = {
    "no pair at all": ("def rel(x, x_prime):\n    return False\n", "no pair of neighbouring datasets"),
    "returns None": ("def rel(x, x_prime):\n    pass\n", "must return True or False"),
    "returns a number": ("def rel(x, x_prime):\n    return sum(x) - sum(x_prime)\n", "must return True or False"),
    "returns a numpy bool": ("import numpy\ndef rel(x, x_prime):\n    return numpy.bool_(x != x_prime)\n",
                             "must return True or False"),
    "raises": ("def rel(x, x_prime):\n    return x[5] == x_prime[5]\n", "IndexError"),
    "draws outside the primitives": ("import random\ndef rel(x, x_prime):\n    return random.random() < 0.5\n",
                                     "outside dpverify's primitives"),
}


@pytest.mark.parametrize("case", sorted(RELATIONS))
def test_a_broken_relation_is_a_spec_error(case: str, tmp_path, monkeypatch) -> None:
    relation, words = RELATIONS[case]
    body = spec_with(LEAK, "dp.universe([0, 1], n=1, neighbours=rel)", prelude=relation)
    result = run(tmp_path, monkeypatch, {"rel_spec.py": body})
    assert result.exit_code == 2, result.output
    assert words in result.output and "rel_spec.py:" in result.output and "fix" in result.output


def test_a_built_in_relation_without_pairs_is_refused_where_declared(tmp_path, monkeypatch) -> None:
    body = spec_with(LEAK, "dp.universe([0], n=2, neighbours=dp.REPLACE_ONE)")
    result = run(tmp_path, monkeypatch, {"lonely.py": body})
    assert result.exit_code == 2 and "lonely.py:6" in result.output, result.output
    assert "no pair of neighbouring datasets" in result.output


# -- class 4: symmetric=True -------------------------------------------------------------------

def test_an_order_dependent_mechanism_declared_symmetric_is_refused(tmp_path, monkeypatch) -> None:
    """Sorted multisets always have data[0] == min(data): 8b7f8b0 proved a mechanism that
    reveals whether the first record is the smallest."""
    mechanism = """\
    def mech(data, eps):
        return dp.randomized_response(data[0] == min(data), eps * 4)
    """
    body = spec_with(mechanism, "dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE, symmetric=True)")
    result = run(tmp_path, monkeypatch, {"ordered.py": body})
    assert result.exit_code == 2, result.output
    assert "symmetric=True" in result.output and "(0, 1)" in result.output and "(1, 0)" in result.output
    assert "ordered.py:6" in result.output


def test_a_symmetric_law_from_order_dependent_code_is_accepted(tmp_path, monkeypatch) -> None:
    """A uniformly chosen record: the code sees the order, the law does not (decided exactly)."""
    mechanism = """\
    def mech(data, eps):
        return dp.randomized_response(dp.uniform(data), eps)
    """
    body = spec_with(mechanism, "dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE, symmetric=True)")
    result = run(tmp_path, monkeypatch, {"sampled.py": body})
    assert result.exit_code == 0 and "verified" in result.output, result.output


def test_a_tiny_order_dependence_is_found_exactly(tmp_path, monkeypatch) -> None:
    """10^-80 apart: the interval enclosures of the two orderings' laws are the same."""
    mechanism = """\
    def mech(data, eps):
        p = Fraction(1, 3) + (Fraction(1, 10**80) if data[0] > data[-1] else 0)
        return dp.bernoulli(p)
    """
    body = spec_with(mechanism, "dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE, symmetric=True)")
    result = run(tmp_path, monkeypatch, {"tiny.py": body})
    assert result.exit_code == 2 and "symmetric=True" in result.output, result.output


def test_symmetry_at_the_grid_point_only_gives_no_proof_for_every_eps(tmp_path, monkeypatch) -> None:
    """Both orderings give p = 1/2 at eps = 1 but not elsewhere: 8b7f8b0 proved the claim for
    every eps from the multisets; now the grid verdict stands and no proof is attempted."""
    mechanism = """\
    def mech(data, eps):
        p = eps / (1 + eps) if data[0] > data[-1] else Fraction(1, 2)
        return dp.bernoulli(p)
    """
    body = spec_with(mechanism, "dp.universe([0, 1], n=2, neighbours=dp.REPLACE_ONE, symmetric=True)",
                     "dp.private(eps / 100)")
    (tmp_path / "off_grid.py").write_text(body)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "off_grid.py", "--json"])
    point = json.loads(result.output)["specs"][0]["claims"][0]["points"][0]
    assert point["status"] == "verified" and "symmetric=True is not shown" in point["message"], point


# -- class 9: the mechanism contract -----------------------------------------------------------

OUTSIDE = {
    "random.random": ("import random\n", "random.random() < 0.5", "random.random()"),
    "from random import random": ("from random import random\n", "random() < 0.5", "random.random()"),
    "a Random instance": ("import random\n", "random.Random(7).random() < 0.5", "random.Random"),
    "numpy.random": ("import numpy as np\n", "np.random.rand() < 0.5", "numpy.random.rand()"),
    "numpy default_rng": ("import numpy as np\n", "np.random.default_rng().random() < 0.5",
                          "numpy.random.default_rng()"),
    "numpy Generator": ("import numpy as np\n", "np.random.Generator(np.random.PCG64()).random() < 0.5",
                        "numpy.random"),
    "secrets": ("import secrets\n", "secrets.randbits(1) == 1", "secrets.randbits()"),
    "os.urandom": ("import os\n", "os.urandom(1)[0] < 128", "os.urandom()"),
    "time.time": ("import time\n", "time.time() % 1 < 0.5", "time.time()"),
    "datetime.now": ("import datetime\n", "datetime.datetime.now().microsecond % 2 == 0", "datetime.now()"),
    "caught and ignored": ("import random\n", "_guess()", "random.random()"),
}
GUESS = """\
def _guess():
    try:
        return random.random() < 0.5
    except Exception:
        return True
"""


@pytest.mark.parametrize("case", sorted(OUTSIDE))
def test_randomness_from_outside_the_primitives_is_refused(case: str, tmp_path, monkeypatch) -> None:
    imports, test, words = OUTSIDE[case]
    mechanism = f"def mech(data, eps):\n    return data[0] if {test} else 1 - data[0]\n"
    body = spec_with(mechanism, prelude=imports + GUESS)
    result = run(tmp_path, monkeypatch, {"outside.py": body})
    assert result.exit_code == 2, result.output
    assert words in result.output and "outside dpverify's primitives" in result.output
    assert "outside.py:" in result.output and "fix" in result.output


def test_outside_randomness_outside_a_run_is_left_alone() -> None:
    import random

    import numpy as np
    assert 0 <= random.random() < 1 and 0 <= np.random.default_rng(0).random() < 1
    assert isinstance(np.random.default_rng(0), np.random.Generator)


@pytest.mark.parametrize("exit_call", ["sys.exit(0)", "sys.exit(3)", "raise GeneratorExit", "os._exit(0)"])
def test_an_exit_is_an_error_of_that_spec_and_the_others_run(exit_call: str, tmp_path, monkeypatch) -> None:
    mechanism = f"import os, sys\ndef mech(data, eps):\n    {exit_call}\n"
    result = run(tmp_path, monkeypatch, {"a_exits.py": spec_with(mechanism), "b_good.py": GOOD}, ".")
    assert result.exit_code == 2, result.output
    assert "a_exits.py:6" in result.output and "verified" in result.output, result.output


HANGS = {
    "a plain loop": "def mech(data, eps):\n    while True:\n        pass\n",
    "a loop that catches the limit": ("def mech(data, eps):\n    try:\n        while True:\n            pass\n"
                                      "    except BaseException:\n        return 0\n"),
}


@pytest.mark.parametrize("case", sorted(HANGS))
def test_an_endless_loop_trips_the_wall_clock_safety_net(case: str, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DPVERIFY_RUN_LIMIT", "1")
    mechanism = HANGS[case]
    start = time.monotonic()
    result = run(tmp_path, monkeypatch, {"a_hangs.py": spec_with(mechanism), "b_good.py": GOOD}, ".")
    assert time.monotonic() - start < 30
    assert result.exit_code == 2, result.output
    assert "safety limit" in result.output and "CPU time" in result.output
    assert "a_hangs.py:" in result.output and "verified" in result.output


def test_a_tree_too_large_to_enumerate_is_refused_at_once(tmp_path, monkeypatch) -> None:
    mechanism = "def mech(data, eps):\n    return data[0] + sum(dp.bernoulli(Fraction(1, 2)) for _ in range(25))\n"
    start = time.monotonic()
    result = run(tmp_path, monkeypatch, {"coins.py": spec_with(mechanism)})
    assert time.monotonic() - start < 20
    assert result.exit_code == 2 and "3.36e+07 branches" in result.output, result.output
    assert "--max-work" in result.output


def test_the_branch_budget_follows_max_work(tmp_path, monkeypatch) -> None:
    mechanism = "def mech(data, eps):\n    return data[0] + sum(dp.bernoulli(Fraction(1, 2)) for _ in range(12))\n"
    (tmp_path / "coins.py").write_text(spec_with(mechanism))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "coins.py", "--no-proofs", "--max-work", "1000"])
    assert result.exit_code == 2 and "branches" in result.output, result.output


def test_a_skewed_tree_is_not_refused_by_its_first_path(tmp_path, monkeypatch) -> None:
    """Stop at the first tail among 40 coins: the first path (every draw's first branch, True) alone
    estimates 2^40 branches, the random paths show it small (41 leaves)."""
    mechanism = """\
    def mech(data, eps):
        for k in range(40):
            if dp.bernoulli(Fraction(1, 2)):
                continue
            return data[0] + k
        return data[0]
    """
    result = run(tmp_path, monkeypatch, {"skewed.py": spec_with(mechanism)})
    assert result.exit_code in (0, 1) and "branches" not in result.output, result.output


# -- the pieces ----------------------------------------------------------------------------------

@pytest.mark.parametrize("data", [(0, 0, 1, 2), (1, 1), (0, 1, 2, 3), ("a", "b", "b"), ()])
def test_every_ordering_is_run_once_the_dataset_first(data: tuple) -> None:
    import math
    from collections import Counter

    from dpverify.engine.datasets.symmetry import permutations
    orders = list(permutations(data))
    distinct = math.factorial(len(data)) // math.prod(math.factorial(c) for c in Counter(data).values())
    assert orders[0] == data and len(orders) == len(set(orders)) == distinct
    assert all(sorted(o) == sorted(data) for o in orders)


@pytest.mark.parametrize("symmetric", [False, True])
def test_the_pair_estimate_of_a_custom_relation_is_an_upper_bound(symmetric: bool) -> None:
    import dpverify as dp
    from dpverify.engine.datasets.datasets import enumerate_datasets, estimate, neighbour_pairs

    def minus_one(x, x_prime):
        return len(x_prime) == len(x) - 1 and all(x_prime.count(r) <= x.count(r) for r in x_prime)
    universe = dp.universe([0, 1, 2], n=range(0, 4), neighbours=minus_one, symmetric=symmetric)
    left, _ = neighbour_pairs(universe, enumerate_datasets(universe))
    assert 0 < len(left) <= estimate(universe).pairs


def test_a_refusal_of_noise_arithmetic_caught_by_the_program_still_refuses(tmp_path, monkeypatch) -> None:
    """math.exp of a noisy value is refused by the engine; a program that catches the refusal and
    returns a constant was *proved* eps-DP, although it is not the program that runs in Python."""
    mechanism = ("def mech(data, eps):\n"
                 "    noisy = dp.laplace(data[0] * 100, 1 / eps)\n"
                 "    try:\n"
                 "        return math.exp(noisy) > 2\n"
                 "    except Exception:\n"
                 "        return 0\n")
    body = spec_with(mechanism, prelude="import math\n")
    result = run(tmp_path, monkeypatch, {"caught.py": body})
    assert result.exit_code == 2, result.output
    assert "caught this refusal" in result.output and "caught.py:" in result.output

