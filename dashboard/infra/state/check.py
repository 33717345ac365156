"""Session-state keys of the Check page (``pages/check.py``) and of the Learn page's Playback job.

:func:`init` is called from :func:`dashboard.infra.state.init` (one line there), so these keys get their
defaults in the same place and at the same time as every other key of the dashboard. Widgets are
created with ``key=`` only.

The heavy work of both pages runs as :class:`dashboard.infra.jobs.Job` s in the slots below (issue 30,
point 3): the checks (Markov check with up to 1,000 random DAGs, standardise-and-refit and up to 50
rescaling refits), the Check page's λ path and Playback's recorded refit each wait for a
server-wide compute slot, stop on their Stop button and end with their session.
"""
from __future__ import annotations

from dashboard.infra.jobs import JobSlot

__all__ = ["REFERENCE", "REF_STATUS", "REFITS", "PATH", "CHECK_JOB", "CHECK_RESULT", "CHECK_MESSAGES",
           "CHECK_SLOT", "PATH_JOB", "PATH_MESSAGES", "PATH_SLOT", "PLAY_JOB", "PLAY_RESULT", "PLAY_MESSAGES",
           "PLAY_SLOT", "WIDGET_DEFAULTS", "init"]

#: dict(key=dataset content hash, name=file name, ref=colide_core.graph.reference.Reference) or None:
#: the user's reference graph for the current dataset ("against your reference").
REFERENCE = "check_reference"
#: (level, markdown text, already escaped) about the last reference upload, or None.
REF_STATUS = "check_ref_status"
#: set of (dataset key, params, threshold) for which "Standardise and refit" was asked.
REFITS = "check_refits"
#: dict(key=(dataset key, variant, overrides), path=colide_core.solver.path.LambdaPath) or None.
PATH = "check_path"
#: :class:`dashboard.infra.jobs.Job` running the checks of one fit, or None.
CHECK_JOB = "check_job"
#: dict(key=tuple, report=CheckReport or None, error=str or None) of the last checks, or None.
CHECK_RESULT = "check_result"
#: list of (level, text) messages about the last checks job.
CHECK_MESSAGES = "check_messages"
#: :class:`dashboard.infra.jobs.Job` solving the Check page's λ path, or None.
PATH_JOB = "check_path_job"
#: list of (level, text) messages about the last λ path job.
PATH_MESSAGES = "check_path_messages"
#: :class:`dashboard.infra.jobs.Job` recording the Playback refit (``record_W=True``), or None.
PLAY_JOB = "learn_playback_job"
#: dict(key=(dataset key, params), rec=dict(history, W, params, s_used) or None) of the last recording
#: (thinned to dashboard.playback.PLAYBACK_MAX_FRAMES checkpoints), or None.
PLAY_RESULT = "learn_playback_result"
#: list of (level, text) messages about the last recording job.
PLAY_MESSAGES = "learn_playback_messages"

CHECK_SLOT = JobSlot(CHECK_JOB, CHECK_MESSAGES, stop_key="check_stop",
                     stop_help="Stops the checks and shows what is done (the Markov check's random graphs "
                               "tested so far; refits not finished are left out).")
PATH_SLOT = JobSlot(PATH_JOB, PATH_MESSAGES, stop_key="check_path_stop", stop_help="Keeps the λ values solved so far.")
PLAY_SLOT = JobSlot(PLAY_JOB, PLAY_MESSAGES, stop_key="learn_playback_stop",
                    stop_help="Stops the recording (nothing is played back).")

WIDGET_DEFAULTS = {
    "check_variant": "NV",
    "check_n_random": 100,
    "check_n_rescale": 3,
    "check_tab": "Verdicts",  # the open tab (stateful st.tabs)
}


def init(ss) -> None:
    """Fill in the missing keys of ``ss`` (the session state) with their defaults (idempotent)."""
    ss.setdefault(REFERENCE, None)
    ss.setdefault(REF_STATUS, None)
    ss.setdefault(REFITS, set())
    for key in (PATH, CHECK_JOB, CHECK_RESULT, PATH_JOB, PLAY_JOB, PLAY_RESULT):
        ss.setdefault(key, None)
    for key in (CHECK_MESSAGES, PATH_MESSAGES, PLAY_MESSAGES):
        ss.setdefault(key, [])
    for key, value in WIDGET_DEFAULTS.items():
        if key not in ss:
            ss[key] = value
