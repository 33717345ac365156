"""The ``bench`` command's TOML schema and its summaries (:mod:`colide_core.run.cli`).

* :func:`load_bench_config` reads and checks a bench TOML file (``[bench]``, ``[data]``,
  ``[interventions]``, ``[methods.NAME]``): unknown tables and keys, the data settings through
  :func:`colide_core.data.simulate.check_spec`, each CoLiDE method's settings through the
  estimator's own checks, and the sweep's size against ``defaults.MAX_SWEEP_RUNS``, all before
  any run;
* :func:`bench_tasks` expands a config into the sweep's tasks (method x data setting x seed);
* :func:`summarize` and :func:`paper_layout` write ``summary.csv`` and ``summary.txt`` (mean +-
  std per method, the paper's layout).
"""
from __future__ import annotations

import itertools
import math
import tomllib
from pathlib import Path

import pandas as pd

from colide_core import defaults
from colide_core.run.outputs import UsageError, _printable, check_plain_name


SETTING_COLUMNS = ("graph", "degree", "n_nodes", "n_samples", "noise", "variance", "noise_var",
                   "noise_var_range", "w_range", "standardize", "n_conditions")
#: [data] settings whose one value is a (low, high) pair: a list of pairs is a grid axis.
_PAIR_SETTINGS = ("noise_var_range", "w_range")
SUMMARY_METRICS = ("shd", "shd_norm", "shd_cpdag_norm", "sid_norm", "tpr", "fdr", "nnz", "sigma_rel_err", "time_s")

#: How each summary metric is titled in ``summary.txt``: the normalised distances say so (the
#: dashboard's Compare page shows raw SHD; issue 28 found the two unlabelled side by side).
METRIC_TITLES = {"shd": "SHD (raw count of edge errors, as on the Compare page)",
                 "shd_norm": "SHD / d (divided by the number of nodes, as in the paper's figures)",
                 "shd_cpdag_norm": "SHD-C / d (CPDAG distance divided by the number of nodes)",
                 "sid_norm": "SID / d (divided by the number of nodes)",
                 "tpr": "TPR", "fdr": "FDR", "nnz": "NNZ (edges learned)",
                 "sigma_rel_err": "relative error of the noise scale", "time_s": "fit time (s)"}


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
        parameters, empty grids, a data setting outside :func:`colide_core.data.simulate.check_spec`
        (and its size limits), CoLiDE parameters its own checks refuse, a sweep of more than
        ``MAX_SWEEP_RUNS`` runs (counted before the grid is built), a method label that is not a
        plain printable name, or a ``[bench].out`` that is absolute or holds ``..``. Messages
        name the offending key.
    """
    from colide_core.evaluation.baselines import METHODS
    from colide_core.run.executor import MAX_RETRIES
    from colide_core.data.simulate import DATASET_DEFAULTS, check_spec

    if not path.is_file():
        raise UsageError(f"config file not found: {path}")
    try:
        cfg = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path.name}: invalid TOML: {exc}") from None
    unknown = set(cfg) - {"bench", "data", "interventions", "methods"}
    if unknown:
        raise UsageError(f"{path.name}: unknown table(s) {sorted(unknown)}; expected [bench], [data], "
                         "[interventions], [methods.NAME]")
    bench = cfg.get("bench", {})
    bad = set(bench) - {"seeds", "n_seeds", "out", "retries", "name"}
    if bad:
        raise UsageError(f"{path.name}: unknown key(s) in [bench]: {sorted(bad)}")
    def is_int(x):
        return isinstance(x, int) and not isinstance(x, bool)

    if "seeds" in bench:
        seeds = bench["seeds"]
        if (not isinstance(seeds, list) or not seeds
                or not all(is_int(x) and 0 <= x < 2**32 for x in seeds)):
            raise UsageError(f"{path.name}: [bench].seeds must be a non-empty list of integers in [0, 2**32)")
        n_seeds = len(seeds)
    else:
        n_seeds = bench.get("n_seeds", 1)
        if not is_int(n_seeds) or n_seeds < 1:
            raise UsageError(f"{path.name}: [bench].n_seeds must be an integer >= 1")
        seeds = None  # built once the size of the sweep is known to be within the limit
    if "name" in bench:
        check_plain_name(bench["name"], f"{path.name}: [bench].name")
    out_dir = bench.get("out")
    if out_dir is not None:
        if not isinstance(out_dir, str) or not out_dir.strip():
            raise UsageError(f"{path.name}: [bench].out must be a directory name (a string)")
        parts = Path(out_dir).parts
        if Path(out_dir).is_absolute() or ".." in parts or "\\" in out_dir or any(
                not c.isprintable() for c in out_dir):
            raise UsageError(f"{path.name}: [bench].out {_printable(repr(out_dir))} must be a relative path inside "
                             "the config's directory (no '..', not absolute); give another place with --out")
    retries = bench.get("retries")
    if retries is not None and not (is_int(retries) and 0 <= retries <= MAX_RETRIES):
        raise UsageError(f"{path.name}: [bench].retries must be an integer in [0, {MAX_RETRIES}], got {retries!r}")

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
    methods_cfg = cfg.get("methods", {})
    # The size of the sweep, from the lengths alone: nothing is built before it is known.
    n_settings = math.prod(len(v) for v in axes.values())
    n_runs = max(len(methods_cfg), 1) * n_settings * n_seeds
    if n_runs > defaults.MAX_SWEEP_RUNS:
        raise UsageError(f"{path.name}: the sweep has {n_runs:,} runs ({len(methods_cfg)} methods x "
                         f"{n_settings:,} data settings x {n_seeds:,} seeds), more than the "
                         f"{defaults.MAX_SWEEP_RUNS:,} allowed (colide_core.defaults.MAX_SWEEP_RUNS); "
                         "split it into several sweeps")
    if seeds is None:
        seeds = list(range(n_seeds))
    grid = [dict(zip(axes, combo)) for combo in itertools.product(*axes.values())]
    for spec in grid:
        try:
            s = check_spec(spec)
        except ValueError as exc:
            raise UsageError(f"{path.name}: bad [data] setting {spec}: {exc}") from None
        if s["n_nodes"] < 2 or s["n_samples"] < 2:
            raise UsageError(f"{path.name}: [data] n_nodes and n_samples must be integers >= 2, got {spec}")
    interventions = _interventions(path, cfg.get("interventions"), grid)

    if not methods_cfg:
        raise UsageError(f"{path.name}: no methods: add at least one [methods.NAME] table "
                         f"(registered: {', '.join(METHODS)})")
    methods = {}
    for label, table in methods_cfg.items():
        check_plain_name(label, f"{path.name}: method label")
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
        if name in ("CoLiDE-EV", "CoLiDE-NV"):  # the estimator's own checks, before any run
            from colide_core.solver._estimator import CoLiDE
            from colide_core._params import InvalidParameterError

            try:
                CoLiDE(name[-2:].lower(), **{**METHODS[name].defaults, **params}).get_run_settings()
            except InvalidParameterError as exc:
                raise UsageError(f"{path.name}: [methods.{label}]: {exc}") from None
        methods[label] = (name, params)
    return {"seeds": seeds, "grid": grid, "methods": methods, "out": out_dir, "retries": retries,
            "interventions": interventions}


def _interventions(path, table, grid):
    """The ``[interventions]`` table, checked against every data setting, or None.

    Its keys are :data:`colide_core.data.simulate.INTERVENTION_DEFAULTS`' (one value each, no
    grid): every dataset then adds that many conditions of hard interventions, and the methods
    that can use the design fit with the conditions and targets (the others run on the rows
    centred within each condition; the ``design`` column of ``results`` says which).
    """
    from colide_core.data.simulate import INTERVENTION_DEFAULTS, check_interventions, check_spec

    if table is None:
        return None
    if not isinstance(table, dict):
        raise UsageError(f"{path.name}: [interventions] must be a table")
    bad = set(table) - set(INTERVENTION_DEFAULTS)
    if bad:
        raise UsageError(f"{path.name}: unknown key(s) in [interventions]: {sorted(bad)}; "
                         f"known: {list(INTERVENTION_DEFAULTS)}")
    for spec in grid:
        s = check_spec(spec)
        try:
            check_interventions(table, s["n_nodes"], s["n_samples"])
        except ValueError as exc:
            raise UsageError(f"{path.name}: bad [interventions] for the data setting {spec}: {exc}") from None
    return dict(table) if table.get("n_conditions", 0) or table.get("targets") else None


def bench_tasks(config):
    """Tasks of a bench config: every method x data setting x seed (see :func:`load_bench_config`)."""
    from colide_core.run.executor import make_task, synthetic_task

    tasks = []
    iv = config.get("interventions")
    for label, (name, params) in config["methods"].items():
        for spec in config["grid"]:
            # the interventions are part of the dataset's identity (the task key), so a resumed sweep
            # never mixes runs of another design
            dataset = spec if iv is None else {**spec, "interventions": iv}
            for seed in config["seeds"]:
                tasks.append(make_task(synthetic_task, method=name, params=params, dataset=dataset, seed=seed,
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
        Columns: setting columns, ``label`` (with the method's use of the design in brackets
        when the data have several conditions: ``"GES [centred]"``), ``metric``, ``mean``,
        ``std``, ``n`` (successful runs), ``n_failed``.
    """
    settings = [c for c in SETTING_COLUMNS if c in df.columns]
    if "design" in df.columns:  # a method's label says how it used several conditions
        df = df.assign(label=[f"{lab} [{des}]" if isinstance(des, str) and des not in ("none", "") else lab
                              for lab, des in zip(df["label"], df["design"])])
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
        blocks.append(f"== {METRIC_TITLES.get(metric, metric)} (mean ± std over seeds) ==\n{table.to_string()}\n")
    return "\n".join(blocks)


#: Written when a sweep starts: only a folder holding it (and ``results.jsonl``) is resumed, so
#: another tool's ``results.jsonl`` and a user's ``summary.csv`` are never taken for ours.
BENCH_MARKER = ".colide-bench.json"
#: Files ``bench`` writes at the end; they are derived from ``results.jsonl``.
BENCH_OUTPUTS = ("results.parquet", "results.csv", "summary.csv", "summary.txt", "bench.json")
