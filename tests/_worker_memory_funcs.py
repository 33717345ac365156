"""Module-level functions a job's worker process runs in tests/test_jobs_process.py and
benchmarks/bench_worker_memory.py (picklable by name; light imports): what a worker received,
how much memory it took to receive it, and what a stopped worker sends back."""
import os


def status_kb(field):
    """``field`` of ``/proc/self/status`` (``"VmRSS"``, ``"VmHWM"``) in kB; 0 where there is none."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:  # pragma: no cover - not Linux
        pass
    return 0


def probe(X, *, callback):
    """What the worker got: ``X``'s (an array's or a data frame's) shape, flags and a checksum, and
    the worker's peak and current RSS (kB, ``/proc/self/status``) after receiving it."""
    import numpy as np

    callback(1, 1)
    X = np.asarray(X)  # a data frame's values
    return {"shape": X.shape, "dtype": str(X.dtype), "writeable": bool(X.flags.writeable),
            "c_contiguous": bool(X.flags.c_contiguous), "f_contiguous": bool(X.flags.f_contiguous),
            "checksum": float(X[::97].sum()), "hwm_kb": status_kb("VmHWM"), "rss_kb": status_kb("VmRSS"),
            "pid": os.getpid()}


def echo(*args, callback, **kwargs):
    """Return what was sent, as it arrived: ``(args, kwargs)``."""
    callback(1, 1)
    return args, kwargs


def scale(X, k, *, callback):
    """``X *= k`` in place (the worker's copy must be writeable, as the thread's array is), returned."""
    callback(1, 1)
    X *= k
    return X


def hold_with(X, *, callback):
    """Report 1 of 2 until told to stop; returns ``X.shape``."""
    while not callback(1, 2):
        pass
    return X.shape


def raise_with(X, *, callback):
    """Report once, then raise a ValueError naming ``X``'s rows."""
    callback(1, 2)
    raise ValueError(f"no fit on {X.shape[0]} rows")


def pid_with(X, *, callback):
    """Send the worker's pid (as ``done``, total 0) until told to stop; returns ``X.shape``."""
    while not callback(os.getpid(), 0):
        pass
    return X.shape


def slow_steps(n, seconds, *, callback):
    """``n`` steps of ``seconds`` each that hear no callback (a bootstrap's fits), reporting after
    each; returns the steps done when told to stop (the partial result)."""
    import time

    for i in range(1, n + 1):
        time.sleep(seconds)
        if callback(i, n):
            return i
    return n
