"""Least squares on given parents: the one refit of a linear SEM on a fixed graph (issue 47).

A learned graph's weights are shrunk by the L1 penalty that selected it; its *refit* regresses each
node on its parents by ordinary least squares (the relaxed or post-selection fit, Meinshausen 2007).
Every place that needs it uses this module:

==========================================================  ===========================================
caller                                                      what it reads
==========================================================  ===========================================
:func:`colide_core.evaluation.interventions.refit_weights`  the weights (the Predict page's SEM)
:func:`colide_core.evaluation.residuals.ols_refit`          weights, standard errors, residuals, d.o.f.
``residuals._refit_by_condition`` (the checks with          the same, an intercept per condition, each
conditions)                                                 node on its unmasked rows
:func:`colide_core.solver.path.bic_score`                   the residual variances, from a covariance
:func:`colide_core.evaluation.checks.edge_evidence` (with   each node's RSS under several parent sets
conditions)                                                 (ΔBIC), and partial correlations
==========================================================  ===========================================

Two levels:

* :func:`parent_least_squares` solves the normal equations ``G[P, P] w = G[P, j]`` of every node
  ``j`` with parents ``P`` from cross-product matrices ``G`` (a covariance or a Gram matrix of
  centred data) and gives ``RSS_j = G[j, j] - G[j, P] w`` in ``G``'s units; where ``G[P, P]`` is
  singular, the minimum-norm solution (``numpy.linalg.lstsq``).
* :func:`refit_sem` builds those matrices from data: each condition centred on its own means (one
  intercept per condition; without conditions one intercept), and node ``j``'s matrix summed over
  the conditions that do not target ``j`` (the masked likelihood, ``docs/conditions.md``: a row
  whose condition intervenes on ``j`` does not enter ``j``'s equation, while it still serves the
  other equations as a regressor). One pass over the rows (one ``n x d x d`` product however many
  nodes and targets), then residuals, degrees of freedom and standard errors.

Conventions: ``X`` has shape ``(n_samples, n_nodes)`` (the paper writes d x n); ``W[i, j] != 0``
means i -> j.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from colide_core._validation import check_adjacency, check_X

__all__ = ["Refit", "masked_grams", "node_least_squares", "parent_least_squares", "refit_sem"]


@dataclass(frozen=True, eq=False)
class Refit:
    """A graph's linear SEM refitted by ordinary least squares, one regression per node.

    Attributes
    ----------
    W : ndarray of shape (n_nodes, n_nodes)
        OLS weights; ``W[i, j]`` is the coefficient of parent i in node j's regression (0 where
        i is not a parent).
    se : ndarray of shape (n_nodes, n_nodes)
        Standard errors of ``W`` (0 where i is not a parent; NaN for a node without a residual
        degree of freedom).
    intercept : ndarray of shape (n_nodes,)
        With conditions, the first condition's (among those node j keeps).
    residuals : ndarray of shape (n_samples, n_nodes)
        ``x_j - intercept_j - x_Pa(j) W[Pa(j), j]`` (with conditions, each condition's intercept),
        in data units; NaN on the rows a node's equation leaves out.
    fitted : ndarray of shape (n_samples, n_nodes)
        ``x_j`` minus its residual (NaN where the residual is).
    dof : ndarray of int of shape (n_nodes,)
        Residual degrees of freedom: rows kept minus parents minus intercepts (``n - |Pa(j)| - 1``
        without conditions).
    residual_var : ndarray of shape (n_nodes,)
        Unbiased residual variance ``RSS_j / dof_j`` (NaN where ``dof_j < 1``).
    adjacency : ndarray of bool of shape (n_nodes, n_nodes)
        The graph that was refitted.
    node_names : list of str
    kept : ndarray of bool of shape (n_samples, n_nodes) or None
        The rows each node's equation used (all True without targets).
    """

    W: np.ndarray
    se: np.ndarray
    intercept: np.ndarray
    residuals: np.ndarray
    fitted: np.ndarray
    dof: np.ndarray
    residual_var: np.ndarray
    adjacency: np.ndarray
    node_names: list
    kept: np.ndarray = None

    def parents(self, j):
        """Indices of the parents of node ``j`` (ndarray of int)."""
        return np.flatnonzero(self.adjacency[:, int(j)])


def parent_least_squares(gram, support, *, groups=None):
    """Each node's least-squares weights on its parents, and its residual sum of squares, from cross-products.

    Parameters
    ----------
    gram : array-like of shape (n_nodes, n_nodes) or (n_groups, n_nodes, n_nodes)
        ``Xc' Xc`` of centred data ``Xc`` of shape ``(n_samples, n_nodes)``, or its covariance
        ``Xc' Xc / n``; a stack of them when nodes read different rows (``groups``).
    support : array-like of shape (n_nodes, n_nodes)
        The graph, ``support[i, j] != 0`` meaning i -> j; its values and its diagonal are ignored.
    groups : array-like of int of shape (n_nodes,), optional
        Node j reads ``gram[groups[j]]``; default all 0 (needed only for a stack).

    Returns
    -------
    W : ndarray of shape (n_nodes, n_nodes)
        ``W[P, j]`` solves ``G[P, P] w = G[P, j]`` for node j's parents ``P`` (minimum norm where
        ``G[P, P]`` is singular); 0 off the support.
    rss : ndarray of shape (n_nodes,)
        ``G[j, j] - G[j, P] W[P, j]``: node j's residual sum of squares in ``gram``'s units (the
        maximum-likelihood residual variance when ``gram`` is a covariance).

    Raises
    ------
    ValueError
        For shapes that disagree, or ``groups`` out of range.

    Examples
    --------
    Covariance of (a, b) with var a = 2, cov(a, b) = 4, var b = 10: b on a has weight 4 / 2 = 2
    and residual variance 10 - 4 * 2 = 2.

    >>> W, rss = parent_least_squares([[2.0, 4.0], [4.0, 10.0]], [[0, 1], [0, 0]])
    >>> W.tolist(), rss.tolist()
    ([[0.0, 2.0], [0.0, 0.0]], [2.0, 2.0])
    """
    stack = np.asarray(gram, dtype=float)
    stack = stack[None] if stack.ndim == 2 else stack
    if stack.ndim != 3 or stack.shape[1] != stack.shape[2]:
        raise ValueError(f"gram must be (n_nodes, n_nodes) or (n_groups, n_nodes, n_nodes), got {np.shape(gram)}.")
    d = stack.shape[1]
    S = np.array(np.asarray(support) != 0, dtype=bool)
    if S.shape != (d, d):
        raise ValueError(f"support must have shape {(d, d)}, got {S.shape}.")
    np.fill_diagonal(S, False)
    g = np.zeros(d, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64).reshape(-1)
    if g.shape != (d,) or g.min(initial=0) < 0 or g.max(initial=0) >= stack.shape[0]:
        raise ValueError(f"groups must be {d} indices into the {stack.shape[0]} cross-product matrices.")
    W = np.zeros((d, d))
    rss = np.empty(d)
    for j in range(d):
        P = np.flatnonzero(S[:, j])
        W[P, j], rss[j] = node_least_squares(stack[g[j]], P, j)
    return W, rss


def node_least_squares(gram, parents, j):
    """One node's least-squares weights on given parents, and its residual sum of squares, from cross-products.

    The regression of :func:`parent_least_squares` for one node, which every caller that scores
    several parent sets of one node (the ΔBIC of adding, removing or reversing an edge) calls directly.

    Parameters
    ----------
    gram : ndarray of shape (n_nodes, n_nodes)
        ``Xc' Xc`` of centred data (or its covariance) on the rows node ``j``'s equation reads.
    parents : sequence of int
        The parents' indices (may be empty).
    j : int
        The node.

    Returns
    -------
    w : ndarray of shape (len(parents),)
        Solves ``G[P, P] w = G[P, j]`` (minimum norm where ``G[P, P]`` is singular,
        ``numpy.linalg.lstsq``).
    rss : float
        ``G[j, j] - G[j, P] w``, in ``gram``'s units.

    Examples
    --------
    >>> w, rss = node_least_squares(np.array([[2.0, 4.0], [4.0, 10.0]]), [0], 1)
    >>> w.tolist(), rss
    ([2.0], 2.0)
    """
    P = np.asarray(parents, dtype=np.int64).reshape(-1)
    if not P.size:
        return np.zeros(0), float(gram[j, j])
    w = np.linalg.lstsq(gram[np.ix_(P, P)], gram[P, j], rcond=None)[0]
    return w, float(gram[j, j] - gram[j, P] @ w)


def masked_grams(values, codes, kept):
    """Each node's cross-products on the rows its equation keeps, each condition centred on its own means.

    Parameters
    ----------
    values : ndarray of shape (n_samples, n_nodes)
        The data.
    codes : ndarray of int of shape (n_samples,)
        Each row's condition (``0 .. k - 1``; all 0 for one condition).
    kept : ndarray of bool of shape (n_samples, n_nodes)
        ``kept[r, j]``: row r enters node j's equation (False on the rows of the conditions that
        target j). Whole conditions only: a condition's rows are all kept or all left out per node.

    Returns
    -------
    gram : ndarray of shape (n_patterns, n_nodes, n_nodes)
        ``Xc' Xc`` summed over the conditions of each distinct keep pattern (one pattern without
        targets), ``Xc`` centred within each condition.
    groups : ndarray of int of shape (n_nodes,)
        Node j's matrix is ``gram[groups[j]]``.
    n_kept : ndarray of int of shape (n_nodes,)
        The rows node j's equation keeps.
    means : ndarray of shape (n_conditions, n_nodes)
        Each condition's means.
    uses : ndarray of bool of shape (n_conditions, n_nodes)
        Whether condition c enters node j's equation.

    Notes
    -----
    One pass over the rows: the cross-products are formed once per condition (``sum_c n_c d^2``,
    one ``n d^2`` product) and summed per pattern.
    """
    n, d = values.shape
    k = int(codes.max()) + 1
    if k == 1:
        means = values.mean(axis=0, keepdims=True)
    else:
        means = np.zeros((k, d))
        np.add.at(means, codes, values)
        means /= np.bincount(codes, minlength=k)[:, None]
    Xc = values - means[codes]
    first = np.array([np.argmax(codes == c) for c in range(k)])
    uses = kept[first]
    patterns, groups = np.unique(uses.T, axis=0, return_inverse=True)
    if patterns.all():
        gram = (Xc.T @ Xc)[None]
    else:
        blocks = np.stack([Xc[codes == c].T @ Xc[codes == c] for c in range(k)])
        gram = np.tensordot(patterns.astype(float), blocks, axes=1)
    return gram, groups.reshape(-1), kept.sum(axis=0).astype(np.int64), means, uses


def refit_sem(X, support, *, conditions=None, targets=None, node_names=None, design=None) -> Refit:
    """Refit the linear SEM of a graph by least squares: each node on its parents, on the rows it keeps.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_nodes)
        Finite data in data units. Not modified.
    support : array-like of shape (n_nodes, n_nodes)
        The graph, ``support[i, j] != 0`` meaning i -> j; its weights and its diagonal are ignored
        (it need not be acyclic here: the callers check that).
    conditions : array-like of shape (n_samples,), optional
        Each row's condition: each condition is centred on its own means (one intercept per
        condition and node, the same slopes as condition dummies). Without, one intercept.
    targets : mapping, optional
        ``{condition: nodes}`` (names or indices; needs ``conditions``): node j's equation leaves
        out the rows of the conditions that target j.
    node_names : sequence of str, optional
        To resolve targets given by name; default ``X``'s columns (``X0``, ``X1``, ... for an array).
    design : colide_core.data.design.Design, optional
        The conditions and targets in one object (validated once), instead of ``conditions`` and
        ``targets`` (:func:`colide_core.data.design.resolve_design`); its node names must be
        ``node_names`` (``X``'s columns by default).

    Returns
    -------
    Refit
        With ``kept`` the rows each equation used. A node without a residual degree of freedom
        gets NaN ``residual_var`` and ``se`` (the callers that need them refuse it).

    Raises
    ------
    ValueError
        For invalid data or support (:func:`colide_core._validation.check_X`, ``check_adjacency``);
        ``ConditionsError`` or ``InvalidParameterError`` (both ``ValueError``) for bad conditions
        or targets, or targets without conditions.

    Notes
    -----
    The cross-products are formed once per condition (``sum_c n_c d^2`` = one ``n d^2`` product)
    and summed per target pattern; the weights solve the normal equations
    (:func:`parent_least_squares`), the residuals and ``RSS_j`` come from the data. Standard errors
    are the classical ``sqrt(s^2 diag((Z'Z)^+))`` with ``s^2 = RSS / dof``.

    Examples
    --------
    >>> x0 = np.array([-1.0, 0.0, 1.0, 2.0])
    >>> ref = refit_sem(np.column_stack([x0, 3 * x0 + 1]), [[0, 0.5], [0, 0]])
    >>> ref.W.round(6).tolist(), ref.intercept.round(6).tolist(), ref.dof.tolist()
    ([[0.0, 3.0], [0.0, 0.0]], [0.5, 1.0], [3, 2])
    """
    from colide_core.data.conditions import condition_design

    values, names = check_X(X, min_samples=1, min_features=1, copy=False)
    n, d = values.shape
    S = check_adjacency(support, d, "support", what="adjacency matrix") != 0
    np.fill_diagonal(S, False)
    names = [str(x) for x in node_names] if node_names is not None else (names or [f"X{j}" for j in range(d)])
    codes, kept = condition_design(conditions, targets, n, names, d, design=design)
    # uses[c, j]: condition c enters node j's equation; nodes with one pattern share one matrix
    gram, groups, _, means, uses = masked_grams(values, codes, kept)
    Xc = values - means[codes]
    W, _ = parent_least_squares(gram, S, groups=groups)

    resid = np.full((n, d), np.nan)
    fitted = np.full((n, d), np.nan)
    se = np.zeros((d, d))
    dof = np.empty(d, dtype=np.int64)
    rvar = np.full(d, np.nan)
    intercept = np.full(d, np.nan)
    for j in range(d):
        P = np.flatnonzero(S[:, j])
        rows = kept[:, j]
        Z = Xc[rows] if not rows.all() else Xc
        r = Z[:, j] - Z[:, P] @ W[P, j]
        resid[rows, j] = r
        fitted[rows, j] = values[rows, j] - r
        dof[j] = int(rows.sum()) - P.size - int(uses[:, j].sum())
        if uses[:, j].any():
            base = int(np.argmax(uses[:, j]))  # the first condition node j keeps
            intercept[j] = means[base, j] - float(means[base, P] @ W[P, j])
        if dof[j] >= 1:
            rvar[j] = float(r @ r) / dof[j]
            if P.size:
                G = gram[groups[j]]
                se[P, j] = np.sqrt(np.maximum(np.diag(np.linalg.pinv(G[np.ix_(P, P)])) * rvar[j], 0.0))
        elif P.size:
            se[P, j] = np.nan
    return Refit(W=W, se=se, intercept=intercept, residuals=resid, fitted=fitted, dof=dof, residual_var=rvar,
                 adjacency=S, node_names=list(names), kept=kept)
