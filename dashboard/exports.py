"""CSV exports of a learned graph (pure pandas; no Streamlit).

Convention: ``W[i, j] != 0`` means the edge i -> j.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["edge_list", "edge_list_csv", "adjacency_csv"]


def edge_list(W, names) -> pd.DataFrame:
    """Edges of a weighted adjacency as a table.

    Parameters
    ----------
    W : array-like of shape (n_nodes, n_nodes)
        ``W[i, j] != 0`` means i -> j.
    names : sequence of str
        Node names.

    Returns
    -------
    pandas.DataFrame
        Columns ``source``, ``target``, ``weight``; one row per nonzero entry, in row-major
        order.
    """
    A = np.asarray(W, dtype=float)
    rows, cols = np.nonzero(A)
    names = [str(n) for n in names]
    return pd.DataFrame({
        "source": [names[i] for i in rows],
        "target": [names[j] for j in cols],
        "weight": A[rows, cols],
    })


def edge_list_csv(W, names) -> str:
    """:func:`edge_list` as CSV text (``pandas.DataFrame.to_csv``, no index)."""
    return edge_list(W, names).to_csv(index=False)


def adjacency_csv(W, names) -> str:
    """The weighted adjacency as CSV text: rows = source, columns = target, labelled by name."""
    names = [str(n) for n in names]
    return pd.DataFrame(np.asarray(W, dtype=float), index=names, columns=names).to_csv(index_label="source")
