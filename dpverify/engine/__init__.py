"""The program interpreter and its readings.  It knows nothing of claims or reports.

Importing the package installs the engine behind the DSL's port (:mod:`.port`),
through which the primitives reach the run in progress.
"""
from . import port  # noqa: F401  (installs the engine the primitives run against)
