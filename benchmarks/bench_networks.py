"""The bnlearn repository's Gaussian networks: CoLiDE against the baselines, raw and standardised.

Draws rows from each network's true SEM (:func:`colide_core.data.networks.load_network`, the
``networks`` extra), fits every method of the registry asked for
(:func:`colide_core.evaluation.baselines.run_method`; ``CoLiDE-NV-TOPO`` is CoLiDE-NV with
``solver="topo"``) on the raw rows and on the same rows standardised, and prints one paste-ready
markdown table: the mean over seeds of SHD, SHD-C, SID, TPR, FDR and the fit time, with each
network's varsortability (its implied variances; 0.5 after standardising, by construction).

Run: ``python -m benchmarks.bench_networks`` (the four networks, n = 1,000 and 5,000, 5 seeds,
all methods: hours on 2 cores) or ``--quick`` (n = 1,000, one seed, CoLiDE-EV/NV and SortNRegress).
Results and what they say: docs/networks.md. ``X`` is ``(n_samples, n_nodes)``.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from colide_core import evaluate
from colide_core.data.networks import NETWORKS, load_network, read_network
from colide_core.data.simulate import standardize
from colide_core.evaluation.baselines import run_method_safe

# GES is left out: the registry refuses it above 30 nodes (too slow beyond).
ALL_METHODS = ("CoLiDE-EV", "CoLiDE-NV", "CoLiDE-NV-TOPO", "DAGMA-linear", "SortNRegress")
QUICK_METHODS = ("CoLiDE-EV", "CoLiDE-NV", "SortNRegress")


def _fit(method, X):
    name, params = ("CoLiDE-NV", {"solver": "topo"}) if method == "CoLiDE-NV-TOPO" else (method, {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        out = run_method_safe(name, X, **params)
        return out, time.perf_counter() - t


def run(networks, sizes, seeds, methods):
    """Every (network, n, scaling, method) cell, averaged over ``seeds``: a list of dicts."""
    rows = []
    for name in networks:
        vs = read_network(name).varsortability()
        for n in sizes:
            per = {}
            for seed in seeds:
                data = load_network(name, n, random_state=seed)
                raw = data.X.to_numpy()
                for scaling, X in (("raw", raw), ("standardised", standardize(raw))):
                    for method in methods:
                        out, seconds = _fit(method, X)
                        cell = per.setdefault((scaling, method), [])
                        if out.get("error"):
                            cell.append({"error": str(out["error"])[:60]})
                            continue
                        m = evaluate(data.B_true, np.asarray(out["W"]))
                        cell.append({"shd": m["shd"], "shd_cpdag": m["shd_cpdag"], "sid": m.get("sid", np.nan),
                                     "tpr": m["tpr"], "fdr": m["fdr"], "time": seconds})
            for (scaling, method), cells in per.items():
                ok = [c for c in cells if "error" not in c]
                row = {"network": name, "n": n, "scaling": scaling, "method": method, "seeds": len(ok),
                       "varsortability": vs if scaling == "raw" else 0.5,
                       "error": next((c["error"] for c in cells if "error" in c), "")}
                for key in ("shd", "shd_cpdag", "sid", "tpr", "fdr", "time"):
                    row[key] = float(np.mean([c[key] for c in ok])) if ok else float("nan")
                rows.append(row)
    return rows


def table(rows) -> str:
    """The rows as one markdown table."""
    out = ["| network | n | data | varsort. | method | SHD | SHD-C | SID | TPR | FDR | time (s) | seeds |",
           "|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if not r["seeds"]:
            out.append(f"| {r['network']} | {r['n']:,} | {r['scaling']} | {r['varsortability']:.2f} | {r['method']} "
                       f"| failed: {r['error']} | | | | | | 0 |")
            continue
        out.append(f"| {r['network']} | {r['n']:,} | {r['scaling']} | {r['varsortability']:.2f} | {r['method']} | "
                   f"{r['shd']:.1f} | {r['shd_cpdag']:.1f} | {r['sid']:.0f} | {r['tpr']:.2f} | {r['fdr']:.2f} | "
                   f"{r['time']:.1f} | {r['seeds']} |")
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", default=",".join(NETWORKS), help="comma-separated names")
    parser.add_argument("--sizes", default="1000,5000", help="comma-separated n")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--methods", default=",".join(ALL_METHODS))
    parser.add_argument("--quick", action="store_true", help="n = 1,000, one seed, " + ", ".join(QUICK_METHODS))
    args = parser.parse_args(argv)
    sizes = [1000] if args.quick else [int(s) for s in args.sizes.split(",")]
    seeds = range(1 if args.quick else args.seeds)
    methods = QUICK_METHODS if args.quick else tuple(args.methods.split(","))
    print(table(run(args.networks.split(","), sizes, seeds, methods)))


if __name__ == "__main__":
    main()
