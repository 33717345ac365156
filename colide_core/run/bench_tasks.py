"""The benchmark tasks a sweep runs, and the Compare page's manifest of a sweep.

:func:`synthetic_task` (data drawn by :func:`colide_core.data.simulate.simulate_dataset`, the
project's one simulation protocol) and :func:`data_task` (a given dataset) fit one method of
:data:`colide_core.evaluation.baselines.METHODS` and return a flat row of metrics; they are
module-level functions, so a :class:`~colide_core.run.tasks.Task` pickles them by reference and a
worker needs only ``colide_core``. :func:`comparison_manifest` records a Compare run.
:mod:`colide_core.run.executor` re-exports these names (their public import path).
"""
from __future__ import annotations

import math
import time
from typing import Mapping

import numpy as np
import pandas as pd

from colide_core import defaults

__all__ = ["synthetic_task", "data_task", "comparison_manifest", "COMPARISON_SCHEMA"]


# --------------------------------------------------------------------------------------------
# task functions
# --------------------------------------------------------------------------------------------

_METRIC_KEYS = ("shd", "tpr", "fdr", "fpr", "nnz", "shd_cpdag", "sid", "shd_norm",
                "shd_cpdag_norm", "sid_norm", "sigma_rel_err")


def _fit_method(method, params, X, return_scores=False, conditions=None, targets=None, design=None):
    """Run a registered method; return (W, sigma or None), and the edge scores when asked.

    With ``conditions`` (and ``targets``, node indices), the methods that can use the design fit
    with it; the others run on the rows centred within each condition
    (``run_method(unused_design="centre")``; :func:`colide_core.evaluation.baselines.design_use`
    names which). The scores are the raw weights before thresholding for the CoLiDE family
    (``W_``), else the method's own output (a baseline that thresholds gives its kept weights and
    zeros). ``design`` (a :class:`~colide_core.data.design.Design`) instead of ``conditions`` and
    ``targets`` is passed on as it is."""
    from colide_core.evaluation.baselines import METHODS, run_method

    if method in ("CoLiDE-EV", "CoLiDE-NV"):
        # Same estimator as the registry entry, kept as a model to also report sigma.
        from colide_core.solver._estimator import CoLiDE

        spec = METHODS[method]
        unknown = sorted(set(params) - set(spec.defaults))
        if unknown:
            raise ValueError(f"Unknown parameter(s) for {method}: {', '.join(unknown)}")
        model = CoLiDE(method[-2:].lower(), **{**spec.defaults, **params})
        model.fit(X, conditions=conditions, targets=targets if conditions is not None else None, design=design)
        out = np.asarray(model.adjacency_, dtype=float), model.sigma_
        return (*out, np.asarray(model.W_, dtype=float)) if return_scores else out
    W = run_method(method, X, conditions=conditions, targets=targets if conditions is not None else None,
                   unused_design="centre", design=design, **params)
    return (W, None, np.asarray(W, dtype=float)) if return_scores else (W, None)


def _design_columns(method, conditions=None, targets=None, design=None) -> dict:
    """The row columns that record how ``method`` used the design: ``design`` (a key of
    :data:`colide_core.evaluation.baselines.DESIGN_USES`) and ``n_conditions``."""
    from colide_core.evaluation.baselines import design_use

    if design is not None:
        return {"design": design_use(method, design=design), "n_conditions": len(design.labels)}
    n_cond = 1 if conditions is None else len(set(np.asarray(conditions, dtype=object).tolist()))
    return {"design": design_use(method, conditions, targets), "n_conditions": int(n_cond)}


def _curve_columns(B_true, scores):
    """``auroc``, ``auprc``, ``roc_tpr``, ``pr_precision`` of one fit (:func:`colide_core.evaluation.curves.curves_on_grid`)."""
    from colide_core.evaluation.curves import curves_on_grid

    return curves_on_grid(B_true, scores)


def synthetic_task(method, params, dataset, seed, curves=False, interventions=None):
    """Simulate a dataset, run one method, score it (one row of a benchmark).

    Parameters
    ----------
    method : str
        A key of :data:`colide_core.evaluation.baselines.METHODS`.
    params : dict
        Method parameter overrides.
    dataset : dict
        Simulation settings for :func:`colide_core.data.simulate.simulate_dataset` (keys of
        :data:`colide_core.data.simulate.DATASET_DEFAULTS`; missing ones take the defaults).
    seed : int
        Dataset seed (the ``random_state`` of ``simulate_dataset``).
    curves : bool, default False
        Also score ``|W|`` (the raw weights before thresholding, for the CoLiDE family) as an
        edge score: ``auroc``, ``auprc`` and the ROC and precision-recall curves on
        :data:`colide_core.evaluation.curves.CURVE_GRID` (``roc_tpr``, ``pr_precision``: 101 floats
        each, :func:`colide_core.evaluation.curves.curves_on_grid`), so that the row stays small and the
        curves of several seeds can be averaged.
    interventions : mapping, optional
        ``simulate_dataset``'s interventional conditions
        (:data:`colide_core.data.simulate.INTERVENTION_DEFAULTS`). The methods that can use the
        design fit with the drawn conditions and targets; the others get the rows centred within
        each condition (:func:`_fit_method`); the row's ``design`` column says which.

    Returns
    -------
    dict
        The complete dataset settings (``graph``, ``degree``, ``n_nodes``, ...; pairs as lists),
        the metrics of :func:`colide_core.evaluate` on the estimated DAG (``sigma_rel_err`` for
        the CoLiDE family, NaN otherwise), ``time_s``, the method's wall time in seconds, and
        the curve columns when ``curves``.

    Raises
    ------
    ValueError
        For invalid settings (:func:`colide_core.data.simulate.check_spec`) or parameters; any error
        of the method itself propagates (:func:`run_sweep` turns it into an error row).
    """
    from colide_core.evaluation._metrics import evaluate
    from colide_core.data.simulate import simulate_dataset

    if isinstance(dataset, Mapping) and "interventions" in dataset:  # a bench task: the design in its identity
        dataset = dict(dataset)
        interventions = dataset.pop("interventions")
    data = simulate_dataset(dataset, seed, interventions=interventions)
    t0 = time.perf_counter()
    W, sigma, *scores = _fit_method(method, params, data.X, return_scores=curves, conditions=data.conditions,
                                    targets=data.targets if data.conditions is not None else None)
    elapsed = time.perf_counter() - t0
    m = evaluate(data.B_true, W, sigma_true=data.noise_std if sigma is not None else None,
                 sigma_est=sigma)
    row = {k: list(v) if isinstance(v, tuple) else v for k, v in data.spec.items()}
    row.update({k: m.get(k, math.nan) for k in _METRIC_KEYS})
    row["time_s"] = elapsed
    if interventions is not None:
        row["interventions"] = dict(interventions)
    row.update(_design_columns(method, data.conditions, data.targets))
    if curves:
        row.update(_curve_columns(data.B_true, scores[0]))
    return row


def data_task(method, params, dataset, seed, bootstrap=False, B_true=None, return_W=True, curves=False,
              conditions=None, targets=None, design=None):
    """Run one method on given data (the app's Compare and bootstrap runs).

    Parameters
    ----------
    method : str
        A key of :data:`colide_core.evaluation.baselines.METHODS`.
    params : dict
        Method parameter overrides.
    dataset : numpy.ndarray or pandas.DataFrame, shape (n_samples, n_nodes)
        The data.
    seed : int or None
        With ``bootstrap=True``, seeds the resampling of rows (with
        replacement, ``numpy.random.default_rng(seed)``); otherwise unused.
    bootstrap : bool, default False
        Resample the rows before fitting.
    B_true : array-like (n_nodes, n_nodes), optional
        Ground truth; adds the metrics of :func:`colide_core.evaluate`.
    return_W : bool, default True
        Include the estimated DAG ``W`` (nested lists, ``W[i][j] != 0`` means
        i -> j) in the row.
    curves : bool, default False
        With ``B_true``: also the edge-score curve columns of :func:`synthetic_task`
        (``auroc``, ``auprc``, ``roc_tpr``, ``pr_precision``).
    conditions : array-like of shape (n_samples,), optional
        Each row's condition (the experimental design). The CoLiDE family and GIES fit with it
        (and ``targets``); the other methods get the rows centred within each condition
        (:func:`_fit_method`). With ``bootstrap``, rows are resampled within their condition.
    targets : mapping, optional
        ``{label: [node index, ...]}``: what each condition intervenes on. Needs ``conditions``.
    design : colide_core.data.design.Design, optional
        Both in one object (validated once), instead of ``conditions`` and ``targets``; with
        ``bootstrap`` the rows are resampled by :meth:`Design.resample
        <colide_core.data.design.Design.resample>` (the same rows as with ``conditions``).

    Returns
    -------
    dict
        ``W`` (if asked), ``nnz``, ``time_s``, ``design`` and ``n_conditions`` (how the method
        used the design, :func:`colide_core.evaluation.baselines.design_use`), and the metrics
        when ``B_true`` is given (and the curve columns when ``curves``).
    """
    import dataclasses

    from colide_core.data.design import resolve_design

    X = dataset.to_numpy(dtype=float) if isinstance(dataset, pd.DataFrame) else np.asarray(dataset, float)
    if targets is not None and conditions is None and design is None:
        raise ValueError("targets need conditions: give the condition of each row.")
    names = [str(c) for c in dataset.columns] if isinstance(dataset, pd.DataFrame) else None
    # checked once here; the fit and the row's columns take the Design as it is
    design = resolve_design(design, conditions, targets, node_names=names, n_samples=X.shape[0], n_nodes=X.shape[1])
    if bootstrap:
        rng = np.random.default_rng(seed)
        if design is None:
            rows = rng.integers(0, X.shape[0], size=X.shape[0])
        else:  # within each condition, so every condition keeps its size (and the design its counts)
            rows = design.resample(rng)
            codes = design.codes[rows]
            codes.setflags(write=False)
            design = dataclasses.replace(design, codes=codes)
        X = X[rows]
    t0 = time.perf_counter()
    curves = bool(curves and B_true is not None)
    W, _, *scores = _fit_method(method, params, X, return_scores=curves, design=design)
    row = {"time_s": time.perf_counter() - t0, "nnz": int(np.count_nonzero(W)),
           **_design_columns(method, design=design)}
    if B_true is not None:
        from colide_core.evaluation._metrics import evaluate

        row.update(evaluate(B_true, W))
    if curves:
        row.update(_curve_columns(B_true, scores[0]))
    if return_W:
        row["W"] = W.tolist()
    return row


# --------------------------------------------------------------------------------------------
# the record of a comparison
# --------------------------------------------------------------------------------------------

#: The schema of :func:`comparison_manifest`.
COMPARISON_SCHEMA = "colide-comparison/1"


def comparison_manifest(rows, *, data, methods, seeds, conditions=None, targets=None, node_names=None,
                        design=None):
    """The manifest of a comparison (the Compare page, ``colide bench`` on given data): what ran on
    which data, with which design.

    Parameters
    ----------
    rows : pandas.DataFrame or list of dict
        Per-run rows (``method``, ``seed``, ``error``, ``design``, metrics).
    data : dict
        How the data were made: for given data at least ``{"name", "sha256", "n_samples",
        "n_nodes"}``; for simulations the settings.
    methods : mapping
        ``{method: {parameter: value}}`` as run.
    seeds : sequence of int
    conditions : array-like of shape (n_samples,), optional
        The rows' condition labels (given data with a design).
    targets : mapping, optional
        ``{label: [node index, ...]}``.
    node_names : sequence of str, optional
        To write the targets by name.
    design : colide_core.data.design.Design, optional
        Instead of ``conditions``, ``targets`` and ``node_names``: the record is
        :meth:`Design.record <colide_core.data.design.Design.record>` with the rows' fingerprint.

    Returns
    -------
    dict
        Plain JSON: ``schema`` (:data:`COMPARISON_SCHEMA`), ``data``, ``design``
        (:func:`colide_core.run.manifest.conditions_record` or
        None), ``methods`` (parameters and ``design``, how each used the conditions: a key of
        :data:`colide_core.evaluation.baselines.DESIGN_USES`), ``seeds``, ``runs`` (one dict a row,
        curves left out) and ``environment``
        (:func:`colide_core.run.manifest.environment_info`).
    """
    from colide_core.evaluation.baselines import design_use
    from colide_core.run.manifest import _jsonable, conditions_record, environment_info

    frame = pd.DataFrame(rows)
    record = None
    if design is not None:
        from colide_core.data.design import resolve_design

        design = resolve_design(design, conditions, targets, node_names=node_names)
        record = None if design is None else conditions_record(design=design)
    elif conditions is not None:
        from colide_core.data.conditions import check_conditions

        labels, codes = check_conditions(conditions, len(conditions))
        counts = np.bincount(codes, minlength=len(labels))
        record = conditions_record(labels, counts, {k: v for k, v in (targets or {}).items()},
                                   node_names, conditions=conditions)

    def use(m):
        return design_use(m, design=design) if design is not None else design_use(m, conditions, targets)

    keep = [c for c in frame.columns if c not in ("roc_tpr", "pr_precision")]
    return _jsonable({
        "schema": COMPARISON_SCHEMA,
        "data": dict(data),
        "design": record,
        "methods": {m: {"params": dict(p), "design": use(m)} for m, p in methods.items()},
        "seeds": [int(s) for s in seeds],
        "runs": frame[keep].to_dict(orient="records"),
        "environment": environment_info(),
    })
