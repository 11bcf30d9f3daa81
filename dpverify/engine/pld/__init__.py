"""Privacy loss distributions and composed privacy profiles: exact lattice powers (:mod:`.lattice`) and
multinomials of few atoms (:mod:`.atoms`), certified bounds (:mod:`.bounds`), the Poisson-subsampled
Gaussian (``gaussian_*``) and Laplace (``laplace_*``) steps, and counted budgets (:mod:`.budget`)."""
