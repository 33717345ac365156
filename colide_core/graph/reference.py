"""A reference graph brought by the user for their own data ("against your reference").

:func:`read_reference` reads an uploaded file (an edge-list or adjacency CSV, GraphML, DOT,
node-link JSON or DAGitty model code, through :func:`colide_core.graph.export.read_graph`), matches
its node names to the data's columns and returns a 0/1 adjacency over the columns, so every
metric and curve that needs a truth can use it.

The file is hostile input: its size is bounded before it is parsed
(:data:`REFERENCE_MAX_BYTES`), it must be UTF-8, its node names go through the project's
name policy (:func:`colide_core._validation.check_node_names`: NFC, no control or invisible
characters), a name that is not a column is an error that lists it (shown with ``repr`` and
truncated), and the graph must be a DAG without self-loops. Every failure is a ``ValueError``
with a sentence, never a parser's traceback. GraphML is parsed by networkx with Python's
expat, which refuses entity-expansion bombs (expat >= 2.4).

Convention: ``B[i, j] != 0`` means i -> j.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from colide_core.graph._dag import is_dag
from colide_core._validation import _shown, check_node_names

__all__ = ["REFERENCE_MAX_BYTES", "REFERENCE_FORMATS", "Reference", "read_reference"]

#: Largest reference file accepted (bytes): 2 MB holds an edge list of ~50,000 edges.
REFERENCE_MAX_BYTES = 2_000_000
#: File extension -> format of :func:`colide_core.graph.export.read_graph` ("csv" is sniffed).
REFERENCE_FORMATS = {
    ".csv": "csv", ".txt": "dagitty", ".dagitty": "dagitty", ".graphml": "graphml", ".xml": "graphml",
    ".dot": "dot", ".gv": "dot", ".json": "json",
}


@dataclass(frozen=True, eq=False)
class Reference:
    """A reference graph matched to the data's columns.

    Attributes
    ----------
    B : pandas.DataFrame of shape (n_nodes, n_nodes)
        0/1 adjacency over the data's columns (index and columns are the column names), in
        their order; ``B.loc[a, b] == 1`` means a -> b.
    fmt : str
        The format read.
    n_edges : int
    unmentioned : list of str
        Columns the file does not mention (taken as nodes without edges).
    """

    B: pd.DataFrame
    fmt: str
    n_edges: int
    unmentioned: list


def _listed(names, k=8):
    shown = ", ".join(_shown(n) for n in names[:k])
    return shown + (f" and {len(names) - k} more" if len(names) > k else "")


def read_reference(data, filename, node_names, *, max_bytes=REFERENCE_MAX_BYTES) -> Reference:
    """Read a reference graph file and match it to the data's columns.

    Parameters
    ----------
    data : bytes
        The file's content.
    filename : str
        Its name; the extension picks the format (:data:`REFERENCE_FORMATS`). A ``.csv`` with a
        header holding ``source`` and ``target`` is an edge list, any other ``.csv`` an
        adjacency matrix with names in the first row and column.
    node_names : sequence of str
        The data's column names.
    max_bytes : int, default=REFERENCE_MAX_BYTES

    Returns
    -------
    Reference

    Raises
    ------
    ValueError
        (``colide_core.data.io.DataValidationError`` for an empty or too large file) If the file is
        too large, empty, not UTF-8, of an unknown extension, cannot be parsed in its format,
        has a node name refused by the name policy or not among the columns, a self-loop, or a
        directed cycle.
    """
    from colide_core.graph.export import UnknownNodesError, read_graph
    from colide_core.data.readers import check_file

    raw = check_file(data, max_bytes=int(max_bytes))
    name = str(filename)
    ext = ("." + name.rsplit(".", 1)[-1].lower()) if "." in name else ""
    fmt = REFERENCE_FORMATS.get(ext)
    if fmt is None:
        raise ValueError(f"Unknown reference file type {_shown(ext or name)}: use an edge-list or adjacency "
                         ".csv, .graphml, .dot, .json or a DAGitty model (.txt or .dagitty).")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"The reference file is not UTF-8 text (byte {exc.start}).") from None
    if fmt == "csv":
        header = text.lstrip().split("\n", 1)[0].lower()
        fmt = "edges_csv" if ("source" in header and "target" in header) else "adjacency_csv"
    columns = [str(c) for c in node_names]
    try:  # names are matched to the columns while the file is read (bounded work)
        G = read_graph(text, fmt, nodes=columns)
    except UnknownNodesError as exc:
        check_node_names(exc.names, what="node")  # a name the policy refuses says so first
        some = "at least 9" if len(exc.names) > 8 else str(len(exc.names))
        raise ValueError(f"The reference names {some} node(s) that are not columns of the data: "
                         f"{_listed(exc.names)}. The data's columns are {_listed(columns)}.") from None
    except ValueError as exc:
        raise ValueError(f"The reference file could not be read as {fmt.replace('_', ' ')}: {exc}") from None
    ref_names = check_node_names(list(G.index), what="node")
    A = G.to_numpy(dtype=float) != 0
    if np.any(np.diag(A)):
        k = int(np.flatnonzero(np.diag(A))[0])
        raise ValueError(f"The reference has a self-loop on {_shown(ref_names[k])}: a DAG has none.")
    pos = {n: k for k, n in enumerate(columns)}
    B = np.zeros((len(columns), len(columns)), dtype=int)
    for i, j in zip(*np.nonzero(A)):
        B[pos[ref_names[i]], pos[ref_names[j]]] = 1
    if not is_dag(B):
        raise ValueError("The reference graph has a directed cycle: metrics need a DAG.")
    mentioned = set(ref_names)
    return Reference(B=pd.DataFrame(B, index=columns, columns=columns), fmt=fmt, n_edges=int(B.sum()),
                     unmentioned=[c for c in columns if c not in mentioned])
