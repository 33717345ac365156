"""Paper-faithful CoLiDE schedule vs the fast solver: time, iterations, SHD and objective, side by side.

Usage::

    .venv/bin/python benchmarks/bench_solver.py [--quick] [--out results.json] [--threads 1]
        [--sizes 10,20,50] [--seeds 3] [--settings EV,NV] [--scaling 50,100,none] [--no-table1]
    .venv/bin/python benchmarks/bench_solver.py --summarise results.json

(with the project installed, ``make``; or ``python -m benchmarks.bench_solver`` from the
repository root.)

Table 1 (accuracy and speed): for Sachs (CoLiDE-EV and CoLiDE-NV) and simulated ER4 linear
SEMs (n = 1000 Gaussian samples, drawn by ``colide_core.data.simulate.simulate_dataset``) at d in
{10, 20, 50, 100, 200}, 3 seeds each:

* "EV" setting: weights uniform on +-[0.5, 2], every noise variance 1, fitted with CoLiDE-EV;
* "NV" setting: weights uniform on +-[0.25, 1], noise variances uniform on [0.5, 10], fitted
  with CoLiDE-NV (paper Section 5);

each problem is fitted with ``CoLiDE(variant, solver="adam")`` (Algorithm 1 with the paper's
schedule, the reference) and ``CoLiDE(variant, solver="fast")`` in the same process, one after the
other, and the table gives both wall times and iteration counts, the time ratio faithful / fast,
SHD of both thresholded graphs (threshold 0.3, made acyclic) and the final objective (paper
eq. 4 / eq. 6 at the last mu, s) reached by both, with its relative difference
``(fast - faithful) / |faithful|`` (negative: the fast solver found a lower objective).

After table 1 it prints the per-setting summary and issue 4's targets (ratio >= 10x on every
case and >= 20x geometric mean, mean SHD, objective, Sachs < 0.2 s, d = 200 < 20 s), each marked
met or not with the cases that miss it. Every Adam step of both solvers needs the product
``cov @ W`` (one d x d gemm, timed once per d): for each case the "ceiling" is the faithful
time over (fast iterations x one gemm), the best ratio the fast solver's iteration count allows
even if a step cost nothing else, and the "floor" is (fast iterations x one gemm), the least
time those steps can take. A case under 10x whose ceiling is also under 10x can only pass with
fewer steps, i.e. a different path ("Same path" in ``colide_core.solver._fast.fast_solve``).

Table 2 (cost growth): wall time of the fast solver alone vs d up to 400 on the same two ER4
settings, with the exponent of a least-squares fit ``time ~ d^p`` over d >= 50, and the
per-iteration floor: the time of one d x d LU (LAPACK getrf) times the fast solver's
iteration count, and the "step floor": the O(d^3) work of a step that inverts (LU + inverse,
since the log-det gradient needs the whole inverse, plus the product cov @ W) times the
iteration count. The fast solver inverts only every third step (every tenth at step scale 1,
the ill-conditioned EV problems), so its time can fall below this "floor" (ratio < 1); its
own floor is the product cov @ W at every step plus the inverse every k steps.

BLAS threads: ``--threads`` (default 1) is exported as OPENBLAS_NUM_THREADS / OMP_NUM_THREADS /
MKL_NUM_THREADS before numpy is imported. On a shared 2-core box, multi-threaded OpenBLAS was
measured to slow both solvers by up to 18x when the machine is oversubscribed, which makes
timings meaningless; one thread keeps the comparison fair and reproducible.

``--quick`` (Sachs, one seed at d = 10 and 20, scaling up to d = 100) finishes in under 2 minutes.
The full run takes about an hour on a 2-core machine (the faithful fits at d = 200 take minutes
each, and the fast solver at d = 400 on the equal-variance setting several more).
"""
from __future__ import annotations

import argparse
import os
import sys


def _set_threads(argv):
    threads = "1"
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            threads = argv[i + 1]
        elif a.startswith("--threads="):
            threads = a.split("=", 1)[1]
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = threads
    return threads


_THREADS = _set_threads(sys.argv[1:]) if __name__ == "__main__" else None

import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from scipy.linalg import lapack  # noqa: E402

from colide_core import CoLiDE, ConvergenceWarning, load_sachs  # noqa: E402
from colide_core.solver import _fast  # noqa: E402
from colide_core.evaluation._metrics import evaluate  # noqa: E402
from colide_core.data.simulate import simulate_dataset  # noqa: E402

#: Seeds of the simulated graphs (not the ones the solver's defaults were tuned on).
SEED0 = 100
#: Simulation setting -> the protocol's ``variance`` and the CoLiDE variant fitted to it.
SETTINGS = {
    "EV": dict(variance="ev", variant="ev"),
    "NV": dict(variance="nv", variant="nv"),
}


def simulate(setting, d, seed, n=1000):
    """One ER4 linear-Gaussian SEM of the project's protocol: returns ``(X, B_true)``.

    ``colide_core.data.simulate.simulate_dataset(graph="er", degree=4, n_nodes=d, n_samples=n,
    variance=...)`` with ``random_state=seed``: EV weights +-[0.5, 2] and unit noise variances,
    NV weights +-[0.25, 1] and variances U[0.5, 10]. ``X`` has shape (n, d).
    """
    sim = simulate_dataset(graph="er", degree=4, n_nodes=d, n_samples=n, noise="gaussian",
                           variance=SETTINGS[setting]["variance"], random_state=seed)
    return sim.X, sim.B_true


def fit(X, variant, solver):
    """Fit and time one CoLiDE estimator; ConvergenceWarnings are counted, not printed."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        t0 = time.perf_counter()
        est = CoLiDE(variant, solver=solver).fit(X)
        wall = time.perf_counter() - t0
    est.n_warnings_ = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    return est, wall


_GEMM = {}


def gemm_time(d):
    """Seconds for one ``cov @ W`` (d x d BLAS gemm into a preallocated array), cached per d.

    Every Adam step of either solver needs this product (the score's gradient, eq. 4 / eq. 6),
    so ``iterations x gemm_time(d)`` is a lower bound on any solver that takes those steps.
    """
    if d not in _GEMM:
        rng = np.random.default_rng(0)
        C = rng.normal(size=(d, d))
        C = C @ C.T
        W, out = rng.normal(size=(d, d)), np.empty((d, d))
        _GEMM[d] = seconds_per_call(lambda: np.dot(C, W, out), max(20, int(2e7 / d ** 3)), repeats=3)
    return _GEMM[d]


def seconds_per_call(fn, reps, repeats=1):
    """Seconds per call of ``fn()``: one warm-up call, then the best of ``repeats`` loops of ``reps``."""
    fn()
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best


def compare(name, setting, d, seed, X, B, variant):
    """One row of table 1."""
    ref, t_ref = fit(X, variant, "adam")
    fst, t_fst = fit(X, variant, "fast")
    o_ref, o_fst = ref.result_.objective, fst.result_.objective
    return dict(
        case=name, setting=setting, d=d, seed=seed, variant=variant,
        t_faithful=t_ref, it_faithful=int(ref.n_iter_), t_fast=t_fst, it_fast=int(fst.n_iter_),
        ratio=t_ref / t_fst, gemm=gemm_time(d),
        shd_faithful=int(evaluate(B, ref.adjacency_)["shd"]), shd_fast=int(evaluate(B, fst.adjacency_)["shd"]),
        obj_faithful=o_ref, obj_fast=o_fst, obj_rel=(o_fst - o_ref) / abs(o_ref),
        conv_faithful=bool(ref.converged_), conv_fast=bool(fst.converged_),
    )


def print_row(r, file=sys.stdout):
    print(f"| {r['case']:<14} | {r['variant']:>2} | {r['t_faithful']:8.2f} | {r['it_faithful']:6d} | "
          f"{r['t_fast']:7.3f} | {r['it_fast']:6d} | {r['ratio']:6.1f} | {r['shd_faithful']:4d} | {r['shd_fast']:4d} | "
          f"{r['obj_faithful']:.6g} | {r['obj_fast']:.6g} | {r['obj_rel']:+.1e} |", file=file, flush=True)


HEADER1 = ("| case           | v  | faithful s | it | fast s | it | ratio | SHD faithful | SHD fast "
           "| obj faithful | obj fast | rel |")


def table1(sizes, seeds, out_rows, settings=tuple(SETTINGS)):
    print("\nTable 1: faithful (solver='adam') vs fast (solver='fast'), same process, one after the other")
    print("| case           | v  | faith. s | faith. it | fast s | fast it | ratio | SHD faith. | SHD fast "
          "| obj faithful | obj fast | rel diff |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    X, B = load_sachs()
    for variant in ("ev", "nv"):
        r = compare("sachs", "sachs", 11, 0, X, B, variant)
        out_rows.append(r)
        print_row(r)
    for setting, spec in SETTINGS.items():
        if setting not in settings:
            continue
        for d in sizes:
            for k in range(seeds):
                seed = SEED0 + k
                Xs, Bs = simulate(setting, d, seed)
                r = compare(f"ER4-{setting} d={d} s{k}", setting, d, seed, Xs, Bs, spec["variant"])
                out_rows.append(r)
                print_row(r)


def summary(rows):
    print("\nPer setting (mean over seeds): SHD faithful / fast, time ratio geometric mean and minimum, "
          "largest relative objective increase")
    print("| setting | d | mean SHD faithful | mean SHD fast | ratio geo-mean | ratio min | ceiling min "
          "| max rel obj |")
    print("|---|---|---|---|---|---|---|---|")
    groups = {}
    for r in rows:
        key = (r["setting"] if r["setting"] != "sachs" else f"sachs-{r['variant']}", r["d"])
        groups.setdefault(key, []).append(r)
    for (setting, d), rs in groups.items():
        ratio = np.array([x["ratio"] for x in rs])
        ceilings = [c for c in map(ceiling, rs) if c is not None]
        print(f"| {setting} | {d} | {np.mean([x['shd_faithful'] for x in rs]):.1f} | "
              f"{np.mean([x['shd_fast'] for x in rs]):.1f} | {np.exp(np.mean(np.log(ratio))):.1f} | "
              f"{ratio.min():.1f} | {f'{min(ceilings):.1f}' if ceilings else '-'} | "
              f"{max(x['obj_rel'] for x in rs):+.1e} |")
    ratio = np.array([x["ratio"] for x in rows])
    print(f"\nAll {len(rows)} fits: time ratio geometric mean {np.exp(np.mean(np.log(ratio))):.1f}, "
          f"min {ratio.min():.1f}, max {ratio.max():.1f}; "
          f"objective: fast lower on {sum(x['obj_rel'] < 0 for x in rows)}, "
          f"max rel increase {max(x['obj_rel'] for x in rows):+.1e}")
    print()
    print(targets(rows, groups))


def ceiling(row):
    """The best time ratio the fast solver's iteration count allows: faithful time over
    ``it_fast x gemm_time(d)``, i.e. if each of its steps cost no more than its one ``cov @ W``.
    None for rows written before the gemm time was recorded."""
    return row["t_faithful"] / (row["it_fast"] * row["gemm"]) if row.get("gemm") else None


def _ceiling_note(row):
    c = ceiling(row)
    return f"; ceiling {c:.1f}x" if c is not None else ""


def _floor_note(row):
    return f"; floor {row['it_fast'] * row['gemm']:.1f} s" if row.get("gemm") else ""


def targets(rows, groups):
    """Issue 4's targets, each checked against these rows: one markdown table, met or not and where."""
    def where(items):
        return ", ".join(items) if items else "-"

    ratio = np.array([x["ratio"] for x in rows])
    slow = [f"{x['case']} ({x['ratio']:.1f}x{_ceiling_note(x)})" for x in rows if x["ratio"] < 10]
    shd_worse = []
    for (setting, d), rs in groups.items():
        f, g = np.mean([x["shd_faithful"] for x in rs]), np.mean([x["shd_fast"] for x in rs])
        if g - f > max(1.0, 0.03 * f):
            shd_worse.append(f"{setting} d={d} ({f:.1f} -> {g:.1f})")
    obj_up = [f"{x['case']} ({x['obj_rel']:+.1e})" for x in rows if x["obj_rel"] > 1e-3]
    sachs = [f"{x['variant']} {x['t_fast']:.3f} s" for x in rows if x["setting"] == "sachs"]
    sachs_slow = [f"{x['variant']} {x['t_fast']:.3f} s" for x in rows if x["setting"] == "sachs" and x["t_fast"] >= 0.2]
    big = [x for x in rows if x["d"] >= 200 and x["setting"] != "sachs"]
    big_slow = [f"{x['case']} ({x['t_fast']:.1f} s{_floor_note(x)})" for x in big if x["t_fast"] >= 20]
    geo = float(np.exp(np.mean(np.log(ratio))))
    lines = [
        "Issue 4 targets on this run (ceiling: faithful time / (fast iterations x one cov @ W gemm); "
        "floor: fast iterations x one gemm)",
        "| target | met | where not |",
        "|---|---|---|",
        f"| time ratio >= 10x on every case | {'yes' if not slow else f'no ({len(slow)} of {len(rows)})'} "
        f"| {where(slow)} |",
        f"| geometric-mean ratio >= 20x | {'yes' if geo >= 20 else 'no'} ({geo:.1f}x) | |",
        f"| mean SHD per setting not worse by more than max(1, 3%) | {'yes' if not shd_worse else 'no'} "
        f"| {where(shd_worse)} |",
        f"| final objective at most 1e-3 (relative) above the faithful one | "
        f"{'yes' if not obj_up else f'no ({len(obj_up)} of {len(rows)})'} | {where(obj_up)} |",
        f"| Sachs < 0.2 s per variant | {'yes' if sachs and not sachs_slow else 'no'} ({where(sachs)}) "
        f"| {where(sachs_slow)} |",
    ]
    if big:
        lines.append(f"| ER4 d = 200 < 20 s | {'yes' if not big_slow else f'no ({len(big_slow)} of {len(big)})'} "
                     f"| {where(big_slow)} |")
    return "\n".join(lines)


def lu_time(d, reps):
    """Seconds for one d x d LAPACK getrf of an M-matrix (the per-iteration floor)."""
    rng = np.random.default_rng(0)
    M = np.eye(d) - np.abs(rng.normal(size=(d, d))) * (0.5 / d)
    return seconds_per_call(lambda: lapack.dgetrf(M), reps)


def step_floor_time(d, reps):
    """Seconds for the O(d^3) work one fast-solver step cannot avoid: one inverse + one d x d product.

    The gradient of the log-det term needs the whole inverse of ``s I - W o W`` and the score's
    needs ``cov @ W`` (gemm); everything else in a step is O(d^2). The inverse is timed with the
    fast solver's own kernel (the unpivoted block inverse, with numba; else LAPACK getrf + getri).
    """
    rng = np.random.default_rng(0)
    M = np.eye(d) - np.abs(rng.normal(size=(d, d))) * (0.5 / d)
    C = rng.normal(size=(d, d))
    C = C @ C.T
    W = rng.normal(size=(d, d))

    if _fast.HAVE_NUMBA:
        def once():
            _fast._block_inv_nb(M)
            return C @ W
    else:
        def once():
            lu, piv, _ = lapack.dgetrf(M)
            lapack.dgetri(lu, piv)
            return C @ W

    return seconds_per_call(once, reps)


def table2(sizes, out_rows, settings=tuple(SETTINGS)):
    print("\nTable 2: fast solver alone, time vs d (ER4, seed %d); floor = one getrf LU x iterations; "
          "step floor = (inverse + one d x d product) x iterations" % SEED0)
    print("| setting | d | fast s | iterations | s / iteration | one LU (us) | floor s | time / floor "
          "| inv+gemm (us) | time / step floor |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for setting, spec in SETTINGS.items():
        if setting not in settings:
            continue
        ts = []
        for d in sizes:
            X, B = simulate(setting, d, SEED0)
            est, wall = fit(X, spec["variant"], "fast")
            lu = lu_time(d, max(20, int(2e6 / d ** 2)))
            step = step_floor_time(d, max(10, int(5e5 / d ** 2)))
            floor = lu * est.n_iter_
            row = dict(setting=setting, d=d, t_fast=wall, it_fast=int(est.n_iter_), lu=lu, floor=floor, step=step,
                       shd_fast=int(evaluate(B, est.adjacency_)["shd"]))
            out_rows.append(row)
            ts.append((d, wall))
            print(f"| {setting} | {d} | {wall:.3f} | {est.n_iter_} | {wall / est.n_iter_ * 1e6:.1f} us | "
                  f"{lu * 1e6:.1f} | {floor:.3f} | {wall / floor:.1f} | {step * 1e6:.1f} | "
                  f"{wall / (step * est.n_iter_):.1f} |", flush=True)
        big = [(d, t) for d, t in ts if d >= 50]
        if len(big) >= 2:
            p = np.polyfit(np.log([d for d, _ in big]), np.log([t for _, t in big]), 1)[0]
            print(f"| {setting} | fitted exponent (d >= 50): time ~ d^{p:.2f} | | | | | | | | |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="Sachs, one seed at d=10,20; scaling to d=100 (< 2 min)")
    ap.add_argument("--out", default=None, help="write all rows as JSON here")
    ap.add_argument("--threads", default="1", help="BLAS threads for both solvers (default 1)")
    ap.add_argument("--sizes", default=None, help="comma-separated d for table 1 (default 10,20,50,100,200)")
    ap.add_argument("--seeds", type=int, default=None, help="seeds per size (default 3)")
    ap.add_argument("--no-table1", action="store_true", help="only the scaling table")
    ap.add_argument("--settings", default="EV,NV", help="comma-separated simulated settings (default EV,NV)")
    ap.add_argument("--scaling", default=None,
                    help="comma-separated d for table 2 (default 10,...,400; 'none' skips table 2)")
    ap.add_argument("--summarise", default=None, metavar="ROWS.json",
                    help="only print the per-setting summary and the targets of an earlier --out file")
    args = ap.parse_args(argv)
    if args.summarise:
        summary(json.loads(Path(args.summarise).read_text())["table1"])
        return
    sizes = [10, 20] if args.quick else [10, 20, 50, 100, 200]
    if args.sizes:
        sizes = [int(x) for x in args.sizes.split(",")]
    seeds = args.seeds or (1 if args.quick else 3)
    scaling = [10, 20, 50, 100] if args.quick else [10, 20, 50, 100, 200, 400]
    if args.scaling:
        scaling = [] if args.scaling == "none" else [int(x) for x in args.scaling.split(",")]
    settings = tuple(x.strip() for x in args.settings.split(","))
    if not set(settings) <= set(SETTINGS):
        ap.error(f"--settings must be among {sorted(SETTINGS)}, got {args.settings!r}")

    t_start = time.perf_counter()
    t0 = time.perf_counter()
    _fast.warmup()
    print(f"# bench_solver: python {platform.python_version()}, numpy {np.__version__}, numba "
          f"{'yes' if _fast.HAVE_NUMBA else 'no'}, BLAS threads {os.environ.get('OPENBLAS_NUM_THREADS')}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"# fast-solver kernel load/compile (warmup) {time.perf_counter() - t0:.2f} s")
    rows1, rows2 = [], []
    if not args.no_table1:
        table1(sizes, seeds, rows1, settings)
        summary(rows1)
    if scaling:
        table2(scaling, rows2, settings)
    print(f"\n# total wall time {time.perf_counter() - t_start:.1f} s; load average at end {os.getloadavg()[0]:.2f}")
    if args.out:
        Path(args.out).write_text(json.dumps({"table1": rows1, "table2": rows2}, indent=1))


if __name__ == "__main__":
    main()
