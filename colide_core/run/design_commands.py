"""The CLI's commands that use a fit with its design: ``report``, ``predict`` and ``plan``.

Each takes the run settings as ``fit`` does (one flag per row of
:data:`colide_core.settings.SETTINGS`, :func:`colide_core.run.cli._add_setting_arguments`), or
``--manifest M``: the fit ``fit`` recorded, whose settings, design (condition column, targets)
and preprocessing (rows and columns dropped, transform) are replayed on the data and checked
against its fingerprint (:func:`colide_core.run.inputs.prepare_data`), so no flag is repeated
(issue 47). What each writes is in :mod:`colide_core.run.cli`.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from colide_core.run.inputs import (_check_device, _check_targets_need_conditions, _read_truth, check_given_settings,
                                    fitted_from_manifest, prepare_data, prior_flag, read_manifest)
from colide_core.run.outputs import OutputDir, UsageError, _printable

__all__ = ["cmd_report", "cmd_predict", "cmd_plan", "plan_table"]


# --------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------

def cmd_report(args, settings, echo):
    """``report DATA --out DIR``: write ``report.html`` for a recorded or a new fit.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``report`` arguments.
    settings : dict
        The run settings given as flags (:func:`colide_core.run.cli._settings_of`): the new fit's
        (none with ``--manifest``, whose fit is reported).
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
    from colide_core.run.manifest import ManifestError
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
    check_given_settings(settings, args.manifest)
    prior = prior_flag(args, args.manifest)
    inputs = [Path(args.data)] + [p for p in (args.manifest, args.truth, args.reference, args.targets)
                                  if p is not None]
    out = OutputDir(args.out, force=args.force, inputs=inputs)
    out.check(["report.html"])
    t0 = time.perf_counter()
    # a manifest's own steps from the raw file (rows and columns dropped, transforms) and its design come
    # first, so that `report --manifest` works alone for any `fit` run (issues 28, 47)
    man = None if args.manifest is None else read_manifest(args.manifest)
    prepared = prepare_data(args, man)
    X, labels, targets = prepared.X, prepared.labels, prepared.targets
    for w in prepared.warnings:
        echo(f"warning: {_printable(w)}", err=True)
    names = list(X.columns)
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
        est = CoLiDE(**{"random_state": args.seed, **settings, **prior})
        try:
            run = est.get_run_settings()
        except InvalidParameterError as exc:
            raise UsageError(str(exc)) from None
        _check_device(run.device, run.solver)
        from colide_core.exceptions import ConditionsError

        try:
            if labels is None:
                est.fit(X)
            else:
                est.fit(X, conditions=labels, targets=targets)
        except ConditionsError as exc:
            raise UsageError(f"--conditions/--targets: {exc}") from None
        fit = ReportFit(run.variant.upper(), est.W_, est.adjacency_, est.sigma_, est.get_params(),
                        _new_fit_manifest(est, prepared, args, {"command": "report", "argv": sys.argv[1:]}))
    try:
        checks = run_checks(X, fit.A, W=fit.W, estimator=est, n_random=args.random_graphs,
                            n_rescale=args.rescalings, random_state=args.seed, conditions=labels, targets=targets)
    except ValueError as exc:  # conditions or targets that do not fit these rows (ConditionsError)
        if labels is None:
            raise
        raise UsageError(f"--conditions/--targets: {exc}") from None
    path = None
    if args.path:  # the fit's noise model, run settings and prior knowledge along the default lambda grid
        from colide_core.settings import PRIOR_KEYS, RESULT_SETTINGS
        from colide_core.solver.path import lambda_path

        keys = [k for k in RESULT_SETTINGS if k not in ("variant", "lambda1")] + list(PRIOR_KEYS)
        path = lambda_path(X, variant=fit.params["variant"], conditions=labels, targets=targets,
                           **{k: fit.params[k] for k in keys if fit.params.get(k) is not None})
    html = build_report(X, [fit], dataset_name=Path(args.data).name, B_true=B_true, reference_label=label,
                        checks=checks, path=path, conditions=labels, targets=targets)
    target = out.write("report.html", html)
    echo(f"wrote {_printable(target)} ({len(html) / 1e6:.1f} MB) in {time.perf_counter() - t0:.1f} s: "
          + "; ".join(f"{row.check}: {row.verdict}" for row in checks.verdicts().itertuples()))
    return 0


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


def _new_estimator(settings, prior=None):
    """``CoLiDE(**settings, **prior)`` with its settings checked (and its device), before any file is read."""
    from colide_core import CoLiDE
    from colide_core._params import InvalidParameterError

    model = CoLiDE(**settings, **(prior or {}))
    try:
        run = model.get_run_settings()
    except InvalidParameterError as exc:
        raise UsageError(str(exc)) from None
    _check_device(run.device, run.solver)
    return model


def cmd_predict(args, settings, echo):
    """``predict DATA --out DIR (--do NODE=V | --shift NODE=K)``: an intervention's predicted effect.

    Fits CoLiDE on the data with the run settings given (with ``--conditions``/``--targets``: the
    design), or takes the fit of ``--manifest`` as recorded, and writes ``prediction.csv``
    (:func:`colide_core.evaluation.interventions.predict_intervention`: every node's reference
    mean, predicted mean, shift in data units and in standard deviations, the bootstrap interval,
    and the associational shift of a regression on the node) and ``manifest.json``. It then says
    whether the variables' scales carry the prediction
    (:func:`colide_core.evaluation.scale.scale_verdict`, a line starting ``scale:``, also recorded
    in the manifest); ``--baseline ges-ida`` adds GES + IDA's possible shifts as ``ges_ida_*``
    columns (:func:`colide_core.evaluation.scale.ida_prediction`).

    Parameters
    ----------
    args : argparse.Namespace
    settings : dict
        The run settings given as flags (:func:`colide_core.run.cli._settings_of`; none with
        ``--manifest``).
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
        For bad arguments, settings, files, nodes or conditions, or data other than the manifest's.
    """
    from colide_core.evaluation.interventions import check_intervention_size, predict_intervention
    from colide_core.evaluation.scale import ges_ida_cpdag, ida_prediction, scale_verdict
    from colide_core.exceptions import ConditionsError, InvalidParameterError
    from colide_core.graph.export import to_csv_safe

    _check_targets_need_conditions(args)
    check_given_settings(settings, args.manifest)
    if not 0 < args.level < 1:
        raise UsageError(f"--level must be in (0, 1), got {args.level}")
    node, value = _node_value(args.do if args.do is not None else args.shift, "--do" if args.do else "--shift")
    prior = prior_flag(args, args.manifest)
    model = None if args.manifest is not None else _new_estimator(settings, prior)
    out = OutputDir(args.out, force=args.force, inputs=[Path(args.data)] + [p for p in (args.targets, args.manifest)
                                                                            if p is not None])
    out.check(["prediction.csv", "manifest.json"])
    man = None if args.manifest is None else read_manifest(args.manifest)
    prepared = prepare_data(args, man)
    X, labels, targets = prepared.X, prepared.labels, prepared.targets
    for w in prepared.warnings:
        echo(f"warning: {_printable(w)}", err=True)
    if node not in list(X.columns):
        raise UsageError(f"unknown node {_printable(repr(node[:60]))}: not a column of {Path(args.data).name}")
    rows = np.ones(len(X), dtype=bool) if labels is None else (np.asarray(labels) == np.asarray(labels)[0])
    ref = X.loc[rows]
    with np.errstate(over="ignore"):  # K x sd may overflow: refused below with a sentence
        kw = ({"shift": {node: value * float(ref[node].std(ddof=1))}} if args.shift is not None
              else {"do": {node: value}})
    try:  # before the fit: a value a linear SEM says nothing about costs no fit (issue 53, low 3)
        check_intervention_size(kw.get("do"), kw.get("shift"), ref.mean().to_numpy(), ref.std(ddof=1).to_numpy(),
                                [str(c) for c in X.columns])
    except InvalidParameterError as exc:
        raise UsageError(f"{'--do' if args.do is not None else '--shift'}: {exc}") from None
    if man is not None:
        model = fitted_from_manifest(man)
    else:
        try:
            model.fit(X, conditions=labels, targets=targets)
        except ConditionsError as exc:
            raise UsageError(f"--conditions/--targets: {exc}") from None
    pred = predict_intervention(model, X, conditions=labels, n_bootstrap=args.bootstrap, level=args.level,
                                random_state=args.seed, weights=args.weights, **kw)
    verdict = scale_verdict(X, model.adjacency_)  # issue 52: do the variables' scales carry it?
    table = pred.table
    if getattr(args, "baseline", "none") == "ges-ida":
        baseline = ida_prediction(ges_ida_cpdag(X, conditions=labels), X, conditions=labels, **kw)
        table = table.join(baseline.table.rename(columns=lambda c: "ges_" + c))
    out.write("prediction.csv", to_csv_safe(table.reset_index(), index=False))
    # the fit's manifest (as `colide fit` writes it), with the prediction it made under "extra"
    record = {"intervention": {"do": pred.do, "shift": pred.shift, "given": "do" if args.do is not None else "shift",
                               "value": value},
              "weights": pred.weights, "n_bootstrap": pred.n_bootstrap, "level": pred.level, "seed": args.seed,
              "reference": None if labels is None else str(np.asarray(labels)[0]),
              "table": pred.table.reset_index().to_dict(orient="list"),
              "scale": {"scale_carries": verdict.scale_carries, "varsortability": verdict.varsortability,
                        "standardised": verdict.standardised, "recommendation": verdict.recommendation,
                        "reason": verdict.reason}}
    _write_design_manifest(out, "manifest.json", model, prepared, args, {"prediction": record}, man)
    what = f"do({node} = {value:g})" if args.do is not None else f"{node} shifted by {value:g} sd"
    design = "" if labels is None else f", fitted with {len(set(map(str, labels)))} conditions"
    echo(_printable(f"predicted {what} for {X.shape[1]} nodes{design}; wrote prediction.csv and manifest.json "
                    f"to {out.path}"))
    echo(_printable(f"scale: {verdict.reason}"
                    + ("" if verdict.scale_carries or getattr(args, "baseline", "none") == "ges-ida"
                       else " Add --baseline ges-ida for its possible shifts.")))
    return 0


def _new_fit_manifest(model, prepared, args, extra):
    """The manifest of a fit made by ``report``, ``predict`` or ``plan``, as ``colide fit`` records one.

    Parameters
    ----------
    model : colide_core.CoLiDE
        The fitted estimator.
    prepared : colide_core.run.inputs.PreparedData
        The data it was fitted on, with its design, preprocessing and transform (recorded, so the
        manifest serves ``--manifest`` and the report's Reproduce command in turn).
    args : argparse.Namespace
        The command's arguments: ``data`` (recorded as the data source) and ``conditions`` (the
        column of the conditions).
    extra : dict
        What the command made of the fit (stored under ``"extra"``, beside ``preprocess``).

    Returns
    -------
    dict
        :func:`colide_core.run.manifest.build_manifest`'s document.
    """
    from colide_core.run.manifest import build_manifest

    design = ({} if prepared.labels is None else
              {"conditions": prepared.labels, "conditions_column": getattr(args, "conditions", None)})
    return build_manifest(model, prepared.X, data_source=str(args.data), transform=prepared.transform or None,
                          extra={"preprocess": prepared.preprocess, **extra}, **design)


def _write_design_manifest(out, name, model, prepared, args, extra, man=None):
    """Write the manifest of a ``predict`` or ``plan`` fit (as ``colide fit`` writes one).

    Parameters
    ----------
    out : colide_core.run.outputs.OutputDir
        The checked output folder.
    name : str
        The manifest's file name in ``out``.
    model : colide_core.CoLiDE
        The fitted estimator.
    prepared : colide_core.run.inputs.PreparedData
        The data it was fitted on (:func:`colide_core.run.inputs.prepare_data`).
    args : argparse.Namespace
        The command's arguments.
    extra : dict
        What the command made of the fit (stored under ``"extra"``).
    man : colide_core.run.manifest.Manifest, optional
        The ``--manifest`` the fit came from: written again, with ``extra`` added to its own (its
        preprocessing and design kept, so the new manifest serves ``--manifest`` in turn).
    """
    from colide_core.run.manifest import manifest_to_json

    if man is not None:
        doc = dict(man.raw)
        doc["extra"] = {**dict(doc.get("extra") or {}), **extra}
        out.write(name, manifest_to_json(doc))
        return
    out.write(name, manifest_to_json(_new_fit_manifest(model, prepared, args, extra)))


def cmd_plan(args, settings, echo):
    """``plan DATA [--conditions COL --targets FILE | --manifest M] [--out plan.csv]``: which experiment next.

    Ranks single-node interventions by the expected number of edge directions each would settle
    (:func:`colide_core.evaluation.planning.rank_interventions`, over bootstrap refits of CoLiDE
    with the run settings given, or ``--manifest``'s, and the design when given), prints the
    ranking as a table and, with ``--out``, writes it as CSV (through
    :func:`colide_core.graph.export.to_csv_safe`).

    Parameters
    ----------
    args : argparse.Namespace
    settings : dict
        The run settings given as flags (none with ``--manifest``).
    echo : callable
        ``echo(text, err=False)``: how the command speaks to its user; the library never prints.

    Returns
    -------
    int
        0.

    Raises
    ------
    UsageError
        For bad arguments, settings, files, nodes or conditions, or data other than the manifest's.
    """
    from colide_core._params import InvalidParameterError
    from colide_core.evaluation.planning import SCORE_LABELS, rank_interventions
    from colide_core.exceptions import ConditionsError, InvalidParameterError
    from colide_core.graph.export import to_csv_safe

    _check_targets_need_conditions(args)
    check_given_settings(settings, args.manifest)
    prior = prior_flag(args, args.manifest)
    estimator = None if args.manifest is not None else _new_estimator(settings, prior)
    inputs = [Path(args.data)] + [p for p in (args.targets, args.manifest) if p is not None]
    out = None
    manifest_name = None
    if args.out is not None:
        out = OutputDir(args.out.parent, force=args.force, inputs=inputs)
        manifest_name = f"{args.out.stem}.manifest.json"
        out.check([args.out.name, manifest_name])
    man = None if args.manifest is None else read_manifest(args.manifest)
    prepared = prepare_data(args, man)
    X, labels, targets = prepared.X, prepared.labels, prepared.targets
    for w in prepared.warnings:
        echo(f"warning: {_printable(w)}", err=True)
    if man is not None:
        estimator = man.estimator()
    candidates = None
    if args.candidates is not None:
        unknown = [c for c in args.candidates if c not in list(X.columns)]
        if unknown:
            raise UsageError(f"--candidates: not a column of {Path(args.data).name}: "
                             + ", ".join(_printable(repr(c[:60])) for c in unknown[:5]))
        candidates = args.candidates
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
    echo(_printable(f"ranked {len(table)} single-node interventions by {SCORE_LABELS[ranking.attrs['criterion']]} "
                    f"({ranking.attrs['n_graphs']} bootstrap refits of CoLiDE-{estimator.variant.upper()}{design}):"))
    echo(_printable(table[["rank", "node", "score", "point_estimate", "edges"]].to_string(index=False)))
    if out is not None:
        out.write(args.out.name, to_csv_safe(table, index=False))
        plan = {"criterion": ranking.attrs.get("criterion"), "n_bootstrap": args.n_bootstrap,
                "n_graphs": ranking.attrs.get("n_graphs"), "seed": args.seed,
                "candidates": None if candidates is None else list(candidates),
                "table": table.to_dict(orient="list")}
        # the fit the ranking starts from (all rows, with the design), with the plan under "extra"; with
        # --manifest, that manifest's own fit
        model = None if man is not None else _clone_fit(estimator, X, labels, targets)
        _write_design_manifest(out, manifest_name, model, prepared, args, {"plan": plan}, man)
        echo(_printable(f"wrote {args.out} and {manifest_name}"))
    return 0


def _clone_fit(estimator, X, labels, targets):
    """A fresh copy of ``estimator`` fitted on every row with the design (the fit a plan starts from)."""
    from sklearn.base import clone

    return clone(estimator).fit(X, conditions=labels, targets=targets)


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
