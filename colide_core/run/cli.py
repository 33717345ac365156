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
    (condition -> node names). ``--network ecoli70`` (or ``magic-niab``, ``magic-irri``,
    ``arth150``) draws ``--samples`` rows of a bnlearn repository network instead
    (:func:`colide_core.data.networks.load_network`, the ``networks`` extra) and writes the same
    files, in the network's own units and node names.
``bench CONFIG.toml``
    Run methods x data settings x seeds through :func:`colide_core.run.executor.run_sweep`
    (joblib, or Dask with ``--scheduler``/``DASK_SCHEDULER_ADDRESS``).
    Rows stream into ``results.jsonl``, so a killed bench resumes where it
    stopped; at the end ``results.parquet``, ``results.csv``, ``summary.csv``
    and ``summary.txt`` (mean +- std per method, the paper's layout) and
    ``bench.json`` are written.

``report DATA --out DIR``
    Write ``report.html``, a self-contained offline report (:mod:`colide_core.render.report`): the
    fit recorded in ``--manifest``, or a new fit with the run settings (the same flags as ``fit``);
    model checks, edge evidence, and curves against ``--truth`` (adjacency CSV) or ``--reference``
    (edge list, GraphML, DOT, JSON or DAGitty). ``--conditions COLUMN`` (and ``--targets FILE``)
    fit and check with an intercept per condition and the targets masked, and add the report's
    section per condition.

``predict DATA --out DIR (--do NODE=V | --shift NODE=K)``
    Predict every node's mean under an intervention (:mod:`colide_core.evaluation.interventions`)
    from a new fit with the run settings, or from the fit of ``--manifest``; writes
    ``prediction.csv`` and ``manifest.json``.

``plan DATA [--conditions COLUMN --targets FILE | --manifest M] [--out plan.csv]``
    Rank the nodes one could intervene on next by the expected number of edge directions the
    experiment would settle (:func:`colide_core.evaluation.planning.rank_interventions`, over
    ``--n-bootstrap`` refits with the design; ``docs/planning.md``); prints the ranking and, with
    ``--out``, writes it as CSV.

``report``, ``predict`` and ``plan`` take the run settings exactly as ``fit`` does: one flag per
row of :data:`colide_core.settings.SETTINGS` (:func:`_add_setting_arguments`). Every command
refuses a setting given to a solver that ignores it (``--topo-sizes`` with ``--solver fast``;
:func:`colide_core.settings.check_solver_reads`). With ``--manifest M`` they take the fit's
settings, its design (condition column, targets) and its preprocessing (rows and columns dropped,
transform) from the manifest, check them against the data's fingerprint, and refuse a settings
flag next to it (issue 47).

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

Modules
-------
This module holds the parser (:func:`build_parser`: the settings flags come from
:data:`colide_core.settings.SETTINGS`), the entry point :func:`main` and its one error handler;
it imports neither numpy nor pandas, so ``colide --help`` is quick (the commands are imported after
parsing). The commands' bodies are in :mod:`colide_core.run.commands` (``fit``, ``simulate``,
``bench``) and :mod:`colide_core.run.design_commands` (``report``, ``predict``, ``plan``), their
inputs read by :mod:`colide_core.run.inputs` (``app`` in :mod:`colide_core.run.app`), the bench TOML schema and summaries in
:mod:`colide_core.run.bench_config`, the output folder, the progress bar and the two errors in
:mod:`colide_core.run.outputs`; their public names are importable from here too.
"""
from __future__ import annotations

import argparse
import importlib
import math
import sys
from pathlib import Path

from colide_core import defaults

#: ``simulate --network`` choices: the keys of :data:`colide_core.data.networks.NETWORKS`, spelled out so
#: that parsing imports no numpy (tests/test_cli_network.py checks they agree).
NETWORK_NAMES = ("ecoli70", "magic-niab", "magic-irri", "arth150")
#: ``simulate`` options (dests) that shape a random SEM: ``--network``, whose SEM is given, refuses them.
RANDOM_SEM_FLAGS = ("nodes", "degree", "graph", "noise", "variance", "noise_var", "noise_var_range", "w_range",
                    "standardize")

__all__ = ["main", "build_parser", "PROG", "UsageError", "RunFailed", "OutputDir", "ProgressBar",
           "check_plain_name", "MAX_NAME_CHARS", "load_bench_config", "bench_tasks", "summarize",
           "paper_layout", "SUMMARY_METRICS", "BENCH_MARKER", "BENCH_OUTPUTS"]

#: Names re-exported from the modules the CLI was split into (the CLI's names, as before the
#: split), imported on first use (PEP 562): ``colide --help`` imports neither numpy nor pandas.
_REEXPORTED = {**dict.fromkeys(("BENCH_MARKER", "BENCH_OUTPUTS", "SUMMARY_METRICS", "bench_tasks",
                                "load_bench_config", "paper_layout", "summarize"), "bench_config"),
               **dict.fromkeys(("MAX_NAME_CHARS", "OutputDir", "ProgressBar", "RunFailed", "UsageError",
                                "_printable", "check_plain_name"), "outputs")}


def __getattr__(name):
    if name in _REEXPORTED:
        return getattr(importlib.import_module(f"colide_core.run.{_REEXPORTED[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


PROG = "python -m colide_core"


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
    if not math.isfinite(v) or v < 0:
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


def _add_setting_arguments(parser, note=""):
    """One argument per run setting that has a CLI flag (:data:`colide_core.settings.SETTINGS`).

    An argument not given is absent from the parsed namespace (``argparse.SUPPRESS``), so the
    library's default applies: :func:`_settings_of` collects the given ones. ``fit``, ``report``,
    ``predict`` and ``plan`` all take them from here (issue 47: three commands declared
    ``--variant``, ``--lambda1`` and ``--threshold`` by hand, and ``--solver`` reached ``fit`` only).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        A command's parser.
    note : str, optional
        Appended to every help line (``"; not with --manifest"``).
    """
    from colide_core.settings import SETTINGS, Options, solvers_reading

    for row in SETTINGS:
        if row.flag is None:
            continue
        default = "none" if row.default is None else row.format(row.default)
        readers = solvers_reading(row.name)
        only = "" if set(readers) == set(defaults.SOLVERS) else f"; --solver {' or '.join(readers)} only"
        kw = {"dest": row.name, "default": argparse.SUPPRESS, "help": f"{row.help} (default {default}{only}{note})"}
        if isinstance(row.constraint, Options):
            kw["choices"] = list(row.constraint.values)
        else:
            kw["type"] = _setting_type(row)
        if row.metavar:
            kw["metavar"] = row.metavar
        parser.add_argument(row.flag, **kw)


def _add_data_arguments(parser, design_note=""):
    """The data's flags of ``fit``, ``report``, ``predict`` and ``plan``, declared once.

    ``--columns``, the dropping flags, ``--prior``, ``--conditions``, ``--targets``, ``--transform``
    and ``--cofactor``: :func:`colide_core.run.inputs.prepare_data` reads them all, the same way in
    the four commands, and with ``--manifest`` the recorded ones fill in what is not given (issue 47:
    ``predict`` and ``plan`` lacked the transform and the dropping flags, so a fit made with them could
    be predicted from only through its manifest).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        A command's parser.
    design_note : str, optional
        What the command does with the design, appended to ``--conditions``' help.
    """
    parser.add_argument("--columns", type=lambda s: [c.strip() for c in s.split(",") if c.strip()],
                        default=None, metavar="A,B,...", help="use only these columns (nodes), in this order")
    parser.add_argument("--drop-non-numeric", action="store_true", help="ignore text columns instead of failing")
    parser.add_argument("--drop-nonfinite-rows", action="store_true",
                        help="drop rows with missing or infinite values instead of failing (recorded in the manifest)")
    parser.add_argument("--drop-constant-columns", action="store_true",
                        help="drop columns holding one repeated value instead of failing (recorded in the manifest)")
    parser.add_argument("--prior", type=Path, default=None, metavar="FILE",
                        help="prior knowledge: a constraints JSON from the Prior knowledge page, or a run manifest "
                             "(its forbidden / required edges and tiers); not with --manifest")
    parser.add_argument("--conditions", default=None, metavar="COLUMN",
                        help="the column holding each row's condition (text or integers; not a node): an "
                             f"intercept per condition (docs/conditions.md){design_note}; default with "
                             "--manifest: the column it records")
    parser.add_argument("--targets", type=Path, default=None, metavar="FILE",
                        help="the nodes each condition intervenes on (masked likelihood; needs --conditions): "
                             "JSON {condition: [node, ...]} (as `simulate` writes) or CSV with condition,target "
                             "columns; default with --manifest: the targets it records")
    parser.add_argument("--transform", choices=("log", "asinh", "standardize"), default=None,
                        help="transform every column before the fit (recorded in the manifest): log (values "
                             "must be > 0), asinh(x / cofactor), or standardize (z-score); CoLiDE is not "
                             "scale-invariant, so the edges change; with --manifest: its transform is replayed")
    parser.add_argument("--cofactor", type=_positive_float, default=None,
                        help="asinh cofactor (default 5, the CyTOF convention; 150 for fluorescence flow)")


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
    sub = p.add_subparsers(dest="command", required=True, metavar="{fit,simulate,bench,report,predict,plan,app}")

    f = sub.add_parser("fit", help="learn a DAG from a CSV/TSV/Parquet table",
                       description="Learn a DAG with CoLiDE. Rows are samples, columns are nodes; "
                                   "W[i, j] != 0 in the outputs means the edge i -> j.")
    f.add_argument("data", help="CSV/TSV/Parquet file (with --stats: also a directory or glob)")
    f.add_argument("--out", required=True, type=Path, help="output directory (created)")
    _add_setting_arguments(f)  # one flag per run setting, from colide_core.settings.SETTINGS
    _add_data_arguments(f)  # the data's flags, as report, predict and plan read them
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
    s.add_argument("--w-range", type=_float_tuple(float, 2), default=defaults.SIM_W_RANGE, metavar="LOW,HIGH",
                   help="edge weight magnitudes, random sign (default %s,%s for ev and nv, as on the Simulate "
                        "page; the paper's nv setting is 0.25,1)" % tuple(f"{v:g}" for v in defaults.SIM_W_RANGE))
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
    s.add_argument("--network", choices=NETWORK_NAMES, default=None,
                   help="draw --samples rows of this bnlearn repository Gaussian network (its true graph and "
                        "SEM, in its own units; needs the 'networks' extra) instead of a random SEM; "
                        "--seed and the intervention flags apply, the graph and noise flags do not")
    # what the random-SEM flags default to, so that `simulate --network` refuses the ones given
    s.set_defaults(random_sem_defaults={k: s.get_default(k) for k in RANDOM_SEM_FLAGS})

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
    _add_predict_parser(sub)
    _add_plan_parser(sub)
    from colide_core.run import app  # `app`: the dashboard, `streamlit run` of the installed app.py

    app.add_parser(sub)
    return p


def _add_predict_parser(sub):
    q = sub.add_parser("predict", help="predict what an intervention does to every node",
                       description="Fit CoLiDE (with the design, when given) and predict every node's mean "
                                   "under do(NODE = VALUE) or a shift of NODE by K of its standard deviations, "
                                   "next to what regression on NODE would predict; writes prediction.csv with, per "
                                   "node: reference_mean and reference_sd (the first condition's rows, or all), "
                                   "predicted_mean, shift (data units) and shift_sd (in the node's sd), low and "
                                   "high (the bootstrap interval of the shift, not of the mean; empty without "
                                   "--bootstrap) and associational_shift (what regression on NODE predicts). "
                                   "An intervention more than 1e6 sd from the data is refused before the fit.")
    q.add_argument("data", help="CSV/TSV/Parquet file (rows = samples, columns = nodes)")
    q.add_argument("--out", required=True, type=Path, help="output directory (created)")
    what = q.add_mutually_exclusive_group(required=True)
    what.add_argument("--do", metavar="NODE=VALUE", help="set NODE to VALUE (data units): a hard intervention")
    what.add_argument("--shift", metavar="NODE=K", help="shift NODE's own mean by K of its standard deviations")
    _add_manifest_argument(q, "predict from that fit (its thresholded W as recorded)")
    _add_setting_arguments(q, "; not with --manifest")  # one flag per run setting, as `fit`
    _add_data_arguments(q, " (with --conditions the prediction starts from the first condition's means)")
    q.add_argument("--bootstrap", type=_int_in(0, 1000), default=0, metavar="B",
                   help="refits on resampled rows (within conditions) for the intervals (default 0)")
    q.add_argument("--level", type=_positive_float, default=0.9, help="coverage of the intervals (default 0.9)")
    q.add_argument("--seed", type=_seed, default=0, help="seed of the resampling (default 0)")
    q.add_argument("--weights", choices=defaults.PREDICT_WEIGHTS, default=defaults.PREDICT_WEIGHTS[0],
                   help="the SEM's weights: by the noise model (auto, the default: the fit's own weights on NV, "
                        "least squares on EV, as measured in docs/predict.md), least squares on the learned "
                        "parents (refit), or the fit's own L1-shrunk weights (fit)")
    q.add_argument("--baseline", choices=("none", "ges-ida"), default="none",
                   help="add GES + IDA's possible shifts (causal-learn's GES, then local IDA) as columns of "
                        "prediction.csv: the scale-free baseline (docs/predict.md; GES takes seconds)")
    q.add_argument("--force", action="store_true", help="replace an existing prediction.csv")


def _add_plan_parser(sub):
    q = sub.add_parser("plan", help="rank single-node interventions: which experiment next",
                       description="Rank the nodes one could intervene on next by the expected number of edge "
                                   "directions the experiment would settle, over bootstrap refits of CoLiDE "
                                   "(with the design, when given); prints the ranking, and writes it with --out "
                                   "(docs/planning.md).")
    q.add_argument("data", help="CSV/TSV/Parquet file (rows = samples, columns = nodes)")
    q.add_argument("--out", type=Path, default=None, metavar="FILE.csv", help="also write the ranking as CSV")
    _add_manifest_argument(q, "rank with that fit's settings")
    _add_setting_arguments(q, "; not with --manifest")  # one flag per run setting, as `fit`
    _add_data_arguments(q, " (the targets: the experiments already run)")
    q.add_argument("--n-bootstrap", type=_int_in(0, 1000), default=defaults.PLAN_BOOTSTRAP, metavar="B",
                   help=f"refits on rows resampled within conditions (default {defaults.PLAN_BOOTSTRAP}; "
                        "0: the fit alone)")
    q.add_argument("--candidates", type=lambda s: [c.strip() for c in s.split(",") if c.strip()], default=None,
                   metavar="A,B,...", help="the nodes one could intervene on (default: every node)")
    q.add_argument("--criterion", choices=defaults.PLAN_CRITERIA, default=defaults.PLAN_CRITERIA[0],
                   help=f"what the score counts (default {defaults.PLAN_CRITERIA[0]}; docs/planning.md)")
    q.add_argument("--seed", type=_seed, default=0, help="seed of the resampling (default 0)")
    q.add_argument("--force", action="store_true", help="replace an existing --out file")


def _add_report_parser(sub):
    r = sub.add_parser("report", help="write a self-contained offline HTML report of a fit",
                       description="Check a fit (sortability, residuals, EV or NV, Markov check, scale "
                                   "sensitivity), weigh its edges and draw its curves, in one HTML file "
                                   "that opens offline.")
    r.add_argument("data", help="CSV/TSV/Parquet file (rows = samples, columns = nodes)")
    r.add_argument("--out", required=True, type=Path, help="output directory (created); writes report.html")
    _add_manifest_argument(r, "report that fit (its W as recorded; the standardise and rescaling checks refit "
                              "1 + --rescalings times with its settings, only within the dashboard's limits, else "
                              "they are skipped with a warning)")
    _add_setting_arguments(r, "; not with --manifest")  # one flag per run setting, as `fit`
    _add_data_arguments(r, " (the checks and their refits take the design; a section per condition)")
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
    r.add_argument("--force", action="store_true", help="replace an existing report.html (never an input file)")


def _add_manifest_argument(parser, what):
    """``--manifest M``: the fit of ``fit`` (or ``predict``, ``plan --out``) on this data, whose settings,
    design (condition column, targets) and preprocessing (rows and columns dropped, transform) the
    command takes from it, checked against the data's fingerprint (issue 47, point 4)."""
    parser.add_argument("--manifest", type=Path, default=None, metavar="MANIFEST.json",
                        help=f"manifest.json of a `fit` run on this data: {what}. Its settings, design (condition "
                             "column, targets) and preprocessing (dropped rows and columns, transform) are "
                             "replayed and checked against the data's fingerprint: no flag repeated")


# --------------------------------------------------------------------------------------------
# entry point
# --------------------------------------------------------------------------------------------

def _echo(text, err=False):
    """The CLI's one writer: a line to stdout, or to stderr with ``err=True`` (the commands of
    :mod:`colide_core.run.commands` speak only through it)."""
    print(text, file=sys.stderr if err else sys.stdout)


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
    from colide_core.run.outputs import _printable

    def run(args):
        from colide_core.run import app, commands  # after parsing: `--help` imports no numpy or pandas

        settings = _settings_of(args)
        table = {"fit": lambda: commands.cmd_fit(args, settings, _echo), "simulate": lambda: commands.cmd_simulate(args, _echo),
                 "bench": lambda: commands.cmd_bench(args, _echo), "report": lambda: commands.cmd_report(args, settings, _echo),
                 "predict": lambda: commands.cmd_predict(args, settings, _echo),
                 "plan": lambda: commands.cmd_plan(args, settings, _echo), "app": lambda: app.run(args, rest, _echo)}
        return table[args.command]()

    try:
        return run(args)
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
    from colide_core.run.outputs import RunFailed, UsageError

    if isinstance(exc, UsageError):
        return 2, str(exc)
    linalg = getattr(sys.modules.get("numpy"), "linalg", None)  # numpy's error, when numpy ran at all
    failures = (RunFailed, FloatingPointError) + ((linalg.LinAlgError,) if linalg is not None else ())
    if isinstance(exc, failures):
        return 1, f"the run failed: {exc}"
    if isinstance(exc, (ValueError, OSError)):  # bad data (colide_core.data.io, pandas, pyarrow), bad files
        return 2, str(exc) or type(exc).__name__
    if isinstance(exc, ModuleNotFoundError):  # an optional package: name the extra that installs it
        from colide_core.exceptions import MissingExtraError

        missing = exc if isinstance(exc, MissingExtraError) else MissingExtraError.from_error(exc)
        if missing is not None:
            return 2, str(missing)
    return 2, f"unexpected {type(exc).__name__}: {exc}"
