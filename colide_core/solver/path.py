"""The lambda x threshold explorer: CoLiDE solved along a grid of L1 weights, warm-started.

Conventions: data ``X`` has shape ``(n_samples, n_nodes)``; ``W`` has shape
``(n_nodes, n_nodes)`` and ``W[i, j] != 0`` means the edge i -> j.

:func:`lambda_path` solves CoLiDE once per L1 weight ``lambda1`` and re-applies every
threshold to the stored raw weights (:func:`colide_core.threshold_to_dag`), so the threshold
axis costs no solving. It returns a :class:`LambdaPath` with the graph of every
(lambda, threshold) cell, the edge counts, and the BIC of each graph
(:func:`bic_score`); :func:`path_metrics` adds SHD / TPR / FDR grids against a ground truth.

Warm starts
-----------
The path is solved in order of **increasing** ``lambda1`` (dense graphs first). The first
``lambda1`` runs the full central path (all ``mu`` / ``s`` stages, from ``W = 0``); every
later one starts from the previous solution and, by default, runs **only the last stage** of
the schedule (``mu_K``, ``s_K``; ``warm_stages=1``): the previous solution is already a
near-stationary point of that stage's objective for a nearby ``lambda1``.

* Restarting the ``mu`` schedule from its first stage (``warm_stages=K``) erases the warm
  start: the ``mu = 1`` stage lands on the same point from any start, so the graphs equal the
  independent fits', but the path is not faster.
* Decreasing ``lambda1`` (sparse first) with the last stage only fails on simulated data: at
  ``mu_K = 0.001`` the log-det term dominates and the edges a smaller ``lambda1`` should add do
  not appear. Hence the increasing order.
* Increasing ``lambda1`` with the last stage only is several times faster than independent
  fits, with identical graphs on Sachs; where a simulated graph differs, the two are different
  local minima of the same non-convex objective.
* ``warm_stages=2`` follows the independent fits more closely, for a smaller speed-up.

The measured figures (``benchmarks/bench_path.py``) are in ``docs/trust-the-edges.md``,
section "Measured: warm-started path".

Pass ``warm_start=False`` for independent fits.

Choosing lambda without ground truth
------------------------------------
:func:`bic_score` is the Bayesian information criterion of the graph's *refitted* linear
Gaussian SEM: each node is regressed (OLS) on its parents, with its own noise variance.
Why this score: (i) it is the score that GES optimises, consistent for selecting a graph
among DAGs (Haughton 1988; Chickering 2002); (ii) the refit removes the L1 shrinkage, so
graphs from different ``lambda1`` are compared on structure, not on how much their weights
were shrunk; (iii) one variance per node makes no equal-variance assumption (the CoLiDE-NV
model) and makes the score invariant to rescaling any column, which matters for raw data such
as Sachs; (iv) it costs only covariance algebra, whereas stability selection would refit every
cell on dozens of subsamples. Its limit: it is score-equivalent (Markov-equivalent DAGs get
the same BIC), so it chooses sparsity, not edge directions.

Choosing the threshold without ground truth
-------------------------------------------
:func:`choose_threshold` applies the same score to one fit: of the graphs that thresholding
its raw weights gives (one per distinct weight magnitude), the one with the lowest BIC (or the
extended BIC, ``gamma > 0``). What it measured on the bnlearn networks and on the paper's
simulated problems is in ``docs/networks.md``, section "A threshold blind to the truth".
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from colide_core import defaults
from colide_core.solver._common import ConvergenceWarning, progress_fraction
from colide_core.settings import RunSettings
from colide_core.solver.registry import get_solver
from colide_core.graph._dag import threshold_to_dag
from colide_core._params import (
    NON_NEGATIVE,
    POSITIVE,
    POSITIVE_INT,
    InvalidParameterError,
    StrOptions,
    check_sequence,
    is_int,
    is_real,
    validate_params,
)
from colide_core._validation import check_square_matrix, data_covariance
from colide_core.evaluation.refit import parent_least_squares

__all__ = [
    "DEFAULT_THRESHOLDS",
    "LambdaPath",
    "bic_score",
    "choose_threshold",
    "default_lambdas",
    "lambda_path",
    "path_metrics",
]

#: The paper's defaults, marked on the explorer's grids (aliases of ``colide_core.defaults``).
PAPER_LAMBDA = defaults.LAMBDA1
PAPER_THRESHOLD = defaults.THRESHOLD
#: Default threshold axis (includes the paper's 0.3).
DEFAULT_THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0)
_MIN_VAR = 1e-300


@validate_params({"n": [POSITIVE_INT], "low": [POSITIVE], "high": [POSITIVE]},
                 prefer_skip_nested_validation=False)
def default_lambdas(n=9, low=0.005, high=0.5):
    """Log-spaced L1 weights; the defaults contain the paper's 0.05 exactly (the middle point).

    Parameters
    ----------
    n : int, default=9
        Number of values (>= 1).
    low, high : float, default=0.005 and 0.5
        Smallest and largest value (> 0).

    Returns
    -------
    ndarray of shape (n,)
        ``np.geomspace(low, high, n)``, increasing, each rounded to 12 significant digits (so
        the value 0.05 is 0.05, not 0.049999999999999996, in links, files and labels).

    Raises
    ------
    InvalidParameterError
        (a ValueError and a TypeError) If ``n`` is not an int >= 1 or ``low``, ``high`` are
        not finite numbers > 0 (bools and strings are refused).
    ValueError
        If ``low > high``.
    """
    if low > high:
        raise ValueError(f"need 0 < low <= high, got low={low!r}, high={high!r}.")
    return np.array([float(f"{v:.12g}") for v in np.geomspace(float(low), float(high), int(n))])


def bic_score(cov, n, A):
    """BIC of the linear Gaussian SEM with graph ``A``, refitted by OLS, one variance per node.

    For node j with parents P (``A[P, j] != 0``) the OLS residual variance (maximum
    likelihood) is ``s2_j = cov[j, j] - cov[j, P] cov[P, P]^{-1} cov[P, j]`` and its Gaussian
    log-likelihood is ``-n / 2 (log(2 pi s2_j) + 1)``. Then
    ``BIC = -2 sum_j loglik_j + k log n`` with ``k = |edges| + n_nodes`` (one weight per edge
    and one variance per node; the node means are fitted too but cost the same for every
    graph and are left out). Lower is better.

    Parameters
    ----------
    cov : ndarray of shape (n_nodes, n_nodes)
        ``X.T @ X / n`` of the centred data ``X`` of shape ``(n_samples, n_nodes)``.
    n : int
        Number of samples (>= 2).
    A : array-like of shape (n_nodes, n_nodes)
        The graph; nonzero = edge, ``A[i, j] != 0`` meaning i -> j. Its weights are ignored.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the shapes disagree, a matrix is not real and finite, or ``n`` is not an int >= 2
        (``InvalidParameterError``, also a TypeError, for a float, a bool or a string).

    Notes
    -----
    The Gaussian BIC of Schwarz (1978) as used by GES (Chickering 2002). Rescaling a column of
    the data adds the same constant to every graph's BIC, so comparisons are scale-free. A
    singular parent covariance is handled with a least-squares solve. The refit is
    :func:`colide_core.evaluation.refit.parent_least_squares`, shared with the model checks and
    the Predict page's weights.
    """
    if not is_int(n) or n < 2:
        raise InvalidParameterError(f"n must be an integer >= 2 (not a float or a bool), got {n!r}.")
    C = check_square_matrix(cov, "cov", what="covariance matrix")
    B = check_square_matrix(A, "A", what="adjacency matrix") != 0
    d = C.shape[0]
    if B.shape != (d, d):
        raise ValueError(f"cov and A must both be ({d}, {d}), got {C.shape} and {B.shape}.")
    B = B.copy()
    np.fill_diagonal(B, False)
    _, s2 = parent_least_squares(C, B)  # the one refit on given parents: s2_j from the covariance
    loglik = 0.0
    for j in range(d):  # summed in node order, as before (bit-identical scores)
        loglik += -0.5 * n * (np.log(2.0 * np.pi * max(float(s2[j]), _MIN_VAR * max(C[j, j], 1.0))) + 1.0)
    k = int(B.sum()) + d
    return float(-2.0 * loglik + k * np.log(n))


@dataclass(frozen=True, eq=False)
class LambdaPath:
    """CoLiDE solved along a grid of ``lambda1``, with every threshold applied.

    Attributes
    ----------
    lambdas : ndarray of shape (n_lambdas,)
        L1 weights, increasing.
    thresholds : ndarray of shape (n_thresholds,)
        Post-processing thresholds, increasing.
    W : ndarray of shape (n_lambdas, d, d)
        Raw weights of each solve; ``W[k, i, j] != 0`` means i -> j.
    adjacency : ndarray of shape (n_lambdas, n_thresholds, d, d)
        ``threshold_to_dag(W[k], thresholds[t], required=required_mask)``: each a DAG.
    edge_counts : ndarray of int of shape (n_lambdas, n_thresholds)
    bic : ndarray of shape (n_lambdas, n_thresholds)
        :func:`bic_score` of each cell's graph (lower is better).
    sigma : list
        Noise standard deviation(s) of each solve (float for EV, (d,) for NV, None for LS).
    objective : ndarray of shape (n_lambdas,)
        Final objective of each solve (at the last ``mu``, ``s``).
    n_iter : ndarray of int of shape (n_lambdas,)
        Iterations of each solve.
    fit_time : ndarray of shape (n_lambdas,)
        Seconds per solve.
    converged : ndarray of bool of shape (n_lambdas,)
    variant : str
    warm_start : bool
    node_names : list of str or None
    n_samples : int
    required_mask : ndarray of bool of shape (d, d) or None
    stopped : bool
        True when the callback stopped the path: only the first (smallest) lambdas are there.
    last_stage_converged : ndarray of bool of shape (n_lambdas,) or None
        Whether each solve's *last* stage met ``tol`` (``SolverResult.last_stage_converged``);
        ``converged`` asks it of every stage, and the early stages of the central path may end
        on their step budget by design.
    """

    lambdas: np.ndarray
    thresholds: np.ndarray
    W: np.ndarray
    adjacency: np.ndarray
    edge_counts: np.ndarray
    bic: np.ndarray
    sigma: list
    objective: np.ndarray
    n_iter: np.ndarray
    fit_time: np.ndarray
    converged: np.ndarray
    variant: str
    warm_start: bool
    node_names: object
    n_samples: int
    required_mask: object = None
    stopped: bool = False
    last_stage_converged: object = None

    @property
    def total_time(self) -> float:
        """Seconds spent solving the whole path."""
        return float(np.sum(self.fit_time))

    def graph(self, i_lambda, i_threshold):
        """The DAG of one grid cell, ``adjacency[i_lambda, i_threshold]`` (a copy), shape (d, d)."""
        return self.adjacency[int(i_lambda), int(i_threshold)].copy()

    def cell(self, lambda1, threshold):
        """Indices ``(i_lambda, i_threshold)`` of the grid point nearest to the given values.

        Nearness is measured on log(lambda1) and on the threshold.
        """
        i = int(np.argmin(np.abs(np.log(self.lambdas) - np.log(max(float(lambda1), 1e-300)))))
        j = int(np.argmin(np.abs(self.thresholds - float(threshold))))
        return i, j

    def best_bic(self):
        """Cell with the lowest BIC, ``(i_lambda, i_threshold)``; ties go to the sparser graph."""
        order = np.lexsort((self.edge_counts.ravel(), self.bic.ravel()))
        i, j = np.unravel_index(int(order[0]), self.bic.shape)
        return int(i), int(j)

    def table(self):
        """The grid as a long table.

        Returns
        -------
        pandas.DataFrame
            One row per cell: ``lambda1``, ``threshold``, ``edges``, ``bic``.
        """
        L, T = np.meshgrid(self.lambdas, self.thresholds, indexing="ij")
        return pd.DataFrame({"lambda1": L.ravel(), "threshold": T.ravel(),
                             "edges": self.edge_counts.ravel(), "bic": self.bic.ravel()})


def path_metrics(path, B_true, keys=("shd", "tpr", "fdr")):
    """Scores of every grid cell against the ground truth.

    Parameters
    ----------
    path : LambdaPath
    B_true : array-like or DataFrame of shape (d, d)
        True DAG, nonzero = edge, ``B_true[i, j] != 0`` meaning i -> j.
    keys : sequence of str
        Keys of :func:`colide_core.evaluation._metrics.evaluate` to keep.

    Returns
    -------
    dict
        key -> ndarray of shape (n_lambdas, n_thresholds).

    Raises
    ------
    ValueError
        From ``evaluate`` (shape mismatch, ``B_true`` not a DAG).
    """
    from colide_core.evaluation._metrics import evaluate

    B = B_true.to_numpy() if isinstance(B_true, pd.DataFrame) else np.asarray(B_true)
    n_l, n_t = path.edge_counts.shape
    out = {k: np.full((n_l, n_t), np.nan) for k in keys}
    for i in range(n_l):
        for j in range(n_t):
            m = evaluate(B, path.adjacency[i, j])
            for k in keys:
                out[k][i, j] = m[k]
    return out


def _as_cov(X):
    cov, n, names = data_covariance(X)
    if np.any(np.diag(cov) <= 0):
        bad = [names[k] if names else str(k) for k in np.flatnonzero(np.diag(cov) <= 0)]
        raise ValueError(f"Constant column(s) with zero variance: {', '.join(bad)}.")
    return cov, n, names


@validate_params(
    {
        "X": ["array-like"],
        "lambdas": ["array-like", None],
        "thresholds": ["array-like"],
        "variant": [StrOptions(set(defaults.VARIANTS))],
        "warm_start": ["boolean"],
        "warm_stages": [POSITIVE_INT],
        # mu_schedule, s_schedule, max_iter, lr, tol, checkpoint, solver: the estimator's own
        # constraints (CoLiDE._validate_params), checked in the body.
        "forbidden": "no_validation",
        "required": "no_validation",
        "tiers": "no_validation",
        "callback": [callable, None],
        "design": "no_validation",
    },
    prefer_skip_nested_validation=False,
)
def lambda_path(
    X,
    lambdas=None,
    thresholds=DEFAULT_THRESHOLDS,
    variant=defaults.VARIANT,
    *,
    warm_start=True,
    warm_stages=1,
    forbidden=None,
    required=None,
    tiers=None,
    callback=None,
    conditions=None,
    targets=None,
    design=None,
    **params,
):
    """Solve CoLiDE for every ``lambda1`` (warm-started) and apply every threshold.

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_nodes)
        Finite numeric data; a centred copy is used.
    lambdas : sequence of float, optional
        L1 weights (> 0 for a log axis; 0 is allowed), solved in increasing order; default
        :func:`default_lambdas` (9 values from 0.005 to 0.5, log-spaced, containing 0.05).
    thresholds : sequence of float, default=DEFAULT_THRESHOLDS
        Thresholds (>= 0) re-applied to the raw weights without re-solving.
    variant : {"nv", "ev", "ls"}, default="nv"
    warm_start : bool, default=True
        Start each ``lambda1`` from the previous solution (see the module notes). False
        solves each ``lambda1`` independently from ``W = 0`` with the full schedule.
    warm_stages : int, default=1
        With ``warm_start``, how many of the last ``mu`` / ``s`` stages a warm-started solve
        runs (1 = the last stage only; ``len(mu_schedule)`` restarts the whole schedule).
    forbidden, required, tiers : optional
        Prior knowledge, as in :func:`colide_core.graph.constraints.resolve_constraints`;
        enforced in every solve and in the thresholding.
    callback : callable, optional
        ``callback(done, total)`` with ``done`` a float (solves finished plus the fraction
        of the current one, at most 0.99, from the solver's checkpoints; a whole number only
        once a solve is finished) and ``total`` the number of ``lambda1`` values. Returning True stops: the path then holds the solves finished so
        far (``stopped=True``).
    conditions, targets : optional
        The condition of each row and the nodes each condition intervenes on, as in
        :meth:`colide_core.CoLiDE.fit`: every solve then has an intercept per condition and the
        masked likelihood (``docs/conditions.md``). The BIC uses the covariance centred per
        condition (the masks are not in it).
    design : colide_core.data.design.Design, optional
        Both in one object (validated once), instead of ``conditions`` and ``targets``
        (:func:`colide_core.data.design.resolve_design`): the same path as the loose form. A
        design without conditions is the path without conditions.
    **params
        The other run settings by name (:class:`colide_core.settings.RunSettings`: the central
        path ``mu_schedule``, ``s_schedule``, ``max_iter``, and ``lr``, ``tol``,
        ``checkpoint``, ``max_time`` per solve, and ``solver``, the key of
        ``colide_core.SOLVERS``: ``"auto"``/``"fast"`` the fast solver, ``"adam"`` the
        paper-faithful Algorithm 1, ``"topo"`` CoLiDE-TOPO), checked once before any solve;
        ``lambda1`` is the path's own and ``threshold`` is ``thresholds``.

    Returns
    -------
    LambdaPath

    Raises
    ------
    ValueError
        For invalid data or parameters, or inconsistent prior knowledge (before solving).
        Parameters are checked with scikit-learn's parameter validation
        (``InvalidParameterError``, also a TypeError): numbers given as strings or bools,
        NaN, inf, floats where ints are asked, more than ``MAX_PATH_LAMBDAS`` (100)
        lambdas or ``MAX_PATH_THRESHOLDS`` (100) thresholds are refused, and so is a grid
        whose graphs would hold more than ``MAX_CELLS`` numbers
        (``n_lambdas * n_thresholds * n_nodes**2``), before any solve; so is ``design`` with
        ``conditions`` or ``targets``, or a ``design`` of other data.
    FloatingPointError
        If a solve cannot stay inside the log-det domain.
    """
    for own in ("lambda1", "threshold"):
        if own in params:
            raise InvalidParameterError(f"{own} is set by the path's grid (lambdas, thresholds), not as a setting.")
    settings = RunSettings.create(variant=variant, **params)  # one check of every setting, before any solve
    mu_schedule, s_schedule, max_iter = settings.mu_schedule, settings.s_schedule, settings.max_iter
    lam = default_lambdas() if lambdas is None else np.asarray(
        check_sequence(lambdas, "lambdas", "lambda_path", NON_NEGATIVE, max_len=defaults.MAX_PATH_LAMBDAS))
    thr = np.asarray(check_sequence(thresholds, "thresholds", "lambda_path", NON_NEGATIVE,
                                    max_len=defaults.MAX_PATH_THRESHOLDS))
    lam = np.unique(lam)
    thr = np.unique(thr)
    K = len(mu_schedule)
    if not 1 <= warm_stages <= K:
        raise ValueError(f"warm_stages must be an integer in [1, {K}], got {warm_stages!r}.")
    solve = get_solver(settings.solver)
    if conditions is None and targets is None and not getattr(design, "has_conditions", design is not None):
        cov, n, names = _as_cov(X)
        solve_cov = cov
        if design is not None:  # a design without conditions must still fit the data
            from colide_core.data.design import resolve_design

            resolve_design(design, node_names=names, n_samples=n, n_nodes=cov.shape[0])
    else:
        from colide_core.data.conditions import ConditionStats

        if conditions is None and design is None:
            raise ValueError("targets need conditions: give the condition of each row.")
        from colide_core.exceptions import StatisticsStopped

        # Stop is heard while the statistics of many conditions are built (issue 42)
        hear = None if callback is None else (lambda: bool(callback(0.0, int(lam.size))))
        try:
            stats = ConditionStats.from_data(X, conditions, targets, callback=hear, design=design)
            node = stats.node_covariances(callback=hear)
        except StatisticsStopped:
            raise ValueError("The path was stopped before the first lambda1 was solved.") from None
        cov, n = np.array(node.pooled), stats.n_samples
        names = None if stats.node_names is None else list(stats.node_names)
        solve_cov = np.array(node.covs[0]) if node.trivial else node
    d = cov.shape[0]
    if settings.device != "cpu":  # the JAX backend (colide_core/solver/_jax.py, docs/gpu.md)
        from colide_core.solver._jax import device_solver

        solve = device_solver(settings.solver, settings.device, n_nodes=d)
    if lam.size * thr.size * d * d > defaults.MAX_CELLS:  # the (n_lambdas, n_thresholds, d, d) graphs
        raise ValueError(f"{lam.size} lambdas x {thr.size} thresholds x {d} x {d} nodes = "
                         f"{lam.size * thr.size * d * d:,} graph cells is more than the {defaults.MAX_CELLS:,} "
                         "allowed (colide_core.defaults.MAX_CELLS): use fewer lambdas or thresholds.")
    edge_mask = required_mask = None
    if forbidden is not None or required is not None or tiers is not None:
        from colide_core.graph.constraints import resolve_constraints

        edge_mask, required_mask = resolve_constraints(d, names, forbidden=forbidden, required=required, tiers=tiers)
    from colide_core.graph.constraints import order_precedence

    precedence = order_precedence(d, required_mask, tiers, names)
    full = (tuple(mu_schedule), tuple(s_schedule), tuple(max_iter))
    warm = tuple(tuple(x)[-int(warm_stages):] for x in full)
    Ws, sigmas, objs, iters, times, conv, last_conv = [], [], [], [], [], [], []
    W_prev = None
    stopped = False
    for k, lam_k in enumerate(lam):
        sched = full if (W_prev is None or not warm_start) else warm

        def inner(stage, iteration, objective, _k=k, _sched=sched):
            if callback is None:
                return False
            frac = progress_fraction(_sched[2], stage, iteration)
            return bool(callback(_k + min(frac, 0.99), int(lam.size)))

        # solver="auto": the neighbouring λ's point is the warm start of the fast solver and one more
        # candidate; the order search gets an equal share of one fit's budget per λ (issue 51)
        extra = ({"start": "warm" if (warm_start and W_prev is not None) else "cold",
                  "budget": defaults.AUTO_BUDGET / lam.size} if settings.solver == "auto" else {})
        if settings.solver in ("auto", "topo"):  # the order search keeps required edges and tiers forward
            extra["precedence"] = precedence
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            res = solve(
                solve_cov, settings.replace(lambda1=float(lam_k), mu_schedule=sched[0], s_schedule=sched[1],
                                      max_iter=sched[2]),
                W_init=W_prev if warm_start else None, callback=inner if callback is not None else None,
                edge_mask=edge_mask,
                l1_mask=None if required_mask is None else (~required_mask).astype(float),
                required_mask=required_mask, **extra,
            )
        if res.stopped:
            stopped = True
            break
        Ws.append(np.array(res.W, dtype=float))
        sigmas.append(None if res.sigma is None else np.copy(res.sigma))
        objs.append(float(res.objective))
        iters.append(int(res.n_iter))
        times.append(float(res.fit_time))
        conv.append(bool(res.converged))
        last_conv.append(bool(res.last_stage_converged))
        W_prev = res.W
        if callback is not None and callback(float(k + 1), int(lam.size)):
            stopped = k + 1 < lam.size
            break
    if not Ws:
        raise ValueError("The path was stopped before the first lambda1 was solved.")
    lam = lam[: len(Ws)]
    W = np.stack(Ws)
    adj = np.empty((lam.size, thr.size, d, d))
    bic = np.empty((lam.size, thr.size))
    for i in range(lam.size):
        for j in range(thr.size):
            adj[i, j] = threshold_to_dag(W[i], thr[j], required=required_mask)
            bic[i, j] = bic_score(cov, n, adj[i, j])
    return LambdaPath(
        lambdas=lam, thresholds=thr, W=W, adjacency=adj, edge_counts=(adj != 0).sum(axis=(2, 3)),
        bic=bic, sigma=sigmas, objective=np.asarray(objs), n_iter=np.asarray(iters),
        fit_time=np.asarray(times), converged=np.asarray(conv), variant=variant,
        warm_start=bool(warm_start), node_names=names, n_samples=int(n),
        required_mask=required_mask, stopped=stopped, last_stage_converged=np.asarray(last_conv[: len(Ws)]),
    )


def _log_binomial(m, k):
    from math import lgamma

    return lgamma(m + 1) - lgamma(k + 1) - lgamma(m - k + 1)


def choose_threshold(X, W, thresholds=None, *, required=None, gamma=0.0, max_candidates=200):
    """The post-processing threshold whose DAG has the lowest BIC, chosen without a ground truth.

    Every candidate threshold ``t`` gives the DAG ``threshold_to_dag(W, t, required=required)``;
    each is scored by :func:`bic_score` on the covariance of ``X`` (the OLS refit on the graph,
    one noise variance per node), plus ``2 * gamma * log C(d (d - 1), edges)`` when ``gamma > 0``
    (the extended BIC). The lowest score wins; ties go to the larger threshold (the sparser graph).

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_nodes)
        The data ``W`` was fitted on (the paper writes it d x n); a centred copy is used.
    W : array-like of shape (n_nodes, n_nodes)
        Raw weights of a fit (e.g. ``CoLiDE.W_``), ``W[i, j] != 0`` meaning i -> j. Not modified.
    thresholds : sequence of float, optional
        Candidate thresholds (>= 0, in the units of ``W``; at most ``MAX_PATH_THRESHOLDS``).
        Default: the cuts, 0 and every distinct off-diagonal ``|W[i, j]| > 0``, so every graph
        that some threshold gives is a candidate, at any scale of the data. When there are more
        than ``max_candidates`` cuts, ``max_candidates`` of them, evenly spaced in rank, are
        scored first, then every cut between the two neighbours of the best of those.
    required : array-like of bool of shape (n_nodes, n_nodes), optional
        Edges never removed, as in :func:`~colide_core.threshold_to_dag`.
    gamma : float, default=0.0
        Extended-BIC weight in [0, 1]; 0 is the plain BIC. 0.5 is the usual choice for graphs.
    max_candidates : int, default=200
        Most cuts scored in the first pass of the default candidates (>= 3).

    Returns
    -------
    threshold : float
        The chosen threshold; ``threshold_to_dag(W, threshold, required=required)`` is the chosen
        DAG. With the default candidates it is a cut: the largest magnitude the graph drops
        (0 when it keeps every edge).
    table : pandas.DataFrame
        One row per threshold scored, increasing: ``threshold``, ``edges``, ``bic``
        (:func:`bic_score`), ``score`` (``bic`` plus the extended-BIC term; equal to ``bic``
        when ``gamma`` is 0) and ``chosen`` (True on one row).

    Raises
    ------
    ValueError
        If ``X`` or ``W`` is invalid or their numbers of nodes differ, a column of ``X`` is
        constant, ``n_samples < 2``, or ``required`` is invalid or cyclic. A threshold < 0,
        a ``gamma`` outside [0, 1] or a ``max_candidates`` < 3 is refused
        (``InvalidParameterError``, also a TypeError).

    Notes
    -----
    The BIC is Schwarz (1978)'s, in the linear-Gaussian form GES optimises (Chickering 2002);
    the extended BIC is Chen & Chen (2008), with the graph form of Foygel & Drton (2010),
    counting the ``d (d - 1)`` possible directed edges. The refit makes the score compare
    structures, not shrunken weights, and the choice is invariant to rescaling a column of ``X``.
    Like the BIC of :class:`LambdaPath`, it chooses how many edges the fitted orientation needs:
    where the fit has reversed edges, a denser graph may explain the data better in that order.
    """
    if not (is_real(gamma) and 0.0 <= float(gamma) <= 1.0):
        raise InvalidParameterError(f"gamma must be a number in [0, 1], got {gamma!r}.")
    if not is_int(max_candidates) or max_candidates < 3:
        raise InvalidParameterError(f"max_candidates must be an integer >= 3, got {max_candidates!r}.")
    cov, n, _ = _as_cov(X)
    A = check_square_matrix(W, "W")
    d = cov.shape[0]
    if A.shape != (d, d):
        raise ValueError(f"W must be ({d}, {d}) for data with {d} columns, got {A.shape}.")
    if n < 2:
        raise ValueError(f"need at least 2 samples, got {n}.")
    m = d * (d - 1)
    rows = {}

    def score(t):
        if t not in rows:
            G = threshold_to_dag(A, t, required=required)
            k = int(np.count_nonzero(G))
            b = bic_score(cov, n, G)
            rows[t] = (k, b, b + 2.0 * float(gamma) * _log_binomial(m, k))
        return rows[t][2]

    def best(ts):
        return min(ts, key=lambda t: (score(t), -t))

    if thresholds is not None:
        ts = sorted(set(check_sequence(thresholds, "thresholds", "choose_threshold", NON_NEGATIVE,
                                       max_len=defaults.MAX_PATH_THRESHOLDS)))
        chosen = best(ts)
    else:
        off = np.abs(A[~np.eye(d, dtype=bool)])
        cuts = np.concatenate([[0.0], np.unique(off[off > 0])]).tolist()
        if len(cuts) <= max_candidates:
            chosen = best(cuts)
        else:
            idx = np.unique(np.round(np.linspace(0, len(cuts) - 1, int(max_candidates))).astype(int)).tolist()
            coarse = [cuts[i] for i in idx]
            at = coarse.index(best(coarse))
            lo, hi = idx[max(at - 1, 0)], idx[min(at + 1, len(idx) - 1)]
            chosen = best(coarse + cuts[lo:hi + 1])
    ts = sorted(rows)
    table = pd.DataFrame({"threshold": ts, "edges": [rows[t][0] for t in ts], "bic": [rows[t][1] for t in ts],
                          "score": [rows[t][2] for t in ts], "chosen": [t == chosen for t in ts]})
    return float(chosen), table
