"""CoLiDE-TOPO against the paper-faithful and the fast solver: time and SHD, side by side (issue 32).

Usage::

    .venv/bin/python benchmarks/bench_topo.py [--quick] [--seeds 1] [--first-seed 1]
                                              [--scaling 20,50,100,200] [--settings ev,nv] [--old-cache]
                                              [--no-cases] [--cases 1,2,3,4] [--out FILE]

Table (a), the four d = 50 cases of issue 32 (n = 1000, ``simulate_dataset``):

1. ER4, equal noise variances, the paper's strong EV weights ``+-[0.5, 2]`` (cond(cov) ~ 1e6..1e7;
   seed 1 gives 8.6e6), fitted with CoLiDE-EV;
2. the same data fitted with CoLiDE-NV;
3. SF4, exponential noise, non-equal variances (the paper's NV weights), fitted with EV;
4. ER4, Gaussian noise, non-equal variances, fitted with NV.

Each is fitted with ``CoLiDE(variant)`` (fast), ``CoLiDE(variant, solver="adam")`` (the
paper-faithful Algorithm 1) and CoLiDE-TOPO, one after the other in one process. Times are wall
seconds of ``fit`` (TOPO's include its continuous start); SHD after threshold 0.3 (``evaluate``);
the ratios TOPO / faithful are the issue's targets (every fit <= 2, median <= 1). The search as
it was before issue 32 (coordinate-descent node solves, every node re-solved per EV sigma move,
no cache) was deleted in issue 39; its side-by-side run against the current search on these four
cases (seed 1, one process) is recorded in ``benchmarks/results/topo_bench.md`` and ``docs/topo.md`` ("Results"), and on the
ill-conditioned graphs in ``benchmarks/results/topo_ill_conditioned.md``.

Table (b), scaling: ER4 at d = 20, 50, 100, 200 (n = 1000), both settings of the paper (EV data
fitted with EV, NV data fitted with NV), fast / faithful / TOPO time and SHD. ``--old-cache`` adds TOPO with the node
cache as it was before the d = 100 fix (32 MiB, at most 2^15 slots: the same size for d >= 50,
smaller than it was for d < 50), in the same process, and whether it ends in the same order and
score (it must: the cache changes only what is recomputed). ``--settings nv`` runs one setting.

``--quick``: one seed, scaling d = 20, 50: a few minutes on a loaded
2-core machine. The numba kernels are compiled (or loaded from numba's cache) before timing.
Timings on a shared machine: read the ratios, measured side by side in one run.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from colide_core import CoLiDE, ConvergenceWarning, evaluate  # noqa: E402
from colide_core.data.simulate import simulate_dataset  # noqa: E402
from colide_core.solver import _topo  # noqa: E402

CASES = (
    ("ER4 EV data, strong weights, fit EV", dict(graph="er", degree=4, variance="ev"), "ev"),
    ("ER4 EV data, strong weights, fit NV", dict(graph="er", degree=4, variance="ev"), "nv"),
    ("SF4 exponential NV data, fit EV", dict(graph="sf", degree=4, variance="nv", noise="exponential"), "ev"),
    ("ER4 Gaussian NV data, fit NV", dict(graph="er", degree=4, variance="nv"), "nv"),
)


def fit(X, B, variant, solver):
    """One fit: (seconds, SHD, model)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t0 = time.perf_counter()
        model = CoLiDE(variant, solver=solver).fit(X)
        sec = time.perf_counter() - t0
    return sec, evaluate(B, model.adjacency_)["shd"], model


def warm_up():
    """Compile (or load) the numba kernels of every solver outside the timings."""
    ds = simulate_dataset(graph="er", degree=2, n_nodes=8, n_samples=200, variance="nv", random_state=0)
    for v in ("ev", "nv"):
        fit(ds.X, ds.B_true, v, "fast")
        fit(ds.X, ds.B_true, v, "topo")


def table_a(seeds, d=50, n=1000, cases=(1, 2, 3, 4)):
    head = "| case | seed | cond(cov) | fast s (SHD) | faithful s (SHD) | TOPO s (SHD) | TOPO / faithful | evaluations |"
    rows, ratios = [head, "|---" * 8 + "|"], []
    for seed in seeds:
        for number, (name, spec, variant) in enumerate(CASES, start=1):
            if number not in cases:
                continue
            ds = simulate_dataset(n_nodes=d, n_samples=n, random_state=seed, **spec)
            cond = np.linalg.cond(np.cov(ds.X.T))
            tf, sf, _ = fit(ds.X, ds.B_true, variant, "fast")
            ta, sa, _ = fit(ds.X, ds.B_true, variant, "adam")
            tt, st, mt = fit(ds.X, ds.B_true, variant, "topo")
            ratios.append(tt / ta)
            cells = [name, str(seed), f"{cond:.1e}", f"{tf:.2f} ({sf})", f"{ta:.2f} ({sa})", f"{tt:.2f} ({st})",
                     f"**{tt / ta:.2f}**", str(mt.history_["evaluated"][-1])]
            rows.append("| " + " | ".join(cells) + " |")
            print(rows[-1], flush=True)
    r = np.asarray(ratios)
    summary = (f"- TOPO / faithful: max {r.max():.2f} (target <= 2: {'met' if r.max() <= 2 else 'missed'}), "
               f"median {np.median(r):.2f} (target <= 1: {'met' if np.median(r) <= 1 else 'missed'})")
    return rows + ["", summary]


def table_b(sizes, seed=0, n=1000, settings=("ev", "nv"), old_cache=False):
    head = "| d | setting | fast s (SHD) | faithful s (SHD) | TOPO s (SHD) | TOPO / faithful | evaluations |"
    rows = [head, "|---" * 7 + "|"]
    if old_cache:
        head = head + " TOPO, old cache s (SHD) | old cache / faithful | same end |"
        rows = [head, "|---" * 10 + "|"]
    for d in sizes:
        for variance in settings:
            ds = simulate_dataset(graph="er", degree=4, n_nodes=d, n_samples=n, variance=variance,
                                  random_state=seed + d)
            tf, sf, _ = fit(ds.X, ds.B_true, variance, "fast")
            ta, sa, _ = fit(ds.X, ds.B_true, variance, "adam")
            tt, st, mt = fit(ds.X, ds.B_true, variance, "topo")
            rows.append(f"| {d} | ER4 {variance.upper()} data, fit {variance.upper()} | {tf:.2f} ({sf}) | "
                        f"{ta:.2f} ({sa}) | {tt:.2f} ({st}) | {tt / ta:.2f} | {mt.history_['evaluated'][-1]} |")
            if old_cache:  # the cache as it was before the d = 100 fix: 32 MiB, at most 2^15 slots
                _topo._CACHE_BYTES[0] = min(32 * 2 ** 20, 2 ** 15 * 8 * (2 * d + 7))
                try:
                    to, so, mo = fit(ds.X, ds.B_true, variance, "topo")
                finally:
                    _topo._CACHE_BYTES[0] = None
                gap = abs(mo.result_.objective - mt.result_.objective)
                same = ("yes" if mo.order_ == mt.order_ and gap <= 1e-9 * abs(mt.result_.objective)
                        else f"no (order {'same' if mo.order_ == mt.order_ else 'differs'}, score gap {gap:.1e})")
                rows[-1] += f" {to:.2f} ({so}) | {to / ta:.2f} | {same} |"
            print(rows[-1], flush=True)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one seed, scaling d = 20, 50")
    ap.add_argument("--seeds", type=int, default=1, help="seeds 1..N for table (a) (seed 1: cond 8.6e6)")
    ap.add_argument("--first-seed", type=int, default=1, help="table (a)'s seeds start here (seeds S..S+N-1)")
    ap.add_argument("--scaling", default="20,50,100,200", help="comma-separated d ('' to skip)")
    ap.add_argument("--settings", default="ev,nv", help="table (b)'s settings: ev (EV data, fit EV), nv, or both")
    ap.add_argument("--old-cache", action="store_true",
                    help="table (b): also TOPO with the node cache before the d = 100 fix (32 MiB, <= 2^15 slots)")
    ap.add_argument("--no-cases", action="store_true", help="skip table (a)")
    ap.add_argument("--cases", default="1,2,3,4", help="which of table (a)'s four cases to run")
    ap.add_argument("--out", default=None, help="also write the tables to this file")
    args = ap.parse_args(argv)
    if args.quick:
        args.seeds, args.scaling = 1, "20,50"
    t0 = time.perf_counter()
    warm_up()
    out = [f"# bench_topo.py {' '.join(sys.argv[1:])}; {platform.processor() or platform.machine()}, "
           f"python {platform.python_version()}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}",
           ""]
    print("\n".join(out), flush=True)
    if not args.no_cases:
        out += ["### (a) d = 50, n = 1000: the four cases of issue 32", ""]
        print(out[-2] + "\n", flush=True)
        out += table_a(range(args.first_seed, args.first_seed + args.seeds),
                       cases=tuple(int(x) for x in args.cases.split(",") if x.strip()))
    sizes = [int(x) for x in args.scaling.split(",") if x.strip()]
    if sizes:
        print("\n### (b) scaling (ER4, n = 1000, one graph per d and setting)\n", flush=True)
        settings = tuple(x.strip() for x in args.settings.split(",") if x.strip())
        out += ["", "### (b) scaling (ER4, n = 1000, one graph per d and setting)", ""]
        out += table_b(sizes, settings=settings, old_cache=args.old_cache)
    out += ["", f"total time: {time.perf_counter() - t0:.0f} s"]
    text = "\n".join(out) + "\n"
    print("\n" + text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
