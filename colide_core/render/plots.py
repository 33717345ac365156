"""Plotly figures of the model checks and curves, shared by the Check page and the HTML report.

They live in the library (plotly imported here only, lazily by the callers' import of this
module) because ``python -m colide_core report`` draws them without the dashboard. Pure
functions: data in, :class:`plotly.graph_objects.Figure` out.

Node names are user strings and plotly reads a subset of HTML in every text it draws, so each
name is escaped exactly once here with :func:`colide_core.graph.export.html_escape`; every axis keyed
by names is categorical (``type="category"``), so names such as ``1`` or ``2024-01-01`` are not
read as numbers or dates. Convention: ``W[i, j] != 0`` means i -> j.
"""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from colide_core.graph.export import html_escape

__all__ = [
    "sortability_figure", "residual_sd_figure", "qq_figure", "hetero_figure", "markov_figure",
    "roc_figure", "pr_figure", "band_figure", "threshold_figure", "path_figure", "log_axis",
]

_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"]
#: Most points per node drawn in the Q-Q and residual plots (an even subsample beyond that).
MAX_POINTS = 400


def log_axis(values) -> dict:
    """Settings of a plotly log axis that shows the values without cluttered minor labels.

    Plotly labels a log axis at 2 and 5 (or every digit) within each decade when the range is
    short, which over a few decades writes a crowd of small numbers (issue 41). Over two decades or
    more, one label per power of ten (``dtick=1``), written as a power (10⁻⁶) below 0.001; over less,
    plotly's own choice.

    Parameters
    ----------
    values : array-like of float
        What the axis shows; non-finite and non-positive values are ignored.

    Returns
    -------
    dict
        ``{"type": "log", ...}`` for ``fig.update_xaxes`` / ``update_yaxes``.
    """
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v) & (v > 0)]
    out = {"type": "log"}
    if v.size and v.max() / v.min() >= 100.0:
        out["dtick"] = 1
        out["minor"] = {"showgrid": True, "ticks": ""}
        if v.min() < 1e-3:
            out["exponentformat"] = "power"
    return out


def _layout(fig, height=360, **kw):
    fig.update_layout(height=height, margin={"t": 40, "b": 10, "l": 10, "r": 10}, **kw)
    return fig


def _order(A):
    """A topological order of DAG ``A`` (networkx), as a list of indices."""
    import networkx as nx

    G = nx.from_numpy_array((np.asarray(A) != 0).astype(np.int8), create_using=nx.DiGraph)
    return list(nx.lexicographical_topological_sort(G))


def sortability_figure(names, variances, r2, A):
    """Marginal variance (log scale) and R^2 of each node, nodes in the learned causal order.

    Parameters
    ----------
    names : sequence of str
    variances, r2 : array-like of shape (n_nodes,)
    A : array-like of shape (n_nodes, n_nodes)
        The learned DAG; nodes are drawn in a topological order of it (causes first).

    Returns
    -------
    plotly.graph_objects.Figure
        Variances rising from left to right mean the learned order is the order of increasing
        variance (varsortability near 1).
    """
    order = _order(A)
    x = [html_escape(names[k]) for k in order]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("marginal variance (log scale)", "R² given all other nodes"))
    fig.add_bar(x=x, y=np.asarray(variances, dtype=float)[order], name="variance", row=1, col=1,
                marker_color=_COLOURS[0])
    fig.add_bar(x=x, y=np.asarray(r2, dtype=float)[order], name="R²", row=1, col=2, marker_color=_COLOURS[1])
    fig.update_yaxes(**log_axis(variances), row=1, col=1)
    fig.update_yaxes(range=[0, 1], row=1, col=2)
    fig.update_xaxes(type="category", title_text="nodes in the learned causal order")
    return _layout(fig, showlegend=False)


def residual_sd_figure(table, noise_model):
    """Residual standard deviation per node with the pooled (EV) value as a line.

    The axis is logarithmic only when the values span a decade or more (then its title says so).

    Parameters
    ----------
    table : pandas.DataFrame
        :attr:`colide_core.evaluation.checks.ResidualChecks.table` (``node``, ``residual_sd``).
    noise_model : {"EV", "NV"}
        The verdict, shown in the title.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    sd = table["residual_sd"].to_numpy(dtype=float)
    pooled = float(np.sqrt(np.mean(sd ** 2)))
    names = [html_escape(n) for n in table["node"]]
    positive = sd[np.isfinite(sd) & (sd > 0)]
    # a log axis only where the values span a decade or more (issue 28); the EV line is a trace in
    # data units, so it sits at the right height on either axis (a shape's y on a log axis is read
    # as a power of ten: the old line put the axis at 10^126)
    log = positive.size > 1 and positive.max() / positive.min() >= 10.0
    fig = go.Figure()
    fig.add_bar(x=names, y=sd, name="residual sd", marker_color=_COLOURS[0])
    fig.add_scatter(x=names, y=[pooled] * len(names), mode="lines", line={"dash": "dash", "color": "#444"},
                    name=f"one σ for all nodes (EV): {pooled:.4g}")
    fig.update_xaxes(type="category", title_text="node")
    fig.update_yaxes(**(log_axis(sd) if log else {"type": "linear"}),
                     title_text="residual standard deviation (data units" + (", log scale)" if log else ")"))
    return _layout(fig, title_text=f"Residual spread per node: verdict {noise_model}")


def _subsample(k, n):
    return np.unique(np.linspace(0, n - 1, min(n, MAX_POINTS)).round().astype(int)) if k else None


def _grid(k):
    cols = min(4, max(1, k))
    return int(math.ceil(k / cols)), cols


def qq_figure(residuals, names, nodes=None):
    """Normal Q-Q plots of standardised residuals, one panel per node.

    Parameters
    ----------
    residuals : ndarray of shape (n_samples, n_nodes)
        :attr:`colide_core.evaluation.checks.Refit.residuals`.
    names : sequence of str
    nodes : sequence of int, optional
        Which nodes (default all).

    Returns
    -------
    plotly.graph_objects.Figure
        Points on the diagonal mean Gaussian residuals; heavy tails bend away at both ends.
        At most :data:`MAX_POINTS` quantiles per node are drawn.

    Notes
    -----
    Quantiles from :func:`scipy.stats.probplot`.
    """
    from scipy import stats

    R = np.asarray(residuals, dtype=float)
    nodes = list(range(R.shape[1])) if nodes is None else [int(k) for k in nodes]
    rows, cols = _grid(len(nodes))
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[html_escape(names[k]) for k in nodes])
    for p, k in enumerate(nodes):
        r = R[:, k]
        sd = r.std()
        z = (r - r.mean()) / sd if sd > 0 else r * 0
        (theo, ordered), _ = stats.probplot(z)
        keep = _subsample(1, theo.size)
        row, col = p // cols + 1, p % cols + 1
        fig.add_scatter(x=theo[keep], y=ordered[keep], mode="markers", marker={"size": 3, "color": _COLOURS[0]},
                        showlegend=False, row=row, col=col)
        lim = float(max(abs(theo[0]), abs(theo[-1])))
        fig.add_scatter(x=[-lim, lim], y=[-lim, lim], mode="lines", line={"color": "#888", "dash": "dot"},
                        showlegend=False, row=row, col=col)
    return _layout(fig, height=max(260, 220 * rows), title_text="Normal Q-Q plots of the residuals")


def hetero_figure(refit, names, nodes=None):
    """Residuals against fitted values, one panel per node with parents.

    Parameters
    ----------
    refit : colide_core.evaluation.checks.Refit
    names : sequence of str
    nodes : sequence of int, optional
        Default: every node with at least one parent.

    Returns
    -------
    plotly.graph_objects.Figure
        A funnel shape (spread growing with the fit) is heteroscedasticity.
    """
    if nodes is None:
        nodes = [k for k in range(refit.W.shape[0]) if refit.adjacency[:, k].any()]
    nodes = list(nodes)
    if not nodes:
        fig = go.Figure()
        fig.add_annotation(text="No node has parents: nothing to plot.", showarrow=False)
        return _layout(fig, height=200)
    rows, cols = _grid(len(nodes))
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[html_escape(names[k]) for k in nodes])
    n = refit.residuals.shape[0]
    keep = _subsample(1, n)
    for p, k in enumerate(nodes):
        fig.add_scatter(x=refit.fitted[keep, k], y=refit.residuals[keep, k], mode="markers",
                        marker={"size": 3, "color": _COLOURS[1]}, showlegend=False,
                        row=p // cols + 1, col=p % cols + 1)
    return _layout(fig, height=max(260, 220 * rows), title_text="Residuals against fitted values")


def markov_figure(markov):
    """Histogram of the share of rejected independences for random DAGs, the learned graph's marked.

    Parameters
    ----------
    markov : colide_core.evaluation.checks.MarkovCheck

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    shares = np.asarray(markov.random_shares, dtype=float)
    shares = shares[~np.isnan(shares)]
    if shares.size:
        fig.add_histogram(x=shares, xbins={"start": 0, "end": 1.0001, "size": 0.05}, name="random DAGs",
                          marker_color="#aaa")
    if not math.isnan(markov.share_rejected):
        fig.add_vline(x=markov.share_rejected, line_color=_COLOURS[3], line_width=3,
                      annotation_text=f"learned graph: {markov.share_rejected:.0%}")
    fig.add_vline(x=markov.alpha, line_dash="dot", annotation_text="expected by chance",
                  annotation_position="bottom right")
    fig.update_xaxes(range=[0, 1], title_text="share of implied independences rejected", tickformat=".0%")
    fig.update_yaxes(title_text="random DAGs")
    return _layout(fig, title_text="Markov check: learned graph against random DAGs with as many edges")


def _curve_figure(lines, kind):
    """ROC or precision-recall lines, each with an optional band: the one drawing of both curves.

    Parameters
    ----------
    lines : iterable of dict
        One per curve: ``name`` (legend text, already escaped), ``x`` and ``y`` (arrays of the same
        length, in [0, 1]), ``colour``, ``shape`` (``"hv"`` steps or ``"linear"``), and optionally
        ``lo`` and ``hi`` (a band's bounds at ``x``, drawn filled under the line) and ``group``
        (the legend group that shows and hides the line and its band together).
    kind : {"roc", "pr"}
        ROC (TPR over FPR, with the chance diagonal) or precision over recall.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    for line in lines:
        if line.get("lo") is not None:
            x = np.asarray(line["x"])
            fig.add_scatter(x=np.concatenate([x, x[::-1]]), y=np.concatenate([line["hi"], line["lo"][::-1]]),
                            fill="toself", fillcolor=line["colour"], opacity=0.2, line={"width": 0},
                            hoverinfo="skip", showlegend=False, legendgroup=line.get("group"))
        fig.add_scatter(x=line["x"], y=line["y"], mode="lines", line={"shape": line["shape"], "color": line["colour"]},
                        name=line["name"], legendgroup=line.get("group"))
    if kind == "roc":
        fig.add_scatter(x=[0, 1], y=[0, 1], mode="lines", line={"dash": "dot", "color": "#888"}, name="chance",
                        hoverinfo="skip")
    fig.update_xaxes(title_text="false positive rate" if kind == "roc" else "recall", range=[0, 1])
    fig.update_yaxes(title_text="true positive rate" if kind == "roc" else "precision", range=[0, 1.02])
    return fig


def roc_figure(curves: dict, reference_label="ground truth"):
    """ROC curves of |W| as an edge score, one per fit.

    Parameters
    ----------
    curves : dict
        Label (e.g. "EV", "NV") -> :class:`colide_core.evaluation.curves.EdgeScoreCurves`.
    reference_label : str
        What the curves are scored against ("ground truth" or "your reference").

    Returns
    -------
    plotly.graph_objects.Figure
        One step line per fit (x = FPR, y = TPR, as in ``curves``), then the chance diagonal.
    """
    lines = [{"name": f"{html_escape(label)} (AUROC {c.auroc:.3f})", "x": c.fpr, "y": c.tpr,
              "colour": _COLOURS[k % 5], "shape": "hv"} for k, (label, c) in enumerate(curves.items())]
    return _layout(_curve_figure(lines, "roc"), title_text=f"ROC of |W| against {html_escape(reference_label)}")


def pr_figure(curves: dict, reference_label="ground truth"):
    """Precision-recall curves of |W| as an edge score, one per fit (see :func:`roc_figure`)."""
    lines = [{"name": f"{html_escape(label)} (AUPRC {c.auprc:.3f})", "x": c.recall, "y": c.precision,
              "colour": _COLOURS[k % 5], "shape": "hv"} for k, (label, c) in enumerate(curves.items())]
    fig = _curve_figure(lines, "pr")
    if curves:
        c = list(curves.values())[-1]
        base = c.n_pos / max(c.n_pos + c.n_neg, 1)
        fig.add_hline(y=base, line_dash="dot", annotation_text=f"chance ({base:.2f})")
    return _layout(fig, title_text=f"Precision-recall of |W| against {html_escape(reference_label)}")


def band_figure(bands: dict, kind: str = "roc", colour=None):
    """Mean ROC or precision-recall curves over seeds with a ± 1 std band, one per method.

    Parameters
    ----------
    bands : dict
        Method -> :func:`colide_core.evaluation.curves.bands_over_seeds` frame (``grid``, the mean
        and std of ``tpr`` or ``precision`` on it; AUROC / AUPRC mean and std and ``n_seeds`` in
        ``.attrs``), e.g. ``dashboard.comparison.curve_bands``.
    kind : {"roc", "pr"}
        ROC (TPR over FPR, steps, with the chance diagonal) or precision over recall (linear).
    colour : callable, optional
        ``colour(method) -> str``, e.g. :func:`colide_core.render.figures.method_colour`; by
        default the methods take this module's palette in turn.

    Returns
    -------
    plotly.graph_objects.Figure
        Per method a filled band (mean ± std clipped to [0, 1], no legend entry) and the mean line,
        legend "method (AUROC mean ± std, n seeds)", both in the legend group of the method's
        escaped name (plotly decodes entities); for ROC the chance diagonal last.

    Raises
    ------
    ValueError
        If ``kind`` is neither ``"roc"`` nor ``"pr"``.
    """
    if kind not in ("roc", "pr"):
        raise ValueError(f"kind must be 'roc' or 'pr', got {kind!r}")
    y, auc = ("tpr", "auroc") if kind == "roc" else ("precision", "auprc")
    lines = []
    for k, (method, b) in enumerate(bands.items()):
        mean, std = b[f"{y}_mean"].to_numpy(), b[f"{y}_std"].to_numpy()
        name, n = html_escape(method), b.attrs["n_seeds"]
        lines.append({"name": (f"{name} ({auc.upper()} {b.attrs[f'{auc}_mean']:.3f} ± {b.attrs[f'{auc}_std']:.3f}, "
                               f"{n} seed{'s' if n != 1 else ''})"),
                      "group": name, "x": b["grid"].to_numpy(), "y": mean,
                      "lo": np.clip(mean - std, 0, 1), "hi": np.clip(mean + std, 0, 1),
                      "colour": colour(method) if colour is not None else _COLOURS[k % 5],
                      "shape": "hv" if kind == "roc" else "linear"})
    fig = _curve_figure(lines, kind)
    fig.update_layout(legend={"orientation": "h", "y": -0.25}, margin={"t": 30})
    return fig


def threshold_figure(tables: dict, current=None, reference_label="ground truth"):
    """SHD against the number of edges, and Tetrad's precision/recall against the threshold.

    Parameters
    ----------
    tables : dict
        Label -> DataFrame from :func:`colide_core.evaluation.curves.threshold_curve`.
    current : float, optional
        The threshold in use, marked on the right panel.
    reference_label : str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = make_subplots(rows=1, cols=2, subplot_titles=("SHD against the number of edges",
                                                        "precision and recall against the threshold"))
    for k, (label, t) in enumerate(tables.items()):
        colour = _COLOURS[k % 5]
        lab = html_escape(label)
        fig.add_scatter(x=t["edges"], y=t["shd"], mode="lines+markers", line={"shape": "hv", "color": colour},
                        marker={"size": 4}, name=f"{lab} SHD", row=1, col=1)
        for key, dash in (("adjacency_precision", "solid"), ("adjacency_recall", "dot"),
                          ("arrowhead_precision", "dash"), ("arrowhead_recall", "dashdot")):
            fig.add_scatter(x=t["threshold"], y=t[key], mode="lines", line={"shape": "hv", "color": colour, "dash": dash},
                            name=f"{lab} {key.replace('_', ' ')}", row=1, col=2)
    if current is not None:
        fig.add_vline(x=float(current), line_dash="dot", row=1, col=2)
    fig.update_xaxes(title_text="edges", row=1, col=1)
    fig.update_yaxes(title_text="SHD", row=1, col=1)
    fig.update_xaxes(title_text="threshold on |w|", row=1, col=2)
    fig.update_yaxes(range=[0, 1.02], row=1, col=2)
    return _layout(fig, height=420, title_text=f"Against {html_escape(reference_label)}")


def path_figure(path, region, current=None):
    """Edges and BIC over the λ x threshold grid, the stable region outlined.

    Parameters
    ----------
    path : colide_core.solver.path.LambdaPath
    region : colide_core.evaluation.curves.StableRegion
    current : tuple of int, optional
        ``(i_lambda, i_threshold)`` of the fit shown, marked with a circle.

    Returns
    -------
    plotly.graph_objects.Figure
        Left: the number of edges of each cell (colour and text); right: its BIC. Squares mark
        the stable region (the largest plateau of one graph), a star the lowest BIC.
    """
    lam = [f"{v:.3g}" for v in path.lambdas]
    thr = [f"{v:g}" for v in path.thresholds]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("edges", "BIC (lower is better)"), horizontal_spacing=0.12)
    fig.add_heatmap(x=thr, y=lam, z=path.edge_counts, text=path.edge_counts, texttemplate="%{text}",
                    colorscale="Blues", showscale=False, row=1, col=1,
                    hovertemplate="λ %{y}, threshold %{x}: %{z} edges<extra></extra>")
    fig.add_heatmap(x=thr, y=lam, z=path.bic, colorscale="Viridis", reversescale=True, row=1, col=2,
                    colorbar={"x": 1.0, "len": 0.9}, hovertemplate="λ %{y}, threshold %{x}: BIC %{z:.1f}<extra></extra>")
    ii, jj = np.nonzero(region.mask)
    for col in (1, 2):
        fig.add_scatter(x=[thr[j] for j in jj], y=[lam[i] for i in ii], mode="markers",
                        marker={"symbol": "square-open", "size": 22, "color": "#d62728", "line": {"width": 2}},
                        name="stable region", showlegend=col == 1, row=1, col=col)
        b = region.best_bic
        fig.add_scatter(x=[thr[b[1]]], y=[lam[b[0]]], mode="markers", name="lowest BIC", showlegend=col == 1,
                        marker={"symbol": "star", "size": 14, "color": "#ffbf00", "line": {"width": 1}},
                        row=1, col=col)
        if current is not None:
            fig.add_scatter(x=[thr[current[1]]], y=[lam[current[0]]], mode="markers", name="fit shown",
                            showlegend=col == 1, marker={"symbol": "circle-open", "size": 16, "color": "black",
                                                         "line": {"width": 2}}, row=1, col=col)
    fig.update_xaxes(type="category", title_text="threshold")
    fig.update_yaxes(type="category", title_text="λ")
    return _layout(fig, height=440, legend={"orientation": "h", "y": -0.15})
