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

The associational prediction ("seeing") regresses each node on the intervened one:
``E[x_j | x_t = v] - E[x_j] = cov(x_j, x_t) / var(x_t) (v - E[x_t])``, on the same rows and with the
same centring as the SEM's weights (every row, each condition centred on its own means), from the
same reference means. It equals the causal prediction only when nothing confounds t and j and j
does not cause t.

Intervals refit the estimator on rows resampled within conditions, drawn as
:func:`colide_core.evaluation.stability.bootstrap_edges` draws them (the one resampler,
``Design.resample``: the same rows for the same seed), the node names kept (so prior knowledge
given by name applies in every refit), the conditions and targets passed on, and the caller's
callback heard inside every refit.

Conventions: data ``X`` has shape ``(n_samples, n_nodes)`` (the paper writes d x n).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from sklearn.base import clone

from colide_core import defaults
from colide_core._params import InvalidParameterError, is_real
from colide_core._validation import check_X, node_index

__all__ = ["intervention_means", "InterventionPrediction", "predict_intervention", "intervention_table",
           "associational_shift", "refit_weights", "bootstrap_shifts", "weights_for", "check_intervention_size",
           "WEIGHTS", "MAX_SD"]

#: How the SEM's weights are taken from a fitted graph: ``"auto"`` (by the fit's variant,
#: :func:`weights_for`), ``"fit"`` (the fit's own, L1-shrunk weights) or ``"refit"`` (least squares
#: on each node's learned parents, :func:`refit_weights`).
WEIGHTS = defaults.PREDICT_WEIGHTS
#: An intervention further than this many of the node's standard deviations from its mean (``do``)
#: or a shift larger than this (``shift``) is refused: the prediction would overflow or mean nothing.
MAX_SD = 1e6
#: A value of magnitude below this times its node's scale (the reference mean's magnitude or the
#: standard deviation) is floating-point noise of the solve, shown as 0.
NOISE = 1e-12


def weights_for(variant) -> str:
    """The default SEM weights of a fit of ``variant``: the fit's own on NV, least squares otherwise.

    Parameters
    ----------
    variant : {"nv", "ev", "ls"}

    Returns
    -------
    {"fit", "refit"}

    Notes
    -----
    Measured in ``benchmarks/bench_predict.py`` (docs/predict.md, issue 52, 40 graphs a row): on NV
    data the fit's weights are as good as or better than the refit in five of six rows (the sixth
    within its interval); on EV data the least-squares refit halves the error.
    """
    return "fit" if str(variant) == "nv" else "refit"


def _check_values(mapping, what, names, d):
    if mapping is None:
        return {}
    if not isinstance(mapping, dict):
        raise InvalidParameterError(f"{what} must be a dict {{node: value}}, got {type(mapping).__name__}.")
    out = {}
    for node, value in mapping.items():
        try:
            number = float(value) if is_real(value) else float("nan")
        except OverflowError:  # an int beyond the float range, e.g. 10**400
            number = float("inf")
        if not np.isfinite(number):
            raise InvalidParameterError(f"{what}[{str(node)[:60]!r}] must be a finite number, got {str(value)[:40]}.")
        out[node_index(node, names, d)] = number
    return out


def check_intervention_size(do, shift, mean, sd, names):
    """Refuse an intervention further than :data:`MAX_SD` standard deviations from the data.

    Parameters
    ----------
    do, shift : dict or None
        ``{node: value}`` and ``{node: delta}`` (index or name; data units).
    mean, sd : ndarray of shape (n_nodes,)
        Each node's reference mean and standard deviation.
    names : list of str

    Raises
    ------
    InvalidParameterError
        For a value that is not a finite number, or ``|value - mean| > MAX_SD * sd`` (``do``),
        ``|delta| > MAX_SD * sd`` (``shift``), with a sentence naming the node and the bound.
    """
    d = len(names)
    for what, mapping in (("do", do), ("shift", shift)):
        for t, v in _check_values(mapping, what, names, d).items():
            far = abs(v - mean[t]) if what == "do" else abs(v)
            scale = sd[t] if sd[t] > 0 else max(abs(mean[t]), 1.0)
            if far > MAX_SD * scale:
                raise InvalidParameterError(
                    f"{'setting' if what == 'do' else 'shifting'} {names[t][:60]} by {far:.3g} is more than "
                    f"{MAX_SD:.0e} of its standard deviations ({scale:.3g}) away from its mean: a linear SEM says "
                    "nothing there (and the numbers would overflow). Give a value within that range.")


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
        If ``W`` is not square or has a directed cycle (any, also one with ``I - W`` invertible).

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
    from colide_core.graph._dag import is_dag

    if not is_dag(A):
        raise ValueError("W has a directed cycle: W must be a DAG.")
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


def associational_shift(X, node, value, *, conditions=None, reference=None, design=None):
    """What regression on ``node`` predicts for every node when ``node`` is seen at ``value``.

    The regression uses the same rows and centring as the SEM's weights (:func:`refit_weights`):
    every row, each condition centred on its own means, so seeing and doing differ only by the
    model, never by the data they read. It starts from the same point as the causal prediction:
    the ``reference`` condition's mean of the node.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_nodes)
    node : int or str
    value : float
        The value the node is seen at (data units).
    conditions : array-like of shape (n_samples,), optional
        Each row's condition: the slopes are those of the pooled within-condition covariance.
    reference : str, optional
        The reference condition (the starting mean); default the first label.
    design : colide_core.data.design.Design, optional
        The rows' conditions in one object (validated once), instead of ``conditions``
        (:func:`colide_core.data.design.resolve_design`; its targets are not used).

    Returns
    -------
    ndarray of shape (n_nodes,)
        ``cov(x_j, x_t) / var(x_t) * (value - mean_ref(x_t))`` per node j (``value - mean_ref`` at t),
        ``cov`` within conditions.

    Raises
    ------
    InvalidParameterError
        For an unknown node or a value that is not a finite number.
    ValueError
        If the node is constant within every condition.
    """
    values, names = check_X(X)
    design = _design_of(X, names, values.shape, design, conditions)
    rows = _reference_rows(values.shape[0], design, reference)
    t = node_index(node, names, values.shape[1])
    if not is_real(value) or not np.isfinite(float(value)):
        raise InvalidParameterError(f"value must be a finite number, got {value!r}.")
    Vc = _centred(values, design)
    var = float(Vc[:, t] @ Vc[:, t])
    if var <= 0:
        raise ValueError(f"node {t} is constant within every condition: no regression on it.")
    out = (Vc.T @ Vc[:, t]) / var * (float(value) - values[rows, t].mean())
    out[t] = float(value) - values[rows, t].mean()
    return out


def _design_of(X, names, shape, design=None, conditions=None, targets=None):
    """The design of this module's functions, resolved once (the model checks' resolution,
    ``_check_inputs._design_of_check``: nodes named ``names``, ``X``'s columns); None without conditions."""
    from colide_core.evaluation._check_inputs import _design_of_check

    return _design_of_check(X, names, shape[0], shape[1], design, conditions, targets)


def _centred(values, design):
    """``values`` centred on the mean of each condition (all rows one condition when None)."""
    if design is None:
        return values - values.mean(axis=0)
    from colide_core.data.conditions import centre_by_condition

    return centre_by_condition(values, design=design)


def _reference_rows(n, design, reference):
    """The rows of the ``reference`` condition of ``design`` (default its first label); all rows without."""
    if design is None:
        return np.ones(n, dtype=bool)
    labels = design.labels
    ref = labels[0] if reference is None else str(reference)
    if ref not in labels:
        raise InvalidParameterError(f"reference condition {ref[:60]!r} is not one of the conditions.")
    return design.codes == labels.index(ref)


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


def refit_weights(W, X, *, conditions=None, targets=None, design=None):
    """Unpenalised weights on a learned graph: each node regressed on its parents by least squares.

    The L1 penalty that selects the graph also shrinks its weights towards 0; refitting each
    node's equation on the selected parents (the "relaxed" or post-selection least-squares fit,
    as in the relaxed lasso, Meinshausen 2007) removes that bias. With conditions, each condition
    is centred on its own means (one intercept per condition, as the fit), and node j's equation
    uses only the rows whose condition does not intervene on j (the masked likelihood of the fit
    with targets).

    One implementation (:func:`colide_core.evaluation.refit.refit_sem`, shared with the model checks'
    refit and the BIC): one pass over the data forms each condition's cross-products, node j's
    normal equations sum those of the conditions that do not target it.

    Parameters
    ----------
    W : array-like of shape (n_nodes, n_nodes)
        The graph (``W[i, j] != 0`` means i -> j); only its support is used.
    X : array-like or DataFrame of shape (n_samples, n_nodes)
        Data in data units (not modified).
    conditions : array-like of shape (n_samples,), optional
        Each row's condition.
    targets : mapping, optional
        ``{condition: nodes}`` intervened on in that condition (ignored without ``conditions``).
    design : colide_core.data.design.Design, optional
        Both in one object (validated once), instead of ``conditions`` and ``targets``
        (:func:`colide_core.data.design.resolve_design`).

    Returns
    -------
    ndarray of shape (n_nodes, n_nodes)
        Least-squares weights on the support of ``W``, 0 elsewhere (the minimum-norm solution
        where a node's parents are collinear).

    Raises
    ------
    ValueError
        For data that do not match ``W``, or bad conditions/targets; ``design`` with either
        (``InvalidParameterError``) or for other data.

    Examples
    --------
    >>> import numpy as np
    >>> x0 = np.array([-1.0, 0.0, 1.0, 2.0]); X = np.column_stack([x0, 3 * x0 + 1])
    >>> refit_weights([[0, 0.5], [0, 0]], X).round(6).tolist()
    [[0.0, 3.0], [0.0, 0.0]]
    """
    from colide_core.evaluation.refit import refit_sem

    values, names, W = _data_and_weights(X, W)
    design = _design_of(X, names, values.shape, design, conditions,
                        targets if conditions is not None or design is not None else None)
    return refit_sem(values, W, design=design, node_names=names).W


def _check_weights(weights, variant=None):
    """The weights to use: ``weights`` checked, ``"auto"`` resolved by the fit's ``variant``."""
    if weights not in WEIGHTS:
        raise InvalidParameterError(f"weights must be one of {WEIGHTS}, got {str(weights)[:40]!r}.")
    return weights_for(variant) if weights == "auto" else weights


def _plug_in(W, values, rows, do, shift, names):
    """Reference means, intercepts ``c = mu (I - W)`` from them, and the intervened means."""
    mu = values[rows].mean(axis=0)
    c = mu @ (np.eye(len(mu)) - W)
    return mu, intervention_means(W, c, do=do, shift=shift, node_names=names)


def bootstrap_shifts(estimator, X, *, do=None, shift=None, conditions=None, targets=None, reference=None,
                     n_bootstrap=30, random_state=None, callback=None, weights="auto", design=None) -> np.ndarray:
    """The predicted shift of every node, refitted on ``n_bootstrap`` resamples of the rows.

    The resamples are :func:`colide_core.evaluation.stability.bootstrap_edges`'s: the same seed
    gives the same rows (within conditions when there are conditions), and each refit gets the
    node names (so prior knowledge given by name applies), the conditions and the targets.

    Parameters
    ----------
    estimator : colide_core.CoLiDE
        A configured (fitted or not) estimator; each resample fits a clone (any solver, TOPO
        included). Never modified.
    X : array-like or DataFrame of shape (n_samples, n_nodes)
        The data (data units; the paper writes d x n).
    do, shift : dict, optional
        The intervention (:func:`predict_intervention`); checked, with :data:`MAX_SD`, before any fit.
    conditions : array-like of shape (n_samples,), optional
        Each row's condition.
    targets : mapping, optional
        ``{condition: nodes}``, as given to ``fit``; needs ``conditions``.
    reference : str, optional
        The condition the prediction starts from; default the first label.
    n_bootstrap : int in [1, 10000], default=30
    random_state : None, int, SeedSequence or Generator
        Seeds the resampling, as ``bootstrap_edges``'s ``random_state``.
    callback : callable, optional
        ``callback(done, total)``: after each refit, and inside every refit at each of its
        checkpoints (``done`` then counts the refits finished). Returning True stops: a refit
        stopped midway is dropped, and the shifts of the refits done are returned.
    weights : {"auto", "refit", "fit"}, default="auto"
        The SEM's weights in each refit (:func:`predict_intervention`).
    design : colide_core.data.design.Design, optional
        The conditions and targets in one object (validated once), instead of ``conditions`` and
        ``targets`` (:func:`colide_core.data.design.resolve_design`): the same resamples, and each
        refit and its SEM weights take the design of its rows.

    Returns
    -------
    ndarray of shape (n_done, n_nodes)
        Each finished refit's predicted shift (data units), in resample order.

    Raises
    ------
    InvalidParameterError
        For no intervention, bad values or sizes, a bad ``n_bootstrap``, ``weights`` or callback.
    ValueError
        For bad data, conditions or targets; when every refit failed (the first error quoted).
    """
    from colide_core.evaluation.stability import (_bootstrap_rows, _checked_estimator, _fit_design, _frame,
                                                  _resampling_design, _rows_design, _seed_sequence)

    if not do and not shift:
        raise InvalidParameterError("give an intervention: do={node: value} or shift={node: delta}.")
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)) or not 1 <= n_bootstrap <= 10_000:
        raise InvalidParameterError(f"n_bootstrap must be an integer in [1, 10000], got {n_bootstrap!r}.")
    if callback is not None and not callable(callback):
        raise InvalidParameterError("callback must be callable.")
    weights = _check_weights(weights, getattr(estimator, "variant", None))
    values, names = check_X(X)
    frame_names = names
    names = names or [f"X{j}" for j in range(values.shape[1])]
    n, d = values.shape
    design = _resampling_design(frame_names, n, d, design, conditions, targets or None)  # once: passed down
    ref = _reference_rows(n, design, reference)
    check_intervention_size(do, shift, values[ref].mean(axis=0), values[ref].std(axis=0, ddof=1), names)
    _checked_estimator(estimator)
    draws = _bootstrap_rows(_seed_sequence(random_state), int(n_bootstrap), n, design)
    total = int(n_bootstrap)
    out, errors = [], []
    for b, rows in enumerate(draws):
        stop = []

        def hear(_stage, _iteration, _objective, done=b):
            if callback is not None and callback(done, total):
                stop.append(True)
                return True
            return False

        est = clone(estimator)
        sub = None if design is None else _rows_design(design, rows)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(_frame(values, rows, frame_names), callback=hear, **_fit_design(est, sub))
        except (ValueError, FloatingPointError, np.linalg.LinAlgError) as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
            est = None
        if stop:
            break
        if est is not None:
            W_b = np.asarray(est.adjacency_, float)
            if weights == "refit":
                W_b = refit_weights(W_b, values[rows], design=sub)
            m_b, p_b = _plug_in(W_b, values[rows], _reference_rows(rows.size, sub, reference), do, shift, names)
            out.append(p_b - m_b)
        if callback is not None and callback(b + 1, total):
            break
    if not out and errors:
        raise ValueError(f"Every bootstrap refit failed; the first error was: {errors[0]}")
    return np.asarray(out).reshape(-1, d)


def predict_intervention(model, X, *, do=None, shift=None, conditions=None, reference=None, n_bootstrap=0,
                         level=0.9, random_state=None, callback=None, weights="auto",
                         design=None) -> InterventionPrediction:
    """Predict every node's mean under an intervention, from a fitted CoLiDE model.

    Parameters
    ----------
    model : colide_core.CoLiDE
        Fitted (``adjacency_``, the thresholded DAG's weights, is the SEM used); with
        ``n_bootstrap`` it is cloned and refitted as it was fitted (the same settings, the node
        names, the conditions and its ``targets_``), by :func:`bootstrap_shifts`.
    X : array-like or DataFrame of shape (n_samples, n_nodes)
        The data it was fitted on (data units): the reference means come from it.
    do, shift : dict, optional
        ``{node: value}`` hard interventions, ``{node: delta}`` additive ones (index or name).
        At least one; a value further than :data:`MAX_SD` standard deviations is refused before
        any refit.
    conditions : array-like of shape (n_samples,), optional
        The rows' conditions, as given to ``fit`` (with ``targets`` taken from the model):
        the reference means are the ``reference`` condition's (an intercept per condition), and
        the bootstrap resamples within conditions and refits with the design.
    reference : str, optional
        The condition the prediction starts from; default the first label.
    n_bootstrap : int, default=0
        Refits on rows resampled with replacement (within conditions), for the intervals.
    level : float in (0, 1), default=0.9
        Coverage of the percentile intervals (of the shift).
    random_state : int or None
        Seeds the resampling.
    callback : callable, optional
        ``callback(done, total)`` after each refit and inside each (:func:`bootstrap_shifts`);
        returning True stops (the intervals then use the refits done).
    weights : {"auto", "refit", "fit"}, default="auto"
        The SEM's weights: least squares on the learned parents (:func:`refit_weights`) or the
        fit's own (L1-shrunk), for the point prediction and every resample; ``"auto"`` takes
        the fit's own on an NV fit and the refit otherwise (:func:`weights_for`). Measured by
        ``benchmarks/bench_predict.py`` (``docs/predict.md``): on NV data the fit's weights
        are as good as or better than the refit, on EV data the refit halves the error.
    design : colide_core.data.design.Design, optional
        The rows' conditions and targets in one object (validated once), instead of
        ``conditions`` (:func:`colide_core.data.design.resolve_design`): its targets are those
        the model was fitted with (the loose form takes them from the model's ``targets_``).
        Passed as it is to the bootstrap, the refit and the table.

    Returns
    -------
    InterventionPrediction
        Its ``weights`` is the weighting used (``"fit"`` or ``"refit"``).

    Raises
    ------
    InvalidParameterError
        For an unfitted model, no intervention, unknown nodes, bad numbers, an intervention
        beyond :data:`MAX_SD` standard deviations.
    ValueError
        For data that do not match the model; ``design`` with ``conditions``
        (``InvalidParameterError``) or of other data.
    """
    W = getattr(model, "adjacency_", None)
    if W is None:
        raise InvalidParameterError("model must be a fitted CoLiDE (call fit first).")
    if not do and not shift:
        raise InvalidParameterError("give an intervention: do={node: value} or shift={node: delta}.")
    if not (is_real(level) and 0 < float(level) < 1):
        raise InvalidParameterError(f"level must be in (0, 1), got {level!r}.")
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)) or not 0 <= n_bootstrap <= 10_000:
        raise InvalidParameterError(f"n_bootstrap must be an integer in [0, 10000], got {n_bootstrap!r}.")
    weights = _check_weights(weights, getattr(model, "variant", None))
    values, names, W = _data_and_weights(X, W)
    n, d = values.shape
    targets = getattr(model, "targets_", None)
    design = _design_of(X, names, values.shape, design, conditions,
                        targets if conditions is not None else None)  # once: passed down as it is
    ref = _reference_rows(n, design, reference)
    check_intervention_size(do, shift, values[ref].mean(axis=0), values[ref].std(axis=0, ddof=1), names)
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(values, columns=names)
    samples = np.empty((0, d))
    if n_bootstrap:
        samples = bootstrap_shifts(model, frame, do=do, shift=shift, design=design, reference=reference,
                                   n_bootstrap=int(n_bootstrap), random_state=random_state, callback=callback,
                                   weights=weights)
    if weights == "refit":
        W = refit_weights(W, values, design=design)
    pred = intervention_table(W, pd.DataFrame(values, columns=names), do=do, shift=shift, design=design,
                              reference=reference, samples=samples, level=level)
    return replace(pred, weights=weights)


def _denoise(x, scale):
    """``x`` with the entries below :data:`NOISE` times ``scale`` (per node) set to 0."""
    x = np.array(x, dtype=float)
    x[np.abs(x) < NOISE * scale] = 0.0
    return x


def intervention_table(W, X, *, do=None, shift=None, conditions=None, reference=None, samples=None,
                       level=0.9, design=None) -> InterventionPrediction:
    """The plug-in prediction of an intervention from given weights (no fit): what
    :func:`predict_intervention` computes around its bootstrap, for a page that has the fit.

    Shifts (and their intervals) below ``1e-12`` times their node's scale (the larger of its
    reference mean's magnitude and standard deviation) are floating-point noise of the solve and
    are returned as exactly 0, so a node the intervention does not move reads 0 in the table, the
    tooltips and the CSV.

    Parameters
    ----------
    W : array-like of shape (n_nodes, n_nodes)
        A DAG's weights, ``W[i, j] != 0`` meaning i -> j (the thresholded fit).
    X : array-like or DataFrame of shape (n_samples, n_nodes)
    do, shift, conditions, reference, level
        As in :func:`predict_intervention`.
    samples : ndarray of shape (n_bootstrap, n_nodes), optional
        Bootstrap shifts (data units), for the interval columns ``low`` and ``high``: the interval
        of the *shift*, not of the predicted mean.
    design : colide_core.data.design.Design, optional
        The rows' conditions in one object (validated once), instead of ``conditions``
        (its targets are not used here).

    Returns
    -------
    InterventionPrediction

    Raises
    ------
    InvalidParameterError
        For no intervention, unknown nodes, values that are not finite or lie beyond
        :data:`MAX_SD` standard deviations.
    ValueError
        For a W with a cycle or of the wrong size.
    """
    if not do and not shift:
        raise InvalidParameterError("give an intervention: do={node: value} or shift={node: delta}.")
    values, names, W = _data_and_weights(X, W)
    n, d = values.shape
    design = _design_of(X, names, values.shape, design, conditions)
    rows = _reference_rows(n, design, reference)
    sd = values[rows].std(axis=0, ddof=1)
    check_intervention_size(do, shift, values[rows].mean(axis=0), sd, names)
    mu, pred = _plug_in(W, values, rows, do, shift, names)
    scale = np.maximum(np.abs(mu), sd)
    shifts = _denoise(pred - mu, scale)
    pred = mu + shifts
    samples = np.empty((0, d)) if samples is None else np.asarray(samples, dtype=float).reshape(-1, d)
    alpha = (1 - float(level)) / 2
    low = _denoise(np.quantile(samples, alpha, axis=0), scale) if len(samples) else np.full(d, np.nan)
    high = _denoise(np.quantile(samples, 1 - alpha, axis=0), scale) if len(samples) else np.full(d, np.nan)
    seen = np.full(d, np.nan)
    single = {**(do or {}), **(shift or {})}
    if len(single) == 1:
        (node, v), = single.items()
        t = node_index(node, names, d)
        value = float(v) if do else float(mu[t] + float(v))
        seen = _denoise(associational_shift(values, t, value, design=design, reference=reference), scale)
    table = pd.DataFrame({"reference_mean": mu, "reference_sd": sd, "predicted_mean": pred, "shift": shifts,
                          "shift_sd": np.divide(shifts, sd, out=np.full(d, np.nan), where=sd > 0),
                          "low": low, "high": high, "associational_shift": seen}, index=pd.Index(names, name="node"))
    by_name = lambda m: {names[node_index(k, names, d)]: float(v) for k, v in (m or {}).items()}  # noqa: E731
    return InterventionPrediction(table=table, do=by_name(do), shift=by_name(shift), level=float(level),
                                  n_bootstrap=len(samples), samples=samples)
