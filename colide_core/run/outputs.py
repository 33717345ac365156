"""The CLI's output files and progress bar, and its two errors (:mod:`colide_core.run.cli`).

* :class:`OutputDir`: the directory a command writes into. No overwriting without ``--force``,
  never over an input (same resolved path or :func:`os.path.samefile`), fixed plain names
  (:func:`check_plain_name`), each file written atomically (a temporary file in the same
  directory, flushed, then moved into place). The rules are the CLI's "Files (issue 22)".
* :class:`ProgressBar`: a one-line text bar on stderr, drawn only when it is a terminal.
* :func:`_csv_text`: the one place the CLI turns a table into CSV text.
* :class:`UsageError` (exit status 2) and :class:`RunFailed` (exit status 1), raised by every
  module of the CLI and turned into one line by :func:`colide_core.run.cli.main`.
"""
from __future__ import annotations

import contextlib
import os
import secrets
import sys
import time
from pathlib import Path

import numpy as np


class UsageError(Exception):
    """Bad input from the user (exit status 2)."""


class RunFailed(Exception):
    """The computation itself failed (exit status 1)."""



# --------------------------------------------------------------------------------------------
# output files: no overwriting without --force, never an input, atomic
# --------------------------------------------------------------------------------------------

#: Longest method label or output name accepted.
MAX_NAME_CHARS = 100


def _printable(text):
    """``text`` with control characters (terminal escapes, carriage returns) shown escaped."""
    return "".join(c if (c.isprintable() or c in "\n\t") else repr(c)[1:-1] for c in str(text))


def check_plain_name(name, what):
    """Check that ``name`` can be one path component inside a directory the user named.

    Parameters
    ----------
    name : str
    what : str
        What the name is, for the message (e.g. ``"method label"``).

    Returns
    -------
    str
        ``name``, unchanged.

    Raises
    ------
    UsageError
        If ``name`` is not a string, is empty, ``.`` or ``..``, longer than
        :data:`MAX_NAME_CHARS`, or holds a path separator (``/``, ``\\``), a NUL or another
        control character.
    """
    if not isinstance(name, str) or not name.strip() or name in (".", ".."):
        raise UsageError(f"{what} {_printable(repr(name))} is not a usable name")
    if len(name) > MAX_NAME_CHARS:
        raise UsageError(f"{what} {_printable(repr(name[:40]))}... is longer than {MAX_NAME_CHARS} characters")
    bad = sorted({c for c in name if c in "/\\" or not c.isprintable()})
    if bad:
        raise UsageError(f"{what} {_printable(repr(name))} holds {', '.join(repr(c) for c in bad)}: "
                         "path separators and control characters are not allowed")
    return name


def _same_file(a, b):
    """True when paths ``a`` and ``b`` are the same file (links followed) or resolve alike."""
    with contextlib.suppress(OSError):
        if os.path.samefile(a, b):
            return True
    return os.path.realpath(a) == os.path.realpath(b)


class OutputDir:
    """The directory a command writes into.

    Parameters
    ----------
    path : Path
        The directory (created on the first write).
    force : bool
        Replace existing files (never an input).
    inputs : sequence of path
        The files the command reads: never written over, with or without ``force``.
    replaceable : sequence of str
        Names that may be replaced without ``force`` (a resumed bench's derived summaries).
    """

    def __init__(self, path, *, force=False, inputs=(), replaceable=()):
        self.path = Path(path)
        self.force = bool(force)
        self.inputs = [Path(p) for p in inputs]
        self.replaceable = set(replaceable)
        if self.path.exists() and not self.path.is_dir():
            raise UsageError(f"--out {self.path} exists and is not a directory")

    def target(self, name):
        """The path of output ``name`` after every check.

        Raises
        ------
        UsageError
            If ``name`` is not a plain file name, the file is an input of the command, is a
            directory, or exists and neither ``force`` nor ``replaceable`` allows replacing it.
        """
        check_plain_name(name, "output file name")
        target = self.path / name
        for src in self.inputs:
            if _same_file(target, src):
                raise UsageError(f"refusing to write {target}: it is an input of this command ({src}); "
                                 "choose another --out (--force never replaces an input)")
        if target.is_dir():
            raise UsageError(f"cannot write {target}: it is a directory")
        if (target.exists() or target.is_symlink()) and not (self.force or name in self.replaceable):
            raise UsageError(f"{target} exists; pass --force to replace it, or choose another --out")
        return target

    def check(self, names):
        """Check every output ``names`` before any work (see :meth:`target`)."""
        for name in names:
            self.target(name)

    def write(self, name, data):
        """Write one output atomically.

        Parameters
        ----------
        name : str
            Plain file name inside the directory.
        data : str, bytes or callable
            The content (str is written as UTF-8), or ``data(fh)`` writing to a binary file.

        Notes
        -----
        The content goes to a temporary file in the same directory (created exclusively), is
        flushed to disk, then moved into place with :func:`os.replace`, so a reader or a crash
        sees the old file or the new one, never a part. Without ``force`` the final step is a
        hard link, which fails if a file appeared meanwhile (no race with another writer).
        """
        target = self.target(name)
        self.path.mkdir(parents=True, exist_ok=True)
        tmp = self.path / f".{name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "wb") as fh:
                if callable(data):
                    data(fh)
                else:
                    fh.write(data.encode("utf-8") if isinstance(data, str) else data)
                fh.flush()
                os.fsync(fh.fileno())
            if self.force or name in self.replaceable:
                os.replace(tmp, target)
            else:
                try:
                    os.link(tmp, target)
                except FileExistsError:
                    raise UsageError(f"{target} exists; pass --force to replace it, or choose another --out") from None
                except OSError:  # no hard links on this file system
                    if target.exists() or target.is_symlink():
                        raise UsageError(f"{target} exists; pass --force to replace it, "
                                         "or choose another --out") from None
                    os.replace(tmp, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        return target


def _csv_text(df):
    """The one place the CLI turns a table into CSV text (no index), through
    :func:`colide_core.graph.export.to_csv_safe` (formula cells neutralised)."""
    from colide_core.graph.export import to_csv_safe

    return to_csv_safe(df, index=False)


# --------------------------------------------------------------------------------------------
# progress bar
# --------------------------------------------------------------------------------------------

class ProgressBar:
    """A one-line text progress bar on a stream, drawn only when it is a TTY.

    Parameters
    ----------
    total : float
        Value that means 100 %.
    label : str
        Text before the bar.
    stream : file, default sys.stderr
    enabled : bool, optional
        Default ``stream.isatty()``.
    """

    def __init__(self, total, label="", stream=None, enabled=None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.total = max(float(total), 1e-12)
        self.label = label
        self.t0 = time.perf_counter()
        self._last = 0.0

    def update(self, value, suffix=""):
        """Redraw at ``value`` (throttled to 10 redraws per second)."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last < 0.1 and value < self.total:
            return
        self._last = now
        frac = min(max(value / self.total, 0.0), 1.0)
        width = 30
        filled = int(round(frac * width))
        elapsed = now - self.t0
        eta = elapsed * (1 - frac) / frac if frac > 0 else float("nan")
        eta_txt = f"eta {eta:5.0f}s" if np.isfinite(eta) else "eta     ?"
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {frac:4.0%} "
                          f"{elapsed:5.0f}s {eta_txt} {suffix}\x1b[K")
        self.stream.flush()

    def close(self):
        """End the line."""
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
