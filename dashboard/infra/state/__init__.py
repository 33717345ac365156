"""The one place where the dashboard's session state is declared and initialised.

Every key that must survive a rerun or a page switch is a constant here, and :func:`init`
(called at the top of ``app.py``, before any page runs) fills in the defaults. Widget keys
are initialised here too and the widgets are created with ``key=`` only (no ``value=``) and
``persist_state="session"``, so their values survive page switches.
"""
from __future__ import annotations

import streamlit as st

from colide_core import defaults
from colide_core.defaults import LAMBDA1, SOLVER, THRESHOLD
from dashboard.infra.jobs import JobSlot

__all__ = [
    "DATASET", "RESULTS", "FIT_JOB", "FIT_SLOT", "SOLVER_OVERRIDES", "FIT_MESSAGES", "FIT_MESSAGES_AT", "COMPARE_RESULTS",
    "COMPARE_JOB_MESSAGES", "UPLOAD_STATUS", "SIM_STATUS", "MANIFEST_STATUS", "LAST_FIT_TIME", "last_fit_time", "LIVE_HOLD", "LIVE_PREFETCH", "LIVE_REFINE", "LIVE_STEPS", "live_step_cost", "record_live_step", "LAMBDA_MOVED", "URL_RESTORED", "XFORM_RAW", "WIDGET_DEFAULTS", "sachs", "init", "current_dataset", "set_dataset",
    "results_for_current",
]

# --- non-widget state -------------------------------------------------------------------
#: :class:`dashboard.data.Dataset` currently analysed (Sachs until the user picks another).
DATASET = "dataset"
#: dict variant ("ev"/"nv") -> :class:`dashboard.fitting.FitResult` for the current dataset.
RESULTS = "fit_results"
#: :class:`dashboard.fitting.FitJob` running in the background, or None.
FIT_JOB = "fit_job"
#: dict of extra ``colide_core.CoLiDE`` keyword arguments (e.g. a shorter ``max_iter`` for
#: tests); merged into every fit and part of the cache key.
SOLVER_OVERRIDES = "solver_overrides"
#: list of (level, text) messages produced by the last finished fit job ("error"/"warning"/"success").
FIT_MESSAGES = "fit_messages"
#: ``(messages, settings)``: the Learn page's :data:`FIT_MESSAGES` as first shown and the settings
#: (data, λ, noise model, solver options) they were shown at; a change of those drops them
#: (``pages/learn.py``, ``_drop_stale_messages``), so a finished Run's lines never stay above the
#: drawings of another λ.
FIT_MESSAGES_AT = "fit_messages_at"
#: The Learn page's fit job (:mod:`dashboard.infra.jobs`).
FIT_SLOT = JobSlot(FIT_JOB, FIT_MESSAGES, stop_key="learn_stop",
                   stop_help="Stops the solver at its next checkpoint and keeps the partial result.")
#: dict with the per-run rows (DataFrame) and a description of the last comparison, or None.
COMPARE_RESULTS = "compare_results"
#: list of (level, text) messages of the last comparison.
COMPARE_JOB_MESSAGES = "compare_messages"
#: (level, markdown text, already escaped) about the last upload, or None.
UPLOAD_STATUS = "upload_status"
#: (level, text) about the last simulation, or None.
SIM_STATUS = "sim_status"
#: (level, markdown text, already escaped) about the last run manifest loaded on the Learn page, or None.
MANIFEST_STATUS = "manifest_status"
#: Solver wall time (s) of the slowest fit last shown on the Learn page, or None: the measurement
#: behind every time estimate the help texts give (never a hard-coded time).
LAST_FIT_TIME = "last_fit_time"
#: True while the Learn page shows a loaded run manifest's fit: loading never runs the solver, so
#: the live re-solving waits until the user moves λ or the noise model.
LIVE_HOLD = "learn_live_hold"
#: The Learn page's background job warming the cache for the neighbouring λ values
#: (:func:`dashboard.live.prefetch_neighbours`), or None.
LIVE_PREFETCH = "learn_live_prefetch"
#: The live page's refinement job (``dashboard.live.refine``): ``solver="auto"``'s order search
#: after the fast answer is drawn (issue 51).
LIVE_REFINE = "learn_live_refine"
#: ``(dataset key, solver, (seconds, ...))``: the wall time of this session's last live steps that
#: computed something (a cache hit costs what the lookup costs). The Learn page decides liveness
#: from the lower of the last two (issue 48, M-5: a cached fit's time measured under load, or one
#: slow step, never flips the page to "Press Run").
LIVE_STEPS = "learn_live_steps"
#: True once the user moved the λ slider in this session: only then are neighbours prefetched.
LAMBDA_MOVED = "learn_lambda_moved"
#: The current data before any transform (a :class:`dashboard.data.Dataset`), for the Data page's
#: Undo, or None: one dataset per session at most.
XFORM_RAW = "data_xform_raw"
#: True once this session has applied the view its URL describes (dashboard.infra.urlstate): a link
#: sets the view when the session opens, never again over the user's own changes.
URL_RESTORED = "url_restored"

# --- widget state (key -> default) -------------------------------------------------------
WIDGET_DEFAULTS = {
    # Data page
    "data_drop_non_numeric": False,
    "data_drop_nonfinite_rows": False,
    "data_drop_constant": False,
    "data_condition_column": "",  # an upload's condition column ("" = one condition)
    "data_targets_text": "",  # an upload's intervention targets (JSON or CSV text)
    "data_sachs_rows": "baseline",  # dashboard.data.SACHS_ROW_LABELS
    "data_sachs_truth": "consensus17",  # dashboard.data.SACHS_TRUTH_LABELS
    "data_net_name": "ecoli70",  # a bnlearn network (colide_core.data.networks.NETWORKS)
    "data_net_n": 1000,
    "data_net_seed": 0,
    "data_net_iv": 0,  # interventional conditions, one random target each
    # Sidebar (every page): which CoLiDE solver; "adam" is written into SOLVER_OVERRIDES
    "solver_choice": SOLVER,
    # Learn page
    "learn_variant": "Both",  # EV, NV or Both (dashboard.fitting.NOISE_CHOICES)
    "learn_lambda1": LAMBDA1,
    "learn_threshold": THRESHOLD,
    "learn_graph_variant": "NV",
    "learn_layout": "Circle",
    "learn_tab": "Graph",  # the open tab of the results (stateful st.tabs)
    "learn_playback_on": False,  # Playback tab: record the fit's checkpoints (dashboard.playback)
    # Simulate page
    "sim_d": 10,
    "sim_degree": 2.0,
    "sim_graph_type": "ER",
    "sim_noise_type": "gaussian",
    "sim_variance": "NV",
    "sim_noise_var": 1.0,
    "sim_noise_var_range": (0.5, 10.0),
    "sim_w_range": defaults.SIM_W_RANGE,
    "sim_n": 1000,
    "sim_seed": 0,
    "sim_standardize": False,
    "sim_interventions": 0,  # interventional conditions (dashboard.simulation.SimConfig)
    "sim_iv_targets": 1,
    "sim_mean_shift": 0.0,
    # Compare page
    "cmp_methods": ["CoLiDE-EV", "CoLiDE-NV"],
    "cmp_reps": 3,
    "cmp_threshold": THRESHOLD,
    "cmp_parallel": False,
    "cmp_source": "simulated",
}


def init() -> None:
    """Fill in every missing session-state key with its default (idempotent).

    The default dataset (Sachs) is loaded here on the first run of a session.
    """
    ss = st.session_state
    if DATASET not in ss:
        ss[DATASET] = sachs()
    ss.setdefault(RESULTS, {})
    ss.setdefault(FIT_JOB, None)
    ss.setdefault(SOLVER_OVERRIDES, {})
    ss.setdefault(FIT_MESSAGES, [])
    ss.setdefault(FIT_MESSAGES_AT, ((), None))
    ss.setdefault(COMPARE_RESULTS, None)
    ss.setdefault(COMPARE_JOB_MESSAGES, [])
    ss.setdefault(UPLOAD_STATUS, None)
    ss.setdefault(SIM_STATUS, None)
    ss.setdefault(MANIFEST_STATUS, None)
    ss.setdefault("lesson_current", None)  # dashboard.lessons.CURRENT_LESSON: the lesson last loaded
    ss.setdefault(LAST_FIT_TIME, None)
    ss.setdefault(LIVE_HOLD, False)
    ss.setdefault(LIVE_PREFETCH, None)
    ss.setdefault(LIVE_REFINE, None)
    ss.setdefault(LIVE_STEPS, None)
    ss.setdefault(LAMBDA_MOVED, False)
    ss.setdefault(URL_RESTORED, False)
    ss.setdefault(XFORM_RAW, None)
    for key, value in WIDGET_DEFAULTS.items():
        if key not in ss:
            ss[key] = list(value) if isinstance(value, list) else value
    from dashboard.infra.state import trust as trust_state  # keys of the Edge confidence / Explorer / Prior knowledge pages

    trust_state.init(ss)
    from dashboard.infra.state import check as check_state  # keys of the Check page

    check_state.init(ss)
    from dashboard.infra.state import predict as predict_state  # keys of the Predict page

    predict_state.init(ss)


@st.cache_data(show_spinner=False)
def sachs():
    """The bundled Sachs :class:`dashboard.data.Dataset` (loaded once per process)."""
    from dashboard.data import sachs_dataset

    return sachs_dataset()


def last_fit_time(solver=None):
    """Seconds the last fit on the current dataset took, or None.

    ``LAST_FIT_TIME`` holds ``(dataset key, seconds, solver)``: a time measured on another dataset
    says nothing about this one (issue 28: "the last fit took 580 ms" was a d = 50 fit shown on
    d = 100, where a fit takes 8 s), nor one of another solver (the Learn page decides liveness
    from it: :func:`dashboard.fitting.live_reason`).

    Parameters
    ----------
    solver : str, optional
        Only a time measured with this solver counts.

    Returns
    -------
    float or None
    """
    rec = st.session_state.get(LAST_FIT_TIME)
    if not rec or not isinstance(rec, tuple) or rec[0] != current_dataset().key:
        return None
    if solver is not None and (len(rec) < 3 or rec[2] != solver):
        return None
    return float(rec[1])


def live_step_cost(solver):
    """The lower of this session's last two live step costs on the current dataset with ``solver``
    (seconds), or None before any (:data:`LIVE_STEPS`)."""
    rec = st.session_state.get(LIVE_STEPS)
    if not rec or rec[0] != current_dataset().key or rec[1] != solver or not rec[2]:
        return None
    return float(min(rec[2][-2:]))


def record_live_step(solver, seconds) -> None:
    """Add one live step's wall seconds to :data:`LIVE_STEPS` (the last two are kept)."""
    key = current_dataset().key
    rec = st.session_state.get(LIVE_STEPS)
    prev = rec[2] if rec and rec[0] == key and rec[1] == solver else ()
    st.session_state[LIVE_STEPS] = (key, solver, (tuple(prev) + (float(seconds),))[-2:])


def current_dataset():
    """Return the current :class:`dashboard.data.Dataset`."""
    return st.session_state[DATASET]


def set_dataset(dataset, *, settings_given=False) -> None:
    """Make ``dataset`` current: forget fit results and cancel a running fit if it changed.

    Parameters
    ----------
    dataset : dashboard.data.Dataset
    settings_given : bool, default=False
        True when the caller sets Learn's λ and threshold itself right after (a lesson, a link).
        Otherwise they carry over only to data with the same columns (a transform, a re-upload,
        another seed of the same simulation) and are reset to the paper's defaults for other
        data: a lesson's λ = 0.001 turned a new d = 30 simulation into a 305-edge hairball
        (issue 28). Either way a non-default setting is never changed or kept silently.
    """
    ss = st.session_state
    old = ss.get(DATASET)
    ss[DATASET] = dataset
    if old is None or old.key != dataset.key:
        ss[RESULTS] = {}
        ss[FIT_MESSAGES] = []
        ss[COMPARE_RESULTS] = None
        ss[COMPARE_JOB_MESSAGES] = []
        ss[MANIFEST_STATUS] = None
        ss[LIVE_HOLD] = False
        job = ss.get(FIT_JOB)
        if job is not None:
            job.request_stop()
            ss[FIT_JOB] = None
        _drop_prior_knowledge_that_does_not_fit(dataset)
        raw = ss.get(XFORM_RAW)
        if raw is not None and dataset.key != raw.key and dataset.meta.get("transform_base") != raw.key:
            ss[XFORM_RAW] = None  # other data: nothing of theirs to undo, and the memory is freed
        if old is not None and not settings_given:
            _carry_settings(ss, old, dataset)
    from dashboard.infra import memory

    memory.record(dataset, ss.get(XFORM_RAW), keys=(DATASET, XFORM_RAW))  # the server-wide budget


def _carry_settings(ss, old, new) -> None:
    """Keep or reset Learn's λ and threshold for a new dataset, and say which (see :func:`set_dataset`)."""
    from dashboard.infra.text import fmt_lambda

    lam, thr = float(ss.get("learn_lambda1", LAMBDA1)), float(ss.get("learn_threshold", THRESHOLD))
    if lam == LAMBDA1 and thr == THRESHOLD:
        return
    now = f"λ = {fmt_lambda(lam)}, threshold {thr:g}"
    if old.node_names == new.node_names:
        ss[FIT_MESSAGES] = ss[FIT_MESSAGES] + [("info", f"{now} carried over from the previous data (same columns).")]
        return
    ss["learn_lambda1"], ss["learn_threshold"] = LAMBDA1, THRESHOLD
    ss[FIT_MESSAGES] = ss[FIT_MESSAGES] + [(
        "info", f"New data with other columns: λ and threshold were reset to the paper's defaults "
                f"(λ = {fmt_lambda(LAMBDA1)}, threshold {THRESHOLD:g}) from {now}.")]


def _drop_prior_knowledge_that_does_not_fit(dataset) -> None:
    """Set aside prior knowledge that names nodes the new dataset lacks, and say so.

    Knowledge written for one dataset used to outlive it: after switching to a lesson, an upload
    or a simulation, every fit failed with "unknown node 'Raf'" until the user found the Prior
    knowledge page (issue 30). Knowledge that still fits the new columns is kept.
    """
    from colide_core.graph.constraints import PRIOR_KEYS, PriorKnowledge

    ss = st.session_state
    overrides = dict(ss.get(SOLVER_OVERRIDES) or {})
    kept = {k: v for k, v in overrides.items() if k not in PRIOR_KEYS}
    if kept == overrides:
        return
    names = list(dataset.node_names)
    try:
        prior = PriorKnowledge.from_params(overrides)
        prior.resolve(len(names), names)
        return  # it fits the new dataset's nodes
    except ValueError as exc:
        ss[SOLVER_OVERRIDES] = kept
        from dashboard.infra.text import md_escape

        ss[FIT_MESSAGES] = [("warning", f"The prior knowledge ({prior_summary(overrides)}) does not fit this dataset "
                             f"({md_escape(exc)}); it is set aside. Write new knowledge on the Prior knowledge "
                             "page.")]


def prior_summary(params) -> str:
    """``PriorKnowledge.summary()`` of ``params``, or "malformed" (plain text, not escaped)."""
    from colide_core.graph.constraints import PriorKnowledge

    try:
        return PriorKnowledge.from_params(params).summary() or "none"
    except ValueError:
        return "malformed"


def results_for_current() -> dict:
    """Fit results (variant -> FitResult) that belong to the current dataset."""
    key = current_dataset().key
    return {v: r for v, r in st.session_state[RESULTS].items() if r.data_key == key}
