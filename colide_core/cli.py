"""Command-line interface: ``python -m colide_core {fit,simulate,bench}``.

Why :mod:`argparse`: it is in the standard library, so the CLI adds no
dependency to pin or audit, and it already gives what this small interface
needs: sub-commands, typed options, ``--help`` text, and usage errors that
exit with status 2. typer/click would add a package (and, for typer, its
own dependencies) for convenience this interface does not need.

Commands
--------
``fit DATA --out DIR``
    Learn a DAG from a CSV/TSV/Parquet table (rows = samples, columns =
    nodes). Writes ``edges.csv`` (the thresholded DAG's edge list),
    ``W.csv`` (raw weights), ``adjacency.csv`` (thresholded weights),
    ``sigma.csv`` (noise standard deviations) and ``manifest.json``, plus any
    ``--export`` formats. ``--stats`` streams a file (or glob) too large for
    memory through :func:`colide_core.stats.sufficient_stats` (Dask) and
    fits from the covariance.
``simulate --out DIR``
    Draw a synthetic linear SEM dataset with
    :func:`colide_core.simulate.simulate_dataset` (the project's one
    simulation protocol) and write ``data.csv`` (or ``.parquet``), the ground
    truth ``B_true.csv``, ``W_true.csv``, ``noise_std.csv`` (both in the units
    of the written data) and ``simulation.json``.
``bench CONFIG.toml``
    Run methods x data settings x seeds through :func:`colide_core.executor.run_sweep`
    (joblib, or Dask with ``--scheduler``/``DASK_SCHEDULER_ADDRESS``).
    Rows stream into ``results.jsonl``, so a killed bench resumes where it
    stopped; at the end ``results.parquet``, ``results.csv``, ``summary.csv``
    and ``summary.txt`` (mean +- std per method, the paper's layout) and
    ``bench.json`` are written.

Exit status: 0 on success, 2 for bad arguments, files or configuration
(usage errors), 1 when a run itself fails, 130 when interrupted.

A progress bar is drawn on stderr only when stderr is a terminal.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd

from . import defaults

PROG = "python -m colide_core"


class UsageError(Exception):
    """Bad input from the user (exit status 2)."""


# --------------------------------------------------------------------------------------------
# progress bar
# --------------------------------------------------------------------------------------------

class ProgressBar:
    """A one-line text progress bar on a stream, drawn only when it is a TTY.

    Parameters
    ----------
    total : float
        Value that means 100 %.
    label : str
        Text before the bar.
    stream : file, default sys.stderr
    enabled : bool, optional
        Default ``stream.isatty()``.
    """

    def __init__(self, total, label="", stream=None, enabled=None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.total = max(float(total), 1e-12)
        self.label = label
        self.t0 = time.perf_counter()
        self._last = 0.0

    def update(self, value, suffix=""):
        """Redraw at ``value`` (throttled to 10 redraws per second)."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last < 0.1 and value < self.total:
            return
        self._last = now
        frac = min(max(value / self.total, 0.0), 1.0)
        width = 30
        filled = int(round(frac * width))
        elapsed = now - self.t0
        eta = elapsed * (1 - frac) / frac if frac > 0 else float("nan")
        eta_txt = f"eta {eta:5.0f}s" if np.isfinite(eta) else "eta     ?"
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {frac:4.0%} "
                          f"{elapsed:5.0f}s {eta_txt} {suffix}\x1b[K")
        self.stream.flush()

    def close(self):
        """End the line."""
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


# --------------------------------------------------------------------------------------------
# parsing helpers
# --------------------------------------------------------------------------------------------

def _float_tuple(kind, length=None):
    def parse(text):
        try:
            vals = tuple(kind(v) for v in text.split(",") if v.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated {kind.__name__}s, got {text!r}") from None
        if length is not None and len(vals) != length:
            raise argparse.ArgumentTypeError(f"expected {length} comma-separated values, got {len(vals)}")
        return vals
    return parse


def _positive_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not np.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return v


def _positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {v}")
    return v


def build_parser():
    """The argparse parser of ``python -m colide_core`` (exposed for docs and tests)."""
    from ._estimator import SOLVERS
    from .export import EXPORT_FORMATS

    p = argparse.ArgumentParser(prog=PROG, description="CoLiDE: learn linear causal DAGs from data, "
                                "simulate benchmarks, run sweeps locally or on a Dask cluster.")
    sub = p.add_subparsers(dest="command", required=True, metavar="{fit,simulate,bench}")

    f = sub.add_parser("fit", help="learn a DAG from a CSV/TSV/Parquet table",
                       description="Learn a DAG with CoLiDE. Rows are samples, columns are nodes; "
                                   "W[i, j] != 0 in the outputs means the edge i -> j.")
    f.add_argument("data", help="CSV/TSV/Parquet file (with --stats: also a directory or glob)")
    f.add_argument("--out", required=True, type=Path, help="output directory (created)")
    f.add_argument("--variant", choices=defaults.VARIANTS, default=defaults.VARIANT,
                   help="nv: non-equal noise variances (default); ev: equal; ls: DAGMA least squares")
    f.add_argument("--lambda1", type=_positive_float, default=defaults.LAMBDA1,
                   help=f"L1 weight (default {defaults.LAMBDA1})")
    f.add_argument("--threshold", type=_positive_float, default=defaults.THRESHOLD,
                   help=f"edge threshold on |W| for the DAG (default {defaults.THRESHOLD})")
    f.add_argument("--max-iter", type=_float_tuple(int, 4), default=defaults.MAX_ITER, metavar="T1,T2,T3,T4",
                   help="iterations per stage (default " + ",".join(map(str, defaults.MAX_ITER)) + ")")
    f.add_argument("--mu-schedule", type=_float_tuple(float, 4), default=defaults.MU_SCHEDULE,
                   metavar="M1,M2,M3,M4")
    f.add_argument("--s-schedule", type=_float_tuple(float, 4), default=defaults.S_SCHEDULE,
                   metavar="S1,S2,S3,S4")
    f.add_argument("--lr", type=_positive_float, default=defaults.LR, help=f"Adam step size (default {defaults.LR})")
    f.add_argument("--tol", type=_positive_float, default=defaults.TOL)
    f.add_argument("--solver", choices=tuple(SOLVERS), default=defaults.SOLVER,
                   help="auto (default) or fast: the fast solver; adam: the paper-faithful schedule; "
                        "topo: CoLiDE-TOPO, the score minimised over topological orders by node swaps "
                        "(paper Appendix E; slower, seconds at 50 nodes)")
    f.add_argument("--random-state", type=int, default=None, help="recorded in the manifest")
    f.add_argument("--max-time", type=_positive_float, default=None, help="time budget in seconds")
    f.add_argument("--columns", type=lambda s: [c.strip() for c in s.split(",") if c.strip()],
                   default=None, metavar="A,B,...", help="use only these columns (nodes), in this order")
    f.add_argument("--drop-non-numeric", action="store_true", help="ignore text columns instead of failing")
    f.add_argument("--truth", type=Path, default=None,
                   help="true DAG as an adjacency CSV (B_true.csv from `simulate`): adds metrics")
    f.add_argument("--stats", action="store_true",
                   help="out-of-core: stream the data through Dask into (n, cov) and fit from that")
    f.add_argument("--export", type=lambda s: [x.strip() for x in s.split(",") if x.strip()], default=[],
                   metavar="FMT,...", help="also write the DAG as: " + ", ".join(EXPORT_FORMATS))
    f.add_argument("--quiet", action="store_true", help="no summary on stdout")

    s = sub.add_parser("simulate", help="write a synthetic dataset with its ground truth",
                       description="Simulate a linear SEM (NOTEARS/CoLiDE protocol).")
    s.add_argument("--out", required=True, type=Path, help="output directory (created)")
    s.add_argument("--nodes", type=_positive_int, default=10, help="number of nodes d (default 10)")
    s.add_argument("--degree", type=_positive_float, default=2.0, help="k of ERk/SFk (default 2)")
    s.add_argument("--graph", choices=("er", "sf"), default="er")
    s.add_argument("--samples", type=_positive_int, default=1000, help="number of samples n (default 1000)")
    s.add_argument("--noise", choices=("gaussian", "exponential", "laplace", "gumbel"), default="gaussian")
    s.add_argument("--variance", choices=("ev", "nv"), default="ev",
                   help="ev: equal noise variances (--noise-var); nv: one per node, uniform on "
                        "--noise-var-range (paper Section 5)")
    s.add_argument("--noise-var", type=_positive_float, default=1.0, help="EV noise variance (default 1)")
    s.add_argument("--noise-var-range", type=_float_tuple(float, 2), default=(0.5, 10.0), metavar="LOW,HIGH",
                   help="NV noise variance range (default 0.5,10)")
    s.add_argument("--w-range", type=_float_tuple(float, 2), default=None, metavar="LOW,HIGH",
                   help="edge weight magnitudes, random sign (default: the paper's 0.5,2 for ev, 0.25,1 for nv)")
    s.add_argument("--standardize", action="store_true",
                   help="scale columns to unit variance (W_true and noise_std are rescaled to match)")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--format", choices=("csv", "parquet"), default="csv", help="format of the data file")

    b = sub.add_parser("bench", help="run a sweep of methods x settings x seeds from a TOML file",
                       description="Run a benchmark sweep. Finished runs are kept in OUT/results.jsonl; "
                                   "running the same command again resumes without recomputing them.")
    b.add_argument("config", type=Path, help="TOML file: [bench], [data], [methods.NAME] tables")
    b.add_argument("--out", type=Path, default=None,
                   help="output directory (default: [bench].out, else CONFIG's name + '_results')")
    b.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                   help="Dask scheduler address (default $DASK_SCHEDULER_ADDRESS, else local joblib)")
    b.add_argument("--jobs", type=int, default=-1, help="local joblib processes (default -1: all cores)")
    b.add_argument("--retries", type=int, default=None,
                   help="resubmissions after a worker crash (default: [bench].retries, else 3)")
    return p


# --------------------------------------------------------------------------------------------
# fit
# --------------------------------------------------------------------------------------------

def _read_data(path, columns, drop_non_numeric):
    from .io import DataValidationError, read_table, validate_data

    if not path.is_file():
        raise UsageError(f"data file not found: {path}")
    raw = path.read_bytes()
    try:
        df = read_table(raw, path.name, max_bytes=len(raw) + 1)
        if columns is not None:
            missing = [c for c in columns if c not in [str(x).strip() for x in df.columns]]
            if missing:
                raise UsageError(f"--columns: not in {path.name}: {', '.join(missing)}")
            df = df.rename(columns=lambda c: str(c).strip())[columns]
        vd = validate_data(df, min_rows=2, drop_non_numeric=drop_non_numeric)
    except DataValidationError as exc:
        raise UsageError(f"{path.name}: {exc}") from None
    return vd


def _read_truth(path, names):
    from .export import read_graph

    if not path.is_file():
        raise UsageError(f"--truth file not found: {path}")
    try:
        B = read_graph(path.read_bytes(), "adjacency_csv")
    except ValueError as exc:
        raise UsageError(f"--truth {path.name}: {exc}") from None
    if list(B.columns) != list(names):
        if sorted(B.columns) != sorted(names):
            raise UsageError(f"--truth {path.name}: its nodes {list(B.columns)} differ from the data's {list(names)}")
        B = B.loc[list(names), list(names)]
    return B


def _cmd_fit(args):
    from . import CoLiDE, progress_fraction
    from .export import export_graph, EXPORT_FORMATS, to_adjacency_csv, to_edge_list_csv
    from .manifest import build_manifest, save_manifest

    bad = [fmt for fmt in args.export if fmt not in EXPORT_FORMATS]
    if bad:
        raise UsageError(f"--export: unknown format(s) {', '.join(bad)}; choose from {', '.join(EXPORT_FORMATS)}")
    t_start = time.perf_counter()
    model = CoLiDE(args.variant, lambda1=args.lambda1, mu_schedule=args.mu_schedule,
                   s_schedule=args.s_schedule, max_iter=args.max_iter, lr=args.lr, tol=args.tol,
                   solver=args.solver,
                   threshold=args.threshold, random_state=args.random_state, max_time=args.max_time)
    bar = ProgressBar(1.0, label="fit")
    n_stages = len(args.max_iter)

    def progress(stage, iteration, objective):
        if stage >= n_stages:  # CoLiDE-TOPO's search after the continuous start: swaps accepted
            bar.update(1.0, suffix=f"TOPO swaps {iteration} score {objective:.4g}")
            return False
        frac = progress_fraction(args.max_iter, stage, iteration)
        bar.update(frac, suffix=f"stage {stage + 1}/{n_stages} obj {objective:.4g}")
        return False

    if args.stats:
        from .stats import sufficient_stats

        try:
            n, _, cov, names = sufficient_stats(args.data, columns=args.columns, return_columns=True)
        except (FileNotFoundError, ValueError) as exc:
            raise UsageError(f"{args.data}: {exc}") from None
        data_kw = {"cov": cov, "n": n}
        try:
            model.fit_from_stats(cov, n, callback=progress, node_names=names)
        finally:
            bar.close()
        shape = (n, len(names))
    else:
        vd = _read_data(Path(args.data), args.columns, args.drop_non_numeric)
        for w in vd.warnings:
            print(f"warning: {w}", file=sys.stderr)
        X = vd.X
        names = vd.node_names
        data_kw = {"X": X}
        try:
            model.fit(X, callback=progress)
        finally:
            bar.close()
        shape = X.shape
    B_true = _read_truth(args.truth, names) if args.truth is not None else None

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "edges.csv").write_text(to_edge_list_csv(model.adjacency_, names))
    (out / "W.csv").write_text(to_adjacency_csv(model.W_, names))
    (out / "adjacency.csv").write_text(to_adjacency_csv(model.adjacency_, names))
    written = ["edges.csv", "W.csv", "adjacency.csv"]
    if model.sigma_ is not None:
        sig = np.broadcast_to(np.asarray(model.sigma_, dtype=float), (len(names),))
        pd.DataFrame({"node": names, "sigma": sig}).to_csv(out / "sigma.csv", index=False)
        written.append("sigma.csv")
    for fmt in args.export:
        name = "graph" + EXPORT_FORMATS[fmt][0]  # graph.graphml, graph_edges.csv, ...
        (out / name).write_bytes(export_graph(model.adjacency_, names, fmt))
        written.append(name)
    manifest = build_manifest(model, **data_kw, B_true=B_true, data_source=str(args.data),
                              wall_time=time.perf_counter() - t_start,
                              extra={"command": "fit", "argv": sys.argv[1:]})
    save_manifest(manifest, out / "manifest.json")
    written.append("manifest.json")
    if not args.quiet:
        n_edges = int(np.count_nonzero(model.adjacency_))
        print(f"learned {n_edges} edge{'' if n_edges == 1 else 's'} among {len(names)} nodes from {shape[0]} samples "
              f"in {model.fit_time_:.2f} s ({model.n_iter_} {'swaps' if args.solver == 'topo' else 'iterations'}"
              f"{', stopped early' if model.stopped_ else ''})")
        if manifest["results"]["metrics"]:
            m = manifest["results"]["metrics"]
            print("metrics: " + ", ".join(f"{k}={m[k]}" for k in ("shd", "tpr", "fdr", "sid") if k in m))
        print(f"wrote {', '.join(written)} to {out}")
    return 0


# --------------------------------------------------------------------------------------------
# simulate
# --------------------------------------------------------------------------------------------

def _cmd_simulate(args):
    from .export import to_adjacency_csv
    from .manifest import environment_info
    from .simulate import simulate_dataset

    spec = {"graph": args.graph, "degree": args.degree, "n_nodes": args.nodes, "n_samples": args.samples,
            "noise": args.noise, "variance": args.variance, "noise_var": args.noise_var,
            "noise_var_range": args.noise_var_range, "w_range": args.w_range, "standardize": args.standardize}
    try:
        sim = simulate_dataset(spec, args.seed)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    names = [f"X{i + 1}" for i in range(args.nodes)]
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    df = pd.DataFrame(sim.X, columns=names)
    data_name = "data.csv" if args.format == "csv" else "data.parquet"
    if args.format == "csv":
        df.to_csv(out / data_name, index=False)
    else:
        df.to_parquet(out / data_name, index=False)
    (out / "B_true.csv").write_text(to_adjacency_csv(sim.B_true, names))
    (out / "W_true.csv").write_text(to_adjacency_csv(sim.W_true, names))
    pd.DataFrame({"node": names, "noise_std": sim.noise_std}).to_csv(out / "noise_std.csv", index=False)
    meta = {"spec": sim.spec, "seed": args.seed, "n_edges": int(np.count_nonzero(sim.B_true)),
            "files": [data_name, "B_true.csv", "W_true.csv", "noise_std.csv"],
            "environment": environment_info()}
    (out / "simulation.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"simulated {args.samples} samples of a {args.graph.upper()}{args.degree:g} DAG with "
          f"{args.nodes} nodes and {meta['n_edges']} edges ({args.noise} noise, {args.variance}); "
          f"wrote {data_name}, B_true.csv, W_true.csv, noise_std.csv, simulation.json to {out}")
    return 0


# --------------------------------------------------------------------------------------------
# bench
# --------------------------------------------------------------------------------------------

SETTING_COLUMNS = ("graph", "degree", "n_nodes", "n_samples", "noise", "variance", "noise_var",
                   "noise_var_range", "w_range", "standardize")
#: [data] settings whose one value is a (low, high) pair: a list of pairs is a grid axis.
_PAIR_SETTINGS = ("noise_var_range", "w_range")
SUMMARY_METRICS = ("shd_norm", "shd_cpdag_norm", "sid_norm", "tpr", "fdr", "nnz", "sigma_rel_err", "time_s")


def load_bench_config(path):
    """Read and check a bench TOML file.

    Parameters
    ----------
    path : Path

    Returns
    -------
    dict
        ``{"seeds": list of int, "grid": list of dataset dicts, "methods": {label: (method, params)},
        "out": str or None, "retries": int or None}``.

    Raises
    ------
    UsageError
        For a missing file, TOML syntax errors, unknown tables/keys, unknown methods or
        parameters, or empty grids. Messages name the offending key.
    """
    from .baselines import METHODS
    from .simulate import DATASET_DEFAULTS, check_spec

    if not path.is_file():
        raise UsageError(f"config file not found: {path}")
    try:
        cfg = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path.name}: invalid TOML: {exc}") from None
    unknown = set(cfg) - {"bench", "data", "methods"}
    if unknown:
        raise UsageError(f"{path.name}: unknown table(s) {sorted(unknown)}; expected [bench], [data], [methods.NAME]")
    bench = cfg.get("bench", {})
    bad = set(bench) - {"seeds", "n_seeds", "out", "retries", "name"}
    if bad:
        raise UsageError(f"{path.name}: unknown key(s) in [bench]: {sorted(bad)}")
    if "seeds" in bench:
        seeds = bench["seeds"]
        if not isinstance(seeds, list) or not seeds or not all(isinstance(x, int) for x in seeds):
            raise UsageError(f"{path.name}: [bench].seeds must be a non-empty list of integers")
    else:
        k = bench.get("n_seeds", 1)
        if not isinstance(k, int) or k < 1:
            raise UsageError(f"{path.name}: [bench].n_seeds must be an integer >= 1")
        seeds = list(range(k))

    data = cfg.get("data", {})
    bad = set(data) - set(DATASET_DEFAULTS)
    if bad:
        raise UsageError(f"{path.name}: unknown key(s) in [data]: {sorted(bad)}; known: {list(DATASET_DEFAULTS)}")
    def axis(key, v):
        if key in _PAIR_SETTINGS and isinstance(v, list) and not any(isinstance(x, list) for x in v):
            return [v]  # one (low, high) pair
        return v if isinstance(v, list) else [v]

    axes = {k: axis(k, v) for k, v in data.items()}
    empty = [k for k, v in axes.items() if not v]
    if empty:
        raise UsageError(f"{path.name}: [data].{empty[0]} is an empty list")
    grid = [dict(zip(axes, combo)) for combo in itertools.product(*axes.values())]
    for spec in grid:
        try:
            s = check_spec(spec)
        except ValueError as exc:
            raise UsageError(f"{path.name}: bad [data] setting {spec}: {exc}") from None
        if s["n_nodes"] < 2 or s["n_samples"] < 2:
            raise UsageError(f"{path.name}: [data] n_nodes and n_samples must be integers >= 2, got {spec}")

    methods_cfg = cfg.get("methods", {})
    if not methods_cfg:
        raise UsageError(f"{path.name}: no methods: add at least one [methods.NAME] table "
                         f"(registered: {', '.join(METHODS)})")
    methods = {}
    for label, table in methods_cfg.items():
        if not isinstance(table, dict):
            raise UsageError(f"{path.name}: methods.{label} must be a table")
        params = dict(table)
        name = params.pop("method", label)
        if name not in METHODS:
            raise UsageError(f"{path.name}: [methods.{label}]: unknown method {name!r}; "
                             f"registered: {', '.join(METHODS)}")
        unknown_p = sorted(set(params) - set(METHODS[name].defaults))
        if unknown_p:
            raise UsageError(f"{path.name}: [methods.{label}]: unknown parameter(s) {unknown_p} for {name}; "
                             f"accepted: {', '.join(METHODS[name].defaults) or 'none'}")
        methods[label] = (name, params)
    retries = bench.get("retries")
    return {"seeds": seeds, "grid": grid, "methods": methods, "out": bench.get("out"), "retries": retries}


def bench_tasks(config):
    """Tasks of a bench config: every method x data setting x seed (see :func:`load_bench_config`)."""
    from .executor import make_task, synthetic_task

    tasks = []
    for label, (name, params) in config["methods"].items():
        for spec in config["grid"]:
            for seed in config["seeds"]:
                tasks.append(make_task(synthetic_task, method=name, params=params, dataset=spec, seed=seed,
                                       meta={"label": label}))
    return tasks


def summarize(df, metrics=SUMMARY_METRICS):
    """Mean, std and count of each metric per method label and data setting.

    Parameters
    ----------
    df : pandas.DataFrame
        Tidy results (one row per run) with ``label``, the setting columns,
        ``status`` and metric columns.
    metrics : sequence of str

    Returns
    -------
    long : pandas.DataFrame
        Columns: setting columns, ``label``, ``metric``, ``mean``, ``std``,
        ``n`` (successful runs), ``n_failed``.
    """
    settings = [c for c in SETTING_COLUMNS if c in df.columns]
    # (low, high) pairs arrive as lists (JSON); tuples can be grouped on.
    df = df.assign(**{c: df[c].map(lambda v: tuple(v) if isinstance(v, list) else v)
                      for c in settings if c in _PAIR_SETTINGS})
    ok = df[df["status"] == "ok"] if "status" in df.columns else df
    metrics = [m for m in metrics if m in df.columns]
    long = ok.melt(id_vars=settings + ["label"], value_vars=metrics, var_name="metric")
    long["value"] = pd.to_numeric(long["value"], errors="coerce")
    out = (long.groupby(settings + ["label", "metric"], sort=False, dropna=False)["value"]
           .agg(mean="mean", std="std", n="count").reset_index())
    failed = (df[df["status"] != "ok"].groupby(settings + ["label"], dropna=False).size()
              .rename("n_failed").reset_index()) if "status" in df.columns else None
    if failed is not None and len(failed):
        out = out.merge(failed, on=settings + ["label"], how="left")
    out["n_failed"] = out.get("n_failed", pd.Series(0, index=out.index)).fillna(0).astype(int)
    return out


def paper_layout(summary):
    """Text tables in the paper's layout: one block per metric, rows = settings, columns = methods.

    Parameters
    ----------
    summary : pandas.DataFrame
        Output of :func:`summarize`.

    Returns
    -------
    str
        Cells read ``mean ± std`` over seeds.
    """
    # Rows: the settings that vary in this sweep (n_nodes when none does).
    settings = [c for c in SETTING_COLUMNS if c in summary.columns and summary[c].nunique(dropna=False) > 1]
    settings = settings or ["n_nodes"]
    blocks = []
    for metric, part in summary.groupby("metric", sort=False):
        cell = part.assign(cell=[f"{m:.3g} ± {s:.2g}" if pd.notna(s) else (f"{m:.3g}" if pd.notna(m) else "—")
                                 for m, s in zip(part["mean"], part["std"])])
        table = cell.pivot_table(index=settings, columns="label", values="cell", aggfunc="first", sort=False)
        blocks.append(f"== {metric} (mean ± std over seeds) ==\n{table.to_string()}\n")
    return "\n".join(blocks)


def _cmd_bench(args):
    from .executor import ResultStore, run_sweep
    from .manifest import environment_info

    config = load_bench_config(args.config)
    if args.out is not None:
        out = args.out
    elif config["out"]:
        out = args.config.parent / config["out"]  # relative to the config file (absolute stays)
    else:
        out = args.config.with_name(args.config.stem + "_results")
    retries = next(r for r in (args.retries, config["retries"], 3) if r is not None)
    if not isinstance(retries, int) or retries < 0:
        raise UsageError(f"retries must be an integer >= 0, got {retries!r}")
    tasks = bench_tasks(config)
    out.mkdir(parents=True, exist_ok=True)
    store = ResultStore(out / "results.jsonl")
    bar = ProgressBar(len(tasks), label="bench")
    failures = []

    def progress(done, total, row):
        if row.get("status") != "ok":
            failures.append(row)
        bar.update(done, suffix=f"{done}/{total} {row.get('label', '')}")
        return False

    address = args.scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS") or None
    where = f"Dask scheduler {address}" if address else f"joblib (n_jobs={args.jobs})"
    print(f"bench: {len(tasks)} runs ({len(config['methods'])} methods x {len(config['grid'])} settings x "
          f"{len(config['seeds'])} seeds) on {where}; results in {out}", file=sys.stderr)
    t0 = time.perf_counter()
    try:
        res = run_sweep(tasks, store=store, scheduler=address, n_jobs=args.jobs, retries=retries,
                        callback=progress)
    except OSError as exc:
        raise UsageError(str(exc)) from None
    finally:
        bar.close()
    wall = time.perf_counter() - t0
    df = res.to_frame()
    if "W" in df.columns:
        df = df.drop(columns=["W"])
    df.to_parquet(out / "results.parquet", index=False)
    df.to_csv(out / "results.csv", index=False)
    summary = summarize(df)
    summary.to_csv(out / "summary.csv", index=False)
    (out / "summary.txt").write_text(paper_layout(summary))
    meta = {"config": str(args.config), "n_runs": len(res.rows), "n_computed": res.n_computed,
            "n_cached": res.n_cached, "n_resubmitted": res.n_resubmitted, "n_failed": int((df["status"] != "ok").sum()),
            "backend": res.backend, "scheduler": address, "wall_seconds": wall,
            "runs_per_second": (res.n_computed / wall) if wall > 0 else None,
            "environment": environment_info()}
    (out / "bench.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"bench: {res.n_computed} runs computed, {res.n_cached} reused, {meta['n_failed']} failed, "
          f"in {wall:.1f} s; wrote results.parquet, results.csv, summary.csv, summary.txt, bench.json to {out}")
    for row in failures[:5]:
        print(f"failed: {row.get('label')} seed={row.get('seed')}: {row.get('error')}", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------------------------
# entry point
# --------------------------------------------------------------------------------------------

def main(argv=None):
    """Run the CLI; returns the exit status (0 ok, 1 run failed, 2 usage error, 130 interrupted).

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name (default ``sys.argv[1:]``).
    """
    parser = build_parser()
    args = parser.parse_args(argv)  # exits with status 2 on bad arguments
    commands = {"fit": _cmd_fit, "simulate": _cmd_simulate, "bench": _cmd_bench}
    try:
        return commands[args.command](args)
    except UsageError as exc:
        parser.exit(2, f"{PROG} {args.command}: error: {exc}\n")
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        return 130
    except (ValueError, FloatingPointError, RuntimeError, OSError) as exc:
        print(f"{PROG} {args.command}: failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
