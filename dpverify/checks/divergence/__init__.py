"""Divergence claims: ``renyi(alpha, eps)`` (:mod:`.renyi`) and ``zcdp(rho)`` (:mod:`.zcdp`).

Both read the engine's exact output laws of every dataset (:mod:`dpverify.engine.loss.renyi` turns
an ordered neighbouring pair into its Rényi divergence at any order, in certified intervals,
with closed forms for released Laplace and Gaussian values).  :mod:`.pairs` gathers the pairs
and confirms witnesses afresh; :mod:`.proof` proves claims for every value of the parameters
where the divergences have closed forms in them.
"""
