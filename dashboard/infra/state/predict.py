"""Session-state keys of the Predict page (``pages/predict.py``): what an intervention would do.

:func:`init` is called from :func:`dashboard.infra.state.init`, with every other key of the dashboard.
The page's two cached computations of the scale rule live here too (issue 52):
:func:`scale_verdict_of` (whether the variables' scales carry CoLiDE's result) and
:func:`ges_cpdag_of` (GES's CPDAG for the GES + IDA columns, a job: :data:`GES_SLOT`,
:func:`ges_job`), with :func:`ges_ida_for` and :func:`with_ges_ida`, the columns it adds to the
page's table.
"""
from __future__ import annotations

import collections

import numpy as np
import pandas as pd

from dashboard.caching import cache_data, dataset_cache_key
from dashboard.infra import workers
from dashboard.infra.jobs import JobSlot

__all__ = ["BOOT_JOB", "BOOT_RESULT", "BOOT_MESSAGES", "BOOT_SLOT", "PLAN_JOB", "PLAN_RESULT", "PLAN_MESSAGES",
           "PLAN_SLOT", "LAST_PREDICTION", "for_report", "TRY_JOB", "TRY_RESULT", "TRY_MESSAGES", "TRY_SLOT", "WEIGHT_LABELS", "WIDGET_DEFAULTS",
           "SEM_WEIGHTS", "init", "refits_cost_text", "GES_JOB", "GES_RESULT", "GES_MESSAGES", "GES_SLOT", "scale_verdict_of",
           "ges_cpdag_of", "ges_known", "with_ges_ida", "GES_COLUMNS", "ges_cost_text", "ges_job", "harvest_ges",
           "ges_ida_for", "ges_ready"]

#: :class:`dashboard.infra.jobs.Job` refitting resamples for the prediction's intervals, or None.
BOOT_JOB = "pred_boot_job"
#: dict(key=(data key, params, node, kind, value, n_boot, seed), samples=ndarray) or None.
BOOT_RESULT = "pred_boot_result"
#: list of (level, text) messages about the last bootstrap.
BOOT_MESSAGES = "pred_boot_messages"
BOOT_SLOT = JobSlot(BOOT_JOB, BOOT_MESSAGES, stop_key="pred_boot_stop",
                    stop_help="Stops after the refit in progress; the intervals use the refits done.")

#: dict(key=(data key, fit key, threshold), prediction=InterventionPrediction): the last one shown.
LAST_PREDICTION = "pred_last"

#: :class:`dashboard.infra.jobs.Job` ranking the candidate experiments (``rank_interventions``), or None.
PLAN_JOB = "plan_job"
#: dict(key=(data key, fit key, threshold, n_boot), table=DataFrame) or None.
PLAN_RESULT = "plan_result"
PLAN_MESSAGES = "plan_messages"
PLAN_SLOT = JobSlot(PLAN_JOB, PLAN_MESSAGES, stop_key="plan_stop",
                    stop_help="Stops after the refit in progress; the ranking uses the refits done.")
#: :class:`dashboard.infra.jobs.Job` running a planned experiment on simulated data and refitting, or None.
TRY_JOB = "plan_try_job"
#: dict(key=(plan key, node, rows), shd_before=int, shd_after=int, ...) or None.
TRY_RESULT = "plan_try_result"
TRY_MESSAGES = "plan_try_messages"
TRY_SLOT = JobSlot(TRY_JOB, TRY_MESSAGES, stop_key="plan_try_stop",
                   stop_help="Stops the refit; nothing is shown.")

#: GES + IDA beside CoLiDE (issue 52): the columns :func:`with_ges_ida` adds beside CoLiDE's shift;
#: the job running GES on the data (:func:`ges_job`, or None), its result dict(key=dataset cache key,
#: C=ndarray, the CPDAG) or None, and its messages.
GES_COLUMNS = ("shift (sd), GES + IDA (mean)", "GES + IDA: possible shifts (sd)")
GES_JOB, GES_RESULT, GES_MESSAGES = "pred_ges_job", "pred_ges_result", "pred_ges_messages"
GES_SLOT = JobSlot(GES_JOB, GES_MESSAGES, stop_key="pred_ges_stop",
                   stop_help=(f"GES's search hears no Stop: its worker process is ended {workers.STOP_GRACE_S:g} s "
                              "after the request, and nothing is kept." if workers.ENABLED else
                              "GES cannot be interrupted inside its search: Stop drops its answer when the search "
                              "ends."))
#: What the GES job's status says while causal-learn searches (it reports no progress inside).
_GES_STATUS = "GES: searching the equivalence classes (no progress inside the search)"

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
    for k, v in ((GES_JOB, None), (GES_RESULT, None), (GES_MESSAGES, []),
                 (LAST_PREDICTION, None), (SEM_WEIGHTS, None), (PLAN_JOB, None), (PLAN_RESULT, None), (PLAN_MESSAGES, []), (TRY_JOB, None), (TRY_RESULT, None),
                 (TRY_MESSAGES, [])):
        ss.setdefault(k, v)
    for key, value in WIDGET_DEFAULTS.items():
        if key not in ss:
            ss[key] = value


def for_report(ss, data_key, fit_key, threshold) -> tuple:
    """``(predictions, plan, ida_predictions)`` of the Predict page for the report of one fit: the
    last prediction shown, the last ranking and the GES + IDA prediction shown beside it (issue 52),
    when they were made of this dataset, fit and threshold; else ``((), None, ())``.
    """
    want = (data_key, fit_key, float(threshold))
    last = ss.get(LAST_PREDICTION)
    mine = last is not None and tuple(last["key"]) == want
    predictions = (last["prediction"],) if mine else ()
    ida = (last.get("ida"),) if mine else ()
    plan = ss.get(PLAN_RESULT)
    plan = plan["table"] if plan is not None and tuple(plan["key"][:3]) == want else None
    return predictions, plan, ida


@cache_data(show_spinner=False, max_entries=64)
def scale_verdict_of(dataset, A):
    """:func:`colide_core.evaluation.scale.scale_verdict` of a dataset and a learned graph.

    Parameters
    ----------
    dataset : dashboard.data.Dataset
        Its ``X`` (n_samples, n_nodes) and its transform steps (``meta["transform"]``).
    A : ndarray of shape (n_nodes, n_nodes)
        The thresholded graph shown, ``A[i, j] != 0`` meaning i -> j.

    Returns
    -------
    colide_core.evaluation.scale.ScaleVerdict
    """
    from colide_core.evaluation.scale import scale_verdict

    return scale_verdict(dataset.X, np.asarray(A, dtype=float), transforms=dataset.meta.get("transform", ()))


#: Dataset cache keys whose GES CPDAG :func:`ges_cpdag_of` computed in this process, newest last.
_GES_DONE = collections.deque(maxlen=16)


@cache_data(show_spinner=False, max_entries=16, unhashed={
    "_conditions": "the dataset's key covers its rows' condition labels (dashboard.data.content_hash)"})
def ges_cpdag_of(dataset, _conditions=None):
    """GES's CPDAG of a dataset (:func:`colide_core.evaluation.scale.ges_ida_cpdag`), once per dataset.

    Parameters
    ----------
    dataset : dashboard.data.Dataset
        Its ``X`` (n_samples, n_nodes).
    _conditions : array-like of shape (n_samples,), optional
        The rows' conditions (each centred on its own means before the search).

    Returns
    -------
    ndarray of shape (n_nodes, n_nodes), dtype int8
        The CPDAG in gadjid's coding.
    """
    from colide_core.evaluation.scale import ges_ida_cpdag

    # In the GES job's worker process: its search hears no Stop, so Stop ends the process
    # (dashboard.infra.workers.STOP_GRACE_S later) and frees the job's compute slot; a stopped or
    # failed search raises, and nothing is cached.
    C = workers.in_worker(ges_ida_cpdag, dataset.X, conditions=_conditions, callback=_ges_progress)
    _GES_DONE.append(dataset_cache_key(dataset))
    return C


def _ges_progress(done, total) -> bool:
    """The GES job's progress (``callback(done, total)`` of :func:`ges_ida_cpdag`); whether to stop."""
    job = workers.current_job()
    if job is None:
        return False
    return bool(job.report(0.05 + 0.9 * float(done) / (float(total) or 1.0), _GES_STATUS))


def ges_known(dataset) -> bool:
    """Whether :func:`ges_cpdag_of` computed this dataset's CPDAG in this process (a cache hit)."""
    return dataset_cache_key(dataset) in _GES_DONE


def with_ges_ida(shown, ida_pred) -> pd.DataFrame:
    """The page's table with the GES + IDA columns (:data:`GES_COLUMNS`) beside CoLiDE's shift.

    Parameters
    ----------
    shown : pandas.DataFrame
        :func:`dashboard.planning.prediction_frame`'s table (index: node names), not modified.
    ida_pred : colide_core.evaluation.scale.IDAPrediction

    Returns
    -------
    pandas.DataFrame
        ``shown`` with, right after ``shift (sd), doing``, the mean of GES + IDA's possible shifts
        (sd, 3 decimals) and their range as text (``"0.12 … 1.5"``; one number when the class
        identifies it).
    """
    t = ida_pred.table.reindex(shown.index)
    span = [("" if np.isnan(lo) else f"{lo:.3g}" if np.isclose(lo, hi, rtol=1e-9, atol=1e-12) else f"{lo:.3g} … {hi:.3g}")
            for lo, hi in zip(t["ida_low_sd"], t["ida_high_sd"])]
    out = shown.copy()
    at = list(out.columns).index("shift (sd), doing") + 1 if "shift (sd), doing" in out.columns else len(out.columns)
    out.insert(at, GES_COLUMNS[0], t["ida_shift_sd"].round(3) + 0.0)
    out.insert(at + 1, GES_COLUMNS[1], span)
    return out


#: (n_samples, n_nodes, seconds) of the GES searches of this process, newest last: the cost shown.
_GES_SECONDS = collections.deque(maxlen=32)


def ges_cost_text(dataset) -> str:
    """What a GES search on ``dataset`` costs, from a measurement, before it starts.

    The seconds of this server's last search on as many nodes (scaled by the rows), else the
    measurement on Sachs of ``benchmarks/bench_predict.py`` (docs/predict.md, table (d)).
    """
    from dashboard.infra.text import fmt_seconds

    n, d = dataset.X.shape
    same = [(rows, sec) for rows, nodes, sec in _GES_SECONDS if nodes == d]
    if same:
        rows, sec = same[-1]
        return (f"GES took {fmt_seconds(sec)} on {rows:,} rows of {d} nodes on this server; expect about "
                f"{fmt_seconds(sec * max(1.0, n / rows) ** 0.5)} here.")
    return (f"GES's search grows quickly with the number of nodes: measured on 1,000 rows (docs/predict.md), about "
            f"0.3 s at 10 nodes, 2–3 s at 20 and half a minute or more at 40 (0.1–0.2 s on Sachs' 11), plus about "
            f"2 s to load causal-learn the first time. "
            f"These data have {n:,} rows and {d} nodes.")


def refits_cost_text(n_refits, fit_seconds, what="refits") -> str:
    """What a job of ``n_refits`` refits is expected to cost, before it starts (issue 53, low 4):
    the number of refits times the time the Learn fit they repeat took (measured when it ran).

    Parameters
    ----------
    n_refits : int
        Refits the job will make (>= 1).
    fit_seconds : float or None
        Wall seconds of the fit shown (``FitResult.fit_time``); None when unknown.
    what : str
        What the refits are for, in the sentence (fixed text, never user input).

    Returns
    -------
    str
        Plain text (numbers and fixed words).

    Examples
    --------
    >>> refits_cost_text(30, 0.08)
    'About 2.4 s: 30 refits × 80 ms, the time this fit took here.'
    """
    from dashboard.infra.text import fmt_seconds

    n = int(n_refits)
    if fit_seconds is None or not fit_seconds >= 0:
        return f"{n} {what}, each as long as the fit shown."
    return (f"About {fmt_seconds(n * float(fit_seconds))}: {n} {what} × {fmt_seconds(float(fit_seconds))}, "
            "the time this fit took here.")


def ges_job(dataset, conditions):
    """The :class:`dashboard.infra.jobs.Job` computing :func:`ges_cpdag_of` (the cache is filled by it).

    Parameters
    ----------
    dataset : dashboard.data.Dataset
    conditions : array-like of shape (n_samples,) or None

    Returns
    -------
    dashboard.infra.jobs.Job
        Its key is the dataset's cache key; its result the CPDAG.
    """
    import time

    from dashboard.infra.jobs import Job

    def run(job):
        job.report(0.05, _GES_STATUS)
        t0 = time.perf_counter()
        C = ges_cpdag_of(dataset, conditions)
        _GES_SECONDS.append((dataset.X.shape[0], dataset.X.shape[1], time.perf_counter() - t0))
        job.report(1.0, "GES: done")
        return C

    return Job(run, "GES + IDA", key=dataset_cache_key(dataset))


def harvest_ges(ss, job) -> list:
    """Store a finished GES job's CPDAG in ``ss[GES_RESULT]`` and say how it went (``(level, text)``)."""
    from dashboard.infra.text import fmt_seconds, md_escape

    if job.stop_requested:  # before the error: a search ended by Stop raises in its job
        return [("info", "Stopped: GES's answer was dropped.")]
    if job.error:
        return [("error", md_escape(job.error))]
    ss[GES_RESULT] = {"key": job.key, "C": job.result}
    return [("success", f"GES searched in {fmt_seconds(job.elapsed)}: its class's possible shifts are the GES + IDA "
                        "columns beside CoLiDE's.")]


def ges_ready(ss, dataset) -> bool:
    """Whether this session holds GES's CPDAG of ``dataset`` (:data:`GES_RESULT`)."""
    held = ss.get(GES_RESULT)
    return held is not None and held["key"] == dataset_cache_key(dataset)


def ges_ida_for(ss, dataset, conditions, intervention):
    """GES + IDA's prediction of the page's intervention, or None before GES has run on these data.

    Parameters
    ----------
    ss : MutableMapping
        The session state (:data:`GES_RESULT`).
    dataset : dashboard.data.Dataset
    conditions : array-like of shape (n_samples,) or None
    intervention : dict
        ``{"do": {node: value}}`` or ``{"shift": {node: delta}}`` (data units), as the page's.

    Returns
    -------
    colide_core.evaluation.scale.IDAPrediction or None

    Raises
    ------
    ValueError
        As :func:`colide_core.evaluation.scale.ida_prediction` (e.g. too many undirected neighbours).
    """
    from colide_core.evaluation.scale import ida_prediction

    key = dataset_cache_key(dataset)
    held = ss.get(GES_RESULT)
    if (held is None or held["key"] != key) and ges_known(dataset):  # another session's search: a cache hit
        held = ss[GES_RESULT] = {"key": key, "C": ges_cpdag_of(dataset, conditions)}
    if held is None or held["key"] != key:
        return None
    return ida_prediction(held["C"], dataset.X, conditions=conditions, **intervention)
