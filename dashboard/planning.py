"""The Predict page's helpers: run a planned experiment on simulated or network data ("Run it": draw
its rows from the true SEM, refit with the new condition's target known, warm-started from the fit
before, and compare with the truth), the prediction's table as the page shows and downloads it, and,
where the true SEM is known (:func:`true_sem`), its true shifts and the errors of doing and seeing
(:func:`with_truth`).

Convention: ``X`` is ``(n_samples, n_nodes)``; ``W[i, j] != 0`` means i -> j.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from colide_core.evaluation.experiment import EXPERIMENT_LABEL, run_experiment
from colide_core.exceptions import ExperimentStopped

__all__ = ["EXPERIMENT_LABEL", "TRUE_COLUMNS", "prediction_frame", "true_sem", "try_experiment", "with_truth"]

#: The columns :func:`with_truth` adds: the true SEM's shift, and the errors of doing and seeing.
TRUE_COLUMNS = ("shift (sd), true", "error of doing (sd)", "error of seeing (sd)")


def true_sem(dataset) -> dict | None:
    """The dataset's true linear SEM in the units of its columns, or None where none is known.

    Simulated datasets (``dashboard.simulation``) and bnlearn networks (``network_dataset``) carry
    it in ``meta``; a standardisation keeps it (``W_true`` and ``sigma_true`` rescaled by
    ``transformed_dataset``), a log or asinh transform does not (the SEM is no longer linear in the
    columns).

    Parameters
    ----------
    dataset : dashboard.data.Dataset
        ``X`` of shape (n_samples, n_nodes).

    Returns
    -------
    dict or None
        ``W`` (n_nodes, n_nodes; ``W[i, j] != 0``: i -> j), ``noise_var`` (n_nodes,) or None
        (``sigma_true ** 2``) and ``intercepts`` (n_nodes,) or None (``meta["intercepts"]``,
        a network's; None after a standardisation, whose columns have mean 0: so have the
        intercepts of the rescaled SEM, up to the sample's error). None without ``meta["W_true"]``
        of the columns' size, or after a log or asinh transform.
    """
    meta = dataset.meta or {}
    W = meta.get("W_true")
    d = dataset.X.shape[1]
    steps = [str(s.get("kind")) for s in meta.get("transform", ())]
    if W is None or np.shape(W) != (d, d) or any(k != "standardize" for k in steps):
        return None
    sigma = dataset.sigma_true
    b = meta.get("intercepts")
    return {"W": np.array(W, dtype=float),
            "noise_var": None if sigma is None else np.asarray(sigma, dtype=float) ** 2,
            "intercepts": None if b is None or steps else np.array(b, dtype=float)}


def _descendants(W, t) -> np.ndarray:
    """Boolean mask of the nodes reachable from node ``t`` along ``W``'s edges (``t`` excluded)."""
    adj = np.asarray(W) != 0
    seen = np.zeros(adj.shape[0], dtype=bool)
    todo = [t]
    while todo:
        for j in np.flatnonzero(adj[todo.pop()] & ~seen):
            seen[j] = True
            todo.append(int(j))
    seen[t] = False
    return seen


def with_truth(shown, pred, true_pred, W_true) -> tuple:
    """The page's table with the true SEM's shift and the errors of doing and seeing, and a summary.

    Parameters
    ----------
    shown : pandas.DataFrame
        :func:`prediction_frame`'s table of ``pred`` (index: the node names), not modified.
    pred, true_pred : colide_core.evaluation.interventions.InterventionPrediction
        The page's prediction (the fit's SEM) and the same intervention through the true SEM
        (:func:`~colide_core.evaluation.interventions.intervention_table` with ``W_true``, the same
        rows and centring), both of one node.
    W_true : array-like of shape (n_nodes, n_nodes)
        The true weights (for the intervened node's descendants).

    Returns
    -------
    frame : pandas.DataFrame
        ``shown`` with :data:`TRUE_COLUMNS` after ``shift (sd), seeing``: the true shift, doing's
        and seeing's shift minus it (each in sd of its node, 3 decimals).
    summary : str
        ``"doing's error: RMSE x sd over the k descendants of <node> in the true graph; seeing's:
        y sd"`` (over the other nodes when it has none; node names not escaped).

    Raises
    ------
    ValueError
        If the predictions are not of one node, or of other nodes than ``shown``'s.
    """
    single = {**pred.do, **pred.shift}
    if len(single) != 1 or list(pred.table.index) != list(true_pred.table.index):
        raise ValueError("the truth needs one intervened node and the same nodes in both predictions.")
    (node,) = single
    t = pred.table
    sd = t["reference_sd"].where(t["reference_sd"] > 0)
    true_sd = true_pred.table["shift_sd"]
    doing = t["shift_sd"] - true_sd
    seeing = t["associational_shift"] / sd - true_sd
    out = shown.copy()
    at = list(out.columns).index("shift (sd), seeing") + 1 if "shift (sd), seeing" in out.columns else len(out.columns)
    for k, (name, col) in enumerate(zip(TRUE_COLUMNS, (true_sd, doing, seeing))):
        out.insert(at + k, name, (col.reindex(out.index).astype(float).round(3) + 0.0).to_numpy())
    names = list(t.index)
    mask = _descendants(W_true, names.index(node))
    k = int(mask.sum())
    where = f"the {k} descendant{'s' if k != 1 else ''} of {node} in the true graph"
    if not mask.any():
        mask = np.arange(len(names)) != names.index(node)
        where = f"the other nodes ({node} has no descendant in the true graph)"
    rmse = lambda e: float(np.sqrt(np.nanmean(np.square(e.to_numpy()[mask]))))  # noqa: E731
    return out, f"doing's error: RMSE {rmse(doing):.3g} sd over {where}; seeing's: {rmse(seeing):.3g} sd"


def try_experiment(dataset, params, threshold, node, rows, *, before=None, W_init=None, callback=None) -> dict | None:
    """Simulate a hard intervention on ``node`` with the dataset's true SEM, refit, score both fits.

    The true SEM is :func:`true_sem`'s: a simulation's, or a bnlearn network's with its intercepts
    and noise variances.

    The dataset's adapter to :func:`colide_core.evaluation.experiment.run_experiment` (the one
    implementation): its arrays, design and true SEM, and the experiment's seed, drawn from the
    simulation's seed, the node and the rows.

    Parameters
    ----------
    dataset : dashboard.data.Dataset
        A simulated or network dataset (``meta["W_true"]``, ``sigma_true``, ``B_true``, a
        network's ``meta["intercepts"]``; its conditions and targets, when it has them, are kept).
    params : dict
        The Learn fit's checked settings (``dashboard.fitting.check_params``).
    threshold : float
        The Learn page's threshold.
    node : str
        The node to intervene on (a column name).
    rows : int
        Rows of the experiment (its noise law: the simulation's).
    before : ndarray of shape (n_nodes, n_nodes), optional
        The thresholded fit without the experiment (the Learn page's); default refitted here
        with the same settings and design.
    W_init : ndarray of shape (n_nodes, n_nodes), optional
        The raw weights of the fit before the experiment (the Learn fit's ``W``): passed to the
        refit as a candidate (``CoLiDE.fit(W_init=...)``; with ``solver="auto"`` the refit returns
        the candidate of lowest score, issue 51). Default: the weights of the fit made here when
        ``before`` is None, else none.
    callback : callable, optional
        The refit's progress callback (``CoLiDE.fit``'s).

    Returns
    -------
    dict or None
        ``rows``, ``label`` (the new condition), ``shd_before`` (the fit without the experiment),
        ``shd_after`` and ``A_after`` (the
        thresholded weights of the refit with the experiment, its target known), ``choice`` (the
        refit's ``result_.choice``: which candidate won, or None). None when ``callback``
        returned True (a stopped fit has no result).

    Raises
    ------
    ValueError
        For a dataset without a true SEM (:func:`true_sem` None, or no ``sigma_true`` or
        ``B_true``), or an unknown node.
    """
    meta = dataset.meta or {}
    sem = true_sem(dataset)
    if sem is None or sem["noise_var"] is None or dataset.B_true is None:
        raise ValueError("only a simulated or network dataset (with its true SEM) can run an experiment.")
    names = [str(c) for c in dataset.X.columns]
    if node not in names:
        raise ValueError(f"unknown node {str(node)[:60]!r}.")
    noise = (meta.get("config") or {}).get("noise", "gaussian")
    seed = np.random.SeedSequence([int(meta.get("seed", 0)), names.index(node), int(rows)])
    try:  # the dataset's Design, checked once when the dataset was made
        res = run_experiment(dataset.X, sem["W"], node, int(rows), design=dataset.design, noise=noise,
                             noise_var=sem["noise_var"],
                             intercepts=sem["intercepts"], estimator=dict(params),
                             threshold=float(threshold), B_true=dataset.B_true, before=before, W_init=W_init,
                             random_state=np.random.default_rng(seed), callback=callback)
    except ExperimentStopped:
        return None
    return {"rows": res.rows, "label": res.label, "shd_before": res.shd_before, "shd_after": res.shd_after,
            "A_after": np.array(res.A_after), "choice": res.choice}


def prediction_frame(pred) -> pd.DataFrame:
    """The prediction's table as the Predict page shows it and its CSV holds it.

    Parameters
    ----------
    pred : colide_core.evaluation.interventions.InterventionPrediction

    Returns
    -------
    pandas.DataFrame
        One row per node (index: the node names): ``reference mean`` and ``predicted mean`` (data
        units), ``shift (sd), doing``, the interval of that shift (``<level> interval of the
        shift (sd): low`` and ``: high``, NaN without a bootstrap: the interval is the change's,
        in the same units as the shift beside it, never around the predicted mean) and ``shift
        (sd), seeing``; rounded to 3 decimals, float noise already 0
        (:func:`~colide_core.evaluation.interventions.intervention_table`).
    """
    t = pred.table
    sd = t["reference_sd"].where(t["reference_sd"] > 0)
    label = f"{pred.level:.0%} interval of the shift (sd)"
    out = pd.DataFrame({"reference mean": t["reference_mean"], "predicted mean": t["predicted_mean"],
                        "shift (sd), doing": t["shift_sd"], f"{label}: low": t["low"] / sd,
                        f"{label}: high": t["high"] / sd, "shift (sd), seeing": t["associational_shift"] / sd})
    return out.round(3) + 0.0  # + 0.0: no "-0.0" from rounding a tiny negative
