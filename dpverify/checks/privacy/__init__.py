"""Privacy claims: ``private(eps[, delta])`` on discrete laws, released densities and Gaussian
releases, the proofs for every parameter value, and ``same_distribution`` (two programs, one law).

:mod:`.discrete` is the entry point (:class:`~.discrete.PrivacyCheck`); it hands laws with released
values to :mod:`.density` and proofs to :mod:`.proof` / :mod:`.density_proof`.
"""
