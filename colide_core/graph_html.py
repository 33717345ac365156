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

import networkx as nx
import numpy as np
from pyvis.network import Network

from ._graph import classify_edges
from .export import html_escape

__all__ = ["EDGE_STYLES", "graph_html"]

#: kind -> (colour, dashed, legend text)
EDGE_STYLES = {
    "correct": ("#2ca02c", False, "correct (in the ground truth)"),
    "reversed": ("#ff7f0e", False, "reversed (true edge points the other way)"),
    "extra": ("#d62728", False, "extra (not in the ground truth)"),
    "missing": ("#7f7f7f", True, "missing (true edge not found), dashed"),
    "learned": ("#1f77b4", False, "learned edge"),
}

_EXTERNAL_TAG = re.compile(
    r"<script\b[^>]*\bsrc\s*=\s*[\"']?https?://[^>]*>\s*</script>"
    r"|<link\b[^>]*\bhref\s*=\s*[\"']?https?://[^>]*>",
    re.IGNORECASE | re.DOTALL,
)
_EXTERNAL_REF = re.compile(r"\b(?:src|href)\s*=\s*[\"']?\s*(?:https?:)?//", re.IGNORECASE)
_EMPTY_HEADING = re.compile(r"<center>\s*<h1>\s*</h1>\s*</center>", re.IGNORECASE)
# pyvis's template keeps a commented-out <script src="../node_modules/..."> in its head.
_DEAD_COMMENT = re.compile(r"<!--(?:(?!-->).)*node_modules(?:(?!-->).)*-->", re.DOTALL)


def _legend_html(kinds) -> str:
    items = []
    for kind in ("correct", "reversed", "extra", "missing", "learned"):
        if kind not in kinds:
            continue
        colour, dashed, text = EDGE_STYLES[kind]
        style = "dashed" if dashed else "solid"
        items.append(
            f'<span style="display:inline-block;margin-right:14px;white-space:nowrap">'
            f'<span style="display:inline-block;width:28px;border-top:3px {style} {colour};'
            f'vertical-align:middle;margin-right:5px"></span>{html_escape(text)}</span>'
        )
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


def graph_html(W, names, B_true=None, *, sigma=None, height_px: int = 520) -> str:
    """Build a self-contained interactive HTML view of a weighted DAG.

    Parameters
    ----------
    W : array-like of shape (n_nodes, n_nodes)
        Thresholded weighted adjacency, ``W[i, j] != 0`` means i -> j. Edge width is
        proportional to ``|W[i, j]|``.
    names : sequence of str
        Node names (user-supplied): drawn as plain text, embedded as escaped JSON.
    B_true : array-like of shape (n_nodes, n_nodes), optional
        Ground truth; when given, edges are coloured correct / reversed / extra, missing true
        edges are drawn dashed, and a legend is added.
    sigma : float or array-like of shape (n_nodes,), optional
        Estimated noise standard deviations, shown in the node tooltips.
    height_px : int, default=520
        Height of the drawing area in pixels.

    Returns
    -------
    str
        A complete HTML document with vis-network inlined (no external scripts or styles).

    Raises
    ------
    ValueError
        If the shapes disagree, or (defensively) if the HTML still references an external URL.

    Notes
    -----
    Drawing with pyvis 0.3.2 (vis-network 9.1.2, shipped in the pyvis wheel); node positions
    from :func:`networkx.circular_layout`, fixed so the EV and NV views are comparable.
    """
    A = np.asarray(W, dtype=float)
    d = A.shape[0]
    if A.ndim != 2 or A.shape != (d, d):
        raise ValueError(f"W must be square, got shape {A.shape}.")
    names = [str(n) for n in names]
    if len(names) != d:
        raise ValueError(f"{len(names)} names for {d} nodes.")
    sig = None if sigma is None else np.broadcast_to(np.asarray(sigma, dtype=float), (d,))

    edges = classify_edges(A, B_true)
    net = Network(height=f"{int(height_px)}px", width="100%", directed=True, cdn_resources="in_line")
    pos = nx.circular_layout(nx.empty_graph(d), scale=max(150, 30 * d))
    for i in range(d):
        label = names[i]  # plain text for vis-network: not HTML-escaped (see the module notes)
        title = label if sig is None else f"{label}\nσ̂ = {sig[i]:.4g}"
        x, y = (float(v) for v in pos[i])
        net.add_node(i, label=label, title=title, x=x, y=y, physics=False,
                     color="#cfe2f3", shape="ellipse", font={"size": 16})

    wmax = float(np.max(np.abs(A))) if np.any(A) else 1.0
    for i, j, kind in edges:
        colour, dashed, _ = EDGE_STYLES[kind]
        w = float(A[i, j])
        if kind == "missing":
            width, title = 1.5, f"{names[i]} → {names[j]}: missing true edge"
        else:
            width = 1.0 + 7.0 * abs(w) / wmax
            title = f"{names[i]} → {names[j]}: w = {w:+.4g} ({kind})"
        net.add_edge(i, j, color=colour, width=width, dashes=dashed, title=title,
                     arrows="to", smooth={"type": "curvedCW", "roundness": 0.12})

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
    legend = _legend_html({k for _, _, k in edges} if B_true is not None else set())
    if B_true is not None:
        html = html.replace("</body>", legend + "\n</body>", 1)
    return html
