"""The bodies of the CLI's commands ``fit``, ``simulate``, ``bench`` and ``report``.

:func:`colide_core.run.cli.main` parses the arguments (:func:`colide_core.run.cli.build_parser`)
and calls one of :func:`cmd_fit`, :func:`cmd_simulate`, :func:`cmd_bench` and
:func:`cmd_report`, which read the inputs (the data, ``--truth``, ``--prior``, ``--targets``),
check every output before any work (:class:`colide_core.run.outputs.OutputDir`), run, and write.
The library is imported inside each command, so that ``--help`` imports no solver. What each
command writes, and the rules for files and limits, are in :mod:`colide_core.run.cli`.
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
from colide_core.run.outputs import OutputDir, ProgressBar, RunFailed, UsageError, _csv_text, _printable, _same_file


# --------------------------------------------------------------------------------------------
# fit
# --------------------------------------------------------------------------------------------

def _read_prior(path):
    """CoLiDE keyword arguments (forbidden, required, tiers) from a constraints file or a run manifest."""
    from colide_core.data.io import JSON_MAX_BYTES
    from colide_core.graph.constraints import PriorKnowledge

    if not path.is_file():
        raise UsageError(f"--prior file not found: {path}")
    if path.stat().st_size > JSON_MAX_BYTES:
        raise UsageError(f"--prior {path.name}: larger than {JSON_MAX_BYTES:,} bytes")
    data = path.read_bytes()
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        doc = None
    if isinstance(doc, dict) and "params" in doc and "schema" in doc:  # a run manifest
        from colide_core.run.manifest import ManifestError, load_manifest

        try:
            params = load_manifest(data).params
        except ManifestError as exc:
            raise UsageError(f"--prior {path.name}: {exc}") from None
        return {k: params[k] for k in ("forbidden", "required", "tiers") if params.get(k)}
    try:
        return PriorKnowledge.from_json(data).as_kwargs()
    except ValueError as exc:
        raise UsageError(f"--prior {path.name}: {exc}") from None


def _drops(args):
    """The dropping flags of ``fit`` / ``report`` as ``validate_data`` keywords."""
    return {"drop_non_numeric": bool(getattr(args, "drop_non_numeric", False)),
            "drop_nonfinite_rows": bool(getattr(args, "drop_nonfinite_rows", False)),
            "drop_constant_columns": bool(getattr(args, "drop_constant_columns", False))}


def _read_data(path, columns, drop_non_numeric, condition_column=None, **drops):
    """The validated data; with ``condition_column``, ``(validated data, row labels)``."""
    from colide_core.data.io import DataValidationError, read_table, validate_data

    if not path.is_file():
        raise UsageError(f"data file not found: {path}")
    raw = path.read_bytes()
    try:
        df = read_table(raw, path.name, max_bytes=len(raw) + 1)
        if condition_column is not None:
            stripped = [str(x).strip() for x in df.columns]
            if stripped.count(str(condition_column).strip()) != 1:
                raise UsageError(f"--conditions: no column {_printable(condition_column)!r} (exactly one) in {path.name}")
            at = stripped.index(str(condition_column).strip())
            labels = df.iloc[:, at].copy()
            df = df.drop(columns=df.columns[at])
            vd = _read_data_frame(df, path, columns, drop_non_numeric, **drops)
            # rows dropped while validating (--drop-nonfinite-rows) take their condition labels with
            # them: the index of the validated data is the file's row numbers
            return vd, labels.loc[vd.X.index].reset_index(drop=True)
        return _read_data_frame(df, path, columns, drop_non_numeric, **drops)
    except DataValidationError as exc:
        raise UsageError(f"{path.name}: {exc}") from None


def _read_data_frame(df, path, columns, drop_non_numeric, **drops):
    from colide_core.data.io import validate_data

    if columns is not None:
        missing = [c for c in columns if c not in [str(x).strip() for x in df.columns]]
        if missing:
            raise UsageError(f"--columns: not in {path.name}: {', '.join(missing)}")
        df = df.rename(columns=lambda c: str(c).strip())[columns]
    return validate_data(df, min_rows=2, drop_non_numeric=drop_non_numeric,
                         drop_nonfinite_rows=bool(drops.get("drop_nonfinite_rows")),
                         drop_constant_columns=bool(drops.get("drop_constant_columns")))


def _read_targets_file(path):
    from colide_core import defaults
    from colide_core.data.conditions import read_targets

    if not path.is_file():
        raise UsageError(f"--targets file not found: {path}")
    if path.stat().st_size > defaults.MAX_TARGETS_FILE_BYTES:
        raise UsageError(f"--targets {path.name}: larger than {defaults.MAX_TARGETS_FILE_BYTES:,} bytes")
    try:
        return read_targets(path.read_bytes(), path.name)
    except ValueError as exc:
        raise UsageError(f"--targets {path.name}: {exc}") from None


def _read_truth(path, names):
    from colide_core.graph.export import read_graph

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


def _check_targets_need_conditions(args):
    """Refuse ``--targets`` without ``--conditions`` (``fit``, ``report``, ``predict``, ``plan``).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed arguments of a command with ``--targets`` and ``--conditions``.

    Raises
    ------
    UsageError
        When ``--targets`` is given without ``--conditions``.
    """
    if args.targets is not None and args.conditions is None:
        raise UsageError("--targets needs --conditions (the column of each row's condition)")


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
    from colide_core.data.transforms import transform_columns, transform_step

    if args.transform is not None and args.stats:
        raise UsageError("--transform cannot be combined with --stats (the statistics are of the raw data)")
    try:
        step = None if args.transform is None else transform_step(args.transform, cofactor=args.cofactor)
    except ValueError as exc:
        raise UsageError(f"--cofactor: {exc}") from None
    if step is None and args.cofactor is not None:
        raise UsageError("--cofactor applies to --transform asinh only")
    _check_targets_need_conditions(args)
    if args.conditions is not None and args.stats:
        raise UsageError("--conditions cannot be combined with --stats yet (fit the rows)")
    t_start = time.perf_counter()
    prior = {} if args.prior is None else _read_prior(args.prior)
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
        labels = targets = None
        drops = _drops(args)
        if args.conditions is None:
            vd = _read_data(Path(args.data), args.columns, **drops)
        else:
            vd, labels = _read_data(Path(args.data), args.columns, condition_column=args.conditions, **drops)
            targets = None if args.targets is None else _read_targets_file(args.targets)
        for w in vd.warnings:
            echo(f"warning: {_printable(w)}", err=True)
        X = vd.X
        if step is not None:
            try:
                X = transform_columns(X, step["kind"], cofactor=step.get("cofactor"))
            except ValueError as exc:
                raise UsageError(f"--transform {step['kind']}: {exc}") from None
        names = vd.node_names
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
                                     **({} if args.stats else {"preprocess": {
                                         **drops, "dropped_columns": [str(c) for c in vd.dropped_columns],
                                         "dropped_rows": int(vd.dropped_rows)}})},
                              transform=None if step is None else [step])
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


def _check_device(device, solver):
    """A ``--device`` this machine cannot run, as a usage error before any file is read.

    ``gpu`` without JAX or a GPU, and ``topo`` on the JAX backend, are refused here
    (:func:`colide_core.solver._jax.device_solver`); ``cpu`` never imports JAX.
    """
    if device == "cpu":
        return
    from colide_core.exceptions import DeviceNotSupportedError, DeviceUnavailableError
    from colide_core.solver._jax import device_solver

    try:
        device_solver(solver, device)
    except (DeviceUnavailableError, DeviceNotSupportedError) as exc:
        raise UsageError(f"--device {device}: {exc}") from None


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


# --------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------

def cmd_report(args, echo):
    """``report DATA --out DIR``: write ``report.html`` for a recorded or a new fit.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``report`` arguments.
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
        For bad arguments, files, a manifest that does not match the data, or conditions that do
        not fit the rows.
    MissingExtraError
        If a package of the ``dashboard`` extra that the report needs is not installed.
    """
    from colide_core import CoLiDE
    from colide_core._params import InvalidParameterError
    from colide_core.evaluation.checks import run_checks
    from colide_core.run.manifest import ManifestError, build_manifest, load_manifest
    from colide_core.graph.reference import read_reference
    from colide_core.render.report import ReportFit, build_report

    import importlib.util  # the report draws (jinja2, plotly, pyvis, matplotlib) and tests (causal-learn)
    for module in ("jinja2", "plotly", "pyvis", "matplotlib", "causallearn"):
        if importlib.util.find_spec(module) is None:  # say so before the fit, naming the extra with them all
            from colide_core.exceptions import MissingExtraError

            raise MissingExtraError(module, "the report", extra="dashboard")
    if args.truth is not None and args.reference is not None:
        raise UsageError("give --truth or --reference, not both")
    _check_targets_need_conditions(args)
    inputs = [Path(args.data)] + [p for p in (args.manifest, args.truth, args.reference, args.targets)
                                  if p is not None]
    out = OutputDir(args.out, force=args.force, inputs=inputs)
    out.check(["report.html"])
    t0 = time.perf_counter()
    # a manifest's own steps from the raw file (rows and columns dropped, transforms) come first, so that
    # `report --manifest` works for any `fit --transform ...` run (issue 28)
    man, drops, steps = None, {"drop_non_numeric": args.drop_non_numeric}, []
    if args.manifest is not None:
        if not args.manifest.is_file():
            raise UsageError(f"--manifest file not found: {args.manifest}")
        try:
            man = load_manifest(args.manifest.read_bytes())
        except (ManifestError, ValueError) as exc:
            raise UsageError(f"--manifest {args.manifest.name}: {exc}") from None
        pre = dict((man.raw.get("extra") or {}).get("preprocess") or {})
        drops = {k: bool(pre.get(k)) or bool(drops.get(k)) for k in
                 ("drop_non_numeric", "drop_nonfinite_rows", "drop_constant_columns")}
        steps = list(man.transform or [])
    labels = targets = None
    if args.conditions is None:
        if man is not None and man.conditions:
            raise UsageError(f"--manifest {args.manifest.name}: this fit was made with conditions: give --conditions "
                             "COLUMN (the column of each row's condition)")
        vd = _read_data(Path(args.data), args.columns, **drops)
    else:
        vd, labels = _read_data(Path(args.data), args.columns, condition_column=args.conditions, **drops)
        if args.targets is not None:
            targets = _read_targets_file(args.targets)
        elif man is not None and man.conditions:
            targets = {k: list(v) for k, v in (man.conditions.get("targets") or {}).items() if v} or None
    for w in vd.warnings:
        echo(f"warning: {_printable(w)}", err=True)
    X = pd.DataFrame(vd.X, columns=vd.node_names)
    if steps:
        from colide_core.data.transforms import transform_columns

        try:
            for step in steps:
                X = transform_columns(X, step["kind"], cofactor=step.get("cofactor"))
        except (KeyError, ValueError) as exc:
            raise UsageError(f"--manifest {args.manifest.name}: its transform cannot be applied: {exc}") from None
    names = vd.node_names
    B_true, label = None, "ground truth"
    if args.truth is not None:
        B_true = _read_truth(args.truth, names)
    if args.reference is not None:
        if not args.reference.is_file():
            raise UsageError(f"--reference file not found: {args.reference}")
        try:
            B_true = read_reference(args.reference.read_bytes(), args.reference.name, names).B
        except ValueError as exc:
            raise UsageError(f"--reference {args.reference.name}: {exc}") from None
        label = "your reference"
    if man is not None:
        try:
            man.check_data(X)
            man.check_design(labels, targets)  # issue 42: another design was accepted silently
            est = man.estimator()
        except (ManifestError, ValueError) as exc:
            raise UsageError(f"--manifest {args.manifest.name}: {exc}") from None
        params = est.get_params()
        fit = ReportFit(params["variant"].upper(), man.W, man.adjacency, man.sigma, params, man.raw)
        try:  # issue 30: the refits of the checks are bounded like the dashboard's (a manifest may ask for more)
            from colide_core.settings import INTERACTIVE

            est.get_run_settings(INTERACTIVE)
        except InvalidParameterError as exc:
            echo(f"warning: the manifest's settings exceed the report's limits for refits, so the standardise "
                  f"and rescaling checks are skipped: {_printable(str(exc))}", err=True)
            est = None
    else:
        est = CoLiDE(args.variant, lambda1=args.lambda1, threshold=args.threshold, random_state=args.seed)
        try:
            est.get_run_settings()
        except InvalidParameterError as exc:
            raise UsageError(str(exc)) from None
        from colide_core.exceptions import ConditionsError

        try:
            if labels is None:
                est.fit(X)
            else:
                est.fit(X, conditions=labels, targets=targets)
        except ConditionsError as exc:
            raise UsageError(f"--conditions/--targets: {exc}") from None
        fit = ReportFit(args.variant.upper(), est.W_, est.adjacency_, est.sigma_, est.get_params(),
                        build_manifest(est, X, data_source=str(args.data),
                                       extra={"command": "report", "argv": sys.argv[1:]},
                                       **({} if labels is None else
                                          {"conditions": labels, "conditions_column": args.conditions})))
    try:
        checks = run_checks(X, fit.A, W=fit.W, estimator=est, n_random=args.random_graphs,
                            n_rescale=args.rescalings, random_state=args.seed, conditions=labels, targets=targets)
    except ValueError as exc:  # conditions or targets that do not fit these rows (ConditionsError)
        if labels is None:
            raise
        raise UsageError(f"--conditions/--targets: {exc}") from None
    path = None
    if args.path:  # the fit's noise model, solver and prior knowledge along the default lambda grid
        from colide_core.solver.path import lambda_path

        path = lambda_path(X, variant=fit.params["variant"], conditions=labels, targets=targets,
                           **{k: fit.params[k] for k in ("solver", "forbidden", "required", "tiers")
                              if fit.params.get(k) is not None})
    html = build_report(X, [fit], dataset_name=Path(args.data).name, B_true=B_true, reference_label=label,
                        checks=checks, path=path, conditions=labels, targets=targets)
    target = out.write("report.html", html)
    echo(f"wrote {_printable(target)} ({len(html) / 1e6:.1f} MB) in {time.perf_counter() - t0:.1f} s: "
          + "; ".join(f"{row.check}: {row.verdict}" for row in checks.verdicts().itertuples()))
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


def _node_value(text, flag):
    """``NODE=NUMBER`` as (node, float)."""
    node, sep, value = str(text).rpartition("=")
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not sep or not node.strip() or not np.isfinite(number):
        raise UsageError(f"{flag}: expected NODE=NUMBER, got {_printable(repr(str(text)[:80]))}")
    return node.strip(), number


def cmd_predict(args, echo):
    """``predict DATA --out DIR (--do NODE=V | --shift NODE=K)``: an intervention's predicted effect.

    Fits CoLiDE on the data (with ``--conditions``/``--targets``: the design) and writes
    ``prediction.csv`` (:func:`colide_core.evaluation.interventions.predict_intervention`: every
    node's reference mean, predicted mean, shift in data units and in standard deviations, the
    bootstrap interval, and the associational shift of a regression on the node).

    Parameters
    ----------
    args : argparse.Namespace
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
        For bad arguments, files, nodes or conditions.
    """
    from colide_core import CoLiDE
    from colide_core.evaluation.interventions import predict_intervention
    from colide_core.graph.export import to_csv_safe

    _check_targets_need_conditions(args)
    if not 0 < args.level < 1:
        raise UsageError(f"--level must be in (0, 1), got {args.level}")
    node, value = _node_value(args.do if args.do is not None else args.shift, "--do" if args.do else "--shift")
    out = OutputDir(args.out, force=args.force, inputs=[Path(args.data)] + ([args.targets] if args.targets else []))
    out.check(["prediction.csv", "manifest.json"])
    X, labels, targets = _data_and_design(args)
    if node not in list(X.columns):
        raise UsageError(f"unknown node {_printable(repr(node[:60]))}: not a column of {Path(args.data).name}")
    model = CoLiDE(args.variant, lambda1=args.lambda1, threshold=args.threshold)
    from colide_core.exceptions import ConditionsError

    try:
        model.fit(X, conditions=labels, targets=targets)
    except ConditionsError as exc:
        raise UsageError(f"--conditions/--targets: {exc}") from None
    if args.shift is not None:
        rows = np.ones(len(X), dtype=bool) if labels is None else (np.asarray(labels) == np.asarray(labels)[0])
        kw = {"shift": {node: value * float(X.loc[rows, node].std(ddof=1))}}
    else:
        kw = {"do": {node: value}}
    pred = predict_intervention(model, X, conditions=labels, n_bootstrap=args.bootstrap, level=args.level,
                                random_state=args.seed, weights=args.weights, **kw)
    out.write("prediction.csv", to_csv_safe(pred.table.reset_index(), index=False))
    # the fit's manifest (as `colide fit` writes it), with the prediction it made under "extra"
    record = {"intervention": {"do": pred.do, "shift": pred.shift, "given": "do" if args.do is not None else "shift",
                               "value": value},
              "weights": pred.weights, "n_bootstrap": pred.n_bootstrap, "level": pred.level, "seed": args.seed,
              "reference": None if labels is None else str(np.asarray(labels)[0]),
              "table": pred.table.reset_index().to_dict(orient="list")}
    _write_design_manifest(out, "manifest.json", model, X, args, labels, {"prediction": record})
    what = f"do({node} = {value:g})" if args.do is not None else f"{node} shifted by {value:g} sd"
    design = "" if labels is None else f", fitted with {len(set(map(str, labels)))} conditions"
    echo(_printable(f"predicted {what} for {X.shape[1]} nodes{design}; wrote prediction.csv and manifest.json "
                    f"to {out.path}"))
    return 0


def _write_design_manifest(out, name, model, X, args, labels, extra):
    """Write the manifest of a ``predict`` or ``plan`` fit (as ``colide fit`` writes one).

    Parameters
    ----------
    out : colide_core.run.outputs.OutputDir
        The checked output folder.
    name : str
        The manifest's file name in ``out``.
    model : colide_core.CoLiDE
        The fitted estimator.
    X : pandas.DataFrame
        The rows it was fitted on.
    args : argparse.Namespace
        The command's arguments: ``data`` (recorded as the data source) and ``conditions`` (the
        column of the conditions).
    labels : array-like or None
        Each row's condition (None without ``--conditions``).
    extra : dict
        What the command made of the fit (stored under ``"extra"``).
    """
    from colide_core.run.manifest import build_manifest, manifest_to_json

    out.write(name, manifest_to_json(build_manifest(model, X, data_source=str(args.data), conditions=labels,
                                                    conditions_column=args.conditions, extra=extra)))


def _data_and_design(args):
    """``(X, labels, targets)`` of ``predict`` and ``plan``: the data file, its ``--conditions``
    column (each row's condition, or None) and the ``--targets`` file (or None)."""
    if args.conditions is None:
        return _read_data(Path(args.data), None, False).X, None, None
    vd, labels = _read_data(Path(args.data), None, False, condition_column=args.conditions)
    return vd.X, labels, None if args.targets is None else _read_targets_file(args.targets)


def cmd_plan(args, echo):
    """``plan DATA [--conditions COL --targets FILE] [--out plan.csv]``: which experiment next.

    Ranks single-node interventions by the expected number of edge directions each would settle
    (:func:`colide_core.evaluation.planning.rank_interventions`, over bootstrap refits of CoLiDE
    with the design when given), prints the ranking as a table and, with ``--out``, writes it as CSV
    (through :func:`colide_core.graph.export.to_csv_safe`).

    Parameters
    ----------
    args : argparse.Namespace
    echo : callable
        ``echo(text, err=False)``: how the command speaks to its user; the library never prints.

    Returns
    -------
    int
        0.

    Raises
    ------
    UsageError
        For bad arguments, files, nodes or conditions.
    """
    from colide_core import CoLiDE
    from colide_core._params import InvalidParameterError
    from colide_core.evaluation.planning import rank_interventions
    from colide_core.exceptions import ConditionsError
    from colide_core.graph.export import to_csv_safe

    _check_targets_need_conditions(args)
    inputs = [Path(args.data)] + ([args.targets] if args.targets else [])
    out = None
    manifest_name = None
    if args.out is not None:
        out = OutputDir(args.out.parent, force=args.force, inputs=inputs)
        manifest_name = f"{args.out.stem}.manifest.json"
        out.check([args.out.name, manifest_name])
    X, labels, targets = _data_and_design(args)
    candidates = None
    if args.candidates is not None:
        unknown = [c for c in args.candidates if c not in list(X.columns)]
        if unknown:
            raise UsageError(f"--candidates: not a column of {Path(args.data).name}: "
                             + ", ".join(_printable(repr(c[:60])) for c in unknown[:5]))
        candidates = args.candidates
    estimator = CoLiDE(args.variant, lambda1=args.lambda1, threshold=args.threshold)
    try:
        ranking = rank_interventions(X, conditions=labels, targets=targets, candidates=candidates,
                                     n_bootstrap=args.n_bootstrap, random_state=args.seed, estimator=estimator,
                                     criterion=args.criterion)
    except ConditionsError as exc:
        raise UsageError(f"--conditions/--targets: {exc}") from None
    except InvalidParameterError as exc:
        raise UsageError(str(exc)) from None
    table = plan_table(ranking)
    design = "" if labels is None else f", with {len(set(map(str, labels)))} conditions"
    echo(_printable(f"ranked {len(table)} single-node interventions by the expected number of edges each settles "
                    f"({ranking.attrs['n_graphs']} bootstrap refits of CoLiDE-{args.variant.upper()}{design}):"))
    echo(_printable(table[["rank", "node", "score", "point_estimate", "edges"]].to_string(index=False)))
    if out is not None:
        out.write(args.out.name, to_csv_safe(table, index=False))
        # the fit the ranking starts from (all rows, with the design), with the plan under "extra"
        model = CoLiDE(args.variant, lambda1=args.lambda1, threshold=args.threshold).fit(
            X, conditions=labels, targets=targets)
        plan = {"criterion": ranking.attrs.get("criterion"), "n_bootstrap": args.n_bootstrap,
                "n_graphs": ranking.attrs.get("n_graphs"), "seed": args.seed,
                "candidates": None if candidates is None else list(candidates),
                "table": table.to_dict(orient="list")}
        _write_design_manifest(out, manifest_name, model, X, args, labels, {"plan": plan})
        echo(_printable(f"wrote {args.out} and {manifest_name}"))
    return 0


def plan_table(ranking):
    """The ranking of :func:`~colide_core.evaluation.planning.rank_interventions` as a flat table.

    Parameters
    ----------
    ranking : pandas.DataFrame

    Returns
    -------
    pandas.DataFrame
        Columns ``rank`` (1 = best), ``node``, ``score`` (3 decimals), ``point_estimate``,
        ``undirected``, ``edges`` and ``edge_probability`` (``"A\u2014B=0.85, ..."``), one row per
        candidate, best first.
    """
    table = ranking.reset_index()
    return pd.DataFrame({
        "rank": np.arange(1, len(table) + 1), "node": table["node"], "score": table["score"].round(3),
        "point_estimate": table["point_estimate"], "undirected": table["undirected"].round(3),
        "edges": table["edges"],
        "edge_probability": [", ".join(f"{k}={v:.2f}" for k, v in probs.items())
                             for probs in table["edge_probability"]]})
