"""What a job's worker process costs in memory when its arguments hold a big dataset (issue 53).

``dashboard.infra.workers.in_worker`` sends a job's call ``(func, args, kwargs)`` to a worker
process. This measures, for an ``X`` of 100-400 MB (the Simulate page allows up to ~382 MB):

* the **server's** extra memory while the call is sent and the worker runs: the peak of
  Python's allocations (tracemalloc) and of the process's RSS (``VmHWM`` after resetting it
  through ``/proc/self/clear_refs``), above what it held before (``X`` itself);
* the **worker's** extra RSS: its ``VmHWM`` once it has ``X``, above a worker's that got a
  tiny array;
* the wall time of the job (not asserted anywhere).

Run from the repository root (Linux)::

    nice -n 19 .venv/bin/python -m benchmarks.bench_worker_memory [--sizes 100 200 400] [--out FILE --label TEXT]

``results/worker_memory.md`` keeps the figures before and after the call went out of band.
"""
from __future__ import annotations

import argparse
import gc
import os
import time
import tracemalloc

import numpy as np

from benchmarks._common import markdown_table
from dashboard.infra import jobs, workers
from dashboard.infra.slots import ComputeSlots
from tests._worker_memory_funcs import probe, status_kb

_MB = 1024 * 1024


def _reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _run(X):
    """One job running ``probe(X)`` in a worker: (server's tracemalloc peak, server's RSS peak,
    probe's answer, seconds), the peaks in bytes above the start."""
    slots = ComputeSlots(2, reserved=0)
    gc.collect()
    hwm_ok = _reset_hwm()
    rss0 = status_kb("VmRSS")
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        t0 = time.perf_counter()
        job = jobs.Job(None, "probe", slots=slots, owner=None, budget_s=None, process=(probe, (X,), {})).start()
        if not job.wait(600):
            raise SystemExit("the probe job did not end within 600 s")
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    if job.error:
        raise SystemExit(job.error)
    rss_peak = (status_kb("VmHWM") - rss0) * 1024 if hwm_ok else float("nan")
    return peak, rss_peak, job.result, seconds


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[100, 200, 400], help="MB of X (d = 200)")
    parser.add_argument("--d", type=int, default=200)
    parser.add_argument("--strided", action="store_true", help="also a non-contiguous X (every other column)")
    parser.add_argument("--out", help="append the table to this markdown file")
    parser.add_argument("--label", default="", help="what revision this is, for --out")
    args = parser.parse_args(argv)
    workers.ENABLED = True
    _, _, tiny, _ = _run(np.zeros((10, args.d)))  # starts the forkserver; a worker's own baseline
    rng = np.random.default_rng(0)
    rows = []
    cases = [(mb, "C") for mb in args.sizes] + ([(args.sizes[0], "strided")] if args.strided else [])
    for mb, layout in cases:
        n = int(mb * _MB / (8 * args.d))
        if layout == "strided":
            base = np.empty((n, 2 * args.d))
            rng.standard_normal(out=base)
            X = base[:, ::2]
        else:
            X = np.empty((n, args.d))
            rng.standard_normal(out=X)
        nbytes = n * args.d * 8
        peak, rss_peak, got, seconds = _run(X)
        assert got["shape"] == X.shape and got["checksum"] == float(X[::97].sum())
        child = (got["hwm_kb"] - tiny["hwm_kb"]) * 1024
        rows.append([f"{nbytes / _MB:,.0f}", layout, f"{peak / _MB:,.2f} ({peak / nbytes:.4f}x)",
                     f"{rss_peak / _MB:,.0f} ({rss_peak / nbytes:.2f}x)",
                     f"{child / _MB:,.0f} ({child / nbytes:.2f}x)", f"{seconds:.2f}"])
        del X, got
        if layout == "strided":
            del base
        print(markdown_table(["X (MB)", "layout", "server: tracemalloc peak, MB", "server: RSS peak, MB",
                              "worker: RSS peak above a tiny call's, MB", "job, s"], rows[-1:])[-1], flush=True)
    table = markdown_table(["X (MB)", "layout", "server: tracemalloc peak, MB", "server: RSS peak, MB",
                            "worker: RSS peak above a tiny call's, MB", "job, s"], rows)
    print("\n".join(table))
    if args.out:
        with open(args.out, "a") as fh:
            fh.write(f"\n### {args.label}\n\nd = {args.d}, float64, one job; peaks above the process's memory "
                     f"before the job (X itself not counted); {os.cpu_count()} cores.\n\n")
            fh.write("\n".join(table) + "\n")


if __name__ == "__main__":
    main()
