"""CoLiDE's objective, as pure functions (Saboksayr, Mateos and Tepper, ICLR 2024).

The lowest layer of the solver: no state, no loop, numpy only. Each function returns
``(value, grad)`` where a gradient makes sense; both stage loops
(:func:`colide_core.solver._solver.colide_solve`, :func:`colide_core.solver._fast.fast_solve`) evaluate
their scores, noise updates and stage objectives through these, so each formula is written once.

Conventions
-----------
* ``X`` has shape ``(n_samples, n_nodes)``. The paper writes X as ``d x n``; every formula here
  is the paper's with X transposed, so ``cov = X.T @ X / n`` for centred X.
* ``W`` has shape ``(n_nodes, n_nodes)`` and ``W[i, j] != 0`` means the edge i -> j; the linear
  SEM is ``X = X @ W + Z``.
* ``sigma`` is a noise *standard deviation*: a float for the equal-variance (EV) variant, an
  array of shape ``(n_nodes,)`` for the non-equal-variance (NV) variant, None for ``"ls"``.
* ``resid`` is ``diag((I - W)^T cov (I - W))``, shape ``(n_nodes,)``: the mean squared residual
  of each node's regression on its parents, all the scores and noise updates need of the data
  (paper Appendix B). Every function works on the covariance, never on the raw data.
* Several conditions with known intervention targets (``docs/conditions.md``): ``cov`` may be a
  :class:`NodeCovariance`, where node j's equation has its own covariance ``C_j`` (the rows
  where j is not a target, each centred on its condition's mean) and weight ``w_j = |O_j| / n``.
  Then ``resid_j = w_j (e_j - W[:, j])^T C_j (e_j - W[:, j])`` (weighted) and the scores are
  ``sum_j w_j (resid_j / (2 sigma_j) + sigma_j / 2)``; with one condition and no target every
  ``w_j = 1`` and ``C_j = cov``, today's scores.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "NodeCovariance",
    "h_ldet",
    "score_ev",
    "score_nv",
    "score_ls",
    "smooth_score",
    "sigma_update",
    "stage_objective",
    "residuals",
    "required_offset",
]

#: An entry of ``inv(s I - W o W)`` below this value means W left the M-matrix domain (the
#: inverse of a nonsingular M-matrix is entry-wise non-negative). Same tolerance as the
#: authors' and DAGMA's code.
_DOMAIN_TOL = -1e-6

#: ``tau``: the magnitude with which a required edge always counts in the acyclicity function
#: (``h_ldet`` of ``W o W + tau R``, :func:`required_offset`), whatever its learned weight. The
#: scale of an edge at the default threshold 0.3 would be 0.09; 1 is the scale of a strong edge,
#: so a path that closes a cycle with a required edge is penalised as if the required edge were
#: strong (measured in ``docs/trust-the-edges.md``, "Required edges in the acyclicity function").
REQUIRED_TAU = 1.0


@dataclass(frozen=True, eq=False)
class NodeCovariance:
    """The per-node covariance form of the data: one covariance for each node's own equation.

    With conditions and known intervention targets (the masked likelihood of GIES and DCDI on
    CoLiDE's scores, ``docs/conditions.md``), node j's regression on its parents is fitted only
    on the rows ``O_j`` where j is not a target, so its residual variance is
    ``(e_j - W[:, j])^T C_j (e_j - W[:, j])`` with ``C_j = sum_{c: j not in T_c} n_c S_c / |O_j|``
    and its score term is weighted by ``w_j = |O_j| / n``. Nodes masked in the same conditions
    share ``C_j`` and ``w_j``: they form a *group*, so the memory is ``O(G d^2)`` with ``G`` the
    number of distinct target patterns (at most ``min(d, 2^K)``), never ``O(d^3)``.

    Parameters
    ----------
    covs : ndarray of shape (n_groups, n_nodes, n_nodes)
        ``C_g``: symmetric, finite, the 1/|O_g| covariance of the rows of group g's equations.
    group : ndarray of int of shape (n_nodes,)
        The group of each node's equation, in ``[0, n_groups)``.
    weight : ndarray of shape (n_groups,)
        ``w_g = |O_g| / n`` (> 0; 1 when no row is masked).
    pooled : ndarray of shape (n_nodes, n_nodes), optional
        A covariance of all the rows, used only for the solver's conditioning heuristics; default
        the weighted mean of ``covs``.

    Raises
    ------
    ValueError
        If the shapes do not match, a group index is out of range, a weight is not > 0 or a
        number is not finite.
    """

    covs: np.ndarray
    group: np.ndarray
    weight: np.ndarray
    pooled: np.ndarray = None
    _derived: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        covs = np.array(self.covs, dtype=float)
        if covs.ndim == 2:
            covs = covs[None]
        if covs.ndim != 3 or covs.shape[1] != covs.shape[2] or covs.shape[0] < 1:
            raise ValueError(f"covs must have shape (n_groups, n_nodes, n_nodes), got {covs.shape}.")
        G, d = covs.shape[0], covs.shape[1]
        group = np.array(self.group)
        if group.shape != (d,) or not np.issubdtype(group.dtype, np.integer):
            raise ValueError(f"group must be {d} integers, one per node.")
        group = group.astype(np.int64)
        if group.min(initial=0) < 0 or group.max(initial=0) >= G:
            raise ValueError(f"group indices must be in [0, {G}).")
        weight = np.array(self.weight, dtype=float).reshape(-1)
        if weight.shape != (G,) or not np.all(weight > 0) or not np.all(np.isfinite(weight)):
            raise ValueError(f"weight must be {G} finite numbers > 0, one per group.")
        if not np.all(np.isfinite(covs)):
            raise ValueError("covs must be finite.")
        if self.pooled is None:
            pooled = np.tensordot(weight, covs, axes=1) / weight.sum()
        else:
            pooled = np.array(self.pooled, dtype=float)
            if pooled.shape != (d, d) or not np.all(np.isfinite(pooled)):
                raise ValueError(f"pooled must be a finite ({d}, {d}) matrix.")
        for name, value in (("covs", covs), ("group", group), ("weight", weight), ("pooled", pooled)):
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    @property
    def n_nodes(self):
        """Number of nodes ``d``."""
        return self.covs.shape[1]

    @property
    def trivial(self):
        """True when every node shares one covariance with weight 1: the plain covariance form."""
        return self.covs.shape[0] == 1 and self.weight[0] == 1.0

    @property
    def node_weight(self):
        """``w_j`` of each node, shape (n_nodes,)."""
        return self._get("node_weight", lambda: self.weight[self.group].copy())

    @property
    def weighted(self):
        """``w_g C_g``, shape (n_groups, n_nodes, n_nodes), C-contiguous."""
        return self._get("weighted", lambda: np.ascontiguousarray(self.weight[:, None, None] * self.covs))

    @property
    def own(self):
        """The matrix whose column j is ``w_j C_j[:, j]`` (``cov`` in ``R = cov - cov W``), (d, d)."""
        def build():
            Cw, d = self.weighted, self.n_nodes
            return np.ascontiguousarray(Cw[self.group, :, np.arange(d)].T)
        return self._get("own", build)

    @property
    def columns(self):
        """``(cols, ptr)``: the nodes sorted by group and the start of each group in ``cols``."""
        def build():
            cols = np.argsort(self.group, kind="stable").astype(np.int64)
            ptr = np.searchsorted(self.group[cols], np.arange(self.covs.shape[0] + 1)).astype(np.int64)
            return cols, ptr
        return self._get("columns", build)

    def _get(self, key, build):
        if key not in self._derived:
            self._derived[key] = build()
        return self._derived[key]

    def product(self, W):
        """``P`` with ``P[:, j] = w_j C_j @ W[:, j]`` (the ``cov @ W`` of the plain form), (d, d)."""
        W = np.asarray(W, dtype=float)
        if self.covs.shape[0] == 1:
            return self.weighted[0] @ W
        out = np.empty_like(W)
        cols, ptr = self.columns
        Cw = self.weighted
        for g in range(self.covs.shape[0]):
            J = cols[ptr[g]:ptr[g + 1]]
            if J.size:
                out[:, J] = Cw[g] @ W[:, J]
        return out

    def default_sigma0(self, variant):
        """The noise floor of the masked scores: ``1e-2`` times ``sqrt(C_j[j, j])`` (NV) or
        ``sqrt(sum_j w_j C_j[j, j] / sum_j w_j)`` (EV); None for ``"ls"``. With one condition
        and no target it is :func:`colide_core.solver._common.default_sigma0`."""
        d = self.n_nodes
        diag = np.clip(self.covs[self.group, np.arange(d), np.arange(d)], 0.0, None)
        if variant == "ev":
            w = self.node_weight
            return float(np.sqrt(np.sum(w * diag) / np.sum(w))) * 1e-2
        if variant == "nv":
            return np.sqrt(diag) * 1e-2
        return None


def as_node_form(cov):
    """``(matrix, node)``: a plain covariance as it is, or a :class:`NodeCovariance` split.

    Returns ``(cov, None)`` for a plain ``(d, d)`` covariance and for a trivial node form (one
    group of weight 1: its covariance, so the loops take today's path bit for bit); else
    ``(node.own, node)``.
    """
    if isinstance(cov, NodeCovariance):
        if cov.trivial:
            return np.array(cov.covs[0]), None
        return np.array(cov.own), cov
    return cov, None


def required_offset(required_mask, n_nodes, tau=REQUIRED_TAU):
    """``tau R``: what the required edges add to ``W o W`` inside the acyclicity function.

    With required edges ``R`` (prior knowledge), the solvers evaluate ``h_ldet`` on
    ``W o W + tau R`` instead of ``W o W``: a required edge counts as present with at least
    ``tau`` whatever its learned weight, so the solve itself keeps every cycle it would close
    out of ``W`` (otherwise the post-processing cuts the edge that closes it, however strong).
    The gradient in W keeps its form, ``2 (s I - W o W - tau R)^{-T} o W``. Since the required
    edges are acyclic, ``tau R`` is nilpotent and ``s I - tau R`` is a nonsingular M-matrix for
    every ``s > 0``: ``W = 0`` stays inside the log-det domain of every stage.

    Parameters
    ----------
    required_mask : array-like of bool of shape (n_nodes, n_nodes) or None
        True at ``[i, j]`` for a required edge i -> j; acyclic, zero diagonal.
    n_nodes : int
    tau : float, default=REQUIRED_TAU
        The magnitude (> 0, in the units of a squared weight).

    Returns
    -------
    ndarray of shape (n_nodes, n_nodes) or None
        ``tau`` at the required edges and 0 elsewhere (a new C-contiguous array); None when
        ``required_mask`` is None or requires nothing (the plain ``h_ldet``, bit for bit).

    Raises
    ------
    ValueError
        If the mask has another shape, requires a self-loop or a directed cycle, or ``tau``
        is not a finite number > 0.
    """
    if required_mask is None:
        return None
    R = np.asarray(required_mask)
    if R.shape != (n_nodes, n_nodes):
        raise ValueError(f"required_mask must have shape {(n_nodes, n_nodes)}, got {R.shape}.")
    R = R.astype(bool)
    if not R.any():
        return None
    if not (np.isfinite(tau) and tau > 0):
        raise ValueError(f"tau must be a finite number > 0, got {tau!r}.")
    if np.any(np.diag(R)):
        raise ValueError("required_mask requires a self-loop.")
    # Kahn's algorithm: peel off the nodes no remaining required edge points into.
    left = R.copy()
    alive = np.ones(n_nodes, dtype=bool)
    while alive.any():
        free = alive & ~left[alive].any(axis=0)
        if not free.any():
            raise ValueError("The required edges form a directed cycle; no DAG can contain them all.")
        alive &= ~free
        left[free, :] = False
    return np.ascontiguousarray(tau * R, dtype=float)


def _domain_matrix(W, s, offset=None):
    """``s I - W o W`` (minus ``offset``, the required edges' ``tau R``, when given)."""
    M = s * np.eye(W.shape[0]) - W * W
    if offset is not None:
        M -= offset
    return M


def h_ldet(W, s=1.0, required_mask=None):
    """Log-determinant acyclicity function and its gradient (paper Section 3, Appendix B.3).

    ``h_ldet(W, s) = d log(s) - log det(s I - W o W)``, with gradient
    ``2 (s I - W o W)^{-T} o W``, where ``o`` is the entry-wise product. With required edges
    ``R``, ``W o W`` is replaced by ``W o W + tau R`` (:func:`required_offset`): the gradient
    keeps its form, ``2 (s I - W o W - tau R)^{-T} o W``.

    Parameters
    ----------
    W : ndarray of shape (n_nodes, n_nodes)
        Weighted adjacency, ``W[i, j] != 0`` meaning i -> j.
    s : float, default=1.0
        Positive log-det parameter. ``h_ldet`` is zero exactly on DAGs inside the domain
        where ``s I - W o W`` is an M-matrix, and positive elsewhere in that domain.
    required_mask : array-like of bool of shape (n_nodes, n_nodes), optional
        Required edges (acyclic): each counts as present with ``REQUIRED_TAU``, so ``h_ldet``
        is zero exactly when W together with the required edges is a DAG.

    Returns
    -------
    h : float
        Value of the acyclicity function (>= 0 inside the domain).
    grad : ndarray of shape (n_nodes, n_nodes)
        Gradient with respect to ``W``.

    Raises
    ------
    FloatingPointError
        If ``s I - W o W`` is not a nonsingular M-matrix (W is outside the log-det domain).
    ValueError
        If ``s <= 0``, or ``required_mask`` is not an acyclic (n_nodes, n_nodes) mask.
    """
    W = np.asarray(W, dtype=float)
    if not s > 0:
        raise ValueError(f"s must be positive, got {s!r}.")
    d = W.shape[0]
    M = _domain_matrix(W, s, required_offset(required_mask, d))
    sign, logdet = np.linalg.slogdet(M)
    Minv = np.linalg.inv(M) if sign > 0 else None
    if Minv is None or not np.all(np.isfinite(Minv)) or Minv.min() < _DOMAIN_TOL:
        raise FloatingPointError(
            "W is outside the log-det domain: s*I - W*W is not a nonsingular M-matrix."
        )
    return _h_from_logdet(d, s, logdet), 2.0 * Minv.T * W


def _h_from_logdet(d, s, logdet):
    """``h_ldet = d log(s) - log det(s I - W o W)`` from the log-determinant (inf if it is -inf)."""
    return d * np.log(s) - logdet


def _logdet(W, s, offset=None):
    """``log det(s I - W o W - offset)``, or ``-inf`` when the determinant is not positive."""
    sign, logdet = np.linalg.slogdet(_domain_matrix(W, s, offset))
    return logdet if sign > 0 else -np.inf


def residuals(W, cov):
    """``R = cov (I - W)`` and the per-node residual variances ``diag((I - W)^T cov (I - W))``.

    Parameters
    ----------
    W : ndarray of shape (n_nodes, n_nodes)
    cov : ndarray of shape (n_nodes, n_nodes) or NodeCovariance
        The covariance ``X.T @ X / n`` of centred data ``X``, or the per-node form.

    Returns
    -------
    R : ndarray of shape (n_nodes, n_nodes)
        ``cov - cov @ W``; ``-R`` is the gradient of the least-squares score. For a
        :class:`NodeCovariance`, column j is ``w_j C_j (e_j - W[:, j])``.
    resid : ndarray of shape (n_nodes,)
        ``||X[:, j] - X @ W[:, j]||^2 / n`` for each node j, computed in O(d^2) from ``R``
        (weighted, ``w_j`` times node j's masked residual variance, for a NodeCovariance).
    """
    W = np.asarray(W, dtype=float)
    if isinstance(cov, NodeCovariance):
        R = cov.own - cov.product(W)
    else:
        R = cov - cov @ W
    return R, np.diagonal(R) - np.sum(W * R, axis=0)


def _score_value(resid, sigma, variant, weight=None):
    """The smooth score from the residual variances (eq. 3 for EV, eq. 6 for NV, LS).

    The one implementation of the score's value: both stage loops call it. ``weight``: the
    node weights ``w_j`` of a :class:`NodeCovariance` (``resid`` already weighted), else None.
    """
    if variant == "ev":
        count = resid.size if weight is None else float(np.sum(weight))
        return float(resid.sum()) / (2.0 * sigma) + count * sigma / 2.0
    if variant == "nv":
        tail = np.sum(sigma) if weight is None else np.sum(weight * sigma)
        return 0.5 * float(np.sum(resid / sigma)) + 0.5 * float(tail)
    return 0.5 * float(resid.sum())


def _node_weight(cov):
    """The node weights of a non-trivial :class:`NodeCovariance`, else None."""
    if isinstance(cov, NodeCovariance) and not cov.trivial:
        return cov.node_weight
    return None


def _score_grad(R, sigma, variant):
    """The score's gradient in W from ``R = cov (I - W)`` (the same for every score up to sigma)."""
    if variant == "ev":
        return -R / sigma
    if variant == "nv":
        return R / -sigma[None, :]
    return -R


def smooth_score(W, cov, sigma, variant):
    """The smooth score of a CoLiDE variant and its gradient in W (no L1 term).

    Parameters
    ----------
    W : ndarray of shape (n_nodes, n_nodes)
    cov : ndarray of shape (n_nodes, n_nodes) or NodeCovariance
        Sample covariance ``X.T @ X / n`` of centred data, or the per-node form of several
        conditions with known targets (then the masked score
        ``sum_j w_j (resid_j / (2 sigma_j) + sigma_j / 2)``, ``docs/conditions.md``).
    sigma : float, ndarray of shape (n_nodes,), or None
        Noise standard deviation(s) (> 0): a float for ``"ev"``, one per node for ``"nv"``,
        ignored for ``"ls"``.
    variant : {"ev", "nv", "ls"}

    Returns
    -------
    value : float
    grad : ndarray of shape (n_nodes, n_nodes)
    """
    if variant == "nv":
        sigma = np.asarray(sigma, dtype=float)
    R, resid = residuals(W, cov)
    return _score_value(resid, sigma, variant, _node_weight(cov)), _score_grad(R, sigma, variant)


def score_ev(W, cov, sigma):
    """CoLiDE-EV smooth score and its gradient in W (paper eq. 3, Appendix B.1).

    ``f(W, sigma) = tr((I - W)^T cov (I - W)) / (2 sigma) + d sigma / 2``; this equals
    ``||X - X W||_F^2 / (2 n sigma) + d sigma / 2`` for centred ``X`` of shape
    ``(n_samples, n_nodes)``. The L1 term is not included.

    Parameters
    ----------
    W : ndarray of shape (n_nodes, n_nodes)
    cov : ndarray of shape (n_nodes, n_nodes)
        Sample covariance ``X.T @ X / n`` of centred data.
    sigma : float
        Positive noise standard deviation (same units as the data).

    Returns
    -------
    value : float
    grad : ndarray of shape (n_nodes, n_nodes)
        ``-cov (I - W) / sigma``.
    """
    return smooth_score(W, cov, sigma, "ev")


def score_nv(W, cov, sigma):
    """CoLiDE-NV smooth score and its gradient in W (paper eq. 6, Appendix B.2).

    ``g(W, Sigma) = tr(Sigma^{-1} (I - W)^T cov (I - W)) / 2 + tr(Sigma) / 2`` with
    ``Sigma = diag(sigma)``. The L1 term is not included.

    Parameters
    ----------
    W : ndarray of shape (n_nodes, n_nodes)
    cov : ndarray of shape (n_nodes, n_nodes)
        Sample covariance ``X.T @ X / n`` of centred data.
    sigma : ndarray of shape (n_nodes,)
        Positive per-node noise standard deviations.

    Returns
    -------
    value : float
    grad : ndarray of shape (n_nodes, n_nodes)
        ``-cov (I - W) Sigma^{-1}``.
    """
    return smooth_score(W, cov, sigma, "nv")


def score_ls(W, cov):
    """Least-squares score of DAGMA-linear and its gradient in W (paper Appendix B, DAGMA).

    ``l(W) = tr((I - W)^T cov (I - W)) / 2 = ||X - X W||_F^2 / (2 n)``.

    Parameters
    ----------
    W, cov : ndarray of shape (n_nodes, n_nodes)

    Returns
    -------
    value : float
    grad : ndarray of shape (n_nodes, n_nodes)
        ``-cov (I - W)``.
    """
    return smooth_score(W, cov, None, "ls")


def _sigma_from_resid(resid, variant, sigma0, weight=None):
    """Closed-form noise update from the residual variances (eq. 5 for EV, eq. 7 for NV).

    The one implementation of the sigma update: both stage loops call it (the numba kernel of
    the fast solver repeats its arithmetic inside its compiled loop). With node weights
    ``weight`` (``resid`` weighted): EV pools every unmasked residual,
    ``sigma^2 = sum_j resid_j / sum_j w_j``; NV restricts eq. 7 to ``O_j``,
    ``sigma_j^2 = resid_j / w_j``.
    """
    if variant == "ev":
        count = resid.size if weight is None else float(np.sum(weight))
        return max(float(np.sqrt(max(resid.sum(), 0.0) / count)), float(sigma0))
    if variant == "nv":
        if weight is not None:
            resid = resid / weight
        return np.maximum(np.sqrt(np.maximum(resid, 0.0)), sigma0)
    return None


def sigma_update(W, cov, variant, sigma0):
    """Closed-form noise update of the BCD loop (paper eq. 5 for EV, eq. 7 for NV).

    Only ``diag((I - W)^T cov (I - W))`` is needed, computed in O(d^2) from
    ``cov (I - W)`` without forming the full product's off-diagonal.

    Parameters
    ----------
    W : ndarray of shape (n_nodes, n_nodes)
    cov : ndarray of shape (n_nodes, n_nodes) or NodeCovariance
        With a :class:`NodeCovariance`, EV pools every unmasked residual and NV restricts
        eq. 7 to the rows where the node is not a target.
    variant : {"ev", "nv"}
    sigma0 : float or ndarray of shape (n_nodes,)
        Lower bound(s) on sigma.

    Returns
    -------
    sigma : float (EV) or ndarray of shape (n_nodes,) (NV)
        Noise standard deviation(s), floored at ``sigma0``; the minimiser of the score over
        sigma at fixed W (the sigma-step of Algorithm 1).
    """
    return _sigma_from_resid(residuals(W, cov)[1], variant, sigma0, _node_weight(cov))


def _stage_value(W, resid, sigma, variant, mu, lambda1, s, logdet=None, weight=None, offset=None):
    """Stage objective ``mu (score + lambda1 |W|_1) + h_ldet(W, s)`` from precomputed parts.

    The one implementation of the stage objective's value (paper eq. 4 / eq. 6 at one point
    of the central path); both stage loops call it. ``logdet`` is ``log det(s I - W o W)``
    when the caller has it (from an LU it needs anyway), else it is computed (minus
    ``offset``, the required edges' ``tau R`` of :func:`required_offset`, when given). Returns
    ``(objective, h)``; both are ``inf`` outside the log-det domain.
    """
    if logdet is None:
        logdet = _logdet(W, s, offset)
    h = _h_from_logdet(W.shape[0], s, logdet)
    return mu * (_score_value(resid, sigma, variant, weight) + float(np.sum(lambda1 * np.abs(W)))) + h, h


def _stage_grad(W, R, sigma, variant, mu, lambda1, MinvT, mask=None):
    """(Sub)gradient of the stage objective from ``R = cov (I - W)`` and ``MinvT = inv(s I - W o W).T``.

    ``mu (grad score + lambda1 sign(W)) + 2 MinvT o W``, times ``mask`` (0 for a forbidden
    edge) when given: the direction of Algorithm 1's Adam step, with its operations in the
    faithful loop's order.
    """
    grad = _score_grad(R, sigma, variant)
    if np.any(lambda1):
        grad += lambda1 * np.sign(W)
    grad *= mu
    grad += 2.0 * MinvT * W
    if mask is not None:
        grad *= mask
    return grad


def stage_objective(W, sigma, cov, variant, mu, lambda1, s, required_mask=None):
    """The objective of one stage of CoLiDE's central path and its (sub)gradient in W.

    ``F(W) = mu * (score(W, sigma) + sum(lambda1 * |W|)) + h_ldet(W, s)``: paper eq. 4
    (``"ev"``) or eq. 6 (``"nv"``) at the path point ``(mu, s)``; ``"ls"`` is DAGMA-linear's
    least-squares score.

    Parameters
    ----------
    W : ndarray of shape (n_nodes, n_nodes)
        Weights, ``W[i, j] != 0`` meaning i -> j.
    sigma : float, ndarray of shape (n_nodes,), or None
        Noise standard deviation(s) (> 0); None for ``"ls"``.
    cov : ndarray of shape (n_nodes, n_nodes) or NodeCovariance
        Sample covariance ``X.T @ X / n`` of centred data ``X`` of shape ``(n_samples, n_nodes)``,
        or the per-node form of several conditions with known targets (:class:`NodeCovariance`).
    variant : {"ev", "nv", "ls"}
    mu : float
        Central-path weight of the score (> 0).
    lambda1 : float or ndarray of shape (n_nodes, n_nodes)
        L1 weight (>= 0), or one weight per edge.
    s : float
        Log-det parameter (> 0).
    required_mask : array-like of bool of shape (n_nodes, n_nodes), optional
        Required edges (acyclic): ``h_ldet`` counts each as present (:func:`h_ldet`).

    Returns
    -------
    value : float
        ``inf`` when W is outside the log-det domain.
    grad : ndarray of shape (n_nodes, n_nodes) or None
        The subgradient ``mu (grad score + lambda1 sign(W)) + grad h_ldet`` (``sign(0) = 0``);
        None outside the log-det domain.
    """
    W = np.asarray(W, dtype=float)
    if variant == "nv":
        sigma = np.asarray(sigma, dtype=float)
    R, resid = residuals(W, cov)
    offset = required_offset(required_mask, W.shape[0])
    value, _ = _stage_value(W, resid, sigma, variant, mu, lambda1, s, weight=_node_weight(cov), offset=offset)
    if not np.isfinite(value):
        return value, None
    M = _domain_matrix(W, s, offset)
    return value, _stage_grad(W, R, sigma, variant, mu, lambda1, np.linalg.inv(M).T)
