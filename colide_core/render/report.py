"""A one-file HTML report of a fit that works offline: open it in any browser, nothing to install.

:func:`build_report` returns one HTML document holding: the dataset summary, the settings, the
interactive graph (the same vis-network drawing as the dashboard,
:func:`colide_core.render.graph_html.graph_html`, inlined in an ``<iframe srcdoc>``), the noise
estimates, the model checks (:func:`colide_core.evaluation.checks.run_checks`) with their figures, the
edge evidence table, metrics and curves against a ground truth or a user's reference
(:mod:`colide_core.evaluation.curves`), the λ x threshold grid with its stable region when a path is
given, the prior-knowledge audit, and every fit's run manifest embedded as JSON (shown, and
downloadable from the page itself through a ``data:`` link), so the run can be reproduced
with ``python -m colide_core fit`` or the dashboard's "Load a run manifest".

Offline: plotly.js is inlined once (``include_plotlyjs=True`` for the first figure, every
later figure reuses it), vis-network is inlined by pyvis (``cdn_resources="in_line"``), and
:func:`build_report` refuses to return a document that still references an ``http(s)`` script,
style sheet or image.

Escaping: every user string (node names, the dataset name, manifest contents) is escaped
exactly once where it meets HTML: :func:`colide_core.graph.export.html_escape` for text and
attributes (the graph page as a whole is escaped once into ``srcdoc``), pandas' ``to_html``
(``escape=True``) for tables, ``<``, ``>`` and ``&`` as JSON ``\\u`` escapes inside the embedded
manifest, and plotly text through :mod:`colide_core.render.plots`.

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
from colide_core.graph.export import html_escape

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
    """

    label: str
    W: np.ndarray
    A: np.ndarray
    sigma: object
    params: dict
    manifest: dict = field(default=None)


_CSS = """
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1200px;padding:0 18px 40px;color:#222}
h1{font-size:26px;margin:22px 0 4px} h2{font-size:20px;border-bottom:2px solid #ddd;padding-bottom:4px;margin-top:34px}
h3{font-size:16px;margin:18px 0 6px} .muted{color:#666;font-size:13px}
table{border-collapse:collapse;font-size:13px;margin:8px 0} td,th{border:1px solid #ddd;padding:3px 7px;text-align:right}
th{background:#f4f4f4} td:first-child,th:first-child{text-align:left}
.verdict{background:#f7f9fc;border-left:4px solid #1f77b4;padding:8px 12px;margin:8px 0}
.graphs{display:flex;flex-wrap:wrap;gap:12px} .graphs>div{flex:1 1 480px}
iframe.graph{width:100%;height:560px;border:1px solid #ddd}
pre{background:#f6f6f6;padding:10px;overflow:auto;max-height:420px;font-size:12px}
nav a{margin-right:12px}
@media print{nav,.noprint{display:none} iframe.graph{height:480px} h2{break-before:page}}
"""


def _table(df, floatfmt="{:.4g}", index=False):
    """A DataFrame as an HTML table; pandas escapes every cell and header (``escape=True``)."""
    return df.to_html(index=index, escape=True, border=0, na_rep="–",
                      float_format=lambda v: floatfmt.format(v))


def _para(text):
    return f"<p>{html_escape(text)}</p>"


class _Figures:
    """Turns plotly figures into HTML divs; plotly.js is inlined with the first one only."""

    def __init__(self):
        self.first = True

    def __call__(self, fig):
        html = fig.to_html(full_html=False, include_plotlyjs=bool(self.first),
                           config={"displaylogo": False, "responsive": True})
        self.first = False
        return f'<div class="fig">{html}</div>'


def _manifest_script(label, manifest):
    text = json.dumps(manifest, indent=1, sort_keys=False, default=str, allow_nan=True)
    safe = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    b64 = base64.b64encode(text.encode("utf-8")).decode("ascii")
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", label) or "fit"
    return (f'<h3>Run manifest · {html_escape(label)}</h3>'
            f'<p class="noprint"><a download="colide_{name}_manifest.json" '
            f'href="data:application/json;base64,{b64}">Save this manifest (JSON)</a>: load it on the '
            "dashboard's Learn page, or read its <code>params</code> to refit with "
            "<code>python -m colide_core fit</code>.</p>"
            f'<script type="application/json" class="manifest" data-fit="{html_escape(label)}">{safe}</script>'
            f"<details><summary>Show the manifest</summary><pre>{html_escape(text)}</pre></details>")


def _fit_command(params, data_name):
    p = dict(params)
    return (f"python -m colide_core fit {data_name} --out results --variant {p.get('variant', 'nv')} "
            f"--lambda1 {p.get('lambda1')} --threshold {p.get('threshold')} --solver {p.get('solver', 'auto')}")


def build_report(X, fits, *, dataset_name="data", B_true=None, reference_label="ground truth", checks=None,
                 path=None, audit=None, frequency=None, created=None, notes=()) -> str:
    """Build the self-contained HTML report of one or more fits on one dataset.

    Parameters
    ----------
    X : pandas.DataFrame or array-like of shape (n_samples, n_nodes)
        The data that was fitted.
    fits : sequence of ReportFit
        At least one; the first is the one the checks describe.
    dataset_name : str
        Shown as text (escaped).
    B_true : array-like of shape (n_nodes, n_nodes), optional
        A ground truth or the user's reference (``reference_label`` says which); adds
        metrics, ROC / precision-recall curves and the threshold curves.
    reference_label : str, default="ground truth"
        E.g. "your reference".
    checks : colide_core.evaluation.checks.CheckReport, optional
        Computed on the first fit when not given (without the rescaling refits).
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

    Returns
    -------
    str
        The HTML document (a few MB: plotly.js is inlined once).

    Raises
    ------
    ValueError
        If ``fits`` is empty, shapes disagree, or (defensively) the document references an
        external resource.
    """
    from colide_core.render import plots
    from colide_core.evaluation._metrics import evaluate, tetrad_metrics
    from colide_core.evaluation.checks import run_checks
    from colide_core.evaluation.curves import edge_score_curves, stable_region, threshold_curve
    from colide_core.render.graph_html import graph_html

    fits = list(fits)
    if not fits:
        raise ValueError("the report needs at least one fit.")
    values, names = check_X(X, min_samples=3)
    n, d = values.shape
    names = names or [f"X{k}" for k in range(d)]
    truth = None if B_true is None else (np.asarray(B_true.to_numpy() if hasattr(B_true, "to_numpy") else B_true) != 0)
    first = fits[0]
    if checks is None:
        checks = run_checks(pd.DataFrame(values, columns=names), first.A, W=first.W, frequency=frequency)
    fig = _Figures()
    created = created or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
           f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
           f"<title>CoLiDE report · {html_escape(dataset_name)}</title><style>{_CSS}</style></head><body>"]
    sections = [("data", "Data"), ("settings", "Settings"), ("graph", "Graph"), ("noise", "Noise"),
                ("checks", "Checks"), ("evidence", "Edge evidence")]
    if truth is not None:
        sections.append(("metrics", "Metrics and curves"))
    if path is not None:
        sections.append(("path", "λ and threshold"))
    if audit is not None:
        sections.append(("prior", "Prior knowledge"))
    sections.append(("manifest", "Reproduce"))
    out.append(f"<h1>CoLiDE report: {html_escape(dataset_name)}</h1>"
               f"<p class='muted'>Made {html_escape(created)} by colide-dashboard · CoLiDE: Saboksayr, Mateos "
               "&amp; Tepper, <i>Concomitant Linear DAG Estimation</i>, ICLR 2024 · works offline</p>")
    out += [_para(t) for t in notes]
    out.append("<nav>" + "".join(f"<a href='#{k}'>{v}</a>" for k, v in sections) + "</nav>")

    # --- data
    desc = pd.DataFrame({"node": names, "mean": values.mean(axis=0), "sd": values.std(axis=0, ddof=1),
                         "min": values.min(axis=0), "max": values.max(axis=0)})
    out.append(f"<h2 id='data'>Data</h2><p>{n} samples × {d} nodes"
               + (f"; compared with {html_escape(reference_label)} ({int(truth.sum())} edges)" if truth is not None else
                  "; no ground truth") + ".</p>" + _table(desc))

    # --- settings
    keys = sorted({k for f in fits for k in f.params})
    settings = pd.DataFrame({f.label: [json.dumps(f.params.get(k), default=str) for k in keys] for f in fits},
                            index=keys)
    out.append("<h2 id='settings'>Settings</h2>" + _table(settings, index=True))

    # --- graphs
    out.append("<h2 id='graph'>Graph</h2><p class='muted'>Drag to move, scroll to zoom, hover an edge for its "
               "weight. Edge width ∝ |w|" + ("; colours against " + html_escape(reference_label) if truth is not None
                                             else "") + ".</p><div class='graphs'>")
    for f in fits:
        page = graph_html(f.A, names, None if truth is None else truth.astype(float), sigma=f.sigma, height_px=520)
        n_edges = int((np.asarray(f.A) != 0).sum())
        out.append(f"<div><h3>{html_escape(f.label)} · {n_edges} edges</h3>"
                   f"<iframe class='graph' sandbox='allow-scripts' title='graph {html_escape(f.label)}' "
                   f"srcdoc=\"{html_escape(page)}\"></iframe></div>")
    out.append("</div>")

    # --- noise
    sig = pd.DataFrame({"node": names})
    for f in fits:
        if f.sigma is not None:
            sig[f"σ̂ {f.label}"] = np.broadcast_to(np.asarray(f.sigma, dtype=float), (d,))
    sig["residual sd (OLS refit)"] = checks.residuals.table["residual_sd"].to_numpy()
    out.append("<h2 id='noise'>Noise</h2><p>CoLiDE's noise standard deviations (data units; EV has one for all "
               "nodes) next to the residual spread of the refitted SEM of the first fit.</p>" + _table(sig))
    out.append(fig(plots.residual_sd_figure(checks.residuals.table, checks.residuals.noise_model)))

    # --- checks
    out.append(f"<h2 id='checks'>Checks of the {html_escape(first.label)} fit</h2>")
    for _, row in checks.verdicts().iterrows():
        out.append(f"<div class='verdict'><b>{html_escape(row['check'])}: {html_escape(row['verdict'])}.</b> "
                   f"{html_escape(row['summary'])}</div>")
    s = checks.sortability
    out.append("<h3>Sortability</h3>" + fig(plots.sortability_figure(names, s.variances, s.r2, first.A)))
    if checks.standardized is not None:
        out.append("<h3>Standardise and refit</h3>" + _table(checks.standardized.table(names)))
    out.append("<h3>Residuals</h3>" + _table(checks.residuals.table))
    out.append(fig(plots.qq_figure(checks.residuals.refit.residuals, names)))
    out.append(fig(plots.hetero_figure(checks.residuals.refit, names)))
    out.append("<h3>Markov check</h3>" + fig(plots.markov_figure(checks.markov)))
    out.append("<details><summary>Every implied independence tested</summary>"
               + _table(checks.markov.tests) + "</details>")

    # --- evidence
    out.append("<h2 id='evidence'>Edge evidence</h2><p>OLS refit of the learned graph: weight with its 95% "
               "confidence interval, partial correlation of the two ends given the target's other parents, "
               "and the change of BIC when the edge is removed or reversed (positive: the data prefer the edge "
               "as it is; 0 for a reversal: the data cannot orient it; empty: reversing makes a cycle).</p>"
               + _table(checks.evidence))

    # --- metrics and curves
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
        out.append(f"<h2 id='metrics'>Metrics and curves against {html_escape(reference_label)}</h2>"
                   + _table(pd.DataFrame(rows), index=True))
        out.append(fig(plots.roc_figure(rocs, reference_label)))
        out.append(fig(plots.pr_figure(rocs, reference_label)))
        out.append(fig(plots.threshold_figure(tcs, current=first.params.get("threshold"),
                                              reference_label=reference_label)))

    # --- path
    if path is not None:
        region = stable_region(path)
        lam = first.params.get("lambda1")
        thr = first.params.get("threshold")
        current = path.cell(lam, thr) if lam is not None and thr is not None else None
        out.append("<h2 id='path'>Edges and BIC over λ and the threshold</h2>" + _para(region.summary)
                   + fig(plots.path_figure(path, region, current)))

    # --- prior knowledge
    if audit is not None:
        out.append("<h2 id='prior'>Prior knowledge audit</h2>" + _table(audit))

    # --- reproduce
    out.append("<h2 id='manifest'>Reproduce</h2>")
    for f in fits:
        out.append(f"<p>{html_escape(f.label)}: <code>{html_escape(_fit_command(f.params, 'DATA.csv'))}</code></p>")
        if f.manifest is not None:
            out.append(_manifest_script(f.label, f.manifest))
    out.append("</body></html>")
    html = "".join(out)
    if _EXTERNAL.search(html):
        raise ValueError("The report references an external resource.")
    return html


def write_report(path, html) -> None:
    """Write the report text to ``path`` as UTF-8 (the caller decides about overwriting)."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(html)
