"""Composition claims: ``profile(at, delta, times=T)`` (:mod:`.profile`).

The T-fold composition of a mechanism on an ordered neighbouring pair (X, X') has the product laws
of the pair; its hockey-stick divergence delta_T(eps) is read off its privacy loss distribution
(:mod:`.routes`): exactly, as a polynomial power, for discrete laws whose losses lie on a lattice
(:mod:`dpverify.engine.pld.lattice`); in closed form for Gaussian releases (T runs at scaled distance D are
one run at sqrt(T) D: :mod:`dpverify.engine.continuous.gaussian_delta`); between certified bounds for Laplace
releases (:mod:`dpverify.engine.pld.bounds`); for the Poisson-subsampled Gaussian (:mod:`.mixture`)
certified to 8+ digits (any number on request) by the Mellin inversion of M(s)^T (:mod:`dpverify.engine.pld.gaussian_mellin`),
else between the grid bounds of :mod:`dpverify.engine.pld.gaussian_mixture`.
"""
