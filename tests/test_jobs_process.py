"""Jobs whose computation runs in a worker process (issue 53, high 3: the heavy jobs out of the
server's process and its GIL). dashboard/infra/workers.py: results, progress, Stop, errors, a
killed worker and the compute slots' bound. Deterministic: every wait is on a condition (with a
generous bound that only a broken build reaches), no timing is asserted."""
import os
import signal
import time

import numpy as np
import pytest

from dashboard.infra import jobs, workers
from dashboard.infra.slots import ComputeSlots
from tests import _jobs_process_funcs as f

BOUND = 120.0  # seconds a condition may take on a loaded machine before the test fails


def _until(cond, what):
    end = time.monotonic() + BOUND
    while not cond():
        if time.monotonic() > end:
            pytest.fail(f"not reached within {BOUND:g} s: {what}")
        time.sleep(0.02)


@pytest.fixture(autouse=True)
def _processes_on(monkeypatch):
    monkeypatch.setattr(workers, "ENABLED", True)
    yield
    _until(lambda: workers.live_workers() == 0, "every worker ended")


def _job(func, *args, label="x", slots=None, **kwargs):
    return jobs.Job(None, label, slots=slots or ComputeSlots(2, reserved=0), owner=None, budget_s=None,
                    process=(func, args, kwargs))


def test_bootstrap_in_a_worker_equals_the_thread_job():
    from colide_core import CoLiDE
    from colide_core.data.simulate import simulate_dag, simulate_linear_sem, simulate_parameters
    from colide_core.evaluation.stability import bootstrap_edges

    B = simulate_dag(5, 2, random_state=1)
    X, _ = simulate_linear_sem(simulate_parameters(B, random_state=2), 300, random_state=3)
    kw = dict(n_boot=4, random_state=0)
    threaded = jobs.Job(lambda job: bootstrap_edges(X, CoLiDE(), callback=job.progress, **kw), "Bootstrap",
                        slots=ComputeSlots(2, reserved=0), owner=None, budget_s=None).start()
    worker = _job(bootstrap_edges, X, CoLiDE(), label="Bootstrap", **kw).start()
    assert threaded.wait(BOUND) and worker.wait(BOUND)
    assert threaded.error is None and worker.error is None
    a, b = threaded.result, worker.result
    assert a.n_boot == b.n_boot == 4
    np.testing.assert_array_equal(np.asarray(a.frequency), np.asarray(b.frequency))
    np.testing.assert_allclose(np.asarray(a.weight_mean), np.asarray(b.weight_mean), rtol=1e-9, atol=1e-12)
    assert a.frequency.shape == (5, 5) and 0 < a.frequency.sum()
    assert worker.fraction == 1.0 and worker.status == "Bootstrap: finished"


def test_progress_reaches_the_job_and_stop_ends_the_worker_with_its_partial_result():
    job = _job(f.hold, 3, 4).start()
    _until(lambda: job.fraction == 0.75, "the worker's progress in job.fraction")
    assert job.status == "x: 3 of 4"
    assert workers.live_workers() == 1
    job.request_stop()
    assert job.wait(BOUND)
    first, pid = job.result  # the function's own (partial) result, after the callback said stop
    assert first == 3 and pid != os.getpid()
    assert job.error is None and job.stop_reason == "user"


def test_a_value_error_in_the_worker_gives_the_thread_jobs_message():
    worker = _job(f.raise_value, "λ must be positive", label="Prediction intervals").start()
    threaded = jobs.Job(lambda job: f.raise_value("λ must be positive", callback=job.progress),
                        "Prediction intervals", slots=ComputeSlots(2, reserved=0), owner=None, budget_s=None).start()
    assert worker.wait(BOUND) and threaded.wait(BOUND)
    assert worker.error == threaded.error == "Prediction intervals failed: λ must be positive"
    assert "Traceback" not in worker.error and "File " not in worker.error


def test_other_errors_name_their_type_as_a_thread_job_does():
    worker = _job(f.raise_key, label="Checks").start()
    assert worker.wait(BOUND)
    assert worker.error == "Checks: unexpected error (KeyError): 'node X'"
    unsendable = _job(f.raise_unsendable, label="Checks").start()
    assert unsendable.wait(BOUND)
    assert unsendable.error == "Checks: unexpected error (_Unsendable): left and right"


def test_a_killed_worker_is_a_clear_error_and_frees_the_slot():
    slots = ComputeSlots(2, reserved=0)
    pids = []

    def fn(job):
        def relay(pid, _total):
            pids.append(pid)
            return job.stop_requested
        return workers.in_worker(f.report_pid, callback=relay)

    job = jobs.Job(fn, "Ranking", slots=slots, owner=None, budget_s=None).start()
    _until(lambda: pids, "the worker's pid")
    assert slots.in_use == 1
    os.kill(pids[0], signal.SIGKILL)
    assert job.wait(BOUND)
    assert job.result is None
    assert job.error.startswith("Ranking failed: its worker process ended unexpectedly (signal 9)")
    assert "Traceback" not in job.error
    assert slots.in_use == 0 and workers.live_workers() == 0


def test_a_worker_deaf_to_stop_is_ended_after_the_grace(monkeypatch):
    monkeypatch.setattr(workers, "STOP_GRACE_S", 0.5)
    slots = ComputeSlots(2, reserved=0)
    job = _job(f.deaf, label="Prediction intervals", slots=slots).start()
    _until(lambda: job.fraction == 0.5, "the worker's one report")
    job.request_stop()
    assert job.wait(BOUND)
    assert job.error == ("Prediction intervals was stopped: its worker process did not stop within 0.5 s of the "
                         "request (a long step that hears no progress callback) and was ended; nothing it "
                         "computed was kept.")
    assert slots.in_use == 0 and workers.live_workers() == 0


def test_live_workers_never_exceed_the_units_held():
    slots = ComputeSlots(3)  # 2 units for ordinary jobs, 1 kept for people
    seen = []

    def fn(job):
        def relay(done, total):
            seen.append((workers.live_workers(), slots.in_use))
            return job.progress(done, total)
        return workers.in_worker(f.hold, 1, 2, callback=relay)

    running = [jobs.Job(fn, f"job {i}", slots=slots, owner=f"s{i}", budget_s=None).start() for i in range(4)]
    _until(lambda: sum(j.fraction == 0.5 for j in running) == 2, "two jobs computing")
    _until(lambda: sum(j.queued.is_set() for j in running) == 2, "two jobs in line")
    assert workers.live_workers() == 2 == slots.in_use
    for j in running:
        j.request_stop()
    assert all(j.wait(BOUND) for j in running)
    assert seen and all(live <= held <= slots.ordinary_capacity for live, held in seen)
    assert workers.live_workers() == 0 and slots.in_use == 0


def test_the_thread_fallback_and_calls_outside_a_job_run_in_place(monkeypatch):
    assert workers.in_worker(f.count_to, 3, callback=lambda d, t: False) == 3  # no job: in place
    monkeypatch.setattr(workers, "ENABLED", False)
    pids = []
    job = _job(f.report_pid)
    job._fn = lambda j: workers.in_worker(f.report_pid, callback=lambda pid, _t: pids.append(pid) or True)
    job.start()
    assert job.wait(BOUND) and job.error is None
    assert pids == [os.getpid()] and job.result == os.getpid()
    fallback = _job(f.count_to, 4).start()  # Job(process=...) in the thread: the job's own progress
    assert fallback.wait(BOUND) and fallback.result == 4


def test_a_function_that_cannot_be_sent_runs_in_the_jobs_thread():
    seen = []

    def local(n, *, callback):  # a closure: not picklable, so not sent
        callback(1, n)
        seen.append(os.getpid())
        return n

    job = _job(local, 2).start()
    assert job.wait(BOUND) and job.error is None and job.result == 2
    assert seen == [os.getpid()]
