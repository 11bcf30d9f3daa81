"""The mechanism program and its readings: arithmetic backends (:mod:`.backend`), the primitives' laws
(:mod:`.primitives`), parameters, the contract spec code runs under (:mod:`.contract`), the run in
progress, exact enumeration (:mod:`.enumerate`, :mod:`.reading`), the fast readings (one draw, noisy
max in product form, float samplers), the symbolic reading in w = e^(eps/L), and the work guard."""
