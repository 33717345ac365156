"""Waits on conditions for the tests of jobs in worker processes (never on time: a loaded 2-core
machine may take long, so only a broken build reaches the bound)."""
import time

import pytest

from dashboard.infra import workers

BOUND = 120.0  # seconds a condition may take on a loaded machine before the test fails


def until(cond, what):
    """Return once ``cond()`` is true; fail the test after :data:`BOUND` seconds."""
    end = time.monotonic() + BOUND
    while not cond():
        if time.monotonic() > end:
            pytest.fail(f"not reached within {BOUND:g} s: {what}")
        time.sleep(0.02)


@pytest.fixture(autouse=True)
def processes_on(monkeypatch):
    """Jobs' computations in worker processes (whatever ``$COLIDE_JOB_PROCESSES`` says); after the
    test, every worker has ended. Autouse in a module that imports it."""
    monkeypatch.setattr(workers, "ENABLED", True)
    yield
    until(lambda: workers.live_workers() == 0, "every worker ended")
