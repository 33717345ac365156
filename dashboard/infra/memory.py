"""The server-wide memory budget of the sessions' datasets (issue 53, high 4).

A session keeps its dataset (a simulation, an upload, a loaded network) in its own state, and
Streamlit keeps a closed tab's state for reconnection, so closed tabs' datasets piled up until
new simulations ended in an uncaught ``MemoryError`` (measured in ``docs/security.md``, "Shared
server"). Nothing bounded the sum. Here:

* :func:`record` notes the current session's dataset (and the raw copy a transform keeps) each time
  :func:`dashboard.infra.state.set_dataset` makes one current: its bytes, a weak reference to it, its
  session;
* :func:`refusal` is asked **before** a simulation (the Simulate page's, a link's) or an upload is kept: the bytes held by the
  other sessions plus the new dataset must stay within :data:`BUDGET_BYTES`, else it returns the
  sentence the page shows (nothing is kept). Before it counts, it drops the datasets of sessions
  whose tab has been closed for :data:`CLOSED_GRACE_S` seconds (their state's dataset key is
  deleted: a tab that comes back later finds the Sachs data, as a new tab would), so closed tabs
  never crowd out open ones for longer than that;
* :func:`working_memory` counts a job's worker process's copy of its arguments while it runs
  (:func:`dashboard.infra.workers.in_worker`); when it does not fit the job computes in its thread;
* :func:`reserve_job` bounds a job's own memory **before it starts** (a job made with ``memory=``,
  :class:`dashboard.infra.jobs.Job`): its peak while it runs (:func:`bootstrap_memory`: a
  bootstrap keeps ``n_boot x d x d`` float64 weights, 305 MB at d = 200 and 1,000 resamples, and
  holds about 2.2 times that while it summarises them; :func:`ranking_memory`: Predict's ranking
  of the experiments, the same bootstrap and then each candidate's d x d counts, whichever is
  larger; :func:`intervals_memory`: Predict's intervals; :func:`checks_memory` and
  :func:`path_memory`: the Check page's jobs) is checked and reserved at once, or the job is refused with a sentence naming both sizes and the most resamples that fit; once it ends,
  its result's bytes count instead for as long as the session keeps it (released when it is
  replaced or dropped, and dropped with a tab closed for :data:`CLOSED_GRACE_S`);
* :func:`memory_error_message` is the sentence for a ``MemoryError`` (no traceback, no path).

The budget is ``$COLIDE_DATASET_BUDGET_MB`` megabytes, default a quarter of the machine's memory
and at most 2,048 MB (``docs/security.md``, "Shared server").
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import time
import typing
import weakref

import numpy as np

from dashboard.infra.job_sizes import (  # noqa: F401 - re-exported: the jobs' sizes, reserved here
    JobMemory, bootstrap_memory, ranking_memory, stability_memory, intervals_memory, _n_tests, checks_memory, path_memory, BOOTSTRAP_WORKING_FACTOR, BOOTSTRAP_PER_RESAMPLE, RANKING_WORKING_FACTOR, RANKING_PER_CANDIDATE, STABILITY_WORKING_FACTOR, INTERVALS_DATA_COPIES, INTERVALS_REFIT_COPIES, INTERVALS_GRAPH_ARRAYS, INTERVALS_PER_RESAMPLE, CHECKS_DATA_COPIES, CHECKS_BYTES_PER_TEST, CHECKS_BYTES_PER_RANDOM_TEST, PATH_DATA_COPIES,
)

__all__ = ["BUDGET_BYTES", "CLOSED_GRACE_S", "SIMULATION_WORKING_FACTOR", "dataset_nbytes", "estimate_nbytes",
           "fmt_mb", "Room", "record", "BOOTSTRAP_WORKING_FACTOR", "BOOTSTRAP_PER_RESAMPLE", "STABILITY_WORKING_FACTOR",
           "RANKING_WORKING_FACTOR", "RANKING_PER_CANDIDATE", "INTERVALS_DATA_COPIES", "INTERVALS_REFIT_COPIES",
           "INTERVALS_GRAPH_ARRAYS", "INTERVALS_PER_RESAMPLE", "intervals_memory", "CHECKS_DATA_COPIES",
           "CHECKS_BYTES_PER_TEST", "CHECKS_BYTES_PER_RANDOM_TEST", "PATH_DATA_COPIES", "checks_memory",
           "path_memory", "JobMemory",
           "JobHold", "bootstrap_memory", "ranking_memory", "stability_memory", "result_nbytes", "reserve_job", "job_refusal_text", "held_bytes", "refusal", "simulation_refusal", "working_memory", "memory_error_message"]

_MB = 1024 * 1024


def _budget() -> int:
    raw = os.environ.get("COLIDE_DATASET_BUDGET_MB", "").strip()
    try:
        if raw:
            value = float(raw)
            if value == value and value > 0:
                return int(value * _MB)
    except ValueError:
        pass
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        total = 8 * 1024 * _MB
    return int(min(2048 * _MB, total // 4))


#: Bytes all sessions' datasets may hold together (``$COLIDE_DATASET_BUDGET_MB``).
BUDGET_BYTES = _budget()
#: Seconds after its tab closed that a session's dataset still counts (and is kept for a reconnect).
CLOSED_GRACE_S = 60.0

#: Seconds an admitted dataset's reservation counts before the session records it (a simulation
#: or an upload being built); then it lapses (a build that failed never records).
RESERVATION_TTL_S = 300.0
#: Seconds between two passes of the background pruner (:func:`_start_pruner`): a closed tab's
#: grace starts within this of its closing, on an idle server too.
PRUNE_EVERY_S = CLOSED_GRACE_S / 4

_LOCK = threading.Lock()
#: session id -> {"refs": [weakref to each dataset held], "nbytes": int, "gone_since": float or None,
#: "keys": the session-state keys holding them}
_HELD: dict = {}
#: session id -> (bytes reserved by an admitted dataset not yet recorded, monotonic time admitted)
_RESERVED: dict = {}
#: token -> bytes a job's worker process holds while it runs (:func:`working_memory`)
_WORKING: dict = {}
#: token -> a job's memory (:func:`reserve_job`): {"nbytes": its peak while it runs, then its kept
#: result's bytes; "ref": None while it runs, then a weak reference to the result; "sid"; "keys":
#: the session-state keys that keep the result; "gone_since"; "state"}
_RESULTS: dict = {}
_PRUNER: list = []  # the background pruner's thread, once started


def _array_bytes(value) -> int:
    if value is None:
        return 0
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if hasattr(value, "memory_usage"):  # a DataFrame
        try:
            return int(value.memory_usage(index=True, deep=False).sum())
        except Exception:  # pragma: no cover - an exotic frame
            return 0
    return 0


def dataset_nbytes(dataset) -> int:
    """Bytes of a :class:`dashboard.data.Dataset`'s arrays: ``X``, the truths and the arrays in ``meta``.

    Parameters
    ----------
    dataset : dashboard.data.Dataset or None

    Returns
    -------
    int
    """
    if dataset is None:
        return 0
    total = _array_bytes(getattr(dataset, "X", None))
    for name in ("B_true", "sigma_true"):
        total += _array_bytes(getattr(dataset, name, None))
    for value in (getattr(dataset, "meta", None) or {}).values():
        total += _array_bytes(value)
    return total


def estimate_nbytes(n_rows: int, n_cols: int) -> int:
    """Bytes a float64 table of ``n_rows`` x ``n_cols`` takes, plus the d x d truths.

    Parameters
    ----------
    n_rows, n_cols : int

    Returns
    -------
    int
    """
    return 8 * int(n_rows) * int(n_cols) + 2 * 8 * int(n_cols) ** 2


#: Peak bytes of a simulation while it is drawn, as a multiple of :func:`estimate_nbytes` of its
#: result: the noise drawn in place, the conditions' blocks, the Dataset's one copy of ``X``
#: (measured by ``tests/test_memory_peak.py`` with tracemalloc: 2.2x at d = 200, n = 25,000 + one
#: condition; 4.2x before the copies were removed). Round 5's closed-tabs run admitted four
#: 382 MB simulations at once and peaked at 4,875 MB of RSS against a 2,048 MB budget.
SIMULATION_WORKING_FACTOR = 2.5


def _session_id():
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx(suppress_warning=True)
    except Exception:  # pragma: no cover
        return None
    return None if ctx is None else ctx.session_id


def record(*datasets, keys=(), session_id=None) -> None:
    """Note the datasets the current session now holds (replacing what it held before).

    Parameters
    ----------
    *datasets : dashboard.data.Dataset or None
        Every dataset its state keeps (the current one, a transform's raw copy).
    keys : sequence of str, default ()
        The session-state keys holding them: deleted from a session closed for
        :data:`CLOSED_GRACE_S` (``dashboard.infra.state`` passes its own; this module imports none).
    session_id : str, optional
        Default the session of the current script run; nothing is noted outside one.
    """
    sid = session_id or _session_id()
    if sid is None:
        return
    held = [d for d in datasets if d is not None]
    refs = []
    for d in held:
        try:
            refs.append(weakref.ref(d))
        except TypeError:  # pragma: no cover - a dataset without weak references
            pass
    with _LOCK:
        _HELD[sid] = {"refs": refs, "nbytes": sum(dataset_nbytes(d) for d in held), "gone_since": None,
                      "keys": tuple(keys)}
        _RESERVED.pop(sid, None)  # the admitted dataset is built: it now counts as held
    if _server_running():
        _start_pruner()


def _server_running() -> bool:
    """True inside a ``streamlit run`` server (not in AppTest or a script): the pruner's place."""
    try:
        from streamlit.runtime import Runtime

        return bool(Runtime.exists())
    except Exception:  # pragma: no cover
        return False


def _start_pruner() -> None:
    """Start, once per process, the daemon thread that prunes every :data:`PRUNE_EVERY_S` seconds.

    Without it a closed tab's grace started only at the next simulation or upload, so an idle
    server kept every closed tab's data (issue 53, round 5's load test)."""
    with _LOCK:
        if _PRUNER and _PRUNER[0].is_alive():
            return

        def loop():
            while True:
                time.sleep(PRUNE_EVERY_S)
                try:
                    _prune()
                except Exception:  # pragma: no cover - never let the pruner die on a bad entry
                    pass

        thread = threading.Thread(target=loop, name="colide-memory-pruner", daemon=True)
        _PRUNER[:] = [thread]
        thread.start()


def _session_states():
    """``{session id: (active, SessionState)}`` of the server's sessions; {} without a server."""
    try:
        from streamlit.runtime import Runtime

        if not Runtime.exists():
            return {}
        runtime = Runtime.instance()
        out = {}
        for info in runtime._session_mgr.list_sessions():  # no public API lists another session's state
            sid = info.session.id
            out[sid] = (runtime.is_active_session(sid), info.session.session_state)
        return out
    except Exception:  # an API change: count what is recorded, drop nothing
        return None


def _prune(now=None) -> None:
    """Forget datasets no longer referenced; drop those of sessions closed for the grace period."""
    now = time.monotonic() if now is None else now
    sessions = _session_states()
    dropped = False
    with _LOCK:
        for sid in [sid for sid, (_, since) in _RESERVED.items() if now - since >= RESERVATION_TTL_S]:
            del _RESERVED[sid]  # a build that never recorded (failed, or its tab closed)
        for sid in list(_HELD):
            entry = _HELD[sid]
            entry["refs"] = [r for r in entry["refs"] if r() is not None]
            if not entry["refs"]:
                del _HELD[sid]
                continue
            entry["nbytes"] = sum(dataset_nbytes(r()) for r in entry["refs"])
            if _closed_and_dropped(entry, sid, sessions, now, entry.get("keys", ())):
                del _HELD[sid]
                dropped = True
        dropped = _prune_results(sessions, now) or dropped
    if dropped:
        _release_memory()


def _prune_results(sessions, now) -> bool:
    """:func:`_prune`'s pass over the job results (:data:`_RESULTS`); call with ``_LOCK`` held.

    A kept result no longer referenced anywhere is forgotten (replaced or dropped); one whose
    session's tab has been closed for :data:`CLOSED_GRACE_S` has its state keys deleted and is
    forgotten. A reservation of a job still running is kept whatever its session (the job ends
    with its session, and its end turns the reservation into its result's bytes or releases it).
    Returns whether a closed session's result was dropped.
    """
    dropped = False
    for token in list(_RESULTS):
        entry = _RESULTS[token]
        ref = entry["ref"]
        if ref is None:  # the job is still running: its peak stays reserved
            continue
        if ref() is None:
            del _RESULTS[token]
            continue
        if entry["sid"] is not None and _closed_and_dropped(entry, entry["sid"], sessions, now, entry["keys"]):
            del _RESULTS[token]
            dropped = True
    return dropped


def _closed_and_dropped(entry, sid, sessions, now, keys) -> bool:
    """Whether session ``sid``'s tab has been closed for :data:`CLOSED_GRACE_S`; if so, ``keys`` of its
    state are deleted (the caller forgets ``entry``). Call with ``_LOCK`` held.

    ``entry`` remembers the session's state (Streamlit's storage stops listing a session it has
    expired, yet keeps it, lazily expired, in memory) and since when its tab is gone. Without a
    listing of the sessions (``sessions`` None or empty) nothing is dropped.
    """
    if not sessions:
        return False
    active, session_state = sessions.get(sid, (False, None))
    if session_state is not None:
        entry["state"] = session_state
    if active:
        entry["gone_since"] = None
        return False
    if entry.get("gone_since") is None:
        entry["gone_since"] = now
    if now - entry["gone_since"] < CLOSED_GRACE_S:
        return False
    target = session_state if session_state is not None else entry.get("state")
    if target is not None:
        for key in keys:
            try:
                del target[key]
            except Exception:  # already gone
                pass
    return True


def _release_memory() -> None:
    """A full collection after a pass that dropped datasets: the server runs with Streamlit's
    ``postScriptGC = false``, so a dataset held only by a reference cycle of a dropped session would
    otherwise wait for the next generation-2 collection. (glibc's ``malloc_trim(0)`` here as well made
    no measurable difference: 6 closed tabs of 153 MB left 524 MB without it and 518 MB with it.)"""
    import gc

    gc.collect()


def held_bytes(exclude=None) -> int:
    """Bytes the recorded sessions' datasets hold now (after :func:`_prune`), with the bytes reserved
    by admitted datasets not yet recorded (:func:`refusal`), less ``exclude``'s, and by the job
    workers' copies (:func:`working_memory`).

    Parameters
    ----------
    exclude : str, optional
        A session id left out (the session about to replace its own dataset).

    Returns
    -------
    int
    """
    _prune()
    with _LOCK:
        return _counted(exclude)


def _counted(exclude=None) -> int:
    """Held plus reserved bytes of every session but ``exclude``, plus the workers' copies and the
    jobs' reservations and kept results (never excluded: they stay while the session replaces its
    dataset); call with ``_LOCK`` held."""
    return (sum(e["nbytes"] for sid, e in _HELD.items() if sid != exclude)
            + sum(n for sid, (n, _) in _RESERVED.items() if sid != exclude)
            + sum(_WORKING.values())
            + sum(e["nbytes"] for e in _RESULTS.values() if e["ref"] is None or e["ref"]() is not None))


def fmt_mb(nbytes) -> str:
    """Megabytes (MiB) for a sentence: one decimal below 10, none above (``"8.0"``, ``"1,024"``).

    Parameters
    ----------
    nbytes : int
        Bytes.

    Returns
    -------
    str
        The number without its unit.
    """
    mb = nbytes / _MB
    return f"{mb:,.1f}" if mb < 10 else f"{mb:,.0f}"


_mb = fmt_mb


def refusal(nbytes: int, what: str = "This dataset", budget: int | None = None, *,
            session_id=None, working: int | None = None) -> str | None:
    """The sentence refusing a new dataset of ``nbytes`` for this session, or None when it fits.

    Parameters
    ----------
    nbytes : int
        The new dataset's bytes (:func:`estimate_nbytes` before it is made, :func:`dataset_nbytes`
        after).
    what : str, default "This dataset"
        How the sentence names it ("This simulation").
    budget : int, optional
        Default :data:`BUDGET_BYTES`.
    session_id : str, optional
        Default the session of the current script run.
    working : int, optional
        Bytes the dataset needs while it is built, when more than ``nbytes`` (a simulation:
        :data:`SIMULATION_WORKING_FACTOR` times its size). They are what is checked and reserved;
        :func:`record` then replaces the reservation with the kept dataset's bytes.

    Returns
    -------
    str or None
        Markdown without user text: the sizes in MB and what to do. The session's own current
        dataset is not counted: the new one replaces it. When it fits (None), the bytes are
        reserved for the session until it records the dataset (:func:`record`) or
        :data:`RESERVATION_TTL_S` passes: tabs asking at the same time are counted against each
        other (issue 53, round 5's load test admitted a group of four tabs past the budget).
    """
    budget = BUDGET_BYTES if budget is None else int(budget)
    sid = _session_id() if session_id is None else session_id
    _prune()
    need = max(int(nbytes), int(working or 0))
    with _LOCK:  # the check and the reservation at once: tabs asking together cannot all pass
        others = _counted(exclude=sid)
        if others + need <= budget:
            if sid is not None:
                _RESERVED[sid] = (need, time.monotonic())  # counted until the session records it
            return None
    room = max(0, budget - others)
    size = f"{_mb(nbytes)} MB" + (f" ({_mb(need)} MB while it is built)" if need > int(nbytes) else "")
    return (f"{what} would take {size}, and the datasets of everyone using this "
            f"server (and their jobs' results) already hold {_mb(others)} MB of its {_mb(budget)} MB budget "
            f"({_mb(room)} MB free). Nothing was loaded: choose fewer rows or nodes, or try "
            f"again in a minute (closed tabs give their data back after {CLOSED_GRACE_S:.0f} s).")


def simulation_refusal(n_rows: int, n_nodes: int, what: str = "This simulation", budget: int | None = None, *,
                       session_id=None) -> str | None:
    """:func:`refusal` for a simulation of ``n_rows`` x ``n_nodes`` before it is drawn.

    The one place where a simulation's size (:func:`estimate_nbytes`) and its working memory
    (:data:`SIMULATION_WORKING_FACTOR` times that) are reckoned: the Simulate page and a link's
    simulation both ask here.

    Parameters
    ----------
    n_rows : int
        Rows of the whole table (every condition's rows).
    n_nodes : int
    what : str, default "This simulation"
        How the sentence names it.
    budget, session_id : optional
        As :func:`refusal`'s.

    Returns
    -------
    str or None
        :func:`refusal`'s sentence, or None when it fits (the working bytes are then reserved).
    """
    size = estimate_nbytes(n_rows, n_nodes)
    return refusal(size, what, budget, session_id=session_id, working=int(SIMULATION_WORKING_FACTOR * size))


class Room(typing.NamedTuple):
    """What :func:`working_memory` found: whether ``need`` bytes fit, and the room there was.

    True in a boolean context exactly when they fit (``with working_memory(n) as fits: if fits:``).
    """

    fits: bool  #: whether ``need`` was within the room (then it is reserved)
    need: int  #: bytes asked for
    free: int  #: bytes of the budget not counted before the request (0 when it is over)
    budget: int  #: the budget the request was checked against

    def __bool__(self) -> bool:
        return bool(self.fits)


@contextlib.contextmanager
def working_memory(nbytes: int, budget: int | None = None):
    """Count ``nbytes`` against the budget while the ``with`` block runs, when they fit.

    A job's worker process holds its own copy of the arrays it was sent (issue 53:
    :func:`dashboard.infra.workers.in_worker`): those bytes count with the sessions' datasets until
    the worker has ended, whatever the end (its result, an error, Stop, a kill).

    Parameters
    ----------
    nbytes : int
        Bytes the block will hold.
    budget : int, optional
        Default :data:`BUDGET_BYTES`.

    Yields
    ------
    Room
        True (in a boolean context) when everything counted now plus ``nbytes`` is within the
        budget: they are reserved until the block ends. False: nothing is reserved, and the caller
        does without the copy (the worker's job runs in its thread, on the server's own arrays)
        and may say so with the sizes (``room.need``, ``room.free``: the bytes asked for and the
        budget's room when they were asked for, in one look under the lock).
    """
    budget = BUDGET_BYTES if budget is None else int(budget)
    _prune()
    token = object()
    with _LOCK:  # the check and the reservation at once
        counted = _counted()
        room = Room(counted + int(nbytes) <= budget, int(nbytes), max(0, budget - counted), budget)
        if room.fits:
            _WORKING[token] = int(nbytes)
    try:
        yield room
    finally:
        with _LOCK:
            _WORKING.pop(token, None)


def result_nbytes(result) -> int:
    """Bytes of the numpy arrays a job's result holds: its own, or its attributes' and items' (one level).

    Parameters
    ----------
    result : object
        A dataclass (``BootstrapResult``), a DataFrame (its columns' and index's bytes, shallow),
        a mapping, a sequence or an array.

    Returns
    -------
    int
        The arrays' ``nbytes`` (a view's base is not counted twice within one result only when
        the same array object repeats).
    """
    if result is None:
        return 0
    if isinstance(result, np.ndarray):
        return int(result.nbytes)
    if hasattr(result, "memory_usage"):  # a DataFrame (Predict's ranking): its columns' own bytes
        return _array_bytes(result)
    if isinstance(result, dict):
        values = list(result.values())
    elif isinstance(result, (list, tuple)):
        values = list(result)
    else:
        values = list(getattr(result, "__dict__", {}).values())
    seen, total = set(), 0
    for value in values:
        if isinstance(value, np.ndarray) and id(value) not in seen:
            seen.add(id(value))
            total += int(value.nbytes)
        elif hasattr(value, "memory_usage"):  # a DataFrame
            total += _array_bytes(value)
    return total


class JobHold:
    """A job's reservation in the budget (:func:`reserve_job`): its peak while it runs, then its result.

    :meth:`keep` (the job has ended) replaces the peak by the bytes of the result it returned,
    counted for as long as the result lives (a weak reference: replaced in the session, or dropped
    with a closed tab, it no longer counts); :meth:`release` gives everything back.
    """

    def __init__(self, token):
        self._token = token

    @property
    def nbytes(self) -> int:
        """Bytes counted for it now (0 once released or its result is gone)."""
        with _LOCK:
            entry = _RESULTS.get(self._token)
            if entry is None or (entry["ref"] is not None and entry["ref"]() is None):
                return 0
            return int(entry["nbytes"])

    def keep(self, result) -> None:
        """The job ended with ``result``: count its bytes while it lives (None: release).

        Parameters
        ----------
        result : object or None
            The job's result (a partial one after Stop counts its own bytes). An object that
            cannot be weakly referenced is not counted (its bytes are released).
        """
        try:
            ref = None if result is None else weakref.ref(result)
        except TypeError:
            ref = None
        with _LOCK:
            entry = _RESULTS.get(self._token)
            if entry is None:
                return
            if ref is None:
                del _RESULTS[self._token]
                return
            entry["ref"], entry["nbytes"] = ref, result_nbytes(result)

    def release(self) -> None:
        """Count nothing more for it (a job that never started)."""
        with _LOCK:
            _RESULTS.pop(self._token, None)


def _own_size(nbytes) -> str:
    """``"12 MB"``, or ``"under 0.1 MB"`` for a size that would read 0.0."""
    size = fmt_mb(nbytes)
    return "under 0.1 MB" if size == "0.0" else f"{size} MB"


def _most_units(need: JobMemory, room: int) -> int:
    """The most units of ``need`` whose every phase fits in ``room`` bytes (0: not even one)."""
    phases = need.phases or ((need.per_unit, max(0, need.peak - need.per_unit * need.units)),)
    most = None
    for per, fixed in phases:
        if fixed > room:
            return 0
        if per > 0:
            fit = (room - fixed) // per
            most = fit if most is None else min(most, fit)
    return int(need.units if most is None else most)


def job_refusal_text(need: JobMemory, others: int, budget: int, own: int = 0) -> str:
    """The sentence refusing a job whose ``need`` does not fit (markdown, no user text).

    Parameters
    ----------
    need : JobMemory
    others : int
        Bytes counted when it asked (every session's datasets, reservations and kept results).
    budget : int
    own : int, default 0
        Bytes of ``others`` that are this tab's previous result of the same job (kept under one
        of ``need.keys``): counted until a new result replaces it, so the sentence says so.

    Returns
    -------
    str
        Both sizes (kept and while it runs), what is held and free, and the most units that fit.
    """
    room = max(0, budget - others)
    advice = "try again once others' jobs or tabs have given their memory back"
    if need.per_unit > 0 and need.units > 0:
        most = _most_units(need, room)
        if most >= 2:
            advice = f"ask for at most {most:,} {need.unit_word}, or " + advice
    return (f"{need.what} would keep {fmt_mb(need.keep)} MB ({need.detail}) and take {fmt_mb(need.peak)} MB "
            f"while it runs, and the datasets and job results of everyone using this server already hold "
            f"{fmt_mb(others)} MB of its {fmt_mb(budget)} MB memory budget ({fmt_mb(room)} MB free"
            + (f"; {_own_size(own)} of what is held is this tab's previous result, kept until a new one "
               f"replaces it" if own > 0 else "")
            + f"). Nothing was started: {advice} (closed tabs give theirs back after {CLOSED_GRACE_S:.0f} s).")


def reserve_job(need: JobMemory, budget: int | None = None, *, session_id=None):
    """Reserve a job's peak memory before it starts, or say why not (bound before spending).

    Parameters
    ----------
    need : JobMemory
        What the job will cost (:func:`bootstrap_memory`, :func:`stability_memory`).
    budget : int, optional
        Default :data:`BUDGET_BYTES`.
    session_id : str, optional
        Default the session of the current script run (the result's tab: its keys are dropped
        with it).

    Returns
    -------
    (JobHold, None) or (None, str)
        The reservation (``need.peak`` counted until :meth:`JobHold.keep` turns it into the
        result's bytes), or the sentence (:func:`job_refusal_text`) when everything counted now
        plus ``need.peak`` is above the budget: nothing is reserved.
    """
    budget = BUDGET_BYTES if budget is None else int(budget)
    sid = _session_id() if session_id is None else session_id
    _prune()
    token = object()
    with _LOCK:  # the check and the reservation at once: jobs asking together cannot all pass
        others = _counted()
        if others + int(need.peak) > budget:
            own = sum(e["nbytes"] for e in _RESULTS.values()  # this tab's previous result of this job
                      if e["sid"] == sid and e["ref"] is not None and e["ref"]() is not None
                      and set(e["keys"]) & set(need.keys))
            return None, job_refusal_text(need, others, budget, own)
        _RESULTS[token] = {"nbytes": int(need.peak), "ref": None, "sid": sid, "keys": tuple(need.keys),
                           "gone_since": None}
    if _server_running():
        _start_pruner()
    return JobHold(token), None


def memory_error_message(what: str = "This dataset") -> str:
    """The sentence for a ``MemoryError`` (never a traceback or a server path).

    Parameters
    ----------
    what : str, default "This dataset"

    Returns
    -------
    str
    """
    return (f"{what} did not fit in the server's memory, so nothing was loaded. Choose fewer "
            f"rows or nodes, or try again later.")
