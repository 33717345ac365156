"""Module-level functions a job's worker process runs in tests/test_jobs_process.py (picklable by
name; light imports, so that a worker starts fast)."""
import os


def count_to(total, *, callback):
    """Report 1..total; returns how many were done before the callback said stop."""
    for i in range(1, total + 1):
        if callback(i, total):
            return i
    return total


def hold(first, total, *, callback):
    """Report ``first`` of ``total`` and then the worker's pid until told to stop; returns (first, pid)."""
    while not callback(first, total):
        pass
    return first, os.getpid()


def report_pid(*, callback):
    """Send the worker's pid (as ``done``, total 0) until told to stop."""
    while not callback(os.getpid(), 0):
        pass
    return os.getpid()


def deaf(*, callback):
    """Report once, then compute without ever asking the callback again (a long refit)."""
    callback(1, 2)
    while True:
        sum(range(10_000))


def raise_value(message, *, callback):
    callback(0, 1)
    raise ValueError(message)


class _Unsendable(Exception):
    """An exception that cannot be rebuilt from its pickle (two required arguments)."""

    def __init__(self, a, b):
        super().__init__(f"{a} and {b}")


def raise_unsendable(*, callback):
    raise _Unsendable("left", "right")


def raise_key(*, callback):
    raise KeyError("node X")
