"""Graph helpers: acyclicity test and the post-processing that turns raw weights into a DAG.

Convention: ``W`` has shape ``(n_nodes, n_nodes)`` and ``W[i, j] != 0`` means the edge i -> j.
Graph algorithms come from networkx.
"""
from __future__ import annotations

import networkx as nx
import numpy as np

from ._params import InvalidParameterError, is_real
from ._validation import check_adjacency, check_square_matrix

__all__ = ["is_dag", "threshold_to_dag", "classify_edges", "EDGE_KINDS"]


def is_dag(W) -> bool:
    """Return True when the directed graph with adjacency ``W`` has no directed cycle.

    Parameters
    ----------
    W : array-like of shape (n_nodes, n_nodes)
        Weighted or binary adjacency; ``W[i, j] != 0`` means i -> j. A nonzero diagonal
        entry is a self-loop and therefore a cycle.

    Returns
    -------
    bool

    Raises
    ------
    ValueError
        If ``W`` is not a square matrix of real numbers or contains NaN/Inf.

    Notes
    -----
    Uses :func:`networkx.is_directed_acyclic_graph`.
    """
    A = check_square_matrix(W, "W")
    G = nx.from_numpy_array((A != 0).astype(np.int8), create_using=nx.DiGraph)
    return nx.is_directed_acyclic_graph(G)


def threshold_to_dag(W, threshold: float = 0.3, required=None) -> np.ndarray:
    """Post-process raw weights into a DAG (the paper's Section 4 post-processing).

    First every weight with ``|w| <= threshold`` is set to zero. If the remaining graph still
    has a directed cycle, the smallest-magnitude edges are dropped, smallest first, until it
    is acyclic. The result is therefore always a DAG.

    Parameters
    ----------
    W : array-like of shape (n_nodes, n_nodes)
        Raw weights, ``W[i, j] != 0`` meaning i -> j. Not modified.
    threshold : float, default=0.3
        Non-negative magnitude threshold (same units as the weights). The paper uses 0.3.
    required : array-like of bool of shape (n_nodes, n_nodes), optional
        Edges that prior knowledge requires (nonzero entries): they are never removed, whatever
        their weight (a required edge whose weight is exactly zero stays absent). Only the other
        edges are thresholded and dropped.

    Returns
    -------
    W_dag : ndarray of shape (n_nodes, n_nodes)
        A new array holding the surviving weights (diagonal always zero).

    Raises
    ------
    ValueError
        If ``W`` is not a square matrix of real numbers, contains NaN/Inf, ``threshold`` is
        not a finite real number >= 0 (a string, a bool or None is refused:
        ``InvalidParameterError``, also a TypeError), ``required`` is not a finite ``(n_nodes, n_nodes)`` matrix, or the
        required edges alone form a directed cycle.

    Notes
    -----
    Acyclicity is monotone under edge removal, so the number of smallest edges to drop is found
    by bisection over the edges sorted by magnitude: O(log E) acyclicity checks
    (networkx) instead of one check per dropped edge. Ties in magnitude are broken by a stable
    sort on the row-major edge index, so the result is deterministic.
    """
    if not (is_real(threshold) and np.isfinite(threshold) and threshold >= 0):  # no bools, strings, None
        raise InvalidParameterError(f"threshold must be a finite number >= 0, got {threshold!r}.")
    threshold = float(threshold)
    A = check_square_matrix(W, "W").copy()
    np.fill_diagonal(A, 0.0)
    keep = np.zeros(A.shape, dtype=bool)
    if required is not None:
        keep = check_adjacency(required, A.shape[0], "required") != 0
        if not is_dag(keep & (A != 0)):
            raise ValueError("The required edges form a directed cycle; no DAG can contain them all.")
    A[(np.abs(A) <= threshold) & ~keep] = 0.0
    if is_dag(A):
        return A
    rows, cols = np.nonzero((A != 0) & ~keep)
    req_rows, req_cols = np.nonzero((A != 0) & keep)
    order = np.argsort(np.abs(A[rows, cols]), kind="stable")
    rows, cols = rows[order], cols[order]
    d = A.shape[0]

    def dag_without_first(k):
        G = nx.DiGraph()
        G.add_nodes_from(range(d))
        G.add_edges_from(zip(req_rows.tolist(), req_cols.tolist()))
        G.add_edges_from(zip(rows[k:].tolist(), cols[k:].tolist()))
        return nx.is_directed_acyclic_graph(G)

    lo, hi = 0, len(rows)  # dropping all edges always gives a DAG; dropping none does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if dag_without_first(mid):
            hi = mid
        else:
            lo = mid
    A[rows[:hi], cols[:hi]] = 0.0
    return A


#: Labels of :func:`classify_edges`, in drawing / legend order.
EDGE_KINDS = ("correct", "reversed", "extra", "missing", "learned")


def classify_edges(W, B_true=None) -> list[tuple[int, int, str]]:
    """Label every edge of an estimate against the truth: correct / reversed / extra / missing.

    The one implementation of edge truth labelling (the graph views, the edge-confidence figure
    and tables use it).

    Parameters
    ----------
    W : array-like of shape (n_nodes, n_nodes)
        Estimated (thresholded) adjacency, ``W[i, j] != 0`` means i -> j; the diagonal is ignored.
    B_true : array-like of shape (n_nodes, n_nodes), optional
        Ground truth DAG, nonzero = edge.

    Returns
    -------
    list of (i, j, kind)
        First every estimated edge i -> j in row-major order, with kind "correct" (``B_true`` has
        i -> j), "reversed" (``B_true`` has j -> i instead) or "extra" (neither); then every true
        edge i -> j found in neither direction, kind "missing". Without ``B_true`` every
        estimated edge is "learned".

    Raises
    ------
    ValueError
        If ``W`` or ``B_true`` is not a finite square matrix, or their shapes differ.

    Notes
    -----
    A reversed edge is one "reversed" entry (not an extra plus a missing one), matching how
    :func:`colide_core.evaluate`'s SHD counts it once.
    """
    A = check_square_matrix(W, "W") != 0
    np.fill_diagonal(A, False)
    if B_true is None:
        return [(int(i), int(j), "learned") for i, j in zip(*np.nonzero(A))]
    B = check_square_matrix(B_true, "B_true") != 0
    if B.shape != A.shape:
        raise ValueError(f"B_true has shape {B.shape}, expected {A.shape}.")
    edges = []
    for i, j in zip(*np.nonzero(A)):
        kind = "correct" if B[i, j] else ("reversed" if B[j, i] else "extra")
        edges.append((int(i), int(j), kind))
    edges += [(int(i), int(j), "missing") for i, j in zip(*np.nonzero(B)) if not A[i, j] and not A[j, i]]
    return edges
