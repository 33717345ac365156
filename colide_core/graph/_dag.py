"""Graph helpers: acyclicity test and the post-processing that turns raw weights into a DAG.

Convention: ``W`` has shape ``(n_nodes, n_nodes)`` and ``W[i, j] != 0`` means the edge i -> j.
Graph algorithms come from networkx.
"""
from __future__ import annotations

import networkx as nx
import numpy as np

from colide_core._params import InvalidParameterError, is_real
from colide_core._validation import check_adjacency, check_square_matrix

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


def threshold_to_dag(W, threshold: float = 0.3, required=None, *, return_removed: bool = False):
    """Post-process raw weights into a DAG (the paper's Section 4 post-processing).

    First every weight with ``|w| <= threshold`` is set to zero. If the remaining graph still
    has a directed cycle, only edges that lie on a cycle are removed, each the weakest edge on a
    cycle (see Notes); an edge on no cycle is never removed, whatever its weight, and neither is
    a required edge. The result is therefore always a DAG.

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
    return_removed : bool, default=False
        Also return the edges removed to break cycles.

    Returns
    -------
    W_dag : ndarray of shape (n_nodes, n_nodes)
        A new array holding the surviving weights (diagonal always zero).
    removed : list of (int, int, float)
        Only with ``return_removed=True``: every edge ``(i, j, weight)`` that was above the
        threshold and was removed to break a cycle, strongest first. Empty when the thresholded
        graph was already a DAG.

    Raises
    ------
    ValueError
        If ``W`` is not a square matrix of real numbers, contains NaN/Inf, ``threshold`` is
        not a finite real number >= 0 (a string, a bool or None is refused:
        ``InvalidParameterError``, also a TypeError), ``required`` is not a finite
        ``(n_nodes, n_nodes)`` matrix, or the required edges alone form a directed cycle.

    Notes
    -----
    Only edges inside a strongly connected component (networkx) lie on a cycle; every other
    edge is kept as it is. Inside each component the required edges are taken first, then the
    others from the strongest to the weakest (ties: row-major order, so the result is
    deterministic). An edge is kept unless the edges already kept lead back from its head to its
    tail; it is then the weakest edge on that cycle, and is removed. Reachability inside a
    component of k nodes is kept as a k x k boolean matrix, so the cost is O(k^2) per kept edge.

    Examples
    --------
    A 2-cycle 0 <-> 1 loses its weaker edge; the edge 2 -> 3, weaker still but on no cycle,
    stays:

    >>> import numpy as np
    >>> W = np.zeros((4, 4)); W[0, 1], W[1, 0], W[2, 3] = 0.9, 0.6, 0.4
    >>> A, removed = threshold_to_dag(W, 0.3, return_removed=True)
    >>> [(int(i), int(j)) for i, j in zip(*np.nonzero(A))], removed
    ([(0, 1), (2, 3)], [(1, 0, 0.6)])
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
    removed = _break_cycles(A, keep & (A != 0))
    for i, j, _ in removed:
        A[i, j] = 0.0
    return (A, removed) if return_removed else A


def _break_cycles(A, keep):
    """The edges of ``A`` to remove so that it is acyclic (see :func:`threshold_to_dag`).

    Parameters
    ----------
    A : ndarray of shape (d, d)
        Thresholded weights, zero diagonal; not modified.
    keep : ndarray of bool of shape (d, d)
        Required edges (acyclic among themselves): never removed.

    Returns
    -------
    list of (int, int, float)
        The removed edges ``(i, j, A[i, j])``, strongest first.
    """
    G = nx.from_numpy_array((A != 0).astype(np.int8), create_using=nx.DiGraph)
    removed = []
    for comp in nx.strongly_connected_components(G):
        if len(comp) < 2:
            continue
        nodes = np.array(sorted(comp))
        sub = A[np.ix_(nodes, nodes)]
        sub_keep = keep[np.ix_(nodes, nodes)]
        rows, cols = np.nonzero(sub)
        # Required edges first, then the others strongest first (stable: row-major on ties).
        order = np.lexsort((-np.abs(sub[rows, cols]), ~sub_keep[rows, cols]))
        k = len(nodes)
        reach = np.eye(k, dtype=bool)  # reach[a, b]: a path a -> b among the kept edges
        for e in order:
            i, j = rows[e], cols[e]
            if reach[j, i]:  # kept edges already lead j -> ... -> i: i -> j closes a cycle
                removed.append((int(nodes[i]), int(nodes[j]), float(sub[i, j])))
            elif not reach[i, j]:
                reach |= np.outer(reach[:, i], reach[j, :])
    removed.sort(key=lambda e: (-abs(e[2]), e[0], e[1]))
    return removed


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
