"""Sensitivity: derived as a sympy expression in the dataset size n (:mod:`.derive`), over an interval
record domain (:mod:`.interval`), measured where it is not derived (:mod:`.search`), and of every
noise call's centre (:mod:`.centres`)."""
