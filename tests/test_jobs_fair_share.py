"""Issue 53, high 3: the compute slot kept for people and the fair share between sessions.

On the old code every request was served first come, first served and ordinary work could hold
every unit: in round 5's load test a parallel bootstrap held both units of a 2-core server and 6
of 20 live λ steps were refused after waiting 2 s for a slot. Now ordinary work holds at most
``capacity - 1`` units together (a parallel job starts as many workers as it holds), a person's
request (``jobs.interactive``: the live Learn page's fits) may use the last one, and when several
requests wait the one whose session holds the fewest units goes first, then the oldest.

The sessions here are fake owners ("A", "B", ...) given to ``ComputeSlots.request`` and ``Job``;
the order is decided by the requests' sequence, not a clock. Jobs that run in threads hold their
slot until a ``threading.Event`` the test sets; nothing sleeps to synchronise.
"""
import threading

import pytest

from dashboard.infra import jobs

WAIT = 60.0  # seconds; only an upper bound on waits for events that must happen


def _holding_job(slots, entered, release, *, units=1, owner=None, label="job", seen=None):
    """A job that records ``job.units`` when it starts, then holds its slot until ``release``."""
    def fn(job):
        if seen is not None:
            seen.append((job.units, job.status))
        entered.set()
        assert release.wait(WAIT)
        return label

    return jobs.Job(fn, label, units=units, slots=slots, owner=owner, budget_s=None)


# --- the slot kept for people ---------------------------------------------------------------------

def test_ordinary_work_leaves_the_last_unit_to_a_persons_request():
    slots = jobs.ComputeSlots(2)
    assert (slots.reserved, slots.ordinary_capacity) == (1, 1)
    first = slots.request(1, owner="A")
    second = slots.request(1, owner="B")          # ordinary: 1 + 1 > the ordinary share of 1
    assert first.granted and not second.granted and slots.in_use == 1
    person = slots.request(1, priority=True, owner="C")
    assert person.granted and slots.in_use == 2   # the kept unit, at once
    slots.release(person)
    assert not second.granted and slots.in_use == 1   # the freed unit is still kept back
    assert "1 of 2 compute slots busy" in slots.describe() and "kept for live fits" in slots.describe()
    slots.release(first)
    assert second.granted and slots.in_use == 1
    slots.release(second)
    assert slots.in_use == 0 and slots.waiting == 0


def test_a_persons_requests_may_fill_every_unit_and_ordinary_work_then_waits():
    slots = jobs.ComputeSlots(2)
    people = [slots.request(1, priority=True, owner=o) for o in ("A", "B")]
    assert all(t.granted for t in people) and slots.in_use == 2
    ordinary = slots.request(1, owner="C")
    assert not ordinary.granted
    slots.release(people[0])
    assert ordinary.granted and slots.in_use == 2  # the ordinary share (1) counts ordinary work only
    for t in (people[1], ordinary):
        slots.release(t)
    assert slots.in_use == 0


def test_a_one_unit_server_keeps_nothing_back():
    slots = jobs.ComputeSlots(1)
    assert (slots.reserved, slots.ordinary_capacity, slots.clip(5)) == (0, 1, 1)
    ordinary = slots.request(1, owner="A")
    assert ordinary.granted                       # as before: the one unit serves ordinary work
    person = slots.request(1, priority=True, owner="B")
    assert not person.granted                     # and a person waits for it
    assert "kept" not in slots.describe()
    slots.release(ordinary)
    assert person.granted
    slots.release(person)
    # the server's own slots follow the same rule
    assert jobs.COMPUTE_SLOTS.reserved == (1 if jobs.MAX_CONCURRENT > 1 else 0)


def test_a_parallel_job_starts_as_many_workers_as_it_was_granted():
    slots = jobs.ComputeSlots(2)
    entered, release, seen = threading.Event(), threading.Event(), []
    boot = _holding_job(slots, entered, release, units=2, label="Bootstrap", seen=seen)
    assert (boot.units_asked, boot.units) == (2, 1)
    boot.start()
    try:
        assert entered.wait(WAIT)
        [(workers, status)] = seen
        assert workers == 1 and "1 of the 2 workers asked" in status and "live fits" in status
        assert slots.in_use == 1
        # the live λ step finds the kept unit free while the bootstrap runs (round 5: refused after 2 s)
        with jobs.interactive(wait=0.0):
            with jobs.compute_slot(1, slots=slots) as granted:
                assert granted == 1 and slots.in_use == 2
    finally:
        release.set()
    assert boot.wait(WAIT) and boot.result == "Bootstrap" and slots.in_use == 0
    # a bigger server: an ordinary job holds at most capacity - 1; compute_slot says what it granted
    assert jobs.Job(lambda job: None, "x", units=8, slots=jobs.ComputeSlots(4)).units == 3
    with jobs.compute_slot(2, slots=jobs.ComputeSlots(2)) as granted:
        assert granted == 1
    with jobs.compute_slot(3, slots=jobs.ComputeSlots(4)) as granted:
        assert granted == 3
        with jobs.compute_slot(1, slots=jobs.ComputeSlots(4)) as inner:  # re-entrant: what the thread holds
            assert inner == 3


def test_the_bootstrap_page_passes_its_granted_workers_to_the_bootstrap(new_app, monkeypatch):
    # Edge confidence with 2 workers asked on a 2-unit server: the bootstrap gets n_jobs = 1
    from colide_core.evaluation import stability

    monkeypatch.setattr(jobs, "COMPUTE_SLOTS", jobs.ComputeSlots(2))
    calls = []

    def fake_bootstrap(X, estimator, **kwargs):
        calls.append(kwargs["n_jobs"])
        raise ValueError("not computed in this test")

    monkeypatch.setattr(stability, "bootstrap_edges", fake_bootstrap)
    at = new_app().run()
    at.switch_page("pages/edge_confidence.py").run()
    assert not at.exception, at.exception
    asked = min(2, jobs.MAX_WORKERS)
    at.number_input(key="boot_jobs").set_value(asked)
    at.button(key="boot_run").click().run()
    assert not at.exception, at.exception
    assert calls == [1]
    assert any("not computed in this test" in e.value for e in at.error)


def test_the_compare_sweep_runs_in_parallel_only_on_the_units_it_was_granted(new_app, monkeypatch):
    # Compare's parallel sweep asks for MAX_WORKERS units: on a 2-unit server it holds 1 and runs
    # serially; with a third unit it holds 2 and runs in parallel
    from dashboard import comparison

    calls = []

    def fake_run_all(tasks, *, parallel=False, **kwargs):
        calls.append(parallel)
        raise RuntimeError("not computed in this test")

    monkeypatch.setattr(comparison, "run_all", fake_run_all)
    at = new_app().run()
    at.switch_page("pages/compare.py").run()
    assert not at.exception, at.exception
    at.session_state["sim_d"] = 4
    at.multiselect(key="cmp_methods").set_value(["SortNRegress"])
    at.checkbox(key="cmp_parallel").check().run()
    for slots in (jobs.ComputeSlots(2), jobs.ComputeSlots(3)):
        monkeypatch.setattr(jobs, "COMPUTE_SLOTS", slots)
        at.button(key="cmp_run").click().run()
        assert not at.exception, at.exception
        assert any("not computed in this test" in e.value for e in at.error)
    assert calls == [False, jobs.MAX_WORKERS > 1]


# --- the fair share between sessions --------------------------------------------------------------

def test_the_session_holding_the_fewest_units_is_served_next():
    slots = jobs.ComputeSlots(4)                  # ordinary share: 3 units
    a1, a2, b1 = (slots.request(1, owner=o) for o in ("A", "A", "B"))
    assert all(t.granted for t in (a1, a2, b1)) and slots.in_use == 3
    a3 = slots.request(1, owner="A")              # in line first ...
    b2 = slots.request(1, owner="B")
    c1 = slots.request(1, owner="C")              # ... C last, but C holds nothing
    assert not any(t.granted for t in (a3, b2, c1))
    assert (slots.held_by("A"), slots.held_by("B"), slots.held_by("C")) == (2, 1, 0)
    slots.release(a1)                             # A 1, B 1, C 0: C's turn (first come would be A's)
    assert c1.granted and not a3.granted and not b2.granted
    slots.release(c1)                             # A 1, B 1, C 0 (nothing waiting): tie, the oldest is A's
    assert a3.granted and not b2.granted
    slots.release(a2)                             # A 1, B 1: B's, the only one left
    assert b2.granted
    for t in (a3, b1, b2):
        slots.release(t)
    assert slots.in_use == 0 and slots.waiting == 0


def test_equal_holdings_are_served_longest_waiting_first_and_a_person_before_all():
    slots = jobs.ComputeSlots(3)                  # ordinary share: 2 units
    x, y = slots.request(1, owner="X"), slots.request(1, owner="Y")
    d, e = slots.request(1, owner="D"), slots.request(1, owner="E")   # both hold 0: D waited longer
    assert not d.granted and not e.granted
    slots.release(x)
    assert d.granted and not e.granted
    # a person's request from a session that holds units still comes before ordinary work
    y_person = slots.request(1, priority=True, owner="Y")
    assert y_person.granted                       # the kept unit
    slots.release(y)
    assert e.granted
    for t in (d, e, y_person):
        slots.release(t)
    assert slots.in_use == 0


def test_a_large_request_is_not_passed_by_smaller_ones():
    slots = jobs.ComputeSlots(4)                  # ordinary share: 3 units
    a = slots.request(2, owner="A")
    big = slots.request(2, owner="B")             # 2 + 2 > 3: waits
    small = slots.request(1, owner="C")           # would fit, but B holds as little and waited longer
    assert a.granted and not big.granted and not small.granted
    slots.release(a)
    assert big.granted and small.granted and slots.in_use == 3
    for t in (big, small):
        slots.release(t)


def test_jobs_of_several_sessions_are_served_by_what_their_sessions_hold():
    # Threads: session A runs two jobs, B one, on a 4-unit server (ordinary share 3); then A, B and
    # C each queue one job, A's first. When one of A's ends, C's job runs next, not A's.
    slots = jobs.ComputeSlots(4)
    release = {k: threading.Event() for k in ("a1", "a2", "b1", "a3", "b2", "c1")}
    entered = {k: threading.Event() for k in release}
    owner = {k: k[0].upper() for k in release}
    made = {}
    try:
        for k in ("a1", "a2", "b1"):
            made[k] = _holding_job(slots, entered[k], release[k], owner=owner[k], label=k).start()
            assert entered[k].wait(WAIT)
        assert slots.held_by("A") == 2 and slots.held_by("B") == 1
        for k in ("a3", "b2", "c1"):              # each joins the line before the next is made
            made[k] = _holding_job(slots, entered[k], release[k], owner=owner[k], label=k).start()
            assert made[k].queued.wait(WAIT)
        assert slots.waiting == 3
        release["a1"].set()
        assert made["a1"].wait(WAIT) and entered["c1"].wait(WAIT)
        assert not entered["a3"].is_set() and not entered["b2"].is_set()
        release["b1"].set()                       # A 1, B 0, C 1: B's job
        assert made["b1"].wait(WAIT) and entered["b2"].wait(WAIT) and not entered["a3"].is_set()
    finally:
        for e in release.values():
            e.set()
    assert all(j.wait(WAIT) for j in made.values())
    assert {k: j.result for k, j in made.items()} == {k: k for k in made} and slots.in_use == 0


def test_a_request_is_its_script_runs_session_by_default(monkeypatch):
    import streamlit.runtime.scriptrunner as scriptrunner

    class _Ctx:
        session_id = "session-1"

    slots = jobs.ComputeSlots(2)
    assert jobs.current_owner() is None and jobs.Job(lambda job: None, "x", slots=slots).owner is None
    monkeypatch.setattr(scriptrunner, "get_script_run_ctx", lambda suppress_warning=False: _Ctx())
    assert jobs.current_owner() == "session-1"
    assert jobs.Job(lambda job: None, "x", slots=slots).owner == "session-1"
    ticket = slots.request(1)
    assert ticket.owner == "session-1" and slots.held_by("session-1") == 1
    slots.release(ticket)


@pytest.mark.parametrize("reserved, expected", [(None, 1), (0, 0), (5, 3)])
def test_the_reserve_is_within_the_capacity(reserved, expected):
    assert jobs.ComputeSlots(4, reserved=reserved).reserved == expected
