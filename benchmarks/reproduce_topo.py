"""CoLiDE-TOPO against the continuous CoLiDE solvers: the paper's Appendix E table in one run.

Setting (Saboksayr, Mateos, Tepper, ICLR 2024, Appendix E, Table "tab:topo"): 10 ER4 graphs with
d = 50 nodes, n = 1000 samples, linear Gaussian SEM with heteroscedastic noise (variances
U[0.5, 10]) and weights U([-1, -0.25] U [0.25, 1]); the one simulation protocol
``colide_core.data.simulate.simulate_dataset(graph="er", degree=4, variance="nv", random_state=seed)``.

Methods (all lambda1 = 0.05, threshold 0.3, as in the paper):

* CoLiDE-EV, CoLiDE-NV: ``CoLiDE(variant)``, the fast continuous solver;
* TOPO (least squares): ``CoLiDE("ls", solver="topo")``, the same search with the least-squares
  score plus the L1 term, started from the continuous least-squares (DAGMA-like) solution;
* CoLiDE-TOPO-EV / -NV: ``CoLiDE(variant, solver="topo")`` (``colide_core.solver._topo``), TOPO's sizes
  (s0, s_small, s_large) = (10, 100, 1000), started from the continuous solution of the same
  score. Its time includes that continuous start.

Prints paste-ready markdown: mean +- std (population std, ddof = 0) of SHD, SHD-C, FDR, TPR and the
time per fit, the paper's numbers beside ours; the SHD ratio TOPO-NV / NV (the issue's target:
at most 0.75; the paper: 0.66); a lambda1 sensitivity row (NV and TOPO-NV at lambda1 = 0.1 on the
same graphs); issue 32's ill-conditioned equal-variance graphs (strong weights, cond(cov) up
to 1e7; TOPO against the search before issue 32 there is recorded in
``benchmarks/results/topo_ill_conditioned.md``); the scaling of one TOPO fit
with d (10, 20, 50, 100); Sachs SHD / SID / SHD-C for
both TOPO variants next to the paper's Table 4 (which has no TOPO column).

Usage::

    .venv/bin/python benchmarks/reproduce_topo.py [--quick] [--graphs 10] [--d 50] [--n 1000]
                                                  [--scaling 10,20,50,100] [--no-sachs]
                                                  [--ill 5] [--ill-only]

``--quick`` (3 graphs with d = 30, scaling d = 10, 20, 30, Sachs) runs in well under 2 minutes.
A full run's output is kept in ``benchmarks/results/reproduce_topo.txt``.
"""
from __future__ import annotations

import argparse
import platform
import time
import warnings

import numpy as np

from colide_core import CoLiDE, ConvergenceWarning, defaults, evaluate, load_sachs, threshold_to_dag
from colide_core.data.simulate import simulate_dataset

#: Paper, Appendix E, Table "tab:topo" (d = 50, 10 ER4 graphs, heteroscedastic): mean, std.
PAPER = {
    "CoLiDE-EV": {"SHD": (100.7, 29.6), "SHD-C": (102.4, 30.0), "FDR": (0.26, 0.10), "TPR": (0.69, 0.06)},
    "CoLiDE-NV": {"SHD": (100.9, 23.5), "SHD-C": (102.8, 23.8), "FDR": (0.26, 0.07), "TPR": (0.68, 0.06)},
    "TOPO (LS)": {"SHD": (128.4, 38.0), "SHD-C": (131.1, 37.3), "FDR": (0.36, 0.08), "TPR": (0.72, 0.06)},
    "CoLiDE-TOPO-EV": {"SHD": (88.8, 21.4), "SHD-C": (91.3, 20.7), "FDR": (0.23, 0.06), "TPR": (0.74, 0.04)},
    "CoLiDE-TOPO-NV": {"SHD": (66.9, 15.4), "SHD-C": (68.8, 15.4), "FDR": (0.16, 0.04), "TPR": (0.74, 0.04)},
}
#: Paper, Table 4 (Sachs): CoLiDE's continuous results (no TOPO column in the paper).
PAPER_SACHS = {"CoLiDE-EV": {"SHD": 13, "SID": 47, "SHD-C": 13}, "CoLiDE-NV": {"SHD": 12, "SID": 46, "SHD-C": 14}}

METHODS = {
    "CoLiDE-EV": dict(variant="ev"),
    "CoLiDE-NV": dict(variant="nv"),
    "TOPO (LS)": dict(variant="ls", solver="topo"),
    "CoLiDE-TOPO-EV": dict(variant="ev", solver="topo"),
    "CoLiDE-TOPO-NV": dict(variant="nv", solver="topo"),
}
METRICS = (("SHD", "shd"), ("SHD-C", "shd_cpdag"), ("FDR", "fdr"), ("TPR", "tpr"))


def fit(X, B_true, **params):
    """One fit: (metrics, seconds, model)."""
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = CoLiDE(**params).fit(X)
    seconds = time.perf_counter() - t0
    return evaluate(B_true, model.adjacency_), seconds, model


def _ms(values, digits):
    v = np.asarray(values, dtype=float)
    return f"{v.mean():.{digits}f} ± {v.std():.{digits}f}"


def _paper(name, label):
    m = PAPER.get(name, {}).get(label)
    if m is None:
        return "–"
    digits = 2 if label in ("FDR", "TPR") else 1
    return f"{m[0]:.{digits}f} ± {m[1]:.{digits}f}"


def main_table(graphs, d, n, lambda_check):
    rows = {name: {label: [] for label, _ in METRICS} | {"time": [], "swaps": []} for name in METHODS}
    extra = {"CoLiDE-NV λ=0.1": dict(variant="nv", lambda1=0.1),
             "CoLiDE-TOPO-NV λ=0.1": dict(variant="nv", lambda1=0.1, solver="topo")} if lambda_check else {}
    for name in extra:
        rows[name] = {label: [] for label, _ in METRICS} | {"time": [], "swaps": []}
    per_graph = []
    for seed in range(graphs):
        ds = simulate_dataset(graph="er", degree=4, n_nodes=d, n_samples=n, variance="nv", random_state=seed)
        line = [f"graph {seed}: {int(ds.B_true.sum())} edges"]
        for name, params in {**METHODS, **extra}.items():
            m, sec, model = fit(ds.X, ds.B_true, **params)
            for label, key in METRICS:
                rows[name][label].append(m[key])
            rows[name]["time"].append(sec)
            rows[name]["swaps"].append(model.n_iter_ if params.get("solver") == "topo" else np.nan)
            line.append(f"{name} {m['shd']} ({sec:.1f} s)")
        per_graph.append(" | ".join(line))
        print("  " + per_graph[-1], flush=True)

    print()
    print(f"### Appendix E: ER4, d = {d}, n = {n}, heteroscedastic Gaussian noise, {graphs} graphs "
          "(ours: mean ± std; paper: d = 50, 10 graphs)")
    print()
    names = list(rows)
    print("| metric | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for label, _ in METRICS:
        digits = 2 if label in ("FDR", "TPR") else 1
        print(f"| {label} | " + " | ".join(_ms(rows[nm][label], digits) for nm in names) + " |")
        print(f"| {label} (paper) | " + " | ".join(_paper(nm, label) for nm in names) + " |")
    print("| time per fit (s) | " + " | ".join(_ms(rows[nm]["time"], 2) for nm in names) + " |")
    print("| swaps accepted | " + " | ".join(
        "–" if np.all(np.isnan(rows[nm]["swaps"])) else _ms(rows[nm]["swaps"], 1) for nm in names) + " |")
    print()
    shd = {nm: float(np.mean(rows[nm]["SHD"])) for nm in names}
    r_nv = shd["CoLiDE-TOPO-NV"] / shd["CoLiDE-NV"]
    print(f"- SHD ratio CoLiDE-TOPO-NV / CoLiDE-NV: **{r_nv:.2f}** (target <= 0.75; paper 66.9 / 100.9 = 0.66): "
          + ("met" if r_nv <= 0.75 else "missed"))
    print(f"- CoLiDE-TOPO-EV mean SHD {shd['CoLiDE-TOPO-EV']:.1f} vs CoLiDE-EV {shd['CoLiDE-EV']:.1f} "
          "(target: below): " + ("met" if shd["CoLiDE-TOPO-EV"] < shd["CoLiDE-EV"] else "missed"))
    t_topo = max(max(rows["CoLiDE-TOPO-NV"]["time"]), max(rows["CoLiDE-TOPO-EV"]["time"]))
    print(f"- slowest CoLiDE-TOPO fit: {t_topo:.1f} s (target at d = 50: under 30 s)")
    better = sum(a < b for a, b in zip(rows["CoLiDE-TOPO-NV"]["SHD"], rows["CoLiDE-NV"]["SHD"]))
    print(f"- CoLiDE-TOPO-NV has a lower SHD than CoLiDE-NV on {better} of {graphs} graphs")
    if lambda_check:
        r01 = shd["CoLiDE-TOPO-NV λ=0.1"] / shd["CoLiDE-NV λ=0.1"]
        print(f"- at λ1 = 0.1 (both methods): SHD ratio TOPO-NV / NV = {r01:.2f}")
    print()
    return rows


def scaling(ds_list):
    print("### Scaling with d (one ER4 heteroscedastic graph each, n = 1000; time of one fit, s)")
    print()
    print("| d | CoLiDE-NV | CoLiDE-TOPO-NV | swaps (evaluated) | SHD NV → TOPO-NV | CoLiDE-EV | CoLiDE-TOPO-EV "
          "| swaps (evaluated) | SHD EV → TOPO-EV |")
    print("|---|---|---|---|---|---|---|---|---|")
    for d in ds_list:
        ds = simulate_dataset(graph="er", degree=4, n_nodes=d, n_samples=1000, variance="nv", random_state=100 + d)
        cells = [str(d)]
        for v in ("nv", "ev"):
            m0, t0, _ = fit(ds.X, ds.B_true, variant=v)
            m1, t1, model = fit(ds.X, ds.B_true, variant=v, solver="topo")
            ev = model.history_["evaluated"][-1]
            cells += [f"{t0:.2f}", f"{t1:.2f}", f"{model.n_iter_} ({ev})", f"{m0['shd']} → {m1['shd']}"]
        print("| " + " | ".join(cells) + " |", flush=True)
    print()


def sachs():
    X, B = load_sachs()
    print("### Sachs (853 × 11, 17-edge consensus DAG; one deterministic run)")
    print()
    print("| method | SHD | SID | SHD-C | edges | time (s) | paper Table 4 (SHD / SID / SHD-C) |")
    print("|---|---|---|---|---|---|---|")
    for name, params in (("CoLiDE-EV", dict(variant="ev")), ("CoLiDE-NV", dict(variant="nv")),
                         ("CoLiDE-TOPO-EV", dict(variant="ev", solver="topo")),
                         ("CoLiDE-TOPO-NV", dict(variant="nv", solver="topo")),
                         ("TOPO (LS)", dict(variant="ls", solver="topo"))):
        m, sec, _ = fit(X, B, **params)
        p = PAPER_SACHS.get(name)
        ref = f"{p['SHD']} / {p['SID']} / {p['SHD-C']}" if p else "– (not in the paper)"
        print(f"| {name} | {m['shd']} | {m['sid']} | {m['shd_cpdag']} | {m['nnz']} | {sec:.2f} | {ref} |")
    print()


def truth_order_check(graphs, d, n):
    """Is a missed SHD target the search's fault or the score's? Compare, per graph, the score
    CoLiDE-TOPO-NV reaches with the score of the true topological order (both solved exactly by
    ``order_solve``), and the SHD of each. A search that ends below the true order's score cannot
    reach the true order's SHD by searching harder: at this λ1 the score prefers other graphs."""
    import networkx as nx

    from colide_core.solver._topo import order_solve
    from colide_core._validation import data_covariance

    print(f"### Search or score? CoLiDE-TOPO-NV (λ1 = 0.05) against the true topological order "
          f"(ER4, d = {d}, n = {n}, {graphs} graphs)")
    print()
    print("| graph | score reached | score of the true order | reached − true | SHD reached | SHD of the true order |")
    print("|---|---|---|---|---|---|")
    below = 0
    for seed in range(graphs):
        ds = simulate_dataset(graph="er", degree=4, n_nodes=d, n_samples=n, variance="nv", random_state=seed)
        m, _, model = fit(ds.X, ds.B_true, variant="nv", solver="topo")
        cov, _, _ = data_covariance(ds.X)
        reached = order_solve(cov, model.order_, variant="nv")
        true_order = list(nx.topological_sort(nx.DiGraph(np.asarray(ds.B_true) != 0)))
        truth = order_solve(cov, true_order, variant="nv")
        shd_truth = evaluate(ds.B_true, threshold_to_dag(truth.W, defaults.THRESHOLD))["shd"]
        below += reached.score < truth.score
        print(f"| {seed} | {reached.score:.4f} | {truth.score:.4f} | {reached.score - truth.score:+.4f} | "
              f"{m['shd']} | {shd_truth} |")
    print()
    print(f"- the search ends below the true order's score on {below} of {graphs} graphs")
    print()


def ill_conditioned(graphs, d, n):
    """Issue 32: the ill-conditioned equal-variance graphs, where TOPO matters most.

    ER4, equal noise variances, the paper's strong EV weights +-[0.5, 2] (cond(cov) 1e5..1e7),
    fitted with CoLiDE-EV / -NV (continuous) and CoLiDE-TOPO-EV / -NV on the same graphs. The
    search as it was before issue 32 (deleted in issue 39) was compared with the current one on
    these graphs in one run: ``benchmarks/results/topo_ill_conditioned.md`` (the issue's target,
    mean SHD of TOPO now within 2% of TOPO before, was met).
    """
    print(f"### Ill-conditioned equal-variance graphs (ER4, d = {d}, n = {n}, weights ±[0.5, 2], {graphs} graphs)")
    print()
    print("| graph | cond(cov) | CoLiDE-EV | TOPO-EV | CoLiDE-NV | TOPO-NV |")
    print("|---|---|---|---|---|---|")
    keys = ("ev", "ev_topo", "nv", "nv_topo")
    shd = {k: [] for k in keys}
    for seed in range(graphs):
        ds = simulate_dataset(graph="er", degree=4, n_nodes=d, n_samples=n, variance="ev", random_state=seed)
        cells = [str(seed), f"{np.linalg.cond(np.cov(ds.X.T)):.1e}"]
        for v in ("ev", "nv"):
            m, sec, _ = fit(ds.X, ds.B_true, variant=v)
            shd[v].append(m["shd"])
            cells.append(f"{m['shd']} ({sec:.1f} s)")
            m, sec, _ = fit(ds.X, ds.B_true, variant=v, solver="topo")
            shd[v + "_topo"].append(m["shd"])
            cells.append(f"{m['shd']} ({sec:.1f} s)")
        print("| " + " | ".join(cells) + " |", flush=True)
    mean = {k: (float(np.mean(x)) if x else float("nan")) for k, x in shd.items()}
    print("| mean SHD | | " + " | ".join("–" if np.isnan(mean[k]) else f"{mean[k]:.1f}" for k in keys) + " |")
    print()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 graphs with d = 30, scaling d = 10, 20, 30 (< 2 min)")
    ap.add_argument("--graphs", type=int, default=10)
    ap.add_argument("--d", type=int, default=50)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--scaling", default="10,20,50,100", help="comma-separated d values ('' to skip)")
    ap.add_argument("--no-sachs", action="store_true")
    ap.add_argument("--no-lambda-check", action="store_true", help="skip the λ1 = 0.1 sensitivity row")
    ap.add_argument("--ill", type=int, default=5,
                    help="ill-conditioned equal-variance graphs (issue 32) at --d; 0 to skip")
    ap.add_argument("--ill-only", action="store_true", help="only the ill-conditioned table")
    ap.add_argument("--no-truth-order", action="store_true",
                    help="skip the comparison of the reached score with the true order's")
    args = ap.parse_args(argv)
    if args.quick:
        args.graphs, args.d, args.scaling, args.ill = 3, 30, "10,20,30", 2
    t0 = time.perf_counter()
    print(f"# reproduce_topo.py {'--quick ' if args.quick else ''}(graphs={args.graphs}, d={args.d}, n={args.n}); "
          f"{platform.processor() or platform.machine()}, python {platform.python_version()}")
    print()
    if args.ill_only:
        ill_conditioned(args.ill, args.d, args.n)
        print(f"total time: {time.perf_counter() - t0:.0f} s")
        return
    main_table(args.graphs, args.d, args.n, not args.no_lambda_check)
    if not args.no_truth_order:
        truth_order_check(args.graphs, args.d, args.n)
    if args.ill > 0:
        ill_conditioned(args.ill, args.d, args.n)
    if args.scaling.strip():
        scaling([int(x) for x in args.scaling.split(",") if x.strip()])
    if not args.no_sachs:
        sachs()
    print(f"total time: {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
