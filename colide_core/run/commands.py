"""The bodies of the CLI's commands ``fit``, ``simulate`` and ``bench``.

:func:`colide_core.run.cli.main` parses the arguments (:func:`colide_core.run.cli.build_parser`)
and calls one of :func:`cmd_fit`, :func:`cmd_simulate`, :func:`cmd_bench` here, or
:func:`~colide_core.run.design_commands.cmd_report`, ``cmd_predict`` and ``cmd_plan`` (the
commands that use a fit with its design, :mod:`colide_core.run.design_commands`, re-exported
here), which read the inputs through :mod:`colide_core.run.inputs` (the data, ``--truth``,
``--prior``, ``--targets``, ``--manifest``), check every output before any work
(:class:`colide_core.run.outputs.OutputDir`), run, and write. The library is imported inside each
command, so that ``--help`` imports no solver. What each command writes, and the rules for files
and limits, are in :mod:`colide_core.run.cli`.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from colide_core.run.bench_config import (BENCH_MARKER, BENCH_OUTPUTS, bench_tasks, load_bench_config,
                                          paper_layout, summarize)
from colide_core.run.design_commands import (  # noqa: F401 - re-exported: the commands' names, as before the split
    cmd_plan, cmd_predict, cmd_report, plan_table)
from colide_core.run.inputs import (  # noqa: F401 - re-exported
    _check_device, _check_targets_need_conditions, _read_data, _read_data_frame, _read_prior,
    _read_targets_file, _read_truth, check_given_settings, prepare_data, prior_flag, transform_steps)
from colide_core.run.outputs import OutputDir, ProgressBar, RunFailed, UsageError, _csv_text, _printable, _same_file


# --------------------------------------------------------------------------------------------
# fit
# --------------------------------------------------------------------------------------------

def _fit_inputs(args):
    """The files ``fit`` reads: the data (every file of a ``--stats`` glob) and ``--truth``."""
    inputs = []
    if args.stats:
        from colide_core.data.stats import _resolve_files

        try:
            inputs += [Path(p) for p in _resolve_files(args.data)[1]]
        except (FileNotFoundError, ValueError) as exc:
            raise UsageError(f"{args.data}: {exc}") from None
    else:
        inputs.append(Path(args.data))
    if args.truth is not None:
        inputs.append(args.truth)
    if getattr(args, "targets", None) is not None:
        inputs.append(args.targets)
    if getattr(args, "prior", None) is not None:
        inputs.append(args.prior)
    return inputs


def cmd_fit(args, settings, echo):
    """``fit DATA --out DIR``: learn a DAG with CoLiDE and write its files and manifest.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``fit`` arguments (:func:`colide_core.run.cli.build_parser`).
    settings : dict
        The run settings given on the command line (:func:`colide_core.run.cli._settings_of`).
    echo : callable
        ``echo(text, err=False)``: how the command speaks to its user (the CLI passes a writer to
        stdout, or stderr with ``err=True``); the library itself never prints.

    Returns
    -------
    int
        0.

    Raises
    ------
    UsageError
        For a bad setting, file, data or output, before any solving where it can be known.
    """
    from colide_core import CoLiDE, progress_fraction
    from colide_core._params import InvalidParameterError
    from colide_core.graph.export import export_graph, EXPORT_FORMATS, to_adjacency_csv, to_edge_list_csv
    from colide_core.run.manifest import build_manifest, manifest_to_json

    bad = [fmt for fmt in args.export if fmt not in EXPORT_FORMATS]
    if bad:
        raise UsageError(f"--export: unknown format(s) {', '.join(bad)}; choose from {', '.join(EXPORT_FORMATS)}")
    exports = list(dict.fromkeys(args.export))
    if args.transform is not None and args.stats:
        raise UsageError("--transform cannot be combined with --stats (the statistics are of the raw data)")
    steps = transform_steps(args)  # a bad --cofactor is refused before any file is read
    _check_targets_need_conditions(args)
    if args.conditions is not None and args.stats:
        raise UsageError("--conditions cannot be combined with --stats yet (fit the rows)")
    check_given_settings(settings)  # a setting its solver ignores is refused, not dropped in silence
    t_start = time.perf_counter()
    prior = prior_flag(args)
    model = CoLiDE(**settings, **prior)
    try:  # every setting, before any file is read (the checks across settings: stages, sizes)
        run = model.get_run_settings()
    except InvalidParameterError as exc:
        raise UsageError(str(exc)) from None
    _check_device(run.device, run.solver)
    # Every output, checked before any work: none exists (or --force), none is an input.
    out = OutputDir(args.out, force=args.force, inputs=_fit_inputs(args))
    outputs = ["edges.csv", "W.csv", "adjacency.csv"] + (["sigma.csv"] if run.variant != "ls" else [])
    outputs += ["graph" + EXPORT_FORMATS[fmt][0] for fmt in exports] + ["manifest.json"]
    out.check(outputs)

    bar = ProgressBar(1.0, label="fit")
    n_stages = len(run.max_iter)

    def progress(stage, iteration, objective):
        if stage >= n_stages:  # CoLiDE-TOPO's search after the continuous start: swaps accepted
            bar.update(1.0, suffix=f"TOPO swaps {iteration} score {objective:.4g}")
            return False
        frac = progress_fraction(run.max_iter, stage, iteration)
        bar.update(frac, suffix=f"stage {stage + 1}/{n_stages} obj {objective:.4g}")
        return False

    if args.stats:
        from colide_core.data.stats import sufficient_stats

        try:
            n, _, cov, names = sufficient_stats(args.data, columns=args.columns, return_columns=True)
        except (FileNotFoundError, ValueError) as exc:
            raise UsageError(f"{args.data}: {exc}") from None
        data_kw = {"cov": cov, "n": n}
        B_true = _read_truth(args.truth, names) if args.truth is not None else None
        try:
            model.fit_from_stats(cov, n, callback=progress, node_names=names)
        finally:
            bar.close()
        shape = (n, len(names))
    else:
        prepared = prepare_data(args)  # the one reader of fit, report, predict and plan
        labels, targets = prepared.labels, prepared.targets
        for w in prepared.warnings:
            echo(f"warning: {_printable(w)}", err=True)
        X = prepared.X
        names = list(X.columns)
        data_kw = {"X": X}
        B_true = _read_truth(args.truth, names) if args.truth is not None else None
        try:
            if labels is None:
                model.fit(X, callback=progress)
            else:
                from colide_core.exceptions import ConditionsError

                try:
                    model.fit(X, conditions=labels, targets=targets, callback=progress)
                except ConditionsError as exc:
                    raise UsageError(f"--conditions/--targets: {exc}") from None
                data_kw.update(conditions=labels, conditions_column=args.conditions)
        finally:
            bar.close()
        shape = X.shape

    out.write("edges.csv", to_edge_list_csv(model.adjacency_, names))
    out.write("W.csv", to_adjacency_csv(model.W_, names))
    out.write("adjacency.csv", to_adjacency_csv(model.adjacency_, names))
    written = ["edges.csv", "W.csv", "adjacency.csv"]
    if model.sigma_ is not None:
        sig = np.broadcast_to(np.asarray(model.sigma_, dtype=float), (len(names),))
        out.write("sigma.csv", _csv_text(pd.DataFrame({"node": names, "sigma": sig})))
        written.append("sigma.csv")
    for fmt in exports:
        name = "graph" + EXPORT_FORMATS[fmt][0]  # graph.graphml, graph_edges.csv, ...
        out.write(name, export_graph(model.adjacency_, names, fmt))
        written.append(name)
    manifest = build_manifest(model, **data_kw, B_true=B_true, data_source=str(args.data),
                              wall_time=time.perf_counter() - t_start,
                              extra={"command": "fit", "argv": sys.argv[1:],
                                     **({} if args.stats else {"preprocess": prepared.preprocess})},
                              transform=steps or None)
    out.write("manifest.json", manifest_to_json(manifest))
    written.append("manifest.json")
    if not args.quiet:
        n_edges = int(np.count_nonzero(model.adjacency_))
        echo(f"learned {n_edges} edge{'' if n_edges == 1 else 's'} among {len(names)} nodes from {shape[0]} samples "
              f"in {model.fit_time_:.2f} s ({model.n_iter_} {'swaps' if run.solver == 'topo' else 'iterations'}"
              f"{', stopped early' if model.stopped_ else ''})")
        choice = getattr(model.result_, "choice", None)
        if choice:  # solver="auto": which optimum won, and why the order search ran or not (issue 51)
            objs = ", ".join(f"{k} {v:.6g}" for k, v in choice["candidates"].items())
            echo(f"solver auto: {choice['solver']} won (objectives: {objs}); {choice['reason']}")
        if manifest["results"]["metrics"]:
            m = manifest["results"]["metrics"]
            echo("metrics: " + ", ".join(f"{k}={m[k]:.3g}" if isinstance(m[k], float) else f"{k}={m[k]}"
                                         for k in ("shd", "tpr", "fdr", "sid") if k in m))  # no float noise (m-4)
        echo(f"wrote {', '.join(written)} to {_printable(out.path)}")
    return 0


# --------------------------------------------------------------------------------------------
# simulate
# --------------------------------------------------------------------------------------------

def cmd_simulate(args, echo):
    """``simulate --out DIR``: write a synthetic dataset (:func:`colide_core.data.simulate.simulate_dataset`).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``simulate`` arguments.
    echo : callable
        ``echo(text, err=False)``: how the command speaks to its user (the CLI passes a writer to
        stdout, or stderr with ``err=True``); the library itself never prints.

    Returns
    -------
    int
        0.

    Raises
    ------
    UsageError
        For a setting outside the simulation's limits or an output that may not be written.
    """
    if getattr(args, "network", None):
        return _simulate_network(args, echo)
    from colide_core.graph.export import to_adjacency_csv, to_csv_safe
    from colide_core.run.manifest import environment_info
    from colide_core.data.simulate import check_interventions, check_spec, simulate_dataset

    spec = {"graph": args.graph, "degree": args.degree, "n_nodes": args.nodes, "n_samples": args.samples,
            "noise": args.noise, "variance": args.variance, "noise_var": args.noise_var,
            "noise_var_range": args.noise_var_range, "w_range": args.w_range, "standardize": args.standardize}
    names = [f"X{i + 1}" for i in range(args.nodes)]
    interventions = _simulate_interventions(args, names)
    try:  # the protocol's own checks and size limits, before any work
        check_interventions(interventions, check_spec(spec)["n_nodes"], args.samples)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    data_name = "data.csv" if args.format == "csv" else "data.parquet"
    files = [data_name, "B_true.csv", "W_true.csv", "noise_std.csv", "simulation.json"]
    if interventions:
        files.insert(-1, "targets.json")
    out = OutputDir(args.out, force=args.force)
    out.check(files)
    sim = simulate_dataset(spec, args.seed, interventions=interventions)
    df = pd.DataFrame(sim.X, columns=names)
    if sim.conditions is not None:  # the condition column last; targets by node name
        df["condition"] = sim.conditions
        targets = {label: [names[j] for j in nodes] for label, nodes in sim.targets.items()}
        out.write("targets.json", json.dumps(targets, indent=1) + "\n")
    if args.format == "csv":
        out.write(data_name, lambda fh: to_csv_safe(df, fh, index=False))
    else:
        out.write(data_name, lambda fh: df.to_parquet(fh, index=False))
    out.write("B_true.csv", to_adjacency_csv(sim.B_true, names))
    out.write("W_true.csv", to_adjacency_csv(sim.W_true, names))
    out.write("noise_std.csv", _csv_text(pd.DataFrame({"node": names, "noise_std": sim.noise_std})))
    meta = {"spec": sim.spec, "seed": args.seed, "n_edges": int(np.count_nonzero(sim.B_true)),
            "files": files[:-1], "environment": environment_info()}
    out.write("simulation.json", json.dumps(meta, indent=1) + "\n")
    extra = "" if sim.conditions is None else \
        f" and {len(sim.targets) - 1} interventional conditions of {interventions.get('n_per_condition') or args.samples}"
    echo(f"simulated {args.samples} samples{extra} of a {args.graph.upper()}{args.degree:g} DAG with "
          f"{args.nodes} nodes and {meta['n_edges']} edges ({args.noise} noise, {args.variance}); "
          f"wrote {', '.join(files)} to {_printable(out.path)}")
    return 0


def _simulate_network(args, echo):
    """``simulate --network NAME --out DIR``: rows of a bnlearn network, written as ``simulate`` writes.

    Draws ``--samples`` observational rows (and the interventional conditions of ``--interventions`` /
    ``--intervene``, named by the network's nodes) with
    :func:`colide_core.data.networks.load_network` and writes ``data.csv`` (or ``.parquet``; columns
    the node names, then ``condition``), ``B_true.csv``, ``W_true.csv``, ``noise_std.csv`` (the
    square roots of the network's residual variances), ``targets.json`` with conditions, and
    ``simulation.json`` (``spec`` from ``load_network``, ``network`` with its title and source, and
    the ``intercepts`` by node). Everything is in the network's own units.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``simulate`` arguments, ``args.network`` set.
    echo : callable
        ``echo(text, err=False)``, as for :func:`cmd_simulate`.

    Returns
    -------
    int
        0.

    Raises
    ------
    UsageError
        For a flag that shapes a random SEM (``--nodes``, ``--degree``, ``--graph``, ``--noise``,
        ``--variance``, ``--noise-var``, ``--noise-var-range``, ``--w-range``, ``--standardize``)
        given a value other than its default, an unknown node in ``--intervene``, a size or
        intervention outside the limits, an output that may not be written, or a missing
        ``networks`` extra (the message says ``pip install 'colide-dashboard[networks]'``).
    """
    from colide_core.data.networks import NETWORKS, load_network, read_network
    from colide_core.exceptions import MissingExtraError
    from colide_core.graph.export import to_adjacency_csv, to_csv_safe
    from colide_core.run.manifest import environment_info

    plain = getattr(args, "random_sem_defaults", {})  # the parser's defaults of those flags (cli.RANDOM_SEM_FLAGS)
    given = ["--" + key.replace("_", "-") for key, default in plain.items() if getattr(args, key) != default]
    if given:
        raise UsageError(f"{', '.join(given)} shape(s) a random SEM; --network {args.network} draws the network's own "
                         "graph and SEM: leave them out (standardise at fit time: fit --transform standardize)")
    try:
        names = list(read_network(args.network).nodes)
    except MissingExtraError as exc:
        raise UsageError(str(exc)) from None
    if args.intervene is not None:
        unknown = [v.strip() for text in args.intervene for v in text.split(",") if v.strip() and v.strip() not in names]
        if unknown:
            raise UsageError(f"--intervene names unknown node(s) {[_printable(v) for v in unknown[:3]]}: the nodes "
                             f"of {args.network} are {', '.join(names[:4])}, ... ({len(names)} in all)")
    interventions = _simulate_interventions(args, names)
    data_name = "data.csv" if args.format == "csv" else "data.parquet"
    files = [data_name, "B_true.csv", "W_true.csv", "noise_std.csv", "simulation.json"]
    if interventions:
        files.insert(-1, "targets.json")
    try:  # the sizes and interventions are checked before any file is written
        data = load_network(args.network, args.samples, args.seed, interventions=interventions)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    out = OutputDir(args.out, force=args.force)
    out.check(files)
    df = data.X.copy()
    if data.conditions is not None:
        df["condition"] = data.conditions
        out.write("targets.json", json.dumps(data.targets, indent=1) + "\n")
    if args.format == "csv":
        out.write(data_name, lambda fh: to_csv_safe(df, fh, index=False))
    else:
        out.write(data_name, lambda fh: df.to_parquet(fh, index=False))
    out.write("B_true.csv", to_adjacency_csv(data.B_true, names))
    out.write("W_true.csv", to_adjacency_csv(data.W_true, names))
    out.write("noise_std.csv", _csv_text(pd.DataFrame({"node": names, "noise_std": data.noise_std})))
    info = NETWORKS[args.network]
    meta = {"spec": data.spec, "seed": args.seed, "n_edges": int(np.count_nonzero(data.B_true)),
            "network": {"name": args.network, "title": info.title, "source": info.source},
            "intercepts": dict(zip(names, data.intercepts.tolist())),
            "files": files[:-1], "environment": environment_info()}
    out.write("simulation.json", json.dumps(meta, indent=1) + "\n")
    extra = "" if data.conditions is None else \
        f" and {len(data.targets) - 1} interventional conditions of {interventions.get('n_per_condition') or args.samples}"
    echo(f"drew {args.samples} samples{extra} of the bnlearn network {args.network} ({len(names)} nodes, "
         f"{meta['n_edges']} arcs); wrote {', '.join(files)} to {_printable(out.path)}")
    return 0


def _simulate_interventions(args, names):
    """The ``interventions`` mapping of ``simulate_dataset`` from the ``simulate`` flags (None: none).

    ``--intervene`` names nodes as the data file does (X1..Xd); an unknown name is a UsageError.
    """
    if args.intervene is None and not args.interventions:
        return None
    iv = {"n_targets": args.targets_per_condition, "mean_shift": args.mean_shift,
          "n_per_condition": args.per_condition}
    if args.interventions is not None:
        iv["n_conditions"] = args.interventions
    if args.intervene is not None:
        index = {name: j for j, name in enumerate(names)}
        targets = []
        for text in args.intervene:
            nodes = [v.strip() for v in text.split(",") if v.strip()]
            unknown = [v for v in nodes if v not in index]
            if unknown:
                raise UsageError(f"--intervene names unknown node(s) {unknown[:3]}: the nodes are X1..X{len(names)}")
            targets.append([index[v] for v in nodes])
        iv["targets"] = targets
    return iv


def cmd_bench(args, echo):
    """``bench CONFIG.toml``: run (or resume) a sweep and write its results and summaries.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``bench`` arguments.
    echo : callable
        ``echo(text, err=False)``: how the command speaks to its user (the CLI passes a writer to
        stdout, or stderr with ``err=True``); the library itself never prints.

    Returns
    -------
    int
        0.

    Raises
    ------
    UsageError
        For a bad config (:func:`colide_core.run.bench_config.load_bench_config`) or output folder.
    RunFailed
        When the workers keep dying or another sweep holds the results file.
    """
    from colide_core.run.executor import ResultStore, run_sweep
    from colide_core.run.manifest import environment_info

    config = load_bench_config(args.config)
    if args.device is not None:  # every CoLiDE method on this device (the task keys record it)
        for name, params in config["methods"].values():
            if name in ("CoLiDE-EV", "CoLiDE-NV"):
                params["device"] = args.device
    if args.out is not None:
        out_path = args.out
    elif config["out"]:
        out_path = args.config.parent / config["out"]  # relative to the config file, never above it
        # issue 30: '..' is refused by name, and a symbolic link along the path must not lead out either
        base = args.config.parent.resolve()
        if not out_path.resolve().is_relative_to(base):
            raise UsageError(f"{args.config.name}: [bench].out {_printable(repr(config['out']))} leads outside the "
                             "config's directory (through a symbolic link); give another place with --out")
    else:
        out_path = args.config.with_name(args.config.stem + "_results")
    retries = next(r for r in (args.retries, config["retries"], 3) if r is not None)
    store_path = out_path / "results.jsonl"
    for name in ("results.jsonl", "results.jsonl.lock"):
        if (out_path / name).is_symlink():
            raise UsageError(f"{out_path / name} is a symbolic link; bench writes only inside {out_path}")
    # A directory holding our marker and results.jsonl is this bench's own: resuming rewrites the
    # summaries derived from it. Anywhere else an existing output needs --force (then a foreign
    # results.jsonl is replaced, never appended to). The config is never written over.
    marker = out_path / BENCH_MARKER
    resume = store_path.is_file() and marker.is_file() and not marker.is_symlink()
    if store_path.exists() and not resume and not args.force:
        raise UsageError(f"{store_path} exists but is not a colide bench sweep (no {BENCH_MARKER}); pass --force "
                         "to replace it, or choose another --out")
    out = OutputDir(out_path, force=args.force, inputs=[args.config],
                    replaceable=BENCH_OUTPUTS if resume else ())
    out.check(BENCH_OUTPUTS if resume else BENCH_OUTPUTS + ("results.jsonl", BENCH_MARKER))
    for name in ("results.jsonl", "results.jsonl.lock"):
        if _same_file(out_path / name, args.config):
            raise UsageError(f"refusing to write {out_path / name}: it is the config file")
    tasks = bench_tasks(config)
    out_path.mkdir(parents=True, exist_ok=True)
    if not resume:
        if store_path.exists():  # --force over a results.jsonl that is not ours
            store_path.unlink()
        out.write(BENCH_MARKER, json.dumps({"format": "colide-bench-sweep", "version": 1}) + "\n")
    store = ResultStore(store_path)
    bar = ProgressBar(len(tasks), label="bench")
    failures = []

    def progress(done, total, row):
        if row.get("status") != "ok":
            failures.append(row)
        bar.update(done, suffix=f"{done}/{total} {row.get('label', '')}")
        return False

    address = args.scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS") or None
    where = f"Dask scheduler {address}" if address else f"joblib (n_jobs={args.jobs})"
    echo(_printable(f"bench: {len(tasks)} runs ({len(config['methods'])} methods x {len(config['grid'])} settings "
                     f"x {len(config['seeds'])} seeds) on {where}; results in {out_path}"), err=True)
    echo(_bench_design_line(config), err=True)
    t0 = time.perf_counter()
    try:
        res = run_sweep(tasks, store=store, scheduler=address, n_jobs=args.jobs, retries=retries,
                        callback=progress)
    except OSError as exc:
        raise UsageError(str(exc)) from None
    except RuntimeError as exc:  # workers kept dying, or another sweep holds the store
        raise RunFailed(str(exc)) from None
    finally:
        bar.close()
    wall = time.perf_counter() - t0
    df = res.to_frame()
    if "W" in df.columns:
        df = df.drop(columns=["W"])
    out.write("results.parquet", lambda fh: df.to_parquet(fh, index=False))
    out.write("results.csv", _csv_text(df))
    summary = summarize(df)
    out.write("summary.csv", _csv_text(summary))
    out.write("summary.txt", paper_layout(summary))
    meta = {"config": str(args.config), "n_runs": len(res.rows), "n_computed": res.n_computed,
            "n_cached": res.n_cached, "n_resubmitted": res.n_resubmitted, "n_failed": int((df["status"] != "ok").sum()),
            "backend": res.backend, "scheduler": address, "wall_seconds": wall,
            "runs_per_second": (res.n_computed / wall) if wall > 0 else None,
            "environment": environment_info()}
    out.write("bench.json", json.dumps(meta, indent=1) + "\n")
    echo(f"bench: {res.n_computed} runs computed, {res.n_cached} reused, {meta['n_failed']} failed, "
          f"in {wall:.1f} s; wrote {', '.join(BENCH_OUTPUTS)} to {_printable(out_path)}")
    for row in failures[:5]:
        echo(_printable(f"failed: {row.get('label')} seed={row.get('seed')}: {row.get('error')}"), err=True)
    return 0


def _bench_design_line(config) -> str:
    """What a bench does with the experimental design, in one line (and in ``results``' ``design``)."""
    from colide_core.evaluation.baselines import METHODS

    iv = config.get("interventions")
    if not iv:
        return "bench: design: one observational condition per dataset (no [interventions] table)"
    using = sorted({name for name, _ in config["methods"].values() if METHODS[name].accepts_conditions})
    centred = sorted({name for name, _ in config["methods"].values() if not METHODS[name].accepts_conditions})
    line = (f"bench: design: {iv.get('n_conditions') or len(iv.get('targets') or ())} interventional conditions "
            "per dataset; " + (f"{', '.join(using)} fit with the conditions and targets" if using else ""))
    if centred:
        line += ("; " if using else "") + f"{', '.join(centred)} cannot: rows centred within each condition"
    return line
