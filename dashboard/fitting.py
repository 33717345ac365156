"""Cached CoLiDE fits and the background job that runs them with progress and a Stop button.

Design
------
* :func:`fit_colide` is an ``st.cache_data`` function keyed on the dataset's content hash and
  the solver parameters only; the data frame is passed as ``_X`` (not hashed) so a rerun never
  hashes the whole frame. It returns a :class:`FitResult` holding the *raw* weights ``W``;
  thresholding happens later (:func:`colide_core.threshold_to_dag`), so moving the threshold
  slider never re-runs the solver.
* A stopped (partial) fit raises :class:`FitStopped` out of the cached function, so partial
  results are never cached; the job keeps them, flagged ``stopped=True``.
* :class:`FitJob` runs the fits in a daemon thread. The solver's
  ``callback(stage, iteration, objective)`` only writes plain attributes of the job and returns
  whether Stop was requested; it never calls Streamlit. The page polls the job from the script
  thread and draws the progress bar, so a rerun (e.g. the Stop click) does not kill the solve.

Convention: ``W[i, j] != 0`` means the edge i -> j.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import streamlit as st

from colide_core import CoLiDE as _CoLiDE
from colide_core import progress_fraction
from dashboard.jobs import BackgroundJob

__all__ = [
    "VARIANTS", "FitResult", "FitStopped", "FitJob", "solver_params", "fit_colide",
    "progress_fraction",
]

#: Display label -> ``colide_core.CoLiDE`` variant.
VARIANTS = {"EV": "ev", "NV": "nv"}

#: ``colide_core.CoLiDE``'s default per-stage budgets (the paper's).
DEFAULT_MAX_ITER = tuple(_CoLiDE().max_iter)

@dataclass(frozen=True, eq=False)
class FitResult:
    """Everything the dashboard keeps from one CoLiDE fit.

    Attributes
    ----------
    variant : {"ev", "nv"}
    params : tuple of (str, object)
        The ``colide_core.CoLiDE`` keyword arguments used (sorted, hashable).
    data_key : str
        Content hash of the dataset that was fitted.
    W : ndarray of shape (n_nodes, n_nodes)
        Raw learned weights (``W[i, j] != 0`` means i -> j), before thresholding.
    sigma : float or ndarray of shape (n_nodes,)
        Estimated noise standard deviation(s), in data units (one value for EV).
    node_names : list of str
    n_iter : int
        Total solver iterations.
    fit_time : float
        Solver wall time in seconds.
    converged : bool
    stopped : bool
        True when the user pressed Stop: the result is partial.
    objective : tuple of float
        Objective at each checkpoint.
    """

    variant: str
    params: tuple
    data_key: str
    W: np.ndarray
    sigma: object
    node_names: list
    n_iter: int
    fit_time: float
    converged: bool
    stopped: bool
    objective: tuple = field(default=())

    @property
    def label(self) -> str:
        """"EV" or "NV", with "(stopped, partial)" appended for a stopped fit."""
        base = self.variant.upper()
        return f"{base} (stopped, partial)" if self.stopped else base

    @property
    def sigma_per_node(self) -> np.ndarray:
        """``sigma`` broadcast to one value per node, shape (n_nodes,)."""
        return np.broadcast_to(np.asarray(self.sigma, dtype=float), (self.W.shape[0],)).copy()


class FitStopped(Exception):
    """Raised out of :func:`fit_colide` when the solve was stopped; ``.result`` is the partial fit."""

    def __init__(self, result: FitResult):
        super().__init__("stopped by the user")
        self.result = result


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


def _max_iter(params: tuple) -> tuple:
    return tuple(dict(params).get("max_iter", DEFAULT_MAX_ITER))


@st.cache_data(show_spinner=False, max_entries=64)
def fit_colide(data_key: str, params: tuple, _X, _callback=None) -> FitResult:
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

    model = colide_core.CoLiDE(**dict(params)).fit(_X, callback=_callback)
    sigma = model.sigma_
    sigma = float(sigma) if np.ndim(sigma) == 0 else np.asarray(sigma, dtype=float).copy()
    names = list(model.node_names_) if model.node_names_ is not None else [str(c) for c in _X.columns]
    result = FitResult(
        variant=dict(params)["variant"],
        params=params,
        data_key=data_key,
        W=np.array(model.W_, dtype=float),
        sigma=sigma,
        node_names=names,
        n_iter=int(model.n_iter_),
        fit_time=float(model.fit_time_),
        converged=bool(model.converged_),
        stopped=bool(model.stopped_),
        objective=tuple(float(o) for o in model.history_.get("objective", ())),
    )
    if result.stopped:
        raise FitStopped(result)
    return result


class FitJob(BackgroundJob):
    """Background fit of one or more CoLiDE variants on one dataset.

    Parameters
    ----------
    dataset : dashboard.data.Dataset
    params_list : sequence of tuple
        One :func:`solver_params` tuple per variant, run in order.

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
        self.data_key = dataset.key
        self._X = dataset.X
        self.params_list = list(params_list)
        self._budgets = [sum(_max_iter(p)) for p in self.params_list]
        self._done_budget = 0.0
        self._current = 0
        self.fraction = 0.0
        self.status = "starting"
        self.results: list[FitResult] = []
        self.errors: list[str] = []
        self.skipped: list[str] = []
        self.started = time.perf_counter()
        self._init_thread("colide-fit")

    # -- worker ----------------------------------------------------------------------------
    def _callback(self, stage, iteration, objective):
        params = self.params_list[self._current]
        frac = progress_fraction(_max_iter(params), stage, iteration)
        total = float(sum(self._budgets)) or 1.0
        self.fraction = min(1.0, (self._done_budget + frac * self._budgets[self._current]) / total)
        n_stages = len(_max_iter(params))
        obj = f", objective {objective:.4g}" if math.isfinite(objective) else ""
        self.status = (f"{dict(params)['variant'].upper()}: stage {int(stage) + 1}/{n_stages}, "
                       f"iteration {int(iteration)}{obj}")
        return self._stop.is_set()

    def _run(self):
        try:
            for i, params in enumerate(self.params_list):
                self._current = i
                name = dict(params)["variant"].upper()
                if self._stop.is_set():
                    self.skipped.append(f"{name} was not run: Stop was pressed before it started.")
                    continue
                try:
                    self.results.append(fit_colide(self.data_key, params, self._X, self._callback))
                except FitStopped as stopped:
                    self.results.append(stopped.result)
                except (ValueError, FloatingPointError, np.linalg.LinAlgError) as exc:
                    self.errors.append(f"{name}: the solver failed: {exc}")
                except Exception as exc:  # the page must never die with a traceback
                    self.errors.append(f"{name}: unexpected error ({type(exc).__name__}): {exc}")
                self._done_budget += self._budgets[i]
            self.fraction = 1.0
        finally:
            self.status = "finished"
            self._done.set()
