"""Cached CoLiDE fits, the one fit record the dashboard keeps, and the background job that runs them.

Design
------
* :class:`FitResult` is the fit record: the solver's own :class:`colide_core.SolverResult`
  (``CoLiDE.result_``) plus only what the solver cannot know (noise model, parameters, data
  hash, node names, wall time). The pages, the manifests and the exports all read it; ``W``,
  ``sigma``, ``n_iter``, ... are properties delegating to the solver's record.
* :func:`fit_colide` is a :func:`dashboard.caching.cached.cache_data` function keyed on the dataset's
  content hash (unambiguous: values, shape, column names) and the solver parameters; the data
  frame is passed as ``_X`` (not hashed, declared with its reason) so a rerun never hashes the
  whole frame. Every job checks its settings first (:func:`check_params`: the solver's checks
  and the dashboard's bounds). It returns a :class:`FitResult` holding the *raw* weights ``W``;
  thresholding happens later (:func:`colide_core.threshold_to_dag`), so moving the threshold
  slider never re-runs the solver.
* A stopped (partial) fit raises :class:`FitStopped` out of the cached function, so partial
  results are never cached; the job keeps them, flagged ``stopped=True``.
* :class:`FitJob` is a :class:`dashboard.infra.jobs.Job` running the fits of one Run click. The
  solver's ``callback(stage, iteration, objective)`` only writes the job's progress and returns
  whether Stop was requested; it never calls Streamlit.

Convention: ``W[i, j] != 0`` means the edge i -> j; data ``X`` is ``(n_samples, n_nodes)``.
"""
from __future__ import annotations

import functools
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from colide_core import SolverResult, progress_fraction
from colide_core.defaults import MAX_ITER
from colide_core.settings import NOT_SETTINGS, PRIOR_KEYS, RESULT_SETTINGS
from dashboard.caching.cached import cache_data
from dashboard.infra.jobs import Job

__all__ = [
    "VARIANTS", "BOTH", "NOISE_CHOICES", "shown_labels", "PATH_KEYS", "FitResult", "FitStopped", "FitJob", "fit_dataset", "topo_cost", "solver_params", "path_kwargs", "fit_colide",
    "progress_fraction", "check_params", "check_widget_values", "live_reason", "fit_live", "expected_fit_seconds",
    "LIVE_MAX_SECONDS", "LIVE_TIME_LIMIT",
]

#: Display label -> ``colide_core.CoLiDE`` variant.
VARIANTS = {"EV": "ev", "NV": "nv"}

#: The Learn page's Noise-model choices: one model, or both side by side.
BOTH = "Both"
NOISE_CHOICES = [*VARIANTS, BOTH]


def shown_labels(choice):
    """The display labels (``"EV"``, ``"NV"``) a Noise-model choice stands for.

    Parameters
    ----------
    choice : str
        One of :data:`NOISE_CHOICES`; anything else (an old session value) means both.

    Returns
    -------
    list of str
        ``[choice]`` for a single model, else every key of :data:`VARIANTS`.

    Examples
    --------
    >>> shown_labels("EV"), shown_labels("Both")
    (['EV'], ['EV', 'NV'])
    """
    return [choice] if choice in VARIANTS else list(VARIANTS)

#: ``colide_core.solver.path.lambda_path`` keyword arguments that may come from the solver overrides:
#: every setting the fitted W depends on (``colide_core.settings.RESULT_SETTINGS``) but the noise model
#: and λ, which the path sets itself, and the prior knowledge.
PATH_KEYS = tuple(k for k in RESULT_SETTINGS if k not in ("variant", "lambda1")) + PRIOR_KEYS


@dataclass(frozen=True, eq=False)
class FitResult:
    """The dashboard's record of one CoLiDE fit: the solver's record plus its context.

    Parameters
    ----------
    result : colide_core.SolverResult
        What the solver returned (``CoLiDE.result_``): raw ``W`` of shape (n_nodes, n_nodes)
        (``W[i, j] != 0`` means i -> j, before thresholding), ``sigma``, ``n_iter``,
        ``history``, ``objective``, ``converged``, ``stopped``, ...
    variant : {"ev", "nv"}
    params : tuple of (str, object)
        The ``colide_core.CoLiDE`` keyword arguments used (sorted, hashable; from
        :func:`solver_params`).
    data_key : str
        Content hash of the dataset that was fitted.
    node_names : list of str
    fit_time : float
        Solver wall time in seconds (``CoLiDE.fit_time_``).

    Notes
    -----
    ``W``, ``sigma``, ``n_iter``, ``converged``, ``stopped`` and ``objective`` (the final
    objective) read ``result``; :attr:`objective_trace` is the objective at each checkpoint.
    """

    result: SolverResult
    variant: str
    params: tuple
    data_key: str
    node_names: list
    fit_time: float

    @functools.cached_property
    def content_key(self) -> str:
        """SHA-256 of every field of the record (``colide_core.hashing.fingerprint``).

        Covers the solver's record in full (``W``, ``sigma``, ``history``, ``objective``,
        flags, ...), the parameters, the data hash, the node names and the wall time: two
        records with the same key hold the same numbers. Cached functions that take a
        ``FitResult`` are keyed on it (:data:`dashboard.caching.cached.HASH_FUNCS`).
        """
        from colide_core.hashing import fingerprint

        return fingerprint("colide-fit-record/1", {
            "variant": self.variant, "params": list(self.params), "data_key": self.data_key,
            "node_names": [str(n) for n in self.node_names], "fit_time": float(self.fit_time),
            "result": self.result})

    @property
    def W(self) -> np.ndarray:
        """Raw learned weights, shape (n_nodes, n_nodes); ``W[i, j] != 0`` means i -> j."""
        return self.result.W

    @property
    def sigma(self):
        """Noise standard deviation(s) in data units: a float (EV) or shape (n_nodes,) (NV)."""
        return self.result.sigma

    @property
    def n_iter(self) -> int:
        """Total solver iterations."""
        return int(self.result.n_iter)

    @property
    def converged(self) -> bool:
        """Whether every stage met the tolerance."""
        return bool(self.result.converged)

    @property
    def last_stage_converged(self):
        """Whether the last stage met ``tol`` (None when the record does not say)."""
        return self.result.last_stage_converged

    @property
    def lambda1(self) -> float:
        """The L1 weight λ of this fit."""
        return float(dict(self.params)["lambda1"])

    @property
    def stopped(self) -> bool:
        """True when the user pressed Stop: the result is partial."""
        return bool(self.result.stopped)

    @property
    def objective(self) -> float:
        """Final stage objective (paper eq. 4 or 6 at the last ``mu``, ``s``)."""
        return float(self.result.objective)

    @property
    def objective_trace(self) -> tuple:
        """Objective at each solver checkpoint (tuple of float; empty when not recorded)."""
        return tuple(float(o) for o in (self.result.history or {}).get("objective", ()))

    @property
    def label(self) -> str:
        """"EV" or "NV", with "(stopped, partial)" appended for a stopped fit."""
        base = self.variant.upper()
        return f"{base} (stopped, partial)" if self.stopped else base

    @property
    def sigma_per_node(self) -> np.ndarray:
        """``sigma`` broadcast to one value per node, shape (n_nodes,)."""
        return np.broadcast_to(np.asarray(self.sigma, dtype=float), (self.W.shape[0],)).copy()

    @classmethod
    def from_path(cls, path, i_lambda, params, data_key, node_names):
        """The record of one λ of a :class:`colide_core.solver.path.LambdaPath` (no solving).

        Parameters
        ----------
        path : colide_core.solver.path.LambdaPath
        i_lambda : int
            Index into ``path.lambdas``.
        params : tuple of (str, object)
            The fit's :func:`solver_params` (with that λ).
        data_key : str
        node_names : list of str

        Returns
        -------
        FitResult
            ``W``, ``sigma``, ``n_iter``, ``objective``, ``converged`` of that solve; no
            checkpoint history (the path does not keep it).
        """
        i = int(i_lambda)
        sigma = path.sigma[i]
        record = SolverResult(
            W=np.array(path.W[i], dtype=float),
            sigma=None if sigma is None else (float(sigma) if np.ndim(sigma) == 0 else np.array(sigma, dtype=float)),
            n_iter=int(path.n_iter[i]), n_iter_per_stage=(), history={}, objective=float(path.objective[i]),
            converged=bool(path.converged[i]), stopped=False,
        )
        return cls(result=record, variant=path.variant, params=params, data_key=data_key,
                   node_names=list(node_names), fit_time=float(path.fit_time[i]))


from dashboard.infra.errors import FitStopped  # noqa: E402,F401 - re-exported (its old home; dashboard/infra/errors.py)


def solver_params(variant: str, lambda1: float, overrides: dict | None = None) -> tuple:
    """Hashable, sorted tuple of ``colide_core.CoLiDE`` keyword arguments.

    Parameters
    ----------
    variant : {"ev", "nv"}
    lambda1 : float
        L1 weight (>= 0).
    overrides : dict, optional
        Further keyword arguments (e.g. ``max_iter``); lists are turned into tuples.

    Returns
    -------
    tuple of (str, object)
    """
    params = {"variant": variant, "lambda1": float(lambda1)}
    for k, v in (overrides or {}).items():
        params[k] = tuple(v) if isinstance(v, list) else v
    return tuple(sorted(params.items()))


def check_params(params) -> tuple:
    """Refuse run settings outside the solver's checks or the dashboard's bounds.

    Every job of the dashboard checks its settings with this before it starts, whatever set
    them (a widget, a loaded manifest, the Prior knowledge page).

    Parameters
    ----------
    params : tuple of (str, object) or dict
        ``colide_core.CoLiDE`` keyword arguments (from :func:`solver_params`).

    Returns
    -------
    tuple or dict
        ``params`` unchanged.

    Raises
    ------
    colide_core.run.manifest.RunSettingsError
        Listing every offending setting (:func:`colide_core.settings.check_settings` with the
        dashboard's limits, ``INTERACTIVE``).
    """
    from colide_core.settings import INTERACTIVE, check_settings

    check_settings(dict(params), limits=INTERACTIVE, ignore=NOT_SETTINGS)
    return params


def check_widget_values(*specs) -> None:
    """Refuse widget values outside the widgets' own bounds (a client can send any value).

    The run settings go through :func:`check_params` (:mod:`colide_core.settings`); this checks
    the pages' other numbers (repetitions, resamples, seeds) with the same declarative
    constraint (:class:`colide_core._params.Number`) and the same message form.

    Parameters
    ----------
    *specs : tuple (label, value, low, high) or (label, value, low, high, "int")
        Inclusive bounds; with ``"int"`` the value must also be an integer (not a float).

    Raises
    ------
    colide_core.exceptions.RunSettingsError
        Listing every value that is not a finite number inside its bounds.
    """
    from colide_core.exceptions import RunSettingsError
    from colide_core.settings import Num

    problems = []
    for label, value, low, high, *kind in specs:
        constraint = Num("int" if kind and kind[0] == "int" else "real", low, high).build()
        shown = value.item() if isinstance(value, np.generic) else value
        if not constraint.is_satisfied_by(shown):
            text = repr(shown)
            problems.append(f"{label} = {text if len(text) <= 40 else text[:39] + '…'} must be {constraint}")
    if problems:
        raise RunSettingsError(problems)


def path_kwargs(overrides: dict) -> dict:
    """The subset of the solver overrides that :func:`colide_core.solver.path.lambda_path` accepts.

    Parameters
    ----------
    overrides : dict
        ``colide_core.CoLiDE`` keyword arguments (the dashboard's ``solver_overrides``).

    Returns
    -------
    dict
        Only the keys in :data:`PATH_KEYS` (schedules, step size, solver, prior knowledge).
    """
    return {k: v for k, v in (overrides or {}).items() if k in PATH_KEYS}


def _max_iter(params: tuple) -> tuple:
    return tuple(dict(params).get("max_iter", MAX_ITER))


@cache_data(show_spinner=False, max_entries=64, unhashed={
    "_X": "data_key is its content hash (dashboard.data.content_hash: values, shape, column names)",
    "_callback": "it can only stop the solve, and a stopped solve raises FitStopped, which is never cached",
    "_design": "data_key covers it (a Dataset's design is built from the conditions and targets its key hashes)",
})
def fit_colide(data_key: str, params: tuple, _X, _callback=None, _design=None) -> FitResult:
    """Fit CoLiDE on ``_X`` (cached on ``data_key`` and ``params`` only).

    Parameters
    ----------
    data_key : str
        Content hash of ``_X`` (see :func:`dashboard.data.content_hash`); the cache key.
    params : tuple of (str, object)
        From :func:`solver_params`; part of the cache key.
    _X : pandas.DataFrame of shape (n_samples, n_nodes)
        The data (not hashed by Streamlit).
    _callback : callable, optional
        ``callback(stage, iteration, objective) -> bool`` forwarded to the solver.
    _design : colide_core.data.design.Design, optional
        The rows' conditions and each condition's targets (:attr:`dashboard.data.Dataset.design`),
        forwarded as ``CoLiDE.fit(design=...)``, not checked again: an intercept per condition,
        targets masked.

    Returns
    -------
    FitResult

    Raises
    ------
    FitStopped
        When the callback stopped the solve (partial results are never cached).
    ValueError, FloatingPointError
        From ``colide_core.CoLiDE.fit`` on invalid data.
    """
    import colide_core

    from dashboard.infra.jobs import compute_slot

    # the slot is taken here, on a cache miss only: a cache hit (a λ seen before, a prefetched one)
    # never waits in line; a job's thread already holds its own slot (compute_slot is re-entrant)
    with compute_slot():
        model = colide_core.CoLiDE(**dict(params)).fit(_X, callback=_callback, design=_design)
    if not model.stopped_:
        _remember(data_key, params)
    names = list(model.node_names_) if model.node_names_ is not None else [str(c) for c in _X.columns]
    result = FitResult(result=model.result_, variant=dict(params)["variant"], params=params, data_key=data_key,
                       node_names=names, fit_time=float(model.fit_time_))
    if result.stopped:
        raise FitStopped(result)
    return result


#: (data key, params) of the fits :func:`fit_colide` computed in this process, newest last, for
#: :func:`is_cached` (bounded; the cache itself may evict sooner: then a live fit is computed,
#: still under its time limit).
_COMPUTED: "OrderedDict" = OrderedDict()
_COMPUTED_MAX = 4096
_COMPUTED_LOCK = threading.Lock()


def _remember(data_key, params):
    with _COMPUTED_LOCK:
        _COMPUTED[(data_key, tuple(params))] = True
        _COMPUTED.move_to_end((data_key, tuple(params)))
        while len(_COMPUTED) > _COMPUTED_MAX:
            _COMPUTED.popitem(last=False)


def is_cached(data_key: str, params: tuple) -> bool:
    """Whether :func:`fit_colide` computed this fit in this process (so asking again is a cache hit).

    Parameters
    ----------
    data_key : str
        :attr:`dashboard.data.Dataset.key`.
    params : tuple
        A :func:`solver_params` tuple.

    Returns
    -------
    bool
    """
    with _COMPUTED_LOCK:
        return (data_key, tuple(params)) in _COMPUTED


def fit_dataset(dataset, params, callback=None) -> FitResult:
    """:func:`fit_colide` on a :class:`dashboard.data.Dataset`, with its conditions and targets.

    Parameters
    ----------
    dataset : dashboard.data.Dataset
    params : tuple
        From :func:`solver_params`.
    callback : callable, optional

    Returns
    -------
    FitResult
    """
    return fit_colide(dataset.key, params, dataset.X, callback, _design=dataset.design)


class FitJob(Job):
    """Background fit of one or more CoLiDE variants on one dataset (a :class:`dashboard.infra.jobs.Job`).

    Parameters
    ----------
    dataset : dashboard.data.Dataset
    params_list : sequence of tuple
        One :func:`solver_params` tuple per variant, run in order.

    Raises
    ------
    colide_core.run.manifest.RunSettingsError
        If a tuple's settings are refused (:func:`check_params`); nothing starts.

    Attributes
    ----------
    fraction : float
        Overall progress in [0, 1] (iteration budget of all variants).
    status : str
        Human-readable state ("NV: stage 2/4, iteration 3000").
    results : list of FitResult
        Finished (or stopped) fits, in order.
    errors : list of str
        One message per failed variant.
    skipped : list of str
        One message per variant not started because Stop was pressed before its turn.
    """

    def __init__(self, dataset, params_list):
        for params in params_list:
            check_params(params)
        super().__init__(self._fit_all, "CoLiDE fit", key=dataset.key)
        self.data_key = dataset.key
        self._X = dataset.X
        self._dataset = dataset  # its design is read in the job: a refused design is the job's error
        self.params_list = list(params_list)
        self._budgets = [sum(_max_iter(p)) for p in self.params_list]
        self._done_budget = 0.0
        self._current = 0
        self.results: list[FitResult] = []
        self.errors: list[str] = []
        self.skipped: list[str] = []

    def _callback(self, stage, iteration, objective):
        params = self.params_list[self._current]
        frac = progress_fraction(_max_iter(params), stage, iteration)
        total = float(sum(self._budgets)) or 1.0
        n_stages = len(_max_iter(params))
        obj = f", objective {objective:.4g}" if math.isfinite(objective) else ""
        if stage >= n_stages:  # CoLiDE-TOPO's order search after the continuous start
            # Its length is not known in advance: the bar creeps from 90% towards 99% as swaps
            # are accepted; the status says what happened (swaps and the score going down).
            frac = 0.9 + 0.09 * (1.0 - 1.0 / (1.0 + iteration / 20.0))
            return self.report((self._done_budget + frac * self._budgets[self._current]) / total,
                               f"{dict(params)['variant'].upper()}: order search, {int(iteration)} swaps "
                               f"accepted, score {objective:.6g}")
        frac *= 0.9 if dict(params).get("solver") == "topo" else 1.0
        return self.report((self._done_budget + frac * self._budgets[self._current]) / total,
                           f"{dict(params)['variant'].upper()}: stage {int(stage) + 1}/{n_stages}, "
                           f"iteration {int(iteration)}{obj}")

    def _fit_all(self, job):
        for i, params in enumerate(self.params_list):
            self._current = i
            name = dict(params)["variant"].upper()
            if self.stop_requested:
                self.skipped.append(f"{name} was not run: Stop was pressed before it started.")
                continue
            try:
                self.results.append(fit_colide(self.data_key, params, self._X, self._callback,
                                               _design=self._dataset.design))
            except FitStopped as stopped:
                self.results.append(stopped.result)
            except (ValueError, FloatingPointError, np.linalg.LinAlgError) as exc:
                self.errors.append(f"{name}: the solver failed: {exc}")
            except Exception as exc:  # the page must never die with a traceback
                self.errors.append(f"{name}: unexpected error ({type(exc).__name__}): {exc}")
            self._done_budget += self._budgets[i]
        return self.results


def _env_seconds(name, default):
    """A positive number of seconds from the environment variable ``name``, else ``default``."""
    import math
    import os

    raw = os.environ.get(name, "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        value = default
    return value if math.isfinite(value) and value > 0 else default


#: A fit is live (re-solved on every change, no Run) when it is expected to take at most this many
#: seconds: the last fit measured on the dataset with the same solver, else the estimate
#: (:func:`expected_fit_seconds`). The brief: nothing under half a second needs a Run click.
#: ``$COLIDE_LIVE_MAX_SECONDS`` sets it for a server (the test suite raises it, so that a loaded
#: machine's timings do not decide tests that are not about this rule).
LIVE_MAX_SECONDS = _env_seconds("COLIDE_LIVE_MAX_SECONDS", 1.0)
#: A live fit still running after this many seconds is stopped (never cached) and the page asks for
#: Run (issue 42: a link's dataset made 12 s live fits in the script thread, with no Stop).
#: ``$COLIDE_LIVE_TIME_LIMIT`` sets it.
LIVE_TIME_LIMIT = _env_seconds("COLIDE_LIVE_TIME_LIMIT", 2.0)


def expected_fit_seconds(dataset, overrides: dict | None = None, variants=("ev", "nv")):
    """What one fit on ``dataset`` is expected to cost, from a measurement on this machine.

    Parameters
    ----------
    dataset : dashboard.data.Dataset
    overrides : dict, optional
        The session's solver overrides (``solver``, ``max_iter``).
    variants : sequence of {"ev", "nv"}
        The noise models that would be fitted (the largest estimate is returned).

    Returns
    -------
    (float, float, str) or None
        ``(low, high, how)`` in seconds: the fast solver's measured step scaled to the graph
        (``colide_core.solver.cost.estimate_fit_cost``, from the typical to the long fits), or
        CoLiDE-TOPO's measured swap evaluations (:func:`topo_cost`, once per dataset); None for a
        solver without an estimate (the paper-faithful one), for fits that run on a GPU
        (``overrides["device"]``, :func:`colide_core.solver.cost.runs_on_device`: the CPU's step
        says nothing of the device's; the first fit's own time is measured instead), or when it
        cannot be made.
    """
    from colide_core.defaults import DEVICE, LIVE_SOLVERS, SOLVER
    from colide_core.solver.cost import estimate_fit_cost, runs_on_device

    overrides = overrides or {}
    solver = overrides.get("solver", SOLVER)
    d = int(dataset.shape[1])
    if runs_on_device(solver, overrides.get("device", DEVICE), d):
        return None
    try:
        if solver == "topo":
            ests = [topo_cost(dataset.key, v, dataset.X) for v in variants]
            if any(e is None for e in ests):
                return None
            return (max(e.low for e in ests), max(e.high for e in ests),
                    "CoLiDE-TOPO's swap evaluations measured on these data")
        if solver in LIVE_SOLVERS:
            ests = [estimate_fit_cost(d, v, max_iter=tuple(overrides.get("max_iter", MAX_ITER))) for v in variants]
            return (max(e.low for e in ests), max(e.high for e in ests),
                    "the fast solver's step measured on this machine")
    except (ValueError, FloatingPointError, np.linalg.LinAlgError):
        return None
    return None


def live_reason(dataset, overrides: dict | None = None, *, measured=None, estimate=None, cached=False) -> tuple:
    """Whether the Learn page may re-solve on every widget change, and why not.

    One rule for every solver: a fit is live when it is expected to take at most
    :data:`LIVE_MAX_SECONDS`. The expectation is the last fit measured on this dataset with this
    solver (``measured``) when there is one, else the low end of the estimate (``estimate``, from
    :func:`expected_fit_seconds`: a solver step or TOPO's swap evaluations measured on this
    machine). Before any of that, four bounds hold whatever the estimate: the paper-faithful
    solver is never live (seconds a fit, no estimate), nor a budget above
    :data:`~colide_core.defaults.LIVE_MAX_ITER_TOTAL` iterations, more than
    :data:`~colide_core.defaults.LIVE_MAX_NODES` nodes or
    :data:`~colide_core.defaults.LIVE_MAX_CELLS` cells ``n_samples * n_nodes``. A live fit still
    running after :data:`LIVE_TIME_LIMIT` is stopped (:func:`fit_live`), and its time then makes the
    page ask for Run.

    Parameters
    ----------
    dataset : dashboard.data.Dataset
        ``dataset.shape`` is ``(n_samples, n_nodes)``.
    overrides : dict, optional
        The session's solver overrides (``solver`` among them when not the default).
    measured : float, optional
        Seconds the last fit on this dataset with this solver took
        (:func:`dashboard.infra.state.last_fit_time`).
    estimate : (float, float, str), optional
        :func:`expected_fit_seconds`: ``(low, high, how)``.
    cached : bool, default=False
        Every fit the step needs is already in the cache (:func:`is_cached`): then it is live
        whatever was measured or estimated, within the four bounds (a cache hit costs a lookup;
        issue 48, M-5).

    Returns
    -------
    (bool, str)
        ``(True, "")`` when live, else ``(False, reason)`` with a sentence a user understands.
    """
    from colide_core.defaults import LIVE_MAX_CELLS, LIVE_MAX_ITER_TOTAL, LIVE_MAX_NODES, LIVE_SOLVERS, SOLVER
    from dashboard.infra.text import fmt_seconds

    n, d = dataset.shape
    solver = (overrides or {}).get("solver", SOLVER)
    budget = sum(int(t) for t in (overrides or {}).get("max_iter", MAX_ITER))
    if budget > LIVE_MAX_ITER_TOTAL:  # e.g. a manifest's 500,000 iterations: 15 s a fit at d = 50
        return False, (f"these settings allow {budget:,} iterations per fit (the paper's schedule has "
                       f"{LIVE_MAX_ITER_TOTAL:,}); fits are live only within it")
    if solver != "topo" and solver not in LIVE_SOLVERS:
        return False, ("the paper-faithful solver (sidebar) takes seconds per fit; choose the fast solver "
                       "to see every change at once")
    if d > LIVE_MAX_NODES:
        return False, f"this graph has {d} nodes; fits are live up to {LIVE_MAX_NODES} nodes"
    if n * d > LIVE_MAX_CELLS:
        return False, (f"this dataset has {n:,} × {d} = {n * d:,} values; fits are live up to "
                       f"{LIVE_MAX_CELLS:,}")
    what = "CoLiDE-TOPO's order search" if solver == "topo" else "a fit"
    if cached:
        return True, ""
    if measured is not None:
        if measured > LIVE_MAX_SECONDS:
            return False, (f"the last fit here took {fmt_seconds(measured)}; fits are live when they take under "
                           f"{fmt_seconds(LIVE_MAX_SECONDS)}")
        return True, ""
    if estimate is not None and estimate[0] > LIVE_MAX_SECONDS:
        return False, (f"{what} on {d} nodes takes about {fmt_seconds(estimate[0])}–{fmt_seconds(estimate[1])} "
                       f"here (from {estimate[2]}); fits are live when they take under "
                       f"{fmt_seconds(LIVE_MAX_SECONDS)}")
    return True, ""


def fit_live(dataset, params_list, *, time_limit=None) -> tuple:
    """Solve each parameter tuple in the script thread (cached), for the live Learn page.

    Each fit goes through :func:`fit_colide` after :func:`check_params`: a setting seen before is a
    cache hit and takes no compute slot; a new one takes a server-wide slot
    (:func:`dashboard.infra.jobs.compute_slot`) with a person's priority (:func:`dashboard.infra.jobs.interactive`:
    ahead of the jobs in line, and preempting a λ prefetch), and waits for it at most ``time_limit``
    seconds (every slot held by other jobs: said, and the page then asks for Run). Use only where
    :func:`live_reason` allows it. A fit still running ``time_limit`` seconds after it got its slot
    is stopped (its partial result is neither shown nor cached).

    Parameters
    ----------
    dataset : dashboard.data.Dataset
    params_list : sequence of tuple
        :func:`solver_params` tuples.
    time_limit : float, optional
        Seconds a live fit may take; default :data:`LIVE_TIME_LIMIT`.

    Returns
    -------
    (list of FitResult, list of str, float or None)
        The fits that succeeded, one message per refused setting, failed or stopped fit, and the
        seconds a stopped fit ran, at least ``time_limit`` (None when none was stopped), for the
        page's liveness.
    """
    import time

    from colide_core.run.manifest import RunSettingsError
    from dashboard.infra.jobs import SlotBusy, interactive, slot_held_since
    from dashboard.infra.text import fmt_seconds

    limit = LIVE_TIME_LIMIT if time_limit is None else float(time_limit)
    results, errors, stopped = [], [], None
    for params in params_list:
        name = dict(params)["variant"].upper()
        began = {}

        def over(*_):
            # the time limit counts from the slot: waiting in line is not the fit's cost
            since = slot_held_since()
            if since is None:
                return False
            began["at"] = since
            return time.monotonic() - since > limit

        try:
            check_params(params)
            with interactive(wait=limit):
                results.append(fit_dataset(dataset, params, over))
        except SlotBusy as exc:
            # every slot held by jobs that are not preempted (Run fits, checks, bootstraps): the page
            # says so instead of hanging on them (not a measure of the fit: the page stays live)
            errors.append(f"{name}: {exc}, the most a live fit may wait. Press Run to queue it as a job, "
                          "with progress and Stop.")
        except FitStopped:
            ran = time.monotonic() - began.get("at", time.monotonic())
            stopped = max(stopped or 0.0, ran, limit)  # it would have taken longer
            errors.append(f"{name}: stopped after {fmt_seconds(limit)}, the most a live fit may take: a fit here "
                          "takes longer. Press Run to fit it as a job, with progress and Stop.")
        except RunSettingsError as exc:
            errors.append(f"{name}: {exc}")
        except (ValueError, FloatingPointError, np.linalg.LinAlgError) as exc:
            errors.append(f"{name}: the solver failed: {exc}")
        except Exception as exc:  # the page must never die with a traceback
            errors.append(f"{name}: unexpected error ({type(exc).__name__}): {exc}")
    return results, errors, stopped


@cache_data(show_spinner=False, max_entries=32, unhashed={
    "_X": "data_key is its content hash (dashboard.data.content_hash: values, shape, column names)"})
def topo_cost(data_key: str, variant: str, _X):
    """A measured estimate of one CoLiDE-TOPO fit on these data, once per dataset and noise model.

    ``colide_core.solver.cost.estimate_topo_cost`` on the data's covariance: one exact solve and a
    few swap evaluations are timed on this machine, and the search's expected length is applied
    (docs/topo.md, "Cost estimate"). The continuous start a TOPO fit begins with is not fitted
    (issue 42: that fit ran in the page's thread on every rerun, 12.5 s at d = 200, with no
    Stop): its cost comes from the fast solver's measured step model
    (``colide_core.solver.cost.estimate_fit_cost``, a fraction of a second, cached per process).
    λ is the paper's default: a swap evaluation costs about the same at every λ, so a λ step on
    the page re-estimates nothing.

    Parameters
    ----------
    data_key : str
    variant : {"ev", "nv"}
    _X : pandas.DataFrame of shape (n_samples, n_nodes)

    Returns
    -------
    colide_core.solver.cost.TopoCostEstimate or None
        None when the estimate cannot be made (e.g. a constant column).
    """
    from colide_core.defaults import LAMBDA1
    from colide_core.solver.cost import estimate_fit_cost, estimate_topo_cost

    X = np.asarray(_X, dtype=np.float64)
    Xc = X - X.mean(axis=0)
    cov = Xc.T @ Xc / X.shape[0]
    try:
        start = estimate_fit_cost(X.shape[1], variant)
        # the continuous start is a typical fast fit (the estimate's low end; measured on Sachs 0.04-0.06 s
        # against 0.1-0.17 s for the low end and 0.5-0.9 s for the middle of the range)
        return estimate_topo_cost(cov, variant=variant, lambda1=LAMBDA1, start_seconds=start.low)
    except (ValueError, FloatingPointError, np.linalg.LinAlgError):
        return None
