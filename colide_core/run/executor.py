"""One executor layer for sweeps: joblib locally, a Dask cluster when one is given.

A sweep is a list of :class:`Task` objects. Each task calls a module-level
function (so it pickles by reference) that returns a flat dict, which becomes
one row of a tidy results table. :func:`run_sweep`

* runs the tasks with **joblib** (``n_jobs`` local processes) by default, or on
  a **Dask distributed** cluster when ``scheduler`` is a ``tcp://host:port``
  address or a ``distributed.Client``, or when the environment variable
  ``DASK_SCHEDULER_ADDRESS`` is set;
* streams results back **as they finish** (joblib's
  ``return_as="generator_unordered"``, Dask's ``as_completed``) and appends
  each row at once to a JSON-lines :class:`ResultStore` (flushed and fsync-ed);
* **retries** tasks whose worker died: Dask reschedules them itself (up to its
  ``distributed.scheduler.allowed-failures``) and a task that still ends in
  ``KilledWorker`` is resubmitted up to ``retries`` more times; a crashed
  joblib pool is restarted on the unfinished tasks;
* leaves **no worker** behind: when the last joblib run of the process ends, joblib's pool is
  shut down (its workers would otherwise idle for 300 s, each keeping what its fits allocated);
* **resumes**: every task has a key, a SHA-256 of (method, params, dataset,
  seed) (:func:`task_key`); tasks whose key is already in the store are not
  recomputed, so a killed sweep started again only runs what is missing.
  Rows are never duplicated: each key is written once.

An exception inside a task does not stop the sweep: its row gets
``status="error"`` and the message in ``error`` (the same on every backend).

Task functions provided here (used by ``python -m colide_core bench`` and the
app's Compare runs): :func:`synthetic_task` (data drawn by
:func:`colide_core.data.simulate.simulate_dataset`, the project's one simulation
protocol) and :func:`data_task`. They need only ``colide_core`` on a worker.

Dask and distributed are imported lazily, only when a cluster is used.

Modules, by job (issue 47): the tasks and their keys in :mod:`colide_core.run.tasks`, the result
store in :mod:`colide_core.run.store`, the benchmark tasks in :mod:`colide_core.run.bench_tasks`;
the sweep and its two back ends (joblib, Dask) here. This module re-exports their public names, so
``colide_core.run.executor`` stays the one import path.
"""
from __future__ import annotations

import contextlib
import os
import socket
import threading
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from colide_core import defaults
from colide_core.run.bench_tasks import (  # noqa: F401 - re-exported: the executor's names, as before the split
    _METRIC_KEYS, COMPARISON_SCHEMA, _curve_columns, _design_columns, _fit_method, comparison_manifest, data_task,
    synthetic_task)
from colide_core.run.store import ResultStore, _StoreLock, _json_default  # noqa: F401 - re-exported
from colide_core.run.tasks import (  # noqa: F401 - re-exported
    _ERROR, _KEY, _STATUS, TIMING_COLUMNS, Task, _canonical, _execute, make_task, task_key)

__all__ = [
    "Task",
    "SweepResult",
    "ResultStore",
    "task_key",
    "make_task",
    "run_sweep",
    "synthetic_task",
    "data_task",
    "TIMING_COLUMNS",
    "comparison_manifest",
    "COMPARISON_SCHEMA",
]


# --------------------------------------------------------------------------------------------
# running
# --------------------------------------------------------------------------------------------

@dataclass
class SweepResult:
    """What :func:`run_sweep` returns.

    Attributes
    ----------
    rows : list of dict
        One row per unique task key, in task order (finished tasks only when
        the sweep was stopped).
    n_computed : int
        Tasks run in this call.
    n_cached : int
        Tasks skipped because the store already had them.
    n_resubmitted : int
        Resubmissions after worker crashes (beyond Dask's own rescheduling).
    backend : str
        ``"joblib"`` or ``"dask"``.
    stopped : bool
        True when the callback asked to stop.
    """

    rows: list
    n_computed: int
    n_cached: int
    n_resubmitted: int
    backend: str
    stopped: bool = False

    def to_frame(self):
        """The rows as a tidy :class:`pandas.DataFrame` (one row per run)."""
        return pd.DataFrame(self.rows)


def _scheduler_address(scheduler):
    if scheduler is not None:
        return scheduler
    return os.environ.get("DASK_SCHEDULER_ADDRESS") or None


#: Seconds the TCP probe of a ``tcp://`` / ``tls://`` scheduler address may wait.
_PROBE_TIMEOUT = 5.0


def _probe_scheduler(address, timeout):
    """Fail fast when nothing listens at a ``tcp://`` or ``tls://`` scheduler address.

    ``distributed.Client`` retries a refused connection until its whole ``timeout`` (30 s by
    default) has passed; one plain TCP connect tells "nothing listens there" at once. Other
    protocols (``inproc://``, ``ucx://``, ...) are left to Dask.

    Raises
    ------
    OSError
        If the address is malformed or the connection is refused or times out (the message
        names the address and the reason).
    """
    scheme, sep, rest = str(address).partition("://")
    if not sep or scheme not in ("tcp", "tls"):
        return
    host, _, port = rest.rstrip("/").rpartition(":")
    host = host.strip("[]")  # IPv6 literals are written tcp://[::1]:8786
    try:
        port_no = int(port)
    except ValueError:
        raise OSError(f"cannot reach the Dask scheduler at {address!r}: "
                      "expected tcp://host:port with a numeric port") from None
    try:
        socket.create_connection((host or "127.0.0.1", port_no), timeout=timeout).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise OSError(f"cannot reach the Dask scheduler at {address!r}: {reason} "
                      f"(nothing answered on {host or '127.0.0.1'}:{port_no})") from None


#: Most resubmissions :func:`run_sweep` accepts for a task whose worker died (``defaults``).
MAX_RETRIES = defaults.MAX_RETRIES


def _check_run_arguments(n_jobs, retries, callback, connect_timeout, timeout):
    """The argument checks of :func:`run_sweep` (scikit-learn's parameter validation)."""
    from numbers import Integral

    from colide_core._params import POSITIVE, InvalidParameterError, Number, check_number, is_int

    if n_jobs is not None and (not is_int(n_jobs) or n_jobs == 0):
        raise InvalidParameterError(f"n_jobs must be None or a nonzero integer (-1 = all cores), got {n_jobs!r}.")
    if not is_int(retries) or retries < 0:
        raise InvalidParameterError(f"retries must be >= 0, got {retries!r} (an integer is expected).")
    check_number(retries, "retries", "run_sweep", Number(Integral, 0, MAX_RETRIES, closed="both"))
    if callback is not None and not callable(callback):
        raise InvalidParameterError(f"callback must be callable or None, got {type(callback).__name__}.")
    check_number(connect_timeout, "connect_timeout", "run_sweep", POSITIVE)
    if timeout is not None:
        check_number(timeout, "timeout", "run_sweep", POSITIVE)


def run_sweep(tasks, *, store=None, scheduler=None, n_jobs=None, retries=3, callback=None,
              connect_timeout=30, timeout=None):
    """Run tasks, streaming rows into a store as they finish; resume from it.

    Parameters
    ----------
    tasks : iterable of Task
        Tasks with equal keys are run once.
    store : ResultStore, str or Path, optional
        Where finished rows are appended; tasks already in it are skipped. A
        path is opened as a :class:`ResultStore`. None keeps rows in memory.
    scheduler : str or distributed.Client, optional
        ``"tcp://host:port"`` of a running Dask scheduler, or a connected
        ``Client`` (left open). Default: ``$DASK_SCHEDULER_ADDRESS`` if set,
        otherwise joblib locally.
    n_jobs : int, optional
        joblib processes (joblib's meaning: -1 = all cores, None = 1 unless
        inside ``joblib.parallel_config``). Ignored with Dask.
    retries : int, default 3
        Resubmissions of a task whose worker died (Dask ``KilledWorker``,
        joblib ``TerminatedWorkerError``).
    callback : callable, optional
        ``callback(done, total, row)`` after each finished task (``done``
        counts cached tasks too); returning True stops the sweep (running
        tasks are cancelled, finished rows are kept).
    connect_timeout : float, default 30
        Seconds to wait for a scheduler address to answer. A ``tcp://`` or ``tls://``
        address is first probed with one plain TCP connect (at most 5 s), so a refused
        connection (nothing listens there) is reported at once rather than after this wait.
    timeout : float, optional
        Give up (``TimeoutError``) when the sweep is not finished after this
        many seconds (Dask), or when one task runs longer (joblib). Finished
        rows stay in the store.

    Returns
    -------
    SweepResult

    Raises
    ------
    ValueError
        (``InvalidParameterError``, also a TypeError) Before any task runs: if ``retries`` is
        not an int in ``[0, 100]``, ``n_jobs`` is not None or a nonzero int, ``callback`` is
        not callable, or a timeout is not a finite number > 0 (bools, floats for ints and
        strings are refused).
    OSError
        If the Dask scheduler cannot be reached (message names the address and the reason,
        e.g. "Connection refused").
    RuntimeError
        If a task's worker keeps dying after ``retries`` resubmissions, or if
        another sweep is writing to the same ``store`` (see :class:`ResultStore`).
    TimeoutError
        See ``timeout``.
    """
    _check_run_arguments(n_jobs, retries, callback, connect_timeout, timeout)
    if store is not None and not isinstance(store, ResultStore):
        store = ResultStore(store)
    with store.writing() if store is not None else contextlib.nullcontext():
        return _run_sweep(tasks, store, scheduler, n_jobs, retries, callback, connect_timeout, timeout)


def _run_sweep(tasks, store, scheduler, n_jobs, retries, callback, connect_timeout, timeout):
    unique = {}
    for t in tasks:
        unique.setdefault(t.key, t)
    order = list(unique)
    done = store.load() if store is not None else {}
    done = {k: v for k, v in done.items() if k in unique}
    n_cached = len(done)
    pending = [unique[k] for k in order if k not in done]
    total = len(order)
    state = {"computed": 0, "stopped": False}

    def record(row):
        if row[_KEY] in done:  # a retried task that had in fact finished: never write twice
            return False
        done[row[_KEY]] = row
        if store is not None:
            store.append(row)
        state["computed"] += 1
        if callback is not None and callback(len(done), total, row):
            state["stopped"] = True
            return True
        return False

    address = _scheduler_address(scheduler)
    if not pending:
        backend = "dask" if address is not None else "joblib"
        n_resub = 0
    elif address is not None:
        backend = "dask"
        n_resub = _run_dask(pending, address, retries, record, connect_timeout, timeout)
    else:
        backend = "joblib"
        n_resub = _run_joblib(pending, n_jobs, retries, record, done, timeout)
    rows = [done[k] for k in order if k in done]
    return SweepResult(rows=rows, n_computed=state["computed"], n_cached=n_cached,
                       n_resubmitted=n_resub, backend=backend, stopped=state["stopped"])


#: joblib runs going on in this process (guarded by :data:`_JOBLIB_LOCK`): the last one to end
#: shuts the worker pool down (:func:`_joblib_run`).
_JOBLIB_RUNS = 0
_JOBLIB_LOCK = threading.Lock()


def _shutdown_joblib_workers():
    """Shut joblib's process-wide loky pool down and wait for its workers to exit.

    joblib keeps its workers for ``idle_worker_timeout`` (300 s) after a run, each holding what its
    fits allocated (issue 42: about 1 GB per worker after a bootstrap with conditions, on a
    dashboard server that may not run another job for hours). The pool is joblib's one reusable
    executor (``joblib.externals.loky.reusable_executor``); the next run starts a fresh one.
    """
    from joblib.externals.loky import reusable_executor

    executor = reusable_executor._executor
    if executor is not None:
        executor.shutdown(wait=True)


@contextlib.contextmanager
def _joblib_run():
    """Count a joblib run; when the last run in this process ends, its workers exit.

    joblib's pool is shared by every thread of the process (two dashboard jobs may run at once),
    so it is shut down only when no other run is using it: runs start and end under one lock.
    """
    global _JOBLIB_RUNS
    with _JOBLIB_LOCK:
        _JOBLIB_RUNS += 1
    try:
        yield
    finally:
        with _JOBLIB_LOCK:
            _JOBLIB_RUNS -= 1
            if _JOBLIB_RUNS == 0:
                _shutdown_joblib_workers()


def _run_joblib(pending, n_jobs, retries, record, done, timeout):
    from joblib import effective_n_jobs

    if effective_n_jobs(n_jobs) == 1:
        return _run_joblib_pool(pending, n_jobs, retries, record, done, None)  # sequential: no pool, no timeout
    with _joblib_run():
        return _run_joblib_pool(pending, n_jobs, retries, record, done, timeout)


def _run_joblib_pool(pending, n_jobs, retries, record, done, timeout):
    from joblib import Parallel, delayed
    from joblib.externals.loky.process_executor import TerminatedWorkerError

    n_resub = 0
    for attempt in range(retries + 1):
        todo = [t for t in pending if t.key not in done]
        if not todo:
            break
        try:
            gen = Parallel(n_jobs=n_jobs, return_as="generator_unordered", timeout=timeout)(
                delayed(_execute)(t.fn, dict(t.kwargs), t.key, dict(t.meta)) for t in todo)
            for row in gen:
                if record(row):
                    gen.close()
                    return n_resub
            break
        except TerminatedWorkerError:
            if attempt == retries:
                raise RuntimeError(f"joblib workers kept dying; gave up after {retries} restarts") from None
            n_resub += 1
    return n_resub


def task_resources(task, gpu_workers):
    """Dask resources a task asks for: ``{"GPU": 1}`` for a fit with ``device="gpu"`` when the
    cluster has workers started with ``--resources GPU=1`` (``docs/gpu.md``), else none.

    Without such workers nothing is asked for (a resource no worker has would leave the task
    pending for ever): a ``"gpu"`` fit on a worker without a GPU fails with a clear
    ``DeviceUnavailableError`` row instead.

    Parameters
    ----------
    task : Task
    gpu_workers : bool
        Whether some worker of the cluster declares the ``GPU`` resource.

    Returns
    -------
    dict
        ``{"GPU": 1}`` or ``{}``.
    """
    params = task.kwargs.get("params") or {}
    return {"GPU": 1} if gpu_workers and isinstance(params, Mapping) and params.get("device") == "gpu" else {}


def _nbytes(value):
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, pd.DataFrame):
        return int(value.memory_usage(deep=False).sum())
    return 0


def _run_dask(pending, address, retries, record, connect_timeout, timeout):
    from distributed import Client, as_completed
    from distributed.client import FutureCancelledError
    from distributed.scheduler import KilledWorker

    own = not isinstance(address, Client)
    if own:
        _probe_scheduler(address, min(connect_timeout, _PROBE_TIMEOUT))
        try:
            client = Client(address, timeout=connect_timeout)
        except (OSError, TimeoutError) as exc:
            raise OSError(f"cannot reach the Dask scheduler at {address!r}: {exc}") from None
    else:
        client = address
    try:
        scattered = {}

        def prepare(kwargs):
            """Scatter large arrays once (by object identity) instead of pickling them per task."""
            out = {}
            for name, value in kwargs.items():
                if _nbytes(value) > 100_000:
                    if id(value) not in scattered:
                        scattered[id(value)] = client.scatter(value, broadcast=False, hash=True)
                    out[name] = scattered[id(value)]
                else:
                    out[name] = value
            return out

        workers = client.scheduler_info().get("workers", {}).values()
        gpu_workers = any("GPU" in (w.get("resources") or {}) for w in workers)

        def submit(t, attempt):
            return client.submit(_execute, t.fn, prepare(t.kwargs), t.key, dict(t.meta),
                                 key=f"colide-task-{t.key}-{attempt}", pure=False,
                                 resources=task_resources(t, gpu_workers) or None)

        attempts = {t.key: 0 for t in pending}
        owner = {}
        for t in pending:
            f = submit(t, 0)
            owner[f.key] = (t, f)
        outstanding = {k for k in owner}
        n_resub = 0
        ac = as_completed([f for _, f in owner.values()], timeout=timeout)
        for fut in ac:
            outstanding.discard(fut.key)
            t = owner[fut.key][0]
            owner[fut.key] = (t, None)  # drop our reference: the cluster may free the result
            try:
                row = fut.result()
            except KilledWorker:
                attempts[t.key] += 1
                if attempts[t.key] > retries:
                    raise RuntimeError(
                        f"task {t.key[:12]} ({dict(t.meta)}) killed its worker {retries + 1} times; giving up"
                    ) from None
                n_resub += 1
                nf = submit(t, attempts[t.key])
                owner[nf.key] = (t, nf)
                outstanding.add(nf.key)
                ac.add(nf)
                continue
            except FutureCancelledError:
                continue
            if record(row):
                client.cancel([owner[k][1] for k in outstanding])
                break
        return n_resub
    finally:
        if own:
            client.close()
