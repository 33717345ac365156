"""Exports of a learned graph: GraphML, DOT, node-link JSON, DAGitty, CSV, PNG/SVG.

Every exporter takes a weighted adjacency ``W`` of shape ``(n_nodes, n_nodes)``
where ``W[i, j] != 0`` means the edge i -> j with weight ``W[i, j]``, plus
optional node names (taken from ``W``'s columns when it is a DataFrame).

Libraries (no hand-written serialisers for standard formats):

* GraphML and node-link JSON: :mod:`networkx` (``generate_graphml``,
  ``node_link_data``), read back with ``parse_graphml``/``node_link_graph``;
* DOT: :func:`networkx.drawing.nx_pydot.to_pydot` (the ``pydot`` package,
  pinned in requirements.txt; no Graphviz binary is needed to *write* DOT);
* CSV: :mod:`pandas`;
* pictures: ``networkx.draw_networkx`` on a :class:`matplotlib.figure.Figure`
  rendered by the Agg/SVG backends, without :mod:`matplotlib.pyplot` (no global
  figure state, safe in threads and headless servers);
* DAGitty: the model string is a tiny text format (``dag { a -> b }``,
  https://www.dagitty.net/manual-3.x.pdf) with no Python writer, so it is built
  here, quoting names that are not plain identifiers.

:data:`EXPORT_FORMATS` lists every format with its file extension and MIME
type; :func:`export_graph` dispatches on it and always returns ``bytes``, which
is what a download button needs.
"""
from __future__ import annotations

import io
import json
import re

import networkx as nx
import numpy as np
import pandas as pd

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
    "to_image",
    "read_graph",
]

#: format name -> (file extension, MIME type)
EXPORT_FORMATS = {
    "graphml": (".graphml", "application/xml"),
    "dot": (".dot", "text/vnd.graphviz"),
    "json": (".json", "application/json"),
    "dagitty": (".dagitty.txt", "text/plain"),
    "edges_csv": ("_edges.csv", "text/csv"),
    "adjacency_csv": ("_adjacency.csv", "text/csv"),
    "png": (".png", "image/png"),
    "svg": (".svg", "image/svg+xml"),
}


def _coerce(W, node_names=None):
    """Return (float ndarray (d,d) copy, list of d str names)."""
    names_from_frame = None
    if isinstance(W, pd.DataFrame):
        names_from_frame = [str(c) for c in W.columns]
        index = [str(i) for i in W.index]
        if index != names_from_frame and not all(i == str(k) for k, i in enumerate(index)):
            raise ValueError("W as a DataFrame must have the same index and columns (node names).")
        W = W.to_numpy()
    try:
        A = np.array(W, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"W must be a numeric matrix: {exc}") from None
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"W must be a square (n_nodes, n_nodes) matrix, got shape {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError("W contains NaN or Inf.")
    d = A.shape[0]
    if node_names is None:
        names = names_from_frame if names_from_frame is not None else [f"X{i}" for i in range(d)]
    else:
        names = [str(x) for x in node_names]
    if len(names) != d:
        raise ValueError(f"got {len(names)} node names for {d} nodes.")
    if len(set(names)) != d:
        raise ValueError("node names must be unique.")
    return A, names


def to_networkx(W, node_names=None):
    """Build a :class:`networkx.DiGraph` from a weighted adjacency.

    Parameters
    ----------
    W : array-like or pandas.DataFrame, shape (n_nodes, n_nodes)
        ``W[i, j] != 0`` means the edge i -> j; the value becomes the edge
        attribute ``weight`` (float). A DataFrame supplies node names.
    node_names : sequence of str, optional
        One unique name per node; default the DataFrame columns or
        ``X0, X1, ...``.

    Returns
    -------
    networkx.DiGraph
        Nodes in the order of ``W``'s rows (isolated nodes included), edges in
        row-major order.

    Raises
    ------
    ValueError
        If ``W`` is not a finite square matrix or the names do not fit.
    """
    A, names = _coerce(W, node_names)
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
    """Graphviz DOT text (networkx ``nx_pydot.to_pydot``, package pydot).

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
        A ``digraph`` in DOT syntax; pydot quotes names as needed.
    """
    G = to_networkx(W, node_names)
    for _, _, data in G.edges(data=True):
        data["label"] = f"{data['weight']:.{decimals}f}"
    return nx.nx_pydot.to_pydot(G).to_string()


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


_DAGITTY_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def _dagitty_name(name):
    if _DAGITTY_PLAIN.match(name):
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


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
        ``a -> b`` line per edge. Names that are not plain identifiers are
        double-quoted with backslash escapes.

    Notes
    -----
    Format: DAGitty manual, "model code" (dagitty.net/manual-3.x.pdf).
    """
    A, names = _coerce(W, node_names)
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
    A, names = _coerce(W, node_names)
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
        float precision.
    """
    return edge_list(W, node_names).to_csv(index=False)


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
    """
    A, names = _coerce(W, node_names)
    return pd.DataFrame(A, index=pd.Index(names, name="source"), columns=names).to_csv()


def to_image(W, node_names=None, *, fmt="png", layout="circular", dpi=150, figsize=(6, 6),
             seed=0, decimals=2):
    """Picture of the graph as PNG or SVG bytes (networkx drawing + matplotlib Agg).

    Parameters
    ----------
    W, node_names
        As in :func:`to_networkx`.
    fmt : {"png", "svg"}, default "png"
    layout : {"circular", "spring", "kamada_kawai", "shell"}, default "circular"
        networkx layout; "spring" uses ``seed`` so pictures are reproducible.
    dpi : int, default 150
        Resolution for PNG.
    figsize : tuple of float, default (6, 6)
        Figure size in inches.
    seed : int, default 0
        Seed of the spring layout.
    decimals : int, default 2
        Edge labels show weights rounded to this many decimals; positive
        weights are drawn in blue, negative in red.

    Returns
    -------
    bytes
        The encoded image.

    Raises
    ------
    ValueError
        For an unknown format or layout.
    """
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if fmt not in ("png", "svg"):
        raise ValueError(f"fmt must be 'png' or 'svg', got {fmt!r}.")
    G = to_networkx(W, node_names)
    layouts = {
        "circular": lambda: nx.circular_layout(G),
        "spring": lambda: nx.spring_layout(G, seed=seed),
        "kamada_kawai": lambda: nx.kamada_kawai_layout(G) if len(G) > 1 else nx.circular_layout(G),
        "shell": lambda: nx.shell_layout(G),
    }
    if layout not in layouts:
        raise ValueError(f"layout must be one of {sorted(layouts)}, got {layout!r}.")
    pos = layouts[layout]()
    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_axis_off()
    weights = [d["weight"] for _, _, d in G.edges(data=True)]
    colors = ["tab:blue" if w > 0 else "tab:red" for w in weights]
    nx.draw_networkx_nodes(G, pos, ax=ax, node_color="#f0f0f0", edgecolors="#333333", node_size=900)
    nx.draw_networkx_labels(G, pos, ax=ax, font_size=9)
    nx.draw_networkx_edges(G, pos, ax=ax, edge_color=colors, arrows=True, arrowsize=15,
                           node_size=900, width=1.5)
    if weights:
        nx.draw_networkx_edge_labels(
            G, pos, ax=ax, font_size=7,
            edge_labels={(u, v): f"{d['weight']:.{decimals}f}" for u, v, d in G.edges(data=True)})
    fig.tight_layout()
    buf = io.BytesIO()
    # Fixed metadata and SVG id salt keep the bytes reproducible (no date, no random ids).
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    with matplotlib.rc_context({"svg.hashsalt": "colide-dashboard"}):
        fig.savefig(buf, format=fmt, dpi=dpi, metadata=metadata)
    return buf.getvalue()


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
    if fmt in ("png", "svg"):
        return to_image(W, node_names, fmt=fmt, **kwargs)
    if fmt not in writers:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {sorted(EXPORT_FORMATS)}.")
    return writers[fmt](W, node_names, **kwargs).encode("utf-8")


def _graph_to_frame(G):
    names = [str(n) for n in G.nodes]
    idx = {n: k for k, n in enumerate(G.nodes)}
    A = np.zeros((len(names), len(names)))
    for u, v, data in G.edges(data=True):
        A[idx[u], idx[v]] = float(data.get("weight", 1.0))
    return pd.DataFrame(A, index=names, columns=names)


def read_graph(data, fmt):
    """Read an exported graph back into a weighted adjacency DataFrame.

    Parameters
    ----------
    data : bytes or str
        The file content as written by :func:`export_graph`.
    fmt : {"graphml", "json", "edges_csv", "adjacency_csv"}
        Format of ``data``. GraphML and JSON are parsed by networkx, CSV by
        pandas.

    Returns
    -------
    pandas.DataFrame, shape (n_nodes, n_nodes)
        Index and columns are the node names; cell (i, j) is the weight of
        i -> j (1.0 when the file has no weights). For "edges_csv", nodes
        without edges cannot be recovered.

    Raises
    ------
    ValueError
        If the content cannot be parsed in that format, or the graph is
        undirected or has parallel edges.
    """
    text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else str(data)
    try:
        if fmt == "graphml":
            G = nx.parse_graphml(text)
        elif fmt == "json":
            G = nx.node_link_graph(json.loads(text), edges="edges")
        elif fmt == "edges_csv":
            df = pd.read_csv(io.StringIO(text), dtype={"source": str, "target": str})
            missing = {"source", "target"} - set(df.columns)
            if missing:
                raise ValueError(f"edge list lacks columns {sorted(missing)}")
            G = nx.DiGraph()
            weights = df["weight"] if "weight" in df.columns else [1.0] * len(df)
            G.add_weighted_edges_from(zip(df["source"], df["target"], weights))
        elif fmt == "adjacency_csv":
            df = pd.read_csv(io.StringIO(text), index_col=0)
            df.index = [str(i) for i in df.index]
            df.columns = [str(c) for c in df.columns]
            if list(df.index) != list(df.columns):
                raise ValueError("row names and column names differ")
            return df.astype(float)
        else:
            raise ValueError(f"cannot read format {fmt!r}; choose graphml, json, edges_csv or adjacency_csv")
    except ValueError:
        raise
    except Exception as exc:  # parser-specific errors (XML, JSON, KeyError) -> one clear type
        raise ValueError(f"could not read the {fmt} graph: {exc}") from None
    if not G.is_directed() or G.is_multigraph():
        raise ValueError(f"the {fmt} graph must be a simple directed graph")
    return _graph_to_frame(G)
