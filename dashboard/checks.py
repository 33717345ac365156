"""Cached adapters of :mod:`colide_core.checks`, :mod:`colide_core.curves` and
:mod:`colide_core.report` for the Check page (and the EV-or-NV line of the Learn page).

Every function is an ``st.cache_data`` keyed on the dataset's content hash, the fit's parameters
and the threshold (small, hashable); the arrays are passed as ``_``-prefixed arguments, which
Streamlit does not hash. Convention: ``X`` is ``(n_samples, n_nodes)``; ``W[i, j] != 0`` means
i -> j.
"""
from __future__ import annotations

import numpy as np
import streamlit as st

import colide_core
from colide_core import report as core_report
from colide_core.constraints import PriorKnowledge

__all__ = ["shown_graph", "run_checks_cached", "ev_nv_line", "path_cached", "report_html", "report_html_or_error",
           "bootstrap_frequency"]


def shown_graph(result, threshold, names):
    """The graph the Learn page shows for a fit: raw ``W`` thresholded, required edges kept.

    Parameters
    ----------
    result : dashboard.fitting.FitResult
    threshold : float
    names : list of str

    Returns
    -------
    ndarray of shape (n_nodes, n_nodes)
        A DAG with the kept weights.
    """
    required = PriorKnowledge.from_params(result.params).required_mask(len(names), names)
    return colide_core.threshold_to_dag(result.W, float(threshold), required=required)


def bootstrap_frequency(boot_state, data_key, params):
    """Edge frequencies of the Edge confidence page's bootstrap when it matches this fit, else None.

    Parameters
    ----------
    boot_state : dict or None
        ``dashboard.trust_state.BOOT_RESULT`` (``key=(data key, params, n_boot, seed)``).
    data_key : str
    params : tuple
        The fit's :func:`dashboard.fitting.solver_params`.

    Returns
    -------
    (ndarray of shape (n_nodes, n_nodes), str) or None
        The frequencies and a sentence saying which bootstrap they come from.
    """
    if not boot_state:
        return None
    key = boot_state.get("key")
    if not key or key[0] != data_key:
        return None
    boot = dict(key[1])
    mine = dict(params)
    if boot.get("variant") != mine.get("variant") or boot.get("lambda1") != mine.get("lambda1"):
        return None
    res = boot_state["result"]
    return (np.asarray(res.frequency, dtype=float),
            f"bootstrap of the Edge confidence page ({res.n_ok} resamples, threshold {boot.get('threshold')})")


@st.cache_data(show_spinner=False, max_entries=16)
def run_checks_cached(data_key: str, params: tuple, threshold: float, n_random: int, n_rescale: int,
                      refits: bool, freq_key, _X, _A, _W, _frequency):
    """:func:`colide_core.checks.run_checks` of one fit, cached.

    Parameters
    ----------
    data_key, params, threshold, n_random, n_rescale, refits, freq_key
        The cache key: dataset hash, fit parameters, threshold, Markov random graphs, rescalings,
        whether to refit (standardised data and random rescalings), the bootstrap's identity.
    _X : pandas.DataFrame of shape (n_samples, n_nodes)
    _A, _W : ndarray of shape (n_nodes, n_nodes)
        Thresholded DAG and raw weights.
    _frequency : ndarray of shape (n_nodes, n_nodes) or None

    Returns
    -------
    colide_core.checks.CheckReport
    """
    estimator = colide_core.CoLiDE(**{**dict(params), "threshold": float(threshold)}) if refits else None
    return colide_core.checks.run_checks(_X, _A, W=_W, estimator=estimator, frequency=_frequency,
                                         n_random=int(n_random), n_rescale=int(n_rescale) if refits else 0)


@st.cache_data(show_spinner=False, max_entries=64)
def ev_nv_line(data_key: str, params: tuple, threshold: float, _X, _A) -> str:
    """The EV-or-NV verdict of the residual test as one sentence (numbers only, no user text).

    Parameters
    ----------
    data_key, params, threshold
        The cache key.
    _X : pandas.DataFrame of shape (n_samples, n_nodes)
    _A : ndarray of shape (n_nodes, n_nodes)
        The thresholded DAG.

    Returns
    -------
    str
        :attr:`colide_core.checks.ResidualChecks.ev_nv_line`, or a sentence saying why the test
        could not run.
    """
    try:
        return colide_core.checks.residual_checks(_X, _A).ev_nv_line
    except ValueError as exc:
        return f"Noise model check not available: {exc}"


@st.cache_data(show_spinner=False, max_entries=8)
def path_cached(data_key: str, variant: str, overrides: tuple, _X):
    """:func:`colide_core.path.lambda_path` with the default λ grid and thresholds, cached.

    Parameters
    ----------
    data_key, variant, overrides
        The cache key (``overrides``: sorted tuple of ``lambda_path`` keyword arguments).
    _X : pandas.DataFrame of shape (n_samples, n_nodes)

    Returns
    -------
    colide_core.path.LambdaPath
    """
    kwargs = {k: (list(v) if isinstance(v, tuple) and k in ("forbidden", "required", "tiers") else v)
              for k, v in overrides}
    return colide_core.lambda_path(_X, variant=variant, **kwargs)


@st.cache_data(show_spinner=False, max_entries=4)
def report_html(data_key: str, labels: tuple, threshold: float, ref_key, checks_key, path_key,
                _X, _fits, _B, _reference_label, _checks, _path, _audit, _dataset_name) -> bytes:
    """:func:`colide_core.report.build_report` as UTF-8 bytes, cached on what it shows.

    Returns
    -------
    bytes
        The self-contained HTML report.
    """
    html = core_report.build_report(_X, _fits, dataset_name=_dataset_name, B_true=_B,
                                    reference_label=_reference_label, checks=_checks, path=_path,
                                    audit=_audit)
    return html.encode("utf-8")


def report_html_or_error(*args) -> bytes:
    """:func:`report_html`, or a one-paragraph HTML page saying why the report could not be built.

    The download button runs this when it is clicked, outside the page script, where an
    exception could not be shown; the message is escaped once for HTML.
    """
    try:
        return report_html(*args)
    except Exception as exc:  # noqa: BLE001 - the user gets a readable file, never a traceback
        from colide_core.export import html_escape

        return (f"<!DOCTYPE html><meta charset='utf-8'><p>The report could not be built: "
                f"{html_escape(exc)}</p>").encode("utf-8")
