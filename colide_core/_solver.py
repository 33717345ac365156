"""CoLiDE: Concomitant Linear DAG Estimation (Saboksayr, Mateos and Tepper, ICLR 2024).

This module holds the pure pieces of the method (scores, the log-det acyclicity function,
the closed-form noise updates), the solver loop :func:`colide_solve`, and the thin estimator
:class:`CoLiDE` that wraps it.

Conventions
-----------
* ``X`` has shape ``(n_samples, n_nodes)``. The paper writes X as ``d x n``; every formula
  here is the paper's with X transposed, so ``cov = X.T @ X / n`` for centred X.
* ``W`` has shape ``(n_nodes, n_nodes)`` and ``W[i, j] != 0`` means the edge i -> j; the
  linear SEM is ``X = X @ W + Z``.
* ``sigma`` is a noise *standard deviation*: a float for the equal-variance (EV) variant,
  an array of shape ``(n_nodes,)`` for the non-equal-variance (NV) variant.

Every function below works on the covariance, never on the raw data, which is all the
method needs (paper Appendix B).
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._graph import threshold_to_dag
from ._validation import check_data, data_covariance  # noqa: F401 - re-exported

__all__ = [
    "CoLiDE",
    "ConvergenceWarning",
    "SolverResult",
    "colide_solve",
    "h_ldet",
    "score_ev",
    "score_nv",
    "score_ls",
    "sigma_update",
    "progress_fraction",
]

VARIANTS = ("ev", "nv", "ls")
#: An entry of ``inv(s I - W o W)`` below this value means W left the M-matrix domain
#: (the inverse of a nonsingular M-matrix is entry-wise non-negative). Same tolerance as
#: the authors' and DAGMA's code.
_DOMAIN_TOL = -1e-6
_MAX_STAGE_RESTARTS = 10
_MAX_HALVINGS = 60


class ConvergenceWarning(UserWarning):
    """Issued when the solver stops on ``max_iter`` or ``max_time`` before meeting ``tol``."""


# --------------------------------------------------------------------------------------
# Pure building blocks: each returns (value, grad).
# --------------------------------------------------------------------------------------
def h_ldet(W, s=1.0):
    """Log-determinant acyclicity function and its gradient (paper Section 3, Appendix B.3).

    ``h_ldet(W, s) = d log(s) - log det(s I - W o W)``, with gradient
    ``2 (s I - W o W)^{-T} o W``, where ``o`` is the entry-wise product.

    Parameters
    ----------
    W : ndarray of shape (n_nodes, n_nodes)
        Weighted adjacency, ``W[i, j] != 0`` meaning i -> j.
    s : float, default=1.0
        Positive log-det parameter. ``h_ldet`` is zero exactly on DAGs inside the domain
        where ``s I - W o W`` is an M-matrix, and positive elsewhere in that domain.

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
        If ``s <= 0``.
    """
    W = np.asarray(W, dtype=float)
    if not s > 0:
        raise ValueError(f"s must be positive, got {s!r}.")
    d = W.shape[0]
    M = s * np.eye(d) - W * W
    sign, logdet = np.linalg.slogdet(M)
    Minv = np.linalg.inv(M) if sign > 0 else None
    if Minv is None or not np.all(np.isfinite(Minv)) or Minv.min() < _DOMAIN_TOL:
        raise FloatingPointError(
            "W is outside the log-det domain: s*I - W*W is not a nonsingular M-matrix."
        )
    return d * np.log(s) - logdet, 2.0 * Minv.T * W


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
    d = W.shape[0]
    R = cov - cov @ W
    return float(np.sum((np.eye(d) - W) * R)) / (2.0 * sigma) + d * sigma / 2.0, -R / sigma


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
    d = W.shape[0]
    sigma = np.asarray(sigma, dtype=float)
    R = cov - cov @ W
    resid = np.sum((np.eye(d) - W) * R, axis=0)
    return 0.5 * float(np.sum(resid / sigma)) + 0.5 * float(np.sum(sigma)), -R / sigma[None, :]


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
    d = W.shape[0]
    R = cov - cov @ W
    return 0.5 * float(np.sum((np.eye(d) - W) * R)), -R


def sigma_update(W, cov, variant, sigma0):
    """Closed-form noise update of the BCD loop (paper eq. 5 for EV, eq. 7 for NV).

    Only ``diag((I - W)^T cov (I - W))`` is needed, computed in O(d^2) from
    ``cov (I - W)`` without forming the full product's off-diagonal.

    Parameters
    ----------
    W, cov : ndarray of shape (n_nodes, n_nodes)
    variant : {"ev", "nv"}
    sigma0 : float or ndarray of shape (n_nodes,)
        Lower bound(s) on sigma.

    Returns
    -------
    sigma : float (EV) or ndarray of shape (n_nodes,) (NV)
        Noise standard deviation(s), floored at ``sigma0``.
    """
    d = W.shape[0]
    return _sigma_from_R(np.eye(d) - W, cov - cov @ W, variant, sigma0)


def _sigma_from_R(IW, R, variant, sigma0):
    resid = np.sum(IW * R, axis=0)  # diag((I-W)^T cov (I-W)), shape (d,)
    if variant == "ev":
        return max(float(np.sqrt(max(resid.sum(), 0.0) / resid.size)), float(sigma0))
    return np.maximum(np.sqrt(np.maximum(resid, 0.0)), sigma0)


def _smooth_score(IW, R, sigma, variant):
    resid = np.sum(IW * R, axis=0)
    d = resid.size
    if variant == "ev":
        return float(resid.sum()) / (2.0 * sigma) + d * sigma / 2.0
    if variant == "nv":
        return 0.5 * float(np.sum(resid / sigma)) + 0.5 * float(np.sum(sigma))
    return 0.5 * float(resid.sum())


def _objective(W, sigma, cov, variant, mu, lambda1, s):
    """Stage objective ``mu * (score + lambda1 |W|_1) + h_ldet(W, s)`` (paper eq. 4 / 6).

    ``lambda1`` may be a scalar or an ``(n_nodes, n_nodes)`` matrix of per-edge L1 weights.
    Returns ``(objective, h)``; ``h`` is ``inf`` outside the log-det domain.
    """
    d = W.shape[0]
    IW = np.eye(d) - W
    score = _smooth_score(IW, cov @ IW, sigma, variant)
    sign, logdet = np.linalg.slogdet(s * np.eye(d) - W * W)
    h = d * np.log(s) - logdet if sign > 0 else np.inf
    return mu * (score + float(np.sum(lambda1 * np.abs(W)))) + h, h


def _inv_in_domain(W, s, eye):
    """``inv(s I - W o W)`` if W is inside the log-det domain, else None."""
    try:
        Minv = np.linalg.inv(s * eye - W * W)
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.isfinite(Minv)) or Minv.min() < _DOMAIN_TOL:
        return None
    return Minv


# --------------------------------------------------------------------------------------
# The solver loop.
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SolverResult:
    """Everything :func:`colide_solve` computed.

    Attributes
    ----------
    W : ndarray of shape (n_nodes, n_nodes)
        Raw weights at the end of the last stage, ``W[i, j] != 0`` meaning i -> j.
    sigma : float, ndarray of shape (n_nodes,), or None
        Noise standard deviation(s); None for the ``"ls"`` variant.
    n_iter : int
        Total number of first-order steps taken (all stages, restarts included).
    n_iter_per_stage : tuple of int
        Steps taken in the accepted run of each stage.
    history : dict of list
        One entry per checkpoint: ``"stage"``, ``"iteration"`` (within the stage),
        ``"objective"``, ``"h"``, ``"sigma"``.
    objective : float
        Final stage objective (paper eq. 4 or 6 at the last ``mu``, ``s``).
    converged : bool
        True if every stage met ``tol`` before its ``max_iter``.
    stopped : bool
        True if the callback asked to stop or ``max_time`` ran out: W is then partial.
    stop_reason : str or None
        ``"callback"``, ``"max_time"`` or None.
    lr_used, s_used : tuple of float
        Step size and ``s`` each stage ended with (they change when the solver backs off).
    """

    W: np.ndarray
    sigma: object
    n_iter: int
    n_iter_per_stage: tuple
    history: dict
    objective: float
    converged: bool
    stopped: bool = False
    stop_reason: object = None
    lr_used: tuple = field(default_factory=tuple)
    s_used: tuple = field(default_factory=tuple)


def default_sigma0(cov, variant):
    """Lower bound on the noise scale (paper Section 3).

    EV: ``sigma0 = ||X||_F / sqrt(d n) * 1e-2 = sqrt(tr(cov) / d) * 1e-2``.
    NV: ``Sigma0 = sqrt(diag(cov)) * 1e-2``.

    Parameters
    ----------
    cov : ndarray of shape (n_nodes, n_nodes)
        Covariance of centred data.
    variant : {"ev", "nv", "ls"}

    Returns
    -------
    float, ndarray of shape (n_nodes,), or None (for ``"ls"``)
    """
    diag = np.clip(np.diag(cov), 0.0, None)
    if variant == "ev":
        return float(np.sqrt(diag.sum() / diag.size)) * 1e-2
    if variant == "nv":
        return np.sqrt(diag) * 1e-2
    return None


def colide_solve(
    cov,
    *,
    variant="nv",
    lambda1=0.05,
    mu_schedule=(1.0, 0.1, 0.01, 0.001),
    s_schedule=(1.0, 0.9, 0.8, 0.7),
    max_iter=(20000, 20000, 20000, 70000),
    lr=3e-4,
    tol=1e-6,
    checkpoint=1000,
    beta_1=0.99,
    beta_2=0.999,
    sigma0=None,
    W_init=None,
    callback=None,
    max_time=None,
    edge_mask=None,
    l1_mask=None,
):
    """Run the paper's Algorithm 1: BCD with one Adam step on W, then the closed-form sigma.

    For each stage ``k`` with ``(mu_k, s_k, T_k)`` the solver repeats, at most ``T_k`` times:

    1. one Adam step on W along the (sub)gradient of
       ``mu_k * (score(W, sigma) + lambda1 * |W|_1) + h_ldet(W, s_k)``;
    2. the closed-form sigma update (eq. 5 or 7), floored at ``sigma0``.

    Every ``checkpoint`` steps the objective is evaluated; the stage stops when its relative
    change since the previous checkpoint is at most ``tol`` (the authors' ``checkpoint=1000``
    rule; comparing consecutive steps would stop at once). Adam's moments restart with each
    stage; W and sigma are warm-started from the previous stage.

    Leaving the log-det domain (``s I - W o W`` no longer an M-matrix, or NaN/Inf):

    * inside a stage, the step is undone and retaken with half the step size, repeatedly
      (up to 60 halvings); the smaller step size is kept for the rest of the stage;
    * if the warm start is itself outside the domain of ``s_k`` (``s`` shrinks between
      stages), the stage restarts from its warm start with ``s_k + 0.1`` and half the step
      size, as in the authors' code, up to 10 times.

    Parameters
    ----------
    cov : ndarray of shape (n_nodes, n_nodes)
        ``X.T @ X / n`` for centred data ``X`` of shape ``(n_samples, n_nodes)``.
    variant : {"nv", "ev", "ls"}, default="nv"
        ``"ev"``: CoLiDE-EV (eq. 4); ``"nv"``: CoLiDE-NV (eq. 6); ``"ls"``: DAGMA-linear's
        least-squares score, the same optimiser without noise estimation.
    lambda1 : float, default=0.05
        L1 weight (>= 0).
    mu_schedule, s_schedule : tuple of float
        Central-path weights ``mu_k`` (> 0) and log-det parameters ``s_k`` (> 0), one per stage.
    max_iter : tuple of int
        Maximum BCD iterations ``T_k`` per stage.
    lr : float, default=3e-4
        Adam step size.
    tol : float, default=1e-6
        Relative objective change between checkpoints that ends a stage.
    checkpoint : int, default=1000
        Steps between objective evaluations, convergence checks, history entries and
        callback calls.
    beta_1, beta_2 : float
        Adam moment decay rates (0.99 and 0.999 as in the authors' and DAGMA's code).
    sigma0 : float or ndarray of shape (n_nodes,), optional
        Noise floor; defaults to :func:`default_sigma0`. Sigma starts at ``100 * sigma0``.
    W_init : ndarray of shape (n_nodes, n_nodes), optional
        Warm start (default zeros, always in the domain). Not modified.
    callback : callable, optional
        ``callback(stage, iteration, objective)`` at every checkpoint (``iteration`` counts
        within the stage). If it returns True the solve stops and the partial result is
        returned with ``stopped=True``.
    max_time : float, optional
        Wall-clock budget in seconds, checked after every step; when exceeded the solve
        stops with ``stopped=True`` and a :class:`ConvergenceWarning` (overshoot: one step).
    edge_mask : ndarray of bool of shape (n_nodes, n_nodes), optional
        False marks a forbidden edge: its weight is held at exactly zero (its gradient is
        masked, so Adam never moves it). The diagonal is ignored (h_ldet keeps it at zero).
    l1_mask : ndarray of float of shape (n_nodes, n_nodes), optional
        Per-edge multiplier of ``lambda1`` (0 exempts a required edge from the L1 penalty).

    Returns
    -------
    SolverResult

    Raises
    ------
    ValueError
        For invalid parameters (unknown variant, schedules of different lengths, non-positive
        values, a ``cov`` that is not a finite square matrix).
    FloatingPointError
        If the iterates cannot be kept inside the log-det domain or become non-finite even
        after backing off.

    Warns
    -----
    ConvergenceWarning
        If the last stage hits its ``max_iter`` before ``tol``, or ``max_time`` runs out.
    """
    cov = np.array(cov, dtype=float)  # a private copy
    _check_solver_params(cov, variant, lambda1, mu_schedule, s_schedule, max_iter, lr, tol, checkpoint)
    d = cov.shape[0]
    eye = np.eye(d)
    if sigma0 is None:
        sigma0 = default_sigma0(cov, variant)
    if variant == "ev":
        sigma0 = float(sigma0)
    elif variant == "nv":
        sigma0 = np.broadcast_to(np.asarray(sigma0, dtype=float), (d,)).copy()
    if variant != "ls" and not np.all(np.asarray(sigma0) > 0):
        raise FloatingPointError("The noise floor sigma0 is zero: a column of X has zero variance.")
    sigma = None if variant == "ls" else sigma0 * 100.0
    W = np.zeros((d, d)) if W_init is None else np.array(W_init, dtype=float)
    if W.shape != (d, d):
        raise ValueError(f"W_init must have shape {(d, d)}, got {W.shape}.")
    grad_mask = None
    if edge_mask is not None:
        grad_mask = np.asarray(edge_mask, dtype=bool)
        if grad_mask.shape != (d, d):
            raise ValueError(f"edge_mask must have shape {(d, d)}, got {grad_mask.shape}.")
        grad_mask = grad_mask.astype(float)
        W = W * grad_mask  # a forbidden edge starts, and stays, at zero
    l1 = float(lambda1)
    if l1_mask is not None:
        l1_mask = np.asarray(l1_mask, dtype=float)
        if l1_mask.shape != (d, d) or np.any(l1_mask < 0):
            raise ValueError(f"l1_mask must be a non-negative {(d, d)} matrix.")
        l1 = l1 * l1_mask

    t_start = time.perf_counter()
    deadline = None if max_time is None else t_start + float(max_time)
    history = {"stage": [], "iteration": [], "objective": [], "h": [], "sigma": []}
    n_iter_total = 0
    per_stage, lr_used, s_used = [], [], []
    converged_all = True
    stop_reason = None
    last_stage_converged = True
    obj = np.nan

    for k, (mu, s, T) in enumerate(zip(mu_schedule, s_schedule, max_iter)):
        lr_k, s_k = float(lr), float(s)
        for _restart in range(_MAX_STAGE_RESTARTS + 1):
            if _inv_in_domain(W, s_k, eye) is not None:
                break
            lr_k *= 0.5
            s_k += 0.1
        else:
            raise FloatingPointError(
                f"Stage {k}: the warm start stays outside the log-det domain even with s={s_k:.2f}."
            )
        out = _adam_stage(
            W, sigma, cov, eye, variant, float(mu), l1, s_k, int(T), lr_k, float(tol),
            int(checkpoint), beta_1, beta_2, sigma0, k, history, callback, deadline, grad_mask,
        )
        W, sigma, n_it, lr_k, stage_converged, obj, stop_reason = out
        n_iter_total += n_it
        per_stage.append(n_it)
        lr_used.append(lr_k)
        s_used.append(s_k)
        converged_all &= stage_converged
        last_stage_converged = stage_converged
        if stop_reason is not None:
            break

    if stop_reason == "max_time":
        warnings.warn(
            f"CoLiDE stopped after max_time={max_time} s with a partial result.", ConvergenceWarning, stacklevel=2
        )
    elif stop_reason is None and not last_stage_converged:
        warnings.warn(
            "CoLiDE's last stage reached max_iter before the relative objective change fell below "
            f"tol={tol}; consider raising max_iter.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return SolverResult(
        W=W,
        sigma=sigma,
        n_iter=n_iter_total,
        n_iter_per_stage=tuple(per_stage),
        history=history,
        objective=float(obj),
        converged=bool(converged_all and stop_reason is None),
        stopped=stop_reason is not None,
        stop_reason=stop_reason,
        lr_used=tuple(lr_used),
        s_used=tuple(s_used),
    )


def _adam_stage(*args, **kwargs):
    """One stage of Algorithm 1 (see :func:`colide_solve`). Returns the new state.

    Overflow in Adam's moments (gradients beyond ~1e154, e.g. the scale-dependent ``"ls"``
    score on data of scale 1e80) is not allowed to pass silently as a zero step: it is
    detected at the first step and at every checkpoint and raised as FloatingPointError.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return _adam_stage_loop(*args, **kwargs)


def _check_moments(m, v, stage, t):
    if not (np.isfinite(v).all() and np.isfinite(m).all()):
        raise FloatingPointError(
            f"Stage {stage}, step {t}: the gradient overflows (the data's scale is too large for "
            "this score); standardise or rescale the data."
        )


def _adam_stage_loop(W, sigma, cov, eye, variant, mu, lambda1, s, T, lr, tol, checkpoint,
                     beta_1, beta_2, sigma0, stage, history, callback, deadline, grad_mask=None):
    W = W.copy()
    Minv = _inv_in_domain(W, s, eye)
    IW = eye - W
    R = cov @ IW  # cov (I - W): shared by the gradient and the sigma update
    m = np.zeros_like(W)
    v = np.zeros_like(W)
    obj_prev = np.inf
    obj = np.nan
    b1t = b2t = 1.0
    for t in range(1, T + 1):
        if variant == "ev":
            grad = -R / sigma
        elif variant == "nv":
            grad = R / -sigma[None, :]
        else:
            grad = -R
        if np.any(lambda1):
            grad += lambda1 * np.sign(W)
        grad *= mu
        grad += 2.0 * Minv.T * W
        if grad_mask is not None:
            grad *= grad_mask
        m *= beta_1
        m += (1.0 - beta_1) * grad
        v *= beta_2
        v += (1.0 - beta_2) * (grad * grad)
        b1t *= beta_1
        b2t *= beta_2
        if t == 1:
            _check_moments(m, v, stage, t)
        direction = (m / (1.0 - b1t)) / (np.sqrt(v / (1.0 - b2t)) + 1e-8)
        W_new = W - lr * direction
        Minv_new = _inv_in_domain(W_new, s, eye)
        halvings = 0
        while Minv_new is None:
            halvings += 1
            if halvings > _MAX_HALVINGS:
                raise FloatingPointError(
                    f"Stage {stage}, step {t}: could not stay inside the log-det domain "
                    f"(step size halved {_MAX_HALVINGS} times)."
                )
            lr *= 0.5
            W_new = W - lr * direction
            Minv_new = _inv_in_domain(W_new, s, eye)
        W, Minv = W_new, Minv_new
        IW = eye - W
        R = cov @ IW
        if variant != "ls":
            sigma = _sigma_from_R(IW, R, variant, sigma0)
        # The wall-clock budget is checked every step (a checkpoint can be seconds away at
        # large d); running out forces a final checkpoint so the partial result is recorded.
        out_of_time = deadline is not None and time.perf_counter() > deadline
        if t % checkpoint == 0 or t == T or out_of_time:
            _check_moments(m, v, stage, t)
            score = _smooth_score(IW, R, sigma, variant)
            sign, logdet = np.linalg.slogdet(s * eye - W * W)
            h = eye.shape[0] * np.log(s) - logdet if sign > 0 else np.inf
            obj = mu * (score + float(np.sum(lambda1 * np.abs(W)))) + h
            if not np.isfinite(obj):
                raise FloatingPointError(f"Stage {stage}, step {t}: the objective is not finite.")
            history["stage"].append(stage)
            history["iteration"].append(t)
            history["objective"].append(float(obj))
            history["h"].append(float(h))
            history["sigma"].append(None if sigma is None else np.copy(sigma))
            if callback is not None and callback(stage, t, float(obj)):
                return W, sigma, t, lr, False, obj, "callback"
            if out_of_time:
                return W, sigma, t, lr, False, obj, "max_time"
            if np.isfinite(obj_prev) and abs(obj_prev - obj) <= tol * abs(obj_prev):
                return W, sigma, t, lr, True, obj, None
            obj_prev = obj
    return W, sigma, T, lr, False, obj, None


def _check_solver_params(cov, variant, lambda1, mu_schedule, s_schedule, max_iter, lr, tol, checkpoint):
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}.")
    if cov.ndim != 2 or cov.shape[0] != cov.shape[1] or cov.shape[0] < 2:
        raise ValueError(f"cov must be a square (n_nodes, n_nodes) matrix with n_nodes >= 2, got {cov.shape}.")
    if not np.all(np.isfinite(cov)):
        raise FloatingPointError("The covariance contains NaN or Inf (data too large or not finite).")
    lens = {len(mu_schedule), len(s_schedule), len(max_iter)}
    if len(lens) != 1 or 0 in lens:
        raise ValueError(
            "mu_schedule, s_schedule and max_iter must be non-empty and of equal length, got lengths "
            f"{len(mu_schedule)}, {len(s_schedule)}, {len(max_iter)}."
        )
    if not (np.isfinite(lambda1) and lambda1 >= 0):
        raise ValueError(f"lambda1 must be a finite number >= 0, got {lambda1!r}.")
    if any(not (np.isfinite(x) and x > 0) for x in (*mu_schedule, *s_schedule)):
        raise ValueError("mu_schedule and s_schedule entries must be finite and > 0.")
    if any(int(x) != x or x < 1 for x in max_iter):
        raise ValueError(f"max_iter entries must be positive integers, got {tuple(max_iter)}.")
    if not (np.isfinite(lr) and lr > 0):
        raise ValueError(f"lr must be > 0, got {lr!r}.")
    if not (np.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol must be >= 0, got {tol!r}.")
    if int(checkpoint) != checkpoint or checkpoint < 1:
        raise ValueError(f"checkpoint must be a positive integer, got {checkpoint!r}.")


# --------------------------------------------------------------------------------------
# Data checks shared by the estimator, the bootstrap and the lambda path.
# --------------------------------------------------------------------------------------
def progress_fraction(max_iter, stage, iteration):
    """Fraction of a solve's iteration budget used, from its callback's arguments.

    Both solvers report ``iteration`` in faithful steps (:func:`colide_solve` counts its
    steps; :func:`~colide_core._fast.fast_solve` its ODE time / ``lr``), the unit of
    ``max_iter``.

    Parameters
    ----------
    max_iter : sequence of int
        Per-stage budgets ``T_k`` as passed to :class:`CoLiDE`.
    stage : int
        Current stage, 0-based (the callback's first argument).
    iteration : int
        Progress within the stage (the callback's second argument).

    Returns
    -------
    float
        ``(sum(T[:stage]) + min(iteration, T[stage])) / sum(T)``, in [0, 1]. A stage that
        converges early makes the fraction jump to the start of the next one.
    """
    T = [float(t) for t in max_iter]
    total = sum(T)
    if total <= 0:
        return 1.0
    k = max(0, int(stage))
    cur = T[k] if k < len(T) else 0.0
    done = sum(T[:k]) + min(float(iteration), cur)
    return min(1.0, max(0.0, done / total))


# --------------------------------------------------------------------------------------
# The estimator.
# --------------------------------------------------------------------------------------
class CoLiDE:
    """CoLiDE estimator: a linear DAG and its exogenous noise scale(s) learned jointly.

    A thin wrapper over :func:`colide_solve`, following the scikit-learn contract:
    ``__init__`` only stores parameters, :meth:`fit` validates and returns ``self``.

    Parameters
    ----------
    variant : {"nv", "ev", "ls"}, default="nv"
        ``"ev"``: equal noise variance (paper eq. 3-5). ``"nv"``: non-equal variances
        (eq. 6-7). ``"ls"``: the least-squares score of DAGMA-linear with the same
        optimiser (a baseline; ``sigma_`` is None).
    lambda1 : float, default=0.05
        L1 weight (>= 0).
    mu_schedule : tuple of float, default=(1.0, 0.1, 0.01, 0.001)
        Central-path weights ``mu_k``.
    s_schedule : tuple of float, default=(1.0, 0.9, 0.8, 0.7)
        Log-det parameters ``s_k``.
    max_iter : tuple of int, default=(20000, 20000, 20000, 70000)
        Maximum BCD iterations ``T_k`` per stage.
    lr : float, default=3e-4
        Adam step size.
    tol : float, default=1e-6
        Relative objective change between checkpoints that ends a stage.
    threshold : float, default=0.3
        Post-processing magnitude threshold for :attr:`adjacency_`.
    random_state : None, int or numpy Generator, default=None
        Accepted for API symmetry. The solvers are deterministic (W starts at zero), so the
        same data and parameters always give bit-identical results.
    solver : {"auto", "fast", "adam"}, default="auto"
        ``"auto"`` (alias ``"fast"``, the default) solves the same problems, eq. 4 / eq. 6
        along the same central path, with the faster solver of ``colide_core._fast``
        (:func:`~colide_core._fast.fast_solve`; see ``benchmarks/bench_solver.py`` for the
        measured speed-up and accuracy). ``"adam"`` is the paper-faithful schedule of
        Algorithm 1 (one Adam step per BCD iteration), the reference for every speed claim.
        The two reach the same objective to about 1e-3 relative (usually the fast one is
        slightly lower) but not bit-identical weights; ``n_iter_`` and the checkpoints count
        each solver's own steps.
    checkpoint : int, default=1000
        Steps between convergence checks, history entries and callback calls.
    max_time : float, optional
        Wall-clock budget in seconds (see :func:`colide_solve`).
    forbidden, required : ndarray of bool of shape (n_nodes, n_nodes) or list of (source, target), optional
        Prior knowledge. A forbidden edge is held at zero during optimisation; a required edge
        is exempt from the L1 penalty and never removed by post-processing. Pairs may be
        node names (when ``X`` is a DataFrame) or integer indices.
    tiers : list of list of node names or indices, optional
        Ordered layers: no edge may point from a later tier to an earlier one.

    Attributes
    ----------
    W_ : ndarray of shape (n_nodes, n_nodes)
        Raw learned weights; ``W_[i, j] != 0`` means i -> j.
    adjacency_ : ndarray of shape (n_nodes, n_nodes)
        ``W_`` after :func:`~colide_core.threshold_to_dag`: guaranteed to be a DAG.
    sigma_ : float, ndarray of shape (n_nodes,), or None
        Estimated noise standard deviation(s), in the units of the data: a float for
        ``"ev"``, one per node for ``"nv"``, None for ``"ls"``.
    n_iter_ : int
        Total BCD iterations over all stages.
    history_ : dict of list
        Per checkpoint: ``"stage"``, ``"iteration"``, ``"objective"``, ``"h"``, ``"sigma"``.
    node_names_ : list of str or None
        Column names when ``X`` was a DataFrame.
    n_features_in_ : int
        Number of nodes.
    converged_ : bool
        Whether every stage met ``tol``.
    stopped_ : bool
        True when the callback or ``max_time`` stopped the solve: the result is partial.
    fit_time_ : float
        Wall time of the solve, in seconds.
    result_ : SolverResult
        Everything the solver returned.

    Examples
    --------
    >>> from colide_core import CoLiDE, load_sachs
    >>> X, B_true = load_sachs()
    >>> model = CoLiDE("nv").fit(X)          # doctest: +SKIP
    >>> model.adjacency_.shape                # doctest: +SKIP
    (11, 11)
    """

    def __init__(
        self,
        variant="nv",
        *,
        lambda1=0.05,
        mu_schedule=(1.0, 0.1, 0.01, 0.001),
        s_schedule=(1.0, 0.9, 0.8, 0.7),
        max_iter=(20000, 20000, 20000, 70000),
        lr=3e-4,
        tol=1e-6,
        threshold=0.3,
        random_state=None,
        solver="auto",
        checkpoint=1000,
        max_time=None,
        forbidden=None,
        required=None,
        tiers=None,
    ):
        self.variant = variant
        self.lambda1 = lambda1
        self.mu_schedule = mu_schedule
        self.s_schedule = s_schedule
        self.max_iter = max_iter
        self.lr = lr
        self.tol = tol
        self.threshold = threshold
        self.random_state = random_state
        self.solver = solver
        self.checkpoint = checkpoint
        self.max_time = max_time
        self.forbidden = forbidden
        self.required = required
        self.tiers = tiers

    def get_params(self):
        """Return the constructor parameters as a dict (scikit-learn style)."""
        return {
            name: getattr(self, name)
            for name in ("variant", "lambda1", "mu_schedule", "s_schedule", "max_iter", "lr", "tol",
                         "threshold", "random_state", "solver", "checkpoint", "max_time",
                         "forbidden", "required", "tiers")
        }

    def fit(self, X, callback=None):
        """Learn the DAG and noise scale(s) from data.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_nodes)
            Numeric, finite observations, ``n_samples >= 2`` and ``n_nodes >= 2``. A
            centred copy is used; ``X`` itself is never modified.
        callback : callable, optional
            ``callback(stage, iteration, objective)`` at every checkpoint; returning True
            stops the solve and keeps the partial result (``stopped_`` is then True).

        Returns
        -------
        self : CoLiDE

        Raises
        ------
        ValueError
            If ``X`` is not 2-D numeric, has fewer than 2 rows or columns, contains NaN or
            Inf, or a parameter is invalid.
        FloatingPointError
            If a column is constant (zero noise floor), the covariance overflows, or the
            iterates cannot be kept inside the log-det domain.
        """
        cov, n, names = data_covariance(X)
        return self._fit_cov(cov, n, names, callback)

    def fit_from_stats(self, cov, n, callback=None, node_names=None):
        """Learn from sufficient statistics instead of raw data.

        Parameters
        ----------
        cov : array-like of shape (n_nodes, n_nodes)
            The 1/n sample covariance of the data (centred), symmetric and finite.
        n : int
            Number of samples the covariance was computed from (>= 2).
        callback : callable, optional
            As in :meth:`fit`.
        node_names : sequence of str, optional
            Names of the nodes, stored in ``node_names_``.

        Returns
        -------
        self : CoLiDE

        Raises
        ------
        ValueError
            If ``cov`` is not a finite symmetric square matrix or ``n < 2``.
        """
        cov = np.array(cov, dtype=float)
        if cov.ndim != 2 or cov.shape[0] != cov.shape[1]:
            raise ValueError(f"cov must be square, got shape {cov.shape}.")
        if not np.all(np.isfinite(cov)) or not np.allclose(cov, cov.T, rtol=1e-10, atol=0):
            raise ValueError("cov must be finite and symmetric.")
        if int(n) != n or n < 2:
            raise ValueError(f"n must be an integer >= 2, got {n!r}.")
        names = None if node_names is None else [str(x) for x in node_names]
        if names is not None and len(names) != cov.shape[0]:
            raise ValueError("node_names must have one name per node.")
        return self._fit_cov(cov, int(n), names, callback)

    def _fit_cov(self, cov, n, names, callback):
        if self.solver not in ("adam", "fast", "auto"):
            raise ValueError(f"solver must be 'adam', 'fast' or 'auto', got {self.solver!r}.")
        if not (np.isfinite(self.threshold) and self.threshold >= 0):
            raise ValueError(f"threshold must be >= 0, got {self.threshold!r}.")
        if self.max_time is not None and not self.max_time > 0:
            raise ValueError(f"max_time must be > 0 seconds, got {self.max_time!r}.")
        diag = np.diag(cov)
        if np.any(diag <= 0):
            bad = [names[i] if names else str(i) for i in np.flatnonzero(diag <= 0)]
            raise FloatingPointError(f"Constant column(s) with zero variance: {', '.join(bad)}.")
        edge_mask = required_mask = None
        if self.forbidden is not None or self.required is not None or self.tiers is not None:
            from .constraints import resolve_constraints

            edge_mask, required_mask = resolve_constraints(
                cov.shape[0], names, forbidden=self.forbidden, required=self.required, tiers=self.tiers
            )
        solve = colide_solve
        if self.solver in ("fast", "auto"):
            from ._fast import fast_solve as solve
        t0 = time.perf_counter()
        res = solve(
            cov,
            variant=self.variant,
            lambda1=float(self.lambda1),
            mu_schedule=tuple(self.mu_schedule),
            s_schedule=tuple(self.s_schedule),
            max_iter=tuple(self.max_iter),
            lr=float(self.lr),
            tol=float(self.tol),
            checkpoint=int(self.checkpoint),
            callback=callback,
            max_time=self.max_time,
            edge_mask=edge_mask,
            l1_mask=None if required_mask is None else (~required_mask).astype(float),
        )
        self.fit_time_ = time.perf_counter() - t0
        self.result_ = res
        self.W_ = res.W
        self.adjacency_ = threshold_to_dag(res.W, self.threshold, required=required_mask)
        self.edge_mask_ = edge_mask
        self.required_mask_ = required_mask
        self.sigma_ = res.sigma
        self.n_iter_ = res.n_iter
        self.history_ = res.history
        self.converged_ = res.converged
        self.stopped_ = res.stopped
        self.node_names_ = names
        self.n_features_in_ = cov.shape[0]
        self.n_samples_ = n
        return self
