"""Compare page: several methods over R simulated datasets (seeds seed .. seed+R-1), or on the
current dataset.

The experimental design goes with the data: on a dataset (or a simulation) with several
conditions, the CoLiDE family and GIES fit with the conditions and known targets, as Learn does;
SortNRegress and GES, which cannot use them, run on the rows centred within each condition, and
their rows say so (column "data used"). The CoLiDE family takes Learn's λ and solver settings, so
Compare's CoLiDE row is Learn's fit.

Each run is cached per (data, method, parameters, seed); a failing method becomes a row with
its error, and GES is refused above its node limit with a clear message. Missing runs go
through the sweep executor (``colide_core.run.executor.run_sweep``): joblib locally, or the Dask
cluster named by ``$DASK_SCHEDULER_ADDRESS``; the page says which one ran.
"""
import os

import pandas as pd
import streamlit as st

from colide_core.graph.export import to_csv_safe
from colide_core.defaults import LAMBDA1, THRESHOLD_RANGE
from colide_core.run.executor import comparison_manifest
from colide_core.run.manifest import RunSettingsError, manifest_to_json
from dashboard.infra.jobs import MAX_WORKERS, compute_slot
from dashboard.infra.layout import page_setup
from dashboard import comparison as cmp
from dashboard.infra import state
from colide_core.render.figures import compare_figure
from dashboard.fitting import check_params, check_widget_values, solver_params
from dashboard.simulation import config_from_state
from dashboard.infra.limits import cpu_node_limit
from dashboard.infra.text import fmt_lambda, fmt_seconds, md_escape

page_setup()
ss = st.session_state

try:
    from colide_core.evaluation.baselines import METHODS
except ImportError:  # the baselines module is missing from this installation
    METHODS = None

st.title("Compare methods")
if METHODS is None:
    st.error("The method registry `colide_core.evaluation.baselines` is not available in this installation.")
    st.stop()

ds = state.current_dataset()
sources = {"simulated": "Simulated data (Simulate-page settings), re-drawn for every repetition"}
if ds.B_true is not None and ds.source != "simulated":
    sources["current"] = f"The current dataset ({md_escape(ds.name)}), one run per method"
if ss["cmp_source"] not in sources:
    ss["cmp_source"] = "simulated"
st.radio("Data", list(sources), format_func=sources.get, key="cmp_source")

config = config_from_state(ss)
seed0 = int(ss["sim_seed"])
lambda1 = float(ss["learn_lambda1"])
if ss["cmp_source"] == "simulated":
    st.caption(f"Settings: {config.describe()} (change them on the **Simulate** page). "
               f"Repetition r uses seed {seed0} + r.")
    d = config.d
    n_conditions = 1 + int(config.interventions)
    has_targets = bool(config.interventions and config.iv_targets)
else:
    d = ds.shape[1]
    try:  # the dataset's Design, checked once when the dataset was made
        ds_design = ds.design
    except ValueError:  # labels that cannot be used: refused when the comparison is run
        ds_design = None
    n_conditions = len(ds_design.labels) if ds_design is not None and ds_design.has_conditions else 1
    has_targets = ds_design is not None and bool(ds_design.targets_by_name())

c1, c2, c3 = st.columns([3, 1, 1])
with c1:
    st.multiselect("Methods", list(METHODS), key="cmp_methods", persist_state="session",
                   help="\n".join(f"- **{k}**: {v.description}" for k, v in METHODS.items()))
with c2:
    st.number_input("Repetitions R", min_value=1, max_value=50, step=1, key="cmp_reps", persist_state="session",
                    disabled=ss["cmp_source"] != "simulated")
with c3:
    st.number_input("Threshold (CoLiDE / DAGMA)", min_value=THRESHOLD_RANGE[0], max_value=THRESHOLD_RANGE[1],
                    step=0.05, key="cmp_threshold",
                    persist_state="session")
dask_address = os.environ.get("DASK_SCHEDULER_ADDRESS") or None
st.checkbox("Run in parallel (joblib, one process per core)", key="cmp_parallel", persist_state="session",
            disabled=dask_address is not None,
            help="Runs not in the cache are computed by colide_core's sweep executor: one by one in "
                 "this process, or in one joblib process per core.")
if dask_address is not None:
    st.caption(f"Runs go to the Dask cluster at {md_escape(dask_address)} (DASK_SCHEDULER_ADDRESS).")

methods = list(ss["cmp_methods"])
st.caption(f"CoLiDE and DAGMA-linear use Learn's λ = {fmt_lambda(lambda1)} and solver settings, and the "
           "threshold above. " + cmp.design_caption(methods, n_conditions, has_targets))
refused = {m: r for m in methods if (r := cmp.refusal(m, d)) is not None}
for reason in refused.values():
    st.warning(reason)
runnable = [m for m in methods if m not in refused]
# Comparisons run many fits on the CPU: up to its node limit (the one above which every other page's
# fits run on the GPU, dashboard.infra.limits.fit_device), whatever the Simulate page allows with a GPU:
# the other methods are CPU code and the runs go to joblib's processes, so no CoLiDE row is on a device
cpu_nodes = cpu_node_limit()
too_big = d > cpu_nodes
if too_big:
    st.warning(f"Comparisons run on the CPU, up to {cpu_nodes} nodes; these data have {d:,}. "
               "Lower the number of nodes on the Simulate page.")

if st.button("Run comparison", key="cmp_run", type="primary", icon=":material/play_arrow:",
             disabled=not methods or too_big) and not too_big:
    overrides = {**ss[state.SOLVER_OVERRIDES], "lambda1": lambda1}
    try:  # every setting, whoever set it, within the widgets' and the solver's bounds
        check_widget_values(("Repetitions R", ss["cmp_reps"], 1, 50, "int"),
                            ("Threshold", ss["cmp_threshold"], *THRESHOLD_RANGE))
        check_params(solver_params("nv", LAMBDA1, {**overrides, "threshold": float(ss["cmp_threshold"])}))
    except RunSettingsError as exc:
        st.error("Nothing was started: " + md_escape("; ".join(exc.problems)) + ".", icon=":material/error:")
        st.stop()
    reps = int(ss["cmp_reps"]) if ss["cmp_source"] == "simulated" else 1
    seeds = [seed0 + r for r in range(reps)] if ss["cmp_source"] == "simulated" else [0]
    tasks = [(m, cmp.method_params(m, ss["cmp_threshold"], overrides), s) for s in seeds for m in runnable]
    if ss["cmp_source"] == "simulated":
        kwargs = {"data_id": cmp.data_id_for(config=config), "config": config}
        data_record = {"simulated": config.spec(), "interventions": config.intervention_spec()}
    else:  # the dataset key covers its conditions and targets (dashboard.data.content_hash)
        try:
            run_design = ds.design  # passed to every run as it is
        except ValueError as exc:
            st.error("Nothing was started: " + md_escape(exc), icon=":material/error:")
            st.stop()
        kwargs = {"data_id": cmp.data_id_for(dataset_key=ds.key), "X": ds.X.to_numpy(),
                  "B_true": ds.B_true.to_numpy(), "design": run_design}
        data_record = {"name": ds.name, "key": ds.key, "n_samples": int(ds.shape[0]), "n_nodes": int(ds.shape[1])}
    bar = st.progress(0.0, text=f"0 of {len(tasks)} runs")

    def on_progress(done, total, row):
        what = "cached" if row.get("cached") else fmt_seconds(row["time"])
        bar.progress(done / max(total, 1), text=f"{done} of {total} runs · {row['method']}, seed {row['seed']} ({what})")

    info = cmp.SweepInfo()
    units = MAX_WORKERS if ss["cmp_parallel"] and dask_address is None else 1
    try:
        # The server-wide compute slots the background jobs use: a comparison waits its turn.
        # (its workers follow what it was granted: the server keeps its last slot for live fits)
        with compute_slot(units, on_wait=lambda text: bar.progress(0.0, text=text)) as granted:
            rows = cmp.run_all(tasks, parallel=bool(ss["cmp_parallel"]) and (granted > 1 or dask_address is not None),
                               on_progress=on_progress, info=info, **kwargs)
    except (OSError, RuntimeError, TimeoutError) as exc:  # e.g. the Dask scheduler cannot be reached
        bar.empty()
        st.error(f"The comparison could not run: {md_escape(exc)}", icon=":material/error:")
        st.stop()
    bar.progress(1.0, text=f"{len(tasks)} of {len(tasks)} runs done")
    for m, reason in refused.items():
        rows += [{"method": m, "seed": s, "error": reason, "time": float("nan"),
                  **{k: float("nan") for k in cmp.REPORTED}, "cached": False} for s in seeds]
    frame = pd.DataFrame(rows)
    # the current data: the dataset's Design, checked once when it was made (a simulation records its
    # interventions in data_record)
    manifest = comparison_manifest(frame, data=data_record, methods={m: dict(p) for m, p, _ in tasks},
                                   seeds=seeds, design=kwargs.get("design"))
    ss[state.COMPARE_RESULTS] = {
        "manifest": manifest_to_json(manifest),
        "rows": frame,
        "description": (config.describe() + f", seeds {seeds[0]}..{seeds[-1]}") if ss["cmp_source"] == "simulated"
        else ds.name,
        "backend": info.backend,
        "backend_text": info.describe(),
    }

result = ss[state.COMPARE_RESULTS]
if result is None:
    st.info("Pick methods and press **Run comparison**.")
    st.stop()

frame = result["rows"]
summary = cmp.summarize(frame)
st.subheader("Results")
st.caption(f"Data: {md_escape(result['description'])}. Mean ± std over repetitions "
           "(sample std over successful runs, ddof = 1; one run shows its value alone).")
if result.get("backend_text"):
    st.caption(f"Computed with: {md_escape(result['backend_text'])}.")
for method, row in summary.iterrows():
    if row["failed"]:
        st.error(f"{md_escape(method)} failed in {row['failed']} of {row['runs']} runs: {md_escape(row['error'])}")
st.dataframe(cmp.format_summary(summary), key="cmp_summary")
st.plotly_chart(compare_figure(summary, metrics=("shd", "shd_cpdag", "sid", "nnz"), labels=cmp.LABELS), key="cmp_chart")
# --- ROC / precision-recall of |W| as an edge score, mean ± std over seeds ----------------------
bands = cmp.curve_bands(frame)
if bands:
    st.subheader("Curves: |W| as an edge score")
    st.caption("Every ordered pair (i, j) is a candidate edge scored by |W[i, j]| (CoLiDE's weights before "
               "the threshold; the other methods' own output, so their curves stop where their threshold cut). "
               "Each run's curve is read off a grid of 101 points (ROC: the best TPR at FPR ≤ x; PR: the best "
               "precision at recall ≥ x); the line is the mean over seeds and the band ± 1 std (ddof = 1). "
               "AUROC / AUPRC (scikit-learn) are mean ± std over seeds.")
    roc_col, pr_col = st.columns(2)
    roc_col.plotly_chart(cmp.band_figure(bands, "roc"), key="cmp_roc")
    pr_col.plotly_chart(cmp.band_figure(bands, "pr"), key="cmp_pr")
flat = frame.drop(columns=[c for c in cmp.CURVE_COLUMNS if c in frame], errors="ignore")
with st.expander("Per-run rows"):
    st.dataframe(flat, hide_index=True)
dl1, dl2 = st.columns(2)
dl1.download_button("Per-run rows (CSV)", to_csv_safe(flat, index=False), file_name="colide_comparison_runs.csv",
                    mime="text/csv", key="cmp_download")
if result.get("manifest"):
    dl2.download_button("Comparison manifest (JSON)", result["manifest"], file_name="colide_comparison.json",
                        mime="application/json", key="cmp_manifest_download",
                        help="The data's fingerprint, its conditions and targets, every method's parameters "
                             "and how it used the design, the seeds and each run's row.")
