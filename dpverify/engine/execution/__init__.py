"""Where the engine's bulk work runs: local worker processes (:mod:`.pool`, the one place dpverify
forks) by default, a Dask cluster on request (:mod:`.executor`, ``cluster_*``)."""
