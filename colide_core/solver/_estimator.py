"""The CoLiDE estimator: a thin scikit-learn wrapper over the stage loops.

It picks its loop from :data:`colide_core.solver.registry.SOLVERS` (re-exported here), as the λ
path and the JAX backend do, so one place says which loop a name runs.

Conventions: data ``X`` has shape ``(n_samples, n_nodes)``; ``W[i, j] != 0`` means i -> j.
"""
from __future__ import annotations

import time
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator

from colide_core import defaults
from colide_core._params import InvalidParameterError, Number, check_number
from colide_core.settings import LIBRARY, NOT_SETTINGS, SETTING_NAMES, RunSettings
from colide_core.graph._dag import threshold_to_dag
from colide_core.solver.registry import SOLVERS, get_solver  # noqa: F401 - re-exported: CoLiDE's loops
from colide_core._validation import check_square_matrix, data_covariance

__all__ = ["CoLiDE", "SOLVERS", "get_solver"]


def _statistics_callback(callback):
    """The fit's ``callback(stage, iteration, objective)`` as the statistics' ``callback() -> bool``
    (called as ``callback(0, 0, nan)``: no stage has started), or None."""
    if callback is None:
        return None
    return lambda: bool(callback(0, 0, float("nan")))

class CoLiDE(BaseEstimator):
    """CoLiDE estimator: a linear DAG and its exogenous noise scale(s) learned jointly.

    A thin scikit-learn estimator over the stage loops of :data:`SOLVERS`: ``__init__`` only
    stores parameters, :meth:`fit` validates them (the run settings through
    :class:`colide_core.settings.RunSettings`, the others declaratively, ``_parameter_constraints``),
    runs the chosen loop on the data's covariance and returns ``self``.
    ``sklearn.base.clone``, ``get_params``, ``set_params`` and the repr work as for any
    scikit-learn estimator.

    Parameters
    ----------
    variant : {"nv", "ev", "ls"}, default="nv"
        ``"ev"``: equal noise variance (paper eq. 3-5). ``"nv"``: non-equal variances
        (eq. 6-7). ``"ls"``: the least-squares score of DAGMA-linear with the same
        optimiser (a baseline; ``sigma_`` is None). The only positional parameter.
    lambda1 : float, default=0.05
        L1 weight (>= 0).
    mu_schedule : tuple of float, default=(1.0, 0.1, 0.01, 0.001)
        Central-path weights ``mu_k`` (> 0).
    s_schedule : tuple of float, default=(1.0, 0.9, 0.8, 0.7)
        Log-det parameters ``s_k`` (> 0), one per stage.
    max_iter : tuple of int, default=(20000, 20000, 20000, 70000)
        Maximum BCD iterations ``T_k`` per stage, each an int in
        ``[1, colide_core.defaults.MAX_ITER_LIMIT]`` (1e9).
    lr : float, default=3e-4
        Adam step size (> 0).
    tol : float, default=1e-6
        Relative objective change between checkpoints that ends a stage (>= 0).
    threshold : float, default=0.3
        Post-processing magnitude threshold (>= 0, in the units of the weights) for
        :attr:`adjacency_`.
    random_state : None, int, numpy RandomState or Generator, default=None
        Accepted for API symmetry. The solvers are deterministic (W starts at zero), so the
        same data and parameters always give bit-identical results.
    solver : {"auto", "fast", "adam", "topo"}, default="auto"
        Key of :data:`SOLVERS`. ``"auto"`` (the default; :func:`~colide_core.solver._auto.auto_solve`,
        ``docs/optimum.md``) returns the best optimum of the score among its candidates: the fast
        solver's, CoLiDE-TOPO's started from it when the search's measured cost estimate fits
        ``max_time`` (or ``defaults.AUTO_BUDGET`` seconds), and ``W_init``; the choice and every
        candidate's objective are in ``result_.choice``. ``"fast"`` solves eq. 4 / eq. 6 along the
        paper's central path with the fast solver alone
        (:func:`~colide_core.solver._fast.fast_solve`; ``docs/fast-solver.md``). ``"adam"`` is the
        paper-faithful schedule of Algorithm 1 (one Adam step per BCD iteration), the
        reference for every speed claim. The two reach the same objective to about 1e-3
        relative (usually the fast one is slightly lower) but not bit-identical weights;
        ``n_iter_`` and the checkpoints count each solver's own steps. ``"topo"`` is
        CoLiDE-TOPO (paper Appendix E; :func:`~colide_core.solver._topo.topo_solve`): starting from
        the fast solver's solution, the score is minimised exactly for a topological order
        and the order improved by node swaps until no candidate swap lowers it (a local
        optimum); ``W_`` is then a DAG before any thresholding, ``n_iter_`` counts the swaps
        accepted and ``order_`` holds the final order (measured in ``docs/topo.md``).
    checkpoint : int, default=1000
        Steps between convergence checks, history entries and callback calls (>= 1).
    max_time : float, optional
        Wall-clock budget in seconds (> 0; see :func:`~colide_core.colide_solve`).
    forbidden, required : ndarray of bool of shape (n_nodes, n_nodes) or list of (source, target), optional
        Prior knowledge. A forbidden edge is held at zero during optimisation; a required edge
        is exempt from the L1 penalty and never removed by post-processing. Pairs may be
        node names (when ``X`` is a DataFrame) or integer indices. Checked by
        :func:`~colide_core.graph.constraints.resolve_constraints` in :meth:`fit`.
    tiers : list of list of node names or indices, optional
        Ordered layers: no edge may point from a later tier to an earlier one. With
        ``solver="topo"`` required edges and tiers also restrict the orders searched.
    warm_start : bool, default=False
        As in scikit-learn: a new :meth:`fit` takes the previous fit's ``W_`` as its warm-start
        candidate (``W_init``), when the shapes agree.
    init_order : sequence of node names or indices, optional
        ``solver="topo"`` and ``"auto"``: the order the search starts from (every node once, first the
        nodes with no predecessor) instead of the continuous solution's.
    topo_sizes : tuple of 3 int, default=(10, 100, 1000)
        ``solver="topo"`` only: TOPO's candidate-set sizes ``(s0, s_small, s_large)``.
    record_W : bool, default=False
        Keep a copy of W at every checkpoint in ``result_.W_history`` (to watch the
        optimisation: the graph, h(W), the objective and sigma over the stages). Changes no
        number of the fit; refused with ``solver="topo"``.
    device : {"cpu", "gpu", "auto", "jax-cpu"}, default="cpu"
        Where the stage loops run (``docs/gpu.md``): ``"cpu"`` the numpy / numba solvers;
        ``"gpu"`` the JAX backend (:mod:`colide_core.solver._jax`: the same schedules, each
        stretch between checkpoints one compiled loop, float64) on a GPU, a
        ``DeviceUnavailableError`` when JAX or a GPU is missing; ``"auto"`` the GPU when JAX sees
        one and there are at least ``defaults.AUTO_GPU_MIN_NODES`` (200) nodes, else ``"cpu"``;
        ``"jax-cpu"`` the JAX backend on the CPU. The JAX backend gives the CPU solvers'
        iterates up to rounding; ``solver="topo"`` and several conditions run on the
        CPU only: ``"auto"`` runs them there, ``"gpu"`` and ``"jax-cpu"`` refuse them
        (``DeviceNotSupportedError``).

    Attributes
    ----------
    W_ : ndarray of shape (n_nodes, n_nodes)
        Raw learned weights; ``W_[i, j] != 0`` means i -> j.
    adjacency_ : ndarray of shape (n_nodes, n_nodes)
        ``W_`` after :func:`~colide_core.threshold_to_dag` at ``threshold`` (required edges
        kept): guaranteed to be a DAG.
    removed_for_acyclicity_ : list of (int, int, float)
        The edges ``(i, j, weight)`` above ``threshold`` that the post-processing removed to
        break cycles (each the weakest on a cycle), strongest first; empty when the thresholded
        ``W_`` was already a DAG.
    sigma_ : float, ndarray of shape (n_nodes,), or None
        Estimated noise standard deviation(s), in the units of the data: a float for
        ``"ev"``, one per node for ``"nv"``, None for ``"ls"``.
    n_iter_ : int
        Total first-order steps over all stages (``result_.n_iter``); for ``solver="topo"``
        the number of swaps accepted.
    history_ : dict of list
        Per checkpoint: ``"stage"``, ``"iteration"``, ``"objective"``, ``"h"``, ``"sigma"``.
    converged_ : bool
        Whether every stage met ``tol``.
    stopped_ : bool
        True when the callback or ``max_time`` stopped the solve: the result is partial.
    fit_time_ : float
        Wall time of the solve, in seconds (``result_.fit_time``).
    result_ : SolverResult
        Everything the solver returned: the one record of the fit.
    edge_mask_ : ndarray of bool of shape (n_nodes, n_nodes) or None
        False at the edges held at zero (forbidden, against the tiers, the reverse of a
        required edge, and the diagonal);
        None when no prior knowledge was given.
    required_mask_ : ndarray of bool of shape (n_nodes, n_nodes) or None
        True at the required edges; None when no prior knowledge was given.
    node_names_ : list of str or None
        Column names when ``X`` was a DataFrame (or ``node_names`` of :meth:`fit_from_stats`).
    n_features_in_ : int
        Number of nodes.
    n_samples_ : int
        Number of samples the covariance was computed from.
    order_ : tuple of int or None
        ``solver="topo"``: the final topological order (node indices); None otherwise.
    conditions_ : tuple of str or None
        The condition labels of a fit with ``conditions`` (in the order they first appear);
        None without.
    targets_ : dict or None
        ``{label: tuple of node indices}`` for every condition (empty tuples without
        targets); None without conditions.
    condition_counts_ : tuple of int or None
        Rows per condition, in the order of ``conditions_``; None without conditions.

    See Also
    --------
    colide_core.colide_solve : the paper-faithful stage loop (Algorithm 1).
    colide_core.solver.path.lambda_path : CoLiDE along a grid of ``lambda1``.

    References
    ----------
    Saboksayr, Mateos and Tepper, "CoLiDE: Concomitant Linear DAG Estimation", ICLR 2024.

    Examples
    --------
    >>> from colide_core import CoLiDE, load_sachs
    >>> X, B_true = load_sachs()
    >>> model = CoLiDE("nv").fit(X)          # doctest: +SKIP
    >>> model.adjacency_.shape                # doctest: +SKIP
    (11, 11)
    """

    # The run settings are declared and checked once, in colide_core.settings (CONSTRAINTS,
    # RunSettings.create); the estimator's own table covers the other parameters only.
    _parameter_constraints: dict = {
        **{name: "no_validation" for name in SETTING_NAMES},
        # Prior knowledge takes many forms (masks, pairs of names or indices, DataFrames);
        # constraints.resolve_constraints checks it against the data's nodes in fit.
        "forbidden": "no_validation",
        "required": "no_validation",
        "tiers": "no_validation",
        "init_order": ["array-like", None],
        "warm_start": ["boolean"],
    }

    def get_run_settings(self, limits=LIBRARY):
        """The estimator's run settings, checked (:class:`colide_core.settings.RunSettings`).

        Parameters
        ----------
        limits : colide_core.settings.Limits, default=LIBRARY
            ``LIBRARY`` (what the solvers accept) or ``INTERACTIVE`` (the dashboard's bounds).

        Returns
        -------
        RunSettings

        Raises
        ------
        RunSettingsError
            (an ``InvalidParameterError``: a ValueError and a TypeError) Listing every
            offending setting: a number given as a string or a bool, NaN or inf, a float where
            an int is asked, a value out of range, an unknown option, schedules of different
            lengths, ``topo_sizes`` not increasing, ``record_W`` with ``solver="topo"``.
        """
        super()._validate_params()  # the parameters that are not run settings
        return RunSettings.create(self.get_params(deep=False), limits=limits, ignore=NOT_SETTINGS)

    def __init__(
        self,
        variant=defaults.VARIANT,
        *,
        lambda1=defaults.LAMBDA1,
        mu_schedule=defaults.MU_SCHEDULE,
        s_schedule=defaults.S_SCHEDULE,
        max_iter=defaults.MAX_ITER,
        lr=defaults.LR,
        tol=defaults.TOL,
        threshold=defaults.THRESHOLD,
        random_state=None,
        solver=defaults.SOLVER,
        checkpoint=defaults.CHECKPOINT,
        max_time=None,
        forbidden=None,
        required=None,
        tiers=None,
        init_order=None,
        topo_sizes=defaults.TOPO_SIZES,
        record_W=False,
        device=defaults.DEVICE,
        warm_start=False,
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
        self.init_order = init_order
        self.topo_sizes = topo_sizes
        self.record_W = record_W
        self.device = device
        self.warm_start = warm_start

    def fit(self, X, conditions=None, targets=None, callback=None, W_init=None, *, design=None):
        """Learn the DAG and noise scale(s) from data.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_nodes)
            Numeric, finite observations, ``n_samples >= 2`` and ``n_nodes >= 2``. A
            centred copy is used; ``X`` itself is never modified.
        conditions : array-like or pandas.Series of shape (n_samples,), optional
            The condition (treatment, donor, batch) of each row, text or integers, like
            scikit-learn's ``groups``. Each condition gets its own intercept: its rows are
            centred on their own mean (``docs/conditions.md``). Checked by
            :func:`colide_core.data.conditions.check_conditions`. With a single condition and
            no target the fit is exactly the fit without conditions.
        targets : mapping, optional
            ``{label: [node, ...]}``: the nodes each condition intervenes on (names when ``X``
            is a DataFrame, else indices). A node's own equation is then fitted only on the
            rows of the conditions that do not target it (the masked likelihood); needs
            ``conditions``. Checked by :func:`colide_core.data.conditions.check_targets`.
        callback : callable, optional
            ``callback(stage, iteration, objective)`` at every checkpoint; returning True
            stops the solve and keeps the partial result (``stopped_`` is then True). With
            ``conditions`` it is also called, as ``callback(0, 0, nan)``, every 50 ms or so while
            the conditions' statistics are built (seconds at ``defaults.MAX_CONDITIONS``):
            True there ends the fit before the solve, with ``stopped_`` True and ``W_`` zero.
        W_init : array-like of shape (n_nodes, n_nodes), optional
            A point the caller already has (the fit before new data, the neighbouring λ). With
            ``solver="auto"`` it is one more candidate, and the fit returns the candidate with the
            lowest score (``result_.choice``); the other solvers start from it. Without it,
            ``warm_start=True`` uses the previous fit's ``W_``. Not modified.
        design : colide_core.data.design.Design, optional
            The conditions and targets in one object, validated once (:meth:`Design.create
            <colide_core.data.design.Design.create>`), instead of ``conditions`` and ``targets``:
            the same fit, without checking them again. It must fit ``X`` (rows, node names).

        Returns
        -------
        self : CoLiDE

        Raises
        ------
        ValueError
            If a parameter is invalid (``sklearn.utils._param_validation.InvalidParameterError``,
            also a TypeError): a number given as a string or a bool, NaN or inf, a float where
            an int is asked (``checkpoint``, ``max_iter`` entries), a value out of range, an
            unknown option; or if ``callback`` is not callable; or if ``X`` is not 2-D real
            numbers (complex values are refused, not cast), has fewer than 2 rows or columns,
            duplicate column names, or contains NaN or Inf.
        ConditionsError
            (a ``ValueError``) If ``conditions`` or ``targets`` cannot be used: not one label per
            row, a missing label, numbers mixed with text, a condition with fewer than
            ``defaults.MIN_CONDITION_ROWS`` rows, more than ``defaults.MAX_CONDITIONS``
            conditions, an unknown condition or node in ``targets``, a node targeted in every
            condition, or ``targets`` without ``conditions``; ``design`` with ``conditions`` or
            ``targets`` (``InvalidParameterError``), or a ``design`` of other rows or nodes than ``X``.
        FloatingPointError
            If a column is constant (zero noise floor), the covariance overflows, or the
            iterates cannot be kept inside the log-det domain.
        """
        settings = self.get_run_settings()
        if callback is not None and not callable(callback):
            raise InvalidParameterError(f"callback must be callable or None, got {type(callback).__name__}.")
        if conditions is None and (design is None or not getattr(design, "has_conditions", True)):
            if targets is not None and design is None:
                from colide_core.exceptions import ConditionsError

                raise ConditionsError("targets need conditions: give the condition of each row.",
                                      "target_unknown_condition")
            cov, n, names = data_covariance(X)
            if design is not None:  # a design without conditions: it must still name X's nodes
                from colide_core.data.design import resolve_design

                resolve_design(design, None, targets, node_names=names, n_samples=n, n_nodes=cov.shape[0])
            self._set_conditions(None)
            return self._fit_cov(settings, cov, n, names, callback, W_init)
        from colide_core.data.conditions import ConditionStats
        from colide_core.exceptions import StatisticsStopped

        t0 = time.perf_counter()
        try:  # the design is resolved (validated at most once) inside from_data
            stats = ConditionStats.from_data(X, conditions, targets, callback=_statistics_callback(callback),
                                             design=design)
        except StatisticsStopped:
            return self._stopped_before_solve(settings, X, None, t0)
        return self._fit_stats(settings, stats, defaults.INTERCEPT, callback, W_init)

    def fit_from_stats(self, cov, n=None, callback=None, node_names=None, *, intercept=defaults.INTERCEPT):
        """Learn from sufficient statistics instead of raw data.

        Parameters
        ----------
        cov : array-like of shape (n_nodes, n_nodes) or ConditionStats
            The 1/n sample covariance of the data (centred), symmetric and finite; or the
            per-condition statistics of several conditions with their intervention targets
            (:class:`colide_core.data.conditions.ConditionStats`; then ``n`` and ``node_names``
            are taken from it and must be None). The same ``W`` as :meth:`fit` on the rows.
        n : int
            Number of samples the covariance was computed from (>= 2); None with a
            ConditionStats.
        intercept : {"condition", "pooled"}, default="condition"
            With a ConditionStats only: an intercept per condition (each condition centred on
            its own mean, what :meth:`fit` does), or one per node over all its rows (for
            comparison; condition-wide mean shifts then look like edges).
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
            If a parameter is invalid, ``cov`` is not a finite symmetric square matrix of real
            numbers (complex values are refused, not cast), ``n`` is not an int >= 2 (a float,
            a bool or a string is refused: ``InvalidParameterError``, also a TypeError), or
            ``callback`` is not callable.
        FloatingPointError
            As :meth:`fit`.
        """
        settings = self.get_run_settings()
        from colide_core.data.conditions import ConditionStats

        if isinstance(cov, ConditionStats):
            if n is not None or node_names is not None:
                raise InvalidParameterError("With a ConditionStats, n and node_names come from it: leave them None.")
            if intercept not in defaults.INTERCEPTS:
                raise InvalidParameterError(f"intercept must be one of {defaults.INTERCEPTS}, got {intercept!r}.")
            if callback is not None and not callable(callback):
                raise InvalidParameterError(f"callback must be callable or None, got {type(callback).__name__}.")
            return self._fit_stats(settings, cov, intercept, callback)
        check_number(n, "n", f"{type(self).__name__}.fit_from_stats", Number(Integral, 2, None, closed="left"))
        # Real numbers only (complex and text refused, not cast), square, finite; a new array.
        cov = check_square_matrix(cov, "cov", what="covariance matrix", copy=True)
        if not np.allclose(cov, cov.T, rtol=1e-10, atol=0):
            raise ValueError("cov must be finite and symmetric.")
        if callback is not None and not callable(callback):
            raise InvalidParameterError(f"callback must be callable or None, got {type(callback).__name__}.")
        if node_names is not None and (isinstance(node_names, (str, bytes)) or not hasattr(node_names, "__len__")):
            raise InvalidParameterError("node_names must be a sequence of names (one per node), not "
                                        f"a {type(node_names).__name__}.")
        names = None if node_names is None else [str(x) for x in node_names]
        if names is not None and len(names) != cov.shape[0]:
            raise ValueError("node_names must have one name per node.")
        self._set_conditions(None)
        return self._fit_cov(settings, cov, int(n), names, callback)

    def _set_conditions(self, stats):
        """Record the conditions and targets of a fit (None without conditions)."""
        self.conditions_ = None if stats is None else stats.labels
        self.targets_ = None if stats is None else dict(stats.targets)
        self.condition_counts_ = None if stats is None else stats.n

    def _fit_stats(self, settings, stats, intercept, callback, W_init=None):
        """Fit the per-node covariance form of ``stats`` (an intercept per condition, masked targets).

        Every solver takes it: the continuous loops through the per-node gradient, CoLiDE-TOPO
        with node j's lasso on its own ``C_j`` (``docs/conditions.md``). Without targets (or
        with a single condition) it is one covariance, and the fit is the plain one bit for bit.
        """
        from colide_core.exceptions import StatisticsStopped

        t0 = time.perf_counter()
        try:
            node = stats.node_covariances(intercept, callback=_statistics_callback(callback))
        except StatisticsStopped:
            return self._stopped_before_solve(settings, None, stats, t0)
        self._set_conditions(stats)
        names = None if stats.node_names is None else list(stats.node_names)
        cov = np.array(node.covs[0]) if node.trivial else node
        return self._fit_cov(settings, cov, stats.n_samples, names, callback, W_init)

    def _stopped_before_solve(self, settings, X, stats, t0):
        """The record of a fit whose callback stopped it while the statistics were built.

        ``W_`` is the solve's starting point (zeros), ``stopped_`` True, ``stop_reason``
        ``"callback"``, no iteration; sigma is NaN (None for ``"ls"``): nothing was estimated.
        """
        from colide_core.solver._common import SolverResult
        from colide_core._validation import check_data

        if stats is None:
            values, names = check_data(X)
            n, d = values.shape
        else:
            names = None if stats.node_names is None else list(stats.node_names)
            n, d = stats.n_samples, stats.n_nodes
        self._set_conditions(stats)
        sigma = {"ev": float("nan"), "nv": np.full(d, np.nan)}.get(settings.variant)
        res = SolverResult(
            W=np.zeros((d, d)), sigma=sigma, n_iter=0, n_iter_per_stage=(),
            history={"stage": [], "iteration": [], "objective": [], "h": [], "sigma": []},
            objective=float("nan"), converged=False, stopped=True, stop_reason="callback",
            fit_time=time.perf_counter() - t0,
        )
        self.result_ = res
        self.fit_time_ = res.fit_time
        self.W_ = res.W
        self.adjacency_, self.removed_for_acyclicity_ = np.zeros((d, d)), []
        self.edge_mask_ = self.required_mask_ = None
        self.sigma_ = res.sigma
        self.n_iter_ = 0
        self.history_ = res.history
        self.converged_ = False
        self.stopped_ = True
        self.node_names_ = None if names is None else list(names)
        self.n_features_in_ = d
        self.n_samples_ = n
        self.order_ = None
        return self

    def _warm_point(self, d, W_init):
        """The warm-start candidate: ``fit(W_init=...)``, else the last fit's ``W_`` with ``warm_start``."""
        if W_init is not None:
            W = check_square_matrix(W_init, "W_init", what="weight matrix", copy=True)
            if W.shape != (d, d):
                raise ValueError(f"W_init must have shape {(d, d)}, got {W.shape}.")
            return W
        if self.warm_start and getattr(self, "W_", None) is not None and np.shape(self.W_) == (d, d):
            return np.array(self.W_, dtype=float)
        return None

    def _fit_cov(self, settings, cov, n, names, callback, W_init=None):
        # ``cov``: a (d, d) covariance, or the per-node form (NodeCovariance) of several
        # conditions with targets; each node's own variance is C_j[j, j].
        node = cov if not isinstance(cov, np.ndarray) else None
        diag = np.diag(cov) if node is None else node.covs[node.group, np.arange(node.n_nodes), np.arange(node.n_nodes)]
        d = diag.shape[0]
        if np.any(diag <= 0):
            bad = [names[i] if names else str(i) for i in np.flatnonzero(diag <= 0)]
            raise FloatingPointError(f"Constant column(s) with zero variance: {', '.join(bad)}.")
        edge_mask = required_mask = None
        if self.forbidden is not None or self.required is not None or self.tiers is not None:
            from colide_core.graph.constraints import resolve_constraints

            edge_mask, required_mask = resolve_constraints(
                d, names, forbidden=self.forbidden, required=self.required, tiers=self.tiers
            )
        extra = self._topo_kwargs(d, names, required_mask) if settings.solver in ("topo", "auto") else {}
        W_init = self._warm_point(d, W_init)
        if W_init is not None:
            extra["W_init"] = W_init
        solve = get_solver(settings.solver)
        if settings.device != "cpu":  # the JAX backend (colide_core/solver/_jax.py); "cpu" never imports JAX
            from colide_core.solver._jax import device_solver

            solve = device_solver(settings.solver, settings.device, n_nodes=d)
        res = solve(
            cov,
            settings,
            callback=callback,
            edge_mask=edge_mask,
            l1_mask=None if required_mask is None else (~required_mask).astype(float),
            required_mask=required_mask,
            **extra,
        )
        self.result_ = res
        self.fit_time_ = res.fit_time
        self.W_ = res.W
        self.adjacency_, self.removed_for_acyclicity_ = threshold_to_dag(
            res.W, settings.threshold, required=required_mask, return_removed=True)
        self.edge_mask_ = edge_mask
        self.required_mask_ = required_mask
        self.sigma_ = res.sigma
        self.n_iter_ = res.n_iter
        self.history_ = res.history
        self.converged_ = res.converged
        self.stopped_ = res.stopped
        self.node_names_ = names
        self.n_features_in_ = d
        self.n_samples_ = n
        self.order_ = res.order
        return self

    def _topo_kwargs(self, d, names, required_mask):
        """The order-search solver's own arguments: start order, sizes, precedences."""
        from colide_core.solver._topo import resolve_order
        from colide_core.graph.constraints import order_precedence

        return {
            "init_order": None if self.init_order is None else resolve_order(self.init_order, d, names),
            "precedence": order_precedence(d, required_mask, self.tiers, names),
        }
