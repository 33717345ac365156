"""Issue 53: several jobs followed at once (medium 3), the per-job wall-time budget (high 3) and
the refusal of a job whose estimate is above it (low 4).

On the old code ``follow_job`` blocked the script on one job: a page's second job had no bar and
no Stop while the first was followed (a ranking ran on for 670 s after its sibling was stopped),
no job had a wall-time budget, and nothing refused a job expected to run past one.

Every job here is deterministic: it waits on a ``threading.Event`` the test sets, and the budget
reads a fake clock the test moves; nothing sleeps for timing.
"""
import dataclasses
import threading

import numpy as np
import pandas as pd
import pytest

from colide_core.exceptions import RunSettingsError
from dashboard.infra import jobs
from dashboard.infra.state import predict as ps
from dashboard.infra.text import md_escape
from tests._apps import open_predict
from tests._schedules import QUICK

WAIT = 120.0


class _Rerun(Exception):
    """What the fake ``st.rerun`` raises (the real one ends the script run)."""


class _Bar:
    def __init__(self, calls):
        self._calls = calls

    def progress(self, value, text=""):
        self._calls.append(("redraw", text))


class _FakeStreamlit:
    """The calls ``follow_jobs`` makes on ``st``, recorded; ``drawn`` is set once ``n_stops`` Stop
    buttons are drawn (the wait loop starts right after)."""

    def __init__(self, state, n_stops):
        self.session_state = state
        self.calls = []
        self.stops = {}
        self.drawn = threading.Event()
        self._n_stops = n_stops

    def progress(self, value, text=""):
        self.calls.append(("bar", text))
        return _Bar(self.calls)

    def button(self, label, key, on_click=None, args=(), **kwargs):
        self.calls.append(("stop", key))
        self.stops[key] = (on_click, args)
        if len(self.stops) == self._n_stops:
            self.drawn.set()
        return False

    def rerun(self):
        raise _Rerun


def _slot(name):
    return jobs.JobSlot(name + "_job", name + "_messages", stop_key=name + "_stop", stop_help="")


def _in_thread(fn):
    """Run ``fn()`` in a thread; returns (thread, outcome list: the exception it ended with)."""
    outcome = []

    def run():
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - read by the test
            outcome.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, outcome


def _heeding_job(label, pressed, slots):
    """Reports once, waits until the test says Stop was pressed, then reports again: returns how
    many of 5 steps it made and whether it heard Stop."""
    def fn(job):
        job.report(0.2, f"{label}: 1 of 5")
        assert pressed.wait(WAIT)
        return ("stopped", 1) if job.report(0.4, f"{label}: 2 of 5") else ("ran on", 5)

    return jobs.Job(fn, label, slots=slots, budget_s=None)


def _released_job(label, release, slots):
    def fn(job):
        job.report(0.5, f"{label}: holding")
        assert release.wait(WAIT)
        return ("stopped", 0) if job.report(1.0, f"{label}: done") else ("done", 3)

    return jobs.Job(fn, label, slots=slots, budget_s=None)


def test_two_jobs_get_both_bars_and_stops_in_one_run_and_stop_ends_only_its_own(monkeypatch):
    slots = jobs.ComputeSlots(4)
    pressed, release = threading.Event(), threading.Event()
    a, b = _slot("a"), _slot("b")
    job_a = _heeding_job("Intervals", pressed, slots).start()
    job_b = _released_job("Ranking", release, slots).start()
    state = {a.job: job_a, b.job: job_b, a.messages: [], b.messages: []}
    fake = _FakeStreamlit(state, n_stops=2)
    monkeypatch.setattr(jobs, "st", fake)
    harvest = lambda job: [("info", f"{job.label}: {job.result[0]}")]  # noqa: E731
    try:
        follower, outcome = _in_thread(lambda: jobs.follow_jobs([(a, harvest), (b, harvest)]))
        assert fake.drawn.wait(WAIT)
        # both bars and both Stop buttons, before the one wait loop (the old code drew only a's)
        assert [c for c in fake.calls if c[0] in ("bar", "stop")] == [
            ("bar", "Intervals: 1 of 5"), ("stop", "a_stop"), ("bar", "Ranking: holding"), ("stop", "b_stop")]
        on_click, args = fake.stops["a_stop"]   # a's Stop, as the button's on_click runs it
        on_click(*args)
        pressed.set()
        follower.join(WAIT)
        assert not follower.is_alive() and len(outcome) == 1 and isinstance(outcome[0], _Rerun)
        # a ended on its Stop and was harvested; b runs on, unstopped, still in its slot
        assert job_a.done and job_a.stop_reason == "user" and job_a.result == ("stopped", 1)
        assert state[a.job] is None and state[a.messages] == [("info", "Intervals: stopped")]
        assert not job_b.done and not job_b.stop_requested and job_b.stop_reason is None
        assert state[b.job] is job_b and state[b.messages] == []
    finally:
        pressed.set()
        release.set()
    assert job_b.wait(WAIT) and job_b.result == ("done", 3)


def test_follow_job_is_the_one_slot_case_and_does_nothing_without_a_job(monkeypatch):
    slots = jobs.ComputeSlots(1)
    a = _slot("a")
    state = {a.job: None, a.messages: [("info", "kept")]}
    fake = _FakeStreamlit(state, n_stops=1)
    monkeypatch.setattr(jobs, "st", fake)
    jobs.follow_job(a, lambda job: [])         # no job: no bar, no rerun, messages kept
    assert fake.calls == [] and state[a.messages] == [("info", "kept")]
    release = threading.Event()
    state[a.job] = _released_job("Fit", release, slots).start()
    follower, outcome = _in_thread(lambda: jobs.follow_job(a, lambda job: [("success", str(job.result))]))
    assert fake.drawn.wait(WAIT)
    release.set()
    follower.join(WAIT)
    assert isinstance(outcome[0], _Rerun) and state[a.job] is None
    assert state[a.messages] == [("success", "('done', 3)")]
    assert fake.calls[:2] == [("bar", "Fit: holding"), ("stop", "a_stop")]


# --- the per-job wall-time budget ---------------------------------------------------------------

class _Clock:
    """A clock the test moves by hand."""

    def __init__(self, now=100.0):
        self.now = now

    def __call__(self):
        return self.now


def test_a_job_past_its_budget_is_stopped_as_by_stop_and_keeps_its_partial_result():
    clock, step = _Clock(100.0), threading.Event()

    def fn(job):
        done = []
        for i in range(3):
            if job.report(i / 3, f"{i} of 3"):
                return done
            done.append(i)
            if i == 0:
                assert step.wait(WAIT)
        return done

    job = jobs.Job(fn, "Intervals", slots=jobs.ComputeSlots(1), budget_s=10.0, clock=clock).start()
    clock.now = 109.0             # 9 s after the slot was granted: within the budget
    step.set()
    # step 0 ran at t = 100, steps 1 and 2 at 109 (< 10 s): all three done
    assert job.wait(WAIT) and job.result == [0, 1, 2] and job.stop_reason is None

    clock, step = _Clock(100.0), threading.Event()
    job = jobs.Job(fn, "Intervals", slots=jobs.ComputeSlots(1), budget_s=10.0, clock=clock).start()
    clock.now = 110.0             # 10 s: the budget is spent at the next report
    step.set()
    assert job.wait(WAIT) and job.result == [0] and job.stop_reason == "budget" and job.stop_requested
    assert job.error is None


def test_without_a_budget_the_clock_is_never_read():
    def clock():
        raise AssertionError("the clock was read")

    job = jobs.Job(lambda job: [job.report(k / 4, "x") for k in range(4)], "Fit", slots=jobs.ComputeSlots(1),
                   budget_s=None, clock=clock).start()
    assert job.wait(WAIT) and job.error is None and job.result == [False] * 4


def test_the_budget_is_read_once_from_the_environment(monkeypatch):
    for raw, expected in (("600", 600.0), (" 2.5 ", 2.5), ("", None), ("ten", None), ("0", None), ("-5", None),
                          ("inf", None), ("nan", None)):
        monkeypatch.setenv("COLIDE_JOB_MAX_SECONDS", raw)
        assert jobs._job_max_seconds() == expected, raw
    monkeypatch.delenv("COLIDE_JOB_MAX_SECONDS")
    assert jobs._job_max_seconds() is None       # a local `make run`: no budget
    monkeypatch.setattr(jobs, "JOB_MAX_SECONDS", 45.0)
    assert jobs.Job(lambda job: None, "x").budget_s == 45.0
    assert jobs.Job(lambda job: None, "x", budget_s=None).budget_s is None


def test_follow_jobs_says_the_budget_stopped_the_job(monkeypatch):
    clock, step = _Clock(0.0), threading.Event()

    def fn(job):
        job.report(0.1, "1 of 30")
        assert step.wait(WAIT)
        return 1 if job.report(0.2, "2 of 30") else 30

    a = _slot("a")
    job = jobs.Job(fn, "Prediction intervals (30 refits)", slots=jobs.ComputeSlots(1), budget_s=600,
                   clock=clock).start()
    clock.now = 600.0
    step.set()
    assert job.wait(WAIT) and job.stop_reason == "budget"
    state = {a.job: job, a.messages: []}
    monkeypatch.setattr(jobs, "st", _FakeStreamlit(state, n_stops=1))
    with pytest.raises(_Rerun):
        jobs.follow_jobs([(a, lambda job: [("info", f"Stopped after {job.result} of the 30 refits asked.")])])
    assert state[a.messages] == [
        ("warning", "“Prediction intervals \\(30 refits\\)” was stopped after the server's 600 s budget per job "
                    "(`COLIDE_JOB_MAX_SECONDS`), as if Stop had been pressed: what it had finished is kept."),
        ("info", "Stopped after 1 of the 30 refits asked.")]


def test_check_job_budget_refuses_only_above_the_budget():
    jobs.check_job_budget(40.0, "20 refits × 2 s", "ask for at most 25 resamples", budget_s=50.0)
    jobs.check_job_budget(1e9, "x", "y", budget_s=None)         # no budget: nothing refused
    jobs.check_job_budget(None, "x", "y", budget_s=1.0)         # unknown estimate: nothing refused
    with pytest.raises(RunSettingsError) as info:
        jobs.check_job_budget(60.0, "30 refits × 2 s", "ask for at most 25 resamples", budget_s=50.0)
    assert info.value.problems == [
        "this job would take about 60 s (30 refits × 2 s), above this server's budget of 50 s per job "
        "(COLIDE_JOB_MAX_SECONDS), after which it would be stopped; ask for at most 25 resamples"]


# --- the Predict page -----------------------------------------------------------------------------

pytest_app = pytest.mark.usefixtures("fresh_caches")


@pytest.fixture
def sachs():
    from dashboard.data import sachs_dataset

    return sachs_dataset()


@pytest_app
def test_predict_refuses_a_job_above_the_servers_budget(monkeypatch, new_app, sachs):
    # The fit shown took 20 s (set here): 30 resamples are about 600 s, above a 500 s budget, so
    # both refit jobs are refused with one sentence; 20 (400 s) start. floor(500 / 20) = 25.
    at = open_predict(new_app, sachs, QUICK)
    at.session_state["fit_results"] = {v: dataclasses.replace(r, fit_time=20.0)
                                       for v, r in at.session_state["fit_results"].items()}
    monkeypatch.setattr(jobs, "JOB_MAX_SECONDS", 500.0)
    problem = ("this job would take about 10 min (30 refits × 20 s), above this server's budget of 500 s per job "
               "(COLIDE_JOB_MAX_SECONDS), after which it would be stopped; ask for at most 25 resamples")
    sentence = "Nothing was started: " + md_escape(problem) + "."  # escaped once, as every refusal
    for n_key, run_key, messages in (("pred_n_boot", "pred_boot_run", ps.BOOT_MESSAGES),
                                     ("plan_n_boot", "plan_run", ps.PLAN_MESSAGES)):
        at.number_input(key=n_key).set_value(30).run()
        at.button(key=run_key).click().run()
        assert not at.exception, at.exception
        assert at.session_state[messages] == [("error", sentence)]
        assert sentence in [e.value for e in at.error]
    assert any("This server stops a job after 500 s" in c.value for c in at.caption)
    # 20 resamples (about 400 s by the estimate; the real refits take a second or two): started and finished
    at.number_input(key="pred_n_boot").set_value(20).run()
    at.button(key="pred_boot_run").click().run()
    assert not at.exception, at.exception
    [(level, text)] = at.session_state[ps.BOOT_MESSAGES]
    assert level == "success" and text.startswith("20 refits in "), text


class _RecordingSt:
    """``dashboard.infra.jobs``' view of Streamlit: the real module, with the bars and Stop buttons
    recorded; an event is set when a given number of Stop buttons has been drawn."""

    def __init__(self):
        import streamlit

        self._st = streamlit
        self.calls = []
        self.stops = {}
        self.events = {}

    def __getattr__(self, name):
        return getattr(self._st, name)

    def when_stops(self, n):
        self.events[n] = threading.Event()
        return self.events[n]

    def progress(self, value, text=""):
        self.calls.append(("bar", text))
        return self._st.progress(value, text=text)

    def button(self, label, key=None, on_click=None, args=(), **kwargs):
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        self.calls.append(("stop", key))
        self.stops[key] = (on_click, args, get_script_run_ctx())
        n = sum(1 for c in self.calls if c[0] == "stop")
        if n in self.events:
            self.events[n].set()
        return self._st.button(label, key=key, on_click=on_click, args=args, **kwargs)

    def press(self, key):
        """Run Stop ``key``'s ``on_click`` on this session's state, as its click would (in a thread
        carrying the script run's context: ``st.session_state`` is the session's there)."""
        from streamlit.runtime.scriptrunner import add_script_run_ctx

        on_click, args, ctx = self.stops[key]
        thread = add_script_run_ctx(threading.Thread(target=on_click, args=args), ctx)
        thread.start()
        thread.join(WAIT)


@pytest_app
def test_predict_follows_intervals_and_ranking_together_and_stop_ends_only_one(monkeypatch, new_app, sachs):
    # The page's two refit jobs run at once (as on a server with 4 or more slots): one run draws both
    # bars and both Stops; Stop on the intervals ends them (partial refits kept) while the ranking
    # runs on unstopped, its bar alone on the next run, until it ends and is harvested.
    at = open_predict(new_app, sachs, QUICK)
    d = len(sachs.node_names)
    slots = jobs.ComputeSlots(4)
    pressed, release = threading.Event(), threading.Event()

    def intervals(job):
        job.report(0.2, "Prediction intervals (5 refits): 1 of 5")
        assert pressed.wait(WAIT)
        kept = 2 if job.report(0.4, "Prediction intervals (5 refits): 2 of 5") else 5
        return np.zeros((kept, d)), 5

    def ranking(job):
        job.report(0.5, "Ranking the experiments (3 refits): 1 of 3")
        assert release.wait(WAIT)
        table = pd.DataFrame()
        table.attrs["n_graphs"] = 0 if job.report(1.0, "done") else 3
        return table

    boot = jobs.Job(intervals, "Prediction intervals (5 refits)", slots=slots, budget_s=None).start()
    plan = jobs.Job(ranking, "Ranking the experiments (3 refits)", slots=slots, budget_s=None).start()
    at.session_state[ps.BOOT_JOB] = boot
    at.session_state[ps.PLAN_JOB] = plan
    rec = _RecordingSt()
    both, plan_alone = rec.when_stops(2), rec.when_stops(3)
    monkeypatch.setattr(jobs, "st", rec)
    seen = {}

    def watcher():
        assert both.wait(WAIT)
        rec.press("pred_boot_stop")         # the intervals' Stop
        pressed.set()
        assert plan_alone.wait(WAIT)        # the next run: the ranking's bar and Stop alone
        seen["plan"] = (plan.done, plan.stop_requested)
        release.set()

    thread, outcome = _in_thread(watcher)
    try:
        at.run()
    finally:
        pressed.set()
        release.set()
    thread.join(WAIT)
    assert not thread.is_alive() and outcome == [], outcome
    assert not at.exception, at.exception
    drawn = [c for c in rec.calls if c[0] in ("bar", "stop")]
    assert drawn == [("bar", "Prediction intervals (5 refits): 1 of 5"), ("stop", "pred_boot_stop"),
                     ("bar", "Ranking the experiments (3 refits): 1 of 3"), ("stop", "plan_stop"),
                     ("bar", "Ranking the experiments (3 refits): 1 of 3"), ("stop", "plan_stop")]
    assert seen["plan"] == (False, False)   # still running, unstopped, after the intervals' Stop
    assert boot.stop_reason == "user" and plan.stop_reason is None
    [(level, text)] = at.session_state[ps.BOOT_MESSAGES]
    assert level == "info" and text.startswith("Stopped after 2 of the 5 refits asked in ")
    [(level, text)] = at.session_state[ps.PLAN_MESSAGES]
    assert level == "success" and text.startswith("Ranked 0 candidates on 3 refits in ")
    assert at.session_state[ps.BOOT_JOB] is None and at.session_state[ps.PLAN_JOB] is None


def test_live_jobs_lists_a_started_job_until_it_ends():
    # the registry the suite's teardown uses (tests/conftest.py): a job is listed from its start to
    # its end, Stop ends it at its next progress report, and a job never started is not listed
    release = threading.Event()

    def fn(job):
        while not job.progress(0, 1):  # reports until Stop
            release.wait(0.01)
        return "stopped"

    idle = jobs.Job(fn, "never started", slots=jobs.ComputeSlots(1))
    job = jobs.Job(fn, "a test job", slots=jobs.ComputeSlots(1)).start()
    assert job in jobs.live_jobs() and idle not in jobs.live_jobs()
    job.request_stop()
    assert job.wait(timeout=60)
    assert job not in jobs.live_jobs() and job.stop_reason == "user"
