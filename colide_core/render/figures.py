"""Plotly figures of the dashboard (pure functions: no Streamlit), and reading clicks back from them.

Node and method names are user-supplied and plotly interprets a subset of HTML in every text it
draws (tick labels, legend entries, hover text, annotations: tags such as ``<b>`` and entities such
as ``&lt;``), so every name is escaped exactly once with :func:`dashboard.infra.text.html_escape` before it
reaches a figure; plotly decodes the entities and draws the name as it was.

Every axis whose values are names is categorical (``type="category"``): plotly would otherwise
guess a numeric or date axis from names such as ``1``, ``1.0``, ``01`` or ``2024-01-01`` and draw
several nodes on one position.
Convention: ``W[i, j] != 0`` means the edge i -> j (also for frequency matrices).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from colide_core.defaults import LAMBDA1, THRESHOLD
from colide_core.render import graph_style
from colide_core.graph._dag import classify_edges
from colide_core.graph.export import html_escape
from colide_core.render.graph_style import EDGE_STYLES
from colide_core.render.plots import log_axis

__all__ = [
    "noise_figure", "compare_figure", "objective_figure", "frequency_figure", "sigma_interval_figure",
    "edge_count_figure", "path_heatmap", "cell_from_selection", "playback_figure",
    "adjacency_figure", "intervention_figure",
]

#: One colour per method on every chart (issue 28: red was DAGMA in the bars and CoLiDE-NV in the
#: curves of the same page). Keys are ``colide_core.evaluation.baselines.METHODS`` names.
METHOD_COLOURS = {"CoLiDE-EV": "#1f77b4", "CoLiDE-NV": "#ff7f0e", "DAGMA-linear": "#d62728",
                  "SortNRegress": "#9467bd", "GES": "#8c564b", "GIES": "#e377c2", "PC": "#7f7f7f",
                  "CoLiDE-TOPO": "#17becf"}
#: Colours for methods not listed above, chosen by a stable hash of the name.
_SPARE = ("#bcbd22", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173")


def method_colour(method) -> str:
    """The colour of ``method`` on every chart of the dashboard.

    Parameters
    ----------
    method : str
        A method name (``"CoLiDE-NV"``, ``"GES"``, ...); ``"EV"`` / ``"NV"`` mean CoLiDE's.

    Returns
    -------
    str
        A ``#rrggbb`` colour: :data:`METHOD_COLOURS`, else one of a spare palette picked by a
        stable hash (the same name always gets the same colour, in every process).

    Examples
    --------
    >>> method_colour("NV") == method_colour("CoLiDE-NV") == "#ff7f0e"
    True
    """
    import zlib

    name = str(method)
    name = f"CoLiDE-{name}" if name in ("EV", "NV") else name
    if name in METHOD_COLOURS:
        return METHOD_COLOURS[name]
    return _SPARE[zlib.crc32(name.encode("utf-8")) % len(_SPARE)]


_COLOURS = {"EV": METHOD_COLOURS["CoLiDE-EV"], "NV": METHOD_COLOURS["CoLiDE-NV"], "true": "#2ca02c"}


def noise_figure(names, estimates: dict, sigma_true=None) -> go.Figure:
    """Bar chart of the estimated noise standard deviation per node.

    Parameters
    ----------
    names : sequence of str
        Node names, length ``n_nodes``.
    estimates : dict
        Label (e.g. "NV", "EV (stopped, partial)") -> sigma: an array of shape (n_nodes,)
        is drawn as one bar per node; a scalar (the EV model's single sigma) as one horizontal
        line across all nodes.
    sigma_true : array-like of shape (n_nodes,), optional
        True noise standard deviations (simulated data), drawn as bars beside the estimates.

    Returns
    -------
    plotly.graph_objects.Figure
        One group of bars per node on a categorical x axis (one category per name, in order).
    """
    x = [html_escape(n) for n in names]
    fig = go.Figure()
    if sigma_true is not None:
        fig.add_bar(x=x, y=np.asarray(sigma_true, dtype=float), name="true σ",
                    marker_color=_COLOURS["true"])
    for label, sigma in estimates.items():
        colour = _COLOURS.get(label.split()[0], None)
        if np.ndim(sigma) == 0:
            fig.add_hline(y=float(sigma), line_dash="dash", line_color=colour or "#444",
                          annotation_text=f"{html_escape(label)} σ̂ = {float(sigma):.4g}",
                          annotation_position="top left")
            # an invisible trace so the line also appears in the legend
            fig.add_scatter(x=[x[0]], y=[float(sigma)], mode="lines", name=f"{html_escape(label)} σ̂ (one for all)",
                            line={"dash": "dash", "color": colour or "#444"}, hoverinfo="skip")
        else:
            fig.add_bar(x=x, y=np.asarray(sigma, dtype=float), name=f"{html_escape(label)} σ̂",
                        marker_color=colour)
    fig.update_layout(barmode="group", yaxis_title="noise standard deviation σ",
                      xaxis_title="node", legend_title_text="", margin={"t": 30, "b": 10},
                      height=380)
    fig.update_xaxes(type="category")
    return fig


def compare_figure(summary: pd.DataFrame, metrics=("shd", "shd_cpdag", "sid"), labels=None) -> go.Figure:
    """Grouped bar chart (mean ± std over repetitions) of a few metrics per method.

    Parameters
    ----------
    summary : pandas.DataFrame
        One row per method (index = method name), columns ``f"{m}_mean"`` and ``f"{m}_std"``
        for each metric ``m``.
    metrics : sequence of str
        Which metrics to draw (missing ones are skipped).
    labels : dict, optional
        Metric -> axis label (default: the upper-cased name).

    Returns
    -------
    plotly.graph_objects.Figure
        Metrics on a categorical x axis, one trace per method (legend: the escaped name).
    """
    fig = go.Figure()
    present = [m for m in metrics if f"{m}_mean" in summary.columns]
    labels = [(labels or {}).get(m, m.upper().replace("_", "-")) for m in present]
    for method, row in summary.iterrows():
        fig.add_bar(
            x=labels,
            y=[row[f"{m}_mean"] for m in present],
            # every metric is >= 0: the lower bar stops at zero (asymmetric), never below it
            error_y={"type": "data", "symmetric": False,
                     "array": [0.0 if pd.isna(row.get(f"{m}_std")) else row[f"{m}_std"] for m in present],
                     "arrayminus": [0.0 if pd.isna(row.get(f"{m}_std")) else min(row[f"{m}_std"], row[f"{m}_mean"])
                                    for m in present]},
            name=html_escape(method),
            marker_color=method_colour(method),
        )
    fig.update_layout(barmode="group", yaxis_title="mean ± std over repetitions (clipped at 0)",
                      margin={"t": 30, "b": 10}, height=400)
    fig.update_xaxes(type="category")
    return fig


def objective_figure(objectives: dict) -> go.Figure:
    """Objective value at each solver checkpoint, one line per fit, stages marked.

    Parameters
    ----------
    objectives : dict
        Label -> a :class:`colide_core.SolverResult` (its ``history``: ``"objective"`` and
        ``"stage"`` per checkpoint) or a plain sequence of objective values.

    Returns
    -------
    plotly.graph_objects.Figure
        x: checkpoint number; y: objective, on a log axis when every value is positive (the
        stages' values differ by orders of magnitude, a linear axis flattens all but the first
        few); a dotted vertical line where each fit enters a new stage (μ, s).
    """
    fig = go.Figure()
    all_values, boundaries = [], set()
    for label, rec in objectives.items():
        hist = getattr(rec, "history", None)
        if hist is not None:
            obj = [float(o) for o in (hist or {}).get("objective", ())]
            stages = list((hist or {}).get("stage", ()))
            if len(stages) == len(obj):
                boundaries.update(i for i in range(1, len(stages)) if stages[i] != stages[i - 1])
        else:
            obj = [float(o) for o in rec]
        all_values += obj
        fig.add_scatter(x=list(range(1, len(obj) + 1)), y=obj, mode="lines", name=html_escape(label))
    for i in sorted(boundaries):
        fig.add_vline(x=i + 0.5, line_dash="dot", line_color="#888", line_width=1)
    log = bool(all_values) and all(np.isfinite(v) and v > 0 for v in all_values)
    fig.update_layout(xaxis_title="checkpoint", yaxis_title="objective" + (" (log scale)" if log else ""),
                      height=300, margin={"t": 30, "b": 10})
    fig.update_yaxes(**(log_axis(all_values) if log else {"type": "linear"}))
    return fig


def frequency_figure(frequency, names, *, min_frequency=0.0, weight_mean=None, B_true=None,
                     height=520, positions=None) -> go.Figure:
    """Network drawing where each edge's opacity and width are proportional to its frequency.

    Parameters
    ----------
    frequency : ndarray of shape (d, d)
        Bootstrap frequencies in [0, 1]; ``frequency[i, j]`` is about i -> j.
    names : sequence of str
        Node names (escaped here).
    min_frequency : float, default=0.0
        Edges with a lower frequency are not drawn (edges never found are never drawn).
    weight_mean : ndarray of shape (d, d), optional
        Bagged weights, shown in the hover text.
    B_true : array-like of shape (d, d), optional
        Ground truth: edges are coloured correct / reversed / extra, and true edges not drawn
        (no direction at or above ``min_frequency``) are shown dashed grey.
    height : int
        Figure height in pixels.

    positions : array-like of shape (d, 2), optional
        Node positions in drawing coordinates (x right, y down), e.g. the graph view's; default
        :func:`colide_core.render.graph_style.unit_positions` (circular, node 0 at the top, clockwise),
        the same as every other drawing.

    Returns
    -------
    plotly.graph_objects.Figure
        The project's one graph style (:mod:`colide_core.render.graph_style`: colours, positions,
        legend); one annotation arrow per drawn edge (opacity = frequency, width 1 + 5 *
        frequency) and an invisible marker at each edge's midpoint carrying its hover text.
    """
    F = np.asarray(frequency, dtype=float)
    d = F.shape[0]
    labels = [html_escape(n) for n in names]
    unit = graph_style.unit_positions(d) if positions is None else np.asarray(positions, dtype=float)
    span = max(float(np.ptp(unit[:, 0])), float(np.ptp(unit[:, 1])), 1e-12) if d > 1 else 1.0
    unit = (unit - unit.mean(axis=0)) / span * 2.0 if positions is not None else unit
    xy = np.column_stack([unit[:, 0], -unit[:, 1]])  # plotly's y axis points up
    shown = F >= max(float(min_frequency), 1e-12)
    np.fill_diagonal(shown, False)
    fig = go.Figure()
    kinds = classify_edges(shown.astype(float), B_true)
    mid_x, mid_y, hover = [], [], []
    for i, j, kind in kinds:
        colour, dashed, _ = EDGE_STYLES[kind]
        if kind == "missing":
            fig.add_scatter(x=[xy[i, 0], xy[j, 0]], y=[xy[i, 1], xy[j, 1]], mode="lines",
                            line={"color": colour, "dash": "dash", "width": 1.2}, hoverinfo="skip",
                            showlegend=False)
            continue
        f = float(F[i, j])
        fig.add_annotation(x=xy[j, 0], y=xy[j, 1], ax=xy[i, 0], ay=xy[i, 1], xref="x", yref="y",
                           axref="x", ayref="y", showarrow=True, arrowhead=2, arrowsize=1.0,
                           arrowwidth=1.0 + 5.0 * f, arrowcolor=colour, opacity=max(0.08, f),
                           standoff=16, startstandoff=12, text="")
        mid_x.append(0.55 * xy[i, 0] + 0.45 * xy[j, 0])
        mid_y.append(0.55 * xy[i, 1] + 0.45 * xy[j, 1])
        w = "" if weight_mean is None else f"<br>bagged weight {float(weight_mean[i, j]):+.3g}"
        hover.append(f"{labels[i]} → {labels[j]}<br>found in {100 * f:.0f}% of resamples{w}"
                     + ("" if kind == "learned" else f"<br>{kind}"))
    if mid_x:
        fig.add_scatter(x=mid_x, y=mid_y, mode="markers", marker={"size": 10, "color": "rgba(0,0,0,0)"},
                        hovertext=hover, hoverinfo="text", showlegend=False)
    fig.add_scatter(x=xy[:, 0], y=xy[:, 1], mode="markers+text", text=labels, textposition="middle center",
                    marker={"size": 34, "color": graph_style.NODE_FILL,
                            "line": {"color": graph_style.NODE_LINE, "width": 1}},
                    hovertext=labels, hoverinfo="text", showlegend=False)
    if B_true is not None:
        for kind in ("correct", "reversed", "extra", "missing"):
            colour, dashed, text = EDGE_STYLES[kind]
            fig.add_scatter(x=[None], y=[None], mode="lines", name=html_escape(text),
                            line={"color": colour, "dash": "dash" if dashed else "solid", "width": 3})
    fig.update_xaxes(visible=False, range=[-1.25, 1.25])
    fig.update_yaxes(visible=False, range=[-1.25, 1.25], scaleanchor="x")
    fig.update_layout(height=height, margin={"t": 10, "b": 10, "l": 10, "r": 10},
                      legend={"orientation": "h", "y": -0.02}, plot_bgcolor="white")
    return fig


def sigma_interval_figure(names, sigma_samples, level=0.95, sigma_true=None) -> go.Figure:
    """Bars of the bootstrap mean noise standard deviation with percentile intervals.

    Parameters
    ----------
    names : sequence of str
        Node names (escaped here).
    sigma_samples : ndarray of shape (n_boot, d) (NV) or (n_boot,) (EV)
        Bootstrap samples of the noise standard deviation(s), data units.
    level : float in (0, 1), default=0.95
        Coverage of the percentile interval drawn as error bars.
    sigma_true : array-like of shape (d,), optional
        True standard deviations (simulated data), drawn as markers.

    Returns
    -------
    plotly.graph_objects.Figure
        One bar per node (NV) or a single bar "all nodes (EV)", on a categorical x axis.
    """
    S = np.asarray(sigma_samples, dtype=float)
    a = (1.0 - float(level)) / 2.0
    x = [html_escape(n) for n in names] if S.ndim == 2 else ["all nodes (EV)"]
    S2 = S if S.ndim == 2 else S[:, None]
    mean = S2.mean(axis=0)
    low = np.quantile(S2, a, axis=0)
    high = np.quantile(S2, 1.0 - a, axis=0)
    fig = go.Figure()
    fig.add_bar(x=x, y=mean, name="bootstrap mean σ̂", marker_color="#ff7f0e",
                error_y={"type": "data", "symmetric": False, "array": high - mean, "arrayminus": mean - low},
                customdata=np.column_stack([low, high]),
                hovertemplate="%{x}: σ̂ = %{y:.4g}<br>" + f"{100 * level:.0f}%"
                              + " interval [%{customdata[0]:.4g}, %{customdata[1]:.4g}]<extra></extra>")
    if sigma_true is not None and S.ndim == 2:
        fig.add_scatter(x=x, y=np.asarray(sigma_true, dtype=float), mode="markers", name="true σ",
                        marker={"color": "#2ca02c", "size": 11, "symbol": "diamond"})
    fig.update_layout(yaxis_title="noise standard deviation σ (data units)", height=360,
                      margin={"t": 30, "b": 10}, legend_title_text="")
    fig.update_xaxes(type="category")
    return fig


def edge_count_figure(path, paper_lambda=LAMBDA1) -> go.Figure:
    """Number of edges against lambda1 (log axis), one line per threshold.

    Parameters
    ----------
    path : colide_core.solver.path.LambdaPath
    paper_lambda : float, default=colide_core.defaults.LAMBDA1
        Marked with a dashed vertical line (the paper's default).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    for t, thr in enumerate(path.thresholds):
        fig.add_scatter(x=path.lambdas, y=path.edge_counts[:, t], mode="lines+markers",
                        name=f"threshold {thr:g}", line={"width": 3 if math.isclose(thr, THRESHOLD) else 1.5})
    fig.add_vline(x=paper_lambda, line_dash="dash", line_color="#444",
                  annotation_text=f"paper λ = {paper_lambda:g}", annotation_position="top")
    fig.update_xaxes(**log_axis(path.lambdas), title="λ (lambda1, log scale)")
    fig.update_yaxes(title="edges in the DAG")
    fig.update_layout(height=360, margin={"t": 30, "b": 10}, legend_title_text="")
    return fig


def cell_from_selection(chart_state, path):
    """The grid cell a click on :func:`path_heatmap` selected, from Streamlit's plotly selection state.

    Parameters
    ----------
    chart_state : dict-like or None
        ``st.session_state[<chart key>]``: ``{"selection": {"points": [...]}}``; each point may
        carry ``customdata`` (``[i_lambda, i_threshold]``, set by :func:`path_heatmap`; a real
        browser may return it as ``{"0": i_lambda, "1": i_threshold}``) or only its ``x``
        (threshold label) and ``y`` (lambda label).
    path : colide_core.solver.path.LambdaPath

    Returns
    -------
    (int, int) or None
        ``(i_lambda, i_threshold)`` of the first selected point inside the grid, else None.
    """
    try:
        points = list(chart_state["selection"]["points"]) if chart_state else []
    except (KeyError, TypeError):
        return None
    ys = [_fmt_lambda(x) for x in path.lambdas]
    xs = [f"{t:g}" for t in path.thresholds]
    for p in points:
        if not hasattr(p, "get"):
            continue
        cell = _index_pair(p.get("customdata"))
        if cell is None and str(p.get("y")) in ys and str(p.get("x")) in xs:
            cell = (ys.index(str(p.get("y"))), xs.index(str(p.get("x"))))
        if cell is not None and 0 <= cell[0] < len(ys) and 0 <= cell[1] < len(xs):
            return cell
    return None


def _index_pair(customdata):
    """``(i, j)`` from a point's ``customdata`` as the browser sends it back, else None.

    A list ``[i, j]`` when the figure held plain lists; a dict ``{"0": i, "1": j}`` when plotly
    serialised a numpy array as a typed array (Streamlit 1.67 returns that for numpy customdata).
    Anything else (missing, wrong length, non-integral values) gives None.
    """
    if isinstance(customdata, dict):
        customdata = [customdata.get("0", customdata.get(0)), customdata.get("1", customdata.get(1))]
    if not isinstance(customdata, (list, tuple)) or len(customdata) != 2:
        return None
    try:
        pair = tuple(float(v) for v in customdata)
    except (TypeError, ValueError):
        return None
    if not all(math.isfinite(v) and v == int(v) for v in pair):
        return None
    return int(pair[0]), int(pair[1])


def _fmt_lambda(x):
    return f"{x:.3g}"


def path_heatmap(path, values, *, title, colorscale="Viridis", reverse=False, selected=None,
                 paper=(LAMBDA1, THRESHOLD), fmt=".3g") -> go.Figure:
    """Heatmap of one quantity over the (lambda1, threshold) grid, clickable cell by cell.

    Parameters
    ----------
    path : colide_core.solver.path.LambdaPath
    values : ndarray of shape (n_lambdas, n_thresholds)
    title : str
        Colour-bar title (a fixed string, not user input).
    colorscale : str
    reverse : bool
        Reverse the colour scale (e.g. so that "better" is always the same colour).
    selected : (int, int), optional
        Cell to outline (the graph shown below the heatmap).
    paper : (float, float), default=(colide_core.defaults.LAMBDA1, colide_core.defaults.THRESHOLD)
        The paper's default (lambda1, threshold); its cell (the nearest grid point) gets a star.
    fmt : str
        Number format of the cell labels.

    Returns
    -------
    plotly.graph_objects.Figure
        Categorical axes (threshold across, lambda1 up). A transparent marker sits on every
        cell with ``customdata = [i_lambda, i_threshold]``, so a click (Streamlit
        ``on_select``) identifies the cell.
    """
    V = np.asarray(values, dtype=float)
    ys = [_fmt_lambda(x) for x in path.lambdas]
    xs = [f"{t:g}" for t in path.thresholds]
    text = [[("" if not np.isfinite(v) else format(v, fmt)) for v in row] for row in V]
    fig = go.Figure()
    fig.add_heatmap(z=V, x=xs, y=ys, colorscale=colorscale, reversescale=reverse, text=text,
                    texttemplate="%{text}", hoverinfo="skip", colorbar={"title": title})
    I, J = np.meshgrid(np.arange(len(ys)), np.arange(len(xs)), indexing="ij")
    fig.add_scatter(x=[xs[j] for j in J.ravel()], y=[ys[i] for i in I.ravel()], mode="markers",
                    marker={"size": 28, "color": "rgba(0,0,0,0)", "symbol": "square"},
                    customdata=np.column_stack([I.ravel(), J.ravel()]).tolist(),
                    hovertemplate="λ = %{y}, threshold = %{x}<br>click to show this graph<extra></extra>",
                    showlegend=False)
    pi, pj = path.cell(*paper)
    exact = math.isclose(path.lambdas[pi], paper[0], rel_tol=1e-6) and math.isclose(path.thresholds[pj], paper[1])
    fig.add_scatter(x=[xs[pj]], y=[ys[pi]], mode="markers",
                    marker={"symbol": "star", "size": 16, "color": "white", "line": {"color": "black", "width": 1}},
                    name=f"paper default (λ {paper[0]:g}, threshold {paper[1]:g})" + ("" if exact else ", nearest cell"),
                    hoverinfo="skip")
    if selected is not None:
        si, sj = selected
        fig.add_scatter(x=[xs[sj]], y=[ys[si]], mode="markers",
                        marker={"symbol": "square-open", "size": 34, "color": "#d62728", "line": {"width": 3}},
                        name="shown below", hoverinfo="skip")
    fig.update_xaxes(title="threshold", type="category")
    fig.update_yaxes(title="λ (lambda1)", type="category")
    fig.update_layout(height=80 + 38 * len(ys), margin={"t": 30, "b": 10},
                      legend={"orientation": "h", "y": 1.08}, clickmode="event+select")
    return fig


def playback_figure(history, mu_schedule, s_used, current=None) -> go.Figure:
    """h(W), the objective and σ̂ at each checkpoint of one fit, stages marked, one checkpoint highlighted.

    Parameters
    ----------
    history : dict of list
        ``SolverResult.history``: ``"stage"``, ``"iteration"``, ``"objective"``, ``"h"``,
        ``"sigma"`` (a float for EV, an array of shape (n_nodes,) for NV), one entry per
        checkpoint.
    mu_schedule : sequence of float
        μ of each stage (the fit's ``mu_schedule``), for the stage labels.
    s_used : sequence of float
        ``s`` each stage ran with (``SolverResult.s_used``).
    current : int or None, default None
        Index of a checkpoint to mark (a vertical line); None: no mark (the drawing's own player
        says which checkpoint it shows).

    Returns
    -------
    plotly.graph_objects.Figure
        Three stacked panels over the checkpoint index: h(W) = d log s − log det(sI − W∘W)
        (log axis: it falls by orders of magnitude), the stage objective, and σ̂ (for NV the
        mean over nodes and its range). A dotted line and a label "stage k: μ, s" at the start
        of each stage.
    """
    from plotly.subplots import make_subplots

    stage = list(history.get("stage", []))
    n = len(stage)
    x = list(range(n))
    h = np.maximum(np.asarray(history.get("h", []), dtype=float), 1e-16)
    obj = np.asarray(history.get("objective", []), dtype=float)
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.05)
    fig.add_scatter(x=x, y=h, mode="lines+markers", name="h(W)", row=1, col=1, marker={"size": 4})
    fig.add_scatter(x=x, y=obj, mode="lines+markers", name="objective", row=2, col=1, marker={"size": 4})
    sig = history.get("sigma", [])
    if sig and sig[0] is not None:
        arr = [np.atleast_1d(np.asarray(v, dtype=float)) for v in sig]
        mean = [float(a.mean()) for a in arr]
        fig.add_scatter(x=x, y=mean, mode="lines+markers", name="σ̂ (mean over nodes)", row=3, col=1,
                        marker={"size": 4})
        if max(a.size for a in arr) > 1:
            fig.add_scatter(x=x, y=[float(a.min()) for a in arr], mode="lines", name="σ̂ min",
                            line={"dash": "dot", "width": 1}, row=3, col=1)
            fig.add_scatter(x=x, y=[float(a.max()) for a in arr], mode="lines", name="σ̂ max",
                            line={"dash": "dot", "width": 1}, row=3, col=1)
    starts = [i for i in range(n) if i == 0 or stage[i] != stage[i - 1]]
    for i in starts:
        k = int(stage[i])
        mu = float(mu_schedule[k]) if k < len(mu_schedule) else float("nan")
        s = float(s_used[k]) if k < len(s_used) else float("nan")
        fig.add_vline(x=i - 0.5 if i else 0, line={"dash": "dot", "color": "#888", "width": 1})
        # two short lines, alternately high and low, so labels of short stages do not collide
        fig.add_annotation(x=i, y=1.0 + (0.07 if len(starts) > 1 and starts.index(i) % 2 else 0.0), xref="x",
                           yref="paper", yanchor="bottom", xanchor="left", showarrow=False,
                           text=f"stage {k + 1}: μ={mu:g}<br>s={s:g}", font={"size": 10}, align="left")
    if current is not None and 0 <= current < n:
        fig.add_vline(x=current, line={"color": "#d62728", "width": 2})
    fig.update_yaxes(**log_axis(h), title_text="h(W) (0: a DAG)", row=1, col=1)
    fig.update_yaxes(title_text="objective", row=2, col=1)
    fig.update_yaxes(title_text="σ̂", row=3, col=1)
    fig.update_xaxes(title_text="checkpoint", row=3, col=1)
    fig.update_layout(height=560, margin={"t": 80, "b": 10}, showlegend=False)
    return fig


#: Largest graph whose adjacency heatmap carries a hover text per cell (weight and kind): above it
#: (with a GPU the dashboard takes 2,000 nodes) d^2 strings would make each chart tens of MB.
HOVER_MAX_NODES = 200


def adjacency_figure(A, names, B_true=None, height=640) -> go.Figure:
    """Summary view of a large graph: its adjacency as a heatmap in the one graph palette.

    Used instead of a node-link drawing above :data:`colide_core.render.graph_style.SUMMARY_NODES`
    nodes, where labels would overlap (a "hairball").

    Parameters
    ----------
    A : ndarray of shape (d, d)
        Thresholded weights, ``A[i, j] != 0`` means i -> j (row = source, column = target).
    names : sequence of str
        Node names (escaped here; both axes categorical).
    B_true : array-like of shape (d, d), optional
        Ground truth: each cell is coloured by its edge kind (correct / reversed / extra /
        missing) with the colours of :data:`colide_core.render.graph_style.EDGE_STYLES`; without it,
        every edge is "learned".
    height : int

    Returns
    -------
    plotly.graph_objects.Figure
        One cell per ordered pair (``z`` the kind's code, uint8); hover text gives source, target,
        weight and kind up to :data:`HOVER_MAX_NODES` nodes, source and target above (the large
        graphs a GPU allows: per-cell text would be tens of MB; the colour gives the kind).
    """
    A = np.asarray(A, dtype=float)
    d = A.shape[0]
    labels = [html_escape(n) for n in names]
    kinds = ["none", "correct", "reversed", "extra", "missing", "learned"]
    code = np.zeros((d, d), dtype=int)
    for i, j, kind in classify_edges(A, B_true):
        code[i, j] = kinds.index(kind)
    colours = ["#ffffff"] + [EDGE_STYLES[k][0] for k in kinds[1:]]
    n = len(kinds)
    scale = []
    for k, c in enumerate(colours):
        scale += [[k / n, c], [(k + 1) / n, c]]
    if d <= HOVER_MAX_NODES:
        hover = {"hovertext": [[f"{labels[i]} → {labels[j]}<br>w = {A[i, j]:+.3g}<br>{kinds[code[i, j]]}"
                                for j in range(d)] for i in range(d)], "hoverinfo": "text"}
    else:  # d^2 hover strings would be tens of MB per chart (58 MB at 1,000 nodes): the pair only
        hover = {"hovertemplate": "%{y} → %{x}<extra></extra>"}
    fig = go.Figure(go.Heatmap(z=code.astype(np.uint8), x=labels, y=labels, zmin=-0.5, zmax=n - 0.5,
                               colorscale=scale, showscale=False, xgap=0.5 if d <= HOVER_MAX_NODES else 0,
                               ygap=0.5 if d <= HOVER_MAX_NODES else 0, **hover))
    present = sorted(set(code.ravel()) - {0})
    for k in present:
        colour, dashed, text = EDGE_STYLES[kinds[k]]
        fig.add_scatter(x=[None], y=[None], mode="markers", name=html_escape(text),
                        marker={"symbol": "square", "size": 12, "color": colour})
    fig.update_xaxes(type="category", title="target", tickangle=-90, showgrid=False)
    fig.update_yaxes(type="category", title="source", autorange="reversed", showgrid=False)
    fig.update_layout(height=height, margin={"t": 10, "b": 10}, plot_bgcolor="white",
                      legend={"orientation": "h", "y": -0.15})
    return fig


def intervention_figure(table, sd_units=True) -> go.Figure:
    """Predicted shifts of every node under an intervention: doing beside seeing.

    Parameters
    ----------
    table : pandas.DataFrame
        :attr:`colide_core.evaluation.interventions.InterventionPrediction.table` (index: node
        names; ``shift``, ``low``, ``high``, ``associational_shift``, ``reference_sd``).
    sd_units : bool, default=True
        Plot in each node's reference standard deviations, else data units.

    Returns
    -------
    plotly.graph_objects.Figure
        Grouped bars on a categorical x axis: "doing" (the causal prediction, with its bootstrap
        interval when there is one) and "seeing" (regression on the intervened node). Node names
        are escaped here.
    """
    t = table
    x = [html_escape(n) for n in t.index]
    shift = t["shift"].to_numpy(float)
    scale = np.ones(len(t))
    if sd_units:
        sd = t["reference_sd"].to_numpy(float)
        scale = np.where(sd > 0, sd, np.nan)
    y = shift / scale
    low, high = t["low"].to_numpy(float) / scale, t["high"].to_numpy(float) / scale
    seen = t["associational_shift"].to_numpy(float) / scale
    fig = go.Figure()
    error = None if np.all(np.isnan(low)) else {"type": "data", "symmetric": False, "array": np.nan_to_num(high - y),
                                                 "arrayminus": np.nan_to_num(y - low)}
    fig.add_bar(x=x, y=np.nan_to_num(y), name="doing (the graph's prediction)", marker_color="#1f77b4",
                error_y=error)
    if not np.all(np.isnan(seen)):
        fig.add_bar(x=x, y=np.nan_to_num(seen), name="seeing (regression on the node)", marker_color="#bbbbbb")
    fig.update_layout(barmode="group", height=340, margin={"t": 30, "b": 10}, legend_title_text="",
                      yaxis_title="predicted shift" + (" (standard deviations)" if sd_units else " (data units)"),
                      legend={"orientation": "h", "y": 1.12})
    fig.update_xaxes(type="category")
    return fig
