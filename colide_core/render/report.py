"""A one-file HTML report of a fit that works offline: open it in any browser, nothing to install.

:func:`build_report` returns one HTML document holding: the dataset summary, the settings, the
interactive graph (the same vis-network drawing as the dashboard,
:func:`colide_core.render.graph_html.graph_html`, inlined in an ``<iframe srcdoc>``), the noise
estimates, the model checks (:func:`colide_core.evaluation.checks.run_checks`) with their figures, the
edge evidence table with the Check page's verdict per edge (:func:`colide_core.render.tables.edge_verdicts`), metrics and curves against a ground truth or a user's reference
(:mod:`colide_core.evaluation.curves`), the λ x threshold grid with its stable region when a path is
given, the prior-knowledge audit, for data from several conditions a section per condition (rows,
targets, each node's median shift from the baseline condition,
:func:`colide_core.data.stats.condition_summary`, and the edges an intervention can orient,
:func:`colide_core.data.conditions.oriented_by_targets`, with those the edge evidence disputes,
:func:`colide_core.render.tables.disputed_edges`), and every fit's run manifest embedded as JSON (shown, and
downloadable from the page itself through a ``data:`` link), so the run can be reproduced
with ``python -m colide_core fit`` or the dashboard's "Load a run manifest".

Offline: plotly.js is inlined once (``include_plotlyjs=True`` for the first figure, every
later figure reuses it), vis-network is inlined by the graph page's template (the files pyvis ships), and
:func:`build_report` refuses to return a document that still references an ``http(s)`` script,
style sheet or image.

Template and escaping: the page is the Jinja2 template ``templates/report.html.j2``, rendered by
the environment of :func:`colide_core.render.graph_html.template_environment` (autoescape on).
Every user string (node names, the dataset name, fit labels, notes, table cells, manifest
contents) is passed to the template as plain text and escaped exactly once, by Jinja's autoescape;
this module escapes nothing by hand. Tables are rows of formatted cells looped over by the
template (no ``DataFrame.to_html``); the residual, Markov and condition tables are the Check
page's own readable tables (:mod:`colide_core.render.tables`: word headers, p-values as
"< 0.001"). The graph page of each fit is a plain string too, so it is
escaped once into the ``srcdoc`` attribute of its ``<iframe>``. The manifest embedded in a
``<script type="application/json">`` goes through Jinja's ``|tojson`` (``<``, ``>``, ``&`` and ``'``
as JSON ``\\u`` escapes). Not escaped here: the plotly figures, HTML that plotly writes and that
is marked safe in one place (:class:`_Figures`); the names in them are escaped for plotly by
:mod:`colide_core.render.plots`.

PDF: not offered. The report's graph and figures are drawn by JavaScript (vis-network,
plotly), so an HTML-to-PDF library that does not run JavaScript (WeasyPrint, xhtml2pdf) would
print empty boxes, and WeasyPrint also needs system libraries (Pango); the reliable offline way
is a browser's own "Print to PDF", for which the report carries print styles.

Conventions: ``X`` is ``(n_samples, n_nodes)``; ``W[i, j] != 0`` means i -> j.
"""
from __future__ import annotations

import base64
import datetime as _dt
import json
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from colide_core._validation import check_X

__all__ = ["ReportFit", "build_report", "write_report"]

_EXTERNAL = re.compile(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*[\"']?\s*(?:https?:)?//",
                       re.IGNORECASE)


@dataclass(frozen=True, eq=False)
class ReportFit:
    """One fit shown in the report.

    Attributes
    ----------
    label : str
        E.g. "NV" or "EV" (shown as text).
    W : ndarray of shape (n_nodes, n_nodes)
        Raw learned weights, ``W[i, j] != 0`` meaning i -> j.
    A : ndarray of shape (n_nodes, n_nodes)
        The thresholded DAG shown (weights kept).
    sigma : float, ndarray of shape (n_nodes,) or None
        Noise standard deviation(s) in data units.
    params : dict
        The :class:`colide_core.CoLiDE` parameters (``threshold`` included).
    manifest : dict, optional
        The run manifest (:mod:`colide_core.run.manifest`), embedded as JSON.
    manifest_name : str, optional
        The file name the report saves the manifest under, which its ``fit`` command reads with
        ``--prior``: the name the caller offers the same manifest under elsewhere (the
        dashboard's Learn page), so that one downloaded file serves both (issue 48, m-8).
        Default ``colide_<label>_manifest.json``.
    """

    label: str
    W: np.ndarray
    A: np.ndarray
    sigma: object
    params: dict
    manifest: dict = field(default=None)
    manifest_name: str = field(default=None)


#: Shown for a missing value in a table cell (pandas' ``na_rep`` before).
_NA = "–"


@dataclass(frozen=True)
class _Table:
    """A table for the ``table`` macro of ``report.html.j2``: plain-text cells, escaped by the template.

    Attributes
    ----------
    columns : list of str
        Column headers.
    rows : list of (str, list of str)
        Per row, its index label (shown when ``row_headers``) and its formatted cells.
    row_headers : bool
        Show the index as the first column (``<th>`` cells).
    """

    columns: list
    rows: list
    row_headers: bool


def _cell(value, floatfmt):
    """One cell as text: missing values as :data:`_NA`, floats with ``floatfmt``, the rest with ``str``."""
    if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
        return _NA
    if isinstance(value, (float, np.floating)):
        return floatfmt.format(value)
    return str(value)


def _table(df, floatfmt="{:.4g}", index=False):
    """``df`` as a :class:`_Table` (the formatting of the former ``to_html(float_format=...)``)."""
    values = df.astype(object).to_numpy()
    rows = [(str(label), [_cell(v, floatfmt) for v in row]) for label, row in zip(df.index, values)]
    return _Table([str(c) for c in df.columns], rows, bool(index))


class _Figures:
    """Turns plotly figures into HTML; plotly.js is inlined with the first one only."""

    def __init__(self):
        self.first = True

    def __call__(self, fig):
        from markupsafe import Markup

        html = fig.to_html(full_html=False, include_plotlyjs=bool(self.first),
                           config={"displaylogo": False, "responsive": True})
        self.first = False
        # The one place the report marks HTML safe: plotly's own <div> and <script> (its data as
        # JSON; the user strings in it were escaped for plotly by colide_core.render.plots).
        return Markup(html)


def _manifest_item(label, manifest):
    """What the template shows of one fit's manifest: the JSON text, its base64 and a file name stem."""
    text = json.dumps(manifest, indent=1, sort_keys=False, default=str, allow_nan=True)
    return {"manifest": manifest, "manifest_text": text,
            "base64": base64.b64encode(text.encode("utf-8")).decode("ascii"),
            "file_stem": re.sub(r"[^A-Za-z0-9_-]+", "_", label) or "fit"}


def _fit_command(params, data_name, manifest=None, *, replay=True, manifest_name="manifest.json"):
    """The command that reproduces a fit: every recorded step when its manifest is there
    (:func:`colide_core.run.manifest.fit_command`: dropped rows and columns, transform, settings,
    prior knowledge, conditions), else the main settings. ``replay=False`` when ``data_name`` holds
    the data as fitted (the transforms already applied); ``manifest_name`` is the name the report
    saves the manifest under (its ``--prior`` file)."""
    from colide_core.run.manifest import fit_command

    try:
        return fit_command(manifest if manifest is not None else {"params": dict(params)}, data_name,
                           manifest_name=manifest_name, replay=replay)
    except ValueError as exc:  # e.g. two transforms: say so instead of printing a command that differs
        return f"(no single command reproduces this fit: {exc}; load its manifest instead)"


def _prediction_item(pred, verdict=None, ida=None):
    """One predicted intervention as the template shows it: a title, a note and a table; with
    ``verdict`` (a :class:`~colide_core.evaluation.scale.ScaleVerdict`) its sentence and whether
    it warns, with ``ida`` (an :class:`~colide_core.evaluation.scale.IDAPrediction`) the GES + IDA
    columns beside doing."""
    t = pred.table
    seen = t["associational_shift"] / t["reference_sd"]
    table = pd.DataFrame({"node": t.index, "reference mean": t["reference_mean"], "predicted mean": t["predicted_mean"],
                          "shift (sd), doing": t["shift_sd"], "shift (sd), seeing": seen,
                          f"{pred.level:.0%} interval (data units)": [
                              _NA if np.isnan(lo) else f"{lo:.3g} … {hi:.3g}" for lo, hi in zip(t["low"], t["high"])]})
    if ida is not None:
        g = ida.table.reindex(t.index)
        table.insert(4, "shift (sd), GES + IDA (mean)", g["ida_shift_sd"].to_numpy())
        table.insert(5, "GES + IDA: possible shifts (sd)", [_NA if np.isnan(lo) else f"{lo:.3g} … {hi:.3g}"
                                                            for lo, hi in zip(g["ida_low_sd"], g["ida_high_sd"])])
    weights = {"refit": "least squares on the learned parents", "fit": "the fit's weights"}.get(pred.weights, "given")
    note = (f"SEM weights: {weights}; " + (f"intervals from {pred.n_bootstrap} refits on resampled rows."
                                           if pred.n_bootstrap else "no intervals (no refits)."))
    return {"title": pred.describe(), "note": note, "table": _table(table),
            "scale": None if verdict is None else {"reason": verdict.reason, "warn": not verdict.scale_carries}}


def _plan_item(plan):
    """The ranking of :func:`rank_interventions` as a table, and a sentence on how it was made."""
    from colide_core.evaluation.planning import SCORE_LABELS

    attrs = plan.attrs
    label = SCORE_LABELS.get(attrs.get("criterion"), "score")
    table = pd.DataFrame({"target": plan.index, label: plan["score"],
                          "in the fit on all rows": plan["point_estimate"], "edges settled": plan["edges"]})
    note = (f"Criterion {attrs.get('criterion', '?')!s} ({label}), over {attrs.get('n_graphs', 0)} refits on "
            "resampled rows (docs/planning.md); the edges columns count the edges whose direction a hard "
            "intervention on the target would settle.")
    return _table(table, floatfmt="{:.3g}"), note


def _condition_section(values, names, fits, design, disputed):
    """The per-condition tables: ``(conditions table, orientable-edges table, sentence, lines)`` or None.

    From the rows' design (a :class:`~colide_core.data.design.Design` named as ``names``) when
    given: :func:`colide_core.data.stats.condition_summary`; else from the first fit's manifest's
    ``conditions`` record (rows and targets, no shifts). ``disputed`` holds, per fit, the mask of
    :func:`colide_core.render.tables.disputed_edges` (the edge evidence's verdict): ``lines`` says
    per fit "n of m edges orientable by an intervention, k of them disputed by the data".
    """
    from colide_core.data.conditions import oriented_by_targets
    from colide_core.data.stats import condition_summary
    from colide_core.render.tables import condition_table

    if design is not None:
        summary = condition_summary(pd.DataFrame(values, columns=names), design=design)
        table = condition_table(summary)
        note = ("Rows, intervention targets and each node's median shift from the baseline (first) condition, in "
                "the baseline's standard deviations.")
        oriented = oriented_by_targets({k: list(v) for k, v in design.targets.items() if v}, n_nodes=len(names))
    else:
        record = next((f.manifest.get("conditions") for f in fits
                       if isinstance(f.manifest, dict) and f.manifest.get("conditions")), None)
        if not record:
            return None
        labels, counts = list(record.get("labels") or []), list(record.get("counts") or [])
        tmap = record.get("targets") or {}
        table = pd.DataFrame({"Condition": [str(x) for x in labels], "Rows": [f"{int(c):,}" for c in counts],
                              "Targets": [", ".join(str(t) for t in (tmap.get(lab) or [])) or "—" for lab in labels]})
        note = ("Rows and intervention targets as the run manifest records them (the rows' labels were not given, "
                "so the shifts from the baseline are not shown).")
        try:  # a manifest is checked when loaded; a raw dict may not be: no orientation rather than a failure
            oriented = oriented_by_targets({k: v for k, v in tmap.items() if v} or None, names)
        except (ValueError, TypeError):
            oriented = None
    from colide_core.render.tables import REVERSE_PREFERRED

    rows, lines = [], []
    for f, doubt in zip(fits, disputed):
        A = np.asarray(f.A) != 0
        edges = [(int(i), int(j)) for i, j in zip(*np.nonzero(A))]
        hit = [] if oriented is None else [(i, j) for i, j in edges if oriented[i, j]]
        against = [(i, j) for i, j in hit if doubt[i, j]]
        # "orientable", not "oriented" (issue 48, m-7): an intervention on an end can tell the direction;
        # where the edge evidence says the data prefer the reverse, the edge is disputed (same verdict
        # as the Check page and the evidence table's "evidence" column)
        rows.append({"Fit": str(f.label), "Edges": str(len(edges)),
                     "Orientable by an intervention": f"{len(hit)} of {len(edges)}",
                     "Disputed by the data": f"{len(against)} of them",
                     "Which": "; ".join(f"{names[i]} → {names[j]}" + (
                         f" (the data prefer {names[j]} → {names[i]})" if (i, j) in against else "")
                                        for i, j in hit) or "—"})
        lines.append(f"{f.label}: {len(hit)} of {len(edges)} edges orientable by an intervention, "
                     f"{len(against)} of them disputed by the data (ΔBIC if reversed < {REVERSE_PREFERRED:g}: "
                     "the data prefer the reverse).")
    note += (" An edge is orientable when an intervention targets one of its ends: such data can tell its "
             "direction, which is not to say that they agree with the fit. Where the edge evidence's ΔBIC if "
             f"reversed is below {REVERSE_PREFERRED:g}, they prefer the reverse: the edge is disputed (the "
             "evidence column of the edge evidence, as on the Check page).")
    return _table(table, index=False), _table(pd.DataFrame(rows)), note, lines


def build_report(X, fits, *, dataset_name="data", B_true=None, reference_label="ground truth", checks=None,
                 path=None, audit=None, frequency=None, created=None, notes=(), conditions=None,
                 targets=None, data_file="DATA.csv", replay=True, predictions=(), plan=None, design=None,
                 ida_predictions=()) -> str:
    """Build the self-contained HTML report of one or more fits on one dataset.

    Parameters
    ----------
    X : pandas.DataFrame or array-like of shape (n_samples, n_nodes)
        The data that was fitted.
    fits : sequence of ReportFit
        At least one; the first is the one the checks describe.
    dataset_name : str
        Shown as text (escaped).
    data_file : str, default="DATA.csv"
        The data file the "Reproduce" commands name (shell-quoted there): the raw file a user
        uploaded, or the "data as fitted" download of a bundled dataset.
    replay : bool, default=True
        Whether ``data_file`` is the raw file (the commands replay the manifest's cleaning and
        transforms) or the data as fitted (they replay neither: applying a transform again would
        give another graph).
    B_true : array-like of shape (n_nodes, n_nodes), optional
        A ground truth or the user's reference (``reference_label`` says which); adds
        metrics, ROC / precision-recall curves and the threshold curves.
    reference_label : str, default="ground truth"
        E.g. "your reference".
    checks : colide_core.evaluation.checks.CheckReport, optional
        Computed on the first fit when not given (without the rescaling refits; with
        ``conditions`` and ``targets`` when given).
    path : colide_core.solver.path.LambdaPath, optional
        Adds edges and BIC over λ x threshold with the stable region.
    audit : pandas.DataFrame, optional
        :func:`colide_core.graph.constraints.audit_constraints` of the first fit.
    frequency : array-like of shape (n_nodes, n_nodes), optional
        Bootstrap edge frequencies (for the evidence table when ``checks`` is computed here).
    created : str, optional
        Timestamp shown (default: now, UTC).
    notes : sequence of str
        Extra sentences shown under the title (escaped).
    conditions : array-like of shape (n_samples,), optional
        Each row's condition label: adds the "Conditions" section (per condition its rows, its
        targets and each node's median shift from the baseline condition in baseline SDs,
        :func:`colide_core.data.stats.condition_summary`; per fit the edges the interventions
        orient, :func:`colide_core.data.conditions.oriented_by_targets`). Without it, a first
        fit whose manifest records conditions gives the section without the shifts.
    targets : mapping, optional
        ``{label: [node, ...]}``, nodes by name or index (needs ``conditions``).
    design : colide_core.data.design.Design, optional
        The conditions and targets in one object (validated once), instead of ``conditions`` and
        ``targets`` (:func:`colide_core.data.design.resolve_design`).
    predictions : sequence of InterventionPrediction, optional
        Predicted interventions (:func:`colide_core.evaluation.interventions.predict_intervention`)
        of the first fit: adds the "Interventions" section, one table each (doing, seeing, the
        interval), with the sentence of :func:`colide_core.evaluation.scale.scale_verdict` on the
        data and the first fit's graph (whether the variables' scales carry the prediction).
    ida_predictions : sequence of IDAPrediction or None, optional
        GES + IDA's prediction of the same interventions, one per prediction (None: none), from
        :func:`colide_core.evaluation.scale.ida_prediction`: adds its columns beside doing.
    plan : pandas.DataFrame, optional
        :func:`colide_core.evaluation.planning.rank_interventions` on the first fit's settings:
        adds the "Next experiment" section (the ranking and the edges each candidate settles).

    Returns
    -------
    str
        The HTML document (a few MB: plotly.js is inlined once).

    Raises
    ------
    ValueError
        If ``fits`` is empty, shapes disagree, ``targets`` come without ``conditions``, or
        (defensively) the document references an external resource; ``ConditionsError`` (a
        ``ValueError``) for conditions or targets that cannot be used.
    """
    from colide_core.render import plots
    from colide_core.evaluation._metrics import evaluate, tetrad_metrics
    from colide_core.evaluation.checks import edge_evidence, run_checks
    from colide_core.evaluation.curves import edge_score_curves, stable_region, threshold_curve
    from colide_core.render.graph_html import graph_html, template_environment
    from colide_core.render.graph_style import SUMMARY_NODES
    from colide_core.render.tables import (REVERSE_PREFERRED, disputed_edges, edge_verdicts, markov_table,
                                           residual_table)

    fits = list(fits)
    if not fits:
        raise ValueError("the report needs at least one fit.")
    values, names = check_X(X, min_samples=3)
    n, d = values.shape
    names = names or [f"X{k}" for k in range(d)]
    truth = None if B_true is None else (np.asarray(B_true.to_numpy() if hasattr(B_true, "to_numpy") else B_true) != 0)
    first = fits[0]
    if targets and conditions is None and design is None:
        raise ValueError("targets need conditions: give the condition of each row.")
    from colide_core.evaluation.checks import _design_of_check

    design = _design_of_check(X, names, n, d, design, conditions, targets)  # once, named as the report's nodes
    if checks is None:
        checks = run_checks(pd.DataFrame(values, columns=names), first.A, W=first.W, frequency=frequency,
                            design=design)
    # the edge evidence's verdict per fit (the Check page's): the first fit's is the checks' own
    disputed = [disputed_edges(checks.evidence, names)] + [
        disputed_edges(edge_evidence(pd.DataFrame(values, columns=names), f.A, design=design), names)
        for f in fits[1:]]
    by_condition = _condition_section(values, names, fits, design, disputed)
    fig = _Figures()  # called in the order the figures appear: plotly.js goes with the first
    created = created or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    sections = [("data", "Data")] + ([("conditions", "Conditions")] if by_condition else []) + [("settings", "Settings"), ("graph", "Graph"), ("noise", "Noise"),
                ("checks", "Checks"), ("evidence", "Edge evidence")]
    if truth is not None:
        sections.append(("metrics", "Metrics and curves"))
    if path is not None:
        sections.append(("path", "λ and threshold"))
    if audit is not None:
        sections.append(("prior", "Prior knowledge"))
    predictions = list(predictions or ())
    if predictions:
        sections.append(("interventions", "Interventions"))
    if plan is not None:
        sections.append(("plan", "Next experiment"))
    sections.append(("manifest", "Reproduce"))
    tables, figures = {}, {}

    # --- data and settings
    tables["data"] = _table(pd.DataFrame({"node": names, "mean": values.mean(axis=0),
                                          "sd": values.std(axis=0, ddof=1), "min": values.min(axis=0),
                                          "max": values.max(axis=0)}))
    keys = sorted({k for f in fits for k in f.params})
    tables["conditions"], tables["oriented"], condition_note, orientable_lines = by_condition or (None, None, None, [])
    tables["settings"] = _table(pd.DataFrame({f.label: [json.dumps(f.params.get(k), default=str) for k in keys]
                                              for f in fits}, index=keys), index=True)

    # --- graphs (each page a plain string: the template escapes it once into srcdoc); above
    # SUMMARY_NODES nodes the adjacency heatmap the dashboard shows there (a node-link drawing of
    # 200 nodes took 75 s to build and 49 s to draw, issue 53 low 1)
    B_ref = None if truth is None else truth.astype(float)
    if d > SUMMARY_NODES:
        from colide_core.render.figures import adjacency_figure

        graphs = [{"label": f.label, "n_edges": int((np.asarray(f.A) != 0).sum()), "page": None,
                   "figure": fig(adjacency_figure(f.A, names, B_ref))} for f in fits]
    else:
        graphs = [{"label": f.label, "n_edges": int((np.asarray(f.A) != 0).sum()), "figure": None,
                   "page": graph_html(f.A, names, B_ref, sigma=f.sigma, height_px=520, disputed=doubt)}
                  for f, doubt in zip(fits, disputed)]  # the edge evidence's "?" on each drawing (m-7)

    # --- noise
    sig = pd.DataFrame({"node": names})
    for f in fits:
        if f.sigma is not None:
            sig[f"σ̂ {f.label}"] = np.broadcast_to(np.asarray(f.sigma, dtype=float), (d,))
    sig["residual sd (OLS refit)"] = checks.residuals.table["residual_sd"].to_numpy()
    tables["noise"] = _table(sig)
    figures["residual_sd"] = fig(plots.residual_sd_figure(checks.residuals.table, checks.residuals.noise_model))

    # --- checks
    verdicts = checks.verdicts()[["check", "verdict", "summary"]].to_dict("records")
    s = checks.sortability
    figures["sortability"] = fig(plots.sortability_figure(names, s.variances, s.r2, first.A))
    tables["standardized"] = (None if checks.standardized is None else _table(checks.standardized.table(names)))
    tables["residuals"] = _table(residual_table(checks.residuals.table))
    figures["qq"] = fig(plots.qq_figure(checks.residuals.refit.residuals, names))
    figures["hetero"] = fig(plots.hetero_figure(checks.residuals.refit, names))
    figures["markov"] = fig(plots.markov_figure(checks.markov))
    tables["markov"] = _table(markov_table(checks.markov.tests))
    # the Check page's table: its verdict column ("strong", "caution: …", "problem: …") third
    evidence = checks.evidence.copy()
    evidence.insert(2, "evidence", edge_verdicts(checks.evidence, checks.scale, names))
    tables["evidence"] = _table(evidence)

    # --- metrics and curves
    tables["metrics"] = None
    if truth is not None:
        rows, rocs, tcs = {}, {}, {}
        for f in fits:
            m = evaluate(truth, f.A)
            m.update(tetrad_metrics(truth, f.A))
            rows[f.label] = m
            rocs[f.label] = edge_score_curves(truth, f.W)
            tcs[f.label] = threshold_curve(truth, f.W)
            rows[f.label]["auroc"] = rocs[f.label].auroc
            rows[f.label]["auprc"] = rocs[f.label].auprc
        tables["metrics"] = _table(pd.DataFrame(rows), index=True)
        figures["roc"] = fig(plots.roc_figure(rocs, reference_label))
        figures["pr"] = fig(plots.pr_figure(rocs, reference_label))
        figures["threshold"] = fig(plots.threshold_figure(tcs, current=first.params.get("threshold"),
                                                          reference_label=reference_label))

    # --- path
    path_summary = None
    if path is not None:
        region = stable_region(path)
        lam = first.params.get("lambda1")
        thr = first.params.get("threshold")
        current = path.cell(lam, thr) if lam is not None and thr is not None else None
        path_summary = region.summary
        figures["path"] = fig(plots.path_figure(path, region, current))

    # --- prior knowledge
    tables["audit"] = None if audit is None else _table(audit)

    # --- interventions and the next experiment
    verdict = None
    if predictions:  # issue 52: do the variables' scales carry the prediction? (the data and the graph only)
        from colide_core.evaluation.scale import scale_verdict

        verdict = scale_verdict(values, first.A)
    ida_predictions = list(ida_predictions or ()) + [None] * len(predictions)
    tables["predictions"] = [_prediction_item(p, verdict, g) for p, g in zip(predictions, ida_predictions)]
    tables["plan"], plan_note = (None, None) if plan is None else _plan_item(plan)

    # --- reproduce
    reproduce = []
    for f in fits:
        item = {} if f.manifest is None else _manifest_item(f.label, f.manifest)
        # the report's own download of the manifest, under the caller's name for it when given (m-8)
        name = (str(f.manifest_name) if f.manifest_name else f"colide_{item['file_stem']}_manifest.json") \
            if item else "manifest.json"
        reproduce.append({"label": f.label, "manifest": None, **item, "manifest_name": name,
                          "command": _fit_command(f.params, str(data_file), f.manifest, replay=replay,
                                                  manifest_name=name)})

    html = template_environment().get_template("report.html.j2").render(
        dataset_name=str(dataset_name), created=created, notes=[str(t) for t in notes], sections=sections,
        n_samples=n, n_nodes=d, reference_label=str(reference_label),
        n_truth_edges=None if truth is None else int(truth.sum()), tables=tables, figures=figures,
        graphs=graphs, summary_nodes=SUMMARY_NODES, first_label=first.label, verdicts=verdicts, path_summary=path_summary,
        reproduce=reproduce, condition_note=condition_note, orientable_lines=orientable_lines, plan_note=plan_note,
        reverse_preferred=f"{REVERSE_PREFERRED:g}")
    if _EXTERNAL.search(html):
        raise ValueError("The report references an external resource.")
    return html


def write_report(path, html) -> None:
    """Write the report text to ``path`` as UTF-8 (the caller decides about overwriting).

    Parameters
    ----------
    path : str or os.PathLike
        The file to write (replaced if it exists).
    html : str
        The document of :func:`build_report`.
    """
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(html)
