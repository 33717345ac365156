"""The fast solver with one d x d inverse per Adam step vs one every K-th step, side by side.

Usage::

    .venv/bin/python -m benchmarks.research.bench_inverse_every [--sizes 10,20,50,100,200] [--seeds 3]
        [--settings EV,NV] [--repeats 3] [--k 3]

For Sachs (both variants) and the simulated ER4 problems of ``bench_solver.py`` (``X`` of shape
``(1000, d)``; EV: weights +-[0.5, 2], unit noise; NV: weights +-[0.25, 1], noise variances
U[0.5, 10]), it fits ``fast_solve`` with ``inverse_every=1`` (an inverse at every step, as
Algorithm 1) and ``inverse_every=K`` (``--k``, default 3), best of
``--repeats`` wall times each, and prints per case: cond(cov), the default's choice (``"auto"``:
3 at step scales above 1, 10 at the faithful step scale 1; per stage at the default scales,
e.g. ``3/10``), both times and step counts, the ratio of the times per step and of the total
times, both SHDs (threshold 0.3, a reversed edge costs 1) and the relative objective difference
``(K - 1) / |1|``.

Until 2026-11-24 (stop 16) the default inverted at every step where ``cond(cov) > 1e6``; the results
files from before then mark those rows with default 1. ``bench_sensitivity.py --inverse-every 3``
compares the two over 10 graphs per size (``fast_solve``'s docstring gives the figures).
"""
from __future__ import annotations

import argparse
import os
import time
import warnings

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from benchmarks.bench_solver import SEED0, SETTINGS, simulate  # noqa: E402
from colide_core import ConvergenceWarning, evaluate, load_sachs  # noqa: E402
from colide_core.solver._fast import (  # noqa: E402
    _auto_inverse_every, _conditioning_factor, _default_scales, fast_solve, warmup,
)
from colide_core.graph._dag import threshold_to_dag  # noqa: E402
from colide_core._validation import data_covariance  # noqa: E402


def timed(cov, variant, k, repeats):
    """Best-of-``repeats`` wall time (s) and the result of one ``fast_solve(inverse_every=k)``."""
    best, res = np.inf, None
    for _ in range(repeats):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t0 = time.perf_counter()
            res = fast_solve(cov, variant=variant, inverse_every=k)
            best = min(best, time.perf_counter() - t0)
    return best, res


def default_k(cov, variant):
    """``"auto"``'s k in each stage at the default step scales (before any chatter halving)."""
    scales = _default_scales(_conditioning_factor(cov), variant, 3e-4, 4)
    ks = sorted({_auto_inverse_every(c) for c in scales})
    return "/".join(str(k) for k in ks)


def row(name, X, B, variant, repeats, k=3):
    """One table row for data ``X`` of shape ``(n_samples, n_nodes)`` and true graph ``B``:
    ``inverse_every=1`` against ``inverse_every=k``."""
    cov, _, _ = data_covariance(X)
    cond = float(np.linalg.cond(cov))
    (t1, r1), (t3, r3) = timed(cov, variant, 1, repeats), timed(cov, variant, k, repeats)
    shd = [int(evaluate(B, threshold_to_dag(r.W, 0.3))["shd"]) for r in (r1, r3)]
    per_step = (t1 / r1.n_iter) / (t3 / r3.n_iter)
    print(f"| {name} | {variant} | {cond:.1e} | {default_k(cov, variant)} | {t1:.3f} | {r1.n_iter} "
          f"| {t3:.3f} | {r3.n_iter} | {per_step:.2f} | {t1 / t3:.2f} | {shd[0]} | {shd[1]} "
          f"| {(r3.objective - r1.objective) / abs(r1.objective):+.1e} |", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10,20,50,100,200")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--settings", default="EV,NV")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--k", type=int, default=3, help="the k compared with an inverse at every step (default 3)")
    args = ap.parse_args(argv)
    if args.k < 1:
        ap.error("--k must be >= 1")
    K = args.k
    warmup()
    print(f"| case | v | cond(cov) | default k | k=1 s | k=1 steps | k={K} s | k={K} steps "
          f"| per-step speed-up | total speed-up | SHD k=1 | SHD k={K} | rel obj ({K} - 1) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    Xs, Bs = load_sachs()
    X, B = Xs.to_numpy(dtype=float), Bs.to_numpy()
    for variant in ("ev", "nv"):
        row("sachs", X, B, variant, args.repeats, K)
    for setting in args.settings.split(","):
        for d in (int(x) for x in args.sizes.split(",")):
            for k in range(args.seeds):
                X, B = simulate(setting, d, SEED0 + k)
                row(f"ER4-{setting} d={d} s{k}", X, B, SETTINGS[setting]["variant"], args.repeats, K)


if __name__ == "__main__":
    main()
