"""Measure scale-out throughput: sweeps on joblib / Dask, and out-of-core covariance.

Usage::

    .venv/bin/python benchmarks/bench_scaleout.py [--quick] [--rows 2000000] [--json out.json]

Prints a Markdown table and (optionally) writes the numbers as JSON.

* Sweep throughput: the same list of CoLiDE-NV runs (10-node ER2 graphs, 500 samples,
  schedule 2000/2000/2000/4000 iterations) through :func:`colide_core.run.executor.run_sweep`
  with joblib (1 and 2 processes) and a Dask ``LocalCluster`` (1 and 2 worker processes, one
  thread each). Cluster start-up is excluded; worker warm-up (imports) is included.
* Covariance throughput: :func:`colide_core.sufficient_stats` over a partitioned Parquet dataset
  (11 float64 columns like Sachs, 8 files) and the same rows as CSV, with Dask's threaded
  scheduler and with the 2-worker cluster; rows per second of the single streaming pass.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from colide_core.run.executor import make_task, run_sweep, synthetic_task
from colide_core.graph.export import to_csv_safe
from colide_core.data.stats import sufficient_stats


def sweep_tasks(n_tasks, quick):
    it = [500, 500, 500, 1000] if quick else [2000, 2000, 2000, 4000]
    return [make_task(synthetic_task, method="CoLiDE-NV", params={"max_iter": it},
                      dataset={"n_nodes": 10, "n_samples": 500, "variance": "nv"}, seed=s)
            for s in range(n_tasks)]


def time_sweep(tasks, **kw):
    t0 = time.perf_counter()
    res = run_sweep(tasks, **kw)
    wall = time.perf_counter() - t0
    assert res.n_computed == len(tasks) and all(r["status"] == "ok" for r in res.rows)
    return wall, res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="short schedules, fewer rows")
    ap.add_argument("--tasks", type=int, default=16)
    ap.add_argument("--rows", type=int, default=None, help="rows of the covariance dataset")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    os.environ.setdefault("PYTHONWARNINGS", "ignore")  # also silence the worker processes
    rows = args.rows or (200_000 if args.quick else 2_000_000)
    import distributed

    out = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                       "python": platform.python_version(),
                       "load_avg_1min_at_start": os.getloadavg()[0]},
           "sweep": {}, "covariance": {}}
    tasks = sweep_tasks(args.tasks, args.quick)
    out["sweep"]["n_tasks"] = len(tasks)
    ref = None
    for n in (1, 2):
        wall, res = time_sweep(tasks, n_jobs=n)
        out["sweep"][f"joblib_{n}"] = {"wall_s": wall, "runs_per_s": len(tasks) / wall}
        ref = ref or {r["key"]: r["shd"] for r in res.rows}
    for n in (1, 2):
        with distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=logging.ERROR) as cl, \
                distributed.Client(cl) as client:
            client.wait_for_workers(n)
            wall, res = time_sweep(tasks, scheduler=client)
            assert {r["key"]: r["shd"] for r in res.rows} == ref  # same results as joblib
            out["sweep"][f"dask_{n}"] = {"wall_s": wall, "runs_per_s": len(tasks) / wall}

    rng = np.random.default_rng(0)
    d = 11
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "pq").mkdir()
        (tmp / "csv").mkdir()
        per = rows // 8
        for i in range(8):
            X = rng.normal(size=(per, d)) * 50 + 1000.0
            df = pd.DataFrame(X, columns=[f"c{j}" for j in range(d)])
            df.to_parquet(tmp / "pq" / f"part-{i}.parquet", index=False)
            to_csv_safe(df, tmp / "csv" / f"part-{i}.csv", index=False)
        n_rows = per * 8
        out["covariance"]["rows"] = n_rows
        out["covariance"]["columns"] = d
        for fmt, path in (("parquet", tmp / "pq"), ("csv", str(tmp / "csv" / "part-*.csv"))):
            t0 = time.perf_counter()
            n, _, _ = sufficient_stats(path, scheduler="threads")
            wall = time.perf_counter() - t0
            assert n == n_rows
            out["covariance"][f"{fmt}_threads"] = {"wall_s": wall, "rows_per_s": n_rows / wall}
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=logging.ERROR) as cl, \
                distributed.Client(cl) as client:
            client.wait_for_workers(2)
            for fmt, path in (("parquet", tmp / "pq"), ("csv", str(tmp / "csv" / "part-*.csv"))):
                t0 = time.perf_counter()
                n, _, _ = sufficient_stats(path, scheduler=client)
                wall = time.perf_counter() - t0
                out["covariance"][f"{fmt}_dask2"] = {"wall_s": wall, "rows_per_s": n_rows / wall}

    print(f"machine: {out['machine']['cpus']} CPUs, {out['machine']['platform']}, "
          f"1-min load average at start {out['machine']['load_avg_1min_at_start']:.1f}")
    print(f"\n| sweep ({len(tasks)} CoLiDE-NV runs, d=10) | wall (s) | runs/s |\n|---|---|---|")
    for k in ("joblib_1", "joblib_2", "dask_1", "dask_2"):
        v = out["sweep"][k]
        print(f"| {k.replace('_', ', ')} worker(s) | {v['wall_s']:.1f} | {v['runs_per_s']:.2f} |")
    print(f"\n| sufficient_stats ({out['covariance']['rows']:,} rows x {d} cols) | wall (s) | rows/s |\n|---|---|---|")
    for k, v in out["covariance"].items():
        if isinstance(v, dict):
            print(f"| {k} | {v['wall_s']:.2f} | {v['rows_per_s']:,.0f} |")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
