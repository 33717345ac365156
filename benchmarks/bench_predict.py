"""Predicting interventions (issue 40, point 1): simulated accuracy and coverage, and Sachs held out.

Tables (paste-ready markdown, printed and written to ``benchmarks/results/predict.md``, or
``predict_quick.md`` with ``--quick``):

(a) **Simulated linear SEMs**: ER graphs with 2 edges per node, d = 10 and 20, EV and NV data
    (``simulate_dataset``'s defaults: 1,000 rows, the paper's weight ranges), ``--seeds`` graphs
    each. For every node t, ``do(X_t = mean + 1 sd)``; the error of the predicted shift of every
    other node j is measured in units of j's standard deviation, and pooled over (t, j) into an
    RMSE. Columns: the regression baseline's RMSE ("seeing": ``associational_shift``), and the
    ratio to it of

    * the plug-in prediction with the fit's weights (``intervention_table``, ``weights="fit"``);
    * the plug-in with least-squares weights on the learned parents (``weights="refit"``);
    * the mean of the bootstrap's predictions (bagging), with the fit's weights;
    * a ceiling: the true CPDAG with local IDA (Maathuis, Kalisch & Buehlmann 2009) on the same
      rows, averaging the effect over the parent sets the CPDAG allows. A method that learns the
      Markov equivalence class exactly and has no preference inside it gets this; under NV
      Gaussian noise, the class is all the data identify.

    and the coverage of the 90 % percentile intervals of ``--n-boot`` refits on resampled rows
    (``predict_intervention``'s bootstrap), with each weighting. The issue's targets: RMSE at most
    0.15x the baseline's on EV and 0.35x on NV; coverage at least 80 %.
(b) **Sachs, held out**: for each of the five conditions run on top of the CD3/CD28 stimulus
    (Akt inhibitor, G06976, psitectorigenin, U0126, LY294002), CoLiDE (NV and EV, the library's
    defaults, raw data) is fitted on the other eight conditions with their targets, and the held-out
    condition's mean shift of every other node (from CD3/CD28's means) is predicted from the
    observed shift of its target (``predict_intervention(..., shift={target: observed},
    reference="cd3cd28")``). Spearman's rho and RMSE (in CD3/CD28 standard deviations) over the
    ten other nodes, against regression on the target and "no change". The inhibitors act on
    activity, not on measured abundance, so no number is required here.

The bootstrap of (a) is drawn once per dataset and reused for every t (``predict_intervention``
would draw it once per intervention); the resampling is the same procedure.

Usage::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.bench_predict [--quick] [--seeds 10]
        [--n-boot 20] [--sizes 10,20] [--tables ab] [--out PATH]
"""
from __future__ import annotations

import argparse
import itertools
import platform
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr
from sklearn.base import clone

from benchmarks._common import markdown_table
from colide_core import CoLiDE, load_sachs
from colide_core.data.simulate import simulate_dataset
from colide_core.evaluation._metrics import cpdag_from_dag
from colide_core.evaluation.interventions import intervention_table, predict_intervention, refit_weights

HERE = Path(__file__).resolve().parent
HELD_OUT = {"cd3cd28+aktinhib": "Akt inhibitor", "cd3cd28+g0076": "G06976", "cd3cd28+psitect": "psitectorigenin",
            "cd3cd28+u0126": "U0126", "cd3cd28+ly": "LY294002"}


def _total(W):
    return np.linalg.inv(np.eye(len(W)) - W)


def _ida_mean(C, S, t):
    """Local IDA: the mean effect of t on every node over the parent sets the CPDAG ``C`` allows."""
    d = len(C)
    pa = [i for i in range(d) if C[i, t] == 1 and C[t, i] == 0]
    und = [i for i in range(d) if C[i, t] == 2]
    effects = []
    for r in range(len(und) + 1):
        for extra in itertools.combinations(und, r):
            if all(C[a, b] or C[b, a] for a, b in itertools.combinations(extra, 2)):  # no new v-structure
                P = pa + list(extra)
                Z = [t] + P
                beta = np.linalg.solve(S[np.ix_(Z, Z)], S[Z])[0]
                beta[P], beta[t] = 0.0, 1.0
                effects.append(beta)
    return np.mean(effects, axis=0)


def simulated(sizes, seeds, n_boot):
    rows = []
    for d, variance in itertools.product(sizes, ("ev", "nv")):
        err = {k: [] for k in ("reg", "fit", "refit", "bag", "ceiling")}
        cover = {"fit": [], "refit": []}
        for seed in range(seeds):
            sim = simulate_dataset({"graph": "er", "degree": 2, "n_nodes": d, "variance": variance}, random_state=seed)
            X = sim.X
            n = len(X)
            sd = X.std(axis=0, ddof=1)
            T = _total(sim.W_true)
            Xc = X - X.mean(axis=0)
            S = Xc.T @ Xc / n
            model = CoLiDE(variant=variance).fit(X)
            W = np.asarray(model.adjacency_, float)
            W_refit = refit_weights(W, X)
            rng = np.random.default_rng(seed)
            boots = {"fit": [], "refit": []}
            for _ in range(n_boot):
                idx = rng.choice(n, n)
                Wb = np.asarray(clone(model).fit(X[idx]).adjacency_, float)
                boots["fit"].append(_total(Wb))
                boots["refit"].append(_total(refit_weights(Wb, X[idx])))
            boots = {k: np.asarray(v) for k, v in boots.items()}
            C_true = cpdag_from_dag(sim.B_true)
            for t in range(d):
                true = sd[t] * T[t] / sd
                do = {t: float(X[:, t].mean() + sd[t])}
                tab_fit = intervention_table(W, X, do=do).table
                tab_refit = intervention_table(W_refit, X, do=do).table
                pred = {"reg": tab_fit["associational_shift"].to_numpy() / sd,
                        "fit": tab_fit["shift_sd"].to_numpy(), "refit": tab_refit["shift_sd"].to_numpy(),
                        "bag": sd[t] * boots["fit"][:, t].mean(axis=0) / sd,
                        "ceiling": sd[t] * _ida_mean(C_true, S, t) / sd}
                for k, p in pred.items():
                    err[k].append(np.delete(p - true, t))
                for k in cover:
                    s = sd[t] * boots[k][:, t] / sd
                    lo, hi = np.quantile(s, 0.05, axis=0), np.quantile(s, 0.95, axis=0)
                    cover[k].append(np.delete((lo - 1e-12 <= true) & (true <= hi + 1e-12), t))
            print(f"  d={d} {variance} seed {seed} done", file=sys.stderr, flush=True)
        rmse = {k: float(np.sqrt(np.mean(np.concatenate(v) ** 2))) for k, v in err.items()}
        target = 0.15 if variance == "ev" else 0.35
        rows.append({"d": d, "data": variance.upper(), "graphs": seeds,
                     "regression RMSE (sd)": f"{rmse['reg']:.3f}",
                     "plug-in, fit weights": f"{rmse['fit'] / rmse['reg']:.3f}x",
                     "plug-in, refit weights": f"{rmse['refit'] / rmse['reg']:.3f}x",
                     "bagged (fit)": f"{rmse['bag'] / rmse['reg']:.3f}x",
                     "ceiling: true CPDAG + IDA": f"{rmse['ceiling'] / rmse['reg']:.3f}x",
                     "target": f"<= {target}x",
                     f"90 % coverage, fit ({n_boot} refits)": f"{np.mean(np.concatenate(cover['fit'])):.1%}",
                     "90 % coverage, refit": f"{np.mean(np.concatenate(cover['refit'])):.1%}"})
    return pd.DataFrame(rows)


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


def _markdown(frame):
    """A DataFrame as a markdown table (:func:`benchmarks._common.markdown_table`), one string."""
    return "\n".join(markdown_table(frame.columns, frame.itertuples(index=False)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--n-boot", type=int, default=20)
    ap.add_argument("--sizes", default="10,20")
    ap.add_argument("--tables", default="ab")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if args.quick:
        args.seeds, args.n_boot = 3, 10
    out = args.out or HERE / "results" / ("predict_quick.md" if args.quick else "predict.md")
    warnings.simplefilter("ignore")
    parts = [f"# Predicting interventions ({platform.processor() or platform.machine()}, "
             f"python {platform.python_version()})\n"]
    if "a" in args.tables:
        sizes = [int(s) for s in args.sizes.split(",")]
        parts.append("## (a) Simulated ER2 SEMs, do(X_t = mean + 1 sd) for every t\n\n"
                     + _markdown(simulated(sizes, args.seeds, args.n_boot)) + "\n")
    if "b" in args.tables:
        parts.append("## (b) Sachs, each inhibitor condition held out (shifts in CD3/CD28 sd)\n\n"
                     + _markdown(sachs_held_out()) + "\n")
    text = "\n".join(parts)
    print(text)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)


if __name__ == "__main__":
    main()
