"""Sensitivity claims: ``sensitivity(query, equals=/at_most=)`` -- the derived Delta(n) against the
claim (:mod:`.check`) and the measured sensitivity of a mechanism's own values (:mod:`.measure`)."""
