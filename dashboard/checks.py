"""Cached adapters of :mod:`colide_core.evaluation.checks`, :mod:`colide_core.evaluation.curves` and
:mod:`colide_core.render.report` for the Check page (and the EV-or-NV line of the Learn page).

The cached functions go through :func:`dashboard.cached.cache_data`: every argument is hashed
in full except ``_X``, whose content hash is the ``data_key`` argument. The report is not cached
(it embeds the dataset's name and the session's fits). Convention: ``X`` is
``(n_samples, n_nodes)``; ``W[i, j] != 0`` means i -> j.
"""
from __future__ import annotations

import numpy as np

import colide_core
from colide_core.render import report as core_report
from dashboard.cached import cache_data
from dashboard.live import thresholded

__all__ = ["shown_graph", "run_checks_cached", "ev_nv_line", "path_cached", "report_html", "report_html_or_error",
           "bootstrap_frequency", "bootstrap_mismatch"]


def shown_graph(result, threshold, names, return_removed=False):
    """The graph the Learn page shows for a fit (:func:`dashboard.live.thresholded`).

    Parameters
    ----------
    result : dashboard.fitting.FitResult
    threshold : float
    names : list of str
    return_removed : bool, default=False
        Also return the edges removed to break cycles.

    Returns
    -------
    ndarray of shape (n_nodes, n_nodes)
        A DAG with the kept weights; with ``return_removed=True`` the pair ``(adjacency, removed)``.
    """
    return thresholded(result, float(threshold), names, return_removed=return_removed)


#: Settings whose difference makes a bootstrap belong to another fit (everything that changes W;
#: the threshold only changes which edges are counted, and is stated with the frequencies).
_FIT_KEYS = ("variant", "lambda1", "solver", "mu_schedule", "s_schedule", "max_iter", "lr", "tol", "checkpoint",
             "max_time", "topo_sizes", "forbidden", "required", "tiers", "init_order")


def bootstrap_mismatch(boot_state, data_key, params):
    """Why the Edge confidence page's bootstrap does not belong to this fit ("" when it does).

    A bootstrap belongs to a fit only if its data, noise model, λ, solver, schedule and prior
    knowledge all match (issue 28: an unconstrained bootstrap was attached to a constrained fit
    on variant and λ alone, so the required edge showed frequency 0).

    Parameters
    ----------
    boot_state : dict or None
        ``dashboard.trust_state.BOOT_RESULT`` (``key=(data key, params, n_boot, seed)``).
    data_key : str
    params : tuple
        The fit's :func:`dashboard.fitting.solver_params`.

    Returns
    -------
    str or None
        None without a bootstrap; ``""`` when it matches; else a sentence naming what differs.
    """
    if not boot_state or not boot_state.get("key"):
        return None
    key = boot_state["key"]
    if key[0] != data_key:
        return "it was run on other data"
    defaults = colide_core.CoLiDE().get_params()  # an absent setting is its default
    boot, mine = {**defaults, **dict(key[1])}, {**defaults, **dict(params)}
    differ = [k for k in _FIT_KEYS if boot.get(k) != mine.get(k)]
    if not differ:
        return ""
    shown = {"lambda1": "λ", "forbidden": "prior knowledge", "required": "prior knowledge", "tiers": "prior knowledge"}
    names = list(dict.fromkeys(shown.get(k, k.replace("_", " ")) for k in differ))
    return "its " + ", ".join(names) + (" differs" if len(names) == 1 else " differ") + " from this fit's"


def bootstrap_frequency(boot_state, data_key, params):
    """Edge frequencies of the Edge confidence page's bootstrap when it belongs to this fit, else None.

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
        The frequencies and a sentence saying which bootstrap they come from; None unless
        :func:`bootstrap_mismatch` is ``""``.
    """
    if bootstrap_mismatch(boot_state, data_key, params) != "":
        return None
    boot = dict(boot_state["key"][1])
    res = boot_state["result"]
    return (np.asarray(res.frequency, dtype=float),
            f"bootstrap of the Edge confidence page ({res.n_ok} resamples, threshold {boot.get('threshold')})")


@cache_data(show_spinner=False, max_entries=16,
            unhashed={"_X": "data_key is the content hash of X (values, names, truth)"})
def run_checks_cached(data_key: str, params: tuple, threshold: float, n_random: int, n_rescale: int,
                      refits: bool, freq_key, _X, A, W, frequency):
    """:func:`colide_core.evaluation.checks.run_checks` of one fit, cached.

    Parameters
    ----------
    data_key, params, threshold, n_random, n_rescale, refits, freq_key
        Dataset hash, fit parameters, threshold, Markov random graphs, rescalings,
        whether to refit (standardised data and random rescalings), the bootstrap's identity.
    _X : pandas.DataFrame of shape (n_samples, n_nodes)
        Not hashed: ``data_key`` is its content hash.
    A, W : ndarray of shape (n_nodes, n_nodes)
        Thresholded DAG and raw weights (hashed in full: a loaded manifest's W differs from a
        fresh fit's with the same parameters).
    frequency : ndarray of shape (n_nodes, n_nodes) or None

    Returns
    -------
    colide_core.evaluation.checks.CheckReport
    """
    estimator = colide_core.CoLiDE(**{**dict(params), "threshold": float(threshold)}) if refits else None
    return colide_core.evaluation.checks.run_checks(_X, A, W=W, estimator=estimator, frequency=frequency,
                                         n_random=int(n_random), n_rescale=int(n_rescale) if refits else 0)


@cache_data(show_spinner=False, max_entries=64,
            unhashed={"_X": "data_key is the content hash of X (values, names, truth)"})
def ev_nv_line(data_key: str, params: tuple, threshold: float, _X, A) -> str:
    """The EV-or-NV verdict of the residual test as one sentence (numbers only, no user text).

    Parameters
    ----------
    data_key, params, threshold
        The cache key.
    _X : pandas.DataFrame of shape (n_samples, n_nodes)
        Not hashed: ``data_key`` is its content hash.
    A : ndarray of shape (n_nodes, n_nodes)
        The thresholded DAG (hashed in full).

    Returns
    -------
    str
        :attr:`colide_core.evaluation.checks.ResidualChecks.ev_nv_line`, or a sentence saying why the test
        could not run.
    """
    try:
        return colide_core.evaluation.checks.residual_checks(_X, A).ev_nv_line
    except ValueError as exc:
        return f"Noise model check not available: {exc}"


@cache_data(show_spinner=False, max_entries=8,
            unhashed={"_X": "data_key is the content hash of X (values, names, truth)"})
def path_cached(data_key: str, variant: str, overrides: tuple, _X):
    """:func:`colide_core.solver.path.lambda_path` with the default λ grid and thresholds, cached.

    Parameters
    ----------
    data_key, variant, overrides
        The cache key (``overrides``: sorted tuple of ``lambda_path`` keyword arguments).
    _X : pandas.DataFrame of shape (n_samples, n_nodes)

    Returns
    -------
    colide_core.solver.path.LambdaPath
    """
    kwargs = {k: (list(v) if isinstance(v, tuple) and k in ("forbidden", "required", "tiers") else v)
              for k, v in overrides}
    return colide_core.lambda_path(_X, variant=variant, **kwargs)


def report_html(data_key: str, labels: tuple, threshold: float, ref_key, checks_key, path_key,
                X, fits, B, reference_label, checks, path, audit, dataset_name) -> bytes:
    """:func:`colide_core.render.report.build_report` as UTF-8 bytes.

    Not cached: the report embeds the dataset's name, the fits and the session's checks, and it
    is built only when the user clicks the download button (about 0.5 s on Sachs,
    ``benchmarks/bench_check.py``); a shared cache entry keyed on less than all of that could
    hand one session's report to another (docs/security.md).

    Returns
    -------
    bytes
        The self-contained HTML report.
    """
    html = core_report.build_report(X, fits, dataset_name=dataset_name, B_true=B,
                                    reference_label=reference_label, checks=checks, path=path,
                                    audit=audit)
    return html.encode("utf-8")


def report_html_or_error(*args) -> bytes:
    """:func:`report_html`, or a one-paragraph HTML page saying why the report could not be built.

    The download button runs this when it is clicked, outside the page script, where an
    exception could not be shown; the message is escaped once for HTML.
    """
    try:
        return report_html(*args)
    except Exception as exc:  # noqa: BLE001 - the user gets a readable file, never a traceback
        from colide_core.graph.export import html_escape

        return (f"<!DOCTYPE html><meta charset='utf-8'><p>The report could not be built: "
                f"{html_escape(exc)}</p>").encode("utf-8")
