"""Try a planned experiment on a known SEM: draw its rows, refit with its target known, compare.

:func:`run_experiment` is the one implementation of "simulate the experiment on a known SEM,
refit, compare SHD": it draws ``rows`` samples of a hard intervention on one node from a linear SEM
(:func:`colide_core.data.simulate.simulate_experiment`, with the SEM's intercepts when given),
appends them to the data as a new condition whose target is that node, refits the same estimator
(warm-started from the fit before, as a candidate of ``solver="auto"``), and scores both fits
against the true DAG when one is known. The Predict page's "Run it"
(:func:`dashboard.planning.try_experiment`) and ``benchmarks/bench_planning.py`` call it; which
node to try is :func:`colide_core.evaluation.planning.rank_interventions`' question.

Conventions: data ``X`` has shape ``(n_samples, n_nodes)`` (the paper writes d x n);
``W[i, j] != 0`` means i -> j. This module never prints; progress goes through the estimator's
``callback`` (:meth:`colide_core.CoLiDE.fit`'s ``callback(stage, iteration, objective)``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import clone

from colide_core._params import InvalidParameterError, is_int
from colide_core._validation import check_adjacency, check_data, node_index
from colide_core.exceptions import ExperimentStopped

__all__ = ["EXPERIMENT_LABEL", "ExperimentResult", "experiment_label", "run_experiment"]

#: The condition label of the simulated experiment (a prefix; made unique against the data's).
EXPERIMENT_LABEL = "planned"


def experiment_label(node_name, existing=()) -> str:
    """The new condition's label: ``"planned: do(<node>)"``, primed until it is not in ``existing``.

    Parameters
    ----------
    node_name : str
        The intervened node's name.
    existing : collection of str, default=()
        The data's condition labels.

    Returns
    -------
    str

    Examples
    --------
    >>> experiment_label("Raf"), experiment_label("Raf", {"planned: do(Raf)"})
    ('planned: do(Raf)', "planned: do(Raf)'")
    """
    existing = set(existing)
    label = f"{EXPERIMENT_LABEL}: do({node_name})"
    while label in existing:
        label += "'"
    return label


def _read_only(A):
    A = np.array(A, dtype=float)
    A.setflags(write=False)
    return A


@dataclass(frozen=True)
class ExperimentResult:
    """What :func:`run_experiment` found: the fits without and with the experiment.

    Attributes
    ----------
    node : str
        The intervened node's name (``"X<j>"`` for an array's node).
    node_index : int
        Its column.
    rows : int
        Rows of the experiment.
    label : str
        The experiment's condition label in the refit (:func:`experiment_label`).
    X_experiment : ndarray of shape (rows, n_nodes)
        The experiment's rows as drawn (read-only).
    A_before, A_after : ndarray of shape (n_nodes, n_nodes)
        The thresholded weights (``adjacency_``) of the fit without the experiment and of the refit
        with it (read-only; ``A[i, j] != 0``: i -> j).
    W_after : ndarray of shape (n_nodes, n_nodes)
        The refit's raw weights (``W_``; read-only).
    shd_before, shd_after : int or None
        SHD against ``B_true`` (a reversed edge costs 1); None without a truth.
    oriented : tuple of (str, str)
        The edges of the refit whose direction the experiment settles: undirected in the
        interventional essential graph of ``A_after`` under the data's targets
        (:func:`~colide_core.evaluation.planning.interventional_essential_graph`), directed once
        the node joins them; empty when ``A_after`` has a cycle.
    choice : dict or None
        The refit's ``result_.choice`` (which candidate ``solver="auto"`` kept, with every
        candidate's objective), None for another solver or estimator.
    """

    node: str
    node_index: int
    rows: int
    label: str
    X_experiment: np.ndarray
    A_before: np.ndarray
    A_after: np.ndarray
    W_after: np.ndarray
    shd_before: int | None
    shd_after: int | None
    oriented: tuple
    choice: dict | None

    @property
    def gain(self):
        """``shd_before - shd_after`` (None without a truth)."""
        return None if self.shd_before is None else self.shd_before - self.shd_after


def _fit(model, data, design, callback, W_init):
    from colide_core.evaluation.stability import _fit_design

    kwargs = _fit_design(model, design)
    if callback is not None:
        kwargs["callback"] = callback
    if W_init is not None:
        kwargs["W_init"] = W_init
    return model.fit(data, **kwargs)


def _with_experiment(design, names, n, d, t, rows, node_name):
    """The refit's design: the data's conditions and targets (one ``"obs"`` condition without), then
    ``rows`` rows of a new condition (:func:`experiment_label`) targeting node ``t``. Also the data's
    target sets (as indices) and the new label."""
    from colide_core.data.design import Design

    if design is None:
        labels, targets, family = ["obs"] * n, {}, []
    else:
        labels = design.row_labels().tolist()
        targets = {lab: list(tg) for lab, tg in design.targets.items() if tg}
        family = list(targets.values())
    label = experiment_label(node_name, set(labels))
    new = Design.create(names, labels + [label] * rows, {**targets, label: [t]}, n_nodes=d)
    return new, family, label


def _oriented(A, family, node, names):
    from colide_core.evaluation.planning import interventional_essential_graph

    try:
        old = interventional_essential_graph(A, family)
    except ValueError:  # a thresholded fit with a cycle has no equivalence class
        return ()
    new = interventional_essential_graph(A, [*family, [node]])
    i, j = np.nonzero((old == 2) & (new == 1))
    return tuple((names[a], names[b]) for a, b in zip(i.tolist(), j.tolist()))


def run_experiment(X, W, node, rows, *, conditions=None, targets=None, noise="gaussian", noise_var=1.0,
                   intercepts=None, estimator=None, threshold=None, B_true=None, before=None, W_init=None,
                   random_state=None, callback=None, design=None) -> ExperimentResult:
    """Simulate a hard intervention on ``node`` from a linear SEM, add it to ``X``, refit, compare.

    The experiment's ``rows`` samples come from the SEM ``x = x W_T + z + b`` with the node's
    column of ``W`` cut (:func:`colide_core.data.simulate.simulate_experiment`; ``b`` the
    intercepts); they join ``X`` as a new condition (:func:`experiment_label`) whose target is
    ``node``, next to the data's own conditions and targets, and ``estimator`` is refitted on all the
    rows.

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_nodes)
        The data so far (the paper writes d x n); finite numbers, at least 4 rows. Never modified.
    W : array-like of shape (n_nodes, n_nodes)
        The weighted DAG of the SEM to draw the experiment from (the truth of a simulation, or an
        assumed SEM); ``W[i, j] != 0``: i -> j, data units. Never modified.
    node : int or str
        The node to intervene on: an index, or a column name of a DataFrame ``X``.
    rows : int
        Rows of the experiment, at least 1.
    conditions : array-like of shape (n_samples,), optional
        Each row's condition, as :meth:`colide_core.CoLiDE.fit` takes it (default: one
        observational condition, labelled ``"obs"``).
    targets : mapping, optional
        ``{condition: [node, ...]}``, the data's interventions (needs ``conditions``).
    noise : str, default="gaussian"
        The SEM's noise law (:data:`colide_core.data.simulate.NOISE_TYPES`).
    noise_var : float or array-like of shape (n_nodes,), default=1.0
        The SEM's noise variances (squared data units).
    intercepts : array-like of shape (n_nodes,), optional
        The SEM's intercepts ``b`` (data units; default zero: noise of mean 0); the experiment's
        rows are shifted by their mean ``b (I - W_T)^-1``
        (:func:`colide_core.data.simulate.sem_mean`).
    estimator : CoLiDE or mapping, optional
        The fit's estimator (cloned, never modified; any estimator with ``fit(X, conditions=,
        targets=)`` and ``adjacency_`` works when ``callback`` and ``W_init`` are not used), or
        the parameters of a :class:`colide_core.CoLiDE`; default ``CoLiDE()``.
    threshold : float, optional
        Replaces the estimator's ``threshold`` (the magnitude threshold on ``|W|``).
    B_true : array-like of shape (n_nodes, n_nodes), optional
        The true DAG to score both fits against (``shd``); default none: the SHDs are None.
    before : array-like of shape (n_nodes, n_nodes), optional
        The thresholded fit without the experiment; default: fitted here on ``X`` with its design.
    W_init : array-like of shape (n_nodes, n_nodes), optional
        The raw weights of the fit before, passed to the refit (``CoLiDE.fit(W_init=...)``: with
        ``solver="auto"`` a candidate, the refit keeping the one of lowest score). Default: the
        weights of the fit made here when ``before`` is None, else none.
    random_state : None, int, SeedSequence or Generator
        Seeds the experiment's rows; the same seed gives the same result.
    callback : callable, optional
        The fits' ``callback(stage, iteration, objective)`` (:meth:`colide_core.CoLiDE.fit`'s),
        passed to the fit before (when made here) and to the refit; returning True stops.
    design : colide_core.data.design.Design, optional
        The data's conditions and targets in one object (validated once), instead of
        ``conditions`` and ``targets`` (:func:`colide_core.data.design.resolve_design`): the fit
        before takes it as it is, the refit the design it makes from it (the experiment's rows a
        new condition). The same result as the loose form.

    Returns
    -------
    ExperimentResult

    Raises
    ------
    ExperimentStopped
        (a :class:`colide_core.exceptions.Stopped`) When ``callback`` returned True: a stopped
        fit says nothing about the experiment (``partial``: the stopped estimator).
    UnknownNodeError
        (a ``ValueError``) For an unknown ``node``.
    InvalidParameterError
        For ``rows`` not a positive integer, or a malformed estimator or ``targets``.
    ValueError
        For invalid data, ``W`` of the wrong shape or not finite, ``B_true`` or ``before`` of the
        wrong shape, a ``design`` of other data or given with ``conditions`` or ``targets``, or the
        fit's own errors (conditions, targets, settings).

    Examples
    --------
    The chain 0 -> 1 -> 2: the fit on observational rows and the refit with 200 rows of do(1).

    >>> from colide_core.data.simulate import simulate_linear_sem
    >>> W = np.array([[0, 1.0, 0], [0, 0, 1.0], [0, 0, 0]])
    >>> X, _ = simulate_linear_sem(W, 300, random_state=0)
    >>> res = run_experiment(X, W, 1, 200, B_true=W != 0, random_state=0)
    >>> res.label, res.X_experiment.shape, res.shd_after
    ('planned: do(X1)', (200, 3), 0)
    """
    from colide_core import CoLiDE
    from colide_core.data.simulate import sem_mean, simulate_experiment
    from colide_core.evaluation._metrics import evaluate

    values, names = check_data(X, min_rows=4)
    n, d = values.shape
    W = check_adjacency(W, d, "W", what="weighted DAG", copy=True)
    if not is_int(rows) or int(rows) < 1:
        raise InvalidParameterError(f"rows must be a positive integer, got {rows!r:.60}.")
    rows = int(rows)
    t = node_index(node, names, d)
    node_names = names or [f"X{j}" for j in range(d)]
    name = node_names[t]
    if callback is not None and not callable(callback):
        raise InvalidParameterError("callback must be callable.")
    if estimator is None:
        estimator = CoLiDE()
    elif hasattr(estimator, "items"):
        estimator = CoLiDE(**dict(estimator))
    elif not hasattr(estimator, "fit"):
        raise InvalidParameterError("estimator must be an estimator or a mapping of CoLiDE's parameters, got "
                                    f"{type(estimator).__name__}.")
    model = clone(estimator)
    if threshold is not None:
        model.set_params(threshold=float(threshold))
    truth = None if B_true is None else check_adjacency(B_true, d, "B_true", what="adjacency") != 0
    from colide_core.evaluation.stability import _resampling_design

    design = _resampling_design(names, n, d, design, conditions, targets)  # once: passed down as it is
    refit_design, family, label = _with_experiment(design, names, n, d, t, rows, name)

    new = simulate_experiment(W, [t], rows, noise, noise_var=noise_var, random_state=random_state)
    if intercepts is not None:
        b = np.asarray(intercepts, dtype=float)
        if b.shape != (d,) or not np.all(np.isfinite(b)):
            raise ValueError(f"intercepts must be {d} finite numbers, got shape {b.shape}.")
        W_cut = W.copy()
        W_cut[:, t] = 0.0
        new = new + sem_mean(W_cut, b)

    asked = {"stop": False}
    hear = None
    if callback is not None:
        def hear(*args):
            asked["stop"] = asked["stop"] or bool(callback(*args))
            return asked["stop"]

    def frame(A):
        return pd.DataFrame(A, columns=names) if names is not None else A

    if before is None:
        first = _fit(clone(model), frame(values), design, hear, None)
        if asked["stop"]:
            raise ExperimentStopped("Stopped while the fit without the experiment ran.", partial=first)
        before = first.adjacency_
        if W_init is None:
            W_init = first.W_
    A_before = check_adjacency(before, d, "before", what="adjacency")
    refit = _fit(clone(model), frame(np.vstack([values, new])), refit_design, hear, W_init)
    if asked["stop"]:
        raise ExperimentStopped("Stopped while the refit with the experiment ran.", partial=refit)
    A_after = np.asarray(refit.adjacency_, dtype=float)
    return ExperimentResult(
        node=name, node_index=t, rows=rows, label=label, X_experiment=_read_only(new),
        A_before=_read_only(A_before), A_after=_read_only(A_after), W_after=_read_only(getattr(refit, "W_", A_after)),
        shd_before=None if truth is None else int(evaluate(truth, A_before)["shd"]),
        shd_after=None if truth is None else int(evaluate(truth, A_after)["shd"]),
        oriented=_oriented(A_after != 0, family, t, node_names),
        choice=getattr(getattr(refit, "result_", None), "choice", None))
