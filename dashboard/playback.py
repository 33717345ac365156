"""Watch the optimisation: play back the checkpoints of one fit (Learn page, "Playback" tab).

The fit shown on the Learn page is refitted once with ``record_W=True`` (the solver keeps a copy
of W at every checkpoint, :attr:`colide_core.SolverResult.W_history`; recording changes no number
of the fit, ``tests/test_record_w.py``), through the same cached :func:`dashboard.fitting.fit_colide`
keyed on the data's content hash and every parameter. A slider (and step buttons) picks a
checkpoint; the graph at that checkpoint is drawn with the same drawing and the same fixed node
positions as the Graph tab, thresholded like it, and plays the following checkpoints by itself
in the browser (:func:`colide_core.render.graph_html.playback_html`: Play/Pause, speed, no server
round trip per frame), beside h(W), the stage objective and σ̂ over the
checkpoints with the stages (μ, s) marked (:func:`dashboard.figures.playback_figure`).

Convention: ``W[i, j] != 0`` means the edge i -> j.
"""
from __future__ import annotations

import numpy as np
import streamlit as st

from colide_core.defaults import MU_SCHEDULE
from colide_core.render.graph_html import set_playback_start
from dashboard.assets import vis_assets_url
from dashboard.cached import playback_html_cached
from dashboard.figures import playback_figure
from dashboard.fitting import fit_colide

__all__ = ["PLAYBACK_MAX_NODES", "PLAYBACK_MAX_FRAMES", "STEP_KEY", "ON_KEY", "recorded_fit", "render_playback",
           "thin_frames"]

#: Largest graph offered for playback: above it a drawing per checkpoint is not readable and the
#: recorded W (checkpoints x d^2 numbers) grows large.
PLAYBACK_MAX_NODES = 50
#: Height (px) of the playback drawing with its player bar and caption.
PLAYBACK_HEIGHT = 560
#: Most checkpoints one playback page holds: longer recordings are thinned evenly, keeping the
#: first and the last (issue 30: 10,000 checkpoints made a 33 MB page, sent on every rerun).
PLAYBACK_MAX_FRAMES = 200
#: Session key of the checkpoint slider (initialised in :mod:`dashboard.state`).
STEP_KEY = "learn_playback_step"
#: Session key of the toggle that records the fit (so other tabs never pay for the recording).
ON_KEY = "learn_playback_on"


def recorded_fit(dataset, result):
    """The fit ``result`` again with ``record_W=True`` (cached), or None when it cannot be recorded.

    Parameters
    ----------
    dataset : dashboard.data.Dataset
        The current dataset (``X`` of shape (n_samples, n_nodes)); ``result`` was fitted on it.
    result : dashboard.fitting.FitResult

    Returns
    -------
    dashboard.fitting.FitResult or None
        Same parameters plus ``record_W=True``; its ``result.W_history`` holds one W per
        checkpoint. None for the order-search solver (``solver="topo"``), which has no
        continuous path to watch, or above :data:`PLAYBACK_MAX_NODES` nodes.
    """
    params = dict(result.params)
    if params.get("solver") == "topo" or len(result.node_names) > PLAYBACK_MAX_NODES:
        return None
    params["record_W"] = True
    return fit_colide(dataset.key, tuple(sorted(params.items())), dataset.X)


def _step(delta, n):
    st.session_state[STEP_KEY] = min(max(int(st.session_state.get(STEP_KEY, 0)) + delta, 0), n - 1)


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
    st.toggle("Record and play back this fit", key=ON_KEY,
              help="Refits once keeping W at every checkpoint (the same numbers: recording changes nothing), "
                   "then lets you step through the optimisation.")
    if not st.session_state[ON_KEY]:
        st.caption("Switch on to watch how W, the acyclicity h(W), the objective and σ̂ evolve along the "
                   "central path: the stages (μ, s) trade the data fit for acyclicity.")
        return
    rec = recorded_fit(dataset, result)
    hist, Ws = thin_frames(rec.result.history, rec.result.W_history or ())
    n = len(Ws)
    if n == 0:
        st.info("This fit recorded no checkpoint.")
        return
    ss = st.session_state
    if int(ss.get(STEP_KEY, 0)) > n - 1:
        ss[STEP_KEY] = n - 1
    c1, c2, c3 = st.columns([1, 1, 8])
    c1.button("", key="learn_playback_prev", icon=":material/skip_previous:", on_click=_step, args=(-1, n),
              help="Previous checkpoint")
    c2.button("", key="learn_playback_next", icon=":material/skip_next:", on_click=_step, args=(1, n),
              help="Next checkpoint")
    c3.slider("Checkpoint", min_value=0, max_value=n - 1, key=STEP_KEY,
              help="Each checkpoint is a snapshot of W during the solve; stages follow the central path "
                   "(μ shrinks, so the acyclicity term weighs more and more).")
    k = int(ss[STEP_KEY])
    params = dict(rec.params)
    mu = tuple(params.get("mu_schedule", MU_SCHEDULE))
    s_used = rec.result.s_used
    page, captions = playback_html_cached(tuple(Ws), tuple(names), truth, threshold=float(threshold), history=hist,
                                          mu=mu, s_used=tuple(s_used), positions=positions,
                                          assets_url=vis_assets_url())
    st.caption(captions[k])
    g, f = st.columns([1, 1])
    with g:
        # the drawing plays the checkpoints itself (Play/Pause, speed), opening on the slider's one
        st.iframe(set_playback_start(page, k), height=PLAYBACK_HEIGHT)
    with f:
        st.plotly_chart(playback_figure(hist, mu, s_used, k), key="learn_playback_chart")
