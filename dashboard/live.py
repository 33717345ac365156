"""The live Learn page's helpers: thresholding a fit, and warming the cache for the next λ.

On the live Learn page (``dashboard.fitting.live_reason``) every λ step re-solves EV and NV.
After the user has moved λ once, :func:`prefetch_neighbours` solves and draws the two
neighbouring λ values of the slider's grid in a background :class:`dashboard.infra.jobs.Job`, through
the same cached functions the page calls (:func:`dashboard.fitting.fit_colide`,
:func:`dashboard.caching.cached.graph_html_cached`), so the next step is usually a cache hit. The cached
fits are cold fits keyed on (data, parameters): a prefetched result is exactly the one the page
would compute itself.

The prefetch never holds a script run (issue 41, "settled"): the page asks for it as the last
thing it does, and the job starts computing only :data:`PREFETCH_DELAY_S` later, once the user
has paused, so the browser draws the step without the prefetch competing for the CPU. A newer
step's request replaces a prefetch that has not started computing yet; one that is computing
finishes (its fits are the cache the next step may hit) and the newer request is dropped, unless
a live fit (this session's or another's) needs its compute slot: the prefetch is preemptible
(:class:`dashboard.infra.jobs.ComputeSlots`) and stops for it.

Convention: ``W[i, j] != 0`` means the edge i -> j; data ``X`` is ``(n_samples, n_nodes)``.
"""
from __future__ import annotations

import threading

import colide_core
from colide_core.graph.constraints import PriorKnowledge
from dashboard.infra.jobs import Job

__all__ = ["thresholded", "required_of", "neighbours", "prefetch_neighbours", "PREFETCH_DELAY_S", "fast_first",
           "refine", "refined", "drawn_after", "AUTO_DIRECT_NODES", "fit_where_needed", "live_now"]

#: Up to this many nodes the live page solves ``solver="auto"`` directly (the order search costs
#: 0.03-0.2 s there, issue 51's measurement, and Sachs's whole auto fit 0.08 s); above it the fast
#: answer is drawn at once and :func:`refine` replaces it when the search is done.
AUTO_DIRECT_NODES = 20

#: Seconds between a script run asking for a prefetch and the prefetch computing: the user's pause
#: (a step within it replaces the prefetch), and the time the browser has to draw the step alone.
PREFETCH_DELAY_S = 0.3


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


def prefetch_neighbours(state, key: str, dataset, params_list, threshold: float, drawing=None,
                        delay: float = PREFETCH_DELAY_S) -> None:
    """Solve and draw ``params_list`` in the background, ``delay`` seconds from now (one job per session).

    Parameters
    ----------
    state : MutableMapping
        The session state; ``state[key]`` holds the prefetch :class:`Job`.
    key : str
        Session key of the prefetch job (``dashboard.infra.state.LIVE_PREFETCH``).
    dataset : dashboard.data.Dataset
    params_list : sequence of tuple
        :func:`dashboard.fitting.solver_params` tuples (already checked by the caller's fits).
    threshold : float
        The current threshold: the drawings are made at it.
    drawing : dict, optional
        Keyword arguments of :func:`dashboard.graphview.warm_drawing` (``positions``,
        ``legend``) as the page will ask for them, so the warmed drawings are cache hits.
    delay : float, default=:data:`PREFETCH_DELAY_S`
        Seconds before the job starts (a timer thread: nothing waits for it, and the job takes
        its compute slot only when it starts).

    Notes
    -----
    A previous prefetch of the session that has not started computing yet is stopped and replaced;
    one that is computing is left to finish and nothing new is started. A failed fit is skipped
    silently (the page reports the error itself if the user goes there); a stopped job stops
    between fits and inside a fit (its partial fit is not cached).
    """
    old = state.get(key)
    if old is not None and not old.done:
        if getattr(old, "begun", True):
            return
        old.request_stop()  # still in its delay: the user moved on; it ends at once when its timer fires
    from dashboard.fitting import check_params, fit_dataset
    from dashboard.graphview import warm_drawing

    names = list(dataset.node_names)
    truth = None if dataset.B_true is None else dataset.B_true.to_numpy()
    drawing = dict(drawing or {})

    def work(job):
        for params in params_list:
            if job.stop_requested:
                return None
            try:
                check_params(params)
                res = fit_dataset(dataset, params, lambda *_: job.stop_requested)
                warm_drawing(thresholded(res, threshold, names), names, truth, res.sigma,
                             required=required_of(res, names), **drawing)
            except Exception:  # noqa: BLE001 - a prefetch is best effort (a stopped fit raises FitStopped)
                continue
        return None

    job = Job(work, "λ prefetch", key=dataset.key, preemptible=True)  # a live fit's slot comes first
    job.begun = False
    state[key] = job

    def begin():
        job.begun = True
        job.start()

    timer = threading.Timer(max(0.0, float(delay)), begin)
    timer.daemon = True
    timer.start()


def fast_first(params: tuple, n_nodes: int) -> tuple:
    """The parameters the live page draws at once for ``params``: ``solver="fast"`` in place of
    ``"auto"`` above :data:`AUTO_DIRECT_NODES` nodes, else ``params`` unchanged.

    Parameters
    ----------
    params : tuple
        A :func:`dashboard.fitting.solver_params` tuple.
    n_nodes : int

    Returns
    -------
    tuple
        Sorted ``(name, value)`` pairs, as :func:`dashboard.fitting.solver_params` makes them.

    Examples
    --------
    >>> fast_first((("lambda1", 0.05), ("variant", "nv")), 50)
    (('lambda1', 0.05), ('solver', 'fast'), ('variant', 'nv'))
    >>> fast_first((("lambda1", 0.05), ("variant", "nv")), 11)
    (('lambda1', 0.05), ('variant', 'nv'))
    """
    from colide_core.defaults import SOLVER

    p = dict(params)
    if p.get("solver", SOLVER) != "auto" or int(n_nodes) <= AUTO_DIRECT_NODES:
        return tuple(params)
    p["solver"] = "fast"
    return tuple(sorted(p.items()))


def drawn_after(result, n_nodes: int) -> float:
    """Seconds the live page waits for ``result`` to be drawn: its fit time, or for a refined
    ``solver="auto"`` fit above :data:`AUTO_DIRECT_NODES` nodes only its fast solve (the order
    search runs after the drawing). Liveness is decided from this (issue 51: a 5 s refinement at
    d = 50 must not turn the page to "Press Run").

    Parameters
    ----------
    result : dashboard.fitting.FitResult
    n_nodes : int

    Returns
    -------
    float
    """
    choice = getattr(result.result, "choice", None)
    if choice and int(n_nodes) > AUTO_DIRECT_NODES and "fast" in (choice.get("seconds") or {}):
        return float(choice["seconds"]["fast"])
    return float(result.fit_time)


def refine(state, key: str, dataset, params_list) -> Job:
    """The background job that solves ``params_list`` (``solver="auto"``: the order search too).

    One per session, preemptible (a person's live fit takes its compute slot first). Asking for
    other parameters stops the previous refinement: the next slider step cancels it, and nothing
    waits on it. The fits go through :func:`dashboard.fitting.fit_dataset` (cached), so a
    refinement seen before is a cache hit.

    Parameters
    ----------
    state : MutableMapping
        The session state; ``state[key]`` holds the job.
    key : str
        Session key (``dashboard.infra.state.LIVE_REFINE``).
    dataset : dashboard.data.Dataset
    params_list : sequence of tuple
        :func:`dashboard.fitting.solver_params` tuples.

    Returns
    -------
    Job
        Its ``result`` is the list of :class:`dashboard.fitting.FitResult` (None when stopped).
    """
    wanted = (dataset.key, tuple(params_list))
    old = state.get(key)
    if old is not None and getattr(old, "wanted", None) == wanted:
        return old  # running, done, or failed (the page says so): never restarted for the same settings
    if old is not None and not old.done:
        old.request_stop()
    from dashboard.fitting import check_params, fit_dataset

    def work(job):
        out = []
        for k, params in enumerate(params_list):
            if job.stop_requested:
                return None
            job.status = f"refining {dict(params)['variant'].upper()} with the order search"
            job.fraction = k / max(1, len(params_list))
            check_params(params)
            out.append(fit_dataset(dataset, params, lambda *_: job.stop_requested))
        return out

    job = Job(work, "refining", key=dataset.key, preemptible=True)
    job.wanted = wanted
    state[key] = job
    job.start()
    return job


def refined(state, key: str, dataset, params_list):
    """The refinement's results when its job for exactly ``params_list`` is done, else None."""
    job = state.get(key)
    if job is None or getattr(job, "wanted", None) != (dataset.key, tuple(params_list)) or not job.done:
        return None
    return job.result


def live_now(ss, dataset) -> tuple:
    """Whether the Learn settings in ``ss`` are live on ``dataset`` now: the one rule of the Learn
    page and of :func:`fit_where_needed` (issue 47: it was written twice).

    Live when a step is expected to take under a second (``dashboard.fitting.live_reason``): from
    what a live step cost this session with the current solver (``state.live_step_cost``), else
    the last fit's own time, else an estimate measured on this machine
    (``dashboard.fitting.expected_fit_seconds``); a step whose fits are all in the cache is live
    whatever was measured (issue 48, M-5a).

    Parameters
    ----------
    ss : streamlit session state
        Learn's widget keys (``learn_lambda1``, ``learn_variant``) and
        ``dashboard.infra.state.SOLVER_OVERRIDES``.
    dataset : dashboard.data.Dataset

    Returns
    -------
    live : bool
    why_not : str
        Why a step needs Run ("" when live).
    estimate : tuple or None
        ``(low, high, how)`` of ``expected_fit_seconds`` when nothing was measured, else None.
    wanted : list of tuple
        The :func:`fast_first` solver parameters of each model shown: what a live step fits first.
    """
    from dashboard.infra import state
    from dashboard.fitting import VARIANTS, expected_fit_seconds, is_cached, live_reason, shown_labels, solver_params

    from dashboard.infra.limits import with_fit_device

    overrides = ss[state.SOLVER_OVERRIDES]
    labels = shown_labels(ss["learn_variant"])
    fit_overrides = with_fit_device(overrides, dataset.shape[1])  # Learn's Run's device rule: the same fits
    wanted = [fast_first(solver_params(VARIANTS[lab], float(ss["learn_lambda1"]), fit_overrides), dataset.shape[1])
              for lab in labels]
    solver_now = overrides.get("solver", colide_core.defaults.SOLVER)
    # what a live step here cost this session (the lower of the last two: a cache hit is cheap, and
    # one slow step under load does not decide), else the last fit's own time (issue 48, M-5)
    measured = state.live_step_cost(solver_now)
    measured = state.last_fit_time(solver_now) if measured is None else measured
    estimate = None if measured is not None else expected_fit_seconds(dataset, fit_overrides,  # with the device
                                                                      [VARIANTS[lab] for lab in labels])
    live, why_not = live_reason(dataset, overrides, measured=measured, estimate=estimate,
                                cached=all(is_cached(dataset.key, p) for p in wanted))
    return live, why_not, estimate, wanted


def fit_where_needed(ss, dataset) -> tuple:
    """The Learn page's fits at the session's λ, noise model and settings, solved here when the Learn
    page would solve them live: a page that uses Learn's fit (Predict), opened from a link or a
    refresh in a fresh session, shows its answer instead of "Learn a graph first" (issue 48, m-5).

    The fits are the Learn page's own (:func:`dashboard.fitting.fit_live` on
    :func:`fast_first` of :func:`dashboard.fitting.solver_params`), so Learn then shows the same
    graph from the cache, and refines it there above :data:`AUTO_DIRECT_NODES` nodes.

    Parameters
    ----------
    ss : streamlit session state
        Learn's widget keys (``learn_lambda1``, ``learn_variant``) and
        ``dashboard.infra.state.SOLVER_OVERRIDES``; the results go into ``dashboard.infra.state.RESULTS``.
    dataset : dashboard.data.Dataset

    Returns
    -------
    fitted : list of FitResult
        The fits made (empty when none was needed or allowed).
    why_not : str or None
        Why nothing was fitted here (Learn would ask for Run), else None.
    errors : list of str
        Messages of refused or failed fits (markdown-safe).
    """
    from dashboard.infra import state
    from dashboard.fitting import fit_live

    held = state.results_for_current()
    live, why_not, _, wanted = live_now(ss, dataset)
    todo = [p for p in wanted if not (dict(p)["variant"] in held and held[dict(p)["variant"]].params == p)]
    if not todo:
        return [], None, []
    if not live:
        return [], why_not, []
    fitted, errors, _ = fit_live(dataset, todo)
    for res in fitted:
        ss[state.RESULTS][res.variant] = res
    return fitted, None, errors
