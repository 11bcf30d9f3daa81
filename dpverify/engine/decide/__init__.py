"""Decision procedures and certified constants: sympy expressions as z3 terms (:mod:`.smt`) and values
out of z3 (:mod:`.smt_values`), the safety net around z3 (:mod:`.safety`), certified enclosures of
exact constants (:mod:`.certified`) and their decimals, polynomial signs on w > 1 (:mod:`.positivity`),
probabilities read as rational functions of one w = e^(eps/L) with integer coefficients (:mod:`.wreader`),
exact values for every n >= n_min (:mod:`.eventually`)."""
