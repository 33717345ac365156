"""The thread control shared by the dashboard's background jobs (fits, bootstrap, lambda path).

A job runs its ``_run`` method in a daemon thread; the page polls :attr:`BackgroundJob.done` and
asks for a stop with :meth:`BackgroundJob.request_stop`, which the job's solver callback reads.
Nothing here touches Streamlit.
"""
from __future__ import annotations

import threading

__all__ = ["BackgroundJob", "is_running", "stop_job"]


class BackgroundJob:
    """Base class: a daemon thread running ``self._run()`` with stop and done events.

    Subclasses call :meth:`_init_thread` at the end of ``__init__`` and implement ``_run``,
    which must set ``self._done`` when it ends (normally in a ``finally`` block).
    """

    def _init_thread(self, name: str) -> None:
        self._stop = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:  # pragma: no cover - always overridden
        raise NotImplementedError

    def start(self):
        """Start the background thread; returns self."""
        self._thread.start()
        return self

    def request_stop(self) -> None:
        """Ask the computation to stop at its next progress report (keeps partial results)."""
        self._stop.set()

    @property
    def stop_requested(self) -> bool:
        """Whether Stop was requested."""
        return self._stop.is_set()

    @property
    def done(self) -> bool:
        """Whether the computation has finished, failed or stopped."""
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block up to ``timeout`` seconds for the job to end; returns :attr:`done`."""
        return self._done.wait(timeout)


def is_running(state, slot: str) -> bool:
    """Whether ``state[slot]`` holds a job that has not finished.

    Parameters
    ----------
    state : MutableMapping
        ``st.session_state`` (or any mapping holding jobs).
    slot : str
        The key of the job (e.g. ``dashboard.state.FIT_JOB``).
    """
    job = state.get(slot)
    return job is not None and not job.done


def stop_job(state, slot: str) -> None:
    """Ask the job in ``state[slot]`` to stop (the Stop buttons' ``on_click``); no job: no-op."""
    job = state.get(slot)
    if job is not None:
        job.request_stop()
