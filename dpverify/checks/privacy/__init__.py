"""Privacy claims: ``private(eps[, delta])`` on discrete laws, released densities and Gaussian
releases, the proofs for every parameter value, and ``same_distribution`` (two programs, one law).

:mod:`.discrete` is the entry point (:class:`~.discrete.PrivacyCheck`); it hands laws with released
values to :mod:`.density` (and from there (eps, delta) claims to :mod:`.density_delta` and
:mod:`.gaussian`) and proofs to :mod:`.proof` / :mod:`.density_proof`.  These modules decide:
they compare with the claim (:class:`~.level.Level`, which also names the claimed bound in
messages) and build the verdict, the witness and the message.  The numbers they compare come
from the engine: loss tables, density cells and suprema, witness points and plot curves, the
closed-form divergences, Phi and the Gaussian delta(eps), the achieved-epsilon bisections.
"""
