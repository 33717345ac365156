"""Why can an experiment raise the SHD? (issue 52, "Experiments")

``benchmarks/bench_planning.py`` fits CoLiDE-NV on 1,000 observational rows of the paper's NV
setting (ER, edge probability 0.35, weights +-U[0.25, 1], noise variances U[0.5, 10]), then for
every target t refits on those rows plus 500 rows of do(X_t) with the target known. About a third
of those refits end with a higher SHD than the fit before. This benchmark takes the same graphs
(seeds ``--first-seed`` on), the same fit before and the same experiments, and refits each
(graph, t) in several ways, all paired:

* ``exp``: the experiment, a cold refit (bench_planning's protocol);
* ``exp_warm``: the experiment, the refit warm-started from the fit before (``W_init``: what
  :func:`colide_core.evaluation.experiment.run_experiment`, the Predict page's "Run it", does);
* ``exp_lam``: the experiment, lambda scaled as ``lambda sqrt(n0 / n)`` for the refit (the score's
  data term is a mean over rows, so a fixed lambda weighs the same at any n);
* ``exp_eq``: the experiment with each condition weighted equally (its 500 rows counted twice, so
  both conditions carry 1,000 rows' weight in every non-target equation);
* ``obs``: no experiment: 500 more *observational* rows of the same SEM (fresh for every t), a
  cold refit; ``obs_lam`` the same with the scaled lambda;
* ``lam_only``: no new rows, the fit on the same 1,000 rows with the scaled lambda (one fit a graph,
  repeated in every t's row): how much of a scaled lambda's effect is the smaller lambda alone.

For every refit: the SHD change against the true DAG, split into reversed, extra and missing
edges, and the CoLiDE objective (:func:`colide_core.solver._auto.dag_objective`: the NV score with
sigma at its optimum, lambda |W|_1, the targets' masked likelihood) of the refit's W and of the fit
before's W on the refit's own data. A refit that raises the SHD with an objective *above* the fit
before's is an optimizer failure (the point before was better on the new data's own score); one
with a lower objective is the score preferring the worse graph.

Written to ``benchmarks/results/experiments_<solver>.jsonl`` (one line per graph; a rerun skips
the seeds already there) and the markdown tables to ``experiments_<solver>.md``. ``--truth`` adds
the true graph's best objective on every refit's data (``order_solve`` with the true DAG as edge
mask, no fit but one per graph): a refit below it means the score itself prefers a wrong graph.
``--local`` measures instead where the cold refit's SHD change lies (the node pairs at t, the
others) and the opt-in local rule (:func:`colide_core.evaluation.planning.local_update`), to
``experiments_local_<solver>.*``. Findings: ``docs/planning.md``, "Why an experiment can raise
the SHD".

Usage::

    OPENBLAS_NUM_THREADS=1 nice -n 19 .venv/bin/python -m benchmarks.bench_experiments [--graphs 30]
        [--sizes 10,20] [--solver auto] [--first-seed 1000] [--jobs 1] [--table-only] [--truth] [--local]
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import warnings
from pathlib import Path

import numpy as np

from benchmarks._common import markdown_table
from benchmarks.bench_planning import N_EXPERIMENT, N_OBS, _spec
from colide_core import CoLiDE, defaults
from colide_core.data.conditions import ConditionStats
from colide_core.data.simulate import simulate_dataset, simulate_linear_sem
from colide_core.solver._auto import dag_objective
from colide_core.solver._topo import order_solve

HERE = Path(__file__).resolve().parent
VARIANTS = {
    "exp": "experiment, cold refit (bench_planning)",
    "exp_warm": "experiment, warm-started from the fit before",
    "exp_lam": "experiment, lambda sqrt(n0/n)",
    "exp_eq": "experiment, conditions weighted equally",
    "obs": "500 more observational rows, cold refit",
    "obs_lam": "500 more observational rows, lambda sqrt(n0/n)",
    "lam_only": "no new rows, lambda sqrt(n0/n) (the same 1,000 rows)",
}
N_GRAPH_BOOT = 2000


def edge_errors(B, A):
    """``(reversed, extra, missing)`` of the estimate ``A`` against the true DAG ``B`` (their sum is the SHD)."""
    B, A = np.asarray(B) != 0, np.asarray(A) != 0
    rev = int(np.sum(A & B.T & ~B))
    extra = int(np.sum(A & ~B & ~B.T))
    missing = int(np.sum(B & ~A & ~A.T))
    return rev, extra, missing


def _fit(solver, lam, X, conditions=None, targets=None, W_init=None):
    model = CoLiDE("nv", solver=solver, lambda1=lam)
    kwargs = {} if conditions is None else {"conditions": conditions, "targets": targets}
    if W_init is not None:
        kwargs["W_init"] = W_init
    return model.fit(X, **kwargs)


def _cov(X, conditions, targets):
    """The covariance the solvers take: ``X.T X / n`` centred, or the per-node form with targets."""
    if conditions is None:
        Xc = X - X.mean(axis=0)
        return Xc.T @ Xc / len(X)
    node = ConditionStats.from_data(X, conditions, targets).node_covariances()
    return np.array(node.covs[0]) if node.trivial else node


def _objective(X, conditions, targets, W, lam):
    """CoLiDE-NV's objective of ``W`` on the data (sigma at its optimum, lambda |W|_1, masked targets)."""
    return float(dag_objective(W, _cov(X, conditions, targets), variant="nv", lambda1=lam))


def _true_graph_objective(X, conditions, targets, B, lam):
    """The lowest objective of any weights on the true graph ``B`` (its support, exactly: order_solve)."""
    B = np.asarray(B) != 0
    order, left = [], set(range(len(B)))
    while left:  # a topological order of the true DAG
        j = min(k for k in left if not any(B[i, k] for i in left))
        order.append(j)
        left.remove(j)
    cov = _cov(X, conditions, targets)
    fit = order_solve(cov, order, variant="nv", lambda1=lam, edge_mask=B)
    return float(dag_objective(fit.W, cov, variant="nv", lambda1=lam))


def _datasets(spec, sim, seed, t, lam0, lam_n):
    """Every variant's data for target t: key -> (X, conditions, targets, lambda, warm start?)."""
    run = simulate_dataset(spec, seed, interventions={"targets": [[t]], "n_per_condition": N_EXPERIMENT})
    Xe, ce, te = run.X, np.asarray(run.conditions), run.targets
    iv = ce != ce[0]
    Xq = np.vstack([Xe, Xe[iv]])  # every condition 1,000 rows' weight: the interventional rows twice
    cq = np.concatenate([ce, ce[iv]])
    extra = simulate_linear_sem(sim.W_true, N_EXPERIMENT, noise_var=sim.noise_std ** 2,
                                random_state=seed * 1000 + t + 7_000_000)[0]
    Xo = np.vstack([sim.X, extra])
    return {"exp": (Xe, ce, te, lam0, False), "exp_warm": (Xe, ce, te, lam0, True),
            "exp_lam": (Xe, ce, te, lam_n, False), "exp_eq": (Xq, cq, te, lam0, False),
            "obs": (Xo, None, None, lam0, False), "obs_lam": (Xo, None, None, lam_n, False)}


def _lambdas():
    lam0 = defaults.LAMBDA1
    return lam0, lam0 * np.sqrt(N_OBS / (N_OBS + N_EXPERIMENT))


def one_graph(d, seed, solver):
    """Every variant's refit for every target of one graph: edge errors and objectives."""
    spec = _spec(d)
    sim = simulate_dataset(spec, seed)
    lam0, lam_n = _lambdas()
    before = _fit(solver, lam0, sim.X)
    e0 = edge_errors(sim.B_true, before.adjacency_)
    lam_only = _fit(solver, lam_n, sim.X)
    lam_only = {"err": edge_errors(sim.B_true, lam_only.adjacency_),
                "f_refit": _objective(sim.X, None, None, lam_only.W_, lam_n),
                "f_before": _objective(sim.X, None, None, before.W_, lam_n)}
    rows = []
    for t in range(d):
        row = {"t": t, "lam_only": lam_only}
        for key, (X, c, tg, lam, warm) in _datasets(spec, sim, seed, t, lam0, lam_n).items():
            m = _fit(solver, lam, X, c, tg, before.W_ if warm else None)
            err = edge_errors(sim.B_true, m.adjacency_)
            row[key] = {"err": err, "f_refit": _objective(X, c, tg, m.W_, lam),
                        "f_before": _objective(X, c, tg, before.W_, lam)}
        rows.append(row)
    return {"d": d, "seed": seed, "solver": solver, "before": e0, "edges": int(np.sum(sim.B_true != 0)), "t": rows}


def truth_objectives(d, seed, solver):
    """The lowest objective of the true graph (any weights on its edges: :func:`order_solve` with the true
    DAG as the edge mask) on every variant's data: {key: [one per t]},
    ``"before"``: on the 1,000 observational rows at the default lambda, and ``"before_fit"``: the fit
    before's objective there (one fit). Below a fit's objective
    means the score at this n and lambda prefers the truth; above, it prefers a wrong graph."""
    spec = _spec(d)
    sim = simulate_dataset(spec, seed)
    lam0, lam_n = _lambdas()
    out = {"before": _true_graph_objective(sim.X, None, None, sim.B_true, lam0),
           "before_fit": _objective(sim.X, None, None, _fit(solver, lam0, sim.X).W_, lam0),
           "lam_only": [_true_graph_objective(sim.X, None, None, sim.B_true, lam_n)] * d}
    for t in range(d):
        for key, (X, c, tg, lam, _) in _datasets(spec, sim, seed, t, lam0, lam_n).items():
            out.setdefault(key, []).append(_true_graph_objective(X, c, tg, sim.B_true, lam))
    return out


def local_split(d, seed, solver):
    """Where the experiment's SHD change lies: in the pairs at t or elsewhere (the cold refit, ``exp``).

    Returns, for every t, the SHD change counted over the node pairs with t as an end and over the
    other pairs, and the SHD change of the *local* rule
    (:func:`colide_core.evaluation.planning.local_update`: the refit's pairs at t, the fit before's
    elsewhere, the refit when that merge has a cycle) with whether the merge was a DAG."""
    from colide_core.evaluation.planning import local_update

    spec = _spec(d)
    sim = simulate_dataset(spec, seed)
    lam0, lam_n = _lambdas()
    A0 = _fit(solver, lam0, sim.X).adjacency_ != 0
    B = np.asarray(sim.B_true) != 0
    rows = []
    for t in range(d):
        X, c, tg, lam, _ = _datasets(spec, sim, seed, t, lam0, lam_n)["exp"]
        A1 = _fit(solver, lam, X, c, tg).adjacency_ != 0
        at = np.zeros((d, d), dtype=bool)
        at[t, :] = at[:, t] = True
        local, merged = local_update(A0, A1, [t])
        local = local != 0

        def shd_on(A, mask):
            wrong = (A != B) | (A.T != B.T)  # a pair is wrong when its (i, j), (j, i) entries differ from B's
            return int(np.sum(np.triu(wrong & mask & mask.T, 1)))

        rows.append({"t": t, "at_t": shd_on(A1, at) - shd_on(A0, at), "elsewhere": shd_on(A1, ~at) - shd_on(A0, ~at),
                     "local": sum(edge_errors(B, local)) - sum(edge_errors(B, A0)), "local_dag": bool(merged)})
    return {"d": d, "seed": seed, "t": rows}


def _boot(per_graph, rng):
    """Mean over graphs and its 95 % graph-bootstrap interval."""
    v = np.asarray(per_graph, dtype=float)
    idx = rng.integers(0, len(v), size=(N_GRAPH_BOOT, len(v)))
    m = v[idx].mean(axis=1)
    return v.mean(), np.percentile(m, 2.5), np.percentile(m, 97.5)


def _fmt(stat, pct=False, signed=False):
    m, lo, hi = stat
    if pct:
        return f"{100 * m:.0f} % [{100 * lo:.0f}, {100 * hi:.0f}]"
    f = "+.2f" if signed else ".2f"
    return f"{m:{f}} [{lo:{f}}, {hi:{f}}]"


def table(results, truth=None):
    """The markdown tables of the results of one solver (``truth``: {(d, seed): truth_objectives(d, seed)})."""
    rng = np.random.default_rng(0)
    out = []
    main, split, kinds = [], [], []
    for d in sorted({r["d"] for r in results}):
        rs = [r for r in results if r["d"] == d]
        shd0 = np.mean([sum(r["before"]) for r in rs])
        base = None
        for key, title in VARIANTS.items():
            # per graph: share of its refits that raise the SHD, mean change, and the splits
            raise_g, delta_g, fail_g, score_g, drop_g, below_g, below_up = [], [], [], [], [], [], []
            rev_g, ext_g, mis_g = [], [], []
            for r in rs:
                s0 = sum(r["before"])
                deltas = np.array([sum(x[key]["err"]) - s0 for x in r["t"]])
                worse_f = np.array([x[key]["f_refit"] > x[key]["f_before"] + 1e-9 for x in r["t"]])
                up = deltas > 0
                raise_g.append(up.mean())
                delta_g.append(deltas.mean())
                fail_g.append((up & worse_f).mean())
                score_g.append((up & ~worse_f).mean())
                drop_g.append((deltas < 0).mean())
                if truth is not None:  # below the true graph's best: the score prefers a wrong graph
                    ft = np.asarray(truth[(r["d"], r["seed"])][key])
                    below = np.array([x[key]["f_refit"] for x in r["t"]]) < ft
                    below_g.append(below.mean())
                    below_up.append((below & up).mean())
                comp = np.array([np.subtract(x[key]["err"], r["before"]) for x in r["t"]])
                rev_g.append(comp[:, 0].mean())
                ext_g.append(comp[:, 1].mean())
                mis_g.append(comp[:, 2].mean())
            raised = [np.mean([sum(x[key]["err"]) - sum(r["before"]) for x in r["t"]
                               if sum(x[key]["err"]) > sum(r["before"])] or [np.nan]) for r in rs]
            by = np.nanmean(raised)
            if key == "exp":
                base = np.array(delta_g)
                paired = "–"
            else:
                paired = _fmt(_boot(np.array(delta_g) - base, rng), signed=True)
            main.append([d, len(rs), f"{shd0:.1f}", title, _fmt(_boot(raise_g, rng), pct=True),
                         f"{np.mean(drop_g):.0%}", f"{by:+.1f}", _fmt(_boot(delta_g, rng), signed=True), paired])
            split.append([d, title, f"{np.mean(raise_g):.0%}", _fmt(_boot(fail_g, rng), pct=True),
                          _fmt(_boot(score_g, rng), pct=True)]
                         + ([_fmt(_boot(below_up, rng), pct=True), _fmt(_boot(below_g, rng), pct=True)]
                            if truth is not None else []))
            kinds.append([d, title, f"{np.mean(rev_g):+.2f}", f"{np.mean(ext_g):+.2f}", f"{np.mean(mis_g):+.2f}",
                          f"{np.mean(delta_g):+.2f}"])
    out.append("### Refits that raise the SHD (per graph, mean over its d refits; 95 % graph-bootstrap intervals)\n")
    out += markdown_table(["d", "graphs", "SHD before", "refit", "raise the SHD", "lower it", "mean rise when raised",
                           "SHD change", "change vs cold experiment (paired)"], main)
    out.append("\n### Raises split by the objective: refit's objective above the fit before's on the refit's "
               "data (optimizer failure) or not (the score prefers the worse graph)\n")
    out += markdown_table(["d", "refit", "raise the SHD", "objective above before's (failure)",
                           "objective below before's (score)"]
                          + (["raise, objective below the true graph's", "all refits: objective below the true graph's"]
                             if truth is not None else []), split)
    if truth is not None:
        tr = [(r["d"], truth[(r["d"], r["seed"])]) for r in results]
        below0 = [f"d = {d}: {np.mean([x['before'] > x['before_fit'] for dd, x in tr if dd == d]):.0%}"
                  for d in sorted({r["d"] for r in results})]
        out.append("\nThe fit before's objective below the true graph's on the 1,000 observational rows (lambda "
                   f"{defaults.LAMBDA1:g}): " + ", ".join(below0) + " of the graphs.")
    out.append("\n### Where the SHD change is: mean change in reversed, extra and missing edges per refit\n")
    out += markdown_table(["d", "refit", "reversed", "extra", "missing", "SHD"], kinds)
    return "\n".join(out)


def local_table(results):
    """Markdown: the cold refit's SHD change at t and elsewhere, and the local rule's."""
    rng = np.random.default_rng(1)
    rows = []
    for d in sorted({r["d"] for r in results}):
        rs = [r for r in results if r["d"] == d]
        for r in rs:  # the library's rule: the refit itself where the merge has a cycle (older records: the raw merge)
            for x in r["t"]:
                x["rule"] = x["local"] if x["local_dag"] else x["at_t"] + x["elsewhere"]
        get = {k: [np.mean([x[k] for x in r["t"]]) for r in rs] for k in ("at_t", "elsewhere", "rule")}
        up = {k: [np.mean([x[k] > 0 for x in r["t"]]) for r in rs] for k in ("at_t", "elsewhere", "rule")}
        full_up = [np.mean([x["at_t"] + x["elsewhere"] > 0 for x in r["t"]]) for r in rs]
        full = [a + b for a, b in zip(get["at_t"], get["elsewhere"])]
        dag = np.mean([x["local_dag"] for r in rs for x in r["t"]])
        rows.append([d, len(rs), _fmt(_boot(full, rng), signed=True), _fmt(_boot(full_up, rng), pct=True),
                     _fmt(_boot(get["at_t"], rng), signed=True), _fmt(_boot(up["at_t"], rng), pct=True),
                     _fmt(_boot(get["elsewhere"], rng), signed=True), _fmt(_boot(up["elsewhere"], rng), pct=True),
                     _fmt(_boot(get["rule"], rng), signed=True), _fmt(_boot(up["rule"], rng), pct=True),
                     _fmt(_boot(np.subtract(get["rule"], full), rng), signed=True),
                     _fmt(_boot(np.subtract(up["rule"], full_up), rng), pct=True), f"{dag:.0%}"])
    head = ["d", "graphs", "refit: SHD change", "refit: raise", "pairs at t: change", "pairs at t: raise",
            "other pairs: change", "other pairs: raise", "local rule: SHD change", "local rule: raise",
            "local - refit: change (paired)", "local - refit: raise (paired)", "merge a DAG"]
    return ("### The cold refit's SHD change at the target's pairs and elsewhere; the local rule (the refit's "
            "pairs at t, the fit before's elsewhere)\n\n" + "\n".join(markdown_table(head, rows)))


def _local_worker(args):
    warnings.simplefilter("ignore")
    return local_split(*args)


def _worker(args):
    warnings.simplefilter("ignore")
    return one_graph(*args)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", type=int, default=30)
    ap.add_argument("--sizes", default="10,20")
    ap.add_argument("--solver", default="auto")
    ap.add_argument("--first-seed", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--table-only", action="store_true")
    ap.add_argument("--truth", action="store_true", help="also the true weights' objective on every refit's data")
    ap.add_argument("--local", action="store_true", help="only the split at t / elsewhere and the local rule")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.local:
        return _local_main(args)
    path = HERE / "results" / f"experiments_{args.solver}.jsonl"
    done = []
    if path.exists():
        done = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    have = {(r["d"], r["seed"]) for r in done}
    sizes = [int(s) for s in args.sizes.split(",")]
    todo = [(d, s, args.solver) for d in sizes for s in range(args.first_seed, args.first_seed + args.graphs)
            if (d, s) not in have]
    if not args.table_only and todo:
        if args.jobs > 1:
            from multiprocessing import Pool

            with Pool(args.jobs) as pool:
                it = pool.imap(_worker, todo)
                for res in it:
                    with path.open("a") as fh:
                        fh.write(json.dumps(res) + "\n")
                    done.append(res)
                    print(f"  d={res['d']} seed={res['seed']} done", file=sys.stderr, flush=True)
        else:
            for job in todo:
                res = _worker(job)
                with path.open("a") as fh:
                    fh.write(json.dumps(res) + "\n")
                done.append(res)
                print(f"  d={res['d']} seed={res['seed']} done", file=sys.stderr, flush=True)
    wanted = [r for r in done if r["d"] in sizes]
    truth = ({(r["d"], r["seed"]): truth_objectives(r["d"], r["seed"], args.solver) for r in wanted}
             if args.truth else None)
    text = (f"# Why an experiment can raise the SHD: solver {args.solver!r} "
            f"({platform.machine()}, python {platform.python_version()})\n\n" + table(wanted, truth) + "\n")
    print(text)
    (HERE / "results" / f"experiments_{args.solver}.md").write_text(text)


def _local_main(args):
    path = HERE / "results" / f"experiments_local_{args.solver}.jsonl"
    done = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    have = {(r["d"], r["seed"]) for r in done}
    sizes = [int(s) for s in args.sizes.split(",")]
    for d in sizes:
        for seed in range(args.first_seed, args.first_seed + args.graphs):
            if (d, seed) in have or args.table_only:
                continue
            res = _local_worker((d, seed, args.solver))
            with path.open("a") as fh:
                fh.write(json.dumps(res) + "\n")
            done.append(res)
            print(f"  local d={d} seed={seed} done", file=sys.stderr, flush=True)
    text = (f"# Why an experiment can raise the SHD: at the target or elsewhere, solver {args.solver!r} "
            f"({platform.machine()}, python {platform.python_version()})\n\n"
            + local_table([r for r in done if r["d"] in sizes]) + "\n")
    print(text)
    (HERE / "results" / f"experiments_local_{args.solver}.md").write_text(text)


if __name__ == "__main__":
    main()
