"""The one background-job helper of the dashboard: every long computation of every page uses it.

Life cycle of a job on a page (Learn's fits and Playback's recorded refit, Edge confidence's
bootstrap and stability selection, Explorer's λ path, the Check page's checks and λ path):

1. **start** — a Run button's ``on_click`` calls :func:`start_job` with a :class:`JobSlot`
   (the session-state keys of that kind of job) and a :class:`Job`; nothing starts while a job
   of that slot is running.
2. **follow** — the page calls :func:`follow_jobs` (several slots) or :func:`follow_job` (one) on
   every run: it draws a progress bar and a Stop button (its ``on_click`` is :func:`stop_job`) for
   every running job of those slots first, then waits in one loop, redrawing all the bars four
   times a second from the script thread, until any of them ends (issue 53: a page's second job
   had no bar and no Stop while its first was followed);
3. **harvest** — once a job is done, :func:`follow_jobs` calls the page's
   ``harvest(job) -> messages``, stores the messages in the slot, empties the slot and
4. **reruns** the script, so the page redraws without the bar and with Run enabled again;
   :func:`show_messages` prints the stored messages.

Limits (a shared server: one user's job must not starve the others):

* **a server-wide ceiling on concurrent jobs.** Every job holds ``units`` of the process-wide
  :data:`COMPUTE_SLOTS` while it computes (1 for a fit, the number of worker processes for a
  parallel bootstrap); there are :data:`MAX_CONCURRENT` units (``os.cpu_count()``, or
  ``$COLIDE_MAX_CONCURRENT_JOBS``). A job that finds no free slot waits in line and says so in
  its status; Stop while it waits cancels it.
* **a slot kept for people** (issue 53). With more than one unit, ordinary work (every job, the
  Compare page's sweep) holds at most ``MAX_CONCURRENT - 1`` units together; the last is for a
  person's request, the live Learn page's λ step (:func:`interactive`), whose wait is bounded. A
  parallel job asks for at most that share and starts as many workers as it holds
  (:attr:`Job.units`). With one unit nothing is kept back.
* **a fair share between sessions** (issue 53). When several requests wait, a person's comes
  first, then the one whose session holds the fewest units, then the one waiting longest
  (:class:`ComputeSlots`).
* **jobs end with their session.** :func:`start_job` hands the job a check that its browser
  session is still connected (:func:`session_liveness`, ``Runtime.is_active_session``; Streamlit
  has no session-end hook). The job asks it at every progress report and, once the session has
  been gone for :data:`SESSION_GRACE_S` seconds (a reload or a closed tab; a short network drop
  reconnects within it), stops through the same flag as the Stop button.
* **checked settings.** ``make_job`` may raise :class:`colide_core.run.manifest.RunSettingsError`
  (its settings are refused): :func:`start_job` then starts nothing and shows the message.
* **computations a page starts by itself** (the Check page's checks when their inputs change,
  Playback's recording when it is switched on) go through :func:`start_job` too, from the script
  rather than an ``on_click``: the same slots, Stop and session end (issue 30: they used to run in
  the page's own thread, outside all three).
* **a per-session share.** One session's running jobs hold at most :data:`SESSION_MAX_UNITS`
  units together (half the server's): :func:`start_job` refuses a further job with a sentence
  (issue 53: one tab pressed two Predict jobs and held every slot of a 2-core server for
  minutes). A job alone may be larger; preemptible jobs do not count.
* **a per-job wall-time budget.** On a shared server ``$COLIDE_JOB_MAX_SECONDS`` (:data:`JOB_MAX_SECONDS`;
  unset, as under ``make run`` and ``colide app``: no budget) asks every job to stop, as Stop
  does, once it has held its compute slot that long; its partial results are kept and
  :func:`follow_jobs` adds a sentence saying why (:func:`budget_message`). A page that shows a
  job's cost before it starts refuses a job whose estimate is above the budget
  (:func:`check_job_budget`).
* **memory.** A job made with ``memory=`` (a :class:`dashboard.infra.memory.JobMemory`: the
  bootstrap's ``n_boot x d x d`` weights) has its peak reserved in the server's memory budget by
  :func:`start_job`, or is refused with a sentence naming both sizes, before it starts; its
  result's bytes then count while its session keeps it.
* **workers.** "Parallel workers" widgets are capped at :data:`MAX_WORKERS` (the core count).
* **out of the server's process** (issue 53). A job's ``fn`` may hand its computation to
  :func:`dashboard.infra.workers.in_worker` (or the job be made with ``process=``): it runs in a
  worker process while the job's thread keeps the slot and relays the child's progress into
  :meth:`Job.report`, so everything above applies unchanged; a child exists only while its job
  holds its slot.

:class:`Job` runs ``fn(job)`` in a daemon thread. ``fn`` reports progress through
:meth:`Job.progress` (``callback(done, total)`` of ``colide_core``'s bootstrap, stability
selection and λ path) or :meth:`Job.report` (a fraction and a text), whose return value asks the
computation to stop; it never calls Streamlit, so a rerun (e.g. the Stop click) does not kill
it. Exceptions become :attr:`Job.error`, never a traceback in the page.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import time
import weakref
from dataclasses import dataclass

import numpy as np
import streamlit as st

from dashboard.infra.errors import SlotBusy  # noqa: F401 - re-exported (its old home)
from dashboard.infra.limits import env_seconds
from dashboard.infra.slots import _AUTO, ComputeSlots, current_owner
from dashboard.infra.workers import WorkerError, bind_job, current_job, in_worker

__all__ = [
    "Job", "JobSlot", "ComputeSlots", "COMPUTE_SLOTS", "MAX_CONCURRENT", "MAX_WORKERS", "SESSION_GRACE_S",
    "compute_slot", "current_owner", "interactive", "slot_held_since", "SlotBusy", "session_liveness", "is_running", "stop_job", "start_job", "follow_job", "show_messages",
    "SESSION_MAX_UNITS", "session_jobs", "session_cap_refusal",
    "JOB_MAX_SECONDS", "follow_jobs", "budget_message", "check_job_budget", "current_job", "live_jobs",
]

#: Worker processes one job may use (the "Parallel workers" widgets' maximum): the core count.
MAX_WORKERS = max(1, os.cpu_count() or 1)


def _max_concurrent() -> int:
    raw = os.environ.get("COLIDE_MAX_CONCURRENT_JOBS", "").strip()
    try:
        value = int(raw) if raw else MAX_WORKERS
    except ValueError:
        value = MAX_WORKERS
    return max(1, value)


def _grace_s() -> float:
    return env_seconds("COLIDE_SESSION_GRACE_S", 30.0, 3600.0)


def _job_max_seconds() -> float | None:
    raw = os.environ.get("COLIDE_JOB_MAX_SECONDS", "").strip()
    try:
        value = float(raw) if raw else None
    except ValueError:
        value = None
    return value if value is not None and 0 < value < float("inf") else None


#: Server-wide compute units (``$COLIDE_MAX_CONCURRENT_JOBS``, default the core count).
MAX_CONCURRENT = _max_concurrent()
#: Seconds a job keeps running after its session disconnected (a reconnect within it resumes);
#: ``$COLIDE_SESSION_GRACE_S`` (0 to 3600, default 30).
SESSION_GRACE_S = _grace_s()
#: Compute units one session's running jobs may hold together (half the server's, at least 1):
#: :func:`start_job` refuses a second job that would go beyond (issue 53). A job alone may be
#: larger (a parallel bootstrap's workers); preemptible jobs (work ahead of need) do not count.
SESSION_MAX_UNITS = max(1, MAX_CONCURRENT // 2)
#: Wall seconds one job may hold its compute slot before it is asked to stop, as Stop does
#: (``$COLIDE_JOB_MAX_SECONDS``, a positive number; unset, empty or not a positive number: None,
#: no budget, the default of a local ``make run`` or ``colide app``). Issue 53, high 3.
JOB_MAX_SECONDS = _job_max_seconds()

#: Seconds a job's progress report waits, at most, while a person's live step holds compute units
#: (:meth:`Job.report`, :meth:`ComputeSlots.wait_while_people`): a job thread shares the server's
#: process, cores and GIL with the person's fit, so it steps aside for the step (about 0.2–1 s) and
#: then goes on; the bound keeps a job from stalling behind a stream of steps.
PEOPLE_FIRST_MAX_S = 2.0


#: The process-wide limit every :class:`Job` goes through (shared by all sessions).
COMPUTE_SLOTS = ComputeSlots(MAX_CONCURRENT)


#: Per thread: since when it holds a compute slot (None: none), and whether its requests are a
#: person's (:func:`interactive`).
_LOCAL = threading.local()


@contextlib.contextmanager
def interactive(wait: float | None = None):
    """Within it, this thread's slot requests are a person's, waiting on the page: priority.

    The live Learn page's fits (:func:`dashboard.fitting.fit_live`) run in it: they join the line
    ahead of the ordinary jobs and preempt the λ prefetch (:class:`ComputeSlots`).

    Parameters
    ----------
    wait : float, optional
        Seconds a request may wait for its slot; then :func:`compute_slot` leaves the line and
        raises :class:`SlotBusy` (every slot held by jobs that cannot be preempted: the page must
        not hang on them). None: no bound.
    """
    old = getattr(_LOCAL, "interactive", False), getattr(_LOCAL, "wait", None)
    _LOCAL.interactive, _LOCAL.wait = True, wait
    try:
        yield
    finally:
        _LOCAL.interactive, _LOCAL.wait = old


def slot_held_since():
    """``time.monotonic()`` when this thread got its compute slot, or None when it holds none."""
    return getattr(_LOCAL, "since", None)


@contextlib.contextmanager
def compute_slot(units: int = 1, *, on_wait=None, slots: ComputeSlots | None = None):
    """Hold ``units`` of the server-wide compute slots for a computation run in this thread.

    For work that is not a :class:`Job` (the Compare page's sweep, a cached fit computed in the
    script, :func:`dashboard.fitting.fit_colide`): it waits in the same line. Re-entrant: a thread
    that already holds a slot (a job's thread, an outer ``compute_slot``) takes no second one, so a
    cache miss inside a job never waits for itself. Inside :func:`interactive` the request has
    priority, and waits at most the time it allows (then :class:`SlotBusy`, the ticket out of line).

    Parameters
    ----------
    units : int, default=1
        Worker processes the computation asks for.
    on_wait : callable, optional
        ``on_wait(text)`` four times a second while waiting (e.g. a progress bar's text; a
        Streamlit call there lets a closed session stop the script).
    slots : ComputeSlots, optional
        Default :data:`COMPUTE_SLOTS`.

    Yields
    ------
    int
        The units granted (:meth:`ComputeSlots.clip`: an ordinary request gets at most the
        ordinary share, ``capacity - reserved``): the worker processes the computation may start.
        Inside a thread that already holds a slot, the units that thread holds.
    """
    if slot_held_since() is not None:
        yield getattr(_LOCAL, "units", 1)
        return
    slots = COMPUTE_SLOTS if slots is None else slots
    ticket = slots.request(units, priority=getattr(_LOCAL, "interactive", False))
    wait = getattr(_LOCAL, "wait", None) if getattr(_LOCAL, "interactive", False) else None
    deadline = None if wait is None else time.monotonic() + float(wait)
    try:
        while True:
            step = 0.25 if on_wait is not None else None
            if deadline is not None:
                left = deadline - time.monotonic()
                step = max(0.0, left if step is None else min(step, left))
            if slots.wait(ticket, step):
                break
            if deadline is not None and time.monotonic() >= deadline:
                raise SlotBusy(f"no compute slot was free within {float(wait):g} s ({slots.describe()})")
            if on_wait is not None:
                on_wait(f"waiting for a free slot ({slots.describe()})")
        _LOCAL.since, _LOCAL.units = time.monotonic(), ticket.units
        yield ticket.units
    finally:
        _LOCAL.since = None
        slots.release(ticket)


def session_liveness():
    """A check that the browser session running this script is still connected, or None.

    Returns
    -------
    callable or None
        ``alive() -> bool``: ``Runtime.instance().is_active_session(session_id)`` for the
        session of the current script run (thread-safe, so the job's thread may call it);
        always True when no Streamlit server runs (``AppTest``, bare mode). None outside a
        script run.
    """
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None:
        return None
    session_id = ctx.session_id

    def alive() -> bool:
        if not Runtime.exists():
            return True
        return Runtime.instance().is_active_session(session_id)

    return alive


class _NotStarted(Exception):
    pass


#: The default ``budget_s`` of a :class:`Job`: the server's :data:`JOB_MAX_SECONDS`.
_SERVER_BUDGET = object()
#: Notified whenever any job ends: :func:`follow_jobs` waits on it for the first of its jobs.
_ENDED = threading.Condition()


class Job:
    """One background computation: ``fn(job)`` in a daemon thread, with progress and Stop.

    Parameters
    ----------
    fn : callable or None
        ``fn(job) -> result``. It reports progress with :meth:`progress` or :meth:`report`
        and stops (returning a partial result) when they return True. ``ValueError``,
        ``FloatingPointError`` and ``numpy.linalg.LinAlgError`` become :attr:`error`
        ("<label> failed: ..."), any other exception an "unexpected error" message. Inside it,
        :func:`dashboard.infra.workers.in_worker` runs a computation in a worker process (a
        :class:`~dashboard.infra.workers.WorkerError` becomes its own message). None with
        ``process``.
    label : str
        What runs, shown in :attr:`status` and in error messages (a fixed text, not user input).
    key : object, optional
        What is computed (e.g. data hash and parameters), for the page to match results.
    units : int, default=1
        Compute units asked for (the worker processes ``fn`` would start); the job holds
        :meth:`ComputeSlots.clip` of them, at most the ordinary share (``capacity - reserved``),
        and ``fn`` starts :attr:`units` workers.
    slots : ComputeSlots, optional
        The limit to go through; default the process-wide :data:`COMPUTE_SLOTS`.
    preemptible : bool, default=False
        Work done ahead of need (the λ prefetch): a person's request for a slot
        (:func:`interactive`) stops it, as Stop would (:attr:`stop_reason` "preempted").
    budget_s : float or None, optional
        Wall seconds the job may hold its compute slot; at the first progress report after that
        it is asked to stop as if Stop were pressed (:attr:`stop_reason` ``"budget"``; partial
        results are kept). Default: the server's :data:`JOB_MAX_SECONDS` when the job is made.
        None: no budget. Waiting in line does not count.
    clock : callable, default=time.monotonic
        ``clock() -> seconds`` read for the budget only (a test passes a fake one); never read
        when there is no budget.
    owner : hashable or None, optional
        Whose job it is, for the compute slots' fair share between sessions. Default: the session
        of the script run that makes the job (:func:`current_owner`).
    memory : dashboard.infra.memory.JobMemory, optional
        What the job will cost in memory (its peak, the result its session keeps): :func:`start_job`
        reserves it in the server's memory budget before the job starts, or refuses the job with a
        sentence (:func:`dashboard.infra.memory.reserve_job`); the job's end turns the reservation
        into its result's bytes, counted while the session keeps the result.
    process : (callable, tuple, dict), optional
        ``(func, args, kwargs)``: ``fn`` is ``in_worker(func, *args, **kwargs)``, i.e.
        ``func(*args, callback=..., **kwargs)`` in a worker process whose callback reaches
        :meth:`progress` (issue 53: the job out of the server's process and its GIL).

    Attributes
    ----------
    units : int
        Compute units the job holds while it computes: the workers ``fn`` may start (a parallel
        job passes ``job.units`` as its ``n_jobs``).
    units_asked : int
        The ``units`` it was made with.
    fraction : float in [0, 1]
        Progress, 1.0 once done.
    status : str
        Human-readable state ("Bootstrap: 3 of 30").
    result : object or None
        ``fn``'s return value (None when it raised).
    error : str or None
        Message of the exception ``fn`` raised.
    elapsed : float
        Seconds from getting its compute slot to the end of ``fn`` (0 while running).
    stop_reason : {"user", "session", "preempted", "budget"} or None
        Why the job was asked to stop: the Stop button, its session ended, a person's request
        needed its slot (a preemptible job), or it ran past :attr:`budget_s`.
    budget_s : float or None
        The wall-time budget it runs under (seconds; None: none).
    queued : threading.Event
        Set when the job found no free compute slot and started waiting in line.
    notes : list of str
        Plain-text sentences about how the job runs (:meth:`note`), e.g. that it computes in the
        server's process for lack of memory for a worker: shown after its status on the bar and
        as messages once it ends (:func:`follow_jobs`); never part of :attr:`result` or
        :attr:`key`.
    """

    def __init__(self, fn, label: str, key=None, *, units: int = 1, slots: ComputeSlots | None = None,
                 preemptible: bool = False, budget_s=_SERVER_BUDGET, clock=time.monotonic, owner=_AUTO,
                 process=None, memory=None):
        if process is not None:
            func, args, kwargs = process
            fn = lambda job: in_worker(func, *args, **dict(kwargs or {}))  # noqa: E731
        self._fn = fn
        budget = JOB_MAX_SECONDS if budget_s is _SERVER_BUDGET else budget_s
        self.budget_s = None if budget is None else float(budget)
        self._clock = clock
        self._budget_from = None  # clock() when the slot was granted
        self.preemptible = bool(preemptible)
        self.label = label
        self.key = key
        self._slots = COMPUTE_SLOTS if slots is None else slots
        self.units_asked = max(1, int(units))
        self.units = self._slots.clip(self.units_asked)
        self.owner = current_owner() if owner is _AUTO else owner
        self.fraction = 0.0
        self.status = f"{label}: starting"
        self.result = None
        self.error = None
        self.started = time.perf_counter()
        self.elapsed = 0.0
        self.stop_reason = None
        self.queued = threading.Event()
        self.notes = []
        self.memory = memory
        self.memory_hold = None  # dashboard.infra.memory.JobHold, taken by start_job
        self._alive = None
        self._grace = SESSION_GRACE_S
        self._gone_since = None
        self._stop = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="colide-job", daemon=True)

    # -- reporting, from the worker thread ------------------------------------------------------
    def _should_stop(self) -> bool:
        """Whether to stop: Stop was pressed, the job ran past its budget, or the session has been
        gone for the grace period."""
        if self._stop.is_set():
            return True
        if self.budget_s is not None and self._budget_from is not None \
                and self._clock() - self._budget_from >= self.budget_s:
            if self.stop_reason is None:
                self.stop_reason = "budget"
            self._stop.set()
            return True
        if self._alive is not None:
            if self._alive():
                self._gone_since = None
            else:
                now = time.monotonic()
                if self._gone_since is None:
                    self._gone_since = now
                if now - self._gone_since >= self._grace:
                    self.stop_reason = "session"
                    self._stop.set()
                    return True
        return False

    def report(self, fraction: float, status: str) -> bool:
        """Set the progress (clipped to [0, 1]) and status; returns whether to stop.

        True once Stop was requested or the job's session has ended (see :meth:`start`). A job that
        is not preemptible first waits, up to :data:`PEOPLE_FIRST_MAX_S`, while a person's live step
        holds compute units (:meth:`ComputeSlots.wait_while_people`).
        """
        self.fraction = min(1.0, max(0.0, float(fraction)))
        self.status = status
        if not self.preemptible:  # a person's live step runs alone (a preemptible job is stopped instead)
            self._slots.wait_while_people(PEOPLE_FIRST_MAX_S)
        return self._should_stop()

    def note(self, text: str) -> None:
        """Add a sentence about how the job runs to :attr:`notes` (once: a repeated one is kept once).

        Parameters
        ----------
        text : str
            Plain text (escaped once where it is shown as markdown); no user input expected.
        """
        if text not in self.notes:
            self.notes.append(text)

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

    def _take_slot(self, ticket) -> None:
        """Wait in line for the compute slot; raise :class:`_NotStarted` when stopped meanwhile."""
        if self._slots.wait(ticket, 0):
            return
        self.queued.set()
        while True:
            self.status = f"{self.label}: waiting for a free slot ({self._slots.describe()})"
            if self._should_stop():
                raise _NotStarted
            if self._slots.wait(ticket, 0.25):
                return

    def _preempted(self) -> None:
        if self.stop_reason is None:
            self.stop_reason = "preempted"
        self._stop.set()

    def _run(self) -> None:
        ticket = self._slots.request(self.units, preempt=self._preempted if self.preemptible else None,
                                     owner=self.owner)
        try:
            self._take_slot(ticket)
            # this thread holds its slot: compute_slot inside takes none
            _LOCAL.since, _LOCAL.units = time.monotonic(), ticket.units
            bind_job(self)  # dashboard.infra.workers.in_worker may send its computation to a worker process
            if self.budget_s is not None:
                self._budget_from = self._clock()  # the budget counts from the slot, not the line
            self.started = time.perf_counter()
            self.status = f"{self.label}: starting" if self.units == self.units_asked else (
                f"{self.label}: starting with {self.units} of the {self.units_asked} workers asked "
                f"(the server keeps its last compute slot for live fits)")
            self.result = self._fn(self)
        except _NotStarted:
            why = "its session ended" if self.stop_reason == "session" else "Stop was pressed"
            self.error = f"{self.label} was not started: {why} while it waited for a free slot."
        except (ValueError, FloatingPointError, np.linalg.LinAlgError) as exc:
            self.error = f"{self.label} failed: {exc}"
        except WorkerError as exc:  # its worker process ended without a result (killed, stopped by force)
            self.error = exc.text(self.label)
        except Exception as exc:  # the page must never die with a traceback
            self.error = f"{self.label}: unexpected error ({type(exc).__name__}): {exc}"
        finally:
            _LOCAL.since = None
            bind_job(None)
            self._slots.release(ticket)
            self.elapsed = time.perf_counter() - self.started
            self.fraction = 1.0
            self.status = f"{self.label}: finished"
            if self.memory_hold is not None:  # its peak reservation becomes its result's bytes (None: released)
                self.memory_hold.keep(self.result)
            self._done.set()
            with _ENDED:  # wake every follow_jobs loop waiting on any job
                _ENDED.notify_all()

    # -- control, from the page ---------------------------------------------------------------
    def watch(self, alive, grace: float = SESSION_GRACE_S):
        """Tie the job to a session before :meth:`start`; returns self.

        Parameters
        ----------
        alive : callable or None
            ``alive() -> bool``, asked at every progress report and while waiting for a slot
            (e.g. :func:`session_liveness`). Once it has answered False for ``grace`` seconds
            in a row the job stops as if Stop had been pressed (:attr:`stop_reason`
            ``"session"``). None: not tied to a session.
        grace : float, default=:data:`SESSION_GRACE_S`
        """
        self._alive = alive
        self._grace = float(grace)
        return self

    def start(self):
        """Start the background thread; returns self."""
        _STARTED.add(self)
        self._thread.start()
        return self

    def request_stop(self) -> None:
        """Ask the computation to stop at its next progress report (keeps partial results)."""
        if self.stop_reason is None:
            self.stop_reason = "user"
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


#: Every job started in this process, held weakly (a job nothing else keeps is gone from it).
_STARTED = weakref.WeakSet()


def live_jobs() -> list:
    """The jobs of this process that were started and have not ended, whatever session started them.

    For the process's own bookkeeping and for tests: the test suite stops and awaits them after
    each test (``tests/conftest.py``), so that no fit of one test still runs in another's. On
    CPython 3.11, ``tracemalloc.stop()`` while another thread allocates through Python's raw
    allocator without the GIL (a numba kernel's arrays, ``nogil=True``) can crash the process
    (CPython gh-128679, fixed in 3.12.9 and 3.13.2 only); the memory tests start and stop
    tracemalloc, and a Learn fit left running by an earlier AppTest crashed them.

    Returns
    -------
    list of Job
    """
    return [job for job in list(_STARTED) if not job.done]


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
        The key of the job (e.g. ``dashboard.infra.state.FIT_JOB``) or its slot.
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


def session_jobs(state) -> list:
    """The running, non-preemptible jobs of one session (every :class:`Job` in its state).

    Parameters
    ----------
    state : MutableMapping
        ``st.session_state`` (or any mapping holding jobs).
    """
    out = []
    for key in list(state.keys()):
        value = state.get(key)
        if isinstance(value, Job) and not value.done and not value.preemptible:
            out.append(value)
    return out


def session_cap_refusal(state, job, cap: int | None = None) -> str | None:
    """Why ``job`` may not start in this session now, or None (the per-session cap, issue 53).

    Parameters
    ----------
    state : MutableMapping
        The session's state (its running jobs: :func:`session_jobs`).
    job : Job
        The job about to start.
    cap : int, optional
        Units the session may hold together; default :data:`SESSION_MAX_UNITS`.

    Returns
    -------
    str or None
        A markdown sentence naming the running jobs and the cap when the session already runs a
        job and the units together would exceed the cap; None otherwise (a preemptible job, or
        nothing else running: a job alone may hold more, as a parallel bootstrap does).
    """
    from dashboard.infra.text import md_escape

    cap = SESSION_MAX_UNITS if cap is None else int(cap)
    if job.preemptible:
        return None
    running = session_jobs(state)
    held = sum(j.units for j in running)
    if not running or held + job.units <= cap:
        return None
    names = ", ".join(f"“{md_escape(j.label)}”" for j in running)
    return (f"Nothing was started: this tab is already running {names}, and one tab may hold "
            f"{cap} of the server's {MAX_CONCURRENT} compute slots at a time, so that other "
            f"users are served. Wait for it to finish, or press its Stop, then start "
            f"“{md_escape(job.label)}” again.")


def start_job(state, slot: JobSlot, make_job) -> bool:
    """Start a job in ``slot`` unless one is running there (for a Run button's ``on_click``).

    Parameters
    ----------
    state : MutableMapping
        ``st.session_state``.
    slot : JobSlot
    make_job : callable
        ``make_job() -> Job`` (called only when the job is started). It checks the job's
        settings and raises :class:`colide_core.run.manifest.RunSettingsError` to refuse them.

    Returns
    -------
    bool
        True when a new job was started (its slot's messages are then cleared, and the job
        watches this session with :func:`session_liveness`). False when a job of this slot
        was still running (nothing changes), ``make_job`` refused its settings (nothing
        starts; the slot's messages say which settings and why), or this session's other
        running jobs already hold its share of the compute slots (:func:`session_cap_refusal`;
        the slot's messages say so), or the job's :attr:`Job.memory` does not fit in the server's
        memory budget (:func:`dashboard.infra.memory.reserve_job`: the slot's message names its
        sizes and the room; otherwise its peak is reserved from now until it ends).
    """
    from colide_core.run.manifest import RunSettingsError
    from dashboard.infra.text import md_escape

    if is_running(state, slot):
        return False
    try:
        job = make_job()
    except RunSettingsError as exc:
        state[slot.messages] = [("error", "Nothing was started: " + md_escape("; ".join(exc.problems)) + ".")]
        return False
    refusal = session_cap_refusal(state, job)
    if refusal is None and job.memory is not None:  # bound the memory before spending it (issue 53)
        from dashboard.infra import memory

        need = job.memory
        if slot.job not in need.keys:  # the job holds its result until it is harvested
            need = dataclasses.replace(need, keys=(*need.keys, slot.job))
        job.memory_hold, refusal = memory.reserve_job(need)
    if refusal is not None:
        state[slot.messages] = [("warning", refusal)]
        return False
    state[slot.messages] = []
    state[slot.job] = job.watch(session_liveness()).start()
    return True


def budget_message(job) -> str:
    """The sentence saying that ``job`` was stopped by the server's wall-time budget (markdown).

    Parameters
    ----------
    job : Job
        A job whose :attr:`Job.stop_reason` is ``"budget"``.

    Returns
    -------
    str
        "“<label>” was stopped after the server's N s budget per job (COLIDE_JOB_MAX_SECONDS) …",
        the label escaped once.
    """
    from dashboard.infra.text import md_escape

    return (f"“{md_escape(job.label)}” was stopped after the server's {job.budget_s:g} s budget per job "
            f"(`COLIDE_JOB_MAX_SECONDS`), as if Stop had been pressed: what it had finished is kept.")


def check_job_budget(estimate_s, detail: str, reduce: str, budget_s=_SERVER_BUDGET) -> None:
    """Refuse, before it starts, a job whose estimated wall time is above the server's budget.

    For a ``make_job`` of :func:`start_job` on a page that shows the job's cost first (issue 53,
    low 4): the refusal becomes the slot's message ("Nothing was started: …") and nothing starts.

    Parameters
    ----------
    estimate_s : float or None
        Expected wall seconds of the job (None or NaN: unknown, never refused).
    detail : str
        How the estimate is made, e.g. "30 refits × 2.1 s" (plain text, no user input).
    reduce : str
        What to lower to fit the budget, e.g. "ask for at most 25 resamples" (plain text).
    budget_s : float or None, optional
        Default the server's :data:`JOB_MAX_SECONDS` (read at the call); None: no budget, nothing
        is refused.

    Raises
    ------
    colide_core.exceptions.RunSettingsError
        With one plain-text sentence giving the estimate, the budget and what to reduce, when
        ``estimate_s > budget_s``.
    """
    from colide_core.exceptions import RunSettingsError
    from dashboard.infra.text import fmt_seconds

    budget = JOB_MAX_SECONDS if budget_s is _SERVER_BUDGET else budget_s
    if budget is None or estimate_s is None or not float(estimate_s) > float(budget):
        return
    raise RunSettingsError([
        f"this job would take about {fmt_seconds(float(estimate_s))} ({detail}), above this server's budget "
        f"of {float(budget):g} s per job (COLIDE_JOB_MAX_SECONDS), after which it would be stopped; {reduce}"])


def _bar_text(job) -> str:
    """The text of ``job``'s progress bar: its status, "stopping…" when asked to stop, and its notes."""
    from dashboard.infra.text import md_escape

    text = job.status
    if job.stop_requested:
        why = f"the server's {job.budget_s:g} s budget per job" if job.stop_reason == "budget" else None
        text = ("stopping… " if why is None else f"stopping ({why})… ") + text
    return " ".join([text, *(md_escape(n) for n in job.notes)]) if job.notes else text


def _wait_any(jobs, timeout: float) -> bool:
    """Block up to ``timeout`` seconds until one of ``jobs`` is done; returns whether one is."""
    with _ENDED:
        return _ENDED.wait_for(lambda: any(job.done for job in jobs), timeout)


def follow_jobs(pairs) -> None:
    """Follow the jobs of several slots at once until one ends, harvest it, then rerun the script.

    Every running job of ``pairs`` gets its progress bar and its Stop button first (each Stop's
    ``on_click`` stops only its own slot's job); then one loop blocks the script run, redrawing
    every bar from its job's ``fraction`` and ``status`` four times a second, until any job ends.
    Each ended job is harvested: ``state[slot.messages] = harvest(job)`` (with
    :func:`budget_message` first when the server's budget stopped it, and the job's
    :attr:`Job.notes` last, as "info"), its slot is emptied, and
    ``st.rerun()`` redraws the page, following the jobs still running. A Stop click (or any widget)
    reruns the script while the job threads keep going; a stopping bar says "stopping…". Slots
    holding no job are skipped; with none, it does nothing.

    Parameters
    ----------
    pairs : iterable of (JobSlot, callable)
        Each slot with its ``harvest(job) -> list of (level, text)``, which stores the job's
        result in the session state and describes it (``job.error`` is set when it failed).
    """
    from dashboard.infra.text import md_escape

    ss = st.session_state
    followed = [(slot, harvest, ss.get(slot.job)) for slot, harvest in pairs]
    followed = [(slot, harvest, job) for slot, harvest, job in followed if job is not None]
    if not followed:
        return
    watched = [job for _, _, job in followed]
    if not any(job.done for job in watched):
        bars = []
        for slot, _, job in followed:  # every bar and Stop first: none waits for another job
            bars.append((st.progress(job.fraction, text=_bar_text(job)), job))
            st.button("Stop", key=slot.stop_key, icon=":material/stop:", on_click=stop_job, args=(ss, slot),
                      help=slot.stop_help)
        while not _wait_any(watched, 0.25):
            for bar, job in bars:
                bar.progress(job.fraction, text=_bar_text(job))
        for bar, job in bars:
            if job.done:
                bar.progress(1.0, text="finished")
    for slot, harvest, job in followed:
        if job.done:
            messages = list(harvest(job))
            if job.stop_reason == "budget":
                messages.insert(0, ("warning", budget_message(job)))
            messages.extend(("info", md_escape(note)) for note in job.notes)  # how it ran, after what it gave
            ss[slot.messages] = messages
            ss[slot.job] = None
    st.rerun()  # redraw without the ended job's bar and with its Run button enabled again


def follow_job(slot: JobSlot, harvest) -> None:
    """Follow the job in ``slot`` (if any) until it ends, harvest it, then rerun the script.

    The one-slot case of :func:`follow_jobs`: while the job runs this blocks the script run,
    redrawing a progress bar four times a second, with a Stop button; once the job is done,
    ``state[slot.messages] = harvest(job)``, the slot is emptied and ``st.rerun()`` redraws the
    page. Without a job in the slot it does nothing.

    Parameters
    ----------
    slot : JobSlot
    harvest : callable
        ``harvest(job) -> list of (level, text)``.
    """
    follow_jobs([(slot, harvest)])


def show_messages(state, slot: JobSlot) -> None:
    """Show the stored ``(level, text)`` messages of ``slot``'s last job (``st.success`` etc.)."""
    for level, text in state.get(slot.messages) or []:
        getattr(st, level)(text)
