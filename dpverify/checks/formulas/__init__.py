"""Formula claims: ``identity`` and ``inequality`` over symbolic parameters.

:mod:`.check` decides (certified grid, then z3 or sympy for every value); :mod:`.problem` turns a
claim into a decision problem; :mod:`.search` looks for counterexamples with hypothesis.
"""
