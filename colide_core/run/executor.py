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
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd
from filelock import FileLock, Timeout

from colide_core import defaults

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

#: Columns that hold wall times; they differ between runs and backends.
TIMING_COLUMNS = ("time_s",)

# Per-row columns the executor adds.
_KEY, _STATUS, _ERROR = "key", "status", "error"


# --------------------------------------------------------------------------------------------
# keys and tasks
# --------------------------------------------------------------------------------------------

def _canonical(obj):
    """JSON-able canonical form: arrays and frames are replaced by their content hash."""
    if isinstance(obj, Mapping):
        return {str(k): _canonical(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [_canonical(v) for v in obj]
    if isinstance(obj, (pd.DataFrame, np.ndarray)):
        from colide_core.run.manifest import data_fingerprint

        A = obj if isinstance(obj, pd.DataFrame) or obj.ndim == 2 else np.atleast_2d(obj)
        return {"sha256": data_fingerprint(A)["sha256"]}
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj)
    if obj is None or isinstance(obj, str):
        return obj
    raise TypeError(f"cannot build a task key from a {type(obj).__name__}")


def task_key(method, params, dataset, seed):
    """Stable identity of one run: SHA-256 of (method, params, dataset, seed).

    Parameters
    ----------
    method : str
        Method name, e.g. ``"CoLiDE-NV"``.
    params : dict
        Method parameters (JSON-able; tuples and lists hash alike).
    dataset : dict, numpy.ndarray or pandas.DataFrame
        A dataset specification (for simulated data) or the data themselves
        (hashed by :func:`colide_core.run.manifest.data_fingerprint`).
    seed : int or None

    Returns
    -------
    str
        64 hex characters; equal inputs give equal keys in any process.

    Raises
    ------
    TypeError
        If a value has no canonical JSON form.
    """
    doc = {"method": str(method), "params": _canonical(params or {}),
           "dataset": _canonical(dataset), "seed": _canonical(seed)}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@dataclass(frozen=True)
class Task:
    """One unit of work.

    Attributes
    ----------
    key : str
        Identity used for resuming (see :func:`task_key`).
    fn : callable
        Module-level function ``fn(**kwargs) -> dict`` (must be importable by
        the workers).
    kwargs : Mapping
        Keyword arguments of ``fn``; large arrays are scattered once to a Dask
        cluster.
    meta : Mapping
        JSON-able columns copied into the result row (method, seed, setting).
    """

    key: str
    fn: Callable[..., dict]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)


def make_task(fn, *, method, params, dataset, seed, meta=None, **kwargs):
    """Build a :class:`Task` calling ``fn(method=, params=, dataset=, seed=, **kwargs)``.

    Parameters
    ----------
    fn : callable
        Module-level task function, e.g. :func:`synthetic_task` or
        :func:`data_task`.
    method, params, dataset, seed
        Identify the run; hashed into the key and passed to ``fn``.
    meta : dict, optional
        Extra row columns; ``method`` and ``seed`` are always added.
    **kwargs
        Further arguments of ``fn`` that do not change the result's identity
        (e.g. ``B_true`` when it is implied by the dataset).

    Returns
    -------
    Task
    """
    key = task_key(method, params, dataset, seed)
    row_meta = {"method": method, "seed": seed, **(meta or {})}
    return Task(key=key, fn=fn, kwargs={"method": method, "params": dict(params or {}),
                                        "dataset": dataset, "seed": seed, **kwargs},
                meta=row_meta)


def _execute(fn, kwargs, key, meta):
    """Run one task in a worker; never raises (errors become a row)."""
    t0 = time.perf_counter()
    try:
        out = fn(**kwargs)
        if not isinstance(out, Mapping):
            raise TypeError(f"task function {getattr(fn, '__name__', fn)} returned "
                            f"{type(out).__name__}, expected a dict")
        row = {**meta, _KEY: key, _STATUS: "ok", _ERROR: None, **out}
    except Exception as exc:  # noqa: BLE001 - reported in the row, the sweep goes on
        row = {**meta, _KEY: key, _STATUS: "error", _ERROR: f"{type(exc).__name__}: {exc}"}
    row.setdefault("time_s", time.perf_counter() - t0)
    return row


# --------------------------------------------------------------------------------------------
# incremental store
# --------------------------------------------------------------------------------------------

def _json_default(obj):
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    return str(obj)


class ResultStore:
    """Append-only JSON-lines file of result rows, one per task key.

    Parameters
    ----------
    path : str or Path
        The ``.jsonl`` file (created with its parent directory if missing).

    Notes
    -----
    Each row is written as one line, then flushed and fsync-ed, so a killed
    process loses at most the line being written; a torn last line is
    cut when the next sweep takes the file (readers skip it). One sweep at a time per file:
    :func:`run_sweep` holds :meth:`writing` (an OS file lock on
    ``path + ".lock"``, from the ``filelock`` package) while it runs, and a
    second sweep on the same file fails at once instead of interleaving rows.
    The OS releases the lock when its holder dies, so a killed sweep never
    leaves the file locked.
    """

    def __init__(self, path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def writing(self):
        """Context manager: hold this file's write lock, or fail at once.

        On entering, with the lock held, a torn last line left by a killed
        writer is cut (never while another sweep may be writing that line).

        Returns
        -------
        context manager
            Use it as ``with store.writing(): ...``; it does not wait for the lock.

        Raises
        ------
        RuntimeError
            On entering, if another process (or another sweep in this one) holds
            the lock.
        """
        return _StoreLock(self)

    def _repair(self):
        """Cut a torn (unterminated) last line left by a killed writer."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            with open(self.path, "r+b") as fh:
                fh.truncate(cut)

    def load(self):
        """Return ``{key: row}`` of the finished tasks (first row wins per key).

        Returns
        -------
        dict
        """
        rows = {}
        if not self.path.exists():
            return rows
        with open(self.path, encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(row, dict) and _KEY in row:
                    rows.setdefault(row[_KEY], row)
        return rows

    def append(self, row):
        """Write one row durably.

        Parameters
        ----------
        row : dict
            Must hold ``"key"``; values are JSON-serialised (numpy arrays as
            lists, NaN as ``NaN``).
        """
        line = json.dumps(row, default=_json_default) + "\n"
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())


class _StoreLock:
    """``FileLock(path + ".lock", timeout=0)`` whose Timeout says which sweep file is busy."""

    def __init__(self, store):
        self.store = store
        self._lock = FileLock(str(store.path) + ".lock", timeout=0)

    def __enter__(self):
        try:
            self._lock.acquire()
        except Timeout:
            raise RuntimeError(
                f"Another sweep is writing to {self.store.path} (its lock {self._lock.lock_file} is held). "
                "Wait for it to finish, or give this sweep another results file."
            ) from None
        try:
            self.store._repair()
        except BaseException:
            self._lock.release()
            raise
        return self

    def __exit__(self, *exc):
        self._lock.release()
        return False


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


# --------------------------------------------------------------------------------------------
# task functions
# --------------------------------------------------------------------------------------------

_METRIC_KEYS = ("shd", "tpr", "fdr", "fpr", "nnz", "shd_cpdag", "sid", "shd_norm",
                "shd_cpdag_norm", "sid_norm", "sigma_rel_err")


def _fit_method(method, params, X, return_scores=False, conditions=None, targets=None):
    """Run a registered method; return (W, sigma or None), and the edge scores when asked.

    With ``conditions`` (and ``targets``, node indices), the methods that can use the design fit
    with it; the others run on the rows centred within each condition
    (``run_method(unused_design="centre")``; :func:`colide_core.evaluation.baselines.design_use`
    names which). The scores are the raw weights before thresholding for the CoLiDE family
    (``W_``), else the method's own output (a baseline that thresholds gives its kept weights and
    zeros)."""
    from colide_core.evaluation.baselines import METHODS, run_method

    if method in ("CoLiDE-EV", "CoLiDE-NV"):
        # Same estimator as the registry entry, kept as a model to also report sigma.
        from colide_core.solver._estimator import CoLiDE

        spec = METHODS[method]
        unknown = sorted(set(params) - set(spec.defaults))
        if unknown:
            raise ValueError(f"Unknown parameter(s) for {method}: {', '.join(unknown)}")
        model = CoLiDE(method[-2:].lower(), **{**spec.defaults, **params})
        model.fit(X, conditions=conditions, targets=targets if conditions is not None else None)
        out = np.asarray(model.adjacency_, dtype=float), model.sigma_
        return (*out, np.asarray(model.W_, dtype=float)) if return_scores else out
    W = run_method(method, X, conditions=conditions, targets=targets if conditions is not None else None,
                   unused_design="centre", **params)
    return (W, None, np.asarray(W, dtype=float)) if return_scores else (W, None)


def _design_columns(method, conditions, targets) -> dict:
    """The row columns that record how ``method`` used the design: ``design`` (a key of
    :data:`colide_core.evaluation.baselines.DESIGN_USES`) and ``n_conditions``."""
    from colide_core.evaluation.baselines import design_use

    n_cond = 1 if conditions is None else len(set(np.asarray(conditions, dtype=object).tolist()))
    return {"design": design_use(method, conditions, targets), "n_conditions": int(n_cond)}


def _curve_columns(B_true, scores):
    """``auroc``, ``auprc``, ``roc_tpr``, ``pr_precision`` of one fit (:func:`colide_core.evaluation.curves.curves_on_grid`)."""
    from colide_core.evaluation.curves import curves_on_grid

    return curves_on_grid(B_true, scores)


def synthetic_task(method, params, dataset, seed, curves=False, interventions=None):
    """Simulate a dataset, run one method, score it (one row of a benchmark).

    Parameters
    ----------
    method : str
        A key of :data:`colide_core.evaluation.baselines.METHODS`.
    params : dict
        Method parameter overrides.
    dataset : dict
        Simulation settings for :func:`colide_core.data.simulate.simulate_dataset` (keys of
        :data:`colide_core.data.simulate.DATASET_DEFAULTS`; missing ones take the defaults).
    seed : int
        Dataset seed (the ``random_state`` of ``simulate_dataset``).
    curves : bool, default False
        Also score ``|W|`` (the raw weights before thresholding, for the CoLiDE family) as an
        edge score: ``auroc``, ``auprc`` and the ROC and precision-recall curves on
        :data:`colide_core.evaluation.curves.CURVE_GRID` (``roc_tpr``, ``pr_precision``: 101 floats
        each, :func:`colide_core.evaluation.curves.curves_on_grid`), so that the row stays small and the
        curves of several seeds can be averaged.
    interventions : mapping, optional
        ``simulate_dataset``'s interventional conditions
        (:data:`colide_core.data.simulate.INTERVENTION_DEFAULTS`). The methods that can use the
        design fit with the drawn conditions and targets; the others get the rows centred within
        each condition (:func:`_fit_method`); the row's ``design`` column says which.

    Returns
    -------
    dict
        The complete dataset settings (``graph``, ``degree``, ``n_nodes``, ...; pairs as lists),
        the metrics of :func:`colide_core.evaluate` on the estimated DAG (``sigma_rel_err`` for
        the CoLiDE family, NaN otherwise), ``time_s``, the method's wall time in seconds, and
        the curve columns when ``curves``.

    Raises
    ------
    ValueError
        For invalid settings (:func:`colide_core.data.simulate.check_spec`) or parameters; any error
        of the method itself propagates (:func:`run_sweep` turns it into an error row).
    """
    from colide_core.evaluation._metrics import evaluate
    from colide_core.data.simulate import simulate_dataset

    if isinstance(dataset, Mapping) and "interventions" in dataset:  # a bench task: the design in its identity
        dataset = dict(dataset)
        interventions = dataset.pop("interventions")
    data = simulate_dataset(dataset, seed, interventions=interventions)
    t0 = time.perf_counter()
    W, sigma, *scores = _fit_method(method, params, data.X, return_scores=curves, conditions=data.conditions,
                                    targets=data.targets if data.conditions is not None else None)
    elapsed = time.perf_counter() - t0
    m = evaluate(data.B_true, W, sigma_true=data.noise_std if sigma is not None else None,
                 sigma_est=sigma)
    row = {k: list(v) if isinstance(v, tuple) else v for k, v in data.spec.items()}
    row.update({k: m.get(k, math.nan) for k in _METRIC_KEYS})
    row["time_s"] = elapsed
    if interventions is not None:
        row["interventions"] = dict(interventions)
    row.update(_design_columns(method, data.conditions, data.targets))
    if curves:
        row.update(_curve_columns(data.B_true, scores[0]))
    return row


def data_task(method, params, dataset, seed, bootstrap=False, B_true=None, return_W=True, curves=False,
              conditions=None, targets=None):
    """Run one method on given data (the app's Compare and bootstrap runs).

    Parameters
    ----------
    method : str
        A key of :data:`colide_core.evaluation.baselines.METHODS`.
    params : dict
        Method parameter overrides.
    dataset : numpy.ndarray or pandas.DataFrame, shape (n_samples, n_nodes)
        The data.
    seed : int or None
        With ``bootstrap=True``, seeds the resampling of rows (with
        replacement, ``numpy.random.default_rng(seed)``); otherwise unused.
    bootstrap : bool, default False
        Resample the rows before fitting.
    B_true : array-like (n_nodes, n_nodes), optional
        Ground truth; adds the metrics of :func:`colide_core.evaluate`.
    return_W : bool, default True
        Include the estimated DAG ``W`` (nested lists, ``W[i][j] != 0`` means
        i -> j) in the row.
    curves : bool, default False
        With ``B_true``: also the edge-score curve columns of :func:`synthetic_task`
        (``auroc``, ``auprc``, ``roc_tpr``, ``pr_precision``).
    conditions : array-like of shape (n_samples,), optional
        Each row's condition (the experimental design). The CoLiDE family and GIES fit with it
        (and ``targets``); the other methods get the rows centred within each condition
        (:func:`_fit_method`). With ``bootstrap``, rows are resampled within their condition.
    targets : mapping, optional
        ``{label: [node index, ...]}``: what each condition intervenes on. Needs ``conditions``.

    Returns
    -------
    dict
        ``W`` (if asked), ``nnz``, ``time_s``, ``design`` and ``n_conditions`` (how the method
        used the design, :func:`colide_core.evaluation.baselines.design_use`), and the metrics
        when ``B_true`` is given (and the curve columns when ``curves``).
    """
    X = dataset.to_numpy(dtype=float) if isinstance(dataset, pd.DataFrame) else np.asarray(dataset, float)
    if conditions is not None:
        conditions = np.asarray(conditions, dtype=object)
        if conditions.shape != (X.shape[0],):
            raise ValueError(f"conditions has shape {conditions.shape}; the data have {X.shape[0]} rows.")
    elif targets is not None:
        raise ValueError("targets need conditions: give the condition of each row.")
    if bootstrap:
        rng = np.random.default_rng(seed)
        if conditions is None:
            rows = rng.integers(0, X.shape[0], size=X.shape[0])
        else:  # within each condition, so every condition keeps its size
            rows = np.concatenate([rng.choice(idx, size=idx.size, replace=True)
                                   for idx in (np.flatnonzero(conditions == lab)
                                               for lab in dict.fromkeys(conditions.tolist()))])
            conditions = conditions[rows]
        X = X[rows]
    t0 = time.perf_counter()
    curves = bool(curves and B_true is not None)
    W, _, *scores = _fit_method(method, params, X, return_scores=curves, conditions=conditions, targets=targets)
    row = {"time_s": time.perf_counter() - t0, "nnz": int(np.count_nonzero(W)),
           **_design_columns(method, conditions, targets)}
    if B_true is not None:
        from colide_core.evaluation._metrics import evaluate

        row.update(evaluate(B_true, W))
    if curves:
        row.update(_curve_columns(B_true, scores[0]))
    if return_W:
        row["W"] = W.tolist()
    return row


# --------------------------------------------------------------------------------------------
# the record of a comparison
# --------------------------------------------------------------------------------------------

#: The schema of :func:`comparison_manifest`.
COMPARISON_SCHEMA = "colide-comparison/1"


def comparison_manifest(rows, *, data, methods, seeds, conditions=None, targets=None, node_names=None):
    """The manifest of a comparison (the Compare page, ``colide bench`` on given data): what ran on
    which data, with which design.

    Parameters
    ----------
    rows : pandas.DataFrame or list of dict
        Per-run rows (``method``, ``seed``, ``error``, ``design``, metrics).
    data : dict
        How the data were made: for given data at least ``{"name", "sha256", "n_samples",
        "n_nodes"}``; for simulations the settings.
    methods : mapping
        ``{method: {parameter: value}}`` as run.
    seeds : sequence of int
    conditions : array-like of shape (n_samples,), optional
        The rows' condition labels (given data with a design).
    targets : mapping, optional
        ``{label: [node index, ...]}``.
    node_names : sequence of str, optional
        To write the targets by name.

    Returns
    -------
    dict
        Plain JSON: ``schema`` (:data:`COMPARISON_SCHEMA`), ``data``, ``design``
        (:func:`colide_core.run.manifest.conditions_record` or
        None), ``methods`` (parameters and ``design``, how each used the conditions: a key of
        :data:`colide_core.evaluation.baselines.DESIGN_USES`), ``seeds``, ``runs`` (one dict a row,
        curves left out) and ``environment``
        (:func:`colide_core.run.manifest.environment_info`).
    """
    from colide_core.evaluation.baselines import design_use
    from colide_core.run.manifest import _jsonable, conditions_record, environment_info

    frame = pd.DataFrame(rows)
    design = None
    if conditions is not None:
        from colide_core.data.conditions import check_conditions

        labels, codes = check_conditions(conditions, len(conditions))
        counts = np.bincount(codes, minlength=len(labels))
        design = conditions_record(labels, counts, {k: v for k, v in (targets or {}).items()},
                                   node_names, conditions=conditions)
    keep = [c for c in frame.columns if c not in ("roc_tpr", "pr_precision")]
    return _jsonable({
        "schema": COMPARISON_SCHEMA,
        "data": dict(data),
        "design": design,
        "methods": {m: {"params": dict(p), "design": design_use(m, conditions, targets)} for m, p in methods.items()},
        "seeds": [int(s) for s in seeds],
        "runs": frame[keep].to_dict(orient="records"),
        "environment": environment_info(),
    })
