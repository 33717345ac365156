"""Should I believe this graph? Model checks that need no ground truth, and edge-level evidence.

Conventions: data ``X`` has shape ``(n_samples, n_nodes)`` (the paper writes X as d x n); a graph
``A`` (or weights ``W``) has shape ``(n_nodes, n_nodes)`` and ``A[i, j] != 0`` means the edge
i -> j. Every check works on the data and a learned (thresholded, acyclic) graph only.

=====================  ===========================================================================
check                  what it computes
=====================  ===========================================================================
:func:`sortability`    varsortability and R^2-sortability of the data along the learned graph
                       (Reisach et al. 2021, 2023): is the learned order "increasing variance"?
:func:`refit_compare`  the graph refitted on transformed data (standardised, or every column
                       rescaled by a random factor), compared edge by edge with the original one
:func:`scale_sensitivity`  edges that change over several random rescalings of the columns
:func:`ols_refit`      the learned graph's linear SEM refitted by least squares: weights, standard
                       errors, residuals and fitted values per node
:func:`residual_checks`  per node: normality (D'Agostino-Pearson), heteroscedasticity against the
                       fitted values (Koenker's Breusch-Pagan); across nodes: equal residual
                       variances (Brown-Forsythe / Levene), the "EV or NV" verdict
:func:`markov_check`   local Markov property: each node independent of its non-descendants given
                       its parents (Fisher-z tests of causal-learn), share rejected, against the
                       same share for random DAGs with as many edges
:func:`edge_evidence`  per edge: OLS weight and confidence interval, partial correlation given the
                       other parents, change of BIC (:func:`colide_core.solver.path.bic_score`) when the
                       edge is removed or reversed, bootstrap frequency
:func:`run_checks`     all of the above at once (what the Check page and the report show)
=====================  ===========================================================================

:func:`ols_refit` and :func:`residual_checks` are defined in :mod:`colide_core.evaluation.residuals`,
:func:`markov_check` (and :func:`implied_independences`) in :mod:`colide_core.evaluation.markov`;
this module re-exports them with their result classes and limits, and holds the rest.

Every result carries a short ``verdict`` and a plain-language ``summary``; these sentences hold
numbers only, never a node name, so they can be shown as they are (node names appear only in the
tables, which the callers escape where they meet HTML).

Work is bounded before it is spent: the Markov check runs at most ``max_tests`` tests per graph
(a random subset beyond that, drawn with ``random_state``) and at most :data:`MAX_RANDOM_GRAPHS`
random graphs; the rescaling checks at most :data:`MAX_REFITS` refits.

Long checks take a ``callback(done, total)`` (the convention of :mod:`colide_core.evaluation.stability`
and :func:`colide_core.solver.path.lambda_path`): it is called during every refit (at each solver
checkpoint), after every random graph of the Markov check and every 200 conditional-independence
tests; returning True stops the check, which then returns what it finished, marked
``stopped=True`` (a refit cut short is dropped, never compared: its graph would be a partial solve).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from colide_core.graph._dag import classify_edges, is_dag
from colide_core._params import InvalidParameterError, is_real
from colide_core._validation import check_adjacency, check_X
from colide_core.solver.path import bic_score
from colide_core.data.simulate import path_sortability, varsortability
from colide_core.evaluation._check_inputs import (_check_callback, _check_count, _data_and_graph,  # noqa: F401
                                                  _design_of_check)  # _design_of_check: render/report.py reads it here
# re-exported: the Check page, the dashboard, the report and the tests read them here
from colide_core.evaluation.markov import (MAX_RANDOM_GRAPHS, MAX_TESTS, MarkovCheck, implied_independences,
                                           markov_check)
from colide_core.evaluation.residuals import Refit, ResidualChecks, ols_refit, residual_checks

__all__ = [
    "MAX_RANDOM_GRAPHS", "MAX_REFITS", "MAX_TESTS",
    "Refit", "ols_refit", "r2_scores", "r2_sortability", "sortability", "Sortability",
    "GraphChange", "compare_graphs", "refit_compare", "scale_sensitivity", "ScaleSensitivity",
    "ResidualChecks", "residual_checks", "MarkovCheck", "markov_check", "implied_independences",
    "edge_evidence", "CheckReport", "run_checks",
]

#: Most refits of one rescaling check.
MAX_REFITS = 50
#: Varsortability (or R^2-sortability) along the learned graph above which the order is flagged.
SORTABLE_WARN = 0.8


# --------------------------------------------------------------------------------------------
# sortability (Reisach et al. 2021, 2023)
# --------------------------------------------------------------------------------------------

def r2_scores(X) -> np.ndarray:
    """R^2 of each node regressed (OLS, with intercept) on all the other nodes.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_nodes)

    Returns
    -------
    ndarray of shape (n_nodes,), values in [0, 1]
        ``1 - 1 / (Sigma_jj (Sigma^-1)_jj)`` with ``Sigma`` the covariance; unchanged by rescaling
        any column.

    Raises
    ------
    ValueError
        For data that :func:`colide_core._validation.check_X` refuses.

    Notes
    -----
    A singular covariance (a column that is an exact combination of others) is handled with the
    pseudo-inverse; such a node gets R^2 = 1.
    """
    values, _ = check_X(X, min_samples=3)
    C = np.cov(values, rowvar=False)
    diag = np.diag(C).copy()
    if np.any(diag <= 0):
        raise ValueError("X has a constant column: R^2 is undefined.")
    # scale-free: work on the correlation matrix
    s = np.sqrt(diag)
    R = C / np.outer(s, s)
    try:
        P = np.linalg.inv(R)
    except np.linalg.LinAlgError:
        P = np.linalg.pinv(R)
    with np.errstate(divide="ignore"):
        r2 = 1.0 - 1.0 / np.diag(P)
    r2 = np.where(np.isfinite(r2), r2, 1.0)
    return np.clip(r2, 0.0, 1.0)


def r2_sortability(X, W, tol=1e-9) -> float:
    """R^2-sortability of data ``X`` along the graph of ``W`` (Reisach et al., 2023).

    The share of directed paths (counted as in :func:`colide_core.data.simulate.varsortability`) that
    point from a node of smaller to a node of larger R^2 (:func:`r2_scores`); ties count one half.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_nodes)
    W : array-like of shape (n_nodes, n_nodes)
        ``W[i, j] != 0`` means i -> j.
    tol : float, default=1e-9

    Returns
    -------
    float in [0, 1], or nan if the graph has no edge.

    Notes
    -----
    A. G. Reisach, M. Tami, C. Seiler, S. Weichwald, S. Mogensen, "A Scale-Invariant Sorting
    Criterion to Find a Causal Order in Additive Noise Models", NeurIPS 2023. Unlike
    varsortability, it does not change when columns are rescaled.
    """
    values, _ = check_X(X, min_samples=3)
    Wa = check_adjacency(W, values.shape[1], "W", what="adjacency matrix")
    return path_sortability(r2_scores(values), Wa, tol=tol)


@dataclass(frozen=True)
class Sortability:
    """Varsortability and R^2-sortability of the data along a graph.

    Attributes
    ----------
    varsortability, r2_sortability : float in [0, 1] or nan (no edge)
    variances : ndarray of shape (n_nodes,)
        Marginal variances (ddof=0) in data units.
    r2 : ndarray of shape (n_nodes,)
        :func:`r2_scores`.
    scale_warning : bool
        True when varsortability > :data:`SORTABLE_WARN`: the learned order follows increasing
        variance, which a method that is not scale-invariant (CoLiDE) can produce from the units
        alone.
    verdict : str
    summary : str
    """

    varsortability: float
    r2_sortability: float
    variances: np.ndarray = field(repr=False)
    r2: np.ndarray = field(repr=False)
    scale_warning: bool
    verdict: str
    summary: str


def sortability(X, A) -> Sortability:
    """Varsortability and R^2-sortability of ``X`` along the learned graph ``A``, with a verdict.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_nodes)
    A : array-like of shape (n_nodes, n_nodes)
        The learned DAG, ``A[i, j] != 0`` meaning i -> j.

    Returns
    -------
    Sortability

    Raises
    ------
    ValueError
        For invalid data or a graph that is not a (d, d) DAG.

    Notes
    -----
    Reisach, Seiler, Weichwald (NeurIPS 2021) show that on simulated benchmarks the causal order
    is often the order of increasing marginal variance ("varsortability" near 1), which methods
    with a least-squares loss exploit; standardising the data removes that signal. Computed
    along the *learned* graph, a value near 1 means the learned edges mostly point towards
    larger variance: the order may come from the units of the columns rather than from the
    causal structure. Compare with the graph learned on standardised data (:func:`refit_compare`).
    """
    values, _, B = _data_and_graph(X, A)
    vs = varsortability(values, B)
    r2s = path_sortability(r2_scores(values), B)
    var = values.var(axis=0)
    if math.isnan(vs):
        return Sortability(vs, r2s, var, r2_scores(values), False, "no edges",
                           "The graph has no edge: there is no order to check.")
    warn = vs > SORTABLE_WARN
    if warn:
        verdict = "order follows variance"
        summary = (f"Varsortability along the learned graph is {vs:.2f}: {vs:.0%} of its directed paths "
                   "point from a smaller to a larger variance. CoLiDE is not scale-invariant, so this "
                   "order could be an artefact of the units; compare with the graph learned on "
                   "standardised data.")
    else:
        verdict = "order not driven by variance"
        summary = (f"Varsortability along the learned graph is {vs:.2f} (0.5 = unrelated to the "
                   "variances, 1 = the order of increasing variance): the learned order does not "
                   "simply follow the scale of the columns.")
    if not math.isnan(r2s):
        summary += (f" R²-sortability is {r2s:.2f} (scale-invariant; near 1 means the order follows "
                    "how well each node is predicted by the others).")
    return Sortability(vs, r2s, var, r2_scores(values), bool(warn), verdict, summary)


# --------------------------------------------------------------------------------------------
# refits after a transformation of the data
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class GraphChange:
    """Edge-by-edge comparison of a graph with a reference graph.

    Attributes
    ----------
    kept, reversed, removed, added : list of (int, int)
        Edges of the reference found in the same direction, found reversed, not found; edges
        of the new graph absent from the reference in both directions. Pairs are (i, j) for
        i -> j (for ``reversed``, the reference's direction).
    n_changed : int
        ``len(reversed) + len(removed) + len(added)`` (the SHD between the two graphs).
    """

    kept: list
    reversed: list
    removed: list
    added: list

    @property
    def n_changed(self) -> int:
        """Edges that differ: reversed + removed + added."""
        return len(self.reversed) + len(self.removed) + len(self.added)

    def table(self, names):
        """One row per edge of either graph: ``source``, ``target``, ``status``.

        ``status`` is "kept", "reversed" (written in the reference's direction), "removed" or
        "added". ``names`` are the node names (user strings, returned as they are).
        """
        rows = [(names[i], names[j], status) for status, edges in
                (("kept", self.kept), ("reversed", self.reversed), ("removed", self.removed),
                 ("added", self.added)) for i, j in edges]
        return pd.DataFrame(rows, columns=["source", "target", "status"])


def compare_graphs(A_ref, A_new) -> GraphChange:
    """Compare graph ``A_new`` with the reference ``A_ref`` edge by edge.

    Parameters
    ----------
    A_ref, A_new : array-like of shape (n_nodes, n_nodes)
        ``A[i, j] != 0`` means i -> j.

    Returns
    -------
    GraphChange

    Notes
    -----
    Uses :func:`colide_core.graph._dag.classify_edges` with the reference as the "truth" (the one
    edge-labelling implementation).
    """
    labels = classify_edges(A_new, A_ref)
    kept = [(i, j) for i, j, k in labels if k == "correct"]
    rev = [(j, i) for i, j, k in labels if k == "reversed"]
    removed = [(i, j) for i, j, k in labels if k == "missing"]
    added = [(i, j) for i, j, k in labels if k == "extra"]
    return GraphChange(kept, rev, removed, added)


def _fitted_graph(estimator, X, callback=None, conditions=None, targets=None, design=None):
    """The thresholded graph of a clone of ``estimator`` fitted on ``X``; None when ``callback`` stopped it.

    ``callback(done, 1)`` with ``done`` the fraction of the solve's iteration budget used
    (:func:`colide_core.progress_fraction`), at every solver checkpoint.
    """
    from sklearn.base import clone

    from colide_core.solver._common import progress_fraction

    model = clone(estimator)
    inner = None
    if callback is not None:
        budget = model.get_params().get("max_iter")

        def inner(stage, iteration, objective):
            try:
                frac = progress_fraction(budget, stage, iteration)
            except (TypeError, ValueError, IndexError):  # an order search past its last stage
                frac = 0.99
            return bool(callback(min(float(frac), 0.99), 1))

    if conditions is None and design is None:
        model.fit(X, callback=inner)
    else:  # the loose form is resolved by fit itself, a Design is taken as it is
        model.fit(X, conditions=conditions, targets=targets, callback=inner, design=design)
    if getattr(model, "stopped_", False):
        return None
    return np.asarray(model.adjacency_, dtype=float)


def _sub_callback(callback, offset, span, total):
    """``callback`` seen by a part of a longer run: ``done`` in [0, 1] of the part -> offset + done * span."""
    if callback is None:
        return None

    def inner(done, part_total):
        part_total = float(part_total) or 1.0
        return bool(callback(offset + span * float(done) / part_total, total))

    return inner


def refit_compare(X, estimator, A_ref, transform="standardize", *, factors=None,
                  conditions=None, targets=None, callback=None, design=None) -> GraphChange | None:
    """Refit ``estimator`` on transformed data and compare its graph with ``A_ref``.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_nodes)
        The data ``A_ref`` was learned from. Not modified.
    estimator : colide_core.CoLiDE
        Unfitted or fitted; a clone with the same parameters (λ, threshold, variant, prior
        knowledge) is fitted.
    A_ref : array-like of shape (n_nodes, n_nodes)
        The graph learned on ``X`` (``A[i, j] != 0`` means i -> j).
    transform : {"standardize", "rescale"}, default="standardize"
        "standardize": centre and scale every column to unit variance
        (:func:`colide_core.data.simulate.standardize`); "rescale": multiply column j by
        ``factors[j]``.
    factors : array-like of shape (n_nodes,), optional
        Positive finite factors for "rescale".
    conditions : array-like of shape (n_samples,), optional
        The rows' condition labels, passed to ``estimator.fit`` with ``targets``: the refit
        models the conditions as the original fit did (one intercept per condition, targeted
        nodes' rows masked from their own equation). The transform stays pooled: one scale per
        column for all conditions.
    targets : mapping, optional
        ``{label: nodes}`` of the known interventions (needs ``conditions``).
    callback : callable, optional
        ``callback(done, total)`` at every solver checkpoint (``done`` in [0, 1), ``total`` 1);
        returning True stops the refit.
    design : colide_core.data.design.Design, optional
        The conditions and targets in one object (validated once), instead of ``conditions`` and
        ``targets`` (:func:`colide_core.data.design.resolve_design`); passed to ``estimator.fit``.

    Returns
    -------
    GraphChange or None
        How the refitted graph differs from ``A_ref``; None when the callback stopped the
        refit (a partial solve is never compared).

    Raises
    ------
    ValueError
        For invalid data, an unknown ``transform`` or bad ``factors``; FloatingPointError from
        the solver; InvalidParameterError for a ``callback`` that is not callable.
    """
    from colide_core.data.simulate import standardize

    _check_callback(callback)
    values, names = check_X(X, min_samples=3)
    d = values.shape[1]
    design = _design_of_check(X, names, values.shape[0], d, design, conditions, targets)
    ref = check_adjacency(A_ref, d, "A_ref", what="adjacency matrix")
    if transform == "standardize":
        Z = standardize(values)
    elif transform == "rescale":
        f = np.asarray(factors, dtype=float) if factors is not None else None
        if f is None or f.shape != (d,) or not np.all(np.isfinite(f)) or np.any(f <= 0):
            raise ValueError(f"factors must be {d} positive finite numbers.")
        Z = values * f
    else:
        raise ValueError(f"transform must be 'standardize' or 'rescale', got {transform!r}.")
    frame = pd.DataFrame(Z, columns=names) if names is not None else Z
    fitted = _fitted_graph(estimator, frame, callback, design=design)
    return None if fitted is None else compare_graphs(ref, fitted)


@dataclass(frozen=True)
class ScaleSensitivity:
    """The graph after random rescalings of the columns, compared with the original graph.

    Attributes
    ----------
    factors : ndarray of shape (n_repeats, n_nodes)
        The factors each column was multiplied by.
    changes : list of GraphChange
        One per rescaling.
    edge_kept : ndarray of shape (n_nodes, n_nodes)
        For each edge of the original graph, the share of rescalings that kept it in the same
        direction (0 elsewhere).
    n_changed : ndarray of int of shape (n_repeats,)
    verdict, summary : str
    stopped : bool
        True when the callback stopped the check: only the first ``len(changes)`` rescalings
        were refitted (``factors`` holds those).
    """

    factors: np.ndarray
    changes: list
    edge_kept: np.ndarray
    n_changed: np.ndarray
    verdict: str
    summary: str
    stopped: bool = False


def scale_sensitivity(X, estimator, A_ref, *, n_repeats=3, low=0.1, high=10.0,
                      random_state=None, conditions=None, targets=None,
                      callback=None, design=None) -> ScaleSensitivity | None:
    """Refit after multiplying every column by a random factor; count the edges that change.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_nodes)
    estimator : colide_core.CoLiDE
        Its parameters are used for every refit (a clone is fitted).
    A_ref : array-like of shape (n_nodes, n_nodes)
        The graph learned on ``X``.
    n_repeats : int in [1, MAX_REFITS], default=3
    low, high : float, default=0.1 and 10
        Factors are log-uniform on ``[low, high]`` (0 < low <= high): a change of units.
    random_state : int, numpy Generator or None
    conditions, targets : optional
        The rows' condition labels and known targets, passed to every refit
        (:func:`refit_compare`).
    callback : callable, optional
        ``callback(done, n_repeats)`` at every solver checkpoint of every refit (``done`` counts
        the refits finished plus the fraction of the current one); returning True stops the
        check after the refits already finished.
    design : colide_core.data.design.Design, optional
        The conditions and targets in one object, instead of ``conditions`` and ``targets``.

    Returns
    -------
    ScaleSensitivity or None
        None when the callback stopped the check before its first refit finished; else
        ``stopped`` says whether every rescaling was refitted.

    Raises
    ------
    InvalidParameterError
        For a bad ``n_repeats``, ``low``, ``high`` or ``callback``; ValueError for bad data.

    Notes
    -----
    The CoLiDE score is not invariant to rescaling a column (the README says so; the
    least-squares loss and the threshold on |w| are in data units), so a different graph after
    rescaling is expected; the count says how much of the graph depends on the units.
    """
    n_repeats = _check_count(n_repeats, "n_repeats", 1, MAX_REFITS)
    _check_callback(callback)
    if not (is_real(low) and is_real(high) and 0 < low <= high < math.inf):
        raise InvalidParameterError(f"need 0 < low <= high < inf, got low={low!r}, high={high!r}.")
    values, names = check_X(X, min_samples=3)
    d = values.shape[1]
    design = _design_of_check(X, names, values.shape[0], d, design, conditions, targets)
    ref = check_adjacency(A_ref, d, "A_ref", what="adjacency matrix") != 0
    rng = np.random.default_rng(random_state)
    F = np.exp(rng.uniform(math.log(low), math.log(high), size=(n_repeats, d)))
    frame = pd.DataFrame(values, columns=names) if names else values
    changes = []
    for k, f in enumerate(F):
        ch = refit_compare(frame, estimator, ref, "rescale", factors=f, design=design,
                           callback=_sub_callback(callback, k, 1.0, n_repeats))
        if ch is None or (callback is not None and k + 1 < n_repeats and callback(float(k + 1), n_repeats)):
            if ch is not None:
                changes.append(ch)
            break
        changes.append(ch)
    stopped = len(changes) < n_repeats
    if not changes:
        return None
    n_repeats = len(changes)
    F = F[:n_repeats]
    kept = np.zeros((d, d))
    for ch in changes:
        for i, j in ch.kept:
            kept[i, j] += 1
    kept /= n_repeats
    n_changed = np.array([c.n_changed for c in changes], dtype=int)
    n_edges = int(ref.sum())
    mean = float(n_changed.mean())
    if n_changed.max() == 0:
        verdict = "scale-robust"
        summary = (f"After {n_repeats} random rescalings of the columns (factors between {low:g} and "
                   f"{high:g}) the graph was the same every time.")
    else:
        verdict = "scale-dependent"
        summary = (f"After {n_repeats} random rescalings of the columns (factors between {low:g} and "
                   f"{high:g}) on average {mean:.1f} edges changed (of {n_edges}; at most "
                   f"{int(n_changed.max())}): part of the graph depends on the units, because CoLiDE "
                   "is not scale-invariant.")
    if stopped:
        summary += " (Stopped early: only these rescalings were refitted.)"
    return ScaleSensitivity(F, changes, kept, n_changed, verdict, summary, stopped)


# --------------------------------------------------------------------------------------------
# edge evidence
# --------------------------------------------------------------------------------------------

def _local_bic(gram, m, n, j, parents):
    """Node j's BIC term given ``parents``: ``m log(RSS / m) + |parents| log n`` on its ``m`` unmasked
    rows, from their cross-products ``gram`` (each condition centred on its own means: an intercept
    per condition, which counts the same for every graph and so leaves ΔBIC alone). The regression
    is the library's one (:func:`colide_core.evaluation.refit.node_least_squares`)."""
    from colide_core.evaluation.refit import node_least_squares

    _, rss = node_least_squares(gram, parents, j)
    return m * math.log(max(rss / m, np.finfo(float).tiny)) + len(parents) * math.log(n)


def edge_evidence(X, A, *, W=None, frequency=None, level=0.95, conditions=None, targets=None,
                  design=None) -> pd.DataFrame:
    """Evidence for every edge of a DAG: refitted weight with a CI, partial correlation, ΔBIC.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_nodes)
    A : array-like of shape (n_nodes, n_nodes)
        The learned DAG, ``A[i, j] != 0`` meaning i -> j.
    W : array-like of shape (n_nodes, n_nodes), optional
        The learned weights (CoLiDE's ``W``), shown next to the refitted ones.
    frequency : array-like of shape (n_nodes, n_nodes), optional
        Bootstrap frequency of each edge i -> j in [0, 1]
        (:attr:`colide_core.evaluation.stability.BootstrapResult.frequency`).
    level : float in (0, 1), default=0.95
        Coverage of the confidence interval.
    conditions : array-like of shape (n_samples,), optional
        Each row's condition (:func:`colide_core.data.conditions.check_conditions`). The weights,
        intervals, partial correlations and ΔBIC then use an intercept per condition, and node j's
        terms only the rows whose condition does not intervene on j (the masked likelihood of
        :class:`colide_core.CoLiDE` with ``targets`` and of GIES): a target orients an edge, and
        the reversal's ΔBIC says so. None: one condition, as before.
    targets : mapping, optional
        ``{label: [node, ...]}`` (:func:`colide_core.data.conditions.check_targets`). Needs
        ``conditions``.
    design : colide_core.data.design.Design, optional
        The conditions and targets in one object (validated once), instead of ``conditions`` and
        ``targets`` (:func:`colide_core.data.design.resolve_design`).

    Returns
    -------
    pandas.DataFrame
        One row per edge, in row-major order: ``source``, ``target``, ``weight`` (CoLiDE's, when
        ``W`` is given), ``ols_weight``, ``ci_low``, ``ci_high`` (t interval of the OLS weight of
        the source in the target's regression on its parents), ``partial_corr`` (of source and
        target given the target's other parents), ``delta_bic_remove``, ``delta_bic_reverse``
        (BIC of the graph with the edge removed, or reversed, minus the graph's BIC; positive
        means the data prefer the edge as it is; NaN when reversing it makes a cycle),
        ``bootstrap_frequency`` (when ``frequency`` is given). Node names are returned as they are.

    Raises
    ------
    ValueError
        For invalid data, a graph that is not a DAG, or ``W`` / ``frequency`` of the wrong shape.

    Notes
    -----
    BIC as :func:`colide_core.solver.path.bic_score` (Gaussian, OLS refit, one variance per node, lower
    is better), so ``delta_bic_remove = n log(s2_without / s2_with) - log n`` for the target's
    residual variances. Reversals within a Markov equivalence class leave the BIC unchanged
    (score equivalence): a ΔBIC of 0 for a reversal means the data cannot orient that edge.
    With ``conditions``, node j's term is ``m_j log(RSS_j / m_j) + |Pa(j)| log n`` on its
    ``m_j`` unmasked rows, each condition centred on its own means: interventional data break
    score equivalence (Hauser and Bühlmann 2012), so an edge into or out of a target gets a
    reversal ΔBIC away from 0.
    """
    if not (is_real(level) and 0.0 < float(level) < 1.0):
        raise InvalidParameterError(f"level must be a number in (0, 1), got {level!r}.")
    values, names, B = _data_and_graph(X, A)
    n, d = values.shape
    if targets is not None and conditions is None and design is None:
        raise InvalidParameterError("targets need conditions (one label per row).")
    design = _design_of_check(X, names, n, d, design, conditions, targets)
    if design is not None:
        from colide_core.evaluation.residuals import _refit_by_condition

        from colide_core.evaluation.refit import masked_grams

        ref, keep = _refit_by_condition(values, names, B, design=design)
        grams, groups, kept_rows, _, _ = masked_grams(values, design.codes, keep)  # once: every ΔBIC reads them
        G = {j: grams[groups[j]] for j in range(d)}
        parents = {j: [int(k) for k in np.flatnonzero(B[:, j])] for j in range(d)}
        term = {j: _local_bic(G[j], kept_rows[j], n, j, parents[j]) for j in range(d)}
    else:
        ref = ols_refit(values, B)
        Xc = values - values.mean(axis=0)
        cov = Xc.T @ Xc / n
        base = bic_score(cov, n, B)
    Wl = None if W is None else check_adjacency(W, d, "W", what="weight matrix")
    F = None if frequency is None else check_adjacency(frequency, d, "frequency", what="frequency matrix")
    q = (1.0 + float(level)) / 2.0
    rows = []
    for i, j in zip(*np.nonzero(B)):
        i, j = int(i), int(j)
        t = stats.t.ppf(q, ref.dof[j])
        b, s = ref.W[i, j], ref.se[i, j]
        others = [int(k) for k in np.flatnonzero(B[:, j]) if k != i]
        idx = [i, j] + others
        if design is not None:  # j's unmasked rows, centred per condition
            sub = G[j][np.ix_(idx, idx)] / kept_rows[j]
        else:
            sub = cov[np.ix_(idx, idx)]
        try:
            P = np.linalg.inv(sub)
            pc = float(-P[0, 1] / math.sqrt(P[0, 0] * P[1, 1]))
        except (np.linalg.LinAlgError, ValueError):
            pc = math.nan
        Bm = B.copy()
        Bm[i, j] = False
        if design is not None:  # only the terms of j (and i, on reversal) change
            without = _local_bic(G[j], kept_rows[j], n, j, others)
            d_remove = without - term[j]
            Bm[j, i] = True
            d_reverse = (without + _local_bic(G[i], kept_rows[i], n, i, parents[i] + [j]) - term[j] - term[i]
                         if is_dag(Bm) else math.nan)
        else:
            d_remove = bic_score(cov, n, Bm) - base
            Bm[j, i] = True
            d_reverse = bic_score(cov, n, Bm) - base if is_dag(Bm) else math.nan
        row = {"source": names[i], "target": names[j]}
        if Wl is not None:
            row["weight"] = float(Wl[i, j])
        row.update({"ols_weight": float(b), "ci_low": float(b - t * s), "ci_high": float(b + t * s),
                    "partial_corr": pc, "delta_bic_remove": float(d_remove),
                    "delta_bic_reverse": float(d_reverse)})
        if F is not None:
            row["bootstrap_frequency"] = float(F[i, j])
        rows.append(row)
    cols = ["source", "target"] + (["weight"] if Wl is not None else []) + [
        "ols_weight", "ci_low", "ci_high", "partial_corr", "delta_bic_remove", "delta_bic_reverse"] + (
        ["bootstrap_frequency"] if F is not None else [])
    return pd.DataFrame(rows, columns=cols)


# --------------------------------------------------------------------------------------------
# everything at once
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class CheckReport:
    """All checks of one fit (what the Check page and the HTML report show).

    Attributes
    ----------
    sortability : Sortability
    residuals : ResidualChecks
    markov : MarkovCheck
    evidence : pandas.DataFrame
        :func:`edge_evidence`.
    standardized : GraphChange or None
        The graph refitted on standardised data against the learned one (with an estimator).
    scale : ScaleSensitivity or None
        Random rescalings (with an estimator and ``n_rescale > 0``).
    node_names : list of str
    n_edges : int
    stopped : bool
        True when the callback of :func:`run_checks` stopped it: the Markov check and the
        rescalings are partial (their own ``stopped``), and a refit not finished is None.
    """

    sortability: Sortability
    residuals: ResidualChecks
    markov: MarkovCheck
    evidence: pd.DataFrame
    standardized: object
    scale: object
    node_names: list
    n_edges: int
    stopped: bool = False

    def verdicts(self) -> pd.DataFrame:
        """One row per check: ``check``, ``verdict``, ``summary`` (no node names inside)."""
        rows = [("Sortability", self.sortability.verdict, self.sortability.summary),
                ("Residuals (EV or NV)", self.residuals.verdict, self.residuals.summary),
                ("Markov check", self.markov.verdict, self.markov.summary)]
        if self.standardized is not None:
            ch = self.standardized
            rows.append(("Standardise and refit", f"{ch.n_changed} edges change",
                         f"Refitted on standardised data, {len(ch.kept)} of {self.n_edges} edges survive "
                         f"as they are, {len(ch.reversed)} are reversed, {len(ch.removed)} disappear and "
                         f"{len(ch.added)} are new."))
        if self.scale is not None:
            rows.append(("Scale sensitivity", self.scale.verdict, self.scale.summary))
        return pd.DataFrame(rows, columns=["check", "verdict", "summary"])


def run_checks(X, A, *, W=None, estimator=None, frequency=None, n_random=100, n_rescale=3, alpha=0.05,
               random_state=0, conditions=None, targets=None, callback=None, design=None) -> CheckReport:
    """Run every check of this module on one fit.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_nodes)
    A : array-like of shape (n_nodes, n_nodes)
        The learned DAG (thresholded), ``A[i, j] != 0`` meaning i -> j.
    W : array-like of shape (n_nodes, n_nodes), optional
        The learned weights, for the evidence table.
    estimator : colide_core.CoLiDE, optional
        The settings of the fit; with it the graph is refitted on standardised data and after
        ``n_rescale`` random rescalings (a few solves more).
    frequency : array-like of shape (n_nodes, n_nodes), optional
        Bootstrap edge frequencies.
    n_random : int, default=100
        Random DAGs of the Markov check.
    n_rescale : int, default=3
        Random rescalings (0 skips that check).
    alpha : float, default=0.05
    random_state : int, Generator or None, default=0
    conditions : array-like of shape (n_samples,), optional
        The rows' condition labels: residuals get one intercept per condition
        (:func:`residual_checks`), the Markov check runs on per-condition-centred data
        (:func:`markov_check`) and every refit models the conditions (:func:`refit_compare`).
    targets : mapping, optional
        ``{label: nodes}``, the known interventions (residuals skip a node's targeted rows and
        the refits mask them).
    callback : callable, optional
        ``callback(done, total)`` during the long parts: the Markov check counts as one unit
        and each refit (standardised, then each rescaling) as one, so ``total`` is
        ``1 + (1 + n_rescale if estimator else 0)``; returning True stops the run, which keeps
        what it finished (``stopped`` True). The quick checks (sortability, residuals, edge
        evidence) always run first.
    design : colide_core.data.design.Design, optional
        The conditions and targets in one object, instead of ``conditions`` and ``targets``:
        resolved once here (:func:`colide_core.data.design.resolve_design`) and passed to every
        check as it is.

    Returns
    -------
    CheckReport

    Raises
    ------
    ValueError
        As the individual checks; InvalidParameterError for a ``callback`` that is not callable.
    """
    _check_callback(callback)
    values, names, B = _data_and_graph(X, A)
    design = _design_of_check(X, names, values.shape[0], values.shape[1], design, conditions, targets)
    frame = pd.DataFrame(values, columns=names)
    rng = np.random.default_rng(random_state)
    seeds = rng.integers(0, 2**32, size=2)
    n_refits = (1 + (int(n_rescale) if n_rescale else 0)) if estimator is not None else 0
    total = 1 + n_refits
    sort = sortability(values, B)
    # the frame: tables name the nodes, not X0..
    resid = residual_checks(frame, B, alpha=alpha, design=design)
    evidence = edge_evidence(frame, B, W=W, frequency=frequency, design=design)
    markov = markov_check(frame, B, n_random=n_random, alpha=alpha, random_state=int(seeds[1]),
                          design=design, callback=_sub_callback(callback, 0.0, 1.0, total))
    stopped = markov.stopped
    std = scale = None
    if estimator is not None and not stopped:
        stopped = callback is not None and bool(callback(1.0, total))
        if not stopped:
            std = refit_compare(frame, estimator, B, "standardize", design=design,
                                callback=_sub_callback(callback, 1.0, 1.0, total))
            stopped = std is None
        if n_rescale and not stopped:
            stopped = callback is not None and bool(callback(2.0, total))
            if not stopped:
                scale = scale_sensitivity(frame, estimator, B, n_repeats=n_rescale, random_state=int(seeds[0]),
                                          design=design, callback=_sub_callback(callback, 2.0, float(n_rescale), total))
                stopped = scale is None or scale.stopped
    return CheckReport(
        sortability=sort, residuals=resid, markov=markov, evidence=evidence,
        standardized=std, scale=scale, node_names=list(names), n_edges=int(B.sum()), stopped=bool(stopped),
    )
