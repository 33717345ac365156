"""Method comparison over repeated simulations (Compare page), with a per-run result store.

Each run is identified by (data id, method, parameters, seed), where the data id is either the
simulation configuration (data re-drawn from the seed) or a dataset content hash. Finished runs
live in a process-wide LRU store (``st.cache_resource``), so repeating or extending a
comparison only computes the missing runs. Missing runs go through the sweep executor
:func:`colide_core.run.executor.run_sweep` (the one used by ``python -m colide_core bench``) with
its task functions :func:`colide_core.run.executor.synthetic_task` (simulated data, drawn by
``colide_core.data.simulate.simulate_dataset``) and :func:`colide_core.run.executor.data_task` (the
current dataset), so a worker needs only ``colide_core``: joblib processes locally (one, or
one per core), or a Dask distributed cluster when ``$DASK_SCHEDULER_ADDRESS`` is set or a
scheduler is given. A failing method becomes a row with an ``error``; it never raises.

Convention: ``W[i, j] != 0`` means the edge i -> j.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import astuple, dataclass

import numpy as np
import pandas as pd
import streamlit as st

__all__ = [
    "COLIDE_FAMILY", "REPORTED", "method_params", "RunStore", "run_store",
    "run_key", "refusal", "run_all", "SweepInfo", "summarize", "format_summary", "data_id_for", "LABELS",
    "CURVE_COLUMNS", "curve_bands", "band_figure", "design_caption",
]

#: Methods that take CoLiDE's optimiser parameters (threshold, max_iter, ...).
COLIDE_FAMILY = ("CoLiDE-EV", "CoLiDE-NV", "DAGMA-linear")
#: evaluate() keys reported per run, plus the wall time.
REPORTED = ("shd", "shd_cpdag", "sid", "fdr", "tpr", "nnz")
#: Per-run curve columns (lists on :data:`colide_core.evaluation.curves.CURVE_GRID`), kept out of tables and CSV.
CURVE_COLUMNS = ("roc_tpr", "pr_precision")
LABELS = {"shd": "SHD", "shd_cpdag": "SHD-C", "sid": "SID", "fdr": "FDR", "tpr": "TPR", "nnz": "NNZ",
          "time": "fit time"}


def method_params(name: str, threshold: float, overrides: dict | None = None) -> tuple:
    """Hashable parameters of one method for a comparison.

    Parameters
    ----------
    name : str
        A key of ``colide_core.evaluation.baselines.METHODS``.
    threshold : float
        Edge threshold given to the CoLiDE-family methods (the others keep their defaults).
    overrides : dict, optional
        Extra CoLiDE parameters (e.g. a shorter ``max_iter``), applied to the CoLiDE family only
        and only when the method accepts them.

    Returns
    -------
    tuple of (str, object), sorted.
    """
    from colide_core.evaluation.baselines import METHODS

    if name not in COLIDE_FAMILY:
        return ()
    accepted = set(METHODS[name].defaults)
    params = {"threshold": float(threshold)}
    for k, v in (overrides or {}).items():
        if k in accepted:
            params[k] = tuple(v) if isinstance(v, list) else v
    return tuple(sorted(params.items()))


def refusal(name: str, d: int) -> str | None:
    """Why ``name`` cannot run on ``d`` nodes (its registry ``max_nodes``), or None."""
    from colide_core.evaluation.baselines import METHODS

    limit = METHODS[name].max_nodes
    if limit is not None and d > limit:
        return f"{name} is refused for d = {d} > {limit} nodes: it is too slow beyond {limit}."
    return None


class RunStore:
    """Thread-safe LRU mapping run key -> result row (dict)."""

    def __init__(self, max_entries: int = 5000):
        self.max_entries = int(max_entries)
        self._data: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        """The stored row (a copy) or None."""
        with self._lock:
            row = self._data.get(key)
            if row is None:
                return None
            self._data.move_to_end(key)
            return dict(row)

    def put(self, key, row) -> None:
        """Store a row (failed runs too: they are deterministic)."""
        with self._lock:
            self._data[key] = dict(row)
            self._data.move_to_end(key)
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)

    def __len__(self):
        with self._lock:
            return len(self._data)

    def clear(self) -> None:
        """Forget every run."""
        with self._lock:
            self._data.clear()


@st.cache_resource
def run_store() -> RunStore:
    """The process-wide :class:`RunStore` shared by all sessions."""
    return RunStore()


def run_key(data_id, method, params, seed) -> tuple:
    """Key of one run: (data id, method, params, seed)."""
    return (data_id, str(method), tuple(params), int(seed))


def _task(data_id, method, params, seed, config, X, B_true, design=None):
    """The executor task of one run: ``synthetic_task`` on ``config``'s simulation (with its
    interventions), else ``data_task`` on ``X`` with ``design`` (a
    :class:`~colide_core.data.design.Design` or None, passed as it is) scored against ``B_true``."""
    from colide_core.run.executor import Task, data_task, synthetic_task, task_key

    key = task_key(method, {"params": repr(tuple(params))}, {"data_id": repr(data_id)}, int(seed))
    meta = {"method": method, "seed": int(seed)}
    if config is not None:
        kwargs = {"method": method, "params": dict(params), "dataset": config.spec(), "seed": int(seed),
                  "curves": True, "interventions": config.intervention_spec()}
        return Task(key=key, fn=synthetic_task, kwargs=kwargs, meta=meta)
    kwargs = {"method": method, "params": dict(params), "dataset": X, "seed": int(seed),
              "B_true": np.asarray(B_true, dtype=float), "return_W": False, "curves": True, "design": design}
    return Task(key=key, fn=data_task, kwargs=kwargs, meta=meta)


def design_caption(methods, n_conditions, has_targets) -> str:
    """One line for the page: which of ``methods`` fit with the design and which do not.

    Parameters
    ----------
    methods : sequence of str
        Registry names.
    n_conditions : int
        Conditions in the data (1: no design to speak of).
    has_targets : bool
        Whether any condition has known targets.

    Returns
    -------
    str
        Markdown (method names are registry keys, no user text), or "" for one condition.
    """
    from colide_core.evaluation.baselines import METHODS

    if n_conditions < 2:
        return ""
    using = [m for m in methods if METHODS[m].accepts_conditions]
    centred = [m for m in methods if not METHODS[m].accepts_conditions]
    what = "an intercept per condition" + (", known targets masked" if has_targets else "")
    parts = [f"**{n_conditions} conditions**" + (" with known targets" if has_targets else "") + "."]
    if using:
        parts.append(f"{', '.join(using)} fit with the design ({what}).")
    if centred:
        parts.append(f"{', '.join(centred)} cannot use it: they run on the rows **centred within each "
                     "condition**, targets not used (column *data used*).")
    return " ".join(parts)


def _row(exec_row) -> dict:
    """A Compare row (method, seed, error, time, :data:`REPORTED`, ``auroc``, ``auprc`` and the
    :data:`CURVE_COLUMNS`, None when absent) from an executor row."""
    ok = exec_row.get("status") == "ok"
    row = {"method": exec_row["method"], "seed": int(exec_row["seed"]),
           "error": None if ok else str(exec_row.get("error")),
           "time": float(exec_row["time_s"]) if ok else np.nan}
    row.update({k: float(exec_row[k]) if ok else np.nan for k in REPORTED})
    row.update({k: float(exec_row.get(k, np.nan)) if ok else np.nan for k in ("auroc", "auprc")})
    row.update({k: list(exec_row[k]) if ok and exec_row.get(k) is not None else None for k in CURVE_COLUMNS})
    row["design"] = exec_row.get("design")
    row["n_conditions"] = exec_row.get("n_conditions")
    return row


@dataclass
class SweepInfo:
    """How :func:`run_all` computed its rows (for the page to report).

    Attributes
    ----------
    backend : str
        ``"joblib"`` or ``"dask"`` (``colide_core.run.executor.SweepResult.backend``), or
        ``"cache"`` when every run came from the store.
    n_jobs : int
        joblib processes asked for (1 = in this process); meaningless on Dask.
    n_computed, n_cached : int
        Runs computed now / taken from the store.
    """

    backend: str = "cache"
    n_jobs: int = 1
    n_computed: int = 0
    n_cached: int = 0

    def describe(self) -> str:
        """One line for the page, e.g. "joblib, 2 processes · 4 computed, 2 from the cache"."""
        if self.backend == "dask":
            where = "Dask cluster"
        elif self.backend == "joblib":
            where = f"joblib, {self.n_jobs} process{'es' if self.n_jobs > 1 else ''}"
        else:
            where = "cache only"
        return f"{where} · {self.n_computed} computed, {self.n_cached} from the cache"


def run_all(tasks, *, data_id, config=None, X=None, B_true=None, design=None, parallel=False, store=None,
            on_progress=None, scheduler=None, info=None) -> list[dict]:
    """Compute (or fetch from the store) every run.

    Parameters
    ----------
    tasks : list of (method, params, seed)
    data_id : hashable
        ``("sim", astuple(config))`` for simulations or ``("data", dataset.key)``.
    config : dashboard.simulation.SimConfig, optional
        Simulated data: each seed's dataset is drawn by ``colide_core.run.executor.synthetic_task``
        (``colide_core.data.simulate.simulate_dataset(config.spec(), seed)``) in the worker.
    X : ndarray of shape (n_samples, n_nodes), optional
        Fixed data (used when ``config`` is None), run by ``colide_core.run.executor.data_task``.
    B_true : array-like of shape (n_nodes, n_nodes), optional
        Ground truth of ``X`` (nonzero = edge).
    design : colide_core.data.design.Design, optional
        ``X``'s conditions and targets (:attr:`dashboard.data.Dataset.design`, passed to every run
        as it is); ``data_id`` must cover
        them (a dataset key does). Simulated data carry their own (``config.intervention_spec()``).
    parallel : bool
        Compute the missing runs in ``min(cpu count, runs)`` joblib processes (the executor's
        ``n_jobs``); otherwise one at a time in this process. Ignored on Dask.
    store : RunStore, optional
        Defaults to :func:`run_store`.
    on_progress : callable, optional
        ``on_progress(done, total, row)`` after each run (in the calling thread).
    scheduler : str or distributed.Client, optional
        Dask scheduler for :func:`colide_core.run.executor.run_sweep`; None uses
        ``$DASK_SCHEDULER_ADDRESS`` when set, joblib otherwise.
    info : SweepInfo, optional
        Filled in with the backend used and the numbers of computed and cached runs.

    Returns
    -------
    list of dict
        One row per task, in task order: ``method``, ``seed``, ``error`` (None, or the
        executor's ``"ExceptionType: message"`` when the method failed), ``time`` (the method's
        wall time, s; NaN on failure), the :data:`REPORTED` metrics of ``colide_core.evaluate``
        (NaN on failure), ``design`` (how the method used the conditions: a key of
        ``colide_core.evaluation.baselines.DESIGN_USES``; None on failure), ``n_conditions`` and
        a ``cached`` flag. Failed runs are stored too: a method's failure
        on given data is deterministic.

    Raises
    ------
    OSError
        If the Dask scheduler cannot be reached.
    """
    from colide_core.run.executor import run_sweep

    store = store if store is not None else run_store()
    info = info if info is not None else SweepInfo()
    total = len(tasks)
    rows: list = [None] * total
    missing: dict = {}  # executor key -> list of task indices
    sweep = []
    done = 0
    for i, (method, params, seed) in enumerate(tasks):
        row = store.get(run_key(data_id, method, params, seed))
        if row is None:
            task = _task(data_id, method, params, seed, config, X, B_true, design)
            if task.key not in missing:
                sweep.append(task)
            missing.setdefault(task.key, []).append(i)
        else:
            row["cached"] = True
            rows[i] = row
            done += 1
            info.n_cached += 1
            if on_progress:
                on_progress(done, total, row)

    if sweep:
        n_jobs = max(1, min(os.cpu_count() or 1, len(sweep))) if parallel else 1
        info.n_jobs = n_jobs

        def callback(_done, _total, exec_row):
            nonlocal done
            row = _row(exec_row)
            for i in missing[exec_row["key"]]:
                method, params, seed = tasks[i]
                store.put(run_key(data_id, method, params, seed), row)
                rows[i] = dict(row, cached=False)
                done += 1
                info.n_computed += 1
                if on_progress:
                    on_progress(done, total, rows[i])
            return False

        result = run_sweep(sweep, scheduler=scheduler, n_jobs=n_jobs, callback=callback)
        info.backend = result.backend
    return rows


def summarize(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over repetitions, per method: the bench command's summary, one row a method.

    The statistics are :func:`colide_core.run.bench_config.summarize`'s (the one sweep summary,
    also behind ``bench``'s ``summary.csv``), laid out wide for the page.

    Parameters
    ----------
    rows : pandas.DataFrame
        Per-run rows from :func:`run_all` (``method``, ``error``, ``design``, the
        :data:`REPORTED` metrics and ``time``).

    Returns
    -------
    pandas.DataFrame
        Index = method (in first-appearance order); columns ``runs``, ``failed``, ``error`` (first
        error message or ""), ``design`` (how the method used the conditions, "" when unknown), and
        ``{m}_mean``, ``{m}_std`` for every metric and ``time`` over the successful runs (std with
        ddof=1; NaN for a single successful run, both NaN for none).
    """
    from colide_core.run.bench_config import summarize as sweep_summary

    metrics = (*REPORTED, "time")
    failed = rows["error"].notna()
    # the sweep summary's tidy form: a label and a status per run (no setting columns: one data set)
    tidy = pd.DataFrame({"label": rows["method"], "status": np.where(failed, "error", "ok"),
                         **{m: rows[m] for m in metrics}})
    long = sweep_summary(tidy, metrics).set_index(["label", "metric"])
    methods = pd.Index(list(dict.fromkeys(rows["method"])), name="method")
    by_method = rows.groupby("method", sort=False)
    out = pd.DataFrame(index=methods)
    out["runs"] = by_method.size().reindex(methods).astype(int)
    out["failed"] = failed.groupby(rows["method"], sort=False).sum().reindex(methods).astype(int)
    out["error"] = [str(next(iter(g["error"].dropna()), "")) for _, g in by_method]
    used = rows["design"].where(~failed) if "design" in rows else pd.Series(None, index=rows.index)
    out["design"] = [str(next(iter(u.dropna()), "")) for _, u in used.groupby(rows["method"], sort=False)]
    for m in metrics:
        for stat in ("mean", "std"):
            out[f"{m}_{stat}"] = [float(long[stat].get((method, m), np.nan)) for method in methods]
    return out


def format_summary(summary: pd.DataFrame) -> pd.DataFrame:
    """``summary`` as display strings "mean ± std" per metric, plus runs / failures / error."""
    table = pd.DataFrame(index=summary.index)
    from dashboard.infra.text import fmt_seconds

    for m in (*REPORTED, "time"):
        def fmt(row, m=m):
            mean, std = row[f"{m}_mean"], row[f"{m}_std"]
            if pd.isna(mean):
                return "—"
            if m == "time":  # never "0.01 ± 0.00": milliseconds below a second
                return fmt_seconds(mean) + ("" if pd.isna(std) else f" ± {fmt_seconds(std)}")
            digits = 2 if m in ("fdr", "tpr") else 1
            if pd.isna(std):  # one run: its value, as counted (issue 41: "13.0 ± —")
                return f"{mean:.0f}" if float(mean).is_integer() and digits == 1 else f"{mean:.{digits}f}"
            # a spread too small for the digits is shown with one significant digit, not as 0
            spread = f"{std:.{digits}f}" if std == 0 or std >= 10 ** -digits else f"{std:.1g}"
            return f"{mean:.{digits}f} ± {spread}"
        table[LABELS[m]] = summary.apply(fmt, axis=1)
    if "design" in summary and (summary["design"].isin(["design", "conditions", "centred"])).any():
        from colide_core.evaluation.baselines import DESIGN_USES

        table["data used"] = summary["design"].map(lambda k: DESIGN_USES.get(k, "—"))
    table["runs"] = summary["runs"]
    table["failed"] = summary["failed"]
    table["error"] = summary["error"]
    return table


def data_id_for(config=None, dataset_key=None) -> tuple:
    """``("sim", fields of config)`` or ``("data", dataset_key)``."""
    return ("sim", astuple(config)) if config is not None else ("data", str(dataset_key))


def curve_bands(rows: pd.DataFrame) -> dict:
    """ROC and precision-recall bands over seeds, per method.

    Parameters
    ----------
    rows : pandas.DataFrame
        Per-run rows from :func:`run_all` (columns ``method``, ``error``, ``auroc``, ``auprc``,
        ``roc_tpr``, ``pr_precision``).

    Returns
    -------
    dict
        method -> :func:`colide_core.evaluation.curves.bands_over_seeds` frame (grid, mean and std of TPR
        and precision; AUROC / AUPRC mean and std in ``.attrs``), for the methods with at least
        one successful run that has curves, in first-appearance order.
    """
    from colide_core.evaluation.curves import bands_over_seeds

    out = {}
    if "roc_tpr" not in rows:
        return out
    for method, g in rows.groupby("method", sort=False):
        curves = [{"auroc": r["auroc"], "auprc": r["auprc"], "roc_tpr": r["roc_tpr"], "pr_precision": r["pr_precision"]}
                  for _, r in g.iterrows()
                  if pd.isna(r["error"]) and isinstance(r["roc_tpr"], list) and isinstance(r["pr_precision"], list)]
        if curves:
            bands = bands_over_seeds(curves)
            if bands.attrs["n_seeds"]:
                out[method] = bands
    return out


def band_figure(bands: dict, kind: str = "roc"):
    """Plotly figure of mean curves with a ± 1 std band per method, in each method's colour.

    :func:`colide_core.render.plots.band_figure` (the library's one drawing of ROC and
    precision-recall curves, also behind the Check page's :func:`~colide_core.render.plots.roc_figure`)
    with :func:`colide_core.render.figures.method_colour`, the colours of the bars above.

    Parameters
    ----------
    bands : dict
        From :func:`curve_bands`.
    kind : {"roc", "pr"}
        ROC (TPR over FPR, with the chance diagonal) or precision over recall.

    Returns
    -------
    plotly.graph_objects.Figure
        Legend entries "method (AUROC mean ± std, n seeds)"; method names are HTML-escaped once
        (plotly decodes entities).

    Raises
    ------
    ValueError
        If ``kind`` is neither ``"roc"`` nor ``"pr"``.
    """
    from colide_core.render.figures import method_colour
    from colide_core.render.plots import band_figure as draw_bands

    return draw_bands(bands, kind, colour=method_colour)
