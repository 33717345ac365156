"""Worker processes for jobs: a job's computation out of the server's process (issue 53, high 3).

Every session's script, every live fit and every job thread share the one Streamlit process and its
GIL (docs/security.md, "Shared server", gives the heavy-presser figures). So a job's thread may hand
its computation to a **worker process** and only relay it:

* :func:`in_worker` ``(func, *args, callback=..., **kwargs)``, called in a job's thread (a
  :class:`~dashboard.infra.jobs.Job` holding its compute slot), runs
  ``func(*args, callback=child_callback, **kwargs)`` in a child process. ``child_callback(*a)``
  sends ``a`` (``(done, total)``, ``(fraction, status)``, a solver's ``(stage, iteration,
  objective)``) to the job's thread over a pipe and waits for its answer: the thread passes
  ``a`` to the parent's ``callback`` (the job's :meth:`~dashboard.infra.jobs.Job.progress` or
  :meth:`~dashboard.infra.jobs.Job.report`), so progress, Stop, the budget, the session's end and
  the people-first wait all work as for a thread job, and answers whether to stop (the child's
  stop flag, a ``multiprocessing`` Event, is set too). The result comes back pickled over the
  pipe (our own objects between our own processes; user files are never unpickled here).
* Exceptions raised in the child are raised again in the job's thread as the same type with the
  same message (no traceback, no path of the child's frames), so the job's error text is the same
  as a thread job's. One that cannot be sent is :class:`WorkerError` naming its type.
* **Stop.** The job's thread checks the job four times a second while the child computes; once it
  is asked to stop it sets the child's flag, and a child that has not ended :data:`STOP_GRACE_S`
  seconds later (a long refit that hears no callback) is terminated: :class:`WorkerError`, "…
  was stopped: …; nothing it computed was kept".
* **A child killed** (out of memory, ``kill``): :class:`WorkerError`, "… its worker process ended
  unexpectedly (signal 9) …"; the job's slot is freed as for any error.
* **Bounded by the compute slots.** A child exists only inside :func:`in_worker`, inside a job
  that holds its compute slot; it is ended (terminated if need be) before :func:`in_worker`
  returns or raises. :func:`live_workers` counts them.
* **Start cost.** Children are forked from a ``forkserver`` (:func:`context`) that imported
  numpy, scipy, pandas and the core's job modules once (:data:`PRELOAD`): no Streamlit thread or
  session state is copied, and a child pays no import. Only the arguments are sent.
* **Fallback.** ``$COLIDE_JOB_PROCESSES`` = ``0`` (or ``false``/``no``/``off``) runs every
  computation in the job's thread as before (:data:`ENABLED`); outside a job's thread (a live fit
  in the script, a test calling a cached function) :func:`in_worker` calls ``func`` in place.

The jobs that use it, and why the others do not, are listed in docs/security.md ("Shared server").
"""
from __future__ import annotations

import io
import multiprocessing
import multiprocessing.context
import os
import pickle
import signal
import threading
import time
from multiprocessing import forkserver, popen_forkserver, spawn
from multiprocessing import util as mp_util
from multiprocessing.context import reduction, set_spawning_popen

from dashboard.infra.limits import env_seconds

__all__ = ["ENABLED", "PRELOAD", "STOP_GRACE_S", "WorkerError", "bind_job", "context", "current_job", "in_worker",
           "live_workers"]


def _enabled() -> bool:
    return os.environ.get("COLIDE_JOB_PROCESSES", "").strip().lower() not in ("0", "false", "no", "off")


def _stop_grace() -> float:
    return env_seconds("COLIDE_JOB_STOP_GRACE_S", 10.0, 600.0)


#: Whether job computations run in worker processes (``$COLIDE_JOB_PROCESSES``, default on).
ENABLED = _enabled()
#: Seconds a child may go on after its job was asked to stop before it is terminated
#: (``$COLIDE_JOB_STOP_GRACE_S``, 0 to 600, default 10).
STOP_GRACE_S = _stop_grace()
#: Modules the forkserver imports once, so that a child starts without importing them.
PRELOAD = [
    "numpy", "scipy.linalg", "scipy.optimize", "scipy.stats", "pandas", "threadpoolctl",
    "colide_core", "colide_core.solver.path", "colide_core.evaluation.interventions",
    "colide_core.evaluation.planning", "colide_core.evaluation.checks", "colide_core.evaluation.stability",
    "dashboard.infra._worker_preload",
]


class WorkerError(Exception):
    """A job's worker process ended without a result: killed, stopped by force, or its exception
    could not be sent back. :meth:`text` is the job's error message."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what

    def text(self, label: str) -> str:
        """The job's :attr:`~dashboard.infra.jobs.Job.error`: ``label`` then what happened."""
        return f"{label}{self.what}"


_CONTEXT = None
_LOCK = threading.Lock()
_LIVE = set()
#: Per thread: the job whose thread it is, while it holds its compute slot (:func:`bind_job`).
_THREAD = threading.local()


def current_job():
    """The :class:`~dashboard.infra.jobs.Job` whose thread this is, while it holds its compute slot;
    else None. :func:`in_worker` runs its function in a worker process only there."""
    return getattr(_THREAD, "job", None)


def bind_job(job) -> None:
    """Mark this thread as ``job``'s (None: no job's), for :func:`current_job`; called by the job's
    thread when it gets its compute slot and when it ends."""
    _THREAD.job = job


class _Popen(popen_forkserver.Popen):
    """``multiprocessing.popen_forkserver.Popen`` launching a child without the parent's ``__main__``.

    ``multiprocessing`` tells a forkserver child to run the parent's main script again (as
    ``__mp_main__``) when the parent was started from a file: the server's ``streamlit`` launcher,
    a benchmark or a test script. A worker needs nothing from it (its function is imported by
    module), so the launch leaves the main module's name and path out of the child's preparation
    data; the rest is CPython 3.11's ``_launch``.
    """

    def _launch(self, process_obj):
        prep_data = spawn.get_preparation_data(process_obj._name)
        for name in ("init_main_from_name", "init_main_from_path"):
            prep_data.pop(name, None)
        buf = io.BytesIO()
        set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            set_spawning_popen(None)
        self.sentinel, w = forkserver.connect_to_new_process(self._fds)
        _parent_w = os.dup(w)
        self.finalizer = mp_util.Finalize(self, mp_util.close_fds, (_parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _WorkerProcess(multiprocessing.context.ForkServerProcess):
    """A forkserver process launched by :class:`_Popen`."""

    @staticmethod
    def _Popen(process_obj):
        return _Popen(process_obj)


def context():
    """The ``multiprocessing`` forkserver context of the job workers (made once, preloaded)."""
    global _CONTEXT
    with _LOCK:
        if _CONTEXT is None:
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(list(PRELOAD))
            _CONTEXT = ctx
        return _CONTEXT


def live_workers() -> int:
    """Worker processes alive now (each inside a job holding its compute slot)."""
    with _LOCK:
        return len(_LIVE)


def _child(conn, stop, call, threads):
    """The worker process: ``func(*args, callback=..., **kwargs)`` (``call`` pickles them), its
    outcome sent on ``conn``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C of the server is the parent's to handle

    def callback(*values):
        if stop.is_set():
            return True
        conn.send(("progress", values))
        answer = conn.recv()
        return bool(answer) or stop.is_set()

    try:
        from threadpoolctl import threadpool_limits

        func, args, kwargs = pickle.loads(call)
        with threadpool_limits(limits=max(1, int(threads))):  # a one-unit job: one BLAS thread
            result = func(*args, callback=callback, **kwargs)
        payload = pickle.dumps(("result", result), protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException as exc:  # noqa: BLE001 - every outcome goes back to the job's thread
        exc.__traceback__ = None
        try:
            payload = pickle.dumps(("raise", exc), protocol=pickle.HIGHEST_PROTOCOL)
            pickle.loads(payload)  # an exception that cannot be rebuilt goes by its type and text
        except Exception:
            payload = pickle.dumps(("error", type(exc).__name__, str(exc)))
    conn.send_bytes(payload)
    conn.close()


def _end(proc) -> None:
    """Terminate ``proc`` if it still runs, and reap it (one that never started: nothing)."""
    if proc.pid is None:
        return
    if proc.is_alive():
        proc.terminate()
        proc.join(2.0)
        if proc.is_alive():
            proc.kill()
    proc.join()


def in_worker(func, *args, callback=None, **kwargs):
    """``func(*args, callback=callback, **kwargs)``, in a worker process when called in a job's thread.

    Parameters
    ----------
    func : callable
        A module-level function (picklable) taking a ``callback`` keyword: ``callback(*values)``
        returns whether to stop (``colide_core``'s ``callback(done, total)``, a solver's
        ``callback(stage, iteration, objective)``).
    *args, **kwargs
        Its arguments, picklable (arrays, data frames, estimators, designs): only these are sent.
    callback : callable, optional
        The parent's callback, called in the job's thread with the values the child reported;
        its return value (True: stop) is the child callback's. Default: the job's
        :meth:`~dashboard.infra.jobs.Job.progress`.

    Returns
    -------
    object
        ``func``'s return value (a partial result when it stopped on its callback's answer).

    Raises
    ------
    Exception
        What ``func`` raised in the child: the same type and message, without its traceback.
    WorkerError
        The child ended without a result: killed or crashed (its signal or exit code), terminated
        :data:`STOP_GRACE_S` s after Stop, or its exception could not be sent back.

    Notes
    -----
    In place (no process): when :data:`ENABLED` is False, outside a job's thread (no job holds
    a compute slot in this thread: a live fit, a test calling the function directly), or when
    ``func`` or an argument cannot be pickled (a closure).
    """
    job = current_job()
    relay = job.progress if callback is None and job is not None else callback
    call = None
    if ENABLED and job is not None:
        try:
            call = pickle.dumps((func, args, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # a function or argument that cannot be sent (a closure): in the thread
            call = None
    if call is None:
        return func(*args, callback=relay, **kwargs)
    ctx = context()
    parent, child = ctx.Pipe()
    stop = ctx.Event()
    proc = _WorkerProcess(target=_child, args=(child, stop, call, job.units),
                       name="colide-job-worker", daemon=True)
    with _LOCK:
        _LIVE.add(proc)
    try:
        proc.start()
        child.close()
        stop_since = None
        while True:
            if stop_since is None and job._should_stop():
                stop.set()
                stop_since = time.monotonic()
            if stop_since is not None and time.monotonic() - stop_since >= STOP_GRACE_S:
                _end(proc)
                raise WorkerError(f" was stopped: its worker process did not stop within {STOP_GRACE_S:g} s "
                                  "of the request (a long step that hears no progress callback) and was ended; "
                                  "nothing it computed was kept.")
            if not parent.poll(0.25):
                if not proc.is_alive() and not parent.poll(0):
                    break  # ended without a word: reported below
                continue
            try:
                message = pickle.loads(parent.recv_bytes())
            except (EOFError, OSError):
                break
            if message[0] == "progress":
                answer = bool(relay(*message[1]))
                if answer:
                    stop.set()
                    stop_since = stop_since or time.monotonic()
                try:
                    parent.send(answer)
                except (BrokenPipeError, OSError):
                    pass
                continue
            proc.join(5.0)
            if message[0] == "result":
                return message[1]
            if message[0] == "raise":
                raise message[1]
            raise WorkerError(f": unexpected error ({message[1]}): {message[2]}")
        proc.join(2.0)
        code = proc.exitcode
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        raise WorkerError(f" failed: its worker process ended unexpectedly ({how}), perhaps out of memory; "
                          "nothing it computed was kept. Try again, or with smaller settings.")
    finally:
        _end(proc)
        parent.close()
        with _LOCK:
            _LIVE.discard(proc)
