"""Sweep tasks and their keys: what :func:`colide_core.run.executor.run_sweep` runs and resumes by.

A :class:`Task` calls a module-level function (so it pickles by reference) with its keyword
arguments; :func:`task_key` is a SHA-256 of (method, params, dataset, seed) over their canonical JSON
(:func:`colide_core.hashing.json_digest`), so a killed sweep started again recomputes only what is
missing; :func:`_execute` runs one task and turns an exception into a row with ``status="error"``
(the same on every backend).
:mod:`colide_core.run.executor` re-exports these names (their public import path).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from colide_core.hashing import json_digest

__all__ = ["Task", "task_key", "make_task", "TIMING_COLUMNS"]

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
    # compact separators: the bytes the keys stored in a sweep's results.jsonl were made with
    return json_digest(doc, compact=True)


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
