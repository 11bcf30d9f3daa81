"""Shared test configuration: pytester, and the long tail behind the ``slow`` marker.

The default run (``pytest -n auto``) deselects ``slow`` (pyproject's ``addopts``); CI runs it as well
(``pytest -n auto -m slow``, see ``.ci/run``), so nothing here goes unchecked.  :data:`LONG_TAIL` lists
the tests that each took 45 s or more of one worker (``pytest -n 2 --durations=80``, 2026-11-27, load
11-15 on 2 cores: 3000 tests in 67 min, these 30 about 3,800 worker-seconds of the 8,100); a test
named here by its node id prefix is marked ``slow`` at collection.
"""
from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

LONG_TAIL = (
    "tests/test_reports.py::test_reports_directory_is_up_to_date",  # the whole catalogue, cold, as a report
    "tests/test_pld_gaussian_mellin.py::test_other_rates_and_distances_inside_the_grid_bracket",
    "tests/test_fuzz.py::test_dpverify_agrees_with_the_reference",
    "tests/test_fuzz_divergence.py::test_dpverify_divergences_agree_with_the_reference",
    "tests/test_fuzz_continuous.py::test_dpverify_agrees_with_the_continuous_reference",
    "tests/test_cluster_sums.py::test_verdict_and_figures_equal_the_local_run",
    "tests/test_cli.py::test_parallel_workers_give_the_same_report_in_the_same_order",
    "tests/test_accounting.py::test_spec_files_reach_their_expectations",  # spec/accounting/ also runs as items
    "tests/test_subsampled_laplace.py::test_route_decides_and_refutes",
    "tests/test_subsampled_laplace.py::test_two_steps_matches_nested_quadrature",
    "tests/test_collection_fuzz.py::test_pytest_checks_what_dpverify_check_checks",
    "tests/test_laplace_composition.py::test_two_releases_bracket_the_quadrature",
    "tests/test_mutants.py::test_correct_spec_is_verified_everywhere[em_private_learner]",
    "tests/test_mutants.py::test_correct_spec_is_verified_everywhere[subsampling]",
    "tests/test_report_audits.py::test_audit_pages_are_the_same_bytes_across_two_runs",
    "tests/test_report_audits.py::test_audit_tables_fit_and_witnesses_come_first",
    "tests/test_learning_mutants.py::test_a_wrong_step_is_refuted_with_a_confirmed_counterexample[hoeffding_union_two_sided_wrong_log_argument]",
    "tests/test_learning_mutants.py::test_catalogue_style_mutants_of_the_learner_bound_survive_the_exact_check",
    "tests/test_soundness_numeric.py::test_randomized_response_at_astronomical_eps_is_decided_not_an_internal_error",
    "tests/test_noise.py::test_gaussian_mechanism_against_the_analytic_delta",
    "tests/test_composition.py::test_laplace_bounds_bracket_the_integral",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(LONG_TAIL):
            item.add_marker(pytest.mark.slow)
