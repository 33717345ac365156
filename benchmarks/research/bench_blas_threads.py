"""Time per step of the fast solver with a one-thread BLAS pool vs the process's default pool.

Usage::

    .venv/bin/python -m benchmarks.research.bench_blas_threads [--sizes 20,50,100,200] [--steps 3000] [--repeats 3]

Run it *without* ``make`` (which exports ``OPENBLAS_NUM_THREADS=1``), so that OpenBLAS starts
with its default pool, one thread per core: that is what a researcher calling ``colide_core``
from their own script or notebook gets. For each ``d`` it simulates one ER4 equal-variance SEM
(``X`` of shape ``(1000, d)``, ``bench_solver.simulate``), then times ``fast_solve`` with a fixed
number of Adam steps (``tol=0``, so no stage ends early) three ways:

* ``blas_threads=1`` (the default): the pool is limited to one thread during the solve;
* ``blas_threads=None``: the pool is left as the process has it;
* both again with ``engine="numpy"`` (LAPACK getrf + getri and numpy products instead of the
  numba kernels).

It prints a markdown table of microseconds per step (best of ``--repeats``) and the ratio
default-pool / one-thread. The same iterates are computed in every column; only the wall time
differs.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_info

from benchmarks.bench_solver import simulate  # noqa: E402
from colide_core import ConvergenceWarning  # noqa: E402
from colide_core.solver._fast import fast_solve, warmup  # noqa: E402
from colide_core._validation import data_covariance  # noqa: E402


def per_step_us(cov, steps, repeats, **kw):
    """Best-of-``repeats`` wall time per step (µs) of a CoLiDE-EV fast solve of ``steps`` steps."""
    best = np.inf
    for _ in range(repeats):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t0 = time.perf_counter()
            res = fast_solve(cov, variant="ev", max_iter=(steps, steps), mu_schedule=(1.0, 0.1),
                             s_schedule=(1.0, 0.9), tol=0.0, step_scale=1.0, chatter_tol=None,
                             polish=False, **kw)
            best = min(best, (time.perf_counter() - t0) / res.n_iter)
    return best * 1e6


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="20,50,100,200")
    ap.add_argument("--steps", type=int, default=3000, help="Adam steps per stage (2 stages)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    warmup()
    pools = sorted({lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"})
    print(f"# BLAS pool of this process: {pools} thread(s); {args.steps} x 2 steps per solve, "
          f"best of {args.repeats}")
    print("| d | engine | us/step, 1 thread | us/step, default pool | default / 1 thread |")
    print("|---|---|---|---|---|")
    for d in (int(x) for x in args.sizes.split(",")):
        X, _ = simulate("EV", d, 100)
        cov, _, _ = data_covariance(X)
        for engine in ("numba", "numpy"):
            one = per_step_us(cov, args.steps, args.repeats, engine=engine, blas_threads=1)
            pool = per_step_us(cov, args.steps, args.repeats, engine=engine, blas_threads=None)
            print(f"| {d} | {engine} | {one:.1f} | {pool:.1f} | {pool / one:.2f} |", flush=True)


if __name__ == "__main__":
    main()
