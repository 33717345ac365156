"""The bnlearn repository's Gaussian networks: CoLiDE against the baselines, raw and standardised.

Draws rows from each network's true SEM (:func:`colide_core.data.networks.load_network`, the
``networks`` extra), fits every method asked for on the raw rows and on the same rows
standardised, and prints one paste-ready markdown table: the mean (± the standard deviation over
seeds) of SHD, SHD-C, SID, TPR, FDR and the fit time, with each network's varsortability (its
implied variances; 0.5 after standardising, by construction), then a table of which method has
the lowest mean SHD and SHD-C in each (network, n, data) cell.

Methods: the registry's (:func:`colide_core.evaluation.baselines.run_method`), plus
``CoLiDE-NV-TOPO`` (CoLiDE-NV with ``solver="topo"``) and ``GES-maxP<k>``: causal-learn's GES
(:func:`colide_core.evaluation.baselines.ges_dag`, linear-Gaussian BIC) with at most ``k``
parents a node, called directly because the registry refuses GES above 30 nodes (the paper ran
GES with ``maxDegree=5``); ``NAME:key=value,...`` is a registry method with other parameters
(``CoLiDE-NV:threshold=0.1``).

Run: ``python -m benchmarks.bench_networks`` (the four networks, n = 1,000 and 5,000, 5 seeds,
all methods: hours on 2 cores) or ``--quick`` (n = 1,000, one seed, CoLiDE-EV/NV and
SortNRegress). ``--raw FILE`` appends every fit as a JSON line and skips the fits already
there (a run can be stopped and resumed, or split across processes); ``--from-raw FILE ...``
makes the tables from such files without fitting. Results and what they say: docs/networks.md.
``X`` is ``(n_samples, n_nodes)``.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from colide_core import evaluate
from colide_core.data.networks import NETWORKS, load_network, read_network
from colide_core.data.simulate import standardize
from colide_core.evaluation.baselines import ges_dag, run_method_safe

from ._common import append_jsonl, markdown_table, read_jsonl

ALL_METHODS = ("CoLiDE-EV", "CoLiDE-NV", "CoLiDE-NV-TOPO", "DAGMA-linear", "SortNRegress", "GES-maxP5")
QUICK_METHODS = ("CoLiDE-EV", "CoLiDE-NV", "SortNRegress")
KEYS = ("shd", "shd_cpdag", "sid", "tpr", "fdr", "time")
_GES = re.compile(r"GES-maxP(\d+)$")


def _fit(method, X):
    """``(result dict of run_method_safe, wall seconds)`` for one method on ``X``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        ges = _GES.match(method)
        if ges:
            try:
                out = {"W": ges_dag(X, maxP=int(ges.group(1))), "error": None}
            except Exception as exc:  # noqa: BLE001 - a failed baseline is a table cell, not a crash
                out = {"W": None, "error": str(exc) or type(exc).__name__}
        elif method == "CoLiDE-NV-TOPO":
            out = run_method_safe("CoLiDE-NV", X, solver="topo")
        else:  # "NAME" or "NAME:key=value,key=value" (numbers), e.g. "CoLiDE-NV:threshold=0.1"
            name, _, given = method.partition(":")
            params = {k: float(v) for k, v in (kv.split("=") for kv in given.split(",") if kv)}
            out = run_method_safe(name, X, **params)
        return out, time.perf_counter() - t


def _cell_key(r):
    return (r["network"], r["n"], r["seed"], r["scaling"], r["method"])


def run(networks, sizes, seeds, methods, raw=None, progress=None):
    """Fit every (network, n, seed, scaling, method); a list of per-fit dicts.

    Parameters
    ----------
    networks, sizes, seeds, methods : sequences
        Network names, sample sizes, seeds and method names.
    raw : path or None
        A JSON-lines file: the fits already there are read instead of run, and each new fit is
        appended as soon as it ends.
    progress : callable or None
        ``progress(line)`` after each fit.
    """
    done = {_cell_key(r): r for r in read_jsonl(raw)}
    fits = []
    for name in networks:
        for n in sizes:
            for seed in seeds:
                keys = [(name, n, seed, s, m) for s in ("raw", "standardised") for m in methods]
                if all(k in done for k in keys):
                    fits += [done[k] for k in keys]
                    continue
                data = load_network(name, n, random_state=seed)
                raw_X = data.X.to_numpy()
                for scaling, X in (("raw", raw_X), ("standardised", standardize(raw_X))):
                    for method in methods:
                        key = (name, n, seed, scaling, method)
                        if key in done:
                            fits.append(done[key])
                            continue
                        out, seconds = _fit(method, X)
                        r = dict(zip(("network", "n", "seed", "scaling", "method"), key))
                        if out.get("error"):
                            r["error"] = str(out["error"])[:80]
                        else:
                            m = evaluate(data.B_true, np.asarray(out["W"]))
                            r.update(shd=int(m["shd"]), shd_cpdag=int(m["shd_cpdag"]),
                                     sid=float(m.get("sid", np.nan)), tpr=float(m["tpr"]),
                                     fdr=float(m["fdr"]), time=seconds)
                        fits.append(r)
                        append_jsonl(raw, r)
                        if progress is not None:
                            progress(f"{name} n={n} seed={seed} {scaling} {method}: "
                                     + (r.get("error") or f"SHD {r['shd']} in {seconds:.1f} s"))
    return fits


def summarise(fits):
    """Mean and sd over seeds per (network, n, scaling, method), sorted by network, n, data and method."""
    groups = {}
    for r in fits:
        groups.setdefault((r["network"], r["n"], r["scaling"], r["method"]), []).append(r)
    rows = []
    for (name, n, scaling, method), cells in groups.items():
        ok = [c for c in cells if "error" not in c]
        row = {"network": name, "n": n, "scaling": scaling, "method": method, "seeds": len(ok),
               "runs": len(cells), "error": next((c["error"] for c in cells if "error" in c), ""),
               "varsortability": read_network(name).varsortability() if scaling == "raw" else 0.5}
        for key in KEYS:
            vals = np.array([c[key] for c in ok], dtype=float)
            row[key] = float(vals.mean()) if ok else float("nan")
            row[key + "_sd"] = float(vals.std(ddof=1)) if len(ok) > 1 else float("nan")
        rows.append(row)
    order = {m: i for i, m in enumerate(ALL_METHODS)}
    order.update({m: order.get(m.partition(":")[0], len(order)) + 0.5 for m in {r["method"] for r in rows}
                  if ":" in m})
    nets = list(NETWORKS)
    rows.sort(key=lambda r: (nets.index(r["network"]) if r["network"] in nets else len(nets), r["n"],
                             r["scaling"] != "raw", order.get(r["method"], len(order)), r["method"]))
    return rows


def _pm(row, key, fmt):
    sd = row[key + "_sd"]
    return format(row[key], fmt) + ("" if np.isnan(sd) else " ± " + format(sd, fmt))


def table(rows) -> str:
    """The summarised rows as one markdown table (mean ± sd over seeds)."""
    body = []
    for r in rows:
        if not r["seeds"]:
            body.append([r["network"], f"{r['n']:,}", r["scaling"], f"{r['varsortability']:.2f}", r["method"],
                         f"failed: {r['error']}", "", "", "", "", "", f"0 of {r['runs']}"])
            continue
        body.append([r["network"], f"{r['n']:,}", r["scaling"], f"{r['varsortability']:.2f}", r["method"],
                     _pm(r, "shd", ".1f"), _pm(r, "shd_cpdag", ".1f"), f"{r['sid']:.0f}", f"{r['tpr']:.2f}",
                     f"{r['fdr']:.2f}", f"{r['time']:.1f}",
                     str(r["seeds"]) if r["seeds"] == r["runs"] else f"{r['seeds']} of {r['runs']}"])
    return "\n".join(markdown_table(["network", "n", "data", "varsort.", "method", "SHD", "SHD-C", "SID", "TPR",
                                     "FDR", "time (s)", "seeds"], body))


def pivot(rows, key="shd") -> str:
    """One line per (network, n, data), one column per method: the mean of ``key`` over its seeds
    (the number of seeds in brackets where it is not the most any method of the line has)."""
    methods = sorted({r["method"] for r in rows},
                     key=lambda m: next(i for i, r in enumerate(rows) if r["method"] == m))
    lines = {}
    for r in rows:
        lines.setdefault((r["network"], r["n"], r["scaling"], r["varsortability"]), {})[r["method"]] = r
    body = []
    for (name, n, scaling, vs), by in lines.items():
        most = max(r["seeds"] for r in by.values())
        cells = []
        for m in methods:
            r = by.get(m)
            if r is None or not r["seeds"]:
                cells.append("–")
            else:
                cells.append(f"{r[key]:.1f}" + ("" if r["seeds"] == most else f" ({r['seeds']})"))
        body.append([name, f"{n:,}", scaling, f"{vs:.2f}"] + cells)
    return "\n".join(markdown_table(["network", "n", "data", "varsort."] + methods, body))


def winners(fits) -> str:
    """Per (network, n, data), on the seeds where every method of the cell ran: the lowest mean SHD
    and SHD-C, and the best CoLiDE's mean SHD minus the best other method's (negative: CoLiDE ahead)."""
    cells = {}
    for r in fits:
        if "error" not in r:
            cells.setdefault((r["network"], r["n"], r["scaling"]), {}).setdefault(r["method"], {})[r["seed"]] = r
    nets = list(NETWORKS)
    body = []
    for (name, n, scaling) in sorted(cells, key=lambda k: (nets.index(k[0]) if k[0] in nets else len(nets),
                                                           k[1], k[2] != "raw")):
        by_method = cells[(name, n, scaling)]
        seeds = sorted(set.intersection(*(set(v) for v in by_method.values())))
        if not seeds:
            continue
        mean = {m: {k: float(np.mean([v[s][k] for s in seeds])) for k in ("shd", "shd_cpdag")}
                for m, v in by_method.items()}
        best = min(mean, key=lambda m: mean[m]["shd"])
        best_c = min(mean, key=lambda m: mean[m]["shd_cpdag"])
        ours = [mean[m]["shd"] for m in mean if m.startswith("CoLiDE")]
        theirs = [mean[m]["shd"] for m in mean if not m.startswith("CoLiDE")]
        gap = f"{min(ours) - min(theirs):+.1f}" if ours and theirs else ""
        body.append([name, f"{n:,}", scaling, len(seeds), f"{best} ({mean[best]['shd']:.1f})",
                     f"{best_c} ({mean[best_c]['shd_cpdag']:.1f})", gap])
    return "\n".join(markdown_table(["network", "n", "data", "common seeds", "lowest SHD", "lowest SHD-C",
                                     "best CoLiDE − best other (SHD)"], body))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", default=",".join(NETWORKS), help="comma-separated names")
    parser.add_argument("--sizes", default="1000,5000", help="comma-separated n")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--methods", default=",".join(ALL_METHODS))
    parser.add_argument("--quick", action="store_true", help="n = 1,000, one seed, " + ", ".join(QUICK_METHODS))
    parser.add_argument("--raw", type=Path, default=None,
                        help="append every fit here (JSON lines) and skip the fits already in it")
    parser.add_argument("--from-raw", type=Path, nargs="+", default=None, metavar="JSONL",
                        help="no fitting: the tables of these --raw files, pooled")
    parser.add_argument("--verbose", action="store_true", help="a line on stderr after each fit")
    args = parser.parse_args(argv)
    if args.from_raw:
        fits = read_jsonl(*args.from_raw)
    else:
        sizes = [1000] if args.quick else [int(s) for s in args.sizes.split(",")]
        seeds = range(args.first_seed, args.first_seed + (1 if args.quick else args.seeds))
        methods = QUICK_METHODS if args.quick else tuple(args.methods.split(","))
        def say(line):
            print(line, file=sys.stderr, flush=True)
        fits = run(args.networks.split(","), sizes, seeds, methods, raw=args.raw,
                   progress=say if args.verbose else None)
    rows = summarise(fits)
    print(table(rows))
    print()
    print("SHD, mean over seeds (fewer seeds in brackets):")
    print()
    print(pivot(rows))
    print()
    print(winners(fits))


if __name__ == "__main__":
    main()
