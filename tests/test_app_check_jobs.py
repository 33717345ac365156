"""Issue 30, point 3, through AppTest: the Check page's checks and λ path and Playback's recording
are jobs that wait for a server-wide compute slot, end on Stop and with their session.

The server is configured for one compute slot (``dashboard.infra.jobs.COMPUTE_SLOTS`` replaced by a
one-unit :class:`~dashboard.infra.jobs.ComputeSlots`, as ``COLIDE_MAX_CONCURRENT_JOBS=1`` does), and the
test itself holds that unit (another session's job). A watcher thread plays the other side: it
sees the page's job queue, then frees the slot or presses Stop (``dashboard.infra.jobs.stop_job``, the
Stop button's ``on_click``) or ends the session. On the old code the page computed in its own
thread without a job: nothing queued and nothing could be stopped.

Convention: ``W[i, j] != 0`` means i -> j; X is ``(n_samples, n_nodes)``.
"""
import threading
import time

import pytest

from dashboard.infra.state import check as cs
from dashboard import checks as dc
from dashboard.infra import jobs
from dashboard import playback

pytestmark = pytest.mark.usefixtures("fresh_caches")

WAIT = 240.0


@pytest.fixture
def one_slot(monkeypatch):
    slots = jobs.ComputeSlots(1)
    monkeypatch.setattr(jobs, "COMPUTE_SLOTS", slots)
    return slots


def _recording(monkeypatch, module, name):
    """Wrap ``module.name`` (a job factory) so the jobs it makes are collected in a list."""
    made = []
    real = getattr(module, name)

    def wrapper(*args, **kwargs):
        job = real(*args, **kwargs)
        made.append(job)
        return job

    monkeypatch.setattr(module, name, wrapper)
    return made


def _watch(action):
    """Run ``action()`` in a thread (it waits on the page's job); returns (thread, errors)."""
    errors = []

    def run():
        try:
            action()
        except BaseException as exc:  # noqa: BLE001 - re-raised by the test
            errors.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, errors


def _wait_for(predicate, what, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _fitted(new_app):
    at = new_app()
    at.run()
    at.switch_page("pages/learn.py").run()
    at.button(key="learn_run").click().run()  # the default Noise model, Both: EV and NV
    assert not at.exception, at.exception
    return at


def _texts(at):
    return " ".join([m.value for m in at.markdown] + [w.value for w in at.warning] + [e.value for e in at.error])


def test_the_checks_wait_for_the_compute_slot_then_run(new_app, one_slot, monkeypatch):
    at = _fitted(new_app)
    made = _recording(monkeypatch, dc, "checks_job")
    other = one_slot.request(1)             # another session's job holds the only slot
    assert one_slot.wait(other, 1)
    seen = {}

    def free_the_slot_once_queued():
        _wait_for(lambda: made and made[0].queued.is_set(), "the checks to queue")
        job = made[0]
        seen["status"] = job.status
        seen["fraction"] = job.fraction
        seen["in_use"] = one_slot.in_use
        one_slot.release(other)

    t, errors = _watch(free_the_slot_once_queued)
    at.switch_page("pages/check.py").run()
    t.join(WAIT)
    assert not errors, errors
    assert not at.exception, at.exception
    assert len(made) == 1
    assert "waiting for a free slot" in seen["status"] and "1 of 1 compute slots busy" in seen["status"]
    assert seen["fraction"] == 0.0 and seen["in_use"] == 1
    # then it ran to the end, and the page shows its answer and verdicts
    stored = at.session_state[cs.CHECK_RESULT]
    assert stored["report"] is not None and not stored["report"].stopped
    assert "Should I believe this graph?" in _texts(at)
    assert one_slot.in_use == 0 and one_slot.waiting == 0


def test_stop_ends_the_refits_and_the_page_shows_what_was_done(new_app, one_slot, monkeypatch):
    at = _fitted(new_app)
    at.switch_page("pages/check.py").run()
    assert not at.exception, at.exception
    at.number_input(key="check_n_rescale").set_value(50).run()        # the heaviest: 1 + 50 refits
    made = _recording(monkeypatch, dc, "checks_job")
    state = {}

    def press_stop_during_the_refits():
        _wait_for(lambda: made and made[0].fraction > 0.05, "the refits to start")  # past the Markov check
        state[cs.CHECK_JOB] = made[0]
        jobs.stop_job(state, cs.CHECK_SLOT)                            # the Stop button's on_click

    t, errors = _watch(press_stop_during_the_refits)
    at.button(key="check_refit").click().run()
    t.join(WAIT)
    assert not errors, errors
    assert not at.exception, at.exception
    report = at.session_state[cs.CHECK_RESULT]["report"]
    assert report.stopped and made[0].stop_reason == "user"
    assert report.scale is None or len(report.scale.changes) < 50
    assert any("The checks were stopped (Stop was pressed)" in w.value for w in at.warning)
    assert "check_rerun" in [b.key for b in at.button]
    assert one_slot.in_use == 0
    # the page does not restart stopped checks by itself on the next rerun
    at.run()
    assert len(made) == 1


def test_a_closed_session_ends_the_checks(new_app, one_slot, monkeypatch):
    at = _fitted(new_app)
    gone = threading.Event()
    monkeypatch.setattr(jobs, "session_liveness", lambda: (lambda: not gone.is_set()))
    real_watch = jobs.Job.watch
    monkeypatch.setattr(jobs.Job, "watch", lambda self, alive, grace=0.0: real_watch(self, alive, 0.0))
    at.switch_page("pages/check.py").run()
    at.number_input(key="check_n_random").set_value(1000).run()
    made = _recording(monkeypatch, dc, "checks_job")

    def close_the_tab():
        _wait_for(lambda: made and made[0].fraction > 0, "the checks to start")
        gone.set()

    t, errors = _watch(close_the_tab)
    at.switch_page("pages/learn.py").run()
    at.session_state["learn_threshold"] = 0.25   # new inputs: the page checks again by itself
    at.switch_page("pages/check.py").run()
    t.join(WAIT)
    assert not errors, errors
    job = made[0]
    assert job.wait(WAIT) and job.stop_reason == "session"
    assert job.result.stopped and job.result.markov.random_shares.size < 1000


def test_the_check_pages_lambda_path_waits_for_the_slot_and_stops(new_app, one_slot, monkeypatch):
    at = _fitted(new_app)
    at.switch_page("pages/check.py").run()
    at.session_state["check_tab"] = "Curves"
    at.run()
    made = _recording(monkeypatch, dc, "path_job")
    other = one_slot.request(1)
    seen = {}

    def queue_then_stop():
        _wait_for(lambda: made and made[0].queued.is_set(), "the λ path to queue")
        seen["queued"] = True
        one_slot.release(other)
        _wait_for(lambda: made[0].fraction >= 1 / 9, "the first λ")   # then Stop after the first λ
        jobs.stop_job({cs.PATH_JOB: made[0]}, cs.PATH_SLOT)

    t, errors = _watch(queue_then_stop)
    at.button(key="check_path_run").click().run()
    t.join(WAIT)
    assert not errors, errors
    assert not at.exception, at.exception
    assert seen.get("queued")
    path = at.session_state[cs.PATH]["path"]
    assert path.stopped and 1 <= path.lambdas.size < 9
    assert any("The λ path was stopped after" in w.value for w in at.warning)


def test_playback_recording_waits_for_the_slot_and_stops(new_app, one_slot, monkeypatch):
    at = new_app()
    at.run()
    at.switch_page("pages/learn.py").run()
    at.button(key="learn_run").click().run()
    at.session_state["learn_tab"] = "Playback"
    at.run()
    made = _recording(monkeypatch, playback, "recording_job")
    other = one_slot.request(1)

    def queue_then_stop():
        _wait_for(lambda: made and made[0].queued.is_set(), "the recording to queue")
        jobs.stop_job({cs.PLAY_JOB: made[0]}, cs.PLAY_SLOT)   # Stop while waiting: never starts

    t, errors = _watch(queue_then_stop)
    at.toggle(key="learn_playback_on").set_value(True).run()
    t.join(WAIT)
    assert not errors, errors
    assert not at.exception, at.exception
    assert "was not started" in made[0].error
    assert "learn_playback_again" in [b.key for b in at.button]
    assert one_slot.waiting == 0
    one_slot.release(other)
    at.button(key="learn_playback_again").click().run()       # with the slot free it records
    assert not at.exception, at.exception
    assert any("CAPTIONS" in (f.proto.srcdoc or "") for f in at.get("iframe"))  # the recorded playback is drawn


def test_switching_playback_off_while_it_records_stops_the_recording(new_app, one_slot, monkeypatch):
    at = new_app()
    at.run()
    at.switch_page("pages/learn.py").run()
    at.button(key="learn_run").click().run()
    at.session_state["learn_tab"] = "Playback"
    at.run()
    made = _recording(monkeypatch, playback, "recording_job")
    other = one_slot.request(1)                 # the recording will wait in line

    def interrupt_once_queued():
        _wait_for(lambda: made and made[0].queued.is_set(), "the recording to queue")
        jobs.stop_job({cs.PLAY_JOB: made[0]}, cs.PLAY_SLOT)

    t, errors = _watch(interrupt_once_queued)
    at.toggle(key="learn_playback_on").set_value(True).run()
    t.join(WAIT)
    assert not errors, errors
    # "Record again" (still no free slot: the job waits) and, in the same run, the toggle off: the
    # page stops the recording it leaves instead of letting it run on unseen
    at.button(key="learn_playback_again").click()
    at.toggle(key="learn_playback_on").set_value(False).run()
    assert not at.exception, at.exception
    assert len(made) == 2 and at.session_state[cs.PLAY_JOB] is None
    job = made[-1]
    assert job.wait(WAIT) and job.stop_requested and "was not started" in job.error
    assert one_slot.waiting == 0
    one_slot.release(other)
