"""Predicting interventions (issues 40 and 52): CoLiDE against the field's pipelines, and Sachs held out.

Tables (paste-ready markdown, printed and written to ``benchmarks/results/predict.md``, or
``predict_quick.md`` with ``--quick``):

(a) **Simulated linear SEMs against the field's pipelines** (issue 52): ER graphs with 2 edges per
    node, d = 10 and 20, 1,000 rows, ``--seeds`` graphs per row, four data settings:

    * ``strong NV``: weights +-U[0.5, 2], noise variances U[0.25, 4] (sd in [0.5, 2]), as
      ``bench_optimum``'s strong setting;
    * ``paper NV``: the paper's NV setting (weights +-U[0.25, 1], variances U[0.5, 10]);
    * ``strong NV, standardised``: the strong-weight data with every column scaled to unit variance;
    * ``paper EV``: the paper's EV setting (weights +-U[0.5, 2], unit variances), for the weights
      by variant.

    For every node t, ``do(X_t = mean + 1 sd)``; the error of the predicted shift of every other
    node j is measured in j's standard deviations and pooled over (t, j) and the graphs into an
    RMSE. The regression baseline ("seeing", ``associational_shift``) gives the first column; every
    other is its RMSE as a ratio to regression's, with a 95 % graph-bootstrap interval (the graphs
    resampled with replacement, 2,000 times):

    * CoLiDE (the data's variant: NV, or EV on EV data, the library's defaults), plug-in with the
      fit's weights and with the least-squares refit (``intervention_table``);
    * CoLiDE's DAG -> its CPDAG -> local IDA (``colide_core.evaluation.ida``, mean of the
      possible effects);
    * GES -> IDA and PC -> IDA (causal-learn: GES with the BIC score, PC with Fisher-z tests at
      alpha = 0.05, its default; ``ges_cpdag``, ``pc_cpdag``);
    * the true CPDAG -> IDA, a reference (what a method that learns the class exactly and has no
      preference inside it would reach).

    ``--n-boot`` > 0 adds the coverage of 90 % intervals of the plug-in (within-condition
    bootstrap refits, ``predict_intervention``'s) with each weighting.
(b) **Sachs, held out**: for each of the five conditions run on top of the CD3/CD28 stimulus
    (Akt inhibitor, G06976, psitectorigenin, U0126, LY294002), CoLiDE (NV and EV, the library's
    defaults, raw data) is fitted on the other eight conditions with their targets, and the held-out
    condition's mean shift of every other node (from CD3/CD28's means) is predicted from the
    observed shift of its target (``predict_intervention(..., shift={target: observed},
    reference="cd3cd28")``). Spearman's rho and RMSE (in CD3/CD28 standard deviations) over the
    ten other nodes, against regression on the target and "no change". The inhibitors act on
    activity, not on measured abundance, so no number is required here.

(c) **The page's recommendation** (issue 52): :func:`colide_core.evaluation.scale.scale_verdict`
    reads only the data and CoLiDE's graph; its recommendation (CoLiDE's plug-in with the page's
    default weights when the scales carry the result, else GES + IDA) is a column of (a), and (c)
    gives its ratio at each varsortability threshold of :data:`THRESHOLDS`, how the library's
    threshold was chosen.
(d) **GES's cost on Sachs** (``--tables g``): the seconds of one search, what the Predict page
    measures its GES + IDA job by.

Usage::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.bench_predict [--quick] [--seeds 20]
        [--n-boot 0] [--sizes 10,20] [--settings strong,paper,standardised,ev] [--jobs 1]
        [--tables abg] [--out PATH]
"""
from __future__ import annotations

import argparse
import platform
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr
from sklearn.base import clone

from benchmarks._common import markdown_table
from colide_core import CoLiDE, evaluate, load_sachs
from colide_core.data.simulate import simulate_dataset
from colide_core.evaluation._metrics import cpdag_from_dag
from colide_core.evaluation.ida import ges_cpdag, ida, pc_cpdag
from colide_core.evaluation.interventions import intervention_table, predict_intervention, refit_weights, weights_for
from colide_core.evaluation.scale import VARSORTABILITY_THRESHOLD, scale_verdict

HERE = Path(__file__).resolve().parent
HELD_OUT = {"cd3cd28+aktinhib": "Akt inhibitor", "cd3cd28+g0076": "G06976", "cd3cd28+psitect": "psitectorigenin",
            "cd3cd28+u0126": "U0126", "cd3cd28+ly": "LY294002"}
#: The data settings of table (a): (label, simulate_dataset spec, CoLiDE variant).
SETTINGS = {
    "strong": ("strong NV", {"variance": "nv", "w_range": (0.5, 2.0), "noise_var_range": (0.25, 4.0)}, "nv"),
    "paper": ("paper NV", {"variance": "nv"}, "nv"),
    "standardised": ("strong NV, standardised", {"variance": "nv", "w_range": (0.5, 2.0),
                                                 "noise_var_range": (0.25, 4.0), "standardize": True}, "nv"),
    "ev": ("paper EV", {"variance": "ev"}, "ev"),
}
#: Table (a)'s methods, in column order: key -> column title.
METHODS = {"fit": "CoLiDE, fit weights", "refit": "CoLiDE, refit weights", "colide_ida": "CoLiDE DAG -> CPDAG -> IDA",
           "ges_ida": "GES -> IDA", "pc_ida": "PC -> IDA", "true_ida": "true CPDAG -> IDA (reference)",
           "recommended": "page's recommendation"}
N_GRAPH_BOOT = 2000
#: Varsortability thresholds of the rule compared in table (c) (the library's is ``VARSORTABILITY_THRESHOLD``).
THRESHOLDS = (0.55, 0.6, 0.7, 0.8, 0.9, 0.95)


def _recommended(sse, verdict_vs, standardised, threshold):
    """The squared error of the page's recommendation: CoLiDE's plug-in (the page's default weights)
    when the rule says the scales carry it, else GES + IDA's."""
    carries = (not standardised) and not np.isnan(verdict_vs) and verdict_vs >= threshold
    return sse["page"] if carries else sse["ges_ida"]


def _total(W):
    return np.linalg.inv(np.eye(len(W)) - W)


def _ida_matrix(C, S):
    """``E[t, j]``: local IDA's mean possible effect of t on j (data units), every t."""
    return np.array([ida(C, cov=S, x=t).effect for t in range(len(C))])


def one_graph(setting, d, seed, n_boot=0):
    """Squared errors (summed over (t, j != t)) of every method on one simulated graph, and counts.

    Returns
    -------
    dict
        ``sse``: {method: float} (regression under ``"reg"``), ``count`` (the pooled pairs),
        ``shd`` (CoLiDE's SHD), ``cover``: {weights: (hits, count)} when ``n_boot``.
    """
    _, spec, variant = SETTINGS[setting]
    sim = simulate_dataset({"graph": "er", "degree": 2, "n_nodes": d, **spec}, random_state=seed)
    X = sim.X
    n = len(X)
    sd = X.std(axis=0, ddof=1)
    Xc = X - X.mean(axis=0)
    S = Xc.T @ Xc / n
    scale = sd[:, None] / sd[None, :]  # a unit effect of t on j, in j's sd per t's sd
    truth = _total(sim.W_true) * scale
    model = CoLiDE(variant=variant).fit(X)
    W = np.asarray(model.adjacency_, float)
    W_refit = refit_weights(W, X)
    pred = {"reg": (S / np.diag(S)[:, None]) * scale}
    for key, Wk in (("fit", W), ("refit", W_refit)):
        rows = []
        for t in range(d):  # the library's plug-in, as the page computes it
            rows.append(intervention_table(Wk, X, do={t: float(X[:, t].mean() + sd[t])}).table["shift_sd"].to_numpy())
        pred[key] = np.array(rows)
    pred["colide_ida"] = _ida_matrix(cpdag_from_dag(W != 0), S) * scale
    pred["ges_ida"] = _ida_matrix(ges_cpdag(X), S) * scale
    pred["pc_ida"] = _ida_matrix(pc_cpdag(X), S) * scale
    pred["true_ida"] = _ida_matrix(cpdag_from_dag(sim.B_true), S) * scale
    pred["page"] = pred[weights_for(variant)]  # the page's default weights for the variant
    off = ~np.eye(d, dtype=bool)
    verdict = scale_verdict(X, W)  # the rule, from the data and the learned graph only
    out = {"sse": {k: float(np.sum((p - truth)[off] ** 2)) for k, p in pred.items()}, "count": int(off.sum()),
           "shd": int(evaluate(sim.B_true, W)["shd"]), "cover": {}, "vs": verdict.varsortability,
           "standardised": verdict.standardised}
    out["sse"]["recommended"] = _recommended(out["sse"], verdict.varsortability, verdict.standardised,
                                             VARSORTABILITY_THRESHOLD)
    if n_boot:
        rng = np.random.default_rng(seed)
        boots = {"fit": [], "refit": []}
        for _ in range(n_boot):
            idx = rng.integers(0, n, n)
            Wb = np.asarray(clone(model).fit(X[idx]).adjacency_, float)
            boots["fit"].append(_total(Wb) * scale)
            boots["refit"].append(_total(refit_weights(Wb, X[idx])) * scale)
        for k, b in boots.items():
            lo, hi = np.quantile(np.asarray(b), [0.05, 0.95], axis=0)
            out["cover"][k] = (int(np.sum(((lo - 1e-12 <= truth) & (truth <= hi + 1e-12))[off])), int(off.sum()))
    return out


def _ratio_cell(sse, reg, rng):
    """``"0.43x [0.38, 0.49]"``: pooled RMSE ratio and its 95 % graph-bootstrap interval."""
    ratio = np.sqrt(sse.sum() / reg.sum())
    idx = rng.integers(0, len(sse), (N_GRAPH_BOOT, len(sse)))
    boot = np.sqrt(sse[idx].sum(axis=1) / reg[idx].sum(axis=1))
    lo, hi = np.quantile(boot, [0.025, 0.975])
    return f"{ratio:.2f}x [{lo:.2f}, {hi:.2f}]", ratio


def simulated(sizes, settings, seeds, n_boot=0, n_jobs=1):
    """Table (a), and table (c): the recommendation's ratio at each of :data:`THRESHOLDS`."""
    from joblib import Parallel, delayed

    rows, sweep = [], []
    for setting in settings:
        for d in sizes:
            runs = Parallel(n_jobs=n_jobs)(delayed(one_graph)(setting, d, seed, n_boot) for seed in range(seeds))
            print(f"  {setting} d={d}: {seeds} graphs done", file=sys.stderr, flush=True)
            reg = np.array([r["sse"]["reg"] for r in runs])
            count = sum(r["count"] for r in runs)
            rng = np.random.default_rng(0)
            label, _, variant = SETTINGS[setting]
            carried = sum(_recommended({"page": 0.0, "ges_ida": 1.0}, r["vs"], r["standardised"],
                                       VARSORTABILITY_THRESHOLD) == 0.0 for r in runs)
            row = {"data": label, "d": d, "graphs": seeds, "CoLiDE": f"{variant.upper()}",
                   "CoLiDE SHD": f"{np.mean([r['shd'] for r in runs]):.1f}",
                   "learned varsortability": f"{np.nanmedian([r['vs'] for r in runs]):.2f}",
                   "rule: scales carry": f"{carried}/{seeds}",
                   "regression RMSE (sd)": f"{np.sqrt(reg.sum() / count):.3f}"}
            ratios = {}
            for key, title in METHODS.items():
                row[title], ratios[key] = _ratio_cell(np.array([r["sse"][key] for r in runs]), reg, rng)
            learners = ("fit", "refit", "colide_ida", "ges_ida", "pc_ida")
            row["best learner"] = METHODS[min(learners, key=ratios.get)]
            if n_boot:
                for k in ("fit", "refit"):
                    hits = sum(r["cover"][k][0] for r in runs)
                    row[f"90 % coverage, {k} ({n_boot} refits)"] = f"{hits / count:.1%}"
            rows.append(row)
            cells = {"data": label, "d": d}
            for thr in THRESHOLDS:
                sse = np.array([_recommended(r["sse"], r["vs"], r["standardised"], thr) for r in runs])
                cells[f"threshold {thr:g}"] = f"{np.sqrt(sse.sum() / reg.sum()):.2f}x"
            sweep.append(cells)
    return pd.DataFrame(rows), pd.DataFrame(sweep)


def sachs_held_out():
    data = load_sachs(rows="all")
    X = pd.DataFrame(data.X, columns=data.table.columns[:data.X.shape[1]]) if not hasattr(data.X, "columns") \
        else data.X
    names = list(X.columns)
    labels = np.asarray(data.conditions, dtype=object)
    base = labels == "cd3cd28"
    mu0, sd0 = X[base].mean(), X[base].std(ddof=1)
    rows = []
    for held, title in HELD_OUT.items():
        (target,) = data.targets[held]
        keep = labels != held
        mu_h = X[labels == held].mean()
        observed = ((mu_h - mu0) / sd0).drop(target)
        for variant in ("nv", "ev"):
            model = CoLiDE(variant=variant).fit(X[keep], conditions=labels[keep],
                                                targets={k: v for k, v in data.targets.items() if k != held})
            pred = predict_intervention(model, X[keep], shift={target: float(mu_h[target] - mu0[target])},
                                        conditions=labels[keep], reference="cd3cd28").table
            doing = (pred["shift"] / sd0).drop(target)
            seeing = (pred["associational_shift"] / sd0).drop(target)
            rmse = lambda p: float(np.sqrt(np.mean((p - observed) ** 2)))  # noqa: E731
            rho = lambda p: spearmanr(p, observed).statistic if np.ptp(p) > 0 else float("nan")  # noqa: E731
            rows.append({"held out": title, "target": target, "target shift (sd)": f"{(mu_h - mu0)[target] / sd0[target]:+.2f}",
                         "fit": f"CoLiDE-{variant.upper()}",
                         "rho, doing": f"{rho(doing.to_numpy()):.2f}", "rho, seeing": f"{rho(seeing.to_numpy()):.2f}",
                         "RMSE doing": f"{rmse(doing):.2f}", "RMSE seeing": f"{rmse(seeing):.2f}",
                         "RMSE no change": f"{rmse(0 * observed):.2f}"})
        print(f"  Sachs {title} done", file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


def ges_timing(repeats=3):
    """Table (d): seconds of one GES search (``ges_ida_cpdag``, what the Predict page's job runs)
    on Sachs, 853 rows and the nine conditions' 7,466 rows (centred within conditions), raw and
    standardised, the median of ``repeats`` runs; then on simulated ER2 data of 10, 20 and 40 nodes
    (1,000 rows), one run each. causal-learn is imported before the clock starts."""
    import time

    import causallearn.search.ScoreBased.GES  # noqa: F401 - its import (seconds) is not the search's cost

    from colide_core.data.sortability import standardize
    from colide_core.evaluation.scale import ges_ida_cpdag

    rows = []
    for label, rec in (("Sachs, 853 rows", load_sachs(return_record=True)), ("Sachs, nine conditions, 7,466 rows",
                                                                               load_sachs(rows="all"))):
        X = np.asarray(rec.X, dtype=float)
        conditions = None if rec.conditions is None or len(set(rec.conditions)) == 1 else rec.conditions
        for kind, A in (("raw", X), ("standardised", standardize(X))):
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                ges_ida_cpdag(A, conditions=conditions)
                times.append(time.perf_counter() - t0)
            rows.append({"data": label, "scale": kind, "nodes": X.shape[1], "rows": len(X),
                         "GES seconds": f"{np.median(times):.2f} (median of {repeats})"})
    for d in (10, 20, 40):  # how the search grows with the nodes: one run each (40 nodes take about a minute)
        X = simulate_dataset({"graph": "er", "degree": 2, "n_nodes": d, "variance": "nv"}, random_state=0).X
        t0 = time.perf_counter()
        ges_ida_cpdag(X)
        rows.append({"data": "simulated ER2, paper NV", "scale": "raw", "nodes": d, "rows": len(X),
                     "GES seconds": f"{time.perf_counter() - t0:.2f} (one run)"})
    return pd.DataFrame(rows)


def _markdown(frame):
    """A DataFrame as a markdown table (:func:`benchmarks._common.markdown_table`), one string."""
    return "\n".join(markdown_table(frame.columns, frame.itertuples(index=False)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--n-boot", type=int, default=0)
    ap.add_argument("--sizes", default="10,20")
    ap.add_argument("--settings", default=",".join(SETTINGS))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--tables", default="abg")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if args.quick:
        args.seeds, args.n_boot = 3, 0
    out = args.out or HERE / "results" / ("predict_quick.md" if args.quick else "predict.md")
    warnings.simplefilter("ignore")
    parts = [f"# Predicting interventions ({platform.processor() or platform.machine()}, "
             f"python {platform.python_version()})\n"]
    if "a" in args.tables:
        sizes = [int(s) for s in args.sizes.split(",")]
        settings = [s.strip() for s in args.settings.split(",")]
        table, sweep = simulated(sizes, settings, args.seeds, args.n_boot, args.jobs)
        parts.append("## (a) Simulated ER2 SEMs, do(X_t = mean + 1 sd) for every t: RMSE ratio to regression "
                     "[95 % graph-bootstrap interval]\n\n" + _markdown(table) + "\n")
        parts.append(f"## (c) The page's recommendation at each varsortability threshold (the library's: "
                     f"{VARSORTABILITY_THRESHOLD:g}): RMSE ratio to regression\n\n" + _markdown(sweep) + "\n")
    if "b" in args.tables:
        parts.append("## (b) Sachs, each inhibitor condition held out (shifts in CD3/CD28 sd)\n\n"
                     + _markdown(sachs_held_out()) + "\n")
    if "g" in args.tables:
        parts.append("## (d) GES on Sachs: seconds of one search (the Predict page's GES + IDA job)\n\n"
                     + _markdown(ges_timing()) + "\n")
    text = "\n".join(parts)
    print(text)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)


if __name__ == "__main__":
    main()
