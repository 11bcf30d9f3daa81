"""The engine: one mechanism program read numerically, symbolically and as a decision problem.
It knows nothing of claims or reports.  Its sub-packages are the map:

- :mod:`.program` -- the mechanism program and its readings: the arithmetic backends, the
  primitives' laws, the contract spec code runs under, exact enumeration of output laws (and the
  fast readings for one draw, report noisy max in product form, float samplers), the work guard.
- :mod:`.datasets` -- datasets of a finite universe and their neighbouring pairs, i.i.d. samples
  summed over multisets, learners' scores by counts, the ``symmetric=True`` check.
- :mod:`.continuous` -- continuous noise inside a program: noisy values, branching comparisons,
  exact piecewise calculus, densities, ratios and divergences of released values, Gaussian delta.
- :mod:`.loss` -- privacy loss over every neighbouring pair (float screening, certified where it
  matters), the achieved epsilon, Renyi divergences.
- :mod:`.pld` -- privacy loss distributions and composed profiles: exact lattices and atoms,
  certified bounds for subsampled Gaussian and Laplace steps, counted budgets.
- :mod:`.decide` -- decision procedures and certified constants: z3 terms and values, the safety
  net around z3, interval enclosures of sympy constants, polynomial signs, eventual values in n.
- :mod:`.sensitivity` -- sensitivity derived as a sympy expression in n, over intervals, or
  measured; the sensitivity of every noise call's centre.
- :mod:`.execution` -- where bulk work runs: the worker pool and the Dask cluster.

Importing the package installs the engine behind the DSL's port (:mod:`.program.port`), through
which the primitives reach the run in progress.
"""
from .program import port  # noqa: F401  (installs the engine the primitives run against)
