"""Continuous noise inside a program: noisy values and their laws (:mod:`.noisy`), branching comparisons
and exact integrals (:mod:`.noise`), piecewise exponential-polynomial calculus (:mod:`.piecewise`),
integer tails, the Gaussian delta(eps), and the densities of released values: cells, ratios,
divergences, points and plot curves (``density_*``)."""
