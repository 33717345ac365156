"""A running job steps aside at its progress reports while a person's live step computes (issue 53,
high 3: the honest tab's λ step p90 was 3.3× its quiet baseline beside one-unit jobs, which share the
server's process, cores and GIL with the step). Deterministic: no sleeps as synchronisation."""
import threading

from dashboard.infra import jobs
from dashboard.infra.slots import ComputeSlots


def test_wait_while_people_follows_the_priority_tickets_only():
    slots = ComputeSlots(3)
    ordinary = slots.request(1, owner="job")
    assert ordinary.granted and slots.wait_while_people(0) is True  # a job's units: nobody to wait for
    person = slots.request(1, priority=True, owner="tab")
    assert person.granted and slots.wait_while_people(0) is False   # a live step holds a unit
    slots.release(person)
    assert slots.wait_while_people(0) is True
    slots.release(ordinary)


def test_a_waiting_report_resumes_when_the_step_ends():
    slots = ComputeSlots(2)
    person = slots.request(1, priority=True, owner="tab")
    job = jobs.Job(lambda j: None, "bootstrap", slots=slots)
    entered, returned = threading.Event(), threading.Event()

    def report():
        entered.set()
        job.report(0.5, "half")
        returned.set()

    t = threading.Thread(target=report)
    t.start()
    assert entered.wait(10)
    slots.release(person)  # the step ends: the report goes on at once (well before PEOPLE_FIRST_MAX_S)
    assert returned.wait(10)
    t.join(10)
    assert job.fraction == 0.5


class _Recorder:
    """ComputeSlots' stand-in that records the waits asked of it."""

    def __init__(self):
        self.waits = []

    def clip(self, units, priority=False):
        return units

    def wait_while_people(self, timeout):
        self.waits.append(timeout)
        return True


def test_ordinary_jobs_step_aside_at_each_report_and_preemptible_ones_do_not():
    rec = _Recorder()
    heavy = jobs.Job(lambda j: None, "intervals", slots=rec)
    assert heavy.report(0.1, "a") is False and heavy.progress(3, 10) is False
    assert rec.waits == [jobs.PEOPLE_FIRST_MAX_S, jobs.PEOPLE_FIRST_MAX_S]
    ahead = jobs.Job(lambda j: None, "λ prefetch", slots=rec, preemptible=True)  # stopped for a step instead
    ahead.report(0.2, "b")
    assert rec.waits == [jobs.PEOPLE_FIRST_MAX_S, jobs.PEOPLE_FIRST_MAX_S]
