"""The Predict page's helpers: run a planned experiment on simulated data ("Run it": draw its rows
from the true SEM, refit with the new condition's target known, warm-started from the fit before,
and compare with the truth), and the prediction's table as the page shows and downloads it.

Convention: ``X`` is ``(n_samples, n_nodes)``; ``W[i, j] != 0`` means i -> j.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from colide_core.evaluation.experiment import EXPERIMENT_LABEL, run_experiment
from colide_core.exceptions import ExperimentStopped
from dashboard.data import design_of

__all__ = ["EXPERIMENT_LABEL", "prediction_frame", "try_experiment"]


def try_experiment(dataset, params, threshold, node, rows, *, before=None, W_init=None, callback=None) -> dict | None:
    """Simulate a hard intervention on ``node`` with the dataset's true SEM, refit, score both fits.

    The dataset's adapter to :func:`colide_core.evaluation.experiment.run_experiment` (the one
    implementation): its arrays, design and true SEM, and the experiment's seed, drawn from the
    simulation's seed, the node and the rows.

    Parameters
    ----------
    dataset : dashboard.data.Dataset
        A simulated dataset (``meta["W_true"]``, ``sigma_true``, ``B_true``; its conditions and
        targets, when it has them, are kept).
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
        For a dataset without a true SEM, or an unknown node.
    """
    meta = dataset.meta or {}
    W_true = meta.get("W_true")
    if W_true is None or dataset.sigma_true is None or dataset.B_true is None:
        raise ValueError("only a simulated dataset (with its true SEM) can run an experiment.")
    names = [str(c) for c in dataset.X.columns]
    if node not in names:
        raise ValueError(f"unknown node {str(node)[:60]!r}.")
    noise = (meta.get("config") or {}).get("noise", "gaussian")
    seed = np.random.SeedSequence([int(meta.get("seed", 0)), names.index(node), int(rows)])
    design = design_of(dataset)
    try:
        res = run_experiment(dataset.X, W_true, node, int(rows), conditions=design["conditions"],
                             targets=design["targets"], noise=noise,
                             noise_var=np.asarray(dataset.sigma_true, float) ** 2, estimator=dict(params),
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
