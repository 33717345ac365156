"""The one style of every graph drawing: colours, line styles, legend, node positions, sizes.

Every drawing of a DAG reads this module: the interactive vis-network view
(:mod:`colide_core.render.graph_html`, used by the dashboard and the HTML report), the PNG/SVG export
(:func:`colide_core.render.picture.to_image`) and the bootstrap frequency figure
(``colide_core.render.figures.frequency_figure``). So an edge means the same thing, with the same colour,
at the same place, everywhere.

Meanings
--------
* **Colour = agreement with the truth** (:func:`colide_core.graph._dag.classify_edges`, the one truth
  labelling): correct (green), reversed (orange), extra (red), missing (grey, dashed); without a
  truth every edge is "learned" (blue).
* **Arrowhead = sign of the weight**: a pointed arrow for a positive weight (activation), a flat
  bar ``⊣`` for a negative one (inhibition, the convention of signalling diagrams); colour never
  encodes the sign.
* **Width ∝ |w|.**

Positions
---------
:func:`node_positions` computes positions once per node set, deterministically (no random
layout), in *drawing coordinates*: ``x`` to the right, ``y`` **downwards** (screen convention,
as vis-network). A drawing with an upward y axis (matplotlib, plotly) flips it, so the picture
has the same orientation everywhere. ``layout="circular"`` (default) puts node 0 at the top and
goes clockwise; ``layout="topological"`` draws a DAG top-down in layers by the longest path from
the sources (on Sachs: PKC, then PKA, Raf, Mek, Erk, Akt), each layer spread left to right.

Sizes
-----
:func:`font_px` scales labels with the number of nodes, and
:data:`SUMMARY_NODES` is the size above which a node-link drawing is replaced by a summary (an
adjacency heatmap with categorical axes): see :func:`label_overlap`, which measures it.

Convention: ``W[i, j] != 0`` means the edge i -> j.
"""
from __future__ import annotations

import math

import networkx as nx
import numpy as np

from colide_core._validation import check_square_matrix

__all__ = [
    "EDGE_STYLES", "SIGN_STYLES", "TRUE_EDGE_TEXT", "NODE_FILL", "NODE_LINE", "LAYOUTS", "SUMMARY_NODES", "legend_entries",
    "node_positions", "font_px", "label_overlap", "max_font", "per_row", "unit_positions",
    "EDGE_BENDS", "bend_via", "edge_bends", "change_fill", "CHANGE_CLIP", "SETTLED_STYLE",
    "LABEL_DARK", "LABEL_LIGHT", "contrast_ratio", "label_colour",
]

#: kind -> (colour, dashed, legend text). The colour is the agreement with the truth.
EDGE_STYLES = {
    "correct": ("#2ca02c", False, "correct (in the ground truth)"),
    "reversed": ("#ff7f0e", False, "reversed (true edge points the other way)"),
    "extra": ("#d62728", False, "extra (not in the ground truth)"),
    "missing": ("#7f7f7f", True, "missing (true edge not found), dashed"),
    "learned": ("#1f77b4", False, "learned edge"),
}
#: The legend's text for the edges of a true graph drawn on its own (no truth to colour against:
#: the "learned" colour, but not called learned).
TRUE_EDGE_TEXT = "true edge"
#: sign -> (vis-network arrowhead type, legend text). The arrowhead is the weight's sign.
SIGN_STYLES = {
    "+": ("arrow", "→ positive weight"),
    "-": ("bar", "⊣ negative weight"),
}
NODE_FILL = "#cfe2f3"
NODE_LINE = "#6d9eeb"
LAYOUTS = ("circular", "topological")
#: Above this many nodes a node-link drawing is replaced by a summary view (adjacency heatmap).
#: Measured with :func:`label_overlap` on a 600-pixel-wide circular drawing with the fonts of
#: :func:`font_px` (10 px at least): with names of up to 3 characters (``X1`` … ``X60``, the
#: simulated graphs) no label overlaps another up to 60 nodes; 11% overlap at 70 nodes, 62% at
#: 100 and all at 150 (``tests/test_graph_style.py`` checks these numbers).
SUMMARY_NODES = 60


#: Edges an intervention can orient (a condition targets one of their ends): a dot at the edge's
#: start (vis-network's "from" arrow of type "circle"), with its legend marker and text. At the
#: midpoint (until issue 48, m-13) a dot was ambiguous where lines cross; its size is kept the same
#: whatever the line's width (:func:`oriented_arrow`).
ORIENTED_STYLE = {"arrow": {"enabled": True, "type": "circle", "scaleFactor": 0.8},
                  "marker": "●", "text": "at an edge's start: orientable by an intervention (a target at one end)"}


def oriented_arrow(width):
    """The dot of an orientable edge of line ``width``: vis-network draws an arrow ``scaleFactor *
    (10 + 5 * width)`` long, so the factor is scaled to keep the dot the size it has at width 2.

    Parameters
    ----------
    width : float
        The edge's line width (vis-network units, > 0).

    Returns
    -------
    dict
        vis-network ``arrows.from`` options.

    Examples
    --------
    >>> [round(oriented_arrow(w)["scaleFactor"] * (10 + 5 * w), 6) for w in (1, 2, 6)]
    [16.0, 16.0, 16.0]
    """
    base = ORIENTED_STYLE["arrow"]["scaleFactor"] * (10 + 5 * 2.0)
    return {**ORIENTED_STYLE["arrow"], "scaleFactor": base / (10 + 5 * max(float(width), 0.1))}

#: Edges a planned experiment would settle (the Predict page's ranking): each keeps its own colour
#: (correct, reversed, ...) and gains a halo of this colour around its line (vis-network's edge
#: ``shadow``), an entry of the legend. Issue 48 m-2: they used to turn purple, losing their
#: agreement with the truth, and carried 6-7 px "settled" labels.
SETTLED_STYLE = {"halo": "#9467bd", "shadow": {"enabled": True, "color": "#9467bd", "size": 14, "x": 0, "y": 0},
                 "text": "halo: direction the chosen experiment would settle"}

#: Edges whose reverse the data prefer (the Check page's edge evidence,
#: :func:`colide_core.render.tables.disputed_edges`): a "?" at the edge's middle, in a dark ink with a
#: white outline, the size of the node labels (``font_scale`` times their font; ``graph_draw.js``
#: keeps it so as it enlarges them), an entry of the legend. The edge keeps its own colour
#: (correct, reversed, ...), width and dot (issue 48 m-7: Raf -> Mek was green with an "orientable"
#: dot on Learn while Check said "the data prefer Mek -> Raf").
DISPUTED_STYLE = {"marker": "?", "colour": "#111111", "font_scale": 1.1,
                  "text": "the data prefer the reverse (Check)"}

#: Node fills of a predicted change saturate at this many standard deviations.
CHANGE_CLIP = 2.0


def change_fill(values, clip=CHANGE_CLIP):
    """Node fill colours for signed changes: a diverging blue (down) / white / red (up) scale.

    Parameters
    ----------
    values : array-like of shape (n_nodes,)
        Signed changes (e.g. a predicted shift in standard deviations); NaN gives the plain
        :data:`NODE_FILL`.
    clip : float > 0
        The magnitude at which the colour saturates.

    Returns
    -------
    list of str
        ``#rrggbb`` per node: white at 0, red ``#d62728``-ward for increases, blue
        ``#1f77b4``-ward for decreases, linear in ``|value| / clip`` up to 1.

    Examples
    --------
    >>> change_fill([0.0, 2.0, -1.0, float("nan")])
    ['#ffffff', '#d62728', '#8fbbda', '#cfe2f3']
    """
    out = []
    for v in np.asarray(values, dtype=float).ravel():
        if not np.isfinite(v):
            out.append(NODE_FILL)
            continue
        a = min(abs(v) / float(clip), 1.0)
        end = (0xD6, 0x27, 0x28) if v > 0 else (0x1F, 0x77, 0xB4)
        rgb = [round(255 + (e - 255) * a) for e in end]
        out.append("#%02x%02x%02x" % tuple(rgb))
    return out


#: Node label colours: dark text on light fills, light text on dark ones (:func:`label_colour`).
LABEL_DARK = "#000000"
LABEL_LIGHT = "#ffffff"


def _luminance(colour):
    """WCAG 2 relative luminance of ``#rrggbb`` (0 black … 1 white)."""
    text = str(colour).lstrip("#")
    if len(text) != 6:
        raise ValueError(f"a colour must be #rrggbb, got {colour!r}.")
    lin = []
    for k in (0, 2, 4):
        c = int(text[k:k + 2], 16) / 255.0
        lin.append(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4)
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast_ratio(a, b):
    """WCAG 2 contrast ratio of two ``#rrggbb`` colours, 1 (same) to 21 (black on white).

    Raises
    ------
    ValueError
        If a colour is not ``#rrggbb``.
    """
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def label_colour(fill):
    """The label colour of a node filled with ``fill``: :data:`LABEL_DARK` or :data:`LABEL_LIGHT`,
    whichever contrasts more with it (issue 48 m-6: the default dark grey on the saturated red
    ``#d62728`` of :func:`change_fill` had a contrast of 2.5).

    Between black (contrast ``(L + 0.05) / 0.05``) and white (``1.05 / (L + 0.05)``) the larger is
    at least ``sqrt(21) = 4.58`` for any fill luminance ``L``, so the label always meets WCAG's 4.5.

    Parameters
    ----------
    fill : str
        ``#rrggbb``.

    Returns
    -------
    str
    """
    return LABEL_DARK if contrast_ratio(fill, LABEL_DARK) >= contrast_ratio(fill, LABEL_LIGHT) else LABEL_LIGHT


def legend_entries(kinds=None, signs=("+", "-")):
    """The legend of a drawing: one entry per edge kind drawn, then the two arrowheads.

    Parameters
    ----------
    kinds : iterable of str, optional
        Edge kinds present (keys of :data:`EDGE_STYLES`); default all four truth kinds.
    signs : iterable of {"+", "-"}, default both
        Weight signs present.

    Returns
    -------
    list of dict
        In a fixed order, ``{"kind", "colour", "dashed", "text"}`` for edge kinds and
        ``{"sign", "head", "text"}`` for arrowheads; plain text (escape it where it meets HTML/XML).
    """
    kinds = set(EDGE_STYLES) - {"learned"} if kinds is None else set(kinds)
    out = []
    for kind in ("correct", "reversed", "extra", "missing", "learned"):
        if kind in kinds:
            colour, dashed, text = EDGE_STYLES[kind]
            out.append({"kind": kind, "colour": colour, "dashed": dashed, "text": text})
    for sign in ("+", "-"):
        if sign in set(signs):
            head, text = SIGN_STYLES[sign]
            out.append({"sign": sign, "head": head, "text": text})
    return out


def _layers(B):
    """Layer of each node: the length of the longest directed path reaching it (sources: 0)."""
    G = nx.from_numpy_array((B != 0).astype(np.int8), create_using=nx.DiGraph)
    G.remove_edges_from(nx.selfloop_edges(G))
    if not nx.is_directed_acyclic_graph(G):
        # A graph with a cycle (e.g. raw weights): lay out its condensation instead.
        C = nx.condensation(G)
        comp = C.graph["mapping"]
        lay = {}
        for c in nx.topological_sort(C):
            lay[c] = max((lay[p] + 1 for p in C.predecessors(c)), default=0)
        return np.array([lay[comp[i]] for i in range(B.shape[0])])
    lay = np.zeros(B.shape[0], dtype=int)
    for v in nx.topological_sort(G):
        preds = list(G.predecessors(v))
        lay[v] = max((lay[p] + 1 for p in preds), default=0)
    return lay


def unit_positions(n_nodes, B=None, *, layout="circular"):
    """Positions in drawing coordinates scaled to [-1, 1] (x right, y down), shape (n_nodes, 2).

    Parameters
    ----------
    n_nodes : int
    B : array-like of shape (n_nodes, n_nodes), optional
        The DAG to lay out top-down (``B[i, j] != 0`` means i -> j); required for
        ``layout="topological"``, ignored for ``"circular"``.
    layout : {"circular", "topological"}

    Returns
    -------
    ndarray of shape (n_nodes, 2)

    Raises
    ------
    ValueError
        For an unknown layout, ``n_nodes < 1``, or a topological layout without ``B`` of the
        right shape.
    """
    d = int(n_nodes)
    if d < 1:
        raise ValueError(f"n_nodes must be >= 1, got {n_nodes!r}.")
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}.")
    if layout == "circular" or d == 1:
        # node 0 at the top, clockwise on screen (y down)
        t = -math.pi / 2 + 2 * math.pi * np.arange(d) / d
        return np.column_stack([np.cos(t), np.sin(t)]) if d > 1 else np.zeros((1, 2))
    if B is None:
        raise ValueError("layout='topological' needs the DAG B to lay out.")
    A = check_square_matrix(B, "B")
    if A.shape != (d, d):
        raise ValueError(f"B has shape {A.shape}, expected {(d, d)}.")
    lay = _layers(A)
    n_layers = int(lay.max()) + 1
    pos = np.zeros((d, 2))
    for k in range(n_layers):
        members = np.flatnonzero(lay == k)  # in node order: deterministic
        m = len(members)
        xs = np.zeros(1) if m == 1 else np.linspace(-1.0, 1.0, m)
        # alternate small vertical offsets in wide layers so long labels do not collide
        ys = np.full(m, -1.0 + 2.0 * k / max(n_layers - 1, 1))
        if m > 6 and n_layers > 1:
            ys = ys + (np.arange(m) % 2) * (0.5 / max(n_layers - 1, 1))
        pos[members, 0] = xs
        pos[members, 1] = ys
    return pos


def node_positions(n_nodes, B=None, *, layout="circular", scale=None):
    """Node positions in pixels for a drawing of ``n_nodes`` nodes (x right, y down).

    The same inputs always give the same positions, so every drawing of one node set (EV, NV,
    the truth, each playback frame, each λ) puts each node at the same place.

    Parameters
    ----------
    n_nodes : int
    B : array-like of shape (n_nodes, n_nodes), optional
        DAG for ``layout="topological"`` (e.g. the ground truth), ``B[i, j] != 0`` meaning i -> j.
    layout : {"circular", "topological"}, default "circular"
    scale : float, optional
        Half-width of the drawing in pixels; default ``max(150, 30 * n_nodes)``.

    Returns
    -------
    ndarray of shape (n_nodes, 2)
    """
    d = int(n_nodes)
    s = float(max(150, 30 * d) if scale is None else scale)
    return unit_positions(d, B, layout=layout) * s


def font_px(n_nodes, width_px=600, max_label=3):
    """Label font size in screen pixels for ``n_nodes`` nodes on a drawing ``width_px`` wide.

    The circle's spacing between neighbours is ``0.8 * pi * width_px / n_nodes``; a label of
    ``max_label`` characters is about ``0.6 * font * max_label`` wide and ``1.2 * font`` high, so
    the font is the largest that fits that spacing, between 10 and 16 px. The drawing is shown at
    a fixed zoom that fits the canvas (no zoom-out that makes labels vanish).

    Parameters
    ----------
    n_nodes : int
    width_px : float, default 600
        Width of the drawing on screen (one of two side-by-side graphs at 1280 px).
    max_label : int, default 3
        Length of the longest label, in characters.

    Returns
    -------
    float
    """
    d = max(int(n_nodes), 1)
    spacing = math.pi * 0.8 * width_px / d
    # sqrt(2): two neighbours at 45 degrees are closer than the spacing in both x and y
    return float(min(16.0, max(10.0, spacing / (math.sqrt(2) * max(0.6 * max(int(max_label), 1), 1.2)))))


def label_overlap(positions, names, font_size_px, width_px=600):
    """Fraction of labels whose box overlaps another label's box once the drawing fits ``width_px``.

    Parameters
    ----------
    positions : ndarray of shape (n_nodes, 2)
        Any drawing coordinates; they are scaled so that the drawing spans ``0.8 * width_px``.
    names : sequence of str
    font_size_px : float
    width_px : float

    Returns
    -------
    float in [0, 1]
        Boxes are ``0.6 * font_size_px`` per character wide and ``1.2 * font_size_px`` high,
        centred on the node (the typical advance width of a sans-serif font).
    """
    P = np.asarray(positions, dtype=float)
    d = P.shape[0]
    if d < 2:
        return 0.0
    span = max(float(np.ptp(P[:, 0])), float(np.ptp(P[:, 1])), 1e-12)
    P = P / span * 0.8 * float(width_px)
    w = np.array([0.6 * font_size_px * max(len(str(n)), 1) for n in names])
    h = 1.2 * font_size_px
    dx = np.abs(P[:, None, 0] - P[None, :, 0])
    dy = np.abs(P[:, None, 1] - P[None, :, 1])
    hit = (dx < (w[:, None] + w[None, :]) / 2) & (dy < h)
    np.fill_diagonal(hit, False)
    return float(hit.any(axis=1).mean())


def max_font(positions, names, lo, hi=40.0):
    """The largest label font (drawing units) in ``[lo, hi]`` with no two label boxes overlapping.

    The interactive drawing is fitted to its frame, which shrinks or enlarges it; its labels are
    then enlarged towards a readable size on screen, but never beyond this font, where labels of
    the fixed positions would start to cover each other (boxes as in :func:`label_overlap`).

    Parameters
    ----------
    positions : ndarray of shape (n_nodes, 2)
        Node positions in drawing units (those given to vis-network).
    names : sequence of str
        The labels.
    lo, hi : float
        Bounds of the font, in drawing units; ``lo`` is returned when even it overlaps.

    Returns
    -------
    float
        Found by bisection to 0.1 drawing units on :func:`label_overlap` at zoom 1.
    """
    P = np.asarray(positions, dtype=float)
    if P.shape[0] < 2:
        return float(hi)
    # label_overlap rescales the drawing to span 0.8 * width_px: this width keeps drawing units
    width = max(float(np.ptp(P[:, 0])), float(np.ptp(P[:, 1])), 1e-12) / 0.8
    lo, hi = float(lo), float(hi)
    if label_overlap(P, names, hi, width) == 0.0:
        return hi
    if label_overlap(P, names, lo, width) > 0.0:
        return lo
    while hi - lo > 0.1:  # invariant: lo fits, hi overlaps
        mid = 0.5 * (lo + hi)
        if label_overlap(P, names, mid, width) == 0.0:
            lo = mid
        else:
            hi = mid
    return lo


def per_row(positions, names, n_drawings, width_px=820.0, min_font_px=10.0, gap_px=16.0):
    """How many drawings of these nodes fit side by side with labels of ``min_font_px`` not overlapping.

    Parameters
    ----------
    positions : ndarray of shape (n_nodes, 2)
        The drawing's node positions (any units).
    names : sequence of str
        The labels.
    n_drawings : int
        Drawings to show (e.g. EV, NV and the truth).
    width_px : float, default 820
        Width available for the row: the main column at 1280 px with Streamlit's sidebar open.
    min_font_px : float, default 10
        Smallest label size on screen that a projector still shows legibly.
    gap_px : float, default 16
        Space between two columns.

    Returns
    -------
    int
        The largest k in ``1 .. n_drawings`` for which each drawing, ``(width_px - gap_px (k - 1)) / k``
        wide, has no overlapping labels at ``min_font_px`` (:func:`label_overlap`); 1 when none does.
    """
    n = max(int(n_drawings), 1)
    for k in range(n, 1, -1):
        if label_overlap(positions, names, min_font_px, (width_px - gap_px * (k - 1)) / k) == 0.0:
            return k
    return 1


#: Curvatures tried for an edge, in order (vis-network ``smooth`` types and roundness): the
#: house default first, then bends on either side, stronger and stronger.
EDGE_BENDS = tuple((kind, r) for r in (0.12, 0.3, 0.5, 0.75, 1.0) for kind in ("curvedCW", "curvedCCW"))


def bend_via(p_from, p_to, kind, roundness):
    """The control point of vis-network's curved edge from ``p_from`` to ``p_to``.

    The formula of vis-network 9.1.2's ``BezierEdgeStatic._getViaCoordinates`` for the
    ``"curvedCW"`` and ``"curvedCCW"`` smooth types (read from the bundled
    ``static/vis-network-9.1.2/vis-network.min.js``), so the arc computed here is the arc drawn.

    Parameters
    ----------
    p_from, p_to : array-like of shape (2,)
        End points in drawing units (x right, y down).
    kind : {"curvedCW", "curvedCCW"}
    roundness : float in [0, 1]

    Returns
    -------
    ndarray of shape (2,)
    """
    dx = p_to[0] - p_from[0]
    dy = p_from[1] - p_to[1]
    length = math.hypot(dx, dy)
    sign = 1.0 if kind == "curvedCW" else -1.0
    angle = (math.atan2(dy, dx) + (0.5 * sign * roundness + 0.5) * math.pi) % (2 * math.pi)
    reach = (0.5 * roundness + 0.5) * length
    return np.array([p_from[0] + reach * math.sin(angle), p_from[1] + reach * math.cos(angle)])


def _arc(p_from, via, p_to, k=24):
    t = np.linspace(0.0, 1.0, k)[:, None]
    return (1 - t) ** 2 * np.asarray(p_from) + 2 * (1 - t) * t * via + t ** 2 * np.asarray(p_to)


def edge_bends(positions, edges, names, font_px, margin=4.0):
    """A curvature for each edge such that its arc passes through no node it does not connect.

    A straight or slightly bent edge from PKCα to Raf-1 that runs under PKA reads as
    PKCα → PKA → Raf-1 (issue 28). Each node is taken as its label's ellipse (vis-network's
    ``shape="ellipse"``: about ``0.35 * font * len(label) + margin`` by ``0.7 * font + margin``);
    each edge gets the first of :data:`EDGE_BENDS` whose quadratic arc (:func:`bend_via`) misses
    every other node, or, where none does, the one that crosses the fewest.

    Parameters
    ----------
    positions : ndarray of shape (n_nodes, 2)
        Node positions in drawing units.
    edges : iterable of (int, int)
        ``(i, j)`` for an edge i -> j.
    names : sequence of str
        Node labels (their length sizes the nodes).
    font_px : float
        Label font size in drawing units.
    margin : float, default 4
        Extra room around each label.

    Returns
    -------
    dict of (int, int) -> (str, float)
        ``{(i, j): (smooth type, roundness)}``.

    Examples
    --------
    >>> import numpy as np
    >>> pos = np.array([[0.0, 0.0], [100.0, 0.0], [200.0, 0.0]])  # B sits on the line from A to C
    >>> kind, r = edge_bends(pos, [(0, 2)], ["A", "B", "C"], 14)[(0, 2)]
    >>> r > 0.12
    True
    """
    pos = np.asarray(positions, dtype=float)
    semi = np.array([[0.35 * font_px * max(len(str(n)), 1) + margin, 0.7 * font_px + margin] for n in names])
    out = {}
    for i, j in edges:
        others = [k for k in range(len(pos)) if k not in (i, j)]
        best, best_hits = EDGE_BENDS[0], None
        for kind, r in EDGE_BENDS:
            pts = _arc(pos[i], bend_via(pos[i], pos[j], kind, r), pos[j])[1:-1]
            if others:
                rel = (pts[None, :, :] - pos[others][:, None, :]) / semi[others][:, None, :]
                hits = int(np.any((rel ** 2).sum(axis=2) < 1.0, axis=1).sum())
            else:
                hits = 0
            if best_hits is None or hits < best_hits:
                best, best_hits = (kind, r), hits
            if hits == 0:
                break
        out[(int(i), int(j))] = best
    return out
