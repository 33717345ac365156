"""The live Learn page's helpers: thresholding a fit, and warming the cache for the next λ.

On the live Learn page (``dashboard.fitting.live_reason``) every λ step re-solves EV and NV.
After the user has moved λ once, :func:`prefetch_neighbours` solves and draws the two
neighbouring λ values of the slider's grid in a background :class:`dashboard.jobs.Job`, through
the same cached functions the page calls (:func:`dashboard.fitting.fit_colide`,
:func:`dashboard.cached.graph_html_cached`), so the next step is usually a cache hit. The cached
fits are cold fits keyed on (data, parameters): a prefetched result is exactly the one the page
would compute itself.

Convention: ``W[i, j] != 0`` means the edge i -> j; data ``X`` is ``(n_samples, n_nodes)``.
"""
from __future__ import annotations

import colide_core
from colide_core.graph.constraints import PriorKnowledge
from dashboard.jobs import Job, is_running

__all__ = ["thresholded", "required_of", "neighbours", "prefetch_neighbours"]


def thresholded(result, threshold: float, names, return_removed: bool = False):
    """The DAG the page shows for a fit: ``threshold_to_dag`` keeping its required edges.

    Parameters
    ----------
    result : dashboard.fitting.FitResult
    threshold : float
        Magnitude threshold on ``|W|`` (>= 0).
    names : sequence of str
        Node names (for the prior knowledge's required edges).
    return_removed : bool, default=False
        Also return the edges removed to break cycles (``threshold_to_dag``'s ``removed``).

    Returns
    -------
    ndarray of shape (n_nodes, n_nodes)
        Thresholded weights, ``W[i, j] != 0`` meaning i -> j, acyclic; with
        ``return_removed=True``, a pair ``(adjacency, removed)``.
    """
    return colide_core.threshold_to_dag(result.W, threshold, required=required_of(result, names),
                                        return_removed=return_removed)


def required_of(result, names):
    """The edges a fit's prior knowledge requires, or None (no knowledge).

    Parameters
    ----------
    result : dashboard.fitting.FitResult
    names : sequence of str

    Returns
    -------
    ndarray of bool of shape (n_nodes, n_nodes) or None
    """
    return PriorKnowledge.from_params(result.params).required_mask(len(names), names)


def neighbours(options, value) -> list:
    """The grid values next to ``value`` in the sorted ``options`` (0, 1 or 2 of them)."""
    opts = list(options)
    if value not in opts:
        return []
    i = opts.index(value)
    return [opts[k] for k in (i + 1, i - 1) if 0 <= k < len(opts)]


def prefetch_neighbours(state, key: str, dataset, params_list, threshold: float, drawing=None) -> None:
    """Solve and draw ``params_list`` in the background (one job per session at a time).

    Parameters
    ----------
    state : MutableMapping
        The session state; ``state[key]`` holds the running prefetch :class:`Job`.
    key : str
        Session key of the prefetch job (``dashboard.state.LIVE_PREFETCH``).
    dataset : dashboard.data.Dataset
    params_list : sequence of tuple
        :func:`dashboard.fitting.solver_params` tuples (already checked by the caller's fits).
    threshold : float
        The current threshold: the drawings are made at it.
    drawing : dict, optional
        Keyword arguments of :func:`dashboard.graphview.drawing_html` (``positions``,
        ``legend``) as the page will ask for them, so the warmed drawings are cache hits.

    Notes
    -----
    Nothing is started while the previous prefetch of the session is still running; a failed
    fit is skipped silently (the page reports the error itself if the user goes there).
    """
    if is_running(state, key):
        return
    from dashboard.fitting import check_params, fit_dataset
    from dashboard.graphview import drawing_html

    names = list(dataset.node_names)
    truth = None if dataset.B_true is None else dataset.B_true.to_numpy()
    drawing = dict(drawing or {})

    def work(job):
        for params in params_list:
            if job.stop_requested:
                return None
            try:
                check_params(params)
                res = fit_dataset(dataset, params)
                drawing_html(thresholded(res, threshold, names), names, truth, res.sigma,
                             required=required_of(res, names), **drawing)
            except Exception:  # noqa: BLE001 - a prefetch is best effort
                continue
        return None

    job = Job(work, "λ prefetch", key=dataset.key)
    state[key] = job
    job.start()
