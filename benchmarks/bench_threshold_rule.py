"""A threshold blind to the truth: CoLiDE's W thresholded at 0.3, at 0.1 and where the BIC says (issue 49).

For each problem CoLiDE is fitted once with its defaults (``threshold=0.3``, ``solver="auto"``) and
its raw weights ``W_`` are post-processed four ways (:func:`colide_core.threshold_to_dag`):

* ``0.3``: the paper's threshold, the product's default (the fit's own ``adjacency_``);
* ``0.1``: the threshold last session's networks benchmark found better, chosen after seeing the truths;
* ``bic``: :func:`colide_core.solver.path.choose_threshold`, the lowest BIC of the OLS refit over
  every cut of ``|W|`` (no truth used);
* ``ebic``: the same with the extended BIC, ``gamma = 0.5`` (Foygel & Drton 2010's usual value).

With ``--path``, CoLiDE-NV's λ path (:func:`colide_core.lambda_path`, 9 λ from 0.005 to 0.5 and
the thresholds 0.02, 0.04, ..., 0.5, 0.75, 1) adds ``path-bic``: the (λ, threshold) cell with the
lowest BIC (``LambdaPath.best_bic``).

Problems: (a) the bnlearn networks (:func:`colide_core.data.networks.load_network`, the
``networks`` extra), raw and standardised, fitted with CoLiDE-EV and CoLiDE-NV; (b) the paper's
simulated problems (:func:`colide_core.data.simulate.simulate_dataset`): ER2 / ER4, EV and NV
noise, d = 20 and 50, weights ``±[0.5, 2]`` (all true ``|w| >= 0.5``, where 0.3 is the paper's
choice), fitted with the matching variant; ``nv-paper`` is NV with the simulator's NV default
``±[0.25, 1]``.

Run: ``python -m benchmarks.bench_threshold_rule --raw FILE`` (JSON lines, one per fit with every
rule's scores; resumable: the fits already there are skipped); ``--from-raw FILE ...`` prints the
tables without fitting. Prints the mean ± sd over seeds of SHD, SHD-C, TPR, FDR and edges per
rule, and the paired differences (rule minus 0.3, mean ± sd over seeds). Results:
``benchmarks/results/threshold_rule.md``; what they say: docs/networks.md, "A threshold blind to
the truth". ``X`` is ``(n_samples, n_nodes)``.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from colide_core import CoLiDE, evaluate
from colide_core.graph._dag import threshold_to_dag
from colide_core._validation import data_covariance
from colide_core.solver.path import bic_score, choose_threshold, lambda_path

from ._common import append_jsonl, markdown_table, read_jsonl

RULES = ("0.3", "0.1", "bic", "ebic")
METRICS = ("shd", "shd_cpdag", "tpr", "fdr", "edges")
NETWORKS = ("ecoli70", "magic-niab", "magic-irri", "arth150")
PATH_THRESHOLDS = tuple(round(0.02 * k, 2) for k in range(1, 26)) + (0.75, 1.0)


def _scores(B_true, A):
    m = evaluate(B_true, A)
    return {"shd": int(m["shd"]), "shd_cpdag": float(m["shd_cpdag"]), "tpr": float(m["tpr"]),
            "fdr": float(m["fdr"]), "edges": int(np.count_nonzero(A))}


def plain_fit(X, variant):
    """CoLiDE fitted with its defaults (warnings silenced), and the seconds it took: the fit every
    rule of this benchmark and of ``bench_resampling_rule`` post-processes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        model = CoLiDE(variant).fit(X)
        return model, time.perf_counter() - t


def fit_rules(X, B_true, variant, path=False):
    """One CoLiDE fit with the defaults, post-processed by every rule.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_nodes)
    B_true : ndarray of shape (n_nodes, n_nodes)
        The true DAG, ``B_true[i, j] != 0`` meaning i -> j.
    variant : {"ev", "nv"}
    path : bool
        Also the λ path's lowest-BIC cell (``path-bic``).

    Returns
    -------
    dict
        ``rule -> {shd, shd_cpdag, tpr, fdr, edges, threshold, bic}`` (``bic``: the graph's
        :func:`bic_score`), ``bic_true`` (the true graph's, for the diagnosis only) and the seconds
        of the fit and of each choice.
    """
    model, fit_s = plain_fit(X, variant)
    out = {"fit_s": fit_s}
    W = model.W_
    cov, n, _ = data_covariance(X)
    out["bic_true"] = bic_score(cov, n, B_true)  # the true graph's BIC, for the diagnosis (never used to choose)
    out["0.3"] = {**_scores(B_true, model.adjacency_), "threshold": 0.3, "bic": bic_score(cov, n, model.adjacency_)}
    A = threshold_to_dag(W, 0.1)
    out["0.1"] = {**_scores(B_true, A), "threshold": 0.1, "bic": bic_score(cov, n, A)}
    for rule, gamma in (("bic", 0.0), ("ebic", 0.5)):
        t = time.perf_counter()
        thr, table = choose_threshold(X, W, gamma=gamma)
        out[rule] = {**_scores(B_true, threshold_to_dag(W, thr)), "threshold": thr,
                     "bic": float(table.loc[table["chosen"], "bic"].iloc[0]), "seconds": time.perf_counter() - t}
    if path:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            lp = lambda_path(X, thresholds=PATH_THRESHOLDS, variant=variant)
            i, j = lp.best_bic()
            out["path-bic"] = {**_scores(B_true, lp.graph(i, j)), "threshold": float(lp.thresholds[j]),
                               "bic": float(lp.bic[i, j]),
                               "lambda1": float(lp.lambdas[i]), "seconds": time.perf_counter() - t}
    return out


def problems(networks, network_seeds, synthetic_seeds, sizes=(20, 50), n=1000, network_n=(1000,)):
    """Yield ``(key dict, loader)``; ``loader()`` gives ``(X, B_true)``. Networks first (at each of
    ``network_n`` rows), then the simulated (``sizes`` nodes, ``n`` rows)."""
    from colide_core.data.networks import load_network
    from colide_core.data.simulate import simulate_dataset, standardize

    for name in networks:
        for rows in network_n:
            for seed in network_seeds:
                for scaling in ("raw", "standardised"):
                    for variant in ("nv", "ev"):
                        def load(name=name, rows=rows, seed=seed, scaling=scaling):
                            data = load_network(name, rows, random_state=seed)
                            X = data.X.to_numpy()
                            return (X if scaling == "raw" else standardize(X)), np.asarray(data.B_true)
                        yield {"set": "network", "problem": name, "scaling": scaling, "variant": variant,
                               "seed": seed, "n": rows}, load
    for noise, w_range in (("ev", (0.5, 2.0)), ("nv", (0.5, 2.0)), ("nv-paper", None)):
        for degree in (2, 4):
            for d in sizes:
                for seed in synthetic_seeds:
                    def load(noise=noise, w_range=w_range, degree=degree, d=d, seed=seed):
                        data = simulate_dataset(graph="er", degree=degree, n_nodes=d, n_samples=n,
                                                variance=noise[:2], w_range=w_range, random_state=seed)
                        return np.asarray(data.X), np.asarray(data.B_true)
                    yield {"set": "simulated", "problem": f"ER{degree} {noise.upper()} d={d}", "scaling": "raw",
                           "variant": noise[:2], "seed": seed, "n": n}, load


def _key(r):
    return (r["set"], r["problem"], r["scaling"], r["variant"], r["seed"], r["n"])


def run(items, raw=None, path=False, progress=None):
    """Fit every problem not already in ``raw`` (JSON lines, appended as each fit ends); all records."""
    done = {_key(r): r for r in read_jsonl(raw)}
    out = []
    for key, load in items:
        k = _key(key)
        if k in done and (not path or "path-bic" in done[k] or key["variant"] != "nv"):
            out.append(done[k])
            continue
        X, B = load()
        r = {**key, **fit_rules(X, B, key["variant"], path=path and key["variant"] == "nv")}
        out.append(r)
        append_jsonl(raw, r)
        if progress is not None:
            progress(" ".join(str(v) for v in key.values()) + ": SHD "
                     + ", ".join(f"{rule} {r[rule]['shd']}" for rule in RULES + ("path-bic",) if rule in r)
                     + f" (fit {r['fit_s']:.1f} s)")
    return out


def _pm(vals, fmt):
    vals = np.asarray(vals, dtype=float)
    sd = format(vals.std(ddof=1), fmt.lstrip("+")) if vals.size > 1 else ""
    return format(vals.mean(), fmt) + (f" ± {sd}" if sd else "")


def _label(s, problem, n):
    return f"{problem} n={n:,}" if s == "network" else problem


def _groups(records):
    groups = {}
    for r in records:
        groups.setdefault((r["set"], r["problem"], r["scaling"], r["variant"], r["n"]), []).append(r)
    return groups


def _rules(records):
    return [rule for rule in RULES + ("path-bic",) if any(rule in r for r in records)]


def table(records, metric) -> str:
    """One line per (problem, data, variant), one column per rule: the mean ± sd of ``metric`` over seeds."""
    rules = _rules(records)
    fmt = ".1f" if metric in ("shd", "shd_cpdag", "edges") else ".2f"
    body = []
    for (s, problem, scaling, variant, n), rs in _groups(records).items():
        cells = []
        for rule in rules:
            have = [r[rule][metric] for r in rs if rule in r]
            cells.append(_pm(have, fmt) + ("" if len(have) == len(rs) else f" ({len(have)})") if have else "–")
        body.append([_label(s, problem, n), scaling, f"CoLiDE-{variant.upper()}", len(rs)] + cells)
    return "\n".join(markdown_table(["problem", "data", "method", "seeds"] + rules, body))


def paired(records, metric="shd") -> str:
    """Per (problem, data, variant): each rule's ``metric`` minus the 0.3 rule's, mean ± sd over seeds
    (negative SHD: the rule is better), and the chosen threshold's mean for the BIC rules."""
    rules = [r for r in _rules(records) if r != "0.3"]
    body = []
    for (s, problem, scaling, variant, n), rs in _groups(records).items():
        cells = []
        for rule in rules:
            diffs = [r[rule][metric] - r["0.3"][metric] for r in rs if rule in r]
            cells.append(_pm(diffs, "+.1f" if metric in ("shd", "shd_cpdag", "edges") else "+.2f")
                         if diffs else "–")
        thr = [f"{np.mean([r[rule]['threshold'] for r in rs if rule in r]):.3f}" for rule in ("bic", "ebic")]
        body.append([_label(s, problem, n), scaling, f"CoLiDE-{variant.upper()}"] + cells + thr)
    return "\n".join(markdown_table(["problem", "data", "method"] + [f"{r} − 0.3" for r in rules]
                                    + ["bic thr.", "ebic thr."], body))


def diagnosis(records) -> str:
    """Per (problem, data, variant): each rule's graph's BIC minus the true graph's (mean over seeds; negative:
    the rule's graph explains the data better than the truth), and in how many fits the BIC rule's is below it."""
    rules = [r for r in _rules(records)]
    body = []
    for (s, problem, scaling, variant, n), rs in _groups(records).items():
        rs = [r for r in rs if "bic_true" in r]
        if not rs:
            continue
        cells = [f"{np.mean([r[rule]['bic'] - r['bic_true'] for r in rs if rule in r]):+,.0f}"
                 if any(rule in r for r in rs) else "–" for rule in rules]
        below = sum(r["bic"]["bic"] <= r["bic_true"] for r in rs)
        body.append([_label(s, problem, n), scaling, f"CoLiDE-{variant.upper()}"] + cells + [f"{below} of {len(rs)}"])
    return "\n".join(markdown_table(["problem", "data", "method"] + [f"{r}: BIC − true's" for r in rules]
                                    + ["bic rule's graph ≤ true's"], body))


def overall(records) -> str:
    """Per set (networks at each n, simulated): how many problem lines each rule beats, ties and loses to 0.3 on mean SHD,
    and the mean paired SHD difference over every fit."""
    rules = [r for r in _rules(records) if r != "0.3"]
    body = []
    sets = sorted({(k[0], k[4]) for k in _groups(records)})
    for s, n in sets:
        groups = {k: v for k, v in _groups(records).items() if (k[0], k[4]) == (s, n)}
        for rule in rules:
            wins = ties = losses = 0
            diffs = []
            for rs in groups.values():
                d = [r[rule]["shd"] - r["0.3"]["shd"] for r in rs if rule in r]
                if not d:
                    continue
                diffs += d
                m = float(np.mean(d))
                wins, ties, losses = wins + (m < 0), ties + (m == 0), losses + (m > 0)
            if diffs:
                body.append([f"{s}, n = {n:,}", rule, f"{wins} / {ties} / {losses}", _pm(diffs, "+.1f"),
                             f"{min(diffs):+d} .. {max(diffs):+d}"])
    return "\n".join(markdown_table(["set", "rule", "lines better / equal / worse than 0.3 (mean SHD)",
                                     "SHD − 0.3's, every fit", "range"], body))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", default=",".join(NETWORKS), help="comma-separated, or empty for none")
    parser.add_argument("--network-seeds", type=int, default=3)
    parser.add_argument("--network-n", default="1000", help="comma-separated rows for the networks")
    parser.add_argument("--synthetic-seeds", type=int, default=3, help="0 for none")
    parser.add_argument("--path", action="store_true", help="also the λ path's lowest-BIC cell (CoLiDE-NV)")
    parser.add_argument("--raw", type=Path, default=None, help="append each fit here; skip those already in it")
    parser.add_argument("--from-raw", type=Path, nargs="+", default=None, metavar="JSONL",
                        help="no fitting: the tables of these files, pooled")
    parser.add_argument("--verbose", action="store_true", help="a line on stderr after each fit")
    args = parser.parse_args(argv)
    if args.from_raw:
        records = read_jsonl(*args.from_raw)
        by = {}
        for r in records:  # a later line (e.g. re-run with --path) replaces an earlier one
            by[_key(r)] = r
        records = list(by.values())
    else:
        nets = [x for x in args.networks.split(",") if x]
        items = problems(nets, range(args.network_seeds), range(args.synthetic_seeds),
                         network_n=[int(v) for v in args.network_n.split(",")])

        def say(line):
            print(line, file=sys.stderr, flush=True)
        records = run(items, raw=args.raw, path=args.path, progress=say if args.verbose else None)
    for metric, title in (("shd", "SHD"), ("shd_cpdag", "SHD-C"), ("tpr", "TPR"), ("fdr", "FDR"),
                          ("edges", "edges")):
        print(f"{title}, mean ± sd over seeds, by rule:\n")
        print(table(records, metric))
        print()
    for metric, title in (("shd", "SHD"), ("shd_cpdag", "SHD-C")):
        print(f"Paired {title} difference to the 0.3 threshold (same fit), mean ± sd over seeds; mean chosen "
              "thresholds:\n")
        print(paired(records, metric))
        print()
    print(overall(records))
    print()
    print("The BIC of each rule's graph minus the true graph's (mean over seeds):\n")
    print(diagnosis(records))


if __name__ == "__main__":
    main()
