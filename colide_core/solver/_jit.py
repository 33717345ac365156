"""The project's numba decorator: ``numba.njit(cache=True, nogil=True)`` with a process-safe disk cache.

numba's disk cache is not safe when several processes compile the same function at once
(numba issues #4807 and #10128, ctapipe #2837). ``IndexDataCacheFile.save`` in
``numba/core/caching.py`` loads the function's index (a dict from overload key to data file
name such as ``_solve_nodes_py-123.py311.1.nbc``), picks the first free number, writes the index,
then writes the data file. Two processes saving different overloads (two signatures, writable and
read-only arrays, or an older and a newer source) can both pick ``.1.nbc``: the index then maps one
key to the other key's machine code, and the next process that loads that key runs the wrong code
(a segfault at best). A reader can also see the new index before the data file it names is
written, and load a stale ``.nbc`` left by an older source under the same number.

:func:`njit` compiles exactly as numba's ``njit(cache=True, nogil=True, **options)`` (same cache
directory, same file names, same keys, so existing caches stay valid), but installs
:class:`LockedFunctionCache` where ``Dispatcher.enable_caching`` would install numba's
``FunctionCache``: its ``save_overload`` (the index read-modify-write and the data write) and its
``load_overload`` (index and data read) run under an inter-process :class:`filelock.FileLock` on
``<function's cache file base>.lock`` in the function's cache directory (wherever numba's locator
put it: next to the source, ``NUMBA_CACHE_DIR``, or the user-wide fallback). Compilation itself
runs outside the lock. A lock that cannot be had within :data:`LOCK_TIMEOUT_S` (or cannot be made
at all) means "no cache for this call": the overload is compiled and not saved, never a hang and
never an exception. The finding is in docs/fast-solver.md ("numba's disk cache and concurrent
processes").

Without numba, :func:`njit` returns the identity decorator, so the kernels run as plain Python.
"""
from __future__ import annotations

import contextlib
import os

from filelock import FileLock

try:  # numba is optional: without it the kernels run as plain Python
    import numba as _numba
    from numba.core.caching import FunctionCache as _FunctionCache
    from numba.core.dispatcher import Dispatcher as _Dispatcher
except ImportError:  # pragma: no cover - exercised only where numba is absent
    _numba = None
    _FunctionCache = object
    _Dispatcher = None

__all__ = ["LOCK_TIMEOUT_S", "LockedFunctionCache", "njit"]

#: Seconds a process waits for another one's save or load of the same function's cache. A save
#: or load holds the lock for milliseconds (a pickle and two small files; compilation runs outside
#: it), so 60 s means a holder that is stuck or gone on a filesystem that keeps the lock (some
#: network filesystems): compiling without the cache is then cheaper than waiting longer.
LOCK_TIMEOUT_S = 60.0


class LockedFunctionCache(_FunctionCache):
    """numba's ``FunctionCache`` whose disk reads and writes hold an inter-process file lock.

    Parameters
    ----------
    py_func : function
        The Python function the dispatcher compiles (``Dispatcher.py_func``).

    Attributes
    ----------
    lock_path : str
        ``<cache directory>/<function's file name base>.lock``: one lock per function, next to its
        ``.nbi`` index and ``.nbc`` data files.
    lock_failures : int
        How many loads and saves of this process ran without the cache because the lock was not
        had within :data:`LOCK_TIMEOUT_S` or could not be made.

    Notes
    -----
    A fresh :class:`filelock.FileLock` is made for every load and save, so a cache created before
    a fork (the dashboard's forkserver preloads the kernels) never uses a lock inherited across it.
    Source: numba 0.68.1 ``numba/core/caching.py`` (``Cache.load_overload``,
    ``Cache.save_overload``, ``IndexDataCacheFile.save``).
    """

    def __init__(self, py_func):
        super().__init__(py_func)
        self.lock_path = os.path.join(self.cache_path, self._impl.filename_base + ".lock")
        self.lock_failures = 0

    @contextlib.contextmanager
    def _locked(self):
        """Yield True while this process holds the function's cache lock, False if it could not get it."""
        lock = None
        try:
            os.makedirs(self.cache_path, exist_ok=True)
            lock = FileLock(self.lock_path, timeout=LOCK_TIMEOUT_S)
            lock.acquire()
        except Exception:  # filelock.Timeout, OSError (read-only or vanished directory), RuntimeError
            lock = None
            self.lock_failures += 1  # the core never prints: the count is the trace
        try:
            yield lock is not None
        finally:
            if lock is not None:
                with contextlib.suppress(Exception):
                    lock.release()

    def load_overload(self, sig, target_context):
        """numba's ``load_overload`` (read the index and the data file) under the lock.

        Parameters
        ----------
        sig : tuple of numba types
            The overload's argument types.
        target_context : numba target context
            The dispatcher's ``targetctx``.

        Returns
        -------
        CompileResult or None
            The cached overload, or None on a miss or when the lock was not had (then the
            dispatcher compiles).
        """
        with self._locked() as held:
            if not held:
                return None
            return super().load_overload(sig, target_context)

    def save_overload(self, sig, data):
        """numba's ``save_overload`` (index read-modify-write, then the data file) under the lock.

        Parameters
        ----------
        sig : tuple of numba types
            The overload's argument types.
        data : CompileResult
            The compiled overload.

        Notes
        -----
        Without the lock nothing is saved: the compiled overload still serves this process.
        """
        with self._locked() as held:
            if held:
                super().save_overload(sig, data)


def _identity(func):
    return func


def njit(**options):
    """A decorator compiling like ``numba.njit(cache=True, nogil=True, **options)``, with a locked cache.

    Parameters
    ----------
    **options
        numba ``njit`` options (for instance ``error_model="numpy"``); ``nogil`` defaults to True
        and ``cache`` to True. ``cache=False`` gives numba's plain ``njit`` (no disk cache).

    Returns
    -------
    callable
        A decorator: function -> numba ``Dispatcher`` whose disk cache is a
        :class:`LockedFunctionCache`. Without numba installed, the identity (the function runs
        as plain Python); with ``NUMBA_DISABLE_JIT=1``, numba's own result (the function).

    Notes
    -----
    The cache is installed as ``Dispatcher.enable_caching`` installs numba's (it sets the
    dispatcher's ``_cache``). Source: numba 0.68.1 ``numba/core/decorators.py`` (``_jit``) and
    ``numba/core/dispatcher.py`` (``Dispatcher.enable_caching``).
    """
    if _numba is None:
        return _identity
    options = {"nogil": True, **options}
    cache = options.pop("cache", True)
    plain = _numba.njit(**options)

    def decorate(func):
        disp = plain(func)
        if cache and isinstance(disp, _Dispatcher):
            disp._cache = LockedFunctionCache(disp.py_func)
        return disp

    return decorate
