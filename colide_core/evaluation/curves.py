"""Curves instead of one operating point: ROC / precision-recall of |W|, metrics over the threshold,
and the λ x threshold grid (edges, BIC, stable region) when there is no ground truth.

Conventions: ``W`` and graphs have shape ``(n_nodes, n_nodes)`` and ``W[i, j] != 0`` means the
edge i -> j; metrics take ``(B_true, W)`` in that order. ``B_true`` may be a simulation's ground
truth or a reference graph the user uploaded ("against your reference").

* :func:`edge_score_curves`: every ordered pair (i, j), i != j, is a candidate edge scored by
  ``|W[i, j]|`` and labelled by ``B_true[i, j] != 0``; ROC and precision-recall curves, AUROC
  and AUPRC come from :mod:`sklearn.metrics` (``roc_curve``, ``precision_recall_curve``,
  ``roc_auc_score``, ``average_precision_score``).
* :func:`threshold_curve`: the graph at every threshold that changes it
  (:func:`colide_core.threshold_to_dag`, the paper's post-processing) with its SHD, TPR, FDR
  and Tetrad's adjacency / arrowhead precision and recall
  (:func:`colide_core.evaluation._metrics.tetrad_metrics`).
* :func:`curves_on_grid` and :func:`bands_over_seeds`: one fit's ROC and precision-recall
  curves read off fixed grids (so that runs on different seeds can be averaged), and their
  mean ± std over seeds (the Compare page's bands).
* :func:`stable_region`: on a :class:`colide_core.solver.path.LambdaPath`, the cells of the
  λ x threshold grid that give one and the same graph, grouped into connected plateaus; the
  largest plateau is "the stable region".
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from colide_core.graph._dag import is_dag, threshold_to_dag
from colide_core.evaluation._metrics import _edge_metrics, tetrad_metrics
from colide_core._params import InvalidParameterError, is_int
from colide_core._validation import check_square_matrix

__all__ = ["EdgeScoreCurves", "edge_score_curves", "threshold_curve", "StableRegion", "stable_region",
           "MAX_CURVE_POINTS", "CURVE_GRID", "curves_on_grid", "bands_over_seeds"]

#: Most thresholds evaluated by :func:`threshold_curve` (quantiles of |W| beyond that).
MAX_CURVE_POINTS = 400


@dataclass(frozen=True)
class EdgeScoreCurves:
    """ROC and precision-recall curves of ``|W|`` as an edge score.

    Attributes
    ----------
    fpr, tpr, roc_thresholds : ndarray
        From :func:`sklearn.metrics.roc_curve`.
    precision, recall, pr_thresholds : ndarray
        From :func:`sklearn.metrics.precision_recall_curve`.
    auroc : float
        :func:`sklearn.metrics.roc_auc_score` (nan when the truth has no edge or every pair is an edge).
    auprc : float
        :func:`sklearn.metrics.average_precision_score` (nan when the truth has no edge).
    n_pos, n_neg : int
        True edges and non-edges among the ``d (d - 1)`` ordered pairs.
    """

    fpr: np.ndarray
    tpr: np.ndarray
    roc_thresholds: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    pr_thresholds: np.ndarray
    auroc: float
    auprc: float
    n_pos: int
    n_neg: int


def _truth_and_weights(B_true, W):
    """``(T, Wa)``: the truth as bool and the weights as float, both (d, d), in position order."""
    T = check_square_matrix(B_true.to_numpy() if hasattr(B_true, "to_numpy") else B_true, "B_true",
                            what="adjacency matrix") != 0
    Wa = check_square_matrix(W.to_numpy() if hasattr(W, "to_numpy") else W, "W", copy=True)
    if Wa.shape != T.shape:
        raise ValueError(f"B_true and W must have the same shape, got {T.shape} and {Wa.shape}.")
    return T, Wa


def _pairs(B_true, W):
    T, Wa = _truth_and_weights(B_true, W)
    off = ~np.eye(T.shape[0], dtype=bool)
    return T[off].astype(int), np.abs(Wa[off])


def edge_score_curves(B_true, W) -> EdgeScoreCurves:
    """ROC and precision-recall of ``|W[i, j]|`` as a score for "i -> j is a true edge".

    Parameters
    ----------
    B_true : array-like of shape (n_nodes, n_nodes)
        The truth (or a reference graph), nonzero = edge, in the same node order as ``W``.
    W : array-like of shape (n_nodes, n_nodes)
        Raw learned weights (before thresholding, so every pair has a score).

    Returns
    -------
    EdgeScoreCurves

    Raises
    ------
    ValueError
        If the shapes differ or an input is not a finite square matrix.

    Notes
    -----
    A reversed edge scores its own pair (j -> i is a negative); AUPRC is scikit-learn's average
    precision (the step-wise area, not the trapezoid).
    """
    from sklearn.metrics import average_precision_score, precision_recall_curve, roc_auc_score, roc_curve

    y, s = _pairs(B_true, W)
    n_pos = int(y.sum())
    n_neg = int(y.size - n_pos)
    if n_pos == 0 or n_neg == 0:
        nan = np.array([math.nan])
        return EdgeScoreCurves(nan, nan, nan, nan, nan, nan, math.nan, math.nan, n_pos, n_neg)
    fpr, tpr, rt = roc_curve(y, s)
    prec, rec, pt = precision_recall_curve(y, s)
    return EdgeScoreCurves(fpr, tpr, rt, prec, rec, pt, float(roc_auc_score(y, s)),
                           float(average_precision_score(y, s)), n_pos, n_neg)


#: The grid (101 points, 0 to 1) on which :func:`curves_on_grid` reads ROC (FPR) and
#: precision-recall (recall) curves.
CURVE_GRID = np.linspace(0.0, 1.0, 101)


def curves_on_grid(B_true, W, grid=None) -> dict:
    """ROC and precision-recall of ``|W|`` read off a fixed grid, with AUROC and AUPRC.

    Curves of different fits (seeds) have their points at different places; on one grid they can
    be averaged (:func:`bands_over_seeds`). Small enough to keep in a result row.

    Parameters
    ----------
    B_true : array-like of shape (n_nodes, n_nodes)
        The truth, nonzero = edge (``B_true[i, j] != 0`` means i -> j).
    W : array-like of shape (n_nodes, n_nodes)
        Edge scores: the raw learned weights (their absolute value is the score).
    grid : array-like of shape (n_points,), optional
        Increasing values in [0, 1]; default :data:`CURVE_GRID`.

    Returns
    -------
    dict
        ``auroc``, ``auprc`` (floats, from :func:`edge_score_curves`: scikit-learn),
        ``roc_tpr``: at each grid FPR value g, the largest TPR of a point of scikit-learn's
        ``roc_curve`` with FPR <= g (the best true-positive rate reachable at that false-positive
        rate by a threshold on |W|); ``pr_precision``: at each grid recall value r, the largest
        precision of a point of ``precision_recall_curve`` with recall >= r (the interpolated
        precision of information retrieval). Both lists of floats of the grid's length; all NaN
        when the truth has no edge or no non-edge.

    Raises
    ------
    ValueError
        As :func:`edge_score_curves`, or for a grid outside [0, 1] or not increasing.
    """
    g = CURVE_GRID if grid is None else np.asarray(grid, dtype=float)
    if g.ndim != 1 or g.size == 0 or not np.all(np.isfinite(g)) or g[0] < 0 or g[-1] > 1 or np.any(np.diff(g) <= 0):
        raise ValueError("grid must be increasing values in [0, 1].")
    c = edge_score_curves(B_true, W)
    if math.isnan(c.auroc):
        nan = [math.nan] * g.size
        return {"auroc": math.nan, "auprc": math.nan, "roc_tpr": nan, "pr_precision": list(nan)}
    # roc_curve: fpr non-decreasing from 0; the best TPR at FPR <= g
    best_tpr = np.maximum.accumulate(c.tpr)
    roc = best_tpr[np.searchsorted(c.fpr, g, side="right") - 1]
    # precision_recall_curve: recall non-increasing down to 0; the best precision at recall >= r
    order = np.argsort(c.recall, kind="stable")
    rec, prec = c.recall[order], c.precision[order]
    best_prec = np.maximum.accumulate(prec[::-1])[::-1]  # max over recall >= rec[k]
    pr = best_prec[np.searchsorted(rec, g, side="left")]
    return {"auroc": c.auroc, "auprc": c.auprc, "roc_tpr": roc.astype(float).tolist(),
            "pr_precision": pr.astype(float).tolist()}


def bands_over_seeds(curves, grid=None) -> pd.DataFrame:
    """Mean ± standard deviation over seeds of curves read off one grid.

    Parameters
    ----------
    curves : sequence of dict
        One :func:`curves_on_grid` result per seed (of one method), on the same grid.
    grid : array-like of shape (n_points,), optional
        That grid; default :data:`CURVE_GRID`.

    Returns
    -------
    pandas.DataFrame
        One row per grid point: ``grid``, ``tpr_mean``, ``tpr_std``, ``precision_mean``,
        ``precision_std``; and in ``.attrs``: ``auroc_mean``, ``auroc_std``, ``auprc_mean``,
        ``auprc_std``, ``n_seeds``. The std has ddof = 1 (the spread of the seeds as a sample;
        0 for a single seed); seeds whose curves are NaN (a truth without edges) are left out.

    Raises
    ------
    ValueError
        If a curve's length differs from the grid's.
    """
    g = CURVE_GRID if grid is None else np.asarray(grid, dtype=float)
    ok = [c for c in curves if not math.isnan(float(c["auroc"]))]
    for c in ok:
        if len(c["roc_tpr"]) != g.size or len(c["pr_precision"]) != g.size:
            raise ValueError(f"every curve must have the grid's {g.size} points.")

    def stats(values):
        A = np.asarray(values, dtype=float)
        if A.shape[0] == 0:
            return np.full(A.shape[1:] or (), math.nan), np.full(A.shape[1:] or (), math.nan)
        return A.mean(axis=0), (A.std(axis=0, ddof=1) if A.shape[0] > 1 else np.zeros(A.shape[1:]))

    tpr_m, tpr_s = stats(np.reshape([c["roc_tpr"] for c in ok], (len(ok), g.size)))
    pr_m, pr_s = stats(np.reshape([c["pr_precision"] for c in ok], (len(ok), g.size)))
    out = pd.DataFrame({"grid": g, "tpr_mean": tpr_m, "tpr_std": tpr_s,
                        "precision_mean": pr_m, "precision_std": pr_s})
    for name in ("auroc", "auprc"):
        m, sd = stats([float(c[name]) for c in ok])
        out.attrs[f"{name}_mean"], out.attrs[f"{name}_std"] = float(m), float(sd)
    out.attrs["n_seeds"] = len(ok)
    return out


def threshold_curve(B_true, W, *, required=None, max_points=MAX_CURVE_POINTS) -> pd.DataFrame:
    """Metrics of the thresholded graph at every threshold that changes it.

    Parameters
    ----------
    B_true : array-like of shape (n_nodes, n_nodes)
        The truth (or a reference graph), nonzero = edge, a DAG.
    W : array-like of shape (n_nodes, n_nodes)
        Raw learned weights.
    required : array-like of bool of shape (n_nodes, n_nodes), optional
        Edges kept whatever their weight (prior knowledge), as in
        :func:`colide_core.threshold_to_dag`.
    max_points : int in [2, MAX_CURVE_POINTS], default=MAX_CURVE_POINTS
        Most thresholds; with more distinct |w| values, quantiles of them are used.

    Returns
    -------
    pandas.DataFrame
        One row per threshold, increasing: ``threshold``, ``edges``, ``shd``, ``tpr``, ``fdr``,
        ``adjacency_precision``, ``adjacency_recall``, ``arrowhead_precision``,
        ``arrowhead_recall``. The first row (threshold 0) keeps every nonzero weight, the last
        (the largest |w|) keeps none but the required edges.

    Raises
    ------
    ValueError
        If the shapes differ, ``B_true`` is not a DAG or an input is not finite.
    """
    if not (is_int(max_points) and 2 <= max_points <= MAX_CURVE_POINTS):
        raise InvalidParameterError(f"max_points must be an integer in [2, {MAX_CURVE_POINTS}], got {max_points!r}.")
    T, Wa = _truth_and_weights(B_true, W)
    if not is_dag(T):
        raise ValueError("B_true must be a DAG (no directed cycles, zero diagonal).")
    np.fill_diagonal(Wa, 0.0)
    mags = np.unique(np.abs(Wa[Wa != 0]))
    # keeping |w| > t: t = 0 keeps everything, t = each magnitude drops it and all smaller ones
    ts = np.concatenate([[0.0], mags])
    if ts.size > max_points:
        ts = np.unique(np.quantile(ts, np.linspace(0.0, 1.0, max_points), method="lower"))
    rows = []
    for t in ts:
        E = threshold_to_dag(Wa, float(t), required=required) != 0
        m = _edge_metrics(T, E)
        row = {"threshold": float(t), "edges": int(E.sum()), "shd": m["shd"], "tpr": m["tpr"],
               "fdr": m["fdr"]}
        row.update(tetrad_metrics(T, E))
        rows.append(row)
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class StableRegion:
    """Plateaus of the λ x threshold grid: connected cells that give the same graph.

    Attributes
    ----------
    labels : ndarray of int of shape (n_lambdas, n_thresholds)
        Plateau id of each cell (cells with the same id have the identical graph and are joined
        through left/right/up/down neighbours with that graph).
    sizes : ndarray of int
        Number of cells of each plateau id.
    largest : int
        Id of the largest plateau (ties: the one with fewer edges, then the lower BIC).
    mask : ndarray of bool of shape (n_lambdas, n_thresholds)
        Cells of the largest plateau: "the stable region".
    best_bic : tuple of int
        ``(i_lambda, i_threshold)`` of the lowest BIC (:meth:`LambdaPath.best_bic`).
    best_bic_stable : bool
        Whether that cell lies in the stable region.
    summary : str
    """

    labels: np.ndarray
    sizes: np.ndarray
    largest: int
    mask: np.ndarray
    best_bic: tuple
    best_bic_stable: bool
    summary: str


def stable_region(path) -> StableRegion:
    """Group the cells of a λ path's grid into plateaus of one graph and mark the largest.

    Parameters
    ----------
    path : colide_core.solver.path.LambdaPath

    Returns
    -------
    StableRegion

    Notes
    -----
    A graph that stays the same over a wide range of λ and of the threshold depends little on
    those settings; a graph seen at a single cell is a knife-edge choice. Plateaus are the
    connected components (4-neighbourhood, networkx) of the cells grouped by identical graph.
    """
    import networkx as nx

    adj = np.asarray(path.adjacency) != 0
    n_l, n_t = adj.shape[:2]
    keys = {}
    gid = np.empty((n_l, n_t), dtype=int)
    for i in range(n_l):
        for j in range(n_t):
            gid[i, j] = keys.setdefault(np.packbits(adj[i, j]).tobytes(), len(keys))
    G = nx.grid_2d_graph(n_l, n_t)
    G.remove_edges_from([(a, b) for a, b in G.edges if gid[a] != gid[b]])
    labels = np.empty((n_l, n_t), dtype=int)
    comps = list(nx.connected_components(G))
    for k, comp in enumerate(comps):
        for cell in comp:
            labels[cell] = k
    sizes = np.array([len(c) for c in comps])
    edges = np.asarray(path.edge_counts)
    bic = np.asarray(path.bic)

    def key(k):
        cell = next(iter(comps[k]))
        return (-sizes[k], int(edges[cell]), float(bic[cell]))

    largest = min(range(len(comps)), key=key)
    mask = labels == largest
    best = path.best_bic()
    cell = next(iter(comps[largest]))
    lam_in = np.asarray(path.lambdas)[mask.any(axis=1)]
    thr_in = np.asarray(path.thresholds)[mask.any(axis=0)]
    summary = (f"The largest plateau covers {int(sizes[largest])} of {n_l * n_t} (λ, threshold) cells with "
               f"one graph of {int(edges[cell])} edges (λ from {lam_in.min():g} to {lam_in.max():g}, "
               f"threshold from {thr_in.min():g} to {thr_in.max():g}). The lowest BIC is at λ = "
               f"{path.lambdas[best[0]]:g}, threshold {path.thresholds[best[1]]:g} "
               f"({int(edges[best])} edges), {'inside' if mask[best] else 'outside'} that plateau.")
    return StableRegion(labels, sizes, int(largest), mask, best, bool(mask[best]), summary)
