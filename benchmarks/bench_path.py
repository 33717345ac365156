"""Warm-started lambda path vs independent fits: time ratio and agreement of the graphs.

Usage::

    .venv/bin/python benchmarks/bench_path.py [--quick] [--solver auto|adam] [--out results.json]

For each problem (Sachs, and simulated ER2 SEMs with non-equal noise variances) it solves
CoLiDE-NV (with the default fast solver, or the paper-faithful one with ``--solver adam``) on the
paper's central path for every lambda1 of a log-spaced grid, once
independently (each from W = 0) and once along the warm-started path
(:func:`colide_core.solver.path.lambda_path`, increasing lambda1, last stage only), and reports:

* the wall-time ratio independent / warm (> 1 means the path is faster);
* per lambda1, the number of directed edges that differ between the two graphs at
  threshold 0.3, the largest |W_indep - W_warm|, and the relative objective difference.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from colide_core import load_sachs
from colide_core.solver.path import lambda_path
from colide_core.data.simulate import simulate_dataset


def problems(quick):
    X, _ = load_sachs()
    yield "sachs", X.to_numpy(dtype=float)
    for d, seed in ([(10, 1)] if quick else [(10, 1), (10, 2), (20, 1)]):
        # Non-equal variances U[0.5, 10] with weights +-[0.5, 2] (this benchmark's setting).
        data = simulate_dataset(graph="er", degree=2, n_nodes=d, n_samples=1000, variance="nv",
                                w_range=(0.5, 2.0), random_state=seed)
        yield f"er2_d{d}_seed{seed}", data.X


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one simulated problem, 5 lambdas")
    ap.add_argument("--solver", choices=("auto", "adam"), default="auto",
                    help="auto: the fast solver (default); adam: the paper-faithful schedule")
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    args = ap.parse_args(argv)
    lambdas = np.geomspace(0.005, 0.5, 5 if args.quick else 9)
    if args.solver != "adam":
        from colide_core.solver._fast import warmup

        warmup()  # load/compile the numba kernels outside the timed solves
    report = []
    for name, X in problems(args.quick):
        t0 = time.perf_counter()
        warm = lambda_path(X, lambdas, thresholds=(0.3,), variant="nv", warm_start=True,
                           solver=args.solver)
        t_warm = time.perf_counter() - t0
        t0 = time.perf_counter()
        ind = lambda_path(X, lambdas, thresholds=(0.3,), variant="nv", warm_start=False,
                          solver=args.solver)
        t_ind = time.perf_counter() - t0
        diff = ((warm.adjacency[:, 0] != 0) != (ind.adjacency[:, 0] != 0)).sum(axis=(1, 2))
        row = {
            "problem": name,
            "solver": args.solver,
            "lambdas": [float(x) for x in warm.lambdas],
            "time_warm_s": round(t_warm, 2),
            "time_independent_s": round(t_ind, 2),
            "speedup": round(t_ind / t_warm, 2),
            "iters_warm": int(warm.n_iter.sum()),
            "iters_independent": int(ind.n_iter.sum()),
            "edges_differing_at_thr_0.3": [int(x) for x in diff],
            "edges_independent": [int(x) for x in ind.edge_counts[:, 0]],
            "max_abs_W_diff": [round(float(x), 4) for x in np.abs(warm.W - ind.W).max(axis=(1, 2))],
            "objective_rel_diff": [round(float(x), 5) for x in warm.objective / ind.objective - 1.0],
        }
        report.append(row)
        print(json.dumps(row), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
