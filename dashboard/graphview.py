"""Show a learned graph on a page: the interactive drawing, or a summary above a size.

Up to :data:`colide_core.render.graph_style.SUMMARY_NODES` nodes the graph is drawn with the one
interactive drawing (``colideDraw`` of ``colide_core/render/templates/graph_draw.js``: fixed
positions, legend). The drawing is a Streamlit component whose document stays open across reruns:
each rerun sends it the new drawing as data (:func:`drawing_data`), and it redraws in place, so a λ
step costs no new page and no new parse of vis-network (issue 41: a new ``srcdoc`` page per drawing
took 0.35-1.2 s in the browser under load). The component's folder is written once per process
(:func:`drawing_component`); where it cannot be, each drawing is a page in an ``st.iframe``
(:func:`drawing_html`), as before. Above
it labels would overlap (measured by :func:`colide_core.render.graph_style.label_overlap`), so the page
shows the adjacency as a heatmap in the same colours (:func:`colide_core.render.figures.adjacency_figure`)
and the strongest edges as a table.

Convention: ``A[i, j] != 0`` means the edge i -> j.
"""
from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

import numpy as np
import streamlit as st

from colide_core.graph.export import edge_list
from colide_core.render.graph_html import legend_for
from colide_core.render.graph_style import SUMMARY_NODES
from dashboard.infra import assets
from dashboard.infra.assets import vis_assets_url
from dashboard.caching.cached import graph_drawing_cached, graph_html_cached
from colide_core.render.figures import adjacency_figure

__all__ = ["drawing_component", "drawing_data", "drawing_html", "show_graph", "show_legend", "warm_drawing"]

#: The component's own files (its page and Streamlit's protocol), next to this module.
_COMPONENT_SOURCES = Path(__file__).resolve().parent / "drawing"


def _component_files() -> dict:
    """Every file the drawing component serves, by name: its page and protocol, the library's
    drawing code and vis-network (the very files the library's pages inline)."""
    from colide_core.render.graph_html import DRAW_JS, vis_assets

    files = {p.name: p for p in sorted(_COMPONENT_SOURCES.iterdir()) if p.suffix in (".html", ".js")}
    files["graph_draw.js"] = DRAW_JS
    files.update(vis_assets())
    return files


@functools.lru_cache(maxsize=1)
def _declared():
    """``(component, folder)``: the files copied and the component declared, once per process;
    ``(None, None)`` where the folder cannot be written."""
    import streamlit.components.v1 as components

    files = _component_files()
    digest = hashlib.sha256()
    for name, path in files.items():
        digest.update(name.encode() + b"\0" + path.read_bytes())
    folder = assets.STATIC_DIR / f"graph-drawing-{digest.hexdigest()[:12]}"
    try:
        for name, path in files.items():
            assets.install_file(path, folder / name)
    except OSError:
        return None, None
    return components.declare_component("colide_drawing", path=str(folder)), folder


def drawing_component():
    """The long-lived drawing component, declared once per process, or None where it cannot be.

    Its files (:func:`_component_files`) are copied into ``static/graph-drawing-<digest>`` (the
    digest of their contents, so a browser never meets a stale copy after an upgrade) and served
    by Streamlit from there. A folder removed while the server runs is written again.

    Returns
    -------
    callable or None
        The component (``streamlit.components.v1.declare_component``), or None when the folder
        cannot be written (a read-only install): :func:`show_graph` then draws pages in iframes.
    """
    component, folder = _declared()
    if folder is not None and not (folder / "index.html").is_file():
        _declared.cache_clear()  # removed while the server runs: copy again
        component, folder = _declared()
    return component


def drawing_data(A, names, truth=None, sigma=None, *, positions=None, layout="circular", legend=True,
                 required=None, oriented=None, node_values=None, settled=None, disputed=None) -> tuple:
    """What the long-lived drawing is sent for one graph (cached): ``(drawing, token)``.

    Parameters
    ----------
    A, names, truth, sigma, positions, layout, legend, required, oriented, node_values, settled, disputed
        As in :func:`drawing_html`.

    Returns
    -------
    tuple of (dict, str)
        :func:`colide_core.render.graph_html.graph_drawing`'s dict and a digest of it: the drawing
        redraws only when the token changes.
    """
    return graph_drawing_cached(np.asarray(A, dtype=float), tuple(str(n) for n in names), truth, sigma,
                                positions=positions, layout=layout, legend=bool(legend), required=required,
                                oriented=oriented,
                                node_values=None if node_values is None else np.asarray(node_values, dtype=float),
                                settled=settled, disputed=_mask(disputed))


def _mask(mask):
    """``mask`` as a bool array (one cache key whatever its dtype), None as None."""
    return None if mask is None else np.asarray(mask, dtype=bool)


def warm_drawing(A, names, truth=None, sigma=None, **kwargs) -> None:
    """Make (and cache) what :func:`show_graph` will send for this graph: the drawing's data when
    the long-lived drawing is in use, else its page. Used by the live page's prefetch
    (:mod:`dashboard.live`), so what it warms is what the page asks for."""
    if drawing_component() is not None:
        drawing_data(A, names, truth, sigma, **kwargs)
    else:
        drawing_html(A, names, truth, sigma, **kwargs)


def drawing_html(A, names, truth=None, sigma=None, *, positions=None, layout="circular", legend=True,
                 required=None, oriented=None, node_values=None, settled=None, disputed=None) -> str:
    """The page of one drawing as the dashboard shows it (cached): filling its frame, vis-network
    served once (:func:`dashboard.infra.assets.vis_assets_url`). The live Learn page's prefetch
    (:mod:`dashboard.live`) calls this too, so what it warms is what the page asks for.

    Parameters
    ----------
    A : ndarray of shape (n_nodes, n_nodes)
        Thresholded weights, ``A[i, j] != 0`` means i -> j.
    names : sequence of str
    truth : ndarray of shape (n_nodes, n_nodes), optional
    sigma : float or ndarray of shape (n_nodes,), optional
    positions : ndarray of shape (n_nodes, 2), optional
    layout : {"circular", "topological"}
    legend : bool
        Draw the legend inside the frame (False where the page shows one for several drawings).
    required : ndarray of bool of shape (n_nodes, n_nodes), optional
        Edges required by the fit's prior knowledge (:func:`dashboard.live.required_of`): labelled.
    oriented : ndarray of bool of shape (n_nodes, n_nodes), optional
        Edges an intervention orients (:func:`dashboard.data.oriented_by_interventions`): labelled.
    node_values : ndarray of shape (n_nodes,), optional
        A signed change per node, shown as the nodes' fill (the Predict page).
    settled : ndarray of bool of shape (n_nodes, n_nodes), optional
        Edges a planned experiment would settle, highlighted (the Predict page).
    disputed : ndarray of bool of shape (n_nodes, n_nodes), optional
        Edges whose reverse the data prefer (the Check page's verdict,
        :func:`dashboard.checks.disputed_in_session`): a "?" and a tooltip; None when not checked.

    Returns
    -------
    str
        HTML for ``st.iframe``.
    """
    return graph_html_cached(np.asarray(A, dtype=float), tuple(str(n) for n in names), truth, sigma,
                             positions=positions, layout=layout, height_px=None, legend=bool(legend),
                             assets_url=vis_assets_url(), required=required, oriented=oriented,
                             node_values=None if node_values is None else np.asarray(node_values, dtype=float),
                             settled=settled, disputed=_mask(disputed))


def show_legend(As, truth=None, oriented=None, truth_drawn=False, disputed=None) -> None:
    """One legend for drawings shown side by side, listing what any of the graphs ``As`` draws.

    Nothing above :data:`~colide_core.render.graph_style.SUMMARY_NODES` nodes, where
    :func:`show_graph` shows a heatmap instead of lines and arrowheads.

    Parameters
    ----------
    As : sequence of ndarray of shape (n_nodes, n_nodes)
        The thresholded graphs drawn (``A[i, j] != 0`` means i -> j).
    truth : ndarray of shape (n_nodes, n_nodes), optional
        The truth they are coloured against (:func:`colide_core.render.graph_html.legend_for`).
    oriented : ndarray of bool of shape (n_nodes, n_nodes), optional
        Edges an intervention can orient: their marker joins the legend when one is drawn.
    truth_drawn : bool, default False
        ``As`` is the true graph itself (the Simulate page): its edges are "true", not "learned".
    disputed : ndarray of bool of shape (n_nodes, n_nodes) or sequence of them, optional
        Edges whose reverse the data prefer, one mask for all the drawings or one per drawing (None
        entries skipped): their "?" joins the legend when one is drawn.
    """
    if any(np.asarray(A).shape[0] > SUMMARY_NODES for A in As):
        return  # shown as heatmaps (show_graph), whose colour key is their own: no line legend (issue 41)
    if disputed is not None and not hasattr(disputed, "shape"):  # one mask per drawing: their union
        masks = [np.asarray(m, dtype=bool) for m in disputed if m is not None]
        disputed = np.logical_or.reduce(masks) if masks else None
    legend = legend_for(As, truth, oriented, truth_drawn=truth_drawn, disputed=disputed)
    if legend:
        st.html(legend)


def show_graph(A, names, truth=None, sigma=None, *, key, positions=None, layout="circular", height=560,
               top_k=20, legend=True, required=None, oriented=None, node_values=None, settled=None, label="",
               disputed=None):
    """Render graph ``A`` with the project's one drawing, or its summary above ``SUMMARY_NODES`` nodes.

    Parameters
    ----------
    A : ndarray of shape (n_nodes, n_nodes)
        Thresholded weights, ``A[i, j] != 0`` means i -> j.
    names : sequence of str
    truth : ndarray of shape (n_nodes, n_nodes), optional
    sigma : float or ndarray of shape (n_nodes,), optional
    key : str
        Streamlit key prefix of the elements created; the drawing's key (``<key>_drawing``) keeps its
        document across reruns.
    positions : ndarray of shape (n_nodes, 2), optional
        Fixed node positions shared by the drawings of the same node set.
    layout : {"circular", "topological"}
    height : int
        Height in pixels.
    top_k : int
        Rows of the strongest-edges table of the summary view.
    legend : bool
        Draw the legend in the drawing's frame (False: the page calls :func:`show_legend`).
    required : ndarray of bool of shape (n_nodes, n_nodes), optional
        Edges required by the fit's prior knowledge, labelled in the drawing.
    oriented : ndarray of bool of shape (n_nodes, n_nodes), optional
        Edges an intervention orients, labelled in the drawing.
    node_values, settled, disputed : optional
        As in :func:`drawing_html` (a signed change per node; edges a planned experiment settles;
        edges whose reverse the data prefer).
    label : str, default ""
        The heading the page shows above this drawing: the drawing's document holds it once drawn
        (``window.colideLabel``), which the browser tests and ``benchmarks/bench_app.py`` wait on.
    """
    names = [str(n) for n in names]
    if len(names) <= SUMMARY_NODES:
        kw = dict(positions=positions, layout=layout, legend=legend, required=required, oriented=oriented,
                  node_values=node_values, settled=settled, disputed=disputed)
        component = drawing_component()
        if component is None:
            st.iframe(drawing_html(A, names, truth, sigma, **kw), height=height)
            return
        drawing, token = drawing_data(A, names, truth, sigma, **kw)
        component(drawing=drawing, token=token, label=str(label), height=int(height), key=f"{key}_drawing",
                  default=None)
        return
    st.caption(f"{len(names)} nodes: more than {SUMMARY_NODES}, where labels of a drawing overlap. Showing the "
               "adjacency (row = source, column = target) in the same colours, and the strongest edges.")
    st.plotly_chart(adjacency_figure(A, names, truth, height=max(height, 640)), key=f"{key}_adjacency")
    edges = edge_list(A, names)
    if len(edges):
        edges = edges.reindex(edges["weight"].abs().sort_values(ascending=False).index).head(int(top_k))
    st.dataframe(edges, hide_index=True, key=f"{key}_top_edges")
