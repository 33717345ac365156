"""Helpers of the "trust the edges" pages: Edge confidence, Explorer, Prior knowledge.

Pure functions (plotly figures, tables, parameter plumbing) and a small background job; no
Streamlit here, so everything can be unit-tested. The pages are ``pages/edge_confidence.py``,
``pages/explorer.py`` and ``pages/prior_knowledge.py``; their session-state keys live
in :mod:`dashboard.trust_state`.

Convention: ``W[i, j] != 0`` means the edge i -> j (also for frequency matrices). Node names
are user-supplied and plotly renders a subset of HTML, so every name is escaped with
:func:`dashboard.text.html_escape` before it reaches a figure.
"""
from __future__ import annotations

import math
import time

import networkx as nx
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.graph import EDGE_STYLES, classify_edges
from dashboard.jobs import BackgroundJob
from dashboard.text import html_escape

__all__ = [
    "PATH_KEYS", "TrustJob", "cell_from_selection", "constraints_from_params", "required_mask_for", "edge_count_figure", "frequency_figure",
    "path_heatmap", "path_kwargs", "prior_from_tables", "prior_to_tables", "sigma_interval_figure",
]

#: ``colide_core.path.lambda_path`` keyword arguments that may come from the solver overrides.
PATH_KEYS = ("mu_schedule", "s_schedule", "max_iter", "lr", "tol", "checkpoint", "solver",
             "forbidden", "required", "tiers")
#: CoLiDE keyword arguments that carry prior knowledge.
PRIOR_KEYS = ("forbidden", "required", "tiers")


def path_kwargs(overrides: dict) -> dict:
    """The subset of the solver overrides that :func:`colide_core.path.lambda_path` accepts.

    Parameters
    ----------
    overrides : dict
        ``colide_core.CoLiDE`` keyword arguments (the dashboard's ``solver_overrides``).

    Returns
    -------
    dict
        Only the keys in :data:`PATH_KEYS` (schedules, step size, solver, prior knowledge).
    """
    return {k: v for k, v in (overrides or {}).items() if k in PATH_KEYS}


def constraints_from_params(params) -> dict:
    """Prior-knowledge keyword arguments recorded in a fit's parameters.

    Parameters
    ----------
    params : tuple of (str, object) or dict
        E.g. ``dashboard.fitting.FitResult.params``.

    Returns
    -------
    dict
        ``{"forbidden": ..., "required": ..., "tiers": ...}`` restricted to the keys present.
    """
    p = dict(params)
    return {k: p[k] for k in PRIOR_KEYS if p.get(k) is not None}


def required_mask_for(params, names):
    """The required-edge mask a fit enforced, for ``colide_core.threshold_to_dag(..., required=...)``.

    Parameters
    ----------
    params : tuple of (str, object) or dict
        The fit's ``colide_core.CoLiDE`` parameters (e.g. ``FitResult.params``).
    names : sequence of str
        Node names of the dataset.

    Returns
    -------
    ndarray of bool of shape (d, d) or None
        None when the fit had no prior knowledge. Re-thresholding a constrained fit without this
        mask would drop required edges whose weight is at or below the threshold.

    Raises
    ------
    ValueError
        If the recorded constraints do not fit these node names.
    """
    from colide_core.constraints import resolve_constraints

    cons = constraints_from_params(params)
    if not cons:
        return None
    return resolve_constraints(len(names), list(names), **cons)[1]


# --------------------------------------------------------------------------------------------
# Background job
# --------------------------------------------------------------------------------------------
class TrustJob(BackgroundJob):
    """Run ``fn(callback)`` in a daemon thread, with progress and a Stop request.

    Parameters
    ----------
    fn : callable
        ``fn(callback) -> result``; it must call ``callback(done, total)`` now and then and stop
        (returning a partial result) when the callback returns True. Exceptions are caught and
        kept in :attr:`error` (a message), never raised into the page.
    label : str
        Shown in :attr:`status`.
    key : object
        What was computed (e.g. data hash and parameters), for the page to match results.

    Attributes
    ----------
    fraction : float in [0, 1]
    status : str
    result : object or None
    error : str or None
    """

    def __init__(self, fn, label, key=None):
        self._fn = fn
        self.label = label
        self.key = key
        self.fraction = 0.0
        self.status = f"{label}: starting"
        self.result = None
        self.error = None
        self.started = time.perf_counter()
        self.elapsed = 0.0
        self._init_thread("colide-trust")


    def _callback(self, done, total):
        total = float(total) or 1.0
        self.fraction = min(1.0, max(0.0, float(done) / total))
        shown = f"{done:.1f}" if isinstance(done, float) and not float(done).is_integer() else f"{int(done)}"
        self.status = f"{self.label}: {shown} of {int(total)}"
        return self._stop.is_set()

    def _run(self):
        try:
            self.result = self._fn(self._callback)
        except (ValueError, FloatingPointError, np.linalg.LinAlgError) as exc:
            self.error = f"{self.label} failed: {exc}"
        except Exception as exc:  # the page must never die with a traceback
            self.error = f"{self.label}: unexpected error ({type(exc).__name__}): {exc}"
        finally:
            self.elapsed = time.perf_counter() - self.started
            self.fraction = 1.0
            self.status = f"{self.label}: finished"
            self._done.set()


# --------------------------------------------------------------------------------------------
# Prior knowledge <-> editable tables
# --------------------------------------------------------------------------------------------
def prior_to_tables(prior, names):
    """Editable tables (for ``st.data_editor``) from a :class:`colide_core.constraints.PriorKnowledge`.

    Parameters
    ----------
    prior : PriorKnowledge or None
    names : sequence of str
        Node names of the current dataset; integer nodes in ``prior`` are mapped to them.

    Returns
    -------
    dict
        ``"forbidden"`` and ``"required"``: DataFrames with str columns ``source``, ``target``;
        ``"tiers"``: DataFrame with one row per node, columns ``node`` (str) and ``tier``
        (nullable integer, empty = no tier).
    """
    names = [str(n) for n in names]

    def label(x):
        return names[x] if isinstance(x, int) and 0 <= x < len(names) else str(x)

    out = {}
    for kind in ("forbidden", "required"):
        pairs = [] if prior is None else getattr(prior, kind)
        out[kind] = pd.DataFrame({"source": [label(s) for s, _ in pairs],
                                  "target": [label(t) for _, t in pairs]}, dtype="object")
    tier = {n: pd.NA for n in names}
    for t, group in enumerate(() if prior is None else prior.tiers):
        for node in group:
            tier[label(node)] = t
    out["tiers"] = pd.DataFrame({"node": list(tier), "tier": pd.array(list(tier.values()), dtype="Int64")})
    return out


def prior_from_tables(forbidden, required, tiers):
    """A :class:`colide_core.constraints.PriorKnowledge` from the edited tables.

    Rows with an empty source or target are ignored; tiers are renumbered in increasing order
    (so tiers 0, 2, 5 become 0, 1, 2) and nodes with an empty tier are in no tier.

    Parameters
    ----------
    forbidden, required : pandas.DataFrame
        Columns ``source`` and ``target``.
    tiers : pandas.DataFrame
        Columns ``node`` and ``tier``.

    Returns
    -------
    PriorKnowledge

    Raises
    ------
    ValueError
        If a tier is not a whole number >= 0.
    """
    from colide_core.constraints import PriorKnowledge

    def pairs(frame):
        out = []
        if frame is None or not len(frame):
            return out
        for s, t in zip(frame["source"].tolist(), frame["target"].tolist()):
            if s is None or t is None or (isinstance(s, float) and math.isnan(s)) \
                    or (isinstance(t, float) and math.isnan(t)) or str(s) == "" or str(t) == "":
                continue
            out.append((str(s), str(t)))
        return out

    groups = {}
    if tiers is not None and len(tiers):
        for node, t in zip(tiers["node"].tolist(), tiers["tier"].tolist()):
            if t is None or t is pd.NA or (isinstance(t, float) and math.isnan(t)):
                continue
            if float(t) != int(t) or int(t) < 0:
                raise ValueError(f"The tier of {node} must be a whole number >= 0, got {t}.")
            groups.setdefault(int(t), []).append(str(node))
    ordered = [groups[k] for k in sorted(groups)]
    return PriorKnowledge.create(forbidden=pairs(forbidden), required=pairs(required), tiers=ordered)


# --------------------------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------------------------
def frequency_figure(frequency, names, *, min_frequency=0.0, weight_mean=None, B_true=None,
                     height=520) -> go.Figure:
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

    Returns
    -------
    plotly.graph_objects.Figure
        Node positions from :func:`networkx.circular_layout`; one annotation arrow per drawn
        edge (opacity = frequency, width 1 + 5 * frequency) and an invisible marker at each
        edge's midpoint carrying its hover text.
    """
    F = np.asarray(frequency, dtype=float)
    d = F.shape[0]
    labels = [html_escape(n) for n in names]
    pos = nx.circular_layout(nx.empty_graph(d))
    xy = np.array([pos[k] for k in range(d)])
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
                    marker={"size": 34, "color": "#cfe2f3", "line": {"color": "#6d9eeb", "width": 1}},
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
        One bar per node (NV) or a single bar "all nodes (EV)".
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
    return fig


def edge_count_figure(path, paper_lambda=0.05) -> go.Figure:
    """Number of edges against lambda1 (log axis), one line per threshold.

    Parameters
    ----------
    path : colide_core.path.LambdaPath
    paper_lambda : float
        Marked with a dashed vertical line (the paper's default).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    for t, thr in enumerate(path.thresholds):
        fig.add_scatter(x=path.lambdas, y=path.edge_counts[:, t], mode="lines+markers",
                        name=f"threshold {thr:g}", line={"width": 3 if math.isclose(thr, 0.3) else 1.5})
    fig.add_vline(x=paper_lambda, line_dash="dash", line_color="#444",
                  annotation_text=f"paper λ = {paper_lambda:g}", annotation_position="top")
    fig.update_xaxes(type="log", title="λ (lambda1, log scale)")
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
    path : colide_core.path.LambdaPath

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
                 paper=(0.05, 0.3), fmt=".3g") -> go.Figure:
    """Heatmap of one quantity over the (lambda1, threshold) grid, clickable cell by cell.

    Parameters
    ----------
    path : colide_core.path.LambdaPath
    values : ndarray of shape (n_lambdas, n_thresholds)
    title : str
        Colour-bar title (a fixed string, not user input).
    colorscale : str
    reverse : bool
        Reverse the colour scale (e.g. so that "better" is always the same colour).
    selected : (int, int), optional
        Cell to outline (the graph shown below the heatmap).
    paper : (float, float)
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
                    name="paper default (λ 0.05, threshold 0.3)" + ("" if exact else ", nearest cell"),
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
