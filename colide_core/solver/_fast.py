"""Fast solver for CoLiDE-EV / CoLiDE-NV: same problems, same central path, far fewer and cheaper steps.

:func:`fast_solve` is a drop-in replacement for :func:`colide_core.solver._solver.colide_solve` (it returns
the same :class:`~colide_core.SolverResult`, and shares its set-up and finish in
:mod:`colide_core.solver._common` and its objective in :mod:`colide_core.solver._objective`). It solves, stage after stage, exactly the
paper's problems: ``mu_k * (score(W, sigma) + lambda1 |W|_1) + h_ldet(W, s_k)`` with the score of
eq. 4 (EV) or eq. 6 (NV) and sigma given by the closed forms of eq. 5 / eq. 7, warm-started along
the same central path ``(mu_k, s_k)``. What changes is how each stage is solved: see
:func:`fast_solve` and ``docs/fast-solver.md``.

Conventions: ``cov`` is the ``(n_nodes, n_nodes)`` covariance ``X.T @ X / n`` of centred data
``X`` of shape ``(n_samples, n_nodes)``; ``W[i, j] != 0`` means the edge i -> j.

The per-iteration kernels live in :mod:`colide_core.solver._fast_kernels`: compiled with numba when
it is installed (``cache=True``: the first call in a fresh environment compiles them once, later
processes load them from disk); otherwise an equivalent vectorised numpy implementation is used.
Both give the same iterates up to rounding. This module holds the loop: the stage schedule, the
step-scale and inverse-interval policies, the checkpoints and the polishing phase.
"""
from __future__ import annotations

import contextlib
import math
import threading
import time
import warnings

import numpy as np
from scipy.linalg import lapack
from threadpoolctl import ThreadpoolController

from colide_core import defaults
from colide_core.solver._common import loop_settings, _MAX_HALVINGS, ConvergenceWarning, _Solve
from colide_core.solver import _fast_kernels
from colide_core.solver._fast_kernels import HAVE_NUMBA, _VARIANT, _VCODE, _colsums_py, _isig_py, _kernels
from colide_core.solver._objective import _DOMAIN_TOL, _stage_value, as_node_form, required_offset

__all__ = ["fast_solve", "HAVE_NUMBA", "warmup"]


def __getattr__(name):
    """The kernels' own names (``_fast._adam_chunk_nb``, ...), read from :mod:`._fast_kernels`.

    Tests and ``benchmarks/`` reach the kernels through this module; the numba ones exist only
    where numba is installed, so they are forwarded on first use (PEP 562) rather than imported.
    """
    try:
        return getattr(_fast_kernels, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


#: Default step-scale factor per stage (see :func:`fast_solve`): 10 for every stage but the
#: last. In the last stage, where the barrier dominates, larger Adam steps can drift to worse
#: local optima: measured against the faithful solver (with the chatter tolerance below),
#: CoLiDE-EV keeps its graphs with 6 (mean SHD within 0.5 on 20 ER4 graphs with d = 10/20,
#: same SHD on Sachs) but not with 10 (ER4-EV d = 20: mean SHD 11.7 -> 13.1); CoLiDE-NV keeps
#: them with 10 (36 ER4 graphs, d = 10..100: mean SHD equal or lower, ~10% fewer steps than 6).
_SCALE_EARLY = 10.0
_SCALE_LAST = {"ev": 6.0, "nv": 10.0, "ls": 6.0}
#: Relative change of the averaged objective between checkpoints that ends the last stage's
#: Adam phase (the polishing phase then converges to ``tol / 10``). Not looser: with 1e-4 the
#: last stage of ill-conditioned EV fits is cut short and lands elsewhere (bench problems EV
#: d = 50 / 100, 10 seeds each: mean SHD 27.8 / 51.4 -> 30.2 / 52.6, seed 101 at d = 50 62 -> 86
#: with the objective +2.2e-2, for 10% fewer steps).
_SWITCH_TOL_LAST = 1e-5
#: Polishing: nonmonotone memory, sufficient-decrease constant, step bounds.
_NM_MEMORY = 5
_ARMIJO = 1e-4
_ETA_MIN, _ETA_MAX = 1e-12, 1e3
#: Condition number of cov up to which the full default step scale is used.
_COND_REF = 1e6
#: The step size the default scales were measured with (Algorithm 1's 3e-4). A larger ``lr``
#: shrinks the default scales by ``_LR_REF / lr`` (never below 1): the scaled step
#: ``c_k * lr`` then stays at most ``c_k * 3e-4``, where it was validated. Measured without
#: this cap on a d = 8 EV SEM with ``lr = 3e-3`` and budgets (500, 500, 500, 1000): objective
#: 1% above the faithful solver's and weights 58% off the truth, against 26% for the faithful.
_LR_REF = 3e-4
#: Default chatter tolerance ``_CHATTER_REF[variant] * phi`` with ``phi`` in [0.1, 1] the
#: conditioning factor. CoLiDE-NV tolerates 1e-3 (ER4-NV d = 100, 8 graphs: 2.3x fewer steps
#: with the last-stage scale 6, same mean SHD). CoLiDE-EV needs 3e-4: with 1e-3 a scaled stage
#: can hover about 1e-3 above the stage optimum the faithful step reaches, and the next stages
#: start from a different point (ER4-EV, 10 graphs each, against the faithful solver: d = 20
#: mean SHD 12.0 -> 11.1 (faithful 11.7), final objective > +1e-3 on 3 -> 1 graphs, 8% more
#: steps; d = 10, 50, 100 and the issue's trap: same mean SHD within 0.1, at most 9% more
#: steps). Ill-conditioned covariances need the tight end (scaled EV steps with a loose
#: tolerance cost SHD at d >= 50, measured).
_CHATTER_REF = {"ev": 3e-4, "nv": 1e-3, "ls": 1e-3}
#: Adam steps per d x d inverse under ``inverse_every="auto"``: ``_INVERSE_EVERY_MAX`` at the
#: faithful step (step scale 1), ``_INVERSE_EVERY`` at larger ones (:func:`_auto_inverse_every`).
_INVERSE_EVERY = 3
_INVERSE_EVERY_MAX = 10


# --------------------------------------------------------------------------------------
# BLAS thread pool. Measured on this 2-core box, idle, OpenBLAS's default pool of one thread per
# core against one thread (benchmarks/research/bench_blas_threads.py, results/bench_blas_threads.txt):
# the numpy engine's steps are 8.9x slower at d = 200 and 3.1x at d = 300 (LAPACK's threaded
# getri on matrices this small); the numba engine's steps are 1.3x slower at d = 100, equal at
# d <= 50, and 9-18% faster at d = 200-300. As soon as two fits overlap (two app sessions,
# joblib workers) two threads per fit oversubscribe the cores (a 150 x 150 inverse measured at
# 0.8 ms -> 15 ms under load). So a solve runs with a one-thread pool unless the caller says
# otherwise: never much slower, often much faster, and its speed does not depend on the load.
# --------------------------------------------------------------------------------------
_BLAS = {"lock": threading.Lock(), "busy": False, "controller": None}


@contextlib.contextmanager
def _blas_threads(n):
    """Run the block with at most ``n`` BLAS threads (threadpoolctl); ``None``: leave them.

    OpenBLAS's pool is process-wide, so one solve at a time owns the limit: it sets it on entry
    and restores the previous setting on exit, in its own thread (threadpoolctl's ownership
    rule). A solve that starts in another thread while the limit is held runs under it without
    touching it, and after the owner restores the setting it runs with the process's default:
    slower, never wrong, and no limit is left behind.
    """
    if n is None:
        yield
        return
    with _BLAS["lock"]:
        owner = not _BLAS["busy"]
        _BLAS["busy"] = True
    if not owner:
        yield
        return
    try:
        if _BLAS["controller"] is None:
            _BLAS["controller"] = ThreadpoolController()
        with _BLAS["controller"].limit(limits=int(n), user_api="blas"):
            yield
    finally:
        with _BLAS["lock"]:
            _BLAS["busy"] = False


def _conditioning_factor(cov):
    """``min(1, COND_REF / cond(cov))``, at least 0.1: how much of the default step scale to use.

    On very ill-conditioned covariances (simulated equal-variance SEMs with strong weights reach
    cond(cov) = 1e7..1e9 at d >= 50) the faithful Adam path is at the edge of its own stability:
    any larger step visibly drags the trajectory (measured), so the scale falls back towards 1.
    """
    ev = np.linalg.eigvalsh(cov)
    if not ev[0] > 0:
        return 0.1
    return float(min(1.0, max(0.1, _COND_REF / (ev[-1] / ev[0]))))


def _default_scales(phi, variant, lr, K):
    """The default step scales ``c_k`` of :func:`fast_solve` for ``K`` stages (see its item 1).

    ``phi`` is :func:`_conditioning_factor` of ``cov``; the scales are ``_SCALE_EARLY`` for all
    stages but the last and ``_SCALE_LAST[variant]`` for the last, times ``phi`` and times
    ``min(1, 3e-4 / lr)``, each at least 1.
    """
    shrink = phi * min(1.0, _LR_REF / float(lr))
    return tuple(max(1.0, c * shrink) for c in (_SCALE_EARLY,) * (K - 1) + (_SCALE_LAST[variant],))


def _is_faithful_step(c):
    """True at step scale ``c = 1`` (Algorithm 1's step), the regime of the "auto" choices below."""
    return float(c) <= 1.0 + 1e-12


def _auto_inverse_every(c):
    """Adam steps per inverse under ``inverse_every="auto"`` at step scale ``c >= 1``.

    ``_INVERSE_EVERY_MAX`` (10) at the faithful step (``c = 1``: the covariances with
    ``cond(cov) >= 1e7``, where the default step scale falls back to 1 and a step is 1.1-1.2x
    cheaper than with an inverse every third step), else ``_INVERSE_EVERY`` (3). With an
    inverse every ``k`` steps at scale ``c`` the log-det gradient lags at most ``(k - 1) c``
    faithful-equivalent steps: 20 at the default scale 10 and 9 at ``c = 1``. An inverse every
    5 to 10 steps at an intermediate scale (2.2) moved one of 30 simulated EV graphs to a worse
    branch (d = 20 seed 101: SHD 9 -> 20, objective +1.1e-2), so the longer interval is kept to
    the faithful step, where no graph got worse (``benchmarks/research/bench_sensitivity.py``).
    """
    return _INVERSE_EVERY_MAX if _is_faithful_step(c) else _INVERSE_EVERY


def _auto_refine(c):
    """Whether ``inverse_every="auto"`` refines a failed domain certificate at step scale ``c``.

    Only at the faithful step (``c = 1``), as the inverse every tenth step: there the
    certificate failed on 60-88% of the last stage's steps of ill-conditioned EV problems
    (d = 50, 100; near the domain's boundary, where ``inv(M)`` is large), each failure paying
    a full inverse, and with the refinement (:func:`~._fast_kernels._refine_cert_py`) none failed, with the
    same SHD and objective (within 1e-5) on all 20 simulated EV problems at d = 50 and 100.
    At larger scales it moved one d = 20 EV graph (seed 102, scale 9.6) to a worse optimum
    (SHD 11 -> 19, objective +1.3e-2), as longer inverse intervals there had.
    """
    return _is_faithful_step(c)


def _is_auto(x):
    return isinstance(x, str) and x == "auto"


def warmup():
    """Compile (or load from the on-disk cache) the numba kernels on a 3-node toy problem.

    Calling this once, e.g. in a background thread when an app starts, moves numba's one-off
    compile time out of the first real fit. Without numba it does nothing.

    Returns
    -------
    float
        Seconds spent.
    """
    t0 = time.perf_counter()
    if HAVE_NUMBA:
        cov = np.array([[1.0, 0.5, 0.2], [0.5, 1.0, 0.3], [0.2, 0.3, 1.0]])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for variant in ("ev", "nv"):
                fast_solve(cov, variant=variant, max_iter=(20, 20), mu_schedule=(1.0, 0.1),
                           s_schedule=(1.0, 0.9), checkpoint=10)
    return time.perf_counter() - t0


# --------------------------------------------------------------------------------------
# Point evaluation (used at stage starts, checkpoints and by the polishing phase).
# --------------------------------------------------------------------------------------
class _Point:
    """W and everything derived from it for a given stage ``(mu, s)``."""

    __slots__ = ("W", "MinvT", "R", "resid", "isig", "sigma", "logdet", "h", "obj")


def _evaluate(W, cov, s, mu, lam, vcode, sig0, node=None, offset=None):
    """Evaluate the stage objective at W, or return None if W is outside the log-det domain.

    ``node``: the per-node covariance form (``cov`` is then its ``own`` matrix), or None.
    ``offset``: the required edges' ``tau R`` (``h_ldet`` of ``W o W + tau R``), or None.

    One LU factorisation gives both ``log det(s I - W o W)`` and the inverse (needed by the
    gradient); the domain test is the solver's: a finite, entry-wise >= -1e-6 inverse of a
    matrix with positive determinant.
    """
    d = W.shape[0]
    M = -(W * W)
    if offset is not None:
        M -= offset
    M.flat[:: d + 1] += s
    lu, piv, info = lapack.dgetrf(M, overwrite_a=1)
    if info != 0:
        return None
    diag = np.diagonal(lu)
    neg = int(np.count_nonzero(diag < 0)) + int(np.count_nonzero(piv != np.arange(d)))
    if neg % 2:
        return None  # det < 0: not an M-matrix
    logdet = float(np.sum(np.log(np.abs(diag))))
    Minv, info = lapack.dgetri(lu, piv, overwrite_lu=1)
    if info != 0 or not np.isfinite(logdet):
        return None
    mn = Minv.min()
    if not (mn >= _DOMAIN_TOL) or not np.isfinite(Minv.max()):
        return None
    p = _Point()
    p.W = W
    p.MinvT = Minv.T  # getri returns Fortran order: the transpose view is C-contiguous
    weight = None if node is None else node.node_weight
    p.R = cov - (cov @ W if node is None else node.product(W))
    p.resid = np.diagonal(p.R) - np.sum(W * p.R, axis=0)
    p.isig = np.empty(d)
    _isig_py(p.resid, sig0, vcode, p.isig, weight)
    p.sigma = _sigma_value(p.isig, vcode)
    p.logdet = logdet
    p.obj, p.h = _stage_value(W, p.resid, p.sigma, _VARIANT[vcode], mu, lam, s, logdet=logdet, weight=weight)
    return p


def _sigma_value(isig, vcode):
    if vcode == 0:
        return float(1.0 / isig[0])
    if vcode == 1:
        return 1.0 / isig
    return None


# --------------------------------------------------------------------------------------
# The solver.
# --------------------------------------------------------------------------------------
def fast_solve(
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
    step_scale=None,
    switch_tol=None,
    chatter_tol="auto",
    average=True,
    min_scale=1.0,
    polish=None,
    engine="auto",
    blas_threads=1,
    inverse_every="auto",
    **params,
):
    """Solve CoLiDE's central path (paper eq. 4 / eq. 6) several times faster than Algorithm 1.

    Drop-in replacement for :func:`~colide_core.colide_solve` (same arguments, same
    :class:`~colide_core.SolverResult`); ``CoLiDE(solver="auto")`` (the default) and
    ``CoLiDE(solver="fast")`` call it.

    Stage ``k`` solves the paper's problem
    ``F_k(W) = mu_k (score(W, sigma(W)) + lambda1 |W|_1) + h_ldet(W, s_k)``, with ``sigma(W)``
    the closed-form noise update of eq. 5 / eq. 7, warm-started along the same central path
    ``(mu_k, s_k)`` and with the same back-off rules as Algorithm 1. Each stage keeps
    Algorithm 1's dynamics (one Adam step on W, then the closed-form sigma), read as an ODE in
    the time ``lr * t`` and integrated with fewer, cheaper steps:

    1. **Scaled Adam**: the step is ``c_k * lr`` and Adam's memories are shortened by the same
       factor; budgets and checkpoints are counted in the same ODE time as the faithful run.
       Default ``c_k = 10`` (last stage: 6 for EV and "ls", 10 for NV), times
       ``min(1, 1e6 / cond(cov))`` and ``min(1, 3e-4 / lr)``, at least 1.
    2. **Chatter control**: at each checkpoint, when the iterate's objective exceeds that of the
       running average of the iterates by more than ``chatter_tol`` (relative), the step scale
       is halved (down to ``min_scale``).
    3. **Stage end**: on the relative change of the averaged iterate's objective (``tol``;
       ``max(tol, 1e-5)`` in the last stage), keeping the averaged iterate when it is better;
       the last stage is then **polished** by proximal gradient with Barzilai-Borwein steps and
       a nonmonotone, domain-aware line search, to ``tol / 10``.
    4. **Cheaper steps**: one d x d inverse shared by the domain test and the gradient, computed
       only every few steps (``inverse_every``) with an exact O(d^2) M-matrix certificate in
       between; with numba the whole Adam loop between checkpoints is one compiled kernel.

    The method, the measurements behind every default and the dead ends tried are described in
    ``docs/fast-solver.md``.
    Parameters
    ----------
    cov : ndarray of shape (n_nodes, n_nodes) or NodeCovariance
        ``X.T @ X / n`` for centred data ``X`` of shape ``(n_samples, n_nodes)``; or the
        per-node form of several conditions with known intervention targets
        (:class:`colide_core.solver._objective.NodeCovariance`, ``docs/conditions.md``).
    settings : colide_core.settings.RunSettings, optional
        The checked run settings (default: the defaults). This loop reads ``variant``
        (``"ev"``: eq. 4, ``"nv"``: eq. 6, ``"ls"``: DAGMA-linear's score), ``lambda1``, the
        central path ``mu_schedule`` and ``s_schedule``, ``max_iter`` (Algorithm 1's budgets
        ``T_k`` in faithful steps: the Adam phase of stage k stops after ``T_k`` faithful
        steps' worth of ODE time, about ``T_k / c_k`` steps, and the polishing phase may take
        ``ceil(T_k / c_k)`` more function evaluations), ``lr`` (Algorithm 1's step size; stage
        k starts with ``c_k * lr``), ``tol`` (see 3. above), ``checkpoint`` (faithful steps
        between checkpoints: the Adam phase checks every ``ceil(checkpoint / c)`` steps, the
        polishing phase every ``ceil(checkpoint / c_K)`` iterations and at its end),
        ``max_time`` (seconds, checked at checkpoints; the solve then stops with
        ``stopped=True`` and a :class:`~colide_core.ConvergenceWarning`) and ``record_W``
        (keep a copy of W at every checkpoint in ``SolverResult.W_history``).
    **params
        Run settings by name, applied over ``settings`` and checked by
        :meth:`colide_core.settings.RunSettings.create`.
    beta_1, beta_2 : float, default=0.99, 0.999
        Algorithm 1's Adam decay rates, rescaled with the step as described above.
    sigma0 : float or ndarray of shape (n_nodes,), optional
        Noise floor; defaults to :func:`~colide_core.solver._common.default_sigma0`. Sigma starts at
        ``100 * sigma0`` as in the faithful solver.
    W_init : ndarray of shape (n_nodes, n_nodes), optional
        Warm start (default zeros). Not modified.
    callback : callable, optional
        ``callback(stage, iteration, objective)`` at every checkpoint; returning True stops
        the solve and returns the partial result with ``stopped=True``. ``iteration`` is the
        stage's progress in faithful-equivalent steps (ODE time / ``lr``, the unit of
        ``max_iter``; polishing evaluations count as one scaled step each), so
        :func:`colide_core.progress_fraction` reads it the same way for both solvers. The
        history's ``"iteration"`` counts this solver's own steps and evaluations.
    edge_mask : ndarray of bool of shape (n_nodes, n_nodes), optional
        False marks a forbidden edge: its weight is exactly zero throughout (gradient masked
        in the Adam phase, projected in the polishing phase).
    l1_mask : ndarray of float of shape (n_nodes, n_nodes), optional
        Non-negative per-edge multiplier of ``lambda1``.
    required_mask : ndarray of bool of shape (n_nodes, n_nodes), optional
        Required edges (acyclic): each counts as present in the acyclicity function
        (``h_ldet`` of ``W o W + tau R``, as in :func:`~colide_core.colide_solve`), in the
        inverses, the O(d^2) certificates and the objective alike.
    step_scale : float or tuple of float, optional
        The initial factors ``c_k`` (>= 1), one per stage or one for all; default as in 1.
        above.
    switch_tol : float or tuple of float, optional
        Relative change of the averaged objective between checkpoints that ends the Adam phase
        of each stage; default ``tol`` (``max(tol, 1e-5)`` in the last stage).
    chatter_tol : float, "auto" or None, default="auto"
        Relative objective excess of the iterate over its running average above which the step
        scale is halved; None disables the control. "auto": ``c * phi`` with ``c = 3e-4`` for
        CoLiDE-EV and ``1e-3`` otherwise, and ``phi = min(1, 1e6 / cond(cov))`` (at least
        0.1), the factor of the default step scale.
    average : bool, default=True
        Test convergence on, and end each stage with, the running average of the iterates.
    min_scale : float, default=1.0
        Lower bound of the step scale under chatter control.
    polish : bool or tuple of bool, optional
        Polish each stage (per stage or for all); default: the last stage only.
    engine : {"auto", "numba", "numpy"} or tuple of 3 callables, default="auto"
        Kernel implementation; "auto" uses numba when installed. All give the same iterates
        up to rounding. A tuple ``(adam_chunk, grad, prox)`` with the signatures of the numpy
        kernels: another backend's (:func:`colide_core.solver._jax.jax_kernels`, the Adam phase
        compiled with JAX; ``CoLiDE(device=...)`` picks it).
    inverse_every : int or "auto", default="auto"
        Adam steps per d x d inverse (>= 1); 1 inverts at every step, as Algorithm 1 does.
        "auto": 10 in the chunks of steps run at step scale 1 (the faithful step, on
        ill-conditioned covariances), with the refined certificate there, else 3 (measured
        in ``docs/fast-solver.md``).
    blas_threads : int or None, default=1
        Size of the BLAS thread pool during the solve, set and restored with threadpoolctl;
        None leaves the process's setting alone. The per-step products are small: on a 2-core
        machine OpenBLAS's default pool (one thread per core) makes the numpy engine's steps
        8.9x slower at d = 200 and the numba engine's 1.3x slower at d = 100, and gains at most
        18% (numba, d = 300, idle machine); with fits running side by side it oversubscribes
        the cores (``benchmarks/research/bench_blas_threads.py``). The pool is process-wide: while one solve
        holds the limit, solves started in other threads run under it without changing it.

    Returns
    -------
    SolverResult
        As :func:`~colide_core.colide_solve`. ``n_iter`` counts Adam steps plus
        polishing function evaluations (each costs one LU and inverse); ``lr_used`` is the Adam
        step each stage ended with (scaled by ``c``).

    Raises
    ------
    ValueError
        For invalid parameters (as :func:`~colide_core.colide_solve`, plus a bad
        ``step_scale``, betas, ``engine``, ``blas_threads`` or ``inverse_every``).
    FloatingPointError
        If the iterates cannot be kept inside the log-det domain, or the objective becomes
        non-finite.

    Warns
    -----
    ConvergenceWarning
        If the last stage uses its budget before meeting ``tol``, or ``max_time`` runs out.

    Notes
    -----
    ``step_scale=1, polish=False, switch_tol=tol, chatter_tol=None, average=False`` is
    Algorithm 1 itself: the same iterates as :func:`~colide_core.colide_solve` up to
    rounding (tested).

    References
    ----------
    Saboksayr, Mateos and Tepper, "CoLiDE: Concomitant Linear DAG Estimation", ICLR 2024,
    Section 4 (eq. 4-7, Algorithm 1) and Appendix B; Kingma and Ba (2015), Adam; Barzilai and
    Borwein (1988); Grippo, Lampariello and Lucidi (1986), nonmonotone line search; Wright,
    Nowak and Figueiredo (2009), SpaRSA (proximal gradient with BB steps).
    """
    st = loop_settings(settings, params)
    if blas_threads is not None and (
        isinstance(blas_threads, bool) or not isinstance(blas_threads, (int, np.integer)) or blas_threads < 1
    ):
        raise ValueError(f"blas_threads must be None or an integer >= 1, got {blas_threads!r}.")
    if not _is_auto(inverse_every) and (
        isinstance(inverse_every, bool) or not isinstance(inverse_every, (int, np.integer)) or inverse_every < 1
    ):
        raise ValueError(f"inverse_every must be 'auto' or an integer >= 1, got {inverse_every!r}.")
    # Overflow and NaN never pass silently: they are detected explicitly (moments, objective,
    # line search) and raised as FloatingPointError, so numpy's own RuntimeWarnings are muted.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"), _blas_threads(blas_threads):
        return _fast_solve(
            cov, st, beta_1, beta_2, sigma0, W_init, callback, edge_mask, l1_mask, required_mask, step_scale,
            switch_tol, chatter_tol, average, min_scale, polish, engine, inverse_every,
        )


def _fast_solve(cov, st, beta_1, beta_2, sigma0, W_init, callback, edge_mask, l1_mask, required_mask, step_scale,
                switch_tol, chatter_tol, average, min_scale, polish, engine, inverse_every):
    cov, node = as_node_form(cov)
    run = _Solve(cov, st, beta_1=beta_1, beta_2=beta_2, sigma0=sigma0, W_init=W_init, edge_mask=edge_mask,
                 l1_mask=l1_mask, node=node)
    run.require(required_offset(required_mask, run.d))
    offset, required = run.offset, run.required
    variant, lr, tol, checkpoint = st.variant, st.lr, st.tol, st.checkpoint
    mu_schedule, s_schedule, max_iter = st.mu_schedule, st.s_schedule, st.max_iter
    cov, d, mask, lam, W = run.cov, run.d, run.mask, run.lam, run.W
    K = len(mu_schedule)
    phi = (_conditioning_factor(cov if node is None else node.pooled)
           if (step_scale is None or _is_auto(chatter_tol)) else 1.0)
    # The per-node covariance form's arrays for the kernels (placeholders without it).
    if node is None:
        grouped = (np.zeros((1, 1, 1)), np.zeros(1, dtype=np.int64), np.zeros(2, dtype=np.int64), np.ones(d),
                   float(d), False)
    else:
        cols, ptr = node.columns
        grouped = (node.weighted, cols, ptr, np.array(node.node_weight), float(np.sum(node.node_weight)), True)
    auto_refresh = _is_auto(inverse_every)
    if _is_auto(chatter_tol):
        chatter_tol = _CHATTER_REF[variant] * phi
    elif chatter_tol is not None and (
        isinstance(chatter_tol, str) or not (np.isfinite(chatter_tol) and chatter_tol >= 0)
    ):
        raise ValueError(f"chatter_tol must be 'auto', None or a number >= 0, got {chatter_tol!r}.")
    if step_scale is None:
        scales = _default_scales(phi, variant, lr, K)
    elif np.ndim(step_scale) == 0:
        scales = (float(step_scale),) * K
    else:
        scales = tuple(float(c) for c in step_scale)
    if len(scales) != K or any(not (np.isfinite(c) and c >= 1.0) for c in scales):
        raise ValueError(f"step_scale must be a number >= 1 or {K} such numbers, got {step_scale!r}.")
    adam_chunk, grad_fn, prox_fn = _kernels(engine)
    # A backend may evaluate a point on its device (issue 50): a stage's warm start and the running
    # average's point at a checkpoint; the same point and domain test, to rounding.
    evaluate = getattr(adam_chunk, "evaluate_point", None) or _evaluate
    vcode = _VCODE[variant]
    # The kernels take the noise floor as an array of shape (d,) (all equal for EV; 1 for "ls").
    sig0 = np.ones(d) if variant == "ls" else np.broadcast_to(run.sigma0, (d,)).astype(float)

    # Sigma starts at 100 * sigma0 as in the faithful solver: the first Adam step uses it.
    isig0 = np.ones(d) if variant == "ls" else 1.0 / (100.0 * sig0)
    stop_reason = None
    obj = np.nan
    sigma_out = run.sigma
    first_stage = True

    for k, (mu, s, T) in enumerate(zip(mu_schedule, s_schedule, max_iter)):
        mu, c = float(mu), scales[k]
        last = k == K - 1
        point, lr_k, s_k = run.enter_stage(
            k, float(lr) * c, s, lambda s_try: evaluate(W, cov, s_try, mu, lam, vcode, sig0, node, offset)
        )
        T_adam = max(int(math.ceil(T / c)), 1)
        if switch_tol is None:
            sw_tol = max(float(tol), _SWITCH_TOL_LAST) if last else float(tol)
        else:
            sw_tol = float(switch_tol[k] if np.ndim(switch_tol) else switch_tol)
        state = _StageState(point, d)
        if first_stage:
            state.isig[:] = isig0  # the faithful first step uses sigma = 100 sigma0
            first_stage = False

        # ---- phase 1: scaled Adam ------------------------------------------------------
        m = np.zeros((d, d))
        v = np.zeros((d, d))
        b1t = b2t = 1.0
        Wbar = state.W.copy()
        t = 0
        used = 0.0  # faithful-equivalent steps (ODE time / lr) spent so far
        c_cur = c
        obj_prev = np.inf
        adam_done = False
        stage_converged = False
        # A backend may run the whole phase below on its device (issue 50, colide_core/solver/_jax_loop.py):
        # the same decisions per checkpoint, heard by the host at a bounded rate; None: it declines.
        phase = getattr(adam_chunk, "adam_phase", None)
        done = None if phase is None else phase(
            state, Wbar, stage=k, run=run, callback=callback, cov=cov, lam=lam, mask=mask, sig0=sig0, vcode=vcode,
            mu=mu, s=s_k, lr=lr_k, c=c, T=T, checkpoint=checkpoint, beta_1=beta_1, beta_2=beta_2, sw_tol=sw_tol,
            tol=float(tol), average=average, chatter_tol=chatter_tol, min_scale=min_scale,
            inverse_every=None if auto_refresh else inverse_every, grouped=grouped, required=required,
            offset=offset, node=node)
        if done is not None:
            t, used, c_cur, lr_k, ck, obj, pbar, stop_reason, stage_converged = done
            adam_done = True
        while not adam_done:
            b1 = max(1.0 - (1.0 - beta_1) * c_cur, 0.0)
            b2 = max(1.0 - (1.0 - beta_2) * c_cur, 0.0)
            ck = max(int(math.ceil(checkpoint / c_cur)), 1)
            ema = min(1.0, 4.0 / ck)
            n = max(min(ck, int(math.ceil((T - used) / c_cur))), 1)
            status, lr_k, b1t, b2t = adam_chunk(
                state.W, m, v, state.MinvT, state.R, state.resid, state.isig, cov, lam, mask,
                mu, s_k, lr_k, b1, b2, b1t, b2t, sig0, vcode, n, _MAX_HALVINGS, Wbar, ema,
                _auto_inverse_every(c_cur) if auto_refresh else inverse_every, state.lag, state.xc,
                auto_refresh and _auto_refine(c_cur), *grouped, *required,
            )
            if status == 2:
                raise FloatingPointError(
                    f"Stage {k}, step {t + 1}: the gradient overflows (the data's scale is too large "
                    "for this score); standardise or rescale the data."
                )
            if status != 0:
                raise FloatingPointError(
                    f"Stage {k}, step {t + 1}: could not stay inside the log-det domain "
                    f"(step size halved {_MAX_HALVINGS} times)."
                )
            t += n
            used += n * c_cur
            obj, h = state.objective(mu, s_k, lam, vcode, run.weight, offset)
            if not np.isfinite(obj):
                raise FloatingPointError(f"Stage {k}, step {t}: the objective is not finite.")
            pbar = evaluate(Wbar.copy(), cov, s_k, mu, lam, vcode, sig0, node, offset) if (average or chatter_tol) else None
            stop_reason = run.checkpoint(k, t, obj, h, state.sigma(vcode), callback, used, W=state.W)
            if stop_reason is not None:
                break
            f_test = pbar.obj if (average and pbar is not None) else obj
            if np.isfinite(obj_prev) and abs(obj_prev - f_test) <= sw_tol * abs(obj_prev):
                adam_done = True
                stage_converged = sw_tol <= tol
            elif used >= T:
                adam_done = True
            elif (chatter_tol and pbar is not None and c_cur > min_scale
                  and obj - pbar.obj > chatter_tol * abs(pbar.obj)):
                # The iterate chatters around its running average by more than chatter_tol:
                # the step is too large for this stage's stiffest directions. Halve it (and the
                # Adam memories' time scale) down to min_scale.
                new_c = max(c_cur / 2.0, min_scale)
                lr_k *= new_c / c_cur
                c_cur = new_c
            obj_prev = f_test
        if average and stop_reason is None and pbar is not None and pbar.obj <= obj:
            state = _StageState(pbar, d)
            obj = pbar.obj
        polish_k = last if polish is None else bool(polish[k] if np.ndim(polish) else polish)
        polished = False
        if stop_reason is None and polish_k:
            # A backend may polish on its device (issue 50, colide_core/solver/_jax_loop.py): the
            # same method and decisions; None: it declines and the host polishes.
            on_device = getattr(adam_chunk, "polish_phase", None)
            polished_on = None if on_device is None else on_device(
                state.W.copy(), cov=cov, s=s_k, mu=mu, lam=lam, mask=mask, vcode=vcode, sig0=sig0, lr=lr_k,
                tol=float(tol) / 10.0, max_it=T_adam, ck=ck, stage=k, t0=t, run=run, callback=callback,
                used0=used, unit=c_cur, node=node, offset=offset)
            W_p, n_ev, polish_converged, stop_reason = polished_on if polished_on is not None else _polish(
                state.W.copy(), cov, s_k, mu, lam, mask, vcode, sig0, grad_fn, prox_fn, lr_k,
                float(tol) / 10.0, T_adam, ck, k, t, run, callback, used, c_cur, node, offset,
            )
            if W_p is not None:  # None: Adam's last iterate fails the full domain test; keep it
                t += n_ev
                state = _StageState(W_p, d)
                stage_converged, polished = polish_converged, True
        W = state.W
        sigma_out = state.sigma(vcode)
        obj = state.obj if polished and stop_reason is None else obj
        run.end_stage(t, t, lr_k, s_k, stage_converged)
        if stop_reason is not None:
            break
    return run.result(W, sigma_out, obj, stop_reason, stacklevel=4)


class _StageState:
    """Mutable arrays the Adam kernel updates in place, built from a :class:`_Point`."""

    def __init__(self, point, d):
        if not isinstance(point, _Point):
            raise TypeError  # pragma: no cover - internal misuse
        self.W = np.ascontiguousarray(point.W).copy()
        self.MinvT = np.ascontiguousarray(point.MinvT).copy()
        self.R = np.ascontiguousarray(point.R).copy()
        self.resid = np.array(point.resid, dtype=float)
        self.isig = np.array(point.isig, dtype=float)
        self.obj = point.obj
        # Domain certificate vector inv(M) @ 1 and the age (in steps) of MinvT; -1: no
        # certificate (the next step inverts).
        self.xc = np.empty(d)
        self.lag = np.array([0 if _colsums_py(self.MinvT, self.xc) else -1], dtype=np.int64)

    def sigma(self, vcode):
        s = _sigma_value(self.isig, vcode)
        return s.copy() if isinstance(s, np.ndarray) else s

    def objective(self, mu, s, lam, vcode, weight=None, offset=None):
        """``(objective, h)`` of the stage at the current W (:func:`colide_core.solver._objective._stage_value`)."""
        return _stage_value(self.W, self.resid, _sigma_value(self.isig, vcode), _VARIANT[vcode], mu, lam, s,
                            weight=weight, offset=offset)


def _polish(W, cov, s, mu, lam, mask, vcode, sig0, grad_fn, prox_fn, lr, tol, max_it, ck,
            stage, t0, run, callback, used0, unit, node=None, offset=None):
    """Proximal gradient with BB steps and a nonmonotone domain-aware line search on stage F.

    Progress reported to the callback: ``used0`` faithful-equivalent steps before polishing plus
    ``unit`` per function evaluation (the Adam phase's last step scale).

    Returns ``(point, n_evaluations, converged, stop_reason)``; ``(None, 0, False, None)`` when W
    itself fails :func:`_evaluate`'s domain test. Adam's kernels certify the domain with a lagged
    inverse (``inv(M) @ 1 > 0``), while :func:`_evaluate` inverts afresh and asks every entry of
    the inverse to be >= ``_DOMAIN_TOL``: near the boundary of the log-det domain (large data,
    tiny lambda1) the rounding of a fresh inverse can refuse the point Adam accepted (issue 53).
    """
    d = W.shape[0]
    p = _evaluate(W, cov, s, mu, lam, vcode, sig0, node, offset)
    if p is None:
        return None, 0, False, None
    G = grad_fn(p.W, p.R, p.MinvT, p.isig, mu, mask, np.empty((d, d)))
    thr_unit = mu * lam
    gmax = float(np.abs(G).max())
    eta = lr / gmax if gmax > 0 else lr
    eta = min(max(eta, _ETA_MIN), _ETA_MAX)
    hist = [p.obj]
    n_ev = 0
    converged = False
    stop = None
    Wn = np.empty((d, d))
    it = 0
    while n_ev < max_it:
        it += 1
        f_ref = max(hist[-_NM_MEMORY:])
        while True:
            prox_fn(p.W, G, eta, eta * thr_unit, mask, Wn)
            q = _evaluate(Wn.copy(), cov, s, mu, lam, vcode, sig0, node, offset)
            n_ev += 1
            if q is not None and np.isfinite(q.obj):
                dW = q.W - p.W
                dd = float(np.vdot(dW, dW))
                if q.obj <= f_ref - _ARMIJO / (2.0 * eta) * dd:
                    break
            eta *= 0.5
            if eta < _ETA_MIN or n_ev >= max_it:
                q = None
                break
        if q is None:
            # No acceptable step even with a tiny step size: p is stationary to working precision.
            converged = eta < _ETA_MIN
            break
        Gq = grad_fn(q.W, q.R, q.MinvT, q.isig, mu, mask, np.empty((d, d)))
        S = q.W - p.W
        Y = Gq - G
        sy = float(np.vdot(S, Y))
        eta_prev = eta
        if sy > 0:
            eta = float(np.vdot(S, S)) / sy if it % 2 else sy / float(np.vdot(Y, Y))
        else:
            eta *= 2.0
        if not np.isfinite(eta):
            eta = eta_prev
        eta = min(max(eta, _ETA_MIN), _ETA_MAX)
        p, G = q, Gq
        hist.append(p.obj)
        if not np.isfinite(p.obj):
            raise FloatingPointError(f"Stage {stage}: the objective is not finite.")
        done = len(hist) > _NM_MEMORY and abs(hist[-1 - _NM_MEMORY] - p.obj) <= tol * abs(p.obj)
        if done or it % ck == 0:
            stop = run.checkpoint(stage, t0 + n_ev, p.obj, p.h, _sigma_value(p.isig, vcode), callback,
                                  used0 + n_ev * unit, W=p.W)
            if stop is not None:
                break
        if done:
            converged = True
            break
    history = run.history
    if stop is None and not (history["stage"] and history["stage"][-1] == stage
                             and history["iteration"][-1] == t0 + n_ev):
        stop = run.checkpoint(stage, t0 + n_ev, p.obj, p.h, _sigma_value(p.isig, vcode), callback,
                              used0 + n_ev * unit, W=p.W)
    return p, n_ev, converged, stop
