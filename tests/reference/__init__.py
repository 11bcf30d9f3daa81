"""An independent reference evaluator for small discrete DP programs (tests only).

It shares no code with ``dpverify.engine`` or ``dpverify.checks``: the primitives'
semantics are written here again from their mathematical definitions, every
probability is an exact element of Q(e^r : r rational) (:mod:`.exactnum`), and every
sign is decided exactly (Lindemann-Weierstrass for zero, certified intervals at
growing precision otherwise).  The differential fuzzer (tests/test_fuzz.py)
compares dpverify's verdicts with the truths computed here.

Modules: :mod:`.exactnum` (exact numbers), :mod:`.shim` (the primitives, as a
``dp`` stand-in that enumerates draws), :mod:`.privacy` (datasets, neighbouring
pairs, laws, achieved epsilon, delta(eps), claim truths).
"""
