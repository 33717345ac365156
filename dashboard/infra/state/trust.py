"""Session-state keys of the "trust the edges" pages (Edge confidence, Explorer, Prior knowledge).

:func:`init` is called from :func:`dashboard.infra.state.init` (one line there), so these keys get
their defaults in the same place and at the same time as every other key of the dashboard.
Widgets are created with ``key=`` only, as on the other pages.
"""
from __future__ import annotations

from colide_core.defaults import LAMBDA1, THRESHOLD
from dashboard.infra.jobs import JobSlot

__all__ = [
    "BOOT_JOB", "BOOT_RESULT", "BOOT_MESSAGES", "STAB_JOB", "STAB_RESULT", "STAB_MESSAGES", "PATH_JOB", "PATH_RESULT", "PATH_MESSAGES",
    "BOOT_SLOT", "STAB_SLOT", "PATH_SLOT", "EXPLORER_CELL", "EXPLORER_LAST_CLICK",
    "PRIOR", "PRIOR_DRAFT", "PRIOR_BASE", "PRIOR_VERSION", "PRIOR_MESSAGES", "WIDGET_DEFAULTS", "init",
]

#: :class:`dashboard.infra.jobs.Job` running a bootstrap, or None.
BOOT_JOB = "trust_boot_job"
#: dict(key=(data hash, params, n_boot, seed), result=BootstrapResult, seconds=float) or None.
BOOT_RESULT = "trust_boot_result"
#: list of (level, text) messages about the last bootstrap.
BOOT_MESSAGES = "trust_boot_messages"
#: :class:`dashboard.infra.jobs.Job` running stability selection, or None.
STAB_JOB = "trust_stab_job"
#: dict(key=(data hash, params, lambdas, n_subsamples, pi_thr, seed), result=StabilityResult) or None.
STAB_RESULT = "trust_stab_result"
#: list of (level, text) messages about the last stability selection.
STAB_MESSAGES = "trust_stab_messages"
#: :class:`dashboard.infra.jobs.Job` solving a lambda path, or None.
PATH_JOB = "trust_path_job"
#: dict(key=(data hash, variant, lambdas, thresholds, overrides), path=LambdaPath, metrics=dict or None,
#: seconds=float) or None.
PATH_RESULT = "trust_path_result"
#: list of (level, text) messages about the last lambda path.
PATH_MESSAGES = "trust_path_messages"
#: The jobs of the Edge confidence and Explorer pages (:mod:`dashboard.infra.jobs`).
BOOT_SLOT = JobSlot(BOOT_JOB, BOOT_MESSAGES, stop_key="boot_stop",
                    stop_help="Stops after the resamples in progress and keeps what is done.")
STAB_SLOT = JobSlot(STAB_JOB, STAB_MESSAGES, stop_key="stab_stop",
                    stop_help="Stops at the next progress report and keeps what is done.")
PATH_SLOT = JobSlot(PATH_JOB, PATH_MESSAGES, stop_key="exp_stop", stop_help="Keeps the λ values solved so far.")
#: (i_lambda, i_threshold) of the explorer cell whose graph is shown, or None.
EXPLORER_CELL = "trust_explorer_cell"
#: The last plotly click processed on the explorer heatmap (so a kept selection is not re-applied).
EXPLORER_LAST_CLICK = "trust_explorer_last_click"
#: The applied :class:`colide_core.graph.constraints.PriorKnowledge`, or None (also merged into
#: ``solver_overrides`` so every fit enforces it).
PRIOR = "prior_knowledge"
#: dict kind -> DataFrame: the tables as last edited (survive page switches).
PRIOR_DRAFT = "prior_draft"
#: dict kind -> DataFrame: the tables the live editors started from.
PRIOR_BASE = "prior_base"
#: int, bumped to re-create the editors (after loading a JSON file).
PRIOR_VERSION = "prior_version"
#: list of (level, text) messages of the Prior knowledge page.
PRIOR_MESSAGES = "prior_messages"

WIDGET_DEFAULTS = {
    # Edge confidence page
    "boot_follow_learn": True,  # λ, threshold and noise model follow the Learn page until changed here
    "boot_variant": "NV",
    "boot_lambda1": LAMBDA1,
    "boot_threshold": THRESHOLD,
    "boot_n": 30,
    "boot_jobs": 1,
    "boot_seed": 0,
    "boot_min_freq": 70,
    "stab_lambdas": [0.02, 0.05, 0.1],
    "stab_n": 20,
    "stab_pi": 0.75,
    # Explorer page
    "exp_variant": "NV",
    "exp_lambda_range": (0.005, 0.5),  # smallest and largest λ of the path
    "exp_n_lambdas": 9,
    "exp_thresholds": [0.1, 0.2, 0.3, 0.4, 0.5],
    "exp_warm": True,
    "exp_warm_stages": 1,
    "exp_colour": "SHD",
    # Prior knowledge page
    "prior_json_text": "",
}


def init(ss) -> None:
    """Fill in the missing keys of ``ss`` (the session state) with their defaults (idempotent)."""
    for key in (BOOT_JOB, BOOT_RESULT, STAB_JOB, STAB_RESULT, PATH_JOB, PATH_RESULT, EXPLORER_CELL, EXPLORER_LAST_CLICK, PRIOR):
        ss.setdefault(key, None)
    ss.setdefault(BOOT_MESSAGES, [])
    ss.setdefault(STAB_MESSAGES, [])
    ss.setdefault(PATH_MESSAGES, [])
    ss.setdefault(PRIOR_DRAFT, {})
    ss.setdefault(PRIOR_BASE, {})
    ss.setdefault(PRIOR_VERSION, 0)
    ss.setdefault(PRIOR_MESSAGES, [])
    for key, value in WIDGET_DEFAULTS.items():
        if key not in ss:
            ss[key] = list(value) if isinstance(value, list) else value
