"""Audits of implementations: the statistical audit of black boxes (:mod:`.statistical`, with its
events, cells, CDFs, continuous outputs and Clopper-Pearson bounds), conformance within a tolerance
(:mod:`.conforms`), the fallback from the exact audit to the statistical one (:mod:`.fallback`),
and the grey-box replay of ``dp.calibrated`` (:mod:`.replay`)."""
