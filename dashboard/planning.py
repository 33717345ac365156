"""Run a planned experiment on simulated data (the Predict page's "Run it"): draw its rows from the
true SEM, refit with the new condition's target known, and compare with the truth.

Convention: ``X`` is ``(n_samples, n_nodes)``; ``W[i, j] != 0`` means i -> j.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from colide_core import CoLiDE, evaluate
from colide_core.data.simulate import simulate_experiment
from dashboard.data import design_of

__all__ = ["EXPERIMENT_LABEL", "try_experiment"]

#: The condition label of the simulated experiment (a prefix; made unique against the data's).
EXPERIMENT_LABEL = "planned"


def _label(existing, node):
    label = f"{EXPERIMENT_LABEL}: do({node})"
    while label in existing:
        label += "'"
    return label


def try_experiment(dataset, params, threshold, node, rows, *, before=None, callback=None) -> dict:
    """Simulate a hard intervention on ``node`` with the dataset's true SEM, refit, score both fits.

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
    callback : callable, optional
        The refit's progress callback (``CoLiDE.fit``'s).

    Returns
    -------
    dict
        ``rows``, ``label`` (the new condition), ``shd_before`` (the fit without the experiment),
        ``shd_after`` and ``A_after`` (the
        thresholded weights of the refit with the experiment, its target known).

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
    t = names.index(node)
    noise = (meta.get("config") or {}).get("noise", "gaussian")
    seed = np.random.SeedSequence([int(meta.get("seed", 0)), t, int(rows)])
    new = simulate_experiment(W_true, [t], int(rows), noise, noise_var=np.asarray(dataset.sigma_true, float) ** 2,
                              random_state=np.random.default_rng(seed))
    design = design_of(dataset)
    old_labels = list(design["conditions"]) if design["conditions"] is not None else ["obs"] * len(dataset.X)
    old_targets = dict(design["targets"] or {}) if design["conditions"] is not None else {"obs": []}
    label = _label(set(old_labels), node)
    X = np.vstack([dataset.X.to_numpy(dtype=float), new])
    labels = old_labels + [label] * int(rows)
    targets = {**old_targets, label: [node]}
    model = CoLiDE(**{**dict(params), "threshold": float(threshold)})
    if before is None:
        before = model.fit(dataset.X, conditions=design["conditions"], targets=design["targets"]).adjacency_
    after = model.fit(pd.DataFrame(X, columns=names), conditions=labels, targets=targets,
                      callback=callback).adjacency_
    B = np.asarray(dataset.B_true)
    return {"rows": int(rows), "label": label, "shd_before": int(evaluate(B, before)["shd"]),
            "shd_after": int(evaluate(B, after)["shd"]), "A_after": np.asarray(after, dtype=float)}
