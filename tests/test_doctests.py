"""Run the examples in dpverify's docstrings (as mpmath and OpenDP do in CI)."""
import doctest
import importlib
import pkgutil

import pytest

import dpverify

MODULES = ["dpverify"] + sorted(m.name for m in pkgutil.walk_packages(dpverify.__path__, "dpverify.")
                 if not m.name.endswith("pytest_plugin"))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"


def test_the_package_has_examples() -> None:
    attempted = sum(doctest.testmod(importlib.import_module(n)).attempted for n in MODULES)
    assert attempted >= 2
