"""The sweep's result store: one JSON line per finished task, appended, flushed and fsync-ed.

:class:`ResultStore` keeps a sweep's rows on disk as they finish (a killed sweep loses no finished
row) and is read back to resume it; a file lock (``filelock``) keeps two sweeps from writing the
same file. :mod:`colide_core.run.executor` re-exports it (its public import path).
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
from filelock import FileLock, Timeout

from colide_core.run.tasks import _KEY

__all__ = ["ResultStore"]


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
