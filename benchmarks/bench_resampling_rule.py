"""Resampling as an edge rule: are the bootstrap's and stability selection's edges more accurate than the plain fit's? (issue 49).

On the problems of :mod:`benchmarks.bench_threshold_rule` (the paper's simulated ER2 / ER4, EV and NV,
``±[0.5, 2]``, d = 20; the bnlearn networks, raw and standardised, CoLiDE-NV), each problem gets:

* one CoLiDE fit with the defaults (``lambda1 = 0.05``, ``threshold = 0.3``): rule ``0.3``, the baseline
  (the same fit as bench_threshold_rule's ``0.3``: its SHD there is kept as ``shd_threshold_rule`` to check);
* :func:`colide_core.evaluation.stability.bootstrap_edges` with that estimator, ``--n-boot`` resamples
  (default 30, the Edge confidence page's default), seed = the problem's seed. From the directed
  frequencies ``f[i, j]`` (share of the resamples whose post-processed graph has i -> j):

  - ``boot50`` / ``boot80``: the pairs found (either way) in >= 50 % / 80 % of the resamples,
    ``f[i, j] + f[j, i] >= cut``, oriented as the majority of the resamples (``f[i, j] >= f[j, i]``);
  - ``boot-dir70``: the directed edges with ``f[i, j] >= 0.7``, what the page shows by default
    (its "Show edges found in at least this % of resamples" slider starts at 70);

* :func:`colide_core.evaluation.stability.stability_selection` with that estimator over ``--lambdas``
  (default 0.02, 0.05, 0.1) and ``--n-sub`` half-samples (default 20: both the page's defaults), seed =
  the problem's seed; the stable set ``max_k Pi[k, i, j] >= pi_thr`` for ``pi_thr`` = 0.6 (``stab60``),
  0.75 (``stab75``, the page's default) and 0.8 (``stab80``), all from the one run.

A rule's graph can hold both i -> j and j -> i, or a longer cycle (the stable set of several λ): it is
made a DAG by :func:`colide_core.threshold_to_dag` on the frequencies (the weakest edge on a cycle goes),
so SHD-C is defined; ``cut_edges`` records how many edges that removed.

Run: ``python -m benchmarks.bench_resampling_rule --raw FILE`` (JSON lines, one per problem with every
rule's scores and the frequencies as sparse counts; resumable); ``--from-raw FILE ...`` prints the
tables without fitting. The simulated problems run first, then the networks seed by seed (seed 0 of each first), so a stopped run
leaves whole problems. Results: ``benchmarks/results/resampling_rule.md``; what they say:
docs/networks.md, "Resampling as an edge rule". ``X`` is ``(n_samples, n_nodes)``.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from colide_core import CoLiDE
from colide_core.evaluation.stability import bootstrap_edges, stability_selection
from colide_core.graph._dag import threshold_to_dag

from ._common import append_jsonl, markdown_table, read_jsonl
from .bench_threshold_rule import _groups, _key, _label, _pm, _scores, plain_fit, problems

RULES = ("0.3", "boot50", "boot80", "boot-dir70", "stab60", "stab75", "stab80")
#: The rows the Edge confidence page gives with its defaults (30 resamples, slider at 70 %;
#: λ ∈ {0.02, 0.05, 0.1}, 20 half-samples, π_thr = 0.75).
PAGE_DEFAULT = ("boot-dir70", "stab75")
STAB_PI = {"stab60": 0.6, "stab75": 0.75, "stab80": 0.8}
#: Made by ``--from-raw`` (the truth reloaded, :func:`add_extras`), to tell the resampling from the λ grid:
#: stability selection at π_thr = 0.75 with one λ of the grid (``stab75-λ<lam>``, from the raw counts) and the
#: plain fit at another λ, thresholded at 0.3 (``0.3-λ<lam>``, one more fit each).
EXTRA_LAMBDAS = (0.02, 0.05, 0.1)
EXTRA = tuple(f"stab75-λ{lam:g}" for lam in EXTRA_LAMBDAS) + tuple(f"0.3-λ{lam:g}" for lam in (0.02, 0.1))
EPS = 1e-9  # threshold_to_dag keeps |w| > threshold: a cut c keeps frequencies >= c


def _sparse(counts):
    """Nonzero entries of an int matrix as ``[[i, j, count], ...]``."""
    return [[int(i), int(j), int(counts[i, j])] for i, j in zip(*np.nonzero(counts))]


def _dense(entries, d):
    out = np.zeros((d, d))
    for i, j, c in entries:
        out[i, j] = c
    return out


def majority(F):
    """Pair frequencies on the majority orientation: ``F[i, j] + F[j, i]`` where ``F[i, j] >= F[j, i]``
    (both kept on a tie; the DAG step drops one), 0 elsewhere. ``F``: (d, d) directed frequencies."""
    S = F + F.T
    return np.where((F >= F.T) & (S > 0), S, 0.0)


def rule_graphs(F, M):
    """The rules' DAGs from the bootstrap's directed frequencies ``F`` and stability selection's
    ``M = max_k Pi[k]`` (both (d, d), in [0, 1]); ``rule -> (adjacency, edges cut to make it a DAG)``."""
    out = {}
    P = majority(F)
    for rule, base, cut in (("boot50", P, 0.5), ("boot80", P, 0.8), ("boot-dir70", F, 0.7),
                            *((r, M, pi) for r, pi in STAB_PI.items())):
        A, removed = threshold_to_dag(base, cut - EPS, return_removed=True)
        out[rule] = (A, len(removed))
    return out


def fit_rules(X, B_true, variant, seed, n_boot=30, n_sub=20, lambdas=(0.02, 0.05, 0.1)):
    """One plain fit, one bootstrap and one stability selection of CoLiDE-``variant`` (defaults) on ``X``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_nodes)
    B_true : ndarray of shape (n_nodes, n_nodes)
        The true DAG, ``B_true[i, j] != 0`` meaning i -> j (only scored against, never used to choose).
    variant : {"ev", "nv"}
    seed : int
        ``random_state`` of both resamplings.
    n_boot, n_sub : int
        Bootstrap resamples; half-samples per λ.
    lambdas : sequence of float
        Stability selection's λ grid.

    Returns
    -------
    dict
        ``rule -> {shd, shd_cpdag, tpr, fdr, edges, cut_edges}``, the seconds of each part
        (``fit_s``, ``boot_s``, ``stab_s``), the bootstrap's ``n_ok`` and directed counts
        (``boot_counts``: sparse ``[i, j, count]``), stability selection's per-λ counts
        (``stab_counts``) and ``q_hat`` and E[V] bound at each π_thr.
    """
    est = CoLiDE(variant)
    model, fit_s = plain_fit(X, variant)
    out = {"fit_s": fit_s}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        boot = bootstrap_edges(X, est, n_boot=n_boot, random_state=seed, n_jobs=1)
        out["boot_s"] = time.perf_counter() - t
        t = time.perf_counter()
        stab = stability_selection(X, est, list(lambdas), n_subsamples=n_sub, pi_thr=0.75, random_state=seed,
                                   n_jobs=1)
        out["stab_s"] = time.perf_counter() - t
    out["0.3"] = {**_scores(B_true, model.adjacency_), "cut_edges": 0}
    F, M = boot.frequency, stab.max_probability
    for rule, (A, cut) in rule_graphs(F, M).items():
        out[rule] = {**_scores(B_true, A), "cut_edges": cut}
    out["n_ok"] = int(boot.n_ok)
    out["boot_counts"] = _sparse(np.rint(F * boot.n_ok).astype(int))
    out["stab_failed"] = int(stab.n_failed)
    out["n_sub"] = int(n_sub)
    out["lambdas"] = [float(v) for v in lambdas]
    out["stab_counts"] = [_sparse(np.rint(P * n_sub).astype(int)) for P in stab.selection_probability]
    out["q_hat"] = float(stab.q_hat)
    out["ev_bound"] = {r: float(stab.q_hat ** 2 / ((2 * pi - 1) * stab.n_candidates)) for r, pi in STAB_PI.items()}
    return out


def ordered(items):
    """``problems()``'s items: the simulated first, then the networks seed by seed (seed 0 of every network,
    then seed 1, ...), so a stopped run leaves whole seeds."""
    items = list(items)
    return sorted(items, key=lambda kv: (kv[0]["set"] != "simulated", kv[0]["seed"]))


def run(items, raw=None, progress=None, reference=None, **kw):
    """Fit every problem not already in ``raw`` (JSON lines, appended as each ends); all records.

    ``reference``: records of bench_threshold_rule (by key), whose ``0.3`` SHD is stored beside ours."""
    done = {_key(r): r for r in read_jsonl(raw)}
    out = []
    for key, load in items:
        k = _key(key)
        if k in done:
            out.append(done[k])
            continue
        X, B = load()
        r = {**key, **fit_rules(X, B, key["variant"], key["seed"], **kw)}
        if reference and k in reference:
            r["shd_threshold_rule"] = reference[k]["0.3"]["shd"]
        out.append(r)
        append_jsonl(raw, r)
        if progress is not None:
            progress(" ".join(str(v) for v in key.values()) + ": SHD "
                     + ", ".join(f"{rule} {r[rule]['shd']}" for rule in RULES)
                     + f" (fit {r['fit_s']:.1f} s, bootstrap {r['boot_s']:.0f} s, stability {r['stab_s']:.0f} s)")
    return out


def _rules(records):
    return [r for r in RULES + EXTRA if all(r in rec for rec in records)]


def add_extras(records, cache=None, pi=0.75):
    """Add the rules :data:`EXTRA` to every record: stability selection's edges at each single λ of
    :data:`EXTRA_LAMBDAS` (selection probability at that λ >= ``pi``, from ``stab_counts`` over ``n_sub``
    half-samples, 20 where not recorded) and the plain fit at λ = 0.02 and 0.1 thresholded at 0.3, each
    made a DAG and scored against the truth reloaded from the problem's definition (never used to choose).
    ``cache``: a JSON-lines file of these extras by problem, read and appended to (the refits take time)."""
    done = {tuple(e["key"]): e["rules"] for e in read_jsonl(cache)}
    todo = [r for r in records if _key(r) not in done]
    if todo:
        nets = sorted({r["problem"] for r in todo if r["set"] == "network"})
        rows = sorted({r["n"] for r in todo if r["set"] == "network"}) or [1000]
        seeds = range(max(r["seed"] for r in todo) + 1)
        loaders = {_key(k): f for k, f in problems(nets, seeds, seeds, sizes=(20,), network_n=rows)}
        for r in todo:
            X, B = loaders[_key(r)]()
            d = B.shape[0]
            extra = {}
            for lam in EXTRA_LAMBDAS:
                if lam in r["lambdas"]:
                    P = _dense(r["stab_counts"][r["lambdas"].index(lam)], d) / r.get("n_sub", 20)
                    A, removed = threshold_to_dag(P, pi - EPS, return_removed=True)
                    extra[f"stab75-λ{lam:g}"] = {**_scores(B, A), "cut_edges": len(removed)}
            for lam in (0.02, 0.1):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = CoLiDE(r["variant"], lambda1=lam).fit(X)
                extra[f"0.3-λ{lam:g}"] = {**_scores(B, model.adjacency_), "cut_edges": 0}
            done[_key(r)] = extra
            append_jsonl(cache, {"key": list(_key(r)), "rules": extra})
    for r in records:
        r.update(done[_key(r)])
    return records


def _sets(records):
    return sorted({(r["set"], r["n"]) for r in records}, key=lambda s: (s[0] != "simulated", s[1]))


def table(records, metric) -> str:
    """One line per (problem, data, variant), one column per rule: the mean ± sd of ``metric`` over seeds."""
    fmt = ".1f" if metric in ("shd", "shd_cpdag", "edges") else ".2f"
    body = []
    for (s, problem, scaling, variant, n), rs in _groups(records).items():
        cells = [_pm([r[rule][metric] for r in rs], fmt) for rule in _rules(records)]
        body.append([_label(s, problem, n), scaling, f"CoLiDE-{variant.upper()}", len(rs)] + cells)
    return "\n".join(markdown_table(["problem", "data", "method", "seeds"] + _rules(records), body))


def paired(records, metric="shd") -> str:
    """Per (problem, data, variant): each rule's ``metric`` minus the 0.3 rule's, mean ± sd over seeds."""
    rules = _rules(records)[1:]
    fmt = "+.1f" if metric in ("shd", "shd_cpdag", "edges") else "+.2f"
    body = []
    for (s, problem, scaling, variant, n), rs in _groups(records).items():
        cells = [_pm([r[rule][metric] - r["0.3"][metric] for r in rs], fmt) for rule in rules]
        body.append([_label(s, problem, n), scaling, f"CoLiDE-{variant.upper()}"] + cells)
    return "\n".join(markdown_table(["problem", "data", "method"] + [f"{r} − 0.3" for r in rules], body))


def overall(records) -> str:
    """Per set and rule: lines better / equal / worse than 0.3 on mean SHD and on mean SHD-C, the mean paired
    SHD and SHD-C differences over every fit, and the mean TPR and FDR differences."""
    body = []
    for s, n in _sets(records):
        groups = {k: v for k, v in _groups(records).items() if (k[0], k[4]) == (s, n)}
        for rule in _rules(records)[1:]:
            row = [f"{s}, n = {n:,}", rule + (" (page default)" if rule in PAGE_DEFAULT else "")]
            for metric in ("shd", "shd_cpdag"):
                w = t = lo = 0
                for rs in groups.values():
                    m = float(np.mean([r[rule][metric] - r["0.3"][metric] for r in rs]))
                    w, t, lo = w + (m < 0), t + (m == 0), lo + (m > 0)
                row.append(f"{w} / {t} / {lo}")
            every = [r for rs in groups.values() for r in rs]
            for metric, fmt in (("shd", "+.1f"), ("shd_cpdag", "+.1f"), ("tpr", "+.2f"), ("fdr", "+.2f"),
                                ("edges", "+.1f")):
                row.append(_pm([r[rule][metric] - r["0.3"][metric] for r in every], fmt))
            body.append(row)
    return "\n".join(markdown_table(
        ["set", "rule", "lines better / equal / worse (SHD)", "same (SHD-C)", "SHD − 0.3's, every fit",
         "SHD-C − 0.3's", "TPR − 0.3's", "FDR − 0.3's", "edges − 0.3's"], body))


def costs(records) -> str:
    """Per set: fits, mean seconds of the plain fit, the bootstrap and stability selection; edges cut for a DAG;
    the plain fit's SHD against bench_threshold_rule's (same fit)."""
    body = []
    for s, n in _sets(records):
        rs = [r for r in records if (r["set"], r["n"]) == (s, n)]
        same = [r for r in rs if "shd_threshold_rule" in r]
        cut = {rule: sum(r[rule]["cut_edges"] > 0 for r in rs) for rule in _rules(records)[1:]}
        body.append([f"{s}, n = {n:,}", len(rs), f"{np.mean([r['fit_s'] for r in rs]):.1f}",
                     f"{np.mean([r['boot_s'] for r in rs]):.0f}", f"{np.mean([r['stab_s'] for r in rs]):.0f}",
                     ", ".join(f"{k} {v}" for k, v in cut.items() if v) or "none",
                     f"{sum(r['0.3']['shd'] == r['shd_threshold_rule'] for r in same)} of {len(same)}"])
    return "\n".join(markdown_table(["set", "problems × seeds", "plain fit (s)", "bootstrap (s)", "stability (s)",
                                     "fits where making a DAG cut edges", "0.3's SHD = bench_threshold_rule's"],
                                    body))


def means(records, metric="shd") -> str:
    """The paste-ready table of docs/networks.md: the mean of ``metric`` over seeds, one column per rule."""
    body = []
    for (s, problem, scaling, variant, n), rs in _groups(records).items():
        body.append([_label(s, problem, n), scaling, len(rs)]
                    + [f"{np.mean([r[rule][metric] for r in rs]):.1f}" for rule in _rules(records)])
    return "\n".join(markdown_table(["problem", "data", "seeds"] + _rules(records), body))


def bound_check(records) -> str:
    """Per problem line: Meinshausen & Bühlmann's bound on E[V] that the page prints (mean over seeds) against the
    false edges the stable set really holds (``fdr × edges`` of the rule's DAG), at each π_thr."""
    body = []
    for (s, problem, scaling, variant, n), rs in _groups(records).items():
        cells = []
        for rule in STAB_PI:
            bound = np.mean([r["ev_bound"][rule] for r in rs])
            false = np.mean([r[rule]["fdr"] * r[rule]["edges"] for r in rs])
            cells.append(f"{bound:.1f} / {false:.1f}")
        body.append([_label(s, problem, n), scaling, f"{np.mean([r['q_hat'] for r in rs]):.1f}"] + cells)
    return "\n".join(markdown_table(["problem", "data", "q̂"] + [f"{r}: bound / false edges" for r in STAB_PI],
                                    body))


def report(records) -> str:
    lines = ["Mean SHD over seeds (the doc's table):", "", means(records), ""]
    for metric, title in (("shd", "SHD"), ("shd_cpdag", "SHD-C"), ("tpr", "TPR"), ("fdr", "FDR"), ("edges", "edges")):
        lines += [f"{title}, mean ± sd over seeds, by rule:", "", table(records, metric), ""]
    for metric, title in (("shd", "SHD"), ("shd_cpdag", "SHD-C")):
        lines += [f"Paired {title} difference to the 0.3 threshold (same problem and seed), mean ± sd over seeds:", "",
                  paired(records, metric), ""]
    lines += ["Summary against 0.3 (negative SHD: the rule is better):", "", overall(records), "",
              "Stability selection's bound on the expected false edges (as the page prints it) against the false "
              "edges of the stable set (means over seeds):", "", bound_check(records), "",
              "Cost and checks:", "", costs(records)]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", default="ecoli70,magic-niab,magic-irri", help="comma-separated, or empty")
    parser.add_argument("--network-seeds", type=int, default=3)
    parser.add_argument("--network-first-seed", type=int, default=0,
                        help="network seeds from this one (a second process on the later seeds)")
    parser.add_argument("--synthetic-seeds", type=int, default=3, help="0 for none")
    parser.add_argument("--n-boot", type=int, default=30)
    parser.add_argument("--n-sub", type=int, default=20)
    parser.add_argument("--lambdas", default="0.02,0.05,0.1")
    parser.add_argument("--reference", type=Path, nargs="*", default=(), metavar="JSONL",
                        help="bench_threshold_rule raw files: their 0.3 SHD is stored beside ours, as a check")
    parser.add_argument("--raw", type=Path, default=None, help="append each problem here; skip those already in it")
    parser.add_argument("--from-raw", type=Path, nargs="+", default=None, metavar="JSONL")
    parser.add_argument("--extras", type=Path, default=None, metavar="JSONL",
                        help="with --from-raw: cache of the extra rules (single-λ stability, plain fits at λ 0.02, 0.1)")
    parser.add_argument("--verbose", action="store_true", help="a line on stderr after each problem")
    args = parser.parse_args(argv)
    if args.from_raw:
        by = {_key(r): r for r in read_jsonl(*args.from_raw)}
        records = add_extras(list(by.values()), cache=args.extras)
    else:
        reference = {_key(r): r for r in read_jsonl(*args.reference)}
        nets = [x for x in args.networks.split(",") if x]
        items = [(k, f) for k, f in problems(nets, range(args.network_first_seed, args.network_seeds), range(args.synthetic_seeds), sizes=(20,))
                 if k["variant"] == "nv" or k["set"] == "simulated"]
        items = [(k, f) for k, f in items if not k["problem"].endswith("NV-PAPER d=20")]

        def say(line):
            print(line, file=sys.stderr, flush=True)
        records = run(ordered(items), raw=args.raw, progress=say if args.verbose else None, reference=reference,
                      n_boot=args.n_boot, n_sub=args.n_sub, lambdas=[float(v) for v in args.lambdas.split(",")])
    print(report(records))


if __name__ == "__main__":
    main()
