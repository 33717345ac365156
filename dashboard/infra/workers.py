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
* **No copy of the data in the server.** The call and the result are pickled with protocol 5 and
  their big contiguous buffers (a numpy array's, a data frame's blocks) go **out of band**
  (:func:`_send`): each is written to the pipe from the array's own memory, and the receiver
  reads it into one writeable buffer that the unpickled array then uses. Sending a 400 MB ``X``
  took 850 MB more in the server (its pickle bytes and the launch's copy of them) and 800 MB in
  the worker; now under 1 MB in the server and ``X``'s own 400 MB in the worker
  (``benchmarks/results/worker_memory.md``). A big non-contiguous array goes as one contiguous
  copy (held by the server until it is sent); a buffer under 64 kB and an object without
  buffers go in band, as before.
* **The worker's copy counts against the memory budget.** What the worker receives (and the in-band
  pickle bytes the server holds while sending) is reserved in :mod:`dashboard.infra.memory`
  (:func:`~dashboard.infra.memory.working_memory`) from before the worker starts until it has
  ended, whatever the end (a result, an error, Stop, a kill). When the budget has no room for it,
  the computation runs in the job's thread instead, as with ``$COLIDE_JOB_PROCESSES=0``: it then
  reads the server's own ``X``, so it needs no copy, and the user gets the same result, progress
  and Stop (only the isolation from the server's GIL is lost), rather than a refusal for memory
  that the job does not need. The job says so (:func:`in_thread_note`, a note beside its progress
  and a message after it, with the sizes asked for and free) and the server's log has a line.
* Exceptions raised in the child are raised again in the job's thread as the same type with the
  same message (no traceback, no path of the child's frames), so the job's error text is the same
  as a thread job's. One that cannot be sent is :class:`WorkerError` naming its type.
* **Stop.** The job's thread checks the job four times a second while the child computes; once it
  is asked to stop it sets the child's flag, and a child that has not ended within its grace
  (a long refit that hears no callback) is terminated: :class:`WorkerError`, "… was stopped: …;
  nothing it computed was kept". The grace is :data:`STOP_GRACE_S`, or twice the longest time
  the child has gone between two reports (at most :data:`STOP_GRACE_MAX_S`) when that is longer:
  a bootstrap whose resamples report one fit at a time (minutes a fit at d = 100-200) ends its fit,
  hears Stop and sends its partial result, as the thread job did, instead of losing every
  resample to the 10 s grace. Its status says it is finishing its step.
* **A child killed** (out of memory, ``kill``): :class:`WorkerError`, "… its worker process ended
  unexpectedly (signal 9) …"; the job's slot is freed as for any error.
* **Bounded by the compute slots.** A child exists only inside :func:`in_worker`, inside a job
  that holds its compute slot; it is ended (terminated if need be) before :func:`in_worker`
  returns or raises. :func:`live_workers` counts them.
* **Start cost.** Children are forked from a ``forkserver`` (:func:`context`) that imported
  numpy, scipy, pandas and the core's job modules once (:data:`PRELOAD`): no Streamlit thread or
  session state is copied, and a child pays no import. Only the arguments are sent.
* **Device computations stay in the job's thread** (issue 50). A call whose ``device`` keyword, or
  whose estimator's ``device`` (an argument or keyword with ``get_params``), is not ``"cpu"``
  (:func:`on_device`; the dashboard's fits above the CPU limit, :func:`dashboard.infra.limits.fit_device`)
  runs in place: every device fit of the server then shares the one process's CUDA context, its
  JAX memory pool and its compiled loops. A worker would make its own context and, by XLA's
  default, preallocate 75 % of the GPU's memory, so a second one would fail (docs/gpu.md,
  "The dashboard on a GPU"). Its host side is a visit to the device a few times a second, so
  the server's GIL is not what it waits on.
* **Fallback.** ``$COLIDE_JOB_PROCESSES`` = ``0`` (or ``false``/``no``/``off``) runs every
  computation in the job's thread as before (:data:`ENABLED`); outside a job's thread (a live fit
  in the script, a test calling a cached function) :func:`in_worker` calls ``func`` in place.

The jobs that use it, and why the others do not, are listed in docs/security.md ("Shared server").
"""
from __future__ import annotations

import io
import logging
import multiprocessing
import multiprocessing.context
import os
import pickle
import signal
import struct
import threading
import time
import typing
from multiprocessing import forkserver, popen_forkserver, spawn
from multiprocessing import util as mp_util
from multiprocessing.context import reduction, set_spawning_popen

import numpy as np

from dashboard.infra import memory
from dashboard.infra.limits import env_seconds

_LOG = logging.getLogger(__name__)

__all__ = ["ENABLED", "PRELOAD", "STOP_GRACE_MAX_S", "STOP_GRACE_S", "WorkerError", "bind_job", "context",
           "current_job", "in_thread_note", "in_worker", "live_workers", "on_device"]


def _enabled() -> bool:
    return os.environ.get("COLIDE_JOB_PROCESSES", "").strip().lower() not in ("0", "false", "no", "off")


def _stop_grace() -> float:
    return env_seconds("COLIDE_JOB_STOP_GRACE_S", 10.0, 600.0)


#: Whether job computations run in worker processes (``$COLIDE_JOB_PROCESSES``, default on).
ENABLED = _enabled()
#: Seconds a child may go on after its job was asked to stop before it is terminated
#: (``$COLIDE_JOB_STOP_GRACE_S``, 0 to 600, default 10).
STOP_GRACE_S = _stop_grace()
#: The most seconds a child that reports at long intervals is given to end its step after Stop
#: (the grace is twice the longest interval between its reports, at least :data:`STOP_GRACE_S`).
STOP_GRACE_MAX_S = 600.0
#: The grace as a multiple of the longest interval between a child's reports.
STOP_GRACE_PER_GAP = 2.0
#: Modules the forkserver imports once, so that a child starts without importing them.
PRELOAD = [
    "numpy", "scipy.linalg", "scipy.optimize", "scipy.stats", "pandas", "threadpoolctl",
    "colide_core", "colide_core.solver.path", "colide_core.evaluation.interventions",
    "colide_core.evaluation.planning", "colide_core.evaluation.checks", "colide_core.evaluation.stability",
    "dashboard.infra.workers", "dashboard.infra._worker_preload",
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


#: Buffers smaller than this go in band (inside the pickle): not worth a frame of their own.
IN_BAND_BELOW = 1 << 16


class _Pickler(pickle.Pickler):
    """Protocol 5's pickler, sending a big non-contiguous numpy array as a contiguous copy.

    numpy pickles a non-contiguous array in band (``tobytes()`` and then the pickle's own copy:
    2.5 times its size in the server, twice in the worker); a contiguous copy goes out of band
    (once in the server until it is sent, once in the worker). Either way the worker gets a
    C-contiguous array with the same values.
    """

    def reducer_override(self, obj):
        if (type(obj) is np.ndarray and obj.nbytes >= IN_BAND_BELOW and not obj.dtype.hasobject
                and not (obj.flags.c_contiguous or obj.flags.f_contiguous)):
            copy = np.ascontiguousarray(obj)
            self.copied += copy.nbytes
            return copy.__reduce_ex__(5)
        return NotImplemented


class _Dumped(typing.NamedTuple):
    """An object pickled by :func:`_dumps`."""

    main: bytes  #: the pickle's bytes (with the in-band data)
    buffers: list  #: raw byte views (``PickleBuffer.raw()``, no copy) of the out-of-band buffers
    copied: int  #: bytes of contiguous copies made for it (held until it is sent)

    def received_bytes(self) -> int:
        """Bytes the receiver holds once it has read it."""
        return len(self.main) + sum(raw.nbytes for raw in self.buffers)

    def sender_bytes(self) -> int:
        """Bytes the sender holds for it until it is sent (beyond the objects themselves)."""
        return len(self.main) + self.copied


def _dumps(obj) -> _Dumped:
    """``obj`` pickled with protocol 5, its big contiguous buffers out of band.

    Contiguous buffers of at least :data:`IN_BAND_BELOW` bytes go out of band (a numpy array's data,
    a data frame's blocks); a big non-contiguous numpy array goes as a contiguous copy
    (:class:`_Pickler`); a small buffer, another non-contiguous one and an object that offers none
    are pickled in band, as before.
    """
    buffers = []

    def out_of_band(pickle_buffer):
        try:
            raw = pickle_buffer.raw()
        except BufferError:  # not contiguous: in band (a copy, as protocol 4 made)
            return True
        if raw.nbytes < IN_BAND_BELOW:
            return True
        buffers.append(raw)
        return False  # false: out of band

    out = io.BytesIO()
    pickler = _Pickler(out, protocol=5, buffer_callback=out_of_band)
    pickler.copied = 0
    pickler.dump(obj)
    return _Dumped(out.getvalue(), buffers, pickler.copied)


def _send(conn, dumped: _Dumped) -> None:
    """Send a :func:`_dumps` result on ``conn``: the number of buffers, the pickle, each buffer.

    ``Connection.send_bytes`` writes a contiguous buffer from its own memory (a ``memoryview``
    sliced as it is written), so an array is never copied into bytes here.
    """
    conn.send_bytes(struct.pack("!Q", len(dumped.buffers)))
    conn.send_bytes(dumped.main)
    for raw in dumped.buffers:
        conn.send_bytes(raw)


def _read_into(fd, view) -> None:
    """Fill ``view`` from ``fd``; EOFError when it ends first."""
    done, size = 0, len(view)
    while done < size:
        n = os.readv(fd, [view[done:]])
        if n == 0:
            raise EOFError("the other end closed the pipe")
        done += n


def _recv_frame(conn) -> bytearray:
    """One ``Connection.send_bytes`` message, read into a new writeable ``bytearray`` (one copy).

    ``Connection.recv_bytes`` returns read-only ``bytes`` (arrays rebuilt on it could not be
    written, as the thread's can) and ``recv_bytes_into`` reads the whole message into a
    ``BytesIO`` first (two copies); this reads the same framing (a 4-byte big-endian size, or -1
    and an 8-byte size) straight into the buffer the unpickled array will use.
    """
    fd = conn.fileno()
    head = bytearray(4)
    _read_into(fd, memoryview(head))
    size, = struct.unpack("!i", head)
    if size == -1:
        head = bytearray(8)
        _read_into(fd, memoryview(head))
        size, = struct.unpack("!Q", head)
    frame = bytearray(size)
    with memoryview(frame) as view:
        _read_into(fd, view)
    return frame


def _recv(conn):
    """The object :func:`_send` sent on ``conn``, its out-of-band buffers read once each."""
    count, = struct.unpack("!Q", _recv_frame(conn))
    main = _recv_frame(conn)
    buffers = [_recv_frame(conn) for _ in range(count)]
    return pickle.loads(main, buffers=buffers)


def _child(conn, stop, threads):
    """The worker process: it reads the call ``(func, args, kwargs)`` from ``conn`` (:func:`_recv`),
    runs ``func(*args, callback=..., **kwargs)`` and sends its outcome on ``conn``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C of the server is the parent's to handle

    def callback(*values):
        if stop.is_set():
            return True
        _send(conn, _dumps(("progress", values)))
        answer = conn.recv()
        return bool(answer) or stop.is_set()

    try:
        from threadpoolctl import threadpool_limits

        func, args, kwargs = _recv(conn)
        with threadpool_limits(limits=max(1, int(threads))):  # a one-unit job: one BLAS thread
            result = func(*args, callback=callback, **kwargs)
        func = args = kwargs = None  # what is not in the result can go before it is sent
        message = _dumps(("result", result))
    except BaseException as exc:  # noqa: BLE001 - every outcome goes back to the job's thread
        exc.__traceback__ = None
        try:
            message = _dumps(("raise", exc))
            pickle.loads(message.main, buffers=message.buffers)  # one that cannot be rebuilt: by type and text
        except Exception:
            message = _dumps(("error", type(exc).__name__, str(exc)))
    try:
        _send(conn, message)
    except OSError:  # the job's thread has gone (the server ended it): nobody to tell
        pass
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


def on_device(args=(), kwargs=None) -> bool:
    """Whether a call runs on a device (the JAX backend), not the CPU solvers.

    True when ``kwargs`` has a ``device`` other than ``"cpu"`` (:func:`colide_core.lambda_path`'s),
    or an argument or keyword value is an estimator (has ``get_params``) whose ``device`` is not
    ``"cpu"`` (a ``colide_core.CoLiDE`` given to a bootstrap, the checks' refits, a ranking).

    Parameters
    ----------
    args : tuple
    kwargs : dict, optional

    Returns
    -------
    bool

    Examples
    --------
    >>> on_device((), {"device": "gpu"}), on_device((), {"device": "cpu"}), on_device(([1],), {})
    (True, False, False)
    """
    kwargs = kwargs or {}
    if kwargs.get("device", "cpu") not in (None, "cpu"):
        return True
    for value in (*args, *kwargs.values()):
        if hasattr(value, "get_params") and getattr(value, "device", "cpu") not in (None, "cpu"):
            return True
    return False


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
        after Stop, past its grace (:data:`STOP_GRACE_S`, or twice the longest interval between
        its reports, at most :data:`STOP_GRACE_MAX_S`), or its exception could not be sent back.

    Notes
    -----
    In place (no process): when :data:`ENABLED` is False, outside a job's thread (no job holds
    a compute slot in this thread: a live fit, a test calling the function directly), when the
    call runs on a device (:func:`on_device`: one CUDA context and one GPU memory pool for the
    server, docs/gpu.md "The dashboard on a GPU"), when
    ``func`` or an argument cannot be pickled (a closure), or when the memory budget has no room
    for the worker's copy of the arguments (:func:`dashboard.infra.memory.working_memory`: in the
    thread the function reads the server's own arrays, so it needs none). In that last case the
    job says so: :func:`in_thread_note` with the bytes asked for and free goes to the job's
    :meth:`~dashboard.infra.jobs.Job.note` (its bar and, once it ends, a message), and a warning
    to this module's logger.

    The call is pickled with protocol 5, its big contiguous buffers out of band (:func:`_dumps`):
    the server never holds a pickled copy of ``X``. The bytes the worker receives, plus the in-band
    pickle the server holds while sending it, are reserved in the memory budget until the worker
    has ended.
    """
    job = current_job()
    relay = job.progress if callback is None and job is not None else callback
    call = None
    if ENABLED and job is not None and not on_device(args, kwargs):
        try:
            call = _dumps((func, args, kwargs))
        except Exception:  # a function or argument that cannot be sent (a closure): in the thread
            call = None
    if call is None:
        return func(*args, callback=relay, **kwargs)
    # the worker's copy of what is sent, and the server's in-band pickle bytes while they are sent
    with memory.working_memory(call.received_bytes() + call.sender_bytes()) as room:
        if room:
            sending, call = [call], None  # _run_in_worker drops the pickle once it is sent
            return _run_in_worker(job, relay, sending)
    call = None  # no room for the worker's copy: the thread needs none (documented above)
    _say_in_thread(job, room)
    return func(*args, callback=relay, **kwargs)


def in_thread_note(need: int, free: int) -> str:
    """The sentence a job shows while it computes in the server's process for lack of memory.

    Parameters
    ----------
    need : int
        Bytes the worker's copy of the call would have taken (what :func:`in_worker` asked the
        budget for).
    free : int
        Bytes of the budget free when it asked.

    Returns
    -------
    str
        Plain text with no user input (the sizes in MB, :func:`dashboard.infra.memory.fmt_mb`).
    """
    return (f"Running in the server's own process: not enough memory for a separate worker "
            f"(needs {memory.fmt_mb(need)} MB, {memory.fmt_mb(free)} MB free).")


def _say_in_thread(job, room) -> None:
    """Tell the job's user, and the server's log, that ``job`` computes in its thread because the
    memory budget had no ``room`` for its worker's copy (:meth:`~dashboard.infra.jobs.Job.note`:
    shown beside its progress, never part of its result)."""
    text = in_thread_note(room.need, room.free)
    note = getattr(job, "note", None)
    if note is not None:
        note(text)
    _LOG.warning("job %r runs in the server's process: its worker's copy needs %d bytes, the memory budget "
                 "has %d of %d free", getattr(job, "label", "?"), room.need, room.free, room.budget)


def _grace(longest_gap: float) -> float:
    """Seconds a stopped child may go on: :data:`STOP_GRACE_S`, or :data:`STOP_GRACE_PER_GAP` times
    the longest interval between its reports when that is longer, at most :data:`STOP_GRACE_MAX_S`."""
    return max(STOP_GRACE_S, min(STOP_GRACE_MAX_S, STOP_GRACE_PER_GAP * longest_gap))


def _finishing(job, grace: float) -> str:
    """The status of a stopped job whose worker is given ``grace`` s to end its step."""
    return (f"{job.label}: stopping after its current step (it reports every {grace / STOP_GRACE_PER_GAP:.0f} s "
            f"or so; ended in at most {grace:.0f} s), to keep what it computed")


def _run_in_worker(job, relay, sending):
    """:func:`in_worker`'s process: start a worker, send it the call (``sending``: a list holding one
    :func:`_dumps` result, emptied once sent so that its in-band bytes are freed), relay its progress
    to ``relay``, return its result or raise its error; the worker has ended on return."""
    ctx = context()
    parent, child = ctx.Pipe()
    stop = ctx.Event()
    proc = _WorkerProcess(target=_child, args=(child, stop, job.units),
                          name="colide-job-worker", daemon=True)
    with _LOCK:
        _LIVE.add(proc)
    try:
        proc.start()
        child.close()
        try:
            _send(parent, sending.pop())
        except OSError:  # the worker ended before it had read the call: reported below
            pass
        stop_since = last_report = None
        longest_gap = 0.0  # seconds between two reports: how long the child's steps are
        while True:
            if stop_since is None and job._should_stop():
                stop.set()
                stop_since = time.monotonic()
            grace = _grace(longest_gap)
            if stop_since is not None and grace > STOP_GRACE_S:
                job.status = _finishing(job, grace)
            if stop_since is not None and time.monotonic() - stop_since >= grace:
                _end(proc)
                raise WorkerError(f" was stopped: its worker process did not stop within {grace:.3g} s "
                                  "of the request (a long step that hears no progress callback) and was ended; "
                                  "nothing it computed was kept.")
            if not parent.poll(0.25):
                if not proc.is_alive() and not parent.poll(0):
                    break  # ended without a word: reported below
                continue
            try:
                message = _recv(parent)
            except (EOFError, OSError):
                break
            if message[0] == "progress":
                now = time.monotonic()
                if last_report is not None:
                    longest_gap = max(longest_gap, now - last_report)
                last_report = now
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
