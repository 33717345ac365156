"""Issue 22, class 4: unvalidated run settings and runaway jobs.

A manifest (or a forged widget value) must not be able to start a fit that never ends; a job
must stop when its session is gone; the server runs at most ``os.cpu_count()`` units of work
at once; "Parallel workers" cannot exceed the core count. Concurrency is checked with events
(no sleeps used as assertions).
"""
import html
import json
import os
import re
import threading

import pytest

import colide_core
from colide_core.run.manifest import build_manifest, manifest_to_json
from dashboard import fitting, manifests
from dashboard.infra import jobs
from dashboard.data import sachs_dataset

from tests._schedules import QUICK  # noqa: E402 - the suite's short schedule
WAIT = 60  # seconds; only an upper bound on waits for events that must happen

pytestmark = pytest.mark.filterwarnings("ignore::colide_core.ConvergenceWarning")


def _shown(text):
    """What the user reads: markdown backslash escapes and HTML entities undone."""
    return html.unescape(re.sub(r"\\(.)", r"\1", text))


@pytest.fixture(scope="module")
def sachs_manifest():
    ds = sachs_dataset()
    model = colide_core.CoLiDE("nv", **QUICK).fit(ds.X)
    return ds, json.loads(manifest_to_json(build_manifest(model, ds.X, data_source="sachs")))


# --- settings from a manifest ---------------------------------------------------------------------

HOSTILE = [
    ({"tol": 0}, "tol = 0"),
    ({"max_iter": [1e12] * 4}, "max_iter"),
    ({"max_iter": [10**12] * 4}, "max_iter = [1000000000000, "),
    ({"max_iter": [200_000] * 4}, "at most 500,000"),
    ({"lr": -1}, "lr = -1"),
    ({"lr": "x"}, "lr = 'x'"),
    ({"lambda1": "0.1"}, "lambda1 = '0.1'"),
    ({"max_iter": [[1]]}, "max_iter = [[1]] must be a non-empty flat list, each an int"),
    ({"mu_schedule": [[1]], "s_schedule": [[1]]}, "mu_schedule = [[1]] must be a non-empty flat list, each a float"),
    ({"checkpoint": 2.5}, "checkpoint = 2.5"),
    ({"checkpoint": 10**9}, "checkpoint"),
    ({"max_iter": [1] * 50, "mu_schedule": [1.0] * 50, "s_schedule": [1.0] * 50}, "at most 10"),
    ({"max_time": 1e9}, "max_time"),
    ({"solver": ["adam"]}, "solver"),
]


@pytest.mark.parametrize("change, words", HOSTILE)
def test_a_manifest_with_runaway_or_malformed_settings_is_refused(sachs_manifest, change, words):
    ds, doc = sachs_manifest
    bad = json.loads(json.dumps(doc))
    bad["params"].update(change)
    with pytest.raises(manifests.ManifestProblem, match="run settings") as info:
        manifests.run_from_manifest(json.dumps(bad), ds)
    assert words in str(info.value)


def test_every_offending_setting_is_listed_at_once(sachs_manifest):
    ds, doc = sachs_manifest
    bad = json.loads(json.dumps(doc))
    bad["params"].update({"tol": 0, "lr": -1, "checkpoint": "x"})
    with pytest.raises(manifests.ManifestProblem) as info:
        manifests.run_from_manifest(json.dumps(bad), ds)
    text = str(info.value)
    assert "tol = 0" in text and "lr = -1" in text and "checkpoint = 'x'" in text


def test_the_honest_manifest_still_loads(sachs_manifest):
    ds, doc = sachs_manifest
    run = manifests.run_from_manifest(json.dumps(doc), ds)
    assert run.overrides == dict(QUICK)


def test_check_settings_uses_the_solvers_checks_and_the_bounds():
    from colide_core.defaults import MAX_ITER_TOTAL
    from colide_core.exceptions import RunSettingsError
    from colide_core.settings import INTERACTIVE, check_settings

    ok = check_settings({"max_iter": [1000, 1000, 1000, 2000], "lr": 1e-3, "checkpoint": 200}, limits=INTERACTIVE)
    assert ok == {"max_iter": (1000, 1000, 1000, 2000), "lr": 1e-3, "checkpoint": 200}
    full = (MAX_ITER_TOTAL // 4,) * 4
    assert check_settings({"max_iter": full}, limits=INTERACTIVE)["max_iter"] == full
    with pytest.raises(RunSettingsError, match="adds up to 500,004"):
        check_settings({"max_iter": (MAX_ITER_TOTAL // 4 + 1,) * 4}, limits=INTERACTIVE)
    # The library alone (LIBRARY, the default) keeps its own wider limits: tol = 0 is legal there ...
    assert check_settings({"tol": 0}) == {"tol": 0.0}
    with pytest.raises(RunSettingsError, match="dashboard's limit"):
        check_settings({"tol": 0}, limits=INTERACTIVE)
    # ... but not malformed values.
    with pytest.raises(RunSettingsError, match="flat list"):
        check_settings({"max_iter": [[1]]})
    with pytest.raises(RunSettingsError, match="unknown setting"):
        check_settings({"lamda1": 0.1}, limits=INTERACTIVE)


def test_a_manifest_cannot_rebuild_an_estimator_with_malformed_settings(sachs_manifest):
    from colide_core.run.manifest import ManifestError, load_manifest

    _, doc = sachs_manifest
    bad = json.loads(json.dumps(doc))
    bad["params"]["max_iter"] = [[1]]
    with pytest.raises(ManifestError, match="max_iter"):
        load_manifest(bad).estimator()


def _learn_page(new_app):
    at = new_app().run()
    at.session_state["learn_tab"] = "Downloads"  # the manifests' tab (only the open tab is built, issue 41)
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    return at


def test_uploading_a_runaway_manifest_shows_the_settings_and_changes_nothing(sachs_manifest, new_app):
    ds, doc = sachs_manifest
    bad = json.loads(json.dumps(doc))
    bad["params"].update({"tol": 0, "max_iter": [1e12] * 4})
    at = _learn_page(new_app)
    at.file_uploader(key="learn_manifest_upload").set_value(("runaway.json", json.dumps(bad).encode(),
                                                              "application/json")).run()
    assert not at.exception, at.exception
    errors = [_shown(e.value) for e in at.error]
    assert any("cannot be loaded" in e and "tol = 0" in e and "max_iter = [1000000000000.0, " in e for e in errors), errors
    assert at.session_state["solver_overrides"] == {}
    # the results shown are the live page's own fits at the defaults, nothing from the manifest
    shown = at.session_state["fit_results"]
    assert {v: r.params for v, r in shown.items()} == {v: fitting.solver_params(v, 0.05, {}) for v in ("ev", "nv")}
    assert at.session_state["fit_job"] is None and not at.session_state["learn_live_hold"]


def test_forged_settings_in_the_session_start_no_fit(monkeypatch, new_app):
    started = []
    monkeypatch.setattr(fitting.FitJob, "start", lambda self: started.append(self) or self)
    at = _learn_page(new_app)
    at.session_state["solver_overrides"] = {"tol": 0, "max_iter": (10**12,) * 4, "lr": "x"}
    at.button(key="learn_run").click().run()
    assert not at.exception, at.exception
    assert started == [] and at.session_state["fit_job"] is None
    errors = [_shown(e.value) for e in at.error]
    assert any("Nothing was started" in e and "tol = 0" in e and "lr = 'x'" in e and "max_iter = (1000000000000, " in e
               for e in errors), errors


def test_fit_job_and_start_job_refuse_bad_settings_without_starting():
    from colide_core.run.manifest import RunSettingsError

    ds = sachs_dataset()
    with pytest.raises(RunSettingsError, match="tol = 0"):
        fitting.FitJob(ds, [fitting.solver_params("nv", 0.05, {"tol": 0})])
    state = {}
    slot = jobs.JobSlot("job", "messages", stop_key="stop", stop_help="")

    def make_job():
        raise RunSettingsError(["lr = -1 must be > 0"])

    assert jobs.start_job(state, slot, make_job) is False
    assert state.get("job") is None
    assert [(level, _shown(text)) for level, text in state["messages"]] == \
        [("error", "Nothing was started: lr = -1 must be > 0.")]


def test_widget_values_outside_their_bounds_are_refused():
    from colide_core.run.manifest import RunSettingsError

    fitting.check_widget_values(("Resamples", 30, 2, 1000, "int"), ("π_thr", 0.75, 0.55, 1.0))
    with pytest.raises(RunSettingsError) as info:
        fitting.check_widget_values(("Resamples", 10**9, 2, 1000, "int"), ("Parallel workers", 2.5, 1, 4, "int"),
                                    ("π_thr", float("nan"), 0.55, 1.0), ("Seed", "7", 0, 10, "int"))
    assert len(info.value.problems) == 4


# --- the server-wide ceiling ----------------------------------------------------------------------

def _blocking_job(slots, entered, release, label="t", units=1):
    def fn(job):
        entered.set()
        assert release.wait(WAIT)
        return label

    return jobs.Job(fn, label, slots=slots, units=units)


def test_compute_slots_bound_concurrent_jobs_and_serve_them_in_order():
    # (nothing kept back for people here: the slot kept for live fits is tests/test_jobs_fair_share.py's)
    slots = jobs.ComputeSlots(2, reserved=0)
    entered = [threading.Event() for _ in range(4)]
    release = [threading.Event() for _ in range(4)]
    started = [_blocking_job(slots, entered[i], release[i], f"job{i}").start() for i in range(2)]
    assert entered[0].wait(WAIT) and entered[1].wait(WAIT)
    third = _blocking_job(slots, entered[2], release[2], "job2").start()
    assert third.queued.wait(WAIT)              # found no free slot and waits in line
    fourth = _blocking_job(slots, entered[3], release[3], "job3").start()
    assert fourth.queued.wait(WAIT)
    assert slots.in_use == 2 and slots.waiting == 2
    assert not entered[2].is_set() and not entered[3].is_set()
    assert "waiting for a free slot" in third.status and "2 of 2 compute slots busy" in third.status
    release[0].set()                              # one slot frees: the first in line gets it
    assert entered[2].wait(WAIT) and started[0].wait(WAIT)
    assert not entered[3].is_set() and slots.in_use == 2
    for e in release:
        e.set()
    assert all(j.wait(WAIT) for j in (*started, third, fourth))
    assert [j.result for j in (*started, third, fourth)] == ["job0", "job1", "job2", "job3"]
    assert slots.in_use == 0 and slots.waiting == 0


def test_a_parallel_job_holds_one_unit_per_worker():
    slots = jobs.ComputeSlots(4)
    e_big, r_big, e_small, r_small = (threading.Event() for _ in range(4))
    big = _blocking_job(slots, e_big, r_big, "big", units=3).start()
    assert e_big.wait(WAIT) and slots.in_use == 3
    small = _blocking_job(slots, e_small, r_small, "small", units=2).start()
    assert small.queued.wait(WAIT) and not e_small.is_set()
    r_big.set()
    assert e_small.wait(WAIT) and big.wait(WAIT)
    r_small.set()
    assert small.wait(WAIT) and slots.in_use == 0
    # more than it may hold asks for the most it may hold: a person's request the capacity, an ordinary
    # one the capacity less the unit kept for people
    assert jobs.ComputeSlots(2).request(99, priority=True).units == 2
    assert jobs.ComputeSlots(2).request(99).units == 1 and jobs.ComputeSlots(2, reserved=0).request(99).units == 2


def test_stop_while_waiting_cancels_the_job_and_frees_its_place():
    slots = jobs.ComputeSlots(1)
    entered, release, never = threading.Event(), threading.Event(), threading.Event()
    running = _blocking_job(slots, entered, release).start()
    assert entered.wait(WAIT)
    waiting = _blocking_job(slots, never, threading.Event()).start()
    assert waiting.queued.wait(WAIT)
    waiting.request_stop()
    assert waiting.wait(WAIT)
    assert not never.is_set() and "was not started" in waiting.error and "Stop was pressed" in waiting.error
    assert slots.waiting == 0
    release.set()
    assert running.wait(WAIT) and slots.in_use == 0


def _prefetch_like(slots, entered, label="prefetch"):
    """A preemptible job (as the λ prefetch) that reports progress until it is told to stop."""
    def fn(job):
        entered.set()
        while not job.report(0.5, "prefetching"):
            job._stop.wait(0.01)
        return label

    return jobs.Job(fn, label, slots=slots, preemptible=True)


def test_a_persons_request_jumps_the_line_and_preempts_only_preemptible_work():
    # Issue 41: a live λ step waited for the compute slot behind other sessions' prefetches.
    # Capacity 2, nothing kept back: an ordinary job and a prefetch hold both units; an ordinary job
    # waits in line.
    slots = jobs.ComputeSlots(2, reserved=0)
    e_job, r_job, e_pre, e_wait, r_wait = (threading.Event() for _ in range(5))
    ordinary = _blocking_job(slots, e_job, r_job, "ordinary").start()
    prefetch = _prefetch_like(slots, e_pre).start()
    assert e_job.wait(WAIT) and e_pre.wait(WAIT) and slots.in_use == 2
    waiting = _blocking_job(slots, e_wait, r_wait, "waiting").start()
    assert waiting.queued.wait(WAIT)
    # a person's request: ahead of the waiting job; the prefetch (not the ordinary job) is asked to stop
    with jobs.interactive():
        with jobs.compute_slot(1, slots=slots):
            assert jobs.slot_held_since() is not None
            assert prefetch.wait(WAIT) and prefetch.stop_reason == "preempted" and prefetch.result == "prefetch"
            assert not ordinary.stop_requested and not ordinary.done
            assert not e_wait.is_set() and slots.in_use == 2   # the person got the prefetch's unit, not the job in line
            # re-entrant: a cached fit computed inside takes no second unit
            with jobs.compute_slot(1, slots=slots):
                assert slots.in_use == 2
    assert jobs.slot_held_since() is None
    assert e_wait.wait(WAIT)                              # then the line moves on, in order
    r_job.set()
    r_wait.set()
    assert ordinary.wait(WAIT) and waiting.wait(WAIT)
    assert (ordinary.result, waiting.result) == ("ordinary", "waiting") and slots.in_use == 0


def test_an_ordinary_request_never_preempts_and_a_person_waits_for_ordinary_work():
    slots = jobs.ComputeSlots(1)
    e_pre = threading.Event()
    prefetch = _prefetch_like(slots, e_pre).start()
    assert e_pre.wait(WAIT)
    ticket = slots.request(1)                              # an ordinary request: it waits, preempts nothing
    assert not slots.wait(ticket, 0.05) and not prefetch.stop_requested
    slots.release(ticket)
    prefetch.request_stop()
    assert prefetch.wait(WAIT) and prefetch.stop_reason == "user"
    # a person's request meets only ordinary work: it waits (nothing to preempt) and is served first
    e_job, r_job = threading.Event(), threading.Event()
    ordinary = _blocking_job(slots, e_job, r_job).start()
    assert e_job.wait(WAIT)
    later = slots.request(1)
    person = slots.request(1, priority=True)
    assert slots.waiting == 2 and not ordinary.stop_requested
    r_job.set()
    assert slots.wait(person, WAIT) and not later.granted
    slots.release(person)
    assert slots.wait(later, WAIT)
    slots.release(later)
    assert ordinary.wait(WAIT) and slots.in_use == 0


def test_the_default_ceiling_is_the_core_count_and_compare_uses_the_same_slots():
    assert jobs.MAX_WORKERS == (os.cpu_count() or 1)
    if not os.environ.get("COLIDE_MAX_CONCURRENT_JOBS"):
        assert jobs.COMPUTE_SLOTS.capacity == jobs.MAX_WORKERS
    slots = jobs.ComputeSlots(1)
    with jobs.compute_slot(1, slots=slots):
        assert slots.in_use == 1
    assert slots.in_use == 0
    texts = []
    holder = slots.request(1)
    done = threading.Event()

    def on_wait(text):
        texts.append(text)
        slots.release(holder)                    # the other computation ends while we wait

    with jobs.compute_slot(1, on_wait=on_wait, slots=slots):
        done.set()
    assert done.is_set() and texts and "waiting for a free slot" in texts[0]


# --- jobs end with their session ------------------------------------------------------------------

def _reporting_job(limit=100_000):
    """A job that reports progress until told to stop (or ``limit`` reports: then it failed to stop)."""
    def fn(job):
        for i in range(limit):
            if job.report(i / limit, f"step {i}"):
                return ("stopped", i)
        return ("ran to the end", limit)

    return jobs.Job(fn, "fit", slots=jobs.ComputeSlots(1))


def test_a_job_whose_session_is_gone_stops():
    job = _reporting_job().watch(lambda: False, grace=0).start()
    assert job.wait(WAIT)
    assert job.result == ("stopped", 0) and job.stop_reason == "session"


def test_a_short_disconnect_within_the_grace_period_does_not_stop_it():
    answers = iter([False] * 50 + [True] * 10**6)
    job = _reporting_job(limit=200).watch(lambda: next(answers), grace=3600).start()
    assert job.wait(WAIT)
    assert job.result == ("ran to the end", 200) and job.stop_reason is None


def test_a_job_waiting_for_a_slot_is_dropped_when_its_session_ends():
    slots = jobs.ComputeSlots(1)
    entered, release, never = threading.Event(), threading.Event(), threading.Event()
    running = _blocking_job(slots, entered, release).start()
    assert entered.wait(WAIT)
    orphan = _blocking_job(slots, never, threading.Event()).watch(lambda: False, grace=0).start()
    assert orphan.wait(WAIT)
    assert not never.is_set() and "its session ended" in orphan.error and orphan.stop_reason == "session"
    release.set()
    assert running.wait(WAIT)


def test_session_liveness_asks_the_runtime_about_this_session(monkeypatch):
    import streamlit.runtime as rt
    import streamlit.runtime.scriptrunner as sr

    class Ctx:
        session_id = "abc"

    active = {"abc"}

    class FakeRuntime:
        def is_active_session(self, session_id):
            return session_id in active

    monkeypatch.setattr(sr, "get_script_run_ctx", lambda suppress_warning=False: Ctx())
    monkeypatch.setattr(rt.Runtime, "exists", classmethod(lambda cls: True))
    monkeypatch.setattr(rt.Runtime, "instance", classmethod(lambda cls: FakeRuntime()))
    alive = jobs.session_liveness()
    assert alive() is True
    active.clear()                                 # the tab was closed
    assert alive() is False
    job = _reporting_job().watch(alive, grace=0).start()
    assert job.wait(WAIT) and job.stop_reason == "session" and job.result[0] == "stopped"


def test_start_job_ties_the_job_to_the_session(monkeypatch):
    seen = []
    monkeypatch.setattr(jobs, "session_liveness", lambda: "the check")
    real_watch = jobs.Job.watch
    monkeypatch.setattr(jobs.Job, "watch", lambda self, alive, grace=jobs.SESSION_GRACE_S:
                        seen.append(alive) or real_watch(self, None))
    state = {}
    slot = jobs.JobSlot("job", "messages", stop_key="stop", stop_help="")
    assert jobs.start_job(state, slot, lambda: jobs.Job(lambda job: 1, "x", slots=jobs.ComputeSlots(1)))
    assert state["job"].wait(WAIT) and state["job"].result == 1 and seen == ["the check"]


# --- workers ----------------------------------------------------------------------------------------

def test_the_parallel_workers_widget_stops_at_the_core_count(monkeypatch, new_app):
    at = new_app().run()
    at.switch_page("pages/edge_confidence.py").run()
    assert not at.exception, at.exception
    widget = at.number_input(key="boot_jobs")
    assert widget.max == os.cpu_count() and widget.min == 1
    # A value beyond it sent by a client never reaches a job: Streamlit resets an out-of-range
    # number, and the page checks the workers again when the run starts (check_widget_values).
    started = []
    real_start = jobs.Job.start

    def recording_start(self):
        started.append(self)
        self.request_stop()          # nothing is computed: the job ends at its first report
        return real_start(self)

    monkeypatch.setattr(jobs.Job, "start", recording_start)
    at.number_input(key="boot_jobs").set_value((os.cpu_count() or 1) + 1)
    at.button(key="boot_run").click().run()
    assert not at.exception, at.exception
    assert 1 <= at.session_state["boot_jobs"] <= os.cpu_count()
    assert all(job.units <= os.cpu_count() for job in started)
