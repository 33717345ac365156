"""Pictures of a graph, PNG and SVG, drawn with matplotlib in the project's one graph style.

``networkx``-style drawing on a :class:`matplotlib.figure.Figure` rendered by the Agg/SVG
backends, without :mod:`matplotlib.pyplot` (no global figure state, safe in threads and headless
servers). :func:`colide_core.graph.export.export_graph` calls :func:`to_image` for "png"/"svg".
Convention: ``W[i, j] != 0`` means the edge i -> j.
"""
from __future__ import annotations

import io

import numpy as np

from colide_core.graph._dag import classify_edges
from colide_core._validation import check_named_adjacency
from colide_core.render import graph_style

__all__ = ["to_image"]


def to_image(W, node_names=None, *, fmt="png", layout="circular", dpi=150, figsize=(6, 6),
             seed=0, decimals=2, B_true=None, positions=None, required=None):
    """Picture of the graph as PNG or SVG bytes, in the project's one graph style, with a legend.

    The same drawing as the interactive view (:mod:`colide_core.render.graph_style`): the same node
    positions and orientation, edge colour = agreement with ``B_true`` (correct / reversed /
    extra / missing dashed; "learned" blue without a truth), arrowhead = sign of the weight
    (arrow: positive, bar ⊣: negative), width ∝ |w|, weights written on the edges.

    Parameters
    ----------
    W, node_names
        As in :func:`colide_core.graph.export.to_networkx` (``W[i, j] != 0`` means i -> j).
    fmt : {"png", "svg"}, default "png"
    layout : {"circular", "topological"}, default "circular"
        :func:`colide_core.render.graph_style.unit_positions`; "topological" lays out ``B_true`` (else
        the drawn graph) top-down. Ignored when ``positions`` is given.
    dpi : int, default 150
        Resolution for PNG.
    figsize : tuple of float, default (6, 6)
        Figure size in inches (the legend is added below the graph).
    seed : int, default 0
        Kept for compatibility; the layouts are deterministic.
    decimals : int, default 2
        Edge labels show weights rounded to this many decimals.
    B_true : array-like of shape (n_nodes, n_nodes), optional
        Ground truth for the edge colours.
    positions : array-like of shape (n_nodes, 2), optional
        Node positions in drawing coordinates (x right, y down), e.g. the interactive view's.
    required : array-like of bool of shape (n_nodes, n_nodes), optional
        Edges required by prior knowledge: their label reads "required" after the weight, as in
        the interactive view, so a constrained fit's picture never looks unconstrained.

    Returns
    -------
    bytes
        The encoded image. In SVG the names are ``<text>`` elements (``svg.fonttype="none"``),
        XML-escaped once by matplotlib's writer; names are never read as mathtext
        (``parse_math=False``), so ``$`` or ``\\`` in a name is drawn as it is.

    Raises
    ------
    ValueError
        For an unknown format or layout, or positions of the wrong shape.
    """
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch


    if fmt not in ("png", "svg"):
        raise ValueError(f"fmt must be 'png' or 'svg', got {fmt!r}.")
    if layout not in graph_style.LAYOUTS:
        raise ValueError(f"layout must be one of {list(graph_style.LAYOUTS)}, got {layout!r}.")
    A, names = check_named_adjacency(W, node_names)
    d = A.shape[0]
    if positions is None:
        base = B_true if B_true is not None else A
        pos = graph_style.unit_positions(d, base if layout == "topological" else None, layout=layout)
    else:
        pos = np.asarray(positions, dtype=float)
        if pos.shape != (d, 2) or not np.all(np.isfinite(pos)):
            raise ValueError(f"positions must be a finite array of shape {(d, 2)}, got {pos.shape}.")
        span = max(float(np.ptp(pos[:, 0])), float(np.ptp(pos[:, 1])), 1e-12)
        pos = (pos - pos.mean(axis=0)) / span * 2.0
    xy = np.column_stack([pos[:, 0], -pos[:, 1]])  # drawing coordinates have y down
    edges = classify_edges(A, B_true)
    req = None if required is None else np.asarray(required, dtype=bool)
    if req is not None and req.shape != (d, d):
        raise ValueError(f"required must have shape {(d, d)}, got {req.shape}.")
    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.02, 0.16, 0.96, 0.82))
    ax.set_axis_off()
    ax.set_aspect("equal")
    ax.set_xlim(-1.3, 1.3)
    ax.set_ylim(-1.3, 1.3)
    longest = max((len(n) for n in names), default=1)
    font_pt = graph_style.font_px(d, width_px=72 * figsize[0], max_label=min(longest, 12)) * 0.75
    radius_pts = max(10.0, font_pt * 1.6)
    wmax = float(np.max(np.abs(A))) if np.any(A) else 1.0
    signs = set()
    for i, j, kind in edges:
        colour, dashed, _ = graph_style.EDGE_STYLES[kind]
        w = float(A[i, j])
        if kind == "missing":
            style, width = "-|>", 1.0
        else:
            sign = "+" if w > 0 else "-"
            signs.add(sign)
            style = "-|>" if sign == "+" else "-["
            width = 0.8 + 3.0 * abs(w) / wmax
        arrow = FancyArrowPatch(tuple(xy[i]), tuple(xy[j]), arrowstyle=style, mutation_scale=12, color=colour,
                                linewidth=width, linestyle="--" if dashed else "-", shrinkA=radius_pts,
                                shrinkB=radius_pts, connectionstyle="arc3,rad=0.12")
        ax.add_patch(arrow)
        if kind != "missing":
            mx, my = 0.5 * (xy[i] + xy[j])
            mark = " required" if req is not None and req[i, j] else ""
            ax.text(mx, my, f"{w:.{int(decimals)}f}{mark}", fontsize=max(5.0, font_pt * 0.7), color=colour,
                    ha="center", va="center", parse_math=False,
                    bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8})
    ax.scatter(xy[:, 0], xy[:, 1], s=(2 * radius_pts) ** 2, c=graph_style.NODE_FILL,
               edgecolors=graph_style.NODE_LINE, zorder=3)
    for k in range(d):
        ax.text(xy[k, 0], xy[k, 1], names[k], fontsize=font_pt, ha="center", va="center", zorder=4,
                parse_math=False)
    kinds = {k for _, _, k in edges} if B_true is not None else ({"learned"} if edges else set())
    handles = []
    for entry in graph_style.legend_entries(kinds, signs):
        if "kind" in entry:
            handles.append(Line2D([], [], color=entry["colour"], linestyle="--" if entry["dashed"] else "-",
                                  linewidth=2.5, label=entry["text"]))
        else:
            handles.append(Line2D([], [], color="#444444", marker=">" if entry["sign"] == "+" else "|",
                                  markersize=8, linestyle="-", linewidth=1.5, label=entry["text"]))
    if handles:
        legend = fig.legend(handles=handles, loc="lower center", ncol=2, fontsize=7, frameon=False)
        for text in legend.get_texts():
            text.set_parse_math(False)
    buf = io.BytesIO()
    # Fixed metadata and SVG id salt keep the bytes reproducible (no date, no random ids); text
    # stays text in SVG (searchable, escaped once by matplotlib's XML writer).
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    with matplotlib.rc_context({"svg.hashsalt": "colide-dashboard", "svg.fonttype": "none"}):
        fig.savefig(buf, format=fmt, dpi=dpi, metadata=metadata)
    return buf.getvalue()
