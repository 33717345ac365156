"""Do the variables' scales carry a prediction? A rule that does not see the truth, and the
scale-free alternative beside it (GES + IDA).

CoLiDE's score is not scale-invariant: on raw data whose marginal variances grow along the causal
order (high *varsortability*, Reisach, Seiler and Weichwald 2021) it finds the order from the
scales, and its intervention predictions are then far better than regression's. Once every column
is standardised that signal is gone, CoLiDE's graph is mostly wrong, and its prediction is no
better than regression, while GES + IDA (scale-free: a BIC search over equivalence classes, then
local IDA) is the better learner. docs/predict.md measures both, and how well this rule picks.

:func:`scale_verdict` reads only the data and the learned graph:

(a) the data are **standardised** (every column's variance within :data:`STANDARDISED_RTOL` of 1,
    population or sample variance, or the last transform applied was a standardisation): the
    scales carry nothing;
(b) otherwise the learned graph's varsortability
    (:func:`colide_core.data.sortability.varsortability`: the share of its directed paths along
    which the marginal variance increases) below :data:`VARSORTABILITY_THRESHOLD` says its order
    is not the variance order, so the scales do not carry it either.

:func:`ges_ida_cpdag` and :func:`ida_prediction` give the scale-free answer for the same
intervention (a set of possible shifts per node, one per DAG parent set the class allows).

Conventions: ``X`` has shape ``(n_samples, n_nodes)`` (the paper writes d x n);
``W[i, j] != 0`` means i -> j.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from colide_core._params import InvalidParameterError
from colide_core._validation import check_X, node_index

__all__ = ["STANDARDISED_RTOL", "VARSORTABILITY_THRESHOLD", "RECOMMENDATIONS", "ScaleVerdict", "is_standardised",
           "scale_verdict", "ges_ida_cpdag", "IDAPrediction", "ida_prediction"]

#: Relative distance from 1 within which every column's variance counts as standardised.
STANDARDISED_RTOL = 1e-6
#: Learned-graph varsortability below which the scales are said not to carry the result; chosen by
#: measurement in ``benchmarks/bench_predict.py`` (docs/predict.md, "The page's recommendation").
VARSORTABILITY_THRESHOLD = 0.7
#: What :func:`scale_verdict` can recommend: CoLiDE's plug-in prediction or GES + IDA's.
RECOMMENDATIONS = ("colide", "ges_ida")
_STANDARDISE = ("standardize", "standardise")


def _last_kind(transforms) -> str | None:
    steps = list(transforms or ())
    if not steps:
        return None
    last = steps[-1]
    kind = last.get("kind") if isinstance(last, dict) else last
    return str(kind).lower() if kind is not None else None


def is_standardised(X, *, transforms=(), rtol=STANDARDISED_RTOL) -> bool:
    """Whether the data are standardised: their scales carry no order.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_nodes)
        The data (not modified).
    transforms : sequence of dict or str, optional
        The transform steps applied to the data, oldest first (``Dataset.meta["transform"]``,
        :func:`colide_core.data.transforms.transform_step` records, or their kinds). The data
        count as standardised when the last one is ``"standardize"``.
    rtol : float, default=STANDARDISED_RTOL
        Relative tolerance of "variance 1" (population or sample variance, so either
        convention of standardising is recognised).

    Returns
    -------
    bool
        True when the scales carry no order: a standardisation recorded last, or unit variances.

    Raises
    ------
    ValueError
        For data that are not a finite 2-D matrix of at least 2 rows.
    InvalidParameterError
        For a negative or non-finite ``rtol``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x0 = rng.normal(size=200); X = np.column_stack([x0, 3 * x0 + rng.normal(size=200)])
    >>> is_standardised(X), is_standardised((X - X.mean(0)) / X.std(0))
    (False, True)
    >>> is_standardised(X, transforms=[{"kind": "standardize"}])
    True
    """
    values, _ = check_X(X, min_features=1, copy=False)
    if not (isinstance(rtol, (int, float)) and math.isfinite(rtol) and rtol >= 0):
        raise InvalidParameterError(f"rtol must be a finite number >= 0, got {rtol!r}.")
    if _last_kind(transforms) in _STANDARDISE:
        return True
    return any(bool(np.all(np.abs(values.var(axis=0, ddof=ddof) - 1.0) <= rtol)) for ddof in (0, 1))


@dataclass(frozen=True)
class ScaleVerdict:
    """Whether the variables' scales carry a CoLiDE result, and what to trust instead.

    Attributes
    ----------
    scale_carries : bool
        True when the data are not standardised and the learned graph follows the variance order
        (varsortability at least :attr:`threshold`).
    varsortability : float
        The learned graph's varsortability on the data, in [0, 1]; nan for a graph without edges.
    standardised : bool
        :func:`is_standardised` of the data.
    reason : str
        One sentence for users, naming standardisation or varsortability.
    recommendation : {"colide", "ges_ida"}
        CoLiDE's plug-in prediction when the scales carry it, else GES + IDA's.
    threshold : float
        The varsortability threshold used.
    """

    scale_carries: bool
    varsortability: float
    standardised: bool
    reason: str
    recommendation: str
    threshold: float


def scale_verdict(X, W, *, transforms=(), threshold=VARSORTABILITY_THRESHOLD) -> ScaleVerdict:
    """Say, without the truth, whether the variables' scales carry CoLiDE's result on ``X``.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_nodes)
        The data the graph was learned from (not modified).
    W : array-like of shape (n_nodes, n_nodes)
        The learned graph (weights or 0/1), ``W[i, j] != 0`` meaning i -> j.
    transforms : sequence of dict or str, optional
        The transform steps applied to the data (:func:`is_standardised`).
    threshold : float in (0, 1], default=VARSORTABILITY_THRESHOLD
        Varsortability below which the scales are said not to carry the graph's order.

    Returns
    -------
    ScaleVerdict

    Raises
    ------
    ValueError
        For data that are not finite, or a ``W`` of another size.
    InvalidParameterError
        For a threshold outside (0, 1].

    Notes
    -----
    Varsortability: Reisach, Seiler and Weichwald, "Beware of the Simulated DAG!", NeurIPS 2021,
    Definition 3.1 (:func:`colide_core.data.sortability.varsortability`). The threshold and what
    the rule buys are measured in ``benchmarks/bench_predict.py`` (docs/predict.md).

    Examples
    --------
    A chain 0 -> 1 -> 2 whose variances grow along it (1, 5, 46), then the same data standardised:

    >>> rng = np.random.default_rng(0)
    >>> x0 = rng.normal(size=500); x1 = 2 * x0 + rng.normal(size=500); x2 = 3 * x1 + rng.normal(size=500)
    >>> X = np.column_stack([x0, x1, x2]); W = np.array([[0, 2.0, 0], [0, 0, 3.0], [0, 0, 0]])
    >>> v = scale_verdict(X, W)
    >>> v.scale_carries, v.varsortability, v.recommendation
    (True, 1.0, 'colide')
    >>> s = scale_verdict((X - X.mean(0)) / X.std(0), W)
    >>> s.scale_carries, s.standardised, s.recommendation
    (False, True, 'ges_ida')
    """
    from colide_core.data.sortability import varsortability

    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
        raise InvalidParameterError(f"threshold must be a number in (0, 1], got {threshold!r}.")
    values, _ = check_X(X, min_features=1, copy=False)
    standardised = is_standardised(values, transforms=transforms)
    vs = varsortability(values, np.asarray(W, dtype=float))
    if standardised:
        carries = False
        reason = ("The data are standardised (every column has variance 1), so the variables' scales carry no "
                  "causal order: on such data CoLiDE's prediction is no better than regression's, and GES + IDA, "
                  "which does not use the scales, is the better guide (docs/predict.md).")
    elif math.isnan(vs):
        carries = False
        reason = ("The learned graph has no edge, so it predicts that nothing moves; GES + IDA, which does not use "
                  "the variables' scales, is the better guide (docs/predict.md).")
    elif vs < threshold:
        carries = False
        reason = (f"The learned graph's varsortability is {vs:.2f}: the variance increases along only {vs:.0%} of "
                  f"its directed paths (below {threshold:g}), so the variables' scales do not carry its order, and "
                  "GES + IDA, which does not use them, is the better guide (docs/predict.md).")
    else:
        carries = True
        reason = (f"The learned graph's varsortability is {vs:.2f}: the variance increases along {vs:.0%} of its "
                  "directed paths, so the variables' scales carry much of CoLiDE's result. That is a real signal "
                  "only if the units are meaningful; if they are arbitrary, standardise the data and compare with "
                  "GES + IDA (docs/predict.md).")
    return ScaleVerdict(scale_carries=carries, varsortability=float(vs), standardised=standardised, reason=reason,
                        recommendation="colide" if carries else "ges_ida", threshold=float(threshold))


def ges_ida_cpdag(X, *, conditions=None, lambda_value=0.5, callback=None):
    """GES's CPDAG of the data, each condition centred on its own means first.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_nodes)
        The data (not modified).
    conditions : array-like of shape (n_samples,), optional
        Each row's condition: a shift of a condition's means is removed before the search, as
        CoLiDE with conditions removes it with one intercept per condition.
    lambda_value : float, default=0.5
        causal-learn's BIC penalty (:func:`colide_core.evaluation.ida.ges_cpdag`).
    callback : callable, optional
        ``callback(done, total)``: called with ``(0, 1)`` before the search and ``(1, 1)`` after
        it. causal-learn's search reports nothing and cannot be stopped from inside: a caller
        that must stop it runs this function in a process of its own (the dashboard's jobs do,
        ``dashboard.infra.workers.in_worker``). Its return value is not read.

    Returns
    -------
    ndarray of shape (n_nodes, n_nodes), dtype int8
        The CPDAG in gadjid's coding (1: directed, 2 both ways: undirected).

    Raises
    ------
    MissingExtraError
        (an ImportError) Without causal-learn.
    ValueError
        For invalid data or labels.
    """
    from colide_core.evaluation.ida import ges_cpdag

    values, _ = check_X(X, min_features=1)
    if conditions is not None:
        from colide_core.data.conditions import centre_by_condition

        values = centre_by_condition(values, conditions)
    if callback is not None:
        callback(0, 1)
    C = ges_cpdag(values, lambda_value=lambda_value)
    if callback is not None:
        callback(1, 1)
    return C


@dataclass(frozen=True)
class IDAPrediction:
    """Local IDA's possible shifts of every node under one intervention.

    Attributes
    ----------
    node : str or int
        The intervened node (its name when the data are a DataFrame).
    delta : float
        How far the intervention moves the node from its reference mean (data units).
    shifts : ndarray of shape (n_sets, n_nodes)
        The possible shifts of every node (data units), one row per admissible parent set.
    table : pandas.DataFrame
        Indexed by node: ``ida_shift`` (the mean of the possible shifts, data units), ``ida_low``
        and ``ida_high`` (their range), the same three in the node's reference standard
        deviations (``ida_shift_sd``, ``ida_low_sd``, ``ida_high_sd``).
    """

    node: object
    delta: float
    shifts: np.ndarray
    table: pd.DataFrame

    @property
    def identified(self) -> bool:
        """True when the class allows one parent set of the node: every shift is a number."""
        return len(self.shifts) == 1


def _reference(n, conditions, reference):
    if conditions is None:
        if reference is not None:
            raise InvalidParameterError("reference needs conditions.")
        return np.ones(n, dtype=bool)
    labels = np.asarray(conditions, dtype=object)
    if labels.shape != (n,):
        raise ValueError(f"conditions must have one label per row ({n}), got shape {labels.shape}.")
    ref = labels[0] if reference is None else reference
    rows = labels == ref
    if not rows.any():
        raise InvalidParameterError(f"reference {str(ref)[:40]!r} is not one of the conditions.")
    return rows


def ida_prediction(C, X, *, do=None, shift=None, conditions=None, reference=None) -> IDAPrediction:
    """The possible shifts of every node under ``do(x = v)`` or a shift of x, by local IDA.

    Parameters
    ----------
    C : array-like of shape (n_nodes, n_nodes)
        A CPDAG in gadjid's coding (:func:`ges_ida_cpdag`, or
        :func:`colide_core.evaluation._metrics.cpdag_from_dag` of a DAG).
    X : array-like or DataFrame of shape (n_samples, n_nodes)
        The data (not modified); the covariance is computed within conditions.
    do : dict of {node: float}, optional
        One node set to a value (data units).
    shift : dict of {node: float}, optional
        Instead: one node's mean moved by a value (data units).
    conditions : array-like of shape (n_samples,), optional
        Each row's condition; the reference means are the first condition's (or ``reference``'s).
    reference : object, optional
        The condition whose means the intervention starts from (as
        :func:`colide_core.evaluation.interventions.intervention_table`).

    Returns
    -------
    IDAPrediction

    Raises
    ------
    InvalidParameterError
        For not exactly one intervened node, a value that is not finite, an unknown node or
        reference.
    ValueError
        As :func:`colide_core.evaluation.ida.ida`.

    Notes
    -----
    Maathuis, Kalisch and Buehlmann (2009), local IDA: each admissible parent set P of x gives
    the effect of x on y as the coefficient of x in the regression of y on x and P; the shift of
    y is that effect times ``delta`` (a linear model: a do of x moves y's mean by the total
    effect times x's move from its mean).

    Examples
    --------
    The undirected chain 0 -- 1 -- 2 with x0 = e0, x1 = 2 x0 + e1, x2 = 3 x1 + e2: shifting x1 by
    1 moves x2 by 3 if x1 causes x2, by 0 if x2 causes x1; the CPDAG allows both.

    >>> rng = np.random.default_rng(0)
    >>> x0 = rng.normal(size=5000); x1 = 2 * x0 + rng.normal(size=5000); x2 = 3 * x1 + rng.normal(size=5000)
    >>> C = np.array([[0, 2, 0], [2, 0, 2], [0, 2, 0]])
    >>> p = ida_prediction(C, np.column_stack([x0, x1, x2]), shift={1: 1.0})
    >>> p.table.loc[2, ["ida_low", "ida_high"]].round(1).tolist(), len(p.shifts)
    ([0.0, 3.0], 3)
    """
    from colide_core.evaluation.ida import ida

    if bool(do) == bool(shift) or len(do or shift) != 1:
        raise InvalidParameterError("give one intervened node: do={node: value} or shift={node: delta}.")
    values, names = check_X(X, min_features=1, copy=False)
    n, d = values.shape
    (key, v), = (do or shift).items()
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
        raise InvalidParameterError(f"the intervention's value must be a finite number, got {v!r}.")
    x = node_index(key, names, d)
    rows = _reference(n, conditions, reference)
    mu = values[rows].mean(axis=0)
    sd = values[rows].std(axis=0, ddof=1) if rows.sum() > 1 else np.full(d, np.nan)
    delta = float(v) - float(mu[x]) if do else float(v)
    result = ida(C, values, x, conditions=conditions)
    shifts = result.effects * delta
    sd_or_nan = np.where(sd > 0, sd, np.nan)
    mean, low, high = shifts.mean(axis=0), shifts.min(axis=0), shifts.max(axis=0)
    table = pd.DataFrame({"ida_shift": mean, "ida_low": low, "ida_high": high, "ida_shift_sd": mean / sd_or_nan,
                          "ida_low_sd": low / sd_or_nan, "ida_high_sd": high / sd_or_nan},
                         index=pd.Index(names if names is not None else list(range(d)), name="node"))
    return IDAPrediction(node=names[x] if names is not None else x, delta=delta, shifts=shifts, table=table)
