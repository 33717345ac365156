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
    (arrow: positive, bar ⊣: negative), width ∝ |w|, weights written on the edges where they
    cover no node and no other weight (the strongest first, :func:`_graph_figure`).

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
    from matplotlib.lines import Line2D

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
    fig, ax, labels = _graph_figure(A, names, xy, edges, req, figsize=figsize, dpi=dpi, decimals=decimals)
    signs = {"+" if A[i, j] > 0 else "-" for i, j, kind in edges if kind != "missing"}
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


def _graph_figure(A, names, xy, edges, req, *, figsize, dpi, decimals):
    """The figure of :func:`to_image` without its legend: ``(fig, ax, labels)``.

    ``labels`` holds the weight labels drawn, as matplotlib ``Text`` objects. Each is put on its
    edge's arc (matplotlib's ``arc3``, the curve drawn), at the first of a few places along it, from
    the middle outwards, where its box meets no node and no label already placed, the strongest
    edges first; an edge with no such place has no label (its weight is in the exports' tables).
    Issue 41: the labels sat at the straight midpoints, over each other and over nodes.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyArrowPatch

    d = A.shape[0]
    fig = Figure(figsize=figsize, dpi=dpi)
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
    rad = 0.12
    wanted = []
    for i, j, kind in edges:
        colour, dashed, _ = graph_style.EDGE_STYLES[kind]
        w = float(A[i, j])
        if kind == "missing":
            style, width = "-|>", 1.0
        else:
            style = "-|>" if w > 0 else "-["
            width = 0.8 + 3.0 * abs(w) / wmax
        arrow = FancyArrowPatch(tuple(xy[i]), tuple(xy[j]), arrowstyle=style, mutation_scale=12, color=colour,
                                linewidth=width, linestyle="--" if dashed else "-", shrinkA=radius_pts,
                                shrinkB=radius_pts, connectionstyle=f"arc3,rad={rad}")
        ax.add_patch(arrow)
        if kind != "missing":
            mark = " required" if req is not None and req[i, j] else ""
            wanted.append((abs(w), i, j, f"{w:.{int(decimals)}f}{mark}", colour))
    ax.scatter(xy[:, 0], xy[:, 1], s=(2 * radius_pts) ** 2, c=graph_style.NODE_FILL,
               edgecolors=graph_style.NODE_LINE, zorder=3)
    for k in range(d):
        ax.text(xy[k, 0], xy[k, 1], names[k], fontsize=font_pt, ha="center", va="center", zorder=4,
                parse_math=False)
    renderer = fig.canvas.get_renderer()
    nodes_px = ax.transData.transform(xy)
    r_px = radius_pts * fig.dpi / 72.0
    placed, labels = [], []

    def free(box):
        if any(box.overlaps(other) for other in placed):
            return False
        nx = np.clip(nodes_px[:, 0], box.x0, box.x1)
        ny = np.clip(nodes_px[:, 1], box.y0, box.y1)
        return not np.any(np.hypot(nx - nodes_px[:, 0], ny - nodes_px[:, 1]) < r_px)

    for _, i, j, text, colour in sorted(wanted, key=lambda item: -item[0]):
        # matplotlib's Arc3 control point (in display units; the axes' aspect is equal, so the same here)
        (x1, y1), (x2, y2) = xy[i], xy[j]
        control = np.array([0.5 * (x1 + x2) + rad * (y2 - y1), 0.5 * (y1 + y2) - rad * (x2 - x1)])
        label = ax.text(0.0, 0.0, text, fontsize=max(5.0, font_pt * 0.7), color=colour, ha="center", va="center",
                        parse_math=False, zorder=5,
                        bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8})
        for t in (0.5, 0.42, 0.58, 0.34, 0.66, 0.27, 0.73):
            at = (1 - t) ** 2 * xy[i] + 2 * (1 - t) * t * control + t ** 2 * xy[j]
            label.set_position(tuple(at))
            box = label.get_window_extent(renderer).expanded(1.05, 1.1)
            if free(box):
                placed.append(box)
                labels.append(label)
                break
        else:
            label.remove()
    return fig, ax, labels
