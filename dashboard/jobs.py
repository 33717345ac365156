"""The one background-job helper of the dashboard: every long computation of every page uses it.

Life cycle of a job on a page (Learn's fits, Edge confidence's bootstrap and stability
selection, Explorer's λ path):

1. **start** — a Run button's ``on_click`` calls :func:`start_job` with a :class:`JobSlot`
   (the session-state keys of that kind of job) and a :class:`Job`; nothing starts while a job
   of that slot is running.
2. **follow** — the page calls :func:`follow_job` on every run: while the job runs it draws a
   progress bar and a Stop button (its ``on_click`` is :func:`stop_job`), polling the job four
   times a second from the script thread;
3. **harvest** — once the job is done, :func:`follow_job` calls the page's
   ``harvest(job) -> messages``, stores the messages in the slot, empties the slot and
4. **reruns** the script, so the page redraws without the bar and with Run enabled again;
   :func:`show_messages` prints the stored messages.

:class:`Job` runs ``fn(job)`` in a daemon thread. ``fn`` reports progress through
:meth:`Job.progress` (``callback(done, total)`` of ``colide_core``'s bootstrap, stability
selection and λ path) or :meth:`Job.report` (a fraction and a text), whose return value asks the
computation to stop; it never calls Streamlit, so a rerun (e.g. the Stop click) does not kill
it. Exceptions become :attr:`Job.error`, never a traceback in the page.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np
import streamlit as st

__all__ = ["Job", "JobSlot", "is_running", "stop_job", "start_job", "follow_job", "show_messages"]


class Job:
    """One background computation: ``fn(job)`` in a daemon thread, with progress and Stop.

    Parameters
    ----------
    fn : callable
        ``fn(job) -> result``. It reports progress with :meth:`progress` or :meth:`report`
        and stops (returning a partial result) when they return True. ``ValueError``,
        ``FloatingPointError`` and ``numpy.linalg.LinAlgError`` become :attr:`error`
        ("<label> failed: ..."), any other exception an "unexpected error" message.
    label : str
        What runs, shown in :attr:`status` and in error messages (a fixed text, not user input).
    key : object, optional
        What is computed (e.g. data hash and parameters), for the page to match results.

    Attributes
    ----------
    fraction : float in [0, 1]
        Progress, 1.0 once done.
    status : str
        Human-readable state ("Bootstrap: 3 of 30").
    result : object or None
        ``fn``'s return value (None when it raised).
    error : str or None
        Message of the exception ``fn`` raised.
    elapsed : float
        Seconds from construction to the end of ``fn`` (0 while running).
    """

    def __init__(self, fn, label: str, key=None):
        self._fn = fn
        self.label = label
        self.key = key
        self.fraction = 0.0
        self.status = f"{label}: starting"
        self.result = None
        self.error = None
        self.started = time.perf_counter()
        self.elapsed = 0.0
        self._stop = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="colide-job", daemon=True)

    # -- reporting, from the worker thread ------------------------------------------------------
    def report(self, fraction: float, status: str) -> bool:
        """Set the progress (clipped to [0, 1]) and status; returns whether Stop was requested."""
        self.fraction = min(1.0, max(0.0, float(fraction)))
        self.status = status
        return self._stop.is_set()

    def progress(self, done, total) -> bool:
        """``callback(done, total)`` for ``colide_core``'s sweeps; returns whether Stop was requested.

        Parameters
        ----------
        done : int or float
            Work done (resamples, λ values; may be fractional).
        total : int or float
            Work in all (0 is read as 1).
        """
        total = float(total) or 1.0
        shown = f"{done:.1f}" if isinstance(done, float) and not float(done).is_integer() else f"{int(done)}"
        return self.report(float(done) / total, f"{self.label}: {shown} of {int(total)}")

    def _run(self) -> None:
        try:
            self.result = self._fn(self)
        except (ValueError, FloatingPointError, np.linalg.LinAlgError) as exc:
            self.error = f"{self.label} failed: {exc}"
        except Exception as exc:  # the page must never die with a traceback
            self.error = f"{self.label}: unexpected error ({type(exc).__name__}): {exc}"
        finally:
            self.elapsed = time.perf_counter() - self.started
            self.fraction = 1.0
            self.status = f"{self.label}: finished"
            self._done.set()

    # -- control, from the page ---------------------------------------------------------------
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


@dataclass(frozen=True)
class JobSlot:
    """The session-state keys and Stop button of one kind of job on one page.

    Attributes
    ----------
    job : str
        Session-state key holding the running :class:`Job`, or None.
    messages : str
        Session-state key of the list of ``(level, text)`` messages about the last job
        (``level`` is a Streamlit call: "success", "info", "warning" or "error"; ``text`` is
        markdown, already escaped).
    stop_key : str
        Widget key of the Stop button.
    stop_help : str
        Tooltip of the Stop button.
    """

    job: str
    messages: str
    stop_key: str
    stop_help: str


def is_running(state, slot) -> bool:
    """Whether ``state[slot]`` holds a job that has not finished.

    Parameters
    ----------
    state : MutableMapping
        ``st.session_state`` (or any mapping holding jobs).
    slot : str or JobSlot
        The key of the job (e.g. ``dashboard.state.FIT_JOB``) or its slot.
    """
    job = state.get(slot.job if isinstance(slot, JobSlot) else slot)
    return job is not None and not job.done


def stop_job(state, slot) -> None:
    """Ask the job in ``state[slot]`` to stop (the Stop buttons' ``on_click``); no job: no-op.

    Parameters
    ----------
    state : MutableMapping
    slot : str or JobSlot
    """
    job = state.get(slot.job if isinstance(slot, JobSlot) else slot)
    if job is not None:
        job.request_stop()


def start_job(state, slot: JobSlot, make_job) -> bool:
    """Start a job in ``slot`` unless one is running there (for a Run button's ``on_click``).

    Parameters
    ----------
    state : MutableMapping
        ``st.session_state``.
    slot : JobSlot
    make_job : callable
        ``make_job() -> Job`` (called only when the job is started).

    Returns
    -------
    bool
        True when a new job was started (its slot's messages are then cleared), False when a
        job of this slot was still running (nothing changes).
    """
    if is_running(state, slot):
        return False
    state[slot.messages] = []
    state[slot.job] = make_job().start()
    return True


def follow_job(slot: JobSlot, harvest) -> None:
    """Follow the job in ``slot`` (if any) until it ends, harvest it, then rerun the script.

    While the job runs this blocks the script run, redrawing a progress bar from the job's
    ``fraction`` and ``status`` four times a second, with a Stop button (its ``on_click`` runs
    in the next script run while the job thread keeps going; the bar then says "stopping…").
    Once the job is done: ``state[slot.messages] = harvest(job)``, the slot is emptied and
    ``st.rerun()`` redraws the page. Without a job in the slot it does nothing.

    Parameters
    ----------
    slot : JobSlot
    harvest : callable
        ``harvest(job) -> list of (level, text)``: stores the job's result in the session
        state and describes it (``job.error`` is set when it failed).
    """
    ss = st.session_state
    job = ss.get(slot.job)
    if job is None:
        return
    if not job.done:
        bar = st.progress(job.fraction, text=job.status)
        st.button("Stop", key=slot.stop_key, icon=":material/stop:", on_click=stop_job, args=(ss, slot),
                  help=slot.stop_help)
        while not job.wait(0.25):
            bar.progress(job.fraction, text=("stopping… " if job.stop_requested else "") + job.status)
        bar.progress(1.0, text="finished")
    ss[slot.messages] = list(harvest(job))
    ss[slot.job] = None
    st.rerun()  # redraw without the progress bar and with the Run buttons enabled again


def show_messages(state, slot: JobSlot) -> None:
    """Show the stored ``(level, text)`` messages of ``slot``'s last job (``st.success`` etc.)."""
    for level, text in state.get(slot.messages) or []:
        getattr(st, level)(text)
