"""Privacy loss over neighbouring pairs: screened in bulk at float speed with rigorous enclosures
(:mod:`.screening`), certified where it matters (:mod:`.pairs`), the achieved epsilon
(:mod:`.achieved`) and Renyi divergences (:mod:`.renyi`)."""
