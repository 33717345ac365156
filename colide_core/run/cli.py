"""Command-line interface: ``python -m colide_core {fit,simulate,bench,report}``.

Why :mod:`argparse`: it is in the standard library, so the CLI adds no
dependency to pin or audit, and it already gives what this small interface
needs: sub-commands, typed options, ``--help`` text, and usage errors that
exit with status 2. typer/click would add a package (and, for typer, its
own dependencies) for convenience this interface does not need.

Commands
--------
``fit DATA --out DIR``
    Learn a DAG from a CSV/TSV/Parquet table (rows = samples, columns =
    nodes). Writes ``edges.csv`` (the thresholded DAG's edge list),
    ``W.csv`` (raw weights), ``adjacency.csv`` (thresholded weights),
    ``sigma.csv`` (noise standard deviations) and ``manifest.json``, plus any
    ``--export`` formats. ``--stats`` streams a file (or glob) too large for
    memory through :func:`colide_core.data.stats.sufficient_stats` (Dask) and
    fits from the covariance.
``simulate --out DIR``
    Draw a synthetic linear SEM dataset with
    :func:`colide_core.data.simulate.simulate_dataset` (the project's one
    simulation protocol) and write ``data.csv`` (or ``.parquet``), the ground
    truth ``B_true.csv``, ``W_true.csv``, ``noise_std.csv`` (both in the units
    of the written data) and ``simulation.json``. ``--interventions K`` /
    ``--intervene X1,X3`` add interventional conditions (hard interventions,
    optional ``--mean-shift``): a ``condition`` column (last) and ``targets.json``
    (condition -> node names).
``bench CONFIG.toml``
    Run methods x data settings x seeds through :func:`colide_core.run.executor.run_sweep`
    (joblib, or Dask with ``--scheduler``/``DASK_SCHEDULER_ADDRESS``).
    Rows stream into ``results.jsonl``, so a killed bench resumes where it
    stopped; at the end ``results.parquet``, ``results.csv``, ``summary.csv``
    and ``summary.txt`` (mean +- std per method, the paper's layout) and
    ``bench.json`` are written.

``report DATA --out DIR``
    Write ``report.html``, a self-contained offline report (:mod:`colide_core.render.report`): the
    fit recorded in ``--manifest`` (checked against the data's fingerprint), or a new fit with
    ``--variant``/``--lambda1``/``--threshold``; model checks, edge evidence, and curves against
    ``--truth`` (adjacency CSV) or ``--reference`` (edge list, GraphML, DOT, JSON or DAGitty).
    ``--conditions COLUMN`` (and ``--targets FILE``) fit and check with an intercept per condition
    and the targets masked, and add the report's section per condition.

Files (issue 22)
----------------
* **No overwriting without** ``--force``: every command lists the files it will write and
  checks them *before any work*; an existing one stops the command with
  ``error: ... exists; pass --force to replace it``. ``bench`` resumes a sweep in a directory
  that holds its ``results.jsonl`` and its marker ``.colide-bench.json``: the summary files there are derived from that file and are
  rewritten (that is what resuming means); in any other directory existing outputs need
  ``--force``.
* **Never over an input**, even with ``--force``: an output that is the same file as the data,
  ``--truth``, a file of the ``--stats`` glob or the bench config (same resolved path, or
  :func:`os.path.samefile`: symbolic and hard links included) is refused.
* **Inside the directory named**: output names are fixed plain names; ``[bench].out`` from a
  TOML file must be a relative path without ``..`` (the command line's ``--out`` may be any
  directory). Method labels must be plain printable names (no path separators, no control
  characters).
* **Atomic**: each file is written to a temporary file in the same directory, flushed, then
  moved into place (:func:`os.replace`), so a failure or a kill never leaves a half-written
  file; an existing file is only ever replaced whole.

Limits (checked before any work; :mod:`colide_core.defaults`)
-------------------------------------------------------------
``simulate``/``bench`` settings go through :func:`colide_core.data.simulate.check_spec`:
``n_nodes <= MAX_NODES`` (2000), ``n_samples <= MAX_SAMPLES`` (1e6),
``n_samples * n_nodes <= MAX_CELLS`` (5e7), ``degree <= MAX_DEGREE`` (100), numbers finite. A
bench sweep runs at most ``MAX_SWEEP_RUNS`` (10,000) runs, counted from the TOML grid before it
is built. ``fit`` checks every solver setting with the estimator's own parameter validation
(``max_iter`` entries <= ``MAX_ITER_LIMIT``) before it reads the data.

Exit status: 0 on success; 2 for an error in the arguments, files, data or configuration (one
handler prints ``PROG COMMAND: error: message`` on stderr, never a traceback, whatever the
exception); 1 when a run itself fails (the solver leaves its domain, bench workers keep dying);
130 when interrupted.

A progress bar is drawn on stderr only when stderr is a terminal.
"""
from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import os
import secrets
import sys
import time
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd

from colide_core import defaults

PROG = "python -m colide_core"


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


# --------------------------------------------------------------------------------------------
# parsing helpers
# --------------------------------------------------------------------------------------------

def _float_tuple(kind, length=None):
    def parse(text):
        try:
            vals = tuple(kind(v) for v in text.split(",") if v.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated {kind.__name__}s, got {text!r}") from None
        if length is not None and len(vals) != length:
            raise argparse.ArgumentTypeError(f"expected {length} comma-separated values, got {len(vals)}")
        return vals
    return parse


def _positive_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not np.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return v


def _int_in(low, high=None, *, nonzero=False):
    """argparse type: an int in ``[low, high]`` (``high`` None: unbounded)."""
    def parse(text):
        v = int(text)  # a ValueError reads "invalid int value: 'x'" (argparse, after __name__)
        if low is not None and v < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {v}")
        if high is not None and v > high:
            raise argparse.ArgumentTypeError(f"must be <= {high}, got {v}")
        if nonzero and v == 0:
            raise argparse.ArgumentTypeError("must not be 0 (-1 = all cores)")
        return v
    parse.__name__ = "int"
    return parse


_positive_int = _int_in(1)
#: Seeds: non-negative ints below 2**32 (numpy's SeedSequence and scikit-learn's random_state).
_seed = _int_in(0, 2**32 - 1)


def _setting_type(row):
    """argparse type of one run setting: :meth:`colide_core.settings.Setting.parse`, then the
    library's own check of that setting, so the command line accepts what the library accepts."""
    def parse(text):
        from colide_core.settings import check_setting

        try:
            return check_setting(row.name, row.parse(text))
        except ValueError as exc:
            problems = getattr(exc, "problems", None)
            raise argparse.ArgumentTypeError("; ".join(problems) if problems else str(exc)) from None

    parse.__name__ = row.name
    return parse


def _add_setting_arguments(parser):
    """One argument per run setting that has a CLI flag (:data:`colide_core.settings.SETTINGS`).

    An argument not given is absent from the parsed namespace (``argparse.SUPPRESS``), so the
    library's default applies: :func:`_settings_of` collects the given ones.
    """
    from colide_core.settings import SETTINGS, Options

    for row in SETTINGS:
        if row.flag is None:
            continue
        default = "none" if row.default is None else row.format(row.default)
        kw = {"dest": row.name, "default": argparse.SUPPRESS, "help": f"{row.help} (default {default})"}
        if isinstance(row.constraint, Options):
            kw["choices"] = list(row.constraint.values)
        else:
            kw["type"] = _setting_type(row)
        if row.metavar:
            kw["metavar"] = row.metavar
        parser.add_argument(row.flag, **kw)


def _settings_of(args) -> dict:
    """The run settings given on the command line (by :func:`_add_setting_arguments`)."""
    from colide_core.settings import SETTINGS

    return {row.name: getattr(args, row.name) for row in SETTINGS if row.flag and hasattr(args, row.name)}


def build_parser():
    """The argparse parser of ``python -m colide_core`` (exposed for docs and tests)."""
    # Only what the options name: `--help` imports no solver, scikit-learn or causal-learn.
    from colide_core.defaults import EXPORT_FORMATS, MAX_RETRIES, SOLVERS

    p = argparse.ArgumentParser(prog=PROG, description="CoLiDE: learn linear causal DAGs from data, "
                                "simulate benchmarks, run sweeps locally or on a Dask cluster.")
    sub = p.add_subparsers(dest="command", required=True, metavar="{fit,simulate,bench,report,app}")

    f = sub.add_parser("fit", help="learn a DAG from a CSV/TSV/Parquet table",
                       description="Learn a DAG with CoLiDE. Rows are samples, columns are nodes; "
                                   "W[i, j] != 0 in the outputs means the edge i -> j.")
    f.add_argument("data", help="CSV/TSV/Parquet file (with --stats: also a directory or glob)")
    f.add_argument("--out", required=True, type=Path, help="output directory (created)")
    _add_setting_arguments(f)  # one flag per run setting, from colide_core.settings.SETTINGS
    f.add_argument("--columns", type=lambda s: [c.strip() for c in s.split(",") if c.strip()],
                   default=None, metavar="A,B,...", help="use only these columns (nodes), in this order")
    f.add_argument("--drop-non-numeric", action="store_true", help="ignore text columns instead of failing")
    f.add_argument("--drop-nonfinite-rows", action="store_true",
                   help="drop rows with missing or infinite values instead of failing (recorded in the manifest)")
    f.add_argument("--drop-constant-columns", action="store_true",
                   help="drop columns holding one repeated value instead of failing (recorded in the manifest)")
    f.add_argument("--prior", type=Path, default=None, metavar="FILE",
                   help="prior knowledge: a constraints JSON from the Prior knowledge page, or a run manifest "
                        "(its forbidden / required edges and tiers)")
    f.add_argument("--conditions", default=None, metavar="COLUMN",
                   help="the column holding each row's condition (text or integers): an intercept per "
                        "condition (docs/conditions.md); the column is not a node")
    f.add_argument("--targets", type=Path, default=None, metavar="FILE",
                   help="the nodes each condition intervenes on (masked likelihood; needs --conditions): "
                        "JSON {condition: [node, ...]} (as `simulate` writes) or CSV with condition,target columns")
    f.add_argument("--transform", choices=("log", "asinh", "standardize"), default=None,
                   help="transform every column before the fit (recorded in the manifest): log (values "
                        "must be > 0), asinh(x / cofactor), or standardize (z-score); CoLiDE is not "
                        "scale-invariant, so the edges change")
    f.add_argument("--cofactor", type=_positive_float, default=None,
                   help="asinh cofactor (default 5, the CyTOF convention; 150 for fluorescence flow)")
    f.add_argument("--truth", type=Path, default=None,
                   help="true DAG as an adjacency CSV (B_true.csv from `simulate`): adds metrics")
    f.add_argument("--stats", action="store_true",
                   help="out-of-core: stream the data through Dask into (n, cov) and fit from that")
    f.add_argument("--export", type=lambda s: [x.strip() for x in s.split(",") if x.strip()], default=[],
                   metavar="FMT,...", help="also write the DAG as: " + ", ".join(EXPORT_FORMATS))
    f.add_argument("--quiet", action="store_true", help="no summary on stdout")
    f.add_argument("--force", action="store_true",
                   help="replace existing output files (never an input file)")

    s = sub.add_parser("simulate", help="write a synthetic dataset with its ground truth",
                       description="Simulate a linear SEM (NOTEARS/CoLiDE protocol).")
    s.add_argument("--out", required=True, type=Path, help="output directory (created)")
    s.add_argument("--nodes", type=_positive_int, default=10,
                   help=f"number of nodes d (default 10, at most {defaults.MAX_NODES})")
    s.add_argument("--degree", type=_positive_float, default=2.0,
                   help=f"k of ERk/SFk (default 2, at most {defaults.MAX_DEGREE:g})")
    s.add_argument("--graph", choices=("er", "sf"), default="er")
    s.add_argument("--samples", type=_positive_int, default=1000,
                   help=f"number of samples n (default 1000, at most {defaults.MAX_SAMPLES:,}; "
                        f"n x d at most {defaults.MAX_CELLS:,})")
    s.add_argument("--noise", choices=("gaussian", "exponential", "laplace", "gumbel"), default="gaussian")
    s.add_argument("--variance", choices=("ev", "nv"), default="nv",
                   help="default nv, as on the dashboard's Simulate page. ev: equal noise variances (--noise-var); "
                        "nv: one per node, uniform on "
                        "--noise-var-range (paper Section 5)")
    s.add_argument("--noise-var", type=_positive_float, default=1.0, help="EV noise variance (default 1)")
    s.add_argument("--noise-var-range", type=_float_tuple(float, 2), default=(0.5, 10.0), metavar="LOW,HIGH",
                   help="NV noise variance range (default 0.5,10)")
    s.add_argument("--w-range", type=_float_tuple(float, 2), default=None, metavar="LOW,HIGH",
                   help="edge weight magnitudes, random sign (default: the paper's 0.5,2 for ev, 0.25,1 for nv)")
    s.add_argument("--standardize", action="store_true",
                   help="scale columns to unit variance (W_true and noise_std are rescaled to match)")
    s.add_argument("--seed", type=_seed, default=0, help="random seed, 0 <= seed < 2**32 (default 0)")
    # interventional conditions (issue 31): hard interventions, optional intercept shifts
    s.add_argument("--interventions", type=_int_in(0, defaults.MAX_CONDITIONS - 1), default=None, metavar="K",
                   help="add K interventional conditions after the --samples observational rows "
                        "(default 0, or one per --intervene); writes a 'condition' column and targets.json")
    s.add_argument("--intervene", action="append", default=None, metavar="NODE,...",
                   help="one interventional condition with hard interventions on these nodes (X1..Xd); "
                        "repeat for more conditions (default: --targets-per-condition random nodes each)")
    s.add_argument("--targets-per-condition", type=_int_in(0), default=1, metavar="T",
                   help="random targets per interventional condition when --intervene is not given (default 1)")
    s.add_argument("--per-condition", type=_positive_int, default=None, metavar="M",
                   help="rows per interventional condition (default: --samples)")
    s.add_argument("--mean-shift", type=_positive_float, default=0.0, metavar="S",
                   help="standard deviation of each interventional condition's per-node intercept shift "
                        "(default 0: none)")
    s.add_argument("--format", choices=("csv", "parquet"), default="csv", help="format of the data file")
    s.add_argument("--force", action="store_true", help="replace existing output files")

    b = sub.add_parser("bench", help="run a sweep of methods x settings x seeds from a TOML file",
                       description="Run a benchmark sweep. Finished runs are kept in OUT/results.jsonl; "
                                   "running the same command again resumes without recomputing them.")
    b.add_argument("config", type=Path, help="TOML file: [bench], [data], [methods.NAME] tables")
    b.add_argument("--out", type=Path, default=None,
                   help="output directory (default: [bench].out, else CONFIG's name + '_results')")
    b.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                   help="Dask scheduler address (default $DASK_SCHEDULER_ADDRESS, else local joblib)")
    b.add_argument("--device", choices=defaults.DEVICES, default=None,
                   help="run every CoLiDE method of the sweep on this device (overrides the config's; "
                        "gpu: on a Dask cluster, on the workers started with --resources GPU=1)")
    b.add_argument("--jobs", type=_int_in(None, nonzero=True), default=-1,
                   help="local joblib processes (default -1: all cores)")
    b.add_argument("--retries", type=_int_in(0, MAX_RETRIES), default=None,
                   help="resubmissions after a worker crash (default: [bench].retries, else 3)")
    b.add_argument("--force", action="store_true",
                   help="replace existing output files in a directory that is not this bench's own "
                        "(one without results.jsonl)")
    _add_report_parser(sub)
    from colide_core.run import app  # `app`: the dashboard, `streamlit run` of the installed app.py

    app.add_parser(sub)
    return p


def _add_report_parser(sub):
    r = sub.add_parser("report", help="write a self-contained offline HTML report of a fit",
                       description="Check a fit (sortability, residuals, EV or NV, Markov check, scale "
                                   "sensitivity), weigh its edges and draw its curves, in one HTML file "
                                   "that opens offline.")
    r.add_argument("data", help="CSV/TSV/Parquet file (rows = samples, columns = nodes)")
    r.add_argument("--out", required=True, type=Path, help="output directory (created); writes report.html")
    r.add_argument("--manifest", type=Path, default=None,
                   help="manifest.json of a `fit` run on this data: report that fit (its W as recorded; the "
                        "standardise and rescaling checks refit 1 + --rescalings times with its settings, only "
                        "within the dashboard's limits, else they are skipped with a warning)")
    r.add_argument("--variant", choices=("ev", "nv"), default=defaults.VARIANT, help="without --manifest")
    r.add_argument("--lambda1", type=_positive_float, default=defaults.LAMBDA1, help="without --manifest")
    r.add_argument("--threshold", type=_positive_float, default=defaults.THRESHOLD, help="without --manifest")
    r.add_argument("--truth", type=Path, default=None, help="true DAG as an adjacency CSV: metrics and curves")
    r.add_argument("--reference", type=Path, default=None,
                   help="your reference graph (edge-list or adjacency .csv, .graphml, .dot, .json, DAGitty .txt)")
    r.add_argument("--path", action="store_true", help="also solve the lambda path: edges and BIC over "
                                                       "lambda and the threshold, with the stable region")
    r.add_argument("--random-graphs", type=_int_in(0, 1000), default=100,
                   help="random DAGs of the Markov check (default 100, at most 1000)")
    r.add_argument("--rescalings", type=_int_in(0, 50), default=3,
                   help="random rescalings of the scale-sensitivity check (default 3, 0 skips it)")
    r.add_argument("--seed", type=_seed, default=0, help="seed of the checks (default 0)")
    r.add_argument("--columns", type=lambda s: [c.strip() for c in s.split(",") if c.strip()],
                   default=None, metavar="A,B,...", help="use only these columns (nodes), in this order")
    r.add_argument("--drop-non-numeric", action="store_true", help="ignore text columns instead of failing")
    r.add_argument("--force", action="store_true", help="replace an existing report.html (never an input file)")
    r.add_argument("--conditions", default=None, metavar="COLUMN",
                   help="the column holding each row's condition (not a node): the fit, the checks and their "
                        "refits use an intercept per condition, and the report gains a section per condition "
                        "(docs/conditions.md)")
    r.add_argument("--targets", type=Path, default=None, metavar="FILE",
                   help="the nodes each condition intervenes on, JSON or CSV (needs --conditions; default with "
                        "--manifest: the targets it records)")


# --------------------------------------------------------------------------------------------
# fit
# --------------------------------------------------------------------------------------------

def _read_prior(path):
    """CoLiDE keyword arguments (forbidden, required, tiers) from a constraints file or a run manifest."""
    from colide_core.data.io import JSON_MAX_BYTES
    from colide_core.graph.constraints import PriorKnowledge

    if not path.is_file():
        raise UsageError(f"--prior file not found: {path}")
    if path.stat().st_size > JSON_MAX_BYTES:
        raise UsageError(f"--prior {path.name}: larger than {JSON_MAX_BYTES:,} bytes")
    data = path.read_bytes()
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        doc = None
    if isinstance(doc, dict) and "params" in doc and "schema" in doc:  # a run manifest
        from colide_core.run.manifest import ManifestError, load_manifest

        try:
            params = load_manifest(data).params
        except ManifestError as exc:
            raise UsageError(f"--prior {path.name}: {exc}") from None
        return {k: params[k] for k in ("forbidden", "required", "tiers") if params.get(k)}
    try:
        return PriorKnowledge.from_json(data).as_kwargs()
    except ValueError as exc:
        raise UsageError(f"--prior {path.name}: {exc}") from None


def _drops(args):
    """The dropping flags of ``fit`` / ``report`` as ``validate_data`` keywords."""
    return {"drop_non_numeric": bool(getattr(args, "drop_non_numeric", False)),
            "drop_nonfinite_rows": bool(getattr(args, "drop_nonfinite_rows", False)),
            "drop_constant_columns": bool(getattr(args, "drop_constant_columns", False))}


def _read_data(path, columns, drop_non_numeric, condition_column=None, **drops):
    """The validated data; with ``condition_column``, ``(validated data, row labels)``."""
    from colide_core.data.io import DataValidationError, read_table, validate_data

    if not path.is_file():
        raise UsageError(f"data file not found: {path}")
    raw = path.read_bytes()
    try:
        df = read_table(raw, path.name, max_bytes=len(raw) + 1)
        if condition_column is not None:
            stripped = [str(x).strip() for x in df.columns]
            if stripped.count(str(condition_column).strip()) != 1:
                raise UsageError(f"--conditions: no column {_printable(condition_column)!r} (exactly one) in {path.name}")
            at = stripped.index(str(condition_column).strip())
            labels = df.iloc[:, at].copy()
            df = df.drop(columns=df.columns[at])
            vd = _read_data_frame(df, path, columns, drop_non_numeric, **drops)
            if len(vd.X) != len(labels):  # rows with missing values were dropped
                raise UsageError(f"{path.name}: rows were dropped while validating; with --conditions clean them first")
            return vd, labels.reset_index(drop=True)
        return _read_data_frame(df, path, columns, drop_non_numeric, **drops)
    except DataValidationError as exc:
        raise UsageError(f"{path.name}: {exc}") from None


def _read_data_frame(df, path, columns, drop_non_numeric, **drops):
    from colide_core.data.io import validate_data

    if columns is not None:
        missing = [c for c in columns if c not in [str(x).strip() for x in df.columns]]
        if missing:
            raise UsageError(f"--columns: not in {path.name}: {', '.join(missing)}")
        df = df.rename(columns=lambda c: str(c).strip())[columns]
    return validate_data(df, min_rows=2, drop_non_numeric=drop_non_numeric,
                         drop_nonfinite_rows=bool(drops.get("drop_nonfinite_rows")),
                         drop_constant_columns=bool(drops.get("drop_constant_columns")))


def _read_targets_file(path):
    from colide_core import defaults
    from colide_core.data.conditions import read_targets

    if not path.is_file():
        raise UsageError(f"--targets file not found: {path}")
    if path.stat().st_size > defaults.MAX_TARGETS_FILE_BYTES:
        raise UsageError(f"--targets {path.name}: larger than {defaults.MAX_TARGETS_FILE_BYTES:,} bytes")
    try:
        return read_targets(path.read_bytes(), path.name)
    except ValueError as exc:
        raise UsageError(f"--targets {path.name}: {exc}") from None


def _read_truth(path, names):
    from colide_core.graph.export import read_graph

    if not path.is_file():
        raise UsageError(f"--truth file not found: {path}")
    try:
        B = read_graph(path.read_bytes(), "adjacency_csv")
    except ValueError as exc:
        raise UsageError(f"--truth {path.name}: {exc}") from None
    if list(B.columns) != list(names):
        if sorted(B.columns) != sorted(names):
            raise UsageError(f"--truth {path.name}: its nodes {list(B.columns)} differ from the data's {list(names)}")
        B = B.loc[list(names), list(names)]
    return B


def _fit_inputs(args):
    """The files ``fit`` reads: the data (every file of a ``--stats`` glob) and ``--truth``."""
    inputs = []
    if args.stats:
        from colide_core.data.stats import _resolve_files

        try:
            inputs += [Path(p) for p in _resolve_files(args.data)[1]]
        except (FileNotFoundError, ValueError) as exc:
            raise UsageError(f"{args.data}: {exc}") from None
    else:
        inputs.append(Path(args.data))
    if args.truth is not None:
        inputs.append(args.truth)
    if getattr(args, "targets", None) is not None:
        inputs.append(args.targets)
    if getattr(args, "prior", None) is not None:
        inputs.append(args.prior)
    return inputs


def _cmd_fit(args):
    from colide_core import CoLiDE, progress_fraction
    from colide_core._params import InvalidParameterError
    from colide_core.graph.export import export_graph, EXPORT_FORMATS, to_adjacency_csv, to_edge_list_csv
    from colide_core.run.manifest import build_manifest, manifest_to_json

    bad = [fmt for fmt in args.export if fmt not in EXPORT_FORMATS]
    if bad:
        raise UsageError(f"--export: unknown format(s) {', '.join(bad)}; choose from {', '.join(EXPORT_FORMATS)}")
    exports = list(dict.fromkeys(args.export))
    from colide_core.data.transforms import transform_columns, transform_step

    if args.transform is not None and args.stats:
        raise UsageError("--transform cannot be combined with --stats (the statistics are of the raw data)")
    try:
        step = None if args.transform is None else transform_step(args.transform, cofactor=args.cofactor)
    except ValueError as exc:
        raise UsageError(f"--cofactor: {exc}") from None
    if step is None and args.cofactor is not None:
        raise UsageError("--cofactor applies to --transform asinh only")
    if args.targets is not None and args.conditions is None:
        raise UsageError("--targets needs --conditions (the column of each row's condition)")
    if args.conditions is not None and args.stats:
        raise UsageError("--conditions cannot be combined with --stats yet (fit the rows)")
    t_start = time.perf_counter()
    prior = {} if args.prior is None else _read_prior(args.prior)
    model = CoLiDE(**_settings_of(args), **prior)
    try:  # every setting, before any file is read (the checks across settings: stages, sizes)
        run = model.get_run_settings()
    except InvalidParameterError as exc:
        raise UsageError(str(exc)) from None
    _check_device(run.device, run.solver)
    # Every output, checked before any work: none exists (or --force), none is an input.
    out = OutputDir(args.out, force=args.force, inputs=_fit_inputs(args))
    outputs = ["edges.csv", "W.csv", "adjacency.csv"] + (["sigma.csv"] if run.variant != "ls" else [])
    outputs += ["graph" + EXPORT_FORMATS[fmt][0] for fmt in exports] + ["manifest.json"]
    out.check(outputs)

    bar = ProgressBar(1.0, label="fit")
    n_stages = len(run.max_iter)

    def progress(stage, iteration, objective):
        if stage >= n_stages:  # CoLiDE-TOPO's search after the continuous start: swaps accepted
            bar.update(1.0, suffix=f"TOPO swaps {iteration} score {objective:.4g}")
            return False
        frac = progress_fraction(run.max_iter, stage, iteration)
        bar.update(frac, suffix=f"stage {stage + 1}/{n_stages} obj {objective:.4g}")
        return False

    if args.stats:
        from colide_core.data.stats import sufficient_stats

        try:
            n, _, cov, names = sufficient_stats(args.data, columns=args.columns, return_columns=True)
        except (FileNotFoundError, ValueError) as exc:
            raise UsageError(f"{args.data}: {exc}") from None
        data_kw = {"cov": cov, "n": n}
        B_true = _read_truth(args.truth, names) if args.truth is not None else None
        try:
            model.fit_from_stats(cov, n, callback=progress, node_names=names)
        finally:
            bar.close()
        shape = (n, len(names))
    else:
        labels = targets = None
        drops = _drops(args)
        if args.conditions is None:
            vd = _read_data(Path(args.data), args.columns, **drops)
        else:
            vd, labels = _read_data(Path(args.data), args.columns, condition_column=args.conditions, **drops)
            targets = None if args.targets is None else _read_targets_file(args.targets)
        for w in vd.warnings:
            print(f"warning: {_printable(w)}", file=sys.stderr)
        X = vd.X
        if step is not None:
            try:
                X = transform_columns(X, step["kind"], cofactor=step.get("cofactor"))
            except ValueError as exc:
                raise UsageError(f"--transform {step['kind']}: {exc}") from None
        names = vd.node_names
        data_kw = {"X": X}
        B_true = _read_truth(args.truth, names) if args.truth is not None else None
        try:
            if labels is None:
                model.fit(X, callback=progress)
            else:
                from colide_core.exceptions import ConditionsError

                try:
                    model.fit(X, conditions=labels, targets=targets, callback=progress)
                except ConditionsError as exc:
                    raise UsageError(f"--conditions/--targets: {exc}") from None
                data_kw.update(conditions=labels, conditions_column=args.conditions)
        finally:
            bar.close()
        shape = X.shape

    out.write("edges.csv", to_edge_list_csv(model.adjacency_, names))
    out.write("W.csv", to_adjacency_csv(model.W_, names))
    out.write("adjacency.csv", to_adjacency_csv(model.adjacency_, names))
    written = ["edges.csv", "W.csv", "adjacency.csv"]
    if model.sigma_ is not None:
        sig = np.broadcast_to(np.asarray(model.sigma_, dtype=float), (len(names),))
        out.write("sigma.csv", _csv_text(pd.DataFrame({"node": names, "sigma": sig})))
        written.append("sigma.csv")
    for fmt in exports:
        name = "graph" + EXPORT_FORMATS[fmt][0]  # graph.graphml, graph_edges.csv, ...
        out.write(name, export_graph(model.adjacency_, names, fmt))
        written.append(name)
    manifest = build_manifest(model, **data_kw, B_true=B_true, data_source=str(args.data),
                              wall_time=time.perf_counter() - t_start,
                              extra={"command": "fit", "argv": sys.argv[1:],
                                     **({} if args.stats else {"preprocess": {
                                         **drops, "dropped_columns": [str(c) for c in vd.dropped_columns],
                                         "dropped_rows": int(vd.dropped_rows)}})},
                              transform=None if step is None else [step])
    out.write("manifest.json", manifest_to_json(manifest))
    written.append("manifest.json")
    if not args.quiet:
        n_edges = int(np.count_nonzero(model.adjacency_))
        print(f"learned {n_edges} edge{'' if n_edges == 1 else 's'} among {len(names)} nodes from {shape[0]} samples "
              f"in {model.fit_time_:.2f} s ({model.n_iter_} {'swaps' if run.solver == 'topo' else 'iterations'}"
              f"{', stopped early' if model.stopped_ else ''})")
        if manifest["results"]["metrics"]:
            m = manifest["results"]["metrics"]
            print("metrics: " + ", ".join(f"{k}={m[k]}" for k in ("shd", "tpr", "fdr", "sid") if k in m))
        print(f"wrote {', '.join(written)} to {_printable(out.path)}")
    return 0


# --------------------------------------------------------------------------------------------
# simulate
# --------------------------------------------------------------------------------------------

def _cmd_simulate(args):
    from colide_core.graph.export import to_adjacency_csv, to_csv_safe
    from colide_core.run.manifest import environment_info
    from colide_core.data.simulate import check_interventions, check_spec, simulate_dataset

    spec = {"graph": args.graph, "degree": args.degree, "n_nodes": args.nodes, "n_samples": args.samples,
            "noise": args.noise, "variance": args.variance, "noise_var": args.noise_var,
            "noise_var_range": args.noise_var_range, "w_range": args.w_range, "standardize": args.standardize}
    names = [f"X{i + 1}" for i in range(args.nodes)]
    interventions = _simulate_interventions(args, names)
    try:  # the protocol's own checks and size limits, before any work
        check_interventions(interventions, check_spec(spec)["n_nodes"], args.samples)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    data_name = "data.csv" if args.format == "csv" else "data.parquet"
    files = [data_name, "B_true.csv", "W_true.csv", "noise_std.csv", "simulation.json"]
    if interventions:
        files.insert(-1, "targets.json")
    out = OutputDir(args.out, force=args.force)
    out.check(files)
    sim = simulate_dataset(spec, args.seed, interventions=interventions)
    df = pd.DataFrame(sim.X, columns=names)
    if sim.conditions is not None:  # the condition column last; targets by node name
        df["condition"] = sim.conditions
        targets = {label: [names[j] for j in nodes] for label, nodes in sim.targets.items()}
        out.write("targets.json", json.dumps(targets, indent=1) + "\n")
    if args.format == "csv":
        out.write(data_name, lambda fh: to_csv_safe(df, fh, index=False))
    else:
        out.write(data_name, lambda fh: df.to_parquet(fh, index=False))
    out.write("B_true.csv", to_adjacency_csv(sim.B_true, names))
    out.write("W_true.csv", to_adjacency_csv(sim.W_true, names))
    out.write("noise_std.csv", _csv_text(pd.DataFrame({"node": names, "noise_std": sim.noise_std})))
    meta = {"spec": sim.spec, "seed": args.seed, "n_edges": int(np.count_nonzero(sim.B_true)),
            "files": files[:-1], "environment": environment_info()}
    out.write("simulation.json", json.dumps(meta, indent=1) + "\n")
    extra = "" if sim.conditions is None else \
        f" and {len(sim.targets) - 1} interventional conditions of {interventions.get('n_per_condition') or args.samples}"
    print(f"simulated {args.samples} samples{extra} of a {args.graph.upper()}{args.degree:g} DAG with "
          f"{args.nodes} nodes and {meta['n_edges']} edges ({args.noise} noise, {args.variance}); "
          f"wrote {', '.join(files)} to {_printable(out.path)}")
    return 0


def _simulate_interventions(args, names):
    """The ``interventions`` mapping of ``simulate_dataset`` from the ``simulate`` flags (None: none).

    ``--intervene`` names nodes as the data file does (X1..Xd); an unknown name is a UsageError.
    """
    if args.intervene is None and not args.interventions:
        return None
    iv = {"n_targets": args.targets_per_condition, "mean_shift": args.mean_shift,
          "n_per_condition": args.per_condition}
    if args.interventions is not None:
        iv["n_conditions"] = args.interventions
    if args.intervene is not None:
        index = {name: j for j, name in enumerate(names)}
        targets = []
        for text in args.intervene:
            nodes = [v.strip() for v in text.split(",") if v.strip()]
            unknown = [v for v in nodes if v not in index]
            if unknown:
                raise UsageError(f"--intervene names unknown node(s) {unknown[:3]}: the nodes are X1..X{len(names)}")
            targets.append([index[v] for v in nodes])
        iv["targets"] = targets
    return iv


# --------------------------------------------------------------------------------------------
# bench
# --------------------------------------------------------------------------------------------

SETTING_COLUMNS = ("graph", "degree", "n_nodes", "n_samples", "noise", "variance", "noise_var",
                   "noise_var_range", "w_range", "standardize")
#: [data] settings whose one value is a (low, high) pair: a list of pairs is a grid axis.
_PAIR_SETTINGS = ("noise_var_range", "w_range")
SUMMARY_METRICS = ("shd", "shd_norm", "shd_cpdag_norm", "sid_norm", "tpr", "fdr", "nnz", "sigma_rel_err", "time_s")

#: How each summary metric is titled in ``summary.txt``: the normalised distances say so (the
#: dashboard's Compare page shows raw SHD; issue 28 found the two unlabelled side by side).
METRIC_TITLES = {"shd": "SHD (raw count of edge errors, as on the Compare page)",
                 "shd_norm": "SHD / d (divided by the number of nodes, as in the paper's figures)",
                 "shd_cpdag_norm": "SHD-C / d (CPDAG distance divided by the number of nodes)",
                 "sid_norm": "SID / d (divided by the number of nodes)",
                 "tpr": "TPR", "fdr": "FDR", "nnz": "NNZ (edges learned)",
                 "sigma_rel_err": "relative error of the noise scale", "time_s": "fit time (s)"}


def load_bench_config(path):
    """Read and check a bench TOML file.

    Parameters
    ----------
    path : Path

    Returns
    -------
    dict
        ``{"seeds": list of int, "grid": list of dataset dicts, "methods": {label: (method, params)},
        "out": str or None, "retries": int or None}``.

    Raises
    ------
    UsageError
        For a missing file, TOML syntax errors, unknown tables/keys, unknown methods or
        parameters, empty grids, a data setting outside :func:`colide_core.data.simulate.check_spec`
        (and its size limits), CoLiDE parameters its own checks refuse, a sweep of more than
        ``MAX_SWEEP_RUNS`` runs (counted before the grid is built), a method label that is not a
        plain printable name, or a ``[bench].out`` that is absolute or holds ``..``. Messages
        name the offending key.
    """
    from colide_core.evaluation.baselines import METHODS
    from colide_core.run.executor import MAX_RETRIES
    from colide_core.data.simulate import DATASET_DEFAULTS, check_spec

    if not path.is_file():
        raise UsageError(f"config file not found: {path}")
    try:
        cfg = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path.name}: invalid TOML: {exc}") from None
    unknown = set(cfg) - {"bench", "data", "methods"}
    if unknown:
        raise UsageError(f"{path.name}: unknown table(s) {sorted(unknown)}; expected [bench], [data], [methods.NAME]")
    bench = cfg.get("bench", {})
    bad = set(bench) - {"seeds", "n_seeds", "out", "retries", "name"}
    if bad:
        raise UsageError(f"{path.name}: unknown key(s) in [bench]: {sorted(bad)}")
    def is_int(x):
        return isinstance(x, int) and not isinstance(x, bool)

    if "seeds" in bench:
        seeds = bench["seeds"]
        if (not isinstance(seeds, list) or not seeds
                or not all(is_int(x) and 0 <= x < 2**32 for x in seeds)):
            raise UsageError(f"{path.name}: [bench].seeds must be a non-empty list of integers in [0, 2**32)")
        n_seeds = len(seeds)
    else:
        n_seeds = bench.get("n_seeds", 1)
        if not is_int(n_seeds) or n_seeds < 1:
            raise UsageError(f"{path.name}: [bench].n_seeds must be an integer >= 1")
        seeds = None  # built once the size of the sweep is known to be within the limit
    if "name" in bench:
        check_plain_name(bench["name"], f"{path.name}: [bench].name")
    out_dir = bench.get("out")
    if out_dir is not None:
        if not isinstance(out_dir, str) or not out_dir.strip():
            raise UsageError(f"{path.name}: [bench].out must be a directory name (a string)")
        parts = Path(out_dir).parts
        if Path(out_dir).is_absolute() or ".." in parts or "\\" in out_dir or any(
                not c.isprintable() for c in out_dir):
            raise UsageError(f"{path.name}: [bench].out {_printable(repr(out_dir))} must be a relative path inside "
                             "the config's directory (no '..', not absolute); give another place with --out")
    retries = bench.get("retries")
    if retries is not None and not (is_int(retries) and 0 <= retries <= MAX_RETRIES):
        raise UsageError(f"{path.name}: [bench].retries must be an integer in [0, {MAX_RETRIES}], got {retries!r}")

    data = cfg.get("data", {})
    bad = set(data) - set(DATASET_DEFAULTS)
    if bad:
        raise UsageError(f"{path.name}: unknown key(s) in [data]: {sorted(bad)}; known: {list(DATASET_DEFAULTS)}")
    def axis(key, v):
        if key in _PAIR_SETTINGS and isinstance(v, list) and not any(isinstance(x, list) for x in v):
            return [v]  # one (low, high) pair
        return v if isinstance(v, list) else [v]

    axes = {k: axis(k, v) for k, v in data.items()}
    empty = [k for k, v in axes.items() if not v]
    if empty:
        raise UsageError(f"{path.name}: [data].{empty[0]} is an empty list")
    methods_cfg = cfg.get("methods", {})
    # The size of the sweep, from the lengths alone: nothing is built before it is known.
    n_settings = math.prod(len(v) for v in axes.values())
    n_runs = max(len(methods_cfg), 1) * n_settings * n_seeds
    if n_runs > defaults.MAX_SWEEP_RUNS:
        raise UsageError(f"{path.name}: the sweep has {n_runs:,} runs ({len(methods_cfg)} methods x "
                         f"{n_settings:,} data settings x {n_seeds:,} seeds), more than the "
                         f"{defaults.MAX_SWEEP_RUNS:,} allowed (colide_core.defaults.MAX_SWEEP_RUNS); "
                         "split it into several sweeps")
    if seeds is None:
        seeds = list(range(n_seeds))
    grid = [dict(zip(axes, combo)) for combo in itertools.product(*axes.values())]
    for spec in grid:
        try:
            s = check_spec(spec)
        except ValueError as exc:
            raise UsageError(f"{path.name}: bad [data] setting {spec}: {exc}") from None
        if s["n_nodes"] < 2 or s["n_samples"] < 2:
            raise UsageError(f"{path.name}: [data] n_nodes and n_samples must be integers >= 2, got {spec}")

    if not methods_cfg:
        raise UsageError(f"{path.name}: no methods: add at least one [methods.NAME] table "
                         f"(registered: {', '.join(METHODS)})")
    methods = {}
    for label, table in methods_cfg.items():
        check_plain_name(label, f"{path.name}: method label")
        if not isinstance(table, dict):
            raise UsageError(f"{path.name}: methods.{label} must be a table")
        params = dict(table)
        name = params.pop("method", label)
        if name not in METHODS:
            raise UsageError(f"{path.name}: [methods.{label}]: unknown method {name!r}; "
                             f"registered: {', '.join(METHODS)}")
        unknown_p = sorted(set(params) - set(METHODS[name].defaults))
        if unknown_p:
            raise UsageError(f"{path.name}: [methods.{label}]: unknown parameter(s) {unknown_p} for {name}; "
                             f"accepted: {', '.join(METHODS[name].defaults) or 'none'}")
        if name in ("CoLiDE-EV", "CoLiDE-NV"):  # the estimator's own checks, before any run
            from colide_core.solver._estimator import CoLiDE
            from colide_core._params import InvalidParameterError

            try:
                CoLiDE(name[-2:].lower(), **{**METHODS[name].defaults, **params}).get_run_settings()
            except InvalidParameterError as exc:
                raise UsageError(f"{path.name}: [methods.{label}]: {exc}") from None
        methods[label] = (name, params)
    return {"seeds": seeds, "grid": grid, "methods": methods, "out": out_dir, "retries": retries}


def bench_tasks(config):
    """Tasks of a bench config: every method x data setting x seed (see :func:`load_bench_config`)."""
    from colide_core.run.executor import make_task, synthetic_task

    tasks = []
    for label, (name, params) in config["methods"].items():
        for spec in config["grid"]:
            for seed in config["seeds"]:
                tasks.append(make_task(synthetic_task, method=name, params=params, dataset=spec, seed=seed,
                                       meta={"label": label}))
    return tasks


def summarize(df, metrics=SUMMARY_METRICS):
    """Mean, std and count of each metric per method label and data setting.

    Parameters
    ----------
    df : pandas.DataFrame
        Tidy results (one row per run) with ``label``, the setting columns,
        ``status`` and metric columns.
    metrics : sequence of str

    Returns
    -------
    long : pandas.DataFrame
        Columns: setting columns, ``label``, ``metric``, ``mean``, ``std``,
        ``n`` (successful runs), ``n_failed``.
    """
    settings = [c for c in SETTING_COLUMNS if c in df.columns]
    # (low, high) pairs arrive as lists (JSON); tuples can be grouped on.
    df = df.assign(**{c: df[c].map(lambda v: tuple(v) if isinstance(v, list) else v)
                      for c in settings if c in _PAIR_SETTINGS})
    ok = df[df["status"] == "ok"] if "status" in df.columns else df
    metrics = [m for m in metrics if m in df.columns]
    long = ok.melt(id_vars=settings + ["label"], value_vars=metrics, var_name="metric")
    long["value"] = pd.to_numeric(long["value"], errors="coerce")
    out = (long.groupby(settings + ["label", "metric"], sort=False, dropna=False)["value"]
           .agg(mean="mean", std="std", n="count").reset_index())
    failed = (df[df["status"] != "ok"].groupby(settings + ["label"], dropna=False).size()
              .rename("n_failed").reset_index()) if "status" in df.columns else None
    if failed is not None and len(failed):
        out = out.merge(failed, on=settings + ["label"], how="left")
    out["n_failed"] = out.get("n_failed", pd.Series(0, index=out.index)).fillna(0).astype(int)
    return out


def paper_layout(summary):
    """Text tables in the paper's layout: one block per metric, rows = settings, columns = methods.

    Parameters
    ----------
    summary : pandas.DataFrame
        Output of :func:`summarize`.

    Returns
    -------
    str
        Cells read ``mean ± std`` over seeds.
    """
    # Rows: the settings that vary in this sweep (n_nodes when none does).
    settings = [c for c in SETTING_COLUMNS if c in summary.columns and summary[c].nunique(dropna=False) > 1]
    settings = settings or ["n_nodes"]
    blocks = []
    for metric, part in summary.groupby("metric", sort=False):
        cell = part.assign(cell=[f"{m:.3g} ± {s:.2g}" if pd.notna(s) else (f"{m:.3g}" if pd.notna(m) else "—")
                                 for m, s in zip(part["mean"], part["std"])])
        table = cell.pivot_table(index=settings, columns="label", values="cell", aggfunc="first", sort=False)
        blocks.append(f"== {METRIC_TITLES.get(metric, metric)} (mean ± std over seeds) ==\n{table.to_string()}\n")
    return "\n".join(blocks)


#: Written when a sweep starts: only a folder holding it (and ``results.jsonl``) is resumed, so
#: another tool's ``results.jsonl`` and a user's ``summary.csv`` are never taken for ours.
BENCH_MARKER = ".colide-bench.json"
#: Files ``bench`` writes at the end; they are derived from ``results.jsonl``.
BENCH_OUTPUTS = ("results.parquet", "results.csv", "summary.csv", "summary.txt", "bench.json")


def _check_device(device, solver):
    """A ``--device`` this machine cannot run, as a usage error before any file is read.

    ``gpu`` without JAX or a GPU, and ``topo`` on the JAX backend, are refused here
    (:func:`colide_core.solver._jax.device_solver`); ``cpu`` never imports JAX.
    """
    if device == "cpu":
        return
    from colide_core.exceptions import DeviceNotSupportedError, DeviceUnavailableError
    from colide_core.solver._jax import device_solver

    try:
        device_solver(solver, device)
    except (DeviceUnavailableError, DeviceNotSupportedError) as exc:
        raise UsageError(f"--device {device}: {exc}") from None


def _cmd_bench(args):
    from colide_core.run.executor import ResultStore, run_sweep
    from colide_core.run.manifest import environment_info

    config = load_bench_config(args.config)
    if args.device is not None:  # every CoLiDE method on this device (the task keys record it)
        for name, params in config["methods"].values():
            if name in ("CoLiDE-EV", "CoLiDE-NV"):
                params["device"] = args.device
    if args.out is not None:
        out_path = args.out
    elif config["out"]:
        out_path = args.config.parent / config["out"]  # relative to the config file, never above it
        # issue 30: '..' is refused by name, and a symbolic link along the path must not lead out either
        base = args.config.parent.resolve()
        if not out_path.resolve().is_relative_to(base):
            raise UsageError(f"{args.config.name}: [bench].out {_printable(repr(config['out']))} leads outside the "
                             "config's directory (through a symbolic link); give another place with --out")
    else:
        out_path = args.config.with_name(args.config.stem + "_results")
    retries = next(r for r in (args.retries, config["retries"], 3) if r is not None)
    store_path = out_path / "results.jsonl"
    for name in ("results.jsonl", "results.jsonl.lock"):
        if (out_path / name).is_symlink():
            raise UsageError(f"{out_path / name} is a symbolic link; bench writes only inside {out_path}")
    # A directory holding our marker and results.jsonl is this bench's own: resuming rewrites the
    # summaries derived from it. Anywhere else an existing output needs --force (then a foreign
    # results.jsonl is replaced, never appended to). The config is never written over.
    marker = out_path / BENCH_MARKER
    resume = store_path.is_file() and marker.is_file() and not marker.is_symlink()
    if store_path.exists() and not resume and not args.force:
        raise UsageError(f"{store_path} exists but is not a colide bench sweep (no {BENCH_MARKER}); pass --force "
                         "to replace it, or choose another --out")
    out = OutputDir(out_path, force=args.force, inputs=[args.config],
                    replaceable=BENCH_OUTPUTS if resume else ())
    out.check(BENCH_OUTPUTS if resume else BENCH_OUTPUTS + ("results.jsonl", BENCH_MARKER))
    for name in ("results.jsonl", "results.jsonl.lock"):
        if _same_file(out_path / name, args.config):
            raise UsageError(f"refusing to write {out_path / name}: it is the config file")
    tasks = bench_tasks(config)
    out_path.mkdir(parents=True, exist_ok=True)
    if not resume:
        if store_path.exists():  # --force over a results.jsonl that is not ours
            store_path.unlink()
        out.write(BENCH_MARKER, json.dumps({"format": "colide-bench-sweep", "version": 1}) + "\n")
    store = ResultStore(store_path)
    bar = ProgressBar(len(tasks), label="bench")
    failures = []

    def progress(done, total, row):
        if row.get("status") != "ok":
            failures.append(row)
        bar.update(done, suffix=f"{done}/{total} {row.get('label', '')}")
        return False

    address = args.scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS") or None
    where = f"Dask scheduler {address}" if address else f"joblib (n_jobs={args.jobs})"
    print(_printable(f"bench: {len(tasks)} runs ({len(config['methods'])} methods x {len(config['grid'])} settings "
                     f"x {len(config['seeds'])} seeds) on {where}; results in {out_path}"), file=sys.stderr)
    t0 = time.perf_counter()
    try:
        res = run_sweep(tasks, store=store, scheduler=address, n_jobs=args.jobs, retries=retries,
                        callback=progress)
    except OSError as exc:
        raise UsageError(str(exc)) from None
    except RuntimeError as exc:  # workers kept dying, or another sweep holds the store
        raise RunFailed(str(exc)) from None
    finally:
        bar.close()
    wall = time.perf_counter() - t0
    df = res.to_frame()
    if "W" in df.columns:
        df = df.drop(columns=["W"])
    out.write("results.parquet", lambda fh: df.to_parquet(fh, index=False))
    out.write("results.csv", _csv_text(df))
    summary = summarize(df)
    out.write("summary.csv", _csv_text(summary))
    out.write("summary.txt", paper_layout(summary))
    meta = {"config": str(args.config), "n_runs": len(res.rows), "n_computed": res.n_computed,
            "n_cached": res.n_cached, "n_resubmitted": res.n_resubmitted, "n_failed": int((df["status"] != "ok").sum()),
            "backend": res.backend, "scheduler": address, "wall_seconds": wall,
            "runs_per_second": (res.n_computed / wall) if wall > 0 else None,
            "environment": environment_info()}
    out.write("bench.json", json.dumps(meta, indent=1) + "\n")
    print(f"bench: {res.n_computed} runs computed, {res.n_cached} reused, {meta['n_failed']} failed, "
          f"in {wall:.1f} s; wrote {', '.join(BENCH_OUTPUTS)} to {_printable(out_path)}")
    for row in failures[:5]:
        print(_printable(f"failed: {row.get('label')} seed={row.get('seed')}: {row.get('error')}"), file=sys.stderr)
    return 0


# --------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------

def _cmd_report(args):
    from colide_core import CoLiDE
    from colide_core._params import InvalidParameterError
    from colide_core.evaluation.checks import run_checks
    from colide_core.run.manifest import ManifestError, build_manifest, load_manifest
    from colide_core.graph.reference import read_reference
    from colide_core.render.report import ReportFit, build_report

    import importlib.util  # the report draws (jinja2, plotly, pyvis, matplotlib) and tests (causal-learn)
    for module in ("jinja2", "plotly", "pyvis", "matplotlib", "causallearn"):
        if importlib.util.find_spec(module) is None:  # say so before the fit, naming the extra with them all
            from colide_core.exceptions import MissingExtraError

            raise MissingExtraError(module, "the report", extra="dashboard")
    if args.truth is not None and args.reference is not None:
        raise UsageError("give --truth or --reference, not both")
    if args.targets is not None and args.conditions is None:
        raise UsageError("--targets needs --conditions (the column of each row's condition)")
    inputs = [Path(args.data)] + [p for p in (args.manifest, args.truth, args.reference, args.targets)
                                  if p is not None]
    out = OutputDir(args.out, force=args.force, inputs=inputs)
    out.check(["report.html"])
    t0 = time.perf_counter()
    # a manifest's own steps from the raw file (rows and columns dropped, transforms) come first, so that
    # `report --manifest` works for any `fit --transform ...` run (issue 28)
    man, drops, steps = None, {"drop_non_numeric": args.drop_non_numeric}, []
    if args.manifest is not None:
        if not args.manifest.is_file():
            raise UsageError(f"--manifest file not found: {args.manifest}")
        try:
            man = load_manifest(args.manifest.read_bytes())
        except (ManifestError, ValueError) as exc:
            raise UsageError(f"--manifest {args.manifest.name}: {exc}") from None
        pre = dict((man.raw.get("extra") or {}).get("preprocess") or {})
        drops = {k: bool(pre.get(k)) or bool(drops.get(k)) for k in
                 ("drop_non_numeric", "drop_nonfinite_rows", "drop_constant_columns")}
        steps = list(man.transform or [])
    labels = targets = None
    if args.conditions is None:
        if man is not None and man.conditions:
            raise UsageError(f"--manifest {args.manifest.name}: this fit was made with conditions: give --conditions "
                             "COLUMN (the column of each row's condition)")
        vd = _read_data(Path(args.data), args.columns, **drops)
    else:
        vd, labels = _read_data(Path(args.data), args.columns, condition_column=args.conditions, **drops)
        if args.targets is not None:
            targets = _read_targets_file(args.targets)
        elif man is not None and man.conditions:
            targets = {k: list(v) for k, v in (man.conditions.get("targets") or {}).items() if v} or None
    for w in vd.warnings:
        print(f"warning: {_printable(w)}", file=sys.stderr)
    X = pd.DataFrame(vd.X, columns=vd.node_names)
    if steps:
        from colide_core.data.transforms import transform_columns

        try:
            for step in steps:
                X = transform_columns(X, step["kind"], cofactor=step.get("cofactor"))
        except (KeyError, ValueError) as exc:
            raise UsageError(f"--manifest {args.manifest.name}: its transform cannot be applied: {exc}") from None
    names = vd.node_names
    B_true, label = None, "ground truth"
    if args.truth is not None:
        B_true = _read_truth(args.truth, names)
    if args.reference is not None:
        if not args.reference.is_file():
            raise UsageError(f"--reference file not found: {args.reference}")
        try:
            B_true = read_reference(args.reference.read_bytes(), args.reference.name, names).B
        except ValueError as exc:
            raise UsageError(f"--reference {args.reference.name}: {exc}") from None
        label = "your reference"
    if man is not None:
        try:
            man.check_data(X)
            est = man.estimator()
        except (ManifestError, ValueError) as exc:
            raise UsageError(f"--manifest {args.manifest.name}: {exc}") from None
        params = est.get_params()
        fit = ReportFit(params["variant"].upper(), man.W, man.adjacency, man.sigma, params, man.raw)
        try:  # issue 30: the refits of the checks are bounded like the dashboard's (a manifest may ask for more)
            from colide_core.settings import INTERACTIVE

            est.get_run_settings(INTERACTIVE)
        except InvalidParameterError as exc:
            print(f"warning: the manifest's settings exceed the report's limits for refits, so the standardise "
                  f"and rescaling checks are skipped: {_printable(str(exc))}", file=sys.stderr)
            est = None
    else:
        est = CoLiDE(args.variant, lambda1=args.lambda1, threshold=args.threshold, random_state=args.seed)
        try:
            est.get_run_settings()
        except InvalidParameterError as exc:
            raise UsageError(str(exc)) from None
        from colide_core.exceptions import ConditionsError

        try:
            if labels is None:
                est.fit(X)
            else:
                est.fit(X, conditions=labels, targets=targets)
        except ConditionsError as exc:
            raise UsageError(f"--conditions/--targets: {exc}") from None
        fit = ReportFit(args.variant.upper(), est.W_, est.adjacency_, est.sigma_, est.get_params(),
                        build_manifest(est, X, data_source=str(args.data),
                                       extra={"command": "report", "argv": sys.argv[1:]},
                                       **({} if labels is None else
                                          {"conditions": labels, "conditions_column": args.conditions})))
    try:
        checks = run_checks(X, fit.A, W=fit.W, estimator=est, n_random=args.random_graphs,
                            n_rescale=args.rescalings, random_state=args.seed, conditions=labels, targets=targets)
    except ValueError as exc:  # conditions or targets that do not fit these rows (ConditionsError)
        if labels is None:
            raise
        raise UsageError(f"--conditions/--targets: {exc}") from None
    path = None
    if args.path:  # the fit's noise model, solver and prior knowledge along the default lambda grid
        from colide_core.solver.path import lambda_path

        path = lambda_path(X, variant=fit.params["variant"], conditions=labels, targets=targets,
                           **{k: fit.params[k] for k in ("solver", "forbidden", "required", "tiers")
                              if fit.params.get(k) is not None})
    html = build_report(X, [fit], dataset_name=Path(args.data).name, B_true=B_true, reference_label=label,
                        checks=checks, path=path, conditions=labels, targets=targets)
    target = out.write("report.html", html)
    print(f"wrote {_printable(target)} ({len(html) / 1e6:.1f} MB) in {time.perf_counter() - t0:.1f} s: "
          + "; ".join(f"{row.check}: {row.verdict}" for row in checks.verdicts().itertuples()))
    return 0


# --------------------------------------------------------------------------------------------
# entry point
# --------------------------------------------------------------------------------------------

def main(argv=None):
    """Run the CLI; returns the exit status (0 ok, 1 run failed, 2 usage error, 130 interrupted).

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name (default ``sys.argv[1:]``).
    """
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)  # exits with status 2 on bad arguments
    if rest and args.command != "app":  # `app` passes the options it does not know to streamlit
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    from colide_core.run import app

    commands = {"fit": _cmd_fit, "simulate": _cmd_simulate, "bench": _cmd_bench, "report": _cmd_report,
                "app": lambda args: app.run(args, rest)}
    try:
        return commands[args.command](args)
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the one handler: a message, never a traceback
        status, message = _error_message(exc)
        parser.exit(status, _printable(f"{PROG} {args.command}: error: {message}") + "\n")


def _error_message(exc):
    """Exit status and message for an exception that ended a command.

    2 for anything caused by the arguments, files, data or configuration (the default, for
    unexpected exceptions too: they come from what the user gave); 1 when the computation
    itself failed (:class:`RunFailed`, the solver's FloatingPointError, a linear-algebra error).
    """
    if isinstance(exc, UsageError):
        return 2, str(exc)
    if isinstance(exc, (RunFailed, FloatingPointError, np.linalg.LinAlgError)):
        return 1, f"the run failed: {exc}"
    if isinstance(exc, (ValueError, OSError)):  # bad data (colide_core.data.io, pandas, pyarrow), bad files
        return 2, str(exc) or type(exc).__name__
    if isinstance(exc, ModuleNotFoundError):  # an optional package: name the extra that installs it
        from colide_core.exceptions import MissingExtraError

        missing = exc if isinstance(exc, MissingExtraError) else MissingExtraError.from_error(exc)
        if missing is not None:
            return 2, str(missing)
    return 2, f"unexpected {type(exc).__name__}: {exc}"
