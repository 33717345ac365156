"""Interactive graph of a learned DAG as a self-contained (offline) HTML page, drawn by vis-network.

The one graph drawing of the project: the dashboard (through ``dashboard.caching.cached``) and the
HTML report (:mod:`colide_core.render.report`) both use it.

:func:`graph_html` is pure (no Streamlit) so tests can inspect the HTML. The page is ours from the
first byte to the last: the Jinja2 templates in ``colide_core/render/templates/``
(``graph_page.html.j2`` with the macros of ``graph_parts.html.j2``; ``playback.html.j2`` for
:func:`playback_html`), loaded by :func:`template_environment` (autoescape on; also used by
:mod:`colide_core.render.report`). It builds the vis-network node and edge lists and options from
Python dicts here, and either inlines vis-network's script and style or links them under a relative
URL. pyvis is used for one thing only: the vis-network 9.1.2 files its wheel ships
(:func:`vis_assets`, imported when asked for); its page template, which links a CDN, is not used.
pyvis and jinja2 are imported when first needed, never by ``import colide_core``.

Node names are user-supplied. Where they meet HTML they are escaped exactly once:

* labels are drawn on a canvas and tooltips are plain text: the page turns each string title into
  an element whose ``textContent`` is the title (``plainTitles`` in ``graph_parts.html.j2``), so
  vis-network never reads one as HTML. They hold the names as they are, not HTML-escaped (an
  escaped name would be drawn as ``gene&lt;B&gt;``);
* the node and edge lists, and the Playback frames and captions, are embedded in the page's
  ``<script>`` by Jinja's ``|tojson``: ``<``, ``>``, ``&`` and ``'`` become ``\\u`` escapes, the
  one escape where the names meet HTML;
* the legend's texts are HTML-escaped by the templates' autoescape.

Convention: ``W[i, j] != 0`` means the edge i -> j (same for ``B_true``).
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

import numpy as np

from colide_core.render import graph_style
from colide_core.graph._dag import classify_edges
from colide_core.render.graph_style import EDGE_STYLES, SIGN_STYLES

__all__ = ["DRAW_JS", "EDGE_STYLES", "LABEL_SCREEN_PX", "draw_script", "graph_drawing", "graph_html", "legend_for", "playback_html",
           "set_playback_start", "template_environment", "vis_assets"]

@functools.lru_cache(maxsize=1)
def template_environment():
    """The Jinja2 environment of every HTML page the library writes, built once per process.

    Templates are read from the package (``colide_core/render/templates/``, installed as package
    data) with autoescape on: every value a template prints is HTML-escaped once, unless it is a
    :class:`markupsafe.Markup` (vis-network's own script and style, plotly's HTML, marked at the
    one place each is made). JSON inside ``<script>`` goes through Jinja's ``|tojson`` filter
    (``<``, ``>``, ``&`` and ``'`` as ``\\u`` escapes); its ``json.dumps`` options are set here:
    keys in their order, non-ASCII text as is, anything not JSON (e.g. a path in a manifest)
    written with ``str``.

    Returns
    -------
    jinja2.Environment
        The shared environment (undefined variables raise an error instead of printing nothing).
    """
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(loader=PackageLoader("colide_core.render", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.policies["json.dumps_kwargs"] = {"sort_keys": False, "ensure_ascii": False, "default": str}
    return env


def _parts():
    """The macros of ``graph_parts.html.j2`` (each returns :class:`markupsafe.Markup`)."""
    return template_environment().get_template("graph_parts.html.j2").module


#: The drawing code of every graph page (:func:`draw_script`), a package data file.
DRAW_JS = Path(__file__).resolve().parent / "templates" / "graph_draw.js"
#: Label size (CSS pixels) the drawing aims at on screen once fitted to its frame.
LABEL_SCREEN_PX = 13
#: Largest label font in drawing units (a graph of a few nodes in a large frame).
_MAX_FONT = 40.0
#: vis-network options of every drawing: fixed positions, hover tooltips, curved edges.
_OPTIONS = {
    "physics": {"enabled": False},
    "interaction": {"hover": True, "navigationButtons": False, "tooltipDelay": 120},
    "edges": {"arrowStrikethrough": False, "smooth": {"type": "curvedCW", "roundness": 0.12}},
}
_ASSETS_URL = re.compile(r"(?!/)(?!.*\.\.)[A-Za-z0-9_./-]{1,200}")
_VIS_DIR = "lib/vis-9.1.2"


def vis_assets() -> dict:
    """The vis-network files pyvis ships, by the name a page loads them under.

    Returns
    -------
    dict of str to pathlib.Path
        ``{"vis-network.min.js": path, "vis-network.css": path}`` inside the installed pyvis
        package (vis-network 9.1.2 in pyvis 0.3.2), the same files :func:`graph_html` inlines.
    """
    import pyvis

    base = Path(pyvis.__file__).resolve().parent / "templates" / _VIS_DIR
    return {"vis-network.min.js": base / "vis-network.min.js", "vis-network.css": base / "vis-network.css"}


@functools.lru_cache(maxsize=1)
def _inline_assets() -> dict:
    """vis-network's style and script to inline, read once per process: ``{"vis_css": ..., "vis_js": ...}``.

    The files of :func:`vis_assets` (in the pyvis wheel), marked :class:`markupsafe.Markup` here
    only: the library's own code, printed verbatim inside ``<style>`` / ``<script>`` by the
    ``vis_inline`` macro of ``graph_parts.html.j2``.

    Raises
    ------
    ValueError
        If a file holds the closing tag of its element (it would end the element early).
    """
    from markupsafe import Markup

    texts = {}
    for key, name, tag in (("vis_css", "vis-network.css", "</style"),
                           ("vis_js", "vis-network.min.js", "</script")):
        text = vis_assets()[name].read_text(encoding="utf-8")
        if tag in text.lower():
            raise ValueError(f"{name} holds {tag}>: it cannot be inlined.")
        texts[key] = Markup(text)
    return texts


def _edge_items(A, names, edges, required=None, oriented=None, disputed=None, font=None):
    """vis-network options of each edge of ``classify_edges`` output.

    Parameters
    ----------
    required : ndarray of bool of shape (n_nodes, n_nodes), optional
        Edges required by prior knowledge: labelled "required" on the drawing and in the tooltip.
    oriented : ndarray of bool of shape (n_nodes, n_nodes), optional
        Edges an intervention can orient (a condition targets one of their ends): drawn with a
        dot in the middle (:data:`colide_core.render.graph_style.ORIENTED_STYLE`, an entry of the
        legend) and said in the tooltip, with the truth's disagreement when it has the other
        direction.
    disputed : ndarray of bool of shape (n_nodes, n_nodes), optional
        Edges whose reverse the data prefer (:func:`colide_core.render.tables.disputed_edges`):
        a "?" at the middle (:data:`colide_core.render.graph_style.DISPUTED_STYLE`, the size of
        the node labels of font ``font``) and said in the tooltip; an orientable one no longer
        reads as settled ("orientable by an intervention, but the data prefer the reverse").
    font : float, optional
        The node labels' font (drawing units), which the "?" follows; default 14.

    Returns
    -------
    list of (int, int, dict)
        ``(i, j, options)`` per edge: colour by agreement with the truth, width by ``|w|``
        relative to the largest, the arrowhead by the sign, a plain-text tooltip.
    """
    wmax = float(np.max(np.abs(A))) if np.any(A) else 1.0
    items = []
    for i, j, kind in edges:
        colour, dashed, _ = EDGE_STYLES[kind]
        w = float(A[i, j])
        if kind == "missing":
            width, title, head = 1.5, f"{names[i]} → {names[j]}: missing true edge", "arrow"
        else:
            width = 1.0 + 7.0 * abs(w) / wmax
            head = SIGN_STYLES["+" if w > 0 else "-"][0]
            title = f"{names[i]} → {names[j]}: w = {w:+.4g} ({kind})"
        opts = {"color": colour, "width": width, "dashes": dashed, "title": title,
                "arrows": {"to": {"enabled": True, "type": head}}}
        if head == "bar":
            # the line runs to the node (which is drawn over it), through the bar: with vis-network's
            # default the line stopped 0.9 bar-lengths short and the "⊣" floated off the edge (issue 41)
            opts["arrowStrikethrough"] = True
        marks = []
        if required is not None and kind != "missing" and required[i, j]:
            opts["title"] += " · required by prior knowledge"
            marks.append("required")
        doubt = disputed is not None and kind != "missing" and bool(disputed[i, j])
        prefer = f"the data prefer the reverse ({names[j]} → {names[i]}, the Check page's edge evidence)"
        if oriented is not None and kind != "missing" and oriented[i, j]:
            # what a target gives is an edge *orientable* by it under the model, not a proven direction;
            # where the data prefer the reverse it must not read as settled (issue 48, m-7)
            opts["title"] += (f" · orientable by an intervention, but {prefer}" if doubt else
                              " · orientable by an intervention on one of its ends (under the linear SEM)")
            if kind == "reversed":
                opts["title"] += "; the truth has the other direction"
            opts["arrows"]["from"] = graph_style.oriented_arrow(width)  # at the start, one size (m-13)
        elif doubt:
            opts["title"] += f" · {prefer}"
        if doubt:
            style = graph_style.DISPUTED_STYLE
            opts["label"] = " ".join([style["marker"]] + ([", ".join(marks)] if marks else []))  # plain text
            # its own colour stays the line's; the "?" the size of the node labels (graph_draw.js keeps
            # it so: markFont), dark on a white outline
            opts["font"] = {"size": round(style["font_scale"] * (14.0 if font is None else float(font)), 2),
                            "color": style["colour"], "strokeWidth": 4, "strokeColor": "#ffffff"}  # upright
            opts["markFont"] = style["font_scale"]
        elif marks:
            opts["label"] = ", ".join(marks)  # drawn text: plain, never HTML
            opts["font"] = {"size": 11, "color": colour, "strokeWidth": 3, "align": "middle"}
        items.append((int(i), int(j), opts))
    return items


def legend_for(graphs, B_true=None, oriented=None, *, truth_drawn=False, disputed=None) -> str:
    """The legend of drawings of ``graphs`` coloured against ``B_true``: what any of them draws.

    Parameters
    ----------
    graphs : sequence of array-like of shape (n_nodes, n_nodes)
        Thresholded weighted adjacencies, ``A[i, j] != 0`` means i -> j (one drawing, several
        side by side, or the frames of a playback).
    B_true : array-like of shape (n_nodes, n_nodes), optional
        The truth the edges are coloured against (:func:`colide_core.classify_edges`).
    oriented : array-like of bool of shape (n_nodes, n_nodes), optional
        Edges an intervention can orient: the legend gains their marker when any is drawn.
    truth_drawn : bool, default False
        ``graphs`` are a true graph (e.g. a simulated one), drawn without a truth to colour against:
        their edges are called :data:`colide_core.render.graph_style.TRUE_EDGE_TEXT`, not "learned edge".
    disputed : array-like of bool of shape (n_nodes, n_nodes), optional
        Edges whose reverse the data prefer (:func:`colide_core.render.tables.disputed_edges`; the
        union over the drawings): the legend gains their "?" when one of ``graphs`` draws one.

    Returns
    -------
    str
        The legend (the ``legend`` macro of ``graph_parts.html.j2``, each text escaped once) of
        the edge kinds and weight signs drawn; ``""`` when no edge is.
    """
    entries = _legend_entries(graphs, B_true)
    if entries is None:
        return ""
    if truth_drawn and B_true is None:
        entries = [dict(e, text=graph_style.TRUE_EDGE_TEXT) if e.get("kind") == "learned" else e for e in entries]
    if oriented is not None:
        ori = np.asarray(oriented, dtype=bool)
        if any(np.any(ori & (np.asarray(A, dtype=float) != 0)) for A in graphs):
            entries = entries + [{"marker": graph_style.ORIENTED_STYLE["marker"],
                                  "text": graph_style.ORIENTED_STYLE["text"]}]
    if disputed is not None:
        doubt = np.asarray(disputed, dtype=bool)
        if any(np.any(doubt & (np.asarray(A, dtype=float) != 0)) for A in graphs):
            entries = entries + [_DISPUTED_ENTRY]
    return str(_parts().legend(entries))


def _legend_entries(graphs, B_true=None):
    """:func:`colide_core.render.graph_style.legend_entries` of what ``graphs`` draw; None when no edge is."""
    kinds, signs = set(), set()
    for A in graphs:
        A = np.asarray(A, dtype=float)
        edges = classify_edges(A, B_true)
        kinds |= {k for _, _, k in edges} if B_true is not None else ({"learned"} if edges else set())
        signs |= {"+" if A[i, j] > 0 else "-" for i, j, k in edges if k != "missing"}
    return graph_style.legend_entries(kinds, signs) if kinds else None


#: The legend's entry of the edges whose reverse the data prefer (plain text, a marker like the dot's).
_DISPUTED_ENTRY = {"marker": graph_style.DISPUTED_STYLE["marker"], "text": graph_style.DISPUTED_STYLE["text"]}


def _marked(entries, context):
    """``entries`` with the settled edges' halo and the disputed edges' "?" appended when the
    drawing of ``context`` draws any."""
    if not entries:
        return entries
    if context.get("settled_drawn"):
        entries = entries + [{"halo": graph_style.SETTLED_STYLE["halo"], "text": graph_style.SETTLED_STYLE["text"]}]
    if context.get("disputed_drawn"):
        entries = entries + [_DISPUTED_ENTRY]
    return entries


def graph_html(W, names, B_true=None, *, sigma=None, height_px: int | None = 520, positions=None,
               layout="circular", legend: bool = True, assets_url: str | None = None, required=None,
               oriented=None, node_values=None, settled=None, disputed=None) -> str:
    """Build a self-contained interactive HTML view of a weighted DAG.

    Parameters
    ----------
    W : array-like of shape (n_nodes, n_nodes)
        Thresholded weighted adjacency, ``W[i, j] != 0`` means i -> j. Edge width is
        proportional to ``|W[i, j]|``; the arrowhead shows the sign (arrow: positive, bar ⊣:
        negative, :data:`colide_core.render.graph_style.SIGN_STYLES`).
    names : sequence of str
        Node names (user-supplied): drawn as plain text, embedded as escaped JSON.
    B_true : array-like of shape (n_nodes, n_nodes), optional
        Ground truth; when given, edges are coloured correct / reversed / extra and missing true
        edges are drawn dashed (:data:`colide_core.render.graph_style.EDGE_STYLES`).
    sigma : float or array-like of shape (n_nodes,), optional
        Estimated noise standard deviations, shown in the node tooltips.
    height_px : int or None, default=520
        Height of the drawing area in pixels; None: the drawing fills the height of the window
        (the frame it is shown in) less the legend, and follows its resizing.
    positions : array-like of shape (n_nodes, 2), optional
        Fixed node positions in drawing coordinates (x right, y down), e.g. from
        :func:`colide_core.render.graph_style.node_positions`, so several drawings of the same nodes
        (EV, NV, the truth, playback frames) put each node at the same place. Default: that
        function with ``layout``, scaled to fit the drawing at zoom 1.
    layout : {"circular", "topological"}, default "circular"
        Used when ``positions`` is None; "topological" lays out ``B_true`` (else the drawn
        graph) top-down by layers.
    legend : bool, default True
        Draw the legend below the graph; a page showing several drawings side by side may show
        one legend for all (:func:`legend_for`).
    assets_url : str or None, default None
        None: vis-network's script and style are inlined (a self-contained page, ~700 kB, for
        reports and exports). Otherwise a relative URL path (letters, digits, ``_.-/``) under
        which ``vis-network.min.js`` and ``vis-network.css`` (:func:`vis_assets`) are served:
        the page then loads them from there (a few kB a page; the browser caches the library).
    required : array-like of bool of shape (n_nodes, n_nodes), optional
        Edges required by prior knowledge: each drawn one is labelled "required" (and says so in
        its tooltip), so a constrained fit never looks like an unconstrained one.
    oriented : array-like of bool of shape (n_nodes, n_nodes), optional
        Edges whose direction an intervention identifies (``oriented[j, k]`` when some condition
        targets j or k, :func:`dashboard.data.oriented_by_interventions`): labelled "intervention".
    node_values : array-like of shape (n_nodes,), optional
        A signed change per node (the Predict page: the predicted shift in standard deviations):
        each node filled by :func:`colide_core.render.graph_style.change_fill` and its tooltip
        saying the value; NaN leaves a node plain.
    settled : array-like of bool of shape (n_nodes, n_nodes), optional
        Edges a planned experiment would settle the direction of (either orientation given):
        drawn in their own colour with the halo of :data:`colide_core.render.graph_style.SETTLED_STYLE`,
        which the legend names.
    disputed : array-like of bool of shape (n_nodes, n_nodes), optional
        Edges whose reverse the data prefer, the Check page's verdict
        (:func:`colide_core.render.tables.disputed_edges`): each drawn one keeps its colour, width
        and dot and gains a "?" at its middle (:data:`colide_core.render.graph_style.DISPUTED_STYLE`),
        which the legend names, and its tooltip says so.

    Returns
    -------
    str
        A complete HTML document (``graph_page.html.j2``) with vis-network inlined or linked
        under ``assets_url`` (never an external URL), with a legend of the edge colours and
        arrowheads drawn.

    Raises
    ------
    ValueError
        If the shapes disagree, or if ``assets_url`` is not a relative path.

    Notes
    -----
    Drawn by vis-network 9.1.2 (shipped in the pyvis 0.3.2 wheel). Fonts and nodes are
    sized with the number of nodes (:func:`colide_core.render.graph_style.font_px`) and the layout fits
    a 600 × ``height_px`` canvas at zoom 1, so labels stay readable; above
    :data:`colide_core.render.graph_style.SUMMARY_NODES` nodes callers show a summary instead. Once
    drawn, the page fits the graph to its frame and enlarges the labels towards
    :data:`LABEL_SCREEN_PX` on screen, up to the largest font at which no two labels overlap
    (:func:`colide_core.render.graph_style.max_font`), so a narrow frame does not shrink them to dots.
    A drawing narrower than its frame is first widened to the frame's shape (at most 3 times; a
    ring, the default circle, becomes an ellipse with its nodes equally spaced along it), and every
    edge whose arrowhead covers a label, or whose line crosses another node's label, gets a smaller
    arrowhead, then another bend, then a thinner line (``templates/graph_draw.js``, :func:`draw_script`;
    its ``drawingGeometry`` gives the arrowheads and labels as drawn, read by the browser tests).
    A negative weight's line runs into its bar (``arrowStrikethrough``), which is drawn at the node.
    The page is the template ``graph_page.html.j2`` (:func:`template_environment`).
    """
    context = _graph_context(W, names, B_true, sigma=sigma, height_px=height_px, positions=positions,
                             layout=layout, assets_url=assets_url, required=required, oriented=oriented,
                             node_values=node_values, settled=settled, disputed=disputed)
    context["legend_entries"] = _marked(_legend_entries([context.pop("A")], B_true), context) if legend else None
    return template_environment().get_template("graph_page.html.j2").render(**context)


def _graph_context(W, names, B_true, *, sigma, height_px, positions, layout, assets_url, required=None,
                   oriented=None, node_values=None, settled=None, disputed=None) -> dict:
    """The values ``graph_page.html.j2`` renders for :func:`graph_html` (same parameters), and ``A``.

    The vis-network node and edge lists (dicts, embedded by the template with ``|tojson``) and
    options, the drawing's height, where vis-network comes from (``assets_url``, or its inlined
    text), and the fit script's numbers. ``legend_entries`` is left to the caller.
    """
    if assets_url is not None and not _ASSETS_URL.fullmatch(str(assets_url)):
        raise ValueError(f"assets_url must be a relative URL path, got {assets_url!r}.")
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
        pos = unit * np.array([260.0, 0.42 * float(520 if height_px is None else height_px)])
    else:
        pos = np.asarray(positions, dtype=float)
        if pos.shape != (d, 2) or not np.all(np.isfinite(pos)):
            raise ValueError(f"positions must be a finite array of shape {(d, 2)}, got {pos.shape}.")

    edges = classify_edges(A, B_true)
    fill = height_px is None
    margin = max(2, int(font / 3))
    values = None if node_values is None else np.asarray(node_values, dtype=float).ravel()
    if values is not None and values.shape != (d,):
        raise ValueError(f"node_values must have {d} entries, got {values.shape[0]}.")
    fills = [graph_style.NODE_FILL] * d if values is None else graph_style.change_fill(values)
    nodes = []
    for i in range(d):
        label = names[i]  # plain text for vis-network: not HTML-escaped (see the module notes)
        title = label if sig is None else f"{label}\nσ̂ = {sig[i]:.4g}"
        if values is not None and np.isfinite(values[i]):
            title += f"\npredicted change: {values[i]:+.3g} sd"
        x, y = (float(v) for v in pos[i])
        nodes.append({"id": i, "label": label, "title": title, "x": x, "y": y, "physics": False,
                      "color": fills[i], "shape": "ellipse",
                      "font": {"size": font, "color": graph_style.label_colour(fills[i])},
                      "margin": margin})

    req = None if required is None else np.asarray(required, dtype=bool)
    if req is not None and req.shape != (d, d):
        raise ValueError(f"required must have shape {(d, d)}, got {req.shape}.")
    ori = None if oriented is None else np.asarray(oriented, dtype=bool)
    if ori is not None and ori.shape != (d, d):
        raise ValueError(f"oriented must have shape {(d, d)}, got {ori.shape}.")
    dis = None if disputed is None else np.asarray(disputed, dtype=bool)
    if dis is not None and dis.shape != (d, d):
        raise ValueError(f"disputed must have shape {(d, d)}, got {dis.shape}.")
    items = _edge_items(A, names, edges, req, ori, dis, font)
    disputed_drawn = any("markFont" in opts for _, _, opts in items)
    settled_drawn = False
    if settled is not None:
        sett = np.asarray(settled, dtype=bool)
        if sett.shape != (d, d):
            raise ValueError(f"settled must have shape {(d, d)}, got {sett.shape}.")
        sett = sett | sett.T
        for i, j, opts in items:
            if sett[i, j] and not opts.get("dashes"):
                # its own colour (the agreement with the truth) and width, a halo around it (m-2)
                opts["shadow"] = dict(graph_style.SETTLED_STYLE["shadow"])
                opts["title"] += " · its direction is what the chosen experiment would settle"
                settled_drawn = True
    # the cap on the enlarged font scales with the drawing: 40 units on the default 520-unit-wide
    # drawing, more on the pages' larger ones (a top-down layout at d = 50 spans 3,000 units, where a
    # fixed 40 held its labels at 3.8 px on screen: issue 48, M-6)
    span = max(float(np.ptp(pos[:, 0])), float(np.ptp(pos[:, 1])), 1.0) if d > 1 else 520.0
    big = graph_style.max_font(pos, names, font, max(font, _MAX_FONT * max(1.0, span / 520.0)))
    # each edge bent around the nodes it does not connect (at the largest font the page may show)
    bends = graph_style.edge_bends(pos, [(i, j) for i, j, _ in items], names, big)
    edge_list = []
    for i, j, opts in items:
        kind, roundness = bends[(i, j)]
        edge_list.append({"from": i, "to": j, **opts, "smooth": {"type": kind, "roundness": roundness}})

    drawing = {"nodes": nodes, "edges": edge_list, "options": _OPTIONS, "fill": fill,
               "base_font": font, "max_font": round(big, 1), "target_font": LABEL_SCREEN_PX,
               "bends": [list(b) for b in graph_style.EDGE_BENDS], "ring": positions is None and layout == "circular"}
    context = {"drawing": drawing, "height": "100vh" if fill else f"{int(height_px)}px", "fill": fill,
               "assets_url": None if assets_url is None else str(assets_url).rstrip("/"),
               "draw_js": draw_script(), "A": A, "settled_drawn": settled_drawn, "disputed_drawn": disputed_drawn}
    context.update(_inline_assets() if assets_url is None else {"vis_css": None, "vis_js": None})
    return context


@functools.lru_cache(maxsize=1)
def draw_script():
    """The drawing code of every graph page, ``templates/graph_draw.js``, read once per process.

    Pure JavaScript holding no user text: its ``colideDraw(drawing)`` draws the dict of
    :func:`graph_drawing` (a first call builds the vis-network, a later one replaces its nodes and
    edges in place). Marked :class:`markupsafe.Markup` here, the one place, to be printed verbatim
    inside a page's ``<script>``; the dashboard's long-lived drawing serves the same file.

    Returns
    -------
    markupsafe.Markup

    Raises
    ------
    ValueError
        If the file holds ``</script`` (it would end the element early).
    """
    from markupsafe import Markup

    text = DRAW_JS.read_text(encoding="utf-8")
    if "</script" in text.lower():
        raise ValueError("graph_draw.js must not hold a closing script tag.")
    return Markup(text)


def graph_drawing(W, names, B_true=None, *, sigma=None, positions=None, layout="circular", legend: bool = True,
                  required=None, oriented=None, node_values=None, settled=None, disputed=None) -> dict:
    """What :func:`graph_html` draws, as data: the argument of ``colideDraw`` in ``graph_draw.js``.

    The dashboard sends it to a drawing that stays open across reruns
    (:func:`dashboard.graphview.show_graph`), which redraws in place instead of loading a new page.
    Same parameters and checks as :func:`graph_html` (the drawing fills its frame, ``height_px=None``).

    Returns
    -------
    dict
        JSON-able: ``nodes`` and ``edges`` (vis-network items; node labels and tooltips hold the
        names as they are, drawn as plain text), ``options``, ``fill``, ``base_font``, ``max_font``,
        ``target_font``, ``bends``, ``ring``, and ``legend``: the legend as data, a list of
        ``{"text", "colour", "dashed"}`` (an edge kind) or ``{"text", "marker"}`` /
        ``{"text"}`` entries of plain text, or None. ``graph_draw.js``'s ``colideLegend`` builds it
        with ``textContent``: nothing in the drawing is HTML.

    Raises
    ------
    ValueError
        As :func:`graph_html`.
    """
    context = _graph_context(W, names, B_true, sigma=sigma, height_px=None, positions=positions, layout=layout,
                             assets_url=None, required=required, oriented=oriented, node_values=node_values,
                             settled=settled, disputed=disputed)
    entries = _marked(_legend_entries([context["A"]], B_true), context) if legend else None
    legend = [{k: entry[k] for k in ("text", "colour", "dashed", "marker", "halo") if k in entry}
              for entry in entries] if entries else None
    return {**context["drawing"], "legend": legend}


_START = re.compile(r"/\*start\*/\d+/\*start\*/")


def playback_html(graphs, names, B_true=None, *, captions, positions=None, layout="circular",
                  height_px: int | None = None, assets_url: str | None = None, required=None) -> str:
    """An animated drawing of a fit's checkpoints: one graph, its edges replaced frame by frame.

    The drawing of :func:`graph_html` (same positions, colours, arrowheads, legend), with a
    player above it: Play/Pause, a checkpoint slider and a speed menu, run in the browser (no
    server round trip per frame), and a caption per checkpoint. Nodes never move, so edges
    appear and vanish in place.

    Parameters
    ----------
    graphs : sequence of array-like of shape (n_nodes, n_nodes)
        The graph at each checkpoint, thresholded (e.g. :func:`colide_core.threshold_to_dag`
        of each W of :attr:`colide_core.SolverResult.W_history`), ``A[i, j] != 0`` meaning
        i -> j; at least one.
    names : sequence of str
        Node names (user-supplied): plain text, embedded as escaped JSON.
    B_true : array-like of shape (n_nodes, n_nodes), optional
        Ground truth colouring the edges, as in :func:`graph_html`.
    captions : sequence of str
        One plain-text line per checkpoint, shown under the player.
    positions, layout, height_px, assets_url
        As in :func:`graph_html`; ``height_px`` None (default) fills the frame.
    required : array-like of bool of shape (n_nodes, n_nodes), optional
        Edges required by prior knowledge: labelled "required" in every frame, as in :func:`graph_html`.

    Returns
    -------
    str
        The HTML page (``playback.html.j2``, which extends the page of :func:`graph_html`; frames
        and captions embedded with ``|tojson``); it opens on checkpoint 0
        (:func:`set_playback_start` picks another).

    Raises
    ------
    ValueError
        If ``graphs`` is empty, shapes disagree, or ``len(captions) != len(graphs)``.
    """
    As = [np.asarray(A, dtype=float) for A in graphs]
    if not As:
        raise ValueError("graphs holds no checkpoint.")
    if len(captions) != len(As):
        raise ValueError(f"{len(captions)} captions for {len(As)} checkpoints.")
    d = As[0].shape[0]
    if any(A.shape != (d, d) for A in As):
        raise ValueError("Every graph must have the same square shape.")
    names = [str(n) for n in names]
    req = None if required is None else np.asarray(required, dtype=bool)
    if req is not None and req.shape != (d, d):
        raise ValueError(f"required must have shape {(d, d)}, got {req.shape}.")
    frames = [[{"from": i, "to": j, **opts} for i, j, opts in _edge_items(A, names, classify_edges(A, B_true), req)]
              for A in As]
    context = _graph_context(As[0], names, B_true, sigma=None, height_px=height_px, positions=positions,
                             layout=layout, assets_url=assets_url, required=req)
    del context["A"]
    return template_environment().get_template("playback.html.j2").render(
        **context, legend_entries=None, frames_legend=_legend_entries(As, B_true), frames=frames,
        captions=[str(c) for c in captions], start=0, last=len(As) - 1)


def set_playback_start(html: str, start: int) -> str:
    """The page of :func:`playback_html` opening on checkpoint ``start`` (clipped to the range).

    Parameters
    ----------
    html : str
        A page made by :func:`playback_html` (cache it: this only rewrites one number).
    start : int
        Checkpoint index, from 0.

    Returns
    -------
    str
    """
    return _START.sub(f"/*start*/{max(int(start), 0)}/*start*/", html, count=1)
