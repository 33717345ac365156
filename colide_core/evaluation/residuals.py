"""The learned graph's SEM refitted by least squares, and tests on its residuals.

Conventions: data ``X`` has shape ``(n_samples, n_nodes)`` (the paper writes X as d x n); a graph
``A`` has shape ``(n_nodes, n_nodes)`` and ``A[i, j] != 0`` means the edge i -> j.

=======================  =========================================================================
function                 what it computes
=======================  =========================================================================
:func:`ols_refit`        the learned graph's linear SEM refitted by least squares: weights,
                         standard errors, residuals and fitted values per node (:class:`Refit`;
                         computed by :func:`colide_core.evaluation.refit.refit_sem`)
:func:`residual_checks`  per node: normality (D'Agostino-Pearson), heteroscedasticity against the
                         fitted values (Koenker's Breusch-Pagan); across nodes: equal residual
                         variances (Brown-Forsythe / Levene), the "EV or NV" verdict
=======================  =========================================================================

Part of the model checks of :mod:`colide_core.evaluation.checks`, which re-exports these names
and runs them all (:func:`colide_core.evaluation.checks.run_checks`). The ``verdict`` and
``summary`` sentences hold numbers only, never a node name.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from colide_core.evaluation._check_inputs import _check_alpha, _data_and_graph, _design_of_check
from colide_core.evaluation.refit import Refit, refit_sem  # Refit: the one refit's result, re-exported

__all__ = ["Refit", "ols_refit", "ResidualChecks", "residual_checks"]


# --------------------------------------------------------------------------------------------
# OLS refit of the learned graph
# --------------------------------------------------------------------------------------------

def ols_refit(X, A) -> Refit:
    """Refit the linear SEM of graph ``A`` on ``X`` by least squares (node on its parents).

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_nodes)
        Finite data, at least 3 rows. Not modified.
    A : array-like of shape (n_nodes, n_nodes)
        A DAG, ``A[i, j] != 0`` meaning i -> j; its weights are ignored.

    Returns
    -------
    Refit

    Raises
    ------
    ValueError
        If ``X`` is not finite numeric (n, d) data, ``A`` not a (d, d) DAG, or a node has as many
        parents as there are samples minus one (no residual degree of freedom).

    Notes
    -----
    Each regression has an intercept (the SEM's node mean). Standard errors are the classical
    ``sqrt(s^2 (Z'Z)^-1)`` with ``s^2 = RSS / (n - p - 1)``; a singular design is solved in the
    least-squares sense (``numpy.linalg.lstsq``) and its standard errors use the pseudo-inverse.
    The refit is :func:`colide_core.evaluation.refit.refit_sem`, the one shared by the Predict
    page's weights and the BIC.
    """
    values, names, B = _data_and_graph(X, A)
    return _with_dof(refit_sem(values, B, node_names=names))


def _with_dof(ref):
    """``ref`` (a :class:`Refit`), or ValueError for the first node without a residual degree of freedom."""
    for j in np.flatnonzero(ref.dof < 1):
        p = int(ref.adjacency[:, j].sum())
        m = int(ref.kept[:, j].sum())
        raise ValueError(f"node {j} has {p} parents but only {m} usable samples and {m - p - int(ref.dof[j])} "
                         "intercept(s): the refit has no residual degree of freedom.")
    return ref


# --------------------------------------------------------------------------------------------
# residuals: normality, heteroscedasticity, equal variances (EV or NV)
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class ResidualChecks:
    """Tests on the residuals of the refitted SEM (:func:`ols_refit`).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per node: ``node``, ``parents`` (count), ``residual_sd`` (data units),
        ``normality_stat``, ``normality_p`` (D'Agostino-Pearson K^2), ``hetero_stat``,
        ``hetero_p`` (Koenker's Breusch-Pagan against the fitted values; NaN for a node without
        parents), ``normal`` and ``homoscedastic`` (bool: the test does not reject at
        ``alpha / n_nodes``, Bonferroni).
    equal_var_stat, equal_var_p : float
        Brown-Forsythe (Levene, median-centred) test that all nodes' residuals have one variance.
    variance_ratio : float
        Largest over smallest residual variance.
    noise_model : {"EV", "NV"}
        "NV" when the equal-variance test rejects at ``alpha``, else "EV".
    refit : Refit
    alpha : float
    verdict, summary : str
    """

    table: pd.DataFrame
    equal_var_stat: float
    equal_var_p: float
    variance_ratio: float
    noise_model: str
    refit: Refit = field(repr=False)
    alpha: float
    verdict: str
    summary: str

    @property
    def ev_nv_line(self) -> str:
        """One sentence with the EV-or-NV verdict (for the Learn page)."""
        if self.noise_model == "NV":
            return (f"Noise model check: the residual variances differ across nodes (ratio "
                    f"{self.variance_ratio:.3g}, Brown-Forsythe p {_p(self.equal_var_p)}), so "
                    "CoLiDE-NV fits the data's assumption better than CoLiDE-EV.")
        return (f"Noise model check: equal residual variances are not rejected (ratio "
                f"{self.variance_ratio:.3g}, Brown-Forsythe p {_p(self.equal_var_p)}): CoLiDE-EV's "
                "assumption is plausible.")


def _p(p):
    """A p-value for a sentence: ``< 1e-300`` instead of a 0 that underflowed."""
    return "< 1e-300" if p < 1e-300 else f"= {p:.2g}"


def _breusch_pagan(resid, fitted):
    """Koenker's studentised Breusch-Pagan test of e^2 on the fitted values: (LM, p), 1 d.o.f."""
    e2 = resid ** 2
    f = fitted - fitted.mean()
    if not np.any(f):  # constant fitted values (a collinear design): nothing to regress on
        return math.nan, math.nan
    y = e2 - e2.mean()
    denom = float(y @ y)
    if denom == 0:
        return 0.0, 1.0
    r2 = float((f @ y) ** 2 / ((f @ f) * denom))
    lm = resid.size * r2
    return float(lm), float(stats.chi2.sf(lm, 1))


def _refit_by_condition(values, names, B, conditions=None, targets=None, *, design=None):
    """:func:`ols_refit` with one intercept per condition, each node on its unmasked rows.

    Returns the :class:`Refit` (residuals and fitted values NaN on a node's masked rows,
    ``intercept`` the first condition's) and the (n, d) boolean mask of the rows used. A
    ``design`` (resolved, its nodes named ``names``) is taken as it is.
    """
    ref = _with_dof(refit_sem(values, B, conditions=conditions, targets=targets, node_names=names, design=design))
    return ref, ref.kept


def residual_checks(X, A, alpha=0.05, *, conditions=None, targets=None, design=None) -> ResidualChecks:
    """Normality, heteroscedasticity and equal-variance tests on the refitted SEM's residuals.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_nodes)
        At least 20 rows (the normality test needs them).
    A : array-like of shape (n_nodes, n_nodes)
        The learned DAG, ``A[i, j] != 0`` meaning i -> j.
    alpha : float in (0, 1), default=0.05
        Level of the tests; per-node tests use ``alpha / n_nodes`` (Bonferroni).
    conditions : array-like of shape (n_samples,), optional
        The rows' condition labels. With them each node's equation has one intercept per
        condition (the data are centred per condition before the regressions, which gives the
        same slopes as a regression with condition dummies), so a shift of a condition's means
        is not read as non-Gaussian or heteroscedastic noise.
    targets : mapping, optional
        ``{label: nodes}``: a node's regression and its tests use only the rows where it is not
        a target (its residuals are NaN on the others, as CoLiDE masks them).
    design : colide_core.data.design.Design, optional
        Both in one object (validated once), instead of ``conditions`` and ``targets``
        (:func:`colide_core.data.design.resolve_design`).

    Returns
    -------
    ResidualChecks

    Raises
    ------
    ValueError
        For invalid data (fewer than 20 rows), a graph that is not a DAG, bad conditions or
        targets, a ``design`` of other data; InvalidParameterError for a bad ``alpha`` or
        ``design`` with ``conditions`` or ``targets``.

    Notes
    -----
    * Normality: :func:`scipy.stats.normaltest` (D'Agostino and Pearson's K^2, skewness and
      kurtosis), one test per node.
    * Heteroscedasticity: Koenker's (1981) studentised Breusch-Pagan test, ``n R^2`` of the
      squared residuals regressed on the fitted values, chi^2 with 1 degree of freedom.
    * Equal variances: :func:`scipy.stats.levene` with ``center="median"`` (Brown-Forsythe),
      robust to non-normal residuals, across the nodes' residuals. CoLiDE-EV assumes one noise
      variance for all nodes (paper eq. 4), CoLiDE-NV one per node (eq. 6). The variances are in
      data units, so the verdict depends on the units: on standardised data it can change.
    """
    alpha = _check_alpha(alpha)
    values, names, B = _data_and_graph(X, A)
    n, d = values.shape
    if n < 20:
        raise ValueError(f"residual tests need at least 20 samples, got {n}.")
    design = _design_of_check(X, names, n, d, design, conditions, targets)  # once, named as the tables' nodes
    ref, keep = _refit_by_condition(values, names, B, design=design)  # ols_refit's without conditions
    a_node = alpha / d
    rows = []
    for j in range(d):
        r = ref.residuals[keep[:, j], j]
        if r.size < 20 or np.ptp(r) == 0:
            k2, pn = math.nan, math.nan
        else:
            k2, pn = stats.normaltest(r)
        lm, ph = (_breusch_pagan(r, ref.fitted[keep[:, j], j]) if B[:, j].any()
                  else (math.nan, math.nan))
        rows.append({"node": names[j], "parents": int(B[:, j].sum()),
                     "residual_sd": float(math.sqrt(ref.residual_var[j])),
                     "normality_stat": float(k2), "normality_p": float(pn),
                     "hetero_stat": lm, "hetero_p": ph,
                     "normal": bool(not (pn < a_node)), "homoscedastic": bool(not (ph < a_node))})
    table = pd.DataFrame(rows)
    lev = stats.levene(*[ref.residuals[keep[:, j], j] for j in range(d)], center="median")
    ev_stat, ev_p = float(lev.statistic), float(lev.pvalue)
    rv = ref.residual_var
    ratio = float(rv.max() / rv.min()) if rv.min() > 0 else math.inf
    model = "NV" if ev_p < alpha else "EV"
    n_nonnormal = int((~table["normal"]).sum())
    hetero_tested = table["hetero_p"].notna()
    n_hetero = int((~table["homoscedastic"] & hetero_tested).sum())
    parts = []
    if n_nonnormal == 0:
        parts.append(f"Residuals look Gaussian at every node (D'Agostino-Pearson, level {alpha:g} "
                     f"split over {d} nodes).")
    else:
        parts.append(f"Residuals are not Gaussian at {n_nonnormal} of {d} nodes (D'Agostino-Pearson, "
                     f"level {alpha:g} split over {d} nodes): CoLiDE's Gaussian likelihood is an "
                     "approximation here (its estimates stay consistent for non-Gaussian noise, its "
                     "σ̂ and BIC are less reliable).")
    if n_hetero:
        parts.append(f"The residual spread changes with the fitted values at {n_hetero} of "
                     f"{int(hetero_tested.sum())} nodes with parents (Breusch-Pagan): a sign of a "
                     "non-linear relation or of a missing variable.")
    else:
        parts.append("No node shows residual spread changing with its fitted values (Breusch-Pagan).")
    if model == "NV":
        parts.append(f"The residual variances differ across nodes (largest / smallest = {ratio:.3g}, "
                     f"Brown-Forsythe p {_p(ev_p)}): prefer CoLiDE-NV.")
    else:
        parts.append(f"Equal residual variances are not rejected (largest / smallest = {ratio:.3g}, "
                     f"Brown-Forsythe p {_p(ev_p)}): CoLiDE-EV's assumption is plausible.")
    verdict = f"{model}; {d - n_nonnormal}/{d} nodes Gaussian"
    return ResidualChecks(table, ev_stat, ev_p, ratio, model, ref, alpha, verdict, " ".join(parts))
