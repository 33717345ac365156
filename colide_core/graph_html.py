"""Interactive graph of a learned DAG as a self-contained (offline) HTML page, built with pyvis.

The one graph drawing of the project: the dashboard (``dashboard.graph`` re-exports it) and the
HTML report (:mod:`colide_core.report`) both use it. pyvis is imported here only.

:func:`graph_html` is pure (no Streamlit) so tests can inspect the HTML. The vis-network
JavaScript and CSS that ship inside the pyvis package are inlined (``cdn_resources="in_line"``);
pyvis 0.3.2's template also links Bootstrap from a CDN even in that mode, so those tags are
removed and :func:`graph_html` checks that no ``http(s)`` ``src``/``href`` is left.

Node names are user-supplied. Where they meet HTML they are escaped exactly once:

* labels and tooltips are plain text for vis-network (labels are drawn on a canvas, a string
  tooltip is set with ``innerText``), so they hold the names as they are, not HTML-escaped (an
  escaped name would be drawn as ``gene&lt;B&gt;``);
* the node and edge lists are embedded in the page's ``<script>`` by pyvis's Jinja ``tojson``
  filter, which escapes ``<``, ``>``, ``&`` and ``'`` as ``\\u`` escapes: that is the one escape
  where the names meet HTML;
* pyvis switches to a tooltip template that sets ``innerHTML`` from a node's title when any title
  contains the text ``href``; :func:`_render_html` renders pyvis's template with that switch
  off, so no name can select the HTML tooltip.

Convention: ``W[i, j] != 0`` means the edge i -> j (same for ``B_true``).
"""
from __future__ import annotations

import json
import re

import numpy as np
from pyvis.network import Network

from . import graph_style
from ._graph import classify_edges
from .export import html_escape
from .graph_style import EDGE_STYLES, SIGN_STYLES

__all__ = ["EDGE_STYLES", "graph_html"]

_EXTERNAL_TAG = re.compile(
    r"<script\b[^>]*\bsrc\s*=\s*[\"']?https?://[^>]*>\s*</script>"
    r"|<link\b[^>]*\bhref\s*=\s*[\"']?https?://[^>]*>",
    re.IGNORECASE | re.DOTALL,
)
_EXTERNAL_REF = re.compile(r"\b(?:src|href)\s*=\s*[\"']?\s*(?:https?:)?//", re.IGNORECASE)
_EMPTY_HEADING = re.compile(r"<center>\s*<h1>\s*</h1>\s*</center>", re.IGNORECASE)
# pyvis's template keeps a commented-out <script src="../node_modules/..."> in its head.
_DEAD_COMMENT = re.compile(r"<!--(?:(?!-->).)*node_modules(?:(?!-->).)*-->", re.DOTALL)


def _legend_html(kinds, signs) -> str:
    """The legend of :func:`colide_core.graph_style.legend_entries`, each text escaped once."""
    items = []
    for entry in graph_style.legend_entries(kinds, signs):
        if "kind" in entry:
            style = "dashed" if entry["dashed"] else "solid"
            mark = (f'<span style="display:inline-block;width:28px;border-top:3px {style} {entry["colour"]};'
                    f'vertical-align:middle;margin-right:5px"></span>')
        else:
            mark = ""
        items.append(f'<span style="display:inline-block;margin-right:14px;white-space:nowrap">'
                     f'{mark}{html_escape(entry["text"])}</span>')
    return ('<div id="legend" style="clear:both;font:13px sans-serif;padding:6px 2px">'
            + "".join(items) + "</div>")


def _render_html(net) -> str:
    """pyvis's ``Network.generate_html`` for this module's settings, tooltips fixed to plain text.

    pyvis 0.3.2 renders ``template.html`` with ``tooltip_link=True`` (a custom popup filled with
    ``innerHTML``) whenever some node title contains ``"href"``; this renders the same template with
    the same values as ``generate_html`` except that that flag is always False. No filter menu,
    no select menu, no configure panel, no DOT input: the other flags are pyvis's defaults.
    """
    nodes, edges, heading, height, width, options = net.get_network_data()
    return net.templateEnv.get_template(net.path).render(
        height=height, width=width, nodes=nodes, edges=edges, heading=heading, options=options,
        physics_enabled=False, use_DOT=net.use_DOT, dot_lang=net.dot_lang, widget=net.widget,
        bgcolor=net.bgcolor, conf=net.conf, tooltip_link=False,
        neighborhood_highlight=net.neighborhood_highlight, select_menu=net.select_menu,
        filter_menu=net.filter_menu, notebook=False, cdn_resources=net.cdn_resources)


def graph_html(W, names, B_true=None, *, sigma=None, height_px: int = 520, positions=None,
               layout="circular") -> str:
    """Build a self-contained interactive HTML view of a weighted DAG.

    Parameters
    ----------
    W : array-like of shape (n_nodes, n_nodes)
        Thresholded weighted adjacency, ``W[i, j] != 0`` means i -> j. Edge width is
        proportional to ``|W[i, j]|``; the arrowhead shows the sign (arrow: positive, bar ⊣:
        negative, :data:`colide_core.graph_style.SIGN_STYLES`).
    names : sequence of str
        Node names (user-supplied): drawn as plain text, embedded as escaped JSON.
    B_true : array-like of shape (n_nodes, n_nodes), optional
        Ground truth; when given, edges are coloured correct / reversed / extra and missing true
        edges are drawn dashed (:data:`colide_core.graph_style.EDGE_STYLES`).
    sigma : float or array-like of shape (n_nodes,), optional
        Estimated noise standard deviations, shown in the node tooltips.
    height_px : int, default=520
        Height of the drawing area in pixels.
    positions : array-like of shape (n_nodes, 2), optional
        Fixed node positions in drawing coordinates (x right, y down), e.g. from
        :func:`colide_core.graph_style.node_positions`, so several drawings of the same nodes
        (EV, NV, the truth, playback frames) put each node at the same place. Default: that
        function with ``layout``, scaled to fit the drawing at zoom 1.
    layout : {"circular", "topological"}, default "circular"
        Used when ``positions`` is None; "topological" lays out ``B_true`` (else the drawn
        graph) top-down by layers.

    Returns
    -------
    str
        A complete HTML document with vis-network inlined (no external scripts or styles), with
        a legend of the edge colours and arrowheads drawn.

    Raises
    ------
    ValueError
        If the shapes disagree, or (defensively) if the HTML still references an external URL.

    Notes
    -----
    Drawing with pyvis 0.3.2 (vis-network 9.1.2, shipped in the pyvis wheel). Fonts and nodes are
    sized with the number of nodes (:func:`colide_core.graph_style.font_px`) and the layout fits
    a 600 × ``height_px`` canvas at zoom 1, so labels stay readable; above
    :data:`colide_core.graph_style.SUMMARY_NODES` nodes callers show a summary instead.
    """
    A = np.asarray(W, dtype=float)
    d = A.shape[0]
    if A.ndim != 2 or A.shape != (d, d):
        raise ValueError(f"W must be square, got shape {A.shape}.")
    names = [str(n) for n in names]
    if len(names) != d:
        raise ValueError(f"{len(names)} names for {d} nodes.")
    sig = None if sigma is None else np.broadcast_to(np.asarray(sigma, dtype=float), (d,))
    longest = max((len(n) for n in names), default=1)
    font = graph_style.font_px(d, max_label=min(longest, 12))
    if positions is None:
        base = B_true if B_true is not None else A
        unit = graph_style.unit_positions(d, base if layout == "topological" else None, layout=layout)
        pos = unit * np.array([260.0, 0.42 * float(height_px)])
    else:
        pos = np.asarray(positions, dtype=float)
        if pos.shape != (d, 2) or not np.all(np.isfinite(pos)):
            raise ValueError(f"positions must be a finite array of shape {(d, 2)}, got {pos.shape}.")

    edges = classify_edges(A, B_true)
    net = Network(height=f"{int(height_px)}px", width="100%", directed=True, cdn_resources="in_line")
    for i in range(d):
        label = names[i]  # plain text for vis-network: not HTML-escaped (see the module notes)
        title = label if sig is None else f"{label}\nσ̂ = {sig[i]:.4g}"
        x, y = (float(v) for v in pos[i])
        net.add_node(i, label=label, title=title, x=x, y=y, physics=False, color=graph_style.NODE_FILL,
                     shape="ellipse", font={"size": font}, margin=max(2, int(font / 3)))

    wmax = float(np.max(np.abs(A))) if np.any(A) else 1.0
    signs = set()
    for i, j, kind in edges:
        colour, dashed, _ = EDGE_STYLES[kind]
        w = float(A[i, j])
        if kind == "missing":
            width, title, head = 1.5, f"{names[i]} → {names[j]}: missing true edge", "arrow"
        else:
            width = 1.0 + 7.0 * abs(w) / wmax
            sign = "+" if w > 0 else "-"
            signs.add(sign)
            head = SIGN_STYLES[sign][0]
            title = f"{names[i]} → {names[j]}: w = {w:+.4g} ({kind})"
        net.add_edge(i, j, color=colour, width=width, dashes=dashed, title=title,
                     arrows={"to": {"enabled": True, "type": head}},
                     smooth={"type": "curvedCW", "roundness": 0.12})

    net.set_options(json.dumps({
        "physics": {"enabled": False},
        "interaction": {"hover": True, "navigationButtons": False, "tooltipDelay": 120},
        "edges": {"arrowStrikethrough": False},
    }))
    html = _render_html(net)
    html = _EXTERNAL_TAG.sub("", html)
    html = _EMPTY_HEADING.sub("", html)
    html = _DEAD_COMMENT.sub("", html)
    if _EXTERNAL_REF.search(html):
        raise ValueError("The graph HTML still references an external resource.")
    kinds = {k for _, _, k in edges} if B_true is not None else ({"learned"} if edges else set())
    if not kinds:  # nothing drawn: no legend
        return html
    return html.replace("</body>", _legend_html(kinds, signs) + "\n</body>", 1)
