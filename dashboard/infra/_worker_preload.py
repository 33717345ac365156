"""Imported once by the job workers' forkserver (:data:`dashboard.infra.workers.PRELOAD`).

It fits CoLiDE once on 60 rows of 3 fixed nodes, so that the solver's compiled kernels (numba's
disk cache) and the modules a fit imports are loaded in the forkserver: a worker forked from it
starts with them instead of loading them again for every job
(docs/security.md, "Shared server", gives the start cost).
"""
from __future__ import annotations


def _warm() -> None:
    import numpy as np

    try:
        from colide_core import CoLiDE

        rng = np.random.default_rng(0)
        x = rng.standard_normal((60, 3))
        x[:, 1] += 0.8 * x[:, 0]
        for variant in ("ev", "nv"):
            CoLiDE(variant=variant, lambda1=0.05).fit(x)
    except Exception:  # a missing optional dependency: the worker loads what it needs itself
        pass


_warm()
