"""Interactive graph of a learned DAG: :func:`colide_core.render.graph_html.graph_html` (pyvis, offline).

The drawing lives in :mod:`colide_core.render.graph_html` so that the HTML report
(:mod:`colide_core.render.report`, also written by ``python -m colide_core report``) shows the same
interactive graph as the dashboard; this module re-exports it with the edge labelling
(:func:`colide_core.graph._dag.classify_edges`, the one truth labelling) for the figures and pages.

Convention: ``W[i, j] != 0`` means the edge i -> j (same for ``B_true``).
"""
from __future__ import annotations

from colide_core.graph._dag import classify_edges
from colide_core.render.graph_html import graph_html
from colide_core.render.graph_style import EDGE_STYLES, SUMMARY_NODES, node_positions

__all__ = ["EDGE_STYLES", "SUMMARY_NODES", "classify_edges", "graph_html", "node_positions"]
