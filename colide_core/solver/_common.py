"""What both CoLiDE stage loops share: one set-up, one stage entry, one checkpoint, one finish.

The faithful loop (:func:`colide_core.solver._solver.colide_solve`) and the fast loop
(:func:`colide_core.solver._fast.fast_solve`) differ only in how they traverse each stage of the
central path. Everything around that lives here, once: the parameter checks, the noise floor
``sigma0``, the masks, the warm start ``W_init``, the wall-clock deadline, the back-off when a
stage's warm start is outside the log-det domain, the history of checkpoints and the
:class:`SolverResult` with its warnings.

Conventions: ``cov`` is the ``(n_nodes, n_nodes)`` covariance ``X.T @ X / n`` of centred data
``X`` of shape ``(n_samples, n_nodes)``; ``W[i, j] != 0`` means the edge i -> j.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from colide_core.exceptions import ConvergenceWarning
from colide_core import defaults
from colide_core._params import is_real
from colide_core.settings import RunSettings

__all__ = ["ConvergenceWarning", "SolverResult", "default_sigma0", "progress_fraction"]

#: Restarts of a stage whose warm start is outside the domain of its ``s`` (``s + 0.1`` each).
_MAX_STAGE_RESTARTS = 10
#: Halvings of one step that left the log-det domain before giving up.
_MAX_HALVINGS = 60


@dataclass(frozen=True)
class SolverResult:
    """Everything a CoLiDE solve computed: the one record of a fit.

    Returned by :func:`~colide_core.colide_solve` and :func:`~colide_core.solver._fast.fast_solve`;
    :class:`~colide_core.CoLiDE` keeps it as ``result_``.

    Attributes
    ----------
    W : ndarray of shape (n_nodes, n_nodes)
        Raw weights at the end of the last stage, ``W[i, j] != 0`` meaning i -> j.
    sigma : float, ndarray of shape (n_nodes,), or None
        Noise standard deviation(s), in the units of the data; None for the ``"ls"`` variant.
    n_iter : int
        Total number of first-order steps taken (all stages, restarts included; the fast
        solver adds its polishing function evaluations).
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
    fit_time : float
        Wall time of the solve in seconds, from the end of the parameter checks to the result.
    order : tuple of int or None
        The topological order the weights were optimised for (first the nodes with no
        predecessor): set by the order-search solver (:func:`~colide_core.solver._topo.topo_solve`),
        None for the continuous solvers.
    W_history : tuple of ndarray of shape (n_nodes, n_nodes), or None
        With ``record_W=True``: a copy of the raw weights at every checkpoint, one per entry of
        ``history`` (same order), so the optimisation can be played back; None when W was not
        recorded (the default). Recording copies W and changes no number of the solve.
    stage_converged : tuple of bool
        Whether each stage met ``tol`` before its ``max_iter`` (one entry per finished stage).
        The early stages of the central path often end on their step budget by design; what
        matters for the result is the last one (:attr:`last_stage_converged`).
    choice : dict or None
        Set by ``solver="auto"`` (:func:`~colide_core.solver._auto.auto_solve`): which candidate
        won (``"solver"``: ``"fast"``, ``"topo"``, ``"warm"`` or ``"topo-warm"``), why the order
        search ran or not (``"reason"``), every candidate's objective
        (:func:`~colide_core.solver._auto.dag_objective`, ``"candidates"``), their wall seconds
        and the search's predicted seconds (``"estimate"``). None for the other solvers.
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
    fit_time: float = 0.0
    order: object = None
    W_history: object = None
    stage_converged: tuple = field(default_factory=tuple)
    choice: object = None

    @property
    def last_stage_converged(self):
        """Whether the last stage met ``tol`` (bool), or None when it was not recorded.

        None for a record that does not hold per-stage flags (an older manifest, a λ-path
        entry); a stopped solve's last stage did not converge.
        """
        if self.stopped:
            return False
        return bool(self.stage_converged[-1]) if self.stage_converged else None

    @property
    def final_relative_change(self):
        """Relative objective change between the last two checkpoints of the last stage.

        ``|f_k - f_{k-1}| / |f_{k-1}|`` over the objectives recorded in ``history`` (the faithful
        loop's stopping rule compares exactly this with ``tol``; the fast loop tests an averaged
        iterate, so there it is an indication); NaN when the last stage recorded fewer than two
        checkpoints or no history was kept.
        """
        hist = self.history or {}
        stages, objs = list(hist.get("stage", ())), list(hist.get("objective", ()))
        if not stages or len(stages) != len(objs):
            return float("nan")
        last = stages[-1]
        tail = [float(o) for st_, o in zip(stages, objs) if st_ == last]
        if len(tail) < 2 or not np.isfinite(tail[-2]) or tail[-2] == 0:
            return float("nan")
        return abs(tail[-1] - tail[-2]) / abs(tail[-2])


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


def progress_fraction(max_iter, stage, iteration):
    """Fraction of a solve's iteration budget used, from its callback's arguments.

    Both solvers report ``iteration`` in faithful steps (:func:`colide_solve` counts its
    steps; :func:`~colide_core.solver._fast.fast_solve` its ODE time / ``lr``), the unit of
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


def _check_cov_and_betas(cov, beta_1, beta_2):
    """The loops' own arguments that are not run settings (those are checked by
    :class:`colide_core.settings.RunSettings`)."""
    if cov.ndim != 2 or cov.shape[0] != cov.shape[1] or cov.shape[0] < 2:
        raise ValueError(f"cov must be a square (n_nodes, n_nodes) matrix with n_nodes >= 2, got {cov.shape}.")
    if not np.all(np.isfinite(cov)):
        raise FloatingPointError("The covariance contains NaN or Inf (data too large or not finite).")
    if not (is_real(beta_1) and is_real(beta_2) and 0.0 <= beta_1 < 1.0 and 0.0 <= beta_2 < 1.0):
        raise ValueError(f"beta_1 and beta_2 must be in [0, 1), got {beta_1!r}, {beta_2!r}.")


def loop_settings(settings, params):
    """The checked run settings of a stage loop's call: ``settings``, with ``params`` applied.

    Parameters
    ----------
    settings : RunSettings or None
        Checked settings (e.g. the estimator's); None: the defaults.
    params : dict
        Settings given by name to the loop (``colide_solve(cov, variant="ev", ...)``).

    Returns
    -------
    RunSettings

    Raises
    ------
    RunSettingsError
        If a setting is invalid (:meth:`colide_core.settings.RunSettings.create`).
    TypeError
        If ``settings`` is not a RunSettings.
    """
    if settings is None:
        return RunSettings.create(params)
    if not isinstance(settings, RunSettings):
        raise TypeError(f"settings must be a colide_core.settings.RunSettings, got {type(settings).__name__}.")
    return settings.replace(**params) if params else settings


class _Solve:
    """The set-up and the record of one solve, shared by both stage loops.

    Built once per solve (:meth:`__init__` checks every common parameter and prepares the
    arrays); the loop then calls :meth:`enter_stage` at the start of each stage,
    :meth:`checkpoint` at its checkpoints and :meth:`end_stage` at its end, and returns
    :meth:`result`.

    Attributes set by the set-up
    ----------------------------
    cov : ndarray of shape (d, d)
        A private C-contiguous float copy of the covariance (for the per-node form, its
        ``own`` matrix: column j is ``w_j C_j[:, j]``).
    node : NodeCovariance or None
        The per-node covariance form of several conditions with known targets, or None.
    weight : ndarray of shape (d,) or None
        The node weights ``w_j`` of ``node``; None for a plain covariance.
    d : int
    variant : str
    sigma0 : float, ndarray of shape (d,), or None
        The noise floor (float for EV, one per node for NV, None for LS).
    sigma : float, ndarray of shape (d,), or None
        The starting noise scale, ``100 * sigma0`` (as in the authors' code).
    W : ndarray of shape (d, d)
        The starting weights (``W_init`` or zeros), forbidden edges set to zero.
    mask : ndarray of float of shape (d, d)
        0 at a forbidden edge, else 1 (all ones without ``edge_mask``).
    masked : bool
        Whether an ``edge_mask`` was given.
    lam : ndarray of shape (d, d)
        Per-edge L1 weights ``lambda1 * l1_mask``.
    offset : ndarray of shape (d, d) or None
        ``tau R`` of the required edges (:func:`colide_core.solver._objective.required_offset`):
        subtracted from ``s I - W o W`` wherever the loops evaluate ``h_ldet``, its gradient or
        the log-det domain; None without required edges (the plain arithmetic, bit for bit).
    required : tuple of (ndarray of int64, ndarray of int64, float)
        The same for the kernels: the rows and columns of the required edges and ``tau``
        (two empty arrays and 0 without required edges).
    deadline : float or None
        ``time.perf_counter()`` value after which the solve stops (``max_time``).
    history : dict of list
        The checkpoints recorded so far.
    W_history : list of ndarray or None
        With ``record_W``: a copy of W at every checkpoint; else None.
    """

    def __init__(self, cov, settings, *, beta_1, beta_2, sigma0, W_init, edge_mask, l1_mask, node=None):
        # ``node``: the per-node covariance form (``_objective.NodeCovariance``, several conditions
        # with known targets) when ``cov`` is its ``own`` matrix; its floor is node.default_sigma0.
        self.node = node
        self.weight = None if node is None else np.array(node.node_weight, dtype=float)
        if node is not None and sigma0 is None:
            sigma0 = node.default_sigma0(settings.variant)
        cov = np.array(cov, dtype=float)  # a private copy
        _check_cov_and_betas(cov, beta_1, beta_2)
        variant, lambda1, max_time, record_W = settings.variant, settings.lambda1, settings.max_time, settings.record_W
        max_iter, checkpoint, tol = settings.max_iter, settings.checkpoint, settings.tol
        d = cov.shape[0]
        n_checkpoints = sum(-(-int(t) // int(checkpoint)) for t in max_iter)
        if record_W and n_checkpoints * d * d > defaults.MAX_RECORD_W_CELLS:
            raise ValueError(
                f"record_W would keep up to {n_checkpoints} checkpoints of a {d} x {d} W "
                f"({n_checkpoints * d * d} numbers), more than {defaults.MAX_RECORD_W_CELLS}; raise "
                "checkpoint or lower max_iter."
            )
        self.cov = np.ascontiguousarray(cov)
        self.d = d
        self.variant = variant
        self.max_time = max_time
        self.tol = tol

        if sigma0 is None:
            sigma0 = default_sigma0(cov, variant)
        if variant == "ev":
            sigma0 = float(sigma0)
        elif variant == "nv":
            sigma0 = np.broadcast_to(np.asarray(sigma0, dtype=float), (d,)).copy()
        else:
            sigma0 = None
        if sigma0 is not None and not np.all(np.asarray(sigma0) > 0):
            raise FloatingPointError("The noise floor sigma0 is zero: a column of X has zero variance.")
        self.sigma0 = sigma0
        self.sigma = None if sigma0 is None else sigma0 * 100.0

        W = np.zeros((d, d)) if W_init is None else np.array(W_init, dtype=float)
        if W.shape != (d, d):
            raise ValueError(f"W_init must have shape {(d, d)}, got {W.shape}.")
        self.masked = edge_mask is not None
        self.mask = np.ones((d, d))
        if self.masked:
            em = np.asarray(edge_mask, dtype=bool)
            if em.shape != (d, d):
                raise ValueError(f"edge_mask must have shape {(d, d)}, got {em.shape}.")
            self.mask = np.ascontiguousarray(em, dtype=float)
            W = W * self.mask  # a forbidden edge starts, and stays, at zero
        self.W = np.ascontiguousarray(W)
        lam = np.full((d, d), float(lambda1))
        if l1_mask is not None:
            lm = np.asarray(l1_mask, dtype=float)
            if lm.shape != (d, d) or np.any(lm < 0) or not np.all(np.isfinite(lm)):
                raise ValueError(f"l1_mask must be a finite non-negative {(d, d)} matrix.")
            lam = np.ascontiguousarray(lam * lm)
        self.lam = lam
        self.require(None)

        self.history = {"stage": [], "iteration": [], "objective": [], "h": [], "sigma": []}
        self.W_history = [] if record_W else None
        self.n_iter = 0
        self.per_stage, self.lr_used, self.s_used = [], [], []
        self.converged_all = True
        self.last_converged = True
        self.stage_conv = []
        self.t_start = time.perf_counter()
        self.deadline = None if max_time is None else self.t_start + float(max_time)

    def require(self, offset):
        """Count the required edges in the acyclicity function: ``offset`` is their ``tau R``.

        ``offset``: :func:`colide_core.solver._objective.required_offset` of the required mask
        (the loop builds it), or None. Sets :attr:`offset` and :attr:`required`; the loops then
        evaluate ``h_ldet`` of ``W o W + tau R``, so the solve keeps out of W every cycle the
        required edges would close (and the post-processing has nothing to cut).
        """
        if offset is None:
            self.offset = None
            self.required = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), 0.0)
            return
        offset = np.ascontiguousarray(offset, dtype=float)
        rows, cols = np.nonzero(offset)
        taus = offset[rows, cols]
        if offset.shape != (self.d, self.d) or taus.size == 0 or not np.all(taus == taus[0]) or not taus[0] > 0:
            raise ValueError("offset must be tau > 0 at the required edges and 0 elsewhere.")
        self.offset = offset
        self.required = (rows.astype(np.int64), cols.astype(np.int64), float(taus[0]))

    # ---- stages -------------------------------------------------------------------------
    @staticmethod
    def enter_stage(stage, lr, s, inside):
        """Back off until the stage's warm start is inside the log-det domain of its ``s``.

        ``inside(s)`` returns something (e.g. the inverse at the warm start) when the warm
        start is inside the domain of ``s``, else None. While it is None, ``s`` grows by 0.1
        and the step size halves, as in the authors' code, at most ``_MAX_STAGE_RESTARTS``
        times. Returns ``(inside(s_k), lr_k, s_k)``.

        Raises
        ------
        FloatingPointError
            If the warm start stays outside the domain.
        """
        lr_k, s_k = float(lr), float(s)
        for _restart in range(_MAX_STAGE_RESTARTS + 1):
            value = inside(s_k)
            if value is not None:
                return value, lr_k, s_k
            lr_k *= 0.5
            s_k += 0.1
        raise FloatingPointError(
            f"Stage {stage}: the warm start stays outside the log-det domain even with s={s_k:.2f}."
        )

    def checkpoint(self, stage, iteration, obj, h, sigma, callback, progress, out_of_time=False, W=None):
        """Record a checkpoint and call the callback; return the stop reason or None.

        ``W`` is the iterate at this checkpoint; a copy is kept when the solve records W
        (``record_W``), else it is ignored.

        ``iteration`` (this solver's own steps) goes to the history; the callback gets
        ``progress``, the stage's progress in faithful-equivalent steps (the unit of
        ``max_iter``). ``out_of_time`` says the loop already found the deadline passed;
        otherwise it is checked here.
        """
        hist = self.history
        hist["stage"].append(stage)
        hist["iteration"].append(int(iteration))
        hist["objective"].append(float(obj))
        hist["h"].append(float(h))
        hist["sigma"].append(None if sigma is None else np.copy(sigma))
        if self.W_history is not None:
            self.W_history.append(np.array(W, dtype=float, copy=True))
        if callback is not None and callback(stage, int(round(progress)), float(obj)):
            return "callback"
        if out_of_time or (self.deadline is not None and time.perf_counter() > self.deadline):
            return "max_time"
        return None

    def end_stage(self, n_iter, n_iter_stage, lr, s, converged):
        """Record a finished stage: ``n_iter`` steps spent, ``n_iter_stage`` in its accepted run."""
        self.n_iter += int(n_iter)
        self.per_stage.append(int(n_iter_stage))
        self.lr_used.append(lr)
        self.s_used.append(s)
        self.converged_all &= bool(converged)
        self.last_converged = bool(converged)
        self.stage_conv.append(bool(converged))

    # ---- finish -------------------------------------------------------------------------
    def result(self, W, sigma, objective, stop_reason, stacklevel):
        """Warn when the solve fell short and build the :class:`SolverResult`.

        ``stacklevel`` points the warning at the caller of the public solver function.
        """
        if stop_reason == "max_time":
            warnings.warn(
                f"CoLiDE stopped after max_time={self.max_time} s with a partial result.", ConvergenceWarning,
                stacklevel=stacklevel,
            )
        elif stop_reason is None and not self.last_converged:
            warnings.warn(
                "CoLiDE's last stage used its iteration budget (max_iter) before the relative objective change "
                f"fell below tol={self.tol}; consider raising max_iter.",
                ConvergenceWarning,
                stacklevel=stacklevel,
            )
        return SolverResult(
            W=W,
            sigma=sigma,
            n_iter=int(self.n_iter),
            n_iter_per_stage=tuple(self.per_stage),
            history=self.history,
            objective=float(objective),
            converged=bool(self.converged_all and stop_reason is None),
            stopped=stop_reason is not None,
            stop_reason=stop_reason,
            lr_used=tuple(self.lr_used),
            s_used=tuple(self.s_used),
            fit_time=time.perf_counter() - self.t_start,
            W_history=None if self.W_history is None else tuple(self.W_history),
            stage_converged=tuple(self.stage_conv),
        )
