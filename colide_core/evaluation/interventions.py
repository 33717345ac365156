"""What an intervention would do: predicted means of every node under ``do`` and shift
interventions, from a fitted linear SEM, with bootstrap intervals, next to what regression
("seeing") would predict.

The model is the linear SEM CoLiDE fits: with row vectors, ``x = x W + c + e`` (``W[i, j] != 0``
means i -> j, ``c`` the intercepts, ``e`` the exogenous noise of mean 0), so the mean is
``mu = c (I - W)^-1``. Interventions act on that system (Pearl 2009, ch. 3; the same
structural computation as DoWhy's ``gcm.interventional_samples`` and CausalNex's
``do_intervention``, in closed form for the means of a linear SEM):

* ``do={t: v}`` (a hard intervention): node t's equation is replaced by ``x_t = v``, i.e. the
  column t of ``W`` is cut and ``c_t = v``;
* ``shift={t: delta}`` (a soft, additive intervention): ``c_t += delta``; every descendant j moves
  by ``delta`` times the total effect ``[(I - W)^-1]_{t j}``.

The associational prediction ("seeing") regresses each node on the intervened one in the
observational rows: ``E[x_j | x_t = v] - E[x_j] = cov(x_j, x_t) / var(x_t) (v - E[x_t])``. It
equals the causal prediction only when nothing confounds t and j and j does not cause t.

Conventions: data ``X`` has shape ``(n_samples, n_nodes)`` (the paper writes d x n).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from colide_core import defaults
from colide_core._params import InvalidParameterError, is_real
from colide_core._validation import check_X

__all__ = ["intervention_means", "InterventionPrediction", "predict_intervention", "intervention_table",
           "associational_shift", "refit_weights", "WEIGHTS"]

#: How the SEM's weights are taken from a fitted graph: ``"fit"`` (the fit's own, L1-shrunk
#: weights) or ``"refit"`` (least squares on each node's learned parents, :func:`refit_weights`).
WEIGHTS = defaults.PREDICT_WEIGHTS


def _node_index(node, names, d):
    if isinstance(node, (int, np.integer)) and not isinstance(node, bool):
        if 0 <= int(node) < d:
            return int(node)
    elif names is not None and str(node) in names:
        return names.index(str(node))
    raise InvalidParameterError(f"unknown node {str(node)[:60]!r}: give a node index in [0, {d}) or a node name.")


def _check_values(mapping, what, names, d):
    if mapping is None:
        return {}
    if not isinstance(mapping, dict):
        raise InvalidParameterError(f"{what} must be a dict {{node: value}}, got {type(mapping).__name__}.")
    out = {}
    for node, value in mapping.items():
        if not is_real(value) or not np.isfinite(float(value)):
            raise InvalidParameterError(f"{what}[{str(node)[:60]!r}] must be a finite number, got {value!r}.")
        out[_node_index(node, names, d)] = float(value)
    return out


def intervention_means(W, intercept, *, do=None, shift=None, node_names=None):
    """Means of every node of the linear SEM ``x = x W + c + e`` under an intervention.

    Parameters
    ----------
    W : array-like of shape (n_nodes, n_nodes)
        A DAG's weights, ``W[i, j] != 0`` meaning i -> j.
    intercept : array-like of shape (n_nodes,)
        ``c``: each node's intercept (data units).
    do : dict, optional
        ``{node: value}``: hard interventions (the node's equation replaced by the value).
    shift : dict, optional
        ``{node: delta}``: additive interventions on the node's intercept.
    node_names : sequence of str, optional
        To give nodes by name.

    Returns
    -------
    ndarray of shape (n_nodes,)
        The means ``c' (I - W')^-1`` of the intervened system.

    Raises
    ------
    InvalidParameterError
        For an unknown node, a value that is not a finite number, a node both set and shifted.
    ValueError
        If ``W`` is not square or has a cycle (``I - W`` singular).

    Examples
    --------
    A chain 0 -> 1 -> 2 with weights 2 and 3, intercepts 0: do(x0 = 1) moves x1 by 2, x2 by 6.

    >>> W = np.array([[0, 2.0, 0], [0, 0, 3.0], [0, 0, 0]])
    >>> intervention_means(W, np.zeros(3), do={0: 1.0}).tolist()
    [1.0, 2.0, 6.0]
    >>> intervention_means(W, np.zeros(3), do={1: 1.0}).tolist()
    [0.0, 1.0, 3.0]
    """
    A = np.array(W, dtype=float)
    d = A.shape[0]
    if A.ndim != 2 or A.shape != (d, d):
        raise ValueError(f"W must be a square (n_nodes, n_nodes) matrix, got shape {A.shape}.")
    c = np.array(intercept, dtype=float).reshape(-1)
    if c.shape != (d,) or not np.all(np.isfinite(c)) or not np.all(np.isfinite(A)):
        raise ValueError(f"intercept must be {d} finite numbers and W finite.")
    names = None if node_names is None else [str(n) for n in node_names]
    hard, soft = _check_values(do, "do", names, d), _check_values(shift, "shift", names, d)
    both = set(hard) & set(soft)
    if both:
        raise InvalidParameterError(f"node {sorted(both)[0]} is both set (do) and shifted: choose one.")
    for t, v in hard.items():
        A[:, t] = 0.0
        c[t] = v
    for t, delta in soft.items():
        c[t] += delta
    try:
        return np.linalg.solve((np.eye(d) - A).T, c)  # mu = c (I - W)^-1, as a column system
    except np.linalg.LinAlgError:
        raise ValueError("I - W is singular: W must be a DAG.") from None


def associational_shift(X, node, value, *, conditions=None, reference=None):
    """What regression on ``node`` predicts for every node when ``node`` is seen at ``value``.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_nodes)
    node : int or str
    value : float
        The value the node is seen at (data units).
    conditions : array-like of shape (n_samples,), optional
        Each row's condition: only the ``reference`` condition's rows are used (the observational
        data a regression would be fitted on).
    reference : str, optional
        The reference condition; default the first label.

    Returns
    -------
    ndarray of shape (n_nodes,)
        ``cov(x_j, x_t) / var(x_t) * (value - mean(x_t))`` per node j (``value - mean`` at t).
    """
    values, names = check_X(X)
    rows = _reference_rows(values.shape[0], conditions, reference)
    V = values[rows]
    t = _node_index(node, names, values.shape[1])
    if not is_real(value) or not np.isfinite(float(value)):
        raise InvalidParameterError(f"value must be a finite number, got {value!r}.")
    Vc = V - V.mean(axis=0)
    var = float(Vc[:, t] @ Vc[:, t])
    if var <= 0:
        raise ValueError(f"node {t} is constant in the reference rows: no regression on it.")
    return (Vc.T @ Vc[:, t]) / var * (float(value) - V[:, t].mean())


def _reference_rows(n, conditions, reference):
    if conditions is None:
        return np.ones(n, dtype=bool)
    from colide_core.data.conditions import check_conditions

    labels, codes = check_conditions(conditions, n)
    ref = labels[0] if reference is None else str(reference)
    if ref not in labels:
        raise InvalidParameterError(f"reference condition {ref[:60]!r} is not one of the conditions.")
    return codes == labels.index(ref)


@dataclass(frozen=True)
class InterventionPrediction:
    """Predicted effect of one intervention on every node.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per node: ``reference_mean`` and ``reference_sd`` (the reference condition's mean
        and standard deviation), ``predicted_mean``,
        ``shift`` (predicted minus reference, data units), ``shift_sd`` (in the node's reference
        standard deviations), ``low`` and ``high`` (the bootstrap interval of ``shift``, NaN
        without ``n_bootstrap``), ``associational_shift`` (what regression on the intervened
        node predicts, for ``do`` on one node and ``shift`` on one node; NaN otherwise).
    do, shift : dict
        The intervention, by node name.
    level : float
        Coverage of the intervals.
    n_bootstrap : int
        Refits behind the intervals (0: none).
    samples : ndarray of shape (n_bootstrap, n_nodes)
        The bootstrap shifts.
    weights : str
        How the SEM's weights were taken (:data:`WEIGHTS`); "" when the caller gave ``W``
        (:func:`intervention_table`).
    """

    table: pd.DataFrame
    do: dict
    shift: dict
    level: float
    n_bootstrap: int
    samples: np.ndarray
    weights: str = ""

    def describe(self) -> str:
        """The intervention in words, e.g. ``"do(Raf = 3.2)"`` or ``"Raf shifted by +1.5"`` (data units)."""
        parts = [f"do({k} = {v:.4g})" for k, v in self.do.items()]
        parts += [f"{k} shifted by {v:+.4g}" for k, v in self.shift.items()]
        return ", ".join(parts)


def _data_and_weights(X, W):
    """``(values, names, W)``: the data checked, names given (``X0..`` for an array), W of its size."""
    values, names = check_X(X)
    d = values.shape[1]
    W = np.asarray(W, dtype=float)
    if W.shape != (d, d):
        raise ValueError(f"X has {d} columns but the graph has {W.shape[0]} nodes.")
    return values, names or [f"X{j}" for j in range(d)], W


def refit_weights(W, X, *, conditions=None, targets=None):
    """Unpenalised weights on a learned graph: each node regressed on its parents by least squares.

    The L1 penalty that selects the graph also shrinks its weights towards 0; refitting each
    node's equation on the selected parents (the "relaxed" or post-selection least-squares fit,
    as in the relaxed lasso, Meinshausen 2007) removes that bias. With conditions, each condition
    is centred on its own means (one intercept per condition, as the fit), and node j's equation
    uses only the rows whose condition does not intervene on j (the masked likelihood of the fit
    with targets).

    Parameters
    ----------
    W : array-like of shape (n_nodes, n_nodes)
        The graph (``W[i, j] != 0`` means i -> j); only its support is used.
    X : array-like or DataFrame of shape (n_samples, n_nodes)
        Data in data units (not modified).
    conditions : array-like of shape (n_samples,), optional
        Each row's condition.
    targets : mapping, optional
        ``{condition: nodes}`` intervened on in that condition.

    Returns
    -------
    ndarray of shape (n_nodes, n_nodes)
        Least-squares weights on the support of ``W``, 0 elsewhere.

    Raises
    ------
    ValueError
        For data that do not match ``W``, or bad conditions/targets.

    Examples
    --------
    >>> import numpy as np
    >>> x0 = np.array([-1.0, 0.0, 1.0, 2.0]); X = np.column_stack([x0, 3 * x0 + 1])
    >>> refit_weights([[0, 0.5], [0, 0]], X).round(6).tolist()
    [[0.0, 3.0], [0.0, 0.0]]
    """
    from colide_core.data.conditions import centre_by_condition, condition_design

    values, names, W = _data_and_weights(X, W)
    n, d = values.shape
    Xc = centre_by_condition(values, conditions) if conditions is not None else values - values.mean(axis=0)
    if conditions is not None and targets:
        _, unmasked = condition_design(conditions, targets, n, node_names=names, n_nodes=d)
    else:
        unmasked = None
    out = np.zeros((d, d))
    for j in range(d):
        pa = np.flatnonzero(W[:, j])
        if pa.size:
            rows = slice(None) if unmasked is None else unmasked[:, j]
            out[pa, j] = np.linalg.lstsq(Xc[rows][:, pa], Xc[rows, j], rcond=None)[0]
    return out


def _check_weights(weights):
    if weights not in WEIGHTS:
        raise InvalidParameterError(f"weights must be one of {WEIGHTS}, got {str(weights)[:40]!r}.")
    return weights


def _plug_in(W, values, rows, do, shift, names):
    """Reference means, intercepts ``c = mu (I - W)`` from them, and the intervened means."""
    mu = values[rows].mean(axis=0)
    c = mu @ (np.eye(len(mu)) - W)
    return mu, intervention_means(W, c, do=do, shift=shift, node_names=names)


def predict_intervention(model, X, *, do=None, shift=None, conditions=None, reference=None, n_bootstrap=0,
                         level=0.9, random_state=None, callback=None, weights=defaults.PREDICT_WEIGHTS[0]) -> InterventionPrediction:
    """Predict every node's mean under an intervention, from a fitted CoLiDE model.

    Parameters
    ----------
    model : colide_core.CoLiDE
        Fitted (``adjacency_``, the thresholded DAG's weights, is the SEM used); with
        ``n_bootstrap`` it is cloned and refitted as it was fitted (the same settings).
    X : array-like or DataFrame of shape (n_samples, n_nodes)
        The data it was fitted on (data units): the reference means come from it.
    do, shift : dict, optional
        ``{node: value}`` hard interventions, ``{node: delta}`` additive ones (index or name).
        At least one.
    conditions : array-like of shape (n_samples,), optional
        The rows' conditions, as given to ``fit`` (with ``targets`` taken from the model):
        the reference means are the ``reference`` condition's (an intercept per condition), and
        the bootstrap resamples within conditions and refits with the design.
    reference : str, optional
        The condition the prediction starts from; default the first label.
    n_bootstrap : int, default=0
        Refits on rows resampled with replacement (within conditions), for the intervals.
    level : float in (0, 1), default=0.9
        Coverage of the percentile intervals.
    random_state : int or None
        Seeds the resampling.
    callback : callable, optional
        ``callback(done, total)`` after each refit; returning True stops (the intervals then use
        the refits done).
    weights : {"refit", "fit"}, default="refit"
        The SEM's weights: least squares on the learned parents (:func:`refit_weights`) or the
        fit's own (L1-shrunk), for the point prediction and every resample. Measured by
        ``benchmarks/bench_predict.py`` (``docs/predict.md``): the refit has the lower error on EV
        data (0.19x and 0.11x the regression baseline's RMSE at d = 10 and 20, against 0.20x and
        0.12x) and its 90 % intervals cover 90-96 % of the true shifts on EV data (77-85 % with the
        fit's weights); on NV data both are far from the truth, because the learned class is.

    Returns
    -------
    InterventionPrediction

    Raises
    ------
    InvalidParameterError
        For an unfitted model, no intervention, unknown nodes, bad numbers.
    ValueError
        For data that do not match the model.
    """
    from sklearn.base import clone

    W = getattr(model, "adjacency_", None)
    if W is None:
        raise InvalidParameterError("model must be a fitted CoLiDE (call fit first).")
    if not do and not shift:
        raise InvalidParameterError("give an intervention: do={node: value} or shift={node: delta}.")
    if not (is_real(level) and 0 < float(level) < 1):
        raise InvalidParameterError(f"level must be in (0, 1), got {level!r}.")
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)) or not 0 <= n_bootstrap <= 10_000:
        raise InvalidParameterError(f"n_bootstrap must be an integer in [0, 10000], got {n_bootstrap!r}.")
    _check_weights(weights)
    values, names, W = _data_and_weights(X, W)
    n, d = values.shape
    targets = getattr(model, "targets_", None)
    samples = np.empty((0, d))
    if n_bootstrap:
        rng = np.random.default_rng(random_state)
        labels = None if conditions is None else np.asarray(conditions, dtype=object)
        groups = [np.arange(n)] if labels is None else [np.flatnonzero(labels == lab)
                                                        for lab in dict.fromkeys(labels.tolist())]
        out = []
        for b in range(int(n_bootstrap)):
            idx = np.concatenate([rng.choice(g, size=g.size, replace=True) for g in groups])
            est = clone(model)
            if labels is None:
                est.fit(values[idx])
            else:
                est.fit(values[idx], conditions=labels[idx], targets=targets)
            ref_b = _reference_rows(idx.size, None if labels is None else labels[idx], reference)
            W_b = np.asarray(est.adjacency_, float)
            if weights == "refit":
                W_b = refit_weights(W_b, values[idx], conditions=None if labels is None else labels[idx],
                                    targets=targets)
            m_b, p_b = _plug_in(W_b, values[idx], ref_b, do, shift, names)
            out.append(p_b - m_b)
            if callback is not None and callback(b + 1, int(n_bootstrap)):
                break
        samples = np.asarray(out)
    if weights == "refit":
        W = refit_weights(W, values, conditions=conditions, targets=targets)
    pred = intervention_table(W, pd.DataFrame(values, columns=names), do=do, shift=shift, conditions=conditions,
                              reference=reference, samples=samples, level=level)
    return replace(pred, weights=weights)


def intervention_table(W, X, *, do=None, shift=None, conditions=None, reference=None, samples=None,
                       level=0.9) -> InterventionPrediction:
    """The plug-in prediction of an intervention from given weights (no fit): what
    :func:`predict_intervention` computes around its bootstrap, for a page that has the fit.

    Parameters
    ----------
    W : array-like of shape (n_nodes, n_nodes)
        A DAG's weights, ``W[i, j] != 0`` meaning i -> j (the thresholded fit).
    X : array-like or DataFrame of shape (n_samples, n_nodes)
    do, shift, conditions, reference, level
        As in :func:`predict_intervention`.
    samples : ndarray of shape (n_bootstrap, n_nodes), optional
        Bootstrap shifts, for the interval columns.

    Returns
    -------
    InterventionPrediction
    """
    if not do and not shift:
        raise InvalidParameterError("give an intervention: do={node: value} or shift={node: delta}.")
    values, names, W = _data_and_weights(X, W)
    n, d = values.shape
    rows = _reference_rows(n, conditions, reference)
    mu, pred = _plug_in(W, values, rows, do, shift, names)
    sd = values[rows].std(axis=0, ddof=1)
    shifts = pred - mu
    samples = np.empty((0, d)) if samples is None else np.asarray(samples, dtype=float).reshape(-1, d)
    alpha = (1 - float(level)) / 2
    low = np.quantile(samples, alpha, axis=0) if len(samples) else np.full(d, np.nan)
    high = np.quantile(samples, 1 - alpha, axis=0) if len(samples) else np.full(d, np.nan)
    seen = np.full(d, np.nan)
    single = {**(do or {}), **(shift or {})}
    if len(single) == 1:
        (node, v), = single.items()
        t = _node_index(node, names, d)
        value = float(v) if do else float(mu[t] + float(v))
        seen = associational_shift(values, t, value, conditions=conditions, reference=reference)
    table = pd.DataFrame({"reference_mean": mu, "reference_sd": sd, "predicted_mean": pred, "shift": shifts,
                          "shift_sd": np.divide(shifts, sd, out=np.full(d, np.nan), where=sd > 0),
                          "low": low, "high": high, "associational_shift": seen}, index=pd.Index(names, name="node"))
    by_name = lambda m: {names[_node_index(k, names, d)]: float(v) for k, v in (m or {}).items()}  # noqa: E731
    return InterventionPrediction(table=table, do=by_name(do), shift=by_name(shift), level=float(level),
                                  n_bootstrap=len(samples), samples=samples)
