"""Exports of a learned graph: GraphML, DOT, node-link JSON, DAGitty, CSV, PNG/SVG.

Every exporter takes a weighted adjacency ``W`` of shape ``(n_nodes, n_nodes)``
where ``W[i, j] != 0`` means the edge i -> j with weight ``W[i, j]``, plus
optional node names (taken from ``W``'s columns when it is a DataFrame).

Libraries (no hand-written serialisers for standard formats):

* GraphML and node-link JSON: :mod:`networkx` (``generate_graphml``,
  ``node_link_data``), read back with ``parse_graphml``/``node_link_graph``;
* DOT: the ``pydot`` package (pinned in requirements.txt; no Graphviz binary is
  needed to *write* DOT), with every node ID quoted here (:func:`dot_id`), because
  pydot leaves IDs that *look* quoted, HTML-like (``<...>``) or port-like
  (``a:b``) unquoted, which lets a name inject nodes and edges;
* CSV: :mod:`pandas`, always through :func:`to_csv_safe` (spreadsheet formula
  neutralisation, see below);
* pictures (PNG/SVG): drawn by the render layer, :func:`colide_core.render.picture.to_image`
  (matplotlib on a Figure rendered by the Agg/SVG backends, without :mod:`matplotlib.pyplot`: no global
  figure state, safe in threads and headless servers);
* DAGitty: the model string is a tiny text format (``dag { a -> b }``,
  https://www.dagitty.net/manual-3.x.pdf) with no Python writer, so it is built
  here, quoting names that are not plain identifiers.

:data:`EXPORT_FORMATS` lists every format with its file extension and MIME
type; :func:`export_graph` dispatches on it and always returns ``bytes``, which
is what a download button needs.

Node names are hostile input (they come from a user's CSV header). Every
exporter first applies the library's one name policy,
:func:`colide_core._validation.check_node_names` (NFC; no control, zero-width or
other invisible characters; no trailing backslash; unique), so no writer ever
sees a character its format cannot carry, and then escapes each name exactly
once for its format:

==============  ================================================================
format          how a name is written
==============  ================================================================
GraphML         XML attribute, escaped by the XML writer (networkx/ElementTree)
JSON            JSON string (:func:`json.dumps`)
DOT             always a double-quoted ID: ``\\`` -> ``\\\\``, ``"`` -> ``\\"``
                (:func:`dot_id`; :func:`dot_unquote` is the inverse)
DAGitty         bare when it matches ``[A-Za-z_][A-Za-z0-9_]*``, else
                double-quoted with ``"`` -> ``\\"`` (DAGitty strings have no
                other escape, so a backslash is written as is)
CSV             :func:`csv_escape_text`: a text cell that starts with ``=``,
                ``+``, ``-``, ``@``, tab, carriage return or ``'`` gets one
                ``'`` in front, unless it is a plain decimal number such as
                ``-0.5`` (OWASP "CSV Injection"); numbers are never changed.
                :func:`csv_unescape_text` (used by :func:`read_graph`) removes it.
==============  ================================================================

Every text format reads back with exactly the same node names and edges
(:func:`read_graph`; property test in ``tests/test_security_exports.py``).

Modules, by job (issue 47): the writers are here; the escaping of each format in
:mod:`colide_core.graph.escape`; the readers (with their DOT parser) in
:mod:`colide_core.graph.readers`. This module re-exports their public names, so
``colide_core.graph.export`` stays the one import path of exports.
"""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pandas as pd

from colide_core import defaults
from colide_core.exceptions import UnknownNodesError  # noqa: F401 - re-exported
from colide_core._validation import check_named_adjacency, check_node_names
from colide_core.graph.escape import (  # noqa: F401 - re-exported: the export module's names, as before the split
    _DAGITTY_PLAIN, CSV_FORMULA_PREFIXES, _dagitty_name, _escape_labels, _has_carriage_return, csv_escape_text,
    csv_safe_frame, csv_unescape_text, dot_id, dot_unquote, html_escape, to_csv_safe)
from colide_core.graph.readers import (  # noqa: F401 - re-exported
    DOT_MAX_BYTES, DOT_MAX_PAIRS, _dagitty_tokens, _Names, _read_adjacency_csv, _read_dagitty, _read_dot, _read_edges_csv,
    read_graph)

__all__ = [
    "EXPORT_FORMATS",
    "export_graph",
    "to_networkx",
    "to_graphml",
    "to_dot",
    "to_node_link_json",
    "to_dagitty",
    "edge_list",
    "to_edge_list_csv",
    "to_adjacency_csv",
    "read_graph",
    "UnknownNodesError",
    "DOT_MAX_BYTES",
    "dot_id",
    "dot_unquote",
    "CSV_FORMULA_PREFIXES",
    "csv_escape_text",
    "csv_unescape_text",
    "csv_safe_frame",
    "to_csv_safe",
    "html_escape",
]

#: format name -> (file extension, MIME type) (:data:`colide_core.defaults.EXPORT_FORMATS`)
EXPORT_FORMATS = defaults.EXPORT_FORMATS


def to_networkx(W, node_names=None):
    """Build a :class:`networkx.DiGraph` from a weighted adjacency.

    Parameters
    ----------
    W : array-like or pandas.DataFrame, shape (n_nodes, n_nodes)
        ``W[i, j] != 0`` means the edge i -> j; the value becomes the edge
        attribute ``weight`` (float). A DataFrame supplies node names.
    node_names : sequence of str, optional
        One unique name per node; default the DataFrame columns or
        ``X0, X1, ...``. Put through
        :func:`colide_core._validation.check_node_names` (NFC-normalised;
        control and invisible characters, empty names and a trailing
        backslash refused).

    Returns
    -------
    networkx.DiGraph
        Nodes in the order of ``W``'s rows (isolated nodes included), edges in
        row-major order.

    Raises
    ------
    ValueError
        If ``W`` is not a finite square matrix or the names do not fit or break
        the name policy.
    """
    A, names = check_named_adjacency(W, node_names)
    G = nx.DiGraph()
    G.add_nodes_from(names)
    rows, cols = np.nonzero(A)
    G.add_edges_from((names[i], names[j], {"weight": float(A[i, j])}) for i, j in zip(rows, cols))
    return G


def to_graphml(W, node_names=None):
    """GraphML document of the graph (networkx ``generate_graphml``).

    Parameters
    ----------
    W, node_names
        As in :func:`to_networkx`.

    Returns
    -------
    str
        UTF-8 XML text; each edge carries a ``weight`` (double) attribute.
    """
    return "\n".join(nx.generate_graphml(to_networkx(W, node_names))) + "\n"


def to_dot(W, node_names=None, *, decimals=3):
    """Graphviz DOT text (package pydot), every node ID quoted by :func:`dot_id`.

    Parameters
    ----------
    W, node_names
        As in :func:`to_networkx`.
    decimals : int, default 3
        Edge labels show the weight rounded to this many decimals; the full
        weight is kept in the ``weight`` attribute.

    Returns
    -------
    str
        A ``strict digraph``: one statement per node (isolated nodes
        included), then one ``"a" -> "b" [weight=..., label=...]`` per edge in
        row-major order. :func:`read_graph` with ``fmt="dot"`` reads it back.
    """
    import pydot

    A, names = check_named_adjacency(W, node_names)
    ids = [dot_id(n) for n in names]
    graph = pydot.Dot(graph_type="digraph", strict=True)
    for q in ids:
        graph.add_node(pydot.Node(q))
    for i, j in zip(*np.nonzero(A)):
        w = float(A[i, j])
        graph.add_edge(pydot.Edge(ids[i], ids[j], weight=repr(w), label=dot_id(f"{w:.{decimals}f}")))
    return graph.to_string()


def to_node_link_json(W, node_names=None):
    """Node-link JSON (networkx ``node_link_data``, the D3 layout).

    Parameters
    ----------
    W, node_names
        As in :func:`to_networkx`.

    Returns
    -------
    str
        JSON with keys ``directed``, ``multigraph``, ``graph``, ``nodes``
        (``{"id": name}``) and ``edges`` (``{"source", "target", "weight"}``).
    """
    data = nx.node_link_data(to_networkx(W, node_names), edges="edges")
    return json.dumps(data, indent=2)


def to_dagitty(W, node_names=None, *, weights=False, decimals=4):
    """DAGitty model string, e.g. ``dag {\\n  a\\n  b\\n  a -> b\\n}``.

    Paste it into https://www.dagitty.net or ``dagitty::dagitty()`` in R.

    Parameters
    ----------
    W, node_names
        As in :func:`to_networkx`.
    weights : bool, default False
        Add each weight as the edge attribute ``[beta=...]``, which DAGitty's
        ``simulateSEM`` reads as the path coefficient.
    decimals : int, default 4
        Rounding of the ``beta`` values.

    Returns
    -------
    str
        Every node is declared first (so isolated nodes survive), then one
        ``a -> b`` line per edge. Names that are not plain identifiers
        (``[A-Za-z_][A-Za-z0-9_]*``) are double-quoted, ``"`` written as
        ``\\"``.

    Notes
    -----
    Format: DAGitty manual, "model code" (dagitty.net/manual-3.x.pdf).
    """
    A, names = check_named_adjacency(W, node_names)
    q = [_dagitty_name(n) for n in names]
    lines = ["dag {"]
    lines += [f"  {n}" for n in q]
    for i, j in zip(*np.nonzero(A)):
        attr = f" [beta={A[i, j]:.{decimals}f}]" if weights else ""
        lines.append(f"  {q[i]} -> {q[j]}{attr}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def edge_list(W, node_names=None):
    """The edges of a weighted adjacency as a table (pandas).

    Parameters
    ----------
    W, node_names
        As in :func:`to_networkx`.

    Returns
    -------
    pandas.DataFrame
        Columns ``source``, ``target`` (node names) and ``weight`` (float), one row per nonzero
        ``W[i, j]`` (the edge i -> j), in row-major order; no rows when there are no edges.

    Raises
    ------
    ValueError
        If ``W`` is not a finite square matrix or the names do not fit.
    """
    A, names = check_named_adjacency(W, node_names)
    rows, cols = np.nonzero(A)
    return pd.DataFrame({
        "source": [names[i] for i in rows],
        "target": [names[j] for j in cols],
        "weight": A[rows, cols],
    })


def to_edge_list_csv(W, node_names=None):
    """CSV edge list with columns ``source,target,weight``: :func:`edge_list` as text.

    Parameters
    ----------
    W, node_names
        As in :func:`to_networkx`.

    Returns
    -------
    str
        One row per nonzero ``W[i, j]`` (source i, target j), row-major order;
        a header only when there are no edges. Weights are written with full
        float precision. Names are written by :func:`to_csv_safe` (a name
        starting with ``=``, ``+``, ``-``, ``@`` or ``'`` gets one leading
        ``'``, which :func:`read_graph` removes).
    """
    return to_csv_safe(edge_list(W, node_names), index=False)


def to_adjacency_csv(W, node_names=None):
    """CSV of the full ``(n_nodes, n_nodes)`` weighted adjacency (pandas).

    Parameters
    ----------
    W, node_names
        As in :func:`to_networkx`.

    Returns
    -------
    str
        Header row of node names, then one row per source node whose first
        field is its name: cell (i, j) is ``W[i, j]``, the weight of i -> j.
        Names are written by :func:`to_csv_safe`, as in
        :func:`to_edge_list_csv`.
    """
    A, names = check_named_adjacency(W, node_names)
    return to_csv_safe(pd.DataFrame(A, index=pd.Index(names, name="source"), columns=names))


def export_graph(W, node_names=None, fmt="graphml", **kwargs):
    """Export the graph in one of :data:`EXPORT_FORMATS`, as bytes.

    Parameters
    ----------
    W : array-like or pandas.DataFrame, shape (n_nodes, n_nodes)
        ``W[i, j] != 0`` means i -> j. Pass the thresholded DAG
        (``model.adjacency_``) for a clean picture; raw ``W_`` is exported as
        is (every nonzero weight is an edge).
    node_names : sequence of str, optional
    fmt : str, default "graphml"
        A key of :data:`EXPORT_FORMATS`.
    **kwargs
        Passed to the writer (e.g. ``weights=True`` for "dagitty",
        ``layout="spring"`` for "png"/"svg").

    Returns
    -------
    bytes
        UTF-8 text for text formats, the encoded image for "png"/"svg".

    Raises
    ------
    ValueError
        For an unknown format or bad ``W``/names.
    """
    writers = {
        "graphml": to_graphml,
        "dot": to_dot,
        "json": to_node_link_json,
        "dagitty": to_dagitty,
        "edges_csv": to_edge_list_csv,
        "adjacency_csv": to_adjacency_csv,
    }
    if fmt in ("png", "svg"):  # pictures are drawn by the render layer (matplotlib)
        from colide_core.render.picture import to_image

        return to_image(W, node_names, fmt=fmt, **kwargs)
    if fmt not in writers:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {sorted(EXPORT_FORMATS)}.")
    return writers[fmt](W, node_names, **kwargs).encode("utf-8")
