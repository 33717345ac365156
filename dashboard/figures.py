"""Plotly figures of the dashboard (pure functions: no Streamlit).

Node and method names are user-supplied and plotly interprets a subset of HTML in text, so
every name is escaped with :func:`dashboard.text.html_escape` before it reaches a figure.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.text import html_escape

__all__ = ["noise_figure", "compare_figure", "objective_figure"]

_COLOURS = {"EV": "#1f77b4", "NV": "#ff7f0e", "true": "#2ca02c"}


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
    """
    fig = go.Figure()
    present = [m for m in metrics if f"{m}_mean" in summary.columns]
    labels = [(labels or {}).get(m, m.upper().replace("_", "-")) for m in present]
    for method, row in summary.iterrows():
        fig.add_bar(
            x=labels,
            y=[row[f"{m}_mean"] for m in present],
            error_y={"type": "data", "array": [0.0 if pd.isna(row.get(f"{m}_std")) else row[f"{m}_std"]
                                               for m in present]},
            name=html_escape(method),
        )
    fig.update_layout(barmode="group", yaxis_title="mean ± std over repetitions",
                      margin={"t": 30, "b": 10}, height=400)
    return fig


def objective_figure(objectives: dict) -> go.Figure:
    """Objective value at each solver checkpoint, one line per fit.

    Parameters
    ----------
    objectives : dict
        Label -> sequence of objective values (one per checkpoint).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    for label, obj in objectives.items():
        fig.add_scatter(y=list(obj), mode="lines", name=html_escape(label))
    fig.update_layout(xaxis_title="checkpoint", yaxis_title="objective", height=300,
                      margin={"t": 30, "b": 10})
    return fig
