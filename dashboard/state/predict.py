"""Session-state keys of the Predict page (``pages/predict.py``): what an intervention would do.

:func:`init` is called from :func:`dashboard.state.init`, with every other key of the dashboard.
"""
from __future__ import annotations

from dashboard.jobs import JobSlot

__all__ = ["BOOT_JOB", "BOOT_RESULT", "BOOT_MESSAGES", "BOOT_SLOT", "PLAN_JOB", "PLAN_RESULT", "PLAN_MESSAGES",
           "PLAN_SLOT", "LAST_PREDICTION", "for_report", "TRY_JOB", "TRY_RESULT", "TRY_MESSAGES", "TRY_SLOT", "WEIGHT_LABELS", "WIDGET_DEFAULTS",
           "SEM_WEIGHTS", "init"]

#: :class:`dashboard.jobs.Job` refitting resamples for the prediction's intervals, or None.
BOOT_JOB = "pred_boot_job"
#: dict(key=(data key, params, node, kind, value, n_boot, seed), samples=ndarray) or None.
BOOT_RESULT = "pred_boot_result"
#: list of (level, text) messages about the last bootstrap.
BOOT_MESSAGES = "pred_boot_messages"
BOOT_SLOT = JobSlot(BOOT_JOB, BOOT_MESSAGES, stop_key="pred_boot_stop",
                    stop_help="Stops after the refit in progress; the intervals use the refits done.")

#: dict(key=(data key, fit key, threshold), prediction=InterventionPrediction): the last one shown.
LAST_PREDICTION = "pred_last"

#: :class:`dashboard.jobs.Job` ranking the candidate experiments (``rank_interventions``), or None.
PLAN_JOB = "plan_job"
#: dict(key=(data key, fit key, threshold, n_boot), table=DataFrame) or None.
PLAN_RESULT = "plan_result"
PLAN_MESSAGES = "plan_messages"
PLAN_SLOT = JobSlot(PLAN_JOB, PLAN_MESSAGES, stop_key="plan_stop",
                    stop_help="Stops after the refit in progress; the ranking uses the refits done.")
#: :class:`dashboard.jobs.Job` running a planned experiment on simulated data and refitting, or None.
TRY_JOB = "plan_try_job"
#: dict(key=(plan key, node, rows), shd_before=int, shd_after=int, ...) or None.
TRY_RESULT = "plan_try_result"
TRY_MESSAGES = "plan_try_messages"
TRY_SLOT = JobSlot(TRY_JOB, TRY_MESSAGES, stop_key="plan_try_stop",
                   stop_help="Stops the refit; nothing is shown.")

#: ``weights`` of :func:`colide_core.evaluation.interventions.predict_intervention` -> its label.
WEIGHT_LABELS = {"auto": "by the noise model (NV: the fit's; EV: least squares)",
                 "refit": "least squares on the learned parents", "fit": "the fit's weights"}
#: dict(key=(data key, fit key, threshold), W=ndarray): the least-squares SEM weights of the fit shown
#: (``refit_weights``), computed once per dataset, fit and threshold, not on every rerun (issue 53).
SEM_WEIGHTS = "pred_sem_weights"

WIDGET_DEFAULTS = {
    "pred_model": "NV",
    "pred_node": None,  # the first node of the data when None
    "pred_kind": "Shift by k sd",
    "pred_k": 1.0,
    "pred_value": 0.0,
    "pred_n_boot": 30,
    "pred_weights": "auto",
    "plan_n_boot": 20,
    "plan_pick": None,  # the best candidate when None
    "plan_try_rows": 500,
}


def init(ss) -> None:
    """Fill in the missing keys of ``ss`` (the session state) with their defaults (idempotent)."""
    ss.setdefault(BOOT_JOB, None)
    ss.setdefault(BOOT_RESULT, None)
    ss.setdefault(BOOT_MESSAGES, [])
    for k, v in ((LAST_PREDICTION, None), (SEM_WEIGHTS, None), (PLAN_JOB, None), (PLAN_RESULT, None), (PLAN_MESSAGES, []), (TRY_JOB, None), (TRY_RESULT, None),
                 (TRY_MESSAGES, [])):
        ss.setdefault(k, v)
    for key, value in WIDGET_DEFAULTS.items():
        if key not in ss:
            ss[key] = value


def for_report(ss, data_key, fit_key, threshold) -> tuple:
    """``(predictions, plan)`` of the Predict page for the report of one fit: the last prediction
    shown and the last ranking, when they were made of this dataset, fit and threshold; else
    ``((), None)``.
    """
    want = (data_key, fit_key, float(threshold))
    last = ss.get(LAST_PREDICTION)
    predictions = (last["prediction"],) if last is not None and tuple(last["key"]) == want else ()
    plan = ss.get(PLAN_RESULT)
    plan = plan["table"] if plan is not None and tuple(plan["key"][:3]) == want else None
    return predictions, plan
