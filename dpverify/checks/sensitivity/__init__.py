"""Sensitivity claims: ``sensitivity(query, equals=/at_most=)`` -- the derived Delta(n) against the
claim (:mod:`.check`), the measured sensitivity where no derivation applies (:mod:`.measure`), and the
refuting pair re-checked on its own (:mod:`.refute`)."""
