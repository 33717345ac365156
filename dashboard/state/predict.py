"""Session-state keys of the Predict page (``pages/predict.py``): what an intervention would do.

:func:`init` is called from :func:`dashboard.state.init`, with every other key of the dashboard.
"""
from __future__ import annotations

from dashboard.jobs import JobSlot

__all__ = ["BOOT_JOB", "BOOT_RESULT", "BOOT_MESSAGES", "BOOT_SLOT", "WEIGHT_LABELS", "WIDGET_DEFAULTS", "init"]

#: :class:`dashboard.jobs.Job` refitting resamples for the prediction's intervals, or None.
BOOT_JOB = "pred_boot_job"
#: dict(key=(data key, params, node, kind, value, n_boot, seed), samples=ndarray) or None.
BOOT_RESULT = "pred_boot_result"
#: list of (level, text) messages about the last bootstrap.
BOOT_MESSAGES = "pred_boot_messages"
BOOT_SLOT = JobSlot(BOOT_JOB, BOOT_MESSAGES, stop_key="pred_boot_stop",
                    stop_help="Stops after the refit in progress; the intervals use the refits done.")

#: ``weights`` of :func:`colide_core.evaluation.interventions.predict_intervention` -> its label.
WEIGHT_LABELS = {"refit": "least squares on the learned parents", "fit": "the fit's weights"}

WIDGET_DEFAULTS = {
    "pred_model": "NV",
    "pred_node": None,  # the first node of the data when None
    "pred_kind": "Shift by k sd",
    "pred_k": 1.0,
    "pred_value": 0.0,
    "pred_n_boot": 30,
    "pred_weights": "refit",
}


def init(ss) -> None:
    """Fill in the missing keys of ``ss`` (the session state) with their defaults (idempotent)."""
    ss.setdefault(BOOT_JOB, None)
    ss.setdefault(BOOT_RESULT, None)
    ss.setdefault(BOOT_MESSAGES, [])
    for key, value in WIDGET_DEFAULTS.items():
        if key not in ss:
            ss[key] = value
