"""The scale signal of a dataset: how much of a graph's order its variances leak, and its removal.

:func:`varsortability` (Reisach, Seiler and Weichwald, 2021) and :func:`path_sortability` measure
how often the variance (or another score) increases along the graph's directed paths, the signal
that simulated benchmarks leak and a scale-dependent method such as CoLiDE can exploit;
:func:`standardize` removes it (CoLiDE paper Appendix E.4). :mod:`colide_core.data.simulate`
re-exports these names (their public import path) and standardises simulated data with them.

Conventions: ``X`` has shape ``(n_samples, n_nodes)``; ``W[i, j] != 0`` means i -> j.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["standardize", "varsortability", "path_sortability"]


def standardize(X) -> np.ndarray:
    """Centre each column and scale it to unit (population, ddof=0) variance; returns a new array.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_nodes)
        Data. Not modified.

    Returns
    -------
    Xs : ndarray of shape (n_samples, n_nodes), dtype float

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, holds NaN/Inf, or has a constant column (zero variance).

    Notes
    -----
    Standardising removes the variance signal that varsortable benchmarks leak (Reisach et al., 2021;
    CoLiDE paper Appendix E.4).
    """
    A = np.array(X, dtype=float, copy=True)
    if A.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_nodes), got shape {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError("X contains NaN or Inf.")
    sd = A.std(axis=0)
    if np.any(sd == 0):
        raise ValueError(f"X has constant column(s) {np.flatnonzero(sd == 0).tolist()}; cannot standardise.")
    return (A - A.mean(axis=0)) / sd


def varsortability(X, W, tol=1e-9) -> float:
    """Varsortability of data ``X`` with respect to the graph of ``W`` (Reisach et al., 2021).

    The fraction of directed paths, over all path lengths ``k = 1 .. d-1``, that point from a node of
    smaller marginal variance to a node of larger marginal variance; ties (relative difference within
    ``tol``) count one half. Following the authors' reference implementation, a pair (i, j) counts once
    for each length ``k`` at which a directed path of length ``k`` from i to j exists (boolean powers of
    the adjacency). 1 means sorting by variance recovers the causal order exactly; about 0.5 is
    uninformative.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_nodes)
        Data. Not modified.
    W : array-like of shape (n_nodes, n_nodes)
        Adjacency, ``W[i, j] != 0`` means i -> j.
    tol : float, default=1e-9
        Tolerance on the variance ratio ``var_j / var_i`` for a tie.

    Returns
    -------
    float in [0, 1], or nan if the graph has no edge.

    Raises
    ------
    ValueError
        If the shapes do not match or an input holds NaN/Inf.

    Notes
    -----
    Source: A. G. Reisach, C. Seiler, S. Weichwald, "Beware of the Simulated DAG! Causal Discovery
    Benchmarks May Be Easy To Game", NeurIPS 2021, Definition 3.1.
    """
    Xa = np.asarray(X, dtype=float)
    Wa = np.asarray(W, dtype=float)
    if Xa.ndim != 2 or Wa.ndim != 2 or Wa.shape[0] != Wa.shape[1] or Xa.shape[1] != Wa.shape[0]:
        raise ValueError(
            f"X must be (n_samples, n_nodes) and W (n_nodes, n_nodes); got {Xa.shape} and {Wa.shape}."
        )
    if not (np.all(np.isfinite(Xa)) and np.all(np.isfinite(Wa))):
        raise ValueError("X and W must not contain NaN or Inf.")
    return path_sortability(Xa.var(axis=0), Wa, tol=tol)


def path_sortability(scores, W, tol=1e-9) -> float:
    """Share of directed paths of ``W`` that point from a lower to a higher ``scores`` value.

    The counting behind :func:`varsortability` (``scores`` = marginal variances) and
    :func:`colide_core.evaluation.checks.r2_sortability` (``scores`` = R^2 of each node regressed on all
    others): over all path lengths ``k = 1 .. d-1``, every pair (i, j) joined by a directed path
    of length ``k`` counts once; it is "sorted" when ``scores[j] / scores[i] > 1 + tol`` and
    counts one half when the ratio is within ``tol`` of 1.

    Parameters
    ----------
    scores : array-like of shape (n_nodes,)
        Positive, finite numbers, one per node.
    W : array-like of shape (n_nodes, n_nodes)
        Adjacency, ``W[i, j] != 0`` means i -> j.
    tol : float, default=1e-9
        Relative tolerance of a tie.

    Returns
    -------
    float in [0, 1], or nan if the graph has no edge.

    Notes
    -----
    Reisach, Seiler, Weichwald (NeurIPS 2021), Definition 3.1; Reisach, Tami, Seiler,
    Weichwald, Mogensen (NeurIPS 2023), R^2-sortability, same counting with R^2 scores.
    """
    s = np.asarray(scores, dtype=float)
    E = (np.asarray(W) != 0).astype(np.int64)
    if E.sum() == 0:
        return math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = s[None, :] / s[:, None]  # ratio[i, j] = score_j / score_i for the pair i -> j
    up = ratio > 1 + tol
    tie = (ratio <= 1 + tol) & (ratio > 1 - tol)
    reach = E.astype(bool)  # pairs joined by a path of length exactly k
    # the boolean power in float64 (BLAS): its counts (<= n_nodes) are exact integers, and an int64
    # product is numpy's non-BLAS loop, tens of times slower at 1,000 nodes (issue 33)
    Ef = E.astype(np.float64)
    total = 0.0
    good = 0.0
    for _ in range(E.shape[0] - 1):
        if not reach.any():
            break
        total += reach.sum()
        good += (reach & up).sum() + 0.5 * (reach & tie).sum()
        reach = (reach.astype(np.float64) @ Ef) > 0
    return float(good / total)
