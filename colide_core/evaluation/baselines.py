"""A small registry of DAG-learning methods with one call shape: ``fit(X) -> W``.

Conventions: data ``X`` has shape ``(n_samples, n_nodes)``; every method returns a weighted or binary
adjacency ``W`` of shape ``(n_nodes, n_nodes)`` with ``W[i, j] != 0`` meaning the edge i -> j, and
every returned ``W`` is a DAG.

Methods (the baselines of the CoLiDE paper, Saboksayr, Mateos and Tepper, ICLR 2024, Appendix D.5):

* ``"CoLiDE-EV"``, ``"CoLiDE-NV"``: :class:`colide_core.CoLiDE` with ``variant="ev"`` / ``"nv"``;
  ``W = CoLiDE(...).fit(X).adjacency_``.
* ``"DAGMA-linear"``: DAGMA's least-squares score (Bello, Aragam and Ravikumar, NeurIPS 2022) with the
  same log-det optimiser and schedule as CoLiDE: ``CoLiDE(variant="ls", ...)``.
* ``"SortNRegress"``: order the nodes by increasing marginal variance, then regress each node on its
  predecessors with an adaptive lasso chosen by BIC (scikit-learn ``LassoLarsIC``), as described by
  Reisach, Seiler and Weichwald (NeurIPS 2021).
* ``"GES"``: causal-learn's greedy equivalence search with the linear-Gaussian BIC score; its CPDAG is
  turned into one DAG of the equivalence class with causal-learn's ``pdag2dag``.
* ``"GIES"``: greedy interventional equivalence search (Hauser and Buehlmann, JMLR 2012) with the
  Gaussian BIC score and known intervention targets, PyPI ``gies`` (the ``baselines`` extra); its
  interventional essential graph is turned into one DAG of the class.

Data from several conditions (the experimental design): :func:`run_method` takes ``conditions``
(one label per row) and ``targets`` (``{label: [node, ...]}``), checked once by
:mod:`colide_core.data.conditions`, and passes them to the methods that use them
(``accepts_conditions``: the CoLiDE family and GIES). The others never pool the conditions
silently: by default they refuse them; with ``unused_design="centre"`` they run on the rows
centred within each condition (the targets unused), and :func:`design_use` says which of the
two a method gets, so that a table can label its rows.

Use :func:`run_method` (raises :class:`MethodError` on failure) or :func:`run_method_safe` (never
raises; returns a dict with the result or the error text).
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

import numpy as np

from colide_core.data.conditions import centre_by_condition
from colide_core.exceptions import MethodError, MissingExtraError, import_optional  # noqa: F401
from colide_core.graph._dag import is_dag
from colide_core.solver._estimator import CoLiDE
from colide_core._validation import check_adjacency, check_X

__all__ = [
    "METHODS",
    "MethodSpec",
    "MethodError",
    "run_method",
    "run_method_safe",
    "design_use",
    "DESIGN_USES",
    "sortnregress",
    "ges_dag",
    "gies_dag",
]


@dataclass(frozen=True)
class MethodSpec:
    """One registered method.

    Attributes
    ----------
    name : str
        Registry key, e.g. ``"CoLiDE-NV"``.
    fit : callable
        ``fit(X, **params) -> W``; ``X`` a float ndarray ``(n_samples, n_nodes)``, ``W`` an ndarray
        ``(n_nodes, n_nodes)`` with ``W[i, j] != 0`` meaning i -> j.
    defaults : Mapping[str, Any]
        Default parameters (read-only); :func:`run_method` overrides them with its keyword arguments.
    max_nodes : int or None
        Largest number of nodes the method is offered for (None: no limit).
    slow : bool
        True when the method scales badly with the number of nodes.
    description : str
        One line for a user interface.
    accepts_callback : bool
        Whether ``fit`` takes a ``callback(stage, iteration, objective)`` keyword for progress.
    accepts_conditions : bool
        Whether ``fit`` takes ``conditions`` (one label per row) and ``targets`` (``{label: tuple
        of node indices}``, checked) keywords: data from several conditions with known
        interventions.
    """

    name: str
    fit: Callable[..., np.ndarray]
    defaults: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    max_nodes: int | None = None
    slow: bool = False
    description: str = ""
    accepts_callback: bool = False
    accepts_conditions: bool = False


# --------------------------------------------------------------------------------------------------
# CoLiDE family
# --------------------------------------------------------------------------------------------------

def _colide_fit(variant):
    def fit(X, callback=None, conditions=None, targets=None, design=None, **params):
        model = CoLiDE(variant, **params)
        if conditions is None and design is None:
            model.fit(X, callback=callback)
        else:
            model.fit(X, conditions=conditions, targets=targets, callback=callback, design=design)
        return np.array(model.adjacency_, dtype=float)

    fit.__name__ = f"colide_{variant}_fit"
    fit.__doc__ = (
        f"Fit ``CoLiDE(variant={variant!r}, **params)`` on X (n_samples, n_nodes); return its "
        "``adjacency_`` (n_nodes, n_nodes), ``W[i, j] != 0`` meaning i -> j; the design as "
        "``conditions``/``targets`` or one ``design``."
    )
    return fit


def _colide_defaults():
    params = CoLiDE().get_params()
    params.pop("variant")
    return MappingProxyType(params)


# --------------------------------------------------------------------------------------------------
# SortNRegress
# --------------------------------------------------------------------------------------------------

def sortnregress(X, *, threshold=0.0) -> np.ndarray:
    """SortNRegress: variance ordering, then adaptive-lasso (BIC) parent selection.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_nodes)
        Data (raw scale: the method deliberately exploits marginal variances). Not modified.
    threshold : float, default=0.0
        Coefficients with ``|w| <= threshold`` are dropped (0 keeps every nonzero lasso coefficient, as
        the reference method does).

    Returns
    -------
    W : ndarray of shape (n_nodes, n_nodes)
        Regression weights, ``W[i, j] != 0`` meaning i -> j. Always a DAG (edges only go from lower
        to higher marginal variance).

    Raises
    ------
    ValueError
        If ``X`` is not 2-D real numbers with at least 2 rows, or holds NaN/Inf.

    Notes
    -----
    Reisach, Seiler and Weichwald (2021), "Beware of the Simulated DAG!", NeurIPS, Section 4: the
    nodes are sorted by increasing sample variance; node number ``k`` in that order is regressed on
    the first ``k`` nodes. Each regression is an adaptive lasso: the predictors are rescaled by the
    absolute ordinary-least-squares coefficients, the lasso path is fitted with
    :class:`sklearn.linear_model.LassoLarsIC` (``criterion="bic"``), and the coefficients are mapped
    back to the original scale. Implemented here with scikit-learn.
    """
    from sklearn.linear_model import LassoLarsIC, LinearRegression

    A, _ = check_X(X, min_samples=2, min_features=1)
    A -= A.mean(axis=0)
    n, d = A.shape
    order = np.argsort(A.var(axis=0), kind="stable")
    W = np.zeros((d, d))
    for k in range(1, d):
        preds = order[:k]
        target = order[k]
        y = A[:, target]
        Z = A[:, preds]
        ols = LinearRegression(fit_intercept=False).fit(Z, y)
        scale = np.abs(ols.coef_)
        if not np.any(scale > 0):
            continue
        lasso = LassoLarsIC(criterion="bic", fit_intercept=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # sklearn warns on degenerate noise-variance estimates
            lasso.fit(Z * scale, y)
        W[preds, target] = lasso.coef_ * scale
    W[np.abs(W) <= threshold] = 0.0
    return W


# --------------------------------------------------------------------------------------------------
# GES
# --------------------------------------------------------------------------------------------------

def ges_dag(X, *, maxP=None, lambda_value=0.5) -> np.ndarray:
    """Greedy equivalence search (causal-learn) with the linear-Gaussian BIC score, returned as a DAG.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_nodes)
        Data. Not modified.
    maxP : int or None, default=None
        Maximum number of parents per node in the search (causal-learn's ``maxP``; None: no limit).
    lambda_value : float, default=0.5
        BIC penalty weight per parameter, times ``log(n)`` (0.5 is the standard BIC).

    Returns
    -------
    W : ndarray of shape (n_nodes, n_nodes), values in {0, 1}
        ``W[i, j] == 1`` means i -> j; a DAG.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D real numbers with at least 2 rows, or holds NaN/Inf.
    MissingExtraError
        (an ``ImportError``) If causal-learn is not installed (``pip install
        'colide-dashboard[baselines]'``).

    Notes
    -----
    Calls :func:`causallearn.search.ScoreBased.GES.ges` with ``score_func="local_score_BIC"``
    (Chickering, 2002). GES returns a CPDAG ``G`` in causal-learn's endpoint coding
    (``G.graph[j, i] == 1`` and ``G.graph[i, j] == -1`` for i -> j; ``G.graph[i, j] == G.graph[j, i]
    == -1`` for an undirected i -- j). Undirected edges are oriented by causal-learn's ``pdag2dag``
    (Dor and Tarsi, 1992), which returns one DAG of the Markov equivalence class. So SHD-C of the
    result equals SHD-C of GES's CPDAG, whereas SHD, SID, TPR and FDR are those of that one member.
    The paper ran GES through py-causal (Tetrad) with ``maxDegree=5``; causal-learn's implementation
    and its ``maxP`` (a parent bound, not a degree bound) differ, so numbers need not match.
    """
    ges = import_optional("causallearn.search.ScoreBased.GES", "GES").ges
    pdag2dag = import_optional("causallearn.utils.PDAG2DAG", "GES").pdag2dag

    A, _ = check_X(X, min_samples=2, min_features=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        record = ges(A, score_func="local_score_BIC", maxP=maxP, lambda_value=float(lambda_value))
        G = pdag2dag(record["G"]).graph
    W = ((G.T == 1) & (G == -1)).astype(float)  # G[j, i] == 1 and G[i, j] == -1: i -> j
    return W


# --------------------------------------------------------------------------------------------------
# GIES
# --------------------------------------------------------------------------------------------------

def gies_dag(X, *, conditions=None, targets=None, node_names=None, lambda_value=0.5, design=None) -> np.ndarray:
    """Greedy interventional equivalence search (PyPI ``gies``), Gaussian BIC, known targets; a DAG.

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_nodes)
        Data. Not modified.
    conditions : array-like of shape (n_samples,), optional
        Each row's condition (text or integers), checked by
        :func:`colide_core.data.conditions.check_conditions`. None: one observational condition
        (GIES is then GES).
    targets : mapping, optional
        ``{label: [node, ...]}``: the nodes each condition intervenes on, by index, or by name when
        ``X`` is a DataFrame or ``node_names`` is given (:func:`colide_core.data.conditions.check_targets`).
        A condition not named has no target. Needs ``conditions``.
    node_names : sequence of str, optional
        The nodes' names, to give ``targets`` by name for an array ``X``.
    lambda_value : float, default=0.5
        Penalty per parameter, times ``log(n)`` (n all rows): 0.5 is the BIC score of Hauser and
        Buehlmann and of the ``gies`` package's default.
    design : colide_core.data.design.Design, optional
        The conditions and targets in one object (validated once), instead of ``conditions`` and
        ``targets`` (:func:`colide_core.data.design.resolve_design`).

    Returns
    -------
    W : ndarray of shape (n_nodes, n_nodes), values in {0, 1}
        ``W[i, j] == 1`` means i -> j; a DAG.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D real numbers with at least 2 rows, or holds NaN/Inf;
        ``lambda_value`` is not a finite number >= 0; or targets are given without conditions.
    ConditionsError
        (a ``ValueError``) For conditions or targets that cannot be used (an unknown node or
        condition, a node targeted in every row, a condition with too few rows, ...).
    MissingExtraError
        (an ``ImportError``) If the ``gies`` package is not installed (``pip install
        'colide-dashboard[baselines]'``).

    Notes
    -----
    Calls ``gies.fit(GaussIntL0Pen(data, I, lmbda=lambda_value * log(n)))`` with one data block
    per condition and its target list (Hauser and Buehlmann, "Characterization and greedy learning
    of interventional Markov equivalence classes of directed acyclic graphs", JMLR 13, 2012). The
    score centres each condition on its own mean (an intercept per condition) and fits node j's
    equation only on the conditions that do not target it, like CoLiDE with ``targets``. GIES
    returns an interventional essential graph (``A[i, j] != 0 and A[j, i] != 0``: an undirected
    edge); it is turned into one DAG of the class with ``gies.utils.pdag_to_dag`` (Dor and Tarsi,
    1992), so an undirected edge counts in SHD as one orientation of it, as for :func:`ges_dag`.
    """
    gies = import_optional("gies", "GIES")
    GaussIntL0Pen = import_optional("gies.scores.gauss_int_l0_pen", "GIES").GaussIntL0Pen
    pdag_to_dag = import_optional("gies.utils", "GIES").pdag_to_dag
    from colide_core.data.design import resolve_design

    A, names = check_X(X, min_samples=2, min_features=1)
    if node_names is not None:
        names = [str(x) for x in node_names]
        if len(names) != A.shape[1]:
            raise ValueError(f"node_names has {len(names)} names for {A.shape[1]} columns.")
    if not isinstance(lambda_value, (int, float, np.integer, np.floating)) or isinstance(lambda_value, bool) \
            or not np.isfinite(lambda_value) or lambda_value < 0:
        raise ValueError(f"lambda_value must be a finite number >= 0, got {lambda_value!r}.")
    n, d = A.shape
    if conditions is None and targets is not None and design is None:
        raise ValueError("targets need conditions: give the condition of each row.")
    design = resolve_design(design, conditions, targets, node_names=names, n_samples=n, n_nodes=d)
    if design is None:
        labels, codes, resolved = ("all",), np.zeros(n, dtype=np.int64), {"all": ()}
    else:
        labels, codes, resolved = design.labels, design.codes, design.targets
    data = [A[codes == c] for c in range(len(labels))]
    interv = [list(resolved[lab]) for lab in labels]
    score = GaussIntL0Pen(data, interv, lmbda=float(lambda_value) * np.log(n))
    essential, _ = gies.fit(score)
    return np.asarray(pdag_to_dag(np.asarray(essential != 0, dtype=float)), dtype=float)


# --------------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------------

METHODS: Mapping[str, MethodSpec] = MappingProxyType({
    "CoLiDE-EV": MethodSpec(
        "CoLiDE-EV", _colide_fit("ev"), _colide_defaults(),
        description="CoLiDE, equal noise variances (paper eq. 4-5).", accepts_callback=True,
        accepts_conditions=True,
    ),
    "CoLiDE-NV": MethodSpec(
        "CoLiDE-NV", _colide_fit("nv"), _colide_defaults(),
        description="CoLiDE, one noise variance per node (paper eq. 6-7).", accepts_callback=True,
        accepts_conditions=True,
    ),
    "DAGMA-linear": MethodSpec(
        "DAGMA-linear", _colide_fit("ls"), _colide_defaults(),
        description="Least-squares score (DAGMA-linear) with CoLiDE's optimiser and schedule.",
        accepts_callback=True, accepts_conditions=True,
    ),
    "SortNRegress": MethodSpec(
        "SortNRegress", sortnregress, MappingProxyType({"threshold": 0.0}),
        description="Sort by marginal variance, adaptive lasso (BIC) on predecessors (Reisach et al. 2021).",
    ),
    "GES": MethodSpec(
        "GES", ges_dag, MappingProxyType({"maxP": None, "lambda_value": 0.5}), max_nodes=30, slow=True,
        description="Greedy equivalence search, BIC score (causal-learn); CPDAG extended to a DAG.",
    ),
    "GIES": MethodSpec(
        "GIES", gies_dag, MappingProxyType({"lambda_value": 0.5}), max_nodes=30, slow=True,
        description="Greedy interventional equivalence search, BIC score, known targets (gies); extended to a DAG.",
        accepts_conditions=True,
    ),
})


#: How a method uses the experimental design (:func:`design_use`), as a table labels its rows.
DESIGN_USES = MappingProxyType({
    "none": "one condition",
    "design": "conditions and targets used",
    "conditions": "conditions used (an intercept each); no targets given",
    "centred": "each condition centred; targets not used",
})

#: ``unused_design`` values of :func:`run_method`.
_UNUSED_DESIGN = ("refuse", "centre")


def design_use(name, conditions=None, targets=None, unused_design="centre", *, design=None) -> str:
    """How ``name`` uses data from several conditions: a key of :data:`DESIGN_USES`.

    Parameters
    ----------
    name : str
        A key of :data:`METHODS`.
    conditions : array-like of shape (n_samples,) or None
        The rows' conditions (only whether it is None and how many labels it has matter).
    targets : mapping or None
        The conditions' targets (only whether any is given matters).
    unused_design : {"centre", "refuse"}, default="centre"
        As in :func:`run_method`.
    design : colide_core.data.design.Design, optional
        Both in one object, instead of ``conditions`` and ``targets`` (nothing is checked again).

    Returns
    -------
    str
        ``"none"`` for data of one condition; ``"design"`` (conditions and targets) or
        ``"conditions"`` (no target given) for a method with ``accepts_conditions``; ``"centred"``
        for the others with ``unused_design="centre"``.

    Raises
    ------
    KeyError
        For an unknown method.
    ValueError
        For a method that cannot use the conditions when ``unused_design="refuse"``, or an
        unknown ``unused_design``; ``design`` together with ``conditions`` or ``targets``.

    Examples
    --------
    >>> design_use("GIES", ["obs", "obs", "iv"], {"iv": [0]})
    'design'
    >>> design_use("GES", ["obs", "obs", "iv"], {"iv": [0]})
    'centred'
    >>> design_use("GES", None)
    'none'
    """
    if name not in METHODS:
        raise KeyError(f"Unknown method {name!r}; registered methods: {', '.join(METHODS)}.")
    if unused_design not in _UNUSED_DESIGN:
        raise ValueError(f"unused_design must be one of {', '.join(_UNUSED_DESIGN)}, got {unused_design!r}.")
    if design is not None:
        from colide_core.data.design import resolve_design

        design = resolve_design(design, conditions, targets)
        if design is None or len(design.labels) < 2:
            return "none"
        conditions, targets = design.codes, design.targets
    if conditions is None or len(set(np.asarray(conditions, dtype=object).tolist())) < 2:
        return "none"
    if METHODS[name].accepts_conditions:
        return "design" if targets and any(len(v) for v in dict(targets).values()) else "conditions"
    if unused_design == "refuse":
        raise ValueError(f"{name} does not take conditions (it would pool them as one sample); "
                         f"methods that do: {', '.join(k for k, v in METHODS.items() if v.accepts_conditions)}.")
    return "centred"


def run_method(name, X, *, callback=None, conditions=None, targets=None, unused_design="refuse", design=None,
               **params) -> np.ndarray:
    """Run a registered method on data and return its DAG estimate.

    Parameters
    ----------
    name : str
        A key of :data:`METHODS`.
    X : array-like or DataFrame of shape (n_samples, n_nodes)
        Numeric, finite data. Not modified.
    callback : callable, optional
        Progress callback ``callback(stage, iteration, objective)``; passed on to methods with
        ``accepts_callback`` (the CoLiDE family), ignored by the others.
    conditions : array-like of shape (n_samples,), optional
        Each row's condition (:func:`colide_core.data.conditions.check_conditions`); only for
        methods with ``accepts_conditions`` (the CoLiDE family, GIES).
    targets : mapping, optional
        ``{label: [node, ...]}``, nodes by index or (for a DataFrame ``X``) by name
        (:func:`colide_core.data.conditions.check_targets`); passed on as node indices. Needs
        ``conditions``.
    unused_design : {"refuse", "centre"}, default="refuse"
        What a method without ``accepts_conditions`` does with ``conditions``: refuse them
        (a ``ValueError``), or run on the rows centred within each condition
        (:func:`colide_core.data.conditions.centre_by_condition`: each condition's mean shift
        removed, as CoLiDE's intercept per condition removes it), the targets unused. Never the
        pooled rows.
    design : colide_core.data.design.Design, optional
        The conditions and targets in one object, instead of ``conditions`` and ``targets``
        (:func:`colide_core.data.design.resolve_design`); the method gets it as it is.
    **params
        Overrides of the method's ``defaults``; an unknown name is an error.

    Returns
    -------
    W : ndarray of shape (n_nodes, n_nodes)
        ``W[i, j] != 0`` means i -> j; a DAG.

    Raises
    ------
    KeyError
        If ``name`` is not registered (the message lists the registered names).
    ValueError
        If ``X`` is invalid, has more nodes than the method's ``max_nodes``, or a parameter name is
        unknown; if ``conditions`` are given to a method without ``accepts_conditions``, or
        ``targets`` without ``conditions``; a :class:`~colide_core.exceptions.ConditionsError`
        for conditions or targets that cannot be used; ``design`` together with ``conditions`` or
        ``targets``, or a design of other rows or nodes.
    MethodError
        If the method itself fails or returns something that is not a ``(n_nodes, n_nodes)`` DAG; the
        original exception is chained as ``__cause__``.
    """
    if name not in METHODS:
        raise KeyError(f"Unknown method {name!r}; registered methods: {', '.join(METHODS)}.")
    spec = METHODS[name]
    A, names = check_X(X)
    d = A.shape[1]
    if targets is not None and conditions is None and design is None:
        raise ValueError("targets need conditions: give the condition of each row.")
    if conditions is not None and design is None and not spec.accepts_conditions:
        design_use(name, conditions, targets, unused_design)  # refuses before the labels are checked
    from colide_core.data.design import resolve_design

    # checked once here (names=None: X's columns, when it is a DataFrame); the methods get the Design
    design = resolve_design(design, conditions, targets, node_names=names, n_samples=A.shape[0], n_nodes=d)
    if design is not None and not spec.accepts_conditions:
        design_use(name, unused_design=unused_design, design=design)  # refuses unless told to centre
        A = centre_by_condition(A, design=design)
        design = None
    if spec.max_nodes is not None and d > spec.max_nodes:
        raise ValueError(
            f"{name} is limited to {spec.max_nodes} nodes (too slow beyond); the data have {d}."
        )
    unknown = sorted(set(params) - set(spec.defaults))
    if unknown:
        raise ValueError(
            f"Unknown parameter(s) for {name}: {', '.join(unknown)}; "
            f"accepted: {', '.join(spec.defaults) or 'none'}."
        )
    kwargs = {**spec.defaults, **params}
    if spec.accepts_callback:
        kwargs["callback"] = callback
    if design is not None:
        kwargs["design"] = design
    try:
        W = spec.fit(A, **kwargs)
    except Exception as exc:  # noqa: BLE001 - re-raised with the method's name
        raise MethodError(f"{name} failed: {type(exc).__name__}: {exc}") from exc
    try:
        W = check_adjacency(W, d, f"the result of {name}")
    except ValueError as exc:
        raise MethodError(f"{name} returned an invalid matrix: {exc}") from exc
    if not is_dag(W):
        raise MethodError(f"{name} returned a matrix that is not a DAG.")
    return W


def run_method_safe(name, X, *, callback=None, conditions=None, targets=None, unused_design="refuse", design=None,
                    **params) -> dict:
    """Like :func:`run_method` but never raises: report the result or the error.

    Parameters
    ----------
    name, X, callback, conditions, targets, unused_design, design, **params
        As in :func:`run_method`.

    Returns
    -------
    result : dict
        ``{"W": ndarray (n_nodes, n_nodes) or None, "error": str or None, "time": float seconds}``;
        exactly one of ``W`` and ``error`` is None. ``time`` is the wall time of the call.
    """
    t0 = time.perf_counter()
    try:
        W = run_method(name, X, callback=callback, conditions=conditions, targets=targets,
                       unused_design=unused_design, design=design, **params)
        err = None
    except KeyError as exc:
        W, err = None, str(exc.args[0]) if exc.args else "unknown method"
    except Exception as exc:  # noqa: BLE001 - this function must never raise
        W, err = None, str(exc) or type(exc).__name__
    return {"W": W, "error": err, "time": time.perf_counter() - t0}
