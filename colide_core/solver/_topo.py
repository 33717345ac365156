"""CoLiDE-TOPO: CoLiDE's convex scores optimised over topological orders by swaps.

The paper's Appendix E ("Integrating CoLiDE with other optimization methods") pairs the
CoLiDE-EV / CoLiDE-NV scores with TOPO, the bi-level method of Deng, Bello, Aragam and
Ravikumar, *Optimizing NOTEARS Objectives via Topological Swaps* (ICML 2023,
arXiv:2305.17277). This module is our own implementation of that combination, written from the
two papers (no released code was used):

* **Inner problem** (:func:`order_solve`): for a fixed topological order ``pi`` the weights are
  restricted to edges that go forward in ``pi``, so no acyclicity term is needed and the score
  is jointly convex in ``(W, sigma)``. For CoLiDE-NV it separates into one smoothed concomitant
  lasso per node (node j regressed on its predecessors, with its own ``sigma_j >= sigma0_j``);
  for CoLiDE-EV the node regressions are coupled only through the shared ``sigma``. Both are
  solved exactly (to ``tol``) from the covariance alone: a lasso in the weights at fixed sigma
  (for fixed ``sigma`` the node term ``r_j(w) / (2 sigma) + lambda1 |w|_1`` is, times
  ``sigma``, a lasso with penalty ``lambda1 * sigma``) and the closed-form sigma update of
  eq. 5 / eq. 7. The lasso is solved by the feature-sign search ("Speed" below); covariance
  coordinate descent alternated with the sigma update, warm-started, is its fallback (a
  singular active set or an iteration cap).
* **Outer search** (:func:`topo_solve`): start from an order (the continuous CoLiDE solution's
  topological order by default), rank the swaps of node pairs with TOPO's KKT-based rule,
  evaluate them in growing candidate sets of sizes ``(s0, s_small, s_large)``, accept the best
  swap of the first set that lowers the score, and stop when no swap in the largest set does.
  A swap of the nodes at positions ``a < b`` changes the predecessor sets of exactly the nodes
  at positions ``a..b``; only those are re-solved (for EV the shared sigma is then re-fixed,
  so the evaluation stays exact).
* **Speed** (issue 32, ``docs/topo.md``): each node problem is solved exactly by a feature-sign
  active-set search (cost independent of cond(cov), where coordinate descent needed hundreds of
  sweeps per node on ill-conditioned data); each node keeps its linear piece
  ``w = a - sigma b`` and the sigma interval where it is optimal, so EV's shared sigma is found
  in closed form re-solving only the nodes whose piece breaks; solved pieces are cached by
  (node, predecessor set). :func:`estimate_topo_cost` predicts a fit's time from a measurement.

Why not scikit-learn's coordinate descent: ``Lasso``/``enet_path`` need the design matrix (or a
Gram matrix *and* ``X``/``y``), have one penalty for all coefficients (a required edge must be
unpenalised here) and pay their input validation on every call (measured in ``docs/topo.md``,
"The inner problem"), while a swap evaluation solves tens of node problems of a few dozen
coefficients each. The kernels (:mod:`colide_core.solver._topo_kernels`) work on ``cov`` alone
(so ``CoLiDE.fit_from_stats`` and out-of-core statistics work), take one penalty per edge, and
are compiled with numba when it is installed (the same Python source runs uncompiled otherwise).
It is tested against a generic convex solver (L-BFGS-B on the split ``w = w+ - w-``).

* **Known intervention targets** (issue 31, ``docs/conditions.md``): ``cov`` may be the per-node
  form :class:`~colide_core.solver._objective.NodeCovariance`. Node j's lasso then reads its own
  ``C_j`` (the rows ``O_j`` where j is not a target, each condition centred on its own mean;
  the kernels take the stacked ``(n_groups, d, d)`` matrices and a node -> group index, one
  matrix per distinct target pattern), its penalty is ``lambda1 / w_j`` (its score term weighs
  ``w_j = |O_j| / n``), NV's ``sigma_j`` is eq. 7 on ``O_j`` and EV's sigma is pooled over every
  unmasked residual with the weights ``|O_j|``, as in the continuous solvers. A node solve costs
  what it did; without targets the search is the plain one, bit for bit.

Conventions: ``cov`` is the ``(n_nodes, n_nodes)`` covariance ``X.T @ X / n`` of centred data
``X`` of shape ``(n_samples, n_nodes)``; ``W[i, j] != 0`` means the edge i -> j; an order is a
sequence of node indices, first the nodes with no predecessor.
"""
from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import networkx as nx
import numpy as np
from scipy.linalg import solve_triangular

from colide_core import defaults
from colide_core.solver._common import ConvergenceWarning, SolverResult, default_sigma0, loop_settings
from colide_core.graph._dag import threshold_to_dag
from colide_core.solver._objective import NodeCovariance, _score_grad, _score_value, _sigma_from_resid, residuals
from colide_core.solver._topo_kernels import _MAX_OUTER, _solve_nodes_fs

__all__ = ["OrderFit", "order_solve", "topo_solve", "resolve_order", "order_from_weights", "swap_candidates"]

#: Relative tolerance of the inner problem: coordinate descent stops when no coefficient moves
#: by more than ``_INNER_TOL * sqrt(cov_jj / cov_kk)``; the sigma alternation when sigma moves by
#: less than ``_INNER_TOL`` relative. Measured against L-BFGS-B: objective within 1e-10.
_INNER_TOL = 1e-11
#: A swap is accepted only when it lowers the score by more than this, relative to
#: ``max(1, |score|)``: the inner solutions are exact to about 1e-10, so smaller "improvements"
#: are rounding and accepting them could cycle.
_ACCEPT_RTOL = 1e-9
#: ``_CACHE_BYTES[0]``: the search's node cache size in bytes (None: ``defaults.TOPO_CACHE_BYTES``;
#: 0 switches the cache off, for the equivalence test and the benchmark).
_CACHE_BYTES = [None]


# --------------------------------------------------------------------------------------
# The inner problem for one order
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OrderFit:
    """The exact CoLiDE (or least-squares) solution for one topological order.

    Attributes
    ----------
    order : ndarray of int of shape (n_nodes,)
        The order, first the nodes with no predecessor.
    W : ndarray of shape (n_nodes, n_nodes)
        Optimal weights, nonzero only on edges forward in ``order`` (a DAG by construction).
    sigma : float, ndarray of shape (n_nodes,), or None
        Optimal noise standard deviation(s): a float for ``"ev"``, one per node for ``"nv"``,
        None for ``"ls"``.
    resid : ndarray of shape (n_nodes,)
        ``diag((I - W)^T cov (I - W))``, each node's mean squared residual (with targets: over
        its own rows ``O_j``, ``(e_j - W[:, j])^T C_j (e_j - W[:, j])``, not weighted).
    score : float
        The score at the optimum, L1 term included: eq. 3 (EV) or eq. 6 (NV) without the
        acyclicity term (zero on a DAG), or ``||X - XW||^2 / (2n) + lambda1 |W|_1`` (LS); with
        targets the masked score ``sum_j w_j (resid_j / (2 sigma_j) + sigma_j / 2) + lambda1 |W|_1``
        (``docs/conditions.md``).
    rq : ndarray of shape (n_nodes, 2) or None
        Per node ``(r_ols, q)``: on the node's active set its residual variance is
        ``r_ols + s^2 q`` at the penalty ``lambda1 * s`` (used to warm-start EV's sigma).
    iv : ndarray of shape (n_nodes, 2) or None
        Per node ``(lo, hi)``: the sigmas at which that active set stays optimal.
    A, B : ndarray of shape (n_nodes, n_nodes) or None
        The nodes' linear pieces: ``W[:, j] = A[:, j] - s B[:, j]`` for ``s`` in ``iv[j]``.
    """

    order: np.ndarray
    W: np.ndarray
    sigma: object
    resid: np.ndarray
    score: float
    rq: object = None
    iv: object = None
    A: object = None
    B: object = None


def cache_slots(n_nodes, nbytes=None):
    """Number of slots of the search's node cache (issue 32): a function of d and a memory bound.

    The smallest power of two >= ``defaults.TOPO_CACHE_SLOTS_PER_D2 * n_nodes**2`` (the distinct
    node problems of a search grow like d**2: ``docs/topo.md``, "Cache size"), capped by the
    largest power of two of slots that fits ``nbytes`` (default ``defaults.TOPO_CACHE_BYTES``);
    a slot holds ``2 n_nodes + 7`` float64 / int64 values, ``8 (2 n_nodes + 7)`` bytes.

    Parameters
    ----------
    n_nodes : int
        d, the number of nodes (>= 1).
    nbytes : int or None
        Memory bound in bytes (None: ``defaults.TOPO_CACHE_BYTES``); below one slot: no cache.

    Returns
    -------
    int
        0 or a power of two. E.g. with 256 MiB: 8,192 slots at d = 20, 65,536 at d = 50,
        131,072 at d = 100 (the bound; 16 d**2 asks 262,144) and 65,536 at d = 200.
    """
    nbytes = defaults.TOPO_CACHE_BYTES if nbytes is None else int(nbytes)
    d = int(n_nodes)
    per = 8 * (2 * d + 7)
    if nbytes < per:
        return 0
    cap = 1 << (int(nbytes // per).bit_length() - 1)
    want = 1 << max(int(defaults.TOPO_CACHE_SLOTS_PER_D2 * d * d) - 1, 0).bit_length()
    return min(cap, want)


class _Problem:
    """The data of the inner problems, checked and laid out once for the kernel.

    ``cov`` is a ``(d, d)`` covariance or a :class:`~colide_core.solver._objective.NodeCovariance`
    (several conditions with known intervention targets, ``docs/conditions.md``). The kernels
    read ``covs`` of shape ``(n_groups, d, d)`` and the node -> group index ``grp`` (one group,
    ``cov[None]``, for a plain covariance); ``node_w`` is None or the node weights
    ``w_j = |O_j| / n``, and ``lam_k = lam / w_j`` column by column the kernels' penalties (node
    j's score term ``w_j (r_j / (2 sigma_j) + sigma_j / 2) + lambda1 |w|_1``, divided by ``w_j``).
    """

    def __init__(self, cov, variant, lambda1, sigma0, edge_mask, l1_mask, tol):
        node = None
        if isinstance(cov, NodeCovariance):
            if cov.trivial:  # one covariance of weight 1: exactly the plain problem
                cov = np.array(cov.covs[0])
            else:
                node = cov
        if node is None:
            cov = np.array(cov, dtype=float)
            if cov.ndim != 2 or cov.shape[0] != cov.shape[1] or cov.shape[0] < 2:
                raise ValueError(f"cov must be a square (n_nodes, n_nodes) matrix with n_nodes >= 2, got {cov.shape}.")
            if not np.all(np.isfinite(cov)):
                raise FloatingPointError("The covariance contains NaN or Inf (data too large or not finite).")
        elif node.n_nodes < 2:
            raise ValueError(f"cov must have n_nodes >= 2, got {node.n_nodes}.")
        if variant not in defaults.VARIANTS:
            raise ValueError(f"variant must be one of {defaults.VARIANTS}, got {variant!r}.")
        if not (np.isfinite(lambda1) and lambda1 >= 0):
            raise ValueError(f"lambda1 must be a finite number >= 0, got {lambda1!r}.")
        if node is None:
            d = cov.shape[0]
            self.cov = np.ascontiguousarray(cov)
            self.covs = self.cov[None]
            self.grp = np.zeros(d, dtype=np.int64)
            self.node_w = None
            self.diag = np.diag(self.cov).copy()
        else:
            d = node.n_nodes
            self.cov = node  # residuals(), the swap ranking and the continuous start read the node form
            self.covs = np.ascontiguousarray(node.covs, dtype=float).copy()  # G d^2: one matrix per target pattern
            self.grp = np.ascontiguousarray(node.group, dtype=np.int64).copy()
            self.node_w = np.array(node.node_weight, dtype=float)
            self.wsum = float(np.sum(self.node_w))
            self.diag = self.covs[self.grp, np.arange(d), np.arange(d)].copy()
        if np.any(self.diag <= 0):
            raise FloatingPointError("The noise floor sigma0 is zero: a column of X has zero variance.")
        self.d = d
        self.variant = variant
        self.tol = float(tol)
        allowed = np.ones((d, d), dtype=bool)
        if edge_mask is not None:
            em = np.asarray(edge_mask, dtype=bool)
            if em.shape != (d, d):
                raise ValueError(f"edge_mask must have shape {(d, d)}, got {em.shape}.")
            allowed &= em
        np.fill_diagonal(allowed, False)
        self.allowed = np.ascontiguousarray(allowed)
        lam = np.full((d, d), float(lambda1))
        if l1_mask is not None:
            lm = np.asarray(l1_mask, dtype=float)
            if lm.shape != (d, d) or np.any(lm < 0) or not np.all(np.isfinite(lm)):
                raise ValueError(f"l1_mask must be a finite non-negative {(d, d)} matrix.")
            lam = lam * lm
        self.lam = np.ascontiguousarray(lam * allowed)
        # the kernels' penalties: node j's term divided by its weight w_j (the score keeps lam)
        self.lam_k = self.lam if self.node_w is None else np.ascontiguousarray(self.lam / self.node_w[None, :])
        if sigma0 is None:
            sigma0 = default_sigma0(cov, variant) if node is None else node.default_sigma0(variant)
        if variant == "ev":
            self.sigma0 = float(sigma0)
            self.sigma0_vec = np.full(d, self.sigma0)
        elif variant == "nv":
            self.sigma0_vec = np.ascontiguousarray(np.broadcast_to(np.asarray(sigma0, dtype=float), (d,)).copy())
            self.sigma0 = self.sigma0_vec
        else:
            self.sigma0 = None
            self.sigma0_vec = np.ones(d)
        if variant != "ls" and not np.all(np.asarray(self.sigma0) > 0):
            raise FloatingPointError("The noise floor sigma0 is zero: a column of X has zero variance.")

    # -- helpers ------------------------------------------------------------------------
    def score(self, W, resid, sigma):
        """Score with the L1 term (the one formula of :mod:`colide_core.solver._objective`).

        ``resid``: each node's mean squared residual over its own rows (``O_j``); with targets
        the score is ``sum_j w_j (resid_j / (2 sigma_j) + sigma_j / 2) + lambda1 |W|_1``.
        """
        if self.node_w is None:
            return _score_value(resid, sigma, self.variant) + float(np.sum(self.lam * np.abs(W)))
        return (_score_value(self.node_w * resid, sigma, self.variant, self.node_w)
                + float(np.sum(self.lam * np.abs(W))))

    def enable_cache(self, nbytes=None):
        """Keep solved node pieces keyed by (node, predecessor set), in at most ``nbytes``.

        A direct-mapped table (:func:`~colide_core.solver._topo_kernels._solve_nodes_fs_py`) of
        :func:`cache_slots` ``(d, nbytes)`` slots (``nbytes`` default ``defaults.TOPO_CACHE_BYTES``); ``nbytes=0`` switches it off.
        """
        d = self.d
        K = cache_slots(d, nbytes)
        rng = np.random.default_rng(20231)  # fixed: the keys, hence the results, are reproducible
        self._zobrist = rng.integers(1, 2 ** 62, size=2 * d, dtype=np.int64)
        self._cache = (np.zeros(K, dtype=np.int64), np.full(K, -1, dtype=np.int64), np.zeros((K, d)),
                       np.zeros((K, d)), np.zeros((K, 5)))

    def _kernel_fs(self, order, pos, W, resid, sig_vec, nodes, adapt, rq, iv, A, B):
        cache = getattr(self, "_cache", None)
        if cache is None:
            self._zobrist = np.zeros(2 * self.d, dtype=np.int64)
            cache = self._cache = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, self.d)),
                                   np.zeros((0, self.d)), np.zeros((0, 5)))
        return int(_solve_nodes_fs(self.covs, self.grp, order, pos, self.allowed, self.lam_k, W, resid, sig_vec,
                                   self.sigma0_vec, np.ascontiguousarray(nodes, dtype=np.int64), adapt, self.tol, rq,
                                   iv, A, B, self._zobrist, *cache))

    def solve(self, order, W, sigma, nodes=None, resid=None, rq=None, iv=None, A=None, B=None):
        """Exact solution for ``order`` warm-started at ``(W, sigma)``.

        ``nodes`` (default all) are the nodes whose predecessor sets changed since ``W`` was
        optimal; the others keep their columns and linear pieces ``rq``, ``iv``, ``A``, ``B``
        (:class:`OrderFit`), which must then be given (else every node is solved). Each node
        is solved exactly by the feature-sign active-set search
        (:func:`~colide_core.solver._topo_kernels._solve_nodes_fs_py`).
        For EV the shared sigma is eq. 5's fixed point on the nodes' pieces,
        ``s = sqrt(sum r_ols / (d - sum q))`` (with targets, eq. 5 over every unmasked residual:
        ``s = sqrt(sum w_j r_ols_j / (sum w_j - sum w_j q_j))``, ``w_j = |O_j| / n``); only the nodes whose piece does not hold at the
        new ``s`` are re-solved there, until every piece holds (then ``s`` is exact), and the
        columns follow as ``A - s B``. ``W`` is not modified. Returns an :class:`OrderFit`.
        """
        d = self.d
        order = np.ascontiguousarray(order, dtype=np.int64)
        pos = np.empty(d, dtype=np.int64)
        pos[order] = np.arange(d)
        W = np.array(W, dtype=float)
        if nodes is None or rq is None or iv is None or A is None or B is None or resid is None:
            nodes = np.arange(d, dtype=np.int64)
            rq, iv, A, B, resid = np.zeros((d, 2)), np.zeros((d, 2)), np.zeros((d, d)), np.zeros((d, d)), np.zeros(d)
        else:
            rq, iv, A, B, resid = rq.copy(), iv.copy(), A.copy(), B.copy(), np.array(resid, dtype=float)
        if self.variant == "nv":
            sig = np.array(sigma, dtype=float)
            self._kernel_fs(order, pos, W, resid, sig, nodes, True, rq, iv, A, B)
            return OrderFit(order, W, sig, resid, self.score(W, resid, sig), rq, iv, A, B)
        if self.variant == "ls":
            sig = np.ones(d)
            self._kernel_fs(order, pos, W, resid, sig, nodes, False, rq, iv, A, B)
            return OrderFit(order, W, None, resid, self.score(W, resid, None), rq, iv, A, B)
        s = float(sigma)
        sig = np.full(d, s)
        self._kernel_fs(order, pos, W, resid, sig, nodes, False, rq, iv, A, B)
        wn = self.node_w
        for _outer in range(_MAX_OUTER):
            if wn is None:
                den = d - float(rq[:, 1].sum())
                num = float(rq[:, 0].sum())
            else:  # pooled over every unmasked residual: node j counts |O_j| rows (weight w_j)
                den = self.wsum - float(np.sum(wn * rq[:, 1]))
                num = float(np.sum(wn * rq[:, 0]))
            if den > 0 and _outer < _MAX_OUTER // 2:
                s_new = math.sqrt(max(num, 0.0) / den)
            elif wn is None:  # plain alternation (eq. 5)
                s_new = math.sqrt(max(float(np.sum(rq[:, 0] + s * s * rq[:, 1])), 0.0) / d)
            else:
                s_new = math.sqrt(max(float(np.sum(wn * (rq[:, 0] + s * s * rq[:, 1]))), 0.0) / self.wsum)
            s_new = max(s_new, self.sigma0)
            settled = abs(s_new - s) <= self.tol * s
            s = s_new
            if settled:
                break
            bad = np.flatnonzero((iv[:, 0] > s) | (iv[:, 1] < s))
            if bad.size == 0:
                break
            sig[:] = s
            self._kernel_fs(order, pos, W, resid, sig, bad, False, rq, iv, A, B)
        W = A - s * B
        resid = np.maximum(rq[:, 0] + (s * s) * rq[:, 1], 0.0)
        if wn is None:
            s = max(math.sqrt(max(float(resid.sum()), 0.0) / d), self.sigma0)  # eq. 5 at the final W
        else:
            s = max(math.sqrt(max(float(np.sum(wn * resid)), 0.0) / self.wsum), self.sigma0)
        return OrderFit(order, W, s, resid, self.score(W, resid, s), rq, iv, A, B)

    def start_sigma(self, W):
        """A starting sigma: the closed-form update at ``W`` (eq. 5 / eq. 7; with targets over each
        node's unmasked rows)."""
        _, resid = residuals(W, self.cov)
        if self.node_w is not None:  # resid is weighted (w_j r_j): the masked updates
            return _sigma_from_resid(resid, self.variant, self.sigma0, self.node_w)
        resid = np.maximum(resid, 0.0)
        if self.variant == "ev":
            return max(math.sqrt(resid.sum() / self.d), self.sigma0)
        if self.variant == "nv":
            return np.maximum(np.sqrt(resid), self.sigma0_vec)
        return None


def _check_order(order, d):
    arr = np.asarray(order)
    if arr.ndim != 1 or arr.shape[0] != d or not np.issubdtype(arr.dtype, np.integer) \
            or not np.array_equal(np.sort(arr), np.arange(d)):
        raise ValueError(f"order must be a permutation of the {d} node indices 0..{d - 1}, got {order!r}.")
    return np.ascontiguousarray(arr, dtype=np.int64)


def _forward_part(W, order, allowed):
    """``W`` restricted to the edges forward in ``order`` and allowed (a copy)."""
    d = len(order)
    pos = np.empty(d, dtype=np.int64)
    pos[order] = np.arange(d)
    return np.where((pos[:, None] < pos[None, :]) & allowed, np.asarray(W, dtype=float), 0.0)


def order_solve(cov, order, *, variant=defaults.VARIANT, lambda1=defaults.LAMBDA1, sigma0=None, W_init=None,
                edge_mask=None, l1_mask=None, tol=_INNER_TOL):
    """Solve CoLiDE's convex problem for one topological order, exactly, from the covariance.

    ``min over W forward in order, sigma >= sigma0`` of the CoLiDE-EV score (paper eq. 3) or
    CoLiDE-NV score (eq. 6) plus ``lambda1 |W|_1``; the acyclicity term is zero for every such W.
    For NV the problem separates into one smoothed concomitant lasso per node; for EV the nodes
    share ``sigma``. Each node's lasso (penalty ``lambda1 * sigma``) is solved exactly by a
    feature-sign active-set search on the covariance, and sigma is the closed-form fixed point
    (eq. 5 / eq. 7) on the nodes' active sets (coordinate descent with the alternation is the
    fallback).

    Parameters
    ----------
    cov : ndarray of shape (n_nodes, n_nodes) or NodeCovariance
        ``X.T @ X / n`` for centred data ``X`` of shape ``(n_samples, n_nodes)``; or the per-node
        form of several conditions with known intervention targets
        (:class:`~colide_core.solver._objective.NodeCovariance`, from
        ``ConditionStats.node_covariances()``): node j's lasso then reads its own ``C_j`` with
        penalty ``lambda1 / w_j``, and the score is the masked one (``docs/conditions.md``).
    order : sequence of int of shape (n_nodes,)
        A permutation of ``0..n_nodes-1``; ``W[i, j]`` may be nonzero only when i comes before j.
    variant : {"nv", "ev", "ls"}, default="nv"
        ``"ls"`` is the least-squares score ``||X - XW||_F^2 / (2n) + lambda1 |W|_1`` (no sigma).
    lambda1 : float, default=0.05
        L1 weight (>= 0).
    sigma0 : float or ndarray of shape (n_nodes,), optional
        Noise floor; default :func:`~colide_core.solver._common.default_sigma0` (paper Section 3:
        ``1e-2 sqrt(tr(cov)/d)`` for EV, ``1e-2 sqrt(diag(cov))`` for NV; with targets
        ``NodeCovariance.default_sigma0``, the same on each node's ``C_j``).
    W_init : ndarray of shape (n_nodes, n_nodes), optional
        Warm start (its entries against the order are ignored). Not modified.
    edge_mask : ndarray of bool of shape (n_nodes, n_nodes), optional
        False marks a forbidden edge (held at zero).
    l1_mask : ndarray of float of shape (n_nodes, n_nodes), optional
        Per-edge multiplier of ``lambda1`` (0 for a required edge).
    tol : float, default=1e-11
        Relative tolerance of the coordinate descent and of the sigma alternation.

    Returns
    -------
    OrderFit
        ``W`` (a DAG consistent with ``order``), ``sigma``, ``resid``, ``score``.

    Raises
    ------
    ValueError
        If ``order`` is not a permutation, or a parameter is invalid.
    FloatingPointError
        If ``cov`` is not finite or a node has zero variance.
    """
    prob = _Problem(cov, variant, lambda1, sigma0, edge_mask, l1_mask, tol)
    order = _check_order(order, prob.d)
    W0 = np.zeros((prob.d, prob.d)) if W_init is None else _forward_part(W_init, order, prob.allowed)
    return prob.solve(order, W0, prob.start_sigma(W0))


# --------------------------------------------------------------------------------------
# Orders
# --------------------------------------------------------------------------------------
def resolve_order(order, d, names=None):
    """Node indices of a user-given topological order.

    Parameters
    ----------
    order : sequence of (int or str)
        Every node exactly once, first the nodes with no predecessor; names need ``names``.
    d : int
        Number of nodes.
    names : sequence of str, optional
        Node names (the columns of ``X``).

    Returns
    -------
    ndarray of int of shape (d,)

    Raises
    ------
    ValueError
        For an unknown name, an index out of range, a node missing or listed twice.
    """
    from colide_core._validation import node_index  # the one implementation of name/index resolution

    names = None if names is None else [str(n) for n in names]
    if isinstance(order, (str, bytes)) or not hasattr(order, "__iter__"):
        raise ValueError(f"init_order must be a sequence of nodes, got {order!r}.")
    idx = [node_index(x.item() if isinstance(x, np.generic) else x, names, d, what="init_order") for x in order]
    if len(idx) != d or len(set(idx)) != d:
        raise ValueError(f"init_order must list each of the {d} nodes exactly once, got {len(idx)} entries "
                         f"({len(set(idx))} distinct).")
    return np.asarray(idx, dtype=np.int64)


def order_from_weights(W, threshold=defaults.THRESHOLD, precedence=None, required=None):
    """A topological order of the DAG that raw weights describe (the start of the search).

    The DAG is ``threshold_to_dag(W, threshold)``; ties (nodes the DAG leaves unordered) are
    broken by the order of ``threshold_to_dag(W, 0)``, which also keeps the small edges, then
    by index. ``precedence`` edges (i must come before j) are added to both graphs.

    Parameters
    ----------
    W : ndarray of shape (n_nodes, n_nodes)
        Raw weights, ``W[i, j] != 0`` meaning i -> j.
    threshold : float, default=0.3
    precedence : ndarray of bool of shape (n_nodes, n_nodes), optional
        ``precedence[i, j]``: i must come before j (required edges, tiers).
    required : ndarray of bool of shape (n_nodes, n_nodes), optional
        Required edges, kept by the thresholding.

    Returns
    -------
    ndarray of int of shape (n_nodes,)
    """
    d = W.shape[0]
    prec = np.zeros((d, d), dtype=bool) if precedence is None else np.asarray(precedence, dtype=bool)

    def graph(A):
        G = nx.DiGraph()
        G.add_nodes_from(range(d))
        G.add_edges_from(zip(*(x.tolist() for x in np.nonzero((A != 0) | prec))))
        return G

    def topo(G, key):
        try:
            return list(nx.lexicographical_topological_sort(G, key=key))
        except nx.NetworkXUnfeasible:
            return None

    fine = topo(graph(threshold_to_dag(W, 0.0, required=required)), None) or topo(graph(np.zeros((d, d))), None)
    rank = {v: k for k, v in enumerate(fine)}
    coarse = topo(graph(threshold_to_dag(W, threshold, required=required)), rank.__getitem__)
    return np.asarray(coarse if coarse is not None else fine, dtype=np.int64)


def _respects(order, precedence):
    pos = np.empty(len(order), dtype=np.int64)
    pos[order] = np.arange(len(order))
    i, j = np.nonzero(precedence)
    return bool(np.all(pos[i] < pos[j]))


def swap_candidates(fit, prob_or_cov, *, variant=None, lambda1=None, edge_mask=None, l1_mask=None):
    """Every swap of two nodes of ``fit.order``, ranked by TOPO's rule (best candidates first).

    For the nodes ``u`` at position ``a`` and ``v`` at position ``b > a`` the swap enables the
    edge ``v -> u``. With ``B = W o W``, ``P = (I - B)^{-1}`` weighs the directed walks of the
    current DAG (``P[u, v] = 0`` exactly when no path leads from u to v, i.e. when adding
    ``v -> u`` would create no cycle: TOPO's condition ``[grad h(W)]_{vu} = 0``). The KKT
    violation of the missing edge is ``|grad_W score|_{vu} - lambda_{vu}`` (the L1
    subgradient bound; the gradient of the smooth score at the optimal sigma, eq. 5 / 7).
    Ranking: first the pairs with no path and a positive violation, largest violation first
    (TOPO's set ``Y(W, tau = 0, xi = 0)``); then all the others, the weakest walk weight
    ``P[u, v]`` first (TOPO's relaxation ``tau > 0``), ties by violation.

    Parameters
    ----------
    fit : OrderFit
    prob_or_cov : the inner problem, or ``cov`` with the keyword arguments below.

    Returns
    -------
    ndarray of int of shape (n_pairs, 2)
        Position pairs ``(a, b)``, ``a < b``, best first; all ``n_nodes (n_nodes - 1) / 2``.
    """
    prob = prob_or_cov if isinstance(prob_or_cov, _Problem) else _Problem(
        prob_or_cov, variant, lambda1, None, edge_mask, l1_mask, _INNER_TOL)
    order = fit.order
    d = len(order)
    R, _ = residuals(fit.W, prob.cov)
    sigma = 1.0 if fit.sigma is None else fit.sigma
    grad = _score_grad(R, sigma, prob.variant)
    viol = np.where(prob.allowed, np.abs(grad) - prob.lam, -np.inf)
    # Walk weights in the order's coordinates: Bp is strictly upper triangular.
    Bp = (fit.W * fit.W)[np.ix_(order, order)]
    with np.errstate(over="ignore", invalid="ignore"):
        Pp = solve_triangular(np.eye(d) - Bp, np.eye(d), lower=False, unit_diagonal=True, check_finite=False)
    Pp = np.where(np.isfinite(Pp), Pp, np.inf)
    a, b = np.triu_indices(d, 1)
    u, v = order[a], order[b]
    walk = Pp[a, b]
    vio = viol[v, u]
    free = (walk == 0.0) & (vio > 0.0)
    # lexsort: last key is primary
    rank = np.lexsort((-vio, np.where(free, -vio, walk), ~free))
    return np.stack([a[rank], b[rank]], axis=1)


def _swap_ok(order, a, b, prec):
    u, v = order[a], order[b]
    if prec[u, v]:
        return False
    mids = order[a + 1:b]
    return not (prec[u, mids].any() or prec[mids, v].any())


# --------------------------------------------------------------------------------------
# The outer search
# --------------------------------------------------------------------------------------
#: Swap evaluations between two callback calls inside a round of the search.
_CALLBACK_EVERY = 16


def topo_solve(
    cov,
    settings=None,
    *,
    beta_1=defaults.BETA_1,
    beta_2=defaults.BETA_2,
    sigma0=None,
    W_init=None,
    callback=None,
    edge_mask=None,
    l1_mask=None,
    init_order=None,
    precedence=None,
    required_mask=None,
    start_threshold=defaults.THRESHOLD,
    max_evaluations=None,
    **params,
):
    """CoLiDE-TOPO: minimise the CoLiDE score over topological orders by node swaps.

    Same arguments and the same :class:`~colide_core.SolverResult` as the other solvers of
    :data:`colide_core.SOLVERS` (``CoLiDE(solver="topo")``), plus the search's own.

    1. **Start.** ``init_order`` if given; else the topological order of ``W_init`` if given;
       else of the continuous CoLiDE solution (:func:`~colide_core.solver._fast.fast_solve` with the
       same variant, central path and prior knowledge, its callback calls passed through as
       stages ``0..K-1``). The order of raw weights is :func:`order_from_weights` at
       ``start_threshold``.
    2. **Inner problem** for an order: :func:`order_solve` (exact, warm-started).
    3. **Swaps.** Rank every swap of two nodes of the current order (:func:`swap_candidates`,
       TOPO's KKT-based rule), skipping swaps that would break a ``precedence``. Evaluate the
       first ``s0`` and accept the one with the lowest score if it is lower than the current
       one; if none is, evaluate the candidates up to ``s_small``, then up to ``s_large``
       (``topo_sizes = (s0, s_small, s_large)``, TOPO's defaults 10, 100, 1000). After an
       accepted swap start again at ``s0``. Stop when none of the first ``s_large`` candidates
       lowers the score (by more than ``1e-9`` relative): a local optimum over that candidate
       set, and over every swap when ``n_nodes (n_nodes - 1) / 2 <= s_large``.

    The score never increases: the result's score is at most the start order's.

    Parameters
    ----------
    cov : ndarray of shape (n_nodes, n_nodes) or NodeCovariance
        ``X.T @ X / n`` for centred data ``X`` of shape ``(n_samples, n_nodes)``; or the per-node
        form of several conditions with known intervention targets (as in :func:`order_solve`:
        node j's lasso reads its own ``C_j``; the continuous start and the swap ranking use the
        masked score and its per-node gradient; ``docs/conditions.md``).
    settings : colide_core.settings.RunSettings, optional
        The checked run settings (default: the defaults). The search reads ``variant``
        (``"ls"``: the least-squares TOPO baseline), ``lambda1``, ``topo_sizes``
        (``(s0, s_small, s_large)``, increasing) and ``max_time`` (seconds for the start and
        the search together, checked after every swap evaluation; when exceeded the best order
        so far is returned with ``stopped=True`` and a :class:`~colide_core.ConvergenceWarning`);
        the continuous start reads the rest (see :func:`~colide_core.solver._fast.fast_solve`).
    **params
        Run settings by name, applied over ``settings`` and checked by
        :meth:`colide_core.settings.RunSettings.create`.
    beta_1, beta_2 : float
        The continuous start's Adam decay rates.
    sigma0 : float or ndarray of shape (n_nodes,), optional
        Noise floor (default as in the continuous solvers).
    W_init : ndarray of shape (n_nodes, n_nodes), optional
        Raw weights whose topological order starts the search (skips the continuous start).
    callback : callable, optional
        ``callback(stage, iteration, objective)``: the continuous start's checkpoints
        (stages ``0..K-1``), then once per accepted swap and every 16 swap evaluations with
        ``stage = K`` (K the number of central-path stages), ``iteration`` the swaps accepted
        so far and ``objective`` the current score. Returning True stops the search; the result is the best order found so far
        (still a DAG), with ``stopped=True``.
    edge_mask : ndarray of bool of shape (n_nodes, n_nodes), optional
        False marks a forbidden edge: never in the support.
    l1_mask : ndarray of float of shape (n_nodes, n_nodes), optional
        Per-edge multiplier of ``lambda1`` (0 for a required edge).
    init_order : sequence of int, optional
        Starting order (node indices); must respect ``precedence``.
    precedence : ndarray of bool of shape (n_nodes, n_nodes), optional
        ``precedence[i, j]``: node i must come before node j in every order (required edges,
        tiers). The estimator builds it from ``required`` and ``tiers``.
    required_mask : ndarray of bool of shape (n_nodes, n_nodes), optional
        Required edges: counted in the continuous start's acyclicity function (as in
        :func:`~colide_core.solver._fast.fast_solve`) and kept when ordering its result.
    start_threshold : float, default=0.3
        Threshold under which the continuous start's edges do not constrain the start order.
    max_evaluations : int, optional
        Stop the search after this many swap evaluations with the best order found so far
        (``stop_reason="max_evaluations"``, a :class:`ConvergenceWarning`): a bound that, unlike
        ``max_time``, gives the same result on every machine (``solver="auto"`` uses it).

    Returns
    -------
    SolverResult
        ``W`` (the optimal weights of the final order: a DAG), ``sigma``, ``n_iter`` (swaps
        accepted), ``n_iter_per_stage`` (the start's steps per stage, then the swaps
        accepted), ``history`` (the start's checkpoints, then one entry per accepted swap with
        ``stage = K``, ``h = 0``; the extra key ``"evaluated"`` counts swap evaluations so
        far), ``objective`` (the final score with the L1 term; not multiplied by ``mu``),
        ``converged`` (a local optimum was reached), ``order`` (the final order) and
        ``start_objective`` in ``history["start_objective"]``.

    Raises
    ------
    ValueError
        For invalid parameters, an ``init_order`` that is not a permutation or breaks a
        precedence, or contradictory precedences.
    FloatingPointError
        If ``cov`` is not finite or a node has zero variance.

    References
    ----------
    Deng, Bello, Aragam and Ravikumar, "Optimizing NOTEARS Objectives via Topological Swaps",
    ICML 2023. Saboksayr, Mateos and Tepper, "CoLiDE", ICLR 2024, Appendix E.
    """
    t_start = time.perf_counter()
    st = loop_settings(settings, params)
    variant, lambda1, max_time, sizes = st.variant, st.lambda1, st.max_time, st.topo_sizes
    prob = _Problem(cov, variant, lambda1, sigma0, edge_mask, l1_mask, _INNER_TOL)
    prob.enable_cache(None if _CACHE_BYTES[0] is None else _CACHE_BYTES[0])
    d = prob.d
    prec = np.zeros((d, d), dtype=bool)
    if precedence is not None:
        prec = np.asarray(precedence, dtype=bool).copy()
        if prec.shape != (d, d):
            raise ValueError(f"precedence must have shape {(d, d)}, got {prec.shape}.")
        np.fill_diagonal(prec, False)
        G = nx.DiGraph(zip(*(x.tolist() for x in np.nonzero(prec))))
        if not nx.is_directed_acyclic_graph(G):
            raise ValueError("The precedences (required edges and tiers) form a cycle: no order satisfies them.")
    deadline = None if max_time is None else t_start + float(max_time)
    if max_evaluations is not None and (isinstance(max_evaluations, bool) or
                                        not isinstance(max_evaluations, (int, np.integer)) or max_evaluations < 1):
        raise ValueError(f"max_evaluations must be an integer >= 1, got {max_evaluations!r}.")

    # ---- 1. the start -------------------------------------------------------------------
    history = {"stage": [], "iteration": [], "objective": [], "h": [], "sigma": [], "evaluated": []}
    per_stage = ()
    K = len(st.mu_schedule)
    stop_reason = None
    if init_order is not None:
        order = _check_order(init_order, d)
        if not _respects(order, prec):
            raise ValueError("init_order breaks a precedence (a required edge or the tiers).")
        W0 = np.zeros((d, d)) if W_init is None else np.asarray(W_init, dtype=float)
    else:
        if W_init is not None:
            W0 = np.asarray(W_init, dtype=float)
            if W0.shape != (d, d):
                raise ValueError(f"W_init must have shape {(d, d)}, got {W0.shape}.")
        else:
            from colide_core.solver._fast import fast_solve  # the continuous solution starts the search

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                left = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
                start = fast_solve(prob.cov, st.replace(max_time=left), beta_1=beta_1, beta_2=beta_2,
                                   sigma0=sigma0, callback=callback, edge_mask=edge_mask, l1_mask=l1_mask,
                                   required_mask=required_mask)
            W0 = start.W
            per_stage = tuple(start.n_iter_per_stage)
            for key in ("stage", "iteration", "objective", "h", "sigma"):
                history[key] = list(start.history.get(key, []))
            history["evaluated"] = [0] * len(history["stage"])
            stop_reason = start.stop_reason
        order = order_from_weights(W0, start_threshold, precedence=prec,
                                   required=None if required_mask is None else np.asarray(required_mask, bool))
    W0 = _forward_part(W0, order, prob.allowed)
    fit = prob.solve(order, W0, prob.start_sigma(W0))

    # ---- 2. the swaps -------------------------------------------------------------------
    n_swaps = n_eval = 0
    converged = False
    has_prec = bool(prec.any())

    def record():
        history["stage"].append(K)
        history["iteration"].append(n_swaps)
        history["objective"].append(float(fit.score))
        history["h"].append(0.0)
        history["sigma"].append(None if fit.sigma is None else np.copy(fit.sigma))
        history["evaluated"].append(n_eval)

    record()  # the start order
    if stop_reason is None and callback is not None and callback(K, 0, float(fit.score)):
        stop_reason = "callback"
    while stop_reason is None:
        ranked = swap_candidates(fit, prob)
        if has_prec:
            ranked = [ab for ab in ranked if _swap_ok(fit.order, ab[0], ab[1], prec)]
        best = None
        lo = 0
        margin = _ACCEPT_RTOL * max(1.0, abs(fit.score))
        for hi in sizes:
            for a, b in ranked[lo:hi]:
                cand = _evaluate_swap(prob, fit, int(a), int(b))
                n_eval += 1
                if cand.score < fit.score - margin and (best is None or cand.score < best.score):
                    best = cand
                if deadline is not None and time.perf_counter() > deadline:
                    stop_reason = "max_time"
                    break
                if max_evaluations is not None and n_eval >= max_evaluations:
                    stop_reason = "max_evaluations"
                    break
                # Stop and the end of a session are heard within a round too, not only after an
                # accepted swap (a round at d = 200 with large topo_sizes went 284 s unchecked).
                if callback is not None and n_eval % _CALLBACK_EVERY == 0 and callback(K, n_swaps, float(fit.score)):
                    stop_reason = "callback"
                    break
            lo = hi
            if best is not None or stop_reason is not None or lo >= len(ranked):
                break
        if best is None:
            converged = stop_reason is None
            break
        fit = best
        n_swaps += 1
        record()
        if stop_reason is None and callback is not None and callback(K, n_swaps, float(fit.score)):
            stop_reason = "callback"
    if stop_reason == "max_time":
        warnings.warn(f"CoLiDE-TOPO stopped after max_time={max_time} s with the best order found so far.",
                      ConvergenceWarning, stacklevel=2)
    elif stop_reason == "max_evaluations":
        warnings.warn(f"CoLiDE-TOPO stopped after max_evaluations={max_evaluations} swap evaluations with the best "
                      "order found so far.", ConvergenceWarning, stacklevel=2)
    if history["evaluated"][-1] != n_eval:
        record()  # the end of the search: the evaluations that found no better swap
    return SolverResult(
        W=fit.W,
        sigma=fit.sigma,
        n_iter=n_swaps,
        n_iter_per_stage=per_stage + (n_swaps,),
        history=history,
        objective=float(fit.score),
        converged=bool(converged),
        stopped=stop_reason is not None,
        stop_reason=stop_reason,
        fit_time=time.perf_counter() - t_start,
        order=tuple(int(x) for x in fit.order),
    )


def _evaluate_swap(prob, fit, a, b):
    """The exact solution after swapping the nodes at positions ``a < b`` of ``fit.order``.

    Only the nodes at positions ``a..b`` change predecessor sets; they are re-solved
    warm-started (their columns restricted to the new predecessors). For EV the shared sigma
    then moves and :meth:`_Problem.solve` re-fixes it exactly.
    """
    order = fit.order.copy()
    order[a], order[b] = order[b], order[a]
    affected = order[a:b + 1]
    # the kernel reads only the new predecessors' entries of the affected columns: no masking
    return prob.solve(order, fit.W, fit.sigma, nodes=affected, resid=fit.resid, rq=fit.rq, iv=fit.iv, A=fit.A,
                      B=fit.B)
