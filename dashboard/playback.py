"""Watch the optimisation: play back the checkpoints of one fit (Learn page, "Playback" tab).

The fit shown on the Learn page is refitted once with ``record_W=True`` (the solver keeps a copy
of W at every checkpoint, :attr:`colide_core.SolverResult.W_history`; recording changes no number
of the fit, ``tests/test_record_w.py``), through the same cached :func:`dashboard.fitting.fit_colide`
keyed on the data's content hash and every parameter, in a background job
(:func:`recording_job`: a compute slot, a progress bar, Stop, and the end of the session end it). A slider (and step buttons) picks a
checkpoint; the graph at that checkpoint is drawn with the same drawing and the same fixed node
positions as the Graph tab, thresholded like it, and plays the following checkpoints by itself
in the browser (:func:`colide_core.render.graph_html.playback_html`: Play/Pause, speed, no server
round trip per frame), beside h(W), the stage objective and σ̂ over the
checkpoints with the stages (μ, s) marked (:func:`colide_core.render.figures.playback_figure`).

Convention: ``W[i, j] != 0`` means the edge i -> j.
"""
from __future__ import annotations

import numpy as np
import streamlit as st

from colide_core.defaults import MU_SCHEDULE
from colide_core.render.graph_html import set_playback_start
from dashboard.infra.assets import vis_assets_url
from dashboard.caching.cached import playback_html_cached
from colide_core.render.figures import playback_figure

__all__ = ["PLAYBACK_MAX_NODES", "PLAYBACK_MAX_FRAMES", "ON_KEY", "recording_job",
           "harvest_recording", "render_playback", "thin_frames"]

#: Largest graph offered for playback: above it a drawing per checkpoint is not readable and the
#: recorded W (checkpoints x d^2 numbers) grows large.
PLAYBACK_MAX_NODES = 50
#: Height (px) of the playback drawing with its player bar and caption: the whole player on screen
#: under the Learn page's controls at 1280×720 (issue 48, m-10: at 560 px, 63 % of it was;
#: ``tests/e2e/test_projector.py`` measures it), about the Graph tab's one-drawing height
#: (``pages/learn.py`` GRAPH_HEIGHT) plus the bar and its caption.
PLAYBACK_HEIGHT = 380
#: Most checkpoints one playback page holds: longer recordings are thinned evenly, keeping the
#: first and the last (issue 30: 10,000 checkpoints made a 33 MB page, sent on every rerun).
PLAYBACK_MAX_FRAMES = 200
#: Session key of the toggle that records the fit (so other tabs never pay for the recording).
ON_KEY = "learn_playback_on"


def _record_params(result, n_nodes):
    """The fit's settings with ``record_W``, on the device the server's rule picks for ``n_nodes``
    (:func:`dashboard.infra.limits.with_fit_device`)."""
    from dashboard.infra.limits import with_fit_device

    params = with_fit_device(dict(result.params), n_nodes)
    params["record_W"] = True
    return tuple(sorted(params.items()))


def recording_job(dataset, result):
    """A :class:`dashboard.infra.jobs.Job` recording ``result`` again (slot, progress, Stop, session end).

    Issue 30: the recording used to run in the page's own thread, outside the compute slots, deaf
    to Stop and to the end of the session (a paper-faithful Sachs refit is minutes).

    Parameters
    ----------
    dataset : dashboard.data.Dataset
    result : dashboard.fitting.FitResult

    Returns
    -------
    dashboard.fitting.FitJob
        Not started; its ``results`` hold the recorded fit (``stopped`` after Stop).

    Raises
    ------
    colide_core.run.manifest.RunSettingsError
        If the fit's settings are refused (:func:`dashboard.fitting.check_params`).
    """
    from dashboard.fitting import FitJob

    job = FitJob(dataset, [_record_params(result, dataset.shape[1])])
    job.label = "Recording the fit"
    job.key = (dataset.key, _record_params(result, dataset.shape[1]))
    return job


def harvest_recording(state, result_key):
    """``harvest(job)`` of :func:`recording_job`: stores ``dict(key, rec)`` in ``state[result_key]``.

    ``rec`` is None unless the recording completed; else ``dict(history, W, params, s_used)`` with
    at most :data:`PLAYBACK_MAX_FRAMES` checkpoints (:func:`thin_frames`), so a session holds a few
    MB at most, never the full recording (up to 200 MB at the manifest's caps).
    """
    from dashboard.infra.text import md_escape

    def harvest(job):
        rec = job.results[0] if job.results else None
        if rec is not None and rec.stopped:
            rec = None
        if rec is not None:  # the session keeps only what it plays: at most PLAYBACK_MAX_FRAMES checkpoints
            hist, Ws = thin_frames(rec.result.history, rec.result.W_history or ())
            rec = {"history": hist, "W": Ws, "params": rec.params, "s_used": tuple(rec.result.s_used)}
        state[result_key] = {"key": job.key, "rec": rec}
        if job.errors or job.error:
            return [("error", md_escape("; ".join(job.errors) or job.error))]
        if rec is None:
            why = "its session ended" if job.stop_reason == "session" else "Stop was pressed"
            return [("warning", f"The recording was stopped ({why}): nothing to play back. Press **Record again**.")]
        return []

    return harvest


def thin_frames(history, W_history, max_frames=None):
    """At most ``max_frames`` checkpoints, evenly spaced, the first and the last kept.

    Parameters
    ----------
    history : dict of list
        ``SolverResult.history`` (one entry per checkpoint in each list).
    W_history : sequence of ndarray
        W at each checkpoint.
    max_frames : int, optional
        Default :data:`PLAYBACK_MAX_FRAMES`.

    Returns
    -------
    (dict of list, tuple of ndarray)
        The same checkpoints when there are at most ``max_frames``, else a thinned copy.
    """
    limit = PLAYBACK_MAX_FRAMES if max_frames is None else int(max_frames)
    n = len(W_history)
    if n <= limit:
        return history, tuple(W_history)
    keep = np.unique(np.linspace(0, n - 1, limit).round().astype(int))
    thinned = {k: ([v[i] for i in keep] if isinstance(v, list) and len(v) == n else v) for k, v in history.items()}
    return thinned, tuple(W_history[i] for i in keep)


def render_playback(dataset, result, threshold, *, truth=None, positions=None):
    """Draw the playback of ``result``: a checkpoint slider, the graph there, and the traces.

    Parameters
    ----------
    dataset : dashboard.data.Dataset
    result : dashboard.fitting.FitResult
        The fit shown on the Learn page.
    threshold : float
        Edge threshold applied to each recorded W (as on the Graph tab).
    truth : ndarray of shape (n_nodes, n_nodes), optional
        Ground truth for the edge colours.
    positions : ndarray of shape (n_nodes, 2), optional
        Fixed node positions (the Graph tab's), so edges appear and vanish in place.
    """
    names = list(result.node_names)
    if len(names) > PLAYBACK_MAX_NODES:
        st.info(f"Playback is offered up to {PLAYBACK_MAX_NODES} nodes; this graph has {len(names)}.")
        return
    if dict(result.params).get("solver") == "topo":
        st.info("CoLiDE-TOPO searches over orders: there is no continuous optimisation to play back.")
        return
    choice = getattr(result.result, "choice", None)
    # the toggle and what it plays on one row, so the player fits under the Learn controls at
    # 1280×720 (issue 48, m-10: a note on a row of its own pushed the player below the fold)
    toggle_col, note_col = st.columns([1.3, 2.5], vertical_alignment="center")  # the label whole at 1024×768
    toggle_col.toggle("Record and play back this fit", key=ON_KEY,
                      help="Refits once keeping W at every checkpoint (the same numbers: recording changes "
                           "nothing), then lets you step through the optimisation.")
    if choice and str(choice.get("solver", "")).startswith("topo"):  # solver="auto" (issue 51)
        note_col.caption("This fit's graph is CoLiDE-TOPO's order search from the fast solver's point (a lower "
                         "score): played up to that point, along the central path; the swaps are not played.")
    if not st.session_state[ON_KEY]:
        from dashboard.infra.state import check as cs
        from dashboard.infra.jobs import stop_job

        if st.session_state.get(cs.PLAY_JOB) is not None:  # switched off while recording: stop it
            stop_job(st.session_state, cs.PLAY_SLOT)
            st.session_state[cs.PLAY_JOB] = None
        st.caption("Switch on to watch how W, the acyclicity h(W), the objective and σ̂ evolve along the "
                   "central path: the stages (μ, s) trade the data fit for acyclicity.")
        return
    from dashboard.infra.state import check as cs
    from dashboard.infra.jobs import follow_job, show_messages, start_job, stop_job

    ss = st.session_state
    key = (dataset.key, _record_params(result, dataset.shape[1]))
    stored = ss.get(cs.PLAY_RESULT)
    running = ss.get(cs.PLAY_JOB)
    if running is not None and not running.done and running.key != key:
        stop_job(ss, cs.PLAY_SLOT)  # recording another fit (the noise model changed): stop it
        ss[cs.PLAY_JOB] = None
    if ss.get(cs.PLAY_JOB) is None and (stored is None or stored["key"] != key):
        # a job like Learn's Run: a compute slot, progress, Stop and the session's end (issue 30)
        start_job(ss, cs.PLAY_SLOT, lambda: recording_job(dataset, result))
    follow_job(cs.PLAY_SLOT, harvest_recording(ss, cs.PLAY_RESULT))
    show_messages(ss, cs.PLAY_SLOT)
    stored = ss.get(cs.PLAY_RESULT)
    if stored is None or stored["key"] != key or stored["rec"] is None:
        st.button("Record again", key="learn_playback_again", icon=":material/replay:", on_click=start_job,
                  args=(ss, cs.PLAY_SLOT, lambda: recording_job(dataset, result)))
        return
    rec = stored["rec"]
    hist, Ws = rec["history"], rec["W"]
    n = len(Ws)
    if n == 0:
        st.info("This fit recorded no checkpoint.")
        return
    params = dict(rec["params"])
    mu = tuple(params.get("mu_schedule", MU_SCHEDULE))
    s_used = rec["s_used"]
    from dashboard.live import required_of

    page, captions = playback_html_cached(tuple(Ws), tuple(names), truth, threshold=float(threshold), history=hist,
                                          mu=mu, s_used=tuple(s_used), positions=positions,
                                          assets_url=vis_assets_url(), required=required_of(result, names))
    # One control (issue 28, point 3): the player inside the drawing (Play/Pause, a checkpoint slider,
    # speed, the checkpoint's caption) steps through the checkpoints in the browser, with no server
    # round trip. A second, Streamlit slider beside it disagreed with it as soon as Play ran. Full
    # width, so that labels stay readable at d = 30.
    st.iframe(set_playback_start(page, 0), height=PLAYBACK_HEIGHT)
    st.plotly_chart(playback_figure(hist, mu, s_used, None), key="learn_playback_chart")
    st.caption(f"{n} checkpoints recorded. The chart shows the whole solve; the drawing's own slider and Play "
               "step through it (its caption says which checkpoint is drawn).")
