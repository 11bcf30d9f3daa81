"""Datasets of a finite universe and their neighbouring pairs (:mod:`.datasets`), probabilities over
i.i.d. samples summed over multisets (:mod:`.multisets`, :mod:`.counts`), and the check of
``symmetric=True`` (:mod:`.symmetry`)."""
