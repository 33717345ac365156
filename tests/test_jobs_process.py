"""Jobs whose computation runs in a worker process (issue 53, high 3: the heavy jobs out of the
server's process and its GIL). dashboard/infra/workers.py: results, progress, Stop, errors, a
killed worker and the compute slots' bound. Deterministic: every wait is on a condition (with a
generous bound that only a broken build reaches), no timing is asserted."""
import os
import signal

import numpy as np
import pytest

from dashboard.infra import jobs, workers
from dashboard.infra.slots import ComputeSlots
from tests import _jobs_process_funcs as f
from tests._waits import BOUND, processes_on, until as _until  # noqa: F401 (processes_on: an autouse fixture)


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


# -- what sending the data costs (issue 53's follow-up): the call out of band, the worker's copy reserved --

import fractions  # noqa: E402
import logging  # noqa: E402
import tracemalloc  # noqa: E402

import pandas as pd  # noqa: E402

from dashboard.infra import memory  # noqa: E402
from dashboard.infra.text import md_escape  # noqa: E402
from tests import _worker_memory_funcs as wm  # noqa: E402

MB = 1024 * 1024


def _big(layout, rng):
    """About 48 MB of float64 in the given layout (the strided view's base is twice that)."""
    if layout == "strided":
        return rng.standard_normal((6000, 2000))[:, ::2]
    X = rng.standard_normal((6000, 1000))
    return {"C": X, "F": np.asfortranarray(X), "frame": pd.DataFrame(X)}[layout]


def _traced_peak(run):
    """``run()``'s result and the peak of Python's allocations above the start (tracemalloc, every
    thread: the job's thread pickles and sends the call)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        out = run()
        return out, tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()


@pytest.fixture
def _budget_empty(monkeypatch):
    """The memory budget with no session's data in it (other tests' sessions do not count here)."""
    monkeypatch.setattr(memory, "_HELD", {})
    monkeypatch.setattr(memory, "_RESERVED", {})
    monkeypatch.setattr(memory, "_WORKING", {})
    monkeypatch.setattr(memory, "_session_states", lambda: {})


@pytest.mark.parametrize("layout, bound", [("C", 0.02), ("F", 0.02), ("frame", 0.02), ("strided", 1.1)])
def test_sending_a_large_X_to_a_worker_takes_no_copy_of_it_in_the_server(layout, bound, _budget_empty):
    """Before: the call was pickled in band, then copied again into the launch's data: 2.1 times
    ``X`` in the server (2.5 times for a strided ``X``). Now a contiguous ``X`` goes out of band from
    its own memory, and a strided one as one contiguous copy."""
    assert _job(wm.probe, np.zeros((4, 4))).start().wait(BOUND)  # the forkserver started: not counted
    rng = np.random.default_rng(0)
    X = _big(layout, rng)
    A = np.asarray(X)
    nbytes = A.nbytes

    def run():
        job = _job(wm.probe, X).start()
        assert job.wait(BOUND)
        return job

    job, peak = _traced_peak(run)
    assert job.error is None
    print(layout, "server peak", peak / nbytes)
    assert peak <= bound * nbytes
    got = job.result
    assert got["pid"] != os.getpid() and got["shape"] == A.shape and got["dtype"] == "float64"
    assert got["checksum"] == float(A[::97].sum())
    assert got["writeable"] == A.flags.writeable  # as in the thread (a frame's values: read-only, pandas 3)
    assert got["writeable"] or layout == "frame"
    assert got["f_contiguous" if layout in ("F", "frame") else "c_contiguous"]  # a frame's block: (d, n)


def test_a_large_result_comes_back_without_a_second_copy(_budget_empty):
    """The result path is out of band too (the Check page's report carries n x d residuals): the
    server holds the result once, not its pickle bytes as well."""
    X = np.random.default_rng(1).standard_normal((6000, 1000))

    def run():
        job = _job(wm.scale, X, 2.0).start()
        assert job.wait(BOUND)
        return job

    job, peak = _traced_peak(run)
    assert job.error is None
    assert 0.99 * X.nbytes <= peak <= 1.1 * X.nbytes  # the result itself, once (before: 3.1 times)
    np.testing.assert_array_equal(job.result, 2.0 * X)
    assert job.result.flags.writeable and X[0, 0] != job.result[0, 0]  # the worker wrote its own copy


class _Plain:
    """An object without buffers (pickled in band)."""

    def __init__(self, a):
        self.a = a

    def __eq__(self, other):
        return type(other) is _Plain and self.a == other.a


def test_every_kind_of_argument_arrives_as_the_thread_gets_it(_budget_empty):
    rng = np.random.default_rng(2)
    readonly = rng.standard_normal((300, 40))
    readonly.flags.writeable = False
    args = (rng.standard_normal((300, 40)), np.asfortranarray(rng.standard_normal((200, 50))),
            rng.standard_normal((400, 60))[:, ::3], rng.integers(-9, 9, size=(20, 30, 40)), np.zeros((0, 7)),
            readonly, np.array([1.5, "a", None], dtype=object), rng.standard_normal(5),
            pd.DataFrame(rng.standard_normal((500, 20)), columns=[f"V{i}" for i in range(20)]),
            _Plain({"λ": [0.1, 0.05]}), fractions.Fraction(1, 3), bytearray(b"x" * 100_000))
    kwargs = {"design": {"targets": [[0], [1, 2]]}, "W": rng.standard_normal((8, 8))}
    threaded = jobs.Job(lambda job: wm.echo(*args, callback=job.progress, **kwargs), "x",
                        slots=ComputeSlots(2, reserved=0), owner=None, budget_s=None).start()
    worker = _job(wm.echo, *args, **kwargs).start()
    assert threaded.wait(BOUND) and worker.wait(BOUND)
    assert threaded.error is None and worker.error is None
    (t_args, t_kwargs), (w_args, w_kwargs) = threaded.result, worker.result
    assert len(w_args) == len(t_args) == len(args)
    for t, w in zip(t_args, w_args):
        assert type(w) is type(t)
        if isinstance(t, np.ndarray):
            assert w.dtype == t.dtype and w.shape == t.shape
            np.testing.assert_array_equal(w, t)
            assert w.flags.writeable == t.flags.writeable  # the read-only array stays read-only
            assert w.flags.f_contiguous or w.flags.c_contiguous  # the strided view arrives contiguous
        elif isinstance(t, pd.DataFrame):
            pd.testing.assert_frame_equal(w, t)
        else:
            assert w == t
    assert w_args[1].flags.f_contiguous and not w_args[1].flags.c_contiguous
    assert w_kwargs["design"] == t_kwargs["design"]
    np.testing.assert_array_equal(w_kwargs["W"], t_kwargs["W"])


def test_the_workers_copy_is_reserved_while_it_runs_and_released_on_stop(_budget_empty):
    X = np.random.default_rng(3).standard_normal((2000, 500))  # 8 MB
    job = _job(wm.hold_with, X).start()
    _until(lambda: job.fraction == 0.5, "the worker's report")
    held = memory.held_bytes()
    assert X.nbytes <= held <= X.nbytes + MB  # the worker's copy (and the call's small pickle)
    job.request_stop()
    assert job.wait(BOUND) and job.error is None
    assert job.result == X.shape  # the partial result came back
    assert memory.held_bytes() == 0


def test_the_reservation_is_released_on_the_workers_error_and_when_it_is_killed(_budget_empty):
    X = np.random.default_rng(4).standard_normal((2000, 500))
    seen, pids = [], []

    def relay(*values):
        seen.append(memory.held_bytes())
        return False

    failing = jobs.Job(lambda job: workers.in_worker(wm.raise_with, X, callback=relay), "Checks",
                       slots=ComputeSlots(2, reserved=0), owner=None, budget_s=None).start()
    assert failing.wait(BOUND)
    assert failing.error == "Checks failed: no fit on 2000 rows"
    assert len(seen) == 1 and seen[0] >= X.nbytes
    assert memory.held_bytes() == 0

    def kill_relay(pid, _total):
        pids.append(pid)
        return False

    killed = jobs.Job(lambda job: workers.in_worker(wm.pid_with, X, callback=kill_relay), "Ranking",
                      slots=ComputeSlots(2, reserved=0), owner=None, budget_s=None).start()
    _until(lambda: pids, "the worker's pid")
    assert memory.held_bytes() >= X.nbytes
    os.kill(pids[0], signal.SIGKILL)
    assert killed.wait(BOUND)
    assert killed.error.startswith("Ranking failed: its worker process ended unexpectedly (signal 9)")
    assert memory.held_bytes() == 0


def test_without_room_in_the_budget_for_the_workers_copy_the_job_runs_in_its_thread(_budget_empty, monkeypatch,
                                                                                   caplog):
    X = np.random.default_rng(5).standard_normal((2000, 500))
    monkeypatch.setattr(memory, "BUDGET_BYTES", X.nbytes // 2)
    seen = []

    def relay(*values):
        seen.append(memory.held_bytes())
        return False

    with caplog.at_level(logging.WARNING, logger="dashboard.infra.workers"):
        job = jobs.Job(lambda job: workers.in_worker(wm.probe, X, callback=relay), "x",
                       slots=ComputeSlots(2, reserved=0), owner=None, budget_s=None).start()
        assert job.wait(BOUND) and job.error is None
    assert job.result["pid"] == os.getpid()  # in the job's thread, on the server's own X: no copy
    assert job.result["checksum"] == float(X[::97].sum())
    assert seen == [0] and memory.held_bytes() == 0
    # the user is told, with the real sizes: the worker's copy (X's 8,000,000 bytes out of band plus
    # the call's small pickle) against the budget's room (X.nbytes // 2: nothing else is counted)
    call = workers._dumps((wm.probe, (X,), {}))  # what in_worker pickles: the same bytes
    need = call.received_bytes() + call.sender_bytes()
    assert X.nbytes < need < X.nbytes + 64 * 1024
    sentence = ("Running in the server's own process: not enough memory for a separate worker "
                f"(needs {need / MB:.1f} MB, {X.nbytes // 2 / MB:.1f} MB free).")
    assert sentence == ("Running in the server's own process: not enough memory for a separate worker "
                        "(needs 7.6 MB, 3.8 MB free).")
    assert job.notes == [sentence]
    assert jobs._bar_text(job) == "x: finished " + md_escape(sentence)  # on the bar, after the status
    assert sentence not in repr(job.result) and job.key is None  # not in the result nor its key
    logged = [r for r in caplog.records if r.name == "dashboard.infra.workers"]
    assert len(logged) == 1 and f"needs {need} bytes" in logged[0].getMessage()
    assert f"has {X.nbytes // 2} of {X.nbytes // 2} free" in logged[0].getMessage()
    monkeypatch.setattr(memory, "BUDGET_BYTES", 4 * X.nbytes)  # with room: a worker, and no note
    again = _job(wm.probe, X).start()
    assert again.wait(BOUND) and again.result["pid"] != os.getpid()
    assert again.notes == [] and jobs._bar_text(again) == "x: finished"


def test_a_worker_whose_steps_are_long_keeps_its_partial_result_on_stop(monkeypatch):
    """A bootstrap in a worker reports once per fit, and a fit can outlast the 10 s grace: Stop
    then ended the worker and lost every resample, where the thread job finished its fit and kept
    them. The grace now covers twice the longest interval between the worker's reports."""
    monkeypatch.setattr(workers, "STOP_GRACE_S", 0.2)  # far shorter than a step: the old rule kills
    job = _job(wm.slow_steps, 50, 1.0, label="Bootstrap").start()
    _until(lambda: job.fraction >= 2 / 50, "two steps reported")
    job.request_stop()
    _until(lambda: job._done.is_set() or "stopping after its current step" in job.status, "the stop's status")
    assert job.wait(BOUND)
    assert job.error is None and job.stop_reason == "user"
    assert 2 <= job.result < 50  # the steps done: the partial result came back
    assert job.status == "Bootstrap: finished"
