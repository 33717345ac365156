"""A job's memory bounded before it is spent, and its kept result counted (issue 53's doubts).

Before: a bootstrap's result, kept in the session, carries every resample's weighted graph
(``adjacency_samples``, ``n_boot x d x d`` float64: 305 MB at d = 200 and 1,000 resamples) and
took about 3.2 times that while it was summarised; none of it was counted in the server's memory
budget (``dashboard.infra.memory``), so a few tabs could run the server out of memory after the
datasets were admitted. Now the Edge confidence page's jobs reserve their peak before they start
(``memory.reserve_job``, through ``jobs.start_job``) or are refused with a sentence naming both
sizes, and the result's bytes count while the session keeps it. Also here: a job that falls back
to its thread for lack of room says so after it ends (``follow_jobs``' messages).

Deterministic: the fits are a stand-in estimator with a fixed dense graph (no solver), every wait
is on a condition, and no timing is asserted.
"""
import gc
import threading
import time
import tracemalloc

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from colide_core.evaluation.stability import bootstrap_edges, stability_selection
from dashboard.infra import jobs, memory
from dashboard.infra.slots import ComputeSlots
from dashboard.infra.text import md_escape

MB = 1024 * 1024
WAIT = 120.0


class _Dense(BaseEstimator):
    """A stand-in fit: a dense d x d graph (every weight nonzero, so nothing is sparse) and a sigma."""

    def __init__(self, lambda1=0.1):
        self.lambda1 = lambda1

    def fit(self, X, **kwargs):
        d = X.shape[1]
        rng = np.random.default_rng(int(abs(np.asarray(X)[0, 0]) * 1e6) % 2**31)
        self.adjacency_ = rng.uniform(0.5, 2.0, (d, d))
        self.sigma_ = np.ones(d)
        return self


@pytest.fixture
def budget_empty(monkeypatch):
    """The memory budget with nothing in it (other tests' sessions do not count here)."""
    for name in ("_HELD", "_RESERVED", "_WORKING", "_RESULTS"):
        monkeypatch.setattr(memory, name, {})
    monkeypatch.setattr(memory, "_session_states", lambda: {})


def _traced(run):
    """``run()``'s result, the peak and the kept bytes of Python's allocations above the start."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        out = run()
        kept, peak = tracemalloc.get_traced_memory()
        return out, peak - start, kept - start
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("d, n_boot, n", [(100, 100, 200), (60, 300, 100)])
def test_a_bootstrap_peaks_within_its_reservation_and_keeps_what_it_estimated(d, n_boot, n):
    X = np.random.default_rng(0).standard_normal((n, d))
    bootstrap_edges(X, _Dense(), n_boot=2, random_state=0)  # imports and caches first: not counted
    need = memory.bootstrap_memory(n_boot, n, d)
    samples = 8 * n_boot * d * d  # 8 MB and 8.6 MB
    res, peak, kept = _traced(lambda: bootstrap_edges(X, _Dense(), n_boot=n_boot, random_state=0))
    print("peak / samples", peak / samples, "kept / samples", kept / samples)
    # every graph in the executor's rows, their stack and std's temporary: 3.2-3.3 x the samples
    assert 3.0 * samples <= peak <= need.peak
    assert need.peak <= 3.6 * samples  # not a reservation far above what is spent
    assert res.adjacency_samples.shape == (n_boot, d, d) and res.adjacency_samples.dtype == np.float64
    # what stays: the samples and three d x d summaries and the sigmas, as estimated
    assert memory.result_nbytes(res) == samples + 3 * 8 * d * d + 8 * n_boot * d == need.keep
    assert kept <= 1.1 * need.keep


def test_a_stability_selection_peaks_within_its_reservation():
    d, n_sub, lambdas, n = 100, 30, [0.1, 0.2, 0.3], 200
    X = np.random.default_rng(1).standard_normal((n, d))
    stability_selection(X, _Dense(), lambdas[:1], n_subsamples=2, random_state=0)
    need = memory.stability_memory(n_sub, len(lambdas), n, d)
    graphs = 8 * n_sub * len(lambdas) * d * d  # 7.2 MB, held by the executor until counted
    res, peak, kept = _traced(lambda: stability_selection(X, _Dense(), lambdas, n_subsamples=n_sub,
                                                          random_state=0))
    print("peak / graphs", peak / graphs)
    assert graphs <= peak <= need.peak
    # prob (3 d x d float64), max_prob (d x d float64), stable (d x d bool), lambdas: under the estimate
    assert memory.result_nbytes(res) == 4 * 8 * d * d + d * d + 8 * 3 <= need.keep


def test_the_refusal_names_both_sizes_the_room_and_the_most_resamples_that_fit(budget_empty):
    # d = 200, n = 1,000, 1,000 resamples: the samples are 8 * 1000 * 200 * 200 = 320,000,000 bytes;
    # keep adds 3 d x d summaries (960,000) and the sigmas (8 * 1000 * 200 = 1,600,000): 322,560,000
    # bytes = 307.6 MiB; the peak is 3.5 x the samples (1,120,000,000) + the summaries, the sigmas and
    # two copies of X (3,200,000): 1,125,760,000 bytes = 1,073.6 MiB
    need = memory.bootstrap_memory(1000, 1000, 200, keys=("trust_boot_result",))
    assert (need.keep, need.peak) == (322_560_000, 1_125_760_000)
    budget = 1024 * MB
    hold, refused = memory.reserve_job(need, budget, session_id="A")
    assert hold is None
    # room 1,073,741,824; fixed = peak - 1000 * per_unit (per_unit = 3.5 * 8 * 40,000 + 8 * 200 =
    # 1,121,600) = 4,160,000; most = (1,073,741,824 - 4,160,000) // 1,121,600 = 953
    assert refused == (
        "This bootstrap would keep 308 MB (1,000 resamples × 200 × 200 edge weights of 8 bytes) and take "
        "1,074 MB while it runs, and the datasets and job results of everyone using this server already hold "
        "0.0 MB of its 1,024 MB memory budget (1,024 MB free). Nothing was started: ask for at most 953 "
        "resamples, or try again once others' jobs or tabs have given their memory back (closed tabs give "
        "theirs back after 60 s).")
    assert memory.held_bytes() == 0  # a refusal reserves nothing
    fits, none = memory.reserve_job(memory.bootstrap_memory(953, 1000, 200), budget, session_id="A")
    assert none is None and memory.held_bytes() == memory.bootstrap_memory(953, 1000, 200).peak <= budget
    fits.release()
    assert memory.held_bytes() == 0
    assert memory.bootstrap_memory(954, 1000, 200).peak > budget  # one more would not fit
    assert memory.reserve_job(memory.bootstrap_memory(954, 1000, 200), budget, session_id="A")[0] is None


def test_the_reservation_is_taken_then_becomes_the_results_bytes_released_when_it_is_replaced(budget_empty):
    X = np.random.default_rng(2).standard_normal((100, 40))
    need = memory.bootstrap_memory(50, 100, 40, keys=("trust_boot_result",))
    hold, refused = memory.reserve_job(need, 64 * MB, session_id="A")
    assert refused is None and memory.held_bytes() == need.peak  # the peak, while it runs
    result = bootstrap_edges(X, _Dense(), n_boot=50, random_state=0)
    hold.keep(result)  # the job ended: its result's own bytes count while it lives
    assert memory.held_bytes() == hold.nbytes == memory.result_nbytes(result) == need.keep
    # another tab's dataset now sees them counted
    refused = memory.refusal(64 * MB - need.keep + 1, budget=64 * MB, session_id="B")
    assert refused is not None and f"already hold {memory.fmt_mb(need.keep)} MB" in refused
    session = {"trust_boot_result": {"result": result}}
    del result
    assert memory.held_bytes() == need.keep  # still kept by the session
    session["trust_boot_result"] = None  # replaced (a new run, another dataset's result): released
    gc.collect()
    assert memory.held_bytes() == 0 and hold.nbytes == 0


def test_a_closed_tabs_kept_result_is_dropped_after_the_grace(budget_empty, monkeypatch):
    X = np.random.default_rng(3).standard_normal((100, 30))
    state = {}
    hold, _ = memory.reserve_job(memory.bootstrap_memory(20, 100, 30, keys=("trust_boot_result", "job")),
                                 64 * MB, session_id="A")
    state["trust_boot_result"] = {"result": bootstrap_edges(X, _Dense(), n_boot=20, random_state=0)}
    hold.keep(state["trust_boot_result"]["result"])
    kept = memory.held_bytes()
    assert kept == memory.result_nbytes(state["trust_boot_result"]["result"]) > 0
    monkeypatch.setattr(memory, "_session_states", lambda: {"A": (False, state)})  # its tab closed
    closed = time.monotonic()
    memory._prune(now=closed)
    assert memory.held_bytes() == kept and "trust_boot_result" in state  # within the grace: kept
    memory._prune(now=closed + memory.CLOSED_GRACE_S)
    assert "trust_boot_result" not in state and memory.held_bytes() == 0


def _state_job(fn, label, **kw):
    return jobs.Job(fn, label, slots=ComputeSlots(2, reserved=0), owner=None, budget_s=None, **kw)


def test_start_job_refuses_before_spending_and_reserves_while_the_job_runs(budget_empty, monkeypatch):
    monkeypatch.setattr(memory, "BUDGET_BYTES", 16 * MB)
    slot = jobs.JobSlot("boot_job", "boot_messages", stop_key="boot_stop", stop_help="")
    X = np.random.default_rng(4).standard_normal((100, 40))
    calls = []

    def too_big():
        def fn(job):
            calls.append(1)
            return bootstrap_edges(X, _Dense(), n_boot=1000, random_state=0)
        # 1,000 resamples at d = 40, n = 100: keep 12,800,000 + 38,400 + 320,000 = 13,158,400 bytes
        # (12.5 MiB), peak 3.5 x 12,800,000 + 38,400 + 320,000 + 64,000 = 45,222,400 (43.1 MiB),
        # against a 16 MiB budget; a resample costs 3.5 x 12,800 + 320 = 45,120 bytes, so at most
        # (16,777,216 - 102,400) // 45,120 = 369 resamples fit
        return _state_job(fn, "Bootstrap (1000 resamples)", memory=memory.bootstrap_memory(1000, 100, 40))

    state = {}
    assert jobs.start_job(state, slot, too_big) is False
    assert calls == [] and state.get(slot.job) is None  # nothing started, nothing spent
    [(level, text)] = state[slot.messages]
    assert level == "warning"
    assert text.startswith("This bootstrap would keep 13 MB (1,000 resamples × 40 × 40 edge weights of "
                           "8 bytes) and take 43 MB while it runs")
    assert "of its 16 MB memory budget (16 MB free)" in text and "ask for at most 369 resamples" in text
    assert memory.held_bytes() == 0

    release, inside = threading.Event(), []

    def fits():
        def fn(job):
            inside.append(memory.held_bytes())
            assert release.wait(WAIT)
            return bootstrap_edges(X, _Dense(), n_boot=50, random_state=0)
        return _state_job(fn, "Bootstrap (50 resamples)", memory=memory.bootstrap_memory(50, 100, 40))

    assert jobs.start_job(state, slot, fits) is True
    job = state[slot.job]
    need = memory.bootstrap_memory(50, 100, 40)
    assert job.memory_hold is not None and memory.held_bytes() == need.peak  # reserved before it ran
    release.set()
    assert job.wait(WAIT) and job.error is None
    assert inside == [need.peak]
    assert memory.held_bytes() == memory.result_nbytes(job.result) == need.keep  # now its result
    state[slot.job] = None
    job = None
    gc.collect()
    assert memory.held_bytes() == 0  # dropped: released

    def failing():
        def fn(job):
            raise ValueError("every fit failed")
        return _state_job(fn, "Bootstrap", memory=need)

    assert jobs.start_job(state, slot, failing) is True
    assert state[slot.job].wait(WAIT) and state[slot.job].error == "Bootstrap failed: every fit failed"
    assert memory.held_bytes() == 0  # an error keeps nothing: released at its end


class _Rerun(Exception):
    pass


class _St:
    """What ``follow_jobs`` calls on ``st`` for an ended job: nothing drawn, then a rerun."""

    def __init__(self, state):
        self.session_state = state

    def rerun(self):
        raise _Rerun


def test_follow_jobs_adds_a_jobs_notes_after_its_harvest(monkeypatch):
    slot = jobs.JobSlot("a_job", "a_messages", stop_key="a_stop", stop_help="")
    job = _state_job(lambda job: job.note("Running in the server's own process: not enough memory for a "
                                          "separate worker (needs 7.6 MB, 3.8 MB free).") or 3, "Checks").start()
    assert job.wait(WAIT)
    state = {slot.job: job, slot.messages: []}
    monkeypatch.setattr(jobs, "st", _St(state))
    with pytest.raises(_Rerun):
        jobs.follow_jobs([(slot, lambda job: [("success", f"{job.result} checks done.")])])
    assert state[slot.messages] == [
        ("success", "3 checks done."),
        ("info", md_escape("Running in the server's own process: not enough memory for a separate worker "
                           "(needs 7.6 MB, 3.8 MB free)."))]
    assert job.result == 3  # the note is not in the result


def test_the_edge_confidence_page_refuses_a_bootstrap_above_the_budget(budget_empty, monkeypatch, new_app):
    from tests._schedules import QUICK

    # Sachs: 853 rows x 11 nodes. 1,000 resamples: samples 8 * 1000 * 121 = 968,000 bytes; peak
    # 3.5 x that (3,388,000) + 3 summaries (2,904) + sigmas (88,000) + two copies of X (150,128) =
    # 3,629,032 bytes = 3.5 MiB; keep 968,000 + 2,904 + 88,000 = 1,058,904 bytes = 1.0 MiB
    monkeypatch.setattr(memory, "BUDGET_BYTES", 2 * MB)
    at = new_app()
    at.run()
    at.session_state["solver_overrides"] = dict(QUICK)
    at.switch_page("pages/edge_confidence.py").run()
    at.number_input(key="boot_n").set_value(1000).run()
    # the cost is stated before anything starts
    assert any("The result keeps 1.0 MB of the server's memory (3.5 MB while it runs)" in i.value for i in at.info)
    at.button(key="boot_run").click().run()
    assert not at.exception, at.exception
    warnings = [w.value for w in at.warning if "This bootstrap would keep" in w.value]
    assert len(warnings) == 1, [w.value for w in at.warning]
    assert warnings[0].startswith("This bootstrap would keep 1.0 MB (1,000 resamples × 11 × 11 edge weights of "
                                  "8 bytes) and take 3.5 MB while it runs")
    assert at.session_state["trust_boot_job"] is None and at.session_state["trust_boot_result"] is None
    at.number_input(key="boot_n").set_value(3).run()  # within the budget: it runs, its result is counted
    at.button(key="boot_run").click().run()
    assert not at.exception, at.exception
    res = at.session_state["trust_boot_result"]["result"]
    assert res.n_ok == 3 and any("3 resamples fitted" in s.value for s in at.success)
    counted = [e["nbytes"] for e in memory._RESULTS.values() if e["ref"] is not None and e["ref"]() is res]
    assert counted == [memory.result_nbytes(res)] == [3 * 8 * 121 + 3 * 8 * 121 + 8 * 3 * 11]
