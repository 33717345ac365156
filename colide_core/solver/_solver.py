"""The paper-faithful CoLiDE solver: Algorithm 1 (Saboksayr, Mateos and Tepper, ICLR 2024).

:func:`colide_solve` is the stage loop of Algorithm 1: for each point ``(mu_k, s_k)`` of the
central path, BCD with one Adam step on W followed by the closed-form noise update. The
objective, scores and noise updates it evaluates are the pure functions of
:mod:`colide_core.solver._objective`; its set-up (parameter checks, noise floor, masks, warm start,
deadline) and its finish (the :class:`~colide_core.SolverResult`) are shared with the fast
solver through :mod:`colide_core.solver._common`. The estimator :class:`~colide_core.CoLiDE` lives in
:mod:`colide_core.solver._estimator`.

Conventions
-----------
* ``X`` has shape ``(n_samples, n_nodes)``. The paper writes X as ``d x n``; every formula
  here is the paper's with X transposed, so ``cov = X.T @ X / n`` for centred X.
* ``W`` has shape ``(n_nodes, n_nodes)`` and ``W[i, j] != 0`` means the edge i -> j; the
  linear SEM is ``X = X @ W + Z``.
* ``sigma`` is a noise *standard deviation*: a float for the equal-variance (EV) variant,
  an array of shape ``(n_nodes,)`` for the non-equal-variance (NV) variant.
"""
from __future__ import annotations

import time

import numpy as np

from colide_core import defaults
from colide_core.solver._common import _MAX_HALVINGS, _Solve, loop_settings
from colide_core.solver._objective import (
    _DOMAIN_TOL, _sigma_from_resid, _stage_grad, _stage_value, as_node_form, required_offset,
)

__all__ = ["colide_solve"]


def _inv_in_domain(W, s, eye, offset=None):
    """``inv(s I - W o W)`` if W is inside the log-det domain, else None.

    ``offset``: the required edges' ``tau R`` (subtracted from the matrix), or None.
    """
    M = s * eye - W * W
    if offset is not None:
        M -= offset
    try:
        Minv = np.linalg.inv(M)
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.isfinite(Minv)) or Minv.min() < _DOMAIN_TOL:
        return None
    return Minv


def colide_solve(
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
    required_mask=None,
    **params,
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
    cov : ndarray of shape (n_nodes, n_nodes) or NodeCovariance
        ``X.T @ X / n`` for centred data ``X`` of shape ``(n_samples, n_nodes)``; or the
        per-node form of several conditions with known intervention targets
        (:class:`colide_core.solver._objective.NodeCovariance`, ``docs/conditions.md``).
    settings : colide_core.settings.RunSettings, optional
        The checked run settings (default: the defaults). This loop reads ``variant``
        (``"ev"``: CoLiDE-EV, eq. 4; ``"nv"``: CoLiDE-NV, eq. 6; ``"ls"``: DAGMA-linear's
        least-squares score), ``lambda1``, ``mu_schedule``, ``s_schedule``, ``max_iter``
        (``T_k`` per stage), ``lr`` (Adam's step size), ``tol`` (relative objective change
        between checkpoints that ends a stage), ``checkpoint`` (steps between objective
        evaluations, convergence checks, history entries and callback calls), ``max_time``
        (wall-clock budget in seconds, checked after every step; when exceeded the solve stops
        with ``stopped=True`` and a :class:`ConvergenceWarning`) and ``record_W`` (keep a copy
        of W at every checkpoint in ``SolverResult.W_history``; at most
        ``defaults.MAX_RECORD_W_CELLS`` numbers).
    **params
        Run settings by name, applied over ``settings`` and checked by
        :meth:`colide_core.settings.RunSettings.create` (e.g. ``variant="ev", lambda1=0.1``).
    beta_1, beta_2 : float
        Adam moment decay rates (0.99 and 0.999 as in the authors' and DAGMA's code).
    sigma0 : float or ndarray of shape (n_nodes,), optional
        Noise floor; defaults to :func:`colide_core.solver._common.default_sigma0`. Sigma starts at ``100 * sigma0``.
    W_init : ndarray of shape (n_nodes, n_nodes), optional
        Warm start (default zeros, always in the domain). Not modified.
    callback : callable, optional
        ``callback(stage, iteration, objective)`` at every checkpoint (``iteration`` counts
        within the stage). If it returns True the solve stops and the partial result is
        returned with ``stopped=True``.
    edge_mask : ndarray of bool of shape (n_nodes, n_nodes), optional
        False marks a forbidden edge: its weight is held at exactly zero (its gradient is
        masked, so Adam never moves it). The diagonal is ignored (h_ldet keeps it at zero).
    l1_mask : ndarray of float of shape (n_nodes, n_nodes), optional
        Per-edge multiplier of ``lambda1`` (0 exempts a required edge from the L1 penalty).
    required_mask : ndarray of bool of shape (n_nodes, n_nodes), optional
        Required edges (acyclic): each counts as present in the acyclicity function, which is
        ``h_ldet`` of ``W o W + tau R`` (:func:`colide_core.solver._objective.required_offset`),
        so the solve keeps out of W every cycle a required edge would close, however weak the
        required edge's own weight. Without it (or with no True entry) nothing changes.

    Returns
    -------
    SolverResult

    Raises
    ------
    ValueError
        For invalid run settings (``RunSettingsError``, listing every problem), a ``cov``
        that is not a finite square matrix, or a ``required_mask`` that is not an acyclic
        (n_nodes, n_nodes) mask.
    FloatingPointError
        If the iterates cannot be kept inside the log-det domain or become non-finite even
        after backing off.

    Warns
    -----
    ConvergenceWarning
        If the last stage hits its ``max_iter`` before ``tol``, or ``max_time`` runs out.
    """
    st = loop_settings(settings, params)
    cov, node = as_node_form(cov)
    run = _Solve(cov, st, beta_1=beta_1, beta_2=beta_2, sigma0=sigma0, W_init=W_init, edge_mask=edge_mask,
                 l1_mask=l1_mask, node=node)
    run.require(required_offset(required_mask, run.d))
    offset = run.offset
    lr, tol, checkpoint = st.lr, st.tol, st.checkpoint
    eye = np.eye(run.d)
    grad_mask = run.mask if run.masked else None
    W, sigma = run.W, run.sigma
    stop_reason = None
    obj = np.nan
    for k, (mu, s, T) in enumerate(zip(st.mu_schedule, st.s_schedule, st.max_iter)):
        _, lr_k, s_k = run.enter_stage(k, lr, s, lambda s_try: _inv_in_domain(W, s_try, eye, offset))
        W, sigma, n_it, lr_k, stage_converged, obj, stop_reason = _adam_stage(
            run, W, sigma, eye, float(mu), s_k, int(T), lr_k, float(tol), int(checkpoint), beta_1, beta_2,
            k, callback, grad_mask,
        )
        run.end_stage(n_it, n_it, lr_k, s_k, stage_converged)
        if stop_reason is not None:
            break
    return run.result(W, sigma, obj, stop_reason, stacklevel=3)


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


def _adam_stage_loop(run, W, sigma, eye, mu, s, T, lr, tol, checkpoint, beta_1, beta_2, stage, callback,
                     grad_mask):
    cov, variant, lam, sigma0, deadline = run.cov, run.variant, run.lam, run.sigma0, run.deadline
    node, weight, offset = run.node, run.weight, run.offset
    W = W.copy()
    Minv = _inv_in_domain(W, s, eye, offset)
    IW = eye - W
    # cov (I - W): shared by the gradient and the sigma update (column j: w_j C_j (e_j - W[:, j])
    # for the per-node form).
    R = cov @ IW if node is None else cov - node.product(W)
    m = np.zeros_like(W)
    v = np.zeros_like(W)
    obj_prev = np.inf
    obj = np.nan
    b1t = b2t = 1.0
    for t in range(1, T + 1):
        grad = _stage_grad(W, R, sigma, variant, mu, lam, Minv.T, grad_mask)
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
        Minv_new = _inv_in_domain(W_new, s, eye, offset)
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
            Minv_new = _inv_in_domain(W_new, s, eye, offset)
        W, Minv = W_new, Minv_new
        IW = eye - W
        R = cov @ IW if node is None else cov - node.product(W)
        resid = np.sum(IW * R, axis=0)  # diag((I - W)^T cov (I - W)), shape (d,)
        if variant != "ls":
            sigma = _sigma_from_resid(resid, variant, sigma0, weight)
        # The wall-clock budget is checked every step (a checkpoint can be seconds away at
        # large d); running out forces a final checkpoint so the partial result is recorded.
        out_of_time = deadline is not None and time.perf_counter() > deadline
        if t % checkpoint == 0 or t == T or out_of_time:
            _check_moments(m, v, stage, t)
            obj, h = _stage_value(W, resid, sigma, variant, mu, lam, s, weight=weight, offset=offset)
            if not np.isfinite(obj):
                raise FloatingPointError(f"Stage {stage}, step {t}: the objective is not finite.")
            stop = run.checkpoint(stage, t, obj, h, sigma, callback, t, out_of_time=out_of_time, W=W)
            if stop is not None:
                return W, sigma, t, lr, False, obj, stop
            if np.isfinite(obj_prev) and abs(obj_prev - obj) <= tol * abs(obj_prev):
                return W, sigma, t, lr, True, obj, None
            obj_prev = obj
    return W, sigma, T, lr, False, obj, None
