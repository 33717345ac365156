"""The cached renderers (graph pages, drawings, Playback) and the cached per-dataset summaries.

Every function here is cached with :func:`dashboard.caching.cache_data`, the dashboard's one
caching policy (full hashes, no unexplained unhashed parameter), whose names
(``cache_data``, ``HASH_FUNCS``, ``UNHASHED``, ``dataset_cache_key``) are re-exported here.
``tests/test_security_cache.py`` checks that every cached function of ``dashboard/`` and
``pages/`` follows its rules.

Convention: ``W[i, j] != 0`` means the edge i -> j.
"""
from __future__ import annotations

from colide_core import threshold_to_dag
from colide_core.hashing import json_digest
from colide_core.render.graph_html import playback_html
from colide_core.render.graph_html import graph_drawing, graph_html
from dashboard.caching import HASH_FUNCS, UNHASHED, _IN_CONTENT_HASH, _full, cache_data, dataset_cache_key  # noqa: F401
from dashboard.data import cached_data_as_fitted, network_dataset  # noqa: F401 - re-exported: cached with the data it builds
from dashboard.infra.text import checkpoint_caption

__all__ = ["HASH_FUNCS", "UNHASHED", "cache_data", "dataset_cache_key", "cached_condition_summary", "cached_data_as_fitted", "cached_network_dataset", "cached_network_summary", "graph_drawing_cached", "graph_html_cached", "playback_html_cached"]




@cache_data(show_spinner=False, max_entries=64)
def graph_html_cached(W, names: tuple, B_true=None, sigma=None, positions=None, layout: str = "circular",
                      height_px: int | None = 520, legend: bool = True, assets_url: str | None = None,
                      required=None, oriented=None, node_values=None, settled=None, disputed=None) -> str:
    """:func:`colide_core.render.graph_html.graph_html` cached on all its inputs (arrays hashed in full).

    Parameters
    ----------
    W : ndarray of shape (n_nodes, n_nodes)
        Thresholded weighted adjacency.
    names : tuple of str
    B_true : ndarray of shape (n_nodes, n_nodes), optional
    sigma : float or ndarray of shape (n_nodes,), optional
    positions : ndarray of shape (n_nodes, 2), optional
        Fixed node positions (x right, y down), shared by the drawings of one node set.
    layout : {"circular", "topological"}
        Layout used when ``positions`` is None (:mod:`colide_core.render.graph_style`).
    height_px, legend, assets_url, required, oriented, node_values, settled, disputed
        As in :func:`colide_core.render.graph_html.graph_html` (None: fill the frame; draw the legend;
        where vis-network is served, see :func:`dashboard.infra.assets.vis_assets_url`; the edges
        required by prior knowledge, labelled).

    Returns
    -------
    str
        The HTML page (pyvis generation takes ~0.2 s, so it is worth caching).
    """
    return graph_html(W, list(names), B_true, sigma=sigma, positions=positions, layout=layout,
                      height_px=height_px, legend=legend, assets_url=assets_url, required=required,
                      oriented=oriented, node_values=node_values, settled=settled, disputed=disputed)


@cache_data(show_spinner=False, max_entries=64)
def graph_drawing_cached(W, names: tuple, B_true=None, sigma=None, positions=None, layout: str = "circular",
                         legend: bool = True, required=None, oriented=None, node_values=None,
                         settled=None, disputed=None) -> tuple:
    """:func:`colide_core.render.graph_html.graph_drawing` cached on all its inputs, with its digest.

    Parameters
    ----------
    W, names, B_true, sigma, positions, layout, legend, required, oriented, node_values, settled, disputed
        As in :func:`graph_html_cached` (the drawing fills its frame).

    Returns
    -------
    tuple of (dict, str)
        The drawing (JSON-able) and the SHA-256 of its JSON: the long-lived drawing
        (:func:`dashboard.graphview.show_graph`) redraws only when it changes.
    """
    drawing = graph_drawing(W, list(names), B_true, sigma=sigma, positions=positions, layout=layout, legend=legend,
                            required=required, oriented=oriented, node_values=node_values, settled=settled,
                            disputed=disputed)
    token = json_digest(drawing, allow_nan=False)
    return drawing, token


@cache_data(show_spinner=False, max_entries=16)
def playback_html_cached(W_history: tuple, names: tuple, B_true=None, *, threshold: float, history: dict,
                         mu: tuple, s_used: tuple, positions=None, assets_url: str | None = None,
                         required=None) -> tuple:
    """The Playback tab's page and captions for one recorded fit, cached on all its inputs.

    Each W is thresholded once (:func:`colide_core.threshold_to_dag`) for both the drawing
    (:func:`colide_core.render.graph_html.playback_html`) and the caption's edge count
    (:func:`dashboard.infra.text.checkpoint_caption`), so a rerun of the Learn page repeats neither.

    Parameters
    ----------
    W_history : tuple of ndarray of shape (n_nodes, n_nodes)
        W at each checkpoint of one fit (arrays hashed in full).
    names : tuple of str
    B_true : ndarray of shape (n_nodes, n_nodes), optional
    threshold : float
    history : dict of ndarray
        :attr:`colide_core.SolverResult.history` of the same fit.
    mu, s_used : tuple of float
        μ and s of each stage.
    positions : ndarray of shape (n_nodes, 2), optional
    assets_url : str, optional
        Where vis-network is served (:func:`dashboard.infra.assets.vis_assets_url`).
    required : ndarray of bool of shape (n_nodes, n_nodes), optional
        Edges required by the fit's prior knowledge: kept by the thresholding, as on the Graph tab,
        and labelled in every frame.

    Returns
    -------
    page : str
        The page, opening on checkpoint 0 (:func:`colide_core.render.graph_html.set_playback_start`).
    captions : tuple of str
        One line per checkpoint.
    """
    graphs = [threshold_to_dag(W, float(threshold), required=required) for W in W_history]
    captions = tuple(checkpoint_caption(k, history, mu, s_used, int((A != 0).sum()), float(threshold))
                     for k, A in enumerate(graphs))
    page = playback_html(graphs, list(names), B_true, captions=captions, positions=positions, assets_url=assets_url,
                         required=required)
    return page, captions


@cache_data(show_spinner=False, max_entries=8, unhashed={
    "_dataset": "its key is the dataset's content hash, which covers the rows, the conditions and the targets "
                "(its design is built from them)"})
def _condition_summary(key, _dataset):
    from colide_core.data.stats import condition_summary

    return condition_summary(_dataset.X, design=_dataset.design)


def cached_condition_summary(dataset):
    """``colide_core.data.stats.condition_summary`` of a dataset with conditions, cached on its key.

    Parameters
    ----------
    dataset : dashboard.data.Dataset
        With conditions (:attr:`dashboard.data.Dataset.design`).

    Returns
    -------
    pandas.DataFrame
        One row per condition.
    """
    return _condition_summary(dataset.key, dataset)


@cache_data(show_spinner=False, max_entries=16)
def cached_network_dataset(name: str, n: int, seed: int, n_conditions: int = 0):
    """:func:`dashboard.data.network_dataset`, cached on its (hashable) arguments.

    Parameters
    ----------
    name : str
    n, seed, n_conditions : int

    Returns
    -------
    dashboard.data.Dataset
    """
    return network_dataset(str(name), int(n), int(seed), int(n_conditions))


@cache_data(show_spinner=False)
def cached_network_summary():
    """:func:`colide_core.data.networks.network_summary` (the four networks' sizes, scales and
    varsortability), once per process.

    Returns
    -------
    pandas.DataFrame
    """
    from colide_core.data.networks import network_summary

    return network_summary()
