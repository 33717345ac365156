"""Streamlit-cached wrappers of the pure renderers (so a rerun does not rebuild the same HTML).

Convention: ``W[i, j] != 0`` means the edge i -> j.
"""
from __future__ import annotations

import streamlit as st

from dashboard.graph import graph_html

__all__ = ["graph_html_cached"]


@st.cache_data(show_spinner=False, max_entries=64)
def graph_html_cached(W, names: tuple, B_true=None, sigma=None) -> str:
    """:func:`dashboard.graph.graph_html` cached on its inputs (small arrays, cheap to hash).

    Parameters
    ----------
    W : ndarray of shape (n_nodes, n_nodes)
        Thresholded weighted adjacency.
    names : tuple of str
    B_true : ndarray of shape (n_nodes, n_nodes), optional
    sigma : float or ndarray of shape (n_nodes,), optional

    Returns
    -------
    str
        The self-contained HTML page (pyvis generation takes ~0.2 s, so it is worth caching).
    """
    return graph_html(W, list(names), B_true, sigma=sigma)
