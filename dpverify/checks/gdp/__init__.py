"""Gaussian DP claims: ``gdp(mu, times=T)`` (:mod:`.check`), decided from the composed privacy
profiles of :mod:`dpverify.checks.composition` and, for Gaussian releases, proved with the closed-form
divergences of :mod:`dpverify.checks.divergence`."""
